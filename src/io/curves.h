/*
 * curves.h — reading slaq's curve files (JSON Lines, one recorded training
 * run per line; the format is in docs/formats.md).
 */
#ifndef SLAQ_IO_CURVES_H
#define SLAQ_IO_CURVES_H

#include <stddef.h>

typedef struct curve {
    char *name;
    char *algorithm;   /* "unknown" when absent */
    char *convergence; /* NULL when absent */
    double *loss;      /* loss[0]: before the first iteration */
    size_t n;          /* >= 2 */
    double *iter_cpu_s;/* NULL, or n - 1 values */
    double data_size;  /* 0 when absent */
    int line;          /* line in the file it came from */
} curve;

typedef struct curve_set {
    curve *v;
    size_t n;
} curve_set;

/*
 * Loads every curve of the file at `path` into *out (which the caller frees
 * with curves_free). Blank lines are skipped; unknown fields are ignored.
 * On error returns -1, frees what was read and writes a message naming the
 * file, line and field to err (e.g. "c.jsonl:12: field \"loss\": element 3
 * is not a number"); *out is then empty.
 */
int curves_load(const char *path, curve_set *out, char *err, size_t errlen);
void curves_free(curve_set *s);

/*
 * Parses one JSON number array field of object `obj` (Jansson json_t *).
 * Helpers for the other JSON Lines readers: returns 0 and a malloc'd array
 * of *n values, or -1 with a message "field \"NAME\": ..." in err. Values
 * must be finite numbers; `min_len` is the least count accepted.
 */
int json_number_array(const void *obj, const char *name, size_t min_len,
                      double **out, size_t *n, char *err, size_t errlen);

#endif
