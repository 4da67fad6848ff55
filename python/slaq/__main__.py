"""python3 -m slaq — the main verbs of the `slaq` command over
slaq.Scheduler, for users without the C command (a pip install of the
client): submit, ls, show, history, cancel, suspend, resume, policy,
status, wait. The same requests as `slaq`, and the same columns where
practical (ls, show, history); --json prints slaqd's objects.

Exit status as `slaq`'s: 0, 2 for a usage error or a request slaqd
refused as malformed (bad_request, bad_policy, unknown_job), 1 otherwise.
"""

import argparse
import json
import math
import sys
import time

from .scheduler import (REPORT_COLUMNS, BadRequest, NotFound, Scheduler,
                        SlaqError)

EXIT_USAGE = 2
EXIT_RUNTIME = 1


def safe(s):
    """s with control characters (C0, DEL, C1) shown as \\xNN and
    bidirectional controls and separators as \\uNNNN, as `slaq` prints
    text a job chose (its name, its command); '-' for None."""
    if s is None:
        return "-"
    out = []
    for ch in str(s):
        cp = ord(ch)
        if cp < 0x20 or 0x7f <= cp < 0xa0:
            out.append("\\x%02x" % cp)
        elif cp in (0x061c, 0x200e, 0x200f, 0x2028, 0x2029) or \
                0x202a <= cp <= 0x202e or 0x2066 <= cp <= 0x2069:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)
    return "".join(out)


def num(d, key):
    """d[key] as a float, NaN when absent or not a number."""
    v = d.get(key) if d is not None else None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return math.nan
    return float(v)


def duration(s):
    """As `slaq`: 12.3s, 4m05s, 2h07m; '-' when unknown."""
    if not (s >= 0):
        return "-"
    if s < 60:
        return "%.1fs" % s
    if s < 3600:
        return "%dm%02ds" % (int(s / 60), int(math.fmod(s, 60)))
    return "%dh%02dm" % (int(s / 3600), int(math.fmod(s / 60, 60)))


def goal_note(j):
    """The goal part of ls's NOTE: deadline slack, accuracy met or not."""
    parts = []
    slack = num(j, "slack")
    if not math.isnan(slack):
        parts.append("%s %s" % ("late by" if slack < 0 else "on time by"
                                if isinstance(j.get("ended"), (int, float))
                                else "due in", duration(abs(slack))))
    if not math.isnan(num(j, "accuracy")):
        met = j.get("accuracy_met")
        parts.append("accuracy met" if met is True else "accuracy not met"
                     if met is False else "no metric yet")
    return ", ".join(parts)


def priority_note(j):
    p = j.get("priority")
    if not isinstance(p, dict):
        return ""
    return "%s #%d of %d" % (safe(p.get("policy")), p.get("rank") or 0,
                             p.get("of") or 0)


def _ls_row(j, nodes):
    """One line of `slaq ls`, formatted as the C command's print_jobs."""
    uid = j.get("id") or 0
    user = safe(j.get("user"))[:10]
    name = safe(j.get("name"))[:18]
    node = "%-10.10s " % safe(j.get("node")) if nodes else ""
    if j.get("kind") == "array":
        c = j.get("counts") or {}
        n = {k: int(c.get(k) or 0) for k in
             ("pending", "running", "done", "failed", "cancelled", "lost",
              "stopped")}
        note = ("array %s: %d pending, %d running, %d done, %d failed, "
                "%d cancelled" % (safe(j.get("array")), n["pending"],
                                  n["running"], n["done"],
                                  n["failed"] + n["lost"],
                                  n["cancelled"] + n["stopped"]))
        return "%-5d %-10.10s %-18.18s %-10s %s%6.2f %8d %10s %6s  %s" % (
            uid, user, name, j.get("state"), node, num(j, "cores"),
            n["done"] + n["failed"] + n["lost"], "-", "-", note)
    red, loss = num(j, "reduction"), num(j, "loss")
    if j.get("query") is not None:
        loss, red = math.nan, num(j.get("query"), "progress")
    reds = "-" if math.isnan(red) else "%.0f%%" % (red * 100)
    losss = "-" if math.isnan(loss) else "%.4g" % loss
    why = j.get("reason")
    goal, prio = goal_note(j), priority_note(j)
    reason = "%s%s%s%s%s" % (safe(why) if why else "",
                             "; " if why and goal else "", goal,
                             "; " if (why or goal) and prio else "", prio)
    return "%-5d %-10.10s %-18.18s %-10s %s%6.2f %8d %10s %6s  %s" % (
        uid, user, name, j.get("state"), node, num(j, "cores"),
        int(j.get("iter") or 0), losss, reds, reason)


