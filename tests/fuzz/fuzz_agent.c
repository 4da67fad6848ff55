/*
 * fuzz_agent.c — a libFuzzer harness for the agent protocol after the
 * seal: the lines a controller takes from an agent and the lines an agent
 * takes from its controller, each through the daemon's own code from the
 * socket on — conn_read, the line splitter and its limits, link_open
 * (every input line is sealed by the harness on a link it opened with the
 * real handshake, so it opens), the JSON reader, on_message's dispatch,
 * then ctl_message (register, report, info, started, start_failed,
 * exit, op_result, heartbeat) or agent_message (welcome, allocs, stop,
 * suspend, resume, error), and an epoch.
 *
 * The first byte of an input picks the side: even (e.g. 'N', a node), the
 * lines come from an agent and go to a controller; odd (e.g. 'C'), they
 * come from a controller and go to an agent;
 * the rest is lines, each sealed on its own. On the agent side a "start"
 * is not delivered (it would run the command it names: an input must not
 * run anything); every other message is. State carries over between
 * inputs like long-running slaqds' (nodes register, go away, jobs are
 * known) for at most AGENT_RESET_EVERY inputs, when both daemons are set
 * up afresh (fuzz_daemon.h), so libFuzzer's leak check is off as for the
 * other harnesses.
 *
 * Built with clang by `make fuzz` (tests/module.mk) with slaqd's sources,
 * their main() renamed; run by tests/fuzz/test_fuzz.sh on the seed corpus
 * in tests/fuzz/corpus/agent (seeds of every message kind of both sides).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/agent.h"
#include "daemon/agent_link.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/link.h"
#include "daemon/store.h"
#include "fuzz_daemon.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sd_daemon C, A; /* a controller; an agent */
static char cdir[64] = "/tmp/slaq-fuzz-ctl-XXXXXX";
static char adir[64] = "/tmp/slaq-fuzz-agent-XXXXXX";
static int ctl_port, up_lfd = -1; /* the controller's agent port; where
                                     the agent joins (the harness) */
static char join[64];
static const char token[] = "fuzz-agent-token-0123456789";

/* A failure of the harness itself, not of the daemon: said on stdout
 * too, since runs close stderr (-close_fd_mask=2). */
static void die(const char *what)
{
    int e = errno;
    fprintf(stderr, "fuzz_agent: %s: %s\n", what, strerror(e));
    printf("fuzz_agent: %s: %s\n", what, strerror(e));
    fflush(stdout);
    abort();
}

/* A TCP listener on 127.0.0.1 (port 0: the kernel's choice); its port. */
static int listen_any(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(fd, 8) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len))
        die("listen");
    *port = ntohs(sa.sin_port);
    return fd;
}

/* At exit: the daemons freed, and their state directories (what the
 * controller writes there: agents.port, nodes.json) removed. */
static void cleanup(void)
{
    static const char *const files[] = {"agents.port", "nodes.json"};
    char p[128];
    fuzz_daemon_free(&C);
    fuzz_daemon_free(&A);
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", cdir, files[i]);
        unlink(p);
    }
    rmdir(cdir);
    rmdir(adir);
}

/* The controller: its core with nodes and a pending queue, as slaqd
 * --agents sets it up (slaqd.c). */
static void setup_controller(void)
{
    C.cfg.agent_token = strdup(token); /* sd_link_key wipes and frees it */
    slaq_sched_free(C.sched);
    slaq_sched_config sc = C.cfg.sched;
    sc.nodes = 1;
    sc.queue = 1;
    C.sched = slaq_sched_new(&sc);
    if (!C.sched)
        die("slaq_sched_new");
    slaq_sched_set_node_cores(C.sched, 0, 0);
    C.cfg.agents = "127.0.0.1:0";
    if (ctl_listen(&C, C.cfg.agents) < 0)
        die("ctl_listen");
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (getsockname(C.agents_h.fd, (struct sockaddr *)&sa, &len))
        die("getsockname");
    ctl_port = ntohs(sa.sin_port);
}

/* The agent, joining the harness: node fz, with its key from the
 * controller's cluster key (setup_controller runs first). */
static void setup_agent(void)
{
    link_node_key(C.link_key, "fz", A.cfg.node_key);
    A.cfg.agent = 1;
    A.cfg.join = join;
    A.cfg.node_name = "fz";
    if (agent_start(&A) < 0)
        die("agent_start");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_daemon_init(&C, cdir, "fuzz_agent");
    setup_controller();
    int port;
    up_lfd = listen_any(&port); /* non-blocking: reset_both drains it */
    snprintf(join, sizeof join, "127.0.0.1:%d", port);
    fuzz_daemon_init(&A, adir, "fuzz_agent");
    setup_agent();
    atexit(cleanup);
    return 0;
}

/* Both daemons set up afresh (fuzz_daemon.h): the controller's nodes and
 * jobs do not pile up over a long run (node_find alone is linear in
 * them). The agent's connections to the harness that were never taken
 * are dropped first, so that the next one taken is its new one. */
