#!/usr/bin/python3
"""Checks every row of a study file written by an MPI sweep of the toy trial (tests/programs/toy_trial.cpp).

usage: check_study.py STUDY.h5 EXPECTED_TRIALS WORKERS [--grid]
"""
import json
import math
import sys

import h5py
import pandas as pd


def objective(row):
    x = row["param_x"] if "param_x" in row else 0.0
    n = row["param_n"] if "param_n" in row else 4
    opt = row["param_opt"] if "param_opt" in row else "a"
    return 1.0 - (x - 0.3) ** 2 - (n - 4) ** 2 / 100.0 + (0.05 if opt == "b" else 0.0)


EXPECTED = {  # mode -> (state, exit_code, signal, reason fragment)
    "ok": ("COMPLETE", 0, 0, ""),
    "fail": ("FAIL", 3, 0, "exited with status 3"),
    "crash": ("CRASH", -1, 11, "killed by signal 11"),
    "noreport": ("FAIL", 0, 0, "without reporting a final value"),
    "oom": ("OOM_GPU", 75, 0, "CUDA out of memory"),
    "hang": ("TIMEOUT", -1, 15, "ran past its timeout"),
}


def main():
    path, expected_trials, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    grid = "--grid" in sys.argv
    with h5py.File(path, "r", swmr=True) as f:
        assert f.attrs["schema_version"] == 3, dict(f.attrs)
        assert f.attrs["study_name"], "study_name attribute missing"
        trials = pd.DataFrame(f["trials"][:])
        steps = pd.DataFrame(f["intermediate"][:])
    for column in trials.columns:
        if trials[column].dtype == object:
            trials[column] = trials[column].str.decode("utf-8")
    assert len(trials) == expected_trials, "expected %d trials, found %d" % (expected_trials, len(trials))
    assert sorted(trials["number"]) == list(range(expected_trials)), "trial numbers are not 0..n-1 once each"
    assert set(trials["worker"]) <= set(range(1, workers + 1)), set(trials["worker"])
    if expected_trials >= 4 * workers:
        assert set(trials["worker"]) == set(range(1, workers + 1)), "a worker got no trial"
    for _, row in trials.iterrows():
        mode = row["param_mode"] if "param_mode" in row else "ok"
        state, exit_code, signal, reason = EXPECTED[mode]
        where = "trial %d (%s)" % (row["number"], mode)
        assert row["state"] == state, "%s: state %s, expected %s: %s" % (where, row["state"], state, row["reason"])
        assert row["exit_code"] == exit_code, "%s: exit code %d" % (where, row["exit_code"])
        assert row["signal"] == signal, "%s: signal %d" % (where, row["signal"])
        assert reason in row["reason"], "%s: reason %r" % (where, row["reason"])
        if state == "COMPLETE":
            assert math.isclose(row["value"], objective(row), rel_tol=1e-12), "%s: value %r" % (where, row["value"])
            attrs = json.loads(row["attrs"])
            assert attrs["mode"] == "ok" and math.isclose(attrs["twice"], 2 * row["value"]), attrs
        elif state != "OOM_GPU":
            assert math.isnan(row["value"]), "%s: a failed trial has a value" % where
        assert row["host"], where
        assert row["attempt"] == 1 and row["retry_of"] == -1, "%s: not a fresh trial" % where
        assert row["datetime_end"] >= row["datetime_start"] > 1.6e9, where
        assert math.isclose(row["duration"], row["datetime_end"] - row["datetime_start"]), where
        assert row["peak_rss_kb"] > 0, where
        assert ("toy trial %d mode %s" % (row["number"], mode)) in row["output_tail"], row["output_tail"]
        mine = steps[steps["trial"] == row["number"]].sort_values("step")
        assert list(mine["step"]) == [0, 1, 2], "%s: intermediate steps %s" % (where, list(mine["step"]))
        assert row["last_step"] == 2, where
        assert math.isclose(mine["value"].iloc[-1], objective(row), rel_tol=1e-12), where
    if grid:
        keys = trials[[c for c in trials.columns if c.startswith("param_")]].astype(str).agg("|".join, axis=1)
        assert keys.is_unique, "a grid point ran twice"
    print("%s: %d trials checked row by row (%s)" % (path, len(trials), dict(trials["state"].value_counts())))


if __name__ == "__main__":
    main()
