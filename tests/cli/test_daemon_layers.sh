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

# Arrows upward that are known and not broken yet, each with its reason.
# The list only shrinks: an arrow broken must leave it (checked below).
allowed_upward() {
  # conn.c is both the connections' I/O (conn_send, conn_close) and the
  # protocol's dispatch into the jobs layer; the jobs layer sends on
  # connections. Moving the I/O into a file of the bottom layer ends
  # these four.
  echo 'agent.c -> conn.c (2 -> 1)'
  echo 'agent_link.c -> conn.c (2 -> 1)'
  echo 'jobs.c -> conn.c (2 -> 1)'
  echo 'suspend.c -> conn.c (2 -> 1)'
  # api_error, the form of an error reply, is api.c's; a request sweepd.c
  # answers and an agent's answer to a suspend (suspend.c) are answered
  # with it.
  echo 'suspend.c -> api.c (2 -> 1)'
  echo 'sweepd.c -> api.c (2 -> 1)'
}

# The one include cycle known: the files of the top two layers that the
# arrows above and the jobs layer's own calls both ways (the epoch in
# jobs.c drives arrays, suspends and the agents, which use the job
# table) tie together. It may only shrink; the layers below are in no
# cycle.
allowed_cycle='agent.c agent_link.c api.c aqpd.c array.c conn.c jobs.c suspend.c sweepd.c tcp_session.c'

# violations ROOT: "upward: ARROW" for each arrow upward not allowed, and
# "cycle: FILES" for each cycle but the one allowed.
violations() {
  local root=$1
  "$deps" --root "$root" --upward | grep -v -x -F -f "$TMP/allowed" |
    sed 's/^/upward: /'
  "$deps" --root "$root" --cycles | grep -v -x -F "$allowed_cycle" |
    sed 's/^/cycle: /'
}
allowed_upward >"$TMP/allowed"

check_exit "daemon-deps.sh --help says what it prints" 0 "$deps" --help
check_grep "... the cycles" '--cycles' "$TMP/out"

violations . >"$TMP/found"
check "no daemon file includes a layer above it or is in a new cycle (found: $(tr '\n' ';' <"$TMP/found"))" \
  test ! -s "$TMP/found"

"$deps" --upward >"$TMP/upward"
grep -v -x -F -f "$TMP/upward" "$TMP/allowed" >"$TMP/stale" || true
check "every allowed arrow still exists: a broken one leaves the list (gone: $(tr '\n' ';' <"$TMP/stale"))" \
  test ! -s "$TMP/stale"
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
