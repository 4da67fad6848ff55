/*
 * api.c — the requests slaqd answers, shared by the control socket (the
 * slaq command) and the HTTP API, so that both always agree.
 *
 * A request is a JSON object whose "type" names it; the reply is an object
 * {"type":"result","ok":true,...} or {"type":"result","ok":false,"code":C,
 * "message":M}. docs/protocol.md lists every request and error code.
 */
#include <math.h>
#include <pwd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/accounts.h"
#include "daemon/api.h"
#include "daemon/aqpd.h"
#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/agent_link.h"
#include "daemon/counters.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/loop.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/sweepd.h"
#include "daemon/users.h"
#include "slaq/settings.h"

static json_t *ok(void)
{
    return json_pack("{s:s, s:b}", "type", "result", "ok", 1);
}

/* Finds the job named by req's "job" field, or sets *reply to an error. */
static sd_job *req_job(sd_daemon *d, json_t *req, json_t **reply)
{
    json_t *v = json_object_get(req, "job");
    int64_t id = -1;
    if (json_is_integer(v))
        id = json_integer_value(v);
    else if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        id = strtoll(s, &end, 10);
        if (end == s || *end)
            id = -1;
    }
    if (id < 1) {
        *reply = api_error("bad_request", "field \"job\" must be a job id "
                                          "(a positive integer)");
        return NULL;
    }
    sd_job *j = job_get(d, id);
    if (!j)
        *reply = api_error("unknown_job", "no job with id %lld",
                           (long long)id);
    return j;
}

/* Every scheduler setting (slaq/settings.h) by its name, as the text its
 * option and the configuration file take: what `slaq status` prints. The
 * fields above it are the older, typed copies of some, kept for clients. */
static json_t *api_settings(const slaq_sched_config *sc)
{
    json_t *o = json_object();
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const char *name = slaq_setting_at(i)->name;
        char v[64];
        slaq_sched_config_get(sc, name, v, sizeof v);
        json_object_set_new(o, name, json_string(v));
    }
    return o;
}

static json_t *api_status(sd_daemon *d)
{
    const slaq_sched_config *c = slaq_sched_get_config(d->sched);
    json_t *r = ok();
    counter_status(d, r);
    json_object_set_new(r, "pid", json_integer(getpid()));
    json_object_set_new(r, "started", json_real(d->started));
    json_object_set_new(r, "policy", json_string(slaq_policy_name(c->policy)));
    json_object_set_new(r, "predictor",
                        json_string(slaq_predictor_name(c->predictor)));
    json_object_set_new(r, "enforce", json_string(enf_mode_name(d->enf.mode)));
    json_object_set_new(r, "share", json_string(d->cfg.share_quota ? "quota"
                                                                   : "weight"));
    json_object_set_new(r, "job_threads",
                        json_integer((json_int_t)d->cfg.job_threads));
    const slaq_sched_config *sc = slaq_sched_get_config(d->sched);
    json_object_set_new(r, "normalise", json_string(slaq_scale_name(
                                            sc->normalise)));
    json_object_set_new(r, "startup_reports",
                        json_integer((json_int_t)sc->startup_reports));
    json_object_set_new(r, "hysteresis", json_real(sc->hysteresis));
    json_object_set_new(r, "damping", json_real(sc->damping));
    json_object_set_new(r, "horizon_iters", json_real(sc->horizon_iters));
    json_object_set_new(r, "query_min_cores", json_real(sc->query_min_cores));
    json_object_set_new(r, "settings", api_settings(sc));
    json_object_set_new(r, "enforce_detail", json_string(d->enf.detail));
    json_object_set_new(r, "cgroup", d->enf.cg_base ? json_string(d->enf.cg_base)
                                                    : json_null());
    json_object_set_new(r, "limits", limit_json(d));
    json_object_set_new(r, "store_error", store_failing(d->store)
                        ? json_string(store_error(d->store)) : json_null());
    /* The last epochs, oldest first: [epoch, ms, CPU ms, core ms, core
     * CPU ms, jobs, reports_total at its end, wall-clock time at its
     * end, [CPU ms of: forecast check, core, applying, nodes' messages,
     * timeline]]. */
    json_t *recent = json_array();
    for (uint64_t e = d->epoch_no > SD_EPOCH_RING ? d->epoch_no -
                      SD_EPOCH_RING + 1 : 1; e <= d->epoch_no; e++) {
        const struct sd_epoch_rec *er = &d->epoch_ring[e % SD_EPOCH_RING];
        if (er->epoch != e)
            continue; /* an agent's epoch, or none recorded */
        json_array_append_new(recent, json_pack(
            "[I, f, f, f, f, I, I, f, [f, f, f, f, f]]", (json_int_t)e,
            (double)er->ms, (double)er->cpu_ms, (double)er->core_ms,
            (double)er->core_cpu_ms, (json_int_t)er->jobs,
            (json_int_t)er->reports_total, er->t,
            (double)er->part_cpu_ms[0], (double)er->part_cpu_ms[1],
            (double)er->part_cpu_ms[2], (double)er->part_cpu_ms[3],
            (double)er->part_cpu_ms[4]));
    }
    json_object_set_new(r, "recent_epochs", recent);
    json_object_set_new(r, "state_dir", json_string(d->cfg.state_dir));
    json_object_set_new(r, "socket", json_string(d->cfg.socket_path));
    json_object_set_new(r, "http_port", json_integer(d->http_port));
    if (d->http) { /* the address part of --http ADDR:PORT */
        const char *colon = strrchr(d->cfg.http, ':');
        json_object_set_new(r, "http_addr", json_stringn(d->cfg.http,
                colon ? (size_t)(colon - d->cfg.http) : strlen(d->cfg.http)));
    }
    return r;
}

