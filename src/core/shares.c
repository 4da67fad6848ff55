/*
 * shares.c — the tree of accounts and users, its usage, and the division
 * of each node's cores from the root down (slaq/shares.h).
 *
 * Entries live in one array in the order they were added, so a parent's
 * id is always below its children's: one pass up the ids sums the tree
 * from its leaves, one pass down divides it from its root.
 */
#include "slaq/shares.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/slaq.h"
#include "heap.h"
#include "util.h"

struct slaq_shares {
    slaq_share_entry *e;
    size_t n, cap;
    double half_life;
    /* The division's scratch, sized to n: children in CSR form, the
     * demand that can be used at a node, and a water-filling's items. */
    size_t *first, *child;
    double *want, *total, *eff;
    struct wf_item { double ratio; size_t id; } *items;
    size_t scratch;
};

static void entry_init(slaq_share_entry *x, const char *name, int parent,
                       double weight, int user)
{
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->parent = parent;
    x->user = user;
    x->weight = weight;
    x->max_cores = INFINITY;
    x->share = 1;
    x->factor = 1;
}

slaq_shares *slaq_shares_new(void)
{
    slaq_shares *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cap = 8;
    t->e = malloc(t->cap * sizeof *t->e);
    if (!t->e) {
        free(t);
        return NULL;
    }
    entry_init(&t->e[0], "root", -1, 1, 0);
    t->n = 1;
    return t;
}

static void scratch_free(slaq_shares *t)
{
    free(t->first);
    free(t->child);
    free(t->want);
    free(t->total);
    free(t->eff);
    free(t->items);
    t->first = t->child = NULL;
    t->want = t->total = t->eff = NULL;
    t->items = NULL;
    t->scratch = 0;
}

void slaq_shares_free(slaq_shares *t)
{
    if (!t)
        return;
    scratch_free(t);
    free(t->e);
    free(t);
}

int slaq_shares_name_ok(const char *s)
{
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len >= SLAQ_SHARES_NAME_MAX)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || strchr("._@-", *p)))
            return 0;
    return 1;
}

static int weight_ok(double w) { return isfinite(w) && w > 0; }

int slaq_shares_find(const slaq_shares *t, const char *name)
{
    for (size_t i = 0; name && i < t->n; i++)
        if (!strcmp(t->e[i].name, name))
            return (int)i;
    return SLAQ_EINVAL;
}

int slaq_shares_add(slaq_shares *t, const char *name, int parent,
                    double weight, int user)
{
    if (!slaq_shares_name_ok(name) || slaq_shares_find(t, name) >= 0 || parent < 0 ||
        (size_t)parent >= t->n || t->e[parent].user || !weight_ok(weight) ||
        t->n >= (size_t)INT32_MAX)
        return SLAQ_EINVAL;
    if (t->n == t->cap) {
        size_t c = grow_cap(t->cap, t->n + 1, 8);
        if (!c || grow_array(&t->e, c, sizeof *t->e))
            return SLAQ_ENOMEM;
        t->cap = c;
    }
    entry_init(&t->e[t->n], name, parent, weight, user ? 1 : 0);
    return (int)t->n++;
}

int slaq_shares_place(slaq_shares *t, const char *user, const char *account)
{
    int parent = SLAQ_SHARES_ROOT;
    if (account && *account) {
        parent = slaq_shares_find(t, account);
        if (parent < 0)
            parent = slaq_shares_add(t, account, SLAQ_SHARES_ROOT, 1, 0);
        if (parent < 0 || t->e[parent].user)
            return parent < 0 ? parent : SLAQ_EINVAL;
    }
    int id = slaq_shares_find(t, user);
    if (id < 0)
        return slaq_shares_add(t, user, parent, 1, 1);
    return t->e[id].user && t->e[id].parent == parent ? id : SLAQ_EINVAL;
}

size_t slaq_shares_count(const slaq_shares *t) { return t->n; }

const slaq_share_entry *slaq_shares_at(const slaq_shares *t, int id)
{
    return id >= 0 && (size_t)id < t->n ? &t->e[id] : NULL;
}

int slaq_shares_set_weight(slaq_shares *t, int id, double weight)
{
    if (id <= 0 || (size_t)id >= t->n || !weight_ok(weight))
        return SLAQ_EINVAL;
    t->e[id].weight = weight;
    return SLAQ_OK;
}

int slaq_shares_set_caps(slaq_shares *t, int id, double max_cores,
                         unsigned max_jobs)
{
    if (id < 0 || (size_t)id >= t->n || isnan(max_cores) || max_cores <= 0)
        return SLAQ_EINVAL;
    t->e[id].max_cores = max_cores;
    t->e[id].max_jobs = max_jobs;
    return SLAQ_OK;
}

