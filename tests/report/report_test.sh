#!/bin/bash
# The HTML report of a real small study, rendered in headless Chromium (Debian's chromium,
# installed here when missing): no console error, no exception, no network request, and every
# figure drew the marks the study calls for, counted from the DOM; hovering a point shows its
# trial's parameters. Also: study.report_every writes the report during a run.
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
# The check itself must catch an error on the page.
sed 's#document.body.dataset.rendered = "yes";#console.error("planted error");#' report.html > broken.html
if check "$work/broken.html" > broken.json 2> broken.err; then fail "a console error went unnoticed"; fi
grep -q "planted error" broken.err || fail "the planted error was not reported: $(cat broken.err)"
echo "PASS: report"
