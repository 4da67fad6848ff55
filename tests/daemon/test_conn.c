/*
 * test_conn.c — slaqd's connections (src/daemon/conn.c, conn_io.c)
 * driven through socketpairs in this process, under a clock the test
 * moves (session.h): a job session's hello, reports and acknowledgements, a
 * report out of order refused with its reason, a line held until its
 * newline, a line over the limit refused at exactly the limit, a silent
 * connection closed at the documented 10 s and not before, an attached
 * job whose client vanishes without a goodbye ending lost, and the limits
 * on failed credentials over TCP (docs/security.md) to the tenth of a
 * second.
 */
#include <math.h>

#include "session.h"

/* hello -> welcome with a new job and its secret; reports go into the
 * job and the database; one ack per commit naming the last iteration,
 * none when nothing advanced; a resent report (at or below it) dropped,
 * counted and acknowledged again. */
static void test_a_session_says_hello_reports_and_is_acknowledged_per_commit(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    peer_say(d, p, "{\"type\":\"hello\",\"name\":\"logreg\",\"ack\":true}");
    json_t *w = peer_expect(p, "welcome");
    assert_int_equal(json_integer_value(json_object_get(w, "job")), 1);
    assert_string_equal(json_string_value(json_object_get(w, "name")),
                        "logreg");
    assert_int_equal(strlen(json_string_value(json_object_get(w, "secret"))),
                     SD_SECRET_LEN);
    assert_true(json_is_true(json_object_get(w, "ack")));
    assert_int_equal(json_integer_value(json_object_get(w, "next_iter")), 0);
    json_decref(w);
    sd_job *j = job_get(d, 1);
    assert_non_null(j);
    assert_int_equal(j->state, SD_RUNNING);
    assert_false(j->proc.managed);

    for (int i = 0; i <= 2; i++) {
        clock_advance(0.1);
        peer_say(d, p, "{\"type\":\"report\",\"iter\":%d,\"loss\":%g}", i,
                 1.0 / (i + 1));
    }
    assert_int_equal(j->hist.nreports, 3);
    assert_int_equal(j->hist.last_iter, 2);
    assert_int_equal(d->reports_total, 3);
    /* Nothing is acknowledged before it is committed. */
    assert_true(peer_quiet(p));
    assert_int_equal(store_flush(d->store), 0);
    conn_send_acks(d);
    json_t *a = peer_expect(p, "ack");
    assert_int_equal(json_integer_value(json_object_get(a, "iter")), 2);
    json_decref(a);
    /* A commit with nothing new for the job: no second ack. */
    assert_int_equal(store_flush(d->store), 0);
    conn_send_acks(d);
    assert_true(peer_quiet(p));
    /* A report resent after a reconnection is dropped, not an error, and
     * acknowledged again at the next commit. */
    peer_say(d, p, "{\"type\":\"report\",\"iter\":1,\"loss\":0.5}");
    assert_int_equal(d->reports_duplicate, 1);
    assert_int_equal(j->hist.nreports, 3);
    assert_int_equal(d->errors_total, 0);
    assert_int_equal(store_flush(d->store), 0);
    conn_send_acks(d);
    a = peer_expect(p, "ack");
    assert_int_equal(json_integer_value(json_object_get(a, "iter")), 2);
    json_decref(a);
    assert_int_equal(d->acks_sent, 2);
    peer_free(p);
}

/* An iteration not after the last one is a bad_report naming both; the
 * session stays open and the job keeps its reports. Without "ack" a
 * repeated iteration is an error too (docs/protocol.md). */
