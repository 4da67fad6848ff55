# test_state_db_doc.sh — test_store's check that docs/state-db.md lists
# state.db's schema (the table `schema` in src/daemon/store.c) catches a
# wrong doc: one missing a column, one with a column the schema lacks and
# one giving a column the wrong type each fail, naming the column; the
# doc as it is passes.
. "$(dirname "$0")/lib.sh"

T="$SLAQ_BUILD/tests/test_store"
doc=docs/state-db.md
check "test_store is built" test -x "$T"
check_exit "docs/state-db.md as it is passes" 0 "$T" "$doc"

# said DESC SECTION LINE: the last failure lists LINE under SECTION
# ("lacks": columns the doc lacks; "only": columns only the doc has).
said() {
  sed -n "/^Columns the doc lacks:/,/^The doc:/p" "$TMP/err" |
    sed -n "/^Columns $([[ $2 == lacks ]] && echo 'the doc lacks' ||
                        echo 'only the doc has'):/,/^[A-Z(]/p" >"$TMP/said"
  check_grep "$1" "^  $3\$" "$TMP/said"
}

# A column of jobs (env) removed from the doc.
grep -v '^| `env` | TEXT | the environment it was submitted with' "$doc" \
  >"$TMP/missing.md"
check "the doc without jobs.env differs from it" \
  test "$(wc -l <"$TMP/missing.md")" -eq $(($(wc -l <"$doc") - 1))
check_exit "a doc missing a column fails" 1 "$T" "$TMP/missing.md"
said "the failure names the missing column" lacks "jobs\.env TEXT"

# A column the schema does not have, added to reports.
sed '/^| `wall_s` | REAL |/a | `gpu_s` | REAL | the GPU seconds |' "$doc" \
  >"$TMP/extra.md"
check_exit "a doc with a column too many fails" 1 "$T" "$TMP/extra.md"
said "the failure names the extra column" only "reports\.gpu_s REAL"

# jobs.pid said to be TEXT.
sed 's/^| `pid` | INTEGER |/| `pid` | TEXT |/' "$doc" >"$TMP/type.md"
check_exit "a doc with a column's type wrong fails" 1 "$T" "$TMP/type.md"
said "the failure names the column as the doc types it" only \
  "jobs\.pid TEXT"
said "... and as the schema does" lacks "jobs\.pid INTEGER"
finish
