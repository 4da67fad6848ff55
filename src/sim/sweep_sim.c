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

#include "sim/sweep_sim.h"

struct slot {
    size_t cfg;     /* (size_t)-1 when idle */
    double t;       /* time of its next event */
    int busy_only;  /* 1: the event only frees the slot (after a suspend) */
};

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

int sweep_sim_run(const sweep_set *set, const size_t *order, size_t n,
                  const sweep_sim_config *cfg, sweep_sim_result *res,
                  char *err, size_t errlen)
{
    slaq_sweep *s = slaq_sweep_new(cfg->policy, &cfg->prm, n, err, errlen);
    if (!s)
        return -1;
    size_t S = cfg->prm.slots;
    struct slot *sl = calloc(S, sizeof *sl);
    int *done = calloc(n ? n : 1, sizeof *done); /* epochs finished */
    if (!sl || !done) {
        snprintf(err, errlen, "out of memory");
        free(sl);
        free(done);
        slaq_sweep_free(s);
        return -1;
    }
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
                break;
            }
            int a = slaq_sweep_report(s, c, e, y, tr->epoch_s[e - 1], now);
            if (a < 0) {
                snprintf(err, errlen, "the policy refused epoch %d of "
                                      "configuration %zu", e, c);
                goto fail;
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
    slaq_sweep_free(s);
    return 0;
fail:
    free(sl);
    free(done);
    slaq_sweep_free(s);
    return -1;
}
