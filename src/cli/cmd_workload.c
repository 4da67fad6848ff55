/*
 * cmd_workload.c — `slaq workload gen`: synthetic workloads from recorded
 * loss curves.
 *
 * The workload of the SLAQ paper's evaluation: Poisson arrivals, each job a
 * recorded training run drawn at random, cut at the paper's convergence
 * rule (a job runs at most --iters iterations), with a total CPU need drawn
 * log-uniformly so that short and long jobs mix as in a shared cluster.
 * All randomness comes from one GSL generator seeded by --seed and drawn in
 * a fixed order, so the same arguments always give the same file.
 */
#include <getopt.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/curves.h"
#include "io/workload.h"

#define MAX_WEIGHTS 64

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq workload gen --curves FILE [options] > workload.jsonl"
        "\n\nWrites a workload for `slaq sim` (JSON Lines, docs/sim.md): "
        "jobs arriving as a\nPoisson process, each replaying a loss curve "
        "drawn at random from FILE.\n\n"
        "  --curves FILE             recorded curves (JSON Lines)\n"
        "  --jobs N                  number of jobs (default 160)\n"
        "  --mean-interarrival S     mean seconds between arrivals "
        "(default 4);\n"
        "                            the first job arrives at 0\n"
        "  --work A:B                total CPU need of a job, core-seconds,"
        "\n"
        "                            log-uniform in [A, B] (default "
        "2000:20000)\n"
        "  --max-cores M             cores a job can use at most "
        "(default 64)\n"
        "  --iters K                 iterations a job runs at most "
        "(default 100)\n"
        "  --seed S                  random seed (default 1)\n"
        "  --weights LIST            job weights, each job draws one, e.g. "
        "1,1,2\n"
        "                            (default 1)\n"
        "  --scaling D               how jobs scale with threads: linear "
        "(default: the\n"
        "                            paper's, no sigma or kappa written) or "
        "real (drawn\n"
        "                            from the measured jobs' mix, docs/sim.md,"
        " \"Scaling\")\n"
        "  --users N                 jobs belong to N users, u1 .. uN "
        "(default 0:\n"
        "                            no \"user\" written)\n"
        "  --skew S                  user k submits in proportion to "
        "1/k^S (default 0:\n"
        "                            each user alike; 1: Zipf)\n"
        "  --accounts M              users in M accounts, a1 .. aM, user k "
        "in account\n"
        "                            ((k - 1) mod M) + 1 (default 0: none)\n"
        "  --help                    this text\n\n"
        "A job's iter_cpu_s is its CPU need divided by its iterations. The "
        "users are\ndrawn from a generator of their own: a workload with "
        "--users has the same\njobs as the one without.\n");
}

