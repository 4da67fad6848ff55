/*
 * jobs.c — slaqd's job table: starting child processes, iteration
 * reports, stop conditions, exits, and re-adoption after a restart.
 *
 * A job is either managed (slaqd started it: its own session and process
 * group, logs under STATE/jobs/ID/, enforced quota) or attached (a process
 * that said hello without a job id; scheduled cooperatively, never
 * signalled). Active jobs (running or stopping) are in the core's
 * scheduler; every decision about cores is the core's: this file feeds
 * it reports and applies what its epoch returns (epoch.c calls
 * slaq_sched_epoch()).
 *
 * The modules that use the table (suspensions, arrays, the agents) are
 * above it: it calls none of them. What they do when a job ends, and a
 * controller's launch of a job on a node, come through the functions
 * epoch.c registers at start-up (d->job_ending, d->job_ended,
 * d->job_launch).
 *
 * A job is stopped in steps: a "stop" message through its client, SIGTERM
 * to its process group after the grace period (at once when it has no
 * client, or for `slaq cancel --now`), SIGKILL after another grace period.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "daemon/accounts.h"
#include "daemon/aqpd.h"
#include "daemon/clock.h"
#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/jobs.h"
#include "daemon/limits.h"
#include "daemon/loop.h"
#include "daemon/nodes.h"
#include "daemon/spawn.h"
#include "daemon/store.h"
#include "daemon/trace.h"
#include "daemon/users.h"
#include "slaq/deadline.h"

/* Makes d->jobs hold ids up to `last`, the new slots empty. 0, or -1 when
 * memory runs out (nothing changed). */
static int jobs_room(sd_daemon *d, uint64_t last)
{
    if (last <= d->capjobs)
        return 0;
    if (last > SIZE_MAX)
        return -1;
    size_t cap = grow_cap(d->capjobs, (size_t)last, 64);
    if (!cap || GROW_ARRAY(d->jobs, cap))
        return -1;
    memset(d->jobs + d->capjobs, 0, (cap - d->capjobs) * sizeof *d->jobs);
    d->capjobs = cap;
    return 0;
}

sd_job *job_new(sd_daemon *d, int64_t id)
{
    if (jobs_room(d, (uint64_t)id) < 0)
        return NULL;
    sd_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->id = id;
    j->goals.weight = 1;
    j->goals.max_cores = INFINITY;
    j->hist.last_loss = j->hist.first_loss = NAN;
    j->hist.last_metric = NAN;
    slaq_goal_init(&j->goals.goal);
    j->proc.suspend_ms = NAN;
    j->proc.checkpoint_bytes = -1;
    j->hist.reduction = 0;
    j->hist.end_loss = NAN;
    j->place.node = -1;
    j->place.move_to = j->place.move_from = -1;
    j->place.move_s = NAN;
    j->proc.log_fd[0] = j->proc.log_fd[1] = -1;
    d->jobs[id - 1] = j;
    if ((uint64_t)id > d->njobs)
        d->njobs = (size_t)id;
    return j;
}

static void job_free(sd_job *j)
{
    limit_logs_close(NULL, j);
    aqpd_free(j);
    json_decref(j->place.launch);
    free(j->user);
    free(j->name);
    free(j->cmd);
    free(j->cwd);
    free(j->env);
    free(j->reason);
    free(j->hist.metric_name);
    free(j->place.pin);
    free(j->place.node_at);
    free(j->place.pid_refused);
    free(j);
}

void job_free_one(sd_job *j)
{
    job_free(j);
}

void job_free_all(sd_daemon *d)
{
    for (size_t i = 0; i < d->njobs; i++)
        if (d->jobs[i])
            job_free(d->jobs[i]);
    free(d->jobs);
    d->jobs = NULL;
    d->njobs = d->capjobs = 0;
    free(d->prio_terms);
    free(d->prio_keys);
    free(d->prio_order);
    d->prio_terms = NULL;
    d->prio_keys = NULL;
    d->prio_order = NULL;
    d->prio_cap = 0;
}

int job_schedule(sd_daemon *d, sd_job *j)
{
    slaq_job_opts o;
    slaq_job_opts_init(&o);
    o.weight = j->goals.weight;
    o.max_cores = j->goals.max_cores;
    o.iters = j->goals.max_iters; /* until the job says otherwise in hello */
    o.convergence = j->goals.convergence;
    o.goal = j->goals.goal;
    o.target = j->goals.target;
    o.user = j;
    o.kind = j->kind;
    o.program = 1;
    o.tenant = acct_tenant(d, j);
    if (d->cfg.agents)
        o.node = node_of_job(d, j);
    j->sj = slaq_sched_add(d->sched, &o, sd_now());
    if (!j->sj)
        return -1;
    slaq_job_set_metric(j->sj, j->hist.last_metric); /* restored, or none */
    return 0;
}

