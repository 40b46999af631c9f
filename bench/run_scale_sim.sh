#!/bin/bash
# Scale by simulation (bench/README.md, "Scale on paper"): the real coordinator against 1,024,
# 4,096 and 16,384 simulated workers, random and TPE sampling, log-normal trial durations with a
# 60 s mean (sigma 1.5: the slowest 1% take 30x the median).
#   bench/run_scale_sim.sh [BUILD_DIR] [TRIALS_PER_WORKER]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
per=${2:-4}
for sampler in random tpe; do
  for workers in 1024 4096 16384; do
    "$build/bin/scale_sim" --workers "$workers" --sampler "$sampler" --trials-per-worker "$per"
  done
done
# Where it saturates: TPE asked one trial at a time at 16,384 workers; shorter trials (2 s mean) at
# 4,096 workers, with and without batched asks; random sampling with 0.1 s trials.
"$build/bin/scale_sim" --workers 16384 --sampler tpe --trials-per-worker "$per" --batch-asks false
for batch in true false; do
  "$build/bin/scale_sim" --workers 4096 --sampler tpe --trials-per-worker 10 --mean 2 --batch-asks "$batch"
done
"$build/bin/scale_sim" --workers 16384 --sampler random --trials-per-worker 10 --mean 0.1
