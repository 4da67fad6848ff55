/*
 * test_aqp_oom.c — an approximate query whose arrays cannot grow: the
 * progress metric and slaq_query_add return SLAQ_ENOMEM, keep every
 * mini-batch they had, and once memory is back go on exactly as a query
 * that never failed.
 *
 * Linked with -Wl,--wrap=realloc (tests/module.mk): a resize of more than
 * `realloc_limit` bytes from libslaq fails.
 */
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "testutil.h"

void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);

static size_t realloc_limit; /* 0: none */

void *__wrap_realloc(void *p, size_t n)
{
    if (realloc_limit && n > realloc_limit)
        return NULL;
    return __real_realloc(p, n);
}

/* Mini-batch i's three estimates, converging like 1/i. */
static void batch_x(size_t i, double *x)
{
    for (int c = 0; c < 3; c++)
        x[c] = 10.0 * (c + 1) + 5.0 / (double)i + 0.01 * (double)(i % 3);
}

/* The arrays hold 64 mini-batches (512 bytes each); the 65th needs 1024. */
static void test_query_add_out_of_memory_keeps_batches(void **state)
{
    (void)state;
    slaq_query *q = slaq_query_new(NULL), *ref = slaq_query_new(NULL);
    assert_non_null(q);
    assert_non_null(ref);
    double x[3];
    for (size_t i = 1; i <= 64; i++) {
        batch_x(i, x);
        assert_int_equal(slaq_query_add(q, i, x, 3, 0.1), SLAQ_OK);
        assert_int_equal(slaq_query_add(ref, i, x, 3, 0.1), SLAQ_OK);
    }
    double before = slaq_query_predict(q, 10), last = slaq_query_last(q);

    batch_x(65, x);
    realloc_limit = 600;
    assert_int_equal(slaq_query_add(q, 65, x, 3, 0.1), SLAQ_ENOMEM);
    /* The progress metric alone fails the same way. */
    slaq_progress *p = slaq_progress_new();
    for (size_t i = 1; i <= 64; i++) {
        batch_x(i, x);
        assert_int_equal(slaq_progress_add(p, x, 3), SLAQ_OK);
    }
    batch_x(65, x);
    assert_int_equal(slaq_progress_add(p, x, 3), SLAQ_ENOMEM);
    assert_int_equal(slaq_progress_batches(p), 64);
    realloc_limit = 0;
    slaq_progress_free(p);

    assert_int_equal(slaq_query_batches(q), 64);
    assert_true(slaq_query_last(q) == last);
    assert_true(slaq_query_predict(q, 10) == before);

    for (size_t i = 65; i <= 200; i++) {
        batch_x(i, x);
        assert_int_equal(slaq_query_add(q, i, x, 3, 0.1), SLAQ_OK);
        assert_int_equal(slaq_query_add(ref, i, x, 3, 0.1), SLAQ_OK);
    }
    assert_int_equal(slaq_query_batches(q), 200);
    assert_true(slaq_query_last(q) == slaq_query_last(ref));
    assert_true(slaq_query_predict(q, 10) == slaq_query_predict(ref, 10));
    assert_true(slaq_query_work(q) == slaq_query_work(ref));
    slaq_query_free(q);
    slaq_query_free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_add_out_of_memory_keeps_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
