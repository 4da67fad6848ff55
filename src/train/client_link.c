/*
 * client_link.c — the one place where slaq-train meets slaq.
 *
 * A job asks slaq how many threads to run before each iteration, reports
 * each finished iteration (loss, CPU seconds, samples), and stops when slaq
 * says so. All of it goes through libslaq-client (include/slaq/client.h),
 * which never blocks the training loop and works without slaqd: with
 * SLAQ_SOCKET unset (or slaqd gone) the allocation is --threads and slaq
 * never says stop, so slaq-train runs standalone exactly as before.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "slaq/client.h"
#include "train/train.h"

struct train_sched {
    slaq_client *client;
};

struct train_sched *train_sched_open(const char *job_name, double threads)
{
    struct train_sched *s = train_xcalloc(1, sizeof *s);
    /* A process that attaches itself (no SLAQ_JOB_ID) is listed under the
     * run's name rather than "slaq-train", unless the user chose one. */
    if (job_name && job_name[0])
        setenv("SLAQ_JOB_NAME", job_name, 0);
    s->client = slaq_client_open();
    if (!s->client) {
        fprintf(stderr, "slaq-train: out of memory\n");
        exit(1);
    }
    /* Until slaqd says otherwise (or without slaqd) the job uses what the
     * user asked for, not every online CPU. */
    slaq_client_set_default_cores(s->client, threads);
    return s;
}

void train_sched_set_iters(struct train_sched *s, int iters)
{
    if (iters > 0)
        slaq_client_set_iters(s->client, (uint64_t)iters);
}

int train_sched_threads(struct train_sched *s)
{
    /* slaq's one thread rule (docs/client.md), applied to slaqd's
     * allocation, or to --threads before slaqd has given one and without
     * slaqd. */
    return slaq_client_threads(s->client);
}

void train_sched_report(struct train_sched *s, int iter, double loss,
                        double cpu_s, double samples, double metric)
{
    /* A dropped report (no slaqd) or a non-finite loss (the job then stops
     * as diverged) is not the training loop's concern. */
    if (!isfinite(metric))
        metric = NAN;
    (void)slaq_client_report_metric(s->client, (uint64_t)iter, loss, metric,
                                    cpu_s, samples);
}

void train_sched_set_metric_name(struct train_sched *s, const char *name)
{
    (void)slaq_client_set_metric_name(s->client, name);
}

bool train_sched_should_stop(struct train_sched *s)
{
    return slaq_client_should_stop(s->client) != 0;
}

void train_sched_close(struct train_sched *s)
{
    if (!s)
        return;
    slaq_client_close(s->client);
    free(s);
}
