#!/usr/bin/env bash
# demo.sh — `make demo`: slaq's main job, end to end, on embedded defaults.
#
# Starts slaqd (state under ./var/demo/POLICY, HTTP on 127.0.0.1:7070 or a
# free port if that one is taken), submits a staggered mix of real
# slaq-train jobs (eight algorithms, more CPU demand than the machine has,
# so the policy decides who progresses), shows `slaq top` while they run,
# then prints each job's time to 50/90/95% loss reduction, final loss and
# test quality, computed by slaq report (through scripts/demo_report.py)
# from slaqd's database.
# Whatever happens (end, error, Ctrl-C), slaqd and every job are stopped:
# jobs run in their own sessions and would outlive slaqd otherwise.
#
#   scripts/demo.sh [options] [BUILD_DIR]
#     --policy P       slaq (default), fair or slaq-maxmin
#     --state-dir DIR  default ./var/demo/POLICY (emptied first)
#     --http ADDR:PORT default 127.0.0.1:7070
#     --enforce MODE   slaqd's --enforce (default auto)
#     --size S         full (default, about 90 s of jobs on 2 cores), half
#                      (the same eight jobs at about half the CPU-seconds:
#                      what `make demo` runs on each half of the machine)
#                      or tiny (seconds; what the test suite runs)
#     --cores N        slaqd's --cores (default: all online CPUs)
#     --no-top         no live view (progress lines only)
#     --quiet          only the summary
#     --json FILE      also write the run's summary as JSON (and the
#                      per-epoch timeline as timeline.csv next to it)
set -euo pipefail

policy=slaq state= http=127.0.0.1:7070 enforce=auto size=full top=1
quiet=0 json= build=build cores=
while [ $# -gt 0 ]; do
    case $1 in
    --policy) policy=$2; shift 2 ;;
    --state-dir) state=$2; shift 2 ;;
    --http) http=$2; shift 2 ;;
    --enforce) enforce=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --no-top) top=0; shift ;;
    --quiet) quiet=1; top=0; shift ;;
    --json) json=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
case $policy in slaq|fair|slaq-maxmin) ;; *)
    echo "demo.sh: --policy: expected slaq, fair or slaq-maxmin, got '$policy'" >&2
    exit 2 ;;
esac
case $size in full|half|tiny) ;; *)
    echo "demo.sh: --size: expected full, half or tiny, got '$size'" >&2; exit 2 ;;
esac
case $cores in ''|[0-9]*) ;; *)
    echo "demo.sh: --cores: expected a number of cores, got '$cores'" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$build/bin" 2>/dev/null && pwd) || {
    echo "demo.sh: $build/bin not found; run 'make' first" >&2; exit 1; }
for p in slaqd slaq slaq-train; do
    [ -x "$bin/$p" ] || { echo "demo.sh: $bin/$p missing; run 'make'" >&2; exit 1; }
done
: "${state:=var/demo/$policy}"
say() { [ "$quiet" = 1 ] || echo "$@"; }

# The batch: name, seconds after the first submission, slaq-train options.
# Sizes are chosen so that about 140 CPU-seconds arrive within 35 s on a
# 2-core machine: every job could use several cores, so the machine is
# contended for most of the run and the policy decides who progresses.
# Iteration counts are fixed (no early stop), so every run of the batch
# has the same curves and L_end, whichever policy ran it.
# Every algorithm runs at its default settings: no per-job tuning to suit
# the scheduler.
if [ "$size" = full ]; then
    jobs=(
        "logreg   0  logreg --scale 3 --iters 100"
        "kmeans   5  kmeans --scale 4 --iters 40"
        "svm     10  svm --scale 3 --iters 80"
        "mlpc    15  mlpc --iters 60"
        "lda     20  lda --scale 2 --iters 30"
        "gbtreg  25  gbtreg --scale 3 --iters 80"
        "linreg  30  linreg --scale 12 --iters 50"
        "gbt     35  gbt --iters 15"
    )
    budget=540      # seconds before the demo gives up on the batch
