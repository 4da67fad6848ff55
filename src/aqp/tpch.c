/*
 * tpch.c — the TPC-H tables slaq-aqp's queries read, generated with the
 * value distributions of the TPC-H specification (section 4.2.3), and
 * their on-disk form.
 *
 * Every table a query here reads is materialised: lineitem and partsupp
 * (the fact tables, in random order), part, orders, customer and supplier
 * column by column, nation and region as constant tables (their 25 and 5
 * rows are the specification's). Only the columns the queries use exist.
 * The generator follows the specification's distributions, not dbgen's
 * random streams, so the data is TPC-H-like, not byte-identical to dbgen:
 *
 *   p_brand       Brand#MN, M and N uniform in 1..5
 *   p_type        uniform over the 6 x 5 x 5 syllable combinations
 *   p_size        uniform 1..50
 *   p_container   uniform over the 5 x 8 syllable combinations
 *   p_retailprice (90000 + ((key/10) mod 20001) + 100 (key mod 1000)) / 100
 *   o_orderdate   uniform in [1992-01-01, 1998-12-31 - 151 days]
 *   lines/order   uniform 1..7
 *   l_partkey     uniform over the parts
 *   l_quantity    uniform 1..50; l_extendedprice = quantity x retailprice
 *   l_discount    uniform 0.00..0.10; l_tax uniform 0.00..0.08
 *   l_shipdate    orderdate + 1..121; l_commitdate orderdate + 30..90;
 *   l_receiptdate shipdate + 1..30
 *   l_returnflag  R or A (even odds) if receiptdate <= 1995-06-17, else N
 *   l_linestatus  O if shipdate > 1995-06-17, else F
 *   l_shipinstruct, l_shipmode uniform over their 4 and 7 values
 *   l_suppkey     one of the part's four suppliers, uniform
 *   o_custkey     uniform over the customers whose key is not a multiple
 *                 of 3 (a third of the customers place no order)
 *   o_orderkey    1..orders, dense (the specification's keys are sparse,
 *                 8 of every 32; no query here depends on their values)
 *   o_shippriority 0
 *   c_mktsegment  uniform over the 5 segments; c_nationkey uniform 0..24
 *   s_nationkey   uniform 0..24; s_comment: 5 suppliers in 10,000 (at
 *                 least one) say "Customer ... Complaints", as many others
 *                 "Customer ... Recommends", the rest neither
 *   ps_suppkey    the i-th supplier of part p (i = 0..3), S suppliers:
 *                 (p + i (S/4 + (p-1)/S)) mod S + 1
 *   ps_availqty   uniform 1..9999; ps_supplycost uniform 1.00..1000.00
 *
 * Sizes: SF x 200,000 parts (800,000 partsupp rows), 10,000 suppliers,
 * 150,000 customers and 1,500,000 orders, each at least 1.
 *
 * Every draw comes from splitmix64 streams seeded from the user's seed, one
 * stream per purpose, so the parts do not change when lineitem's draws do,
 * and adding a table changed no value of the tables there were before.
 * lineitem is then permuted (Fisher-Yates, its own stream): any prefix is
 * a uniform random sample without replacement, which is what online
 * aggregation needs from a mini-batch. partsupp is stored part by part
 * (each part's four rows together) with the parts in a random order: a
 * prefix is a random sample of parts with all their rows, a cluster
 * sample, which a GROUP BY ps_partkey (Q11) and a COUNT(DISTINCT) over a
 * part's suppliers (Q16) need.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/util.h"
#include "aqp/aqp.h"

#define TPCH_MAGIC "SLAQTPCH"
#define TPCH_VERSION 2u
#define TPCH_HEADER 96u

/* ---- dictionaries ---- */

static const char *const TYPE1[6] = {"STANDARD", "SMALL", "MEDIUM",
                                     "LARGE", "ECONOMY", "PROMO"};
static const char *const TYPE2[5] = {"ANODIZED", "BURNISHED", "PLATED",
                                     "POLISHED", "BRUSHED"};
static const char *const TYPE3[5] = {"TIN", "NICKEL", "BRASS", "STEEL",
                                     "COPPER"};
static const char *const CONT1[5] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const CONT2[8] = {"CASE", "BOX", "BAG", "JAR",
                                     "PKG", "PACK", "CAN", "DRUM"};
