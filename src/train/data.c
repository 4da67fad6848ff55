/*
 * data.c — datasets for slaq-train: Fashion-MNIST (IDX), LIBSVM and CSV
 * files, and the Friedman #1 generator, plus the small transforms every
 * algorithm shares (relabelling, class selection, subsampling,
 * standardisation).
 *
 * Readers turn bad input into an error that names the file and the position
 * (byte offset for binary IDX, line and field for text) and never return a
 * half-read dataset.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/util.h"
#include "train/train.h"

/* Where Debian's dataset-fashion-mnist package puts the files. */
#define FMNIST_DIR "/usr/share/datasets/fashion-mnist"

void train_data_free(struct train_data *t)
{
    free(t->x);
    free(t->y);
    t->x = t->y = NULL;
    t->n = t->d = 0;
}

/* ---- IDX (gzip or plain; zlib reads both) -------------------------------- */

static int idx_read(gzFile g, const char *path, size_t *off, void *buf,
                    size_t len, const char *what, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? (1u << 30) : (unsigned)(len - got);
        int r = gzread(g, (char *)buf + got, chunk);
        if (r < 0) {
            int zerr;
            const char *m = gzerror(g, &zerr);
            snprintf(err, errlen, "%s: byte %zu: cannot read %s: %s", path,
                     *off + got, what, m);
            return -1;
        }
        if (r == 0) {
            snprintf(err, errlen,
                     "%s: byte %zu: file ends early while reading %s "
                     "(%zu more bytes expected)",
                     path, *off + got, what, len - got);
            return -1;
        }
        got += (size_t)r;
    }
    *off += len;
    return 0;
}

