#!/bin/bash
# Trials that go on from their checkpoints (issue 17): `checkpoint_test.sh BIN_DIR SOURCE_DIR [KILLS] [GPUS]`.
# A sweep of trials that checkpoint after every step (tests/programs/checkpoint_trial.py) is cut
# short by a 1.5 s time budget, then killed with SIGKILL, the whole job at once, KILLS times
# (default 3) at random moments after a checkpoint, then stopped gracefully (SIGUSR1), then resumed
# to the end. Checks: every trial COMPLETE under its own number with the value only an unbroken chain of steps gives; each step in /intermediate once;
# /attempts holds every earlier attempt and each attempt resumed from the checkpoint the one before
# declared; the steps computed again are at most one per running trial and stop (the checkpoint
# interval is one step); trial.checkpoint_keep: last left one checkpoint per trial.
# With GPUS > 1 every trial is a gang of that many processes (issue 16) on 2 * GPUS workers: a kill
# takes the whole gang down, and it goes on, as a gang again, from rank 0's checkpoint.
# With a fifth argument `protocol_only` the trials use no helper (checkpoint_trial.py's
# protocol_only): they write into CLEANSWEEP_CHECKPOINT_DIR without creating it (issue 36).
set -euo pipefail
bin=$1 src=$2 kills=${3:-3} gpus=${4:-1} mode=${5:-helper}
# shellcheck source=../support/mpi_env.sh
source "$src/tests/support/mpi_env.sh"
n_trials=8 steps=16 workers=$((gpus > 1 ? 2 * gpus : 2))

cat > ck.yaml <<YAML
study: {name: ck, direction: maximize, n_trials: $n_trials, storage: $work/ck.h5}
sampler: {kind: random, seed: 5}
trial: {command: [$py, "$src/tests/programs/checkpoint_trial.py", "$work"], timeout: 60s, kill_grace: 500ms,
        stop_grace: 200ms, gpus: $gpus}
space:
  x: {type: float, low: 0.0, high: 1.0}
  steps: $steps
  pause: 0.12
  protocol_only: $([ "$mode" = protocol_only ] && echo true || echo false)
YAML

wait_gone() {
  for _ in $(seq 1 100); do
    if [ -z "$(job_pids ck.yaml)" ] && ! pgrep -f "checkpoint_trial.py $work" > /dev/null; then return 0; fi
    sleep 0.05
  done
  fail "processes left after $1: $(pgrep -af "$work" | tr '\n' ';')"
}
# wait_checkpoint T0 LOG: waits until a trial that the run started at or after Unix time T0 has declared a checkpoint past
# the one it resumed from (a kill then has something to go on from; the RUNNING rows a killed run
# left behind are older), then a random moment more.
# Polled only once LOG says the run resumed: the file is open by then (a resume that changes the
# config opens it plainly for a moment, and HDF5 refuses that while a reader holds it).
wait_checkpoint() {
  for _ in $(seq 1 300); do
    grep -q "^resuming: " "$2" && break
    sleep 0.05
  done
  for _ in $(seq 1 300); do
    if $py - "$work/ck.h5" "$1" 2> /dev/null <<'PY'; then break; fi
import sys, h5py
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["trials"][:]
started = t["datetime_start"] >= float(sys.argv[2])
sys.exit(0 if any((t["state"] == b"RUNNING") & started & (t["checkpoint_step"] > t["resumed_from"].clip(0))) else 1)
PY
    sleep 0.05
  done
  sleep "$(awk -v s="$RANDOM" 'BEGIN {srand(s); printf "%.2f", 0.4 * rand()}')"
}

# A run with a 1.5 s time budget first: the work (8 trials of about 2 s on 2 workers) is longer, so
# it ends with trials INTERRUPTED by the budget, most of them after a checkpoint.
"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/ck.yaml" --set study.time_budget=1500ms \
  --progress lines > budget.log 2>&1 || fail "the budgeted run exited $?: $(ended budget.log)"
