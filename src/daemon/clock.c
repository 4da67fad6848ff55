/*
 * clock.c — the one place slaqd reads the time (clock.h).
 *
 * The readers take the system's clocks unless a test has set its own
 * (sd_clock_set); the set clock is one pointer for the process, as the
 * system's clocks are one for the process: slaqd is one thread.
 */
#include <stddef.h>
#include <time.h>

#include "daemon/clock.h"

static const sd_clock *clock_set_to; /* NULL: the system's clocks */

/* The time of clock id (CLOCK_REALTIME, CLOCK_MONOTONIC or
 * CLOCK_THREAD_CPUTIME_ID), from the set clock if there is one. */
static double clock_read(clockid_t id)
{
    if (clock_set_to) {
        switch (id) {
        case CLOCK_REALTIME:
            return clock_set_to->wall;
        case CLOCK_MONOTONIC:
            return clock_set_to->mono;
        default:
            return clock_set_to->cpu;
        }
    }
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double sd_now(void)
{
    return clock_read(CLOCK_REALTIME);
}

double sd_mono(void)
{
    return clock_read(CLOCK_MONOTONIC);
}

double sd_thread_cpu(void)
{
    return clock_read(CLOCK_THREAD_CPUTIME_ID);
}

void sd_clock_set(const sd_clock *c)
{
    clock_set_to = c;
}
