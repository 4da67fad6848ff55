/*
 * policy.c — `slaq policy [NAME]`: show or change slaqd's allocation
 * policy (slaq, fair, slaq-maxmin); a change applies from the next epoch.
 */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq policy [OPTIONS] [NAME]\n\n"
               "Prints slaqd's policy, or sets it to NAME: slaq (largest "
               "predicted loss\nreduction), fair (weighted fair shares) or "
               "slaq-maxmin (lowest worst loss).\n\n" RPC_HELP);
}

int cmd_policy(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("policy", argc, argv, &ro, usage, 0, 1,
                             "expected at most one policy name");
    if (parsed >= 0)
        return parsed;
    json_t *req = json_pack("{s:s}", "type", "policy");
    if (optind < argc)
        json_object_set_new(req, "name", json_string(argv[optind]));
    json_t *reply;
    int st = rpc_exchange("policy", &ro, req, &reply);
    if (st >= 0)
        return st;
    printf("%s\n", json_string_value(json_object_get(reply, "policy")));
    json_decref(reply);
    return 0;
}
