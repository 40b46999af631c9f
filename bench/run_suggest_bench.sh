#!/bin/bash
# The round trip of a define-by-run suggest (issue 39, point 5): WORKERS workers whose trials all ask at
# once, each trial 40 parameters the config does not declare (drawn and recorded by rank 0) and 40
# that it declares (answered by the worker itself: the baseline, measured in the same run). Each
# call is timed in the trial, from the request to the value, and the trial keeps its times as attrs;
# rank 0's own share (request in to answer out) is the run's "suggest:" line.
#   [WORKERS=16] [TRIAL=python|cpp] bench/run_suggest_bench.sh BUILD_BIN_DIR [SAMPLER ...]
# (default: random tpe; TRIAL=cpp runs bench/suggest_trial.cpp, the same calls through trial.hpp).
# SETTLE_MS=500: each trial waits that long before it asks, so that its calls meet the other
# trials' calls rather than their start-up and exit (spawn, interpreter, results committed).
# With more workers than cores the round trip measures the scheduler more than cleansweep: each
# hop (trial, worker, rank 0, worker, trial) waits for a core.
set -euo pipefail
bin=$(cd "$1" && pwd)
shift
samplers=("${@:-random}")
[ $# -eq 0 ] && samplers=(random tpe)
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
workers=${WORKERS:-16}
mpi=(mpirun --oversubscribe -np $((workers + 1)))
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export SETTLE_MS=${SETTLE_MS:-0}  # read by the trials
cat > ask.py <<'PY'
import os
import time


def objective(trial):
    time.sleep(float(os.environ.get("SETTLE_MS", "0")) / 1000)
    undeclared, declared = [], []
    for i in range(40):
        for kind, times in (("u", undeclared), ("d", declared)):
            start = time.perf_counter_ns()
            if kind == "u":
                trial.suggest_float("u%d" % i, 0.0, 1.0) if i % 2 else trial.suggest_int("u%d" % i, 1, 64)
            else:
                trial.suggest_float("d%d" % i, 0.0, 1.0)
            times.append((time.perf_counter_ns() - start) / 1e6)
    trial.set_user_attr("undeclared_ms", undeclared)
    trial.set_user_attr("declared_ms", declared)
    return 0.0
PY
for sampler in "${samplers[@]}"; do
  {
    echo "study: {name: s-$sampler, n_trials: 64, storage: $work/$sampler.h5}"
    echo "sampler: {kind: $sampler, seed: 1}"
    if [ "${TRIAL:-python}" = cpp ]; then
      echo "trial: {command: [\"$bin/suggest_trial\"]}"
    else
      echo "trial: {objective: \"$work/ask.py:objective\", python: /usr/bin/python3}"
    fi
    echo "space:"
    for i in $(seq 0 39); do echo "  d$i: {type: float, low: 0.0, high: 1.0}"; done
  } > "$sampler.yaml"
  CLEANSWEEP_PYTHON_DIR="$src/python" "${mpi[@]}" "$bin/cleansweep" run "$sampler.yaml" --progress lines > "$sampler.txt" 2>&1 ||
    { cat "$sampler.txt"; exit 1; }
  /usr/bin/python3 - "$work/$sampler.h5" "$sampler" << 'PY'
import json, sys
import h5py, numpy as np
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
attrs = [json.loads(a) for a in t["attrs"]]
times = lambda v: json.loads(v) if isinstance(v, str) else v  # the C++ trial's lists come as text
u = np.concatenate([times(a["undeclared_ms"]) for a in attrs])
d = np.concatenate([times(a["declared_ms"]) for a in attrs])
states = {s.rstrip(b"\0").decode() for s in t["state"]}
print(f"{sys.argv[2]:7s} {len(t)} trials {sorted(states)}: rank 0 round trip median {np.median(u):.3f} ms, "
      f"p99 {np.percentile(u, 99):.3f} ms; worker-answered median {np.median(d):.3f} ms, p99 "
      f"{np.percentile(d, 99):.3f} ms; ratio of medians {np.median(u) / np.median(d):.1f}")
PY
  grep '^suggest:' "$sampler.txt" | sed "s/^/$sampler  rank 0 alone: /"
done
