/*
 * sweep.c — hyperparameter sweeps under slaqd (`slaq sweep`,
 * docs/sweep-cli.md).
 *
 * A sweep runs the configurations of its spec (src/io/sweepspec.c) as
 * slaqd jobs on S slots. Every decision — which configuration a free slot
 * takes, whether one continues, is suspended or is killed after an epoch —
 * is libslaq's sweep policy's (include/slaq/sweep.h: POP, Default, Bandit,
 * EarlyTerm, successive halving, Hyperband); this file only carries them
 * out: it starts jobs, feeds the policy each configuration's metric as the
 * job reports it (reports.metric, epoch = iteration), and suspends
 * (SIGSTOP, or checkpoint and exit: suspend.c), resumes and cancels jobs.
 *
 * State in SQLite: sweeps (the spec and the outcome), sweep_configs (the
 * generated configurations, their jobs and last known class), and
 * sweep_log, every call made to the policy with its clock. After a restart
 * the policy is rebuilt by replaying the log (it is deterministic), and
 * the sweep goes on with the jobs slaqd re-adopted.
 *
 * The policy's clock is seconds since the sweep was created.
 */
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "io/sweepspec.h"

struct sw_rt_cfg {
    json_t *params, *cmd;
    json_t *jobs;          /* array of job ids, the current one last */
    int seen;              /* last epoch given to the policy */
    double last_t;         /* wall time of that report (or of the start) */
    int started;
    int susp_wait;         /* its job's agent has not answered the
                              suspend this sweep asked for */
};

typedef struct sd_sweep {
    int64_t id;
    json_t *spec_json;
    sweep_spec spec;
    char *cwd;
    uid_t uid;             /* its owner: its jobs run as this user */
    char *user;
    slaq_sweep *pol;       /* NULL once ended */
    size_t n;
    struct sw_rt_cfg *c;
    char state[16];        /* running, reached, done, cancelled, failed */
    char *note;
    double created, ended, reached;
    int64_t reached_cfg;
    double best;
    int64_t best_cfg;
    int64_t seq;
    struct sd_sweep *next;
} sd_sweep;

static const char sweep_schema[] =
    "CREATE TABLE IF NOT EXISTS sweeps(id INTEGER PRIMARY KEY, name TEXT, "
    " spec TEXT, cwd TEXT, state TEXT, note TEXT, created REAL, ended REAL, "
    " reached REAL, reached_config INTEGER, best REAL, best_config INTEGER);"
    "CREATE TABLE IF NOT EXISTS sweep_configs(sweep INTEGER, idx INTEGER, "
    " params TEXT, cmd TEXT, jobs TEXT, state TEXT, class TEXT, p REAL, "
    " epochs INTEGER, best REAL, PRIMARY KEY(sweep, idx)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS sweep_log(sweep INTEGER, seq INTEGER, "
    " t REAL, kind TEXT, cfg INTEGER, epoch INTEGER, metric REAL, "
    " epoch_s REAL, PRIMARY KEY(sweep, seq)) WITHOUT ROWID;";

static sd_sweep **sweeps_head(sd_daemon *d)
{
    return (sd_sweep **)&d->sweeps;
}

static sqlite3 *db(sd_daemon *d)
{
    store_begin(d->store);
    return store_db(d->store);
}

static const char *state_name(slaq_sweep_state s)
{
    switch (s) {
    case SLAQ_CFG_NEW: return "new";
    case SLAQ_CFG_RUNNING: return "running";
    case SLAQ_CFG_SUSPENDED: return "suspended";
    case SLAQ_CFG_KILLED: return "killed";
    case SLAQ_CFG_ENDED: return "ended";
    }
    return "?";
}

