#!/bin/bash
# Hostile steps and values under every pruner (issue 40): `huge_steps_test.sh BIN_DIR SOURCE_DIR KIND`,
# KIND one of median, asha, asha_resume, hyperband, pbt. A grid over the probes of
# tests/programs/hostile_steps.py (INT64_MAX, INT64_MAX - 1, 2^62, 2^64 - 1, 4^0..4^31, 2^53 - 1,
# +-1e308), each probe twice, with 2 workers under mpirun and a 120 s limit: an ASHA study whose trial
# reported INT64_MAX once left rank 0 spinning for good. Checks: the sweep exits 0 within the limit
# with every trial's row final; each probe past 2^53 - 1 ends FAIL saying which step and what the
# limit is; every other probe ends COMPLETE or PRUNED, with its steps (2^53 - 1 included) and
# +-1e308 values in the intermediate table as reported.
set -euo pipefail
bin=$1 src=$2 kind=$3
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"
workers=2
probes='["max", "max-1", "2^62", "u64", "pow4", "limit", "dblmax", "neg"]'
n_trials=16
sampler="{kind: grid}"
enqueue=""
case $kind in
  median) pruner="pruner: {kind: median, n_startup_trials: 1}" ;;
  asha) pruner="pruner: {kind: asha, min_resource: 1, reduction_factor: 4}" ;;
  asha_resume) pruner="pruner: {kind: asha, min_resource: 1, reduction_factor: 4, resume: true}" ;;
  hyperband) pruner="pruner: {kind: hyperband, min_resource: 1, max_resource: 9007199254740991, reduction_factor: 4}" ;;
  pbt)  # members checked every 4 steps (4^k always is one); the population is the 8 probes
    pruner=""
    sampler="{kind: pbt, seed: 3, population: 8, interval: 4, quantile: 0.25}"
    enqueue="enqueue: [$(for p in max max-1 2^62 u64 pow4 limit dblmax neg; do printf '{probe: "%s"}, ' "$p"; done)]"
    n_trials=12  # 8 members, one per probe; the population ends first, and says so (issue 36)
    ;;
  *) fail "unknown pruner kind $kind" ;;
esac

cat > hs.yaml <<YAML
study: {name: hs, direction: maximize, n_trials: $n_trials, storage: $work/hs.h5}
sampler: $sampler
$pruner
trial: {command: [$py, "$src/tests/programs/hostile_steps.py", "$work"], timeout: 60s, kill_grace: 500ms}
space:
  probe: {type: categorical, choices: $probes}
  copy: {type: categorical, choices: [0, 1]}
$enqueue
YAML
[ "$kind" = pbt ] && sed -i '/^  copy:/d' hs.yaml  # PBT's members: the enqueued probes, then replacements

rc=0
timeout -s KILL 120 "${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/hs.yaml" --progress lines \
  > run.log 2>&1 || rc=$?
[ $rc = 137 ] && fail "the sweep did not end within 120 s (a loop on a huge step?): $(tail -20 run.log)"
[ $rc = 0 ] || fail "the sweep exited $rc: $(ended run.log)"

$py - "$work/hs.h5" "$n_trials" "$kind" <<'PY'
import sys, h5py, pandas as pd
path, n_trials, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with h5py.File(path, "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
    inter = pd.DataFrame(f["intermediate"][:])
for c in ("state", "reason", "param_probe"):
    t[c] = t[c].str.decode("utf-8")
t["probe"] = t["param_probe"]
assert len(t) >= (8 if kind == "pbt" else n_trials), t[["number", "state"]]
assert not t["state"].isin(["RUNNING", "PAUSED", "INTERRUPTED"]).any(), t[["number", "state", "reason"]]
first_past = {"max": 2**63 - 1, "max-1": 2**63 - 2, "2^62": 2**62, "u64": 2**64 - 1, "pow4": 4**27}
limit = " is above the largest step a trial may report, 9007199254740991 (2^53 - 1)"
for _, r in t.iterrows():
    if r["probe"] in first_past:
        assert r["state"] == "FAIL", (r["number"], r["probe"], r["state"], r["reason"])
        assert "step %d%s" % (first_past[r["probe"]], limit) in r["reason"], r["reason"]
    else:
        assert r["state"] in ("COMPLETE", "PRUNED"), (r["number"], r["probe"], r["state"], r["reason"])
done = t[t["probe"].isin(["limit", "dblmax", "neg"])]
assert len(done) >= 2, t[["number", "probe", "state"]]
mine = inter[inter["trial"].isin(done["number"])]
assert (mine["step"] <= 2**53 - 1).all() and (mine["step"] >= 0).all(), mine
assert set(mine["value"].abs()) == {1e308}, sorted(set(mine["value"]))
limit_trials = t[(t["probe"] == "limit") & (t["state"] == "COMPLETE")]["number"]
for n in limit_trials:  # a complete `limit` trial's last step is the limit itself, stored exactly
    assert inter[inter["trial"] == n]["step"].max() == 2**53 - 1, inter[inter["trial"] == n]
print("%s: %d trials, %s" % (kind, len(t), t["state"].value_counts().to_dict()))
PY
if [ "$kind" = pbt ]; then  # short of n_trials: the last lines and `show` say why
  why="population-based training ended at [0-9]+ of 12 trials: every member of its population of 8 ended"
  grep -Eq "^stopped early: $why" run.log || fail "the run did not say why it ended short: $(tail -5 run.log)"
  "$bin/cleansweep" show "$work/hs.h5" > show.txt || fail "show exited $?"
  grep -Eq "^stopped early: $why" show.txt || fail "show did not say why: $(cat show.txt)"
fi
