"""slaq.loop — the training-loop core that slaq's library helpers share.

A ``Loop`` sits in a training loop and does, at every step, what a job
under slaqd has to do: it collects the step's loss, reports once per
interval (every N steps or S seconds, whichever comes first) the
interval's loss, CPU seconds, samples and threads, sizes the job's thread
pool to slaqd's advice, and says when to stop — slaqd asked it to
(``stop``), or one of the loop's own targets (``max_steps``,
``target_loss``) was reached. Standard library only; slaq.torch,
slaq.sklearn, slaq.xgboost and slaq.skorch build on it, and a loop written
in anything else can use it directly::

    with slaq.Loop(every_steps=20, set_threads=pool.resize) as loop:
        for batch in batches:
            if not loop.step(train(batch), samples=len(batch)):
                break

Without slaqd (no ``SLAQ_SOCKET``) everything works the same: the reports
go nowhere, the thread advice is slaq's thread rule on the default
allocation, and only the loop's own targets stop it.
"""

import collections
import math
import select
import time

from .client import Client

__all__ = ["Loop", "Report", "StopTraining"]

_WELCOME_WAIT_S = 0.5


class StopTraining(Exception):
    """Raised by ``Loop.step`` (and the helpers' steps) on a stop when the
    loop was made with ``raise_on_stop=True``; a ``with`` block around the
    loop swallows it. ``reason`` is why: slaqd's stop reason
    (``target_reduction``, ``max_iters``, ``cancelled``...) or the loop's
    own (``max_steps``, ``target_loss``)."""

    def __init__(self, reason):
        super().__init__("slaq: training stopped (%s)" % reason)
        self.reason = reason


Report = collections.namedtuple(
    "Report", "iteration loss steps samples cpu_s threads metric sent")
Report.__doc__ = """One report as the loop made it: the iteration it was
sent as, its loss, the steps and samples it covers, the CPU seconds the
process used over them, the threads they ran (None when not known), the
metric (or None) and whether the client queued it (False: dropped, e.g.
no slaqd)."""


def _positive(name, value, kind=float):
    if value is None:
        return None
    value = kind(value)
    if not value > 0 or (kind is float and not math.isfinite(value)):
        raise ValueError("%s must be a positive number or None, got %r"
                         % (name, value))
    return value


