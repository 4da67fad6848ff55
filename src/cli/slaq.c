/*
 * slaq.c — the slaq command: dispatch to one subcommand per file.
 */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "io/setopt.h"
#include "slaq/version.h"

static const cli_command commands[] = {
    {"predict-eval", cmd_predict_eval,
     "measure loss-prediction error on recorded curves"},
    {"prior", cmd_prior,
     "the class priors for jobs whose loss has not moved (--curves)"},
    {"progress-eval", cmd_progress_eval,
     "check the loss reduction slaq shows against recorded curves"},
    {"bench", cmd_bench, "benchmark the scheduling core (bench sched, bench cluster)"},
    {"sim", cmd_sim, "replay a workload under scheduling policies"},
    {"workload", cmd_workload, "generate workloads (workload gen)"},
    {"replay", cmd_replay,
     "run a recorded slaqd run again through the core, check allocations"},
    {"report", cmd_report,
     "a run's metrics from slaqd's state.db or job logs (t90, JCT)"},
    {"submit", cmd_submit, "start a job under slaqd; prints its id"},
    {"ls", cmd_ls, "list slaqd's jobs"},
    {"show", cmd_show, "one job: history, allocations, prediction"},
    {"history", cmd_history, "every report of a job (--csv, --json)"},
    {"cancel", cmd_cancel, "ask a job to stop, then end it"},
    {"suspend", cmd_suspend, "pause a job (SIGSTOP, or --checkpoint)"},
    {"resume", cmd_resume, "continue a suspended job"},
    {"move", cmd_move, "move a running job to another node (cluster)"},
    {"sweep", cmd_sweep, "hyperparameter sweeps (sweep SPEC.json, ls, show)"},
    {"logs", cmd_logs, "a job's output (-f to follow)"},
    {"top", cmd_top, "live view of jobs, losses and cores"},
    {"policy", cmd_policy, "show or change slaqd's policy"},
    {"share", cmd_share, "how the cores are divided between users"},
    {"account", cmd_account, "accounts and users: weights, caps (add, set, ls)"},
    {"status", cmd_status, "is slaqd running, and its counters"},
    {"token", cmd_token, "your credential for slaqd over TCP (--host)"},
    {"nodes", cmd_nodes, "the nodes of a slaqd controller (cluster)"},
    {"queue", cmd_queue, "each node's queue of tasks (task arrays)"},
    {"cluster", cmd_cluster, "a slaq cluster in a Slurm allocation (up, down, node-key)"},
};

#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq COMMAND [OPTIONS]\n\n"
               "slaq schedules iterative ML training jobs by predicted loss "
               "reduction.\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'slaq COMMAND --help' for a command's options, "
               "'slaq --version' for the\nversion. Manual: man slaq "
               "(docs/ in the source tree).\n");
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "slaq %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Parses s as a finite number > min (or >= min with or_equal). */
static int parse_bounded(const char *cmd, const char *opt, const char *s,
                         double min, int or_equal, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < min ||
        (!or_equal && v == min)) {
        cli_error(cmd, "%s: expected a %s, got '%s'", opt,
                  or_equal ? "number >= 0" : "positive number", s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_positive(const char *cmd, const char *opt, const char *s,
                       double *out)
{
    return parse_bounded(cmd, opt, s, 0, 0, out);
}

int cli_setting(const char *cmd, slaq_sched_config *cfg, int code,
                const char *value)
{
    char err[512];
    int set = setopt_apply(cfg, code, value, err, sizeof err);
    if (set < 0)
        cli_error(cmd, "--%s", err);
    return set;
}

int cli_parse_nonneg(const char *cmd, const char *opt, const char *s,
                     double *out)
{
    return parse_bounded(cmd, opt, s, 0, 1, out);
}

int cli_parse_list(const char *s, double *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || !(v > 0) || !isfinite(v) || n == max)
            return -1;
        out[n++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return n > 0 ? n : -1;
}

int main(int argc, char **argv)
{
    /* GSL's default error handler aborts; libslaq leaves the process-wide
     * handler to the program (see slaq.h), and slaq reports errors itself. */
    gsl_set_error_handler_off();
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
        !strcmp(argv[1], "version")) {
        printf("slaq %s\n", SLAQ_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "slaq: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
