/*
 * bench.c — `slaq bench sched`: how long the scheduling core takes per
 * epoch at a given scale.
 *
 * Synthetic jobs follow random curves of both families the predictors know
 * (sublinear 1/k-like and geometric), with a little noise so that fits do
 * real work. Before every measured epoch each job reports one more
 * iteration, so every predictor refits: the worst case. The refit and the
 * allocation are timed separately (slaq_sched_refit, slaq_sched_allocate:
 * together exactly slaq_sched_epoch) with CLOCK_MONOTONIC.
 */
#include <getopt.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/stats.h"
#include "slaq/slaq.h"

static const char usage_text[] =
    "usage: slaq bench sched --jobs N --cores C [--history H] [--epochs E]\n"
    "                        [--policy P] [--predictor P] [--unit U]\n"
    "                        [--seed S] [--json]\n\n"
    "Times the scheduling core: N synthetic jobs with H iterations of\n"
    "history each share C cores; every epoch each job reports once more, is\n"
    "refitted, and the cores are re-divided. Prints the median and 99th\n"
    "percentile, in milliseconds, of the refit, the allocation and the whole\n"
    "epoch.\n\n"
    "  --jobs N        jobs (4000)          --cores C      cores (16000)\n"
    "  --history H     iterations each (50) --epochs E     measured (20)\n"
    "  --policy P      slaq (default), fair, slaq-maxmin\n"
    "  --predictor P   auto (default), slaq-fit, strawman\n"
    "  --unit U        allocation unit in cores (1)\n"
    "  --seed S        random seed (1)\n"
    "  --json          print {\"fit_ms\": {\"median\": x, \"p99\": y},\n"
    "                  \"alloc_ms\": {...}, \"epoch_ms\": {...}}\n";

typedef struct bench_job {
    int family;       /* 0: 1/(a k^2 + b k + c) + d, 1: A mu^k + c */
    double p[4];
    double noise;
    uint64_t k;       /* next iteration to report */
    slaq_job *job;
} bench_job;

static double bench_loss(const bench_job *b, gsl_rng *r)
{
    double k = (double)b->k, v;
    if (b->family == 0)
        v = 1.0 / ((b->p[0] * k + b->p[1]) * k + b->p[2]) + b->p[3];
    else
        v = b->p[0] * pow(b->p[1], k) + b->p[2];
    return v * (1 + b->noise * (gsl_rng_uniform(r) - 0.5));
}

/* Median and 99th percentile (nearest rank) of v[0..n-1]; sorts v. */
static void stats(double *v, int n, double *med, double *p99)
{
    *p99 = stats_quantile(v, (size_t)n, 0.99);
    *med = stats_median_sorted(v, (size_t)n);
}

