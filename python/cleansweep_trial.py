"""Client side of the cleansweep trial protocol for Python training scripts (standard library only).

    import cleansweep_trial as cs

    trial = cs.Trial()                      # reads CLEANSWEEP_PARAMS and the report pipe
    lr = trial.params.get("lr", 1e-3)       # defaults apply outside a sweep
    for epoch in range(1, 11):
        acc = train_one_epoch(lr)
        trial.report(epoch, acc)            # intermediate value
        if trial.should_prune():            # the sweep stopped this trial early
            sys.exit(0)
    trial.set_attrs(n_params=123456)
    trial.finish(acc)                       # the objective; then exit normally

Checkpoints (docs/checkpoints.md): a trial cut off after declaring one runs again under its number
from it, so a long trial on a preemptible partition loses one checkpoint interval, not its hours:

    start = 1
    if trial.resume_step() is not None:                 # this attempt goes on from a checkpoint
        model.load_state_dict(torch.load(trial.checkpoint_path(trial.resume_step(), ".pt")))
        start = trial.resume_step() + 1
    for epoch in range(start, 11):
        ...
        trial.report(epoch, acc)
        trial.save_checkpoint(epoch, lambda path: torch.save(model.state_dict(), path), ".pt")

Define-by-run, as an Optuna objective is written: the trial asks for each parameter as it runs,
and a parameter the config does not declare under space: is drawn at that moment by rank 0's
sampler from the trials that had it (docs/trial-protocol.md, "Asking for a parameter"):

    def objective(trial):                               # trial: an OptunaTrial
        lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        optimizer = trial.suggest_categorical("optimizer", ["adam", "sgd"])
        if optimizer == "sgd":
            momentum = trial.suggest_float("momentum", 0.5, 0.99)
        for epoch in range(10):
            acc = train_one_epoch(...)
            trial.report(acc, epoch)                    # Optuna's order: value, then step
            if trial.should_prune():
                raise cs.TrialPruned()                  # optuna.TrialPruned works too
        return acc

and `trial: {objective: "train.py:objective"}` in the config runs objective(trial) in a fresh
process per trial (the same as `python3 -m cleansweep_trial train.py:objective`).

Outside a sweep (no CLEANSWEEP_REPORT_FD) every call still works: params is empty, a suggest_*
call returns the middle of its range (the first choice), and reports are printed to stderr, so the
same script runs standalone. docs/trial-protocol.md has the protocol.
"""

import contextlib
import errno
import fcntl
import json
import math
import os
import select
import stat
import sys
import time

EXIT_OUT_OF_MEMORY = 75


class TrialPruned(Exception):
    """Raise it (as Optuna's optuna.TrialPruned) to end the trial PRUNED at its last reported value."""


class SuggestError(RuntimeError):
    """The sweep refused a suggest request (the trial then fails, with the same reason)."""


