# test_sim_scaling.sh — simulated jobs that scale as real ones do
# (docs/sim.md, "Scaling"): `slaq workload gen --scaling real` gives each
# job a scaling curve from the measured mix, the reader checks the
# fields, and `slaq sim` runs slaq with and without the scaling model
# (slaq-linear) beside fair. A workload without scaling curves runs as it
# always did: the model never sees a job that says nothing of threads.
. "$(dirname "$0")/lib.sh"

GEN=("$SLAQ" workload gen --curves tests/data/sim-curves.jsonl --jobs 40
     --mean-interarrival 3 --work 200:2000 --iters 30 --seed 5 --max-cores 16)

check_exit "workload gen --scaling real" 0 "${GEN[@]}" --scaling real
cp "$TMP/out" "$TMP/real.jsonl"
check "every job has a scaling curve from the three kinds" python3 - \
  "$TMP/real.jsonl" <<'PY'
import json, sys
kinds = set()
for line in open(sys.argv[1]):
    j = json.loads(line)
    s, k = j["sigma"], j["kappa"]
    if 0.3 <= s <= 0.7 and k == 0:
        kinds.add("blas")
    elif 1.5 <= s <= 7 and k == 0:
        kinds.add("spin")
    elif 0 <= s <= 0.1 and 0 <= k <= 0.002:
        kinds.add("pool")
    else:
        raise SystemExit("a curve of no kind: %r" % j)
assert kinds == {"blas", "spin", "pool"}, kinds
PY
check_exit "workload gen without --scaling" 0 "${GEN[@]}"
cp "$TMP/out" "$TMP/plain.jsonl"
check "... writes no scaling curve" test "$(grep -c sigma "$TMP/plain.jsonl")" -eq 0
check "... and the same jobs otherwise" python3 - "$TMP/plain.jsonl" \
  "$TMP/real.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
for x, y in zip(a, b):
    y.pop("sigma"); y.pop("kappa")
    assert x == y, (x, y)
PY
check_exit "workload gen --scaling fast is refused" 2 "${GEN[@]}" --scaling fast
check_grep "... naming the option and the choices" \
  "--scaling: expected linear or real, got 'fast'" "$TMP/err"

head -n 2 "$TMP/real.jsonl" >"$TMP/bad.jsonl"
sed -n 3p "$TMP/real.jsonl" | sed -E 's/"sigma": [0-9.e+-]+/"sigma": -1/' \
  >>"$TMP/bad.jsonl"
check_exit "a negative sigma is refused" 2 "$SLAQ" sim --workload \
  "$TMP/bad.jsonl" --cores 8 --out "$TMP/bad" --no-plots --quiet
check_grep "... naming the line and the field" \
  "bad.jsonl:3: field 'sigma': expected a number >= 0 and <= 1000, got -1" \
  "$TMP/err"

check_exit "slaq sim: fair, slaq and slaq-linear on scaling curves" 0 \
  "$SLAQ" sim --workload "$TMP/real.jsonl" --cores 32 \
  --compare fair,slaq,slaq-linear --out "$TMP/rs" --no-plots --quiet
check_exit "... and on the same jobs without them" 0 \
  "$SLAQ" sim --workload "$TMP/plain.jsonl" --cores 32 \
  --compare fair,slaq,slaq-linear --out "$TMP/ps" --no-plots --quiet
check "the model changes slaq's schedule only where jobs say how they scale" \
  python3 - "$TMP/rs/summary.json" "$TMP/ps/summary.json" <<'PY'
import json, sys
real = {r["policy"]: r for r in json.load(open(sys.argv[1]))}
plain = {r["policy"]: r for r in json.load(open(sys.argv[2]))}
assert set(real) == {"fair", "slaq", "slaq-linear"}, set(real)
keys = ("t90_mean_s", "jct_mean_s", "avg_norm_loss", "makespan_s")
assert any(real["slaq"][k] != real["slaq-linear"][k] for k in keys), real
assert all(plain["slaq"][k] == plain["slaq-linear"][k] for k in keys), plain
PY
finish
