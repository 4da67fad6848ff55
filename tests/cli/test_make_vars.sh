# test_make_vars.sh — the Makefile passes its variables on: make demo
# HTTP=ADDR:PORT gives the demo that address (make demo-one POLICY= too);
# make install honours PREFIX.
# The test runner answers --help and refuses what is not a build directory.
. "$(dirname "$0")/lib.sh"

make -n --no-print-directory BUILD="$SLAQ_BUILD" demo HTTP=127.0.0.1:7444 \
  >"$TMP/demo" 2>&1
check_grep "make demo HTTP=... runs demo-pair.sh --http 127.0.0.1:7444" \
  "scripts/demo-pair\.sh --http 127\.0\.0\.1:7444 $SLAQ_BUILD" "$TMP/demo"
make -n --no-print-directory BUILD="$SLAQ_BUILD" demo >"$TMP/demo0" 2>&1
check_grep "make demo without HTTP uses the script's default" \
  "scripts/demo-pair\.sh +$SLAQ_BUILD\$" "$TMP/demo0"
make -n --no-print-directory BUILD="$SLAQ_BUILD" demo-one POLICY=fair \
  HTTP=127.0.0.1:7445 >"$TMP/demo1" 2>&1
check_grep "make demo-one POLICY=fair HTTP=... runs demo.sh with both" \
  "scripts/demo\.sh --policy fair --http 127\.0\.0\.1:7445 $SLAQ_BUILD" "$TMP/demo1"
make -n --no-print-directory BUILD="$SLAQ_BUILD" demo-queues TASKS=20 JOBS=1 \
  SCALE=0.1 BOUND=2 >"$TMP/dq" 2>&1
check_grep "make demo-queues TASKS= JOBS= SCALE= BOUND= reach the script" \
  "scripts/demo-queues\.py --tasks 20 --jobs 1 --scale 0\.1 --bound 2" "$TMP/dq"
make -n --no-print-directory BUILD="$SLAQ_BUILD" PREFIX=/opt/slaq DESTDIR=/x \
  install >"$TMP/inst" 2>&1
check_grep "make install PREFIX=/opt/slaq installs into DESTDIR/opt/slaq/bin" \
  "/x/opt/slaq/bin" "$TMP/inst"
scripts/run-tests.sh --help >"$TMP/rt" 2>&1
check "run-tests.sh --help exits 0" test $? -eq 0
check_grep "run-tests.sh --help prints its usage" "^Usage: scripts/run-tests.sh" "$TMP/rt"
check "run-tests.sh --help runs no suite" \
  bash -c "! grep -q 'suites,' '$TMP/rt'"
scripts/run-tests.sh "$TMP/no-such-build" >"$TMP/rt2" 2>&1
check "run-tests.sh on a missing build directory exits 2" test $? -eq 2
check_grep "and says it is not a build directory" "not a build directory" "$TMP/rt2"
finish