static uint32_t idx_be32(const unsigned char *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* Opens an IDX file and checks its magic number and dimension count; the
 * dimensions follow in dims[]. */
static gzFile idx_open(const char *path, uint32_t magic, int ndims,
                       uint32_t *dims, size_t *off, char *err, size_t errlen)
{
    unsigned char h[4];
    gzFile g = gzopen(path, "rb");
    *off = 0;
    if (!g) {
        snprintf(err, errlen, "%s: cannot open: %s", path,
                 errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    if (idx_read(g, path, off, h, 4, "the IDX magic number", err, errlen) < 0)
        goto err;
    if (idx_be32(h) != magic) {
        snprintf(err, errlen,
                 "%s: byte 0: IDX magic number is 0x%08x, expected 0x%08x "
                 "(unsigned bytes, %d dimensions)",
                 path, idx_be32(h), magic, ndims);
        goto err;
    }
    for (int i = 0; i < ndims; i++) {
        if (idx_read(g, path, off, h, 4, "an IDX dimension", err, errlen) < 0)
            goto err;
        dims[i] = idx_be32(h);
    }
    return g;
err:
    gzclose(g);
    return NULL;
}

int train_data_read_idx(const char *images, const char *labels,
                        struct train_data *out, char *err, size_t errlen)
{
    uint32_t di[3], dl[1];
    size_t oi, ol;
    unsigned char *buf = NULL;
    gzFile gi = NULL, gl = NULL;
    memset(out, 0, sizeof *out);

    if (!(gi = idx_open(images, 0x00000803, 3, di, &oi, err, errlen)))
        goto err;
    if (!(gl = idx_open(labels, 0x00000801, 1, dl, &ol, err, errlen)))
        goto err;
    if (di[0] != dl[0]) {
        snprintf(err, errlen, "%s: byte 4: %u labels, but %s has %u images",
                 labels, dl[0], images, di[0]);
        goto err;
    }
    out->n = di[0];
    out->d = (size_t)di[1] * di[2];
    if (out->n == 0 || out->d == 0) {
        snprintf(err, errlen, "%s: byte 4: empty image set (%u x %u x %u)",
                 images, di[0], di[1], di[2]);
        goto err;
    }
    buf = malloc(out->n * out->d);
    out->x = calloc(out->n * out->d, sizeof(double));
    out->y = calloc(out->n, sizeof(double));
    if (!buf || !out->x || !out->y) {
        snprintf(err, errlen, "%s: out of memory for %zu images of %zu pixels",
                 images, out->n, out->d);
        goto err;
    }
    if (idx_read(gi, images, &oi, buf, out->n * out->d, "pixels", err, errlen) < 0)
        goto err;
    for (size_t i = 0; i < out->n * out->d; i++)
        out->x[i] = buf[i] / 255.0;
    if (idx_read(gl, labels, &ol, buf, out->n, "labels", err, errlen) < 0)
        goto err;
    int maxc = 0;
    for (size_t i = 0; i < out->n; i++) {
        out->y[i] = buf[i];
        if (buf[i] + 1 > maxc)
            maxc = buf[i] + 1;
    }
    out->n_classes = maxc;
    free(buf);
    gzclose(gi);
    gzclose(gl);
    return 0;
err:
    free(buf);
    if (gi)
        gzclose(gi);
    if (gl)
        gzclose(gl);
    train_data_free(out);
    return -1;
}

/* ---- text readers --------------------------------------------------------- */

/* A growable dense matrix being read row by row. */
struct rows {
    double *x, *y;
    size_t n, d, cap;
};

/* Appends one row (d <= r->d features, the rest zero). -1 when the arrays
 * cannot grow, with the rows read so far kept. */
static int rows_add(struct rows *r, const double *feat, size_t d, double label)
{
    if (r->n == r->cap) {
        size_t cap = grow_cap(r->cap, r->n + 1, 1024);
        if (!cap || (r->d && cap > SIZE_MAX / r->d) ||
            GROW_ARRAY(r->x, cap * r->d) < 0 || GROW_ARRAY(r->y, cap) < 0)
            return -1;
        r->cap = cap;
    }
    memcpy(r->x + r->n * r->d, feat, d * sizeof(double));
    for (size_t j = d; j < r->d; j++)
        r->x[r->n * r->d + j] = 0;
    r->y[r->n++] = label;
    return 0;
}

/* Parses a finite number from s (up to `end`); NaN and infinities are
 * errors because every algorithm here would silently turn them into a NaN
 * loss much later. Returns the number of characters used, 0 on failure. */
static size_t parse_finite(const char *s, double *v)
{
    char *e;
    errno = 0;
    *v = strtod(s, &e);
    if (e == s || errno == ERANGE || !isfinite(*v))
        return 0;
    return (size_t)(e - s);
}

int train_data_read_libsvm(const char *path, size_t min_d,
                           struct train_data *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;
    /* Two passes would need the file twice; instead rows are read sparse into
     * a list of (index, value) and densified at the end. */
    size_t *ridx = NULL, nent = 0, entcap = 0, *rstart = NULL, nrows = 0, rcap = 0;
    double *rval = NULL, *lab = NULL;
    size_t d = min_d;
    memset(out, 0, sizeof *out);
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        if (nrows + 1 >= rcap) {
            /* Room for this row and the end mark rstart[nrows]. */
            size_t c = grow_cap(rcap, nrows + 2, 1024);
            if (!c || GROW_ARRAY(rstart, c) < 0 || GROW_ARRAY(lab, c) < 0)
                goto oom;
            rcap = c;
        }
        double v;
        size_t used = parse_finite(p, &v);
        if (!used || (p[used] && !isspace((unsigned char)p[used]))) {
            snprintf(err, errlen,
                     "%s: line %zu, field 1: label must be a finite number",
                     path, lineno);
            goto err;
        }
        lab[nrows] = v;
        rstart[nrows] = nent;
        p += used;
        int field = 1;
        size_t last = 0;
        for (;;) {
            while (isspace((unsigned char)*p))
                p++;
            if (*p == '\0' || *p == '#')
                break;
            field++;
            char *e;
            errno = 0;
            long long ix = strtoll(p, &e, 10);
            if (e == p || *e != ':' || ix < 1 || errno) {
                snprintf(err, errlen,
                         "%s: line %zu, field %d: expected index:value with "
                         "index >= 1",
                         path, lineno, field);
                goto err;
            }
            if ((size_t)ix <= last) {
                snprintf(err, errlen,
                         "%s: line %zu, field %d: index %lld is not above the "
                         "previous one",
                         path, lineno, field, ix);
                goto err;
            }
            last = (size_t)ix;
            p = e + 1;
            used = parse_finite(p, &v);
            if (!used || (p[used] && !isspace((unsigned char)p[used]))) {
                snprintf(err, errlen,
                         "%s: line %zu, field %d: value of feature %lld must "
                         "be a finite number",
                         path, lineno, field, ix);
                goto err;
            }
            p += used;
            if (nent == entcap) {
                size_t c = grow_cap(entcap, nent + 1, 4096);
                if (!c || GROW_ARRAY(ridx, c) < 0 || GROW_ARRAY(rval, c) < 0)
                    goto oom;
                entcap = c;
            }
            ridx[nent] = (size_t)ix - 1;
            rval[nent++] = v;
            if ((size_t)ix > d)
                d = (size_t)ix;
        }
        nrows++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: line %zu: read error: %s", path, lineno + 1,
                 strerror(errno));
        goto err;
    }
    if (nrows == 0) {
        snprintf(err, errlen, "%s: no data rows", path);
        goto err;
    }
    rstart[nrows] = nent;
    if (d <= SIZE_MAX / sizeof(double)) {
        out->x = calloc(nrows, (d ? d : 1) * sizeof(double));
        out->y = calloc(nrows, sizeof(double));
    }
    if (!out->x || !out->y) {
        snprintf(err, errlen, "%s: out of memory for %zu rows of %zu features",
                 path, nrows, d);
        train_data_free(out);
        goto err;
    }
    out->n = nrows;
    out->d = d;
    for (size_t i = 0; i < nrows; i++) {
        out->y[i] = lab[i];
        for (size_t e = rstart[i]; e < rstart[i + 1]; e++)
            out->x[i * d + ridx[e]] = rval[e];
    }
    free(ridx);
    free(rval);
    free(rstart);
    free(lab);
    free(line);
    fclose(f);
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory at line %zu (%zu rows read)",
             path, lineno, nrows);
err:
    free(ridx);
    free(rval);
    free(rstart);
    free(lab);
    free(line);
    fclose(f);
    return -1;
}

