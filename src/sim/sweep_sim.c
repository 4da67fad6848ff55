/*
 * sweep_sim.c — virtual-time replay of a recorded sweep (see sweep_sim.h).
 *
 * S slots; each runs one configuration at a time. Events are epoch ends at
 * exact times. A fresh configuration pays its recorded start-up time
 * (process start and data loading) before its first epoch; a resumed one
 * pays resume_s; a suspended one keeps its slot busy for suspend_s. After
 * every epoch the policy hears the metric and answers continue, suspend or
 * kill; an idle slot asks the policy for the next configuration. The first
 * epoch whose metric reaches the target ends the replay: that is the time
 * to target.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sweep_sim.h"

struct slot {
    size_t cfg;     /* (size_t)-1 when idle */
    double t;       /* time of its next event */
    int busy_only;  /* 1: the event only frees the slot (after a suspend) */
};

static const char *const act_name[] = {"continue", "suspend", "kill"};
static const char *const cls_name[] = {"unknown", "promising", "opportunistic",
                                       "poor"};

static void tr_num(FILE *f, const char *key, double v)
{
    if (isfinite(v))
        fprintf(f, ",\"%s\":%.6g", key, v);
    else
        fprintf(f, ",\"%s\":null", key);
}

static void tr_head(const sweep_sim_config *cfg, double now, const char *ev,
                    int id)
{
    fprintf(cfg->trace, "{\"policy\":\"%s\",\"order\":%d,\"t\":%.6f,"
                        "\"ev\":\"%s\",\"id\":%d",
            cfg->policy, cfg->trace_order, now, ev, id);
}

/* An epoch's verdict, with the policy's view of every active
 * configuration (POP's promising set and the count of opportunistic ones). */