/* Reads an optional non-negative integer field; -1 if malformed. */
static int64_t opt_count(json_t *req, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(req, key);
    if (!v || json_is_null(v))
        return dflt;
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        long long n = strtoll(s, &end, 10);
        return end != s && !*end && n >= 0 ? n : -1;
    }
    return json_is_integer(v) && json_integer_value(v) >= 0
               ? json_integer_value(v) : -1;
}

/* One page of a job's reports, in iteration order: those after iteration
 * "after" (absent or null: from iteration 0), at most "limit" (at most
 * SD_HISTORY_PAGE), and "next", the "after" of the next page (null on the
 * last). Each row is [iter, loss, cpu_s, samples, t, metric]. */
static json_t *api_history(sd_daemon *d, json_t *req)
{
    json_t *reply;
    sd_job *j = req_job(d, req, &reply);
    if (!j)
        return reply;
    int64_t after = opt_count(req, "after", -1);
    int64_t limit = opt_count(req, "limit", SD_HISTORY_PAGE);
    json_t *a = json_object_get(req, "after");
    if ((a && !json_is_null(a) && after < 0) || limit < 1)
        return api_error("bad_request", "fields \"after\" (an iteration; "
                         "absent: from the start) and \"limit\" (a count "
                         ">= 1) must be whole numbers");
    if (limit > SD_HISTORY_PAGE)
        limit = SD_HISTORY_PAGE;
    int64_t next;
    json_t *rows = store_reports_page(d->store, j->id, after, (size_t)limit,
                                      &next);
    reply = ok();
    json_object_set_new(reply, "job", json_integer((json_int_t)j->id));
    json_object_set_new(reply, "columns", json_pack(
        "[s,s,s,s,s,s]", "iter", "loss", "cpu_s", "samples", "t", "metric"));
    json_object_set_new(reply, "rows", rows);
    json_object_set_new(reply, "next", next >= 0 ? json_integer(next)
                                                 : json_null());
    return reply;
}

/* One page of the job table: the jobs with ids after `after`, at most
 * `limit` (at most SD_LS_PAGE), and "next", the `after` of the next page
 * (null on the last), so that a reply stays far below the output cap. */
