/*
 * test_dltrace.c — the reader of deadline traces (src/io/dltrace.h): a
 * valid trace is read field by field, and a line that holds a NUL byte or
 * is longer than DLT_MAX_LINE is refused with its number, never read in
 * pieces.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/dltrace.h"
#include "testutil.h"

#define HDR "job_id,submission_time,num_iteration,model_name,deadline," \
            "batch_size,num_gpu,duration\n"

/* Writes n bytes of text to a new temporary file; its path in path. */
static void write_trace(char *path, const char *text, size_t n)
{
    strcpy(path, "/tmp/slaq-dltrace-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static void test_a_trace_is_read_field_by_field(void **state)
{
    (void)state;
    static const char text[] = HDR "1,0,100,resnet,3600,64,4,1200\r\n"
                               "\n2,30.5,5,bert,60,8,4096,1e9\n";
    char path[64], err[256];
    write_trace(path, text, sizeof text - 1);
    dlt_trace t;
    assert_int_equal(dlt_read(path, &t, err, sizeof err), 0);
    assert_int_equal(t.n, 2);
    assert_near(t.jobs[0].deadline, 3600, 0);
    assert_int_equal(t.jobs[0].gpus, 4);
    assert_int_equal(t.jobs[1].line, 4);
    assert_near(t.jobs[1].submit, 30.5, 0);
    assert_int_equal(t.jobs[1].gpus, 4096);
    assert_near(t.jobs[1].duration, 1e9, 0);
    dlt_free(&t);
    unlink(path);
}

/* A NUL byte ended the line for the parser, and what followed it on the
 * line was dropped unread: a job with junk after it was accepted. */
static void test_a_nul_byte_in_a_line_is_refused(void **state)
{
    (void)state;
    static const char text[] = HDR "1,0,1,m,100,1,1,50\0junk\n";
    char path[64], err[256] = "";
    write_trace(path, text, sizeof text - 1);
    dlt_trace t;
    assert_int_equal(dlt_read(path, &t, err, sizeof err), -1);
    if (!strstr(err, ":2: a NUL byte in the line"))
        fail_msg("'%s' does not name the NUL byte", err);
    assert_null(t.jobs);
    unlink(path);
}

/* A line past DLT_MAX_LINE is refused at its own number, whatever the
 * bytes in it (a NUL byte among them hid its length). */
static void test_a_long_line_is_refused_whole(void **state)
{
    (void)state;
    size_t hl = strlen(HDR), n = hl + 3 * DLT_MAX_LINE;
    char *text = malloc(n);
    assert_non_null(text);
    memcpy(text, HDR, hl);
    memset(text + hl, 'x', n - hl);
    text[hl + 10] = '\0';
    text[n - 1] = '\n';
    char path[64], err[256] = "";
    write_trace(path, text, n);
    dlt_trace t;
    assert_int_equal(dlt_read(path, &t, err, sizeof err), -1);
    if (!strstr(err, ":2: line longer than 4096 bytes"))
        fail_msg("'%s' does not say line 2 is too long", err);
    free(text);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_trace_is_read_field_by_field),
        cmocka_unit_test(test_a_nul_byte_in_a_line_is_refused),
        cmocka_unit_test(test_a_long_line_is_refused_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
