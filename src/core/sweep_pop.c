/*
 * sweep_pop.c — POP, HyperDrive's probabilistic classification of
 * configurations into promising, opportunistic and poor (Rasley et al.,
 * Middleware'17; the thesis, §7.1-7.6). At every evaluation boundary (each
 * b epochs of a configuration's own training), in OnIterationFinish:
 *
 *   1. Kill if the best metric has not passed the kill threshold (domain
 *      knowledge: 0.15 accuracy for 10 classes).
 *   2. From the learning-curve model, P_m = P(y(n+m) >= y_target) for the
 *      next epochs m = 1..M, M = (T_max - T_pass) / Epoch_i (and no more
 *      than the epochs the configuration has left). With p_m = P_m - P_m-1
 *      (P made non-decreasing), the expected remaining epochs are
 *      x_i = sum m p_m (7.2) and ERT_i = x_i Epoch_i (7.3); the sum stops
 *      once ERT passes T_max - T_pass (then ERT_i = T_max - T_pass). The
 *      confidence is p_i = sum p_m.
 *   3. Kill if p_i < 0.05 (poor).
 *   4. The dynamic threshold: over the active configurations,
 *      N_satisfying(p) = #{i : p_i >= p},  S_effective(p) =
 *      min(k N_satisfying(p), S p); p* maximises S_effective over the p_i
 *      and S_promising = S_effective(p*).
 *   5. Configurations with p_i >= p* are promising: labelled with priority
 *      p_i, so the idle queue gives them the next free slot in order of p.
 *   6. A promising configuration keeps its slot; an opportunistic one is
 *      suspended so the next idle one runs (round robin, b epochs a turn),
 *      unless nothing else is waiting. The round robin is the idle queue's
 *      FIFO, which fresh configurations join one at a time (the next when
 *      the previous one starts): a suspended configuration's next turn
 *      comes after those already waiting and one fresh configuration, not
 *      after every configuration the sweep has yet to start.
 *
 * Steps 1-5 are sw_pop_judge, shared with pop-keep (sweep_pop_keep.c),
 * which differs only in step 6.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sweep_internal.h"

struct pop_rank {
    double p;
    size_t i;
};

struct pop {
    double *ps;   /* scratch: p of the active configurations */
    double *run;  /* scratch: a configuration's best-so-far curve */
    struct pop_rank *rank; /* scratch: candidates for the promising pool */
    double refreshed;      /* when every p was last re-evaluated */
};

int sw_pop_init(slaq_sweep *s, char *err, size_t errlen)
{
    struct pop *P = calloc(1, sizeof *P);
    if (P) {
        P->ps = calloc(s->n ? s->n : 1, sizeof *P->ps);
        P->run = calloc((size_t)s->prm.max_epochs, sizeof *P->run);
        P->rank = calloc(s->n ? s->n : 1, sizeof *P->rank);
        P->refreshed = -INFINITY;
    }
    if (!P || !P->ps || !P->run || !P->rank) {
        if (P)
            free(P->ps), free(P->run), free(P->rank);
        free(P);
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return SLAQ_ENOMEM;
    }
    s->priv = P;
    /* The opportunistic pool is one round robin (§7.2: "equally shared
     * between opportunistic configurations"): a suspended configuration
     * waits for the others already waiting, not for every configuration
     * the sweep has not started yet. Fresh configurations join it one at
     * a time; the first is in the queue from the start. */
    s->fresh_in_turn = 1;
    for (size_t i = 1; i < s->n; i++)
        s->cfg[i].seq = SW_SEQ_UNQUEUED + i;
    return 0;
}

void sw_pop_destroy(slaq_sweep *s)
{
    struct pop *P = s->priv;
    if (P)
        free(P->ps), free(P->run), free(P->rank);
    free(P);
}

/* M: the future epochs step 2 looks at, (T_max - T_pass) / Epoch_i and
 * no more than configuration c has left (0 when the budget is spent). */
