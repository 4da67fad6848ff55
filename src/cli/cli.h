/*
 * cli.h — what the slaq command's subcommands share.
 *
 * Each subcommand is one file in src/cli/ (or its component's directory)
 * with an entry point `int cmd_<name>(int argc, char **argv)`, argv[0]
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
int cmd_bench(int argc, char **argv);
int cmd_sim(int argc, char **argv);      /* src/sim/cmd_sim.c */
int cmd_workload(int argc, char **argv); /* src/sim/cmd_workload.c */

/* Prints "slaq NAME: " and the formatted message to stderr. */
void cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a comma-separated list of positive integers into out (at most
 * max); returns the count, or -1 on a malformed list. */
int cli_parse_int_list(const char *s, int *out, int max);

#endif
