/*
 * jsonl.c — the JSON Lines loop shared by slaq's file readers (see jsonl.h).
 *
 * Each line is parsed without its line end, so that Jansson's column of an
 * error at the end of a truncated object is on the line itself rather than
 * on a next line that the file does not have.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/jsonl.h"

int jsonl_each_file(FILE *f, const char *name, jsonl_fn fn, void *ctx,
                    char *err, size_t errlen)
{
    char *line = NULL, msg[512];
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, count = 0;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        size_t lead = 0;
        while (lead < (size_t)len && (line[lead] == ' ' || line[lead] == '\t' ||
                                      line[lead] == '\r'))
            lead++;
        if (lead == (size_t)len)
            continue;
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len,
                               JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        if (!o) {
            snprintf(err, errlen, "%s:%d:%d: malformed JSON: %s", name,
                     lineno, je.column > 0 ? je.column : 1, je.text);
            goto fail;
        }
        if (!json_is_object(o)) {
            json_decref(o);
            snprintf(err, errlen, "%s:%d:%zu: expected a JSON object", name,
                     lineno, lead + 1);
            goto fail;
        }
        msg[0] = '\0';
        int rc = fn(o, lineno, ctx, msg, sizeof msg);
        json_decref(o);
        if (rc) {
            snprintf(err, errlen, "%s:%d: %s", name, lineno,
                     msg[0] ? msg : "invalid record");
            goto fail;
        }
        count++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
        goto fail;
    }
    free(line);
    return count;
fail:
    free(line);
    return -1;
}

int jsonl_each(const char *path, jsonl_fn fn, void *ctx, char *err,
               size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = jsonl_each_file(f, path, fn, ctx, err, errlen);
    fclose(f);
    return rc;
}

void *jsonl_push(void *arrayp, size_t n, size_t *cap, size_t size,
                 size_t first)
{
    char *v;
    assert(size > 0 && n <= *cap);
    if (n == *cap) {
        size_t nc = grow_cap(*cap, n + 1, first ? first : 1);
        if (!nc || grow_array(arrayp, nc, size))
            return NULL;
        *cap = nc;
    }
    memcpy(&v, arrayp, sizeof v);
    memset(v + n * size, 0, size);
    return v + n * size;
}