static int parse_num(const char *opt, const char *s, double lo, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || !(v >= lo)) {
        cli_error("workload", "%s: expected a number >= %g, got '%s'", opt,
                  lo, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_work(const char *s, double *lo, double *hi)
{
    char *end;
    *lo = strtod(s, &end);
    if (end != s && *end == ':') {
        const char *b = end + 1;
        *hi = strtod(b, &end);
        if (end != b && !*end && isfinite(*lo) && isfinite(*hi) &&
            *lo > 0 && *hi >= *lo)
            return 0;
    }
    cli_error("workload", "--work: expected A:B with 0 < A <= B "
              "(core-seconds), got '%s'", s);
    return -1;
}

static int parse_weights(const char *s, double *w, int *n)
{
    *n = 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || !(v > 0) || !isfinite(v) || *n == MAX_WEIGHTS)
            goto err;
        w[(*n)++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            goto err;
        s = end;
    }
    if (*n > 0)
        return 0;
err:
    cli_error("workload", "--weights: expected up to %d positive numbers "
              "separated by commas, got '%s'", MAX_WEIGHTS, s);
    return -1;
}

/*
 * The "real" scaling mix (docs/sim.md, "Scaling"): three kinds of job,
 * each with the parameters of the model of include/slaq/scaling.h drawn
 * around what was measured on a 2-core machine.
 *   40%  threaded BLAS (a scikit-learn MLPClassifier: 1.33× on 2 threads,
 *        sigma 0.5): sigma uniform in [0.3, 0.7], kappa 0;
 *   30%  threads that spin at barriers (a PyTorch MLP: 3.7× slower on 2
 *        threads, sigma 6.4): sigma uniform in [1.5, 7], kappa 0;
 *   30%  their own worker pool over data partitions (slaq-train): sigma
 *        uniform in [0, 0.1], kappa uniform in [0, 0.002].
 * Draws, in order: the kind, sigma, kappa, from a generator of their own
 * (the jobs are those of the same seed without --scaling).
 */
static void draw_scaling(gsl_rng *rng, wl_job *j)
{
    double u = gsl_rng_uniform(rng);
    double s = gsl_rng_uniform(rng), k = gsl_rng_uniform(rng);
    j->scaled = 1;
    if (u < 0.4) {
        j->sigma = 0.3 + 0.4 * s;
        j->kappa = 0;
    } else if (u < 0.7) {
        j->sigma = 1.5 + 5.5 * s;
        j->kappa = 0;
    } else {
        j->sigma = 0.1 * s;
        j->kappa = 0.002 * k;
    }
}

/* Whose jobs they are (--users, --skew, --accounts). */
typedef struct gen_users {
    size_t users, accounts; /* 0: none */
    double skew;
} gen_users;

/* A user 1..users drawn with P(k) proportional to 1/k^skew. */
static size_t draw_user(gsl_rng *r, const gen_users *g)
{
    double total = 0;
    for (size_t k = 1; k <= g->users; k++)
        total += pow((double)k, -g->skew);
    double x = gsl_rng_uniform(r) * total;
    for (size_t k = 1; k <= g->users; k++) {
        x -= pow((double)k, -g->skew);
        if (x < 0)
            return k;
    }
    return g->users;
}

/* Writes the jobs; the draws per job are, in order: the gap before it
 * (not for the first), its curve, its work, its weight; with `scaling`,
 * its scaling curve from a second generator (draw_scaling). */
static int generate(const curve_set *cs, size_t jobs, double mean_ia,
                    double work_lo, double work_hi, double max_cores,
                    size_t iters, unsigned long seed, const double *weights,
                    int nweights, int scaling, const gen_users *gu)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng *srng = scaling ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    gsl_rng *urng = gu->users ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (!rng || (scaling && !srng) || (gu->users && !urng)) {
        gsl_rng_free(rng);
        if (srng)
            gsl_rng_free(srng);
        if (urng)
            gsl_rng_free(urng);
        cli_error("workload", "out of memory");
        return EXIT_RUNTIME;
    }
    gsl_rng_set(rng, seed);
    if (srng)
        gsl_rng_set(srng, seed ^ 0x5ca1ab1eUL);
    if (urng)
        gsl_rng_set(urng, seed ^ 0x0a11ce5UL);
    double t = 0;
    int rc = 0;
    for (size_t i = 0; i < jobs && !rc; i++) {
        if (i > 0)
            t += gsl_ran_exponential(rng, mean_ia);
        if (t > WL_MAX_SECONDS) {
            cli_error("workload", "job j%zu would arrive at %g s, beyond "
                      "the format's cap of %g s: lower --mean-interarrival",
                      i + 1, t, WL_MAX_SECONDS);
            gsl_rng_free(rng);
            if (srng)
                gsl_rng_free(srng);
            if (urng)
                gsl_rng_free(urng);
            return EXIT_USAGE;
        }
        const curve *c = &cs->v[gsl_rng_uniform_int(rng, cs->n)];
        double work = exp(log(work_lo) +
                          gsl_rng_uniform(rng) * log(work_hi / work_lo));
        double weight = nweights > 1
            ? weights[gsl_rng_uniform_int(rng, (unsigned long)nweights)]
            : weights[0];
        size_t n = c->n - 1 < iters ? c->n - 1 : iters;
        char id[32];
        snprintf(id, sizeof id, "j%zu", i + 1);
        wl_job j = {
            .id = id, .algorithm = c->algorithm, .curve = c->name,
            .convergence = c->convergence,
            .arrival_s = t, .iter_cpu_s = work / (double)n,
            .max_cores = max_cores, .weight = weight, .loss = c->loss,
            .nlosses = n + 1,
        };
        if (srng)
            draw_scaling(srng, &j);
        char user[32], account[32];
        if (urng) {
            size_t k = draw_user(urng, gu);
            snprintf(user, sizeof user, "u%zu", k);
            j.user = user;
            if (gu->accounts) {
                snprintf(account, sizeof account, "a%zu",
                         (k - 1) % gu->accounts + 1);
                j.account = account;
            }
        }
        rc = wl_write_job(stdout, &j);
    }
    gsl_rng_free(rng);
    if (srng)
        gsl_rng_free(srng);
    if (urng)
        gsl_rng_free(urng);
    if (rc || fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("workload", "write error on standard output");
        return EXIT_RUNTIME;
    }
    return 0;
}

