/*
 * conn.c — slaqd's connections: listeners, buffered newline-delimited JSON
 * I/O, and the dispatch of each message (docs/protocol.md).
 *
 * A connection becomes a job session with its first message "hello", or a
 * control session (the slaq command) with any request api.c knows. Input
 * is read into one shared buffer and split into lines in place; only a
 * partial line is copied into the connection, so an idle connection holds
 * no buffer. Output is queued and written when the socket is writable; a
 * peer that stops reading is dropped once SD_MAX_WBUF bytes wait.
 *
 * A malformed, unknown or oversized message gets an error reply and a log
 * line; only an oversized line (which cannot be resynchronised cheaply) or
 * a failed TCP authentication also closes the connection.
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/agent.h"
#include "daemon/api.h"
#include "daemon/aqpd.h"
#include "daemon/clock.h"
#include "daemon/agent_link.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/tcp_session.h"
#include "daemon/users.h"

static void on_conn(sd_daemon *d, sd_handler *h, uint32_t events);

/*
 * Is a file at path in the way of binding there? 0 when nothing is there
 * or it is a socket nobody listens on (a slaqd that crashed: removed), -1
 * after logging why not when it is not a socket or a live server answers.
 * Another slaqd on another state directory may be told the same --socket.
 */
static int clear_stale_socket(sd_daemon *d, const char *path,
                              const struct sockaddr_un *sa)
{
    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        sd_log(d, 0, "socket %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISSOCK(st.st_mode)) {
        sd_log(d, 0, "socket %s: a file that is not a socket is in the way; "
                     "slaqd does not remove it", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int live = connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0 ||
               (errno != ECONNREFUSED && errno != ENOENT);
    close(fd);
    if (live) {
        sd_log(d, 0, "socket %s: another slaqd is serving it; give this one "
                     "another --socket or --state-dir", path);
        return -1;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        sd_log(d, 0, "socket %s: cannot remove the stale socket: %s", path,
               strerror(errno));
        return -1;
    }
    return 0;
}

int conn_listen_unix(sd_daemon *d, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        sd_log(d, 0, "socket path too long (max %zu bytes): %s",
               sizeof sa.sun_path - 1, path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    if (clear_stale_socket(d, path, &sa) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        goto err;
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    struct stat st;
    /* With --socket-group the group's members may connect (and are told
     * apart by the kernel); else only slaqd's user and root. */
    mode_t mode = d->cfg.socket_group ? 0660 : 0600;
    if (rc == 0 && d->cfg.socket_group &&
        chown(path, (uid_t)-1, d->cfg.socket_gid) < 0) {
        sd_log(d, 0, "socket %s: cannot give it to --socket-group %s: %s "
               "(slaqd must be root or a member of the group)", path,
               d->cfg.socket_group, strerror(errno));
        unlink(path);
        close(fd);
        return -1;
    }
    if (rc < 0 || chmod(path, mode) < 0 || lstat(path, &st) < 0 ||
        listen(fd, 4096) < 0)
        goto err;
    d->sock_dev = st.st_dev;
    d->sock_ino = st.st_ino;
    d->listen_h.fd = fd;
    d->listen_h.fn = conn_accept;
    if (sd_epoll_add(d, &d->listen_h, EPOLLIN) < 0)
        goto err;
    return 0;
err:
    sd_log(d, 0, "socket %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

void conn_unlink_unix(sd_daemon *d, const char *path)
{
    struct stat st;
    if (d->sock_ino && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
        st.st_dev == d->sock_dev && st.st_ino == d->sock_ino)
        unlink(path);
}

int conn_listen_tcp(sd_daemon *d, const char *addr)
{
    if (tcps_admin_key(d) < 0 ||
        conn_listen_at(d, addr, &d->tcp_h, "--tcp") < 0)
        return -1;
    sd_log(d, 0, "TCP listener on %s (sealed sessions; in clear, the job "
           "token only)", addr);
    return 0;
}

int conn_listen_at(sd_daemon *d, const char *addr, sd_handler *h,
                   const char *opt)
{
    char host[256];
    const char *colon = strrchr(addr, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || (size_t)(colon - addr) >= sizeof host || *end ||
        port < 0 || port > 65535) {
        sd_log(d, 0, "%s %s: expected ADDR:PORT", opt, addr);
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        sd_log(d, 0, "%s %s: '%s' is not an IPv4 address", opt, addr, host);
        return -1;
    }
    sa.sin_port = htons((uint16_t)port);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4096)) {
        sd_log(d, 0, "%s %s: %s", opt, addr, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    h->fd = fd;
    h->fn = conn_accept;
    return sd_epoll_add(d, h, EPOLLIN);
}

/*
 * What a new connection may do before it says anything. On the Unix
 * socket the kernel tells who the peer is (SO_PEERCRED): every peer may
 * read, run job sessions and make requests, each request being allowed or
 * refused for that user (api.c, users.c). Over TCP nothing is allowed
 * until a token is shown (on_message).
 */
static void conn_identify(sd_conn *c)
{
    if (c->tcp) {
        int one = 1;
        setsockopt(c->h.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        if (getpeername(c->h.fd, (struct sockaddr *)&sa, &len) < 0 ||
            !inet_ntop(AF_INET, &sa.sin_addr, c->peer, sizeof c->peer))
            snprintf(c->peer, sizeof c->peer, "unknown address");
        c->who.reader = 1; /* nobody until a token says (on_message) */
        c->who.uid = (uid_t)-1;
        c->who_known = 1;
        return;
    }
    struct ucred cred;
    socklen_t len = sizeof cred;
    c->authed = 1;
    c->may_read = 1;
    if (getsockopt(c->h.fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        c->may_control = 1;
        c->who.uid = cred.uid; /* the rest on first use: conn_who */
        c->who.gid = cred.gid;
        snprintf(c->peer, sizeof c->peer, "uid %u", (unsigned)cred.uid);
    } else { /* never on Linux: then it may only read */
        c->who.reader = 1;
        c->who.uid = (uid_t)-1;
        c->who_known = 1;
        snprintf(c->peer, sizeof c->peer, "uid ?");
    }
}

/* The peer's user, its name and rights looked up (passwd, the group
 * database) only when a request needs them: a job's session, the most
 * common connection, never waits for a directory service. */
static const sd_user *conn_who(sd_daemon *d, sd_conn *c)
{
    if (!c->who_known) {
        user_from_uid(d, c->who.uid, c->who.gid, &c->who);
        c->who_known = 1;
    }
    return &c->who;
}

/* ------------------------------------------------- failed authentication */

/* The slot of c's address's failures on c's port (a guesser on the
 * control port does not lock the same address's agent out): its own, a
 * free one, or the oldest. */
static sd_authfail *authfail_slot(sd_daemon *d, const sd_conn *c, int add)
{
    const char *peer = c->peer;
    sd_authfail *oldest = &d->authfail[0];
    for (size_t i = 0; i < SD_AUTH_SLOTS; i++) {
        sd_authfail *a = &d->authfail[i];
        if (a->peer[0] && a->agent == c->agent && !strcmp(a->peer, peer))
            return a;
        if (a->seen < oldest->seen)
            oldest = a;
    }
    if (!add)
        return NULL;
    memset(oldest, 0, sizeof *oldest);
    snprintf(oldest->peer, sizeof oldest->peer, "%s", peer);
    oldest->agent = c->agent;
    return oldest;
}

/* Refills b (rate per second, at most burst) and returns the seconds
 * until it holds one whole failure. */
static double bucket_wait(sd_authrate *b, double rate, double burst,
                          double now)
{
    if (b->last <= 0)
        b->tokens = burst;
    else if (now > b->last)
        b->tokens = fmin(burst, b->tokens + (now - b->last) * rate);
    b->last = now;
    return b->tokens >= 1 ? 0 : (1 - b->tokens) / rate;
}

/* The bucket of the port c came in on. */
static sd_authrate *port_bucket(sd_daemon *d, const sd_conn *c)
{
    return c->agent ? &d->auth_rate_agents : &d->auth_rate_tcp;
}

/*
 * Seconds the peer must still wait before a credential of its is checked
 * (0: now; always on the Unix socket). Three limits: its address's
 * lock-out (below), its port's bucket and all ports' bucket. The buckets
 * hold however many addresses a guesser rotates through (every 127.x.y.z
 * is a local user's): SD_AUTH_PORT_RATE failed checks a second per port,
 * SD_AUTH_ALL_RATE on all together. The price: while someone guesses at
 * that rate, others' attempts on that port are refused too, until it
 * stops (docs/security.md).
 */
double conn_auth_wait(sd_daemon *d, const sd_conn *c)
{
    if (!c->tcp)
        return 0;
    sd_authfail *a = authfail_slot(d, c, 0);
    double now = sd_mono();
    double wait = a && a->until > now ? a->until - now : 0;
    double w = bucket_wait(port_bucket(d, c), SD_AUTH_PORT_RATE,
                           SD_AUTH_PORT_BURST, now);
    if (w > wait)
        wait = w;
    w = bucket_wait(&d->auth_rate_all, SD_AUTH_ALL_RATE, SD_AUTH_ALL_BURST,
                    now);
    if (w > wait)
        wait = w;
    if (wait > 0)
        d->auth_limited_total++;
    return wait;
}

/*
 * A wrong token, job secret or agent-link proof: the peer waits 0.1 s
 * after its first failure, twice as long after each further one in a row
 * (at most SD_AUTH_DELAY_MAX), and attempts in the meantime are refused
 * without being checked — so guessing runs at a few tries a minute, not
 * thousands a second; the failure is also charged to its port's and all
 * ports' buckets (conn_auth_wait). Logged at most once per
 * SD_LOG_INTERVAL with the count.
 */
void conn_auth_failed(sd_daemon *d, sd_conn *c, const char *what)
{
    unsigned fails = 1;
    /* Over TCP only: on the Unix socket every peer of one user would
     * share the lock-out, so a failing one could keep the others' jobs
     * from reconnecting; a 256-bit job secret is not guessed anyway. */
    if (c->tcp) {
        sd_authfail *a = authfail_slot(d, c, 1);
        double now = sd_mono();
        fails = ++a->fails;
        a->seen = now;
        double delay = 0.1 * pow(2, fails > 20 ? 20 : fails - 1);
        a->until = now + (delay < SD_AUTH_DELAY_MAX ? delay
                                                    : SD_AUTH_DELAY_MAX);
        bucket_wait(port_bucket(d, c), SD_AUTH_PORT_RATE, SD_AUTH_PORT_BURST,
                    now);
        port_bucket(d, c)->tokens -= 1;
        bucket_wait(&d->auth_rate_all, SD_AUTH_ALL_RATE, SD_AUTH_ALL_BURST,
                    now);
        d->auth_rate_all.tokens -= 1;
    }
    d->auth_failures_total++;
    uint64_t held;
    if (sd_ratelog_ok(&d->auth_log, &held))
        sd_log(d, 0, "authentication failed: %s from %s (%u in a row; %llu "
               "failures not logged since the previous line)", what, c->peer,
               fails, (unsigned long long)held);
}

void conn_auth_succeeded(sd_daemon *d, const sd_conn *c)
{
    sd_authfail *a = c->tcp ? authfail_slot(d, c, 0) : NULL;
    if (a)
        memset(a, 0, sizeof *a);
}

/*
 * Out of descriptors (or memory): the pending connection cannot be taken,
 * and a level-triggered listener would wake the loop at once, forever. So
 * the listeners leave the epoll set until a connection closes (or, for
 * descriptors freed elsewhere, the next second).
 *
 * Logged once per episode: a busy client population at the limit takes a
 * freed descriptor at once and pauses again, hundreds of times a second.
 * The episode ends when no pause has come for SD_ACCEPT_QUIET_S; its end
 * is logged with the count (accept_episode_end).
 */
#define SD_ACCEPT_QUIET_S 5.0

static void accept_pause(sd_daemon *d, int err)
{
    if (d->accept_paused)
        return;
    d->accept_paused = 1;
    d->accept_pauses++;
    d->accept_last = sd_mono();
    sd_epoll_del(d, &d->listen_h);
    if (d->cfg.tcp)
        sd_epoll_del(d, &d->tcp_h);
    if (!d->accept_logged) {
        sd_log(d, 0, "accept: %s: not accepting connections until a "
               "descriptor is free (%zu open connections; logged once, with "
               "a count when it has not happened for %g s)", strerror(err),
               d->nconns, SD_ACCEPT_QUIET_S);
        d->accept_logged = 1;
        d->accept_episode = d->accept_pauses - 1;
    }
}

/* The end of an episode of pauses, logged with its count. */
static void accept_episode_end(sd_daemon *d, double now)
{
    if (!d->accept_logged || d->accept_paused ||
        now - d->accept_last < SD_ACCEPT_QUIET_S)
        return;
    sd_log(d, 0, "accepting connections again: out of descriptors %llu "
           "times in that episode (%zu open connections)",
           (unsigned long long)(d->accept_pauses - d->accept_episode),
           d->nconns);
    d->accept_logged = 0;
}

static void accept_resume(sd_daemon *d)
{
    if (!d->accept_paused)
        return;
    d->accept_paused = 0;
    sd_epoll_add(d, &d->listen_h, EPOLLIN);
    if (d->cfg.tcp)
        sd_epoll_add(d, &d->tcp_h, EPOLLIN);
}

void conn_accept(sd_daemon *d, sd_handler *h, uint32_t events)
{
    (void)events;
    for (;;) {
        int fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
                errno == ENOMEM)
                accept_pause(d, errno);
            else if (errno != EAGAIN && errno != EINTR &&
                     errno != ECONNABORTED)
                sd_log(d, 0, "accept: %s", strerror(errno));
            return;
        }
        sd_conn *c = conn_add(d, fd, h == &d->tcp_h || h == &d->agents_h);
        if (c && h == &d->agents_h) {
            c->agent = 1;
            c->link = calloc(1, sizeof *c->link);
            if (!c->link)
                conn_close(d, c);
        }
    }
}

sd_conn *conn_add(sd_daemon *d, int fd, int tcp)
{
    sd_conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return NULL;
    }
    c->h.fd = fd;
    c->h.fn = on_conn;
    c->tcp = tcp;
    c->node = -1;
    c->opened = sd_mono();
    conn_identify(c);
    if (sd_epoll_add(d, &c->h, EPOLLIN) < 0) {
        close(fd);
        free(c);
        return NULL;
    }
    c->next = d->conns;
    if (d->conns)
        d->conns->prev = c;
    d->conns = c;
    d->nconns++;
    sd_log(d, 2, "connection %d opened", fd);
    return c;
}

void conn_close(sd_daemon *d, sd_conn *c)
{
    if (c->h.fd < 0)
        return;
    sd_epoll_del(d, &c->h);
    close(c->h.fd);
    c->h.fd = -1;
    if (c->prev)
        c->prev->next = c->next;
    else
        d->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    d->nconns--;
    accept_resume(d);
    if (c->agent)
        ctl_conn_closed(d, c);
    if (c->upstream)
        agent_conn_closed(d, c);
    op_conn_closed(d, c);
    sd_job *j = c->job;
    c->job = NULL;
    if (j && j->conn == c) {
        j->conn = NULL;
        if (!j->managed && SD_ACTIVE(j->state))
            job_finish(d, j, 0, 0, c->said_bye ? SD_DONE : SD_LOST,
                       c->said_bye ? NULL : "its connection closed "
                                            "without a goodbye");
    }
    c->next = d->dead;
    d->dead = c;
}

void conn_reap(sd_daemon *d)
{
    while (d->dead) {
        sd_conn *c = d->dead;
        d->dead = c->next;
        d->buffered -= c->rcap + c->wcap;
        free(c->rbuf);
        free(c->wbuf);
        if (c->link)
            link_wipe(c->link);
        free(c->link);
        free(c);
    }
}

void conn_close_all(sd_daemon *d)
{
    while (d->conns)
        conn_close(d, d->conns);
}

/*
 * The peer stopped reading (EPIPE, ECONNRESET): drop the output but keep
 * the connection until its input is read to the end — a job that sent its
 * last reports and exited must not lose them because our reply failed.
 */
static void conn_write_failed(sd_daemon *d, sd_conn *c)
{
    c->wdead = 1;
    c->woff = c->wlen = 0;
    if (c->closing) /* nothing more to say, nothing more to read */
        conn_close(d, c);
}

static void conn_flush(sd_daemon *d, sd_conn *c)
{
    while (c->woff < c->wlen) {
        ssize_t n = write(c->h.fd, c->wbuf + c->woff, c->wlen - c->woff);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            conn_write_failed(d, c);
            if (c->h.fd < 0)
                return;
            break;
        }
        c->woff += (size_t)n;
    }
    if (c->woff == c->wlen) {
        c->woff = c->wlen = 0;
        if (c->wcap > 65536) { /* give back a burst's buffer */
            d->buffered -= c->wcap;
            free(c->wbuf);
            c->wbuf = NULL;
            c->wcap = 0;
        }
        if (c->closing) {
            conn_close(d, c);
            return;
        }
    }
    int want = c->wlen > 0;
    if (want != c->want_out) {
        c->want_out = want;
        sd_epoll_mod(d, &c->h, EPOLLIN | (want ? EPOLLOUT : 0));
    }
}

/* All connections together would hold more than SD_MAX_BUFFERED: this one,
 * the one asking for more, is closed (counted, logged at a limited rate). */
static void overloaded(sd_daemon *d, sd_conn *c, const char *what)
{
    static sd_ratelog log;
    uint64_t held;
    d->overload_drops++;
    if (sd_ratelog_ok(&log, &held))
        sd_log(d, 0, "connection %d (%s): closed: its %s would take the "
               "buffers of all connections over %d MiB (%llu more such not "
               "logged)", c->h.fd, c->peer, what,
               SD_MAX_BUFFERED / (1024 * 1024), (unsigned long long)held);
    conn_close(d, c);
}

void conn_send_line(sd_daemon *d, sd_conn *c, const char *s, size_t len)
{
    if (!c->link) {
        conn_send_raw(d, c, s, len);
        return;
    }
    if (c->link->state != LINK_OPEN || c->h.fd < 0 || c->wdead)
        return;
    char *sealed = malloc(LINK_SEALED_LEN(len) + 1);
    size_t n = sealed ? link_seal(c->link, s, len, sealed) : 0;
    if (n)
        conn_send_raw(d, c, sealed, n);
    else /* a line skipped would desynchronise the link's count */
        conn_close(d, c);
    free(sealed);
}

void conn_send_raw(sd_daemon *d, sd_conn *c, const char *s, size_t len)
{
    if (c->h.fd < 0 || c->wdead)
        return;
    size_t done = 0; /* bytes of the line and its newline already sent */
    if (c->wlen == 0) { /* nothing queued: straight to the socket */
        struct iovec iov[2] = {{(void *)s, len}, {(void *)"\n", 1}};
        ssize_t n;
        do
            n = writev(c->h.fd, iov, 2);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno != EAGAIN) {
            conn_write_failed(d, c);
            return;
        }
        done = n > 0 ? (size_t)n : 0;
        if (done == len + 1)
            return;
    }
    size_t rest = len + 1 - done;
    if (c->wlen + rest > SD_MAX_WBUF) {
        sd_log(d, 0, "connection %d: %zu bytes unread; dropping it",
               c->h.fd, c->wlen);
        conn_close(d, c);
        return;
    }
    if (c->wlen + rest > c->wcap) {
        size_t cap = c->wcap ? c->wcap : 1024;
        while (cap < c->wlen + rest)
            cap *= 2;
        if (d->buffered - c->wcap + cap > SD_MAX_BUFFERED) {
            overloaded(d, c, "output");
            return;
        }
        char *nb = realloc(c->wbuf, cap);
        if (!nb) {
            conn_close(d, c);
            return;
        }
        d->buffered += cap - c->wcap;
        c->wbuf = nb;
        c->wcap = cap;
        if (d->buffered > d->buffered_max)
            d->buffered_max = d->buffered;
    }
    if (done < len) {
        memcpy(c->wbuf + c->wlen, s + done, len - done);
        c->wlen += len - done;
    }
    c->wbuf[c->wlen++] = '\n';
    conn_flush(d, c);
}

void conn_send(sd_daemon *d, sd_conn *c, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    if (!s)
        return;
    conn_send_line(d, c, s, strlen(s));
    free(s);
}

void conn_refuse(sd_daemon *d, sd_conn *c, const char *code,
                 const char *msg)
{
    json_t *m = json_pack("{s:s, s:s, s:s}", "type", "error", "code", code,
                          "message", msg);
    char *s = m ? json_dumps(m, JSON_COMPACT) : NULL;
    if (s)
        conn_send_raw(d, c, s, strlen(s));
    free(s);
    json_decref(m);
    c->closing = 1;
    if (c->h.fd >= 0)
        conn_flush(d, c);
}

/* Sends {"type":"error","code":..,"message":..} and logs it. */
static void send_error(sd_daemon *d, sd_conn *c, const char *code,
                       const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void send_error(sd_daemon *d, sd_conn *c, const char *code,
                       const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->errors_total++;
    uint64_t held;
    if (sd_ratelog_ok(&d->reject_log, &held))
        sd_log(d, 0, "connection %d%s%lld (%s): %s: %s (%llu rejected "
               "messages not logged since the previous line)", c->h.fd,
               c->job ? ", job " : "", c->job ? (long long)c->job->id : 0LL,
               c->peer, code, msg, (unsigned long long)held);
    json_t *m = json_pack("{s:s, s:s, s:s}", "type", "error", "code", code,
                          "message", msg);
    if (m) {
        conn_send(d, c, m);
        json_decref(m);
    }
}

static int64_t json_job_id(json_t *v)
{
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        long long id = strtoll(s, &end, 10);
        if (end != s && !*end)
            return id;
    }
    return -1;
}

/* The job's own length, "iters" in hello: the end of its curve for the
 * core (slaq_job_opts.iters). A bad value is reported and ignored. */
static void job_declare_iters(sd_daemon *d, sd_conn *c, sd_job *j,
                              json_t *v)
{
    if (!v || json_is_null(v))
        return;
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
        send_error(d, c, "bad_message", "field \"iters\" must be a positive "
                   "integer (the iterations the job will run)");
        return;
    }
    if (j->sj)
        slaq_job_set_iters(j->sj, (uint64_t)json_integer_value(v));
}

/* The job's convergence class, "convergence" in hello or info (overrides
 * the one given at submit). A bad value is reported and ignored. */
static void job_declare_class(sd_daemon *d, sd_conn *c, sd_job *j,
                              json_t *msg)
{
    slaq_convergence cv;
    char err[160];
    int rc = job_convergence_get(msg, &cv, err, sizeof err);
    if (rc < 0)
        send_error(d, c, "bad_message", "%s", err);
    else if (rc > 0 && job_declare_convergence(d, j, cv) < 0)
        send_error(d, c, "no_memory", "cannot change the job's predictor");
}

/* "metric_name" in hello or info: what the job's reports' "metric" is
 * (docs/protocol.md). Stored with the job; a bad value is reported and
 * ignored. */
static void job_declare_metric(sd_daemon *d, sd_conn *c, sd_job *j,
                               json_t *v)
{
    if (!v || json_is_null(v))
        return;
    const char *name = json_string_value(v);
    size_t len = name ? strlen(name) : 0;
    int ok = len >= 1 && len <= SD_METRIC_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            ok = 0;
    if (!ok) {
        send_error(d, c, "bad_message", "field \"metric_name\" must be a "
                   "string of 1 to %d bytes without control characters",
                   SD_METRIC_NAME_MAX);
        return;
    }
    if (j->metric_name && !strcmp(j->metric_name, name))
        return;
    char *copy = strdup(name);
    if (!copy)
        return;
    free(j->metric_name);
    j->metric_name = copy;
    store_put_job(d->store, j);
}

void conn_declare(sd_daemon *d, sd_conn *c, sd_job *j, json_t *msg,
                 int with_kind)
{
    job_declare_iters(d, c, j, json_object_get(msg, "iters"));
    job_declare_class(d, c, j, msg);
    json_t *kind = json_object_get(msg, "kind");
    if (with_kind && kind && !json_is_null(kind)) {
        int k;
        char kerr[160];
        if (!json_is_string(kind) ||
            slaq_job_kind_parse(json_string_value(kind), &k) != SLAQ_OK)
            send_error(d, c, "bad_message", "field \"kind\" must be \"ml\", "
                       "\"query\" or \"exact\"");
        else if (aqpd_set_kind(d, j, k, kerr, sizeof kerr) < 0)
            send_error(d, c, "bad_message", "%s", kerr);
    }
    job_declare_metric(d, c, j, json_object_get(msg, "metric_name"));
}

static void on_hello(sd_daemon *d, sd_conn *c, json_t *msg)
{
    json_t *jid = json_object_get(msg, "job");
    json_t *jpid = json_object_get(msg, "pid");
    pid_t pid = json_is_integer(jpid) ? (pid_t)json_integer_value(jpid) : 0;
    sd_job *j;
    if (jid && !json_is_null(jid)) {
        int64_t id = json_job_id(jid);
        j = id > 0 ? job_get(d, id) : NULL;
        if (j && j->secret[0]) { /* it must prove the job is its own */
            const char *sec = json_string_value(json_object_get(msg,
                                                                "secret"));
            double wait = conn_auth_wait(d, c);
            int ok = 0;
            if (wait > 0) {
                send_error(d, c, "rate_limited", "too many failed attempts "
                           "from %s; try again in %.1f s", c->peer, wait);
            } else if (!sec || !sd_secret_equal(sec, j->secret)) {
                conn_auth_failed(d, c, "a hello without the job's secret");
                send_error(d, c, "unauthorized", "job %lld is not this "
                           "connection's: its hello must carry the job's "
                           "secret (SLAQ_JOB_SECRET)", (long long)j->id);
            } else {
                conn_auth_succeeded(d, c);
                ok = 1;
            }
            if (!ok) {
                c->closing = 1;
                conn_flush(d, c);
                return;
            }
        }
        if (!j) {
            /* A job of a state directory this slaqd does not have: it
             * would only retry, so it is told once and let go. */
            char *s = json_dumps(jid, JSON_ENCODE_ANY);
            send_error(d, c, "unknown_job", "no job with id %.32s",
                       s ? s : "?");
            free(s);
            c->closing = 1;
            conn_flush(d, c);
            return;
        }
        if (j->array) { /* not in the scheduler: nothing to report to */
            send_error(d, c, "not_a_job", "job %lld is task %ld of array "
                       "%lld, which runs on one core and does not report "
                       "(docs/arrays.md)", (long long)j->id, j->array_index,
                       (long long)j->array);
            c->closing = 1;
            conn_flush(d, c);
            return;
        }
        if (!SD_ACTIVE(j->state)) {
            json_t *m = json_pack("{s:s, s:I, s:s}", "type", "stop", "job",
                                  (json_int_t)j->id, "reason",
                                  job_state_name(j->state));
            conn_send(d, c, m);
            json_decref(m);
            return;
        }
        if (j->conn && j->conn != c) {
            sd_log(d, 1, "job %lld: a new connection replaces the old one",
                   (long long)j->id);
            j->conn->job = NULL;
            conn_close(d, j->conn);
        }
    } else if (d->cfg.agent || d->cfg.agents) {
        /* An attached job would run where no node accounts for it. */
        send_error(d, c, "no_attach", "this slaqd is a %s: a job must be "
                   "submitted to the controller (slaq submit), not attached",
                   d->cfg.agent ? "node agent" : "cluster controller");
        c->closing = 1;
        conn_flush(d, c);
        return;
    } else {
        json_t *jname = json_object_get(msg, "name");
        const char *name = json_is_string(jname) ? json_string_value(jname)
                                                 : "attached";
        char err[160];
        if (job_name_check(name, err, sizeof err) < 0) {
            send_error(d, c, "bad_name", "%s", err);
            return;
        }
        j = job_attach(d, name, pid, conn_who(d, c));
        if (!j) {
            send_error(d, c, "no_memory", "cannot create a job");
            return;
        }
    }
    c->kind = CONN_JOB;
    c->job = j;
    c->acks = json_is_true(json_object_get(msg, "ack"));
    j->conn = c;
    conn_declare(d, c, j, msg, 1);
    if (d->cfg.agent)
        agent_relay(d, j, msg);
    sd_log(d, 1, "job %lld: client connected (pid %d)", (long long)j->id,
           (int)pid);
    job_greet(d, j, c);
}

/* A report of an iteration the job has already reported (acknowledged
 * sessions: a resent one). */
static int is_duplicate(const sd_job *j, json_t *msg)
{
    json_t *it = json_object_get(msg, "iter");
    return j->nreports > 0 && json_is_integer(it) &&
           json_integer_value(it) >= 0 &&
           (uint64_t)json_integer_value(it) <= j->last_iter;
}

void conn_send_acks(sd_daemon *d)
{
    char line[64];
    for (sd_conn *c = d->conns; c; c = c->next) {
        sd_job *j = c->job;
        if (!c->acks || !j || j->conn != c || !j->nreports ||
            c->closing || c->wdead)
            continue;
        if (c->acked_any && c->acked_iter == j->last_iter && !c->ack_due)
            continue;
        int n = snprintf(line, sizeof line, "{\"type\":\"ack\",\"iter\":%llu}",
                         (unsigned long long)j->last_iter);
        c->acked_any = 1;
        c->acked_iter = j->last_iter;
        c->ack_due = 0;
        d->acks_sent++;
        conn_send_line(d, c, line, (size_t)n);
    }
}

static void on_message(sd_daemon *d, sd_conn *c, char *line, size_t len)
{
    c->spoke = 1;
    json_error_t jerr;
    json_t *msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!msg) {
        send_error(d, c, "bad_json", "column %d: %s", jerr.column, jerr.text);
        return;
    }
    const char *type = NULL;
    char err[256];
    if (!json_is_object(msg) ||
        !(type = json_string_value(json_object_get(msg, "type")))) {
        send_error(d, c, "bad_message", "a message must be a JSON object with "
                                        "a string field \"type\"");
        goto out;
    }
    if (c->agent) { /* the agent protocol: its own token and messages */
        ctl_message(d, c, msg);
        goto out;
    }
    if (c->upstream) {
        agent_message(d, c, msg);
        goto out;
    }
    if (c->tcp && !c->authed && !strcmp(type, "link_hello")) {
        tcps_start(d, c, line, len); /* a sealed session (tcp_session.c) */
        goto out;
    }
    if (c->tcp && !c->authed) {
        /* In clear, only the job token: the control token and users'
         * credentials are proved in a sealed session, never sent. */
        const char *tok = json_string_value(json_object_get(msg, "token"));
        int cred = json_object_get(msg, "user_token") != NULL;
        double wait = conn_auth_wait(d, c);
        if (wait > 0) {
            send_error(d, c, "rate_limited", "too many failed attempts from "
                       "%s; try again in %.1f s", c->peer, wait);
        } else if (tok && d->cfg.job_token &&
                   sd_secret_equal(tok, d->cfg.job_token)) {
            c->authed = 1; /* job sessions only; attached jobs are slaqd's
                              user's, whom the token's owner vouches for */
            user_self(d, &c->who);
            c->who.admin = 0;
            c->who_known = 1;
        } else {
            conn_auth_failed(d, c, cred ? "a user credential in clear text"
                             : tok ? "a wrong token" : "no token");
            send_error(d, c, "unauthorized", "%s: over TCP the control "
                       "token and users' credentials are proved in a sealed "
                       "session, never sent (docs/protocol.md, \"Sealed "
                       "sessions over TCP\"; the slaq command of this "
                       "version speaks it); a first message in clear may "
                       "carry only the job token (--job-token-file)",
                       cred ? "a user credential sent in clear text is "
                       "refused" : tok ? "a wrong token" : "no token");
        }
        if (!c->authed) {
            c->closing = 1;
            conn_flush(d, c);
            goto out;
        }
        conn_auth_succeeded(d, c);
    }
    if (!strcmp(type, "report")) {
        if (c->kind != CONN_JOB)
            send_error(d, c, "no_hello", "send \"hello\" before reports");
        else if (!c->job)
            send_error(d, c, "bad_report", "this connection's job has ended");
        else if (limit_report(d, c->job) < 0)
            send_error(d, c, "rate_limited", "report not taken: %s's jobs "
                       "sent more than %g reports a second together (slaqd "
                       "--user-reports); report less often",
                       c->job->user ? c->job->user : "this user",
                       d->cfg.user_reports);
        else if (c->acks && is_duplicate(c->job, msg)) {
            /* Resent after a reconnection, but this slaqd had it: it is
             * dropped, and the next commit acknowledges it again. */
            d->reports_duplicate++;
            c->ack_due = 1;
        } else if (job_report(d, c->job, msg, err, sizeof err) < 0)
            send_error(d, c, "bad_report", "%s", err);
        else if (d->cfg.agent)
            agent_relay(d, c->job, msg);
    } else if (!strcmp(type, "hello")) {
        if (c->kind == CONN_JOB)
            send_error(d, c, "bad_message", "hello was already sent");
        else
            on_hello(d, c, msg);
    } else if (!strcmp(type, "info") && c->kind == CONN_JOB) {
        if (c->job)
            conn_declare(d, c, c->job, msg, 0);
        if (c->job && d->cfg.agent)
            agent_relay(d, c->job, msg);
    } else if (!strcmp(type, "bye")) {
        /* Stored at once: a managed job that exits while slaqd is down
         * ended its work, and its restart says so (jobs.c). */
        if (!c->said_bye && c->job && SD_ACTIVE(c->job->state)) {
            store_event(d->store, sd_now(), c->job->id, "bye", NULL);
            store_flush(d->store);
        }
        c->said_bye = 1;
    } else if (!strcmp(type, "ping")) {
        json_t *m = json_pack("{s:s}", "type", "pong");
        conn_send(d, c, m);
        json_decref(m);
    } else if (c->kind == CONN_JOB) {
        send_error(d, c, "unknown_type", "unknown message type \"%.64s\" in a"
                   " job session", type);
    } else if (!c->may_read || (!c->may_control && api_needs_control(msg))) {
        json_t *reply = api_error("forbidden", "permission denied: %s may "
            "not make \"%.64s\" requests (%s)", c->peer, type, c->tcp
            ? "the job token grants job sessions only"
            : "slaqd could not tell who it is");
        json_t *id = json_object_get(msg, "id");
        if (id)
            json_object_set(reply, "id", id);
        d->errors_total++;
        conn_send(d, c, reply);
        json_decref(reply);
    } else {
        d->req_conn = c;
        json_t *reply = api_handle_as(d, msg, conn_who(d, c));
        d->req_conn = NULL;
        if (reply) {
            json_t *id = json_object_get(msg, "id");
            if (id)
                json_object_set(reply, "id", id);
            c->kind = CONN_CONTROL;
            if (json_is_false(json_object_get(reply, "ok")))
                sd_log(d, 1, "request %s: %s", type, json_string_value(
                           json_object_get(reply, "message")));
            conn_send(d, c, reply);
            json_decref(reply);
        }
    }
out:
    json_decref(msg);
}

/*
 * A line on an agent link or a sealed session (link.h): a handshake line
 * while the link is
 * not open, else a sealed message, opened and handed to on_message. A
 * line that does not open (altered, replayed, reordered, or not from the
 * peer that proved the token) closes the connection: nothing after it
 * could be trusted either.
 */
static void link_line(sd_daemon *d, sd_conn *c, char *line, size_t len)
{
    c->spoke = 1;
    if (c->link->state != LINK_OPEN) {
        if (c->agent)
            ctl_handshake(d, c, line, len);
        else if (c->upstream)
            agent_handshake(d, c, line, len);
        else
            tcps_handshake(d, c, line, len);
        return;
    }
    /* The plaintext is parsed at once (on_message), before anything that
     * could read another connection and come back here. */
    static char plain[SD_MAX_REQUEST + 64];
    long n = link_open(c->link, line, len, plain, sizeof plain);
    if (n < 0) {
        if (c->agent || c->upstream)
            d->link_refused_total++;
        uint64_t held;
        if (sd_ratelog_ok(&d->auth_log, &held))
            sd_log(d, 0, "%s (%s): line %llu from the peer does "
                   "not open (altered, replayed, out of order or not "
                   "sealed); connection closed (%llu not logged)",
                   c->upstream ? "agent link to the controller"
                   : c->agent ? "agent link from an agent"
                   : "sealed session",
                   c->peer, (unsigned long long)c->link->rxn + 1,
                   (unsigned long long)held);
        conn_close(d, c);
        return;
    }
    on_message(d, c, plain, (size_t)n);
}

/* The longest line c may send: job sessions are held to less. */
static size_t line_limit(const sd_conn *c)
{
    if (c->link) /* a start carries its environment, sealed */
        return c->link->state == LINK_OPEN ? SD_MAX_SEALED
                                           : LINK_MAX_HANDSHAKE;
    if (c->tcp && !c->authed)
        return SD_MAX_UNAUTH_LINE;
    return c->kind == CONN_JOB || !c->may_control ? SD_MAX_LINE
                                                  : SD_MAX_REQUEST;
}

/* Splits buf into lines, handing each complete one to on_message; returns
 * the number of bytes consumed. */
static size_t handle_lines(sd_daemon *d, sd_conn *c, char *buf, size_t len)
{
    size_t pos = 0;
    while (pos < len && c->h.fd >= 0 && !c->closing) {
        char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (buf + pos));
        if (n > line_limit(c)) {
            send_error(d, c, "too_long", "a message is limited to %zu bytes",
                       line_limit(c));
            c->closing = 1;
            conn_flush(d, c);
            return len;
        }
        if (n > 0 && !(n == 1 && buf[pos] == '\r')) {
            if (c->link)
                link_line(d, c, buf + pos, n);
            else
                on_message(d, c, buf + pos, n);
        }
        pos += n + 1;
    }
    return pos;
}

