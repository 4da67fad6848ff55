/*
 * corpus.c — the text corpus of slaq-train's LDA job: Debian's own package
 * descriptions (`apt-cache dumpavail`), or a user's file.
 *
 * Every package's description (summary line, long text if the lists carry
 * it) and debtags make one document;
 * identical descriptions (the same package listed for several versions or
 * architectures) are kept once. Words are lower-cased runs of ASCII letters
 * of three or more, minus a list of English stop-words; the vocabulary is
 * the `vocab_cap` words found in the most documents (at least two), ties
 * broken alphabetically so a corpus always gives the same vocabulary.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "train/train.h"

static const char *const corpus_stop[] = {
    "about", "above", "after", "again", "against", "all", "also", "and", "any",
    "are", "because", "been", "before", "being", "below", "between", "both",
    "but", "can", "could", "did", "does", "doing", "down", "during", "each",
    "etc", "few", "for", "from", "further", "had", "has", "have", "having",
    "her", "here", "hers", "herself", "him", "himself", "his", "how", "into",
    "its", "itself", "just", "may", "more", "most", "much", "must", "nor",
    "not", "now", "off", "once", "one", "only", "other", "our", "ours",
    "ourselves", "out", "over", "own", "same", "she", "should", "some",
    "such", "than", "that", "the", "their", "theirs", "them", "themselves",
    "then", "there", "these", "they", "this", "those", "through", "too",
    "under", "until", "upon", "use", "used", "uses", "using", "very", "via",
    "was", "way", "well", "were", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "within", "without", "would",
    "you", "your", "yours", "yourself", "yourselves", "package", "provides",
    "contains", "see", "like", "many", "several", "includes", "http", "https",
    "www", "com", "org", "role", "program", "implemented", "interface",
    "works", "scope", "suite", "made", NULL,
};

/* String -> id table with document frequencies (open addressing). */
struct dict {
    char **word;
    size_t *df, *last_doc;
    size_t n, cap;
    size_t *slot;       /* cap entries: id + 1, 0 = empty */
};

static uint64_t corpus_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* Doubles the table. -1 when memory runs out, with the table as it was
 * (arrays that did grow only have room to spare). */
static int dict_grow(struct dict *d)
{
    size_t cap = grow_cap(d->cap, d->cap + 1, 1 << 14);
    size_t *slot = cap ? calloc(cap, sizeof *slot) : NULL;
    if (!slot || GROW_ARRAY(d->word, cap) < 0 || GROW_ARRAY(d->df, cap) < 0 ||
        GROW_ARRAY(d->last_doc, cap) < 0) {
        free(slot);
        return -1;
    }
    for (size_t i = 0; i < d->cap; i++) {
        if (!d->slot[i])
            continue;
        const char *w = d->word[d->slot[i] - 1];
        size_t h = corpus_hash(w, strlen(w)) & (cap - 1);
        while (slot[h])
            h = (h + 1) & (cap - 1);
        slot[h] = d->slot[i];
    }
    free(d->slot);
    d->slot = slot;
    d->cap = cap;
    return 0;
}

/* Returns the id of word s[0..len), adding it if new; (size_t)-1 when
 * memory runs out. */
static size_t dict_id(struct dict *d, const char *s, size_t len)
{
    if (2 * (d->n + 1) > d->cap && dict_grow(d) < 0)
        return (size_t)-1;
    size_t h = corpus_hash(s, len) & (d->cap - 1);
    while (d->slot[h]) {
        const char *w = d->word[d->slot[h] - 1];
        if (strlen(w) == len && memcmp(w, s, len) == 0)
            return d->slot[h] - 1;
        h = (h + 1) & (d->cap - 1);
    }
    char *w = calloc(len + 1, 1);
    if (!w)
        return (size_t)-1;
    memcpy(w, s, len);
    d->word[d->n] = w;
    d->df[d->n] = 0;
    d->last_doc[d->n] = (size_t)-1;
    d->slot[h] = ++d->n;
    return d->n - 1;
}

