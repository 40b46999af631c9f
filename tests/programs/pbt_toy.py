"""A toy whose best learning rate changes as it trains, for population-based training
(tests/reliability/pbt_test.sh, bench/run_pbt_bench.sh, tests/report/report_test.sh).

It is the estimate of a mean from noisy observations y_t = 1 + sigma * noise, by the update
theta_t = theta_{t-1} + lr * (y_t - theta_{t-1}) from theta_0 = 0, scored by its expected squared
error, which needs no random draw: with bias_t = (1 - lr) * bias_{t-1} (bias_0 = -1) and
var_t = (1 - lr)^2 * var_{t-1} + lr^2 * sigma^2 (var_0 = 0), it reports
value_t = -(bias_t^2 + var_t) at each step t = 1..steps (maximised). A large learning rate removes
the bias fast but keeps the variance high; a small one is precise but slow. The best schedule is
known: lr_t = 1 / t makes theta_t the mean of y_1..y_t, with error sigma^2 / t, which no fixed
learning rate reaches: a schedule that decays is what PBT can find.
Its state (t, bias, var) goes into a checkpoint after every step; each step is logged as
"t bias var lr attempt" in trajectory.txt in the trial folder. Each step takes `pause` seconds
(default 0): real training takes time, and a member must be looked at at its interval, not after.
usage: pbt_toy.py WORK_DIR   (the argument only marks the process as the test's)
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402

trial = cs.Trial()
lr = float(trial.params["lr"])
steps = int(trial.params["steps"])
sigma = float(trial.params.get("sigma", 1.0))
pause = float(trial.params.get("pause", 0.0))
t, bias, var = 0, -1.0, 0.0
if trial.resume_step() is not None:
    with open(trial.checkpoint_path(trial.resume_step(), ".json")) as f:
        state = json.load(f)
    t, bias, var = state["t"], state["bias"], state["var"]


def writer(state):
    def write(path):
        with open(path, "w") as f:
            json.dump(state, f)
    return write


while t < steps:
    if t > 0 and trial.should_prune():  # paused (or replaced) before the next step; never after the last
        sys.exit(0)
    time.sleep(pause)
    t += 1
    bias = (1.0 - lr) * bias
    var = (1.0 - lr) ** 2 * var + lr ** 2 * sigma ** 2
    with open(os.path.join(trial.dir, "trajectory.txt"), "a") as f:
        f.write("%d %r %r %r %s\n" % (t, bias, var, lr, os.environ["CLEANSWEEP_ATTEMPT"]))
    trial.report(t, -(bias ** 2 + var))
    trial.save_checkpoint(t, writer({"t": t, "bias": bias, "var": var}), ".json")
trial.finish(-(bias ** 2 + var))
