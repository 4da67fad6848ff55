/*
 * cmd_policy.c — `slaq policy [NAME]`: show or change slaqd's share policy
 * (libslaq's table of them: slaq_policy_count); a change applies from the
 * next epoch.
 */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "slaq/slaq.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq policy [OPTIONS] [NAME]\n\n"
               "Prints slaqd's share policy, or sets it to NAME, one "
               "of:\n\n");
    for (size_t k = 0; k < slaq_policy_count(); k++)
        fprintf(f, "  %-15s %s\n", slaq_policy_name((slaq_policy_kind)k),
                slaq_policy_summary((slaq_policy_kind)k));
    fprintf(f, "\n(mlfs-rl and mlfs order the jobs by MLF-RL's network, "
               "which slaqd reads at\nstart: slaqd --rl-model FILE, by "
               "default the committed data/models/mlfs-rl.model.)\n");
    fputs("\n" RPC_HELP, f);
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
