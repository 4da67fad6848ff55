#!/usr/bin/env python3
"""demo_report.py — the numbers of a demo run, read from slaqd's own state.

`make demo` and `make demo-compare` run real slaq-train jobs under slaqd;
everything they report comes from the run's SQLite database
(STATE/state.db: every job, every iteration report with its time, every
allocation change), so the summary is what slaqd recorded, not what the
script believes happened. The metrics are `slaq report --json`'s
(docs/cli.md), which computes them with the simulator's own functions
(docs/metrics.md), so a real run and its simulation compare directly:

  normalised loss   l(k) = (L(k) - L_end) / (L(0) - L_end), L_end the loss
                    the job last reported
  time to X%        from the job's submission to the first report whose
                    loss reduction 1 - l is >= X
  average loss      mean l over active jobs, sampled every epoch
  loss groups       each epoch, active jobs ranked by l: top 25% "high",
                    next 25% "medium", bottom 50% "low"; each group's cores
                    over all allocated cores, averaged over epochs

Subcommands:

  summary STATE [--policy P] [--json OUT] [--timeline OUT.csv] [--slaq BIN]
      per-job table and the run's aggregates, from `slaq report --json`
      (BIN: the slaq command, default $SLAQ, else build/bin/slaq of this
      tree, else slaq on the PATH); adds each job's algorithm (from its
      command) and test quality (its `done` line)
  workload STATE [--cost cpu|allocated] > wl.jsonl
      the run as a simulator workload (docs/sim.md): same arrivals, each
      job's recorded curve (slaq-train --record) and its cost per
      iteration: `cpu` (default) the CPU-seconds it measured; `allocated`
      the core-seconds slaqd allocated to it from submission (or its first
      report, with --arrival first-report) to its last report over its
      iterations, i.e. what an iteration cost the machine,
      set-up (data loading), quota granularity and competing processes
      included. --arrival first-report: each job arrives when it sent its
      first report (its loss before training) instead of when it was
      submitted, and the line carries its set-up time (`setup_s`, ignored
      by slaq sim) for `setup-times`
  setup-times WORKLOAD SIM_POLICY_DIR
      mean time to 50/90/95% of a simulation of such a workload, measured
      from submission: each job's simulated time plus its set-up time
  compare [--plot OUT.svg] NAME=SUMMARY.json ...
      side-by-side table of several runs' summaries (a demo run's, or
      slaq sim's OUT/POLICY/summary.json); --plot draws, with gnuplot, the
      average normalised loss over time of every run that has a
      timeline.csv next to its summary

Only the Python standard library is used (sqlite3 opens the database
read-only, as slaq report does, so a running slaqd is not disturbed).
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys

REDUCTIONS = (50, 90, 95)
# Quality printed on the `done` line of slaq-train (docs/train.md, Output).
METRICS = ("accuracy", "test_rmse", "test_mean_sq_dist", "heldout_perplexity")


def fail(msg):
    print("demo_report: %s" % msg, file=sys.stderr)
    sys.exit(1)


def open_db(state):
    path = os.path.join(state, "state.db")
    if not os.path.exists(path):
        fail("%s: no such file (is %s a slaqd state directory?)"
             % (path, state))
    return sqlite3.connect("file:%s?mode=ro" % path, uri=True)


def load(state):
    """Every job of the run with its reports and allocation changes."""
    db = open_db(state)
    jobs = []
    for (jid, name, cmd, jstate, reason, submitted, ended) in db.execute(
            "SELECT id, name, cmd, state, reason, submitted, ended FROM jobs"
            " ORDER BY submitted, id"):
        try:
            argv = json.loads(cmd) if cmd else []
        except ValueError:
            argv = []
        reps = db.execute("SELECT iter, loss, cpu_s, t FROM reports WHERE"
                          " job = ? ORDER BY iter", (jid,)).fetchall()
        allocs = db.execute("SELECT t, cores FROM allocs WHERE job = ?"
                            " ORDER BY epoch", (jid,)).fetchall()
        jobs.append({"id": jid, "name": name, "argv": argv, "state": jstate,
                     "reason": reason, "submitted": submitted,
                     "ended": ended, "reports": reps, "allocs": allocs})
    db.close()
    if not jobs:
        fail("%s: slaqd recorded no jobs" % state)
    return jobs


def algorithm(job):
    """slaq-train's first argument is the algorithm."""
    for i, a in enumerate(job["argv"]):
        if os.path.basename(a) == "slaq-train" and i + 1 < len(job["argv"]):
            return job["argv"][i + 1]
    return "-"


