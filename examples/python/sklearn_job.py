#!/usr/bin/env python3
"""sklearn_job.py — scikit-learn training under slaqd with slaq.sklearn.

Two ways a scikit-learn model trains step by step, on the bundled
handwritten digits (load_digits):

  --helper partial_fit  SGDClassifier (logistic loss) over mini-batches of
                        --batch images for --epochs passes; the loss is the
                        log loss on all the images, evaluated once per
                        report (every epoch, or every --every batches)
  --helper warm_start   MLPClassifier(warm_start=True, max_iter=1): each of
                        --epochs fit() calls trains one epoch; the loss is
                        the model's loss_, reported every --every calls

Both size BLAS's threads to slaqd's advice (threadpoolctl) and stop when
slaqd says so.

    slaq submit -- python3 examples/python/sklearn_job.py --helper warm_start
    python3 examples/python/sklearn_job.py --epochs 5     # without slaqd
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import SGDClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

import slaq.sklearn  # noqa: E402  (from the checkout when not installed)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--helper", choices=("partial_fit", "warm_start"),
                    default="partial_fit")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--every", type=int, default=None,
                    help="report every N steps (batches or fit calls); "
                    "default: every epoch")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    if a.helper == "partial_fit":
        batches = [(x[i:i + a.batch], y[i:i + a.batch])
                   for i in range(0, len(x), a.batch)]
        run = slaq.sklearn.partial_fit(
            SGDClassifier(loss="log_loss", alpha=1e-4, random_state=a.seed),
            batches, classes=np.arange(10), epochs=a.epochs,
            loss="neg_log_loss", eval_data=(x, y), every_steps=a.every,
            initial_loss=np.log(10))
    else:
        run = slaq.sklearn.warm_start_fit(
            MLPClassifier(hidden_layer_sizes=(64,), max_iter=1,
                          random_state=a.seed),
            x, y, rounds=a.epochs, every_steps=a.every)
    print("trained %d steps in %d reports (%s)%s" % (
        run.steps, run.reports, a.helper,
        "; stopped: " + run.stop_reason if run.stop_reason else ""))


if __name__ == "__main__":
    main()