static json_t *api_ls(sd_daemon *d, json_t *req)
{
    int active_only = json_is_true(json_object_get(req, "active"));
    int64_t after = opt_count(req, "after", 0);
    int64_t limit = opt_count(req, "limit", SD_LS_PAGE);
    if (after < 0 || limit < 1)
        return api_error("bad_request", "fields \"after\" (a job id, 0 for "
                         "the first page) and \"limit\" (>= 1) must be "
                         "integers");
    if (limit > SD_LS_PAGE)
        limit = SD_LS_PAGE;
    json_t *jobs = json_array();
    int64_t last = 0, n = 0;
    size_t i = (uint64_t)after < d->njobs ? (size_t)after : d->njobs;
    for (; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        /* A task array is one row, with its tasks' counts; its tasks are
         * listed by show (docs/arrays.md). */
        sd_array *a = j ? NULL : array_get(d, (int64_t)i + 1);
        if (a && (!active_only || array_active(d, a))) {
            if (n == limit)
                break;
            json_array_append_new(jobs, array_json(d, a, 0));
            last = a->id;
            n++;
            continue;
        }
        if (!j || j->array || (active_only && !SD_ACTIVE(j->state)))
            continue;
        if (n == limit)
            break;
        json_array_append_new(jobs, job_json(d, j, 0));
        last = j->id;
        n++;
    }
    json_t *r = ok();
    json_object_set_new(r, "jobs", jobs);
    json_object_set_new(r, "next", i < d->njobs ? json_integer(last)
                                                : json_null());
    return r;
}

/* show, cancel or logs of task array a (index -1) or of its task index
 * that has no job record yet (pending, or cancelled with the array). */
static json_t *api_array(sd_daemon *d, sd_array *a, long index,
                         const char *type, json_t *req, const sd_user *who)
{
    char err[256], why[512];
    json_t *reply;
    if (!strcmp(type, "logs") && index < 0)
        return api_error("no_logs", "array %lld has no logs of its own; "
                         "each task has its own (slaq logs %lld_N)",
                         (long long)a->id, (long long)a->id);
    if (!strcmp(type, "logs"))
        return api_error("no_logs", "task %lld_%ld has not run: it has no "
                         "logs", (long long)a->id, index);
    if (!strcmp(type, "cancel")) {
        json_t *now = json_object_get(req, "now");
        if (now && !json_is_boolean(now))
            return api_error("bad_request", "field \"now\" must be true or "
                             "false");
        if ((reply = api_denied(user_may_act_on(who, a->uid, a->user,
                                                "this array", "cancel", why,
                                                sizeof why), why)))
            return reply;
        if (array_cancel(d, a, index, json_is_true(now), err,
                         sizeof err) < 0)
            return api_error("not_active", "%s", err);
        if (store_flush(d->store) < 0)
            return api_error("store_failed", "the tasks are being stopped "
                             "but slaqd cannot record it (%s)",
                             store_error(d->store));
    }
    reply = ok();
    if (index < 0) {
        json_t *o = array_json(d, a, !strcmp(type, "show"));
        json_object_set_new(reply, "array", json_incref(o));
        json_object_set_new(reply, "job", o);
    } else {
        const sd_job *j = job_get(d, a->task[index - a->first]);
        json_object_set_new(reply, "job", j ? job_json(d, j, 0)
                                            : array_pending_json(a, index));
    }
    return reply;
}

static json_t *api_policy(sd_daemon *d, json_t *req)
{
    json_t *v = json_object_get(req, "name");
    if (v && !json_is_null(v)) {
        slaq_policy_kind k;
        char names[256];
        if (!json_is_string(v) ||
            slaq_policy_parse(json_string_value(v), &k)) {
            slaq_policy_list(names, sizeof names, ", ");
            return api_error("bad_policy", "unknown policy \"%.64s\" "
                             "(expected one of %s)", json_is_string(v)
                             ? json_string_value(v) : "?", names);
        }
        if (slaq_policy_needs_model(k) &&
            !slaq_sched_get_config(d->sched)->rl)
            return api_error("bad_policy", "policy \"%s\" needs MLF-RL's "
                             "network, and this slaqd has none (start it "
                             "with --rl-model FILE)", slaq_policy_name(k));
        slaq_policy_kind was = slaq_sched_get_config(d->sched)->policy;
        store_event(d->store, sd_now(), 0, "policy", slaq_policy_name(k));
        if (store_flush(d->store) < 0)
            return api_error("store_failed", "slaqd cannot record the "
                             "policy change (%s); the policy stays %s",
                             store_error(d->store), slaq_policy_name(was));
        slaq_sched_set_policy(d->sched, k);
        sd_log(d, 0, "policy is now %s", slaq_policy_name(k));
    }
    json_t *r = ok();
    json_object_set_new(r, "policy", json_string(slaq_policy_name(
                                         slaq_sched_get_config(d->sched)->policy)));
    return r;
}