int job_set_kind(sd_daemon *d, sd_job *j, int kind, char *err,
                 size_t errlen)
{
    if (j->kind == kind)
        return 0;
    if (j->hist.nreports > 0) {
        snprintf(err, errlen, "job %lld has reported as a %s job and cannot "
                 "become a %s", (long long)j->id, slaq_job_kind_name(j->kind),
                 slaq_job_kind_name(kind));
        return -1;
    }
    int old = j->kind;
    j->kind = kind;
    if (!j->sj)
        return 0;
    uint64_t iters = slaq_job_iters(j->sj);
    slaq_job *prev = j->sj;
    if (job_schedule(d, j) < 0) {
        j->sj = prev;
        j->kind = old;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    slaq_job_set_iters(j->sj, iters);
    slaq_sched_remove(d->sched, prev);
    if (d->store)
        store_put_job(d->store, j);
    sd_log(d, 1, "job %lld: scheduled as a %s", (long long)j->id,
           slaq_job_kind_name(kind));
    return 0;
}

static void send_stop(sd_daemon *d, sd_job *j)
{
    if (SD_REMOTE(j)) {
        node_send_stop(d, j, 0);
        return;
    }
    if (!j->conn)
        return;
    json_t *m = json_pack("{s:s, s:I, s:s}", "type", "stop", "job",
                          (json_int_t)j->id, "reason",
                          j->reason ? j->reason : job_state_name(j->state));
    conn_send(d, j->conn, m);
    json_decref(m);
}

void job_greet(sd_daemon *d, sd_job *j, sd_conn *c)
{
    json_t *m = json_pack("{s:s, s:I, s:s, s:f, s:f, s:I}", "type", "welcome",
                          "job", (json_int_t)j->id, "name", j->name,
                          "cores", j->enf.alloc,
                          "epoch_s", d->cfg.sched.epoch_s,
                          "last_iter", (json_int_t)j->hist.last_iter);
    /* The first iteration slaqd will take: a client resends from there
     * (last_iter cannot tell "iteration 0" from "none yet"). */
    json_object_set_new(m, "next_iter", json_integer(
        j->hist.nreports ? (json_int_t)j->hist.last_iter + 1 : 0));
    if (c->acks)
        json_object_set_new(m, "ack", json_true());
    if (j->sj) {
        j->enf.threads_sent = slaq_job_threads(j->sj, j->enf.alloc);
        json_object_set_new(m, "threads", json_integer(j->enf.threads_sent));
    }
    /* An attached job learns its secret here: its reconnections (after a
     * restart of slaqd, say) must show it. A started job has it already. */
    if (!j->proc.managed && j->secret[0])
        json_object_set_new(m, "secret", json_string(j->secret));
    conn_send(d, c, m);
    json_decref(m);
    if (j->state == SD_STOPPING)
        send_stop(d, j);
}

/* ------------------------------------------------------------- submit */

/* A fresh secret for j from the kernel's random source; -1 if it has none
 * to give (then the job is not created). */
int job_new_secret(sd_job *j)
{
    unsigned char raw[SD_SECRET_LEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(j->secret + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int job_name_check(const char *name, char *err, size_t errlen)
{
    size_t n = strlen(name);
    if (n > SD_MAX_NAME) {
        snprintf(err, errlen, "a job name is limited to %d bytes (this one "
                 "has %zu)", SD_MAX_NAME, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        /* C0 controls, DEL, and C1 controls (U+0080..U+009F in UTF-8) */
        if (c < 0x20 || c == 0x7f ||
            (c == 0xc2 && i + 1 < n && (unsigned char)name[i + 1] < 0xa0)) {
            snprintf(err, errlen, "a job name may not contain control "
                     "characters (byte %zu is 0x%02x)", i, c);
            return -1;
        }
    }
    return 0;
}

int job_convergence_get(json_t *msg, slaq_convergence *out, char *err,
                        size_t errlen)
{
    json_t *v = json_object_get(msg, "convergence");
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v) ||
        slaq_convergence_parse(json_string_value(v), out) != SLAQ_OK) {
        snprintf(err, errlen, "field \"convergence\" must be \"sublinear\", "
                 "\"linear\", \"superlinear\", \"nonconvex\" or "
                 "\"unknown\"");
        return -1;
    }
    return 1;
}

int job_declare_convergence(sd_daemon *d, sd_job *j, slaq_convergence c)
{
    if (j->sj && slaq_job_set_convergence(j->sj, c) != SLAQ_OK)
        return -1;
    if (c != j->goals.convergence) {
        j->goals.convergence = c;
        store_put_job(d->store, j);
    }
    return 0;
}

/* The job's own length, "iters" in hello: the end of its curve for the
 * core (slaq_job_opts.iters). A bad value is reported and ignored. */
static void job_declare_iters(sd_daemon *d, sd_conn *c, sd_job *j,
                              json_t *v)
{
    if (!v || json_is_null(v))
        return;
    if (!json_is_integer(v) || json_integer_value(v) < 1) {
        conn_error(d, c, "bad_message", "field \"iters\" must be a positive "
                   "integer (the iterations the job will run)");
        return;
    }
    if (j->sj)
        slaq_job_set_iters(j->sj, (uint64_t)json_integer_value(v));
}

/* The job's convergence class, "convergence" in hello or info (overrides
 * the one given at submit). A bad value is reported and ignored. */
static void job_declare_class(sd_daemon *d, sd_conn *c, sd_job *j,
                              json_t *msg)
{
    slaq_convergence cv;
    char err[160];
    int rc = job_convergence_get(msg, &cv, err, sizeof err);
    if (rc < 0)
        conn_error(d, c, "bad_message", "%s", err);
    else if (rc > 0 && job_declare_convergence(d, j, cv) < 0)
        conn_error(d, c, "no_memory", "cannot change the job's predictor");
}

/* "metric_name" in hello or info: what the job's reports' "metric" is
 * (docs/protocol.md). Stored with the job; a bad value is reported and
 * ignored. */
static void job_declare_metric(sd_daemon *d, sd_conn *c, sd_job *j,
                               json_t *v)
{
    if (!v || json_is_null(v))
        return;
    const char *name = json_string_value(v);
    size_t len = name ? strlen(name) : 0;
    int ok = len >= 1 && len <= SD_METRIC_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            ok = 0;
    if (!ok) {
        conn_error(d, c, "bad_message", "field \"metric_name\" must be a "
                   "string of 1 to %d bytes without control characters",
                   SD_METRIC_NAME_MAX);
        return;
    }
    if (j->hist.metric_name && !strcmp(j->hist.metric_name, name))
        return;
    char *copy = strdup(name);
    if (!copy)
        return;
    free(j->hist.metric_name);
    j->hist.metric_name = copy;
    store_put_job(d->store, j);
}

void job_declare(sd_daemon *d, sd_conn *c, sd_job *j, json_t *msg,
                 int with_kind)
{
    job_declare_iters(d, c, j, json_object_get(msg, "iters"));
    job_declare_class(d, c, j, msg);
    json_t *kind = json_object_get(msg, "kind");
    if (with_kind && kind && !json_is_null(kind)) {
        int k;
        char kerr[160];
        if (!json_is_string(kind) ||
            slaq_job_kind_parse(json_string_value(kind), &k) != SLAQ_OK)
            conn_error(d, c, "bad_message", "field \"kind\" must be \"ml\", "
                       "\"query\" or \"exact\"");
        else if (job_set_kind(d, j, k, kerr, sizeof kerr) < 0)
            conn_error(d, c, "bad_message", "%s", kerr);
    }
    job_declare_metric(d, c, j, json_object_get(msg, "metric_name"));
}

static int get_num(json_t *req, const char *key, double lo, double *out,
                   char *err, size_t errlen)
{
    json_t *v = json_object_get(req, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) >= lo) ||
        !isfinite(json_number_value(v))) {
        snprintf(err, errlen, "field \"%s\" must be a number >= %g", key, lo);
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

void job_checkpoint_dir(const sd_daemon *d, uid_t uid, char *out,
                        size_t len)
{
    if (uid == geteuid())
        snprintf(out, len, "%s/checkpoints", d->cfg.state_dir);
    else
        snprintf(out, len, "%s/user-checkpoints/uid-%u", d->cfg.state_dir,
                 (unsigned)uid);
}

/*
 * Makes the job's checkpoint directory (job_checkpoint_dir) if missing
 * and fills dir with it: for another user's job,
 * STATE/user-checkpoints/uid-N, that user's (0700) in a directory of
 * slaqd's that others may only pass (0711; slaqd's own jobs' checkpoints
 * stay in STATE/checkpoints, 0700), so that a job writes its checkpoint
 * as itself and no user can leave a checkpoint where another's job would
 * resume from it. Best effort: a job that cannot write there leaves no
 * checkpoint, and resuming it says so.
 */
static void checkpoint_dir_make(sd_daemon *d, const sd_runas *ra, char *dir,
                                size_t len)
{
    snprintf(dir, len, "%s/%scheckpoints", d->cfg.state_dir,
             ra->switch_user ? "user-" : "");
    mkdir(dir, ra->switch_user ? 0711 : 0700);
    if (!ra->switch_user)
        return;
    chmod(dir, 0711); /* whatever slaqd's umask made of it */
    job_checkpoint_dir(d, ra->uid, dir, len);
    mkdir(dir, 0700);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fchown(fd, ra->uid, ra->gid) < 0 || fchmod(fd, 0700) < 0)
        sd_log(d, 0, "checkpoints of user %s: %s: %s", ra->name, dir,
               strerror(errno));
    if (fd >= 0)
        close(fd);
}

/* The job's environment (spawn_env): the submitter's, never slaqd's;
 * for a job run as another user than slaqd's, HOME, USER, LOGNAME and
 * SHELL from that user's passwd entry (for slaqd's own user's, from its
 * own entry when the submitter sent no environment); ckdir (a
 * controller's start: its shared checkpoint directory) or else the job's
 * checkpoint directory here is SLAQ_CHECKPOINT_DIR unless the
 * environment names one; the math libraries' thread variables at
 * --job-threads unless it names them. */
static char **child_env(sd_daemon *d, json_t *env, int64_t id,
                        const char *secret, const sd_runas *ra,
                        const char *ckdir)
{
    /* slaqd's own paths (the socket, STATE/...), resolved as root: the
     * administrator's, not the user's. */
    char *sock = realpath(d->cfg.socket_path, NULL), *adir = NULL;
    spawn_env_in in = {.env = env, .socket = sock ? sock
                                                  : d->cfg.socket_path,
                       .id = id, .secret = secret, .ckdir = ckdir,
                       .threads = (int)d->cfg.job_threads};
    char dir[4200];
    struct passwd pw, *res = NULL;
    char buf[16384];
    if (ra->switch_user) {
        in.home = ra->home;
        in.user = ra->name;
        in.shell = ra->shell;
    } else if (!env && !getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) &&
               res) {
        in.home = pw.pw_dir;
        in.user = pw.pw_name;
        in.shell = pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh";
    }
    /* Where a job suspended with a checkpoint leaves it (suspend.c),
     * unless the submitter chose a directory (shared between machines). */
    if (!ckdir) {
        checkpoint_dir_make(d, ra, dir, sizeof dir);
        adir = realpath(dir, NULL);
        in.ckdir = adir ? adir : dir;
    }
    char **out = spawn_env(&in);
    free(sock);
    free(adir);
    return out;
}

/* 1 if job logs are shared with --admin-group (slaqd is root and has
 * one): log directories 02750 in that group, log files 0640. */
static int logs_shared(const sd_daemon *d)
{
    return d->cfg.admin_group && user_can_switch();
}

/* What the child failed at (reported to the parent with the errno). */
enum { STEP_EXEC, STEP_CGROUP, STEP_USER, STEP_LOGS, STEP_CWD };

/*
 * In the child: never returns. Joins the job's cgroup while still slaqd's
 * user (root may write cgroup.procs; the job could not), becomes the job's
 * owner, takes the log files slaqd created for it (spawn_logs_make: no
 * path in the log directory is opened here) and enters its directory as
 * that user — so a directory the user may not enter is refused, and
 * whatever the working directory's path leads to is what the user could
 * reach. Reports the failed step and its errno on errfd.
 */
static void child_exec(sd_daemon *d, sd_job *j, char **argv, char **envp,
                       const spawn_logs *logs, const sd_runas *ra, int errfd)
{
    int e[2] = {STEP_EXEC, 0};
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    umask(d->job_umask);
    setsid();
    e[0] = STEP_CGROUP;
    if (enf_child_join(&d->enf, j->id) < 0)
        goto err;
    e[0] = STEP_USER;
    if (user_runas_become(ra) < 0)
        goto err;
    /* An agent in a Slurm allocation takes its jobs along even when it is
     * killed outright: the kernel ends the job with it. Set after the
     * change of user, which clears it. */
    e[0] = STEP_EXEC;
    if (d->cfg.end_jobs_at_exit &&
        (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1))
        goto err;
    e[0] = STEP_LOGS;
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0 || dup2(logs->out, 1) < 0 ||
        dup2(logs->err, 2) < 0)
        goto err;
    e[0] = STEP_CWD;
    if (chdir(j->cwd) < 0)
        goto err;
    e[0] = STEP_EXEC;
    if (errfd > 3)
        close_range(3, (unsigned)errfd - 1, 0);
    close_range((unsigned)errfd + 1, ~0U, 0);
    execvpe(argv[0], argv, envp);
err:
    e[1] = errno;
    if (write(errfd, e, sizeof e) < 0)
        _exit(126);
    _exit(127);
}

/*
 * The job's log directory STATE/jobs/ID and its two files, made fresh by
 * slaqd (spawn_logs_make; -2: the directory exists, the id is not used):
 * the files are the owner's (0600; with logs_shared, 0640 in the admin
 * group), the directory slaqd's until the job has started, then the
 * owner's, 0700 (with logs_shared, 02750 in the admin group, so that
 * administrators may read the logs too).
 */
static int log_dir_make(sd_daemon *d, int64_t id, const sd_runas *ra,
                        spawn_logs *l, char *err, size_t errlen)
{
    char jobs[4096], name[24];
    snprintf(jobs, sizeof jobs, "%s/jobs", d->cfg.state_dir);
    snprintf(name, sizeof name, "%lld", (long long)id);
    int shared = logs_shared(d);
    uid_t u = ra->switch_user ? ra->uid : geteuid();
    gid_t g = shared ? d->cfg.admin_gid : ra->switch_user ? ra->gid
                                                          : getegid();
    return spawn_logs_make(jobs, name, u, g, shared ? 0640 : 0600, l, err,
                           errlen);
}

/* Gives the started job's log directory to its owner (log_dir_make). */
static int log_dir_give(sd_daemon *d, const sd_runas *ra, spawn_logs *l,
                        char *err, size_t errlen)
{
    int shared = logs_shared(d);
    uid_t u = ra->switch_user ? ra->uid : geteuid();
    gid_t g = shared ? d->cfg.admin_gid : ra->switch_user ? ra->gid
                                                          : getegid();
    if (spawn_logs_give(l, u, g, shared ? 02750 : 0700) == 0)
        return 0;
    snprintf(err, errlen, "cannot give the job's log directory to user %s: "
             "%s", ra->switch_user ? ra->name : "slaqd's", strerror(errno));
    return -1;
}

/* Removes a job's log directory that log_dir_make made (not started). */
static void log_dir_discard(sd_daemon *d, int64_t id, spawn_logs *l)
{
    char jobs[4096], name[24];
    snprintf(jobs, sizeof jobs, "%s/jobs", d->cfg.state_dir);
    snprintf(name, sizeof name, "%lld", (long long)id);
    spawn_logs_discard(l, jobs, name);
}

/* Why the child could not start the job (the step it reported). */
static void child_failed(const sd_job *j, const sd_runas *ra, const char *arg0,
                         const int e[2], char *err, size_t errlen)
{
    const char *who = ra->switch_user ? ra->name : NULL;
    switch (e[0]) {
    case STEP_CGROUP:
        snprintf(err, errlen, "cannot join the job's cgroup: %s",
                 strerror(e[1]));
        break;
    case STEP_USER:
        snprintf(err, errlen, "cannot become user %s: %s", who ? who : "?",
                 strerror(e[1]));
        break;
    case STEP_LOGS:
        snprintf(err, errlen, "cannot open the job's log files%s%s: %s",
                 who ? " as user " : "", who ? who : "", strerror(e[1]));
        break;
    case STEP_CWD:
        snprintf(err, errlen, "%sworking directory %s: %s%s%s",
                 e[1] == EACCES ? "permission denied: " : "", j->cwd,
                 strerror(e[1]), who ? " (as user " : "", who ? who : "");
        if (who)
            snprintf(err + strlen(err), errlen - strlen(err), ")");
        break;
    default:
        snprintf(err, errlen, "cannot run %s%s%s: %s", arg0,
                 who ? " as user " : "", who ? who : "", strerror(e[1]));
    }
}

int job_check_cmd(json_t *cmd, json_t *env, char *err, size_t errlen)
{
    if (!json_is_array(cmd) || json_array_size(cmd) == 0) {
        snprintf(err, errlen, "field \"cmd\" must be a non-empty array of "
                              "strings");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(cmd); i++)
        if (!json_is_string(json_array_get(cmd, i))) {
            snprintf(err, errlen, "cmd[%zu] must be a string", i);
            return -1;
        }
    if (env && !json_is_array(env)) {
        snprintf(err, errlen, "field \"env\" must be an array of "
                              "\"NAME=value\" strings");
        return -1;
    }
    return 0;
}