int train_data_read_csv(const char *path, int label_col, struct train_data *out,
                        char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, lineno = 0, ncol = 0;
    ssize_t len;
    struct rows r = {0};
    double *vals = NULL;
    memset(out, 0, sizeof *out);
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len == 0)
            continue;
        /* Count the fields of this row. */
        size_t nf = 1;
        for (char *p = line; *p; p++)
            nf += *p == ',';
        if (ncol == 0) {
            double v;
            char *p = line;
            while (isspace((unsigned char)*p))
                p++;
            size_t used = parse_finite(p, &v);
            if (nf < 2) {
                snprintf(err, errlen,
                         "%s: line %zu: need at least two columns (features "
                         "and a label)",
                         path, lineno);
                goto err;
            }
            ncol = nf;
            if (label_col >= (int)ncol || label_col < -1) {
                snprintf(err, errlen,
                         "%s: line %zu: label column %d does not exist (%zu "
                         "columns)",
                         path, lineno, label_col + 1, ncol);
                goto err;
            }
            vals = calloc(ncol, sizeof(double));
            if (!vals)
                goto oom;
            r.d = ncol - 1;
            if (!used && lineno == 1)
                continue; /* a header line */
        }
        if (nf != ncol) {
            snprintf(err, errlen,
                     "%s: line %zu: %zu columns, but the first row has %zu",
                     path, lineno, nf, ncol);
            goto err;
        }
        char *p = line;
        for (size_t c = 0; c < ncol; c++) {
            while (*p == ' ' || *p == '\t')
                p++;
            size_t used = parse_finite(p, &vals[c]);
            char *q = p + used;
            while (*q == ' ' || *q == '\t')
                q++;
            if (!used || (*q != ',' && *q != '\0')) {
                snprintf(err, errlen,
                         "%s: line %zu, column %zu: expected a finite number",
                         path, lineno, c + 1);
                goto err;
            }
            p = *q ? q + 1 : q;
        }
        size_t lc = label_col < 0 ? ncol - 1 : (size_t)label_col;
        double label = vals[lc];
        memmove(vals + lc, vals + lc + 1, (ncol - 1 - lc) * sizeof(double));
        if (rows_add(&r, vals, ncol - 1, label) < 0)
            goto oom;
    }
    if (r.n == 0) {
        snprintf(err, errlen, "%s: no data rows", path);
        goto err;
    }
    out->n = r.n;
    out->d = r.d;
    out->x = r.x;
    out->y = r.y;
    free(vals);
    free(line);
    fclose(f);
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory at line %zu (%zu rows read)",
             path, lineno, r.n);
