/*
 * daemon.h — the state slaqd's one event-loop thread owns.
 *
 * slaqd is a single-threaded event loop (like Redis): every file descriptor
 * it watches (the job socket, client connections, the HTTP server, a
 * signalfd, the epoch and tick timerfds) is registered in one epoll set
 * with an `sd_handler` that says which function services it. Nothing is
 * shared between threads, so nothing is locked.
 *
 * This header holds the daemon's settings (sd_config) and its state
 * (sd_daemon), grouped by concern, with the few module types sd_daemon
 * holds by value. Each module declares its other types and its functions
 * in a header of its own, and a file includes the headers of what it
 * uses:
 *
 *   file           header         what                                  prefix
 *   slaqd.c        loop.h         options, start-up, the loop, the log  sd_
 *   clock.c        clock.h        the clocks slaqd reads                sd_
 *   conn.c         conn.h         the protocol on connections           conn_
 *   conn_io.c      conn_io.h      connections: listeners, NDJSON I/O    conn_
 *   epoch.c        epoch.h        the epoch, the tick, a job's end      job_
 *   jobs.c         jobs.h         job table, child processes            job_
 *   suspend.c      suspend.h      suspend and resume, agent operations  job_, op_
 *   api.c          api.h          requests shared by socket and HTTP    api_
 *   api_reply.c    api_reply.h    the form of an error reply            api_
 *   enforce.c      enforce.h      CPU quota backends                    enf_
 *   store*.c       store.h        state.db, its only reader and writer  store_
 *   http.c         http.h         the HTTP API and the dashboard        http_
 *   trace.c        trace.h        timeline, forecast, predictor error   trace_
 *   counters.c     counters.h     counters for status and /metrics      counter_
 *   users.c        users.h        who a peer is, who may act on what    user_
 *   array.c        array.h        task arrays: many one-core tasks      array_
 *   aqpd.c         aqpd.h         approximate queries                   aqpd_
 *   sweepd.c       sweepd.h       hyperparameter sweeps                 sweep_
 *   agent_link.c   agent_link.h   the controller's side of the agents   ctl_
 *   agent.c        agent.h        the node agent's side                 agent_
 *   nodes.c        nodes.h        a controller's nodes, a job's node    node_
 *   link.c         link.h         handshake and sealing (agents, TCP)   link_
 *   tcp_session.c  tcp_session.h  sealed sessions on the TCP port       tcps_
 *   config.c       config.h       the configuration file                config_
 *   spawn.c        spawn.h        a job's environment, logs, paths      spawn_
 *   limits.c       limits.h       what one user may hold and spend      limit_
 *   accounts.c     accounts.h     shares between users and accounts     acct_
 *   record.c       record.h       job and array records, state names    job_
 *
 * The modules are layers. A file includes the headers of its own layer
 * and of the layers below it, never one above: a lower module knows
 * nothing of what uses it (the store reads and writes records, it does
 * not make jobs; users.c says why a user may not act, api_reply.c makes
 * that a reply; conn_io.c sends on a connection, conn.c says what its
 * lines mean). The shared headers hold the plain types every layer holds
 * (this one, sd_daemon, and the types it holds by value) and the loop's
 * log and registration (loop.h); they include only each other and the
 * bottom layer's. The jobs layer is in sub-layers, a file including only
 * its own sub-layer and those below: epoch.c (2a) drives the epoch, the
 * tick and a job's end across the modules; below it the sweeps and the
 * agents' two sides (2b), suspensions (2c), task arrays (2d), the job
 * table (2e, jobs.c), and queries' estimates and the controller's nodes
 * (2f). What the job
 * table and suspend.c raise for a module above them goes through the
 * functions epoch.c registers at start-up (job_modules_init; see
 * sd_daemon). scripts/daemon-deps.sh draws the include graph against
 * this table, and tests/cli/test_daemon_layers.sh holds it: no arrow
 * runs upward, and no include cycle is among the files.
 *
 *   layer          files, top to bottom
 *   1 loop         slaqd.c conn.c tcp_session.c http.c api.c counters.c
 *   2a jobs        epoch.c
 *   2b jobs        sweepd.c agent_link.c agent.c
 *   2c jobs        suspend.c
 *   2d jobs        array.c
 *   2e jobs        jobs.c
 *   2f jobs        aqpd.c nodes.c
 *   3 policy       accounts.c limits.c trace.c
 *   4 base         store.c store_run.c store_shares.c store_sweep.c
 *   4 base         record.c users.c enforce.c spawn.c link.c clock.c
 *   4 base         config.c conn_io.c api_reply.c
 *   shared         daemon.h loop.h
 */
