/*
 * daemon_rpc.c — the slaq command's connection to slaqd (see daemon_rpc.h).
 *
 * Each command makes one or a few requests over the Unix socket, blocking
 * with a timeout: a command is not a training loop. When nothing listens
 * on the socket the message says where it looked and how to start slaqd.
 *
 * With --host (or SLAQ_HOST) each request goes over TCP instead, one
 * connection per request, and carries the user's credential ("user_token",
 * docs/security.md) so that slaqd knows who asks without a kernel to tell.
 * The command line beats the environment; on the command line --host and
 * --socket/--state-dir name two different slaqds, so both is an error; in
 * the environment SLAQ_HOST beats SLAQ_SOCKET.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "io/text.h"

#define RPC_TIMEOUT_MS 10000

void rpc_opts_init(rpc_opts *o)
{
    o->socket = NULL;
    o->host = NULL;
    o->local = 0;
    o->state_dir = NULL;
    o->json = 0;
}

int rpc_opt(rpc_opts *o, int code, const char *arg)
{
    switch (code) {
    case RPC_OPT_SOCKET: o->socket = arg; return 1;
    case RPC_OPT_HOST: o->host = arg; return 1;
    case RPC_OPT_STATE: o->state_dir = arg; return 1;
    case RPC_OPT_JSON: o->json = 1; return 1;
    }
    return 0;
}

/* The socket to use: one the user named (--socket, --state-dir,
 * SLAQ_SOCKET: returns 0), or one found where the defaults put it (the
 * working directory's ./var/slaq.sock when it exists, else the
 * service's: returns 1, and the caller checks whose it is first). */
static int socket_path(const rpc_opts *o, char *out, size_t len)
{
    const char *env = getenv("SLAQ_SOCKET");
    if (o->socket)
        snprintf(out, len, "%s", o->socket);
    else if (o->state_dir)
        snprintf(out, len, "%s/slaq.sock", o->state_dir);
    else if (env && *env)
        snprintf(out, len, "%s", env);
    else if (access("./var/slaq.sock", F_OK) < 0 &&
             access(RPC_SYSTEM_SOCKET, F_OK) == 0)
        snprintf(out, len, "%s", RPC_SYSTEM_SOCKET); /* the service's */
    else
        snprintf(out, len, "./var/slaq.sock");
    return !o->socket && !o->state_dir && !(env && *env);
}

/* 1 if uid is the caller's or root's. */
static int trusted_uid(uid_t uid)
{
    return uid == 0 || uid == getuid();
}

/*
 * Before anything is sent to a socket the user did not name: the socket,
 * and the directory it is in, must be root's or the user's (and the
 * directory writable by no one else), and the process serving it must
 * run as root or as the user. Otherwise another user who made ./var in a
 * shared directory, or took the socket's place, would receive the
 * request (a submit carries the whole environment) and could answer it.
 * 0, or -1 after printing why and what to do.
 */
static int socket_trusted(const char *cmd, const char *path, int fd)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    struct stat ss, ds;
    struct ucred cred;
    socklen_t clen = sizeof cred;
    const char *what = NULL;
    uid_t who = 0;
    if (lstat(path, &ss) < 0 || !S_ISSOCK(ss.st_mode))
        what = "is not a socket";
    else if (!trusted_uid(ss.st_uid))
        what = "belongs to", who = ss.st_uid;
    else if (lstat(slash ? dir : ".", &ds) < 0 || !S_ISDIR(ds.st_mode) ||
             !trusted_uid(ds.st_uid) || (ds.st_mode & 022))
        what = "is in a directory another user may change";
    else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
             !trusted_uid(cred.uid))
        what = "is served by", who = clen == sizeof cred ? cred.uid : 0;
    if (!what)
        return 0;
    if (who)
        cli_error(cmd, "refusing %s: it %s uid %u, not you or root; name "
                  "the socket to use with --socket, --state-dir or "
                  "SLAQ_SOCKET if you trust it", path, what, (unsigned)who);
    else
        cli_error(cmd, "refusing %s: it %s; name the socket to use with "
                  "--socket, --state-dir or SLAQ_SOCKET if you trust it",
                  path, what);
    return -1;
}

/* Writes all of buf or fails. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The TCP address to use (--host, else $SLAQ_HOST unless a socket or
 * state directory was named), or NULL for the Unix socket. */
static const char *tcp_host(const rpc_opts *o)
{
    const char *env = getenv("SLAQ_HOST");
    if (o->host)
        return o->host;
    if (o->local || o->socket || o->state_dir || !env || !*env)
        return NULL;
    return env;
}

/* Reads the user's credential into out: $SLAQ_USER_TOKEN, else the first
 * line of ~/.config/slaq/token. 0, or -1 after printing what to do. */
