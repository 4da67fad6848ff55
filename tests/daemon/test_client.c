/*
 * test_client.c — libslaq-client against a scripted fake slaqd: offline
 * behaviour, the hello, allocation and stop messages, reconnection rules,
 * and that a slaqd that stops reading never blocks the training loop.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "slaq/client.h"

typedef struct fake {
    char dir[64];
    char path[128];
    int lfd, cfd;
} fake;

static int fake_setup(void **state)
{
    fake *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/slaq-client-test-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/s.sock", f->dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, f->path);
    f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(f->lfd, 4), 0);
    f->cfd = -1;
    *state = f;
    return 0;
}

static int fake_teardown(void **state)
{
    fake *f = *state;
    if (f->cfd >= 0)
        close(f->cfd);
    close(f->lfd);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

/* Reads one line from the accepted connection (blocking, test side). */
static void fake_line(fake *f, char *out, size_t len)
{
    size_t n = 0;
    while (n + 1 < len) {
        ssize_t r = read(f->cfd, out + n, 1);
        assert_true(r == 1);
        if (out[n] == '\n')
            break;
        n++;
    }
    out[n] = 0;
}

static void fake_send(fake *f, const char *line)
{
    assert_int_equal(write(f->cfd, line, strlen(line)), (ssize_t)strlen(line));
}

/* Lets the client's retry delay (1 s) pass while polling it, then
 * accepts its new connection, as a restarted slaqd would. */
static void fake_reconnect(fake *f, slaq_client *c)
{
    for (int i = 0; i < 1500; i++) {
        slaq_client_poll(c);
        usleep(1000);
    }
    f->cfd = accept(f->lfd, NULL, NULL);
}

/* Polls the client until cond holds or a second has passed. */
#define POLL_UNTIL(c, cond)                                                  \
    do {                                                                     \
        for (int i_ = 0; i_ < 1000 && !(cond); i_++) {                       \
            slaq_client_poll(c);                                             \
            usleep(1000);                                                    \
        }                                                                    \
        assert_true(cond);                                                   \
    } while (0)

static void test_offline_client_returns_default_and_drops(void **state)
{
    (void)state;
    setenv("SLAQ_DEFAULT_CORES", "3.5", 1);
    slaq_client *c = slaq_client_connect(NULL, 0, "x");
    unsetenv("SLAQ_DEFAULT_CORES");
    assert_non_null(c);
    assert_true(slaq_client_cores(c) == 3.5);
    assert_int_equal(slaq_client_report(c, 1, 0.5, 0.1, 10), 1);
    assert_int_equal(slaq_client_report(c, 2, 0.4, 0.1, 10), 1);
    assert_int_equal(slaq_client_dropped(c), 2);
    assert_false(slaq_client_connected(c));
    assert_false(slaq_client_should_stop(c));
    assert_int_equal(slaq_client_job_id(c), 0);
    slaq_client_close(c);
}

static void test_default_cores_can_be_set_until_slaqd_says(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 3, NULL);
    slaq_client_set_default_cores(c, 6);
    slaq_client_set_default_cores(c, NAN); /* ignored */
    assert_true(slaq_client_cores(c) == 6);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"welcome\",\"job\":3,\"cores\":0}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_true(slaq_client_cores(c) == 6); /* no allocation yet */
    fake_send(f, "{\"type\":\"alloc\",\"cores\":1.25,\"epoch\":1}\n");
    POLL_UNTIL(c, slaq_client_cores(c) == 1.25);
    slaq_client_set_default_cores(c, 8); /* slaqd's word stands */
    assert_true(slaq_client_cores(c) == 1.25);
    slaq_client_close_timeout(c, 0);
}

/* The declared convergence class goes in hello, or in an info message
 * once connected; an unknown name is refused. */
static void test_convergence_in_hello_and_info(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 3, NULL);
    assert_int_equal(slaq_client_set_convergence(c, "fast"), -1);
    assert_int_equal(slaq_client_set_convergence(c, NULL), -1);
    assert_int_equal(slaq_client_set_convergence(c, "sublinear"), 0);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    if (!strstr(line, "\"convergence\":\"sublinear\"")) {
        /* hello went out before the class was set: an info follows */
        assert_non_null(strstr(line, "\"hello\""));
        fake_line(f, line, sizeof line);
        assert_string_equal(
            line, "{\"type\":\"info\",\"convergence\":\"sublinear\"}");
    }
    fake_send(f, "{\"type\":\"welcome\",\"job\":3,\"cores\":1}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_int_equal(slaq_client_set_convergence(c, "superlinear"), 0);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    assert_string_equal(line,
                        "{\"type\":\"info\",\"convergence\":\"superlinear\"}");
    slaq_client_close_timeout(c, 0);
}

