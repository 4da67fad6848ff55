/*
 * cancel.c — `slaq cancel ID`: stop a job now (SIGTERM to its process
 * group, SIGKILL after slaqd's grace period).
 */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq cancel [OPTIONS] ID\n\n"
               "Cancels job ID: slaqd asks it to stop and terminates its "
               "processes.\n\n" RPC_HELP);
}

int cmd_cancel(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("cancel", argc, argv, &ro, usage, 1, 1,
                             "expected one job id");
    if (parsed >= 0)
        return parsed;
    json_t *reply;
    int st = rpc_exchange("cancel", &ro, json_pack("{s:s, s:s}", "type",
                          "cancel", "job", argv[optind]), &reply);
    if (st >= 0)
        return st;
    printf("job %s: %s\n", argv[optind], json_string_value(json_object_get(
               json_object_get(reply, "job"), "state")));
    json_decref(reply);
    return 0;
}
