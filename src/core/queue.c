/*
 * queue.c — queue management when the cluster is full (include/slaq/
 * queue.h): Yaq's queue bounds (Eq. 3.1, 3.2, Proposition 2), its
 * placement (Algorithms 1 and 2) and its reordering (Algorithm 3).
 *
 * The queue orders are the rows of the table `orders` below, as the
 * share policies are the rows of policy.c's: name, summary, whether the
 * order reorders (and so needs starvation thresholds), and the key an
 * item goes by. Parsing, names and the lists in help texts come from it.
 *
 * Erlang and Poisson probabilities are summed term by term in log space:
 * a node that finishes a thousand tasks per heartbeat has e^{-1000} in
 * its first term, which a double does not hold.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "slaq/queue.h"
#include "slaq/slaq.h"
#include "util.h"

/* ------------------------------------------------------------- bounds */

/*
 * sum_{k >= n} exp(logscale - a + k log a - log k!): the Poisson(a) upper
 * tail from n, times e^logscale. Summed upwards from k = n until the
 * terms, past the mode, no longer change the sum.
 */
static double poisson_tail(size_t n, double a, double logscale)
{
    double logfact = 0;
    for (size_t i = 2; i <= n; i++)
        logfact += log((double)i);
    double loga = log(a);
    double lt = logscale - a + (double)n * loga - logfact;
    double sum = 0;
    for (size_t k = n;; k++) {
        double t = exp(lt);
        sum += t;
        if ((double)k > a && t <= sum * 1e-17)
            break;
        if (sum == 0 && (double)k > a)  /* every term underflows */
            break;
        lt += loga - log((double)(k + 1));
    }
    return sum;
}

double slaq_erlang_cdf(size_t n, double lambda, double x)
{
    if (n == 0)
        return 1;
    double a = lambda * x;
    if (!(a > 0))
        return 0;
    double p = poisson_tail(n, a, 0);
    return p > 1 ? 1 : p;
}

size_t slaq_qbound_exact(double load, double delta)
{
    if (!(load > 0) || delta >= 1)
        return 0;
    if (!(delta > 0))
        return SLAQ_QBOUND_MAX;
    /* cdf = Pr[Poisson(load) <= b]; the condition is 1 - cdf <= delta.
     * Where 1 - cdf is small, the tail is summed directly instead, for
     * precision. */
    double loga = log(load), lp = -load, cdf = exp(lp);
    for (size_t b = 0; b < SLAQ_QBOUND_MAX; b++) {
        double tail = 1 - cdf;
        if (tail < 0.5)
            tail = poisson_tail(b + 1, load, 0);
        if (tail <= delta)
            return b;
        lp += loga - log((double)(b + 1));
        cdf += exp(lp);
    }
    return SLAQ_QBOUND_MAX;
}

size_t slaq_qbound_chernoff(double load, double delta)
{
    if (!(load > 0) || delta >= 1)
        return 0;
    if (!(delta > 0))
        return SLAQ_QBOUND_MAX;
    double need = log(1 / delta);
    for (size_t b = 0; b < SLAQ_QBOUND_MAX; b++) {
        double n = (double)(b + 1);
        if (n <= load)  /* the bound says nothing below the mean */
            continue;
        if (load * (1 + (n / load) * (log(n / load) - 1)) >= need)
            return b;
    }
    return SLAQ_QBOUND_MAX;
}

/*
 * Proposition 2 (the thesis's §3.1.2), with the thesis's names:
 *
 *   u = 1 - (1 - 1/(mu tau)) Pr[X_{b, r mu} <= tau]
 *         + (b / (r mu tau)) Pr[X_{b+1, r mu} <= tau]
 *         - e^{-mu tau} / (mu tau (1 - 1/r)^b) Pr[X_{b, (r-1) mu} <= tau]
 *
 * The last probability over (1 - 1/r)^b is summed as one Poisson tail
 * scaled by (r/(r-1))^b, so that neither factor overflows; at r = 1 it is
 * its limit, (mu tau)^b / b!.
 */
