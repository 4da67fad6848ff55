/*
 * jobs.h — the job table (jobs.c): a job's record, its states, starting
 * and attaching, reports, allocations, stopping, the epoch and the tick.
 */
#ifndef SLAQ_DAEMON_JOBS_H
#define SLAQ_DAEMON_JOBS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/slaq.h"
#include "slaq/deadline.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_conn sd_conn;
typedef struct sd_array sd_array;
typedef struct sd_user sd_user;

#define SD_ADVICE_WAIT_S 2.0          /* a lower share waits at most this
                                         for the job to follow its thread
                                         advice (job_apply_alloc) */
#define SD_SPARK 32                   /* allocation samples kept per job */
#define SD_MAX_NAME 200               /* bytes in a job's name */
#define SD_SECRET_LEN 64              /* hex digits of a job's secret */

typedef enum sd_state {
    SD_RUNNING,   /* started (or attached) and scheduled */
    SD_STOPPING,  /* asked to stop; still scheduled until it exits */
    SD_DONE,      /* exited with status 0 (or said goodbye) */
    SD_FAILED,    /* exited non-zero or was killed by a signal */
    SD_STOPPED,   /* stopped by slaqd at a target or limit */
    SD_CANCELLED, /* cancelled by a user */
    SD_LOST,      /* its process vanished while slaqd was not watching */
    SD_PENDING,   /* a controller's job waiting for room on a node */
} sd_state;
#define SD_NSTATES 8

/* Each state's name, as status and state.db's jobs.state spell it. */
extern const char *const job_state_names[SD_NSTATES];
const char *job_state_name(sd_state s);
int job_state_parse(const char *name, sd_state *out);
#define SD_ACTIVE(st) ((st) == SD_RUNNING || (st) == SD_STOPPING || \
                       (st) == SD_PENDING)

/* The longest metric name a job may declare (hello/info "metric_name"). */
#define SD_METRIC_NAME_MAX 64

