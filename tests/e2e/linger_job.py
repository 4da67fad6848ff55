"""A sweep's test job that is slow to go: it reports the metric
val_accuracy, a flat 0.5 that no policy keeps, after each of EPOCHS
epochs (0.1 s each), and once asked to stop (or sent SIGTERM) goes on for
LINGER seconds before it exits, as a job saving its work on its way out
does. Further arguments (the sweep's parameters) are ignored.

usage: linger_job.py EPOCHS LINGER [ARG...]
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

epochs, linger = int(sys.argv[1]), float(sys.argv[2])
termed = []
signal.signal(signal.SIGTERM, lambda *_: termed.append(1))
c = Client(name="linger", iters=epochs, metric_name="val_accuracy")
stopped = False
for i in range(1, epochs + 1):
    time.sleep(0.1)
    c.report(i, 1.0 / (i + 1), metric=0.5)
    stopped = c.should_stop() or bool(termed)
    if stopped:
        break
end = time.monotonic() + (linger if stopped else 0)
while time.monotonic() < end:  # a second SIGTERM does not cut it short
    time.sleep(0.05)
c.close(timeout=1)
