#!/usr/bin/env bash
# run-tests.sh — run every slaq test suite and print one summary line.
#
# Usage: scripts/run-tests.sh [--unit-only] BUILD_DIR
#
# Suites: the cmocka unit-test programs under BUILD_DIR/tests/ and, unless
# --unit-only, the command-line tests tests/cli/*.sh (TAP-style "ok"/"not ok"
# lines, see tests/cli/lib.sh), the bounded fuzzing run tests/fuzz/*.sh and
# any other end-to-end suites. Each suite's
# own output is shown; then each suite's wall time, one line per suite,
# slowest first; the last line is the runner's total, so a failing run is
# obvious from its tail.
set -uo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }
unit_only=0
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --unit-only) unit_only=1; shift ;;
  -*) echo "run-tests.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac
build=${1:-build}
if [[ ! -d "$build/tests" ]]; then
  echo "run-tests.sh: '$build' is not a build directory (no $build/tests; run make first)" >&2
  exit 2
fi

total=0 passed=0 failed=0 skipped=0 suites=0
failed_suites=()
times=()  # "MILLISECONDS<tab>SUITE", one per suite run

# The wall clock in nanoseconds (an integer: no locale's decimal comma).
clock_ns() { date +%s%N; }
suite_start() { t0=$(clock_ns); }
suite_done() {  # $1 = the suite's name, as its "== " line gives it
  times+=("$(( ($(clock_ns) - t0) / 1000000 ))	$1")
}

count_cmocka() {  # $1 = output file; adds to totals from cmocka's summary
  local run pass
  run=$(grep -oE '\[==========\] [0-9]+ test\(s\) run' "$1" | grep -oE '[0-9]+' | tail -n1)
  pass=$(grep -oE '\[  PASSED  \] [0-9]+ test\(s\)' "$1" | grep -oE '[0-9]+' | tail -n1)
  run=${run:-0} pass=${pass:-0}
  total=$((total + run)); passed=$((passed + pass)); failed=$((failed + run - pass))
}

count_pytest() {  # $1 = output file; pytest's "N passed, M failed, K skipped" line
  local line p f e s
  line=$(grep -E '[0-9]+ (passed|failed|error|skipped).* in [0-9.]+s' "$1" | tail -n1)
  p=$(grep -oE '[0-9]+ passed' <<<"$line" | cut -d' ' -f1)
  f=$(grep -oE '[0-9]+ failed' <<<"$line" | cut -d' ' -f1)
  e=$(grep -oE '[0-9]+ errors?' <<<"$line" | cut -d' ' -f1)
  s=$(grep -oE '[0-9]+ skipped' <<<"$line" | cut -d' ' -f1)
  p=${p:-0} f=$(( ${f:-0} + ${e:-0} )) s=${s:-0}
  total=$((total + p + f + s)); passed=$((passed + p)); failed=$((failed + f))
  skipped=$((skipped + s))
}

count_tap() {  # "ok ... # SKIP why" lines count as skipped, not passed
  local ok nok skip
  ok=$(grep -c '^ok ' "$1" || true)
  nok=$(grep -c '^not ok ' "$1" || true)
  skip=$(grep -cE '^ok .*# SKIP' "$1" || true)
  total=$((total + ok + nok)); passed=$((passed + ok - skip)); failed=$((failed + nok))
  skipped=$((skipped + skip))
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT

for t in $(find "$build/tests" -type f -name 'test_*' -perm -u+x 2>/dev/null | sort); do
  suites=$((suites + 1))
  echo "== $t"
  suite_start
  "$t" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  suite_done "$t"
  count_cmocka "$out"
  if [[ $rc -ne 0 ]]; then
    failed_suites+=("$t")
    # a crash prints no summary: count the suite itself as a failure
    grep -qE '\[  FAILED  \]' "$out" || { total=$((total + 1)); failed=$((failed + 1)); }
  fi
done

if [[ $unit_only -eq 0 ]]; then
  for t in $(ls tests/cli/test_*.sh tests/train/test_*.sh tests/fuzz/test_*.sh 2>/dev/null | sort); do
    suites=$((suites + 1))
    echo "== $t"
    suite_start
    SLAQ_BUILD="$build" bash "$t" 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    suite_done "$t"
    count_tap "$out"
    [[ $rc -eq 0 ]] || failed_suites+=("$t")
  done
  # End-to-end suites in Python (tests/e2e): real slaqd, real processes;
  # tests/security: the same, each test an attack by an ordinary user;
  # tests/python: the Python API and training-loop helpers under slaqd.
  for dir in tests/e2e tests/security tests/python; do
    ls $dir/test_*.py >/dev/null 2>&1 || continue
    py=python3
    $py -c 'import pytest' 2>/dev/null || py=/usr/bin/python3
    suites=$((suites + 1))
    echo "== $dir (pytest)"
    suite_start
    SLAQ_BUILD="$build" $py -m pytest -q -rs -p no:cacheprovider $dir 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    suite_done "$dir (pytest)"
    count_pytest "$out"
    [[ $rc -eq 0 ]] || failed_suites+=("$dir")
  done
  # The dashboard in headless Chromium (tests/browser, TAP from node; it
  # skips itself only when Chromium cannot run). `make deps` installs it.
  for t in $(ls tests/browser/test_*.mjs 2>/dev/null | sort); do
    suites=$((suites + 1))
    echo "== $t"
    suite_start
    if [[ -d tests/browser/node_modules ]] && command -v node >/dev/null; then
      SLAQ_BUILD="$build" node "$t" 2>&1 | tee "$out"
      rc=${PIPESTATUS[0]}
    else
      echo "not ok 1 - tests/browser needs node and tests/browser/node_modules (run make deps)" | tee "$out"
      rc=1
    fi
    suite_done "$t"
    count_tap "$out"
    [[ $rc -eq 0 ]] || failed_suites+=("$t")
  done
fi

echo
if [[ ${#times[@]} -gt 0 ]]; then
  echo "wall time per suite, slowest first:"
  printf '%s\n' "${times[@]}" | sort -t $'\t' -k1,1nr |
    while IFS=$'\t' read -r ms name; do
      printf '%8d.%02d s  %s\n' $((ms / 1000)) $((ms % 1000 / 10)) "$name"
    done
fi
skipped_note=""
[[ $skipped -eq 0 ]] || skipped_note=", $skipped skipped"
if [[ ${#failed_suites[@]} -eq 0 && $failed -eq 0 && $suites -gt 0 ]]; then
  echo "[==========] slaq: $suites suites, $total tests, $passed passed, 0 failed${skipped_note}"
  exit 0
fi
echo "failing suites: ${failed_suites[*]:-none}"
echo "[==========] slaq: $suites suites, $total tests, $passed passed, $failed failed${skipped_note}"
exit 1