/* Accounts' usage as the sums of their children's. */
static void usage_sum(slaq_shares *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (!t->e[i].user)
            t->e[i].usage = 0;
    for (size_t i = t->n; i-- > 1;)
        t->e[t->e[i].parent].usage += t->e[i].usage;
}

int slaq_shares_set_usage(slaq_shares *t, int id, double usage)
{
    if (id <= 0 || (size_t)id >= t->n || !t->e[id].user ||
        !isfinite(usage) || usage < 0)
        return SLAQ_EINVAL;
    t->e[id].usage = usage;
    usage_sum(t);
    return SLAQ_OK;
}

int slaq_shares_set_half_life(slaq_shares *t, double half_life_s)
{
    if (!isfinite(half_life_s) || half_life_s < 0)
        return SLAQ_EINVAL;
    t->half_life = half_life_s;
    return SLAQ_OK;
}

double slaq_shares_half_life(const slaq_shares *t) { return t->half_life; }

int slaq_shares_charge(slaq_shares *t, double dt, const double *core_s)
{
    if (!isfinite(dt) || dt < 0)
        return SLAQ_EINVAL;
    for (size_t i = 0; core_s && i < t->n; i++)
        if (t->e[i].user && (!isfinite(core_s[i]) || core_s[i] < 0))
            return SLAQ_EINVAL;
    double keep = t->half_life > 0 ? exp2(-dt / t->half_life) : 1;
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].user)
            t->e[i].usage = t->e[i].usage * keep + (core_s ? core_s[i] : 0);
    usage_sum(t);
    return SLAQ_OK;
}

int slaq_shares_under(const slaq_shares *t, int a, int b)
{
    while (a >= 0 && (size_t)a < t->n) {
        if (a == b)
            return 1;
        a = t->e[a].parent;
    }
    return 0;
}

void slaq_shares_reset_jobs(slaq_shares *t)
{
    for (size_t i = 0; i < t->n; i++) {
        t->e[i].jobs = t->e[i].running = 0;
        t->e[i].cores = 0;
    }
}

void slaq_shares_add_job(slaq_shares *t, int id, size_t jobs, size_t running,
                         double cores)
{
    for (; id >= 0 && (size_t)id < t->n; id = t->e[id].parent) {
        t->e[id].jobs += jobs;
        t->e[id].running += running;
        t->e[id].cores += cores;
    }
}

int slaq_shares_room(const slaq_shares *t, int id)
{
    for (; id >= 0 && (size_t)id < t->n; id = t->e[id].parent)
        if (t->e[id].max_jobs && t->e[id].running >= t->e[id].max_jobs)
            return 0;
    return 1;
}

static int scratch_reserve(slaq_shares *t)
{
    if (t->scratch >= t->n)
        return SLAQ_OK;
    scratch_free(t);
    size_t n = t->n;
    t->first = malloc((n + 1) * sizeof *t->first);
    t->child = malloc(n * sizeof *t->child);
    t->want = malloc(n * sizeof *t->want);
    t->total = malloc(n * sizeof *t->total);
    t->eff = malloc(n * sizeof *t->eff);
    t->items = malloc(n * sizeof *t->items);
    if (!t->first || !t->child || !t->want || !t->total || !t->eff ||
        !t->items) {
        scratch_free(t);
        return SLAQ_ENOMEM;
    }
    t->scratch = n;
    return SLAQ_OK;
}

/* Children of every entry, in id order: child[first[i] .. first[i+1]). */
static void children(slaq_shares *t)
{
    size_t n = t->n;
    for (size_t i = 0; i <= n; i++)
        t->first[i] = 0;
    for (size_t i = 1; i < n; i++)
        t->first[t->e[i].parent + 1]++;
    for (size_t i = 0; i < n; i++)
        t->first[i + 1] += t->first[i];
    /* Fill with a cursor per parent: first[p] runs up to first[p+1] and
     * is then put back. */
    for (size_t i = 1; i < n; i++)
        t->child[t->first[t->e[i].parent]++] = i;
    for (size_t i = n; i-- > 0;)
        t->first[i + 1] = t->first[i];
    t->first[0] = 0;
}

/* Each entry's normalised share and its fair-share factor among its
 * siblings, into eff[] as its weight times the factor. */
static void weigh(slaq_shares *t)
{
    t->e[0].share = 1;
    t->e[0].factor = 1;
    t->eff[0] = 1;
    for (size_t p = 0; p < t->n; p++) {
        double wsum = 0, usum = 0;
        for (size_t k = t->first[p]; k < t->first[p + 1]; k++) {
            wsum += t->e[t->child[k]].weight;
            usum += t->e[t->child[k]].usage;
        }
        for (size_t k = t->first[p]; k < t->first[p + 1]; k++) {
            slaq_share_entry *x = &t->e[t->child[k]];
            double s = x->weight / wsum;
            x->share = t->e[p].share * s;
            x->factor = t->half_life > 0 && usum > 0
                            ? exp2(-(x->usage / usum) / s)
                            : 1;
            t->eff[t->child[k]] = x->weight * x->factor;
        }
    }
}