static const char *class_name(slaq_sweep_class c)
{
    switch (c) {
    case SLAQ_CLASS_PROMISING: return "promising";
    case SLAQ_CLASS_OPPORTUNISTIC: return "opportunistic";
    case SLAQ_CLASS_POOR: return "poor";
    case SLAQ_CLASS_UNKNOWN: break;
    }
    return NULL;
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void exec_bound(sd_daemon *d, const char *sql, const char *types, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    if (sqlite3_prepare_v2(db(d), sql, -1, &st, NULL) != SQLITE_OK) {
        sd_log(d, 0, "sweeps: %s", sqlite3_errmsg(store_db(d->store)));
        return;
    }
    va_start(ap, types);
    for (int i = 0; types[i]; i++) {
        if (types[i] == 'i')
            sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
        else if (types[i] == 'd')
            bind_num(st, i + 1, va_arg(ap, double));
        else {
            const char *s = va_arg(ap, const char *);
            if (s)
                sqlite3_bind_text(st, i + 1, s, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, i + 1);
        }
    }
    va_end(ap);
    if (sqlite3_step(st) != SQLITE_DONE)
        sd_log(d, 0, "sweeps: %s", sqlite3_errmsg(store_db(d->store)));
    sqlite3_finalize(st);
}

static void put_sweep(sd_daemon *d, sd_sweep *w)
{
    char *spec = json_dumps(w->spec_json, JSON_COMPACT);
    exec_bound(d, "INSERT OR REPLACE INTO sweeps(id, name, spec, cwd, state, "
               "note, created, ended, reached, reached_config, best, "
               "best_config, uid, user) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
               "isssssdddidiis", w->id, w->spec.name, spec, w->cwd, w->state,
               w->note, w->created, w->ended, w->reached, w->reached_cfg,
               w->best, w->best_cfg, (int64_t)w->uid, w->user);
    free(spec);
}

/* Binds configuration i of w to `st`, an INSERT OR REPLACE of every
 * column of sweep_configs (have: the policy knows it) or an UPDATE of its
 * jobs, and runs it. */
static void config_row(sd_daemon *d, sqlite3_stmt *st, int have,
                       sd_sweep *w, size_t i)
{
    slaq_sweep_info in = {0};
    if (have)
        slaq_sweep_get(w->pol, i, &in);
    char *params = have ? json_dumps(w->c[i].params, JSON_COMPACT) : NULL;
    char *cmd = have ? json_dumps(w->c[i].cmd, JSON_COMPACT) : NULL;
    char *jobs = json_dumps(w->c[i].jobs, JSON_COMPACT);
    if (have) {
        sqlite3_bind_int64(st, 1, w->id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        sqlite3_bind_text(st, 3, params, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, cmd, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 5, jobs, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 6, state_name(in.state), -1, SQLITE_STATIC);
        if (class_name(in.cls))
            sqlite3_bind_text(st, 7, class_name(in.cls), -1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 7);
        bind_num(st, 8, in.p);
        sqlite3_bind_int64(st, 9, in.epochs);
        bind_num(st, 10, in.best);
    } else {
        sqlite3_bind_text(st, 1, jobs, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, w->id);
        sqlite3_bind_int64(st, 3, (int64_t)i);
    }
    if (sqlite3_step(st) != SQLITE_DONE)
        sd_log(d, 0, "sweeps: %s", sqlite3_errmsg(store_db(d->store)));
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    free(params);
    free(cmd);
    free(jobs);
}

/* Writes configurations [from, to) of w, with one prepared statement. */
static void put_configs(sd_daemon *d, sd_sweep *w, size_t from, size_t to)
{
    int have = w->pol != NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db(d), have
                           ? "INSERT OR REPLACE INTO sweep_configs(sweep, "
                             "idx, params, cmd, jobs, state, class, p, "
                             "epochs, best) VALUES (?,?,?,?,?,?,?,?,?,?)"
                           : "UPDATE sweep_configs SET jobs = ? WHERE "
                             "sweep = ? AND idx = ?", -1, &st, NULL)
        != SQLITE_OK) {
        sd_log(d, 0, "sweeps: %s", sqlite3_errmsg(store_db(d->store)));
        return;
    }
    for (size_t i = from; i < to; i++)
        config_row(d, st, have, w, i);
    sqlite3_finalize(st);
}

static void put_config(sd_daemon *d, sd_sweep *w, size_t i)
{
    put_configs(d, w, i, i + 1);
}

static void log_call(sd_daemon *d, sd_sweep *w, double t, const char *kind,
                     size_t cfg, int epoch, double metric, double epoch_s)
{
    exec_bound(d, "INSERT INTO sweep_log(sweep, seq, t, kind, cfg, epoch, "
               "metric, epoch_s) VALUES (?,?,?,?,?,?,?,?)", "iidsiidd",
               w->id, w->seq++, t, kind, (int64_t)cfg, (int64_t)epoch,
               metric, epoch_s);
}

static void sweep_free(sd_sweep *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        json_decref(w->c[i].params);
        json_decref(w->c[i].cmd);
        json_decref(w->c[i].jobs);
    }
    free(w->c);
    slaq_sweep_free(w->pol);
    sweep_spec_free(&w->spec);
    json_decref(w->spec_json);
    free(w->cwd);
    free(w->user);
    free(w->note);
    free(w);
}

void sweep_free_all(sd_daemon *d)
{
    sd_sweep *w = *sweeps_head(d), *nx;
    for (; w; w = nx) {
        nx = w->next;
        sweep_free(w);
    }
    d->sweeps = NULL;
}

static sd_sweep *sweep_get(sd_daemon *d, int64_t id)
{
    for (sd_sweep *w = *sweeps_head(d); w; w = w->next)
        if (w->id == id)
            return w;
    return NULL;
}

static sd_job *cfg_job(sd_daemon *d, sd_sweep *w, size_t i)
{
    size_t n = json_array_size(w->c[i].jobs);
    return n ? job_get(d, json_integer_value(json_array_get(w->c[i].jobs,
                                                            n - 1)))
             : NULL;
}

static int meets(const sd_sweep *w, double m)
{
    return w->spec.p.maximize ? m >= w->spec.p.y_target
                              : m <= w->spec.p.y_target;
}

