/*
 * slaqd.c — slaqd: options, start-up, and the event loop.
 *
 * slaqd runs training jobs on one machine and re-divides its CPUs among
 * them every epoch with libslaq's policies. This file parses the options,
 * takes the state directory (one slaqd per directory, held with a lock),
 * opens the store, chooses the enforcement backend, restores the jobs a
 * previous slaqd left, opens the listeners, and then runs the loop: one
 * epoll_wait, dispatching each ready descriptor to its handler. Signals
 * arrive through a signalfd, so they are handled in the loop too.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "daemon/accounts.h"
#include "daemon/agent.h"
#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/agent_link.h"
#include "daemon/config.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/epoch.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/sweepd.h"
#include "daemon/trace.h"
#include "daemon/users.h"
#include "io/rlmodel.h"
#include "io/setopt.h"
#include "io/text.h"
#include "paths.h" /* SLAQ_BINDIR, SLAQ_SYSCONFDIR, SLAQ_DATADIR: BUILD/gen,
                      from make */
#include "slaq/version.h"

void sd_free_state(sd_daemon *d)
{
    conn_close_all(d);
    conn_reap(d);
    http_stop(d);
    acct_close(d);
    if (d->store)
        store_flush(d->store);
    enf_shutdown(d); /* looks at the jobs: before they are freed */
    sweep_free_all(d);
    op_free_all(d);
    job_free_all(d);
    limit_free(d);
    array_free_all(d);
    json_decref(d->task_queue);
    d->task_queue = NULL;
    trace_free(d);
    store_close(d->store);
    d->store = NULL;
    slaq_sched_free(d->sched);
    d->sched = NULL;
}

void sd_log(const sd_daemon *d, int level, const char *fmt, ...)
{
    if (d && level > d->cfg.verbose)
        return;
    char stamp[32];
    time_t t = (time_t)sd_now();
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* Names, commands and strings from jobs and agents end up in the
     * message: escaped, so that the log stays one line per message and
     * shows what was sent (text_escape). */
    char msg[4096], safe[4 * sizeof msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s slaqd: %s\n", stamp,
            text_escape(safe, sizeof safe, msg));
}

int sd_ratelog_ok(sd_ratelog *r, uint64_t *held)
{
    double now = sd_mono();
    if (r->start == 0 || now - r->start >= SD_LOG_INTERVAL) {
        r->start = now;
        r->n = 0;
    }
    if (r->n >= SD_LOG_BURST) {
        r->held++;
        return 0;
    }
    r->n++;
    *held = r->held;
    r->held = 0;
    return 1;
}

int sd_secret_equal(const char *given, const char *expected)
{
    size_t lg = strlen(given), le = strlen(expected);
    unsigned char diff = lg != le;
    for (size_t i = 0; i < le; i++)
        diff |= (unsigned char)((i < lg ? given[i] : 0) ^ expected[i]);
    return diff == 0;
}

int sd_link_key(sd_daemon *d)
{
    if (d->cfg.agent) { /* its node's key, read at start (cluster_args) */
        memcpy(d->link_key, d->cfg.node_key, sizeof d->link_key);
        sodium_memzero(d->cfg.node_key, sizeof d->cfg.node_key);
        if (link_sodium_init() == 0)
            return 0;
        sd_log(d, 0, "cannot start libsodium (no random source)");
        return -1;
    }
    if (!d->cfg.agent_token || link_key_derive(d->cfg.agent_token,
                                               d->link_key) < 0) {
        sd_log(d, 0, "cannot derive the agent link's key (out of memory, or "
               "no random source)");
        return -1;
    }
    link_forget(&d->cfg.agent_token); /* only the key is needed now */
    return 0;
}

int sd_epoll_add(sd_daemon *d, sd_handler *h, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = h};
    return epoll_ctl(d->epfd, EPOLL_CTL_ADD, h->fd, &ev);
}

int sd_epoll_mod(sd_daemon *d, sd_handler *h, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = h};
    return epoll_ctl(d->epfd, EPOLL_CTL_MOD, h->fd, &ev);
}

void sd_epoll_del(sd_daemon *d, sd_handler *h)
{
    epoll_ctl(d->epfd, EPOLL_CTL_DEL, h->fd, NULL);
}

