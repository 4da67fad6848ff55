/*
 * agentgen.c — slaq-agentgen, a load generator that plays node agents
 * against a real slaqd controller (slaqd --agents): N agents connect over
 * TCP, open the agent link (src/daemon/link.h: the handshake, then every
 * line sealed, as slaqd --agent does) and register, M jobs per agent are submitted through the
 * controller's socket (it places them; each "start" is answered with
 * "started" and a made-up pid, nothing is run), and then every agent
 * relays reports for its jobs at a total rate, heartbeats, and reads the
 * controller's allocations. bench/daemon/agents.sh drives it.
 *
 *   slaq-agentgen --join 127.0.0.1:PORT --token-file F --socket CTL.sock \
 *                 --agents 100 --jobs 50 --seconds 10 --rate 0
 *
 * Prints one JSON object: agents, jobs, jobs started, reports sent and
 * their rate, and the seconds it took to place and start every job.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/link.h"

typedef struct agent {
    sd_link link;
    long idx;
    int fd;
    char *out;
    size_t olen, ocap, ooff;
    char in[1 << 16];
    size_t ilen;
    long *jobs;           /* job ids started here */
    size_t njobs, capjobs;
    unsigned long long *iter;
    int welcomed;
} agent;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "slaq-agentgen: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void queue(agent *a, const char *s, size_t n)
{
    if (a->olen + n > a->ocap) {
        a->ocap = (a->olen + n) * 2;
        a->out = realloc(a->out, a->ocap);
        if (!a->out)
            die("out of memory");
    }
    memcpy(a->out + a->olen, s, n);
    a->olen += n;
}

static int flush_out(agent *a)
{
    while (a->ooff < a->olen) {
        ssize_t w = write(a->fd, a->out + a->ooff, a->olen - a->ooff);
        if (w < 0) {
            if (errno == EAGAIN)
                return 0;
            return -1;
        }
        a->ooff += (size_t)w;
    }
    a->ooff = a->olen = 0;
    return 0;
}

static long started_total;
/* The cluster key: this generator holds the cluster secret and derives
 * each played node's key from it, as the controller does. */
static unsigned char cluster_key[LINK_KEY_BYTES];
static double agent_cores;

/* Queues one line: sealed once the link is open, as it is before (the
 * hello). */
static void send_line(agent *a, const char *s, size_t n)
{
    if (a->link.state != LINK_OPEN) {
        queue(a, s, n);
        queue(a, "\n", 1);
        return;
    }
    char *sealed = malloc(LINK_SEALED_LEN(n) + 1);
    if (!sealed)
        die("out of memory");
    size_t k = link_seal(&a->link, s, n, sealed);
    if (!k)
        die("out of memory");
    queue(a, sealed, k);
    queue(a, "\n", 1);
    free(sealed);
}

/* The controller's challenge: our proof, then the register. */
static void on_challenge(agent *a, const char *line, size_t n)
{
    char out[LINK_MAX_HANDSHAKE], err[300];
    unsigned char key[LINK_KEY_BYTES];
    link_node_key(cluster_key, a->link.node, key);
    int k = link_on_challenge(&a->link, key, line, n, out, sizeof out,
                              err, sizeof err);
    if (k < 0) {
        fprintf(stderr, "slaq-agentgen: agent %ld: controller: %s\n",
                a->idx, err);
        exit(1);
    }
    queue(a, out, (size_t)k); /* in clear: the handshake's last line */
    queue(a, "\n", 1);
    char buf[256];
    k = snprintf(buf, sizeof buf, "{\"type\":\"register\",\"node\":"
                 "\"gen-%ld\",\"cores\":%g,\"enforce\":\"none\","
                 "\"jobs\":[]}", a->idx, agent_cores);
    send_line(a, buf, (size_t)k);
}

static void on_line(agent *a, const char *line, size_t n)
{
    json_t *m = json_loadb(line, n, 0, NULL);
    const char *type = json_string_value(json_object_get(m, "type"));
    if (type && !strcmp(type, "welcome")) {
        a->welcomed = 1;
    } else if (type && !strcmp(type, "start")) {
        long id = (long)json_integer_value(json_object_get(m, "job"));
        if (a->njobs == a->capjobs) {
            a->capjobs = a->capjobs ? a->capjobs * 2 : 64;
            a->jobs = realloc(a->jobs, a->capjobs * sizeof *a->jobs);
            a->iter = realloc(a->iter, a->capjobs * sizeof *a->iter);
            if (!a->jobs || !a->iter)
                die("out of memory");
        }
        a->iter[a->njobs] = 0;
        a->jobs[a->njobs++] = id;
        started_total++;
        char buf[128];
        int k = snprintf(buf, sizeof buf, "{\"type\":\"started\",\"job\":%ld,"
                         "\"pid\":%ld}", id, 100000 + id);
        send_line(a, buf, (size_t)k);
    } else if (type && !strcmp(type, "error")) {
        fprintf(stderr, "slaq-agentgen: controller: %.*s\n", (int)n, line);
    }
    json_decref(m);
}

