/*
 * fuzz_protocol.c — a libFuzzer harness for slaqd's connection path: each
 * input is everything one peer sends on slaqd's Unix socket, and it goes
 * through the daemon's own code — conn_accept, the line splitter and its
 * limits, the JSON reader, on_message's dispatch (hello, report, info, bye,
 * ping, every read-only request of api.c: status, ls, show, logs, policy),
 * job_report into the scheduler and SQLite (in memory), acks — then the
 * peer hangs up and slaqd runs an epoch (the predictor fits what the input
 * reported).
 *
 * The peer may not control (submit, cancel, policy NAME are refused with
 * `forbidden`), so an input never starts a process. State carries over
 * between inputs like a long-running slaqd's (jobs attach, end, expire),
 * for at most FUZZ_RESET_EVERY inputs: then the daemon is set up afresh
 * (fuzz_daemon_reset), so that it does not grow over a long run.
 *
 * Built with clang by `make fuzz` (tests/module.mk) with slaqd's sources,
 * their main() renamed; run by tests/fuzz/test_fuzz.sh on the seed corpus
 * in tests/fuzz/corpus/protocol.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "fuzz_daemon.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sd_daemon D;
static char dir[64] = "/tmp/slaq-fuzz-XXXXXX";
static char sock[128];

static void cleanup(void)
{
    fuzz_daemon_free(&D);
    unlink(sock);
    rmdir(dir);
}

static void listen_sock(void)
{
    D.cfg.socket_path = sock;
    if (conn_listen_unix(&D, sock) < 0) {
        fprintf(stderr, "fuzz_protocol: cannot listen on %s\n", sock);
        exit(1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_daemon_init(&D, dir, "fuzz_protocol");
    snprintf(sock, sizeof sock, "%s/slaq.sock", dir);
    listen_sock();
    atexit(cleanup);
    return 0;
}

/* Reads and discards what slaqd answered, without blocking. */
static void discard_replies(int fd)
{
    char buf[65536];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 128 * 1024) /* within a socket's buffer: no deadlock */
        return 0;
    static unsigned inputs;
    if (++inputs % FUZZ_RESET_EVERY == 0) { /* bounded state (fuzz_daemon.h) */
        fuzz_daemon_reset(&D, dir, "fuzz_protocol");
        listen_sock();
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("fuzz_protocol: connect");
        abort();
    }
    conn_accept(&D, &D.listen_h, 0);
    sd_conn *c = D.conns; /* the newest is first */
    if (!c || c->h.fd < 0)
        abort();
    c->may_control = 0; /* never submit: an input must not run commands */
    fcntl(fd, F_SETFL, O_NONBLOCK);
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n > 0)
            off += (size_t)n;
        else if (n < 0 && errno != EAGAIN && errno != EINTR)
            break; /* slaqd closed it (a line too long, say) */
        if (c->h.fd >= 0)
            conn_drain(&D, c);
        discard_replies(fd);
        if (c->h.fd < 0)
            break;
    }
    shutdown(fd, SHUT_WR);
    while (c->h.fd >= 0) {
        if (c->closing) { /* its reply is queued; nothing more is read */
            conn_close(&D, c);
            break;
        }
        conn_drain(&D, c); /* up to the end of input: closed there */
        discard_replies(fd);
    }
    close(fd);
    conn_reap(&D);
    if (store_flush(D.store) == 0)
        conn_send_acks(&D);
    job_epoch(&D);
    job_tick(&D);
    conn_reap(&D);
    return 0;
}
