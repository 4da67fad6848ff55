#!/usr/bin/env python3
"""run.py — the real-job benchmark (`make bench-real`).

Runs real training jobs, as a user would write them, in several ways
(--modes): plainly in parallel with one thread each (what a user does
without slaq), as a Slurm user gets them (`queue`: one core per job, at
most as many jobs as cores, first come first served), under slaqd with
`fair`, with `slaq`, and with variants of slaq (SLAQD_MODES below). Three
arrival patterns (--patterns): the batch all at once (`together`), the
batch every --stagger seconds (`staggered`), and the stream (`stream`):
ten longer jobs, stream()'s, arriving at exponentially spread times of
mean --mean-interarrival seconds. Every job's times come from its own
log (bench/real/stamp.py), measured by `slaq report --logs` (docs/cli.md),
so all ways are measured alike and by slaq's own metric code: per job the
times to 50% and 90% of its own loss reduction (DESIGN's definition: the
loss normalised by its first and its final loss), its completion time, its
CPU seconds; per run the means, the makespan and the machine's idle CPU.
With --reps N each configuration runs N times, interleaved, and the
summary gives the mean and the range.

The batch (each job reports once per epoch or iteration):
  torch-lr0.1   PyTorch MLP, SGD at lr 0.1, 12 epochs   (jobs/torch_mlp.py)
  torch-lr0.01  the same at lr 0.01
  sk-mlp        scikit-learn MLPClassifier, 12 partial_fit epochs
  sk-sgd        scikit-learn SGDClassifier, 15 partial_fit epochs
  logreg        slaq-train logreg at its defaults
  kmeans        slaq-train kmeans at its defaults
"""
import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"  # Debian's, where python3-torch and sklearn live


# `paper`: slaq as SLAQ describes it, which is what slaqd did before it
# was measured on real jobs: the largest step as the unit, no start-up
# shares, no hysteresis or damping, hard CPU quotas.
PAPER = ["--policy", "slaq", "--normalise", "max-delta", "--startup-reports",
         "0", "--hysteresis", "0", "--damping", "0", "--share", "quota"]

# The ways under slaqd, by the options that make them.
SLAQD_MODES = {
    "fair": ["--policy", "fair"],
    "slaq": ["--policy", "slaq"],
    # slaq without the scaling model: every job taken to scale linearly
    "slaq-linear": ["--policy", "slaq", "--scaling", "off"],
    # slaq holding plateaued jobs (docs/libslaq.md, "Holding a plateaued
    # job"): fewer jobs time-slice the cores
    "slaq-hold": ["--policy", "slaq", "--hold", "0.05"],
    # the planner: the most quality per core-second to each job's next
    # milestone (docs/libslaq.md, "The planner")
    "plan": ["--policy", "slaq-plan"],
    # the index policy: jobs admitted a core each in order of the fewest
    # core-seconds to 90% of their drop (docs/libslaq.md, "The index
    # policy")
    "index": ["--policy", "slaq-index"],
    # slaq-trend: Algorithm 1, a job whose reports still fall valued at
    # least by a tenth of its measured trend (docs/libslaq.md,
    # "slaq-trend")
    "trend": ["--policy", "slaq-trend"],
    "paper": PAPER,
}
MODES = ["plain", "plain1", "queue"] + list(SLAQD_MODES)
# The ways with no slaqd: plain (every job at once, as written), plain1
# (the same, each job's libraries held to one thread: OMP_NUM_THREADS=1,
# OPENBLAS_NUM_THREADS=1, the client's default allocation 1 core, what a
# careful user does without a scheduler; for the project's jobs it is
# plain), queue.
PLAIN = ("plain", "plain1", "queue")


def batch(build):
    jobs = os.path.join(HERE, "jobs")
    train = os.path.join(ROOT, build, "bin", "slaq-train")
    return [
        ("torch-lr0.1", [PY, os.path.join(jobs, "torch_mlp.py"), "--lr", "0.1"]),
        ("torch-lr0.01", [PY, os.path.join(jobs, "torch_mlp.py"), "--lr", "0.01"]),
        ("sk-mlp", [PY, os.path.join(jobs, "sk_mlp.py")]),
        ("sk-sgd", [PY, os.path.join(jobs, "sk_sgd.py")]),
        ("logreg", [train, "logreg"]),
        ("kmeans", [train, "kmeans"]),
    ]


