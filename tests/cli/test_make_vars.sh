# test_make_vars.sh — the Makefile passes its variables on: make demo
# HTTP=ADDR:PORT gives the demo that address; make install honours PREFIX.
. "$(dirname "$0")/lib.sh"

make -n --no-print-directory BUILD="$SLAQ_BUILD" demo HTTP=127.0.0.1:7444 \
  >"$TMP/demo" 2>&1
check_grep "make demo HTTP=... runs demo.sh --http 127.0.0.1:7444" \
  "scripts/demo\.sh --http 127\.0\.0\.1:7444 $SLAQ_BUILD" "$TMP/demo"
make -n --no-print-directory BUILD="$SLAQ_BUILD" demo >"$TMP/demo0" 2>&1
check_grep "make demo without HTTP uses the script's default" \
  "scripts/demo\.sh +$SLAQ_BUILD\$" "$TMP/demo0"
make -n --no-print-directory BUILD="$SLAQ_BUILD" PREFIX=/opt/slaq DESTDIR=/x \
  install >"$TMP/inst" 2>&1
check_grep "make install PREFIX=/opt/slaq installs into DESTDIR/opt/slaq/bin" \
  "/x/opt/slaq/bin" "$TMP/inst"
finish
