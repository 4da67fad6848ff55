/*
 * cmd_sim.c — `slaq sim`: replay a workload under one or more policies.
 *
 * Reads the workload, runs each policy (and each rescaled arrival rate of a
 * sweep) through the simulator, and writes summary.json, per-policy
 * timeline.csv and jobs.csv, the figures and report.html. Everything is
 * first written to a staging directory next to --out and moved into place
 * only when all of it succeeded, so an error never leaves half a report.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "sim/report.h"
#include "sim/sim.h"
#include "sim/sweep_sim.h"
#include "sim/tasksim.h"

#define MAX_RUNS 16
#define MAX_SWEEP 32

/* The settings table's rows that are sim options of their own: --policy
 * takes a run (POLICY[:PREDICTOR], oracle-greedy). */
static const char *const sim_own[] = {"policy", NULL};

static const char *sim_default_text(const char *name)
{
    return !strcmp(name, "cores") ? "none: required, or --nodes" : NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq sim --workload FILE --cores C --out DIR [options]\n"
        "       slaq sim --sweep TRACES [options]   (see slaq sim --sweep - --help)\n"
        "       slaq sim --tasks FILE [options]     (see slaq sim --tasks - --help)\n\n"
        "       slaq sim --workload FILE --nodes N --cores-per-node C "
        "--out DIR [options]\n\n"
        "Replays a workload (JSON Lines, see docs/sim.md) in virtual time "
        "through\nslaq's scheduling core and reports quality and "
        "completion metrics.\n\n"
        "  --workload FILE   jobs to replay ('-' for stdin)\n"
        "  --nodes N         N nodes instead of --cores (docs/cluster.md): "
        "every job\n"
        "                    runs on one, a job that fits nowhere waits in a "
        "FIFO queue\n"
        "  --cores-per-node C\n"
        "                    cores of each node (with --nodes)\n"
        "  --policy P        a share policy (slaq policy --help: fair, slaq,\n"
        "                    slaq-plan, queue, ...), slaq-linear,\n"
        "                    oracle-greedy, oracle-plan or oracle-index\n"
        "                    (default slaq); slaq-linear is slaq with\n"
        "                    --scaling off (every job taken to scale\n"
        "                    linearly, the paper's); the oracles are slaq's\n"
        "                    greedy, slaq-plan and slaq-index handed the\n"
        "                    true curves and costs: references, not upper\n"
        "                    bounds\n"
        "  --compare LIST    several policies side by side, e.g.\n"
        "                    fair,slaq:strawman,slaq:slaq-fit,slaq:auto,"
        "oracle-greedy;\n"
        "                    an entry may name its predictor: "
        "slaq:strawman\n"
        "  --sweep-interarrival LIST\n"
        "                    also run each policy with the arrivals "
        "rescaled to\n"
        "                    these mean inter-arrival times (s), e.g. "
        "2,4,6,8,10,15\n"
        "  --undeclared      jobs do not tell the core how many iterations they run\n"
        "  --out DIR         output directory (replaced as a whole)\n"
        "  --deadlines       jobs with deadlines instead (slaq sim "
        "--deadlines --help)\n"
        "  --aqp TRACES      approximate queries instead (slaq sim --aqp "
        "--help)\n"
        "  --no-plots        skip gnuplot (CSV, JSON and HTML only)\n"
        "  --quiet           no progress bar, and no summary at the end\n"
        "  --help            this text\n\n"
        "Scheduler settings (docs/libslaq.md; the same as slaqd's):\n");
    sim_config dflt;
    sim_config_init(&dflt);
    setopt_help(f, 20, &dflt.sched, sim_own, sim_default_text);
    fprintf(f, "\n"
        "Outputs: DIR/summary.json (one object per policy), DIR/POLICY/"
        "{summary.json,\ntimeline.csv,jobs.csv}, DIR/reduction.csv, "
        "DIR/sweep.csv, DIR/*.svg,\nDIR/report.html. Exit status: 0 ok, "
        "1 failure, 2 bad usage or input.\n");
}

/* ------------------------------------------------------------ progress */

