/*
 * slaq_aqp.c — slaq-aqp, an approximate TPC-H query as a slaq job.
 *
 *   slaq-aqp gen     generate a TPC-H database file (lineitem in random order)
 *   slaq-aqp run     answer a query by online aggregation, one mini-batch at a
 *                    time, reporting estimates to slaqd (and a trace line)
 *   slaq-aqp sql     print a query's SQL
 *   slaq-aqp export  copy a database file into SQLite
 *
 * The run loop is slaq-train's: before each mini-batch it asks libslaq-client
 * how many threads to run (slaq's thread rule on the current allocation),
 * after it reports the estimates, the CPU seconds and the rows processed,
 * and it stops early when slaqd says so.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "aqp/aqp.h"
#include "slaq/client.h"
#include "slaq/version.h"

/* How long slaq-aqp waits at exit for its last reports to be confirmed. */
#define AQP_CLOSE_WAIT_MS 30000

static const char USAGE[] =
    "Usage: slaq-aqp COMMAND [OPTIONS]\n"
    "Approximate TPC-H queries by online aggregation, scheduled by slaq.\n"
    "\n"
    "Commands:\n"
    "  gen --scale-factor SF --out FILE [--seed N]\n"
    "      Generate the TPC-H tables the queries read (lineitem, part,\n"
    "      partsupp, orders, customer, supplier, nation, region; TPC-H value\n"
    "      distributions; SF 1 is about 6 million lineitem rows) into FILE,\n"
    "      lineitem's rows and partsupp's parts in random order.\n"
    "  run --data FILE --query Q [options]\n"
    "      Answer query Q (q1, q3, q5, q6, q11, q14, q16, q17 or q19)\n"
    "      mini-batch by mini-batch, sampling lineitem (partsupp's parts for\n"
    "      q11 and q16);\n"
    "      after each one print and report the estimates with 95% bounds.\n"
    "      The last mini-batch gives the exact answer.\n"
    "      --batches N            mini-batches (default 40)\n"
    "      --threads N            threads until slaqd gives an allocation\n"
    "                             (default 1; then slaq's thread rule)\n"
    "      --progress-columns L   report only these comma-separated keys or\n"
    "                             column names (sum_qty means every group's)\n"
    "      --boot-seed N          seed of the bootstrap weights (default 1)\n"
    "      --bootstrap            bootstrap bounds for every query (as iOLAP),\n"
    "                             not only Q3, Q11, Q14, Q16 and Q17; costs\n"
    "                             R weights a row\n"
    "      --replicates R         bootstrap replicates (10..2000, default 300)\n"
    "      --trace FILE           append the run's trace (docs/aqp.md) to FILE\n"
    "      --name NAME            the trace's name (default QUERY-sfSF)\n"
    "      --quiet                no per-mini-batch lines\n"
    "  sql Q            print query Q's SQL (the exact answer's definition)\n"
    "  export --data FILE --out DB   copy the tables into a new SQLite file\n"
    "\n"
    "Options of every command: --help, --version.\n"
    "Under slaqd (SLAQ_SOCKET set) the job reports after every mini-batch;\n"
    "without it, it runs alone. See docs/aqp.md.\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "slaq-aqp: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'slaq-aqp --help'.\n");
    return 2;
}