/* Ends the sweep: every job of it still active is cancelled. */
static void sweep_end(sd_daemon *d, sd_sweep *w, const char *state,
                      const char *note)
{
    for (size_t i = 0; i < w->n; i++) {
        sd_job *j = cfg_job(d, w, i);
        if (j && SD_ACTIVE(j->state))
            job_cancel(d, j, 1);
        /* Its job is stopped with the sweep: the configuration ended
         * (not running or suspended in a sweep that is over). */
        slaq_sweep_info in;
        if (w->pol && slaq_sweep_get(w->pol, i, &in) == 0 &&
            (in.state == SLAQ_CFG_RUNNING || in.state == SLAQ_CFG_SUSPENDED))
            slaq_sweep_ended(w->pol, i, sd_now() - w->created);
    }
    snprintf(w->state, sizeof w->state, "%s", state);
    if (note) {
        free(w->note);
        w->note = strdup(note);
    }
    w->ended = sd_now();
    put_configs(d, w, 0, w->n);
    slaq_sweep_free(w->pol);
    w->pol = NULL;
    put_sweep(d, w);
    store_flush(d->store);
    sd_log(d, 0, "sweep %lld (%s): %s%s%s", (long long)w->id, w->spec.name,
           state, note ? ": " : "", note ? note : "");
}

/* Gives the policy configuration i's new epochs from job j's reports.
 * Returns the action of the last (CONTINUE when none). */
static int feed(sd_daemon *d, sd_sweep *w, size_t i, sd_job *j, double now)
{
    struct sw_rt_cfg *c = &w->c[i];
    int uses_loss = !strcmp(w->spec.metric, "loss");
    sqlite3_stmt *st;
    const char *sql = uses_loss
        ? "SELECT iter, loss, t FROM reports WHERE job = ? AND (iter > ? "
          "OR iter = 0) ORDER BY iter"
        : "SELECT iter, metric, t FROM reports WHERE job = ? AND (iter > ? "
          "OR iter = 0) AND (metric IS NOT NULL OR iter = 0) ORDER BY iter";
    if (!uses_loss && j->metric_name && strcmp(j->metric_name,
                                               w->spec.metric)) {
        char note[256];
        snprintf(note, sizeof note, "job %lld reports the metric \"%s\", not "
                 "\"%s\" as the spec's metric says", (long long)j->id,
                 j->metric_name, w->spec.metric);
        sweep_end(d, w, "failed", note);
        return -1;
    }
    if (sqlite3_prepare_v2(db(d), sql, -1, &st, NULL) != SQLITE_OK)
        return SLAQ_SWEEP_CONTINUE;
    sqlite3_bind_int64(st, 1, j->id);
    sqlite3_bind_int64(st, 2, c->seen);
    int action = SLAQ_SWEEP_CONTINUE;
    while (action == SLAQ_SWEEP_CONTINUE && sqlite3_step(st) == SQLITE_ROW) {
        int epoch = sqlite3_column_int(st, 0);
        double m = sqlite3_column_double(st, 1), t = sqlite3_column_double(st,
                                                                          2);
        if (epoch == 0) {
            /* The job's report before training: its first epoch is timed
             * from here, not from its start (loading data is no epoch). */
            if (c->seen == 0)
                c->last_t = t;
            continue;
        }
        if (epoch > w->spec.p.max_epochs)
            break;
        double es = t - c->last_t;
        if (!(es > 0))
            es = 1e-3;
        int rc = slaq_sweep_report(w->pol, i, epoch, m, es, now);
        if (rc < 0)
            break;
        log_call(d, w, now, "report", i, epoch, m, es);
        c->seen = epoch;
        c->last_t = t;
        action = rc;
        if (!isfinite(w->best) || (w->spec.p.maximize ? m > w->best
                                                      : m < w->best)) {
            w->best = m;
            w->best_cfg = (int64_t)i;
        }
        if (meets(w, m) && !(w->reached >= 0)) {
            w->reached = now;
            w->reached_cfg = (int64_t)i;
            sd_log(d, 0, "sweep %lld: configuration %zu reached %s %g at "
                   "%.1f s", (long long)w->id, i, w->spec.metric, m, now);
        }
    }
    sqlite3_finalize(st);
    put_config(d, w, i);
    return action;
}

static int start_config(sd_daemon *d, sd_sweep *w, size_t i)
{
    struct sw_rt_cfg *c = &w->c[i];
    char name[256], err[512];
    sd_job *j = NULL;
    if (!c->started) {
        snprintf(name, sizeof name, "%s-%zu", w->spec.name, i);
        json_t *req = json_pack("{s:O, s:s, s:s}", "cmd", c->cmd, "cwd",
                                w->cwd, "name", name);
        sd_user owner;
        user_from_uid(d, w->uid, 0, &owner);
        j = job_submit(d, req, &owner, err, sizeof err);
        json_decref(req);
        if (!j) {
            char note[640];
            snprintf(note, sizeof note, "configuration %zu: %s", i, err);
            sweep_end(d, w, "failed", note);
            return -1;
        }
        c->started = 1;
    } else {
        sd_job *old = cfg_job(d, w, i);
        if (!old) {
            sweep_end(d, w, "failed", "a suspended configuration lost its job");
            return -1;
        }
        if (old->suspended == SD_SUSP_CHECKPOINT && SD_ACTIVE(old->state))
            return 1; /* still writing its checkpoint: next tick */
        /* Reports it made while being stopped belong to this epoch run. */
        feed(d, w, i, old, sd_now() - w->created);
        /* Its agent has not answered the suspend yet: the answer resumes
         * it (sweep_suspend_result). */
        j = c->susp_wait ? old : job_resume(d, old, err, sizeof err);
        if (!j) {
            char note[640];
            snprintf(note, sizeof note, "configuration %zu: %s", i, err);
            sweep_end(d, w, "failed", note);
            return -1;
        }
    }
    j->sweep = w->id;
    store_put_job(d->store, j);
    if (json_integer_value(json_array_get(c->jobs, json_array_size(c->jobs)
                                                       - 1)) != j->id ||
        json_array_size(c->jobs) == 0)
        json_array_append_new(c->jobs, json_integer(j->id));
    c->last_t = sd_now();
    put_config(d, w, i);
    return 0;
}