static void conn_read(sd_daemon *d, sd_conn *c)
{
    /* A partial line (up to SD_MAX_SEALED) plus one read. */
    static char buf[SD_MAX_SEALED + 256 * 1024];
    for (;;) {
        size_t have = 0;
        if (c->rlen) { /* a partial line first */
            memcpy(buf, c->rbuf, c->rlen);
            have = c->rlen;
            c->rlen = 0;
        }
        ssize_t n = read(c->h.fd, buf + have, sizeof buf - have);
        if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
                if (have) { /* put the partial line back */
                    memcpy(c->rbuf, buf, have);
                    c->rlen = have;
                }
                return;
            }
            sd_log(d, 2, "connection %d closed by peer", c->h.fd);
            if (c->agent && c->link && c->link->state == LINK_CHALLENGED)
                ctl_proof_refused(d, c);
            conn_close(d, c);
            return;
        }
        size_t len = have + (size_t)n;
        size_t used = handle_lines(d, c, buf, len);
        if (c->h.fd < 0)
            return;
        if (c->closing) { /* closed once its reply is out: now, if it is */
            conn_flush(d, c);
            return;
        }
        size_t left = len - used;
        if (left > line_limit(c)) {
            send_error(d, c, "too_long", "a message is limited to %zu bytes",
                       line_limit(c));
            c->closing = 1;
            conn_flush(d, c);
            return;
        }
        if (left) {
            if (left > c->rcap) {
                if (d->buffered - c->rcap + left > SD_MAX_BUFFERED) {
                    overloaded(d, c, "partial line");
                    return;
                }
                char *nb = realloc(c->rbuf, left);
                if (!nb) {
                    conn_close(d, c);
                    return;
                }
                d->buffered += left - c->rcap;
                c->rbuf = nb;
                c->rcap = left;
                if (d->buffered > d->buffered_max)
                    d->buffered_max = d->buffered;
            }
            memcpy(c->rbuf, buf + used, left);
            c->rlen = left;
        } else if (c->rcap > 4096) {
            d->buffered -= c->rcap;
            free(c->rbuf);
            c->rbuf = NULL;
            c->rcap = 0;
        }
        if ((size_t)n < sizeof buf - have)
            return; /* drained; level-triggered epoll calls again */
    }
}

