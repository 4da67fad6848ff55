/*
 * test_aqp_engine.c — unit tests of slaq-aqp's engine: the TPC-H generator (its
 * determinism, its distributions, its random row order, its file and the
 * file's checks), the queries' exact final answers against SQLite running
 * the full SQL on the same data (the joins of Q3, Q5, Q11 and Q16
 * included), the independence of the answers from the thread count, the
 * nested Q17's growing recomputation, and the 95% bounds covering the
 * truth at their stated rate over many databases.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "aqp/aqp.h"

static char tmpdir[] = "/tmp/slaq-aqp-test-XXXXXX";

static const char *tmp_path(const char *name)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static aqp_db *gen(double sf, uint64_t seed)
{
    char err[256];
    aqp_db *db = aqp_db_generate(sf, seed, err, sizeof err);
    if (!db)
        fail_msg("generate: %s", err);
    return db;
}

/* Runs q in `batches` mini-batches on `threads` threads to the end. */
static aqp_query *run_all(const aqp_db *db, aqp_qid q, size_t batches,
                          int threads)
{
    char err[256];
    aqp_opts o = {7, AQP_BOOT_REPS, 0};
    aqp_query *qr = aqp_query_new(db, q, batches, &o, err, sizeof err);
    assert_non_null(qr);
    while (aqp_query_step(qr, threads, err, sizeof err) == 1)
        ;
    assert_int_equal(aqp_query_done(qr), batches);
    return qr;
}

static int close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* ---- dates ---- */

static void test_dates_round_trip_through_the_civil_calendar(void **state)
{
    (void)state;
    assert_int_equal(aqp_days(1970, 1, 1), 0);
    assert_int_equal(aqp_days(1992, 1, 1), 8035);
    assert_int_equal(aqp_days(1996, 3, 1) - aqp_days(1996, 2, 28), 2);
    assert_int_equal(aqp_days(1900, 3, 1) - aqp_days(1900, 2, 28), 1);
    char s[11];
    for (int32_t d = aqp_days(1991, 12, 25); d < aqp_days(1999, 1, 10); d++) {
        aqp_date_str(d, s);
        int y, m, dd;
        assert_int_equal(sscanf(s, "%d-%d-%d", &y, &m, &dd), 3);
        assert_int_equal(aqp_days(y, m, dd), d);
    }
    aqp_date_str(aqp_days(1995, 6, 17), s);
    assert_string_equal(s, "1995-06-17");
}

/* ---- the generator ---- */

static void test_generator_is_deterministic_from_its_seed(void **state)
{
    (void)state;
    aqp_db *a = gen(0.002, 42), *b = gen(0.002, 42), *c = gen(0.002, 43);
    assert_int_equal(a->nrows, b->nrows);
    assert_true(aqp_db_digest(a) == aqp_db_digest(b));
    assert_false(aqp_db_digest(a) == aqp_db_digest(c));
    /* the parts come from their own stream: same seed, other scale */
    aqp_db *d = gen(0.004, 42);
    assert_int_equal(memcmp(a->p_brand, d->p_brand, a->nparts), 0);
    aqp_db_free(a);
    aqp_db_free(b);
    aqp_db_free(c);
    aqp_db_free(d);
}

