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

int bench_cluster(int argc, char **argv)
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
    const char *workload = NULL, *policy = "slaq";
    double nodes = 0, per_node = 0;
    int json = 0, c;
    sim_config cfg;
    sim_config_init(&cfg);
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int set = cli_setting("bench", &cfg.sched, c, optarg);
        if (set < 0)
            return EXIT_USAGE;
        if (set == 0)
            continue;
        switch (c) {
        case 'w': workload = optarg; break;
        case 'p': policy = optarg; break;
        case 'j': json = 1; break;
        case 'n':
            if (cli_parse_positive("bench", "--nodes", optarg, &nodes))
                return EXIT_USAGE;
            break;
        case 'c':
            if (cli_parse_positive("bench", "--cores-per-node", optarg,
                                   &per_node))
                return EXIT_USAGE;
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc || !workload || !(nodes > 0) || !(per_node > 0) ||
        nodes != (double)(size_t)nodes) {
        cli_error("bench", optind < argc ? "unexpected argument '%s'"
                  : "--workload, --nodes (a whole number) and "
                  "--cores-per-node are required%s",
                  optind < argc ? argv[optind] : "");
        usage(stderr);
        return EXIT_USAGE;
    }
    if (sim_parse_run(policy, cfg.sched.predictor, &cfg)) {
        cli_error("bench", "--policy: expected slaq, fair, slaq-maxmin or "
                  "oracle-greedy, got '%s'", policy);
        return EXIT_USAGE;
    }
    cfg.nodes = (size_t)nodes;
    cfg.sched.cores = nodes * per_node;
    double last = stats_now_ms();
    if (!json) {
        cfg.progress = bench_progress;
        cfg.progress_arg = &last;
    }

    char err[1024];
    wl_workload wl;
    if (wl_read_path(workload, &wl, err, sizeof err)) {
        cli_error("bench", "%s", err);
        return EXIT_USAGE;
    }
    sim_result r;
    double t0 = stats_now_ms(), c0 = stats_cpu_ms();
    int rc = sim_run(&wl, &cfg, &r, err, sizeof err);
    double wall_s = (stats_now_ms() - t0) / 1e3;
    double cpu_s = (stats_cpu_ms() - c0) / 1e3;
    if (rc) {
        cli_error("bench", "%s", err);
        wl_free(&wl);
        return EXIT_RUNTIME;
    }
    double *w = malloc((r.nepochs + 1) * sizeof *w);
    double *u = malloc((r.nepochs + 1) * sizeof *u);
    double *fv = malloc((r.nepochs + 1) * sizeof *fv);
    double *av = malloc((r.nepochs + 1) * sizeof *av);
    double *nf = malloc((r.nepochs + 1) * sizeof *nf);
    if (!w || !u || !fv || !av || !nf) {
        free(nf);
        free(fv);
        free(av);
        cli_error("bench", "out of memory");
        free(w);
        free(u);
        sim_result_free(&r);
        wl_free(&wl);
        return EXIT_RUNTIME;
    }
    size_t most = 0, backlog_max = 0, deferred = 0;
    double sum_cpu = 0, fits = 0;
    for (size_t i = 0; i < r.nepochs; i++) {
        w[i] = r.epochs[i].ms;
        u[i] = r.epochs[i].cpu_ms;
        fv[i] = r.epochs[i].fit_cpu_ms;
        av[i] = r.epochs[i].cpu_ms - r.epochs[i].fit_cpu_ms;
        nf[i] = (double)r.epochs[i].fits;
        fits += nf[i];
        sum_cpu += u[i];
        if (r.epochs[i].backlog > backlog_max)
            backlog_max = r.epochs[i].backlog;
        if (r.epochs[i].backlog)
            deferred++;
        if (r.epochs[i].jobs > most)
            most = r.epochs[i].jobs;
    }
    pct pw = percentiles(w, r.nepochs), pu = percentiles(u, r.nepochs);
    pct pf = percentiles(fv, r.nepochs), pa = percentiles(av, r.nepochs);
    pct pn = percentiles(nf, r.nepochs);
    if (json) {
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
               wl.n, cfg.nodes, per_node,
               slaq_placement_name(cfg.sched.placement), policy, r.nepochs, most, wall_s, cpu_s, sum_cpu / 1e3, pw.med,
               pw.p99, pw.max, pu.med, pu.p99, pu.max, pf.med, pf.p99,
               pf.max, pa.med, pa.p99, pa.max, cfg.sched.max_fits, fits,
               pn.med, pn.p99, pn.max, deferred, backlog_max);
    } else {
        printf("bench cluster: %zu jobs on %zu nodes x %g cores (%s, %s "
               "placement)\n", wl.n, cfg.nodes, per_node, policy,
               slaq_placement_name(cfg.sched.placement));
        printf("run: %.1f s wall, %.1f s CPU (%.1f s of it in %zu epochs); "
               "at most %zu jobs at once\n", wall_s, cpu_s, sum_cpu / 1e3,
               r.nepochs, most);
        printf("epoch ms     median       p99       max\n");
        printf("wall     %10.3f %9.3f %9.3f\n", pw.med, pw.p99, pw.max);
        printf("cpu      %10.3f %9.3f %9.3f\n", pu.med, pu.p99, pu.max);
        printf("  refit  %10.3f %9.3f %9.3f\n", pf.med, pf.p99, pf.max);
        printf("  alloc  %10.3f %9.3f %9.3f\n", pa.med, pa.p99, pa.max);
        printf("refits   %10.1f %9.0f %9.0f   (%.0f in all; at most %zu "
               "an epoch%s)\n", pn.med, pn.p99, pn.max, fits,
               cfg.sched.max_fits, cfg.sched.max_fits ? "" : ": no bound");
        printf("refits left for the next epoch: in %zu of %zu epochs, at "
               "most %zu jobs\n", deferred, r.nepochs, backlog_max);
        printf("epoch CPU p99: %.1f ms (target <= 50 ms single-threaded: "
               "%s)\n", pu.p99, pu.p99 <= 50 ? "met" : "NOT met");
    }
    free(w);
    free(u);
    free(fv);
    free(av);
    free(nf);
    sim_result_free(&r);
    wl_free(&wl);
    return 0;
}
