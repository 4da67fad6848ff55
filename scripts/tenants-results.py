#!/usr/bin/env python3
"""tenants-results.py — shares between users in simulation (`make
tenants-results`): no shares (slaq, fair), shares with quality inside
(slaq+shares), weighted fair between users and their jobs (fair+shares),
and Slurm-like fair-share with a FIFO queue inside (queue+shares), side by
side, and the targets of shares between users checked against them.

Each run is `slaq sim` on `slaq workload gen --users U --skew K` (160
jobs, 640 cores, at most 64 a job, work 2,000-20,000 CPU-s, 100
iterations, epoch 2 s, unit 1); a figure is the mean over the seeds. The
tuning set (tests/data/curves-dev.jsonl, seeds 11-...) is for choosing;
the held-out sets (seeds 1-...) are reported:

  slaq-train   data/curves/slaq-train-2026-12-03.jsonl
  users        data/curves/users.jsonl (make user-curves)

A user's normalised progress under a run is its jobs' mean t90 with the
user alone on its share of the cluster (640/U cores, the run's policy
inside: slaq for slaq+shares, fair for fair+shares, the queue for
queue+shares and so on) over its mean t90 in the run, at most 1: 1 when
sharing the cluster served it at least as well as owning its part would
(a user the others' idle cores sped up has no complaint, and at light
load every user is sped up), less when it was served worse. Jain's index
over users of that progress is (sum x)^2 / (U sum x^2): 1 when no user
fared worse than another.

usage: scripts/tenants-results.py [--build DIR] [--out DIR] [--seeds N]
                                  [--sets NAME,...] [--ias LIST]
                                  [--users U] [--skew K]
                                  [--guarantees LIST]
                                  [--sim-args 'SETTINGS']

Writes OUT/summary.json and OUT/results.txt (default docs/results/tenants)
and prints the tables."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = [  # name, curve file, first seed, role
    ("tuning", "tests/data/curves-dev.jsonl", 11, "tuning"),
    ("slaq-train", "data/curves/slaq-train-2026-12-03.jsonl", 1, "held-out"),
    ("users", "data/curves/users.jsonl", 1, "held-out"),
]
BASE_RUNS = ["slaq", "fair", "slaq+shares", "fair+shares", "queue+shares"]
GUARANTEES = []  # --guarantees: slaq+shares again with these guarantees
RUNS = list(BASE_RUNS)  # and theirs, once the options are read
CORES = 640


def inner(run):
    return run.split("+")[0]


def gen(slaq, curves, ia, seed, users, skew, path):
    with open(path, "w") as f:
        subprocess.run([slaq, "workload", "gen", "--curves", curves,
                        "--jobs", "160", "--mean-interarrival", str(ia),
                        "--work", "2000:20000", "--max-cores", "64",
                        "--iters", "100", "--seed", str(seed),
                        "--users", str(users), "--skew", str(skew)],
                       stdout=f, check=True)


SIM_ARGS = []  # --sim-args: settings every run of slaq sim takes


def sim(slaq, wl, cores, runs, out):
    subprocess.run([slaq, "sim", "--workload", wl, "--cores", str(cores),
                    "--epoch", "2", "--unit", "1", "--compare",
                    ",".join(runs), "--out", out, "--no-plots", "--quiet"] +
                   SIM_ARGS, check=True)
    res = {}
    for r in json.load(open(os.path.join(out, "summary.json"))):
        by = {}
        for row in csv.DictReader(open(os.path.join(out, r["policy"],
                                                    "jobs.csv"))):
            by.setdefault(row["user"], []).append(float(row["t90_s"]))
        res[r["policy"]] = {
            "avg_norm_loss": r["avg_norm_loss"],
            "t90_mean_s": r["t90_mean_s"],
            "t90_by_user": {u: sum(v) / len(v) for u, v in by.items()}}
    return res


def alone(slaq, wl, users, policies, tmp):
    """Each user's mean t90 alone on CORES / users, per inner policy."""
    jobs = [json.loads(l) for l in open(wl)]
    out = {p: {} for p in policies}
    for u in sorted({j["user"] for j in jobs}):
        path = os.path.join(tmp, "alone.jsonl")
        with open(path, "w") as f:
            for j in jobs:
                if j["user"] == u:
                    f.write(json.dumps(j) + "\n")
        res = sim(slaq, path, CORES / users, policies,
                  os.path.join(tmp, "alone"))
        for p in policies:
            out[p][u] = res[p]["t90_by_user"][u]
    return out


def jain(x):
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x)) if x else 1.0


def guaranteed(g):
    """The name of slaq+shares's run with share-guarantee g."""
    return "slaq+shares G=%g" % g


def one(slaq, curves, ia, seed, users, skew, tmp):
    wl = os.path.join(tmp, "wl.jsonl")
    gen(slaq, curves, ia, seed, users, skew, wl)
    res = sim(slaq, wl, CORES, BASE_RUNS, os.path.join(tmp, "run"))
    for g in GUARANTEES:
        SIM_ARGS.extend(["--share-guarantee", "%g" % g])
        res[guaranteed(g)] = sim(slaq, wl, CORES, ["slaq+shares"],
                                 os.path.join(tmp, "run"))["slaq+shares"]
        del SIM_ARGS[-2:]
    ref = alone(slaq, wl, users, sorted({inner(r) for r in RUNS}), tmp)
    for r, v in res.items():
        v["progress_by_user"] = {u: min(1.0, ref[inner(r)][u] / t)
                                 for u, t in v["t90_by_user"].items()
                                 if t > 0}
        v["jain"] = jain(list(v["progress_by_user"].values()))
        # the same without the cap at 1, kept for reference
        v["jain_uncapped"] = jain([ref[inner(r)][u] / t
                                   for u, t in v["t90_by_user"].items()
                                   if t > 0])
    return res


