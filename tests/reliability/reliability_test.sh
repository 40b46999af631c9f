#!/bin/bash
# Reliability under real MPI: `reliability_test.sh SCENARIO BIN_DIR SOURCE_DIR`.
#   faults              every fault of the toy trial in one sweep: classified, workers survive, nothing left over
#   graceful            SIGUSR1 to mpirun: trials stop INTERRUPTED, exit 3, `cleansweep resume` finishes the study
#   sigint_twice        two SIGINTs to the coordinator: stops at once, valid file, the study resumes
#   kill_worker         SIGKILL to a worker: Open MPI ends the job, no trial process survives, the study resumes
#   kill_coordinator    SIGKILL to the coordinator: the same
#   second_coordinator  a second coordinator on a study in use is refused; the first one is undisturbed
#   concurrent_read     `cleansweep show` and h5py read the study again and again while it is written
#   mpirun_signals      SIGINT/SIGTERM to mpirun (exit 1, Open MPI's) and SIGTERM to rank 0 (exit 3); nothing lost
#   storage_full        the study's tmpfs fills up mid-sweep: exit 1, one message, every printed trial in the
#                       file, no hang or crash; resume after freeing space finishes (skipped: no mount)
#   storage_removed     the study file is moved away mid-sweep: the same
#   storage_immutable   chattr +i on the study file mid-sweep: the same (skipped: no chattr)
#   trials_blocked      the trial folders' root (study.trials_dir) turns into a file mid-sweep: the sweep
#                       stops (exit 1, one message naming the rank and the path), no trial FAILs, the
#                       trials not started are INTERRUPTED; resume after the fix finishes
#   live_readers        load_study, the h5py example of docs/study-format.md and `cleansweep show` read a
#                       fast sweep's file in a loop while it is written: not one read fails
#   sharing_slow        two sharing shards, one reading the other through a slow file system (every read
#                       waits 15 ms): the reads are spaced out with one warning, the sweep's budget holds
#   sharing_full        two sharing shards on a tmpfs that fills: each stops (exit 1, one message) or
#                       finishes, every printed trial in its file; resumes after freeing space finish the
#                       sweep's one budget (skipped: no mount)
#   trials_full         study.trials_dir on a full tmpfs: trials still complete, and each says its
#                       log.txt is incomplete and why (skipped: no mount)
set -euo pipefail
scenario=$1 bin=$2 src=$3
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"

# config NAME N_TRIALS MODES [EXTRA_TRIAL_KEYS] [EXTRA]: sleepy toy trials whose mode is drawn from MODES.
config() {
  cat > "$1.yaml" <<YAML
study: {name: $1, direction: maximize, n_trials: $2, storage: $work/$1.h5}
sampler: {kind: random, seed: 11}
trial: {command: ["$bin/toy_trial"], timeout: 60s, kill_grace: 500ms, stop_grace: 300ms${4:+, $4}}
space:
  x: {type: float, low: 0.0, high: 1.0}
  sleep: {type: float, low: 0.3, high: 1.5}
  mode: {type: categorical, choices: [$3]}
${5:-}
YAML
}

# Every pid a toy trial recorded (itself, its children) must be gone; zombies count as gone.
no_trial_left() {
  local pid left=""
  for pid in $(cat "$work"/*.trials/*/pids.txt "$work"/*/*.trials/*/pids.txt 2> /dev/null); do
    if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2> /dev/null)" != Z ]; then left="$left $pid"; fi
  done
  [ -z "$left" ] || fail "trial processes left running:$left ($(ps -o pid,args -p "${left# }" | tail -n +2))"
}

# Polls until the study file holds at least N rows in state STATE (or any state, with STATE=ANY).
wait_rows() {
  local file=$1 n=$2 state=${3:-ANY}
  for _ in $(seq 1 200); do
    if [ -f "$file" ] && $py - "$file" "$n" "$state" 2> /dev/null <<'PY'; then return 0; fi
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    states = [s.decode() for s in f["trials"]["state"]]
n, state = int(sys.argv[2]), sys.argv[3]
sys.exit(0 if sum(1 for s in states if state in ("ANY", s)) >= n else 1)
PY
    sleep 0.1
  done
  fail "$file never had $n rows in state $state"
}

