/*
 * test_jobs.c — slaqd's job table (src/daemon/jobs.c) driven through
 * socketpairs in this process under a clock the test moves (session.h):
 * the epoch divides the cores among the jobs that report and moves them
 * at the next epoch when a new job arrives, telling each job only of a
 * change; a falling share is held back until the job follows its thread
 * advice or for SD_ADVICE_WAIT_S, no longer; an attached job asked to
 * stop that does not leave is ended once the grace period has passed,
 * not before; a job slaqd started, with no client to hear the stop, gets
 * SIGTERM at once and, ignoring it, SIGKILL at the grace period. No test
 * sleeps for slaqd's time: an epoch is a call, a second is a number
 * added to the clock; only the kernel's delivery of a signal to a real
 * process is waited for.
 */
#include <math.h>
#include <signal.h>
#include <sys/wait.h>

#include "daemon/users.h"
#include "session.h"

/* One iteration's report of a job whose loss falls as 10 / (iter + 1),
 * a quarter of a second after the previous one. */
static void report(sd_daemon *d, peer *p, int iter, int threads)
{
    peer_say(d, p, "{\"type\":\"report\",\"iter\":%d,\"loss\":%.17g,"
             "\"cpu_s\":0.25,\"threads\":%d}", iter, 10.0 / (iter + 1),
             threads);
}

/* An epoch's second: four reports from each peer given (iterations
 * it[i], moved on), then the epoch. */
static void epoch_second(sd_daemon *d, peer **p, int *it, size_t n,
                         int threads)
{
    for (int r = 0; r < 4; r++) {
        clock_advance(0.25);
        for (size_t i = 0; i < n; i++)
            report(d, p[i], it[i]++, threads);
    }
    job_epoch(d);
}

/* The cores of the next "alloc" p was sent, and its epoch. */
static double next_alloc(peer *p, uint64_t *epoch)
{
    json_t *m = peer_expect(p, "alloc");
    double cores = json_number_value(json_object_get(m, "cores"));
    *epoch = (uint64_t)json_integer_value(json_object_get(m, "epoch"));
    assert_true(json_integer_value(json_object_get(m, "threads")) >= 1);
    json_decref(m);
    return cores;
}

/* A job alone has every core from its first epoch; a second job with a
 * whole curve ahead takes most of them at the very next epoch (SLAQ: the
 * larger predicted loss reduction), the first keeping at least one unit;
 * the sum is the cluster's 2 cores. Each job hears of a change once, in
 * an alloc naming the epoch, and of no epoch that changed nothing. */
static void test_an_epoch_divides_the_cores_and_the_next_moves_them(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p[2] = {peer_open(d), peer_open(d)};
    int it[2] = {0, 0};
    sd_job *a = peer_attach(d, p[0], "old", 0);
    assert_true(a->enf.alloc == 0);
    epoch_second(d, p, it, 1, 1);
    uint64_t ep;
    assert_true(next_alloc(p[0], &ep) == 2.0);
    assert_int_equal(ep, 1);
    assert_true(a->enf.alloc == 2.0);
    for (int k = 0; k < 8; k++)
        epoch_second(d, p, it, 1, 1);
    assert_int_equal(d->epoch_no, 9);
    /* 2 cores each epoch: what it heard since (a change of thread advice
     * after a report is sent at once) names no other share. */
    json_t *m;
    while ((m = peer_next(p[0]))) {
        assert_true(json_number_value(json_object_get(m, "cores")) == 2.0);
        json_decref(m);
    }

    sd_job *b = peer_attach(d, p[1], "new", 0);
    epoch_second(d, p, it, 2, 1);
    double unit = d->cfg.sched.unit;
    assert_true(b->enf.alloc > a->enf.alloc);
    assert_true(a->enf.alloc >= unit - 1e-9);
    assert_true(fabs(a->enf.alloc + b->enf.alloc - 2.0) < 1e-9);
    assert_true(next_alloc(p[0], &ep) == a->enf.alloc);
    assert_int_equal(ep, 10);
    assert_true(next_alloc(p[1], &ep) == b->enf.alloc);
    assert_int_equal(ep, 10);
    /* The scheduler's view and the job's agree. */
    assert_true(slaq_job_alloc(a->sj) == a->enf.alloc);
    assert_true(slaq_job_alloc(b->sj) == b->enf.alloc);
    assert_int_equal(a->enf.nspark, 10);
    assert_true(a->enf.spark[8] == 2.0f &&
                a->enf.spark[9] == (float)a->enf.alloc);
    peer_free(p[0]);
    peer_free(p[1]);
}