static void test_generator_follows_the_tpch_distributions(void **state)
{
    (void)state;
    aqp_db *db = gen(0.05, 1);
    const int32_t current = aqp_days(1995, 6, 17);
    assert_int_equal(db->nparts, 10000);
    size_t norders = 75000;
    /* lines per order uniform 1..7: mean 4 */
    assert_true(fabs((double)db->nrows / norders - 4.0) < 0.05);
    double qsum = 0, dsum = 0;
    size_t groups[4] = {0}, r_or_a = 0;
    for (size_t i = 0; i < db->nrows; i++) {
        uint32_t pk = db->l_partkey[i];
        assert_in_range(pk, 1, db->nparts);
        assert_in_range(db->l_quantity[i], 1, 50);
        assert_in_range(db->l_discount[i], 0, 10);
        assert_in_range(db->l_tax[i], 0, 8);
        assert_true(db->l_extendedprice[i] ==
                    db->l_quantity[i] * db->p_retailprice[pk - 1]);
        int32_t ship = db->l_shipdate[i], rec = db->l_receiptdate[i];
        assert_in_range(rec - ship, 1, 30);
        assert_true(ship > aqp_days(1992, 1, 1));
        assert_true(ship <= aqp_days(1998, 12, 31) - 151 + 121);
        assert_int_equal(db->l_returnflag[i] == 'N', rec > current);
        assert_int_equal(db->l_linestatus[i] == 'O', ship > current);
        r_or_a += db->l_returnflag[i] == 'R';
        groups[db->l_returnflag[i] == 'N' ? (db->l_linestatus[i] == 'O' ? 2 : 1)
               : db->l_returnflag[i] == 'A' ? 0 : 3]++;
        qsum += db->l_quantity[i];
        dsum += db->l_discount[i];
    }
    assert_true(fabs(qsum / db->nrows - 25.5) < 0.2);
    assert_true(fabs(dsum / db->nrows - 5.0) < 0.05);
    for (int g = 0; g < 4; g++)
        assert_true(groups[g] > 0);
    /* R and A at even odds */
    assert_true(fabs((double)groups[3] / (groups[0] + groups[3]) - 0.5) < 0.02);
    for (size_t p = 0; p < db->nparts; p++) {
        int64_t key = (int64_t)p + 1;
        assert_true(db->p_retailprice[p] ==
                    90000 + (key / 10) % 20001 + 100 * (key % 1000));
        assert_in_range(db->p_brand[p] / 10, 1, 5);
        assert_in_range(db->p_brand[p] % 10, 1, 5);
        assert_in_range(db->p_size[p], 1, 50);
    }
    aqp_db_free(db);
}

static void test_rows_are_in_random_order(void **state)
{
    (void)state;
    aqp_db *db = gen(0.02, 3);
    /* A sorted file would have its first tenth among the first orders;
     * a random order gives every tenth the overall mean order key. */
    double all = 0, first = 0;
    size_t tenth = db->nrows / 10, ascending = 0;
    for (size_t i = 0; i < db->nrows; i++) {
        all += db->l_orderkey[i];
        if (i < tenth)
            first += db->l_orderkey[i];
        if (i && db->l_orderkey[i] > db->l_orderkey[i - 1])
            ascending++;
    }
    all /= db->nrows;
    first /= tenth;
    assert_true(fabs(first / all - 1) < 0.03);
    assert_true(fabs((double)ascending / db->nrows - 0.5) < 0.02);
    aqp_db_free(db);
}

static void test_file_round_trips_and_rejects_damage(void **state)
{
    (void)state;
    char err[512];
    aqp_db *db = gen(0.002, 5);
    char path[256];
    snprintf(path, sizeof path, "%s", tmp_path("db.tpch"));
    assert_int_equal(aqp_db_save(db, path, err, sizeof err), 0);
    aqp_db *back = aqp_db_load(path, err, sizeof err);
    assert_non_null(back);
    assert_true(aqp_db_digest(back) == aqp_db_digest(db));
    assert_int_equal(back->nrows, db->nrows);
    assert_true(back->scale_factor == 0.002);
    aqp_db_free(back);

    /* a flipped byte in a column */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 64 + 100, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 64 + 100, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
    assert_null(aqp_db_load(path, err, sizeof err));
    assert_non_null(strstr(err, "digest"));

    /* truncated */
    assert_int_equal(truncate(path, 1000), 0);
    assert_null(aqp_db_load(path, err, sizeof err));
    assert_non_null(strstr(err, "truncated"));

    /* not a data file */
    f = fopen(path, "w");
    fputs("l_orderkey,l_partkey\n1,2\n", f);
    fclose(f);
    assert_null(aqp_db_load(path, err, sizeof err));
    assert_non_null(strstr(err, "not a slaq-aqp data file"));

    assert_null(aqp_db_load(tmp_path("missing"), err, sizeof err));
    assert_non_null(strstr(err, "cannot open"));
    unlink(path);
    aqp_db_free(db);
}

static void test_generate_rejects_a_bad_scale_factor(void **state)
{
    (void)state;
    char err[256];
    assert_null(aqp_db_generate(0, 1, err, sizeof err));
    assert_non_null(strstr(err, "scale factor"));
    assert_null(aqp_db_generate(NAN, 1, err, sizeof err));
    assert_null(aqp_db_generate(11, 1, err, sizeof err));
}

/* ---- exact answers against SQLite ---- */

