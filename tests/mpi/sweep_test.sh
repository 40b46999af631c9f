#!/bin/bash
# End-to-end sweeps through real MPI: `sweep_test.sh SCENARIO BIN_DIR SOURCE_DIR`.
# Each scenario starts cleansweep under mpirun and checks its exit status, output and study file.
set -euo pipefail
scenario=$1 bin=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers often forbid the CMA ptrace path

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() {  # expect_exit STATUS COMMAND...: runs it with stdout in out.txt, stderr in err.txt
  local want=$1 code=0
  shift
  "$@" > out.txt 2> err.txt || code=$?
  [ "$code" = "$want" ] || fail "exit status $code, expected $want: $(cat err.txt)"
}

toy_config() {  # toy_config NAME N_TRIALS SAMPLER MODES [EXTRA_SPACE]
  cat > "$1.yaml" <<YAML
study: {name: $1, direction: maximize, n_trials: $2, storage: $work/$1.h5}
sampler: $3
trial: {command: ["$bin/toy_trial"], timeout: 30s, kill_grace: 1s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  opt: {type: categorical, choices: [a, b]}
  mode: {type: categorical, choices: [$4]}
${5:-}
YAML
}

case $scenario in
  np3)  # mixed outcomes, 1 coordinator + 2 workers
    toy_config np3 40 "{kind: random, seed: 5}" "ok, fail, crash, noreport, oom"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run np3.yaml > out.txt || fail "run exited $?"
    grep -q "study file: $work/np3.h5" out.txt || fail "no closing line"
    [ "$(grep -c '^\[..*/40\] trial ' out.txt)" = 40 ] || fail "expected one progress line per trial"
    /usr/bin/python3 "$src/tests/mpi/check_study.py" np3.h5 40 2
    "$bin/cleansweep" show np3.h5 > show.txt
    grep -q "40 of 40 trials finished" show.txt || fail "show: $(cat show.txt)"
    grep -q "^best: trial" show.txt || fail "show has no best trial"
    # 40 trials on 2 workers: every trial but each worker's first has an idle gap before it.
    grep -q "^idle gap between trials on a worker: median [0-9.]* ms, p95 [0-9.]* ms (38 gaps)$" show.txt ||
      fail "show has no idle gap line for 38 gaps: $(cat show.txt)"
    "$bin/cleansweep" export np3.h5 --format csv -o np3.csv
    /usr/bin/python3 - <<PY
import pandas as pd
df = pd.read_csv("np3.csv")
assert len(df) == 40 and list(df.columns[:4]) == ["number", "state", "value", "param_x"], df.columns
assert "attr_mode" in df.columns and "attr_twice" in df.columns
# What each trial cost: CPU time measured, no GPU on these workers, so no GPU time and no energy.
assert df.cpu_seconds.notna().all() and (df.cpu_seconds >= 0).all(), df.cpu_seconds
assert (df.gpu_seconds == 0).all() and df.energy_j.isna().all()
PY
    grep -q "^cost of the trials: [0-9.]* CPU-hours, 0.00 GPU-hours$" show.txt || fail "show has no cost line: $(cat show.txt)"
    # The failed trials' reasons, the latest five, each with its log: the run's last line sends a
    # user whose trials all fail to show for them.
    /usr/bin/python3 - "$work" <<'PY'
import os, sys, h5py
work = sys.argv[1]
with h5py.File(f"{work}/np3.h5", "r", swmr=True) as f:
    t = f["trials"][:]
failed = sorted((r for r in t if r["state"].rstrip(b"\0") in (b"FAIL", b"CRASH", b"OOM_GPU", b"OOM_HOST", b"TIMEOUT")),
                key=lambda r: r["datetime_end"])
assert len(failed) > 5, len(failed)
lines = open(f"{work}/show.txt").read().splitlines()
head = lines.index("failed trials, the latest 5 of %d (every reason: cleansweep export np3.h5):" % len(failed))
for r, line in zip(failed[-5:], lines[head + 1:head + 6]):
    n = int(r["number"])
    want = "  trial %d %s: %s (log: %s/np3.trials/%d/log.txt)" % (n, r["state"].rstrip(b"\0").decode(), r["reason"].decode(), work, n)
    assert line == want, (line, want)
PY
    ;;
  np4)  # grid with a conditional parameter, 1 coordinator + 3 workers
    toy_config np4 100 "{kind: grid, seed: 2}" "ok" "  s: {type: float, low: 0.0, high: 1.0, grid: [0.1, 0.2], when: {opt: b}}
  x2: {type: float, low: 0.1, high: 0.5, grid_points: 3}"
    sed -i 's/n: {type: int, low: 1, high: 8}/n: {type: int, low: 1, high: 3}/' np4.yaml
    # x has no grid values: the grid sampler must refuse before anything starts
    expect_exit 2 "${mpi[@]}" -np 4 "$bin/cleansweep" run np4.yaml
    grep -q "np4.yaml:5: space.x: the grid sampler needs" err.txt || fail "message: $(cat err.txt)"
    # 3 n x (a + b with 2 s) x 3 x2 = 27 points
    sed -i 's/x: {type: float, low: 0.0, high: 1.0}/x: {type: float, low: 0.0, high: 1.0, grid: [0.3]}/' np4.yaml
    rm -f np4.h5
    "${mpi[@]}" -np 4 "$bin/cleansweep" run np4.yaml > out.txt || fail "run exited $?"
    /usr/bin/python3 "$src/tests/mpi/check_study.py" np4.h5 27 3 --grid
    ;;
  tpe)  # TPE end to end: model-based suggestions, enqueued first trial, sampler time recorded
    toy_config tpe 30 "{kind: tpe, seed: 3, n_startup_trials: 6}" "ok" "enqueue:
  - {x: 0.3, n: 4, opt: b}"
    "${mpi[@]}" -np 4 "$bin/cleansweep" run tpe.yaml > out.txt || fail "run exited $?"
    /usr/bin/python3 "$src/tests/mpi/check_study.py" tpe.h5 30 3
    /usr/bin/python3 - <<PY
import h5py
with h5py.File("$work/tpe.h5", "r") as f:
    t = f["trials"][:]
first = t[t["number"] == 0][0]
assert first["enqueued"] == 1 and first["param_x"] == 0.3 and first["param_n"] == 4, first
assert (t["enqueued"] == 1).sum() == 1
assert (t["sampler_ms"] >= 0).all()
# Model-based trials do better on average than the random start-up trials (1..6) did. Which
# trials run in parallel varies from run to run, so this compares averages, not positions.
startup, late = t[(t["number"] >= 1) & (t["number"] <= 6)], t[t["number"] >= 15]
print("tpe sweep: mean value %.3f for start-up trials, %.3f for trials 15-29" % (startup["value"].mean(), late["value"].mean()))
assert late["value"].mean() > startup["value"].mean()
PY
    "$bin/cleansweep" show tpe.h5 | grep -q "sampler time per trial: median .* ms, max .* ms; 1 trials from enqueue" ||
      fail "show: $("$bin/cleansweep" show tpe.h5)"
    ;;
  asha|median)  # pruning end to end: one worker, so the decisions can be replayed exactly here
    if [ $scenario = asha ]; then
      pruner="{kind: asha, min_resource: 1, max_resource: 9, reduction_factor: 3}"
    else
      pruner="{kind: median, n_startup_trials: 2}"
    fi
    cat > prune.yaml <<YAML
study: {name: prune, direction: maximize, n_trials: 9, storage: $work/prune.h5}
sampler: {kind: grid, seed: 4}
pruner: $pruner
trial: {command: ["$bin/toy_trial"], timeout: 60s}
space:
  mode: curve
  steps: 9
  step_sleep: 0.3  # a prune decision arrives well within a step, even on a loaded machine
  q: {type: float, low: 0.1, high: 0.9, grid: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]}
YAML
    "${mpi[@]}" -np 2 "$bin/cleansweep" run prune.yaml > out.txt || fail "run exited $?"
    /usr/bin/python3 - $scenario <<PY
import sys, h5py, statistics
kind = sys.argv[1]
with h5py.File("$work/prune.h5", "r") as f:
    t = sorted(f["trials"][:], key=lambda r: r["number"])
    steps = f["intermediate"][:]
