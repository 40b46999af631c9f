"""An Optuna study as people write them: the objective trains a small PyTorch MLP on
Fashion-MNIST, asks for its hyperparameters with trial.suggest_* (the optimizer's choice opens a
parameter of its own), reports validation accuracy every epoch and prunes itself when told. Every
trial runs in this one process, so on a GPU what earlier models left behind stays.
    python3 examples/optuna_port/before.py
"""

import gzip
import os

import numpy as np
import optuna
import torch
from torch import nn

DATA = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
SUBSET = int(os.environ.get("SUBSET", "6000"))
EPOCHS = int(os.environ.get("EPOCHS", "5"))


def load(kind, limit):
    with gzip.open(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 28 * 28)[:limit]
    with gzip.open(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)[:limit]
    return torch.tensor(images, dtype=torch.float32) / 255.0, torch.tensor(labels, dtype=torch.int64)


def objective(trial):
    lr = trial.suggest_float("lr", 1e-4, 3e-2, log=True)
    hidden = trial.suggest_int("hidden", 32, 256, log=True)
    dropout = trial.suggest_float("dropout", 0.0, 0.5)
    batch_size = trial.suggest_categorical("batch_size", [32, 64, 128])
    torch.manual_seed(trial.number)
    x_train, y_train = load("train", SUBSET)
    x_val, y_val = load("t10k", max(SUBSET // 3, 500))
    model = nn.Sequential(nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 10))
    if trial.suggest_categorical("optimizer", ["adam", "sgd"]) == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=trial.suggest_float("momentum", 0.5, 0.99))
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    accuracy = 0.0
    for epoch in range(1, EPOCHS + 1):
        model.train()
        order = torch.randperm(len(x_train))
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            optimizer.zero_grad()
            loss_fn(model(x_train[batch]), y_train[batch]).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(x_val).argmax(1) == y_val).float().mean().item()
        trial.report(accuracy, epoch)
        if trial.should_prune():
            raise optuna.TrialPruned()
    trial.set_user_attr("n_params", sum(p.numel() for p in model.parameters()))
    return accuracy


if __name__ == "__main__":
    study = optuna.create_study(direction="maximize", pruner=optuna.pruners.MedianPruner())
    study.optimize(objective, n_trials=24)
    print(study.best_trial.params, study.best_value)
