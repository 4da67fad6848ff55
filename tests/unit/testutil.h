/*
 * testutil.h — helpers for slaq's cmocka tests.
 *
 * cmocka 1.1.5 (Debian 12) compares floating point only as float; slaq's
 * numbers need double precision, so assert_near() compares doubles and
 * prints both values when they differ.
 */
#ifndef SLAQ_TESTUTIL_H
#define SLAQ_TESTUTIL_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#define assert_near(a, b, tol)                                                \
    do {                                                                      \
        double a_ = (a), b_ = (b), t_ = (tol);                                \
        if (!(fabs(a_ - b_) <= t_)) {                                         \
            print_error("%s = %.17g, expected %s = %.17g (tolerance %g)\n",   \
                        #a, a_, #b, b_, t_);                                  \
            fail();                                                           \
        }                                                                     \
    } while (0)

/*
 * Writes text to /tmp/slaq-test-NAME-PID.jsonl (NAME: the test's) and
 * returns that path, in a static buffer the next call reuses. The caller
 * unlinks it.
 */
static inline const char *test_write_file(const char *name, const char *text)
{
    static char path[96];
    snprintf(path, sizeof path, "/tmp/slaq-test-%s-%d.jsonl", name,
             (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/*
 * A scratch directory for a group of tests: test_dir_make() in the group's
 * setup creates it from a mkdtemp(3) template ("/tmp/NAME-XXXXXX", which
 * it fills in), test_dir_remove() in its teardown removes it and all in it.
 * Each returns 0, or -1 (cmocka then fails the group).
 */
static inline int test_dir_make(char *template_path)
{
    return mkdtemp(template_path) ? 0 : -1;
}

static inline int test_dir_remove(const char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Defines the group setup and teardown `setup_dir` and `remove_dir` over
 * the file's template DIR (a `static char DIR[]`), for
 * cmocka_run_group_tests(tests, setup_dir, remove_dir). */
#define TEST_DIR_GROUP(dir)                                                   \
    static int setup_dir(void **state)                                        \
    {                                                                         \
        (void)state;                                                          \
        return test_dir_make(dir);                                            \
    }                                                                         \
    static int remove_dir(void **state)                                       \
    {                                                                         \
        (void)state;                                                          \
        return test_dir_remove(dir);                                          \
    }

#endif