static void dict_free(struct dict *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->word[i]);
    free(d->word);
    free(d->df);
    free(d->last_doc);
    free(d->slot);
}

/* Documents as runs of dictionary ids, while reading. */
struct docs {
    size_t *off, n, cap;
    size_t *tok, ntok, tokcap;
    uint64_t *seen;     /* hashes of document texts, to drop duplicates */
    size_t nseen, seencap;
};

/* 1 when a document with text hash h was seen before, 0 (and h recorded)
 * when not, -1 when the table cannot grow. */
static int docs_seen(struct docs *ds, uint64_t h)
{
    if (2 * (ds->nseen + 1) > ds->seencap) {
        size_t cap = grow_cap(ds->seencap, ds->seencap + 1, 1 << 14);
        uint64_t *t = cap ? calloc(cap, sizeof *t) : NULL;
        if (!t)
            return -1;
        for (size_t i = 0; i < ds->seencap; i++)
            if (ds->seen[i]) {
                size_t j = ds->seen[i] & (cap - 1);
                while (t[j])
                    j = (j + 1) & (cap - 1);
                t[j] = ds->seen[i];
            }
        free(ds->seen);
        ds->seen = t;
        ds->seencap = cap;
    }
    h |= 1; /* 0 marks an empty slot */
    size_t j = h & (ds->seencap - 1);
    while (ds->seen[j]) {
        if (ds->seen[j] == h)
            return 1;
        j = (j + 1) & (ds->seencap - 1);
    }
    ds->seen[j] = h;
    ds->nseen++;
    return 0;
}

static bool corpus_is_stop(const char *w, size_t len)
{
    for (int i = 0; corpus_stop[i]; i++)
        if (strlen(corpus_stop[i]) == len && memcmp(corpus_stop[i], w, len) == 0)
            return true;
    return false;
}

/* Adds one document's text. -1 when memory runs out (the load fails). */
static int docs_add(struct docs *ds, struct dict *d, const char *text, size_t len)
{
    if (len == 0)
        return 0;
    int seen = docs_seen(ds, corpus_hash(text, len));
    if (seen)
        return seen < 0 ? -1 : 0;
    if (ds->n + 2 > ds->cap) {
        size_t cap = grow_cap(ds->cap, ds->n + 2, 4096);
        if (!cap || GROW_ARRAY(ds->off, cap) < 0)
            return -1;
        ds->cap = cap;
    }
    if (ds->n == 0)
        ds->off[0] = 0;
    char w[64];
    size_t i = 0;
    while (i < len) {
        while (i < len && !isalpha((unsigned char)text[i]))
            i++;
        size_t wl = 0;
        while (i < len && isalpha((unsigned char)text[i])) {
            if (wl < sizeof w)
                w[wl] = (char)tolower((unsigned char)text[i]);
            wl++;
            i++;
        }
        if (wl < 3 || wl > sizeof w || corpus_is_stop(w, wl))
            continue;
        size_t id = dict_id(d, w, wl);
        if (id == (size_t)-1)
            return -1;
        if (d->last_doc[id] != ds->n) {
            d->last_doc[id] = ds->n;
            d->df[id]++;
        }
        if (ds->ntok == ds->tokcap) {
            size_t cap = grow_cap(ds->tokcap, ds->ntok + 1, 1 << 16);
            if (!cap || GROW_ARRAY(ds->tok, cap) < 0)
                return -1;
            ds->tokcap = cap;
        }
        ds->tok[ds->ntok++] = id;
    }
    ds->off[++ds->n] = ds->ntok;
    return 0;
}

/* Reads documents from a control-format stream: one per stanza, the text
 * of its Description field (summary and any long description) and its Tag
 * field (debtags such as "use::editing, works-with::text"). Debian's package
 * lists carry only the one-line summary of most packages; the tags roughly
 * double what each document says about its package. -1 when memory runs
 * out. */
