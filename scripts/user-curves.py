#!/usr/bin/env python3
"""user-curves.py — record a second held-out curve library from the
user-style corpus (`make user-curves`): PyTorch, scikit-learn and XGBoost
jobs written the ways users write them (bench/real/jobs, docs/bench-real.md
"The user-style corpus"), among them a learning-rate warm-up whose loss is
flat and rising for its first reports.

Each run is started alone under a private slaqd (policy fair, one core:
`slaq submit --max-cores 1`, so its libraries run one thread), and its
reports are read from slaqd's state.db: the losses in report order, and
each report's CPU-seconds as the cost of that step (one "iteration" of the
curve is one report of the job, however many mini-batches it covers).
slaq-train's jobs are left out: data/curves/slaq-train.jsonl is theirs.

usage: scripts/user-curves.py [--build DIR] [--out FILE] [--only NAME,...]

Writes FILE (default data/curves/users.jsonl) only when every run
succeeded; prints one line per run."""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "real"))
import run as bench  # noqa: E402  (the corpus and its environment)

# (name, algorithm, convergence, script, arguments): the corpus's jobs at
# the stream's budgets, and a second setting of each that has one.
RUNS = [
    ("torch-advice-lr0.1", "torch-mlp", "nonconvex", "torch_mlp.py",
     ["--epochs", "18"]),
    ("torch-advice-lr0.05-h128", "torch-mlp", "nonconvex", "torch_mlp.py",
     ["--epochs", "18", "--lr", "0.05", "--hidden", "128"]),
    ("torch-floor-h256", "torch-mlp", "nonconvex", "u_torch_cores.py",
     ["--epochs", "18"]),
    ("torch-floor-h128-lr0.1", "torch-mlp", "nonconvex", "u_torch_cores.py",
     ["--epochs", "18", "--hidden", "128", "--lr", "0.1"]),
    ("torch-default-lr0.02", "torch-mlp", "nonconvex", "u_torch_default.py",
     ["--epochs", "6"]),
    ("torch-loader", "torch-mlp", "nonconvex", "u_torch_loader.py",
     ["--epochs", "9"]),
    ("torch-warmup-300", "torch-warmup", "nonconvex", "u_torch_warmup.py",
     ["--epochs", "12"]),
    ("torch-warmup-600", "torch-warmup", "nonconvex", "u_torch_warmup.py",
     ["--epochs", "12", "--warmup", "600"]),
    ("sk-mlp", "sk-mlp", "nonconvex", "u_sk_default.py", ["--epochs", "60"]),
    ("xgb-90", "xgb", "sublinear", "u_xgb.py", ["--rounds", "90"]),
]


def wait_done(db, job, limit):
    end = time.time() + limit
    while time.time() < end:
        try:
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            row = con.execute("SELECT state, reason FROM jobs WHERE id = ?",
                              (job,)).fetchone()
            con.close()
        except sqlite3.Error:
            row = None
        if row and row[0] in ("done", "failed", "stopped", "cancelled",
                              "lost"):
            return row
        time.sleep(0.5)
    raise RuntimeError("job %d did not end in %d s" % (job, limit))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=os.path.join(ROOT, "data", "curves",
                                                  "users.jsonl"))
    ap.add_argument("--only", default="",
                    help="comma-separated run names (default: all)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    runs = [r for r in RUNS if not only or r[0] in only]
    if only - {r[0] for r in RUNS}:
        ap.error("unknown run: %s" % ", ".join(sorted(only - {r[0] for r in
                                                              RUNS})))
    bin_ = os.path.join(ROOT, a.build, "bin")
    work = tempfile.mkdtemp(prefix="slaq-user-curves.")
    state = os.path.join(work, "state")
    slaqd = bench.start_slaqd(bin_, work, ["--policy", "fair"])
    try:
        db = os.path.join(state, "state.db")
        lines = []
        for i, (name, algo, conv, script, args) in enumerate(runs, 1):
            t0 = time.time()
            out = subprocess.run(
                [os.path.join(bin_, "slaq"), "submit", "--state-dir", state,
                 "--name", name, "--max-cores", "1", "--",
                 bench.PY, os.path.join(bench.HERE, "jobs", script)] + args,
                env=bench.job_env(False, users=True), check=True,
                capture_output=True, text=True)
            job = int(out.stdout.split()[-1])
            st, reason = wait_done(db, job, 900)
            if st != "done":
                raise RuntimeError("%s: %s (%s)" % (name, st, reason))
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            rows = con.execute("SELECT iter, loss, cpu_s, samples FROM "
                               "reports WHERE job = ? ORDER BY iter",
                               (job,)).fetchall()
            con.close()
            if len(rows) < 3:
                raise RuntimeError("%s: only %d reports" % (name, len(rows)))
            loss = [r[1] for r in rows]
            cpu = [max(0.0, r[2] or 0.0) for r in rows[1:]]
            samples = [r[3] or 0 for r in rows[1:]]
            lines.append(json.dumps({
                "name": name, "algorithm": algo, "convergence": conv,
                "dataset": "fmnist", "source": "bench/real/jobs/" + script,
                "params": {"args": args}, "loss": loss, "iter_cpu_s": cpu,
                "samples_per_iter": sorted(samples)[len(samples) // 2]}))
            print("user-curves: %d/%d %s: %d reports, %.1f CPU-s, %.1f s"
                  % (i, len(runs), name, len(rows), sum(cpu),
                     time.time() - t0), flush=True)
    finally:
        bench.stop_slaqd(slaqd)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, a.out)
    shutil.rmtree(work, ignore_errors=True)
    print("user-curves: %d curves in %s" % (len(lines), a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
