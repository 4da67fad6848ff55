/*
 * cli.h — what the slaq command's subcommands share.
 *
 * Each subcommand is one file in src/cli/ with an entry point `int cmd_<name>(int argc, char **argv)`, argv[0]
 * being the subcommand's name. Exit statuses are the same everywhere:
 * 0 success, 1 a failure while running, 2 bad usage or bad input.
 */
#ifndef SLAQ_CLI_H
#define SLAQ_CLI_H

#include <stdio.h>

enum { EXIT_RUNTIME = 1, EXIT_USAGE = 2 };

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cmd_predict_eval(int argc, char **argv);
int cmd_prior(int argc, char **argv);            /* prior.c */
int cmd_predict_eval_aqp(int argc, char **argv); /* predict_eval_aqp.c */
int cmd_progress_eval(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int bench_cluster(int argc, char **argv); /* cmd_bench_cluster.c */
int cmd_sim(int argc, char **argv);      /* cmd_sim.c */
/* `slaq sim --sweep ...` (cmd_sim_sweep.c; cmd_sim hands it over). */
int cmd_sim_sweep(int argc, char **argv);
/* `slaq sim --tasks FILE | --tasks-workload NAME ...` (cmd_sim_tasks.c;
 * cmd_sim hands it over). */
int cmd_sim_tasks(int argc, char **argv);
int cmd_replay(int argc, char **argv);   /* src/cli/replay.c */
int cmd_report(int argc, char **argv);   /* cmd_report.c */
int cmd_sim_aqp(int argc, char **argv);  /* cmd_aqpsim.c */
int cmd_sim_deadlines(int argc, char **argv); /* cmd_sim_deadlines.c */
int cmd_workload(int argc, char **argv); /* cmd_workload.c */
int cmd_submit(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_suspend(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_move(int argc, char **argv);     /* src/cli/move.c */
int cmd_sweep(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_share(int argc, char **argv);
int cmd_account(int argc, char **argv);
/* The users with jobs and their shares (USER ACCOUNT SHARE PART CORES
 * JOBS), after slaq ls's and slaq top's tables; nothing with fair-share
 * off (cmd_share.c). */
struct rpc_opts;
void share_print_users(const struct rpc_opts *ro);
int cmd_status(int argc, char **argv);
int cmd_token(int argc, char **argv);   /* src/cli/token.c */
int cmd_nodes(int argc, char **argv);   /* src/cli/nodes.c */
int cmd_queue(int argc, char **argv);   /* src/cli/cmd_queue.c */
int cmd_cluster(int argc, char **argv); /* src/cli/cluster.c */
/* contrib/slurm/slaq-cluster.sbatch, NUL-ended (generated at build) */
extern const char slaq_cluster_sbatch[];

/* Prints "slaq NAME: " and the formatted message to stderr. */
void cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses option `opt`'s value s as a positive finite number into *out;
 * on failure prints "slaq CMD: OPT: expected a positive number, got 'S'"
 * and returns -1. */
int cli_parse_positive(const char *cmd, const char *opt, const char *s,
                       double *out);

/* The same for a number >= 0 ("expected a number >= 0"). */
int cli_parse_nonneg(const char *cmd, const char *opt, const char *s,
                     double *out);

/* A scheduler setting's option (io/setopt.h) for a slaq subcommand:
 * applies option `code` with its value to cfg. Returns 1 when the code is
 * not a setting's, 0 when set, -1 after printing "slaq CMD: --NAME: ..."
 * (the core's message) when the value is refused. */
struct slaq_sched_config;
int cli_setting(const char *cmd, struct slaq_sched_config *cfg, int code,
                const char *value);

/* Parses a comma-separated list of positive finite numbers into out (at
 * most max); returns the count, or -1 on a malformed list. */
int cli_parse_list(const char *s, double *out, int max);

#endif