/* A number field of an account request: 0 (absent: *out unchanged), or
 * 1 with an error reply in *bad. null means no cap (none_v). */
static int account_number(json_t *req, const char *key, double none_v,
                      double *out, json_t **bad)
{
    json_t *v = json_object_get(req, key);
    if (!v)
        return 0;
    if (json_is_null(v) && !isnan(none_v)) {
        *out = none_v;
        return 0;
    }
    if (!json_is_number(v)) {
        *bad = api_error("bad_request", "\"%s\" must be a number%s", key,
                         isnan(none_v) ? "" : " or null (no cap)");
        return 1;
    }
    *out = json_number_value(v);
    return 0;
}

/* account: adds ("op": "add") or changes ("set") an account or user of
 * the shares between users (accounts.c). */
static json_t *api_account(sd_daemon *d, json_t *req)
{
    const char *op = json_string_value(json_object_get(req, "op"));
    const char *name = json_string_value(json_object_get(req, "name"));
    json_t *acc = json_object_get(req, "account"), *bad = NULL;
    if (!op || (strcmp(op, "add") && strcmp(op, "set")))
        return api_error("bad_request", "an account request needs \"op\": "
                         "\"add\" or \"set\"");
    if (!name)
        return api_error("bad_request", "an account request needs a string "
                         "\"name\"");
    if (acc && !json_is_string(acc) && !json_is_null(acc))
        return api_error("bad_request", "\"account\" must be an account's "
                         "name (or null: the root)");
    acct_edit e;
    acct_edit_init(&e, name);
    e.user = json_is_true(json_object_get(req, "user"));
    e.account = acc ? (json_is_null(acc) ? "" : json_string_value(acc))
                    : NULL;
    double jobs = -1;
    if (account_number(req, "weight", NAN, &e.weight, &bad) ||
        account_number(req, "max_cores", INFINITY, &e.max_cores, &bad) ||
        account_number(req, "max_jobs", 0, &jobs, &bad))
        return bad;
    if (jobs != floor(jobs) || jobs < -1 || jobs > 1e9)
        return api_error("bad_request", "\"max_jobs\" must be a whole number "
                         "from 0 (no cap) to 1000000000");
    e.max_jobs = (long long)jobs;
    char err[512];
    if (acct_apply(d, &e, !strcmp(op, "add"), err, sizeof err) < 0)
        return api_error("bad_account", "%s", err);
    if (store_flush(d->store) < 0)
        sd_log(d, 0, "state.db: the account change is not written yet (%s); "
               "it is retried", store_error(d->store));
    sd_log(d, 0, "account %s %s by request", op, name);
    json_t *r = ok();
    json_object_update_missing_new(r, acct_json(d));
    return r;
}

/* user_token: a credential for the asker (the kernel's uid), valid for
 * "valid_s" seconds (default USER_TOKEN_DEFAULT_S, at most
 * USER_TOKEN_MAX_S). */
static json_t *api_user_token(sd_daemon *d, json_t *req, const sd_user *who)
{
    char tok[160], err[512];
    json_t *v = json_object_get(req, "valid_s");
    double valid = v ? json_number_value(v) : USER_TOKEN_DEFAULT_S;
    if (v && (!json_is_number(v) || !(valid >= 1) ||
              valid > USER_TOKEN_MAX_S))
        return api_error("bad_request", "field \"valid_s\" must be a number "
                         "of seconds from 1 to %d (a year)", USER_TOKEN_MAX_S);
    long long expires = (long long)(sd_now() + valid);
    if (user_token_issue(d, who->uid, expires, tok, sizeof tok, err,
                         sizeof err) < 0)
        return api_error("internal", "cannot issue a credential: %s", err);
    json_t *reply = ok();
    json_object_set_new(reply, "user_token", json_string(tok));
    json_object_set_new(reply, "uid", json_integer(who->uid));
    json_object_set_new(reply, "user", json_string(who->name));
    json_object_set_new(reply, "expires", json_integer(expires));
    sodium_memzero(tok, sizeof tok);
    return reply;
}

/* user_token_revoke: every credential of the asker, or (an administrator
 * only) of the user "user" names (a login name or a uid). */