static void tr_epoch(const sweep_sim_config *cfg, const slaq_sweep *s,
                     const sweep_set *set, const size_t *order, size_t n,
                     double now, size_t c, int e, double y, int a)
{
    FILE *f = cfg->trace;
    slaq_sweep_info in;
    slaq_sweep_get(s, c, &in);
    double sp, th = slaq_sweep_threshold(s, &sp);
    tr_head(cfg, now, "epoch", set->v[order[c]].id);
    fprintf(f, ",\"epoch\":%d,\"metric\":%.6g,\"action\":\"%s\",\"cls\":\"%s\"",
            e, y, act_name[a], cls_name[in.cls]);
    tr_num(f, "p", in.p);
    tr_num(f, "ert", in.ert);
    tr_num(f, "pstar", th);
    tr_num(f, "s_promising", sp);
    fprintf(f, ",\"promising\":[");
    int first = 1, opp = 0;
    for (size_t j = 0; j < n; j++) {
        slaq_sweep_info o;
        slaq_sweep_get(s, j, &o);
        if (o.state != SLAQ_CFG_RUNNING && o.state != SLAQ_CFG_SUSPENDED)
            continue;
        if (o.cls == SLAQ_CLASS_PROMISING) {
            fprintf(f, "%s%d", first ? "" : ",", set->v[order[j]].id);
            first = 0;
        } else if (o.cls == SLAQ_CLASS_OPPORTUNISTIC) {
            opp++;
        }
    }
    fprintf(f, "],\"opportunistic\":%d}\n", opp);
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void sweep_sim_order(size_t *order, size_t n, unsigned long seed, int k)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (k == 0)
        return;
    uint64_t x = ((uint64_t)seed << 20) ^ (uint64_t)k;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(splitmix(&x) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Configuration tr's time alone to the target from its start (its
 * start-up and epochs), and the epoch that reaches it; INFINITY if none. */
static double sw_alone(const sweep_trace *tr, double sign, double target,
                       double start_scale, int *epoch)
{
    double t = start_scale * tr->start_s;
    for (size_t e = 0; e < tr->n; e++) {
        t += tr->epoch_s[e];
        if (sign * tr->metric[e] >= sign * target) {
            *epoch = (int)e + 1;
            return t;
        }
    }
    return INFINITY;
}

double sweep_sim_bound(const sweep_set *set, const size_t *order, size_t n,
                       size_t slots, double target, int maximize,
                       double start_scale, int *id, int *epoch)
{
    double best = INFINITY, sign = maximize ? 1 : -1;
    *id = *epoch = -1;
    if (!order) {
        for (size_t i = 0; i < set->n; i++) {
            int e = -1;
            double t = sw_alone(&set->v[i], sign, target, start_scale, &e);
            if (t < best) {
                best = t;
                *id = set->v[i].id;
                *epoch = e;
            }
        }
        return best;
    }
    /* Over the configurations before j: the sum of their first slot
     * occupancies (start-up and first epoch), and the S - 1 largest of
     * them (top[0..ntop-1], ascending, summing to intop). The j - S + 1
     * smallest sum to the total less those. */
    size_t keep = slots - 1, ntop = 0;
    double *top = malloc((keep ? keep : 1) * sizeof *top), total = 0, intop = 0;
    if (!top)
        return -1;
    for (size_t j = 0; j < n; j++) {
        const sweep_trace *tr = &set->v[order[j]];
        int e = -1;
        double t = (total - intop) / (double)slots +
                   sw_alone(tr, sign, target, start_scale, &e);
        if (t < best) {
            best = t;
            *id = tr->id;
            *epoch = e;
        }
        double x = start_scale * tr->start_s + (tr->n ? tr->epoch_s[0] : 0);
        total += x;
        if (keep == 0 || (ntop == keep && !(x > top[0])))
            continue;
        size_t at; /* x in its place; the smallest drops out when full */
        if (ntop == keep) {
            intop -= top[0];
            for (at = 0; at + 1 < ntop && top[at + 1] < x; at++)
                top[at] = top[at + 1];
        } else {
            for (at = ntop++; at > 0 && top[at - 1] > x; at--)
                top[at] = top[at - 1];
        }
        top[at] = x;
        intop += x;
    }
    free(top);
    return best;
}

/* The oracle of a POLICY+oracle run: the metric the sweep's configuration
 * i reports at epoch m, from its trace. */
struct sim_oracle {
    const sweep_set *set;
    const size_t *order;
};

static double sim_oracle_metric(void *ctx, size_t i, int m)
{
    const struct sim_oracle *o = ctx;
    const sweep_trace *tr = &o->set->v[o->order[i]];
    return m >= 1 && (size_t)m <= tr->n ? tr->metric[m - 1] : NAN;
}

/* The sweep of cfg->policy, a policy name or one with the suffix
 * SWEEP_SIM_ORACLE (its curve model replaced by the traces' truth, read
 * through o); NULL with a message in err. */
static slaq_sweep *sim_sweep_new(const sweep_sim_config *cfg, size_t n,
                                 struct sim_oracle *o, char *err, size_t errlen)
{
    char name[64];
    slaq_sweep_params prm = cfg->prm;
    const char *plus = strchr(cfg->policy, '+');
    size_t len = plus ? (size_t)(plus - cfg->policy) : strlen(cfg->policy);
    if (len >= sizeof name ||
        (plus && strcmp(plus, SWEEP_SIM_ORACLE) != 0)) {
        snprintf(err, errlen, "policy '%s': expected a policy name, with "
                 "at most the suffix %s", cfg->policy, SWEEP_SIM_ORACLE);
        return NULL;
    }
    memcpy(name, cfg->policy, len);
    name[len] = '\0';
    if (plus) {
        prm.oracle = sim_oracle_metric;
        prm.oracle_ctx = o;
    }
    return slaq_sweep_new(name, &prm, n, err, errlen);
}

int sweep_sim_check(const sweep_sim_config *cfg, size_t n, char *err,
                    size_t errlen)
{
    struct sim_oracle o = {NULL, NULL};
    slaq_sweep *s = sim_sweep_new(cfg, n, &o, err, errlen);
    slaq_sweep_free(s);
    return s ? 0 : -1;
}

int sweep_sim_run(const sweep_set *set, const size_t *order, size_t n,
                  const sweep_sim_config *cfg, sweep_sim_result *res,
                  char *err, size_t errlen)
{
    struct sim_oracle oracle = {set, order};
    slaq_sweep *s = sim_sweep_new(cfg, n, &oracle, err, errlen);
    if (!s)
        return -1;
    size_t S = cfg->prm.slots;
    struct slot *sl = calloc(S, sizeof *sl);
    int *done = calloc(n ? n : 1, sizeof *done); /* epochs finished */
    double *seen = calloc(n ? n : 1, sizeof *seen); /* last traced p */
    if (!sl || !done || !seen) {
        snprintf(err, errlen, "out of memory");
        free(sl);
        free(done);
        free(seen);
        slaq_sweep_free(s);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        seen[i] = NAN;
    double seen_th = NAN;
    double sign = cfg->prm.maximize ? 1 : -1, target = sign * cfg->prm.y_target;
    *res = (sweep_sim_result){.time_to_target = INFINITY, .winner = -1};
    for (size_t k = 0; k < S; k++)
        sl[k] = (struct slot){.cfg = (size_t)-1, .t = 0, .busy_only = 1};

    for (;;) {
        /* The earliest pending slot event. */
        size_t k = (size_t)-1;
        for (size_t j = 0; j < S; j++)
            if (!isinf(sl[j].t) && (k == (size_t)-1 || sl[j].t < sl[k].t))
                k = j;
        if (k == (size_t)-1)
            break;
        double now = sl[k].t;
        res->makespan = now;
        struct slot *x = &sl[k];
        if (!x->busy_only) {
            size_t c = x->cfg;
            const sweep_trace *tr = &set->v[order[c]];
            int e = ++done[c];
            res->epochs++;
            double y = tr->metric[e - 1];
            if (sign * y >= target) {
                res->time_to_target = now;
                res->winner = (int)order[c];
                if (cfg->trace) {
                    tr_head(cfg, now, "target", tr->id);
                    fprintf(cfg->trace, ",\"epoch\":%d,\"metric\":%.6g}\n", e, y);
                }
                break;
            }
            int a = slaq_sweep_report(s, c, e, y, tr->epoch_s[e - 1], now);
            if (a < 0) {
                snprintf(err, errlen, "the policy refused epoch %d of "
                                      "configuration %zu", e, c);
                goto err;
            }
            if (cfg->trace) {
                slaq_sweep_info in;
                slaq_sweep_get(s, c, &in);
                double th = slaq_sweep_threshold(s, NULL);
                int same_p = in.p == seen[c] || (isnan(in.p) && isnan(seen[c]));
                int same_th = th == seen_th || (isnan(th) && isnan(seen_th));
                if (a != SLAQ_SWEEP_CONTINUE || !same_p || !same_th)
                    tr_epoch(cfg, s, set, order, n, now, c, e, y, a);
                seen[c] = in.p;
                seen_th = th;
            }
            if ((size_t)e >= tr->n) {
                slaq_sweep_ended(s, c, now);
                x->busy_only = 1;
                x->cfg = (size_t)-1;
            } else if (a == SLAQ_SWEEP_CONTINUE) {
                x->t = now + tr->epoch_s[e];
                continue;
            } else if (a == SLAQ_SWEEP_SUSPEND) {
                res->suspends++;
                x->busy_only = 1;
                x->cfg = (size_t)-1;
                x->t = now + cfg->suspend_s;
                /* The suspended configuration may go to an idle slot. */
                for (size_t j = 0; j < S; j++)
                    if (isinf(sl[j].t))
                        sl[j].t = now;
                continue;
            } else {
                res->kills++;
                x->busy_only = 1;
                x->cfg = (size_t)-1;
            }
        }
        /* The slot is idle at `now`: start or resume what the policy picks. */
        size_t c = slaq_sweep_next(s, now);
        if (c == (size_t)-1) {
            x->t = INFINITY;
            continue;
        }
        const sweep_trace *tr = &set->v[order[c]];
        x->cfg = c;
        x->busy_only = 0;
        if (cfg->trace) {
            tr_head(cfg, now, done[c] ? "resume" : "start", tr->id);
            fprintf(cfg->trace, ",\"epoch\":%d}\n", done[c]);
        }
        if (done[c] == 0) {
            res->started++;
            x->t = now + cfg->start_scale * tr->start_s + tr->epoch_s[0];
        } else {
            res->resumes++;
            x->t = now + cfg->resume_s + tr->epoch_s[done[c]];
        }
    }
    free(sl);
    free(done);
    free(seen);
    slaq_sweep_free(s);
    return 0;
err:
    free(sl);
    free(done);
    free(seen);
    slaq_sweep_free(s);
    return -1;
}
