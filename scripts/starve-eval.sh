#!/usr/bin/env bash
# starve-eval.sh — the bound on starvation (--starve-bound) and the class
# priors (--prior) on the standard workload (scripts/sim-results.sh: 160
# jobs, 640 cores, epoch 2 s, unit 1, --work 2000:20000 --max-cores 64
# --iters 100): slaq, slaq-plan and the oracle planner under each
# configuration, beside fair, on the tuning curves (where the defaults
# are chosen) and the held-out ones (where they are reported), at several
# mean inter-arrivals.
#
# Usage: scripts/starve-eval.sh [BUILD_DIR]
# Environment: SEEDS (default 1 2 3), IAS (default 2 4 10 20), CONFIGS
# (default "0/off 10/off 0/on 5/on 10/on 20/on": starve-bound/prior, a
# bound of 0 is none), SETS (default "tuning held-out"),
# CURVES, HELDOUT (as sim-results.sh). Prints, per curve set and mean
# inter-arrival, each run's mean t90 (s), its ratio to fair's, the
# average normalised loss and the longest time any job spent at the
# minimum share while improving (starved_max_s, the most over the seeds),
# averaged over the seeds.
set -euo pipefail
build=${1:-build}
slaq="$build/bin/slaq"
seeds=${SEEDS:-1 2 3}
ias=${IAS:-2 4 10 20}
configs=${CONFIGS:-0/off 10/off 0/on 5/on 10/on 20/on}
sets=${SETS:-tuning held-out}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for name in $sets; do
  case $name in
    tuning) curves=${CURVES:-tests/data/curves-dev.jsonl} ;;
    held-out) curves=${HELDOUT:-data/curves/slaq-train.jsonl} ;;
    *) echo "starve-eval.sh: unknown set '$name' (tuning or held-out)" >&2
       exit 2 ;;
  esac
  for ia in $ias; do
    for seed in $seeds; do
      "$slaq" workload gen --curves "$curves" --jobs 160 \
        --mean-interarrival "$ia" --work 2000:20000 --max-cores 64 \
        --iters 100 --seed "$seed" >"$tmp/wl.jsonl"
      "$slaq" sim --workload "$tmp/wl.jsonl" --cores 640 --epoch 2 \
        --unit 1 --compare fair --out "$tmp/fair-$seed" --no-plots --quiet
      for cf in $configs; do
        "$slaq" sim --workload "$tmp/wl.jsonl" --cores 640 --epoch 2 \
          --unit 1 --starve-bound "${cf%/*}" --prior "${cf#*/}" \
          --compare slaq:auto,slaq-plan:auto,oracle-plan \
          --out "$tmp/c${cf/\//-}-$seed" --no-plots --quiet
      done
    done
    echo "$name curves, mean inter-arrival $ia s (seeds: $seeds)"
    python3 - "$tmp" "$configs" $seeds <<'PY'
import json, sys
tmp, configs, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
def load(d):
    rows = {}
    for s in seeds:
        for r in json.load(open("%s/%s-%s/summary.json" % (tmp, d, s))):
            rows.setdefault(r["policy"], []).append(
                (r["t90_mean_s"], r["avg_norm_loss"], r["starved_max_s"]))
    return rows
mean = lambda v, i: sum(x[i] for x in v) / len(v)
fair = load("fair")["fair"]
ft, fl = mean(fair, 0), mean(fair, 1)
print("  %-16s %6s %5s %9s %8s %10s %9s %12s" % (
    "run", "bound", "prior", "t90 (s)", "/ fair", "avg loss", "fair / it",
    "starved (s)"))
print("  %-16s %6s %5s %9.1f %8.2f %10.4f %9.2f %12.1f" % (
    "fair", "-", "-", ft, 1, fl, 1, max(x[2] for x in fair)))
for cf in configs:
    b, p = cf.split("/")
    for k, v in load("c%s-%s" % (b, p)).items():
        t, l = mean(v, 0), mean(v, 1)
        print("  %-16s %6s %5s %9.1f %8.2f %10.4f %9.2f %12.1f" % (
            k, b, p, t, t / ft, l, fl / l, max(x[2] for x in v)))
PY
  done
done
