/*
 * report_logs.c — `slaq report --logs`: a run read from the per-job logs
 * of bench/real/stamp.py instead of slaqd's state.db.
 *
 * The real-job benchmark runs the same jobs plainly, in a queue and under
 * slaqd; only the last has a state.db. Every job of every way writes its
 * output through stamp.py, so the logs are what all ways share, and
 * measuring all of them from the logs measures them alike. This file only
 * reads: each log becomes a job of an rpt_run (report_run.h), which
 * cmd_report.c measures with the code it measures state.db with.
 *
 * A log (docs/formats.md, "Job logs"), each line a time in seconds since
 * the epoch and then fields:
 *
 *   1700000000.000 arrival           optional: when the job arrived
 *   1700000000.250 start             when stamp.py started it
 *   1700000001.000 iter=0 loss=2.3   a report (any line with both fields)
 *   1700000001.500 any other output  ignored, as is a line starting '#'
 *   1700000009.000 exit=0 cpu_s=7.5  the closing line: the job's end
 *
 * The job arrives at its arrival line, else at its start. A log without
 * a closing line is of a job still running. Anything else is refused,
 * naming the file, the line and the field.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/report_run.h"

/* Where a log's reader is: the lines before the start, the job's output,
 * after the closing line. */
enum { BEFORE_START, RUNNING, CLOSED };

typedef struct log_reader {
    const char *path;
    size_t line;
    int phase;
    int arrived;        /* an arrival line was read */
    double arrival;
} log_reader;

/* Says "PATH:LINE: MSG" and returns -1. */
static int bad_line(const log_reader *lr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int bad_line(const log_reader *lr, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("report", "%s:%zu: %s", lr->path, lr->line, msg);
    return -1;
}

/* A whole token as a finite number into *v; 0 or -1. */
static int parse_number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*v) ? 0 : -1;
}

/* A whole token as an iteration (a whole number >= 0) into *v; 0 or -1. */
static int parse_iter(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long u = strtoull(s, &end, 10);
    *v = u;
    return !*end && !errno ? 0 : -1;
}

/* The value of field KEY= among the n tokens, or NULL. */
static const char *field(char **tok, size_t n, const char *key)
{
    size_t len = strlen(key);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(tok[i], key, len) && tok[i][len] == '=')
            return tok[i] + len + 1;
    return NULL;
}

/* The closing line's fields, exit= and cpu_s=: the job's end at t. */
static int closing_line(log_reader *lr, rpt_job *j, double t, char **tok,
                        size_t n)
{
    const char *ex = field(tok, n, "exit"), *cpu = field(tok, n, "cpu_s");
    char *end;
    errno = 0;
    long code = strtol(ex, &end, 10);
    if (!*ex || *end || errno)
        return bad_line(lr, "field exit: expected the job's exit status "
                        "(a whole number), got '%s'", ex);
    double cpu_s;
    if (!cpu)
        return bad_line(lr, "the closing line (exit=) has no field cpu_s: "
                        "expected 'TIME exit=STATUS cpu_s=SECONDS'");
    if (parse_number(cpu, &cpu_s) || cpu_s < 0)
        return bad_line(lr, "field cpu_s: expected the CPU-seconds the job "
                        "used (a number >= 0), got '%s'", cpu);
    j->ended = t;
    j->cpu_s = cpu_s;
    free(j->state);
    j->state = strdup(code == 0 ? "done" : "failed");
    lr->phase = CLOSED;
    return j->state ? 0 : -2;
}

/* A report's fields, iter= and loss=, at time t. */
static int report_line(log_reader *lr, rpt_job *j, double t,
                       const char *it, const char *loss)
{
    uint64_t iter;
    double l;
    if (parse_iter(it, &iter))
        return bad_line(lr, "field iter: expected an iteration (a whole "
                        "number >= 0), got '%s'", it);
    if (parse_number(loss, &l))
        return bad_line(lr, "field loss: expected a finite number, got "
                        "'%s'", loss);
    if (rpt_push_report(j, t, l, iter, 0))
        return -2;
    return 0;
}