# Replay: trials ran one after another in number order; curve value q * s / 9 at steps 1..9.
curves, expected = {}, {}
for row in t:
    q, n = row["param_q"], row["number"]
    curve, state = {}, "COMPLETE"
    for s in range(1, 10):
        curve[s] = q * s / 9
        done = {m: c for m, c in curves.items() if expected[m][0] == "COMPLETE"}
        if kind == "median":
            at = [c[s] for c in done.values() if s in c]
            if len(done) >= 2 and at and max(curve.values()) < statistics.median(at):
                state = "PRUNED"
        else:
            for rung_step in (1, 3):  # rung 9 = max_resource prunes nothing
                if s != rung_step:
                    continue
                competing = sorted([c[s] for c in curves.values() if s in c] + [curve[s]], reverse=True)
                keep = max(1, len(competing) // 3)
                if curve[s] < competing[keep - 1]:
                    state = "PRUNED"
        if state == "PRUNED":
            break
    curves[n] = curve
    expected[n] = (state, max(curve))
pruned = 0
for row in t:
    n = row["number"]
    state, last = expected[n]
    got = (row["state"].decode(), row["last_step"])
    assert got == (state, last), "trial %d (q=%.1f): got %s, expected %s; %s" % (n, row["param_q"], got, (state, last), row["reason"])
    if state == "PRUNED":
        pruned += 1
        assert abs(row["value"] - row["param_q"] * last / 9) < 1e-12, row["value"]
        assert b"pruned at" in row["reason"], row["reason"]
    mine = sorted(s for tr, s in zip(steps["trial"], steps["step"]) if tr == n)
    assert mine == list(range(1, last + 1)), (n, mine)
assert pruned >= 3, "expected several pruned trials, got %d" % pruned
print("%s: %d of %d trials pruned, each at the step the replay predicts" % (kind, pruned, len(t)))
PY
    ;;
  ignoreprune)  # a trial that ignores the decision is stopped after trial.prune_grace
    cat > ignore.yaml <<YAML
study: {name: ignore, direction: maximize, n_trials: 3, storage: $work/ignore.h5}
sampler: {kind: grid}
pruner: {kind: asha, min_resource: 1, reduction_factor: 3}
trial: {command: ["$bin/toy_trial"], timeout: 60s, prune_grace: 1s, kill_grace: 1s}
space:
  mode: ignoreprune
  steps: 30
  step_sleep: 0.2
  q: {type: float, low: 0.1, high: 0.9, grid: [0.9, 0.8, 0.1]}
YAML
    sed -i 's/sampler: {kind: grid}/sampler: {kind: grid, seed: 1}/' ignore.yaml
    "${mpi[@]}" -np 2 "$bin/cleansweep" run ignore.yaml > out.txt || fail "run exited $?"
    /usr/bin/python3 - <<PY
import h5py
with h5py.File("$work/ignore.h5", "r") as f:
    t = f["trials"][:]
pruned = [r for r in t if r["state"] == b"PRUNED"]
assert pruned, [(r["state"], r["reason"]) for r in t]
for r in pruned:
    assert b"did not stop within the prune grace" in r["reason"], r["reason"]
    assert r["signal"] == 15, r["signal"]  # SIGTERM after the grace
    assert r["duration"] < 4.0, r["duration"]  # 30 steps would take 6 s
