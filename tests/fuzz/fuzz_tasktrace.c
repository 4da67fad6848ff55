/*
 * fuzz_tasktrace.c — a libFuzzer harness for the task trace reader of
 * `slaq sim --tasks` (src/io/tasktrace.c, docs/queues.md): each input is
 * a trace file's bytes, read through tt_read_stream as a file (fmemopen).
 * Every field is checked against the format and its caps before it is
 * stored, so no input may crash, trip a sanitizer, hang or grow memory
 * past libFuzzer's -rss_limit_mb.
 *
 * Built with clang by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seed corpus in tests/fuzz/corpus/tasktrace.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/tasktrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    tt_workload w;
    if (tt_read_stream(f, "input", &w, err, sizeof err) == 0)
        tt_free(&w);
    fclose(f);
    return 0;
}