def done_line(state, job):
    """slaq-train's final `done key=value ...` line, as a dict."""
    path = os.path.join(state, "jobs", str(job["id"]), "stdout.log")
    try:
        with open(path) as f:
            lines = [l for l in f if l.startswith("done ")]
    except OSError:
        return {}
    if not lines:
        return {}
    return dict(kv.split("=", 1) for kv in lines[-1].split()[1:] if "=" in kv)


def slaq_command(given):
    """The slaq command: --slaq, else $SLAQ, else this tree's build, else
    the PATH's."""
    if given:
        return given
    if os.environ.get("SLAQ"):
        return os.environ["SLAQ"]
    here = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "build", "bin", "slaq")
    return here if os.access(here, os.X_OK) else "slaq"


def report(state, epoch, slaq, timeline=None):
    """`slaq report --json` on the run (and its timeline CSV, if asked)."""
    cmd = [slaq_command(slaq), "report", "--json", "--epoch", repr(epoch)]
    if timeline:
        cmd += ["--timeline", timeline]
    try:
        p = subprocess.run(cmd + [state], capture_output=True, text=True)
    except OSError as e:
        fail("%s: %s (give the slaq command with --slaq)" % (cmd[0], e))
    if p.returncode != 0:
        fail(p.stderr.strip() or "%s exited %d" % (cmd[0], p.returncode))
    return json.loads(p.stdout)


def summarise(state, policy, epoch, slaq=None, timeline=None):
    """The run's summary: slaq report's numbers, with each job's algorithm
    and test quality beside them."""
    open_db(state).close()  # a missing state.db is named as before
    r = report(state, epoch, slaq, timeline)
    if not r["jobs"]:
        fail("%s: slaqd recorded no jobs" % state)
    argv = {}
    db = open_db(state)
    for jid, cmd in db.execute("SELECT id, cmd FROM jobs"):
        try:
            argv[jid] = json.loads(cmd) if cmd else []
        except ValueError:
            argv[jid] = []
    db.close()
    per_job = []
    for j in sorted(r["jobs"], key=lambda j: (j["submitted"], j["id"])):
        d = done_line(state, j)
        metric = next(((m, d[m]) for m in METRICS if m in d), None)
        per_job.append({
            "id": j["id"], "name": j["name"],
            "algorithm": algorithm({"argv": argv.get(j["id"], [])}),
            "state": j["state"], "iters": j["iters"] or 0,
            "arrival_s": j["arrival_s"],
            "t": {str(x): j["t%d_s" % x] for x in REDUCTIONS},
            "jct_s": j["jct_s"],
            "first_loss": j["first_loss"], "final_loss": j["last_loss"],
            "cpu_s": j["cpu_s"],
            "metric": metric[0] if metric else None,
            "metric_value": float(metric[1]) if metric else None,
        })
    s = r["summary"]
    share = s["share_by_loss_group"] or {g: None for g in
                                         ("high", "medium", "low")}
    summary = {
        "policy": policy, "state_dir": os.path.abspath(state),
        "jobs": s["jobs"], "epoch_s": epoch,
        "time_to_reduction_mean_s": {str(x): s["t%d_mean_s" % x]
                                     for x in REDUCTIONS},
        "t90_mean_s": s["t90_mean_s"],
        "jct_mean_s": s["jct_mean_s"],
        "avg_norm_loss": s["avg_norm_loss"],
        "share_by_loss_group": share,
        "makespan_s": s["makespan_s"],
        "cpu_s": s["cpu_s"],
        "per_job": per_job,
    }
    return summary


def fmt(v, spec="%.1f"):
    return "-" if v is None else spec % v


def print_summary(s):
    print("%-4s %-10s %-8s %-9s %5s %7s %7s %7s %7s %12s  %s" % (
        "ID", "NAME", "ALGO", "STATE", "ITERS", "T50_S", "T90_S", "T95_S",
        "JCT_S", "FINAL_LOSS", "TEST"))
    for p in s["per_job"]:
        test = "%s=%.4g" % (p["metric"], p["metric_value"]) \
            if p["metric"] else "-"
        print("%-4d %-10s %-8s %-9s %5d %7s %7s %7s %7s %12.6g  %s" % (
            p["id"], p["name"][:10], p["algorithm"][:8], p["state"][:9],
            p["iters"], fmt(p["t"]["50"]), fmt(p["t"]["90"]),
            fmt(p["t"]["95"]), fmt(p["jct_s"]),
            p["final_loss"] if p["final_loss"] is not None else float("nan"),
            test))
    m = s["time_to_reduction_mean_s"]
    sh = s["share_by_loss_group"]
    print("mean time to 50/90/95%% loss reduction: %s / %s / %s s; "
          "average normalised loss %s; makespan %s s" % (
              fmt(m["50"]), fmt(m["90"]), fmt(m["95"]),
              fmt(s["avg_norm_loss"], "%.3f"), fmt(s["makespan_s"])))
    print("share of cores by loss group: high %s, medium %s, low %s" % (
        fmt(sh["high"], "%.2f"), fmt(sh["medium"], "%.2f"),
        fmt(sh["low"], "%.2f")))


