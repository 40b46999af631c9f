#!/usr/bin/python3
"""Tables from bench/gp_bench.py's JSON lines (stdin): per problem and method the median best value
after half and all of the trials with a 90% bootstrap interval of the median; then the gaps the
issue judges (gp - sklearn-gp, gp - tpe, auto - the better of gp and tpe), each a difference of
medians with a 90% bootstrap interval (each side's seeds resampled, 4,000 draws). Lower is better
everywhere: an interval wholly below 0 means the first is better beyond these seeds' noise.

usage: gp_summarize.py < results.jsonl
"""
import collections
import json
import sys

import numpy as np

ORDER = ["gp", "auto", "tpe", "sklearn-gp", "optuna-tpe", "random"]
rng = np.random.default_rng(0)


def boot_median(a, draws=4000):
    a = np.asarray(a)
    return np.median(a[rng.integers(0, len(a), (draws, len(a)))], axis=1)


def interval(a):
    lo, hi = np.percentile(boot_median(a), [5, 95])
    return lo, hi


def gap(a, b):
    d = boot_median(a) - boot_median(b)
    lo, hi = np.percentile(d, [5, 95])
    return np.median(a) - np.median(b), lo, hi


def fmt(x):
    return "%.4g" % x


def main():
    runs = collections.defaultdict(dict)  # (problem) -> method -> seed -> line
    for raw in sys.stdin:
        line = json.loads(raw)
        runs[line["problem"]].setdefault(line["method"], {})[line["seed"]] = line
    print("| problem | dims | trials | optimum | method | seeds | median best @half | median best | 90% interval | sampler ms/trial |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    finals = {}
    for problem in runs:
        for method in sorted(runs[problem], key=lambda m: ORDER.index(m) if m in ORDER else 99):
            lines = list(runs[problem][method].values())
            trials = lines[0]["trials"]
            final = [ln["best"][-1] for ln in lines]
            half = [ln["best"][trials // 2 - 1] for ln in lines]
            finals[problem, method] = final
            lo, hi = interval(final)
            ms = [ln["sampler_seconds"] * 1000 / trials for ln in lines if ln["sampler_seconds"] is not None]
            optimum = lines[0]["optimum"]
            chose = collections.Counter(ln["chose"] for ln in lines if ln["chose"]) if method == "auto" else None
            label = method + (" (" + ", ".join(sorted(chose)) + ")" if chose else "")
            print("| %s | %d | %d | %s | %s | %d | %s | %s | %s to %s | %s |" % (
                problem, lines[0]["dims"], trials, "" if optimum is None else fmt(optimum), label, len(lines),
                fmt(np.median(half)), fmt(np.median(final)), fmt(lo), fmt(hi),
                "%.2f" % np.median(ms) if ms else "-"))
    print()
    print("| problem | gap | median difference | 90% interval | verdict |")
    print("|---|---|---|---|---|")
    for problem in runs:
        pairs = [("gp", "sklearn-gp"), ("gp", "tpe")]
        for a, b in pairs:
            if (problem, a) in finals and (problem, b) in finals:
                d, lo, hi = gap(finals[problem, a], finals[problem, b])
                verdict = "%s better" % a if hi < 0 else "%s better" % b if lo > 0 else "within noise"
                print("| %s | %s - %s | %s | %s to %s | %s |" % (problem, a, b, fmt(d), fmt(lo), fmt(hi), verdict))
        if all((problem, m) in finals for m in ("auto", "gp", "tpe")):
            better = min(("gp", "tpe"), key=lambda m: np.median(finals[problem, m]))
            d, lo, hi = gap(finals[problem, "auto"], finals[problem, better])
            verdict = "auto worse" if lo > 0 else "auto as good"
            print("| %s | auto - %s (the better) | %s | %s to %s | %s |" % (problem, better, fmt(d), fmt(lo), fmt(hi),
                                                                           verdict))


if __name__ == "__main__":
    main()
