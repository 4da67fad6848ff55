/*
 * accounts.c — shares between users in slaqd (accounts.h): the tree the
 * scheduler divides by, its file, its rows in state.db.
 *
 * libslaq's tree adds entries and never moves one (a parent's id is below
 * its children's), so an edit that moves an entry, or any edit at all,
 * builds a new tree from the old one's rows with the edit applied, and
 * every job is pointed at its user's new id before the scheduler is given
 * the new tree. Edits are an administrator's, rare; the epoch never
 * builds.
 */
#include "daemon/accounts.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/record.h"
#include "daemon/store.h"
#include "slaq/shares.h"

/* One entry as a row: what a tree is rebuilt from. */
typedef struct acct_row {
    char name[SLAQ_SHARES_NAME_MAX];
    char account[SLAQ_SHARES_NAME_MAX]; /* "": the root */
    int user;
    double weight, max_cores, usage;
    unsigned max_jobs;
    int added;                          /* its id in the tree being built */
} acct_row;

void acct_edit_init(acct_edit *e, const char *name)
{
    *e = (acct_edit){.name = name, .weight = NAN, .max_cores = NAN,
                     .max_jobs = -1};
}

static int is_root(const char *account)
{
    return !account || !*account || !strcmp(account, "root");
}

/* The tree's rows, the root left out: malloc'd, *n of them. */
static acct_row *tree_rows(const slaq_shares *t, size_t extra, size_t *n)
{
    size_t cnt = slaq_shares_count(t);
    acct_row *r = calloc(cnt + extra, sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 1; i < cnt; i++) {
        const slaq_share_entry *e = slaq_shares_at(t, (int)i);
        acct_row *x = &r[i - 1];
        snprintf(x->name, sizeof x->name, "%s", e->name);
        if (e->parent > 0)
            snprintf(x->account, sizeof x->account, "%s",
                     slaq_shares_at(t, e->parent)->name);
        x->user = e->user;
        x->weight = e->weight;
        x->max_cores = e->max_cores;
        x->max_jobs = e->max_jobs;
        x->usage = e->user ? e->usage : 0;
    }
    *n = cnt - 1;
    return r;
}

static acct_row *row_find(acct_row *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name))
            return &r[i];
    return NULL;
}

/* A tree from rows, parents first whatever their order; NULL with err
 * set when one cannot be added (a cycle or a bad row). */
static slaq_shares *tree_build(acct_row *r, size_t n, double half_life,
                               char *err, size_t errlen)
{
    slaq_shares *t = slaq_shares_new();
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    slaq_shares_set_half_life(t, half_life);
    for (size_t i = 0; i < n; i++)
        r[i].added = -1;
    size_t left = n;
    for (int progress = 1; left && progress;) {
        progress = 0;
        for (size_t i = 0; i < n; i++) {
            if (r[i].added >= 0)
                continue;
            int parent = SLAQ_SHARES_ROOT;
            if (*r[i].account) {
                parent = slaq_shares_find(t, r[i].account);
                if (parent < 0)
                    continue; /* its account comes later */
            }
            int id = slaq_shares_add(t, r[i].name, parent, r[i].weight,
                                     r[i].user);
            if (id < 0 ||
                slaq_shares_set_caps(t, id, r[i].max_cores,
                                     r[i].max_jobs) != SLAQ_OK ||
                (r[i].user &&
                 slaq_shares_set_usage(t, id, r[i].usage) != SLAQ_OK)) {
                snprintf(err, errlen, "%s '%s' cannot be placed under '%s'",
                         r[i].user ? "user" : "account", r[i].name,
                         *r[i].account ? r[i].account : "root");
                slaq_shares_free(t);
                return NULL;
            }
            r[i].added = id;
            left--;
            progress = 1;
        }
    }
    for (size_t i = 0; i < n && left; i++)
        if (r[i].added < 0) {
            snprintf(err, errlen, "%s '%s': its account '%s' does not exist "
                     "(or is under it)", r[i].user ? "user" : "account",
                     r[i].name, r[i].account);
            slaq_shares_free(t);
            return NULL;
        }
    return t;
}

