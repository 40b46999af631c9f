#!/bin/bash
# Rungs that pause and resume (issue 17, pruner.resume): `asha_resume_test.sh BIN_DIR SOURCE_DIR`.
# ASHA (reduction factor 3, rungs at steps 1 and 3, 9 steps) over trials that checkpoint every step
# (tests/programs/checkpoint_trial.py), each trial enqueued worse than the one before, so most
# pause at a rung and the best of them are promoted as the rung fills. At the rung steps each trial
# waits for its verdict (up to 2 s), so a loaded machine cannot carry it past the rung it was paused
# at before it hears so (the promotions asserted below depend on that). The whole job is killed
# with SIGKILL once trials are paused, then resumed to the end. Checks: no trial is left PAUSED;
# a COMPLETE trial's value is the one only an unbroken chain of steps gives; each step is reported
# once; every paused attempt is in /attempts and the next attempt went on from its checkpoint (in a
# fresh process, executing from the step after it); the best third at each rung went past it;
# the paused trials never promoted end PRUNED saying so; `show` counts the pauses.
set -euo pipefail
bin=$1 src=$2
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"
n_trials=12 steps=9 workers=2

{
  cat <<YAML
study: {name: ar, direction: maximize, n_trials: $n_trials, storage: $work/ar.h5}
sampler: {kind: random, seed: 5}
pruner: {kind: asha, min_resource: 1, max_resource: $steps, reduction_factor: 3, resume: true}
trial: {command: [$py, "$src/tests/programs/checkpoint_trial.py", "$work"], timeout: 60s, kill_grace: 500ms}
space:
  x: {type: float, low: 0.0, high: 1.0}
  steps: $steps
  pause: 0.08
  wait_at: "1 3"
  verdict_wait: 2.0
enqueue:
YAML
  for i in $(seq 0 $((n_trials - 1))); do echo "  - {x: $(awk -v i="$i" 'BEGIN {printf "%.2f", 0.95 - 0.07 * i}')}"; done
} > ar.yaml

"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/ar.yaml" --progress lines > first.log 2>&1 &
job=$!
for _ in $(seq 1 400); do  # until a trial has paused (the file says so), then kill the whole job
  if $py - "$work/ar.h5" 2> /dev/null <<'PY'; then break; fi
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    sys.exit(0 if (f["trials"]["state"][:] == b"PAUSED").sum() >= 2 else 1)
PY
  sleep 0.05
done
kill -0 $job 2> /dev/null || fail "the first run ended before its kill: $(ended first.log)"
grep -q "PAUSED" first.log || fail "no trial paused before the kill: $(cat first.log)"
kill_job $job ar.yaml checkpoint_trial.py
"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" resume "$work/ar.h5" --progress lines > resume.log 2>&1 ||
  fail "resume exited $?: $(ended resume.log)"
grep -Eq "^resuming: .*, [0-9]+ paused," resume.log || fail "the resume found no paused trial: $(grep resuming resume.log)"
grep -q "goes on from its checkpoint" first.log resume.log || fail "no promotion: $(cat first.log resume.log)"
"$bin/cleansweep" show "$work/ar.h5" > show.txt || fail "show exited $?"
grep -Eq "checkpoints: [0-9]+ trials went on .* [1-9][0-9]* after a pause at a rung" show.txt ||
  fail "show said: $(cat show.txt)"

