/*
 * shares.h — shares between users: a tree of accounts and users, and the
 * division of each node's cores between them.
 *
 * A lab says who owns how much of a cluster: accounts (groups, projects)
 * in a tree under one root, users at its leaves, each with a weight. The
 * cores of a node are divided from the root down: each level's part goes
 * to the children that have jobs there, by weighted water-filling (none
 * above what its jobs can use or its cap, the rest re-divided among the
 * others), so what an idle account or user does not use goes to the
 * others, and comes back at the next division when it submits. Each
 * user's part is then divided among its own jobs by the scheduler's
 * policy (slaq_sched_set_shares).
 *
 * Past use counts as Slurm's fair-share factor counts it: every
 * account's and user's usage is the core-seconds its jobs held, decayed
 * with a half-life; among siblings, a child's weight is multiplied by
 * 2^(−u/s), s its normalised share (weight over the siblings' weights)
 * and u its normalised usage (usage over the siblings' usage), so one
 * that used more than its share lately weighs less, by at most 4 when it
 * used everything on a half share, and one that used nothing weighs its
 * full weight. A half-life of 0 ignores usage: the weights alone divide.
 *
 * Caps: an account or user may be held to at most max_cores cores over
 * the whole cluster and max_jobs running jobs (its oldest first; the
 * rest wait at no cores). Over several nodes a cap on cores is spread
 * over the nodes in proportion to what its jobs ask on each.
 *
 * Ids: the root is 0; every account or user added gets the next id.
 * Nothing is ever removed (an entry with no jobs takes no cores). Like
 * the rest of libslaq this does no I/O.
 */
#ifndef SLAQ_SHARES_H
#define SLAQ_SHARES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLAQ_SHARES_ROOT 0
#define SLAQ_SHARES_NAME_MAX 64 /* bytes of a name, its NUL included */

typedef struct slaq_share_entry {
    char name[SLAQ_SHARES_NAME_MAX]; /* "root" for id 0 */
    int parent;       /* -1 for the root */
    int user;         /* 1: a user (a leaf), 0: an account */
    double weight;    /* > 0; default 1 */
    double max_cores; /* > 0; INFINITY: no cap */
    unsigned max_jobs;/* 0: no cap */
    /* Kept by the tree and the scheduler: */
    double usage;     /* decayed core-seconds of it and its children */
    double share;     /* normalised share: its weight over its siblings',
                         times its parent's share (the root's 1) */
    double factor;    /* its fair-share factor 2^(−u/s) at the last
                         division (1 when usage is ignored) */
    double part;      /* cores it was given at the last division */
    double cores;     /* cores its jobs held after the last epoch */
    size_t jobs;      /* its jobs (and its children's) at the last epoch */
    size_t running;   /* of them not held back by a cap on jobs */
} slaq_share_entry;

typedef struct slaq_shares slaq_shares;

/* A tree with its root only; half-life 0 (usage ignored). NULL when out
 * of memory. */
slaq_shares *slaq_shares_new(void);
void slaq_shares_free(slaq_shares *t);

/*
 * Adds an account (user 0) or a user (user 1) named `name` under the
 * account `parent`, with the given weight, no caps and no usage. Returns
 * its id (> 0), or SLAQ_EINVAL (negative) for a name empty, too long,
 * with a character outside [A-Za-z0-9._@-], or taken; a parent that is
 * not an account; a weight not finite or <= 0; SLAQ_ENOMEM.
 */
int slaq_shares_add(slaq_shares *t, const char *name, int parent,
                    double weight, int user);
/* 1 if `name` may name an account or user: 1 to SLAQ_SHARES_NAME_MAX − 1
 * characters of [A-Za-z0-9._@-]. */
