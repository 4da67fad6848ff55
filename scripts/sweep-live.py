#!/usr/bin/env python3
"""sweep-live.py: one sweep run live on this machine, under slaqd's POP and
under Optuna's pruner, wall-clock time to the target side by side.

For each repetition r (1..REPS) the spec's random generator gets seed r, so
both ways train the same configurations in the same order:

  pop     a fresh slaqd (its own state directory, no dashboard) runs the
          spec with `slaq sweep --wait`; the time to target is slaqd's
          (time_to_target_s of `slaq sweep show --json`: from the sweep's
          start to the report that reached the target).
  optuna  Optuna drives the same commands (the list `slaq sweep --dry-run
          --json` prints) on as many workers as the spec has slots, each a
          plain process with one thread, no slaqd: every epoch's metric,
          read from the job's own output, goes to trial.report(value,
          epoch) and trial.should_prune() decides; a pruned process is
          killed and the worker takes the next configuration. The time to
          target is from the first start to the first epoch at or past the
          target; then every process is ended.

A run that has not reached the target after --timeout seconds counts as
not reached (inf). The pruner is named as scripts/sweep-optuna.py names
them (sha, hyperband, median, each with an optional @W warm-up); that
file's pruner() builds it, so the replay and the live run use the same
Optuna settings.

Writes OUT/NAME-live.json (every run) and OUT/NAME-live.md (the table);
prints progress as it goes.
"""
import argparse
import importlib.util
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def optuna_pruners():
    spec = importlib.util.spec_from_file_location(
        "sweep_optuna", os.path.join(HERE, "sweep-optuna.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def with_seed(spec, seed, work):
    s = dict(spec)
    s["generator"] = {"type": "random", "seed": seed}
    s["name"] = "%s-r%d" % (spec.get("name", "sweep"), seed)
    path = os.path.join(work, "spec-%d.json" % seed)
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
    return s, path


def run_pop(bin_, spec_path, work, env, timeout):
    state = os.path.join(work, "state")
    os.makedirs(state)
    log = open(os.path.join(work, "slaqd.log"), "w")
    slaqd = subprocess.Popen([os.path.join(bin_, "slaqd"), "--state-dir", state,
                              "--http", "off"], stdout=log,
                             stderr=subprocess.STDOUT, env=env)
    sock = os.path.join(state, "slaq.sock")
    try:
        for _ in range(400):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("slaqd did not start: see %s/slaqd.log" % work)
        slaq = [os.path.join(bin_, "slaq")]
        t0 = time.monotonic()
        p = subprocess.Popen(slaq + ["sweep", "--state-dir", state, "--wait",
                                     spec_path],
                             env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Past the time limit: end the sweep (its jobs with it) and
            # count the run as not reached.
            subprocess.run(slaq + ["sweep", "cancel", "--state-dir", state,
                                   "1"], env=env, capture_output=True)
            _, err = p.communicate(timeout=60)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError("slaq sweep failed (%d): %s" %
                               (p.returncode, err.strip()))
        show = subprocess.run(slaq + ["sweep", "show", "--state-dir", state,
                                      "--json", "1"],
                              env=env, capture_output=True, text=True,
                              check=True)
        info = json.loads(show.stdout)
        sw = info["sweep"] if isinstance(info.get("sweep"), dict) else info
        ttt = sw.get("time_to_target_s")
        if ttt is not None and ttt > timeout:
            ttt = None
        cfgs = sw.get("config_list", [])
        return {"time_to_target": round(ttt, 3) if ttt is not None else "inf",
                "state": sw.get("state"), "reached_config":
                sw.get("reached_config"), "wall_s": round(wall, 2),
                "killed": sum(c.get("state") == "killed" for c in cfgs),
                "epochs": sum(int(c.get("epochs", 0)) for c in cfgs),
                "configs_started": sum(c.get("state") != "new" for c in cfgs)}
    finally:
        slaqd.send_signal(signal.SIGTERM)
        try:
            slaqd.wait(timeout=30)
        except subprocess.TimeoutExpired:
            slaqd.kill()
            slaqd.wait()
        log.close()


def run_optuna(opt, bin_, spec, spec_path, pruner_name, env, timeout):
    import optuna
    dry = subprocess.run([os.path.join(bin_, "slaq"), "sweep", "--dry-run",
                          "--json", spec_path], env=env, capture_output=True,
                         text=True, check=True)
    cmds = [[a for a in c["cmd"] if a != "--quiet"]
            for c in json.loads(dry.stdout)]
    maximize = spec.get("direction", "max") == "max"
    target = spec["y_target"]
    metric = spec["metric"]
    study = optuna.create_study(
        study_name="slaq-live-%s" % spec["name"],
        direction="maximize" if maximize else "minimize",
        pruner=opt.pruner(pruner_name, spec["epochs"]),
        sampler=optuna.samplers.RandomSampler(seed=0))
    lock = threading.Lock()
    done = threading.Event()
    nxt = [0]
    procs = {}
    out = {"time_to_target": "inf", "reached_config": None, "pruned": 0,
           "epochs": 0, "configs_started": 0}
    job_env = dict(env)
    job_env.pop("SLAQ_SOCKET", None)
    t0 = time.monotonic()

    def worker(w):
        while not done.is_set():
            with lock:
                if nxt[0] >= len(cmds):
                    return
                i = nxt[0]
                nxt[0] += 1
                trial = study.ask()
                out["configs_started"] += 1
                p = subprocess.Popen(cmds[i], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True,
                                     env=job_env, start_new_session=True)
                procs[w] = p
            last, told = None, False
            for line in p.stdout:
                if not line.startswith("iter=") or done.is_set():
                    continue
                f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
                it = int(f["iter"])
                if it == 0 or metric not in f:
                    continue
                v = float(f[metric])
                last = v
                with lock:
                    out["epochs"] += 1
                    if (v >= target) if maximize else (v <= target):
                        if not done.is_set():
                            out["time_to_target"] = round(
                                time.monotonic() - t0, 3)
                            out["reached_config"] = i
                            done.set()
                        break
                    trial.report(v, it)
                    if trial.should_prune():
                        study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                        out["pruned"] += 1
                        told = True
                        break
            stop(p)
            with lock:
                procs.pop(w, None)
                if not told and not done.is_set():
                    if last is None:
                        study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    else:
                        study.tell(trial, last)

    threads = [threading.Thread(target=worker, args=(w,), daemon=True)
               for w in range(int(spec["slots"]))]
    for t in threads:
        t.start()
    deadline = t0 + timeout
    while any(t.is_alive() for t in threads) and not done.is_set() and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    done.set()
    with lock:
        for p in procs.values():
            stop(p)
    for t in threads:
        t.join(timeout=10)
    out["wall_s"] = round(time.monotonic() - t0, 2)
    return out


def stop(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()


def secs(v):
    return math.inf if v in (None, "inf") else float(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--spec", required=True, help="the sweep spec (JSON)")
    ap.add_argument("--pruner", default="median@10",
                    help="Optuna's pruner, as sweep-optuna.py names them")
    ap.add_argument("--policy", default="pop",
                    help="slaqd's sweep policy for the other side (default pop)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800,
                    help="seconds after which a run counts as not reached")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results",
                                                  "sweeps"))
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs OUT/NAME-live.json already has (it is "
                         "written after every run) and run only the others")
    a = ap.parse_args()
    bin_ = os.path.abspath(os.path.join(a.build, "bin"))
    with open(a.spec) as f:
        spec = json.load(f)
    spec["policy"] = a.policy
    spec["t_max"] = spec.get("t_max", 3600)
    env = dict(os.environ)
    env["PATH"] = bin_ + os.pathsep + env.get("PATH", "")
    opt = optuna_pruners()
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = spec.get("name", "sweep")
    res = {"spec": os.path.relpath(os.path.abspath(a.spec), ROOT),
           "target": spec["y_target"], "slots": spec["slots"],
           "policy": a.policy, "pruner": a.pruner, "optuna": optuna.__version__,
           "loadavg_before": [], "runs": []}
    print("%s: %d configurations, %d slots, %s >= %g; %s under slaqd against "
          "Optuna %s, %d repetitions" % (name, spec["configs"], spec["slots"],
                                         spec["metric"], spec["y_target"],
                                         a.policy, a.pruner, a.reps),
          flush=True)
    os.makedirs(a.out, exist_ok=True)
    out_json = os.path.join(a.out, name + "-live.json")
    if a.resume and os.path.exists(out_json):
        with open(out_json) as f:
            old = json.load(f)
        if (old.get("target"), old.get("policy"), old.get("pruner")) != \
                (res["target"], res["policy"], res["pruner"]):
            raise SystemExit("%s: made with another target, policy or pruner; "
                             "not resumed" % out_json)
        res["runs"] = [x for x in old["runs"] if x["rep"] <= a.reps]
        res["loadavg_before"] = [x["loadavg_before"] for x in res["runs"]]
    for r in range(1, a.reps + 1):
        work = tempfile.mkdtemp(prefix="slaq-live-")
        try:
            s, path = with_seed(spec, r, work)
            for way in (a.policy, "optuna"):
                if any(x["rep"] == r and x["way"] == way for x in res["runs"]):
                    continue
                with open("/proc/loadavg") as f:
                    load = float(f.read().split()[0])
                res["loadavg_before"].append(load)
                if way == "optuna":
                    run = run_optuna(opt, bin_, s, path, a.pruner, env,
                                     a.timeout)
                else:
                    wd = os.path.join(work, way)
                    os.makedirs(wd)
                    run = run_pop(bin_, path, wd, env, a.timeout)
                run.update({"rep": r, "way": way, "loadavg_before": load})
                res["runs"].append(run)
                print("rep %d %-8s time to target %8s s  (%s configurations "
                      "started, %d epochs; load %.2f before)" %
                      (r, way, run["time_to_target"], run["configs_started"],
                       run["epochs"], load), flush=True)
                with open(out_json + ".tmp", "w") as f:
                    json.dump(res, f, indent=1)
                    f.write("\n")
                os.replace(out_json + ".tmp", out_json)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    rows = []
    for way in (a.policy, "optuna"):
        ts = [secs(x["time_to_target"])
              for x in sorted(res["runs"], key=lambda x: x["rep"])
              if x["way"] == way]
        rows.append((way, ts))
    med = {w: statistics.median(ts) for w, ts in rows}
    lines = ["# %s live: %s under slaqd against Optuna's %s" %
             (name, a.policy, a.pruner), "",
             "Made by `/usr/bin/python3 scripts/sweep-live.py --spec %s "
             "--pruner %s --reps %d --timeout %g` (one machine, %d slots, "
             "target %s >= %g; repetition r draws the configurations with "
             "seed r, the same for both; inf: not reached within the "
             "timeout, or every configuration ran or was stopped without "
             "reaching it)." % (res["spec"], a.pruner, a.reps, a.timeout,
                                spec["slots"], spec["metric"],
                                spec["y_target"]), "",
             "| way | time to target per repetition (s) | median (s) |",
             "|---|---|---|"]
    for way, ts in rows:
        lines.append("| %s | %s | %.1f |" % (
            way if way != "optuna" else "optuna " + a.pruner,
            ", ".join("%.1f" % t for t in ts), med[way]))
    ratio = med[a.policy] / med["optuna"] if med["optuna"] > 0 else math.nan
    lines += ["", "%s / Optuna median time to target: %.2f (target <= 0.8)"
              % (a.policy, ratio), ""]
    with open(os.path.join(a.out, name + "-live.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