typedef struct sd_job {
    int64_t id;
    uid_t uid;            /* its owner: the user who submitted it, whose */
    char *user;           /* uid (and name) it runs as */
    char *name;
    char *cmd;            /* JSON array of strings, as stored */
    char *cwd;
    char *env;            /* JSON array of the submitter's NAME=value
                             strings, or NULL: none was sent (a resume
                             runs with it again) */
    double weight, max_cores, target, max_time;
    uint64_t max_iters;
    slaq_convergence convergence; /* declared class (submit or hello) */
    slaq_goal goal;       /* deadline (Unix time), required accuracy of its
                             metric, urgency (slaq submit; docs/deadlines.md) */
    slaq_prio_terms prio; /* its policy's terms at the last epoch, its */
    size_t prio_rank;     /* place by key (1: first; 0: none) and the */
    slaq_policy_kind prio_policy; /* policy (jobs.c, epoch_priority) */
    int managed;          /* started by slaqd (else attached) */
    char secret[SD_SECRET_LEN + 1]; /* a hello naming this job must carry
                                       it ("" for a job recorded before
                                       secrets existed) */
    sd_state state;
    pid_t pid;            /* process (and process group) id, 0 if none */
    unsigned long long pstart; /* process start time, to detect pid reuse */
    int adopted;          /* managed by an earlier slaqd: not our child */
    int have_status;
    int exit_status;      /* raw wait status when have_status */
    char *reason;         /* why it stopped / failed, or NULL */
    double submitted, started, ended;
    slaq_job *sj;         /* in the scheduler while active */
    struct sd_conn *conn; /* its client connection, if any */
    double alloc;         /* cores last applied */
    /* Thread advice (the core's slaq_job_threads): what the job was last
     * told, what its last report said it ran, and a lower share held
     * back until the job has heard of it (job_apply_alloc). */
    int threads_sent;     /* 0: none yet */
    int threads_used;     /* 0: not reported */
    double alloc_next;    /* the share to apply once it has heard */
    double alloc_next_by; /* monotonic deadline for it (0: none held) */
    double starved_max_s; /* an ended job's slaq_job_starved_max */
    unsigned lifts;       /* an ended job's slaq_job_lifts */
    double stall_s;       /* wall seconds of reports that ran more
                             threads than the share applied kept busy */
    double alloc_sent;    /* cores last sent to its agent (<0: none) */
    uint64_t alloc_msg;   /* agent: the last allocs message naming it */
    uint64_t last_iter;
    double last_loss, first_loss;
    char *metric_name;    /* what its reports' metric is (NULL: not said) */
    double last_metric;   /* the last report's metric (NaN: none yet) */
    uint64_t metric_iter; /* ... and its iteration */
    int suspended;        /* SD_SUSP_*: SIGSTOPped, or stopped (or being
                             stopped) with a checkpoint to resume from */
    double suspend_t;     /* monotonic: when a checkpoint suspend began */
    double suspend_ms;    /* how long the last suspend took (NaN: none) */
    long long checkpoint_bytes; /* its checkpoint's size (-1: unknown) */
    int64_t continued_by; /* resumed from its checkpoint as this job */
    int64_t resumed_from; /* this job continues that one's checkpoint */
    int64_t sweep;        /* the sweep it runs a configuration of (0) */
    double reduction;     /* predicted loss reduction so far, last epoch */
    double end_loss;      /* L_end of its normalised loss: the core's
                             slaq_job_end_loss each epoch, kept as it was
                             when the job ended; NAN until known */
    uint64_t declared_iters; /* the length it declared, kept as it was
                                when it ended (0: none; while it runs,
                                the core's slaq_job_iters) */
    uint64_t nreports;
    double cpu_total;
    /* What the job's work costs (docs/metrics.md, "Cost of work"): the
     * iterations, samples and CPU-seconds its reports covered (after its
     * first, which also covers the job's start), the CPU-seconds per
     * iteration of its recent reports (a moving mean), and the lowest
     * that mean has been since its third report. */
    double iters_total, samples_total, cpu_work;
    double cost_recent, cost_best;
    double stop_deadline; /* when the next stop step is due (0: none) */
    int term_sent;
    int stop_now;         /* a remote job cancelled "now": its stop, when
                             sent again to an agent that registers again
                             (agent_link.c), is too (not kept over a
                             restart: then the agent asks first) */
    float spark[SD_SPARK];/* recent allocations, oldest first */
    unsigned nspark;
    /* signal enforcement: a token bucket on measured CPU time */
    double sig_tokens, sig_cpu_prev;
    int sig_stopped;
    int sig_seen;         /* sig_cpu_prev holds a measurement */
    int sig_held;         /* held at some tick since the last epoch */
    int cg_ready;         /* a cgroup exists for it */
    uint64_t cg_nr_throttled; /* cgroup cpu.stat's count at the last epoch */
    int throttled;        /* enforcement held it back in the last epoch */
    /* forecast error (trace.c): |forecast − reported| of the forecast
     * fitted at one epoch, on the reports of the next, summed; divided by
     * pe_span when shown (slaq_eval_curve's unit, L(0) − min L) */
    int fc_ready;         /* its forecast was fitted on >= 2 reports */
    double pe_sum;
    uint64_t pe_n;
    double pe_span;       /* L(0) − min L of its reports, last epoch */
    /* approximate queries (docs/relaqs.md): the kind the job declared
     * (SLAQ_JOB_*; a first report with "estimates" makes it a query),
     * and its estimates, kept in memory for the dashboard (aqpd.c) */
    int kind;
    struct sd_vec *vec;
    /* cluster: on a controller, a job an agent runs (remote), and the
     * node it runs on (an index into d->nodes and the core's nodes; -1:
     * not started yet, pending) */
    int remote;
    int node;
    int restartable;      /* may be started again elsewhere (--restartable) */
    char *pin;            /* --node NAME: only there */
    char *node_at;        /* the name of that node (kept while it is away) */
    json_t *launch;       /* the start message sent to its agent (a restart
                             sends it again); NULL when not remote */
    unsigned restarts;    /* times started again after its node was lost */
    unsigned gen;         /* cluster: which start of the job is current
                             (controller: from 1, one more at each start
                             again elsewhere; agent: the one it runs).
                             Only that generation may report, end it or
                             write its checkpoints (agent_link.c) */
    int op_wait;          /* controller: a suspend or resume sent to its
                             agent awaits the answer (SD_OP_*, 0: none) */
    /* A move to another node (slaq move; agent_link.c): asked of its agent
     * as a stop that leaves its checkpoint, carried out when that exit
     * arrives, measured at the first report on the new node. */
    int move_to;          /* the node it goes to once stopped (-1: none) */
    int move_from;        /* moved from this node, no report from the new
                             one yet (-1: none) */
    double move_t0;       /* monotonic: when its stop for the move was
                             asked */
    double moved_at;      /* monotonic: when its last move was asked (0:
                             never) */
    int moves;            /* moves carried out */
    int log_fd[2];        /* its stdout.log, stderr.log while it runs
                             (limits.c holds them to their limits), -1 */
    double log_seen[2];   /* their sizes at the last check */
    double log_final;     /* both, when it ended (its user's total) */
    int log_paused;       /* SIGSTOPped while a commit takes the room its
                             logs' cut gave back (limits.c) */
    int move_skipped;     /* its planned move was not worth its cost */
    double move_s;        /* seconds the last one stopped it: from the
                             stop asked to the first report on the new
                             node (NaN: none yet) */
    char *pid_refused;    /* controller: why the pid its agent reported
                             was refused (NULL: none was) */
    int64_t array;        /* a task of this array (array.c), else 0: not
                             in the scheduler, one core, never reports */
    long array_index;     /* ... its index */
} sd_job;