const char *acct_user_name(const sd_job *j, char *buf, size_t len)
{
    if (j->user && slaq_shares_name_ok(j->user))
        snprintf(buf, len, "%s", j->user);
    else
        snprintf(buf, len, "uid-%u", (unsigned)j->uid);
    return buf;
}

/* Writes every row with its usage as of now. */
static void save(sd_daemon *d)
{
    const slaq_shares *t = d->shares;
    double now = sd_now();
    for (size_t i = 1; t && i < slaq_shares_count(t); i++) {
        const slaq_share_entry *e = slaq_shares_at(t, (int)i);
        store_share_row r = {
            .name = e->name, .user = e->user,
            .account = e->parent > 0 ? slaq_shares_at(t, e->parent)->name
                                     : NULL,
            .weight = e->weight, .max_cores = e->max_cores,
            .max_jobs = e->max_jobs, .usage = e->usage, .t = now};
        if (store_put_share(d->store, &r) < 0) {
            sd_log(d, 0, "state.db: cannot write the share of '%s': %s",
                   e->name, store_errmsg(d->store));
            return;
        }
    }
    d->shares_saved = sd_mono();
}

/* Hands tree t to the scheduler in place of the current one, every job
 * pointed at its user's id in t (by name), and frees the old tree. */
static void tree_swap(sd_daemon *d, slaq_shares *t)
{
    slaq_shares *old = d->shares;
    if (d->cfg.fair_share)
        slaq_sched_set_shares(d->sched, NULL);
    for (size_t i = 0; old && i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        if (!j || !j->sj || slaq_job_tenant(j->sj) < 0)
            continue;
        const slaq_share_entry *e = slaq_shares_at(old,
                                                   slaq_job_tenant(j->sj));
        int id = e ? slaq_shares_find(t, e->name) : -1;
        slaq_job_set_tenant(j->sj, id);
    }
    d->shares = t;
    if (d->cfg.fair_share && slaq_sched_set_shares(d->sched, t) != SLAQ_OK)
        sd_log(d, 0, "the scheduler refused the new accounts: a job lost "
               "its user");
    slaq_shares_free(old);
}

/* Checks an edit against the rows and applies it to them (a new row at
 * r[*n] for an add). 0, or -1 with err set. */
static int edit_rows(acct_row *r, size_t *n, const acct_edit *e, int add,
                     char *err, size_t errlen)
{
    if (!slaq_shares_name_ok(e->name) || !strcmp(e->name, "root")) {
        snprintf(err, errlen, "'%.64s' is not a name an account or user "
                 "may have (1 to %d of A-Z a-z 0-9 . _ @ -, not root)",
                 e->name ? e->name : "", SLAQ_SHARES_NAME_MAX - 1);
        return -1;
    }
    acct_row *x = row_find(r, *n, e->name);
    if (add && x) {
        snprintf(err, errlen, "%s '%s' exists already (change it with slaq "
                 "account set)", x->user ? "a user" : "an account", e->name);
        return -1;
    }
    if (!add && !x) {
        snprintf(err, errlen, "no account or user is named '%s' (slaq "
                 "account ls lists them)", e->name);
        return -1;
    }
    if (!isnan(e->weight) && !(isfinite(e->weight) && e->weight > 0)) {
        snprintf(err, errlen, "the weight must be a number above 0");
        return -1;
    }
    if (!isnan(e->max_cores) && !(e->max_cores > 0)) {
        snprintf(err, errlen, "max-cores must be above 0 (or none)");
        return -1;
    }
    if (e->max_jobs < -1 || e->max_jobs > 1000000000LL) {
        snprintf(err, errlen, "max-jobs must be a whole number from 0 (no "
                 "cap) to 1000000000");
        return -1;
    }
    if (e->account && !is_root(e->account)) {
        acct_row *p = row_find(r, *n, e->account);
        if (!p || p->user) {
            snprintf(err, errlen, "'%.64s' is not an account (add it with "
                     "slaq account add %.64s)", e->account, e->account);
            return -1;
        }
        /* An account may not go under itself or one of its own. */
        for (const acct_row *q = p; q; q = *q->account
                 ? row_find(r, *n, q->account) : NULL)
            if (!strcmp(q->name, e->name)) {
                snprintf(err, errlen, "account '%s' cannot go under '%s', "
                         "which is under it", e->name, e->account);
                return -1;
            }
    }
    if (add) {
        x = &r[(*n)++];
        memset(x, 0, sizeof *x);
        snprintf(x->name, sizeof x->name, "%s", e->name);
        x->user = e->user;
        x->weight = 1;
        x->max_cores = INFINITY;
    }
    if (e->account)
        snprintf(x->account, sizeof x->account, "%s",
                 is_root(e->account) ? "" : e->account);
    if (!isnan(e->weight))
        x->weight = e->weight;
    if (!isnan(e->max_cores))
        x->max_cores = e->max_cores;
    if (e->max_jobs >= 0)
        x->max_jobs = (unsigned)e->max_jobs;
    return 0;
}

