#!/usr/bin/env bash
# agents.sh — measure a slaqd controller against its cluster targets with
# slaq-agentgen playing the agents: the epoch with AGENTS x JOBS jobs
# (target <= 20 ms), reports relayed per second (target >= 50,000), and a
# real agent's memory per job (target <= 64 KiB).
#
# Usage: bench/daemon/agents.sh [BUILD_DIR] [AGENTS] [JOBS] [SECONDS] [RATE]
# (defaults: build 100 50 10 0; RATE 0: as fast as the generator can).
# Starts its own controller (and one real agent) on temporary state
# directories, prints one JSON line of results, and removes them.
set -euo pipefail
build=${1:-build} agents=${2:-100} jobs=${3:-50} seconds=${4:-10} rate=${5:-0}
py=python3; $py -c 'import json' 2>/dev/null || py=/usr/bin/python3
dir=$(mktemp -d /tmp/slaq-agents.XXXXXX)
echo "agents-bench-token-$$" >"$dir/token"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n ${KEEP:-} ]] && echo "kept $dir" >&2 || rm -rf "$dir"
}
trap cleanup EXIT
# SLAQD_VERBOSE=2 (with KEEP=1) logs every epoch's parts in ctl.log.
verbose=()
for _ in $(seq "${SLAQD_VERBOSE:-0}"); do verbose+=(-v); done
"$build/bin/slaqd" --state-dir "$dir/ctl" --http off --enforce none \
  --agents 127.0.0.1:0 --agent-token-file "$dir/token" --epoch 1 \
  --cores 64 --unit 1 --keep-jobs 100000 "${verbose[@]}" >"$dir/ctl.log" 2>&1 &
ctl=$!; pids+=("$ctl")
for _ in $(seq 100); do [[ -s $dir/ctl/agents.port ]] && break; sleep 0.05; done
port=$(cat "$dir/ctl/agents.port")
status() { "$build/bin/slaq" status --json --socket "$dir/ctl/slaq.sock"; }
field() { $py -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

"$build/bin/slaq-agentgen" --join "127.0.0.1:$port" --token-file "$dir/token" \
  --socket "$dir/ctl/slaq.sock" --agents "$agents" --jobs "$jobs" \
  --seconds "$seconds" --rate "$rate" >"$dir/gen.json" &
gen=$!; pids+=("$gen")
echo "agents.sh: $agents agents x $jobs jobs reporting for $seconds s" >&2
# Count the reports the controller took in while the generator reported.
r0=$(status | field reports_total)
wait $gen
prev=-1
for _ in $(seq 50); do
  cur=$(status | field reports_total)
  [[ $cur == "$prev" ]] && break
  prev=$cur; sleep 0.2
done
st=$(status)
echo "$st" >"$dir/status.json"
echo "agents.sh: a real agent with $jobs jobs" >&2

# A real agent's memory per job: its RSS with 0 and with JOBS jobs (idle
# toy jobs, one report a second each).
"$build/bin/slaq" cluster node-key --secret-file "$dir/token" --out "$dir/real.key" real
"$build/bin/slaqd" --agent --join "127.0.0.1:$port" --node-key-file "$dir/real.key" \
  --state-dir "$dir/agent" --cores 64 --enforce none \
  >"$dir/agent.log" 2>&1 &
agent=$!; pids+=("$agent")
for _ in $(seq 100); do grep -q registered "$dir/agent.log" && break; sleep 0.05; done
rss() { awk '/^VmRSS/ {print $2}' "/proc/$agent/status"; }
rss0=$(rss)
for _ in $(seq "$jobs"); do
  "$build/bin/slaq" submit --socket "$dir/ctl/slaq.sock" --node real -- \
    "$build/bin/slaq-toy-job" --forever --rate 1 >/dev/null
done
sleep 3
rss1=$(rss)
running=$("$build/bin/slaq" ls --socket "$dir/agent/slaq.sock" --json |
  $py -c 'import json,sys; print(sum(j["state"]=="running" for j in json.load(sys.stdin)["jobs"]))')
# End the toy jobs with the agent's own cancel (they are its children).
for id in $("$build/bin/slaq" ls --socket "$dir/agent/slaq.sock" --json |
            $py -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))'); do
  "$build/bin/slaq" cancel --now --socket "$dir/agent/slaq.sock" "$id" >/dev/null || true
