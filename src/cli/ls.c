/*
 * ls.c — `slaq ls`: one line per active job slaqd knows; with -a, per job
 * (active and finished), as squeue and docker ps list.
 */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq ls [OPTIONS]\n\n"
               "Lists slaqd's active jobs (running and stopping); with -a, "
               "every job.\nEvery user who reaches slaqd sees every job. "
               "Columns: ID; USER the user\nit runs as; NAME; STATE; NODE "
               "(on a controller) where it runs; CORES its\nallocation; ITER "
               "its last reported iteration; LOSS its last loss (- for\na "
               "query); REDUC its predicted loss reduction so far (a query's "
               "progress);\nNOTE why it ended, and for a job with a goal "
               "(slaq submit --deadline,\n--accuracy) its deadline slack "
               "(due in, late by, on time by) and whether\nits metric meets "
               "its accuracy; under mlfs-h, mlfs-rl and mlfs, its place in "
               "the\npolicy's order (\"mlfs-h #2 of 5\"; slaq show "
               "gives the terms). A task array is one row: CORES its running\n"
               "tasks, ITER its finished ones, NOTE its counts by state "
               "(slaq show ID\nlists its tasks). With --json: one reply "
               "object, its \"jobs\" array\nholding the jobs listed "
               "(slaqd's pages joined).\nWhen two users or more have jobs, a "
               "second table gives each one's\nshare of the cluster (slaq "
               "share).\n\n"
               "  -a, --all         every job, finished ones too\n"
               "  --active          only running and stopping jobs (the "
               "default)\n"
               RPC_HELP);
}

/* A controller's jobs run on nodes: then ls shows a NODE column. */
static int on_nodes(json_t *jobs)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) {
        const char *n = json_string_value(json_object_get(j, "node"));
        if (!n || strcmp(n, "local"))
            return 1;
    }
    return 0;
}

/* A task array's row: its counts in NOTE, its running tasks in CORES,
 * its finished tasks in ITER (docs/arrays.md). */
static void print_array(json_t *a, int nodes)
{
    json_t *c = json_object_get(a, "counts");
    long long n[5];
    static const char *const names[] = {"pending", "running", "done",
                                        "failed", "cancelled"};
    for (int k = 0; k < 5; k++)
        n[k] = json_integer_value(json_object_get(c, names[k]));
    /* lost: ended while slaqd was down, exit status unknown */
    n[3] += json_integer_value(json_object_get(c, "lost"));
    n[4] += json_integer_value(json_object_get(c, "stopped"));
    char note[160];
    snprintf(note, sizeof note, "array %s: %lld pending, %lld running, "
             "%lld done, %lld failed, %lld cancelled",
             rpc_safe(json_string_value(json_object_get(a, "array"))), n[0],
             n[1], n[2], n[3], n[4]);
    const char *user = json_string_value(json_object_get(a, "user"));
    printf("%-5lld %-10.10s %-18.18s %-10s ",
           (long long)json_integer_value(json_object_get(a, "id")),
           user ? rpc_safe(user) : "-",
           rpc_safe(json_string_value(json_object_get(a, "name"))),
           json_string_value(json_object_get(a, "state")));
    if (nodes) {
        const char *node = json_string_value(json_object_get(a, "node"));
        printf("%-10.10s ", node ? rpc_safe(node) : "-");
    }
    printf("%6.2f %8lld %10s %6s  %s\n", rpc_num(a, "cores"), n[2] + n[3],
           "-", "-", note);
}