/* The old job ran 2 threads on its 2 cores; its share falls to one unit
 * when the new job arrives. It is told at once, but enforcement keeps its
 * 2 cores until it follows the advice or SD_ADVICE_WAIT_S passes: at
 * 1.9 s it still has them (a report still running 2 threads changes
 * nothing), at 2.1 s the share has fallen. A job that follows the advice
 * gets the lower share at that report. */
static void test_a_falling_share_is_held_for_the_advice_at_most_2_s(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p[3] = {peer_open(d), peer_open(d), peer_open(d)};
    int it[3] = {0, 0, 0};
    sd_job *a = peer_attach(d, p[0], "old", 0);
    for (int k = 0; k < 9; k++)
        epoch_second(d, p, it, 1, 2);
    assert_true(a->enf.alloc == 2.0);
    assert_int_equal(a->enf.threads_used, 2);
    json_decref(peer_expect(p[0], "alloc"));

    peer_attach(d, p[1], "new", 0);
    epoch_second(d, p, it, 2, 2);
    uint64_t ep;
    double told = next_alloc(p[0], &ep);
    assert_true(told < 1.0);
    assert_true(a->enf.alloc == 2.0);         /* enforcement: still 2 */
    assert_true(a->enf.alloc_next == told);   /* held back */
    assert_true(a->enf.alloc_next_by == clk.mono + 2.0); /* docs/protocol.md */
    clock_advance(1.9);
    report(d, p[0], it[0]++, 2);          /* not following */
    job_tick(d);
    assert_true(a->enf.alloc == 2.0);
    clock_advance(0.2);
    job_tick(d);
    assert_true(a->enf.alloc == told);
    assert_true(a->enf.alloc_next_by == 0);

    /* A job that follows the advice: the new job's share falls when a
     * third arrives, and it falls at its next report that runs no more
     * threads than advised, half a second later, not at 2 s. */
    sd_job *b = job_get(d, 2);
    assert_true(b->enf.alloc > 1.0);
    assert_int_equal(b->enf.threads_used, 2);
    peer_attach(d, p[2], "third", 0);
    for (int r = 0; r < 4; r++) {
        clock_advance(0.25);
        report(d, p[2], it[2]++, 1);
    }
    job_epoch(d);
    assert_true(b->enf.alloc_next_by == clk.mono + 2.0);
    double to = b->enf.alloc_next;
    assert_true(to < b->enf.alloc);
    clock_advance(0.5);
    report(d, p[1], it[1]++, 2); /* still 2 threads: not yet */
    assert_true(b->enf.alloc_next_by > 0);
    report(d, p[1], it[1]++, b->enf.threads_sent);
    assert_true(b->enf.alloc == to);
    assert_true(b->enf.alloc_next_by == 0);
    peer_free(p[0]);
    peer_free(p[1]);
    peer_free(p[2]);
}

/* An attached job asked to stop (here cancelled) is sent "stop"; if its
 * client neither leaves nor says bye within the grace period (--grace, 1 s
 * in this daemon) it is ended (`cancelled`, the reason it was stopped for)
 * at the tick after it, and stays `stopping` until then. */
