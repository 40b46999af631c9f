#!/bin/bash
# Population-based training end to end (issue 17): `pbt_test.sh BIN_DIR SOURCE_DIR`.
# The toy of tests/programs/pbt_toy.py (its best learning rate changes as it trains) with a
# population of 4, checked every 3 of 12 steps, under mpirun with 2 workers; the whole job is
# killed with SIGKILL once a member has been replaced, then resumed to the end. Checks: every
# trial ends COMPLETE or PRUNED (replaced), never PAUSED; each replacement names its parent (a
# member that had reported at least as far) and is one generation on; a new member's first step
# continues its parent's state exactly (its bias and variance follow from the parent's at the step
# it started from, with its own learning rate: the checkpoint was linked, not recomputed); each
# trial's steps are reported once; the pandas loader has the lineage.
set -euo pipefail
bin=$1 src=$2
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"
steps=12 workers=2

cat > pbt.yaml <<YAML
study: {name: pbt, direction: maximize, n_trials: 14, storage: $work/pbt.h5}
sampler: {kind: pbt, seed: 4, population: 4, interval: 3, quantile: 0.25, perturb: [0.8, 1.2],
          resample_probability: 0.25}
trial: {command: [$py, "$src/tests/programs/pbt_toy.py", "$work"], timeout: 60s, kill_grace: 500ms}
space:
  lr: {type: float, low: 0.01, high: 1.0, log: true}
  steps: $steps
  pause: 0.08
YAML

"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/pbt.yaml" --progress lines > first.log 2>&1 &
job=$!
for _ in $(seq 1 400); do  # until a member has been replaced (the file says so), then kill the job
  if $py - "$work/pbt.h5" 2> /dev/null <<'PY'; then break; fi
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    sys.exit(0 if (f["trials"]["parent"][:] >= 0).any() else 1)
PY
  sleep 0.05
done
if kill -0 $job 2> /dev/null; then
  kill_job $job pbt.yaml pbt_toy.py
  "${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" resume "$work/pbt.h5" --progress lines > resume.log 2>&1 ||
    fail "resume exited $?: $(ended resume.log)"
else
  wait $job || fail "the run exited $? before it could be killed: $(ended first.log)"
fi
grep -q "replaced at step" first.log || fail "no member was replaced: $(cat first.log)"

SRC=$src $py - "$work/pbt.h5" "$work/pbt.trials" "$steps" <<'PY'
import os, sys, h5py, pandas as pd
path, trials_dir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
with h5py.File(path, "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
    inter = pd.DataFrame(f["intermediate"][:])
t["state"] = t["state"].str.decode("utf-8")
t["reason"] = t["reason"].str.decode("utf-8")
t = t.set_index("number", drop=False)
rerun = t[t["state"] == "INTERRUPTED"]  # cut off before any checkpoint: ran again under a new number
assert (rerun["checkpoint_step"] < 0).all() and set(rerun.index) <= set(t["retry_of"]), rerun
t = t[t["state"] != "INTERRUPTED"]
assert t["state"].isin(["COMPLETE", "PRUNED"]).all(), t[["state", "reason"]]
assert t[t["state"] == "PRUNED"]["reason"].str.startswith("replaced at step").all(), t["reason"]
children = t[t["parent"] >= 0]
assert len(children) > 0 and len(children) == (t["state"] == "PRUNED").sum(), t[["state", "parent"]]
assert (t[t["parent"] < 0]["generation"] == 0).all()

def trajectory(n):  # t -> (bias, var, lr) of the first attempt that computed step t
    out = {}
    with open(os.path.join(trials_dir, str(n), "trajectory.txt")) as f:
        for line in f:
            step, bias, var, lr, _ = line.split()
            out.setdefault(int(step), (float(bias), float(var), float(lr)))
    return out

for n, r in children.iterrows():
    parent = t.loc[r["parent"]] if r["parent"] in t.index else None
    assert parent is not None, "trial %d: parent %d is not in the study" % (n, r["parent"])
    assert r["generation"] == parent["generation"] + 1, (n, r["generation"], parent["generation"])
    if not os.path.exists(os.path.join(trials_dir, str(n), "trajectory.txt")):
        # Started from a checkpoint of the last step: nothing left to compute, the parent's state is its result.
        assert r["resumed_from"] == steps and r["value"] == inter[(inter["trial"] == r["parent"]) & (inter["step"] == steps)]["value"].iloc[0], r
        continue
    mine = trajectory(n)
    first = min(mine)
    assert first >= 2, "trial %d started at step %d, not from a checkpoint" % (n, first)
    bias0, var0, _ = trajectory(r["parent"])[first - 1]
    bias, var, lr = mine[first]
    assert abs(bias - (1 - lr) * bias0) < 1e-12 and abs(var - ((1 - lr) ** 2 * var0 + lr ** 2)) < 1e-12, \
        "trial %d at step %d: (%r, %r) does not follow from trial %d's checkpoint (%r, %r)" % (n, first, bias, var, r["parent"], bias0, var0)
for n, r in t.iterrows():
    got = list(inter[inter["trial"] == n]["step"])
    if not got:  # a new member that started from a checkpoint of the last step
        assert r["parent"] >= 0 and r["resumed_from"] == steps, r
        continue
    assert got == sorted(set(got)) and got == list(range(got[0], got[-1] + 1)), "trial %d reported %s" % (n, got)
done = t[t["state"] == "COMPLETE"]
assert (done["last_step"] == steps).all(), done[["last_step"]]
sys.path.insert(0, os.path.join(os.environ["SRC"], "python"))
from cleansweep_study import load_study
study = load_study(path)
assert (study.trials["parent"] >= 0).sum() == len(children) + (rerun["parent"] >= 0).sum()
print("%d trials: %d members replaced (up to generation %d); best of the final population %.4g"
      % (len(t), len(children), t["generation"].max(), done["value"].max()))
PY
echo "PASS"