err:
    free(r.x);
    free(r.y);
    free(vals);
    free(line);
    fclose(f);
    return -1;
}

/* ---- synthetic ------------------------------------------------------------ */

int train_data_friedman1(size_t n, unsigned seed, struct train_data *out,
                         char *err, size_t errlen)
{
    uint64_t s = 0x5eed0000ULL + seed;
    memset(out, 0, sizeof *out);
    if (n == 0) {
        snprintf(err, errlen, "friedman1: need at least one row");
        return -1;
    }
    out->x = calloc(n, 10 * sizeof(double));
    out->y = calloc(n, sizeof(double));
    if (!out->x || !out->y) {
        snprintf(err, errlen, "friedman1: out of memory for %zu rows of 10 "
                 "features", n);
        train_data_free(out);
        return -1;
    }
    out->n = n;
    out->d = 10;
    for (size_t i = 0; i < n; i++) {
        double *x = out->x + i * 10;
        for (int j = 0; j < 10; j++)
            x[j] = train_rand_uniform(&s);
        out->y[i] = 10 * sin(M_PI * x[0] * x[1]) + 20 * (x[2] - 0.5) * (x[2] - 0.5) +
                    10 * x[3] + 5 * x[4] + train_rand_normal(&s);
    }
    snprintf(out->name, sizeof out->name, "friedman1");
    return 0;
}

/* ---- transforms ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void relabel_one(struct train_data *t, const double *vals, size_t nv)
{
    for (size_t i = 0; i < t->n; i++) {
        const double *hit = bsearch(&t->y[i], vals, nv, sizeof *vals, cmp_double);
        t->y[i] = (double)(hit - vals);
    }
    t->n_classes = (int)nv;
}

int train_data_relabel(struct train_data *tr, struct train_data *te,
                       int max_classes, char *err, size_t errlen)
{
    size_t n = tr->n + (te ? te->n : 0), nv = 0;
    double *v = train_xcalloc(n, sizeof *v);
    memcpy(v, tr->y, tr->n * sizeof *v);
    if (te && te->n)
        memcpy(v + tr->n, te->y, te->n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    for (size_t i = 0; i < n; i++)
        if (nv == 0 || v[i] != v[nv - 1])
            v[nv++] = v[i];
    if (nv > (size_t)max_classes || nv < 2) {
        snprintf(err, errlen,
                 "%s: %zu distinct labels; classification needs 2 to %d "
                 "(is this a regression dataset?)",
                 tr->name, nv, max_classes);
        free(v);
        return -1;
    }
    relabel_one(tr, v, nv);
    if (te && te->n)
        relabel_one(te, v, nv);
    free(v);
    return 0;
}

int train_data_select_classes(struct train_data *t, const char *classes,
                              char *err, size_t errlen)
{
    int map[256], k = 0;
    for (int i = 0; i < 256; i++)
        map[i] = -1;
    const char *p = classes;
    while (*p) {
        char *e;
        long c = strtol(p, &e, 10);
        if (e == p || c < 0 || c >= t->n_classes || c > 255 || map[c] >= 0 ||
            (*e != ',' && *e != '\0')) {
            snprintf(err, errlen,
                     "--classes %s: expected distinct class numbers 0..%d "
                     "separated by commas",
                     classes, t->n_classes - 1);
            return -1;
        }
        map[c] = k++;
        p = *e ? e + 1 : e;
    }
    if (k < 2) {
        snprintf(err, errlen, "--classes %s: need at least two classes", classes);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        int c = map[(int)t->y[i]];
        if (c < 0)
            continue;
        memmove(t->x + m * t->d, t->x + i * t->d, t->d * sizeof(double));
        t->y[m++] = c;
    }
    t->n = m;
    t->n_classes = k;
    return 0;
}

void train_data_subsample(struct train_data *t, double fraction, unsigned seed)
{
    if (fraction >= 1 || t->n < 2)
        return;
    uint64_t s = 0xab5eed00ULL + seed;
    size_t keep = (size_t)(fraction * (double)t->n + 0.5);
    if (keep < 1)
        keep = 1;
    /* Partial Fisher-Yates over row indices, then compact in index order so
     * the kept rows stay in their original relative order. */
    size_t *ix = train_xcalloc(t->n, sizeof *ix);
    for (size_t i = 0; i < t->n; i++)
        ix[i] = i;
    for (size_t i = 0; i < keep; i++) {
        size_t j = i + (size_t)(train_rand_uniform(&s) * (double)(t->n - i));
        if (j >= t->n)
            j = t->n - 1;
        size_t tmp = ix[i];
        ix[i] = ix[j];
        ix[j] = tmp;
    }
    qsort(ix, keep, sizeof *ix, cmp_size);
    for (size_t i = 0; i < keep; i++) {
        memmove(t->x + i * t->d, t->x + ix[i] * t->d, t->d * sizeof(double));
        t->y[i] = t->y[ix[i]];
    }
    t->n = keep;
    free(ix);
}

