"""stamp.py — runs a job and writes its output lines to LOG with the time
each arrived (seconds since the epoch), then one closing line with its exit
status and the CPU seconds it used (all its processes and threads).

usage: python3 stamp.py LOG -- COMMAND [ARG...]

The benchmark reads every job's times from these logs, so plain runs and
runs under slaqd are measured the same way. SIGTERM and SIGINT are passed
on to the job, so `slaq cancel` reaches it."""
import os
import resource
import signal
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write(__doc__)
        return 2
    log = open(sys.argv[1], "a", buffering=1)
    log.write("%.3f start\n" % time.time())
    child = subprocess.Popen(sys.argv[3:], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    for line in child.stdout:
        log.write("%.3f %s" % (time.time(), line))
        sys.stdout.write(line)
        sys.stdout.flush()
    rc = child.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    log.write("%.3f exit=%d cpu_s=%.3f\n" % (time.time(), rc,
                                            ru.ru_utime + ru.ru_stime))
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