static json_t *api_user_revoke(sd_daemon *d, json_t *req, const sd_user *who)
{
    char err[512], why[512], buf[16384];
    json_t *reply;
    sd_user target = *who;
    const char *name = json_string_value(json_object_get(req, "user"));
    if (json_object_get(req, "user") && (!name || !*name))
        return api_error("bad_request", "field \"user\" must be a user's "
                         "login name or uid");
    if (name) {
        struct passwd pw, *res = NULL;
        char *end;
        unsigned long n = strtoul(name, &end, 10);
        if (*end == 0 && *name >= '0' && *name <= '9' &&
            n < (unsigned long)(uid_t)-1)
            user_from_uid(d, (uid_t)n, (gid_t)-1, &target);
        else if (getpwnam_r(name, &pw, buf, sizeof buf, &res) == 0 && res)
            user_from_uid(d, pw.pw_uid, pw.pw_gid, &target);
        else
            return api_error("bad_request", "no user \"%.64s\" on slaqd's "
                             "machine (expected a login name or a uid)",
                             name);
    }
    if (target.uid != who->uid &&
        (reply = api_denied(user_may_admin(who, "revoke another user's "
                                           "credentials", why, sizeof why),
                            why)))
        return reply;
    unsigned gen;
    if (user_token_revoke(d, target.uid, &gen, err, sizeof err) < 0)
        return api_error("internal", "cannot revoke the credentials of %s: "
                         "%s", target.name, err);
    sd_log(d, 0, "user credentials of %s (uid %u) revoked by %s (uid %u)",
           target.name, (unsigned)target.uid, who->name, (unsigned)who->uid);
    reply = ok();
    json_object_set_new(reply, "uid", json_integer(target.uid));
    json_object_set_new(reply, "user", json_string(target.name));
    json_object_set_new(reply, "generation", json_integer(gen));
    return reply;
}

int api_needs_control(json_t *req)
{
    const char *type = json_string_value(json_object_get(req, "type"));
    json_t *name = json_object_get(req, "name");
    if (!type)
        return 0;
    return !strcmp(type, "submit") || !strcmp(type, "cancel") ||
           !strcmp(type, "suspend") || !strcmp(type, "resume") ||
           !strcmp(type, "move") || !strcmp(type, "account") ||
           !strncmp(type, "sweep_", 6) ||
           (!strcmp(type, "policy") && name && !json_is_null(name));
}

json_t *api_handle(sd_daemon *d, json_t *req)
{
    sd_user reader = {.reader = 1, .name = "http"};
    reader.uid = (uid_t)-1;
    return api_handle_as(d, req, &reader);
}

/* A submit request: a task array (array.c) or one job, within the
 * user's limits. Returns the reply. */
static json_t *api_submit(sd_daemon *d, json_t *req, const sd_user *who)
{
    json_t *reply;
    char err[512];
    if ((reply = api_denied(user_may_submit(d, who, err, sizeof err), err)))
        return reply;
    if (json_object_get(req, "array")) {
        sd_array *a = array_submit(d, req, who, err, sizeof err);
        if (!a)
            return api_error("submit_failed", "%s", err);
        reply = ok();
        json_object_set_new(reply, "job", json_integer(a->id));
        json_object_set_new(reply, "array", json_integer(a->id));
        json_object_set_new(reply, "tasks", json_integer(a->last -
                                                         a->first + 1));
        return reply;
    }
    if (limit_submit(d, who, 0, err, sizeof err) < 0)
        return api_error("limit_reached", "%s", err);
    sd_job *j = job_submit(d, req, who, err, sizeof err);
    if (!j)
        return api_error("submit_failed", "%s", err);
    reply = ok();
    json_object_set_new(reply, "job", json_integer(j->id));
    return reply;
}

/* A move request: the job to another node (a controller's, ctl_move),
 * recorded before the reply. Returns the reply. */
static json_t *api_move(sd_daemon *d, json_t *req, const sd_user *who)
{
    json_t *reply = NULL;
    sd_job *j;
    char err[512];
    const char *node = json_string_value(json_object_get(req, "node"));
    if (!(j = req_job(d, req, &reply)) ||
        (reply = api_denied(user_may_act(who, j, "move", err, sizeof err),
                            err)))
        return reply;
    if (!node || !*node)
        return api_error("bad_request", "field \"node\" must be the "
                         "name of a node (slaq nodes lists them)");
    if (ctl_move(d, j, node, err, sizeof err) < 0)
        return api_error("not_movable", "%s", err);
    if (store_flush(d->store) < 0)
        return api_error("store_failed", "job %lld is being moved but "
                         "slaqd cannot record it (%s)", (long long)j->id,
                         store_error(d->store));
    reply = ok();
    json_object_set_new(reply, "job", job_json(d, j, 0));
    return reply;
}