/* The thread rule at its boundaries: max(1, floor(cores + 0.25)), at most
 * the CPUs. */
static void test_thread_rule_boundaries(void **state)
{
    (void)state;
    static const struct { double cores; long cpus; int want; } cases[] = {
        {0.1, 8, 1},  {0.74, 8, 1}, {0.75, 8, 1}, {1.0, 8, 1},
        {1.74, 8, 1}, {1.75, 8, 2}, {2.3, 8, 2}, {2.74, 8, 2},
        {2.75, 8, 3}, {7.9, 8, 8}, {9.5, 8, 8}, {100, 2, 2},
        {1.75, 1, 1}, {0, 4, 1}, {-3, 4, 1}, {1.5, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = slaq_client_threads_for(cases[i].cores, cases[i].cpus);
        if (got != cases[i].want)
            fail_msg("%g cores on %ld CPUs: %d threads, wanted %d",
                     cases[i].cores, cases[i].cpus, got, cases[i].want);
    }
    assert_int_equal(slaq_client_threads_for(NAN, 4), 1);
    assert_int_equal(slaq_client_threads_for(INFINITY, 4), 4);
}

/* slaq_client_threads() applies the rule to the allocation, and to the
 * default allocation before slaqd has given one. */
static void test_threads_follow_the_allocation(void **state)
{
    fake *f = *state;
    char line[4096];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    slaq_client *c = slaq_client_connect(f->path, 3, NULL);
    slaq_client_set_default_cores(c, 1.8);
    assert_int_equal(slaq_client_threads(c), cpus >= 2 ? 2 : 1);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"welcome\",\"job\":3,\"cores\":0.7}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_int_equal(slaq_client_threads(c), 1);
    fake_send(f, "{\"type\":\"alloc\",\"cores\":1000,\"epoch\":1}\n");
    POLL_UNTIL(c, slaq_client_cores(c) == 1000);
    assert_int_equal(slaq_client_threads(c), (int)cpus);
    slaq_client_close_timeout(c, 0);
}

/* Takes the ",\"wall_s\":X" out of a report line (every report after a
 * client's first carries the wall time since the one before) and returns
 * X, or -1 if the line has none. */
static double take_wall(char *line)
{
    char *w = strstr(line, ",\"wall_s\":");
    if (!w)
        return -1;
    char *end;
    double x = strtod(w + 10, &end);
    memmove(w, end, strlen(end) + 1);
    return x;
}

/* slaqd's thread advice (in welcome and alloc) caps what
 * slaq_client_threads() returns, never raises it above the thread rule;
 * the reports then say how many threads the iterations ran, and their
 * wall time. */
static void test_advice_caps_threads_and_reports_carry_them(void **state)
{
    fake *f = *state;
    char line[4096];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    slaq_client *c = slaq_client_connect(f->path, 3, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"welcome\",\"job\":3,\"cores\":2,"
                 "\"threads\":1}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    /* no report before a call of threads(): nothing said of threads */
    assert_int_equal(slaq_client_report(c, 0, 1, 0, 0), 0);
    fake_line(f, line, sizeof line);
    assert_null(strstr(line, "threads"));
    assert_true(take_wall(line) < 0); /* the first report: no gap */
    assert_int_equal(slaq_client_threads(c), 1);
    usleep(20000);
    assert_int_equal(slaq_client_report(c, 1, 0.5, 0.25, 10), 0);
    fake_line(f, line, sizeof line);
    double wall = take_wall(line);
    assert_true(wall >= 0.02 && wall < 5);
    assert_string_equal(line, "{\"type\":\"report\",\"iter\":1,"
                              "\"loss\":0.5,\"cpu_s\":0.25,\"samples\":10,"
                              "\"threads\":1}");
    fake_send(f, "{\"type\":\"alloc\",\"cores\":2,\"threads\":2}\n");
    POLL_UNTIL(c, slaq_client_threads(c) == (cpus >= 2 ? 2 : 1));
    /* advice above the rule: the rule */
    fake_send(f, "{\"type\":\"alloc\",\"cores\":0.9,\"threads\":4}\n");
    POLL_UNTIL(c, slaq_client_cores(c) == 0.9);
    assert_int_equal(slaq_client_threads(c), 1);
    /* a job that sizes its pools itself says so */
    slaq_client_set_threads(c, 3);
    assert_int_equal(slaq_client_report(c, 2, 0.4, 0.1, 10), 0);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, ",\"threads\":3"));
    slaq_client_close_timeout(c, 0);
}

