"""slaq — Python client for slaqd, the quality-driven training scheduler.

Standard library only. See slaq.client.Client and docs/protocol.md.
"""

from .client import Client, threads_for
from .control import request

__all__ = ["Client", "threads_for", "request"]
__version__ = "0.1.0"
