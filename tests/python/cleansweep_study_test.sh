#!/bin/bash
# python/cleansweep_study.py on a study written by a real sweep: every kind of parameter column,
# states, intermediate values, attributes. usage: cleansweep_study_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
source "$src/tests/support/mpi_env.sh"
cat > s.yaml << YAML
study: {name: loader, direction: maximize, n_trials: 30, storage: $work/s.h5}
sampler: {kind: random, seed: 9}
trial: {command: ["$bin/toy_trial"], timeout: 30s}
space:
  x: {type: float, low: 0.0, high: 1.0}
  n: {type: int, low: 1, high: 8}
  opt: {type: categorical, choices: [sgd, adam]}
  m: {type: int, low: 2, high: 6, when: {opt: sgd}}
  width: {type: categorical, choices: [16, 32, 64]}
  flag: {type: categorical, choices: [true, false]}
  mode: {type: categorical, choices: [ok, curve, fail]}
  steps: 3
  step_sleep: 0.0
YAML
"${mpi[@]}" -np 3 "$bin/cleansweep" run s.yaml > run.txt || { cat run.txt; exit 1; }
PYTHONPATH=$src/python /usr/bin/python3 - "$work/s.h5" "$src/tests/fuzz/corpus/study_reader/six_trials.h5" << 'PY'
import sys
import pandas as pd
from pandas.api.types import is_float_dtype, is_int64_dtype, is_integer_dtype
from cleansweep_study import load_study

study = load_study(sys.argv[1])
t = study.trials
assert len(t) == 30 and list(t.index) == list(range(30)), t.index
assert study.direction == "maximize" and study.metric == "value"
assert study.param_names == ["x", "n", "opt", "m", "width", "flag", "mode", "steps", "step_sleep"]
# Typed parameter columns.
assert is_float_dtype(t["param_x"]) and t["param_x"].between(0, 1).all()
assert is_int64_dtype(t["param_n"]) and t["param_n"].between(1, 8).all()
assert isinstance(t["param_opt"].dtype, pd.CategoricalDtype)
assert list(t["param_opt"].cat.categories) == ["sgd", "adam"]
assert str(t["param_m"].dtype) == "Int64", t["param_m"].dtype      # an int that can be inactive
assert t.loc[t["param_opt"] == "adam", "param_m"].isna().all()
assert t.loc[t["param_opt"] == "sgd", "param_m"].between(2, 6).all()
assert list(t["param_width"].cat.categories) == [16, 32, 64]
assert set(t["param_width"]) <= {16, 32, 64}
assert list(t["param_flag"].cat.categories) == ["true", "false"]
assert (t["param_steps"] == 3).all()
# States and values.
assert list(t["state"].cat.categories)[:2] == ["RUNNING", "COMPLETE"]
for mode, state in (("ok", "COMPLETE"), ("curve", "COMPLETE"), ("fail", "FAIL")):
    assert (t.loc[t["param_mode"] == mode, "state"] == state).all(), (mode, t[["param_mode", "state"]])
assert t.loc[t["state"] == "FAIL", "value"].isna().all()
assert t.loc[t["state"] == "FAIL", "reason"].str.startswith("exited with status").all()
# Times, run fields, attributes.
assert str(t["datetime_start"].dt.tz) == "UTC" and (t["datetime_end"] >= t["datetime_start"]).all()
assert t["host"].map(len).gt(0).all() and set(t["worker"]) == {1, 2}
assert t["enqueued"].dtype == bool and not t["enqueued"].any()
assert (t["retry_of"] == -1).all()
# What each trial cost, on CPU workers: CPU time, no GPU time, no energy.
assert is_float_dtype(t["cpu_seconds"]) and (t["cpu_seconds"] >= 0).all(), t["cpu_seconds"]
assert (t["gpu_seconds"] == 0).all() and t["energy_j"].isna().all()
ok = t[t["param_mode"] == "ok"]
assert all(a["mode"] == "ok" for a in ok["attrs"])
assert "attr_mode" in study.user_attrs().columns
# Best trial, intermediate values and curves.
best = study.best_trial
assert best["value"] == t.loc[t["state"] == "COMPLETE", "value"].max()
assert list(study.completed()["value"]) == sorted(study.completed()["value"], reverse=True)
# Every trial reports three steps: 1..3 in mode curve, 0..2 in the others.
curve_trials = set(t.index[t["param_mode"] == "curve"])
steps = study.intermediate
assert len(steps) == 90 and set(steps["trial"]) == set(t.index) and len(curve_trials) > 0
assert set(steps.loc[steps["trial"].isin(curve_trials), "step"]) == {1, 2, 3}
assert set(steps.loc[~steps["trial"].isin(curve_trials), "step"]) == {0, 1, 2}
curves = study.curves()
assert list(curves.index) == [0, 1, 2, 3] and set(curves.columns) == set(t.index)
assert curves.loc[0, sorted(curve_trials)].isna().all()
assert "loader" in repr(study) and "30 trials" in repr(study)
print(f"cleansweep_study: {len(t)} trials, {len(curve_trials)} curves, best {best['value']:.4f}")
# A file written before the cost columns: they read as unknown.
old = load_study(sys.argv[2]).trials
assert len(old) > 0 and all(old[c].isna().all() for c in ("cpu_seconds", "gpu_seconds", "energy_j")), old.columns
PY
# A file that is not a study: a clear error.
/usr/bin/python3 -c "import h5py; h5py.File('$work/x.h5', 'w').close()"
if PYTHONPATH=$src/python /usr/bin/python3 -c "from cleansweep_study import load_study; load_study('$work/x.h5')" 2> err.txt; then
  echo "FAIL: loaded a file that is not a study" >&2; exit 1
