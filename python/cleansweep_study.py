"""Load a cleansweep study file into pandas DataFrames (needs h5py and pandas; on Debian the
packages python3-h5py and python3-pandas).

    from cleansweep_study import load_study

    study = load_study("results/fashion-quick.h5")     # also while the sweep runs
    study.trials                # one row per trial, indexed by number
    study.trials["param_lr"]    # a parameter column, typed from the search space
    study.completed()           # the COMPLETE trials, best first (by the first metric)
    study.best_trial            # a Series, or None when no trial completed
    study.metrics               # [(name, direction), ...]: one, or several for a multi-metric study
    study.pareto_front          # a multi-metric study's Pareto-optimal trials (the `pareto` column)
    study.intermediate          # trial, step, value, time: one row per report
    study.curves()              # learning curves: one row per step, one column per trial
    study.attempts              # earlier attempts of trials that went on from a checkpoint
    study.attrs                 # direction, metric, sampler, seed, config (YAML text), ...

Columns of `trials`: `state` (an ordered categorical), `value`, one column per parameter,
`param_<name>` as in the file (floats as float64; ints as int64, or pandas' nullable Int64 when the parameter can be
inactive; categorical parameters as pandas categoricals in config order, inactive values missing),
`datetime_start` and `datetime_end` as UTC timestamps, `datetime_worker_free` too (when the trial's worker
became free for it: its previous trial's end; missing for a worker's first trial and in files written
before it existed), `duration` in seconds, the run fields
(`worker`, `host`, `gpu`, `exit_code`, `signal`, `peak_rss_kb`, `attempt`, `retry_of`, `enqueued`,
`sampler_ms`, `last_step`, `reason`, `output_tail`), `checkpoint_step` and `resumed_from` (the last
step whose checkpoint the trial declared, the step its latest attempt resumed from; -1 for none and in
files written before checkpoints: docs/checkpoints.md), `parent` and `generation` (population-based
training's lineage: the trial whose checkpoint it started from, -1 for none, and how many such starts lie
behind it: docs/samplers.md), what each trial cost (`cpu_seconds`, `gpu_seconds`,
`energy_j`; NaN when unknown, and in files written before them) and `attrs`, the trial's user attributes as a
dict. A study of several metrics also has `value_<metric>` per metric (`value` is the first's) and `pareto`
(bool: on the Pareto front of the COMPLETE trials). `violation` says how far a COMPLETE trial lies outside
`study.constraints` (0 inside; NaN without constraints): `completed()`, `best_trial` and `pareto_front`
leave out trials with violation > 0. `user_attrs()` spreads those into columns. docs/study-format.md describes the file itself.
"""

import json
import os
import pickle
import resource
import select
import signal
import time
import zlib

import h5py
import numpy as np
import pandas as pd

STATES = ["RUNNING", "COMPLETE", "PRUNED", "FAIL", "CRASH", "OOM_GPU", "OOM_HOST", "TIMEOUT", "INTERRUPTED", "PAUSED"]
_TEXT_FIELDS = ["state", "host", "gpu", "workers", "reason", "output_tail", "attrs"]
_TIMES = ["datetime_start", "datetime_end", "datetime_worker_free"]
_COST = ["cpu_seconds", "gpu_seconds", "energy_j", "violation"]  # NaN in files written before them


