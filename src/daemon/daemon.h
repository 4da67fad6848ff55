/*
 * daemon.h — the state slaqd's one event-loop thread owns, and the private
 * interfaces between its files.
 *
 * slaqd is a single-threaded event loop (like Redis): every file descriptor
 * it watches (the job socket, client connections, the HTTP server, a
 * signalfd, the epoch and tick timerfds) is registered in one epoll set
 * with an `sd_handler` that says which function services it. Nothing is
 * shared between threads, so nothing is locked.
 *
 * Files and prefixes:
 *   main.c     options, start-up, the loop                 sd_
 *   conn.c     connections: buffered NDJSON I/O, protocol   conn_
 *   jobs.c     job table, child processes, stop, epoch      job_
 *   api.c      requests shared by the socket and HTTP       api_
 *   enforce.c  CPU quota backends                           enf_
 *   store*.c   state.db, its only reader and writer (store.h) store_
 *   http.c     the HTTP API and the dashboard (libmicrohttpd) http_
 *   trace.c    timeline, forecast and predictor-error views trace_
 *   counters.c the counters status and /metrics show (counters.h) counter_
 *   users.c    who a peer is, running a job as its owner,   user_
 *              and who may act on which job
 *   array.c    task arrays: many short one-core tasks       array_
 */
#ifndef SLAQ_DAEMON_H
#define SLAQ_DAEMON_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/slaq.h"
#include "daemon/link.h"
#include "daemon/store.h"

#define SD_MAX_LINE (64 * 1024)       /* longest line in a job session */
#define SD_MAX_REQUEST (1024 * 1024)  /* ... in others (a submit carries
                                         the submitter's environment) */
#define SD_MAX_WBUF (4 * 1024 * 1024) /* unread output before a drop */
#define SD_MAX_BUFFERED (32 * 1024 * 1024) /* all connections' buffers */
#define SD_MAX_UNAUTH_LINE 4096       /* a TCP peer's line before its token */
#define SD_MAX_SEALED LINK_SEALED_LEN(SD_MAX_REQUEST) /* a sealed agent-link
                                         line (link.h) */
#define SD_HELLO_TIMEOUT_S 10.0       /* to send a first whole message */
#define SD_LS_PAGE 1000               /* jobs in one ls reply at most */
#define SD_STORE_PENDING (1 << 20)    /* reports kept while writes fail */
#define SD_HISTORY_PAGE 5000          /* reports in one history page */
#define SD_HTTP_PER_IP 32             /* HTTP connections per address */
#define SD_HTTP_MAX_CONNS 512         /* HTTP connections in all */
#define SD_HTTP_TIMEOUT_S 10          /* HTTP idle (and header) timeout */
#define SD_HTTP_HEADER_S 10.0         /* a request's headers, in all */
#define SD_TICK_S 0.05                /* flush / enforcement tick */
#define SD_ADVICE_WAIT_S 2.0          /* a lower share waits at most this
                                         for the job to follow its thread
                                         advice (job_apply_alloc) */
#define SD_SPARK 32                   /* allocation samples kept per job */
#define SD_TRACE_FRAMES 256           /* timeline frames kept (trace.c) */
#define SD_EPOCH_RING 64              /* epochs status's recent_epochs holds */
#define SD_ALLOCS_FULL_EVERY 16       /* epochs between full allocs messages */
#define SD_MAX_UNITS 10000000         /* allocation units (cores / unit) one
                                         epoch may hand out: the allocator's
                                         work grows with them */
#define SD_MAX_NAME 200               /* bytes in a job's name */
#define SD_SECRET_LEN 64              /* hex digits of a job's secret */
#define SD_MAX_ALLOW_UIDS 32          /* --allow-uid entries */
#define SD_AUTH_SLOTS 256             /* addresses with failed attempts kept */
#define SD_AUTH_DELAY_MAX 30.0        /* longest lock-out after failures, s */
/* Failed checks of a credential over TCP, whatever the source addresses
 * (conn.c): per listening port, and all ports together. A check beyond
 * them is refused unchecked. */
#define SD_AUTH_PORT_RATE 5.0         /* per second on one port ... */
#define SD_AUTH_PORT_BURST 4.0        /* ... after a burst of this many:
                                         at most 9 in any second */
#define SD_AUTH_ALL_RATE 8.0          /* per second on all ports ... */
#define SD_AUTH_ALL_BURST 8.0         /* ... after a burst of this many */
#define SD_LOG_INTERVAL 10.0          /* rate-limited log lines: at most */
#define SD_LOG_BURST 10               /* this many per interval per kind */

typedef struct sd_daemon sd_daemon;

/* What an epoll registration points at. */
typedef struct sd_handler {
    int fd;
    void (*fn)(sd_daemon *d, struct sd_handler *h, uint32_t events);
} sd_handler;

/* ---------------------------------------------------------------- config */

typedef enum sd_enforce_mode {
    SD_ENF_AUTO,
    SD_ENF_CGROUP2,
    SD_ENF_CGROUP1,
    SD_ENF_SIGNAL,
    SD_ENF_NONE,
} sd_enforce_mode;

