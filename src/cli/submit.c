/*
 * submit.c — `slaq submit`: have slaqd start a training job.
 *
 * The command runs in slaqd's care with this shell's working directory and
 * environment (plus SLAQ_SOCKET and SLAQ_JOB_ID), its output going to log
 * files under slaqd's state directory. Prints the new job's id. With
 * --array, a task array (docs/arrays.md): many short one-core tasks.
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "slaq/slaq.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq submit [OPTIONS] -- CMD [ARGS...]\n\n"
        "Starts CMD as a job under slaqd and prints its id.\n\n"
        "  --name NAME              job name (default: CMD's base name)\n"
        "  --weight W               share multiplier, > 0 (default 1)\n"
        "  --max-cores N            cores the job can use at most\n"
        "  --target-reduction R     stop at this fraction (0..1] of the\n"
        "                           predicted total loss reduction\n"
        "  --max-iters N            stop after iteration N\n"
        "  --max-time SECONDS       stop after this much wall time\n"
        "  --cwd DIR                working directory (default: here)\n"
        "  --convergence CLASS      the algorithm's convergence class:\n"
        "                           sublinear (SGD, gradient descent,\n"
        "                           K-Means), linear or superlinear (L-BFGS,\n"
        "                           Newton), nonconvex or unknown (default);\n"
        "                           the slaq-fit predictor then fits only\n"
        "                           that class's curve family\n"
        "  --node NAME              run it on this node only (a controller's\n"
        "                           node: slaq nodes)\n"
        "  --restartable            the job saves checkpoints in\n"
        "                           $SLAQ_CHECKPOINT_DIR and resumes from the\n"
        "                           last one: if its node is lost it is\n"
        "                           started again on another\n"
        "  --array A-B[%%K]          a task array instead of a job: tasks A to\n"
        "                           B of CMD, each a process on one core, at\n"
        "                           most K at once; {index} in CMD's\n"
        "                           arguments and $SLAQ_ARRAY_INDEX are the\n"
        "                           task's index (docs/arrays.md)\n"
        "  --task-estimate SECONDS  how long one task runs, about (refined\n"
        "                           from the tasks that end)\n"
        "  --wait                   return when the job (or every task of the\n"
        "                           array) has ended: status 0 if it (each)\n"
        "                           exited 0, else 1\n"
        "  --deadline TIME|+DURATION\n"
        "                           when the job should be done: a time\n"
        "                           (seconds since 1970, or YYYY-MM-DDTHH:MM[:SS]\n"
        "                           in UTC) or a duration from now (+90m,\n"
        "                           +2h, +1d, +3600); default none\n"
        "  --accuracy VALUE         the value of its metric it must reach\n"
        "                           (default none)\n"
        "  --direction max|min      max: the metric is better higher (an\n"
        "                           accuracy; default), min: lower (a loss)\n"
        "  --urgency N              1 (default) to 10: how urgent it is; the\n"
        "                           policies edf, tiresias, mlfs-h and mlfs\n"
        "                           read the goal (docs/deadlines.md)\n"
        "  --stop iters|accuracy|optstop\n"
        "                           when mlfs's load control may end it\n"
        "                           early: never (its fixed iterations),\n"
        "                           once its metric meets --accuracy while\n"
        "                           the cluster is overloaded, or that and,\n"
        "                           at any load, once its loss has flattened;\n"
        "                           default accuracy with --accuracy, else\n"
        "                           iters\n"
        RPC_HELP);
}

static int num_opt(const char *opt, const char *s, double lo, double hi,
                   double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi) || !isfinite(v)) {
        cli_error("submit", "%s wants a number in [%g, %g], got '%s'", opt, lo,
                  hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The rule slaqd applies (docs/protocol.md), checked here to fail early:
 * at most 200 bytes, no control characters. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n > 200) {
        cli_error("submit", "--name is limited to 200 bytes (got %zu)", n);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f ||
            (c == 0xc2 && (unsigned char)s[i + 1] >= 0x80 &&
             (unsigned char)s[i + 1] < 0xa0)) {
            cli_error("submit", "--name may not contain control characters "
                      "(byte %zu is 0x%02x)", i, c);
            return 0;
        }
    }
    return 1;
}

/* --wait: polls the job (or array) until it has ended; 0 if it (every
 * task) exited 0, 1 otherwise or when slaqd cannot be asked. */
