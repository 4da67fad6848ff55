"""slaq.sklearn — scikit-learn training under slaqd in one call.

    import slaq.sklearn
    # an estimator with partial_fit, over an iterable of (X, y) batches:
    run = slaq.sklearn.partial_fit(SGDClassifier(loss="log_loss"), batches,
                                   classes=classes, epochs=20,
                                   loss="neg_log_loss", eval_data=(X, y))
    # an estimator with warm_start, one fit() call (max_iter=1) per round:
    run = slaq.sklearn.warm_start_fit(
        MLPClassifier(max_iter=1, warm_start=True), X, y, rounds=30)
    print(run.steps, run.stop_reason)

Both run a slaq.Loop (slaq/loop.py): they report to slaqd (once per epoch
by default, or at the interval given), size the BLAS and OpenMP thread
pools to slaqd's advice with threadpoolctl (only when it changes), and
end the training early when slaqd says stop or a target is reached. They
return the Loop (``steps``, ``reports``, ``stop_reason``, ``last_report``).
The loss reported is, in this order of preference: ``loss`` evaluated on
``eval_data`` once per report; ``loss`` evaluated on each batch just fitted
(the mean over the interval); the estimator's ``loss_`` after each fit
(MLPClassifier, MLPRegressor). scikit-learn and threadpoolctl are imported
when this module is, not by ``import slaq``.
"""

import math
import warnings

from ._lib import need
from .loop import Loop, Report, StopTraining

sklearn = need("sklearn", "slaq.sklearn")
threadpoolctl = need("threadpoolctl", "slaq.sklearn")
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import get_scorer  # noqa: E402

__all__ = ["partial_fit", "warm_start_fit", "loss_function", "BlasThreads",
           "Report", "StopTraining"]


class BlasThreads:
    """The process's BLAS and OpenMP thread pools as a slaq.Loop sizes them:
    ``set(n)`` limits them to n threads (threadpoolctl), ``get()`` is the
    last limit set (None before), ``restore()`` gives back the limits they
    had before the first ``set``."""

    def __init__(self, user_api=None):
        self.user_api = user_api
        self._limits = None
        self._n = None

    def set(self, n):
        limits = threadpoolctl.threadpool_limits(limits=int(n),
                                                 user_api=self.user_api)
        if self._limits is None:
            self._limits = limits  # remembers the original limits
        self._n = int(n)

    def get(self):
        return self._n

    def restore(self):
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None
            self._n = None


def loss_function(loss):
    """The loss callable(estimator, X, y) -> float (lower is better) that
    ``loss`` names: a callable of that form is taken as it is; a string is
    a scikit-learn scorer's name (``"neg_log_loss"``,
    ``"neg_mean_squared_error"``, ``"accuracy"``...), whose score (greater
    is better) is negated, so ``"neg_log_loss"`` gives the log loss and
    ``"accuracy"`` minus the accuracy. None gives None."""
    if loss is None or callable(loss):
        return loss
    if isinstance(loss, str):
        scorer = get_scorer(loss)  # ValueError for an unknown name

        def negated(estimator, X, y):
            return -float(scorer(estimator, X, y))
        negated.__name__ = "negated_" + loss
        return negated
    raise TypeError("loss must be a callable(estimator, X, y), a scorer "
                    "name or None, got %r" % (loss,))


def _samples(X):
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape):
        return int(shape[0])
    return len(X)


def _fit(method, X, y, fit_params, quiet, warning):
    """One fit or partial_fit call on X (and y when given), the library's
    `warning` (ConvergenceWarning) silenced when quiet."""
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore", warning)
        if y is None:
            method(X, **fit_params)
        else:
            method(X, y, **fit_params)


def _step_loss(estimator, evaluate, lossf, X, y):
    """The loss a step reports: None when the loop evaluates it itself
    (evaluate), else lossf's, else the estimator's own (loss_)."""
    if evaluate is not None:
        return None
    if lossf is not None:
        return lossf(estimator, X, y)
    return _estimator_loss(estimator)


