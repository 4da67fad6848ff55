/*
 * config.c — reading slaqd's configuration file (see config.h).
 *
 * A small line format rather than a general one: "key = value", comments,
 * nothing nested. Every error names the file and line and says what was
 * expected, and a key the file sets twice is an error rather than a silent
 * override, because the first setting would otherwise be a trap for the
 * next reader of the file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config.h"

#define CONFIG_MAX_BYTES (1024 * 1024)
#define CONFIG_MAX_KEYS 128

/* Reads the whole file into a new NUL-terminated buffer. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "slaqd: --config %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    size_t n = buf ? fread(buf, 1, CONFIG_MAX_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf || bad || n > CONFIG_MAX_BYTES) {
        fprintf(stderr, "slaqd: --config %s: %s\n", path,
                !buf ? "out of memory" : bad ? "read error"
                                             : "larger than 1 MiB");
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    return buf;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

int config_read(const char *path, const struct option *opts,
                const int *refused, config_apply_fn apply, void *ctx,
                char **text)
{
    *text = slurp(path);
    if (!*text)
        return -1;
    int seen_line[CONFIG_MAX_KEYS] = {0};
    char *line = *text;
    for (int lineno = 1; line; lineno++) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        /* a comment: the whole line, or from a '#' after whitespace */
        for (char *h = line; (h = strchr(h, '#')); h++)
            if (h == line || isspace((unsigned char)h[-1])) {
                *h = 0;
                break;
            }
        char *s = trim(line);
        line = next;
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, "slaqd: %s:%d: expected 'key = value', got "
                            "'%s'\n", path, lineno, s);
            return -1;
        }
        *eq = 0;
        char *key = trim(s), *value = trim(eq + 1);
        int k = 0;
        while (opts[k].name && strcmp(opts[k].name, key))
            k++;
        int ok = opts[k].name != NULL && k < CONFIG_MAX_KEYS;
        for (const int *r = refused; ok && *r; r++)
            ok = opts[k].val != *r;
        if (!ok) {
            fprintf(stderr, "slaqd: %s:%d: unknown key '%s' (expected one "
                            "of:", path, lineno, key);
            for (int i = 0; opts[i].name; i++) {
                const int *r = refused;
                while (*r && *r != opts[i].val)
                    r++;
                if (!*r)
                    fprintf(stderr, " %s", opts[i].name);
            }
            fprintf(stderr, ")\n");
            return -1;
        }
        if (seen_line[k]) {
            fprintf(stderr, "slaqd: %s:%d: '%s' is already set on line %d\n",
                    path, lineno, key, seen_line[k]);
            return -1;
        }
        seen_line[k] = lineno;
        if (!*value) {
            fprintf(stderr, "slaqd: %s:%d: '%s' has no value\n", path,
                    lineno, key);
            return -1;
        }
        char where[4200];
        snprintf(where, sizeof where, "%s:%d: %s", path, lineno, key);
        if (apply(ctx, opts[k].val, value, where) < 0)
            return -1;
    }
    return 0;
}

void config_free(char *text)
{
    free(text);
}
