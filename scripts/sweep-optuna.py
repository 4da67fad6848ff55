#!/usr/bin/env python3
"""sweep-optuna.py: replay a recorded sweep under Optuna's pruners.

The peer of `slaq sim --sweep`: the same traces (data/sweeps/NAME.jsonl), in
the same configuration orders (the JSON that `slaq sim --sweep ...
--orders-out FILE` writes), with the same number of parallel workers in
virtual time. Each worker takes the next configuration in the order, and
after every recorded epoch reports the metric to Optuna
(trial.report(value, epoch)) and asks trial.should_prune(); a pruned trial
frees its worker at once, a trial whose trace ends is told COMPLETE. Events
are processed in virtual-time order, so Optuna sees exactly the reports a
real parallel study would have seen by then. The replay stops at the first
epoch whose metric reaches the target: the time to target.

Pruners (Optuna's own classes, Debian's python3-optuna):
  sha        SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
  hyperband  HyperbandPruner(min_resource=1, max_resource=EPOCHS,
                             reduction_factor=3)
  median     MedianPruner(n_startup_trials=5, n_warmup_steps=0)
  none       NopPruner (every configuration to its end)

NAME@W is the same pruner with a warm-up of W epochs, no verdict before
epoch W (sha@10: SuccessiveHalvingPruner(min_resource=10, ...), its
first rung at epoch 10; hyperband@10: HyperbandPruner(min_resource=10,
...); median@10: MedianPruner(n_startup_trials=5, n_warmup_steps=10)):
with W = b = 10 Optuna's first verdict comes at POP's first boundary,
the control that separates the pruners' rules from their first judging
earlier than POP does.
"""
import argparse
import heapq
import json
import math
import statistics
import sys

import optuna


def load(path):
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    return lines[0], {r["id"]: r for r in lines[1:]}


def pruner(spec, epochs):
    name, _, warm = spec.partition("@")
    try:
        w = int(warm) if warm else 0
    except ValueError:
        w = -1
    if w < 0 or (warm and w < 1) or w > epochs:
        raise SystemExit("pruner %r: the warm-up after @ must be a whole number "
                         "of epochs from 1 to %d" % (spec, epochs))
    if name == "sha":
        return optuna.pruners.SuccessiveHalvingPruner(min_resource=max(w, 1),
                                                      reduction_factor=3)
    if name == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=max(w, 1),
                                              max_resource=epochs,
                                              reduction_factor=3)
    if name == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=w)
    if name == "none" and not warm:
        return optuna.pruners.NopPruner()
    raise SystemExit("unknown pruner %r (expected sha, hyperband, median, none; "
                     "the first three may end in @W, a warm-up of W epochs)"
                     % spec)


def replay(head, traces, order, slots, target, name, start_scale):
    maximize = head.get("direction", "max") == "max"
    # A fixed study name: HyperbandPruner puts a trial in a bracket by a
    # hash of the study's name and the trial's number, and Optuna's default
    # name is random, so without one no two runs would agree.
    study = optuna.create_study(
        study_name="slaq-sweep-%s" % head.get("sweep", ""),
        direction="maximize" if maximize else "minimize",
        pruner=pruner(name, head["epochs"]),
        sampler=optuna.samplers.RandomSampler(seed=0))
    reached = lambda v: v >= target if maximize else v <= target
    queue = list(order)
    events = []  # (time, seq, worker, trial, trace, epoch index)
    seq = 0
    epochs_run = 0
    pruned = []  # the epoch at which each pruned trial was stopped

    def start(worker, now):
        nonlocal seq
        if not queue:
            return
        tr = traces[queue.pop(0)]
        trial = study.ask()
        t = now + start_scale * tr["start_s"] + tr["epoch_s"][0]
        heapq.heappush(events, (t, seq, worker, trial, tr, 0))
        seq += 1

    for w in range(slots):
        start(w, 0.0)
    while events:
        now, _, w, trial, tr, e = heapq.heappop(events)
        epochs_run += 1
        v = tr["metric"][e]
        if reached(v):
            return now, tr["id"], epochs_run, pruned
        trial.report(v, e + 1)
        if e + 1 >= len(tr["metric"]):
            study.tell(trial, v)
            start(w, now)
        elif trial.should_prune():
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            pruned.append(e + 1)
            start(w, now)
        else:
            heapq.heappush(events, (now + tr["epoch_s"][e + 1], seq, w, trial,
                                    tr, e + 1))
            seq += 1
    return math.inf, -1, epochs_run, pruned


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", required=True, help="the traces (JSON Lines)")
    ap.add_argument("--orders", required=True,
                    help="orders JSON from slaq sim --sweep --orders-out")
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--target", type=float, required=True)
    ap.add_argument("--pruner", default="sha,hyperband,median")
    ap.add_argument("--start-scale", type=float, default=1.0,
                    help="multiplies the recorded start-up times (as slaq "
                         "sim --sweep --start-scale)")
    ap.add_argument("--json", help="write every run's result here")
    a = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    head, traces = load(a.sweep)
    with open(a.orders) as f:
        orders = json.load(f)["orders"]
    print("optuna %s on %s: %d configurations, %d slots, target %.4f, %d orders"
          % (optuna.__version__, head["sweep"], len(traces), a.slots, a.target,
             len(orders)))
    print("%-13s %7s %9s %9s %9s %9s %9s %8s %6s" % (
        "pruner", "reached", "median_s", "mean_s", "min_s", "max_s",
        "spread_s", "epochs", "pruned"))
    out = {"sweep": head["sweep"], "target": a.target, "slots": a.slots,
           "optuna": optuna.__version__, "pruners": {}}
    for name in a.pruner.split(","):
        runs = []
        for k, order in enumerate(orders):
            t, win, ep, pr = replay(head, traces, order, a.slots, a.target,
                                    name, a.start_scale)
            runs.append({"order": k, "time_to_target": t if math.isfinite(t)
                         else "inf", "winner": win, "epochs": ep,
                         "pruned": len(pr), "pruned_at": pr})
        ts = sorted(r["time_to_target"] if r["time_to_target"] != "inf"
                    else math.inf for r in runs)
        med = statistics.median(ts)
        mean = sum(ts) / len(ts)
        print("%-13s %4d/%-3d %9.2f %9.2f %9.2f %9.2f %9.2f %8.0f %6.1f" % (
            name, sum(math.isfinite(t) for t in ts), len(ts), med, mean, ts[0],
            ts[-1], ts[-1] - ts[0], sum(r["epochs"] for r in runs) / len(runs),
            sum(r["pruned"] for r in runs) / len(runs)))
        sys.stdout.flush()
        out["pruners"][name] = runs
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f)
            f.write("\n")


if __name__ == "__main__":
    main()
