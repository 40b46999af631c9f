#!/bin/bash
# Crash consistency: `crash_consistency_test.sh BIN_DIR SOURCE_DIR [KILLS]`.
# Starts a sweep with --resume, SIGKILLs the whole MPI job (mpirun and every rank at once) at a
# random moment, and checks the study file; KILLS times in a row (default 20), then lets it finish.
# After every kill: the file opens; every trial the progress output reported finished is in it with
# that state; no trial number appears twice; no trial process is left. At the end: exactly n_trials
# finished trials. Prints the commit cost per trial row measured by the last run.
set -euo pipefail
bin=$1 src=$2 kills=${3:-20}
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"
n_trials=250

cat > crash.yaml <<YAML
study: {name: crash, direction: maximize, n_trials: $n_trials, storage: $work/crash.h5}
sampler: {kind: random, seed: 21}
trial: {command: ["$bin/toy_trial"], timeout: 60s, kill_grace: 500ms}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  sleep: {type: float, low: 0.1, high: 0.6}
YAML

# job_pids (tests/support/mpi_env.sh) finds the job: mpirun and the ranks; the guards,
# "cs-trial-guard", are left to do their job.
# Trial processes of this study still alive (each toy trial records its pid in its folder).
live_trials() {
  local pid
  for pid in $(cat "$work"/crash.trials/*/pids.txt 2> /dev/null); do
    if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null)" != Z ]; then echo "$pid"; fi
  done
}

# Waits until nothing of the job or its trials runs any more.
wait_gone() {
  for _ in $(seq 1 100); do
    if [ -z "$(job_pids crash.yaml)" ] && [ -z "$(live_trials)" ]; then return 0; fi
    sleep 0.05
  done
  fail "processes left after kill $1: job $(job_pids crash.yaml | tr '\n' ' '), trials $(live_trials | tr '\n' ' ')"
}

check() {  # check LOG...: the study file against what the progress output of each run reported
  $py - "$work/crash.h5" "$@" <<'PY'
import re, sys, h5py, pandas as pd
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
t["state"] = t["state"].str.decode("utf-8")
assert t["number"].is_unique, "a trial number appears twice: %s" % t["number"][t["number"].duplicated()].tolist()
states = dict(zip(t["number"], t["state"]))
reported = {}
for log in sys.argv[2:]:
    for line in open(log, errors="replace"):
        m = re.match(r"^\[\s*\d+/\d+\] trial (\d+) ([A-Z_]+)", line)
        if m:
            reported[int(m.group(1))] = m.group(2)
missing = [n for n, s in reported.items() if states.get(n) != s]
assert not missing, "reported finished but not in the file as such: %s" % [(n, reported[n], states.get(n)) for n in missing]
print(len(reported), len(t))
PY
}

logs=()
killed=0
for i in $(seq 1 "$kills"); do
  log=$work/run$i.log
  logs+=("$log")
  "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/crash.yaml" --resume --progress lines > "$log" 2>&1 &
  job=$!
  # The kills are meant for a sweep that writes its file: on a loaded machine the first run may take
  # longer than the shortest pause to create it.
  for _ in $(seq 1 200); do
    [ -f "$work/crash.h5" ] && break
    sleep 0.05
  done
  sleep "$(awk -v s="$RANDOM" 'BEGIN {srand(s); printf "%.2f", 0.3 + 2.2 * rand()}')"
  if ! kill -0 $job 2> /dev/null; then
    wait $job || fail "run $i ended by itself with status $?: $(tail -3 "$log")"
    echo "run $i: finished the study before its kill"
    break
  fi
  # shellcheck disable=SC2046
  kill -KILL $(job_pids crash.yaml) 2> /dev/null || true
  wait $job 2> /dev/null || true
  killed=$((killed + 1))
  wait_gone "$i"
  "$bin/cleansweep" show crash.h5 > "show$i.txt" 2>&1 || fail "after kill $i the study file does not open: $(cat "show$i.txt")"
  read -r reported rows < <(check "${logs[@]}") || fail "after kill $i: see above"
  echo "kill $i: file opens, $rows rows, all $reported trials reported finished so far are in it"
done
[ "$killed" -ge "$kills" ] || fail "only $killed kills happened before the study finished; make it longer"

"${mpi[@]}" -np 3 "$bin/cleansweep" run crash.yaml --resume --progress lines > final.log 2>&1 || fail "final run: $(ended final.log)"
logs+=("$work/final.log")
check "${logs[@]}" > /dev/null || fail "final check"
$py - "$work/crash.h5" "$n_trials" <<'PY'
import sys, h5py, pandas as pd
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
t["state"] = t["state"].str.decode("utf-8")
done = t[t["state"] != "INTERRUPTED"]
assert len(done) == int(sys.argv[2]), "%d finished trials, expected %s" % (len(done), sys.argv[2])
assert (done["state"] == "COMPLETE").all(), dict(done["state"].value_counts())
assert sorted(t["number"]) == list(range(len(t))), "numbering has gaps"
print("after %s kills: %d finished trials, %d interrupted ones run again" % (sys.argv[3] if len(sys.argv) > 3 else "the", len(done), len(t) - len(done)))
PY
grep "^commits:" final.log || fail "no commit statistics"
echo "PASS: $killed kills, study complete"
