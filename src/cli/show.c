/*
 * show.c — `slaq show ID`: one job in detail: its settings and state, the
 * core's prediction, its loss history, allocations over time and events.
 */
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include <getopt.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq show [OPTIONS] ID\n\n"
               "Shows job ID: settings, state, prediction, loss history, "
               "allocation\nover time and events. For an approximate query: "
               "its progress and the\nestimates of its last mini-batch with "
               "their 95%% bounds instead of a loss.\nFor a task array: its "
               "tasks' counts by state, then one line per task:\nINDEX, "
               "STATE, JOB the task's own job id, EXIT its exit status;\n"
               "ID_N (or the task's job id) shows task N of array ID.\n\n"
               RPC_HELP);
}

static void stamp(char *out, size_t len, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    localtime_r(&s, &tm);
    strftime(out, len, "%H:%M:%S", &tm);
}

/* The limits a job stops at, only those that are set: "90% loss
 * reduction, 500 iterations" or "none (runs until it exits)". */
static void stop_limits(char *out, size_t len, json_t *j)
{
    double target = rpc_num(j, "target_reduction");
    long long iters = json_integer_value(json_object_get(j, "max_iters"));
    double secs = rpc_num(j, "max_time");
    size_t n = 0;
    out[0] = 0;
    if (target > 0)
        n += (size_t)snprintf(out + n, len - n, "%g%% loss reduction",
                              100 * target);
    if (iters > 0 && n < len)
        n += (size_t)snprintf(out + n, len - n, "%s%lld iterations",
                              n ? ", " : "", iters);
    if (secs > 0 && n < len)
        n += (size_t)snprintf(out + n, len - n, "%s%g s", n ? ", " : "",
                              secs);
    if (n == 0)
        snprintf(out, len, "none (runs until it exits)");
}

/* ", 2.35 it/s" while the job runs; for an ended job the average over
 * its run; "" when neither is known. */
static void iter_rate(char *out, size_t len, json_t *j)
{
    double ips = rpc_num(j, "iters_per_s");
    double iter = (double)json_integer_value(json_object_get(j, "iter"));
    double run_s = rpc_num(j, "ended") - rpc_num(j, "started");
    out[0] = 0;
    if (isfinite(ips))
        snprintf(out, len, "; %.2f it/s", ips);
    else if (iter > 0 && run_s > 0 && rpc_num(j, "started") > 0)
        snprintf(out, len, "; %.2f it/s on average", iter / run_s);
}

/*
 * The loss reduction so far is measured against the core's predicted end
 * loss: the forecast at the job's last iteration when it declared its
 * length, else the forecast's asymptote, which a job that stops (or is
 * stopped) while its loss still falls never reaches. The line says which,
 * so that "70%" of an undeclared job is not read as "70% of what this
 * run will achieve".
 */
static void reduction(json_t *j)
{
    double red = rpc_num(j, "reduction"), end = rpc_num(j, "end_loss");
    json_t *len = json_object_get(j, "declared_iters");
    char loss[48] = "";
    if (isnan(red))
        return;
    if (!isnan(end))
        snprintf(loss, sizeof loss, " (loss %.6g)", end);
    if (json_is_integer(len))
        printf("  reduction   %.1f%% of the total predicted by its declared "
               "end, iteration %lld%s\n", 100 * red,
               (long long)json_integer_value(len), loss);
    else
        printf("  reduction   %.1f%% of the way to the forecast's "
               "asymptote%s;\n              no length declared: the "
               "asymptote is a limit, not where this run ends\n", 100 * red,
               loss);
}

/* A query's lines (ReLAQS, docs/relaqs.md): its progress and the
 * estimates of its last mini-batch with their 95% bounds, in place of an
 * ML job's loss, convergence and prediction. */
static void print_query(json_t *q)
{
    double p = rpc_num(q, "progress");
    json_t *batch = json_object_get(q, "batch");
    if (isnan(p))
        printf("  query       no mini-batch yet\n");
    else
        printf("  query       progress %.1f%% (the change of its estimates, "
               "normalised)\n", 100 * p);
    json_t *e = json_object_get(q, "estimates");
    size_t n = json_array_size(e);
    long long cells = json_integer_value(json_object_get(q, "cells"));
    if (!n || !json_is_integer(batch))
        return;
    printf("  estimates   after mini-batch %lld, %lld cell%s%s:\n",
           (long long)json_integer_value(batch), cells, cells == 1 ? "" : "s",
           (long long)n < cells ? " (the first shown)" : "");
    for (size_t i = 0; i < n; i++) {
        double v = json_number_value(json_array_get(e, i));
        json_t *lo = json_array_get(json_object_get(q, "lower"), i);
        json_t *hi = json_array_get(json_object_get(q, "upper"), i);
        if (!json_is_number(json_array_get(e, i)))
            printf("    cell %zu    not known yet\n", i);
        else if (json_is_number(lo) && json_is_number(hi))
            printf("    cell %zu    %.6g  [%.6g, %.6g]\n", i, v,
                   json_number_value(lo), json_number_value(hi));
        else
            printf("    cell %zu    %.6g\n", i, v);
    }
}