def cmd_summary(a):
    s = summarise(a.state, a.policy, a.epoch, a.slaq, a.timeline)
    print_summary(s)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(s, f, indent=1)
            f.write("\n")


def recorded_curves(state):
    """name -> curve (slaq-train --record writes STATE/curves/NAME.jsonl)."""
    out = {}
    d = os.path.join(state, "curves")
    if not os.path.isdir(d):
        return out
    for fn in sorted(os.listdir(d)):
        path = os.path.join(d, fn)
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    c = json.loads(line)
                except ValueError as e:
                    fail("%s:%d: not JSON: %s" % (path, n, e))
                out[os.path.splitext(fn)[0]] = c
    return out


def allocated_core_s(job, start):
    """Core-seconds allocated to the job from `start` to its last report
    (allocation changes are steps; before the first one it has none)."""
    end = job["reports"][-1][3]
    total, t, cores = 0.0, job["submitted"], 0.0
    for at, c in job["allocs"]:
        if at >= end:
            break
        if at > t:
            total += cores * (max(at, start) - max(t, start))
            t = at
        cores = c
    return total + cores * max(0.0, end - max(t, start))


def cmd_workload(a):
    jobs = load(a.state)
    curves = recorded_curves(a.state)
    t0 = jobs[0]["submitted"]
    for j in jobs:
        if not j["reports"]:
            print("demo_report: job %d (%s) never reported; left out"
                  % (j["id"], j["name"]), file=sys.stderr)
            continue
        setup = j["reports"][0][3] - j["submitted"]
        c = curves.get(j["name"])
        if c is not None:
            loss, cpu = c["loss"], c.get("iter_cpu_s") or []
        else:  # no record: slaqd's reports are the same curve
            loss = [r[1] for r in j["reports"]]
            cpu = [r[2] for r in j["reports"][1:]]
        if len(loss) < 2 or not cpu or not sum(cpu) > 0:
            print("demo_report: job %d (%s) has no complete curve; left out"
                  % (j["id"], j["name"]), file=sys.stderr)
            continue
        cost = sum(cpu) / len(cpu)
        # A job that ended before slaqd's first epoch was never allocated
        # anything: its measured CPU is all there is.
        # With arrivals at the first report, the set-up is not the
        # simulated job's: count the allocation from that report on.
        alloc = allocated_core_s(j, j["reports"][0][3]
                                 if a.arrival == "first-report"
                                 else j["submitted"])
        if a.cost == "allocated" and alloc > 0:
            cost = alloc / (len(loss) - 1)
        arrival = j["submitted"] - t0
        line = {"id": j["name"], "arrival_s": round(arrival, 3),
                "iter_cpu_s": cost, "max_cores": a.max_cores,
                "weight": 1, "algorithm": algorithm(j), "loss": loss}
        if a.arrival == "first-report":
            line["arrival_s"] = round(arrival + setup, 3)
            line["setup_s"] = round(setup, 3)
        print(json.dumps(line))


def cmd_setup_times(a):
    setup = {}
    with open(a.workload) as f:
        for line in f:
            if line.strip():
                j = json.loads(line)
                setup[j["id"]] = j.get("setup_s", 0.0)
    path = os.path.join(a.sim_dir, "jobs.csv")
    with open(path) as f:
        head = f.readline().strip().split(",")
        rows = [dict(zip(head, l.strip().split(","))) for l in f if l.strip()]
    out = {}
    for x in REDUCTIONS:
        v = [float(r["t%d_s" % x]) + setup.get(r["id"], 0.0) for r in rows
             if r.get("t%d_s" % x) not in (None, "")]
        out[str(x)] = sum(v) / len(v) if v else None
    print(json.dumps({"time_to_reduction_mean_s": out}))


