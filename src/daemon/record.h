/*
 * record.h — the records of jobs and task arrays: a job's (sd_job) with
 * its states and their names as status and state.db's jobs.state spell
 * them (record.c), and a task array's (sd_array). Plain types that every
 * layer of slaqd may hold: the modules below the job table (the store,
 * enforcement, users, limits) read and write their fields without knowing
 * the job table (jobs.h) or the arrays (array.h).
 */
#ifndef SLAQ_DAEMON_RECORD_H
#define SLAQ_DAEMON_RECORD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/slaq.h"
#include "slaq/deadline.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_conn sd_conn;

#define SD_SPARK 32                   /* allocation samples kept per job */
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

/* A suspended job (suspend.c): the values of sd_job's `suspended`. */
enum { SD_SUSP_NONE = 0, SD_SUSP_SIGNAL = 1, SD_SUSP_CHECKPOINT = 2 };

/*
 * A job's record, by concern: its identity and owner and where it stands
 * (the fields of sd_job itself), then one part for each concern that has
 * a module of its own: the goals it was given (sd_job_goals: the policy
 * and the store read them), its process (sd_job_proc: spawn, exit, stop,
 * suspend, logs), its history and forecast (sd_job_hist: reports, costs,
 * forecast error), the share applied to it and how (sd_job_enf: the
 * share, the thread advice, enforcement's state) and its place in a
 * cluster (sd_job_place: node, moves, restarts). A field added to one
 * concern is added to its part, and read by that concern's files.
 */

/* What the job was asked to reach, and by when; what the policy made of
 * it at the last epoch. */
typedef struct sd_job_goals {
    double weight, max_cores, target, max_time;
    uint64_t max_iters;
    slaq_convergence convergence; /* declared class (submit or hello) */
    slaq_goal goal;       /* deadline (Unix time), required accuracy of its
                             metric, urgency (slaq submit; docs/deadlines.md) */
    slaq_prio_terms prio; /* its policy's terms at the last epoch, its */
    size_t prio_rank;     /* place by key (1: first; 0: none) and the */
    slaq_policy_kind prio_policy; /* policy (jobs.c, epoch_priority) */
} sd_job_goals;

/* Its process: started, watched, stopped, suspended; its logs. */
typedef struct sd_job_proc {
    int managed;          /* started by slaqd (else attached) */
    pid_t pid;            /* process (and process group) id, 0 if none */
    unsigned long long pstart; /* process start time, to detect pid reuse */
    int adopted;          /* managed by an earlier slaqd: not our child */
    int have_status;
    int exit_status;      /* raw wait status when have_status */
    double stop_deadline; /* when the next stop step is due (0: none) */
    int term_sent;
    int stop_now;         /* a remote job cancelled "now": its stop, when
                             sent again to an agent that registers again
                             (agent_link.c), is too (not kept over a
                             restart: then the agent asks first) */
    int suspended;        /* SD_SUSP_*: SIGSTOPped, or stopped (or being
                             stopped) with a checkpoint to resume from */
    double suspend_t;     /* monotonic: when a checkpoint suspend began */
    double suspend_ms;    /* how long the last suspend took (NaN: none) */
    long long checkpoint_bytes; /* its checkpoint's size (-1: unknown) */
    int log_fd[2];        /* its stdout.log, stderr.log while it runs
                             (limits.c holds them to their limits), -1 */
    double log_seen[2];   /* their sizes at the last check */
    double log_final;     /* both, when it ended (its user's total) */
    int log_paused;       /* SIGSTOPped while a commit takes the room its
                             logs' cut gave back (limits.c) */
} sd_job_proc;

/* What its reports said, what its work cost, how well it was forecast. */
typedef struct sd_job_hist {
    uint64_t last_iter;
    double last_loss, first_loss;
    char *metric_name;    /* what its reports' metric is (NULL: not said) */
    double last_metric;   /* the last report's metric (NaN: none yet) */
    uint64_t metric_iter; /* ... and its iteration */
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
    /* forecast error (trace.c): |forecast − reported| of the forecast
     * fitted at one epoch, on the reports of the next, summed; divided by
     * pe_span when shown (slaq_eval_curve's unit, L(0) − min L) */
    int fc_ready;         /* its forecast was fitted on >= 2 reports */
    double pe_sum;
    uint64_t pe_n;
    double pe_span;       /* L(0) − min L of its reports, last epoch */
    /* approximate queries (docs/relaqs.md): its estimates, kept in memory
     * for the dashboard (aqpd.c) */
    struct sd_vec *vec;
} sd_job_hist;