typedef struct progress {
    int quiet;
    double start, last;   /* wall seconds */
    double base, total;   /* iterations of the runs before this one, all */
    int shown;
} progress;

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_cb(void *arg, double done, double total)
{
    (void)total;
    progress *p = arg;
    double now = wall_s();
    if (p->quiet || now - p->start < 1 || now - p->last < 0.2)
        return;
    p->last = now;
    p->shown = 1;
    double frac = p->total > 0 ? (p->base + done) / p->total : 1;
    int width = 40, fill = (int)(frac * width);
    fprintf(stderr, "\rslaq sim [");
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3.0f%% %6.1fs", 100 * frac, now - p->start);
    fflush(stderr);
}

static void progress_end(progress *p)
{
    if (p->shown)
        fprintf(stderr, "\rslaq sim: done in %.1fs%40s\n",
                wall_s() - p->start, "");
}

/* ------------------------------------------------------- output staging */

static int rm_entry(const char *path, const struct stat *sb, int flag,
                    struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Creates a new, empty directory beside `path`, named PATH.TAG. plus a
 * unique suffix, into buf: the six X's below are mkdtemp(3)'s template,
 * which it replaces with that suffix. -1 with errno set on failure. */
static int sibling_dir(char *buf, size_t size, const char *path,
                       const char *tag)
{
    if (snprintf(buf, size, "%s.%s.XXXXXX", path, tag) >= (int)size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(buf) ? 0 : -1;
}

/* Moves the finished staging directory to dir, replacing what was there. */
static int commit_dir(const char *staging, const char *dir)
{
    struct stat sb;
    char old[PATH_MAX];
    int had = stat(dir, &sb) == 0;
    if (had) {
        if (!S_ISDIR(sb.st_mode)) {
            cli_error("sim", "%s: exists and is not a directory", dir);
            return -1;
        }
        if (sibling_dir(old, sizeof old, dir, "old") != 0 ||
            rmdir(old) != 0 || rename(dir, old) != 0) {
            cli_error("sim", "%s: cannot replace: %s", dir, strerror(errno));
            return -1;
        }
    }
    if (rename(staging, dir) != 0) {
        cli_error("sim", "%s: %s", dir, strerror(errno));
        if (had)
            rename(old, dir);
        return -1;
    }
    if (had)
        rm_tree(old);
    return 0;
}

static FILE *open_out(const char *dir, const char *sub, const char *file)
{
    char path[PATH_MAX];
    int n = sub ? snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file)
                : snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = n < (int)sizeof path ? fopen(path, "w") : NULL;
    if (!f)
        cli_error("sim", "%s: %s", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, int rc, const char *what)
{
    if (fclose(f) != 0 || rc) {
        cli_error("sim", "%s: write error", what);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- options */

typedef struct run {
    char name[64];         /* as given, ':' turned into '-' (a dir name) */
    sim_config cfg;
    sim_summary sum;
} run;

/* Splits the --compare list (or the single --policy) into runs, each
 * with the settings of base. */
static int parse_runs(const char *list, const sim_config *base, run *runs,
                      int *nruns)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    *nruns = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (*nruns == MAX_RUNS || strlen(tok) >= sizeof runs->name) {
            cli_error("sim", "too many or too long policy names");
            return -1;
        }
        run *r = &runs[*nruns];
        r->cfg = *base;
        if (sim_parse_run(tok, base->sched.predictor, &r->cfg)) {
            cli_error("sim", "unknown policy '%s' (expected a share policy "
                      "such as fair, slaq or slaq-plan, slaq-linear, "
                      "oracle-greedy, oracle-plan or oracle-index, optionally "
                      "POLICY:PREDICTOR with auto, slaq-fit or strawman)",
                      tok);
            return -1;
        }
        /* "oracle" is the old name; results carry the honest one. */
        snprintf(r->name, sizeof r->name, "%s",
                 strcmp(tok, "oracle") ? tok : "oracle-greedy");
        for (char *c = r->name; *c; c++)
            if (*c == ':')
                *c = '-';
        for (int i = 0; i < *nruns; i++)
            if (!strcmp(runs[i].name, r->name)) {
                cli_error("sim", "policy '%s' given twice", tok);
                return -1;
            }
        (*nruns)++;
    }
    if (*nruns == 0) {
        cli_error("sim", "no policy given");
        return -1;
    }
    return 0;
}

/* The headline numbers of each run (docs/metrics.md) and where the
 * report is: what a user looks at first. */
static void print_headline(const run *runs, int nruns, const char *out)
{
    int i90 = sim_x_index(90), i95 = sim_x_index(95);
    printf("%-16s %5s %9s %9s %9s %9s %9s  %s\n", "policy", "jobs",
           "avg loss", "t90 (s)", "t95 (s)", "jct (s)", "span (s)",
           "cores high/medium/low");
    for (int i = 0; i < nruns; i++) {
        const sim_summary *m = &runs[i].sum;
        printf("%-16s %5zu %9.3f %9.1f %9.1f %9.1f %9.1f  %.2f/%.2f/%.2f\n",
               runs[i].name, m->jobs, m->avg_norm_loss, m->tx_mean[i90],
               m->tx_mean[i95], m->jct_mean, m->makespan,
               m->share[SIM_HIGH], m->share[SIM_MEDIUM], m->share[SIM_LOW]);
    }
    printf("report: %s/report.html\n", out);
}

static void join_argv(int argc, char **argv, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "slaq");
    for (int i = 0; i < argc && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, " %s", argv[i]);
}

/* ---------------------------------------------------------------- runs */

static int write_run(const char *stage, const run *r, const wl_workload *wl,
                     const sim_result *res)
{
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/%s", stage, r->name) >=
            (int)sizeof sub || mkdir(sub, 0777) != 0) {
        cli_error("sim", "%s: %s", sub, strerror(errno));
        return -1;
    }
    FILE *f = open_out(stage, r->name, "summary.json");
    if (!f || close_out(f, sim_write_summary(f, r->name, &r->cfg, &r->sum),
                        "summary.json"))
        return -1;
    f = open_out(stage, r->name, "timeline.csv");
    if (!f || close_out(f, sim_write_timeline(f, res), "timeline.csv"))
        return -1;
    f = open_out(stage, r->name, "jobs.csv");
    if (!f || close_out(f, sim_write_jobs(f, wl, res), "jobs.csv"))
        return -1;
    f = open_out(stage, r->name, "sched.csv");
    if (!f || close_out(f, sim_write_sched(f, res), "sched.csv"))
        return -1;
    return 0;
}

