/*
 * spawn.c — the parts of starting and handling a job that slaqd does as
 * root on a user's behalf, each done so that nothing the user controls
 * can redirect it (spawn.h has the rules).
 *
 * Why descriptors and children rather than checks on paths: a check on a
 * path (lstat, then open) races with a user who changes the path between
 * the two, and a path resolved as root follows links into places the
 * user cannot see. So the log files are created where no one but slaqd
 * may yet go, and handed over open; and a path that stays the user's
 * (a checkpoint) is looked at only by a process that has become the user.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/spawn.h"

/* 1 if environment entry e sets the variable `name`. */
static int env_is(const char *e, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(e, name, n) && e[n] == '=';
}

/* 1 if e is NAME=value with a NAME of at least one character and no
 * '=' in it (what execve's callers take for an entry). */
static int env_entry_ok(const char *e)
{
    const char *eq = e ? strchr(e, '=') : NULL;
    return eq && eq != e;
}

static int strv_add(char **v, size_t *k, const char *name, const char *val)
{
    if (asprintf(&v[*k], "%s=%s", name, val) < 0) {
        v[*k] = NULL;
        return -1;
    }
    (*k)++;
    return 0;
}

void spawn_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

char **spawn_env(const spawn_env_in *in)
{
    static const char *const ours[] = {"SLAQ_SOCKET", "SLAQ_JOB_ID",
                                       "SLAQ_JOB_SECRET"};
    static const char *const ident[] = {"HOME", "USER", "LOGNAME", "SHELL"};
    static const char *const thread_vars[] = {
        SPAWN_THREAD_VARS, "SLAQ_DEFAULT_CORES", "OMP_WAIT_POLICY"};
    enum { NTV = sizeof thread_vars / sizeof *thread_vars };
    int named[NTV] = {0};
    size_t n = in->env ? json_array_size(in->env) : 0;
    char **out = calloc(n + 10 + NTV, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    int have_ckdir = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = json_string_value(json_array_get(in->env, i));
        if (!env_entry_ok(e))
            continue;
        int drop = 0;
        for (size_t v = 0; v < 3; v++)
            drop |= env_is(e, ours[v]);
        for (size_t v = 0; in->home && v < 4; v++)
            drop |= env_is(e, ident[v]);
        if (drop)
            continue;
        have_ckdir |= env_is(e, "SLAQ_CHECKPOINT_DIR");
        for (size_t v = 0; v < NTV; v++)
            named[v] |= env_is(e, thread_vars[v]);
        if (!(out[k++] = strdup(e)))
            goto err;
    }
    if (!in->env && strv_add(out, &k, "PATH", SPAWN_DEFAULT_PATH) < 0)
        goto err;
    if (in->home) {
        const char *val[] = {in->home, in->user, in->user, in->shell};
        for (size_t v = 0; v < 4; v++)
            if (strv_add(out, &k, ident[v], val[v] ? val[v] : "") < 0)
                goto err;
    }
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)in->id);
    if (strv_add(out, &k, "SLAQ_SOCKET", in->socket ? in->socket : "") < 0 ||
        strv_add(out, &k, "SLAQ_JOB_ID", id) < 0 ||
        strv_add(out, &k, "SLAQ_JOB_SECRET", in->secret ? in->secret : "") <
            0)
        goto err;
    if (!have_ckdir && in->ckdir &&
        strv_add(out, &k, "SLAQ_CHECKPOINT_DIR", in->ckdir) < 0)
        goto err;
    if (in->threads > 0) {
        char t[16];
        snprintf(t, sizeof t, "%d", in->threads);
        for (size_t v = 0; v < NTV; v++)
            if (!named[v] &&
                strv_add(out, &k, thread_vars[v],
                         v == NTV - 1 ? "PASSIVE" : t) < 0)
                goto err;
    }
    return out;
err:
    spawn_strv_free(out);
    return NULL;
}

char *spawn_cwd(const char *cwd, char *err, size_t errlen)
{
    if (!cwd || !*cwd)
        cwd = ".";
    if (cwd[0] == '/') {
        char *s = strdup(cwd);
        if (!s)
            snprintf(err, errlen, "out of memory");
        return s;
    }
    char here[4096], *s = NULL;
    if (!getcwd(here, sizeof here)) {
        snprintf(err, errlen, "working directory %.200s: a relative path, "
                 "and slaqd's own directory is unknown (%s): send an "
                 "absolute one", cwd, strerror(errno));
        return NULL;
    }
    if (!strcmp(cwd, "."))
        s = strdup(here);
    else if (asprintf(&s, "%s/%s", strcmp(here, "/") ? here : "", cwd) < 0)
        s = NULL;
    if (!s)
        snprintf(err, errlen, "out of memory");
    return s;
}