print("ignoreprune: %d trial(s) stopped after the grace" % len(pruned))
PY
    ;;
  timeout)  # trials that hang are killed at their timeout, grandchildren included
    toy_config timeout 3 "{kind: random}" "hang"
    sed -i 's/timeout: 30s/timeout: 1s/' timeout.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run timeout.yaml > out.txt || fail "run exited $?"
    /usr/bin/python3 "$src/tests/mpi/check_study.py" timeout.h5 3 2
    ;;
  forkserver)  # trial.launcher forkserver: the toy trial's plugin build, every outcome classified as when spawned
    cp "$bin/../lib/toy_plugin.so" "$work/toy_plugin.so"  # a path of our own, to find our servers by
    toy_config fork 40 "{kind: random, seed: 5}" "ok, fail, crash, noreport, oom"
    sed -i "s|trial: {command: \[\"$bin/toy_trial\"\]|trial: {launcher: forkserver, command: [\"$work/toy_plugin.so\"]|" fork.yaml
    grep -q "launcher: forkserver" fork.yaml || fail "the config was not rewritten"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run fork.yaml > out.txt || fail "run exited $?"
    grep -q "trials forked by a fork server from $work/toy_plugin.so" out.txt || fail "no launcher line: $(head -5 out.txt)"
    /usr/bin/python3 "$src/tests/mpi/check_study.py" fork.h5 40 2
    ! pgrep -f "cleansweep-forkserver --socket 3 $work/toy_plugin.so" > /dev/null || fail "a fork server outlived its worker"
    # Processes started by prepare() (one in the server's group, one in a session of its own) die
    # with the servers: the job ends, nothing of them is left.
    sed -i "s|storage: $work/fork.h5|storage: $work/helpers.h5|; s|n_trials: 40|n_trials: 6|" fork.yaml
    TOY_PREPARE_CHILDREN=$work/prepare_pids.txt timeout 120 "${mpi[@]}" -np 3 "$bin/cleansweep" run fork.yaml > out.txt 2>&1 ||
      fail "the sweep with prepare() helpers exited $? (124: it never returned): $(tail -5 out.txt)"
    [ "$(wc -l < prepare_pids.txt)" = 4 ] || fail "expected 2 helpers per server: $(cat prepare_pids.txt)"
    for pid in $(cat prepare_pids.txt); do
      if [ -e "/proc/$pid" ] && [ "$(awk '{print $3}' "/proc/$pid/stat")" != Z ]; then fail "prepare() helper $pid outlived the job"; fi
    done
    sed -i "s|storage: $work/helpers.h5|storage: $work/fork.h5|; s|n_trials: 6|n_trials: 40|" fork.yaml
    # A file that is no plugin: every worker refuses it at setup, with the reason; nothing runs.
    echo "not a shared library" > "$work/bogus.so"
    sed -i "s|$work/toy_plugin.so|$work/bogus.so|; s|storage: $work/fork.h5|storage: $work/bogus.h5|" fork.yaml
    expect_exit 2 timeout 60 "${mpi[@]}" -np 3 "$bin/cleansweep" run fork.yaml
    grep -q "could not load $work/bogus.so: cannot load the plugin: .*bogus.so" err.txt || fail "message: $(cat err.txt)"
    ! pgrep -f "cleansweep-forkserver --socket 3 $work/bogus.so" > /dev/null || fail "a fork server was left running"
    [ ! -e bogus.h5 ] || fail "a study file was left behind"
    # Fork servers killed (SIGKILL) twice while trials run: running trials finish, workers start
    # new servers, every trial is recorded.
    sed -i "s|$work/bogus.so|$work/toy_plugin.so|; s|storage: $work/bogus.h5|storage: $work/killed.h5|; s|n_trials: 40|n_trials: 30|; s|choices: \[ok, fail, crash, noreport, oom\]|choices: [curve]|" fork.yaml
    printf '  steps: 5\n  step_sleep: 0.05\n  q: 0.5\n' >> fork.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run fork.yaml > out.txt 2> err.txt &
    run=$!
    # signal_servers SIGNAL: to every fork server of ours. A trial just forked shows the server's
    # command line until it renames itself (within microseconds): only what still shows it a
    # moment later is a server.
    signal_servers() {
      local servers pid
      servers=$(pgrep -f "cleansweep-forkserver --socket 3 $work/toy_plugin.so") || fail "no fork server to signal"
      sleep 0.2
      for pid in $servers; do
        if grep -q "cleansweep-forkserver" "/proc/$pid/cmdline" 2> /dev/null; then kill "-$1" "$pid"; fi
      done
    }
    for _ in 1 2; do
      sleep 1.2
      signal_servers KILL
    done
    wait $run || fail "run exited $? after its fork servers were killed: $(cat err.txt)"
    grep -q "the fork server (pid [0-9]*, $work/toy_plugin.so) killed by signal 9 (Killed); starting a new one" err.txt ||
      fail "no restart warning: $(cat err.txt)"
    check_killed_study() {
      /usr/bin/python3 - "$1" << 'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    t = f["trials"][:]
states = sorted(set(s.decode() for s in t["state"]))
assert len(t) == 30 and states == ["COMPLETE"], (len(t), states, [r.decode()[:80] for r in t["reason"]])
assert all(abs(v - 0.5) < 1e-9 for v in t["value"]), t["value"]
PY
    }
    check_killed_study "$work/killed.h5" || fail "the study after the servers were killed"
    # Servers stopped (SIGSTOP) while trials run: each is noticed at the next trial's start and
    # replaced at once; the trial runs on the new one within its 5 s timeout, nothing is lost.
    sed -i "s|storage: $work/killed.h5|storage: $work/stopped.h5|; s|timeout: [0-9a-z]*|timeout: 5s|" fork.yaml
    grep -q "timeout: 5s" fork.yaml || fail "no trial timeout to rewrite: $(cat fork.yaml)"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run fork.yaml > out.txt 2> err.txt &
    run=$!
    sleep 1.2
    signal_servers STOP
    timeout 120 tail --pid=$run -f /dev/null || fail "the sweep hangs on its stopped fork servers"
    wait $run || fail "run exited $? with stopped fork servers: $(cat err.txt)"
    grep -q "the fork server (pid [0-9]*, $work/toy_plugin.so) is stopped (SIGSTOP or SIGTSTP), killed; starting a new one" err.txt ||
      fail "no warning for the stopped server: $(cat err.txt)"
    check_killed_study "$work/stopped.h5" || fail "the study after the servers were stopped"
    ;;
  one_rank)  # a single rank explains how to start it
    toy_config one 2 "{kind: random}" "ok"
    expect_exit 2 "${mpi[@]}" -np 1 "$bin/cleansweep" run one.yaml
    grep -q "needs at least 2 MPI ranks" err.txt || fail "message: $(cat err.txt)"
    grep -q "mpirun -np 3 cleansweep run one.yaml" err.txt || fail "no example command"
    [ ! -e one.h5 ] || fail "a study file was created"
    ;;
  bad_config)  # invalid input: exit 2, a file:line message, no study file, every rank gone
    toy_config bad 2 "{kind: random}" "ok"
    sed -i 's/low: 0.0, high: 1.0}/low: 1.0, high: 0.0}/' bad.yaml
    expect_exit 2 timeout 60 "${mpi[@]}" -np 3 "$bin/cleansweep" run bad.yaml
    grep -q "bad.yaml:5:25: space.x.low: low must be below high" err.txt || fail "message: $(cat err.txt)"
    [ ! -e bad.h5 ] || fail "a study file was created"
    ;;
  existing)  # a second run of the same study refuses to touch the first one's file
    toy_config again 2 "{kind: random}" "ok"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run again.yaml > out.txt || fail "first run exited $?"
    before=$(md5sum again.h5)
    expect_exit 2 "${mpi[@]}" -np 3 "$bin/cleansweep" run again.yaml
    grep -q "already exists" err.txt || fail "message: $(cat err.txt)"
    [ "$(md5sum again.h5)" = "$before" ] || fail "the existing study file changed"
    ;;
  idle_cpu)  # no busy waiting: CPU used by the coordinator and workers while trials sleep
    # Spawned trials, then forked ones with trial.prefork: each worker also holds a standby child
    # waiting for the next trial (issue 19), which must cost nothing either.
    for launcher in spawn forkserver; do
      toy_config idle 2 "{kind: random}" "ok" "  sleep: 8"
      if [ "$launcher" = forkserver ]; then
        sed -i "s#command: \[\"$bin/toy_trial\"\]#launcher: forkserver, command: [\"$bin/../lib/toy_plugin.so\"]#" idle.yaml
        grep -q "launcher: forkserver" idle.yaml || fail "could not make the fork-server config"
      fi
      rm -f idle.h5
      "${mpi[@]}" -np 3 "$bin/cleansweep" run idle.yaml > out.txt &
      job=$!
      sleep 2.5  # set-up done, both trials asleep
      # Only this sweep's ranks (children of its mpirun): other sweeps on a shared machine do not count.
      ranks() { pgrep -P "$job" -x cleansweep; }
      standbys() { for p in $(ranks); do pgrep -P "$p" -x cs-standby || true; done; }
      ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{s += $1} END {print s + 0}'; }
      nprocs=$(ranks | wc -l)
      waiting=$(standbys)
      t0=$(ticks $(ranks)); w0=$(ticks $waiting); s0=$(date +%s.%N)
      sleep 4
      t1=$(ticks $(ranks)); w1=$(ticks $waiting); s1=$(date +%s.%N)
      wait $job || fail "$launcher: run failed"
      hz=$(getconf CLK_TCK)
      pct() { awk -v d="$1" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v n="$2" 'BEGIN {printf "%.2f", 100 * d / hz / (s1 - s0) / n}'; }
      pct_ranks=$(pct $((t1 - t0)) "$nprocs")
      echo "$launcher: cleansweep processes: $nprocs, mean CPU per process while trials run: ${pct_ranks}% of a core"
      [ "$nprocs" = 3 ] || fail "$launcher: expected 3 cleansweep processes, saw $nprocs"
      awk -v p="$pct_ranks" 'BEGIN {exit !(p < 2)}' || fail "$launcher: busy waiting: ${pct_ranks}% of a core per process"
      if [ "$launcher" = forkserver ]; then
        nwaiting=$(echo $waiting | wc -w)
        [ "$nwaiting" = 2 ] || fail "expected a standby child on each of the 2 workers, saw $nwaiting"
        pct_waiting=$(pct $((w1 - w0)) "$nwaiting")
        echo "$launcher: standby children: $nwaiting, mean CPU each while they wait: ${pct_waiting}% of a core"
        awk -v p="$pct_waiting" 'BEGIN {exit !(p < 2)}' || fail "a waiting standby used ${pct_waiting}% of a core"
        for p in $waiting; do [ ! -e "/proc/$p" ] || fail "standby $p outlived the sweep"; done
      fi
    done
    ;;
  python)  # a Python trial script through the helper
    cp -r "$src/python" .
    sed "s#storage: results/python-example.h5#storage: $work/py.h5#" "$src/configs/python_example.yaml" > py.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run py.yaml --set study.n_trials=6 > out.txt || fail "run exited $?"
    /usr/bin/python3 - <<PY
import h5py, json
with h5py.File("$work/py.h5", "r") as f:
    t = f["trials"][:]
    inter = f["intermediate"][:]
assert len(t) == 6 and all(s == b"COMPLETE" for s in t["state"]), t["state"]
for row in t:
    expected = (1 + 1 / row["param_steps"]) * ((row["param_x"] - 1) ** 2 + (row["param_y"] + 2) ** 2 + (0.5 if row["param_shape"] == b"saddle" else 0))
    assert abs(row["value"] - expected) < 1e-9, (row["value"], expected)
    assert json.loads(row["attrs"])["shape"] == row["param_shape"].decode()
assert len(inter) == sum(t["param_steps"])
print("python trials ok")
PY
    ;;
  define_by_run)  # an Optuna-style objective: parameters asked as it runs (issue 39), and trials that abuse it
    cp -r "$src/python" .
    cat > obj.py <<'PY'
import os
import signal
import time

import cleansweep_trial as cs


def objective(trial):
    x = trial.suggest_float("x", -5, 5)
    opt = trial.suggest_categorical("opt", ["adam", "sgd"])
    loss = (x - 1.5) ** 2
    if opt == "sgd":  # a conditional parameter, as Optuna objectives have them
        loss += (trial.suggest_float("momentum", 0.5, 0.99) - 0.9) ** 2
    assert trial.suggest_float("x", -5, 5) == x  # asked again: the same value
    n = trial.suggest_int("n", 1, 4)  # declared under space:, answered by the worker
    for step in range(n):
        trial.report(loss + 1.0 / (step + 1), step)
    if x > 4.0:
        raise cs.TrialPruned("too far out")
    return loss


