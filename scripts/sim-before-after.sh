#!/usr/bin/env bash
# sim-before-after.sh — slaq's real-job settings against the paper's, on
# the standard simulated workload (seeds 1-5, 4 s and 10 s inter-arrival).
#
# Usage: scripts/sim-before-after.sh [BUILD_DIR]
#
# "paper" runs the same binary with the settings slaq had before it was
# measured on real jobs (--normalise max-delta --startup-reports 0
# --hysteresis 0 --damping 0 --undeclared); "now" with the defaults. Prints,
# per setting and inter-arrival time, the mean over seeds of fair's and
# slaq's t90 and average normalised loss, and slaq's allocation changes and
# cores moved per job-minute. The settings were tuned on seeds 11-14.
set -euo pipefail
build=${1:-build}
slaq="$build/bin/slaq"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
paper="--normalise max-delta --startup-reports 0 --hysteresis 0 --damping 0 --undeclared"
for ia in 4 10; do
  for seed in 1 2 3 4 5; do
    "$slaq" workload gen --curves tests/data/curves-dev.jsonl --jobs 160 \
      --mean-interarrival "$ia" --work 2000:20000 --max-cores 64 --iters 100 \
      --seed "$seed" >"$tmp/wl.jsonl"
    for setting in paper now; do
      extra=""; [[ $setting == paper ]] && extra=$paper
      # shellcheck disable=SC2086
      "$slaq" sim --workload "$tmp/wl.jsonl" --cores 640 --epoch 2 --unit 1 \
        --compare fair,slaq $extra --out "$tmp/$setting-$ia-$seed" \
        --no-plots --quiet >/dev/null
    done
  done
done
python3 - "$tmp" <<'PY'
import json, sys, os
tmp = sys.argv[1]
print("%-6s %4s %9s %9s %10s %10s %12s %12s" % ("slaq", "ia", "fair t90",
      "slaq t90", "fair loss", "slaq loss", "changes/min", "moved/min"))
for setting in ("paper", "now"):
    for ia in (4, 10):
        rows = [json.load(open(os.path.join(tmp, "%s-%d-%d" % (setting, ia, s),
                                            "summary.json"))) for s in range(1, 6)]
        m = lambda pol, k: sum(next(r for r in run if r["policy"] == pol)[k]
                               for run in rows) / len(rows)
        print("%-6s %4d %9.1f %9.1f %10.4f %10.4f %12.2f %12.1f" % (
            setting, ia, m("fair", "t90_mean_s"), m("slaq", "t90_mean_s"),
            m("fair", "avg_norm_loss"), m("slaq", "avg_norm_loss"),
            m("slaq", "alloc_changes_per_job_min"),
            m("slaq", "cores_moved_per_job_min")))
PY