/* Runs `sql` and compares its rows with the query's final estimates:
 * for Q1 the two group columns name the group; the rest are the keys in
 * order. */
static void compare_with_sqlite(sqlite3 *conn, const aqp_query *qr, aqp_qid q)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(conn, aqp_query_sql(q), -1, &st, NULL),
                     SQLITE_OK);
    const double *e = aqp_query_estimates(qr);
    const double *lo = aqp_query_lower(qr), *hi = aqp_query_upper(qr);
    size_t K = aqp_query_nkeys(qr), k = 0;
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows++;
        int first = 0;
        if (q == AQP_Q1) {
            char group[8];
            snprintf(group, sizeof group, "%s|%s",
                     (const char *)sqlite3_column_text(st, 0),
                     (const char *)sqlite3_column_text(st, 1));
            assert_int_equal(strncmp(aqp_query_key(qr, k), group, 3), 0);
            first = 2;
        }
        for (int c = first; c < sqlite3_column_count(st); c++, k++) {
            assert_true(k < K);
            assert_int_not_equal(sqlite3_column_type(st, c), SQLITE_NULL);
            double want = sqlite3_column_double(st, c);
            if (!close_to(e[k], want, 1e-9))
                fail_msg("%s %s: %.17g, SQLite says %.17g", aqp_query_name(q),
                         aqp_query_key(qr, k), e[k], want);
            /* the bound has closed on the answer */
            assert_true(lo[k] == e[k] && hi[k] == e[k]);
        }
    }
    assert_int_equal(k, K);
    assert_int_equal(rows, q == AQP_Q1 ? 4 : 1);
    sqlite3_finalize(st);
}

static void test_last_minibatch_gives_sqlites_exact_answer(void **state)
{
    (void)state;
    /* SF 0.03 with this seed leaves Q17 and Q19 with qualifying lines
     * (SQLite would return NULL otherwise, and the test says so). */
    aqp_db *db = gen(0.03, 11);
    sqlite3 *conn;
    char err[256];
    assert_int_equal(sqlite3_open(":memory:", &conn), SQLITE_OK);
    if (aqp_db_to_sqlite(db, conn, err, sizeof err) < 0)
        fail_msg("%s", err);
    for (int q = 0; q <= AQP_Q19; q++) {
        aqp_query *qr = run_all(db, (aqp_qid)q, 13, 3);
        compare_with_sqlite(conn, qr, (aqp_qid)q);
        aqp_query_free(qr);
        /* bootstrap bounds everywhere change no estimate */
        aqp_opts o = {2, 20, 1};
        qr = aqp_query_new(db, (aqp_qid)q, 4, &o, err, sizeof err);
        while (aqp_query_step(qr, 2, err, sizeof err) == 1)
            ;
        compare_with_sqlite(conn, qr, (aqp_qid)q);
        aqp_query_free(qr);
    }
    sqlite3_close(conn);
    aqp_db_free(db);
}

/* Q3, Q5, Q11 and Q16 against SQLite running their SQL on the same
 * data. Their reported cells are the result's rows (Q3: the revenue of
 * its ten rows in order; Q5: the revenue of each nation) or a roll-up of
 * its rows (Q11: the rows and their total value; Q16: supplier_cnt summed
 * per p_size), so the SQL's rows are folded the same way here. */
