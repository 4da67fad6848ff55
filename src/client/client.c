/*
 * client.c — libslaq-client: a training job's side of the slaqd protocol.
 *
 * Everything happens inside the caller's calls, on a non-blocking socket
 * (Unix, or TCP for "tcp:HOST:PORT" with the job token from SLAQ_TOKEN,
 * in clear: docs/protocol.md, "TCP"): queued output is written as far as
 * the socket takes it, input is
 * read until it would block and handled line by line (welcome, alloc, stop,
 * error). When slaqd is not there the client is "offline": reports are
 * dropped and counted, the allocation is the last one known (the default
 * before any), and a reconnect is tried at most once a second. A
 * half-written line is never continued on a new connection: the output
 * buffer is discarded with the old socket, so slaqd sees whole messages.
 *
 * Durable acknowledgement (docs/protocol.md, ack): every report first goes
 * into a ring of reports slaqd has not yet confirmed. The hello asks for
 * acknowledgements; a slaqd that gives them ("ack":true in welcome) later
 * sends {"type":"ack","iter":N} once everything up to N is committed, and
 * the ring drops those. After a reconnection (slaqd was restarted after a
 * kill -9, say) the ring is sent again right after the hello, in
 * iteration order and before any new report, and slaqd drops those it
 * already has: none is lost and none is stored twice. Nothing waits for
 * the welcome, so a report is never held back by a slow training loop.
 * With a slaqd that does not acknowledge, a report leaves the ring as
 * soon as it is queued on the socket (as before acknowledgements).
 * Before any welcome the client cannot know, so offline it keeps its
 * reports only while the address refuses connections (a socket nobody
 * serves: the slaqd that made it was killed and is starting again) and
 * drops them where there is no slaqd at all (no such socket): a job that
 * started or attached while its slaqd restarted lost its first reports.
 *
 * SLAQ_CLIENT_ACK_LOG=FILE (opt-in, for kill -9 soaks: tests/soak) appends
 * "JOB ITER" for every report an ack confirmed, so that a run can be
 * checked against state.db afterwards: a line there is a promise slaqd
 * made to this client.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "slaq/client.h"

#define CL_MAX_WBUF (1024 * 1024) /* queued output before reports drop */
#define CL_MAX_LINE (64 * 1024)
#define CL_RETRY_S 1.0
#define CL_MAX_UNACKED 65536      /* reports kept until slaqd confirms */
#define CL_MAX_VEC_BYTES (64u << 20) /* vector text kept for resending */

typedef struct cl_rep {
    uint64_t iter;
    double loss, cpu_s, samples;
    double metric;               /* NaN: none at this iteration */
    char *vec;                   /* a query's ",\"estimates\":[..]..."
                                    text (owned), or NULL */
    size_t vec_len;
    int threads;                 /* the threads it ran (0: not known) */
    double wall_s;               /* since the previous report (0: first) */
} cl_rep;

struct slaq_client {
    int fd;
    char *path;           /* as given; NULL: offline */
    struct sockaddr_storage addr; /* where it leads */
    socklen_t addrlen;
    int tcp, connecting;  /* TCP: a non-blocking connect in progress */
    char *token;          /* TCP: the shared token (SLAQ_TOKEN) */
    int64_t job_id;
    char *secret;         /* proves the job is ours: SLAQ_JOB_SECRET for a
                             started job, from welcome for an attached one */
    char *name;
    int welcomed;
    double cores, default_cores;
    int have_alloc;       /* cores came from slaqd */
    int advice;           /* the threads slaqd advises (0: none yet) */
    int threads_used;     /* what slaq_client_threads() last returned, or
                             slaq_client_set_threads() said (0: neither) */
    double last_report;   /* monotonic time of the last report (0: none) */
    int stop;
    char *stop_reason;
    uint64_t iters;       /* the job's declared length, 0 if unknown */
    const char *convergence; /* declared class (a static name) or NULL */
    char *metric_name;    /* what the reports' "metric" is, or NULL */
    double last_try;
    uint64_t dropped;
    char *wbuf;
    size_t wlen, woff;
    char rbuf[CL_MAX_LINE];
    size_t rlen;
    int rskip; /* discarding an oversized line */
    /* Reports not yet acknowledged, oldest first (a ring). */
    cl_rep *ring;
    size_t ring_cap, ring_head, ring_n;
    size_t ring_sent;     /* of them, queued on this connection */
    int ask_acks;         /* hello asks for acknowledgements (unless
                             SLAQ_CLIENT_ACK=0, to measure without) */
    int acks;             /* the last welcome said slaqd acknowledges (1)
                             or not (0); -1 before any welcome: kept */
    int refused;          /* the last connect was refused: a slaqd's
                             address with no slaqd yet (restarting) */
    int have_acked;
    uint64_t acked;       /* the last iteration acknowledged */
    size_t vec_bytes;     /* the ring's vector text, at most
                             CL_MAX_VEC_BYTES */
    char *ack_log;        /* SLAQ_CLIENT_ACK_LOG, or NULL */
};

