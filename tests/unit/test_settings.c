/*
 * test_settings.c — the table of scheduler settings (slaq/settings.h):
 * slaq_sched_config_init gives every row's default, set and get round-trip
 * every row, a value out of range or malformed is refused with a message
 * that names the setting, what was given and what is expected, and the
 * config is untouched then; every row has help; the front ends' option
 * codes (src/io/setopt.c) map back to the rows.
 */
#include <math.h>
#include <string.h>

#include "io/setopt.h"
#include "slaq/settings.h"
#include "testutil.h"

/* The row's field of cfg, as a double (enums: the value). */
static double field(const slaq_sched_config *cfg, const slaq_setting *s)
{
    const char *p = (const char *)cfg + s->offset;
    double d;
    unsigned u;
    size_t z;
    int e;
    switch (s->type) {
    case SLAQ_SETTING_DOUBLE: memcpy(&d, p, sizeof d); return d;
    case SLAQ_SETTING_UINT: memcpy(&u, p, sizeof u); return u;
    case SLAQ_SETTING_SIZE: memcpy(&z, p, sizeof z); return (double)z;
    case SLAQ_SETTING_ENUM: memcpy(&e, p, sizeof e); return e;
    case SLAQ_SETTING_SPEC: break;
    }
    fail_msg("row %s has no number", s->name);
    return NAN;
}

/* A spec row's value other than its default, as text. */
static const char *spec_sample(const slaq_setting *s)
{
    static const char *const samples[][2] = {
        {"queue-bound", "mwt:2.5"},
        {"starvation", "1.5,3"},
    };
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++)
        if (!strcmp(samples[i][0], s->name))
            return samples[i][1];
    fail_msg("spec row %s has no sample in test_settings.c", s->name);
    return NULL;
}

static void test_init_gives_every_rows_default(void **state)
{
    (void)state;
    slaq_sched_config c;
    memset(&c, 0xa5, sizeof c); /* init must not rely on zeroed memory */
    slaq_sched_config_init(&c);
    assert_true(slaq_setting_count() >= 16);
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const slaq_setting *s = slaq_setting_at(i);
        if (s->type == SLAQ_SETTING_SPEC) {
            char got[64];
            slaq_sched_config_get(&c, s->name, got, sizeof got);
            assert_string_equal(got, s->dflt_text);
            continue;
        }
        if (field(&c, s) != s->dflt)
            fail_msg("%s: init gives %.17g, the table %.17g", s->name,
                     field(&c, s), s->dflt);
    }
    assert_null(slaq_setting_at(slaq_setting_count()));
    /* The defaults slaq.h documents, field by field. */
    assert_int_equal(c.policy, SLAQ_POLICY_SLAQ);
    assert_int_equal(c.predictor, SLAQ_PRED_AUTO);
    assert_true(c.cores == 1 && c.unit == 1 && c.epoch_s == 1);
    assert_true(c.reserved == 0 && c.nonml_jobs == 0);
    assert_int_equal(c.window, SLAQ_DEFAULT_WINDOW);
    assert_true(c.default_iter_cpu_s == SLAQ_DEFAULT_ITER_CPU_S);
    assert_true(c.pred.lambda == 0.8);
    assert_int_equal(c.normalise, SLAQ_SCALE_SPAN);
    assert_int_equal(c.startup_reports, SLAQ_DEFAULT_STARTUP_REPORTS);
    assert_true(c.horizon_s == 0 && c.horizon_iters == 0);
    assert_true(c.damping == SLAQ_DEFAULT_DAMPING);
    assert_true(c.hysteresis == SLAQ_DEFAULT_HYSTERESIS);
    assert_int_equal(c.query.window, 12);
    assert_int_equal(c.query.min_points, 3);
    assert_true(c.query_min_cores == 0);
    assert_int_equal(c.nodes, 1);
    assert_int_equal(c.placement, SLAQ_PLACE_LEAST_LOADED);
    assert_int_equal(c.queue, 0);
    assert_int_equal(c.max_fits, SLAQ_DEFAULT_MAX_FITS);
    assert_int_equal(c.queue_bound.kind, SLAQ_QBOUND_AUTO);
    assert_true(c.queue_util == 0.95);
    assert_int_equal(c.queue_order, SLAQ_QORDER_FIFO);
    assert_true(c.starvation.st == 10 && isinf(c.starvation.st_r));
    assert_int_equal(c.queue_load, SLAQ_QLOAD_WAIT);
    slaq_sched *s = slaq_sched_new(&c);
    assert_non_null(s);
    slaq_sched_free(s);
}

