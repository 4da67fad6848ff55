/*
 * token.c — `slaq token [--save] [--expires D]`: the caller's credential
 * for reaching slaqd over TCP (`--host`), and `slaq token --revoke [--user
 * NAME]`. slaqd issues credentials over its Unix socket, to the user the
 * kernel names there and to no one else, and revokes them there too
 * (docs/security.md); --save keeps one where `--host` looks for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq token [--save] [--expires DURATION] [OPTIONS]\n"
               "       slaq token --revoke [--user NAME] [OPTIONS]\n\n"
               "Prints your credential for slaqd's TCP port (slaqd --tcp), "
               "issued by slaqd\nover its Unix socket to the user the "
               "kernel says you are:\nUID:EXPIRES:GENERATION:HEX. With it, "
               "`slaq COMMAND --host HOST:PORT` acts as\nyou, with your "
               "rights, from any machine, in a sealed session: the\n"
               "credential is never sent, only proved, and slaqd proves "
               "itself first. Keep\nit secret: it is as good as your login "
               "to slaqd until it expires.\n\n"
               "  --save            write it to ~/" RPC_TOKEN_FILE " instead "
               "of printing it\n                    (mode 0600, directory "
               "0700); --host reads it from there\n"
               "  --expires DURATION\n                    how long it is "
               "valid: a number with s, m, h or d (default\n"
               "                    30d, at most 366d)\n"
               "  --revoke          revoke every credential of yours issued "
               "so far (the next\n                    `slaq token` issues a "
               "valid one); other users' stay valid\n"
               "  --user NAME       with --revoke: another user's (login name "
               "or uid; slaqd's\n                    administrators only)\n"
               RPC_HELP);
}

/* --expires: a positive number with an optional s, m, h or d, at most 366
 * days, in seconds; -1 if it is not one. */
static double duration_opt(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double unit = !*end ? 1 : !strcmp(end, "s") ? 1 : !strcmp(end, "m") ? 60
                : !strcmp(end, "h") ? 3600 : !strcmp(end, "d") ? 86400 : 0;
    if (end == s || unit == 0 || !(v > 0) || v * unit < 1 ||
        v * unit > 366 * 86400.0)
        return -1;
    return v * unit;
}

/* Makes dir (mode 0700) if missing; 0, or -1 after printing why. */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        cli_error("token", "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes tok to ~/.config/slaq/token (0600, replaced whole). */
static int save(const char *tok, char *path, size_t len)
{
    const char *home = getenv("HOME");
    char dir[4096], tmp[4200];
    if (!home || !*home) {
        cli_error("token", "--save: HOME is not set");
        return -1;
    }
    snprintf(dir, sizeof dir, "%s/.config", home);
    if (make_dir(dir) < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s/.config/slaq", home);
    if (make_dir(dir) < 0 || chmod(dir, 0700) < 0) {
        cli_error("token", "cannot make %s private (mode 0700): %s", dir,
                  strerror(errno));
        return -1;
    }
    snprintf(path, len, "%s/token", dir);
    snprintf(tmp, sizeof tmp, "%s/.token.%ld", dir, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0) {
        cli_error("token", "cannot write %s: %s", tmp, strerror(errno));
        return -1;
    }
    size_t n = strlen(tok);
    int bad = fchmod(fd, 0600) < 0 || write(fd, tok, n) != (ssize_t)n ||
              write(fd, "\n", 1) != 1 || fsync(fd) < 0;
    int err = errno;
    if (close(fd) < 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad || rename(tmp, path) < 0) {
        cli_error("token", "cannot write %s: %s", path,
                  strerror(bad ? err : errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* Prints a credential from reply r, or saves it (--save). Exit status. */
static int show_token(json_t *r, int want_save)
{
    const char *tok = json_string_value(json_object_get(r, "user_token"));
    char path[4200], when[64];
    time_t exp = (time_t)json_integer_value(json_object_get(r, "expires"));
    struct tm tm;
    if (!gmtime_r(&exp, &tm) ||
        !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(when, sizeof when, "?");
    if (!tok) {
        cli_error("token", "slaqd's reply has no \"user_token\" (is it an "
                  "older slaqd?)");
        return EXIT_RUNTIME;
    }
    if (!want_save) {
        printf("%s\n", tok);
        return 0;
    }
    if (save(tok, path, sizeof path) < 0)
        return EXIT_RUNTIME;
    printf("saved the credential of %s (uid %lld), valid until %s, to %s\n",
           rpc_safe(json_string_value(json_object_get(r, "user"))),
           (long long)json_integer_value(json_object_get(r, "uid")), when,
           path);
    return 0;
}

int cmd_token(int argc, char **argv)
{
    enum { O_SAVE = 1, O_EXPIRES, O_REVOKE, O_USER };
    static const struct option opts[] = {
        {"save", no_argument, 0, O_SAVE},
        {"expires", required_argument, 0, O_EXPIRES},
        {"revoke", no_argument, 0, O_REVOKE},
        {"user", required_argument, 0, O_USER},
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    int want_save = 0, revoke = 0, c;
    double valid = -1;
    const char *user = NULL;
    rpc_opts_init(&ro);
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (rpc_opt(&ro, c, optarg))
            continue;
        switch (c) {
        case O_SAVE: want_save = 1; break;
        case O_REVOKE: revoke = 1; break;
        case O_USER: user = optarg; break;
        case O_EXPIRES:
            if ((valid = duration_opt(optarg)) < 0) {
                cli_error("token", "--expires %s: expected a duration from "
                          "1s to 366d (a number with s, m, h or d)", optarg);
                return EXIT_USAGE;
            }
            break;
        default:
            usage(c == 'h' ? stdout : stderr);
            return c == 'h' ? 0 : EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("token", "expected no arguments");
        return EXIT_USAGE;
    }
    if (user && !revoke) {
        cli_error("token", "--user goes with --revoke: a credential is "
                  "issued only to the user the kernel names");
        return EXIT_USAGE;
    }
    if (revoke && (want_save || valid > 0)) {
        cli_error("token", "--revoke issues nothing: give it without --save "
                  "and --expires");
        return EXIT_USAGE;
    }
    if (ro.host) {
        cli_error("token", "a credential is issued and revoked only over "
                  "slaqd's Unix socket, where the kernel says who you are: "
                  "run `slaq token` on the machine slaqd runs on, without "
                  "--host");
        return EXIT_USAGE;
    }
    ro.local = 1;
    json_t *req = json_pack("{s:s}", "type", revoke ? "user_token_revoke"
                                                    : "user_token"), *r;
    if (user)
        json_object_set_new(req, "user", json_string(user));
    if (valid > 0)
        json_object_set_new(req, "valid_s", json_real(valid));
    int st = rpc_exchange("token", &ro, req, &r);
    if (st >= 0)
        return st;
    if (revoke) {
        printf("revoked every credential of %s (uid %lld) issued so far\n",
               rpc_safe(json_string_value(json_object_get(r, "user"))),
               (long long)json_integer_value(json_object_get(r, "uid")));
        st = 0;
    } else {
        st = show_token(r, want_save);
    }
    json_decref(r);
    return st;
}
