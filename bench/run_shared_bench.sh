#!/bin/bash
# Shards that share against one study and against independent shards, and warm starts (issue 38,
# point 5), on the four HPOLib tables (../shared/benchmarks/hpolib, or HPOLIB_DIR) and Hartmann-6,
# with TPE, the GP and CMA-ES, all in this one run; then the cost of reading the siblings at 16 shards x
# 1,000 trials with real study files. Prints bench/README.md's tables ("Shards that share").
# Installs Debian's python3-numpy if missing. About 15 minutes on 2 cores with 30 seeds.
#   bench/run_shared_bench.sh [SEEDS] [JOBS]
#   SHARED_BENCH_PROBLEMS=hartmann6 SHARED_BENCH_SAMPLERS=gp bench/run_shared_bench.sh 10
#   SHARED_BENCH_KEEP=results.jsonl: keep every run's line there
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-30}
jobs=${2:-$(nproc)}
if ! /usr/bin/python3 -c "import numpy" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-numpy > /dev/null
fi
export HPOLIB_DIR=${HPOLIB_DIR:-$PWD/../shared/benchmarks/hpolib}
scripts/build.sh > /dev/null
keep=${SHARED_BENCH_KEEP:-$(mktemp)}
parts=$(mktemp -d)
trap 'rm -rf "$parts"; [ -n "${SHARED_BENCH_KEEP:-}" ] || rm -f "$keep"' EXIT
problems=${SHARED_BENCH_PROBLEMS:-hpolib_naval_propulsion,hpolib_parkinsons_telemonitoring,hpolib_protein_structure,hpolib_slice_localization,hartmann6}
samplers=${SHARED_BENCH_SAMPLERS:-tpe,gp,cmaes}
# One job per problem and sampler, each into a file of its own: a read every 0.1 trial durations
# (30 s beside trials of 5 minutes), and sharing-stale, a read only once per trial duration.
n=0
for p in ${problems//,/ }; do
  for s in ${samplers//,/ }; do
    echo "$((n += 1)) --problems $p --samplers $s --seeds $seeds"
    echo "$((n += 1)) --problems $p --samplers $s --seeds $seeds --modes sharing --share-every 1 --tag -stale"
  done
done | xargs -P "$jobs" -L 1 sh -c 'n=$1; shift; exec "$0" "$@" > "'"$parts"'/$n.jsonl"' build/bin/shared_bench
cat "$parts"/*.jsonl > "$keep"
echo "## Final regret: one study, sharing shards, independent shards, warm starts ($seeds seeds)"
echo
/usr/bin/python3 bench/shared_summarize.py < "$keep"
echo
echo "## Reading the siblings: 16 shards x 1,000 trials, real study files"
echo
build/bin/coordinator_bench --siblings 16 --trials 1000 --workers 4
echo
echo "## One TPE ask with a shard's own 1,000 trials, and with the sweep's 16,000"
echo
build/bin/sampler_bench --ask-latency 1000
build/bin/sampler_bench --ask-latency 16000