class Study:
    """What a study file holds, as DataFrames. Build one with load_study()."""

    def __init__(self, path, attrs, space, trials, intermediate, attempts=None):
        self.path = path
        self.attrs = attrs
        self.space = space  # one dict per parameter: name, kind, bounds or choices, when
        self.trials = trials
        self.intermediate = intermediate
        # One row per ended attempt of a trial that went on under its number from a checkpoint
        # (its latest attempt is its row in `trials`): trial, attempt, state, resumed_from,
        # checkpoint_step, last_step, datetime_start/end, worker, host, gpu, exit_code, signal,
        # peak_rss_kb, cpu_seconds, gpu_seconds, energy_j, reason. What a trial cost in all is its
        # row plus these: trials.cpu_seconds + attempts.groupby("trial").cpu_seconds.sum().
        self.attempts = attempts if attempts is not None else pd.DataFrame(columns=["trial", "attempt"])

    @property
    def direction(self):
        return self.attrs.get("direction", "minimize")

    @property
    def metric(self):
        return self.attrs.get("metric", "value")

    @property
    def metrics(self):
        """The objectives as (name, direction) pairs, in the config's order."""
        if "metrics" in self.attrs:  # files since issue 18
            return [(m["name"], m["direction"]) for m in json.loads(self.attrs["metrics"])]
        return [(self.metric, self.direction)]

    @property
    def pareto_front(self):
        """A multi-metric study's Pareto-optimal COMPLETE trials, by the first metric best first;
        for a single metric, the best trial(s)."""
        if "pareto" in self.trials:
            front = self.trials[self.trials["pareto"]]
            return front.sort_values("value", ascending=self.direction != "maximize", kind="stable")
        done = self.completed()
        return done[done["value"] == done["value"].iloc[0]] if not done.empty else done

    @property
    def param_names(self):
        return [p["name"] for p in self.space]

    def completed(self):
        """COMPLETE trials, best first."""
        done = self.trials[(self.trials["state"] == "COMPLETE") & ~(self.trials["violation"] > 0)]
        return done.sort_values("value", ascending=self.direction != "maximize", kind="stable")

    @property
    def best_trial(self):
        done = self.completed()
        return None if done.empty else done.iloc[0]

    def curves(self):
        """Intermediate values: one row per step, one column per trial."""
        return self.intermediate.pivot_table(index="step", columns="trial", values="value")

    def user_attrs(self):
        """The trials' user attributes as columns `attr_<key>`, indexed by trial number."""
        spread = pd.json_normalize(self.trials["attrs"].tolist()).add_prefix("attr_")
        spread.index = self.trials.index
        return spread

    def __repr__(self):
        counts = self.trials["state"].value_counts()
        states = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        return f"<Study {self.attrs.get('study_name', '?')} in {self.path}: {len(self.trials)} trials ({states})>"


def _text(column):
    return [v.decode("utf-8").rstrip("\0") if isinstance(v, bytes) else str(v).rstrip("\0") for v in column]


def _choice_values(spec):
    """The values a categorical (or fixed) parameter's column holds, in config order."""
    values = spec["choices"] if spec["kind"] == "categorical" else [spec["value"]]
    return [("true" if v else "false") if isinstance(v, bool) else v for v in values]


def _param_column(raw, spec):
    kind = spec["kind"]
    if kind == "float":
        return pd.Series(np.asarray(raw, dtype="float64"))
    if kind == "int":
        column = pd.Series(np.asarray(raw, dtype="float64"))
        if raw.dtype.kind in "iu":  # always active: stored as int64
            return pd.Series(np.asarray(raw, dtype="int64"))
        return column.round().astype("Int64")  # stored as float64 with NaN when inactive
    values = _choice_values(spec)
    if raw.dtype.kind in "SUO":  # text: the empty string is "inactive"
        texts = pd.Series(_text(raw)).replace("", np.nan)
        categories = [str(v) for v in values]
        return pd.Series(pd.Categorical(texts, categories=categories))
    numbers = pd.Series(np.asarray(raw, dtype="float64"))
    categories = sorted(set(float(v) for v in values), key=[float(v) for v in values].index)
    if raw.dtype.kind in "iu" or all(float(v).is_integer() for v in values):
        numbers = numbers.round().astype("Int64")
        categories = [int(v) for v in categories]
    return pd.Series(pd.Categorical(numbers, categories=categories))


class DamagedStudyError(ValueError):
    """The file is a study file (or claims to be) but cannot be read back."""