extern char *program_invocation_short_name;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void cl_disconnect(slaq_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->connecting = 0;
    c->welcomed = 0;
    c->wlen = c->woff = 0;
    c->rlen = 0;
    c->rskip = 0;
    c->ring_sent = 0; /* what was queued went with the socket */
}

/* Appends one line; returns -1 if it does not fit (the caller drops it). */
static int cl_queue(slaq_client *c, const char *line, size_t len)
{
    if (c->woff > 0 && c->woff == c->wlen)
        c->woff = c->wlen = 0;
    if (c->wlen + len + 1 > CL_MAX_WBUF) {
        if (c->woff == 0)
            return -1;
        memmove(c->wbuf, c->wbuf + c->woff, c->wlen - c->woff);
        c->wlen -= c->woff;
        c->woff = 0;
        if (c->wlen + len + 1 > CL_MAX_WBUF)
            return -1;
    }
    memcpy(c->wbuf + c->wlen, line, len);
    c->wbuf[c->wlen + len] = '\n';
    c->wlen += len + 1;
    return 0;
}

static cl_rep *ring_at(slaq_client *c, size_t i)
{
    return &c->ring[(c->ring_head + i) % c->ring_cap];
}

/* Adds a report to the ring; -1 when CL_MAX_UNACKED are waiting. */
static int ring_push(slaq_client *c, const cl_rep *r)
{
    if (c->ring_n == c->ring_cap) {
        if (c->ring_cap >= CL_MAX_UNACKED)
            return -1;
        size_t cap = c->ring_cap ? c->ring_cap * 2 : 64;
        cl_rep *nr = malloc(cap * sizeof *nr);
        if (!nr)
            return -1;
        for (size_t i = 0; i < c->ring_n; i++)
            nr[i] = *ring_at(c, i);
        free(c->ring);
        c->ring = nr;
        c->ring_cap = cap;
        c->ring_head = 0;
    }
    c->ring_n++;
    *ring_at(c, c->ring_n - 1) = *r;
    return 0;
}

static void ring_pop(slaq_client *c, size_t n)
{
    if (n > c->ring_n)
        n = c->ring_n;
    for (size_t i = 0; i < n; i++) {
        cl_rep *r = ring_at(c, i);
        c->vec_bytes -= r->vec_len;
        free(r->vec);
        r->vec = NULL;
        r->vec_len = 0;
    }
    c->ring_head = c->ring_cap ? (c->ring_head + n) % c->ring_cap : 0;
    c->ring_n -= n;
    c->ring_sent = c->ring_sent > n ? c->ring_sent - n : 0;
}

/* Appends "JOB ITER" to SLAQ_CLIENT_ACK_LOG for each of the ring's first n
 * reports (those an ack just confirmed), in one write: O_APPEND keeps the
 * lines of jobs sharing the file whole. Best effort: the log is a test's
 * witness, never a reason to fail the job. */
static void ack_log_write(slaq_client *c, size_t n)
{
    if (!c->ack_log || !n)
        return;
    size_t cap = n * 48, at = 0;
    char *buf = malloc(cap);
    if (!buf)
        return;
    for (size_t i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%lld %llu\n",
                               (long long)c->job_id,
                               (unsigned long long)ring_at(c, i)->iter);
    int fd = open(c->ack_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
                  0644);
    if (fd >= 0) {
        ssize_t w = write(fd, buf, at < cap ? at : cap);
        (void)w;
        close(fd);
    }
    free(buf);
}

