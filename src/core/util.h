/*
 * util.h — small helpers that every part of the tree shares: growing an
 * array by doubling its capacity, formatting an error message into a
 * caller's buffer, and writing a number so that it reads back exactly.
 *
 * The scheduler, the allocator's workspace and the readers keep arrays
 * that grow as jobs, nodes or lines come. They all grow the same way: the
 * capacity doubles from a first size until the need fits, and a failed
 * resize leaves the old array (and its capacity) as it was, so the caller
 * can report the error and go on with what it had.
 *
 * Header-only (static inline), so every part of the tree can use it without
 * linking libslaq (slaq-aqp does not).
 */
#ifndef SLAQ_CORE_UTIL_H
#define SLAQ_CORE_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The allocator grow_array calls; a test defines it before this header
 * to make a resize fail. */
#ifndef GROW_REALLOC
#define GROW_REALLOC realloc
#endif

/*
 * The capacity that holds `need` elements: `cap` itself when it already
 * does; otherwise `cap` (or `first` when cap is 0) doubled until it holds
 * need. 0 when doubling would pass SIZE_MAX (the caller reports out of
 * memory). `first` must be at least 1.
 */
static inline size_t grow_cap(size_t cap, size_t need, size_t first)
{
    if (need <= cap)
        return cap;
    size_t c = cap ? cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return 0;
        c *= 2;
    }
    return c;
}

/*
 * Resizes the array whose address is stored at `arrayp` (e.g. &s->jobs, for
 * any element type) to n elements of `size` bytes each. Returns 0 with the
 * new address stored; -1 when n * size overflows or memory runs out, with
 * the old array, its contents and its address left as they were. The
 * caller keeps the capacity and updates it only on success.
 */
static inline int grow_array(void *arrayp, size_t n, size_t size)
{
    void *old, *p;
    if (size && n > SIZE_MAX / size)
        return -1;
    size_t bytes = n * size;
    memcpy(&old, arrayp, sizeof old);
    p = GROW_REALLOC(old, bytes ? bytes : 1);
    if (!p)
        return -1;
    memcpy(arrayp, &p, sizeof p);
    return 0;
}

/* grow_array on the array pointer `a` (an lvalue), with its element size. */
#define GROW_ARRAY(a, n) grow_array(&(a), (n), sizeof *(a))

/*
 * Formats an error message, printf-style, into err (errlen bytes, cut to
 * fit and always terminated); does nothing when err is NULL or errlen 0.
 * The one writer behind the `char *err, size_t errlen` convention of the
 * readers, the simulator and the query engine.
 */
static inline void util_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void util_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/*
 * Writes v with as few digits as read back exactly by strtod (0.1, not
 * 0.10000000000000001), whole numbers in full (1000, not 1e+03), infinity
 * as "inf". Returns the length needed, as snprintf.
 */
static inline int util_fmt_double(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        return snprintf(buf, len, "%.0f", v);
    char tmp[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v || prec == 17)
            break;
    }
    return snprintf(buf, len, "%s", tmp);
}

#endif
