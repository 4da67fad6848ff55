/*
 * query.c — online aggregation of TPC-H Q1, Q3, Q5, Q6, Q11, Q14, Q16, Q17
 * and Q19.
 *
 * lineitem is stored in a random order (tpch.c), so after n of its N rows
 * the rows seen are a simple random sample without replacement. A query
 * keeps running sums over the rows seen and turns them into estimates of
 * the full answer after every mini-batch:
 *
 *   SUM, COUNT   N/n times the sample total; variance N^2 (1 - n/N) s^2 / n
 *                (s^2 the sample variance of the per-row contribution,
 *                zero for rows the filter drops)
 *   AVG          the group's sample mean; variance (1 - n/N) s_g^2 / n_g
 *
 * with 95% bounds estimate ± 1.96 sd (Q1, Q6, Q19). The finite-population
 * factor (1 - n/N) makes the bound vanish when n = N, where every estimate
 * is the exact answer. Where no closed form exists, a Poisson bootstrap
 * (300 replicates by default; each row carries a Poisson(1) weight per
 * replicate, drawn from a hash of the row's position so it does not depend
 * on the thread that read it) gives the spread: the bound is the median's
 * distance to the 2.5% and 97.5% replicate quantiles, scaled by
 * sqrt(1 - n/N) and placed around the estimate (Q14, a ratio of sums; Q17,
 * nested). With aqp_opts.bootstrap_all every query's bounds come from the
 * bootstrap, as in iOLAP: every row then draws its weights, and a
 * replicate's SUM or COUNT is N times its weighted mean per row.
 *
 * Q17 is nested: a line counts if its quantity is below 0.2 times the
 * average quantity of its part, an inner aggregate that is itself only
 * estimated until the end. Like iOLAP, the query retains the tuples of the
 * parts the outer filter keeps and, after each mini-batch, re-evaluates the
 * retained tuples of every part whose inner average moved (the tuples it
 * misjudged flip in or out), in the point estimate and in every bootstrap
 * replicate. The retained set grows with the data seen, so later
 * mini-batches take longer: the slow-down ReLAQS's runtime model learns.
 *
 * The joins (Q3, Q5, Q11, Q16) sample one fact table and join the rest in
 * full: the dimension tables are read once when the query starts into
 * tables keyed by o_orderkey or p_partkey (direct-address hash tables:
 * the keys are dense), so every sampled fact row is joined exactly by a
 * lookup. The fact table is lineitem for Q3 and Q5; for Q11 and Q16 it is
 * partsupp, sampled a part at a time (all of a part's rows together, the
 * parts in random order: tpch.c), so N and n count parts. Estimators:
 *
 *   Q5   closed form, as Q6: per ASIAN nation a scaled SUM whose per-row
 *        contribution is the line's revenue when its order is of 1994, by
 *        a customer of that nation, from a supplier of the same nation.
 *   Q3   bootstrap. The cells are the revenues of the result's ten rows
 *        (rank 1..10); an order's revenue is N/n times its sampled lines'
 *        sum, and a rank is an order statistic over thousands of such sums,
 *        not a scaled sum: each replicate ranks its own weighted sums. The
 *        largest of many noisy sums is biased upwards early, which the
 *        bootstrap does not see: the bounds under-cover until most lines
 *        are read (docs/aqp.md has the measured rates).
 *   Q11  bootstrap over parts. A sampled part's value is exact; the HAVING
 *        threshold (FRACTION = 1/suppliers of the sampled total, scaled by
 *        P/n) is itself an estimate, so whether a part near it is in the
 *        result is uncertain; cells: the result's rows and total value,
 *        P/n times the sampled parts above the threshold. A replicate
 *        weights every sampled part and recomputes its own threshold.
 *   Q16  bootstrap over parts. COUNT(DISTINCT ps_suppkey) per (brand, type,
 *        size), summed per size: each (group, supplier) pair is credited
 *        to the sampled part that brought it first, and a size's estimate
 *        is its filtered parts (known from part) times the mean credit per
 *        sampled part, a ratio.
 *
 * Every mini-batch is data-parallel: its slice is split into one range per
 * thread, each thread fills its own accumulators (or, for Q3, Q11 and Q16,
 * collects the rows that join), and they are added up; the joins' rows are
 * added in the table's order, so no answer depends on the thread count.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "aqp/aqp.h"

#define Z95 1.959963984540054
#define MAX_THREADS 256

/* ---- the queries as SQL (TPC-H's text with its validation parameters,
 * dates as the ISO strings the SQLite export stores) ---- */

static const char *const NAMES[AQP_NQUERIES] = {
    "q1", "q6", "q14", "q17", "q19", "q3", "q5", "q11", "q16"};

static const char *const SQL[AQP_NQUERIES] = {
    [AQP_Q1] =
        "SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, "
        "sum(l_extendedprice) AS sum_base_price, "
        "sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, "
        "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, "
        "avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, "
        "avg(l_discount) AS avg_disc, count(*) AS count_order "
        "FROM lineitem WHERE l_shipdate <= '1998-09-02' "
        "GROUP BY l_returnflag, l_linestatus "
        "ORDER BY l_returnflag, l_linestatus",
    [AQP_Q6] =
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem "
        "WHERE l_shipdate >= '1994-01-01' AND l_shipdate < '1995-01-01' "
        "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    [AQP_Q14] =
        "SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' "
        "THEN l_extendedprice * (1 - l_discount) ELSE 0 END) "
        "/ sum(l_extendedprice * (1 - l_discount)) AS promo_revenue "
        "FROM lineitem, part WHERE l_partkey = p_partkey "
        "AND l_shipdate >= '1995-09-01' AND l_shipdate < '1995-10-01'",
    [AQP_Q17] =
        "SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part "
        "WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' "
        "AND p_container = 'MED BOX' AND l_quantity < "
        "(SELECT 0.2 * avg(l_quantity) FROM lineitem "
        "WHERE l_partkey = p_partkey)",
    [AQP_Q19] =
        "SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue "
        "FROM lineitem, part WHERE "
        "(p_partkey = l_partkey AND p_brand = 'Brand#12' "
        "AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') "
        "AND l_quantity >= 1 AND l_quantity <= 1 + 10 "
        "AND p_size BETWEEN 1 AND 5 AND l_shipmode IN ('AIR', 'AIR REG') "
        "AND l_shipinstruct = 'DELIVER IN PERSON') OR "
        "(p_partkey = l_partkey AND p_brand = 'Brand#23' "
        "AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') "
        "AND l_quantity >= 10 AND l_quantity <= 10 + 10 "
        "AND p_size BETWEEN 1 AND 10 AND l_shipmode IN ('AIR', 'AIR REG') "
        "AND l_shipinstruct = 'DELIVER IN PERSON') OR "
        "(p_partkey = l_partkey AND p_brand = 'Brand#34' "
        "AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') "
        "AND l_quantity >= 20 AND l_quantity <= 20 + 10 "
        "AND p_size BETWEEN 1 AND 15 AND l_shipmode IN ('AIR', 'AIR REG') "
        "AND l_shipinstruct = 'DELIVER IN PERSON')",
    [AQP_Q3] =
        "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, "
        "o_orderdate, o_shippriority FROM customer, orders, lineitem "
        "WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey "
        "AND l_orderkey = o_orderkey AND o_orderdate < '1995-03-15' "
        "AND l_shipdate > '1995-03-15' "
        "GROUP BY l_orderkey, o_orderdate, o_shippriority "
        "ORDER BY revenue DESC, o_orderdate LIMIT 10",
    [AQP_Q5] =
        "SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue "
        "FROM customer, orders, lineitem, supplier, nation, region "
        "WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey "
        "AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey "
        "AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey "
        "AND r_name = 'ASIA' AND o_orderdate >= '1994-01-01' "
        "AND o_orderdate < '1995-01-01' GROUP BY n_name ORDER BY revenue DESC",
    /* FRACTION is 0.0001 / SF, SF being the suppliers over 10,000 */
    [AQP_Q11] =
        "SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value "
        "FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey "
        "AND s_nationkey = n_nationkey AND n_name = 'GERMANY' "
        "GROUP BY ps_partkey HAVING sum(ps_supplycost * ps_availqty) > "
        "(SELECT sum(ps_supplycost * ps_availqty) * "
        "(0.0001 / ((SELECT count(*) FROM supplier) / 10000.0)) "
        "FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey "
        "AND s_nationkey = n_nationkey AND n_name = 'GERMANY') "
        "ORDER BY value DESC",
    [AQP_Q16] =
        "SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) "
        "AS supplier_cnt FROM partsupp, part WHERE p_partkey = ps_partkey "
        "AND p_brand <> 'Brand#45' AND p_type NOT LIKE 'MEDIUM POLISHED%' "
        "AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9) "
        "AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier "
        "WHERE s_comment LIKE '%Customer%Complaints%') "
        "GROUP BY p_brand, p_type, p_size "
        "ORDER BY supplier_cnt DESC, p_brand, p_type, p_size",
};

