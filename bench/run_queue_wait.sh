#!/bin/bash
# Where a no-op trial's idle gap goes (bench/README.md, issue 36): one run of TRIALS no-op trials
# through the fork server with the defaults (mpirun -np 3: 1 coordinator, 2 workers), with HOGS
# CPU-bound processes alongside, while a shell loop (builtins only, twice a second) reads
# /proc/PID/task/TID/schedstat of the long-lived threads: their time on a CPU and their time
# runnable but waiting for one. Prints the threads that waited most, the total per trial, and the
# study's idle gap. The loop itself costs a few percent of throughput.
#   bench/run_queue_wait.sh [BUILD_DIR] [TRIALS] [HOGS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
trials=${2:-2000}
hogs=${3:-0}
work=$(mktemp -d)
. "$src/bench/hogs.sh"
start_hogs "$hogs"
cat > "$work/study.yaml" << YAML
study: {name: queue-wait, n_trials: $trials, storage: $work/study.h5}
sampler: {kind: random, seed: 1}
space:
  x: {type: float, low: 0.0, high: 1.0}
trial: {launcher: forkserver, command: ["$build/lib/report_only_trial.so"]}
workers: {gpus: none}
YAML
mpi=(mpirun --oversubscribe -np 3)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
"${mpi[@]}" "$build/bin/cleansweep" run "$work/study.yaml" > "$work/run.log" 2>&1 &
job=$!
sleep 1.5  # MPI start-up: the ranks and the fork servers exist by then
declare -A last
pids=$(pgrep -d ' ' -f "$build/bin/cleansweep run|cleansweep-forkserver" || true)
while kill -0 "$job" 2> /dev/null; do
  for pid in $pids; do
    for task in /proc/"$pid"/task/*; do
      if read -r on_cpu waiting slices 2> /dev/null < "$task/schedstat" &&
        read -r comm 2> /dev/null < "$task/comm"; then
        last[$task]="$on_cpu $waiting $slices $comm"
      fi
    done
  done
  sleep 0.5
done
wait "$job" || { cat "$work/run.log"; exit 1; }
for task in "${!last[@]}"; do echo "${last[$task]}"; done | sort -k2 -n -r |
  awk -v n="$trials" '
    NR <= 6 { printf "%-16s on a CPU %6.0f ms, waiting for one %6.0f ms (%.2f ms per trial, %.2f ms per wake-up)\n",
              $4, $1 / 1e6, $2 / 1e6, $2 / 1e6 / n, $2 / 1e6 / ($3 > 0 ? $3 : 1) }
    { on += $1; wait += $2 }
    END { printf "all long-lived threads, per trial: %.2f ms on a CPU, %.2f ms waiting for one\n",
          on / 1e6 / n, wait / 1e6 / n }'
/usr/bin/python3 - "$work/study.h5" << 'PY'
import sys
import h5py
import numpy as np

t = h5py.File(sys.argv[1], "r")["trials"][:]
g = (t["datetime_start"] - t["datetime_worker_free"]) * 1e3
g = g[~np.isnan(g)]
rate = len(t) / (t["datetime_end"].max() - t["datetime_start"].min())
print(f"idle gap median {np.median(g):.2f} ms, p95 {np.percentile(g, 95):.2f} ms; {rate:.0f} trials/s")
PY