/* Opens (creating, exclusively) one log file in dirfd for appending. */
static int log_create(int dirfd, const char *name, uid_t uid, gid_t gid,
                      mode_t mode)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
                                     O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    mode);
    if (fd < 0)
        return -1;
    if (fchown(fd, uid, gid) < 0 || fchmod(fd, mode) < 0 ||
        fcntl(fd, F_SETFL, O_APPEND) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void logs_close(spawn_logs *l)
{
    if (l->out >= 0)
        close(l->out);
    if (l->err >= 0)
        close(l->err);
    if (l->dirfd >= 0)
        close(l->dirfd);
    l->out = l->err = l->dirfd = -1;
}

int spawn_logs_make(const char *jobs_dir, const char *name, uid_t uid,
                    gid_t gid, mode_t mode, spawn_logs *l, char *err,
                    size_t errlen)
{
    l->dirfd = l->out = l->err = -1;
    int base = open(jobs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (base < 0) {
        snprintf(err, errlen, "cannot open %s: %s", jobs_dir,
                 strerror(errno));
        return -1;
    }
    if (mkdirat(base, name, 0700) < 0) {
        int e = errno;
        close(base);
        if (e == EEXIST)
            return -2;
        snprintf(err, errlen, "cannot create %s/%s: %s", jobs_dir, name,
                 strerror(e));
        return -1;
    }
    l->dirfd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                      O_CLOEXEC);
    close(base);
    if (l->dirfd >= 0) {
        l->out = log_create(l->dirfd, "stdout.log", uid, gid, mode);
        l->err = l->out < 0 ? -1 : log_create(l->dirfd, "stderr.log", uid,
                                              gid, mode);
    }
    if (l->dirfd < 0 || l->out < 0 || l->err < 0) {
        snprintf(err, errlen, "cannot create the log files in %s/%s: %s",
                 jobs_dir, name, strerror(errno));
        spawn_logs_discard(l, jobs_dir, name);
        return -1;
    }
    return 0;
}

int spawn_logs_give(spawn_logs *l, uid_t uid, gid_t gid, mode_t dir_mode)
{
    int rc = fchown(l->dirfd, uid, gid) < 0 ||
                     fchmod(l->dirfd, dir_mode) < 0 ? -1 : 0;
    int e = errno;
    close(l->dirfd);
    l->dirfd = -1;
    errno = e;
    return rc;
}

void spawn_logs_discard(spawn_logs *l, const char *jobs_dir,
                        const char *name)
{
    if (l->dirfd >= 0) {
        unlinkat(l->dirfd, "stdout.log", 0);
        unlinkat(l->dirfd, "stderr.log", 0);
    }
    logs_close(l);
    int base = open(jobs_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (base >= 0) {
        unlinkat(base, name, AT_REMOVEDIR);
        close(base);
    }
}

/* Milliseconds of the monotonic clock. */
static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads up to len bytes from fd until end of file or the deadline: the
 * count read, or -1 on timeout or error. */
static ssize_t read_until(int fd, void *buf, size_t len, long long deadline)
{
    size_t got = 0;
    for (;;) {
        long long left = deadline - mono_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -1;
        if (n == 0 || (got += (size_t)n) == len)
            return (ssize_t)got;
    }
}

int spawn_wait_report(int fd, int timeout_ms, int e[2])
{
    ssize_t n = read_until(fd, e, 2 * sizeof *e, mono_ms() + timeout_ms);
    if (n < 0)
        return -1;
    return n == (ssize_t)(2 * sizeof *e) ? 1 : n == 0 ? 0 : -1;
}

int spawn_as(const sd_runas *ra, int (*fn)(void *arg, char *out,
                                           size_t outlen),
             void *arg, char *out, size_t outlen, int timeout_ms)
{
    if (outlen)
        out[0] = 0;
    if (!ra->switch_user)
        return fn(arg, out, outlen);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1000;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1000;
    }
    if (pid == 0) {
        close(p[0]);
        signed char rc = -128;
        char buf[4096] = "";
        if (user_runas_become(ra) == 0)
            rc = (signed char)fn(arg, buf, outlen < sizeof buf ? outlen
                                                               : sizeof buf);
        if (write(p[1], &rc, 1) == 1)
            (void)!write(p[1], buf, strnlen(buf, sizeof buf));
        _exit(0);
    }
    close(p[1]);
    char buf[4097];
    ssize_t n = read_until(p[0], buf, sizeof buf - 1, mono_ms() + timeout_ms);
    close(p[0]);
    if (n < 0)
        kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (n < 1 || (signed char)buf[0] == -128)
        return -1000;
    buf[n] = 0;
    if (outlen)
        snprintf(out, outlen, "%s", buf + 1);
    return (signed char)buf[0];
}