int aqp_query_parse(const char *name)
{
    for (int i = 0; i < AQP_NQUERIES; i++)
        if (name && (!strcmp(name, NAMES[i]) || !strcmp(name, NAMES[i] + 1)))
            return i;
    return -1;
}

const char *aqp_query_name(aqp_qid q)
{
    return q < AQP_NQUERIES ? NAMES[q] : "?";
}

/* Built once from NAMES, in the order of the query numbers; constant
 * afterwards. */
const char *aqp_query_list(void)
{
    static char list[128];
    if (list[0])
        return list;
    size_t len = 0;
    int prev = 0;
    for (int n = 0; n < AQP_NQUERIES; n++) {
        int next = -1;
        for (int i = 0; i < AQP_NQUERIES; i++) {
            int num = atoi(NAMES[i] + 1);
            if (num > prev && (next < 0 || num < atoi(NAMES[next] + 1)))
                next = i;
        }
        prev = atoi(NAMES[next] + 1);
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                n == 0 ? "" : n == AQP_NQUERIES - 1 ? " or "
                                                                   : ", ",
                                NAMES[next]);
    }
    return list;
}

const char *aqp_query_fact(aqp_qid q)
{
    return q == AQP_Q11 || q == AQP_Q16 ? "partsupp" : "lineitem";
}

size_t aqp_query_units(const aqp_db *db, aqp_qid q)
{
    return q == AQP_Q11 || q == AQP_Q16 ? db->nparts : db->nrows;
}

const char *aqp_query_sql(aqp_qid q)
{
    return q < AQP_NQUERIES ? SQL[q] : NULL;
}

const char *aqp_query_bounds_kind(aqp_qid q, int bootstrap_all)
{
    if (bootstrap_all)
        return "bootstrap";
    return q == AQP_Q1 || q == AQP_Q6 || q == AQP_Q19 || q == AQP_Q5
               ? "closed-form" : "bootstrap";
}

/* ---- Q1's groups and columns ---- */

/* The generator gives R and A only to received lines, which have shipped
 * by then (linestatus F), so Q1 has at most these four groups. */
static const char *const Q1_GROUPS[4] = {"A|F", "N|F", "N|O", "R|F"};
static const char *const Q1_COLS[8] = {
    "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
    "avg_qty", "avg_price", "avg_disc", "count_order"};
enum { Q1_QTY, Q1_PRICE, Q1_DISC_PRICE, Q1_CHARGE, Q1_DISC, Q1_NVALS };
#define Q1_STRIDE (1 + 2 * Q1_NVALS) /* count, then (sum, sum of squares) */

static int q1_group(uint8_t rf, uint8_t ls)
{
    if (ls == 'F')
        return rf == 'A' ? 0 : rf == 'N' ? 1 : rf == 'R' ? 3 : -1;
    return rf == 'N' ? 2 : -1;
}

/* ---- the joins' groups ---- */

/* Q5's groups: the nations of ASIA, in the order of their names. */
static const unsigned Q5_NATIONS[5] = {18, 8, 9, 12, 21}; /* CHINA, INDIA,
                                        INDONESIA, JAPAN, VIETNAM */
/* Q16's sizes, ascending (the query's IN list) */
static const uint8_t Q16_SIZES[8] = {3, 9, 14, 19, 23, 36, 45, 49};
#define Q5_STRIDE 3  /* sum, sum of squares, qualifying rows */
#define Q5_BOOT (5 * Q5_STRIDE)
#define Q16_STRIDE(R) (2 + 2 * (size_t)(R)) /* sum c, parts, then R (sum w c,
                                               sum w) pairs */

/* ---- bootstrap weights ---- */

static uint64_t poisson_thr[16];

/* Thresholds of the Poisson(1) CDF on the 64-bit integers: a uniform u
 * gives the weight #{k : u >= thr[k]}. Computed once; constant after. */
