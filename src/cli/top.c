/*
 * top.c — `slaq top`: a live view of slaqd's jobs, one row per active job
 * with its normalised loss, cores, iterations per second and sparklines of
 * its recent losses and allocations.
 *
 * On a terminal the screen is redrawn in place; otherwise (a pipe, a log
 * file) each refresh is printed as a plain block, so the view also works
 * in CI logs. --once prints one view and exits.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq top [OPTIONS]\n\n"
               "Live view of slaqd's active jobs, everyone's, one row each.\n\n"
               "Columns: ID, USER (the user a job runs as), NAME, STATE; LOSS~ the normalised loss (1 at "
               "the start, 0 at\nthe predicted end); CORES the allocation; "
               "ITER the last reported\niteration; IT/S iterations per second "
               "lately; then sparklines of the last\n16 losses and the last "
               "16 allocations (scaled to the machine's cores).\n\n"
               "  --once             print one view and exit (as -n 1)\n"
               "  -d, --delay S      seconds between refreshes (default 1; "
               "at least 0.05)\n"
               "  -n, --iterations N refresh N times, then exit (default: "
               "until stopped)\n"
               "  --interval S       the same as --delay (older spelling)\n"
               "  --all              include finished jobs\n" RPC_HELP);
}

/* Pads s with spaces to `cols` terminal columns. A sparkline's block
 * characters take three bytes but one column each, so printf's %-16s
 * (which counts bytes) would leave a short one too narrow and shift
 * every column after it. */
static void pad_cols(char *s, size_t len, int cols)
{
    int have = 0;
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++)
        have += ((unsigned char)s[i] & 0xC0) != 0x80; /* not a continuation */
    while (have < cols && n + 1 < len) {
        s[n++] = ' ';
        have++;
    }
    s[n] = 0;
}

static int draw(const rpc_opts *ro, int all, int tty)
{
    json_t *st = rpc_call("top", ro, json_pack("{s:s}", "type", "status"));
    if (!st)
        return EXIT_RUNTIME;
    json_t *ls = rpc_call("top", ro, json_pack("{s:s, s:b}", "type", "ls",
                                               "active", !all));
    if (!ls) {
        json_decref(st);
        return EXIT_RUNTIME;
    }
    if (ro->json) {
        json_t *both = json_pack("{s:O, s:O}", "status", st, "jobs",
                                 json_object_get(ls, "jobs"));
        rpc_print_json(both);
        json_decref(both);
        goto out;
    }
    if (tty)
        fputs("\033[H\033[2J", stdout);
    printf("slaqd: policy %s, %.2f/%g cores allocated, %lld active jobs, "
           "epoch %lld (%.2f ms), %lld reports\n",
           json_string_value(json_object_get(st, "policy")),
           rpc_num(st, "cores_allocated"), rpc_num(st, "cores"),
           (long long)json_integer_value(json_object_get(st, "jobs_active")),
           (long long)json_integer_value(json_object_get(st, "epoch")),
           rpc_num(st, "epoch_ms_last"),
           (long long)json_integer_value(json_object_get(st, "reports_total")));
    printf("%-5s %-10s %-16s %-9s %6s %6s %8s %7s  %-16s  %s\n", "ID",
           "USER", "NAME", "STATE", "LOSS~", "CORES", "ITER", "IT/S", "LOSS (recent)",
           "CORES (recent)");
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(ls, "jobs"), i, j) {
        char lspark[128] = "", cspark[128] = "", norm[16] = "-";
        json_t *losses = json_object_get(j, "recent_losses");
        json_t *cores = json_object_get(j, "recent_cores");
        size_t nl = json_array_size(losses), nc = json_array_size(cores);
        json_t *lt = json_array(), *ct = json_array();
        for (size_t k = nl > 16 ? nl - 16 : 0; k < nl; k++)
            json_array_append(lt, json_array_get(losses, k));
        for (size_t k = nc > 16 ? nc - 16 : 0; k < nc; k++)
            json_array_append(ct, json_array_get(cores, k));
        rpc_sparkline(lspark, sizeof lspark, lt, NAN, NAN);
        rpc_sparkline(cspark, sizeof cspark, ct, 0, rpc_num(st, "cores"));
        pad_cols(lspark, sizeof lspark, 16);
        json_decref(lt);
        json_decref(ct);
        double norm_loss = rpc_num(j, "pred_norm_loss");
        if (isnan(norm_loss)) /* a slaqd from before the name */
            norm_loss = rpc_num(j, "norm_loss");
        if (!isnan(norm_loss))
            snprintf(norm, sizeof norm, "%.3f", norm_loss);
        double ips = rpc_num(j, "iters_per_s");
        printf("%-5lld %-10.10s %-16.16s %-9s %6s %6.2f %8lld %7.2f  %s  "
               "%s\n", (long long)json_integer_value(json_object_get(j, "id")),
               rpc_safe(json_string_value(json_object_get(j, "user"))),
               rpc_safe(json_string_value(json_object_get(j, "name"))),
               json_string_value(json_object_get(j, "state")), norm,
               rpc_num(j, "cores"),
               (long long)json_integer_value(json_object_get(j, "iter")),
               isnan(ips) ? 0.0 : ips, lspark, cspark);
    }
    share_print_users(ro);
    if (!tty)
        putchar('\n');
out:
    fflush(stdout);
    json_decref(st);
    json_decref(ls);
    return 0;
}

int cmd_top(int argc, char **argv)
{
    enum { O_ONCE = 1, O_ALL };
    static const struct option opts[] = {
        {"once", no_argument, 0, O_ONCE}, {"all", no_argument, 0, O_ALL},
        {"delay", required_argument, 0, 'd'},
        {"interval", required_argument, 0, 'd'},
        {"iterations", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    int o, once = 0, all = 0;
    double interval = 1;
    long iterations = 0; /* 0: until stopped */
    while ((o = getopt_long(argc, argv, "d:n:h", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        switch (o) {
        case O_ONCE: once = 1; break;
        case O_ALL: all = 1; break;
        case 'd': {
            char *end;
            interval = strtod(optarg, &end);
            if (end == optarg || *end || !(interval >= 0.05) ||
                interval > 86400) {
                cli_error("top", "--delay wants seconds in [0.05, 86400], "
                          "got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        }
        case 'n': {
            char *end;
            iterations = strtol(optarg, &end, 10);
            if (end == optarg || *end || iterations < 1) {
                cli_error("top", "--iterations wants a whole number >= 1, "
                          "got '%s' (the delay between refreshes is -d)",
                          optarg);
                return EXIT_USAGE;
            }
            break;
        }
        default:
            usage(o == 'h' ? stdout : stderr);
            return o == 'h' ? 0 : EXIT_USAGE;
        }
    }
    if (optind != argc) {
        cli_error("top", "unexpected argument '%s'", argv[optind]);
        return EXIT_USAGE;
    }
    if (once)
        iterations = 1;
    int tty = isatty(STDOUT_FILENO) && iterations != 1;
    for (long i = 1;; i++) {
        int rc = draw(&ro, all, tty);
        if (rc || i == iterations)
            return rc;
        usleep((useconds_t)(interval * 1e6));
    }
}
