/*
 * limits.h — what one user may hold and spend on a shared slaqd, so that
 * no user can fill the disk, the database or the job table for the
 * others (docs/security.md, "Limits per user").
 *
 *   --user-jobs N       jobs one user may hold (running, stopping,
 *                       pending; not administrators)
 *   --user-tasks N      array tasks one user may hold (not yet ended)
 *   --user-reports R    reports a second one user's jobs may send
 *                       together (a bucket of 2 s); more are refused
 *   --log-bytes N       each log file of a job is cut at N bytes
 *   --user-log-bytes N  one user's logs together (running jobs' and the
 *                       finished ones slaqd keeps)
 *   --disk-reserve N    free bytes the state file system keeps for
 *                       state.db: below it no job's log grows
 * --keep-jobs counts each user's finished jobs apart (jobs.c,
 * job_expire), so that one user's many jobs expire only their own.
 */
#ifndef SLAQ_DAEMON_LIMITS_H
#define SLAQ_DAEMON_LIMITS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "daemon/users.h"

/* How often (seconds) the logs are checked against their limits. */
#define LIMIT_CHECK_S 0.05

/* One user's use of what they share (sd_daemon.lim_users). */
typedef struct limit_user {
    uid_t uid;
    double tokens;        /* reports they may send now */
    double t;             /* monotonic time tokens was computed at */
    uint64_t refused;     /* their reports refused over the rate */
    double log_bytes;     /* their jobs' logs at the last check */
} limit_user;

/*
 * Whether `who` may add one job (tasks 0), or an array of `tasks` tasks,
 * now: 0, or -1 with err naming the limit, what they hold and the option
 * that sets it. Administrators are not limited.
 */
int limit_submit(sd_daemon *d, const sd_user *who, long tasks, char *err,
                 size_t errlen);
/* Whether job j may have a report taken now (the rate of its owner's
 * jobs together): 0, or -1 (refused, counted). */
int limit_report(sd_daemon *d, const sd_job *j);
/* A started job's log files (spawn_logs): slaqd keeps them open to hold
 * them to their limits. */
void limit_logs_take(sd_job *j, int out, int err);
/* A job re-adopted after a restart: its log files opened again, if they
 * are still regular files of its owner's (never following a link). */
void limit_logs_reopen(sd_daemon *d, sd_job *j);
/* The job has ended: its logs are checked a last time (d NULL: not), their
 * final size is kept for its user's total, the files closed. */
void limit_logs_close(sd_daemon *d, sd_job *j);
/* Every LIMIT_CHECK_S: each running job's logs against --log-bytes, its
 * user's against --user-log-bytes, all against --disk-reserve; a log
 * over a limit is cut back, once with a line saying why. */
void limit_tick(sd_daemon *d);
/* The database could not be written: the logs are checked against the
 * reserve now; the bytes cut from them (> 0: worth trying again). */
double limit_disk_full(sd_daemon *d);
/* store_flush, and when it fails while jobs' logs have grown into the
 * reserve, the same again at once after they are cut back: a job's
 * output never keeps slaqd from writing state.db. 0 or -1. */
int limit_flush(sd_daemon *d);
/* The limits and each user's use, for `status`. */
json_t *limit_json(sd_daemon *d);
void limit_free(sd_daemon *d);

#endif