double slaq_qbound_util(unsigned r, double mu, double tau, size_t b)
{
    if (r < 1 || !(mu > 0) || !(tau > 0) || !isfinite(mu * tau))
        return NAN;
    double mt = mu * tau;
    double rate = (double)r * mu;
    double p_b = slaq_erlang_cdf(b, rate, tau);
    double p_b1 = slaq_erlang_cdf(b + 1, rate, tau);
    double last;
    if (b == 0) {
        last = 1;
    } else if (r == 1) {
        double lf = 0;
        for (size_t i = 2; i <= b; i++)
            lf += log((double)i);
        last = exp((double)b * log(mt) - lf);
    } else {
        double c = (double)(r - 1) * mt;
        last = poisson_tail(b, c, (double)b * log((double)r / (r - 1)));
    }
    double u = 1 - (1 - 1 / mt) * p_b + ((double)b / (r * mt)) * p_b1 -
               exp(-mt) / mt * last;
    return u < 0 ? 0 : u > 1 ? 1 : u;
}

int slaq_queue_bound_parse(const char *text, slaq_queue_bound *out)
{
    if (!text || !*text)
        return SLAQ_EINVAL;
    char *end;
    if (!strcmp(text, "auto")) {
        *out = (slaq_queue_bound){SLAQ_QBOUND_AUTO, 0};
        return SLAQ_OK;
    }
    if (!strncmp(text, "mwt:", 4)) {
        double v = strtod(text + 4, &end);
        if (end == text + 4 || *end || !isfinite(v) || !(v > 0))
            return SLAQ_EINVAL;
        *out = (slaq_queue_bound){SLAQ_QBOUND_MWT, v};
        return SLAQ_OK;
    }
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= 0) || v > SLAQ_QBOUND_MAX ||
        v != floor(v))
        return SLAQ_EINVAL;
    *out = (slaq_queue_bound){SLAQ_QBOUND_LENGTH, v};
    return SLAQ_OK;
}

int slaq_queue_bound_format(const slaq_queue_bound *b, char *buf, size_t len)
{
    if (b->kind == SLAQ_QBOUND_AUTO)
        return snprintf(buf, len, "auto");
    if (b->kind == SLAQ_QBOUND_LENGTH)
        return snprintf(buf, len, "%.0f", b->value);
    char num[32];
    util_fmt_double(num, sizeof num, b->value);
    return snprintf(buf, len, "mwt:%s", num);
}

size_t slaq_queue_bound_length(const slaq_queue_bound *b, unsigned r,
                               double mean_s, double tau, double util)
{
    if (b->kind == SLAQ_QBOUND_LENGTH)
        return (size_t)b->value;
    if (b->kind == SLAQ_QBOUND_MWT || !(mean_s > 0))
        return SLAQ_QBOUND_MAX;
    return slaq_qbound_exact((double)r * tau / mean_s, 1 - util);
}

int slaq_queue_admits(const slaq_queue_bound *b, size_t length, size_t qlen,
                      double wait_s)
{
    if (b->kind == SLAQ_QBOUND_MWT)
        return wait_s < b->value;
    return qlen < length;
}

/* ---------------------------------------------------------- placement */

/* The slots' heap (heap.h), ctx when each slot frees: the first free
 * first. */
static int slot_before(const void *ctx, size_t a, size_t b)
{
    const double *free_at = ctx;
    return free_at[a] < free_at[b];
}

/*
 * Algorithm 2 (the thesis's names in comments). Instead of subtracting
 * minTask from every running task, the heap holds the slots by the time
 * at which each frees, measured from now: giving the first to free the
 * queued task's duration and sifting it down is the same simulation in
 * O(log r) a step.
 */
