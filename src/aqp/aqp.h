/*
 * aqp.h — slaq-aqp's engine: a TPC-H database generator and an online
 * aggregation engine for TPC-H Q1, Q3, Q5, Q6, Q11, Q14, Q16, Q17 and Q19.
 *
 * The database (tpch.c) holds the tables the queries read, column by column
 * in memory. lineitem's rows are stored in a random order, so the first n
 * rows are a uniform random sample without replacement and mini-batch i of
 * B is the contiguous slice [i*N/B, (i+1)*N/B). partsupp is stored part by
 * part in a random order of parts, so its mini-batches are random samples
 * of parts with all their rows. The other tables (part, orders, customer,
 * supplier, nation, region) are dimensions, always read whole.
 *
 * A query (query.c) consumes mini-batches in order. After each one it has
 * an estimate of every result cell (group × aggregate column) with a 95%
 * bound; after the last one the answer is exact. Scans are data-parallel
 * over a number of threads chosen per mini-batch.
 *
 * Private to slaq-aqp and its tests; the user-facing contract is the
 * command line and the trace format in docs/aqp.md.
 */
#ifndef SLAQ_AQP_H
#define SLAQ_AQP_H

#include <stddef.h>
#include <stdint.h>

/* ---- the database (tpch.c) ---- */

/* Dictionary sizes of the coded string columns (tpch.c has the strings). */
#define AQP_NTYPES 150      /* p_type: 6 x 5 x 5 syllables */
#define AQP_NCONTAINERS 40  /* p_container: 5 x 8 syllables */
#define AQP_NINSTRUCT 4     /* l_shipinstruct */
#define AQP_NSHIPMODES 7    /* l_shipmode */
#define AQP_NSEGMENTS 5     /* c_mktsegment */
#define AQP_NNATIONS 25     /* n_nationkey 0..24, the specification's */
#define AQP_NREGIONS 5      /* r_regionkey 0..4 */

/* s_comment, as far as a query looks at it (Q16's LIKE) */
enum { AQP_COMMENT_PLAIN, AQP_COMMENT_COMPLAINTS, AQP_COMMENT_RECOMMENDS };

typedef struct aqp_db {
    double scale_factor;
    uint64_t seed;
    /* lineitem, N rows, in random order */
    size_t nrows;
    uint32_t *l_orderkey;
    uint32_t *l_partkey;       /* 1..nparts */
    uint32_t *l_suppkey;       /* 1..nsuppliers, a supplier of the part */
    uint8_t *l_linenumber;     /* 1..7 */
    uint8_t *l_quantity;       /* 1..50 */
    int64_t *l_extendedprice;  /* cents */
    uint8_t *l_discount;       /* hundredths, 0..10 */
    uint8_t *l_tax;            /* hundredths, 0..8 */
    uint8_t *l_returnflag;     /* 'A', 'N' or 'R' */
    uint8_t *l_linestatus;     /* 'F' or 'O' */
    int32_t *l_shipdate;       /* days since 1970-01-01 */
    int32_t *l_commitdate;
    int32_t *l_receiptdate;
    uint8_t *l_shipinstruct;   /* index into aqp_instruct_name() */
    uint8_t *l_shipmode;       /* index into aqp_shipmode_name() */
    /* part, nparts rows, p_partkey = index + 1 */
    size_t nparts;
    uint8_t *p_brand;          /* 10*M + N for "Brand#MN", M, N in 1..5 */
    uint8_t *p_type;           /* index into aqp_type_name() */
    uint8_t *p_size;           /* 1..50 */
    uint8_t *p_container;      /* index into aqp_container_name() */
    int64_t *p_retailprice;    /* cents */
    /* orders, norders rows, o_orderkey = index + 1 (l_orderkey's range) */
    size_t norders;
    int32_t *o_orderdate;      /* days since 1970-01-01 */
    uint32_t *o_custkey;       /* 1..ncustomers; o_shippriority is 0 */
    /* customer, ncustomers rows, c_custkey = index + 1 */
    size_t ncustomers;
    uint8_t *c_mktsegment;     /* index into aqp_segment_name() */
    uint8_t *c_nationkey;      /* 0..24 */
    /* supplier, nsuppliers rows, s_suppkey = index + 1 */
    size_t nsuppliers;
    uint8_t *s_nationkey;      /* 0..24 */
    uint8_t *s_comment;        /* AQP_COMMENT_* */
    /* partsupp, npartsupp = 4 x nparts rows: the parts in random order,
     * each part's four rows together */
    size_t npartsupp;
    uint32_t *ps_partkey;
    uint32_t *ps_suppkey;
    uint16_t *ps_availqty;     /* 1..9999 */
    int32_t *ps_supplycost;    /* cents */
    void *block;               /* every column, one after the other */
    void *map;                 /* a loaded file's read-only mapping (which
                                  holds block), or NULL */
    size_t map_len;
} aqp_db;

/* Generates the database for `scale_factor` (> 0; 1 is TPC-H's SF 1:
 * 200,000 parts, 800,000 partsupp rows, 10,000 suppliers, 150,000
 * customers, 1,500,000 orders, about 6,000,000 lineitem rows) from
 * `seed`. The same arguments give the same bytes on every machine.
 * Returns NULL with `err` filled when scale_factor is out of range
 * (0 < SF <= 10) or memory runs out. */
aqp_db *aqp_db_generate(double scale_factor, uint64_t seed, char *err,
                        size_t errlen);

/* Writes the database to `path` (docs/aqp.md "Data file"), atomically
 * (a temporary file renamed). 0, or -1 with `err` filled. */
int aqp_db_save(const aqp_db *db, const char *path, char *err, size_t errlen);