int slaq_shares_name_ok(const char *name);
/* The id named `name`, or SLAQ_EINVAL (negative) if there is none. */
int slaq_shares_find(const slaq_shares *t, const char *name);
/*
 * The id of user `user` in account `account` (NULL or "": under the
 * root), adding the account under the root and the user (weight 1) when
 * missing: how a driver turns a job's owner into its tenant. SLAQ_EINVAL
 * for a bad name, a user already in another account, or a name that is
 * an account's where a user's is wanted (or the reverse); SLAQ_ENOMEM.
 */
int slaq_shares_place(slaq_shares *t, const char *user, const char *account);
size_t slaq_shares_count(const slaq_shares *t);   /* the root included */
/* The entry of an id, or NULL for one out of range. */
const slaq_share_entry *slaq_shares_at(const slaq_shares *t, int id);

/* SLAQ_EINVAL (nothing changed) for an id out of range or a value out of
 * its range above. The root's weight is fixed (1). */
int slaq_shares_set_weight(slaq_shares *t, int id, double weight);
int slaq_shares_set_caps(slaq_shares *t, int id, double max_cores,
                         unsigned max_jobs);
/* Sets a user's or account's decayed usage, e.g. as read back after a
 * restart; its ancestors' usage is the sum of their children's. */
int slaq_shares_set_usage(slaq_shares *t, int id, double usage);

/* The half-life of usage in seconds (>= 0, finite; 0: usage ignored). */
int slaq_shares_set_half_life(slaq_shares *t, double half_life_s);
double slaq_shares_half_life(const slaq_shares *t);

/*
 * Decays every entry's usage over the `dt` seconds since the last charge
 * (>= 0) and adds `core_s[id]` core-seconds to each user id (core_s has
 * slaq_shares_count() entries; accounts' are ignored), summing them up
 * the tree. SLAQ_EINVAL for a negative or not finite dt or charge
 * (nothing changed).
 */
int slaq_shares_charge(slaq_shares *t, double dt, const double *core_s);

/*
 * Divides the cores of `nnodes` nodes between the users. demand[v·N + u]
 * (N = slaq_shares_count(t)) is what user u's jobs on node v can use
 * (their max cores, summed; 0 for accounts and for users with no jobs
 * there) and capacity[v] node v's cores. part[v·N + u] receives user u's
 * cores on node v: each node's parts sum to min(capacity, what can be
 * used under the caps), none above its demand. Each entry's part,
 * factor and share are set (summed over the nodes). SLAQ_EINVAL for a
 * negative or not finite demand or capacity, SLAQ_ENOMEM.
 */
int slaq_shares_divide(slaq_shares *t, size_t nnodes, const double *capacity,
                       const double *demand, double *part);

/*
 * A guarantee g in [0, 1] below strict shares: after slaq_shares_divide,
 * each user's part on each node becomes g x its part + (1 - g) x ref[v *
 * count + user] (what the policy would give its jobs without shares),
 * its accounts' parts the sums of their children's, and each entry's
 * part (summed over the nodes) is set again. Both divisions sum to a
 * node's cores, so their mix does. SLAQ_EINVAL for g outside [0, 1] or a
 * negative or not finite ref.
 */
int slaq_shares_mix(slaq_shares *t, size_t nnodes, double g,
                    const double *ref, double *part);

/*
 * The scheduler's count of the last epoch: _reset_jobs clears every
 * entry's jobs, running and cores; _add_job adds `jobs` jobs, `running`
 * of them running, holding `cores` cores, to user id and each of its
 * accounts up to the root.
 */
void slaq_shares_reset_jobs(slaq_shares *t);
void slaq_shares_add_job(slaq_shares *t, int id, size_t jobs, size_t running,
                         double cores);
/* 1 if user id and every account above it have room for one more
 * running job under their max_jobs (as counted by _add_job). */
int slaq_shares_room(const slaq_shares *t, int id);

/* Whether `a` is `b` or under it (an account's jobs are its users'). */
int slaq_shares_under(const slaq_shares *t, int a, int b);

#ifdef __cplusplus
}
#endif

#endif
