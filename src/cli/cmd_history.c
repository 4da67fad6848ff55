/*
 * cmd_history.c — `slaq history ID`: every report a job made, in iteration
 * order, as a table, CSV or JSON.
 *
 * `slaq show` thins a long history to a few hundred rows for reading;
 * this command exports all of it. slaqd answers a page at a time (the
 * "history" request of docs/protocol.md), and each page is printed as it
 * arrives, so a history of any length is exported in bounded memory.
 */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

enum { FMT_TABLE, FMT_CSV, FMT_JSON };

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq history [OPTIONS] ID\n\n"
               "Prints every report of job ID in iteration order: ITER the "
               "iteration (0 is\nthe loss before training), LOSS, CPU_S the "
               "iteration's CPU-seconds, SAMPLES\nthe samples it processed, "
               "T slaqd's clock when the report arrived (seconds\nsince the "
               "epoch), METRIC the job's metric if it reports one (else "
               "empty).\n\n"
               "  --csv             comma-separated, with a header line\n"
               "  --json            one object {\"job\", \"columns\", "
               "\"rows\"}, rows as arrays\n"
               "  --page N          reports asked of slaqd at a time "
               "(default 5000)\n"
               RPC_HELP_WHERE
               "  -h, --help        this help\n");
}

/* One cell: integers as integers, reals with enough digits to read back
 * the same double, null as empty. */
static void print_cell(json_t *v, int width)
{
    char buf[64] = "";
    if (json_is_integer(v))
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
    if (width)
        printf("%*s", width, buf);
    else
        fputs(buf, stdout);
}

static void print_rows(json_t *rows, int fmt, size_t *shown)
{
    static const int widths[] = {8, 24, 12, 10, 20, 24};
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if (fmt == FMT_JSON) {
            fputs((*shown)++ ? ",\n    " : "\n    ", stdout);
            json_dumpf(row, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
            continue;
        }
        (*shown)++;
        for (size_t c = 0; c < 6; c++) {
            if (c)
                fputs(fmt == FMT_CSV ? "," : " ", stdout);
            print_cell(json_array_get(row, c), fmt == FMT_CSV ? 0 : widths[c]);
        }
        putchar('\n');
    }
}

int cmd_history(int argc, char **argv)
{
    enum { O_CSV = 1, O_PAGE };
    static const struct option opts[] = {
        {"csv", no_argument, 0, O_CSV}, {"page", required_argument, 0, O_PAGE},
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    int o, fmt = FMT_TABLE;
    long long page = 5000;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        if (o == O_CSV) {
            fmt = FMT_CSV;
            continue;
        }
        if (o == O_PAGE) {
            char *end;
            page = strtoll(optarg, &end, 10);
            if (end == optarg || *end || page < 1 || page > 5000) {
                cli_error("history", "--page wants a count in [1, 5000], "
                          "got '%s'", optarg);
                return EXIT_USAGE;
            }
            continue;
        }
        usage(o == 'h' ? stdout : stderr);
        return o == 'h' ? 0 : EXIT_USAGE;
    }
    if (ro.json)
        fmt = fmt == FMT_CSV ? -1 : FMT_JSON;
    if (fmt < 0) {
        cli_error("history", "--csv and --json exclude each other");
        return EXIT_USAGE;
    }
    if (optind != argc - 1) {
        cli_error("history", "expected one job id");
        return EXIT_USAGE;
    }
    const char *id = argv[optind];
    json_t *after = json_null();
    size_t shown = 0;
    int first = 1;
    while (first || json_is_integer(after)) {
        json_t *r = rpc_call("history", &ro, json_pack(
            "{s:s, s:s, s:O, s:I}", "type", "history", "job", id, "after",
            after, "limit", (json_int_t)page));
        json_decref(after);
        after = NULL;
        if (!r)
            return EXIT_RUNTIME;
        if (!json_is_true(json_object_get(r, "ok"))) {
            int st = rpc_fail("history", r);
            json_decref(r);
            if (!first && fmt == FMT_JSON)
                fputs("\n  ]\n}\n", stdout); /* keep what was printed valid */
            return st;
        }
        if (first) {
            if (fmt == FMT_JSON)
                printf("{\n  \"job\": %lld,\n  \"columns\": [\"iter\", "
                       "\"loss\", \"cpu_s\", \"samples\", \"t\", "
                       "\"metric\"],\n  \"rows\": [",
                       (long long)json_integer_value(json_object_get(r, "job")));
            else if (fmt == FMT_CSV)
                puts("iter,loss,cpu_s,samples,t,metric");
            else
                printf("%8s %24s %12s %10s %20s %24s\n", "ITER", "LOSS",
                       "CPU_S", "SAMPLES", "T", "METRIC");
            first = 0;
        }
        print_rows(json_object_get(r, "rows"), fmt, &shown);
        after = json_incref(json_object_get(r, "next"));
        json_decref(r);
    }
    json_decref(after);
    if (fmt == FMT_JSON)
        fputs(shown ? "\n  ]\n}\n" : "]\n}\n", stdout);
    return 0;
}