static void compare_join_with_sqlite(sqlite3 *conn, const aqp_query *qr,
                                     aqp_qid q)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(conn, aqp_query_sql(q), -1, &st, NULL),
                     SQLITE_OK);
    size_t K = aqp_query_nkeys(qr);
    double want[16] = {0};
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (q == AQP_Q3) {
            assert_true((size_t)rows < K);
            want[rows] = sqlite3_column_double(st, 1);
        } else if (q == AQP_Q5) {
            char key[64];
            snprintf(key, sizeof key, "%s/revenue",
                     (const char *)sqlite3_column_text(st, 0));
            size_t k = 0;
            while (k < K && strcmp(aqp_query_key(qr, k), key))
                k++;
            if (k == K)
                fail_msg("q5: SQLite has a group %s the query has not", key);
            want[k] = sqlite3_column_double(st, 1);
        } else if (q == AQP_Q11) {
            want[0] += 1;
            want[1] += sqlite3_column_double(st, 1);
        } else if (q == AQP_Q16) {
            char key[64];
            snprintf(key, sizeof key, "size%d/supplier_cnt",
                     sqlite3_column_int(st, 2));
            size_t k = 0;
            while (k < K && strcmp(aqp_query_key(qr, k), key))
                k++;
            assert_true(k < K);
            want[k] += sqlite3_column_double(st, 3);
        }
        rows++;
    }
    sqlite3_finalize(st);
    /* every cell has rows behind it at this scale: the test would not
     * see a wrong filter that empties a group */
    if (rows < (q == AQP_Q3 ? 10 : q == AQP_Q5 ? 5 : q == AQP_Q11 ? 3 : 8))
        fail_msg("%s: SQLite returned %d rows, too few to test",
                 aqp_query_name(q), rows);
    const double *e = aqp_query_estimates(qr);
    const double *lo = aqp_query_lower(qr), *hi = aqp_query_upper(qr);
    for (size_t k = 0; k < K; k++) {
        if (!close_to(e[k], want[k], 1e-9))
            fail_msg("%s %s: %.17g, SQLite says %.17g", aqp_query_name(q),
                     aqp_query_key(qr, k), e[k], want[k]);
        assert_true(lo[k] == e[k] && hi[k] == e[k]);
    }
}

static void test_joins_last_minibatch_gives_sqlites_exact_answer(void **state)
{
    (void)state;
    /* SF 0.03: 300 suppliers, one of them with complaints (Q16's NOT IN
     * drops its rows), Q11's HAVING keeps 7 of its 6,000 parts */
    aqp_db *db = gen(0.03, 11);
    sqlite3 *conn;
    char err[256];
    assert_int_equal(sqlite3_open(":memory:", &conn), SQLITE_OK);
    if (aqp_db_to_sqlite(db, conn, err, sizeof err) < 0)
        fail_msg("%s", err);
    static const aqp_qid JOINS[] = {AQP_Q3, AQP_Q5, AQP_Q11, AQP_Q16};
    for (size_t i = 0; i < sizeof JOINS / sizeof *JOINS; i++) {
        aqp_query *qr = run_all(db, JOINS[i], 13, 3);
        compare_join_with_sqlite(conn, qr, JOINS[i]);
        aqp_query_free(qr);
        /* in one mini-batch, and with bootstrap bounds everywhere */
        aqp_opts o = {2, 20, 1};
        qr = aqp_query_new(db, JOINS[i], 1, &o, err, sizeof err);
        assert_int_equal(aqp_query_step(qr, 2, err, sizeof err), 1);
        compare_join_with_sqlite(conn, qr, JOINS[i]);
        aqp_query_free(qr);
    }
    sqlite3_close(conn);
    aqp_db_free(db);
}

static void test_generator_makes_the_joined_tables_of_tpch(void **state)
{
    (void)state;
    aqp_db *db = gen(0.02, 4);
    assert_int_equal(db->norders, 30000);
    assert_int_equal(db->ncustomers, 3000);
    assert_int_equal(db->nsuppliers, 200);
    assert_int_equal(db->npartsupp, 4 * db->nparts);
    size_t seg[AQP_NSEGMENTS] = {0};
    for (size_t c = 0; c < db->ncustomers; c++) {
        assert_true(db->c_mktsegment[c] < AQP_NSEGMENTS);
        assert_true(db->c_nationkey[c] < AQP_NNATIONS);
        seg[db->c_mktsegment[c]]++;
    }
    for (int i = 0; i < AQP_NSEGMENTS; i++)
        assert_true(fabs(seg[i] / 3000.0 - 0.2) < 0.04);
    for (size_t o = 0; o < db->norders; o++)
        assert_int_not_equal(db->o_custkey[o] % 3, 0);
    /* every line's supplier is one of its part's four */
    for (size_t r = 0; r < db->nrows; r++) {
        int ok = 0;
        for (unsigned i = 0; i < 4; i++)
            ok |= db->l_suppkey[r] ==
                  aqp_part_supplier(db->l_partkey[r], i, db->nsuppliers);
        assert_true(ok);
    }
    /* partsupp: each part's four rows together, every part once, the
     * parts not in key order */
    unsigned char *seen = calloc(db->nparts, 1);
    size_t ascending = 0;
    for (size_t u = 0; u < db->nparts; u++) {
        uint32_t pk = db->ps_partkey[4 * u];
        assert_false(seen[pk - 1]);
        seen[pk - 1] = 1;
        for (unsigned i = 0; i < 4; i++) {
            assert_int_equal(db->ps_partkey[4 * u + i], pk);
            assert_int_equal(db->ps_suppkey[4 * u + i],
                             aqp_part_supplier(pk, i, db->nsuppliers));
            assert_in_range(db->ps_availqty[4 * u + i], 1, 9999);
            assert_in_range(db->ps_supplycost[4 * u + i], 100, 100000);
        }
        ascending += u && pk > db->ps_partkey[4 * (u - 1)];
    }
    assert_true(fabs((double)ascending / db->nparts - 0.5) < 0.05);
    free(seen);
    size_t complaints = 0;
    for (size_t s = 0; s < db->nsuppliers; s++)
        complaints += db->s_comment[s] == AQP_COMMENT_COMPLAINTS;
    assert_int_equal(complaints, 1);
    /* the specification's nations and regions */
    assert_string_equal(aqp_nation_name(7), "GERMANY");
    assert_string_equal(aqp_region_name(aqp_nation_region(18)), "ASIA");
    assert_string_equal(aqp_region_name(aqp_nation_region(24)), "AMERICA");
    aqp_db_free(db);
}