int acct_apply(sd_daemon *d, const acct_edit *e, int add, char *err,
               size_t errlen)
{
    size_t n;
    acct_row *r = tree_rows(d->shares, 1, &n);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    slaq_shares *t = NULL;
    if (!edit_rows(r, &n, e, add, err, errlen))
        t = tree_build(r, n, slaq_shares_half_life(d->shares), err, errlen);
    free(r);
    if (!t)
        return -1;
    tree_swap(d, t);
    save(d);
    return 0;
}

int acct_tenant(sd_daemon *d, const sd_job *j)
{
    if (!d->cfg.fair_share)
        return -1;
    char name[SLAQ_SHARES_NAME_MAX];
    acct_user_name(j, name, sizeof name);
    int id = slaq_shares_find(d->shares, name);
    if (id >= 0 && !slaq_shares_at(d->shares, id)->user) {
        /* An account has the owner's name: the owner goes by its uid. */
        snprintf(name, sizeof name, "uid-%u", (unsigned)j->uid);
        id = slaq_shares_find(d->shares, name);
    }
    if (id >= 0)
        return id;
    id = slaq_shares_place(d->shares, name, NULL);
    if (id < 0) {
        sd_log(d, 0, "shares: cannot add user '%s'", name);
        return -1;
    }
    sd_log(d, 1, "shares: user '%s' added under the root", name);
    save(d);
    return id;
}

/* ------------------------------------------------------- the file */

/* A number for key `k` of a line: 0, or -1 with err set. */
static int line_num(const char *k, const char *v, int whole, int none_ok,
                    double *out, char *err, size_t errlen)
{
    if (none_ok && !strcmp(v, "none")) {
        *out = none_ok == 2 ? 0 : INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(x) ||
        (whole && (x != floor(x) || x < 0))) {
        snprintf(err, errlen, "%s wants %s, got '%s'", k,
                 whole ? "a whole number (or none)"
                       : none_ok ? "a number (or none)" : "a number", v);
        return -1;
    }
    *out = x;
    return 0;
}

/* One line of the accounts file: "account|user NAME [key=value ...]".
 * 0, or -1 with err set. */
