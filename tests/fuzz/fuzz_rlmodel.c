/*
 * fuzz_rlmodel.c — a libFuzzer harness for the reader of MLF-RL's model
 * file that `slaq sim --deadlines --model` loads (src/io/rlmodel.c): each
 * input is a model file's text, parsed by rlm_parse as rlm_read does
 * once the file is read (inputs holding a NUL byte are refused by
 * rlm_read before parsing, so they are skipped here). No input may crash
 * or trip a sanitizer, and a model that is accepted must hold only finite
 * numbers: the network evaluates them on every decision.
 *
 * Built with clang by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seed corpus in tests/fuzz/corpus/rlmodel.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/rlmodel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size > 64 * 1024 || memchr(data, 0, size))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    slaq_rl_model m;
    if (rlm_parse(text, "input", &m, err, sizeof err) == 0) {
        const double *p = (const double *)&m;
        for (size_t i = 0; i < sizeof m / sizeof *p; i++)
            if (!isfinite(p[i]))
                abort();
    }
    free(text);
    return 0;
}
