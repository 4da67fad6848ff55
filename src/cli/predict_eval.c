/*
 * predict_eval.c — `slaq predict-eval`: how well each loss predictor
 * forecasts recorded training curves, per algorithm and horizon.
 */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/curves.h"
#include "slaq/slaq.h"

#define MAX_H 16

static const char usage_text[] =
    "usage: slaq predict-eval CURVES.jsonl [--horizons 1,5,10]\n"
    "                         [--predictor strawman|slaq-fit|auto|oracle|all]"
    "\n                         [--lambda X] [--convergence declared|ignore]"
    " [--json]\n\n"
    "For every curve and every prefix of at least 5 iterations, predict the\n"
    "loss h iterations ahead and report, per predictor and algorithm, the\n"
    "mean normalised error |L^(k+h) - L(k+h)| / (L(0) - min L) and the mean\n"
    "relative error |L^(k+h) - L(k+h)| / |L(k+h)|.\n\n"
    "  --horizons LIST   comma-separated horizons in iterations (1,5,10)\n"
    "  --predictor NAME  one predictor, or all (strawman, slaq-fit, auto)\n"
    "  --lambda X        weight decay of the fits (0.8)\n"
    "  --convergence M   declared: each curve's \"convergence\" field is\n"
    "                    the job's declared class (slaq-fit then fits only\n"
    "                    that class's family, as the paper does); ignore\n"
    "                    (default): no class is declared\n"
    "  --aqp             approximate-query traces instead (--aqp --help)\n"
    "  --json            print {\"predictors\": {NAME: {ALGORITHM: {\"h1\":\n"
    "                    {\"norm\": x, \"rel\": y, \"n\": count}, ...}}}}\n"
    "  -h, --help        this text\n";

/* What the command line asked for. */
typedef struct pe_args {
    int horizons[MAX_H];
    int nh;
    int json;
    int declared;         /* --convergence declared */
    slaq_predictor_kind kinds[4];
    int nk;
    slaq_predictor_opts popts;
    const char *path;
} pe_args;

/* The accumulated errors: acc[(k·na + a)·MAX_H + h] for predictor k,
 * algorithm a (algs, sorted) and horizon h. */
typedef struct pe_table {
    char **algs;          /* borrowed from the curve set */
    size_t na;
    slaq_eval_acc *acc;
} pe_table;

static const slaq_eval_acc *pe_cell(const pe_table *t, int k, size_t a,
                                    int h)
{
    return &t->acc[((size_t)k * t->na + a) * MAX_H + (size_t)h];
}

