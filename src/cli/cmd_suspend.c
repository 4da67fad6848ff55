/*
 * cmd_suspend.c — `slaq suspend [--checkpoint] ID` and `slaq resume ID`:
 * pause a job slaqd started and continue it later (src/daemon/suspend.c).
 */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage_suspend(FILE *f)
{
    fprintf(f, "usage: slaq suspend [--checkpoint] [OPTIONS] ID\n\n"
               "Suspends running job ID. Without --checkpoint slaqd stops "
               "its process\ngroup (SIGSTOP) and gives its cores to the "
               "other jobs; `slaq resume ID`\ncontinues it (SIGCONT). "
               "Prints how long the stop took.\n\n"
               "  --checkpoint      ask the job to stop and leave a "
               "checkpoint in\n"
               "                    $SLAQ_CHECKPOINT_DIR (slaq-train does); "
               "`slaq resume ID`\n"
               "                    starts it again from the checkpoint as a "
               "new job\n\n"
               "On a cluster controller the job's node agent suspends it and "
               "slaq waits for\nits answer (at most 5 s); a refusal is "
               "printed and the exit status is 1.\n" RPC_HELP);
}

static void usage_resume(FILE *f)
{
    fprintf(f, "usage: slaq resume [OPTIONS] ID\n\n"
               "Resumes suspended job ID: SIGCONT, or, for a job suspended "
               "with\n--checkpoint (once it has exited), its command again "
               "as a new job that\ncontinues from the checkpoint. Prints the "
               "id of the job that runs.\nOn a cluster controller the job's "
               "node agent resumes it (a checkpoint resume\nstarts on the "
               "node that keeps the checkpoint).\n\n" RPC_HELP);
}

int cmd_suspend(int argc, char **argv)
{
    rpc_opts ro;
    int ck = rpc_take_flag(&argc, argv, "--checkpoint");
    int parsed = rpc_parse_args("suspend", argc, argv, &ro, usage_suspend, 1,
                                1, "expected one job id");
    if (parsed >= 0)
        return parsed;
    json_t *reply;
    int st = rpc_exchange("suspend", &ro, json_pack("{s:s, s:s, s:b}", "type",
                          "suspend", "job", argv[optind], "checkpoint", ck),
                          &reply);
    if (st >= 0)
        return st;
    double ms = rpc_num(reply, "latency_ms");
    if (ck)
        printf("job %s: stopping to leave a checkpoint; `slaq show %s` "
               "gives the time it took once it has exited\n", argv[optind],
               argv[optind]);
    else
        printf("job %s: suspended (SIGSTOP) in %.3f ms\n", argv[optind], ms);
    json_decref(reply);
    return 0;
}

int cmd_resume(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("resume", argc, argv, &ro, usage_resume, 1, 1,
                                "expected one job id");
    if (parsed >= 0)
        return parsed;
    json_t *reply;
    int st = rpc_exchange("resume", &ro, json_pack("{s:s, s:s}", "type",
                          "resume", "job", argv[optind]), &reply);
    if (st >= 0)
        return st;
    json_int_t id = json_integer_value(json_object_get(
        json_object_get(reply, "job"), "id"));
    if (id == strtoll(argv[optind], NULL, 10))
        printf("job %lld: resumed\n", (long long)id);
    else
        printf("job %s: resumed from its checkpoint as job %lld\n",
               argv[optind], (long long)id);
    json_decref(reply);
    return 0;
}
