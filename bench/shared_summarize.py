#!/usr/bin/python3
"""Tables from bench/shared_bench's JSON lines (stdin): per problem, sampler and mode the median
final regret with a 90% bootstrap interval of the median, and the most trials a sweep ran (one
budget's overshoot); then the gaps issue 38 judges, each a difference of medians with a 90%
bootstrap interval (each side's seeds resampled, 4,000 draws):
  sharing - single        within noise: the interval holds 0 (or lies below it)
  sharing - independent   clearly better: the interval lies below 0
  warm 50 - cold 100      the warm-started half study reaches the cold full one: holds 0 or below
Lower is better everywhere.

usage: shared_summarize.py < results.jsonl
"""
import collections
import json
import sys

import numpy as np

from gp_summarize import gap, interval  # the same bootstrap: 4,000 draws, 90% intervals

ORDER = ["single", "sharing", "sharing-stale", "independent", "cold", "warm"]


def fmt(x):
    return "%.3g" % x


def main():
    runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (problem, sampler) -> mode -> lines
    for raw in sys.stdin:
        line = json.loads(raw)
        runs[line["problem"], line["sampler"]][line["label"]].append(line)
    print("| problem | sampler | mode | seeds | trials (most) | median regret | 90% interval |")
    print("|---|---|---|---|---|---|---|")
    for (problem, sampler), modes in sorted(runs.items()):
        for mode in sorted(modes, key=lambda m: ORDER.index(m) if m in ORDER else 99):
            lines = modes[mode]
            regret = [ln["regret"] for ln in lines]
            lo, hi = interval(regret)
            print("| %s | %s | %s | %d | %d | %s | %s to %s |" % (problem, sampler, mode, len(lines),
                                                                 max(ln["trials"] for ln in lines),
                                                                 fmt(np.median(regret)), fmt(lo), fmt(hi)))
    print()
    print("| problem | sampler | sharing - single | sharing - independent | warm 50 - cold 100 |")
    print("|---|---|---|---|---|")
    tally = collections.Counter()
    for (problem, sampler), modes in sorted(runs.items()):
        cells = []
        for a, b, judge in (("sharing", "single", "noise"), ("sharing", "independent", "better"),
                            ("warm", "cold", "noise")):
            if a not in modes or b not in modes:
                cells.append("")
                continue
            d, lo, hi = gap([ln["regret"] for ln in modes[a]], [ln["regret"] for ln in modes[b]])
            held = lo <= 0 if judge == "noise" else hi < 0
            tally[a + "-" + b, held] += 1
            cells.append("%s (%s to %s)%s" % (fmt(d), fmt(lo), fmt(hi), "" if held else " **x**"))
        print("| %s | %s | %s |" % (problem, sampler, " | ".join(cells)))
    print()
    for name, judge in (("sharing-single", "within noise or better"), ("sharing-independent", "better beyond noise"),
                        ("warm-cold", "within noise or better")):
        n = tally[name, True] + tally[name, False]
        if n:
            print("- %s: %s on %d of %d problem x sampler pairs" % (name.replace("-", " vs "), judge,
                                                                  tally[name, True], n))


if __name__ == "__main__":
    main()
