/*
 * cmd_sweep.c — `slaq sweep`: hyperparameter sweeps under slaqd.
 *
 *   slaq sweep [--dry-run] [--wait] SPEC.json   check a spec, start it
 *   slaq sweep ls                               every sweep
 *   slaq sweep show ID                          one, configuration by configuration
 *   slaq sweep cancel ID                        stop it and its jobs
 *
 * The spec is read and checked here with the same code slaqd uses
 * (src/io/sweepspec.c), so a bad field is reported before anything runs.
 * docs/sweep-cli.md is the manual.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "io/sweepspec.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq sweep [--dry-run] [--wait] [OPTIONS] SPEC.json\n"
        "       slaq sweep ls [OPTIONS]\n"
        "       slaq sweep show [OPTIONS] ID\n"
        "       slaq sweep cancel [OPTIONS] ID\n\n"
        "Runs a hyperparameter sweep under slaqd: the configurations of "
        "SPEC.json's\nsearch space, as jobs on its slots, under a sweep "
        "policy (pop, pop-keep,\npop-early, default, bandit, earlyterm, sh, hyperband) "
        "that suspends, resumes and\nkills them from their learning curves. "
        "docs/sweep-cli.md describes the spec:\n\n"
        "  {\"name\": \"mlp\", \"command\": \"slaq-train mlpc --lr {lr} "
        "--iters {epochs}\",\n"
        "   \"space\": {\"lr\": {\"type\": \"log-uniform\", \"low\": 1e-3, "
        "\"high\": 1}},\n"
        "   \"generator\": {\"type\": \"random\", \"seed\": 1}, \"configs\": "
        "30,\n"
        "   \"metric\": \"val_accuracy\", \"direction\": \"max\", "
        "\"y_target\": 0.85,\n"
        "   \"t_max\": 600, \"kill_threshold\": 0.15, \"epochs\": 30, "
        "\"b\": 5,\n"
        "   \"slots\": 2, \"policy\": \"pop\"}\n\n"
        "ls columns: ID; NAME; STATE (running, reached, done, cancelled, "
        "failed);\nPOLICY; CFGS configurations; RUN/SUS/KIL/END how many "
        "run, are suspended,\nwere killed, ended; ELAPSED since it started; "
        "TARGET when the target was\nreached; BEST the best metric so far.\n"
        "show columns: CFG the configuration's index; STATE; CLASS "
        "(promising,\nopportunistic, poor: POP's); P the model's probability "
        "of reaching the\ntarget in time; EPOCHS trained; BEST its best "
        "metric; JOB its job; PARAMS.\n\n"
        "  --dry-run         check the spec and print its configurations; "
        "start nothing\n"
        "  --wait            follow the sweep until it ends; print its "
        "outcome\n" RPC_HELP);
}

static void print_sweep(json_t *w)
{
    char buf[64];
    printf("sweep %lld: %s — %s\n",
           (long long)json_integer_value(json_object_get(w, "id")),
           rpc_safe(json_string_value(json_object_get(w, "name"))),
           json_string_value(json_object_get(w, "state")));
    const char *note = json_string_value(json_object_get(w, "note"));
    if (note)
        printf("  note        %s\n", rpc_safe(note));
    printf("  policy      %s, %lld slots, %lld configurations of %lld "
           "epochs\n", json_string_value(json_object_get(w, "policy")),
           (long long)json_integer_value(json_object_get(w, "slots")),
           (long long)json_integer_value(json_object_get(w, "configs")),
           (long long)json_integer_value(json_object_get(w, "epochs")));
    printf("  target      %s %s %g\n",
           rpc_safe(json_string_value(json_object_get(w, "metric"))),
           !strcmp(json_string_value(json_object_get(w, "direction")), "max")
               ? ">=" : "<=", rpc_num(w, "y_target"));
    rpc_duration(buf, sizeof buf, rpc_num(w, "elapsed_s"));
    printf("  elapsed     %s\n", buf);
    if (!isnan(rpc_num(w, "time_to_target_s"))) {
        rpc_duration(buf, sizeof buf, rpc_num(w, "time_to_target_s"));
        printf("  reached     after %s (%.1f s), by configuration %lld\n", buf,
               rpc_num(w, "time_to_target_s"),
               (long long)json_integer_value(json_object_get(w,
                                                             "reached_config")));
    }
    if (!isnan(rpc_num(w, "best")))
        printf("  best        %.6g (configuration %lld)\n", rpc_num(w, "best"),
               (long long)json_integer_value(json_object_get(w,
                                                             "best_config")));
    if (!isnan(rpc_num(w, "threshold")))
        printf("  threshold   p* = %.3f\n", rpc_num(w, "threshold"));
    printf("\n  %-4s %-10s %-13s %6s %6s %8s %-6s %s\n", "CFG", "STATE",
           "CLASS", "P", "EPOCHS", "BEST", "JOB", "PARAMS");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(w, "config_list"), i, c) {
        char *params = json_dumps(json_object_get(c, "params"),
                                  JSON_COMPACT | JSON_SORT_KEYS |
                                      JSON_REAL_PRECISION(4));
        const char *cl = json_string_value(json_object_get(c, "class"));
        char p[16] = "-", best[16] = "-", job[16] = "-";
        if (!isnan(rpc_num(c, "p")))
            snprintf(p, sizeof p, "%.3f", rpc_num(c, "p"));
        if (!isnan(rpc_num(c, "best")))
            snprintf(best, sizeof best, "%.4g", rpc_num(c, "best"));
        if (json_is_integer(json_object_get(c, "job")))
            snprintf(job, sizeof job, "%lld", (long long)json_integer_value(
                                                  json_object_get(c, "job")));
        printf("  %-4zu %-10s %-13s %6s %6lld %8s %-6s %s\n", i,
               json_string_value(json_object_get(c, "state")),
               cl ? cl : "-", p,
               (long long)json_integer_value(json_object_get(c, "epochs")),
               best, job, params ? rpc_safe(params) : "");
        free(params);
    }
}

static int sweep_ls(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("sweep ls", argc, argv, &ro, usage, 0, 0,
                                "sweep ls takes no operands");
    if (parsed >= 0)
        return parsed;
    json_t *reply;
    int st = rpc_exchange("sweep ls", &ro, json_pack("{s:s}", "type",
                                                     "sweep_ls"), &reply);
    if (st >= 0)
        return st;
    printf("%-5s %-16s %-9s %-9s %5s %-15s %8s %8s %s\n", "ID", "NAME",
           "STATE", "POLICY", "CFGS", "RUN/SUS/KIL/END", "ELAPSED", "TARGET",
           "BEST");
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(reply, "sweeps"), i, w) {
        json_t *c = json_object_get(w, "counts");
        char ttt[32] = "-", el[32], best[24] = "-";
        if (!isnan(rpc_num(w, "time_to_target_s")))
            rpc_duration(ttt, sizeof ttt, rpc_num(w, "time_to_target_s"));
        rpc_duration(el, sizeof el, rpc_num(w, "elapsed_s"));
        if (!isnan(rpc_num(w, "best")))
            snprintf(best, sizeof best, "%.4g", rpc_num(w, "best"));
        char counts[32];
        snprintf(counts, sizeof counts, "%lld/%lld/%lld/%lld",
                 (long long)json_integer_value(json_object_get(c, "running")),
                 (long long)json_integer_value(json_object_get(c, "suspended")),
                 (long long)json_integer_value(json_object_get(c, "killed")),
                 (long long)json_integer_value(json_object_get(c, "ended")));
        printf("%-5lld %-16s %-9s %-9s %5lld %-15s %8s %8s %s\n",
               (long long)json_integer_value(json_object_get(w, "id")),
               rpc_safe(json_string_value(json_object_get(w, "name"))),
               json_string_value(json_object_get(w, "state")),
               json_string_value(json_object_get(w, "policy")),
               (long long)json_integer_value(json_object_get(w, "configs")),
               counts, el, ttt, best);
    }
    json_decref(reply);
    return 0;
}

static int sweep_one(const char *what, int argc, char **argv)
{
    rpc_opts ro;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "sweep %s", what);
    int parsed = rpc_parse_args(cmd, argc, argv, &ro, usage, 1, 1,
                                "expected one sweep id");
    if (parsed >= 0)
        return parsed;
    char type[32];
    snprintf(type, sizeof type, "sweep_%s", what);
    json_t *reply;
    int st = rpc_exchange(cmd, &ro, json_pack("{s:s, s:s}", "type", type,
                                              "sweep", argv[optind]), &reply);
    if (st >= 0)
        return st;
    print_sweep(json_object_get(reply, "sweep"));
    json_decref(reply);
    return 0;
}

/* Reads SPEC.json; errors name the file, line and column. */
static json_t *read_spec(const char *path)
{
    json_error_t je;
    json_t *spec = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!spec)
        fprintf(stderr, "slaq sweep: %s: line %d, column %d: %s\n", path,
                je.line, je.column, je.text);
    return spec;
}

