#!/bin/bash
# End-to-end throughput (bench/README.md, "End-to-end throughput"): trials that do nothing but
# report a value, through real MPI, 1 coordinator + 2 workers (mpirun -np 3) on this machine.
# Four set-ups, in ROUNDS interleaved rounds (this machine's speed drifts; each round compares
# like with like):
#   spawn                    trial.launcher: spawn, the defaults
#   forkserver-baseline      the fork server as before issue 19: workers.queue: 0, trial.prefork: false
#   forkserver-queue         workers.queue: auto (the default), trial.prefork: false
#   forkserver               the defaults: workers.queue: auto, trial.prefork: true
# For each: trials per second = finished trials / (last trial's end - first trial's start), from
# the study file; the idle gap per worker (a trial's end to the next one's start on the same
# worker, median and p95 from the study's datetime_worker_free); and the CPU time the whole job
# used per trial (user + system of mpirun and everything under it, trials included).
# HOGS (default 0) CPU-bound processes run alongside the whole time, to see what a busy node does to
# the idle gap (bench/README.md, issue 36).
#   bench/run_throughput_bench.sh [BUILD_DIR] [TRIALS] [ROUNDS] [HOGS]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
trials=${2:-2000}
rounds=${3:-3}
hogs=${4:-0}
work=$(mktemp -d)
. "$src/bench/hogs.sh"
start_hogs "$hogs"
mpi=(mpirun --oversubscribe -np 3)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
setups=(spawn forkserver-baseline forkserver-queue forkserver)
for round in $(seq 1 "$rounds"); do
  for setup in "${setups[@]}"; do
    launcher=forkserver program="$build/lib/report_only_trial.so" queue=auto prefork=""
    case $setup in
      spawn) launcher=spawn program="$build/bin/report_only_trial" ;;
      forkserver-baseline) queue=0 prefork=", prefork: false" ;;
      forkserver-queue) prefork=", prefork: false" ;;
    esac
    run="$work/$setup-$round"
    cat > "$run.yaml" << YAML
study: {name: throughput-$setup, n_trials: $trials, storage: $run.h5}
sampler: {kind: random, seed: $round}
space:
  x: {type: float, low: 0.0, high: 1.0}
trial: {launcher: $launcher, command: ["$program"]$prefork}
workers: {gpus: none, queue: $queue}
YAML
    /usr/bin/time -f "%U %S" -o "$run.cpu" "${mpi[@]}" "$build/bin/cleansweep" run "$run.yaml" > "$run.log"
  done
done
/usr/bin/python3 - "$work" "$rounds" "${setups[@]}" << 'PY'
import sys
import h5py
import numpy as np

work, rounds, setups = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rate, gaps, cpu = {}, {}, {}
for s in setups:
    rate[s], gaps[s], cpu[s] = [], [], []
    for r in range(1, rounds + 1):
        with h5py.File(f"{work}/{s}-{r}.h5", "r") as f:
            t = f["trials"][:]
        assert (t["state"] == b"COMPLETE").all(), f"{s} round {r}: not every trial completed"
        rate[s].append(len(t) / (t["datetime_end"].max() - t["datetime_start"].min()))
        g = (t["datetime_start"] - t["datetime_worker_free"]) * 1e3
        gaps[s].extend(g[~np.isnan(g)])
        user, system = map(float, open(f"{work}/{s}-{r}.cpu").read().split()[-2:])
        cpu[s].append((user + system) / len(t) * 1e3)
print(f"{'setup':<21} {'trials/s per round':<24} {'idle gap median':>15} {'p95':>8} {'CPU ms/trial':>13}")
for s in setups:
    g = np.array(gaps[s])
    rates = " ".join(f"{x:.0f}" for x in rate[s])
    print(f"{s:<21} {rates:<24} {np.median(g):>12.2f} ms {np.percentile(g, 95):>5.2f} ms "
          f"{np.median(cpu[s]):>10.2f} ms")
base = np.array(rate["forkserver-baseline"])
for s in ("forkserver-queue", "forkserver"):
    ratios = np.array(rate[s]) / base
    print(f"{s} / forkserver-baseline, trials/s, paired by round: "
          + " ".join(f"{x:.2f}" for x in ratios) + f" (median {np.median(ratios):.2f})")
PY
