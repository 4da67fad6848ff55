/*
 * sched.c — the one place where slaq-train meets slaq.
 *
 * A job asks slaq how many cores it may use before each iteration, reports
 * each finished iteration (loss, CPU seconds, samples), and stops when slaq
 * says so. slaq's client library (include/slaq/client.h, built with slaqd)
 * is not part of this tree yet, so today these functions run the job
 * standalone: the allocation is --threads and slaq never says stop. That is
 * also exactly the behaviour the client promises when no slaqd is present
 * (SLAQ_SOCKET unset), so wiring the client in changes this file only:
 * open -> slaq_client_connect(getenv("SLAQ_SOCKET"), ...) with --threads as
 * the allocation while offline, allocation -> slaq_client_cores(),
 * report -> slaq_client_report(), should_stop -> slaq_client_should_stop(),
 * close -> slaq_client_close().
 */
#include <stdio.h>
#include <stdlib.h>

#include "train/train.h"

struct train_sched {
    double threads;     /* the allocation while no slaqd is connected */
};

struct train_sched *train_sched_open(const char *job_name, double threads)
{
    struct train_sched *s = train_xcalloc(1, sizeof *s);
    s->threads = threads;
    if (getenv("SLAQ_SOCKET"))
        fprintf(stderr,
                "slaq-train: %s: SLAQ_SOCKET is set but this build has no "
                "slaq client; running standalone on %g cores\n",
                job_name, threads);
    return s;
}

double train_sched_allocation(struct train_sched *s)
{
    return s->threads;
}

void train_sched_report(struct train_sched *s, int iter, double loss,
                        double cpu_s, double samples)
{
    (void)iter;
    (void)loss;
    (void)cpu_s;
    (void)samples;
    (void)s;
}

bool train_sched_should_stop(struct train_sched *s)
{
    (void)s;
    return false;
}

void train_sched_close(struct train_sched *s)
{
    free(s);
}
