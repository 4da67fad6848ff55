"""A restartable test job that does not give up: like ckpt_job.py it
reports a falling loss and saves "ITER PID" in $SLAQ_CHECKPOINT_DIR/ckpt
after every iteration (a temporary file of its own, renamed in), and
resumes from there; a save that fails is reported on stderr and tried again
at the next iteration, and on SIGTERM or a stop it saves once more before
it exits, as slaq-train does. So an instance that was replaced elsewhere
while its node was away keeps trying to write its checkpoint.

With --linger S it takes S seconds more to exit after its last save (a
job slow to stop).

usage: fence_job.py [--linger S] [SECONDS_PER_ITER]
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq.client import Client  # noqa: E402

args = sys.argv[1:]
linger = 0.0
if args[:1] == ["--linger"]:
    linger = float(args[1])
    args = args[2:]
step = float(args[0]) if args else 0.02
ckdir = os.environ["SLAQ_CHECKPOINT_DIR"]
path = os.path.join(ckdir, "ckpt")
try:
    with open(path) as f:
        start = int(f.read().split()[0])
except (OSError, ValueError, IndexError):
    start = 0
term = []
signal.signal(signal.SIGTERM, lambda *_: term.append(1))


def save(i):
    tmp = os.path.join(ckdir, "ckpt.tmp.%d" % os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write("%d %d\n" % (i, os.getpid()))
        os.replace(tmp, path)
    except OSError as e:
        print("checkpoint at %d: %s" % (i, e), file=sys.stderr, flush=True)


with Client(name="fence") as c:
    i = start
    while not term:
        i += 1
        time.sleep(step)
        c.report(i, 1.0 / i)
        save(i)
        if c.should_stop():
            break
    save(i)
    time.sleep(linger)
