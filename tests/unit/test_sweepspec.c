/*
 * test_sweepspec.c — the sweep spec reader's caps (src/io/sweepspec.c): a
 * grid's size is computed without overflow and checked against the
 * configuration cap before any configuration is made, in the one reader
 * `slaq sweep` and slaqd share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "io/sweepspec.h"

/* A spec of `nparams` uniform parameters p0, p1... on a grid of `points`;
 * `configs` 0 leaves the field out. */
static json_t *grid_spec(int nparams, int points, int configs, int epochs)
{
    json_t *space = json_object();
    for (int i = 0; i < nparams; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        json_object_set_new(space, name, json_pack("{s:s, s:f, s:f}", "type",
                                                   "uniform", "low", 0.0,
                                                   "high", 1.0));
    }
    json_t *s = json_pack("{s:s, s:o, s:{s:s, s:i}, s:s, s:f, s:i, s:i}",
                          "command", "true {p0}", "space", space,
                          "generator", "type", "grid", "points", points,
                          "metric", "loss", "y_target", 0.1, "epochs",
                          epochs, "slots", 2);
    if (configs)
        json_object_set_new(s, "configs", json_integer(configs));
    return s;
}

/* Parses spec expecting an error containing every fragment. */
static void refused(json_t *spec, ...)
{
    sweep_spec s;
    char err[512] = "";
    assert_int_equal(sweep_spec_parse(spec, &s, err, sizeof err), -1);
    sweep_spec_free(&s);
    json_decref(spec);
    va_list ap;
    va_start(ap, spec);
    for (const char *frag; (frag = va_arg(ap, const char *));)
        if (!strstr(err, frag))
            fail_msg("error '%s' does not mention '%s'", err, frag);
    va_end(ap);
}

/* Parses spec and generates its configurations; returns how many. */
static size_t accepted(json_t *spec)
{
    sweep_spec s;
    char err[512] = "";
    if (sweep_spec_parse(spec, &s, err, sizeof err) < 0)
        fail_msg("%s", err);
    json_t *cfgs = sweep_spec_configs(&s, err, sizeof err);
    if (!cfgs)
        fail_msg("%s", err);
    size_t n = json_array_size(cfgs);
    json_decref(cfgs);
    sweep_spec_free(&s);
    json_decref(spec);
    return n;
}

static void test_grid_over_the_cap_is_refused_with_its_size(void **state)
{
    (void)state;
    refused(grid_spec(2, 1000, 0, 10), "generator", "1000 x 1000 = 1000000",
            "cap of 10000 configurations", NULL);
    refused(grid_spec(2, 101, 0, 10), "101 x 101 = 10201", NULL);
}

/* 8 parameters of 1000 points is 10^24 configurations: more than a size_t
 * holds; the product must not wrap around to a small number. */
static void test_grid_size_does_not_overflow(void **state)
{
    (void)state;
    refused(grid_spec(8, 1000, 0, 10), "1000 x 1000 x 1000 x 1000 x 1000 "
            "x 1000 x 1000 x 1000 points", "cap of 10000", NULL);
    /* 2^64 exactly: 16 parameters of 16 points. */
    refused(grid_spec(16, 16, 0, 10), "cap of 10000", NULL);
}

static void test_grid_at_the_cap_or_cut_by_configs_is_accepted(void **state)
{
    (void)state;
    assert_int_equal(accepted(grid_spec(2, 100, 0, 10)), SWEEP_MAX_CONFIGS);
    assert_int_equal(accepted(grid_spec(8, 1000, 7, 10)), 7);
}

/* A spec refused half-way keeps nothing of what was read before the error
 * (the fuzzer's first find: the name and the parameters leaked when a
 * later parameter was bad). Under the sanitizer build a leak fails too. */
static void test_a_refused_spec_keeps_nothing(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"name\":\"g\",\"command\":\"x {a} {b}\",\"space\":{\"a\":"
        "{\"|ype\":\"uniform\",\"low\":0,\"high\":1}},\"metric\":\"loss\","
        "\"y_target\":0.1,\"epochs\":5,\"slots\":2}",
        "{\"name\":\"g\",\"command\":[\"x\",3],\"space\":{\"a\":"
        "{\"type\":\"choice\",\"values\":[1,2]}},\"metric\":\"loss\","
        "\"y_target\":0.1,\"epochs\":5,\"slots\":2}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *spec = json_loads(bad[i], 0, NULL);
        assert_non_null(spec);
        sweep_spec s;
        char err[256];
        assert_int_equal(sweep_spec_parse(spec, &s, err, sizeof err), -1);
        assert_null(s.name);
        assert_null(s.params);
        assert_int_equal(s.nparams, 0);
        assert_null(s.command);
        sweep_spec_free(&s); /* harmless after an error */
        json_decref(spec);
    }
}

static void test_configs_and_epochs_caps(void **state)
{
    (void)state;
    refused(grid_spec(1, 3, SWEEP_MAX_CONFIGS + 1, 10), "configs", NULL);
    refused(grid_spec(2, 100, 0, 1001), "epochs", "10000 configurations x "
            "1001 epochs", "cap of 10000000", NULL);
    assert_int_equal(accepted(grid_spec(2, 100, 0, 1000)), 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid_over_the_cap_is_refused_with_its_size),
        cmocka_unit_test(test_grid_size_does_not_overflow),
        cmocka_unit_test(test_grid_at_the_cap_or_cut_by_configs_is_accepted),
        cmocka_unit_test(test_configs_and_epochs_caps),
        cmocka_unit_test(test_a_refused_spec_keeps_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
