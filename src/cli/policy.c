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
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        usage(o == 'h' ? stdout : stderr);
        return o == 'h' ? 0 : EXIT_USAGE;
    }
    if (argc - optind > 1) {
        cli_error("policy", "expected at most one policy name");
        return EXIT_USAGE;
    }
    json_t *req = json_pack("{s:s}", "type", "policy");
    if (optind < argc)
        json_object_set_new(req, "name", json_string(argv[optind]));
    json_t *reply = rpc_call("policy", &ro, req);
    if (!reply)
        return EXIT_RUNTIME;
    int rc = 0;
    if (!json_is_true(json_object_get(reply, "ok")))
        rc = rpc_fail("policy", reply);
    else if (ro.json)
        rpc_print_json(reply);
    else
        printf("%s\n", json_string_value(json_object_get(reply, "policy")));
    json_decref(reply);
    return rc;
}