coordinator_pid() {  # the rank-0 process of the run on CONFIG (an absolute path: unique to this test)
  local p
  for p in $(pgrep -f "cleansweep (run|resume) .*$1"); do
    if [ "$(ps -o comm= -p "$p")" = cleansweep ] && tr '\0' '\n' < "/proc/$p/environ" | grep -qx OMPI_COMM_WORLD_RANK=0; then
      echo "$p"
      return
    fi
  done
}

# check_final STUDY N: exactly N finished trials, every number once, reruns point at interrupted trials.
check_final() {
  $py - "$1" "$2" <<'PY'
import sys, h5py, pandas as pd
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
t["state"] = t["state"].str.decode("utf-8")
n = int(sys.argv[2])
assert t["number"].is_unique, "a trial number appears twice"
assert sorted(t["number"]) == list(range(len(t))), "numbers have gaps: %s" % sorted(t["number"])
assert not (t["state"] == "RUNNING").any(), "RUNNING rows left after a finished study"
done = t[t["state"] != "INTERRUPTED"]
assert len(done) == n, "%d finished trials, expected %d" % (len(done), n)
for _, r in t[t["retry_of"] >= 0].iterrows():
    parent = t[t["number"] == r["retry_of"]].iloc[0]
    assert parent["state"] == "INTERRUPTED", "trial %d re-runs %s trial %d" % (r["number"], parent["state"], parent["number"])
    assert r["param_x"] == parent["param_x"] and r["attempt"] == parent["attempt"] + 1
interrupted = set(t[t["state"] == "INTERRUPTED"]["number"])
assert interrupted == set(t["retry_of"][t["retry_of"] >= 0]), "an interrupted trial was not run again"
print("%s: %d finished, %d interrupted and run again" % (sys.argv[1], len(done), len(interrupted)))
PY
}

case $scenario in
  faults)
    # One trial per fault, enqueued in this order; the expected state and reason of each.
    modes=(ok fail crash abort noreport malformed oom hog sigkill hang grandchild ignoreterm flood escape)
    enq=""
    for m in "${modes[@]}"; do enq="$enq  - {mode: $m, sleep: 0.3}
"; done
    config faults ${#modes[@]} "$(
      IFS=,
      echo "${modes[*]}"
    )" "memory_limit: 256M" "enqueue:
$enq"
    sed -i 's/timeout: 60s/timeout: 2s/' faults.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/faults.yaml" --progress lines > out.txt 2>&1 || fail "run exited $?: $(tail -5 out.txt)"
    $py - "$work/faults.h5" <<'PY'
import sys, h5py, pandas as pd
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
for c in ("state", "reason", "param_mode", "output_tail"):
    t[c] = t[c].str.decode("utf-8")
expected = {  # mode -> (state, fragment of the reason)
    "ok": ("COMPLETE", ""), "fail": ("FAIL", "exited with status 3"), "crash": ("CRASH", "signal 11"),
    "abort": ("CRASH", "signal 6"), "noreport": ("FAIL", "without reporting a final value"),
    "malformed": ("FAIL", "protocol error"), "oom": ("OOM_GPU", "CUDA out of memory"),
    "hog": ("OOM_HOST", "memory limit"), "sigkill": ("OOM_HOST", "OOM killer"),
    "hang": ("TIMEOUT", "timeout of 2.0s"), "grandchild": ("TIMEOUT", "timeout"),
    "ignoreterm": ("TIMEOUT", "timeout"), "flood": ("COMPLETE", ""), "escape": ("COMPLETE", ""),
}
assert len(t) == len(expected), len(t)
for _, r in t.iterrows():
    state, reason = expected[r["param_mode"]]
    assert r["state"] == state, "%s: %s (%s)" % (r["param_mode"], r["state"], r["reason"])
    assert reason in r["reason"], "%s: reason %r" % (r["param_mode"], r["reason"])
    tail = "flood done" if r["param_mode"] == "flood" else "mode " + r["param_mode"]  # a flood's head is gone
    assert tail in r["output_tail"], "%s: output tail %r" % (r["param_mode"], r["output_tail"][-300:])