/* Configuration i's job could not be suspended: it ends (its job is
 * cancelled and the policy told), since the policy already counts it
 * suspended and would start another in its slot while it runs on. */
static void suspend_failed(sd_daemon *d, sd_sweep *w, size_t i, sd_job *j,
                           const char *why)
{
    double now = sd_now() - w->created;
    sd_log(d, 0, "sweep %lld: configuration %zu (job %lld) could not be "
           "suspended (%s): it ends", (long long)w->id, i, (long long)j->id,
           why);
    if (SD_ACTIVE(j->state))
        job_cancel(d, j, 1);
    slaq_sweep_info in;
    if (slaq_sweep_get(w->pol, i, &in) == 0 &&
        in.state == SLAQ_CFG_SUSPENDED) {
        slaq_sweep_ended(w->pol, i, now);
        log_call(d, w, now, "ended", i, 0, NAN, NAN);
    }
    put_config(d, w, i);
    store_flush(d->store);
}

void sweep_suspend_result(sd_daemon *d, sd_job *j, int ok, const char *err)
{
    sd_sweep *w = sweep_get(d, j->sweep);
    if (!w || !w->pol)
        return;
    for (size_t i = 0; i < w->n; i++) {
        if (cfg_job(d, w, i) != j || !w->c[i].susp_wait)
            continue; /* a user's own suspend of a sweep's job */
        w->c[i].susp_wait = 0;
        slaq_sweep_info in;
        char e2[256];
        /* The policy may have given it a slot again meanwhile: then it
         * should run, whatever the answer. */
        int wanted = slaq_sweep_get(w->pol, i, &in) == 0 &&
                     in.state == SLAQ_CFG_RUNNING;
        if (!ok && !wanted)
            suspend_failed(d, w, i, j, err ? err : "failed");
        else if (ok && wanted && !job_resume(d, j, e2, sizeof e2))
            suspend_failed(d, w, i, j, e2);
        return;
    }
}

static void sweep_step(sd_daemon *d, sd_sweep *w)
{
    double now = sd_now() - w->created;
    size_t running = 0;
    for (size_t i = 0; i < w->n && w->pol; i++) {
        slaq_sweep_info in;
        slaq_sweep_get(w->pol, i, &in);
        sd_job *j = cfg_job(d, w, i);
        /* Its suspension is with its agent: it runs until the answer. */
        if (in.state == SLAQ_CFG_SUSPENDED && w->c[i].susp_wait)
            running++;
        if (in.state != SLAQ_CFG_RUNNING || !j)
            continue;
        int a = feed(d, w, i, j, now);
        if (!w->pol)
            return;
        if (a == SLAQ_SWEEP_SUSPEND) {
            double ms;
            char err[512];
            log_call(d, w, now, "suspend", i, 0, NAN, NAN);
            int rc = job_suspend(d, j, w->spec.checkpoint, &ms, err,
                                 sizeof err);
            if (rc < 0) {
                suspend_failed(d, w, i, j, err);
            } else if (rc == 1) {
                w->c[i].susp_wait = 1;
                running++; /* until its agent answers */
            }
        } else if (a == SLAQ_SWEEP_KILL) {
            log_call(d, w, now, "kill", i, 0, NAN, NAN);
            if (SD_ACTIVE(j->state))
                job_cancel(d, j, 1);
        } else if (!SD_ACTIVE(j->state)) {
            slaq_sweep_ended(w->pol, i, now);
            log_call(d, w, now, "ended", i, 0, NAN, NAN);
            put_config(d, w, i);
        } else {
            running++;
        }
        if (w->reached >= 0 && w->spec.stop_at_target) {
            char note[160];
            snprintf(note, sizeof note, "configuration %lld reached %s %g "
                     "after %.1f s", (long long)w->reached_cfg,
                     w->spec.metric, w->spec.p.y_target, w->reached);
            sweep_end(d, w, "reached", note);
            return;
        }
    }
    while (w->pol && running < w->spec.p.slots) {
        size_t i = slaq_sweep_next(w->pol, now);
        if (i == (size_t)-1)
            break;
        log_call(d, w, now, "next", i, 0, NAN, NAN);
        if (start_config(d, w, i) < 0)
            return;
        running++;
    }
    /* Over when nothing runs, waits or is left to start. */
    int open = 0;
    for (size_t i = 0; w->pol && i < w->n; i++) {
        slaq_sweep_info in;
        slaq_sweep_get(w->pol, i, &in);
        sd_job *j = cfg_job(d, w, i);
        open |= in.state == SLAQ_CFG_NEW || in.state == SLAQ_CFG_RUNNING ||
                in.state == SLAQ_CFG_SUSPENDED ||
                (j && SD_ACTIVE(j->state));
    }
    if (w->pol && !open)
        sweep_end(d, w, w->reached >= 0 ? "reached" : "done",
                  w->reached >= 0 ? NULL : "no configuration reached the "
                                           "target");
}

