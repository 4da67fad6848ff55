/*
 * cmd_sim_deadlines.c — `slaq sim --deadlines`: jobs with deadlines,
 * required accuracy and urgency under several policies side by side, on
 * a deep-learning trace or on the generated Philly-style workload
 * (dlsim.h; docs/deadlines.md). Prints one row per policy and writes
 * DIR/summary.csv, DIR/jct_cdf.csv and DIR/jobs.csv with --out.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "io/rlmodel.h"
#include "sim/dlsim.h"
#include "sim/rltrain.h"

#define DL_MAX_POLICIES 9

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq sim --deadlines --curves FILE (--trace CSV | --generate N)"
        " [options]\n\n"
        "Runs jobs that carry a deadline, a required accuracy and an urgency "
        "(MLFS's\nsetting, docs/deadlines.md) through slaq's core under "
        "several policies, on a\ncluster of nodes with cores and memory, in "
        "rounds of --epoch seconds.\n\n"
        "  --curves FILE        the curve library (data/curves/"
        "slaq-train.jsonl): each job\n"
        "                       follows one, stretched over its work\n"
        "  --trace CSV          a trace of microsoft/elasticflow-traces' "
        "format\n"
        "  --window FIRST[:N]   its jobs FIRST .. FIRST+N-1 in submission "
        "order (default\n"
        "                       0:1000; N 0: to the end)\n"
        "  --gpu-cores K        cores per GPU of the trace (default 1)\n"
        "  --generate N         N jobs of the generated Philly-style "
        "workload instead\n"
        "  --deadline-scale X   multiplies its U[0.5, 24] h deadlines "
        "(default 0.5)\n"
        "  --load L             offered load, work / (cores x span of the "
        "arrivals)\n"
        "                       (default 3: heavy; docs/deadlines.md)\n"
        "  --accuracy-range LO:HI\n"
        "                       each job's required accuracy: U[LO, HI] of "
        "its curve's\n"
        "                       loss reduction (default 0.5:0.95)\n"
        "  --seed S             what neither source says (curve, urgency, "
        "accuracy,\n"
        "                       memory; arrivals of the generated one); "
        "default 1\n"
        "  --nodes N            nodes (default 20)\n"
        "  --cores-per-node C   cores of a node (default 32)\n"
        "  --mem-per-core G     GB of memory per core of a node (default 6)\n"
        "  --policies LIST      default fair,slaq,edf,tiresias,mlfs-h,"
        "mlfs-rl,mlfs\n"
        "  --model FILE         the network of mlfs-rl and mlfs (MLF-RL), as "
        "--train\n"
        "                       writes it; default the committed one, "
        "trained for the\n"
        "                       generated workload (data/models/"
        "mlfs-rl.model)\n"
        "  --epoch S            seconds of a round (default 60)\n"
        "  --no-urgency         mlfs-h: Eq. 2 without the urgency "
        "factor (mlfs-rl, mlfs:\n"
        "                       their urgency feature 1 for every job)\n"
        "  --no-deadline-term   mlfs-h: Eq. 4 without the deadline "
        "term (mlfs-rl, mlfs:\n"
        "                       their deadline feature 0)\n"
        "  --no-moves           mlfs-h, mlfs-rl, mlfs: no moves off "
        "overloaded nodes\n"
        "                       (placement stays the ideal virtual host)\n"
        "  --no-load-control    mlfs: no MLF-C stops\n"
        "  --optstop            mlfs: MLF-C's OptStop too (stop at a "
        "plateau)\n"
        "  --alpha A            MLF-H's α, ML against computation features "
        "(0.3)\n"
        "  --h-r H, --p-s P, --h-s H   MLFS's thresholds (0.9, 0.1, 0.9)\n"
        "  --move-s S           seconds a move stops a job, plus its memory "
        "at 1 GB/s\n"
        "                       (default 30)\n"
        "  --weigh-moves        mlfs-h, mlfs: make a move only if it gains "
        "the job more\n"
        "                       slack than it costs (the mean cost of the "
        "moves so far),\n"
        "                       as slaqd does; the count of moves refused "
        "is printed\n"
        "  --out DIR            write DIR/summary.csv, DIR/jct_cdf.csv (JCT "
        "at each\n"
        "                       percentile) and DIR/jobs.csv (every job's "
        "completion)\n"
        "  --help               this text\n\n"
        "Training MLF-RL's network instead (docs/deadlines.md):\n"
        "  --train mlfs-rl      imitate MLF-H, then REINFORCE on Eq. 7's "
        "reward, on\n"
        "                       --generate N jobs of the tuning workloads "
        "(seeds\n"
        "                       1000 x --seed + 1 ..); writes the network to "
        "--out FILE\n"
        "  --workloads K        tuning workloads (default 2)\n"
        "  --imitation-epochs E passes over MLF-H's states (default 40)\n"
        "  --iterations N       REINFORCE iterations (default 30)\n"
        "  --sigma S            sd of the exploration noise on the scores "
        "(default 0.05)\n"
        "Progress goes to stderr; the same options and seed give the same "
        "file.\n\n"
        "Columns: dl_met, deadline-met ratio; acc_met, share that reached "
        "its required\naccuracy by its deadline; urg_met, deadline-met "
        "ratio of jobs of urgency > 8;\nacc@dl, mean share of its curve's "
        "loss reduction a job had at its deadline;\njct, wait: means (s); "
        "p50/p90: JCT percentiles; makespan (s); moves and their\ncost "
        "(seconds stopped); stops: jobs MLF-C stopped; us/round: wall time "
        "of a\nround's decisions; util: share of the cores given out (in "
        "summary.csv also\nutil_arrivals, the same while jobs arrive).\n"
        "Exit status: 0 ok, 1 failure, 2 bad usage or input.\n");
}

typedef struct dl_opts {
    const char *curves, *trace, *out, *model;
    int train;
    rl_train_opts rl;
    size_t first, count, generate, npol;
    double gpu_cores, load, dscale, mem_per_core;
    unsigned long seed;
    dl_req req;
    slaq_policy_kind pol[DL_MAX_POLICIES];
    dl_config cfg;
} dl_opts;

static int num(const char *opt, const char *s, double lo, double hi,
               double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !(x >= lo && x <= hi)) {
        cli_error("sim", "--%s: expected a number from %g to %g, got '%s'",
                  opt, lo, hi, s);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_policies(const char *s, dl_opts *o)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    o->npol = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char list[160];
        if (o->npol == DL_MAX_POLICIES ||
            slaq_policy_parse(tok, &o->pol[o->npol]) != SLAQ_OK) {
            slaq_policy_list(list, sizeof list, ", ");
            cli_error("sim", "--policies: '%s' is not a policy (expected at "
                      "most %d of %s)", tok, DL_MAX_POLICIES, list);
            return -1;
        }
        o->npol++;
    }
    return o->npol ? 0 : -1;
}

static const struct option dl_options[] = {
    {"deadlines", no_argument, 0, 'D'},
    {"curves", required_argument, 0, 'c'},
    {"trace", required_argument, 0, 't'},
    {"window", required_argument, 0, 'w'},
    {"gpu-cores", required_argument, 0, 'g'},
    {"generate", required_argument, 0, 'G'},
    {"deadline-scale", required_argument, 0, 'd'},
    {"load", required_argument, 0, 'l'},
    {"seed", required_argument, 0, 's'},
    {"accuracy-range", required_argument, 0, 'A'},
    {"nodes", required_argument, 0, 'n'},
    {"cores-per-node", required_argument, 0, 'C'},
    {"mem-per-core", required_argument, 0, 'M'},
    {"policies", required_argument, 0, 'p'},
    {"epoch", required_argument, 0, 'e'},
    {"no-urgency", no_argument, 0, 'U'},
    {"no-deadline-term", no_argument, 0, 'T'},
    {"no-moves", no_argument, 0, 'm'},
    {"weigh-moves", no_argument, 0, 'W'},
    {"no-load-control", no_argument, 0, 'L'},
    {"optstop", no_argument, 0, 'O'},
    {"alpha", required_argument, 0, 'a'},
    {"h-r", required_argument, 0, 'r'},
    {"p-s", required_argument, 0, 'P'},
    {"h-s", required_argument, 0, 'S'},
    {"move-s", required_argument, 0, 'v'},
    {"out", required_argument, 0, 'o'},
    {"model", required_argument, 0, 'X'},
    {"train", required_argument, 0, 'R'},
    {"workloads", required_argument, 0, 'K'},
    {"imitation-epochs", required_argument, 0, 'I'},
    {"iterations", required_argument, 0, 'N'},
    {"sigma", required_argument, 0, 'Z'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

/* The options that shape the workload and the cluster, and those that
 * choose and tune the policies (dl_options' letters). */
