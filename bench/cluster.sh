#!/usr/bin/env bash
# cluster.sh — the scheduling core at cluster scale: JOBS jobs of the
# standard mix (mean inter-arrival 0.01 s, so nearly all are active at
# once) replayed by the simulator on NODES nodes of CORES cores.
#
# Usage: bench/cluster.sh BUILD_DIR [JOBS NODES CORES PLACEMENT]
# (make bench-cluster). Prints `slaq bench cluster`'s figures: the run's
# wall time, the median, p99 and maximum epoch in wall and CPU ms, the
# refits per epoch (at most the core's default 1,000) and, last, the epoch
# CPU p99 against the target (50 ms): docs/cluster.md "Scale".
set -euo pipefail
build=${1:-build} jobs=${2:-50000} nodes=${3:-1000} cores=${4:-64}
placement=${5:-least-loaded}
slaq="$build/bin/slaq"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$slaq" workload gen --curves tests/data/curves-dev.jsonl --jobs "$jobs" \
  --mean-interarrival 0.01 --work 2000:20000 --max-cores 64 --iters 100 \
  --seed 1 >"$tmp/wl.jsonl"
"$slaq" bench cluster --workload "$tmp/wl.jsonl" --nodes "$nodes" \
  --cores-per-node "$cores" --placement "$placement"
