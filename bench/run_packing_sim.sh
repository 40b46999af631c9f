#!/bin/bash
# Packing gang trials by simulation (bench/README.md, "Packing gangs"): the real coordinator
# places trials of 1, 2, 4 and 8 GPUs on 4,096 simulated GPUs (512 nodes of 8), with ASHA and
# without, log-normal durations of sigma 1 and 1.5, against first come, first served
# (workers.backfill: false) in the same run.
#   bench/run_packing_sim.sh [BUILD_DIR] [TRIALS_PER_GPU]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
per=${2:-20}
for sigma in 1.0 1.5; do
  for pruner in asha none; do
    for backfill in true false; do
      "$build/bin/packing_sim" --pruner "$pruner" --backfill "$backfill" --sigma "$sigma" --trials-per-gpu "$per"
    done
  done
done
