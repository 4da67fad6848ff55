# test_sim_figures.sh — the simulator's Fig. 8 and Fig. 10c are drawn from
# data a reader can use: Fig. 8 (cores by loss group over time) as stacked
# areas of per-bin means (at most 120 points, not one wiggle per epoch),
# Fig. 10c (scheduling time against active jobs) as per-bin medians on a
# log axis (not bin means, which a few slow epochs rule). Each data file
# is recomputed here from the run's own timeline.csv and sched.csv.
. "$(dirname "$0")/lib.sh"

"$SLAQ" workload gen --curves tests/data/curves-dev.jsonl --jobs 30 \
  --mean-interarrival 4 --work 2000:20000 --max-cores 64 --iters 100 \
  --seed 3 >"$TMP/wl.jsonl"
check_exit "sim: fair, slaq and oracle-greedy" 0 "$SLAQ" sim \
  --workload "$TMP/wl.jsonl" --cores 160 --compare fair,slaq,oracle-greedy \
  --out "$TMP/run" --no-plots --quiet
R="$TMP/run"

for p in fair slaq oracle-greedy; do
  check "$p: fig8.csv is the timeline's groups, binned and stacked" \
    python3 - "$R/$p" <<'PY'
import csv, math, sys
d = sys.argv[1]
tl = [list(map(float, r)) for r in list(csv.reader(open(d + "/timeline.csv")))[1:]]
rows = list(csv.reader(open(d + "/fig8.csv")))
assert rows[0] == ["time_s", "high", "high_medium", "all"], rows[0]
got = [list(map(float, r)) for r in rows[1:]]
n = len(tl)
assert n > 120, "workload too short to need bins: %d epochs" % n
k = math.ceil(n / 120)
assert len(got) <= 120, len(got)
want = []
for b in range(0, n, k):
    part = tl[b:b + k]
    m = len(part)
    t = sum(r[0] for r in part) / m
    h = sum(r[3] for r in part) / m
    me = sum(r[4] for r in part) / m
    lo = sum(r[5] for r in part) / m
    want.append([t, h, h + me, h + me + lo])
assert len(got) == len(want), (len(got), len(want))
for g, w in zip(got, want):
    assert all(abs(a - b) <= 1e-3 * max(1, abs(b)) for a, b in zip(g, w)), (g, w)
    assert g[1] <= g[2] + 1e-9 <= g[3] + 2e-9, g
PY
  check "$p: fig10c.csv is the per-bin median and p90 of sched.csv" \
    python3 - "$R/$p" <<'PY'
import csv, math, sys
d = sys.argv[1]
s = [list(map(float, r)) for r in list(csv.reader(open(d + "/sched.csv")))[1:]]
rows = list(csv.reader(open(d + "/fig10c.csv")))
assert rows[0] == ["active_jobs", "median_ms", "p90_ms", "epochs"], rows[0]
maxj = max(r[1] for r in s)
bw = math.ceil(maxj / 50) if maxj > 50 else 1
bins = {}
for r in s:
    bins.setdefault(int(r[1] // bw), []).append(r[2])
got = {int(float(r[0]) // bw): list(map(float, r[1:])) for r in rows[1:]}
assert sorted(got) == sorted(bins), (sorted(got), sorted(bins))
for b, v in bins.items():
    v.sort()
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    p90 = v[math.ceil(0.9 * n) - 1]
    g = got[b]
    assert abs(g[0] - med) < 6e-5 and abs(g[1] - p90) < 6e-5 and g[2] == n, (b, g, med, p90, n)
PY
done

gp="$TMP/run/plots.gp"
sed -n "/fig8-cores-slaq.svg/,/^set output/p" "$gp" >"$TMP/fig8.gp"
sed -n "/fig10c-sched.svg/,/^set output\|^unset logscale/p" "$gp" >"$TMP/fig10c.gp"
check_grep "Fig. 8 plots the binned, stacked data" "'slaq/fig8.csv'" "$TMP/fig8.gp"
check_grep "Fig. 8 is drawn as filled areas" "filledcurves" "$TMP/fig8.gp"
check "Fig. 8 draws no per-epoch lines from timeline.csv" \
  bash -c "! grep -q 'timeline.csv' '$TMP/fig8.gp'"
check_grep "Fig. 10c plots the per-bin medians" "'slaq/fig10c.csv'" "$TMP/fig10c.gp"
check_grep "Fig. 10c has a log time axis" "^set logscale y" "$TMP/fig10c.gp"
check "Fig. 10c averages no bins (no 'smooth unique' on sched.csv)" \
  bash -c "! grep -q 'sched.csv' '$TMP/fig10c.gp'"

if command -v gnuplot >/dev/null; then
  check_exit "the figures render" 0 "$SLAQ" sim --workload "$TMP/wl.jsonl" \
    --cores 160 --compare fair,slaq --out "$TMP/plots" --quiet
  check "Fig. 8 and Fig. 10c SVGs are written" \
    test -s "$TMP/plots/fig8-cores-slaq.svg" -a -s "$TMP/plots/fig10c-sched.svg"
else
  ok "the figures render # SKIP gnuplot not installed"
  ok "Fig. 8 and Fig. 10c SVGs are written # SKIP gnuplot not installed"
fi
finish