/* slaqd's defaults that depend on the machine or on another setting. */
static const char *default_text(const char *name)
{
    if (!strcmp(name, "cores"))
        return "all online CPUs";
    if (!strcmp(name, "unit"))
        return "cores / 20, at most 1";
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaqd [OPTIONS]\n\n"
        "Runs training jobs and re-divides this machine's CPUs among them\n"
        "every epoch by predicted loss reduction (docs/slaqd.md).\n\n"
        "  --config FILE       settings file, 'key = value' lines with the\n"
        "                      long options' names (default:\n"
        "                      " SLAQ_SYSCONFDIR "/slaq/slaqd.conf when installed,\n"
        "                      else ./slaqd.conf if it exists); options\n"
        "                      given here override it\n"
        "  --state-dir DIR     state, logs and socket (default ./var)\n"
        "  --socket PATH       job/control socket (default STATE/slaq.sock)\n"
        "  --http ADDR:PORT    HTTP API (default 127.0.0.1:7070; 'off')\n"
        "  --http-allow-host HOST[:PORT]  another Host header the HTTP API\n"
        "                      accepts (besides 127.0.0.1, localhost and\n"
        "                      [::1] with the port; repeatable)\n"
        "  --tcp ADDR:PORT     TCP listener for remote jobs (off by default;\n"
        "                      needs --token-file or SLAQ_TOKEN)\n"
        "  --token-file FILE   TCP control token (every right, as slaqd's\n"
        "                      own user: an administrator's credential;\n"
        "                      proved in a sealed session, never sent)\n"
        "  --job-token-file FILE  TCP job token (job sessions only; the one\n"
        "                      token taken in clear)\n"
        "  --socket-group NAME\n"
        "                      the socket is mode 0660 in group NAME, so its\n"
        "                      members may connect (default: 0600, slaqd's\n"
        "                      user and root only); jobs run as the users\n"
        "                      who submit them when slaqd is root\n"
        "  --admin-group NAME  its members may act on every job and set the\n"
        "                      policy (besides root and slaqd's user); others\n"
        "                      act on their own jobs only\n"
        "  --allow-uid UID     one administrator by user id, like a member of\n"
        "                      --admin-group (repeatable)\n"
        "  --enforce MODE      auto | cgroup2 | cgroup1 | signal | none\n"
        "  --share HOW         weight: cgroup CPU weights proportional to\n"
        "                      the allocation, idle cycles go to the others\n"
        "                      (default); quota: a hard CPU quota at it\n"
        "  --grace SECONDS     stop request to SIGTERM to SIGKILL (default 10)\n"
        "  --job-threads N     the threads a job's math libraries start at:\n"
        "                      OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and the\n"
        "                      like, SLAQ_DEFAULT_CORES, with\n"
        "                      OMP_WAIT_POLICY=PASSIVE, where the\n"
        "                      job's environment sets none (default 1; 0:\n"
        "                      leave them unset); jobs grow them on slaq's\n"
        "                      advice (docs/client.md, \"Threads\")\n"
        "  --keep-jobs N       finished jobs kept per user (default 10000);\n"
        "                      the oldest are removed, history and logs too\n"
        "  --keep-days D       finished jobs kept at most D days (default\n"
        "                      30; 0: no age limit)\n"
        "  --user-jobs N       jobs one user may hold: running, stopping,\n"
        "                      pending (default 10000; administrators: no\n"
        "                      limit)\n"
        "  --user-tasks N      array tasks one user may hold (default\n"
        "                      1000000)\n"
        "  --user-reports R    reports a second one user's jobs may send\n"
        "                      together (default 2000); more are refused\n"
        "  --log-bytes N       each log file of a job is cut at N bytes\n"
        "                      (default 1073741824), with a line saying so\n"
        "  --user-log-bytes N  one user's logs together (default\n"
        "                      10737418240): over it, no log of theirs grows\n"
        "  --disk-reserve N    free bytes kept for state.db on its file\n"
        "                      system (default 67108864, at most an eighth of\n"
        "                      it): below it, no job's log grows\n"
        "  --fair-share on|off divide the cores between users (and their\n"
        "                      accounts) first, by weight and decayed past\n"
        "                      usage, then among each user's jobs by the\n"
        "                      policy (default on; docs/slaqd.md, \"Shares\n"
        "                      between users\")\n"
        "  --accounts FILE     accounts and users with their weights and\n"
        "                      caps, applied at start over what state.db\n"
        "                      holds: 'account NAME [account=PARENT]\n"
        "                      [weight=W] [max-cores=C] [max-jobs=N]' and\n"
        "                      'user NAME [account=A] ...' lines\n"
        "  --init              set up an existing empty state.db (slaqd\n"
        "                      refuses an empty or foreign database file)\n"
        "  -v, --verbose       log every allocation change and signal; twice\n"
        "                      (-vv, or verbose = 2 in the file): also every\n"
        "                      connection and every epoch's duration\n"
        "  -V, --version       print slaqd's version and exit\n"
        "  -h, --help          this help\n"
        "\nCluster (docs/cluster.md; --placement below):\n"
        "  --agents ADDR:PORT  be a controller: node agents join here and\n"
        "                      run the jobs (needs an agent token)\n"
        "  --agent-token-file FILE  a controller's agent token (or\n"
        "                      SLAQ_AGENT_TOKEN), the cluster secret: each\n"
        "                      node's key derives from it (slaq cluster\n"
        "                      node-key); never sent, nor held by agents\n"
        "  --pin-wait SECONDS  a job pinned to a node (--node) fails once\n"
        "                      that node has been down this long (default\n"
        "                      300; 0: it waits for its node forever)\n"
        "  --policy-moves on|off  under --policy mlfs-h, mlfs or mlfs-rl, the\n"
        "                      policy moves restartable jobs off overloaded\n"
        "                      nodes as `slaq move` does (default on)\n"
        "  --rl-model FILE     MLF-RL's network, by which --policy mlfs-rl and\n"
        "                      mlfs order the jobs (docs/deadlines.md; default\n"
        "                      " SLAQ_DATADIR "/slaq/mlfs-rl.model when\n"
        "                      installed, else the source tree's\n"
        "                      data/models/mlfs-rl.model); read at start, a\n"
        "                      malformed file refused with its line\n"
        "  --agent             be a node agent: run the jobs a controller\n"
        "                      places here (needs --join and --node-key-file;\n"
        "                      --http defaults to off)\n"
        "  --join HOST:PORT    the controller's --agents address\n"
        "  --node-key-file FILE  an agent's key, its node's only (mode 0600,\n"
        "                      made by slaq cluster node-key): it registers\n"
        "                      as that node and trusts only a controller\n"
        "                      that proves the same key\n"
        "  --node-name NAME    this node's name: must be the key file's\n"
        "                      (default: the key file's)\n"
        "  --end-jobs-at-exit  an agent ends its jobs when it exits, and the\n"
        "                      kernel ends them if it is killed (in a Slurm\n"
        "                      allocation; by default they keep running and\n"
        "                      a restarted agent re-adopts them)\n"
        "\nScheduler settings (docs/libslaq.md; the same in slaq sim and "
        "slaq replay):\n");
    slaq_sched_config dflt;
    slaq_sched_config_init(&dflt);
    setopt_help(f, 22, &dflt, NULL, default_text);
}

static int parse_pos(const char *where, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || !isfinite(v)) {
        fprintf(stderr, "slaqd: %s wants a positive number, got '%s'\n",
                where, s);
        return -1;
    }
    *out = v;
    return 0;
}

static char *read_token(const char *where, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "slaqd: %s %s: %s\n", where, path, strerror(errno));
        return NULL;
    }
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (strlen(buf) < 8) {
        fprintf(stderr, "slaqd: %s %s: the token must have at "
                        "least 8 characters\n", where, path);
        return NULL;
    }
    return strdup(buf);
}

