/*
 * error.c — names for libslaq's error codes and its enumerations (the
 * share policies' are their table's, policy.c).
 */
#include <string.h>

#include "slaq/slaq.h"

const char *slaq_strerror(int err)
{
    switch (err) {
    case SLAQ_OK: return "success";
    case SLAQ_EINVAL: return "invalid argument";
    case SLAQ_ENOMEM: return "out of memory";
    case SLAQ_EORDER: return "iteration index not after the previous report";
    case SLAQ_ENODATA: return "not enough history";
    }
    return "unknown error";
}

static const char *const pred_names[] = {
    [SLAQ_PRED_STRAWMAN] = "strawman",
    [SLAQ_PRED_SLAQ_FIT] = "slaq-fit",
    [SLAQ_PRED_AUTO] = "auto",
    [SLAQ_PRED_ORACLE] = "oracle",
};

static const char *const job_kind_names[] = {
    [SLAQ_JOB_ML] = "ml",
    [SLAQ_JOB_QUERY] = "query",
    [SLAQ_JOB_EXACT] = "exact",
};

static const char *const scale_names[] = {
    [SLAQ_SCALE_SPAN] = "span",
    [SLAQ_SCALE_MAX_DELTA] = "max-delta",
};

static const char *const stop_names[] = {
    [SLAQ_STOP_ITERS] = "iters",
    [SLAQ_STOP_ACCURACY] = "accuracy",
    [SLAQ_STOP_OPTSTOP] = "optstop",
};

/* The index of `name` in a table of n names, or -1. */
static int name_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return (int)i;
    return -1;
}

#define NAME_PARSE(table, type, name, out)                                   \
    do {                                                                     \
        int i_ = name_index(table, sizeof table / sizeof *table, name);      \
        if (i_ < 0)                                                          \
            return SLAQ_EINVAL;                                              \
        *(out) = (type)i_;                                                   \
        return SLAQ_OK;                                                      \
    } while (0)

#define NAME_OF(table, kind)                                                 \
    ((unsigned)(kind) < sizeof table / sizeof *table ? table[kind] : "?")

int slaq_predictor_parse(const char *name, slaq_predictor_kind *out)
{
    NAME_PARSE(pred_names, slaq_predictor_kind, name, out);
}

const char *slaq_predictor_name(slaq_predictor_kind kind)
{
    return NAME_OF(pred_names, kind);
}

int slaq_convergence_parse(const char *name, slaq_convergence *out)
{
    if (!name)
        return SLAQ_EINVAL;
    if (!strcmp(name, "sublinear"))
        *out = SLAQ_CONV_SUBLINEAR;
    else if (!strcmp(name, "linear") || !strcmp(name, "superlinear"))
        *out = SLAQ_CONV_LINEAR;
    else if (!strcmp(name, "nonconvex"))
        *out = SLAQ_CONV_NONCONVEX;
    else if (!*name || !strcmp(name, "unknown"))
        *out = SLAQ_CONV_UNKNOWN;
    else
        return SLAQ_EINVAL;
    return SLAQ_OK;
}

const char *slaq_convergence_name(slaq_convergence c)
{
    return c == SLAQ_CONV_SUBLINEAR   ? "sublinear"
           : c == SLAQ_CONV_LINEAR    ? "linear"
           : c == SLAQ_CONV_NONCONVEX ? "nonconvex"
                                      : "unknown";
}

int slaq_stop_parse(const char *name, slaq_stop_rule *out)
{
    NAME_PARSE(stop_names, slaq_stop_rule, name, out);
}

const char *slaq_stop_name(slaq_stop_rule rule)
{
    return NAME_OF(stop_names, rule);
}

int slaq_scale_parse(const char *name, slaq_scale_kind *out)
{
    NAME_PARSE(scale_names, slaq_scale_kind, name, out);
}

const char *slaq_scale_name(slaq_scale_kind kind)
{
    return NAME_OF(scale_names, kind);
}

int slaq_job_kind_parse(const char *name, int *out)
{
    NAME_PARSE(job_kind_names, int, name, out);
}

const char *slaq_job_kind_name(int kind)
{
    return NAME_OF(job_kind_names, kind);
}