print("every fault classified:", dict(t["state"].value_counts()))
PY
    no_trial_left
    ;;

  graceful)
    config graceful 12 ok
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/graceful.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows graceful.h5 3  # some trials done or running
    sleep 0.5
    kill -USR1 $job  # mpirun forwards it to every rank
    code=0
    wait $job || code=$?
    [ "$code" = 3 ] || fail "exit status $code after SIGUSR1, expected 3: $(tail -5 out.txt)"
    grep -q "SIGUSR1 received: no new trials" out.txt || fail "no stop message: $(cat out.txt)"
    grep -q "continue with: cleansweep resume $work/graceful.h5" out.txt || fail "no resume hint"
    no_trial_left
    "$bin/cleansweep" show graceful.h5 > show.txt
    ! grep -q "^running:" show.txt || fail "a graceful stop left RUNNING rows: $(cat show.txt)"
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume graceful.h5 --progress lines > out2.txt 2>&1 || fail "resume exited $?"
    grep -q "resuming: " out2.txt || fail "resume did not say what it continues"
    check_final graceful.h5 12
    ;;

  storage_full | storage_removed | storage_immutable)  # issue 21: the study file's disk fails mid-sweep
    folder=$work/store
    mkdir -p "$folder"
    if [ "$scenario" = storage_full ]; then
      mount -t tmpfs -o size=32m tmpfs "$folder" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
      trap 'umount "$folder" 2> /dev/null; cleanup' EXIT
      dd if=/dev/zero of="$folder/filler" bs=1k count=23000 2> /dev/null  # ~9.5 MB left: the 8 MiB reserve runs out
    fi
    config s 400 bigattrs  # 30 KB of attrs a trial: the study file outgrows its reserve on a full disk
    # Trials of 40-60 ms: the sweep lasts 8 s or more, so the fault below lands in it even when the
    # polls are slow (0.01-0.02 s let all 400 finish first in a CI rehearsal on a busy machine).
    sed -i "s#storage: [^}]*}#storage: $folder/s.h5}#; s/low: 0.3, high: 1.5/low: 0.04, high: 0.06/" s.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/s.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    if [ "$scenario" = storage_removed ]; then
      wait_rows "$folder/s.h5" 5 COMPLETE && mv "$folder/s.h5" "$folder/kept.h5"
    elif [ "$scenario" = storage_immutable ]; then
      wait_rows "$folder/s.h5" 5 COMPLETE
      chattr +i "$folder/s.h5" 2> /dev/null || { kill $job; wait $job; echo "SKIP: no chattr +i here"; exit 77; }
      trap 'chattr -i "$folder/s.h5" 2> /dev/null; cleanup' EXIT  # else the scratch folder stays
    fi
    code=0
    timeout 120 tail --pid=$job -f /dev/null || fail "the sweep hangs after the storage failure"
    wait $job || code=$?
    [ "$scenario" = storage_immutable ] && chattr -i "$folder/s.h5"
    [ "$scenario" = storage_removed ] && mv "$folder/kept.h5" "$folder/s.h5"
    [ "$code" = 1 ] || fail "exit status $code, expected 1: $(grep -v "^\[[ 0-9]*/" out.txt | head -40)"
    [ "$(grep -c 'cleansweep: error:' out.txt)" = 1 ] || fail "expected one error line: $(grep error out.txt)"
    # chattr +i can land between the check before a flush and HDF5's write: then the write fails.
    grep -q "cleansweep: error: $folder/s.h5: \(cannot reserve\|the study file was removed\|the study file cannot be written\|writing the study file failed\)" out.txt ||
      fail "message: $(grep error out.txt)"
    grep -q "Segmentation\|core dumped" out.txt && fail "a rank crashed: $(tail -20 out.txt)"
    # Every worker was heard out, so the job ended in order (MPI_Abort once made mpirun segfault).
    grep -q "MPI_ABORT was invoked" out.txt && fail "the job was aborted, not ended in order: $(tail -20 out.txt)"
    no_trial_left
    printed=$(grep -c '^\[.*\] trial [0-9]* COMPLETE' out.txt)
    [ "$printed" -gt 0 ] || fail "the failure came before any trial: $(tail -5 out.txt)"
    $py - "$folder/s.h5" "$printed" <<'PY' || fail "a trial printed COMPLETE is not in the file"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    states = [s.decode() for s in f["trials"]["state"]]
assert states.count("COMPLETE") >= int(sys.argv[2]), (states.count("COMPLETE"), sys.argv[2])
PY
    rm -f "$folder/filler"
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume "$folder/s.h5" --progress lines > out2.txt 2>&1 || fail "resume after the fix exited $?: $(grep -v "^\[" out2.txt | head -8)"
    check_final "$folder/s.h5" 400
    ;;

  live_readers)  # issue 21: readers of a live study retry torn reads; the documented ones never fail
    # 2,500 trials: each kind of reader must read 10 times or more while the sweep runs, and on a
    # quiet machine the sweep outran them (9 reads each with 1,500 trials in a CI rehearsal).
    config live 2500 "ok, fail, bigattrs, curve" "" "  steps: 3
  step_sleep: 0.002"
    sed -i 's/low: 0.3, high: 1.5/low: 0.0, high: 0.01/' live.yaml
    ( "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/live.yaml" --progress lines > out.txt 2>&1; echo $? > sweep.done ) &
    wait_rows live.h5 3 COMPLETE
    $py "$src/tests/study/live_read.py" "$work/live.h5" "$src" "$work/sweep.done" "$bin" > reads.txt 2>&1 ||
      fail "a live read failed: $(cat reads.txt)"
    cat reads.txt
    [ "$(cat sweep.done)" = 0 ] || fail "the sweep exited $(cat sweep.done): $(tail -5 out.txt)"
    check_final live.h5 2500
    ;;

  trials_blocked)  # issue 21: a worker that cannot make trial folders stops the sweep
    mkdir -p "$work/scratch"
    config t 200 ok "" ""
    sed -i "s#storage: [^}]*}#storage: $work/t.h5, trials_dir: $work/scratch}#; s/low: 0.3, high: 1.5/low: 0.05, high: 0.1/" t.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/t.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows t.h5 5 COMPLETE
    # Even root cannot make a folder inside a file: the root's disk "fails" for every worker. A
    # worker may make the root again between the mv and the write (it creates missing parents):
    # move that one aside too, and merge what they hold afterwards.
    for aside in 1 2 3 4 5 6 7 8 9 10; do
      mv "$work/scratch/t.trials" "$work/scratch/t.trials.kept$aside"
      echo "not a folder" 2> /dev/null > "$work/scratch/t.trials" && break
    done
    [ -f "$work/scratch/t.trials" ] || fail "could not put a file in place of the trial folders' root"
    code=0
    timeout 120 tail --pid=$job -f /dev/null || fail "the sweep hangs after the trial folders failed"
    wait $job || code=$?
    [ "$code" = 1 ] || fail "exit status $code, expected 1: $(grep -v "^\[[ 0-9]*/" out.txt | head -40)"
    grep -q "cleansweep: error: worker rank [12] on .* cannot start trials: $work/scratch/t.trials/[0-9]*: cannot create the trial folder" out.txt ||
      fail "message: $(grep error out.txt)"
    grep -q "fix the cause, then continue with: cleansweep resume $work/t.h5" out.txt || fail "no advice: $(tail -5 out.txt)"
    no_trial_left
    $py - "$work/t.h5" <<'PY' || fail "the study file after the stop"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
states = [s.decode() for s in t["state"]]
reasons = [r.decode() for r in t["reason"]]
assert "FAIL" not in states and "RUNNING" not in states, states
interrupted = [r for s, r in zip(states, reasons) if s == "INTERRUPTED"]
blocked = [r for r in interrupted if r.startswith("not started: ")]  # the start that failed, per worker
queued = [r for r in interrupted if r.startswith("interrupted: not started: ") and "queued on this worker" in r]
assert 1 <= len(blocked) <= 2 and len(queued) <= 2 and len(blocked) + len(queued) == len(interrupted), interrupted
assert states.count("COMPLETE") >= 5, states
PY
    rm "$work/scratch/t.trials"
    for kept in "$work"/scratch/t.trials.kept[2-9] "$work"/scratch/t.trials.kept10; do
      [ -d "$kept" ] || continue
      find "$kept" -mindepth 1 -maxdepth 1 -exec mv -t "$work/scratch/t.trials.kept1" {} +
      rmdir "$kept"
    done
    mv "$work/scratch/t.trials.kept1" "$work/scratch/t.trials"
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume "$work/t.h5" --progress lines > out2.txt 2>&1 || fail "resume after the fix exited $?: $(tail -5 out2.txt)"
    check_final t.h5 200
    [ -s "$work/scratch/t.trials/199/log.txt" ] || fail "the last trial's log is not under study.trials_dir"
    ;;

  sharing_slow)  # issue 38: a slow file system under the siblings spaces the reads out; nothing stalls
    config sl 24 ok
    sed -i "s#storage: [^}]*}#storage: $work/sl.h5, share_every: 1s}#; s#{kind: random, seed: 11}#{kind: tpe, seed: 11, n_startup_trials: 4}#" sl.yaml
    # Shard 1 reads shard 0's file through a file system that makes every read wait 15 ms.
    "${mpi[@]}" -np 2 "$bin/cleansweep" run "$work/sl.yaml" --shard 0/2 --progress lines > s0.txt 2>&1 &
    s0=$!
    "${mpi[@]}" -np 2 env LD_PRELOAD="$bin/../lib/libslow_io.so" SLOW_IO_MATCH=sl-shard-0-of-2.h5 SLOW_IO_MS=15 \
      "$bin/cleansweep" run "$work/sl.yaml" --shard 1/2 --progress lines > s1.txt 2>&1 || fail "shard 1 exited $?: $(cat s1.txt)"
    wait $s0 || fail "shard 0 exited $?: $(cat s0.txt)"
    grep -q "warning: sharing: reading the sweep's other files took .*, more than a tenth of study.share_every (1.0s): reading them every .* instead" s1.txt ||
      fail "no warning about the slow reads: $(grep sharing s1.txt)"
    # Shard 0's file system is fast (on a busy machine its reads may still be slow, and say so).
    grep "warning: sharing" s0.txt | grep -qv "reading the sweep's other files took" &&
      fail "shard 0 warned: $(grep sharing s0.txt)"
    $py - s1.txt "$work/sl-shard-0-of-2.h5" "$work/sl-shard-1-of-2.h5" <<'PY' || fail "the sweep's budget: $(grep sharing s1.txt)"