/* Not every FUZZ_RESET_EVERY inputs as the other harnesses: each reset
 * derives the cluster key from the token again (Argon2 with 64 MB,
 * about 0.2 s of CPU), which at that rate made the harness 6 times
 * slower. */
#define AGENT_RESET_EVERY 4096

static void reset_both(void)
{
    fuzz_daemon_reset(&C, cdir, "fuzz_agent");
    setup_controller();
    fuzz_daemon_reset(&A, adir, "fuzz_agent");
    for (int fd; (fd = accept4(up_lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0;)
        close(fd);
    setup_agent();
}

/* One line from fd (waiting up to 2 s for each read), without its
 * newline, into buf; its length, or -1. Bytes after the line stay in rbuf
 * for the next call. */
static char rbuf[LINK_MAX_HANDSHAKE * 64];
static size_t rlen;

static long read_line(int fd, char *buf, size_t cap)
{
    for (;;) {
        char *nl = memchr(rbuf, '\n', rlen);
        if (nl) {
            size_t n = (size_t)(nl - rbuf);
            if (n >= cap)
                return -1;
            memcpy(buf, rbuf, n);
            buf[n] = 0;
            memmove(rbuf, nl + 1, rlen - n - 1);
            rlen -= n + 1;
            return (long)n;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (rlen == sizeof rbuf || poll(&p, 1, 2000) != 1)
            return -1;
        ssize_t r = read(fd, rbuf + rlen, sizeof rbuf - rlen);
        if (r <= 0)
            return -1;
        rlen += (size_t)r;
    }
}

static void write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the daemon closed it */
        s += n;
        len -= (size_t)n;
    }
}

/* A line and its newline in one write, then a wait (up to 2 s) until the
 * daemon's socket, peer, has it all to read: its next read takes the whole
 * line (never a part kept as a partial line), and a reset at the end
 * discards nothing unread. */
static void write_line(int fd, int peer, const char *s, size_t len)
{
    char *b = malloc(len + 1);
    if (!b)
        abort();
    memcpy(b, s, len);
    b[len] = '\n';
    write_all(fd, b, len + 1);
    free(b);
    for (int i = 0, q = 0; peer >= 0 && i < 2000; i++) {
        struct pollfd p = {.fd = peer, .events = POLLIN};
        if (ioctl(peer, FIONREAD, &q) < 0 || (size_t)q >= len + 1 ||
            poll(&p, 1, 1) < 0)
            break;
    }
}

/* Lets the daemon d read its connection c once input is there (up to
 * 2 s: a line just written may not be readable at once on a busy
 * machine). */
static void drain_ready(sd_daemon *d, sd_conn *c)
{
    struct pollfd p = {.fd = c->h.fd, .events = POLLIN};
    if (c->h.fd >= 0)
        poll(&p, 1, 2000);
    conn_drain(d, c);
}

/* Each line leaves at once (without it, Nagle's algorithm held a line
 * until the daemon's delayed acknowledgement of the one before: 40 ms). */
static void no_delay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* A socket that is closed with a reset, leaving no TIME_WAIT behind. The
 * side that closes first keeps the connection's ports in TIME_WAIT for a
 * minute; at hundreds of inputs a second that used up the ephemeral ports
 * (connect failed after 42,708 to 147,603 inputs): the harness's ends and
 * the daemons' ends of every connection are set so, whichever closes
 * first. How a socket is closed is not what is fuzzed. */
static void no_time_wait(int fd)
{
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
}

static void close_reset(int fd)
{
    no_time_wait(fd);
    close(fd);
}

/* Reads and discards what the daemon sent, without blocking. */
static void discard_replies(int fd)
{
    char buf[65536];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
        ;
}

/* Seals each line of data on l and hands it to the daemon d through fd,
 * c its end; skip_start: lines whose type is "start" are not sent. */
static void feed(sd_daemon *d, sd_conn **c, sd_link *l, int fd,
                 const uint8_t *data, size_t size, int skip_start)
{
    const char *p = (const char *)data, *end = p + size;
    while (p < end && *c && (*c)->h.fd >= 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > SD_MAX_REQUEST)
            n = SD_MAX_REQUEST;
        json_t *m = skip_start ? json_loadb(p, n, 0, NULL) : NULL;
        const char *type = json_string_value(json_object_get(m, "type"));
        int skip = type && !strcmp(type, "start");
        json_decref(m);
        if (!skip) {
            char *sealed = malloc(LINK_SEALED_LEN(n) + 1);
            size_t sn = sealed ? link_seal(l, p, n, sealed) : 0;
            if (sn)
                write_line(fd, (*c)->h.fd, sealed, sn);
            free(sealed);
            conn_drain(d, *c);
            discard_replies(fd);
        }
        p += n + (nl ? 1 : 0);
    }
}

/* connect(), finishing a connect a signal interrupted (libFuzzer's
 * timers interrupt system calls): the connection then completes in the
 * background, and the socket says how it ended once it is writable. */