/* Queues the ring's reports not yet on this connection (after the hello,
 * oldest first), as far as the output buffer takes them. A query's report
 * goes with its vectors, whether it is sent the first time or again. */
static void ring_pump(slaq_client *c)
{
    if (c->fd < 0)
        return;
    char head[256];
    while (c->ring_sent < c->ring_n) {
        const cl_rep *r = ring_at(c, c->ring_sent);
        int n = snprintf(head, sizeof head, "{\"type\":\"report\",\"iter\":"
                         "%llu,\"loss\":%.17g,\"cpu_s\":%.17g,\"samples\":"
                         "%.17g", (unsigned long long)r->iter, r->loss,
                         r->cpu_s, r->samples);
        if (!isnan(r->metric))
            n += snprintf(head + n, sizeof head - (size_t)n,
                          ",\"metric\":%.17g", r->metric);
        if (r->threads > 0)
            n += snprintf(head + n, sizeof head - (size_t)n,
                          ",\"threads\":%d", r->threads);
        if (r->wall_s > 0)
            n += snprintf(head + n, sizeof head - (size_t)n,
                          ",\"wall_s\":%.17g", r->wall_s);
        int rc;
        if (r->vec) {
            size_t len = (size_t)n + r->vec_len + 1;
            char *line = malloc(len + 1);
            if (!line)
                break; /* tried again at the next call */
            memcpy(line, head, (size_t)n);
            memcpy(line + n, r->vec, r->vec_len);
            line[len - 1] = '}';
            rc = cl_queue(c, line, len);
            free(line);
        } else {
            n += snprintf(head + n, sizeof head - (size_t)n, "}");
            rc = cl_queue(c, head, (size_t)n);
        }
        if (rc < 0)
            break;
        c->ring_sent++;
    }
    if (c->acks == 0) /* nobody will confirm them: queued is all we can do */
        ring_pop(c, c->ring_sent);
}

/* Resolves "tcp:HOST:PORT" or a Unix socket path into c->addr; -1 if it
 * cannot be used (the client then stays offline). Name resolution, if
 * HOST is a name, happens here, once, when the client is created. */
static int cl_resolve(slaq_client *c)
{
    if (strncmp(c->path, "tcp:", 4)) {
        struct sockaddr_un *sa = (struct sockaddr_un *)&c->addr;
        if (strlen(c->path) >= sizeof sa->sun_path)
            return -1;
        sa->sun_family = AF_UNIX;
        strcpy(sa->sun_path, c->path);
        c->addrlen = sizeof *sa;
        return 0;
    }
    char host[256];
    const char *hp = c->path + 4, *colon = strrchr(hp, ':');
    if (!colon || (size_t)(colon - hp) >= sizeof host)
        return -1;
    memcpy(host, hp, (size_t)(colon - hp));
    host[colon - hp] = 0;
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || !res)
        return -1;
    memcpy(&c->addr, res->ai_addr, res->ai_addrlen);
    c->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    c->tcp = 1;
    const char *tok = getenv("SLAQ_TOKEN");
    c->token = tok ? strdup(tok) : NULL;
    return 0;
}

static void cl_try_connect(slaq_client *c)
{
    if (!c->path || c->fd >= 0)
        return;
    double now = mono();
    if (c->last_try > 0 && now - c->last_try < CL_RETRY_S)
        return;
    c->last_try = now;
    int fd = socket(c->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
                    SOCK_CLOEXEC, 0);
    if (fd < 0)
        return;
    if (c->tcp) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    if (connect(fd, (struct sockaddr *)&c->addr, c->addrlen) < 0) {
        if (errno != EINPROGRESS) {
            c->refused = errno == ECONNREFUSED;
            close(fd);
            return;
        }
        c->connecting = 1; /* finished in cl_write */
    }
    c->fd = fd;
    json_t *hello = json_pack("{s:s, s:i, s:i, s:s}", "type", "hello",
                              "version", 1, "pid", (int)getpid(), "name",
                              c->name);
    if (hello && c->job_id > 0)
        json_object_set_new(hello, "job", json_integer(c->job_id));
    if (hello && c->job_id > 0 && c->secret)
        json_object_set_new(hello, "secret", json_string(c->secret));
    if (hello && c->token)
        json_object_set_new(hello, "token", json_string(c->token));
    if (hello && c->iters > 0)
        json_object_set_new(hello, "iters", json_integer((json_int_t)c->iters));
    if (hello && c->convergence)
        json_object_set_new(hello, "convergence",
                            json_string(c->convergence));
    if (hello && c->ask_acks)
        json_object_set_new(hello, "ack", json_true());
    if (hello && c->metric_name)
        json_object_set_new(hello, "metric_name", json_string(c->metric_name));
    char *s = hello ? json_dumps(hello, JSON_COMPACT) : NULL;
    json_decref(hello);
    if (!s || cl_queue(c, s, strlen(s)) < 0)
        cl_disconnect(c);
    free(s);
}

