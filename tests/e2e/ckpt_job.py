"""A restartable test job: reports a falling loss, saves its iteration in
$SLAQ_CHECKPOINT_DIR after every one, and resumes from there when started
again. Each start appends "start ITER" to $SLAQ_CHECKPOINT_DIR/starts.
With --query it is an approximate query instead: after mini-batch i it
also reports the running estimate of a fixed series, with bounds, so
slaqd schedules it as a query.

usage: ckpt_job.py [--query] [ITERS [SECONDS_PER_ITER]]
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

args = sys.argv[1:]
query = bool(args) and args[0] == "--query"
if query:
    args = args[1:]
iters = int(args[0]) if args else 100000
step = float(args[1]) if len(args) > 1 else (0.05 if query else 0.02)
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

with Client(name="ckpt-query" if query else "ckpt") as c:
    for i in range(start + 1, iters + 1):
        time.sleep(step)
        if query:
            x = 10.0 + (-1) ** i / i  # a running estimate that settles
            c.report(i, 0.5, cpu_s=0.01, samples=100, estimates=[x],
                     lower=[x - 1.0 / i], upper=[x + 1.0 / i])
        else:
            c.report(i, 1.0 / i)
        if ckdir:
            # per process: the run on a lost node may still be writing
            tmp = os.path.join(ckdir, "ckpt.tmp.%d" % os.getpid())
            with open(tmp, "w") as f:
                f.write(str(i))
            os.replace(tmp, os.path.join(ckdir, "ckpt"))
        if c.should_stop():
            break
