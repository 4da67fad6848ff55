"""sk_mlp.py — scikit-learn's MLPClassifier on Fashion-MNIST, one
partial_fit pass per epoch, reported to slaq (the model's loss_), with
its BLAS threads sized to slaq's allocation."""
import argparse
import time

import numpy as np
from sklearn.neural_network import MLPClassifier
from threadpoolctl import threadpool_limits

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=12)
a = p.parse_args()

job = slaq.Client(iters=a.epochs)
x, y = fmnist.load()
clf = MLPClassifier(hidden_layer_sizes=(128,), learning_rate_init=0.001,
                    batch_size=128, random_state=0)
classes = np.arange(10)
print("iter=0 loss=%.6f" % np.log(10), flush=True)
job.report(0, float(np.log(10)))
for epoch in range(1, a.epochs + 1):
    c0 = time.process_time()
    with threadpool_limits(job.threads()):
        clf.partial_fit(x, y, classes=classes)
    print("iter=%d loss=%.6f" % (epoch, clf.loss_), flush=True)
    job.report(epoch, clf.loss_, cpu_s=time.process_time() - c0,
               samples=len(x))
    if job.should_stop():
        break
job.close()
