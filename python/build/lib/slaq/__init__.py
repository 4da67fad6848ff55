"""slaq — Python client for slaqd, the quality-driven training scheduler.

Standard library only. See slaq.client.Client and docs/protocol.md.
"""

from .client import Client

__all__ = ["Client"]
__version__ = "0.1.0"
