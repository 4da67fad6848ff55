/*
 * cmd_share.c — `slaq share` (each account's and user's weight, share,
 * usage and cores, as Slurm's sshare shows them) and `slaq account
 * add|set|ls` (an administrator's changes to the tree; slaqd's
 * accounts.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void share_usage(FILE *f)
{
    fprintf(f, "usage: slaq share [OPTIONS]\n\n"
               "Shows how slaqd divides the cores between users, as Slurm's "
               "sshare does\n(slaqd --fair-share, docs/slaqd.md \"Shares "
               "between users\"): every\naccount and user, indented under "
               "its account. "
               "Columns: NAME; WEIGHT its weight among its siblings;\nSHARE "
               "its normalised share of the cluster (its weight over its "
               "siblings',\ntimes its account's share); USAGE its decayed "
               "core-seconds; FACTOR the\nfair-share factor 2^(-usage/share) "
               "its weight was multiplied by at the\nlast division; PART the "
               "cores it was given; CORES the cores its jobs\nhold; JOBS its "
               "jobs (running, held back by a cap); CAPS its caps on cores\n"
               "and running jobs. Anyone may read it.\n\n" RPC_HELP);
}

static void caps(char *out, size_t len, json_t *e)
{
    json_t *mc = json_object_get(e, "max_cores");
    long long mj = (long long)json_integer_value(json_object_get(e,
                                                                 "max_jobs"));
    char a[32] = "", b[32] = "";
    if (json_is_number(mc))
        snprintf(a, sizeof a, "%g cores", json_number_value(mc));
    if (mj > 0)
        snprintf(b, sizeof b, "%lld jobs", mj);
    snprintf(out, len, "%s%s%s", *a || *b ? a : "-", *a && *b ? ", " : "",
             b);
}

/* The table of a share reply (also after an account change). */
static void print_shares(json_t *r)
{
    if (!json_is_true(json_object_get(r, "fair_share")))
        printf("fair-share is off (slaqd --fair-share off): the policy "
               "divides the cores\namong all jobs alike; the accounts below "
               "are kept but not used.\n\n");
    printf("%-24s %-7s %6s %6s %10s %6s %7s %7s %-9s %s\n", "NAME", "KIND",
           "WEIGHT", "SHARE", "USAGE", "FACTOR", "PART", "CORES", "JOBS",
           "CAPS");
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "entries"), i, e) {
        int depth = (int)json_integer_value(json_object_get(e, "depth"));
        /* cap: caps()'s two 32-byte halves joined by ", " */
        char name[96], jobs[32], cap[72];
        snprintf(name, sizeof name, "%*s%s", 2 * (depth > 8 ? 8 : depth), "",
                 rpc_safe(json_string_value(json_object_get(e, "name"))));
        snprintf(jobs, sizeof jobs, "%lld/%lld",
                 (long long)json_integer_value(json_object_get(e, "running")),
                 (long long)json_integer_value(json_object_get(e, "jobs")));
        caps(cap, sizeof cap, e);
        printf("%-24s %-7s %6.3g %6.3f %10.4g %6.3f %7.2f %7.2f %-9s %s\n",
               name, rpc_safe(json_string_value(json_object_get(e, "kind"))),
               rpc_num(e, "weight"), rpc_num(e, "share"),
               rpc_num(e, "usage"), rpc_num(e, "factor"), rpc_num(e, "part"),
               rpc_num(e, "cores"), jobs, cap);
    }
    printf("\nusage half-life: %g s (share-half-life; 0: past usage is "
           "ignored)\n", rpc_num(r, "half_life_s"));
}

/* Whether share entry e is a user with jobs. */
static int busy_user(json_t *e)
{
    const char *kind = json_string_value(json_object_get(e, "kind"));
    return kind && !strcmp(kind, "user") &&
           json_integer_value(json_object_get(e, "jobs")) > 0;
}

void share_print_users(const rpc_opts *ro)
{
    json_t *r = rpc_call("share", ro, json_pack("{s:s}", "type", "share"));
    size_t i, users = 0;
    json_t *e, *entries = json_object_get(r, "entries");
    json_array_foreach(entries, i, e)
        users += (size_t)busy_user(e);
    /* Nothing with fair-share off (or from a slaqd from before it), nor
     * when one user holds the whole cluster. */
    if (!json_is_true(json_object_get(r, "fair_share")) || users < 2) {
        json_decref(r);
        return;
    }
    printf("\n%-16s %-16s %6s %7s %7s %s\n", "USER", "ACCOUNT", "SHARE",
           "PART", "CORES", "JOBS");
    json_array_foreach(entries, i, e) {
        if (!busy_user(e))
            continue;
        printf("%-16.16s %-16.16s %6.3f %7.2f %7.2f %lld/%lld\n",
               rpc_safe(json_string_value(json_object_get(e, "name"))),
               rpc_safe(json_string_value(json_object_get(e, "account"))),
               rpc_num(e, "share"), rpc_num(e, "part"), rpc_num(e, "cores"),
               (long long)json_integer_value(json_object_get(e, "running")),
               (long long)json_integer_value(json_object_get(e, "jobs")));
    }
    json_decref(r);
}