/* ---- threads ---- */

static void test_thread_count_does_not_change_the_answers(void **state)
{
    (void)state;
    aqp_db *db = gen(0.01, 2);
    char err[256];
    for (int run = 0; run < 2 * AQP_NQUERIES; run++) {
        int q = run % AQP_NQUERIES, boot = run >= AQP_NQUERIES;
        aqp_opts o = {3, 50, boot};
        aqp_query *one = aqp_query_new(db, (aqp_qid)q, 9, &o, err, sizeof err);
        aqp_query *many = aqp_query_new(db, (aqp_qid)q, 9, &o, err, sizeof err);
        size_t K = aqp_query_nkeys(one);
        for (int i = 0; i < 9; i++) {
            assert_int_equal(aqp_query_step(one, 1, err, sizeof err), 1);
            /* a different number of threads at every mini-batch */
            assert_int_equal(aqp_query_step(many, 2 + i % 3, err, sizeof err), 1);
            for (size_t k = 0; k < K; k++) {
                double a = aqp_query_estimates(one)[k];
                double b = aqp_query_estimates(many)[k];
                assert_true((isnan(a) && isnan(b)) || close_to(a, b, 1e-9));
                a = aqp_query_upper(one)[k];
                b = aqp_query_upper(many)[k];
                assert_true((isnan(a) && isnan(b)) || close_to(a, b, 1e-9));
            }
            assert_int_equal(aqp_query_last_rows(one), aqp_query_last_rows(many));
        }
        assert_int_equal(aqp_query_step(one, 1, err, sizeof err), 0);
        aqp_query_free(one);
        aqp_query_free(many);
    }
    aqp_db_free(db);
}

/* ---- Q17's recomputation ---- */

static void test_nested_q17_recomputes_more_tuples_as_it_goes(void **state)
{
    (void)state;
    aqp_db *db = gen(0.2, 1);
    char err[256];
    aqp_query *qr = aqp_query_new(db, AQP_Q17, 20, NULL, err, sizeof err);
    aqp_query *q6 = aqp_query_new(db, AQP_Q6, 20, NULL, err, sizeof err);
    uint64_t extra[20], flipped = 0;
    for (int i = 0; i < 20; i++) {
        assert_int_equal(aqp_query_step(qr, 1, err, sizeof err), 1);
        assert_int_equal(aqp_query_step(q6, 1, err, sizeof err), 1);
        uint64_t slice = aqp_query_last_rows(q6); /* just its slice */
        assert_true(aqp_query_last_rows(qr) >= slice);
        extra[i] = aqp_query_last_rows(qr) - slice;
        flipped += aqp_query_last_flipped(qr);
    }
    assert_int_equal(extra[0], 0); /* nothing retained before the first */
    uint64_t early = extra[1] + extra[2] + extra[3];
    uint64_t late = extra[16] + extra[17] + extra[18];
    assert_true(late > 3 * early);
    assert_true(flipped > 0); /* the inner estimate misjudged some tuples */
    aqp_query_free(qr);
    aqp_query_free(q6);
    aqp_db_free(db);
}

/* ---- bounds ---- */