static int file_line(sd_daemon *d, char *line, char *err, size_t errlen)
{
    char *save_p, *kind = strtok_r(line, " \t", &save_p);
    char *name = strtok_r(NULL, " \t", &save_p);
    if (!kind || (strcmp(kind, "account") && strcmp(kind, "user")) ||
        !name) {
        snprintf(err, errlen, "expected 'account NAME ...' or 'user NAME "
                 "...'");
        return -1;
    }
    acct_edit e;
    acct_edit_init(&e, name);
    e.user = !strcmp(kind, "user");
    for (char *kv; (kv = strtok_r(NULL, " \t", &save_p));) {
        char *v = strchr(kv, '=');
        double x;
        if (!v) {
            snprintf(err, errlen, "'%s': expected KEY=VALUE (account=, "
                     "weight=, max-cores=, max-jobs=)", kv);
            return -1;
        }
        *v++ = '\0';
        if (!strcmp(kv, "account")) {
            e.account = v;
        } else if (!strcmp(kv, "weight")) {
            if (line_num(kv, v, 0, 0, &x, err, errlen))
                return -1;
            e.weight = x;
        } else if (!strcmp(kv, "max-cores")) {
            if (line_num(kv, v, 0, 1, &x, err, errlen))
                return -1;
            e.max_cores = x;
        } else if (!strcmp(kv, "max-jobs")) {
            if (line_num(kv, v, 1, 2, &x, err, errlen))
                return -1;
            e.max_jobs = (long long)x;
        } else {
            snprintf(err, errlen, "unknown key '%s' (expected account, "
                     "weight, max-cores or max-jobs)", kv);
            return -1;
        }
    }
    int have = slaq_shares_find(d->shares, name);
    const slaq_share_entry *x = slaq_shares_at(d->shares, have);
    if (x && x->user != e.user) {
        snprintf(err, errlen, "'%s' is %s in state.db, not %s", name,
                 x->user ? "a user" : "an account",
                 e.user ? "a user" : "an account");
        return -1;
    }
    if (!x && !e.account)
        e.account = "";
    return acct_apply(d, &e, !x, err, errlen);
}