static void test_a_report_out_of_order_is_refused_with_its_reason(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    sd_job *j = peer_attach(d, p, "order", 0);
    peer_say(d, p, "{\"type\":\"report\",\"iter\":5,\"loss\":1.0}");
    assert_true(peer_quiet(p));
    peer_say(d, p, "{\"type\":\"report\",\"iter\":4,\"loss\":0.9}");
    json_t *e = peer_expect(p, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")),
                        "bad_report");
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "iter 4 is not after the previous report's iter 5");
    json_decref(e);
    peer_say(d, p, "{\"type\":\"report\",\"iter\":5,\"loss\":0.9}");
    e = peer_expect(p, "error");
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        "iter 5 is not after the previous report's iter 5");
    json_decref(e);
    assert_int_equal(d->errors_total, 2);
    assert_int_equal(j->hist.nreports, 1);
    assert_int_equal(j->hist.last_iter, 5);
    /* Still served. */
    peer_say(d, p, "{\"type\":\"report\",\"iter\":6,\"loss\":0.8}");
    assert_int_equal(j->hist.nreports, 2);
    peer_say(d, p, "{\"type\":\"ping\"}");
    json_decref(peer_expect(p, "pong"));
    /* A report before hello is refused too, with what to do. */
    peer *q = peer_open(d);
    peer_say(d, q, "{\"type\":\"report\",\"iter\":1,\"loss\":1}");
    e = peer_expect(q, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")),
                        "no_hello");
    json_decref(e);
    peer_free(q);
    peer_free(p);
}

/* A line arriving in pieces is handled once its newline arrives, not
 * before: nothing is answered, no job exists, the piece is held. */
static void test_a_partial_line_is_held_until_its_newline(void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    static const char hello[] = "{\"type\":\"hello\",\"name\":\"split\"}\n";
    size_t half = 12;
    peer_write(p, hello, half);
    conn_drain(d, p->c);
    assert_true(peer_quiet(p));
    assert_int_equal(p->c->rlen, half);
    assert_null(job_get(d, 1));
    assert_false(p->c->spoke);
    /* The rest, and the first half of a report after it. */
    static const char more[] = "{\"type\":\"report\",\"iter\":0,";
    char rest[128];
    snprintf(rest, sizeof rest, "%s%s", hello + half, more);
    peer_write(p, rest, strlen(rest));
    conn_drain(d, p->c);
    json_t *w = peer_expect(p, "welcome");
    assert_string_equal(json_string_value(json_object_get(w, "name")),
                        "split");
    json_decref(w);
    sd_job *j = job_get(d, 1);
    assert_non_null(j);
    assert_int_equal(p->c->rlen, strlen(more));
    assert_int_equal(j->hist.nreports, 0);
    peer_write(p, "\"loss\":2.5}\n", 12);
    conn_drain(d, p->c);
    assert_int_equal(j->hist.nreports, 1);
    assert_true(j->hist.last_loss == 2.5);
    assert_int_equal(p->c->rlen, 0);
    assert_true(peer_quiet(p));
    peer_free(p);
}

/* A report padded with spaces to `len` bytes (without the newline). */
static char *padded_report(size_t len, int iter)
{
    char *line = malloc(len + 2);
    assert_non_null(line);
    int n = snprintf(line, len + 1, "{\"type\":\"report\",\"iter\":%d,"
                     "\"loss\":1.0", iter);
    memset(line + n, ' ', len - (size_t)n - 1);
    line[len - 1] = '}';
    line[len] = '\n';
    line[len + 1] = 0;
    return line;
}

/* In a job session a line may be 65,536 bytes (docs/protocol.md's
 * limits, SD_MAX_LINE): that one is taken, one
 * byte more is refused with too_long and the connection closed (its job,
 * attached, ends lost). The same for a partial line that outgrows the
 * limit before its newline. */
