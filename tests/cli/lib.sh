# lib.sh — helpers for slaq's command-line tests (sourced, not run).
#
# Each check prints one TAP-style line, "ok N - what" or "not ok N - what",
# which scripts/run-tests.sh counts. A script ends with `finish`, whose exit
# status is non-zero if any check failed.

SLAQ_BUILD=${SLAQ_BUILD:-build}
SLAQ="$SLAQ_BUILD/bin/slaq"
_n=0
_fail=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok()     { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() { _n=$((_n + 1)); _fail=$((_fail + 1)); echo "not ok $_n - $1"; }

# check DESC CMD...: passes when CMD exits 0.
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }

# check_exit DESC STATUS CMD...: passes when CMD exits with STATUS.
check_exit() {
  local d=$1 want=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"; local got=$?
  if [[ $got -eq $want ]]; then ok "$d"; else
    not_ok "$d (exit $got, wanted $want)"; sed 's/^/#   /' "$TMP/err" | head -n 5
  fi
}

# check_grep DESC PATTERN FILE: passes when FILE has a line matching PATTERN.
check_grep() {
  if grep -qE -- "$2" "$3"; then ok "$1"; else
    not_ok "$1 (no '$2' in $3)"; sed 's/^/#   /' "$3" | head -n 5
  fi
}

finish() { echo "# $_n checks, $_fail failed"; [[ $_fail -eq 0 ]]; }