class Loop:
    """One training loop's reporting, thread advice and stopping.

    every_steps, every_seconds: report after this many steps, or once this
        many seconds have passed since the previous report, whichever comes
        first; with neither, every second. ``flush()`` reports at once.
    iteration: what the reports' iteration numbers count: ``"step"`` (the
        steps so far, the default: iterations between reports are skipped,
        as the protocol allows) or ``"report"`` (1, 2, ... one per report,
        for a loop reporting once per epoch). ``iters`` is in the same unit.
    aggregate: a report's loss: ``"mean"`` of its steps' losses (weighted
        by their ``samples`` when given: the usual mini-batch average) or
        the ``"last"`` step's (for losses that measure the model's state,
        such as a boosting round's evaluation).
    evaluate: a callable() returning the loss, or (loss, metric), called at
        each report instead of using the steps' losses (an evaluation on
        held-out data, once per report).
    max_steps: stop after this many steps (``stop_reason`` "max_steps").
    target_loss: stop once a report's loss is at most this ("target_loss").
    set_threads: a callable(n) that resizes the job's thread pool; it is
        called with slaqd's advice (``Client.threads()``: never more than
        the thread rule allows) only when the advice changes, before the
        first step and at each report; a fall in the advice is followed
        within ``check_seconds``. get_threads: a callable() giving the
        pool's current size (what a report says its steps ran when
        set_threads is None). With neither, the reports say nothing of
        threads.
    check_seconds: at most this often between reports the loop asks the
        client whether slaqd said stop or lowered its advice (0.2 s).
    raise_on_stop: ``step()`` raises StopTraining on a stop instead of
        returning False.
    on_report: a callable(Report) called after each report (to log it).
    client: a slaq.Client to report through (left open by ``close()``);
        by default the loop opens one from the environment with ``name``,
        ``iters``, ``convergence`` and ``metric_name`` (see slaq.Client)
        and closes it.
    start_step: the steps already done (a loop that goes on from another).

    A job under slaqd waits up to 0.5 s here for slaqd's welcome, so that
    its first steps already run the advised threads.
    """

    def __init__(self, every_steps=None, every_seconds=None,
                 iteration="step", aggregate="mean", evaluate=None,
                 max_steps=None, target_loss=None, set_threads=None,
                 get_threads=None, check_seconds=0.2, raise_on_stop=False,
                 on_report=None, client=None, name=None, iters=None,
                 convergence=None, metric_name=None, start_step=0):
        self.every_steps = _positive("every_steps", every_steps, int)
        self.every_seconds = _positive("every_seconds", every_seconds)
        if self.every_steps is None and self.every_seconds is None:
            self.every_seconds = 1.0
        if iteration not in ("step", "report"):
            raise ValueError('iteration must be "step" or "report", got %r'
                             % (iteration,))
        if aggregate not in ("mean", "last"):
            raise ValueError('aggregate must be "mean" or "last", got %r'
                             % (aggregate,))
        if evaluate is not None and not callable(evaluate):
            raise TypeError("evaluate must be callable")
        for fname, f in (("set_threads", set_threads),
                         ("get_threads", get_threads),
                         ("on_report", on_report)):
            if f is not None and not callable(f):
                raise TypeError("%s must be callable" % fname)
        self.iteration = iteration
        self.aggregate = aggregate
        self.evaluate = evaluate
        self.max_steps = _positive("max_steps", max_steps, int)
        self.target_loss = None if target_loss is None else float(target_loss)
        self.check_seconds = max(0.0, float(check_seconds))
        self.raise_on_stop = bool(raise_on_stop)
        self.on_report = on_report
        self._set_threads = set_threads
        self._get_threads = get_threads
        self._own_client = client is None
        if client is None:
            client = Client(name=name, iters=iters, convergence=convergence,
                            metric_name=metric_name)
        else:
            if iters is not None:
                client.set_iters(iters)
            if convergence is not None:
                client.set_convergence(convergence)
            if metric_name is not None:
                client.set_metric_name(metric_name)
        self.client = client
        self.steps = int(start_step)
        self.reports = 0
        self.last_report = None
        self.stop_reason = None
        self._closed = False
        self._threads = None      # the pool's size as this loop set it
        self._new_interval(time.monotonic())
        self._await_welcome()
        self._update_threads(lower_only=False)

    # ------------------------------------------------------------ public

    @property
    def stopped(self):
        """True once the loop has stopped (slaqd's stop or a target)."""
        return self.stop_reason is not None

    def should_stop(self):
        """True once the loop has stopped or slaqd asked the job to stop
        (checked now)."""
        if self.stop_reason is None and self.client.should_stop():
            self._stop(self.client.stop_reason or "stop")
        return self.stop_reason is not None

    @property
    def threads(self):
        """The thread count the loop last set (None before any)."""
        return self._threads

    @property
    def pending_steps(self):
        """Steps done since the last report."""
        return self._int_steps

    def initial_loss(self, loss, metric=None):
        """Reports the loss before training as iteration 0 (optional; only
        before the first step), with the CPU seconds since the client
        opened (the job's start-up). Returns the Report."""
        if self.steps or self.reports or self._int_steps:
            raise RuntimeError("initial_loss() comes before the first step")
        return self._send(0, float(loss), 0, 0.0, metric)

    def step(self, loss=None, samples=0, metric=None):
        """Records one training step: its loss (a number, or anything
        ``float()`` takes; None when ``evaluate`` gives the losses), the
        samples it processed and, optionally, the quality metric after it.
        Reports when the interval is over. Returns True to go on, False
        once the loop has stopped (then, with ``raise_on_stop``, raises
        StopTraining instead). A step after the stop is still recorded.
        Raises ValueError when a report's loss is not finite."""
        self.steps += 1
        self._int_steps += 1
        samples = float(samples or 0)
        if samples < 0 or not math.isfinite(samples):
            raise ValueError("samples must be >= 0, got %r" % samples)
        self._int_samples += samples
        if loss is not None:
            value = self._value(loss)
            if self.aggregate == "last":
                self._acc, self._weight = value, 1.0
            else:
                w = samples if samples > 0 else 1.0
                self._acc = self._acc + value * w
                self._weight += w
        if metric is not None:
            self._metric = metric
        now = time.monotonic()
        if (self.every_steps and self._int_steps >= self.every_steps) or \
                (self.every_seconds and
                 now - self._int_start >= self.every_seconds):
            self._report_interval()
        elif now - self._last_check >= self.check_seconds:
            self._last_check = now
            self.should_stop()
            self._update_threads(lower_only=True)
        if self.max_steps and self.steps >= self.max_steps and \
                self.stop_reason is None:
            self._stop("max_steps")
        if self.stop_reason is not None:
            if self._int_steps:
                self._report_interval()
            if self.raise_on_stop:
                raise StopTraining(self.stop_reason)
            return False
        return True

    def flush(self):
        """Reports the steps since the last report now (at an epoch's end,
        say) and starts a new interval. Returns the Report, or None when
        there was nothing to report."""
        if not self._int_steps:
            return None
        return self._report_interval()

    def close(self):
        """Reports what is left (``flush``), and closes the client if the
        loop opened it (waiting at most 1 s for slaqd to confirm the
        reports). Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        finally:
            if self._own_client:
                self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return exc_type is not None and issubclass(exc_type, StopTraining)

    # ----------------------------------------------------------- private

    def _value(self, loss):
        """A step's loss as the accumulator takes it (the torch helper keeps
        tensors, to read them only at a report)."""
        return float(loss)

    def _new_interval(self, now):
        self._int_start = now
        self._last_check = now
        self._int_steps = 0
        self._int_samples = 0.0
        self._acc = 0.0
        self._weight = 0.0
        self._metric = None
        self._cpu0 = time.process_time()

    def _await_welcome(self):
        """Waits (at most 0.5 s) for slaqd's welcome when a connection is
        under way, so that the advice is known before the first step."""
        c = self.client
        deadline = time.monotonic() + _WELCOME_WAIT_S
        while not c.connected and getattr(c, "_sock", None) is not None \
                and time.monotonic() < deadline:
            c.poll()
            sock = getattr(c, "_sock", None)
            if sock is None or c.connected:
                break
            select.select([sock], [], [], 0.01)

    def _pool_size(self):
        if self._get_threads is not None:
            try:
                return int(self._get_threads())
            except Exception:  # a pool that cannot say
                return None
        return self._threads

    def _update_threads(self, lower_only):
        """Follows the advice: sets the pool when the advice differs from
        its size (only when it is lower, mid-interval), and tells the
        client what the coming steps run."""
        if self._set_threads is None:
            n = self._pool_size()
            if n is not None and n >= 1:
                self.client.set_threads(n)
            return
        advice = self.client.threads()
        current = self._threads if self._threads is not None \
            else self._pool_size()
        if current is None or (advice != current and
                               (not lower_only or advice < current)):
            self._set_threads(advice)
            self._threads = advice
        elif self._threads is None:
            self._threads = current
        self.client.set_threads(self._threads)

    def _interval_loss(self):
        metric = self._metric
        if self.evaluate is not None:
            got = self.evaluate()
            if isinstance(got, tuple):
                got, metric = got
            return float(got), metric
        if self._weight <= 0:
            raise ValueError("slaq: no loss to report for steps %d-%d: give "
                             "step() a loss, or the loop an evaluate "
                             "callable" % (self.steps - self._int_steps + 1,
                                           self.steps))
        return float(self._acc / self._weight), metric

    def _report_interval(self):
        loss, metric = self._interval_loss()
        if not math.isfinite(loss):
            raise ValueError("slaq: the loss of steps %d-%d is %r (did the "
                             "training diverge?)" % (
                                 self.steps - self._int_steps + 1, self.steps,
                                 loss))
        iteration = self.steps if self.iteration == "step" \
            else self.reports + 1
        rep = self._send(iteration, loss, self._int_steps, self._int_samples,
                         metric)
        if self.target_loss is not None and loss <= self.target_loss and \
                self.stop_reason is None:
            self._stop("target_loss")
        self.should_stop()
        self._update_threads(lower_only=False)
        return rep

    def _send(self, iteration, loss, steps, samples, metric):
        if iteration == 0:
            # The loss before training covers the job's start-up: the CPU
            # seconds since the client opened (or last reported).
            cpu_s = max(0.0, time.process_time() -
                        getattr(self.client, "_cpu_prev", self._cpu0))
        else:
            cpu_s = max(0.0, time.process_time() - self._cpu0)
        threads = self._threads if self._set_threads is not None \
            else self._pool_size()
        if metric is not None:
            metric = float(metric)
        sent = self.client.report(iteration, loss, cpu_s=cpu_s,
                                  samples=samples, metric=metric)
        if iteration:
            self.reports += 1
        rep = Report(iteration, loss, steps, samples, cpu_s, threads, metric,
                     sent)
        self.last_report = rep
        self._new_interval(time.monotonic())
        if self.on_report is not None:
            self.on_report(rep)
        return rep

    def _stop(self, reason):
        if self.stop_reason is None:
            self.stop_reason = reason