static void test_an_over_long_line_is_refused_at_exactly_the_limit(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    sd_job *j = peer_attach(d, p, "long", 0);
    assert_int_equal(SD_MAX_LINE, 65536);
    char *ok = padded_report(SD_MAX_LINE, 1);
    peer_write(p, ok, SD_MAX_LINE + 1);
    conn_drain(d, p->c);
    free(ok);
    assert_int_equal(j->hist.nreports, 1);
    assert_true(peer_quiet(p));
    char *over = padded_report(SD_MAX_LINE + 1, 2);
    peer_write(p, over, SD_MAX_LINE + 2);
    conn_drain(d, p->c);
    free(over);
    json_t *e = peer_expect(p, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")),
                        "too_long");
    char want[64];
    snprintf(want, sizeof want, "a message is limited to %d bytes",
             SD_MAX_LINE);
    assert_string_equal(json_string_value(json_object_get(e, "message")),
                        want);
    json_decref(e);
    assert_int_equal(j->hist.nreports, 1);
    assert_true(peer_closed(p));
    assert_int_equal(j->state, SD_LOST);

    /* No newline at all: refused once the held part passes the limit. */
    peer *q = peer_open(d);
    peer_attach(d, q, "endless", 0);
    char *chunk = malloc(SD_MAX_LINE + 1);
    memset(chunk, ' ', SD_MAX_LINE + 1);
    chunk[0] = '{';
    peer_write(q, chunk, SD_MAX_LINE);
    conn_drain(d, q->c);
    assert_true(peer_quiet(q));
    assert_int_equal(q->c->rlen, SD_MAX_LINE);
    peer_write(q, chunk, 1);
    conn_drain(d, q->c);
    free(chunk);
    e = peer_expect(q, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")),
                        "too_long");
    json_decref(e);
    assert_true(peer_closed(q));
    peer_free(q);
    peer_free(p);
}

/* A connection that sends no whole message is closed once
 * SD_HELLO_TIMEOUT_S (10 s) has passed, not before; one that spoke is
 * kept however long it is silent. */
static void test_a_silent_connection_is_closed_after_10_s_and_not_before(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *silent = peer_open(d);
    peer *talker = peer_open(d);
    peer_attach(d, talker, "talker", 0);
    peer_write(silent, "{\"type\":", 8); /* a part is not a message */
    conn_drain(d, silent->c);
    clock_advance(9.5); /* the 10 s of docs/protocol.md's limits */
    conn_tick(d);
    assert_false(peer_closed(silent));
    assert_int_equal(d->idle_closed, 0);
    clock_advance(1.0); /* 10.5 s: the tick's next sweep closes it */
    conn_tick(d);
    assert_true(peer_closed(silent));
    assert_int_equal(d->idle_closed, 1);
    assert_int_equal(d->nconns, 1);
    clock_advance(3600);
    conn_tick(d);
    assert_false(peer_closed(talker));
    assert_int_equal(d->idle_closed, 1);
    peer_free(silent);
    peer_free(talker);
}

/* An attached job's client that closes without "bye" leaves its job lost
 * (with the reason), out of the scheduler; one that said bye is done. */
static void test_a_lost_clients_job_ends_lost_and_a_goodbye_ends_done(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    peer *q = peer_open(d);
    sd_job *lost = peer_attach(d, p, "vanishes", 0);
    sd_job *done = peer_attach(d, q, "leaves", 0);
    peer_say(d, p, "{\"type\":\"report\",\"iter\":0,\"loss\":1}");
    assert_int_equal(slaq_sched_count(d->sched), 2);
    close(p->fd);
    p->fd = -1;
    conn_drain(d, p->c);
    assert_int_equal(lost->state, SD_LOST);
    assert_string_equal(lost->reason,
                        "its connection closed without a goodbye");
    assert_null(lost->sj);
    assert_null(lost->conn);
    assert_true(lost->ended == clk.wall);
    peer_say(d, q, "{\"type\":\"bye\"}");
    close(q->fd);
    q->fd = -1;
    conn_drain(d, q->c);
    assert_int_equal(done->state, SD_DONE);
    assert_int_equal(slaq_sched_count(d->sched), 0);
    conn_reap(d);
    assert_null(d->conns);
    peer_free(p);
    peer_free(q);
}

/* A TCP peer as the failed-credential limits see it: its address and
 * port (the control port, or the agent port with `agent`). */
static sd_conn tcp_peer(const char *addr, int agent)
{
    sd_conn c = {.tcp = 1, .agent = agent, .node = -1};
    snprintf(c.peer, sizeof c.peer, "%s", addr);
    return c;
}

/* One guess from c: 1 if its credential would be checked (and it is
 * wrong: charged), 0 if refused unchecked. */
