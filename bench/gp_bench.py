#!/usr/bin/python3
"""Samplers against each other on synthetic functions, models trained with scikit-learn and the
HPOLib tables (issue 37, point 6): our gp, tpe, auto and random (build/bin/sampler_bench --serve),
the scikit-learn GP-BO reference (bench/sklearn_gp_bo.py) and Optuna 3.1's TPE, one trial after
another, the same objective code for all. Prints one JSON line per (problem, method, seed) with the
best value so far after every trial; bench/gp_summarize.py makes the tables.

usage: gp_bench.py SAMPLER_BENCH [--seeds 10] [--jobs 2] [--problems a,b] [--methods gp,tpe]
"""
import argparse
import functools
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sklearn_gp_bo  # noqa: E402

# The tables of ../shared/benchmarks/hpolib/ beside the checkout, or where HPOLIB_DIR says.
HPOLIB = os.environ.get("HPOLIB_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                                                      "benchmarks", "hpolib")


def f(name, low, high, log=False):
    return {"name": name, "type": "float", "low": float(low), "high": float(high), "log": log}


def i(name, low, high, log=False):
    return {"name": name, "type": "int", "low": int(low), "high": int(high), "log": log}


def c(name, choices):
    return {"name": name, "type": "categorical", "choices": list(choices)}


# --- synthetic functions (minimise) -------------------------------------------------------------
def branin(p):
    x1, x2 = p["x1"], p["x2"]
    b, cc, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + cc * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


HARTMANN_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
HARTMANN_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
              [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]


def hartmann6(p):
    x = [p["x%d" % k] for k in range(6)]
    alpha = [1.0, 1.2, 3.0, 3.2]
    return -sum(alpha[r] * math.exp(-sum(HARTMANN_A[r][k] * (x[k] - HARTMANN_P[r][k] * 1e-4) ** 2 for k in range(6)))
                for r in range(4))


def rosenbrock4(p):
    x = [p["x%d" % k] for k in range(4)]
    return sum(100 * (x[k + 1] - x[k] ** 2) ** 2 + (1 - x[k]) ** 2 for k in range(3))


def styblinski_tang(p):
    return sum(v ** 4 - 16 * v ** 2 + 5 * v for v in p.values()) / 2


def levy(p):
    w = [1 + (p["x%d" % k] - 1) / 4 for k in range(len(p))]
    s = math.sin(math.pi * w[0]) ** 2 + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)
    return s + sum((v - 1) ** 2 * (1 + 10 * math.sin(math.pi * v + 1) ** 2) for v in w[:-1])


def mixed(p):  # bench/functions.hpp's Mixed
    cat = {"b": 0.0, "c": 0.5, "a": 1.0, "d": 2.0}[p["c"]]
    return ((p["x"] - 1.2) ** 2 + (math.log10(p["lr"]) + 2) ** 2 + (p["n"] - 7) ** 2 / 10
            + (math.log2(p["b"]) - 6) ** 2 / 4 + cat)


# --- models trained with scikit-learn's bundled data sets (minimise the cross-validated loss) ----
@functools.lru_cache(maxsize=None)
def _data(name):
    from sklearn import datasets
    return datasets.load_digits(return_X_y=True) if name == "digits" else datasets.load_diabetes(return_X_y=True)


def svc_digits(p):
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC
    X, y = _data("digits")
    model = SVC(C=p["C"], gamma=p["gamma"])
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    return 1.0 - float(np.mean(cross_val_score(model, X, y, cv=folds)))


def gbr_diabetes(p):
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.model_selection import KFold, cross_val_score
    X, y = _data("diabetes")
    model = GradientBoostingRegressor(n_estimators=p["n_estimators"], learning_rate=p["learning_rate"],
                                      max_depth=p["max_depth"], subsample=p["subsample"],
                                      min_samples_leaf=p["min_samples_leaf"], random_state=0)
    folds = KFold(3, shuffle=True, random_state=0)
    return -float(np.mean(cross_val_score(model, X, y, cv=folds, scoring="neg_mean_squared_error")))


# --- HPOLib: real MLP results, a table lookup (regret: value - the table's best) ----------------
@functools.lru_cache(maxsize=None)
def _hpolib(data_set):
    with open(os.path.join(HPOLIB, "hpolib-%s.json" % data_set)) as fh:
        return json.load(fh)


def hpolib_space(data_set, all_categorical):
    space = []
    for name, kind in _hpolib(data_set)["space"].items():
        if isinstance(kind, list):
            space.append(c(name, kind))
        elif all_categorical:
            space.append(c(name, ["v%d" % k for k in range(kind)]))
        else:
            space.append(i(name, 0, kind - 1))
    return space


def hpolib_regret(data_set, p):
    table = _hpolib(data_set)
    key = ""
    for name, kind in table["space"].items():
        v = p[name]
        key += str(kind.index(v) if isinstance(kind, list) else int(str(v).lstrip("v")))
    return table["table"][key] - table["best"]


