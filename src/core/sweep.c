/*
 * sweep.c — the sweep framework: N configurations, S slots, one policy.
 *
 * Keeps every configuration's state and learning curve, runs the idle
 * queue HyperDrive's job manager keeps (getIdleJob: the highest priority
 * label first, FIFO among the unlabelled), and hands each reported epoch to
 * the policy, whose answer (continue, suspend, kill) it applies. The
 * policies themselves are in sweep_<name>.c.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sweep_internal.h"

static const struct slaq_sweep_policy *const sw_table[] = {
    &sw_policy_pop,      &sw_policy_pop_keep,  &sw_policy_pop_early,
    &sw_policy_default,  &sw_policy_bandit,    &sw_policy_earlyterm,
    &sw_policy_sh,       &sw_policy_hyperband,
};

const char *const slaq_sweep_policies[] = {
    "pop", "pop-keep", "pop-early", "default", "bandit", "earlyterm",
    "sh",  "hyperband", NULL,
};

void slaq_sweep_params_init(slaq_sweep_params *p, size_t slots, int max_epochs)
{
    memset(p, 0, sizeof *p);
    p->slots = slots;
    p->max_epochs = max_epochs;
    p->y_target = NAN;
    p->maximize = 1;
    p->kill_threshold = NAN;
}

static int sw_fail(char *err, size_t len, const char *msg, const char *what)
{
    if (err && len)
        snprintf(err, len, msg, what);
    return SLAQ_EINVAL;
}

slaq_sweep *slaq_sweep_new(const char *policy, const slaq_sweep_params *p,
                           size_t n_configs, char *err, size_t errlen)
{
    const struct slaq_sweep_policy *pol = NULL;
    for (size_t i = 0; policy && i < sizeof sw_table / sizeof *sw_table; i++)
        if (!strcmp(sw_table[i]->name, policy))
            pol = sw_table[i];
    if (!pol) {
        sw_fail(err, errlen, "unknown sweep policy '%s' (expected pop, pop-keep, "
                             "pop-early, default, bandit, earlyterm, sh or hyperband)",
                policy ? policy : "(null)");
        return NULL;
    }
    const char *bad = NULL;
    if (!p || p->slots < 1)
        bad = "slots must be at least 1";
    else if (p->max_epochs < 1)
        bad = "max_epochs must be at least 1";
    else if (!isfinite(p->y_target))
        bad = "y_target must be a finite number";
    else if (p->b < 0 || p->k < 0 || p->eta < 0 || p->eta == 1 || p->min_epochs < 0)
        bad = "b, k and min_epochs must be >= 0 and eta 0 or >= 2";
    else if (p->p_kill < 0 || p->p_kill >= 1 || p->eps < 0 || p->delta < 0 ||
             p->delta >= 1)
        bad = "p_kill and delta must be in [0, 1) and eps >= 0";
    else if (isnan(p->reeval))
        bad = "reeval must be a number (0: the default, < 0: never)";
    if (!bad && p->oracle && !pol->model) {
        sw_fail(err, errlen, "%s has no curve model for an oracle to replace",
                pol->name);
        return NULL;
    }
    if (!bad && pol->needs_t_max && !(p->t_max > 0)) {
        sw_fail(err, errlen, "%s needs t_max > 0 (the time budget)", pol->name);
        return NULL;
    }
    if (bad) {
        sw_fail(err, errlen, "%s", bad);
        return NULL;
    }
    slaq_sweep *s = calloc(1, sizeof *s);
    if (!s)
        goto err;
    s->pol = pol;
    s->prm = *p;
    if (!s->prm.b)
        s->prm.b = pol->default_b;
    if (!s->prm.k)
        s->prm.k = 1;
    if (s->prm.p_kill == 0)
        s->prm.p_kill = 0.05;
    if (s->prm.eps == 0)
        s->prm.eps = 0.5;
    if (s->prm.delta == 0)
        s->prm.delta = 0.05;
    if (!s->prm.eta)
        s->prm.eta = 3;
    if (!s->prm.min_epochs)
        s->prm.min_epochs = 1;
    double sign = p->maximize ? 1 : -1;
    s->target = sign * p->y_target;
    s->kill = sign * p->kill_threshold;
    s->gbest = -INFINITY;
    s->threshold = NAN;
    s->n = n_configs;
    s->cfg = calloc(n_configs ? n_configs : 1, sizeof *s->cfg);
    if (!s->cfg)
        goto err;
    for (size_t i = 0; i < n_configs; i++) {
        struct sw_cfg *c = &s->cfg[i];
        c->y = malloc((size_t)p->max_epochs * sizeof *c->y);
        if (!c->y)
            goto err;
        c->best = c->last = -INFINITY;
        c->p = c->ert = c->prio = NAN;
        c->seq = s->seq++;
    }
    if (pol->model) {
        s->lc = slaq_lcurve_new(&s->prm.lcurve);
        if (!s->lc) {
            sw_fail(err, errlen, "%s", "lcurve options out of range or out of memory");
            slaq_sweep_free(s);
            return NULL;
        }
    }
    if (pol->init && pol->init(s, err, errlen) < 0) {
        slaq_sweep_free(s);
        return NULL;
    }
    return s;
err:
    sw_fail(err, errlen, "%s", "out of memory");
    slaq_sweep_free(s);
    return NULL;
}

void slaq_sweep_free(slaq_sweep *s)
{
    if (!s)
        return;
    if (s->pol && s->pol->destroy)
        s->pol->destroy(s);
    for (size_t i = 0; s->cfg && i < s->n; i++)
        free(s->cfg[i].y);
    free(s->cfg);
    slaq_lcurve_free(s->lc);
    free(s);
}

const char *slaq_sweep_policy_name(const slaq_sweep *s)
{
    return s ? s->pol->name : "?";
}

size_t slaq_sweep_count(const slaq_sweep *s)
{
    return s ? s->n : 0;
}

/* getIdleJob: the idle configuration with the highest priority label, or
 * else the one that has waited longest (FIFO; new ones in their order,
 * and with fresh_in_turn, one at a time: when a fresh configuration
 * leaves the queue the next one joins it at the back). */