static void poisson_init(void)
{
    if (poisson_thr[0])
        return;
    long double p = expl(-1.0L), cdf = 0;
    for (int k = 0; k < 16; k++) {
        cdf += p;
        p /= (k + 1);
        long double t = cdf * 18446744073709551616.0L;
        poisson_thr[k] = t >= 18446744073709551615.0L ? UINT64_MAX
                                                     : (uint64_t)t;
    }
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The R weights of lineitem row `row` (its position in the file). */
static void boot_weights(uint64_t seed, size_t row, uint8_t *w, int R)
{
    uint64_t s = seed ^ ((uint64_t)row * 0xd6e8feb86659fd93ULL);
    for (int b = 0; b < R; b++) {
        uint64_t u = mix(&s);
        uint8_t k = 0;
        while (k < 16 && u >= poisson_thr[k])
            k++;
        w[b] = k;
    }
}

/* ---- the query state ---- */

struct q17_tuple {
    uint8_t qty;
    uint8_t in;     /* counted in the point estimate */
    uint32_t slot;
    double price;   /* its R weights are q17_w[index * R ...] */
};

struct q17_part {
    size_t *tuples; /* indices into q17 tuples */
    size_t n, cap;
    double sumq;
    double *wcnt, *wsumq; /* per replicate, R each */
    int changed;
};

struct aqp_query {
    const aqp_db *db;
    aqp_qid q;
    size_t batches, done;
    uint64_t seed;
    int R;                  /* bootstrap replicates (0: closed form only) */
    int boot_all;           /* bootstrap bounds for Q1, Q6 and Q19 too */
    size_t nkeys;
    char **keys;
    size_t nacc;
    double *acc;            /* running accumulators */
    double *est, *lo, *hi;
    uint64_t last_rows, last_flipped;
    /* Q17 */
    int32_t *slot_of_part;  /* -1, or the part's slot */
    struct q17_part *parts;
    size_t nslots;
    struct q17_tuple *tuples;
    size_t ntuples, captuples;
    double q17_sum;
    uint64_t q17_in;        /* retained tuples counted in q17_sum */
    uint8_t *q17_w;         /* R weights per retained tuple */
    double *q17_rep;        /* R replicate sums */
    double *rep;            /* R replicate estimates (scratch) */
    /* the joins (Q3, Q5, Q11, Q16) */
    size_t N;               /* sampling units of the fact table */
    int32_t *order_tag;     /* per order: Q3 its slot, Q3_NO_SLOT or -1;
                               Q5 its nation's group or -1 */
    int8_t *part_tag;       /* Q16, per part: its size's index or -1 */
    size_t q16_parts[8];    /* Q16: the parts the filter keeps, per size */
    uint64_t *q16_set;      /* Q16: the (group, supplier) pairs seen */
    size_t q16_n, q16_cap;
    size_t jn, jcap;        /* Q3's orders, Q11's parts retained */
    double *jval;           /* their revenue or value so far */
    double *jrep;           /* Q3: R replicate revenues per order */
    int64_t *jcents;        /* Q11: value in cents x quantity */
    int64_t q11_total;      /* Q11: the sum of jcents */
    uint8_t *jw;            /* Q11: R weights per part */
    double *jtop;           /* Q3: R x AQP_Q3_TOP; Q11: R values */
    int *jtopn;             /* Q3: R */
};

#define Q3_NO_SLOT (-2) /* a candidate order no line has reached yet */

/*
 * Accumulators, one array of doubles per query (and per thread while a
 * mini-batch runs), added element by element:
 *   Q1   per group: rows, then (sum, sum of squares) of each value;
 *        with bootstrap bounds then, per replicate b: the weight of every
 *        row at [Q1_BOOT + b], and per group g and item j (0: rows,
 *        1..5: values) the weighted sum at [Q1_BOOT + R (1 + g*6 + j) + b]
 *   Q6, Q19  sum, sum of squares, qualifying rows; with bootstrap bounds
 *        the weighted sums at [3 + b] and the weights at [3 + R + b]
 *   Q14  promo sum, sum, then the R replicates' (promo sum, sum) pairs
 *   Q17  none: its state is the retained tuples
 */
#define Q1_BOOT (4 * Q1_STRIDE)
#define Q1_ITEMS (1 + Q1_NVALS)

static size_t acc_size(aqp_qid q, int R, int boot_all)
{
    size_t r = (size_t)R;
    switch (q) {
    case AQP_Q1: return Q1_BOOT + (boot_all ? r * (1 + 4 * Q1_ITEMS) : 0);
    case AQP_Q14: return 2 + 2 * r;
    case AQP_Q17: return 0;
    case AQP_Q3: return 0;
    case AQP_Q5: return 5 * 3 + (boot_all ? 6 * r : 0);
    case AQP_Q11: return r;
    case AQP_Q16: return 8 * (2 + 2 * r);
    default: return 3 + (boot_all ? 2 * r : 0);
    }
}

static char *xstrdup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

static int joins_init(aqp_query *qr);

aqp_query *aqp_query_new(const aqp_db *db, aqp_qid q, size_t batches,
                         const aqp_opts *opts, char *err, size_t errlen)
{
    static const aqp_opts defaults = {1, AQP_BOOT_REPS, 0};
    if (!opts)
        opts = &defaults;
    if (q >= AQP_NQUERIES) {
        util_errf(err, errlen, "unknown query");
        return NULL;
    }
    if (opts->replicates < AQP_MIN_REPS || opts->replicates > AQP_MAX_REPS) {
        util_errf(err, errlen, "%d bootstrap replicates: expected %d .. %d",
                  opts->replicates, AQP_MIN_REPS, AQP_MAX_REPS);
        return NULL;
    }
    size_t units = aqp_query_units(db, q);
    if (batches < 1 || batches > units) {
        util_errf(err, errlen, "%zu mini-batches: expected 1 .. %zu (the %s "
                  "of %s)", batches, units,
                  q == AQP_Q11 || q == AQP_Q16 ? "parts" : "rows",
                  aqp_query_fact(q));
        return NULL;
    }
    poisson_init();
    aqp_query *qr = calloc(1, sizeof *qr);
    if (!qr)
        goto err;
    qr->db = db;
    qr->q = q;
    qr->batches = batches;
    qr->seed = opts->boot_seed;
    qr->boot_all = opts->bootstrap_all;
    qr->R = opts->replicates;
    qr->N = units;
    qr->nkeys = q == AQP_Q1 ? 32 : q == AQP_Q3 ? AQP_Q3_TOP : q == AQP_Q5 ? 5
                : q == AQP_Q11 ? 2 : q == AQP_Q16 ? 8 : 1;
    qr->keys = calloc(qr->nkeys, sizeof *qr->keys);
    qr->nacc = acc_size(q, qr->R, qr->boot_all);
    qr->acc = calloc(qr->nacc ? qr->nacc : 1, sizeof *qr->acc);
    qr->est = malloc(qr->nkeys * sizeof *qr->est);
    qr->lo = malloc(qr->nkeys * sizeof *qr->lo);
    qr->hi = malloc(qr->nkeys * sizeof *qr->hi);
    qr->rep = malloc((size_t)qr->R * sizeof *qr->rep);
    if (!qr->keys || !qr->acc || !qr->est || !qr->lo || !qr->hi || !qr->rep)
        goto err;
    for (size_t k = 0; k < qr->nkeys; k++) {
        qr->est[k] = qr->lo[k] = qr->hi[k] = NAN;
        char label[64];
        if (q == AQP_Q1)
            snprintf(label, sizeof label, "%s/%s", Q1_GROUPS[k / 8],
                     Q1_COLS[k % 8]);
        else if (q == AQP_Q3)
            snprintf(label, sizeof label, "rank%zu/revenue", k + 1);
        else if (q == AQP_Q5)
            snprintf(label, sizeof label, "%s/revenue",
                     aqp_nation_name(Q5_NATIONS[k]));
        else if (q == AQP_Q11)
            snprintf(label, sizeof label, "%s", k ? "value" : "parts");
        else if (q == AQP_Q16)
            snprintf(label, sizeof label, "size%u/supplier_cnt",
                     (unsigned)Q16_SIZES[k]);
        else
            snprintf(label, sizeof label, "%s",
                     q == AQP_Q14 ? "promo_revenue"
                     : q == AQP_Q17 ? "avg_yearly" : "revenue");
        if (!(qr->keys[k] = xstrdup(label)))
            goto err;
    }
    if (joins_init(qr) < 0)
        goto err;
    if (q == AQP_Q3 || q == AQP_Q11) {
        qr->jtop = malloc((size_t)qr->R * AQP_Q3_TOP * sizeof *qr->jtop);
        qr->jtopn = malloc((size_t)qr->R * sizeof *qr->jtopn);
        if (!qr->jtop || !qr->jtopn)
            goto err;
    }
    if (q == AQP_Q17) {
        qr->slot_of_part = malloc(db->nparts * sizeof *qr->slot_of_part);
        if (!qr->slot_of_part)
            goto err;
        for (size_t p = 0; p < db->nparts; p++) {
            int keep = db->p_brand[p] == 23 &&
                       !strcmp(aqp_container_name(db->p_container[p]),
                               "MED BOX");
            qr->slot_of_part[p] = keep ? (int32_t)qr->nslots++ : -1;
        }
        qr->parts = calloc(qr->nslots ? qr->nslots : 1, sizeof *qr->parts);
        qr->q17_rep = calloc((size_t)qr->R, sizeof *qr->q17_rep);
        if (!qr->parts || !qr->q17_rep)
            goto err;
        for (size_t sl = 0; sl < qr->nslots; sl++) {
            struct q17_part *p = &qr->parts[sl];
            p->wcnt = calloc(2 * (size_t)qr->R, sizeof *p->wcnt);
            if (!p->wcnt)
                goto err;
            p->wsumq = p->wcnt + qr->R;
        }
    }
    return qr;
err:
    aqp_query_free(qr);
    util_errf(err, errlen, "out of memory");
    return NULL;
}

void aqp_query_free(aqp_query *qr)
{
    if (!qr)
        return;
    for (size_t k = 0; qr->keys && k < qr->nkeys; k++)
        free(qr->keys[k]);
    free(qr->keys);
    free(qr->acc);
    free(qr->est);
    free(qr->lo);
    free(qr->hi);
    free(qr->slot_of_part);
    for (size_t s = 0; qr->parts && s < qr->nslots; s++) {
        free(qr->parts[s].tuples);
        free(qr->parts[s].wcnt);
    }
    free(qr->parts);
    free(qr->tuples);
    free(qr->q17_w);
    free(qr->q17_rep);
    free(qr->rep);
    free(qr->order_tag);
    free(qr->part_tag);
    free(qr->q16_set);
    free(qr->jval);
    free(qr->jrep);
    free(qr->jcents);
    free(qr->jw);
    free(qr->jtop);
    free(qr->jtopn);
    free(qr);
}

size_t aqp_query_nkeys(const aqp_query *qr) { return qr->nkeys; }
const char *aqp_query_key(const aqp_query *qr, size_t k)
{
    return k < qr->nkeys ? qr->keys[k] : NULL;
}
size_t aqp_query_done(const aqp_query *qr) { return qr->done; }
size_t aqp_query_batches(const aqp_query *qr) { return qr->batches; }
uint64_t aqp_query_last_rows(const aqp_query *qr) { return qr->last_rows; }
uint64_t aqp_query_last_flipped(const aqp_query *qr) { return qr->last_flipped; }
const double *aqp_query_estimates(const aqp_query *qr) { return qr->est; }
const double *aqp_query_lower(const aqp_query *qr) { return qr->lo; }
const double *aqp_query_upper(const aqp_query *qr) { return qr->hi; }

/* ---- scans: one per query, over rows [lo, hi), into `acc` ---- */

struct found { /* a Q17 line of a kept part, found by a scan */
    size_t row;
    uint32_t slot;
};

struct task {
    aqp_query *qr;
    size_t lo, hi;
    int t, nthreads;
    double *acc;
    uint8_t *w;             /* R bootstrap weights of the current row */
    struct found *found;
    size_t nfound, capfound;
    int oom;
};

static double price(const aqp_db *db, size_t r)
{
    return (double)db->l_extendedprice[r] / 100.0;
}

/* With bootstrap bounds everywhere (boot_all), every row of the slice
 * draws its R weights: the total weight of the sample is what a
 * replicate's SUM and COUNT are scaled by (N times the weighted mean). */
static void boot_row_weights(const aqp_query *qr, size_t r, uint8_t *w,
                             double *wtotal)
{
    boot_weights(qr->seed, r, w, qr->R);
    for (int b = 0; b < qr->R; b++)
        wtotal[b] += w[b];
}

static void scan_q1(const aqp_query *qr, size_t lo, size_t hi, double *acc,
                    uint8_t *w)
{
    const aqp_db *db = qr->db;
    const int32_t cut = aqp_days(1998, 9, 2);
    const int R = qr->R;
    double *rep = acc + Q1_BOOT;
    for (size_t r = lo; r < hi; r++) {
        if (qr->boot_all)
            boot_row_weights(qr, r, w, rep);
        if (db->l_shipdate[r] > cut)
            continue;
        int g = q1_group(db->l_returnflag[r], db->l_linestatus[r]);
        if (g < 0)
            continue; /* cannot happen with data that passed the load checks */
        double disc = db->l_discount[r] / 100.0, p = price(db, r);
        double v[Q1_NVALS];
        v[Q1_QTY] = db->l_quantity[r];
        v[Q1_PRICE] = p;
        v[Q1_DISC_PRICE] = p * (1 - disc);
        v[Q1_CHARGE] = p * (1 - disc) * (1 + db->l_tax[r] / 100.0);
        v[Q1_DISC] = disc;
        double *a = acc + g * Q1_STRIDE;
        a[0] += 1;
        for (int k = 0; k < Q1_NVALS; k++) {
            a[1 + 2 * k] += v[k];
            a[2 + 2 * k] += v[k] * v[k];
        }
        if (!qr->boot_all)
            continue;
        double *gr = rep + (size_t)R * (1 + g * Q1_ITEMS);
        for (int b = 0; b < R; b++)
            gr[b] += w[b];
        for (int k = 0; k < Q1_NVALS; k++) {
            double *kr = gr + (size_t)R * (1 + k);
            for (int b = 0; b < R; b++)
                kr[b] += w[b] * v[k];
        }
    }
}

/* A single filtered SUM's accumulators for row r with contribution y
 * (the row qualified) or none (y NaN: it did not). */
static void sum_row(const aqp_query *qr, size_t r, double y, double *acc,
                    uint8_t *w)
{
    if (qr->boot_all)
        boot_row_weights(qr, r, w, acc + 3 + qr->R);
    if (isnan(y))
        return;
    acc[0] += y;
    acc[1] += y * y;
    acc[2] += 1;
    if (qr->boot_all)
        for (int b = 0; b < qr->R; b++)
            acc[3 + b] += w[b] * y;
}

static void scan_q6(const aqp_query *qr, size_t lo, size_t hi, double *acc,
                    uint8_t *w)
{
    const aqp_db *db = qr->db;
    const int32_t from = aqp_days(1994, 1, 1), to = aqp_days(1995, 1, 1);
    for (size_t r = lo; r < hi; r++) {
        int32_t d = db->l_shipdate[r];
        uint8_t disc = db->l_discount[r];
        int keep = d >= from && d < to && disc >= 5 && disc <= 7 &&
                   db->l_quantity[r] < 24;
        sum_row(qr, r, keep ? price(db, r) * (disc / 100.0) : NAN, acc, w);
    }
}

static int container_is(uint8_t code, const char *c1,
                        const char *const *c2, int n)
{
    const char *name = aqp_container_name(code);
    size_t l = strlen(c1);
    if (strncmp(name, c1, l) || name[l] != ' ')
        return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(name + l + 1, c2[i]))
            return 1;
    return 0;
}

