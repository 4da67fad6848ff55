/*
 * status.c — `slaq status`: is slaqd running, and how is it doing.
 */

#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "slaq/settings.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq status [OPTIONS]\n\n"
               "Prints slaqd's configuration and counters; exits 1 if it is "
               "not running.\n\n" RPC_HELP);
}

/* The scheduler's settings as slaqd reports them, NAME=VALUE in the
 * table's order (the spelling of slaqd's options and configuration file),
 * wrapped; a setting this slaq knows and slaqd does not report is left
 * out. */
static void print_settings(json_t *set)
{
    if (!json_is_object(set))
        return;
    int at = printf("settings    ");
    for (size_t i = 0; i < slaq_setting_count(); i++) {
        const char *name = slaq_setting_at(i)->name;
        const char *v = json_string_value(json_object_get(set, name));
        if (!v)
            continue;
        int len = (int)(strlen(name) + 1 + strlen(v));
        if (at > 12 && at + 1 + len > 79)
            at = printf("\n            ");
        at += printf(" %s=%s", name, v);
    }
    printf("\n");
}

int cmd_status(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("status", argc, argv, &ro, usage, 0, 0,
                             "expected no arguments");
    if (parsed >= 0)
        return parsed;
    json_t *r;
    int st = rpc_exchange("status", &ro, json_pack("{s:s}", "type", "status"),
                          &r);
    if (st >= 0)
        return st;
    char up[32];
    rpc_duration(up, sizeof up, rpc_num(r, "uptime_s"));
    printf("slaqd        pid %lld, up %s\n",
           (long long)json_integer_value(json_object_get(r, "pid")), up);
    printf("state dir    %s\n", json_string_value(json_object_get(r,
                                                            "state_dir")));
    printf("policy       %s (predictor %s), epoch %g s\n",
           json_string_value(json_object_get(r, "policy")),
           json_string_value(json_object_get(r, "predictor")),
           rpc_num(r, "epoch_s"));
    printf("cores        %.2f allocated of %g\n",
           rpc_num(r, "cores_allocated"), rpc_num(r, "cores"));
    printf("enforcement  %s: %s\n",
           json_string_value(json_object_get(r, "enforce")),
           json_string_value(json_object_get(r, "enforce_detail")));
    printf("jobs         %lld active, %lld in total\n",
           (long long)json_integer_value(json_object_get(r, "jobs_active")),
           (long long)json_integer_value(json_object_get(r, "jobs_total")));
    printf("reports      %lld (%lld rejected messages)\n",
           (long long)json_integer_value(json_object_get(r,
                                                         "reports_total")),
           (long long)json_integer_value(json_object_get(r,
                                                         "errors_total")));
    printf("epochs       %lld, last %.3f ms, slowest %.3f ms\n",
           (long long)json_integer_value(json_object_get(r, "epoch")),
           rpc_num(r, "epoch_ms_last"), rpc_num(r, "epoch_ms_max"));
    print_settings(json_object_get(r, "settings"));
    json_t *lim = json_object_get(r, "limits");
    if (lim) {
        printf("per user     %.0f jobs, %.0f array tasks, %g reports/s, "
               "%.0f finished jobs kept\n", rpc_num(lim, "user_jobs"),
               rpc_num(lim, "user_tasks"), rpc_num(lim, "user_reports"),
               rpc_num(lim, "keep_jobs_per_user"));
        printf("logs         %.0f bytes a file, %.0f a user; %.0f bytes "
               "kept free for state.db\n", rpc_num(lim, "log_bytes"),
               rpc_num(lim, "user_log_bytes"), rpc_num(lim, "disk_reserve"));
    }
    long long port = json_integer_value(json_object_get(r, "http_port"));
    const char *host = json_string_value(json_object_get(r, "http_addr"));
    if (!host || !*host || !strcmp(host, "0.0.0.0"))
        host = "127.0.0.1"; /* listening everywhere: this host answers */
    if (port)
        printf("dashboard    http://%s:%lld/\n", host, port);
    json_decref(r);
    return 0;
}