class StudyReadTimeoutError(TimeoutError):
    """No consistent copy of a study file could be read in the time given: a sweep changed the file
    during every read, or the machine was too busy to give the reader the processor (it mostly
    waited). Nothing says it is damaged; read it again, or with a longer `timeout`."""


def _bounded_retries_open(path):
    """Opens `path` for SWMR reading with HDF5's metadata retries bounded at 20 (its default, 100
    with sleeps doubling from 1 ns, keeps a damaged file busy for hours). h5py has no setting for
    it, so the C call goes through ctypes to the libhdf5 h5py loaded; without it, a plain open."""
    try:
        import ctypes

        with open("/proc/self/maps") as maps:
            lib = next(line.split()[-1] for line in maps if "libhdf5" in line and ".so" in line and "_hl" not in line)
        hdf5 = ctypes.CDLL(lib)
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        if hdf5.H5Pset_metadata_read_attempts(ctypes.c_int64(fapl.id), ctypes.c_uint(20)) < 0:
            raise OSError("H5Pset_metadata_read_attempts failed")
        flags = h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ
        return h5py.File(h5py.h5f.open(os.fsencode(path), flags, fapl=fapl))
    except (StopIteration, OSError, AttributeError):
        return h5py.File(path, "r", swmr=True)


def _read(path):
    with _bounded_retries_open(path) as f:
        if "schema_version" not in f.attrs or "trials" not in f:
            raise ValueError(f"{path}: not a cleansweep study file (no schema_version attribute or /trials)")
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        for k, v in list(attrs.items()):
            if isinstance(v, np.generic):
                attrs[k] = v.item()
        trials, unsettled = _read_rows(f["trials"])
        intermediate = f["intermediate"][:]
        attempts = f["attempts"][:] if "attempts" in f else None  # files since checkpoints (issue 17)
        params = f["params"][:] if "params" in f else None  # parameters trials defined (issue 39)
    # Rows caught in a write (a few, the newest) are read again on their own, from the file opened
    # anew, waiting 20 ms to 640 ms between tries, while the rest of the read stands; retrying the
    # whole file does not converge on a busy study, where some row is nearly always being rewritten.
    for attempt in range(6):
        if not unsettled:
            break
        time.sleep(0.02 * 2**attempt)
        try:
            with _bounded_retries_open(path) as f:
                unsettled = _reread_rows(f["trials"], unsettled, trials)
        except OSError:
            continue  # caught in the middle of a flush: the next try
    if unsettled:
        first = f"trial {int(trials[unsettled[0]]['number'])}"
        raise RowsDisagreeError(
            f"{first}: its texts (reason, output tail, attrs) do not match their checksum" if len(unsettled) == 1 else
            f"{first} and {len(unsettled) - 1} more: their texts (reason, output tail, attrs) do not match their checksums")
    return attrs, trials, intermediate, attempts, params


class RowsDisagreeError(ValueError):
    """Rows of /trials whose texts disagreed with their checksums at every read for 1.3 s."""


_BLOCK_ROWS = 256


def _row_settled(row):
    """True when a one-row slice of /trials reads back whole: its texts decode, its attrs are a JSON
    object, and they agree with the row's checksum."""
    try:
        _decoded_text(row)
        _check_text_crcs(row)
    except ValueError:  # UnicodeDecodeError too
        return False
    return True


def _read_block(dataset, first, into):
    """Rows [first, first + len(into)) of /trials into `into` with one read; a block HDF5 cannot read
    (a text's heap address past the end this open knows of) is read row by row. Returns, per row,
    whether it was read."""
    read = np.zeros(len(into), dtype=bool)
    try:
        into[:] = dataset[first : first + len(into)]
        read[:] = True
    except OSError:
        for i in range(len(into)):
            try:
                into[i : i + 1] = dataset[first + i : first + i + 1]
                read[i] = True
            except OSError:
                pass
    return read