/* A job run by a node agent, seen from the controller. */
#define SD_REMOTE(j) ((j)->remote)

/* Task `index` of array a as a submit request: its command ({index}
 * replaced), directory, name and environment (SLAQ_ARRAY_INDEX and
 * SLAQ_ARRAY_ID added); NULL when out of memory. */
json_t *job_task_req(const sd_array *a, long index);
/* An agent's: starts a task the controller queued here (job id and
 * secret given, as job_submit_as). */
sd_job *job_submit_task_as(sd_daemon *d, json_t *req, int64_t id,
                           const char *secret, const sd_user *owner,
                           int64_t array, long index, char *err,
                           size_t errlen);
/* Fills j->secret with fresh random hex digits: 0, or -1. */
int job_new_secret(sd_job *j);
/* Starts task `index` of array a as a process of its own; NULL with err
 * filled. */
sd_job *job_start_task(sd_daemon *d, sd_array *a, long index, char *err,
                       size_t errlen);
/* Takes id (> every id in use) for a record that is not a job (a task
 * array's): 0, or -1. */
int job_reserve_id(sd_daemon *d, int64_t id);
/* Records a task that never ran (cancelled, or its start failed) as a
 * finished job; NULL when out of memory. */
sd_job *job_task_record(sd_daemon *d, sd_array *a, long index,
                        sd_state state, const char *reason);
/* A submit's "cmd" (a non-empty array of strings) and "env" (absent, or
 * an array): 0, or -1 with a message naming the field. */
int job_check_cmd(json_t *cmd, json_t *env, char *err, size_t errlen);
/* A submit's optional goal fields, "deadline" (Unix time), "accuracy",
 * "direction" ("max" or "min") and "urgency" (1-10), into g (the defaults
 * where absent). 0, or -1 with a message naming the field. */
int job_goal_get(json_t *req, slaq_goal *g, char *err, size_t errlen);
/* A request's or hello's optional "convergence" field: 0 when absent
 * (out untouched), 1 with *out set, -1 with a message naming the field. */
int job_convergence_get(json_t *msg, slaq_convergence *out, char *err,
                        size_t errlen);
/* The job declares its convergence class (hello/info): the core's job
 * gets it (its predictor is made anew) and state.db records it. */
int job_declare_convergence(sd_daemon *d, sd_job *j, slaq_convergence c);
sd_job *job_get(sd_daemon *d, int64_t id);
/* Creates a job record (not yet started); NULL when out of memory. */
sd_job *job_new(sd_daemon *d, int64_t id);
/* Starts a managed job from a submit request, run as `owner` (whom the
 * caller vouches for: never a field of the request); on failure fills
 * err. */
