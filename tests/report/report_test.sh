#!/bin/bash
# The HTML report of a real small study, rendered in headless Chromium (Debian's chromium,
# installed here when missing): no console error, no exception, no network request, and every
# figure drew the marks the study calls for, counted from the DOM; hovering a point shows its
# trial's parameters. Also: study.report_every writes the report during a run, and a study with
# two metrics and a constraint gets its Pareto front and a history per metric.
#   report_test.sh BIN_DIR SOURCE_DIR      (exit 77, skipped, where Chromium cannot be had)
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v chromium > /dev/null; then
  [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null || { echo "SKIPPED: no chromium, and not root to install it"; exit 77; }
  echo "installing chromium (Debian package)"
  log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends chromium > "$log" 2>&1 ||
    { apt-get update > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends chromium > "$log" 2>&1; } ||
    { cat "$log" >&2; fail "cannot install chromium"; }
  rm -f "$log"
fi
node --experimental-websocket -e 'if (typeof WebSocket !== "function") process.exit(1)' 2> /dev/null ||
  { echo "SKIPPED: needs Node.js 20.10 or later (its WebSocket drives Chromium)"; exit 77; }
source "$src/tests/support/mpi_env.sh"
check() {  # check REPORT: what Chromium drew, as JSON on stdout
  rm -rf "$work/profile" && mkdir "$work/profile"
  timeout 120 node --experimental-websocket --no-warnings "$src/tests/report/render_check.mjs" "$(command -v chromium)" \
    "$1" "$work/profile"
}

cat > r.yaml << YAML
study: {name: report-test, direction: maximize, n_trials: 36, storage: $work/r.h5, report_every: 1s}
sampler: {kind: tpe, seed: 3, n_startup_trials: 8}
pruner: {kind: median, n_startup_trials: 3}
trial: {command: ["$bin/toy_trial"], timeout: 30s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  lr: {type: float, low: 1.0e-4, high: 1.0, log: true}
  opt: {type: categorical, choices: [sgd, adam]}
  m: {type: float, low: 0.0, high: 0.99, when: {opt: sgd}}
  mode: {type: categorical, choices: [curve, ok, fail, crash]}
  steps: 6
  step_sleep: 0.03
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run r.yaml --progress lines > run.txt || { cat run.txt; fail "the sweep exited $?"; }
grep -q "^report: $work/r.html, rewritten every" run.txt || fail "no report line: $(head -3 run.txt)"
[ -s r.html ] || fail "study.report_every wrote no report"
grep -q 'http-equiv="refresh"' r.html && fail "the final report still reloads itself"

"$bin/cleansweep" report r.h5 -o report.html > out.txt || fail "cleansweep report exited $?"
grep -q "^report: report.html (36 trials)" out.txt || fail "$(cat out.txt)"
# Offline: no address but the SVG namespace anywhere in the file.
if grep -oE "https?://[^\"' )]+" report.html | grep -v "^http://www.w3.org/2000/svg$"; then fail "the report names a URL"; fi

check "$work/report.html" > drawn.json || fail "Chromium: $(cat drawn.json)"
check "$work/r.html" > drawn-live.json || fail "Chromium, the report written by the run: $(cat drawn-live.json)"
/usr/bin/python3 - "$work" << 'PY'
import json, sys, h5py
work = sys.argv[1]
drawn = json.load(open(f"{work}/drawn.json"))
live = json.load(open(f"{work}/drawn-live.json"))
with h5py.File(f"{work}/r.h5", "r", swmr=True) as f:
    t = f["trials"][:]
    steps = f["intermediate"][:]
state = [s.decode().rstrip("\0") for s in t["state"]]
value_ok = [v == v for v in t["value"]]  # not NaN
complete = [s == "COMPLETE" and ok for s, ok in zip(state, value_ok)]
expect = {
    "rendered": "yes",
    "title": "Study report-test",
    "history": sum(1 for s, ok in zip(state, value_ok) if ok and s in ("COMPLETE", "PRUNED")),
    "best_line": 1,
    "parallel": sum(complete),
    "importance": 5,      # x, n, lr, opt, mode; m is conditional, steps and step_sleep fixed
    "slice_plots": 6,     # every parameter but the fixed ones
    "slices": sum(complete) * 5 + sum(1 for c, o in zip(complete, t["param_opt"]) if c and o.rstrip(b"\0") == b"sgd"),
    "curves": len(set(int(x) for x in steps["trial"])),
    "pruned_marks": sum(1 for s, n in zip(state, t["number"]) if s == "PRUNED" and int(n) in set(int(x) for x in steps["trial"])),
    "timeline": len(t),
    "utilisation": 2,
    "failures": sum(1 for s in state if s not in ("COMPLETE", "PRUNED", "RUNNING")),
    "refresh": False,
}
for key, want in expect.items():
    assert drawn[key] == want, f"{key}: drew {drawn[key]}, the study calls for {want}"
    assert live[key] == want, f"report written by the run, {key}: {live[key]} != {want}"
for key in ("history", "parallel", "importance", "slices", "curves", "timeline"):
    assert drawn[key] == drawn[{"history": "history_circles", "parallel": "parallel_lines", "importance": "importance_bars",
                                "slices": "slice_points", "curves": "curve_paths", "timeline": "timeline_spans"}[key]]
assert drawn["pruned_marks"] > 0 and drawn["failures"] > 0, "the study has pruned and failed trials to show"
tip = drawn["tooltip"]
assert tip.startswith("trial ") and "\nx = " in tip and "\nlr = " in tip and "rank " in tip, tip
print("report drew:", {k: drawn[k] for k in expect})
PY
# Issue 18: a study with two metrics and a constraint draws its Pareto front (dominated and
# infeasible trials marked) and a history per metric, in the report and in the one the run wrote.
cat > mo.yaml << YAML
study:
  name: report-mo
  metrics: [{name: accuracy, direction: maximize}, {name: cost, direction: minimize}]
  constraints: {cost: {max: 1.0}}
  n_trials: 30
  storage: $work/mo.h5
  report_every: 1s
sampler: {kind: nsga2, seed: 4, population_size: 8}
trial: {command: ["$bin/toy_trial"], timeout: 30s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  opt: {type: categorical, choices: [a, b]}
  mode: {type: categorical, choices: [twometrics, fail, markup]}
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run mo.yaml --progress lines > mo-run.txt || { cat mo-run.txt; fail "the multi-objective sweep exited $?"; }
"$bin/cleansweep" report mo.h5 -o mo-report.html > /dev/null || fail "cleansweep report (multi-objective) exited $?"
check "$work/mo-report.html" > mo-drawn.json || fail "Chromium, multi-objective: $(cat mo-drawn.json)"
check "$work/mo.html" > mo-live.json || fail "Chromium, the multi-objective report written by the run: $(cat mo-live.json)"
check "$work/report.html" | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert not d["pareto_shown"] and len(d["histories"]) == 1, d' ||
  fail "a single-metric report shows a Pareto front or more than one history"
/usr/bin/python3 - "$work" << 'PY'
import json, sys, h5py
import numpy as np
work = sys.argv[1]
with h5py.File(f"{work}/mo.h5", "r", swmr=True) as f:
    t = f["trials"][:]
state = np.array([s.decode().rstrip("\0") for s in t["state"]])
done = state == "COMPLETE"
bad = done & (t["violation"] > 0)
front = done & (t["pareto"] == 1)
assert front.sum() >= 2 and bad.sum() >= 1 and (done & ~bad & ~front).sum() >= 1, (front, bad, state)
assert (state == "FAIL").sum() >= 1, state
# A trial's own words that are markup ("<!--<script>" made Chromium take the page's code for data).
assert any(b"<!--<script>" in r for r in t["reason"]), "no trial's reason holds markup: nothing was tested"
for name in ("mo-drawn", "mo-live"):
    d = json.load(open(f"{work}/{name}.json"))
    p = d["pareto"]
    assert d["rendered"] == "yes" and d["pareto_shown"], name
    want = {"drawn": int(done.sum()), "front": int(front.sum()), "infeasible": int(bad.sum()),
            "dominated": int((done & ~bad & ~front).sum()), "front_line": 1, "front_table": min(int(front.sum()), 20)}
    for key, value in want.items():
        assert p[key] == value, f"{name}: pareto {key}: drew {p[key]}, the study calls for {value}"
    kinds = {pt["n"]: pt["kind"] for pt in p["points"]}
    assert set(kinds) == {int(n) for n in t["number"][done]}, (name, "marks for other trials than the COMPLETE ones")
    for n, is_front, is_bad in zip(t["number"][done], front[done], bad[done]):
        assert kinds[int(n)] == ("infeasible" if is_bad else "front" if is_front else "dominated"), (name, n, kinds[int(n)])
    # The axes are the right way round: accuracy is maximised (right is better), cost minimised
    # (low values lie low on the page, so down is better); every dominated point has a front point
    # no worse in both, and no front point has another that beats it.
    at = lambda kind: [(pt["px"], pt["py"]) for pt in p["points"] if pt["kind"] == kind]
    beats = lambda a, b: a[0] >= b[0] and a[1] >= b[1] and a != b
    for q in at("dominated"):
        assert any(beats(f, q) for f in at("front")), (name, "a dominated point no front point beats", q)
    for q in at("front"):
        assert not any(beats(o, q) for o in at("front") + at("dominated")), (name, "a beaten front point", q)
    hist = {h["metric"]: h for h in d["histories"]}
    assert list(hist) == ["accuracy", "cost"], hist
    assert hist["accuracy"]["drawn"] == hist["accuracy"]["points"] == int(done.sum()), hist
    assert hist["cost"]["drawn"] == int(done.sum()) and hist["cost"]["infeasible"] == int(bad.sum()), hist
    assert all(h["best_line"] == 1 for h in hist.values()), hist
    tip = p["front_tooltip"]
    assert tip.startswith("trial ") and "accuracy = " in tip and "cost = " in tip and "on the Pareto front" in tip, tip
    assert "infeasible: violation " in p["infeasible_tooltip"] and "cost <= 1.0" in p["infeasible_tooltip"], p["infeasible_tooltip"]
print("multi-objective report drew:", {k: v for k, v in json.load(open(f"{work}/mo-drawn.json"))["pareto"].items() if k != "points"})
PY
# Issue 17: population-based training draws each trial's parameter over the steps it trained,
# joined to the parent it started from, the best trial's ancestry dark; other studies hide it.
check "$work/report.html" | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); assert not d["lineage_shown"] and d["lineage"] == 0, d' ||
  fail "a study without population-based training shows a lineage"
cat > pbt.yaml << YAML
study: {name: report-pbt, direction: maximize, n_trials: 10, storage: $work/pbt.h5}
sampler: {kind: pbt, seed: 2, population: 4, interval: 2, quantile: 0.25}
trial: {command: [/usr/bin/python3, "$src/tests/programs/pbt_toy.py", "$work"], timeout: 30s}
space:
  lr: {type: float, low: 0.01, high: 1.0, log: true}
  steps: 8
  pause: 0.05
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run pbt.yaml --progress lines > pbt-run.txt || { cat pbt-run.txt; fail "the pbt sweep exited $?"; }
"$bin/cleansweep" report pbt.h5 -o pbt-report.html > /dev/null || fail "cleansweep report (pbt) exited $?"
check "$work/pbt-report.html" > pbt-drawn.json || fail "Chromium, pbt: $(cat pbt-drawn.json)"
/usr/bin/python3 - "$work" << 'PY'
import json, sys, h5py
work = sys.argv[1]
with h5py.File(f"{work}/pbt.h5", "r", swmr=True) as f:
    t = f["trials"][:]
d = json.load(open(f"{work}/pbt-drawn.json"))
children = int((t["parent"] >= 0).sum())
assert children > 0, "no member was replaced: nothing to draw"
ran = int((t["last_step"] >= 0).sum())
assert d["lineage_shown"] and d["lineage"] == d["lineage_spans"] == ran, (d["lineage"], d["lineage_spans"], ran)
assert d["lineage_links"] == children, (d["lineage_links"], children)
best = max((r for r in t if r["state"].rstrip(b"\0") == b"COMPLETE"), key=lambda r: r["value"])
chain, n = 0, int(best["number"])
by = {int(r["number"]): r for r in t}
while n >= 0:
    chain += 1
    n = int(by[n]["parent"])
assert d["lineage_ancestry"] == chain, (d["lineage_ancestry"], chain)
print("pbt report drew:", {k: d[k] for k in ("lineage", "lineage_links", "lineage_ancestry")})
PY
# Issue 16: a gang trial is a bar on each of its workers' rows, tied together at its start.
cat > gang.yaml << YAML
study: {name: report-gang, direction: maximize, n_trials: 6, storage: $work/gang.h5}
sampler: {kind: grid}
trial: {command: ["$bin/toy_trial"], timeout: 30s, gpus: "{g}"}
space:
  g: {type: categorical, choices: [1, 2, 3]}
  x: {type: categorical, choices: [0.2, 0.4]}
YAML
"${mpi[@]}" -np 4 "$bin/cleansweep" run gang.yaml --progress lines > gang-run.txt || { cat gang-run.txt; fail "the gang sweep exited $?"; }
"$bin/cleansweep" report gang.h5 -o gang-report.html > /dev/null || fail "cleansweep report (gangs) exited $?"
check "$work/gang-report.html" > gang-drawn.json || fail "Chromium, gangs: $(cat gang-drawn.json)"
/usr/bin/python3 - "$work" << 'PY'
import json, sys
d = json.load(open(f"{sys.argv[1]}/gang-drawn.json"))
# g = 1, 2, 3 twice each: 12 bars, 4 gangs, on the 3 workers' rows.
assert (d["timeline_spans"], d["gang_links"], d["timeline_rows"]) == (12, 4, 3), d
print("gang timeline drew:", {k: d[k] for k in ("timeline_spans", "gang_links", "timeline_rows")})
PY
# A trial that reports every batch: 200,000 steps. Math.min(...values) over them overflowed the
# call stack (RangeError), and the report stayed blank; 120,000 still drew.
cat > many.py << 'PY'
import os
with os.fdopen(int(os.environ["CLEANSWEEP_REPORT_FD"]), "w", buffering=1 << 20) as f:
    f.writelines('{"step": %d, "value": %.6f}\n' % (i, 1 - 1 / (i + 1)) for i in range(200000))
    f.write('{"value": 1.0}\n')
PY
cat > many.yaml << YAML
study: {name: report-many, direction: maximize, n_trials: 1, storage: $work/many.h5}
trial: {command: [/usr/bin/python3, "$work/many.py"], timeout: 60s}
space:
  x: {type: float, low: 0.0, high: 1.0}
YAML
"${mpi[@]}" -np 2 "$bin/cleansweep" run many.yaml --progress lines > many-run.txt || { cat many-run.txt; fail "the 200,000-step sweep exited $?"; }
"$bin/cleansweep" report many.h5 -o many-report.html > /dev/null || fail "cleansweep report (200,000 steps) exited $?"
check "$work/many-report.html" > many-drawn.json || fail "Chromium, 200,000 steps: $(cat many-drawn.json)"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["rendered"] == "yes" and d["curve_paths"] == 1, d' \
  "$work/many-drawn.json" || fail "the 200,000-step report did not draw its curve"
# The check itself must catch an error on the page.
sed 's#document.body.dataset.rendered = "yes";#console.error("planted error");#' report.html > broken.html
if check "$work/broken.html" > broken.json 2> broken.err; then fail "a console error went unnoticed"; fi
grep -q "planted error" broken.err || fail "the planted error was not reported: $(cat broken.err)"
echo "PASS: report"
