#!/bin/bash
# Population-based training against random search and ASHA on a toy whose best learning rate
# changes as it trains (tests/programs/pbt_toy.py: the expected error of a running estimate of a
# mean, deterministic; the best schedule, lr_t = 1/t, is known). For each seed, in one go: pbt
# (population 8, checked every 4 of 40 steps), random search (8 trials of 40 steps: the same 320
# steps) and ASHA (28 trials, rungs at steps 5 and 15: about as many steps), 2 workers each.
# Prints, per seed and as medians, the expected error of the best trial that trained all 40 steps,
# the steps each method ran, its wall time, and for reference the error of the best schedule and
# of the best fixed learning rate (computed directly). Lower is better. Each step takes 50 ms (real training takes
# time: a member must be looked at when it reaches its interval, not after).
#   bench/run_pbt_bench.sh [SEEDS]      (default 5; about 1 minute per seed on 2 cores)
set -euo pipefail
seeds=${1:-5}
cd "$(dirname "$0")/.."
scripts/build.sh > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpi=(mpirun -np 3 --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
toy=$PWD/tests/programs/pbt_toy.py
run() {  # run NAME SEED N_TRIALS SAMPLER [PRUNER]
  local start end
  cat > "$out/$1-$2.yaml" <<YAML
study: {name: $1, direction: maximize, n_trials: $3, storage: $out/$1-$2.h5}
sampler: $4
${5:+pruner: $5}
trial: {command: [/usr/bin/python3, "$toy", "$out"], timeout: 60s}
space:
  lr: {type: float, low: 0.01, high: 1.0, log: true}
  steps: 40
  pause: 0.05
YAML
  start=$(date +%s.%N)
  "${mpi[@]}" build/bin/cleansweep run "$out/$1-$2.yaml" --progress lines > "$out/$1-$2.log" 2>&1 ||
    { echo "$1 seed $2 failed: $(tail -3 "$out/$1-$2.log")" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$1 $2 $start $end" >> "$out/times"
}
for seed in $(seq 0 $((seeds - 1))); do
  run pbt "$seed" 64 "{kind: pbt, seed: $seed, population: 8, interval: 4, quantile: 0.25, perturb: [0.8, 1.2], resample_probability: 0.25}"
  run random "$seed" 8 "{kind: random, seed: $seed}"
  run asha "$seed" 28 "{kind: random, seed: $seed}" "{kind: asha, min_resource: 5, max_resource: 40, reduction_factor: 3}"
done
/usr/bin/python3 - "$out" <<'PY'
import glob, os, random, statistics, sys, h5py
out = sys.argv[1]
times = {}
for line in open(os.path.join(out, "times")):
    name, seed, start, end = line.split()
    times[(name, int(seed))] = float(end) - float(start)

def error(schedule):  # as pbt_toy.py: the expected squared error after 40 steps
    bias, var = -1.0, 0.0
    for t in range(1, 41):
        lr = schedule(t)
        bias, var = (1 - lr) * bias, (1 - lr) ** 2 * var + lr ** 2
    return bias ** 2 + var

rows, results = [], {}
for (name, seed) in sorted(times, key=lambda k: (k[1], k[0])):
    path = os.path.join(out, "%s-%d.h5" % (name, seed))
    with h5py.File(path, "r") as f:
        t = f["trials"][:]
    done = t[(t["state"] == b"COMPLETE") & (t["last_step"] == 40)]
    best = -done["value"].max()
    folders = glob.glob(os.path.join(out, "%s-%d.trials" % (name, seed), "*", "trajectory.txt"))
    steps = sum(len(open(p).read().splitlines()) for p in folders)
    generations = int(t["generation"].max())
    results.setdefault(name, []).append(best)
    rows.append((seed, name, best, steps, times[(name, seed)], generations))
print("| seed | method | error of the best 40-step trial | steps run | wall time | generations |")
print("|---|---|---|---|---|---|")
for seed, name, best, steps, wall, gens in rows:
    print("| %d | %s | %.5f | %d | %.0f s | %s |" % (seed, name, best, steps, wall, gens if name == "pbt" else "-"))
seeds = len(results["pbt"])
oracle = error(lambda t: 1.0 / t)
fixed = min(error(lambda t, lr=10 ** (-2 + 2 * i / 400): lr) for i in range(401))
print()
print("| method | median error over %d seeds | seeds where pbt is lower |" % seeds)
print("|---|---|---|")
for name in ("pbt", "random", "asha"):
    wins = "" if name == "pbt" else "%d of %d" % (sum(p < o for p, o in zip(results["pbt"], results[name])), seeds)
    print("| %s | %.5f | %s |" % (name, statistics.median(results[name]), wins))
print("| the best fixed learning rate | %.5f | %d of %d |" % (fixed, sum(p < fixed for p in results["pbt"]), seeds))
print("| the best schedule, lr_t = 1/t | %.5f | %d of %d |" % (oracle, sum(p < oracle for p in results["pbt"]), seeds))
PY