void train_data_poly2(struct train_data *t)
{
    size_t d = t->d, e = d + d * (d + 1) / 2;
    double *x = train_xcalloc(t->n * e, sizeof *x);
    for (size_t i = 0; i < t->n; i++) {
        const double *src = t->x + i * d;
        double *dst = x + i * e;
        memcpy(dst, src, d * sizeof *dst);
        size_t o = d;
        for (size_t a = 0; a < d; a++)
            for (size_t b = a; b < d; b++)
                dst[o++] = src[a] * src[b];
    }
    free(t->x);
    t->x = x;
    t->d = e;
}

void train_data_standardize(struct train_data *tr, struct train_data *te)
{
    size_t d = tr->d;
    double *mu = train_xcalloc(d, sizeof *mu), *sd = train_xcalloc(d, sizeof *sd);
    for (size_t i = 0; i < tr->n; i++)
        for (size_t j = 0; j < d; j++)
            mu[j] += tr->x[i * d + j];
    for (size_t j = 0; j < d; j++)
        mu[j] /= (double)tr->n;
    for (size_t i = 0; i < tr->n; i++)
        for (size_t j = 0; j < d; j++) {
            double z = tr->x[i * d + j] - mu[j];
            sd[j] += z * z;
        }
    for (size_t j = 0; j < d; j++) {
        sd[j] = sqrt(sd[j] / (double)tr->n);
        sd[j] = sd[j] > 1e-12 ? 1 / sd[j] : 0;
    }
    for (int s = 0; s < 2; s++) {
        struct train_data *t = s ? te : tr;
        if (!t)
            continue;
        for (size_t i = 0; i < t->n; i++)
            for (size_t j = 0; j < d; j++)
                t->x[i * d + j] = (t->x[i * d + j] - mu[j]) * sd[j];
    }
    free(mu);
    free(sd);
}

/* ---- loading -------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int load_file(const char *path, const char *format, int label_col,
                     size_t min_d, struct train_data *t, char *err, size_t errlen)
{
    int csv = format ? strcmp(format, "csv") == 0
                     : ends_with(path, ".csv") || ends_with(path, ".CSV");
    if (format && !csv && strcmp(format, "libsvm") != 0) {
        snprintf(err, errlen, "--format %s: expected libsvm or csv", format);
        return -1;
    }
    int rc = csv ? train_data_read_csv(path, label_col, t, err, errlen)
                 : train_data_read_libsvm(path, min_d, t, err, errlen);
    if (rc == 0) {
        const char *b = strrchr(path, '/');
        b = b ? b + 1 : path;
        snprintf(t->name, sizeof t->name, "%.*s", (int)strcspn(b, "."), b);
    }
    return rc;
}

/* Pads `t` with zero columns up to d features (LIBSVM test files may not
 * mention the last features). */
static void widen(struct train_data *t, size_t d)
{
    if (t->d >= d)
        return;
    double *x = train_xcalloc(t->n * d, sizeof *x);
    for (size_t i = 0; i < t->n; i++)
        memcpy(x + i * d, t->x + i * t->d, t->d * sizeof *x);
    free(t->x);
    t->x = x;
    t->d = d;
}

