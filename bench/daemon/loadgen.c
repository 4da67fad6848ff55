/*
 * loadgen.c — slaq-loadgen, a load generator for slaqd: many attached jobs
 * in one process, each reporting iterations through libslaq-client as fast
 * as asked, so that slaqd's report path (parse, core, SQLite) and its epoch
 * with many jobs can be measured. bench/daemon/run.sh drives it and checks
 * that every report was persisted.
 *
 *   slaq-loadgen --socket var/slaq.sock --clients 1000 --seconds 10 \
 *                --rate 60000
 *
 * Prints one JSON object: reports sent (queued to the socket), dropped (the
 * client's buffer was full: slaqd did not keep up), and the rate achieved.
 *
 * For the kill -9 soak (bench/daemon/soak-kill9.py): --seconds 0 reports
 * until SIGTERM or SIGINT; --ack-wait S then waits up to S seconds for
 * slaqd to confirm every report (clients reconnect by themselves); --out
 * FILE writes one line per client, "JOB_ID MADE UNACKED": its reports
 * were iterations 0..MADE-1 with loss 1/(0.01 k + 1) + CLIENT/1e6 (a
 * dropped report is retried with the same iteration, so MADE counts
 * only reports the client took), UNACKED of them still unconfirmed.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "slaq/client.h"

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static volatile sig_atomic_t stop_flag;

static void on_stop(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq-loadgen --socket PATH [--clients N] [--seconds S]"
               " [--rate REPORTS_PER_S]\n"
               "  --clients N   attached jobs (default 1000)\n"
               "  --seconds S   how long to report (default 10; 0: until "
               "SIGTERM)\n"
               "  --rate R      total reports per second (default 60000; 0: "
               "as fast as possible)\n"
               "  --ack-wait S  then wait up to S s until slaqd confirmed "
               "every report\n"
               "  --out FILE    one line per client: JOB_ID MADE UNACKED\n");
}

int main(int argc, char **argv)
{
    const char *sock = NULL;
    long nclients = 1000;
    double seconds = 10, rate = 60000, ack_wait = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--socket") && v)
            sock = argv[++i];
        else if (!strcmp(argv[i], "--clients") && v)
            nclients = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && v)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rate") && v)
            rate = atof(argv[++i]);
        else if (!strcmp(argv[i], "--ack-wait") && v)
            ack_wait = atof(argv[++i]);
        else if (!strcmp(argv[i], "--out") && v)
            out = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!sock || nclients < 1 || !(seconds >= 0) || !(rate >= 0) ||
        !(ack_wait >= 0)) {
        usage(stderr);
        return 2;
    }
    /* One descriptor per client, plus some. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    slaq_client **c = calloc((size_t)nclients, sizeof *c);
    uint64_t *iter = calloc((size_t)nclients, sizeof *iter);
    if (!c || !iter)
        return 1;
    char name[32];
    for (long i = 0; i < nclients; i++) {
        snprintf(name, sizeof name, "load-%ld", i);
        c[i] = slaq_client_connect(sock, 0, name);
        if (!c[i]) {
            fprintf(stderr, "slaq-loadgen: out of memory at client %ld\n", i);
            return 1;
        }
    }
    /* Wait (up to 10 s) until every client is welcomed. */
    long ready = 0;
    for (double t0 = mono(); ready < nclients && mono() - t0 < 10;) {
        ready = 0;
        for (long i = 0; i < nclients; i++) {
            slaq_client_poll(c[i]);
            ready += slaq_client_connected(c[i]) != 0;
        }
        if (ready < nclients)
            usleep(10000);
    }
    if (ready < nclients) {
        fprintf(stderr, "slaq-loadgen: only %ld of %ld clients connected\n",
                ready, nclients);
        return 1;
    }
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    uint64_t sent = 0, dropped = 0;
    double start = mono(), end = seconds > 0 ? start + seconds : INFINITY;
    for (double now = start; now < end && !stop_flag; now = mono()) {
        for (long i = 0; i < nclients; i++) {
            uint64_t k = iter[i];
            double loss = 1.0 / (0.01 * (double)k + 1.0) + (double)i / 1e6;
            int rc = slaq_client_report(c[i], k, loss, 0.001, 100);
            iter[i] += rc == 0; /* a dropped iteration is made again */
            sent += rc == 0;
            dropped += rc != 0;
        }
        if (rate > 0) { /* pace the rounds to the asked total rate */
            double due = start + (double)(sent + dropped) / rate;
            double wait = due - mono();
            if (wait > 0)
                usleep((useconds_t)(wait * 1e6));
        }
    }
    double took = mono() - start;
    /* Until slaqd has confirmed every report (the clients reconnect and
     * resend by themselves), or the time is up. */
    size_t unacked = 0;
    for (double t0 = mono(); mono() - t0 <= ack_wait;) {
        unacked = 0;
        for (long i = 0; i < nclients; i++) {
            slaq_client_poll(c[i]);
            unacked += slaq_client_unacked(c[i]);
        }
        if (!unacked)
            break;
        usleep(10000);
    }
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            perror(out);
            return 1;
        }
        for (long i = 0; i < nclients; i++)
            fprintf(f, "%lld %llu %zu\n", (long long)slaq_client_job_id(c[i]),
                    (unsigned long long)iter[i], slaq_client_unacked(c[i]));
        if (fclose(f) != 0) {
            perror(out);
            return 1;
        }
    }
    for (long i = 0; i < nclients; i++)
        slaq_client_close_timeout(c[i], 5000);
    printf("{\"clients\": %ld, \"seconds\": %.3f, \"sent\": %llu, "
           "\"dropped\": %llu, \"sent_per_s\": %.0f, \"unacked\": %zu}\n",
           nclients, took, (unsigned long long)sent,
           (unsigned long long)dropped, (double)sent / took, unacked);
    free(c);
    free(iter);
    return 0;
}
