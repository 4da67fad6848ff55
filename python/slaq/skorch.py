"""slaq.skorch — a skorch net's training reported to slaqd, as a callback.

    import slaq.skorch
    net = NeuralNetClassifier(Module, max_epochs=50,
                              callbacks=[slaq.skorch.Callback()])
    net.fit(X, y)

Each epoch is one step of a slaq.Loop (slaq/loop.py), reported at the
epoch's end, the iteration being the epochs done; the loss is the epoch's
``valid_loss`` when the net has a validation split, else its
``train_loss`` (``loss=`` names another column of ``net.history``, lower
being better), and ``metric=`` adds a history column (``valid_acc``) as
the report's quality metric. With ``on="batch"`` every training batch is
a step instead (its loss; a report's loss is the mean over its batches,
weighted by their sizes), reported every ``every_steps`` batches or
``every_seconds`` (default: every second).

torch's thread pool follows slaqd's advice (``torch.set_num_threads``, only
when it changes). On a stop (slaqd's, or a target of the loop's) the
callback ends the training as skorch's EarlyStopping does, by raising
KeyboardInterrupt, which ``net.fit`` catches: fit returns normally, the
net trained so far. ``callback.loop.stop_reason`` says why. skorch (and
PyTorch) are imported when this module is, not by ``import slaq``.
"""

from ._lib import need
from .loop import Loop, Report, StopTraining

skorch = need("skorch", "slaq.skorch")
torch = need("torch", "slaq.skorch")
import skorch.callbacks  # noqa: E402

__all__ = ["Callback", "Report", "StopTraining"]


class Callback(skorch.callbacks.Callback):
    """Reports a skorch net's epochs (or batches) to slaqd (see the
    module's docstring).

    on: ``"epoch"`` (the default) or ``"batch"``. loss: the history
    column to report (epochs only; default ``valid_loss`` if the epoch has
    one, else ``train_loss``). metric: a history column sent as the
    report's metric (epochs only), also the metric's name unless
    ``metric_name`` says otherwise. threads: True sizes torch's pool to
    slaqd's advice. options: slaq.Loop's (every_steps, every_seconds,
    max_steps, target_loss, on_report, client, name, iters,
    convergence...); with ``on="epoch"`` the loop reports every epoch
    unless told otherwise, and ``iters`` defaults to the net's
    ``max_epochs``.

    The loop is opened at ``on_train_begin`` and closed at
    ``on_train_end`` (so the callback can be cloned with the net); a
    second ``fit``/``partial_fit`` goes on counting steps. ``loop`` is the
    training's slaq.Loop (None before the first). slaq.Loop's options may
    also come as one dict, ``options=`` (what ``get_params`` gives, so that
    scikit-learn's ``clone`` copies the callback).
    """

    def __init__(self, on="epoch", loss=None, metric=None, threads=True,
                 options=None, **more):
        if more:
            options = dict(options or {}, **more)
        if on not in ("epoch", "batch"):
            raise ValueError('on must be "epoch" or "batch", got %r' % (on,))
        for key in ("set_threads", "get_threads", "evaluate", "aggregate",
                    "raise_on_stop"):
            if key in (options or {}):
                raise TypeError("slaq.skorch.Callback sets %s itself" % key)
        if on == "batch" and (loss is not None or metric is not None):
            raise ValueError("loss= and metric= name history columns of "
                             "epochs; with on='batch' the batch's loss is "
                             "reported")
        self.on = on
        self.loss = loss
        self.metric = metric
        self.threads = threads
        self.options = options
        self.loop_ = None
        self.done_ = 0

    def initialize(self):
        return self

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        if self.loop_ is not None and not self.loop_._closed:
            return
        opts = dict(self.options or {})
        if self.on == "epoch":
            if opts.get("every_steps") is None and \
                    opts.get("every_seconds") is None:
                opts["every_steps"] = 1
            if opts.get("iters") is None and \
                    getattr(net, "max_epochs", None):
                opts["iters"] = int(net.max_epochs)
            if self.metric is not None and opts.get("metric_name") is None:
                opts["metric_name"] = self.metric
        self.loop_ = Loop(
            aggregate="last" if self.on == "epoch" else "mean",
            set_threads=torch.set_num_threads if self.threads else None,
            get_threads=torch.get_num_threads, start_step=self.done_, **opts)

    @property
    def loop(self):
        """The slaq.Loop of the training under way (or the last one)."""
        return self.loop_

    def _go_on(self, going):
        if not going:
            raise KeyboardInterrupt  # skorch's fit ends the training

    def on_epoch_end(self, net, dataset_train=None, dataset_valid=None,
                     **kwargs):
        if self.on != "epoch" or self.loop_ is None:
            return
        row = net.history[-1]
        key = self.loss
        if key is None:
            key = "valid_loss" if "valid_loss" in row else "train_loss"
        if key not in row:
            raise ValueError("slaq.skorch.Callback: the epoch's history has "
                             "no %r (it has %s)" % (key, ", ".join(
                                 k for k in row if k != "batches")))
        metric = None
        if self.metric is not None:
            if self.metric not in row:
                raise ValueError("slaq.skorch.Callback: the epoch's history "
                                 "has no %r" % self.metric)
            metric = float(row[self.metric])
        samples = len(dataset_train) if dataset_train is not None else 0
        self._go_on(self.loop_.step(float(row[key]), samples=samples,
                                    metric=metric))

    def on_batch_end(self, net, batch=None, training=None, **kwargs):
        if self.on != "batch" or not training or self.loop_ is None:
            return
        loss = kwargs.get("loss")
        if loss is None:
            raise ValueError("slaq.skorch.Callback: skorch gave the batch no "
                             "loss")
        if isinstance(loss, torch.Tensor):
            loss = loss.detach()
            loss = float(loss) if loss.numel() == 1 else float(loss.mean())
        n = 0
        if isinstance(batch, (tuple, list)) and batch:
            first = batch[0]
            n = len(first) if hasattr(first, "__len__") else 0
        self._go_on(self.loop_.step(loss, samples=n))

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if self.loop_ is not None:
            self.done_ = self.loop_.steps
            self.loop_.close()