def mean(v):
    return sum(v) / len(v)


def aggregate(seeds):
    agg = {}
    for r in RUNS:
        a = {k: mean([s[r][k] for s in seeds])
             for k in ("avg_norm_loss", "t90_mean_s", "jain")}
        # every seed's users beat weighted fair's (fair+shares)
        below = [sum(1 for u, t in s[r]["t90_by_user"].items()
                     if t < s["fair+shares"]["t90_by_user"][u])
                 for s in seeds]
        a["users_below_weighted_fair"] = mean(below)
        # the worst user's mean t90 over its weighted fair one
        a["worst_user_over_weighted_fair"] = mean([
            max(t / s["fair+shares"]["t90_by_user"][u]
                for u, t in s[r]["t90_by_user"].items())
            for s in seeds])
        a["users"] = mean([len(s[r]["t90_by_user"]) for s in seeds])
        agg[r] = a
    return agg


def report(results, ias):
    lines = []
    for name, role, by_ia in results:
        lines.append("## %s (%s)\n" % (name, role))
        lines.append("Per load: Jain's index over users' progress; the "
                     "average normalised loss and\nthe mean t90 of all jobs, "
                     "each over no-share slaq's; the users whose mean\nt90 "
                     "is below weighted fair's (fair+shares), and the worst "
                     "user's mean t90\nover its weighted fair one:\n")
        lines.append("%-18s" % "run" + "".join("  %-32s" % ("ia %g s" % ia)
                                               for ia in ias))
        for r in RUNS:
            row = "%-18s" % r
            for ia in ias:
                a = by_ia[ia]["agg"]
                row += "  %.3f %5.2f %5.2f %4.1f/%-3g %5.2f" % (
                    a[r]["jain"], a[r]["avg_norm_loss"] /
                    a["slaq"]["avg_norm_loss"],
                    a[r]["t90_mean_s"] / a["slaq"]["t90_mean_s"],
                    a[r]["users_below_weighted_fair"], a[r]["users"],
                    a[r]["worst_user_over_weighted_fair"])
            lines.append(row)
        lines.append("")
        if role != "held-out":
            continue
        for run in [r for r in RUNS if r.startswith("slaq+shares")]:
            lines.append("targets (%s): Jain >= 0.95, loss within 10%% of "
                         "slaq's, every user below weighted fair" % run)
            for ia in ias:
                a = by_ia[ia]["agg"]
                s = a[run]
                ok = (s["jain"] >= 0.95 and s["avg_norm_loss"] <=
                      1.1 * a["slaq"]["avg_norm_loss"] and
                      s["users_below_weighted_fair"] == s["users"])
                lines.append("  %s ia %g s: Jain %.3f, loss %.2fx, %g/%g "
                             "users below: %s" % (
                                 name, ia, s["jain"], s["avg_norm_loss"] /
                                 a["slaq"]["avg_norm_loss"],
                                 s["users_below_weighted_fair"], s["users"],
                                 "met" if ok else "MISSED"))
            lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results",
                                                  "tenants"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sets", default=",".join(s[0] for s in SETS))
    ap.add_argument("--ias", default="2,4,10")
    ap.add_argument("--users", type=int, default=4)
    ap.add_argument("--skew", type=float, default=1.5)
    ap.add_argument("--guarantees", default="0.3,0.6",
                    help="slaq+shares again with each of these "
                    "share-guarantee settings (empty: none)")
    ap.add_argument("--sim-args", default="",
                    help="settings every run of slaq sim takes, e.g. "
                    "'--share-guarantee 0.5'")
    a = ap.parse_args()
    SIM_ARGS.extend(a.sim_args.split())
    try:
        GUARANTEES.extend(float(x) for x in a.guarantees.split(",") if x)
    except ValueError:
        ap.error("--guarantees: expected numbers like 0.3,0.6, got %r"
                 % a.guarantees)
    if any(not 0 <= g <= 1 for g in GUARANTEES):
        ap.error("--guarantees: each in [0, 1]")
    RUNS.extend(guaranteed(g) for g in GUARANTEES)
    names = a.sets.split(",")
    known = {s[0]: s for s in SETS}
    bad = [n for n in names if n not in known]
    if bad or a.seeds < 1 or a.users < 2:
        ap.error("unknown set %s (expected %s)" % (bad[0], ", ".join(known))
                 if bad else "--seeds must be >= 1 and --users >= 2")
    try:
        ias = [float(x) for x in a.ias.split(",")]
    except ValueError:
        ap.error("--ias: expected numbers like 2,4,10, got %r" % a.ias)
    slaq = os.path.join(a.build, "bin", "slaq")
    results, raw = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            _, curves, seed0, role = known[name]
            by_ia = {}
            for ia in ias:
                seeds = []
                for k in range(a.seeds):
                    print("%s ia %g s seed %d" % (name, ia, seed0 + k),
                          file=sys.stderr, flush=True)
                    seeds.append(one(slaq, os.path.join(ROOT, curves), ia,
                                     seed0 + k, a.users, a.skew, tmp))
                by_ia[ia] = {"agg": aggregate(seeds), "seeds": seeds}
            results.append((name, role, by_ia))
            raw[name] = {str(ia): v for ia, v in by_ia.items()}
    text = ("# Shares between users (scripts/tenants-results.py)\n\n"
            "160 jobs, 640 cores, at most 64 a job, %d users of skew %g, "
            "%d seeds a figure.\n\n" % (a.users, a.skew, a.seeds) +
            report(results, ias))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(raw, f, indent=1, sort_keys=True)
    print(text)


if __name__ == "__main__":
    main()