/* Parses the command line. Returns -1 to go on, else the exit status. */
static int pe_parse(int argc, char **argv, pe_args *o)
{
    static const struct option opts[] = {
        {"horizons", required_argument, 0, 'H'},
        {"predictor", required_argument, 0, 'p'},
        {"lambda", required_argument, 0, 'l'},
        {"convergence", required_argument, 0, 'C'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    *o = (pe_args){.horizons = {1, 5, 10}, .nh = 3};
    slaq_predictor_opts_init(&o->popts);
    const char *pred = "all";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            double hv[MAX_H];
            o->nh = cli_parse_list(optarg, hv, MAX_H);
            for (int i = 0; i < o->nh; i++) {
                if (hv[i] != floor(hv[i]) || hv[i] > 1e6)
                    o->nh = -1;
                else
                    o->horizons[i] = (int)hv[i];
            }
            if (o->nh < 0) {
                cli_error(argv[0], "--horizons: expected positive integers "
                                   "separated by commas, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'p': pred = optarg; break;
        case 'C':
            if (strcmp(optarg, "declared") && strcmp(optarg, "ignore")) {
                cli_error(argv[0], "--convergence: expected declared or "
                                   "ignore, got '%s'", optarg);
                return EXIT_USAGE;
            }
            o->declared = !strcmp(optarg, "declared");
            break;
        case 'l': {
            char *end;
            o->popts.lambda = strtod(optarg, &end);
            if (*end || !(o->popts.lambda > 0 && o->popts.lambda <= 1)) {
                cli_error(argv[0], "--lambda: expected a number in (0, 1], "
                                   "got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'j': o->json = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_error(argv[0], "expected one curve file");
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    o->path = argv[optind];
    if (!strcmp(pred, "all")) {
        o->kinds[o->nk++] = SLAQ_PRED_STRAWMAN;
        o->kinds[o->nk++] = SLAQ_PRED_SLAQ_FIT;
        o->kinds[o->nk++] = SLAQ_PRED_AUTO;
    } else if (slaq_predictor_parse(pred, &o->kinds[0]) == SLAQ_OK) {
        o->nk = 1;
    } else {
        cli_error(argv[0], "--predictor: unknown predictor '%s' (expected "
                           "strawman, slaq-fit, auto, oracle or all)", pred);
        return EXIT_USAGE;
    }
    return -1;
}

/* Distinct algorithm names in first-seen order, sorted afterwards. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t alg_index(const pe_table *t, const char *alg)
{
    size_t a = 0;
    while (a < t->na && strcmp(t->algs[a], alg))
        a++;
    return a;
}

/* Runs every predictor over every curve into t. Returns 0 or the exit
 * status, having said why. */
static int pe_compute(const char *cmd, const pe_args *o, const curve_set *cs,
                      pe_table *t)
{
    t->na = 0;
    t->algs = malloc(cs->n * sizeof *t->algs);
    t->acc = calloc((size_t)o->nk * cs->n * MAX_H, sizeof *t->acc);
    if (!t->algs || !t->acc) {
        cli_error(cmd, "out of memory");
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < cs->n; i++)
        if (alg_index(t, cs->v[i].algorithm) == t->na)
            t->algs[t->na++] = cs->v[i].algorithm;
    qsort(t->algs, t->na, sizeof *t->algs, cmp_str);

    slaq_predictor_opts popts = o->popts;
    for (int k = 0; k < o->nk; k++)
        for (size_t i = 0; i < cs->n; i++) {
            const curve *cv = &cs->v[i];
            slaq_eval_acc *row =
                &t->acc[((size_t)k * t->na + alg_index(t, cv->algorithm)) *
                        MAX_H];
            popts.convergence = SLAQ_CONV_UNKNOWN;
            if (o->declared && cv->convergence &&
                slaq_convergence_parse(cv->convergence, &popts.convergence) !=
                    SLAQ_OK) {
                cli_error(cmd, "%s:%d: field \"convergence\": expected "
                          "sublinear, linear, superlinear or nonconvex, got "
                          "'%s'", o->path, cv->line, cv->convergence);
                return EXIT_USAGE;
            }
            int e = slaq_eval_curve(o->kinds[k], &popts, cv->loss, cv->n,
                                    cv->iter_cpu_s, o->horizons,
                                    (size_t)o->nh, row);
            if (e) {
                cli_error(cmd, "%s:%d: %s", o->path, cv->line,
                          slaq_strerror(e));
                return EXIT_RUNTIME;
            }
        }
    return 0;
}

static void pe_print_json(const pe_args *o, const pe_table *t)
{
    json_t *root = json_object(), *preds = json_object();
    json_object_set_new(root, "predictors", preds);
    for (int k = 0; k < o->nk; k++) {
        json_t *pk = json_object();
        json_object_set_new(preds, slaq_predictor_name(o->kinds[k]), pk);
        for (size_t a = 0; a < t->na; a++) {
            json_t *pa = json_object();
            json_object_set_new(pk, t->algs[a], pa);
            for (int hi = 0; hi < o->nh; hi++) {
                const slaq_eval_acc *x = pe_cell(t, k, a, hi);
                char key[16];
                snprintf(key, sizeof key, "h%d", o->horizons[hi]);
                json_object_set_new(
                    pa, key,
                    json_pack("{s:f, s:f, s:I}", "norm",
                              x->n ? x->err_sum / (double)x->n : 0.0, "rel",
                              x->n_rel ? x->rel_sum / (double)x->n_rel : 0.0,
                              "n", (json_int_t)x->n));
            }
        }
    }
    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', stdout);
    json_decref(root);
}

static void pe_print_text(const pe_args *o, const pe_table *t, size_t ncurves)
{
    printf("mean prediction error over every prefix of >= 5 iterations "
           "(%zu curves)\n", ncurves);
    for (int k = 0; k < o->nk; k++) {
        printf("\n%s\n  %-10s", slaq_predictor_name(o->kinds[k]),
               "algorithm");
        for (int hi = 0; hi < o->nh; hi++)
            printf("  h%-3d norm   rel    ", o->horizons[hi]);
        printf("\n");
        double mean[MAX_H] = {0};
        for (size_t a = 0; a < t->na; a++) {
            printf("  %-10s", t->algs[a]);
            for (int hi = 0; hi < o->nh; hi++) {
                const slaq_eval_acc *x = pe_cell(t, k, a, hi);
                double nm = x->n ? x->err_sum / (double)x->n : 0;
                double rl = x->n_rel ? x->rel_sum / (double)x->n_rel : 0;
                mean[hi] += nm / (double)t->na;
                printf("  %6.2f%% %6.2f%%   ", 100 * nm, 100 * rl);
            }
            printf("\n");
        }
        printf("  %-10s", "mean");
        for (int hi = 0; hi < o->nh; hi++)
            printf("  %6.2f%%            ", 100 * mean[hi]);
        printf("\n");
    }
}

int cmd_predict_eval(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--aqp"))
            return cmd_predict_eval_aqp(argc, argv);
    pe_args o;
    int rc = pe_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    curve_set cs;
    char err[512];
    if (curves_load(o.path, &cs, err, sizeof err)) {
        cli_error(argv[0], "%s", err);
        return EXIT_USAGE;
    }
    pe_table t = {0};
    rc = pe_compute(argv[0], &o, &cs, &t);
    if (!rc && o.json)
        pe_print_json(&o, &t);
    else if (!rc)
        pe_print_text(&o, &t, cs.n);
    free(t.algs);
    free(t.acc);
    curves_free(&cs);
    return rc;
}
