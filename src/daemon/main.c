/*
 * main.c — slaqd: options, start-up, and the event loop.
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

#include "daemon/daemon.h"

double sd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double sd_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sd_log(const sd_daemon *d, int level, const char *fmt, ...)
{
    if (d && level > d->cfg.verbose)
        return;
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s slaqd: ", stamp);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaqd [OPTIONS]\n\n"
        "Runs training jobs and re-divides this machine's CPUs among them\n"
        "every epoch by predicted loss reduction. See docs/slaqd.md.\n\n"
        "  --state-dir DIR     state, logs and socket (default ./var)\n"
        "  --socket PATH       job/control socket (default STATE/slaq.sock)\n"
        "  --http ADDR:PORT    HTTP API (default 127.0.0.1:7070; 'off')\n"
        "  --tcp ADDR:PORT     TCP listener for remote jobs (off by default;\n"
        "                      needs --token-file or SLAQ_TOKEN)\n"
        "  --token-file FILE   shared token for TCP clients\n"
        "  --epoch SECONDS     scheduling epoch (default 1)\n"
        "  --policy NAME       slaq | fair | slaq-maxmin (default slaq)\n"
        "  --cores N           cores to manage (default: all online CPUs)\n"
        "  --unit U            allocation unit in cores (default: cores/20,\n"
        "                      at most 1)\n"
        "  --enforce MODE      auto | cgroup2 | cgroup1 | signal | none\n"
        "  --share HOW         weight: cgroup CPU weights proportional to\n"
        "                      the allocation, idle cycles go to the others\n"
        "                      (default); quota: a hard CPU quota at it\n"
        "  --startup-reports K iterations a job reports before it is\n"
        "                      predicted; until then at least a fair share\n"
        "                      (default 3)\n"
        "  --hysteresis H      extra weight of a job's cores from the last\n"
        "                      epoch (default 1; 0 for none)\n"
        "  --horizon-iters N   judge a job's gain over at least N of its\n"
        "                      iterations (default 0: one epoch)\n"
        "  --normalise N       the objective's loss unit: span (a job's\n"
        "                      predicted total reduction; default) or\n"
        "                      max-delta (its largest step, the paper's)\n"
        "  --damping D         move a share only part of the way to the\n"
        "                      policy's new one: D x old + (1 - D) x new\n"
        "                      (default 0.5; 0 for none)\n"
        "  --grace SECONDS     stop request to SIGTERM to SIGKILL (default 10)\n"
        "  -v, --verbose       log every connection and allocation change\n"
        "  -h, --help          this help\n");
}

static int parse_pos(const char *opt, const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || !isfinite(v)) {
        fprintf(stderr, "slaqd: %s wants a positive number, got '%s'\n", opt,
                s);
        return -1;
    }
    *out = v;
    return 0;
}

static char *read_token(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "slaqd: --token-file %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    if (strlen(buf) < 8) {
        fprintf(stderr, "slaqd: --token-file %s: the token must have at "
                        "least 8 characters\n", path);
        return NULL;
    }
    return strdup(buf);
}

/* Returns 0, 1 for --help, or 2 for bad usage. */
static int parse_args(sd_config *c, int argc, char **argv)
{
    enum { O_STATE = 256, O_SOCKET, O_HTTP, O_TCP, O_TOKEN, O_EPOCH,
           O_POLICY, O_CORES, O_UNIT, O_ENFORCE, O_GRACE, O_SHARE,
           O_STARTUP, O_HYST, O_HITERS, O_DAMP, O_NORM };
    static const struct option opts[] = {
        {"state-dir", required_argument, 0, O_STATE},
        {"socket", required_argument, 0, O_SOCKET},
        {"http", required_argument, 0, O_HTTP},
        {"tcp", required_argument, 0, O_TCP},
        {"token-file", required_argument, 0, O_TOKEN},
        {"epoch", required_argument, 0, O_EPOCH},
        {"policy", required_argument, 0, O_POLICY},
        {"cores", required_argument, 0, O_CORES},
        {"unit", required_argument, 0, O_UNIT},
        {"enforce", required_argument, 0, O_ENFORCE},
        {"grace", required_argument, 0, O_GRACE},
        {"share", required_argument, 0, O_SHARE},
        {"startup-reports", required_argument, 0, O_STARTUP},
        {"hysteresis", required_argument, 0, O_HYST},
        {"horizon-iters", required_argument, 0, O_HITERS},
        {"damping", required_argument, 0, O_DAMP},
        {"normalise", required_argument, 0, O_NORM},
        {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    c->state_dir = "./var";
    c->http = "127.0.0.1:7070";
    c->epoch_s = 1;
    c->cores = (double)sysconf(_SC_NPROCESSORS_ONLN);
    c->unit = 0; /* chosen from --cores once it is known */
    c->grace_s = 10;
    c->policy = SLAQ_POLICY_SLAQ;
    c->enforce = SD_ENF_AUTO;
    c->startup_reports = SLAQ_DEFAULT_STARTUP_REPORTS;
    c->hysteresis = SLAQ_DEFAULT_HYSTERESIS;
    c->damping = SLAQ_DEFAULT_DAMPING;
    const char *socket_opt = NULL, *token_file = NULL;
    int o;
    while ((o = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (o) {
        case O_STATE: c->state_dir = optarg; break;
        case O_SOCKET: socket_opt = optarg; break;
        case O_HTTP: c->http = optarg; break;
        case O_TCP: c->tcp = optarg; break;
        case O_TOKEN: token_file = optarg; break;
        case O_EPOCH:
            if (parse_pos("--epoch", optarg, &c->epoch_s)) return 2;
            break;
        case O_CORES:
            if (parse_pos("--cores", optarg, &c->cores)) return 2;
            break;
        case O_UNIT:
            if (parse_pos("--unit", optarg, &c->unit)) return 2;
            break;
        case O_GRACE:
            if (parse_pos("--grace", optarg, &c->grace_s)) return 2;
            break;
        case O_POLICY:
            if (slaq_policy_parse(optarg, &c->policy)) {
                fprintf(stderr, "slaqd: --policy: unknown policy '%s' "
                        "(expected slaq, fair or slaq-maxmin)\n", optarg);
                return 2;
            }
            break;
        case O_ENFORCE:
            if (enf_mode_parse(optarg, &c->enforce)) {
                fprintf(stderr, "slaqd: --enforce: unknown mode '%s' (expected"
                        " auto, cgroup2, cgroup1, signal or none)\n", optarg);
                return 2;
            }
            break;
        case O_NORM:
            if (slaq_norm_parse(optarg, &c->normalise)) {
                fprintf(stderr, "slaqd: --normalise: expected span or "
                        "max-delta, got '%s'\n", optarg);
                return 2;
            }
            break;
        case O_SHARE:
            if (strcmp(optarg, "weight") && strcmp(optarg, "quota")) {
                fprintf(stderr, "slaqd: --share: expected weight or quota, "
                        "got '%s'\n", optarg);
                return 2;
            }
            c->share_quota = !strcmp(optarg, "quota");
            break;
        case O_STARTUP:
        case O_DAMP:
        case O_HITERS:
        case O_HYST: {
            char *end;
            double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v >= 0) || v > 1000 ||
                (o == O_STARTUP && v != floor(v)) || (o == O_DAMP && v >= 1)) {
                fprintf(stderr, "slaqd: %s wants %s, got '%s'\n",
                        o == O_STARTUP ? "--startup-reports"
                        : o == O_HYST ? "--hysteresis"
                        : o == O_DAMP ? "--damping" : "--horizon-iters",
                        o == O_STARTUP ? "a whole number from 0 to 1000"
                        : o == O_DAMP ? "a number in [0, 1)"
                                      : "a number from 0 to 1000", optarg);
                return 2;
            }
            if (o == O_STARTUP)
                c->startup_reports = v;
            else if (o == O_HYST)
                c->hysteresis = v;
            else if (o == O_DAMP)
                c->damping = v;
            else
                c->horizon_iters = v;
            break;
        }
        case 'v': c->verbose++; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "slaqd: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (c->epoch_s < 0.01 || c->epoch_s > 3600) {
        fprintf(stderr, "slaqd: --epoch must be between 0.01 and 3600 s\n");
        return 2;
    }
    if (socket_opt)
        c->socket_path = strdup(socket_opt);
    else if (asprintf(&c->socket_path, "%s/slaq.sock", c->state_dir) < 0)
        c->socket_path = NULL;
    if (!c->socket_path)
        return 2;
    if (c->tcp) {
        const char *env = getenv("SLAQ_TOKEN");
        if (token_file)
            c->token = read_token(token_file);
        else if (env && strlen(env) >= 8)
            c->token = strdup(env);
        if (!c->token) {
            fprintf(stderr, "slaqd: --tcp needs a shared token of at least 8 "
                            "characters (--token-file FILE or SLAQ_TOKEN)\n");
            return 2;
        }
    }
    return 0;
}

static void on_signal(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)events;
    struct signalfd_siginfo si;
    while (read(h->fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD) {
            job_reap_children(d);
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
    http_run(d);
    store_flush(d->store);
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

    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    d->sig_h.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    d->sig_h.fn = on_signal;
    if (d->epfd < 0 || d->sig_h.fd < 0 || sd_epoll_add(d, &d->sig_h, EPOLLIN)) {
        sd_log(d, 0, "epoll/signalfd: %s", strerror(errno));
        return -1;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/state.db", d->cfg.state_dir);
    d->store = store_open(path, err, sizeof err);
    if (!d->store) {
        sd_log(d, 0, "%s", err);
        return -1;
    }

    slaq_sched_config sc;
    slaq_sched_config_init(&sc);
    sc.policy = d->cfg.policy;
    sc.cores = d->cfg.cores;
    /* Default unit: a twentieth of the cores, at most one core. With
     * whole cores on a small machine every job would sit at its minimum
     * share and slaq could not differ from fair. */
    sc.unit = d->cfg.unit > 0 ? d->cfg.unit : fmin(1.0, d->cfg.cores / 20);
    sc.epoch_s = d->cfg.epoch_s;
    sc.startup_reports = (unsigned)d->cfg.startup_reports;
    sc.hysteresis = d->cfg.hysteresis;
    sc.horizon_iters = d->cfg.horizon_iters;
    sc.damping = d->cfg.damping;
    sc.normalise = d->cfg.normalise;
    d->sched = slaq_sched_new(&sc);
    if (!d->sched) {
        sd_log(d, 0, "cannot create the scheduler (cores %g, epoch %g s)",
               d->cfg.cores, d->cfg.epoch_s);
        return -1;
    }

    if (enf_init(d, d->cfg.enforce, err, sizeof err) < 0) {
        sd_log(d, 0, "--enforce %s: %s", enf_mode_name(d->cfg.enforce), err);
        return -1;
    }
    sd_log(d, 0, "enforcement: %s (%s)", enf_mode_name(d->enf.mode),
           d->enf.detail);

    if (job_restore(d) < 0)
        return -1;

    if (conn_listen_unix(d, d->cfg.socket_path) < 0)
        return -1;
    if (d->cfg.tcp && conn_listen_tcp(d, d->cfg.tcp) < 0)
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
    if (timer_open(d, &d->epoch_h, d->cfg.epoch_s, on_epoch) < 0 ||
        timer_open(d, &d->tick_h, SD_TICK_S, on_tick) < 0) {
        sd_log(d, 0, "timerfd: %s", strerror(errno));
        return -1;
    }
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
    int rc = parse_args(&d->cfg, argc, argv);
    if (rc)
        return rc == 1 ? 0 : 2;
    int lockfd = -1;
    if (state_dir_take(d->cfg.state_dir, &lockfd) < 0)
        return 1;
    d->started = sd_now();
    if (setup(d) < 0) {
        rc = 1;
        goto out;
    }
    char http[64] = "off";
    if (d->http)
        snprintf(http, sizeof http, "port %u", d->http_port);
    sd_log(d, 0, "ready: pid %d, %g cores in units of %g, policy %s, "
                 "epoch %g s, socket %s, http %s", (int)getpid(), d->cfg.cores,
           slaq_sched_get_config(d->sched)->unit,
           slaq_policy_name(d->cfg.policy), d->cfg.epoch_s,
           d->cfg.socket_path, http);
    run(d);
out:
    store_event(d->store, sd_now(), 0, "shutdown", NULL);
    conn_close_all(d);
    conn_reap(d);
    http_stop(d);
    if (d->store)
        store_flush(d->store);
    job_free_all(d);
    trace_free(d);
    enf_shutdown(d);
    store_close(d->store);
    slaq_sched_free(d->sched);
    unlink(d->cfg.socket_path);
    free(d->cfg.socket_path);
    free(d->cfg.token);
    if (d->epfd >= 0)
        close(d->epfd);
    close(lockfd);
    return rc;
}