enum { O_STATE = 256, O_SOCKET, O_HTTP, O_TCP, O_TOKEN, O_ENFORCE, O_GRACE,
       O_CONFIG, O_SHARE, O_INIT, O_JOBTOKEN, O_ALLOWUID, O_KEEPJOBS,
       O_KEEPDAYS, O_HTTPHOST, O_AGENTS, O_AGENTTOK, O_AGENT, O_JOIN,
       O_NODENAME, O_ENDJOBS, O_ADMINGROUP, O_SOCKGROUP,
       O_PINWAIT, O_POLICYMOVES, O_RLMODEL, O_USERJOBS, O_USERTASKS,
       O_USERREPORTS, O_LOGBYTES, O_USERLOGBYTES, O_DISKRESERVE, O_NODEKEY,
       O_JOBTHREADS, O_FAIRSHARE, O_ACCOUNTS };

/* slaqd's own options; the scheduler's settings follow them in long_opts
 * (setopt_build, at the start of parse_args). */
static const struct option own_opts[] = {
    {"config", required_argument, 0, O_CONFIG},
    {"state-dir", required_argument, 0, O_STATE},
    {"socket", required_argument, 0, O_SOCKET},
    {"http", required_argument, 0, O_HTTP},
    {"tcp", required_argument, 0, O_TCP},
    {"token-file", required_argument, 0, O_TOKEN},
    {"enforce", required_argument, 0, O_ENFORCE},
    {"grace", required_argument, 0, O_GRACE},
    {"job-threads", required_argument, 0, O_JOBTHREADS},
    {"share", required_argument, 0, O_SHARE},
    {"init", no_argument, 0, O_INIT},
    {"job-token-file", required_argument, 0, O_JOBTOKEN},
    {"allow-uid", required_argument, 0, O_ALLOWUID},
    {"admin-group", required_argument, 0, O_ADMINGROUP},
    {"socket-group", required_argument, 0, O_SOCKGROUP},
    {"keep-jobs", required_argument, 0, O_KEEPJOBS},
    {"keep-days", required_argument, 0, O_KEEPDAYS},
    {"user-jobs", required_argument, 0, O_USERJOBS},
    {"user-tasks", required_argument, 0, O_USERTASKS},
    {"user-reports", required_argument, 0, O_USERREPORTS},
    {"log-bytes", required_argument, 0, O_LOGBYTES},
    {"user-log-bytes", required_argument, 0, O_USERLOGBYTES},
    {"disk-reserve", required_argument, 0, O_DISKRESERVE},
    {"http-allow-host", required_argument, 0, O_HTTPHOST},
    {"agents", required_argument, 0, O_AGENTS},
    {"agent-token-file", required_argument, 0, O_AGENTTOK},
    {"agent", no_argument, 0, O_AGENT},
    {"join", required_argument, 0, O_JOIN},
    {"node-name", required_argument, 0, O_NODENAME},
    {"node-key-file", required_argument, 0, O_NODEKEY},
    {"end-jobs-at-exit", no_argument, 0, O_ENDJOBS},
    {"pin-wait", required_argument, 0, O_PINWAIT},
    {"policy-moves", required_argument, 0, O_POLICYMOVES},
    {"rl-model", required_argument, 0, O_RLMODEL},
    {"fair-share", required_argument, 0, O_FAIRSHARE},
    {"accounts", required_argument, 0, O_ACCOUNTS},
    {"verbose", no_argument, 0, 'v'},
    {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, 'V'},
};

#define OWN_OPTS (sizeof own_opts / sizeof *own_opts)
static struct option long_opts[OWN_OPTS + SETOPT_MAX + 1];


/* Options a configuration file cannot set. */
static const int file_refused[] = {O_CONFIG, 'h', 'V', 0};

/* What parsing collects besides the config itself. */
typedef struct sd_args {
    sd_config *c;
    const char *socket, *token_file, *job_token_file, *agent_token_file;
    const char *node_key_file;
    const char *rl_model;   /* --rl-model, NULL: the default */
    char rl_model_where[4200]; /* where it was set, for its errors */
    int http_set;
    int unit_set;           /* --unit was given */
    char token_where[4200]; /* where token_file was set, for its errors */
    char job_token_where[4200];
} sd_args;

