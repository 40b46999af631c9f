"""Train a small PyTorch MLP on Fashion-MNIST as one cleansweep trial (sweep.yaml runs it).

Each trial is a fresh Python process: the sweep passes the hyperparameters in, the script reports
validation accuracy after every epoch through python/cleansweep_trial.py, stops as soon as the
sweep prunes it, and ends with its best accuracy. In a sweep it checkpoints after every epoch (the
model, the optimiser, the random generator, the best accuracy so far), so a trial cut off by a
preemption or a killed job goes on from its last epoch (docs/checkpoints.md). Needs Debian's
python3-torch, python3-numpy and
dataset-fashion-mnist. Run alone (defaults, reports printed to stderr):
    python3 examples/pytorch_python/train.py
"""

import gzip
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cleansweep_trial as cs  # noqa: E402

DATA = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def load(kind, limit):
    """The first `limit` images (as float tensors in [0, 1]) and labels of an IDX file pair."""
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 28 * 28)[:limit]
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)[:limit]
    return torch.tensor(images, dtype=torch.float32) / 255.0, torch.tensor(labels, dtype=torch.int64)


def main():
    trial = cs.Trial()
    p = trial.params
    lr = float(p.get("lr", 1e-3))
    hidden = int(p.get("hidden", 128))
    dropout = float(p.get("dropout", 0.1))
    batch_size = int(p.get("batch_size", 64))
    optimizer_name = p.get("optimizer", "adam")
    epochs = int(p.get("epochs", 5))
    subset = int(p.get("subset", 6000))
    torch.manual_seed(int(p.get("seed", 0)))

    try:
        x_train, y_train = load("train", subset)
        x_val, y_val = load("t10k", max(subset // 3, 500))
    except FileNotFoundError as e:
        print(f"train.py: Fashion-MNIST not found ({e}); install dataset-fashion-mnist", file=sys.stderr)
        return 3

    model = nn.Sequential(nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 10))
    if optimizer_name == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=float(p.get("momentum", 0.9)))
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()

    best, first = 0.0, 1
    if trial.resume_step() is not None:  # this attempt goes on from the checkpoint of an earlier one
        state = torch.load(trial.checkpoint_path(trial.resume_step(), ".pt"))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        torch.set_rng_state(state["rng"])
        best, first = state["best"], trial.resume_step() + 1
        print(f"going on from the checkpoint of epoch {trial.resume_step()}", flush=True)
    for epoch in range(first, epochs + 1):
        model.train()
        order = torch.randperm(len(x_train))
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            optimizer.zero_grad()
            loss = loss_fn(model(x_train[batch]), y_train[batch])
            if not torch.isfinite(loss):
                print(f"train.py: the loss diverged at epoch {epoch} (lr {lr})", file=sys.stderr)
                return 1
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(x_val).argmax(dim=1) == y_val).float().mean().item()
        best = max(best, accuracy)
        print(f"epoch {epoch}: val_accuracy {accuracy:.4f}", flush=True)
        trial.report(epoch, accuracy)
        if trial.checkpoint_dir():  # in a sweep: written whole, renamed, then declared
            state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "rng": torch.get_rng_state(), "best": best}
            trial.save_checkpoint(epoch, lambda path: torch.save(state, path), ".pt")
        if trial.should_prune():  # the sweep has recorded this trial as PRUNED: stop here
            return 0
    trial.set_attrs(n_params=sum(t.numel() for t in model.parameters()), torch=torch.__version__)
    trial.finish(best)
    return 0


if __name__ == "__main__":
    sys.exit(main())
