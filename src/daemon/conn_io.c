/*
 * conn_io.c — slaqd's connections as byte streams: the listening sockets,
 * accepting, buffered newline-delimited output with its limits, closing,
 * and the rate limits on failed authentication over TCP.
 *
 * This is the bottom layer's half of a connection; what a line means (the
 * protocol, conn.c) is the top layer's. Every layer sends on connections
 * (a job's allocation, an agent's message, an answer to a suspend), so
 * sending lives down here where all of them may include it. The two
 * things this half must hand up, a connection's input and its closing,
 * go through the functions conn.c registers at start-up
 * (conn_protocol_init): a function pointer, because a module below may
 * not name one above, and the epoll handler of a connection already is
 * one.
 *
 * Output is queued and written when the socket is writable; a peer that
 * stops reading is dropped once SD_MAX_WBUF bytes wait.
 */
#include <assert.h>
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

#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/record.h"
#include "daemon/users.h"

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
    assert(d->conn_input); /* conn_protocol_init was called */
    c->h.fd = fd;
    c->h.fn = d->conn_input;
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
    if (d->conn_closed) /* what the layers above let go of with it */
        d->conn_closed(d, c);
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

void conn_flush(sd_daemon *d, sd_conn *c)
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
void conn_overloaded(sd_daemon *d, sd_conn *c, const char *what)
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

int conn_buf_grow(sd_daemon *d, sd_conn *c, char **buf, size_t *cap,
                  size_t want, const char *what)
{
    if (d->buffered - *cap + want > SD_MAX_BUFFERED) {
        conn_overloaded(d, c, what);
        return -1;
    }
    char *nb = realloc(*buf, want);
    if (!nb) {
        conn_close(d, c);
        return -1;
    }
    d->buffered += want - *cap;
    *buf = nb;
    *cap = want;
    if (d->buffered > d->buffered_max)
        d->buffered_max = d->buffered;
    return 0;
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
        if (conn_buf_grow(d, c, &c->wbuf, &c->wcap, cap, "output") < 0)
            return;
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

void conn_error(sd_daemon *d, sd_conn *c, const char *code,
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

/* Reads what c has waiting, as the loop would when it is readable: the
 * protocol's handler (conn_drain). */
static void read_waiting(sd_daemon *d, sd_conn *c)
{
    if (c->h.fd >= 0 && !c->closing)
        c->h.fn(d, &c->h, EPOLLIN);
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
            read_waiting(d, c);
        if (next && next->h.fd < 0) /* closed meanwhile: start over */
            next = d->conns;
    }
    if (j->conn)
        read_waiting(d, j->conn);
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