static int simulate(const wl_workload *wl, sim_config *cfg, progress *p,
                    sim_result *res)
{
    char err[512];
    cfg->progress = progress_cb;
    cfg->progress_arg = p;
    if (sim_run(wl, cfg, res, err, sizeof err)) {
        progress_end(p);
        cli_error("sim", "%s", err);
        return -1;
    }
    double iters = 0;
    for (size_t i = 0; i < wl->n; i++)
        iters += (double)(wl->jobs[i].nlosses - 1);
    p->base += iters;
    return 0;
}

/* ------------------------------------------------------------- parse */

/* Everything the command line asked for, checked. */
typedef struct sim_opts {
    const char *workload, *out;
    double sweep[MAX_SWEEP];      /* --sweep-interarrival, seconds */
    int nsweep, plots, quiet;
    run runs[MAX_RUNS];           /* one per policy, configured */
    int nruns;
} sim_opts;

/* Reads argv into o. Returns 0 to go on, 1 when --help was printed, or -1
 * after reporting a usage error. */
static int sim_parse(int argc, char **argv, sim_opts *o)
{
    static const struct option own[] = {
        {"workload", required_argument, 0, 'w'},
        {"nodes", required_argument, 0, 'M'},
        {"cores-per-node", required_argument, 0, 'P'},
        {"policy", required_argument, 0, 'p'},
        {"compare", required_argument, 0, 'C'},
        {"sweep-interarrival", required_argument, 0, 's'},
        {"undeclared", no_argument, 0, 'U'},
        {"out", required_argument, 0, 'o'},
        {"no-plots", no_argument, 0, 'n'},
        {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},
    };
    enum { NOWN = sizeof own / sizeof *own };
    struct option opts[NOWN + SETOPT_MAX + 1];
    setopt_build(opts, own, NOWN, sim_own);
    const char *policy = "slaq", *compare = NULL;
    int c, cores_given = 0;
    double nodes = 0, per_node = 0;
    /* Every run starts from these settings; --policy or --compare then
     * picks each run's policy and predictor. */
    sim_config base;
    sim_config_init(&base);
    memset(o, 0, sizeof *o);
    o->plots = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int set = cli_setting("sim", &base.sched, c, optarg);
        if (set < 0)
            return -1;
        if (set == 0) {
            cores_given |= !strcmp(setopt_row(c)->name, "cores");
            continue;
        }
        switch (c) {
        case 'w': o->workload = optarg; break;
        case 'o': o->out = optarg; break;
        case 'p': policy = optarg; break;
        case 'C': compare = optarg; break;
        case 'n': o->plots = 0; break;
        case 'U': base.declare_iters = 0; break;
        case 'q': o->quiet = 1; break;
        case 'M':
            if (cli_parse_positive("sim", "--nodes", optarg, &nodes))
                return -1;
            if (nodes != floor(nodes) || nodes > 1e6) {
                cli_error("sim", "--nodes: expected a whole number from 1 "
                          "to 1000000, got '%s'", optarg);
                return -1;
            }
            break;
        case 'P':
            if (cli_parse_positive("sim", "--cores-per-node", optarg,
                                   &per_node))
                return -1;
            break;
        case 's':
            o->nsweep = cli_parse_list(optarg, o->sweep, MAX_SWEEP);
            if (o->nsweep < 0) {
                cli_error("sim", "--sweep-interarrival: expected a list of "
                          "positive numbers like 2,4,6, got '%s'", optarg);
                return -1;
            }
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
    }
    if ((nodes > 0) != (per_node > 0)) {
        cli_error("sim", "--nodes and --cores-per-node go together");
        return -1;
    }
    double *cores = &base.sched.cores;
    if (nodes > 0) {
        if (cores_given && fabs(*cores - nodes * per_node) > 1e-9 * *cores) {
            cli_error("sim", "--cores %g is not --nodes x --cores-per-node "
                      "(%g); give one or the other", *cores, nodes * per_node);
            return -1;
        }
        *cores = nodes * per_node;
        base.nodes = (size_t)nodes;
    }
    if (optind < argc || !o->workload || !o->out ||
        !(cores_given || nodes > 0)) {
        cli_error("sim", optind < argc ? "unexpected argument '%s'"
                  : "--workload, --cores (or --nodes and --cores-per-node) "
                  "and --out are required%s",
                  optind < argc ? argv[optind] : "");
        usage(stderr);
        return -1;
    }
    return parse_runs(compare ? compare : policy, &base, o->runs, &o->nruns);
}

