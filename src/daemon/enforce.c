/*
 * enforce.c — turning each job's allocation into a CPU-time quota.
 *
 * The paper's token bucket (SLAQ §5) gives a job allocation × T CPU-seconds
 * per period T. The kernel does exactly this with the CFS bandwidth
 * controller, so where a cgroup is writable slaqd uses it:
 *
 *   cgroup2  STATE-hash group under our own cgroup, `cpu.max` per job
 *   cgroup1  the same under the v1 `cpu` hierarchy, `cpu.cfs_quota_us`
 *   signal   no cgroup: slaqd keeps the token bucket itself, measuring the
 *            CPU time of the job's process group from /proc every tick and
 *            holding the group with SIGSTOP while the balance is not
 *            positive (a duty cycle, coarser than the kernel's)
 *   none     allocations are only advisory (jobs learn them through the
 *            client and may size their thread pools to them)
 *
 * With a cgroup, a share is by default a CPU *weight* proportional to the
 * allocation (`cpu.weight`, v1 `cpu.shares`), with a quota only where a
 * job has a max_cores cap: the kernel then divides a busy machine in the
 * allocated proportions, and a share its job cannot use at the moment
 * (a single-threaded phase, I/O, data loading) goes to the other jobs
 * instead of idling. `--share quota` makes the share a hard quota
 * (SLAQ's token bucket, exactly), which leaves such cycles idle.
 *
 * `auto` tries them in that order. The cgroup directory is named after a
 * hash of the state directory, so two slaqds on one machine never share
 * one, and a restarted slaqd finds its jobs' groups again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/loop.h"
#include "daemon/record.h"

#define ENF_PERIOD_US 100000u

static const char *const mode_names[] = {"auto", "cgroup2", "cgroup1",
                                         "signal", "none"};

const char *enf_mode_name(sd_enforce_mode m)
{
    return mode_names[m];
}

int enf_mode_parse(const char *s, sd_enforce_mode *out)
{
    for (int i = 0; i <= SD_ENF_NONE; i++)
        if (!strcmp(s, mode_names[i])) {
            *out = (sd_enforce_mode)i;
            return 0;
        }
    return -1;
}

/* snprintf for paths and messages: -1 if the result did not fit. */
static int fmt(char *out, size_t len, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static int fmt(char *out, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(out, len, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < len ? 0 : -1;
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    ssize_t n = write(fd, text, len);
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)len ? 0 : -1;
}

static int read_file(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return 0;
}

/* Our cgroup path in the hierarchy whose /proc/self/cgroup line matches
 * (v2: "0::PATH"; v1: a controller list containing "cpu"). */
static int own_cgroup(int v2, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[4096];
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = 0;
        const char *ctrls = c1 + 1;
        int match = 0;
        if (v2) {
            match = !strcmp(line, "0") && !*ctrls;
        } else {
            char tmp[256];
            fmt(tmp, sizeof tmp, "%s", ctrls);
            for (char *t = strtok(tmp, ","); t; t = strtok(NULL, ","))
                if (!strcmp(t, "cpu"))
                    match = 1;
        }
        if (match) {
            fmt(out, len, "%s", strcmp(c2 + 1, "/") ? c2 + 1 : "");
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

/* The mount point of the cgroup2 hierarchy, or of the v1 one with cpu. */
static int cgroup_mount(int v2, char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char line[4096];
    int found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        char mnt[2048], fstype[64], src[256], opts[1024] = "";
        if (sscanf(line, "%*s %*s %*s %*s %2047s", mnt) != 1 ||
            sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) < 2)
            continue;
        if (v2 && !strcmp(fstype, "cgroup2")) {
            fmt(out, len, "%s", mnt);
            found = 0;
        } else if (!v2 && !strcmp(fstype, "cgroup")) {
            for (char *t = strtok(opts, ","); t; t = strtok(NULL, ","))
                if (!strcmp(t, "cpu")) {
                    fmt(out, len, "%s", mnt);
                    found = 0;
                }
        }
    }
    fclose(f);
    return found;
}

/* Whether the space-separated list `list` contains `word`. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ' ||
                                            p[n] == '\n'))
            return 1;
    return 0;
}

static unsigned long state_hash(const char *dir)
{
    char *abs = realpath(dir, NULL);
    const char *s = abs ? abs : dir;
    unsigned long h = 14695981039346656037ul;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ul;
    free(abs);
    return h & 0xffffffffffful;
}

/* Tries one cgroup version; on success fills e->cg_base. */
static int try_cgroup(sd_daemon *d, int v2, char *why, size_t whylen)
{
    char mnt[2048], own[2048], base[4096], path[4200], buf[512];
    if (cgroup_mount(v2, mnt, sizeof mnt) < 0) {
        fmt(why, whylen, "no %s hierarchy mounted", v2 ? "cgroup2" :
                 "cgroup v1 cpu");
        return -1;
    }
    if (own_cgroup(v2, own, sizeof own) < 0) {
        fmt(why, whylen, "not in a %s cgroup", v2 ? "v2" : "v1 cpu");
        return -1;
    }
    if (v2) {
        /* The cpu controller must reach our cgroup's children: ours must
         * have it and enable it below (allowed for the root cgroup, or a
         * cgroup delegated to slaqd alone, e.g. systemd's Delegate=yes). */
        fmt(path, sizeof path, "%s%s/cgroup.controllers", mnt, own);
        if (read_file(path, buf, sizeof buf) < 0 || !has_word(buf, "cpu")) {
            fmt(why, whylen, "cgroup2 at %s%s has no cpu controller", mnt,
                own);
            return -1;
        }
        fmt(path, sizeof path, "%s%s/cgroup.subtree_control", mnt, own);
        if (read_file(path, buf, sizeof buf) < 0 ||
            (!has_word(buf, "cpu") && write_file(path, "+cpu") < 0)) {
            fmt(why, whylen, "cannot enable cpu in %s: %s (other processes "
                "share slaqd's cgroup?)", path, strerror(errno));
            return -1;
        }
    }
    fmt(base, sizeof base, "%s%s/slaq-%lx", mnt, own,
             state_hash(d->cfg.state_dir));
    if (mkdir(base, 0755) < 0 && errno != EEXIST) {
        fmt(why, whylen, "cannot create %s: %s", base, strerror(errno));
        return -1;
    }
    if (v2) {
        fmt(path, sizeof path, "%s/cgroup.subtree_control", base);
        if (write_file(path, "+cpu") < 0) {
            fmt(why, whylen, "cannot enable cpu in %s: %s", path,
                     strerror(errno));
            rmdir(base);
            return -1;
        }
        /* A job's group must then offer cpu.max: try one. */
        char probe[4300];
        fmt(probe, sizeof probe, "%s/probe", base);
        fmt(path, sizeof path, "%s/cpu.max", probe);
        int ok = (mkdir(probe, 0755) == 0 || errno == EEXIST) &&
                 access(path, W_OK) == 0;
        rmdir(probe);
        if (!ok) {
            fmt(why, whylen, "%s is not writable", path);
            rmdir(base);
            return -1;
        }
    } else {
        fmt(path, sizeof path, "%s/cpu.cfs_quota_us", base);
        if (access(path, W_OK) < 0) {
            fmt(why, whylen, "%s is not writable", path);
            rmdir(base);
            return -1;
        }
    }
    /* The group of all jobs is held to the cores slaqd manages, so that
     * weights divide --cores, not the whole machine. */
    double online = (double)sysconf(_SC_NPROCESSORS_ONLN);
    char val[64];
    if (d->cfg.sched.cores < online)
        fmt(val, sizeof val, v2 ? "%lu %u" : "%lu",
            (unsigned long)(d->cfg.sched.cores * ENF_PERIOD_US),
            ENF_PERIOD_US);
    else
        fmt(val, sizeof val, v2 ? "max %u" : "-1", ENF_PERIOD_US);
    int rc = 0;
    if (!v2) {
        char per[32];
        fmt(path, sizeof path, "%s/cpu.cfs_period_us", base);
        fmt(per, sizeof per, "%u", ENF_PERIOD_US);
        rc = write_file(path, per);
    }
    fmt(path, sizeof path, v2 ? "%s/cpu.max" : "%s/cpu.cfs_quota_us", base);
    rc |= write_file(path, val);
    /* Against the rest of the machine the jobs together weigh like as
     * many busy processes as the cores slaqd manages (a process's weight
     * is 100, or 1024 shares), not like one. */
    fmt(path, sizeof path, v2 ? "%s/cpu.weight" : "%s/cpu.shares", base);
    fmt(val, sizeof val, "%lu", enf_weight(v2, d->cfg.sched.cores));
    if (rc < 0 || write_file(path, val) < 0) {
        fmt(why, whylen, "cannot limit %s to %g cores: %s", base,
            d->cfg.sched.cores, strerror(errno));
        rmdir(base);
        return -1;
    }
    d->enf.cg_base = strdup(base);
    if (d->cfg.share_quota)
        fmt(d->enf.detail, sizeof d->enf.detail, "CPU quota per %u ms "
            "period in %s", ENF_PERIOD_US / 1000, base);
    else
        fmt(d->enf.detail, sizeof d->enf.detail, "CPU weights "
            "proportional to the allocation in %s (idle cycles shared)",
            base);
    return d->enf.cg_base ? 0 : -1;
}

int enf_init(sd_daemon *d, sd_enforce_mode mode, char *err, size_t errlen)
{
    char why2[512] = "", why1[512] = "";
    d->enf.period_us = ENF_PERIOD_US;
    if (mode == SD_ENF_AUTO || mode == SD_ENF_CGROUP2) {
        if (try_cgroup(d, 1, why2, sizeof why2) == 0) {
            d->enf.mode = SD_ENF_CGROUP2;
            return 0;
        }
        if (mode == SD_ENF_CGROUP2) {
            fmt(err, errlen, "%s", why2);
            return -1;
        }
    }
    if (mode == SD_ENF_AUTO || mode == SD_ENF_CGROUP1) {
        if (try_cgroup(d, 0, why1, sizeof why1) == 0) {
            d->enf.mode = SD_ENF_CGROUP1;
            return 0;
        }
        if (mode == SD_ENF_CGROUP1) {
            fmt(err, errlen, "%s", why1);
            return -1;
        }
    }
    if (mode == SD_ENF_NONE) {
        d->enf.mode = SD_ENF_NONE;
        fmt(d->enf.detail, sizeof d->enf.detail, "allocations are "
                 "advisory only");
        return 0;
    }
    d->enf.mode = SD_ENF_SIGNAL;
    fmt(d->enf.detail, sizeof d->enf.detail, "SIGSTOP/SIGCONT duty "
             "cycle every %.0f ms%s%s%s%s", SD_TICK_S * 1e3,
             *why2 ? "; cgroup2: " : "", why2, *why1 ? "; cgroup1: " : "",
             why1);
    return 0;
}

static void job_dir(const sd_enforcer *e, int64_t id, char *out, size_t len)
{
    fmt(out, len, "%s/job-%lld", e->cg_base, (long long)id);
}

int enf_prepare(sd_daemon *d, sd_job *j)
{
    if (d->enf.mode != SD_ENF_CGROUP1 && d->enf.mode != SD_ENF_CGROUP2)
        return 0;
    char dir[4200];
    job_dir(&d->enf, j->id, dir, sizeof dir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -1;
    j->enf.cg_ready = 1;
    return 0;
}

int enf_child_join(const sd_enforcer *e, int64_t id)
{
    if (e->mode != SD_ENF_CGROUP1 && e->mode != SD_ENF_CGROUP2)
        return 0;
    char path[4300], pid[32];
    job_dir(e, id, path, sizeof path);
    strcat(path, "/cgroup.procs");
    fmt(pid, sizeof pid, "%d\n", (int)getpid());
    return write_file(path, pid);
}

int enf_adopt(sd_daemon *d, sd_job *j)
{
    if (d->enf.mode == SD_ENF_SIGNAL && j->proc.pid > 0 &&
        SD_ACTIVE(j->state)) {
        /* The previous slaqd may have died while holding it stopped. */
        kill(-j->proc.pid, SIGCONT);
        return 0;
    }
    if (d->enf.mode == SD_ENF_CGROUP1 || d->enf.mode == SD_ENF_CGROUP2) {
        char dir[4200];
        struct stat st;
        job_dir(&d->enf, j->id, dir, sizeof dir);
        j->enf.cg_ready = stat(dir, &st) == 0;
    }
    return 0;
}

/* The cgroup weight of an allocation: cgroup2's cpu.weight (1..10000,
 * 100 per core) or cgroup1's cpu.shares (2..262144, 1024 per core). */
unsigned long enf_weight(int v2, double cores)
{
    double w = cores * (v2 ? 100 : 1024);
    double lo = v2 ? 1 : 2, hi = v2 ? 10000 : 262144;
    w = w < lo ? lo : w > hi ? hi : w;
    return (unsigned long)(w + 0.5);
}

void enf_apply(sd_daemon *d, sd_job *j, double cores)
{
    const sd_enforcer *e = &d->enf;
    if (!j->proc.managed)
        return;
    if (e->mode == SD_ENF_SIGNAL) /* enf_tick enforces it */
        return;
    if (!j->enf.cg_ready)
        return;
    int v2 = e->mode == SD_ENF_CGROUP2;
    /* The quota: the share itself, or only the job's cap, or none. */
    double cap = d->cfg.share_quota ? cores : j->goals.max_cores;
    int capped = cap < d->cfg.sched.cores;
    char path[4300], val[64];
    unsigned long quota = (unsigned long)(cap * e->period_us);
    if (quota < 1000) /* the kernel's minimum quota is 1 ms */
        quota = 1000;
    job_dir(e, j->id, path, sizeof path);
    size_t n = strlen(path);
    int rc;
    fmt(path + n, sizeof path - n, v2 ? "/cpu.weight" : "/cpu.shares");
    fmt(val, sizeof val, "%lu", enf_weight(v2, cores));
    rc = write_file(path, val);
    if (v2) {
        fmt(path + n, sizeof path - n, "/cpu.max");
        if (capped)
            fmt(val, sizeof val, "%lu %u", quota, e->period_us);
        else
            fmt(val, sizeof val, "max %u", e->period_us);
        rc |= write_file(path, val);
    } else {
        fmt(path + n, sizeof path - n, "/cpu.cfs_period_us");
        fmt(val, sizeof val, "%u", e->period_us);
        rc |= write_file(path, val);
        fmt(path + n, sizeof path - n, "/cpu.cfs_quota_us");
        if (capped)
            fmt(val, sizeof val, "%lu", quota);
        else
            fmt(val, sizeof val, "-1");
        rc |= write_file(path, val);
    }
    if (rc < 0)
        sd_log(d, 0, "job %lld: cannot set CPU share in %s: %s",
               (long long)j->id, path, strerror(errno));
}

/* Fields after the command name in /proc/PID/stat, split on spaces. */
static int proc_stat(pid_t pid, char **fields, int max, char *buf, size_t len)
{
    char path[64];
    fmt(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (read_file(path, buf, len) < 0)
        return -1;
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    int n = 0;
    for (char *t = strtok(p + 1, " "); t && n < max; t = strtok(NULL, " "))
        fields[n++] = t;
    return n;
}

typedef struct enf_group {
    pid_t pgid;
    sd_job *job;
    double cpu;
} enf_group;

static int group_cmp(const void *a, const void *b)
{
    pid_t x = ((const enf_group *)a)->pgid, y = ((const enf_group *)b)->pgid;
    return (x > y) - (x < y);
}

/*
 * CPU-seconds used so far by the live processes of each job's process
 * group (a job is often a shell running the real program), from one scan
 * of /proc for all jobs. A process that exits takes its time with it, so
 * the sum can fall; the caller counts only increases. Its cost grows with
 * the machine's process count, which is why only the signal backend,
 * where nothing else measures, pays it.
 */
static void group_cpu(enf_group *g, size_t n)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return;
    double ticks = (double)sysconf(_SC_CLK_TCK);
    struct dirent *e;
    while ((e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        char buf[1024], *f[20];
        if (*end || pid <= 0 || proc_stat((pid_t)pid, f, 20, buf,
                                          sizeof buf) < 13)
            continue;
        enf_group key = {.pgid = (pid_t)atol(f[2])}; /* field 5, pgrp */
        enf_group *hit = bsearch(&key, g, n, sizeof *g, group_cmp);
        if (hit)
            hit->cpu += (strtod(f[11], NULL) + strtod(f[12], NULL)) / ticks;
    }
    closedir(proc);
}

void enf_tick(sd_daemon *d, double dt)
{
    if (d->enf.mode != SD_ENF_SIGNAL)
        return;
    size_t n = 0, count = slaq_sched_count(d->sched);
    enf_group *g = count ? calloc(count, sizeof *g) : NULL;
    if (!g)
        return;
    for (size_t i = 0; i < count; i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->proc.managed && j->proc.pid > 0 && !SD_REMOTE(j))
            g[n++] = (enf_group){.pgid = j->proc.pid, .job = j};
    }
    qsort(g, n, sizeof *g, group_cmp);
    group_cpu(g, n);
    for (size_t i = 0; i < n; i++) {
        sd_job *j = g[i].job;
        double used = g[i].cpu - j->enf.sig_cpu_prev;
        j->enf.sig_cpu_prev = g[i].cpu;
        if (!j->enf.sig_seen) { /* the first measurement only sets the base */
            j->enf.sig_seen = 1;
            continue;
        }
        double burst = j->enf.alloc * ENF_PERIOD_US * 1e-6;
        j->enf.sig_tokens += j->enf.alloc * dt - (used > 0 ? used : 0);
        if (j->enf.sig_tokens > burst)
            j->enf.sig_tokens = burst;
        if (j->proc.suspended == SD_SUSP_SIGNAL)
            continue; /* SIGSTOPped by a suspend until its resume */
        /* Not before its first allocation, nor while it is stopping. */
        int hold = j->enf.sig_tokens <= 0 && j->state == SD_RUNNING &&
                   j->enf.nspark > 0;
        j->enf.sig_held |= hold;
        if (hold != j->enf.sig_stopped) {
            kill(-j->proc.pid, hold ? SIGSTOP : SIGCONT);
            j->enf.sig_stopped = hold;
        }
    }
    free(g);
}

/* The kernel's count of periods in which the job's group hit its quota
 * (cpu.stat's nr_throttled, in cgroup2 and in cgroup1's cpu controller). */
static int cg_nr_throttled(const sd_enforcer *e, const sd_job *j,
                           uint64_t *out)
{
    char path[4300], buf[1024];
    job_dir(e, j->id, path, sizeof path);
    strcat(path, "/cpu.stat");
    if (read_file(path, buf, sizeof buf) < 0)
        return -1;
    const char *p = strstr(buf, "nr_throttled ");
    if (!p)
        return -1;
    *out = strtoull(p + strlen("nr_throttled "), NULL, 10);
    return 0;
}

/*
 * Whether enforcement held the job back since the previous epoch: the
 * signal backend held its group at some tick, or the kernel throttled its
 * cgroup in some period. This, not the core's token bucket (which only
 * counts the CPU time a job reports), is what `throttled` shows.
 */
void enf_epoch(sd_daemon *d, sd_job *j)
{
    const sd_enforcer *e = &d->enf;
    j->enf.throttled = 0;
    if (!j->proc.managed || SD_REMOTE(j))
        return;
    if (e->mode == SD_ENF_SIGNAL) {
        j->enf.throttled = j->enf.sig_held;
        j->enf.sig_held = j->enf.sig_stopped;
        return;
    }
    uint64_t nr;
    if ((e->mode == SD_ENF_CGROUP1 || e->mode == SD_ENF_CGROUP2) &&
        j->enf.cg_ready && cg_nr_throttled(e, j, &nr) == 0) {
        j->enf.throttled = nr > j->enf.cg_nr_throttled;
        j->enf.cg_nr_throttled = nr;
    }
}

void enf_release(sd_daemon *d, sd_job *j)
{
    if (j->enf.sig_stopped) {
        kill(-j->proc.pid, SIGCONT);
        j->enf.sig_stopped = 0;
    }
    if (!j->enf.cg_ready)
        return;
    char dir[4200];
    job_dir(&d->enf, j->id, dir, sizeof dir);
    if (rmdir(dir) < 0 && errno != ENOENT)
        sd_log(d, 1, "job %lld: cgroup %s kept: %s", (long long)j->id, dir,
               strerror(errno));
    j->enf.cg_ready = 0;
}

void enf_shutdown(sd_daemon *d)
{
    /* Jobs keep running (and keep their quota) across a restart; a stopped
     * one is let go so that it is not frozen while nobody schedules it. */
    for (size_t i = 0; d->sched && i < slaq_sched_count(d->sched); i++) {
        sd_job *j = slaq_job_user(slaq_sched_job(d->sched, i));
        if (j->enf.sig_stopped && j->proc.suspended != SD_SUSP_SIGNAL)
            kill(-j->proc.pid, SIGCONT);
    }
    if (d->enf.cg_base)
        rmdir(d->enf.cg_base); /* fails, as it should, while jobs remain */
    free(d->enf.cg_base);
    d->enf.cg_base = NULL;
}

unsigned long long enf_proc_start(pid_t pid)
{
    char buf[1024], *f[20];
    if (proc_stat(pid, f, 20, buf, sizeof buf) < 20)
        return 0;
    if (f[0][0] == 'Z' || f[0][0] == 'X') /* exited, not yet reaped */
        return 0;
    return strtoull(f[19], NULL, 10); /* field 22, starttime */
}
