/*
 * settings.c — the table of scheduler settings (include/slaq/settings.h).
 *
 * One row per user-settable field of slaq_sched_config. The row is the
 * whole of a setting: slaq_sched_config_init() takes its default from it,
 * slaq_sched_config_set() its parser, range and error message, and the
 * front ends their option, configuration key and --help paragraph. To add
 * a setting, add its field to slaq_sched_config and one row below.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slaq/settings.h"
#include "util.h"

/* The offset of member m, which must be of type T: a row whose type does
 * not match its field would not compile (a negative array size). */
#define AT(m, T)                                                             \
    (offsetof(slaq_sched_config, m) +                                        \
     0 * sizeof(char[sizeof(((slaq_sched_config *)0)->m) == sizeof(T) ? 1  \
                                                                      : -1]))

/* Enum fields are read and written as ints. */
typedef char enums_are_ints[sizeof(slaq_policy_kind) == sizeof(int) &&
                            sizeof(slaq_predictor_kind) == sizeof(int) &&
                            sizeof(slaq_scale_kind) == sizeof(int) &&
                            sizeof(slaq_placement) == sizeof(int) &&
                            sizeof(slaq_qorder) == sizeof(int) &&
                            sizeof(slaq_qload) == sizeof(int) ? 1 : -1];

static const char *policy_name(int v)
{
    return slaq_policy_name((slaq_policy_kind)v);
}

static const char *predictor_name(int v)
{
    return slaq_predictor_name((slaq_predictor_kind)v);
}

static const char *scale_name(int v)
{
    return slaq_scale_name((slaq_scale_kind)v);
}

static const char *placement_name(int v)
{
    return slaq_placement_name((slaq_placement)v);
}

static const char *qorder_name(int v)
{
    return slaq_qorder_name((slaq_qorder)v);
}

static const char *qload_name(int v)
{
    return slaq_qload_name((slaq_qload)v);
}

static int qbound_parse(const char *text, void *field)
{
    return slaq_queue_bound_parse(text, field);
}

static int qbound_format(const void *field, char *buf, size_t len)
{
    return slaq_queue_bound_format(field, buf, len);
}

static int starvation_parse(const char *text, void *field)
{
    return slaq_starvation_parse(text, field);
}

static int starvation_format(const void *field, char *buf, size_t len)
{
    return slaq_starvation_format(field, buf, len);
}

/* The oracle needs every job's true curve: only a simulator has it, and
 * it asks for it by name (slaq sim --policy oracle-greedy). */
static const int predictors[] = {SLAQ_PRED_AUTO, SLAQ_PRED_SLAQ_FIT,
                                 SLAQ_PRED_STRAWMAN};
static const int scales[] = {SLAQ_SCALE_SPAN, SLAQ_SCALE_MAX_DELTA};
static const int placements[] = {SLAQ_PLACE_LEAST_LOADED, SLAQ_PLACE_GAIN};
static const int qloads[] = {SLAQ_QLOAD_WAIT, SLAQ_QLOAD_LENGTH};
static const int switches[] = {1, 0};

static const char *switch_name(int v)
{
    return v ? "on" : "off";
}

#define VALUES(a, fn) .values = a, .nvalues = sizeof a / sizeof *a, \
                      .value_name = fn

