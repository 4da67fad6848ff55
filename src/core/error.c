/*
 * error.c — names for libslaq's error codes and its enumerations.
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

static const char *const policy_names[] = {
    [SLAQ_POLICY_FAIR] = "fair",
    [SLAQ_POLICY_SLAQ] = "slaq",
    [SLAQ_POLICY_MAXMIN] = "slaq-maxmin",
};

int slaq_predictor_parse(const char *name, slaq_predictor_kind *out)
{
    for (size_t i = 0; name && i < sizeof pred_names / sizeof *pred_names; i++)
        if (strcmp(name, pred_names[i]) == 0) {
            *out = (slaq_predictor_kind)i;
            return SLAQ_OK;
        }
    return SLAQ_EINVAL;
}

const char *slaq_predictor_name(slaq_predictor_kind kind)
{
    if ((unsigned)kind < sizeof pred_names / sizeof *pred_names)
        return pred_names[kind];
    return "?";
}

int slaq_convergence_parse(const char *name, slaq_convergence *out)
{
    if (!name)
        return SLAQ_EINVAL;
    if (!strcmp(name, "sublinear"))
        *out = SLAQ_CONV_SUBLINEAR;
    else if (!strcmp(name, "linear") || !strcmp(name, "superlinear"))
        *out = SLAQ_CONV_LINEAR;
    else if (!*name || !strcmp(name, "nonconvex") || !strcmp(name, "unknown"))
        *out = SLAQ_CONV_UNKNOWN;
    else
        return SLAQ_EINVAL;
    return SLAQ_OK;
}

int slaq_policy_parse(const char *name, slaq_policy_kind *out)
{
    for (size_t i = 0; name && i < sizeof policy_names / sizeof *policy_names;
         i++)
        if (strcmp(name, policy_names[i]) == 0) {
            *out = (slaq_policy_kind)i;
            return SLAQ_OK;
        }
    return SLAQ_EINVAL;
}

const char *slaq_policy_name(slaq_policy_kind kind)
{
    if ((unsigned)kind < sizeof policy_names / sizeof *policy_names)
        return policy_names[kind];
    return "?";
}
