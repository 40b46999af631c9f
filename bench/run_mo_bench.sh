#!/bin/bash
# Issue 18, point 7: our nsga2 and multi-objective tpe against Optuna 3.1's NSGAIISampler and
# TPESampler (Debian's python3-optuna, installed here if missing) on ZDT1, ZDT2, ZDT3 and DTLZ2, all
# measured in this one run: hypervolume after 200 and 500 trials (median over SEEDS seeds, one
# implementation for both tools) and the sampler's time per trial.
#   bench/run_mo_bench.sh [SEEDS] [OPTUNA_TPE_TRIALS] [KEEP_DIR]
# Optuna's multi-objective TPE takes 0.3-1.7 s per trial at 200 trials and more after (0.9-10 s
# per trial over 500; one DTLZ2 seed, 500 trials: 84 minutes here), so its runs go one (problem,
# seed) per core at once (DTLZ2, the slowest, first), and a run that is stopped keeps what it
# finished in KEEP_DIR; OPTUNA_TPE_TRIALS=200 shortens the whole run to under an hour on 2 cores
# (its 500-trial column is then "-"). Ours and Optuna's NSGA-II run alone, one after another,
# before it: their sampler times are the ones the 50x target is about.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-5}
tpe_trials=${2:-500}
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
# Each (problem, seed) of Optuna's TPE is a part of its own; a part KEEP_DIR already holds from an
# earlier, interrupted run of the same command is kept, so the hours it takes can be spread out.
for p in dtlz2 zdt1 zdt2 zdt3; do
  for s in $(seq 0 $((seeds - 1))); do
    part=$out/optuna_tpe_${p}_${s}_${tpe_trials}.part
    grep -qs '"sampler_seconds"' "$part" || echo "$p $s $part"
  done
done | xargs -r -P "$(nproc)" -L1 sh -c "/usr/bin/python3 bench/optuna_mo_bench.py --sampler tpe --trials $tpe_trials \
    --seeds $seeds --problem \$0 --seed \$1 > \$2.tmp && mv \$2.tmp \$2"
cat "$out"/optuna_tpe_*_"$tpe_trials".part > "$out/optuna_tpe.jsonl"
cat "$out"/*.jsonl | /usr/bin/python3 bench/mo_summarize.py
