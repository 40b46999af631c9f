#!/usr/bin/python3
"""Optuna's TPE on the same functions and spaces as sampler_bench (bench/functions.hpp), printing the
same JSON lines. Needs Debian's python3-optuna (bench/run_sampler_bench.sh installs it).

usage: optuna_bench.py [--trials 200] [--seeds 10] [--function NAME] [--multivariate]
"""
import argparse
import json
import math
import sys
import time

import optuna


def branin(t):
    x1, x2 = t.suggest_float("x1", -5.0, 10.0), t.suggest_float("x2", 0.0, 15.0)
    b, c, s = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - s) * math.cos(x1) + 10


def rosenbrock4(t):
    x = [t.suggest_float("x%d" % i, -2.0, 2.0) for i in range(4)]
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(3))


def mixed(t):
    x = t.suggest_float("x", -5.0, 5.0)
    lr = t.suggest_float("lr", 1e-5, 1.0, log=True)
    n = t.suggest_int("n", 1, 20)
    b = t.suggest_int("b", 1, 1024, log=True)
    c = t.suggest_categorical("c", ["a", "b", "c", "d"])
    cat = {"b": 0.0, "c": 0.5, "a": 1.0, "d": 2.0}[c]
    return (x - 1.2) ** 2 + (math.log10(lr) + 2) ** 2 + (n - 7) ** 2 / 10 + (math.log2(b) - 6) ** 2 / 4 + cat


FUNCTIONS = {"branin": branin, "rosenbrock4": rosenbrock4, "mixed": mixed}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--function", default="")
    parser.add_argument("--multivariate", action="store_true")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    name = "tpe-multivariate" if args.multivariate else "tpe"
    for fn_name, fn in sorted(FUNCTIONS.items()):
        if args.function and args.function != fn_name:
            continue
        for seed in range(args.seeds):
            sampler = optuna.samplers.TPESampler(seed=seed, multivariate=args.multivariate)
            study = optuna.create_study(sampler=sampler)
            best, curve, ask_seconds = float("inf"), {}, 0.0
            for i in range(args.trials):
                t0 = time.perf_counter()
                trial = study.ask()
                value = fn(trial)  # parameters are sampled inside suggest_*: count that time too
                ask_seconds += time.perf_counter() - t0
                study.tell(trial, value)
                best = min(best, value)
                if (i + 1) % 50 == 0 or i + 1 == args.trials:
                    curve[str(i + 1)] = best
            print(json.dumps({"tool": "optuna", "sampler": name, "function": fn_name, "seed": seed,
                              "best": curve, "sampler_seconds": ask_seconds, "trials": args.trials}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
