"""A Python trial for configs/python_example.yaml: minimises a noisy quadratic by 'training' it.

It imports only the standard library, so it runs anywhere; a PyTorch or TensorFlow script uses the
helper the same way. Run it alone with:  python3 python/examples/quadratic.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cleansweep_trial as cs  # noqa: E402


def main():
    trial = cs.Trial()
    x = float(trial.params.get("x", 0.0))
    y = float(trial.params.get("y", 0.0))
    shape = trial.params.get("shape", "bowl")
    steps = int(trial.params.get("steps", 5))
    loss = None
    for step in range(steps):
        # The loss approaches its final value as the "training" goes on.
        scale = 1.0 + 1.0 / (step + 1)
        loss = scale * ((x - 1.0) ** 2 + (y + 2.0) ** 2 + (0.5 if shape == "saddle" else 0.0))
        trial.report(step, loss)
        print("step %d loss %.4f" % (step, loss), flush=True)
        if trial.should_prune():  # with a pruner in the config, the sweep may stop us here
            return
    trial.set_attrs(shape=shape)
    trial.finish(loss)


if __name__ == "__main__":
    main()