#define DL_WORKLOAD_OPTS "ctwgGdlAsnCM"
#define DL_POLICY_OPTS "pXRKINZeUTmWLOarPSvo"

/* The defaults: 1,000 jobs of the trace, every policy. */
static void parse_defaults(dl_opts *o)
{
    memset(o, 0, sizeof *o);
    dl_config_init(&o->cfg);
    o->count = 1000;
    o->gpu_cores = 1;
    o->load = 3;
    o->dscale = 0.5;
    o->mem_per_core = 6;
    o->seed = 1;
    o->req = (dl_req){0.5, 0.95};
    rl_train_opts_init(&o->rl);
    parse_policies("fair,slaq,edf,tiresias,mlfs-h,mlfs-rl,mlfs", o);
}

/* --window FIRST[:N]: N defaults to the count so far. Returns 0, or
 * EXIT_USAGE once the error is printed. */
static int parse_window(const char *arg, dl_opts *o)
{
    char *end;
    errno = 0;
    unsigned long long a = strtoull(arg, &end, 10), b = o->count;
    if (end != arg && *end == ':') {
        char *e2;
        b = strtoull(end + 1, &e2, 10);
        end = e2 == end + 1 ? end : e2;
    }
    if (end == arg || *end || errno || a > DLT_MAX_JOBS || b > DLT_MAX_JOBS) {
        cli_error("sim", "--window: expected FIRST or FIRST:N (whole "
                  "numbers up to %d), got '%s'", DLT_MAX_JOBS, arg);
        return EXIT_USAGE;
    }
    o->first = (size_t)a;
    o->count = (size_t)b;
    return 0;
}

