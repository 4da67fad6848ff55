# test_sweep_sim.sh — `slaq sim --sweep` end to end on a small recorded
# sweep (16 mlpc configurations): every policy reports, the same orders
# give the same numbers, bad input names the line, and Optuna's harness
# replays the same orders (its successive halving matches slaq's sh).
. "$(dirname "$0")/lib.sh"

TR=tests/data/sweep-small.jsonl

check_exit "sim --sweep --help" 0 "$SLAQ" sim --sweep "$TR" --help
"$SLAQ" sim --sweep "$TR" --help >"$TMP/help"
check_grep "help names --suspend-cost" "--suspend-cost" "$TMP/help"
check_exit "sim --sweep runs six policies" 0 "$SLAQ" sim --sweep "$TR" \
  --slots 2 --orders 4 --kill-threshold 0.15 --target 0.83 \
  --policy pop,bandit,earlyterm,default,sh,hyperband \
  --orders-out "$TMP/orders.json" --json "$TMP/r1.json"
"$SLAQ" sim --sweep "$TR" --slots 2 --orders 4 --kill-threshold 0.15 \
  --target 0.83 --policy pop,bandit,earlyterm,default,sh,hyperband \
  --json "$TMP/r2.json" >"$TMP/table"
check "same orders, same results" cmp -s "$TMP/r1.json" "$TMP/r2.json"
for p in pop bandit earlyterm default sh hyperband; do
  check_grep "table has $p" "^$p " "$TMP/table"
done
check_grep "help names pop-keep" "pop-keep" "$TMP/help"
check_grep "help names pop-early" "pop-early" "$TMP/help"
"$SLAQ" sim --sweep "$TR" --slots 2 --orders 4 --kill-threshold 0.15 \
  --target 0.83 --policy pop,pop-keep,pop-early --json "$TMP/keep.json" >"$TMP/keep"
check_grep "table has pop-keep" "^pop-keep " "$TMP/keep"
check_grep "table has pop-early" "^pop-early " "$TMP/keep"
check "pop-keep and pop-early reach the target in every order" /usr/bin/python3 -c '
import json, sys
for pol in ("pop-keep", "pop-early"):
    runs = json.load(open(sys.argv[1]))["policies"][pol]
    assert len(runs) == 4 and all(x["time_to_target"] != "inf" for x in runs), (pol, runs)
' "$TMP/keep.json"
# POLICY+oracle: the policy with its curve model replaced by the truth.
"$SLAQ" sim --sweep "$TR" --slots 2 --orders 4 --kill-threshold 0.15 \
  --target 0.83 --policy pop,pop+oracle,earlyterm+oracle --json "$TMP/or.json" \
  --trace "$TMP/or.trace" >"$TMP/or"
check_grep "table has pop+oracle" "^pop\+oracle +4/4 " "$TMP/or"
check "with the oracle, p is 0 or 1, POP kills only what never reaches the target, and no run beats its bound" \
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
reach = {}
for line in open(sys.argv[3]).read().splitlines()[1:]:
    c = json.loads(line)
    reach[c["id"]] = any(m is not None and m >= 0.83 for m in c["metric"])
ev = [json.loads(l) for l in open(sys.argv[2])]
orc = [e for e in ev if e["policy"] == "pop+oracle" and e["ev"] == "epoch"]
assert orc and all(e["p"] in (0, 1) for e in orc if e.get("p") is not None), orc[:3]
kills = [e for e in orc if e["action"] == "kill" and e["metric"] > 0.15]
assert kills and not any(reach[e["id"]] for e in kills), kills
# knowing the future, it trains far fewer epochs than with the model
ep = {p: sum(x["epochs"] for x in r["policies"][p]) for p in ("pop", "pop+oracle")}
assert ep["pop+oracle"] < 0.7 * ep["pop"], ep
for pol in ("pop+oracle", "earlyterm+oracle"):
    for k, x in enumerate(r["policies"][pol]):
        assert x["time_to_target"] != "inf" and x["time_to_target"] >= r["bound"]["orders"][k] - 1e-3
' "$TMP/or.json" "$TMP/or.trace" "$TR"
check_exit "an oracle for a policy without a curve model: usage error" 2 \
  "$SLAQ" sim --sweep "$TR" --orders 1 --policy pop,bandit+oracle