def abuse(trial):
    mode = trial.suggest_categorical("mode", ["bounds", "many", "absurd", "flood", "killed", "deaf", "closed", "ok"])
    if mode == "bounds":
        trial.suggest_int("n", 1, 8)  # the config declares [1, 4]
    elif mode == "many":
        for i in range(10000):
            trial.suggest_float("p%d" % i, 0, 1)
    elif mode == "absurd":
        trial.suggest_float("y", -1e308, 1e308)
    elif mode == "flood":
        t = trial._trial  # two requests in one write: the second comes before the first's answer
        ask = '{"suggest": {"name": "%s", "type": "float", "low": 0, "high": 1}}\n'
        t._pipe.write(ask % "a" + ask % "b")
        t._answer("b")
    elif mode == "killed":  # killed with its request in flight: the answer finds nobody
        trial.suggest_float("before", 0, 1)
        trial._trial._pipe.write('{"suggest": {"name": "k", "type": "int", "low": 1, "high": 9}}\n')
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "deaf":  # asks and never reads the answers: its control pipe fills
        for _ in range(5000):
            trial._trial._pipe.write('{"suggest": {"name": "n", "type": "int", "low": 1, "high": 4}}\n')
        time.sleep(60)
    elif mode == "closed":  # asks, closes its control pipe and lives on: nobody can answer it
        for fd in {trial._trial._control, int(os.environ["CLEANSWEEP_CONTROL_FD"])}:
            try:
                os.close(fd)
            except OSError:
                pass
        trial._trial._pipe.write('{"suggest": {"name": "c", "type": "float", "low": 0, "high": 1}}\n')
        time.sleep(60)
    return 1.0
PY
    cat > dbr.yaml <<YAML
study: {name: dbr, direction: minimize, n_trials: 14, storage: $work/dbr.h5}
sampler: {kind: tpe, seed: 2, n_startup_trials: 4}
trial: {objective: "obj.py:objective", timeout: 60s}
space:
  n: {type: int, low: 1, high: 4}
YAML
    "$bin/cleansweep" validate dbr.yaml > v.txt || fail "validate exited $?"
    grep -q "the trial may define more as it runs" v.txt || fail "validate: $(cat v.txt)"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run dbr.yaml > out.txt || fail "run exited $?: $(cat out.txt)"
    /usr/bin/python3 - <<PY || fail "define-by-run study: $(cat out.txt)"
import h5py, json
with h5py.File("$work/dbr.h5", "r", swmr=True) as f:
    t = f["trials"][:]
    p = f["params"][:]
assert len(t) == 14, len(t)
assert "param_x" not in t.dtype.names  # /trials holds the declared parameters; /params the trial's own
byname = {}
for row in p:
    key = (int(row["trial"]), row["name"].rstrip(b"\0").decode())
    assert key not in byname, ("recorded twice", key)
    byname[key] = (json.loads(row["value_json"].rstrip(b"\0")), json.loads(row["distribution"].rstrip(b"\0")))
for row in t:
    n = int(row["number"])
    state = row["state"].rstrip(b"\0").decode()
    x, dist = byname[(n, "x")]
    assert dist == {"type": "float", "low": -5.0, "high": 5.0, "log": False}, dist
    opt = byname[(n, "opt")][0]
    assert ((n, "momentum") in byname) == (opt == "sgd"), (n, opt)
    loss = (x - 1.5) ** 2 + ((byname[(n, "momentum")][0] - 0.9) ** 2 if opt == "sgd" else 0)
    assert (n, "n") not in byname  # declared: in its column, not in /params
    if x > 4.0:
        assert state == "PRUNED" and "too far out" in row["reason"].decode(), (state, row["reason"])
    else:
        assert state == "COMPLETE" and abs(row["value"] - loss) < 1e-9, (state, row["value"], loss, row["reason"])
print("define-by-run ok")
PY
    # the run's summary counts what rank 0 answered: one line per parameter recorded in /params
    asked=$(sed -n 's/^suggest: \([0-9]*\) requests for a parameter answered by rank 0 .*median [0-9.]* ms, p99 [0-9.]* ms each$/\1/p' out.txt)
    rows=$(/usr/bin/python3 -c "import h5py; print(len(h5py.File('$work/dbr.h5', 'r', swmr=True)['params']))")
    [ -n "$asked" ] && [ "$asked" = "$rows" ] || fail "suggest line says '$asked', /params holds $rows: $(cat out.txt)"
    "$bin/cleansweep" export "$work/dbr.h5" --format csv > dbr.csv || fail "export exited $?"
    head -1 dbr.csv | grep -q ",param_n,param_x,param_opt," || fail "export lacks the trial's parameters: $(head -1 dbr.csv)"
    PYTHONPATH=python /usr/bin/python3 -c "
import cleansweep_study as s
t = s.load_study('$work/dbr.h5').trials
assert t['param_x'].notna().all() and t['param_opt'].isin(['adam', 'sgd']).all(), t
assert (t['param_momentum'].notna() == (t['param_opt'] == 'sgd')).all(), t[['param_opt', 'param_momentum']]
" || fail "load_study lacks the trial's parameters"
    # kill -9 of the whole job while trials hold asked values: the resume re-runs the cut-off
    # trials with the values they were given, and no (trial, name) is recorded twice.
    cat > slow.py <<'PY'
import os, time


def objective(trial):
    x = trial.suggest_float("x", 0, 1)
    k = trial.suggest_int("k", 1, 100)
    if os.environ["CLEANSWEEP_ATTEMPT"] == "1" and trial.number < 2:
        time.sleep(60)  # the first two trials are cut off here
    return x + k
PY
    cat > slow.yaml <<YAML
study: {name: slow, n_trials: 4, storage: $work/slow.h5}
sampler: {kind: tpe, seed: 3}
trial: {objective: "slow.py:objective", timeout: 90s}
YAML
    "${mpi[@]}" -np 3 "$bin/cleansweep" run slow.yaml --progress lines > slow.txt 2>&1 &
    for _ in $(seq 300); do
      [ "$(/usr/bin/python3 -c "import h5py; print(len(h5py.File('$work/slow.h5', 'r', swmr=True)['params']))" 2> /dev/null)" = 4 ] && break
      sleep 0.1
    done
    pkill -9 -f "cleansweep run slow.yaml" || fail "no job to kill"
    pkill -9 -f "$work/slow.py" || true
    wait || true
    expect_exit 0 "${mpi[@]}" -np 3 "$bin/cleansweep" resume "$work/slow.h5" --progress lines
    /usr/bin/python3 - <<PY || fail "after kill -9 and resume: $(cat out.txt)"
import json, h5py
with h5py.File("$work/slow.h5", "r", swmr=True) as f:
    t = f["trials"][:]
    p = f["params"][:]
keys = [(int(r["trial"]), r["name"].rstrip(b"\0").decode()) for r in p]
assert len(keys) == len(set(keys)), keys  # nothing recorded twice
value = {k: json.loads(r["value_json"].rstrip(b"\0")) for k, r in zip(keys, p)}
state = {int(r["number"]): r["state"].rstrip(b"\0").decode() for r in t}
retry = {int(r["number"]): int(r["retry_of"]) for r in t}
cut = [n for n, s in state.items() if s == "INTERRUPTED"]
assert sorted(cut) == [0, 1], state
for n, of in retry.items():
    if of >= 0:  # the re-run of a cut-off trial asked again and got what that trial had
        assert state[n] == "COMPLETE" and value[(n, "x")] == value[(of, "x")] and value[(n, "k")] == value[(of, "k")], (n, of)
assert sorted(of for of in retry.values() if of >= 0) == [0, 1], retry
assert sum(1 for s in state.values() if s == "COMPLETE") == 4, state
print("kill -9 and resume ok")
PY
    # kill -9 of the whole job while trials ask as fast as they can: whatever moment it lands
    # (a request on its way, drawn but not flushed, flushed but not answered), the file holds
    # each (trial, name) at most once, and the re-runs get the values their predecessors had.
    cat > storm.py <<'PY'
import time


def objective(trial):
    total = 0.0
    for i in range(300):
        total += trial.suggest_float("p%d" % i, 0, 1)
        if trial.number == 0 and i >= 150:  # the moment to kill: trial 0 half asked, trial 1 asking
            open("half-asked", "w").close()
            time.sleep(0.01)
    return total
PY
    cat > storm.yaml <<YAML
study: {name: storm, n_trials: 8, storage: $work/storm.h5}
sampler: {kind: random, seed: 4}
trial: {objective: "storm.py:objective", timeout: 90s}
YAML
    "${mpi[@]}" -np 3 "$bin/cleansweep" run storm.yaml > storm.txt 2>&1 &
    for _ in $(seq 3000); do [ -e half-asked ] && break; sleep 0.01; done
    pkill -9 -f "cleansweep run storm.yaml" || fail "no storm job to kill"
    pkill -9 -f "$work/storm.py" || true
    wait || true
    expect_exit 0 "${mpi[@]}" -np 3 "$bin/cleansweep" resume "$work/storm.h5"
    /usr/bin/python3 - <<PY || fail "after kill -9 mid-suggest and resume: $(cat out.txt)"
