/*
 * test_alloc.c — a warmed-up epoch allocates nothing.
 *
 * This program defines malloc, calloc, realloc and free itself, forwarding
 * to the C library's (found with dlsym(RTLD_NEXT)), so every allocation in
 * the process is counted: libslaq's and those inside shared libraries it
 * calls, such as libgsl. After the jobs' history windows have filled,
 * reports and epochs must not allocate, whatever the policy and predictor,
 * also when jobs report at irregular iteration gaps (which changes how
 * many points a fit uses).
 */
#include <dlfcn.h>
#include <gsl/gsl_vector.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "testutil.h"
#ifndef GAPMAX
#define GAPMAX 7
#endif

static long allocations;

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

/* dlsym may itself allocate: while it runs, requests are served from a
 * small static arena that is never freed. */
static _Alignas(16) char boot[8192];
static size_t boot_used;
static int resolving;

static int in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n > sizeof boot - boot_used)
        return NULL;
    void *p = boot + boot_used;
    boot_used += n;
    return p; /* static storage: already zero */
}

static int resolve(void)
{
    if (real_malloc)
        return 1;
    if (resolving)
        return 0;
    resolving = 1;
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
    return real_malloc != NULL;
}

void *malloc(size_t n)
{
    if (!resolve())
        return boot_alloc(n);
    allocations++;
    return real_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    if (!resolve())
        return m && n > SIZE_MAX / m ? NULL : boot_alloc(n * m);
    allocations++;
    return real_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    if (in_boot(p)) {
        void *q = malloc(n);
        if (q)
            memcpy(q, p, n < (size_t)(boot + sizeof boot - (char *)p)
                             ? n : (size_t)(boot + sizeof boot - (char *)p));
        return q;
    }
    if (!resolve())
        return boot_alloc(n);
    allocations++;
    return real_realloc(p, n);
}

void free(void *p)
{
    if (!p || in_boot(p))
        return;
    if (resolve())
        real_free(p);
}

/* nodes > 1: the 800 cores as `nodes` nodes, gain placement and a queue;
 * 200 jobs all fit, and the last 10 of 210 wait. */
static void run_nodes(slaq_policy_kind pol, slaq_predictor_kind pred,
                      size_t nodes)
{
    enum { JOBS = 200, WARM = 80, MEASURED = 20 };
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    c.cores = 800 / (double)nodes;
    c.nodes = nodes;
    if (nodes > 1) {
        c.placement = SLAQ_PLACE_GAIN;
        c.queue = 1;
        c.cores = 200 / (double)nodes;
    }
    c.policy = pol;
    c.predictor = pred;
    slaq_sched *s = slaq_sched_new(&c);
    slaq_job *jobs[JOBS];
    uint64_t iter[JOBS] = {0};
    for (int i = 0; i < JOBS; i++)
        jobs[i] = slaq_sched_add(s, NULL, 0);
    for (int i = 0; nodes > 1 && i < 10; i++)
        assert_int_equal(slaq_job_node(slaq_sched_add(s, NULL, 0)),
                         SLAQ_NODE_PENDING);
    long before = 0;
    unsigned seed = 12345;
    for (int e = 0; e < WARM + MEASURED; e++) {
        if (e == WARM)
            before = allocations;
        for (int i = 0; i < JOBS; i++) {
            uint64_t k = iter[i];
            double loss = 1.0 / (1 + 0.1 * (double)(k * (1 + i % 5))) +
                          0.01 * (i % 7);
            slaq_report r = {k, loss, 1.0, 100, (double)e};
            assert_int_equal(slaq_job_report(jobs[i], &r), SLAQ_OK);
            /* Irregular reporting: the next report comes 1 to 7
             * iterations later, so fits see a changing number of points. */
            seed = seed * 1103515245u + 12345u;
            iter[i] += 1 + (seed >> 16) % GAPMAX;
        }
        assert_int_equal(slaq_sched_epoch(s, (double)e + 0.5), SLAQ_OK);
    }
    long during = allocations - before;
    if (during != 0) {
        print_error("%s/%s on %zu nodes: %ld allocations in %d warmed-up "
                    "epochs\n", slaq_policy_name(pol),
                    slaq_predictor_name(pred), nodes, during, MEASURED);
        fail();
    }
    slaq_sched_free(s);
}

static void run(slaq_policy_kind pol, slaq_predictor_kind pred)
{
    run_nodes(pol, pred, 1);
}

static void test_warm_epochs_do_not_allocate(void **state)
{
    (void)state;
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_AUTO);
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_STRAWMAN);
    run(SLAQ_POLICY_SLAQ, SLAQ_PRED_SLAQ_FIT);
    run(SLAQ_POLICY_FAIR, SLAQ_PRED_AUTO);
    run(SLAQ_POLICY_MAXMIN, SLAQ_PRED_AUTO);
}

static void test_warm_epochs_on_nodes_do_not_allocate(void **state)
{
    (void)state;
    run_nodes(SLAQ_POLICY_SLAQ, SLAQ_PRED_AUTO, 8);
    run_nodes(SLAQ_POLICY_FAIR, SLAQ_PRED_STRAWMAN, 8);
}

static void test_the_counter_counts(void **state)
{
    (void)state;
    long before = allocations;
    slaq_history *h = slaq_history_new(8);
    assert_true(allocations - before >= 2);
    slaq_history_free(h);
    /* ... and sees allocations inside shared libraries. */
    before = allocations;
    gsl_vector *v = gsl_vector_alloc(3);
    assert_true(allocations - before >= 1);
    gsl_vector_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_counter_counts),
        cmocka_unit_test(test_warm_epochs_do_not_allocate),
        cmocka_unit_test(test_warm_epochs_on_nodes_do_not_allocate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
