#!/usr/bin/env bash
# demo-sweep.sh — `make demo-sweep`: a real hyperparameter sweep under
# slaqd, POP against Default.
#
# Starts slaqd (state under ./var/demo-sweep, HTTP on 127.0.0.1:7070 or a
# free port: the dashboard shows the sweeps), then runs the same sweep
# (examples/sweeps/logreg-demo.json: 30 random configurations of
# slaq-train logreg's learning rate and regularisation, 2 slots, validation
# accuracy >= the target) twice, first under POP and then under Default,
# each until a configuration reaches the target, and prints both times to
# target. Stops slaqd and every job at the end, whatever happens.
#
#   scripts/demo-sweep.sh [options] [BUILD_DIR]
#     --spec FILE       another sweep spec (its "policy" is replaced)
#     --policies LIST   comma-separated (default pop,default)
#     --state-dir DIR   default ./var/demo-sweep (emptied first)
#     --http ADDR:PORT  default 127.0.0.1:7070
set -euo pipefail

spec=examples/sweeps/logreg-demo.json policies=pop,default
state=./var/demo-sweep http=127.0.0.1:7070 build=build
while [ $# -gt 0 ]; do
    case $1 in
    --spec) spec=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --state-dir) state=$2; shift 2 ;;
    --http) http=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "demo-sweep.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
bin=$(cd "$build/bin" && pwd)
[ -f "$spec" ] || { echo "demo-sweep.sh: $spec: no such spec" >&2; exit 2; }
rm -rf "$state"
mkdir -p "$state"
state=$(cd "$state" && pwd)

# A free port when the default one is taken.
port=${http##*:}
if python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', $port))" 2>/dev/null; then :; else
    port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
fi
PATH="$bin:$PATH" "$bin/slaqd" --state-dir "$state" --http "127.0.0.1:$port" \
    >"$state/slaqd.log" 2>&1 &
slaqd=$!
cleanup() {
    for id in $("$bin/slaq" sweep ls --state-dir "$state" --json 2>/dev/null |
                python3 -c 'import json,sys; [print(w["id"]) for w in json.load(sys.stdin)["sweeps"] if w["state"] == "running"]' 2>/dev/null); do
        "$bin/slaq" sweep cancel --state-dir "$state" "$id" >/dev/null 2>&1 || true
    done
    kill "$slaqd" 2>/dev/null || true
    wait "$slaqd" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do
    "$bin/slaq" status --state-dir "$state" >/dev/null 2>&1 && break
    sleep 0.1
done
echo "slaqd: dashboard on http://127.0.0.1:$port/ (state in $state)"

results=()
IFS=, read -ra pols <<<"$policies"
for pol in "${pols[@]}"; do
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); s["policy"]=sys.argv[2]; s["name"]=s.get("name","sweep")+"-"+sys.argv[2]; json.dump(s, open(sys.argv[3],"w"))' \
        "$spec" "$pol" "$state/spec-$pol.json"
    echo
    echo "== $pol"
    start=$(date +%s.%N)
    "$bin/slaq" sweep --state-dir "$state" --wait "$state/spec-$pol.json" |
        sed -n '1,/^$/p'
    end=$(date +%s.%N)
    id=$("$bin/slaq" sweep ls --state-dir "$state" --json | python3 -c \
        'import json,sys; print(json.load(sys.stdin)["sweeps"][-1]["id"])')
    line=$("$bin/slaq" sweep show --state-dir "$state" --json "$id" | python3 -c '
import json, sys
w = json.load(sys.stdin)["sweep"]
c = w["counts"]
ttt = w["time_to_target_s"]
print("%-8s %-9s %10s %9.1f s   %2d started, %2d killed; best %.4f (configuration %s)" % (
    w["policy"], w["state"], "%.1f s" % ttt if ttt is not None else "not reached",
    w["elapsed_s"], sum(1 for x in w["config_list"] if x["jobs"]), c["killed"],
    w["best"] if w["best"] is not None else float("nan"), w["best_config"]))')
    results+=("$line")
    printf '   wall clock %.1f s\n' "$(echo "$end - $start" | bc)"
done
echo
echo "Time to target ($(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%s %s %s, %d configurations, %d slots" % (s["metric"], ">=" if s.get("direction","max")=="max" else "<=", s["y_target"], s["configs"], s["slots"]))' "$spec")):"
printf '%-8s %-9s %10s %11s\n' policy state "to target" elapsed
for r in "${results[@]}"; do echo "$r"; done