static int guess(sd_daemon *d, sd_conn *c)
{
    if (conn_auth_wait(d, c) > 0)
        return 0;
    conn_auth_failed(d, c, "a wrong token");
    return 1;
}

/* From ever new addresses, one port checks 4 wrong credentials at once
 * and then one each 0.2 s: 9 in the second after the first; the other
 * port has a bucket of its own, but all ports together check 8 at once
 * and then 8 a second, where the two ports' buckets would let 10
 * through. One address is locked out for 0.1 s after a failure, 0.2 s
 * after the next, doubling. */
static void test_failed_credentials_over_tcp_are_limited_per_port_and_in_all(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    char addr[48];
    int n = 0, checked = 0;
#define FRESH(agent) (snprintf(addr, sizeof addr, "127.0.%d.%d", n / 250,  \
                               n % 250 + 1), n++, tcp_peer(addr, agent))
    for (int i = 0; i < 20; i++) {
        sd_conn c = FRESH(0);
        checked += guess(d, &c);
    }
    assert_int_equal(checked, 4);
    sd_conn c = FRESH(0);
    assert_true(fabs(conn_auth_wait(d, &c) - 0.2) < 1e-9);
    for (int k = 1; k <= 5; k++) {
        clock_advance(0.2);
        sd_conn a = FRESH(0), b = FRESH(0);
        assert_int_equal(guess(d, &a), 1);
        assert_int_equal(guess(d, &b), 0);
        checked++;
    }
    assert_int_equal(checked, 9);
    /* The agent port has its own bucket: 4 more at once. */
    int agent = 0;
    for (int i = 0; i < 10; i++) {
        sd_conn a = FRESH(1);
        agent += guess(d, &a);
    }
    assert_int_equal(agent, 4);
    /* Both ports, their buckets full again: 4 + 4 at once; then, a
     * quarter of a second at a time, the ports would check 5 + 5 in the
     * second but all ports together check 8. */
    clock_advance(1.0);
    int both = 0;
    for (int i = 0; i < 10; i++) {
        sd_conn a = FRESH(0), b = FRESH(1);
        both += guess(d, &a) + guess(d, &b);
    }
    assert_int_equal(both, 8);
    both = 0;
    for (int k = 0; k < 4; k++) {
        clock_advance(0.25);
        for (int i = 0; i < 5; i++) {
            sd_conn a = FRESH(0), b = FRESH(1);
            both += guess(d, &a) + guess(d, &b);
        }
    }
    assert_int_equal(both, 8);
    assert_int_equal(d->auth_failures_total, 9 + 4 + 8 + 8);
    assert_true(d->auth_limited_total > 0);
#undef FRESH

    /* One address: 0.1 s, then 0.2 s, then 0.4 s refused unchecked. */
    clock_advance(60);
    sd_conn one = tcp_peer("10.0.0.1", 0);
    double wait[3];
    for (int k = 0; k < 3; k++) {
        assert_int_equal(guess(d, &one), 1);
        wait[k] = conn_auth_wait(d, &one);
        clock_advance(wait[k]);
    }
    assert_true(fabs(wait[0] - 0.1) < 1e-9 && fabs(wait[1] - 0.2) < 1e-9 &&
                fabs(wait[2] - 0.4) < 1e-9);
    /* A success forgets the address's failures. */
    conn_auth_succeeded(d, &one);
    assert_int_equal(guess(d, &one), 1);
    assert_true(fabs(conn_auth_wait(d, &one) - 0.1) < 1e-9);
    /* The Unix socket is never limited. */
    sd_conn local = {.tcp = 0};
    assert_true(conn_auth_wait(d, &local) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_a_session_says_hello_reports_and_is_acknowledged_per_commit,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_report_out_of_order_is_refused_with_its_reason,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_partial_line_is_held_until_its_newline, sess_setup,
            sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_an_over_long_line_is_refused_at_exactly_the_limit,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_silent_connection_is_closed_after_10_s_and_not_before,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_lost_clients_job_ends_lost_and_a_goodbye_ends_done,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_failed_credentials_over_tcp_are_limited_per_port_and_in_all,
            sess_setup, sess_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