elif [ "$size" = half ]; then
    # The same algorithms, arrivals and iterations on less data (fewer
    # rows, less replication), for one core: about two and a half
    # minutes of jobs on one core of this kind of machine.
    jobs=(
        "logreg   0  logreg --scale 2 --subsample 0.5 --iters 100"
        "kmeans   5  kmeans --iters 40"
        "svm     10  svm --scale 2 --subsample 0.5 --iters 80"
        "mlpc    15  mlpc --subsample 0.3 --iters 60"
        "lda     20  lda --iters 30"
        "gbtreg  25  gbtreg --scale 2 --iters 80"
        "linreg  30  linreg --scale 6 --iters 50"
        "gbt     35  gbt --subsample 0.3 --iters 15"
    )
    budget=400
else
    jobs=(
        "logreg   0  logreg --subsample 0.05 --iters 15"
        "kmeans   1  kmeans --subsample 0.05 --iters 10"
        "linreg   2  linreg --rows 5000 --iters 10"
        "gbtreg   3  gbtreg --rows 5000 --iters 10"
        "svm      4  svm --subsample 0.05 --iters 15"
    )
    budget=60
fi

rm -rf "$state"
mkdir -p "$state/curves"
state=$(cd "$state" && pwd)
slaq() { local c=$1; shift; "$bin/slaq" "$c" --state-dir "$state" "$@"; }

daemon_pid= top_pid= submit_pid=
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    set +e    # a failing step must not cut the rest of the clean-up short
    if [ -n "$top_pid" ]; then kill "$top_pid"; wait "$top_pid"; fi 2>/dev/null
    # The submitter holds no resources; KILL, so a pending sleep cannot
    # delay it.
    if [ -n "$submit_pid" ]; then
        kill -KILL "$submit_pid"; wait "$submit_pid"
    fi 2>/dev/null
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        # Cancel what still runs (slaqd signals each job's process group),
        # give it the grace period, then stop slaqd itself.
        local ids
        ids=$(slaq ls --active --json 2>/dev/null |
              python3 -c 'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))' 2>/dev/null || true)
        for id in $ids; do slaq cancel --now "$id" >/dev/null 2>&1 || true; done
        for _ in $(seq 50); do
            [ -z "$(slaq ls --active --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]) or "")' 2>/dev/null)" ] && break
            sleep 0.1
        done
        kill -TERM "$daemon_pid" 2>/dev/null || true
        wait "$daemon_pid" 2>/dev/null || true
    fi
    # A job slaqd could not stop (slaqd died) is killed by its process
    # group (slaqd starts each job as a group leader), if it is still ours.
    local pg
    for pg in $(cat "$state"/pgids 2>/dev/null); do
        if tr '\0' ' ' 2>/dev/null <"/proc/$pg/cmdline" | grep -q slaq-train; then
            kill -KILL -- "-$pg" 2>/dev/null || true
        fi
    done
    exit "$rc"
}
trap cleanup EXIT
trap 'echo; echo "demo.sh: interrupted; stopping slaqd and its jobs" >&2; exit 130' INT TERM

# slaqd with embedded defaults, except: the state directory of this demo
# and an allocation unit of 0.1 core (with the core's default of 1, two
# cores leave slaq nothing to decide once two jobs run).
start_daemon() {
    "$bin/slaqd" --state-dir "$state" --http "$1" --policy "$policy" \
        --unit 0.1 --enforce "$enforce" ${cores:+--cores "$cores"} \
        >>"$state/slaqd.log" 2>&1 &
    daemon_pid=$!
    for _ in $(seq 100); do
        grep -q "ready:" "$state/slaqd.log" 2>/dev/null && return 0
        kill -0 "$daemon_pid" 2>/dev/null || { wait "$daemon_pid" || true; daemon_pid=; return 1; }
        sleep 0.1
    done
    echo "demo.sh: slaqd did not become ready in 10 s; see $state/slaqd.log" >&2
    exit 1
}
if ! start_daemon "$http"; then
    if grep -qi "in use" "$state/slaqd.log"; then
        echo "demo.sh: $http is taken (another slaqd or program listens there);" \
             "using a free port instead" >&2
        start_daemon "${http%:*}:0" || {
            echo "demo.sh: slaqd failed to start:" >&2; cat "$state/slaqd.log" >&2; exit 1; }
        http="${http%:*}:$(cat "$state/http.port")"
    else
        echo "demo.sh: slaqd failed to start:" >&2; cat "$state/slaqd.log" >&2
        exit 1
    fi