def problems():
    out = {
        "branin": ([f("x1", -5, 10), f("x2", 0, 15)], branin, 50, 0.397887),
        "hartmann6": ([f("x%d" % k, 0, 1) for k in range(6)], hartmann6, 50, -3.32237),
        "rosenbrock4": ([f("x%d" % k, -2, 2) for k in range(4)], rosenbrock4, 50, 0.0),
        "mixed": ([f("x", -5, 5), f("lr", 1e-5, 1, True), i("n", 1, 20), i("b", 1, 1024, True),
                   c("c", ["a", "b", "c", "d"])], mixed, 50, 0.0),
        "styblinski_tang8": ([f("x%d" % k, -5, 5) for k in range(8)], styblinski_tang, 100, -39.16617 * 8),
        "styblinski_tang10": ([f("x%d" % k, -5, 5) for k in range(10)], styblinski_tang, 100, -39.16617 * 10),
        "levy8": ([f("x%d" % k, -10, 10) for k in range(8)], levy, 100, 0.0),
        "levy10": ([f("x%d" % k, -10, 10) for k in range(10)], levy, 100, 0.0),
        "svc_digits": ([f("C", 1e-2, 1e3, True), f("gamma", 1e-5, 1e-1, True)], svc_digits, 40, None),
        "gbr_diabetes": ([i("n_estimators", 10, 100), f("learning_rate", 0.01, 0.5, True), i("max_depth", 1, 6),
                          f("subsample", 0.5, 1.0), i("min_samples_leaf", 1, 20)], gbr_diabetes, 50, None),
    }
    for data_set in ("naval_propulsion", "parkinsons_telemonitoring", "protein_structure", "slice_localization"):
        regret = functools.partial(hpolib_regret, data_set)
        out["hpolib_" + data_set] = (hpolib_space(data_set, False), regret, 100, 0.0)
        out["hpolib_cat_" + data_set] = (hpolib_space(data_set, True), regret, 100, 0.0)
    return out


# Problems the scikit-learn reference skips: the HPOLib tables (its one-hot inputs for 9
# parameters make each of its 100 trials slow) — ours and Optuna's TPE run them.
SKLEARN_SKIPS = ("hpolib_",)


def space_yaml(space):
    lines = []
    for p in space:
        if p["type"] == "categorical":
            lines.append("  %s: {type: categorical, choices: [%s]}" % (p["name"], ", ".join(p["choices"])))
        else:
            low, high = (repr(float(p["low"])), repr(float(p["high"]))) if p["type"] == "float" else (p["low"], p["high"])
            log = ", log: true" if p.get("log") else ""
            lines.append("  %s: {type: %s, low: %s, high: %s%s}" % (p["name"], p["type"], low, high, log))
    return "\n".join(lines) + "\n"


def run_ours(binary, kind, space, objective, trials, seed):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        fh.write(space_yaml(space))
    try:
        proc = subprocess.Popen([binary, "--serve", fh.name, "--sampler", kind, "--seed", str(seed), "--trials",
                                 str(trials)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        header = json.loads(proc.stdout.readline())
        values = []
        for _ in range(trials):
            params = json.loads(proc.stdout.readline())
            value = objective(params)
            values.append(value)
            proc.stdin.write(("fail" if value is None else repr(float(value))) + "\n")
            proc.stdin.flush()
        seconds = json.loads(proc.stdout.readline())["sampler_seconds"]
        proc.wait()
    finally:
        os.unlink(fh.name)
    return values, seconds, header


def run_optuna_tpe(space, objective, trials, seed):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    dists = {}
    for p in space:
        if p["type"] == "categorical":
            dists[p["name"]] = optuna.distributions.CategoricalDistribution(p["choices"])
        elif p["type"] == "int":
            dists[p["name"]] = optuna.distributions.IntDistribution(p["low"], p["high"], log=p.get("log", False))
        else:
            dists[p["name"]] = optuna.distributions.FloatDistribution(p["low"], p["high"], log=p.get("log", False))
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    values, seconds = [], 0.0
    for _ in range(trials):
        t0 = time.perf_counter()
        trial = study.ask(dists)
        seconds += time.perf_counter() - t0
        value = objective(dict(trial.params))
        values.append(value)
        if value is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, value)
    return values, seconds, {}


def run_task(task):
    """Every method on one (problem, seed); an objective that is deterministic is computed once per
    distinct point (auto repeats gp's or tpe's trials exactly)."""
    binary, name, seed, methods = task
    space, objective, trials, optimum = problems()[name]
    cache = {}

    def cached(params):
        key = json.dumps(params, sort_keys=True)
        if key not in cache:
            cache[key] = objective(params)
        return cache[key]

    lines = []
    for method in methods:
        if method == "sklearn-gp" and name.startswith(SKLEARN_SKIPS):
            continue
        t0 = time.perf_counter()
        if method == "sklearn-gp":
            values = sklearn_gp_bo.minimize_gp(cached, space, trials, seed)
            seconds, header = None, {}
        elif method == "optuna-tpe":
            values, seconds, header = run_optuna_tpe(space, cached, trials, seed)
        else:
            values, seconds, header = run_ours(binary, method, space, cached, trials, seed)
        best, curve = math.inf, []
        for v in values:
            best = min(best, math.inf if v is None else v)
            curve.append(best)
        lines.append({"problem": name, "method": method, "seed": seed, "trials": trials, "optimum": optimum,
                      "dims": len(space), "best": curve, "chose": header.get("sampler"),
                      "reason": header.get("reason"), "sampler_seconds": seconds,
                      "wall_seconds": time.perf_counter() - t0})
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sampler_bench")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--problems", default="")
    parser.add_argument("--methods", default="gp,tpe,auto,random,sklearn-gp,optuna-tpe")
    args = parser.parse_args()
    names = args.problems.split(",") if args.problems else list(problems())
    unknown = set(names) - set(problems())
    if unknown:
        sys.exit("unknown problems: %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(problems())))
    methods = args.methods.split(",")
    tasks = [(args.sampler_bench, n, s, methods) for s in range(args.seeds) for n in names]
    with multiprocessing.Pool(args.jobs) as pool:
        for lines in pool.imap_unordered(run_task, tasks):
            for line in lines:
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