static int parse_u64(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (!s || !*s || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { O_SF = 256, O_SEED, O_OUT, O_DATA, O_QUERY, O_BATCHES, O_THREADS,
       O_COLS, O_BOOT, O_TRACE, O_NAME, O_QUIET, O_HELP, O_VERSION,
       O_BOOTSTRAP, O_REPS };

static const struct option OPTS[] = {
    {"scale-factor", required_argument, NULL, O_SF},
    {"seed", required_argument, NULL, O_SEED},
    {"out", required_argument, NULL, O_OUT},
    {"data", required_argument, NULL, O_DATA},
    {"query", required_argument, NULL, O_QUERY},
    {"batches", required_argument, NULL, O_BATCHES},
    {"threads", required_argument, NULL, O_THREADS},
    {"progress-columns", required_argument, NULL, O_COLS},
    {"boot-seed", required_argument, NULL, O_BOOT},
    {"trace", required_argument, NULL, O_TRACE},
    {"name", required_argument, NULL, O_NAME},
    {"quiet", no_argument, NULL, O_QUIET},
    {"bootstrap", no_argument, NULL, O_BOOTSTRAP},
    {"replicates", required_argument, NULL, O_REPS},
    {"help", no_argument, NULL, O_HELP},
    {"version", no_argument, NULL, O_VERSION},
    {NULL, 0, NULL, 0},
};

struct args {
    double sf;
    unsigned long long seed, batches, threads, boot_seed;
    const char *out, *data, *query, *cols, *trace, *name;
    int quiet, bootstrap, replicates;
};

/* ---- gen, export, sql ---- */

static int cmd_gen(const struct args *a)
{
    if (!(a->sf > 0))
        return usage_error("gen: --scale-factor is required (a number > 0, "
                           "e.g. 0.1)%s", "");
    if (!a->out)
        return usage_error("gen: --out FILE is required%s", "");
    char err[512];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    aqp_db *db = aqp_db_generate(a->sf, a->seed, err, sizeof err);
    if (!db || aqp_db_save(db, a->out, err, sizeof err) < 0) {
        fprintf(stderr, "slaq-aqp gen: %s\n", err);
        aqp_db_free(db);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "slaq-aqp gen: %s: scale factor %g, seed %llu: %zu "
            "lineitem rows, %zu parts (%.1f s)\n", a->out, a->sf, a->seed,
            db->nrows, db->nparts,
            (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
    aqp_db_free(db);
    return 0;
}

static int cmd_export(const struct args *a)
{
    if (!a->data || !a->out)
        return usage_error("export: --data FILE and --out DB are required%s", "");
    char err[512];
    aqp_db *db = aqp_db_load(a->data, err, sizeof err);
    if (!db) {
        fprintf(stderr, "slaq-aqp export: %s\n", err);
        return 1;
    }
    sqlite3 *conn = NULL;
    int rc = 1;
    if (sqlite3_open_v2(a->out, &conn, SQLITE_OPEN_READWRITE |
                        SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fprintf(stderr, "slaq-aqp export: %s: %s\n", a->out,
                conn ? sqlite3_errmsg(conn) : "cannot open");
    } else if (aqp_db_to_sqlite(db, conn, err, sizeof err) < 0) {
        fprintf(stderr, "slaq-aqp export: %s: %s\n", a->out, err);
    } else {
        rc = 0;
    }
    sqlite3_close(conn);
    aqp_db_free(db);
    return rc;
}

/* ---- run ---- */

/* Picks the keys named by `list` (keys, or column names matching every
 * group's column); all keys when list is NULL. Returns the count, or -1
 * with the unknown name in `bad`. */
static int pick_columns(const aqp_query *qr, const char *list, size_t *idx,
                        char *bad, size_t badlen)
{
    size_t K = aqp_query_nkeys(qr), n = 0;
    if (!list) {
        for (size_t k = 0; k < K; k++)
            idx[n++] = k;
        return (int)n;
    }
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (size_t k = 0; k < K; k++) {
            const char *key = aqp_query_key(qr, k), *slash = strchr(key, '/');
            if (!strcmp(key, tok) || (slash && !strcmp(slash + 1, tok))) {
                int dup = 0;
                for (size_t i = 0; i < n; i++)
                    dup |= idx[i] == k;
                if (!dup)
                    idx[n++] = k;
                found = 1;
            }
        }
        if (!found) {
            snprintf(bad, badlen, "%s", tok);
            free(copy);
            return -1;
        }
    }
    free(copy);
    return (int)n;
}

/* Mean relative half-width of the bounds over the picked keys that have
 * one: the `loss` a slaqd without vector support sees. */
static double rel_halfwidth(const aqp_query *qr, const size_t *idx, int n)
{
    const double *e = aqp_query_estimates(qr), *lo = aqp_query_lower(qr),
                 *hi = aqp_query_upper(qr);
    double s = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        size_t k = idx[i];
        if (isfinite(e[k]) && isfinite(lo[k]) && isfinite(hi[k]) && e[k] != 0) {
            s += (hi[k] - lo[k]) / (2 * fabs(e[k]));
            m++;
        }
    }
    return m ? s / m : 1.0;
}

static void put_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.12g", v);
    else
        fputs("null", f);
}

static void put_vectors(FILE *f, const char *name, const double *v, size_t B,
                        size_t K)
{
    fprintf(f, ", \"%s\": [", name);
    for (size_t i = 0; i < B; i++) {
        fputs(i ? ", [" : "[", f);
        for (size_t k = 0; k < K; k++) {
            if (k)
                fputs(", ", f);
            put_num(f, v[i * K + k]);
        }
        fputc(']', f);
    }
    fputc(']', f);
}

struct trace {
    double *est, *lo, *hi, *cpu;
    unsigned long long *rows;
};

static int write_trace(const struct args *a, const aqp_db *db,
                       const aqp_query *qr, aqp_qid q, const struct trace *t,
                       const double *truth)
{
    size_t B = aqp_query_batches(qr), K = aqp_query_nkeys(qr);
    FILE *f = fopen(a->trace, "a");
    if (!f) {
        fprintf(stderr, "slaq-aqp run: %s: cannot open: %s\n", a->trace,
                strerror(errno));
        return -1;
    }
    char name[128];
    if (a->name)
        snprintf(name, sizeof name, "%s", a->name);
    else
        snprintf(name, sizeof name, "%s-sf%g", aqp_query_name(q),
                 db->scale_factor);
    fprintf(f, "{\"name\": \"%s\", \"query\": \"%s\", \"scale_factor\": %g, "
            "\"seed\": %llu, \"batches\": %zu, \"rows_total\": %zu, "
            "\"confidence\": %g, \"bounds\": \"%s\", \"keys\": [", name,
            aqp_query_name(q), db->scale_factor,
            (unsigned long long)db->seed, B, aqp_query_units(db, q),
            AQP_CONFIDENCE,
            aqp_query_bounds_kind(q, a->bootstrap));
    for (size_t k = 0; k < K; k++)
        fprintf(f, "%s\"%s\"", k ? ", " : "", aqp_query_key(qr, k));
    fputs("], \"truth\": [", f);
    for (size_t k = 0; k < K; k++) {
        if (k)
            fputs(", ", f);
        put_num(f, truth[k]);
    }
    fputc(']', f);
    put_vectors(f, "estimates", t->est, B, K);
    put_vectors(f, "lower", t->lo, B, K);
    put_vectors(f, "upper", t->hi, B, K);
    fputs(", \"rows\": [", f);
    for (size_t i = 0; i < B; i++)
        fprintf(f, "%s%llu", i ? ", " : "", t->rows[i]);
    fputs("], \"batch_cpu_s\": [", f);
    for (size_t i = 0; i < B; i++)
        fprintf(f, "%s%.6g", i ? ", " : "", t->cpu[i]);
    fputs("]}\n", f);
    if (fclose(f) != 0) {
        fprintf(stderr, "slaq-aqp run: %s: write error: %s\n", a->trace,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* The exact answer, as a single mini-batch over every row. */
static int exact_answer(const aqp_db *db, aqp_qid q, double *truth, size_t K)
{
    char err[256];
    aqp_query *x = aqp_query_new(db, q, 1, NULL, err, sizeof err);
    if (!x || aqp_query_step(x, 1, err, sizeof err) != 1) {
        fprintf(stderr, "slaq-aqp run: exact answer: %s\n", err);
        aqp_query_free(x);
        return -1;
    }
    memcpy(truth, aqp_query_estimates(x), K * sizeof *truth);
    aqp_query_free(x);
    return 0;
}

/* run's arguments: --data, a known --query (*q) and --threads in 1..256.
 * Returns 0, or 2 once the usage error is printed. */
static int run_args(const struct args *a, int *q)
{
    if (!a->data)
        return usage_error("run: --data FILE is required (make one with "
                           "slaq-aqp gen)%s", "");
    if (!a->query)
        return usage_error("run: --query is required (%s)", aqp_query_list());
    *q = aqp_query_parse(a->query);
    if (*q < 0)
    {
        fprintf(stderr, "slaq-aqp: run: unknown query '%s' (expected %s)\n"
                "Try 'slaq-aqp --help'.\n", a->query, aqp_query_list());
        return 2;
    }
    if (a->threads < 1 || a->threads > 256)
        return usage_error("run: --threads must be 1..256%s", "");
    return 0;
}

/* What run fills each mini-batch: the reported columns' indices and
 * values, and with --trace every value of every mini-batch. */
struct run_bufs {
    size_t *idx;
    double *rep_e, *rep_l, *rep_h;
    struct trace t;
};

/* Allocates b for K values in B mini-batches (the trace's only when
 * trace). Returns 0, or -1 out of memory (b then for run_bufs_free). */
static int run_bufs_new(struct run_bufs *b, size_t K, size_t B, int trace)
{
    *b = (struct run_bufs){0};
    b->idx = malloc(K * sizeof *b->idx);
    b->rep_e = malloc(K * sizeof *b->rep_e);
    b->rep_l = malloc(K * sizeof *b->rep_l);
    b->rep_h = malloc(K * sizeof *b->rep_h);
    if (trace) {
        b->t.est = malloc(B * K * sizeof *b->t.est);
        b->t.lo = malloc(B * K * sizeof *b->t.lo);
        b->t.hi = malloc(B * K * sizeof *b->t.hi);
        b->t.cpu = malloc(B * sizeof *b->t.cpu);
        b->t.rows = malloc(B * sizeof *b->t.rows);
    }
    if (!b->idx || !b->rep_e || !b->rep_l || !b->rep_h ||
        (trace && (!b->t.est || !b->t.lo || !b->t.hi || !b->t.cpu ||
                   !b->t.rows)))
        return -1;
    return 0;
}

static void run_bufs_free(struct run_bufs *b)
{
    free(b->idx);
    free(b->rep_e);
    free(b->rep_l);
    free(b->rep_h);
    free(b->t.est);
    free(b->t.lo);
    free(b->t.hi);
    free(b->t.cpu);
    free(b->t.rows);
}

/* After mini-batch i (taking cpu seconds on threads): reports the n
 * chosen columns to slaqd (c), keeps every value for the trace and, but
 * with --quiet, prints the mini-batch's line. */
static void run_report(const struct args *a, const aqp_query *qr,
                       slaq_client *c, struct run_bufs *b, int n, size_t i,
                       int threads, double cpu)
{
    size_t K = aqp_query_nkeys(qr), B = aqp_query_batches(qr);
    const double *e = aqp_query_estimates(qr), *lo = aqp_query_lower(qr),
                 *hi = aqp_query_upper(qr);
    for (int j = 0; j < n; j++) {
        b->rep_e[j] = e[b->idx[j]];
        b->rep_l[j] = lo[b->idx[j]];
        b->rep_h[j] = hi[b->idx[j]];
    }
    double rows = (double)aqp_query_last_rows(qr);
    double hw = rel_halfwidth(qr, b->idx, n);
    (void)slaq_client_report_vector(c, i, hw, cpu, rows, (size_t)n,
                                    b->rep_e, b->rep_l, b->rep_h);
    if (a->trace) {
        memcpy(b->t.est + (i - 1) * K, e, K * sizeof *e);
        memcpy(b->t.lo + (i - 1) * K, lo, K * sizeof *lo);
        memcpy(b->t.hi + (i - 1) * K, hi, K * sizeof *hi);
        b->t.cpu[i - 1] = cpu;
        b->t.rows[i - 1] = aqp_query_last_rows(qr);
    }
    if (!a->quiet) {
        fprintf(stderr, "mini-batch %zu/%zu  threads %d  rows %.0f  cpu "
                "%.4f s  ±%.3g%%  %s = %.10g [%.10g, %.10g]%s\n", i, B,
                threads, rows, cpu, 100 * hw, aqp_query_key(qr, b->idx[0]),
                b->rep_e[0], b->rep_l[0], b->rep_h[0], n > 1 ? "  ..." : "");
    }
}

static int cmd_run(const struct args *a)
{
    int q = -1;
    int rc = run_args(a, &q);
    if (rc)
        return rc;
    char err[512];
    aqp_db *db = aqp_db_load(a->data, err, sizeof err);
    if (!db) {
        fprintf(stderr, "slaq-aqp run: %s\n", err);
        return 1;
    }
    aqp_opts opts = {a->boot_seed, a->replicates, a->bootstrap};
    aqp_query *qr = aqp_query_new(db, (aqp_qid)q, a->batches, &opts, err,
                                  sizeof err);
    if (!qr) {
        fprintf(stderr, "slaq-aqp run: %s\n", err);
        aqp_db_free(db);
        return 2;
    }
    size_t K = aqp_query_nkeys(qr), B = aqp_query_batches(qr);
    struct run_bufs b;
    rc = 1;
    slaq_client *c = NULL;
    if (run_bufs_new(&b, K, B, a->trace != NULL) < 0) {
        fprintf(stderr, "slaq-aqp run: out of memory\n");
        goto out;
    }
    char bad[128];
    int n = pick_columns(qr, a->cols, b.idx, bad, sizeof bad);
    if (n <= 0) {
        fprintf(stderr, "slaq-aqp run: --progress-columns: no key or column "
                "'%s' in %s (its keys: %s, ...; see --trace)\n", bad,
                aqp_query_name((aqp_qid)q), aqp_query_key(qr, 0));
        rc = 2;
        goto out;
    }

    char jobname[64];
    snprintf(jobname, sizeof jobname, "aqp-%s", aqp_query_name((aqp_qid)q));
    setenv("SLAQ_JOB_NAME", jobname, 0);
    c = slaq_client_open();
    if (!c) {
        fprintf(stderr, "slaq-aqp run: out of memory\n");
        goto out;
    }
    slaq_client_set_default_cores(c, (double)a->threads);
    slaq_client_set_iters(c, B);
    if (!a->quiet)
        fprintf(stderr, "slaq-aqp: %s on %s: %zu %s of %s in %zu "
                "mini-batches, %zu result values (%d reported), %s bounds\n",
                aqp_query_name((aqp_qid)q), a->data,
                aqp_query_units(db, (aqp_qid)q),
                q == AQP_Q11 || q == AQP_Q16 ? "parts" : "rows",
                aqp_query_fact((aqp_qid)q), B, K, n,
                aqp_query_bounds_kind((aqp_qid)q, a->bootstrap));
    int stopped = 0;
    while (aqp_query_done(qr) < B) {
        if (slaq_client_should_stop(c)) {
            stopped = 1;
            break;
        }
        int threads = slaq_client_threads(c);
        double c0 = cpu_now();
        if (aqp_query_step(qr, threads, err, sizeof err) < 0) {
            fprintf(stderr, "slaq-aqp run: mini-batch %zu: %s\n",
                    aqp_query_done(qr) + 1, err);
            goto out;
        }
        double cpu = cpu_now() - c0;
        run_report(a, qr, c, &b, n, aqp_query_done(qr), threads, cpu);
    }
    if (stopped) {
        const char *why = slaq_client_stop_reason(c);
        fprintf(stderr, "slaq-aqp: stopped by slaq after %zu of %zu "
                "mini-batches (%s)\n", aqp_query_done(qr), B, why ? why : "?");
    } else {
        /* The answer, exact now: one line per key on stdout. */
        const double *e = aqp_query_estimates(qr);
        for (size_t k = 0; k < K; k++)
            printf("%s\t%.10g\n", aqp_query_key(qr, k), e[k]);
    }
    rc = 0;
    if (a->trace && !stopped) {
        double *truth = malloc(K * sizeof *truth);
        if (!truth || exact_answer(db, (aqp_qid)q, truth, K) < 0 ||
            write_trace(a, db, qr, (aqp_qid)q, &b.t, truth) < 0)
            rc = 1;
        free(truth);
    }
out:
    /* The last report is the exact answer: wait for slaqd to confirm it
     * for up to AQP_CLOSE_WAIT_MS (an agent restarting under load has
     * taken more than the client's default second), not longer when it
     * has (the wait ends with the last confirmation). */
    slaq_client_close_timeout(c, AQP_CLOSE_WAIT_MS);
    run_bufs_free(&b);
    aqp_query_free(qr);
    aqp_db_free(db);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("a command is required (gen, run, sql or "
                           "export)%s", "");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("slaq-aqp %s\n", SLAQ_VERSION);
        return 0;
    }
    struct args a = {.seed = 1, .batches = 40, .threads = 1, .boot_seed = 1,
                     .replicates = AQP_BOOT_REPS};
    optind = 2;
    int o;
    unsigned long long v;
    while ((o = getopt_long(argc, argv, "", OPTS, NULL)) != -1) {
        switch (o) {
        case O_SF: {
            char *end;
            a.sf = strtod(optarg, &end);
            if (*end || !(a.sf > 0) || a.sf > 10)
                return usage_error("--scale-factor '%s': expected a number "
                                   "in (0, 10]", optarg);
            break;
        }
        case O_SEED:
            if (parse_u64(optarg, &a.seed) < 0)
                return usage_error("--seed '%s': expected a non-negative "
                                   "integer", optarg);
            break;
        case O_BOOT:
            if (parse_u64(optarg, &a.boot_seed) < 0)
                return usage_error("--boot-seed '%s': expected a non-negative "
                                   "integer", optarg);
            break;
        case O_BATCHES:
            if (parse_u64(optarg, &v) < 0 || v < 1)
                return usage_error("--batches '%s': expected a positive "
                                   "integer", optarg);
            a.batches = v;
            break;
        case O_THREADS:
            if (parse_u64(optarg, &v) < 0 || v < 1 || v > 256)
                return usage_error("--threads '%s': expected 1..256", optarg);
            a.threads = v;
            break;
        case O_OUT: a.out = optarg; break;
        case O_DATA: a.data = optarg; break;
        case O_QUERY: a.query = optarg; break;
        case O_COLS: a.cols = optarg; break;
        case O_TRACE: a.trace = optarg; break;
        case O_NAME: a.name = optarg; break;
        case O_QUIET: a.quiet = 1; break;
        case O_BOOTSTRAP: a.bootstrap = 1; break;
        case O_REPS:
            if (parse_u64(optarg, &v) < 0 || v < AQP_MIN_REPS || v > AQP_MAX_REPS)
                return usage_error("--replicates '%s': expected 10..2000",
                                   optarg);
            a.replicates = (int)v;
            break;
        case O_HELP: fputs(USAGE, stdout); return 0;
        case O_VERSION: printf("slaq-aqp %s\n", SLAQ_VERSION); return 0;
        default: return usage_error("%s: bad option", cmd);
        }
    }
    if (!strcmp(cmd, "sql")) {
        if (optind >= argc)
            return usage_error("sql: which query? (%s)", aqp_query_list());
        int q = aqp_query_parse(argv[optind]);
        if (q < 0) {
            fprintf(stderr, "slaq-aqp: sql: unknown query '%s' (expected "
                    "%s)\nTry 'slaq-aqp --help'.\n", argv[optind],
                    aqp_query_list());
            return 2;
        }
        printf("%s;\n", aqp_query_sql((aqp_qid)q));
        return 0;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!strcmp(cmd, "gen"))
        return cmd_gen(&a);
    if (!strcmp(cmd, "run"))
        return cmd_run(&a);
    if (!strcmp(cmd, "export"))
        return cmd_export(&a);
    return usage_error("unknown command '%s' (expected gen, run, sql or "
                       "export)", cmd);
}
