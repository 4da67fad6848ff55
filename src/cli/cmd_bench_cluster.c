/*
 * cmd_bench_cluster.c — `slaq bench cluster`: the scheduling core at
 * cluster scale, driven by the simulator.
 *
 * Replays a workload through sim_run() on N nodes of C cores, exactly as
 * `slaq sim --nodes N --cores-per-node C` does, and reports the wall time
 * of the whole run and the median, 99th percentile and maximum of the
 * epochs (slaq_sched_epoch calls), both in wall time and in the CPU time
 * of the thread: on a shared machine the wall time includes waiting for a
 * core, the CPU time is what the epoch itself costs.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "io/stats.h"
#include "sim/sim.h"

/* The settings table's rows this command sets itself: the run's policy
 * (as slaq sim's --policy) and the cores (--nodes x --cores-per-node). */
static const char *const bench_own[] = {"policy", "cores", NULL};

static void usage(FILE *f)
{
    fputs("usage: slaq bench cluster --workload FILE --nodes N "
          "--cores-per-node C\n"
          "                          [--policy P] [SETTINGS] [--json]\n\n"
          "Replays the workload in the simulator on N nodes of C cores (as "
          "slaq sim\n--nodes does) and prints the run's wall time and the "
          "median, 99th\npercentile and maximum of its scheduling epochs, "
          "in wall and CPU\nmilliseconds. `make bench-cluster` runs it at "
          "1,000 nodes x 64 cores\nwith 50,000 jobs (docs/cluster.md).\n\n"
          "  --workload FILE   jobs to replay (slaq workload gen)\n"
          "  --nodes N         nodes                --cores-per-node C  "
          "their cores\n"
          "  --policy P        slaq (default), fair, slaq-maxmin, relaqs, "
          "oracle-greedy\n"
          "  --json            print one JSON object\n\n"
          "Scheduler settings (docs/libslaq.md; the same as slaq sim's):\n",
          f);
    sim_config dflt;
    sim_config_init(&dflt);
    setopt_help(f, 20, &dflt.sched, bench_own, NULL);
}

typedef struct pct {
    double med, p99, max;
} pct;

/* Median, 99th percentile (nearest rank) and maximum of v (sorted). */
static pct percentiles(double *v, size_t n)
{
    pct p = {0, 0, 0};
    if (!n)
        return p;
    qsort(v, n, sizeof *v, stats_cmp_double);
    p.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    size_t r = (size_t)(0.99 * (double)n + 0.999999);
    p.p99 = v[(r ? r : 1) - 1];
    p.max = v[n - 1];
    return p;
}

static void bench_progress(void *arg, double done, double total)
{
    double *last = arg;
    double now = stats_now_ms();
    if (now - *last < 5000)
        return;
    *last = now;
    fprintf(stderr, "bench cluster: %.0f%% of the iterations\n",
            total > 0 ? 100 * done / total : 100);
}

/* The options of slaq bench cluster that are not scheduler settings. */
typedef struct bench_args {
    const char *workload, *policy;
    double nodes, per_node;
    int json;
} bench_args;

/* Reads argv into a and cfg's settings, checks them and sets cfg's
 * policy, nodes and cores. Returns 0 to go on, -1 once --help is printed,
 * or EXIT_USAGE once the error is printed. */