static void test_default_cores_is_online_cpus(void **state)
{
    (void)state;
    unsetenv("SLAQ_SOCKET");
    unsetenv("SLAQ_JOB_ID");
    slaq_client *c = slaq_client_open();
    assert_true(slaq_client_cores(c) ==
                (double)sysconf(_SC_NPROCESSORS_ONLN));
    slaq_client_close(c);
}

static void test_invalid_reports_are_refused(void **state)
{
    (void)state;
    slaq_client *c = slaq_client_connect(NULL, 0, NULL);
    errno = 0;
    assert_int_equal(slaq_client_report(c, 1, NAN, 0, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(slaq_client_report(c, 1, 1, -1, 0), -1);
    assert_int_equal(slaq_client_report(c, 1, 1, 0, INFINITY), -1);
    errno = 0;
    assert_int_equal(slaq_client_report_metric(c, 1, 1, INFINITY, 0, 0), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(slaq_client_set_metric_name(c, ""), -1);
    assert_int_equal(slaq_client_set_metric_name(c, "bad\nname"), -1);
    assert_int_equal(slaq_client_dropped(c), 0);
    slaq_client_close(c);
}

static void test_unreachable_socket_is_not_an_error(void **state)
{
    (void)state;
    slaq_client *c = slaq_client_connect("/nonexistent/slaq.sock", 4, NULL);
    assert_non_null(c);
    assert_int_equal(slaq_client_report(c, 1, 1, 0, 0), 1);
    assert_false(slaq_client_connected(c));
    slaq_client_close(c);
}

static void test_hello_alloc_report_and_stop(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 7, "job7");
    f->cfd = accept(f->lfd, NULL, NULL);
    assert_true(f->cfd >= 0);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"type\":\"hello\""));
    assert_non_null(strstr(line, "\"job\":7"));
    assert_non_null(strstr(line, "\"name\":\"job7\""));
    fake_send(f, "{\"type\":\"welcome\",\"job\":7,\"cores\":1.5}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_true(slaq_client_cores(c) == 1.5);
    fake_send(f, "{\"type\":\"alloc\",\"cores\":0.25,\"epoch\":3}\n"
                 "{\"type\":\"bogus\"}\nnot json\n");
    POLL_UNTIL(c, slaq_client_cores(c) == 0.25);
    assert_int_equal(slaq_client_report(c, 1, 0.75, 0.5, 100), 0);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"report\",\"iter\":1,\"loss\":0.75,"
                              "\"cpu_s\":0.5,\"samples\":100}");
    /* The metric: named once (info, being connected), then in reports;
     * NaN leaves it out. */
    assert_int_equal(slaq_client_set_metric_name(c, "val_accuracy"), 0);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"info\",\"metric_name\":"
                              "\"val_accuracy\"}");
    assert_int_equal(slaq_client_report_metric(c, 2, 0.5, 0.625, 0.5, 100), 0);
    fake_line(f, line, sizeof line);
    assert_true(take_wall(line) >= 0);
    assert_string_equal(line, "{\"type\":\"report\",\"iter\":2,\"loss\":0.5,"
                              "\"cpu_s\":0.5,\"samples\":100,"
                              "\"metric\":0.625}");
    assert_int_equal(slaq_client_report_metric(c, 3, 0.5, NAN, 0, 0), 0);
    fake_line(f, line, sizeof line);
    assert_null(strstr(line, "metric"));
    assert_false(slaq_client_should_stop(c));
    fake_send(f, "{\"type\":\"stop\",\"job\":7,\"reason\":\"max_iters\"}\n");
    POLL_UNTIL(c, slaq_client_should_stop(c));
    assert_string_equal(slaq_client_stop_reason(c), "max_iters");
    slaq_client_close(c);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"bye\"}");
}