/* Q19's three branches, per part: bit i set when the part passes branch
 * i's part conditions (brand, container, size). */
static unsigned q19_part_mask(const aqp_db *db, size_t p)
{
    static const char *const sm[] = {"CASE", "BOX", "PACK", "PKG"};
    static const char *const med[] = {"BAG", "BOX", "PKG", "PACK"};
    unsigned m = 0;
    uint8_t brand = db->p_brand[p], size = db->p_size[p], c = db->p_container[p];
    if (brand == 12 && container_is(c, "SM", sm, 4) && size >= 1 && size <= 5)
        m |= 1;
    if (brand == 23 && container_is(c, "MED", med, 4) && size >= 1 && size <= 10)
        m |= 2;
    if (brand == 34 && container_is(c, "LG", sm, 4) && size >= 1 && size <= 15)
        m |= 4;
    return m;
}

static void scan_q19(const aqp_query *qr, size_t lo, size_t hi, double *acc,
                     uint8_t *w)
{
    const aqp_db *db = qr->db;
    for (size_t r = lo; r < hi; r++) {
        double y = NAN;
        unsigned m;
        uint8_t q = db->l_quantity[r];
        /* 'AIR' (1); the query's 'AIR REG' names no mode TPC-H generates */
        if (db->l_shipinstruct[r] == 0 && db->l_shipmode[r] == 1 &&
            (m = q19_part_mask(db, db->l_partkey[r] - 1)) != 0 &&
            ((m & 1 && q >= 1 && q <= 11) || (m & 2 && q >= 10 && q <= 20) ||
             (m & 4 && q >= 20 && q <= 30)))
            y = price(db, r) * (1 - db->l_discount[r] / 100.0);
        sum_row(qr, r, y, acc, w);
    }
}

static void scan_q14(const aqp_query *qr, size_t lo, size_t hi, double *acc,
                     uint8_t *w)
{
    const aqp_db *db = qr->db;
    const int32_t from = aqp_days(1995, 9, 1), to = aqp_days(1995, 10, 1);
    for (size_t r = lo; r < hi; r++) {
        int32_t d = db->l_shipdate[r];
        if (d < from || d >= to)
            continue;
        double v = price(db, r) * (1 - db->l_discount[r] / 100.0);
        int promo = db->p_type[db->l_partkey[r] - 1] / 25 == 5; /* PROMO ... */
        double pv = promo ? v : 0;
        acc[0] += pv;
        acc[1] += v;
        boot_weights(qr->seed, r, w, qr->R);
        for (int b = 0; b < qr->R; b++) {
            acc[2 + 2 * b] += w[b] * pv;
            acc[3 + 2 * b] += w[b] * v;
        }
    }
}

static void scan_q17(struct task *tk)
{
    const aqp_db *db = tk->qr->db;
    const int32_t *slot = tk->qr->slot_of_part;
    for (size_t r = tk->lo; r < tk->hi; r++) {
        int32_t s = slot[db->l_partkey[r] - 1];
        if (s < 0)
            continue;
        if (tk->nfound == tk->capfound) {
            size_t cap = grow_cap(tk->capfound, tk->nfound + 1, 64);
            if (!cap || GROW_ARRAY(tk->found, cap)) {
                tk->oom = 1;
                return;
            }
            tk->capfound = cap;
        }
        tk->found[tk->nfound++] = (struct found){r, (uint32_t)s};
    }
}