def print_ls(jobs):
    """`slaq ls`'s table of job dicts (a NODE column on a controller)."""
    nodes = any(j.get("node") not in (None, "local") for j in jobs)
    if nodes:
        print("%-5s %-10s %-18s %-10s %-10s %6s %8s %10s %6s  %s" % (
            "ID", "USER", "NAME", "STATE", "NODE", "CORES", "ITER", "LOSS",
            "REDUC", "NOTE"))
    else:
        print("%-5s %-10s %-18s %-10s %6s %8s %10s %6s  %s" % (
            "ID", "USER", "NAME", "STATE", "CORES", "ITER", "LOSS", "REDUC",
            "NOTE"))
    for j in jobs:
        print(_ls_row(j, nodes))


def sparkline(values):
    """values as a line of eight bar heights, lowest to highest, as
    `slaq show`'s loss curve."""
    bars = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"
    vals = [float(v) for v in values if isinstance(v, (int, float))]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    out = []
    for v in vals:
        b = int(math.floor((v - lo) / (hi - lo) * 7 + 0.5)) if hi > lo else 0
        out.append(bars[max(0, min(7, b))])
    return "".join(out)


def _stamp(t):
    return time.strftime("%H:%M:%S", time.localtime(t))


def print_show(j):
    """The main lines of `slaq show ID` for one job (dict), in its
    format: header, state, user, command, directory, pid, weight, stop
    limits, convergence, cores, progress, loss, metric, reduction, the
    prediction, the last 10 reports, allocations, events, logs."""
    reason = j.get("reason")
    print("job %d: %s" % (j.get("id") or 0, safe(j.get("name"))))
    print("  state       %s%s%s" % (j.get("state"), " — " if reason else "",
                                    safe(reason) if reason else ""))
    if j.get("user") is not None:
        print("  user        %s (uid %d)" % (safe(j.get("user")),
                                             j.get("uid") or 0))
    print("  command     %s" % safe(json.dumps(j.get("cmd"),
                                               separators=(",", ":"))))
    node = j.get("node")
    if node and node != "local":
        print("  node        %s%s" % (safe(node), " (restartable)"
                                      if j.get("restartable") else ""))
    print("  directory   %s" % safe(j.get("cwd")))
    print("  pid         %d (%s)" % (j.get("pid") or 0, "started by slaqd"
                                     if j.get("managed") else "attached"))
    mc = num(j, "max_cores")
    print("  weight      %g, max cores %s" % (
        num(j, "weight"), "unlimited" if math.isnan(mc) else "%g" % mc))
    lim = []
    if num(j, "target_reduction") > 0:
        lim.append("%g%% loss reduction" % (100 * num(j, "target_reduction")))
    if (j.get("max_iters") or 0) > 0:
        lim.append("%d iterations" % j["max_iters"])
    if num(j, "max_time") > 0:
        lim.append("%g s" % num(j, "max_time"))
    print("  stop at     %s" % (", ".join(lim) or
                                "none (runs until it exits)"))
    query = j.get("query")
    conv = j.get("convergence")
    if query is None:
        print("  convergence %s" % ("%s (declared)" % conv
                                    if conv and conv != "unknown"
                                    else "not declared"))
    if isinstance(j.get("declared_iters"), int):
        print("  length      %d iterations (declared)" % j["declared_iters"])
    print("  cores       %.3f" % num(j, "cores"))
    rate = ""
    run_s = num(j, "ended") - num(j, "started")
    if math.isfinite(num(j, "iters_per_s")):
        rate = "; %.2f it/s" % num(j, "iters_per_s")
    elif (j.get("iter") or 0) > 0 and run_s > 0 and num(j, "started") > 0:
        rate = "; %.2f it/s on average" % (j["iter"] / run_s)
    print("  progress    iteration %d, %d reports, %.2f CPU-s%s" % (
        j.get("iter") or 0, j.get("reports") or 0, num(j, "cpu_s"), rate))
    if not math.isnan(num(j, "cpu_per_iter")):
        line = "  cost        %.4g CPU-s per iteration (recent %.4g" % (
            num(j, "cpu_per_iter"), num(j, "cpu_per_iter_recent"))
        if not math.isnan(num(j, "cpu_per_iter_best")):
            line += ", lowest %.4g: recent %.2fx" % (
                num(j, "cpu_per_iter_best"),
                num(j, "cpu_per_iter_recent") / num(j, "cpu_per_iter_best"))
        line += ")"
        if not math.isnan(num(j, "cpu_per_sample")):
            line += ", %.3g CPU-s per sample" % num(j, "cpu_per_sample")
        print(line)
    if query is not None:
        p = num(query, "progress")
        print("  query       %s" % ("no mini-batch yet" if math.isnan(p) else
                                    "progress %.1f%% (the change of its "
                                    "estimates, normalised)" % (100 * p)))
    elif math.isnan(num(j, "loss")):
        print("  loss        none reported yet")
    else:
        print("  loss        first %.6g, last %.6g" % (num(j, "first_loss"),
                                                      num(j, "loss")))
    mname = j.get("metric_name")
    if not math.isnan(num(j, "metric")):
        print("  metric      %s %.6g at iteration %d" % (
            safe(mname) if mname else "metric", num(j, "metric"),
            j.get("metric_iter") or 0))
    elif mname:
        print("  metric      %s, none reported yet" % safe(mname))
    red, end = num(j, "reduction"), num(j, "end_loss")
    if query is None and not math.isnan(red):
        loss = "" if math.isnan(end) else " (loss %.6g)" % end
        if isinstance(j.get("declared_iters"), int):
            print("  reduction   %.1f%% of the total predicted by its "
                  "declared end, iteration %d%s" % (100 * red,
                                                   j["declared_iters"], loss))
        else:
            print("  reduction   %.1f%% of the way to the forecast's "
                  "asymptote%s;\n              no length declared: the "
                  "asymptote is a limit, not where this run ends"
                  % (100 * red, loss))
    p = j.get("prediction") if query is None else None
    if isinstance(p, dict):
        print("  prediction  model %s, final loss %.6g, %.4g CPU-s per "
              "iteration" % (p.get("model"), num(p, "final_loss"),
                             num(p, "iter_cpu_s")))
        for a in p.get("ahead") or []:
            print("              iteration %-8.0f loss %.6g" % (
                num(a, "iter"), num(a, "loss")))
    hist = j.get("history") or []
    if hist:
        n = len(hist)
        pts = [hist[i if n <= 60 else i * (n - 1) // 59][1]
               for i in range(min(60, n))]
        print("  loss curve  %s" % sparkline(pts))
        print("  history (iteration, loss, cpu_s, samples)%s:" % (
            ", last 10 of %d" % n if n > 10 else ""))
        for row in hist[-10:]:
            print("    %8d  %-12.6g %-10.4g %g" % (row[0], row[1], row[2],
                                                   row[3]))
    allocs = j.get("allocations") or []
    if allocs:
        n = len(allocs)
        print("  allocation over time (changes)%s:" % (
            ", last 10 of %d" % n if n > 10 else ""))
        for row in allocs[-10:]:
            print("    %s  epoch %-6d %.3f cores" % (_stamp(row[0]), row[2],
                                                     row[1]))
    events = j.get("events") or []
    if events:
        print("  events:")
        for row in events:
            print("    %s  %-8s %s" % (_stamp(row[0]), safe(row[1]),
                                       safe(row[2]) if row[2] else ""))
    if j.get("log_dir"):
        print("  logs        %s/{stdout,stderr}.log" % safe(j["log_dir"]))


def _cell(v, width):
    if isinstance(v, bool) or v is None:
        s = ""
    elif isinstance(v, int):
        s = "%d" % v
    else:
        s = "%.17g" % float(v)
    return "%*s" % (width, s) if width else s


def print_history(rows, csv=False):
    """`slaq history`'s table (or CSV) of report rows."""
    widths = (8, 24, 12, 10, 20, 24)
    if csv:
        print(",".join(REPORT_COLUMNS))
    else:
        print("%8s %24s %12s %10s %20s %24s" % tuple(
            c.upper() for c in REPORT_COLUMNS))
    for r in rows:
        vals = (list(r) + [None] * 6)[:6]
        if csv:
            print(",".join(_cell(v, 0) for v in vals))
        else:
            print(" ".join(_cell(v, w) for v, w in zip(vals, widths)))


def dump(obj):
    print(json.dumps(obj, indent=2))


# --- verbs ---------------------------------------------------------------

def cmd_submit(s, a):
    extra = {}
    for k in ("weight", "max_iters", "max_time", "convergence", "direction",
              "urgency", "stop"):
        v = getattr(a, k)
        if v is not None:
            extra[k] = v
    if not a.cmd:
        raise SystemExit(_usage_error("submit", "expected a command after "
                                      "--"))
    jid = s.submit(a.cmd, name=a.name, cores=a.max_cores,
                   target_reduction=a.target_reduction, deadline=a.deadline,
                   accuracy=a.accuracy, cwd=a.cwd, **extra)
    if a.json:
        dump({"type": "result", "ok": True, "job": jid})
    elif not a.wait:
        print(jid)
    if a.wait:
        j = s.wait(jid)
        if a.json:
            dump(j.to_dict())
        else:
            print("job %s: %s" % (jid, j.state))
        return 0 if j.state == "done" and not j.exit_code else 1
    return 0


def cmd_ls(s, a):
    jobs = [j.to_dict() for j in s.jobs(all=a.all)]
    if a.json:
        dump({"type": "result", "ok": True, "jobs": jobs, "next": None})
        return 0
    print_ls(jobs)
    if not jobs and not a.all:
        print("slaq ls: no active jobs (python3 -m slaq ls -a lists "
              "finished ones too)", file=sys.stderr)
    return 0


def cmd_show(s, a):
    j = s.job(a.id).to_dict()
    if a.json:
        dump(j)
    else:
        print_show(j)
    return 0


def cmd_history(s, a):
    rows = s.history(a.id, page=a.page)
    if a.json:
        dump({"job": a.id if not str(a.id).isdigit() else int(a.id),
              "columns": list(REPORT_COLUMNS),
              "rows": [[getattr(r, c) for c in REPORT_COLUMNS]
                       for r in rows]})
    else:
        print_history([[getattr(r, c) for c in REPORT_COLUMNS]
                       for r in rows], csv=a.csv)
    return 0


def cmd_cancel(s, a):
    j = s.cancel(a.id, now=a.now)
    if a.json:
        dump({"type": "result", "ok": True, "job": j.to_dict()})
    else:
        print("job %s: %s" % (a.id, j.state))
    return 0


def cmd_suspend(s, a):
    r = s.suspend(a.id, checkpoint=a.checkpoint)
    if a.json:
        dump(r)
    elif a.checkpoint:
        print("job %s: stopping to leave a checkpoint; `python3 -m slaq show "
              "%s` says when it has" % (a.id, a.id))
    else:
        print("job %s: suspended (SIGSTOP)" % a.id)
    return 0


def cmd_resume(s, a):
    r = s.resume(a.id)
    if a.json:
        dump(r.to_dict() if hasattr(r, "to_dict") else r)
        return 0
    jid = r.id if hasattr(r, "id") else None
    if jid is None or str(jid) == str(a.id):
        print("job %s: resumed" % a.id)
    else:
        print("job %s: resumed from its checkpoint as job %d" % (a.id, jid))
    return 0


def cmd_policy(s, a):
    p = s.policy(a.name)
    if a.json:
        dump({"type": "result", "ok": True, "policy": p})
    else:
        print(p)
    return 0


def cmd_status(s, a):
    st = s.status().to_dict()
    if a.json:
        dump(st)
        return 0
    print("slaqd        pid %d, up %s" % (st.get("pid") or 0,
                                          duration(num(st, "uptime_s"))))
    print("state dir    %s" % st.get("state_dir"))
    print("policy       %s (predictor %s), epoch %g s" % (
        st.get("policy"), st.get("predictor"), num(st, "epoch_s")))
    print("cores        %.2f allocated of %g" % (num(st, "cores_allocated"),
                                                 num(st, "cores")))
    print("enforcement  %s: %s" % (st.get("enforce"),
                                   st.get("enforce_detail")))
    print("jobs         %d active, %d in total" % (
        st.get("jobs_active") or 0, st.get("jobs_total") or 0))
    print("reports      %d (%d rejected messages)" % (
        st.get("reports_total") or 0, st.get("errors_total") or 0))
    print("epochs       %d, last %.3f ms, slowest %.3f ms" % (
        st.get("epoch") or 0, num(st, "epoch_ms_last"),
        num(st, "epoch_ms_max")))
    settings = st.get("settings")
    if isinstance(settings, dict):
        # slaqd's order is its settings table's (the C command's order)
        line = "settings    "
        for name, v in settings.items():
            item = " %s=%s" % (name, v)
            if len(line) > 12 and len(line) + len(item) > 79:
                print(line)
                line = "            "
            line += item
        print(line)
    lim = st.get("limits")
    if isinstance(lim, dict):
        print("per user     %.0f jobs, %.0f array tasks, %g reports/s, "
              "%.0f finished jobs kept" % (
                  num(lim, "user_jobs"), num(lim, "user_tasks"),
                  num(lim, "user_reports"), num(lim, "keep_jobs_per_user")))
        print("logs         %.0f bytes a file, %.0f a user; %.0f bytes "
              "kept free for state.db" % (
                  num(lim, "log_bytes"), num(lim, "user_log_bytes"),
                  num(lim, "disk_reserve")))
    port = st.get("http_port") or 0
    host = st.get("http_addr") or "127.0.0.1"
    if host == "0.0.0.0":
        host = "127.0.0.1"
    if port:
        print("dashboard    http://%s:%d/" % (host, port))
    return 0


def cmd_wait(s, a):
    try:
        j = s.wait(a.id, timeout=a.timeout, poll=a.poll)
    except TimeoutError as e:
        print("slaq wait: %s" % e, file=sys.stderr)
        return EXIT_RUNTIME
    if a.json:
        dump(j.to_dict())
    else:
        print("job %s: %s%s" % (a.id, j.state, " — %s" % safe(j.reason)
                                if j.reason else ""))
    return 0 if j.state == "done" and not j.exit_code else 1


def _usage_error(verb, msg):
    print("slaq %s: %s" % (verb, msg), file=sys.stderr)
    return EXIT_USAGE


def parser():
    """The argument parser of `python3 -m slaq`."""
    where = argparse.ArgumentParser(add_help=False)
    g = where.add_argument_group("where slaqd is (as the slaq command)")
    g.add_argument("--socket", help="slaqd's Unix socket")
    g.add_argument("--state-dir", help="slaqd's state directory (its "
                   "slaq.sock)")
    g.add_argument("--host", help="HOST:PORT of slaqd --tcp: a sealed "
                   "session with $SLAQ_USER_TOKEN or ~/.config/slaq/token")
    g.add_argument("--json", action="store_true", help="print slaqd's "
                   "reply as JSON")
    p = argparse.ArgumentParser(
        prog="python3 -m slaq",
        description="The slaq command's main verbs over slaq.Scheduler (the "
                    "same requests to slaqd). Without --socket, --state-dir "
                    "or --host: $SLAQ_HOST, $SLAQ_SOCKET, ./var/slaq.sock, "
                    "/run/slaq/slaq.sock, a found socket only if it is "
                    "yours or root's.")
    sub = p.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True

    def verb(name, help, fn):
        v = sub.add_parser(name, help=help, description=help,
                           parents=[where])
        v.set_defaults(fn=fn)
        return v

    v = verb("submit", "start CMD as a job under slaqd and print its id",
             cmd_submit)
    v.add_argument("--name")
    v.add_argument("--weight", type=float)
    v.add_argument("--max-cores", type=float)
    v.add_argument("--target-reduction", type=float)
    v.add_argument("--max-iters", type=int)
    v.add_argument("--max-time", type=float)
    v.add_argument("--cwd", help="working directory (default: here)")
    v.add_argument("--convergence")
    v.add_argument("--deadline", type=float, help="Unix seconds")
    v.add_argument("--accuracy", type=float)
    v.add_argument("--direction", choices=("max", "min"))
    v.add_argument("--urgency", type=int)
    v.add_argument("--stop", choices=("iters", "accuracy", "optstop"))
    v.add_argument("--wait", action="store_true", help="return when the job "
                   "has ended: status 0 if it exited 0, else 1")
    v.add_argument("cmd", nargs=argparse.REMAINDER,
                   help="-- CMD [ARGS...]")
    v = verb("ls", "list slaqd's active jobs; with -a every job (the "
             "columns of slaq ls)", cmd_ls)
    v.add_argument("-a", "--all", action="store_true")
    v = verb("show", "show one job in detail (as slaq show)", cmd_show)
    v.add_argument("id")
    v = verb("history", "print every report of a job in iteration order",
             cmd_history)
    v.add_argument("id")
    v.add_argument("--csv", action="store_true")
    v.add_argument("--page", type=int, default=5000,
                   help="reports asked of slaqd at a time (1-5000)")
    v = verb("cancel", "cancel a job (ask it to stop; --now: SIGTERM now)",
             cmd_cancel)
    v.add_argument("--now", action="store_true")
    v.add_argument("id")
    v = verb("suspend", "suspend a running job (SIGSTOP; --checkpoint: it "
             "leaves a checkpoint and exits)", cmd_suspend)
    v.add_argument("--checkpoint", action="store_true")
    v.add_argument("id")
    v = verb("resume", "resume a suspended job", cmd_resume)
    v.add_argument("id")
    v = verb("policy", "print the policy in force; with NAME set it "
             "(administrators)", cmd_policy)
    v.add_argument("name", nargs="?")
    verb("status", "slaqd's state, counters and settings", cmd_status)
    v = verb("wait", "wait until a job has ended; status 0 if it exited 0",
             cmd_wait)
    v.add_argument("id")
    v.add_argument("--timeout", type=float, help="seconds (default: none)")
    v.add_argument("--poll", type=float, default=0.5)
    return p


def main(argv=None):
    """Runs one verb; returns the exit status."""
    a = parser().parse_args(argv)
    if getattr(a, "cmd", None) and a.cmd[0] == "--":
        a.cmd = a.cmd[1:]
    if a.host and (a.socket or a.state_dir):
        return _usage_error(a.verb, "--host names a slaqd over TCP, "
                            "--socket/--state-dir a local one: give one")
    s = Scheduler(socket=a.socket, state_dir=a.state_dir, host=a.host)
    try:
        return a.fn(s, a)
    except (NotFound, BadRequest) as e:
        print("slaq %s: %s" % (a.verb, e), file=sys.stderr)
        return EXIT_USAGE if e.code in ("bad_request", "bad_policy",
                                        "unknown_job") else EXIT_RUNTIME
    except SlaqError as e:
        print("slaq %s: %s" % (a.verb, e), file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