int job_goal_get(json_t *req, slaq_goal *g, char *err, size_t errlen)
{
    slaq_goal_init(g);
    json_t *v = json_object_get(req, "deadline");
    if (v && !json_is_null(v)) {
        double t = json_is_number(v) ? json_number_value(v) : NAN;
        if (!(t > 0) || !isfinite(t)) {
            snprintf(err, errlen, "field \"deadline\" must be a time, in "
                     "seconds since 1970 (slaq submit --deadline takes "
                     "+DURATION too)");
            return -1;
        }
        g->deadline = t;
    }
    v = json_object_get(req, "accuracy");
    if (v && !json_is_null(v)) {
        if (!json_is_number(v) || !isfinite(json_number_value(v))) {
            snprintf(err, errlen, "field \"accuracy\" must be a number, the "
                     "required value of the job's metric");
            return -1;
        }
        g->accuracy = json_number_value(v);
    }
    v = json_object_get(req, "direction");
    if (v && !json_is_null(v)) {
        const char *dir = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(dir, "max") && strcmp(dir, "min")) {
            snprintf(err, errlen, "field \"direction\" must be \"max\" "
                     "(the metric is better higher) or \"min\"");
            return -1;
        }
        g->maximize = !strcmp(dir, "max");
    }
    v = json_object_get(req, "urgency");
    if (v && !json_is_null(v)) {
        json_int_t u = json_is_integer(v) ? json_integer_value(v) : 0;
        if (u < SLAQ_URGENCY_MIN || u > SLAQ_URGENCY_MAX) {
            snprintf(err, errlen, "field \"urgency\" must be a whole number "
                     "from %d to %d", SLAQ_URGENCY_MIN, SLAQ_URGENCY_MAX);
            return -1;
        }
        g->urgency = (int)u;
    }
    /* MLF-C's rule: by default the required accuracy when there is one,
     * else the fixed iterations (docs/deadlines.md). */
    g->stop = isnan(g->accuracy) ? SLAQ_STOP_ITERS : SLAQ_STOP_ACCURACY;
    v = json_object_get(req, "stop");
    if (v && !json_is_null(v)) {
        const char *name = json_is_string(v) ? json_string_value(v) : NULL;
        if (slaq_stop_parse(name, &g->stop) != SLAQ_OK) {
            snprintf(err, errlen, "field \"stop\" (slaq submit --stop) must "
                     "be %s, %s or %s, got %s%s%s",
                     slaq_stop_name(SLAQ_STOP_ITERS),
                     slaq_stop_name(SLAQ_STOP_ACCURACY),
                     slaq_stop_name(SLAQ_STOP_OPTSTOP), name ? "'" : "",
                     name ? name : "a value that is not a string",
                     name ? "'" : "");
            return -1;
        }
        if (g->stop == SLAQ_STOP_ACCURACY && isnan(g->accuracy)) {
            snprintf(err, errlen, "field \"stop\" is \"accuracy\" but no "
                     "accuracy is required (slaq submit --accuracy VALUE)");
            return -1;
        }
    }
    return 0;
}

static sd_job *job_spawn(sd_daemon *d, json_t *req, int64_t id,
                         const char *secret, const sd_user *owner,
                         int64_t array, long index, char *err,
                         size_t errlen);

sd_job *job_submit(sd_daemon *d, json_t *req, const sd_user *owner,
                   char *err, size_t errlen)
{
    return job_spawn(d, req, 0, NULL, owner, 0, 0, err, errlen);
}

sd_job *job_submit_as(sd_daemon *d, json_t *req, int64_t id,
                      const char *secret, const sd_user *owner, char *err,
                      size_t errlen)
{
    return job_spawn(d, req, id, secret, owner, 0, 0, err, errlen);
}

sd_job *job_submit_task_as(sd_daemon *d, json_t *req, int64_t id,
                           const char *secret, const sd_user *owner,
                           int64_t array, long index, char *err,
                           size_t errlen)
{
    return job_spawn(d, req, id, secret, owner, array, index, err, errlen);
}

/* A task's command: the array's, with every "{index}" in an argument
 * replaced by the index. NULL when out of memory. */
static json_t *task_cmd(const sd_array *a, long index)
{
    json_t *tmpl = json_loads(a->cmd, 0, NULL), *out = json_array();
    char num[24];
    snprintf(num, sizeof num, "%ld", index);
    size_t i;
    json_t *v;
    json_array_foreach(tmpl, i, v) {
        const char *arg = json_string_value(v);
        size_t n = 0, len = strlen(arg ? arg : "");
        for (const char *p = arg; p && (p = strstr(p, "{index}")); p += 7)
            n++;
        char *buf = malloc(len + n * strlen(num) + 1), *o = buf;
        if (!buf) {
            json_decref(out);
            out = NULL;
            break;
        }
        for (const char *p = arg; p && *p;) {
            if (!strncmp(p, "{index}", 7)) {
                o = stpcpy(o, num);
                p += 7;
            } else {
                *o++ = *p++;
            }
        }
        *o = 0;
        json_array_append_new(out, json_string(buf));
        free(buf);
    }
    json_decref(tmpl);
    return out;
}

json_t *job_task_req(const sd_array *a, long index)
{
    char name[SD_MAX_NAME + 32], var[64];
    snprintf(name, sizeof name, "%.*s[%ld]", SD_MAX_NAME - 24, a->name,
             index);
    json_t *env = a->env ? json_loads(a->env, 0, NULL) : NULL;
    if (env) { /* the array's own, not an outer array's */
        for (size_t i = json_array_size(env); i-- > 0;) {
            const char *kv = json_string_value(json_array_get(env, i));
            if (kv && !strncmp(kv, "SLAQ_ARRAY_", 11))
                json_array_remove(env, i);
        }
        snprintf(var, sizeof var, "SLAQ_ARRAY_INDEX=%ld", index);
        json_array_append_new(env, json_string(var));
        snprintf(var, sizeof var, "SLAQ_ARRAY_ID=%lld", (long long)a->id);
        json_array_append_new(env, json_string(var));
    }
    json_t *req = json_pack("{s:o, s:s, s:s}", "cmd", task_cmd(a, index),
                            "cwd", a->cwd, "name", name);
    if (!req || (a->env && !env)) {
        json_decref(req);
        json_decref(env);
        return NULL;
    }
    if (env)
        json_object_set_new(req, "env", env);
    return req;
}

sd_job *job_start_task(sd_daemon *d, sd_array *a, long index, char *err,
                       size_t errlen)
{
    json_t *req = job_task_req(a, index);
    if (!req) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sd_user owner;
    user_from_uid(d, a->uid, 0, &owner);
    snprintf(owner.name, sizeof owner.name, "%s", a->user);
    sd_job *j = job_spawn(d, req, 0, NULL, &owner, a->id, index, err,
                          errlen);
    json_decref(req);
    return j;
}

sd_job *job_task_record(sd_daemon *d, sd_array *a, long index,
                        sd_state state, const char *reason)
{
    sd_job *j = job_new(d, (int64_t)d->njobs + 1);
    if (!j)
        return NULL;
    char name[SD_MAX_NAME + 32];
    snprintf(name, sizeof name, "%.*s[%ld]", SD_MAX_NAME - 24, a->name,
             index);
    j->uid = a->uid;
    j->user = strdup(a->user);
    j->name = strdup(name);
    json_t *cmd = task_cmd(a, index);
    j->cmd = cmd ? json_dumps(cmd, JSON_COMPACT) : NULL;
    json_decref(cmd);
    j->cwd = strdup(a->cwd);
    j->reason = reason ? strdup(reason) : NULL;
    j->proc.managed = 1;
    j->goals.max_cores = 1;
    j->array = a->id;
    j->array_index = index;
    j->state = state;
    j->submitted = a->submitted;
    j->ended = sd_now();
    if (!j->user || !j->name || !j->cmd || !j->cwd) {
        d->jobs[j->id - 1] = NULL;
        job_free(j);
        return NULL;
    }
    store_put_job(d->store, j);
    store_event(d->store, j->ended, j->id, job_state_name(state), reason);
    return j;
}

/* Gives job j a fresh id (job_exec: its log directory's id was used). */
static int job_renumber(sd_daemon *d, sd_job *j)
{
    int64_t id = (int64_t)d->njobs + 1;
    if (jobs_room(d, (uint64_t)id) < 0)
        return -1;
    d->jobs[j->id - 1] = NULL;
    j->id = id;
    d->jobs[id - 1] = j;
    d->njobs = (size_t)id;
    return 0;
}

/* The log directory of job j, made fresh: a directory of its id that
 * exists already (a crash between its making and the job's record, or a
 * controller's id run here before) is never taken over. A local job
 * takes the next id; a job the controller numbered keeps its id, and the
 * old directory is moved aside as ID.before-TIME. */
static int job_logs_make(sd_daemon *d, sd_job *j, int numbered,
                         const sd_runas *ra, spawn_logs *l, char *err,
                         size_t errlen)
{
    for (int tries = 0; tries < 100; tries++) {
        int rc = log_dir_make(d, j->id, ra, l, err, errlen);
        if (rc != -2)
            return rc;
        char from[4200], to[4300];
        snprintf(from, sizeof from, "%s/jobs/%lld", d->cfg.state_dir,
                 (long long)j->id);
        snprintf(to, sizeof to, "%s.before-%.0f", from, sd_now() * 1e3);
        sd_log(d, 0, "job %lld: %s exists already: %s", (long long)j->id,
               from, numbered ? "moved aside" : "the job takes the next id");
        if (numbered ? rename(from, to) < 0 : job_renumber(d, j) < 0) {
            snprintf(err, errlen, "the job's log directory %s exists and "
                     "cannot be moved aside: %s", from, strerror(errno));
            return -1;
        }
    }
    snprintf(err, errlen, "no free log directory in %s/jobs",
             d->cfg.state_dir);
    return -1;
}

/*
 * Starts job j's process as its owner: the log files (job_logs_make),
 * the environment (child_env: `secret` set means a controller's start,
 * which alone may name the checkpoint directory), the CPU quota, the
 * child (child_exec), and a wait of at most SPAWN_TIMEOUT_MS for its
 * exec. 0 with j running, or -1 with err filled and nothing left behind
 * but the id, which stays taken.
 */