typedef struct sd_config {
    const char *state_dir;   /* default ./var */
    char *socket_path;       /* default STATE/slaq.sock */
    const char *http;        /* "ADDR:PORT" or "off" */
    const char *tcp;         /* "ADDR:PORT" or NULL (off) */
    char *token;             /* TCP control token: every right */
    char *job_token;         /* TCP job token: job sessions only */
    uid_t allow_uids[SD_MAX_ALLOW_UIDS]; /* --allow-uid: administrators */
    size_t n_allow_uids;     /* (besides root and slaqd's own user) */
    const char *admin_group; /* --admin-group: its members administer */
    gid_t admin_gid;
    const char *socket_group; /* --socket-group: the socket is 0660 and */
    gid_t socket_gid;         /* this group's (NULL: 0600, slaqd's own) */
    const char *http_hosts[16]; /* --http-allow-host: more Host values */
    size_t n_http_hosts;
    /* The scheduler's settings (slaq/settings.h: --policy, --cores,
     * --epoch, ...), as the options and the file gave them; sched.unit
     * is cores / 20, at most 1, unless given. */
    slaq_sched_config sched;
    double grace_s;          /* stop request -> SIGTERM -> SIGKILL */
    sd_enforce_mode enforce;
    int share_quota;         /* --share quota: a hard cap at the share */
    int init;                /* --init: an empty state.db may be set up */
    double keep_jobs;        /* finished jobs kept (oldest go first) */
    double keep_days;        /* ... and for at most this long (0: no limit) */
    int verbose;
    /* cluster (cluster.c, agent.c; docs/cluster.md) */
    const char *agents;      /* --agents ADDR:PORT: the controller's listener */
    char *agent_token;       /* --agent-token-file: agent rights only */
    int agent;               /* --agent: this slaqd is a node agent */
    const char *join;        /* --join HOST:PORT: its controller */
    const char *node_name;   /* --node-name (default $SLURMD_NODENAME or
                                the host name) */
    int end_jobs_at_exit;    /* --end-jobs-at-exit: an agent in a Slurm
                                allocation takes its jobs along */
    slaq_placement placement; /* --placement (a controller) */
    double pin_wait_s;       /* --pin-wait: a job pinned to a node that
                                has been down this long fails (0: never) */
    int policy_moves;        /* --policy-moves on|off: under mlfs-h and
                                mlfs, the policy moves jobs off overloaded
                                nodes (a controller; default on) */
} sd_config;

/* ------------------------------------------------------------------ jobs */

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

const char *sd_state_name(sd_state s);
int sd_state_parse(const char *name, sd_state *out);
#define SD_ACTIVE(st) ((st) == SD_RUNNING || (st) == SD_STOPPING || \
                       (st) == SD_PENDING)

struct sd_conn;

/* The longest metric name a job may declare (hello/info "metric_name"). */
#define SD_METRIC_NAME_MAX 64

/* A suspended job (suspend.c). */
enum { SD_SUSP_NONE = 0, SD_SUSP_SIGNAL = 1, SD_SUSP_CHECKPOINT = 2 };
/* An operation a controller asked a job's agent to carry out (suspend.c). */
enum { SD_OP_NONE = 0, SD_OP_SUSPEND = 1, SD_OP_RESUME = 2 };
#define SD_OP_TIMEOUT_S 5.0   /* an agent's answer to an operation */

/*
 * A user as slaqd sees one (users.c): the peer of a connection, decided by
 * the kernel (SO_PEERCRED) on the Unix socket, or the owner of a job.
 */
typedef struct sd_user {
    uid_t uid;
    gid_t gid;            /* primary group (passwd; the peer's if unknown) */
    char name[64];        /* passwd name, or the uid in digits */
    int admin;            /* may act on every job and on slaqd itself */
    int reader;           /* the HTTP API: reads only, acts on nothing */
} sd_user;

