/*
 * cmd_sim_tasks.c — `slaq sim --tasks FILE` and `slaq sim
 * --tasks-workload NAME`: replay jobs of short tasks under the task-level
 * schedulers of sim/tasksim.h and print one row of metrics per run.
 *
 * The queue settings (queue-bound, queue-util, queue-order, starvation,
 * queue-load) are the settings table's rows, parsed by it; a run given as
 * yaq-c:srjf overrides queue-order for that run alone, so that one
 * command compares orders on one workload.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "io/stats.h"
#include "sim/tasksim.h"

#define MAX_TRUNS 32

/* The rows of the settings table that apply here: the queues'. */
static const char *const queue_rows[] = {
    "queue-bound", "queue-util", "queue-order", "starvation", "queue-load",
};

static int is_queue_row(const char *name)
{
    for (size_t i = 0; i < sizeof queue_rows / sizeof *queue_rows; i++)
        if (!strcmp(name, queue_rows[i]))
            return 1;
    return 0;
}

static void usage(FILE *f, const slaq_sched_config *dflt,
                  const char *const *skip)
{
    fprintf(f,
        "usage: slaq sim --tasks FILE [options]\n"
        "       slaq sim --tasks-workload NAME [options]\n\n"
        "Replays jobs of short tasks on a cluster of nodes of slots under "
        "task\nschedulers with and without node queues (docs/queues.md), "
        "and prints one\nrow of metrics per scheduler.\n\n"
        "  --tasks FILE      a trace, one job a line: submission_time "
        "number_of_tasks\n"
        "                    mean_task_duration d1 ... dn (the format of "
        "the Hawk and\n"
        "                    Eagle simulators; ../shared/data/traces/tasks)\n"
        "  --tasks-workload NAME\n"
        "                    a synthetic workload: " TSIM_WORKLOADS "\n"
        "  --load RHO        synthetic: offered load on the slots (default "
        "0.9)\n"
        "  --span SECONDS    synthetic: seconds of arrivals (default 1800, "
        "GridMix's\n"
        "                    30 minutes; hive has its 185 jobs)\n"
        "  --scheduler LIST  runs, comma-separated: yarn, sparrow, fifo, "
        "yaq-c, yaq-d,\n"
        "                    each optionally :ORDER (yaq-c:srjf) to set "
        "queue-order for\n"
        "                    that run (default yarn,sparrow,fifo,yaq-c,"
        "yaq-d)\n"
        "  --nodes N         nodes (default 80, or from --slots or "
        "--target-util)\n"
        "  --slots-per-node S\n"
        "                    slots of each node (default 10)\n"
        "  --slots TOTAL     nodes enough for TOTAL slots\n"
        "  --target-util U   nodes such that the work arriving in the load "
        "window is U\n"
        "                    of the slots over it (the offered load; the "
        "measured\n"
        "                    utilisation is the util column; above 1 the "
        "cluster is\n"
        "                    overloaded while jobs arrive)\n"
        "  --heartbeat TAU   seconds between a node's heartbeats (default "
        "3)\n"
        "  --probe-ratio D   sparrow, yaq-d: nodes probed per task "
        "(default 2)\n"
        "  --random-placement\n"
        "                    yaq-c: a random node with room instead of "
        "Algorithm 1\n"
        "  --r-fmin F        Algorithm 1's R_fmin: queue only once free "
        "slots are at\n"
        "                    most F of all (default 0)\n"
        "  --short-cutoff S  jobs whose estimate is at most S seconds are "
        "short\n"
        "                    (default: the 90th percentile of the jobs' "
        "estimates,\n"
        "                    so the longest 10%% are long, as in Hawk)\n"
        "  --seed N          random seed (default 1)\n"
        "  --format md|tsv   a markdown table (default) or tab-separated "
        "values\n"
        "  --jobs-out FILE   every job's completion time in every run, as "
        "CSV:\n"
        "                    scheduler,order,job,arrival_s,tasks,estimate_s,"
        "jct_s\n");
    setopt_help(f, 20, dflt, skip, NULL);
    fprintf(f,
        "\nThe load window runs from the arrival of the job at the 1st "
        "percentile to\nthe last arrival. Columns: util is busy "
        "slot-seconds in the load window\nover the slots; prop2 the "
        "utilisation Proposition 2 gives for the bound\n(exponential tasks "
        "of the mean estimate, a saturated cluster); jct\n"
        "p50/mean/p90/p99 are job completion times (arrival to last task's "
        "end), s;\nshort p50/p90 the short jobs'; wait the mean task's time "
        "from its job's\narrival to its start; qdelay mean/sd/p50/max a "
        "task's time in a node queue;\njobs/min the throughput over the "
        "makespan; cpu and wall the run's CPU and\nelapsed time, s (the "
        "simulator's own: the scheduler's decisions and the\nevents "
        "between them).\n\n"
        "Exit status: 0 ok, 1 a bad trace or a failed run, 2 bad usage.\n");
}

