# test_function_length.sh — no function in src/ is over 150 lines (#38).
# A function's length runs from its opening "{" at column 0 to its closing
# "}" at column 0, both counted; its name is the identifier before "(" on
# the last column-0 line above the "{" that has one. The code puts every
# function's braces at column 0, so awk needs no C parser (and no ctags).
. "$(dirname "$0")/lib.sh"

max=150
find src -name '*.c' | sort | xargs awk -v max="$max" '
  FNR == 1 { name = ""; start = 0 }
  /^[A-Za-z_]/ && match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {
    name = substr($0, RSTART, RLENGTH - 1)
  }
  /^\{/ { start = FNR; fn = name }
  /^\}/ && start {
    n++; len = FNR - start + 1
    if (len > max) print FILENAME ": " fn " is " len " lines"
    start = 0
  }
  END { print n > "/dev/stderr" }' >"$TMP/long" 2>"$TMP/count"

check "the scan finds the functions of src/ (found $(cat "$TMP/count"))" \
  test "$(cat "$TMP/count")" -ge 1000
if [ -s "$TMP/long" ]; then
  while read -r line; do not_ok "$line (over $max)"; done <"$TMP/long"
else
  ok "no function in src/ is over $max lines"
fi
finish
