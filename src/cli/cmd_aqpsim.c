/*
 * cmd_aqpsim.c — `slaq sim --aqp`: approximate queries from recorded
 * traces under fair and relaqs, ReLAQS's evaluation (thesis Fig. 4.7–4.8).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "sim/aqpsim.h"

#define AS_MAX_POL 4
#define AS_MAX_SWEEP 16
#define AS_MAX_SEEDS 256
/* the reduction grid: 0.0% .. 100.0% in steps of 0.1% */
#define AS_NGRID 1001

static void usage(FILE *f)
{
    fputs("usage: slaq sim --aqp TRACES.jsonl [options]\n\n"
    "Replays approximate queries recorded by `make aqp-traces` (docs/aqp.md)"
    "\nin virtual time through slaq's scheduling core: each workload draws "
    "--queries\nof them with Poisson arrivals and runs them under each "
    "policy; every query\nruns to its exact answer. Reports the mean time "
    "from arrival until a query's\ntrue error reduction reaches X% for good, "
    "per policy, and the crossing point:\nthe smallest X from which on fair "
    "is faster than the first other policy.\n\n"
    "  --queries N            queries per workload (default 12)\n"
    "  --mean-interarrival S  mean seconds between arrivals (default 120)\n"
    "  --seeds LIST           workloads, e.g. 1-10 or 3,5 (default 1-10)\n"
    "  --policies LIST        default relaqs,fair (any slaq policy names);\n"
    "                         --policy P runs P alone\n"
    "  --cpu-scale X          multiplies every mini-batch's recorded CPU "
    "seconds\n"
    "                         (default 70000: the traces' milliseconds become"
    "\n                         queries of minutes; 12 of them at 120 s take "
    "about\n                         an hour under fair, as the thesis's "
    "workload)\n"
    "  --sweep LIST           also run at these mean inter-arrival times, "
    "e.g.\n                         10,40,120,160 (sweep.csv)\n"
    "  --reach first|stay     a reduction counts when first reached after a "
    "mini-batch\n                         (default), or only once it holds "
    "to the end\n"
    "  --out DIR              write DIR/reduction.csv, DIR/sweep.csv, "
    "DIR/queries.csv\n"
    "  -h, --help             this text\n\n"
    "Scheduler settings (docs/libslaq.md; the same as slaqd's, with the "
    "query\nsimulator's defaults):\n", f);
    aqpsim_config dflt;
    aqpsim_config_init(&dflt);
    setopt_help(f, 25, &dflt.sched, NULL, NULL);
    fputs("\n  --min-cores M, --window N, --horizon-batches N: the old names "
          "of\n  --query-min-cores, --query-window and --horizon-iters "
          "(deprecated).\n\n"
          "Exit status: 0 ok, 1 failure, 2 bad usage or input.\n", f);
}

typedef struct as_args {
    const char *path, *out;
    size_t nq;
    double ia;
    unsigned seeds[AS_MAX_SEEDS];
    size_t nseeds;
    slaq_policy_kind pol[AS_MAX_POL];
    size_t npol;
    aqpsim_config cfg;
    double sweep[AS_MAX_SWEEP];
    int nsweep;
    int stay;
} as_args;

static int parse_seeds(const char *s, as_args *o)
{
    o->nseeds = 0;
    while (*s) {
        char *end;
        unsigned long a = strtoul(s, &end, 10), b = a;
        if (end == s)
            return -1;
        if (*end == '-') {
            s = end + 1;
            b = strtoul(s, &end, 10);
            if (end == s || b < a)
                return -1;
        }
        for (unsigned long v = a; v <= b; v++) {
            if (o->nseeds == AS_MAX_SEEDS)
                return -1;
            o->seeds[o->nseeds++] = (unsigned)v;
        }
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return o->nseeds ? 0 : -1;
}

static int parse_policies(const char *s, as_args *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->npol = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->npol == AS_MAX_POL ||
            slaq_policy_parse(tok, &o->pol[o->npol]) != SLAQ_OK)
            return -1;
        o->npol++;
    }
    return o->npol ? 0 : -1;
}

