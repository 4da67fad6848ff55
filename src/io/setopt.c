/*
 * setopt.c — the settings table as options and --help (see setopt.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/rlmodel.h"
#include "io/setopt.h"

static int skipped(const char *name, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (!strcmp(*skip, name))
            return 1;
    return 0;
}

size_t setopt_options(struct option *out, const char *const *skip)
{
    size_t n = 0, rows = slaq_setting_count();
    for (size_t i = 0; i < rows && i < SETOPT_MAX; i++) {
        const slaq_setting *s = slaq_setting_at(i);
        if (skipped(s->name, skip))
            continue;
        out[n++] = (struct option){s->name, required_argument, NULL,
                                   SETOPT_BASE + (int)i};
    }
    return n;
}

size_t setopt_build(struct option *out, const struct option *own,
                    size_t nown, const char *const *skip)
{
    memcpy(out, own, nown * sizeof *own);
    size_t n = nown + setopt_options(out + nown, skip);
    out[n] = (struct option){0, 0, 0, 0};
    return n;
}

int setopt_code(const char *name)
{
    size_t rows = slaq_setting_count();
    for (size_t i = 0; i < rows && i < SETOPT_MAX; i++)
        if (!strcmp(slaq_setting_at(i)->name, name))
            return SETOPT_BASE + (int)i;
    return -1;
}

const slaq_setting *setopt_row(int code)
{
    if (code < SETOPT_BASE || code >= SETOPT_BASE + SETOPT_MAX)
        return NULL;
    return slaq_setting_at((size_t)(code - SETOPT_BASE));
}

int setopt_model(slaq_sched_config *cfg, const char *path,
                 struct slaq_rl_model *m, char *err, size_t errlen)
{
    if (!path) {
        path = rlm_default_path();
        if (access(path, F_OK) != 0) {
            if (!slaq_policy_needs_model(cfg->policy))
                return 0;
            snprintf(err, errlen, "policy %s needs MLF-RL's network, and "
                     "the default model %s does not exist",
                     slaq_policy_name(cfg->policy), path);
            return -1;
        }
    }
    if (rlm_read(path, m, err, errlen))
        return -1;
    cfg->rl = m;
    return 0;
}

int setopt_apply(slaq_sched_config *cfg, int code, const char *value,
                 char *err, size_t errlen)
{
    const slaq_setting *s = setopt_row(code);
    if (!s)
        return 1;
    return slaq_sched_config_set(cfg, s->name, value, err, errlen) ? -1 : 0;
}

/* Prints text word by word from column `col`, the first line's words
 * after `at` columns already used; lines end before column 79. */
static void wrap(FILE *f, const char *text, int col, int at)
{
    const int width = 79;
    int first = 1;
    while (*text) {
        while (*text == ' ')
            text++;
        int len = (int)strcspn(text, " ");
        if (!len)
            break;
        if (!first && at + 1 + len > width) {
            fprintf(f, "\n%*s", col, "");
            at = col;
            first = 1;
        }
        at += fprintf(f, "%s%.*s", first ? "" : " ", len, text);
        first = 0;
        text += len;
    }
    fputc('\n', f);
}

void setopt_help(FILE *f, int col, const slaq_sched_config *dflt,
                 const char *const *skip,
                 const char *(*dflt_text)(const char *name))
{
    size_t rows = slaq_setting_count();
    for (size_t i = 0; i < rows; i++) {
        const slaq_setting *s = slaq_setting_at(i);
        if (skipped(s->name, skip))
            continue;
        int at = fprintf(f, "  --%s %s", s->name, s->arg);
        if (at + 2 > col) {
            fprintf(f, "\n%*s", col, "");
        } else {
            fprintf(f, "%*s", col - at, "");
        }
        char want[160], val[64], text[1024];
        slaq_setting_expect(s, want, sizeof want);
        const char *given = dflt_text ? dflt_text(s->name) : NULL;
        if (given) {
            snprintf(val, sizeof val, "%s", given);
        } else {
            slaq_sched_config_get(dflt, s->name, val, sizeof val);
            if (s->unit && s->type != SLAQ_SETTING_ENUM) {
                size_t l = strlen(val);
                snprintf(val + l, sizeof val - l, " %s", s->unit);
            }
        }
        snprintf(text, sizeof text, "%s %s%s; default %s.", s->help,
                 s->type == SLAQ_SETTING_ENUM ? "One of " : "Takes ",
                 want, val);
        wrap(f, text, col, col);
    }
}
