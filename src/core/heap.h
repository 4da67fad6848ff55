/*
 * heap.h — the one binary heap of slaq: sift down, sift up, heapify, push,
 * pop and heap sort over an array of items (size_t) that the caller owns,
 * in the order of the caller's comparison.
 *
 * Every heap in slaq is of things that live in an array of the caller's —
 * jobs, nodes, slots, events — so the heap holds their indices and the
 * comparison looks the records up through a context pointer, as qsort_r
 * does. Nothing is allocated: the allocator runs these in every epoch,
 * where the core allocates nothing, and the sorts stand in for the C
 * library's qsort for the same reason (glibc's may allocate a buffer).
 *
 * The order is before(ctx, a, b): nonzero when item a comes out of the
 * heap ahead of item b. It need not be total — two keys may be equal, or
 * NaN — and then the heap decides which comes out first, by one fixed
 * rule: an item moves up past another only if it is strictly before it,
 * and the right child is taken over the left only if strictly before it.
 * It is the rule of every heap slaq wrote out by hand before this file,
 * so allocations and simulations that depend on the order of equal keys
 * came out bit for bit the same when their heaps moved here;
 * tests/unit/test_heap.c pins it. The items move as a hole, not by
 * swaps: each is written once, where it comes to rest. The item at i has
 * its children at 2i + 1 and 2i + 2.
 *
 * Header-only (static inline), so that the compiler inlines the
 * comparison into each heap's sifts: the greedy allocator sifts for every
 * unit it hands out, and there a call through the pointer for each
 * comparison cost 15% more instructions (callgrind, `slaq bench sched`).
 *
 * Private to the tree, not in include/slaq: no user of libslaq needs it.
 * The simulators (src/sim) include it as "core/heap.h", as they do
 * core/util.h.
 */
#ifndef SLAQ_CORE_HEAP_H
#define SLAQ_CORE_HEAP_H

#include <assert.h>
#include <stddef.h>
#include <string.h>

/* Nonzero when item a comes out of the heap before item b. */
typedef int (*heap_before_fn)(const void *ctx, size_t a, size_t b);

/* Restores the heap h[0..n) below pos, whose item may have become later
 * than its children (its key changed, or another item was put there). */
static inline void heap_sift_down(size_t *h, size_t n, size_t pos,
                                  heap_before_fn before, const void *ctx)
{
    size_t item = h[pos];
    for (;;) {
        size_t c = 2 * pos + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(ctx, h[c + 1], h[c]))
            c++;
        if (!before(ctx, h[c], item))
            break;
        h[pos] = h[c];
        pos = c;
    }
    h[pos] = item;
}

/* Restores the heap above pos, whose item may have become earlier than
 * its parent (it was just put there, or its key changed). */
static inline void heap_sift_up(size_t *h, size_t pos, heap_before_fn before,
                                const void *ctx)
{
    size_t item = h[pos];
    while (pos > 0) {
        size_t p = (pos - 1) / 2;
        if (!before(ctx, item, h[p]))
            break;
        h[pos] = h[p];
        pos = p;
    }
    h[pos] = item;
}

/* Makes h[0..n), in any order, a heap: O(n). */
static inline void heap_build(size_t *h, size_t n, heap_before_fn before,
                              const void *ctx)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_sift_down(h, n, i, before, ctx);
}

/* Adds item to the heap h[0..n); h must have room for n + 1 items. */
static inline void heap_push(size_t *h, size_t n, size_t item,
                             heap_before_fn before, const void *ctx)
{
    h[n] = item;
    heap_sift_up(h, n, before, ctx);
}

/* Removes the first item of the non-empty heap h[0..n) and returns it;
 * the heap is h[0..n-1) after. */
static inline size_t heap_pop(size_t *h, size_t n, heap_before_fn before,
                              const void *ctx)
{
    assert(n > 0);
    size_t top = h[0];
    h[0] = h[n - 1];
    heap_sift_down(h, n - 1, 0, before, ctx);
    return top;
}

/* Sorts h[0..n) in place so that an item before another comes after it:
 * ascending when before(a, b) means a's key is the larger. */
static inline void heap_sort(size_t *h, size_t n, heap_before_fn before,
                             const void *ctx)
{
    heap_build(h, n, before, ctx);
    for (size_t end = n; end > 1; end--) {
        size_t t = h[0];
        h[0] = h[end - 1];
        h[end - 1] = t;
        heap_sift_down(h, end - 1, 0, before, ctx);
    }
}

/* The largest record heap_sort_records moves. */
#define HEAP_RECORD_MAX 64

/* Swaps the records at a and b, of `size` bytes. */
static inline void heap_record_swap(unsigned char *a, unsigned char *b,
                                    size_t size)
{
    unsigned char t[HEAP_RECORD_MAX];
    memcpy(t, a, size);
    memcpy(a, b, size);
    memcpy(b, t, size);
}

/*
 * Sorts the n records of `size` bytes (at most HEAP_RECORD_MAX) at base in
 * place, ascending by cmp (qsort's contract: negative, 0 or positive),
 * allocating nothing, where the C library's qsort may allocate a buffer
 * at every call. Not stable: cmp must order every two distinct records
 * (break ties by an index), and then the result is the one sorted order
 * whatever the sort, the same as qsort's.
 */
static inline void heap_sort_records(void *base, size_t n, size_t size,
                                     int (*cmp)(const void *, const void *))
{
    assert(size > 0 && size <= HEAP_RECORD_MAX);
    unsigned char *v = base;
    if (n < 2)
        return;
    /* a heap with the largest record on top, then the top to the end */
    for (size_t end = n, start = n / 2;; ) {
        size_t pos;
        if (start > 0) {
            pos = --start;
        } else {
            if (--end == 0)
                break;
            heap_record_swap(v, v + end * size, size);
            pos = 0;
        }
        for (;;) {
            size_t c = 2 * pos + 1;
            if (c >= end)
                break;
            if (c + 1 < end && cmp(v + (c + 1) * size, v + c * size) > 0)
                c++;
            if (cmp(v + c * size, v + pos * size) <= 0)
                break;
            heap_record_swap(v + c * size, v + pos * size, size);
            pos = c;
        }
    }
}

#endif