/* A number in [0, max] (whole with `whole`): --keep-jobs, --keep-days. */
static int parse_bounded(const char *where, const char *s, double max,
                         int whole, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0) || v > max ||
        (whole && v != floor(v))) {
        fprintf(stderr, "slaqd: %s wants a %s from 0 to %g, got '%s'\n",
                where, whole ? "whole number" : "number", max, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* apply_opt's groups return this for a setting that is not theirs. */
enum { APPLY_NOT_MINE = 1 };

/* "yes" (or the command line's flag, value NULL) for --agent,
 * --end-jobs-at-exit and --init. Returns 0, or -1 after an error. */
static int apply_yes(const char *where, const char *value)
{
    if (value && strcmp(value, "1") && strcmp(value, "yes")) {
        fprintf(stderr, "slaqd: %s: expected yes, got '%s'\n", where,
                value);
        return -1;
    }
    return 0;
}

/* Where slaqd listens and its place in a cluster: state directory,
 * sockets, HTTP, agents, node key and name, --agent, --tcp. Returns 0, -1
 * after an error, or APPLY_NOT_MINE. */
static int apply_place_opt(sd_args *a, int code, const char *value,
                           const char *where)
{
    sd_config *c = a->c;
    switch (code) {
    case O_STATE: c->state_dir = value; return 0;
    case O_SOCKET: a->socket = value; return 0;
    case O_HTTP: c->http = value; a->http_set = 1; return 0;
    case O_AGENTS: c->agents = value; return 0;
    case O_AGENTTOK: a->agent_token_file = value; return 0;
    case O_NODEKEY: a->node_key_file = value; return 0;
    case O_JOIN: c->join = value; return 0;
    case O_NODENAME:
        if (!link_node_name_ok(value)) {
            fprintf(stderr, "slaqd: %s: a node name has 1 to 63 letters, "
                    "digits, '.', '-' or '_', and does not start with '.'; "
                    "got '%s'\n", where, value);
            return -1;
        }
        c->node_name = value;
        return 0;
    case O_AGENT:
    case O_ENDJOBS:
        if (apply_yes(where, value) < 0)
            return -1;
        *(code == O_AGENT ? &c->agent : &c->end_jobs_at_exit) = 1;
        return 0;
    case O_TCP: c->tcp = value; return 0;
    case O_INIT:
        if (apply_yes(where, value) < 0)
            return -1;
        c->init = 1;
        return 0;
    }
    return APPLY_NOT_MINE;
}

/* Who may do what: tokens, HTTP hosts, allowed users, the admin and
 * socket groups. Returns 0, -1 after an error, or APPLY_NOT_MINE. */
static int apply_access_opt(sd_args *a, int code, const char *value,
                            const char *where)
{
    sd_config *c = a->c;
    switch (code) {
    case O_TOKEN:
        a->token_file = value;
        snprintf(a->token_where, sizeof a->token_where, "%s", where);
        return 0;
    case O_JOBTOKEN:
        a->job_token_file = value;
        snprintf(a->job_token_where, sizeof a->job_token_where, "%s", where);
        return 0;
    case O_HTTPHOST:
        if (c->n_http_hosts == sizeof c->http_hosts / sizeof *c->http_hosts ||
            !*value) {
            fprintf(stderr, "slaqd: %s: at most 16 non-empty values\n",
                    where);
            return -1;
        }
        c->http_hosts[c->n_http_hosts++] = value;
        return 0;
    case O_ALLOWUID: {
        char *end;
        long v = strtol(value, &end, 10);
        if (end == value || *end || v < 0 || v > 0x7fffffffL ||
            c->n_allow_uids == SD_MAX_ALLOW_UIDS) {
            fprintf(stderr, "slaqd: %s wants a numeric user id (at most %d "
                    "of them), got '%s'\n", where, SD_MAX_ALLOW_UIDS, value);
            return -1;
        }
        c->allow_uids[c->n_allow_uids++] = (uid_t)v;
        return 0;
    }
    case O_ADMINGROUP:
        c->admin_group = value;
        return user_group_parse(where, value, &c->admin_gid);
    case O_SOCKGROUP:
        c->socket_group = value;
        return user_group_parse(where, value, &c->socket_gid);
    }
    return APPLY_NOT_MINE;
}

/* The numbers that bound jobs, users and what is kept: grace, threads,
 * kept jobs and days, per-user caps, log and disk sizes, the pin wait.
 * Returns 0, -1 after an error, or APPLY_NOT_MINE. */
static int apply_limit_opt(sd_config *c, int code, const char *value,
                           const char *where)
{
    switch (code) {
    case O_GRACE: return parse_pos(where, value, &c->grace_s);
    case O_JOBTHREADS:
        return parse_bounded(where, value, 4096, 1, &c->job_threads);
    case O_KEEPJOBS:
        return parse_bounded(where, value, 1e9, 1, &c->keep_jobs);
    case O_KEEPDAYS:
        return parse_bounded(where, value, 1e9, 0, &c->keep_days);
    case O_USERJOBS:
        return parse_bounded(where, value, 1e9, 1, &c->user_jobs);
    case O_USERTASKS:
        return parse_bounded(where, value, 1e12, 1, &c->user_tasks);
    case O_USERREPORTS:
        return parse_bounded(where, value, 1e9, 0, &c->user_reports);
    case O_LOGBYTES:
        return parse_bounded(where, value, 1e18, 1, &c->log_bytes);
    case O_USERLOGBYTES:
        return parse_bounded(where, value, 1e18, 1, &c->user_log_bytes);
    case O_DISKRESERVE:
        return parse_bounded(where, value, 1e18, 1, &c->disk_reserve);
    case O_PINWAIT:
        return parse_bounded(where, value, 1e9, 0, &c->pin_wait_s);
    }
    return APPLY_NOT_MINE;
}

/* How slaqd schedules and enforces: enforcement and share modes, the RL
 * model, accounts, fair share and policy moves, verbosity. Returns 0, -1
 * after an error, or APPLY_NOT_MINE. */
static int apply_mode_opt(sd_args *a, int code, const char *value,
                          const char *where)
{
    sd_config *c = a->c;
    switch (code) {
    case O_ENFORCE:
        if (enf_mode_parse(value, &c->enforce)) {
            fprintf(stderr, "slaqd: %s: unknown mode '%s' (expected auto, "
                    "cgroup2, cgroup1, signal or none)\n", where, value);
            return -1;
        }
        return 0;
    case O_SHARE:
        if (strcmp(value, "weight") && strcmp(value, "quota")) {
            fprintf(stderr, "slaqd: %s: expected weight or quota, got '%s'\n",
                    where, value);
            return -1;
        }
        c->share_quota = !strcmp(value, "quota");
        return 0;
    case O_RLMODEL:
        a->rl_model = value;
        snprintf(a->rl_model_where, sizeof a->rl_model_where, "%s", where);
        return 0;
    case O_ACCOUNTS: c->accounts_file = value; return 0;
    case O_FAIRSHARE:
    case O_POLICYMOVES:
        if (strcmp(value, "on") && strcmp(value, "off")) {
            fprintf(stderr, "slaqd: %s wants on or off, got '%s'\n", where,
                    value);
            return -1;
        }
        *(code == O_FAIRSHARE ? &c->fair_share : &c->policy_moves) =
            !strcmp(value, "on");
        return 0;
    case 'v':
        if (!value) {
            c->verbose++;
        } else if (!strcmp(value, "0") || !strcmp(value, "1") ||
                   !strcmp(value, "2")) {
            c->verbose = value[0] - '0';
        } else {
            fprintf(stderr, "slaqd: %s: expected 0, 1 or 2, got '%s'\n",
                    where, value);
            return -1;
        }
        return 0;
    }
    return APPLY_NOT_MINE;
}

/*
 * Applies one setting, from the command line (where = "--NAME") or the
 * configuration file (where = "FILE:LINE: NAME"); value is NULL for the
 * command line's --verbose, which counts. Returns 0 or -1 after an error.
 */
static int apply_opt(void *ctx, int code, const char *value,
                     const char *where)
{
    sd_args *a = ctx;
    sd_config *c = a->c;
    char err[512];
    int set = setopt_apply(&c->sched, code, value, err, sizeof err);
    if (set < 0) {
        /* where ends with the setting's name, which err starts with:
         * "--" or "FILE:LINE: " before it */
        size_t len = strlen(where), name = strlen(setopt_row(code)->name);
        fprintf(stderr, "slaqd: %.*s%s\n", (int)(len >= name ? len - name
                                                               : 0),
                where, err);
        return -1;
    }
    if (set == 0) {
        a->unit_set |= !strcmp(setopt_row(code)->name, "unit");
        return 0;
    }
    int rc = apply_place_opt(a, code, value, where);
    if (rc == APPLY_NOT_MINE)
        rc = apply_access_opt(a, code, value, where);
    if (rc == APPLY_NOT_MINE)
        rc = apply_limit_opt(c, code, value, where);
    if (rc == APPLY_NOT_MINE)
        rc = apply_mode_opt(a, code, value, where);
    return rc == APPLY_NOT_MINE ? -1 : rc;
}

/* Reads an agent's node key file into c->node_key and its node's name
 * into node: the file must be its owner's alone (a key readable by others
 * is everyone's). Returns 0, or -1 with the reason on stderr. */
static int read_node_key(const char *path, sd_config *c,
                         char node[LINK_NODE_MAX + 1])
{
    char buf[LINK_KEY_TEXT_MAX + 64], err[256];
    struct stat st;
    FILE *f = fopen(path, "r");
    if (!f || fstat(fileno(f), &st) < 0) {
        fprintf(stderr, "slaqd: --node-key-file %s: %s\n", path,
                strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    if (S_ISREG(st.st_mode) && (st.st_mode & 077)) {
        fprintf(stderr, "slaqd: --node-key-file %s: readable by others than "
                "its owner (mode %04o); a node's key must be its own: chmod "
                "600 %s\n", path, (unsigned)(st.st_mode & 07777), path);
        fclose(f);
        return -1;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    int rc = link_key_parse(buf, node, c->node_key, err, sizeof err);
    sodium_memzero(buf, sizeof buf);
    if (rc < 0)
        fprintf(stderr, "slaqd: --node-key-file %s: %s\n", path, err);
    return rc;
}

/* An agent's key and name: its node key file names the one node it may
 * register as (docs/security.md, "The cluster"); the cluster's agent
 * token is the controller's alone. */
static int agent_key_args(sd_config *c, sd_args *a)
{
    static char node[LINK_NODE_MAX + 1];
    /* Not for the jobs, and not the agent's: a token in the environment
     * is dropped (it may be there for a controller started alike). */
    int env_token = getenv("SLAQ_AGENT_TOKEN") != NULL;
    unsetenv("SLAQ_AGENT_TOKEN");
    if (a->agent_token_file || (env_token && !a->node_key_file)) {
        fprintf(stderr, "slaqd: --agent takes its node's own key "
                "(--node-key-file FILE, made by `slaq cluster node-key "
                "NODE` from the cluster secret), not the cluster's agent "
                "token (%s), which only the controller holds since agent "
                "link version 2 (docs/security.md, \"The cluster\")\n",
                a->agent_token_file ? "--agent-token-file"
                                    : "SLAQ_AGENT_TOKEN");
        return 2;
    }
    if (!a->node_key_file) {
        fprintf(stderr, "slaqd: --agent needs --node-key-file FILE, its "
                "node's key (`slaq cluster node-key --secret-file "
                "AGENT-TOKEN-FILE --out FILE NODE` writes one)\n");
        return 2;
    }
    if (read_node_key(a->node_key_file, c, node) < 0)
        return 2;
    if (c->node_name && strcmp(c->node_name, node)) {
        fprintf(stderr, "slaqd: --node-key-file %s holds node %s's key, not "
                "%s's (--node-name %s): a node registers only as the node "
                "its key was issued for\n", a->node_key_file, node,
                c->node_name, c->node_name);
        return 2;
    }
    c->node_name = node;
    if (!a->http_set)
        c->http = "off";
    return 0;
}

/* The cluster options: a controller (--agents) needs the agent token,
 * which differs from the other tokens; an agent (--agent --join) its
 * node's key. */
static int cluster_args(sd_config *c, sd_args *a)
{
    if (c->agents && c->agent) {
        fprintf(stderr, "slaqd: --agents (a controller) and --agent (a node "
                        "agent) exclude each other\n");
        return 2;
    }
    if (c->end_jobs_at_exit && !c->agent) {
        fprintf(stderr, "slaqd: --end-jobs-at-exit needs --agent\n");
        return 2;
    }
    if (c->join && !c->agent) {
        fprintf(stderr, "slaqd: --join needs --agent\n");
        return 2;
    }
    if (c->agent && !c->join) {
        fprintf(stderr, "slaqd: --agent needs --join HOST:PORT (the "
                        "controller's --agents address)\n");
        return 2;
    }
    if (a->node_key_file && !c->agent) {
        fprintf(stderr, "slaqd: --node-key-file needs --agent\n");
        return 2;
    }
    if (c->agent)
        return agent_key_args(c, a);
    if (!c->agents) {
        if (a->agent_token_file) {
            fprintf(stderr, "slaqd: --agent-token-file needs --agents (a "
                            "controller)\n");
            return 2;
        }
        return 0;
    }
    const char *env = getenv("SLAQ_AGENT_TOKEN");
    if (a->agent_token_file)
        c->agent_token = read_token("--agent-token-file", a->agent_token_file);
    else if (env && strlen(env) >= 8)
        c->agent_token = strdup(env);
    /* Not for anything slaqd starts (SLAQ_TOKEN's comment). */
    unsetenv("SLAQ_AGENT_TOKEN");
    if (!c->agent_token) {
        fprintf(stderr, "slaqd: --agents needs an agent token of at least 8 "
                "characters (--agent-token-file FILE or SLAQ_AGENT_TOKEN)\n");
        return 2;
    }
    if ((c->token && !strcmp(c->token, c->agent_token)) ||
        (c->job_token && !strcmp(c->job_token, c->agent_token))) {
        fprintf(stderr, "slaqd: the agent token must differ from the control "
                        "and job tokens\n");
        return 2;
    }
    return 0;
}

/* The directory of the running executable, or "" if unknown. */
static void exe_dir(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    out[n > 0 ? n : 0] = 0;
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = 0;
    else
        out[0] = 0;
}

/*
 * The configuration file to read when --config is not given: when this
 * slaqd is the installed one (it runs from SLAQ_BINDIR),
 * SLAQ_SYSCONFDIR/slaq/slaqd.conf; otherwise ./slaqd.conf. NULL when that
 * file does not exist (slaqd then runs on its defaults and flags).
 */
static const char *default_config(void)
{
    static char path[4096];
    char dir[4096];
    exe_dir(dir, sizeof dir);
    if (!strcmp(dir, SLAQ_BINDIR))
        snprintf(path, sizeof path, "%s/slaq/slaqd.conf", SLAQ_SYSCONFDIR);
    else
        snprintf(path, sizeof path, "./slaqd.conf");
    return access(path, F_OK) == 0 ? path : NULL;
}

/* MLF-RL's network, which the scheduler borrows (slaq_sched_config.rl)
 * for the whole run: one per slaqd. */
static slaq_rl_model rl_model;

/*
 * Loads MLF-RL's network into c->sched.rl: the file --rl-model names,
 * which must be a model, or else the default, which may be absent unless
 * the policy needs it. A malformed model is refused with its file and
 * line. An agent divides no cores and loads none. Returns 0, or 2 after
 * printing the error.
 */
static int load_rl_model(sd_config *c, const sd_args *a)
{
    if (c->agent)
        return 0;
    char err[1024];
    if (setopt_model(&c->sched, a->rl_model, &rl_model, err, sizeof err)) {
        fprintf(stderr, "slaqd: %s: %s\n", a->rl_model ? a->rl_model_where
                : "the default --rl-model", err);
        return 2;
    }
    return 0;
}

/*
 * Fills *c from the configuration file, then the command line, which
 * overrides it. *config_text receives the file's text (the settings point
 * into it; free with config_free). Returns 0, 1 for --help or --version,
 * or 2 for bad usage.
 */
static int parse_args(sd_config *c, int argc, char **argv,
                      const char **config_path, char **config_text)
{
    c->state_dir = "./var";
    c->http = "127.0.0.1:7070";
    /* The scheduler's settings start at the table's defaults, but for
     * the cores (this machine's) and the unit (from the cores, below). */
    slaq_sched_config_init(&c->sched);
    c->sched.cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
    c->grace_s = 10;
    c->job_threads = 1;
    c->enforce = SD_ENF_AUTO;
    c->keep_jobs = 10000;
    c->user_jobs = 10000;
    c->user_tasks = 1000000;
    c->user_reports = 2000;
    c->log_bytes = 1073741824.0;       /* 1 GiB a file */
    c->user_log_bytes = 10737418240.0; /* 10 GiB */
    c->disk_reserve = 67108864.0;      /* 64 MiB */
    c->keep_days = 30;
    c->pin_wait_s = SD_PIN_WAIT_S;
    c->policy_moves = 1;
    c->fair_share = 1;
    sd_args a = {.c = c};
    setopt_build(long_opts, own_opts, OWN_OPTS, NULL);
    *config_text = NULL;
    *config_path = NULL;

    /* First pass: only --config, --help and --version, so the file is
     * applied before the flags that override it. */
    int o, explicit_config = 0;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "vhV", long_opts, NULL)) != -1) {
        if (o == O_CONFIG) {
            *config_path = optarg;
            explicit_config = 1;
        } else if (o == 'h') {
            usage(stdout);
            return 1;
        } else if (o == 'V') {
            printf("slaqd %s\n", SLAQ_VERSION);
            return 1;
        }
    }
    if (!explicit_config)
        *config_path = default_config();
    if (*config_path) {
        if (config_read(*config_path, long_opts, file_refused, apply_opt, &a,
                        config_text) < 0)
            return 2;
    }

    optind = 0; /* glibc: start over */
    opterr = 1;
    while ((o = getopt_long(argc, argv, "vhV", long_opts, NULL)) != -1) {
        char where[64] = "";
        for (int i = 0; long_opts[i].name; i++)
            if (long_opts[i].val == o)
                snprintf(where, sizeof where, "--%s", long_opts[i].name);
        if (o == O_CONFIG)
            continue;
        if (o == '?' || o == ':') {
            usage(stderr);
            return 2;
        }
        if (apply_opt(&a, o, o == 'v' || o == O_INIT || o == O_AGENT ||
                               o == O_ENDJOBS ? NULL
                                                                     : optarg,
                      where) < 0)
            return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "slaqd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    slaq_sched_config *sc = &c->sched;
    if (load_rl_model(c, &a))
        return 2;
    /* Default unit: a twentieth of the cores, at most one core. With
     * whole cores on a small machine every job would sit at its minimum
     * share and slaq could not differ from fair. */
    if (!a.unit_set)
        sc->unit = fmin(1.0, sc->cores / 20);
    /* The allocator hands out cores in units, one at a time: bound its
     * work per epoch (a --cores 1e308 or --unit 1e-9 would never end). */
    if (sc->cores / sc->unit > SD_MAX_UNITS) {
        fprintf(stderr, "slaqd: --cores %g in units of %g makes %.3g "
                "allocation units per epoch; at most %d are allowed (raise "
                "--unit or lower --cores)\n", sc->cores, sc->unit,
                sc->cores / sc->unit, SD_MAX_UNITS);
        return 2;
    }
    if (sc->unit > sc->cores) {
        fprintf(stderr, "slaqd: --unit %g is more than the %g cores "
                "managed\n", sc->unit, sc->cores);
        return 2;
    }
    if (a.socket)
        c->socket_path = strdup(a.socket);
    else if (asprintf(&c->socket_path, "%s/slaq.sock", c->state_dir) < 0)
        c->socket_path = NULL;
    if (!c->socket_path)
        return 2;
    if (c->tcp) {
        const char *env = getenv("SLAQ_TOKEN");
        if (a.token_file)
            c->token = read_token(a.token_where, a.token_file);
        else if (env && strlen(env) >= 8)
            c->token = strdup(env);
        if (!c->token) {
            fprintf(stderr, "slaqd: --tcp needs a shared token of at least 8 "
                            "characters (--token-file FILE or SLAQ_TOKEN)\n");
            return 2;
        }
        if (a.job_token_file &&
            !(c->job_token = read_token(a.job_token_where, a.job_token_file)))
            return 2;
        if (c->job_token && !strcmp(c->job_token, c->token)) {
            fprintf(stderr, "slaqd: the job token must differ from the "
                            "control token\n");
            return 2;
        }
    } else if (a.job_token_file) {
        fprintf(stderr, "slaqd: --job-token-file needs --tcp\n");
        return 2;
    }
    return cluster_args(c, &a);
}

static void on_signal(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)events;
    struct signalfd_siginfo si;
    while (read(h->fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
            job_reap_children(d);
            job_dispatch(d); /* a task's core, taken again at once */
        } else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT ||
                   si.ssi_signo == SIGHUP) {
            sd_log(d, 0, "signal %u: shutting down (jobs keep running and "
                         "re-attach at the next start)", si.ssi_signo);
            d->quit = 1;
        }
    }
}

static void drain_timer(int fd)
{
    uint64_t n;
    while (read(fd, &n, sizeof n) == (ssize_t)sizeof n)
        ;
}

static void on_epoch(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)events;
    drain_timer(h->fd);
    job_epoch(d);
}