static int wait_for(const rpc_opts *ro, long long id)
{
    char ids[24];
    snprintf(ids, sizeof ids, "%lld", id);
    for (;;) {
        json_t *r = rpc_call("submit", ro, json_pack("{s:s, s:s}", "type",
                                                     "show", "job", ids));
        if (!r)
            return EXIT_RUNTIME;
        if (!json_is_true(json_object_get(r, "ok"))) {
            rpc_fail("submit", r);
            json_decref(r);
            return EXIT_RUNTIME;
        }
        json_t *a = json_object_get(r, "array");
        json_t *j = a ? a : json_object_get(r, "job");
        const char *st = json_string_value(json_object_get(j, "state"));
        if (!st)
            st = "?";
        int active = !strcmp(st, "running") || !strcmp(st, "pending") ||
                     !strcmp(st, "stopping");
        if (!active) {
            int ok = !strcmp(st, "done");
            if (a) {
                json_t *c = json_object_get(a, "counts");
                fprintf(stderr, "slaq submit: array %lld ended: %lld done, "
                        "%lld failed or lost, %lld cancelled\n", id,
                        (long long)json_integer_value(json_object_get(c,
                                                                  "done")),
                        (long long)(json_integer_value(json_object_get(
                                        c, "failed")) +
                                    json_integer_value(json_object_get(
                                        c, "lost"))),
                        (long long)(json_integer_value(json_object_get(
                                        c, "cancelled")) +
                                    json_integer_value(json_object_get(
                                        c, "stopped"))));
            } else {
                fprintf(stderr, "slaq submit: job %lld ended: %s\n", id, st);
            }
            json_decref(r);
            return ok ? 0 : EXIT_RUNTIME;
        }
        json_decref(r);
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* --deadline: seconds since 1970, YYYY-MM-DDTHH:MM[:SS][Z] in UTC, or
 * +DURATION (a number with an optional s, m, h or d) from now. */
static int deadline_opt(const char *s, double *out)
{
    char *end;
    if (*s == '+') {
        double v = strtod(s + 1, &end);
        double unit = !*end ? 1 : !strcmp(end, "s") ? 1
                    : !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600
                    : !strcmp(end, "d") ? 86400 : 0;
        if (end != s + 1 && unit > 0 && v > 0 && isfinite(v) &&
            v * unit <= 1e9) {
            *out = (double)time(NULL) + v * unit;
            return 0;
        }
    } else {
        double v = strtod(s, &end);
        if (end != s && !*end && v > 0 && v < 1e11) {
            *out = v;
            return 0;
        }
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        const char *rest = strptime(s, "%Y-%m-%dT%H:%M", &tm);
        if (rest && *rest == ':')
            rest = strptime(rest, ":%S", &tm);
        if (rest && (!*rest || !strcmp(rest, "Z"))) {
            *out = (double)timegm(&tm);
            return 0;
        }
    }
    cli_error("submit", "--deadline: expected a time (seconds since 1970, or "
              "YYYY-MM-DDTHH:MM[:SS] in UTC) or +DURATION (e.g. +90m, +2h, "
              "+1d), got '%s'", s);
    return -1;
}

enum { O_NAME = 1, O_WEIGHT, O_MAXC, O_TARGET, O_ITERS, O_TIME, O_CWD,
       O_CONV, O_NODE, O_RESTART, O_ARRAY, O_TASKEST, O_WAIT,
       O_DEADLINE, O_ACC, O_DIR, O_URG, O_STOP };

static const struct option submit_opts[] = {
    {"name", required_argument, 0, O_NAME},
    {"weight", required_argument, 0, O_WEIGHT},
    {"max-cores", required_argument, 0, O_MAXC},
    {"target-reduction", required_argument, 0, O_TARGET},
    {"max-iters", required_argument, 0, O_ITERS},
    {"max-time", required_argument, 0, O_TIME},
    {"cwd", required_argument, 0, O_CWD},
    {"convergence", required_argument, 0, O_CONV},
    {"node", required_argument, 0, O_NODE},
    {"restartable", no_argument, 0, O_RESTART},
    {"array", required_argument, 0, O_ARRAY},
    {"task-estimate", required_argument, 0, O_TASKEST},
    {"wait", no_argument, 0, O_WAIT},
    {"deadline", required_argument, 0, O_DEADLINE},
    {"accuracy", required_argument, 0, O_ACC},
    {"direction", required_argument, 0, O_DIR},
    {"urgency", required_argument, 0, O_URG},
    {"stop", required_argument, 0, O_STOP},
    {"help", no_argument, 0, 'h'},
    RPC_LONG_OPTS,
    {0, 0, 0, 0},
};

/* An option of the job itself (name, share, limits, node, array) into
 * req; anything else is a usage error. Returns 0, or -1 once the error
 * is printed. */
static int submit_job_opt(int o, const char *arg, json_t *req)
{
    double v;
    switch (o) {
    case O_NAME:
        if (!name_ok(arg)) return -1;
        json_object_set_new(req, "name", json_string(arg));
        break;
    case O_WEIGHT:
        if (num_opt("--weight", arg, 1e-9, 1e9, &v)) return -1;
        json_object_set_new(req, "weight", json_real(v));
        break;
    case O_MAXC:
        if (num_opt("--max-cores", arg, 1e-3, 1e6, &v)) return -1;
        json_object_set_new(req, "max_cores", json_real(v));
        break;
    case O_TARGET:
        if (num_opt("--target-reduction", arg, 1e-9, 1, &v)) return -1;
        json_object_set_new(req, "target_reduction", json_real(v));
        break;
    case O_ITERS:
        if (num_opt("--max-iters", arg, 1, 1e15, &v)) return -1;
        if (v != floor(v)) {
            fprintf(stderr, "slaq submit: --max-iters: expected a whole "
                            "number of iterations, got %s\n", arg);
            return -1;
        }
        json_object_set_new(req, "max_iters", json_real(v));
        break;
    case O_TIME:
        if (num_opt("--max-time", arg, 1e-3, 1e9, &v)) return -1;
        json_object_set_new(req, "max_time", json_real(v));
        break;
    case O_CONV: {
        slaq_convergence cv;
        if (slaq_convergence_parse(arg, &cv) != SLAQ_OK || !*arg) {
            cli_error("submit", "--convergence: expected sublinear, "
                      "linear, superlinear, nonconvex or unknown, got "
                      "'%s'", arg);
            return -1;
        }
        json_object_set_new(req, "convergence", json_string(arg));
        break;
    }
    case O_NODE:
        if (!*arg || strlen(arg) > 63) {
            cli_error("submit", "--node wants a node's name (1 to 63 "
                      "bytes)");
            return -1;
        }
        json_object_set_new(req, "node", json_string(arg));
        break;
    case O_RESTART:
        json_object_set_new(req, "restartable", json_true());
        break;
    case O_ARRAY: /* its form is slaqd's to check (one parser) */
        json_object_set_new(req, "array", json_string(arg));
        break;
    case O_TASKEST:
        if (num_opt("--task-estimate", arg, 1e-3, 1e9, &v)) return -1;
        json_object_set_new(req, "task_estimate", json_real(v));
        break;
    default:
        usage(stderr);
        return -1;
    }
    return 0;
}

/* An option of the job's goal (O_DEADLINE to O_STOP: deadline, accuracy,
 * direction, urgency, stop rule) into req. Returns 0, or -1 once the
 * error is printed. */
static int submit_goal_opt(int o, const char *arg, json_t *req)
{
    double v;
    switch (o) {
    case O_DEADLINE:
        if (deadline_opt(arg, &v)) return -1;
        json_object_set_new(req, "deadline", json_real(v));
        break;
    case O_ACC:
        if (num_opt("--accuracy", arg, -1e300, 1e300, &v)) return -1;
        json_object_set_new(req, "accuracy", json_real(v));
        break;
    case O_DIR:
        if (strcmp(arg, "max") && strcmp(arg, "min")) {
            cli_error("submit", "--direction: expected max (the metric "
                      "is better higher) or min, got '%s'", arg);
            return -1;
        }
        json_object_set_new(req, "direction", json_string(arg));
        break;
    case O_URG:
        if (num_opt("--urgency", arg, SLAQ_URGENCY_MIN,
                    SLAQ_URGENCY_MAX, &v)) return -1;
        if (v != floor(v)) {
            cli_error("submit", "--urgency: expected a whole number from "
                      "1 to 10, got '%s'", arg);
            return -1;
        }
        json_object_set_new(req, "urgency", json_integer((json_int_t)v));
        break;
    case O_STOP: {
        slaq_stop_rule rule;
        if (slaq_stop_parse(arg, &rule) != SLAQ_OK) {
            cli_error("submit", "--stop: expected %s, %s or %s, got '%s'",
                      slaq_stop_name(SLAQ_STOP_ITERS),
                      slaq_stop_name(SLAQ_STOP_ACCURACY),
                      slaq_stop_name(SLAQ_STOP_OPTSTOP), arg);
            return -1;
        }
        json_object_set_new(req, "stop", json_string(arg));
        break;
    }
    }
    return 0;
}

/* Reads the options into ro, req, *cwd and *wait; the command is then
 * argv[optind..]. Returns 0 to go on, -1 once --help is printed, or
 * EXIT_USAGE once the error is printed. */
static int submit_parse(int argc, char **argv, rpc_opts *ro, json_t *req,
                        const char **cwd, int *wait)
{
    int o;
    while ((o = getopt_long(argc, argv, "+h", submit_opts, NULL)) != -1) {
        if (rpc_opt(ro, o, optarg))
            continue;
        int rc = 0;
        switch (o) {
        case O_CWD: *cwd = optarg; break;
        case O_WAIT: *wait = 1; break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            rc = o >= O_DEADLINE && o <= O_STOP
                     ? submit_goal_opt(o, optarg, req)
                     : submit_job_opt(o, optarg, req);
        }
        if (rc)
            return EXIT_USAGE;
    }
    if (json_object_get(req, "task_estimate") &&
        !json_object_get(req, "array")) {
        cli_error("submit", "--task-estimate is a task array's (--array)");
        return EXIT_USAGE;
    }
    if (optind >= argc) {
        cli_error("submit", "no command given (slaq submit [OPTIONS] -- CMD "
                            "[ARGS...])");
        return EXIT_USAGE;
    }
    return 0;
}

/* The rest of the request: the command (argv[optind..]), its working
 * directory (cwd, else this one) and this shell's environment. */
static void submit_command(json_t *req, int argc, char **argv,
                           const char *cwd)
{
    json_t *cmd = json_array();
    for (int i = optind; i < argc; i++)
        json_array_append_new(cmd, json_string(argv[i]));
    json_object_set_new(req, "cmd", cmd);
    char *here = cwd ? NULL : getcwd(NULL, 0);
    json_object_set_new(req, "cwd", json_string(cwd ? cwd : here ? here : "."));
    free(here);
    json_t *env = json_array();
    for (char **e = environ; *e; e++)
        json_array_append_new(env, json_string(*e));
    json_object_set_new(req, "env", env);
}

int cmd_submit(int argc, char **argv)
{
    rpc_opts ro;
    rpc_opts_init(&ro);
    json_t *req = json_pack("{s:s}", "type", "submit");
    const char *cwd = NULL;
    int wait = 0;
    int rc = submit_parse(argc, argv, &ro, req, &cwd, &wait);
    if (rc) {
        json_decref(req);
        return rc < 0 ? 0 : rc;
    }
    submit_command(req, argc, argv, cwd);

    json_t *reply;
    int st = rpc_exchange("submit", &ro, req, &reply);
    if (st >= 0)
        return st;
    long long id = json_integer_value(json_object_get(reply, "job"));
    printf("%lld\n", id);
    json_decref(reply);
    if (!wait)
        return 0;
    fflush(stdout);
    return wait_for(&ro, id);
}