def stream(build):
    """The stream: ten jobs of the three kinds at several learning rates and
    sizes, each with a fixed budget that runs well past its convergence,
    as exploratory jobs do: about three times what its loss needs to
    level off (alone, a job reaches 90% of its drop in an eighth to a
    fifth of its budget), so that the jobs overlap and the scheduler has
    plateaued work to weigh against new jobs."""
    jobs = os.path.join(HERE, "jobs")
    train = os.path.join(ROOT, build, "bin", "slaq-train")
    torch = [PY, os.path.join(jobs, "torch_mlp.py")]
    return [
        ("s-torch-lr0.1", torch + ["--lr", "0.1", "--epochs", "24"]),
        ("s-logreg-lr0.5", [train, "logreg", "--lr", "0.5", "--iters",
                            "180"]),
        ("s-sk-mlp", [PY, os.path.join(jobs, "sk_mlp.py"), "--epochs", "24"]),
        ("s-torch-lr0.01-h128", torch + ["--lr", "0.01", "--hidden", "128",
                                         "--epochs", "24"]),
        ("s-kmeans-k10", [train, "kmeans", "--k", "10", "--iters", "90"]),
        ("s-sk-sgd", [PY, os.path.join(jobs, "sk_sgd.py"), "--epochs", "36"]),
        ("s-torch-lr0.05-h512", torch + ["--lr", "0.05", "--hidden", "512",
                                         "--epochs", "18"]),
        ("s-svm", [train, "svm", "--iters", "180"]),
        ("s-logreg-lr0.05", [train, "logreg", "--lr", "0.05", "--iters",
                             "180"]),
        ("s-sk-mlp-6", [PY, os.path.join(jobs, "sk_mlp.py"), "--epochs",
                        "18"]),
    ]


# The user-style corpus (--corpus users): jobs written the ways users
# write them, not to suit slaq, each with the styles it shows (the table
# per style counts a job under each of its styles).
STYLES = {
    "advice": "threads from slaq's advice (threads(), the helpers)",
    "cores-floor": "threads = floor(cores()), at every report",
    "cores-ceil": "threads = ceil(cores()), at every report or once",
    "defaults": "threads ignored: the libraries' defaults (one per CPU)",
    "omp1": "OMP_NUM_THREADS=1 set by the script",
    "loader": "a DataLoader with worker processes",
    "slow-start": "seconds of loading before the first report",
    "every-step": "a report every mini-batch or round",
    "every-n": "a report every N mini-batches",
    "every-s": "a report every second",
    "warm-up": "loss flat for its first reports (lr warm-up, poor init)",
}


def corpus(build, long=False):
    """The user-style corpus: (name, argv, styles). Alone at one thread
    each takes 3-8 s; the same eight make every pattern, in the stream
    with three times the budget (long): exploratory jobs run well past
    their convergence, so that they overlap and a scheduler has plateaued
    work to weigh against new jobs."""
    jobs = os.path.join(HERE, "jobs")
    train = os.path.join(ROOT, build, "bin", "slaq-train")
    py = lambda f: [PY, os.path.join(jobs, f)]
    x = 3 if long else 1
    n = lambda v: str(v * x)
    return [
        ("u-torch-advice", py("torch_mlp.py") + ["--epochs", n(6)],
         ["advice"]),
        ("u-torch-floor", py("u_torch_cores.py") + ["--epochs", n(6)],
         ["cores-floor", "every-n"]),
        ("u-torch-default", py("u_torch_default.py") + ["--epochs", n(6)],
         ["defaults", "every-step"]),
        ("u-sk-default", py("u_sk_default.py") + ["--epochs", n(20)],
         ["defaults", "every-s"]),
        ("u-torch-loader", py("u_torch_loader.py") + ["--epochs", n(3)],
         ["omp1", "loader", "every-n"]),
        ("u-torch-warmup", py("u_torch_warmup.py") + ["--epochs", n(4)],
         ["cores-ceil", "slow-start", "warm-up", "every-n"]),
        ("u-xgb", py("u_xgb.py") + ["--rounds", n(30)],
         ["cores-ceil", "every-step"]),
        ("u-logreg", [train, "logreg", "--iters", n(80)],
         ["advice", "every-step"]),
    ]


def offsets(pattern, n, stagger, mean_ia, seed):
    """Each job's arrival, in seconds after the first: all at once, every
    `stagger` s, or (the stream) exponential gaps of mean `mean_ia`."""
    if pattern == "together":
        return [0.0] * n
    if pattern == "staggered":
        return [i * stagger for i in range(n)]
    rng = random.Random(seed)
    t, out = 0.0, []
    for i in range(n):
        out.append(t)
        t += rng.expovariate(1 / mean_ia)
    return out


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4]  # total, idle + iowait


