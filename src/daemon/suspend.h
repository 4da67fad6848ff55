/*
 * suspend.h — suspending and resuming a job (suspend.c), and the
 * operations a controller asks of an agent on its behalf.
 */
#ifndef SLAQ_DAEMON_SUSPEND_H
#define SLAQ_DAEMON_SUSPEND_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/record.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;
typedef struct sd_conn sd_conn;

/* An operation a controller asked a job's agent to carry out (suspend.c). */
enum { SD_OP_NONE = 0, SD_OP_SUSPEND = 1, SD_OP_RESUME = 2 };
#define SD_OP_TIMEOUT_S 5.0   /* an agent's answer to an operation */

/* Suspend a running job slaqd started — SIGSTOP (checkpoint 0;
 * *latency_ms set) or a stop after which it leaves a checkpoint
 * (checkpoint 1) — and resume it: SIGCONT, or its command again as a new
 * job from the checkpoint (returned). -1 / NULL with err. */
int job_suspend(sd_daemon *d, sd_job *j, int checkpoint, double *latency_ms,
                char *err, size_t errlen);
sd_job *job_resume(sd_daemon *d, sd_job *j, char *err, size_t errlen);
/* On a controller nothing is signalled for a job an agent runs: its
 * signal suspend returns 1 (and its resume returns it with op_wait set):
 * the request went to the agent, which answers with an op_result (handled
 * by job_op_result). op_park makes the control request req, being answered
 * on d->req_conn, wait for that answer (1), or says it cannot (0: no
 * connection, the caller replies itself). */
int op_park(sd_daemon *d, sd_job *j, json_t *req);
/* An agent's op_result for job j (agent_link.c checked j runs there). */
void job_op_result(sd_daemon *d, sd_job *j, json_t *msg);
/* Every tick: operations whose agent did not answer in SD_OP_TIMEOUT_S
 * fail. */
void op_tick(sd_daemon *d);
/* A connection closed: requests parked on it are answered nowhere. */
void op_conn_closed(sd_daemon *d, sd_conn *c);
void op_free_all(sd_daemon *d);

/* Called by job_finish: a checkpoint-suspended job has exited. */
void job_suspend_done(sd_daemon *d, sd_job *j);
/*
 * Renames the checkpoint `from` to `to` as user uid (named `user`), in a
 * process of that user's (spawn_as): the checkpoint's directory and file
 * are the user's, so root never renames, follows or looks at them. 0
 * (also when `from` is gone and `to` is there: taken at an earlier
 * start); 1 when `from` is missing or cannot be reached, 2 when it
 * cannot be renamed, -1000 when no process of the user answered; why
 * says the reason.
 */
int job_checkpoint_move(sd_daemon *d, uid_t uid, const char *user,
                        const char *from, const char *to, char *why,
                        size_t whylen);
/* DIR/job-ID.ckpt, the file a job of user uid leaves in the
 * SLAQ_CHECKPOINT_DIR slaqd gives it (DIR: job_checkpoint_dir). */
void job_checkpoint_path(const sd_daemon *d, uid_t uid, int64_t id, char *out,
                        size_t len);

#endif