def cmd_compare(a):
    runs = []
    for spec in a.runs:
        name, _, path = spec.partition("=")
        if not path:
            fail("compare: expected NAME=SUMMARY.json, got '%s'" % spec)
        with open(path) as f:
            s = json.load(f)
        if not isinstance(s, dict):
            fail("%s: expected one run's summary (an object; for slaq sim "
                 "use OUT/POLICY/summary.json)" % path)
        runs.append((name, s, os.path.join(os.path.dirname(path),
                                           "timeline.csv")))
    if a.ratio and len(runs) != 2:
        fail("compare --ratio: expected two runs, got %d" % len(runs))
    w = max(12, max(len(n) for n, _, _ in runs) + 2)
    head = "%-34s" % "" + "".join("%*s" % (w, n) for n, _, _ in runs)
    if a.ratio:
        head += "%*s" % (w, "%s/%s" % (runs[1][0], runs[0][0]))
    print(head)
    table = {}

    def row(label, get, spec):
        vals = []
        for _, s, _ in runs:
            try:
                vals.append(get(s))
            except (KeyError, TypeError):
                vals.append(None)
        line = "%-34s" % label + "".join("%*s" % (w, fmt(v, spec))
                                         for v in vals)
        ratio = None
        if a.ratio and None not in vals and vals[0] > 0:
            ratio = vals[1] / vals[0]
        if a.ratio:
            line += "%*s" % (w, fmt(ratio, "%.2fx"))
        print(line)
        table[label] = {"values": dict(zip((n for n, _, _ in runs), vals)),
                        "ratio": ratio}
    for x in REDUCTIONS:
        row("mean time to %d%% reduction (s)" % x,
            lambda s, x=x: s["time_to_reduction_mean_s"][str(x)], "%.1f")
    row("average normalised loss", lambda s: s["avg_norm_loss"], "%.3f")
    for g in ("high", "medium", "low"):
        row("share of cores, %s loss" % g,
            lambda s, g=g: s["share_by_loss_group"][g], "%.2f")
    row("makespan (s)", lambda s: s["makespan_s"], "%.1f")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(table, f, indent=1)
            f.write("\n")
    if a.plot:
        plot(a.plot, [(n, t) for n, _, t in runs if os.path.exists(t)])


DOC_BEGIN = "<!-- make demo's output (make demo-doc writes it) -->"
DOC_END = "<!-- end of make demo's output -->"


def cmd_doc(a):
    """Puts a make demo run's output (a file holding what demo-pair.sh
    printed) between the markers of a document, as a code block, so that
    the sample in docs/demo.md is always one a run printed."""
    out = open(a.output).read().rstrip("\n")
    doc = open(a.doc).read()
    if DOC_BEGIN not in doc or DOC_END not in doc:
        fail("%s: the markers %s and %s are missing" % (a.doc, DOC_BEGIN,
                                                        DOC_END))
    head, rest = doc.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    with open(a.doc, "w") as f:
        f.write(head + DOC_BEGIN + "\n\n```\n" + out + "\n```\n\n" +
                DOC_END + tail)
    print("%s: the demo's output from %s" % (a.doc, a.output))


def plot(svg, series):
    if not series:
        return
    if not shutil.which("gnuplot"):
        print("demo_report: gnuplot not found (package gnuplot-nox); "
              "no plot", file=sys.stderr)
        return
    lines = ["set terminal svg size 800,450 dynamic background rgb 'white'",
             "set output '%s'" % svg.replace("'", ""),
             "set datafile separator ','",
             "set key top right",
             "set xlabel 'time since the first submission (s)'",
             "set ylabel 'average normalised loss of active jobs'",
             "set yrange [0:1.05]",
             "set grid"]
    parts = ["'%s' using 1:3 every ::1 with lines lw 2 title '%s'"
             % (t.replace("'", ""), n.replace("'", "")) for n, t in series]
    lines.append("plot " + ", ".join(parts))
    p = subprocess.run(["gnuplot"], input="\n".join(lines) + "\n",
                       text=True, capture_output=True)
    if p.returncode != 0:
        print("demo_report: gnuplot failed: %s" % p.stderr.strip(),
              file=sys.stderr)
    else:
        print("plot: %s" % svg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("state")
    s.add_argument("--policy", default="-")
    s.add_argument("--epoch", type=float, default=1.0)
    s.add_argument("--json")
    s.add_argument("--timeline")
    s.add_argument("--slaq", help="the slaq command (slaq report)")
    w = sub.add_parser("workload")
    w.add_argument("state")
    w.add_argument("--max-cores", type=float, default=16,
                   help="most workers a job runs (slaq-train --partitions)")
    w.add_argument("--cost", choices=("cpu", "allocated"), default="cpu")
    w.add_argument("--arrival", choices=("submit", "first-report"),
                   default="submit")
    t = sub.add_parser("setup-times")
    t.add_argument("workload")
    t.add_argument("sim_dir")
    c = sub.add_parser("compare")
    c.add_argument("--plot", help="SVG of average normalised loss over time")
    c.add_argument("--ratio", action="store_true",
                   help="with two runs, a column of the second over the first")
    c.add_argument("--json", help="also write the table as JSON")
    o = sub.add_parser("doc")
    o.add_argument("doc")
    o.add_argument("output")
    c.add_argument("runs", nargs="+")
    a = ap.parse_args()
    {"summary": cmd_summary, "workload": cmd_workload,
     "setup-times": cmd_setup_times, "compare": cmd_compare,
     "doc": cmd_doc}[a.cmd](a)


if __name__ == "__main__":
    main()
