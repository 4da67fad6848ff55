#!/usr/bin/env python3
"""skorch_job.py — a skorch net under slaqd with slaq.skorch.Callback.

A small PyTorch MLP, wrapped in skorch's NeuralNetClassifier, learns the
bundled handwritten digits (load_digits). Every epoch is reported to
slaqd with its validation loss and accuracy (--on batch: every --every
training batches, their mean loss); torch's threads follow slaqd's
advice; on slaqd's stop the callback ends fit() as skorch's EarlyStopping
does.

    slaq submit -- python3 examples/python/skorch_job.py --epochs 50
    python3 examples/python/skorch_job.py --epochs 5     # without slaqd
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from skorch import NeuralNetClassifier  # noqa: E402

import slaq.skorch  # noqa: E402  (from the checkout when not installed)


class MLP(torch.nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, hidden),
                                       torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, 10))

    def forward(self, x):
        return self.net(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--on", choices=("epoch", "batch"), default="epoch")
    ap.add_argument("--every", type=int, default=None,
                    help="report every N steps (epochs or batches; default: "
                    "every epoch, or every second with --on batch)")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    torch.manual_seed(a.seed)
    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    cb = slaq.skorch.Callback(on=a.on, every_steps=a.every,
                              metric="valid_acc" if a.on == "epoch" else None)
    net = NeuralNetClassifier(MLP, max_epochs=a.epochs, lr=a.lr,
                              optimizer=torch.optim.SGD,
                              optimizer__momentum=0.9,
                              criterion=torch.nn.CrossEntropyLoss,
                              batch_size=64, callbacks=[cb], verbose=0)
    net.fit(x, y)
    print("trained %d epochs (%d steps in %d reports)%s" % (
        len(net.history), cb.loop.steps, cb.loop.reports,
        "; stopped: " + cb.loop.stop_reason if cb.loop.stop_reason else ""))


if __name__ == "__main__":
    main()
