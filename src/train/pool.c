/*
 * pool.c — the data-parallel worker pool of slaq-train.
 *
 * Each parallel pass starts job->n_workers threads (the calling thread is
 * worker 0) that take partitions from a shared counter until none are left.
 * Threads are started per pass rather than kept alive: a pass is at least
 * milliseconds of BLAS work, thread start-up is tens of microseconds, and
 * per-pass threads make it trivial to follow a new allocation every
 * iteration (slaq may change it at any epoch).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "train/train.h"

struct pool_pass {
    struct train_job *job;
    train_part_fn fn;
    void *ctx;
    atomic_size_t next;
};

struct pool_worker {
    struct pool_pass *pass;
    int w;
};

static void *pool_work(void *arg)
{
    struct pool_worker *pw = arg;
    struct pool_pass *pp = pw->pass;
    for (;;) {
        size_t i = atomic_fetch_add(&pp->next, 1);
        if (i >= pp->job->n_parts)
            break;
        pp->fn(pp->ctx, &pp->job->parts[i], pw->w);
    }
    return NULL;
}

void train_pool_run(struct train_job *job, train_part_fn fn, void *ctx)
{
    int n = job->n_workers;
    if (n < 1)
        n = 1;
    if (n > job->max_workers)
        n = job->max_workers;
    struct pool_pass pp = {.job = job, .fn = fn, .ctx = ctx};
    atomic_init(&pp.next, 0);
    struct pool_worker pw[n];
    pthread_t tid[n];
    int started = 1;
    for (int w = 0; w < n; w++)
        pw[w] = (struct pool_worker){.pass = &pp, .w = w};
    for (int w = 1; w < n; w++) {
        /* If a thread cannot start, the others (at least this one) still
         * finish every partition: slower, never wrong. */
        if (pthread_create(&tid[w], NULL, pool_work, &pw[w]) != 0)
            break;
        started++;
    }
    pool_work(&pw[0]);
    for (int w = 1; w < started; w++)
        pthread_join(tid[w], NULL);
    job->passes++;
}