static void test_query_new_rejects_bad_batch_counts(void **state)
{
    (void)state;
    aqp_db *db = gen(0.001, 1);
    char err[256];
    assert_null(aqp_query_new(db, AQP_Q6, 0, NULL, err, sizeof err));
    assert_null(aqp_query_new(db, AQP_Q6, db->nrows + 1, NULL, err, sizeof err));
    assert_non_null(strstr(err, "mini-batches"));
    aqp_opts few = {1, 5, 0};
    assert_null(aqp_query_new(db, AQP_Q6, 10, &few, err, sizeof err));
    assert_non_null(strstr(err, "replicates"));
    assert_int_equal(aqp_query_parse("q17"), AQP_Q17);
    assert_int_equal(aqp_query_parse("19"), AQP_Q19);
    assert_int_equal(aqp_query_parse("q2"), -1);
    aqp_db_free(db);
}

/* Over `runs` databases (seeds), the fraction of (run, key) pairs whose
 * bound after mini-batch `at` of `batches` holds the exact answer. */
static double coverage(aqp_qid q, int runs, size_t batches, size_t at,
                       double sf, int boot, int reps)
{
    char err[256];
    size_t hit = 0, total = 0;
    for (int s = 0; s < runs; s++) {
        aqp_db *db = gen(sf, 1000 + (uint64_t)s);
        aqp_query *exact = run_all(db, q, 1, 1);
        aqp_opts o = {(uint64_t)s, reps, boot};
        aqp_query *qr = aqp_query_new(db, q, batches, &o, err, sizeof err);
        for (size_t i = 0; i < at; i++)
            assert_int_equal(aqp_query_step(qr, 1, err, sizeof err), 1);
        for (size_t k = 0; k < aqp_query_nkeys(qr); k++) {
            double truth = aqp_query_estimates(exact)[k];
            double lo = aqp_query_lower(qr)[k], hi = aqp_query_upper(qr)[k];
            if (!isfinite(truth) || !isfinite(lo))
                continue;
            total++;
            hit += lo <= truth && truth <= hi;
        }
        aqp_query_free(qr);
        aqp_query_free(exact);
        aqp_db_free(db);
    }
    assert_true(total > 0);
    return (double)hit / total;
}

static void test_closed_form_bounds_cover_the_truth_95_percent(void **state)
{
    (void)state;
    /* 200 databases: the rate's standard error is 1.5 points. Late in
     * the run (3/4 of the rows) the finite-population factor matters:
     * without it the bounds would hold the truth nearly always. */
    double c6 = coverage(AQP_Q6, 200, 20, 15, 0.01, 0, AQP_BOOT_REPS);
    double c1 = coverage(AQP_Q1, 200, 20, 10, 0.01, 0, AQP_BOOT_REPS);
    printf("# coverage of 95%% bounds: q6 %.3f, q1 %.3f (all keys)\n", c6, c1);
    assert_true(c6 >= 0.91 && c6 <= 0.98);
    assert_true(c1 >= 0.91 && c1 <= 0.98);
}

static void test_bootstrap_bounds_cover_the_truth_95_percent(void **state)
{
    (void)state;
    /* The percentile bootstrap of a ratio over a few hundred lines runs a
     * little short of its nominal rate (0.92-0.93 here; a delta-method
     * interval gets 0.94 on the same data). */
    double c14 = coverage(AQP_Q14, 200, 20, 6, 0.01, 0, AQP_BOOT_REPS);
    printf("# coverage of 95%% bootstrap bounds: q14 %.3f\n", c14);
    assert_true(c14 >= 0.90 && c14 <= 0.99);
    /* Q17's inner averages come from ~30 lines per part: its bounds hold
     * the truth about 9 times in 10, not 19 in 20 (docs/aqp.md). */
    double c17 = coverage(AQP_Q17, 100, 20, 10, 0.03, 0, AQP_BOOT_REPS);
    printf("# coverage of 95%% bootstrap bounds: q17 %.3f\n", c17);
    assert_true(c17 >= 0.80 && c17 <= 0.99);
}

