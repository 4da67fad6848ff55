/*
 * nodes.c — `slaq nodes`: the nodes a slaqd controller runs jobs on
 * (docs/cluster.md). A slaqd without agents is its own one node.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq nodes [OPTIONS]\n\n"
               "Lists the nodes: name, capacity (the cores it divides), cores\n"
               "allocated, active jobs, state (up; away: its agent's\n"
               "connection dropped, down after 3 silent epochs; down: its jobs\n"
               "were lost or moved) and the age of its last heartbeat.\n\n"
               RPC_HELP);
}

int cmd_nodes(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("nodes", argc, argv, &ro, usage, 0, 0,
                                "expected no arguments");
    if (parsed >= 0)
        return parsed;
    json_t *r;
    int st = rpc_exchange("nodes", &ro, json_pack("{s:s}", "type", "nodes"),
                          &r);
    if (st >= 0)
        return st;
    json_t *nodes = json_object_get(r, "nodes");
    printf("%-16s %8s %9s %5s %-6s %s\n", "NAME", "CAPACITY", "ALLOCATED",
           "JOBS", "STATE", "HEARTBEAT");
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        char beat[48] = "-";
        double t = rpc_num(n, "last_heartbeat");
        if (!isnan(t) && t > 0) {
            time_t tt = (time_t)t;
            struct tm tm;
            char when[24];
            gmtime_r(&tt, &tm);
            strftime(when, sizeof when, "%H:%M:%SZ", &tm);
            snprintf(beat, sizeof beat, "%s (%.1f s ago)", when,
                     rpc_num(n, "heartbeat_age_s"));
        }
        printf("%-16s %8g %9.2f %5lld %-6s %s\n",
               rpc_safe(json_string_value(json_object_get(n, "name"))),
               rpc_capacity(n), rpc_num(n, "allocated"),
               (long long)json_integer_value(json_object_get(n, "jobs")),
               json_string_value(json_object_get(n, "state")), beat);
    }
    json_decref(r);
    return 0;
}