def _estimator_loss(estimator):
    loss = getattr(estimator, "loss_", None)
    if loss is None:
        raise ValueError(
            "%s has no loss_ attribute after fitting: give loss= (a "
            "callable(estimator, X, y) or a scorer name such as "
            "'neg_log_loss')" % type(estimator).__name__)
    return float(loss)


def _loop(estimator, options, threads, evaluate, aggregate, default_iters):
    options = dict(options)
    for key in ("set_threads", "get_threads", "evaluate", "aggregate"):
        if key in options:
            raise TypeError("slaq.sklearn sets %s itself" % key)
    if options.get("iters") is None and default_iters:
        options["iters"] = default_iters
    options.setdefault("name", None)
    pools = BlasThreads() if threads else None
    loop = Loop(set_threads=pools.set if pools else None,
                get_threads=pools.get if pools else None,
                evaluate=evaluate, aggregate=aggregate, **options)
    return loop, pools


def _finish(loop, pools):
    try:
        loop.close()
    finally:
        if pools is not None:
            pools.restore()


def partial_fit(estimator, batches, epochs=1, classes=None, loss=None,
                eval_data=None, initial_loss=None, threads=True,
                quiet=True, fit_params=None, **options):
    """Trains ``estimator`` with ``partial_fit`` over ``batches`` for
    ``epochs`` passes, reporting to slaqd. Returns the slaq.Loop.

    batches: an iterable of (X, y) pairs, or of X alone for an
        unsupervised estimator (MiniBatchKMeans...); for more than one
        epoch it must be iterable again (a list, or a callable returning a
        fresh iterable each epoch): a one-shot iterator raises ValueError.
    classes: passed to every partial_fit call (a classifier needs it on
        the first).
    loss: see the module's docstring and ``loss_function``.
    eval_data: (X, y) on which ``loss`` is evaluated once per report.
    initial_loss: a loss before training, reported as iteration 0.
    threads: True sizes BLAS/OpenMP to slaqd's advice (threadpoolctl),
        restored at the end; False leaves them alone.
    quiet: hides scikit-learn's ConvergenceWarning.
    fit_params: more keyword arguments for partial_fit.
    options: slaq.Loop's (every_steps, every_seconds, iteration,
        max_steps, target_loss, raise_on_stop, on_report, client, name,
        iters, convergence, metric_name). A step is one batch. Without
        every_steps or every_seconds the loop reports at each epoch's end;
        ``iters`` defaults to the steps (or, with ``iteration="report"``
        and per-epoch reports, the epochs) when ``batches`` has a length.

    The training stops early (the Loop's ``stop_reason`` says why) when
    slaqd asks the job to stop or one of the Loop's targets is met.
    """
    if not hasattr(estimator, "partial_fit"):
        raise TypeError("%s has no partial_fit (for warm_start estimators "
                        "use slaq.sklearn.warm_start_fit)"
                        % type(estimator).__name__)
    epochs = int(epochs)
    if epochs < 1:
        raise ValueError("epochs must be >= 1, got %r" % epochs)
    if callable(batches):
        source = batches
    else:
        if epochs > 1 and iter(batches) is batches:
            raise ValueError("batches is a one-shot iterator: for %d epochs "
                             "give a list or a callable returning a fresh "
                             "iterable" % epochs)
        source = lambda: batches  # noqa: E731
    lossf = loss_function(loss)
    if eval_data is not None and lossf is None:
        raise ValueError("eval_data needs loss= (what to evaluate on it)")
    evaluate = None
    if eval_data is not None:
        ex, ey = eval_data
        evaluate = lambda: lossf(estimator, ex, ey)  # noqa: E731
    per_epoch = options.get("every_steps") is None and \
        options.get("every_seconds") is None
    if per_epoch:
        options["every_steps"] = 1 << 62  # only the epochs' flushes
    n = len(batches) if hasattr(batches, "__len__") else None
    iters = None
    if n:
        if options.get("iteration", "step") == "step":
            iters = n * epochs
        elif per_epoch:
            iters = epochs
    fit_params = dict(fit_params or {})
    if classes is not None:
        fit_params["classes"] = classes
    loop, pools = _loop(estimator, options, threads, evaluate, "mean", iters)
    try:
        if initial_loss is not None:
            loop.initial_loss(initial_loss)
        going = True
        for _ in range(epochs):
            for batch in source():
                if isinstance(batch, tuple) and len(batch) == 2:
                    X, y = batch
                else:
                    X, y = batch, None
                _fit(estimator.partial_fit, X, y, fit_params, quiet,
                     ConvergenceWarning)
                step_loss = _step_loss(estimator, evaluate, lossf, X, y)
                going = loop.step(step_loss, samples=_samples(X))
                if not going:
                    break
            if not going:
                break
            if per_epoch:
                loop.flush()
                if loop.should_stop():
                    break
    finally:
        _finish(loop, pools)
    return loop