int train_data_load(const struct train_data_opts *o, bool regression,
                    struct train_data *tr, struct train_data *te, char *err,
                    size_t errlen)
{
    const char *src = o->source ? o->source : regression ? "friedman1" : "fmnist";
    memset(tr, 0, sizeof *tr);
    memset(te, 0, sizeof *te);

    if (strcmp(src, "fmnist") == 0) {
        if (regression) {
            snprintf(err, errlen, "fmnist is a classification dataset; "
                                  "regression algorithms use friedman1 or a file");
            return -1;
        }
        if (train_data_read_idx(FMNIST_DIR "/train-images-idx3-ubyte.gz",
                                FMNIST_DIR "/train-labels-idx1-ubyte.gz", tr,
                                err, errlen) < 0 ||
            train_data_read_idx(FMNIST_DIR "/t10k-images-idx3-ubyte.gz",
                                FMNIST_DIR "/t10k-labels-idx1-ubyte.gz", te,
                                err, errlen) < 0)
            goto err;
        snprintf(tr->name, sizeof tr->name, "fmnist");
        if (o->classes) {
            if (train_data_select_classes(tr, o->classes, err, errlen) < 0 ||
                train_data_select_classes(te, o->classes, err, errlen) < 0)
                goto err;
            /* "fmnist-0v6": the classes are part of the dataset's name. */
            snprintf(tr->name, sizeof tr->name, "fmnist-%s", o->classes);
            for (char *c = tr->name; *c; c++)
                if (*c == ',')
                    *c = 'v';
        }
    } else if (strcmp(src, "friedman1") == 0) {
        /* The test set is drawn from the same distribution with another
         * seed: a fifth of the training size. */
        size_t n = o->n_synth ? o->n_synth : 200000;
        if (!regression) {
            snprintf(err, errlen, "friedman1 is a regression dataset; "
                                  "classification algorithms use fmnist or a file");
            return -1;
        }
        if (train_data_friedman1(n, o->seed, tr, err, errlen) < 0 ||
            train_data_friedman1(n / 5 + 1, o->seed + 7919, te, err, errlen) < 0)
            goto err;
    } else {
        if (load_file(src, o->format, o->label_col, 0, tr, err, errlen) < 0)
            goto err;
        if (o->test) {
            if (load_file(o->test, o->format, o->label_col, tr->d, te, err, errlen) < 0)
                goto err;
            if (te->d > tr->d)
                widen(tr, te->d);
            widen(te, tr->d);
            if (te->d != tr->d) {
                snprintf(err, errlen, "%s: %zu features, but %s has %zu",
                         o->test, te->d, src, tr->d);
                goto err;
            }
        }
        if (!regression && train_data_relabel(tr, te, 1000, err, errlen) < 0)
            goto err;
    }
    if (o->subsample > 0 && o->subsample < 1)
        train_data_subsample(tr, o->subsample, o->seed);
    return 0;
err:
    train_data_free(tr);
    train_data_free(te);
    return -1;
}

int train_data_split(struct train_data *tr, double fraction, unsigned seed,
                     struct train_data *val, char *err, size_t errlen)
{
    size_t nv = (size_t)(fraction * (double)tr->n + 0.5);
    memset(val, 0, sizeof *val);
    if (nv < 1 || nv >= tr->n) {
        snprintf(err, errlen, "--validation %g: keeps %zu of %zu training "
                 "rows for validation; expected at least one row on each "
                 "side", fraction, nv, tr->n);
        return -1;
    }
    uint64_t s = 0x5a11da7eULL + seed;
    char *pick = calloc(tr->n, 1);
    val->x = calloc(nv, tr->d * sizeof *val->x);
    val->y = calloc(nv, sizeof *val->y);
    if (!pick || !val->x || !val->y) {
        snprintf(err, errlen, "--validation %g: out of memory for %zu rows of "
                 "%zu features", fraction, nv, tr->d);
        free(pick);
        train_data_free(val);
        return -1;
    }
    double *vx = val->x, *vy = val->y;
    for (size_t got = 0; got < nv;) { /* rejection: nv < n */
        size_t i = (size_t)(train_rand_uniform(&s) * (double)tr->n);
        if (i < tr->n && !pick[i]) {
            pick[i] = 1;
            got++;
        }
    }
    *val = *tr;
    val->n = nv;
    val->x = vx;
    val->y = vy;
    size_t a = 0, b = 0;
    for (size_t i = 0; i < tr->n; i++) {
        if (pick[i]) {
            memcpy(val->x + b * tr->d, tr->x + i * tr->d,
                   tr->d * sizeof(double));
            val->y[b++] = tr->y[i];
        } else {
            if (a != i) {
                memmove(tr->x + a * tr->d, tr->x + i * tr->d,
                        tr->d * sizeof(double));
                tr->y[a] = tr->y[i];
            }
            a++;
        }
    }
    tr->n = a;
    free(pick);
    return 0;
}