/* A task array (docs/arrays.md): counts by state, then its tasks. */
static void print_array(json_t *a)
{
    printf("array %lld: %s\n", (long long)json_integer_value(
               json_object_get(a, "id")),
           rpc_safe(json_string_value(json_object_get(a, "name"))));
    printf("  state       %s\n", json_string_value(json_object_get(a,
                                                                 "state")));
    printf("  user        %s (uid %lld)\n",
           rpc_safe(json_string_value(json_object_get(a, "user"))),
           (long long)json_integer_value(json_object_get(a, "uid")));
    char *cmd = json_dumps(json_object_get(a, "cmd"), JSON_COMPACT);
    printf("  command     %s\n", cmd ? rpc_safe(cmd) : "?");
    free(cmd);
    printf("  directory   %s\n",
           rpc_safe(json_string_value(json_object_get(a, "cwd"))));
    long long k = json_integer_value(json_object_get(a, "max_running"));
    printf("  tasks       %lld, indices %s", (long long)json_integer_value(
               json_object_get(a, "tasks")),
           rpc_safe(json_string_value(json_object_get(a, "array"))));
    if (k)
        printf(" (at most %lld at once)", k);
    printf("\n");
    json_t *c = json_object_get(a, "counts");
    printf("  counts      %lld pending, %lld running, %lld done, %lld failed, "
           "%lld cancelled, %lld lost\n",
           (long long)json_integer_value(json_object_get(c, "pending")),
           (long long)json_integer_value(json_object_get(c, "running")),
           (long long)json_integer_value(json_object_get(c, "done")),
           (long long)json_integer_value(json_object_get(c, "failed")),
           (long long)(json_integer_value(json_object_get(c, "cancelled")) +
                       json_integer_value(json_object_get(c, "stopped"))),
           (long long)json_integer_value(json_object_get(c, "lost")));
    double est = rpc_num(a, "task_estimate");
    if (!isnan(est))
        printf("  per task    %.3g s (%s)\n", est,
               isnan(rpc_num(a, "task_estimate_given")) ||
               json_integer_value(json_object_get(c, "done"))
                   ? "mean of its tasks that exited 0, else as given"
                   : "as given");
    printf("  %-8s %-10s %8s  %s\n", "INDEX", "STATE", "JOB", "EXIT");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(a, "task_list"), i, t) {
        char ex[64] = "-";
        json_t *code = json_object_get(t, "exit_code");
        json_t *sig = json_object_get(t, "signal");
        if (json_is_integer(code))
            snprintf(ex, sizeof ex, "%lld", (long long)json_integer_value(
                                                 code));
        else if (json_is_integer(sig))
            snprintf(ex, sizeof ex, "signal %lld",
                     (long long)json_integer_value(sig));
        long long id = json_integer_value(json_object_get(t, "id"));
        char ids[24] = "-";
        if (id)
            snprintf(ids, sizeof ids, "%lld", id);
        printf("  %-8lld %-10s %8s  %s\n", (long long)json_integer_value(
                   json_object_get(t, "index")),
               json_string_value(json_object_get(t, "state")), ids, ex);
    }
    if (json_is_true(json_object_get(a, "task_list_truncated")))
        printf("  (the first %zu tasks; slaq show ID_N shows any one)\n",
               json_array_size(json_object_get(a, "task_list")));
}

/* A task of an array that has not run (pending, or cancelled). */
static void print_unrun_task(json_t *t)
{
    printf("task %lld_%lld: %s\n", (long long)json_integer_value(
               json_object_get(t, "array")),
           (long long)json_integer_value(json_object_get(t, "index")),
           rpc_safe(json_string_value(json_object_get(t, "name"))));
    printf("  state       %s (not started)\n",
           json_string_value(json_object_get(t, "state")));
}

/* The job's goal (docs/deadlines.md): its deadline and slack, its
 * required accuracy and whether its metric meets it, its urgency, and
 * when mlfs's load control may stop it. */