import collections, json, h5py
with h5py.File("$work/storm.h5", "r", swmr=True) as f:
    t = f["trials"][:]
    p = f["params"][:]
keys = [(int(r["trial"]), r["name"].rstrip(b"\0").decode()) for r in p]
assert len(keys) == len(set(keys)), [k for k, n in collections.Counter(keys).items() if n > 1][:5]
value = {k: json.loads(r["value_json"].rstrip(b"\0")) for k, r in zip(keys, p)}
names = collections.defaultdict(set)
for n, name in keys:
    names[n].add(name)
state = {int(r["number"]): r["state"].rstrip(b"\0").decode() for r in t}
assert "RUNNING" not in state.values(), state
assert sum(1 for s in state.values() if s == "COMPLETE") == 8, state
for r in t:
    n, of = int(r["number"]), int(r["retry_of"])
    if state[n] == "COMPLETE":
        assert len(names[n]) == 300 and abs(r["value"] - sum(value[(n, m)] for m in names[n])) < 1e-6, n
    if of >= 0:  # what the cut-off trial was given, its re-run was given again
        assert all(value[(n, m)] == value[(of, m)] for m in names[of]), (n, of)
# the kill landed while trials were asking: one holds part of its parameters
assert state[0] == "INTERRUPTED" and 150 < len(names[0]) < 300, (state, len(names[0]))
print("kill -9 mid-suggest ok")
PY
    # Trials that abuse the protocol fail, each saying why; the sweep and its workers go on.
    cat > abuse.yaml <<YAML
study: {name: abuse, n_trials: 8, storage: $work/abuse.h5}
sampler: {kind: random, seed: 1}
trial: {objective: "obj.py:abuse", timeout: 60s}
space:
  n: {type: int, low: 1, high: 4}
  mode: {type: categorical, choices: [bounds, many, absurd, flood, killed, deaf, closed, ok]}
enqueue: [{mode: bounds}, {mode: many}, {mode: absurd}, {mode: flood}, {mode: killed}, {mode: deaf}, {mode: closed},
          {mode: ok}]
YAML
    "${mpi[@]}" -np 2 "$bin/cleansweep" run abuse.yaml > out.txt || fail "abuse run exited $?: $(cat out.txt)"
    /usr/bin/python3 - <<PY || fail "abusive trials: $(cat out.txt)"
import h5py, json
with h5py.File("$work/abuse.h5", "r", swmr=True) as f:
    t = f["trials"][:]
    p = f["params"][:]
mode = {int(r["number"]): r["param_mode"].rstrip(b"\\0").decode() for r in t}
want = {"bounds": "the config's space: declares it as int in [1, 4]", "many": "more than 1000 parameters",
        "absurd": "beyond +-2^53", "flood": "before the answer for 'a' came",
        "deaf": "full of answers the trial never read",
        "closed": "closed its control pipe (CLEANSWEEP_CONTROL_FD) with its request for 'c' unanswered", "ok": ""}
seen = set()
for row in t:
    m = mode[int(row["number"])]
    seen.add(m)
    state, reason = row["state"].rstrip(b"\0").decode(), row["reason"].decode()
    if m == "ok":
        assert state == "COMPLETE", (m, state, reason)
    elif m == "killed":
        assert state == "OOM_HOST" and "SIGKILL" in reason, (m, state, reason)  # a SIGKILL not ours
    else:
        assert state == "FAIL" and want[m] in reason, (m, state, reason)
assert seen == set(want) | {"killed"}, seen
# The killed trial's parameters: the one it was answered, and the one in flight either not
# recorded or recorded whole (value and distribution) if rank 0 drew it first; never twice.
killed = [int(r["number"]) for r in t if mode[int(r["number"])] == "killed"][0]
mine = {r["name"].rstrip(b"\0").decode(): r for r in p if int(r["trial"]) == killed}
assert "before" in mine and set(mine) <= {"before", "k"}, sorted(mine)
assert len([r for r in p if int(r["trial"]) == killed]) == len(mine)
if "k" in mine:
    assert 1 <= json.loads(mine["k"]["value_json"].rstrip(b"\0")) <= 9
    assert json.loads(mine["k"]["distribution"].rstrip(b"\0"))["high"] == 9
# mode and p0..p998 make 1000 names; the request for p999 was refused and never recorded
assert sum(1 for r in p if r["name"].startswith(b"p")) == 999, sum(1 for r in p if r["name"].startswith(b"p"))
print("abuse ok:", sorted(seen))
PY
    ;;
  sharing)  # shards that share (issue 38): kill -9 of one, a damaged sibling, its resume, joiners racing
    toy_config sw 24 "{kind: tpe, seed: 6, n_startup_trials: 4}" "ok" "  sleep: 0.25"
    sed -i "s|storage: $work/sw.h5}|storage: $work/sw.h5, share_every: 1s}|" sw.yaml
    printf 'not a study file' > sw-shard-5.h5  # a damaged sibling: skipped with one warning
    "${mpi[@]}" -np 2 "$bin/cleansweep" run sw.yaml --shard 0/2 --progress lines > s0.txt 2>&1 &
    "${mpi[@]}" -np 2 "$bin/cleansweep" run sw.yaml --shard 1/2 --progress lines > s1.txt 2>&1 &
    s1=$!
    for _ in $(seq 300); do grep -q "^\[.*\] trial 2 " s0.txt 2>/dev/null && break; sleep 0.1; done
    pkill -9 -f "cleansweep run sw.yaml --shard 0/2" || fail "no shard 0 to kill"
    wait $s1 || fail "shard 1 exited $? after its sibling was killed: $(cat s1.txt)"
    [ "$(grep -c 'sw-shard-5.h5: .*skipped, this shard goes on without it' s1.txt)" = 1 ] ||
      fail "the damaged sibling is not warned about exactly once: $(cat s1.txt)"
    /usr/bin/python3 - <<'PY' || fail "after the kill: $(cat s1.txt)"
import h5py
def rows(path):
    with h5py.File(path, "r", swmr=True) as f:
        return [s.rstrip(b"\0").decode() for s in f["trials"]["state"]]
dead, live = rows("sw-shard-0-of-2.h5"), rows("sw-shard-1-of-2.h5")
done = [s for s in dead if s != "RUNNING"]
assert "RUNNING" in dead and len(done) >= 2, dead
# shard 1 counted shard 0's committed trials, not its dead RUNNING ones: one budget of 24
assert len(done) + len(live) >= 24 and len(live) <= 24 - len(done) + 1, (dead, live)
assert all(s == "COMPLETE" for s in live), live
PY
    expect_exit 0 "${mpi[@]}" -np 2 "$bin/cleansweep" resume sw-shard-0-of-2.h5 --progress lines
    /usr/bin/python3 - <<'PY' || fail "after the resume: $(cat out.txt)"
import h5py
with h5py.File("sw-shard-0-of-2.h5", "r", swmr=True) as f:
    states = [s.rstrip(b"\0").decode() for s in f["trials"]["state"]]