check_grep "which says why, before any policy runs" \
  "^slaq sim: --policy: bandit has no curve model for an oracle to replace" "$TMP/err"
check "and prints no table" test ! -s "$TMP/out"
check_exit "an unknown suffix: usage error" 2 \
  "$SLAQ" sim --sweep "$TR" --orders 1 --policy pop+foo
check_grep "naming the suffix it takes" "expected a policy name, with at most the suffix \+oracle" "$TMP/err"
check_exit "an unknown policy: usage error before the table" 2 \
  "$SLAQ" sim --sweep "$TR" --orders 1 --policy pop,nope
check "and prints no table" test ! -s "$TMP/out"
check "results are JSON; default reaches the target in every order" \
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["policies"]["default"]
assert len(runs) == 4 and all(x["time_to_target"] != "inf" for x in runs), runs
assert all(x["kills"] == 0 and x["suspends"] == 0 for x in runs)
assert sum(x["kills"] for x in r["policies"]["pop"]) > 0
' "$TMP/r1.json"
check "orders file holds 4 permutations of the ids" /usr/bin/python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["orders"]
assert len(o) == 4 and all(sorted(x) == list(range(16)) for x in o)
assert o[0] == list(range(16)) and o[1] != o[0]
' "$TMP/orders.json"

check_exit "trace of one order" 0 "$SLAQ" sim --sweep "$TR" --slots 2 --orders 4 \
  --kill-threshold 0.15 --target 0.83 --policy pop,bandit,default \
  --trace "$TMP/tr.jsonl" --trace-order 1 --json "$TMP/r3.json"
check "the trace agrees with the results: resumes, suspensions, kills, epochs" \
  /usr/bin/python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
r = json.load(open(sys.argv[2]))["policies"]
assert ev and all(e["order"] == 1 for e in ev)
for pol in ("pop", "bandit", "default"):
    mine = [e for e in ev if e["policy"] == pol]
    res = r[pol][1]
    count = lambda f: sum(1 for e in mine if f(e))
    assert count(lambda e: e["ev"] == "resume") == res["resumes"], pol
    assert count(lambda e: e.get("action") == "suspend") == res["suspends"], pol
    assert count(lambda e: e.get("action") == "kill") == res["kills"], pol
    tgt = [e for e in mine if e["ev"] == "target"]
    assert len(tgt) == (res["time_to_target"] != "inf"), pol
    if tgt:
        assert tgt[0]["id"] == res["winner"], pol
        assert abs(tgt[0]["t"] - res["time_to_target"]) < 1e-3, pol
pop = [e for e in ev if e["policy"] == "pop" and e["ev"] == "epoch"]
assert all(e["cls"] in ("promising", "opportunistic", "poor") for e in pop)
assert all(e["cls"] != "promising" or e["p"] >= e["pstar"] for e in pop)
' "$TMP/tr.jsonl" "$TMP/r3.json"
check "sweep-trace-summary.py: where the time to target goes" /usr/bin/python3 \
  scripts/sweep-trace-summary.py "$TR" "$TMP/tr.jsonl" >"$TMP/ts.txt"
check "sweep-trace-summary.py: Default's winner never waits; POP's time is \
its start, its time alone and its waiting" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[2]))["policies"]
rows = {l.split()[0]: l.split() for l in open(sys.argv[1]).read().splitlines()[1:]}
for pol in ("default", "pop", "bandit"):
    if r[pol][1]["time_to_target"] == "inf":
        assert pol not in rows, rows
        continue
    _, n, t, started, alone, waited, susp, share = rows[pol]
    assert n == "1" and abs(float(t) - r[pol][1]["time_to_target"]) < 0.01, rows[pol]
    assert abs(float(started) + float(alone) + float(waited) - float(t)) < 0.03, rows[pol]
    assert float(alone) > 0.5, rows[pol]  # the start-up is counted
d = rows["default"]
assert float(d[5]) == 0 and float(d[6]) == 0, d
' "$TMP/ts.txt" "$TMP/r3.json"
printf '{"sweep":"x","epochs":2}\n{"id":99,"start_s":1,"epoch_s":[1,1],"metric":[0.1,0.2]}\n' >"$TMP/one.jsonl"
check_exit "sweep-trace-summary.py: a trace of another sweep is an error" 1 \
  /usr/bin/python3 scripts/sweep-trace-summary.py "$TMP/one.jsonl" "$TMP/tr.jsonl"
