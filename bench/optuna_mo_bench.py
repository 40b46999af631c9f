#!/usr/bin/python3
"""Optuna's multi-objective samplers on the problems of mo_bench (bench/mo_bench.cpp: ZDT1-3 with 30
variables, DTLZ2 with 12), printing the same JSON lines: every trial's objective values and the time
spent in the sampler. Needs Debian's python3-optuna (3.1).

usage: optuna_mo_bench.py --sampler nsga2|tpe [--trials 500] [--seeds 5] [--problem NAME] [--seed K]
"""
import argparse
import json
import math
import time

import optuna


def zdt(x, which):
    g = 1 + 9 * sum(x[1:]) / (len(x) - 1)
    f1 = x[0]
    r = f1 / g
    if which == 1:
        h = 1 - math.sqrt(r)
    elif which == 2:
        h = 1 - r * r
    else:
        h = 1 - math.sqrt(r) - r * math.sin(10 * math.pi * f1)
    return [f1, g * h]


def dtlz2(x):
    g = sum((v - 0.5) ** 2 for v in x[2:])
    a, b = x[0] * math.pi / 2, x[1] * math.pi / 2
    return [(1 + g) * math.cos(a) * math.cos(b), (1 + g) * math.cos(a) * math.sin(b), (1 + g) * math.sin(a)]


PROBLEMS = {
    "dtlz2": (12, 3, dtlz2),
    "zdt1": (30, 2, lambda x: zdt(x, 1)),
    "zdt2": (30, 2, lambda x: zdt(x, 2)),
    "zdt3": (30, 2, lambda x: zdt(x, 3)),
}


class TimedSampler(optuna.samplers.BaseSampler):
    """Wraps a sampler and adds up the time spent in it (the objective's time is left out)."""

    def __init__(self, inner):
        self.inner = inner
        self.seconds = 0.0

    def _timed(self, name, *args):
        start = time.perf_counter()
        try:
            return getattr(self.inner, name)(*args)
        finally:
            self.seconds += time.perf_counter() - start

    def infer_relative_search_space(self, study, trial):
        return self._timed("infer_relative_search_space", study, trial)

    def sample_relative(self, study, trial, search_space):
        return self._timed("sample_relative", study, trial, search_space)

    def sample_independent(self, study, trial, name, distribution):
        return self._timed("sample_independent", study, trial, name, distribution)

    def before_trial(self, study, trial):
        return self._timed("before_trial", study, trial)

    def after_trial(self, study, trial, state, values):
        return self._timed("after_trial", study, trial, state, values)

    def reseed_rng(self):
        self.inner.reseed_rng()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sampler", required=True, choices=["nsga2", "tpe"])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--problem", default="")
    parser.add_argument("--seed", type=int, default=None, help="only this one of the seeds")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    for name, (n, m, f) in sorted(PROBLEMS.items()):
        if args.problem and args.problem != name:
            continue
        for seed in range(args.seeds):
            if args.seed is not None and seed != args.seed:
                continue
            if args.sampler == "nsga2":
                inner = optuna.samplers.NSGAIISampler(seed=seed)
            else:
                inner = optuna.samplers.TPESampler(seed=seed)
            sampler = TimedSampler(inner)
            study = optuna.create_study(directions=["minimize"] * m, sampler=sampler)
            study.optimize(lambda t: f([t.suggest_float("x%d" % i, 0.0, 1.0) for i in range(n)]), n_trials=args.trials)
            values = [t.values for t in study.trials]
            print(json.dumps({"tool": "optuna", "sampler": args.sampler, "problem": name, "seed": seed,
                              "values": values, "sampler_seconds": sampler.seconds}), flush=True)


if __name__ == "__main__":
    main()