/* ----------------------------------------------------------- compute */

/*
 * Runs every policy on the workload, summarises each into o->runs[i].sum
 * and writes its per-run files into stage (a run's full result is freed
 * before the next, so memory stays that of one run); then the sweep's
 * rescaled runs, summarised into swept[s * nruns + i].
 */
static int sim_compute(sim_opts *o, const wl_workload *wl, const char *stage,
                       sim_summary *swept)
{
    progress prog = {.quiet = o->quiet, .start = wall_s()};
    double iters = 0;
    for (size_t i = 0; i < wl->n; i++)
        iters += (double)(wl->jobs[i].nlosses - 1);
    prog.total = iters * o->nruns * (1 + o->nsweep);
    for (int i = 0; i < o->nruns; i++) {
        sim_result res;
        if (simulate(wl, &o->runs[i].cfg, &prog, &res))
            return -1;
        sim_summarize(&res, &o->runs[i].sum);
        int wrc = write_run(stage, &o->runs[i], wl, &res);
        sim_result_free(&res);
        if (wrc)
            return -1;
    }
    double mean_ia = sim_mean_interarrival(wl);
    for (int s = 0; s < o->nsweep; s++) {
        for (int i = 0; i < o->nruns; i++) {
            sim_config cfg = o->runs[i].cfg;
            sim_result res;
            cfg.arrival_scale = o->sweep[s] / mean_ia;
            if (simulate(wl, &cfg, &prog, &res))
                return -1;
            sim_summarize(&res, &swept[s * o->nruns + i]);
            sim_result_free(&res);
        }
    }
    progress_end(&prog);
    return 0;
}

/* ------------------------------------------------------------- print */

/* Writes the all-policies summary.json, the figures and report.html into
 * stage; then moves stage to o->out and prints the headline. */