/* A suspend or resume request (type), with or without a checkpoint.
 * Returns the reply, or NULL when the job's agent answers it later. */
static json_t *api_suspend(sd_daemon *d, const char *type, json_t *req,
                           const sd_user *who)
{
    json_t *reply = NULL;
    sd_job *j;
    char err[512];
    if (!(j = req_job(d, req, &reply)) ||
        (reply = api_denied(user_may_act(who, j, type, err, sizeof err),
                            err)))
        return reply;
    if (j->array)
        return api_error("not_suspendable", "job %lld is task %ld of "
                         "array %lld: a task runs to its end or is "
                         "cancelled", (long long)j->id, j->array_index,
                         (long long)j->array);
    json_t *ck = json_object_get(req, "checkpoint");
    if (ck && !json_is_boolean(ck))
        return api_error("bad_request", "field \"checkpoint\" must be "
                         "true or false");
    double ms = NAN;
    sd_job *k = j;
    int rc = 0;
    if (!strcmp(type, "suspend")) {
        rc = job_suspend(d, j, json_is_true(ck), &ms, err, sizeof err);
        if (rc < 0)
            return api_error("not_suspendable", "%s", err);
    } else if (!(k = job_resume(d, j, err, sizeof err))) {
        return api_error("not_resumable", "%s", err);
    }
    /* Sent to the job's agent: answered when it answers. */
    if ((rc == 1 || (k == j && j->place.op_wait == SD_OP_RESUME)) &&
        op_park(d, j, req))
        return NULL;
    reply = ok();
    if (j->place.op_wait)
        json_object_set_new(reply, "pending", json_true());
    json_object_set_new(reply, "job", job_json(d, k, 0));
    if (!isnan(ms))
        json_object_set_new(reply, "latency_ms", json_real(ms));
    return reply;
}

/* Cancels job j (now: at once, not after its grace), recorded before the
 * reply. Returns NULL, or the error's reply. */
static json_t *api_cancel(sd_daemon *d, sd_job *j, json_t *req)
{
    json_t *now = json_object_get(req, "now");
    if (now && !json_is_boolean(now))
        return api_error("bad_request", "field \"now\" must be "
                         "true or false");
    if (!SD_ACTIVE(j->state))
        return api_error("not_active", "job %lld is already %s",
                         (long long)j->id, job_state_name(j->state));
    job_cancel(d, j, json_is_true(now));
    if (store_flush(d->store) < 0)
        return api_error("store_failed", "job %lld is being stopped "
                         "but slaqd cannot record it (%s); its state "
                         "is written when the disk has room",
                         (long long)j->id, store_error(d->store));
    return NULL;
}

/* Where job j's logs are: its directory and state into reply. Returns
 * reply, or (reply freed) the error's of a job slaqd did not start. */
static json_t *api_logs(sd_daemon *d, sd_job *j, json_t *reply)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/jobs/%lld", d->cfg.state_dir,
             (long long)j->id);
    char *abs = realpath(path, NULL);
    if (!j->proc.managed || !abs) {
        free(abs);
        json_decref(reply);
        return api_error("no_logs", "job %lld was not started by "
                         "slaqd and has no logs", (long long)j->id);
    }
    json_object_set_new(reply, "dir", json_string(abs));
    json_object_set_new(reply, "state",
                        json_string(job_state_name(j->state)));
    free(abs);
    return reply;
}

/* A show, cancel or logs request (type) of a job, an array or one of
 * its tasks (ID_N). Returns the reply. */
