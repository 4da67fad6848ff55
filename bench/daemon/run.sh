#!/usr/bin/env bash
# run.sh — measure slaqd against its targets with the load generator:
#   reports persisted per second from N connected clients (target >= 50,000
#   from 1,000), the epoch time with N jobs (target <= 5 ms), and slaqd's
#   memory per job (target <= 64 KiB).
#
# Usage: bench/daemon/run.sh [BUILD_DIR] [CLIENTS] [SECONDS] [RATE]
# (defaults: build 1000 10 60000). Starts its own slaqd on a temporary state
# directory, prints one JSON line of results and removes the directory.
set -euo pipefail
build=${1:-build} clients=${2:-1000} seconds=${3:-10} rate=${4:-60000}
py=python3; $py -c 'import sqlite3' 2>/dev/null || py=/usr/bin/python3
state=$(mktemp -d /tmp/slaq-bench.XXXXXX)
"$build/bin/slaqd" --state-dir "$state" --http off --enforce none \
  --epoch 1 >"$state.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$state" "$state.log"' EXIT
for _ in $(seq 100); do [[ -S $state/slaq.sock ]] && break; sleep 0.05; done
rss() { awk '/^VmRSS/ {print $2}' /proc/$pid/status; }
status() { "$build/bin/slaq" status --json --socket "$state/slaq.sock"; }
rss0=$(rss)
"$build/bin/slaq-loadgen" --socket "$state/slaq.sock" --clients "$clients" \
  --seconds "$seconds" --rate "$rate" >"$state/loadgen.json" &
lg=$!
peak=$rss0
while kill -0 $lg 2>/dev/null; do
  r=$(rss); (( r > peak )) && peak=$r
  sleep 0.2
done
wait $lg
# Let slaqd drain what is in flight, then count what reached the database.
prev=-1
for _ in $(seq 50); do
  cur=$(status | $py -c 'import json,sys; print(json.load(sys.stdin)["reports_total"])')
  [[ $cur == "$prev" ]] && break
  prev=$cur; sleep 0.2
done
st=$(status)
$py - "$state/state.db" "$state/loadgen.json" "$rss0" "$peak" "$clients" "$st" <<'PY'
import json, sqlite3, sys
db, lg, rss0, peak, clients, st = sys.argv[1:]
lg = json.load(open(lg))
st = json.loads(st)
rows = sqlite3.connect(db).execute("SELECT count(*) FROM reports").fetchone()[0]
res = {
    "clients": int(clients),
    "seconds": lg["seconds"],
    "reports_sent": lg["sent"],
    "reports_dropped_by_clients": lg["dropped"],
    "reports_persisted": rows,
    "persisted_per_s": round(rows / lg["seconds"]),
    "all_sent_persisted": rows == lg["sent"],
    "epoch_ms_max": round(st["epoch_ms_max"], 3),
    "epoch_ms_mean": round(st["epoch_ms_mean"], 3),
    "core_ms_mean": round(st["core_ms_mean"], 3),
    "core_ms_max": round(st["core_ms_max"], 3),
    "slaqd_part_ms_max": round(st["apply_ms_max"], 3),
    "kib_per_job": round((int(peak) - int(rss0)) / int(clients), 1),
}
print(json.dumps(res))
PY
