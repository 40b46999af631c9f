#!/bin/bash
# End-to-end throughput (bench/README.md, "End-to-end throughput"): trials that do nothing but
# report a value, through real MPI, 1 coordinator + 2 workers (mpirun -np 3) on this machine, with
# each launcher. Trials per second = finished trials / (last trial's end - first trial's start), from
# the study file; the run's wall time (MPI start-up included) is printed too, and the idle gap: how
# long each worker is without a trial between two (median and p95, from the study's timestamps).
#   bench/run_throughput_bench.sh [BUILD_DIR] [TRIALS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
trials=${2:-3000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe -np 3)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
for launcher in spawn forkserver; do
  program="$build/bin/report_only_trial"
  [ "$launcher" = forkserver ] && program="$build/lib/report_only_trial.so"
  cat > "$work/$launcher.yaml" << YAML
study: {name: throughput-$launcher, n_trials: $trials, storage: $work/$launcher.h5}
sampler: {kind: random, seed: 1}
space:
  x: {type: float, low: 0.0, high: 1.0}
trial: {launcher: $launcher, command: ["$program"]}
workers: {gpus: none}
YAML
  start=$(date +%s.%N)
  "${mpi[@]}" "$build/bin/cleansweep" run "$work/$launcher.yaml" > "$work/$launcher.log"
  end=$(date +%s.%N)
  /usr/bin/python3 - "$work/$launcher.h5" "$launcher" "$start" "$end" << 'PY'
import sys
import h5py
import numpy as np

path, launcher, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
with h5py.File(path, "r") as f:
    t = f["trials"][:]
done = (t["state"] == b"COMPLETE").sum()
span = t["datetime_end"].max() - t["datetime_start"].min()
print(f"{launcher:<11} {len(t)} trials ({done} COMPLETE): {len(t) / span:.0f} trials/s over {span:.2f} s; "
      f"whole run incl. MPI start-up {end - start:.2f} s = {len(t) / (end - start):.0f} trials/s")
# The idle gap: on each worker, from one trial's end (reaped) to the next one's start (its process
# exists), both stamped by that worker. One run, so no resume sits between two trials.
gaps = []
for w in set(t["worker"]):
    mine = np.sort(t[t["worker"] == w], order="datetime_start")
    gaps.extend((mine["datetime_start"][1:] - mine["datetime_end"][:-1]) * 1e3)
gaps = np.array(gaps)
print(f"{'':<11} idle gap per worker between trials: median {np.median(gaps):.2f} ms, "
      f"p95 {np.percentile(gaps, 95):.2f} ms ({len(gaps)} gaps)")
PY
  grep '^commits:' "$work/$launcher.log"
done
