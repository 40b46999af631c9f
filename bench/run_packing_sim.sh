#!/bin/bash
# Packing gang trials by simulation (bench/README.md, "Packing gangs"): the real coordinator
# places trials of 1, 2, 4 and 8 GPUs on 4,096 simulated GPUs (512 nodes of 8), with ASHA and
# without, log-normal durations of sigma 1 and 1.5, against first come, first served
# (workers.backfill: false) in the same run; sizes a quarter each, then mostly small.
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
# Mostly small trials with a few large ones (70% 1 GPU, 15% 2, 10% 4, 5% 8), 4 trials' worth
# per GPU (9,102 trials): at 20 (45,511 trials) ASHA's per-report ranking alone takes minutes of
# the coordinator's CPU and the figures measure that, not placement.
for pruner in asha none; do
  for backfill in true false; do
    "$build/bin/packing_sim" --mix small --pruner "$pruner" --backfill "$backfill" --trials-per-gpu 4
  done
done