static int sweep_submit(int argc, char **argv)
{
    int dry = rpc_take_flag(&argc, argv, "--dry-run");
    int wait = rpc_take_flag(&argc, argv, "--wait");
    rpc_opts ro;
    int parsed = rpc_parse_args("sweep", argc, argv, &ro, usage, 1, 1,
                                "expected a spec file (SPEC.json), or ls, "
                                "show ID, cancel ID");
    if (parsed >= 0)
        return parsed;
    const char *path = argv[optind];
    json_t *spec = read_spec(path);
    if (!spec)
        return EXIT_USAGE;
    sweep_spec s;
    char err[512];
    if (sweep_spec_parse(spec, &s, err, sizeof err) < 0) {
        fprintf(stderr, "slaq sweep: %s: %s\n", path, err);
        sweep_spec_free(&s);
        json_decref(spec);
        return EXIT_USAGE;
    }
    json_t *cfgs = sweep_spec_configs(&s, err, sizeof err);
    if (!cfgs) {
        fprintf(stderr, "slaq sweep: %s: %s\n", path, err);
        sweep_spec_free(&s);
        json_decref(spec);
        return EXIT_USAGE;
    }
    if (dry) {
        if (ro.json) {
            rpc_print_json(cfgs);
        } else {
            printf("%s: %zu configurations, %zu slots, policy %s, %s %s %g "
                   "within %d epochs\n", s.name, json_array_size(cfgs),
                   s.p.slots, s.policy, s.metric, s.p.maximize ? ">=" : "<=",
                   s.p.y_target, s.p.max_epochs);
            size_t i;
            json_t *c;
            json_array_foreach(cfgs, i, c) {
                char *line = json_dumps(json_object_get(c, "cmd"),
                                        JSON_COMPACT);
                printf("  %3zu  %s\n", i, line ? rpc_safe(line) : "");
                free(line);
            }
        }
        json_decref(cfgs);
        sweep_spec_free(&s);
        json_decref(spec);
        return 0;
    }
    json_decref(cfgs);
    sweep_spec_free(&s);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    json_t *reply, *env = json_array();
    for (char **e = environ; *e; e++) /* the jobs' environment, as submit's */
        json_array_append_new(env, json_string(*e));
    int st = rpc_exchange("sweep", &ro, json_pack("{s:s, s:o, s:s, s:o}",
                          "type", "sweep_submit", "spec", spec, "cwd", cwd,
                          "env", env), &reply);
    if (st >= 0)
        return st;
    json_int_t id = json_integer_value(json_object_get(
        json_object_get(reply, "sweep"), "id"));
    json_decref(reply);
    if (!wait) {
        printf("%lld\n", (long long)id);
        return 0;
    }
    printf("sweep %lld started\n", (long long)id);
    char last[256] = "";
    for (;;) {
        json_t *r = rpc_call("sweep", &ro, json_pack("{s:s, s:I}", "type",
                             "sweep_show", "sweep", id));
        if (!r)
            return 1;
        json_t *w = json_object_get(r, "sweep");
        const char *state = json_string_value(json_object_get(w, "state"));
        json_t *c = json_object_get(w, "counts");
        char now[256];
        char best[32] = "-";
        if (!isnan(rpc_num(w, "best")))
            snprintf(best, sizeof best, "%.4g", rpc_num(w, "best"));
        snprintf(now, sizeof now, "%s: %lld running, %lld suspended, %lld "
                 "killed, %lld ended; best %s", state ? state : "?",
                 (long long)json_integer_value(json_object_get(c, "running")),
                 (long long)json_integer_value(json_object_get(c, "suspended")),
                 (long long)json_integer_value(json_object_get(c, "killed")),
                 (long long)json_integer_value(json_object_get(c, "ended")),
                 best);
        if (strcmp(now, last)) {
            printf("  %7.1f s  %s\n", rpc_num(w, "elapsed_s"), now);
            fflush(stdout);
            snprintf(last, sizeof last, "%s", now);
        }
        if (!state || strcmp(state, "running")) {
            if (ro.json)
                rpc_print_json(w);
            else
                print_sweep(w);
            json_decref(r);
            return 0;
        }
        json_decref(r);
        sleep(1);
    }
}

int cmd_sweep(int argc, char **argv)
{
    /* The sub-command is the first operand (options may come first). */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            break;
        if (!strcmp(a, "--socket") || !strcmp(a, "--state-dir")) {
            i++;
            continue;
        }
        if (a[0] == '-')
            continue;
        if (strcmp(a, "ls") && strcmp(a, "show") && strcmp(a, "cancel"))
            break;
        char *sub = argv[i];
        memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof *argv);
        argc--;
        argv[0] = sub;
        if (!strcmp(sub, "ls"))
            return sweep_ls(argc, argv);
        return sweep_one(sub, argc, argv);
    }
    return sweep_submit(argc, argv);
}
