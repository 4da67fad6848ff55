# test_store_owner.sh — state.db has one owner: only the store's files
# (src/daemon/store*.c and .h, behind src/daemon/store.h) use SQLite or
# name its tables in SQL. src/aqp is the query engine's own SQLite
# (its TPC-H data), not state.db.
. "$(dirname "$0")/lib.sh"

owner='^src/daemon/store[a-z_]*\.[ch]$'
others() { grep -v -E "$owner" | grep -v '^src/aqp/' || true; }

# Files that use SQLite's API or header.
grep -rlE 'sqlite3' --include='*.c' --include='*.h' src include | sort |
  others >"$TMP/sqlite"
check "no C file but the store's uses SQLite (found: $(tr '\n' ' ' <"$TMP/sqlite"))" \
  test ! -s "$TMP/sqlite"

# Files that name a table of state.db in SQL: the tables are those
# docs/state-db.md describes.
tables=$(sed -n 's/^## `\([a-z_]*\)`$/\1/p' docs/state-db.md | paste -sd'|')
check "docs/state-db.md names the tables" test -n "$tables"
grep -rlE "(FROM|INTO|UPDATE|TABLE|JOIN) +($tables)\b" --include='*.c' \
  --include='*.h' src include | sort | others >"$TMP/sql"
check "no C file but the store's has SQL on state.db's tables (found: $(tr '\n' ' ' <"$TMP/sql"))" \
  test ! -s "$TMP/sql"
finish
