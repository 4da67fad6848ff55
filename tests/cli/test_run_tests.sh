# test_run_tests.sh — scripts/run-tests.sh on a build directory of stand-in
# suites: each suite's wall time is printed, one line per suite, slowest
# first, before the summary line, which keeps its format (CI reads it).
. "$(dirname "$0")/lib.sh"

B="$TMP/build"
mkdir -p "$B/tests"
suite() {  # suite NAME SECONDS PASSED RUN: a cmocka-like program
  cat >"$B/tests/$1" <<SH
#!/bin/sh
sleep $2
echo "[==========] $4 test(s) run."
echo "[  PASSED  ] $3 test(s)."
[ $3 -eq $4 ] || { echo "[  FAILED  ] $(($4 - $3)) test(s)"; exit 1; }
SH
  chmod +x "$B/tests/$1"
}
suite test_quick 0 2 2
suite test_slow 0.6 3 3

scripts/run-tests.sh --unit-only "$B" >"$TMP/out" 2>&1
check "run-tests.sh passes two passing suites" test $? -eq 0
check "the last line is the summary, as before" \
  test "$(tail -n 1 "$TMP/out")" = "[==========] slaq: 2 suites, 5 tests, 5 passed, 0 failed"
check_grep "a header names the times" "^wall time per suite, slowest first:$" "$TMP/out"
check "one time line per suite" \
  test "$(grep -cE '^ +[0-9]+\.[0-9]{2} s  ' "$TMP/out")" -eq 2
check "the slow suite first, with its time (0.6 s of sleep)" python3 - "$TMP/out" "$B" <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]).read().splitlines()
         if re.match(r"^ +[0-9]+\.[0-9]{2} s  ", l)]
slow, quick = (float(l.split()[0]) for l in lines)
assert lines[0].endswith("  %s/tests/test_slow" % sys.argv[2]), lines
assert lines[1].endswith("  %s/tests/test_quick" % sys.argv[2]), lines
assert 0.55 <= slow < 10 and 0 <= quick < slow, (slow, quick)
PY

suite test_quick 0 1 2
scripts/run-tests.sh --unit-only "$B" >"$TMP/out" 2>&1
check "a failing suite fails the run" test $? -eq 1
check "... and still gets its time line" \
  test "$(grep -cE '^ +[0-9]+\.[0-9]{2} s  ' "$TMP/out")" -eq 2
check "... with the summary last" \
  test "$(tail -n 1 "$TMP/out")" = "[==========] slaq: 2 suites, 5 tests, 4 passed, 1 failed"
finish