static const slaq_setting settings[] = {
    {.name = "policy", .type = SLAQ_SETTING_ENUM,
     .offset = AT(policy, int), .count = slaq_policy_count,
     .value_name = policy_name, .dflt = SLAQ_POLICY_SLAQ, .arg = "NAME",
     .help = "How the cores are divided among the jobs: by weight alone, "
             "by what each job's predicted loss (or a query's progress) "
             "gains from them, or by the jobs' goals; `slaq policy --help` "
             "describes each policy. mlfs-rl and mlfs need MLF-RL's "
             "network: every front end reads the committed one "
             "(data/models/mlfs-rl.model); slaqd --rl-model and slaq sim "
             "--deadlines --model name another."},
    {.name = "predictor", .type = SLAQ_SETTING_ENUM,
     .offset = AT(predictor, int), VALUES(predictors, predictor_name),
     .dflt = SLAQ_PRED_AUTO, .arg = "K",
     .help = "The loss-curve predictor (docs/predictors.md): auto (the "
             "model chosen by held-out error), slaq-fit (the paper's "
             "weighted fit; a job that declared its convergence class is "
             "fitted with that class's family only) or strawman (the last "
             "step repeated)."},
    {.name = "cores", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(cores, double), .min = 0, .min_excluded = 1,
     .max = INFINITY, .dflt = 1, .arg = "N", .unit = "cores",
     .help = "Cores to divide among the jobs (may be fractional)."},
    {.name = "unit", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(unit, double), .min = 0, .min_excluded = 1,
     .max = INFINITY, .dflt = 1, .arg = "U", .unit = "cores",
     .help = "The allocation unit of slaq and slaq-maxmin: every job first "
             "gets min(U, cores / jobs), then U at a time goes to the job "
             "that gains most."},
    {.name = "epoch", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(epoch_s, double), .min = 0.01, .max = 3600, .dflt = 1,
     .arg = "SECONDS", .unit = "s",
     .help = "The scheduling epoch T: how often the cores are divided "
             "again (a hundredth of a second to an hour: shorter, the "
             "division costs more than it moves; longer, no job's share "
             "follows its reports)."},
    {.name = "normalise", .type = SLAQ_SETTING_ENUM,
     .offset = AT(normalise, int), VALUES(scales, scale_name),
     .dflt = SLAQ_SCALE_SPAN, .arg = "N",
     .help = "The unit of the loss reduction slaq maximises: a job's "
             "predicted total reduction (span) or its largest step so far "
             "(max-delta, the paper's)."},
    {.name = "startup-reports", .type = SLAQ_SETTING_UINT,
     .offset = AT(startup_reports, unsigned), .min = 0, .max = 1000,
     .dflt = SLAQ_DEFAULT_STARTUP_REPORTS, .arg = "K", .unit = "reports",
     .help = "A job that has reported fewer finished iterations than K is "
             "settling: it gets at least its fair share, whatever the "
             "predictions say; one that has not reported at all gets "
             "exactly its fair share."},
    {.name = "hysteresis", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(hysteresis, double), .min = 0, .max = 1000,
     .dflt = SLAQ_DEFAULT_HYSTERESIS, .arg = "H",
     .help = "The cores a job held in the previous epoch count (1 + H) "
             "times their predicted gain: allocations move only for a "
             "clear gain, not for every wobble of a forecast (0: none)."},
    {.name = "damping", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(damping, double), .min = 0, .max = 1, .max_excluded = 1,
     .dflt = SLAQ_DEFAULT_DAMPING, .arg = "D",
     .help = "With the same jobs as in the previous epoch, a job's new "
             "share is D x its old one + (1 - D) x the policy's: a forecast "
             "that jumps moves only part of the cores (0: none)."},
    {.name = "hold", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(hold, double), .min = 0, .max = 1,
     .dflt = SLAQ_DEFAULT_HOLD, .arg = "H",
     .help = "Under slaq and relaqs, a job whose forecast says less than "
             "H of its loss drop is left gets no minimum share while "
             "ceil(cores) other jobs keep the cores busy: a plateaued job "
             "runs only on cycles no other job wants, and fewer jobs share "
             "the cores (0: never)."},
    {.name = "starve-bound", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(starve_s, double), .min = 0, .max = 1e9, .dflt = SLAQ_DEFAULT_STARVE_S, .arg = "S",
     .unit = "s",
     .help = "Under a policy that divides by forecasts, a training job "
             "whose loss is still falling (short of 95% of its predicted "
             "drop) or has not moved yet, held at the minimum share below "
             "its fair share for S seconds, gets its fair share until it "
             "reports again: no improving job starves for longer than S "
             "(0: never lifted; docs/libslaq.md, \"The bound on "
             "starvation\")."},
    {.name = "share-half-life", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(share_half_life_s, double), .min = 0, .max = 1e9,
     .dflt = SLAQ_DEFAULT_SHARE_HALF_LIFE_S, .arg = "S", .unit = "s",
     .help = "With shares between users, the core-seconds each user and "
             "account held are remembered with a half-life of S seconds, "
             "and one that used more than its share lately weighs less "
             "among its siblings, by Slurm's fair-share factor 2^(-u/s) "
             "(0: the weights alone divide; docs/libslaq.md, \"Shares "
             "between users\")."},
    {.name = "share-lend-at", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(share_lend_at, double), .min = 0, .max = 1,
     .dflt = SLAQ_DEFAULT_SHARE_LEND_AT, .arg = "F",
     .help = "With shares between users, under a policy that divides by "
             "forecasts, a job whose predicted loss reduction has reached "
             "F asks at most its fair share of its node (among all jobs "
             "there) when the cores are divided between users, if another "
             "user's job there still improves: the rest of its user's part "
             "goes to the users whose jobs still improve (0: never; "
             "docs/libslaq.md, \"Shares between users\")."},
    {.name = "share-guarantee", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(share_guarantee, double), .min = 0, .max = 1,
     .dflt = SLAQ_DEFAULT_SHARE_GUARANTEE, .arg = "G",
     .help = "With shares between users and no caps on cores or jobs, "
             "each user's part of a node is G x its share + (1 - G) x "
             "what the policy would give its jobs without shares: a user "
             "is guaranteed G of its share, the rest goes where the "
             "policy gains most (1: strict shares; docs/libslaq.md, "
             "\"Shares between users\")."},
    {.name = "prior", .type = SLAQ_SETTING_ENUM,
     .offset = AT(prior, int), VALUES(switches, switch_name),
     .dflt = 1, .arg = "on|off",
     .help = "on: a training job whose loss has not moved yet is valued by "
             "how the recorded curves of its convergence class fall (`slaq "
             "prior`) and holds at least its fair share, for as many "
             "reports as such a curve takes to 90% of its drop; off: by its "
             "own flat forecast, which values its cores at nothing "
             "(docs/libslaq.md, \"Class priors\")."},
    {.name = "scaling", .type = SLAQ_SETTING_ENUM,
     .offset = AT(scaling, int), VALUES(switches, switch_name),
     .dflt = 1, .arg = "on|off",
     .help = "on: a job that reports its threads is given cores by how "
             "much faster they make it, from its own measurements (its "
             "scaling model, docs/libslaq.md); off: every job is taken to "
             "speed up in proportion to its cores, the paper's c*S/N."},
    {.name = "horizon", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(horizon_s, double), .min = 0, .max = 3600, .dflt = 0,
     .arg = "S", .unit = "s",
     .help = "Predict the gains over this many seconds, at least one epoch "
             "(0: one epoch, the paper's)."},
    {.name = "horizon-iters", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(horizon_iters, double), .min = 0, .max = 1000,
     .dflt = 0, .arg = "N", .unit = "iterations",
     .help = "Judge a job's gain over at least N of its own iterations (a "
             "query's: mini-batches) at its fair share, scaled back to one "
             "epoch: over a fraction of an iteration every forecast is a "
             "straight line (0: one epoch)."},
    {.name = "max-fits", .type = SLAQ_SETTING_SIZE,
     .offset = AT(max_fits, size_t), .min = 0, .max = 1e9,
     .dflt = SLAQ_DEFAULT_MAX_FITS, .arg = "N", .unit = "fits",
     .help = "Refits per epoch at most, the jobs that reported longest ago "
             "first; the others keep their forecast until the next epoch "
             "(0: no bound; docs/cluster.md, \"Scale\")."},
    {.name = "default-iter-cpu", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(default_iter_cpu_s, double), .min = 0,
     .min_excluded = 1, .max = INFINITY, .dflt = SLAQ_DEFAULT_ITER_CPU_S,
     .arg = "S", .unit = "CPU-seconds",
     .help = "The cost of one iteration of a job that has not reported "
             "CPU time yet, when neither the job nor the jobs that have "
             "reported tell better."},
    {.name = "placement", .type = SLAQ_SETTING_ENUM,
     .offset = AT(placement, int), VALUES(placements, placement_name),
     .dflt = SLAQ_PLACE_LEAST_LOADED, .arg = "P",
     .help = "Where a new job goes when there are several nodes: "
             "least-loaded (where its fair share is largest) or gain (where "
             "its predicted gain, less the gain it displaces, is largest; "
             "docs/cluster.md)."},
    {.name = "query-min-cores", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(query_min_cores, double), .min = 0, .max = 1e6,
     .dflt = 0, .arg = "M", .unit = "cores",
     .help = "Under relaqs, the cores an approximate query keeps once it "
             "has reported its first mini-batch (0: the allocator's "
             "minimum share; docs/relaqs.md)."},
    {.name = "query-window", .type = SLAQ_SETTING_SIZE,
     .offset = AT(query.window, size_t), .min = 0, .max = 1e9,
     .dflt = SLAQ_DEFAULT_QUERY_WINDOW,
     .arg = "N", .unit = "values",
     .help = "The recent progress values an approximate query's progress "
             "curve is fitted to (0: all of them)."},
    {.name = "queue-bound", .type = SLAQ_SETTING_SPEC,
     .offset = AT(queue_bound, slaq_queue_bound), .parse = qbound_parse,
     .format = qbound_format, .dflt_text = "auto", .arg = "B",
     .expect = "auto, a whole number of tasks or mwt:SECONDS",
     .help = "How many tasks may wait in a node's queue when every slot is "
             "busy: auto (the shortest queue that keeps the node's slots "
             "busy between heartbeats in a queue-util fraction of them, "
             "from the tasks' mean duration; Yaq's Eq. 3.2), a fixed "
             "length, or mwt:SECONDS (as many as keep the node's estimated "
             "queue wait under SECONDS; docs/queues.md)."},
    {.name = "queue-util", .type = SLAQ_SETTING_DOUBLE,
     .offset = AT(queue_util, double), .min = 0, .max = 1,
     .min_excluded = 1, .max_excluded = 1, .dflt = 0.95, .arg = "U",
     .help = "The utilisation a queue-bound of auto is sized for: the "
             "fraction of heartbeat intervals in which no slot may go "
             "idle for want of a queued task."},
    {.name = "queue-order", .type = SLAQ_SETTING_ENUM,
     .offset = AT(queue_order, int), .count = slaq_qorder_count,
     .value_name = qorder_name, .dflt = SLAQ_QORDER_FIFO, .arg = "O",
     .help = "The order in which queued work starts: fifo, srjf (the job "
             "with the least remaining work first), lrtf (the fewest "
             "remaining tasks), stf (the shortest task) or ejf (the "
             "earliest job; docs/queues.md)."},
    {.name = "starvation", .type = SLAQ_SETTING_SPEC,
     .offset = AT(starvation, slaq_starvation), .parse = starvation_parse,
     .format = starvation_format, .dflt_text = "10", .arg = "ST[,ST_R]",
     .expect = "off, ST or ST,ST_R (positive numbers or inf)",
     .help = "Under srjf, lrtf and stf, an item that has waited longer "
             "than ST seconds, or ST_R times its own estimated duration, "
             "has starved: it goes before every item that has not, the "
             "earliest job first."},
    {.name = "queue-load", .type = SLAQ_SETTING_ENUM,
     .offset = AT(queue_load, int), VALUES(qloads, qload_name),
     .dflt = SLAQ_QLOAD_WAIT, .arg = "L",
     .help = "When no node has a free slot, a task queues at the node "
             "with the shortest estimated queue wait (wait) or the fewest "
             "queued tasks (length)."},
};

