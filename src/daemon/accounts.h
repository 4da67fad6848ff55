/*
 * accounts.h — shares between users in slaqd (accounts.c).
 *
 * The tree of accounts and users that libslaq divides the cores by
 * (slaq/shares.h, slaq_sched_set_shares): each job's owner is a user of
 * it, added under the root the first time it submits; an administrator
 * places users in accounts and sets weights and caps with --accounts FILE
 * and `slaq account`. The tree and every user's decayed usage live in
 * state.db's shares table, so a restart keeps both (docs/slaqd.md,
 * "Shares between users").
 */
#ifndef SLAQ_DAEMON_ACCOUNTS_H
#define SLAQ_DAEMON_ACCOUNTS_H

#include <jansson.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

/* How often the usage is written to state.db (and at exit). */
#define ACCT_SAVE_S 30.0

/* One change to the tree: what `slaq account add|set` and a line of the
 * accounts file ask. */
typedef struct acct_edit {
    const char *name;
    int user;            /* add: a user (1) or an account (0) */
    const char *account; /* the account it goes under: NULL unchanged (add:
                            the root), "" or "root" the root */
    double weight;       /* > 0; NAN: unchanged (add: 1) */
    double max_cores;    /* > 0, INFINITY: no cap; NAN: unchanged */
    long long max_jobs;  /* >= 0, 0: no cap; -1: unchanged */
} acct_edit;

/* An edit that changes nothing yet, for `name`. */
void acct_edit_init(acct_edit *e, const char *name);

/*
 * Builds the tree from state.db's shares table (each user's usage decayed
 * over the time slaqd was down), applies the --accounts file on top, and
 * hands it to the scheduler when fair-share is on. Before the jobs are
 * restored. 0, or -1 with err set (the file's errors name its line).
 */
int acct_open(sd_daemon *d, char *err, size_t errlen);
/* Writes the usage and frees the tree (the scheduler let go of it). */
void acct_close(sd_daemon *d);

/* Job j's tenant for slaq_job_opts.tenant: its owner's user id in the
 * tree, added under the root (and written) if new; -1 with fair-share
 * off. */
int acct_tenant(sd_daemon *d, const sd_job *j);
/* The name j's owner has in the tree (its passwd name, or "uid-N" when
 * that is not a name the tree takes) into buf. */
const char *acct_user_name(const sd_job *j, char *buf, size_t len);

/*
 * Applies an edit (add: a new account or user; else a change to one),
 * rebuilding the tree when an entry moves, re-pointing every job at it,
 * and writes it. 0, or -1 with err saying what is wrong (nothing
 * changed).
 */
int acct_apply(sd_daemon *d, const acct_edit *e, int add, char *err,
               size_t errlen);

/* After each epoch: writes the usage every ACCT_SAVE_S seconds. */
void acct_epoch(sd_daemon *d);

/* `slaq share`'s reply fields: fair_share, half_life_s and every entry
 * (name, kind, account, weight, share, factor, usage, part, cores, jobs,
 * running, max_cores, max_jobs), the root first, children after their
 * account. */
json_t *acct_json(const sd_daemon *d);
/* The user's entry summary of j's owner for job listings: {"user",
 * "account", "share", "part", "cores"} or NULL (fair-share off). */
json_t *acct_job_json(const sd_daemon *d, const sd_job *j);

#endif