#ifndef SLAQ_DAEMON_H
#define SLAQ_DAEMON_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/shares.h"
#include "slaq/slaq.h"
#include "daemon/link.h"
#include "daemon/loop.h"

#define SD_TICK_S 0.05                /* flush / enforcement tick */
#define SD_EPOCH_RING 64              /* epochs status's recent_epochs holds */
#define SD_MAX_ALLOW_UIDS 32          /* --allow-uid entries */
#define SD_MAX_UNITS 10000000         /* allocation units (cores / unit) one
                                         epoch may hand out: the allocator's
                                         work grows with them */
#define SD_MAX_BUFFERED (32 * 1024 * 1024) /* all connections' buffers
                                         (d->buffered; conn_io.c) */

typedef struct sd_daemon sd_daemon;
typedef struct sd_store sd_store;
typedef struct sd_job sd_job;
typedef struct sd_node sd_node;
typedef struct sd_array sd_array;
typedef struct sd_conn sd_conn;

/* ------------------------------------------------ the modules' own state */

/* The plain types of modules' state that sd_daemon holds by value: here,
 * so that this header includes no module's header (each of those modules
 * includes this one). */

/* CPU enforcement (enforce.c) */
typedef enum sd_enforce_mode {
    SD_ENF_AUTO,
    SD_ENF_CGROUP2,
    SD_ENF_CGROUP1,
    SD_ENF_SIGNAL,
    SD_ENF_NONE,
} sd_enforce_mode;

typedef struct sd_enforcer {
    sd_enforce_mode mode; /* the chosen backend (never AUTO) */
    char *cg_base;        /* cgroup directory holding job-N groups */
    unsigned period_us;
    char detail[256];     /* what was detected, for the start-up log */
} sd_enforcer;

/* the timeline (trace.c) */
#define SD_TRACE_FRAMES 256           /* timeline frames kept */

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

/* failed authentication over TCP (conn_io.c) */
#define SD_AUTH_SLOTS 256             /* addresses with failed attempts kept */

/* A token bucket of failed authentications. */
typedef struct sd_authrate {
    double tokens;        /* checks that may still fail now */
    double last;          /* monotonic time of the last refill, 0: never */
} sd_authrate;

/* Failed authentications from one peer. */
typedef struct sd_authfail {
    char peer[48];
    int agent;            /* on the agent port (else the control port) */
    unsigned fails;       /* in a row */
    double until;         /* monotonic: attempts refused unchecked till then */
    double seen;          /* last failure, monotonic */
} sd_authfail;

/* ---------------------------------------------------------------- config */

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
    double job_threads;      /* --job-threads: the threads a job's math
                                libraries start at (0: not set) */
    sd_enforce_mode enforce;
    int share_quota;         /* --share quota: a hard cap at the share */
    int init;                /* --init: an empty state.db may be set up */
    double keep_jobs;        /* finished jobs kept (oldest go first) */
    double keep_days;        /* ... and for at most this long (0: no limit) */
    /* per-user limits (limits.h) */
    double user_jobs, user_tasks, user_reports;
    double log_bytes, user_log_bytes, disk_reserve;
    int verbose;
    /* cluster (agent_link.c, agent.c; docs/cluster.md) */
    const char *agents;      /* --agents ADDR:PORT: the controller's listener */
    char *agent_token;       /* --agent-token-file: a controller's cluster
                                secret, from which node keys derive */
    unsigned char node_key[LINK_KEY_BYTES]; /* --node-key-file: an
                                agent's key, its node's only (link.h) */
    int agent;               /* --agent: this slaqd is a node agent */
    const char *join;        /* --join HOST:PORT: its controller */
    const char *node_name;   /* --node-name (default $SLURMD_NODENAME or
                                the host name) */
    int end_jobs_at_exit;    /* --end-jobs-at-exit: an agent in a Slurm
                                allocation takes its jobs along */
    slaq_placement placement; /* --placement (a controller) */
    double pin_wait_s;       /* --pin-wait: a job pinned to a node that
                                has been down this long fails (0: never) */
    int fair_share;          /* --fair-share on|off: shares between users
                                (accounts.c; default on) */
    const char *accounts_file; /* --accounts FILE, applied at start */
    int policy_moves;        /* --policy-moves on|off: under mlfs-h and
                                mlfs, the policy moves jobs off overloaded
                                nodes (a controller; default on) */
} sd_config;

