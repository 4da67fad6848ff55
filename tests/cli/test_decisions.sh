#!/usr/bin/env bash
# test_decisions.sh — the core decides, the drivers apply.
#
# MLFS's decisions are the core's (include/slaq/deadline.h): MLF-C's
# verdict on a job (slaq_mlfc_decide), the moves off overloaded nodes
# weighed against their cost (slaq_mlfs_plan), the order of jobs by key
# (slaq_key_order) and where a job goes (slaq_mlfs_host,
# slaq_node_most_free); slaqd's scheduler (a slaq_sched) decides MLF-C in
# its epoch, overload included (slaq_job_verdict). slaqd (src/daemon) and
# the simulators (src/sim) call those and apply what they return; they do
# not compose the core's parts into a decision of their own. So no driver
# file calls the parts (slaq_mlfs_stop, slaq_mlfs_moves,
# slaq_mlfs_move_gain), sorts jobs by their keys itself (a comparison of
# .key fields) or carries a placement rule of its own, and slaqd does not
# judge overload or MLF-C's verdict itself (slaq_mlfs_overloaded,
# slaq_mlfc_decide: its slaq_sched's epoch does). The simulators go
# further: each drives a slaq_sched, whose epoch makes every decision of
# a round, so none calls a decision function at all (the stops, keys,
# order, placement, moves, overload and the allocator), and the deadline
# simulator calls the epoch (slaq_sched_epoch or slaq_sched_allocate:
# MLFS's cluster, slaq_sched_set_mlfs). The checks run on a copy with such
# calls planted in slaqd and the simulators, and with the deadline
# simulator's epoch taken out, and must find each.
. "$(dirname "$0")/lib.sh"

# decisions_outside ROOT: "file:line: text" for every such line in the
# drivers (comments aside).
decisions_outside() {
  local root=$1
  grep -nE '\bslaq_mlfs_(stop|moves|move_gain)[[:space:]]*\(|->key[[:space:]]*[<>]|\.key[[:space:]]*[<>]|static long most_free' \
    "$root"/src/daemon/*.c "$root"/src/sim/*.c 2>/dev/null |
    grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)' |
    sed "s#^$root/##"
  grep -nE '\bslaq_(mlfs_overloaded|mlfc_decide)[[:space:]]*\(' \
    "$root"/src/daemon/*.c 2>/dev/null |
    grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)' |
    sed "s#^$root/##"
  grep -nE '\bslaq_(mlfc_decide|mlfs_plan|mlfs_host|mlfs_overloaded|key_order|node_most_free|allocate_nodes|allocate|policy_keys)[[:space:]]*\(' \
    "$root"/src/sim/*.c 2>/dev/null |
    grep -vE ':[0-9]+:[[:space:]]*(/?\*|//)' |
    sed "s#^$root/##"
}

# drives_epoch ROOT: whether the deadline simulator calls the core's
# epoch (comments aside); lacks_epoch ROOT: whether it does not.
drives_epoch() {
  grep -E '\bslaq_sched_(epoch|allocate)[[:space:]]*\(' "$1/src/sim/dlsim.c" |
    grep -qvE '^[[:space:]]*(/?\*|//)'
}
lacks_epoch() { ! drives_epoch "$1"; }

decisions_outside . >"$TMP/found"
check "no driver decides for the core (found: $(tr '\n' ';' <"$TMP/found"))" \
  test ! -s "$TMP/found"

# The drivers do ask the core for each decision.
for pair in "src/daemon/epoch.c slaq_job_verdict" \
            "src/daemon/jobs.c slaq_job_set_metric" \
            "src/daemon/epoch.c slaq_key_order" \
            "src/daemon/agent_link.c slaq_mlfs_plan" \
            "src/sim/dlsim.c slaq_sched_set_mlfs" \
            "src/sim/dlsim.c slaq_job_observe" \
            "src/sim/dlsim.c slaq_job_verdict" \
            "src/sim/dlsim.c slaq_job_alloc" \
            "src/sim/dlsim.c slaq_job_moving_until"; do
  set -- $pair
  check "$1 asks the core: $2" grep -qE "\b$2[[:space:]]*\(" "$1"
done
check "the deadline simulator drives the core's epoch" drives_epoch .

# The same check on a copy with a decision planted in each driver.
mkdir -p "$TMP/tree/src"
cp -r src/daemon src/sim "$TMP/tree/src/"
printf 'static int planted(void) { return slaq_mlfs_stop(0, 0, 1, 0, 0, 0, 0, 0); }\n' \
  >>"$TMP/tree/src/daemon/jobs.c"
printf 'static int planted(void) { return slaq_mlfs_overloaded(0, 0, 0, 0.9); }\n' \
  >>"$TMP/tree/src/daemon/agent_link.c"
printf 'static int planted(const slaq_pjob *a, const slaq_pjob *b) { return a->key < b->key; }\n' \
  >>"$TMP/tree/src/sim/dlsim.c"
printf 'static long planted_place(const slaq_node_use *v) { return slaq_node_most_free(v, 1, 0); }\n' \
  >>"$TMP/tree/src/sim/dlsim.c"
printf 'static int planted_stop(const slaq_goal *g) { return slaq_mlfc_decide(g, 0, 1, 1, 0, 0, 0); }\n' \
  >>"$TMP/tree/src/sim/sim.c"
decisions_outside "$TMP/tree" >"$TMP/planted"
check "a stop composed in slaqd is found" \
  grep -q '^src/daemon/jobs.c:[0-9]*:.*slaq_mlfs_stop' "$TMP/planted"
check "an order by key made in the deadline simulator is found" \
  grep -q '^src/sim/dlsim.c:[0-9]*:.*a->key < b->key' "$TMP/planted"
check "overload judged in slaqd is found" \
  grep -q '^src/daemon/agent_link.c:[0-9]*:.*slaq_mlfs_overloaded' "$TMP/planted"
check "a placement made in the deadline simulator is found" \
  grep -q '^src/sim/dlsim.c:[0-9]*:.*slaq_node_most_free' "$TMP/planted"
check "MLF-C's verdict judged in a simulator is found" \
  grep -q '^src/sim/sim.c:[0-9]*:.*slaq_mlfc_decide' "$TMP/planted"
check "nothing else is found in the copy" \
  test "$(wc -l <"$TMP/planted")" -eq 5
# The deadline simulator without its epoch (its calls made comments) is
# found out.
sed -E 's#^([^/*]*\bslaq_sched_(epoch|allocate)[[:space:]]*\()#// \1#' \
  src/sim/dlsim.c >"$TMP/tree/src/sim/dlsim.c"
check "a deadline simulator that does not call the epoch is found" \
  lacks_epoch "$TMP/tree"
finish
