#!/usr/bin/python3
"""The usual Python recipe for a fresh process per trial, timed as bench/launch_bench times ours:
multiprocessing with the spawn start method, a child that imports torch, makes one tensor,
reports it through a pipe and exits. Prints: launcher, trial, ms to the first report, ms to exit.

usage: python_spawn_recipe.py [TRIALS]
"""
import multiprocessing as mp
import os
import sys
import time


def trial(conn):
    import torch  # what every trial of the recipe pays: a fresh interpreter importing torch

    one = torch.zeros(1)
    conn.send(("report", 0, float(one[0])))
    conn.send(("final", float(one[0])))
    conn.close()


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    os.environ["OMP_NUM_THREADS"] = "1"
    ctx = mp.get_context("spawn")
    print("launcher\ttrial\tfirst_report_ms\texit_ms")
    for i in range(trials):
        parent, child = ctx.Pipe(duplex=False)
        start = time.perf_counter()
        p = ctx.Process(target=trial, args=(child,))
        p.start()
        child.close()
        parent.recv()
        first = (time.perf_counter() - start) * 1e3
        parent.recv()
        p.join()
        end = (time.perf_counter() - start) * 1e3
        if p.exitcode != 0:
            sys.exit(f"trial {i}: exit code {p.exitcode}")
        print(f"python-spawn\t{i}\t{first:.3f}\t{end:.3f}", flush=True)


if __name__ == "__main__":
    main()
