"""sk_sgd.py — scikit-learn's SGDClassifier (logistic loss) on
Fashion-MNIST, one partial_fit pass per epoch; the loss reported to slaq
is the training set's log loss after the pass."""
import argparse
import time

import numpy as np
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import log_loss

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=15)
a = p.parse_args()

job = slaq.Client(iters=a.epochs)
x, y = fmnist.load()
clf = SGDClassifier(loss="log_loss", alpha=1e-4, learning_rate="optimal",
                    random_state=0)
classes = np.arange(10)
print("iter=0 loss=%.6f" % np.log(10), flush=True)
job.report(0, float(np.log(10)))
for epoch in range(1, a.epochs + 1):
    c0 = time.process_time()
    clf.partial_fit(x, y, classes=classes)
    loss = log_loss(y, clf.predict_proba(x), labels=classes)
    print("iter=%d loss=%.6f" % (epoch, loss), flush=True)
    job.report(epoch, loss, cpu_s=time.process_time() - c0, samples=len(x))
    if job.should_stop():
        break
job.close()