/* The thread advice of a welcome or alloc message (a slaqd that gives
 * none leaves the thread rule alone). */
static void cl_advice(slaq_client *c, json_t *m)
{
    json_t *t = json_object_get(m, "threads");
    if (json_is_integer(t) && json_integer_value(t) >= 1 &&
        json_integer_value(t) <= INT_MAX)
        c->advice = (int)json_integer_value(t);
}

static void cl_message(slaq_client *c, const char *line, size_t len)
{
    json_t *m = json_loadb(line, len, 0, NULL);
    const char *type = json_string_value(json_object_get(m, "type"));
    if (!type) {
        json_decref(m);
        return;
    }
    json_t *cores = json_object_get(m, "cores");
    if (!strcmp(type, "welcome")) {
        c->welcomed = 1;
        json_t *id = json_object_get(m, "job");
        if (json_is_integer(id))
            c->job_id = json_integer_value(id);
        const char *secret = json_string_value(json_object_get(m, "secret"));
        if (secret) { /* an attached job's, for its reconnections */
            free(c->secret);
            c->secret = strdup(secret);
        }
        if (json_is_number(cores) && json_number_value(cores) > 0) {
            c->cores = json_number_value(cores);
            c->have_alloc = 1;
        }
        cl_advice(c, m);
        /* The kept reports went out after the hello already (slaqd drops
         * those it has); from now on they stay until acknowledged only if
         * this slaqd acknowledges. */
        c->acks = json_is_true(json_object_get(m, "ack"));
        ring_pump(c);
    } else if (!strcmp(type, "ack")) {
        json_t *it = json_object_get(m, "iter");
        if (json_is_integer(it) && json_integer_value(it) >= 0) {
            uint64_t a = (uint64_t)json_integer_value(it);
            size_t k = 0;
            while (k < c->ring_n && ring_at(c, k)->iter <= a)
                k++;
            ack_log_write(c, k);
            ring_pop(c, k);
            c->acked = a;
            c->have_acked = 1;
        }
    } else if (!strcmp(type, "alloc")) {
        if (json_is_number(cores) && json_number_value(cores) >= 0) {
            c->cores = json_number_value(cores);
            c->have_alloc = 1;
        }
        cl_advice(c, m);
    } else if (!strcmp(type, "stop")) {
        const char *why = json_string_value(json_object_get(m, "reason"));
        c->stop = 1;
        free(c->stop_reason);
        c->stop_reason = strdup(why ? why : "stop");
    } else if (!strcmp(type, "error")) {
        const char *code = json_string_value(json_object_get(m, "code"));
        if (getenv("SLAQ_CLIENT_VERBOSE"))
            fprintf(stderr, "slaq-client: slaqd says %s: %s\n", code,
                    json_string_value(json_object_get(m, "message")));
        if (code && !strcmp(code, "unknown_job")) {
            /* This slaqd does not know the job (its state was reset): stay
             * offline rather than retry forever. */
            free(c->path);
            c->path = NULL;
        }
    }
    json_decref(m);
}

static void cl_read(slaq_client *c)
{
    while (c->fd >= 0 && !c->connecting) {
        ssize_t n = read(c->fd, c->rbuf + c->rlen, sizeof c->rbuf - c->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            cl_disconnect(c);
            return;
        }
        c->rlen += (size_t)n;
        size_t pos = 0;
        char *nl;
        while ((nl = memchr(c->rbuf + pos, '\n', c->rlen - pos))) {
            size_t len = (size_t)(nl - (c->rbuf + pos));
            if (!c->rskip)
                cl_message(c, c->rbuf + pos, len);
            c->rskip = 0;
            pos += len + 1;
        }
        memmove(c->rbuf, c->rbuf + pos, c->rlen - pos);
        c->rlen -= pos;
        if (c->rlen == sizeof c->rbuf) { /* a line longer than we accept */
            c->rlen = 0;
            c->rskip = 1;
        }
    }
}