check_grep "and says which configuration is missing" "not in .*one.jsonl" "$TMP/err"
mkdir -p "$TMP/res" && cp "$TMP/r1.json" "$TMP/res/small-sim.json"
check "sweep-targets.py: POP's ratios from the results" /usr/bin/python3 \
  scripts/sweep-targets.py "$TMP/res" --json "$TMP/tg.json" >"$TMP/tg.txt"
check "sweep-targets.py: the median ratio is POP's median over Bandit's" \
  /usr/bin/python3 -c '
import json, math, statistics, sys
r = json.load(open(sys.argv[1]))["policies"]
t = json.load(open(sys.argv[2]))["small"]["targets"]
med = lambda p: statistics.median(math.inf if isinstance(x["time_to_target"], str)
                                  else x["time_to_target"] for x in r[p])
assert len(t) == 3, t  # no Optuna results: three targets
assert "bandit" in t[0]["target"] and abs(t[0]["ratio"] - med("pop") / med("bandit")) < 1e-9
assert t[0]["met"] == (t[0]["ratio"] <= 0.62)
assert abs(t[0]["needs"] - 0.62 * med("bandit")) < 1e-9 and "needs" not in t[2]
' "$TMP/r1.json" "$TMP/tg.json"
check "the bounds: recomputed from the traces; no policy beats the bound of its order" \
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
orders = json.load(open(sys.argv[3]))["orders"]
cfg = {}
for line in open(sys.argv[2]).read().splitlines()[1:]:
    c = json.loads(line)
    t, alone = c.get("start_s", 0), None
    for e, (s, m) in enumerate(zip(c["epoch_s"], c["metric"])):
        t += s
        if m is not None and m >= 0.83:
            alone = (t, e + 1)
            break
    cfg[c["id"]] = (c["start_s"] + c["epoch_s"][0], alone)
best = min((a[0], i, a[1]) for i, (_, a) in cfg.items() if a)
b = r["bound"]
assert abs(b["time_s"] - best[0]) < 2e-3 and (b["id"], b["epoch"]) == best[1:], (b, best)
assert b["time_s"] > 0.5, b  # the start-up is counted
S = r["slots"]
for k, o in enumerate(orders):
    want, first = float("inf"), []
    for j, i in enumerate(o):
        if cfg[i][1]:
            used = sum(sorted(first)[:max(0, j - S + 1)])
            want = min(want, used / S + cfg[i][1][0])
        first.append(cfg[i][0])
    assert abs(b["orders"][k] - want) < 2e-3, (k, b["orders"][k], want)
    assert b["orders"][k] >= b["time_s"] - 1e-3
    for pol, runs in r["policies"].items():
        x = runs[k]["time_to_target"]
        assert x == "inf" or x >= b["orders"][k] - 1e-3, (pol, k, x, b["orders"][k])
assert max(b["orders"]) > b["time_s"] + 1e-3, b  # the order matters
' "$TMP/r1.json" "$TR" "$TMP/orders.json"
check_grep "the table has the bound row" "^bound  *4/4 " "$TMP/table"
check_grep "and says what it bounds" "^bound: in each order, no policy that starts" "$TMP/table"
/usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
r["bound"]["orders"] = [1e6] * len(r["bound"]["orders"])
json.dump(r, open(sys.argv[2], "w"))
' "$TMP/r1.json" "$TMP/res/high-sim.json"
/usr/bin/python3 scripts/sweep-targets.py "$TMP/res" high --json "$TMP/tg2.json" >"$TMP/tg2.txt"
check "sweep-targets.py: a median target below the bound is marked impossible" \
  /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["high"]["targets"]
assert [x.get("possible") for x in t] == [False, False, None], t
' "$TMP/tg2.json"
check_grep "sweep-targets.py says no policy can" "below the bound: no policy can" "$TMP/tg2.txt"
"$SLAQ" sim --sweep "$TR" --slots 1 --orders 2 --target 0.99 --policy default >"$TMP/never"
check_grep "a target never reached: median and spread are inf, not nan" \
  "^default +0/2 +inf +inf +inf +inf +inf " "$TMP/never"
