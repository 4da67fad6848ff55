"""A restartable test query: after mini-batch i it reports the running
mean of a fixed series as its "estimates" (so slaqd schedules it as a
query), saves i in $SLAQ_CHECKPOINT_DIR, and resumes from there when
started again. Each start appends "start I" to $SLAQ_CHECKPOINT_DIR/starts.

usage: ckpt_query.py [BATCHES [SECONDS_PER_BATCH]]
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

batches = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
step = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
ckdir = os.environ.get("SLAQ_CHECKPOINT_DIR")
start = 0
if ckdir:
    try:
        with open(os.path.join(ckdir, "ckpt")) as f:
            start = int(f.read())
    except (OSError, ValueError):
        start = 0
    with open(os.path.join(ckdir, "starts"), "a") as f:
        f.write("start %d\n" % start)

with Client(name="ckpt-query") as c:
    for i in range(start + 1, batches + 1):
        time.sleep(step)
        x = 10.0 + (-1) ** i / i  # a running estimate that settles
        # Client.report() sends no estimates: the report line is queued
        # the way it queues its own.
        line = json.dumps({"type": "report", "iter": i, "loss": 0.5,
                           "cpu_s": 0.01, "samples": 100, "estimates": [x],
                           "lower": [x - 1.0 / i], "upper": [x + 1.0 / i]},
                          separators=(",", ":"))
        c._unacked.append((i, line))
        c._pump()
        c._write()
        c.poll()
        if ckdir:
            # per process: the run on a lost node may still be writing
            tmp = os.path.join(ckdir, "ckpt.tmp.%d" % os.getpid())
            with open(tmp, "w") as f:
                f.write(str(i))
            os.replace(tmp, os.path.join(ckdir, "ckpt"))
        if c.should_stop():
            break