import re, sys, h5py
done = 0
for path in sys.argv[2:]:
    with h5py.File(path, "r", swmr=True) as f:
        states = [s.decode() for s in f["trials"]["state"]]
    assert all(s == "COMPLETE" for s in states), (path, states)
    done += len(states)
def seconds(text):  # FormatDuration: 850ms, 12.5s, 1m05s
    m = re.fullmatch(r"(?:(\d+)m)?([\d.]+)(ms|s)", text)
    return int(m.group(1) or 0) * 60 + float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
every = max(seconds(t) for t in re.findall(r"reading them every (\S+) instead", open(sys.argv[1]).read()))
# One budget of 24, overshot at most by what the other shard's one worker (trials of 0.3 s or
# more) started within one interval between two reads: shard 1's spaced-out one, shard 0's 1 s.
bound = 24 + (int(every / 0.3) + 1) + (int(1 / 0.3) + 1)
assert 24 <= done <= bound, (done, every, bound)
print("%d trials for a budget of 24; shard 1 read every %.1f s (bound %d)" % (done, every, bound))
PY
    ;;

  sharing_full)  # issue 38: two sharing shards on a disk that fills: each stops in order, nothing lost, resume finishes
    folder=$work/store
    mkdir -p "$folder"
    mount -t tmpfs -o size=40m tmpfs "$folder" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
    trap 'umount "$folder" 2> /dev/null; cleanup' EXIT
    dd if=/dev/zero of="$folder/filler" bs=1k count=19000 2> /dev/null  # ~21 MB left: two 8 MiB reserves, then little
    config fu 300 bigattrs
    sed -i "s#storage: [^}]*}#storage: $folder/fu.h5, share_every: 500ms}#; s/low: 0.3, high: 1.5/low: 0.04, high: 0.06/; s#{kind: random, seed: 11}#{kind: tpe, seed: 11}#" fu.yaml
    for k in 0 1; do
      ( code=0; "${mpi[@]}" -np 2 "$bin/cleansweep" run "$work/fu.yaml" --shard $k/2 --progress lines > s$k.txt 2>&1 || code=$?; echo $code > s$k.code ) &
    done
    timeout 120 bash -c 'while [ ! -s s0.code ] || [ ! -s s1.code ]; do sleep 0.2; done' || fail "a shard hangs on the full disk"
    failed=""
    for k in 0 1; do
      code=$(cat s$k.code)
      case $code in
        0) ;;
        1)
          failed="$failed $k"
          [ "$(grep -c 'cleansweep: error:' s$k.txt)" = 1 ] || fail "shard $k: expected one error line: $(grep error s$k.txt)"
          grep -q "cleansweep: error: $folder/fu-shard-$k-of-2.h5: \(cannot reserve\|writing the study file failed\)" s$k.txt ||
            fail "shard $k: $(grep error s$k.txt)"
          ;;
        *) fail "shard $k exited $code: $(tail -20 s$k.txt)" ;;
      esac
      grep -q "Segmentation\|core dumped\|MPI_ABORT was invoked" s$k.txt && fail "shard $k crashed: $(tail -20 s$k.txt)"
      printed=$(grep -c '^\[.*\] trial [0-9]* COMPLETE' s$k.txt || true)
      $py - "$folder/fu-shard-$k-of-2.h5" "$printed" <<'PY' || fail "shard $k: a trial printed COMPLETE is not in the file"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    states = [s.decode() for s in f["trials"]["state"]]
