#!/bin/bash
# What a killed job costs, with and without checkpoints (issue 17, point 6). A sweep of TRIALS
# trials of STEPS steps (0.1 s each, tests/programs/checkpoint_trial.py) on 2 workers is killed
# KILLS times, the whole MPI job with SIGKILL at a random moment (0.5-2.5 s into each run), and
# resumed each time, then run to the end: once with trials that checkpoint after every step, once
# with trials that declare none (each interrupted trial then starts again from step 1). Every
# trial appends each step it computes to executed.txt in its folder; the table compares the steps
# executed with the steps the finished study needed. The check: with checkpoints, at most one step
# redone per running trial and kill (the checkpoint interval), and, in both, every finished trial has
# each of its steps once in /intermediate.
#   bench/run_preemption_bench.sh [KILLS] [TRIALS] [STEPS]     (defaults 8, 8, 20: about 1 minute)
set -euo pipefail
kills=${1:-8} trials=${2:-8} steps=${3:-20} workers=2
cd "$(dirname "$0")/.."
src=$PWD
scripts/build.sh > /dev/null
out=$(mktemp -d)
trap 'pkill -KILL -f "$out/" 2> /dev/null || true; [ -n "${KEEP_OUT:-}" ] || rm -rf "$out"' EXIT
mpi=(mpirun -np $((workers + 1)) --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none

job_pids() {
  local p
  for p in $(pgrep -f "$out/$1.yaml"); do
    case "$(ps -o comm= -p "$p" 2> /dev/null)" in mpirun | cleansweep) echo "$p" ;; esac
  done
}

run() {  # run NAME CHECKPOINT(true|false)
  cat > "$out/$1.yaml" <<YAML
study: {name: $1, direction: maximize, n_trials: $trials, storage: $out/$1.h5}
sampler: {kind: random, seed: 3}
trial: {command: [/usr/bin/python3, "$src/tests/programs/checkpoint_trial.py", "$out"], timeout: 10m, kill_grace: 500ms}
space:
  x: {type: float, low: 0.0, high: 1.0}
  steps: $steps
  pause: 0.1
  checkpoint: $2
YAML
  local start end i
  start=$(date +%s.%N)
  for i in $(seq 1 "$kills"); do
    "${mpi[@]}" build/bin/cleansweep run "$out/$1.yaml" --resume --progress lines > "$out/$1-$i.log" 2>&1 &
    local job=$!
    sleep "$(awk -v s="$RANDOM" 'BEGIN {srand(s); printf "%.2f", 0.5 + 2 * rand()}')"
    # shellcheck disable=SC2046
    kill -KILL $(job_pids "$1") 2> /dev/null || true
    wait $job 2> /dev/null || true
    while [ -n "$(job_pids "$1")" ] || pgrep -f "checkpoint_trial.py $out" > /dev/null; do sleep 0.05; done
  done
  "${mpi[@]}" build/bin/cleansweep run "$out/$1.yaml" --resume --progress lines > "$out/$1-end.log" 2>&1
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out/$1.h5" "$out/$1.trials" "$1" "$trials" "$steps" "$kills" "$workers" "$start" "$end" <<'PY'
import glob, os, sys, h5py
path, folder, name = sys.argv[1:4]
trials, steps, kills, workers = (int(a) for a in sys.argv[4:8])
with h5py.File(path, "r", swmr=True) as f:
    t = f["trials"][:]
    inter = f["intermediate"][:]
done = t[t["state"] == b"COMPLETE"]
assert len(done) == trials, "the study did not finish"
for n in done["number"]:  # no finished trial lost a step or has one twice
    got = sorted(inter["step"][inter["trial"] == n])
    assert got == list(range(1, steps + 1)), "trial %d reported steps %s" % (n, got)
executed = sum(len(open(p).read().splitlines()) for p in glob.glob(os.path.join(folder, "*", "executed.txt")))
needed = trials * steps
redone = executed - needed
print("| %s | %d | %d | %d | %.2f | %d | %.0f s |" % (name, needed, executed, redone, redone / kills, len(t) - trials,
      float(sys.argv[9]) - float(sys.argv[8])))
if name == "every_step":
    assert redone <= kills * workers, "more than one step redone per running trial and kill"
PY
}
echo "| checkpoints | steps needed | steps executed | redone | redone per kill | trials run again under a new number | wall time |"
echo "|---|---|---|---|---|---|---|"
run every_step true
run none false
echo "($kills kills of the whole job, $workers workers, $trials trials of $steps steps of 0.1 s)"