static void test_every_row_is_described(void **state)
{
    (void)state;
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const slaq_setting *s = slaq_setting_at(i);
        assert_non_null(s->name);
        assert_true(s->help && strlen(s->help) > 20);
        assert_int_equal(s->help[strlen(s->help) - 1], '.');
        assert_true(s->arg && *s->arg);
        assert_true(s->offset + sizeof(int) <= sizeof(slaq_sched_config));
        assert_ptr_equal(slaq_setting_find(s->name), s);
        for (size_t k = 0; k < i; k++) {
            assert_string_not_equal(slaq_setting_at(k)->name, s->name);
            assert_true(slaq_setting_at(k)->offset != s->offset);
        }
        if (s->type == SLAQ_SETTING_ENUM) {
            assert_true(slaq_setting_nvalues(s) >= 2 && s->value_name);
        } else if (s->type == SLAQ_SETTING_SPEC) {
            assert_true(s->parse && s->format && s->dflt_text && s->expect);
        } else {
            assert_true(s->min <= s->dflt && s->dflt <= s->max);
            assert_false(s->min_excluded && s->dflt == s->min);
        }
    }
    assert_null(slaq_setting_find("speed"));
    assert_null(slaq_setting_find(NULL));
}

/* A value inside row s's range, as text. */
static void inside(const slaq_setting *s, char *buf, size_t len)
{
    if (s->type == SLAQ_SETTING_SPEC) {
        snprintf(buf, len, "%s", spec_sample(s));
        return;
    }
    if (s->type == SLAQ_SETTING_ENUM) {
        snprintf(buf, len, "%s", s->value_name(slaq_setting_value(
                                     s, slaq_setting_nvalues(s) - 1)));
        return;
    }
    double v = isinf(s->max) ? s->min + 2.5 : (s->min + s->max) / 2 + 0.1;
    if (s->type != SLAQ_SETTING_DOUBLE)
        v = floor(v);
    snprintf(buf, len, "%.17g", v);
}

static void test_set_and_get_round_trip(void **state)
{
    (void)state;
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const slaq_setting *s = slaq_setting_at(i);
        slaq_sched_config c, d;
        slaq_sched_config_init(&c);
        char text[64], got[64], err[256];
        /* the default's text gives the default back */
        assert_true(slaq_sched_config_get(&c, s->name, got, sizeof got) > 0);
        d = c;
        assert_int_equal(slaq_sched_config_set(&d, s->name, got, err,
                                               sizeof err), SLAQ_OK);
        assert_memory_equal(&c, &d, sizeof c);
        /* another value: set, get, set again, the same field */
        inside(s, text, sizeof text);
        if (slaq_sched_config_set(&c, s->name, text, err, sizeof err))
            fail_msg("%s = %s refused: %s", s->name, text, err);
        if (s->type == SLAQ_SETTING_SPEC) {
            assert_memory_not_equal(&c, &d, sizeof c);
            slaq_sched_config_get(&c, s->name, got, sizeof got);
            assert_string_equal(got, text);
            continue;
        }
        double v = field(&c, s);
        assert_true(v != s->dflt);
        slaq_sched_config_get(&c, s->name, got, sizeof got);
        d = c;
        assert_int_equal(slaq_sched_config_set(&d, s->name, got, NULL, 0),
                         SLAQ_OK);
        assert_memory_equal(&c, &d, sizeof c);
        if (s->type != SLAQ_SETTING_ENUM)
            assert_true(strtod(got, NULL) == v);
        else
            assert_string_equal(got, text);
    }
    /* the shortest text that reads back exactly */
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    char got[64];
    slaq_sched_config_set(&c, "damping", "0.1", NULL, 0);
    slaq_sched_config_get(&c, "damping", got, sizeof got);
    assert_string_equal(got, "0.1");
    slaq_sched_config_get(&c, "max-fits", got, sizeof got);
    assert_string_equal(got, "1000");
    slaq_sched_config_get(&c, "normalise", got, sizeof got);
    assert_string_equal(got, "span");
    assert_int_equal(slaq_sched_config_get(&c, "speed", got, sizeof got),
                     SLAQ_EINVAL);
    assert_string_equal(got, "");
}

/* Sets name = value, which must be refused with a message containing
 * every fragment (NULL-terminated) and leave the config as it was. */