/* The line before the job's output: its arrival (optional), its start. */
static int opening_line(log_reader *lr, rpt_job *j, double t, char **tok,
                        size_t n)
{
    if (n == 1 && !strcmp(tok[0], "arrival") && !lr->arrived) {
        lr->arrived = 1;
        lr->arrival = t;
        return 0;
    }
    if (n != 1 || strcmp(tok[0], "start"))
        return bad_line(lr, "expected '%sTIME start' before the job's "
                        "output: not a log of bench/real/stamp.py",
                        lr->arrived ? "" : "TIME arrival or ");
    if (lr->arrived && lr->arrival > t)
        return bad_line(lr, "field time: the job starts at %.3f, before "
                        "it arrives at %.3f (its arrival line)", t,
                        lr->arrival);
    j->submitted = lr->arrived ? lr->arrival : t;
    lr->phase = RUNNING;
    return 0;
}

/* One line of the log (its newline removed) into job j. 0, -1 (bad
 * input, said) or -2 (out of memory). */
static int read_line(log_reader *lr, rpt_job *j, char *line)
{
    /* A line's fields past the 64th are dropped: stamp.py's own lines
     * and the reports have a handful. */
    char *tok[64], *save = NULL;
    size_t n = 0;
    for (char *s = strtok_r(line, " \t\r", &save); s;
         s = strtok_r(NULL, " \t\r", &save))
        if (n < sizeof tok / sizeof *tok)
            tok[n++] = s;
    double t;
    if (!n)
        return bad_line(lr, "an empty line: every line of a stamp.py log "
                        "starts with the time it was written");
    if (parse_number(tok[0], &t) || t <= 0)
        return bad_line(lr, "field time: expected seconds since the epoch "
                        "(a number > 0), got '%s'", tok[0]);
    if (lr->phase == CLOSED)
        return bad_line(lr, "a line after the closing line (exit=): a log "
                        "holds one run of one job");
    if (lr->phase == BEFORE_START)
        return opening_line(lr, j, t, tok + 1, n - 1);
    if (t < j->submitted)
        return bad_line(lr, "field time: %.3f is before the job's arrival "
                        "at %.3f", t, j->submitted);
    if (n == 1 || tok[1][0] == '#') /* empty output, a comment */
        return 0;
    if (!strncmp(tok[1], "exit=", 5))
        return closing_line(lr, j, t, tok + 1, n - 1);
    const char *it = field(tok + 1, n - 1, "iter");
    const char *loss = field(tok + 1, n - 1, "loss");
    return it && loss ? report_line(lr, j, t, it, loss) : 0;
}

/* The job's name: the file's name without its directory and ".log". */
static char *job_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".log"))
        len -= 4;
    return strndup(base, len);
}

static int read_log(rpt_run *run, const char *path, int64_t id)
{
    char *name = job_name(path);
    rpt_job *j = name ? rpt_push_job(run, id, name, "-", "running") : NULL;
    free(name);
    if (!j) {
        cli_error("report", "out of memory");
        return -2;
    }
    j->log = path;
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("report", "%s: %s; expected a job log of "
                  "bench/real/stamp.py", path, strerror(errno));
        return -1;
    }
    log_reader lr = {path, 0, BEFORE_START, 0, 0};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        lr.line++;
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        rc = read_line(&lr, j, line);
    }
    if (!rc && ferror(f)) {
        cli_error("report", "%s: reading line %zu: %s", path, lr.line + 1,
                  strerror(errno));
        rc = -2;
    } else if (rc == -2)
        cli_error("report", "out of memory");
    else if (!rc && lr.phase == BEFORE_START) {
        cli_error("report", "%s: %s; expected a line 'TIME start' (after "
                  "an optional 'TIME arrival'): not a job log of "
                  "bench/real/stamp.py", path,
                  lr.line ? "no start line" : "an empty file");
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

int rpt_read_logs(rpt_run *run, char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = read_log(run, paths[i], (int64_t)i + 1);
        if (rc)
            return rc;
    }
    return 0;
}
