"""A trial that reports the steps and values an adversary would (issue 40), written from
docs/trial-protocol.md alone: raw JSON lines on the report pipe, no helper, so nothing checks them
before cleansweep does. Parameter `probe` picks the sequence:

  max       step 2^63 - 1 (INT64_MAX), value 0.5, then the final value 0.5 (issue 40's probe)
  max-1     steps 2^63 - 2 then 2^63 - 1
  2^62      step 4611686018427387904
  u64       step 2^64 - 1, past every signed 64-bit integer
  pow4      steps 4^0, 4^1, ... 4^31; 4^27 = 18014398509481984 is the first past the limit
  limit     steps 4^0 ... 4^26 with values -1e308 and 1e308 in turn and a checkpoint at each, then
            step 2^53 - 1 (the largest a trial may report), then the final value 1e308
  dblmax    steps 1 ... 8 with values 1e308 and -1e308 in turn, final -1e308
  neg       steps 1 ... 8, every value -1e308

After each report of the last three probes the trial waits up to 0.2 s for `prune` on the control
pipe and exits 0 when it comes, so pruners get to prune and pause them. An attempt that goes on
from a checkpoint (CLEANSWEEP_RESUME_STEP) reports only the steps after it.
usage: hostile_steps.py WORK_DIR   (the argument only marks the process as the test's)
"""
import json
import os
import select

params = json.loads(os.environ["CLEANSWEEP_PARAMS"])
probe = params["probe"]
resume = os.environ.get("CLEANSWEEP_RESUME_STEP", "")
after = int(resume) if resume else -1
checkpoints = os.environ["CLEANSWEEP_CHECKPOINT_DIR"]
pipe = os.fdopen(int(os.environ["CLEANSWEEP_REPORT_FD"]), "w", buffering=1)
control = int(os.environ["CLEANSWEEP_CONTROL_FD"])
waits = os.environ["CLEANSWEEP_PRUNING"] == "1"

limit = 2 ** 53 - 1
if probe == "max":
    steps = [(2 ** 63 - 1, 0.5)]
elif probe == "max-1":
    steps = [(2 ** 63 - 2, 0.5), (2 ** 63 - 1, 0.5)]
elif probe == "2^62":
    steps = [(2 ** 62, 0.5)]
elif probe == "u64":
    steps = [(2 ** 64 - 1, 0.5)]
elif probe == "pow4":
    steps = [(4 ** k, 0.1 * k) for k in range(32)]
elif probe == "limit":
    steps = [(4 ** k, -1e308 if k % 2 == 0 else 1e308) for k in range(27)] + [(limit, 1e308)]
elif probe == "dblmax":
    steps = [(s, 1e308 if s % 2 else -1e308) for s in range(1, 9)]
elif probe == "neg":
    steps = [(s, -1e308) for s in range(1, 9)]
else:
    raise SystemExit("unknown probe " + probe)

for step, value in steps:
    if step <= after:
        continue
    line = {"step": step, "value": value}
    if probe == "limit":  # a checkpoint of each step, written whole, then declared on the same line
        os.makedirs(checkpoints, exist_ok=True)
        tmp = os.path.join(checkpoints, ".tmp-%d" % step)
        with open(tmp, "w") as f:
            json.dump({"step": step}, f)
        os.rename(tmp, os.path.join(checkpoints, "step-%d.json" % step))
        line["checkpoint"] = step
    pipe.write(json.dumps(line) + "\n")
    if waits and probe in ("limit", "dblmax", "neg") and select.select([control], [], [], 0.2)[0]:
        if b"prune" in os.read(control, 4096):
            raise SystemExit(0)
pipe.write(json.dumps({"value": steps[-1][1]}) + "\n")