double sw_pop_horizon(const slaq_sweep *s, const struct sw_cfg *c, double now)
{
    double left = s->prm.t_max - now, ep = sw_train_epoch_mean(c);
    if (!(left > 0) || !(ep > 0))
        return 0;
    double M = floor(left / ep);
    if (M > s->prm.max_epochs - c->epochs)
        M = s->prm.max_epochs - c->epochs;
    return M;
}

/* Step 2: p_i and ERT_i of configuration c at time now. */
static void pop_estimate(slaq_sweep *s, struct sw_cfg *c, double now)
{
    double left = s->prm.t_max - now, ep = sw_train_epoch_mean(c);
    c->p = 0;
    c->ert = left > 0 ? left : 0;
    if (!(left > 0) || !(ep > 0))
        return;
    /* The question is whether the configuration ever reaches the target,
     * so the model is fitted to its best-so-far curve: monotone like the
     * curve families, and reaching y_target by epoch m exactly when the
     * raw curve has (a validation curve that peaks and falls as the model
     * overfits would otherwise drag the prediction below its own best). */
    struct pop *Pp = s->priv;
    for (int e = 0; e < c->epochs; e++)
        Pp->run[e] = e ? fmax(Pp->run[e - 1], c->y[e]) : c->y[e];
    if (sw_model_fit(s, c, Pp->run, c->epochs, 1) < 0) {
        c->p = c->ert = NAN;
        return;
    }
    double M = sw_pop_horizon(s, c, now);
    c->p_epochs = c->epochs;
    c->p_M = M;
    double P = 0, x = 0;
    for (int m = 1; m <= (int)M; m++) {
        double Pm = sw_model_prob(s, c->epochs + m, s->target);
        if (!(Pm > P))
            continue;
        x += m * (Pm - P);
        P = Pm;
        if (x * ep > left)
            break;
    }
    c->p = P;
    c->ert = fmin(x * ep, left);
}

static int pop_cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Orders candidates for the promising pool by p, highest first; ties by
 * index (the earlier configuration first). */
static int pop_cmp_rank(const void *a, const void *b)
{
    const struct pop_rank *x = a, *y = b;
    if (x->p != y->p)
        return (x->p < y->p) - (x->p > y->p);
    return (x->i > y->i) - (x->i < y->i);
}

/* The number of configurations the promising pool holds: S_promising
 * slots at k slots each, to the nearest whole configuration, at least one
 * (the configuration that sets p* is promising) and no more than S/k. */
size_t sw_pop_pool(double s_promising, size_t slots, int k)
{
    if (k < 1)
        k = 1;
    double n = floor(s_promising / k + 0.5);
    double most = floor((double)slots / k);
    if (n > most)
        n = most;
    return n < 1 ? 1 : (size_t)n;
}

/* Steps 4 and 5 over every active configuration. */
static void pop_classify(slaq_sweep *s)
{
    struct pop *P = s->priv;
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct sw_cfg *c = &s->cfg[i];
        if ((c->state == SLAQ_CFG_RUNNING || c->state == SLAQ_CFG_SUSPENDED) &&
            !isnan(c->p))
            P->ps[m++] = c->p;
    }
    s->threshold = NAN;
    s->s_promising = 0;
    if (m == 0)
        return;
    qsort(P->ps, m, sizeof *P->ps, pop_cmp_desc);
    double S = (double)s->prm.slots, k = s->prm.k, best = -1, pstar = NAN;
    for (size_t j = 0; j < m; j++) {
        if (j + 1 < m && P->ps[j + 1] == P->ps[j])
            continue; /* N_satisfying counts every tie */
        double eff = fmin(k * (double)(j + 1), S * P->ps[j]);
        if (eff > best) {
            best = eff;
            pstar = P->ps[j];
        }
    }
    s->threshold = pstar;
    s->s_promising = best;
    /* The promising pool: the configurations at p >= p*, most likely
     * first, as many as S_promising slots hold; the rest of them share
     * the opportunistic pool's S - S_promising slots with the others. */
    size_t pool = sw_pop_pool(best, s->prm.slots, s->prm.k), np = 0;
    for (size_t i = 0; i < s->n; i++) {
        struct sw_cfg *c = &s->cfg[i];
        if (c->state != SLAQ_CFG_RUNNING && c->state != SLAQ_CFG_SUSPENDED)
            continue;
        c->cls = SLAQ_CLASS_OPPORTUNISTIC;
        c->prio = NAN;
        if (!isnan(c->p) && c->p > 0 && c->p >= pstar)
            P->rank[np++] = (struct pop_rank){c->p, i};
    }
    qsort(P->rank, np, sizeof *P->rank, pop_cmp_rank);
    for (size_t j = 0; j < np && j < pool; j++) {
        struct sw_cfg *c = &s->cfg[P->rank[j].i];
        c->cls = SLAQ_CLASS_PROMISING;
        c->prio = c->p;
    }
}

