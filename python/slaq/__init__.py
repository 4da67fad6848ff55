"""slaq — Python client for slaqd, the quality-driven training scheduler.

Standard library only (pandas optional, for Scheduler.history's
DataFrames). slaq.client.Client reports a training job's iterations;
slaq.Scheduler makes slaqd's control requests (submit, ls, show, history,
cancel...); `python3 -m slaq` is a command line over it. See
docs/client.md and docs/protocol.md.
"""

from .client import Client, threads_for
from .control import request
from .scheduler import (BadRequest, Job, Node, NotFound, PermissionDenied,
                        Report, Scheduler, SlaqError, Status, Unavailable)

__all__ = ["Client", "threads_for", "request", "Scheduler", "SlaqError",
           "PermissionDenied", "NotFound", "BadRequest", "Unavailable",
           "Job", "Report", "Status", "Node"]
__version__ = "0.1.0"
