/*
 * rlmodel.c — reading and writing MLF-RL's network (rlmodel.h states the
 * format). The reader checks every line against the one layout and says
 * which line breaks it and how.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util.h"
#include "io/rlmodel.h"
#include "paths.h" /* SLAQ_BINDIR, SLAQ_DATADIR, SLAQ_SRCDIR: BUILD/gen */

#define RLM_MAX_BYTES (1 << 20)

/* Reads up to max numbers from s into v; returns how many, or -1 at a
 * word that is not a finite number. */
static int numbers(const char *s, double *v, int max)
{
    int k = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            return k;
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || !isfinite(x) ||
            (*end && *end != ' ' && *end != '\t' && *end != '\r'))
            return -1;
        if (k == max)
            return max + 1;
        v[k++] = x;
        s = end;
    }
}

int rlm_parse(const char *text, const char *name, slaq_rl_model *m,
              char *err, size_t errlen)
{
    enum { MAGIC, SIZES, UNITS, OUTPUT, END } want = MAGIC;
    size_t unit = 0, lineno = 0;
    char line[4096];
    const char *p = text;
    memset(m, 0, sizeof *m);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        if (len >= sizeof line) {
            util_errf(err, errlen, "%s line %zu: longer than %zu bytes",
                      name, lineno, sizeof line - 1);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (nl != NULL);
        if (want != MAGIC && (line[0] == '#' || line[strspn(line, " \t\r")]
                              == 0))
            continue;
        if (want == MAGIC) {
            int ver;
            char tail;
            if (sscanf(line, "slaq-rl-model %d%c", &ver, &tail) < 1) {
                util_errf(err, errlen, "%s line 1: expected \"slaq-rl-model "
                          "%d\" (not a model of MLF-RL's network)", name,
                          RLM_VERSION);
                return -1;
            }
            if (ver != RLM_VERSION) {
                util_errf(err, errlen, "%s line 1: version %d; this slaq "
                          "reads version %d", name, ver, RLM_VERSION);
                return -1;
            }
            want = SIZES;
        } else if (want == SIZES) {
            int f, h;
            char tail;
            if (sscanf(line, "features %d hidden %d %c", &f, &h, &tail) !=
                2) {
                util_errf(err, errlen, "%s line %zu: expected \"features %d "
                          "hidden %d\"", name, lineno, SLAQ_RL_NFEAT,
                          SLAQ_RL_HIDDEN);
                return -1;
            }
            if (f != SLAQ_RL_NFEAT || h != SLAQ_RL_HIDDEN) {
                util_errf(err, errlen, "%s line %zu: a network of %d "
                          "features and %d hidden units; this slaq's has %d "
                          "and %d", name, lineno, f, h, SLAQ_RL_NFEAT,
                          SLAQ_RL_HIDDEN);
                return -1;
            }
            want = UNITS;
        } else if (want == UNITS) {
            double v[SLAQ_RL_NFEAT + 2];
            unsigned k;
            int off = 0;
            if (sscanf(line, "unit %u%n", &k, &off) != 1 || k != unit) {
                util_errf(err, errlen, "%s line %zu: expected \"unit %zu\" "
                          "and its %d numbers", name, lineno, unit,
                          SLAQ_RL_NFEAT + 2);
                return -1;
            }
            int got = numbers(line + off, v, SLAQ_RL_NFEAT + 2);
            if (got != SLAQ_RL_NFEAT + 2) {
                util_errf(err, errlen, "%s line %zu: unit %zu needs %d "
                          "finite numbers (%d weights from the features, "
                          "its bias, its weight in the score)%s", name,
                          lineno, unit, SLAQ_RL_NFEAT + 2, SLAQ_RL_NFEAT,
                          got < 0 ? "; one is not a finite number" : "");
                return -1;
            }
            memcpy(m->w1[unit], v, sizeof m->w1[unit]);
            m->b1[unit] = v[SLAQ_RL_NFEAT];
            m->w2[unit] = v[SLAQ_RL_NFEAT + 1];
            if (++unit == SLAQ_RL_HIDDEN)
                want = OUTPUT;
        } else if (want == OUTPUT) {
            double v[1];
            if (strncmp(line, "output", 6) != 0 ||
                numbers(line + 6, v, 1) != 1) {
                util_errf(err, errlen, "%s line %zu: expected \"output\" and "
                          "the score's bias, one finite number", name,
                          lineno);
                return -1;
            }
            m->b2 = v[0];
            want = END;
        } else {
            util_errf(err, errlen, "%s line %zu: more after the \"output\" "
                      "line", name, lineno);
            return -1;
        }
    }
    if (want != END) {
        static const char *what[] = {"\"slaq-rl-model\"", "\"features\"",
                                     "a \"unit\" line", "\"output\""};
        util_errf(err, errlen, "%s: ends before %s%s", name, what[want],
                  want == UNITS ? " (16 are needed)" : "");
        return -1;
    }
    return 0;
}

const char *rlm_default_path(void)
{
    static char path[4096];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    if (!strcmp(exe, SLAQ_BINDIR))
        snprintf(path, sizeof path, "%s/slaq/mlfs-rl.model", SLAQ_DATADIR);
    else
        snprintf(path, sizeof path, "%s/data/models/mlfs-rl.model",
                 SLAQ_SRCDIR);
    return path;
}

int rlm_read(const char *path, slaq_rl_model *m, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = malloc(RLM_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, RLM_MAX_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad || n > RLM_MAX_BYTES || memchr(buf, 0, n)) {
        util_errf(err, errlen, "%s: %s", path, !buf ? "out of memory"
                  : bad ? "read error" : n > RLM_MAX_BYTES
                  ? "larger than 1 MB: not a model"
                  : "holds a NUL byte: not a model");
        free(buf);
        return -1;
    }
    buf[n] = 0;
    int rc = rlm_parse(buf, path, m, err, errlen);
    free(buf);
    return rc;
}

int rlm_write(const char *path, const slaq_rl_model *m, const char *comment,
              char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "slaq-rl-model %d\nfeatures %d hidden %d\n", RLM_VERSION,
            SLAQ_RL_NFEAT, SLAQ_RL_HIDDEN);
    for (const char *c = comment; c && *c;) {
        size_t len = strcspn(c, "\n");
        fprintf(f, "# %.*s\n", (int)len, c);
        c += len + (c[len] == '\n');
    }
    for (size_t k = 0; k < SLAQ_RL_HIDDEN; k++) {
        fprintf(f, "unit %zu", k);
        for (size_t j = 0; j < SLAQ_RL_NFEAT; j++)
            fprintf(f, " %.17g", m->w1[k][j]);
        fprintf(f, " %.17g %.17g\n", m->b1[k], m->w2[k]);
    }
    fprintf(f, "output %.17g\n", m->b2);
    if (fclose(f) != 0) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
