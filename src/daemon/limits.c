/*
 * limits.c — per-user limits (limits.h): the jobs and tasks one user may
 * hold, the rate of their reports, the size of their logs, and the free
 * space the state file system keeps for state.db.
 *
 * Logs are the part that needs care. A job writes its logs itself,
 * through the descriptors slaqd created for it (spawn.c), so slaqd cannot
 * refuse a write; it keeps the same files open and cuts them back every
 * LIMIT_CHECK_S: a file over --log-bytes to that size, and while its
 * owner is over --user-log-bytes or the disk is under --disk-reserve, to
 * the size it had at the previous check. The cut ends with one line that
 * says why; the same line lands in the same place at every cut, so a log
 * cut many times says it once. Between two checks a job can still write
 * what its disk takes in LIMIT_CHECK_S; a commit that fails for want of
 * room has the logs cut at once and is tried again (limit_disk_full), so
 * that a job's output does not make another user's submit fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "daemon/clock.h"
#include "daemon/limits.h"
#include "daemon/record.h"
#include "daemon/store.h"

/* The entry of uid in d->lim_users, added if missing; NULL when out of
 * memory. */
static limit_user *user_use(sd_daemon *d, uid_t uid)
{
    for (size_t i = 0; i < d->nlim_users; i++)
        if (d->lim_users[i].uid == uid)
            return &d->lim_users[i];
    if (d->nlim_users == d->caplim_users) {
        size_t cap = d->caplim_users ? 2 * d->caplim_users : 8;
        limit_user *v = realloc(d->lim_users, cap * sizeof *v);
        if (!v)
            return NULL;
        d->lim_users = v;
        d->caplim_users = cap;
    }
    limit_user *u = &d->lim_users[d->nlim_users++];
    memset(u, 0, sizeof *u);
    u->uid = uid;
    u->tokens = 2 * d->cfg.user_reports;
    u->t = sd_mono();
    return u;
}

/* What uid holds: jobs running, stopping or pending (tasks apart), and
 * array tasks not yet ended. */
static void held(const sd_daemon *d, uid_t uid, long *jobs, long *tasks)
{
    *jobs = *tasks = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        const sd_job *j = d->jobs[i];
        if (j && j->uid == uid && !j->array &&
            (SD_ACTIVE(j->state) || j->state == SD_PENDING))
            (*jobs)++;
    }
    for (size_t i = 0; i < d->narrays; i++) {
        const sd_array *a = d->arrays[i];
        if (a->uid == uid)
            *tasks += (a->cancelled ? 0 : a->last - a->next + 1) +
                      (long)a->running;
    }
}

int limit_submit(sd_daemon *d, const sd_user *who, long tasks, char *err,
                 size_t errlen)
{
    if (who->admin)
        return 0;
    long jobs, have;
    held(d, who->uid, &jobs, &have);
    if (tasks > 0 && (double)(have + tasks) > d->cfg.user_tasks) {
        d->submits_limited_total++;
        snprintf(err, errlen, "limit reached: %s holds %ld array tasks and "
                 "may hold at most %.0f (slaqd --user-tasks); this array has "
                 "%ld", who->name, have, d->cfg.user_tasks, tasks);
        return -1;
    }
    if (tasks == 0 && (double)jobs >= d->cfg.user_jobs) {
        d->submits_limited_total++;
        snprintf(err, errlen, "limit reached: %s holds %ld jobs (running, "
                 "stopping or pending) and may hold at most %.0f (slaqd "
                 "--user-jobs); wait for some to end or cancel them",
                 who->name, jobs, d->cfg.user_jobs);
        return -1;
    }
    return 0;
}

int limit_report(sd_daemon *d, const sd_job *j)
{
    if (j->uid == 0 || j->uid == geteuid())
        return 0; /* root's and slaqd's own user's jobs */
    limit_user *u = user_use(d, j->uid);
    if (!u)
        return 0;
    double now = sd_mono(), rate = d->cfg.user_reports;
    u->tokens = fmin(2 * rate, u->tokens + (now - u->t) * rate);
    u->t = now;
    if (u->tokens < 1) {
        u->refused++;
        d->reports_limited_total++;
        return -1;
    }
    u->tokens -= 1;
    return 0;
}

void limit_logs_take(sd_job *j, int out, int err)
{
    j->proc.log_fd[0] = out;
    j->proc.log_fd[1] = err;
    j->proc.log_seen[0] = j->proc.log_seen[1] = 0;
}

/* One log file of job j opened again as root without following anything
 * the user put there: a regular file of the job's owner, or -1. */
