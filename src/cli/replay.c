/*
 * replay.c — `slaq replay`: run a recorded slaqd run again through the
 * scheduling core and check the allocations slaqd recorded.
 *
 * slaqd's state.db holds what the core was given and what it answered:
 * each job's options and start and end times (jobs), every report with the
 * wall-clock time slaqd received it (reports), each job's allocation
 * whenever it changed, with the epoch's number and time (allocs), and
 * policy changes (events). The replay feeds the same inputs in the same
 * order into a fresh slaq_sched built with slaqd's settings — jobs added
 * when they started, reports before the epoch that followed them, the
 * refit of a job when it ended (that job alone) and its removal,
 * slaq_sched_epoch at each epoch time — and compares every job's allocation after every epoch with the
 * one recorded (the last change at or before that epoch).
 *
 * An epoch in which no allocation changed is not in allocs; its time is
 * interpolated between the neighbouring recorded epochs, so a report that
 * arrived close to it may fall on the other side of it. Differences are
 * counted separately for epochs with a recorded and an interpolated time.
 * A job's own length declared in its hello (iters) is not recorded and is
 * not replayed.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "cli/cli.h"
#include "daemon/store.h"
#include "io/setopt.h"
#include "slaq/deadline.h"
#include "slaq/slaq.h"

/* slaqd's defaults that depend on another setting. */
static const char *replay_default_text(const char *name)
{
    return !strcmp(name, "cores") ? "none: required"
         : !strcmp(name, "unit")  ? "cores / 20, at most 1" : NULL;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq replay --state-dir DIR --cores N [options]\n\n"
        "Runs the last slaqd run recorded in DIR/state.db again through\n"
        "slaq's scheduling core and checks every job's allocation after\n"
        "every epoch against the one slaqd recorded. Give the settings the\n"
        "run had (slaqd's options of the same names and defaults; --policy\n"
        "is the one at the start: later changes are recorded):\n\n"
        "  --state-dir DIR       slaqd's state directory (holding state.db)\n"
        "  --tolerance X         cores two allocations may differ by (1e-6)\n"
        "  --show N              list at most N differences (default 10)\n"
        "  --help                this text\n\n"
        "Scheduler settings (docs/libslaq.md; the same as slaqd's):\n");
    slaq_sched_config dflt;
    slaq_sched_config_init(&dflt);
    setopt_help(f, 24, &dflt, NULL, replay_default_text);
    fprintf(f, "\n"
        "Epochs in which no allocation changed are not recorded; their time\n"
        "is interpolated, and differences there are counted apart. Exit\n"
        "status: 0 every allocation equal, 1 differences (listed), 2 bad\n"
        "usage or an unreadable state.db.\n");
}

/* ---------------------------------------------------------- the record */

typedef struct rp_alloc {
    uint64_t epoch;
    double cores;
} rp_alloc;

typedef struct rp_job {
    int64_t id;
    double weight, max_cores, started, ended;
    uint64_t max_iters;
    slaq_convergence conv;
    rp_alloc *allocs; /* changes, by epoch */
    size_t nallocs;
    size_t next;      /* allocs[next] is the first after the last epoch */
    slaq_job *sj;
} rp_job;

enum { EV_ADD, EV_REPORT, EV_END, EV_POLICY, EV_EPOCH };

typedef struct rp_event {
    double t;
    int kind;
    size_t job;         /* index into jobs (ADD, REPORT, END) */
    slaq_report r;      /* REPORT */
    double threads;     /* REPORT: how its iterations ran (0: not said) */
    double wall_s;
    int policy;         /* POLICY */
    uint64_t epoch;     /* EPOCH */
    int exact;          /* EPOCH: its time was recorded */
} rp_event;

typedef struct rp_run {
    rp_job *jobs;
    size_t njobs;
    rp_event *ev;
    size_t nev, capev;
    size_t nreports;
    double t0;          /* the run's start */
} rp_run;

static rp_event *ev_add(rp_run *run)
{
    if (run->nev == run->capev) {
        size_t cap = grow_cap(run->capev, run->nev + 1, 1024);
        if (!cap || GROW_ARRAY(run->ev, cap))
            return NULL;
        run->capev = cap;
    }
    rp_event *e = &run->ev[run->nev++];
    memset(e, 0, sizeof *e);
    return e;
}