static void on_tick(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)events;
    drain_timer(h->fd);
    job_tick(d);
    limit_tick(d);
    op_tick(d);
    sweep_tick(d);
    if (d->cfg.agent)
        agent_tick(d);
    conn_tick(d);
    http_run(d);
    if (limit_flush(d) == 0)
        conn_send_acks(d); /* every report accepted so far is committed */
}

static void on_http(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)h;
    (void)events;
    http_run(d);
}

static int timer_open(sd_daemon *d, sd_handler *h, double period,
                      void (*fn)(sd_daemon *, sd_handler *, uint32_t))
{
    h->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (h->fd < 0)
        return -1;
    struct itimerspec it;
    it.it_interval.tv_sec = (time_t)period;
    it.it_interval.tv_nsec = (long)((period - (double)(time_t)period) * 1e9);
    it.it_value = it.it_interval;
    h->fn = fn;
    if (timerfd_settime(h->fd, 0, &it, NULL) < 0 ||
        sd_epoll_add(d, h, EPOLLIN) < 0)
        return -1;
    return 0;
}

/* Creates the state directory and takes its lock (one slaqd per dir). */
static int state_dir_take(const char *dir, int *lockfd)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "slaqd: cannot create state directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/jobs", dir);
    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        fprintf(stderr, "slaqd: cannot create %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* Run as root, slaqd starts jobs as their submitters, who read their
     * logs in STATE/jobs/ID (theirs, users.c): they may pass through STATE
     * and STATE/jobs, but list and read nothing else there. */
    const char *const pass[] = {dir, path};
    for (int i = 0; geteuid() == 0 && i < 2; i++) {
        struct stat st;
        if (stat(pass[i], &st) == 0 && (st.st_mode & 0111) != 0111 &&
            chmod(pass[i], (st.st_mode & 07777) | 0111) < 0) {
            fprintf(stderr, "slaqd: %s: %s\n", pass[i], strerror(errno));
            return -1;
        }
    }
    snprintf(path, sizeof path, "%s/slaqd.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
        fprintf(stderr, "slaqd: %s: %s\n", path,
                errno == EWOULDBLOCK ? "another slaqd is using this state "
                                       "directory" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) < 0 || write(fd, pid, (size_t)n) != n) {
        fprintf(stderr, "slaqd: %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    *lockfd = fd;
    return 0;
}

/* Creates the socket's directory when it is missing (the service's
 * /run/slaq, when slaqd is started without systemd); one level only. */
static int socket_dir_make(const char *sock)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", sock);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "slaqd: cannot create the socket's directory %s: "
                        "%s\n", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* After a failed commit: every job as memory has it (store.c). */
static void rewrite_jobs(void *arg)
{
    sd_daemon *d = arg;
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i])
            store_put_job(d->store, d->jobs[i]);
    for (size_t i = 0; i < d->narrays; i++)
        store_put_array(d->store, d->arrays[i]);
    store_set_last_id(d->store, (int64_t)d->njobs);
}