SRC=$src $py - "$work/ar.h5" "$work/ar.trials" "$n_trials" "$steps" <<'PY'
import os, sys, h5py, pandas as pd
path, trials_dir = sys.argv[1], sys.argv[2]
n_trials, steps = int(sys.argv[3]), int(sys.argv[4])
with h5py.File(path, "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
    inter = pd.DataFrame(f["intermediate"][:])
    attempts = pd.DataFrame(f["attempts"][:])
for df in (t, attempts):
    df["state"] = df["state"].str.decode("utf-8")
    df["reason"] = df["reason"].str.decode("utf-8")
# A trial the kill caught before its first checkpoint ran again from the start under a new number.
everything = t
rerun = t[t["state"] == "INTERRUPTED"]
assert set(rerun["number"]) <= set(t["retry_of"]) and (rerun["checkpoint_step"] < 0).all(), rerun
t = t[t["state"] != "INTERRUPTED"]
assert len(t) == n_trials and t["number"].is_unique, t[["number", "state"]]
assert t["state"].isin(["COMPLETE", "PRUNED"]).all(), t[["number", "state", "reason"]]
pruned = t[t["state"] == "PRUNED"]
assert pruned["reason"].str.contains("no promotion came before the study ended").all(), pruned["reason"]
paused = attempts[attempts["state"] == "PAUSED"]
assert len(paused) > 0, "no paused attempt: nothing was tested"
assert (attempts["state"].isin(["PAUSED", "INTERRUPTED"])).all(), attempts[["trial", "state"]]
executed = {}  # trial -> [(step, attempt)] in the order computed
for n in t["number"]:
    with open(os.path.join(trials_dir, str(n), "executed.txt")) as f:
        executed[n] = [tuple(int(v) for v in line.split()) for line in f]
for _, r in t.iterrows():
    n = r["number"]
    got = sorted(inter[inter["trial"] == n]["step"])
    assert got == list(range(1, len(got) + 1)), "trial %d reported steps %s" % (n, got)
    if r["state"] == "COMPLETE":
        assert got[-1] == steps, "trial %d completed at step %d" % (n, got[-1])
        expected = r["param_x"] * steps * (steps + 1) / 2
        assert abs(r["value"] - expected) < 1e-9, "trial %d: %r, expected %r" % (n, r["value"], expected)
    mine = attempts[attempts["trial"] == n].sort_values("attempt")
    chain = [(a["attempt"], a["state"], a["resumed_from"], a["checkpoint_step"]) for _, a in mine.iterrows()]
    chain.append((r["attempt"], r["state"], r["resumed_from"], r["checkpoint_step"]))
    first = 1 if r["retry_of"] < 0 else int(everything[everything["number"] == r["retry_of"]]["attempt"].iloc[0]) + 1
    assert [a[0] for a in chain] == list(range(first, first + len(chain))) and chain[0][2] == -1, "trial %d: %s" % (n, chain)
    for before, after in zip(chain, chain[1:]):
        assert after[2] == before[3] >= 1, "trial %d: attempt %d resumed from %d, the one before declared %d" % (n, after[0], after[2], before[3])
        if before[1] == "PAUSED":  # a promotion: the new process starts at the step after the checkpoint
            first = [s for s, a in executed[n] if a == after[0]][:1]
            assert first in ([], [before[3] + 1]), "trial %d: attempt %d began at step %s after a pause at %d" % (n, after[0], first, before[3])
# ASHA's promise at the rungs that decide (steps 1 and 3): the best third there went past them.
for rung, beyond in ((1, 3), (3, steps)):
    at = inter[inter["step"] == rung].sort_values("value", ascending=False)
    keep = max(1, len(at) // 3)
    for n in at["trial"][:keep]:
        reached = inter[inter["trial"] == n]["step"].max()
        assert reached >= beyond, "trial %d is in the best %d at step %d but stopped at %d" % (n, keep, rung, reached)
# The pandas loader knows the state.
sys.path.insert(0, os.path.join(os.environ["SRC"], "python"))
from cleansweep_study import load_study
study = load_study(path)
assert (study.attempts["state"] == "PAUSED").sum() == len(paused), study.attempts
# Every attempt in /attempts had a next one: each PAUSED row there is a promotion.
print("%d trials: %d COMPLETE, %d PRUNED (paused, never promoted); %d promotion(s)"
      % (len(t), (t["state"] == "COMPLETE").sum(), len(pruned), len(paused)))
PY
echo "PASS"