static void cl_write(slaq_client *c)
{
    if (c->fd >= 0 && c->connecting) {
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};
        int err = 0;
        socklen_t len = sizeof err;
        if (poll(&p, 1, 0) <= 0)
            return; /* still connecting */
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
            c->refused = err == ECONNREFUSED;
            cl_disconnect(c);
            return;
        }
        c->connecting = 0;
    }
    while (c->fd >= 0 && c->woff < c->wlen) {
        ssize_t n = send(c->fd, c->wbuf + c->woff, c->wlen - c->woff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n < 0) {
            cl_disconnect(c);
            return;
        }
        c->woff += (size_t)n;
    }
}

void slaq_client_poll(slaq_client *c)
{
    if (!c)
        return;
    cl_try_connect(c);
    ring_pump(c);
    cl_write(c);
    cl_read(c);
    if (c->woff < c->wlen) /* what the welcome released, say */
        cl_write(c);
}

static double default_cores(void)
{
    const char *e = getenv("SLAQ_DEFAULT_CORES");
    char *end;
    double v = e ? strtod(e, &end) : 0;
    if (e && end != e && !*end && v > 0 && isfinite(v))
        return v;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (double)n : 1;
}

slaq_client *slaq_client_connect(const char *socket_path, int64_t job_id,
                                 const char *name)
{
    slaq_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = -1;
    c->acks = -1;
    c->job_id = job_id > 0 ? job_id : 0;
    c->default_cores = c->cores = default_cores();
    c->wbuf = malloc(CL_MAX_WBUF);
    c->name = strdup(name ? name : program_invocation_short_name);
    c->path = socket_path && *socket_path ? strdup(socket_path) : NULL;
    const char *ack = getenv("SLAQ_CLIENT_ACK");
    c->ask_acks = !(ack && !strcmp(ack, "0"));
    const char *ack_log = getenv("SLAQ_CLIENT_ACK_LOG");
    if (ack_log && *ack_log)
        c->ack_log = strdup(ack_log);
    const char *secret = getenv("SLAQ_JOB_SECRET");
    if (c->job_id > 0 && secret && *secret)
        c->secret = strdup(secret);
    if (!c->wbuf || !c->name || (socket_path && *socket_path && !c->path)) {
        slaq_client_close_timeout(c, 0);
        return NULL;
    }
    if (c->path && cl_resolve(c) < 0) { /* unusable address: offline */
        free(c->path);
        c->path = NULL;
    }
    slaq_client_poll(c);
    return c;
}

slaq_client *slaq_client_open(void)
{
    const char *id = getenv("SLAQ_JOB_ID");
    char *end;
    long long v = id ? strtoll(id, &end, 10) : 0;
    if (id && (end == id || *end || v < 0))
        v = 0;
    return slaq_client_connect(getenv("SLAQ_SOCKET"), v,
                               getenv("SLAQ_JOB_NAME"));
}

/* What a report says of how its iterations ran: the threads the job
 * ran them with, and the wall time since the previous report. */
static void cl_stamp(slaq_client *c, cl_rep *r)
{
    double now = mono();
    r->threads = c->threads_used;
    r->wall_s = c->last_report > 0 ? now - c->last_report : 0;
    c->last_report = now;
}

/* Whether a report made while offline is kept for the next connection:
 * the last slaqd acknowledged, or none has answered yet and the address
 * refuses connections (its slaqd is being restarted); asked for acks. */
static int keep_offline(const slaq_client *c)
{
    return c->ask_acks && (c->acks == 1 || (c->acks == -1 && c->refused));
}

int slaq_client_report(slaq_client *c, uint64_t iter, double loss,
                       double cpu_s, double samples)
{
    return slaq_client_report_metric(c, iter, loss, NAN, cpu_s, samples);
}

