/*
 * tasktrace.c — the reader of task-level traces (io/tasktrace.h).
 *
 * A line of the Google subset holds up to 4,950 durations, so lines are
 * read whole (up to TT_MAX_LINE bytes: the buffer never grows past it)
 * and split in place; every field is checked
 * before it is stored, a job's tasks are counted against the caps before
 * its durations are read, and the array of a line's durations grows as
 * they come (a line that claims a million tasks and has none costs
 * nothing).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/tasktrace.h"
#include "io/text.h"

void tt_free(tt_workload *w)
{
    if (!w)
        return;
    free(w->arrival);
    free(w->est);
    free(w->first);
    free(w->dur);
    memset(w, 0, sizeof *w);
}

int tt_push(tt_workload *w, double arrival, double est, const double *dur,
            size_t ntasks)
{
    if (w->njobs >= TT_MAX_JOBS || ntasks > TT_MAX_TASKS - w->ntasks)
        return -1;
    if (w->njobs + 2 > w->jcap) {
        size_t c = grow_cap(w->jcap, w->njobs + 2, 256);
        if (!c || GROW_ARRAY(w->arrival, c) || GROW_ARRAY(w->est, c) ||
            GROW_ARRAY(w->first, c))
            return -1;
        w->jcap = c;
    }
    if (w->ntasks + ntasks > w->tcap) {
        size_t c = grow_cap(w->tcap, w->ntasks + ntasks, 4096);
        if (!c || GROW_ARRAY(w->dur, c))
            return -1;
        w->tcap = c;
    }
    w->arrival[w->njobs] = arrival;
    w->est[w->njobs] = est;
    w->first[w->njobs] = w->ntasks;
    if (ntasks)
        memcpy(w->dur + w->ntasks, dur, ntasks * sizeof *dur);
    w->ntasks += ntasks;
    w->njobs++;
    w->first[w->njobs] = w->ntasks;
    return 0;
}

/* The next whitespace-separated field of *p, NUL-terminated in place;
 * NULL at the end of the line. */
static char *next_field(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n')
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

/* A number from 0 to TT_MAX_SECONDS (whole if `whole`), or -1. */
static int read_num(const char *text, int whole, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !(v >= 0) || v > max ||
        (whole && v != floor(v)))
        return -1;
    *out = v;
    return 0;
}

int tt_read_stream(FILE *f, const char *name, tt_workload *out, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *line = NULL;
    size_t cap = 0;
    double *dur = NULL;
    size_t dcap = 0;
    size_t lineno = 0;
    double prev = -1;
    ssize_t got;
    while ((got = text_read_line(f, &line, &cap, TT_MAX_LINE)) != -1) {
        lineno++;
        if (got == -3)
            goto oom;
        if (got == -2) {
            util_errf(err, errlen, "%s line %zu: longer than %d bytes (a "
                      "job of %d tasks fits in far less)", name, lineno,
                      TT_MAX_LINE, TT_MAX_JOB_TASKS);
            goto err;
        }
        if ((size_t)got != strlen(line)) {
            util_errf(err, errlen, "%s line %zu: a NUL byte in the line",
                      name, lineno);
            goto err;
        }
        char *p = line;
        char *fld = next_field(&p);
        if (!fld || fld[0] == '#')
            continue;
        double sub, n, mean;
        if (read_num(fld, 0, TT_MAX_SECONDS, &sub)) {
            util_errf(err, errlen, "%s line %zu: field 1 (submission_time) "
                      "must be a number from 0 to %g, got '%s'", name,
                      lineno, TT_MAX_SECONDS, fld);
            goto err;
        }
        if (sub < prev) {
            util_errf(err, errlen, "%s line %zu: submission_time %g is "
                      "before the previous job's %g (the lines must be in "
                      "order of submission)", name, lineno, sub, prev);
            goto err;
        }
        prev = sub;
        fld = next_field(&p);
        if (!fld || read_num(fld, 1, TT_MAX_JOB_TASKS, &n) || n < 1) {
            util_errf(err, errlen, "%s line %zu: field 2 (number_of_tasks) "
                      "must be a whole number from 1 to %d, got '%s'", name,
                      lineno, TT_MAX_JOB_TASKS, fld ? fld : "");
            goto err;
        }
        fld = next_field(&p);
        if (!fld || read_num(fld, 0, TT_MAX_SECONDS, &mean)) {
            util_errf(err, errlen, "%s line %zu: field 3 "
                      "(mean_task_duration) must be a number from 0 to %g, "
                      "got '%s'", name, lineno, TT_MAX_SECONDS,
                      fld ? fld : "");
            goto err;
        }
        size_t nt = (size_t)n;
        if (nt > TT_MAX_TASKS - out->ntasks) {
            util_errf(err, errlen, "%s line %zu: more than %d tasks in the "
                      "trace", name, lineno, TT_MAX_TASKS);
            goto err;
        }
        for (size_t i = 0; i < nt; i++) {
            /* grown as durations come, not to what field 2 claims */
            if (i == dcap) {
                size_t c = grow_cap(dcap, i + 1, 64);
                if (!c || GROW_ARRAY(dur, c))
                    goto oom;
                dcap = c;
            }
            fld = next_field(&p);
            if (!fld) {
                util_errf(err, errlen, "%s line %zu: number_of_tasks is "
                          "%zu but the line has %zu durations", name,
                          lineno, nt, i);
                goto err;
            }
            if (read_num(fld, 0, TT_MAX_SECONDS, &dur[i])) {
                util_errf(err, errlen, "%s line %zu: field %zu (task %zu's "
                          "duration) must be a number from 0 to %g, got "
                          "'%s'", name, lineno, i + 4, i + 1,
                          TT_MAX_SECONDS, fld);
                goto err;
            }
        }
        if ((fld = next_field(&p))) {
            util_errf(err, errlen, "%s line %zu: number_of_tasks is %zu but "
                      "the line has more durations (field %zu: '%s')", name,
                      lineno, nt, nt + 4, fld);
            goto err;
        }
        if (out->njobs >= TT_MAX_JOBS) {
            util_errf(err, errlen, "%s line %zu: more than %d jobs in the "
                      "trace", name, lineno, TT_MAX_JOBS);
            goto err;
        }
        if (tt_push(out, sub, mean, dur, nt))
            goto oom;
    }
    if (ferror(f)) {
        util_errf(err, errlen, "%s: read error after line %zu: %s", name,
                  lineno, strerror(errno));
        goto err;
    }
    if (!out->njobs) {
        util_errf(err, errlen, "%s: no jobs in the trace", name);
        goto err;
    }
    free(line);
    free(dur);
    return 0;
oom:
    util_errf(err, errlen, "%s line %zu: out of memory", name, lineno);
err:
    free(line);
    free(dur);
    tt_free(out);
    return -1;
}

int tt_read(const char *path, tt_workload *out, char *err, size_t errlen)
{
    if (!strcmp(path, "-"))
        return tt_read_stream(stdin, "stdin", out, err, errlen);
    FILE *f = fopen(path, "r");
    if (!f) {
        memset(out, 0, sizeof *out);
        util_errf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = tt_read_stream(f, path, out, err, errlen);
    fclose(f);
    return rc;
}