static json_t *api_job_request(sd_daemon *d, const char *type, json_t *req,
                               const sd_user *who)
{
    json_t *reply = NULL;
    long index;
    sd_array *a = array_parse_ref(d, json_object_get(req, "job"), &index);
    sd_job *j = a && index >= 0 ? job_get(d, a->task[index - a->first])
                                : NULL;
    if (a && !j && (reply = api_array(d, a, index, type, req, who)))
        return reply;
    const char *ref = json_string_value(json_object_get(req, "job"));
    if (!a && ref && strchr(ref, '_'))
        return api_error("unknown_job", "no task %.40s (ID_N: index N "
                         "of task array ID; slaq ls lists the arrays)",
                         ref);
    if (!j && !(j = req_job(d, req, &reply)))
        return reply;
    const char *verb = !strcmp(type, "cancel") ? "cancel"
                                               : "read the logs of";
    char why[512];
    if (strcmp(type, "show") &&
        (reply = api_denied(user_may_act(who, j, verb, why, sizeof why),
                            why)))
        return reply;
    if (!strcmp(type, "cancel") && (reply = api_cancel(d, j, req)))
        return reply;
    reply = ok();
    if (!strcmp(type, "logs"))
        return api_logs(d, j, reply);
    if (j->kind == SLAQ_JOB_QUERY && !strcmp(type, "show"))
        aqpd_load(d, j); /* a finished one's estimates, once */
    json_object_set_new(reply, "job", job_json(d, j, !strcmp(type, "show")));
    return reply;
}

json_t *api_handle_as(sd_daemon *d, json_t *req, const sd_user *who)
{
    const char *type = json_string_value(json_object_get(req, "type"));
    json_t *reply = NULL;
    char why[512];
    if (!type)
        return api_error("bad_message", "a request needs a string \"type\"");
    /* Whatever a user is shown is on disk first: a kill -9 of slaqd right
     * after `slaq show` loses none of what it showed. */
    limit_flush(d);
    if (api_needs_control(req) && store_failing(d->store))
        return api_error("store_failed", "slaqd cannot write its database "
                         "(%s), so it changes nothing now; retry when the "
                         "disk has room", store_error(d->store));
    if (!strcmp(type, "status"))
        return api_status(d);
    if (!strcmp(type, "nodes")) {
        json_t *r = ok();
        json_object_set_new(r, "nodes", ctl_nodes_json(d));
        json_object_set_new(r, "controller", json_boolean(d->cfg.agents
                                                          != NULL));
        return r;
    }
    if (!strcmp(type, "ls"))
        return api_ls(d, req);
    if (!strcmp(type, "queue")) {
        if (d->cfg.agent)
            return api_error("not_here", "this slaqd is a node agent: its "
                             "controller shows every node's queue");
        json_t *r = ok();
        json_object_set_new(r, "nodes", array_queue_json(d));
        return r;
    }
    if (!strcmp(type, "user_token") || !strcmp(type, "user_token_revoke")) {
        /* Only where the kernel says who asks, and only the asker's own:
         * a credential is worth what the Unix socket's word is. */
        if (who->reader || !d->req_conn || d->req_conn->tcp)
            return api_error("permission_denied", "permission denied: user "
                             "credentials are issued and revoked only over "
                             "slaqd's Unix socket, for the user the kernel "
                             "names");
        return !strcmp(type, "user_token") ? api_user_token(d, req, who)
                                           : api_user_revoke(d, req, who);
    }
    if (!strcmp(type, "policy")) {
        json_t *name = json_object_get(req, "name");
        if (name && !json_is_null(name) &&
            (reply = api_denied(user_may_admin(who, "set the policy", why,
                                               sizeof why), why)))
            return reply;
        return api_policy(d, req);
    }
    if (!strcmp(type, "share")) {
        json_t *r = ok();
        json_object_update_missing_new(r, acct_json(d));
        return r;
    }
    if (!strcmp(type, "account")) {
        if ((reply = api_denied(user_may_admin(who, "change the accounts",
                                               why, sizeof why), why)))
            return reply;
        return api_account(d, req);
    }
    if (!strcmp(type, "submit"))
        return api_submit(d, req, who);
    if (!strcmp(type, "move"))
        return api_move(d, req, who);
    if (!strcmp(type, "suspend") || !strcmp(type, "resume"))
        return api_suspend(d, type, req, who);
    if (!strncmp(type, "sweep", 5))
        return sweep_request(d, type, req, who);
    if (!strcmp(type, "history"))
        return api_history(d, req);
    if (!strcmp(type, "show") || !strcmp(type, "cancel") ||
        !strcmp(type, "logs"))
        return api_job_request(d, type, req, who);
    return api_error("unknown_type", "unknown request type \"%.64s\"", type);
}