grep -q "time budget of 1.5s reached" budget.log || fail "no budget message: $(cat budget.log)"
grep -q "INTERRUPTED" budget.log || fail "the budget interrupted no trial: $(cat budget.log)"
wait_gone "the budgeted run"
stops=1
for i in $(seq 1 "$kills"); do
  t0=$(date +%s.%N)
  "${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/ck.yaml" --resume --progress lines > "run$i.log" 2>&1 &
  job=$!
  wait_checkpoint "$t0" "run$i.log"
  kill -0 $job 2> /dev/null || fail "run $i ended before its kill: $(tail -3 "run$i.log")"
  # shellcheck disable=SC2046
  kill -KILL $(job_pids ck.yaml) 2> /dev/null || true
  wait $job 2> /dev/null || true
  wait_gone "kill $i"
  stops=$((stops + 1))
done
# The graceful run adds trials, so it has work left however far the kills got (on a loaded machine
# they once left it nothing to do: it ended before clean and SIGUSR1 could find it running).
n_trials=$((n_trials + 4))
t0=$(date +%s.%N)
"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" run "$work/ck.yaml" --resume --set study.n_trials=$n_trials \
  --progress lines > graceful.log 2>&1 &
job=$!
wait_checkpoint "$t0" graceful.log
code=0
"$bin/cleansweep" clean "$work/ck.h5" > busy.txt 2>&1 || code=$?
[ "$code" = 2 ] && grep -q "in use by cleansweep" busy.txt || fail "clean while a sweep runs: status $code, $(cat busy.txt)"
kill -USR1 $job
code=0
wait $job || code=$?
[ "$code" = 3 ] || fail "exit status $code after SIGUSR1, expected 3: $(ended graceful.log)"
stops=$((stops + 1))
"${mpi[@]}" -np $((workers + 1)) "$bin/cleansweep" resume "$work/ck.h5" --progress lines > final.log 2>&1 ||
  fail "final resume exited $?: $(ended final.log)"
wait_gone "the end"
grep -q "go on from their checkpoints" run*.log graceful.log final.log ||
  fail "no resume said trials go on from their checkpoints: $(grep -h resuming run*.log graceful.log final.log)"

SRC=$src $py - "$work/ck.h5" "$work/ck.trials" "$n_trials" "$steps" "$stops" "$workers" "$gpus" <<'PY'
import glob, json, os, re, sys, h5py, pandas as pd
path, trials_dir = sys.argv[1], sys.argv[2]
n_trials, steps, stops, workers, gpus = (int(a) for a in sys.argv[3:])
with h5py.File(path, "r", swmr=True) as f:
    t = pd.DataFrame(f["trials"][:])
    inter = pd.DataFrame(f["intermediate"][:])
    attempts = pd.DataFrame(f["attempts"][:])
t["state"] = t["state"].str.decode("utf-8")
assert t["number"].is_unique
done = t[t["state"] == "COMPLETE"]
assert len(done) == n_trials and (t["state"].isin(["COMPLETE", "INTERRUPTED"])).all(), t[["number", "state"]]
for _, r in done.iterrows():
    expected = r["param_x"] * steps * (steps + 1) / 2
    assert abs(r["value"] - expected) < 1e-9, "trial %d: %r, expected %r (a step lost or counted twice)" % (r["number"], r["value"], expected)
    got = sorted(inter[inter["trial"] == r["number"]]["step"])
    assert got == list(range(1, steps + 1)), "trial %d reported steps %s" % (r["number"], got)
    assert r["checkpoint_step"] == steps and r["last_step"] == steps, r