def _read_rows(dataset):
    """The rows of /trials, and the indices of those caught in the middle of their write; the rows
    are checked one by one only when the whole table does not check out."""
    rows = np.zeros(dataset.shape[0], dtype=dataset.dtype)
    read = np.ones(len(rows), dtype=bool)
    for first in range(0, len(rows), _BLOCK_ROWS):
        read[first : first + _BLOCK_ROWS] = _read_block(dataset, first, rows[first : first + _BLOCK_ROWS])
    if _row_settled(rows[read]):
        return rows, np.flatnonzero(~read).tolist()
    return rows, [i for i in range(len(rows)) if not (read[i] and _row_settled(rows[i : i + 1]))]


def _reread_rows(dataset, unsettled, rows):
    """Reads the `unsettled` rows of /trials again into `rows` and returns those still caught in a
    write. Runs of consecutive rows are read a block at a time (a damaged file can have every row
    here, and a read per row took seconds for 20,000); a row that reads back as it was is not
    checked again: it cannot agree now."""
    still = []
    k = 0
    while k < len(unsettled):
        end = k + 1
        while end < len(unsettled) and end - k < _BLOCK_ROWS and unsettled[end] == unsettled[end - 1] + 1:
            end += 1
        first, count = unsettled[k], end - k
        block = rows[first : first + count].copy()
        changed = _read_block(dataset, first, block) & ~_same_rows(block, rows[first : first + count])
        for i in range(count):
            if changed[i] and _row_settled(block[i : i + 1]):
                rows[first + i] = block[i]
            else:
                still.append(first + i)
        k = end
    return still


def _same_rows(a, b):
    """Per row: every cell of `a` equals `b`'s (NaN equals NaN)."""
    same = np.ones(len(a), dtype=bool)
    for name in a.dtype.names:
        x, y = a[name], b[name]
        equal = np.asarray(x == y, dtype=bool)
        if x.dtype.kind == "f":
            equal |= np.isnan(x) & np.isnan(y)
        same &= equal.reshape(len(a), -1).all(axis=1)  # a field with a shape: all of it
    return same