static void test_a_stopped_job_that_stays_is_ended_after_the_grace_period(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    peer *p = peer_open(d);
    sd_job *j = peer_attach(d, p, "stays", 0);
    report(d, p, 0, 1);
    job_cancel(d, j, 0);
    json_t *m = peer_expect(p, "stop");
    assert_string_equal(json_string_value(json_object_get(m, "reason")),
                        "cancelled");
    json_decref(m);
    assert_int_equal(j->state, SD_STOPPING);
    assert_true(j->proc.stop_deadline == clk.mono + d->cfg.grace_s);
    clock_advance(d->cfg.grace_s - 0.05);
    job_tick(d);
    assert_int_equal(j->state, SD_STOPPING);
    assert_non_null(j->sj);
    clock_advance(0.1);
    job_tick(d);
    assert_int_equal(j->state, SD_CANCELLED);
    assert_null(j->sj);
    assert_true(j->ended == clk.wall);
    assert_int_equal(slaq_sched_count(d->sched), 0);
    peer_free(p);
}

/* Whether process pid has exited (a zombie counts: slaqd reaps it). */
static int proc_gone(pid_t pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *e = strrchr(buf, ')');
    return !e || e[2] == 'Z' || e[2] == 'X';
}

/* The command name of process pid ("" if gone). */
static const char *proc_comm(pid_t pid)
{
    static char comm[64];
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(p, "r");
    comm[0] = 0;
    if (f) {
        if (!fgets(comm, sizeof comm, f))
            comm[0] = 0;
        fclose(f);
    }
    return comm;
}

/* A job slaqd started (a real process that ignores SIGTERM), with no
 * client: a cancel sends SIGTERM at once (no client could hear "stop");
 * at 0.9 s of the 1 s grace period nothing more is sent, at 1.1 s
 * SIGKILL, and the job ends cancelled with the signal in its status. */
static void test_a_job_without_a_client_gets_sigterm_then_sigkill_at_grace(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    json_t *req = json_pack("{s:[s,s,s], s:s, s:s}", "cmd", "sh", "-c",
                            "trap '' TERM; exec sleep 60", "cwd", s->dir,
                            "name", "stubborn");
    sd_user me;
    user_self(d, &me);
    char err[256] = "";
    sd_job *j = job_submit(d, req, &me, err, sizeof err);
    json_decref(req);
    if (!j)
        fail_msg("job_submit: %s", err);
    assert_true(j->proc.managed && j->proc.pid > 0);
    /* Stopped once the shell has set its trap and become sleep. */
    for (int i = 0; i < 500 && strcmp(proc_comm(j->proc.pid), "sleep\n"); i++)
        usleep(10000);
    assert_string_equal(proc_comm(j->proc.pid), "sleep\n");
    job_cancel(d, j, 0);
    assert_int_equal(j->state, SD_STOPPING);
    assert_true(j->proc.term_sent);
    assert_true(j->proc.stop_deadline == clk.mono + d->cfg.grace_s);
    clock_advance(d->cfg.grace_s - 0.1);
    job_tick(d);
    usleep(100000); /* a SIGKILL sent now would have landed */
    job_reap_children(d);
    assert_false(proc_gone(j->proc.pid));
    assert_int_equal(j->state, SD_STOPPING);
    clock_advance(0.2);
    job_tick(d);
    for (int i = 0; i < 500 && j->state == SD_STOPPING; i++) {
        usleep(10000);
        job_reap_children(d);
    }
    assert_int_equal(j->state, SD_CANCELLED);
    assert_true(j->proc.have_status);
    assert_true(WIFSIGNALED(j->proc.exit_status));
    assert_int_equal(WTERMSIG(j->proc.exit_status), SIGKILL);
    assert_true(j->ended == clk.wall);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_an_epoch_divides_the_cores_and_the_next_moves_them,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_falling_share_is_held_for_the_advice_at_most_2_s,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_stopped_job_that_stays_is_ended_after_the_grace_period,
            sess_setup, sess_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_job_without_a_client_gets_sigterm_then_sigkill_at_grace,
            sess_setup, sess_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
