/*
 * session.h — a slaqd in the test's own process, driven through
 * socketpairs under a clock the test moves (daemon/clock.h): what
 * test_conn.c and test_jobs.c share.
 *
 * The daemon is the fuzzers' (tests/fuzz/fuzz_daemon.h: state in a fresh
 * temporary directory, SQLite in memory, the SLAQ policy on 2 cores, no
 * enforcement); a peer is one end of a socketpair whose other end slaqd
 * holds as a connection on its Unix socket (conn_add), so that the
 * kernel's SO_PEERCRED names the test's own user. Nothing waits on time:
 * the test hands slaqd its input (conn_drain), runs its epoch and tick
 * itself and reads what slaqd wrote, which is in the socket already.
 *
 * Static functions: each test program includes it once.
 */
#ifndef SLAQ_TEST_SESSION_H
#define SLAQ_TEST_SESSION_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "../fuzz/fuzz_daemon.h"
#include "daemon/clock.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/store.h"
#include "daemon/trace.h"

/* The test's clock: 1,000 s of monotonic time, a wall clock in 2023. */
static sd_clock clk;

/* A daemon and its state directory, made by sess_setup. */
typedef struct sess {
    sd_daemon d;
    char dir[64];
} sess;

/* Moves both clocks on by s seconds. */
static inline void clock_advance(double s)
{
    clk.wall += s;
    clk.mono += s;
}

static inline int sess_setup(void **state)
{
    clk = (sd_clock){.wall = 1.7e9, .mono = 1000, .cpu = 0};
    sd_clock_set(&clk);
    sess *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    snprintf(s->dir, sizeof s->dir, "/tmp/slaq-test-session-XXXXXX");
    fuzz_daemon_init(&s->d, s->dir, "session");
    /* The directory of the jobs' logs, as slaqd's start makes it, and a
     * listener of its own, as slaqd's (conn_settle accepts on it). */
    char jobs[128], sock[128];
    snprintf(jobs, sizeof jobs, "%s/jobs", s->dir);
    if (mkdir(jobs, 0700) < 0)
        return -1;
    snprintf(sock, sizeof sock, "%s/slaq.sock", s->dir);
    if (conn_listen_unix(&s->d, sock) < 0)
        return -1;
    *state = s;
    return 0;
}

static inline int sess_teardown(void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    /* A test that failed half-way leaves no process behind. */
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        if (j && j->proc.managed && j->proc.pid > 0 && !j->proc.have_status) {
            kill(-j->proc.pid, SIGKILL);
            waitpid(j->proc.pid, NULL, 0);
        }
    }
    conn_close_all(d);
    conn_reap(d);
    close(d->listen_h.fd);
    job_free_all(d);
    trace_free(d);
    limit_free(d); /* the users a job's end counted (limits.c) */
    store_close(d->store);
    slaq_sched_free(d->sched);
    close(d->epfd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
    int rc = system(cmd);
    free(s);
    sd_clock_set(NULL);
    return rc == 0 ? 0 : -1;
}

/* A peer: the test's end of a socketpair, and slaqd's connection on the
 * other end. */
typedef struct peer {
    int fd;
    sd_conn *c;
    char in[1 << 17];     /* what slaqd wrote, not yet taken as lines */
    size_t inlen;
} peer;

static inline peer *peer_open(sd_daemon *d)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                     0);
    assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
    assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    peer *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->fd = sv[0];
    p->c = conn_add(d, sv[1], 0);
    assert_non_null(p->c);
    return p;
}

static inline void peer_free(peer *p)
{
    if (p->fd >= 0)
        close(p->fd);
    free(p);
}

/* Writes bytes as they are (no newline added); slaqd has not read them. */
static inline void peer_write(peer *p, const char *s, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(p->fd, s + off, n - off);
        assert_true(w > 0);
        off += (size_t)w;
    }
}

/* Sends one line (printf-style, the newline added) and lets slaqd read
 * it. */
static inline void peer_say(sd_daemon *d, peer *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void peer_say(sd_daemon *d, peer *p, const char *fmt, ...)
{
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof line - 1);
    line[n++] = '\n';
    peer_write(p, line, (size_t)n);
    if (p->c->h.fd >= 0)
        conn_drain(d, p->c);
}

/* The next whole line slaqd wrote to the peer, as JSON (a new reference;
 * the test decrefs it), or NULL if there is none. */
static inline json_t *peer_next(peer *p)
{
    for (;;) {
        char *nl = memchr(p->in, '\n', p->inlen);
        if (nl) {
            size_t n = (size_t)(nl - p->in);
            json_error_t e;
            json_t *m = json_loadb(p->in, n, 0, &e);
            if (!m)
                fail_msg("slaqd wrote a line that is not JSON: %.*s",
                         (int)n, p->in);
            memmove(p->in, nl + 1, p->inlen - n - 1);
            p->inlen -= n + 1;
            return m;
        }
        if (p->inlen == sizeof p->in)
            fail_msg("a line of slaqd's longer than %zu bytes", p->inlen);
        ssize_t r = read(p->fd, p->in + p->inlen, sizeof p->in - p->inlen);
        if (r <= 0)
            return NULL;
        p->inlen += (size_t)r;
    }
}

/* The next line slaqd wrote whose "type" is `type`, those before it
 * skipped; fails the test if there is none. */
static inline json_t *peer_expect(peer *p, const char *type)
{
    json_t *m;
    while ((m = peer_next(p))) {
        const char *t = json_string_value(json_object_get(m, "type"));
        if (t && !strcmp(t, type))
            return m;
        json_decref(m);
    }
    fail_msg("slaqd sent no \"%s\"", type);
    return NULL;
}

/* Whether slaqd has written nothing more (a line or part of one). */
static inline int peer_quiet(peer *p)
{
    json_t *m = peer_next(p);
    if (m) {
        char *s = json_dumps(m, JSON_COMPACT);
        print_message("unexpected: %s\n", s ? s : "?");
        free(s);
        json_decref(m);
        return 0;
    }
    return p->inlen == 0;
}

/* Whether slaqd has closed its end: a read sees the end of the stream
 * once what it wrote is taken. */
static inline int peer_closed(peer *p)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(p->fd, buf, sizeof buf);
        if (r == 0)
            return 1;
        if (r < 0)
            return 0; /* EAGAIN: open, nothing to read */
    }
}

/* Attaches a job through p: hello (with ack when `ack`), and returns the
 * welcome's job. */
static inline sd_job *peer_attach(sd_daemon *d, peer *p, const char *name,
                                  int ack)
{
    peer_say(d, p, "{\"type\":\"hello\",\"name\":\"%s\"%s}", name,
             ack ? ",\"ack\":true" : "");
    json_t *w = peer_expect(p, "welcome");
    json_int_t id = json_integer_value(json_object_get(w, "job"));
    json_decref(w);
    sd_job *j = job_get(d, (int64_t)id);
    assert_non_null(j);
    assert_ptr_equal(j->conn, p->c);
    return j;
}

#endif