fi
grep -q "not a cleansweep study file" err.txt || { cat err.txt >&2; exit 1; }
# Nor are a folder and a file without HDF5's signature, said at once, as `cleansweep show` says them.
mkdir -p "$work/folder.h5" && echo "not hdf5" > "$work/text.h5"
PYTHONPATH=$src/python /usr/bin/python3 - "$work" << 'PY'
import sys
import cleansweep_study as cs

looks = []
has_signature = cs._has_hdf5_signature
cs._has_hdf5_signature = lambda path: looks.append(path) or has_signature(path)
try:
    cs.load_study(f"{sys.argv[1]}/folder.h5")
    raise SystemExit("FAIL: loaded a folder")
except IsADirectoryError as e:
    assert str(e) == f"{sys.argv[1]}/folder.h5: a folder, not a study file: give a study's .h5 file", e
try:
    cs.load_study(f"{sys.argv[1]}/text.h5")
    raise SystemExit("FAIL: loaded a text file")
except cs.DamagedStudyError as e:
    assert "text.h5: not an HDF5 file (no HDF5 signature" in str(e), e
assert len(looks) == 1, f"no second read can change these verdicts, yet there were {len(looks)}"
PY
# Reads that keep failing: a file that changed during them is busy (try again, or longer), one that
# did not is damaged. The reader and the file's stamp are stand-ins, so the verdict is the only thing
# that can differ.
PYTHONPATH=$src/python /usr/bin/python3 - "$work/s.h5" << 'PY'
import itertools
import os
import shutil
import sys
import time
import cleansweep_study as cs

def torn(path, timeout):
    time.sleep(0.02)
    raise ValueError("a trial's attrs are not a JSON object")

real_guarded, cs._read_guarded = cs._read_guarded, torn
stamps = itertools.count()
cs._stamp = lambda path: next(stamps)  # every read sees the file change: a sweep writing it
start = time.monotonic()
try:
    cs.load_study(sys.argv[1], timeout=0.5)
    raise SystemExit("FAIL: a file that could never be read consistently loaded")
except cs.StudyReadTimeoutError as e:
    assert "no consistent copy" in str(e) and "longer timeout" in str(e), e
    assert not isinstance(e, cs.DamagedStudyError)
assert time.monotonic() - start < 5, "the timeout was not kept"
cs._stamp = lambda path: (1, 2, 3)  # the file does not change: damaged, after `retries` reads
try:
    cs.load_study(sys.argv[1], timeout=30)
    raise SystemExit("FAIL: a file that never reads back loaded")
except cs.DamagedStudyError as e:
    assert "damaged" in str(e), e
    assert "a trial's attrs are not a JSON object" in str(e), f"the verdict does not say why: {e}"
assert time.monotonic() - start < 10, "a damaged file took the whole timeout"
# The reading child itself, out of time: one that mostly waited (a busy machine starves it) is too
# slow, not damaged; one that computed all the while (HDF5 round a loop on a damaged file) is.
cs._read_guarded = real_guarded
kept_stamp, cs._stamp = cs._stamp, lambda path: (1, 2, 3)
real_read = cs._read
cs._read = lambda path: time.sleep(3600)  # runs in the forked child: waits, computes nothing
try:
    cs.load_study(sys.argv[1], timeout=0.6)
    raise SystemExit("FAIL: a reader that never answered loaded")
except cs.StudyReadTimeoutError as e:
    assert "of it computing" in str(e) and "longer timeout" in str(e) and "damaged" not in str(e), e
cs._read, cs._stamp = real_read, kept_stamp
# (A spinning child's share of the processor depends on the machine's load: judged here directly.)
assert isinstance(cs._out_of_time("s.h5", 1.0, 0.9), cs.DamagedStudyError)
assert isinstance(cs._out_of_time("s.h5", 1.0, None), cs.DamagedStudyError)  # no /proc: as before
assert isinstance(cs._out_of_time("s.h5", 1.0, 0.1), cs.StudyReadTimeoutError)
# The default timeout grows with the file, as `cleansweep show`'s does: 5 s and 1 s per 32 MB.
given = []
def recorded(path, timeout):
    given.append(timeout)
    raise OSError(f"{path}: Can't read data (wrong B-tree signature)")
