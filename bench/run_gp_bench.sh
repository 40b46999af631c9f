#!/bin/bash
# The GP sampler against its baselines, all in this one run (issue 37, point 6): our gp, tpe, auto
# and random, the scikit-learn GP-BO reference (bench/sklearn_gp_bo.py) and Optuna 3.1's TPE on
# synthetic functions, two models trained with scikit-learn and the four HPOLib tables. Installs
# Debian's python3-sklearn and python3-optuna if missing. Prints bench/README.md's tables
# ("Which sampler: auto"); about 35 minutes on 2 cores with 10 seeds.
#   bench/run_gp_bench.sh [SEEDS] [JOBS]
#   GP_BENCH_PROBLEMS=branin,hartmann6 GP_BENCH_METHODS=gp,sklearn-gp bench/run_gp_bench.sh 4
#   GP_BENCH_KEEP=results.jsonl: keep every run's line there
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-10}
jobs=${2:-$(nproc)}
if ! /usr/bin/python3 -c "import sklearn, optuna" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-sklearn python3-optuna > /dev/null
fi
scripts/build.sh > /dev/null
keep=${GP_BENCH_KEEP:-$(mktemp)}
[ -n "${GP_BENCH_KEEP:-}" ] || trap 'rm -f "$keep"' EXIT
# One BLAS thread per process: the jobs are the parallelism.
OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/gp_bench.py build/bin/sampler_bench \
  --seeds "$seeds" --jobs "$jobs" --problems "${GP_BENCH_PROBLEMS:-}" \
  --methods "${GP_BENCH_METHODS:-gp,tpe,auto,random,sklearn-gp,optuna-tpe}" > "$keep"
/usr/bin/python3 bench/gp_summarize.py < "$keep"
