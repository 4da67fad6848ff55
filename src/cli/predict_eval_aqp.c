/*
 * predict_eval_aqp.c — `slaq predict-eval --aqp`: how well ReLAQS's
 * progress curve predicts the progress metric of recorded approximate
 * queries, and how close the metric is to their true error.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/aqptrace.h"
#include "slaq/slaq.h"

#define AQP_MAX_H 8

static const char usage_text[] =
    "usage: slaq predict-eval --aqp TRACES.jsonl [--horizons 1,5]\n"
    "                         [--window N] [--min-points N] [--json]\n"
    "       slaq predict-eval --aqp TRACES.jsonl --errors\n\n"
    "Replays every recorded query (data/aqp/traces.jsonl, docs/aqp.md) "
    "through\nslaq's query model: after each mini-batch i >= 3 it fits the "
    "progress curve\n1/(a i^2 + b) to the progress metric P and predicts P "
    "h mini-batches ahead.\nPer query and overall it prints the mean "
    "absolute prediction error (P is in\n[0, 1], so this is the normalised "
    "error) and the mean |P_i - E_i| over i >= 2,\nE_i the true error: per "
    "column |X_i - truth| over its largest in the run,\naveraged over the "
    "columns (docs/relaqs.md, \"True error\").\n\n"
    "Columns: B the query's mini-batches; pred@H the mean |predicted P - "
    "P| H\nmini-batches ahead, in % of P's range; |P-E| the mean |P_i - "
    "E_i|, in %.\n\n"
    "  --horizons LIST   mini-batches ahead, comma-separated (1,5; at most "
    "8)\n"
    "  --window N        fit the N most recent P values (default 0: all)\n"
    "  --min-points N    P values before the first fit (default 3)\n"
    "  --json            one JSON object instead of the table\n"
    "  --errors          instead, print each query's true error E_1..E_B as "
    "JSON\n"
    "                    Lines: {\"name\": ..., \"error\": [...]}\n"
    "  -h, --help        this text\n";

/* Prints a JSON string (the trace names are labels: escaped simply). */
static void put_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* --errors: each query's true error after every mini-batch. */
static int print_errors(const char *prog, const aqp_trace_set *ts)
{
    for (size_t q = 0; q < ts->n; q++) {
        const aqp_trace *t = &ts->v[q];
        double *e = malloc(t->B * sizeof *e);
        int r = e ? slaq_query_error_curve(t->est, t->truth, t->B, t->K, e)
                  : SLAQ_ENOMEM;
        if (r) {
            cli_error(prog, "%s: %s", t->name, slaq_strerror(r));
            free(e);
            return EXIT_RUNTIME;
        }
        printf("{\"name\": ");
        put_json_string(t->name);
        printf(", \"error\": [");
        for (size_t i = 0; i < t->B; i++)
            printf("%s%.9g", i ? ", " : "", e[i]);
        printf("]}\n");
        free(e);
    }
    return 0;
}

/* The options of slaq predict-eval --aqp. */
typedef struct pe_args {
    int hz[AQP_MAX_H], nh;   /* horizons in mini-batches */
    int json, errors;
    slaq_query_opts qo;
} pe_args;

/* --horizons LIST into a->hz. Returns 0, or EXIT_USAGE once the error
 * is printed (as prog). */
