#!/usr/bin/env python3
"""xgboost_job.py — XGBoost boosting rounds under slaqd with
slaq.xgboost.Callback.

A binary classifier on make_classification's synthetic data, as a pandas
DataFrame with named columns as tabular data usually comes (the held-out
quarter as "valid"); every boosting round is reported to slaqd with the
validation log loss (the last metric of the last evals entry), the
booster's nthread follows slaqd's advice, and training ends early when
slaqd says stop.

    slaq submit -- python3 examples/python/xgboost_job.py --rounds 300
    python3 examples/python/xgboost_job.py --rounds 20   # without slaqd
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
import pandas  # noqa: E402
import xgboost  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402

import slaq.xgboost  # noqa: E402  (from the checkout when not installed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--every", type=int, default=1,
                    help="report every N rounds (1)")
    ap.add_argument("--eta", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    x, y = make_classification(n_samples=a.samples, n_features=20,
                               n_informative=10, random_state=a.seed)
    frame = pandas.DataFrame(x, columns=["f%02d" % i for i in range(20)])
    cut = a.samples * 3 // 4
    train = xgboost.DMatrix(frame.iloc[:cut], y[:cut])
    valid = xgboost.DMatrix(frame.iloc[cut:], y[cut:])
    cb = slaq.xgboost.Callback(rounds=a.rounds, every_steps=a.every)
    booster = xgboost.train(
        {"objective": "binary:logistic", "eval_metric": ["auc", "logloss"],
         "eta": a.eta, "max_depth": 4, "seed": a.seed},
        train, num_boost_round=a.rounds,
        evals=[(train, "train"), (valid, "valid")], callbacks=[cb],
        verbose_eval=False)
    print("trained %d rounds in %d reports%s" % (
        booster.num_boosted_rounds(), cb.loop.reports,
        "; stopped: " + cb.loop.stop_reason if cb.loop.stop_reason else ""))


if __name__ == "__main__":
    main()
