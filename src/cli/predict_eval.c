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
    "  --json            print {\"predictors\": {NAME: {ALGORITHM: {\"h1\":\n"
    "                    {\"norm\": x, \"rel\": y, \"n\": count}, ...}}}}\n"
    "  -h, --help        this text\n";

/* Distinct algorithm names in first-seen order, sorted afterwards. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_predict_eval(int argc, char **argv)
{
    static const struct option opts[] = {
        {"horizons", required_argument, 0, 'H'},
        {"predictor", required_argument, 0, 'p'},
        {"lambda", required_argument, 0, 'l'},
        {"convergence", required_argument, 0, 'C'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int horizons[MAX_H] = {1, 5, 10}, nh = 3, json = 0, declared = 0;
    const char *pred = "all";
    slaq_predictor_opts popts;
    slaq_predictor_opts_init(&popts);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'H':
            double hv[MAX_H];
            nh = cli_parse_list(optarg, hv, MAX_H);
            for (int i = 0; i < nh; i++) {
                if (hv[i] != floor(hv[i]) || hv[i] > 1e6)
                    nh = -1;
                else
                    horizons[i] = (int)hv[i];
            }
            if (nh < 0) {
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
            declared = !strcmp(optarg, "declared");
            break;
        case 'l': {
            char *end;
            popts.lambda = strtod(optarg, &end);
            if (*end || !(popts.lambda > 0 && popts.lambda <= 1)) {
                cli_error(argv[0], "--lambda: expected a number in (0, 1], "
                                   "got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        }
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
    slaq_predictor_kind kinds[4];
    int nk = 0;
    if (!strcmp(pred, "all")) {
        kinds[nk++] = SLAQ_PRED_STRAWMAN;
        kinds[nk++] = SLAQ_PRED_SLAQ_FIT;
        kinds[nk++] = SLAQ_PRED_AUTO;
    } else if (slaq_predictor_parse(pred, &kinds[0]) == SLAQ_OK) {
        nk = 1;
    } else {
        cli_error(argv[0], "--predictor: unknown predictor '%s' (expected "
                           "strawman, slaq-fit, auto, oracle or all)", pred);
        return EXIT_USAGE;
    }

    curve_set cs;
    char err[512];
    if (curves_load(argv[optind], &cs, err, sizeof err)) {
        cli_error(argv[0], "%s", err);
        return EXIT_USAGE;
    }
    char **algs = malloc(cs.n * sizeof *algs);
    size_t na = 0;
    slaq_eval_acc *acc = calloc((size_t)nk * cs.n * MAX_H, sizeof *acc);
    if (!algs || !acc) {
        cli_error(argv[0], "out of memory");
        free(algs);
        free(acc);
        curves_free(&cs);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < cs.n; i++) {
        size_t a = 0;
        while (a < na && strcmp(algs[a], cs.v[i].algorithm))
            a++;
        if (a == na)
            algs[na++] = cs.v[i].algorithm;
    }
    qsort(algs, na, sizeof *algs, cmp_str);

    int rc = 0;
    for (int k = 0; k < nk && !rc; k++)
        for (size_t i = 0; i < cs.n && !rc; i++) {
            size_t a = 0;
            while (strcmp(algs[a], cs.v[i].algorithm))
                a++;
            slaq_eval_acc *row = &acc[((size_t)k * na + a) * MAX_H];
            popts.convergence = SLAQ_CONV_UNKNOWN;
            if (declared && cs.v[i].convergence &&
                slaq_convergence_parse(cs.v[i].convergence,
                                       &popts.convergence) != SLAQ_OK) {
                cli_error(argv[0], "%s:%d: field \"convergence\": expected "
                          "sublinear, linear, superlinear or nonconvex, got "
                          "'%s'", argv[optind], cs.v[i].line,
                          cs.v[i].convergence);
                rc = EXIT_USAGE;
                break;
            }
            int e = slaq_eval_curve(kinds[k], &popts, cs.v[i].loss, cs.v[i].n,
                                    cs.v[i].iter_cpu_s, horizons, (size_t)nh,
                                    row);
            if (e) {
                cli_error(argv[0], "%s:%d: %s", argv[optind], cs.v[i].line,
                          slaq_strerror(e));
                rc = EXIT_RUNTIME;
            }
        }

    if (!rc && json) {
        json_t *root = json_object(), *preds = json_object();
        json_object_set_new(root, "predictors", preds);
        for (int k = 0; k < nk; k++) {
            json_t *pk = json_object();
            json_object_set_new(preds, slaq_predictor_name(kinds[k]), pk);
            for (size_t a = 0; a < na; a++) {
                json_t *pa = json_object();
                json_object_set_new(pk, algs[a], pa);
                for (int hi = 0; hi < nh; hi++) {
                    const slaq_eval_acc *x =
                        &acc[((size_t)k * na + a) * MAX_H + (size_t)hi];
                    char key[16];
                    snprintf(key, sizeof key, "h%d", horizons[hi]);
                    json_object_set_new(
                        pa, key,
                        json_pack("{s:f, s:f, s:I}", "norm",
                                  x->n ? x->norm_sum / (double)x->n : 0.0,
                                  "rel",
                                  x->n_rel ? x->rel_sum / (double)x->n_rel
                                           : 0.0,
                                  "n", (json_int_t)x->n));
                }
            }
        }
        json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
        fputc('\n', stdout);
        json_decref(root);
    } else if (!rc) {
        printf("mean prediction error over every prefix of >= 5 iterations "
               "(%zu curves)\n", cs.n);
        for (int k = 0; k < nk; k++) {
            printf("\n%s\n  %-10s", slaq_predictor_name(kinds[k]),
                   "algorithm");
            for (int hi = 0; hi < nh; hi++)
                printf("  h%-3d norm   rel    ", horizons[hi]);
            printf("\n");
            double mean[MAX_H] = {0};
            for (size_t a = 0; a < na; a++) {
                printf("  %-10s", algs[a]);
                for (int hi = 0; hi < nh; hi++) {
                    const slaq_eval_acc *x =
                        &acc[((size_t)k * na + a) * MAX_H + (size_t)hi];
                    double nm = x->n ? x->norm_sum / (double)x->n : 0;
                    double rl = x->n_rel ? x->rel_sum / (double)x->n_rel : 0;
                    mean[hi] += nm / (double)na;
                    printf("  %6.2f%% %6.2f%%   ", 100 * nm, 100 * rl);
                }
                printf("\n");
            }
            printf("  %-10s", "mean");
            for (int hi = 0; hi < nh; hi++)
                printf("  %6.2f%%            ", 100 * mean[hi]);
            printf("\n");
        }
    }
    free(algs);
    free(acc);
    curves_free(&cs);
    return rc;
}
