#!/bin/bash
# Runs every shell block of README.md and docs/*.md that is marked runnable, as a reader would type
# it, so the commands the documents show cannot drift from the tool. A block is marked by the line
#   <!-- runnable -->
# right before its ```sh fence. The blocks run in order, one bash each (set -e), in a scratch folder
# that looks like a checkout after scripts/build.sh: configs/, python/ and build/bin (the tree
# under test). Open MPI may run as root here, as in CI.
# usage: doc_commands_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/configs" "$src/python" "$work/"
mkdir -p "$work/build" "$work/results"
ln -s "$bin" "$work/build/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
blocks=0
for doc in "$src/README.md" "$src"/docs/*.md; do
  # Each marked block to a file of its own: DOC.N.sh
  awk -v out="$work/$(basename "$doc")" '
    /^<!-- runnable -->$/ {marked = 1; next}
    marked && /^```sh$/ {n++; file = out "." n ".sh"; printf "" > file; inside = 1; marked = 0; next}
    inside && /^```$/ {inside = 0; close(file); next}
    inside {print >> file}
    !/^[[:space:]]*$/ {marked = 0}' "$doc"
done
for block in "$work"/*.md.*.sh; do
  [ -e "$block" ] || break
  blocks=$((blocks + 1))
  echo "--- $(basename "$block")"
  cat "$block"
  (cd "$work" && timeout 600 bash -e "$block") > "$block.out" 2>&1 ||
    { echo "FAIL: $(basename "$block") exited $?:"; tail -20 "$block.out"; exit 1; }
done
[ "$blocks" -gt 0 ] || { echo "FAIL: no block marked <!-- runnable --> in README.md or docs/"; exit 1; }
echo "PASS: $blocks runnable blocks"