/* -------------------------------------------------------------- the state */

/*
 * Everything slaqd's thread owns. The groups that are kept together
 * (the listening sockets, the counters, the agent link) are anonymous
 * structs: their fields keep their names (d->reports_total), and each
 * group reads as one unit.
 */
struct sd_daemon {
    sd_config cfg;
    int epfd;
    int quit;
    double started;       /* wall clock at start */
    mode_t job_umask;     /* the umask slaqd was started with, for jobs */

    /* the loop's own descriptors and the tick (slaqd.c) */
    sd_handler sig_h, epoch_h, tick_h;
    double tick_last;     /* monotonic time of the last tick */

    /* the listening sockets (conn.c, http.c, agent_link.c) */
    struct {
        sd_handler listen_h, tcp_h, http_h;
        sd_handler agents_h;  /* a controller's agent listener */
        /* the "admin" identity's key of sealed sessions on tcp_h, from
         * the control token (link_admin_key; tcp_session.c) */
        unsigned char admin_key[LINK_KEY_BYTES];
        dev_t sock_dev;       /* the socket file this slaqd bound, so */
        ino_t sock_ino;       /* that only that file is removed at exit */
        int accept_paused;    /* out of descriptors: listeners taken out */
        int accept_logged;    /* ... and said so: an episode is under way */
        uint64_t accept_episode; /* accept_pauses when the episode began */
        double accept_last;   /* monotonic time of the episode's last
                                 pause */
        void *http;           /* struct MHD_Daemon * */
        char **http_host_ok;  /* Host values accepted (http.c), NULL-ended */
        unsigned http_port;
    };

    /* the scheduler and the jobs (jobs.c) */
    slaq_sched *sched;
    sd_job **jobs;        /* jobs[id - 1] */
    size_t njobs, capjobs;
    uint64_t epoch_no;
    int flush_hold;       /* >0: job_finish leaves the commit to its caller */
    double expire_last;   /* monotonic time of the last expiry sweep */
    /* the priority policies' terms, keys and order of an epoch (jobs.c,
     * epoch_priority), kept so that an epoch does not allocate */
    struct slaq_prio_terms *prio_terms;
    double *prio_keys;
    size_t *prio_order;
    size_t prio_cap;

    /* connections (conn_io.c) */
    sd_conn *conns;
    sd_conn *dead;        /* closed this loop turn; freed after it */
    size_t nconns;
    size_t buffered;      /* bytes held in all connections' buffers */
    /* The protocol (conn.c, the top layer) registered with the connections
     * (conn_io.c, the bottom one) by conn_protocol_init: what reads a
     * connection's input, and what lets go of what the layers above hold
     * of a connection that closed. */
    void (*conn_input)(sd_daemon *d, sd_handler *h, uint32_t events);
    void (*conn_closed)(sd_daemon *d, sd_conn *c);
    /* What the modules above the job table (jobs.c) do when it ends or
     * launches a job, and what a sweep does when a suspension it asked
     * for is answered (suspend.c): registered by job_modules_init
     * (epoch.c), since a module below may not name one above. job_ending:
     * a job is ending, its end not yet recorded; job_ended: it has ended;
     * job_launch: a controller's job is placed and started on a node
     * (agent_link.c: 0, or -1 with err filled); suspend_answered: an
     * agent answered (or failed to) the suspension of a sweep's job. */
    void (*job_ending)(sd_daemon *d, sd_job *j);
    void (*job_ended)(sd_daemon *d, sd_job *j);
    int (*job_launch)(sd_daemon *d, sd_job *j, json_t *env, char *err,
                      size_t errlen);
    void (*suspend_answered)(sd_daemon *d, sd_job *j, int ok,
                             const char *why);
    double idle_sweep;    /* monotonic time of the last idle sweep */
    /* the control connection whose request api_handle is answering
     * (conn.c sets it; NULL for HTTP): a request answered later by an
     * agent is parked on it */
    sd_conn *req_conn;
    /* failed authentication over TCP (conn_io.c) */
    sd_authfail authfail[SD_AUTH_SLOTS];
    sd_authrate auth_rate_tcp, auth_rate_agents, auth_rate_all;
    sd_ratelog auth_log;
    sd_ratelog reject_log; /* rejected messages (errors_total counts all) */