static void test_vector_report_carries_estimates_and_bounds(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 9, "aqp");
    f->cfd = accept(f->lfd, NULL, NULL);
    assert_true(f->cfd >= 0);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"welcome\",\"job\":9,\"cores\":1}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    double e[3] = {1.5, NAN, -2}, lo[3] = {1, NAN, -3}, hi[3] = {2, NAN, -1};
    assert_int_equal(slaq_client_report_vector(c, 4, 0.25, 0.5, 100, 3, e, lo,
                                               hi), 0);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"report\",\"iter\":4,\"loss\":0.25,"
                              "\"cpu_s\":0.5,\"samples\":100,"
                              "\"estimates\":[1.5,null,-2],"
                              "\"lower\":[1,null,-3],\"upper\":[2,null,-1]}");
    /* bounds are optional */
    assert_int_equal(slaq_client_report_vector(c, 5, 0, 0, 1, 1, e, NULL,
                                               NULL), 0);
    fake_line(f, line, sizeof line);
    assert_true(take_wall(line) >= 0);
    assert_string_equal(line, "{\"type\":\"report\",\"iter\":5,\"loss\":0,"
                              "\"cpu_s\":0,\"samples\":1,"
                              "\"estimates\":[1.5]}");
    /* too long a vector, or none where n says there is one */
    assert_int_equal(slaq_client_report_vector(c, 6, 0, 0, 1,
                                               SLAQ_CLIENT_MAX_VECTOR + 1, e,
                                               NULL, NULL), -1);
    assert_int_equal(slaq_client_report_vector(c, 6, 0, 0, 1, 2, NULL, NULL,
                                               NULL), -1);
    assert_int_equal(slaq_client_report_vector(c, 6, NAN, 0, 1, 1, e, NULL,
                                               NULL), -1);
    slaq_client_close(c);
}

static void test_lost_connection_goes_offline_keeping_allocation(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 0, "att");
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    assert_null(strstr(line, "\"job\""));
    fake_send(f, "{\"type\":\"welcome\",\"job\":12,\"cores\":0.5}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_int_equal(slaq_client_job_id(c), 12);
    close(f->cfd);
    f->cfd = -1;
    POLL_UNTIL(c, !slaq_client_connected(c));
    assert_true(slaq_client_cores(c) == 0.5);
    assert_int_equal(slaq_client_report(c, 5, 1, 0, 0), 1); /* dropped */
    /* It comes back by itself within a second or so, as job 12 now (the
     * listen backlog takes the connection before accept()). */
    fake_reconnect(f, c);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"job\":12"));
    slaq_client_close_timeout(c, 0);
}

static void test_unknown_job_error_stops_retrying(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 99, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"error\",\"code\":\"unknown_job\","
                 "\"message\":\"no job with id 99\"}\n");
    close(f->cfd);
    f->cfd = -1;
    POLL_UNTIL(c, slaq_client_report(c, 1, 1, 0, 0) == 1);
    usleep(1200000);
    slaq_client_poll(c);
    struct timeval tv = {0, 100000};
    setsockopt(f->lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_true(accept(f->lfd, NULL, NULL) < 0); /* nobody came back */
    slaq_client_close(c);
}

/* With a slaqd that acknowledges: reports go out at once (before the
 * welcome too) but are kept until confirmed; they survive a lost
 * connection (and reports made while offline are kept), and after
 * reconnecting the client sends every unconfirmed one again right after
 * its hello, in order, before new ones; an ack releases them. */
static void test_unacked_reports_are_resent_after_reconnecting(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 5, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"ack\":true"));
    for (uint64_t k = 0; k < 3; k++)
        assert_int_equal(slaq_client_report(c, k, 1.0 / (double)(k + 1), 0, 0),
                         0);
    assert_int_equal(slaq_client_unacked(c), 3); /* kept, not yet known */
    assert_int_equal(slaq_client_acked(c), -1);
    fake_send(f, "{\"type\":\"welcome\",\"job\":5,\"cores\":1,"
                 "\"next_iter\":0,\"ack\":true}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    for (int k = 0; k < 3; k++) {
        char want[64];
        fake_line(f, line, sizeof line);
        snprintf(want, sizeof want, "\"iter\":%d,", k);
        assert_non_null(strstr(line, want));
    }
    fake_send(f, "{\"type\":\"ack\",\"iter\":0}\n");
    POLL_UNTIL(c, slaq_client_unacked(c) == 2);
    assert_int_equal(slaq_client_acked(c), 0);
    close(f->cfd); /* slaqd dies with 1 and 2 unconfirmed */
    f->cfd = -1;
    POLL_UNTIL(c, !slaq_client_connected(c));
    assert_int_equal(slaq_client_report(c, 3, 0.25, 0, 0), 0); /* kept */
    assert_int_equal(slaq_client_unacked(c), 3);
    assert_int_equal(slaq_client_dropped(c), 0);
    fake_reconnect(f, c);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"job\":5"));
    /* Every unconfirmed report, in order, right after the hello. */
    for (int k = 1; k <= 3; k++) {
        char want[64];
        fake_line(f, line, sizeof line);
        snprintf(want, sizeof want, "\"iter\":%d,", k);
        assert_non_null(strstr(line, want));
    }
    fake_send(f, "{\"type\":\"welcome\",\"job\":5,\"cores\":1,"
                 "\"next_iter\":2,\"ack\":true}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    fake_send(f, "{\"type\":\"ack\",\"iter\":3}\n");
    POLL_UNTIL(c, slaq_client_unacked(c) == 0);
    assert_int_equal(slaq_client_acked(c), 3);
    slaq_client_close(c);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"bye\"}");
}

