#!/usr/bin/env python3
"""torch_job.py — a PyTorch training loop under slaqd with slaq.torch.Job.

An MLP learns scikit-learn's bundled handwritten digits (load_digits:
1,797 8x8 images) with mini-batch SGD. The helper reports the mean
mini-batch loss every --every steps (or --every-seconds), sizes torch's
thread pool to slaqd's advice and ends the loop when slaqd says stop.

    slaq submit --target-reduction 0.9 -- python3 examples/python/torch_job.py
    python3 examples/python/torch_job.py --epochs 5     # without slaqd
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

import slaq.torch  # noqa: E402  (from the checkout when not installed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--every", type=int, default=10,
                    help="report every N steps (10)")
    ap.add_argument("--every-seconds", type=float, default=None,
                    help="report every S seconds as well")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    digits = load_digits()
    x = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = torch.tensor(digits.target)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    steps_per_epoch = (len(x) + a.batch - 1) // a.batch

    with slaq.torch.Job(every_steps=a.every, every_seconds=a.every_seconds,
                        iters=a.epochs * steps_per_epoch,
                        raise_on_stop=True) as job:
        with torch.no_grad():
            job.initial_loss(lossf(model(x), y))
        for epoch in range(a.epochs):
            perm = torch.randperm(len(x))
            for i in range(0, len(x), a.batch):
                idx = perm[i:i + a.batch]
                loss = lossf(model(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                job.step(loss, samples=len(idx))  # StopTraining on a stop
    print("trained %d steps in %d reports with %s thread(s)%s" % (
        job.steps, job.reports, job.threads,
        "; stopped: " + job.stop_reason if job.stop_reason else ""))


if __name__ == "__main__":
    main()
