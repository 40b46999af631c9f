"""Train a small CNN on Fashion-MNIST with DistributedDataParallel, as one gang trial of a sweep.

Run by cleansweep with `trial.gpus: K` (configs/ddp_python.yaml): each of the trial's K processes,
K = 1 included, gets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT, joins the group with a plain
`init_process_group()` (env://), trains on its share of every epoch and all-reduces gradients.
NCCL on GPUs (each process sees its own GPU as cuda:0), gloo on the CPU: the same script on a
laptop and on a cluster. Rank 0 evaluates, reports validation accuracy each epoch, checkpoints and
finishes with its best accuracy; a prune reaching any rank stops every rank after the same epoch.
Alone, outside a sweep (no WORLD_SIZE), it trains as a group of one:
    python3 examples/ddp_python/train.py
"""

import datetime
import gzip
import os
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402

DATA = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def load(kind, limit):
    """The first `limit` images (1x28x28 floats in [0, 1]) and labels of an IDX file pair."""
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28)[:limit]
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)[:limit]
    return torch.tensor(images, dtype=torch.float32) / 255.0, torch.tensor(labels, dtype=torch.int64)


def net(channels, dropout):
    return nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(dropout), nn.Linear(2 * channels * 7 * 7, 10))


def main():
    trial = cs.Trial()
    p = trial.params
    gpu = torch.cuda.is_available()
    backend, timeout = ("nccl" if gpu else "gloo"), datetime.timedelta(minutes=5)
    if "WORLD_SIZE" in os.environ:  # under trial.gpus, at every size: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
        dist.init_process_group(backend, timeout=timeout)
    else:  # alone, outside a sweep: a group of one, no port to share with anyone
        store = os.path.join(trial.dir or tempfile.mkdtemp(), "group-of-one")
        dist.init_process_group(backend, init_method=f"file://{store}", rank=0, world_size=1, timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda:0" if gpu else "cpu")  # its own GPU, the only one it sees

    lr = float(p.get("lr", 0.05)) * world  # the usual linear scaling with the global batch
    channels = int(p.get("channels", 16))
    dropout = float(p.get("dropout", 0.1))
    batch_size = int(p.get("batch_size", 64))  # per process
    epochs = int(p.get("epochs", 3))
    subset = int(p.get("subset", 6000))
    torch.manual_seed(int(p.get("seed", 0)))  # the same initial weights on every rank
    try:
        x_train, y_train = load("train", subset)
        x_val, y_val = load("t10k", max(subset // 3, 500))
    except FileNotFoundError as e:
        print(f"train.py: Fashion-MNIST not found ({e}); install dataset-fashion-mnist", file=sys.stderr)
        return 3

    model = nn.parallel.DistributedDataParallel(net(channels, dropout).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=float(p.get("momentum", 0.9)))
    loss_fn = nn.CrossEntropyLoss()
    best, first = 0.0, 1
    if trial.resume_step() is not None:  # every rank loads rank 0's checkpoint
        state = torch.load(trial.checkpoint_path(trial.resume_step(), ".pt"), map_location=device)
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        best, first = state["best"], trial.resume_step() + 1
    for epoch in range(first, epochs + 1):
        model.train()
        generator = torch.Generator().manual_seed(1000 + epoch)  # one order for all ranks, each its share
        order = torch.randperm(len(x_train), generator=generator)[rank::world]
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[batch].to(device)), y_train[batch].to(device))
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
        stop = torch.zeros(1, device=device)
        if rank == 0:
            model.eval()
            with torch.no_grad():
                accuracy = (model.module(x_val.to(device)).argmax(dim=1) == y_val.to(device)).float().mean().item()
            best = max(best, accuracy)
            print(f"epoch {epoch}: val_accuracy {accuracy:.4f} ({world} processes)", flush=True)
            trial.report(epoch, accuracy)
            if trial.checkpoint_dir():
                state = {"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "best": best}
                trial.save_checkpoint(epoch, lambda path: torch.save(state, path), ".pt")
        if trial.should_prune():
            stop += 1
        dist.all_reduce(stop)  # any rank told to stop: all stop after this epoch, none left waiting
        if stop.item() > 0:
            break
    else:
        if rank == 0:
            trial.set_attrs(world=world, device=str(device), torch=torch.__version__)
            trial.finish(best)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Debian's torch 1.13 can hang in the interpreter's exit on the rank that hosted the store;
    # everything is reported and flushed: leave at once.
    os._exit(code)
