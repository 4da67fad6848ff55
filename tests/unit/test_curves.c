/*
 * test_curves.c — the curve file reader: valid files load, and every kind
 * of bad input names the file, the line and the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/curves.h"
#include "testutil.h"

static const char *path; /* the last file written */

static const char *write_file(const char *text)
{
    return path = test_write_file("curves", text);
}

static void expect_error(const char *text, const char *needle)
{
    curve_set cs;
    char err[512];
    const char *p = write_file(text);
    assert_int_equal(curves_load(p, &cs, err, sizeof err), -1);
    assert_int_equal(cs.n, 0);
    if (!strstr(err, needle)) {
        print_error("message \"%s\" lacks \"%s\"\n", err, needle);
        fail();
    }
    assert_non_null(strstr(err, p));
    unlink(p);
}

static void test_loads_a_valid_file(void **state)
{
    (void)state;
    curve_set cs;
    char err[512];
    const char *p = write_file(
        "{\"name\": \"a\", \"algorithm\": \"svm\", \"loss\": [1, 0.5, 0.25],"
        " \"iter_cpu_s\": [0.1, 0.2], \"data_size\": 100, \"extra\": {}}\n"
        "\n"
        "{\"loss\": [3, 2]}\n");
    assert_int_equal(curves_load(p, &cs, err, sizeof err), 0);
    assert_int_equal(cs.n, 2);
    assert_string_equal(cs.v[0].algorithm, "svm");
    assert_int_equal(cs.v[0].n, 3);
    assert_near(cs.v[0].iter_cpu_s[1], 0.2, 0);
    assert_near(cs.v[0].data_size, 100, 0);
    assert_string_equal(cs.v[1].algorithm, "unknown");
    assert_null(cs.v[1].iter_cpu_s);
    assert_int_equal(cs.v[1].line, 3);
    curves_free(&cs);
    unlink(p);
}

static void test_errors_name_line_and_field(void **state)
{
    (void)state;
    expect_error("{\"loss\": [1, 0]}\n{\"loss\": [1, }\n", ":2:14: malformed JSON");
    expect_error("{\"loss\": [1, \"x\", 0]}\n",
                 ":1: field \"loss\": element 1 is not a finite number");
    expect_error("{\"loss\": [1]}\n", ":1: field \"loss\" has 1 values");
    expect_error("{\"loss\": []}\n", "field \"loss\" has 0 values");
    expect_error("{\"name\": \"x\"}\n", ":1: field \"loss\" is missing");
    expect_error("[1, 2]\n", ":1:1: expected a JSON object");
    expect_error("{\"loss\": [1, 0.5], \"iter_cpu_s\": [1, 2]}\n",
                 "field \"iter_cpu_s\" has 2 values");
    expect_error("{\"loss\": [1, 0.5], \"algorithm\": 3}\n",
                 "field \"algorithm\" must be a string");
    expect_error("\n\n", "no curves");
}

static void test_missing_file(void **state)
{
    (void)state;
    curve_set cs;
    char err[512];
    assert_int_equal(curves_load("/nonexistent/c.jsonl", &cs, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "/nonexistent/c.jsonl"));
    assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loads_a_valid_file),
        cmocka_unit_test(test_errors_name_line_and_field),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
