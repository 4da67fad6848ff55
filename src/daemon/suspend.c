/*
 * suspend.c — suspending and resuming jobs slaqd started.
 *
 * Two ways, as a sweep (docs/sweep-cli.md) or a user (`slaq suspend`)
 * needs:
 *
 *   signal      SIGSTOP to the job's process group; it keeps its memory
 *               and its place on this machine and resumes with SIGCONT.
 *               While suspended its allocation is held at ~0 cores (its
 *               cores go to the others) and enforcement leaves it stopped.
 *               The latency is the time until the kernel shows the group
 *               leader stopped (state T in /proc/PID/stat).
 *
 *   checkpoint  the job is asked to stop (reason "suspend"); slaq-train
 *               writes its checkpoint to $SLAQ_CHECKPOINT_DIR (slaqd sets
 *               STATE/checkpoints) and exits; the job ends `stopped`
 *               (reason suspend). Resuming starts its command again as a
 *               new job, with the checkpoint renamed to the new job's id,
 *               so the run continues where it was (on any machine sharing
 *               the directory). The latency is the time until the process
 *               has exited.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"

#define SUSPENDED_CORES 1e-6

/* The state letter of a process (/proc/PID/stat's third field), or 0. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    return p && p[1] == ' ' ? p[2] : 0;
}

void sd_checkpoint_path(const sd_daemon *d, uid_t uid, int64_t id, char *out,
                        size_t len)
{
    char dir[4096];
    job_checkpoint_dir(d, uid, dir, sizeof dir);
    snprintf(out, len, "%s/job-%lld.ckpt", dir, (long long)id);
}

int job_suspend(sd_daemon *d, sd_job *j, int checkpoint, double *latency_ms,
                char *err, size_t errlen)
{
    *latency_ms = NAN;
    if (j->state != SD_RUNNING) {
        snprintf(err, errlen, "job %lld is %s; only a running job can be "
                 "suspended", (long long)j->id, sd_state_name(j->state));
        return -1;
    }
    if (!j->managed || j->pid <= 0) {
        snprintf(err, errlen, "job %lld was not started by slaqd (it "
                 "attached itself), so slaqd cannot suspend it",
                 (long long)j->id);
        return -1;
    }
    if (j->suspended) {
        snprintf(err, errlen, "job %lld is already suspended",
                 (long long)j->id);
        return -1;
    }
    double t0 = sd_mono();
    if (checkpoint) {
        j->suspended = SD_SUSP_CHECKPOINT;
        j->suspend_t = t0;
        store_event(d->store, sd_now(), j->id, "suspend", "checkpoint");
        job_stop(d, j, "suspend");
        return 0;
    }
    if (kill(-j->pid, SIGSTOP) < 0 && kill(j->pid, SIGSTOP) < 0) {
        snprintf(err, errlen, "cannot stop process group %d: %s",
                 (int)j->pid, strerror(errno));
        return -1;
    }
    /* Stopped once the kernel says so (at most 2 s: a process in an
     * uninterruptible sleep stops when it leaves it). */
    while (proc_state(j->pid) != 'T' && proc_state(j->pid) != 't' &&
           sd_mono() - t0 < 2) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    *latency_ms = (sd_mono() - t0) * 1e3;
    j->suspended = SD_SUSP_SIGNAL;
    j->suspend_ms = *latency_ms;
    if (j->sj)
        slaq_job_set_max_cores(j->sj, SUSPENDED_CORES);
    char detail[64];
    snprintf(detail, sizeof detail, "signal %.3f ms", *latency_ms);
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "suspend", detail);
    store_flush(d->store);
    sd_log(d, 0, "job %lld: suspended (SIGSTOP, %.3f ms)", (long long)j->id,
           *latency_ms);
    return 0;
}

