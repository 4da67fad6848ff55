/*
 * clock.h — the clocks slaqd reads: wall-clock seconds (the scheduler's
 * time, stamped on reports, events and log lines), a monotonic clock
 * (timeouts, intervals, retries) and this thread's CPU time (what an
 * epoch costs).
 *
 * Every module of slaqd reads the time through these functions and
 * nowhere else, so that a test may set the time (sd_clock_set) and move
 * it on by hand: a lost client's timeout, a store's retry or an epoch's
 * allocations are then checked without sleeping. The loop's timerfds
 * still tick in real time; a test calls the tick and the epoch itself.
 * Known limit: the few waits on a real process (a SIGSTOP taking effect
 * in job_suspend, an agent ending its jobs or an earlier generation)
 * loop until sd_mono passes a deadline, so under a set clock that
 * nobody moves they would not end; tests of those paths keep the
 * system's clocks.
 */
#ifndef SLAQ_DAEMON_CLOCK_H
#define SLAQ_DAEMON_CLOCK_H

/* A set clock: what the three readers return while it is in place. */
typedef struct sd_clock {
    double wall;          /* sd_now: Unix time, seconds */
    double mono;          /* sd_mono: seconds from an arbitrary start */
    double cpu;           /* sd_thread_cpu: seconds */
} sd_clock;

/* Wall-clock seconds (the scheduler's clock) and a monotonic clock. */
double sd_now(void);
double sd_mono(void);
/* Seconds of CPU time this thread has used. */
double sd_thread_cpu(void);

/* From now on the readers return c's fields, read at each call, so that
 * the caller moves time by changing *c (it must outlive its use); NULL
 * goes back to the system's clocks. For tests: slaqd itself never sets
 * one. Process-wide, like the system's clocks it stands for. */
void sd_clock_set(const sd_clock *c);

#endif