cs._read_guarded = recorded
cs._stamp = lambda path: (2, 3)  # a file that does not change
large = sys.argv[1].replace("s.h5", "large.h5")
shutil.copy(sys.argv[1], large)
os.truncate(large, 320_000_000)  # 320 MB (sparse)
try:
    cs.load_study(large)
    raise SystemExit("FAIL: a file that never reads back loaded")
except cs.DamagedStudyError as e:
    assert str(e) == f"{large}: the study file is damaged: Can't read data (wrong B-tree signature)", e
assert 14.0 < given[0] <= 15.0, f"a 320 MB file's first read was given {given[0]} s, not about 15"
PY
# The reading child's memory limit: 2 GiB beyond what the process already holds (here 1 GiB of
# arrays, as a notebook might), so a damaged length cannot take the machine's memory.
PYTHONPATH=$src/python /usr/bin/python3 - << 'PY'
import numpy as np
import cleansweep_study as cs

held = np.ones(1 << 27)  # 1 GiB the process holds before it reads
cs._limit_memory(file_size=1000)
room = bytearray(1 << 30)  # within the 2 GiB
try:
    bytearray(4 << 30)
    raise SystemExit("FAIL: the reading child could allocate 4 GiB more")
except MemoryError:
    pass
PY
# A row caught in the middle of its write (texts that disagree with its checksum, or a block HDF5
# cannot read) is read again on its own, from the file opened anew, while the rest of the read
# stands; a row that never settles fails the read, for load_study to read the whole file again.
# The file's opens are stand-ins that serve the real table with rows torn.
PYTHONPATH=$src/python /usr/bin/python3 - "$work/s.h5" << 'PY'
import sys
import h5py
import numpy as np
import cleansweep_study as cs

with h5py.File(sys.argv[1], "r") as f:
    real = {k: f[k][:] for k in ("trials", "intermediate")}
    attrs = dict(f.attrs)

class Table:
    def __init__(self, rows, unreadable):
        self.rows, self.unreadable, self.shape, self.dtype = rows, unreadable, rows.shape, rows.dtype
    def __getitem__(self, key):
        if any(i in range(len(self.rows))[key] for i in self.unreadable):
            raise OSError("Can't read data (address of object past end of allocation)")
        return self.rows[key]

class File:
    def __init__(self, table):
        self.attrs, self.table = attrs, table
    def __contains__(self, name):
        return name in ("trials", "intermediate")
    def __getitem__(self, name):
        return self.table if name == "trials" else real[name]
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False

def torn(rows):
    copy = real["trials"].copy()
    copy["attrs"][rows] = b'{"half": "writ'
    return copy

opens = []
def serve(plan):
    def open_(path):
        rows, unreadable = plan[min(len(opens), len(plan) - 1)]
        opens.append(path)
        return File(Table(rows, unreadable))
    return open_

# Open 1: row 5 torn, row 7 unreadable; open 2: row 5 still torn; open 3: all settled.
cs._bounded_retries_open = serve([(torn([5]), [7]), (torn([5]), []), (real["trials"], [])])
_, trials, _, _, _ = cs._read(sys.argv[1])
assert len(opens) == 3, opens
for name in real["trials"].dtype.names:  # every row as the real table has it (NaN equal to NaN)
    np.testing.assert_array_equal(trials[name], real["trials"][name], err_msg=name)
# A row that never settles: six more opens, then the read fails, naming it; many are counted.
for rows, verdict in (([2], "trial 2: its texts (reason, output tail, attrs) do not match their checksum"),
                      (list(range(3, 30)), "trial 3 and 26 more: their texts (reason, output tail, attrs) do "
                                           "not match their checksums")):
    opens.clear()
    cs._bounded_retries_open = serve([(torn(rows), [])])
    try:
        cs._read(sys.argv[1])
        raise SystemExit("FAIL: a row that never settled was returned")
    except cs.RowsDisagreeError as e:
        assert str(e) == verdict, e
    assert len(opens) == 7, opens
# Such rows in a file that did not change while they were read: damaged at once, not after
# `retries` more whole reads (which, for a large file, ran into the timeout and said so instead).
calls = []
def disagree(path, timeout):
    calls.append(path)
    raise cs.RowsDisagreeError("trial 3 and 26 more: their texts do not match their checksums")
real_read, cs._read_guarded = cs._read_guarded, disagree
try:
    cs.load_study(sys.argv[1])
    raise SystemExit("FAIL: rows that never agreed loaded")
except cs.DamagedStudyError as e:
    assert str(e).endswith("damaged: trial 3 and 26 more: their texts do not match their checksums"), e
assert len(calls) == 1, calls
cs._read_guarded = real_read
# Through load_study (which reads in a child): the torn rows come back whole.
opens.clear()
cs._bounded_retries_open = serve([(torn([0, 29]), []), (real["trials"], [])])
study = cs.load_study(sys.argv[1])
assert len(study.trials) == 30 and study.trials["attrs"].map(lambda a: isinstance(a, dict)).all()
PY
echo "PASS: cleansweep_study"
