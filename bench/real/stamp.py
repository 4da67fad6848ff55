"""stamp.py — runs a job and writes its output lines to LOG with the time
each arrived (seconds since the epoch), then one closing line with its exit
status and the CPU seconds it used (all its processes and threads).

usage: python3 stamp.py [--arrival TIME] LOG -- COMMAND [ARG...]

--arrival TIME first writes the line "TIME arrival": when the job arrived,
which is before it starts when it waited for a core. The benchmark reads
every job's times from these logs with `slaq report --logs` (docs/formats.md,
"Job logs"), so plain runs and runs under slaqd are measured the same way.
SIGTERM and SIGINT are passed on to the job, so `slaq cancel` reaches it."""
import os
import resource
import signal
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    arrival = None
    if args[:1] == ["--arrival"] and len(args) > 1:
        try:
            arrival = float(args[1])
        except ValueError:
            arrival = float("nan")
        if not arrival > 0:
            sys.stderr.write("stamp.py: --arrival: expected seconds since "
                             "the epoch, got '%s'\n" % args[1])
            return 2
        args = args[2:]
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write(__doc__)
        return 2
    log = open(args[0], "a", buffering=1)
    if arrival is not None:
        log.write("%.3f arrival\n" % arrival)
    log.write("%.3f start\n" % time.time())
    child = subprocess.Popen(args[2:], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda s, f: child.send_signal(s))
    for line in child.stdout:
        # a last line without its newline still ends before the closing one
        log.write("%.3f %s%s" % (time.time(), line,
                                 "" if line.endswith("\n") else "\n"))
        sys.stdout.write(line)
        sys.stdout.flush()
    rc = child.wait()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    log.write("%.3f exit=%d cpu_s=%.3f\n" % (time.time(), rc,
                                            ru.ru_utime + ru.ru_stime))
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