void sweep_tick(sd_daemon *d)
{
    for (sd_sweep *w = *sweeps_head(d); w; w = w->next)
        if (w->pol && !strcmp(w->state, "running"))
            sweep_step(d, w);
}

/* ------------------------------------------------------------ creation */

static sd_sweep *sweep_build(json_t *spec, const char *cwd, char *err,
                             size_t errlen)
{
    sd_sweep *w = calloc(1, sizeof *w);
    w->spec_json = json_incref(spec);
    w->reached = -1;
    w->best = NAN;
    w->reached_cfg = w->best_cfg = -1;
    snprintf(w->state, sizeof w->state, "running");
    if (sweep_spec_parse(spec, &w->spec, err, errlen) < 0) {
        sweep_free(w);
        return NULL;
    }
    w->cwd = strdup(w->spec.cwd ? w->spec.cwd : cwd ? cwd : ".");
    json_t *cfgs = sweep_spec_configs(&w->spec, err, errlen);
    if (!cfgs) {
        sweep_free(w);
        return NULL;
    }
    w->n = json_array_size(cfgs);
    w->c = calloc(w->n, sizeof *w->c);
    for (size_t i = 0; i < w->n; i++) {
        json_t *c = json_array_get(cfgs, i);
        w->c[i].params = json_incref(json_object_get(c, "params"));
        w->c[i].cmd = json_incref(json_object_get(c, "cmd"));
        w->c[i].jobs = json_array();
    }
    json_decref(cfgs);
    w->pol = slaq_sweep_new(w->spec.policy, &w->spec.p, w->n, err, errlen);
    if (!w->pol) {
        sweep_free(w);
        return NULL;
    }
    return w;
}

static void sweep_link(sd_daemon *d, sd_sweep *w)
{
    sd_sweep **p = sweeps_head(d);
    while (*p)
        p = &(*p)->next;
    *p = w;
}

int sweep_restore(sd_daemon *d)
{
    char *msg = NULL;
    if (sqlite3_exec(store_db(d->store), sweep_schema, NULL, NULL, &msg)) {
        sd_log(d, 0, "sweeps: %s", msg ? msg : "?");
        sqlite3_free(msg);
        return -1;
    }
    /* An older slaqd's sweeps table gains the owner (NULL: slaqd's own
     * user, as whom its jobs ran). */
    static const char *const owner_cols[] = {"uid INTEGER", "user TEXT"};
    for (int i = 0; i < 2; i++) {
        char q[128];
        snprintf(q, sizeof q, "ALTER TABLE sweeps ADD COLUMN %s",
                 owner_cols[i]);
        sqlite3_stmt *t;
        char probe[128];
        snprintf(probe, sizeof probe, "SELECT count(*) FROM "
                 "pragma_table_info('sweeps') WHERE name = '%.*s'",
                 (int)strcspn(owner_cols[i], " "), owner_cols[i]);
        int have = 0;
        if (sqlite3_prepare_v2(store_db(d->store), probe, -1, &t, NULL) ==
            SQLITE_OK) {
            have = sqlite3_step(t) == SQLITE_ROW && sqlite3_column_int(t, 0);
            sqlite3_finalize(t);
        }
        if (!have && sqlite3_exec(store_db(d->store), q, NULL, NULL, &msg)) {
            sd_log(d, 0, "sweeps: %s", msg ? msg : "?");
            sqlite3_free(msg);
            return -1;
        }
    }
    sd_user self;
    user_self(d, &self);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(d->store), "SELECT id, spec, cwd, state, "
                           "note, created, ended, reached, reached_config, "
                           "best, best_config, uid, user FROM sweeps ORDER "
                           "BY id", -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char err[512];
        json_t *spec = json_loads((const char *)sqlite3_column_text(st, 1), 0,
                                  NULL);
        sd_sweep *w = spec ? sweep_build(spec, (const char *)
                                         sqlite3_column_text(st, 2), err,
                                         sizeof err) : NULL;
        json_decref(spec);
        if (!w) {
            sd_log(d, 0, "sweep %lld: cannot be read back: %s",
                   (long long)sqlite3_column_int64(st, 0),
                   spec ? err : "bad spec");
            continue;
        }
        w->id = sqlite3_column_int64(st, 0);
        snprintf(w->state, sizeof w->state, "%s",
                 (const char *)sqlite3_column_text(st, 3));
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            w->note = strdup((const char *)sqlite3_column_text(st, 4));
        w->created = sqlite3_column_double(st, 5);
        w->ended = sqlite3_column_double(st, 6);
        w->reached = sqlite3_column_type(st, 7) == SQLITE_NULL
                         ? -1 : sqlite3_column_double(st, 7);
        w->reached_cfg = sqlite3_column_int64(st, 8);
        w->best = sqlite3_column_type(st, 9) == SQLITE_NULL
                      ? NAN : sqlite3_column_double(st, 9);
        w->best_cfg = sqlite3_column_int64(st, 10);
        w->uid = sqlite3_column_type(st, 11) == SQLITE_NULL
                     ? self.uid : (uid_t)sqlite3_column_int64(st, 11);
        w->user = strdup(sqlite3_column_type(st, 12) == SQLITE_NULL
                             ? self.name
                             : (const char *)sqlite3_column_text(st, 12));
        /* Jobs of each configuration. */
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(store_db(d->store), "SELECT idx, jobs FROM "
                               "sweep_configs WHERE sweep = ?", -1, &q,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, w->id);
            while (sqlite3_step(q) == SQLITE_ROW) {
                size_t i = (size_t)sqlite3_column_int64(q, 0);
                json_t *jobs = json_loads((const char *)
                                          sqlite3_column_text(q, 1), 0, NULL);
                if (i < w->n && json_is_array(jobs)) {
                    json_decref(w->c[i].jobs);
                    w->c[i].jobs = jobs;
                    w->c[i].started = json_array_size(jobs) > 0;
                } else {
                    json_decref(jobs);
                }
            }
            sqlite3_finalize(q);
        }
        /* The policy as it was: every call again, in order. */
        if (!strcmp(w->state, "running") &&
            sqlite3_prepare_v2(store_db(d->store), "SELECT seq, t, kind, "
                               "cfg, epoch, metric, epoch_s FROM sweep_log "
                               "WHERE sweep = ? ORDER BY seq", -1, &q,
                               NULL) == SQLITE_OK) {
            sqlite3_bind_int64(q, 1, w->id);
            while (sqlite3_step(q) == SQLITE_ROW) {
                w->seq = sqlite3_column_int64(q, 0) + 1;
                double t = sqlite3_column_double(q, 1);
                const char *kind = (const char *)sqlite3_column_text(q, 2);
                size_t i = (size_t)sqlite3_column_int64(q, 3);
                if (i >= w->n || !kind)
                    continue;
                if (!strcmp(kind, "next")) {
                    size_t got = slaq_sweep_next(w->pol, t);
                    if (got != i)
                        sd_log(d, 0, "sweep %lld: replay chose %zu, the log "
                               "%zu", (long long)w->id, got, i);
                } else if (!strcmp(kind, "report")) {
                    slaq_sweep_report(w->pol, i, sqlite3_column_int(q, 4),
                                      sqlite3_column_double(q, 5),
                                      sqlite3_column_double(q, 6), t);
                    w->c[i].seen = sqlite3_column_int(q, 4);
                } else if (!strcmp(kind, "ended")) {
                    slaq_sweep_ended(w->pol, i, t);
                }
            }
            sqlite3_finalize(q);
            for (size_t i = 0; i < w->n; i++)
                w->c[i].last_t = sd_now();
            sd_log(d, 0, "sweep %lld (%s): resumed after a restart (%lld "
                   "policy calls replayed)", (long long)w->id, w->spec.name,
                   (long long)w->seq);
        } else {
            slaq_sweep_free(w->pol);
            w->pol = NULL;
        }
        sweep_link(d, w);
    }
    sqlite3_finalize(st);
    return 0;
}