static int find_job(const rp_run *run, int64_t id)
{
    for (size_t i = 0; i < run->njobs; i++)
        if (run->jobs[i].id == id)
            return (int)i;
    return -1;
}

/* A walk over state.db that failed: rc -2 is memory (a callback's),
 * anything else the database's. */
static int read_failed(store_run *db, const char *what, int rc)
{
    cli_error("replay", "state.db: reading %s: %s", what,
              rc == -2 ? "out of memory" : store_run_errmsg(db));
    return -1;
}

/* The latest of slaqd's "start" events: when the last run began. */
static int latest_start(void *arg, double t, const char *detail)
{
    (void)detail;
    rp_run *run = arg;
    if (run->t0 == 0 || t > run->t0)
        run->t0 = t;
    return 0;
}

static int add_job(void *arg, const store_run_job *sj)
{
    rp_run *run = arg;
    rp_job *nj = realloc(run->jobs, (run->njobs + 1) * sizeof *nj);
    if (!nj)
        return -2;
    run->jobs = nj;
    rp_job *j = &run->jobs[run->njobs++];
    memset(j, 0, sizeof *j);
    j->id = sj->id;
    j->weight = sj->weight;
    j->max_cores = sj->max_cores;
    j->max_iters = sj->max_iters;
    j->started = sj->started;
    j->ended = sj->ended;
    if (!sj->convergence ||
        slaq_convergence_parse(sj->convergence, &j->conv) != SLAQ_OK)
        j->conv = SLAQ_CONV_UNKNOWN;
    return 0;
}

/* The jobs that started in the last run (since the last "start" event). */
static int load_jobs(store_run *db, rp_run *run)
{
    int rc;
    if ((rc = store_run_events(db, "start", -INFINITY, 1, latest_start,
                               run)))
        return read_failed(db, "events", rc);
    if ((rc = store_run_jobs(db, run->t0, add_job, run)))
        return read_failed(db, "jobs", rc);
    for (size_t i = 0; i < run->njobs; i++) {
        rp_event *e = ev_add(run);
        if (!e)
            return -1;
        e->t = run->jobs[i].started;
        e->kind = EV_ADD;
        e->job = i;
        if (run->jobs[i].ended > 0) {
            if (!(e = ev_add(run)))
                return -1;
            e->t = run->jobs[i].ended;
            e->kind = EV_END;
            e->job = i;
        }
    }
    return 0;
}

static int add_report(void *arg, int64_t job, const slaq_report *r,
                      double threads, double wall_s)
{
    rp_run *run = arg;
    int j = find_job(run, job);
    if (j < 0)
        return 0; /* a job of an earlier run */
    rp_event *e = ev_add(run);
    if (!e)
        return -2;
    e->kind = EV_REPORT;
    e->job = (size_t)j;
    e->r = *r;
    e->threads = threads;
    e->wall_s = wall_s;
    e->t = r->t;
    run->nreports++;
    return 0;
}

static int add_policy(void *arg, double t, const char *name)
{
    rp_run *run = arg;
    slaq_policy_kind k;
    rp_event *e;
    if (!name || slaq_policy_parse(name, &k) != SLAQ_OK || !(e = ev_add(run)))
        return 0;
    e->t = t;
    e->kind = EV_POLICY;
    e->policy = (int)k;
    return 0;
}

static int load_reports(store_run *db, rp_run *run)
{
    int rc = store_run_reports(db, add_report, run);
    if (rc)
        return read_failed(db, "reports", rc);
    store_run_events(db, "policy", run->t0, 1, add_policy, run);
    return 0;
}

/* The epochs of the recorded allocation changes, with their times. */
typedef struct rp_epochs {
    rp_run *run;
    uint64_t *ep;
    double *et;
    size_t ne, cap;
} rp_epochs;