static int as_parse(int argc, char **argv, as_args *o)
{
    static const struct option own[] = {
        {"aqp", required_argument, 0, 'a'},
        {"queries", required_argument, 0, 'n'},
        {"mean-interarrival", required_argument, 0, 'i'},
        {"seeds", required_argument, 0, 's'},
        {"policies", required_argument, 0, 'p'},
        {"cpu-scale", required_argument, 0, 'x'},
        {"sweep", required_argument, 0, 'S'},
        {"out", required_argument, 0, 'o'},
        {"reach", required_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},
        /* the old names of three settings (deprecated), as aliases */
        {"min-cores", required_argument, 0, 0},
        {"window", required_argument, 0, 0},
        {"horizon-batches", required_argument, 0, 0},
    };
    enum { NOWN = sizeof own / sizeof *own };
    struct option opts[NOWN + SETOPT_MAX + 1];
    setopt_build(opts, own, NOWN, NULL);
    opts[NOWN - 3].val = setopt_code("query-min-cores");
    opts[NOWN - 2].val = setopt_code("query-window");
    opts[NOWN - 1].val = setopt_code("horizon-iters");
    int policies_given = 0, policy_given = 0;
    memset(o, 0, sizeof *o);
    o->nq = 12;
    o->ia = 120;
    parse_seeds("1-10", o);
    parse_policies("relaqs,fair", o);
    aqpsim_config_init(&o->cfg);
    /* The thesis's 12 queries at 120 s are "about an hour of query
     * execution and submission": 70000 gives a mean fair makespan of
     * 59 min on workload seeds 1-5 (docs/relaqs.md, "Simulation"). */
    o->cfg.cpu_scale = 70000;
    const char *cmd = "sim --aqp";
    int c;
    double v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int set = cli_setting(cmd, &o->cfg.sched, c, optarg);
        if (set < 0)
            return EXIT_USAGE;
        if (set == 0) {
            policy_given |= !strcmp(setopt_row(c)->name, "policy");
            continue;
        }
        switch (c) {
        case 'a':
            o->path = optarg;
            break;
        case 'n':
            if (cli_parse_positive(cmd, "--queries", optarg, &v))
                return EXIT_USAGE;
            /* beyond the cap (refused by aqpsim_config_check) as cap+1,
             * not a conversion of a value no size_t holds */
            o->nq = v > AQPSIM_MAX_QUERIES ? AQPSIM_MAX_QUERIES + 1
                                           : (size_t)v;
            break;
        case 'i':
            if (cli_parse_positive(cmd, "--mean-interarrival", optarg,
                                   &o->ia))
                return EXIT_USAGE;
            break;
        case 's':
            if (parse_seeds(optarg, o)) {
                cli_error(cmd, "--seeds: expected numbers and ranges like "
                          "1-10,20 (at most %d), got '%s'", AS_MAX_SEEDS,
                          optarg);
                return EXIT_USAGE;
            }
            break;
        case 'p':
            policies_given = 1;
            if (parse_policies(optarg, o)) {
                cli_error(cmd, "--policies: expected up to %d of fair, slaq, "
                          "slaq-maxmin, relaqs, got '%s'", AS_MAX_POL, optarg);
                return EXIT_USAGE;
            }
            break;
        case 'x':
            if (cli_parse_positive(cmd, "--cpu-scale", optarg,
                                   &o->cfg.cpu_scale))
                return EXIT_USAGE;
            break;
        case 'S':
            o->nsweep = cli_parse_list(optarg, o->sweep, AS_MAX_SWEEP);
            if (o->nsweep < 0) {
                cli_error(cmd, "--sweep: expected up to %d positive numbers "
                          "separated by commas, got '%s'", AS_MAX_SWEEP,
                          optarg);
                return EXIT_USAGE;
            }
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'r':
            if (strcmp(optarg, "first") && strcmp(optarg, "stay")) {
                cli_error(cmd, "--reach: expected first or stay, got '%s'",
                          optarg);
                return EXIT_USAGE;
            }
            o->stay = !strcmp(optarg, "stay");
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (policy_given) {
        if (policies_given) {
            cli_error(cmd, "--policy and --policies exclude each other");
            return EXIT_USAGE;
        }
        o->pol[0] = o->cfg.sched.policy;
        o->npol = 1;
    }
    if (!o->path || optind != argc) {
        cli_error(cmd, "expected --aqp TRACES.jsonl and no other arguments "
                  "(see --help)");
        return EXIT_USAGE;
    }
    return -1;
}

/* Mean time to each grid reduction over every query of every seed, per
 * policy: mean[p][g]. Also per-query rows into `qf` when given. */
static int as_run_all(const as_args *o, const aqp_trace_set *ts, double ia,
                      double (*mean)[AS_NGRID], FILE *qf)
{
    aqpsim_query *qs = malloc(o->nq * sizeof *qs);
    aqpsim_qres *res = malloc(o->nq * sizeof *res);
    if (!qs || !res) {
        free(qs);
        free(res);
        cli_error("sim --aqp", "out of memory");
        return EXIT_RUNTIME;
    }
    for (size_t p = 0; p < o->npol; p++)
        for (int g = 0; g < AS_NGRID; g++)
            mean[p][g] = 0;
    size_t count = 0;
    for (size_t si = 0; si < o->nseeds; si++) {
        aqpsim_workload(ts, o->nq, ia, o->seeds[si], qs);
        for (size_t p = 0; p < o->npol; p++) {
            aqpsim_config c = o->cfg;
            c.sched.policy = o->pol[p];
            char err[256];
            if (aqpsim_run(qs, o->nq, &c, res, err, sizeof err)) {
                cli_error("sim --aqp", "seed %u, %s: %s", o->seeds[si],
                          slaq_policy_name(c.sched.policy), err);
                free(qs);
                free(res);
                return EXIT_RUNTIME;
            }
            for (size_t q = 0; q < o->nq; q++) {
                for (int g = 0; g < AS_NGRID; g++)
                    mean[p][g] += aqpsim_time_to(&res[q], g / 1000.0, o->stay);
                if (qf)
                    fprintf(qf, "%g,%u,%s,%zu,%s,%.3f,%.3f,%.3f,%.3f,%.3f,"
                            "%.3f\n",
                            ia, o->seeds[si], slaq_policy_name(c.sched.policy),
                            q,
                            qs[q].t->name, res[q].arrival,
                            aqpsim_time_to(&res[q], 0.7, o->stay),
                            aqpsim_time_to(&res[q], 0.9, o->stay),
                            aqpsim_time_to(&res[q], 0.99, o->stay),
                            res[q].completion - res[q].arrival,
                            res[q].batch_t[0] - res[q].arrival);
            }
            aqpsim_results_free(res, o->nq);
        }
        count += o->nq;
    }
    for (size_t p = 0; p < o->npol; p++)
        for (int g = 0; g < AS_NGRID; g++)
            mean[p][g] /= (double)count;
    free(qs);
    free(res);
    return 0;
}

/* The crossing point between policy 0 and fair (index f): the smallest
 * grid reduction from which on fair's mean time is below policy 0's at
 * every larger one; NAN if fair is never faster at the end, and 0 if it
 * is faster everywhere. */
static double crossing(double (*mean)[AS_NGRID], size_t f)
{
    int g = AS_NGRID - 1;
    if (!(mean[f][g] < mean[0][g]))
        return NAN;
    while (g > 0 && mean[f][g - 1] < mean[0][g - 1])
        g--;
    return g / 10.0;
}

static FILE *out_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        cli_error("sim --aqp", "%s: %s", path, strerror(errno));
    return f;
}