sd_job *job_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                   char *err, size_t errlen);
/* Creates an attached (cooperative) job for a client's hello, owned by
 * the connection's user. */
sd_job *job_attach(sd_daemon *d, const char *name, pid_t pid,
                   const sd_user *owner);
/* Enters the scheduler (state must be active). */
int job_schedule(sd_daemon *d, sd_job *j);
/* Gives job j's (new) scheduler entry its stored reports: a query's
 * mini-batches with their estimates through the query path (its progress
 * metric, predictor and dashboard points are rebuilt), other jobs' reports
 * as they are. `count`: also count them in j's own fields (a job restored
 * after a restart starts from none; one placed again has them). */
void job_replay_history(sd_daemon *d, sd_job *j, int count);
/* Handles one iteration report; returns 0 or fills err. */
int job_report(sd_daemon *d, sd_job *j, json_t *msg, char *err, size_t errlen);
/* A report that reaches a job after it ended because its node was lost
 * (its agent acknowledged it to the job and sends it on when it is back):
 * only recorded, in order, the job's core state being gone. 0 stored, 1
 * already had, -1 refused with err filled. */
int job_report_late(sd_daemon *d, sd_job *j, json_t *msg, char *err,
                    size_t errlen);

/* Asks a job to stop (reason "cancelled" for a user's cancel). */
void job_stop(sd_daemon *d, sd_job *j, const char *reason);
/* A user's cancel: job_stop(d, j, "cancelled"), and with `now` SIGTERM at
 * once rather than after the grace period. */
void job_cancel(sd_daemon *d, sd_job *j, int now);
/* The job's process ended (status known if have_status) or its attached
 * client left. Moves it to its final state and out of the scheduler. */
void job_finish(sd_daemon *d, sd_job *j, int have_status, int status,
                sd_state state_if_unknown, const char *why);
void job_reap_children(sd_daemon *d);
void job_epoch(sd_daemon *d);
void job_tick(sd_daemon *d);
/* One job's part of the tick: an adopted process gone, a stop's next
 * signal due (a task's too: array_tick). */
void job_watch(sd_daemon *d, sd_job *j, double mono);
void job_free_all(sd_daemon *d);
void job_free_one(sd_job *j);
/* Removes finished jobs beyond --keep-jobs or older than --keep-days from
 * memory, the database and the log directory (a bounded batch per call,
 * every few seconds). */
void job_expire(sd_daemon *d);
/* Sends the job its current allocation (and its stop request) on c. */
void job_greet(sd_daemon *d, sd_job *j, sd_conn *c);
/* Reloads jobs from the store at start; re-adopts live processes. */
int job_restore(sd_daemon *d);
json_t *job_json(sd_daemon *d, const sd_job *j, int detail);

/* The directory of the checkpoints of user uid's jobs:
 * STATE/checkpoints for slaqd's own user, STATE/user-checkpoints/uid-N
 * (that user's) for another. */
void job_checkpoint_dir(const sd_daemon *d, uid_t uid, char *out,
                        size_t len);

/* A job name is at most SD_MAX_NAME bytes, without control characters;
 * returns 0 or fills err. */
int job_name_check(const char *name, char *err, size_t errlen);

/* Each of the core's nodes as MLFS's moves and load control see
 * it under slaqd (its cores, its jobs' core demand; cores stand for
 * memory too, which slaqd does not know). calloc'ed, NULL if out of
 * memory. */
struct slaq_node_use *job_node_use(sd_daemon *d);

/* Applies an allocation to a job (enforcement, store, its client) */
void job_apply_alloc(sd_daemon *d, sd_job *j, double cores, double now);
/* Starts a job from a request as `owner`; with id > 0 (an agent
 * starting the controller's job) under that id and secret. */
sd_job *job_submit_as(sd_daemon *d, json_t *req, int64_t id,
                      const char *secret, const sd_user *owner, char *err,
                      size_t errlen);

#endif