/* ---- joins: Q3, Q5, Q11, Q16 ---- */

static void est_total(double s1, double s2, double n, double N, double *e,
                      double *lo, double *hi);
static void boot_bounds(double e, double *rep, int R, double f, double *lo,
                        double *hi);

static int32_t day_q3(void) { return aqp_days(1995, 3, 15); }

/* Q16's part filter: the size's index in Q16_SIZES, or -1. */
static int q16_size_index(const aqp_db *db, size_t p)
{
    unsigned t = db->p_type[p];
    if (db->p_brand[p] == 45 || (t / 25 == 2 && t / 5 % 5 == 3))
        return -1; /* Brand#45, MEDIUM POLISHED ... */
    for (int i = 0; i < 8; i++)
        if (db->p_size[p] == Q16_SIZES[i])
            return i;
    return -1;
}

static int q11_is_german(const aqp_db *db, uint32_t suppkey)
{
    return db->s_nationkey[suppkey - 1] == 7; /* GERMANY */
}

/* Q11's value of the part at unit u, in cents x quantity (exact). */
static int64_t q11_unit_value(const aqp_db *db, size_t u)
{
    int64_t v = 0;
    for (size_t r = 4 * u; r < 4 * u + 4; r++)
        if (q11_is_german(db, db->ps_suppkey[r]))
            v += (int64_t)db->ps_supplycost[r] * db->ps_availqty[r];
    return v;
}

/* The dimension tables, joined once: Q3's candidate orders (BUILDING
 * customers, ordered before the cut) and Q5's orders of 1994 by an ASIAN
 * customer, each keyed by o_orderkey - 1; Q16's parts by their size. */
static int joins_init(aqp_query *qr)
{
    const aqp_db *db = qr->db;
    if (qr->q == AQP_Q3 || qr->q == AQP_Q5) {
        qr->order_tag = malloc(db->norders * sizeof *qr->order_tag);
        if (!qr->order_tag)
            return -1;
        const int32_t cut = day_q3(), y0 = aqp_days(1994, 1, 1),
                      y1 = aqp_days(1995, 1, 1);
        for (size_t o = 0; o < db->norders; o++) {
            size_t c = db->o_custkey[o] - 1;
            int32_t d = db->o_orderdate[o];
            int32_t tag = -1;
            if (qr->q == AQP_Q3) {
                if (db->c_mktsegment[c] == 1 && d < cut) /* BUILDING */
                    tag = Q3_NO_SLOT;
            } else if (d >= y0 && d < y1) {
                for (int g = 0; g < 5; g++)
                    if (db->c_nationkey[c] == Q5_NATIONS[g])
                        tag = g;
            }
            qr->order_tag[o] = tag;
        }
    }
    if (qr->q == AQP_Q16) {
        qr->part_tag = malloc(db->nparts * sizeof *qr->part_tag);
        if (!qr->part_tag)
            return -1;
        for (size_t p = 0; p < db->nparts; p++) {
            qr->part_tag[p] = (int8_t)q16_size_index(db, p);
            if (qr->part_tag[p] >= 0)
                qr->q16_parts[qr->part_tag[p]]++;
        }
    }
    return 0;
}

static void scan_q5(const aqp_query *qr, size_t lo, size_t hi, double *acc,
                    uint8_t *w)
{
    const aqp_db *db = qr->db;
    const int R = qr->R;
    for (size_t r = lo; r < hi; r++) {
        if (qr->boot_all)
            boot_row_weights(qr, r, w, acc + Q5_BOOT);
        int g = qr->order_tag[db->l_orderkey[r] - 1];
        if (g < 0 || db->s_nationkey[db->l_suppkey[r] - 1] != Q5_NATIONS[g])
            continue;
        double y = price(db, r) * (1 - db->l_discount[r] / 100.0);
        double *a = acc + g * Q5_STRIDE;
        a[0] += y;
        a[1] += y * y;
        a[2] += 1;
        if (qr->boot_all)
            for (int b = 0; b < R; b++)
                acc[Q5_BOOT + (size_t)R * (1 + g) + b] += w[b] * y;
    }
}

static int task_found(struct task *tk, size_t row, uint32_t slot)
{
    if (tk->nfound == tk->capfound) {
        size_t cap = grow_cap(tk->capfound, tk->nfound + 1, 64);
        if (!cap || GROW_ARRAY(tk->found, cap)) {
            tk->oom = 1;
            return -1;
        }
        tk->capfound = cap;
    }
    tk->found[tk->nfound++] = (struct found){row, slot};
    return 0;
}

/* Q3: the lines of candidate orders shipped after the cut; Q11: the parts
 * with a German supplier (and every part's weights); Q16: the parts the
 * part filter keeps. The serial step after the scan adds them up. */
static void scan_join(struct task *tk)
{
    const aqp_query *qr = tk->qr;
    const aqp_db *db = qr->db;
    const int32_t cut = day_q3();
    for (size_t u = tk->lo; u < tk->hi; u++) {
        int keep = 0;
        if (qr->q == AQP_Q3)
            keep = qr->order_tag[db->l_orderkey[u] - 1] != -1 &&
                   db->l_shipdate[u] > cut;
        else if (qr->q == AQP_Q16)
            keep = qr->part_tag[db->ps_partkey[4 * u] - 1] >= 0;
        else if (qr->q == AQP_Q11) {
            boot_row_weights(qr, u, tk->w, tk->acc);
            keep = q11_unit_value(db, u) > 0;
        }
        if (keep && task_found(tk, u, 0) < 0)
            return;
    }
}

/* Q16's set of (group, supplier) pairs seen: open addressing on 64-bit
 * keys (never 0), at most half full. 1 when the pair is new. */
static int q16_insert(aqp_query *qr, uint64_t key)
{
    if (2 * (qr->q16_n + 1) > qr->q16_cap) {
        size_t cap = qr->q16_cap ? 2 * qr->q16_cap : 1024;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < qr->q16_cap; i++) {
            uint64_t k = qr->q16_set[i];
            if (!k)
                continue;
            size_t h = (size_t)(k * 0x9e3779b97f4a7c15ULL >> 20) & (cap - 1);
            while (t[h])
                h = (h + 1) & (cap - 1);
            t[h] = k;
        }
        free(qr->q16_set);
        qr->q16_set = t;
        qr->q16_cap = cap;
    }
    size_t h = (size_t)(key * 0x9e3779b97f4a7c15ULL >> 20) & (qr->q16_cap - 1);
    while (qr->q16_set[h]) {
        if (qr->q16_set[h] == key)
            return 0;
        h = (h + 1) & (qr->q16_cap - 1);
    }
    qr->q16_set[h] = key;
    qr->q16_n++;
    return 1;
}

/* Adds the found units to the query's state, in the order of the fact
 * table (the tasks' ranges are ascending), so the state does not depend on
 * the number of threads. */