static void goal(json_t *j)
{
    double dl = rpc_num(j, "deadline"), acc = rpc_num(j, "accuracy");
    long long urg = (long long)json_integer_value(json_object_get(j,
                                                                  "urgency"));
    const char *stop = json_string_value(json_object_get(j, "stop"));
    if (isnan(dl) && isnan(acc) && urg <= 1 &&
        (!stop || !strcmp(stop, "iters")))
        return;
    char note[96], when[64];
    rpc_goal_note(note, sizeof note, j);
    if (!isnan(dl)) {
        time_t ts = (time_t)dl;
        struct tm tm;
        localtime_r(&ts, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        char *comma = strstr(note, ", ");
        printf("  deadline    %s, %.*s\n", when,
               comma ? (int)(comma - note) : (int)strlen(note), note);
    }
    if (!isnan(acc)) {
        const char *dir = json_string_value(json_object_get(j, "direction"));
        int max = !dir || strcmp(dir, "min");
        json_t *met = json_object_get(j, "accuracy_met");
        printf("  accuracy    %s %.6g required: %s\n", max ? ">=" : "<=", acc,
               json_is_true(met) ? "met" : json_is_false(met) ? "not met yet"
                                                               : "no metric yet");
    }
    printf("  urgency     %lld of 10\n", urg);
    if (stop)
        printf("  stop        %s (mlfs's load control; docs/deadlines.md)\n",
               rpc_safe(stop));
}

/* Why it is where it is under mlfs-h, mlfs-rl or mlfs (docs/deadlines.md):
 * its place by the policy's key, the key (MLF-H's P, or the network's
 * score, beside what MLF-H would give) and the normalised terms. */
static void priority(json_t *j)
{
    json_t *p = json_object_get(j, "priority");
    if (!json_is_object(p))
        return;
    char note[96];
    rpc_priority_note(note, sizeof note, j);
    double ml = rpc_num(p, "ml"), comp = rpc_num(p, "computation");
    if (json_is_number(json_object_get(p, "score")))
        printf("  priority    %s, key %.3f (the network's score; MLF-H's "
               "P %.3f)\n", note, rpc_num(p, "key"), ml + comp);
    else
        printf("  priority    %s, key %.3f = ML %.3f + computation %.3f\n",
               note, rpc_num(p, "key"), ml, comp);
    printf("  terms       urgency %.2f, 1/I %.2f, loss drop %.2f; deadline "
           "%.2f, remaining %.2f, waiting %.2f; %s, load %.2f\n",
           rpc_num(p, "urgency"), rpc_num(p, "iteration"),
           rpc_num(p, "loss_drop"), rpc_num(p, "deadline"),
           rpc_num(p, "remaining"), rpc_num(p, "waiting"),
           json_is_true(json_object_get(p, "holds_cores")) ? "holds cores"
                                                           : "waits",
           rpc_num(p, "load"));
}

/* Who and what the job is: id, name, state, owner, array task, command,
 * node and moves, directory and process. */
static void print_identity(json_t *j)
{
    const char *reason = json_string_value(json_object_get(j, "reason"));
    printf("job %lld: %s\n", (long long)json_integer_value(
               json_object_get(j, "id")),
           rpc_safe(json_string_value(json_object_get(j, "name"))));
    printf("  state       %s%s%s\n", json_string_value(json_object_get(j,
                                                                    "state")),
           reason ? " — " : "", reason ? rpc_safe(reason) : "");
    const char *user = json_string_value(json_object_get(j, "user"));
    if (user)
        printf("  user        %s (uid %lld)\n", rpc_safe(user),
               (long long)json_integer_value(json_object_get(j, "uid")));
    json_t *arr = json_object_get(j, "array");
    if (json_is_integer(arr)) {
        json_t *code = json_object_get(j, "exit_code");
        printf("  task        %lld_%lld: index %lld of array %lld",
               (long long)json_integer_value(arr),
               (long long)json_integer_value(json_object_get(j, "index")),
               (long long)json_integer_value(json_object_get(j, "index")),
               (long long)json_integer_value(arr));
        if (json_is_integer(code))
            printf(", exit status %lld", (long long)json_integer_value(code));
        printf("\n");
    }
    char *cmd = json_dumps(json_object_get(j, "cmd"), JSON_COMPACT);
    printf("  command     %s\n", cmd ? rpc_safe(cmd) : "?");
    free(cmd);
    const char *node = json_string_value(json_object_get(j, "node"));
    if (node && strcmp(node, "local"))
        printf("  node        %s%s\n", rpc_safe(node),
               json_is_true(json_object_get(j, "restartable"))
                   ? " (restartable)" : "");
    const char *to = json_string_value(json_object_get(j, "moving_to"));
    json_t *moves = json_object_get(j, "moves");
    if (to)
        printf("  moving      to node %s (saving its checkpoint)\n",
               rpc_safe(to));
    if (json_integer_value(moves) > 0)
        printf("  moves       %lld (the last stopped it %.3f s)\n",
               (long long)json_integer_value(moves), rpc_num(j, "move_s"));
    printf("  directory   %s\n",
           rpc_safe(json_string_value(json_object_get(j, "cwd"))));
    printf("  pid         %lld (%s)\n",
           (long long)json_integer_value(json_object_get(j, "pid")),
           json_is_true(json_object_get(j, "managed")) ? "started by slaqd"
                                                       : "attached");
}

/* What the job was given: weight, cores, stop limits, its convergence
 * class (not for a query) and its declared length. */
static void print_settings(json_t *j, json_t *query)
{
    char buf[256];
    if (isnan(rpc_num(j, "max_cores")))
        snprintf(buf, sizeof buf, "unlimited");
    else
        snprintf(buf, sizeof buf, "%g", rpc_num(j, "max_cores"));
    printf("  weight      %g, max cores %s\n", rpc_num(j, "weight"), buf);
    stop_limits(buf, sizeof buf, j);
    printf("  stop at     %s\n", buf);
    const char *conv = json_string_value(json_object_get(j, "convergence"));
    if (query)
        ; /* a query has no convergence class */
    else if (conv && strcmp(conv, "unknown"))
        printf("  convergence %s (declared)\n", conv);
    else
        printf("  convergence not declared\n");
    json_t *len = json_object_get(j, "declared_iters");
    if (json_is_integer(len))
        printf("  length      %lld iterations (declared)\n",
               (long long)json_integer_value(len));
}

/* Where the job is: its cores, iterations and their cost, its loss (or a
 * query's progress) and its metric. */
static void print_progress(json_t *j, json_t *query)
{
    char buf[256];
    printf("  cores       %.3f\n", rpc_num(j, "cores"));
    iter_rate(buf, sizeof buf, j);
    printf("  progress    iteration %lld, %lld reports, %.2f CPU-s%s\n",
           (long long)json_integer_value(json_object_get(j, "iter")),
           (long long)json_integer_value(json_object_get(j, "reports")),
           rpc_num(j, "cpu_s"), buf);
    if (!isnan(rpc_num(j, "cpu_per_iter"))) {
        printf("  cost        %.4g CPU-s per iteration (recent %.4g",
               rpc_num(j, "cpu_per_iter"), rpc_num(j, "cpu_per_iter_recent"));
        if (!isnan(rpc_num(j, "cpu_per_iter_best")))
            printf(", lowest %.4g: recent %.2fx", rpc_num(j,
                   "cpu_per_iter_best"), rpc_num(j, "cpu_per_iter_recent") /
                   rpc_num(j, "cpu_per_iter_best"));
        printf(")");
        if (!isnan(rpc_num(j, "cpu_per_sample")))
            printf(", %.3g CPU-s per sample", rpc_num(j, "cpu_per_sample"));
        printf("\n");
    }
    if (query)
        print_query(query);
    else if (isnan(rpc_num(j, "loss")))
        printf("  loss        none reported yet\n");
    else
        printf("  loss        first %.6g, last %.6g\n",
               rpc_num(j, "first_loss"), rpc_num(j, "loss"));
    const char *mname = json_string_value(json_object_get(j, "metric_name"));
    if (!isnan(rpc_num(j, "metric")))
        printf("  metric      %s %.6g at iteration %lld\n",
               mname ? rpc_safe(mname) : "metric", rpc_num(j, "metric"),
               (long long)json_integer_value(json_object_get(j,
                                                             "metric_iter")));
    else if (mname)
        printf("  metric      %s, none reported yet\n", rpc_safe(mname));
}

/* The prediction p of a training job: its model, final loss, cost and
 * the losses ahead. */
static void print_prediction(json_t *p)
{
    printf("  prediction  model %s, final loss %.6g, %.4g CPU-s per "
           "iteration\n", json_string_value(json_object_get(p, "model")),
           rpc_num(p, "final_loss"), rpc_num(p, "iter_cpu_s"));
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(p, "ahead"), i, a)
        printf("              iteration %-8.0f loss %.6g\n",
               rpc_num(a, "iter"), rpc_num(a, "loss"));
}

