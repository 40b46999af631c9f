#!/bin/bash
# The quickstart sweep (configs/quickstart.yaml: 12 trials, random sampler, seed 7, 3,000 images)
# with EPOCHS epochs per trial, run three times in one go: without a pruner, with ASHA as it stops
# trials (its defaults: rungs at epochs 1, 4, 16, ...), and with ASHA whose rungs pause and resume
# (pruner.resume: a trial not yet good enough at a rung exits after its checkpoint, and a promotion
# continues it in a fresh process). Same trials, same seed; prints wall time, best validation
# accuracy and the epochs each one trained (epochs run again after a checkpoint included). About
# 25 minutes on 2 cores with the defaults (27 epochs, 12 trials), 45 with 24 trials.
#   bench/run_pruning_bench.sh [EPOCHS] [TRIALS]
set -euo pipefail
epochs=${1:-27}  # per trial; ASHA (default reduction factor 4) has rungs at epochs 1, 4 and 16
trials=${2:-12}  # the quickstart's 12, or more
cd "$(dirname "$0")/.."
scripts/build.sh > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
run() {  # run NAME PRUNER
  local start end
  start=$(date +%s.%N)
  "${mpi[@]}" build/bin/cleansweep run configs/quickstart.yaml --progress lines --set "study.storage=$out/$1.h5" \
    --set "space.epochs=$epochs" --set "study.n_trials=$trials" --set study.time_budget=2h --set "pruner=$2" > "$out/$1.log"
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out/$1.h5" "$1" "$start" "$end" <<'PY'
import sys, h5py
path, name, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
with h5py.File(path, "r", swmr=True) as f:
    t = f["trials"][:]
    attempts = f["attempts"][:] if "attempts" in f else t[:0]
done = t[t["state"] == b"COMPLETE"]
# Each attempt trained from the epoch after the one it resumed from (0: from the start) to its last.
epochs = int(sum(r["last_step"] - max(r["resumed_from"], 0) for rows in (t, attempts) for r in rows))
print("| %s | %.0f s | %.4f | %d | %d | %d | %d |" % (name, end - start, done["value"].max(), len(done),
      (t["state"] == b"PRUNED").sum(), (attempts["state"] == b"PAUSED").sum(), epochs))
PY
}
echo "| pruner | wall time | best validation accuracy | completed | pruned | promotions | epochs trained |"
echo "|---|---|---|---|---|---|---|"
run none "{kind: none}"
run asha "{kind: asha, min_resource: 1, max_resource: $epochs}"
run asha-resume "{kind: asha, min_resource: 1, max_resource: $epochs, resume: true}"
