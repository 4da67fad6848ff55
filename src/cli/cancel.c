/*
 * cancel.c — `slaq cancel [--now] ID`: stop a job. slaqd first asks the job
 * through its client to stop (it may save its work and exit), SIGTERM to
 * its process group after slaqd's grace period, SIGKILL after another;
 * with --now, or for a job without a client, SIGTERM at once.
 */
#include <getopt.h>

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

int cmd_cancel(int argc, char **argv)
{
    rpc_opts ro;
    int now = rpc_take_flag(&argc, argv, "--now");
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
