/*
 * conn.c — the protocol on slaqd's connections: the dispatch of each
 * message (docs/protocol.md). The connections' listeners, buffers and
 * output are conn_io.c's, in the bottom layer, so that every layer may
 * send; this file registers itself there as what reads their input and
 * hears of their closing (conn_protocol_init).
 *
 * A connection becomes a job session with its first message "hello", or a
 * control session (the slaq command) with any request api.c knows. Input
 * is read into one shared buffer and split into lines in place; only a
 * partial line is copied into the connection, so an idle connection holds
 * no buffer.
 *
 * A malformed, unknown or oversized message gets an error reply and a log
 * line; only an oversized line (which cannot be resynchronised cheaply) or
 * a failed TCP authentication also closes the connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
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
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/tcp_session.h"
#include "daemon/users.h"

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
                conn_error(d, c, "rate_limited", "too many failed attempts "
                           "from %s; try again in %.1f s", c->peer, wait);
            } else if (!sec || !sd_secret_equal(sec, j->secret)) {
                conn_auth_failed(d, c, "a hello without the job's secret");
                conn_error(d, c, "unauthorized", "job %lld is not this "
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
            conn_error(d, c, "unknown_job", "no job with id %.32s",
                       s ? s : "?");
            free(s);
            c->closing = 1;
            conn_flush(d, c);
            return;
        }
        if (j->array) { /* not in the scheduler: nothing to report to */
            conn_error(d, c, "not_a_job", "job %lld is task %ld of array "
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
        conn_error(d, c, "no_attach", "this slaqd is a %s: a job must be "
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
            conn_error(d, c, "bad_name", "%s", err);
            return;
        }
        j = job_attach(d, name, pid, conn_who(d, c));
        if (!j) {
            conn_error(d, c, "no_memory", "cannot create a job");
            return;
        }
    }
    c->kind = CONN_JOB;
    c->job = j;
    c->acks = json_is_true(json_object_get(msg, "ack"));
    j->conn = c;
    job_declare(d, c, j, msg, 1);
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
    return j->hist.nreports > 0 && json_is_integer(it) &&
           json_integer_value(it) >= 0 &&
           (uint64_t)json_integer_value(it) <= j->hist.last_iter;
}

void conn_send_acks(sd_daemon *d)
{
    char line[64];
    for (sd_conn *c = d->conns; c; c = c->next) {
        sd_job *j = c->job;
        if (!c->acks || !j || j->conn != c || !j->hist.nreports ||
            c->closing || c->wdead)
            continue;
        if (c->acked_any && c->acked_iter == j->hist.last_iter && !c->ack_due)
            continue;
        int n = snprintf(line, sizeof line, "{\"type\":\"ack\",\"iter\":%llu}",
                         (unsigned long long)j->hist.last_iter);
        c->acked_any = 1;
        c->acked_iter = j->hist.last_iter;
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
        conn_error(d, c, "bad_json", "column %d: %s", jerr.column, jerr.text);
        return;
    }
    const char *type = NULL;
    char err[256];
    if (!json_is_object(msg) ||
        !(type = json_string_value(json_object_get(msg, "type")))) {
        conn_error(d, c, "bad_message", "a message must be a JSON object with "
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
            conn_error(d, c, "rate_limited", "too many failed attempts from "
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
            conn_error(d, c, "unauthorized", "%s: over TCP the control "
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
            conn_error(d, c, "no_hello", "send \"hello\" before reports");
        else if (!c->job)
            conn_error(d, c, "bad_report", "this connection's job has ended");
        else if (limit_report(d, c->job) < 0)
            conn_error(d, c, "rate_limited", "report not taken: %s's jobs "
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
            conn_error(d, c, "bad_report", "%s", err);
        else if (d->cfg.agent)
            agent_relay(d, c->job, msg);
    } else if (!strcmp(type, "hello")) {
        if (c->kind == CONN_JOB)
            conn_error(d, c, "bad_message", "hello was already sent");
        else
            on_hello(d, c, msg);
    } else if (!strcmp(type, "info") && c->kind == CONN_JOB) {
        if (c->job)
            job_declare(d, c, c->job, msg, 0);
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
        conn_error(d, c, "unknown_type", "unknown message type \"%.64s\" in a"
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
            conn_error(d, c, "too_long", "a message is limited to %zu bytes",
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
            conn_error(d, c, "too_long", "a message is limited to %zu bytes",
                       line_limit(c));
            c->closing = 1;
            conn_flush(d, c);
            return;
        }
        if (left) {
            if (left > c->rcap && conn_buf_grow(d, c, &c->rbuf, &c->rcap,
                                                left, "partial line") < 0)
                return;
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

/* A connection's events: output written, input read. */
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

/* What the layers above the connection hold of c, let go when it closes:
 * an agent's node, the agent's link upstream, operations it asked for,
 * and its job session (a job not started by slaqd that ends without a
 * goodbye is lost). */
static void on_closed(sd_daemon *d, sd_conn *c)
{
    if (c->agent)
        ctl_conn_closed(d, c);
    if (c->upstream)
        agent_conn_closed(d, c);
    op_conn_closed(d, c);
    sd_job *j = c->job;
    c->job = NULL;
    if (j && j->conn == c) {
        j->conn = NULL;
        if (!j->proc.managed && SD_ACTIVE(j->state))
            job_finish(d, j, 0, 0, c->said_bye ? SD_DONE : SD_LOST,
                       c->said_bye ? NULL : "its connection closed "
                                            "without a goodbye");
    }
}

void conn_protocol_init(sd_daemon *d)
{
    d->conn_input = on_conn;
    d->conn_closed = on_closed;
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