assert "RUNNING" not in states, states  # its cut-off trials ran again (or stay INTERRUPTED), none lost
PY
    # two joiners at once: distinct next indexes (the damaged file holds 5), both end at once
    "${mpi[@]}" -np 2 "$bin/cleansweep" run sw.yaml --join --progress lines > j1.txt 2>&1 &
    j1=$!
    "${mpi[@]}" -np 2 "$bin/cleansweep" run sw.yaml --join --progress lines > j2.txt 2>&1 || fail "joiner: $(cat j2.txt)"
    wait $j1 || fail "joiner: $(cat j1.txt)"
    [ -s sw-shard-6.h5 ] && [ -s sw-shard-7.h5 ] || fail "joiners did not take shards 6 and 7: $(ls)"
    grep -q "the sweep has 2[4-9] of its 24 trials" j1.txt || fail "joiner: $(cat j1.txt)"
    expect_exit 0 "$bin/cleansweep" merge all.h5 sw-shard-0-of-2.h5 sw-shard-1-of-2.h5 sw-shard-6.h5 sw-shard-7.h5
    grep -q "merged 2 of 2 shards and 2 joined into all.h5" out.txt || fail "$(cat out.txt)"
    # A requeued joiner (join.sbatch): --join notes the shard it took in CLEANSWEEP_JOIN_RECORD, and
    # --join --resume continues that shard instead of taking another.
    toy_config rq 8 "{kind: tpe, seed: 2, n_startup_trials: 3}" "ok" "  sleep: 0.25"
    export CLEANSWEEP_JOIN_RECORD=$work/join.record
    expect_exit 2 env -u CLEANSWEEP_JOIN_RECORD "${mpi[@]}" -np 2 "$bin/cleansweep" run rq.yaml --join --resume
    grep -q "error: --join --resume continues the shard this job joined before, which CLEANSWEEP_JOIN_RECORD names" err.txt ||
      fail "$(cat err.txt)"
    "${mpi[@]}" -np 2 -x CLEANSWEEP_JOIN_RECORD "$bin/cleansweep" run rq.yaml --join --resume --progress lines > q1.txt 2>&1 &
    for _ in $(seq 300); do grep -q "^\[.*\] trial 2 " q1.txt 2>/dev/null && break; sleep 0.1; done
    pkill -9 -f "cleansweep run rq.yaml --join" || fail "no joiner to kill"
    wait $! 2> /dev/null || true
    [ "$(cat join.record)" = joined-0 ] || fail "record: $(cat join.record 2>&1)"
    expect_exit 0 "${mpi[@]}" -np 2 -x CLEANSWEEP_JOIN_RECORD "$bin/cleansweep" run rq.yaml --join --resume --progress lines
    grep -q "continuing $work/rq-shard-0.h5" out.txt || fail "the requeued joiner did not continue its shard: $(head -3 out.txt)"
    [ ! -e rq-shard-1.h5 ] || fail "the requeued joiner took another shard"
    /usr/bin/python3 - <<'PY' || fail "the requeued joiner's study"
import h5py
with h5py.File("rq-shard-0.h5", "r", swmr=True) as f:
    states = [s.rstrip(b"\0").decode() for s in f["trials"]["state"]]
assert "RUNNING" not in states and len([s for s in states if s != "INTERRUPTED"]) == 8, states
PY
    unset CLEANSWEEP_JOIN_RECORD
    ;;
  shards)  # run --shard K/N three times and merge: the unsharded sweep; merge refuses what does not fit
    toy_config sh 20 "{kind: sobol, seed: 4}" "ok, fail"
    "${mpi[@]}" -np 3 "$bin/cleansweep" run sh.yaml > whole.txt || fail "unsharded run exited $?"
    mv sh.h5 whole.h5
    for k in 0 1 2; do
      "${mpi[@]}" -np 2 "$bin/cleansweep" run sh.yaml --shard $k/3 > shard$k.txt || fail "shard $k exited $?"
      grep -q "(shard $k/3 of a sweep of 20) on 1 workers" shard$k.txt || fail "shard $k: $(head -2 shard$k.txt)"
    done
    # the same sweep with another seed: its shard does not belong
    "${mpi[@]}" -np 2 "$bin/cleansweep" run sh.yaml --shard 1/3 --set sampler.seed=5 \
      --set study.storage=$work/other.h5 > /dev/null || fail "other shard exited $?"
    expect_exit 2 "$bin/cleansweep" merge all.h5 sh-shard-0-of-3.h5 other-shard-1-of-3.h5 sh-shard-2-of-3.h5
    grep -q "other-shard-1-of-3.h5: sampler.seed is 5, but sh-shard-0-of-3.h5 has 4" err.txt || fail "$(cat err.txt)"
    expect_exit 2 "$bin/cleansweep" merge all.h5 sh-shard-0-of-3.h5 sh-shard-2-of-3.h5
    grep -q "shards 1 of 3 are missing; give their files too, or --allow-missing" err.txt || fail "$(cat err.txt)"
    expect_exit 2 "$bin/cleansweep" merge all.h5 sh-shard-0-of-3.h5 ./sh-shard-0-of-3.h5
    grep -q "given twice" err.txt || fail "$(cat err.txt)"
    expect_exit 2 "$bin/cleansweep" merge whole.h5 sh-shard-0-of-3.h5
    grep -q "whole.h5: a file already exists here; merge into a new file" err.txt || fail "$(cat err.txt)"
    [ ! -e all.h5 ] && [ -z "$(ls -A | grep -E '^\.all|merging')" ] || fail "a refused merge left files: $(ls -A)"
    expect_exit 0 "$bin/cleansweep" merge all.h5 sh-shard-*-of-3.h5
    grep -q "merged 3 of 3 shards into all.h5: 20 trials" out.txt || fail "$(cat out.txt)"
    [ ! -e all.h5.lock ] || fail "merge left its lock file"
    /usr/bin/python3 - <<PY
import collections, h5py
def rows(path):
    with h5py.File(path, "r") as f:
        t = f["trials"][:]
        return t, f.attrs.get("merged_from")
def key(t):
    return collections.Counter((round(float(x), 9), int(n), o, m, s) for x, n, o, m, s in
                               zip(t["param_x"], t["param_n"], t["param_opt"], t["param_mode"], t["state"]))
merged, origin = rows("all.h5")
whole, _ = rows("whole.h5")
assert key(merged) == key(whole), "merged shards != unsharded sweep"
assert sorted(merged["number"]) == list(range(20))
assert list(merged["datetime_start"]) == sorted(merged["datetime_start"]), "numbered by start time"
origin = origin.decode() if isinstance(origin, bytes) else origin
assert origin.splitlines()[0] == "0/3 sh-shard-0-of-3.h5 (7 trials)", origin
PY
    "$bin/cleansweep" show all.h5 > show.txt
    grep -q "20 of 20 trials finished" show.txt || fail "show of the merged study: $(cat show.txt)"
    grep -q "^  2/3 sh-shard-2-of-3.h5 (6 trials)" show.txt || fail "show lists no shards: $(cat show.txt)"
    "$bin/cleansweep" show sh-shard-1-of-3.h5 > show.txt
    grep -q "^7 of 7 trials finished" show.txt || fail "show of a shard: $(cat show.txt)"
    grep -q "^shard 1/3 of a sweep of 20 trials" show.txt || fail "show of a shard: $(cat show.txt)"
    ;;
  gpu_telemetry)  # GPU memory per trial and the clean-device check, against the fake NVML library
    export CLEANSWEEP_NVML_LIBRARY=$bin/../lib/libfake_nvml.so FAKE_NVML_STATE=$work/nvml
    mkdir "$work/nvml.d"
    # GPU 0 counts energy (from 5 kJ on), GPU 1 does not (as before Volta): energy_j is NaN there.
    printf 'device 0 GPU-fake0 81559 100\ndevice 1 GPU-fake1 81559 100\nprocess 1 1 300\nenergy 0 5000000\n' > "$work/nvml"
    toy_config gpu 6 "{kind: random, seed: 1}" "gpu" "  gpu_mb: 512
  gpu_energy_j: 12.5
  sleep: 0.8"
    CUDA_VISIBLE_DEVICES=0,1 "${mpi[@]}" -np 3 "$bin/cleansweep" run gpu.yaml --progress lines > out.txt 2> err.txt ||
      fail "run exited $?: $(cat err.txt)"
    grep -q "GPU memory recorded through NVML" out.txt || fail "no telemetry line: $(head -5 out.txt)"
    grep -q "GPU 1: processes not started by cleansweep hold memory there: 1 (300 MiB)" err.txt ||
      fail "no warning about the foreign process: $(cat err.txt)"
    /usr/bin/python3 - << PY
import h5py, math
with h5py.File("$work/gpu.h5", "r") as f:
    t = f["trials"][:]
assert len(t) == 6 and all(s.rstrip(b"\0") == b"COMPLETE" for s in t["state"])
for row in t:
    gpu = row["gpu"].rstrip(b"\0").decode()
    base = 100 + (300 if gpu == "1" else 0)
    assert row["gpu_mem_before_mb"] == base and row["gpu_mem_after_mb"] == base, row
    assert row["gpu_mem_peak_mb"] == 512, row
    assert row["gpu_mem_foreign_mb"] == (300 if gpu == "1" else 0), row
    # What it cost: one GPU for its whole run; the 12.5 J it added to GPU 0's energy counter. The
    # trial sleeps 0.8 s, and its clock starts before the fork (CI once measured 0.794 s when it
    # started after: the program had begun before fork() returned to the worker).
    assert row["gpu_seconds"] == row["duration"] >= 0.8, row
    assert 0 <= row["cpu_seconds"] < row["duration"], row
    assert (row["energy_j"] == 12.5) if gpu == "0" else math.isnan(row["energy_j"]), row