/* Reads what the controller sent: returns -1 when it closed. */
static int read_in(agent *a)
{
    for (;;) {
        ssize_t r = read(a->fd, a->in + a->ilen, sizeof a->in - a->ilen);
        if (r == 0)
            return -1;
        if (r < 0)
            return errno == EAGAIN ? 0 : -1;
        a->ilen += (size_t)r;
        size_t pos = 0;
        char *nl;
        while ((nl = memchr(a->in + pos, '\n', a->ilen - pos))) {
            size_t n = (size_t)(nl - (a->in + pos));
            char *line = a->in + pos;
            pos += n + 1;
            if (n == 0)
                continue;
            if (a->link.state != LINK_OPEN) {
                on_challenge(a, line, n);
                continue;
            }
            static char plain[sizeof a->in];
            long k = link_open(&a->link, line, n, plain, sizeof plain);
            if (k < 0) {
                fprintf(stderr, "slaq-agentgen: agent %ld: a line from the "
                        "controller does not open\n", a->idx);
                exit(1);
            }
            /* allocations need no answer: skip their parse */
            if (memcmp(plain, "{\"type\": \"allocs\"", 17) &&
                memcmp(plain, "{\"type\":\"allocs\"", 16))
                on_line(a, plain, (size_t)k);
        }
        memmove(a->in, a->in + pos, a->ilen - pos);
        a->ilen -= pos;
        if (a->ilen == sizeof a->in) /* a line longer than the buffer */
            a->ilen = 0;
    }
}

static int dial(const char *join)
{
    char host[256];
    const char *colon = strrchr(join, ':');
    if (!colon || (size_t)(colon - join) >= sizeof host) {
        fprintf(stderr, "slaq-agentgen: --join wants IPV4:PORT\n");
        exit(2);
    }
    memcpy(host, join, (size_t)(colon - join));
    host[colon - join] = 0;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "slaq-agentgen: --join wants IPV4:PORT\n");
        exit(2);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

static void pump(agent *ag, long n, int ms)
{
    struct pollfd *p = calloc((size_t)n, sizeof *p);
    for (long i = 0; i < n; i++) {
        p[i].fd = ag[i].fd;
        p[i].events = POLLIN | (ag[i].olen > ag[i].ooff ? POLLOUT : 0);
    }
    poll(p, (nfds_t)n, ms);
    for (long i = 0; i < n; i++) {
        if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
            read_in(&ag[i]) < 0) {
            fprintf(stderr, "slaq-agentgen: agent %ld: the controller closed "
                    "the connection\n", i);
            exit(1);
        }
        if (flush_out(&ag[i]) < 0)
            die("write");
    }
    free(p);
}

/* Keeps the agents alive while the generator is busy elsewhere:
 * heartbeats every 0.1 s, starts answered. */
static void service(agent *ag, long n)
{
    static double last;
    double now = mono();
    if (now - last >= 0.1) {
        last = now;
        for (long i = 0; i < n; i++)
            send_line(&ag[i], "{\"type\":\"heartbeat\"}", 20);
    }
    pump(ag, n, 0);
}

/* Submits njobs jobs over the controller's Unix socket, pipelined. */
static void submit_all(const char *sock, long njobs, agent *ag, long n)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
        die(sock);
    FILE *in = fdopen(dup(fd), "r");
    static const char req[] = "{\"type\":\"submit\",\"cmd\":[\"true\"],"
                              "\"cwd\":\"/\",\"env\":[],\"name\":\"gen\"}\n";
    long sent = 0, got = 0;
    char line[4096];
    while (got < njobs) {
        while (sent < njobs && sent - got < 64) {
            if (write(fd, req, sizeof req - 1) != (ssize_t)sizeof req - 1)
                die("submit");
            sent++;
        }
        if (!fgets(line, sizeof line, in))
            die("submit reply");
        if (got % 64 == 0)
            service(ag, n);
        if (!strstr(line, "\"ok\": true") && !strstr(line, "\"ok\":true")) {
            fprintf(stderr, "slaq-agentgen: submit refused: %s", line);
            exit(1);
        }
        got++;
    }
    fclose(in);
    close(fd);
}