/* The thesis evaluates p "periodically and online" for every active
 * configuration, not only at each one's own boundary: at most once a
 * period (prm.reeval seconds; 0: b epochs of configuration c, whose
 * boundary this is; < 0: never), every other active configuration that
 * was judged before gets p and ERT again if anything they depend on has
 * changed: epochs reported since (a running one), or the horizon M (the
 * time budget shrinks for a suspended one too). */
static void pop_refresh(slaq_sweep *s, const struct sw_cfg *c, double now)
{
    struct pop *P = s->priv;
    double period = s->prm.reeval;
    if (period < 0)
        return;
    if (period == 0)
        period = s->prm.b * sw_train_epoch_mean(c);
    if (!(now - P->refreshed >= period))
        return;
    P->refreshed = now;
    for (size_t i = 0; i < s->n; i++) {
        struct sw_cfg *o = &s->cfg[i];
        if (o == c || o->p_epochs == 0 ||
            (o->state != SLAQ_CFG_RUNNING && o->state != SLAQ_CFG_SUSPENDED))
            continue;
        if (o->epochs != o->p_epochs || sw_pop_horizon(s, o, now) != o->p_M)
            pop_estimate(s, o, now);
    }
}

/* Steps 1-5 for configuration c at its boundary: KILL (poor), or
 * CONTINUE with every active configuration classified. */
slaq_sweep_action sw_pop_judge(slaq_sweep *s, struct sw_cfg *c, double now)
{
    if (!isnan(s->kill) && !(c->best > s->kill)) {
        c->cls = SLAQ_CLASS_POOR;
        return SLAQ_SWEEP_KILL;
    }
    pop_estimate(s, c, now);
    pop_refresh(s, c, now);
    if (!isnan(c->p) && c->p < s->prm.p_kill) {
        c->cls = SLAQ_CLASS_POOR;
        c->state = SLAQ_CFG_KILLED; /* not active for the threshold */
        pop_classify(s);
        c->state = SLAQ_CFG_RUNNING;
        return SLAQ_SWEEP_KILL;
    }
    pop_classify(s);
    return SLAQ_SWEEP_CONTINUE;
}

static slaq_sweep_action pop_on_train_epoch(slaq_sweep *s, size_t i,
                                            double now)
{
    struct sw_cfg *c = &s->cfg[i];
    if (!sw_boundary(s, c))
        return SLAQ_SWEEP_CONTINUE;
    if (sw_pop_judge(s, c, now) == SLAQ_SWEEP_KILL)
        return SLAQ_SWEEP_KILL;
    /* Step 6. */
    if (c->cls == SLAQ_CLASS_PROMISING || sw_waiting(s) == 0)
        return SLAQ_SWEEP_CONTINUE;
    return SLAQ_SWEEP_SUSPEND;
}

const struct slaq_sweep_policy sw_policy_pop = {
    .name = "pop",
    .default_b = 10,
    .model = 1,
    .needs_t_max = 1,
    .init = sw_pop_init,
    .destroy = sw_pop_destroy,
    .on_train_epoch = pop_on_train_epoch,
};
