#!/bin/bash
# Gang trials for real (issue 16; docs/multi-gpu.md), on CPU workers: PyTorch DDP trials (Debian's
# python3-torch, gloo) of 1, 2 and 4 processes under mpirun agree on their gradients (size 1 joins a
# group of one from the environment alone, as at any size); a gang that
# spans two simulated nodes (CLEANSWEEP_NODE_NAME) meets at its MASTER_ADDR; a rank that exits,
# crashes or hangs stops its gang, names itself, and leaves no process behind.
#   gangs_test.sh BIN_DIR SOURCE_DIR      (exit 77, skipped, where python3-torch cannot be had)
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }  # for the set-up; tests/support/mpi_env.sh brings the same
source "$src/tests/support/python_torch.sh"
source "$src/tests/support/mpi_env.sh"
check=$src/tests/programs/ddp_check.py

# 1. Mixed sizes on one node: 4 workers, trials of 1, 2 and 4 processes.
cat > mixed.yaml << YAML
study: {name: gangs, direction: maximize, n_trials: 6, storage: $work/mixed.h5}
sampler: {kind: grid}
trial: {command: [/usr/bin/python3, "$check"], timeout: 60s, gpus: "{g}"}
space:
  g: {type: categorical, choices: [2, 4, 1]}
  r: {type: categorical, choices: [a, b]}
YAML
"${mpi[@]}" -np 5 "$bin/cleansweep" run mixed.yaml --progress lines > mixed.txt 2>&1 || { cat mixed.txt; fail "the mixed sweep exited $?"; }
$py - "$work/mixed.h5" << 'PY' || fail "mixed sizes: $(cat mixed.txt)"
import json, sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
sizes = []
for row in t:
    state = row["state"].decode().rstrip("\0")
    g = int(row["param_g"])
    attrs = json.loads(row["attrs"])
    assert state == "COMPLETE", (state, row["reason"])
    assert int(row["gpus"]) == g, (row["gpus"], g)
    # Size 1 too: a real init_process_group("gloo") of one, from the environment alone (issue 36).
    assert row["value"] == g and attrs["world"] == g and attrs["agree"] and attrs["averaged"], attrs
    assert sorted(r["rank"] for r in attrs["ranks"]) == list(range(g)), attrs
    if g > 1:
        assert len(row["workers"].decode().rstrip("\0")) > 0
    sizes.append(g)