int cmd_share(int argc, char **argv)
{
    rpc_opts ro;
    int parsed = rpc_parse_args("share", argc, argv, &ro, share_usage, 0, 0,
                                "expected no arguments");
    if (parsed >= 0)
        return parsed;
    json_t *r;
    int st = rpc_exchange("share", &ro, json_pack("{s:s}", "type", "share"),
                          &r);
    if (st >= 0)
        return st;
    print_shares(r);
    json_decref(r);
    return 0;
}

static void account_usage(FILE *f)
{
    fprintf(f, "usage: slaq account add NAME [--user] [--account A] "
               "[--weight W]\n                        [--max-cores C] "
               "[--max-jobs N] [OPTIONS]\n"
               "       slaq account set NAME [--account A] [--weight W] "
               "[--max-cores C|none]\n                        [--max-jobs "
               "N|none] [OPTIONS]\n"
               "       slaq account ls [OPTIONS]\n\n"
               "Changes the tree of accounts and users slaqd divides the "
               "cores by\n(docs/slaqd.md, \"Shares between users\"); only "
               "an administrator of slaqd\nmay. A job's owner is a user of "
               "the tree from its first job, under the\nroot until placed "
               "in an account. Changes are kept in state.db and apply\nfrom "
               "the next epoch.\n\n"
               "  add NAME          a new account (with --user: a user, e.g. "
               "one placed\n                    before their first job)\n"
               "  set NAME          change an account or user\n"
               "  ls                list them (as slaq share)\n"
               "  --user            add: NAME is a user, not an account\n"
               "  --account A       the account it goes under (root: the "
               "top)\n"
               "  --weight W        its weight among its siblings (default "
               "1)\n"
               "  --max-cores C     at most C cores over the cluster (none: "
               "no cap)\n"
               "  --max-jobs N      at most N running jobs, the rest wait "
               "(none or 0:\n                    no cap)\n" RPC_HELP);
}

/* A cap's value: a number, or none (none_v). 0, or -1 after an error. */
static int cap_value(const char *opt, const char *s, int whole,
                     json_t **out)
{
    if (!strcmp(s, "none")) {
        *out = whole ? json_integer(0) : json_null();
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || (whole ? v < 0 || v != floor(v)
                                                   : v <= 0)) {
        cli_error("account", "%s: expected %s or none, got '%s'", opt,
                  whole ? "a whole number >= 0" : "a positive number", s);
        return -1;
    }
    *out = whole ? json_integer((json_int_t)v) : json_real(v);
    return 0;
}

int cmd_account(int argc, char **argv)
{
    static const struct option opts[] = {
        {"user", no_argument, 0, 'u'}, {"account", required_argument, 0, 'a'},
        {"weight", required_argument, 0, 'w'},
        {"max-cores", required_argument, 0, 'c'},
        {"max-jobs", required_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    json_t *req = json_pack("{s:s}", "type", "account");
    int o, user = 0, rc = EXIT_USAGE;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        json_t *v = NULL;
        double w;
        if (rpc_opt(&ro, o, optarg))
            continue;
        switch (o) {
        case 'u': user = 1; continue;
        case 'a':
            json_object_set_new(req, "account", strcmp(optarg, "root")
                                ? json_string(optarg) : json_null());
            continue;
        case 'w':
            if (cli_parse_positive("account", "--weight", optarg, &w) < 0)
                goto out;
            json_object_set_new(req, "weight", json_real(w));
            continue;
        case 'c':
        case 'j':
            if (cap_value(o == 'c' ? "--max-cores" : "--max-jobs", optarg,
                          o == 'j', &v) < 0)
                goto out;
            json_object_set_new(req, o == 'c' ? "max_cores" : "max_jobs", v);
            continue;
        case 'h':
            account_usage(stdout);
            rc = 0;
            goto out;
        default:
            account_usage(stderr);
            goto out;
        }
    }
    const char *verb = optind < argc ? argv[optind] : NULL;
    int ls = verb && !strcmp(verb, "ls");
    if (!verb || (!ls && strcmp(verb, "add") && strcmp(verb, "set"))) {
        cli_error("account", "expected add NAME, set NAME or ls");
        goto out;
    }
    if (argc - optind != (ls ? 1 : 2)) {
        cli_error("account", ls ? "ls takes no name" : "%s takes one NAME",
                  verb);
        goto out;
    }
    if (ls) {
        json_decref(req);
        req = json_pack("{s:s}", "type", "share");
    } else {
        if (user && strcmp(verb, "add")) {
            cli_error("account", "--user is for add (set finds the entry "
                      "by its name)");
            goto out;
        }
        json_object_set_new(req, "op", json_string(verb));
        json_object_set_new(req, "name", json_string(argv[optind + 1]));
        json_object_set_new(req, "user", json_boolean(user));
    }
    json_t *r;
    rc = rpc_exchange("account", &ro, req, &r);
    req = NULL;
    if (rc >= 0)
        return rc;
    print_shares(r);
    json_decref(r);
    return 0;
out:
    json_decref(req);
    return rc;
}