static int job_exec(sd_daemon *d, sd_job *j, json_t *req, json_t *env,
                    const char *secret, char *err, size_t errlen)
{
    json_t *cmd = json_object_get(req, "cmd");
    const char *arg0 = json_string_value(json_array_get(cmd, 0));
    size_t argc = json_array_size(cmd);
    char **argv = calloc(argc + 1, sizeof *argv), **envp = NULL;
    sd_runas ra = {0};
    spawn_logs logs = {-1, -1, -1};
    int pfd[2] = {-1, -1}, made = 0, rc = -1;
    if (!argv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < argc; i++)
        argv[i] = (char *)json_string_value(json_array_get(cmd, i));
    if (user_runas_prepare(d, j->uid, j->user, &ra, err, errlen) < 0 ||
        job_logs_make(d, j, secret != NULL, &ra, &logs, err, errlen) < 0)
        goto out;
    made = 1;
    envp = child_env(d, env, j->id, j->secret, &ra, secret ?
        json_string_value(json_object_get(req, "checkpoint_dir")) : NULL);
    if (!envp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (enf_prepare(d, j) < 0) {
        snprintf(err, errlen, "cannot prepare the CPU quota: %s",
                 strerror(errno));
        goto out;
    }
    pid_t pid = -1;
    if (pipe2(pfd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
        snprintf(err, errlen, "cannot start a process: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        child_exec(d, j, argv, envp, &logs, &ra, pfd[1]);
    close(pfd[1]);
    pfd[1] = -1;
    int child_err[2] = {0, 0};
    int said = spawn_wait_report(pfd[0], SPAWN_TIMEOUT_MS, child_err);
    if (said != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (said > 0)
            child_failed(j, &ra, arg0, child_err, err, errlen);
        else
            snprintf(err, errlen, "the job's process did not start within "
                     "%d ms (its working directory or program may hang "
                     "when opened)", SPAWN_TIMEOUT_MS);
        goto out;
    }
    j->proc.pid = pid;
    j->proc.pstart = enf_proc_start(pid);
    j->started = sd_now();
    j->state = SD_RUNNING;
    made = 0;
    if (log_dir_give(d, &ra, &logs, err, errlen) < 0)
        sd_log(d, 0, "job %lld: %s", (long long)j->id, err);
    limit_logs_take(j, logs.out, logs.err); /* held to their limits */
    logs.out = logs.err = -1;
    rc = 0;
out:
    if (made)
        log_dir_discard(d, j->id, &logs);
    for (int i = 0; i < 2; i++)
        if (pfd[i] >= 0)
            close(pfd[i]);
    free(argv);
    spawn_strv_free(envp);
    user_runas_free(&ra);
    return rc;
}

/* A submit request's fields, read and checked by job_spawn_check. */
typedef struct job_spawn_req {
    json_t *cmd, *env;        /* borrowed from the request */
    json_t *pin, *restartable;
    const char *cwd, *name;
    double weight, max_cores, target, max_iters, max_time;
    slaq_convergence conv;
    slaq_goal goal;
    sd_job *from;             /* the job it resumes from, or NULL */
} job_spawn_req;

/* Reads and checks a submit request's fields into *r: the command and
 * environment, the numbers, the name, the convergence class and goal,
 * the node pin, and a resume from an agent's checkpoint. Returns 0, or -1
 * with err set to what the submitter must change. */
static int job_spawn_check(sd_daemon *d, json_t *req, job_spawn_req *r,
                           char *err, size_t errlen)
{
    *r = (job_spawn_req){
        .cmd = json_object_get(req, "cmd"),
        .env = json_object_get(req, "env"),
        .cwd = json_string_value(json_object_get(req, "cwd")),
        .name = json_string_value(json_object_get(req, "name")),
        .weight = 1, .max_cores = INFINITY, .conv = SLAQ_CONV_UNKNOWN};
    if (job_check_cmd(r->cmd, r->env, err, errlen) < 0)
        return -1;
    if (get_num(req, "weight", 1e-9, &r->weight, err, errlen) ||
        get_num(req, "max_cores", 1e-9, &r->max_cores, err, errlen) ||
        get_num(req, "target_reduction", 0, &r->target, err, errlen) ||
        get_num(req, "max_iters", 0, &r->max_iters, err, errlen) ||
        get_num(req, "max_time", 0, &r->max_time, err, errlen))
        return -1;
    if (r->target > 1) {
        snprintf(err, errlen, "field \"target_reduction\" must be in [0, 1]");
        return -1;
    }
    /* A count: whole, and exact in a double (so it converts, and is
     * stored as a 64-bit integer, without loss). */
    if (r->max_iters != floor(r->max_iters) || r->max_iters > 0x1p53) {
        snprintf(err, errlen, "field \"max_iters\" must be a whole number of "
                              "iterations in [0, 2^53] (0: no limit)");
        return -1;
    }
    if (r->name && job_name_check(r->name, err, errlen) < 0)
        return -1;
    if (job_convergence_get(req, &r->conv, err, errlen) < 0)
        return -1;
    if (job_goal_get(req, &r->goal, err, errlen) < 0)
        return -1;
    json_t *pin = r->pin = json_object_get(req, "node");
    r->restartable = json_object_get(req, "restartable");
    if (pin && !json_is_null(pin) &&
        (!json_is_string(pin) || !*json_string_value(pin) ||
         strlen(json_string_value(pin)) >= sizeof d->nodes[0].name)) {
        snprintf(err, errlen, "field \"node\" must be a node's name (at most "
                 "%zu bytes)", sizeof d->nodes[0].name - 1);
        return -1;
    }
    if (r->restartable && !json_is_boolean(r->restartable)) {
        snprintf(err, errlen, "field \"restartable\" must be true or false");
        return -1;
    }
    if (json_is_string(pin) && !d->cfg.agents) {
        snprintf(err, errlen, "this slaqd runs jobs on its own machine only "
                 "(no --agents): it has no node \"%.64s\"",
                 json_string_value(pin));
        return -1;
    }
    /* A resume from a checkpoint an agent keeps (suspend.c): only a
     * controller's, and only of a job that left one (an agent's start
     * carries it too: agent.c took the checkpoint already). */
    json_t *rf = d->cfg.agent ? NULL : json_object_get(req, "resume_from");
    sd_job *from = json_is_integer(rf) ? job_get(d, json_integer_value(rf))
                                       : NULL;
    if (rf && (!d->cfg.agents || !from || !SD_REMOTE(from) ||
               from->proc.suspended != SD_SUSP_CHECKPOINT ||
               SD_ACTIVE(from->state))) {
        snprintf(err, errlen, "field \"resume_from\" must be the id of a job "
                 "a node agent ran that was suspended with a checkpoint and "
                 "has exited");
        return -1;
    }
    r->from = from;
    if (!r->cwd)
        r->cwd = ".";
    return 0;
}

/* Fills new job j from the checked request r and its owner: name,
 * command, directory, environment, limits, goal, pin, array task (array,
 * index: one core) and secret (given, or new). Returns 0, or -1 with err
 * set. */
static int job_spawn_fill(sd_job *j, const job_spawn_req *r,
                          const sd_user *owner, const char *secret,
                          int64_t array, long index, char *err,
                          size_t errlen)
{
    j->uid = owner->uid;
    if (!(j->user = strdup(owner->name)))
        goto err;
    const char *arg0 = json_string_value(json_array_get(r->cmd, 0));
    const char *base = strrchr(arg0, '/');
    j->name = strdup(r->name ? r->name : base ? base + 1 : arg0);
    j->cmd = json_dumps(r->cmd, JSON_COMPACT);
    if (!(j->cwd = spawn_cwd(r->cwd, err, errlen)))
        return -1;
    if (r->env && !(j->env = json_dumps(r->env, JSON_COMPACT)))
        goto err;
    j->goals.weight = r->weight;
    j->goals.max_cores = r->max_cores;
    j->goals.target = r->target;
    j->goals.max_iters = (uint64_t)r->max_iters;
    j->goals.convergence = r->conv;
    j->goals.goal = r->goal;
    j->goals.max_time = r->max_time;
    j->proc.managed = 1;
    j->submitted = sd_now();
    j->place.restartable = json_is_true(r->restartable);
    if (json_is_string(r->pin) &&
        !(j->place.pin = strdup(json_string_value(r->pin))))
        goto err;
    if (r->from)
        j->resumed_from = r->from->id;
    if (array) {
        j->array = array;
        j->array_index = index;
        j->goals.max_cores = 1;
    }
    if (secret) {
        snprintf(j->secret, sizeof j->secret, "%s", secret);
    } else if (job_new_secret(j) < 0) {
        snprintf(err, errlen, "no random bytes for the job's secret: %s",
                 strerror(errno));
        return -1;
    }
    return 0;
err:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* Starts job j on this machine: its process, its place in the scheduler
 * (an array's task: one core outside it), its row in the database. A job
 * the database cannot record does not run. Returns 0, or -1 with err set
 * (the process then ended). */
static int job_spawn_local(sd_daemon *d, sd_job *j, json_t *req,
                           json_t *env, const char *secret, int64_t array,
                           char *err, size_t errlen)
{
    if (job_exec(d, j, req, env, secret, err, errlen) < 0)
        return -1;
    if (array) { /* one core, outside the scheduler (array.c) */
        j->enf.alloc = 1;
        enf_apply(d, j, 1);
    } else if (job_schedule(d, j) < 0) {
        sd_log(d, 0, "job %lld: out of memory entering the scheduler",
               (long long)j->id);
    }
    store_put_job(d->store, j);
    store_event(d->store, j->started, j->id, "start", j->cmd);
    if (limit_flush(d) < 0) { /* (after cutting logs that filled the disk) */
        /* Not recorded: after a restart it would run unknown to slaqd. So
         * it does not run at all, and the submitter is told. */
        kill(-j->proc.pid, SIGKILL);
        waitpid(j->proc.pid, NULL, 0);
        if (j->sj)
            slaq_sched_remove(d->sched, j->sj);
        j->sj = NULL;
        snprintf(err, errlen, "slaqd cannot write its database (%s); the "
                 "job was not started", store_error(d->store));
        j->proc.pid = 0;
        return -1;
    }
    sd_log(d, array ? 1 : 0, "job %lld (%s): started, pid %d, user %s",
           (long long)j->id, j->name, (int)j->proc.pid, j->user);
    return 0;
}

static sd_job *job_spawn(sd_daemon *d, json_t *req, int64_t id,
                         const char *secret, const sd_user *owner,
                         int64_t array, long index, char *err,
                         size_t errlen)
{
    job_spawn_req r;
    if (job_spawn_check(d, req, &r, err, errlen) < 0)
        return NULL;
    if (id > 0 && job_get(d, id)) {
        snprintf(err, errlen, "job %lld exists already on this node",
                 (long long)id);
        return NULL;
    }
    sd_job *j = job_new(d, id > 0 ? id : (int64_t)d->njobs + 1);
    if (!j) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (job_spawn_fill(j, &r, owner, secret, array, index, err, errlen) < 0)
        goto err;
    if (d->cfg.agents) { /* a controller: an agent runs it */
        if (!j->name || !j->cmd) {
            snprintf(err, errlen, "out of memory");
            goto err;
        }
        /* The agents' link (agent_link.c, which uses this table)
         * places and starts it: job_modules_init registered it. */
        assert(d->job_launch); /* slaqd registered it at start-up */
        if (d->job_launch(d, j, r.env, err, errlen) < 0)
            goto err;
        return j;
    }
    if (job_spawn_local(d, j, req, r.env, secret, array, err, errlen) < 0)
        goto err;
    return j;

err: /* the id stays taken (job ids are never used twice) */
    enf_release(d, j);
    d->jobs[j->id - 1] = NULL;
    store_set_last_id(d->store, (int64_t)d->njobs);
    job_free(j);
    return NULL;
}

sd_job *job_attach(sd_daemon *d, const char *name, pid_t pid,
                   const sd_user *owner)
{
    sd_job *j = job_new(d, (int64_t)d->njobs + 1);
    if (!j)
        return NULL;
    j->uid = owner->uid;
    j->user = strdup(owner->name);
    j->name = strdup(name);
    j->cmd = strdup("[]");
    j->cwd = strdup("");
    j->proc.pid = pid;
    j->proc.pstart = pid > 0 ? enf_proc_start(pid) : 0;
    j->submitted = j->started = sd_now();
    j->state = SD_RUNNING;
    if (!j->user || !j->name || !j->cmd || !j->cwd || job_new_secret(j) < 0 ||
        job_schedule(d, j) < 0) {
        d->jobs[j->id - 1] = NULL;
        d->njobs--;
        job_free(j);
        return NULL;
    }
    store_put_job(d->store, j);
    store_event(d->store, j->started, j->id, "attach", j->name);
    store_flush(d->store);
    sd_log(d, 0, "job %lld (%s): attached, pid %d", (long long)j->id, j->name,
           (int)pid);
    return j;
}

/* ------------------------------------------------------------- reports */

/* Weight of the newest report in a job's moving mean of CPU-seconds per
 * iteration: about the last five reports. */
#define COST_ALPHA 0.3
/* Reports before the lowest cost is kept (the first ones load data). */
#define COST_SETTLE 3

/* The job's own record of a report the core accepted. */
static void note_report(sd_job *j, const slaq_report *r)
{
    if (j->hist.nreports == 0)
        j->hist.first_loss = r->loss;
    if (j->hist.nreports > 0 && r->iter > j->hist.last_iter && r->cpu_s >= 0) {
        double di = (double)(r->iter - j->hist.last_iter);
        double c = r->cpu_s / di;
        j->hist.iters_total += di;
        j->hist.samples_total += r->samples > 0 ? r->samples : 0;
        j->hist.cpu_work += r->cpu_s;
        j->hist.cost_recent = j->hist.iters_total == di
                             ? c
                             : COST_ALPHA * c +
                                   (1 - COST_ALPHA) * j->hist.cost_recent;
        if (j->hist.nreports >= COST_SETTLE &&
            (j->hist.cost_best <= 0 ||
             j->hist.cost_recent < j->hist.cost_best))
            j->hist.cost_best = j->hist.cost_recent;
    }
    j->hist.nreports++;
    j->hist.last_iter = r->iter;
    j->hist.last_loss = r->loss;
    j->hist.cpu_total += r->iter > 0 ? r->cpu_s : 0;
}

static int add_report(sd_job *j, const slaq_report *r, double threads,
                      double wall_s)
{
    int rc = slaq_job_report_scaling(j->sj, r, threads, wall_s);
    if (rc)
        return rc;
    note_report(j, r);
    return 0;
}

/* Tells job j (if it has a connection) its share and the threads its
 * model advises on it. */
static void send_alloc(sd_daemon *d, sd_job *j, double cores)
{
    if (!j->conn || !j->sj)
        return;
    int threads = slaq_job_threads(j->sj, cores);
    char line[160];
    int n = snprintf(line, sizeof line, "{\"type\":\"alloc\",\"cores\":"
                     "%.17g,\"threads\":%d,\"epoch\":%llu}", cores, threads,
                     (unsigned long long)d->epoch_no);
    conn_send_line(d, j->conn, line, (size_t)n);
    j->enf.threads_sent = threads;
}

/* Applies the lower share held back for job j (job_apply_alloc). */
static void apply_held(sd_daemon *d, sd_job *j)
{
    if (j->enf.alloc_next_by <= 0)
        return;
    j->enf.alloc_next_by = 0;
    j->enf.alloc = j->enf.alloc_next;
    if (!SD_REMOTE(j))
        enf_apply(d, j, j->enf.alloc);
    sd_log(d, 1, "job %lld: %.3f cores (after its thread advice)",
           (long long)j->id, j->enf.alloc);
}

/*
 * What a report changes in job j's advice (its iterations ran `threads`
 * threads for `wall_s` seconds; 0: not said): a job that now runs no more
 * threads than it was told gets the share held back for it at once; one
 * whose model advises another count on its share (a measurement came in,
 * or it explores) is told at once, not at the next change of share.
 */
static void advise(sd_daemon *d, sd_job *j, double threads, double wall_s)
{
    if (threads >= 1)
        j->enf.threads_used = (int)threads;
    if (threads > slaq_scaling_busy_threads(j->enf.alloc) && wall_s > 0)
        j->enf.stall_s += wall_s;
    if (j->enf.alloc_next_by > 0 && threads >= 1 &&
        threads <= j->enf.threads_sent)
        apply_held(d, j);
    double share = j->enf.alloc_next_by > 0 ? j->enf.alloc_next : j->enf.alloc;
    if (j->enf.threads_sent &&
        slaq_job_threads(j->sj, share) != j->enf.threads_sent)
        send_alloc(d, j, share);
}

/* A report's fields read from msg into r (t: now), *mv (NaN: no metric),
 * *tv and *wv (the threads and wall seconds it says its iterations ran;
 * 0: not said): 0, or -1 with err naming the field. Values are checked by
 * the core (slaq_report_check) where they are taken. */
static int report_parse(json_t *msg, slaq_report *r, double *mv, double *tv,
                        double *wv, char *err, size_t errlen)
{
    json_t *it = json_object_get(msg, "iter");
    json_t *loss = json_object_get(msg, "loss");
    json_t *cpu = json_object_get(msg, "cpu_s");
    json_t *samples = json_object_get(msg, "samples");
    json_t *metric = json_object_get(msg, "metric");
    json_t *threads = json_object_get(msg, "threads");
    json_t *wall = json_object_get(msg, "wall_s");
    if (!json_is_integer(it) || json_integer_value(it) < 0) {
        snprintf(err, errlen, "field \"iter\" must be an integer >= 0");
        return -1;
    }
    if (!json_is_number(loss)) {
        snprintf(err, errlen, "field \"loss\" must be a number");
        return -1;
    }
    if ((cpu && !json_is_number(cpu)) || (samples && !json_is_number(samples))) {
        snprintf(err, errlen, "fields \"cpu_s\" and \"samples\" must be "
                              "numbers");
        return -1;
    }
    *tv = threads ? json_number_value(threads) : 0;
    if (threads && !(json_is_integer(threads) && *tv >= 1 && *tv <= 65536)) {
        snprintf(err, errlen, "field \"threads\" must be a whole number "
                 "from 1 to 65536 (the worker threads the iterations ran)");
        return -1;
    }
    *wv = wall ? json_number_value(wall) : 0;
    if (wall && !(json_is_number(wall) && *wv >= 0 && *wv <= 1e9)) {
        snprintf(err, errlen, "field \"wall_s\" must be a number of "
                 "seconds from 0 to 1e9 (the iterations' wall time)");
        return -1;
    }
    *mv = NAN;
    if (metric && !json_is_null(metric)) {
        *mv = json_is_number(metric) ? json_number_value(metric) : NAN;
        if (!(fabs(*mv) <= 1e100)) {
            snprintf(err, errlen, "field \"metric\" must be a number with "
                     "|metric| <= 1e100 (or null)");
            return -1;
        }
    }
    *r = (slaq_report){
        .iter = (uint64_t)json_integer_value(it),
        .loss = json_number_value(loss),
        .cpu_s = cpu ? json_number_value(cpu) : 0,
        .samples = samples ? json_number_value(samples) : 0,
        .t = sd_now(),
    };
    return 0;
}

/* A report's estimates, if it carries any, as a query's mini-batch: read
 * (aqpd.c), the job made a query at its first (job_set_kind), then
 * handed to the core. 1 taken, 0 none (an ordinary report), -1 with a
 * message. */
static int query_report(sd_daemon *d, sd_job *j, json_t *msg,
                        const slaq_report *r, char *err, size_t errlen)
{
    aqpd_batch b;
    int rc = aqpd_read(j, msg, &b, err, errlen);
    if (rc <= 0)
        return rc;
    if (j->kind != SLAQ_JOB_QUERY &&
        job_set_kind(d, j, SLAQ_JOB_QUERY, err, errlen) < 0) {
        aqpd_batch_free(&b);
        return -1;
    }
    return aqpd_take(d, j, r, &b, err, errlen);
}

int job_report(sd_daemon *d, sd_job *j, json_t *msg, char *err, size_t errlen)
{
    if (!j->sj) {
        snprintf(err, errlen, "job %lld is %s and takes no reports",
                 (long long)j->id, job_state_name(j->state));
        return -1;
    }
    slaq_report r;
    double mv, tv, wv;
    if (report_parse(msg, &r, &mv, &tv, &wv, err, errlen) < 0)
        return -1;
    const slaq_report *prev = slaq_history_last(slaq_job_history(j->sj));
    double prev_t = prev ? prev->t : -1;
    /* a query's report (its estimates) goes to the core as a mini-batch */
    int query = query_report(d, j, msg, &r, err, errlen);
    if (query < 0)
        return -1;
    int rc = query ? SLAQ_OK : add_report(j, &r, tv, wv);
    if (query)
        note_report(j, &r);
    if (rc == SLAQ_EORDER) {
        snprintf(err, errlen, "iter %llu is not after the previous report's "
                 "iter %llu", (unsigned long long)r.iter,
                 (unsigned long long)j->hist.last_iter);
        return -1;
    }
    if (rc) {
        snprintf(err, errlen, "%s (loss must be finite, cpu_s and samples "
                 ">= 0)", slaq_strerror(rc));
        return -1;
    }
    if (query) { /* a query's mini-batch: its vectors too */
        char *text = aqpd_vec_json(msg);
        store_report_vec(d->store, j->id, &r, mv, text, tv, wv);
        free(text);
    } else {
        store_report(d->store, j->id, &r, mv, tv, wv);
    }
    if (!isnan(mv)) {
        j->hist.last_metric = mv;
        j->hist.metric_iter = r.iter;
        slaq_job_set_metric(j->sj, mv);
    }
    d->reports_total++;
    advise(d, j, tv, wv > 0 ? wv : prev_t >= 0 ? r.t - prev_t : 0);
    if (j->goals.max_iters && r.iter >= j->goals.max_iters &&
        j->state == SD_RUNNING)
        job_stop(d, j, "max_iters");
    return 0;
}

int job_report_late(sd_daemon *d, sd_job *j, json_t *msg, char *err,
                    size_t errlen)
{
    slaq_report r;
    double mv, tv, wv;
    if (report_parse(msg, &r, &mv, &tv, &wv, err, errlen) < 0)
        return -1;
    if (slaq_report_check(&r) != SLAQ_OK) {
        snprintf(err, errlen, "%s (loss must be finite, cpu_s and samples "
                 ">= 0)", slaq_strerror(SLAQ_EINVAL));
        return -1;
    }
    if (j->hist.nreports && r.iter <= j->hist.last_iter)
        return 1; /* had it already */
    char *text = json_object_get(msg, "estimates") ? aqpd_vec_json(msg)
                                                   : NULL;
    store_report_vec(d->store, j->id, &r, mv, text, tv, wv);
    free(text);
    note_report(j, &r);
    if (!isnan(mv)) {
        j->hist.last_metric = mv;
        j->hist.metric_iter = r.iter;
        if (j->sj)
            slaq_job_set_metric(j->sj, mv);
    }
    d->reports_total++;
    return 0;
}

/* ---------------------------------------------------------------- stop */

static void signal_job(sd_daemon *d, sd_job *j, int sig)
{
    if (!j->proc.managed || j->proc.pid <= 0 || SD_REMOTE(j))
        return;
    sd_log(d, 1, "job %lld: sending %s to process group %d", (long long)j->id,
           sig == SIGKILL ? "SIGKILL" : sig == SIGTERM ? "SIGTERM" : "SIGCONT",
           (int)j->proc.pid);
    if (kill(-j->proc.pid, sig) < 0)
        kill(j->proc.pid, sig);
    if (sig != SIGCONT) /* a job stopped by the duty cycle must see it */
        kill(-j->proc.pid, SIGCONT);
}

void job_stop(sd_daemon *d, sd_job *j, const char *reason)
{
    int cancel = !strcmp(reason, "cancelled");
    if (!SD_ACTIVE(j->state))
        return;
    if (j->state == SD_STOPPING && !cancel)
        return;
    double now = sd_now();
    int was_stopping = j->state == SD_STOPPING;
    if (j->proc.suspended == SD_SUSP_SIGNAL) { /* it must hear the stop (a
                                             remote job's agent sees to it) */
        if (!SD_REMOTE(j))
            kill(-j->proc.pid, SIGCONT);
        j->proc.suspended = SD_SUSP_NONE;
    }
    free(j->reason);
    j->reason = strdup(reason);
    j->state = SD_STOPPING;
    store_put_job(d->store, j);
    store_event(d->store, now, j->id, "stop", reason);
    store_flush(d->store);
    sd_log(d, 0, "job %lld: stopping (%s)", (long long)j->id, reason);
    if (SD_REMOTE(j) && j->place.node < 0) { /* pending: nothing runs yet */
        job_finish(d, j, 0, 0, SD_CANCELLED, reason);
        return;
    }
    send_stop(d, j);
    if (SD_REMOTE(j))
        return; /* its agent asks, then signals it */
    /* A job with a client is asked first, even when cancelled: it may
     * save its work and exit within the grace period (job_tick signals
     * it after). Without a client a signal is all it can hear. */
    if (j->proc.managed && !j->conn && !j->proc.term_sent) {
        signal_job(d, j, SIGTERM);
        j->proc.term_sent = 1;
    } else if (was_stopping) {
        return; /* a cancel during a stop keeps the stop's deadline */
    }
    j->proc.stop_deadline = sd_mono() + d->cfg.grace_s;
}

void job_cancel(sd_daemon *d, sd_job *j, int now)
{
    job_stop(d, j, "cancelled");
    if (now && SD_REMOTE(j)) {
        j->proc.stop_now = 1;
        node_send_stop(d, j, 1);
        return;
    }
    if (now && j->proc.managed && !j->proc.term_sent) {
        signal_job(d, j, SIGTERM);
        j->proc.term_sent = 1;
        j->proc.stop_deadline = sd_mono() + d->cfg.grace_s;
    }
}

void job_finish(sd_daemon *d, sd_job *j, int have_status, int status,
                sd_state state_if_unknown, const char *why)
{
    if (!SD_ACTIVE(j->state))
        return;
    limit_logs_close(d, j);
    char detail[256];
    sd_state st;
    if (have_status) {
        j->proc.have_status = 1;
        j->proc.exit_status = status;
        if (WIFEXITED(status))
            snprintf(detail, sizeof detail, "exit status %d",
                     WEXITSTATUS(status));
        else
            snprintf(detail, sizeof detail, "killed by signal %d (%s)",
                     WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
        snprintf(detail, sizeof detail, "%s", why ? why : "ended");
    }
    /* What the modules above this table do at a job's end comes through
     * the functions job_modules_init registered (epoch.c): here, before
     * the end is recorded, and after it. */
    assert(d->job_ending && d->job_ended); /* job_modules_init's */
    d->job_ending(d, j);
    if (j->reason && !strcmp(j->reason, "cancelled"))
        st = SD_CANCELLED;
    else if (j->reason)
        st = SD_STOPPED;
    else if (have_status)
        st = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? SD_DONE
                                                           : SD_FAILED;
    else
        st = state_if_unknown;
    if (!j->reason && st != SD_DONE)
        j->reason = strdup(detail);
    j->state = st;
    j->ended = sd_now();
    if (j->sj) {
        /* What the job reached, with its reports since the last epoch (a
         * job that ran to its declared length has all of its reduction):
         * a finished job shows this from now on. */
        slaq_job_refit(j->sj);
        j->hist.reduction = slaq_job_reduction(j->sj);
        j->hist.end_loss = slaq_job_end_loss(j->sj);
        j->hist.declared_iters = slaq_job_iters(j->sj);
        j->enf.starved_max_s = slaq_job_starved_max(j->sj, sd_now());
        j->enf.lifts = slaq_job_lifts(j->sj);
        slaq_sched_remove(d->sched, j->sj);
        j->sj = NULL;
    }
    enf_release(d, j);
    j->enf.alloc = 0;
    json_decref(j->place.launch);
    j->place.launch = NULL;
    if (j->conn) {
        sd_conn *c = j->conn;
        j->conn = NULL;
        c->job = NULL;
    }
    store_put_job(d->store, j);
    store_event(d->store, j->ended, j->id, "exit", detail);
    if (!d->flush_hold)
        store_flush(d->store);
    sd_log(d, j->array ? 1 : 0, "job %lld (%s): %s, %s", (long long)j->id,
           j->name, job_state_name(st), detail);
    d->job_ended(d, j);
}

/* --------------------------------------------------------------- epoch */

void job_apply_alloc(sd_daemon *d, sd_job *j, double a, double now)
{
    memmove(j->enf.spark, j->enf.spark + (j->enf.nspark == SD_SPARK),
            (j->enf.nspark - (j->enf.nspark == SD_SPARK)) *
                sizeof *j->enf.spark);
    if (j->enf.nspark < SD_SPARK)
        j->enf.nspark++;
    j->enf.spark[j->enf.nspark - 1] = (float)a;
    double held = j->enf.alloc_next_by > 0 ? j->enf.alloc_next : j->enf.alloc;
    if (fabs(a - held) < 1e-6 && j->enf.nspark > 1)
        return; /* only changes (and each job's first) are recorded */
    store_alloc(d->store, j->id, now, a, d->epoch_no);
    sd_log(d, 1, "job %lld: %.3f cores", (long long)j->id, a);
    /* A falling share that would leave the job running more threads than
     * it keeps busy (threads time-sliced on fewer cores can be many times
     * slower, when they wait on each other) is held back: the job hears
     * its new advice first, and the share falls at its next report that
     * runs no more threads than advised, or after SD_ADVICE_WAIT_S. */
    double by = j->enf.alloc_next_by; /* a share held already keeps its
                                     deadline: the wait stays bounded
                                     however often the share moves */
    j->enf.alloc_next_by = 0;
    if (a < j->enf.alloc && j->conn && j->sj && !SD_REMOTE(j) &&
        j->enf.threads_used > slaq_job_threads(j->sj, a)) {
        j->enf.alloc_next = a;
        j->enf.alloc_next_by = by > 0 ? by : sd_mono() + SD_ADVICE_WAIT_S;
        send_alloc(d, j, a);
        return;
    }
    j->enf.alloc = a;
    if (!SD_REMOTE(j))
        enf_apply(d, j, a);
    send_alloc(d, j, a);
}
/* MLF-C under slaqd (docs/deadlines.md): with a policy that controls the
 * load (mlfs), whether the cluster is overloaded as MLFS defines it —
 * a job waits for a node, or the nodes' mean core demand (their jobs'
 * max_cores, at most a node's cores each) is above 90%; slaqd does not
 * know the jobs' memory, so cores are the one resource. */
slaq_node_use *job_node_use(sd_daemon *d)
{
    size_t nn = slaq_sched_node_count(d->sched);
    slaq_node_use *use = calloc(nn ? nn : 1, sizeof *use);
    if (!use)
        return NULL;
    for (size_t v = 0; v < nn; v++) {
        double cores = slaq_sched_node_cores(d->sched, v);
        use[v] = (slaq_node_use){cores, cores, 0, 0};
    }
    for (size_t i = 0; i < slaq_sched_count(d->sched); i++) {
        slaq_job *sj = slaq_sched_job(d->sched, i);
        int v = slaq_job_node(sj);
        if (v >= 0 && (size_t)v < nn)
            use[v].use_cores += fmin(slaq_job_max_cores(sj), use[v].cores);
    }
    for (size_t v = 0; v < nn; v++)
        use[v].use_mem = use[v].use_cores;
    return use;
}

/* An adopted process is not our child: poll that it still exists. */
static int adopted_alive(const sd_job *j)
{
    return kill(j->proc.pid, 0) == 0 &&
           enf_proc_start(j->proc.pid) == j->proc.pstart;
}

void job_watch(sd_daemon *d, sd_job *j, double mono)
{
    if (SD_REMOTE(j))
        return; /* its agent watches it */
    if (j->enf.alloc_next_by > 0 && mono >= j->enf.alloc_next_by)
        apply_held(d, j);
    if (j->proc.adopted && !adopted_alive(j)) {
        job_finish(d, j, 0, 0, SD_DONE, "exited while slaqd was not its "
                                        "parent; exit status unknown");
        return;
    }
    if (j->state != SD_STOPPING || mono < j->proc.stop_deadline)
        return;
    if (!j->proc.managed) {
        job_finish(d, j, 0, 0, SD_STOPPED, NULL);
    } else if (!j->proc.term_sent) {
        signal_job(d, j, SIGTERM);
        j->proc.term_sent = 1;
        j->proc.stop_deadline = mono + d->cfg.grace_s;
    } else {
        signal_job(d, j, SIGKILL);
        j->proc.stop_deadline = mono + d->cfg.grace_s;
    }
}

/* -------------------------------------------------------------- expiry */

/* Removes a finished job's log files and directory (best effort). */
static void remove_logs(sd_daemon *d, const sd_job *j)
{
    static const char *const names[] = {"stdout.log", "stderr.log"};
    char path[4200];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/jobs/%lld/%s", d->cfg.state_dir,
                 (long long)j->id, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/jobs/%lld", d->cfg.state_dir,
             (long long)j->id);
    rmdir(path);
}

/* The finished jobs of each user (job_expire): uid and count pairs. */
typedef struct expire_count {
    uid_t uid;
    size_t n;
} expire_count;

/* The count of uid in v[0..*n) (added when missing; NULL: no memory). */
static size_t *expire_slot(expire_count **v, size_t *n, size_t *cap,
                           uid_t uid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].uid == uid)
            return &(*v)[i].n;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 8;
        expire_count *nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return NULL;
        *v = nv;
        *cap = c;
    }
    (*v)[*n] = (expire_count){uid, 0};
    return &(*v)[(*n)++].n;
}

/*
 * Removes finished jobs past --keep-days, and each user's oldest past
 * --keep-jobs: the count is per user, so that one user's many jobs
 * expire their own history, never another's.
 */
void job_expire(sd_daemon *d)
{
    double mono = sd_mono();
    if (d->expire_last > 0 && mono - d->expire_last < 5)
        return;
    d->expire_last = mono;
    expire_count *per = NULL;
    size_t nper = 0, capper = 0;
    for (size_t i = 0; i < d->njobs; i++) {
        sd_job *j = d->jobs[i];
        size_t *n = j && !SD_ACTIVE(j->state)
                        ? expire_slot(&per, &nper, &capper, j->uid) : NULL;
        if (n)
            (*n)++;
    }
    double cutoff = d->cfg.keep_days > 0 ? sd_now() - d->cfg.keep_days * 86400
                                         : -INFINITY;
    size_t batch = 0;
    /* Oldest first; at most a batch per sweep to keep the loop responsive
     * (each job's reports are deleted with it). */
    for (size_t i = 0; i < d->njobs && batch < 2000; i++) {
        sd_job *j = d->jobs[i];
        /* A task stays while its array does: its row is its index's
         * state (array.c). */
        if (!j || SD_ACTIVE(j->state) || j->conn || j->array)
            continue;
        size_t *finished = expire_slot(&per, &nper, &capper, j->uid);
        if ((!finished || (double)*finished <= d->cfg.keep_jobs) &&
            !(j->ended > 0 && j->ended < cutoff))
            continue;
        if (batch++ == 0)
            store_set_last_id(d->store, (int64_t)d->njobs);
        store_delete_job(d->store, j->id);
        remove_logs(d, j);
        d->jobs[i] = NULL;
        job_free(j);
        if (finished)
            (*finished)--;
        d->jobs_expired++;
    }
    free(per);
    if (batch) {
        store_flush(d->store);
        sd_log(d, 1, "expired %zu finished jobs (keeping %g, %g days)", batch,
               d->cfg.keep_jobs, d->cfg.keep_days);
    }
}

/* ------------------------------------------------------------- restore */

typedef struct history_replay { sd_daemon *d; sd_job *j; int count; }
    history_replay;

static int replay_report(void *arg, const slaq_report *r)
{
    history_replay *x = arg;
    /* a stored report was accepted once */
    if (slaq_job_report(x->j->sj, r) == SLAQ_OK && x->count)
        note_report(x->j, r);
    return 0;
}

/* Hands a stored mini-batch (`vec`, aqpd_vec_json's) to the job's query
 * again after a restart; logged if it cannot be used. */
static void query_replay(sd_daemon *d, sd_job *j, const slaq_report *r,
                         const char *vec)
{
    char err[256];
    json_t *msg = vec ? json_loads(vec, 0, NULL) : NULL;
    int rc = msg ? query_report(d, j, msg, r, err, sizeof err) : 0;
    json_decref(msg);
    if (rc != 1)
        sd_log(d, 0, "job %lld: stored mini-batch %llu not replayed: %s",
               (long long)j->id, (unsigned long long)r->iter,
               rc < 0 ? err : "its estimates are missing or not JSON");
}

/* A query's stored mini-batch: its estimates go to the core again. */
static int replay_query_report(void *arg, const slaq_report *r,
                               const char *vec)
{
    history_replay *x = arg;
    /* A gap the controller took once (reports lost with a node). */
    const slaq_query *q = slaq_job_query(x->j->sj);
    if (q && r->iter > slaq_query_batches(q) + 1)
        slaq_job_query_resume(x->j->sj, r->iter - 1);
    query_replay(x->d, x->j, r, vec);
    if (x->count)
        note_report(x->j, r);
    return 0;
}

void job_replay_history(sd_daemon *d, sd_job *j, int count)
{
    history_replay x = {d, j, count};
    if (j->kind == SLAQ_JOB_QUERY) {
        aqpd_free(j); /* its points come back with the mini-batches */
        store_each_query_report(d->store, j->id, replay_query_report, &x);
    } else {
        store_each_report(d->store, j->id, replay_report, &x);
    }
}

static int count_report(void *arg, const slaq_report *r)
{
    note_report(arg, r);
    return 0;
}

static int count_query_report(void *arg, const slaq_report *r,
                              const char *vec)
{
    (void)vec;
    return count_report(arg, r);
}

/* A job that ended while slaqd was down: its figures from its stored
 * reports, as a job finished before the restart shows them. */
static void count_history(sd_daemon *d, sd_job *j)
{
    if (j->kind == SLAQ_JOB_QUERY)
        store_each_query_report(d->store, j->id, count_query_report, j);
    else
        store_each_report(d->store, j->id, count_report, j);
}

static int restore_one(sd_daemon *d, sd_job *j)
{
    if (!SD_ACTIVE(j->state))
        return 0;
    if ((j->place.node_at || j->place.launch) && d->cfg.agents) {
        /* Its agent re-adopts it when it reconnects (agent_link.c); a task
         * queued or running there is settled when its node registers
         * again (array.c). */
        if (node_restore_job(d, j, j->place.node_at) < 0 ||
            (!j->array && job_schedule(d, j) < 0))
            return -1;
        if (j->array)
            return 0;
        job_replay_history(d, j, 1);
        if (j->place.node >= 0)
            sd_log(d, 0, "job %lld (%s): waiting for node %s to reconnect",
                   (long long)j->id, j->name, j->place.node_at);
        return 0;
    }
    int alive = j->proc.pid > 0 && kill(j->proc.pid, 0) == 0 &&
                enf_proc_start(j->proc.pid) == j->proc.pstart;
    if (!alive) {
        /* One that said goodbye (conn.c stores it) had ended its work: its
         * exit status is gone with it (init reaped it), not its end. */
        int bye = store_job_has_event(d->store, j->id, "bye") == 1;
        count_history(d, j);
        j->state = bye ? SD_DONE : SD_LOST;
        free(j->reason);
        j->reason = strdup(bye ? "ended while slaqd was down, after its "
                                 "goodbye; exit status unknown"
                               : "its process vanished while slaqd was down");
        j->ended = sd_now();
        store_put_job(d->store, j);
        store_event(d->store, j->ended, j->id, bye ? "exit" : "lost",
                    j->reason);
        if (j->proc.managed &&
            enf_adopt(d, j) == 0) /* drop its empty cgroup */
            enf_release(d, j);
        sd_log(d, 0, "job %lld (%s): %s (pid %d is gone)", (long long)j->id,
               j->name, bye ? "done after its goodbye" : "lost",
               (int)j->proc.pid);
        return 0;
    }
    if (j->array) { /* a task: one core, outside the scheduler */
        j->enf.alloc = 1;
    } else {
        if (job_schedule(d, j) < 0)
            return -1;
        if (j->proc.suspended ==
            SD_SUSP_SIGNAL) /* still SIGSTOPped: no cores */
            slaq_job_set_max_cores(j->sj, 1e-6);
        job_replay_history(d, j, 1);
    }
    j->proc.adopted = 1;
    if (j->proc.managed) {
        enf_adopt(d, j);
        limit_logs_reopen(d, j);
    }
    if (j->state == SD_STOPPING)
        j->proc.stop_deadline = sd_mono() + d->cfg.grace_s;
    store_event(d->store, sd_now(), j->id, "readopt", NULL);
    sd_log(d, 0, "job %lld (%s): re-adopted pid %d after %llu reports",
           (long long)j->id, j->name, (int)j->proc.pid,
           (unsigned long long)j->hist.nreports);
    return 0;
}

/* Makes ids up to `last` taken (their jobs expired), so none is reused. */
static int reserve_ids(sd_daemon *d, int64_t last)
{
    if ((uint64_t)last <= d->njobs)
        return 0;
    if (jobs_room(d, (uint64_t)last) < 0)
        return -1;
    d->njobs = (size_t)last;
    return 0;
}

int job_reserve_id(sd_daemon *d, int64_t id)
{
    return id < 1 || (uint64_t)id <= d->njobs ? -1 : reserve_ids(d, id);
}

int job_restore(sd_daemon *d)
{
    if (store_each_job(d->store, job_new, restore_one, d) < 0 ||
        reserve_ids(d, store_last_id(d->store)) < 0) {
        sd_log(d, 0, "cannot restore jobs: %s", store_errmsg(d->store));
        return -1;
    }
    store_flush(d->store);
    return 0;
}

/* ---------------------------------------------------------------- json */

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static const char *model_name(slaq_model m)
{
    switch (m) {
    case SLAQ_MODEL_LINEAR: return "linear";
    case SLAQ_MODEL_RATIONAL: return "rational";
    case SLAQ_MODEL_EXP: return "exponential";
    case SLAQ_MODEL_TABLE: return "table";
    case SLAQ_MODEL_AQP: return "aqp";
    }
    return "?";
}

/* Why the job is where it is under mlfs-h, mlfs-rl or mlfs (the last
 * epoch's terms, epoch_priority); null under other policies and for a
 * job the scheduler does not hold. */
static json_t *priority_json(sd_daemon *d, const sd_job *j)
{
    /* the policy the terms were made under: the one in force may have
     * changed since the epoch */
    slaq_policy_kind pol = j->goals.prio_policy;
    if (!j->sj || !j->goals.prio_rank ||
        pol != slaq_sched_get_config(d->sched)->policy)
        return json_null();
    const slaq_prio_terms *t = &j->goals.prio;
    json_t *p = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
                     "s:b, s:f, s:f, s:f, s:o}",
                     "policy", slaq_policy_name(pol),
                     "rank", (json_int_t)j->goals.prio_rank,
                     "of", (json_int_t)slaq_sched_count(d->sched),
                     "key", t->key,
                     "urgency", t->feat[0], "iteration", t->feat[1],
                     "loss_drop", t->feat[2], "deadline", t->feat[3],
                     "remaining", t->feat[4], "waiting", t->feat[5],
                     "holds_cores", t->feat[6] > 0, "load", t->feat[7],
                     "ml", t->ml, "computation", t->comp,
                     "score", isnan(t->score) ? json_null()
                                              : json_real(t->score));
    return p ? p : json_null(); /* a term not a number: none to show */
}

/* job_json's sections, each adding its keys to o in the order clients
 * have always seen them. */

/* Who and where: id, owner, share, name, state, node, array task,
 * restarts, moves, process, command and directory. */
static void job_json_identity(sd_daemon *d, const sd_job *j, json_t *o)
{
    json_t *cmd = json_loads(j->cmd, 0, NULL);
    json_object_set_new(o, "id", json_integer(j->id));
    json_object_set_new(o, "user", json_string(j->user ? j->user : "?"));
    json_object_set_new(o, "uid", json_integer((json_int_t)j->uid));
    json_t *share = acct_job_json(d, j);
    if (share)
        json_object_set_new(o, "share", share);
    json_object_set_new(o, "name", json_string(j->name));
    json_object_set_new(o, "state", json_string(job_state_name(j->state)));
    json_object_set_new(o, "managed", json_boolean(j->proc.managed));
    json_object_set_new(o, "node", !d->cfg.agents ? json_string("local")
                        : SD_REMOTE(j) && j->place.node >= 0
                            ? json_string(node_name(d, j))
                        : j->place.node_at ? json_string(j->place.node_at)
                                     : json_null());
    json_object_set_new(o, "restartable", json_boolean(j->place.restartable));
    if (j->array) { /* a task of a task array (array.c) */
        json_object_set_new(o, "array", json_integer(j->array));
        json_object_set_new(o, "index", json_integer(j->array_index));
    }
    if (j->place.restarts)
        json_object_set_new(o, "restarts", json_integer(j->place.restarts));
    if (j->place.moves ||
        j->place.move_to >= 0) { /* moved between nodes (slaq move) */
        json_object_set_new(o, "moves", json_integer(j->place.moves));
        json_object_set_new(o, "move_s", num_or_null(j->place.move_s));
        json_object_set_new(o, "moving_to", j->place.move_to >= 0
                            ? json_string(d->nodes[j->place.move_to].name)
                            : json_null());
    }
    json_object_set_new(o, "pid", json_integer(j->proc.pid));
    json_object_set_new(o, "cmd", cmd ? cmd : json_array());
    json_object_set_new(o, "cwd", json_string(j->cwd));
}

/* What it was given and what it is: weight, limits, convergence class,
 * declared length, cores, kind (and a query's summary). */
static void job_json_settings(const sd_job *j, json_t *o)
{
    json_object_set_new(o, "weight", json_real(j->goals.weight));
    json_object_set_new(o, "max_cores", num_or_null(j->goals.max_cores));
    json_object_set_new(o, "target_reduction", json_real(j->goals.target));
    json_object_set_new(o, "max_iters",
                        json_integer((json_int_t)j->goals.max_iters));
    json_object_set_new(o, "max_time", json_real(j->goals.max_time));
    json_object_set_new(
        o, "convergence",
        json_string(slaq_convergence_name(j->goals.convergence)));
    uint64_t declared = j->sj ? slaq_job_iters(j->sj) : j->hist.declared_iters;
    json_object_set_new(o, "declared_iters",
                        declared ? json_integer((json_int_t)declared)
                                 : json_null());
    json_object_set_new(o, "cores", json_real(j->enf.alloc));
    json_object_set_new(o, "stall_s", json_real(j->enf.stall_s));
    json_object_set_new(o, "kind", json_string(slaq_job_kind_name(j->kind)));
    if (j->kind == SLAQ_JOB_QUERY)
        json_object_set_new(o, "query", aqpd_summary_json(j));
}

/* What it reported: iteration, reports, losses, its metric. */
static void job_json_reports(const sd_job *j, json_t *o)
{
    json_object_set_new(o, "iter",
                        json_integer((json_int_t)j->hist.last_iter));
    json_object_set_new(o, "reports",
                        json_integer((json_int_t)j->hist.nreports));
    json_object_set_new(o, "loss", num_or_null(j->hist.last_loss));
    json_object_set_new(o, "first_loss", num_or_null(j->hist.first_loss));
    json_object_set_new(o, "end_loss", num_or_null(trace_end_loss(j)));
    json_object_set_new(o, "metric_name", j->hist.metric_name
                        ? json_string(j->hist.metric_name) : json_null());
    json_object_set_new(o, "metric", num_or_null(j->hist.last_metric));
    json_object_set_new(o, "metric_iter",
                        isnan(j->hist.last_metric)
                            ? json_null()
                            : json_integer((json_int_t)j->hist.metric_iter));
}

/* The goal (docs/deadlines.md): the deadline and its slack (seconds
 * left, or by how much it was missed, negative; at the end for a job
 * that ended), whether the last metric meets the accuracy, and the
 * priority policies' terms. */
static void job_json_goal(sd_daemon *d, const sd_job *j, json_t *o)
{
    const slaq_goal *g = &j->goals.goal;
    int has_dl = isfinite(g->deadline);
    double at = j->ended > 0 ? j->ended : sd_now();
    json_object_set_new(o, "deadline", has_dl ? json_real(g->deadline)
                                              : json_null());
    json_object_set_new(o, "slack", has_dl ? json_real(g->deadline - at)
                                           : json_null());
    json_object_set_new(o, "accuracy", num_or_null(g->accuracy));
    json_object_set_new(o, "direction", json_string(g->maximize ? "max"
                                                                : "min"));
    json_object_set_new(o, "urgency", json_integer(g->urgency));
    json_object_set_new(o, "stop", json_string(slaq_stop_name(g->stop)));
    json_object_set_new(
        o, "accuracy_met",
        isnan(g->accuracy) || isnan(j->hist.last_metric)
            ? json_null()
            : json_boolean(slaq_goal_met(g, j->hist.last_metric)));
    json_object_set_new(o, "priority", priority_json(d, j));
}

/* Suspension and continuation: how it is suspended and what that cost,
 * the jobs it continued or continues, its sweep. */
static void job_json_suspension(const sd_job *j, json_t *o)
{
    json_object_set_new(o, "suspended", j->proc.suspended == SD_SUSP_SIGNAL
                        ? json_string("signal")
                        : j->proc.suspended == SD_SUSP_CHECKPOINT
                        ? json_string("checkpoint") : json_null());
    json_object_set_new(o, "suspend_ms", num_or_null(j->proc.suspend_ms));
    json_object_set_new(o, "checkpoint_bytes",
                        j->proc.checkpoint_bytes >= 0
                            ? json_integer(j->proc.checkpoint_bytes)
                            : json_null());
    json_object_set_new(o, "continued_by", j->continued_by
                        ? json_integer(j->continued_by) : json_null());
    json_object_set_new(o, "resumed_from", j->resumed_from
                        ? json_integer(j->resumed_from) : json_null());
    json_object_set_new(o, "sweep", j->sweep ? json_integer(j->sweep)
                                             : json_null());
}

/* Its cost, its connection and how it ended: CPU-seconds and per
 * iteration and sample, the reason, the exit status, its times and its
 * recent cores; the reduction it ended at, its starvation. */
static void job_json_run(const sd_job *j, json_t *o)
{
    json_object_set_new(o, "cpu_s", json_real(j->hist.cpu_total));
    json_object_set_new(o, "cpu_per_iter", j->hist.iters_total > 0
                        ? json_real(j->hist.cpu_work / j->hist.iters_total)
                        : json_null());
    json_object_set_new(o, "cpu_per_sample", j->hist.samples_total > 0
                        ? json_real(j->hist.cpu_work / j->hist.samples_total)
                        : json_null());
    json_object_set_new(o, "cpu_per_iter_recent", j->hist.iters_total > 0
                        ? json_real(j->hist.cost_recent) : json_null());
    json_object_set_new(o, "cpu_per_iter_best", j->hist.cost_best > 0
                        ? json_real(j->hist.cost_best) : json_null());
    json_object_set_new(o, "connected", json_boolean(j->conn != NULL));
    json_object_set_new(o, "reason", j->reason ? json_string(j->reason)
                                               : json_null());
    if (j->proc.have_status) {
        int st = j->proc.exit_status;
        json_object_set_new(o, "exit_code", WIFEXITED(st)
                            ? json_integer(WEXITSTATUS(st)) : json_null());
        json_object_set_new(o, "signal", WIFSIGNALED(st)
                            ? json_integer(WTERMSIG(st)) : json_null());
    }
    json_object_set_new(o, "submitted", json_real(j->submitted));
    json_object_set_new(o, "started", json_real(j->started));
    json_object_set_new(o, "ended", j->ended > 0 ? json_real(j->ended)
                                                 : json_null());
    json_t *spark = json_array();
    for (unsigned i = 0; i < j->enf.nspark; i++)
        json_array_append_new(spark, json_real(j->enf.spark[i]));
    json_object_set_new(o, "recent_cores", spark);
    if (!j->sj && j->hist.nreports >= 2 && j->ended > 0 &&
        j->hist.reduction > 0)
        json_object_set_new(o, "reduction", json_real(j->hist.reduction));
    /* The bound on starvation (--starve-bound, docs/metrics.md): the
     * core's while the job is scheduled, what it left when it ended. */
    json_object_set_new(o, "starved_max_s", json_real(
                            j->sj ? slaq_job_starved_max(j->sj, sd_now())
                                  : j->enf.starved_max_s));
    json_object_set_new(o, "lifts", json_integer(
                            j->sj ? slaq_job_lifts(j->sj) : j->enf.lifts));
}

/* The prediction of a scheduled job with history: the model, the final
 * loss, the losses 1, 10, 100 and 1,000 iterations ahead, and the cost
 * of an iteration. Returns a new object. */
static json_t *job_json_prediction(const sd_job *j)
{
    const slaq_predictor *p = slaq_job_predictor(j->sj);
    const slaq_forecast *f = slaq_predictor_forecast(p);
    json_t *pr = json_object();
    json_object_set_new(pr, "model", json_string(model_name(f->model)));
    json_object_set_new(pr, "final_loss", num_or_null(f->final_loss));
    json_t *ahead = json_array();
    for (double hh = 1; hh <= 1000; hh *= 10)
        json_array_append_new(ahead, json_pack(
            "{s:f, s:o}", "iter", (double)j->hist.last_iter + hh, "loss",
            num_or_null(slaq_predictor_loss(p, hh))));
    json_object_set_new(pr, "ahead", ahead);
    json_object_set_new(pr, "iter_cpu_s", json_real(
        slaq_runtime_iter_cpu(slaq_job_runtime(j->sj))));
    return pr;
}

/* What the scheduling core knows of a scheduled job (j->sj): its
 * reduction and gain, threads, scaling, forecasts, speed and recent
 * losses; with detail, its prediction. */
static void job_json_core(const sd_job *j, int detail, json_t *o)
{
    const slaq_history *h = slaq_job_history(j->sj);
    double red = slaq_job_reduction(j->sj);
    json_object_set_new(o, "reduction", json_real(red));
    json_object_set_new(o, "pred_norm_loss", json_real(1 - red));
    /* deprecated alias of pred_norm_loss, until the next release */
    json_object_set_new(o, "norm_loss", json_real(1 - red));
    json_object_set_new(o, "gain", num_or_null(slaq_job_gain(j->sj)));
    json_object_set_new(o, "threads", json_integer(
                            slaq_job_threads(j->sj, j->enf.alloc)));
    json_object_set_new(o, "threads_used", j->enf.threads_used
                            ? json_integer(j->enf.threads_used)
                            : json_null());
    const slaq_scaling *m = slaq_job_scaling(j->sj);
    json_object_set_new(o, "scaling", json_pack(
        "{s:o, s:f, s:f, s:o, s:b}", "iter_core_s", num_or_null(m->a),
        "sigma", m->sigma, "kappa", m->kappa, "rel_sd",
        num_or_null(m->rel_sd), "known", m->known));
    json_object_set_new(o, "eta90_s", num_or_null(trace_eta90(j)));
    double fe = trace_forecast_error(j);
    json_object_set_new(o, "forecast_norm_error", num_or_null(fe));
    /* deprecated alias of forecast_norm_error, until the next release */
    json_object_set_new(o, "predictor_error", num_or_null(fe));
    json_object_set_new(o, "throttled", json_boolean(j->enf.throttled));
    size_t len = slaq_history_len(h);
    double ips = 0;
    if (len >= 2) {
        const slaq_report *a = slaq_history_at(h, 0);
        const slaq_report *b = slaq_history_at(h, len - 1);
        if (b->t > a->t)
            ips = (double)(b->iter - a->iter) / (b->t - a->t);
    }
    json_object_set_new(o, "iters_per_s", json_real(ips));
    json_t *recent = json_array();
    for (size_t i = len > SD_SPARK ? len - SD_SPARK : 0; i < len; i++)
        json_array_append_new(recent,
                              json_real(slaq_history_at(h, i)->loss));
    json_object_set_new(o, "recent_losses", recent);
    if (detail && len > 0)
        json_object_set_new(o, "prediction", job_json_prediction(j));
}

/* slaq show's extra: the log directory and the stored history,
 * allocations and events. */
static void job_json_detail(sd_daemon *d, const sd_job *j, json_t *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/jobs/%lld", d->cfg.state_dir,
             (long long)j->id);
    char *abs = realpath(path, NULL);
    json_object_set_new(o, "log_dir", j->proc.managed && abs ? json_string(abs)
                                                        : json_null());
    free(abs);
    json_object_set_new(o, "history", store_reports_json(d->store, j->id,
                                                         500));
    json_object_set_new(o, "allocations",
                        store_allocs_json(d->store, j->id, 500));
    json_object_set_new(o, "events", store_events_json(d->store, j->id,
                                                       200));
}

json_t *job_json(sd_daemon *d, const sd_job *j, int detail)
{
    json_t *o = json_object();
    job_json_identity(d, j, o);
    job_json_settings(j, o);
    job_json_reports(j, o);
    job_json_goal(d, j, o);
    job_json_suspension(j, o);
    job_json_run(j, o);
    if (j->sj)
        job_json_core(j, detail, o);
    if (detail)
        job_json_detail(d, j, o);
    return o;
}
