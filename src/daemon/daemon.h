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
 *   store.c    SQLite persistence                           store_
 *   http.c     the HTTP API and the dashboard (libmicrohttpd) http_
 *   trace.c    timeline, forecast and predictor-error views trace_
 */
#ifndef SLAQ_DAEMON_H
#define SLAQ_DAEMON_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "slaq/slaq.h"

#define SD_MAX_LINE (64 * 1024)       /* longest line in a job session */
#define SD_MAX_REQUEST (1024 * 1024)  /* ... in others (a submit carries
                                         the submitter's environment) */
#define SD_MAX_WBUF (4 * 1024 * 1024) /* unread output before a drop */
#define SD_TICK_S 0.05                /* flush / enforcement tick */
#define SD_SPARK 32                   /* allocation samples kept per job */
#define SD_TRACE_FRAMES 256           /* timeline frames kept (trace.c) */

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
    char *token;             /* shared secret for TCP clients */
    double epoch_s;
    double cores;
    double unit;             /* allocation unit (slaq, slaq-maxmin) */
    double grace_s;          /* stop request -> SIGTERM -> SIGKILL */
    slaq_policy_kind policy;
    sd_enforce_mode enforce;
    int share_quota;         /* --share quota: a hard cap at the share */
    double startup_reports;  /* --startup-reports */
    double hysteresis;       /* --hysteresis */
    double horizon_iters;    /* --horizon-iters */
    double damping;          /* --damping */
    slaq_norm_kind normalise; /* --normalise */
    int verbose;
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
} sd_state;

const char *sd_state_name(sd_state s);
int sd_state_parse(const char *name, sd_state *out);
#define SD_ACTIVE(st) ((st) == SD_RUNNING || (st) == SD_STOPPING)

struct sd_conn;

typedef struct sd_job {
    int64_t id;
    char *name;
    char *cmd;            /* JSON array of strings, as stored */
    char *cwd;
    double weight, max_cores, target, max_time;
    uint64_t max_iters;
    int managed;          /* started by slaqd (else attached) */
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
    uint64_t last_iter;
    double last_loss, first_loss;
    double reduction;     /* predicted loss reduction so far, last epoch */
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
    /* predictor error (trace.c): |forecast − reported| / (L(0) − min L)
     * of the forecast fitted at one epoch, on the reports of the next */
    int fc_ready;         /* its forecast was fitted on >= 2 reports */
    double pe_sum;
    uint64_t pe_n;
} sd_job;

/* ----------------------------------------------------------- connections */

typedef enum sd_conn_kind { CONN_NEW, CONN_JOB, CONN_CONTROL } sd_conn_kind;

typedef struct sd_conn {
    sd_handler h;
    sd_conn_kind kind;
    int tcp;              /* came in over TCP: needs the token first */
    int authed;
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, woff, wcap;
    int want_out;         /* EPOLLOUT registered */
    int closing;          /* close once the output is written */
    int wdead;            /* the peer no longer reads: output dropped */
    sd_job *job;
    int said_bye;
    struct sd_conn *prev, *next;
} sd_conn;

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
    float norm;           /* normalised loss, NAN before two reports */
    float cores;
} sd_sample;

typedef struct sd_frame {
    double t;             /* the epoch's wall-clock time */
    size_t n;
    sd_sample *s;         /* one per job active in that epoch */
} sd_frame;

/* -------------------------------------------------------------- the state */

typedef struct sd_store sd_store;

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
    sd_enforcer enf;
    void *http;           /* struct MHD_Daemon * */
    unsigned http_port;
    uint64_t epoch_no;
    double tick_last;     /* monotonic time of the last tick */
    double epoch_ms_last, epoch_ms_max;  /* whole epoch, slaqd's part too */
    double core_ms_last, core_ms_max;    /* slaq_sched_epoch() alone */
    double apply_ms_max;                 /* the rest: slaqd's own part */
    double epoch_ms_sum, core_ms_sum;    /* over epochs with jobs ... */
    uint64_t busy_epochs;                /* ... counted here */
    uint64_t reports_total, errors_total;
    double pe_sum;        /* predictor error over all jobs (trace.c) */
    uint64_t pe_n;
    sd_frame trace[SD_TRACE_FRAMES]; /* the timeline, oldest first */
    size_t ntrace;
    unsigned trace_stride; /* record every stride-th epoch (0 = 1) */
    uint64_t trace_skip;
    double started;
    int quit;
};