static int read_control(FILE *f, struct docs *ds, struct dict *d)
{
    char *line = NULL, *doc = NULL;
    size_t cap = 0, dlen = 0, dcap = 0;
    ssize_t len;
    bool in_field = false;
    int rc = 0;
    for (;;) {
        len = getline(&line, &cap, f);
        if (len <= 0 || line[0] == '\n') {
            if (docs_add(ds, d, doc, dlen) < 0) {
                rc = -1;
                break;
            }
            dlen = 0;
            in_field = false;
            if (len < 0)
                break;
            continue;
        }
        const char *text = NULL;
        if (line[0] == ' ' || line[0] == '\t') {
            if (in_field)
                text = line;
        } else {
            in_field = strncmp(line, "Description:", 12) == 0 ||
                       strncmp(line, "Tag:", 4) == 0;
            if (in_field)
                text = strchr(line, ':') + 1;
        }
        if (!text)
            continue;
        size_t tl = strlen(text);
        if (dlen + tl + 1 > dcap) {
            size_t c = (dlen + tl + 1) * 2;
            if (GROW_ARRAY(doc, c) < 0) {
                rc = -1;
                break;
            }
            dcap = c;
        }
        memcpy(doc + dlen, text, tl);
        dlen += tl;
    }
    free(line);
    free(doc);
    return rc;
}

/* One document per line. -1 when memory runs out. */
static int read_lines(FILE *f, struct docs *ds, struct dict *d)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) >= 0)
        rc = docs_add(ds, d, line, (size_t)len);
    free(line);
    return rc;
}

static const struct dict *sort_dict;

static int cmp_vocab(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    if (sort_dict->df[x] != sort_dict->df[y])
        return sort_dict->df[x] < sort_dict->df[y] ? 1 : -1;
    return strcmp(sort_dict->word[x], sort_dict->word[y]);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Appends a document (its sorted vocabulary ids) as (word, count) runs.
 * -1 when memory runs out, with c as it was. */
static int corpus_add_doc(struct train_corpus *c, const int *ids, size_t n,
                          size_t *cap)
{
    if (c->n_docs + 2 > *cap) {
        size_t nc = grow_cap(*cap, c->n_docs + 2, 1024);
        if (!nc || GROW_ARRAY(c->off, nc) < 0)
            return -1;
        *cap = nc;
        c->off[0] = c->n_docs ? c->off[0] : 0;
    }
    size_t o = c->off[c->n_docs];
    /* Sized exactly (n is an upper bound on the runs): no spare capacity
     * to track. */
    if (GROW_ARRAY(c->word, o + n) < 0 || GROW_ARRAY(c->cnt, o + n) < 0)
        return -1;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && ids[j] == ids[i])
            j++;
        c->word[o] = ids[i];
        c->cnt[o++] = (int)(j - i);
        c->n_tokens += (double)(j - i);
        i = j;
    }
    c->off[++c->n_docs] = o;
    return 0;
}

int train_corpus_load(const char *path, const char *format, size_t vocab_cap,
                      size_t max_docs, struct train_corpus *train,
                      struct train_corpus *heldout, char *err, size_t errlen)
{
    struct dict d = {0};
    struct docs ds = {0};
    FILE *f;
    int rc = -1;
    memset(train, 0, sizeof *train);
    memset(heldout, 0, sizeof *heldout);
    bool lines = format && strcmp(format, "lines") == 0;
    if (format && !lines && strcmp(format, "control") != 0) {
        snprintf(err, errlen, "--format %s: lda reads control or lines", format);
        return -1;
    }
    if (path) {
        f = fopen(path, "r");
        if (!f) {
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
            return -1;
        }
    } else {
        f = popen("apt-cache dumpavail 2>/dev/null", "r");
        if (!f) {
            snprintf(err, errlen, "cannot run apt-cache dumpavail: %s",
                     strerror(errno));
            return -1;
        }
    }
    const char *src = path ? path : "apt-cache dumpavail";
    int rd = lines ? read_lines(f, &ds, &d) : read_control(f, &ds, &d);
    if (path)
        fclose(f);
    else if (pclose(f) != 0 && ds.n == 0 && rd == 0) {
        snprintf(err, errlen, "apt-cache dumpavail failed (is this Debian, with "
                              "package lists from apt-get update?)");
        goto out;
    }
    if (rd < 0) {
        snprintf(err, errlen, "%s: out of memory reading document %zu (%zu "
                 "words, %zu tokens so far)", src, ds.n + 1, d.n, ds.ntok);
        goto out;
    }