/* ------------------------------------------------------------ requests */

static json_t *sweep_json(sd_daemon *d, sd_sweep *w, int detail)
{
    json_t *o = json_object();
    double now = sd_now();
    json_object_set_new(o, "id", json_integer(w->id));
    json_object_set_new(o, "name", json_string(w->spec.name));
    json_object_set_new(o, "user", json_string(w->user ? w->user : "?"));
    json_object_set_new(o, "state", json_string(w->state));
    json_object_set_new(o, "note", w->note ? json_string(w->note)
                                           : json_null());
    json_object_set_new(o, "policy", json_string(w->spec.policy));
    json_object_set_new(o, "slots", json_integer((json_int_t)w->spec.p.slots));
    json_object_set_new(o, "metric", json_string(w->spec.metric));
    json_object_set_new(o, "direction", json_string(w->spec.p.maximize
                                                    ? "max" : "min"));
    json_object_set_new(o, "y_target", json_real(w->spec.p.y_target));
    json_object_set_new(o, "epochs", json_integer(w->spec.p.max_epochs));
    json_object_set_new(o, "configs", json_integer((json_int_t)w->n));
    json_object_set_new(o, "created", json_real(w->created));
    json_object_set_new(o, "ended", w->ended > 0 ? json_real(w->ended)
                                                 : json_null());
    json_object_set_new(o, "elapsed_s", json_real((w->ended > 0 ? w->ended
                                                   : now) - w->created));
    json_object_set_new(o, "time_to_target_s", w->reached >= 0
                        ? json_real(w->reached) : json_null());
    json_object_set_new(o, "reached_config", w->reached >= 0
                        ? json_integer(w->reached_cfg) : json_null());
    json_object_set_new(o, "best", isfinite(w->best) ? json_real(w->best)
                                                     : json_null());
    json_object_set_new(o, "best_config", w->best_cfg >= 0
                        ? json_integer(w->best_cfg) : json_null());
    double sp = 0, thr = w->pol ? slaq_sweep_threshold(w->pol, &sp) : NAN;
    json_object_set_new(o, "threshold", isfinite(thr) ? json_real(thr)
                                                      : json_null());
    size_t counts[5] = {0};
    json_t *cfgs = json_array();
    sqlite3_stmt *stored = NULL, *curve = NULL;
    sqlite3_prepare_v2(store_db(d->store), "SELECT state, class, p, epochs, "
                       "best FROM sweep_configs WHERE sweep = ? AND idx = ?",
                       -1, &stored, NULL);
    sqlite3_prepare_v2(store_db(d->store), w->spec.metric && !strcmp(
                           w->spec.metric, "loss")
                       ? "SELECT iter, loss, t FROM reports WHERE job = ? AND "
                         "iter >= 1 ORDER BY iter"
                       : "SELECT iter, metric, t FROM reports WHERE job = ? "
                         "AND iter >= 1 AND metric IS NOT NULL ORDER BY iter",
                       -1, &curve, NULL);
    for (size_t i = 0; i < w->n; i++) {
        slaq_sweep_info in = {0};
        if (!detail && w->pol) {
            /* The summary only counts states: no object per
             * configuration (a sweep may have 10,000). */
            if (slaq_sweep_get(w->pol, i, &in) == 0)
                counts[in.state < 5 ? in.state : 0]++;
            continue;
        }
        if (!detail && stored) { /* ended: the states it was left in */
            sqlite3_bind_int64(stored, 1, w->id);
            sqlite3_bind_int64(stored, 2, (sqlite3_int64)i);
            const unsigned char *sn = sqlite3_step(stored) == SQLITE_ROW
                                          ? sqlite3_column_text(stored, 0)
                                          : NULL;
            for (int k = 0; k < 5; k++)
                if (!strcmp(sn ? (const char *)sn : "new",
                            state_name((slaq_sweep_state)k)))
                    counts[k]++;
            sqlite3_reset(stored);
            continue;
        }
        json_t *c = json_object();
        json_object_set_new(c, "index", json_integer((json_int_t)i));
        json_object_set_new(c, "params", json_incref(w->c[i].params));
        json_object_set_new(c, "jobs", json_incref(w->c[i].jobs));
        sd_job *j = cfg_job(d, w, i);
        json_object_set_new(c, "job", j ? json_integer(j->id) : json_null());
        if (w->pol && slaq_sweep_get(w->pol, i, &in) == 0) {
            const char *cl = class_name(in.cls);
            json_object_set_new(c, "state", json_string(state_name(in.state)));
            json_object_set_new(c, "class", cl ? json_string(cl)
                                               : json_null());
            json_object_set_new(c, "p", isfinite(in.p) ? json_real(in.p)
                                                       : json_null());
            json_object_set_new(c, "ert", isfinite(in.ert)
                                ? json_real(in.ert) : json_null());
            json_object_set_new(c, "epochs", json_integer(in.epochs));
            json_object_set_new(c, "best", isfinite(in.best)
                                ? json_real(in.best) : json_null());
            counts[in.state < 5 ? in.state : 0]++;
        } else if (stored) {
            sqlite3_bind_int64(stored, 1, w->id);
            sqlite3_bind_int64(stored, 2, (sqlite3_int64)i);
            int row = sqlite3_step(stored) == SQLITE_ROW;
            const unsigned char *s0 = row ? sqlite3_column_text(stored, 0)
                                          : NULL;
            const unsigned char *s1 = row ? sqlite3_column_text(stored, 1)
                                          : NULL;
            const char *sn = s0 ? (const char *)s0 : "new";
            json_object_set_new(c, "state", json_string(sn));
            for (int k = 0; k < 5; k++)
                if (!strcmp(sn, state_name((slaq_sweep_state)k)))
                    counts[k]++;
            json_object_set_new(c, "class", s1 ? json_string((const char *)s1)
                                               : json_null());
            json_object_set_new(c, "p", row && sqlite3_column_type(stored, 2)
                                != SQLITE_NULL ? json_real(
                                    sqlite3_column_double(stored, 2))
                                : json_null());
            json_object_set_new(c, "epochs", json_integer(
                row ? sqlite3_column_int(stored, 3) : 0));
            json_object_set_new(c, "best", row && sqlite3_column_type(
                stored, 4) != SQLITE_NULL ? json_real(sqlite3_column_double(
                                                stored, 4)) : json_null());
            sqlite3_reset(stored);
        }
        if (detail) {
            json_object_set_new(c, "cmd", json_incref(w->c[i].cmd));
            json_t *pts = json_array();
            size_t k;
            json_t *jid;
            json_array_foreach(w->c[i].jobs, k, jid) {
                if (!curve)
                    break;
                sqlite3_bind_int64(curve, 1, json_integer_value(jid));
                while (sqlite3_step(curve) == SQLITE_ROW)
                    json_array_append_new(pts, json_pack(
                        "[i, f, f]", sqlite3_column_int(curve, 0),
                        sqlite3_column_double(curve, 1),
                        sqlite3_column_double(curve, 2) - w->created));
                sqlite3_reset(curve);
            }
            json_object_set_new(c, "curve", pts);
        }
        json_array_append_new(cfgs, c);
    }
    sqlite3_finalize(stored);
    sqlite3_finalize(curve);
    json_t *cnt = json_pack("{s:I, s:I, s:I, s:I, s:I}", "new",
                            (json_int_t)counts[SLAQ_CFG_NEW], "running",
                            (json_int_t)counts[SLAQ_CFG_RUNNING], "suspended",
                            (json_int_t)counts[SLAQ_CFG_SUSPENDED], "killed",
                            (json_int_t)counts[SLAQ_CFG_KILLED], "ended",
                            (json_int_t)counts[SLAQ_CFG_ENDED]);
    json_object_set_new(o, "counts", cnt);
    if (detail)
        json_object_set_new(o, "config_list", cfgs);
    else
        json_decref(cfgs);
    return o;
}

