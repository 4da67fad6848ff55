/*
 * cmd_queue.c — `slaq queue`: each node's queue of tasks (task arrays,
 * docs/arrays.md): its estimated wait, and each queued task's position,
 * wait and why it has not started.
 */
#include <math.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq queue [OPTIONS]\n\n"
               "Lists each node's queue of tasks (task arrays: slaq submit "
               "--array):\nthe cores tasks may use there (those no ML job "
               "may use), the tasks\nrunning, the next tasks to start (at "
               "most slaqd's --queue-bound) and\nthe node's estimated wait: "
               "the queued tasks' estimates over its task\ncores. Per task: "
               "POS its position, TASK array_index, WAIT its estimated\n"
               "wait, EST one task's time (the array's mean so far, else "
               "its\n--task-estimate; - when unknown), REASON why it has not "
               "started.\n\n" RPC_HELP);
}

static void secs(char *out, size_t len, double v)
{
    if (isnan(v))
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%.1fs", v);
}

int cmd_queue(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("queue", argc, argv, &ro, usage, 0, 0,
                                "expected no arguments");
    if (parsed >= 0)
        return parsed;
    json_t *r;
    int st = rpc_exchange("queue", &ro, json_pack("{s:s}", "type", "queue"),
                          &r);
    if (st >= 0)
        return st;
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(r, "nodes"), i, n) {
        char wait[32];
        secs(wait, sizeof wait, rpc_num(n, "wait"));
        json_t *q = json_object_get(n, "queue");
        printf("node %s: %g task cores of %g, %lld running, %zu queued "
               "(bound %lld), %lld more waiting in their arrays; estimated "
               "wait %s\n",
               rpc_safe(json_string_value(json_object_get(n, "name"))),
               rpc_num(n, "task_cores"), rpc_capacity(n),
               (long long)json_integer_value(json_object_get(n, "running")),
               json_array_size(q),
               (long long)json_integer_value(json_object_get(n, "bound")),
               (long long)json_integer_value(json_object_get(n, "beyond")),
               wait);
        if (!json_array_size(q))
            continue;
        printf("  %4s %-14s %7s %7s  %s\n", "POS", "TASK", "WAIT", "EST",
               "REASON");
        size_t k;
        json_t *t;
        json_array_foreach(q, k, t) {
            char task[48], w[32], e[32];
            snprintf(task, sizeof task, "%lld_%lld",
                     (long long)json_integer_value(json_object_get(t,
                                                                   "array")),
                     (long long)json_integer_value(json_object_get(t,
                                                                   "index")));
            secs(w, sizeof w, rpc_num(t, "wait"));
            secs(e, sizeof e, rpc_num(t, "estimate"));
            printf("  %4lld %-14s %7s %7s  %s\n",
                   (long long)json_integer_value(json_object_get(t,
                                                                 "position")),
                   task, w, e,
                   rpc_safe(json_string_value(json_object_get(t, "reason"))));
        }
    }
    json_decref(r);
    return 0;
}