def job_env(plain, users=False, one=False):
    """The jobs' environment. For the project's jobs, in every way of
    running, the math libraries' own thread pools start at one thread: a
    job's parallelism is what it sets itself from job.threads()
    (torch.set_num_threads, threadpoolctl), so the ways differ only in the
    scheduler. Without this, numpy's OpenBLAS would spin a pool of one
    thread per CPU in every job. The user-style corpus gets the
    environment a user's shell has: nothing set, and without a scheduler
    the client's default allocation is every CPU."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python"), os.path.join(HERE, "jobs")])
    for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "SLAQ_DEFAULT_CORES"):
        env.pop(k, None)
    if not users or one:
        env["OMP_NUM_THREADS"] = "1"
        env["OPENBLAS_NUM_THREADS"] = "1"
    if plain:
        env.pop("SLAQ_SOCKET", None)
        if not users or one:
            env["SLAQ_DEFAULT_CORES"] = "1"  # one thread each
    return env


def stamp(log, argv, arrival=None):
    """argv run by stamp.py into log; with its arrival, when given (the
    log's first line: the job's times count from it)."""
    first = [] if arrival is None else ["--arrival", "%.3f" % arrival]
    return [PY, os.path.join(HERE, "stamp.py")] + first + [log, "--"] + argv


def start_slaqd(bin_, work, args):
    """A private slaqd with its state in WORK/state and its log in
    WORK/slaqd.log, once its socket is there."""
    state = os.path.join(work, "state")
    os.makedirs(state)
    slaqd = subprocess.Popen(
        [os.path.join(bin_, "slaqd"), "--state-dir", state, "--http",
         "off"] + args,
        stdout=open(os.path.join(work, "slaqd.log"), "w"),
        stderr=subprocess.STDOUT)
    sock = os.path.join(state, "slaq.sock")
    for _ in range(200):
        if os.path.exists(sock):
            return slaqd
        time.sleep(0.05)
    slaqd.kill()
    raise RuntimeError("slaqd did not start: see %s/slaqd.log" % work)


def stop_slaqd(slaqd):
    """Ends start_slaqd's slaqd: SIGTERM, then SIGKILL after 30 s."""
    slaqd.send_signal(signal.SIGTERM)
    try:
        slaqd.wait(timeout=30)
    except subprocess.TimeoutExpired:
        slaqd.kill()
        slaqd.wait()