/* A job that starts while its slaqd is being restarted (killed with -9:
 * its socket is still there but refuses connections) keeps the reports it
 * makes before the first welcome, and sends them once slaqd is back
 * (issue: they were dropped, and a soak's jobs lost their first
 * iterations); where there is no socket at all they are dropped. */
static void test_reports_before_the_first_welcome_wait_for_a_restarting_slaqd(
    void **state)
{
    (void)state;
    char dir[] = "/tmp/slaq-client-test-XXXXXX", path[128], line[4096];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.sock", dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, path);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    /* bound, not listening: connections are refused */
    slaq_client *c = slaq_client_connect(path, 7, NULL);
    assert_false(slaq_client_connected(c));
    for (uint64_t k = 0; k < 3; k++)
        assert_int_equal(slaq_client_report(c, k, 1.0 / (double)(k + 1), 0,
                                            0), 0);
    assert_int_equal(slaq_client_unacked(c), 3);
    assert_int_equal(slaq_client_dropped(c), 0);
    assert_int_equal(listen(lfd, 4), 0); /* slaqd is back */
    fake f = {.lfd = lfd};
    fake_reconnect(&f, c);
    fake_line(&f, line, sizeof line);
    assert_non_null(strstr(line, "\"job\":7"));
    for (int k = 0; k < 3; k++) {
        char want[64];
        fake_line(&f, line, sizeof line);
        snprintf(want, sizeof want, "\"iter\":%d,", k);
        assert_non_null(strstr(line, want));
    }
    fake_send(&f, "{\"type\":\"welcome\",\"job\":7,\"cores\":1,"
                  "\"next_iter\":0,\"ack\":true}\n");
    fake_send(&f, "{\"type\":\"ack\",\"iter\":2}\n");
    POLL_UNTIL(c, slaq_client_unacked(c) == 0);
    assert_int_equal(slaq_client_acked(c), 2);
    slaq_client_close_timeout(c, 0);
    close(f.cfd);
    close(lfd);
    unlink(path);
    /* no socket: no slaqd to wait for */
    c = slaq_client_connect(path, 7, NULL);
    assert_int_equal(slaq_client_report(c, 0, 1, 0, 0), 1);
    assert_int_equal(slaq_client_dropped(c), 1);
    slaq_client_close_timeout(c, 0);
    rmdir(dir);
}

/* A query's reports carry vectors: unconfirmed ones, and those made while
 * slaqd is away, are sent again after the reconnection with their
 * estimates and bounds, not dropped (a query's progress froze at the
 * mini-batch before the gap). */
