/*
 * clock.h — the clocks slaqd reads: wall-clock seconds (the scheduler's
 * time, stamped on reports and events), a monotonic clock (timeouts,
 * intervals) and this thread's CPU time (what an epoch costs).
 */
#ifndef SLAQ_DAEMON_CLOCK_H
#define SLAQ_DAEMON_CLOCK_H

/* Wall-clock seconds (the scheduler's clock) and a monotonic clock. */
double sd_now(void);
double sd_mono(void);
double sd_thread_cpu(void);

#endif