done
for _ in $(seq 100); do
  [[ $("$build/bin/slaq" ls --active --socket "$dir/agent/slaq.sock" | wc -l) -le 1 ]] && break
  sleep 0.1
done

$py - "$dir/gen.json" "$st" "$r0" "$rss0" "$rss1" "$running" <<'PY'
import json, statistics, sys
gen, st, r0, rss0, rss1, running = sys.argv[1:]
gen = json.load(open(gen)); st = json.loads(st)
total = gen["jobs"]
# Every epoch the controller ran (status's recent_epochs): wall ms, CPU
# ms, the core's wall and CPU ms, jobs, reports taken in by its end.
seen = {e[0]: e[1:] for e in st["recent_epochs"]}
def full(e):
    return e in seen and seen[e][4] >= total
# Steady state: every job running for two epochs already (their first
# allocations are behind) and reports coming in during the epoch.
steady = [e for e in seen if full(e) and full(e - 1) and full(e - 2)
          and full(e + 1) and seen[e][5] > seen[e - 1][5]]
# Start-up: the epochs while jobs were placed and took their first
# allocations (up to the second that holds all of them).
startup = [e for e in seen if seen[e][4] > 0 and not full(e - 2)]
def stats(es, k):
    v = sorted(seen[e][k] for e in es)
    if not v:
        return None, None
    return round(statistics.median(v), 3), round(v[-1], 3)
got = st["reports_total"] - int(r0)
# Reports taken in per second of wall time over the steady epochs.
rate = None
if len(steady) >= 2:
    a, b = min(steady) - 1, max(steady)
    rate = round((seen[b][5] - seen[a][5]) / (seen[b][6] - seen[a][6]))
res = {
    "agents": gen["agents"], "jobs": gen["jobs"],
    "jobs_started": gen["jobs_started"],
    "place_and_start_s": gen["place_start_s"],
    "reports_sent": gen["reports_sent"],
    "reports_relayed": got,
    "reports_relayed_per_s": round(got / gen["seconds"]),
    "steady_reports_per_s": rate,
    "epoch_ms_mean": round(st["epoch_ms_mean"], 3),
    "epoch_cpu_ms_mean": round(st["epoch_cpu_ms_mean"], 3),
    "epoch_ms_max": round(st["epoch_ms_max"], 3),
    "startup_epoch_ms_max": stats(startup, 0)[1],
    "startup_epoch_cpu_ms_max": stats(startup, 1)[1],
    "steady_epochs": len(steady),
    "steady_epoch_ms_median": stats(steady, 0)[0],
    "steady_epoch_ms_max": stats(steady, 0)[1],
    "steady_epoch_cpu_ms_median": stats(steady, 1)[0],
    "steady_epoch_cpu_ms_max": stats(steady, 1)[1],
    "steady_core_ms_median": stats(steady, 2)[0],
    "steady_core_cpu_ms_median": stats(steady, 3)[0],
    # The CPU ms of an epoch's parts, median over the steady epochs.
    "steady_parts_cpu_ms_median": {
        name: round(statistics.median(seen[e][7][k] for e in steady), 3)
        for k, name in enumerate(["forecast_check", "core", "applying",
                                  "nodes", "timeline"])} if steady else None,
    "agent_jobs_running": int(running),
    "agent_rss_kib_idle": int(rss0), "agent_rss_kib_with_jobs": int(rss1),
    "agent_kib_per_job": round((int(rss1) - int(rss0)) / max(1, int(running)), 1),
}
res["targets_met"] = {
    "steady_epoch_ms_median<=20": bool(steady) and res["steady_epoch_ms_median"] <= 20,
    "steady_epoch_cpu_ms_median<=20": bool(steady) and res["steady_epoch_cpu_ms_median"] <= 20,
    "relayed_per_s>=50000": (rate or 0) >= 50000,
    "agent_kib_per_job<=64": res["agent_kib_per_job"] <= 64,
}
print(json.dumps(res))
PY
