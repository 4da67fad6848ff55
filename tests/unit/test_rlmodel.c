/*
 * test_rlmodel.c — MLF-RL's model file (src/io/rlmodel.h): a model
 * written and read back is the same bit for bit, comments are skipped,
 * and every malformed file is refused with its line and what was
 * expected.
 */
#include <string.h>

#include "io/rlmodel.h"
#include "testutil.h"

static void fill(slaq_rl_model *m)
{
    double *p = (double *)m;
    for (size_t i = 0; i < sizeof *m / sizeof *p; i++)
        p[i] = (i % 2 ? -1 : 1) * (0.1 + (double)i / 7.0) * 1e-3 *
               (double)(i + 1);
    m->b2 = 1.0 / 3;
}

static void test_round_trip_is_exact(void **state)
{
    (void)state;
    char path[] = "/tmp/slaq-rlmodel-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    slaq_rl_model m, back;
    fill(&m);
    char err[256];
    assert_int_equal(rlm_write(path, &m, "made by: a test\nsecond line",
                               err, sizeof err), 0);
    assert_int_equal(rlm_read(path, &back, err, sizeof err), 0);
    assert_memory_equal(&m, &back, sizeof m);
    FILE *f = fopen(path, "r");
    char line[256];
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "slaq-rl-model 1\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "features 8 hidden 16\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "# made by: a test\n");
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "# second line\n");
    fclose(f);
    unlink(path);
    assert_int_equal(rlm_read(path, &back, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
}

/* A valid model's text with line `bad` (1-based) replaced by `with`
 * (NULL: dropped) must be refused with a message holding `want`. */
static void refused(size_t bad, const char *with, const char *want)
{
    char text[8192] = "", *at = text;
    at += sprintf(at, "slaq-rl-model 1\nfeatures 8 hidden 16\n# a note\n");
    for (int k = 0; k < SLAQ_RL_HIDDEN; k++)
        at += sprintf(at, "unit %d 1 2 3 4 5 6 7 8 0.5 -0.5\n", k);
    sprintf(at, "output 0.25\n");
    char edited[8192] = "", *out = edited;
    size_t ln = 0;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        ln++;
        if (ln == bad) {
            if (with)
                out += sprintf(out, "%s\n", with);
        } else {
            memcpy(out, p, (size_t)(nl - p + 1));
            out += nl - p + 1;
        }
        p = nl + 1;
    }
    *out = 0;
    slaq_rl_model m;
    char err[256];
    if (!want) {
        assert_int_equal(rlm_parse(edited, "m", &m, err, sizeof err), 0);
        assert_near(m.w1[3][7], 8, 0);
        assert_near(m.b1[15], 0.5, 0);
        assert_near(m.w2[0], -0.5, 0);
        assert_near(m.b2, 0.25, 0);
        return;
    }
    if (rlm_parse(edited, "m", &m, err, sizeof err) != -1) {
        print_error("accepted with line %zu as \"%s\"\n", bad, with);
        fail();
    }
    if (!strstr(err, want)) {
        print_error("message \"%s\" lacks \"%s\"\n", err, want);
        fail();
    }
}

static void test_malformed_models_are_refused_with_the_line(void **state)
{
    (void)state;
    refused(0, NULL, NULL); /* unedited: valid */
    refused(1, "slaq-model 1", "m line 1: expected \"slaq-rl-model 1\"");
    refused(1, "slaq-rl-model 2", "m line 1: version 2; this slaq reads "
            "version 1");
    refused(2, "features 8 hidden 32", "m line 2: a network of 8 features "
            "and 32 hidden units");
    refused(2, "features 8", "m line 2: expected \"features 8 hidden 16\"");
    refused(4, "unit 0 1 2 3 4 5 6 7 8 0.5", "m line 4: unit 0 needs 10 "
            "finite numbers");
    refused(5, "unit 1 1 2 3 4 5 6 7 8 0.5 0.5 9", "m line 5: unit 1 needs "
            "10");
    refused(6, "unit 2 1 2 3 x 5 6 7 8 0.5 0.5", "one is not a finite "
            "number");
    refused(6, "unit 2 1 2 3 nan 5 6 7 8 0.5 0.5", "m line 6: unit 2");
    refused(6, "unit 3 1 2 3 4 5 6 7 8 0.5 0.5", "m line 6: expected "
            "\"unit 2\"");
    refused(20, "output", "m line 20: expected \"output\" and the score's "
            "bias");
    refused(20, NULL, "m: ends before \"output\"");
    refused(19, NULL, "m line 19: expected \"unit 15\"");
    refused(20, "output 0.25\nunit 16 1", "m line 21: more after the "
            "\"output\" line");
    refused(3, "# comments and blank lines are skipped\n\n", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_is_exact),
        cmocka_unit_test(test_malformed_models_are_refused_with_the_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