print("gpu telemetry ok")
PY
    "$bin/cleansweep" show gpu.h5 > show.txt
    on0=$(/usr/bin/python3 -c "import h5py; print(sum(g.rstrip(b'\\0') == b'0' for g in h5py.File('$work/gpu.h5')['trials']['gpu']))")
    kj=$(/usr/bin/python3 -c "print(f'{$on0 * 12.5 / 1e3:.2f}')")
    grep -q "^cost of the trials: [0-9.]* CPU-hours, 0.00 GPU-hours, $kj kJ on their GPUs ($on0 trials counted)$" show.txt ||
      fail "show's cost line: $(grep cost show.txt)"
    # processes: single: the gang's one process uses both GPUs, and its figures are both GPUs'
    # (memory, energy, GPU-seconds), not only its leading worker's.
    printf 'device 0 GPU-fake0 81559 100\ndevice 1 GPU-fake1 81559 100\nenergy 0 5000000\nenergy 1 7000000\n' > "$work/nvml"
    toy_config single 2 "{kind: random, seed: 1}" "gpu" "  gpu_mb: 512
  gpu_energy_j: 12.5
  sleep: 0.8"
    sed -i 's/kill_grace: 1s}/kill_grace: 1s, gpus: 2, processes: single}/' single.yaml
    CUDA_VISIBLE_DEVICES=0,1 "${mpi[@]}" -np 3 "$bin/cleansweep" run single.yaml --progress lines > out.txt 2> err.txt ||
      fail "single-process gang run exited $?: $(cat err.txt)"
    /usr/bin/python3 - << PY
import h5py
with h5py.File("$work/single.h5", "r") as f:
    t = f["trials"][:]
assert len(t) == 2 and all(s.rstrip(b"\0") == b"COMPLETE" for s in t["state"]), t["state"]
for row in t:
    assert row["gpu"].rstrip(b"\0") == b"0,1" and row["gpus"] == 2, row
    assert row["gpu_mem_before_mb"] == 200 and row["gpu_mem_after_mb"] == 200, row
    assert row["gpu_mem_peak_mb"] == 1024, row  # 512 MiB on each GPU
    assert row["energy_j"] == 25, row           # 12.5 J on each
    assert abs(row["gpu_seconds"] - 2 * row["duration"]) < 1e-9, row
print("single-process gang: both GPUs counted")
PY
    # A trial that leaves memory behind: the next one on that GPU is not started.
    toy_config leak 3 "{kind: random, seed: 1}" "gpuleak" "  gpu_mb: 256
  sleep: 0.6"
    sed -i 's/kill_grace: 1s}/kill_grace: 1s, gpu_clean_wait: 1s}/' leak.yaml
    CUDA_VISIBLE_DEVICES=0 "${mpi[@]}" -np 2 "$bin/cleansweep" run leak.yaml --progress lines > out.txt 2> err.txt ||
      fail "leak run exited $?: $(cat err.txt)"
    /usr/bin/python3 - << PY
import h5py
with h5py.File("$work/leak.h5", "r") as f:
    t = f["trials"][:]
state = [s.rstrip(b"\0").decode() for s in t["state"]]
reason = [r.decode() if isinstance(r, bytes) else r for r in t["reason"]]
assert state == ["COMPLETE", "FAIL", "FAIL"], state
assert t["gpu_mem_after_mb"][0] == 100 + 256, t["gpu_mem_after_mb"]
assert reason[1].startswith("not started: GPU 0 is not clean: processes of earlier trials still hold 256 MiB"), reason[1]
assert "after trial.gpu_clean_wait (1.0s)" in reason[1], reason[1]
print("dirty GPU refused")
PY
    # Without NVML: the same sweep works, the GPU fields are empty, and the log says why.
    CLEANSWEEP_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 CUDA_VISIBLE_DEVICES=0 "${mpi[@]}" -np 2 \
      "$bin/cleansweep" run gpu.yaml --set study.storage=$work/nonvml.h5 --set study.n_trials=2 > out.txt ||
      fail "run without NVML exited $?"
    grep -q "GPU memory not recorded: no NVML (/nonexistent/libnvidia-ml.so.1 not loadable" out.txt ||
      fail "no line saying why: $(head -5 out.txt)"
    /usr/bin/python3 - << PY
import math, h5py
with h5py.File("$work/nonvml.h5", "r") as f:
    t = f["trials"][:]
assert len(t) == 2 and all(math.isnan(v) for c in ("gpu_mem_before_mb", "gpu_mem_peak_mb", "gpu_mem_after_mb",
                                                    "gpu_mem_foreign_mb") for v in t[c])
PY
    ;;
  exact_values)  # issue 15: the trial runs with exactly the value the study stores; exports say the same
    toy_config exact 12 "{kind: random, seed: 11}" "echoargs" "  lr: {type: float, low: 1.0e-6, high: 0.5, log: true}"
    sed -i 's#toy_trial"\]#toy_trial", "--x={x}", "--lr={lr}"]#' exact.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run exact.yaml > out.txt || fail "run exited $?"
    "$bin/cleansweep" export exact.h5 -o exact.csv || fail "csv export"
    "$bin/cleansweep" export exact.h5 --format json -o exact.json || fail "json export"
    /usr/bin/python3 - <<PY
import csv, json, h5py
with h5py.File("exact.h5", "r") as f:
    rows = {int(r["number"]): r for r in f["trials"][:]}
csv_rows = {int(r["number"]): r for r in csv.DictReader(open("exact.csv"))}
json_rows = {t["number"]: t for t in json.load(open("exact.json"))["trials"]}
checked = 0
for n, row in rows.items():
    args = open(f"exact.trials/{n}/args.bin", "rb").read().split(b"\0")
    seen = {a.split(b"=")[0][2:].decode(): a.split(b"=")[1].decode() for a in args if a}
    params = json.load(open(f"exact.trials/{n}/params.json"))
    for name in ("x", "lr"):
        stored = float(row["param_" + name])
        assert float(seen[name]) == stored, (n, name, seen[name], repr(stored))
        assert seen[name] == repr(stored), (n, name, seen[name], repr(stored))  # the shortest exact text
        assert params[name] == stored, (n, name, params[name], stored)
        assert float(csv_rows[n]["param_" + name]) == stored, (n, name, csv_rows[n]["param_" + name])
        assert json_rows[n]["params"][name] == stored
        checked += 1
assert checked == 24, checked
print("exact values: 24 of 24 identical in the command, CLEANSWEEP_PARAMS, the study file, CSV and JSON")
PY
    ;;
  stale_trial_folders)  # issue 15: a new study never reuses the trial folders of one whose file was deleted
    toy_config stale 2 "{kind: random, seed: 1}" "ok"
    "${mpi[@]}" -np 2 "$bin/cleansweep" run stale.yaml > out.txt || fail "first run exited $?"
    echo "old checkpoint" > stale.trials/0/checkpoint.pt
    rm stale.h5
    "${mpi[@]}" -np 2 "$bin/cleansweep" run stale.yaml > out.txt || fail "second run exited $?"
    grep -q "notice: $work/stale.trials held the trial folders of an earlier study whose file is gone; moved to $work/stale.trials.orphaned-" out.txt ||
      fail "no notice: $(cat out.txt)"
    [ -e stale.trials/0/checkpoint.pt ] && fail "the new trial 0 found the old trial 0's checkpoint"
    [ "$(cat stale.trials.orphaned-*/0/checkpoint.pt)" = "old checkpoint" ] || fail "the old folders were not kept"
    [ -f stale.trials/0/log.txt ] || fail "the new trial 0 has no folder of its own"
    ;;
  resume_set)  # issue 15: a resume that changes the config changes every place that states it
    toy_config rs 4 "{kind: random, seed: 1}" "ok"
    "${mpi[@]}" -np 2 "$bin/cleansweep" run rs.yaml > out.txt || fail "run exited $?"
    "${mpi[@]}" -np 2 "$bin/cleansweep" resume rs.h5 --set sampler.kind=tpe --set study.n_trials=6 > out.txt ||
      fail "resume exited $?"
    "$bin/cleansweep" show rs.h5 > show.txt
    grep -q "^sampler tpe" show.txt || fail "show: $(head -3 show.txt)"
    grep -q "config changed on resume .*: .*sampler: random -> tpe" show.txt || fail "show has no history: $(cat show.txt)"
    /usr/bin/python3 - <<PY