static int user_token(const char *cmd, char *out, size_t len)
{
    const char *env = getenv("SLAQ_USER_TOKEN");
    const char *home = getenv("HOME");
    char path[4096];
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return 0;
    }
    snprintf(path, sizeof path, "%s/" RPC_TOKEN_FILE, home ? home : "");
    FILE *f = home && *home ? fopen(path, "r") : NULL;
    if (!f) {
        cli_error(cmd, "no user credential: run `slaq token --save` on the "
                  "controller's machine (or set SLAQ_USER_TOKEN); looked for "
                  "%s: %s", path, home && *home ? strerror(errno)
                                                : "HOME is not set");
        return -1;
    }
    int got = fgets(out, (int)len, f) != NULL;
    fclose(f);
    out[got ? strcspn(out, "\r\n") : 0] = '\0';
    if (!*out) {
        cli_error(cmd, "no user credential: %s is empty; run `slaq token "
                  "--save` on the controller's machine", path);
        return -1;
    }
    return 0;
}

/* A connected TCP socket to "HOST:PORT", or -1 after printing why. */
static int tcp_connect(const char *cmd, const char *host)
{
    char name[256];
    const char *colon = strrchr(host, ':');
    if (!colon || colon == host || !colon[1] ||
        (size_t)(colon - host) >= sizeof name) {
        cli_error(cmd, "--host/SLAQ_HOST '%s': expected HOST:PORT (e.g. "
                  "10.0.0.5:7071, the address given to slaqd --tcp)", host);
        return -1;
    }
    memcpy(name, host, (size_t)(colon - host));
    name[colon - host] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM}, *res = NULL;
    int rc = getaddrinfo(name, colon + 1, &hints, &res);
    if (rc) {
        cli_error(cmd, "--host/SLAQ_HOST '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC,
                    a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        cli_error(cmd, "slaqd is not reachable at %s: %s (is it run with "
                  "--tcp %s?)", host, strerror(err), host);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

json_t *rpc_call(const char *cmd, const rpc_opts *o, json_t *req)
{
    char path[4096], tok[512];
    const char *host = tcp_host(o);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    json_t *reply = NULL;
    char *line = NULL, *buf = NULL;
    int fd = -1;
    if (o->host && (o->socket || o->state_dir)) {
        cli_error(cmd, "--host names a slaqd over TCP, --%s a local one: "
                  "give one of them", o->socket ? "socket" : "state-dir");
        goto out;
    }
    if (host) {
        snprintf(path, sizeof path, "%s", host);
        if (user_token(cmd, tok, sizeof tok) < 0 ||
            (fd = tcp_connect(cmd, host)) < 0)
            goto out;
        json_object_set_new(req, "user_token", json_string(tok));
    } else {
        int found = socket_path(o, path, sizeof path);
        if (strlen(path) >= sizeof sa.sun_path) {
            cli_error(cmd, "socket path too long: %s", path);
            goto out;
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            cli_error(cmd, "slaqd is not running (cannot connect to %s: %s); "
                      "start it with 'slaqd', or point --socket / --state-dir"
                      " / --host / SLAQ_SOCKET at a running one", path,
                      strerror(errno));
            goto out;
        }
        if (found && socket_trusted(cmd, path, fd) < 0)
            goto out;
    }
    line = json_dumps(req, JSON_COMPACT);
    if (!line || write_all(fd, line, strlen(line)) < 0 ||
        write_all(fd, "\n", 1) < 0) {
        cli_error(cmd, "cannot send to slaqd at %s: %s", path,
                  strerror(errno));
        goto out;
    }
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 65536 > cap) {
            cap = cap ? cap * 2 : 131072;
            char *nb = realloc(buf, cap);
            if (!nb) {
                cli_error(cmd, "out of memory reading slaqd's reply");
                goto out;
            }
            buf = nb;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, RPC_TIMEOUT_MS) <= 0) {
            cli_error(cmd, "slaqd at %s did not answer within %d s", path,
                      RPC_TIMEOUT_MS / 1000);
            goto out;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            cli_error(cmd, "slaqd at %s closed the connection without a "
                      "reply", path);
            goto out;
        }
        char *nl = memchr(buf + len, '\n', (size_t)n);
        len += (size_t)n;
        if (nl) {
            json_error_t e;
            reply = json_loadb(buf, (size_t)(nl - buf), 0, &e);
            if (!reply)
                cli_error(cmd, "unreadable reply from slaqd: %s", e.text);
            break;
        }
    }
out:
    free(line);
    free(buf);
    json_decref(req);
    if (fd >= 0)
        close(fd);
    return reply;
}