def warm_start_fit(estimator, X, y=None, rounds=10, grow=None, loss=None,
                   eval_data=None, initial_loss=None, threads=True,
                   quiet=True, fit_params=None, **options):
    """Trains an estimator with ``warm_start`` by calling ``fit(X, y)``
    ``rounds`` times, each call going on from the last, reporting to slaqd
    after every call (one step; ``every_steps``/``every_seconds`` change
    that). Returns the slaq.Loop.

    ``warm_start`` is set to True. Each call trains what the estimator's
    own parameters say: ``max_iter=1`` makes it one epoch for
    MLPClassifier/MLPRegressor and SGDClassifier/SGDRegressor (give SGD
    ``tol=None``). grow: (parameter, increment) for ensembles that grow
    when warm-started, e.g. ``("n_estimators", 10)`` for
    GradientBoostingClassifier or RandomForestClassifier: the parameter is
    raised by the increment before every call after the first.
    loss, eval_data, initial_loss, threads, quiet, fit_params and options:
    as for ``partial_fit`` (a step is one fit call; ``iters`` defaults to
    ``rounds``; the report's loss is the last call's, not a mean).
    """
    params = estimator.get_params()
    if "warm_start" not in params:
        raise TypeError("%s has no warm_start parameter (for partial_fit "
                        "estimators use slaq.sklearn.partial_fit)"
                        % type(estimator).__name__)
    rounds = int(rounds)
    if rounds < 1:
        raise ValueError("rounds must be >= 1, got %r" % rounds)
    if grow is not None:
        gname, ginc = grow
        if gname not in params:
            raise ValueError("grow: %s has no parameter %r"
                             % (type(estimator).__name__, gname))
        if not (isinstance(ginc, int) and ginc > 0):
            raise ValueError("grow: the increment must be a positive "
                             "integer, got %r" % (ginc,))
    estimator.set_params(warm_start=True)
    lossf = loss_function(loss)
    if eval_data is not None and lossf is None:
        raise ValueError("eval_data needs loss= (what to evaluate on it)")
    evaluate = None
    if eval_data is not None:
        ex, ey = eval_data
        evaluate = lambda: lossf(estimator, ex, ey)  # noqa: E731
    if options.get("every_steps") is None and \
            options.get("every_seconds") is None:
        options["every_steps"] = 1
    iters = rounds if options.get("iteration", "step") == "step" or \
        options["every_steps"] == 1 else None
    fit_params = dict(fit_params or {})
    loop, pools = _loop(estimator, options, threads, evaluate, "last", iters)
    try:
        if initial_loss is not None:
            loop.initial_loss(initial_loss)
        n = _samples(X)
        for r in range(rounds):
            if grow is not None and r > 0:
                estimator.set_params(
                    **{gname: estimator.get_params()[gname] + ginc})
            _fit(estimator.fit, X, y, fit_params, quiet, ConvergenceWarning)
            step_loss = _step_loss(estimator, evaluate, lossf, X, y)
            if step_loss is not None and not math.isfinite(step_loss):
                raise ValueError("slaq: round %d's loss is %r" % (r + 1,
                                                                  step_loss))
            if not loop.step(step_loss, samples=n):
                break
    finally:
        _finish(loop, pools)
    return loop