size_t slaq_sweep_next(slaq_sweep *s, double now)
{
    (void)now;
    size_t pick = (size_t)-1;
    for (size_t i = 0; i < s->n; i++) {
        const struct sw_cfg *c = &s->cfg[i];
        if (c->state != SLAQ_CFG_NEW && c->state != SLAQ_CFG_SUSPENDED)
            continue;
        if (pick == (size_t)-1) {
            pick = i;
            continue;
        }
        const struct sw_cfg *b = &s->cfg[pick];
        bool cp = !isnan(c->prio), bp = !isnan(b->prio);
        if ((cp && !bp) || (cp && bp && c->prio > b->prio) ||
            (cp == bp && (!cp || c->prio == b->prio) && c->seq < b->seq))
            pick = i;
    }
    if (pick == (size_t)-1)
        return pick;
    if (s->fresh_in_turn && s->cfg[pick].state == SLAQ_CFG_NEW)
        for (size_t j = 0; j < s->n; j++)
            if (j != pick && s->cfg[j].state == SLAQ_CFG_NEW &&
                s->cfg[j].seq >= SW_SEQ_UNQUEUED) {
                s->cfg[j].seq = s->seq++;
                break;
            }
    s->cfg[pick].state = SLAQ_CFG_RUNNING;
    return pick;
}