/* The share applied to it, the threads it was advised, and how
 * enforcement held it to them. */
typedef struct sd_job_enf {
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
} sd_job_enf;

/* Cluster: on a controller, a job an agent runs (remote), and the node it
 * runs on (an index into d->nodes and the core's nodes; -1: not started
 * yet, pending); its moves and restarts. */
typedef struct sd_job_place {
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
    double alloc_sent;    /* cores last sent to its agent (<0: none) */
    uint64_t alloc_msg;   /* agent: the last allocs message naming it */
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
    int move_skipped;     /* its planned move was not worth its cost */
    double move_s;        /* seconds the last one stopped it: from the
                             stop asked to the first report on the new
                             node (NaN: none yet) */
    char *pid_refused;    /* controller: why the pid its agent reported
                             was refused (NULL: none was) */
} sd_job_place;

typedef struct sd_job {
    /* identity and owner */
    int64_t id;
    uid_t uid;            /* its owner: the user who submitted it, whose */
    char *user;           /* uid (and name) it runs as */
    char *name;
    char *cmd;            /* JSON array of strings, as stored */
    char *cwd;
    char *env;            /* JSON array of the submitter's NAME=value
                             strings, or NULL: none was sent (a resume
                             runs with it again) */
    char secret[SD_SECRET_LEN + 1]; /* a hello naming this job must carry
                                       it ("" for a job recorded before
                                       secrets existed) */
    int kind;             /* what it declared itself (SLAQ_JOB_*; a first
                             report with "estimates" makes it a query) */
    int64_t continued_by; /* resumed from its checkpoint as this job */
    int64_t resumed_from; /* this job continues that one's checkpoint */
    int64_t sweep;        /* the sweep it runs a configuration of (0) */
    int64_t array;        /* a task of this array (array.c), else 0: not
                             in the scheduler, one core, never reports */
    long array_index;     /* ... its index */
    /* where it stands */
    sd_state state;
    char *reason;         /* why it stopped / failed, or NULL */
    double submitted, started, ended;
    slaq_job *sj;         /* in the scheduler while active */
    struct sd_conn *conn; /* its client connection, if any */
    /* its concerns */
    sd_job_goals goals;
    sd_job_proc proc;
    sd_job_hist hist;
    sd_job_enf enf;
    sd_job_place place;
} sd_job;

/* A job run by a node agent, seen from the controller. */
#define SD_REMOTE(j) ((j)->place.remote)

/* The record of job `id` in d's job table (d->jobs), NULL if none. */
sd_job *job_get(sd_daemon *d, int64_t id);

/*
 * A task array (array.c, docs/arrays.md): tasks first..last of one
 * command, each a process on one core, at most max_running at once. A
 * task becomes a job record (sd_job with .array set) when it starts, or
 * when it is cancelled or fails before it could; an index without one is
 * pending.
 */
typedef struct sd_array {
    int64_t id;           /* in the jobs' id space: `slaq show ID` */
    uid_t uid;            /* its owner, whom every task runs as */
    char *user;
    char *name;
    char *cmd;            /* JSON array of strings; "{index}" in them is
                             the task's index */
    char *cwd;
    char *env;            /* JSON array of "NAME=value" (NULL: slaqd's) */
    long first, last;
    unsigned max_running; /* K of --array A-B%K (0: no limit of its own) */
    double estimate_s;    /* --task-estimate (0: none given) */
    double submitted;
    int cancelled;        /* its pending tasks were cancelled */
    int64_t *task;        /* task[i - first]: index i's job id, 0: pending */
    long next;            /* no index below it is pending */
    unsigned running;     /* its tasks running now */
    double dur_sum;       /* the durations of its tasks that exited 0 */
    unsigned dur_n;
} sd_array;

#endif