static void test_join_bounds_cover_the_truth_95_percent(void **state)
{
    (void)state;
    /* Q5: closed-form per nation, halfway and at three quarters (a
     * nation's lines of 1994 from its own suppliers are a few dozen at
     * SF 0.02: earlier, the normal approximation runs short). Q11: the
     * HAVING against an estimated fraction of the total, bootstrap over
     * the sampled parts, halfway. */
    double c5a = coverage(AQP_Q5, 100, 20, 10, 0.02, 0, AQP_BOOT_REPS);
    double c5b = coverage(AQP_Q5, 100, 20, 15, 0.02, 0, AQP_BOOT_REPS);
    double c11 = coverage(AQP_Q11, 100, 20, 10, 0.05, 0, AQP_BOOT_REPS);
    /* Q16 at three quarters. Its cells are near-certain counts (4
     * suppliers a part but for the rare supplier with complaints), and a
     * sample of a size's parts with no such supplier has a bound of width
     * 0: the bootstrap under-covers early (docs/aqp.md has the rates). */
    double c16 = coverage(AQP_Q16, 60, 20, 15, 0.05, 0, AQP_BOOT_REPS);
    printf("# coverage of 95%% bounds: q5 %.3f %.3f, q11 %.3f, q16 %.3f\n",
           c5a, c5b, c11, c16);
    assert_true(c5a >= 0.90 && c5a <= 0.99);
    assert_true(c5b >= 0.90 && c5b <= 0.99);
    assert_true(c11 >= 0.90 && c11 <= 0.99);
    assert_true(c16 >= 0.80 && c16 <= 0.99);
}

static void test_bootstrap_everywhere_covers_the_truth_too(void **state)
{
    (void)state;
    /* --bootstrap: Poisson weights on every row, replicate SUMs scaled
     * by N over their total weight */
    double c6 = coverage(AQP_Q6, 100, 20, 10, 0.005, 1, 300);
    double c1 = coverage(AQP_Q1, 60, 20, 10, 0.005, 1, 100);
    printf("# coverage of 95%% bootstrap bounds everywhere: q6 %.3f, q1 %.3f\n",
           c6, c1);
    assert_true(c6 >= 0.90 && c6 <= 0.98);
    assert_true(c1 >= 0.90 && c1 <= 0.98);
}

static void test_estimates_are_unbiased_on_average(void **state)
{
    (void)state;
    /* The mean over databases of (estimate - truth) / truth after a fifth
     * of the data is near 0 for a SUM (Q6). */
    char err[256];
    double s = 0;
    int runs = 100;
    for (int r = 0; r < runs; r++) {
        aqp_db *db = gen(0.01, 5000 + (uint64_t)r);
        aqp_query *exact = run_all(db, AQP_Q6, 1, 1);
        aqp_query *qr = aqp_query_new(db, AQP_Q6, 5, NULL, err, sizeof err);
        assert_int_equal(aqp_query_step(qr, 1, err, sizeof err), 1);
        double t = aqp_query_estimates(exact)[0];
        s += (aqp_query_estimates(qr)[0] - t) / t;
        aqp_query_free(qr);
        aqp_query_free(exact);
        aqp_db_free(db);
    }
    assert_true(fabs(s / runs) < 0.02);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dates_round_trip_through_the_civil_calendar),
        cmocka_unit_test(test_generator_is_deterministic_from_its_seed),
        cmocka_unit_test(test_generator_follows_the_tpch_distributions),
        cmocka_unit_test(test_rows_are_in_random_order),
        cmocka_unit_test(test_file_round_trips_and_rejects_damage),
        cmocka_unit_test(test_generate_rejects_a_bad_scale_factor),
        cmocka_unit_test(test_last_minibatch_gives_sqlites_exact_answer),
        cmocka_unit_test(test_generator_makes_the_joined_tables_of_tpch),
        cmocka_unit_test(test_joins_last_minibatch_gives_sqlites_exact_answer),
        cmocka_unit_test(test_thread_count_does_not_change_the_answers),
        cmocka_unit_test(test_nested_q17_recomputes_more_tuples_as_it_goes),
        cmocka_unit_test(test_query_new_rejects_bad_batch_counts),
        cmocka_unit_test(test_closed_form_bounds_cover_the_truth_95_percent),
        cmocka_unit_test(test_bootstrap_bounds_cover_the_truth_95_percent),
        cmocka_unit_test(test_join_bounds_cover_the_truth_95_percent),
        cmocka_unit_test(test_bootstrap_everywhere_covers_the_truth_too),
        cmocka_unit_test(test_estimates_are_unbiased_on_average),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