    /* shares between users (accounts.c): the tree the scheduler divides
     * by, and the monotonic time its usage was last written */
    slaq_shares *shares;
    double shares_saved;

    /* the other modules' state */
    sd_store *store;
    void *sweeps;         /* sweepd.c's list of sweeps */
    sd_enforcer enf;
    /* operations sent to agents awaiting their answers (suspend.c) */
    void *ops;
    uint64_t op_seq;

    /* the timeline (trace.c) */
    sd_frame trace[SD_TRACE_FRAMES]; /* oldest first */
    size_t ntrace;
    unsigned trace_stride; /* record every stride-th epoch (0 = 1) */
    uint64_t trace_skip;

    /* the counters and timings status and /metrics show (counters.c) */
    struct {
        double epoch_ms_last, epoch_ms_max;  /* whole epoch, slaqd's part
                                                too */
        double core_ms_last, core_ms_max;    /* slaq_sched_epoch() alone */
        double apply_ms_max;                 /* the rest: slaqd's own part */
        double epoch_ms_sum, core_ms_sum;    /* over epochs with jobs ... */
        uint64_t busy_epochs;                /* ... counted here */
        /* The same in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID):
         * what an epoch costs, whatever else the machine runs. */
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
        uint64_t reports_total, errors_total;
        uint64_t reports_duplicate; /* resent reports dropped (acked
                                       sessions) */
        uint64_t acks_sent;
        uint64_t pe_n;        /* reports the forecast error was measured
                                 on */
        uint64_t moves_total; /* jobs moved between nodes (agent_link.c) ... */
        double move_seconds_total;      /* ... the seconds they stopped ... */
        uint64_t move_checkpoint_bytes; /* ... and their checkpoints' bytes */
        uint64_t moves_skipped_total; /* planned, not worth their cost */
        uint64_t allocs_msgs; /* agent: allocs messages taken in */
        uint64_t jobs_expired;
        uint64_t auth_failures_total;
        uint64_t auth_limited_total; /* attempts refused unchecked (rate) */
        uint64_t submits_limited_total; /* submits over a user's limit */
        uint64_t reports_limited_total; /* reports over a user's rate */
        uint64_t logs_cut_total;  /* log files cut back (limits.c) */
        uint64_t link_refused_total; /* agent-link lines that did not open */
        size_t buffered_max;  /* the most connections held at any time */
        uint64_t overload_drops; /* connections closed: buffers over the
                                    cap */
        uint64_t idle_closed; /* connections closed: no message in time */
        uint64_t accept_pauses;
        uint64_t http_host_refused;
        uint64_t http_header_timeouts; /* closed: headers not whole in
                                          time */
    };

    /* the agent link (agent_link.c on a controller, agent.c on an agent;
     * docs/cluster.md) */
    struct {
        /* a controller's cluster key (from the agent token), or an
         * agent's node key (link.h) */
        unsigned char link_key[LINK_KEY_BYTES];
        uint64_t register_refused_total; /* registers refused: a node
                                            other than the key's, or one
                                            another link holds */
        /* a controller's nodes */
        sd_node *nodes;
        size_t nnodes;
        /* an agent's link to its controller */
        sd_conn *up;
        double up_retry;      /* monotonic: next connection attempt */
        double up_beat;       /* monotonic: last heartbeat sent */
        double up_epoch_s;    /* the controller's epoch */
        int up_welcomed;
    };

    /* task arrays (array.c), by id */
    sd_array **arrays;
    size_t narrays, caparrays;
    /* each user's use (limits.c) */
    struct limit_user *lim_users;
    size_t nlim_users, caplim_users;
    double lim_checked;       /* monotonic time of the last log check */
    double lim_freed;         /* bytes its last cuts removed */
    uint64_t state_free;      /* bytes free to slaqd on the state
                                 directory's file system at the last
                                 check (statvfs f_bavail) */
    sd_job **tasks;       /* the tasks running on this machine (a
                             controller: placed on its nodes, queued or
                             running) */
    json_t *task_queue;   /* an agent: the tasks its controller queued
                             here, not started yet (oldest first) */
    size_t ntasks, captasks;
};

#endif