static int wf_cmp(const void *a, const void *b)
{
    const struct wf_item *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio < y->ratio ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Divides `amount` (<= the sum of its children's want[]) among p's
 * children by eff[], none above its want[]: into part[]. */
static void water_fill(slaq_shares *t, size_t p, double amount, double *part)
{
    size_t m = 0;
    double wsum = 0;
    for (size_t k = t->first[p]; k < t->first[p + 1]; k++) {
        size_t c = t->child[k];
        part[c] = 0;
        if (t->want[c] > 0) {
            t->items[m].ratio = t->want[c] / t->eff[c];
            t->items[m++].id = c;
            wsum += t->eff[c];
        }
    }
    heap_sort_records(t->items, m, sizeof *t->items, wf_cmp);
    double left = amount;
    for (size_t k = 0; k < m; k++) {
        size_t c = t->items[k].id;
        double fair = wsum > 0 ? left * t->eff[c] / wsum : 0;
        double give = fair < t->want[c] ? fair : t->want[c];
        part[c] = give;
        left -= give;
        wsum -= t->eff[c];
    }
}

int slaq_shares_divide(slaq_shares *t, size_t nnodes, const double *capacity,
                       const double *demand, double *part)
{
    size_t n = t->n;
    for (size_t v = 0; v < nnodes; v++) {
        if (!isfinite(capacity[v]) || capacity[v] < 0)
            return SLAQ_EINVAL;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(demand[v * n + i]) || demand[v * n + i] < 0)
                return SLAQ_EINVAL;
    }
    if (scratch_reserve(t) != SLAQ_OK)
        return SLAQ_ENOMEM;
    children(t);
    weigh(t);
    /* What each entry's jobs ask over the whole cluster, to spread a cap
     * on cores over the nodes. */
    for (size_t i = 0; i < n; i++) {
        t->total[i] = 0;
        t->e[i].part = 0;
    }
    for (size_t v = 0; v < nnodes; v++)
        for (size_t i = 0; i < n; i++)
            if (t->e[i].user)
                t->total[i] += demand[v * n + i];
    for (size_t i = n; i-- > 1;)
        t->total[t->e[i].parent] += t->total[i];
    for (size_t v = 0; v < nnodes; v++) {
        const double *d = demand + v * n;
        double *pt = part + v * n;
        /* want[]: what can be used here, from the leaves up; `raw` (in
         * pt[] for now) the same without caps, for the caps' spread. */
        for (size_t i = 0; i < n; i++)
            t->want[i] = pt[i] = t->e[i].user ? d[i] : 0;
        for (size_t i = n; i-- > 0;) {
            const slaq_share_entry *x = &t->e[i];
            if (isfinite(x->max_cores) && t->total[i] > 0) {
                double cap = x->max_cores * pt[i] / t->total[i];
                if (t->want[i] > cap)
                    t->want[i] = cap;
            }
            if (i > 0) {
                t->want[x->parent] += t->want[i];
                pt[x->parent] += pt[i];
            }
        }
        pt[0] = fmin(capacity[v], t->want[0]);
        for (size_t p = 0; p < n; p++)
            if (!t->e[p].user)
                water_fill(t, p, pt[p], pt);
        for (size_t i = 0; i < n; i++)
            t->e[i].part += pt[i];
    }
    return SLAQ_OK;
}

int slaq_shares_mix(slaq_shares *t, size_t nnodes, double g,
                    const double *ref, double *part)
{
    size_t n = t->n;
    if (!(g >= 0 && g <= 1))
        return SLAQ_EINVAL;
    for (size_t c = 0; c < nnodes * n; c++)
        if (!isfinite(ref[c]) || ref[c] < 0)
            return SLAQ_EINVAL;
    for (size_t i = 0; i < n; i++)
        t->e[i].part = 0;
    for (size_t v = 0; v < nnodes; v++) {
        double *pt = part + v * n;
        const double *r = ref + v * n;
        for (size_t i = 0; i < n; i++)
            if (!t->e[i].user)
                pt[i] = 0;
        /* children come after their parents: sum from the leaves up */
        for (size_t i = n; i-- > 0;) {
            if (t->e[i].user)
                pt[i] = g * pt[i] + (1 - g) * r[i];
            if (i > 0)
                pt[t->e[i].parent] += pt[i];
        }
        for (size_t i = 0; i < n; i++)
            t->e[i].part += pt[i];
    }
    return SLAQ_OK;
}