/* --accuracy-range LO:HI. Returns 0, or EXIT_USAGE once the error is
 * printed. */
static int parse_accuracy(const char *arg, dl_opts *o)
{
    char *end, *end2;
    double lo = strtod(arg, &end), hi = NAN;
    if (end != arg && *end == ':')
        hi = strtod(end + 1, &end2);
    if (!(lo > 0) || !(hi >= lo) || !(hi <= 1) || end == arg ||
        *end != ':' || *end2) {
        cli_error("sim", "--accuracy-range: expected LO:HI with 0 < "
                  "LO <= HI <= 1, got '%s'", arg);
        return EXIT_USAGE;
    }
    o->req = (dl_req){lo, hi};
    return 0;
}

/* One of DL_WORKLOAD_OPTS: the jobs, their goals, the cluster. Returns 0,
 * or EXIT_USAGE once the error is printed. */
static int parse_workload_opt(int c, const char *arg, dl_opts *o)
{
    double x;
    switch (c) {
    case 'c': o->curves = arg; break;
    case 't': o->trace = arg; break;
    case 'w': return parse_window(arg, o);
    case 'g': return num("gpu-cores", arg, 1e-3, 1024, &o->gpu_cores)
                     ? EXIT_USAGE : 0;
    case 'G':
        if (num("generate", arg, 1, DLT_MAX_JOBS, &x))
            return EXIT_USAGE;
        o->generate = (size_t)x;
        break;
    case 'd': return num("deadline-scale", arg, 1e-3, 1e3, &o->dscale)
                     ? EXIT_USAGE : 0;
    case 'l': return num("load", arg, 1e-3, 100, &o->load) ? EXIT_USAGE : 0;
    case 'A': return parse_accuracy(arg, o);
    case 's':
        if (num("seed", arg, 0, 4294967295.0, &x))
            return EXIT_USAGE;
        o->seed = (unsigned long)x;
        break;
    case 'n':
        if (num("nodes", arg, 1, 10000, &x))
            return EXIT_USAGE;
        o->cfg.cl.nodes = (size_t)x;
        break;
    case 'C': return num("cores-per-node", arg, 1, 1e6, &o->cfg.cl.cores)
                     ? EXIT_USAGE : 0;
    case 'M': return num("mem-per-core", arg, 1e-3, 1e6, &o->mem_per_core)
                     ? EXIT_USAGE : 0;
    }
    return 0;
}

/* One of DL_POLICY_OPTS: the policies, MLFS's settings, the network's
 * training, the output. Returns 0, or EXIT_USAGE once the error is
 * printed. */
