/*
 * test_jsonl.c — the JSON Lines loop shared by slaq's file readers: which
 * lines reach the callback and with which line numbers, and that each kind
 * of error names the file, the line and (for JSON errors) the column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/jsonl.h"
#include "testutil.h"

static const char *path; /* the last file written */

static const char *write_file(const char *text)
{
    return path = test_write_file("jsonl", text);
}

/* What the callback saw: the line numbers and the "v" field of each
 * object, and when to refuse one. */
typedef struct seen {
    int lines[16];
    json_int_t v[16];
    size_t len[16]; /* length of the "s" field, when a string */
    int n;
    int refuse_line; /* 0: refuse none */
} seen;

static int record(json_t *o, int line, void *ctx, char *msg, size_t len)
{
    seen *s = ctx;
    if (line == s->refuse_line) {
        snprintf(msg, len, "field \"v\" is refused");
        return -1;
    }
    assert_true(s->n < 16);
    s->lines[s->n] = line;
    s->v[s->n] = json_integer_value(json_object_get(o, "v"));
    json_t *str = json_object_get(o, "s");
    s->len[s->n] = json_is_string(str) ? json_string_length(str) : 0;
    s->n++;
    return 0;
}

/* Runs the loop on text; returns its result with the message in err. */
static int run(const char *text, seen *s, char *err, size_t errlen)
{
    const char *p = write_file(text);
    err[0] = '\0';
    int n = jsonl_each(p, record, s, err, errlen);
    unlink(p);
    return n;
}

static void expect_message(const char *err, const char *suffix)
{
    char want[256];
    snprintf(want, sizeof want, "%s%s", path, suffix);
    if (strcmp(err, want))
        fail_msg("message \"%s\", expected \"%s\"", err, want);
}

static void test_every_object_reaches_the_callback_with_its_line(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(run("{\"v\": 1}\n\n  \t\n{\"v\": 2}\r\n\r\n{\"v\": 3}",
                         &s, err, sizeof err),
                     3);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.lines[0], 1);
    assert_int_equal(s.lines[1], 4);
    assert_int_equal(s.lines[2], 6);
    assert_int_equal(s.v[2], 3);
    assert_string_equal(err, "");
}

static void test_empty_and_blank_files_hold_no_objects(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(run("", &s, err, sizeof err), 0);
    assert_int_equal(run("\n \n\t\r\n", &s, err, sizeof err), 0);
    assert_int_equal(s.n, 0);
    assert_string_equal(err, "");
}

static void test_malformed_line_names_line_and_column(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    /* Line 3, the "}" in column 11 where a value was expected. */
    assert_int_equal(run("{\"v\": 1}\n\n{\"v\": [1, }\n{\"v\": 4}\n", &s, err,
                         sizeof err),
                     -1);
    expect_message(err, ":3:11: malformed JSON: unexpected token near '}'");
    assert_int_equal(s.n, 1); /* the loop stopped at the bad line */

    /* A truncated object: the error is at the end of its own line, not on
     * a line 2 the file does not have. */
    s.n = 0;
    assert_int_equal(run("{\"v\": 1,\n", &s, err, sizeof err), -1);
    if (strncmp(err + strlen(path), ":1:8: malformed JSON: ", 22))
        fail_msg("message \"%s\" does not point at line 1 column 8", err);
}

static void test_non_object_names_line_and_column(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(run("{\"v\": 1}\n   [1, 2]\n", &s, err, sizeof err), -1);
    expect_message(err, ":2:4: expected a JSON object");
    assert_int_equal(run("\"text\"\n", &s, err, sizeof err), -1);
    expect_message(err, ":1:1: expected a JSON object");
}

static void test_duplicate_keys_are_malformed(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(run("{\"v\": 1, \"v\": 2}\n", &s, err, sizeof err), -1);
    if (!strstr(err, ":1:") || !strstr(err, "duplicate"))
        fail_msg("message \"%s\" does not name the duplicate key", err);
}

static void test_callback_error_gets_file_and_line(void **st)
{
    (void)st;
    seen s = {.refuse_line = 2};
    char err[256];
    assert_int_equal(run("{\"v\": 1}\n{\"v\": 2}\n{\"v\": 3}\n", &s, err,
                         sizeof err),
                     -1);
    expect_message(err, ":2: field \"v\" is refused");
    assert_int_equal(s.n, 1);
}

static void test_very_long_lines(void **st)
{
    (void)st;
    enum { LONG = 3 << 20 }; /* 3 MiB: far beyond any fixed buffer */
    char *text = malloc(LONG + 64);
    assert_non_null(text);
    int k = snprintf(text, 64, "{\"v\": 7, \"s\": \"");
    memset(text + k, 'x', LONG);
    strcpy(text + k + LONG, "\"}\n{\"v\": 8}\n");
    seen s = {0};
    char err[256];
    assert_int_equal(run(text, &s, err, sizeof err), 2);
    assert_int_equal(s.len[0], LONG);
    assert_int_equal(s.v[0], 7);
    assert_int_equal(s.lines[1], 2);

    /* The same line with its closing brace missing: the column is past the
     * three million characters of the string. */
    strcpy(text + k + LONG, "\"\n");
    s.n = 0;
    assert_int_equal(run(text, &s, err, sizeof err), -1);
    char want[64];
    snprintf(want, sizeof want, ":1:%d: malformed JSON", k + LONG + 1);
    if (!strstr(err, want))
        fail_msg("message \"%s\" lacks \"%s\"", err, want);
    free(text);
}