double slaq_queue_wait(const double *run, size_t nrun, const double *queued,
                       size_t nqueued, size_t free_slots, size_t free_min,
                       double *scratch, size_t *slots)
{
    if (free_slots > free_min || nrun == 0)  /* freeResources > min */
        return 0;
    double *free_at = scratch;                /* runTasks */
    for (size_t i = 0; i < nrun; i++) {
        free_at[i] = run[i] > 0 ? run[i] : 0;
        slots[i] = i;
    }
    heap_build(slots, nrun, slot_before, free_at);
    for (size_t q = 0; q < nqueued; q++) {    /* for qTask in queuedTasks */
        /* minTask's slot takes it */
        free_at[slots[0]] += queued[q] > 0 ? queued[q] : 0;
        heap_sift_down(slots, nrun, 0, slot_before, free_at);
    }
    return free_at[slots[0]];                 /* + remove min(runTasks) */
}

int slaq_qload_parse(const char *name, slaq_qload *out)
{
    if (name && !strcmp(name, "wait")) {
        *out = SLAQ_QLOAD_WAIT;
        return SLAQ_OK;
    }
    if (name && !strcmp(name, "length")) {
        *out = SLAQ_QLOAD_LENGTH;
        return SLAQ_OK;
    }
    return SLAQ_EINVAL;
}

const char *slaq_qload_name(slaq_qload kind)
{
    return kind == SLAQ_QLOAD_WAIT ? "wait"
           : kind == SLAQ_QLOAD_LENGTH ? "length" : "?";
}

/* Algorithm 1 and its queuingScore = affScore x 1/nload. */
long slaq_queue_place(const slaq_qnode *nodes, size_t n, size_t free_total,
                      size_t slots_total, double r_fmin, slaq_qload load)
{
    long best = -1;
    if (slots_total && free_total &&
        (double)free_total / (double)slots_total > r_fmin) {
        /* placeTaskNoQueuing: a free slot, the best affinity first */
        for (size_t i = 0; i < n; i++) {
            if (!nodes[i].free_slots)
                continue;
            if (best < 0 || nodes[i].affinity > nodes[best].affinity ||
                (nodes[i].affinity == nodes[best].affinity &&
                 nodes[i].free_slots > nodes[best].free_slots))
                best = (long)i;
        }
        if (best >= 0)
            return best;
    }
    double best_score = -1;
    for (size_t i = 0; i < n; i++) {
        if (!nodes[i].admits)
            continue;
        double nload = load == SLAQ_QLOAD_LENGTH ? (double)nodes[i].qlen
                                                 : nodes[i].wait_s;
        double score = nodes[i].affinity / (nload + 1e-9);
        if (score > best_score) {
            best_score = score;
            best = (long)i;
        }
    }
    return best;
}

/* -------------------------------------------------------------- order */

typedef struct qorder_row {
    const char *name;
    const char *summary;
    int reorders;                          /* starvation applies */
    double (*key)(const slaq_qitem *);     /* lower goes first; NULL: none */
} qorder_row;

static double key_work(const slaq_qitem *t) { return t->job_work; }
static double key_tasks(const slaq_qitem *t) { return t->job_tasks; }
static double key_dur(const slaq_qitem *t) { return t->dur_est; }
static double key_arrival(const slaq_qitem *t) { return t->job_arrival; }

/* The queue orders, indexed by slaq_qorder. */
static const qorder_row orders[] = {
    [SLAQ_QORDER_FIFO] = {"fifo", "in the order items joined the queue",
                          0, NULL},
    [SLAQ_QORDER_SRJF] = {"srjf", "shortest remaining job first: the job "
                          "with the least work left", 1, key_work},
    [SLAQ_QORDER_LRTF] = {"lrtf", "least remaining tasks first: the job "
                          "with the fewest tasks left", 1, key_tasks},
    [SLAQ_QORDER_STF] = {"stf", "shortest task first, whatever its job",
                         1, key_dur},
    [SLAQ_QORDER_EJF] = {"ejf", "earliest job first: by the job's arrival",
                         0, key_arrival},
};

#define NORDERS (sizeof orders / sizeof *orders)

size_t slaq_qorder_count(void)
{
    return NORDERS;
}

int slaq_qorder_parse(const char *name, slaq_qorder *out)
{
    for (size_t i = 0; name && i < NORDERS; i++)
        if (!strcmp(name, orders[i].name)) {
            *out = (slaq_qorder)i;
            return SLAQ_OK;
        }
    return SLAQ_EINVAL;
}

