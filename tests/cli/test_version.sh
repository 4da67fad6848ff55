# test_version.sh — every program answers --version with its name and the
# version in include/slaq/version.h, and exits 0.
. "$(dirname "$0")/lib.sh"

want=$(sed -n 's/^#define SLAQ_VERSION "\(.*\)"$/\1/p' include/slaq/version.h)
check "version.h defines a version" test -n "$want"
for prog in slaq slaqd slaq-train; do
  check_exit "$prog --version exits 0" 0 "$SLAQ_BUILD/bin/$prog" --version
  check_grep "$prog --version prints '$prog $want'" "^$prog $want\$" "$TMP/out"
done
check_exit "slaq-toy-job --version exits 0" 0 "$SLAQ_BUILD/bin/slaq-toy-job" --version
check_grep "slaq-toy-job --version prints 'slaq-toy-job $want'" \
  "^slaq-toy-job $want\$" "$TMP/out"
check_exit "slaq-toy-job --help exits 0" 0 "$SLAQ_BUILD/bin/slaq-toy-job" --help
check_grep "slaq-toy-job --help lists its options" "--crash-at" "$TMP/out"
check_exit "slaq -V" 0 "$SLAQ" -V
check_grep "slaq -V prints the version" "^slaq $want\$" "$TMP/out"
check_exit "slaqd -V" 0 "$SLAQ_BUILD/bin/slaqd" -V
check_grep "slaq --help mentions --version" "--version" \
  <("$SLAQ" --help; true)
check_grep "python/pyproject.toml has version $want" "^version = \"$want\"\$" \
  python/pyproject.toml
check_grep "the Python module's __version__ is $want" \
  "^__version__ = \"$want\"\$" python/slaq/__init__.py
finish