static int reopen_one(int dirfd, const char *name, uid_t owner)
{
    int fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW |
                                     O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
                    st.st_uid != owner || st.st_nlink != 1)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

void limit_logs_reopen(sd_daemon *d, sd_job *j)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/jobs/%lld", d->cfg.state_dir,
             (long long)j->id);
    /* STATE/jobs is slaqd's: the user cannot replace their directory. */
    int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd < 0)
        return;
    static const char *const names[] = {"stdout.log", "stderr.log"};
    for (int i = 0; i < 2; i++) {
        j->proc.log_fd[i] = reopen_one(dirfd, names[i], j->uid);
        struct stat st;
        j->proc.log_seen[i] =
            j->proc.log_fd[i] >= 0 && fstat(j->proc.log_fd[i], &st) == 0
                ? (double)st.st_size
                : 0;
    }
    close(dirfd);
}

/* Cuts log file fd back to `size` bytes, the last of them a line saying
 * why (the same place each time, so a log cut again says it once).
 * 1 if bytes were removed. */
static int cut(int fd, double size, double now_size, const char *why)
{
    char note[256];
    int n = snprintf(note, sizeof note, "\n[slaq: output dropped here: %s]\n",
                     why);
    if (n < 0 || (size_t)n >= sizeof note)
        n = (int)sizeof note - 1;
    off_t at = size > n ? (off_t)size - n : 0;
    if (ftruncate(fd, at) < 0)
        return 0;
    (void)!pwrite(fd, note, (size_t)n, at);
    return now_size > size;
}

/* The free bytes to keep for state.db: --disk-reserve, at most an eighth
 * of the file system; and whether fewer are free now (*need: how many
 * fewer). Keeps the free bytes in d->state_free (slaq_state_free_bytes)
 * when they can be read. */
static int disk_short(sd_daemon *d, double *reserve, double *need)
{
    struct statvfs sv;
    *reserve = d->cfg.disk_reserve;
    *need = 0;
    if (statvfs(d->cfg.state_dir, &sv) < 0)
        return 0;
    double total = (double)sv.f_blocks * (double)sv.f_frsize;
    double free_b = (double)sv.f_bavail * (double)sv.f_frsize;
    d->state_free = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
    *reserve = fmin(*reserve, total / 8);
    *need = *reserve - free_b;
    return free_b < *reserve;
}

static int disk_low(sd_daemon *d, double *reserve)
{
    double need;
    return disk_short(d, reserve, &need);
}

/* Holds job j's two logs to their limits (limit_tick). */
static void check_job(sd_daemon *d, sd_job *j, int low, double reserve,
                      limit_user *u)
{
    char why[160];
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (j->proc.log_fd[i] < 0 || fstat(j->proc.log_fd[i], &st) < 0)
            continue;
        double size = (double)st.st_size, to = -1;
        if (size > d->cfg.log_bytes) {
            to = d->cfg.log_bytes;
            snprintf(why, sizeof why, "the job's log reached %.0f bytes "
                     "(slaqd --log-bytes)", d->cfg.log_bytes);
        } else if (low && size > j->proc.log_seen[i]) {
            to = j->proc.log_seen[i];
            snprintf(why, sizeof why, "the state file system has less than "
                     "%.0f bytes free (slaqd --disk-reserve)", reserve);
        } else if (u && u->log_bytes > d->cfg.user_log_bytes &&
                   size > j->proc.log_seen[i]) {
            to = j->proc.log_seen[i];
            snprintf(why, sizeof why, "%s's logs reached %.0f bytes (slaqd "
                     "--user-log-bytes)", j->user ? j->user : "its user",
                     d->cfg.user_log_bytes);
        }
        if (to >= 0) {
            if (cut(j->proc.log_fd[i], to, size, why)) {
                d->logs_cut_total++;
                d->lim_freed += size - to;
            }
            size =
                fstat(j->proc.log_fd[i], &st) == 0 ? (double)st.st_size : to;
        }
        j->proc.log_seen[i] = size;
    }
}

void limit_logs_close(sd_daemon *d, sd_job *j)
{
    if (d && (j->proc.log_fd[0] >= 0 || j->proc.log_fd[1] >= 0)) {
        /* Its last output is held to the limits too: a job that filled
         * the disk and died of it leaves no full disk behind. */
        double reserve;
        int low = disk_low(d, &reserve);
        check_job(d, j, low, reserve, user_use(d, j->uid));
    }
    j->proc.log_final = 0;
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (j->proc.log_fd[i] < 0)
            continue;
        if (fstat(j->proc.log_fd[i], &st) == 0)
            j->proc.log_final += (double)st.st_size;
        close(j->proc.log_fd[i]);
        j->proc.log_fd[i] = -1;
    }
}

