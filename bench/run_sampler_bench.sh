#!/bin/bash
# Our samplers against Optuna's TPE (Debian's python3-optuna, installed here if missing) on Branin,
# Rosenbrock-4D and a mixed space, all measured in this one run. Prints the tables bench/README.md
# shows. Takes about 5 minutes on 2 cores.
#   bench/run_sampler_bench.sh [SEEDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-20}
if ! /usr/bin/python3 -c "import optuna" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-optuna > /dev/null
fi
scripts/build.sh > /dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "## Best value found (median over $seeds seeds; lower is better; optima: Branin 0.397887, others 0)"
echo
for s in tpe cmaes sobol random; do build/bin/sampler_bench --sampler $s --trials 200 --seeds "$seeds"; done > "$out/ours.jsonl"
/usr/bin/python3 bench/optuna_bench.py --trials 200 --seeds "$seeds" > "$out/optuna.jsonl"
cat "$out/ours.jsonl" "$out/optuna.jsonl" | /usr/bin/python3 bench/summarize.py

echo
echo "## Sampler time for 1,000 trials (one seed per function, both tools in this run)"
echo
build/bin/sampler_bench --sampler tpe --trials 1000 --seeds 1 > "$out/ours1000.jsonl"
/usr/bin/python3 bench/optuna_bench.py --trials 1000 --seeds 1 > "$out/optuna1000.jsonl"
/usr/bin/python3 - "$out/ours1000.jsonl" "$out/optuna1000.jsonl" <<'PY'
import json, sys
ours = {r["function"]: r for r in map(json.loads, open(sys.argv[1]))}
theirs = {r["function"]: r for r in map(json.loads, open(sys.argv[2]))}
print("| function | cleansweep TPE total | Optuna TPE total | ratio |")
print("|---|---|---|---|")
for fn in sorted(ours):
    a, b = ours[fn]["sampler_seconds"], theirs[fn]["sampler_seconds"]
    print("| %s | %.2f s | %.2f s | %.0fx |" % (fn, a, b, b / a))
PY
echo
echo "## One TPE ask with 10,000 completed trials and 8 parameters (20 asks)"
echo
build/bin/sampler_bench --ask-latency 10000