static int pe_horizons(const char *prog, const char *arg, pe_args *a)
{
    double v[AQP_MAX_H];
    int n = cli_parse_list(arg, v, AQP_MAX_H);
    if (n < 0) {
        cli_error(prog, "--horizons: expected up to %d positive "
                  "integers separated by commas, got '%s'",
                  AQP_MAX_H, arg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < n; i++) {
        if (v[i] != floor(v[i])) {
            cli_error(prog, "--horizons: %g is not a whole number "
                      "of mini-batches", v[i]);
            return EXIT_USAGE;
        }
        a->hz[i] = (int)v[i];
    }
    a->nh = n;
    return 0;
}

/* Reads argv into *a; one trace file must remain (argv[optind]).
 * Returns 0 to go on, -1 once --help is printed, or EXIT_USAGE once the
 * error is printed. */
static int pe_parse(int argc, char **argv, pe_args *a)
{
    static const struct option opts[] = {
        {"aqp", no_argument, 0, 'a'},
        {"horizons", required_argument, 0, 'H'},
        {"window", required_argument, 0, 'w'},
        {"min-points", required_argument, 0, 'm'},
        {"json", no_argument, 0, 'j'},
        {"errors", no_argument, 0, 'e'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    *a = (pe_args){.hz = {1, 5}, .nh = 2};
    slaq_query_opts_init(&a->qo);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        double x;
        switch (c) {
        case 'a':
            break;
        case 'H':
            if (pe_horizons(argv[0], optarg, a))
                return EXIT_USAGE;
            break;
        case 'w':
            if (cli_parse_nonneg(argv[0], "--window", optarg, &x))
                return EXIT_USAGE;
            a->qo.window = (size_t)x;
            break;
        case 'm':
            if (cli_parse_positive(argv[0], "--min-points", optarg, &x))
                return EXIT_USAGE;
            if (x < 2) {
                cli_error(argv[0], "--min-points: expected at least 2, got "
                          "'%s'", optarg);
                return EXIT_USAGE;
            }
            a->qo.min_points = (unsigned)x;
            break;
        case 'j':
            a->json = 1;
            break;
        case 'e':
            a->errors = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return -1;
        default:
            fputs(usage_text, stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_error(argv[0], "expected one trace file (see --help)");
        return EXIT_USAGE;
    }
    return 0;
}

/* Prints query t's (the q-th) mean errors e, as a row or a JSON member. */
static void pe_print_query(const pe_args *a, size_t q, const aqp_trace *t,
                           const slaq_query_eval *e)
{
    if (a->json) {
        printf("%s\"%s\": {\"batches\": %zu", q ? ", " : "", t->name, t->B);
        for (int h = 0; h < a->nh; h++)
            printf(", \"h%d\": %.6f", a->hz[h],
                   e->pred[h].n ? e->pred[h].err_sum / e->pred[h].n : NAN);
        printf(", \"metric_vs_error\": %.6f}",
               e->metric_n ? e->metric_err_sum / e->metric_n : NAN);
    } else {
        printf("%-22s %5zu", t->name, t->B);
        for (int h = 0; h < a->nh; h++)
            printf("  %7.2f%%", e->pred[h].n ? 100 * e->pred[h].err_sum /
                                                   e->pred[h].n : NAN);
        printf("  %6.2f%%\n", e->metric_n ? 100 * e->metric_err_sum /
                                                e->metric_n : NAN);
    }
}

/* Prints the means over every query's points (total), and closes the
 * JSON object or explains the table's columns. */
static void pe_print_all(const pe_args *a, const slaq_query_eval *total)
{
    if (a->json) {
        printf("}, \"all\": {");
        for (int h = 0; h < a->nh; h++)
            printf("%s\"h%d\": %.6f", h ? ", " : "", a->hz[h],
                   total->pred[h].n ? total->pred[h].err_sum /
                                          total->pred[h].n : NAN);
        printf(", \"metric_vs_error\": %.6f}}\n",
               total->metric_n ? total->metric_err_sum / total->metric_n
                               : NAN);
    } else {
        printf("%-22s %5s", "all (mean per point)", "");
        for (int h = 0; h < a->nh; h++)
            printf("  %7.2f%%", total->pred[h].n ? 100 *
                   total->pred[h].err_sum / total->pred[h].n : NAN);
        printf("  %6.2f%%\n", total->metric_n ? 100 *
               total->metric_err_sum / total->metric_n : NAN);
        printf("\nB: mini-batches; pred@H: mean |predicted - actual| "
               "progress metric P, H mini-batches\nahead (P in [0, 1]); "
               "|P-E|: mean |P - true error| per mini-batch "
               "(--help)\n");
    }
}

/* The evaluation: every query of ts replayed through the query model, a
 * row (or JSON member) each, then the means. Returns 0, or EXIT_RUNTIME
 * once the error is printed (as prog). */
static int pe_eval(const char *prog, const pe_args *a, const aqp_trace_set *ts)
{
    slaq_query_eval total;
    memset(&total, 0, sizeof total);
    if (a->json)
        printf("{\"queries\": {");
    else {
        printf("%-22s %5s", "query", "B");
        for (int h = 0; h < a->nh; h++)
            printf("   pred@%-2d", a->hz[h]);
        printf("  |P-E|\n");
    }
    for (size_t q = 0; q < ts->n; q++) {
        const aqp_trace *t = &ts->v[q];
        slaq_query_eval e;
        memset(&e, 0, sizeof e);
        int r = slaq_eval_query(&a->qo, t->est, t->truth, t->B, t->K, a->hz,
                                (size_t)a->nh, &e);
        if (r) {
            cli_error(prog, "%s: %s", t->name, slaq_strerror(r));
            return EXIT_RUNTIME;
        }
        for (int h = 0; h < a->nh; h++) {
            total.pred[h].err_sum += e.pred[h].err_sum;
            total.pred[h].n += e.pred[h].n;
        }
        total.metric_err_sum += e.metric_err_sum;
        total.metric_n += e.metric_n;
        pe_print_query(a, q, t, &e);
    }
    pe_print_all(a, &total);
    return 0;
}

int cmd_predict_eval_aqp(int argc, char **argv)
{
    pe_args a;
    int rc = pe_parse(argc, argv, &a);
    if (rc)
        return rc < 0 ? 0 : rc;
    aqp_trace_set ts;
    char err[512];
    if (aqp_traces_load(argv[optind], &ts, err, sizeof err)) {
        cli_error(argv[0], "%s", err);
        return EXIT_USAGE;
    }
    rc = a.errors ? print_errors(argv[0], &ts) : pe_eval(argv[0], &a, &ts);
    aqp_traces_free(&ts);
    return rc;
}
