# test_docs.sh — the documentation cites files the repository has: the
# metric definitions live in docs/metrics.md, and what the docs and the
# simulator's report cite is that file.
. "$(dirname "$0")/lib.sh"

check "docs/metrics.md exists" test -s docs/metrics.md
for h in "Normalised loss" "Average normalised loss" "Time to X%" \
         "Share of cores by loss group" "Prediction error"; do
  check_grep "docs/metrics.md defines '$h'" "^## $h\$" docs/metrics.md
done
grep -rln "DESIGN\.md" docs README.md examples python/README.md \
  scripts src/sim/report.c >"$TMP/cites" 2>/dev/null
check "no document cites a DESIGN.md the repository lacks" \
  test ! -s "$TMP/cites"
sed 's/^/#   /' "$TMP/cites"
# Every relative markdown link in docs/ points at a file that exists.
bad=0
for f in docs/*.md README.md; do
  for link in $(grep -oE '\]\([^)#: ]+(#[^)]*)?\)' "$f" | sed -E 's/^\]\(//; s/\)$//; s/#.*//'); do
    [[ -e "$(dirname "$f")/$link" ]] || { echo "#   $f: $link"; bad=1; }
  done
done
check "relative links in docs/ resolve" test $bad -eq 0

# The simulator's report names docs/metrics.md.
"$SLAQ" workload gen --curves tests/data/sim-curves.jsonl --jobs 4 \
  --mean-interarrival 3 --work 100:200 --iters 10 --seed 1 >"$TMP/wl.jsonl"
"$SLAQ" sim --workload "$TMP/wl.jsonl" --cores 8 --out "$TMP/rep" --quiet \
  >/dev/null 2>&1
check_grep "report.html cites docs/metrics.md" "docs/metrics.md" \
  "$TMP/rep/report.html"
finish
