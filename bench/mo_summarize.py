#!/usr/bin/python3
"""Reads mo_bench and optuna_mo_bench.py JSON lines on stdin; prints the median hypervolume after 200
and 500 trials (one implementation, Optuna's WFG, for both tools) and the sampler time per trial.

Reference points: ZDT1-3 (1.1, 11) (f1 lies in [0, 1]; f2 of random points stays below 11);
DTLZ2 (2.5, 2.5, 2.5).
"""
import collections
import json
import statistics
import sys

import numpy as np
from optuna._hypervolume import WFG

REFERENCE = {"zdt1": [1.1, 11.0], "zdt2": [1.1, 11.0], "zdt3": [1.1, 11.0], "dtlz2": [2.5, 2.5, 2.5]}
CHECKPOINTS = (200, 500)


def hypervolume(values, reference):
    points = np.array([v for v in values if all(a < r for a, r in zip(v, reference))], dtype=float)
    if len(points) == 0:
        return 0.0
    # Only the non-dominated points count; WFG itself is slow on dominated ones.
    keep = [not ((points <= p).all(axis=1) & (points < p).any(axis=1)).any() for p in points]
    return float(WFG().compute(points[keep], np.array(reference, dtype=float)))


runs = collections.defaultdict(dict)  # (problem, sampler) -> tool -> seed -> run
for line in sys.stdin:
    r = json.loads(line)
    by_seed = runs[(r["problem"], r["sampler"])].setdefault(r["tool"], {})
    # A seed run twice (a 200-trial part beside a 500-trial one) counts once, with its longer run.
    if len(r["values"]) > len(by_seed.get(r["seed"], {"values": ()})["values"]):
        by_seed[r["seed"]] = r

# At each trial count, every tool is judged on the same seeds: those all of them reached. The
# median, and the lowest and highest seed's beside it: with few seeds the spread is as large as
# most gaps. Sampler time is the median over each tool's longest runs.
print("| problem | sampler | tool | seeds @200 | HV @200 | (min-max) | seeds @500 | HV @500 | (min-max) "
      "| sampler ms/trial |")
print("|---|---|---|---|---|---|---|---|---|---|")
compared = {}  # (problem, sampler, trials) -> tool -> hypervolumes of the common seeds
for (problem, sampler), tools in sorted(runs.items()):
    for tool, by_seed in sorted(tools.items()):
        cells = []
        for n in CHECKPOINTS:
            common = set.intersection(*({s for s, r in t.items() if len(r["values"]) >= n} for t in tools.values()))
            hvs = [hypervolume(by_seed[s]["values"][:n], REFERENCE[problem]) for s in sorted(common)]
            if hvs:
                compared.setdefault((problem, sampler, n), {})[tool] = hvs
            cells += [str(len(hvs))]
            cells += ["%.4f" % statistics.median(hvs), "%.2f-%.2f" % (min(hvs), max(hvs))] if hvs else ["-", "-"]
        longest = max(len(r["values"]) for r in by_seed.values())
        ms = statistics.median(1000 * r["sampler_seconds"] / longest
                               for r in by_seed.values() if len(r["values"]) == longest)
        print("| %s | %s | %s | %s | %.3f |" % (problem, sampler, tool, " | ".join(cells), ms))

# How sure a gap is: our median minus Optuna's, and a 90% bootstrap interval of that difference
# (each tool's seeds resampled with replacement, 4,000 times, a fixed generator so the table is the
# same every run). An interval that holds 0 is a gap the seeds cannot tell from noise.
rng = np.random.default_rng(0)
print()
print("| problem | sampler | trials | seeds | median ours - Optuna's | 90% interval | relative |")
print("|---|---|---|---|---|---|---|")
for (problem, sampler, n), by_tool in sorted(compared.items()):
    if set(by_tool) != {"cleansweep", "optuna"}:
        continue
    ours, theirs = np.array(by_tool["cleansweep"]), np.array(by_tool["optuna"])
    gap = np.median(ours) - np.median(theirs)
    draws = [np.median(rng.choice(ours, len(ours))) - np.median(rng.choice(theirs, len(theirs))) for _ in range(4000)]
    low, high = np.percentile(draws, [5, 95])
    print("| %s | %s | %d | %d | %+.4f | %+.4f to %+.4f | %+.2f%% |"
          % (problem, sampler, n, len(ours), gap, low, high, 100 * gap / np.median(theirs)))