/* At start: as whom jobs run, who reaches the socket, who administers,
 * and what this slaqd cannot do for other users (docs/slaqd.md, Users). */
static void log_users(sd_daemon *d)
{
    sd_user self;
    user_self(d, &self);
    char reach[160], admins[160] = "";
    if (d->cfg.socket_group)
        snprintf(reach, sizeof reach, "the socket is mode 0660, group %s",
                 d->cfg.socket_group);
    else
        snprintf(reach, sizeof reach, "the socket is mode 0600: only %s "
                 "reaches it", self.uid == 0 ? "root" : "slaqd's user and "
                 "root");
    if (d->cfg.admin_group)
        snprintf(admins, sizeof admins, ", group %s", d->cfg.admin_group);
    if (d->cfg.n_allow_uids)
        snprintf(admins + strlen(admins), sizeof admins - strlen(admins),
                 ", %zu --allow-uid user%s", d->cfg.n_allow_uids,
                 d->cfg.n_allow_uids > 1 ? "s" : "");
    if (user_can_switch()) {
        sd_log(d, 0, "users: jobs run as the users who submit them; %s; "
               "administrators: root%s", reach, admins);
        return;
    }
    sd_log(d, 0, "users: slaqd runs as %s (uid %u), not root: it runs only "
           "%s's jobs; other users who reach the socket may list jobs and "
           "attach their own, but their submits are refused%s; %s; "
           "administrators: %s%s", self.name, (unsigned)self.uid, self.name,
           d->enf.mode == SD_ENF_SIGNAL ? "; no writable cgroup, so shares "
           "are enforced with signals" : "", reach, self.name, admins);
}

