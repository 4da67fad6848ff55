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
#include <assert.h>
#include <getopt.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "io/stats.h"
#include "slaq/deadline.h"
#include "slaq/slaq.h"

/* The settings the synthetic benchmark starts from: the core's, on
 * 16,000 cores. */
static void bench_defaults(slaq_sched_config *cfg)
{
    slaq_sched_config_init(cfg);
    int rc = slaq_sched_config_set(cfg, "cores", "16000", NULL, 0);
    assert(rc == SLAQ_OK);
    (void)rc;
}

static void usage(FILE *f)
{
    fputs("usage: slaq bench sched [--jobs N] [--history H] [--epochs E] "
          "[--seed S]\n"
          "                        [SETTINGS] [--json]\n\n"
          "Times the scheduling core: N synthetic jobs with H iterations of\n"
          "history each share the cores; every epoch each job reports once "
          "more, is\nrefitted, and the cores are re-divided. Prints the "
          "median and 99th\npercentile, in milliseconds, of the refit, the "
          "allocation and the whole\nepoch.\n\n"
          "  --jobs N        jobs (4000)          --history H  iterations "
          "each (50)\n"
          "  --epochs E      measured (20)        --seed S     random seed "
          "(1)\n"
          "  --json          print {\"fit_ms\": {\"median\": x, \"p99\": "
          "y},\n"
          "                  \"alloc_ms\": {...}, \"epoch_ms\": {...}}\n\n"
          "Scheduler settings (docs/libslaq.md; the same as slaqd's):\n", f);
    slaq_sched_config dflt;
    bench_defaults(&dflt);
    setopt_help(f, 18, &dflt, NULL, NULL);
    fputs("\n       slaq bench cluster --workload FILE --nodes N "
          "--cores-per-node C\n"
          "Replays a workload in the simulator on N nodes and times its "
          "epochs\n(slaq bench cluster --help).\n", f);
}

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

/* What `slaq bench sched` was asked for. */
typedef struct bench_args {
    double jobs, hist, epochs, seed;
    int json;
    slaq_sched_config cfg;
} bench_args;

/* The measured wall times, one per epoch, in ms. */
typedef struct bench_times {
    int n;
    double *fit, *alloc, *epoch;
} bench_times;

/* Parses the command line. Returns -1 to go on, else the exit status. */
static int bench_parse(int argc, char **argv, bench_args *o)
{
    static const struct option own[] = {
        {"jobs", required_argument, 0, 'n'},
        {"history", required_argument, 0, 'H'},
        {"epochs", required_argument, 0, 'e'},
        {"seed", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
    };
    enum { NOWN = sizeof own / sizeof *own };
    struct option opts[NOWN + SETOPT_MAX + 1];
    setopt_build(opts, own, NOWN, NULL);
    *o = (bench_args){.jobs = 4000, .hist = 50, .epochs = 20, .seed = 1};
    bench_defaults(&o->cfg);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0, set = cli_setting("bench", &o->cfg, c, optarg);
        if (set < 0)
            return EXIT_USAGE;
        if (set == 0)
            continue;
        switch (c) {
        case 'n': bad = cli_parse_positive("bench", "--jobs", optarg, &o->jobs); break;
        case 'H': bad = cli_parse_positive("bench", "--history", optarg, &o->hist); break;
        case 'e': bad = cli_parse_positive("bench", "--epochs", optarg, &o->epochs); break;
        case 's': bad = cli_parse_positive("bench", "--seed", optarg, &o->seed); break;
        case 'j': o->json = 1; break;
        case 'h': usage(stdout); return 0;
        default: bad = 1;
        }
        if (bad) {
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("bench", "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    return -1;
}

/* Adds the synthetic jobs, each with `hist` reports, to s. 0 or -1. */
static int bench_populate(const bench_args *o, slaq_sched *s, bench_job *bj,
                          size_t n, gsl_rng *r)
{
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
            return -1;
        }
        double cpu = 0.5 + 20 * gsl_rng_uniform(r);
        for (; b->k <= (uint64_t)o->hist; b->k++) {
            slaq_report rep = {b->k, bench_loss(b, r), cpu, 1000, 0};
            slaq_job_report(b->job, &rep);
        }
    }
    return 0;
}

/* Times tm->n epochs, each after one more report from every job (so that
 * every predictor refits): the refit, the allocation and both. 0 or -1. */
static int bench_measure(slaq_sched *s, bench_job *bj, size_t n, gsl_rng *r,
                         int progress, bench_times *tm)
{
    double t = 0;
    /* One unmeasured epoch: every predictor has fitted once, as in a
     * scheduler that has been running. */
    slaq_sched_epoch(s, t);
    for (int e = 0; e < tm->n; e++) {
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
            return -1;
        }
        double t2 = stats_now_ms();
        tm->fit[e] = t1 - t0;
        tm->alloc[e] = t2 - t1;
        tm->epoch[e] = t2 - t0;
        if (progress)
            fprintf(stderr, "\repoch %d/%d: %.2f ms", e + 1, tm->n,
                    tm->epoch[e]);
    }
    if (progress)
        fprintf(stderr, "\n");
    return 0;
}