static void refused(const char *name, const char *value, ...)
{
    slaq_sched_config c, before;
    slaq_sched_config_init(&c);
    before = c;
    char err[256] = "";
    if (slaq_sched_config_set(&c, name, value, err, sizeof err) !=
        SLAQ_EINVAL)
        fail_msg("%s = '%s' was accepted", name, value ? value : "(null)");
    assert_memory_equal(&c, &before, sizeof c);
    va_list ap;
    va_start(ap, value);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err, frag))
            fail_msg("'%s' does not say '%s'", err, frag);
    va_end(ap);
}

static void test_bad_values_name_the_setting(void **state)
{
    (void)state;
    refused("hysteresis", "2000", "hysteresis: expected a number from 0 to "
            "1000, got '2000'", NULL);
    refused("hysteresis", "-0.5", "hysteresis: ", "got '-0.5'", NULL);
    refused("damping", "1", "damping: expected a number from 0 to 1 (1 "
            "excluded), got '1'", NULL);
    refused("unit", "0", "unit: expected a positive number, got '0'",
            NULL);
    refused("epoch", "soon", "epoch: expected a number from 0.01 to 3600, "
            "got 'soon'", NULL);
    /* the epoch's range is its row's, whichever front end reads it */
    refused("epoch", "0.001", "epoch: expected a number from 0.01 to 3600, "
            "got '0.001'", NULL);
    refused("epoch", "4000", "epoch: ", "got '4000'", NULL);
    refused("cores", "inf", "cores: ", "got 'inf'", NULL);
    refused("cores", "nan", "cores: ", "got 'nan'", NULL);
    refused("unit", "", "unit: ", "got ''", NULL);
    refused("unit", "2x", "unit: ", "got '2x'", NULL);
    refused("unit", NULL, "unit: ", NULL);
    refused("max-fits", "1.5", "max-fits: expected a whole number from 0 to "
            "1000000000, got '1.5'", NULL);
    refused("startup-reports", "1001", "startup-reports: expected a whole "
            "number from 0 to 1000", NULL);
    refused("query-window", "-1", "query-window: ", NULL);
    refused("policy", "fast", "policy: unknown policy 'fast' (expected "
            "fair, slaq, slaq-maxmin, relaqs, edf, tiresias, mlfs-h, mlfs, "
            "mlfs-rl, slaq-plan, slaq-index, queue, shortest-first or "
            "slaq-trend)",
            NULL);
    refused("predictor", "oracle", "predictor: unknown predictor 'oracle' "
            "(expected auto, slaq-fit or strawman)", NULL);
    refused("normalise", "SPAN", "normalise: ", "span or max-delta", NULL);
    refused("placement", "", "placement: ", "least-loaded or gain", NULL);
    refused("speed", "3", "speed: no such setting", NULL);
    refused("queue-bound", "mwt:0", "queue-bound: expected auto, a whole "
            "number of tasks or mwt:SECONDS, got 'mwt:0'", NULL);
    refused("queue-bound", "2.5", "queue-bound: ", "got '2.5'", NULL);
    refused("queue-bound", "-1", "queue-bound: ", NULL);
    refused("queue-bound", "mwt:", "queue-bound: ", NULL);
    refused("starvation", "0", "starvation: expected off, ST or ST,ST_R",
            "got '0'", NULL);
    refused("starvation", "10,", "starvation: ", NULL);
    refused("starvation", "10,x", "starvation: ", NULL);
    refused("starvation", ",3", "starvation: ", NULL);
    refused("queue-order", "sjf", "queue-order: unknown queue-order 'sjf' "
            "(expected fifo, srjf, lrtf, stf or ejf)", NULL);
    refused("queue-util", "1", "queue-util: ", NULL);
    /* every numeric row refuses text, and a value beyond each bound */
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const slaq_setting *s = slaq_setting_at(i);
        char v[64];
        if (s->type == SLAQ_SETTING_ENUM) {
            refused(s->name, "abc", s->name, "'abc'", "(expected ", NULL);
            continue;
        }
        if (s->type == SLAQ_SETTING_SPEC) {
            refused(s->name, "abc", s->name, "expected ", s->expect,
                    "got 'abc'", NULL);
            refused(s->name, "", s->name, NULL);
            refused(s->name, NULL, s->name, NULL);
            continue;
        }
        refused(s->name, "abc", s->name, "got 'abc'", NULL);
        snprintf(v, sizeof v, "%.17g", s->min - 1);
        refused(s->name, v, s->name, "expected a", NULL);
        if (!isinf(s->max)) {
            snprintf(v, sizeof v, "%.17g", s->max + 1);
            refused(s->name, v, s->name, "expected a", NULL);
        }
        if (s->type != SLAQ_SETTING_DOUBLE)
            refused(s->name, "2.5", s->name, "whole number", NULL);
    }
}

