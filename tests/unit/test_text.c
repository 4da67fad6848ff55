/*
 * test_text.c — text_escape (src/io/text.c), the one escaping function for
 * untrusted text printed by slaq and logged by slaqd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "io/text.h"

static void esc_is(const char *in, const char *want)
{
    char out[256];
    assert_string_equal(text_escape(out, sizeof out, in), want);
}

static void test_plain_and_unicode_text_is_kept(void **state)
{
    (void)state;
    esc_is("", "");
    esc_is("sweep-3 lr=0.01", "sweep-3 lr=0.01");
    esc_is("h\xc3\xa9llo \xe5\x90\x8d\xe5\x89\x8d \xf0\x9f\x98\x80",
           "h\xc3\xa9llo \xe5\x90\x8d\xe5\x89\x8d \xf0\x9f\x98\x80");
    esc_is("a\\b", "a\\b");
}

static void test_controls_are_escaped(void **state)
{
    (void)state;
    esc_is("job\x1b]0;owned\x07\x1b[2J", "job\\x1b]0;owned\\x07\\x1b[2J");
    esc_is("two\nlines\tand\r", "two\\x0alines\\x09and\\x0d");
    esc_is("del\x7f", "del\\x7f");
    esc_is("csi\xc2\x9b" "2J", "csi\\x9b2J"); /* U+009B, a C1 CSI */
}

static void test_bidi_controls_are_escaped(void **state)
{
    (void)state;
    esc_is("invoice\xe2\x80\xaegnp.exe", "invoice\\u202egnp.exe");
    esc_is("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad",
           "\\u202a\\u202b\\u202c\\u202d");
    esc_is("\xe2\x81\xa6x\xe2\x81\xa9", "\\u2066x\\u2069");
    esc_is("\xe2\x80\x8f\xd8\x9c\xe2\x80\xa8", "\\u200f\\u061c\\u2028");
}

static void test_malformed_utf8_is_escaped_byte_by_byte(void **state)
{
    (void)state;
    esc_is("a\xff" "b", "a\\xffb");
    esc_is("\xe2\x80", "\\xe2\\x80");            /* cut short */
    esc_is("\xc0\xaf", "\\xc0\\xaf");            /* overlong '/' */
    esc_is("\xed\xa0\x80", "\\xed\\xa0\\x80");   /* a surrogate */
    esc_is("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* > U+10FFFF */
}

/* A full buffer ends the copy at a whole character or escape. */
static void test_truncation_keeps_escapes_whole(void **state)
{
    (void)state;
    char out[8];
    assert_string_equal(text_escape(out, sizeof out, "abcdefghij"),
                        "abcdefg");
    assert_string_equal(text_escape(out, sizeof out, "abcde\x1b"), "abcde");
    assert_string_equal(text_escape(out, sizeof out, "abcdef\xc3\xa9"),
                        "abcdef");
    char one[1];
    assert_string_equal(text_escape(one, sizeof one, "x"), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_and_unicode_text_is_kept),
        cmocka_unit_test(test_controls_are_escaped),
        cmocka_unit_test(test_bidi_controls_are_escaped),
        cmocka_unit_test(test_malformed_utf8_is_escaped_byte_by_byte),
        cmocka_unit_test(test_truncation_keeps_escapes_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
