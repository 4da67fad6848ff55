/*
 * toy_job.c — a stand-in training job that speaks to slaqd through
 * libslaq-client: the smallest complete example of the C client, and the
 * workload of slaqd's end-to-end tests.
 *
 * Each iteration burns a fixed amount of CPU time (split over the threads
 * slaq_client_threads() gives for the allocation, as a real job would size
 * its thread pool)
 * and "reaches" the loss of a sublinear curve, L(k) = 1/(rate·k + 1) + floor.
 * It reports every iteration and stops when slaqd asks it to, after
 * --iters iterations, or (for tests) crashes at --crash-at.
 *
 *   slaq submit -- slaq-toy-job --iters 200 --iter-cpu 0.02
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slaq/client.h"
#include "slaq/version.h"

static double cpu_now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Spins until this thread has used `*arg` CPU-seconds. */
static void *burn(void *arg)
{
    double want = *(double *)arg;
    double t0 = cpu_now(CLOCK_THREAD_CPUTIME_ID);
    volatile double x = 0;
    while (cpu_now(CLOCK_THREAD_CPUTIME_ID) - t0 < want)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq-toy-job [--iters N] [--iter-cpu SECONDS] "
               "[--rate R] [--crash-at K] [--forever]\n\n"
               "A toy training job for slaqd: each iteration burns SECONDS "
               "of CPU (default\n0.02) over the threads slaq advises and "
               "reports the loss 1/(R k + 1) + 0.1\n(R default 0.1) through "
               "the C client.\n\n"
               "  --iters N         iterations to run (default 100)\n"
               "  --iter-cpu S      CPU-seconds per iteration (default 0.02)\n"
               "  --rate R          how fast the loss falls (default 0.1)\n"
               "  --forever         run until stopped\n"
               "  --crash-at K      exit 3 at iteration K without "
               "a goodbye, like a crash\n"
               "  -h, --help        this text\n"
               "  -V, --version     the version\n");
}

int main(int argc, char **argv)
{
    long iters = 100, crash_at = -1;
    double iter_cpu = 0.02, rate = 0.1;
    int forever = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--iters") && v)
            iters = atol(argv[++i]);
        else if (!strcmp(a, "--iter-cpu") && v)
            iter_cpu = atof(argv[++i]);
        else if (!strcmp(a, "--rate") && v)
            rate = atof(argv[++i]);
        else if (!strcmp(a, "--crash-at") && v)
            crash_at = atol(argv[++i]);
        else if (!strcmp(a, "--forever"))
            forever = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("slaq-toy-job %s\n", SLAQ_VERSION);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    slaq_client *c = slaq_client_open();
    if (!c)
        return 1;
    slaq_client_report(c, 0, 1.1, 0, 0);
    for (long k = 1; forever || k <= iters; k++) {
        if (slaq_client_should_stop(c)) {
            printf("stopping at iteration %ld: %s\n", k - 1,
                   slaq_client_stop_reason(c));
            break;
        }
        if (k == crash_at) {
            fprintf(stderr, "toy job: crashing at iteration %ld as asked\n", k);
            fflush(NULL);
            _exit(3); /* like a crash: no clean-up, no goodbye */
        }
        int threads = slaq_client_threads(c);
        threads = threads > 64 ? 64 : threads;
        double share = iter_cpu / threads, t0 = cpu_now(CLOCK_PROCESS_CPUTIME_ID);
        pthread_t tid[64];
        for (int t = 1; t < threads; t++)
            pthread_create(&tid[t], NULL, burn, &share);
        burn(&share);
        for (int t = 1; t < threads; t++)
            pthread_join(tid[t], NULL);
        double loss = 1.0 / (rate * (double)k + 1.0) + 0.1;
        slaq_client_report(c, (uint64_t)k, loss,
                           cpu_now(CLOCK_PROCESS_CPUTIME_ID) - t0, 1000);
        if (k % 50 == 0)
            printf("iteration %ld loss %.4f cores %.2f\n", k, loss,
                   slaq_client_cores(c));
    }
    fflush(stdout);
    slaq_client_close(c);
    return 0;
}
