/*
 * fuzz_workload.c — a libFuzzer harness for the workload reader of
 * `slaq sim` (src/io/workload.c, docs/formats.md): each input is a
 * workload file's bytes, read through wl_read as a file (fmemopen). Every
 * line is checked against the format and its caps (values, iterations per
 * job, jobs per file) before anything is allocated, so no input may crash,
 * trip a sanitizer, hang or grow memory past libFuzzer's -rss_limit_mb.
 *
 * Built with clang by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seed corpus in tests/fuzz/corpus/workload.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    wl_workload wl;
    if (wl_read(f, "input", &wl, err, sizeof err) == 0)
        wl_free(&wl);
    fclose(f);
    return 0;
}