/* A checkpoint-suspended job's process exited: how long that took. */
void job_suspend_done(sd_daemon *d, sd_job *j)
{
    if (j->suspended != SD_SUSP_CHECKPOINT)
        return;
    j->suspend_ms = (sd_mono() - j->suspend_t) * 1e3;
    char path[4200], detail[96];
    struct stat st;
    sd_checkpoint_path(d, j->uid, j->id, path, sizeof path);
    long long size = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    j->checkpoint_bytes = size;
    snprintf(detail, sizeof detail, "checkpoint %.3f ms, %lld bytes",
             j->suspend_ms, size);
    store_event(d->store, sd_now(), j->id, "suspended", detail);
    sd_log(d, 0, "job %lld: suspended (%s)", (long long)j->id, detail);
}

sd_job *job_resume(sd_daemon *d, sd_job *j, char *err, size_t errlen)
{
    if (j->suspended == SD_SUSP_SIGNAL && j->state == SD_RUNNING) {
        if (kill(-j->pid, SIGCONT) < 0)
            kill(j->pid, SIGCONT);
        j->suspended = SD_SUSP_NONE;
        j->sig_stopped = 0; /* the duty cycle starts again from running */
        if (j->sj)
            slaq_job_set_max_cores(j->sj, j->max_cores);
        store_put_job(d->store, j);
        store_event(d->store, sd_now(), j->id, "resume", "signal");
        store_flush(d->store);
        sd_log(d, 0, "job %lld: resumed (SIGCONT)", (long long)j->id);
        return j;
    }
    if (j->suspended != SD_SUSP_CHECKPOINT || SD_ACTIVE(j->state)) {
        snprintf(err, errlen, "job %lld is not suspended%s", (long long)j->id,
                 j->suspended == SD_SUSP_CHECKPOINT
                     ? " yet (its checkpoint is being written)" : "");
        return NULL;
    }
    char from[4200], to[4200];
    int64_t next = (int64_t)d->njobs + 1; /* job_submit's id */
    sd_checkpoint_path(d, j->uid, j->id, from, sizeof from);
    sd_checkpoint_path(d, j->uid, next, to, sizeof to);
    if (access(from, R_OK) < 0) {
        snprintf(err, errlen, "job %lld left no checkpoint (%s: %s); its "
                 "program may not write one (slaq-train does, for logreg, "
                 "svm, svmpoly, linreg, mlpc and kmeans)", (long long)j->id,
                 from, strerror(errno));
        return NULL;
    }
    json_t *req = json_object();
    json_object_set_new(req, "cmd", json_loads(j->cmd, 0, NULL));
    json_object_set_new(req, "cwd", json_string(j->cwd));
    json_object_set_new(req, "name", json_string(j->name));
    json_object_set_new(req, "weight", json_real(j->weight));
    if (isfinite(j->max_cores))
        json_object_set_new(req, "max_cores", json_real(j->max_cores));
    json_object_set_new(req, "target_reduction", json_real(j->target));
    json_object_set_new(req, "max_iters",
                        json_integer((json_int_t)j->max_iters));
    if (rename(from, to) < 0) {
        snprintf(err, errlen, "cannot move the checkpoint %s to %s: %s",
                 from, to, strerror(errno));
        json_decref(req);
        return NULL;
    }
    sd_user owner; /* the continuation runs as the suspended job did */
    user_from_uid(d, j->uid, 0, &owner);
    sd_job *k = job_submit(d, req, &owner, err, errlen);
    json_decref(req);
    if (!k) {
        rename(to, from);
        return NULL;
    }
    j->suspended = SD_SUSP_NONE;
    j->continued_by = k->id;
    k->resumed_from = j->id;
    char detail[64];
    snprintf(detail, sizeof detail, "as job %lld", (long long)k->id);
    store_put_job(d->store, j);
    store_event(d->store, sd_now(), j->id, "resume", detail);
    snprintf(detail, sizeof detail, "job %lld's checkpoint",
             (long long)j->id);
    store_put_job(d->store, k);
    store_event(d->store, sd_now(), k->id, "resumed_from", detail);
    store_flush(d->store);
    sd_log(d, 0, "job %lld: resumed from its checkpoint as job %lld",
           (long long)j->id, (long long)k->id);
    return k;
}