static int add_alloc(void *arg, int64_t job, uint64_t k, double cores,
                     double t)
{
    rp_epochs *x = arg;
    int j = find_job(x->run, job);
    if (j >= 0) {
        rp_job *jb = &x->run->jobs[j];
        rp_alloc *na = realloc(jb->allocs, (jb->nallocs + 1) * sizeof *na);
        if (!na)
            return -2;
        jb->allocs = na;
        jb->allocs[jb->nallocs++] = (rp_alloc){k, cores};
    }
    if (x->ne && x->ep[x->ne - 1] == k)
        return 0;
    if (x->ne == x->cap) {
        size_t nc = grow_cap(x->cap, x->ne + 1, 256);
        if (!nc || GROW_ARRAY(x->ep, nc) || GROW_ARRAY(x->et, nc))
            return -2;
        x->cap = nc;
    }
    x->ep[x->ne] = k;
    x->et[x->ne++] = t;
    return 0;
}

/* Each job's recorded changes, and the epochs: recorded times where an
 * allocation changed, interpolated between them. */
static int load_epochs(store_run *db, rp_run *run, double epoch_s)
{
    rp_epochs x = {.run = run};
    int rc = store_run_allocs(db, run->t0, add_alloc, &x);
    uint64_t *ep = x.ep;
    double *et = x.et;
    size_t ne = x.ne;
    int bad = rc != 0;
    for (size_t i = 0; !bad && ne && i < ne; i++) {
        uint64_t from = i ? ep[i - 1] + 1 : ep[0];
        for (uint64_t k = from; k <= ep[i] && !bad; k++) {
            rp_event *e = ev_add(run);
            if (!e) {
                bad = 1;
                break;
            }
            e->kind = EV_EPOCH;
            e->epoch = k;
            e->exact = k == ep[i];
            e->t = e->exact ? et[i]
                 : et[i - 1] + (et[i] - et[i - 1]) * (double)(k - ep[i - 1]) /
                       (double)(ep[i] - ep[i - 1]);
        }
    }
    /* After the last change: epochs until the last job ended. */
    double last_end = 0;
    for (size_t i = 0; i < run->njobs; i++)
        last_end = fmax(last_end, run->jobs[i].ended);
    for (uint64_t k = ne ? ep[ne - 1] + 1 : 0;
         !bad && ne && epoch_s > 0; k++) {
        double t = et[ne - 1] + (double)(k - ep[ne - 1]) * epoch_s;
        if (t >= last_end)
            break;
        rp_event *e = ev_add(run);
        if (!e) {
            bad = 1;
            break;
        }
        *e = (rp_event){.t = t, .kind = EV_EPOCH, .epoch = k};
    }
    free(ep);
    free(et);
    if (bad)
        return read_failed(db, "allocations", rc ? rc : -2);
    return 0;
}

/* By time; at the same time a job is added before it reports, reports
 * come before an end and an epoch (slaqd stamps an epoch after handling
 * what arrived before it). */
static int ev_cmp(const void *a, const void *b)
{
    const rp_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind - y->kind;
    if (x->job != y->job)
        return x->job < y->job ? -1 : 1;
    return x->r.iter < y->r.iter ? -1 : x->r.iter > y->r.iter;
}

/* ------------------------------------------------------------- replay */

typedef struct rp_opts {
    slaq_sched_config sc;
    double tolerance;
    long show;
} rp_opts;

typedef struct rp_tally {
    size_t epochs, exact_epochs, compared, equal, diff_exact, diff_interp,
           unrecorded, listed;
    uint64_t first_diff;   /* the first epoch that differed (0: none) */
    int first_exact;       /* its time was recorded */
} rp_tally;

/* The job's recorded allocation after epoch k: its last change at or
 * before k; NAN if it has none yet. */
static double recorded(rp_job *j, uint64_t k)
{
    while (j->next < j->nallocs && j->allocs[j->next].epoch <= k)
        j->next++;
    return j->next ? j->allocs[j->next - 1].cores : NAN;
}