const char *slaq_qorder_name(slaq_qorder kind)
{
    return (unsigned)kind < NORDERS ? orders[kind].name : "?";
}

const char *slaq_qorder_summary(slaq_qorder kind)
{
    return (unsigned)kind < NORDERS ? orders[kind].summary : NULL;
}

int slaq_qorder_list(char *buf, size_t len, const char *sep)
{
    size_t used = 0;
    for (size_t i = 0; i < NORDERS; i++) {
        int w = snprintf(used < len ? buf + used : NULL,
                         used < len ? len - used : 0, "%s%s",
                         i ? sep : "", orders[i].name);
        if (w < 0)
            return -1;
        used += (size_t)w;
    }
    return (int)used;
}

/* Reads a positive number or "inf" that ends at `stop`. */
static int read_threshold(const char *s, const char *stop, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || end != stop || isnan(v) || !(v > 0))
        return -1;
    *out = v;
    return 0;
}

int slaq_starvation_parse(const char *text, slaq_starvation *out)
{
    if (!text || !*text)
        return SLAQ_EINVAL;
    if (!strcmp(text, "off")) {
        *out = (slaq_starvation){INFINITY, INFINITY};
        return SLAQ_OK;
    }
    slaq_starvation s = {INFINITY, INFINITY};
    const char *comma = strchr(text, ',');
    const char *stop = comma ? comma : text + strlen(text);
    if (read_threshold(text, stop, &s.st) ||
        (comma && read_threshold(comma + 1, comma + 1 + strlen(comma + 1),
                                 &s.st_r)))
        return SLAQ_EINVAL;
    *out = s;
    return SLAQ_OK;
}

int slaq_starvation_format(const slaq_starvation *s, char *buf, size_t len)
{
    if (isinf(s->st) && isinf(s->st_r))
        return snprintf(buf, len, "off");
    char a[32], b[32];
    util_fmt_double(a, sizeof a, s->st);
    if (isinf(s->st_r))
        return snprintf(buf, len, "%s", a);
    util_fmt_double(b, sizeof b, s->st_r);
    return snprintf(buf, len, "%s,%s", a, b);
}

/* isStarved(t) = t.queueTime > min(ST, t.durationEst x ST_r) */
int slaq_qitem_starved(const slaq_qitem *a, double now,
                       const slaq_starvation *sv)
{
    double lim = sv->st;
    double rel = a->dur_est * sv->st_r;
    if (rel < lim)  /* 0 x inf is NaN: the test fails, ST alone counts */
        lim = rel;
    return now - a->enqueued > lim;
}

static int sign(double d)
{
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

/* Algorithm 3, the thesis's line numbers beside it. */
int slaq_qorder_cmp(slaq_qorder order, const slaq_qitem *a,
                    const slaq_qitem *b, double now,
                    const slaq_starvation *sv)
{
    const qorder_row *o = (unsigned)order < NORDERS ? &orders[order]
                                                    : &orders[0];
    int sa = 0, sb = 0;
    if (o->reorders && sv) {
        sa = slaq_qitem_starved(a, now, sv);
        sb = slaq_qitem_starved(b, now, sv);
    }
    if (sa != sb)                          /* 1-3: the starved one first */
        return sa ? 1 : -1;
    int c = 0;
    if (!sa && o->key)                     /* 4-6: taskCmp */
        c = sign(o->key(b) - o->key(a));
    else if (sa)                           /* 7-9: earlier job first */
        c = sign(b->job_arrival - a->job_arrival);
    if (c)
        return c;
    c = sign(b->enqueued - a->enqueued);   /* 10: longer wait first */
    if (c)
        return c;
    return sign(b->job_arrival - a->job_arrival);
}

long slaq_qorder_first(slaq_qorder order, const slaq_qitem *items, size_t n,
                       double now, const slaq_starvation *sv)
{
    long best = n ? 0 : -1;
    for (size_t i = 1; i < n; i++)
        if (slaq_qorder_cmp(order, &items[i], &items[best], now, sv) > 0)
            best = (long)i;
    return best;
}
