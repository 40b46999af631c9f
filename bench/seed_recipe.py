#!/usr/bin/python3
"""The seed's recipe on real work (bench/run_seed_recipe_bench.sh, setup (a)): Optuna's TPE picks
the parameters in this process, every trial trains in its own multiprocessing.Process and sends its
validation accuracy back through a queue, WORKERS trials at a time.

Each trial trains the network the bundled trainer trains (src/trainers/fashion: two blocks of
3x3 convolution, batch norm, ReLU and 2x2 max-pooling, then dropout, 128 hidden units, dropout, 10
classes), on the same data (the first 3,000 Fashion-MNIST training images; the last 2,000 for
validation; the same normalisation), for the same epochs, over configs/quickstart.yaml's search
space, as the trainer does: seed 0, reshuffled every epoch, validated after each epoch, the last
epoch's accuracy is the trial's value.

Prints one JSON object per trial (number, start, end, value, train_seconds, free, params) and a last
one with the totals. Times are Unix seconds: start just before the process starts, end once it is
joined, free when the trial's slot became free (the end of the trial before it there; null for the
first trials), as a cleansweep study's datetime_start, datetime_end and datetime_worker_free.
train_seconds is what the child spent from building the model to its last validation, as the
bundled trainer's train_seconds attribute; cpu_seconds the child's CPU time, all of it, as a
cleansweep study's cpu_seconds.

usage: seed_recipe.py --seed S [--trials 24] [--workers 2] [--epochs 3] [--start-method spawn]
"""
import argparse
import json
import multiprocessing as mp
import multiprocessing.connection
import os
import queue
import resource
import sys
import time

DATA = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
SUBSET, VAL_SIZE = 3000, 2000
MEAN, STD = 0.2860, 0.3530  # the trainer's (fashion_mnist.cpp)


def load():
    """The trainer's split: training = the first SUBSET images, validation = the last VAL_SIZE."""
    import gzip

    import numpy as np
    import torch

    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), dtype=np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), dtype=np.uint8, offset=8)
    n = len(images)

    def normalise(raw):
        return (torch.tensor(raw, dtype=torch.float32) / 255.0 - MEAN) / STD

    train_n = min(SUBSET, n - VAL_SIZE)
    return ((normalise(images[:train_n]), torch.tensor(labels[:train_n], dtype=torch.int64)),
            (normalise(images[n - VAL_SIZE:]), torch.tensor(labels[n - VAL_SIZE:], dtype=torch.int64)))


def train(params, epochs, threads, results):
    """One trial, in a fresh process: what the seed's wrapper runs in multiprocessing.Process."""
    import torch
    from torch import nn

    torch.set_num_threads(threads)
    (x_train, y_train), (x_val, y_val) = load()
    started = time.perf_counter()
    torch.manual_seed(0)
    c = params["channels"]
    model = nn.Sequential(
        nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c, 2 * c, 3, padding=1, bias=False), nn.BatchNorm2d(2 * c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(params["dropout"]), nn.Linear(2 * c * 7 * 7, 128), nn.ReLU(),
        nn.Dropout(params["dropout"]), nn.Linear(128, 10))
    lr = params["lr"]
    if params["optimizer"] == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=params["momentum"])
    elif params["optimizer"] == "adamw":
        optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    n, batch_size, accuracy = len(x_train), params["batch_size"], 0.0
    for _ in range(epochs):
        model.train()
        order = torch.randperm(n)
        for start in range(0, n, batch_size):
            index = order[start:start + batch_size]
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x_train[index]), y_train[index])
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            correct = sum(int((model(x_val[s:s + 1000]).argmax(1) == y_val[s:s + 1000]).sum())
                          for s in range(0, len(x_val), 1000))
        accuracy = correct / len(x_val)
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)  # the whole child: interpreter, imports, data, training
    results.put((accuracy, seconds, usage.ru_utime + usage.ru_stime))


def suggest(trial):
    """configs/quickstart.yaml's search space, in Optuna's words."""
    params = {
        "lr": trial.suggest_float("lr", 1e-4, 0.1, log=True),
        "batch_size": trial.suggest_int("batch_size", 32, 256, log=True),
        "channels": trial.suggest_int("channels", 8, 48, step=8),
        "optimizer": trial.suggest_categorical("optimizer", ["sgd", "adam", "adamw"]),
    }
    if params["optimizer"] == "sgd":
        params["momentum"] = trial.suggest_float("momentum", 0.0, 0.99)
    params["dropout"] = trial.suggest_float("dropout", 0.0, 0.5)
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--trials", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--start-method", default="spawn", choices=["spawn", "forkserver", "fork"])
    args = parser.parse_args()
    began = time.time()

    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # The cleansweep worker's rule: the node's cores shared by its workers (src/worker/worker.cpp).
    threads = max(1, (os.cpu_count() or 1) // args.workers)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    ctx = mp.get_context(args.start_method)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=args.seed))
    running, asked, failed = {}, 0, 0  # running: process sentinel -> (trial, params, process, queue, start, free)
    free = []  # when each free slot became free: the end of its last trial (none for the first ones)
    while asked < args.trials or running:
        while asked < args.trials and len(running) < args.workers:
            slot_free = free.pop(0) if free else None
            trial = study.ask()
            params = suggest(trial)
            results = ctx.Queue()
            process = ctx.Process(target=train, args=(params, args.epochs, threads, results))
            start = time.time()
            process.start()
            running[process.sentinel] = (trial, params, process, results, start, slot_free)
            asked += 1
        for sentinel in mp.connection.wait(list(running)):
            trial, params, process, results, start, slot_free = running.pop(sentinel)
            try:
                value, train_seconds, cpu_seconds = results.get(timeout=10)
            except queue.Empty:
                value, train_seconds, cpu_seconds = None, float("nan"), float("nan")
            process.join()
            end = time.time()
            free.append(end)
            if value is None or process.exitcode != 0:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                failed += 1
            else:
                study.tell(trial, value)
            print(json.dumps({"number": trial.number, "start": start, "end": end, "value": value,
                              "train_seconds": train_seconds, "cpu_seconds": cpu_seconds, "free": slot_free, "exit_code": process.exitcode,
                              "params": params}), flush=True)
    print(json.dumps({"began": began, "ended": time.time(), "failed": failed}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