check_exit "trace order out of range" 2 "$SLAQ" sim --sweep "$TR" --orders 4 \
  --trace "$TMP/tr2.jsonl" --trace-order 4

printf '{"sweep":"x","epochs":5}\n{"id":0,"epoch_s":[1,1],"metric":[0.1,"a"]}\n' >"$TMP/bad.jsonl"
check_exit "bad trace: usage error" 2 "$SLAQ" sim --sweep "$TMP/bad.jsonl"
check_grep "bad trace: names line and field" 'bad.jsonl:2: field "metric"' "$TMP/err"
check_exit "bad number" 2 "$SLAQ" sim --sweep "$TR" --slots x
check_grep "bad number names the option" "--slots 'x'" "$TMP/err"

check_exit "calibration runs" 0 "$SLAQ" sim --sweep "$TR" --calib --json "$TMP/cal.json"
check "calibration reports a Brier score in [0, 1]" /usr/bin/python3 -c '
import json, sys
c = json.loads(open(sys.argv[1]).readline())
for k in ("default", "chosen"):
    m = c[k]
    assert 0 <= m["brier"] <= 1 and m["n"] > 0, k
    assert sum(b[2] for b in m["bins"]) == m["n"], k
    assert all(0 <= b[0] <= 1 and 0 <= b[1] <= 1 for b in m["bins"]), k
assert c["default"]["temper"] == 16 and c["default"]["inflate"] == 2
assert c["default"]["stall"] == 1 and 0 <= c["no_stall"]["brier"] <= 1
assert abs(c["brier_base_rate"] - c["base_rate"] * (1 - c["base_rate"])) < 1e-6
assert c["ms_median"] > 0 and c["bounded"] == 1
' "$TMP/cal.json"

check "discrimination: the best-so-far AUC and the near-target counts, recomputed from the traces" \
  /usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
t = c["target"] if "target" in c else None
cfg = []
for line in open(sys.argv[2]).read().splitlines()[1:]:
    m = [x for x in json.loads(line)["metric"] if x is not None]
    cfg.append([max(m[:i + 1]) for i in range(len(m))])
tops = sorted((r[-1] for r in cfg), reverse=True)
target = tops[3]  # --target-top 4, the default
d = c["discrimination"]
assert [x["epoch"] for x in d] == [10, 20, 30, 40], d
def auc(pos, neg):
    return sum((p > q) + 0.5 * (p == q) for p in pos for q in neg) / len(pos) / len(neg)
for x in d:
    n = x["epoch"]
    rows = [(r[n - 1], r[-1] >= target) for r in cfg if len(r) >= n and r[n - 1] < target]
    pos = [v for v, h in rows if h]
    neg = [v for v, h in rows if not h]
    assert x["total"] == len(rows) and x["reach"] == len(pos), (x, len(rows), len(pos))
    ranks = sorted(1 + sum(w > v for w, _ in rows) for v in pos)
    assert x["ranks"] == ranks[:8], (x, ranks)
    if pos and neg:
        assert abs(x["auc_best"] - auc(pos, neg)) < 1e-6, (x, auc(pos, neg))
        assert 0 <= x["auc_model"] <= 1
nt = c["near_target"]
assert nt["reach"] == sum(v >= target for v in tops), nt
assert nt["within_noise"] == sum(target - nt["noise"] <= v < target for v in tops), nt
' "$TMP/cal.json" "$TR"
check_exit "calibration dump runs" 0 "$SLAQ" sim --sweep "$TR" --calib-dump "$TMP/dump.csv"
check "calibration dump: one scored prediction a line, each half's Brier score" /usr/bin/python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(0 <= float(r["p"]) <= 1 and r["outcome"] in "01" for r in rows)
assert {int(r["id"]) % 2 for r in rows} == {0, 1}
assert all(float(r["y_n"]) < float(r["level"]) for r in rows)
out = open(sys.argv[2]).read()
assert "even ids: library default Brier" in out and "odd ids" in out, out
' "$TMP/dump.csv" "$TMP/out"
"$SLAQ" sim --sweep "$TR" --calib-dump "$TMP/d1.csv" >/dev/null
"$SLAQ" sim --sweep "$TR" --calib-dump "$TMP/d2.csv" --no-stall >/dev/null
check "--no-stall changes the predictions" /usr/bin/python3 -c '
import sys
assert open(sys.argv[1]).read() != open(sys.argv[2]).read()
' "$TMP/d1.csv" "$TMP/d2.csv"
check_exit "a stop prior of 1 is refused" 2 "$SLAQ" sim --sweep "$TR" --calib --stop-prior 1
"$SLAQ" sim --sweep "$TR" --slots 2 --orders 8 --kill-threshold 0.15 --target 0.83 \
  --policy pop --trace "$TMP/pool.jsonl" >/dev/null
