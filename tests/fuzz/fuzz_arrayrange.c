/*
 * fuzz_arrayrange.c — a libFuzzer harness for the parser of a task
 * array's range, the "A-B[%K]" of `slaq submit --array` that slaqd reads
 * from a submit request (array_parse_range, src/daemon/array.c,
 * docs/arrays.md): each input is the field's text. No input may crash or
 * trip a sanitizer, and a range it accepts must be within the caps the
 * array code relies on: 0 <= A <= B <= SD_MAX_INDEX, at most SD_MAX_ARRAY
 * tasks, K from 0 (not given) to 1,000,000.
 *
 * Built with slaqd's sources by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seeds in tests/fuzz/corpus/arrayrange.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/array.h"
#include "daemon/daemon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[256], err[256];
    if (size >= sizeof s || memchr(data, 0, size)) /* a JSON string's text */
        return 0;
    memcpy(s, data, size);
    s[size] = 0;
    long first = -1, last = -1;
    unsigned k = 0;
    if (array_parse_range(s, &first, &last, &k, err, sizeof err) == 0) {
        if (first < 0 || first > last || last > SD_MAX_INDEX ||
            last - first + 1 > SD_MAX_ARRAY || k > 1000000)
            abort();
    } else if (!err[0]) {
        abort(); /* refused without saying why */
    }
    return 0;
}
