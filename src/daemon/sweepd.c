/*
 * sweepd.c — hyperparameter sweeps under slaqd (`slaq sweep`,
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
 * State in state.db (store_sweep.c): sweeps (the spec and the outcome),
 * sweep_configs (the generated configurations, their jobs and last known
 * class), and sweep_log, every call made to the policy with its clock. After a restart
 * the policy is rebuilt by replaying the log (it is deterministic), and
 * the sweep goes on with the jobs slaqd re-adopted.
 *
 * The policy's clock is seconds since the sweep was created.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/api_reply.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/sweepd.h"
#include "daemon/users.h"
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
    char *env;             /* its submitter's environment (JSON), or NULL:
                              each configuration's job starts with it */
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

static sd_sweep **sweeps_head(sd_daemon *d)
{
    return (sd_sweep **)&d->sweeps;
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

static void put_sweep(sd_daemon *d, sd_sweep *w)
{
    char *spec = json_dumps(w->spec_json, JSON_COMPACT);
    store_sweep_row row = {
        .id = w->id, .name = w->spec.name, .spec = spec, .cwd = w->cwd,
        .state = w->state, .note = w->note, .created = w->created,
        .ended = w->ended, .reached = w->reached,
        .reached_config = w->reached_cfg, .best = w->best,
        .best_config = w->best_cfg, .uid = (int64_t)w->uid, .user = w->user,
        .env = w->env,
    };
    if (store_put_sweep(d->store, &row) < 0)
        sd_log(d, 0, "sweeps: %s", store_errmsg(d->store));
    free(spec);
}

/* Writes configurations [from, to) of w: every column while the policy
 * knows them, else (the sweep ended) their jobs only. */
static void put_configs(sd_daemon *d, sd_sweep *w, size_t from, size_t to)
{
    enum { CHUNK = 64 };
    store_sweep_config c[CHUNK];
    char *text[CHUNK][3];
    int rc = 0;
    for (size_t at = from; at < to; at += CHUNK) {
        size_t n = to - at < CHUNK ? to - at : CHUNK;
        for (size_t k = 0; k < n; k++) {
            size_t i = at + k;
            slaq_sweep_info in = {0};
            text[k][2] = json_dumps(w->c[i].jobs, JSON_COMPACT);
            if (!w->pol) {
                text[k][0] = text[k][1] = NULL;
                rc |= store_set_sweep_config_jobs(d->store, w->id,
                                                  (int64_t)i, text[k][2]);
                continue;
            }
            slaq_sweep_get(w->pol, i, &in);
            text[k][0] = json_dumps(w->c[i].params, JSON_COMPACT);
            text[k][1] = json_dumps(w->c[i].cmd, JSON_COMPACT);
            c[k] = (store_sweep_config){
                .sweep = w->id, .idx = (int64_t)i, .params = text[k][0],
                .cmd = text[k][1], .jobs = text[k][2],
                .state = state_name(in.state), .cls = class_name(in.cls),
                .p = in.p, .epochs = in.epochs, .best = in.best,
            };
        }
        if (w->pol)
            rc |= store_put_sweep_configs(d->store, c, n);
        for (size_t k = 0; k < n; k++)
            for (int t = 0; t < 3; t++)
                free(text[k][t]);
    }
    if (rc)
        sd_log(d, 0, "sweeps: %s", store_errmsg(d->store));
}

static void put_config(sd_daemon *d, sd_sweep *w, size_t i)
{
    put_configs(d, w, i, i + 1);
}

static void log_call(sd_daemon *d, sd_sweep *w, double t, const char *kind,
                     size_t cfg, int epoch, double metric, double epoch_s)
{
    store_sweep_call c = {w->seq++, t, kind, (int64_t)cfg, epoch, metric,
                          epoch_s};
    if (store_sweep_call_add(d->store, w->id, &c) < 0)
        sd_log(d, 0, "sweeps: %s", store_errmsg(d->store));
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
    free(w->env);
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

/* feed's walk over a job's values. */
struct feed_walk {
    sd_daemon *d;
    sd_sweep *w;
    size_t i;
    double now;
    int action;
};

/* One epoch's value of configuration i to the policy; nonzero stops. */
static int feed_epoch(void *arg, int64_t iter, double m, double t)
{
    struct feed_walk *f = arg;
    sd_sweep *w = f->w;
    struct sw_rt_cfg *c = &w->c[f->i];
    int epoch = (int)iter;
    if (epoch == 0) {
        /* The job's report before training: its first epoch is timed
         * from here, not from its start (loading data is no epoch). */
        if (c->seen == 0)
            c->last_t = t;
        return 0;
    }
    if (epoch > w->spec.p.max_epochs)
        return 1;
    double es = t - c->last_t;
    if (!(es > 0))
        es = 1e-3;
    int rc = slaq_sweep_report(w->pol, f->i, epoch, m, es, f->now);
    if (rc < 0)
        return 1;
    log_call(f->d, w, f->now, "report", f->i, epoch, m, es);
    c->seen = epoch;
    c->last_t = t;
    f->action = rc;
    if (!isfinite(w->best) || (w->spec.p.maximize ? m > w->best
                                                  : m < w->best)) {
        w->best = m;
        w->best_cfg = (int64_t)f->i;
    }
    if (meets(w, m) && !(w->reached >= 0)) {
        w->reached = f->now;
        w->reached_cfg = (int64_t)f->i;
        sd_log(f->d, 0, "sweep %lld: configuration %zu reached %s %g at "
               "%.1f s", (long long)w->id, f->i, w->spec.metric, m, f->now);
    }
    return f->action != SLAQ_SWEEP_CONTINUE;
}

/* Gives the policy configuration i's new epochs from job j's reports.
 * Returns the action of the last (CONTINUE when none). */
static int feed(sd_daemon *d, sd_sweep *w, size_t i, sd_job *j, double now)
{
    int uses_loss = !strcmp(w->spec.metric, "loss");
    if (!uses_loss && j->hist.metric_name && strcmp(j->hist.metric_name,
                                               w->spec.metric)) {
        char note[256];
        snprintf(note, sizeof note, "job %lld reports the metric \"%s\", not "
                 "\"%s\" as the spec's metric says", (long long)j->id,
                 j->hist.metric_name, w->spec.metric);
        sweep_end(d, w, "failed", note);
        return -1;
    }
    struct feed_walk f = {d, w, i, now, SLAQ_SWEEP_CONTINUE};
    store_each_value(d->store, j->id, w->c[i].seen, uses_loss, feed_epoch,
                     &f);
    put_config(d, w, i);
    return f.action;
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
        if (w->env)
            json_object_set_new(req, "env", json_loads(w->env, 0, NULL));
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
        if (old->proc.suspended == SD_SUSP_CHECKPOINT && SD_ACTIVE(old->state))
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

/*
 * Whether configuration i of w holds one of its slots: its job is active
 * and not SIGSTOPped. A configuration the policy killed or suspended runs
 * on until its process is gone or stopped: a cancel or a checkpoint
 * suspend takes until the process exits (and its exit reaches here, from
 * an agent that may be away meanwhile), a signal suspend until its agent
 * answers (susp_wait). Until then another configuration in its slot would
 * run beside it, one more than the slots.
 */
static int holds_slot(sd_daemon *d, sd_sweep *w, size_t i)
{
    sd_job *j = cfg_job(d, w, i);
    if (!j || !SD_ACTIVE(j->state))
        return 0;
    return w->c[i].susp_wait || j->proc.suspended != SD_SUSP_SIGNAL;
}

static void sweep_step(sd_daemon *d, sd_sweep *w)
{
    double now = sd_now() - w->created;
    size_t running = 0;
    for (size_t i = 0; i < w->n && w->pol; i++) {
        slaq_sweep_info in;
        slaq_sweep_get(w->pol, i, &in);
        sd_job *j = cfg_job(d, w, i);
        if (in.state != SLAQ_CFG_RUNNING || !j) {
            running += holds_slot(d, w, i);
            continue;
        }
        int a = feed(d, w, i, j, now);
        if (!w->pol)
            return;
        if (a == SLAQ_SWEEP_SUSPEND) {
            double ms;
            char err[512];
            log_call(d, w, now, "suspend", i, 0, NAN, NAN);
            int rc = job_suspend(d, j, w->spec.checkpoint, &ms, err,
                                 sizeof err);
            if (rc < 0)
                suspend_failed(d, w, i, j, err);
            else if (rc == 1)
                w->c[i].susp_wait = 1;
            running += holds_slot(d, w, i);
        } else if (a == SLAQ_SWEEP_KILL) {
            log_call(d, w, now, "kill", i, 0, NAN, NAN);
            if (SD_ACTIVE(j->state))
                job_cancel(d, j, 1);
            running += holds_slot(d, w, i);
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

/* Each configuration's jobs, read back. */
static int restore_jobs(void *arg, int64_t idx, const char *text)
{
    sd_sweep *w = arg;
    size_t i = (size_t)idx;
    json_t *jobs = text ? json_loads(text, 0, NULL) : NULL;
    if (idx >= 0 && i < w->n && json_is_array(jobs)) {
        json_decref(w->c[i].jobs);
        w->c[i].jobs = jobs;
        w->c[i].started = json_array_size(jobs) > 0;
    } else {
        json_decref(jobs);
    }
    return 0;
}

struct restore_walk {
    sd_daemon *d;
    sd_sweep *w;
};

/* One call of the policy's log made again. */
static int restore_call(void *arg, const store_sweep_call *c)
{
    struct restore_walk *r = arg;
    sd_sweep *w = r->w;
    size_t i = (size_t)c->cfg;
    w->seq = c->seq + 1;
    if (c->cfg < 0 || i >= w->n || !c->kind)
        return 0;
    if (!strcmp(c->kind, "next")) {
        size_t got = slaq_sweep_next(w->pol, c->t);
        if (got != i)
            sd_log(r->d, 0, "sweep %lld: replay chose %zu, the log %zu",
                   (long long)w->id, got, i);
    } else if (!strcmp(c->kind, "report")) {
        slaq_sweep_report(w->pol, i, (int)c->epoch, c->metric, c->epoch_s,
                          c->t);
        w->c[i].seen = (int)c->epoch;
    } else if (!strcmp(c->kind, "ended")) {
        slaq_sweep_ended(w->pol, i, c->t);
    }
    return 0;
}

/* One sweep read back: its configurations' jobs and, while it runs, its
 * policy as it was (every call again, in order). */
static int restore_sweep(void *arg, const store_sweep_row *row)
{
    sd_daemon *d = arg;
    char err[512];
    json_t *spec = row->spec ? json_loads(row->spec, 0, NULL) : NULL;
    sd_sweep *w = spec ? sweep_build(spec, row->cwd, err, sizeof err) : NULL;
    json_decref(spec);
    if (!w) {
        sd_log(d, 0, "sweep %lld: cannot be read back: %s",
               (long long)row->id, spec ? err : "bad spec");
        return 0;
    }
    sd_user self;
    user_self(d, &self);
    w->id = row->id;
    snprintf(w->state, sizeof w->state, "%s", row->state ? row->state : "?");
    if (row->note)
        w->note = strdup(row->note);
    w->created = isnan(row->created) ? 0 : row->created;
    w->ended = isnan(row->ended) ? 0 : row->ended;
    w->reached = isnan(row->reached) ? -1 : row->reached;
    w->reached_cfg = row->reached_config;
    w->best = row->best;
    w->best_cfg = row->best_config;
    /* An older slaqd's sweep has no owner: slaqd's own user, as whom its
     * jobs ran. */
    w->uid = row->uid < 0 ? self.uid : (uid_t)row->uid;
    w->user = strdup(row->uid < 0 || !row->user ? self.name : row->user);
    if (row->env)
        w->env = strdup(row->env);
    store_each_sweep_jobs(d->store, w->id, restore_jobs, w);
    if (!strcmp(w->state, "running")) {
        struct restore_walk r = {d, w};
        store_each_sweep_call(d->store, w->id, restore_call, &r);
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
    return 0;
}

int sweep_restore(sd_daemon *d)
{
    if (store_each_sweep(d->store, restore_sweep, d) < 0) {
        sd_log(d, 0, "sweeps: %s", store_errmsg(d->store));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ requests */

/* sweep_json's curve of a configuration: [epoch, value, seconds since
 * the sweep was created] per epoch from 1 on. */
struct curve_walk {
    json_t *pts;
    double created;
};

static int curve_point(void *arg, int64_t iter, double v, double t)
{
    struct curve_walk *cw = arg;
    if (iter >= 1)
        json_array_append_new(cw->pts, json_pack("[i, f, f]", (int)iter, v,
                                                 t - cw->created));
    return 0;
}

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
    int on_loss = w->spec.metric && !strcmp(w->spec.metric, "loss");
    for (size_t i = 0; i < w->n; i++) {
        slaq_sweep_info in = {0};
        if (!detail && w->pol) {
            /* The summary only counts states: no object per
             * configuration (a sweep may have 10,000). */
            if (slaq_sweep_get(w->pol, i, &in) == 0)
                counts[in.state < 5 ? in.state : 0]++;
            continue;
        }
        /* Without the policy (ended): the states it was left in. */
        store_sweep_config sc;
        int row = (!w->pol || slaq_sweep_get(w->pol, i, &in) != 0) &&
                  store_get_sweep_config(d->store, w->id, (int64_t)i, &sc)
                      == 1;
        if (!detail) {
            const char *sn = row && sc.state ? sc.state : "new";
            for (int k = 0; k < 5; k++)
                if (!strcmp(sn, state_name((slaq_sweep_state)k)))
                    counts[k]++;
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
        } else {
            const char *sn = row && sc.state ? sc.state : "new";
            json_object_set_new(c, "state", json_string(sn));
            for (int k = 0; k < 5; k++)
                if (!strcmp(sn, state_name((slaq_sweep_state)k)))
                    counts[k]++;
            json_object_set_new(c, "class", row && sc.cls
                                ? json_string(sc.cls) : json_null());
            json_object_set_new(c, "p", row && !isnan(sc.p)
                                ? json_real(sc.p) : json_null());
            json_object_set_new(c, "epochs", json_integer(
                row ? (int)sc.epochs : 0));
            json_object_set_new(c, "best", row && !isnan(sc.best)
                                ? json_real(sc.best) : json_null());
        }
        if (detail) {
            json_object_set_new(c, "cmd", json_incref(w->c[i].cmd));
            json_t *pts = json_array();
            size_t k;
            json_t *jid;
            struct curve_walk cw = {pts, w->created};
            json_array_foreach(w->c[i].jobs, k, jid)
                store_each_value(d->store, json_integer_value(jid), 0,
                                 on_loss, curve_point, &cw);
            json_object_set_new(c, "curve", pts);
        }
        json_array_append_new(cfgs, c);
    }
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

json_t *sweep_request(sd_daemon *d, const char *type, json_t *req,
                  const sd_user *who)
{
    json_t *reply = NULL;
    sd_sweep *w;
    if (!strcmp(type, "sweep_submit")) {
        char err[512];
        if ((reply = api_denied(user_may_submit(d, who, err, sizeof err),
                                err)))
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
        json_t *env = json_object_get(req, "env");
        if (env && !json_is_array(env)) {
            sweep_free(w);
            return api_error("bad_request", "field \"env\" must be an array "
                             "of \"NAME=value\" strings");
        }
        if (!(w->user = strdup(who->name)) ||
            (env && !(w->env = json_dumps(env, JSON_COMPACT)))) {
            sweep_free(w);
            return api_error("no_memory", "out of memory");
        }
        put_sweep(d, w);
        /* In steps, so that a SIGTERM meanwhile is not kept waiting for
         * the whole sweep: the submission is then undone. */
        for (size_t i = 0; i < w->n; i += 500) {
            if (term_pending()) {
                if (store_delete_sweep(d->store, w->id) < 0)
                    sd_log(d, 0, "sweeps: %s", store_errmsg(d->store));
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
            char why[512];
            if ((reply = api_denied(user_may_act_on(who, w->uid, w->user,
                                                    what, "cancel", why,
                                                    sizeof why), why)))
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
