/*
 * test_heap.c — the core's binary heap (src/core/heap.h): an empty heap is
 * left alone, one item comes back, equal keys come out in the one order
 * the heap fixes (allocations and whole simulations depend on it), a NaN
 * key stays at the root unless the order ranks it, heapify and pushes
 * both give valid heaps, a re-keyed item sifts back into place, and the
 * heap sort, of indices or of records, agrees with qsort.
 */
#include <string.h>

#include "core/heap.h"
#include "testutil.h"

/* Orders on a key array: larger key first. `larger` leaves ties (and
 * NaN) to the heap; `larger_then_lower` breaks them by the lower index,
 * a total order as policy.c's; `ranked` puts NaN below every number, as
 * policy.c's key_before does. */
static int larger(const void *ctx, size_t a, size_t b)
{
    const double *key = ctx;
    return key[a] > key[b];
}

static int larger_then_lower(const void *ctx, size_t a, size_t b)
{
    const double *key = ctx;
    if (key[a] != key[b])
        return key[a] > key[b];
    return a < b;
}

static int ranked(const void *ctx, size_t a, size_t b)
{
    const double *key = ctx;
    double ka = key[a] == key[a] ? key[a] : -INFINITY;
    double kb = key[b] == key[b] ? key[b] : -INFINITY;
    return ka > kb;
}

/* A fixed sequence of pseudo-random numbers (xorshift64). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* v[0..n) = 0 .. n-1 in a random order (Fisher-Yates). */
static void shuffled(size_t *v, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = (size_t)(rnd(s) % (i + 1));
        v[i] = v[j];
        v[j] = i;
    }
}

/* No child of h[0..n) comes out before its parent. */
static int is_heap(const size_t *h, size_t n, heap_before_fn before,
                   const void *ctx)
{
    for (size_t c = 1; c < n; c++)
        if (before(ctx, h[c], h[(c - 1) / 2]))
            return 0;
    return 1;
}

static void test_empty_heap_is_left_alone(void **state)
{
    (void)state;
    double key[] = {1, 2};
    size_t h[] = {7, 8};
    heap_build(h, 0, larger, key);
    heap_sort(h, 0, larger, key);
    assert_true(h[0] == 7 && h[1] == 8);
    /* one item is a heap and sorted as it stands */
    heap_build(h, 1, larger, key);
    heap_sort(h, 1, larger, key);
    assert_true(h[0] == 7 && h[1] == 8);
}

static void test_one_item_comes_back(void **state)
{
    (void)state;
    double key[] = {3};
    size_t h[1];
    heap_push(h, 0, 0, larger, key);
    assert_int_equal(h[0], 0);
    assert_int_equal(heap_pop(h, 1, larger, key), 0);
}

static void test_equal_keys_come_out_in_a_fixed_order(void **state)
{
    (void)state;
    /* An item moves up only past one it is strictly before, so among
     * equal keys nothing moves: the last item, put at the root by a pop,
     * comes out next. Four equal keys come out 0, 3, 2, 1. */
    double same[] = {1, 1, 1, 1};
    size_t h[12] = {0, 1, 2, 3};
    size_t want4[] = {0, 3, 2, 1};
    heap_build(h, 4, larger, same);
    for (size_t n = 4; n > 0; n--)
        assert_int_equal(heap_pop(h, n, larger, same), want4[4 - n]);

    /* Twelve items of keys 0, 1, 2, 0, 1, 2, ...: the order the heaps
     * slaq had before heap.h (policy.c's, mlfs.c's, dlsim.c's, sim.c's)
     * gave, and so the order its results were made with. */
    double key[12];
    for (size_t i = 0; i < 12; i++) {
        key[i] = (double)(i * 7 % 3);
        h[i] = i;
    }
    size_t want_pop[] = {8, 11, 2, 5, 1, 7, 4, 10, 0, 3, 9, 6};
    heap_build(h, 12, larger, key);
    for (size_t n = 12; n > 0; n--)
        assert_int_equal(heap_pop(h, n, larger, key), want_pop[12 - n]);
    size_t want_sort[] = {6, 9, 3, 0, 10, 4, 7, 1, 5, 2, 11, 8};
    for (size_t i = 0; i < 12; i++)
        h[i] = i;
    heap_sort(h, 12, larger, key);
    for (size_t i = 0; i < 12; i++)
        assert_int_equal(h[i], want_sort[i]);
}

static void test_nan_key_stays_at_the_root_unless_ranked(void **state)
{
    (void)state;
    /* NaN compares false both ways: at the root nothing is before it,
     * and it would come out first whatever the other keys. */
    double key[] = {NAN, 1, 3, 2};
    size_t h[] = {0, 1, 2, 3};
    heap_build(h, 4, larger, key);
    assert_int_equal(heap_pop(h, 4, larger, key), 0);
    /* ranked below every number, it comes out last */
    size_t want[] = {2, 3, 1, 0};
    for (size_t i = 0; i < 4; i++)
        h[i] = i;
    heap_build(h, 4, ranked, key);
    for (size_t n = 4; n > 0; n--)
        assert_int_equal(heap_pop(h, n, ranked, key), want[4 - n]);
}