/* Maps a file written by aqp_db_save() read-only (its columns must not be
 * written), checking its header, its size, its digest and every value
 * used as an index. NULL with `err` naming what is wrong. */
aqp_db *aqp_db_load(const char *path, char *err, size_t errlen);

void aqp_db_free(aqp_db *db);

/* A 64-bit digest of every column (FNV-1a), to compare databases. */
uint64_t aqp_db_digest(const aqp_db *db);

const char *aqp_type_name(unsigned code);
const char *aqp_container_name(unsigned code);
const char *aqp_instruct_name(unsigned code);
const char *aqp_shipmode_name(unsigned code);
const char *aqp_segment_name(unsigned code);
const char *aqp_nation_name(unsigned key);
const char *aqp_region_name(unsigned key);
/* The region key of nation `key` (AQP_NREGIONS for a bad key). */
unsigned aqp_nation_region(unsigned key);
/* The i-th (0..3) supplier of part `partkey` among `nsuppliers`: TPC-H's
 * partsupp rule, which l_suppkey follows too. */
uint32_t aqp_part_supplier(uint32_t partkey, unsigned i, size_t nsuppliers);

/* Days since 1970-01-01 of a civil date, and back ("YYYY-MM-DD"). */
int32_t aqp_days(int y, int m, int d);
void aqp_date_str(int32_t days, char out[11]);

/* Loads the database into an open SQLite connection as tables lineitem,
 * part, partsupp, orders, customer, supplier, nation and region with
 * TPC-H's column names and types (dates as 'YYYY-MM-DD' text, money as
 * REAL; only the columns generated). 0, or -1 with `err` filled. */
struct sqlite3;
int aqp_db_to_sqlite(const aqp_db *db, struct sqlite3 *conn, char *err,
                     size_t errlen);

/* ---- queries (query.c) ---- */

typedef enum {
    AQP_Q1, AQP_Q6, AQP_Q14, AQP_Q17, AQP_Q19,
    AQP_Q3, AQP_Q5, AQP_Q11, AQP_Q16, AQP_NQUERIES
} aqp_qid;

/* Q3 reports the revenue of its first AQP_Q3_TOP result rows */
#define AQP_Q3_TOP 10

#define AQP_BOOT_REPS 300 /* bootstrap replicates, by default */
#define AQP_MIN_REPS 10
#define AQP_MAX_REPS 2000
#define AQP_CONFIDENCE 0.95

/* "q6" -> AQP_Q6; -1 for an unknown name. */
int aqp_query_parse(const char *name);
const char *aqp_query_name(aqp_qid q);
/* "q1, q3, ..., q19": every query's name, for messages. */
const char *aqp_query_list(void);
/* The fact table q samples ("lineitem", or "partsupp" for Q11 and Q16),
 * and its sampling units in `db` (lineitem rows, or parts of partsupp):
 * the most mini-batches q can have. */
const char *aqp_query_fact(aqp_qid q);
size_t aqp_query_units(const aqp_db *db, aqp_qid q);
/* The query as SQL over the tables of aqp_db_to_sqlite(), with TPC-H's
 * validation parameters; its result columns are the keys, in order. */
const char *aqp_query_sql(aqp_qid q);
/* "closed-form" or "bootstrap": how q's bounds are computed (with
 * aqp_opts.bootstrap_all, every query's are "bootstrap"). */
const char *aqp_query_bounds_kind(aqp_qid q, int bootstrap_all);

typedef struct aqp_query aqp_query;

typedef struct aqp_opts {
    uint64_t boot_seed;  /* seeds the bootstrap weights */
    int replicates;      /* bootstrap replicates, AQP_MIN_REPS .. AQP_MAX_REPS */
    int bootstrap_all;   /* bootstrap bounds also where a closed form exists
                            (Q1, Q6, Q19), as iOLAP computes them: every
                            row then costs `replicates` weights */
} aqp_opts;

/* Starts query `q` over `db` (which must outlive it) in `batches`
 * mini-batches (1 .. aqp_query_units()); `opts` NULL means seed 1, AQP_BOOT_REPS
 * replicates, closed-form bounds where they exist. NULL with `err` filled
 * on a bad argument or no memory. */
aqp_query *aqp_query_new(const aqp_db *db, aqp_qid q, size_t batches,
                         const aqp_opts *opts, char *err, size_t errlen);
void aqp_query_free(aqp_query *qr);

/* Number of result cells K and the label of cell k ("A|F/sum_qty"). */
size_t aqp_query_nkeys(const aqp_query *qr);
const char *aqp_query_key(const aqp_query *qr, size_t k);

/* Runs the next mini-batch on `threads` threads (>= 1). Returns 1 when a
 * mini-batch ran, 0 when all had run, -1 when a thread could not start
 * (err filled). */
int aqp_query_step(aqp_query *qr, int threads, char *err, size_t errlen);

/* Mini-batches run so far, of how many. */
size_t aqp_query_done(const aqp_query *qr);
size_t aqp_query_batches(const aqp_query *qr);
/* Rows the last mini-batch processed: its slice of the fact table plus
 * re-evaluated retained tuples (Q17). */
uint64_t aqp_query_last_rows(const aqp_query *qr);
/* Retained tuples whose decision flipped in the last mini-batch (Q17). */
uint64_t aqp_query_last_flipped(const aqp_query *qr);

/* The current estimate and bound of every cell (arrays of K); NaN where
 * no value exists yet. */
const double *aqp_query_estimates(const aqp_query *qr);
const double *aqp_query_lower(const aqp_query *qr);
const double *aqp_query_upper(const aqp_query *qr);

#endif /* SLAQ_AQP_H */
