"""u_xgb.py — XGBoost on Fashion-MNIST with nthread set once, before
training, from ceil(cores()), as a user sizes a job at its start and
never again; a report to slaq after every boosting round (the training
multi-class log-loss)."""
import argparse
import math

import xgboost as xgb

import fmnist
import slaq

p = argparse.ArgumentParser()
p.add_argument("--rounds", type=int, default=30)
a = p.parse_args()

client = slaq.Client()
x, y = fmnist.load(8000)
train = xgb.DMatrix(x, label=y)
params = {"objective": "multi:softprob", "num_class": 10, "max_depth": 4,
          "eta": 0.3, "tree_method": "hist", "max_bin": 32,
          "eval_metric": "mlogloss",
          "nthread": max(1, math.ceil(client.cores()))}


class Report(xgb.callback.TrainingCallback):
    def after_iteration(self, model, epoch, evals_log):
        loss = evals_log["train"]["mlogloss"][-1]
        client.report(epoch + 1, loss)
        print("iter=%d loss=%.6f" % (epoch + 1, loss), flush=True)
        return False


xgb.train(params, train, a.rounds, evals=[(train, "train")],
          verbose_eval=False, callbacks=[Report()])
client.close()
