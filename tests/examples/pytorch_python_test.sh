#!/bin/bash
# examples/pytorch_python on a tiny budget: a real sweep of the PyTorch script (Debian's
# python3-torch, installed here when missing), then the script alone with a prune notice waiting
# on its control pipe, which must stop it after its first report.
#   pytorch_python_test.sh BIN_DIR SOURCE_DIR     (exit 77, skipped, where torch cannot be had)
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }  # for the set-up; tests/support/mpi_env.sh brings the same
source "$src/tests/support/python_torch.sh"
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || fail "dataset-fashion-mnist is not installed (scripts/install-deps.sh)"
source "$src/tests/support/mpi_env.sh"
"${mpi[@]}" -np 3 "$bin/cleansweep" run "$src/examples/pytorch_python/sweep.yaml" --progress lines \
  --set "trial.command=[/usr/bin/python3, $src/examples/pytorch_python/train.py]" --set "study.storage=$work/mlp.h5" \
  --set study.n_trials=4 --set space.epochs=2 --set space.subset=600 --set "pruner={kind: none}" > run.txt ||
  { cat run.txt; fail "the sweep exited $?"; }
/usr/bin/python3 - "$work/mlp.h5" << 'PY'
import json, sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
    steps = f["intermediate"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
assert states == ["COMPLETE"] * 4, [(s, r) for s, r in zip(states, t["reason"])]
assert sorted(int(x) for x in steps["step"]) == [1, 1, 1, 1, 2, 2, 2, 2], steps
assert all(0.0 < v <= 1.0 for v in t["value"]) and max(t["value"]) > 0.5, t["value"]  # 600 images, 2 epochs
attrs = [json.loads(a) for a in t["attrs"]]
assert all(a["torch"].startswith("1.") or a["torch"][0].isdigit() for a in attrs) and all(a["n_params"] > 0 for a in attrs)
print("pytorch sweep:", [round(float(v), 3) for v in t["value"]])
PY
# Pruned after its first report: the script must stop there, with no final value.
/usr/bin/python3 - "$src/examples/pytorch_python/train.py" << 'PY'
import json, os, subprocess, sys
report_r, report_w = os.pipe()
control_r, control_w = os.pipe()
os.write(control_w, b"prune\n")
env = dict(os.environ, CLEANSWEEP_PARAMS=json.dumps({"epochs": 5, "subset": 600}), CLEANSWEEP_TRIAL="0",
           CLEANSWEEP_REPORT_FD=str(report_w), CLEANSWEEP_CONTROL_FD=str(control_r))
child = subprocess.run([sys.executable, sys.argv[1]], env=env, pass_fds=(report_w, control_r),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
os.close(report_w)
lines = [json.loads(l) for l in os.fdopen(report_r).read().splitlines()]
assert child.returncode == 0, child.stdout
assert lines == [{"step": 1, "value": lines[0]["value"]}], lines
print("pruned after epoch 1, as told")
PY
# Checkpoints: cut off after epoch 1 and gone on from its checkpoint, it ends as an unbroken run.
/usr/bin/python3 - "$src/examples/pytorch_python/train.py" "$work" << 'PY'
import json, os, subprocess, sys
def run(folder, epochs, resume=""):
    report_r, report_w = os.pipe()
    env = dict(os.environ, CLEANSWEEP_PARAMS=json.dumps({"epochs": epochs, "subset": 600}), CLEANSWEEP_TRIAL="0",
               CLEANSWEEP_REPORT_FD=str(report_w), CLEANSWEEP_CHECKPOINT_DIR=os.path.join(folder, "checkpoints"),
               CLEANSWEEP_RESUME_STEP=resume)
    child = subprocess.run([sys.executable, sys.argv[1]], env=env, pass_fds=(report_w,), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
    os.close(report_w)
    assert child.returncode == 0, child.stdout
    return [json.loads(l) for l in os.fdopen(report_r).read().splitlines()]
whole = run(os.path.join(sys.argv[2], "whole"), 2)
run(os.path.join(sys.argv[2], "cut"), 1)
rest = run(os.path.join(sys.argv[2], "cut"), 2, "1")
assert [l["checkpoint"] for l in whole if "checkpoint" in l] == [1, 2], whole
assert [l["step"] for l in rest if "step" in l] == [2], rest
assert rest[-1]["value"] == whole[-1]["value"], (rest[-1], whole[-1])
print("went on from epoch 1's checkpoint to the unbroken run's accuracy (%.4f)" % whole[-1]["value"])
PY
echo "PASS: pytorch_python"
