/*
 * spawn.h — what slaqd does for a job as root without trusting the job's
 * user: the job's environment, its working directory, its log files, and
 * every later look at a path the user controls (docs/security.md,
 * "Root and the paths of a job").
 *
 * The rules, each in one function here:
 *   - a job's environment is built from what its submitter sent and
 *     slaqd's own values for it, never from slaqd's environment
 *     (spawn_env);
 *   - a job's log directory is made fresh (a directory that exists is
 *     never taken over) and its log files are created in it by slaqd
 *     while no one else may enter it, then handed to the job as open
 *     descriptors (spawn_logs_make);
 *   - a working directory is not resolved as root: the child enters it
 *     after becoming the user (spawn_cwd only makes it absolute);
 *   - any other path a user controls (a checkpoint) is looked at by a
 *     child that has become that user (spawn_as), with a time limit.
 */
#ifndef SLAQ_DAEMON_SPAWN_H
#define SLAQ_DAEMON_SPAWN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/users.h"

/* PATH of a job whose submitter sent no environment: a login shell's. */
#define SPAWN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
/* How long slaqd waits for a child to exec the job or to answer (ms). */
#define SPAWN_TIMEOUT_MS 5000

/* What the job's environment is built from (spawn_env). */
typedef struct spawn_env_in {
    const json_t *env;    /* the submitter's "NAME=value" strings, or NULL */
    const char *home, *user, *shell; /* the owner's passwd entry, or NULL */
    const char *socket;   /* SLAQ_SOCKET */
    int64_t id;           /* SLAQ_JOB_ID */
    const char *secret;   /* SLAQ_JOB_SECRET */
    const char *ckdir;    /* SLAQ_CHECKPOINT_DIR unless env names one */
    int threads;          /* > 0: the math libraries' thread variables
                             (SPAWN_THREAD_VARS) unless env names them */
} spawn_env_in;

/* The variables that size the math libraries' thread pools: OpenMP
 * (PyTorch, scikit-learn, XGBoost), OpenBLAS, MKL, BLIS, Apple's
 * Accelerate and numexpr. */
#define SPAWN_THREAD_VARS                                                  \
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",          \
        "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"

/*
 * The job's environment, a NULL-terminated array the caller frees with
 * spawn_strv_free: the submitter's entries (those that are strings of
 * the form NAME=value, NAME not empty), without SLAQ_SOCKET, SLAQ_JOB_ID,
 * SLAQ_JOB_SECRET and (when home is given) HOME, USER, LOGNAME and
 * SHELL; then HOME, USER, LOGNAME and SHELL from
 * the passwd entry; then slaqd's SLAQ_SOCKET, SLAQ_JOB_ID and
 * SLAQ_JOB_SECRET; and SLAQ_CHECKPOINT_DIR=ckdir when the submitter's
 * entries name none; with threads > 0, each of SPAWN_THREAD_VARS and
 * SLAQ_DEFAULT_CORES (the clients' allocation until slaqd's first word)
 * the submitter's entries do not set, as threads, and
 * OMP_WAIT_POLICY=PASSIVE unless they set it (docs/client.md, "Jobs that
 * size their own threads, or do not": a job's libraries start at that
 * many threads, and threads that wait for work sleep instead of spinning
 * on a share other jobs' threads also run on). A job submitted
 * without an environment (env NULL)
 * gets PATH=SPAWN_DEFAULT_PATH and the rest, as a login would: never
 * anything of slaqd's own environment. NULL when out of memory.
 */
char **spawn_env(const spawn_env_in *in);
void spawn_strv_free(char **v);

/*
 * cwd made absolute without resolving anything: an absolute path as it
 * is, a relative one (NULL is ".") after slaqd's own working directory.
 * Malloc'd, or NULL with err filled. The child enters it as the job's
 * user, who alone decides what it leads to.
 */
char *spawn_cwd(const char *cwd, char *err, size_t errlen);

/* A job's log directory and files while it is being started. */
typedef struct spawn_logs {
    int dirfd;            /* STATE/jobs/ID, O_DIRECTORY */
    int out, err;         /* stdout.log, stderr.log, open for append */
} spawn_logs;

/*
 * Makes the log directory `name` (the job's id) in jobs_dir, mode 0700
 * and slaqd's, and creates stdout.log and stderr.log in it (O_EXCL,
 * O_NOFOLLOW, O_NONBLOCK: nothing there can be a link or a FIFO, since
 * nobody else may enter the directory yet), owned by uid:gid with
 * `mode`. 0; -2 if the directory exists already (the id was used: it is
 * not taken over); -1 with err filled otherwise. On success the caller
 * ends with spawn_logs_give (the job started) or spawn_logs_discard.
 */
int spawn_logs_make(const char *jobs_dir, const char *name, uid_t uid,
                    gid_t gid, mode_t mode, spawn_logs *l, char *err,
                    size_t errlen);
/* Gives the directory to uid:gid with dir_mode (the job has its files
 * open already) and closes it; l->out and l->err stay open, the
 * caller's (limits.c holds the logs to their limits through them). 0, or
 * -1 with errno. */
int spawn_logs_give(spawn_logs *l, uid_t uid, gid_t gid, mode_t dir_mode);
/* Removes the files and the directory spawn_logs_make made (the job did
 * not start) and closes l's descriptors. */
void spawn_logs_discard(spawn_logs *l, const char *jobs_dir,
                        const char *name);

/*
 * Waits up to timeout_ms for a child's report on fd (two ints: the step
 * it failed at and the errno; end of file: it exec'd). 1 if it reported
 * (e filled), 0 if it exec'd, -1 on timeout or error.
 */
int spawn_wait_report(int fd, int timeout_ms, int e[2]);

/*
 * Runs fn(arg, out, outlen) in a child that has become ra's user (with
 * ra->switch_user 0, in slaqd itself: its user is the job's), so that
 * every path fn touches is resolved with that user's rights. Returns
 * fn's result (an int from -128 to 127) with out filled by it, or -1000
 * when the child could not be started, become the user or answer within
 * timeout_ms (it is killed).
 */
int spawn_as(const sd_runas *ra, int (*fn)(void *arg, char *out,
                                           size_t outlen),
             void *arg, char *out, size_t outlen, int timeout_ms);

#endif
