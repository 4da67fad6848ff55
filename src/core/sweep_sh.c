/*
 * sweep_sh.c — asynchronous successive halving and Hyperband, the
 * early-stopping rules most users pick today (Li et al., ASHA, MLSys'20;
 * Hyperband, JMLR'18), in the form Optuna's SuccessiveHalvingPruner and
 * HyperbandPruner apply them, so that slaq's and Optuna's runs can be
 * compared.
 *
 * Successive halving: rungs at r_k = min_epochs * eta^(k + rate) epochs.
 * When a configuration reaches a rung, its metric there joins the rung's
 * list; it goes on only if it is among the top max(1, floor(len / eta)) of
 * that list (itself included), else it is killed. Nothing waits for a rung
 * to fill, so slots never idle.
 *
 * Hyperband: brackets s = 0..B-1 (B = floor(log_eta(max/min)) + 1) are
 * successive halving with rate = s; each configuration belongs to one
 * bracket, drawn in proportion to the bracket's budget
 * ceil(B eta^(B-1-s) / (B-1-s+1)) as Optuna does, and competes only with
 * its bracket.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sweep_internal.h"

#define SH_MAX_RUNGS 40

struct sh_rung {
    double *v;
    size_t n;
};

struct sh {
    int brackets;
    struct sh_rung rung[SH_MAX_RUNGS * 8]; /* [bracket][rung] */
};

static int sh_brackets(const slaq_sweep *s)
{
    int b = 0;
    for (double r = s->prm.min_epochs; r <= s->prm.max_epochs; r *= s->prm.eta)
        b++;
    return b < 1 ? 1 : b > 8 ? 8 : b;
}

static int sh_init_common(slaq_sweep *s, int brackets, char *err, size_t errlen)
{
    struct sh *H = calloc(1, sizeof *H);
    if (!H)
        goto err;
    s->priv = H;
    H->brackets = brackets;
    for (int k = 0; k < SH_MAX_RUNGS * brackets; k++) {
        H->rung[k].v = malloc((s->n ? s->n : 1) * sizeof(double));
        if (!H->rung[k].v)
            goto err;
    }
    return 0;
err:
    if (err && errlen)
        snprintf(err, errlen, "out of memory");
    return SLAQ_ENOMEM;
}

static void sh_destroy(slaq_sweep *s)
{
    struct sh *H = s->priv;
    if (!H)
        return;
    for (int k = 0; k < SH_MAX_RUNGS * 8; k++)
        free(H->rung[k].v);
    free(H);
}

static int sh_init(slaq_sweep *s, char *err, size_t errlen)
{
    return sh_init_common(s, 1, err, errlen);
}

/* Optuna-style bracket budgets; configuration i goes to the bracket its
 * (hashed) index falls in, so each bracket gets its share in any order. */
static int hb_init(slaq_sweep *s, char *err, size_t errlen)
{
    int B = sh_brackets(s);
    if (sh_init_common(s, B, err, errlen) < 0)
        return SLAQ_ENOMEM;
    long budget[8], total = 0;
    for (int b = 0; b < B; b++) {
        int e = B - 1 - b;
        budget[b] = (long)ceil(B * pow(s->prm.eta, e) / (e + 1));
        total += budget[b];
    }
    for (size_t i = 0; i < s->n; i++) {
        long h = (long)((i * 2654435761u) % (unsigned long)total);
        int b = 0;
        while (h >= budget[b])
            h -= budget[b++];
        s->cfg[i].bracket = b;
    }
    return 0;
}

static slaq_sweep_action sh_on_train_epoch(slaq_sweep *s, size_t i,
                                           double now)
{
    (void)now;
    struct sh *H = s->priv;
    struct sw_cfg *c = &s->cfg[i];
    if (c->epochs >= s->prm.max_epochs)
        return SLAQ_SWEEP_CONTINUE;
    /* Is this epoch a rung of the configuration's bracket? */
    double r = s->prm.min_epochs * pow(s->prm.eta, c->bracket);
    int k = 0;
    while (r < c->epochs && k < SH_MAX_RUNGS - 1)
        r *= s->prm.eta, k++;
    if (r != (double)c->epochs)
        return SLAQ_SWEEP_CONTINUE;
    struct sh_rung *g = &H->rung[c->bracket * SH_MAX_RUNGS + k];
    double v = c->last;
    g->v[g->n++] = v;
    size_t top = g->n / (size_t)s->prm.eta;
    if (top < 1)
        top = 1;
    /* v is kept iff fewer than `top` values in the rung are above it. */
    size_t above = 0;
    for (size_t j = 0; j < g->n; j++)
        above += g->v[j] > v;
    return above < top ? SLAQ_SWEEP_CONTINUE : SLAQ_SWEEP_KILL;
}

const struct slaq_sweep_policy sw_policy_sh = {
    .name = "sh",
    .default_b = 1,
    .init = sh_init,
    .destroy = sh_destroy,
    .on_train_epoch = sh_on_train_epoch,
};

const struct slaq_sweep_policy sw_policy_hyperband = {
    .name = "hyperband",
    .default_b = 1,
    .init = hb_init,
    .destroy = sh_destroy,
    .on_train_epoch = sh_on_train_epoch,
};