static void test_heapify_and_pushes_give_valid_heaps(void **state)
{
    (void)state;
    enum { N = 300 };
    double key[N];
    size_t built[N], pushed[N];
    uint64_t s = 42;
    for (size_t n = 0; n <= N; n += 1 + n / 4) {
        for (size_t i = 0; i < n; i++) {
            key[i] = (double)(rnd(&s) % 10); /* many equal keys */
            built[i] = i;
            heap_push(pushed, i, i, larger, key);
            assert_true(is_heap(pushed, i + 1, larger, key));
        }
        heap_build(built, n, larger, key);
        assert_true(is_heap(built, n, larger, key));
        /* both give the keys back largest first, every item once */
        double last_b = INFINITY, last_p = INFINITY;
        unsigned char seen[N] = {0};
        for (size_t m = n; m > 0; m--) {
            size_t b = heap_pop(built, m, larger, key);
            size_t p = heap_pop(pushed, m, larger, key);
            assert_true(key[b] <= last_b && key[p] <= last_p);
            assert_true(key[b] == key[p]);
            last_b = key[b];
            last_p = key[p];
            assert_false(seen[b]);
            seen[b] = 1;
            assert_true(is_heap(built, m - 1, larger, key));
        }
    }
}

static void test_rekeyed_item_sifts_back_into_place(void **state)
{
    (void)state;
    enum { N = 200 };
    double key[N];
    size_t h[N];
    uint64_t s = 7;
    for (size_t i = 0; i < N; i++) {
        key[i] = (double)(rnd(&s) % 50);
        h[i] = i;
    }
    heap_build(h, N, larger_then_lower, key);
    for (int k = 0; k < 2000; k++) {
        size_t pos = rnd(&s) % N;
        double old = key[h[pos]];
        key[h[pos]] = (double)(rnd(&s) % 50);
        if (key[h[pos]] > old)
            heap_sift_up(h, pos, larger_then_lower, key);
        else
            heap_sift_down(h, N, pos, larger_then_lower, key);
        assert_true(is_heap(h, N, larger_then_lower, key));
    }
}

/* qsort_r's comparison for larger_then_lower's order, reversed:
 * ascending by key, ties by the higher index first. */
static int qsort_cmp(const void *x, const void *y, void *ctx)
{
    const double *key = ctx;
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    if (key[a] != key[b])
        return key[a] < key[b] ? -1 : 1;
    return a > b ? -1 : a < b;
}

static void test_heap_sort_agrees_with_qsort(void **state)
{
    (void)state;
    enum { N = 257 };
    double key[N];
    size_t h[N], q[N];
    uint64_t s = 2024;
    for (size_t n = 0; n <= N; n += 1 + n / 3) {
        for (size_t i = 0; i < n; i++)
            key[i] = (double)(rnd(&s) % 20) - 5;
        shuffled(h, n, &s);
        memcpy(q, h, n * sizeof *h);
        heap_sort(h, n, larger_then_lower, key);
        qsort_r(q, n, sizeof *q, qsort_cmp, key);
        assert_memory_equal(h, q, n * sizeof *h);
    }
}

/* A record as the core sorts them (policy.c's fair_item, shares.c's
 * wf_item): a key and an index that breaks its ties. */
struct rec {
    double key;
    size_t idx;
};

static int rec_cmp(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Records of many equal keys, and of every length from 0 up, come out of
 * heap_sort_records in qsort's order (a total order has one), in place. */
static void test_records_sort_as_qsort_does(void **state)
{
    (void)state;
    enum { N = 300 };
    struct rec r[N], q[N];
    size_t perm[N];
    uint64_t s = 77;
    for (size_t n = 0; n <= N; n += 1 + n / 4) {
        shuffled(perm, n, &s);
        for (size_t i = 0; i < n; i++)
            r[i] = (struct rec){(double)(rnd(&s) % 7), perm[i]};
        memcpy(q, r, n * sizeof *r);
        heap_sort_records(r, n, sizeof *r, rec_cmp);
        qsort(q, n, sizeof *q, rec_cmp);
        assert_memory_equal(r, q, n * sizeof *r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_heap_is_left_alone),
        cmocka_unit_test(test_one_item_comes_back),
        cmocka_unit_test(test_equal_keys_come_out_in_a_fixed_order),
        cmocka_unit_test(test_nan_key_stays_at_the_root_unless_ranked),
        cmocka_unit_test(test_heapify_and_pushes_give_valid_heaps),
        cmocka_unit_test(test_rekeyed_item_sifts_back_into_place),
        cmocka_unit_test(test_heap_sort_agrees_with_qsort),
        cmocka_unit_test(test_records_sort_as_qsort_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