static void compare_epoch(rp_run *run, const rp_event *e, const rp_opts *o,
                          rp_tally *tl)
{
    tl->epochs++;
    tl->exact_epochs += e->exact;
    for (size_t i = 0; i < run->njobs; i++) {
        rp_job *j = &run->jobs[i];
        if (!j->sj)
            continue;
        double want = recorded(j, e->epoch), got = slaq_job_alloc(j->sj);
        if (isnan(want)) {
            tl->unrecorded++;
            continue;
        }
        tl->compared++;
        if (fabs(want - got) <= o->tolerance) {
            tl->equal++;
            continue;
        }
        if (e->exact)
            tl->diff_exact++;
        else
            tl->diff_interp++;
        if (!tl->first_diff) {
            tl->first_diff = e->epoch;
            tl->first_exact = e->exact;
        }
        if ((long)tl->listed < o->show) {
            tl->listed++;
            printf("  epoch %llu (%s time %.3f): job %lld recorded %.4f "
                   "cores, replay %.4f\n", (unsigned long long)e->epoch,
                   e->exact ? "recorded" : "interpolated", e->t - run->t0,
                   (long long)j->id, want, got);
        }
    }
}

static int replay(rp_run *run, const rp_opts *o, rp_tally *tl)
{
    char why[1024];
    slaq_sched_config sc = o->sc;
    slaq_rl_model net; /* mlfs-rl's and mlfs's: the committed one */
    if (setopt_model(&sc, NULL, &net, why, sizeof why)) {
        cli_error("replay", "%s", why);
        return -1;
    }
    slaq_sched *s = slaq_sched_new(&sc);
    if (!s) {
        cli_error("replay", "cannot create the scheduler with these "
                  "settings (cores %g, unit %g)", o->sc.cores, o->sc.unit);
        return -1;
    }
    qsort(run->ev, run->nev, sizeof *run->ev, ev_cmp);
    int rc = 0;
    for (size_t i = 0; i < run->nev && !rc; i++) {
        const rp_event *e = &run->ev[i];
        rp_job *j = e->kind <= EV_END ? &run->jobs[e->job] : NULL;
        switch (e->kind) {
        case EV_ADD: {
            slaq_job_opts jo;
            slaq_job_opts_init(&jo);
            jo.weight = j->weight;
            jo.max_cores = j->max_cores;
            jo.iters = j->max_iters;
            jo.convergence = j->conv;
            jo.user = j;
            j->sj = slaq_sched_add(s, &jo, e->t);
            if (!j->sj) {
                cli_error("replay", "job %lld: the core refused its options "
                          "(weight %g, max_cores %g)", (long long)j->id,
                          j->weight, j->max_cores);
                rc = -1;
            }
            break;
        }
        case EV_REPORT:
            /* slaqd stored only the reports the core accepted */
            if (j->sj && slaq_job_report_scaling(j->sj, &e->r, e->threads,
                                                 e->wall_s) != SLAQ_OK)
                fprintf(stderr, "slaq replay: job %lld: report of iteration "
                        "%llu refused\n", (long long)j->id,
                        (unsigned long long)e->r.iter);
            break;
        case EV_END:
            if (j->sj) {
                slaq_job_refit(j->sj); /* as slaqd does when a job ends */
                slaq_sched_remove(s, j->sj);
                j->sj = NULL;
            }
            break;
        case EV_POLICY:
            slaq_sched_set_policy(s, (slaq_policy_kind)e->policy);
            break;
        case EV_EPOCH:
            if (slaq_sched_count(s) == 0)
                break; /* slaqd calls the core only with jobs */
            if (slaq_sched_epoch(s, e->t) != SLAQ_OK) {
                cli_error("replay", "epoch %llu: the core failed",
                          (unsigned long long)e->epoch);
                rc = -1;
                break;
            }
            compare_epoch(run, e, o, tl);
            break;
        }
    }
    slaq_sched_free(s);
    return rc;
}

/* ------------------------------------------------------------ options */

