/*
 * daemon_rpc.c — the slaq command's connection to slaqd (see daemon_rpc.h).
 *
 * Each command makes one or a few requests over the Unix socket, blocking
 * with a timeout: a command is not a training loop. When nothing listens
 * on the socket the message says where it looked and how to start slaqd.
 *
 * With --host (or SLAQ_HOST) each request goes over TCP instead, one
 * connection per request, in a sealed session (link.h, LINK_SESSION;
 * docs/protocol.md): the user's credential (docs/security.md) is the key
 * of its handshake, which proves slaqd to the command before the command
 * proves the credential, and the request and reply are sealed. The
 * credential itself is never sent.
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

#include <sodium.h>

#include "core/util.h"
#include "cli/cli.h"
#include "cli/daemon_rpc.h"
#include "daemon/link.h"
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

/* Lines read from slaqd: what arrived past the last line is kept. */
typedef struct rpc_reader {
    int fd;
    char *buf;
    size_t len, cap, skip; /* bytes held; the last line's, to drop */
} rpc_reader;

/* The next line (without its newline, NUL-terminated, valid until the
 * next call) into *line and *n; -1 after printing why when slaqd closed,
 * did not answer in time or memory ran out. */
static int read_line(const char *cmd, const char *where, rpc_reader *r,
                     char **line, size_t *n)
{
    if (r->skip)
        memmove(r->buf, r->buf + r->skip, r->len - r->skip);
    r->len -= r->skip;
    r->skip = 0;
    for (size_t seen = 0;;) {
        char *nl = r->len > seen ? memchr(r->buf + seen, '\n',
                                          r->len - seen) : NULL;
        if (nl) {
            *nl = '\0';
            *line = r->buf;
            *n = (size_t)(nl - r->buf);
            r->skip = *n + 1;
            return 0;
        }
        seen = r->len;
        if (r->len + 65536 > r->cap) {
            size_t cap = grow_cap(r->cap, r->len + 65536, 131072);
            if (!cap || GROW_ARRAY(r->buf, cap) < 0) {
                cli_error(cmd, "out of memory reading slaqd's reply");
                return -1;
            }
            r->cap = cap;
        }
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, RPC_TIMEOUT_MS) <= 0) {
            cli_error(cmd, "slaqd at %s did not answer within %d s", where,
                      RPC_TIMEOUT_MS / 1000);
            return -1;
        }
        ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            cli_error(cmd, "slaqd at %s closed the connection without a "
                      "reply", where);
            return -1;
        }
        r->len += (size_t)got;
    }
}

/*
 * The identity a credential claims and its key (link.h, LINK_SESSION):
 * "admin:TOKEN" is slaqd's control token (the key derived from it, about
 * 0.1 s), "UID:EXPIRES:GENERATION:HEX" a user's (the key is HEX). 0, or
 * -1 after printing what is wrong with it.
 */
static int session_cred(const char *cmd, const char *cred, sd_link *l,
                        unsigned char key[LINK_KEY_BYTES])
{
    char as[LINK_MAX_AS];
    const char *colon = strrchr(cred, ':');
    size_t got = 0, colons = 0;
    if (!strncmp(cred, "admin:", 6)) {
        if (link_admin_key(cred + 6, key) < 0 ||
            link_init(l, LINK_SESSION, "admin") < 0) {
            cli_error(cmd, "cannot derive the control token's key (out of "
                      "memory?)");
            return -1;
        }
        return 0;
    }
    for (const char *p = cred; *p; p++)
        colons += *p == ':';
    if (colons == 1) {
        cli_error(cmd, "your credential is of an older slaq (UID:HEX, one "
                  "that never expired): run `slaq token --save` again on the "
                  "machine slaqd runs on");
        return -1;
    }
    if (colons != 3 || (size_t)(colon - cred) >= sizeof as ||
        sodium_hex2bin(key, LINK_KEY_BYTES, colon + 1, strlen(colon + 1),
                       NULL, &got, NULL) != 0 || got != LINK_KEY_BYTES ||
        strlen(colon + 1) != 2 * LINK_KEY_BYTES) {
        cli_error(cmd, "the user credential is not UID:EXPIRES:GENERATION:"
                  "HEX (64 hex digits), nor admin:TOKEN: run `slaq token "
                  "--save` on the machine slaqd runs on");
        return -1;
    }
    memcpy(as, cred, (size_t)(colon - cred));
    as[colon - cred] = '\0';
    if (link_init(l, LINK_SESSION, as) < 0) {
        cli_error(cmd, "the user credential's UID:EXPIRES:GENERATION is "
                  "malformed: run `slaq token --save` on slaqd's machine");
        return -1;
    }
    return 0;
}

/* Writes s and a newline, sealed on l once it is open. 0, or -1. */
static int send_line(int fd, sd_link *l, const char *s, size_t len)
{
    if (!l || l->state != LINK_OPEN)
        return write_all(fd, s, len) < 0 || write_all(fd, "\n", 1) < 0
               ? -1 : 0;
    char *sealed = malloc(LINK_SEALED_LEN(len) + 1);
    size_t n = sealed ? link_seal(l, s, len, sealed) : 0;
    int rc = n && write_all(fd, sealed, n) == 0 && write_all(fd, "\n", 1) == 0
             ? 0 : -1;
    free(sealed);
    return rc;
}