import json, sys, h5py
sys.path.insert(0, "$src/python")
import cleansweep_study
with h5py.File("rs.h5", "r") as f:
    assert f.attrs["sampler"] == "tpe", f.attrs["sampler"]
    history = json.loads(f.attrs["config_history"])
assert any("sampler: random -> tpe" in c for c in history[-1]["changes"]), history
study = cleansweep_study.load_study("rs.h5")
assert study.attrs["sampler"] == "tpe" and len(study.trials) == 6, study.attrs
PY
    ;;
  stop_when)  # issue 18: a sweep that reached study.stop_when's target ends early, says why, and resumes
    toy_config sw 300 "{kind: random, seed: 4}" "ok"
    sed -i 's/n_trials: 300,/n_trials: 300, stop_when: {target: 1.0},/' sw.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run sw.yaml --progress lines > out.txt || fail "run exited $?"
    grep -q "^stopping early: the target was reached: trial [0-9]* has value = 1.0[0-9]* (study.stop_when.target: 1.0)" out.txt ||
      fail "no message when it stopped: $(tail -5 out.txt)"
    grep -q "^stopped early: the target was reached" out.txt || fail "no closing line: $(tail -3 out.txt)"
    "$bin/cleansweep" show sw.h5 > show.txt
    grep -q "^stopped early: the target was reached: trial" show.txt || fail "show: $(cat show.txt)"
    /usr/bin/python3 - <<PY
import h5py
with h5py.File("sw.h5", "r") as f:
    t = f["trials"][:]
    reason = f.attrs["stop_reason"].decode()
states = {s.rstrip(b"\0") for s in t["state"]}
assert states == {b"COMPLETE"}, states  # the running trials were left to finish
assert 0 < len(t) < 300 and max(t["value"]) >= 1.0, (len(t), max(t["value"]))
assert reason.startswith("the target was reached: trial "), reason
PY
    # Resumed with a target it cannot reach, it runs to n_trials and the old reason is gone.
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume sw.h5 --set study.stop_when.target=2 > out.txt || fail "resume exited $?"
    "$bin/cleansweep" show sw.h5 > show.txt
    grep -q "^300 of 300 trials finished" show.txt || fail "show after resume: $(head -5 show.txt)"
    if grep -q "stopped early" show.txt out.txt; then fail "the old reason stayed: $(grep -h 'stopped early' show.txt out.txt)"; fi
    ;;
  multi_objective)  # issue 18: several metrics, NSGA-II, a Pareto front kept current in the file, resume
    toy_config mo 24 "{kind: nsga2, seed: 3, population_size: 6}" "twometrics, missingmetric"
    sed -i 's/direction: maximize,/metrics: [{name: accuracy, direction: maximize}, {name: cost, direction: minimize}, {name: trial_seconds, direction: minimize}], constraints: {cost: {max: 1.0}},/' mo.yaml
    "${mpi[@]}" -np 3 "$bin/cleansweep" run mo.yaml --progress lines > out.txt || fail "run exited $?"
    grep -q "^Pareto front: [0-9]* trials; see them with: cleansweep show" out.txt || fail "no front line: $(tail -3 out.txt)"
    grep -q " COMPLETE accuracy=[0-9.-]* cost=[0-9.]* trial_seconds=[0-9.]* in " out.txt ||
      fail "progress lines lack the metrics: $(grep COMPLETE out.txt | head -2)"
    check_front() {  # the pareto column is exactly the non-dominated COMPLETE trials
      /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[2])
from cleansweep_study import load_study
with h5py.File(sys.argv[1], "r") as f:
    t = f["trials"][:]
    steps = f["intermediate"][:]
    metrics = json.loads(f.attrs["metrics"])
assert [m["name"] for m in metrics] == ["accuracy", "cost", "trial_seconds"], metrics
state = np.array([s.rstrip(b"\0").decode() for s in t["state"]])
done = state == "COMPLETE"
assert done.sum() >= 10, state
assert (t["value"][done] == t["value_accuracy"][done]).all()
assert np.allclose(t["value_trial_seconds"][done], t["duration"][done])
# cost <= 1.0 (study.constraints): outside it a trial is COMPLETE but infeasible, never on the front.
assert ((t["violation"][done] > 0) == (t["value_cost"][done] > 1.0)).all(), (t["violation"], t["value_cost"])
assert np.isnan(t["violation"][~done]).all()
assert (t["violation"][done] > 0).any() and (t["violation"][done] == 0).any(), t["violation"]
feasible = done & ~(t["violation"] > 0)
points = np.stack([-t["value_accuracy"], t["value_cost"], t["value_trial_seconds"]], axis=1)
for i in range(len(t)):
    dominated = any(feasible[j] and (points[j] <= points[i]).all() and (points[j] < points[i]).any() for j in range(len(t)))
    expected = bool(feasible[i] and not dominated)
    assert bool(t["pareto"][i]) == expected, (i, state[i], points[i], t["pareto"][i])
failed = state == "FAIL"
assert failed.sum() >= 1 and all(b"the final values lack cost" in r for r in t["reason"][failed]), t["reason"][failed]
assert {"value_accuracy", "value_cost"} <= set(steps.dtype.names), steps.dtype.names
assert not np.isnan(steps["value_cost"]).any()
study = load_study(sys.argv[1])
assert study.metrics == [("accuracy", "maximize"), ("cost", "minimize"), ("trial_seconds", "minimize")]
assert sorted(study.pareto_front["number"]) == sorted(t["number"][t["pareto"] == 1]), study.pareto_front
assert study.trials["pareto"].dtype == bool
assert sorted(study.completed()["number"]) == sorted(t["number"][feasible])
print("front", int(t["pareto"].sum()), "of", int(feasible.sum()), "feasible,", int(done.sum()), "complete")
PY
    }
    check_front mo.h5 "$src/python" || fail "the front in the file is wrong"
    "$bin/cleansweep" show mo.h5 > show.txt
    grep -q "^study mo (maximize accuracy, minimize cost, minimize trial_seconds)" show.txt || fail "show: $(head -2 show.txt)"
    grep -q "^Pareto front: [0-9]* of [0-9]* completed trials" show.txt || fail "show has no front: $(cat show.txt)"
    grep -q "trials finished:.* ([0-9]* COMPLETE outside study.constraints)" show.txt || fail "show: $(cat show.txt)"
    grep -q "(infeasible: outside study.constraints)" out.txt || fail "no progress line says infeasible"
    "$bin/cleansweep" export mo.h5 --format csv -o mo.csv
    head -1 mo.csv | grep -q "^number,state,value,value_accuracy,value_cost,value_trial_seconds,pareto," ||
      fail "export columns: $(head -1 mo.csv)"
    # Resumed for more trials, newcomers that dominate old front members clear their rows' flag.
    "${mpi[@]}" -np 3 "$bin/cleansweep" resume mo.h5 --set study.n_trials=40 > out.txt || fail "resume exited $?"
    check_front mo.h5 "$src/python" || fail "the front after resume is wrong"
    # A metric no worker can measure (energy on CPU workers) is refused before any trial runs.
    toy_config energy 4 "{kind: nsga2}" "twometrics"
    sed -i 's/direction: maximize,/metrics: [{name: accuracy, direction: maximize}, {name: energy_j, direction: minimize}],/' energy.yaml
    printf 'workers: {gpus: none}\n' >> energy.yaml
    "$bin/cleansweep" validate energy.yaml | grep -q "^measured  energy_j by each worker through NVML" ||
      fail "validate does not say that the workers measure energy_j"
    expect_exit 2 timeout 60 "${mpi[@]}" -np 3 "$bin/cleansweep" run energy.yaml
    grep -q "study.metrics names energy_j, which this worker cannot measure: its trials get no GPU" err.txt ||
      fail "message: $(cat err.txt)"
    ;;
  *) fail "unknown scenario $scenario" ;;
esac
echo "PASS: $scenario"