fi
enf=$(sed -n 's/.*enforcement: \([a-z0-9]*\).*/\1/p' "$state/slaqd.log" | head -1)
ncores=$(sed -n 's/.*ready: pid [0-9]*, \([0-9.]*\) cores.*/\1/p' "$state/slaqd.log")
say "== slaqd running: policy $policy, $ncores cores, enforcement $enf"
say "   dashboard: http://$http/"
say "   state:     $state"
read -r _ last _ <<<"${jobs[-1]}"
say "== submitting ${#jobs[@]} slaq-train jobs over ${last}s:" \
    "$(printf '%s\n' "${jobs[@]}" | awk '{print $1}' | paste -sd' ')"

# Submissions run in the background at their offsets; each job records its
# curve (for the simulator comparison, scripts/demo-vs-sim.sh).
submit_all() {
    local t0 spec name at args now
    t0=$(date +%s.%N)
    for spec in "${jobs[@]}"; do
        read -r name at args <<<"$spec"
        now=$(date +%s.%N)
        sleep "$(awk -v a="$at" -v t0="$t0" -v n="$now" 'BEGIN{d=t0+a-n; print (d > 0 ? d : 0)}')"
        # shellcheck disable=SC2086
        slaq submit --name "$name" -- "$bin/slaq-train" $args --threads 1 \
            --quiet --record "$state/curves/$name.jsonl" --name "$name" \
            >>"$state/submitted" || { echo "demo.sh: submit of $name failed" >&2; return 1; }
    done
}
submit_all &
submit_pid=$!

if [ "$top" = 1 ]; then
    # Not through slaq(): $! must be the top process itself.
    if [ -t 1 ]; then
        "$bin/slaq" top --state-dir "$state" -d 1 &
    else                      # plain blocks, readable in a CI log
        "$bin/slaq" top --state-dir "$state" -d 10 &
    fi
    top_pid=$!
fi

# Wait for the batch: every job submitted and none active.
deadline=$(( $(date +%s) + budget ))
while :; do
    sleep 1
    if [ -n "$submit_pid" ] && ! kill -0 "$submit_pid" 2>/dev/null; then
        wait "$submit_pid" || exit 1
        submit_pid=
    fi
    info=$(slaq ls --all --json | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
act = [j for j in jobs if j["state"] in ("running", "stopping")]
print(len(jobs), len(act), " ".join(str(j["pid"]) for j in act if j.get("pid")))')
    read -r n active pids <<<"$info"
    echo "$pids" | tr ' ' '\n' >"$state/pgids"
    if [ -z "$submit_pid" ] && [ "$n" -ge "${#jobs[@]}" ] && [ "$active" = 0 ]; then
        break
    fi
    if [ "$top" = 0 ] && [ "$quiet" = 0 ] && [ $(( $(date +%s) % 10 )) = 0 ]; then
        echo "   $(date +%T) $n submitted, $active running"
    fi
    if [ "$(date +%s)" -gt "$deadline" ]; then
        echo "demo.sh: the batch did not finish within ${budget}s; cancelling it" >&2
        exit 1
    fi
done
if [ -n "$top_pid" ]; then
    kill "$top_pid" 2>/dev/null; wait "$top_pid" 2>/dev/null || true; top_pid=
    [ -t 1 ] && printf '\n'
fi

say
say "== summary (policy $policy; times from each job's submission, docs/metrics.md)"
report_args=(summary "$state" --policy "$policy" --slaq "$bin/slaq")
if [ -n "$json" ]; then
    mkdir -p "$(dirname "$json")"
    report_args+=(--json "$json" --timeline "$(dirname "$json")/timeline.csv")
fi
python3 "$root/scripts/demo_report.py" "${report_args[@]}"
failed=$(slaq ls --all --json | python3 -c 'import json,sys; print(" ".join("%s(%s)" % (j["name"], j["state"]) for j in json.load(sys.stdin)["jobs"] if j["state"] != "done"))')
say
say "logs:  $state/jobs/ID/{stdout,stderr}.log (slaq logs --state-dir $state ID)"
say "state: $state/state.db (SQLite; slaqd's log $state/slaqd.log)"
if [ -n "$failed" ]; then
    echo "demo.sh: jobs that did not finish normally: $failed" >&2
    exit 1
fi
