#!/usr/bin/env bash
# test_prior.sh — slaq prior: the built-in class priors are what the
# tuning curves teach (src/core/prior.c's table is learned, not chosen),
# another curve file teaches another prior, and bad input is refused.
. "$(dirname "$0")/lib.sh"

check_exit "prior --help" 0 "$SLAQ" prior --help
check_grep "prior --help names --curves" "--curves FILE" "$TMP/out"
check_exit "prior prints the built-in priors" 0 "$SLAQ" prior
cp "$TMP/out" "$TMP/builtin"
check_grep "a row per class" "^nonconvex " "$TMP/builtin"
check_exit "prior learns from the tuning curves" 0 \
  "$SLAQ" prior --curves tests/data/curves-dev.jsonl
check "the built-in priors are the tuning curves' (run slaq prior --curves \
tests/data/curves-dev.jsonl and copy its table into src/core/prior.c)" \
  cmp -s "$TMP/builtin" "$TMP/out"
check_exit "prior learns from another file" 0 \
  "$SLAQ" prior --curves tests/data/sim-curves.jsonl
check "another file, another prior" bash -c "! cmp -s '$TMP/builtin' '$TMP/out'"

printf '{"name":"a","loss":[1,1,1]}\n' >"$TMP/flat.jsonl"
check_exit "prior: curves that never fall" 2 \
  "$SLAQ" prior --curves "$TMP/flat.jsonl"
check_grep "prior: says there is nothing to learn" "nothing to learn" \
  "$TMP/err"
printf '{"name":"a","loss":[1,0.5]}\n{"name":"b","loss":[1,"x"]}\n' \
  >"$TMP/bad.jsonl"
check_exit "prior: a malformed curve file" 2 \
  "$SLAQ" prior --curves "$TMP/bad.jsonl"
check_grep "prior: names the line and the field" "bad.jsonl:2: .*loss" \
  "$TMP/err"
check_exit "prior: a missing file" 2 "$SLAQ" prior --curves "$TMP/none"
check_exit "prior: an unknown option" 2 "$SLAQ" prior --nope
finish
