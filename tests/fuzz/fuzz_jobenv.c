/*
 * fuzz_jobenv.c — a libFuzzer harness for what slaqd builds for a job as
 * root from what a submitter sent (src/daemon/spawn.c): the job's
 * environment (spawn_env) from a request's "env", and the working
 * directory (spawn_cwd) and log directory (spawn_logs_make) from a
 * request's "cwd" and a job id.
 *
 * Each input is a submit's JSON. Checked beyond the sanitizers:
 *   - every entry of the environment is NAME=value with a name;
 *   - SLAQ_JOB_SECRET, SLAQ_JOB_ID, SLAQ_SOCKET and, for another user's
 *     job, HOME, USER, LOGNAME and SHELL appear once each, with slaqd's
 *     values, whatever the submitter sent (a job cannot be given another
 *     job's secret or another user's home);
 *   - nothing of this process's own environment appears unless the
 *     submitter sent it (FUZZ_SLAQD_SECRET is set here and must never
 *     show up);
 *   - without "env", PATH is a login's;
 *   - spawn_cwd gives an absolute path that begins with what was sent
 *     when that was absolute;
 *   - spawn_logs_make, for the input's "id" (any string), makes its
 *     directory only inside the one it is given, or refuses.
 *
 * Built with slaqd's sources by `make fuzz` (tests/module.mk); run by
 * tests/fuzz/test_fuzz.sh on the seeds in tests/fuzz/corpus/jobenv.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/spawn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *entry)
{
    fprintf(stderr, "fuzz_jobenv: %s: %s\n", what, entry ? entry : "");
    abort();
}

/* How many entries of v set `name`, and the value of the last. */
static int count(char **v, const char *name, const char **val)
{
    int n = 0;
    size_t len = strlen(name);
    for (char **p = v; *p; p++)
        if (!strncmp(*p, name, len) && (*p)[len] == '=') {
            n++;
            *val = *p + len + 1;
        }
    return n;
}

static void check_env(json_t *env, int other_user, int sent_it)
{
    spawn_env_in in = {.env = env, .socket = "/run/slaq/slaq.sock",
                       .id = 42, .secret = "s3cr3t", .ckdir = "/ck"};
    if (other_user) {
        in.home = "/home/alice";
        in.user = "alice";
        in.shell = "/bin/sh";
        in.threads = 3; /* slaqd's --job-threads */
    }
    char **v = spawn_env(&in);
    if (!v)
        return; /* out of memory */
    for (char **p = v; *p; p++) {
        const char *eq = strchr(*p, '=');
        if (!eq || eq == *p)
            fail("an entry without NAME=", *p);
        if (!sent_it && strstr(*p, "fuzz-slaqd-own-secret"))
            fail("slaqd's own environment reached the job", *p);
    }
    const char *val = NULL;
    static const char *const ours[][2] = {
        {"SLAQ_JOB_SECRET", "s3cr3t"}, {"SLAQ_JOB_ID", "42"},
        {"SLAQ_SOCKET", "/run/slaq/slaq.sock"}, {"HOME", "/home/alice"},
        {"USER", "alice"}, {"LOGNAME", "alice"}, {"SHELL", "/bin/sh"}};
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++) {
        if (i >= 3 && !other_user)
            break;
        if (count(v, ours[i][0], &val) != 1 || strcmp(val, ours[i][1]))
            fail("not slaqd's own value, once", ours[i][0]);
    }
    if (!env && (count(v, "PATH", &val) != 1 ||
                 strcmp(val, SPAWN_DEFAULT_PATH)))
        fail("a job without an environment has no login PATH", val);
    /* --job-threads: each thread variable once at most; the submitter's
     * own value where it sent one (a valid entry), else slaqd's. */
    static const char *const tv[] = {SPAWN_THREAD_VARS, "SLAQ_DEFAULT_CORES",
                                     "OMP_WAIT_POLICY"};
    for (size_t i = 0; i < sizeof tv / sizeof *tv; i++) {
        int sent_var = 0;
        size_t len = strlen(tv[i]);
        for (size_t e = 0; env && e < json_array_size(env); e++) {
            const char *s = json_string_value(json_array_get(env, e));
            sent_var |= s && !strncmp(s, tv[i], len) && s[len] == '=';
        }
        int c = count(v, tv[i], &val);
        if (!sent_var && c != (in.threads > 0))
            fail("a thread variable not slaqd's, once", tv[i]);
        if (!sent_var && c == 1 &&
            strcmp(val, i == sizeof tv / sizeof *tv - 1 ? "PASSIVE" : "3"))
            fail("a thread variable with another value", tv[i]);
    }
    spawn_strv_free(v);
}

static void check_cwd(const char *cwd)
{
    char err[512];
    char *abs = spawn_cwd(cwd, err, sizeof err);
    if (!abs)
        return;
    if (abs[0] != '/')
        fail("a working directory that is not absolute", abs);
    if (cwd && cwd[0] == '/' && strcmp(abs, cwd))
        fail("an absolute working directory changed", abs);
    free(abs);
}

static void check_logs(const char *name)
{
    static char base[64];
    if (!base[0]) {
        snprintf(base, sizeof base, "/tmp/fuzz-jobenv-%d", (int)getpid());
        mkdir(base, 0700);
    }
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
        !*name || strlen(name) > 200)
        return; /* slaqd's names are job ids: digits only */
    spawn_logs l;
    char err[512];
    int rc = spawn_logs_make(base, name, getuid(), getgid(), 0600, &l, err,
                             sizeof err);
    if (rc == 0)
        spawn_logs_discard(&l, base, name);
    char path[300];
    snprintf(path, sizeof path, "%s/%s", base, name);
    struct stat st;
    if (rc == 0 && lstat(path, &st) == 0)
        fail("a discarded log directory is still there", path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setenv("FUZZ_SLAQD_SECRET", "fuzz-slaqd-own-secret", 1);
    json_t *req = json_loadb((const char *)data, size, 0, NULL);
    if (!req)
        return 0;
    json_t *env = json_object_get(req, "env");
    if (env && !json_is_array(env))
        env = NULL;
    /* (the marker counts only when the submitter did not send it) */
    int sent = memmem(data, size, "fuzz-slaqd-own-secret", 21) != NULL;
    check_env(env, 0, sent);
    check_env(env, 1, sent);
    check_env(NULL, 1, 0);
    check_cwd(json_string_value(json_object_get(req, "cwd")));
    const char *id = json_string_value(json_object_get(req, "id"));
    if (id)
        check_logs(id);
    json_decref(req);
    return 0;
}