static const char *const INSTRUCT[AQP_NINSTRUCT] = {
    "DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
static const char *const SHIPMODE[AQP_NSHIPMODES] = {
    "REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};

static const char *const SEGMENT[AQP_NSEGMENTS] = {
    "AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"};
static const char *const REGION[AQP_NREGIONS] = {
    "AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
/* The specification's nations, by key, and the region of each. */
static const char *const NATION[AQP_NNATIONS] = {
    "ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA",
    "FRANCE", "GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN",
    "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA",
    "SAUDI ARABIA", "VIETNAM", "RUSSIA", "UNITED KINGDOM", "UNITED STATES"};
static const uint8_t NATION_REGION[AQP_NNATIONS] = {
    0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};

static char type_names[AQP_NTYPES][32];
static char container_names[AQP_NCONTAINERS][16];

/* The combined names are built once; the tables are constant afterwards. */
static void names_init(void)
{
    if (type_names[0][0])
        return;
    for (unsigned i = 0; i < AQP_NTYPES; i++)
        snprintf(type_names[i], sizeof type_names[i], "%s %s %s",
                 TYPE1[i / 25], TYPE2[i / 5 % 5], TYPE3[i % 5]);
    for (unsigned i = 0; i < AQP_NCONTAINERS; i++)
        snprintf(container_names[i], sizeof container_names[i], "%s %s",
                 CONT1[i / 8], CONT2[i % 8]);
}

const char *aqp_type_name(unsigned code)
{
    names_init();
    return code < AQP_NTYPES ? type_names[code] : "?";
}

const char *aqp_container_name(unsigned code)
{
    names_init();
    return code < AQP_NCONTAINERS ? container_names[code] : "?";
}

const char *aqp_instruct_name(unsigned code)
{
    return code < AQP_NINSTRUCT ? INSTRUCT[code] : "?";
}

const char *aqp_shipmode_name(unsigned code)
{
    return code < AQP_NSHIPMODES ? SHIPMODE[code] : "?";
}

const char *aqp_segment_name(unsigned code)
{
    return code < AQP_NSEGMENTS ? SEGMENT[code] : "?";
}

const char *aqp_nation_name(unsigned key)
{
    return key < AQP_NNATIONS ? NATION[key] : "?";
}

unsigned aqp_nation_region(unsigned key)
{
    return key < AQP_NNATIONS ? NATION_REGION[key] : AQP_NREGIONS;
}

const char *aqp_region_name(unsigned key)
{
    return key < AQP_NREGIONS ? REGION[key] : "?";
}

uint32_t aqp_part_supplier(uint32_t partkey, unsigned i, size_t nsuppliers)
{
    uint64_t S = nsuppliers, p = partkey;
    return (uint32_t)((p + i * (S / 4 + (p - 1) / S)) % S + 1);
}

/* ---- dates ---- */

/* Days from 1970-01-01 in the proleptic Gregorian calendar: count whole
 * 400-year eras from year 0 (shifted so the year starts in March and the
 * leap day is the last day of the year). */
int32_t aqp_days(int y, int m, int d)
{
    y -= m <= 2;
    int era = (y >= 0 ? y : y - 399) / 400;
    int yoe = y - era * 400;
    int doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void aqp_date_str(int32_t days, char out[11])
{
    int z = days + 719468;
    int era = (z >= 0 ? z : z - 146096) / 146097;
    int doe = z - era * 146097;
    int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int y = yoe + era * 400;
    int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int mp = (5 * doy + 2) / 153;
    int d = doy - (153 * mp + 2) / 5 + 1;
    int m = mp + (mp < 10 ? 3 : -9);
    y += m <= 2;
    unsigned uy = (unsigned)y % 10000, um = (unsigned)m % 100,
             ud = (unsigned)d % 100;
    out[0] = (char)('0' + uy / 1000);
    out[1] = (char)('0' + uy / 100 % 10);
    out[2] = (char)('0' + uy / 10 % 10);
    out[3] = (char)('0' + uy % 10);
    out[4] = '-';
    out[5] = (char)('0' + um / 10);
    out[6] = (char)('0' + um % 10);
    out[7] = '-';
    out[8] = (char)('0' + ud / 10);
    out[9] = (char)('0' + ud % 10);
    out[10] = 0;
}

/* ---- random streams ---- */

static uint64_t sm_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi] (multiply-shift; the bias is below 2^-32
 * for every range used here). */
static int64_t sm_range(uint64_t *s, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)((sm_next(s) >> 32) * span >> 32);
}

static uint64_t stream(uint64_t seed, uint64_t purpose)
{
    uint64_t s = seed ^ (purpose * 0xd1b54a32d192ed03ULL);
    return sm_next(&s);
}

/* ---- layout: every column in one block, each 8-byte aligned ---- */

enum { T_LINEITEM, T_PART, T_ORDERS, T_CUSTOMER, T_SUPPLIER, T_PARTSUPP,
       T_NTABLES };

struct col {
    size_t off;
    size_t elem;
    int table; /* T_*: the table whose row count the column has */
};

enum {
    C_ORDERKEY, C_PARTKEY, C_LINENUMBER, C_QUANTITY, C_PRICE, C_DISCOUNT,
    C_TAX, C_RETURNFLAG, C_LINESTATUS, C_SHIPDATE, C_COMMITDATE,
    C_RECEIPTDATE, C_INSTRUCT, C_SHIPMODE, C_BRAND, C_TYPE, C_SIZE,
    C_CONTAINER, C_RETAILPRICE, C_SUPPKEY, C_O_ORDERDATE, C_O_CUSTKEY,
    C_C_SEGMENT, C_C_NATION, C_S_NATION, C_S_COMMENT, C_PS_PARTKEY,
    C_PS_SUPPKEY, C_PS_AVAILQTY, C_PS_SUPPLYCOST, C_NCOLS
};

static const struct col COLS_PROTO[C_NCOLS] = {
    [C_ORDERKEY] = {0, 4, T_LINEITEM},    [C_PARTKEY] = {0, 4, T_LINEITEM},
    [C_LINENUMBER] = {0, 1, T_LINEITEM},  [C_QUANTITY] = {0, 1, T_LINEITEM},
    [C_PRICE] = {0, 8, T_LINEITEM},       [C_DISCOUNT] = {0, 1, T_LINEITEM},
    [C_TAX] = {0, 1, T_LINEITEM},         [C_RETURNFLAG] = {0, 1, T_LINEITEM},
    [C_LINESTATUS] = {0, 1, T_LINEITEM},  [C_SHIPDATE] = {0, 4, T_LINEITEM},
    [C_COMMITDATE] = {0, 4, T_LINEITEM},  [C_RECEIPTDATE] = {0, 4, T_LINEITEM},
    [C_INSTRUCT] = {0, 1, T_LINEITEM},    [C_SHIPMODE] = {0, 1, T_LINEITEM},
    [C_BRAND] = {0, 1, T_PART},           [C_TYPE] = {0, 1, T_PART},
    [C_SIZE] = {0, 1, T_PART},            [C_CONTAINER] = {0, 1, T_PART},
    [C_RETAILPRICE] = {0, 8, T_PART},     [C_SUPPKEY] = {0, 4, T_LINEITEM},
    [C_O_ORDERDATE] = {0, 4, T_ORDERS},   [C_O_CUSTKEY] = {0, 4, T_ORDERS},
    [C_C_SEGMENT] = {0, 1, T_CUSTOMER},   [C_C_NATION] = {0, 1, T_CUSTOMER},
    [C_S_NATION] = {0, 1, T_SUPPLIER},    [C_S_COMMENT] = {0, 1, T_SUPPLIER},
    [C_PS_PARTKEY] = {0, 4, T_PARTSUPP},  [C_PS_SUPPKEY] = {0, 4, T_PARTSUPP},
    [C_PS_AVAILQTY] = {0, 2, T_PARTSUPP}, [C_PS_SUPPLYCOST] = {0, 4, T_PARTSUPP},
};

/* Rows of every table (nation and region are constants, not stored). */
struct sizes {
    size_t n[T_NTABLES];
};

static struct sizes db_sizes(const aqp_db *db)
{
    struct sizes z = {{db->nrows, db->nparts, db->norders, db->ncustomers,
                       db->nsuppliers, db->npartsupp}};
    return z;
}

/* Offsets of every column for the given sizes; returns the block size. */
static size_t layout(const struct sizes *z, struct col cols[C_NCOLS])
{
    size_t off = 0;
    for (int i = 0; i < C_NCOLS; i++) {
        cols[i] = COLS_PROTO[i];
        cols[i].off = off;
        off += (z->n[cols[i].table] * cols[i].elem + 7) & ~(size_t)7;
    }
    return off;
}

/* Points the columns into `block` (every column, laid out by layout());
 * NULL block: a new zeroed allocation. */
static aqp_db *db_alloc(const struct sizes *z, void *block)
{
    struct col cols[C_NCOLS];
    size_t size = layout(z, cols);
    aqp_db *db = calloc(1, sizeof *db);
    if (!db)
        return NULL;
    db->block = block ? block : calloc(1, size ? size : 8);
    if (!db->block) {
        free(db);
        return NULL;
    }
    char *b = db->block;
#define COL(c) ((void *)(b + cols[c].off))
    db->nrows = z->n[T_LINEITEM];
    db->nparts = z->n[T_PART];
    db->norders = z->n[T_ORDERS];
    db->ncustomers = z->n[T_CUSTOMER];
    db->nsuppliers = z->n[T_SUPPLIER];
    db->npartsupp = z->n[T_PARTSUPP];
    db->l_orderkey = COL(C_ORDERKEY);
    db->l_partkey = COL(C_PARTKEY);
    db->l_suppkey = COL(C_SUPPKEY);
    db->l_linenumber = COL(C_LINENUMBER);
    db->l_quantity = COL(C_QUANTITY);
    db->l_extendedprice = COL(C_PRICE);
    db->l_discount = COL(C_DISCOUNT);
    db->l_tax = COL(C_TAX);
    db->l_returnflag = COL(C_RETURNFLAG);
    db->l_linestatus = COL(C_LINESTATUS);
    db->l_shipdate = COL(C_SHIPDATE);
    db->l_commitdate = COL(C_COMMITDATE);
    db->l_receiptdate = COL(C_RECEIPTDATE);
    db->l_shipinstruct = COL(C_INSTRUCT);
    db->l_shipmode = COL(C_SHIPMODE);
    db->p_brand = COL(C_BRAND);
    db->p_type = COL(C_TYPE);
    db->p_size = COL(C_SIZE);
    db->p_container = COL(C_CONTAINER);
    db->p_retailprice = COL(C_RETAILPRICE);
    db->o_orderdate = COL(C_O_ORDERDATE);
    db->o_custkey = COL(C_O_CUSTKEY);
    db->c_mktsegment = COL(C_C_SEGMENT);
    db->c_nationkey = COL(C_C_NATION);
    db->s_nationkey = COL(C_S_NATION);
    db->s_comment = COL(C_S_COMMENT);
    db->ps_partkey = COL(C_PS_PARTKEY);
    db->ps_suppkey = COL(C_PS_SUPPKEY);
    db->ps_availqty = COL(C_PS_AVAILQTY);
    db->ps_supplycost = COL(C_PS_SUPPLYCOST);
#undef COL
    return db;
}

void aqp_db_free(aqp_db *db)
{
    if (!db)
        return;
    if (db->map)
        munmap(db->map, db->map_len);
    else
        free(db->block);
    free(db);
}

/* ---- generation ---- */

/* Applies the permutation `perm` to a column of `n` elements of `elem`
 * bytes, through `tmp` (n * elem bytes). */
static void permute(void *col, size_t n, size_t elem, const uint32_t *perm,
                    void *tmp)
{
    const char *src = col;
    char *dst = tmp;
    for (size_t i = 0; i < n; i++)
        memcpy(dst + i * elem, src + (size_t)perm[i] * elem, elem);
    memcpy(col, tmp, n * elem);
}

/* A uniform permutation of 0..n-1 (Fisher-Yates on `stream_`). */
static void shuffle(uint32_t *perm, size_t n, uint64_t stream_)
{
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)sm_range(&stream_, 0, (int64_t)i - 1);
        uint32_t t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

static size_t at_least_one(double x)
{
    long long v = llround(x);
    return v < 1 ? 1 : (size_t)v;
}

/* Marks `count` distinct suppliers not yet marked with `mark`. */
static void mark_suppliers(uint8_t *comment, size_t n, size_t count,
                           uint8_t mark, uint64_t *s)
{
    for (size_t done = 0; done < count && done < n;) {
        size_t i = (size_t)sm_range(s, 0, (int64_t)n - 1);
        if (comment[i] == AQP_COMMENT_PLAIN) {
            comment[i] = mark;
            done++;
        }
    }
}

aqp_db *aqp_db_generate(double scale_factor, uint64_t seed, char *err,
                        size_t errlen)
{
    if (!(scale_factor > 0) || !(scale_factor <= 10)) {
        util_errf(err, errlen, "scale factor %g out of range: expected a "
                  "number in (0, 10]", scale_factor);
        return NULL;
    }
    struct sizes z = {{0}};
    z.n[T_PART] = at_least_one(scale_factor * 200000);
    z.n[T_ORDERS] = at_least_one(scale_factor * 1500000);
    z.n[T_CUSTOMER] = at_least_one(scale_factor * 150000);
    z.n[T_SUPPLIER] = at_least_one(scale_factor * 10000);
    z.n[T_PARTSUPP] = 4 * z.n[T_PART];
    size_t nparts = z.n[T_PART], norders = z.n[T_ORDERS];

    /* Lines per order first (their own stream), to size lineitem. */
    uint8_t *lines = malloc(norders);
    if (!lines)
        goto err;
    uint64_t s_lines = stream(seed, 1);
    for (size_t o = 0; o < norders; o++) {
        lines[o] = (uint8_t)sm_range(&s_lines, 1, 7);
        z.n[T_LINEITEM] += lines[o];
    }
    size_t nrows = z.n[T_LINEITEM];
    aqp_db *db = db_alloc(&z, NULL);
    if (!db) {
        free(lines);
        goto err;
    }
    db->scale_factor = scale_factor;
    db->seed = seed;

    uint64_t sp = stream(seed, 2);
    for (size_t i = 0; i < nparts; i++) {
        int64_t key = (int64_t)i + 1;
        db->p_brand[i] = (uint8_t)(10 * sm_range(&sp, 1, 5) + sm_range(&sp, 1, 5));
        db->p_type[i] = (uint8_t)sm_range(&sp, 0, AQP_NTYPES - 1);
        db->p_size[i] = (uint8_t)sm_range(&sp, 1, 50);
        db->p_container[i] = (uint8_t)sm_range(&sp, 0, AQP_NCONTAINERS - 1);
        db->p_retailprice[i] = 90000 + (key / 10) % 20001 + 100 * (key % 1000);
    }

    const int32_t start = aqp_days(1992, 1, 1);
    const int32_t end = aqp_days(1998, 12, 31);
    const int32_t current = aqp_days(1995, 6, 17);
    uint64_t so = stream(seed, 3), ssupp = stream(seed, 5),
             scust = stream(seed, 6);
    const int64_t ncust = (int64_t)db->ncustomers;
    size_t r = 0;
    for (size_t o = 0; o < norders; o++) {
        int32_t odate = (int32_t)sm_range(&so, start, end - 151);
        int64_t ck = sm_range(&scust, 1, ncust);
        while (ck % 3 == 0 && ncust > 2)
            ck = sm_range(&scust, 1, ncust);
        db->o_orderdate[o] = odate;
        db->o_custkey[o] = (uint32_t)ck;
        for (unsigned ln = 1; ln <= lines[o]; ln++, r++) {
            uint32_t pk = (uint32_t)sm_range(&so, 1, (int64_t)nparts);
            uint8_t qty = (uint8_t)sm_range(&so, 1, 50);
            db->l_orderkey[r] = (uint32_t)(o + 1);
            db->l_partkey[r] = pk;
            db->l_suppkey[r] = aqp_part_supplier(
                pk, (unsigned)sm_range(&ssupp, 0, 3), db->nsuppliers);
            db->l_linenumber[r] = (uint8_t)ln;
            db->l_quantity[r] = qty;
            db->l_extendedprice[r] = qty * db->p_retailprice[pk - 1];
            db->l_discount[r] = (uint8_t)sm_range(&so, 0, 10);
            db->l_tax[r] = (uint8_t)sm_range(&so, 0, 8);
            int32_t ship = odate + (int32_t)sm_range(&so, 1, 121);
            int32_t receipt = ship + (int32_t)sm_range(&so, 1, 30);
            db->l_shipdate[r] = ship;
            db->l_commitdate[r] = odate + (int32_t)sm_range(&so, 30, 90);
            db->l_receiptdate[r] = receipt;
            int ra = (int)sm_range(&so, 0, 1);
            db->l_returnflag[r] = receipt <= current ? (ra ? 'R' : 'A') : 'N';
            db->l_linestatus[r] = ship > current ? 'O' : 'F';
            db->l_shipinstruct[r] = (uint8_t)sm_range(&so, 0, AQP_NINSTRUCT - 1);
            db->l_shipmode[r] = (uint8_t)sm_range(&so, 0, AQP_NSHIPMODES - 1);
        }
    }
    free(lines);

    uint64_t sc = stream(seed, 7);
    for (size_t i = 0; i < db->ncustomers; i++) {
        db->c_mktsegment[i] = (uint8_t)sm_range(&sc, 0, AQP_NSEGMENTS - 1);
        db->c_nationkey[i] = (uint8_t)sm_range(&sc, 0, AQP_NNATIONS - 1);
    }
    uint64_t ss = stream(seed, 8);
    for (size_t i = 0; i < db->nsuppliers; i++)
        db->s_nationkey[i] = (uint8_t)sm_range(&ss, 0, AQP_NNATIONS - 1);
    size_t nmarked = at_least_one((double)db->nsuppliers * 5 / 10000);
    if (2 * nmarked > db->nsuppliers)
        nmarked = db->nsuppliers / 2;
    mark_suppliers(db->s_comment, db->nsuppliers, nmarked,
                   AQP_COMMENT_COMPLAINTS, &ss);
    mark_suppliers(db->s_comment, db->nsuppliers, nmarked,
                   AQP_COMMENT_RECOMMENDS, &ss);

    /* partsupp: the parts in a random order, each with its four rows */
    uint32_t *perm = malloc((nrows > nparts ? nrows : nparts) * sizeof *perm);
    void *tmp = malloc(nrows * 8);
    if (!perm || !tmp) {
        free(perm);
        free(tmp);
        aqp_db_free(db);
        goto err;
    }
    shuffle(perm, nparts, stream(seed, 10));
    uint64_t sps = stream(seed, 9);
    for (size_t i = 0; i < nparts; i++) {
        uint32_t pk = perm[i] + 1;
        for (unsigned k = 0; k < 4; k++) {
            size_t row = 4 * i + k;
            db->ps_partkey[row] = pk;
            db->ps_suppkey[row] = aqp_part_supplier(pk, k, db->nsuppliers);
            db->ps_availqty[row] = (uint16_t)sm_range(&sps, 1, 9999);
            db->ps_supplycost[row] = (int32_t)sm_range(&sps, 100, 100000);
        }
    }

    /* lineitem in a random row order: a uniform permutation. */
    shuffle(perm, nrows, stream(seed, 4));
    struct col cols[C_NCOLS];
    layout(&z, cols);
    for (int c = 0; c < C_NCOLS; c++)
        if (cols[c].table == T_LINEITEM)
            permute((char *)db->block + cols[c].off, nrows, cols[c].elem,
                    perm, tmp);
    free(perm);
    free(tmp);
    return db;
err:
    util_errf(err, errlen, "out of memory generating scale factor %g",
              scale_factor);
    return NULL;
}

/* ---- file ---- */

/*
 * Header, 96 bytes, little-endian:
 *   0  char[8] "SLAQTPCH"     8  u32 version (2)    12 u32 header size (96)
 *   16 u64 lineitem rows      24 u64 parts          32 f64 scale factor
 *   40 u64 seed               48 u64 digest of the columns (FNV-1a)
 *   56 u64 orders             64 u64 customers      72 u64 suppliers
 *   80 u64 reserved (0)       88 u64 reserved (0)
 * then the columns in the order of enum C_*, each padded to 8 bytes
 * (partsupp has 4 rows a part).
 */
struct header {
    char magic[8];
    uint32_t version;
    uint32_t header_size;
    uint64_t nrows;
    uint64_t nparts;
    double scale_factor;
    uint64_t seed;
    uint64_t digest;
    uint64_t norders;
    uint64_t ncustomers;
    uint64_t nsuppliers;
    uint64_t reserved[2];
};

uint64_t aqp_db_digest(const aqp_db *db)
{
    struct col cols[C_NCOLS];
    struct sizes z = db_sizes(db);
    size_t size = layout(&z, cols);
    const unsigned char *p = db->block;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int aqp_db_save(const aqp_db *db, const char *path, char *err, size_t errlen)
{
    struct col cols[C_NCOLS];
    struct sizes z = db_sizes(db);
    size_t size = layout(&z, cols);
    struct header h = {0};
    memcpy(h.magic, TPCH_MAGIC, 8);
    h.version = TPCH_VERSION;
    h.header_size = TPCH_HEADER;
    h.nrows = db->nrows;
    h.nparts = db->nparts;
    h.norders = db->norders;
    h.ncustomers = db->ncustomers;
    h.nsuppliers = db->nsuppliers;
    h.scale_factor = db->scale_factor;
    h.seed = db->seed;
    h.digest = aqp_db_digest(db);
    size_t plen = strlen(path) + 16;
    char *tmp = malloc(plen);
    if (!tmp) {
        util_errf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(tmp, plen, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        util_errf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int ok = fwrite(&h, sizeof h, 1, f) == 1 &&
             fwrite(db->block, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) < 0) {
        util_errf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

/* Every value used as an array index or by a query's domain is in range;
 * returns the first row that is not, or -1. */
static long long first_bad_row(const aqp_db *db, const char **what)
{
    for (size_t i = 0; i < db->nrows; i++) {
        *what = NULL;
        if (db->l_partkey[i] < 1 || db->l_partkey[i] > db->nparts)
            *what = "l_partkey";
        else if (db->l_suppkey[i] < 1 || db->l_suppkey[i] > db->nsuppliers)
            *what = "l_suppkey";
        else if (db->l_orderkey[i] < 1 || db->l_orderkey[i] > db->norders)
            *what = "l_orderkey";
        else if (db->l_quantity[i] < 1 || db->l_quantity[i] > 50)
            *what = "l_quantity";
        else if (db->l_discount[i] > 10)
            *what = "l_discount";
        else if (db->l_tax[i] > 8)
            *what = "l_tax";
        else if (!strchr("ANR", db->l_returnflag[i]) || !db->l_returnflag[i])
            *what = "l_returnflag";
        else if (!strchr("FO", db->l_linestatus[i]) || !db->l_linestatus[i])
            *what = "l_linestatus";
        else if (db->l_shipinstruct[i] >= AQP_NINSTRUCT)
            *what = "l_shipinstruct";
        else if (db->l_shipmode[i] >= AQP_NSHIPMODES)
            *what = "l_shipmode";
        if (*what)
            return (long long)i;
    }
    for (size_t i = 0; i < db->nparts; i++) {
        *what = NULL;
        if (db->p_type[i] >= AQP_NTYPES)
            *what = "p_type";
        else if (db->p_container[i] >= AQP_NCONTAINERS)
            *what = "p_container";
        if (*what)
            return (long long)i;
    }
    for (size_t i = 0; i < db->norders; i++)
        if (db->o_custkey[i] < 1 || db->o_custkey[i] > db->ncustomers) {
            *what = "o_custkey";
            return (long long)i;
        }
    for (size_t i = 0; i < db->ncustomers; i++)
        if (db->c_mktsegment[i] >= AQP_NSEGMENTS ||
            db->c_nationkey[i] >= AQP_NNATIONS) {
            *what = db->c_mktsegment[i] >= AQP_NSEGMENTS ? "c_mktsegment"
                                                         : "c_nationkey";
            return (long long)i;
        }
    for (size_t i = 0; i < db->nsuppliers; i++)
        if (db->s_nationkey[i] >= AQP_NNATIONS ||
            db->s_comment[i] > AQP_COMMENT_RECOMMENDS) {
            *what = db->s_nationkey[i] >= AQP_NNATIONS ? "s_nationkey"
                                                       : "s_comment";
            return (long long)i;
        }
    for (size_t i = 0; i < db->npartsupp; i++) {
        *what = NULL;
        if (db->ps_partkey[i] < 1 || db->ps_partkey[i] > db->nparts ||
            db->ps_partkey[i] != db->ps_partkey[i - i % 4])
            *what = "ps_partkey";
        else if (db->ps_suppkey[i] < 1 || db->ps_suppkey[i] > db->nsuppliers)
            *what = "ps_suppkey";
        if (*what)
            return (long long)i;
    }
    return -1;
}

/* The file is mapped read-only rather than read: the columns are used in
 * place, and the queries slaq runs side by side on one database share its
 * pages (twelve queries on SF 1 hold 216 MB, not 2.6 GB). */
aqp_db *aqp_db_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        util_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct header h;
    aqp_db *db = NULL;
    void *map = NULL;
    size_t map_len = 0;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, TPCH_MAGIC, 8)) {
        util_errf(err, errlen, "%s: not a slaq-aqp data file (expected the "
                  "header \"" TPCH_MAGIC "\"; make one with slaq-aqp gen)",
                  path);
        goto err;
    }
    if (h.version != TPCH_VERSION || h.header_size != TPCH_HEADER) {
        util_errf(err, errlen, "%s: data file version %u, expected %u", path,
                  h.version, TPCH_VERSION);
        goto err;
    }
    if (h.nrows > UINT32_MAX || h.nparts > UINT32_MAX / 4 || h.nparts == 0 ||
        h.norders > UINT32_MAX || h.norders == 0 ||
        h.ncustomers > UINT32_MAX || h.ncustomers == 0 ||
        h.nsuppliers > UINT32_MAX || h.nsuppliers == 0) {
        util_errf(err, errlen, "%s: header: %" PRIu64 " rows, %" PRIu64
                  " parts, %" PRIu64 " orders, %" PRIu64 " customers, %"
                  PRIu64 " suppliers: expected at most 2^32 rows and 1..2^32 "
                  "of the others", path, h.nrows, h.nparts, h.norders,
                  h.ncustomers, h.nsuppliers);
        goto err;
    }
    struct col cols[C_NCOLS];
    struct sizes z = {{h.nrows, h.nparts, h.norders, h.ncustomers,
                       h.nsuppliers, 4 * h.nparts}};
    size_t size = layout(&z, cols);
    if (fseek(f, 0, SEEK_END) < 0) {
        util_errf(err, errlen, "%s: cannot seek: %s", path, strerror(errno));
        goto err;
    }
    long fsize = ftell(f);
    if (fsize < 0 || (size_t)fsize != TPCH_HEADER + size) {
        util_errf(err, errlen, "%s: %ld bytes, expected %zu for %" PRIu64
                  " rows and %" PRIu64 " parts (truncated?)", path, fsize,
                  TPCH_HEADER + size, h.nrows, h.nparts);
        goto err;
    }
    map_len = TPCH_HEADER + size;
    map = mmap(NULL, map_len, PROT_READ, MAP_PRIVATE, fileno(f), 0);
    if (map == MAP_FAILED) {
        map = NULL;
        util_errf(err, errlen, "%s: cannot map %zu bytes: %s", path, map_len,
                  strerror(errno));
        goto err;
    }
    db = db_alloc(&z, (char *)map + TPCH_HEADER);
    if (!db) {
        util_errf(err, errlen, "%s: out of memory", path);
        goto err;
    }
    db->map = map;
    db->map_len = map_len;
    map = NULL; /* the database owns it now */
    db->scale_factor = h.scale_factor;
    db->seed = h.seed;
    if (aqp_db_digest(db) != h.digest) {
        util_errf(err, errlen, "%s: the columns do not match the header's "
                  "digest (corrupt file)", path);
        goto err;
    }
    const char *what;
    long long bad = first_bad_row(db, &what);
    if (bad >= 0) {
        util_errf(err, errlen, "%s: row %lld: %s out of range", path, bad,
                  what);
        goto err;
    }
    fclose(f);
    return db;
err:
    if (map)
        munmap(map, map_len);
    aqp_db_free(db);
    fclose(f);
    return NULL;
}

/* ---- SQLite ---- */

static int exec(sqlite3 *conn, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(conn, sql, NULL, NULL, &msg) != SQLITE_OK) {
        util_errf(err, errlen, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static const char *const COMMENT_TEXT[3] = {
    "carefully regular deposits", "Customer sly Complaints about the service",
    "Customer quietly Recommends the service"};

/* The tables other than lineitem and part: the dimensions of the joins. */
static int dims_to_sqlite(const aqp_db *db, sqlite3 *conn)
{
    sqlite3_stmt *st[6] = {NULL};
    static const char *const INS[6] = {
        "INSERT INTO region VALUES (?,?)",
        "INSERT INTO nation VALUES (?,?,?)",
        "INSERT INTO supplier VALUES (?,?,?)",
        "INSERT INTO customer VALUES (?,?,?)",
        "INSERT INTO orders VALUES (?,?,?,?)",
        "INSERT INTO partsupp VALUES (?,?,?,?)"};
    int rc = -1;
    for (int i = 0; i < 6; i++)
        if (sqlite3_prepare_v2(conn, INS[i], -1, &st[i], NULL) != SQLITE_OK)
            goto out;
#define STEP(s)                                         \
    do {                                                \
        if (sqlite3_step(s) != SQLITE_DONE) goto out;   \
        sqlite3_reset(s);                               \
    } while (0)
    for (unsigned r = 0; r < AQP_NREGIONS; r++) {
        sqlite3_bind_int(st[0], 1, (int)r);
        sqlite3_bind_text(st[0], 2, REGION[r], -1, SQLITE_STATIC);
        STEP(st[0]);
    }
    for (unsigned n = 0; n < AQP_NNATIONS; n++) {
        sqlite3_bind_int(st[1], 1, (int)n);
        sqlite3_bind_text(st[1], 2, NATION[n], -1, SQLITE_STATIC);
        sqlite3_bind_int(st[1], 3, NATION_REGION[n]);
        STEP(st[1]);
    }
    for (size_t i = 0; i < db->nsuppliers; i++) {
        sqlite3_bind_int64(st[2], 1, (sqlite3_int64)i + 1);
        sqlite3_bind_int(st[2], 2, db->s_nationkey[i]);
        sqlite3_bind_text(st[2], 3, COMMENT_TEXT[db->s_comment[i]], -1,
                          SQLITE_STATIC);
        STEP(st[2]);
    }
    for (size_t i = 0; i < db->ncustomers; i++) {
        sqlite3_bind_int64(st[3], 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(st[3], 2, SEGMENT[db->c_mktsegment[i]], -1,
                          SQLITE_STATIC);
        sqlite3_bind_int(st[3], 3, db->c_nationkey[i]);
        STEP(st[3]);
    }
    for (size_t i = 0; i < db->norders; i++) {
        char date[11];
        aqp_date_str(db->o_orderdate[i], date);
        sqlite3_bind_int64(st[4], 1, (sqlite3_int64)i + 1);
        sqlite3_bind_int64(st[4], 2, db->o_custkey[i]);
        sqlite3_bind_text(st[4], 3, date, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(st[4], 4, 0);
        STEP(st[4]);
    }
    for (size_t i = 0; i < db->npartsupp; i++) {
        sqlite3_bind_int64(st[5], 1, db->ps_partkey[i]);
        sqlite3_bind_int64(st[5], 2, db->ps_suppkey[i]);
        sqlite3_bind_int(st[5], 3, db->ps_availqty[i]);
        sqlite3_bind_double(st[5], 4, db->ps_supplycost[i] / 100.0);
        STEP(st[5]);
    }
#undef STEP
    rc = 0;
out:
    for (int i = 0; i < 6; i++)
        sqlite3_finalize(st[i]);
    return rc;
}

int aqp_db_to_sqlite(const aqp_db *db, sqlite3 *conn, char *err,
                     size_t errlen)
{
    sqlite3_stmt *li = NULL, *pa = NULL;
    if (exec(conn,
             "CREATE TABLE region (r_regionkey INTEGER PRIMARY KEY, "
             "r_name TEXT);"
             "CREATE TABLE nation (n_nationkey INTEGER PRIMARY KEY, "
             "n_name TEXT, n_regionkey INTEGER);"
             "CREATE TABLE supplier (s_suppkey INTEGER PRIMARY KEY, "
             "s_nationkey INTEGER, s_comment TEXT);"
             "CREATE TABLE customer (c_custkey INTEGER PRIMARY KEY, "
             "c_mktsegment TEXT, c_nationkey INTEGER);"
             "CREATE TABLE orders (o_orderkey INTEGER PRIMARY KEY, "
             "o_custkey INTEGER, o_orderdate TEXT, o_shippriority INTEGER);"
             "CREATE TABLE partsupp (ps_partkey INTEGER, ps_suppkey INTEGER, "
             "ps_availqty INTEGER, ps_supplycost REAL);"
             "CREATE TABLE part (p_partkey INTEGER PRIMARY KEY, "
             "p_brand TEXT, p_type TEXT, p_size INTEGER, p_container TEXT, "
             "p_retailprice REAL);"
             "CREATE TABLE lineitem (l_orderkey INTEGER, l_partkey INTEGER, "
             "l_suppkey INTEGER, "
             "l_linenumber INTEGER, l_quantity REAL, l_extendedprice REAL, "
             "l_discount REAL, l_tax REAL, l_returnflag TEXT, "
             "l_linestatus TEXT, l_shipdate TEXT, l_commitdate TEXT, "
             "l_receiptdate TEXT, l_shipinstruct TEXT, l_shipmode TEXT);"
             "BEGIN;", err, errlen) < 0)
        return -1;
    if (dims_to_sqlite(db, conn) < 0)
        goto sqlerr;
    if (sqlite3_prepare_v2(conn, "INSERT INTO part VALUES (?,?,?,?,?,?)",
                           -1, &pa, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(conn, "INSERT INTO lineitem VALUES "
                           "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &li,
                           NULL) != SQLITE_OK) {
        util_errf(err, errlen, "sqlite: %s", sqlite3_errmsg(conn));
        goto err;
    }
    for (size_t i = 0; i < db->nparts; i++) {
        char brand[16];
        snprintf(brand, sizeof brand, "Brand#%u", (unsigned)db->p_brand[i]);
        sqlite3_bind_int64(pa, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(pa, 2, brand, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(pa, 3, aqp_type_name(db->p_type[i]), -1, SQLITE_STATIC);
        sqlite3_bind_int(pa, 4, db->p_size[i]);
        sqlite3_bind_text(pa, 5, aqp_container_name(db->p_container[i]), -1,
                          SQLITE_STATIC);
        sqlite3_bind_double(pa, 6, (double)db->p_retailprice[i] / 100.0);
        if (sqlite3_step(pa) != SQLITE_DONE)
            goto sqlerr;
        sqlite3_reset(pa);
    }
    for (size_t i = 0; i < db->nrows; i++) {
        char ship[11], commit[11], receipt[11];
        char rf[2] = {(char)db->l_returnflag[i], 0};
        char ls[2] = {(char)db->l_linestatus[i], 0};
        aqp_date_str(db->l_shipdate[i], ship);
        aqp_date_str(db->l_commitdate[i], commit);
        aqp_date_str(db->l_receiptdate[i], receipt);
        sqlite3_bind_int64(li, 1, db->l_orderkey[i]);
        sqlite3_bind_int64(li, 2, db->l_partkey[i]);
        sqlite3_bind_int64(li, 3, db->l_suppkey[i]);
        sqlite3_bind_int(li, 4, db->l_linenumber[i]);
        sqlite3_bind_double(li, 5, db->l_quantity[i]);
        sqlite3_bind_double(li, 6, (double)db->l_extendedprice[i] / 100.0);
        sqlite3_bind_double(li, 7, db->l_discount[i] / 100.0);
        sqlite3_bind_double(li, 8, db->l_tax[i] / 100.0);
        sqlite3_bind_text(li, 9, rf, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(li, 10, ls, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(li, 11, ship, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(li, 12, commit, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(li, 13, receipt, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(li, 14, aqp_instruct_name(db->l_shipinstruct[i]),
                          -1, SQLITE_STATIC);
        sqlite3_bind_text(li, 15, aqp_shipmode_name(db->l_shipmode[i]), -1,
                          SQLITE_STATIC);
        if (sqlite3_step(li) != SQLITE_DONE)
            goto sqlerr;
        sqlite3_reset(li);
    }
    sqlite3_finalize(li);
    sqlite3_finalize(pa);
    return exec(conn, "COMMIT; CREATE INDEX lineitem_partkey ON "
                "lineitem(l_partkey); CREATE INDEX lineitem_orderkey ON "
                "lineitem(l_orderkey); CREATE INDEX partsupp_partkey ON "
                "partsupp(ps_partkey);", err, errlen);
sqlerr:
    util_errf(err, errlen, "sqlite: %s", sqlite3_errmsg(conn));
err:
    sqlite3_finalize(li);
    sqlite3_finalize(pa);
    return -1;
}
