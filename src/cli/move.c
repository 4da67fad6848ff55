/*
 * move.c — `slaq move ID --node N`: move a running job of a cluster
 * controller to another node (src/daemon/agent_link.c, ctl_move). The
 * job saves its checkpoint and stops on its node, and starts again on N
 * from that checkpoint, keeping its id, history and reports.
 */
#include <getopt.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq move [OPTIONS] ID --node N\n\n"
               "Moves running job ID of a cluster controller to node N. The "
               "job's agent\nasks it to stop (stop reason \"move\"): it saves "
               "its checkpoint in\n$SLAQ_CHECKPOINT_DIR and exits (SIGTERM "
               "after slaqd's grace period). The\ncontroller then fences the "
               "old instance (a new generation: it can neither\nreport nor "
               "write the checkpoint) and starts the job on N from the\n"
               "checkpoint. It keeps its id, history and reports; repeated "
               "iterations are\nnot counted twice. `slaq show ID` lists the "
               "move with the seconds it\nstopped and its checkpoint's "
               "bytes.\n\n"
               "Only a job submitted with --restartable moves, and only to "
               "a node that is\nup; a task of an array and an approximate "
               "query do not move.\n\n"
               "  --node N          the node to move it to (slaq nodes "
               "lists them)\n" RPC_HELP);
}

int cmd_move(int argc, char **argv)
{
    static const struct option opts[] = {
        {"node", required_argument, 0, 'n'}, {"help", no_argument, 0, 'h'},
        RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    const char *node = NULL;
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        if (o == 'n') {
            node = optarg;
            continue;
        }
        usage(o == 'h' ? stdout : stderr);
        return o == 'h' ? 0 : EXIT_USAGE;
    }
    if (optind != argc - 1) {
        cli_error("move", "expected one job id");
        return EXIT_USAGE;
    }
    if (!node || !*node) {
        cli_error("move", "--node N is required: the node to move the job "
                  "to (slaq nodes lists them)");
        return EXIT_USAGE;
    }
    json_t *reply;
    int st = rpc_exchange("move", &ro, json_pack("{s:s, s:s, s:s}", "type",
                          "move", "job", argv[optind], "node", node), &reply);
    if (st >= 0)
        return st;
    const char *from = json_string_value(json_object_get(
        json_object_get(reply, "job"), "node"));
    printf("job %s: moving from node %s to node %s (saving its checkpoint; "
           "`slaq show %s` lists the move once it reports there)\n",
           argv[optind], from ? from : "?", node, argv[optind]);
    json_decref(reply);
    return 0;
}
