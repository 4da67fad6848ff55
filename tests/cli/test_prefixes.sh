# test_prefixes.sh — one prefix per module: every function a header of
# slaqd declares begins with a prefix that header's row in daemon.h's
# table lists (src/daemon/daemon.h, docs/glossary.md "Prefixes").
. "$(dirname "$0")/lib.sh"

table=src/daemon/daemon.h
# Rows: " *   file.c   header.h   what ...   prefix_[, prefix_]"
sed -n 's/^ \*   [a-z_*]*\.c  *\([a-z_]*\.h\)  .*  \([a-z_]*_\(, [a-z_]*_\)*\)$/\1 \2/p' \
  "$table" >"$TMP/rows"
check "daemon.h's table lists at least 15 modules" \
  test "$(wc -l <"$TMP/rows")" -ge 15

: >"$TMP/bad"
while read -r header prefixes; do
  hdr=src/daemon/$header
  [ -f "$hdr" ] || { echo "$header: in the table, not in src/daemon" >>"$TMP/bad"; continue; }
  pat=$(echo "$prefixes" | sed 's/, */|/g')
  # A declaration: a line that starts with a type and holds name( and
  # ends a prototype; macros, typedefs and comments are not.
  grep -E '^[a-z][a-z0-9_ *]*[ *]([a-z][a-z0-9_]*)\(' "$hdr" |
    grep -v -E '^(typedef|static|struct [a-z_]+ \{)' |
    sed -E 's/^[a-z][a-z0-9_ *]*[ *]([a-z][a-z0-9_]*)\(.*/\1/' |
    grep -v -E "^($pat)" | sed "s|^|$header: |" >>"$TMP/bad" || true
done <"$TMP/rows"
check "every function a daemon header declares has its module's prefix (found: $(tr '\n' ' ' <"$TMP/bad"))" \
  test ! -s "$TMP/bad"

# Every header of the daemon is in the table (a new module adds its row).
ls src/daemon/*.h | xargs -n1 basename | sort >"$TMP/headers"
cut -d' ' -f1 "$TMP/rows" | sort -u >"$TMP/listed"
comm -23 "$TMP/headers" "$TMP/listed" |
  grep -v -E '^(daemon|store_sql|session)\.h$' >"$TMP/unlisted" || true
check "every daemon header has a row in daemon.h's table (missing: $(tr '\n' ' ' <"$TMP/unlisted"))" \
  test ! -s "$TMP/unlisted"
finish