static int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"curves", required_argument, 0, 'c'},
        {"jobs", required_argument, 0, 'j'},
        {"mean-interarrival", required_argument, 0, 'a'},
        {"work", required_argument, 0, 'w'},
        {"max-cores", required_argument, 0, 'm'},
        {"iters", required_argument, 0, 'i'},
        {"seed", required_argument, 0, 's'},
        {"weights", required_argument, 0, 'W'},
        {"scaling", required_argument, 0, 'S'},
        {"users", required_argument, 0, 'u'},
        {"skew", required_argument, 0, 'k'},
        {"accounts", required_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *curves = NULL;
    double jobs = 160, mean_ia = 4, lo = 2000, hi = 20000, max_cores = 64,
           iters = 100, seed = 1, weights[MAX_WEIGHTS] = {1}, users = 0,
           skew = 0, accounts = 0;
    int nweights = 1, c, scaling = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'c': curves = optarg; break;
        case 'j': bad = parse_num("--jobs", optarg, 1, &jobs); break;
        case 'a':
            bad = parse_num("--mean-interarrival", optarg, 0, &mean_ia);
            break;
        case 'w': bad = parse_work(optarg, &lo, &hi); break;
        case 'm':
            bad = parse_num("--max-cores", optarg, 1e-9, &max_cores);
            break;
        case 'i': bad = parse_num("--iters", optarg, 1, &iters); break;
        case 's': bad = parse_num("--seed", optarg, 0, &seed); break;
        case 'W': bad = parse_weights(optarg, weights, &nweights); break;
        case 'u': bad = parse_num("--users", optarg, 0, &users); break;
        case 'k': bad = parse_num("--skew", optarg, 0, &skew); break;
        case 'A': bad = parse_num("--accounts", optarg, 0, &accounts); break;
        case 'S':
            if (!strcmp(optarg, "real") || !strcmp(optarg, "linear")) {
                scaling = !strcmp(optarg, "real");
            } else {
                cli_error("workload", "--scaling: expected linear or real, "
                          "got '%s'", optarg);
                bad = 1;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (optind < argc || !curves) {
        cli_error("workload", optind < argc ? "unexpected argument '%s'"
                  : "--curves is required%s",
                  optind < argc ? argv[optind] : "");
        usage(stderr);
        return EXIT_USAGE;
    }
    if (jobs != floor(jobs) || iters != floor(iters) || seed != floor(seed) ||
        seed > 4294967295.0) {
        cli_error("workload", "--jobs, --iters and --seed take whole "
                  "numbers (seed < 2^32)");
        return EXIT_USAGE;
    }
    if (users != floor(users) || accounts != floor(accounts) ||
        users > 100000 || accounts > users || skew > 10) {
        cli_error("workload", "--users and --accounts take whole numbers, "
                  "at most 100000 users and no more accounts than users; "
                  "--skew at most 10");
        return EXIT_USAGE;
    }
    /* What it writes, the reader must take (the format's caps,
     * io/workload.h). */
    const char *bad = NULL;
    double val = 0, cap = 0;
    for (int k = 0; k < nweights && !bad; k++)
        if (weights[k] < WL_MIN_WEIGHT || weights[k] > WL_MAX_WEIGHT)
            bad = "--weights", val = weights[k], cap = weights[k] > 1
                ? WL_MAX_WEIGHT : WL_MIN_WEIGHT;
    if (jobs > WL_MAX_JOBS)
        bad = "--jobs", val = jobs, cap = WL_MAX_JOBS;
    else if (iters > WL_MAX_ITERS)
        bad = "--iters", val = iters, cap = WL_MAX_ITERS;
    else if (hi > WL_MAX_SECONDS)
        bad = "--work", val = hi, cap = WL_MAX_SECONDS;
    else if (mean_ia * (jobs - 1) > WL_MAX_SECONDS)
        bad = "--mean-interarrival x (--jobs - 1)",
        val = mean_ia * (jobs - 1), cap = WL_MAX_SECONDS;
    else if (max_cores < WL_MIN_CORES || max_cores > WL_MAX_CORES)
        bad = "--max-cores", val = max_cores,
        cap = max_cores < 1 ? WL_MIN_CORES : WL_MAX_CORES;
    if (bad) {
        cli_error("workload", "%s: %g is beyond the workload format's %s of "
                  "%g (docs/sim.md)", bad, val,
                  val < cap ? "minimum" : "cap", cap);
        return EXIT_USAGE;
    }
    curve_set cs;
    char err[1024];
    if (curves_load(curves, &cs, err, sizeof err)) {
        cli_error("workload", "%s", err);
        return EXIT_USAGE;
    }
    if (cs.n == 0) {
        cli_error("workload", "%s: no curves", curves);
        curves_free(&cs);
        return EXIT_USAGE;
    }
    int rc = generate(&cs, (size_t)jobs, mean_ia, lo, hi, max_cores,
                      (size_t)iters, (unsigned long)seed, weights, nweights,
                      scaling, &(gen_users){(size_t)users, (size_t)accounts,
                                            skew});
    curves_free(&cs);
    return rc;
}

int cmd_workload(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: slaq workload gen [options] > workload.jsonl\n"
                   "Run 'slaq workload gen --help' for the options.\n");
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "gen"))
        return cmd_gen(argc - 1, argv + 1);
    cli_error("workload", "unknown subcommand '%s' (expected gen)", argv[1]);
    return EXIT_USAGE;
}