def run_once(build, mode, pattern, stagger, work, slaqd_args, mean_ia=6.0,
             seed=1, corpus_name="project"):
    """One batch or stream; returns the jobs' logs, each starting with
    the job's arrival, and run facts. `queue` is what a Slurm user gets:
    each job asks one core and runs one thread, at most as many jobs as
    CPUs run at once, first come first served; a job's times count from
    its arrival, not its start. For the user-style corpus the queue also
    binds each job to its one CPU, as Slurm's cpuset does, so its
    libraries see one CPU."""
    os.makedirs(work)
    users = corpus_name == "users"
    if users:
        jobs = [(n, argv) for n, argv, _ in
                corpus(build, pattern == "stream")]
    else:
        jobs = stream(build) if pattern == "stream" else batch(build)
    when = offsets(pattern, len(jobs), stagger, mean_ia, seed)
    slots = os.cpu_count() or 1
    procs = []
    slaqd = None
    state = os.path.join(work, "state")
    bin_ = os.path.join(ROOT, build, "bin")
    if mode not in PLAIN:
        slaqd = start_slaqd(bin_, work, SLAQD_MODES[mode] + slaqd_args)
    total0, idle0 = cpu_times()
    t0 = time.time()
    plain = mode in PLAIN
    cpu_of = {}  # the queue's running jobs: process -> its CPU
    for i, (name, argv) in enumerate(jobs):
        time.sleep(max(0.0, t0 + when[i] - time.time()))
        # Its arrival is when it was to arrive: a queued job's wait for a
        # slot, and the later jobs' wait behind it, count in its times
        # (its log's first line).
        arrival = t0 + when[i]
        while mode == "queue" and \
                sum(p.poll() is None for p in procs) >= slots:
            time.sleep(0.05)
        log = os.path.join(work, name + ".log")
        cmd = list(argv)
        if "slaq-train" in argv[0] and (mode in ("queue", "plain1") or
                                        (plain and not users)):
            cmd += ["--threads", "1"]
        if plain:
            env = job_env(True, users, mode == "plain1")
            pin = None
            if mode == "queue" and users:
                env["SLAQ_DEFAULT_CORES"] = "1"
                busy = {c for p, c in cpu_of.items() if p.poll() is None}
                pin = min(set(range(slots)) - busy)
            p = subprocess.Popen(
                stamp(log, cmd, arrival), env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=None if pin is None else
                (lambda c=pin: os.sched_setaffinity(0, {c})))
            procs.append(p)
            if pin is not None:
                cpu_of[p] = pin
        else:
            subprocess.run(
                [os.path.join(bin_, "slaq"), "submit", "--state-dir", state,
                 "--name", name, "--"] + stamp(log, cmd, arrival),
                env=job_env(False, users), check=True,
                stdout=subprocess.DEVNULL)
    # Wait for every job's closing line.
    deadline = time.time() + 900
    logs = [os.path.join(work, n + ".log") for n, _ in jobs]
    while time.time() < deadline:
        if all(os.path.exists(l) and "exit=" in open(l).read() for l in logs):
            break
        time.sleep(0.2)
    else:
        raise RuntimeError("the batch did not finish in 15 minutes: " + work)
    total1, idle1 = cpu_times()
    for p in procs:
        p.wait()
    daemon_cpu = 0.0
    flips = None
    stall = None
    starved = 0.0
    if slaqd:
        stall, starved = job_view_figures(bin_, state)
        with open("/proc/%d/stat" % slaqd.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        daemon_cpu = (int(fields[11]) + int(fields[12])) / \
            os.sysconf("SC_CLK_TCK")
        stop_slaqd(slaqd)
        flips = alloc_changes(state)
    return logs, (idle1 - idle0) / max(1, total1 - total0), daemon_cpu, \
        flips, stall, starved


def job_view_figures(bin_, state):
    """From slaqd's job view: the seconds of the jobs' reports whose
    iterations ran more threads than their share kept busy (stall_s per
    job), summed; and the longest any job spent at the minimum share while
    still improving (starved_max_s, docs/metrics.md)."""
    out = subprocess.run(
        [os.path.join(bin_, "slaq"), "ls", "-a", "--json", "--state-dir",
         state], check=True, capture_output=True, text=True).stdout
    jobs = json.loads(out)["jobs"]
    return (sum(j.get("stall_s", 0.0) for j in jobs),
            max([j.get("starved_max_s", 0.0) for j in jobs] + [0.0]))


def alloc_changes(state):
    """Allocation changes and cores moved per job-minute, from the
    allocations slaqd recorded (one row per job and epoch it changed)."""
    db = sqlite3.connect(os.path.join(state, "state.db"))
    seqs = {}
    for job, epoch, cores in db.execute(
            "SELECT job, epoch, cores FROM allocs ORDER BY job, epoch"):
        seqs.setdefault(job, []).append((epoch, cores))
    db.close()
    changes = moved = 0.0
    for seq in seqs.values():
        for (_, a0), (_, a1) in zip(seq, seq[1:]):
            if abs(a1 - a0) > 1e-6:
                changes += 1
                moved += abs(a1 - a0)
    return changes, moved


def scaling_table(build, work, threads=(1, 2)):
    """Each job of the batch alone, plainly, at each thread count (the
    clients' default allocation, slaq-train's --threads), for its first
    few reports (3 epochs, 10 iterations of slaq-train): seconds per
    report, from its first report (its loss before training) to its
    last. {job: {threads: seconds}}."""
    os.makedirs(work)
    table = {}
    for name, argv in batch(build):
        table[name] = {}
        for t in threads:
            log = os.path.join(work, "%s-%d.log" % (name, t))
            cmd = list(argv)
            if "slaq-train" in argv[0]:
                cmd += ["--threads", str(t), "--iters", "10"]
            else:
                cmd += ["--epochs", "3"]
            env = job_env(True)
            env["SLAQ_DEFAULT_CORES"] = str(t)
            subprocess.run(stamp(log, cmd), env=env, check=True,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            j = slaq_report(build, [log])["jobs"][0]
            if j["state"] != "done" or j["reports"] < 2:
                raise RuntimeError("%s: the job failed (%s, %d reports)" %
                                   (log, j["state"], j["reports"]))
            table[name][t] = (j["last_report_at"] - j["first_report_at"]) / \
                (j["reports"] - 1)
            print("scaling: %-13s %d thread(s): %.2f s per report"
                  % (name, t, table[name][t]), flush=True)
    return table


def scaling_lines(table):
    ts = sorted(next(iter(table.values())))
    lines = ["## Scaling: each job alone", "",
             "Seconds per report, the job run plainly with no other job of "
             "the benchmark, at each thread count; the last column is how "
             "much faster %d "
             "threads are than 1 (below 1: slower)." % ts[-1], "",
             "| job | " + " | ".join("%d thread%s" % (t, "s" * (t > 1))
                                    for t in ts) + " | speed-up |",
             "|---|" + "---|" * (len(ts) + 1)]
    for name, row in table.items():
        lines.append("| %s | %s | %.2f |" % (
            name, " | ".join("%.2f" % row[t] for t in ts),
            row[ts[0]] / row[ts[-1]]))
    return lines + [""]


def slaq_report(build, logs):
    """`slaq report --logs --json` on the jobs' logs (docs/cli.md): each
    job's and the run's numbers, by slaq's own metric code
    (docs/metrics.md), whichever way the jobs ran. A job whose loss ended
    no lower than its first has its completion time as its t50 and t90,
    and slaq report says so on stderr, which is left to reach the
    terminal."""
    out = subprocess.run(
        [os.path.join(ROOT, build, "bin", "slaq"), "report", "--logs",
         "--json"] + logs, check=True, stdout=subprocess.PIPE,
        text=True).stdout
    return json.loads(out)


def run_results(build, logs, idle):
    """A run's entry of runs.json from its jobs' logs: per job t50, t90,
    completion time, CPU seconds, iterations and final loss; the means,
    the jobs' CPU seconds, the makespan, and the idle CPU measured
    meanwhile."""
    rep = slaq_report(build, logs)
    jobs = {}
    for path, j in zip(logs, rep["jobs"]):
        if j["state"] != "done" or not j["reports"]:
            raise RuntimeError("%s: the job failed (%s, %d reports)" %
                               (path, j["state"], j["reports"]))
        jobs[j["name"]] = {"jct_s": j["jct_s"], "cpu_s": j["cpu_s"],
                           "iters": j["iters"], "final_loss": j["last_loss"],
                           "t50_s": j["t50_s"], "t90_s": j["t90_s"]}
    s = rep["summary"]
    return {"jobs": jobs, "t50_mean_s": s["t50_mean_s"],
            "t90_mean_s": s["t90_mean_s"], "jct_mean_s": s["jct_mean_s"],
            "cpu_s": s["cpu_s"], "makespan_s": s["makespan_s"],
            "idle_frac": idle}


def med_of(v):
    v = sorted(v)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def style_lines(s, modes, pat):
    """The user-style corpus, one pattern: per style (a job counts under
    each of its styles) the mean over its jobs of each job's median t90
    and of its CPU-seconds relative to the same job's plain run (the same
    work: CPU per unit of work against the job's own plain run); per job
    the same figures."""
    base = "plain1" if "plain1" in modes else "plain"
    if base not in modes:
        return []
    plain = s[pat][base]
    ways = [m for m in modes if m != base]
    lines = ["### %s: per job style" % pat, "",
             "Mean t90 s of the style's jobs, then in brackets each way's "
             "t90 and CPU-seconds over %s's (the same jobs' medians)." % base,
             "", "| style | jobs | %s t90 s | " % base + " | ".join(ways) +
             " |",
             "|---|---|---|" + "---|" * len(ways)]
    for st, what in STYLES.items():
        names = [n for n, _, sts in corpus("build") if st in sts]
        if not names:
            continue
        t = lambda m: sum(s[pat][m]["per_job_t90_s"][n]
                          for n in names) / len(names)
        c = lambda m: sum(s[pat][m]["per_job_cpu_s"][n] /
                          plain["per_job_cpu_s"][n]
                          for n in names) / len(names)
        lines.append("| %s | %d | %.1f | %s |" % (
            st, len(names), t(base), " | ".join(
                "%.1f (%.2f, CPU %.2f)" % (t(m), t(m) / t(base), c(m))
                for m in ways)))
    lines += ["", "Per job: median t90 s and CPU-seconds (the way's over "
              "%s's)." % base, "",
              "| job | %s t90, CPU | " % base + " | ".join(ways) + " |",
              "|---|---|" + "---|" * len(ways)]
    for n, _, _ in corpus("build"):
        pt, pc = plain["per_job_t90_s"][n], plain["per_job_cpu_s"][n]
        lines.append("| %s | %.1f, %.1f | %s |" % (n, pt, pc, " | ".join(
            "%.1f (%.2f), %.1f (%.2f)" % (
                s[pat][m]["per_job_t90_s"][n],
                s[pat][m]["per_job_t90_s"][n] / pt,
                s[pat][m]["per_job_cpu_s"][n],
                s[pat][m]["per_job_cpu_s"][n] / pc) for m in ways)))
    return lines + [""]


def summarise(results, modes, patterns):
    """Mean and range of each figure per (pattern, mode), and the ratios
    the targets are stated in."""
    s = {}
    for pat in patterns:
        s[pat] = {}
        for mode in modes:
            runs = [r for r in results if r["pattern"] == pat and
                    r["mode"] == mode]
            s[pat][mode] = {}
            for k in ("t50_mean_s", "t90_mean_s", "jct_mean_s", "makespan_s",
                      "cpu_s", "idle_frac", "slaqd_cpu_s", "stall_s",
                      "starved_max_s", "alloc_changes_per_job_min",
                      "cores_moved_per_job_min"):
                v = sorted(r.get(k, 0.0) for r in runs)
                mid = len(v) // 2
                med = v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2
                s[pat][mode][k] = {"mean": sum(v) / len(v), "min": min(v),
                                   "max": max(v), "median": med}
            s[pat][mode]["job_s"] = sum(
                sum(j["jct_s"] for j in r["jobs"].values())
                for r in runs) / len(runs)
            for k in ("t90_s", "cpu_s", "jct_s"):
                s[pat][mode]["per_job_" + k] = {
                    n: med_of([r["jobs"][n][k] for r in runs])
                    for n in runs[0]["jobs"]}
    return s


def target_lines(s, pat, modes, users=False):
    """The targets on one pattern, for slaq and each variant of it that
    ran: the ratio of medians (or the worst job's ratio, the stall share)
    and whether it is met. The user-style corpus has its own: t90 at most
    0.8x fair's, plain's and the queue's on the stream and 0.9x on the
    batches, makespan and CPU-seconds at most 1.05x plain's (for fair
    too)."""
    if not all(m in modes for m in ("plain", "fair")):
        return []
    ways = [m for m in ("slaq", "plan", "index", "trend", "slaq-hold",
                        "slaq-linear")
            if m in modes]
    if not ways:
        return []
    if users:
        ways.append("fair")
    med = lambda mode, k: s[pat][mode][k]["median"]
    speed = 0.8 if (pat == "stream" or not users) else 0.9

    def worst(mode):
        ref = "plain1" if "plain1" in modes else "plain"
        plain = s[pat][ref]["per_job_t90_s"]
        return max(v / plain[n] for n, v in
                   s[pat][mode]["per_job_t90_s"].items() if plain[n] > 0)
    rows = [
        ("mean t90 / fair's", speed,
         lambda w: med(w, "t90_mean_s") / med("fair", "t90_mean_s")),
        ("mean t90 / plain's", speed,
         lambda w: med(w, "t90_mean_s") / med("plain", "t90_mean_s")),
    ]
    if "plain1" in modes:
        rows.append(("mean t90 / plain1's", speed,
                     lambda w: med(w, "t90_mean_s") /
                     med("plain1", "t90_mean_s")))
    if "queue" in modes:
        rows.append(("mean t90 / queue's", speed,
                     lambda w: med(w, "t90_mean_s") /
                     med("queue", "t90_mean_s")))
    rows.append(("worst job's t90 / its plain t90", 1.5, worst))
    if users:
        for p in [m for m in ("plain", "plain1") if m in modes]:
            rows += [
                ("CPU-seconds / %s's" % p, 1.05,
                 lambda w, p=p: med(w, "cpu_s") / med(p, "cpu_s")),
                ("makespan / %s's" % p, 1.05,
                 lambda w, p=p: med(w, "makespan_s") / med(p, "makespan_s")),
            ]
    else:
        rows += [
            ("CPU-seconds / fair's", 1.1,
             lambda w: med(w, "cpu_s") / med("fair", "cpu_s")),
            ("makespan / plain's", 1.05,
             lambda w: med(w, "makespan_s") / med("plain", "makespan_s")),
            ("mean JCT / fair's", 1.1,
             lambda w: med(w, "jct_mean_s") / med("fair", "jct_mean_s")),
            ("stall seconds / job-seconds", 0.02,
             lambda w: med(w, "stall_s") / s[pat][w]["job_s"]),
        ]
    out = ["Targets (ratios of medians; fair / plain makespan %.2f, target "
           "<= 1.05: %s):" % (
               med("fair", "makespan_s") / med("plain", "makespan_s"),
               "met" if med("fair", "makespan_s") /
               med("plain", "makespan_s") <= 1.05 else "missed"), "",
           "| target | " + " | ".join(ways) + " |",
           "|---|" + "---|" * len(ways)]
    for name, bound, fn in rows:
        cells = []
        for w in ways:
            v = fn(w)
            cells.append("%.2f %s" % (v, "met" if v <= bound else "missed"))
        out.append("| %s <= %g | %s |" % (name, bound, " | ".join(cells)))
    return out + [""]


def table(s, modes, patterns, reps, users=False):
    names = [n for n, _, _ in corpus("build")] if users else \
        [n for n, _ in batch("build")]
    lines = ["# slaq on real jobs (make bench-real)", "",
             "%s: %s. %d repetition(s); median [min-max] of the "
             "repetitions." % ("The user-style corpus, in every pattern"
                               if users else "Batch", ", ".join(names),
                               reps), ""]
    if users:
        lines += ["Styles: " + "; ".join(
            "%s: %s" % kv for kv in STYLES.items()) + ".", ""]
    if "stream" in patterns and not users:
        lines += ["Stream: %s." % ", ".join(n for n, _ in stream("build")),
                  ""]
    for pat in patterns:
        lines += ["## %s" % pat, "",
                  "| way | mean t50 s | mean t90 s | mean JCT s | makespan s "
                  "| jobs' CPU s | slaqd CPU s | idle CPU | stall s "
                  "| alloc changes / job-min |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for mode in modes:
            m = s[pat][mode]
            f = lambda k, fmt="%.1f": (fmt + " [" + fmt + "-" + fmt + "]") % (
                m[k]["median"], m[k]["min"], m[k]["max"])
            lines.append(
                "| %s | %s | %s | %s | %s | %s | %.1f | %.0f%% | %s | %s |" % (
                    mode, f("t50_mean_s"), f("t90_mean_s"), f("jct_mean_s"),
                    f("makespan_s"), f("cpu_s", "%.0f"),
                    m["slaqd_cpu_s"]["mean"], 100 * m["idle_frac"]["mean"],
                    "-" if mode in PLAIN else
                    "%.1f" % m["stall_s"]["mean"],
                    "-" if mode in PLAIN else
                    "%.1f (%.1f cores moved)" % (
                        m["alloc_changes_per_job_min"]["mean"],
                        m["cores_moved_per_job_min"]["mean"])))
        lines.append("")
        lines.append("Per job mean t90 (s): " + "; ".join(
            "%s %s" % (mode, ", ".join(
                "%s %.1f" % (n, v)
                for n, v in s[pat][mode]["per_job_t90_s"].items()))
            for mode in modes))
        lines.append("")
        under = [m for m in modes if m not in PLAIN]
        if under:
            lines.append(
                "Longest time an improving job spent at the minimum share "
                "(s; slaqd --starve-bound, the most over the repetitions): " +
                ", ".join("%s %.1f" % (m, s[pat][m]["starved_max_s"]["max"])
                          for m in under))
            lines.append("")
        if all(m in modes for m in ("plain", "fair", "slaq")):
            g = lambda mode, k: s[pat][mode][k]["mean"]
            lines.append(
                "slaq/fair t90 %.2f, slaq/plain t90 %.2f, fair/plain makespan "
                "%.2f, slaq/fair CPU %.2f" % (
                    g("slaq", "t90_mean_s") / g("fair", "t90_mean_s"),
                    g("slaq", "t90_mean_s") / g("plain", "t90_mean_s"),
                    g("fair", "makespan_s") / g("plain", "makespan_s"),
                    g("slaq", "cpu_s") / g("fair", "cpu_s")))
            lines += target_lines(s, pat, modes, users)
            for other in ("paper", "slaq-linear", "queue"):
                if other in modes:
                    lines.append("slaq/%s t90 %.2f, makespan %.2f" % (
                        other,
                        g("slaq", "t90_mean_s") / g(other, "t90_mean_s"),
                        g("slaq", "makespan_s") / g(other, "makespan_s")))
            lines.append("")
        if users:
            lines += style_lines(s, modes, pat)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build",
                    help="the build directory with slaqd, slaq, slaq-train")
    ap.add_argument("--reps", type=int, default=1,
                    help="repetitions of every configuration (1)")
    ap.add_argument("--modes", default="plain,fair,slaq",
                    help="ways to run the batch: plain, plain1 (plain with\n"
                    "every library at one thread), queue (one core\n"
                    "per job, as many jobs as CPUs at once, first come\n"
                    "first served), fair, slaq, plan (slaqd --policy\n"
                    "slaq-plan), index (slaqd --policy slaq-index),\n"
                    "trend (slaqd --policy slaq-trend),\n"
                    "slaq-hold (slaqd --hold\n"
                    "0.05), slaq-linear (slaq without the scaling model: slaqd\n"
                    "--scaling off) and paper (slaq as in the paper:\n"
                    "slaqd --normalise max-delta, no start-up shares,\n"
                    "hysteresis or damping, --share quota)")
    ap.add_argument("--patterns", default="together,staggered",
                    help="arrival patterns: together, staggered (the batch\n"
                    "of six), stream (ten jobs, exponential arrivals)")
    ap.add_argument("--mean-interarrival", type=float, default=6.0,
                    help="the stream's mean seconds between arrivals (6)")
    ap.add_argument("--seed", type=int, default=1,
                    help="the stream's arrivals (1; repetition r uses\n"
                    "seed + r)")
    ap.add_argument("--corpus", default="project",
                    choices=("project", "users"),
                    help="the jobs: project (the batch of six and the\n"
                    "stream of ten, threads from slaq's advice, the math\n"
                    "libraries started at one thread) or users (eight jobs\n"
                    "written as users write them, in every pattern: see\n"
                    "STYLES; the environment a user's shell has)")
    ap.add_argument("--stagger", type=float, default=5.0,
                    help="seconds between arrivals when staggered (5)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results",
                                                  "real"),
                    help="where summary.md and runs.json go\n"
                    "(docs/results/real)")
    ap.add_argument("--slaqd-arg", action="append", default=[],
                    help="extra slaqd option (repeatable)")
    ap.add_argument("--scaling", action="store_true",
                    help="first measure every job alone at 1 and 2\n"
                    "threads (seconds per report): the scaling table")
    a = ap.parse_args()
    modes = a.modes.split(",")
    patterns = a.patterns.split(",")
    for m in modes:
        if m not in MODES:
            ap.error("--modes: expected %s; got %s" % (", ".join(MODES), m))
    for p in patterns:
        if p not in ("together", "staggered", "stream"):
            ap.error("--patterns: expected together, staggered, stream; "
                     "got %s" % p)
    tmp = tempfile.mkdtemp(prefix="slaq-bench-real.")
    results = []
    scaling = None
    n, total = 0, a.reps * len(modes) * len(patterns)
    os.makedirs(a.out, exist_ok=True)

    def keep():
        # every run as it ends: a benchmark stopped half-way keeps them
        with open(os.path.join(a.out, "runs.json"), "w") as f:
            json.dump({"runs": results, "scaling": scaling}, f, indent=1)
    try:
        if a.scaling:
            scaling = scaling_table(a.build, os.path.join(tmp, "scaling"))
            keep()
        for rep in range(a.reps):
            for pat in patterns:
                for mode in modes:
                    n += 1
                    work = os.path.join(tmp, "%s-%s-%d" % (pat, mode, rep))
                    t = time.time()
                    logs, idle, dcpu, flips, stall, starved = \
                        run_once(a.build, mode, pat, a.stagger, work,
                                 a.slaqd_arg, a.mean_interarrival,
                                 a.seed + rep, a.corpus)
                    r = run_results(a.build, logs, idle)
                    r["slaqd_cpu_s"] = dcpu
                    r["stall_s"] = stall or 0.0
                    r["starved_max_s"] = starved
                    job_min = sum(j["jct_s"] for j in r["jobs"].values()) / 60
                    r["alloc_changes_per_job_min"] = \
                        flips[0] / job_min if flips else 0.0
                    r["cores_moved_per_job_min"] = \
                        flips[1] / job_min if flips else 0.0
                    r.update(mode=mode, pattern=pat, rep=rep)
                    results.append(r)
                    keep()
                    print("[%d/%d] %-9s %-5s rep %d: mean t90 %.1f s, "
                          "makespan %.1f s, CPU %.0f s (slaqd %.1f s), "
                          "idle %.0f%% (%.0f s)"
                          % (n, total, pat, mode, rep + 1, r["t90_mean_s"],
                             r["makespan_s"], r["cpu_s"], dcpu,
                             100 * r["idle_frac"], time.time() - t),
                          flush=True)
    finally:
        if os.environ.get("SLAQ_BENCH_KEEP"):
            print("logs kept in " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    s = summarise(results, modes, patterns)
    with open(os.path.join(a.out, "runs.json"), "w") as f:
        json.dump({"runs": results, "summary": s, "scaling": scaling}, f,
                  indent=1)
    text = table(s, modes, patterns, a.reps, a.corpus == "users")
    if scaling:
        text += "\n" + "\n".join(scaling_lines(scaling))
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
