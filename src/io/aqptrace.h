/*
 * aqptrace.h — reading recorded approximate-query runs (data/aqp/
 * traces.jsonl, JSON Lines, one query run per line; the format is in
 * docs/aqp.md, "Trace format").
 */
#ifndef SLAQ_IO_AQPTRACE_H
#define SLAQ_IO_AQPTRACE_H

#include <stddef.h>

typedef struct aqp_trace {
    char *name;
    char *query;       /* "q6", ...; "" when absent */
    size_t B, K;       /* mini-batches, result columns */
    double *truth;     /* K values (NAN: no value) */
    double *est;       /* B × K, row i−1 for mini-batch i (NAN: null) */
    double *cpu_s;     /* B CPU-seconds at one core */
    double *rows;      /* B rows processed */
    int line;
} aqp_trace;

typedef struct aqp_trace_set {
    aqp_trace *v;
    size_t n;
} aqp_trace_set;

/*
 * Loads every query run of the file. Blank lines are skipped; unknown
 * fields ignored. On error returns -1 with a message naming the file,
 * line and field (e.g. "t.jsonl:3: field \"estimates\": row 4 has 2
 * values, \"keys\" has 3"); *out is then empty.
 */
int aqp_traces_load(const char *path, aqp_trace_set *out, char *err,
                    size_t errlen);
void aqp_traces_free(aqp_trace_set *s);

#endif