static void bench_print(const bench_args *o, bench_times *tm)
{
    double fm, fp, am, ap, em, ep;
    stats(tm->fit, tm->n, &fm, &fp);
    stats(tm->alloc, tm->n, &am, &ap);
    stats(tm->epoch, tm->n, &em, &ep);
    if (o->json) {
        json_t *j = json_pack("{s:{s:f,s:f}, s:{s:f,s:f}, s:{s:f,s:f}, s:I, "
                              "s:f, s:I, s:s, s:s}",
                              "fit_ms", "median", fm, "p99", fp, "alloc_ms",
                              "median", am, "p99", ap, "epoch_ms", "median",
                              em, "p99", ep, "jobs", (json_int_t)o->jobs,
                              "cores", o->cfg.cores, "history",
                              (json_int_t)o->hist, "policy",
                              slaq_policy_name(o->cfg.policy), "predictor",
                              slaq_predictor_name(o->cfg.predictor));
        json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
        json_decref(j);
        return;
    }
    printf("%-8s %10s %10s\n", "ms", "median", "p99");
    printf("%-8s %10.3f %10.3f\n", "fit", fm, fp);
    printf("%-8s %10.3f %10.3f\n", "alloc", am, ap);
    printf("%-8s %10.3f %10.3f\n", "epoch", em, ep);
}

static int bench_sched(int argc, char **argv)
{
    bench_args o;
    int rc = bench_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    char why[1024];
    slaq_rl_model net; /* mlfs-rl's and mlfs's: the committed one */
    if (setopt_model(&o.cfg, NULL, &net, why, sizeof why)) {
        cli_error("bench", "%s", why);
        return EXIT_USAGE;
    }
    size_t n = (size_t)o.jobs;
    bench_times tm = {.n = (int)o.epochs};
    slaq_sched *s = slaq_sched_new(&o.cfg);
    bench_job *bj = calloc(n, sizeof *bj);
    tm.fit = calloc((size_t)tm.n, sizeof(double));
    tm.alloc = calloc((size_t)tm.n, sizeof(double));
    tm.epoch = calloc((size_t)tm.n, sizeof(double));
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    rc = EXIT_RUNTIME;
    if (!s || !bj || !tm.fit || !tm.alloc || !tm.epoch || !r) {
        cli_error("bench", "out of memory");
        goto out;
    }
    gsl_rng_set(r, (unsigned long)o.seed);
    if (!o.json)
        fprintf(stderr, "bench: %zu jobs, %.0f cores, history %.0f, "
                        "%d epochs (%s, %s)\n",
                n, o.cfg.cores, o.hist, tm.n, slaq_policy_name(o.cfg.policy),
                slaq_predictor_name(o.cfg.predictor));
    if (bench_populate(&o, s, bj, n, r) ||
        bench_measure(s, bj, n, r, !o.json && isatty(STDERR_FILENO), &tm))
        goto out;
    bench_print(&o, &tm);
    rc = 0;
out:
    slaq_sched_free(s);
    free(bj);
    free(tm.fit);
    free(tm.alloc);
    free(tm.epoch);
    if (r)
        gsl_rng_free(r);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "sched"))
        return bench_sched(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "cluster"))
        return bench_cluster(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    cli_error("bench", "expected a benchmark name: sched or cluster");
    usage(stderr);
    return EXIT_USAGE;
}
