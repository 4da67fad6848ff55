"""A soak's ML job through the Python client: reports a falling loss for
ITERS iterations (0 to ITERS-1), one every STEP seconds, then waits up to
60 s for slaqd to acknowledge every report and exits. With
SLAQ_CLIENT_ACK_LOG set, the client logs each acknowledged report.

usage: pyjob.py ITERS STEP
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

iters, step = int(sys.argv[1]), float(sys.argv[2])
c = Client(name="soak-py", iters=iters)
for i in range(iters):
    time.sleep(step)
    c.report(i, 1.0 / (i + 1), cpu_s=0.001, samples=10)
    if c.should_stop():
        break
c.close(timeout=60)
sys.exit(0 if c.unacked == 0 else 3)