void conn_drain(sd_daemon *d, sd_conn *c)
{
    if (c->h.fd >= 0 && !c->closing)
        conn_read(d, c);
}

void conn_settle(sd_daemon *d, sd_job *j)
{
    /* The job may have connected, said hello and reported, all before its
     * exit reached us: take its connection from the backlog and read what
     * every new connection has sent, then what its own has. */
    conn_accept(d, &d->listen_h, 0);
    for (sd_conn *c = d->conns, *next; c; c = next) {
        next = c->next;
        if (c->kind == CONN_NEW)
            conn_drain(d, c);
        if (next && next->h.fd < 0) /* closed meanwhile: start over */
            next = d->conns;
    }
    if (j->conn)
        conn_drain(d, j->conn);
}

static void on_conn(sd_daemon *d, sd_handler *h, uint32_t events)
{
    sd_conn *c = (sd_conn *)h;
    if (events & EPOLLOUT)
        conn_flush(d, c);
    if (c->h.fd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
        if (c->closing) { /* discard input while the reply drains */
            char sink[4096];
            ssize_t n = read(c->h.fd, sink, sizeof sink);
            if (n == 0 || (n < 0 && errno != EAGAIN))
                conn_close(d, c);
        } else {
            conn_read(d, c);
        }
    }
}

void conn_tick(sd_daemon *d)
{
    double now = sd_mono();
    if (now - d->idle_sweep < 1.0)
        return;
    d->idle_sweep = now;
    accept_resume(d); /* a descriptor may have been freed elsewhere */
    accept_episode_end(d, now);
    for (sd_conn *c = d->conns, *next; c; c = next) {
        next = c->next;
        if ((!c->spoke || (c->link && c->link->state != LINK_OPEN)) &&
            !c->closing && now - c->opened > SD_HELLO_TIMEOUT_S) {
            d->idle_closed++;
            sd_log(d, 1, "connection %d (%s): no message in %g s; closed",
                   c->h.fd, c->peer, SD_HELLO_TIMEOUT_S);
            conn_close(d, c);
        }
    }
}