static int setup(sd_daemon *d)
{
    char err[512] = "";
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A descriptor per connected job: take all the kernel allows. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    d->task_queue = json_array();
    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    d->sig_h.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d->sig_h.fn = on_signal;
    if (d->epfd < 0 || d->sig_h.fd < 0 || sd_epoll_add(d, &d->sig_h, EPOLLIN)) {
        sd_log(d, 0, "epoll/signalfd: %s", strerror(errno));
        return -1;
    }
    conn_protocol_init(d); /* before any connection is made */
    job_modules_init(d);   /* before any job is made or restored */

    char path[4096];
    snprintf(path, sizeof path, "%s/state.db", d->cfg.state_dir);
    d->store = store_open(path, d->cfg.init, err, sizeof err);
    if (!d->store) {
        sd_log(d, 0, "%s", err);
        return -1;
    }

    store_set_rewrite(d->store, rewrite_jobs, d);

    slaq_sched_config sc = d->cfg.sched;
    if (d->cfg.agents) {
        /* A controller: the agents' nodes, each as it registers (the
         * core's node 0 waits, with no cores, for the first); jobs that
         * fit on no node wait in order. */
        sc.nodes = 1;
        sc.queue = 1;
    }
    d->sched = slaq_sched_new(&sc);
    if (d->sched && d->cfg.agents)
        slaq_sched_set_node_cores(d->sched, 0, 0);
    if (!d->sched) {
        sd_log(d, 0, "cannot create the scheduler (cores %g, epoch %g s)",
               sc.cores, sc.epoch_s);
        return -1;
    }

    if (enf_init(d, d->cfg.enforce, err, sizeof err) < 0) {
        sd_log(d, 0, "--enforce %s: %s", enf_mode_name(d->cfg.enforce), err);
        return -1;
    }
    sd_log(d, 0, "enforcement: %s (%s)", enf_mode_name(d->enf.mode),
           d->enf.detail);

    if (acct_open(d, err, sizeof err) < 0) {
        sd_log(d, 0, "%s", err);
        return -1;
    }
    if (job_restore(d) < 0 || array_restore(d) < 0 || sweep_restore(d) < 0)
        return -1;

    if (socket_dir_make(d->cfg.socket_path) < 0 ||
        conn_listen_unix(d, d->cfg.socket_path) < 0)
        return -1;
    if (d->cfg.tcp && conn_listen_tcp(d, d->cfg.tcp) < 0)
        return -1;
    if (d->cfg.agents && ctl_listen(d, d->cfg.agents) < 0)
        return -1;
    if (d->cfg.agent && agent_start(d) < 0)
        return -1;
    if (strcmp(d->cfg.http, "off")) {
        if (http_start(d, d->cfg.http, err, sizeof err) < 0) {
            sd_log(d, 0, "--http %s: %s", d->cfg.http, err);
            return -1;
        }
        d->http_h.fn = on_http;
        if (d->http_h.fd >= 0 && sd_epoll_add(d, &d->http_h, EPOLLIN) < 0)
            return -1;
    }
    if (timer_open(d, &d->epoch_h, d->cfg.sched.epoch_s, on_epoch) < 0 ||
        timer_open(d, &d->tick_h, SD_TICK_S, on_tick) < 0) {
        sd_log(d, 0, "timerfd: %s", strerror(errno));
        return -1;
    }
    log_users(d);
    store_event(d->store, sd_now(), 0, "start", d->enf.detail);
    store_flush(d->store);
    return 0;
}

