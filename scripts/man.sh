#!/usr/bin/env bash
# man.sh — the manual pages, generated from the programs' own --help.
#
# Usage: scripts/man.sh BUILD_DIR OUT_DIR
#
# One source: each page is help2man's rendering of a program's (or a slaq
# subcommand's) --help and --version, plus the extra sections in
# dist/man/NAME.h2m when that file exists. Writes OUT_DIR/man1/slaq.1,
# OUT_DIR/man1/slaq-COMMAND.1 for every subcommand, slaq-train.1,
# slaq-aqp.1, slaq-toy-job.1 and OUT_DIR/man8/slaqd.8. SLAQ_DOCDIR (default
# /usr/share/doc/slaq) is where the pages say the full documentation is.
set -euo pipefail

build=${1:?usage: man.sh BUILD_DIR OUT_DIR}
out=${2:?usage: man.sh BUILD_DIR OUT_DIR}
bin=$(cd "$build/bin" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
docdir=${SLAQ_DOCDIR:-/usr/share/doc/slaq}
command -v help2man >/dev/null || {
  echo "man.sh: help2man is missing (make deps installs it)" >&2; exit 1; }

version=$("$bin/slaq" --version | sed 's/^slaq //')
wrap=$(mktemp -d)
trap 'rm -rf "$wrap"' EXIT
mkdir -p "$out/man1" "$out/man8"

# page NAME SECTION SUMMARY CMD...: help2man on a wrapper that runs CMD.
# help2man takes "Usage:" for the synopsis, so the wrapper capitalises it.
page() {
  local name=$1 section=$2 summary=$3; shift 3
  {
    echo '#!/bin/sh'
    printf 'if [ "$1" = --version ]; then echo "%s %s"; exit 0; fi\n' \
      "$name" "$version"
    printf '%q ' "$@"
    echo '"$@" 2>&1 | sed "s/^usage:/Usage:/"'
  } >"$wrap/$name"
  chmod +x "$wrap/$name"
  local inc=() extra="$src/dist/man/$name.h2m"
  [[ -f "$extra" ]] && inc+=(--include "$extra")
  {
    echo "[SEE ALSO]"
    case $name in
      slaq) echo "slaqd(8), slaq-train(1); the subcommands' pages slaq-COMMAND(1)." ;;
      slaqd) echo "slaq(1), slaq-status(1), slaq-submit(1), slaq-train(1)." ;;
      *) echo "slaq(1), slaqd(8)." ;;
    esac
    echo "The full documentation is in $docdir (docs/ in the source tree)."
  } >"$wrap/$name.see"
  help2man --no-info --section "$section" --name "$summary" \
    --include "$wrap/$name.see" "${inc[@]}" \
    --output "$out/man$section/$name.$section" "$wrap/$name"
}

page slaq 1 "schedule ML training jobs by predicted loss reduction" \
  "$bin/slaq" --help
# Subcommands and their one-line summaries, from `slaq --help`.
"$bin/slaq" --help | sed -n '/^commands:/,/^$/p' | sed '1d;/^$/d' |
while read -r cmd summary; do
  args=("$bin/slaq" "$cmd")
  case $cmd in  # commands whose options belong to a sub-subcommand
    workload) args+=(gen) ;;
    bench) args+=(sched) ;;
  esac
  page "slaq-$cmd" 1 "$summary" "${args[@]}" --help
done
page slaq-train 1 "train one model on real data, as a job slaq schedules" \
  "$bin/slaq-train" --help
page slaq-aqp 1 "approximate TPC-H queries by online aggregation, as jobs slaq schedules" \
  "$bin/slaq-aqp" --help
page slaq-toy-job 1 "a toy training job that reports to slaqd" \
  "$bin/slaq-toy-job" --help
page slaqd 8 "the slaq scheduler daemon" "$bin/slaqd" --help
