/*
 * jsonl.c — the JSON Lines loop shared by slaq's file readers (see jsonl.h).
 *
 * Each line is parsed without its line end, so that Jansson's column of an
 * error at the end of a truncated object is on the line itself rather than
 * on a next line that the file does not have.
 *
 * The files may come from anyone, so what a line may cost is bounded
 * twice: text_read_line holds at most JSONL_MAX_LINE bytes of it, and a
 * count of the values it would make (jsonl_scan) is checked against
 * JSONL_MAX_VALUES before Jansson builds any of them. Jansson's tree of a
 * line is some 40 bytes a value, so without the count a 40 MB line of
 * "0," would have grown to about a gigabyte before a reader's own cap on
 * an array was ever checked.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/jsonl.h"
#include "io/text.h"

/* What ends a number or a literal (true, false, null) in JSON. */
#define SCAN_DELIMS " \t\r\n,:[]{}\""

/*
 * Counts the JSON values the line s (len bytes) would make, each string,
 * number, literal, array and object once (object keys included: Jansson
 * copies each), and checks the count against max before anything is
 * parsed. The count follows the tokens only; whether they make valid JSON
 * is Jansson's to say after. Returns 0, or -1 with msg: when one field of
 * the line's object holds most of the values, its name and how many
 * values it holds (the elements, for an array); else where the count went
 * over.
 */
static int jsonl_scan(const char *s, size_t len, size_t max, char *msg,
                      size_t msglen)
{
    size_t depth = 0, total = 0, in_field = 0, elems = 0, keylen = 0;
    const char *key = NULL;
    int top_object = 0, expect_key = 0, over = 0, field_array = 0;
    for (size_t i = 0; i < len; i++) {
        size_t at = depth; /* the depth the value starts at */
        int is_key = 0;
        char c = s[i];
        switch (c) {
        case ' ': case '\t': case '\r': case '\n': case ':':
            continue;
        case ',':
            if (depth == 1 && top_object) {
                if (over)
                    goto out;
                expect_key = 1;
            }
            continue;
        case ']': case '}':
            if (depth > 0 && --depth == 0 && over)
                goto out;
            continue;
        case '[': case '{':
            if (depth == 0 && total == 0) {
                top_object = c == '{';
                expect_key = top_object;
            }
            depth++;
            break;
        case '"': {
            size_t start = ++i;
            while (i < len && s[i] != '"')
                i += s[i] == '\\' ? 2 : 1;
            if (i > len) /* a backslash ended the line */
                i = len;
            if (depth == 1 && top_object && expect_key && !over) {
                key = s + start;
                keylen = i - start;
                expect_key = 0;
                in_field = elems = 0;
                field_array = 0;
                is_key = 1;
            }
            break;
        }
        default: /* a number or literal: up to the next delimiter */
            while (i + 1 < len && !memchr(SCAN_DELIMS, s[i + 1],
                                         sizeof SCAN_DELIMS - 1))
                i++;
            break;
        }
        if (!is_key && key && at >= 1) {
            in_field++;
            if (at == 1)
                field_array = c == '[';
            elems += field_array && at == 2;
        }
        if (over)
            continue;
        if (++total > max) {
            if (!key || depth == 0 || (depth == 1 && is_key))
                goto out;
            over = 1;
        }
    }
out:
    if (total <= max)
        return 0;
    char name[64], shown[256] = "";
    if (key) {
        size_t n = keylen < sizeof name - 1 ? keylen : sizeof name - 1;
        memcpy(name, key, n);
        name[n] = '\0';
        text_escape(shown, sizeof shown, name);
    }
    if (over && field_array && in_field > max / 2)
        util_errf(msg, msglen, "field '%s': an array of %zu values; a line "
                  "may hold at most %zu JSON values in all", shown, elems,
                  max);
    else if (over && in_field > max / 2)
        util_errf(msg, msglen, "field '%s': %zu JSON values; a line may hold "
                  "at most %zu in all", shown, in_field, max);
    else if (key)
        util_errf(msg, msglen, "more than the %zu JSON values a line may "
                  "hold (the last in field '%s')", max, shown);
    else
        util_errf(msg, msglen, "more than the %zu JSON values a line may "
                  "hold", max);
    return -1;
}

int jsonl_each_file(FILE *f, const char *name, jsonl_fn fn, void *ctx,
                    char *err, size_t errlen)
{
    char *line = NULL, msg[512];
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, count = 0;
    while ((len = text_read_line(f, &line, &cap, JSONL_MAX_LINE)) != -1) {
        lineno++;
        if (len == -3) {
            snprintf(err, errlen, "%s:%d: out of memory", name, lineno);
            goto err;
        }
        if (len == -2) {
            snprintf(err, errlen, "%s:%d: the line is longer than %d bytes, "
                     "the cap of a line", name, lineno, JSONL_MAX_LINE);
            goto err;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        size_t lead = 0;
        while (lead < (size_t)len && (line[lead] == ' ' || line[lead] == '\t' ||
                                      line[lead] == '\r'))
            lead++;
        if (lead == (size_t)len)
            continue;
        if (jsonl_scan(line, (size_t)len, JSONL_MAX_VALUES, msg, sizeof msg)) {
            snprintf(err, errlen, "%s:%d: %s", name, lineno, msg);
            goto err;
        }
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)len,
                               JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        if (!o) {
            snprintf(err, errlen, "%s:%d:%d: malformed JSON: %s", name,
                     lineno, je.column > 0 ? je.column : 1, je.text);
            goto err;
        }
        if (!json_is_object(o)) {
            json_decref(o);
            snprintf(err, errlen, "%s:%d:%zu: expected a JSON object", name,
                     lineno, lead + 1);
            goto err;
        }
        msg[0] = '\0';
        int rc = fn(o, lineno, ctx, msg, sizeof msg);
        json_decref(o);
        if (rc) {
            snprintf(err, errlen, "%s:%d: %s", name, lineno,
                     msg[0] ? msg : "invalid record");
            goto err;
        }
        count++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
        goto err;
    }
    free(line);
    return count;
err:
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
