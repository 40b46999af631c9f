#!/bin/bash
# examples/optuna_port on a tiny budget: the Optuna objective of after.py (before.py with its study
# loop taken out, nothing else) runs under cleansweep, every trial a fresh python3, its suggest_*
# calls answered by rank 0 and recorded in /params. Installs python3-torch and python3-optuna
# (Debian's) when missing; exit 77, skipped, where they cannot be had.
#   optuna_port_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$src/tests/support/python_torch.sh"
if ! /usr/bin/python3 -c "import optuna" 2> /dev/null; then
  [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null || { echo "SKIPPED: no python3-optuna, and not root to install it"; exit 77; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends python3-optuna > /dev/null 2>&1 ||
    fail "cannot install python3-optuna"
fi
[ -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] || fail "dataset-fashion-mnist is not installed (scripts/install-deps.sh)"
# The port is the study loop taken out: the code lines of after.py are before.py's, up to it.
/usr/bin/python3 - "$src/examples/optuna_port" << 'PY'
import ast, sys
def body(name):
    tree = ast.parse(open(f"{sys.argv[1]}/{name}").read())
    return [ast.dump(n) for n in tree.body[1:] if not (isinstance(n, ast.If) and "__main__" in ast.dump(n.test))]
assert body("before.py") == body("after.py"), "after.py differs from before.py beyond its study loop"
PY
source "$src/tests/support/mpi_env.sh"
"${mpi[@]}" -np 3 "$bin/cleansweep" run "$src/examples/optuna_port/sweep.yaml" --progress lines \
  --set "trial.objective=$src/examples/optuna_port/after.py:objective" --set "study.storage=$work/port.h5" \
  --set study.n_trials=4 --set trial.python=/usr/bin/python3 --set "trial.env={SUBSET: '600', EPOCHS: '2'}" > run.txt ||
  { cat run.txt; fail "the sweep exited $?"; }
/usr/bin/python3 - "$work/port.h5" << 'PY' || { cat run.txt; fail "the study file"; }
import json, sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
    p = f["params"][:]
asked = {}
for r in p:
    asked.setdefault(int(r["trial"]), {})[r["name"].rstrip(b"\0").decode()] = json.loads(r["value_json"].rstrip(b"\0"))
states = [s.decode().rstrip("\0") for s in t["state"]]
assert len(t) == 4 and all(s in ("COMPLETE", "PRUNED") for s in states), [(s, r) for s, r in zip(states, t["reason"])]
for row, state in zip(t, states):
    a = asked[int(row["number"])]
    assert {"lr", "hidden", "dropout", "batch_size", "optimizer"} <= set(a), a
    assert ("momentum" in a) == (a["optimizer"] == "sgd"), a
    assert 1e-4 <= a["lr"] <= 3e-2 and a["batch_size"] in (32, 64, 128), a
    if state == "COMPLETE":
        assert 0.3 < row["value"] <= 1.0 and json.loads(row["attrs"])["n_params"] > 0, (row["value"], row["attrs"])
print("optuna port:", states, [round(float(v), 3) for v in t["value"]])
PY