typedef struct sd_job {
    int64_t id;
    uid_t uid;            /* its owner: the user who submitted it, whose */
    char *user;           /* uid (and name) it runs as */
    char *name;
    char *cmd;            /* JSON array of strings, as stored */
    char *cwd;
    double weight, max_cores, target, max_time;
    uint64_t max_iters;
    slaq_convergence convergence; /* declared class (submit or hello) */
    slaq_goal goal;       /* deadline (Unix time), required accuracy of its
                             metric, urgency (slaq submit; docs/deadlines.md) */
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
    double stop_deadline; /* when the next stop step is due (0: none) */
    int term_sent;
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
                             write its checkpoints (cluster.c) */
    int op_wait;          /* controller: a suspend or resume sent to its
                             agent awaits the answer (SD_OP_*, 0: none) */
    /* A move to another node (slaq move; cluster.c): asked of its agent
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

/* ----------------------------------------------------------- connections */

typedef enum sd_conn_kind { CONN_NEW, CONN_JOB, CONN_CONTROL } sd_conn_kind;

typedef struct sd_conn {
    sd_handler h;
    sd_conn_kind kind;
    int tcp;              /* came in over TCP: needs the token first */
    int authed;           /* TCP: a token was shown (Unix: always) */
    int may_control;      /* may make changing requests at all (not a
                             TCP job token); each is then allowed or
                             refused for `who` (users.c) */
    int may_read;         /* status, ls, show, logs */
    char peer[48];        /* "uid N" or the IP address, for rate limits */
    sd_user who;          /* who it is (Unix: the kernel's word; TCP: the
                             control token's holder, slaqd's own user) */
    int who_known;        /* who's name and rights are looked up */
    int spoke;            /* a whole message has arrived */
    double opened;        /* monotonic */
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, woff, wcap;
    int want_out;         /* EPOLLOUT registered */
    int closing;          /* close once the output is written */
    int wdead;            /* the peer no longer reads: output dropped */
    sd_job *job;
    int said_bye;
    int acks;             /* the job asked for acknowledgements (hello) */
    int ack_due;          /* an ack is owed even without new reports */
    int acked_any;        /* an ack was sent on this connection ... */
    uint64_t acked_iter;  /* ... for this iteration */
    int agent;            /* came in on the --agents listener */
    int upstream;         /* an agent's link to its controller */
    int node;             /* agent connection: its node, -1 until register */
    sd_link *link;        /* agent or upstream: the link's handshake and
                             keys (link.h); NULL on other connections */
    struct sd_conn *prev, *next;
} sd_conn;

/* ----------------------------------------------------------------- nodes */

#define SD_MAX_NODES 4096
#define SD_NODE_SILENT_EPOCHS 3   /* heartbeats missed before a node is down */
#define SD_PIN_WAIT_S 300.0       /* --pin-wait's default */
/* The policy's moves (cluster_policy_moves; docs/deadlines.md): MLFS's
 * h_r and p_s, and how long a moved job stays before it may move again
 * (the simulator's hold, 10 minutes). */
#define SD_MOVE_H_R 0.9
#define SD_MOVE_P_S 0.1
#define SD_MOVE_HOLD_S 600.0

typedef struct sd_node {
    char name[64];
    double cores;
    char enforce[16];
    sd_conn *conn;        /* the agent's connection, NULL while away */
    double last_seen;     /* monotonic: its last message */
    double last_seen_wall;
    uint64_t seen_epoch;  /* the controller's epoch at its last message */
    double joined;        /* wall clock of its (last) register */
    int up;               /* 0: down (silent too long, or never back) */
    double down_since;    /* monotonic: when it went down (up: 0) */
    uint64_t reports;     /* relayed reports received */
} sd_node;

/* ---------------------------------------------------------------- arrays */

#define SD_MAX_ARRAY 100000       /* tasks in one array at most */
#define SD_ENQUEUE_MAX 256        /* tasks in one "enqueue" message */
#define SD_AGENT_QUEUE_MAX 4096   /* tasks an agent's queue holds at most */
#define SD_MAX_INDEX 1000000000L  /* the largest task index */

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

/* ------------------------------------------------------------ enforcement */

typedef struct sd_enforcer {
    sd_enforce_mode mode; /* the chosen backend (never AUTO) */
    char *cg_base;        /* cgroup directory holding job-N groups */
    unsigned period_us;
    char detail[256];     /* what was detected, for the start-up log */
} sd_enforcer;

/* -------------------------------------------------------------- timeline */

typedef struct sd_sample {
    int64_t id;
    double loss;          /* its last reported loss, NAN before any */
    float cores;
} sd_sample;

typedef struct sd_frame {
    double t;             /* the epoch's wall-clock time */
    size_t n;
    sd_sample *s;         /* one per job active in that epoch */
} sd_frame;

/* -------------------------------------------------------------- the state */

/* At most SD_LOG_BURST log lines of a kind per SD_LOG_INTERVAL, with the
 * count of those held back. */
typedef struct sd_ratelog {
    double start;         /* monotonic start of the interval, 0: never */
    unsigned n;           /* lines logged in it */
    uint64_t held;        /* lines held back since the last one logged */
} sd_ratelog;

/* A token bucket of failed authentications (conn.c). */
typedef struct sd_authrate {
    double tokens;        /* checks that may still fail now */
    double last;          /* monotonic time of the last refill, 0: never */
} sd_authrate;

/* Failed authentications from one peer (conn.c). */
typedef struct sd_authfail {
    char peer[48];
    int agent;            /* on the agent port (else the control port) */
    unsigned fails;       /* in a row */
    double until;         /* monotonic: attempts refused unchecked till then */
    double seen;          /* last failure, monotonic */
} sd_authfail;

struct sd_daemon {
    sd_config cfg;
    int epfd;
    sd_handler sig_h, epoch_h, tick_h, listen_h, tcp_h, http_h;
    slaq_sched *sched;
    sd_job **jobs;        /* jobs[id - 1] */
    size_t njobs, capjobs;
    sd_conn *conns;
    sd_conn *dead;        /* closed this loop turn; freed after it */
    size_t nconns;
    sd_store *store;
    void *sweeps;         /* sweep.c's list of sweeps */
    sd_enforcer enf;
    void *http;           /* struct MHD_Daemon * */
    char **http_host_ok;  /* Host values accepted (http.c), NULL-ended */
    uint64_t http_host_refused;
    uint64_t http_header_timeouts; /* closed: headers not whole in time */
    unsigned http_port;
    uint64_t epoch_no;
    uint64_t allocs_msgs; /* agent: allocs messages taken in */
    int flush_hold;       /* >0: job_finish leaves the commit to its caller */
    double tick_last;     /* monotonic time of the last tick */
    double epoch_ms_last, epoch_ms_max;  /* whole epoch, slaqd's part too */
    double core_ms_last, core_ms_max;    /* slaq_sched_epoch() alone */
    double apply_ms_max;                 /* the rest: slaqd's own part */
    double epoch_ms_sum, core_ms_sum;    /* over epochs with jobs ... */
    /* The same in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID): what
     * an epoch costs, whatever else the machine runs. */
    double epoch_cpu_ms_last, core_cpu_ms_last;
    double epoch_cpu_ms_sum, core_cpu_ms_sum;
    /* The last SD_EPOCH_RING epochs, for status's recent_epochs. */
    struct sd_epoch_rec {
        uint64_t epoch, reports_total;
        double t;        /* wall-clock seconds at its end */
        float ms, cpu_ms, core_ms, core_cpu_ms;
        float part_cpu_ms[5]; /* forecast check, core, applying, nodes,
                                 timeline (jobs.c, job_epoch) */
        uint32_t jobs;
    } epoch_ring[SD_EPOCH_RING];
    uint64_t busy_epochs;                /* ... counted here */
    uint64_t reports_total, errors_total;
    uint64_t reports_duplicate; /* resent reports dropped (acked sessions) */
    uint64_t moves_total; /* jobs moved between nodes (cluster.c) ... */
    double move_seconds_total;        /* ... the seconds they stopped ... */
    uint64_t move_checkpoint_bytes;   /* ... and their checkpoints' bytes */
    uint64_t acks_sent;
    uint64_t pe_n;        /* reports the forecast error was measured on */
    sd_frame trace[SD_TRACE_FRAMES]; /* the timeline, oldest first */
    size_t ntrace;
    unsigned trace_stride; /* record every stride-th epoch (0 = 1) */
    uint64_t trace_skip;
    double started;
    sd_authfail authfail[SD_AUTH_SLOTS];
    uint64_t auth_failures_total;
    uint64_t auth_limited_total; /* attempts refused unchecked (rate) */
    sd_authrate auth_rate_tcp, auth_rate_agents, auth_rate_all;
    uint64_t link_refused_total; /* agent-link lines that did not open */
    sd_ratelog auth_log;
    sd_ratelog reject_log; /* rejected messages (errors_total counts all) */
    size_t buffered;      /* bytes held in all connections' buffers */
    size_t buffered_max;  /* the most at any time */
    uint64_t overload_drops; /* connections closed: buffers over the cap */
    uint64_t idle_closed; /* connections closed: no message in time */
    int accept_paused;    /* out of descriptors: listeners taken out */
    int accept_logged;    /* ... and said so: an episode is under way */
    uint64_t accept_pauses;
    uint64_t accept_episode; /* accept_pauses when the episode began */
    double accept_last;   /* monotonic time of the episode's last pause */
    double idle_sweep;    /* monotonic time of the last idle sweep */
    double expire_last;   /* monotonic time of the last expiry sweep */
    uint64_t jobs_expired;
    dev_t sock_dev;       /* the socket file this slaqd bound, so that */
    ino_t sock_ino;       /* only that file is removed at exit */
    mode_t job_umask;     /* the umask slaqd was started with, for jobs */
    int quit;
    /* cluster: the agent link's key, from the agent token (link.h) */
    unsigned char link_key[LINK_KEY_BYTES];
    /* cluster: the controller's nodes and agent listener (cluster.c) */
    sd_handler agents_h;
    sd_node *nodes;
    size_t nnodes;
    /* an agent's link to its controller (agent.c) */
    sd_conn *up;
    double up_retry;      /* monotonic: next connection attempt */
    double up_beat;       /* monotonic: last heartbeat sent */
    double up_epoch_s;    /* the controller's epoch */
    int up_welcomed;
    /* operations sent to agents awaiting their answers (suspend.c) */
    void *ops;
    uint64_t op_seq;
    /* task arrays (array.c), by id */
    sd_array **arrays;
    size_t narrays, caparrays;
    sd_job **tasks;       /* the tasks running on this machine (a
                             controller: placed on its nodes, queued or
                             running) */
    json_t *task_queue;   /* an agent: the tasks its controller queued
                             here, not started yet (oldest first) */
    size_t ntasks, captasks;
    /* the control connection whose request api_handle is answering
     * (conn.c sets it; NULL for HTTP): a request answered later by an
     * agent is parked on it */
    sd_conn *req_conn;
};

/* Wall-clock seconds (the scheduler's clock) and a monotonic clock. */
double sd_now(void);
double sd_mono(void);
double sd_thread_cpu(void);

/* Logs a line to stderr with a timestamp; level 0 always, 1 with -v. */
void sd_log(const sd_daemon *d, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 if a line may be logged now (at most SD_LOG_BURST per
 * SD_LOG_INTERVAL); then *held is the number of lines held back since the
 * previous one. */
int sd_ratelog_ok(sd_ratelog *r, uint64_t *held);

/* Compares a secret given by a peer with the expected one in time that
 * does not depend on where they differ. */
int sd_secret_equal(const char *given, const char *expected);

/* Derives d->link_key from the agent token (link.h), then wipes and frees
 * the token; 0, or -1 after logging why not. */
int sd_link_key(sd_daemon *d);

int sd_epoll_add(sd_daemon *d, sd_handler *h, uint32_t events);
int sd_epoll_mod(sd_daemon *d, sd_handler *h, uint32_t events);
void sd_epoll_del(sd_daemon *d, sd_handler *h);

/* conn.c */
/* Binds the Unix socket at path. A file already there is replaced only if
 * it is a socket nobody serves; anything else is an error. */
int conn_listen_unix(sd_daemon *d, const char *path);
/* Removes the socket file at exit if it is still the one bound here. */
void conn_unlink_unix(sd_daemon *d, const char *path);
int conn_listen_tcp(sd_daemon *d, const char *addr);
/* A TCP listener on addr ("IPV4:PORT") served by conn_accept through h;
 * opt names the option in errors. */
int conn_listen_at(sd_daemon *d, const char *addr, sd_handler *h,
                   const char *opt);
void conn_accept(sd_daemon *d, sd_handler *h, uint32_t events);
/* Queues one JSON message (a line) on c; steals nothing, c may close. */
void conn_send(sd_daemon *d, sd_conn *c, json_t *msg);
/* Queues one line (without its newline) on c. On an agent link it is
 * sealed, and dropped while the link is not open: nothing but the
 * handshake is said in clear there. */
void conn_send_line(sd_daemon *d, sd_conn *c, const char *s, size_t len);
/* Queues one line on c as it is: the agent link's handshake. */
void conn_send_raw(sd_daemon *d, sd_conn *c, const char *s, size_t len);
/* Sends a plain {"type":"error"} line, then closes c once it is written:
 * a peer refused before its link is open. */
void conn_refuse(sd_daemon *d, sd_conn *c, const char *code,
                 const char *msg);
/* Failed authentication over TCP (rate limits, docs/security.md): the
 * seconds c must wait before its credential may be checked (0: now; per
 * address, per port and overall); a failed check counted and charged. */
double conn_auth_wait(sd_daemon *d, const sd_conn *c);
void conn_auth_failed(sd_daemon *d, sd_conn *c, const char *what);
void conn_auth_succeeded(sd_daemon *d, const sd_conn *c);
void conn_close(sd_daemon *d, sd_conn *c);
/* Handles whatever input c has waiting now (a job that exited may have
 * written its last reports just before). */
void conn_drain(sd_daemon *d, sd_conn *c);
/* Before a job's exit is recorded: reads everything it may have sent. */
void conn_settle(sd_daemon *d, sd_job *j);
void conn_close_all(sd_daemon *d);
/* Frees the connections closed during this turn of the loop. */
void conn_reap(sd_daemon *d);
/* After a commit (nothing accepted is uncommitted any more): tells each
 * job session that asked for acknowledgements the last iteration it has
 * in the database, if that advanced (docs/protocol.md, ack). */
void conn_send_acks(sd_daemon *d);
/* Once a second: closes connections that sent no whole message within
 * SD_HELLO_TIMEOUT_S, and retries accepting after running out of
 * descriptors. */
void conn_tick(sd_daemon *d);

/* array.c */
/* A submit with "array": records the array and starts what may start;
 * NULL with err filled. */
sd_array *array_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                       char *err, size_t errlen);
sd_array *array_get(sd_daemon *d, int64_t id);
/* Starts pending tasks while this machine has cores no ML job may use
 * (docs/arrays.md, "Cores"): after a submit, a task's end, an epoch. */
void array_dispatch(sd_daemon *d);
/* job_finish's: a task ended (its array counts it, its core is free). */
void array_task_ended(sd_daemon *d, sd_job *j);
/* A task's pid has exited (job_reap_children): 1 if it was a task's. */
int array_reap(sd_daemon *d, pid_t pid, int status);
void array_tick(sd_daemon *d);
/* The array as `ls` (detail 0) or `show` (1) shows it. */
json_t *array_json(sd_daemon *d, const sd_array *a, int detail);
/* Pending index `index` of a, as show lists a task that has no job. */
json_t *array_pending_json(const sd_array *a, long index);
/* A controller: node idx is down; its queued tasks go back to their
 * arrays, its running ones are lost. */
void array_node_lost(sd_daemon *d, int idx, const char *why);
/* A controller: node idx (re)registered, running the jobs have[0..n)
 * (ids; negative: an earlier generation). Its queued tasks that it runs
 * now are running; the others go back to their arrays. */
void array_node_registered(sd_daemon *d, int idx, const int64_t *have,
                           size_t n);
/* A controller: a queued task's agent started it. */
void array_task_running(sd_daemon *d, sd_job *j);
/* An agent: a task the controller queued here has started. */
int array_task_add(sd_daemon *d, sd_job *j);
/* The cores tasks may take on this machine now (agent or single slaqd). */
double array_task_room(sd_daemon *d);
/* Each node's queue of tasks (docs/arrays.md, "Node queues"). */
json_t *array_queue_json(sd_daemon *d);
/* Whether the array has pending or running tasks. */
int array_active(sd_daemon *d, const sd_array *a);
/* Cancels every task of a not yet ended (0), or only index (1 task);
 * -1 with err filled. */
int array_cancel(sd_daemon *d, sd_array *a, long index, int now, char *err,
                 size_t errlen);
/* --array's "A-B[%K]" (array.c states it); 0, or -1 with err filled. */
int array_parse_range(const char *s, long *first, long *last, unsigned *k,
                      char *err, size_t errlen);
/* "ID" or "ID_N" (a task of array ID): the array (and *index, -1 for the
 * whole array), or NULL. */
sd_array *array_parse_ref(sd_daemon *d, json_t *v, long *index);
/* After the jobs are restored: the arrays, their tasks counted. */
int array_restore(sd_daemon *d);
void array_free_all(sd_daemon *d);

/* jobs.c */
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
/* What a job declares of itself in hello or info ("iters", "convergence",
 * "metric_name", and with with_kind "kind"), applied to j; a bad value is
 * answered with an error on c and ignored (conn.c). */
void job_declare(sd_daemon *d, sd_conn *c, sd_job *j, json_t *msg,
                 int with_kind);

/* aqpd.c: approximate queries in slaqd. */
/* Makes the job's scheduler entry a `kind` job (SLAQ_JOB_*); only before
 * its first report. -1 with a message otherwise. */
int aqpd_set_kind(sd_daemon *d, sd_job *j, int kind, char *err,
                  size_t errlen);
/* A report carrying "estimates": validated, handed to the core as a
 * query's mini-batch and remembered. Returns 1 if msg has no estimates
 * (an ordinary report), 0 on success, -1 with a message. */
int aqpd_report(sd_daemon *d, sd_job *j, json_t *msg, const slaq_report *r,
                char *err, size_t errlen);
/* {"job": ID, "kind": ..., "progress": P, "points": [{"iter", "t",
 * "est": [...], "lower": [...], "upper": [...]}...]} (first cells). */
json_t *aqpd_estimates_json(const sd_job *j);
/* A query's state for the job object: {"progress": P or null, "batch": the
 * last mini-batch's iteration or null, "cells": n, "estimates", "lower",
 * "upper": the last mini-batch's first cells (up to 4; null where not yet
 * known)}; what slaq ls and slaq show print for a query. */
json_t *aqpd_summary_json(const sd_job *j);
/* The report's "estimates", "lower" and "upper" as one compact JSON
 * object, as the database keeps them (malloc'ed; NULL if out of memory). */
char *aqpd_vec_json(json_t *msg);
/* A finished query's stored estimates into memory for
 * aqpd_estimates_json (after a restart, once; a running one replays). */
void aqpd_load(sd_daemon *d, sd_job *j);
/* Hands a stored mini-batch (`vec` from aqpd_vec_json) to the job's query
 * again after a restart: 0, or -1 (logged) if it cannot be used. */
int aqpd_replay(sd_daemon *d, sd_job *j, const slaq_report *r,
                const char *vec);
void aqpd_free(sd_job *j);
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

/* suspend.c: suspend a running job slaqd started — SIGSTOP (checkpoint 0;
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
/* An agent's op_result for job j (cluster.c checked j runs there). */
void job_op_result(sd_daemon *d, sd_job *j, json_t *msg);
/* Every tick: operations whose agent did not answer in SD_OP_TIMEOUT_S
 * fail. */
void op_tick(sd_daemon *d);
/* A connection closed: requests parked on it are answered nowhere. */
void op_conn_closed(sd_daemon *d, sd_conn *c);
void op_free_all(sd_daemon *d);
/* sweep.c: the sweep_* control requests (docs/sweep-cli.md), the runtime
 * (sweep_tick every tick), reading sweeps back at start, and the HTTP
 * views (/api/sweeps, /api/sweeps/ID: NULL for an unknown id). */
json_t *api_sweep(sd_daemon *d, const char *type, json_t *req,
                  const sd_user *who);
void sweep_tick(sd_daemon *d);
int sweep_restore(sd_daemon *d);
void sweep_free_all(sd_daemon *d);
json_t *sweep_http_list(sd_daemon *d);
json_t *sweep_http_one(sd_daemon *d, int64_t id);
/* A suspension of sweep job j that its agent answered: ok, or failed with
 * err (the configuration then ends: never more than the sweep's slots
 * run). */
void sweep_suspend_result(sd_daemon *d, sd_job *j, int ok, const char *err);

/* Called by job_finish: a checkpoint-suspended job has exited. */
void job_suspend_done(sd_daemon *d, sd_job *j);
/* DIR/job-ID.ckpt, the file a job of user uid leaves in the
 * SLAQ_CHECKPOINT_DIR slaqd gives it (DIR: job_checkpoint_dir). */
void sd_checkpoint_path(const sd_daemon *d, uid_t uid, int64_t id, char *out,
                        size_t len);
/* jobs.c: the directory of the checkpoints of user uid's jobs:
 * STATE/checkpoints for slaqd's own user, STATE/user-checkpoints/uid-N
 * (that user's) for another. */
void job_checkpoint_dir(const sd_daemon *d, uid_t uid, char *out,
                        size_t len);

/* api.c: a request (a JSON object with "type") -> a reply object. */
/* 1 if the request changes state (submit, cancel, setting the policy):
 * only peers with the control credential may make it. */
int api_needs_control(json_t *req);
/* A request from `who`; the per-user rules (docs/security.md) are
 * checked here. api_handle is the HTTP API's: a reader that may act on
 * nothing. */
json_t *api_handle_as(sd_daemon *d, json_t *req, const sd_user *who);
json_t *api_handle(sd_daemon *d, json_t *req);
json_t *api_error(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A job name is at most SD_MAX_NAME bytes, without control characters;
 * returns 0 or fills err. */
int job_name_check(const char *name, char *err, size_t errlen);

/* enforce.c */
int enf_init(sd_daemon *d, sd_enforce_mode mode, char *err, size_t errlen);
/* Called in the child between fork and exec: joins the job's cgroup. */
int enf_child_join(const sd_enforcer *e, int64_t id);
int enf_prepare(sd_daemon *d, sd_job *j);   /* before fork */
int enf_adopt(sd_daemon *d, sd_job *j);     /* re-adopted process */
void enf_apply(sd_daemon *d, sd_job *j, double cores);
/* cpu.weight (v2) or cpu.shares (v1) for an allocation of `cores`. */
unsigned long enf_weight(int v2, double cores);
void enf_tick(sd_daemon *d, double dt);
void enf_epoch(sd_daemon *d, sd_job *j);    /* sets j->throttled */
void enf_release(sd_daemon *d, sd_job *j);
void enf_shutdown(sd_daemon *d);
const char *enf_mode_name(sd_enforce_mode m);
int enf_mode_parse(const char *s, sd_enforce_mode *out);
/* A process's start time (clock ticks since boot), 0 if it is gone or a
 * zombie: with the pid it identifies a process across pid reuse. */unsigned long long enf_proc_start(pid_t pid);

/* trace.c */
/* Before slaq_sched_epoch: scores each job's forecast against the reports
 * that arrived since it was fitted. */
void trace_before_epoch(sd_daemon *d);
/* After the epoch's allocations are applied: records a timeline frame. */
void trace_after_epoch(sd_daemon *d, double now);
void trace_free(sd_daemon *d);
/* GET /api/timeline: {"t":[...], "jobs":{ID:{"id","name","norm_loss":[...],
 * "cores":[...]}}, "stride_epochs":N}, the series aligned with t, only the
 * frames after `since` (wall-clock seconds; 0: all). New reference. */
json_t *trace_timeline_json(sd_daemon *d, double since);
/* GET /api/jobs/ID/forecast: the job's reports and its forecast ahead. */
json_t *trace_forecast_json(sd_daemon *d, const sd_job *j);
/* The job's forecast error: the mean |forecast − reported| one epoch
 * ahead in units of its loss range L(0) − min L (slaq_eval_curve's
 * normalised error, with the range of the reports so far: for an ended
 * job, of its whole curve); NAN until measured. */
double trace_forecast_error(const sd_job *j);
/* The same over every job slaqd holds, each report weighing the same. */
double trace_forecast_error_all(sd_daemon *d);

/* L_end of the job's normalised loss (slaq_norm_loss): the core's
 * slaq_job_end_loss while it is active, the one it had when it ended
 * after; NAN while unknown. */
double trace_end_loss(const sd_job *j);

/* Predicted seconds until the job's loss has fallen by 90 % of its
 * predicted total reduction at its current allocation: 0 if it has, NAN if
 * unknown (inactive, fewer than two reports), INFINITY if never. */
double trace_eta90(const sd_job *j);

/* cluster.c: the controller's side of the agent protocol */
int cluster_listen(sd_daemon *d, const char *addr);
/* A message on an agent connection (c->agent), once its link is open. */
void cluster_message(sd_daemon *d, sd_conn *c, json_t *msg);
/* A handshake line on an agent connection whose link is not open yet. */
void cluster_handshake(sd_daemon *d, sd_conn *c, const char *line,
                       size_t len);
void cluster_conn_closed(sd_daemon *d, sd_conn *c);
/* Starts a submitted job (fields filled, not yet forked) on a node;
 * 0, or -1 with err filled (the caller frees the job). */
int cluster_launch(sd_daemon *d, sd_job *j, json_t *env, char *err,
                   size_t errlen);
void cluster_send_stop(sd_daemon *d, sd_job *j, int now);
/* slaq move: asks the agent of running job j to stop it with its
 * checkpoint saved, then starts it on node `node` from that checkpoint
 * (its id, history and reports kept; the old instance fenced). 0 once
 * asked, or -1 with err saying why it cannot move. */
int cluster_move(sd_daemon *d, sd_job *j, const char *node, char *err,
                 size_t errlen);
/* Right after the epoch, under a policy that moves jobs (mlfs-h, mlfs)
 * and --policy-moves on: MLF-H's moves off overloaded nodes
 * (slaq_mlfs_moves) among the jobs that may move and did not in the last
 * SD_MOVE_HOLD_S, each carried out as a slaq move. */
void cluster_policy_moves(sd_daemon *d);
/* jobs.c: each of the core's nodes as MLFS's moves and load control see
 * it under slaqd (its cores, its jobs' core demand; cores stand for
 * memory too, which slaqd does not know). calloc'ed, NULL if out of
 * memory. */
struct slaq_node_use *job_node_use(sd_daemon *d);
/* A controller: records task `index` of a as queued on `node` (state
 * pending, a job id and secret of its own) and appends its start to
 * batch; NULL when out of memory. */
sd_job *cluster_place_task(sd_daemon *d, sd_array *a, long index, int node,
                           json_t *batch);
/* Sends node's agent the tasks of batch for its queue ("enqueue"). */
void cluster_send_tasks(sd_daemon *d, int node, json_t *batch);
/* Whether node is up with its agent connected. */
int cluster_node_ready(const sd_daemon *d, int node);
/* After each epoch: allocations to the agents, silent nodes marked down. */
void cluster_epoch(sd_daemon *d);
json_t *cluster_nodes_json(sd_daemon *d);
const char *cluster_node_name(const sd_daemon *d, const sd_job *j);
/* The core's node for a job entering the scheduler: the node it runs on,
 * else its --node pin, else SLAQ_NODE_ANY. */
int cluster_job_node(sd_daemon *d, const sd_job *j);
/* At start: a job recorded on a node waits for its agent to come back. */
int cluster_restore_job(sd_daemon *d, sd_job *j, const char *node);

/* agent.c: the node agent's side */
int agent_start(sd_daemon *d);
void agent_message(sd_daemon *d, sd_conn *c, json_t *msg);
/* The largest process id any Linux kernel gives (PID_MAX_LIMIT): an
 * agent's pid outside 2 .. SD_PID_MAX is refused (cluster.c). */
#define SD_PID_MAX 4194304
/* A handshake line from the controller before the link is open. */
void agent_handshake(sd_daemon *d, sd_conn *c, const char *line,
                     size_t len);
void agent_conn_closed(sd_daemon *d, sd_conn *c);
void agent_tick(sd_daemon *d);
/* Relays a job's accepted report (or info) to the controller. */
void agent_relay(sd_daemon *d, sd_job *j, json_t *msg);
void agent_job_ended(sd_daemon *d, sd_job *j);
/* At exit with --end-jobs-at-exit: SIGTERM to every job, SIGKILL to those
 * left after the grace period (at most 3 s: Slurm's KillWait may be 5). */
void agent_end_jobs(sd_daemon *d);
/* Starts the tasks of this agent's queue while it has cores for them. */
void agent_start_queued(sd_daemon *d);

/* conn.c: wraps a connected descriptor in a connection */
sd_conn *conn_add(sd_daemon *d, int fd, int tcp);
/* jobs.c: applies an allocation to a job (enforcement, store, its client) */
void job_apply_alloc(sd_daemon *d, sd_job *j, double cores, double now);
/* jobs.c: starts a job from a request as `owner`; with id > 0 (an agent
 * starting the controller's job) under that id and secret. */
sd_job *job_submit_as(sd_daemon *d, json_t *req, int64_t id,
                      const char *secret, const sd_user *owner, char *err,
                      size_t errlen);

/* users.c */
/* The user with this uid as slaqd names it: passwd's name and primary
 * group (the uid in digits and `gid` when passwd has no entry), and
 * whether it administers slaqd (root, slaqd's own user, --allow-uid, or a
 * member of --admin-group). */
void user_from_uid(const sd_daemon *d, uid_t uid, gid_t gid, sd_user *out);
/* slaqd's own user (what the TCP control token acts as). */
void user_self(const sd_daemon *d, sd_user *out);
/* 1 if slaqd may start jobs as users other than its own (it is root). */
int user_can_switch(void);
/* Whether `who` may submit a job (run code as itself): NULL, or an error
 * reply ("permission_denied") saying why not. */
json_t *user_may_submit(const sd_daemon *d, const sd_user *who);
/* Whether `who` may `verb` ("cancel", "suspend", ...) job j: NULL, or a
 * "permission_denied" error reply naming j's owner. */
json_t *user_may_act(const sd_user *who, const sd_job *j, const char *verb);
/* The same for anything else with an owner (`what`: "sweep 2"). */
json_t *user_may_act_on(const sd_user *who, uid_t owner,
                        const char *owner_name, const char *what,
                        const char *verb);
/* Whether `who` may make a daemon-wide change (`what`, e.g. "set the
 * policy"): NULL, or a "permission_denied" error reply. */
json_t *user_may_admin(const sd_user *who, const char *what);
/* The TCP credential of uid, "UID:HEX" (docs/security.md), into out;
 * makes STATE/user-token.key on first use. 0, or -1 with err set. */
int user_token_issue(const sd_daemon *d, uid_t uid, char *out, size_t len,
                     char *err, size_t errlen);
/* 0 and *uid if cred is a credential user_token_issue made under the
 * current key (compared in constant time), else -1. */
int user_token_check(const sd_daemon *d, const char *cred, uid_t *uid);
/* Resolves a group name (or number) for --admin-group / --socket-group;
 * 0, or -1 after printing an error that starts with where. */
int user_group_parse(const char *where, const char *name, gid_t *out);

/* Everything the child needs to become a job's owner, looked up before
 * fork (getpwuid and getgrouplist are not safe after it). */
typedef struct sd_runas {
    int switch_user;      /* 0: the job runs as slaqd's own user */
    uid_t uid;
    gid_t gid;
    gid_t *groups;        /* supplementary groups (initgroups' list) */
    int ngroups;
    char *home, *shell, *name;
} sd_runas;
/* Fills r for running a job of `uid` (named `user`): 0, or -1 with err
 * ("user alice (uid 1001) has no passwd entry on this machine", "slaqd
 * runs as bob, not root: ..."). */
int user_runas_prepare(const sd_daemon *d, uid_t uid, const char *user,
                       sd_runas *r, char *err, size_t errlen);
/* In the child, after fork: becomes r's user (groups, gid, uid); 0 or -1
 * with errno. */
int user_runas_become(const sd_runas *r);
void user_runas_free(sd_runas *r);

/* The dashboard's files, embedded at build time (web/, scripts/embed-web.sh). */
typedef struct sd_asset {
    const char *path;     /* URL path, e.g. "/app.js" */
    const char *type;     /* Content-Type */
    const unsigned char *data;
    size_t len;
} sd_asset;
extern const sd_asset sd_assets[];
extern const size_t sd_nassets;

/* http.c */
int http_start(sd_daemon *d, const char *addr, char *err, size_t errlen);
void http_run(sd_daemon *d);
void http_stop(sd_daemon *d);

#endif
