# test_daemon_layers.sh — slaqd's modules are layers (the table in
# src/daemon/daemon.h): a file includes the headers of its own layer and
# of the layers below, never one above; within the jobs layer, whose
# sub-layers run from 2a (epoch.c, which drives the rest) down to 2f, of
# its own sub-layer and those below; and no files include each other in
# a cycle. scripts/daemon-deps.sh draws the include graph (an include of
# daemon/X.h is an arrow to X.c).
#
# A check that a rule is held proves nothing unless the rule can fail, so
# the same checks run on a copy of src/daemon with forbidden includes
# planted, and must find each.
. "$(dirname "$0")/lib.sh"

deps=scripts/daemon-deps.sh

# No arrow runs upward: the jobs layer sends on connections through
# conn_io.c and builds error replies with api_reply.c, both in the bottom
# layer, so nothing is allowed here.

# No include cycle either, and nothing allowed: the jobs layer's modules
# call down only (the job table, jobs.c, below the modules that use it),
# and what the job table and suspend.c raise for those above them goes
# through the functions epoch.c registers at start-up (job_modules_init).

# violations ROOT: "upward: ARROW" for each arrow upward, and "cycle:
# FILES" for each cycle.
violations() {
  local root=$1
  "$deps" --root "$root" --upward | sed 's/^/upward: /'
  "$deps" --root "$root" --cycles | sed 's/^/cycle: /'
}
check_exit "daemon-deps.sh --help says what it prints" 0 "$deps" --help
check_grep "... the cycles" '--cycles' "$TMP/out"

violations . >"$TMP/found"
check "no daemon file includes a layer above it or is in a cycle (found: $(tr '\n' ';' <"$TMP/found"))" \
  test ! -s "$TMP/found"

"$deps" --upward >"$TMP/upward"
check "no arrow runs upward (found: $(tr '\n' ';' <"$TMP/upward"))" \
  test ! -s "$TMP/upward"
check "daemon-deps.sh counts none (upward arrows: 0)" \
  grep -q -x -F 'upward arrows: 0' <("$deps" --summary)
"$deps" --cycles >"$TMP/cycles"
check "no include cycle among the daemon's files (found: $(tr '\n' ';' <"$TMP/cycles"))" \
  test ! -s "$TMP/cycles"
check "daemon-deps.sh counts none (cycles: 0)" \
  grep -q -x -F 'cycles: 0 (files in them: 0)' <("$deps" --summary)

"$deps" --upward | grep '?' >"$TMP/unplaced" || true
check "every daemon file has its layer in daemon.h's table (not: $(tr '\n' ';' <"$TMP/unplaced"))" \
  test ! -s "$TMP/unplaced"

# The same checks on copies with forbidden includes planted: the store
# including the job table and users.c the API in one, and in another a
# cycle within the bottom layer alone (clock.c including the store,
# which includes clock.h), which no arrow upward shows. Within the jobs
# layer: arrays including the sweeps (2d -> 2b, no cycle: only the
# sub-order finds it), the job table including arrays again and suspend.c
# the sweeps again (the cycles there were).
for t in up cycle sub table sweep; do
  mkdir -p "$TMP/$t/src"
  cp -r src/daemon "$TMP/$t/src/"
done
printf '#include "daemon/jobs.h"\n' >>"$TMP/up/src/daemon/store.c"
printf '#include "daemon/api.h"\n' >>"$TMP/up/src/daemon/users.c"
printf '#include "daemon/store.h"\n' >>"$TMP/cycle/src/daemon/clock.c"
printf '#include "daemon/sweepd.h"\n' >>"$TMP/sub/src/daemon/array.c"
printf '#include "daemon/array.h"\n' >>"$TMP/table/src/daemon/jobs.c"
printf '#include "daemon/sweepd.h"\n' >>"$TMP/sweep/src/daemon/suspend.c"
violations "$TMP/up" >"$TMP/planted"
check "the store including jobs.h is found" \
  grep -q -x -F 'upward: store.c -> jobs.c (4 -> 2e)' "$TMP/planted"
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
violations "$TMP/sub" >"$TMP/planted"
check "arrays including the sweeps is found by the sub-order alone (found: $(tr '\n' ';' <"$TMP/planted"))" \
  test "$(cat "$TMP/planted")" = 'upward: array.c -> sweepd.c (2d -> 2b)'
violations "$TMP/table" >"$TMP/planted"
check "the job table including arrays is found" \
  grep -q -x -F 'upward: jobs.c -> array.c (2e -> 2d)' "$TMP/planted"
check "... and its cycle" \
  grep -q -x -F 'cycle: array.c jobs.c' "$TMP/planted"
check "... with nothing else" test "$(wc -l <"$TMP/planted")" -eq 2
violations "$TMP/sweep" >"$TMP/planted"
check "suspend.c including the sweeps is found, and its cycle (found: $(tr '\n' ';' <"$TMP/planted"))" \
  test "$(tr '\n' ';' <"$TMP/planted")" = 'upward: suspend.c -> sweepd.c (2c -> 2b);cycle: suspend.c sweepd.c;'
finish
