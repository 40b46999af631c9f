#!/usr/bin/python3
"""The Python trial helper against the protocol: parameters in, JSON lines out, prune notice in."""
import json
import os
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402


class TrialHelperTest(unittest.TestCase):
    def setUp(self):
        self.report_r, self.report_w = os.pipe()
        self.control_r, self.control_w = os.pipe()
        os.set_blocking(self.control_r, False)  # as the worker hands it over
        self.env = {"CLEANSWEEP_PARAMS": '{"lr": 0.01, "opt": "adam", "n": 3, "flag": true}',
                    "CLEANSWEEP_TRIAL": "7", "CLEANSWEEP_TRIAL_DIR": "/tmp/t7",
                    "CLEANSWEEP_REPORT_FD": str(self.report_w), "CLEANSWEEP_CONTROL_FD": str(self.control_r)}

    def tearDown(self):
        for fd in (self.report_r, self.report_w, self.control_r, self.control_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def lines(self):
        os.close(self.report_w)
        with os.fdopen(self.report_r) as f:
            self.report_r = -1
            return [json.loads(line) for line in f.read().splitlines()]

    def test_parameters_and_reports(self):
        trial = cs.Trial(self.env)
        self.assertTrue(trial.in_sweep)
        self.assertEqual(trial.params, {"lr": 0.01, "opt": "adam", "n": 3, "flag": True})
        self.assertEqual((trial.number, trial.dir), (7, "/tmp/t7"))
        trial.report(1, 0.5)
        trial.set_attrs(n_params=10, note="x")
        trial.finish(0.75)
        self.assertEqual(self.lines(), [{"step": 1, "value": 0.5}, {"attrs": {"n_params": 10, "note": "x"}},
                                        {"value": 0.75}])

    def test_non_finite_values_are_refused_here(self):
        trial = cs.Trial(self.env)
        with self.assertRaises(ValueError):
            trial.finish(float("nan"))

    def test_should_prune_sees_the_notice_without_blocking(self):
        trial = cs.Trial(self.env)
        self.assertFalse(trial.should_prune())  # nothing written: returns at once
        os.write(self.control_w, b"prune\n")
        self.assertTrue(trial.should_prune())
        self.assertTrue(trial.should_prune())  # and stays pruned

    def test_should_prune_waits_for_a_notice_only_as_long_as_asked(self):
        trial = cs.Trial(self.env)
        started = time.monotonic()
        self.assertFalse(trial.should_prune(wait=0.2))  # no notice: false after the wait
        self.assertGreaterEqual(time.monotonic() - started, 0.2)
        # A notice written while it waits ends the wait at once (the 30 s is never spent).
        writer = threading.Timer(0.1, lambda: os.write(self.control_w, b"prune\n"))
        writer.start()
        started = time.monotonic()
        self.assertTrue(trial.should_prune(wait=30))
        self.assertLess(time.monotonic() - started, 25)
        writer.join()

    def test_should_prune_stops_waiting_when_the_sweep_closes_the_pipe(self):
        trial = cs.Trial(self.env)
        os.close(self.control_w)
        self.control_w = -1
        started = time.monotonic()
        self.assertFalse(trial.should_prune(wait=30))
        self.assertLess(time.monotonic() - started, 25)

    def test_should_prune_never_waits_in_a_sweep_without_a_pruner(self):
        trial = cs.Trial(dict(self.env, CLEANSWEEP_PRUNING="0"))
        started = time.monotonic()
        self.assertFalse(trial.should_prune(wait=30))
        self.assertLess(time.monotonic() - started, 25)
        os.write(self.control_w, b"prune\n")  # a notice already there is still seen
        self.assertTrue(trial.should_prune(wait=30))

    def test_out_of_memory_notice(self):
        trial = cs.Trial(self.env)
        trial.report_out_of_memory("gpu", "CUDA out of memory")
        self.assertEqual(self.lines(), [{"oom": "gpu", "message": "CUDA out of memory"}])

    def test_checkpoints_are_written_whole_then_declared(self):
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            env = dict(self.env, CLEANSWEEP_CHECKPOINT_DIR=os.path.join(folder, "checkpoints"), CLEANSWEEP_RESUME_STEP="4")
            trial = cs.Trial(env)
            self.assertEqual(trial.resume_step(), 4)
            path = trial.checkpoint_path(5, ".pt")
            self.assertEqual(path, os.path.join(folder, "checkpoints", "step-5.pt"))  # the folder is made on use

            def write(tmp):
                self.assertNotEqual(tmp, path)  # never the final name while it is being written
                with open(tmp, "w") as f:
                    f.write("state")

            trial.save_checkpoint(5, write, ".pt")
            with open(path) as f:
                self.assertEqual(f.read(), "state")

            def broken(tmp):
                with open(tmp, "w") as f:
                    f.write("half")
                raise RuntimeError("disk full")

            with self.assertRaises(RuntimeError):
                trial.save_checkpoint(6, broken, ".pt")
            self.assertEqual(sorted(os.listdir(os.path.join(folder, "checkpoints"))), ["step-5.pt"])  # no torn step 6
            trial.save_checkpoint(7)  # written by the trial itself: only declared
            self.assertEqual(self.lines(), [{"checkpoint": 5}, {"checkpoint": 7}])
        self.assertIsNone(cs.Trial({}).resume_step())  # a fresh trial
        self.assertIsNone(cs.Trial({"CLEANSWEEP_RESUME_STEP": ""}).resume_step())

    def test_pipes_a_launcher_closed_are_found_again_through_the_process_above(self):
        # torchrun starts its processes with every inherited descriptor closed; a number may then
        # name another file. A shell in between keeps both pipes and starts the trial (in the
        # background, so the redirections happen in the child only) with the report descriptor on
        # /dev/null and the control one closed: its reports and a prune notice still get through.
        script = ("import sys; sys.path.insert(0, %r); import cleansweep_trial as cs, time\n"
                  "t = cs.Trial()\n"
                  "t.report(1, 0.5)\n"
                  "for _ in range(1000):\n"
                  "    if t.should_prune(): break\n"
                  "    time.sleep(0.01)\n"
                  "t.finish(0.75 if t.should_prune() else 0.0)\n") % os.path.dirname(cs.__file__)
        fds = {"report": self.report_w, "control": self.control_r}
        command = '"$0" -c "$1" %d</dev/null %d<&- & wait $!' % (fds["report"], fds["control"])
        env = dict(os.environ, CLEANSWEEP_ATTEMPT="1", **self.env)
        child = subprocess.Popen(["/bin/sh", "-c", command, sys.executable, script], env=env,
                                 pass_fds=(self.report_w, self.control_r))
        os.write(self.control_w, b"prune\n")
        self.assertEqual(child.wait(timeout=30), 0)
        self.assertEqual(self.lines(), [{"step": 1, "value": 0.5}, {"value": 0.75}])

    def test_standalone_without_a_sweep(self):
        trial = cs.Trial({})
        self.assertFalse(trial.in_sweep)
        self.assertEqual(trial.params, {})
        self.assertFalse(trial.should_prune())
        trial.finish(1.0)  # printed to stderr, no error


if __name__ == "__main__":
    unittest.main()
