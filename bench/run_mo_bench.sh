#!/bin/bash
# Issue 18, point 7: our nsga2 and multi-objective tpe against Optuna 3.1's NSGAIISampler and
# TPESampler (Debian's python3-optuna, installed here if missing) on ZDT1, ZDT2, ZDT3 and DTLZ2:
# hypervolume after 200 and 500 trials (median over the seeds, one implementation for both tools)
# and the sampler's time per trial.
#   bench/run_mo_bench.sh [SEEDS] [SEEDS_AT_500] [PARTS_DIR]
# Every sampler runs SEEDS seeds (default 40). Ours and Optuna's NSGA-II run in this run, alone, one
# after another: their sampler times are the ones the 50x target is about.
# Optuna's multi-objective TPE takes 0.3-1.7 s per trial at 200 trials and more after (0.9-11 s per
# trial over 500; one DTLZ2 seed, 500 trials: 45-85 minutes here; all parts: about 12 CPU-hours), so
# it runs 500 trials for the first SEEDS_AT_500 seeds (default 5) and 200 for the rest, each
# (problem, seed) a part of its own, cheapest first, one per core at once (MO_BENCH_JOBS=1: one at
# a time, for a machine in use). A part is written whole into PARTS_DIR (default
# bench/data/optuna_tpe, kept in git) and reused by later runs: Optuna's TPE repeats its trials
# exactly for a seed, so a part's values are the same whenever it ran; its sampler time is the
# machine's of that day. Remove the folder to measure everything again. Only parts that are missing
# run; MO_BENCH_PARTS_ONLY=1 runs only those and stops (to fill the folder in the background).
# mo_summarize.py compares, at each trial count, the seeds every tool reached.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-40}
seeds_500=${2:-5}
if ! /usr/bin/python3 -c "import optuna" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-optuna > /dev/null
fi
scripts/build.sh > /dev/null
parts=${3:-bench/data/optuna_tpe}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mkdir -p "$parts"
parts_only=${MO_BENCH_PARTS_ONLY:-0}
[ "$parts_only" = 1 ] || for s in nsga2 tpe; do build/bin/mo_bench --sampler $s --trials 500 --seeds "$seeds"; done > "$out/ours.jsonl"
[ "$parts_only" = 1 ] ||
  /usr/bin/python3 bench/optuna_mo_bench.py --sampler nsga2 --trials 500 --seeds "$seeds" > "$out/optuna_nsga2.jsonl"
# A part is PARTS_DIR/PROBLEM_SEED_TRIALS.jsonl, written whole (renamed from .tmp when it is done).
# Cheapest first: the 200-trial seeds, then ZDT at 500, then DTLZ2 at 500.
for trials in 200 500; do
  for p in zdt1 zdt2 zdt3 dtlz2; do
    for s in $(seq 0 $((seeds - 1))); do
      [ "$trials" = 500 ] && [ "$s" -ge "$seeds_500" ] && continue
      [ "$trials" = 200 ] && [ "$s" -lt "$seeds_500" ] && continue
      part=$parts/${p}_${s}_${trials}.jsonl
      # A finished 500-trial run of the seed holds its first 200 trials too.
      grep -qs '"sampler_seconds"' "$part" "$parts/${p}_${s}_500.jsonl" || echo "$p $s $trials $part"
    done
  done
done | xargs -r -P "${MO_BENCH_JOBS:-$(nproc)}" -L1 sh -c "/usr/bin/python3 bench/optuna_mo_bench.py --sampler tpe --trials \$2 \
    --seeds $seeds --problem \$0 --seed \$1 > \$3.tmp && mv \$3.tmp \$3"
[ "$parts_only" = 1 ] && exit 0
cat "$parts"/*.jsonl > "$out/optuna_tpe.jsonl"
cat "$out/ours.jsonl" "$out/optuna_nsga2.jsonl" "$out/optuna_tpe.jsonl" | /usr/bin/python3 bench/mo_summarize.py
