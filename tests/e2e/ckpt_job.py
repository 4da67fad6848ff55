"""A restartable test job: reports a falling loss, saves its iteration in
$SLAQ_CHECKPOINT_DIR after every one, and resumes from there when started
again. Each start appends "start ITER" to $SLAQ_CHECKPOINT_DIR/starts.

usage: ckpt_job.py [ITERS [SECONDS_PER_ITER]]
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
step = float(sys.argv[2]) if len(sys.argv) > 2 else 0.02
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

with Client(name="ckpt") as c:
    for i in range(start + 1, iters + 1):
        time.sleep(step)
        c.report(i, 1.0 / i)
        if ckdir:
            tmp = os.path.join(ckdir, "ckpt.tmp")
            with open(tmp, "w") as f:
                f.write(str(i))
            os.replace(tmp, os.path.join(ckdir, "ckpt"))
        if c.should_stop():
            break