static void test_bounds_are_inclusive_unless_excluded(void **state)
{
    (void)state;
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    assert_int_equal(slaq_sched_config_set(&c, "hysteresis", "1000", NULL, 0),
                     SLAQ_OK);
    assert_true(c.hysteresis == 1000);
    assert_int_equal(slaq_sched_config_set(&c, "hysteresis", "0", NULL, 0),
                     SLAQ_OK);
    assert_int_equal(slaq_sched_config_set(&c, "damping", "0.999", NULL, 0),
                     SLAQ_OK);
    assert_true(c.damping == 0.999);
    assert_int_equal(slaq_sched_config_set(&c, "max-fits", "1e9", NULL, 0),
                     SLAQ_OK);
    assert_int_equal(c.max_fits, 1000000000);
    assert_int_equal(slaq_sched_config_set(&c, "query-window", "24", NULL,
                                           0), SLAQ_OK);
    assert_int_equal(c.query.window, 24);
    assert_int_equal(slaq_sched_config_set(&c, "policy", "relaqs", NULL, 0),
                     SLAQ_OK);
    assert_int_equal(c.policy, SLAQ_POLICY_RELAQS);
    /* every row of the policy table, mlfs-rl too: the scheduler takes it
     * when its driver gives it a network (slaq_sched_config.rl) */
    assert_int_equal(slaq_sched_config_set(&c, "policy", "mlfs-rl", NULL, 0),
                     SLAQ_OK);
    assert_int_equal(c.policy, SLAQ_POLICY_MLFS_RL);
    assert_int_equal(slaq_sched_config_set(&c, "placement", "gain", NULL, 0),
                     SLAQ_OK);
    assert_int_equal(c.placement, SLAQ_PLACE_GAIN);
    char want[64];
    slaq_setting_expect(slaq_setting_find("unit"), want, sizeof want);
    assert_string_equal(want, "a positive number");
    slaq_setting_expect(slaq_setting_find("epoch"), want, sizeof want);
    assert_string_equal(want, "a number from 0.01 to 3600");
    /* a short buffer is cut, and the length needed returned */
    int n = slaq_setting_expect(slaq_setting_find("policy"), want, 8);
    assert_int_equal(n, (int)strlen("fair, slaq, slaq-maxmin, relaqs, edf, "
                                    "tiresias, mlfs-h, mlfs, mlfs-rl, slaq-plan, "
                                    "slaq-index, queue, shortest-first or "
                                    "slaq-trend"));
    assert_string_equal(want, "fair, s");
}

static void test_option_codes_map_to_rows(void **state)
{
    (void)state;
    assert_true(slaq_setting_count() <= SETOPT_MAX);
    struct option opts[SETOPT_MAX];
    static const char *const skip[] = {"policy", NULL};
    size_t n = setopt_options(opts, skip);
    assert_int_equal(n, slaq_setting_count() - 1);
    for (size_t i = 0; i < n; i++) {
        const slaq_setting *s = setopt_row(opts[i].val);
        assert_non_null(s);
        assert_string_equal(s->name, opts[i].name);
        assert_string_not_equal(s->name, "policy");
        assert_int_equal(opts[i].has_arg, required_argument);
        assert_int_equal(setopt_code(s->name), opts[i].val);
    }
    assert_null(setopt_row('h'));
    assert_int_equal(setopt_code("speed"), -1);
    slaq_sched_config c;
    slaq_sched_config_init(&c);
    char err[128];
    assert_int_equal(setopt_apply(&c, 'h', "x", err, sizeof err), 1);
    assert_int_equal(setopt_apply(&c, setopt_code("hysteresis"), "0.25", err,
                                  sizeof err), 0);
    assert_true(c.hysteresis == 0.25);
    assert_int_equal(setopt_apply(&c, setopt_code("hysteresis"), "2000",
                                  err, sizeof err), -1);
    assert_string_equal(err, "hysteresis: expected a number from 0 to 1000, "
                        "got '2000'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_gives_every_rows_default),
        cmocka_unit_test(test_every_row_is_described),
        cmocka_unit_test(test_set_and_get_round_trip),
        cmocka_unit_test(test_bad_values_name_the_setting),
        cmocka_unit_test(test_bounds_are_inclusive_unless_excluded),
        cmocka_unit_test(test_option_codes_map_to_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
