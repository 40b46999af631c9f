#!/bin/bash
# Against the seed's recipe on real work (bench/README.md, "Against the seed's recipe"): the same
# search (configs/quickstart.yaml's space, data subset and epochs; TPE; TRIALS trials, 2 at a time
# on this machine) three ways, for each of SEEDS seeds, in one run:
#   python      the seed's recipe: Optuna's TPE in the parent, one multiprocessing.Process (spawn)
#               per trial training the same CNN with PyTorch, the value back through a queue
#               (bench/seed_recipe.py; Debian's python3-optuna and python3-torch)
#   spawn       cleansweep, TPE, the bundled trainer spawned per trial (mpirun -np 3)
#   forkserver  cleansweep, TPE, the trainer plugin forked per trial (the defaults: prefork, queue)
# The order of the three rotates from seed to seed, so drift in this machine's speed spreads over
# all of them. For each run: wall time (the command's start to its end), the trials' own training
# seconds summed (TPE picks other configurations in each set-up, and bigger ones train longer),
# time to the first trial at >= 0.80 validation accuracy (the command's start to that trial's
# end), the best accuracy, and the overhead of a trial in two parts, medians over its trials:
# launch_s, the trial's time outside its training (start of its process to its reaping, less
# train_seconds: starting, importing, loading data, exiting) and gap_ms, the idle gap (its slot's
# previous trial's end to its start: the result's way back, sampling, the next launch); and
# idle_s = wall - train_s / 2, the wall time a worker did not spend training (start-up, the
# overheads, and the end of the sweep, when one worker waits for the other's last trial). Prints
# one line per run and the medians per set-up. core_share, the median of a trial's CPU seconds over
# its wall seconds, shows whether trials had their core to themselves (about 1 with one thread
# each): nothing else may run on the machine meanwhile, not even at a low nice value (with
# autogroup scheduling, another session's processes get an equal share whatever their nice).
# With KEEP_DIR, the study files, logs and the recipe's JSON lines stay there.
#   bench/run_seed_recipe_bench.sh [BUILD_DIR] [SEEDS] [TRIALS] [KEEP_DIR]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
seeds=${2:-3}
trials=${3:-24}
for f in "$build/bin/cleansweep" "$build/bin/cleansweep-train-fashion" "$build/lib/cleansweep-train-fashion.so"; do
  [ -e "$f" ] || { echo "missing $f: build with the trainer (scripts/build.sh)" >&2; exit 2; }
done
if ! /usr/bin/python3 -c "import optuna, torch" 2> /dev/null; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-optuna python3-torch > /dev/null
fi
if [ -n "${4:-}" ]; then
  mkdir -p "$4"
  work=$(cd "$4" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mpi=(mpirun --oversubscribe -np 3)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
setups=(python spawn forkserver)
now() { date +%s.%N; }

for seed in $(seq 1 "$seeds"); do
  for i in 0 1 2; do
    setup=${setups[$(((seed - 1 + i) % 3))]}
    run="$work/$setup-$seed"
    echo "seed $seed: $setup" >&2
    began=$(now)
    if [ "$setup" = python ]; then
      /usr/bin/python3 "$src/bench/seed_recipe.py" --seed "$seed" --trials "$trials" --workers 2 > "$run.jsonl"
    else
      launch=()
      [ "$setup" = forkserver ] && launch=(--set trial.launcher=forkserver
        --set "trial.command=[\"$build/lib/cleansweep-train-fashion.so\", --subset, \"3000\", --val-size, \"2000\"]")
      PATH="$build/bin:$PATH" "${mpi[@]}" "$build/bin/cleansweep" run "$src/configs/quickstart.yaml" \
        --progress lines --set "study.storage=$run.h5" --set "study.n_trials=$trials" --set study.time_budget=4h \
        --set sampler.kind=tpe --set "sampler.seed=$seed" "${launch[@]}" > "$run.log" 2>&1 ||
        { tail -20 "$run.log" >&2; exit 1; }
    fi
    echo "$began $(now)" > "$run.wall"
  done
done

PYTHONPATH="$src/python" /usr/bin/python3 - "$work" "$seeds" << 'PY'
import json, sys
import pandas as pd
from cleansweep_study import load_study

work, seeds = sys.argv[1], int(sys.argv[2])
rows = []
for seed in range(1, seeds + 1):
    for setup in ("python", "spawn", "forkserver"):
        run = f"{work}/{setup}-{seed}"
        began, ended = map(float, open(f"{run}.wall").read().split())
        if setup == "python":
            lines = [json.loads(l) for l in open(f"{run}.jsonl")]
            t = pd.DataFrame([l for l in lines if "number" in l])
            t["state"] = ["COMPLETE" if c == 0 else "FAIL" for c in t["exit_code"]]
        else:
            s = load_study(f"{run}.h5")
            t = s.trials.join(s.user_attrs())
            for ours, theirs in (("start", "datetime_start"), ("end", "datetime_end"), ("free", "datetime_worker_free")):
                t[ours] = t[theirs].map(lambda d: d.timestamp() if pd.notna(d) else float("nan"))
            t["train_seconds"] = t.get("attr_train_seconds", float("nan"))
        t["free"] = t["free"].astype(float)
        done = t[t["state"] == "COMPLETE"]
        good = done[done["value"] >= 0.80]
        rows.append({"setup": setup, "seed": seed, "trials": len(t), "complete": len(done),
                     "wall_s": ended - began, "train_s": done["train_seconds"].sum(),
                     "first_0.80_s": good["end"].min() - began if len(good) else float("nan"),
                     "best": done["value"].max(),
                     "launch_s": (done["end"] - done["start"] - done["train_seconds"]).median(),
                     "gap_ms": 1e3 * (t["start"] - t["free"]).median(),
                     "idle_s": (ended - began) - done["train_seconds"].sum() / 2,
                     "core_share": (done["cpu_seconds"] / (done["end"] - done["start"])).median()})
r = pd.DataFrame(rows)
pd.set_option("display.width", 200)
print(r.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
print("\nmedian over seeds:")
m = r.groupby("setup", sort=False)[["wall_s", "train_s", "first_0.80_s", "best", "launch_s", "gap_ms", "idle_s", "core_share"]].median()
print(m.to_string(float_format=lambda v: f"{v:.3f}"))
for setup in ("spawn", "forkserver"):
    ratio = (r[r.setup == setup].set_index("seed")["wall_s"] / r[r.setup == "python"].set_index("seed")["wall_s"])
    print(f"{setup} / python wall time, per seed: " + ", ".join(f"{v:.2f}" for v in ratio))
PY
