"""slaq.torch — a PyTorch training loop under slaqd in two lines.

    import slaq.torch
    job = slaq.torch.Job(every_steps=50)
    for x, y in loader:
        loss = lossf(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if not job.step(loss, samples=len(x)):
            break                      # slaqd said stop, or a target
    job.close()

``Job`` is a slaq.Loop (slaq/loop.py) that keeps the steps' loss tensors
without reading them (no device synchronisation per step) until a report,
and sizes torch's intra-op thread pool (``torch.set_num_threads``) and,
where threadpoolctl is installed, the BLAS library's pool (PyTorch's
matrix products run on it when it is built against OpenBLAS, as Debian's
is) to slaqd's thread advice, only when the advice changes. PyTorch is imported
when this module is, not by ``import slaq``.
"""

from ._lib import need
from .loop import Loop, Report, StopTraining

torch = need("torch", "slaq.torch")
try:
    import threadpoolctl
except ImportError:  # torch's own pool only
    threadpoolctl = None

__all__ = ["Job", "Report", "StopTraining"]


def _set_threads(n):
    """torch's pool and the BLAS library's, both at n threads: a BLAS pool
    left at one thread per CPU spins beside torch's on a share of fewer
    cores (docs/client.md, "Threads")."""
    torch.set_num_threads(int(n))
    if threadpoolctl is not None:
        threadpoolctl.threadpool_limits(limits=int(n), user_api="blas")


def _pools_threads():
    """torch's pool size, or None (to be set) while the BLAS pool's
    differs from it."""
    n = torch.get_num_threads()
    if threadpoolctl is not None and any(
            i["num_threads"] != n for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas"):
        return None
    return n


class Job(Loop):
    """A PyTorch training loop's reporting to slaqd.

    Takes slaq.Loop's options (every_steps, every_seconds, iteration,
    aggregate, max_steps, target_loss, raise_on_stop, on_report, client,
    name, iters, convergence, metric_name...); with neither every_steps
    nor every_seconds it reports every second. threads: True (the default)
    sizes ``torch.set_num_threads`` and the BLAS pool to slaqd's advice
    (never more than it, set only when it changes); False leaves torch's pool alone, and the
    reports then say the steps ran ``torch.get_num_threads()`` threads.

    ``step(loss, samples=0, metric=None)`` takes the step's loss as a
    one-element tensor (or a number); it returns False once the job is to
    stop (raises StopTraining with ``raise_on_stop=True``; a ``with`` block
    swallows it). ``job.should_stop()``, ``job.stop_reason``, ``flush()``,
    ``initial_loss()`` and ``close()`` are slaq.Loop's.
    """

    def __init__(self, every_steps=None, every_seconds=None, threads=True,
                 **options):
        for key in ("set_threads", "get_threads"):
            if key in options:
                raise TypeError("slaq.torch.Job sets %s itself (threads=False "
                                "leaves torch's pool alone)" % key)
        super().__init__(every_steps=every_steps, every_seconds=every_seconds,
                         set_threads=_set_threads if threads else None,
                         get_threads=_pools_threads if threads else
                         torch.get_num_threads, **options)

    def _value(self, loss):
        if isinstance(loss, torch.Tensor):
            if loss.numel() != 1:
                raise ValueError("slaq.torch.Job.step() takes a scalar loss "
                                 "(loss.mean(), say), got a tensor of shape "
                                 "%s" % (tuple(loss.shape),))
            return loss.detach().reshape(()).to(torch.float64)
        return float(loss)

    def _interval_loss(self):
        loss, metric = super()._interval_loss()
        if isinstance(metric, torch.Tensor):
            metric = float(metric)
        return loss, metric