class Trial:
    """One trial as the sweep sees it. Not thread-safe; create one per process."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.params = json.loads(env.get("CLEANSWEEP_PARAMS", "{}"))
        if not isinstance(self.params, dict):
            raise ValueError("CLEANSWEEP_PARAMS is not a JSON object")
        self.number = int(env.get("CLEANSWEEP_TRIAL", "-1"))
        self.dir = env.get("CLEANSWEEP_TRIAL_DIR", "")
        fd = env.get("CLEANSWEEP_REPORT_FD")
        self._pipe = _report_pipe(int(fd), env) if fd else None
        control = env.get("CLEANSWEEP_CONTROL_FD")
        # Without its control pipe the trial only misses prune notices; signals still stop it.
        self._control = _inherited_pipe(int(control), env, os.O_RDONLY | os.O_NONBLOCK) if control else None
        self._pruned = False
        self._pruning = env.get("CLEANSWEEP_PRUNING", "1") != "0"  # whether a notice can come at all
        self._checkpoint_dir = env.get("CLEANSWEEP_CHECKPOINT_DIR", "")
        resume = env.get("CLEANSWEEP_RESUME_STEP", "")
        self._resume_step = int(resume) if resume else None
        self._control_buffer = b""
        self._asked = {}  # name -> (request, value): what suggest_* returned, asked again without the pipe
        self.metrics = json.loads(env.get("CLEANSWEEP_METRICS", '["value"]'))

    @property
    def optuna(self):
        """This trial with Optuna's method names and argument order (report(value, step),
        set_user_attr, ...): what an Optuna objective expects as its `trial`."""
        return OptunaTrial(self)

    def suggest_float(self, name, low, high, *, step=None, log=False):
        """A float in [low, high] (log-uniform with log=True; on the grid low + k * step with
        step), as Optuna's trial.suggest_float."""
        request = {"name": str(name), "type": "float", "low": float(low), "high": float(high), "log": bool(log)}
        if step is not None:
            request["step"] = float(step)
        return float(self._suggest(request))

    def suggest_int(self, name, low, high, *, step=1, log=False):
        """An int in [low, high] on the grid low + k * step (log-uniform with log=True, step 1),
        as Optuna's trial.suggest_int."""
        request = {"name": str(name), "type": "int", "low": _whole(low), "high": _whole(high), "log": bool(log),
                   "step": _whole(step)}
        return int(self._suggest(request))

    def suggest_categorical(self, name, choices):
        """One of `choices` (numbers, booleans or texts), as Optuna's trial.suggest_categorical."""
        return self._suggest({"name": str(name), "type": "categorical", "choices": list(choices)})

    def _suggest(self, request):
        name = request["name"]
        known = self._asked.get(name)
        if known is not None and known[0] == request:
            return known[1]
        if name in self.params and self._pipe is None:  # a value given by hand outside a sweep
            value = self.params[name]
        elif self._pipe is None:
            value = _middle(request)
            sys.stderr.write("cleansweep: outside a sweep, %s = %r\n" % (name, value))
        else:
            self._send({"suggest": request})
            value = self._answer(name)
        self._asked[name] = (request, value)
        self.params[name] = value
        return value

    def _answer(self, name):
        """Waits for the worker's answer about `name` on the control pipe; prune notices that come
        first are kept for should_prune()."""
        if self._control is None:
            raise SuggestError("no control pipe (CLEANSWEEP_CONTROL_FD) to read the answer about %r from" % name)
        while True:
            line = self._control_line(None)
            if line is None:
                raise SuggestError("the sweep closed the control pipe before answering about %r" % name)
            if line.startswith("{"):
                answer = json.loads(line)
                if answer.get("name") != name:
                    continue
                if "error" in answer:
                    raise SuggestError(answer["error"])
                return answer["value"]

    def _control_line(self, timeout):
        """The next line of the control pipe, noting prune notices; None at EOF or when nothing
        comes within `timeout` seconds (None: wait as long as it takes)."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            end = self._control_buffer.find(b"\n")
            if end >= 0:
                line = self._control_buffer[:end].decode(errors="replace").strip()
                self._control_buffer = self._control_buffer[end + 1:]
                if line == "prune":
                    self._pruned = True
                return line
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                ready = select.select([self._control], [], [], left)[0]
                if not ready:
                    return None
                data = os.read(self._control, 65536)
            except InterruptedError:
                continue
            except BlockingIOError:
                continue
            except OSError:
                return None
            if not data:
                return None
            self._control_buffer += data

    @property
    def in_sweep(self):
        return self._pipe is not None

    def report(self, step, value):
        """An intermediate value of the objective at `step` (an epoch, say). In a study of several
        metrics, a dict of them by name (the first metric at least: pruning uses it)."""
        if isinstance(value, dict):
            self._send({"step": int(step), "values": {str(k): _finite(v) for k, v in value.items()}})
        else:
            self._send({"step": int(step), "value": _finite(value)})

    def should_prune(self, wait=0.0):
        """True once the sweep has pruned this trial: stop and exit normally. Call it after
        report() (and the step's checkpoint). By default it never blocks; with wait (seconds) it
        waits up to that long for the notice and returns as soon as one arrives. The verdict on the
        step just reported takes a round trip through rank 0: a trial that looks at once trains one
        more step before it sees a prune or a pause; one that waits longer than the round trip
        stops at the step it was judged at, and pays the whole wait on every step that goes on. In
        a sweep without a pruner (CLEANSWEEP_PRUNING=0) no notice comes, and it never waits."""
        if self._pruned or self._control is None:
            return self._pruned
        deadline = time.monotonic() + (max(0.0, wait) if self._pruning else 0.0)
        while not self._pruned:
            line = self._control_line(max(0.0, deadline - time.monotonic()))
            if line is None:  # nothing within the wait, or the sweep closed the pipe
                break
        return self._pruned

    def prune(self, reason=""):
        """Ends the trial PRUNED at its last reported value (what raising TrialPruned in an
        objective run by the sweep does); then exit with status 0."""
        self._send({"pruned": str(reason)[:200]})

    def set_attrs(self, **attrs):
        """User attributes stored with the trial (JSON-serialisable values)."""
        self._send({"attrs": attrs})

    def finish(self, value):
        """The final objective. Call once, then exit with status 0. In a study of several metrics,
        a dict with every metric the trial reports, by name: trial.finish({"val_accuracy": 0.91,
        "latency_ms": 12.5})."""
        if isinstance(value, dict):
            self._send({"values": {str(k): _finite(v) for k, v in value.items()}})
        else:
            self._send({"value": _finite(value)})

    def checkpoint_dir(self):
        """The trial's checkpoint folder, created on first use ("" outside a sweep: the current folder)."""
        if self._checkpoint_dir:
            os.makedirs(self._checkpoint_dir, exist_ok=True)
        return self._checkpoint_dir

    def checkpoint_path(self, step, suffix=""):
        """Where the checkpoint of `step` goes: checkpoint_dir()/step-<step><suffix>. The sweep's
        trial.checkpoint_keep removes older checkpoints by this name."""
        return os.path.join(self.checkpoint_dir(), "step-%d%s" % (int(step), suffix))

    def resume_step(self):
        """The step whose checkpoint this attempt starts from, or None for a trial that starts afresh."""
        return self._resume_step

    def save_checkpoint(self, step, write=None, suffix=""):
        """Declares the checkpoint of `step`: a trial cut off from now on goes on from it. With
        `write`, a function of a path, it first writes it atomically: write(temporary path), then
        a rename to checkpoint_path(step, suffix), so a trial killed while writing leaves a stray
        temporary file, never a torn checkpoint. Without, the checkpoint must already be whole."""
        if write is not None:
            path = self.checkpoint_path(step, suffix)
            temporary = path + ".tmp-%d" % os.getpid()
            try:
                write(temporary)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.remove(temporary)
                raise
        self._send({"checkpoint": int(step)})

    def report_out_of_memory(self, kind="gpu", message=""):
        """Tells the sweep this trial ran out of memory ("gpu" or "host"); then sys.exit(EXIT_OUT_OF_MEMORY)."""
        self._send({"oom": kind, "message": str(message)[:1000]})

    def _send(self, obj):
        line = json.dumps(obj, allow_nan=False) + "\n"
        if self._pipe is None:
            sys.stderr.write("cleansweep report: " + line)
            return
        try:
            self._pipe.write(line)
        except BrokenPipeError:
            pass  # the worker is gone; nothing useful left to do


class OptunaTrial:
    """A Trial as an Optuna objective sees one: suggest_float, suggest_int, suggest_categorical,
    report(value, step), should_prune(), set_user_attr(key, value), number, params, user_attrs."""

    def __init__(self, trial):
        self._trial = trial
        self.user_attrs = {}

    @property
    def number(self):
        return self._trial.number

    @property
    def params(self):
        """The parameters asked for so far (and, in a sweep, those the config declares)."""
        return dict(self._trial.params)

    def suggest_float(self, name, low, high, *, step=None, log=False):
        return self._trial.suggest_float(name, low, high, step=step, log=log)

    def suggest_int(self, name, low, high, *, step=1, log=False):
        return self._trial.suggest_int(name, low, high, step=step, log=log)

    def suggest_categorical(self, name, choices):
        return self._trial.suggest_categorical(name, choices)

    def report(self, value, step):
        """An intermediate value at `step`, in Optuna's argument order."""
        self._trial.report(step, value)

    def should_prune(self):
        return self._trial.should_prune()

    def set_user_attr(self, key, value):
        self.user_attrs[key] = value
        self._trial.set_attrs(**{str(key): value})


def run_objective(target, environ=None):
    """Runs `target` ("path/to/train.py:objective" or "module:objective") as this trial:
    objective(trial) with an OptunaTrial, its return value (a number, or one per metric of a study
    of several, in study.metrics order, or a dict by name) the trial's final value. TrialPruned (or
    optuna.TrialPruned) ends it PRUNED. Returns the exit status."""
    import importlib
    import importlib.util
    import traceback

    path, sep, function = target.rpartition(":")
    if not sep or not path or not function:
        sys.stderr.write("cleansweep: objective %r: expected FILE.py:FUNCTION or MODULE:FUNCTION\n" % target)
        return 2
    try:
        if path.endswith(".py") or os.sep in path:
            folder = os.path.dirname(os.path.abspath(path))
            sys.path.insert(0, folder)  # as `python3 path` would: its neighbours import
            spec = importlib.util.spec_from_file_location("cleansweep_objective", path)
            if spec is None:
                raise ImportError("cannot load %s" % path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["cleansweep_objective"] = module
            spec.loader.exec_module(module)  # not as __main__: its own study loop stays out
        else:
            module = importlib.import_module(path)
        objective = getattr(module, function)
    except Exception:  # noqa: BLE001 - the user's module: report whatever it raised
        traceback.print_exc()
        sys.stderr.write("cleansweep: cannot load the objective %r (trial.objective)\n" % target)
        return 1
    trial = Trial(environ)
    try:
        result = objective(trial.optuna)
    except TrialPruned as e:
        trial.prune(str(e))
        return 0
    except SuggestError as e:
        sys.stderr.write("cleansweep: %s\n" % e)
        return 1
    except MemoryError:
        traceback.print_exc()
        trial.report_out_of_memory("host", "MemoryError")
        return EXIT_OUT_OF_MEMORY
    except Exception as e:  # noqa: BLE001
        optuna = sys.modules.get("optuna")
        if optuna is not None and isinstance(e, optuna.TrialPruned):
            trial.prune(str(e))
            return 0
        traceback.print_exc()
        if type(e).__name__ == "OutOfMemoryError" or "CUDA out of memory" in str(e):
            trial.report_out_of_memory("gpu", str(e)[:200])
            return EXIT_OUT_OF_MEMORY
        return 1
    if isinstance(result, dict):
        trial.finish(result)
    elif isinstance(result, (list, tuple)):
        if len(result) != len(trial.metrics):
            sys.stderr.write("cleansweep: the objective returned %d values; this study's trials report %d (%s)\n"
                             % (len(result), len(trial.metrics), ", ".join(trial.metrics)))
            return 1
        trial.finish(dict(zip(trial.metrics, result)) if len(result) > 1 else result[0])
    elif result is None:
        sys.stderr.write("cleansweep: the objective returned None; it must return its value\n")
        return 1
    else:
        trial.finish(result)
    return 0


def _report_pipe(fd, env):
    """The report pipe, as a text stream (see _inherited_pipe)."""
    found = _inherited_pipe(fd, env, os.O_WRONLY)
    if found is None:
        raise OSError(errno.EBADF, f"CLEANSWEEP_REPORT_FD {fd} is open neither here nor in a process of this trial above")
    return os.fdopen(found, "w", buffering=1, closefd=found != fd)


def _inherited_pipe(fd, env, flags):
    """The pipe the worker passed as `fd` (its write end for reports, read end for control), or,
    when a launcher between the worker and this process closed it (torchrun starts its processes
    with close_fds) and the number may since name another file, even the other pipe opened again
    here: the same pipe opened again (`flags`) through the nearest process above this one that
    belongs to the same trial and holds it (docs/multi-gpu.md). Failing that, `fd` itself if it is
    open the right way (a file given by hand); else None."""
    try:
        right_way = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == flags & os.O_ACCMODE
        if right_way and stat.S_ISFIFO(os.fstat(fd).st_mode):
            return fd
    except OSError:
        right_way = False
    ours = {f"{name}={env[name]}" for name in ("CLEANSWEEP_TRIAL", "CLEANSWEEP_ATTEMPT", "CLEANSWEEP_REPORT_FD")
            if name in env}
    pid = os.getppid()
    while pid > 1:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                theirs = set(f.read().decode(errors="replace").split("\0"))
            if ours <= theirs and stat.S_ISFIFO(os.stat(path).st_mode):
                return os.open(path, flags | os.O_CLOEXEC)
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])  # the field after the name: its parent
        except (OSError, ValueError, IndexError):
            break
    # No process of the trial above holds it: a file given by hand (`3>reports.jsonl`, to run a
    # trial outside a sweep) is used as it is.
    return fd if right_way else None


def _finite(value):
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("cleansweep objectives must be finite numbers, got %r" % value)
    return value


def _whole(value):
    if isinstance(value, bool) or int(value) != value:
        raise ValueError("expected a whole number, got %r" % (value,))
    return int(value)


def _middle(request):
    """What a suggest_* call returns outside a sweep: the middle of the range, the first choice."""
    if request["type"] == "categorical":
        return request["choices"][0]
    low, high = request["low"], request["high"]
    middle = math.sqrt(low * high) if request.get("log") else (low + high) / 2
    step = request.get("step")
    if step:
        middle = low + round((middle - low) / step) * step
    return int(round(middle)) if request["type"] == "int" else float(middle)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        sys.stderr.write("usage: python3 -m cleansweep_trial FILE.py:FUNCTION   (runs objective(trial) as one trial)\n")
        sys.exit(2)
    # The module by its own name, so that the objective's `import cleansweep_trial` (its
    # TrialPruned, say) is this one and not a second copy of __main__.
    import cleansweep_trial

    sys.exit(cleansweep_trial.run_objective(sys.argv[1]))
