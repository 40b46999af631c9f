#!/bin/bash
# scripts/slurm/task-layout.sh, without Slurm: which node each MPI task of a sweep lands on.
# usage: layout_test.sh SOURCE_DIR
set -euo pipefail
layout=$1/scripts/slurm/task-layout.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_layout() {  # expect_layout "NODE GPUS;..." "node node ..."
  local got
  got=$(tr ';' '\n' <<< "$1" | "$layout" | tr '\n' ' ')
  [ "$got" = "$2 " ] || fail "layout of '$1': got '$got', expected '$2'"
}
# One node with 4 GPUs: the coordinator and 4 workers.
expect_layout "a 4" "a a a a a"
# Two nodes with 4 GPUs: the coordinator on the first node, 4 workers on each.
expect_layout "a 4;b 4" "a a a a a b b b b"
# 8-GPU nodes, uneven nodes, and a one-GPU array task (one coordinator, one worker).
expect_layout "a 8;b 8" "a a a a a a a a a b b b b b b b b"
expect_layout "a 2;b 8;c 1" "a a a b b b b b b b b c"
expect_layout "a 1" "a a"
# Nodes without GPUs get CLEANSWEEP_CPU_WORKERS workers (default 1).
expect_layout "a 0;b 0" "a a b"
got=$(printf 'a 0\nb 0\n' | CLEANSWEEP_CPU_WORKERS=3 "$layout" | tr '\n' ' ')
[ "$got" = "a a a a b b b " ] || fail "CPU workers: $got"
# Bad input is refused with a message, not turned into a layout.
if printf 'a x\n' | "$layout" 2> err.txt; then fail "accepted a GPU count of x"; fi
grep -q "node a: GPU count 'x' is not a number" err.txt || fail "message: $(cat err.txt)"
if "$layout" < /dev/null 2> err.txt; then fail "accepted no nodes"; fi
echo "layout_test: all layouts as expected"