static int parse_policy_opt(int c, const char *arg, dl_opts *o)
{
    double x;
    switch (c) {
    case 'p': return parse_policies(arg, o) ? EXIT_USAGE : 0;
    case 'X': o->model = arg; break;
    case 'R':
        if (strcmp(arg, "mlfs-rl")) {
            cli_error("sim", "--train: expected mlfs-rl (the one policy "
                      "with a network), got '%s'", arg);
            return EXIT_USAGE;
        }
        o->train = 1;
        break;
    case 'K':
        if (num("workloads", arg, 1, 100, &x))
            return EXIT_USAGE;
        o->rl.workloads = (size_t)x;
        break;
    case 'I':
        if (num("imitation-epochs", arg, 0, 10000, &x))
            return EXIT_USAGE;
        o->rl.imitate_epochs = (size_t)x;
        break;
    case 'N':
        if (num("iterations", arg, 0, 100000, &x))
            return EXIT_USAGE;
        o->rl.iterations = (size_t)x;
        break;
    case 'Z': return num("sigma", arg, 1e-6, 100, &o->rl.sigma)
                     ? EXIT_USAGE : 0;
    case 'e': return num("epoch", arg, 1, 86400, &o->cfg.epoch_s)
                     ? EXIT_USAGE : 0;
    case 'U': o->cfg.mlfs.prio.use_urgency = 0; break;
    case 'T': o->cfg.mlfs.prio.use_deadline = 0; break;
    case 'm': o->cfg.mlfs.moves = 0; break;
    case 'W': o->cfg.mlfs.weigh_moves = 1; break;
    case 'L': o->cfg.mlfs.control = 0; break;
    case 'O': o->cfg.optstop = 1; break;
    case 'a': return num("alpha", arg, 0, 1, &o->cfg.mlfs.prio.alpha)
                     ? EXIT_USAGE : 0;
    case 'r': return num("h-r", arg, 0.01, 1, &o->cfg.mlfs.h_r)
                     ? EXIT_USAGE : 0;
    case 'P': return num("p-s", arg, 0.001, 1, &o->cfg.mlfs.p_s)
                     ? EXIT_USAGE : 0;
    case 'S': return num("h-s", arg, 0.01, 1, &o->cfg.mlfs.h_s)
                     ? EXIT_USAGE : 0;
    case 'v': return num("move-s", arg, 0, 86400, &o->cfg.mlfs.move_fixed_s)
                     ? EXIT_USAGE : 0;
    case 'o': o->out = arg; break;
    }
    return 0;
}

/* What the options must say together: a curve file, one of a trace and a
 * generated workload; for --train, what training needs. Sets the nodes'
 * memory. Returns 0, or EXIT_USAGE once the error is printed. */