def _limit_memory(file_size):
    """In the reading child: a damaged length that asks HDF5 for terabytes fails at once instead of
    taking the machine's memory. As in `cleansweep show`, the child may allocate 2 GiB, or 32 bytes a
    byte of file if more, beyond what the process (a notebook's, maybe large) already holds."""
    try:
        with open("/proc/self/status") as status:
            held = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
        limit = held + max(2 << 30, 32 * file_size)
        _, hard = resource.getrlimit(resource.RLIMIT_DATA)
        resource.setrlimit(resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    except (OSError, ValueError, StopIteration):
        pass  # no /proc, or a limit we may not set: read without one


def _out_of_time(path, spent, computing):
    """The verdict on a reading child that ran out of time: damaged if it computed most of the while
    (HDF5 round a loop on a damaged file), too slow if it mostly waited (a busy machine starved it:
    a wall-clock deadline alone called healthy files damaged then)."""
    if computing is not None and computing < spent / 2:
        return StudyReadTimeoutError(
            f"{path}: reading it did not finish within {spent:.1f} s, only {computing:.1f} s of it computing: "
            "the machine is busy or the file slow to read; read it again, or call load_study with a longer timeout")
    return DamagedStudyError(
        f"{path}: the study file is damaged: reading it did not finish in time (a healthy file on slow "
        "storage may need load_study(path, timeout=...) longer than the default)")


def _processor_seconds(pid):
    """The processor time (user and system) process `pid` has used, from /proc; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # the name before may hold spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
    except (OSError, IndexError, ValueError):
        return None


def _has_hdf5_signature(path):
    """HDF5's signature at byte 0, 512, 1024, 2048, ... (a user block may come first), as HDF5 looks.
    Not h5py.is_hdf5: with HDF5 1.12 and later that opens the file, which a damaged one can crash."""
    with open(path, "rb") as f:
        size, offset = os.fstat(f.fileno()).st_size, 0
        while offset + 8 <= size:
            f.seek(offset)
            if f.read(8) == b"\x89HDF\r\n\x1a\n":
                return True
            offset = 512 if offset == 0 else 2 * offset
    return False


def _read_guarded(path, timeout):
    """_read in a forked child. HDF5 follows unchecksummed lengths in a damaged file's raw data (a
    segfault, or an allocation without bound), so, like `cleansweep show`, the reading happens where
    a crash or a hang ends only the child; the answer comes back pickled through a pipe."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such study file")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: read, send, and leave without running the parent's exit handlers
        os.close(read_end)
        try:
            _limit_memory(os.stat(path).st_size)
            payload = pickle.dumps(("ok", _read(path)))
        except BaseException as e:  # noqa: BLE001 - every failure goes back to the parent as text
            payload = pickle.dumps(("error", type(e).__name__, str(e)))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    started = time.monotonic()
    chunks, deadline = [], started + timeout
    with os.fdopen(read_end, "rb") as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                computing = _processor_seconds(pid)
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise _out_of_time(path, time.monotonic() - started, computing)
            chunk = os.read(pipe.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        raise DamagedStudyError(f"{path}: the study file is damaged: reading it crashed ({name})")
    answer = pickle.loads(b"".join(chunks))
    if answer[0] == "ok":
        return answer[1]
    kind, message = answer[1], answer[2]
    if kind == "RowsDisagreeError":
        raise RowsDisagreeError(message)
    if kind == "ValueError":
        raise ValueError(message)
    if kind == "FileNotFoundError":
        raise FileNotFoundError(message)
    raise OSError(f"{path}: {message}")


def _attrs_cell(text):
    """A trial's attrs: a dict, or {} for text that is not a JSON object of sane depth."""
    try:
        value = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return None  # torn by a concurrent write, or damaged: the caller decides
    return value if isinstance(value, dict) else {}


def _stamp(path):
    """What changes when a writer writes the file: size, modification time, inode."""
    try:
        st = os.stat(path)
        return st.st_size, st.st_mtime_ns, st.st_ino
    except OSError:
        return None


def _decoded_text(raw):
    """The text columns, decoded, and each trial's attrs parsed. ValueError when a row was caught in
    the middle of its write (SWMR does not order the variable-length strings of HDF5's heap)."""
    text = {name: _text(raw[name]) for name in _TEXT_FIELDS if name in raw.dtype.names}  # UnicodeDecodeError
    cells = [_attrs_cell(a) for a in text.get("attrs", [])]
    if None in cells:
        raise ValueError("a trial's attrs are not a JSON object")
    return text, cells


def _check_text_crcs(raw):
    """Files since issue 18 keep a CRC-32 of each row's texts (HDF5 does not checksum its heap)."""
    if "text_crc32" not in raw.dtype.names:
        return
    def stored(v):  # the bytes as stored: up to the first NUL
        b = v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogateescape")
        return b.split(b"\0", 1)[0]

    for i, crc in enumerate(np.asarray(raw["text_crc32"], dtype="int64")):
        cells = (raw["reason"][i], raw["output_tail"][i], raw["attrs"][i])
        if zlib.crc32(b"".join(stored(c) + b"\0" for c in cells)) != int(crc) & 0xFFFFFFFF:
            raise ValueError("a trial's texts do not match their checksum")


# The default timeout, as `cleansweep show` allows a read: 5 s, and a second for every 32 MB of file.
_BASE_TIMEOUT = 5.0
_BYTES_PER_SECOND = 32e6


def load_study(path, retries=5, timeout=None):
    """Reads `path`, also while a sweep writes it. Rows met in the middle of their write are read
    again alone (for up to 1.3 s); a read that still fails is done again whole: as long as the file
    keeps changing (a live study), until `timeout` seconds have passed (by default 5 s and a second
    for every 32 MB of file); a file that fails `retries` times without changing is damaged. A
    damaged file raises DamagedStudyError within `timeout` seconds, all attempts together; a live
    file that changed during the reads that failed, until `timeout` ran out, raises
    StudyReadTimeoutError."""
    # What no second read could change, said at once, as `cleansweep show` says it.
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such study file")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path}: a folder, not a study file: give a study's .h5 file")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"{path}: cannot read the study file: permission denied")
    if not _has_hdf5_signature(path):
        raise DamagedStudyError(
            f"{path}: not an HDF5 file (no HDF5 signature: a damaged study file, or no study file at all)")
    if timeout is None:
        timeout = _BASE_TIMEOUT + os.stat(path).st_size / _BYTES_PER_SECOND
    deadline = time.monotonic() + timeout
    unchanged_failures = changed_failures = 0
    while True:
        before = _stamp(path)
        try:
            attrs, raw, raw_steps, raw_attempts, raw_params = _read_guarded(path, max(0.1, deadline - time.monotonic()))
            text, cells = _decoded_text(raw)  # every row's checksum was checked in the child
            break
        except FileNotFoundError:  # removed meanwhile
            raise
        except (OSError, ValueError, DamagedStudyError) as e:  # a crash or hang of the reading child too
            if isinstance(e, ValueError) and "not a cleansweep study file" in str(e):
                raise
            if _stamp(path) != before:
                changed_failures += 1
            elif isinstance(e, RowsDisagreeError):  # rows that stayed wrong through 1.3 s of reads
                unchanged_failures = retries  # of a file that did not change: the verdict is in
            else:
                unchanged_failures += 1
            out_of_time = time.monotonic() >= deadline
            if out_of_time and isinstance(e, StudyReadTimeoutError):  # the reader was starved: busy too
                raise StudyReadTimeoutError(str(e)) from None
            if out_of_time and changed_failures and unchanged_failures < retries:  # a writer at work: busy
                raise StudyReadTimeoutError(
                    f"{path}: no consistent copy of the study file could be read in {timeout:.3g} s: a sweep "
                    f"changed it during {changed_failures} of {changed_failures + unchanged_failures} reads; "
                    "read it again, or call load_study with a longer timeout") from None
            if out_of_time or unchanged_failures >= retries:  # the last failure says how
                reason = str(e).removeprefix(f"{path}: ").removeprefix("the study file is damaged: ")
                raise DamagedStudyError(f"{path}: the study file is damaged: {reason}") from None
            time.sleep(0.01 if unchanged_failures == 0 else 0.05 * unchanged_failures)
    for text_attr, crc in (("config", "config_crc32"), ("space", "space_crc32")):  # files since issue 15
        stored = str(attrs.get(text_attr, "")).encode("utf-8", "surrogateescape")
        if crc in attrs and zlib.crc32(stored) != int(attrs[crc]) & 0xFFFFFFFF:
            raise DamagedStudyError(f"{path}: the study file is damaged: the stored {text_attr} does not match its checksum")
    space = json.loads(attrs["space"]) if "space" in attrs else _space_from_columns(raw)

    trials = pd.DataFrame({"number": np.asarray(raw["number"], dtype="int64")})
    trials["state"] = pd.Categorical(text["state"], categories=STATES, ordered=True)
    trials["value"] = np.asarray(raw["value"], dtype="float64")
    for spec in space:
        trials[spec["column"]] = _param_column(raw[spec["column"]], spec).values
    # Parameters the trials defined as they ran (/params, docs/study-format.md): a param_<name>
    # column each, in the order first asked, NaN (None for a text) where a trial did not ask.
    if raw_params is not None and len(raw_params):
        row_of = {int(n): i for i, n in enumerate(raw["number"])}
        defined = {}
        for r in raw_params:
            name = bytes(r["name"]).rstrip(b"\0").decode("utf-8", "replace")
            at = row_of.get(int(r["trial"]))
            if not name or at is None:
                continue
            column = defined.setdefault(name, [None] * len(trials))
            column[at] = json.loads(bytes(r["value_json"]).rstrip(b"\0"))
            distribution = json.loads(bytes(r["distribution"]).rstrip(b"\0"))
            if not any(p["name"] == name for p in space):
                space.append({"name": name, "column": "param_" + name, "kind": distribution["type"],
                              "defined_by_trial": True, **{k: v for k, v in distribution.items() if k != "type"}})
        for name, values in defined.items():
            numeric = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)
            trials["param_" + name] = pd.Series([np.nan if v is None else v for v in values], dtype="float64") \
                .values if numeric else values
    for name in _TIMES:
        if name not in raw.dtype.names:  # datetime_worker_free: only in files written since issue 19
            trials[name] = pd.Series(pd.NaT, index=trials.index, dtype="datetime64[ns, UTC]")
            continue
        seconds = pd.Series(np.asarray(raw[name], dtype="float64"))
        seconds[seconds <= 0] = np.nan  # a RUNNING trial has no end yet
        trials[name] = pd.to_datetime(seconds, unit="s", utc=True)
    for name in raw.dtype.names:
        if name in ("number", "state", "value", "text_crc32") or name in _TIMES or name.startswith("param_"):
            continue
        trials[name] = text[name] if name in _TEXT_FIELDS else raw[name]
    for name in _COST:
        if name not in raw.dtype.names:  # files written before the cost columns: unknown
            trials[name] = np.nan
    for name, none in (("checkpoint_step", -1), ("resumed_from", -1), ("parent", -1), ("generation", 0)):
        if name not in raw.dtype.names:  # files written before checkpoints or lineage: none
            trials[name] = np.int64(none)
    if "gpus" not in raw.dtype.names:  # files written before gangs: one worker, one process per trial
        trials["gpus"] = np.int64(1)
        trials["workers"] = ""
        trials["peak_rss_max_kb"] = trials["peak_rss_kb"]
        trials["gpu_mem_peak_max_mb"] = trials["gpu_mem_peak_mb"]
    trials["enqueued"] = trials["enqueued"].astype(bool)
    if "pareto" in trials:
        trials["pareto"] = trials["pareto"].astype(bool)
    trials["attrs"] = cells
    trials = trials.set_index("number", drop=False).rename_axis(None)

    steps = pd.DataFrame(
        {
            "trial": np.asarray(raw_steps["trial"], dtype="int64"),
            "step": np.asarray(raw_steps["step"], dtype="int64"),
            "value": np.asarray(raw_steps["value"], dtype="float64"),
            "time": pd.to_datetime(np.asarray(raw_steps["time"], dtype="float64"), unit="s", utc=True),
        }
    )
    for name in raw_steps.dtype.names:  # a multi-metric study's value_<metric>, NaN where not reported
        if name.startswith("value_"):
            steps[name] = np.asarray(raw_steps[name], dtype="float64")
    attempts = None
    if raw_attempts is not None:
        attempts = pd.DataFrame({name: raw_attempts[name] for name in raw_attempts.dtype.names})
        for name in ("state", "host", "gpu", "reason"):  # fixed-width text: NUL-padded bytes
            attempts[name] = [bytes(v).rstrip(b"\0").decode("utf-8", "replace") for v in raw_attempts[name]]
        attempts["state"] = pd.Categorical(attempts["state"], categories=STATES, ordered=True)
        for name in ("datetime_start", "datetime_end"):
            attempts[name] = pd.to_datetime(np.asarray(raw_attempts[name], dtype="float64"), unit="s", utc=True)
    return Study(path, attrs, space, trials, steps, attempts)


def _space_from_columns(raw):
    """Files written before the `space` attribute: parameter kinds guessed from the columns."""
    space = []
    for name in raw.dtype.names:
        if not name.startswith("param_"):
            continue
        kind = {"f": "float", "i": "int", "u": "int"}.get(raw.dtype[name].kind)
        if kind is None:  # text
            values = sorted({v for v in _text(raw[name]) if v})
            space.append({"name": name[6:], "column": name, "kind": "categorical", "choices": values})
        else:
            space.append({"name": name[6:], "column": name, "kind": kind})
    return space