assert sorted(sizes) == [1, 1, 2, 2, 4, 4], sizes
print("mixed sizes ran at their sizes:", sizes)
PY
# Rank 1 reported too; its report went to its own file, not into the study.
grep -l '"step":1' "$work"/mixed.trials/*/reports.rank-1.jsonl > /dev/null || fail "rank 1's reports were not kept beside its log"

# 2. Two simulated nodes of two workers each: a gang of 4 spans them and meets at MASTER_ADDR.
cat > nodes.yaml << YAML
study: {name: nodes, direction: maximize, n_trials: 2, storage: $work/nodes.h5}
sampler: {kind: random, seed: 1}
trial: {command: [/usr/bin/python3, "$check"], timeout: 60s, gpus: 4}
space:
  x: {type: float, low: 0.0, high: 1.0}
YAML
# Ranks 1-2 on nodeA, 3-4 on nodeB (rank 0, the coordinator, with nodeA).
"${mpi[@]}" -np 5 bash -c 'CLEANSWEEP_NODE_NAME=node$(( OMPI_COMM_WORLD_RANK <= 2 ? 0 : 1 )) exec "$0" "$@"' \
  "$bin/cleansweep" run nodes.yaml --progress lines > nodes.txt 2>&1 || { cat nodes.txt; fail "the two-node sweep exited $?"; }
$py - "$work/nodes.h5" << 'PY' || fail "two nodes: $(cat nodes.txt)"
import json, sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
for row in t:
    assert row["state"].decode().rstrip("\0") == "COMPLETE", row["reason"]
    attrs = json.loads(row["attrs"])
    groups = sorted({(r["group_rank"], r["node"]) for r in attrs["ranks"]})
    assert groups == [(0, "node0"), (1, "node1")], groups
    assert sorted(r["local_rank"] for r in attrs["ranks"]) == [0, 0, 1, 1], attrs["ranks"]
    assert attrs["agree"] and attrs["averaged"], attrs
    print("trial", row["number"], "met at", attrs["master"], "across", groups)
PY

# 3. One rank fails: exit, crash, hang (trial.timeout catches the hang). The gang stops within
# the grace, the trial names the rank, and no process of it is left.
cat > fail.yaml << YAML
study: {name: fail, direction: maximize, n_trials: 3, storage: $work/fail.h5}
sampler: {kind: grid}
trial: {command: [/usr/bin/python3, "$check", "$work"], timeout: 20s, kill_grace: 2s, gpus: 2}
space:
  fail_how: {type: categorical, choices: [exit, crash, hang]}
  fail_rank: 1
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run fail.yaml --progress lines > fail.txt 2>&1 || { cat fail.txt; fail "the failing sweep exited $?"; }
$py - "$work/fail.h5" << 'PY' || fail "failing ranks: $(cat fail.txt)"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
want = {"exit": "FAIL", "crash": "CRASH", "hang": "TIMEOUT"}
for row in t:
    how = row["param_fail_how"].decode().rstrip("\0")
    state, reason = row["state"].decode().rstrip("\0"), row["reason"]
    reason = reason.decode() if isinstance(reason, bytes) else reason
    assert state == want[how], (how, state, reason)
    assert "failed first" in reason, (how, reason)
    # A hung rank looks like the rank waiting on it: both run into trial.timeout, and whichever
    # is first names the trial. Exit and crash name the rank that failed.
    assert how == "hang" or "rank 1 of 2" in reason, (how, reason)
    # The rest of the gang was stopped within trial.kill_grace (2 s) of the failure.
    limit = 20 + 2 + 3 if how == "hang" else 2 + 10
    assert row["duration"] < limit, (how, row["duration"])
    print(how, "->", state, ":", reason[:110])
PY
pgrep -f "ddp_check.py $work" > /dev/null && fail "a process of a failed gang is still running"

# 4. processes: single: one process sees the gang's workers and runs torchrun inside, unchanged.
# (Debian 12's torchrun, torch 1.13 on Python 3.11, fails on its default --redirects/--tee of 0:
# an enum change it predates. 1 works.)
cat > single.yaml << YAML
study: {name: single, direction: maximize, n_trials: 2, storage: $work/single.h5}
sampler: {kind: random, seed: 2}
trial:
  # torchrun's --standalone rendezvous takes port 29400: two trials on one node collide. The port
  # the worker holds for the trial (MASTER_PORT) is the one to give it.
  command: [sh, -c, 'exec /usr/bin/python3 -m torch.distributed.run --nnodes 1 --nproc_per_node "\$CLEANSWEEP_GPUS" --rdzv_backend c10d --rdzv_endpoint "localhost:\$MASTER_PORT" --redirects 1 --tee 1 "\$0"', "$check"]
  timeout: 90s
  gpus: 2
  processes: single
space:
  x: {type: float, low: 0.0, high: 1.0}
YAML
"${mpi[@]}" -np 5 "$bin/cleansweep" run single.yaml --progress lines > single.txt 2>&1 || { cat single.txt; fail "the torchrun sweep exited $?"; }
$py - "$work/single.h5" << 'PY' || fail "torchrun in single mode: $(cat single.txt)"
import json, sys, h5py
t = h5py.File(sys.argv[1], "r", swmr=True)["trials"][:]
for row in t:
    assert row["state"].decode().rstrip("\0") == "COMPLETE", row["reason"]
    attrs = json.loads(row["attrs"])
    assert attrs["world"] == 2 and attrs["agree"] and attrs["averaged"] and int(row["gpus"]) == 2, (attrs, row["gpus"])
print("torchrun inside processes: single:", [json.loads(a)["master"] for a in t["attrs"]])
PY

# 5. The fork-server launcher starts gang processes too (the toy trial's plugin build writes down
# the place each of its processes was given).
cp "$bin/../lib/toy_plugin.so" "$work/toy_plugin.so"
cat > fork.yaml << YAML
study: {name: fork, direction: maximize, n_trials: 4, storage: $work/fork.h5}
sampler: {kind: random, seed: 3}
trial: {launcher: forkserver, command: ["$work/toy_plugin.so"], timeout: 30s, gpus: 2}
space:
  x: {type: float, low: 0.0, high: 1.0}
YAML
"${mpi[@]}" -np 5 "$bin/cleansweep" run fork.yaml --progress lines > fork.txt 2>&1 || { cat fork.txt; fail "the fork-server sweep exited $?"; }
for n in 0 1 2 3; do
  for r in 0 1; do
    read -r world local port < "$work/fork.trials/$n/rank-$r.txt" || fail "trial $n: no rank-$r.txt: $(cat fork.txt)"
    [ "$world $local" = "2 $r" ] && [ "$port" -gt 0 ] || fail "trial $n rank $r got WORLD_SIZE=$world LOCAL_RANK=$local MASTER_PORT=$port"
  done
done
$py -c "
import h5py
t = h5py.File('$work/fork.h5', 'r', swmr=True)['trials'][:]
assert [s.decode().rstrip(chr(0)) for s in t['state']] == ['COMPLETE'] * 4 and list(t['gpus']) == [2] * 4, t[['state', 'gpus']]
" || fail "fork-server gangs: $(cat fork.txt)"
echo "gangs: OK"