assert states.count("COMPLETE") >= int(sys.argv[2]), (states.count("COMPLETE"), sys.argv[2])
PY
    done
    [ -n "$failed" ] || fail "the disk never filled: both shards finished"
    echo "shards that stopped on the full disk:$failed"
    no_trial_left
    rm -f "$folder/filler"
    for k in $failed; do
      "${mpi[@]}" -np 2 "$bin/cleansweep" resume "$folder/fu-shard-$k-of-2.h5" --progress lines > r$k.txt 2>&1 ||
        fail "resume of shard $k after the fix exited $?: $(grep -v "^\[" r$k.txt | head -8)"
    done
    $py - "$folder/fu-shard-0-of-2.h5" "$folder/fu-shard-1-of-2.h5" <<'PY' || fail "the sweep after the resumes"
import sys, h5py
done = 0
for path in sys.argv[1:]:
    with h5py.File(path, "r", swmr=True) as f:
        states = [s.decode() for s in f["trials"]["state"]]
    assert "RUNNING" not in states, (path, states.count("RUNNING"))
    done += sum(1 for s in states if s != "INTERRUPTED")
assert 300 <= done <= 304, done  # one budget: the overshoot of the trials started between two reads
print("%d trials for a budget of 300 after the resumes" % done)
PY
    ;;

  trials_full)  # issue 21: a full disk under the trial folders: logs cut short, and the trials say so
    folder=$work/scratch
    mkdir -p "$folder"
    mount -t tmpfs -o size=2m tmpfs "$folder" 2> /dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
    trap 'umount "$folder" 2> /dev/null; cleanup' EXIT
    config f 4 flood "" ""  # 40 MiB of output each
    sed -i "s#storage: [^}]*}#storage: $work/f.h5, trials_dir: $folder}#; s/low: 0.3, high: 1.5/low: 0.01, high: 0.02/" f.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/f.yaml" --progress lines > out.txt 2>&1 || fail "run exited $?: $(tail -5 out.txt)"
    $py - "$work/f.h5" <<'PY' || fail "the trials do not say their logs are incomplete"
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
states = [s.decode() for s in t["state"]]
reasons = [r.decode() for r in t["reason"]]
assert states == ["COMPLETE"] * 4, (states, reasons)
for r in reasons:
    assert r.startswith("log.txt is incomplete: writing it failed after ") and r.endswith(" bytes (No space left on device)"), r