static int join_update(aqp_query *qr, struct task *tasks, int nthreads)
{
    const aqp_db *db = qr->db;
    const int R = qr->R;
    uint8_t *w = tasks[0].w;
    for (int t = 0; t < nthreads; t++)
        for (size_t i = 0; i < tasks[t].nfound; i++) {
            size_t u = tasks[t].found[i].row;
            if (qr->q == AQP_Q3) {
                int32_t *tag = &qr->order_tag[db->l_orderkey[u] - 1];
                if (*tag == Q3_NO_SLOT) {
                    if (qr->jn == qr->jcap) {
                        size_t cap = grow_cap(qr->jcap, qr->jn + 1, 256);
                        if (!cap || GROW_ARRAY(qr->jval, cap) ||
                            grow_array(&qr->jrep, cap, (size_t)R * sizeof(double)))
                            return -1;
                        qr->jcap = cap;
                    }
                    qr->jval[qr->jn] = 0;
                    memset(qr->jrep + qr->jn * (size_t)R, 0,
                           (size_t)R * sizeof *qr->jrep);
                    *tag = (int32_t)qr->jn++;
                }
                double v = price(db, u) * (1 - db->l_discount[u] / 100.0);
                double *rep = qr->jrep + (size_t)*tag * (size_t)R;
                qr->jval[*tag] += v;
                boot_weights(qr->seed, u, w, R);
                for (int b = 0; b < R; b++)
                    rep[b] += w[b] * v;
            } else if (qr->q == AQP_Q11) {
                if (qr->jn == qr->jcap) {
                    size_t cap = grow_cap(qr->jcap, qr->jn + 1, 256);
                    if (!cap || GROW_ARRAY(qr->jval, cap) ||
                        GROW_ARRAY(qr->jcents, cap) ||
                        grow_array(&qr->jw, cap, (size_t)R))
                        return -1;
                    qr->jcap = cap;
                }
                int64_t vc = q11_unit_value(db, u);
                qr->jcents[qr->jn] = vc;
                qr->jval[qr->jn] = (double)vc / 100.0;
                qr->q11_total += vc;
                boot_weights(qr->seed, u, qr->jw + qr->jn * (size_t)R, R);
                qr->jn++;
            } else if (qr->q == AQP_Q16) {
                uint32_t pk = db->ps_partkey[4 * u];
                int si = qr->part_tag[pk - 1];
                unsigned brand = db->p_brand[pk - 1];
                uint64_t gid = ((uint64_t)((brand / 10 - 1) * 5 + brand % 10 - 1) *
                                AQP_NTYPES + db->p_type[pk - 1]) * 51 +
                               db->p_size[pk - 1];
                double c = 0;
                for (size_t r = 4 * u; r < 4 * u + 4; r++) {
                    uint32_t s = db->ps_suppkey[r];
                    if (db->s_comment[s - 1] == AQP_COMMENT_COMPLAINTS)
                        continue;
                    int fresh = q16_insert(qr, gid << 32 | s);
                    if (fresh < 0)
                        return -1;
                    c += fresh;
                }
                double *a = qr->acc + (size_t)si * Q16_STRIDE(R);
                a[0] += c;
                a[1] += 1;
                boot_weights(qr->seed, u, w, R);
                for (int b = 0; b < R; b++) {
                    a[2 + 2 * b] += w[b] * c;
                    a[3 + 2 * b] += w[b];
                }
            }
        }
    return 0;
}

/* Inserts x into the descending top list t of at most `k` (n in use). */
static void top_insert(double *t, int *n, int k, double x)
{
    if (*n == k && !(x > t[k - 1]))
        return;
    int i = *n < k ? (*n)++ : k - 1;
    while (i > 0 && t[i - 1] < x) {
        t[i] = t[i - 1];
        i--;
    }
    t[i] = x;
}

/* Bootstrap replicates [lo, hi) of Q3 (each replicate's ten largest order
 * revenues into jtop) or Q11 (each replicate's threshold decides its own
 * rows and value: into rep and jtop); split among the threads. */
static void *join_boot_task(void *arg)
{
    struct task *tk = arg;
    aqp_query *qr = tk->qr;
    const size_t R = (size_t)qr->R;
    if (qr->q == AQP_Q3) {
        for (size_t b = tk->lo; b < tk->hi; b++) {
            qr->jtopn[b] = 0;
            for (size_t s = 0; s < qr->jn; s++) {
                double v = qr->jrep[s * R + b];
                if (v > 0)
                    top_insert(qr->jtop + b * AQP_Q3_TOP, &qr->jtopn[b],
                               AQP_Q3_TOP, v);
            }
        }
        return NULL;
    }
    const double P = (double)qr->N, S = (double)qr->db->nsuppliers;
    for (size_t b = tk->lo; b < tk->hi; b++) {
        double W = qr->acc[b], sw = 0;
        for (size_t i = 0; i < qr->jn; i++)
            sw += qr->jw[i * R + b] * qr->jval[i];
        double thr = W > 0 ? P / W * sw / S : NAN, c = 0, v = 0;
        for (size_t i = 0; i < qr->jn; i++) {
            double wi = qr->jw[i * R + b];
            if (wi > 0 && qr->jval[i] > thr) {
                c += wi;
                v += wi * qr->jval[i];
            }
        }
        qr->rep[b] = W > 0 ? c * P / W : NAN;
        qr->jtop[b] = W > 0 ? v * P / W : NAN;
    }
    return NULL;
}

static void finish_q3(aqp_query *qr, double N, double n, double f)
{
    const int R = qr->R, K = AQP_Q3_TOP;
    double top[AQP_Q3_TOP];
    int nt = 0;
    for (size_t s = 0; s < qr->jn; s++)
        top_insert(top, &nt, K, qr->jval[s]);
    const double *rtop = qr->jtop; /* R x K, by join_boot_task */
    const int *rn = qr->jtopn;
    for (int k = 0; k < K; k++) {
        if (k >= nt) {
            qr->est[k] = qr->lo[k] = qr->hi[k] = NAN;
            continue;
        }
        qr->est[k] = top[k] * (N / n);
        for (int b = 0; b < R; b++)
            qr->rep[b] = k < rn[b] ? rtop[(size_t)b * K + k] * (N / n) : NAN;
        boot_bounds(qr->est[k], qr->rep, R, f, &qr->lo[k], &qr->hi[k]);
    }
}

static void finish_q5(aqp_query *qr, double N, double n, double f)
{
    const double *a = qr->acc;
    const int R = qr->R;
    for (int g = 0; g < 5; g++) {
        const double *ga = a + g * Q5_STRIDE;
        if (!(ga[2] > 0)) /* no line of the nation yet: NULL */
            continue;
        est_total(ga[0], ga[1], n, N, &qr->est[g], &qr->lo[g], &qr->hi[g]);
        if (!qr->boot_all)
            continue;
        const double *wall = a + Q5_BOOT, *gr = wall + (size_t)R * (1 + g);
        for (int b = 0; b < R; b++)
            qr->rep[b] = wall[b] > 0 ? N * gr[b] / wall[b] : NAN;
        boot_bounds(qr->est[g], qr->rep, R, f, &qr->lo[g], &qr->hi[g]);
    }
}

/* Q11 on a sample of parts: with weights w_i (all 1 for the point
 * estimate) and W their total over every sampled part, the HAVING
 * threshold is P/W x sum w v / S, and the result's row count and value
 * are P/W times the weighted count and sum of the parts above it. */
static void finish_q11(aqp_query *qr, double P, double n, double f)
{
    const int R = qr->R;
    if (qr->jn == 0)
        return; /* no German supplier seen yet: no rows */
    /* the point estimate's HAVING in integers: exact at the end */
    double cnt = 0, val = 0;
    for (size_t i = 0; i < qr->jn; i++)
        if ((__int128)qr->jcents[i] * (__int128)qr->db->nsuppliers *
                (__int128)(uint64_t)n >
            (__int128)qr->q11_total * (__int128)(uint64_t)P) {
            cnt += 1;
            val += qr->jval[i];
        }
    qr->est[0] = cnt * (P / n);
    qr->est[1] = val * (P / n);
    double *rc = qr->rep, *rv = qr->jtop; /* by join_boot_task */
    boot_bounds(qr->est[0], rc, R, f, &qr->lo[0], &qr->hi[0]);
    boot_bounds(qr->est[1], rv, R, f, &qr->lo[1], &qr->hi[1]);
}

/* Q16 per size: the parts of the size the filter keeps, P_s, times the
 * mean over its sampled parts of the pairs each part saw first. */
static void finish_q16(aqp_query *qr)
{
    const int R = qr->R;
    for (int s = 0; s < 8; s++) {
        const double *a = qr->acc + (size_t)s * Q16_STRIDE(R);
        double Ps = (double)qr->q16_parts[s];
        if (!(a[1] > 0))
            continue;
        qr->est[s] = Ps * a[0] / a[1];
        for (int b = 0; b < R; b++)
            qr->rep[b] = a[3 + 2 * b] > 0 ? Ps * a[2 + 2 * b] / a[3 + 2 * b]
                                          : NAN;
        /* the sampling fraction of the size's parts, not of all parts */
        boot_bounds(qr->est[s], qr->rep, R, a[1] / Ps, &qr->lo[s],
                    &qr->hi[s]);
    }
}