static int parse_opts(int argc, char **argv, rp_opts *o, const char **dir)
{
    enum { O_DIR = 1, O_TOL, O_SHOW };
    static const struct option own[] = {
        {"state-dir", required_argument, 0, O_DIR},
        {"tolerance", required_argument, 0, O_TOL},
        {"show", required_argument, 0, O_SHOW},
        {"help", no_argument, 0, 'h'},
    };
    enum { NOWN = sizeof own / sizeof *own };
    struct option opts[NOWN + SETOPT_MAX + 1];
    setopt_build(opts, own, NOWN, NULL);
    /* slaqd's settings: the table's defaults; cores has none (the run's
     * must be given) and the unit follows from the cores, as in slaqd. */
    slaq_sched_config_init(&o->sc);
    o->tolerance = 1e-6;
    o->show = 10;
    int c, cores_given = 0, unit_given = 0;
    double v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int set = cli_setting("replay", &o->sc, c, optarg);
        if (set < 0)
            return -1;
        if (set == 0) {
            cores_given |= !strcmp(setopt_row(c)->name, "cores");
            unit_given |= !strcmp(setopt_row(c)->name, "unit");
            continue;
        }
        switch (c) {
        case O_DIR: *dir = optarg; break;
        case O_TOL:
            if (cli_parse_nonneg("replay", "--tolerance", optarg,
                                 &o->tolerance))
                return -1;
            break;
        case O_SHOW:
            if (cli_parse_nonneg("replay", "--show", optarg, &v))
                return -1;
            o->show = (long)fmin(v, 1e9);
            break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
    }
    if (optind < argc || !*dir || !cores_given) {
        cli_error("replay", optind < argc ? "unexpected argument '%s'"
                  : "--state-dir and --cores are required%s",
                  optind < argc ? argv[optind] : "");
        usage(stderr);
        return -1;
    }
    if (!unit_given)  /* slaqd's default */
        o->sc.unit = fmin(1.0, o->sc.cores / 20);
    return 0;
}

static int count_event(void *arg, double t, const char *detail)
{
    (void)t;
    (void)detail;
    ++*(size_t *)arg;
    return 0;
}

int cmd_replay(int argc, char **argv)
{
    rp_opts o;
    const char *dir = NULL;
    int prc = parse_opts(argc, argv, &o, &dir);
    if (prc)
        return prc > 0 ? 0 : EXIT_USAGE;
    char path[4096];
    snprintf(path, sizeof path, "%s/state.db", dir);
    char err[4200];
    store_run *db = store_run_open(path, err, sizeof err);
    if (!db) {
        cli_error("replay", "%s", err);
        return EXIT_USAGE;
    }
    rp_run run = {0};
    rp_tally tl = {0};
    int rc = EXIT_USAGE;
    if (load_jobs(db, &run) || load_reports(db, &run) ||
        load_epochs(db, &run, o.sc.epoch_s))
        goto out;
    size_t readopted = 0;
    if (store_run_events(db, "readopt", run.t0, 0, count_event,
                         &readopted) == 0 && readopted > 0)
        printf("note: %zu job(s) of an earlier run were adopted when this "
               "run started; they are not replayed (their histories "
               "began before it), so the others' allocations may "
               "differ\n", readopted);
    if (run.njobs == 0) {
        cli_error("replay", "%s: no job started in its last run", path);
        goto out;
    }
    printf("replaying %s: %zu jobs, %zu reports, policy %s, predictor %s, "
           "%g cores in units of %g, epoch %g s\n", path, run.njobs,
           run.nreports, slaq_policy_name(o.sc.policy),
           slaq_predictor_name(o.sc.predictor), o.sc.cores, o.sc.unit,
           o.sc.epoch_s);
    rc = EXIT_RUNTIME;
    if (replay(&run, &o, &tl))
        goto out;
    size_t diff = tl.diff_exact + tl.diff_interp;
    printf("epochs replayed: %zu (%zu at their recorded time, %zu "
           "interpolated)\n", tl.epochs, tl.exact_epochs,
           tl.epochs - tl.exact_epochs);
    printf("allocations compared: %zu, equal: %zu, different: %zu (%zu at "
           "recorded epochs, %zu at interpolated ones)\n", tl.compared,
           tl.equal, diff, tl.diff_exact, tl.diff_interp);
    if (diff)
        printf("first difference: epoch %llu, %s\n",
               (unsigned long long)tl.first_diff, tl.first_exact
               ? "at its recorded time: not explained by the record (other "
                 "settings than the run's?)"
               : "whose time was interpolated (no allocation changed then in "
                 "slaqd): a report or policy change close to it may fall on "
                 "the other side of it than in slaqd; the differences after "
                 "it follow from it (damping and hysteresis carry a share "
                 "into the next epochs)");
    rc = diff ? 1 : 0;
out:
    for (size_t i = 0; i < run.njobs; i++)
        free(run.jobs[i].allocs);
    free(run.jobs);
    free(run.ev);
    store_run_close(db);
    return rc;
}