int rpc_fail(const char *cmd, json_t *reply)
{
    const char *code = json_string_value(json_object_get(reply, "code"));
    cli_error(cmd, "%s", json_string_value(json_object_get(reply, "message")));
    return code && (!strcmp(code, "bad_request") || !strcmp(code, "bad_policy")
                    || !strcmp(code, "unknown_job")) ? EXIT_USAGE
                                                     : EXIT_RUNTIME;
}

void rpc_print_json(json_t *v)
{
    json_dumpf(v, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
}

const char *rpc_safe(const char *s)
{
    static char bufs[4][4096];
    static unsigned next;
    if (!s)
        return "-";
    return text_escape(bufs[next++ % 4], sizeof bufs[0], s);
}

double rpc_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

double rpc_capacity(json_t *node)
{
    double c = rpc_num(node, "capacity");
    return isnan(c) ? rpc_num(node, "cores") : c;
}

void rpc_sparkline(char *out, size_t len, json_t *arr, double lo, double hi)
{
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    size_t n = json_array_size(arr), used = strlen(out);
    if (isnan(lo) || isnan(hi)) {
        lo = INFINITY;
        hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = json_number_value(json_array_get(arr, i));
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    }
    for (size_t i = 0; i < n; i++) {
        double v = json_number_value(json_array_get(arr, i));
        int b = hi > lo ? (int)lround((v - lo) / (hi - lo) * 7) : 0;
        b = b < 0 ? 0 : b > 7 ? 7 : b;
        size_t bl = strlen(bars[b]);
        if (used + bl + 1 > len)
            break;
        memcpy(out + used, bars[b], bl + 1);
        used += bl;
    }
}

void rpc_duration(char *out, size_t len, double s)
{
    if (!(s >= 0))
        snprintf(out, len, "-");
    else if (s < 60)
        snprintf(out, len, "%.1fs", s);
    else if (s < 3600)
        snprintf(out, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(out, len, "%dh%02dm", (int)(s / 3600),
                 (int)fmod(s / 60, 60));
}

void rpc_goal_note(char *out, size_t len, json_t *job)
{
    size_t n = 0;
    out[0] = '\0';
    double slack = rpc_num(job, "slack");
    int ended = json_is_number(json_object_get(job, "ended"));
    if (!isnan(slack)) {
        char d[32];
        rpc_duration(d, sizeof d, fabs(slack));
        n += (size_t)snprintf(out, len, "%s %s", slack < 0 ? "late by"
                              : ended ? "on time by" : "due in", d);
    }
    if (!isnan(rpc_num(job, "accuracy")) && n < len) {
        json_t *met = json_object_get(job, "accuracy_met");
        snprintf(out + n, len - n, "%s%s", n ? ", " : "",
                 json_is_true(met) ? "accuracy met"
                 : json_is_false(met) ? "accuracy not met" : "no metric yet");
    }
}

void rpc_priority_note(char *out, size_t len, json_t *job)
{
    json_t *p = json_object_get(job, "priority");
    out[0] = '\0';
    if (json_is_object(p))
        snprintf(out, len, "%s #%lld of %lld",
                 rpc_safe(json_string_value(json_object_get(p, "policy"))),
                 (long long)json_integer_value(json_object_get(p, "rank")),
                 (long long)json_integer_value(json_object_get(p, "of")));
}

int rpc_parse_args(const char *cmd, int argc, char **argv, rpc_opts *o,
                   void (*usage)(FILE *), int min_ops, int max_ops,
                   const char *what)
{
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts_init(o);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (rpc_opt(o, c, optarg))
            continue;
        usage(c == 'h' ? stdout : stderr);
        return c == 'h' ? 0 : EXIT_USAGE;
    }
    int n = argc - optind;
    if (n < min_ops || n > max_ops) {
        cli_error(cmd, "%s", what);
        return EXIT_USAGE;
    }
    return -1;
}

int rpc_take_flag(int *argc, char **argv, const char *flag)
{
    int found = 0, out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--"))
            for (; i < *argc; i++)
                argv[out++] = argv[i];
        else if (!strcmp(argv[i], flag))
            found = 1;
        else
            argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return found;
}

int rpc_exchange(const char *cmd, const rpc_opts *o, json_t *req,
                 json_t **reply)
{
    json_t *r = rpc_call(cmd, o, req);
    if (!r)
        return EXIT_RUNTIME;
    int rc = -1;
    if (!json_is_true(json_object_get(r, "ok")))
        rc = rpc_fail(cmd, r);
    else if (o->json) {
        rpc_print_json(r);
        rc = 0;
    }
    if (rc >= 0)
        json_decref(r);
    else
        *reply = r;
    return rc;
}
