# test_settings.sh — every front end of the core (slaqd and its
# configuration file, slaq sim, slaq sim --aqp, slaq replay) takes every
# scheduler setting of the core's table (slaq/settings.h), under the same
# name, and refuses a value out of range with the same message (as do
# slaq bench sched and slaq bench cluster).
. "$(dirname "$0")/lib.sh"
SLAQD="$SLAQ_BUILD/bin/slaqd"

# The table's settings as slaq replay --help lists them, one per line:
# NAME, a tab, its help (where the help says what it takes).
"$SLAQ" replay --help | sed -n '/^Scheduler settings/,/^$/p' | awk '
  /^  --/ { if (name) print name "\t" text; name = substr($1, 3); text = "" }
  { text = text " " $0 }
  END { if (name) print name "\t" text }' | tr -s ' ' >"$TMP/rows"
cut -f1 "$TMP/rows" >"$TMP/names"
check "the help lists the table's settings" test "$(wc -l <"$TMP/names")" -ge 16

# A value each setting takes, from what its help says it takes: the last
# of an enum's values, the middle of a range, 3 for a positive number, the
# first word of a syntax of its own ("Takes auto, a whole number ...").
declare -A val=()
while IFS=$'\t' read -r n t; do
  if [[ $t =~ One\ of\ ([^\;]*)\; ]]; then
    val[$n]=${BASH_REMATCH[1]##* }
  elif [[ $t =~ Takes\ a\ (whole\ )?number\ from\ ([0-9.]+)\ to\ ([0-9.]+) ]]; then
    val[$n]=$(awk -v a="${BASH_REMATCH[2]}" -v b="${BASH_REMATCH[3]}" \
      -v w="${BASH_REMATCH[1]}" 'BEGIN { m = (a + b) / 2; print w ? int(m) : m }')
  elif [[ $t =~ Takes\ a\ positive\ number ]]; then
    val[$n]=3
  elif [[ $t =~ Takes\ ([a-z]+),\  ]]; then
    val[$n]=${BASH_REMATCH[1]}  # a value of its own syntax: the first named
  fi
done <"$TMP/rows"
# The epoch's middle (half an hour) would make the runs below decide
# nothing: 3 s, inside its range, as the others' positive numbers.
[[ -n ${val[epoch]:-} ]] && val[epoch]=3
missing=$(while read -r n; do [[ -n ${val[$n]:-} ]] || echo "$n"; done <"$TMP/names")
check "every setting's help says what it takes ($missing)" test -z "$missing"
for fe in "$SLAQD --help" "$SLAQ sim --help" "$SLAQ sim --aqp x --help"; do
  $fe | sed -n '/^Scheduler settings/,/^$/p' | sed -n 's/^  --\([a-z-]*\) .*/\1/p' \
    >"$TMP/fe"
  [[ $fe == "$SLAQ sim --help" ]] && echo policy >>"$TMP/fe" # its own --policy
  check "${fe%% --help}: --help lists every setting" \
    cmp -s <(sort "$TMP/names") <(sort "$TMP/fe")
done

args=()
conf=()
while read -r n; do
  args+=("--$n" "${val[$n]}")
  [[ $n == epoch ]] || conf+=("$n = ${val[$n]}")
done <"$TMP/names"

# slaq sim, every setting at once (--policy is the run: the same names).
"$SLAQ" workload gen --curves tests/data/sim-curves.jsonl --jobs 4 \
  --mean-interarrival 3 --work 100:200 --iters 10 --seed 1 >"$TMP/wl.jsonl"
check_exit "slaq sim takes every setting" 0 "$SLAQ" sim --workload \
  "$TMP/wl.jsonl" "${args[@]}" --out "$TMP/sim" --quiet --no-plots
check_grep "... and runs with them" \
  "\"cores\": 3, \"epoch_s\": 3, \"unit\": 3, \"default_iter_cpu_s\": 3," \
  "$TMP/sim/summary.json"
check_grep "... the policy too" "\"core_policy\": \"${val[policy]}\"" \
  "$TMP/sim/summary.json"

# slaq sim --aqp
check_exit "slaq sim --aqp takes every setting" 0 "$SLAQ" sim --aqp \
  tests/data/aqp-traces.jsonl --seeds 1 --queries 3 "${args[@]}"
check_grep "... and runs with them" \
  "3 cores, epoch 3 s, cpu scale 70000, min cores ${val[query-min-cores]}\$" \
  "$TMP/out"
check_grep "... --policy P runs P alone" "^${val[policy]} " "$TMP/out"
check_exit "... its old names still work" 0 "$SLAQ" sim --aqp \
  tests/data/aqp-traces.jsonl --seeds 1 --queries 3 --min-cores 0.75 \
  --window 6 --horizon-batches 2
check_grep "... --min-cores is --query-min-cores" "min cores 0.75" "$TMP/out"

# slaq replay: the settings are taken; then the missing state.db stops it.
mkdir -p "$TMP/empty"
check_exit "slaq replay takes every setting" 2 "$SLAQ" replay --state-dir \
  "$TMP/empty" "${args[@]}"
check_grep "... (stopped by the missing state.db, not an option)" \
  "empty/state.db" "$TMP/err"

# slaqd: flags and file; an --epoch out of its row's range, given last,
# shows that every setting before it was taken.
check_exit "slaqd takes every setting as a flag" 2 "$SLAQD" --state-dir \
  "$TMP/sd" --http off "${args[@]}" --epoch 0.001
check_grep "... (stopped by the epoch's range, from its row)" \
  "^slaqd: --epoch: expected a number from 0.01 to 3600, got '0.001'" "$TMP/err"
printf '%s\n' "${conf[@]}" "epoch = 4000" >"$TMP/all.conf"
check_exit "slaqd takes every setting in its file" 2 "$SLAQD" --config \
  "$TMP/all.conf" --state-dir "$TMP/sd" --http off
check_grep "... (stopped by the epoch's range, from its row)" \
  "epoch.*expected a number from 0.01 to 3600, got '4000'" "$TMP/err"

# One message for one bad value, whichever front end reads it.
bad() { # bad OPTION VALUE MESSAGE
  local o=$1 v=$2 m=$3
  check_exit "slaqd --$o $v: refused" 2 "$SLAQD" --state-dir "$TMP/sd" \
    --http off "--$o" "$v"
  check_grep "... slaqd: --$m" "^slaqd: --$m\$" "$TMP/err"
  printf '%s = %s\n' "$o" "$v" >"$TMP/bad.conf"
  check_exit "slaqd's file $o = $v: refused" 2 "$SLAQD" --config \
    "$TMP/bad.conf" --state-dir "$TMP/sd" --http off
  check_grep "... FILE:1: $m" "^slaqd: $TMP/bad.conf:1: $m\$" "$TMP/err"
  check_exit "slaq sim --$o $v: refused" 2 "$SLAQ" sim --workload \
    "$TMP/wl.jsonl" --cores 4 "--$o" "$v" --out "$TMP/x"
  check_grep "... slaq sim: --$m" "^slaq sim: --$m\$" "$TMP/err"
  check_exit "slaq sim --aqp --$o $v: refused" 2 "$SLAQ" sim --aqp \
    tests/data/aqp-traces.jsonl "--$o" "$v"
  check_grep "... slaq sim --aqp: --$m" "^slaq sim --aqp: --$m\$" "$TMP/err"
  check_exit "slaq replay --$o $v: refused" 2 "$SLAQ" replay --state-dir \
    "$TMP/empty" --cores 2 "--$o" "$v"
  check_grep "... slaq replay: --$m" "^slaq replay: --$m\$" "$TMP/err"
  check_exit "slaq bench sched --$o $v: refused" 2 "$SLAQ" bench sched \
    "--$o" "$v"
  check_grep "... slaq bench: --$m" "^slaq bench: --$m\$" "$TMP/err"
  check_exit "slaq bench cluster --$o $v: refused" 2 "$SLAQ" bench cluster \
    --workload "$TMP/wl.jsonl" --nodes 2 --cores-per-node 2 "--$o" "$v"
  check_grep "... slaq bench cluster: --$m" "^slaq bench: --$m\$" "$TMP/err"
}
bad hysteresis 2000 "hysteresis: expected a number from 0 to 1000, got '2000'"
bad horizon-iters 1e6 "horizon-iters: expected a number from 0 to 1000, got '1e6'"
bad damping 1 "damping: expected a number from 0 to 1 \(1 excluded\), got '1'"
bad max-fits 2.5 "max-fits: expected a whole number from 0 to 1000000000, got '2.5'"
bad predictor oracle "predictor: unknown predictor 'oracle' \(expected auto, slaq-fit or strawman\)"
bad query-min-cores -1 "query-min-cores: expected a number from 0 to 1000000, got '-1'"
finish
