#!/bin/bash
# examples/ddp_python on a tiny budget: trials of 1 and 2 processes (gloo on CPU workers) train
# the CNN with DistributedDataParallel under a real sweep; every trial completes with an accuracy
# well above chance, and the 2-process trials ran as one group of 2.
#   ddp_python_test.sh BIN_DIR SOURCE_DIR     (exit 77, skipped, where python3-torch cannot be had)
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }  # for the set-up; tests/support/mpi_env.sh brings the same
source "$src/tests/support/python_torch.sh"
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || { echo "FAIL: dataset-fashion-mnist is not installed" >&2; exit 1; }
source "$src/tests/support/mpi_env.sh"
"${mpi[@]}" -np 3 "$bin/cleansweep" run "$src/configs/ddp_python.yaml" --progress lines \
  --set "trial.command=[/usr/bin/python3, $src/examples/ddp_python/train.py]" --set "study.storage=$work/ddp.h5" \
  --set study.n_trials=4 --set "sampler={kind: grid}" --set "space.g={type: categorical, choices: [1, 2]}" \
  --set "space.lr=0.02" --set "space.channels=8" --set "space.dropout=0.1" --set "space.batch_size={type: categorical, choices: [32, 64]}" \
  --set space.epochs=2 --set space.subset=2000 --set "pruner={kind: none}" > run.txt 2>&1 ||
  { cat run.txt; fail "the sweep exited $?"; }
$py - "$work/ddp.h5" << 'PY'
import json, sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
    steps = f["intermediate"][:]
states = [s.decode().rstrip("\0") for s in t["state"]]
assert states == ["COMPLETE"] * 4, [(s, r) for s, r in zip(states, t["reason"])]
for row in t:
    attrs = json.loads(row["attrs"])
    assert attrs["world"] == int(row["param_g"]) == int(row["gpus"]), (attrs, row["param_g"], row["gpus"])
    assert row["value"] > 0.5, row["value"]  # 2,000 images, 2 epochs: well above 0.1, chance
assert sorted(int(s) for s in steps["step"]) == [1, 1, 1, 1, 2, 2, 2, 2], steps["step"]  # rank 0's only
print("ddp sweep:", [(int(r["param_g"]), round(float(r["value"]), 3)) for r in t])
PY
