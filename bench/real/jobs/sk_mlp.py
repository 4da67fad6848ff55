"""sk_mlp.py — scikit-learn's MLPClassifier on Fashion-MNIST, one
partial_fit pass per epoch, reported to slaq (the model's loss_), with
its BLAS threads sized to slaq's advice — through the client's
scikit-learn helper, slaq.sklearn.partial_fit (docs/client.md)."""
import argparse

import numpy as np
from sklearn.neural_network import MLPClassifier

import fmnist
import slaq
import slaq.sklearn

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=12)
a = p.parse_args()


def show(r):
    print("iter=%d loss=%.6f" % (r.iteration, r.loss), flush=True)


# Opens the client before loading the data, as the job did before the
# helper: the first report's CPU seconds cover the loading.
client = slaq.Client(iters=a.epochs)
x, y = fmnist.load()
clf = MLPClassifier(hidden_layer_sizes=(128,), learning_rate_init=0.001,
                    batch_size=128, random_state=0)
# The whole set is one batch, so a step is an epoch, reported at its end.
slaq.sklearn.partial_fit(clf, [(x, y)], epochs=a.epochs,
                         classes=np.arange(10), initial_loss=np.log(10),
                         client=client, on_report=show)
client.close()