static json_t *result_ok(void)
{
    return json_pack("{s:s, s:b}", "type", "result", "ok", 1);
}

static sd_sweep *req_sweep(sd_daemon *d, json_t *req, json_t **reply)
{
    json_t *v = json_object_get(req, "sweep");
    int64_t id = json_is_integer(v) ? json_integer_value(v)
                 : json_is_string(v) ? strtoll(json_string_value(v), NULL, 10)
                 : -1;
    if (id < 1) {
        *reply = api_error("bad_request", "field \"sweep\" must be a sweep "
                           "id (a positive integer)");
        return NULL;
    }
    sd_sweep *w = sweep_get(d, id);
    if (!w)
        *reply = api_error("unknown_sweep", "no sweep with id %lld",
                           (long long)id);
    return w;
}

/* True when SIGTERM, SIGINT or SIGHUP waits in the signalfd (they are
 * blocked, so they stay pending until the event loop reads them): long
 * work checks it to give the loop its turn. */
static int term_pending(void)
{
    sigset_t set;
    if (sigpending(&set) < 0)
        return 0;
    return sigismember(&set, SIGTERM) == 1 || sigismember(&set, SIGINT) == 1
           || sigismember(&set, SIGHUP) == 1;
}

json_t *api_sweep(sd_daemon *d, const char *type, json_t *req,
                  const sd_user *who)
{
    json_t *reply = NULL;
    sd_sweep *w;
    if (!strcmp(type, "sweep_submit")) {
        char err[512];
        if ((reply = user_may_submit(d, who)))
            return reply;
        const char *cwd = json_string_value(json_object_get(req, "cwd"));
        w = sweep_build(json_object_get(req, "spec"), cwd, err, sizeof err);
        if (!w)
            return api_error("bad_spec", "%s", err);
        int64_t last = 0;
        for (sd_sweep *x = *sweeps_head(d); x; x = x->next)
            if (x->id > last)
                last = x->id;
        w->id = last + 1;
        w->created = sd_now();
        w->uid = who->uid;
        if (!(w->user = strdup(who->name))) {
            sweep_free(w);
            return api_error("no_memory", "out of memory");
        }
        put_sweep(d, w);
        /* In steps, so that a SIGTERM meanwhile is not kept waiting for
         * the whole sweep: the submission is then undone. */
        for (size_t i = 0; i < w->n; i += 500) {
            if (term_pending()) {
                exec_bound(d, "DELETE FROM sweep_configs WHERE sweep = ?",
                           "i", w->id);
                exec_bound(d, "DELETE FROM sweeps WHERE id = ?", "i", w->id);
                sweep_free(w);
                return api_error("shutting_down", "slaqd is shutting down; "
                                 "the sweep was not started");
            }
            put_configs(d, w, i, w->n - i < 500 ? w->n : i + 500);
        }
        if (store_flush(d->store) < 0) {
            sweep_free(w);
            return api_error("store_failed", "slaqd cannot write its "
                             "database (%s); the sweep was not started",
                             store_error(d->store));
        }
        sweep_link(d, w);
        sd_log(d, 0, "sweep %lld (%s): %zu configurations, %zu slots, "
               "policy %s", (long long)w->id, w->spec.name, w->n,
               w->spec.p.slots, w->spec.policy);
        sweep_step(d, w);
        reply = result_ok();
        json_object_set_new(reply, "sweep", sweep_json(d, w, 0));
        return reply;
    }
    if (!strcmp(type, "sweep_ls")) {
        json_t *a = json_array();
        for (w = *sweeps_head(d); w; w = w->next)
            json_array_append_new(a, sweep_json(d, w, 0));
        reply = result_ok();
        json_object_set_new(reply, "sweeps", a);
        return reply;
    }
    if (!strcmp(type, "sweep_show") || !strcmp(type, "sweep_cancel")) {
        if (!(w = req_sweep(d, req, &reply)))
            return reply;
        if (!strcmp(type, "sweep_cancel")) {
            char what[32];
            snprintf(what, sizeof what, "sweep %lld", (long long)w->id);
            if ((reply = user_may_act_on(who, w->uid, w->user, what,
                                         "cancel")))
                return reply;
            if (strcmp(w->state, "running"))
                return api_error("not_active", "sweep %lld is already %s",
                                 (long long)w->id, w->state);
            sweep_end(d, w, "cancelled", "cancelled by a user");
        }
        reply = result_ok();
        json_object_set_new(reply, "sweep", sweep_json(d, w, 1));
        return reply;
    }
    return api_error("unknown_type", "unknown request type \"%.64s\"", type);
}

json_t *sweep_http_list(sd_daemon *d)
{
    json_t *a = json_array();
    for (sd_sweep *w = *sweeps_head(d); w; w = w->next)
        json_array_append_new(a, sweep_json(d, w, 0));
    return json_pack("{s:b, s:o}", "ok", 1, "sweeps", a);
}

json_t *sweep_http_one(sd_daemon *d, int64_t id)
{
    sd_sweep *w = sweep_get(d, id);
    return w ? json_pack("{s:b, s:o}", "ok", 1, "sweep", sweep_json(d, w, 1))
             : NULL;
}
