"""Reads a study again and again while a sweep writes it, the documented ways: the pandas loader
(python/cleansweep_study.py), the h5py example of docs/study-format.md run as written, and
`cleansweep show`, with two more `show`s reading all the time beside them (a busy file is read
mid-write often: one read in 200 failed before rows caught in a write were read again alone).
Every read must succeed. Ends when the file `done` appears (the sweep exited).

usage: live_read.py STUDY SOURCE_DIR DONE_FILE BIN_DIR"""
import contextlib
import io
import os
import re
import subprocess
import sys
import threading
import time
import traceback

study, src, done, bin_dir = sys.argv[1:5]
sys.path.insert(0, os.path.join(src, "python"))
from cleansweep_study import load_study  # noqa: E402

with open(os.path.join(src, "docs", "study-format.md"), encoding="utf-8") as f:
    doc = f.read()
marker = doc.index("<!-- tested example")
example = re.search(r"```python\n(.*?)```", doc[marker:], re.S).group(1)
example = example.replace("results/fashion-quick.h5", study)
code = compile(example, "docs/study-format.md example", "exec")

reads = {"load_study": 0, "h5py example": 0, "cleansweep show": 0, "cleansweep show (beside)": 0}
errors = []
rows_seen = 0


def show():
    return subprocess.run([os.path.join(bin_dir, "cleansweep"), "show", study], capture_output=True, text=True)


def show_beside():
    while not os.path.exists(done):
        shown = show()
        if shown.returncode == 0:
            reads["cleansweep show (beside)"] += 1
        else:
            errors.append(f"cleansweep show (beside): exit {shown.returncode}: {shown.stderr.strip()}")


beside = [threading.Thread(target=show_beside) for _ in range(2)]
for t in beside:
    t.start()
while not os.path.exists(done):
    for kind in ("load_study", "h5py example", "cleansweep show"):
        try:
            if kind == "load_study":
                # The default timeout (5 s): rows caught mid-write are read again alone, so a read
                # of this busy file takes one pass of the file (it took up to 18 whole passes, 1.6 s,
                # before, and once more than 5 s on a loaded machine).
                s = load_study(study)
                assert set(s.trials["state"].astype(str)) <= {"RUNNING", "COMPLETE", "FAIL", "PRUNED"}, s.trials["state"]
                rows_seen = max(rows_seen, len(s.trials))
            elif kind == "h5py example":
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(code, {"__name__": "example"})
            elif kind == "cleansweep show":
                shown = show()
                assert shown.returncode == 0, f"exit {shown.returncode}: {shown.stderr.strip()}"
            reads[kind] += 1
        except FileNotFoundError:
            pass  # not created yet
        except Exception:  # noqa: BLE001 - every failure is counted and shown
            errors.append(f"{kind}: {traceback.format_exc(limit=3)}")
for t in beside:
    t.join()
print(f"reads during the sweep: {reads}; largest table seen: {rows_seen} rows; errors: {len(errors)}")
for e in errors[:5]:
    print(e)
if errors:
    sys.exit(1)
if min(reads.values()) < 10:
    sys.exit(f"too few reads happened during the sweep to mean anything: {reads}")
