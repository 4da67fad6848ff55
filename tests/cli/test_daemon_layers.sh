# test_daemon_layers.sh — slaqd's modules are layers (the table in
# src/daemon/daemon.h): a file includes the headers of its own layer and
# of the layers below, never one above, and no files include each other
# in a cycle. scripts/daemon-deps.sh draws the include graph (an include
# of daemon/X.h is an arrow to X.c).
#
# A check that a rule is held proves nothing unless the rule can fail, so
# the same checks run on a copy of src/daemon with forbidden includes
# planted, and must find each.
. "$(dirname "$0")/lib.sh"

deps=scripts/daemon-deps.sh

# No arrow runs upward: the jobs layer sends on connections through
# conn_io.c and builds error replies with api_reply.c, both in the bottom
# layer, so nothing is allowed here.

# The one include cycle known, within the jobs layer alone (no arrow of
# it runs upward): the epoch and a job's end in jobs.c call arrays
# (array_tick, array_task_ended), suspends (job_suspend_done) and the
# agents (ctl_*, agent_job_ended), which all use the job table; arrays and
# the agents call each other, and so do suspends and sweeps. It may only
# shrink; the other layers are in no cycle.
allowed_cycle='agent.c agent_link.c array.c jobs.c suspend.c sweepd.c'

# violations ROOT: "upward: ARROW" for each arrow upward, and "cycle:
# FILES" for each cycle but the one allowed.
violations() {
  local root=$1
  "$deps" --root "$root" --upward | sed 's/^/upward: /'
  "$deps" --root "$root" --cycles | grep -v -x -F "$allowed_cycle" |
    sed 's/^/cycle: /'
}
check_exit "daemon-deps.sh --help says what it prints" 0 "$deps" --help
check_grep "... the cycles" '--cycles' "$TMP/out"

violations . >"$TMP/found"
check "no daemon file includes a layer above it or is in a new cycle (found: $(tr '\n' ';' <"$TMP/found"))" \
  test ! -s "$TMP/found"

"$deps" --upward >"$TMP/upward"
check "no arrow runs upward (found: $(tr '\n' ';' <"$TMP/upward"))" \
  test ! -s "$TMP/upward"
check "daemon-deps.sh counts none (upward arrows: 0)" \
  grep -q -x -F 'upward arrows: 0' <("$deps" --summary)
"$deps" --cycles >"$TMP/cycles"
check "the allowed cycle is still the whole of it: one that shrank is listed anew (now: $(tr '\n' ';' <"$TMP/cycles"))" \
  grep -q -x -F "$allowed_cycle" "$TMP/cycles"

"$deps" --upward | grep '?' >"$TMP/unplaced" || true
check "every daemon file has its layer in daemon.h's table (not: $(tr '\n' ';' <"$TMP/unplaced"))" \
  test ! -s "$TMP/unplaced"

# The same checks on copies with forbidden includes planted: the store
# including the job table and users.c the API in one, and in another a
# cycle within the bottom layer alone (clock.c including the store,
# which includes clock.h), which no arrow upward shows.
for t in up cycle; do
  mkdir -p "$TMP/$t/src"
  cp -r src/daemon "$TMP/$t/src/"
done
printf '#include "daemon/jobs.h"\n' >>"$TMP/up/src/daemon/store.c"
printf '#include "daemon/api.h"\n' >>"$TMP/up/src/daemon/users.c"
printf '#include "daemon/store.h"\n' >>"$TMP/cycle/src/daemon/clock.c"
violations "$TMP/up" >"$TMP/planted"
check "the store including jobs.h is found" \
  grep -q -x -F 'upward: store.c -> jobs.c (4 -> 2)' "$TMP/planted"
check "users.c including api.h is found" \
  grep -q -x -F 'upward: users.c -> api.c (4 -> 1)' "$TMP/planted"
check "... and the cycle they make through the jobs layer" \
  grep -q -E '^cycle: .*jobs\.c.*store\.c.*users\.c' "$TMP/planted"
check "nothing else upward is found in the copy" \
  test "$(grep -c '^upward: ' "$TMP/planted")" -eq 2
violations "$TMP/cycle" >"$TMP/planted"
check "a cycle within the bottom layer is found (clock.c, store.c and users.c, which includes clock.h)" \
  grep -q -x -F 'cycle: clock.c store.c users.c' "$TMP/planted"
check "... with nothing else" test "$(wc -l <"$TMP/planted")" -eq 1
finish