static int bench_parse(int argc, char **argv, bench_args *a, sim_config *cfg)
{
    static const struct option own[] = {
        {"workload", required_argument, 0, 'w'},
        {"nodes", required_argument, 0, 'n'},
        {"cores-per-node", required_argument, 0, 'c'},
        {"policy", required_argument, 0, 'p'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
    };
    enum { NOWN = sizeof own / sizeof *own };
    struct option opts[NOWN + SETOPT_MAX + 1];
    setopt_build(opts, own, NOWN, bench_own);
    *a = (bench_args){.policy = "slaq"};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int set = cli_setting("bench", &cfg->sched, c, optarg);
        if (set < 0)
            return EXIT_USAGE;
        if (set == 0)
            continue;
        switch (c) {
        case 'w': a->workload = optarg; break;
        case 'p': a->policy = optarg; break;
        case 'j': a->json = 1; break;
        case 'n':
            if (cli_parse_positive("bench", "--nodes", optarg, &a->nodes))
                return EXIT_USAGE;
            break;
        case 'c':
            if (cli_parse_positive("bench", "--cores-per-node", optarg,
                                   &a->per_node))
                return EXIT_USAGE;
            break;
        case 'h': usage(stdout); return -1;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc || !a->workload || !(a->nodes > 0) ||
        !(a->per_node > 0) || a->nodes != (double)(size_t)a->nodes) {
        cli_error("bench", optind < argc ? "unexpected argument '%s'"
                  : "--workload, --nodes (a whole number) and "
                  "--cores-per-node are required%s",
                  optind < argc ? argv[optind] : "");
        usage(stderr);
        return EXIT_USAGE;
    }
    if (sim_parse_run(a->policy, cfg->sched.predictor, cfg)) {
        cli_error("bench", "--policy: expected slaq, fair, slaq-maxmin or "
                  "oracle-greedy, got '%s'", a->policy);
        return EXIT_USAGE;
    }
    cfg->nodes = (size_t)a->nodes;
    cfg->sched.cores = a->nodes * a->per_node;
    return 0;
}

/* The run's figures: its times and what its epochs cost. */
typedef struct bench_stats {
    double wall_s, cpu_s;          /* the whole run */
    pct wall, cpu, refit, alloc;   /* an epoch's milliseconds */
    pct fits;                      /* refits an epoch */
    size_t most, backlog_max, deferred;
    double sum_cpu, nfits;         /* epochs' CPU ms, refits in all */
} bench_stats;

/* Sums up r's epochs into *s (but the run's times). Returns 0, or -1 out
 * of memory. */
static int bench_epochs(const sim_result *r, bench_stats *s)
{
    double *w = malloc((r->nepochs + 1) * sizeof *w);
    double *u = malloc((r->nepochs + 1) * sizeof *u);
    double *fv = malloc((r->nepochs + 1) * sizeof *fv);
    double *av = malloc((r->nepochs + 1) * sizeof *av);
    double *nf = malloc((r->nepochs + 1) * sizeof *nf);
    int rc = -1;
    if (!w || !u || !fv || !av || !nf)
        goto out;
    s->most = s->backlog_max = s->deferred = 0;
    s->sum_cpu = s->nfits = 0;
    for (size_t i = 0; i < r->nepochs; i++) {
        w[i] = r->epochs[i].ms;
        u[i] = r->epochs[i].cpu_ms;
        fv[i] = r->epochs[i].fit_cpu_ms;
        av[i] = r->epochs[i].cpu_ms - r->epochs[i].fit_cpu_ms;
        nf[i] = (double)r->epochs[i].fits;
        s->nfits += nf[i];
        s->sum_cpu += u[i];
        if (r->epochs[i].backlog > s->backlog_max)
            s->backlog_max = r->epochs[i].backlog;
        if (r->epochs[i].backlog)
            s->deferred++;
        if (r->epochs[i].jobs > s->most)
            s->most = r->epochs[i].jobs;
    }
    s->wall = percentiles(w, r->nepochs);
    s->cpu = percentiles(u, r->nepochs);
    s->refit = percentiles(fv, r->nepochs);
    s->alloc = percentiles(av, r->nepochs);
    s->fits = percentiles(nf, r->nepochs);
    rc = 0;
out:
    free(w);
    free(u);
    free(fv);
    free(av);
    free(nf);
    return rc;
}

/* Prints the figures as one JSON object (--json). */
static void bench_print_json(const bench_args *a, const sim_config *cfg,
                             size_t jobs, size_t nepochs,
                             const bench_stats *s)
{
    printf("{\"jobs\": %zu, \"nodes\": %zu, \"cores_per_node\": %g, "
           "\"placement\": \"%s\", \"policy\": \"%s\", \"epochs\": %zu, "
           "\"most_jobs_at_once\": %zu, \"wall_s\": %.3f, \"cpu_s\": %.3f, "
           "\"epochs_cpu_s\": %.3f, "
           "\"epoch_wall_ms\": {\"median\": %.3f, \"p99\": %.3f, "
           "\"max\": %.3f}, \"epoch_cpu_ms\": {\"median\": %.3f, "
           "\"p99\": %.3f, \"max\": %.3f}, \"refit_cpu_ms\": "
           "{\"median\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
           "\"allocate_cpu_ms\": {\"median\": %.3f, \"p99\": %.3f, "
           "\"max\": %.3f}, \"max_fits\": %zu, \"fits\": %.0f, "
           "\"fits_per_epoch\": {\"median\": %.1f, \"p99\": %.0f, "
           "\"max\": %.0f}, \"epochs_with_backlog\": %zu, "
           "\"backlog_max\": %zu}\n",
           jobs, cfg->nodes, a->per_node,
           slaq_placement_name(cfg->sched.placement), a->policy, nepochs,
           s->most, s->wall_s, s->cpu_s, s->sum_cpu / 1e3, s->wall.med,
           s->wall.p99, s->wall.max, s->cpu.med, s->cpu.p99, s->cpu.max,
           s->refit.med, s->refit.p99, s->refit.max, s->alloc.med,
           s->alloc.p99, s->alloc.max, cfg->sched.max_fits, s->nfits,
           s->fits.med, s->fits.p99, s->fits.max, s->deferred,
           s->backlog_max);
}

/* Prints the figures as a table, with the epoch target met or not. */
static void bench_print_text(const bench_args *a, const sim_config *cfg,
                             size_t jobs, size_t nepochs,
                             const bench_stats *s)
{
    printf("bench cluster: %zu jobs on %zu nodes x %g cores (%s, %s "
           "placement)\n", jobs, cfg->nodes, a->per_node, a->policy,
           slaq_placement_name(cfg->sched.placement));
    printf("run: %.1f s wall, %.1f s CPU (%.1f s of it in %zu epochs); "
           "at most %zu jobs at once\n", s->wall_s, s->cpu_s,
           s->sum_cpu / 1e3, nepochs, s->most);
    printf("epoch ms     median       p99       max\n");
    printf("wall     %10.3f %9.3f %9.3f\n", s->wall.med, s->wall.p99,
           s->wall.max);
    printf("cpu      %10.3f %9.3f %9.3f\n", s->cpu.med, s->cpu.p99,
           s->cpu.max);
    printf("  refit  %10.3f %9.3f %9.3f\n", s->refit.med, s->refit.p99,
           s->refit.max);
    printf("  alloc  %10.3f %9.3f %9.3f\n", s->alloc.med, s->alloc.p99,
           s->alloc.max);
    printf("refits   %10.1f %9.0f %9.0f   (%.0f in all; at most %zu "
           "an epoch%s)\n", s->fits.med, s->fits.p99, s->fits.max, s->nfits,
           cfg->sched.max_fits, cfg->sched.max_fits ? "" : ": no bound");
    printf("refits left for the next epoch: in %zu of %zu epochs, at "
           "most %zu jobs\n", s->deferred, nepochs, s->backlog_max);
    printf("epoch CPU p99: %.1f ms (target <= 50 ms single-threaded: "
           "%s)\n", s->cpu.p99, s->cpu.p99 <= 50 ? "met" : "NOT met");
}

int bench_cluster(int argc, char **argv)
{
    bench_args a;
    sim_config cfg;
    sim_config_init(&cfg);
    int rc = bench_parse(argc, argv, &a, &cfg);
    if (rc)
        return rc < 0 ? 0 : rc;
    double last = stats_now_ms();
    if (!a.json) {
        cfg.progress = bench_progress;
        cfg.progress_arg = &last;
    }

    char err[1024];
    wl_workload wl;
    if (wl_read_path(a.workload, &wl, err, sizeof err)) {
        cli_error("bench", "%s", err);
        return EXIT_USAGE;
    }
    sim_result r;
    bench_stats s;
    double t0 = stats_now_ms(), c0 = stats_cpu_ms();
    rc = sim_run(&wl, &cfg, &r, err, sizeof err);
    s.wall_s = (stats_now_ms() - t0) / 1e3;
    s.cpu_s = (stats_cpu_ms() - c0) / 1e3;
    if (rc) {
        cli_error("bench", "%s", err);
        wl_free(&wl);
        return EXIT_RUNTIME;
    }
    if (bench_epochs(&r, &s) < 0) {
        cli_error("bench", "out of memory");
        sim_result_free(&r);
        wl_free(&wl);
        return EXIT_RUNTIME;
    }
    if (a.json)
        bench_print_json(&a, &cfg, wl.n, r.nepochs, &s);
    else
        bench_print_text(&a, &cfg, wl.n, r.nepochs, &s);
    sim_result_free(&r);
    wl_free(&wl);
    return 0;
}