static void test_vector_reports_are_resent_after_reconnecting(void **state)
{
    fake *f = *state;
    char line[8192];
    const double e[2] = {1.5, 2.5}, lo[2] = {1, 2}, hi[2] = {2, 3};
    slaq_client *c = slaq_client_connect(f->path, 9, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line); /* hello */
    fake_send(f, "{\"type\":\"welcome\",\"job\":9,\"cores\":1,"
                 "\"next_iter\":0,\"ack\":true}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_int_equal(slaq_client_report_vector(c, 1, 0.5, 0.1, 10, 2, e, lo,
                                               hi), 0);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"iter\":1,"));
    assert_non_null(strstr(line, "\"estimates\":[1.5,2.5]"));
    close(f->cfd); /* slaqd dies before it confirms iteration 1 */
    f->cfd = -1;
    POLL_UNTIL(c, !slaq_client_connected(c));
    /* made while slaqd is away: kept too */
    assert_int_equal(slaq_client_report_vector(c, 2, 0.25, 0.1, 10, 2, e,
                                               NULL, NULL), 0);
    assert_int_equal(slaq_client_unacked(c), 2);
    assert_int_equal(slaq_client_dropped(c), 0);
    fake_reconnect(f, c);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"job\":9"));
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"iter\":1,"));
    assert_non_null(strstr(line, "\"estimates\":[1.5,2.5],\"lower\":[1,2],"
                            "\"upper\":[2,3]}"));
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"iter\":2,"));
    assert_non_null(strstr(line, "\"estimates\":[1.5,2.5]}"));
    fake_send(f, "{\"type\":\"welcome\",\"job\":9,\"cores\":1,"
                 "\"next_iter\":1,\"ack\":true}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    fake_send(f, "{\"type\":\"ack\",\"iter\":2}\n");
    POLL_UNTIL(c, slaq_client_unacked(c) == 0);
    slaq_client_close(c);
    fake_line(f, line, sizeof line);
    assert_string_equal(line, "{\"type\":\"bye\"}");
}

/* A slaqd that does not acknowledge (no "ack" in its welcome): reports
 * are forgotten once written, and dropped while offline, as before. */
static void test_without_acks_reports_are_not_kept(void **state)
{
    fake *f = *state;
    char line[4096];
    slaq_client *c = slaq_client_connect(f->path, 6, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    slaq_client_poll(c);
    fake_line(f, line, sizeof line);
    fake_send(f, "{\"type\":\"welcome\",\"job\":6,\"cores\":1}\n");
    POLL_UNTIL(c, slaq_client_connected(c));
    assert_int_equal(slaq_client_report(c, 1, 0.5, 0, 0), 0);
    fake_line(f, line, sizeof line);
    assert_non_null(strstr(line, "\"iter\":1,"));
    assert_int_equal(slaq_client_unacked(c), 0);
    close(f->cfd);
    f->cfd = -1;
    POLL_UNTIL(c, !slaq_client_connected(c));
    assert_int_equal(slaq_client_report(c, 2, 0.4, 0, 0), 1);
    assert_int_equal(slaq_client_unacked(c), 0);
    slaq_client_close(c);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_a_slaqd_that_does_not_read_never_blocks(void **state)
{
    fake *f = *state;
    slaq_client *c = slaq_client_connect(f->path, 1, NULL);
    f->cfd = accept(f->lfd, NULL, NULL);
    double slowest = 0;
    int dropped = 0;
    /* Until the socket and the client's buffer are full ... */
    for (uint64_t k = 1; k <= 200000 && !dropped; k++) {
        double t0 = mono_s();
        dropped = slaq_client_report(c, k, 1.0 / (double)k, 0.001, 1) == 1;
        double t = mono_s() - t0;
        slowest = t > slowest ? t : slowest;
    }
    assert_true(dropped);
    /* ... no call waited for the reader (generous for valgrind). */
    assert_true(slowest < 0.1);
    slaq_client_close_timeout(c, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offline_client_returns_default_and_drops),
        cmocka_unit_test(
            test_reports_before_the_first_welcome_wait_for_a_restarting_slaqd),
        cmocka_unit_test(test_default_cores_is_online_cpus),
        cmocka_unit_test(test_thread_rule_boundaries),
        cmocka_unit_test_setup_teardown(test_threads_follow_the_allocation,
                                        fake_setup, fake_teardown),
        cmocka_unit_test(test_invalid_reports_are_refused),
        cmocka_unit_test(test_unreachable_socket_is_not_an_error),
        cmocka_unit_test_setup_teardown(
            test_default_cores_can_be_set_until_slaqd_says, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(test_hello_alloc_report_and_stop,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(test_convergence_in_hello_and_info,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_vector_report_carries_estimates_and_bounds, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_lost_connection_goes_offline_keeping_allocation, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_job_error_stops_retrying,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_slaqd_that_does_not_read_never_blocks, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_unacked_reports_are_resent_after_reconnecting, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_vector_reports_are_resent_after_reconnecting, fake_setup,
            fake_teardown),
        cmocka_unit_test_setup_teardown(test_without_acks_reports_are_not_kept,
                                        fake_setup, fake_teardown),
        cmocka_unit_test_setup_teardown(
            test_advice_caps_threads_and_reports_carry_them, fake_setup,
            fake_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
