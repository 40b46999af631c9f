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


runs = collections.defaultdict(list)
for line in sys.stdin:
    r = json.loads(line)
    runs[(r["problem"], r["sampler"], r["tool"])].append(r)

# The median, and the lowest and highest seed's: with 5 seeds the spread is as large as most gaps.
print("| problem | sampler | tool | seeds | HV @200 | (min-max) | HV @500 | (min-max) | sampler ms/trial |")
print("|---|---|---|---|---|---|---|---|---|")
for (problem, sampler, tool), rs in sorted(runs.items()):
    cells = []
    for n in CHECKPOINTS:
        hvs = [hypervolume(r["values"][:n], REFERENCE[problem]) for r in rs if len(r["values"]) >= n]
        cells += ["%.4f" % statistics.median(hvs), "%.2f-%.2f" % (min(hvs), max(hvs))] if hvs else ["-", "-"]
    ms = statistics.median(1000 * r["sampler_seconds"] / len(r["values"]) for r in rs)
    print("| %s | %s | %s | %d | %s | %.3f |" % (problem, sampler, tool, len(rs), " | ".join(cells), ms))