/* The loss history hist (rows of iteration, loss, cpu_s, samples): a
 * sparkline of at most 60 points, then the last 10 rows. */
static void print_history(json_t *hist)
{
    char buf[256];
    json_t *losses = json_array();
    size_t i, nh = json_array_size(hist);
    json_t *row;
    for (i = 0; i < 60 && i < nh; i++) { /* at most 60 points, even */
        size_t k = nh <= 60 ? i : i * (nh - 1) / 59;
        json_array_append(losses, json_array_get(json_array_get(hist, k),
                                                 1));
    }
    buf[0] = 0;
    rpc_sparkline(buf, sizeof buf, losses, NAN, NAN);
    printf("  loss curve  %s\n", buf);
    json_decref(losses);
    size_t n = json_array_size(hist);
    if (n > 10)
        printf("  history (iteration, loss, cpu_s, samples), last 10 of "
               "%zu:\n", n);
    else
        printf("  history (iteration, loss, cpu_s, samples):\n");
    for (i = n > 10 ? n - 10 : 0; i < n; i++) {
        row = json_array_get(hist, i);
        printf("    %8lld  %-12.6g %-10.4g %g\n",
               (long long)json_integer_value(json_array_get(row, 0)),
               json_number_value(json_array_get(row, 1)),
               json_number_value(json_array_get(row, 2)),
               json_number_value(json_array_get(row, 3)));
    }
}