static int read_file(sd_daemon *d, const char *path, char *err,
                     size_t errlen)
{
    /* Opened without waiting (a FIFO would stall slaqd's start) and read
     * only if it is a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    const char *why_not = NULL;
    if (fd < 0 || fstat(fd, &st) < 0)
        why_not = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why_not = "not a regular file";
    if (why_not) {
        snprintf(err, errlen, "--accounts %s: %s", path, why_not);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        snprintf(err, errlen, "--accounts %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    char line[1024], why[512];
    int rc = 0;
    for (unsigned no = 1; !rc && fgets(line, sizeof line, f); no++) {
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            snprintf(err, errlen, "%s:%u: the line is longer than %zu bytes",
                     path, no, sizeof line - 2);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[strspn(line, " \t")])
            continue;
        if (file_line(d, line, why, sizeof why)) {
            snprintf(err, errlen, "%s:%u: %s", path, no, why);
            rc = -1;
        }
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* ------------------------------------------------- open and close */

typedef struct load_ctx {
    acct_row *r;
    size_t n, cap;
    double now, half_life;
} load_ctx;

static int load_one(void *arg, const store_share_row *s)
{
    load_ctx *c = arg;
    if (!slaq_shares_name_ok(s->name) || !strcmp(s->name, "root"))
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        acct_row *r = realloc(c->r, cap * sizeof *r);
        if (!r)
            return -1;
        c->r = r;
        c->cap = cap;
    }
    acct_row *x = &c->r[c->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", s->name);
    if (s->account && slaq_shares_name_ok(s->account))
        snprintf(x->account, sizeof x->account, "%s", s->account);
    x->user = s->user;
    x->weight = isfinite(s->weight) && s->weight > 0 ? s->weight : 1;
    x->max_cores = s->max_cores > 0 ? s->max_cores : INFINITY;
    x->max_jobs = s->max_jobs > 0 && s->max_jobs <= 1000000000LL
                      ? (unsigned)s->max_jobs : 0;
    double u = isfinite(s->usage) && s->usage > 0 ? s->usage : 0;
    double down = isfinite(s->t) && c->now > s->t ? c->now - s->t : 0;
    x->usage = c->half_life > 0 ? u * exp2(-down / c->half_life) : u;
    return 0;
}

int acct_open(sd_daemon *d, char *err, size_t errlen)
{
    if (d->cfg.agent)
        d->cfg.fair_share = 0; /* its controller divides the cores */
    const slaq_sched_config *sc = slaq_sched_get_config(d->sched);
    load_ctx c = {.now = sd_now(), .half_life = sc->share_half_life_s};
    if (store_each_share(d->store, load_one, &c) < 0) {
        free(c.r);
        snprintf(err, errlen, "state.db: cannot read the shares: %s",
                 store_errmsg(d->store));
        return -1;
    }
    char why[512];
    d->shares = tree_build(c.r, c.n, c.half_life, why, sizeof why);
    /* A damaged table (an account gone or a user's name, a loop of
     * accounts) loses no row: first the rows whose account is missing go
     * under the root, then, if a loop is left, all of them; the log says
     * so and the next write keeps it. */
    for (int pass = 0; !d->shares && pass < 2; pass++) {
        sd_log(d, 0, "state.db: the shares table: %s; %s", why,
               pass ? "every account and user goes under the root"
                    : "entries whose account is missing go under the root");
        for (size_t i = 0; i < c.n; i++) {
            const acct_row *p = row_find(c.r, c.n, c.r[i].account);
            if (pass || (*c.r[i].account && (!p || p->user)))
                c.r[i].account[0] = '\0';
        }
        d->shares = tree_build(c.r, c.n, c.half_life, why, sizeof why);
    }
    free(c.r);
    if (!d->shares) {
        snprintf(err, errlen, "state.db: the shares table: %s", why);
        return -1;
    }
    if (d->cfg.fair_share &&
        slaq_sched_set_shares(d->sched, d->shares) != SLAQ_OK) {
        snprintf(err, errlen, "the scheduler refused the accounts");
        return -1;
    }
    if (d->cfg.accounts_file && read_file(d, d->cfg.accounts_file, err,
                                          errlen))
        return -1;
    d->shares_saved = sd_mono();
    return 0;
}

void acct_close(sd_daemon *d)
{
    if (!d->shares)
        return;
    if (d->store)
        save(d);
    if (d->sched && d->cfg.fair_share)
        slaq_sched_set_shares(d->sched, NULL);
    slaq_shares_free(d->shares);
    d->shares = NULL;
}

void acct_epoch(sd_daemon *d)
{
    if (d->shares && sd_mono() - d->shares_saved >= ACCT_SAVE_S)
        save(d);
}

/* ------------------------------------------------------- reports */

static json_t *cap_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Entry id and then its children, depth first. */
static void entries_json(const slaq_shares *t, int id, json_t *out)
{
    const slaq_share_entry *e = slaq_shares_at(t, id);
    int depth = 0;
    for (int p = e->parent; p >= 0; p = slaq_shares_at(t, p)->parent)
        depth++;
    json_t *o = json_pack(
        "{s:s, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:o, s:I}",
        "name", e->name, "kind", id == 0 ? "root" : e->user ? "user"
                                                            : "account",
        "depth", depth, "weight", e->weight, "share", e->share,
        "factor", e->factor, "usage", e->usage, "part", e->part,
        "cores", e->cores, "jobs", (json_int_t)e->jobs,
        "running", (json_int_t)e->running, "max_cores",
        cap_json(e->max_cores), "max_jobs", (json_int_t)e->max_jobs);
    json_object_set_new(o, "account", e->parent >= 0
                        ? json_string(slaq_shares_at(t, e->parent)->name)
                        : json_null());
    json_array_append_new(out, o);
    for (size_t i = (size_t)id + 1; i < slaq_shares_count(t); i++)
        if (slaq_shares_at(t, (int)i)->parent == id)
            entries_json(t, (int)i, out);
}

json_t *acct_json(const sd_daemon *d)
{
    json_t *v = json_array();
    if (d->shares)
        entries_json(d->shares, SLAQ_SHARES_ROOT, v);
    return json_pack("{s:b, s:f, s:o}", "fair_share", d->cfg.fair_share,
                     "half_life_s",
                     slaq_sched_get_config(d->sched)->share_half_life_s,
                     "entries", v);
}

json_t *acct_job_json(const sd_daemon *d, const sd_job *j)
{
    if (!d->cfg.fair_share || !j->sj || !d->shares)
        return NULL;
    const slaq_share_entry *e = slaq_shares_at(d->shares,
                                               slaq_job_tenant(j->sj));
    if (!e)
        return NULL;
    return json_pack("{s:s, s:s, s:f, s:f, s:f}", "user", e->name,
                     "account", e->parent > 0
                     ? slaq_shares_at(d->shares, e->parent)->name : "root",
                     "share", e->share, "part", e->part, "cores", e->cores);
}