if gpus > 1:  # every attempt ran as a whole gang: its size, its workers, every rank's log
    for _, r in done.iterrows():
        ranks = r["workers"].decode().rstrip("\0")
        assert r["gpus"] == gpus and re.fullmatch(r"\d+(-\d+|(,\d+)+)", ranks), (r["number"], r["gpus"], ranks)
        folder = os.path.join(trials_dir, str(r["number"]))
        assert all(os.path.exists(os.path.join(folder, "log.rank-%d.txt" % k)) for k in range(1, gpus)), os.listdir(folder)
        if r["attempt"] > 1 and r["retry_of"] < 0:
            # It went on in its folder: rank 1's reports of the attempts before were kept beside the
            # new ones (reports.rank-1.attempt-K.jsonl), so together they hold every step but those
            # a kill caught on their way (at most one per attempt).
            seen = set()
            for name in glob.glob(os.path.join(folder, "reports.rank-1*.jsonl")):
                seen |= {line["step"] for line in map(json.loads, open(name)) if "value" in line}
            lost = sorted(set(range(1, steps + 1)) - seen)
            assert len(lost) < r["attempt"], "trial %d: rank 1's reports of steps %s are gone (%s)" % (r["number"], lost, os.listdir(folder))
continued = done[done["attempt"] > 1]
continued = continued[continued["retry_of"] < 0]
assert len(continued) > 0, "no trial went on from a checkpoint: nothing was tested"
for _, r in done.iterrows():
    mine = attempts[attempts["trial"] == r["number"]].sort_values("attempt")
    chain = [(a["attempt"], a["resumed_from"], a["checkpoint_step"]) for _, a in mine.iterrows()]
    chain.append((r["attempt"], r["resumed_from"], r["checkpoint_step"]))
    first = 1 if r["retry_of"] < 0 else int(t[t["number"] == r["retry_of"]]["attempt"].iloc[0]) + 1
    assert [a for a, _, _ in chain] == list(range(first, r["attempt"] + 1)), "trial %d: attempts %s" % (r["number"], chain)
    assert chain[0][1] == -1, "trial %d: its first attempt resumed from %d" % (r["number"], chain[0][1])
    for before, after in zip(chain, chain[1:]):
        assert after[1] == before[2] >= 0, "trial %d: attempt %d resumed from %d, the one before declared %d" % (r["number"], after[0], after[1], before[2])
    # checkpoint_keep: last. An older one stays only when the job was killed between the flush that
    # recorded the trial's last checkpoint and the worker's removal of the one before.
    kept = sorted(os.listdir(os.path.join(trials_dir, str(r["number"]), "checkpoints")))
    assert "step-%d.json" % steps in kept and len(kept) <= 2, "trial %d keeps %s" % (r["number"], kept)
executed = sum(len(open(p).read().splitlines()) for p in glob.glob(os.path.join(trials_dir, "*", "executed.txt")))
needed = n_trials * steps
redone = executed - needed
running = workers // gpus  # trials at once
print("%d trials, %d went on from checkpoints (%d earlier attempts); executed %d steps for %d needed: %d redone over %d stops of %d trials at once"
      % (len(done), len(continued), len(attempts), executed, needed, redone, stops, running))
assert 0 <= redone <= stops * running, "more than one step per running trial and stop was computed again"

# The pandas loader sees the same: the columns, and the earlier attempts.
sys.path.insert(0, os.path.join(os.environ["SRC"], "python"))
from cleansweep_study import load_study
study = load_study(path)
assert len(study.attempts) == len(attempts) and set(study.attempts["state"]) <= {"INTERRUPTED"}, study.attempts
assert (study.trials.loc[continued["number"], "resumed_from"] >= 0).all()
PY

# A finished study drops its checkpoints; a running sweep's lock keeps `clean` out. The trials with
# checkpoints are the COMPLETE ones and any that a kill caught after it wrote its first checkpoint
# but before the file recorded it (it ran again from the start under a new number).
holders=$(find "$work/ck.trials" -path "*/checkpoints/*" -type f | sed 's|/checkpoints/.*||' | sort -u | wc -l)
[ "$holders" -ge "$n_trials" ] || fail "only $holders trial folders hold checkpoints before clean"
"$bin/cleansweep" clean "$work/ck.h5" > clean.txt || fail "clean exited $?: $(cat clean.txt)"
grep -q "^removed [0-9]* checkpoints of $holders trials" clean.txt || fail "clean said: $(cat clean.txt) ($holders trial folders held checkpoints)"
left=$(find "$work/ck.trials" -path "*/checkpoints/*" | wc -l)
[ "$left" = 0 ] || fail "$left checkpoint files left after clean"
echo "PASS"