static int parse_check(int argc, dl_opts *o)
{
    if (optind < argc || !o->curves || !o->trace == !o->generate) {
        cli_error("sim", "%s (slaq sim --deadlines --help)",
                  optind < argc ? "unexpected argument"
                  : !o->curves ? "--curves is required"
                               : "give one of --trace and --generate");
        return EXIT_USAGE;
    }
    o->cfg.cl.mem = o->cfg.cl.cores * o->mem_per_core;
    if (o->train) {
        if (!o->generate || !o->out || o->trace || o->model) {
            cli_error("sim", "--train mlfs-rl needs --generate N and --out "
                      "FILE, and takes neither --trace nor --model (it "
                      "trains on the tuning workloads only)");
            return EXIT_USAGE;
        }
        if (o->seed < 1) {
            cli_error("sim", "--train: --seed must be at least 1");
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* Reads argv into *o. Returns 0 to go on, -1 once --help is printed, or
 * EXIT_USAGE once the error is printed. */
static int parse(int argc, char **argv, dl_opts *o)
{
    parse_defaults(o);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", dl_options, NULL)) != -1) {
        int rc;
        if (c == 'D')
            continue;
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        if (c && strchr(DL_WORKLOAD_OPTS, c)) {
            rc = parse_workload_opt(c, optarg, o);
        } else if (c && strchr(DL_POLICY_OPTS, c)) {
            rc = parse_policy_opt(c, optarg, o);
        } else {
            cli_error("sim", "unknown or incomplete option '%s' (slaq sim "
                      "--deadlines --help)", argv[optind - 1]);
            return EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    return parse_check(argc, o);
}

static void print_row(FILE *f, const char *name, const dl_result *r)
{
    double n = (double)r->jobs;
    fprintf(f, "%-9s %6.3f %7.3f %7.3f %6.3f %9.0f %8.0f %8.0f %8.0f %10.0f "
            "%6zu %8.0f %6zu %9.0f %5.2f\n",
            name, r->deadline_met / n, r->acc_met / n,
            r->urgent ? (double)r->urgent_met / (double)r->urgent : NAN,
            r->acc_at_deadline, r->avg_jct, r->avg_wait, r->jct_pct[2],
            r->jct_pct[4], r->makespan, r->moves, r->move_s, r->stopped,
            r->sched_us, r->util);
}

static const char *const header =
    "policy    dl_met acc_met urg_met acc@dl       jct     wait      p50"
    "      p90   makespan  moves   move_s  stops  us/round  util\n";

static int write_outputs(const dl_opts *o, const dl_workload *w,
                         const dl_result *res)
{
    if (mkdir(o->out, 0777) && errno != EEXIST) {
        cli_error("sim", "%s: %s", o->out, strerror(errno));
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.csv", o->out);
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("sim", "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "policy,jobs,deadline_met,acc_met,urgent_met,acc_at_deadline,"
            "avg_jct_s,avg_wait_s,p50_jct_s,p90_jct_s,p99_jct_s,makespan_s,"
            "moves,move_s,move_gb,stopped,sched_us_per_round,util,"
            "util_arrivals\n");
    for (size_t p = 0; p < o->npol; p++) {
        const dl_result *r = &res[p];
        double n = (double)r->jobs;
        fprintf(f, "%s,%zu,%.4f,%.4f,%.4f,%.4f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,"
                "%zu,%.1f,%.1f,%zu,%.1f,%.4f,%.4f\n",
                slaq_policy_name(o->pol[p]), r->jobs, r->deadline_met / n,
                r->acc_met / n,
                r->urgent ? (double)r->urgent_met / (double)r->urgent : 0,
                r->acc_at_deadline, r->avg_jct, r->avg_wait, r->jct_pct[2],
                r->jct_pct[4], r->jct_pct[6], r->makespan, r->moves,
                r->move_s, r->move_gb, r->stopped, r->sched_us, r->util,
                r->util_arrivals);
    }
    int bad = fclose(f) != 0;
    snprintf(path, sizeof path, "%s/jct_cdf.csv", o->out);
    f = fopen(path, "w");
    if (!f) {
        cli_error("sim", "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "fraction");
    for (size_t p = 0; p < o->npol; p++)
        fprintf(f, ",%s", slaq_policy_name(o->pol[p]));
    fprintf(f, "\n");
    for (int q = 1; q <= 100; q++) {
        fprintf(f, "%.2f", q / 100.0);
        for (size_t p = 0; p < o->npol; p++) {
            size_t at = (size_t)ceil(q / 100.0 * (double)res[p].jobs);
            fprintf(f, ",%.1f", res[p].jct[at > 0 ? at - 1 : 0]);
        }
        fprintf(f, "\n");
    }
    bad |= fclose(f) != 0;
    snprintf(path, sizeof path, "%s/jobs.csv", o->out);
    f = fopen(path, "w");
    if (!f) {
        cli_error("sim", "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f, "policy,job,trace_line,arrival_s,deadline_s,completion_s,"
            "cores,urgency,deadline_met\n");
    for (size_t p = 0; p < o->npol; p++)
        for (size_t i = 0; i < w->n; i++) {
            const dl_job *j = &w->jobs[i];
            double c = res[p].completion[i];
            fprintf(f, "%s,%zu,%zu,%.1f,%.1f,%.1f,%g,%d,%d\n",
                    slaq_policy_name(o->pol[p]), i + 1, j->line, j->arrival,
                    j->deadline, c, j->size, j->urgency,
                    c <= j->deadline + 1e-9);
        }
    bad |= fclose(f) != 0;
    if (bad) {
        cli_error("sim", "%s: write error", o->out);
        return -1;
    }
    return 0;
}

/* --train mlfs-rl: trains, writes the model with the command that made
 * it as its comment, and frees the curves. */
static int train(dl_opts *o, curve_set *cs, int argc, char **argv)
{
    char err[512], cmd[2048] = "made by: slaq", *at = cmd + strlen(cmd);
    for (int i = 0; i < argc && at < cmd + sizeof cmd - 1; i++)
        at += snprintf(at, (size_t)(cmd + sizeof cmd - at), " %s", argv[i]);
    o->rl.jobs = o->generate;
    o->rl.load = o->load;
    o->rl.dscale = o->dscale;
    o->rl.req = o->req;
    o->rl.seed = o->seed;
    slaq_rl_model m;
    double reward;
    int rc = rl_train(&o->rl, cs, &o->cfg, &m, &reward, stderr, err,
                      sizeof err);
    curves_free(cs);
    if (rc) {
        cli_error("sim", "--train: %s", err);
        return EXIT_RUNTIME;
    }
    char note[2300];
    snprintf(note, sizeof note, "%s\nreward per job of its noise-free runs "
             "on the tuning workloads: %.6f", cmd, reward);
    if (rlm_write(o->out, &m, note, err, sizeof err)) {
        cli_error("sim", "%s", err);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "wrote %s\n", o->out);
    return 0;
}

int cmd_sim_deadlines(int argc, char **argv)
{
    dl_opts o;
    int prc = parse(argc, argv, &o);
    if (prc)
        return prc < 0 ? 0 : prc;
    char err[512];
    /* The network of mlfs-rl and mlfs: --model, or the committed one. */
    static slaq_rl_model net;
    int needs = 0;
    for (size_t p = 0; p < o.npol; p++)
        needs |= slaq_policy_needs_model(o.pol[p]);
    if (needs && !o.train) {
        const char *path = o.model ? o.model : rlm_default_path();
        if (rlm_read(path, &net, err, sizeof err)) {
            cli_error("sim", "--model: %s%s", err, o.model ? "" :
                      " (the default; give one with --model FILE)");
            return EXIT_USAGE;
        }
        o.cfg.mlfs.prio.rl = &net;
    }
    curve_set cs;
    if (curves_load(o.curves, &cs, err, sizeof err)) {
        cli_error("sim", "%s", err);
        return EXIT_USAGE;
    }
    if (o.train)
        return train(&o, &cs, argc, argv);
    dl_workload w;
    int rc;
    if (o.trace) {
        dlt_trace t;
        if (dlt_read(o.trace, &t, err, sizeof err)) {
            cli_error("sim", "%s", err);
            curves_free(&cs);
            return EXIT_USAGE;
        }
        rc = dl_from_trace(&t, o.first, o.count, o.gpu_cores, o.load, o.seed,
                           &o.req, &o.cfg.cl, &cs, &w, err, sizeof err);
        dlt_free(&t);
    } else {
        rc = dl_generate(o.generate, o.load, o.dscale, o.seed, &o.req,
                         &o.cfg.cl, &cs, &w, err, sizeof err);
    }
    if (rc) {
        cli_error("sim", "%s", err);
        curves_free(&cs);
        return EXIT_USAGE;
    }
    printf("# %zu jobs, %zu nodes x %g cores, %g GB each; ", w.n,
           o.cfg.cl.nodes, o.cfg.cl.cores, o.cfg.cl.mem);
    if (w.load > 0)
        printf("offered load %.2f%s\n", w.load, o.trace ? "" : " (generated)");
    else
        printf("all jobs arrive at once\n");
    if (o.trace)
        printf("# arrivals compressed %.2fx\n", w.compress);
    printf("%s", header);
    dl_result res[DL_MAX_POLICIES];
    memset(res, 0, sizeof res);
    int out = 0;
    for (size_t p = 0; p < o.npol && !out; p++) {
        dl_config c = o.cfg;
        c.policy = o.pol[p];
        if (dl_run(&w, &cs, &c, &res[p], err, sizeof err)) {
            cli_error("sim", "%s: %s", slaq_policy_name(o.pol[p]), err);
            out = EXIT_RUNTIME;
            break;
        }
        print_row(stdout, slaq_policy_name(o.pol[p]), &res[p]);
        if (c.mlfs.weigh_moves && slaq_policy_moves(c.policy))
            printf("%-9s moves refused as not worth their cost: %zu\n",
                   "", res[p].moves_skipped);
        fflush(stdout);
    }
    if (!out && o.out && write_outputs(&o, &w, res))
        out = EXIT_RUNTIME;
    for (size_t p = 0; p < o.npol; p++)
        dl_result_free(&res[p]);
    dl_workload_free(&w);
    curves_free(&cs);
    return out;
}