/* Line 1 {"v": 1}, then line 2 PREFIX + n values VALUE separated by commas
 * + SUFFIX; the caller frees it. */
static char *repeat_line(const char *prefix, const char *value, size_t n,
                         const char *suffix)
{
    size_t lp = strlen(prefix), lv = strlen(value), ls = strlen(suffix);
    char *text = malloc(16 + lp + n * (lv + 1) + ls + 2);
    assert_non_null(text);
    char *p = text + sprintf(text, "{\"v\": 1}\n%s", prefix);
    for (size_t i = 0; i < n; i++) {
        memcpy(p, value, lv);
        p += lv;
        *p++ = ',';
    }
    p -= n > 0;
    sprintf(p, "%s\n", suffix);
    return text;
}

static void test_array_over_the_value_cap_is_refused_with_line_and_field(
    void **st)
{
    (void)st;
    /* The object, "v", 2, "s" and the array are 5 values; with the cap's
     * worth of zeros in the array, the line is over by 5. */
    char *text = repeat_line("{\"v\": 2, \"s\": [", "0", JSONL_MAX_VALUES,
                             "]}");
    seen s = {0};
    char err[256];
    assert_int_equal(run(text, &s, err, sizeof err), -1);
    char want[128];
    snprintf(want, sizeof want, ":2: field 's': an array of %d values; a "
             "line may hold at most %d JSON values in all", JSONL_MAX_VALUES,
             JSONL_MAX_VALUES);
    expect_message(err, want);
    assert_int_equal(s.n, 1); /* line 1 only: line 2 never reached Jansson */
    free(text);
}

static void test_many_fields_over_the_value_cap_are_refused(void **st)
{
    (void)st;
    /* Each "kI": 0 member is two values, a key and a number; the keys
     * differ, so that all of them would make it into Jansson's object. */
    size_t n = JSONL_MAX_VALUES / 2 + 1;
    char *text = malloc(16 + n * 16);
    assert_non_null(text);
    char *p = text + sprintf(text, "{\"v\": 1}\n{");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s\"k%zu\": 0", i ? ", " : "", i);
    strcpy(p, "}\n");
    seen s = {0};
    char err[256];
    assert_int_equal(run(text, &s, err, sizeof err), -1);
    char want[128];
    /* With the object itself, member I's number is value 2I + 3: the cap
     * is passed at I = (cap - 1) / 2. */
    snprintf(want, sizeof want, ":2: more than the %d JSON values a line may "
             "hold (the last in field 'k%d')", JSONL_MAX_VALUES,
             (JSONL_MAX_VALUES - 1) / 2);
    expect_message(err, want);
    assert_int_equal(s.n, 1);
    free(text);
}

static void test_delimiters_inside_strings_are_not_values(void **st)
{
    (void)st;
    /* A string of a cap's worth of "[0\"]," (5 characters once decoded):
     * were its brackets, commas and escaped quotes taken for JSON, the
     * line would be over the cap. */
    char *text = repeat_line("{\"v\": 3, \"s\": \"", "[0\\\"]",
                             JSONL_MAX_VALUES, "\"}");
    seen s = {0};
    char err[256];
    assert_int_equal(run(text, &s, err, sizeof err), 2);
    assert_int_equal(s.v[1], 3);
    assert_int_equal(s.len[1], 5 * (size_t)JSONL_MAX_VALUES - 1);
    free(text);
}

static void test_line_ending_in_a_backslash_inside_a_string_is_malformed(
    void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(run("{\"v\": 1}\n{\"s\": \"ab\\", &s, err, sizeof err),
                     -1);
    if (strncmp(err + strlen(path), ":2:", 3) || !strstr(err, "malformed"))
        fail_msg("message \"%s\" does not say line 2 is malformed", err);
    assert_int_equal(s.n, 1);
}

static void test_missing_file(void **st)
{
    (void)st;
    seen s = {0};
    char err[256];
    assert_int_equal(jsonl_each("/nonexistent/x.jsonl", record, &s, err,
                                sizeof err),
                     -1);
    assert_string_equal(err, "/nonexistent/x.jsonl: No such file or directory");
}

static void test_push_grows_and_keeps_elements(void **st)
{
    (void)st;
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        int *slot = jsonl_push(&v, n, &cap, sizeof *v, 4);
        assert_non_null(slot);
        assert_int_equal(*slot, 0);
        *slot = i * 3;
        n++;
    }
    assert_true(cap >= 1000 && cap < 2048);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(v[i], i * 3);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_object_reaches_the_callback_with_its_line),
        cmocka_unit_test(test_empty_and_blank_files_hold_no_objects),
        cmocka_unit_test(test_malformed_line_names_line_and_column),
        cmocka_unit_test(test_non_object_names_line_and_column),
        cmocka_unit_test(test_duplicate_keys_are_malformed),
        cmocka_unit_test(test_callback_error_gets_file_and_line),
        cmocka_unit_test(test_very_long_lines),
        cmocka_unit_test(
            test_array_over_the_value_cap_is_refused_with_line_and_field),
        cmocka_unit_test(test_many_fields_over_the_value_cap_are_refused),
        cmocka_unit_test(test_delimiters_inside_strings_are_not_values),
        cmocka_unit_test(
            test_line_ending_in_a_backslash_inside_a_string_is_malformed),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_push_grows_and_keeps_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