typedef struct trun {
    tsim_sched sched;
    int order;               /* -1: the setting's */
} trun;

static int parse_runs(const char *list, trun *runs, int max)
{
    char buf[512];
    if (strlen(list) >= sizeof buf)
        return -1;
    strcpy(buf, list);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n == max)
            return -1;
        char *colon = strchr(tok, ':');
        runs[n].order = -1;
        if (colon) {
            *colon = '\0';
            slaq_qorder o;
            if (slaq_qorder_parse(colon + 1, &o))
                return -1;
            runs[n].order = (int)o;
        }
        if (tsim_sched_parse(tok, &runs[n].sched))
            return -1;
        n++;
    }
    return n;
}

static void print_num(double v, const char *sep)
{
    if (isnan(v))
        printf("%s-", sep);
    else if (fabs(v) >= 100)
        printf("%s%.0f", sep, v);
    else
        printf("%s%.3g", sep, v);
}

/* The options of `slaq sim --tasks` that are not the settings table's. */
typedef struct tasks_args {
    const char *trace, *wlname, *jobs_out;
    double load, span, slots_total, target, cutoff;
    int nodes_given, tsv;
    trun runs[MAX_TRUNS];
    int nruns;
} tasks_args;

/* Parses a whole number from 1 to max for option opt ("--nodes") into
 * *v. Returns 0, or EXIT_USAGE once the error is printed. */
static int parse_count(const char *opt, const char *arg, int max, double *v)
{
    if (cli_parse_positive("sim", opt, arg, v))
        return EXIT_USAGE;
    if (*v != floor(*v) || *v > max) {
        cli_error("sim", "%s: expected a whole number from 1 to %d, got '%s'",
                  opt, max, arg);
        return EXIT_USAGE;
    }
    return 0;
}

/* Applies option ch (argument arg) to a, tc or, for the settings table's
 * rows, cfg. Returns 0, -1 once --help is printed (exit 0), or EXIT_USAGE
 * once the error is printed. */
static int tasks_option(int ch, const char *arg, tasks_args *a,
                        tsim_config *tc, slaq_sched_config *cfg,
                        const char *const *skip)
{
    double v;
    switch (ch) {
    case 'T': a->trace = arg; break;
    case 'W': a->wlname = arg; break;
    case 'l': return cli_parse_positive("sim", "--load", arg, &a->load)
                     ? EXIT_USAGE : 0;
    case 'p': return cli_parse_positive("sim", "--span", arg, &a->span)
                     ? EXIT_USAGE : 0;
    case 's':
        a->nruns = parse_runs(arg, a->runs, MAX_TRUNS);
        if (a->nruns <= 0) {
            cli_error("sim", "--scheduler: expected a list of yarn, "
                      "sparrow, fifo, yaq-c or yaq-d, each optionally "
                      ":ORDER, got '%s'", arg);
            return EXIT_USAGE;
        }
        break;
    case 'n':
        if (parse_count("--nodes", arg, TSIM_MAX_NODES, &v))
            return EXIT_USAGE;
        tc->nodes = (size_t)v;
        a->nodes_given = 1;
        break;
    case 'S':
        if (parse_count("--slots-per-node", arg, TSIM_MAX_SLOTS, &v))
            return EXIT_USAGE;
        tc->slots = (unsigned)v;
        break;
    case 'L': return cli_parse_positive("sim", "--slots", arg, &a->slots_total)
                     ? EXIT_USAGE : 0;
    case 'u':
        if (cli_parse_positive("sim", "--target-util", arg, &a->target))
            return EXIT_USAGE;
        if (a->target > 2) {
            cli_error("sim", "--target-util: expected a number in (0, "
                      "2], got '%s'", arg);
            return EXIT_USAGE;
        }
        break;
    case 'b': return cli_parse_positive("sim", "--heartbeat", arg,
                                        &tc->heartbeat) ? EXIT_USAGE : 0;
    case 'd':
        if (parse_count("--probe-ratio", arg, 100, &v))
            return EXIT_USAGE;
        tc->probe_ratio = (unsigned)v;
        break;
    case 'R': tc->random_place = 1; break;
    case 'f':
        if (cli_parse_nonneg("sim", "--r-fmin", arg, &tc->r_fmin))
            return EXIT_USAGE;
        if (tc->r_fmin >= 1) {
            cli_error("sim", "--r-fmin: expected a number from 0 to 1 "
                      "(1 excluded), got '%s'", arg);
            return EXIT_USAGE;
        }
        break;
    case 'c': return cli_parse_nonneg("sim", "--short-cutoff", arg,
                                      &a->cutoff) ? EXIT_USAGE : 0;
    case 'e':
        if (cli_parse_nonneg("sim", "--seed", arg, &v))
            return EXIT_USAGE;
        tc->seed = (uint64_t)v;
        break;
    case 'F':
        if (strcmp(arg, "md") && strcmp(arg, "tsv")) {
            cli_error("sim", "--format: expected md or tsv, got '%s'", arg);
            return EXIT_USAGE;
        }
        a->tsv = !strcmp(arg, "tsv");
        break;
    case 'J': a->jobs_out = arg; break;
    case 'h': {
        slaq_sched_config d;
        slaq_sched_config_init(&d);
        usage(stdout, &d, skip);
        return -1;
    }
    default:
        if (cli_setting("sim", cfg, ch, arg))
            return EXIT_USAGE;
    }
    return 0;
}

