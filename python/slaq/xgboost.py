"""slaq.xgboost — XGBoost's boosting rounds reported to slaqd, as a callback.

    import slaq.xgboost
    booster = xgboost.train(params, dtrain, num_boost_round=200,
                            evals=[(dtrain, "train"), (dvalid, "valid")],
                            callbacks=[slaq.xgboost.Callback(rounds=200)])

(``XGBClassifier(callbacks=[...])`` with ``eval_set=`` works alike.) Each
boosting round is one step of a slaq.Loop (slaq/loop.py): the loop reports
every round by default (``every_steps``/``every_seconds`` change that),
the iteration being the rounds done. Training stops (``after_iteration``
returns True) when slaqd asks the job to stop or a target is reached.

The loss is one evaluation metric from ``evals_log``: by default the last
metric of the last data set in ``evals`` (the one XGBoost's own early
stopping watches), or those named by ``data``/``metric``. A metric that is
better when larger (``auc``, ``aucpr``, ``map``, ``ndcg``, ``pre`` and
their ``@`` forms; ``maximize=None`` decides by name as XGBoost does, or
say True/False) is reported negated, so the loss slaqd sees always falls
as the model improves; the metric's own value goes with each report as
its ``metric`` (named e.g. ``valid-auc``). Under ``xgboost.cv`` the
folds' mean is used.

Thread advice: the booster's ``nthread`` parameter is set to slaqd's
advice before training and whenever the advice changes. XGBoost is
imported when this module is, not by ``import slaq``.
"""

import math

from ._lib import need
from .loop import Loop, Report, StopTraining

xgboost = need("xgboost", "slaq.xgboost")

__all__ = ["Callback", "Report", "StopTraining"]

_MAXIMIZE = ("auc", "aucpr", "map", "ndcg", "pre", "auc@", "aucpr@", "map@",
             "ndcg@", "pre@")


def maximized(metric):
    """Whether XGBoost's metric ``metric`` is better when larger (by its
    name, as xgboost.callback.EarlyStopping decides)."""
    return metric != "mape" and any(metric.startswith(p) for p in _MAXIMIZE)


class Callback(xgboost.callback.TrainingCallback):
    """Reports each boosting round to slaqd (see the module's docstring).

    data, metric: the evals entry and metric to report (default: the last
    of each). maximize: None (by the metric's name), True or False.
    rounds: the rounds training will run (``num_boost_round``), declared
    to slaqd as the job's iterations. threads: True sets the booster's
    ``nthread`` to slaqd's advice; False leaves it. options: slaq.Loop's
    (every_steps, every_seconds, max_steps, target_loss, on_report,
    client, name, convergence...); ``target_loss`` compares with the
    reported (for a maximised metric, negated) value.

    The loop is opened in ``before_training`` and closed in
    ``after_training``, so the callback can be built (and copied) anywhere;
    a callback used for a second training goes on counting rounds.
    ``loop`` is the slaq.Loop of the training under way (or the last).
    """

    def __init__(self, data=None, metric=None, maximize=None, rounds=None,
                 threads=True, **options):
        super().__init__()
        for key in ("set_threads", "get_threads", "evaluate", "aggregate"):
            if key in options:
                raise TypeError("slaq.xgboost.Callback sets %s itself" % key)
        if options.get("every_steps") is None and \
                options.get("every_seconds") is None:
            options["every_steps"] = 1
        self.data = data
        self.metric = metric
        self.maximize = maximize
        self.rounds = rounds
        self.threads = threads
        self.options = options
        self.loop = None
        self._model = None
        self._threads_ok = True
        self._done = 0

    # The booster's nthread, as the loop sets it.
    def _set_nthread(self, n):
        if self._model is None or not self._threads_ok:
            return
        try:
            self._model.set_param({"nthread": int(n)})
        except Exception:  # a model that takes no parameters
            self._threads_ok = False

    def before_training(self, model):
        self._model = model
        opts = dict(self.options)
        if self.rounds is not None and opts.get("iters") is None:
            opts["iters"] = int(self.rounds)
        self.loop = Loop(aggregate="last", start_step=self._done,
                         set_threads=self._set_nthread if self.threads
                         else None, **opts)
        return model

    def _pick(self, evals_log):
        if not evals_log:
            raise ValueError(
                "slaq.xgboost.Callback reports an evaluation metric, and "
                "this training has none: give xgboost.train evals=[(dtrain, "
                "'train')] (eval_set= in the scikit-learn API)")
        data = self.data if self.data is not None else list(evals_log)[-1]
        if data not in evals_log:
            raise ValueError("slaq.xgboost.Callback: no data set %r in evals "
                             "(there are %s)" % (data, ", ".join(evals_log)))
        metrics = evals_log[data]
        metric = self.metric if self.metric is not None else list(metrics)[-1]
        if metric not in metrics:
            raise ValueError("slaq.xgboost.Callback: no metric %r on %r "
                             "(there are %s)" % (metric, data,
                                                 ", ".join(metrics)))
        value = metrics[metric][-1]
        if isinstance(value, tuple):  # xgboost.cv: (mean, std)
            value = value[0]
        return data, metric, float(value)

    def after_iteration(self, model, epoch, evals_log):
        self._model = model
        data, metric, value = self._pick(evals_log)
        if not math.isfinite(value):
            raise ValueError("slaq.xgboost.Callback: %s-%s is %r at round %d"
                             % (data, metric, value, epoch + 1))
        big = self.maximize if self.maximize is not None else \
            maximized(metric)
        if self.loop.steps == self._done and \
                self.options.get("metric_name") is None:
            try:
                self.loop.client.set_metric_name("%s-%s" % (data, metric))
            except ValueError:
                pass
        going = self.loop.step(-value if big else value, metric=value)
        return not going

    def after_training(self, model):
        if self.loop is not None:
            self._done = self.loop.steps
            self.loop.close()
        self._model = None
        return model