static int connect_through_signals(int fd, const struct sockaddr_in *sa)
{
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
        return 0;
    if (errno != EINTR)
        return -1;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n;
    do
        n = poll(&p, 1, 5000);
    while (n < 0 && errno == EINTR);
    int e = 0;
    socklen_t len = sizeof e;
    if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
        return -1;
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

/* The harness as an agent: connects to the controller's agent port,
 * proves node n1's key, sends the input's lines sealed. */
static void as_agent(const uint8_t *data, size_t size)
{
    char line[LINK_MAX_HANDSHAKE], out[LINK_MAX_HANDSHAKE], err[256];
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)ctl_port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = -1;
    /* Connections the daemon closed first wait in TIME_WAIT; on a busy
     * machine (other tests' connections too) the ephemeral ports can run
     * out for a moment: wait for some to come free (up to 30 s). */
    for (int i = 0; fd < 0 && i < 600; i++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect_through_signals(fd, &sa) < 0) {
            int e = errno;
            close(fd);
            fd = -1;
            if (e != EADDRNOTAVAIL && e != EAGAIN)
                break;
            usleep(50000);
        }
    }
    if (fd < 0)
        die("connect to the controller");
    no_delay(fd);
    conn_accept(&C, &C.agents_h, 0);
    sd_conn *c = C.conns; /* the newest is first */
    if (!c || c->h.fd < 0 || !c->agent)
        abort();
    no_time_wait(c->h.fd);
    sd_link l = {0};
    unsigned char key[LINK_KEY_BYTES];
    rlen = 0;
    link_node_key(C.link_key, "n1", key);
    int n = link_hello(&l, "n1", out, sizeof out);
    if (n < 0)
        abort();
    write_line(fd, c->h.fd, out, (size_t)n);
    drain_ready(&C, c);
    if (read_line(fd, line, sizeof line) < 0 ||
        (n = link_on_challenge(&l, key, line, strlen(line), out,
                               sizeof out, err, sizeof err)) < 0) {
        fprintf(stderr, "fuzz_agent: the controller's challenge: %s\n", err);
        abort();
    }
    write_line(fd, c->h.fd, out, (size_t)n);
    drain_ready(&C, c);
    if (c->h.fd < 0 || c->link->state != LINK_OPEN)
        abort(); /* the handshake must open the link */
    feed(&C, &c, &l, fd, data, size, 0);
    close_reset(fd); /* every line was read already (feed) */
    while (c->h.fd >= 0) {
        if (c->closing) {
            conn_close(&C, c);
            break;
        }
        conn_drain(&C, c); /* the reset: closed there */
    }
    conn_reap(&C);
    link_wipe(&l);
    store_flush(C.store);
    job_epoch(&C);
    job_tick(&C);
    conn_reap(&C);
}

/* The harness as the agent's controller: takes its connection, answers
 * its hello, checks its proof, sends the input's lines sealed. */
static void as_controller(const uint8_t *data, size_t size)
{
    char line[LINK_MAX_HANDSHAKE], out[LINK_MAX_HANDSHAKE], err[256];
    if (!A.up) { /* the last input's connection is gone: dial again now */
        A.up_retry = 0;
        agent_tick(&A);
    }
    sd_conn *c = A.up;
    if (!c)
        abort();
    struct pollfd p = {.fd = up_lfd, .events = POLLIN};
    poll(&p, 1, 2000);
    int fd = accept4(up_lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        die("accept the agent");
    if (c->h.fd >= 0)
        no_time_wait(c->h.fd);
    no_delay(fd);
    sd_link l = {0};
    rlen = 0;
    int n;
    if (read_line(fd, line, sizeof line) < 0 ||
        (n = link_on_hello(&l, C.link_key, line, strlen(line), out,
                           sizeof out, err, sizeof err)) < 0) {
        fprintf(stderr, "fuzz_agent: the agent's hello: %s\n", err);
        abort();
    }
    write_line(fd, c->h.fd, out, (size_t)n);
    drain_ready(&A, c);
    if (read_line(fd, line, sizeof line) < 0 ||
        link_on_proof(&l, line, strlen(line), err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_agent: the agent's proof: %s\n", err);
        abort();
    }
    /* Its register follows, sealed: the harness need not read it. */
    feed(&A, &A.up, &l, fd, data, size, 1);
    close_reset(fd);
    while (A.up && A.up->h.fd >= 0) { /* it reads the end of the stream */
        if (A.up->closing) {
            conn_close(&A, A.up);
            break;
        }
        conn_drain(&A, A.up);
    }
    conn_reap(&A);
    link_wipe(&l);
    store_flush(A.store);
    job_tick(&A);
    conn_reap(&A);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 64 * 1024) /* a sealed line within a socket buffer */
        return 0;
    static unsigned inputs;
    if (++inputs % AGENT_RESET_EVERY == 0)
        reset_both();
    if (data[0] & 1)
        as_controller(data + 1, size - 1);
    else
        as_agent(data + 1, size - 1);
    return 0;
}
