#!/usr/bin/env bash
# test_fuzz.sh — the fuzzers in make test (tests/fuzz: fuzz_protocol, slaqd's
# socket message path; fuzz_http, its HTTP request path; fuzz_spec, the
# sweep spec reader; fuzz_workload, the workload reader; fuzz_tasktrace,
# the task trace reader of slaq sim --tasks; fuzz_dltrace, the deadline
# trace reader of slaq sim --deadlines; fuzz_rlmodel, MLF-RL's model file
# reader; fuzz_arrayrange, --array's range; fuzz_config, slaqd's
# configuration file and the settings it applies; fuzz_agent, the agent
# protocol after the seal, both ways; fuzz_jobenv, a job's environment,
# working directory and log directory as slaqd builds them): every input of each corpus (tests/fuzz/corpus/NAME, seeds and the reproducers of crashes
# once found) must run clean, then a bounded fuzzing run of each
# (FUZZ_SECONDS, default 20) must find no crash, hang or sanitizer report.
# Skipped with the reason when clang cannot link libFuzzer.
#
#   SLAQ_BUILD=build FUZZ_SECONDS=600 bash tests/fuzz/test_fuzz.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/cli/lib.sh
seconds=${FUZZ_SECONDS:-20}  # per fuzzer

# Can this machine build a libFuzzer program at all?
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$TMP/probe.c"
if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
  echo "ok 1 - protocol fuzzer # SKIP ${FUZZ_CC:-clang} is not installed (make deps installs clang)"
  finish; exit
fi
if ! "${FUZZ_CC:-clang}" -fsanitize=fuzzer,address,undefined -o "$TMP/probe" "$TMP/probe.c" 2>"$TMP/probe.err"; then
  echo "ok 1 - protocol fuzzer # SKIP clang cannot link libFuzzer here: $(head -n 1 "$TMP/probe.err")"
  finish; exit
fi

check "the fuzzers build (make fuzz)" make --no-print-directory BUILD="$SLAQ_BUILD" fuzz
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64:malloc_context_size=10}
opts=(-close_fd_mask=2 -detect_leaks=0 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$TMP/")

for h in protocol http spec workload tasktrace dltrace rlmodel arrayrange config agent jobenv; do
  fuzzer=$SLAQ_BUILD/fuzz/fuzz_$h
  # Every kept input (seeds and regressions) once.
  check_exit "$h: every input of tests/fuzz/corpus/$h runs clean" 0 \
    "$fuzzer" "${opts[@]}" -runs=0 tests/fuzz/corpus/$h
  # A bounded run on a copy of the corpus (new inputs are not kept).
  mkdir -p "$TMP/corpus-$h"
  "$fuzzer" "${opts[@]}" -max_len=4096 -max_total_time="$seconds" \
    "$TMP/corpus-$h" tests/fuzz/corpus/$h >"$TMP/fuzz.log" 2>&1
  rc=$?
  runs=$(grep -oE '^Done [0-9]+ runs' "$TMP/fuzz.log" | grep -oE '[0-9]+')
  if [[ $rc -eq 0 && -n $runs ]]; then
    ok "$h: ${seconds} s of fuzzing, $runs inputs, no crash, hang or sanitizer report"
  else
    not_ok "$h: fuzzing found a problem (exit $rc)"
    for f in "$TMP"/crash-* "$TMP"/timeout-* "$TMP"/oom-*; do
      [[ -f $f ]] || continue
      mkdir -p "$SLAQ_BUILD/fuzz"
      cp "$f" "$SLAQ_BUILD/fuzz/$h-$(basename "$f")"
      echo "#   input kept as $SLAQ_BUILD/fuzz/$h-$(basename "$f")"
    done
    grep -E "ERROR|SUMMARY|runtime error|#[0-9]+ 0x|^fuzz_" "$TMP/fuzz.log" | head -n 20 | sed 's/^/#   /'
  fi
done
finish