int slaq_client_report_metric(slaq_client *c, uint64_t iter, double loss,
                              double metric, double cpu_s, double samples)
{
    if (!isfinite(loss) || !(cpu_s >= 0) || !isfinite(cpu_s) ||
        !(samples >= 0) || !isfinite(samples) || isinf(metric)) {
        errno = EINVAL;
        return -1;
    }
    slaq_client_poll(c);
    /* Offline, a report is kept only for a slaqd that will acknowledge
     * it (it will be sent after the reconnection); else it is dropped. */
    cl_rep r = {iter, loss, cpu_s, samples, metric, NULL, 0, 0, 0};
    cl_stamp(c, &r);
    if ((c->fd < 0 && !keep_offline(c)) || ring_push(c, &r) < 0) {
        c->dropped++;
        return 1;
    }
    ring_pump(c);
    cl_write(c);
    return 0;
}

/* Appends ",\"NAME\":[v,...]" (null for a non-finite value) to buf. */
static size_t put_array(char *buf, size_t len, size_t at, const char *name,
                        const double *v, size_t n)
{
    at += (size_t)snprintf(buf + at, at < len ? len - at : 0, ",\"%s\":[",
                           name);
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0,
                               isfinite(v[i]) ? "%s%.17g" : "%snull",
                               i ? "," : "", v[i]);
    at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "]");
    return at;
}

int slaq_client_report_vector(slaq_client *c, uint64_t iter, double loss,
                              double cpu_s, double samples, size_t n,
                              const double *estimates, const double *lower,
                              const double *upper)
{
    if (!isfinite(loss) || !(cpu_s >= 0) || !isfinite(cpu_s) ||
        !(samples >= 0) || !isfinite(samples) || n > SLAQ_CLIENT_MAX_VECTOR ||
        (n && !estimates)) {
        errno = EINVAL;
        return -1;
    }
    slaq_client_poll(c);
    /* Kept for resending like any report (offline: only for a slaqd that
     * will acknowledge), its vectors as text: ",\"estimates\":[...]...". */
    if (c->fd < 0 && !keep_offline(c)) {
        c->dropped++;
        return 1;
    }
    /* 24 bytes hold any %.17g number or null and its comma. */
    size_t len = 64 + 3 * (n * 25 + 16);
    char *vec = malloc(len);
    if (!vec) {
        c->dropped++;
        return 1;
    }
    size_t at = put_array(vec, len, 0, "estimates", estimates, n);
    if (lower)
        at = put_array(vec, len, at, "lower", lower, n);
    if (upper)
        at = put_array(vec, len, at, "upper", upper, n);
    cl_rep r = {iter, loss, cpu_s, samples, NAN, vec, at, 0, 0};
    cl_stamp(c, &r);
    if (at >= len || c->vec_bytes + at > CL_MAX_VEC_BYTES ||
        ring_push(c, &r) < 0) {
        free(vec);
        c->dropped++;
        return 1;
    }
    c->vec_bytes += at;
    ring_pump(c);
    cl_write(c);
    return 0;
}

int slaq_client_set_metric_name(slaq_client *c, const char *name)
{
    if (!name || !*name || strlen(name) > SLAQ_METRIC_NAME_MAX) {
        errno = EINVAL;
        return -1;
    }
    for (const char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            errno = EINVAL;
            return -1;
        }
    if (c->metric_name && !strcmp(c->metric_name, name))
        return 0;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    free(c->metric_name);
    c->metric_name = copy;
    if (c->fd < 0) /* hello will carry it */
        return 0;
    json_t *m = json_pack("{s:s, s:s}", "type", "info", "metric_name", name);
    char *s = m ? json_dumps(m, JSON_COMPACT) : NULL;
    json_decref(m);
    if (!s || cl_queue(c, s, strlen(s)) < 0)
        cl_disconnect(c);
    else
        cl_write(c);
    free(s);
    return 0;
}

double slaq_client_cores(slaq_client *c)
{
    slaq_client_poll(c);
    return c->cores;
}

void slaq_client_set_iters(slaq_client *c, uint64_t iters)
{
    if (iters == 0 || iters > (uint64_t)INT64_MAX || iters == c->iters)
        return;
    c->iters = iters;
    if (c->fd < 0) /* hello will carry it */
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "{\"type\":\"info\",\"iters\":%llu}",
                     (unsigned long long)iters);
    if (cl_queue(c, line, (size_t)n) < 0)
        cl_disconnect(c);
}