/*
 * Still under the reserve after every growing log was cut back: a log
 * that filled the disk between two looks is its largest, and it gives
 * back what the reserve lacks (its start is kept, its end cut).
 */
static void free_reserve(sd_daemon *d)
{
    double reserve, need;
    if (!disk_short(d, &reserve, &need))
        return;
    sd_job *big = NULL;
    int which = 0;
    double most = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        for (int f = 0; j && f < 2; f++)
            if (j->proc.log_fd[f] >= 0 && j->proc.log_seen[f] > most) {
                most = j->proc.log_seen[f];
                big = j;
                which = f;
            }
    }
    if (!big)
        return;
    char why[160];
    snprintf(why, sizeof why, "the state file system has less than %.0f "
             "bytes free (slaqd --disk-reserve)", reserve);
    double to = fmax(0, most - need - 1048576);
    if (cut(big->proc.log_fd[which], to, most, why)) {
        d->logs_cut_total++;
        d->lim_freed += most - to;
    }
    big->proc.log_seen[which] = to;
}

/* One pass over the running jobs' logs. */
static void check_all(sd_daemon *d)
{
    double reserve;
    int low = disk_low(d, &reserve);
    for (size_t i = 0; i < d->nlim_users; i++)
        d->lim_users[i].log_bytes = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        if (!j || (j->proc.log_fd[0] < 0 && j->proc.log_fd[1] < 0 &&
                   !j->proc.log_final))
            continue;
        limit_user *u = user_use(d, j->uid);
        if (j->proc.log_fd[0] >= 0 || j->proc.log_fd[1] >= 0)
            check_job(d, j, low, reserve, u);
        if (u)
            u->log_bytes +=
                j->proc.log_final + j->proc.log_seen[0] + j->proc.log_seen[1];
    }
    if (low)
        free_reserve(d);
}

void limit_tick(sd_daemon *d)
{
    double now = sd_mono();
    if (now - d->lim_checked < LIMIT_CHECK_S)
        return;
    d->lim_checked = now;
    check_all(d);
}

double limit_disk_full(sd_daemon *d)
{
    d->lim_checked = sd_mono();
    d->lim_freed = 0;
    check_all(d);
    return d->lim_freed;
}

/* SIGSTOP (stop) or SIGCONT the process groups of the running local jobs
 * (those with logs), none already stopped by slaqd (a signal suspend, or
 * signal enforcement's duty cycle: those are left as they are). */
static void pause_writers(sd_daemon *d, int stop)
{
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        if (j && j->proc.log_paused == !stop && j->proc.pid > 0 &&
            (stop
                 ? j->proc.log_fd[0] >= 0 &&
                       j->proc.suspended == SD_SUSP_NONE && !j->enf.sig_stopped
                 : 1)) {
            kill(-j->proc.pid, stop ? SIGSTOP : SIGCONT);
            j->proc.log_paused = stop;
        }
    }
}

int limit_flush(sd_daemon *d)
{
    if (store_flush(d->store) == 0)
        return 0;
    /* A job writing at the disk's speed could fill again what its cut
     * gave back before the commit takes it: the writers wait the few
     * milliseconds of the commit. */
    pause_writers(d, 1);
    int rc = -1;
    if (limit_disk_full(d) > 0) {
        store_retry_now(d->store);
        rc = store_flush(d->store);
    }
    pause_writers(d, 0);
    return rc;
}

json_t *limit_json(sd_daemon *d)
{
    const sd_config *c = &d->cfg;
    json_t *users = json_array();
    for (size_t i = 0; i < d->nlim_users; i++) {
        long jobs, tasks;
        held(d, d->lim_users[i].uid, &jobs, &tasks);
        json_array_append_new(users, json_pack(
            "{s:I, s:I, s:I, s:f, s:I}", "uid",
            (json_int_t)d->lim_users[i].uid, "jobs", (json_int_t)jobs,
            "tasks", (json_int_t)tasks, "log_bytes",
            d->lim_users[i].log_bytes, "reports_refused",
            (json_int_t)d->lim_users[i].refused));
    }
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o}",
                     "user_jobs", c->user_jobs, "user_tasks", c->user_tasks,
                     "user_reports", c->user_reports, "log_bytes",
                     c->log_bytes, "user_log_bytes", c->user_log_bytes,
                     "disk_reserve", c->disk_reserve, "keep_jobs_per_user",
                     c->keep_jobs, "users", users);
}

void limit_free(sd_daemon *d)
{
    free(d->lim_users);
    d->lim_users = NULL;
    d->nlim_users = d->caplim_users = 0;
}
