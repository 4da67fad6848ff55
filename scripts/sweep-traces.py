#!/usr/bin/env python3
"""sweep-traces.py: record real hyperparameter sweeps as replayable traces.

Runs random configurations of real slaq-train jobs, one after another, each
for a fixed number of epochs (one full-batch iteration is one pass over the
training rows, i.e. one epoch), with the held-out metric computed after every
epoch (slaq-train --eval-every 1). Writes one JSON Lines file per sweep:

  line 1:  {"sweep": NAME, "seed": S, "epochs": E, "metric": "accuracy",
            "direction": "max", "space": {...}, "generated_by": "..."}
  then one line per configuration, in generation order:
           {"id": i, "params": {...}, "command": [...], "start_s": T0,
            "epoch_s": [...], "metric": [...], "stop": "iters"}

start_s is the CPU time the process spent before its first iteration (data
loading); epoch_s[j] the CPU time of epoch j+1 (without evaluation);
metric[j] the held-out metric after epoch j+1. A configuration that diverges
ends early: its arrays are shorter than E. Every job runs with one thread,
so its CPU time is the wall time it takes on an idle core; recording CPU
time keeps the traces the same when other work shares the machine (the
header says "time": "cpu"). The wall times are kept beside them
(start_wall_s, epoch_wall_s) for reference; the simulator uses start_s and
epoch_s.

The configurations are drawn from --seed alone, so the same command gives
the same configurations on any machine; times and (slightly, through the
order of floating-point sums) metrics are this machine's.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import time

SPACES = {
    # mlpc (L-BFGS): width and depth of the network and the L2 weight. A
    # large L2 keeps the weights near zero: such a network never learns.
    "mlpc": {
        "algo": "mlpc",
        "params": {
            "hidden": ("logint", 2, 64),
            "layers": ("choice", [1, 2]),
            "l2": ("loguniform", 1e-5, 30.0),
        },
    },
    # mlpc-wide: the same model with wider layers, recorded on all the rows
    # for fewer epochs, so that one epoch costs about a CPU second and
    # training outweighs the start-up many times over (the sweep where early
    # termination has the most to save).
    "mlpc-wide": {
        "algo": "mlpc",
        "params": {
            "hidden": ("logint", 16, 192),
            "layers": ("choice", [1, 2]),
            "l2": ("loguniform", 1e-5, 30.0),
        },
    },
    # logreg (gradient descent with backtracking): step and L2 weight.
    "logreg": {
        "algo": "logreg",
        "params": {
            "lr": ("loguniform", 1e-5, 10.0),
            "l2": ("loguniform", 1e-6, 1000.0),
        },
    },
}


def draw(rng, spec):
    kind = spec[0]
    if kind == "loguniform":
        return math.exp(rng.uniform(math.log(spec[1]), math.log(spec[2])))
    if kind == "logint":
        return int(round(math.exp(rng.uniform(math.log(spec[1]), math.log(spec[2])))))
    if kind == "choice":
        return rng.choice(spec[1])
    raise ValueError(kind)


def command(train, algo, params, epochs, subsample, seed):
    cmd = [train, algo, "--threads", "1", "--iters", str(epochs),
           "--subsample", str(subsample), "--seed", str(seed),
           "--eval-every", "1"]
    if "hidden" in params:
        cmd += ["--hidden", ",".join([str(params["hidden"])] * params["layers"])]
    if "lr" in params:
        cmd += ["--lr", "%.6g" % params["lr"]]
    if "l2" in params:
        cmd += ["--l2", "%.6g" % params["l2"]]
    return cmd


def run_one(cmd, metric_name):
    env = dict(os.environ)
    env.pop("SLAQ_SOCKET", None)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    start = None
    epoch_s, epoch_wall_s, metric, stop = [], [], [], "error"
    for line in p.stdout:
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if line.startswith("iter=") and f.get("iter") == "0":
            start = (process_cpu_s(p.pid), time.monotonic() - t0)
        elif line.startswith("iter="):
            if metric_name not in f:
                continue
            epoch_s.append(round(float(f["cpu_s"]), 6))
            epoch_wall_s.append(round(float(f["wall_s"]), 6))
            metric.append(round(float(f[metric_name]), 6))
        elif line.startswith("done "):
            stop = f.get("stop", "error")
    p.wait()
    start = start or (0.0, 0.0)
    return {"start_s": round(start[0], 4), "start_wall_s": round(start[1], 4),
            "epoch_s": epoch_s, "epoch_wall_s": epoch_wall_s,
            "metric": metric, "stop": stop}


def process_cpu_s(pid):
    """User plus system CPU seconds of a running process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def merge(parts, out):
    head, recs = None, {}
    for path in parts:
        with open(path) as f:
            lines = [json.loads(l) for l in f if l.strip()]
        if head is None:
            head = lines[0]
        elif lines[0]["sweep"] != head["sweep"] or lines[0]["seed"] != head["seed"]:
            raise SystemExit("%s: another sweep or seed than %s" % (path, parts[0]))
        for r in lines[1:]:
            recs[r["id"]] = r
    ids = sorted(recs)
    head["recorded_ids"] = ids
    head["generated_by"] += "; merged from %d parts, %d configurations" % (
        len(parts), len(ids))
    path = os.path.join(out, head["sweep"] + ".jsonl")
    with open(path, "w") as f:
        f.write(json.dumps(head) + "\n")
        for i in ids:
            f.write(json.dumps(recs[i]) + "\n")
    print("%s: %d configurations" % (path, len(ids)), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", help="the slaq-train binary (needed to record)")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--sweep", action="append", choices=sorted(SPACES),
                    help="sweep(s) to record (default: all)")
    ap.add_argument("--configs", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=120)
    ap.add_argument("--subsample", type=float, default=0.05,
                    help="fraction of the 60000 training rows (default 0.05)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--tag", default="",
                    help="name the sweep NAME-TAG (file OUT/NAME-TAG.jsonl); "
                         "the configurations are still drawn for NAME, so "
                         "two tags of one seed hold the same configurations "
                         "trained differently (e.g. on more rows)")
    ap.add_argument("--first", type=int, default=0,
                    help="record only configurations FIRST..LAST (the others "
                         "are still drawn, so ids and parameters match a full "
                         "run); the output is NAME.FIRST-LAST.jsonl")
    ap.add_argument("--last", type=int, default=-1)
    ap.add_argument("--merge", nargs="+", metavar="PART",
                    help="instead of recording: join part files of one sweep "
                         "(from --first/--last, or runs stopped early) into "
                         "OUT/NAME.jsonl, configurations in id order")
    a = ap.parse_args()
    if a.merge:
        merge(a.merge, a.out)
        return
    if not a.train:
        ap.error("--train is needed to record (only --merge goes without)")
    last = a.configs - 1 if a.last < 0 else min(a.last, a.configs - 1)
    part = a.first > 0 or last < a.configs - 1
    os.makedirs(a.out, exist_ok=True)
    for name in a.sweep or sorted(SPACES):
        space = SPACES[name]
        rng = random.Random("%s-%d" % (name, a.seed))
        label = name + ("-" + a.tag if a.tag else "")
        path = os.path.join(a.out, label + (".%d-%d" % (a.first, last) if part
                                             else "") + ".jsonl")
        tmp = path + ".tmp"
        t_all = time.monotonic()
        with open(tmp, "w") as out:
            head = {"sweep": label, "seed": a.seed, "epochs": a.epochs,
                    "metric": "accuracy", "direction": "max",
                    "subsample": a.subsample, "time": "cpu",
                    "space": {k: list(v) for k, v in space["params"].items()},
                    "generated_by": "make sweep-traces (scripts/sweep-traces.py "
                                    "--seed %d --configs %d --epochs %d "
                                    "--subsample %g%s)"
                                    % (a.seed, a.configs, a.epochs, a.subsample,
                                       " --tag " + a.tag if a.tag else "")}
            out.write(json.dumps(head) + "\n")
            for i in range(a.configs):
                params = {k: draw(rng, v) for k, v in space["params"].items()}
                seed = rng.randrange(1 << 30)
                if i < a.first or i > last:
                    continue
                cmd = command(a.train, space["algo"], params, a.epochs,
                              a.subsample, seed)
                run = run_one(cmd, "accuracy")
                metric = run["metric"]
                shown = [os.path.basename(cmd[0])] + cmd[1:]
                rec = {"id": i, "params": params, "command": shown}
                rec.update(run)
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print("%s %3d/%d  %-40s epochs=%3d final=%.4f  %.0fs" %
                      (label, i + 1, a.configs,
                       " ".join("%s=%.3g" % kv for kv in params.items()),
                       len(metric), metric[-1] if metric else float("nan"),
                       time.monotonic() - t_all), file=sys.stderr, flush=True)
        os.replace(tmp, path)
        print("%s: %d configurations in %.0f s -> %s" %
              (label, a.configs, time.monotonic() - t_all, path), file=sys.stderr)


if __name__ == "__main__":
    main()