int slaq_client_set_convergence(slaq_client *c, const char *cls)
{
    /* The names slaqd accepts (slaq_convergence_parse). */
    static const char *const names[] = {"sublinear", "linear", "superlinear",
                                        "nonconvex", "unknown"};
    const char *name = NULL;
    for (size_t i = 0; cls && i < sizeof names / sizeof *names; i++)
        if (!strcmp(cls, names[i]))
            name = names[i];
    if (!name)
        return -1;
    if (c->convergence == name)
        return 0;
    c->convergence = name;
    if (c->fd < 0) /* hello will carry it */
        return 0;
    char line[96];
    int n = snprintf(line, sizeof line,
                     "{\"type\":\"info\",\"convergence\":\"%s\"}", name);
    if (cl_queue(c, line, (size_t)n) < 0)
        cl_disconnect(c);
    return 0;
}

int slaq_client_threads_for(double cores, long cpus)
{
    if (cpus < 1)
        cpus = 1;
    if (!(cores + 0.25 >= 1)) /* also NaN */
        return 1;
    if (cores + 0.25 >= (double)cpus)
        return (int)(cpus > INT_MAX ? INT_MAX : cpus);
    return (int)floor(cores + 0.25);
}

int slaq_client_threads(slaq_client *c)
{
    int t = slaq_client_threads_for(slaq_client_cores(c),
                                    sysconf(_SC_NPROCESSORS_ONLN));
    if (c->have_alloc && c->advice > 0 && c->advice < t)
        t = c->advice;
    c->threads_used = t;
    return t;
}

void slaq_client_set_threads(slaq_client *c, int threads)
{
    if (threads >= 1)
        c->threads_used = threads;
}

void slaq_client_set_default_cores(slaq_client *c, double cores)
{
    if (!(cores > 0) || !isfinite(cores))
        return;
    c->default_cores = cores;
    if (!c->have_alloc)
        c->cores = cores;
}

int slaq_client_should_stop(slaq_client *c)
{
    slaq_client_poll(c);
    return c->stop;
}

const char *slaq_client_stop_reason(const slaq_client *c)
{
    return c->stop_reason;
}

int slaq_client_connected(const slaq_client *c)
{
    return c->fd >= 0 && !c->connecting && c->welcomed;
}

int64_t slaq_client_job_id(const slaq_client *c) { return c->job_id; }

uint64_t slaq_client_dropped(const slaq_client *c) { return c->dropped; }

size_t slaq_client_unacked(const slaq_client *c)
{
    return c->acks == 0 ? c->ring_n - c->ring_sent : c->ring_n;
}

int64_t slaq_client_acked(const slaq_client *c)
{
    return c->have_acked ? (int64_t)c->acked : -1;
}

void slaq_client_close_timeout(slaq_client *c, int timeout_ms)
{
    if (!c)
        return;
    double until = mono() + timeout_ms / 1e3;
    /* First every report confirmed (or at least written, to a slaqd that
     * does not confirm), reconnecting if need be, within the time given. */
    while (c->path && slaq_client_unacked(c) > 0 && mono() < until) {
        slaq_client_poll(c);
        if (c->fd >= 0) {
            struct pollfd p = {.fd = c->fd,
                               .events = POLLIN | (c->woff < c->wlen ||
                                                   c->connecting ? POLLOUT
                                                                 : 0)};
            poll(&p, 1, 10);
        } else {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (c->fd >= 0 && !c->connecting) {
        static const char bye[] = "{\"type\":\"bye\"}";
        cl_queue(c, bye, sizeof bye - 1);
        double deadline = until > mono() ? until : mono();
        cl_write(c);
        while (c->fd >= 0 && c->woff < c->wlen && mono() < deadline) {
            struct pollfd p = {.fd = c->fd, .events = POLLOUT};
            poll(&p, 1, 10);
            cl_write(c);
        }
    }
    cl_disconnect(c);
    free(c->path);
    free(c->token);
    free(c->secret);
    free(c->name);
    free(c->metric_name);
    free(c->stop_reason);
    free(c->ack_log);
    free(c->wbuf);
    ring_pop(c, c->ring_n); /* frees the vectors still kept */
    free(c->ring);
    free(c);
}

void slaq_client_close(slaq_client *c)
{
    slaq_client_close_timeout(c, 1000);
}