/* Reads argv into a, tc (from its defaults, 80 nodes) and cfg's queue
 * rows, then checks that one workload and at most one size are given.
 * Returns 0, -1 once --help is printed, or EXIT_USAGE. */
static int tasks_parse(int argc, char **argv, const char *const *skip,
                       tasks_args *a, tsim_config *tc, slaq_sched_config *cfg)
{
    static const struct option own[] = {
        {"tasks", required_argument, 0, 'T'},
        {"tasks-workload", required_argument, 0, 'W'},
        {"load", required_argument, 0, 'l'},
        {"span", required_argument, 0, 'p'},
        {"scheduler", required_argument, 0, 's'},
        {"nodes", required_argument, 0, 'n'},
        {"slots-per-node", required_argument, 0, 'S'},
        {"slots", required_argument, 0, 'L'},
        {"target-util", required_argument, 0, 'u'},
        {"heartbeat", required_argument, 0, 'b'},
        {"probe-ratio", required_argument, 0, 'd'},
        {"random-placement", no_argument, 0, 'R'},
        {"r-fmin", required_argument, 0, 'f'},
        {"short-cutoff", required_argument, 0, 'c'},
        {"seed", required_argument, 0, 'e'},
        {"format", required_argument, 0, 'F'},
        {"jobs-out", required_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},
    };
    struct option opts[sizeof own / sizeof *own + SETOPT_MAX + 1];
    setopt_build(opts, own, sizeof own / sizeof *own, skip);
    *a = (tasks_args){.load = 0.9, .span = 1800, .cutoff = NAN};
    a->nruns = parse_runs("yarn,sparrow,fifo,yaq-c,yaq-d", a->runs, MAX_TRUNS);
    tc->nodes = 80;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = tasks_option(ch, optarg, a, tc, cfg, skip);
        if (rc)
            return rc;
    }
    if (optind < argc) {
        cli_error("sim", "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    if (!a->trace == !a->wlname) {
        cli_error("sim", "give one of --tasks FILE or --tasks-workload "
                  "NAME");
        return EXIT_USAGE;
    }
    if ((a->slots_total > 0) + (a->target > 0) + a->nodes_given > 1) {
        cli_error("sim", "give at most one of --nodes, --slots and "
                  "--target-util");
        return EXIT_USAGE;
    }
    return 0;
}

/* Sizes the cluster for --target-util (offered: w's offered load) and
 * sets the short-job cutoff: --short-cutoff, else the 90th percentile of
 * the estimates. Returns 0, or EXIT_USAGE or EXIT_RUNTIME once the error
 * is printed. */
