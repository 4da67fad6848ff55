"""slaq — Python client for slaqd, the quality-driven training scheduler.

Standard library only (pandas optional, for Scheduler.history's
DataFrames). slaq.client.Client reports a training job's iterations;
slaq.Scheduler makes slaqd's control requests (submit, ls, show, history,
cancel...); `python3 -m slaq` is a command line over it. See
docs/client.md and docs/protocol.md.

The training-loop helpers for the libraries jobs train with are submodules
that import their library only when used (docs/client.md):
``slaq.torch.Job``, ``slaq.sklearn.partial_fit`` / ``warm_start_fit``,
``slaq.xgboost.Callback`` and ``slaq.skorch.Callback``; ``slaq.Loop``
(slaq.loop) is the framework-free core they share. ``slaq.torch`` and the
others are found as attributes after ``import slaq`` as well.
(``slaq.Report`` is a report of a job's history, as Scheduler.history
returns them; what a Loop sent is ``slaq.loop.Report``.)
"""

import importlib

from .client import Client, threads_for
from .control import request
from .loop import Loop, StopTraining
from .scheduler import (BadRequest, Job, Node, NotFound, PermissionDenied,
                        Report, Scheduler, SlaqError, Status, Unavailable)

__all__ = ["Client", "threads_for", "request", "Scheduler", "SlaqError",
           "PermissionDenied", "NotFound", "BadRequest", "Unavailable",
           "Job", "Report", "Status", "Node", "Loop", "StopTraining"]
__version__ = "0.1.0"

_HELPERS = ("torch", "sklearn", "xgboost", "skorch")


def __getattr__(name):
    """``slaq.torch`` and the other helpers, imported on first use (so
    that ``import slaq`` imports no training library)."""
    if name in _HELPERS:
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'slaq' has no attribute %r" % name)