static void print_jobs(json_t *jobs, int nodes)
{
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) {
        const char *kind = json_string_value(json_object_get(j, "kind"));
        if (kind && !strcmp(kind, "array")) {
            print_array(j, nodes);
            continue;
        }
        double red = rpc_num(j, "reduction"), loss = rpc_num(j, "loss");
        json_t *q = json_object_get(j, "query");
        if (q) { /* a query: no loss; its progress P is its reduction */
            loss = NAN;
            red = rpc_num(q, "progress");
        }
        char reds[16] = "-", losss[24] = "-";
        if (!isnan(red))
            snprintf(reds, sizeof reds, "%.0f%%", red * 100);
        if (!isnan(loss))
            snprintf(losss, sizeof losss, "%.4g", loss);
        const char *why = json_string_value(json_object_get(j, "reason"));
        char goal[96], prio[96], reason[512];
        rpc_goal_note(goal, sizeof goal, j);
        rpc_priority_note(prio, sizeof prio, j);
        snprintf(reason, sizeof reason, "%s%s%s%s%s",
                 why ? rpc_safe(why) : "", why && *goal ? "; " : "", goal,
                 (why || *goal) && *prio ? "; " : "", prio);
        const char *user = json_string_value(json_object_get(j, "user"));
        user = user ? rpc_safe(user) : "-";
        if (nodes) {
            const char *n = json_string_value(json_object_get(j, "node"));
            printf("%-5lld %-10.10s %-18.18s %-10s %-10.10s %6.2f %8lld %10s "
                   "%6s  %s\n",
                   (long long)json_integer_value(json_object_get(j, "id")),
                   user, rpc_safe(json_string_value(json_object_get(j, "name"))),
                   json_string_value(json_object_get(j, "state")),
                   n ? rpc_safe(n) : "-", rpc_num(j, "cores"),
                   (long long)json_integer_value(json_object_get(j, "iter")),
                   losss, reds, reason);
            continue;
        }
        printf("%-5lld %-10.10s %-18.18s %-10s %6.2f %8lld %10s %6s  %s\n",
               (long long)json_integer_value(json_object_get(j, "id")),
               user, rpc_safe(json_string_value(json_object_get(j, "name"))),
               json_string_value(json_object_get(j, "state")),
               rpc_num(j, "cores"),
               (long long)json_integer_value(json_object_get(j, "iter")),
               losss, reds, reason);
    }
}

int cmd_ls(int argc, char **argv)
{
    enum { O_ACTIVE = 1 };
    static const struct option opts[] = {
        {"all", no_argument, 0, 'a'}, {"active", no_argument, 0, O_ACTIVE},
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    int o, active = 1;
    while ((o = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        if (o == 'a' || o == O_ACTIVE) {
            active = o == O_ACTIVE;
            continue;
        }
        usage(o == 'h' ? stdout : stderr);
        return o == 'h' ? 0 : EXIT_USAGE;
    }
    if (optind != argc) {
        cli_error("ls", "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    /* slaqd answers a page at a time (docs/protocol.md): each is printed
     * as it comes, so any number of jobs is listed in bounded memory; with
     * --json as one reply whose "jobs" array holds every page's jobs. */
    json_t *next = json_integer(0);
    int header = 0, nodes = 0;
    size_t shown = 0;
    while (json_is_integer(next)) {
        json_t *r = rpc_call("ls", &ro, json_pack("{s:s, s:b, s:O}", "type",
                                                  "ls", "active", active,
                                                  "after", next));
        json_decref(next);
        if (!r)
            return EXIT_RUNTIME;
        if (!json_is_true(json_object_get(r, "ok"))) {
            int st = rpc_fail("ls", r);
            json_decref(r);
            return st;
        }
        if (ro.json) {
            if (!header++)
                fputs("{\n  \"type\": \"result\",\n  \"ok\": true,\n  "
                      "\"jobs\": [", stdout);
            size_t i;
            json_t *j;
            json_array_foreach(json_object_get(r, "jobs"), i, j) {
                fputs(shown++ ? ",\n    " : "\n    ", stdout);
                json_dumpf(j, stdout, JSON_COMPACT | JSON_REAL_PRECISION(10));
            }
        } else {
            if (!header++) {
                nodes = on_nodes(json_object_get(r, "jobs"));
                if (nodes)
                    printf("%-5s %-10s %-18s %-10s %-10s %6s %8s %10s %6s  "
                           "%s\n", "ID", "USER", "NAME", "STATE", "NODE", "CORES", "ITER",
                           "LOSS", "REDUC", "NOTE");
                else
                    printf("%-5s %-10s %-18s %-10s %6s %8s %10s %6s  %s\n",
                           "ID", "USER", "NAME", "STATE", "CORES", "ITER", "LOSS",
                           "REDUC", "NOTE");
            }
            print_jobs(json_object_get(r, "jobs"), nodes);
            shown += json_array_size(json_object_get(r, "jobs"));
        }
        next = json_incref(json_object_get(r, "next"));
        json_decref(r);
    }
    json_decref(next);
    if (ro.json)
        fputs(shown ? "\n  ],\n  \"next\": null\n}\n"
                    : "],\n  \"next\": null\n}\n", stdout);
    else if (!shown && active) /* on stderr: the table stays the table */
        fputs("slaq ls: no active jobs (slaq ls -a lists finished ones "
              "too)\n", stderr);
    else
        share_print_users(&ro);
    return 0;
}
