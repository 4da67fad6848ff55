/*
 * progress_eval.c — `slaq progress-eval`: is the loss reduction slaq shows
 * for a job true? On recorded curves the truth is known: each curve is
 * replayed through the scheduling core, and at every iteration the
 * reduction it shows (what `slaq ls`, the dashboard and --target-reduction
 * stops use) is compared with the reduction measured against the curve's
 * real final loss; and where the shown reduction first reaches the target,
 * the true one is reported, per algorithm.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/curves.h"
#include "slaq/slaq.h"

static const char usage_text[] =
    "usage: slaq progress-eval CURVES.jsonl [--target R] [--tolerance T]\n"
    "                          [--predictor NAME] [--undeclared] [--json]\n\n"
    "Replays every curve through slaq's core, one report per iteration, and\n"
    "compares the loss reduction slaq shows with the true one, (L(0) - L(k))\n"
    "/ (L(0) - L(end)). Per algorithm: the mean and largest |shown - true|,\n"
    "and for a --target-reduction stop at R, the true reduction where the\n"
    "shown one first reached R: its median and range, and how many stops\n"
    "fall within R +/- T.\n\n"
    "  --target R        the stop's target reduction, in (0, 1] (0.9)\n"
    "  --tolerance T     what counts as a good stop (0.03)\n"
    "  --predictor NAME  strawman, slaq-fit, auto (default) or oracle\n"
    "  --undeclared      jobs do not declare their iteration count (the\n"
    "                    end is then the forecast's asymptote)\n"
    "  --json            machine-readable output\n"
    "  -h, --help        this text\n";

typedef struct alg_row {
    const char *name;
    double err_sum, over_max;
    uint64_t n;
    double *stops;   /* true reduction at each curve's stop */
    size_t nstops, curves, never;
} alg_row;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static alg_row *row_for(alg_row *rows, size_t *nrows, const char *alg)
{
    for (size_t i = 0; i < *nrows; i++)
        if (!strcmp(rows[i].name, alg))
            return &rows[i];
    alg_row *r = &rows[(*nrows)++];
    memset(r, 0, sizeof *r);
    r->name = alg;
    r->over_max = -INFINITY;
    return r;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const alg_row *)a)->name, ((const alg_row *)b)->name);
}

/* Replays every curve into its algorithm's row. */
static int compute(const curve_set *cs, slaq_predictor_kind kind, int declare,
                   double target, alg_row *rows, size_t *nrows,
                   const char *path)
{
    for (size_t i = 0; i < cs->n; i++) {
        const curve *c = &cs->v[i];
        alg_row *r = row_for(rows, nrows, c->algorithm);
        if (!r->stops && !(r->stops = calloc(cs->n, sizeof *r->stops)))
            return -1;
        slaq_progress_acc acc;
        int e = slaq_eval_progress(kind, c->loss, c->n, declare, target,
                                   &acc);
        if (e) {
            cli_error("progress-eval", "%s:%d: %s", path, c->line,
                      slaq_strerror(e));
            return -1;
        }
        if (acc.n == 0)
            continue;
        r->curves++;
        r->err_sum += acc.err_sum;
        r->n += acc.n;
        r->over_max = fmax(r->over_max, acc.over_max);
        if (isnan(acc.stop_true))
            r->never++;
        else
            r->stops[r->nstops++] = acc.stop_true;
    }
    qsort(rows, *nrows, sizeof *rows, by_name);
    for (size_t i = 0; i < *nrows; i++)
        qsort(rows[i].stops, rows[i].nstops, sizeof *rows[i].stops,
              cmp_double);
    return 0;
}

static size_t within(const alg_row *r, double target, double tol)
{
    size_t k = 0;
    for (size_t i = 0; i < r->nstops; i++)
        k += fabs(r->stops[i] - target) <= tol + 1e-12;
    return k;
}

/* Stops that came too early: the job had not reached target - tol. */
static size_t early(const alg_row *r, double target, double tol)
{
    size_t k = 0;
    for (size_t i = 0; i < r->nstops; i++)
        k += r->stops[i] < target - tol - 1e-12;
    return k;
}

static double median(const alg_row *r)
{
    if (!r->nstops)
        return NAN;
    size_t m = r->nstops / 2;
    return r->nstops % 2 ? r->stops[m]
                         : (r->stops[m - 1] + r->stops[m]) / 2;
}