/* The last 10 changes of the job's cores (rows of time, cores, epoch). */
static void print_allocations(json_t *allocs)
{
    char buf[256];
    size_t n = json_array_size(allocs), i;
    if (n > 10)
        printf("  allocation over time (changes), last 10 of %zu:\n",
               n);
    else
        printf("  allocation over time (changes):\n");
    for (i = n > 10 ? n - 10 : 0; i < n; i++) {
        json_t *row = json_array_get(allocs, i);
        stamp(buf, sizeof buf, json_number_value(json_array_get(row, 0)));
        printf("    %s  epoch %-6lld %.3f cores\n", buf,
               (long long)json_integer_value(json_array_get(row, 2)),
               json_number_value(json_array_get(row, 1)));
    }
}

/* The job's events (rows of time, kind, detail). */
static void print_events(json_t *events)
{
    char buf[256];
    size_t i;
    json_t *row;
    printf("  events:\n");
    json_array_foreach(events, i, row) {
        stamp(buf, sizeof buf, json_number_value(json_array_get(row, 0)));
        const char *det = json_string_value(json_array_get(row, 2));
        printf("    %s  %-8s %s\n", buf,
               rpc_safe(json_string_value(json_array_get(row, 1))),
               det ? rpc_safe(det) : "");
    }
}

/* Prints job j (slaqd's job JSON), section by section. */
static void print_job(json_t *j)
{
    json_t *query = json_object_get(j, "query");
    print_identity(j);
    print_settings(j, query);
    print_progress(j, query);
    if (!query)
        reduction(j);
    goal(j);
    priority(j);
    json_t *p = query ? NULL : json_object_get(j, "prediction");
    if (p)
        print_prediction(p);
    json_t *hist = json_object_get(j, "history");
    if (json_array_size(hist) > 0)
        print_history(hist);
    json_t *allocs = json_object_get(j, "allocations");
    if (json_array_size(allocs) > 0)
        print_allocations(allocs);
    json_t *events = json_object_get(j, "events");
    if (json_array_size(events) > 0)
        print_events(events);
    const char *logs = json_string_value(json_object_get(j, "log_dir"));
    if (logs)
        printf("  logs        %s/{stdout,stderr}.log\n", rpc_safe(logs));
}

int cmd_show(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("show", argc, argv, &ro, usage, 1, 1,
                             "expected one job id");
    if (parsed >= 0)
        return parsed;
    json_t *r = rpc_call("show", &ro, json_pack("{s:s, s:s}", "type", "show",
                                                "job", argv[optind]));
    if (!r)
        return EXIT_RUNTIME;
    int rc = 0;
    if (!json_is_true(json_object_get(r, "ok")))
        rc = rpc_fail("show", r);
    else if (ro.json)
        rpc_print_json(json_object_get(r, "job"));
    else if (json_object_get(r, "array"))
        print_array(json_object_get(r, "array"));
    else if (json_is_integer(json_object_get(json_object_get(r, "job"),
                                             "array")) &&
             !json_integer_value(json_object_get(json_object_get(r, "job"),
                                                 "id")))
        print_unrun_task(json_object_get(r, "job"));
    else
        print_job(json_object_get(r, "job"));
    json_decref(r);
    return rc;
}