static int tasks_size(const tasks_args *a, const tt_workload *w,
                      double offered, tsim_config *tc)
{
    if (a->target > 0) {
        if (isnan(offered)) {
            cli_error("sim", "--target-util: the jobs all arrive at once");
            return EXIT_USAGE;
        }
        double n = ceil(offered / (a->target * tc->slots));
        tc->nodes = n < 1 ? 1 : n > TSIM_MAX_NODES ? TSIM_MAX_NODES
                                                   : (size_t)n;
    }
    double cutoff = a->cutoff;
    if (isnan(cutoff)) {
        double *e = malloc(w->njobs * sizeof *e);
        if (!e) {
            cli_error("sim", "out of memory");
            return EXIT_RUNTIME;
        }
        memcpy(e, w->est, w->njobs * sizeof *e);
        cutoff = stats_quantile(e, w->njobs, 0.9);
        free(e);
    }
    tc->short_cutoff = cutoff;
    return 0;
}

/* No scheduler does better than no wait at all: each job as long as its
 * longest task. Its median is the floor of every median JCT (NaN out of
 * memory). */
static double tasks_floor50(const tt_workload *w)
{
    double floor50 = NAN;
    double *m = malloc(w->njobs * sizeof *m);
    if (m) {
        for (size_t j = 0; j < w->njobs; j++) {
            m[j] = 0;
            for (size_t t = w->first[j]; t < w->first[j + 1]; t++)
                if (w->dur[t] > m[j])
                    m[j] = w->dur[t];
        }
        floor50 = stats_quantile(m, w->njobs, 0.5);
        free(m);
    }
    return floor50;
}

/* Prints the workload's line and the table's header (md or tsv). */
static void tasks_print_header(const tasks_args *a, const tt_workload *w,
                               const tsim_config *tc, double offered)
{
    double wa, wb;
    tsim_window(w, &wa, &wb);
    double floor50 = tasks_floor50(w);
    double slots = (double)tc->nodes * tc->slots;
    printf("# %s: %zu jobs, %zu tasks, mean estimate %.4g s; %zu nodes x "
           "%u slots; offered load %.3f over the load window %.0f-%.0f s; "
           "short jobs: estimate <= %.4g s; heartbeat %g s; median JCT "
           "without any wait %.4g s\n",
           a->trace ? a->trace : a->wlname, w->njobs, w->ntasks,
           tsim_mean_estimate(w), tc->nodes, tc->slots, offered / slots, wa,
           wb, tc->short_cutoff, tc->heartbeat, floor50);
    const char *sep = a->tsv ? "\t" : " | ";
    static const char *const cols[] = {
        "scheduler", "order", "bound", "util", "prop2", "jct p50", "jct mean",
        "jct p90", "jct p99", "short p50", "short p90", "wait", "qdelay mean",
        "qdelay sd", "qdelay p50", "qdelay max", "jobs/min", "cpu", "wall"};
    size_t ncols = sizeof cols / sizeof *cols;
    printf("%s", a->tsv ? "" : "| ");
    for (size_t i = 0; i < ncols; i++)
        printf("%s%s", i ? sep : "", cols[i]);
    printf("%s\n", a->tsv ? "" : " |");
    if (!a->tsv) {
        for (size_t i = 0; i < ncols; i++)
            printf("|---");
        printf("|\n");
    }
}

/* Runs w under one scheduler (tc with run's scheduler and order) and
 * prints its row; each job's JCT to jf when open. Returns 0, or
 * EXIT_RUNTIME once the error is printed. */
