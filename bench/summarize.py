#!/usr/bin/python3
"""Reads sampler_bench / optuna_bench JSON lines on stdin and prints the comparison table."""
import json
import statistics
import sys
from collections import defaultdict

rows = [r for r in (json.loads(line) for line in sys.stdin if line.startswith("{")) if "tool" in r]
groups = defaultdict(list)
for r in rows:
    groups[(r["function"], r["tool"] + ":" + r["sampler"], r["trials"])].append(r)
print("| function | sampler | trials | seeds | median best @100 | median best @200 | sampler time per trial |")
print("|---|---|---|---|---|---|---|")
for (fn, sampler, trials), rr in sorted(groups.items()):
    at = lambda k: statistics.median(r["best"][k] for r in rr) if all(k in r["best"] for r in rr) else float("nan")
    per_trial_ms = 1000 * sum(r["sampler_seconds"] for r in rr) / sum(r["trials"] for r in rr)
    print("| %s | %s | %d | %d | %.4g | %.4g | %.3f ms |" % (fn, sampler, trials, len(rr), at("100"), at("200"), per_trial_ms))
