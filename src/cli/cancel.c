/*
 * cancel.c — `slaq cancel [--now] ID`: stop a job. slaqd first asks the job
 * through its client to stop (it may save its work and exit), SIGTERM to
 * its process group after slaqd's grace period, SIGKILL after another;
 * with --now, or for a job without a client, SIGTERM at once.
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq cancel [--now] [OPTIONS] ID\n\n"
               "Cancels job ID: slaqd asks it to stop through its client "
               "(stop reason\n\"cancelled\"), sends SIGTERM if it has not "
               "exited after slaqd's grace\nperiod (--grace, default 10 s), "
               "and SIGKILL after another.\n\n"
               "  --now             SIGTERM at once (SIGKILL after the grace "
               "period)\n" RPC_HELP);
}

/* Takes --now out of argv (before a "--"), so the shared parser sees only
 * the options every daemon command has; returns 1 if it was there. */
static int take_now(int *argc, char **argv)
{
    int found = 0, out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--"))
            for (; i < *argc; i++)
                argv[out++] = argv[i];
        else if (!strcmp(argv[i], "--now"))
            found = 1;
        else
            argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return found;
}

int cmd_cancel(int argc, char **argv)
{
    rpc_opts ro;
    int now = take_now(&argc, argv);
    int parsed = rpc_parse_args("cancel", argc, argv, &ro, usage, 1, 1,
                             "expected one job id");
    if (parsed >= 0)
        return parsed;
    json_t *reply;
    int st = rpc_exchange("cancel", &ro, json_pack("{s:s, s:s, s:b}", "type",
                          "cancel", "job", argv[optind], "now", now), &reply);
    if (st >= 0)
        return st;
    printf("job %s: %s\n", argv[optind], json_string_value(json_object_get(
               json_object_get(reply, "job"), "state")));
    json_decref(reply);
    return 0;
}