/*
 * The session's handshake on fd (docs/protocol.md, "Sealed sessions over
 * TCP"): sends the hello, checks slaqd's proof before anything of the
 * credential leaves, then sends this side's proof. 0 with l open, or -1
 * after printing why (slaqd refused the claim, or the server did not
 * prove it holds the credential's key).
 */
static int handshake(const char *cmd, const char *where, rpc_reader *r,
                     sd_link *l, const unsigned char key[LINK_KEY_BYTES])
{
    char out[LINK_MAX_HANDSHAKE], err[512], *line;
    size_t n;
    int k = link_hello(l, NULL, out, sizeof out);
    if (k < 0 || send_line(r->fd, l, out, (size_t)k) < 0) {
        cli_error(cmd, "cannot send to slaqd at %s: %s", where,
                  strerror(errno));
        return -1;
    }
    if (read_line(cmd, where, r, &line, &n) < 0)
        return -1;
    json_t *m = line[0] == '{' ? json_loadb(line, n, 0, NULL) : NULL;
    const char *type = json_string_value(json_object_get(m, "type"));
    if (type && !strcmp(type, "error")) { /* slaqd (or so it says) refused */
        cli_error(cmd, "slaqd at %s refused the session: %s", where,
                  rpc_safe(json_string_value(json_object_get(m,
                                                             "message"))));
        json_decref(m);
        return -1;
    }
    json_decref(m);
    k = link_on_challenge(l, key, line, n, out, sizeof out, err, sizeof err);
    if (k < 0) {
        cli_error(cmd, "the server at %s is not the slaqd of your "
                  "credential: %s; nothing of the credential or the request "
                  "was sent", where, err);
        return -1;
    }
    if (send_line(r->fd, NULL, out, (size_t)k) < 0) {
        cli_error(cmd, "cannot send to slaqd at %s: %s", where,
                  strerror(errno));
        return -1;
    }
    return 0;
}

/* A connected socket to slaqd (Unix, or TCP with its session open on l,
 * *sealed then 1), its address in where; -1 after printing why. */
static int rpc_connect(const char *cmd, const rpc_opts *o, char *where,
                       size_t len, rpc_reader *r, sd_link *l, int *sealed)
{
    const char *host = tcp_host(o);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    unsigned char key[LINK_KEY_BYTES];
    char tok[512];
    *sealed = 0;
    if (o->host && (o->socket || o->state_dir)) {
        cli_error(cmd, "--host names a slaqd over TCP, --%s a local one: "
                  "give one of them", o->socket ? "socket" : "state-dir");
        return -1;
    }
    if (host) {
        snprintf(where, len, "%s", host);
        int rc = user_token(cmd, tok, sizeof tok) < 0 ||
                 (r->fd = tcp_connect(cmd, host)) < 0 ||
                 session_cred(cmd, tok, l, key) < 0 ||
                 handshake(cmd, where, r, l, key) < 0 ? -1 : 0;
        sodium_memzero(tok, sizeof tok);
        sodium_memzero(key, sizeof key);
        *sealed = 1;
        return rc;
    }
    int found = socket_path(o, where, len);
    if (strlen(where) >= sizeof sa.sun_path) {
        cli_error(cmd, "socket path too long: %s", where);
        return -1;
    }
    strcpy(sa.sun_path, where);
    r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        cli_error(cmd, "slaqd is not running (cannot connect to %s: %s); "
                  "start it with 'slaqd', or point --socket / --state-dir"
                  " / --host / SLAQ_SOCKET at a running one", where,
                  strerror(errno));
        return -1;
    }
    return found ? socket_trusted(cmd, where, r->fd) : 0;
}

json_t *rpc_call(const char *cmd, const rpc_opts *o, json_t *req)
{
    char where[4096], *line = NULL, *text, *plain = NULL;
    rpc_reader r = {.fd = -1};
    sd_link l;
    json_t *reply = NULL;
    json_error_t e;
    int sealed;
    size_t n;
    memset(&l, 0, sizeof l);
    if (rpc_connect(cmd, o, where, sizeof where, &r, &l, &sealed) < 0)
        goto out;
    line = json_dumps(req, JSON_COMPACT);
    if (!line || send_line(r.fd, &l, line, strlen(line)) < 0) {
        cli_error(cmd, "cannot send to slaqd at %s: %s", where,
                  strerror(errno));
        goto out;
    }
    if (read_line(cmd, where, &r, &text, &n) < 0)
        goto out;
    /* In a session every line is sealed, but a refusal of the proof (a
     * wrong credential, a lock-out) comes in clear, before the link is. */
    if (sealed && text[0] != '{') {
        long k = (plain = malloc(n + 1)) ? link_open(&l, text, n, plain, n)
                                         : -1;
        if (k < 0) {
            cli_error(cmd, "slaqd's reply at %s does not open (altered on "
                      "the way, or not from the slaqd that proved itself)",
                      where);
            goto out;
        }
        text = plain;
        n = (size_t)k;
    }
    reply = json_loadb(text, n, 0, &e);
    if (!reply)
        cli_error(cmd, "unreadable reply from slaqd: %s", e.text);
out:
    link_wipe(&l);
    free(line);
    free(plain);
    free(r.buf);
    json_decref(req);
    if (r.fd >= 0)
        close(r.fd);
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
