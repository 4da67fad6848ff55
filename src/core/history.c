/*
 * history.c — a job's recent iterations and its cumulative statistics.
 *
 * Memory per job is bounded: a ring of the `window` most recent reports plus
 * a few running totals (first and smallest loss, largest per-iteration loss
 * drop, CPU and samples). The largest drop is what SLAQ normalises by
 * (§4.1); it is kept over the whole life of the job, not just the window.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

slaq_history *slaq_history_new(size_t window)
{
    if (window == 0)
        window = SLAQ_DEFAULT_WINDOW;
    if (window < 2)
        return NULL;
    slaq_history *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->ring = calloc(window, sizeof *h->ring);
    if (!h->ring) {
        free(h);
        return NULL;
    }
    h->window = window;
    slaq_history_clear(h);
    return h;
}

void slaq_history_free(slaq_history *h)
{
    if (!h)
        return;
    free(h->ring);
    free(h);
}

void slaq_history_clear(slaq_history *h)
{
    h->head = h->len = 0;
    h->total = 0;
    h->first_loss = h->min_loss = NAN;
    h->max_delta = 0;
    h->cpu_total = h->samples_total = 0;
    h->version++;
}

int slaq_report_check(const slaq_report *r)
{
    if (!(fabs(r->loss) <= SLAQ_LOSS_MAX) || !isfinite(r->t))
        return SLAQ_EINVAL;
    if (r->iter > 0 && (!isfinite(r->cpu_s) || r->cpu_s < 0 ||
                        !isfinite(r->samples) || r->samples < 0))
        return SLAQ_EINVAL;
    return SLAQ_OK;
}

int slaq_history_add(slaq_history *h, const slaq_report *r)
{
    if (slaq_report_check(r) != SLAQ_OK)
        return SLAQ_EINVAL;
    const slaq_report *prev = slaq_history_last(h);
    if (prev && r->iter <= prev->iter)
        return SLAQ_EORDER;

    if (prev) {
        double d = report_drop(prev, r);
        if (d > h->max_delta)
            h->max_delta = d;
    } else {
        h->first_loss = r->loss;
        h->min_loss = r->loss;
    }
    if (r->loss < h->min_loss)
        h->min_loss = r->loss;
    if (r->iter > 0) {
        h->cpu_total += r->cpu_s;
        h->samples_total += r->samples;
    }

    size_t slot;
    if (h->len < h->window) {
        slot = (h->head + h->len) % h->window;
        h->len++;
    } else {
        slot = h->head;
        h->head = (h->head + 1) % h->window;
    }
    h->ring[slot] = *r;
    h->total++;
    h->version++;
    return SLAQ_OK;
}

size_t slaq_history_window(const slaq_history *h) { return h->window; }
size_t slaq_history_len(const slaq_history *h) { return h->len; }
uint64_t slaq_history_total(const slaq_history *h) { return h->total; }

const slaq_report *slaq_history_at(const slaq_history *h, size_t i)
{
    return &h->ring[(h->head + i) % h->window];
}

const slaq_report *slaq_history_last(const slaq_history *h)
{
    return h->len ? slaq_history_at(h, h->len - 1) : NULL;
}

double slaq_history_first_loss(const slaq_history *h) { return h->first_loss; }
double slaq_history_min_loss(const slaq_history *h) { return h->min_loss; }
double slaq_history_cpu_total(const slaq_history *h) { return h->cpu_total; }
double slaq_history_samples_total(const slaq_history *h)
{
    return h->samples_total;
}
double slaq_history_max_delta(const slaq_history *h) { return h->max_delta; }

double slaq_history_norm_delta(const slaq_history *h, size_t i)
{
    if (i == 0 || i >= h->len || h->max_delta <= 0)
        return NAN;
    const slaq_report *a = slaq_history_at(h, i - 1);
    const slaq_report *b = slaq_history_at(h, i);
    double d = report_drop(a, b);
    return d / h->max_delta;
}