#define NSETTINGS (sizeof settings / sizeof *settings)

size_t slaq_setting_count(void)
{
    return NSETTINGS;
}

const slaq_setting *slaq_setting_at(size_t i)
{
    return i < NSETTINGS ? &settings[i] : NULL;
}

const slaq_setting *slaq_setting_find(const char *name)
{
    for (size_t i = 0; name && i < NSETTINGS; i++)
        if (!strcmp(settings[i].name, name))
            return &settings[i];
    return NULL;
}

size_t slaq_setting_nvalues(const slaq_setting *s)
{
    return s->count ? s->count() : s->nvalues;
}

int slaq_setting_value(const slaq_setting *s, size_t i)
{
    return s->values ? s->values[i] : (int)i;
}

int slaq_setting_expect(const slaq_setting *s, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    if (s->type == SLAQ_SETTING_SPEC)
        return snprintf(buf, len, "%s", s->expect);
    if (s->type == SLAQ_SETTING_ENUM) {
        size_t n = 0;
        size_t nv = slaq_setting_nvalues(s);
        for (size_t i = 0; i < nv; i++) {
            const char *sep = i == 0 ? "" : i + 1 < nv ? ", " : " or ";
            n += (size_t)snprintf(n < len ? buf + n : NULL,
                                  n < len ? len - n : 0, "%s%s", sep,
                                  s->value_name(slaq_setting_value(s, i)));
        }
        return (int)n;
    }
    const char *what = s->type == SLAQ_SETTING_DOUBLE ? "number"
                                                      : "whole number";
    char lo[32], hi[32];
    util_fmt_double(lo, sizeof lo, s->min);
    util_fmt_double(hi, sizeof hi, s->max);
    if (isinf(s->max)) {
        if (s->min == 0 && s->min_excluded)
            return snprintf(buf, len, "a positive %s", what);
        return snprintf(buf, len, "a %s %s %s", what,
                        s->min_excluded ? ">" : ">=", lo);
    }
    char note[48] = "";
    if (s->min_excluded && s->max_excluded)
        snprintf(note, sizeof note, " (both excluded)");
    else if (s->min_excluded || s->max_excluded)
        snprintf(note, sizeof note, " (%s excluded)",
                 s->min_excluded ? lo : hi);
    return snprintf(buf, len, "a %s from %s to %s%s", what, lo, hi, note);
}