static void *scan_task(void *arg)
{
    struct task *tk = arg;
    const aqp_query *qr = tk->qr;
    switch (qr->q) {
    case AQP_Q1: scan_q1(qr, tk->lo, tk->hi, tk->acc, tk->w); break;
    case AQP_Q6: scan_q6(qr, tk->lo, tk->hi, tk->acc, tk->w); break;
    case AQP_Q14: scan_q14(qr, tk->lo, tk->hi, tk->acc, tk->w); break;
    case AQP_Q17: scan_q17(tk); break;
    case AQP_Q19: scan_q19(qr, tk->lo, tk->hi, tk->acc, tk->w); break;
    case AQP_Q5: scan_q5(qr, tk->lo, tk->hi, tk->acc, tk->w); break;
    case AQP_Q3:
    case AQP_Q11:
    case AQP_Q16: scan_join(tk); break;
    default: break;
    }
    return NULL;
}

/* Runs fn(task t) for t in 0..n-1, task 0 on the calling thread. */
static int run_tasks(struct task *tasks, int n, void *(*fn)(void *),
                     char *err, size_t errlen)
{
    pthread_t th[MAX_THREADS];
    int started = 0, rc = 0;
    for (int t = 1; t < n; t++) {
        int e = pthread_create(&th[t], NULL, fn, &tasks[t]);
        if (e) {
            util_errf(err, errlen, "cannot start thread %d: %s", t,
                      strerror(e));
            rc = -1;
            break;
        }
        started = t;
    }
    fn(&tasks[0]);
    for (int t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
    return rc;
}

/* ---- estimates ---- */

static double sample_var(double s1, double s2, double n)
{
    if (n < 2)
        return NAN;
    double v = (s2 - s1 * s1 / n) / (n - 1);
    return v > 0 ? v : 0;
}

/* A SUM or COUNT over the whole table from sample totals s1 (of the
 * per-row contribution) and s2 (of its square) over n of N rows. */
static void est_total(double s1, double s2, double n, double N, double *e,
                      double *lo, double *hi)
{
    *e = s1 * (N / n);
    double f = n / N, sd = N * sqrt((1 - f) * sample_var(s1, s2, n) / n);
    if (n >= N)
        sd = 0;
    *lo = *e - Z95 * sd;
    *hi = *e + Z95 * sd;
}

/* An AVG over the ng sampled rows of a group. */
static void est_avg(double s1, double s2, double ng, double f, double *e,
                    double *lo, double *hi)
{
    *e = ng > 0 ? s1 / ng : NAN;
    double sd = sqrt((1 - f) * sample_var(s1, s2, ng) / ng);
    if (f >= 1)
        sd = 0;
    *lo = *e - Z95 * sd;
    *hi = *e + Z95 * sd;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(const double *sorted, int n, double p)
{
    double pos = p * (n - 1);
    int i = (int)pos;
    if (i >= n - 1)
        return sorted[n - 1];
    return sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]);
}

/* Bounds from replicate estimates (NaNs ignored), scaled by sqrt(1 - f). */
static void boot_bounds(double e, double *rep, int R, double f, double *lo,
                        double *hi)
{
    int n = 0;
    for (int b = 0; b < R; b++)
        if (isfinite(rep[b]))
            rep[n++] = rep[b];
    if (!isfinite(e) || n < 2 || f >= 1) {
        *lo = *hi = f >= 1 ? e : NAN;
        return;
    }
    qsort(rep, (size_t)n, sizeof *rep, cmp_double);
    double med = quantile(rep, n, 0.5), c = sqrt(1 - f);
    *lo = e - c * (med - quantile(rep, n, 0.025));
    *hi = e + c * (quantile(rep, n, 0.975) - med);
}

/* Q1's bootstrap bounds, replacing the closed-form ones: a replicate's
 * SUM and COUNT are N times its weighted mean per row, an AVG its
 * weighted mean over the group's rows. */
static void q1_boot_bounds(aqp_query *qr, double N, double f)
{
    const int R = qr->R;
    const double *rep = qr->acc + Q1_BOOT, *wall = rep;
    double *r = qr->rep;
    for (int g = 0; g < 4; g++) {
        const double *gr = rep + (size_t)R * (1 + g * Q1_ITEMS);
        double *e = qr->est + g * 8, *lo = qr->lo + g * 8, *hi = qr->hi + g * 8;
        if (!isfinite(e[7]))
            continue;
        /* keys 0..3: sums of values 0..3; 4, 5, 6: averages of qty,
         * price, disc; 7: count */
        static const int value_of[8] = {Q1_QTY, Q1_PRICE, Q1_DISC_PRICE,
                                         Q1_CHARGE, Q1_QTY, Q1_PRICE, Q1_DISC, -1};
        for (int k = 0; k < 8; k++) {
            const double *num = value_of[k] < 0 ? gr : gr + (size_t)R * (1 + value_of[k]);
            for (int b = 0; b < R; b++) {
                double den = k >= 4 && k <= 6 ? gr[b] : wall[b];
                r[b] = den > 0 ? num[b] / den * (k >= 4 && k <= 6 ? 1 : N) : NAN;
            }
            boot_bounds(e[k], r, R, f, &lo[k], &hi[k]);
        }
    }
}

static void finish_estimates(aqp_query *qr, double n)
{
    double N = (double)qr->N, f = n / N;
    const double *a = qr->acc;
    double *rep = qr->rep;
    const int R = qr->R;
    switch (qr->q) {
    case AQP_Q1:
        for (int g = 0; g < 4; g++) {
            const double *ga = a + g * Q1_STRIDE;
            double ng = ga[0];
            double *e = qr->est + g * 8, *lo = qr->lo + g * 8, *hi = qr->hi + g * 8;
            if (ng == 0) {
                for (int k = 0; k < 8; k++)
                    e[k] = lo[k] = hi[k] = NAN;
                continue;
            }
            for (int k = 0; k < 4; k++) /* sums: qty, price, disc_price, charge */
                est_total(ga[1 + 2 * k], ga[2 + 2 * k], n, N, &e[k], &lo[k], &hi[k]);
            est_avg(ga[1 + 2 * Q1_QTY], ga[2 + 2 * Q1_QTY], ng, f, &e[4], &lo[4], &hi[4]);
            est_avg(ga[1 + 2 * Q1_PRICE], ga[2 + 2 * Q1_PRICE], ng, f, &e[5], &lo[5], &hi[5]);
            est_avg(ga[1 + 2 * Q1_DISC], ga[2 + 2 * Q1_DISC], ng, f, &e[6], &lo[6], &hi[6]);
            est_total(ng, ng, n, N, &e[7], &lo[7], &hi[7]);
        }
        if (qr->boot_all)
            q1_boot_bounds(qr, N, f);
        break;
    case AQP_Q6:
    case AQP_Q19:
        /* SQL's SUM over no rows is NULL: no estimate before one row
         * has qualified */
        if (!(a[2] > 0))
            break;
        est_total(a[0], a[1], n, N, &qr->est[0], &qr->lo[0], &qr->hi[0]);
        if (qr->boot_all) {
            for (int b = 0; b < R; b++)
                rep[b] = a[3 + R + b] > 0 ? N * a[3 + b] / a[3 + R + b] : NAN;
            boot_bounds(qr->est[0], rep, R, f, &qr->lo[0], &qr->hi[0]);
        }
        break;
    case AQP_Q14:
        qr->est[0] = a[1] != 0 ? 100.0 * a[0] / a[1] : NAN;
        for (int b = 0; b < R; b++)
            rep[b] = a[3 + 2 * b] != 0 ? 100.0 * a[2 + 2 * b] / a[3 + 2 * b] : NAN;
        boot_bounds(qr->est[0], rep, R, f, &qr->lo[0], &qr->hi[0]);
        break;
    case AQP_Q17:
        if (!qr->q17_in)
            break; /* no line has qualified yet: NULL, as in SQL */
        qr->est[0] = qr->q17_sum * (N / n) / 7.0;
        for (int b = 0; b < R; b++)
            rep[b] = qr->q17_rep[b] * (N / n) / 7.0;
        boot_bounds(qr->est[0], rep, R, f, &qr->lo[0], &qr->hi[0]);
        break;
    case AQP_Q3: finish_q3(qr, N, n, f); break;
    case AQP_Q5: finish_q5(qr, N, n, f); break;
    case AQP_Q11: finish_q11(qr, N, n, f); break;
    case AQP_Q16: finish_q16(qr); break;
    default:
        break;
    }
}

