/*
 * dltrace.c — the reader of deep-learning job traces with deadlines
 * (dltrace.h). A line is split on commas into exactly eight fields; the
 * four slaq uses are parsed strictly, the generated ones (num_iteration,
 * model_name, batch_size) and the id only checked to be there.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/dltrace.h"
#include "io/text.h"

static const char *const header =
    "job_id,submission_time,num_iteration,model_name,deadline,batch_size,"
    "num_gpu,duration";

enum { F_ID, F_SUBMIT, F_ITER, F_MODEL, F_DEADLINE, F_BATCH, F_GPU, F_DUR,
       NFIELDS };
static const char *const fname[NFIELDS] = {
    "job_id", "submission_time", "num_iteration", "model_name", "deadline",
    "batch_size", "num_gpu", "duration"};

/* A number in [lo, hi] (a whole one if `whole`); -1 with the message. */
static int field_num(const char *s, double lo, double hi, int whole,
                     double *out, const char *name, char *err, size_t len)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x) || x < lo || x > hi ||
        (whole && x != floor(x))) {
        util_errf(err, len, "field '%s': expected %s from %g to %g, got '%s'",
                  name, whole ? "a whole number" : "a number", lo, hi, s);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_line(char *s, dlt_job *j, char *err, size_t len)
{
    char *f[NFIELDS];
    size_t n = 0;
    for (char *p = s;; p++) {
        if (n < NFIELDS)
            f[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    if (n != NFIELDS) {
        util_errf(err, len, "expected %d comma-separated fields (%s), got "
                  "%zu", NFIELDS, header, n);
        return -1;
    }
    for (int k = 0; k < NFIELDS; k++)
        if (!*f[k]) {
            util_errf(err, len, "field '%s' is empty", fname[k]);
            return -1;
        }
    double gpus;
    if (field_num(f[F_SUBMIT], 0, DLT_MAX_SECONDS, 0, &j->submit,
                  fname[F_SUBMIT], err, len) ||
        field_num(f[F_DEADLINE], 0, DLT_MAX_SECONDS, 0, &j->deadline,
                  fname[F_DEADLINE], err, len) ||
        field_num(f[F_GPU], 1, DLT_MAX_GPUS, 1, &gpus, fname[F_GPU], err,
                  len) ||
        field_num(f[F_DUR], 0, DLT_MAX_SECONDS, 0, &j->duration,
                  fname[F_DUR], err, len))
        return -1;
    if (!(j->duration > 0)) {
        util_errf(err, len, "field 'duration': expected a number of seconds "
                  "> 0, got '%s'", f[F_DUR]);
        return -1;
    }
    if (j->deadline < j->submit) {
        util_errf(err, len, "field 'deadline': %s is before the "
                  "submission_time %s", f[F_DEADLINE], f[F_SUBMIT]);
        return -1;
    }
    j->gpus = (unsigned)gpus;
    return 0;
}

int dlt_read(const char *path, dlt_trace *t, char *err, size_t errlen)
{
    t->jobs = NULL;
    t->n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = dlt_read_stream(f, path, t, err, errlen);
    fclose(f);
    return rc;
}

int dlt_read_stream(FILE *f, const char *path, dlt_trace *t, char *err,
                    size_t errlen)
{
    t->jobs = NULL;
    t->n = 0;
    char *buf = NULL, msg[512];
    size_t bufcap = 0, line = 0, cap = 0;
    ssize_t got;
    int rc = 0;
    while ((got = text_read_line(f, &buf, &bufcap, DLT_MAX_LINE + 1)) != -1) {
        line++;
        if (got == -3) {
            util_errf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
        size_t l = got < 0 ? 0 : (size_t)got;
        if (l > 0 && buf[l - 1] == '\n')
            l--;
        if (got == -2 || l > DLT_MAX_LINE) {
            util_errf(err, errlen, "%s:%zu: line longer than %d bytes", path,
                      line, DLT_MAX_LINE);
            rc = -1;
            break;
        }
        /* A NUL would end the line early for the parser: the rest of it
         * would go unread. */
        if (strlen(buf) != (size_t)got) {
            util_errf(err, errlen, "%s:%zu: a NUL byte in the line", path,
                      line);
            rc = -1;
            break;
        }
        buf[l] = '\0';
        while (l > 0 && buf[l - 1] == '\r')
            buf[--l] = '\0';
        if (line == 1) {
            if (strcmp(buf, header)) {
                util_errf(err, errlen, "%s:1: expected the header '%s'",
                          path, header);
                rc = -1;
                break;
            }
            continue;
        }
        if (l == 0)
            continue;
        if (t->n >= DLT_MAX_JOBS) {
            util_errf(err, errlen, "%s:%zu: more than %d jobs, the cap of a "
                      "trace", path, line, DLT_MAX_JOBS);
            rc = -1;
            break;
        }
        if (t->n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            dlt_job *nj = realloc(t->jobs, nc * sizeof *nj);
            if (!nj) {
                util_errf(err, errlen, "%s: out of memory", path);
                rc = -1;
                break;
            }
            t->jobs = nj;
            cap = nc;
        }
        dlt_job *j = &t->jobs[t->n];
        if (parse_line(buf, j, msg, sizeof msg)) {
            util_errf(err, errlen, "%s:%zu: %s", path, line, msg);
            rc = -1;
            break;
        }
        j->line = line;
        t->n++;
    }
    if (!rc && ferror(f)) {
        util_errf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    if (!rc && t->n == 0) {
        util_errf(err, errlen, "%s: no jobs", path);
        rc = -1;
    }
    free(buf);
    if (rc)
        dlt_free(t);
    return rc;
}

void dlt_free(dlt_trace *t)
{
    free(t->jobs);
    t->jobs = NULL;
    t->n = 0;
}