/* Parses text into *out for row s; 0 or -1. */
static int parse_value(const slaq_setting *s, const char *text, double *out)
{
    if (s->type == SLAQ_SETTING_ENUM) {
        for (size_t i = 0; i < slaq_setting_nvalues(s); i++)
            if (!strcmp(text, s->value_name(slaq_setting_value(s, i)))) {
                *out = slaq_setting_value(s, i);
                return 0;
            }
        return -1;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || !(v >= s->min) ||
        (s->min_excluded && v == s->min) || v > s->max ||
        (s->max_excluded && v == s->max) ||
        (s->type != SLAQ_SETTING_DOUBLE && v != floor(v)))
        return -1;
    *out = v;
    return 0;
}

/* Stores v into row s's field of cfg. */
static void store(slaq_sched_config *cfg, const slaq_setting *s, double v)
{
    char *p = (char *)cfg + s->offset;
    if (s->type == SLAQ_SETTING_DOUBLE) {
        memcpy(p, &v, sizeof v);
    } else if (s->type == SLAQ_SETTING_UINT) {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof u);
    } else if (s->type == SLAQ_SETTING_SIZE) {
        size_t z = (size_t)v;
        memcpy(p, &z, sizeof z);
    } else {
        int e = (int)v;
        memcpy(p, &e, sizeof e);
    }
}

