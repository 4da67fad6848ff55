/*
 * fuzz_dltrace.c — a libFuzzer harness for the reader of deadline traces
 * that `slaq sim --deadlines --trace` replays (src/io/dltrace.c,
 * docs/deadlines.md): each input is a trace file's bytes, read through
 * dlt_read_stream as a file (fmemopen). Every field is checked against
 * the format and its caps (DLT_MAX_*) before it is stored, so no input
 * may crash, trip a sanitizer, hang or grow memory past libFuzzer's
 * -rss_limit_mb; a trace that is read must hold only values within them.
 *
 * Built with clang by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seed corpus in tests/fuzz/corpus/dltrace.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/dltrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    dlt_trace t;
    if (dlt_read_stream(f, "input", &t, err, sizeof err) == 0) {
        if (t.n == 0 || t.n > DLT_MAX_JOBS)
            abort();
        for (size_t i = 0; i < t.n; i++) {
            const dlt_job *j = &t.jobs[i];
            if (!(j->submit >= 0 && j->deadline >= j->submit &&
                  j->deadline <= DLT_MAX_SECONDS && j->duration > 0 &&
                  j->duration <= DLT_MAX_SECONDS && j->gpus >= 1 &&
                  j->gpus <= DLT_MAX_GPUS))
                abort(); /* a value past the reader's own caps */
        }
        dlt_free(&t);
    }
    fclose(f);
    return 0;
}
