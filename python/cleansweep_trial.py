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

Outside a sweep (no CLEANSWEEP_REPORT_FD) every call still works: params is empty and reports are
printed to stderr, so the same script runs standalone. docs/trial-protocol.md has the protocol.
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
        try:
            while True:
                ready = select.select([self._control], [], [], max(0.0, deadline - time.monotonic()))[0]
                if not ready:
                    break
                data = os.read(self._control, 64)
                if not data:  # the sweep closed the pipe: no notice will come
                    break
                if b"prune" in data:
                    self._pruned = True
                    break
        except OSError:
            pass
        return self._pruned

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
