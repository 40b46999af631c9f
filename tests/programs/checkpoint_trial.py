"""A trial that checkpoints after every step, for tests/reliability/checkpoint_test.sh.

Its state is a running sum (step * x at each step), carried from one attempt to the next only
through its checkpoints, so a final value of x * steps * (steps + 1) / 2 proves that no step was
lost or counted twice across the attempts. Every step it computes is appended to executed.txt in
its trial folder, so the test can count the work that was done again. With the parameter
`checkpoint: false` it declares none (bench/run_preemption_bench.sh's contrast). Told to stop by
a pruner (pruned, or paused at a rung: tests/reliability/asha_resume_test.sh), it exits after the
step's checkpoint, before it starts the next one. With the parameters `wait_at` (steps, as a string
"1 3") and `verdict_wait` (seconds), it waits after those steps' checkpoints until the sweep's
verdict comes or the time is up: a test of rungs sets them to the rung steps, so that a pruner's
verdict reaches the trial at the step it was about however loaded the machine (should_prune's
wait; a program that does not wait goes on into the next step meanwhile). In a gang (trial.gpus > 1) every rank computes
the steps and reports them; only rank 0 saves the checkpoints and counts its steps, as a
data-parallel program's rank 0 does, and like one it keeps its ranks in step: rank 0 saves step N's
checkpoint only once every rank has reported step N (each rank marks the last step it reported in
the trial folder), so a kill never finds a checkpoint ahead of a rank's reports. With the parameter `protocol_only: true` it uses no helper:
it reads the environment, writes its checkpoints straight into CLEANSWEEP_CHECKPOINT_DIR (which
it never creates: the worker has, before the trial started; issue 36) and writes JSON lines on
fd 3 and reads fd 4 itself, as a program written from docs/trial-protocol.md alone does.
usage: checkpoint_trial.py WORK_DIR   (the argument only marks the process as the test's)
"""
import json
import os
import select
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402



class RawTrial:
    """The parts of cs.Trial this program uses, from docs/trial-protocol.md and docs/checkpoints.md alone."""

    def __init__(self):
        self.params = json.loads(os.environ["CLEANSWEEP_PARAMS"])
        self.dir = os.environ["CLEANSWEEP_TRIAL_DIR"]
        self._checkpoints = os.environ["CLEANSWEEP_CHECKPOINT_DIR"]
        self._reports = os.fdopen(int(os.environ["CLEANSWEEP_REPORT_FD"]), "w", buffering=1)
        self._control = int(os.environ["CLEANSWEEP_CONTROL_FD"])
        self._told = False

    def resume_step(self):
        resume = os.environ["CLEANSWEEP_RESUME_STEP"]
        return int(resume) if resume else None

    def checkpoint_path(self, step, suffix):
        return os.path.join(self._checkpoints, "step-%d%s" % (step, suffix))

    def report(self, step, value):
        self._reports.write(json.dumps({"step": step, "value": value}) + "\n")

    def save_checkpoint(self, step, write, suffix):
        temporary = os.path.join(self._checkpoints, ".writing-%d" % step)
        write(temporary)  # no makedirs: the folder must be there
        os.replace(temporary, self.checkpoint_path(step, suffix))
        self._reports.write(json.dumps({"checkpoint": step}) + "\n")

    def should_prune(self, wait=0.0):
        if not self._told and select.select([self._control], [], [], wait)[0]:
            self._told = b"prune" in os.read(self._control, 4096)
        return self._told

    def finish(self, value):
        self._reports.write(json.dumps({"value": value}) + "\n")


trial = RawTrial() if json.loads(os.environ["CLEANSWEEP_PARAMS"]).get("protocol_only") else cs.Trial()
x = float(trial.params["x"])
steps = int(trial.params["steps"])
pause = float(trial.params["pause"])
declare = bool(trial.params.get("checkpoint", True))
wait_at = {int(s) for s in str(trial.params.get("wait_at", "")).split()}
verdict_wait = float(trial.params.get("verdict_wait", 0))
rank = int(os.environ.get("RANK", "0"))
world = int(os.environ.get("WORLD_SIZE", "1"))
rank0 = rank == 0
attempt = os.environ["CLEANSWEEP_ATTEMPT"]
total, first = 0.0, 1
if trial.resume_step() is not None:
    with open(trial.checkpoint_path(trial.resume_step(), ".json")) as f:
        state = json.load(f)
    if state["step"] != trial.resume_step():
        sys.exit("checkpoint of step %d holds step %d" % (trial.resume_step(), state["step"]))
    total, first = state["total"], state["step"] + 1


def mark_reported(step):
    """A rank above 0 records, atomically, the last step whose report it has written."""
    marker = os.path.join(trial.dir, ".step.rank-%d.attempt-%s" % (rank, attempt))
    with open(marker + ".tmp", "w") as f:
        f.write(str(step))
    os.replace(marker + ".tmp", marker)


def all_ranks_reached(step, patience=30.0):
    """Rank 0 waits (at most `patience` seconds) until every other rank has reported `step`:
    the barrier a data-parallel program's gradient all-reduce gives it."""
    deadline = time.monotonic() + patience
    for other in range(1, world):
        marker = os.path.join(trial.dir, ".step.rank-%d.attempt-%s" % (other, attempt))
        while time.monotonic() < deadline:
            try:
                with open(marker) as f:
                    if int(f.read() or 0) >= step:
                        break
            except FileNotFoundError:
                pass
            time.sleep(0.01)


def writer(state):
    def write(path):
        with open(path, "w") as f:
            json.dump(state, f)
    return write


for step in range(first, steps + 1):
    if step > first and trial.should_prune():  # before the next step: never after the last
        sys.exit(0)
    time.sleep(pause)
    total += x * step
    if rank0:
        with open(os.path.join(trial.dir, "executed.txt"), "a") as f:
            f.write("%d %s\n" % (step, os.environ["CLEANSWEEP_ATTEMPT"]))
    trial.report(step, total)
    if not rank0:
        mark_reported(step)
    if declare and rank0:
        all_ranks_reached(step)
        trial.save_checkpoint(step, writer({"step": step, "total": total}), ".json")
    if step in wait_at and step < steps:
        trial.should_prune(wait=verdict_wait)  # the verdict, or the time is up; seen before the next step
trial.finish(total)