PY
    ;;

  mpirun_signals)  # issue 15: the documented exit status for each signal, and nothing lost either way
    for sig in INT TERM; do
      config "m$sig" 10 ok
      "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/m$sig.yaml" --progress lines > out.txt 2>&1 &
      job=$!
      wait_rows "m$sig.h5" 3
      kill -$sig $job  # Open MPI aborts the job itself: mpirun exits 1 whatever the ranks return
      code=0
      wait $job || code=$?
      [ "$code" = 1 ] || fail "exit status $code after SIG$sig to mpirun, documented 1: $(tail -5 out.txt)"
      no_trial_left
      "$bin/cleansweep" show "m$sig.h5" > /dev/null || fail "the study does not read after SIG$sig to mpirun"
      "${mpi[@]}" -np 3 "$bin/cleansweep" resume "m$sig.h5" --progress lines > out2.txt 2>&1 || fail "resume exited $?"
      check_final "m$sig.h5" 10
    done
    config rterm 10 ok
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/rterm.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows rterm.h5 3
    kill -TERM "$(coordinator_pid "$work/rterm.yaml")"  # to rank 0 alone: a graceful stop
    code=0
    wait $job || code=$?
    [ "$code" = 3 ] || fail "exit status $code after SIGTERM to rank 0, documented 3: $(tail -5 out.txt)"
    no_trial_left
    ;;

  sigint_twice)
    config twice 12 ok "" ""
    # Long trials and a long grace: only the second signal can end the run soon.
    sed -i 's/stop_grace: 300ms/stop_grace: 60s/; s/low: 0.3, high: 1.5/low: 5.0, high: 6.0/' twice.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/twice.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows twice.h5 2 RUNNING
    rank0=$(coordinator_pid "$work/twice.yaml")
    [ -n "$rank0" ] || fail "no coordinator process found"
    kill -INT "$rank0"
    sleep 0.3
    kill -INT "$rank0"
    code=0
    wait $job || code=$?
    [ "$code" = 3 ] || fail "exit status $code after two SIGINTs, expected 3: $(tail -5 out.txt)"
    grep -q "again: stopping now" out.txt || fail "no immediate-stop message: $(cat out.txt)"
    no_trial_left
    "$bin/cleansweep" show twice.h5 > /dev/null || fail "the study file does not open"
    sed -i "s/low: 5.0, high: 6.0/low: 0.3, high: 1.5/" twice.yaml  # the reruns keep their 5-6 s
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/twice.yaml" --resume --force --progress lines > out2.txt 2>&1 ||
      fail "resume exited $?: $(tail -3 out2.txt)"
    check_final twice.h5 12
    ;;

  kill_worker | kill_coordinator)
    config kill 10 "ok, grandchild" "" ""
    sed -i "s/timeout: 60s/timeout: 3s/" kill.yaml  # grandchild trials hang until their timeout
    sed -i 's/sleep: {type: float, low: 0.3, high: 1.5}/sleep: {type: float, low: 3.0, high: 5.0}/' kill.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/kill.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows kill.h5 2 RUNNING
    sleep 0.3
    rank0=$(coordinator_pid "$work/kill.yaml")
    if [ "$scenario" = kill_worker ]; then
      victim=""
      for p in $(pgrep -f "cleansweep run $work/kill.yaml"); do  # a worker rank: mpirun's child, not rank 0
        if [ "$(ps -o comm= -p "$p")" = cleansweep ] && [ "$p" != "$rank0" ] &&
          [ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$job" ]; then
          victim=$p
          break
        fi
      done
    else
      victim=$rank0
    fi
    [ -n "$victim" ] || fail "no process to kill"
    kill -KILL "$victim"
    wait $job && fail "mpirun exited 0 although a rank was killed"
    no_trial_left
    "$bin/cleansweep" show kill.h5 > /dev/null || fail "the study file does not open"
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume kill.h5 --progress lines > out2.txt 2>&1 || fail "resume exited $?"
    check_final kill.h5 10
    no_trial_left
    ;;

  second_coordinator)
    config busy 6 ok
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/busy.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows busy.h5 1
    code=0
    "${mpi[@]}" -np 2 "$bin/cleansweep" run "$work/busy.yaml" --resume > out2.txt 2> err2.txt || code=$?
    [ "$code" = 2 ] || fail "a second coordinator exited $code, expected 2: $(cat err2.txt)"
    grep -q "the study is in use by cleansweep pid [0-9]* on .* since " err2.txt || fail "message: $(cat err2.txt)"
    [ "$(grep -c "cleansweep: error" err2.txt)" = 1 ] || fail "expected one error line: $(cat err2.txt)"
    wait $job || fail "the first coordinator failed: $(tail -5 out.txt)"
    check_final busy.h5 6
    ;;

  concurrent_read)
    config watched 16 ok
    # About 5 s of trials: three rounds of show + h5py take 3 s on a loaded 2-core machine (with
    # 0.1-0.4 s trials a CI rehearsal once finished the sweep after two reads).
    sed -i 's/low: 0.3, high: 1.5/low: 0.4, high: 0.8/' watched.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run "$work/watched.yaml" --progress lines > out.txt 2>&1 &
    job=$!
    wait_rows watched.h5 1
    reads=0
    while kill -0 $job 2> /dev/null; do
      "$bin/cleansweep" show watched.h5 > show.txt 2> show_err.txt || fail "show failed during the run: $(cat show_err.txt)"
      # A plain h5py read may meet a chunk in the middle of a flush (SWMR does not cover raw data:
      # "data error detected by Fletcher32 checksum" once in CI); docs/study-format.md says to read
      # again, as its example does. A read that fails 20 times over a second is a failure.
      $py -c "
import h5py, time
for attempt in range(20):
    try:
        with h5py.File('$work/watched.h5', 'r', swmr=True) as f:
            t = f['trials'][:]
        break
    except OSError:
        if attempt == 19:
            raise
        time.sleep(0.05)
assert len(t) >= 1 and set(t['state']) <= {b'RUNNING', b'COMPLETE'}, t['state']
" || fail "h5py could not read the study during the run"
      reads=$((reads + 1))
    done
    wait $job || fail "the sweep failed while being read: $(tail -5 out.txt)"
    [ "$reads" -ge 3 ] || fail "only $reads reads happened during the run"
    echo "$reads reads of each kind during the run"
    check_final watched.h5 16
    ;;

  *) fail "unknown scenario $scenario" ;;
esac
echo "PASS: $scenario"
