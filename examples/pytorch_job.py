#!/usr/bin/env python3
"""pytorch_job.py — a training job that reports to slaqd with the Python client.

Trains logistic regression on a synthetic two-class problem: with PyTorch
when it is installed (sizing torch's thread pool to the job's allocation),
otherwise in plain Python, so the example runs anywhere. Each epoch is one
iteration reported to slaqd; the job stops when slaqd asks it to or after
--epochs.

    slaq submit --target-reduction 0.95 -- python3 examples/pytorch_job.py
    python3 examples/pytorch_job.py --epochs 20     # without slaqd: offline
"""

import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import slaq  # noqa: E402  (from the checkout when not installed)


def make_data(n, dim, seed):
    rng = random.Random(seed)
    w = [rng.gauss(0, 1) for _ in range(dim)]
    xs, ys = [], []
    for _ in range(n):
        x = [rng.gauss(0, 1) for _ in range(dim)]
        z = sum(a * b for a, b in zip(w, x)) + rng.gauss(0, 0.5)
        xs.append(x)
        ys.append(1.0 if z > 0 else 0.0)
    return xs, ys


def train_torch(torch, job, xs, ys, epochs, lr):
    x = torch.tensor(xs)
    y = torch.tensor(ys)
    model = torch.nn.Linear(x.shape[1], 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    lossf = torch.nn.BCEWithLogitsLoss()
    with torch.no_grad():
        job.report(0, float(lossf(model(x).squeeze(1), y)))
    for it in range(1, epochs + 1):
        torch.set_num_threads(job.threads())
        opt.zero_grad()
        loss = lossf(model(x).squeeze(1), y)
        loss.backward()
        opt.step()
        job.report(it, float(loss), samples=len(xs))
        if job.should_stop():
            return it
    return epochs


def train_plain(job, xs, ys, epochs, lr):
    dim = len(xs[0])
    w, b = [0.0] * dim, 0.0

    def loss_and_grad():
        gw, gb, total = [0.0] * dim, 0.0, 0.0
        for x, y in zip(xs, ys):
            z = sum(a * c for a, c in zip(w, x)) + b
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            total -= y * math.log(p + 1e-12) + (1 - y) * math.log(1 - p + 1e-12)
            for i in range(dim):
                gw[i] += (p - y) * x[i]
            gb += p - y
        n = len(xs)
        return total / n, [g / n for g in gw], gb / n

    loss, gw, gb = loss_and_grad()
    job.report(0, loss)
    for it in range(1, epochs + 1):
        w = [a - lr * g for a, g in zip(w, gw)]
        b -= lr * gb
        loss, gw, gb = loss_and_grad()
        job.report(it, loss, samples=len(xs))
        if job.should_stop():
            return it
    return epochs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    xs, ys = make_data(args.samples, args.dim, args.seed)
    with slaq.Client() as job:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            done = train_torch(torch, job, xs, ys, args.epochs, args.lr)
        else:
            done = train_plain(job, xs, ys, args.epochs, args.lr)
        print("trained %d epochs with %s%s" % (
            done, "PyTorch" if torch else "plain Python",
            "; stopped: " + job.stop_reason if job.stop_reason else ""))


if __name__ == "__main__":
    main()
