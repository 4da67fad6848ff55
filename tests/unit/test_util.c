/*
 * test_util.c — the shared helpers of src/core/util.h. Array growth: the
 * capacity doubles from its first size, overflow is refused, and a failed
 * resize leaves the old array, its contents and its address as they were.
 * Error messages: formatted, cut to the buffer, no write without one.
 */
#include <stdlib.h>
#include <string.h>

/* A realloc that fails on demand (counts the calls that reach it). */
static int fail_next;
static int calls;
static void *test_realloc(void *p, size_t bytes)
{
    calls++;
    if (fail_next) {
        fail_next = 0;
        return NULL;
    }
    return realloc(p, bytes);
}
#define GROW_REALLOC test_realloc
#include "core/util.h"
#include "testutil.h"

static void test_cap_doubles_from_first_until_need_fits(void **state)
{
    (void)state;
    assert_int_equal(grow_cap(0, 1, 16), 16);
    assert_int_equal(grow_cap(0, 16, 16), 16);
    assert_int_equal(grow_cap(0, 17, 16), 32);
    assert_int_equal(grow_cap(0, 100, 16), 128);
    /* from a capacity: doubled at least once, from it (not from first) */
    assert_int_equal(grow_cap(24, 25, 16), 48);
    assert_int_equal(grow_cap(24, 97, 16), 192);
    assert_int_equal(grow_cap(3, 4, 64), 6);
}

static void test_cap_that_holds_need_is_kept(void **state)
{
    (void)state;
    assert_int_equal(grow_cap(32, 32, 16), 32);
    assert_int_equal(grow_cap(32, 0, 16), 32);
    assert_int_equal(grow_cap(0, 0, 16), 0);
}

static void test_cap_overflow_gives_zero(void **state)
{
    (void)state;
    assert_int_equal(grow_cap(SIZE_MAX / 2 + 1, SIZE_MAX, 16), 0);
    assert_int_equal(grow_cap(0, SIZE_MAX, 16), 0);
    /* the largest power of two is still reachable */
    size_t top = SIZE_MAX / 2 + 1;
    assert_true(grow_cap(1, top, 1) == top);
}

static void test_array_grows_and_keeps_elements(void **state)
{
    (void)state;
    double *v = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 1000; i++) {
        if (i == cap) {
            size_t nc = grow_cap(cap, i + 1, 4);
            assert_int_equal(GROW_ARRAY(v, nc), 0);
            cap = nc;
        }
        v[i] = (double)i * 0.5;
    }
    assert_int_equal(cap, 1024);
    for (size_t i = 0; i < 1000; i++)
        assert_near(v[i], (double)i * 0.5, 0);
    free(v);
}

static void test_failed_resize_leaves_old_array(void **state)
{
    (void)state;
    int *v = NULL;
    assert_int_equal(GROW_ARRAY(v, 8), 0);
    for (int i = 0; i < 8; i++)
        v[i] = 100 + i;
    int *before = v;
    fail_next = 1;
    assert_int_equal(GROW_ARRAY(v, 64), -1);
    assert_ptr_equal(v, before);
    for (int i = 0; i < 8; i++)
        assert_int_equal(v[i], 100 + i);
    /* and the next resize works on it */
    assert_int_equal(GROW_ARRAY(v, 64), 0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(v[i], 100 + i);
    free(v);
}

static void test_overflowing_size_is_refused_before_realloc(void **state)
{
    (void)state;
    double *v = NULL;
    assert_int_equal(GROW_ARRAY(v, 2), 0);
    v[0] = 1.5;
    v[1] = 2.5;
    double *before = v;
    int n = calls;
    assert_int_equal(GROW_ARRAY(v, SIZE_MAX / sizeof *v + 1), -1);
    assert_int_equal(calls, n);   /* the wrapped size never reached realloc */
    assert_ptr_equal(v, before);
    assert_near(v[0], 1.5, 0);
    assert_near(v[1], 2.5, 0);
    free(v);
}

static void test_errf_formats_and_cuts_to_the_buffer(void **state)
{
    (void)state;
    char err[16];
    util_errf(err, sizeof err, "line %d: %s", 12, "bad");
    assert_string_equal(err, "line 12: bad");
    util_errf(err, sizeof err, "line %d: field %s", 12, "\"loss\" is long");
    assert_int_equal(strlen(err), sizeof err - 1);
    assert_string_equal(err, "line 12: field ");
}

static void test_errf_without_a_buffer_writes_nothing(void **state)
{
    (void)state;
    char err[8] = "keep";
    util_errf(NULL, 64, "x %d", 1);
    util_errf(err, 0, "x %d", 1);
    assert_string_equal(err, "keep");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cap_doubles_from_first_until_need_fits),
        cmocka_unit_test(test_cap_that_holds_need_is_kept),
        cmocka_unit_test(test_cap_overflow_gives_zero),
        cmocka_unit_test(test_array_grows_and_keeps_elements),
        cmocka_unit_test(test_failed_resize_leaves_old_array),
        cmocka_unit_test(test_overflowing_size_is_refused_before_realloc),
        cmocka_unit_test(test_errf_formats_and_cuts_to_the_buffer),
        cmocka_unit_test(test_errf_without_a_buffer_writes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