static void run(sd_daemon *d)
{
    struct epoll_event evs[256];
    while (!d->quit) {
        int n = epoll_wait(d->epfd, evs, 256, 1000);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            sd_log(d, 0, "epoll_wait: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            sd_handler *h = evs[i].data.ptr;
            if (h->fd >= 0) /* not closed earlier in this turn */
                h->fn(d, h, evs[i].events);
        }
        conn_reap(d);
    }
}

int main(int argc, char **argv)
{
    static sd_daemon daemon_state;
    sd_daemon *d = &daemon_state;
    d->epfd = -1;
    d->http_h.fd = -1;
    /* GSL's default error handler aborts; libslaq leaves the process-wide
     * handler to the program (see slaq.h): a daemon must not abort. */
    gsl_set_error_handler_off();
    const char *config_path;
    char *config_text;
    int rc = parse_args(&d->cfg, argc, argv, &config_path, &config_text);
    /* The secrets slaqd may have been given in its environment, read by
     * parse_args: gone before anything is started. */
    unsetenv("SLAQ_TOKEN");
    unsetenv("SLAQ_AGENT_TOKEN");
    if (rc) {
        free(d->cfg.socket_path);
        free(d->cfg.token);
        config_free(config_text);
        return rc == 1 ? 0 : 2;
    }
    /* The database, its WAL and the socket are slaqd's user's alone; jobs
     * get the submitter's umask back (jobs.c). */
    d->job_umask = umask(0077);
    int lockfd = -1;
    if (state_dir_take(d->cfg.state_dir, &lockfd) < 0) {
        free(d->cfg.socket_path);
        free(d->cfg.token);
        config_free(config_text);
        return 1;
    }
    d->started = sd_now();
    if (setup(d) < 0) {
        rc = 1;
        goto out;
    }
    char http[64] = "off";
    if (d->http)
        snprintf(http, sizeof http, "port %u", d->http_port);
    if (config_path)
        sd_log(d, 0, "configuration: %s", config_path);
    sd_log(d, 0, "ready: pid %d, %g cores in units of %g, policy %s, "
                 "epoch %g s, socket %s, http %s", (int)getpid(),
           d->cfg.sched.cores, d->cfg.sched.unit,
           slaq_policy_name(d->cfg.sched.policy), d->cfg.sched.epoch_s,
           d->cfg.socket_path, http);
    run(d);
    if (d->cfg.agent && d->cfg.end_jobs_at_exit)
        agent_end_jobs(d);
out:
    store_event(d->store, sd_now(), 0, "shutdown", NULL);
    sd_free_state(d);
    conn_unlink_unix(d, d->cfg.socket_path);
    free(d->cfg.socket_path);
    free(d->cfg.token);
    free(d->cfg.job_token);
    free(d->cfg.agent_token);
    free(d->nodes);
    if (d->epfd >= 0)
        close(d->epfd);
    close(lockfd);
    config_free(config_text);
    return rc;
}