int slaq_sweep_report(slaq_sweep *s, size_t i, int train_epoch,
                      double metric, double train_epoch_s, double now)
{
    if (!s || i >= s->n || s->cfg[i].state != SLAQ_CFG_RUNNING ||
        train_epoch <= s->cfg[i].epochs ||
        train_epoch > s->prm.max_epochs || !isfinite(metric) ||
        !(train_epoch_s >= 0))
        return SLAQ_EINVAL;
    struct sw_cfg *c = &s->cfg[i];
    double y = s->prm.maximize ? metric : -metric;
    /* Skipped epochs (a job reporting every few) hold the last value. */
    for (int e = c->epochs; e < train_epoch - 1; e++)
        c->y[e] = c->epochs ? c->last : y;
    c->y[train_epoch - 1] = y;
    c->train_epoch_sum += train_epoch_s;
    c->epochs = train_epoch;
    c->last = y;
    if (y > c->best)
        c->best = y;
    if (y > s->gbest)
        s->gbest = y;
    slaq_sweep_action a = s->pol->on_train_epoch(s, i, now);
    if (a == SLAQ_SWEEP_SUSPEND) {
        c->state = SLAQ_CFG_SUSPENDED;
        c->seq = s->seq++;
    } else if (a == SLAQ_SWEEP_KILL) {
        c->state = SLAQ_CFG_KILLED;
        c->prio = NAN;
    }
    return (int)a;
}

int slaq_sweep_ended(slaq_sweep *s, size_t i, double now)
{
    (void)now;
    if (!s || i >= s->n)
        return SLAQ_EINVAL;
    s->cfg[i].state = SLAQ_CFG_ENDED;
    s->cfg[i].prio = NAN;
    return SLAQ_OK;
}

int slaq_sweep_get(const slaq_sweep *s, size_t i, slaq_sweep_info *out)
{
    if (!s || i >= s->n || !out)
        return SLAQ_EINVAL;
    const struct sw_cfg *c = &s->cfg[i];
    double sign = s->prm.maximize ? 1 : -1;
    out->state = c->state;
    out->cls = c->cls;
    out->epochs = c->epochs;
    out->best = c->epochs ? sign * c->best : NAN;
    out->last = c->epochs ? sign * c->last : NAN;
    out->p = c->p;
    out->ert = c->ert;
    out->train_epoch_s = sw_train_epoch_mean(c);
    return SLAQ_OK;
}

double slaq_sweep_threshold(const slaq_sweep *s, double *s_promising)
{
    if (s_promising)
        *s_promising = s ? s->s_promising : 0;
    return s ? s->threshold : NAN;
}

/* True when configuration c just reached an evaluation boundary (a
 * multiple of b) before its last epoch. */
int sw_boundary(const slaq_sweep *s, const struct sw_cfg *c)
{
    return c->epochs % s->prm.b == 0 && c->epochs < s->prm.max_epochs;
}

/* Configurations waiting for a slot (new or suspended). */
size_t sw_waiting(const slaq_sweep *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++)
        w += s->cfg[i].state == SLAQ_CFG_NEW ||
             s->cfg[i].state == SLAQ_CFG_SUSPENDED;
    return w;
}

double sw_train_epoch_mean(const struct sw_cfg *c)
{
    return c->epochs ? c->train_epoch_sum / c->epochs : NAN;
}

int sw_model_fit(slaq_sweep *s, const struct sw_cfg *c, const double *y,
                 int n, int best)
{
    if (!s->prm.oracle)
        return slaq_lcurve_fit(s->lc, y, (size_t)n);
    s->oracle_i = (size_t)(c - s->cfg);
    s->oracle_best = best;
    return 0;
}

double sw_model_prob(const slaq_sweep *s, double m, double level)
{
    if (!s->prm.oracle)
        return slaq_lcurve_prob(s->lc, m, level);
    double sign = s->prm.maximize ? 1 : -1, v = -INFINITY;
    for (int e = 1; e <= (int)m; e++) {
        double y = s->prm.oracle(s->prm.oracle_ctx, s->oracle_i, e);
        if (isnan(y))
            break;
        y *= sign;
        v = s->oracle_best ? fmax(v, y) : y;
    }
    return v >= level ? 1 : 0;
}