int main(int argc, char **argv)
{
    const char *join = NULL, *token_file = NULL, *sock = NULL;
    long nagents = 100, perjob = 50;
    double seconds = 10, rate = 0, cores = 64;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--join") && v) join = argv[++i];
        else if (!strcmp(argv[i], "--token-file") && v) token_file = argv[++i];
        else if (!strcmp(argv[i], "--socket") && v) sock = argv[++i];
        else if (!strcmp(argv[i], "--agents") && v) nagents = atol(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && v) perjob = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && v) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rate") && v) rate = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cores") && v) cores = atof(argv[++i]);
        else {
            FILE *f = strcmp(argv[i], "--help") ? stderr : stdout;
            fprintf(f, "usage: slaq-agentgen --join IPV4:PORT --token-file F "
                    "--socket CONTROLLER.sock\n"
                    "         [--agents N] [--jobs PER_AGENT] [--cores C] "
                    "[--seconds S] [--rate R]\n"
                    "  --agents N    agents played (default 100)\n"
                    "  --jobs M      jobs per agent (default 50)\n"
                    "  --cores C     each agent's cores (default 64)\n"
                    "  --seconds S   how long to report (default 10)\n"
                    "  --rate R      total reports per second (0: as fast as "
                    "possible)\n");
            return f == stdout ? 0 : 2;
        }
    }
    if (!join || !token_file || !sock || nagents < 1 || perjob < 1) {
        fprintf(stderr, "slaq-agentgen: --join, --token-file and --socket "
                        "are needed (--help)\n");
        return 2;
    }
    char token[512] = "";
    FILE *tf = fopen(token_file, "r");
    if (!tf || !fgets(token, sizeof token, tf))
        die(token_file);
    fclose(tf);
    token[strcspn(token, "\r\n")] = 0;

    if (link_key_derive(token, cluster_key) < 0) {
        fprintf(stderr, "slaq-agentgen: cannot derive the link key\n");
        return 1;
    }
    agent_cores = cores;
    agent *ag = calloc((size_t)nagents, sizeof *ag);
    for (long i = 0; i < nagents; i++) {
        ag[i].fd = dial(join);
        ag[i].idx = i;
        char buf[LINK_MAX_HANDSHAKE], name[32];
        snprintf(name, sizeof name, "gen-%ld", i);
        int k = link_hello(&ag[i].link, name, buf, sizeof buf);
        if (k < 0)
            die("hello");
        send_line(&ag[i], buf, (size_t)k);
    }
    for (double until = mono() + 10; mono() < until;) {
        pump(ag, nagents, 10);
        long w = 0;
        for (long i = 0; i < nagents; i++)
            w += ag[i].welcomed;
        if (w == nagents)
            break;
    }
    double t0 = mono();
    long total = nagents * perjob;
    submit_all(sock, total, ag, nagents);
    while (started_total < total && mono() < t0 + 120) {
        service(ag, nagents);
        pump(ag, nagents, 10);
    }
    double place_s = mono() - t0;

    /* Reports: round-robin over each agent's jobs, in batches. */
    unsigned long long sent = 0;
    double start = mono(), last_beat = 0;
    while (mono() - start < seconds) {
        double now = mono();
        double allowed = rate > 0 ? rate * (now - start) : 1e18;
        int beat = now - last_beat >= 0.1;
        if (beat)
            last_beat = now;
        for (long i = 0; i < nagents; i++) {
            agent *a = &ag[i];
            if (beat)
                send_line(a, "{\"type\":\"heartbeat\"}", 20);
            if (a->olen - a->ooff > (1 << 20))
                continue; /* the controller is behind: wait for it */
            for (size_t k = 0; k < a->njobs && (double)sent < allowed; k++) {
                char buf[192];
                unsigned long long it = ++a->iter[k];
                int n = snprintf(buf, sizeof buf, "{\"type\":\"report\","
                                 "\"job\":%ld,\"iter\":%llu,\"loss\":%.6g,"
                                 "\"cpu_s\":0.01,\"samples\":100}",
                                 a->jobs[k], it, 1.0 / (double)it);
                send_line(a, buf, (size_t)n);
                sent++;
            }
        }
        pump(ag, nagents, rate > 0 ? 1 : 0);
    }
    double took = mono() - start;
    /* Let the output drain (heartbeating: the controller may still be
     * reading the backlog). */
    for (double until = mono() + 5; mono() < until;) {
        service(ag, nagents);
        int left = 0;
        for (long i = 0; i < nagents; i++)
            left |= ag[i].olen > ag[i].ooff;
        if (!left)
            break;
        pump(ag, nagents, 10);
    }
    printf("{\"agents\": %ld, \"jobs\": %ld, \"jobs_started\": %ld, "
           "\"place_start_s\": %.3f, \"seconds\": %.3f, \"reports_sent\": "
           "%llu, \"reports_per_s_sent\": %.0f}\n", nagents, total,
           started_total, place_s, took, sent, (double)sent / took);
    for (long i = 0; i < nagents; i++) {
        close(ag[i].fd);
        free(ag[i].out);
        free(ag[i].jobs);
        free(ag[i].iter);
    }
    free(ag);
    return 0;
}
