"""u_sk_default.py — scikit-learn's MLPClassifier trained by partial_fit
on mini-batches of 1000, numpy's BLAS at its default threads (one per
CPU), a report to slaq every second (the mean loss since the last)."""
import argparse
import time

import numpy as np
from sklearn.neural_network import MLPClassifier

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=20)
p.add_argument("--every-s", type=float, default=1.0)
a = p.parse_args()

client = slaq.Client()
x, y = fmnist.load()
clf = MLPClassifier(hidden_layer_sizes=(96,), learning_rate_init=0.002,
                    batch_size=100, random_state=3)
rng = np.random.default_rng(3)
n, last, losses = 0, time.monotonic(), []
for epoch in range(a.epochs):
    order = rng.permutation(len(x))
    for i in range(0, len(x), 1000):
        idx = order[i:i + 1000]
        clf.partial_fit(x[idx], y[idx], classes=np.arange(10))
        losses.append(clf.loss_)
        if time.monotonic() - last >= a.every_s:
            n += 1
            mean = sum(losses) / len(losses)
            client.report(n, mean)
            print("iter=%d loss=%.6f" % (n, mean), flush=True)
            last, losses = time.monotonic(), []
if losses:
    client.report(n + 1, sum(losses) / len(losses))
    print("iter=%d loss=%.6f" % (n + 1, sum(losses) / len(losses)),
          flush=True)
client.close()