/* Wall-clock seconds (the scheduler's clock) and a monotonic clock. */
double sd_now(void);
double sd_mono(void);

/* Logs a line to stderr with a timestamp; level 0 always, 1 with -v. */
void sd_log(const sd_daemon *d, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int sd_epoll_add(sd_daemon *d, sd_handler *h, uint32_t events);
int sd_epoll_mod(sd_daemon *d, sd_handler *h, uint32_t events);
void sd_epoll_del(sd_daemon *d, sd_handler *h);

/* conn.c */
int conn_listen_unix(sd_daemon *d, const char *path);
int conn_listen_tcp(sd_daemon *d, const char *addr);
void conn_accept(sd_daemon *d, sd_handler *h, uint32_t events);
/* Queues one JSON message (a line) on c; steals nothing, c may close. */
void conn_send(sd_daemon *d, sd_conn *c, json_t *msg);
/* Queues one line (without its newline) on c. */
void conn_send_line(sd_daemon *d, sd_conn *c, const char *s, size_t len);
void conn_close(sd_daemon *d, sd_conn *c);
/* Handles whatever input c has waiting now (a job that exited may have
 * written its last reports just before). */
void conn_drain(sd_daemon *d, sd_conn *c);
/* Before a job's exit is recorded: reads everything it may have sent. */
void conn_settle(sd_daemon *d, sd_job *j);
void conn_close_all(sd_daemon *d);
/* Frees the connections closed during this turn of the loop. */
void conn_reap(sd_daemon *d);

/* jobs.c */
sd_job *job_get(sd_daemon *d, int64_t id);
/* Creates a job record (not yet started); NULL when out of memory. */
sd_job *job_new(sd_daemon *d, int64_t id);
/* Starts a managed job from a submit request; on failure fills err. */
sd_job *job_submit(sd_daemon *d, json_t *req, char *err, size_t errlen);
/* Creates an attached (cooperative) job for a client's hello. */
sd_job *job_attach(sd_daemon *d, const char *name, pid_t pid);
/* Enters the scheduler (state must be active). */
int job_schedule(sd_daemon *d, sd_job *j);
/* Handles one iteration report; returns 0 or fills err. */
int job_report(sd_daemon *d, sd_job *j, json_t *msg, char *err, size_t errlen);
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
void job_free_all(sd_daemon *d);
/* Sends the job its current allocation (and its stop request) on c. */
void job_greet(sd_daemon *d, sd_job *j, sd_conn *c);
/* Reloads jobs from the store at start; re-adopts live processes. */
int job_restore(sd_daemon *d);
json_t *job_json(sd_daemon *d, const sd_job *j, int detail);

/* api.c: a request (a JSON object with "type") -> a reply object. */
json_t *api_handle(sd_daemon *d, json_t *req);
json_t *api_error(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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

/* store.c */
sd_store *store_open(const char *path, char *err, size_t errlen);
void store_close(sd_store *s);
int store_flush(sd_store *s);  /* commits the open transaction */
void store_put_job(sd_store *s, const sd_job *j);
void store_report(sd_store *s, int64_t job, const slaq_report *r);
void store_alloc(sd_store *s, int64_t job, double t, double cores,
                 uint64_t epoch);
void store_event(sd_store *s, double t, int64_t job, const char *kind,
                 const char *detail);
/* Calls fn for each stored job, in id order. */
int store_each_job(sd_store *s, int (*fn)(sd_daemon *, sd_job *), sd_daemon *d);
/* Calls fn for each report of a job in iteration order. */
int store_each_report(sd_store *s, int64_t job,
                      int (*fn)(void *, const slaq_report *), void *arg);
/* History for `slaq show`: reports (at most `max`, evenly thinned),
 * allocations and events. New references. */
json_t *store_reports_json(sd_store *s, int64_t job, size_t max);
json_t *store_allocs_json(sd_store *s, int64_t job, size_t max);
json_t *store_events_json(sd_store *s, int64_t job, size_t max);
const char *store_errmsg(sd_store *s);

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
/* Predicted seconds until the job's loss has fallen by 90 % of its
 * predicted total reduction at its current allocation: 0 if it has, NAN if
 * unknown (inactive, fewer than two reports), INFINITY if never. */
double trace_eta90(const sd_job *j);

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