    /* Vocabulary: the most document-frequent words seen in >= 2 documents. */
    size_t *order = train_xcalloc(d.n, sizeof *order), nv = 0;
    for (size_t i = 0; i < d.n; i++)
        order[i] = i;
    sort_dict = &d;
    qsort(order, d.n, sizeof *order, cmp_vocab);
    while (nv < d.n && nv < vocab_cap && d.df[order[nv]] >= 2)
        nv++;
    int *map = train_xcalloc(d.n ? d.n : 1, sizeof *map);
    for (size_t i = 0; i < d.n; i++)
        map[i] = -1;
    train->vocab = train_xcalloc(nv ? nv : 1, sizeof *train->vocab);
    train->n_vocab = heldout->n_vocab = nv;
    bool oom = false;
    for (size_t v = 0; v < nv && !oom; v++) {
        map[order[v]] = (int)v;
        oom = !(train->vocab[v] = strdup(d.word[order[v]]));
    }
    free(order);

    /* Documents, evenly spaced if there are more than max_docs. */
    size_t keep = max_docs && max_docs < ds.n ? max_docs : ds.n;
    size_t tcap = 0, hcap = 0, kept = 0;
    int *ids = NULL;
    size_t idcap = 0;
    for (size_t j = 0; j < keep && !oom; j++) {
        size_t doc = keep == ds.n ? j : (size_t)((double)j * (double)ds.n / (double)keep);
        size_t n = 0, len = ds.off[doc + 1] - ds.off[doc];
        if (len > idcap) {
            if (GROW_ARRAY(ids, len * 2) < 0) {
                oom = true;
                break;
            }
            idcap = len * 2;
        }
        for (size_t t = ds.off[doc]; t < ds.off[doc + 1]; t++)
            if (map[ds.tok[t]] >= 0)
                ids[n++] = map[ds.tok[t]];
        if (n < 5)
            continue;
        qsort(ids, n, sizeof *ids, cmp_int);
        if (kept++ % 10 == 9)
            oom = corpus_add_doc(heldout, ids, n, &hcap) < 0;
        else
            oom = corpus_add_doc(train, ids, n, &tcap) < 0;
    }
    free(ids);
    free(map);
    if (oom) {
        snprintf(err, errlen, "%s: out of memory building the corpus of %zu "
                 "documents (%zu words in the vocabulary)", src, keep, nv);
        goto out;
    }
    if (train->n_docs < 2) {
        snprintf(err, errlen, "%s: only %zu documents with 5 or more vocabulary "
                              "words; LDA needs more text",
                 src, train->n_docs);
        goto out;
    }
    rc = 0;
out:
    dict_free(&d);
    free(ds.off);
    free(ds.tok);
    free(ds.seen);
    if (rc < 0) {
        train_corpus_free(train);
        train_corpus_free(heldout);
    }
    return rc;
}

void train_corpus_free(struct train_corpus *c)
{
    if (c->vocab)
        for (size_t v = 0; v < c->n_vocab; v++)
            free(c->vocab[v]);
    free(c->vocab);
    free(c->off);
    free(c->word);
    free(c->cnt);
    memset(c, 0, sizeof *c);
}
