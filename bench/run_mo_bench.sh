#!/bin/bash
# Issue 18, point 7: our nsga2 and multi-objective tpe against Optuna 3.1's NSGAIISampler and
# TPESampler (Debian's python3-optuna, installed here if missing) on ZDT1, ZDT2, ZDT3 and DTLZ2, all
# measured in this one run: hypervolume after 200 and 500 trials (median over the seeds, one
# implementation for both tools) and the sampler's time per trial.
#   bench/run_mo_bench.sh [SEEDS] [SEEDS_AT_500] [KEEP_DIR]
# Every sampler runs SEEDS seeds (default 10). Optuna's multi-objective TPE takes 0.3-1.7 s per
# trial at 200 trials and more after (0.9-10 s per trial over 500; one DTLZ2 seed, 500 trials: 84
# minutes here), so it runs 500 trials for the first SEEDS_AT_500 seeds (default 5) and 200 for the
# rest, one (problem, seed) per core at once, longest first; each is a part of its own that a stopped
# run keeps in KEEP_DIR and a later run of the same command reuses. SEEDS_AT_500=0 shortens the
# whole run to about half an hour on 2 cores (the 500-trial column is then ours against Optuna's
# NSGA-II only). mo_summarize.py compares, at each trial count, the seeds every tool reached. Ours
# and Optuna's NSGA-II run alone, one after another, before it: their sampler times are the ones
# the 50x target is about. MO_BENCH_JOBS=1 runs Optuna's TPE parts one at a time (a machine in use).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-10}
seeds_500=${2:-5}
if ! /usr/bin/python3 -c "import optuna" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-optuna > /dev/null
fi
scripts/build.sh > /dev/null
out=${3:-$(mktemp -d)}
mkdir -p "$out"
for s in nsga2 tpe; do build/bin/mo_bench --sampler $s --trials 500 --seeds "$seeds"; done > "$out/ours.jsonl"
/usr/bin/python3 bench/optuna_mo_bench.py --sampler nsga2 --trials 500 --seeds "$seeds" > "$out/optuna_nsga2.jsonl"
# A part is optuna_tpe_PROBLEM_SEED_TRIALS.part, written whole (renamed from .tmp when it is done).
for trials in 500 200; do
  for p in dtlz2 zdt1 zdt2 zdt3; do
    for s in $(seq 0 $((seeds - 1))); do
      [ "$trials" = 500 ] && [ "$s" -ge "$seeds_500" ] && continue
      [ "$trials" = 200 ] && [ "$s" -lt "$seeds_500" ] && continue
      part=$out/optuna_tpe_${p}_${s}_${trials}.part
      # A finished 500-trial run of the seed holds its first 200 trials too.
      grep -qs '"sampler_seconds"' "$part" "$out/optuna_tpe_${p}_${s}_500.part" || echo "$p $s $trials $part"
    done
  done
done | xargs -r -P "${MO_BENCH_JOBS:-$(nproc)}" -L1 sh -c "/usr/bin/python3 bench/optuna_mo_bench.py --sampler tpe --trials \$2 \
    --seeds $seeds --problem \$0 --seed \$1 > \$3.tmp && mv \$3.tmp \$3"
cat "$out"/optuna_tpe_*.part > "$out/optuna_tpe.jsonl"
cat "$out/ours.jsonl" "$out/optuna_nsga2.jsonl" "$out/optuna_tpe.jsonl" | /usr/bin/python3 bench/mo_summarize.py