static void print_text(const alg_row *rows, size_t nrows, double target,
                       double tol, const char *pred, int declare)
{
    printf("shown vs true loss reduction, predictor %s, lengths %s; "
           "stop at %.2f\n\n", pred, declare ? "declared" : "undeclared",
           target);
    printf("  %-10s %6s  %9s %9s   %-28s %-6s %s\n", "algorithm", "curves",
           "mean|err|", "max over", "true reduction at the stop",
           "within", "early");
    size_t all = 0, good = 0, bad = 0;
    for (size_t i = 0; i < nrows; i++) {
        const alg_row *r = &rows[i];
        if (!r->curves)
            continue;
        char dist[64] = "never reached";
        if (r->nstops)
            snprintf(dist, sizeof dist, "median %.3f [%.3f-%.3f]",
                     median(r), r->stops[0], r->stops[r->nstops - 1]);
        size_t w = within(r, target, tol), e = early(r, target, tol);
        char frac[32];
        snprintf(frac, sizeof frac, "%zu/%zu", w, r->curves);
        printf("  %-10s %6zu  %8.3f  %+8.3f   %-28s %-6s %zu%s\n", r->name,
               r->curves, r->err_sum / (double)r->n, r->over_max, dist, frac,
               e, r->never ? " (some never stop)" : "");
        all += r->curves;
        good += w;
        bad += e;
    }
    printf("\n  %zu of %zu stops within %.2f +/- %.2f; %zu too early\n", good,
           all, target, tol, bad);
}

static void print_json(const alg_row *rows, size_t nrows, double target,
                       double tol)
{
    json_t *root = json_object(), *algs = json_object();
    json_object_set_new(root, "target", json_real(target));
    json_object_set_new(root, "tolerance", json_real(tol));
    json_object_set_new(root, "algorithms", algs);
    for (size_t i = 0; i < nrows; i++) {
        const alg_row *r = &rows[i];
        if (!r->curves)
            continue;
        json_t *stops = json_array();
        for (size_t k = 0; k < r->nstops; k++)
            json_array_append_new(stops, json_real(r->stops[k]));
        json_object_set_new(
            algs, r->name,
            json_pack("{s:I, s:f, s:f, s:o, s:I, s:I, s:I}", "curves",
                      (json_int_t)r->curves, "mean_abs_err",
                      r->err_sum / (double)r->n, "max_overclaim",
                      r->over_max, "stop_true", stops, "within",
                      (json_int_t)within(r, target, tol), "never",
                      (json_int_t)r->never, "early",
                      (json_int_t)early(r, target, tol)));
    }
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', stdout);
    json_decref(root);
}

int cmd_progress_eval(int argc, char **argv)
{
    static const struct option opts[] = {
        {"target", required_argument, 0, 't'},
        {"tolerance", required_argument, 0, 'T'},
        {"predictor", required_argument, 0, 'p'},
        {"undeclared", no_argument, 0, 'u'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    double target = 0.9, tol = 0.03;
    int declare = 1, json = 0, c;
    slaq_predictor_kind kind = SLAQ_PRED_AUTO;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (cli_parse_positive(argv[0], "--target", optarg, &target))
                return EXIT_USAGE;
            if (target > 1) {
                cli_error(argv[0], "--target: expected a fraction in (0, 1],"
                          " got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'T':
            if (cli_parse_nonneg(argv[0], "--tolerance", optarg, &tol))
                return EXIT_USAGE;
            break;
        case 'p':
            if (slaq_predictor_parse(optarg, &kind) != SLAQ_OK) {
                cli_error(argv[0], "--predictor: expected strawman, slaq-fit,"
                          " auto or oracle, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'u': declare = 0; break;
        case 'j': json = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_error(argv[0], "expected one curve file");
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    curve_set cs;
    char err[512];
    if (curves_load(argv[optind], &cs, err, sizeof err)) {
        cli_error(argv[0], "%s", err);
        return EXIT_USAGE;
    }
    alg_row *rows = calloc(cs.n, sizeof *rows);
    size_t nrows = 0;
    int rc = EXIT_RUNTIME;
    if (!rows)
        cli_error(argv[0], "out of memory");
    else if (compute(&cs, kind, declare, target, rows, &nrows,
                     argv[optind]) == 0) {
        if (json)
            print_json(rows, nrows, target, tol);
        else
            print_text(rows, nrows, target, tol, slaq_predictor_name(kind),
                       declare);
        rc = 0;
    }
    for (size_t i = 0; rows && i < nrows; i++)
        free(rows[i].stops);
    free(rows);
    curves_free(&cs);
    return rc;
}
