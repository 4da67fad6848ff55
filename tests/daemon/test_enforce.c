/*
 * test_enforce.c — the arithmetic of enforcement (src/daemon/enforce.c),
 * checked exactly in a cgroup directory made in a temporary directory: a
 * share is a CPU weight proportional to the allocation and clamped to the
 * kernel's range, a quota is written only where a job has a cap (or with
 * --share quota) and never below the kernel's 1 ms, cgroup1 gets the same
 * in its own files, and a job counts as throttled in an epoch only when
 * the kernel's nr_throttled grew. The signal backend's token bucket is
 * checked on a real process group under a clock the test moves
 * (session.h): tokens at the allocation's rate, capped at a period's
 * worth, the group stopped when they run out and continued when they
 * come back.
 */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/jobs.h"
#include "daemon/users.h"
#include "session.h"

static char base[64];

/* The files a kernel's job-N group has, present and empty. */
static const char *const cg_files[] = {
    "cpu.weight", "cpu.max", "cpu.shares", "cpu.cfs_period_us",
    "cpu.cfs_quota_us", "cpu.stat", "cgroup.procs",
};
#define NFILES (sizeof cg_files / sizeof *cg_files)

static void put(int64_t id, const char *file, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/job-%lld/%s", base, (long long)id, file);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* What enforcement wrote into a file of job id's group ("" if nothing). */
static const char *got(int64_t id, const char *file)
{
    static char buf[128];
    char p[256];
    snprintf(p, sizeof p, "%s/job-%lld/%s", base, (long long)id, file);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* The group's files emptied, as the kernel shows them before a write. */
static void empty_files(int64_t id)
{
    for (size_t i = 0; i < NFILES; i++)
        put(id, cg_files[i], "");
}

static int setup(void **state)
{
    snprintf(base, sizeof base, "/tmp/slaq-test-enforce-XXXXXX");
    if (!mkdtemp(base))
        return -1;
    sd_daemon *d = calloc(1, sizeof *d);
    d->enf.cg_base = base;
    d->enf.period_us = 100000;
    d->cfg.sched.cores = 8;
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    sd_daemon *d = *state;
    for (size_t id = 0; id < d->njobs; id++) {
        char p[256];
        for (size_t i = 0; i < NFILES; i++) {
            snprintf(p, sizeof p, "%s/job-%zu/%s", base, id + 1, cg_files[i]);
            unlink(p);
        }
        snprintf(p, sizeof p, "%s/job-%zu", base, id + 1);
        rmdir(p);
    }
    job_free_all(d);
    free(d);
    return rmdir(base);
}

/* A managed job whose cgroup enf_prepare made. */
static sd_job *job_in_group(sd_daemon *d, int64_t id)
{
    sd_job *j = job_new(d, id);
    j->proc.managed = 1;
    j->state = SD_RUNNING;
    assert_int_equal(enf_prepare(d, j), 0);
    assert_true(j->enf.cg_ready);
    empty_files(id);
    return j;
}

static void test_weights_are_proportional_and_clamped(void **state)
{
    (void)state;
    assert_int_equal(enf_weight(1, 1), 100);
    assert_int_equal(enf_weight(1, 2.5), 250);
    assert_int_equal(enf_weight(1, 0.004), 1);      /* 0.4: at least 1 */
    assert_int_equal(enf_weight(1, 0.016), 2);      /* rounded */
    assert_int_equal(enf_weight(1, 1000), 10000);   /* at most 10000 */
    assert_int_equal(enf_weight(0, 1), 1024);
    assert_int_equal(enf_weight(0, 0.5), 512);
    assert_int_equal(enf_weight(0, 0.001), 2);      /* at least 2 */
    assert_int_equal(enf_weight(0, 300), 262144);   /* at most 262144 */
}

static void test_cgroup2_gets_a_weight_and_a_quota_only_at_a_cap(
    void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP2;
    sd_job *j = job_in_group(d, 1);
    j->goals.max_cores = INFINITY;
    enf_apply(d, j, 2.5);
    assert_string_equal(got(1, "cpu.weight"), "250");
    assert_string_equal(got(1, "cpu.max"), "max 100000");
    /* A cap of 1.5 cores: 150 ms of each 100 ms period, whatever the
     * share. */
    empty_files(1);
    j->goals.max_cores = 1.5;
    enf_apply(d, j, 0.5);
    assert_string_equal(got(1, "cpu.weight"), "50");
    assert_string_equal(got(1, "cpu.max"), "150000 100000");
    /* A cap at the machine's cores is no cap. */
    empty_files(1);
    j->goals.max_cores = 8;
    enf_apply(d, j, 0.5);
    assert_string_equal(got(1, "cpu.max"), "max 100000");
}

static void test_share_quota_is_the_allocation_and_at_least_1_ms(
    void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP2;
    d->cfg.share_quota = 1;
    sd_job *j = job_in_group(d, 1);
    j->goals.max_cores = INFINITY;
    enf_apply(d, j, 2.25);
    assert_string_equal(got(1, "cpu.max"), "225000 100000");
    empty_files(1);
    enf_apply(d, j, 0.004); /* 400 us: the kernel takes no less than 1 ms */
    assert_string_equal(got(1, "cpu.max"), "1000 100000");
}

static void test_cgroup1_gets_shares_period_and_quota(void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP1;
    sd_job *j = job_in_group(d, 1);
    j->goals.max_cores = INFINITY;
    enf_apply(d, j, 2.5);
    assert_string_equal(got(1, "cpu.shares"), "2560");
    assert_string_equal(got(1, "cpu.cfs_period_us"), "100000");
    assert_string_equal(got(1, "cpu.cfs_quota_us"), "-1");
    assert_string_equal(got(1, "cpu.max"), ""); /* cgroup2's: untouched */
    empty_files(1);
    j->goals.max_cores = 0.75;
    enf_apply(d, j, 2.5);
    assert_string_equal(got(1, "cpu.cfs_quota_us"), "75000");
}

static void test_attached_jobs_and_other_modes_write_nothing(void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP2;
    sd_job *j = job_in_group(d, 1);
    j->proc.managed = 0; /* attached: not slaqd's to hold */
    enf_apply(d, j, 2);
    assert_string_equal(got(1, "cpu.weight"), "");
    j->proc.managed = 1;
    d->enf.mode = SD_ENF_SIGNAL; /* enf_tick's token bucket, not files */
    enf_apply(d, j, 2);
    assert_string_equal(got(1, "cpu.weight"), "");
}

static void test_throttled_only_when_nr_throttled_grew(void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP2;
    sd_job *j = job_in_group(d, 1);
    put(1, "cpu.stat", "usage_usec 10\nnr_periods 9\nnr_throttled 5\n");
    enf_epoch(d, j);
    assert_int_equal(j->enf.throttled, 1); /* 0 -> 5 */
    enf_epoch(d, j);
    assert_int_equal(j->enf.throttled, 0); /* still 5 */
    put(1, "cpu.stat", "usage_usec 20\nnr_periods 12\nnr_throttled 7\n");
    enf_epoch(d, j);
    assert_int_equal(j->enf.throttled, 1);
    assert_int_equal(j->enf.cg_nr_throttled, 7);
    /* Without the count the job is not called throttled. */
    put(1, "cpu.stat", "usage_usec 30\n");
    enf_epoch(d, j);
    assert_int_equal(j->enf.throttled, 0);
}

static void test_a_readopted_job_finds_its_group_again(void **state)
{
    sd_daemon *d = *state;
    d->enf.mode = SD_ENF_CGROUP2;
    job_in_group(d, 1);
    sd_job *again = job_new(d, 2);
    again->proc.managed = 1;
    again->state = SD_RUNNING;
    assert_int_equal(enf_adopt(d, again), 0);
    assert_false(again->enf.cg_ready); /* no job-2 group */
    sd_job *j = d->jobs[0];
    j->enf.cg_ready = 0;
    assert_int_equal(enf_adopt(d, j), 0);
    assert_true(j->enf.cg_ready);
}

/* The state letter of process pid in /proc (R, S, T, ...), 0 if gone. */
static char proc_state_of(pid_t pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] ? close_paren[2] : 0;
}

/* Waits (at most 5 s of real time: the kernel delivers the signal) for
 * pid's state to be stopped (`stopped`) or not. */
static int wait_stopped(pid_t pid, int stopped)
{
    for (int i = 0; i < 500; i++) {
        char st = proc_state_of(pid);
        if ((st == 'T' || st == 't') == stopped)
            return 1;
        usleep(10000);
    }
    return 0;
}

/* --signal: a job's process group, which uses no CPU (sleep 600), under
 * a clock the test moves. Tokens come at the allocation's
 * rate for the seconds job_tick measures, at most a period's worth
 * (0.1 s x 0.5 cores); a bucket run dry stops the group (SIGSTOP), one
 * refilled continues it, and a job being stopped is never held. */
static void test_the_signal_bucket_fills_at_the_allocation_and_holds_at_zero(
    void **state)
{
    sess *s = *state;
    sd_daemon *d = &s->d;
    d->enf.mode = SD_ENF_SIGNAL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* Gone with the test, even when an assertion ends it early; and
         * holding none of its output open. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        setpgid(0, 0);
        execlp("sleep", "sleep", "600", (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    /* Measured once it sleeps: exec's CPU is in the base, not a tick. */
    char comm[64] = "";
    for (int i = 0; i < 500 && (strcmp(comm, "sleep\n") ||
                                proc_state_of(pid) != 'S'); i++) {
        usleep(10000);
        char p[64];
        snprintf(p, sizeof p, "/proc/%d/comm", (int)pid);
        FILE *f = fopen(p, "r");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = 0;
            fclose(f);
        }
    }
    assert_string_equal(comm, "sleep\n");
    sd_user me;
    user_self(d, &me);
    sd_job *j = job_attach(d, "bucket", 0, &me);
    assert_non_null(j);
    j->proc.managed = 1; /* as if slaqd had started it */
    j->proc.pid = pid;
    job_apply_alloc(d, j, 0.5, clk.wall);
    job_tick(d); /* the first measurement sets the base */
    assert_true(j->enf.sig_seen);
    assert_true(j->enf.sig_tokens == 0);
    clock_advance(0.04);
    job_tick(d);
    assert_true(fabs(j->enf.sig_tokens - 0.5 * 0.04) < 1e-12);
    clock_advance(10);
    job_tick(d);
    assert_true(fabs(j->enf.sig_tokens - 0.5 * 0.1) < 1e-12); /* the cap */
    assert_false(j->enf.sig_stopped);
    /* The bucket as if the job had run over it: dry after 0.02 s more,
     * so the group is stopped... */
    j->enf.sig_tokens = -0.02;
    clock_advance(0.02);
    job_tick(d);
    assert_true(fabs(j->enf.sig_tokens - (-0.02 + 0.5 * 0.02)) < 1e-12);
    assert_true(j->enf.sig_stopped && j->enf.sig_held);
    assert_true(wait_stopped(pid, 1));
    /* ... and continued once 0.04 s more have refilled it. */
    clock_advance(0.04);
    job_tick(d);
    assert_true(j->enf.sig_tokens > 0);
    assert_false(j->enf.sig_stopped);
    assert_true(wait_stopped(pid, 0));
    /* A job asked to stop runs whatever its bucket says. */
    j->enf.sig_tokens = -1;
    j->state = SD_STOPPING;
    clock_advance(0.01);
    job_tick(d);
    assert_false(j->enf.sig_stopped);
    assert_true(proc_state_of(pid) != 'T');
    kill(pid, SIGKILL);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_weights_are_proportional_and_clamped),
        T(test_cgroup2_gets_a_weight_and_a_quota_only_at_a_cap),
        T(test_share_quota_is_the_allocation_and_at_least_1_ms),
        T(test_cgroup1_gets_shares_period_and_quota),
        T(test_attached_jobs_and_other_modes_write_nothing),
        T(test_throttled_only_when_nr_throttled_grew),
        T(test_a_readopted_job_finds_its_group_again),
#undef T
        cmocka_unit_test_setup_teardown(
            test_the_signal_bucket_fills_at_the_allocation_and_holds_at_zero,
            sess_setup, sess_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