/* ---- Q17: retained tuples ---- */

static int q17_retain(aqp_query *qr, const struct found *fd)
{
    const aqp_db *db = qr->db;
    if (qr->ntuples == qr->captuples) {
        size_t cap = grow_cap(qr->captuples, qr->ntuples + 1, 256);
        if (!cap || GROW_ARRAY(qr->tuples, cap) ||
            grow_array(&qr->q17_w, cap, (size_t)qr->R))
            return -1;
        qr->captuples = cap;
    }
    struct q17_part *p = &qr->parts[fd->slot];
    if (p->n == p->cap) {
        size_t cap = grow_cap(p->cap, p->n + 1, 16);
        if (!cap || GROW_ARRAY(p->tuples, cap))
            return -1;
        p->cap = cap;
    }
    struct q17_tuple *t = &qr->tuples[qr->ntuples];
    t->qty = db->l_quantity[fd->row];
    t->in = 0;
    t->slot = fd->slot;
    t->price = price(db, fd->row);
    uint8_t *w = qr->q17_w + qr->ntuples * (size_t)qr->R;
    boot_weights(qr->seed, fd->row, w, qr->R);
    p->tuples[p->n++] = qr->ntuples++;
    p->sumq += t->qty;
    for (int b = 0; b < qr->R; b++) {
        p->wcnt[b] += w[b];
        p->wsumq[b] += w[b] * (double)t->qty;
    }
    p->changed = 1;
    return 0;
}

/* Bootstrap replicates [b0, b1): each replicate's inner averages decide
 * its own outer sum over every retained tuple. */
static void *q17_boot_task(void *arg)
{
    struct task *tk = arg;
    aqp_query *qr = tk->qr;
    for (size_t b = tk->lo; b < tk->hi; b++) {
        double sum = 0;
        for (size_t s = 0; s < qr->nslots; s++) {
            const struct q17_part *p = &qr->parts[s];
            if (p->wcnt[b] == 0)
                continue;
            double thr = 0.2 * (p->wsumq[b] / p->wcnt[b]);
            for (size_t i = 0; i < p->n; i++) {
                const struct q17_tuple *t = &qr->tuples[p->tuples[i]];
                if (t->qty < thr)
                    sum += qr->q17_w[p->tuples[i] * (size_t)qr->R + b] *
                           t->price;
            }
        }
        qr->q17_rep[b] = sum;
    }
    return NULL;
}

static int q17_update(aqp_query *qr, struct task *tasks, int nthreads,
                      char *err, size_t errlen)
{
    size_t before = qr->ntuples;
    for (int t = 0; t < nthreads; t++)
        for (size_t i = 0; i < tasks[t].nfound; i++)
            if (q17_retain(qr, &tasks[t].found[i]) < 0) {
                util_errf(err, errlen, "out of memory retaining Q17's tuples");
                return -1;
            }
    /* Re-evaluate every retained tuple of a part whose inner average
     * moved; the tuples retained before this mini-batch are the
     * recomputation. */
    uint64_t reeval = 0, flipped = 0, nin = 0;
    double sum = 0;
    for (size_t s = 0; s < qr->nslots; s++) {
        struct q17_part *p = &qr->parts[s];
        if (p->changed) {
            double thr = 0.2 * (p->sumq / (double)p->n);
            for (size_t i = 0; i < p->n; i++) {
                struct q17_tuple *t = &qr->tuples[p->tuples[i]];
                uint8_t in = t->qty < thr;
                if (p->tuples[i] < before) {
                    reeval++;
                    flipped += in != t->in;
                }
                t->in = in;
            }
            p->changed = 0;
        }
        for (size_t i = 0; i < p->n; i++) {
            const struct q17_tuple *t = &qr->tuples[p->tuples[i]];
            if (t->in) {
                sum += t->price;
                nin++;
            }
        }
    }
    qr->q17_sum = sum;
    qr->q17_in = nin;
    qr->last_rows += reeval;
    qr->last_flipped = flipped;
    for (int t = 0; t < nthreads; t++) {
        tasks[t].lo = (size_t)qr->R * t / nthreads;
        tasks[t].hi = (size_t)qr->R * (t + 1) / nthreads;
    }
    return run_tasks(tasks, nthreads, q17_boot_task, err, errlen);
}

/* ---- one mini-batch ---- */

int aqp_query_step(aqp_query *qr, int threads, char *err, size_t errlen)
{
    if (qr->done >= qr->batches)
        return 0;
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    size_t N = qr->N;
    size_t lo = N * qr->done / qr->batches;
    size_t hi = N * (qr->done + 1) / qr->batches;
    if ((size_t)threads > hi - lo)
        threads = (int)(hi - lo > 0 ? hi - lo : 1);
    struct task *tasks = calloc((size_t)threads, sizeof *tasks);
    double *accs = calloc((size_t)threads * (qr->nacc ? qr->nacc : 1),
                          sizeof *accs);
    uint8_t *w = malloc((size_t)threads * (size_t)qr->R);
    int rc = -1;
    if (!tasks || !accs || !w) {
        util_errf(err, errlen, "out of memory");
        goto out;
    }
    for (int t = 0; t < threads; t++) {
        tasks[t] = (struct task){.qr = qr, .t = t, .nthreads = threads};
        tasks[t].lo = lo + (hi - lo) * (size_t)t / (size_t)threads;
        tasks[t].hi = lo + (hi - lo) * (size_t)(t + 1) / (size_t)threads;
        tasks[t].acc = accs + (size_t)t * qr->nacc;
        tasks[t].w = w + (size_t)t * (size_t)qr->R;
    }
    if (run_tasks(tasks, threads, scan_task, err, errlen) < 0)
        goto out;
    for (int t = 0; t < threads; t++) {
        if (tasks[t].oom) {
            util_errf(err, errlen, "out of memory scanning");
            goto out;
        }
        for (size_t k = 0; k < qr->nacc; k++)
            qr->acc[k] += tasks[t].acc[k];
    }
    qr->last_rows = (hi - lo) * (qr->q == AQP_Q11 || qr->q == AQP_Q16 ? 4 : 1);
    qr->last_flipped = 0;
    if (qr->q == AQP_Q17 && q17_update(qr, tasks, threads, err, errlen) < 0)
        goto out;
    if ((qr->q == AQP_Q3 || qr->q == AQP_Q11 || qr->q == AQP_Q16) &&
        join_update(qr, tasks, threads) < 0) {
        util_errf(err, errlen, "out of memory joining %s",
                  aqp_query_name(qr->q));
        goto out;
    }
    if (qr->q == AQP_Q3 || qr->q == AQP_Q11) {
        int nt = threads < qr->R ? threads : qr->R;
        for (int t = 0; t < nt; t++) {
            tasks[t].lo = (size_t)qr->R * t / nt;
            tasks[t].hi = (size_t)qr->R * (t + 1) / nt;
        }
        if (run_tasks(tasks, nt, join_boot_task, err, errlen) < 0)
            goto out;
    }
    qr->done++;
    finish_estimates(qr, (double)hi);
    rc = 1;
out:
    for (int t = 0; tasks && t < threads; t++)
        free(tasks[t].found);
    free(tasks);
    free(accs);
    free(w);
    return rc;
}