static int sim_print(const sim_opts *o, const char *stage,
                     const sim_summary *swept, const char *command)
{
    FILE *f = open_out(stage, NULL, "summary.json");
    if (!f)
        return -1;
    int frc = fputs("[\n", f) < 0;
    for (int i = 0; i < o->nruns; i++) {
        frc |= sim_write_summary(f, o->runs[i].name, &o->runs[i].cfg,
                                 &o->runs[i].sum);
        if (i + 1 < o->nruns)
            frc |= fputs(",\n", f) < 0;
    }
    frc |= fputs("]\n", f) < 0;
    if (close_out(f, frc, "summary.json"))
        return -1;

    report_run rr[MAX_RUNS];
    for (int i = 0; i < o->nruns; i++)
        rr[i] = (report_run){o->runs[i].name, &o->runs[i].cfg,
                             &o->runs[i].sum};
    report_input in = {
        .dir = stage, .workload = o->workload, .command = command,
        .runs = rr, .nruns = (size_t)o->nruns, .sweep_ia = o->sweep,
        .nsweep = (size_t)o->nsweep, .sweep = swept, .plots = o->plots,
    };
    char err[1024];
    if (report_write(&in, err, sizeof err)) {
        cli_error("sim", "%s", err);
        return -1;
    }
    if (commit_dir(stage, o->out))
        return -1;
    if (!o->quiet)
        print_headline(o->runs, o->nruns, o->out);
    return 0;
}

int cmd_sim(int argc, char **argv)
{
    /* Approximate queries are their own command (cmd_aqpsim.c); they
     * have a --sweep of their own, so they are looked for first. */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--aqp", 5))
            return cmd_sim_aqp(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--deadlines"))
            return cmd_sim_deadlines(argc, argv);
    /* Sweeps of configurations are their own replay (cmd_sim_sweep.c). */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--sweep") || !strncmp(argv[i], "--sweep=", 8))
            return cmd_sim_sweep(argc, argv);
    /* Jobs of short tasks are their own simulator (cmd_sim_tasks.c). */
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--tasks", 7))
            return cmd_sim_tasks(argc, argv);
    sim_opts *o = malloc(sizeof *o);
    if (!o) {
        cli_error("sim", "out of memory");
        return EXIT_RUNTIME;
    }
    int prc = sim_parse(argc, argv, o);
    if (prc) {
        free(o);
        return prc > 0 ? 0 : EXIT_USAGE;
    }

    char err[1024];
    wl_workload wl;
    if (wl_read_path(o->workload, &wl, err, sizeof err)) {
        cli_error("sim", "%s", err);
        free(o);
        return EXIT_USAGE;
    }
    if (o->nsweep && !(sim_mean_interarrival(&wl) > 0)) {
        cli_error("sim", "--sweep-interarrival needs a workload with at "
                  "least two different arrival times");
        wl_free(&wl);
        free(o);
        return EXIT_USAGE;
    }

    /* Refused before anything is written: every run, and every rescaled
     * run of the sweep, must end in bounded time (sim_config_check). */
    double mean_ia = o->nsweep ? sim_mean_interarrival(&wl) : 0;
    for (int s = -1; s < o->nsweep; s++)
        for (int i = 0; i < o->nruns; i++) {
            sim_config cfg = o->runs[i].cfg;
            if (s >= 0)
                cfg.arrival_scale = o->sweep[s] / mean_ia;
            if (sim_config_check(&cfg, &wl, err, sizeof err)) {
                cli_error("sim", "%s: %s", o->workload, err);
                wl_free(&wl);
                free(o);
                return EXIT_USAGE;
            }
        }

    int rc = EXIT_RUNTIME;
    char stage[PATH_MAX] = "";
    sim_summary *swept = calloc((size_t)(o->nsweep * o->nruns) + 1,
                                sizeof *swept);
    if (!swept || sibling_dir(stage, sizeof stage, o->out, "tmp") != 0) {
        cli_error("sim", "%s: cannot create a staging directory: %s", o->out,
                  strerror(errno));
        stage[0] = '\0';
        goto out;
    }
    if (sim_compute(o, &wl, stage, swept))
        goto out;
    char command[4096];
    join_argv(argc, argv, command, sizeof command);
    if (sim_print(o, stage, swept, command))
        goto out;
    stage[0] = '\0';   /* moved into place */
    rc = 0;
out:
    if (stage[0])
        rm_tree(stage);
    free(swept);
    wl_free(&wl);
    free(o);
    return rc;
}
