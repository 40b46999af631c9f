"""A gang trial for the tests (tests/reliability/gangs_test.sh): every process of it joins one
torch.distributed group through the environment cleansweep gives it (env://, gloo on the CPU),
trains a tiny model under DistributedDataParallel on data of its own, and checks that after the
all-reduce every rank holds the same gradients. Rank 0 reports the world size and what it saw;
the other ranks' reports go to their reports.rank-R.jsonl.

Parameters: `fail_rank` (a RANK, -1 for none) fails in the way `fail_how` says once the group is
up: exit (status 3), crash (SIGSEGV), hang (sleeps until stopped).
"""

import faulthandler
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402


def main():
    faulthandler.register(signal.SIGTERM, chain=True)  # a stopped rank says where it was, in its log
    trial = cs.Trial()
    # No special case for one worker: with trial.gpus set, a trial of size 1 gets RANK=0,
    # WORLD_SIZE=1 and a MASTER_PORT of its own, as torchrun gives one process (issue 36).
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo")  # MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE from the environment
    assert dist.get_rank() == rank and dist.get_world_size() == world
    if int(trial.params.get("fail_rank", -1)) == rank:
        how = trial.params.get("fail_how", "exit")
        print(f"rank {rank}: failing ({how})", flush=True)
        if how == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if how == "hang":
            while True:
                time.sleep(1)
        # At once: a normal exit tears the interpreter down after the group's sockets close, and
        # under load rank 0 can see them close, fail and end first (CI once named rank 0 so).
        sys.stdout.flush()
        os._exit(3)
    torch.manual_seed(0)  # the same initial weights everywhere; DDP broadcasts rank 0's anyway
    model = nn.parallel.DistributedDataParallel(nn.Linear(8, 1))
    torch.manual_seed(100 + rank)  # different data on every rank
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    nn.functional.mse_loss(model(x), y).backward()
    grad = torch.cat([p.grad.flatten() for p in model.parameters()])
    gathered = [torch.zeros_like(grad) for _ in range(world)]
    dist.all_gather(gathered, grad)
    agree = all(torch.allclose(g, gathered[0]) for g in gathered)
    # Each rank's own gradient differs (its data); DDP's all-reduce made them equal: check the
    # one it holds is the mean of what each rank's data alone would give.
    local = nn.Linear(8, 1)
    local.load_state_dict(model.module.state_dict())
    nn.functional.mse_loss(local(x), y).backward()
    own = torch.cat([p.grad.flatten() for p in local.parameters()])
    owns = [torch.zeros_like(own) for _ in range(world)]
    dist.all_gather(owns, own)
    averaged = torch.allclose(grad, torch.stack(owns).mean(dim=0), atol=1e-6)
    names = [None] * world
    dist.all_gather_object(names, {"rank": rank, "local_rank": int(os.environ["LOCAL_RANK"]),
                                   "group_rank": int(os.environ.get("GROUP_RANK", 0)),
                                   "node": os.environ.get("CLEANSWEEP_NODE_NAME", "")})
    # Under torchrun (trial.processes: single) every rank shares the one process's report pipe:
    # only rank 0 speaks. Started by cleansweep (per_gpu), each rank has a pipe of its own.
    shared = "TORCHELASTIC_RUN_ID" in os.environ
    if rank == 0 or not shared:
        trial.report(1, float(world))
    if rank == 0:
        trial.set_attrs(world=world, agree=bool(agree), averaged=bool(averaged), ranks=names,
                        master=f'{os.environ["MASTER_ADDR"]}:{os.environ["MASTER_PORT"]}')
    if rank == 0 or not shared:
        trial.finish(float(world) if agree and averaged else -1.0)
    dist.barrier()  # no rank leaves while another still talks to rank 0's store
    dist.destroy_process_group()
    # Debian's torch 1.13 now and then hangs in the interpreter's exit on the rank that hosted
    # the store (a c10d thread that never joins); everything is said and flushed: leave at once.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
