/*
 * fuzz_spec.c — a libFuzzer harness for the sweep spec reader that both
 * `slaq sweep` and slaqd use (src/io/sweepspec.c): each input is a spec
 * file's bytes. It is parsed as JSON, checked (sweep_spec_parse: every
 * field, the grid's size before anything is made) and, when valid,
 * expanded into its configurations (sweep_spec_configs), whose count the
 * reader's caps bound. A crash, a sanitizer report, a hang or a memory
 * blow-up (libFuzzer's -rss_limit_mb) on any spec is a bug.
 *
 * Built with clang by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seed corpus in tests/fuzz/corpus/spec.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "io/sweepspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    json_t *spec = json_loadb((const char *)data, size, 0, NULL);
    if (!spec)
        return 0;
    sweep_spec s;
    if (sweep_spec_parse(spec, &s, err, sizeof err) == 0) {
        json_t *configs = sweep_spec_configs(&s, err, sizeof err);
        json_decref(configs);
        sweep_spec_free(&s);
    }
    json_decref(spec);
    return 0;
}
