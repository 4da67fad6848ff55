/*
 * token.c — `slaq token [--save]`: the caller's credential for reaching
 * slaqd over TCP (`--host`). slaqd issues it over its Unix socket, to
 * the user the kernel names there and to no one else (docs/security.md);
 * --save keeps it where `--host` looks for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq token [--save] [OPTIONS]\n\n"
               "Prints your credential for slaqd's TCP port (slaqd --tcp): "
               "UID:HEX, issued by\nslaqd over its Unix socket to the user "
               "the kernel says you are. With it,\n`slaq COMMAND --host "
               "HOST:PORT` acts as you, with your rights, from any\nmachine. "
               "Keep it secret: it is as good as your login to slaqd. "
               "slaqd's\nadministrator revokes every credential by deleting "
               "STATE/user-token.key.\n\n"
               "  --save            write it to ~/" RPC_TOKEN_FILE " instead "
               "of printing it\n                    (mode 0600, directory "
               "0700); --host reads it from there\n" RPC_HELP);
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

int cmd_token(int argc, char **argv)
{
    rpc_opts ro;
    int want_save = rpc_take_flag(&argc, argv, "--save");
    int parsed = rpc_parse_args("token", argc, argv, &ro, usage, 0, 0,
                                "expected no arguments");
    if (parsed >= 0)
        return parsed;
    if (ro.host) {
        cli_error("token", "a credential is issued only over slaqd's Unix "
                  "socket, where the kernel says who you are: run `slaq "
                  "token` on the controller's machine, without --host");
        return EXIT_USAGE;
    }
    ro.local = 1;
    json_t *r;
    int st = rpc_exchange("token", &ro, json_pack("{s:s}", "type",
                                                  "user_token"), &r);
    if (st >= 0)
        return st;
    const char *tok = json_string_value(json_object_get(r, "user_token"));
    char path[4200];
    if (!tok) {
        cli_error("token", "slaqd's reply has no \"user_token\" (is it an "
                  "older slaqd?)");
        st = EXIT_RUNTIME;
    } else if (!want_save) {
        printf("%s\n", tok);
        st = 0;
    } else if (save(tok, path, sizeof path) < 0) {
        st = EXIT_RUNTIME;
    } else {
        printf("saved the credential of %s (uid %lld) to %s\n",
               rpc_safe(json_string_value(json_object_get(r, "user"))),
               (long long)json_integer_value(json_object_get(r, "uid")),
               path);
        st = 0;
    }
    json_decref(r);
    return st;
}