static int tasks_run(const tt_workload *w, const tsim_config *tc,
                     const slaq_sched_config *cfg, const trun *run, int tsv,
                     FILE *jf)
{
    const char *sep = tsv ? "\t" : " | ";
    char err[512];
    tsim_config c = *tc;
    c.sched = run->sched;
    c.order = run->order >= 0 ? (slaq_qorder)run->order : cfg->queue_order;
    /* the baselines run in arrival order, as their systems do */
    if (c.sched == TSIM_YARN || c.sched == TSIM_SPARROW ||
        c.sched == TSIM_FIFO)
        c.order = SLAQ_QORDER_FIFO;
    tsim_result r;
    double c0 = stats_cpu_ms(), w0 = stats_now_ms();
    if (tsim_run(w, &c, &r, err, sizeof err)) {
        cli_error("sim", "%s: %s", tsim_sched_name(c.sched), err);
        return EXIT_RUNTIME;
    }
    double cpu = (stats_cpu_ms() - c0) / 1000;
    double wall = (stats_now_ms() - w0) / 1000;
    char bound[48];
    if (r.qlen == SLAQ_QBOUND_MAX && c.bound.kind == SLAQ_QBOUND_MWT &&
        (c.sched == TSIM_YAQC || c.sched == TSIM_YAQD))
        slaq_queue_bound_format(&c.bound, bound, sizeof bound);
    else if (r.qlen == SLAQ_QBOUND_MAX)
        snprintf(bound, sizeof bound, "none");
    else
        snprintf(bound, sizeof bound, "%zu", r.qlen);
    printf("%s%s%s%s%s%s", tsv ? "" : "| ", tsim_sched_name(c.sched),
           sep, slaq_qorder_name(c.order), sep, bound);
    /* Proposition 2's utilisation for this bound, were the tasks
     * exponential of the workload's mean estimate and the cluster
     * saturated */
    double prop2 = r.qlen == SLAQ_QBOUND_MAX || c.sched == TSIM_SPARROW ||
                           c.sched == TSIM_FIFO
                       ? NAN
                       : slaq_qbound_util(c.slots,
                                          1 / tsim_mean_estimate(w),
                                          c.heartbeat, r.qlen);
    double vals[] = {r.util, prop2, r.jct_p50, r.jct_mean, r.jct_p90,
                     r.jct_p99, r.short_p50, r.short_p90, r.wait_mean,
                     r.qdelay_mean, r.qdelay_sd, r.qdelay_p50,
                     r.qdelay_max, r.throughput, cpu, wall};
    for (size_t k = 0; k < sizeof vals / sizeof *vals; k++)
        print_num(vals[k], sep);
    printf("%s\n", tsv ? "" : " |");
    fflush(stdout);
    for (size_t j = 0; jf && j < r.njobs; j++)
        fprintf(jf, "%s,%s,%zu,%.17g,%zu,%.17g,%.17g\n",
                tsim_sched_name(c.sched), slaq_qorder_name(c.order), j + 1,
                w->arrival[j] - w->arrival[0], w->first[j + 1] - w->first[j],
                w->est[j], r.jct[j]);
    tsim_result_free(&r);
    return 0;
}

int cmd_sim_tasks(int argc, char **argv)
{
    slaq_sched_config cfg;
    slaq_sched_config_init(&cfg);
    tsim_config tc;
    tsim_config_init(&tc);
    const char *skip[SETOPT_MAX + 1];
    size_t nskip = 0;
    for (size_t i = 0; i < slaq_setting_count(); i++)
        if (!is_queue_row(slaq_setting_at(i)->name))
            skip[nskip++] = slaq_setting_at(i)->name;
    skip[nskip] = NULL;
    tasks_args a;
    int rc = tasks_parse(argc, argv, skip, &a, &tc, &cfg);
    if (rc)
        return rc < 0 ? 0 : rc;
    if (a.slots_total > 0)
        tc.nodes = (size_t)ceil(a.slots_total / tc.slots);
    tc.bound = cfg.queue_bound;
    tc.util = cfg.queue_util;
    tc.starvation = cfg.starvation;
    tc.load = cfg.queue_load;
    FILE *jf = NULL;
    if (a.jobs_out) {
        jf = fopen(a.jobs_out, "w");
        if (!jf) {
            cli_error("sim", "--jobs-out %s: %s", a.jobs_out, strerror(errno));
            return EXIT_RUNTIME;
        }
        fprintf(jf, "scheduler,order,job,arrival_s,tasks,estimate_s,jct_s\n");
    }
    tt_workload w;
    char err[512];
    if (a.trace)
        rc = tt_read(a.trace, &w, err, sizeof err);
    else
        rc = tsim_workload(a.wlname, a.load, tc.nodes * (size_t)tc.slots,
                           a.span, tc.seed, &w, err, sizeof err);
    if (rc) {
        cli_error("sim", "%s", err);
        if (jf)
            fclose(jf);
        return EXIT_RUNTIME;
    }
    double offered = tsim_offered(&w);
    rc = tasks_size(&a, &w, offered, &tc);
    if (rc) {
        tt_free(&w);
        if (jf)
            fclose(jf);
        return rc;
    }
    tasks_print_header(&a, &w, &tc, offered);
    int status = 0;
    for (int i = 0; i < a.nruns && !status; i++)
        status = tasks_run(&w, &tc, &cfg, &a.runs[i], a.tsv, jf);
    tt_free(&w);
    if (jf && fclose(jf)) {
        cli_error("sim", "--jobs-out %s: %s", a.jobs_out, strerror(errno));
        status = EXIT_RUNTIME;
    }
    return status;
}
