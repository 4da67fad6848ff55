/*
 * fuzz_http.c — a libFuzzer harness for slaqd's HTTP request path: each
 * input is the bytes one client sends to slaqd's HTTP port (request line,
 * headers, perhaps a body), served by the daemon's own http.c through
 * libmicrohttpd, driven the way slaqd's loop drives it (MHD_run on its
 * epoll descriptor) until the server closes the connection: the Host
 * check, the routes (/api/status, /api/jobs?after=&limit=, /api/jobs/ID,
 * /api/jobs/ID/history?after=&limit=, /forecast, /api/timeline?since=,
 * /metrics, the dashboard's files) and their parameter parsing.
 *
 * The daemon holds a few jobs with reports (made once, through the
 * protocol path) so that job routes have something to show. Built by
 * `make fuzz`, run by tests/fuzz/test_fuzz.sh on tests/fuzz/corpus/http.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/users.h"
#include "fuzz_daemon.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sd_daemon D;
static char dir[64] = "/tmp/slaq-fuzz-http-XXXXXX";

static void cleanup(void)
{
    http_stop(&D);
    char p[128];
    snprintf(p, sizeof p, "%s/http.port", dir);
    unlink(p);
    rmdir(dir);
}

/* Two attached jobs with a few reports, straight into the daemon. */
static void add_jobs(void)
{
    sd_user me;
    user_self(&D, &me);
    for (int n = 0; n < 2; n++) {
        sd_job *j = job_attach(&D, n ? "second" : "first", 0, &me);
        if (!j)
            abort();
        for (int k = 0; k < 40; k++) {
            char line[128];
            snprintf(line, sizeof line, "{\"iter\":%d,\"loss\":%g,\"cpu_s\":"
                     "0.1,\"samples\":10}", k, 1.0 / (k + 1.0) + n);
            json_t *m = json_loads(line, 0, NULL);
            char err[256];
            job_report(&D, j, m, err, sizeof err);
            json_decref(m);
        }
    }
    store_flush(D.store);
    job_epoch(&D);
    job_epoch(&D);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char err[512] = "";
    fuzz_daemon_init(&D, dir, "fuzz_http");
    D.cfg.http = "127.0.0.1:0";
    if (http_start(&D, D.cfg.http, err, sizeof err) < 0) {
        fprintf(stderr, "fuzz_http: cannot set up slaqd: %s\n", err);
        exit(1);
    }
    atexit(cleanup);
    add_jobs();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)D.http_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* A connect to the loopback port has failed at once under this
     * rate (once, in a CI run that did not record errno; at thousands of
     * connections a second slaqd's side of each closed one waits in
     * TIME_WAIT). A server that stopped listening fails every try: try
     * again with a fresh socket for up to a second, letting MHD run, and
     * say why if it still fails. */
    int fd = -1, tries = 0;
    for (; tries < 50; tries++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            break;
        int e = errno;
        if (fd >= 0)
            close(fd);
        fd = -1;
        errno = e;
        http_run(&D);
        poll(NULL, 0, 20);
    }
    if (fd < 0) {
        /* Not an input's fault: said on stdout (libFuzzer may have closed
         * stderr), then stop. */
        printf("fuzz_http: cannot connect to slaqd's port after %d tries: "
               "%s\n", tries, strerror(errno));
        fflush(stdout);
        abort();
    }
    /* Closed with a reset, not into TIME_WAIT: at a thousand inputs a
     * second the ephemeral ports would run out within a minute. */
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    size_t off = 0;
    int closed = 0, idle = 0;
    char buf[65536];
    /* Until the server has read the input and closed, or sits waiting
     * for more (a partial request): then the client gives up. MHD's
     * epoll is edge-triggered, so its descriptor need not show ready
     * while it still has work: it is run again at once as long as
     * something moved, and a few times after; only then does the client
     * wait, a millisecond at a time (waiting 5 ms each time a round saw
     * nothing, and 20 ms before giving up on a partial request, kept the
     * harness asleep 97 % of the time). */
    for (int round = 0; round < 100000 && !closed; round++) {
        int moved = 0;
        if (off < size) {
            ssize_t n = write(fd, data + off, size - off);
            if (n > 0) {
                off += (size_t)n;
                moved = 1;
            } else if (n < 0 && errno != EAGAIN && errno != EINTR)
                off = size; /* the server closed: nothing more is read */
            if (off == size)
                shutdown(fd, SHUT_WR);
        }
        http_run(&D);
        for (;;) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n > 0) {
                moved = 1;
                continue;
            }
            if (n == 0 || (errno != EAGAIN && errno != EINTR))
                closed = 1;
            break;
        }
        if (closed)
            break;
        if (moved) {
            idle = 0;
            continue;
        }
        if (++idle <= 8)
            continue; /* MHD may have more to do on its next run */
        /* All sent (nothing left in the client's queue: on loopback,
         * in the server's) and 8 runs of MHD did nothing with it: it
         * waits for more of a request that will not come (on one edge it
         * read the request's bytes, and the end of the stream that came
         * with them raises no new one), as slaqd's own MHD would until
         * its header timeout; the client gives up. */
        int unsent = 1;
        if (off == size && (ioctl(fd, SIOCOUTQNSD, &unsent) < 0 ||
                            unsent == 0))
            break;
        struct pollfd p[2] = {{.fd = D.http_h.fd, .events = POLLIN},
                              {.fd = fd, .events = POLLIN}};
        if (poll(p, 2, 1) == 0 && idle >= 1000)
            break; /* a second without a byte moving */
    }
    close(fd);
    http_run(&D); /* lets MHD see the close */
    return 0;
}