static int bench_sched(int argc, char **argv)
{
    static const struct option opts[] = {
        {"jobs", required_argument, 0, 'n'},
        {"cores", required_argument, 0, 'c'},
        {"history", required_argument, 0, 'H'},
        {"epochs", required_argument, 0, 'e'},
        {"policy", required_argument, 0, 'P'},
        {"predictor", required_argument, 0, 'p'},
        {"unit", required_argument, 0, 'u'},
        {"seed", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    double jobs = 4000, cores = 16000, hist = 50, epochs = 20, unit = 1,
           seed = 1;
    int json = 0;
    slaq_sched_config cfg;
    slaq_sched_config_init(&cfg);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'n': bad = cli_parse_positive("bench", "--jobs", optarg, &jobs); break;
        case 'c': bad = cli_parse_positive("bench", "--cores", optarg, &cores); break;
        case 'H': bad = cli_parse_positive("bench", "--history", optarg, &hist); break;
        case 'e': bad = cli_parse_positive("bench", "--epochs", optarg, &epochs); break;
        case 'u': bad = cli_parse_positive("bench", "--unit", optarg, &unit); break;
        case 's': bad = cli_parse_positive("bench", "--seed", optarg, &seed); break;
        case 'P':
            if (slaq_policy_parse(optarg, &cfg.policy)) {
                cli_error("bench", "--policy: unknown policy '%s'", optarg);
                bad = 1;
            }
            break;
        case 'p':
            if (slaq_predictor_parse(optarg, &cfg.predictor) ||
                cfg.predictor == SLAQ_PRED_ORACLE) {
                cli_error("bench", "--predictor: expected auto, slaq-fit or "
                                   "strawman, got '%s'", optarg);
                bad = 1;
            }
            break;
        case 'j': json = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: bad = 1;
        }
        if (bad) {
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("bench", "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    size_t n = (size_t)jobs;
    int progress = !json && isatty(STDERR_FILENO);
    int ne = (int)epochs;
    cfg.cores = cores;
    cfg.unit = unit;
    cfg.epoch_s = 1;

    slaq_sched *s = slaq_sched_new(&cfg);
    bench_job *bj = calloc(n, sizeof *bj);
    double *t_fit = calloc((size_t)ne, sizeof(double));
    double *t_alloc = calloc((size_t)ne, sizeof(double));
    double *t_epoch = calloc((size_t)ne, sizeof(double));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = EXIT_RUNTIME;
    if (!s || !bj || !t_fit || !t_alloc || !t_epoch || !r) {
        cli_error("bench", "out of memory");
        goto out;
    }
    gsl_rng_set(r, (unsigned long)seed);

    if (!json)
        fprintf(stderr, "bench: %zu jobs, %.0f cores, history %.0f, "
                        "%d epochs (%s, %s)\n",
                n, cores, hist, ne, slaq_policy_name(cfg.policy),
                slaq_predictor_name(cfg.predictor));
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        bench_job *b = &bj[i];
        b->family = (int)gsl_rng_uniform_int(r, 2);
        if (b->family == 0) {
            b->p[0] = 0.01 * gsl_rng_uniform(r);
            b->p[1] = 0.05 + gsl_rng_uniform(r);
            b->p[2] = 0.5 + 1.5 * gsl_rng_uniform(r);
            b->p[3] = gsl_rng_uniform(r);
        } else {
            b->p[0] = 0.5 + 10 * gsl_rng_uniform(r);
            b->p[1] = 0.8 + 0.18 * gsl_rng_uniform(r);
            b->p[2] = gsl_rng_uniform(r);
        }
        b->noise = 1e-3 * gsl_rng_uniform(r);
        slaq_job_opts jo;
        slaq_job_opts_init(&jo);
        jo.max_cores = 64;
        jo.weight = 1 + (double)gsl_rng_uniform_int(r, 3);
        b->job = slaq_sched_add(s, &jo, 0);
        if (!b->job) {
            cli_error("bench", "out of memory adding job %zu", i);
            goto out;
        }
        double cpu = 0.5 + 20 * gsl_rng_uniform(r);
        for (; b->k <= (uint64_t)hist; b->k++) {
            slaq_report rep = {b->k, bench_loss(b, r), cpu, 1000, t};
            slaq_job_report(b->job, &rep);
        }
    }
    /* One unmeasured epoch: every predictor has fitted once, as in a
     * scheduler that has been running. */
    slaq_sched_epoch(s, t);

    for (int e = 0; e < ne; e++) {
        t += 1;
        for (size_t i = 0; i < n; i++) {
            bench_job *b = &bj[i];
            slaq_report rep = {b->k, bench_loss(b, r), 10, 1000, t};
            slaq_job_report(b->job, &rep);
            b->k++;
        }
        double t0 = stats_now_ms();
        slaq_sched_refit(s);
        double t1 = stats_now_ms();
        if (slaq_sched_allocate(s, t)) {
            cli_error("bench", "allocation failed");
            goto out;
        }
        double t2 = stats_now_ms();
        t_fit[e] = t1 - t0;
        t_alloc[e] = t2 - t1;
        t_epoch[e] = t2 - t0;
        if (progress)
            fprintf(stderr, "\repoch %d/%d: %.2f ms", e + 1, ne, t_epoch[e]);
    }
    double fm, fp, am, ap, em, ep;
    stats(t_fit, ne, &fm, &fp);
    stats(t_alloc, ne, &am, &ap);
    stats(t_epoch, ne, &em, &ep);
    if (json) {
        json_t *o = json_pack("{s:{s:f,s:f}, s:{s:f,s:f}, s:{s:f,s:f}, s:I, "
                              "s:f, s:I, s:s, s:s}",
                              "fit_ms", "median", fm, "p99", fp, "alloc_ms",
                              "median", am, "p99", ap, "epoch_ms", "median",
                              em, "p99", ep, "jobs", (json_int_t)n, "cores",
                              cores, "history", (json_int_t)hist, "policy",
                              slaq_policy_name(cfg.policy), "predictor",
                              slaq_predictor_name(cfg.predictor));
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
        json_decref(o);
    } else {
        if (progress)
            fprintf(stderr, "\n");
        printf("%-8s %10s %10s\n", "ms", "median", "p99");
        printf("%-8s %10.3f %10.3f\n", "fit", fm, fp);
        printf("%-8s %10.3f %10.3f\n", "alloc", am, ap);
        printf("%-8s %10.3f %10.3f\n", "epoch", em, ep);
    }
    rc = 0;
out:
    slaq_sched_free(s);
    free(bj);
    free(t_fit);
    free(t_alloc);
    free(t_epoch);
    if (r)
        gsl_rng_free(r);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sched"))
        return bench_sched(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    cli_error("bench", "expected a benchmark name: sched");
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}
