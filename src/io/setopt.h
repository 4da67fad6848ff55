/*
 * setopt.h — the core's settings table (slaq/settings.h) as command-line
 * options and --help text, shared by slaqd and the slaq command.
 *
 * A front end puts its own options first in its getopt_long array, then
 * setopt_options() (or setopt_build(), which does the whole array)
 * appends one option per table row, each taking a value and coded
 * SETOPT_BASE + its row; its option loop hands every code to
 * setopt_apply(), which sets the row's field of the front end's
 * slaq_sched_config. setopt_help() prints the rows' --help lines, with the
 * defaults the front end starts from. So a setting added to the table is
 * at once an option of every front end, with the same range and message.
 */
#ifndef SLAQ_IO_SETOPT_H
#define SLAQ_IO_SETOPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "slaq/settings.h"

/* getopt_long codes of the table's rows: SETOPT_BASE + row. */
#define SETOPT_BASE 0x2000
/* Rows an option array must leave room for (checked in setopt.c). */
#define SETOPT_MAX 32

/*
 * Writes one long option per table row into out (at most SETOPT_MAX
 * entries), except the rows named in `skip` (a NULL-terminated list, or
 * NULL): those a front end handles itself. Returns the count written;
 * the caller terminates the array.
 */
size_t setopt_options(struct option *out, const char *const *skip);

/*
 * The whole getopt_long array of a front end: its own nown options, then
 * setopt_options(skip), then the terminating entry, into out, which has
 * room for nown + SETOPT_MAX + 1 entries. Returns the count before the
 * terminator.
 */
size_t setopt_build(struct option *out, const struct option *own,
                    size_t nown, const char *const *skip);

/* The getopt code of the row `name` (for a front end's aliases), or -1. */
int setopt_code(const char *name);

/* The row of a getopt code, or NULL if the code is not a setting's. */
const slaq_setting *setopt_row(int code);

/*
 * Applies option `code` with its value to cfg. Returns 1 when the code is
 * not a setting's (cfg unchanged), 0 when set, -1 when the value is
 * refused: err (errlen bytes) then holds slaq_sched_config_set()'s
 * message, which starts with the setting's name.
 */
int setopt_apply(slaq_sched_config *cfg, int code, const char *value,
                 char *err, size_t errlen);

/*
 * Lends cfg MLF-RL's network (cfg->rl = m), which mlfs-rl and mlfs need
 * (slaq_policy_needs_model): the model file `path`, or with path NULL
 * the committed one (rlm_default_path) when it exists. m must outlive
 * the scheduler made from cfg. Returns 0, or -1 with a message in err: a
 * file that cannot be read or is malformed (with its file and line), or
 * a policy that needs a network when path is NULL and the default does
 * not exist.
 */
struct slaq_rl_model;
int setopt_model(slaq_sched_config *cfg, const char *path,
                 struct slaq_rl_model *m, char *err, size_t errlen);

/*
 * Prints a --help line (wrapped to 79 columns, the text from column
 * `col`) for every row not in `skip`: "--NAME ARG", the row's help, what
 * it takes and its default in `dflt` (the configuration the front end
 * starts from), or the text dflt_text(name) returns instead when it is
 * given and returns non-NULL.
 */
void setopt_help(FILE *f, int col, const slaq_sched_config *dflt,
                 const char *const *skip,
                 const char *(*dflt_text)(const char *name));

#endif