int cmd_sim_aqp(int argc, char **argv)
{
    as_args o;
    int rc = as_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    aqp_trace_set ts;
    char err[512] = "";
    if (aqp_traces_load(o.path, &ts, err, sizeof err)) {
        cli_error("sim --aqp", "%s", err);
        return EXIT_USAGE;
    }
    /* Every run must end in bounded time: refused before any output
     * (aqpsim_config_check), each workload as it will be drawn. */
    aqpsim_query *qs = aqpsim_config_check(&o.cfg, NULL, o.nq, err,
                                           sizeof err) ? NULL
                       : malloc((o.nq ? o.nq : 1) * sizeof *qs);
    for (int k = -1; qs && k < o.nsweep; k++)
        for (size_t si = 0; qs && si < o.nseeds; si++) {
            aqpsim_workload(&ts, o.nq, k < 0 ? o.ia : o.sweep[k],
                            o.seeds[si], qs);
            if (aqpsim_config_check(&o.cfg, qs, o.nq, err, sizeof err)) {
                free(qs);
                qs = NULL;
            }
        }
    if (!qs) {
        cli_error("sim --aqp", "%s", err[0] ? err : "out of memory");
        aqp_traces_free(&ts);
        return err[0] ? EXIT_USAGE : EXIT_RUNTIME;
    }
    free(qs);
    size_t fair = o.npol;
    for (size_t p = 0; p < o.npol; p++)
        if (o.pol[p] == SLAQ_POLICY_FAIR)
            fair = p;
    FILE *qf = NULL, *rf = NULL, *sf = NULL;
    if (o.out) {
        if (mkdir(o.out, 0777) && errno != EEXIST) {
            cli_error("sim --aqp", "%s: %s", o.out, strerror(errno));
            aqp_traces_free(&ts);
            return EXIT_RUNTIME;
        }
        qf = out_file(o.out, "queries.csv");
        rf = out_file(o.out, "reduction.csv");
        sf = o.nsweep ? out_file(o.out, "sweep.csv") : NULL;
        if (!qf || !rf || (o.nsweep && !sf)) {
            rc = EXIT_RUNTIME;
            goto out;
        }
        fprintf(qf, "mean_interarrival,seed,policy,query,trace,arrival,"
                    "t70,t90,t99,completion,first_batch\n");
    }
    double (*mean)[AS_NGRID] = malloc(AS_MAX_POL * sizeof *mean);
    if (!mean) {
        rc = EXIT_RUNTIME;
        goto out;
    }
    static const int show[] = {500, 700, 800, 900, 950, 990, 997, 1000};
    enum { NSHOW = sizeof show / sizeof *show };
    printf("%zu queries, mean inter-arrival %g s, %zu workloads, %g cores, "
           "epoch %g s, cpu scale %g, min cores %g\n", o.nq, o.ia, o.nseeds,
           o.cfg.sched.cores, o.cfg.sched.epoch_s, o.cfg.cpu_scale,
           o.cfg.sched.query_min_cores);
    printf("mean seconds to X%% error reduction:\n%-10s", "policy");
    for (int k = 0; k < NSHOW; k++)
        printf(" %7.1f%%", show[k] / 10.0);
    printf("\n");
    rc = as_run_all(&o, &ts, o.ia, mean, qf);
    if (rc)
        goto done_mean;
    for (size_t p = 0; p < o.npol; p++) {
        printf("%-10s", slaq_policy_name(o.pol[p]));
        for (int k = 0; k < NSHOW; k++)
            printf(" %8.1f", mean[p][show[k]]);
        printf("\n");
    }
    if (fair < o.npol && fair != 0) {
        printf("%-10s", "change");
        for (int k = 0; k < NSHOW; k++)
            printf(" %7.1f%%", 100 * (mean[0][show[k]] - mean[fair][show[k]]) /
                                   mean[fair][show[k]]);
        printf("\ncrossing point: fair is faster from %.1f%% error reduction "
               "on\n", crossing(mean, fair));
    }
    if (rf) {
        fprintf(rf, "reduction_pct");
        for (size_t p = 0; p < o.npol; p++)
            fprintf(rf, ",%s", slaq_policy_name(o.pol[p]));
        fprintf(rf, "\n");
        for (int g = 0; g < AS_NGRID; g++) {
            fprintf(rf, "%.1f", g / 10.0);
            for (size_t p = 0; p < o.npol; p++)
                fprintf(rf, ",%.3f", mean[p][g]);
            fprintf(rf, "\n");
        }
    }
    if (o.nsweep && fair < o.npol && fair != 0) {
        printf("\nsweep (%s vs fair):\n%-8s %9s %9s %7s %9s %9s %7s %9s\n",
               slaq_policy_name(o.pol[0]), "mean_ia", "t70", "t70 fair",
               "change", "t90", "t90 fair", "change", "crossing");
        if (sf)
            fprintf(sf, "mean_interarrival,t70,t70_fair,t90,t90_fair,"
                        "crossing_pct\n");
        for (int k = 0; k < o.nsweep; k++) {
            rc = as_run_all(&o, &ts, o.sweep[k], mean, NULL);
            if (rc)
                goto done_mean;
            double x = crossing(mean, fair);
            printf("%-8g %9.1f %9.1f %6.1f%% %9.1f %9.1f %6.1f%% %8.1f%%\n",
                   o.sweep[k], mean[0][700], mean[fair][700],
                   100 * (mean[0][700] - mean[fair][700]) / mean[fair][700],
                   mean[0][900], mean[fair][900],
                   100 * (mean[0][900] - mean[fair][900]) / mean[fair][900],
                   x);
            if (sf)
                fprintf(sf, "%g,%.3f,%.3f,%.3f,%.3f,%.1f\n", o.sweep[k],
                        mean[0][700], mean[fair][700], mean[0][900],
                        mean[fair][900], x);
        }
    }
done_mean:
    free(mean);
out:
    if (qf && fclose(qf))
        rc = EXIT_RUNTIME;
    if (rf && fclose(rf))
        rc = EXIT_RUNTIME;
    if (sf && fclose(sf))
        rc = EXIT_RUNTIME;
    aqp_traces_free(&ts);
    return rc;
}