int slaq_sched_config_set(slaq_sched_config *cfg, const char *name,
                          const char *value, char *err, size_t errlen)
{
    char dummy[1];
    if (!err) {
        err = dummy;
        errlen = sizeof dummy;
    }
    const slaq_setting *s = slaq_setting_find(name);
    if (!s) {
        snprintf(err, errlen, "%s: no such setting", name ? name : "(null)");
        return SLAQ_EINVAL;
    }
    double v;
    if (s->type == SLAQ_SETTING_SPEC) {
        if (value && s->parse(value, (char *)cfg + s->offset) == SLAQ_OK)
            return SLAQ_OK;
    } else if (value && parse_value(s, value, &v) == 0) {
        store(cfg, s, v);
        return SLAQ_OK;
    }
    char want[160];
    slaq_setting_expect(s, want, sizeof want);
    if (s->type == SLAQ_SETTING_ENUM)
        snprintf(err, errlen, "%s: unknown %s '%s' (expected %s)", s->name,
                 s->name, value ? value : "", want);
    else
        snprintf(err, errlen, "%s: expected %s, got '%s'", s->name, want,
                 value ? value : "");
    return SLAQ_EINVAL;
}

int slaq_sched_config_get(const slaq_sched_config *cfg, const char *name,
                          char *buf, size_t len)
{
    const slaq_setting *s = slaq_setting_find(name);
    if (len)
        buf[0] = '\0';
    if (!s)
        return SLAQ_EINVAL;
    const char *p = (const char *)cfg + s->offset;
    if (s->type == SLAQ_SETTING_SPEC)
        return s->format(p, buf, len);
    if (s->type == SLAQ_SETTING_DOUBLE) {
        double v;
        memcpy(&v, p, sizeof v);
        return util_fmt_double(buf, len, v);
    }
    if (s->type == SLAQ_SETTING_UINT) {
        unsigned u;
        memcpy(&u, p, sizeof u);
        return snprintf(buf, len, "%u", u);
    }
    if (s->type == SLAQ_SETTING_SIZE) {
        size_t z;
        memcpy(&z, p, sizeof z);
        return snprintf(buf, len, "%zu", z);
    }
    int e;
    memcpy(&e, p, sizeof e);
    return snprintf(buf, len, "%s", s->value_name(e));
}

void slaq_sched_config_init(slaq_sched_config *c)
{
    /* What no user sets directly: the drivers' own, and the defaults
     * of the predictor's and the queries' options. */
    c->reserved = 0;
    c->nonml_jobs = 0;
    c->window = SLAQ_DEFAULT_WINDOW;
    slaq_predictor_opts_init(&c->pred);
    slaq_query_opts_init(&c->query);
    c->nodes = 1;
    c->queue = 0;
    c->rl = NULL;
    /* Everything else: the table's defaults. */
    for (size_t i = 0; i < NSETTINGS; i++) {
        if (settings[i].type == SLAQ_SETTING_SPEC) {
            int ok = settings[i].parse(settings[i].dflt_text,
                                       (char *)c + settings[i].offset);
            assert(ok == SLAQ_OK);
            (void)ok;
        } else {
            store(c, &settings[i], settings[i].dflt);
        }
    }
}