check "POP's promising pool holds S_promising slots, no more" /usr/bin/python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ev = [e for e in ev if e["policy"] == "pop" and e["ev"] == "epoch" and e.get("s_promising", 0) > 0]
assert len(ev) > 20, len(ev)
for e in ev:
    assert len(e["promising"]) <= max(1, min(2, int(e["s_promising"] + 0.5))), e
' "$TMP/pool.jsonl"
check_exit "a re-evaluation period that is not a number is refused" 2 \
  "$SLAQ" sim --sweep "$TR" --policy pop --reeval soon

if /usr/bin/python3 -c 'import optuna' 2>/dev/null; then
  "$SLAQ" sim --sweep "$TR" --slots 2 --orders 3 --target 0.83 --policy sh,default \
    --orders-out "$TMP/o3.json" --json "$TMP/s3.json" >/dev/null
  check "optuna harness runs on the same orders" /usr/bin/python3 \
    scripts/sweep-optuna.py --sweep "$TR" --orders "$TMP/o3.json" --slots 2 \
    --target 0.83 --pruner sha,none --json "$TMP/opt.json" >"$TMP/opt.txt"
  check "optuna's successive halving and NopPruner match slaq's sh and default" \
    /usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["policies"]
o = json.load(open(sys.argv[2]))["pruners"]
for mine, theirs in (("sh", "sha"), ("default", "none")):
    a = [x["time_to_target"] for x in s[mine]]
    b = [x["time_to_target"] for x in o[theirs]]
    assert all(abs(x - y) < 2e-3 for x, y in zip(a, b)), (mine, a, b)
' "$TMP/s3.json" "$TMP/opt.json"
  check "optuna's pruners with a warm-up of POP's boundary" /usr/bin/python3 \
    scripts/sweep-optuna.py --sweep "$TR" --orders "$TMP/o3.json" --slots 2 \
    --target 0.83 --pruner sha,sha@10,median@10,hyperband@10 --json "$TMP/warm.json" >/dev/null
  check "a warm-up of W epochs: no trial pruned before epoch W; without: some" \
    /usr/bin/python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))["pruners"]
at = {k: [e for r in v for e in r["pruned_at"]] for k, v in o.items()}
assert all(len(at[k]) > 0 for k in at), at
assert min(at["sha"]) < 10, at["sha"]
for k in ("sha@10", "median@10", "hyperband@10"):
    assert min(at[k]) >= 10, (k, at[k])
' "$TMP/warm.json"
  check_exit "a warm-up that is not a whole number of epochs is refused" 1 \
    /usr/bin/python3 scripts/sweep-optuna.py --sweep "$TR" --orders "$TMP/o3.json" \
    --slots 2 --target 0.83 --pruner median@ten
  # HyperbandPruner picks a trial's bracket from a hash of the study's name:
  # the harness names its studies, so two runs agree (with Optuna's random
  # default name they differed from run to run on these traces).
  for k in 1 2 3; do
    /usr/bin/python3 scripts/sweep-optuna.py --sweep "$TR" --orders "$TMP/o3.json" \
      --slots 2 --target 0.83 --pruner hyperband --json "$TMP/hb$k.json" >/dev/null
  done
  check "optuna's hyperband gives the same times in every run" /usr/bin/python3 -c '
import json, sys
runs = [json.load(open(p))["pruners"]["hyperband"] for p in sys.argv[1:]]
assert runs[0] == runs[1] == runs[2], runs
' "$TMP/hb1.json" "$TMP/hb2.json" "$TMP/hb3.json"
fi
finish
