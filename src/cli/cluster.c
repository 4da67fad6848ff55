/*
 * cluster.c — `slaq cluster up --slurm | down | status`: a slaq cluster in a
 * Slurm allocation (docs/cluster.md).
 *
 * `up` writes the batch script (contrib/slurm/slaq-cluster.sbatch, built
 * into this program) into the cluster directory, submits it with sbatch,
 * and waits until the controller has published its address and every
 * node's agent has registered (the controller's STATE/nodes.json). The
 * directory must be on a file system every node sees. `down` cancels the
 * allocation (scancel: the agents end their jobs, then themselves) and
 * waits until Slurm has let it go. `node-key` issues a node's key from the
 * cluster secret (link.h; the batch script issues one per node it starts
 * with it, and an administrator one for an agent started by hand).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <sodium.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/link.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: slaq cluster up --slurm --nodes N [--time T] [OPTIONS]\n"
        "                       [-- SBATCH-OPTIONS...]\n"
        "       slaq cluster down [--dir DIR]\n"
        "       slaq cluster status [--dir DIR]\n"
        "       slaq cluster env [--dir DIR]\n"
        "       slaq cluster node-key [--dir DIR | --secret-file FILE]\n"
        "                             [--out FILE] NODE\n\n"
        "up: submits a Slurm allocation of N nodes whose batch script starts\n"
        "slaq's controller on the first node and one node agent per node\n"
        "(srun), waits until every agent has joined, and prints the\n"
        "controller's address. down: ends the allocation (scancel); the\n"
        "agents end their jobs first. status: the allocation and its nodes.\n"
        "env: the line that points the slaq command at the cluster's\n"
        "controller, export SLAQ_SOCKET=DIR/slaq.sock (eval \"$(slaq cluster\n"
        "env --dir DIR)\").\n"
        "node-key: node NODE's key, derived from the cluster secret (the\n"
        "controller's --agent-token-file), as NODE:KEY: the agent of NODE\n"
        "alone gets it (slaqd --agent --node-key-file FILE) and can register\n"
        "as NODE only; `up` issues one per node.\n\n"
        "  --slurm         use Slurm (the only backend)\n"
        "  --nodes N       nodes to allocate (sbatch -N)\n"
        "  --time T        the allocation's time limit (sbatch --time)\n"
        "  --dir DIR       the cluster's directory, on a file system every\n"
        "                  node sees (default ./slaq-cluster)\n"
        "  --epoch S       the controller's epoch in seconds (default 1)\n"
        "  --wait S        seconds to wait for the agents (default 120)\n"
        "  --secret-file FILE  node-key: the cluster secret (default\n"
        "                  DIR/agent.token)\n"
        "  --out FILE      node-key: write the key there, mode 0600\n"
        "                  (default: print it)\n"
        "  -h, --help      this help\n\n"
        "Options after -- go to sbatch as they are (--partition, --account,\n"
        "--cpus-per-task ...). Environment passed to the batch script:\n"
        "SLAQ_CONTROLLER_HOST, SLAQ_CONTROLLER_OPTS, SLAQ_AGENT_CORES,\n"
        "SLAQ_AGENT_ENFORCE, SLAQ_AGENT_SHARE, SLAQ_AGENT_RETRIES (an agent\n"
        "that dies is started again as a new step on its node, at most this\n"
        "many times in a row, default 5; see\n"
        "contrib/slurm/slaq-cluster.sbatch). Jobs: `slaq submit` on the\n"
        "controller's node, with SLAQ_SOCKET set as `env` prints it.\n");
}

/* Runs argv, its stdout into out (NUL-ended, truncated to len); returns
 * its exit status, or -1 if it could not run (errno set). */
static int run_capture(char *const argv[], char *out, size_t len)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc) {
        close(pfd[0]);
        errno = rc;
        return -1;
    }
    size_t n = 0;
    ssize_t r;
    char sink[512];
    while ((r = read(pfd[0], n + 1 < len ? out + n : sink,
                     n + 1 < len ? len - 1 - n : sizeof sink)) > 0 ||
           (r < 0 && errno == EINTR))
        if (r > 0 && n + 1 < len)
            n += (size_t)r;
    out[n] = 0;
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The first line of a small file, or "" (NUL-ended, newline removed). */
static void read_line(const char *path, char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(out, (int)len, f))
        out[0] = 0;
    fclose(f);
    out[strcspn(out, "\r\n")] = 0;
}

/* Slurm's state of job id ("" when Slurm no longer lists it); -1 after
 * an error message when squeue cannot tell (Slurm unreachable). */
static int job_state(const char *id, char *out, size_t len)
{
    char *argv[] = {"squeue", "-h", "-j", (char *)id, "-o", "%T", NULL};
    int rc = run_capture(argv, out, len);
    out[strcspn(out, "\r\n")] = 0;
    if (rc == 0)
        return 0;
    out[0] = 0;
    /* squeue refuses a job id it has forgotten: that job has ended. */
    char *chk[] = {"squeue", "-h", "-o", "%A", NULL};
    char sink[64];
    if (run_capture(chk, sink, sizeof sink) == 0)
        return 0;
    cli_error("cluster", "squeue failed (%s): is Slurm reachable, and "
              "SLURM_CONF set?", rc < 0 ? strerror(errno) : "see above");
    return -1;
}

static int live_state(const char *st)
{
    return *st && strcmp(st, "COMPLETED") && strcmp(st, "CANCELLED") &&
           strcmp(st, "FAILED") && strcmp(st, "TIMEOUT") &&
           strcmp(st, "NODE_FAIL") && strcmp(st, "OUT_OF_MEMORY") &&
           strcmp(st, "BOOT_FAIL") && strcmp(st, "DEADLINE") &&
           strcmp(st, "PREEMPTED");
}

/* Nodes up in the controller's STATE/nodes.json. */
static int nodes_up(const char *dir, json_t **names)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/controller/nodes.json", dir);
    json_t *o = json_load_file(path, 0, NULL);
    int n = 0;
    if (names)
        *names = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(o, "nodes"), i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "state")) ?: "",
                    "up")) {
            n++;
            if (names)
                json_array_append(*names, json_object_get(e, "name"));
        }
    }
    json_decref(o);
    return n;
}

/* slaqd next to this slaq (the build tree's or the installed one), else
 * the PATH's. */
static void slaqd_path(char *out, size_t len)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash) {
        *slash = 0;
        snprintf(out, len, "%s/slaqd", self);
        if (access(out, X_OK) == 0)
            return;
    }
    snprintf(out, len, "slaqd");
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    return close(fd);
}

static int cluster_up(const char *dir, long nodes, const char *time_limit,
                      double epoch, double wait_s, char **extra, int nextra)
{
    char path[4200], buf[4096], id[64], st[64];
    snprintf(path, sizeof path, "%s/jobid", dir);
    read_line(path, id, sizeof id);
    if (*id) {
        if (job_state(id, st, sizeof st) < 0)
            return EXIT_RUNTIME;
        if (live_state(st)) {
            cli_error("cluster", "a cluster is already up in %s (Slurm job "
                      "%s, %s); `slaq cluster down --dir %s` ends it", dir, id,
                      st, dir);
            return EXIT_RUNTIME;
        }
    }
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        cli_error("cluster", "cannot create %s: %s", dir, strerror(errno));
        return EXIT_RUNTIME;
    }
    char *abs = realpath(dir, NULL);
    if (!abs) {
        cli_error("cluster", "%s: %s", dir, strerror(errno));
        return EXIT_RUNTIME;
    }
    char script[4200], out[4200], slaqd[4200], eps[32];
    snprintf(script, sizeof script, "%s/slaq-cluster.sbatch", abs);
    snprintf(out, sizeof out, "-o%s/slurm-%%j.out", abs);
    if (write_file(script, slaq_cluster_sbatch, 0700) < 0) {
        cli_error("cluster", "%s: %s", script, strerror(errno));
        free(abs);
        return EXIT_RUNTIME;
    }
    snprintf(path, sizeof path, "%s/controller.addr", abs);
    unlink(path);
    snprintf(path, sizeof path, "%s/controller/nodes.json", abs);
    unlink(path);
    slaqd_path(slaqd, sizeof slaqd);
    snprintf(eps, sizeof eps, "%g", epoch);
    setenv("SLAQ_CLUSTER_DIR", abs, 1);
    setenv("SLAQD", slaqd, 1);
    /* The batch script issues each node's key with this program. */
    char self[4096];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sn > 0) {
        self[sn] = 0;
        setenv("SLAQ", self, 1);
    }
    setenv("SLAQ_EPOCH", eps, 1);

    char nn[32], tl[300];
    snprintf(nn, sizeof nn, "-N%ld", nodes);
    char **argv = calloc((size_t)nextra + 16, sizeof *argv);
    int k = 0;
    argv[k++] = "sbatch";
    argv[k++] = "--parsable";
    argv[k++] = nn;
    argv[k++] = "--ntasks-per-node=1";
    argv[k++] = out;
    argv[k++] = "-Jslaq-cluster";
    if (time_limit) {
        snprintf(tl, sizeof tl, "--time=%s", time_limit);
        argv[k++] = tl;
    }
    for (int i = 0; i < nextra; i++)
        argv[k++] = extra[i];
    argv[k++] = script;
    int rc = run_capture(argv, buf, sizeof buf);
    free(argv);
    if (rc != 0) {
        if (rc < 0)
            cli_error("cluster", "cannot run sbatch: %s (is Slurm installed, "
                      "and SLURM_CONF set?)", strerror(errno));
        else
            cli_error("cluster", "sbatch failed (exit status %d)", rc);
        free(abs);
        return EXIT_RUNTIME;
    }
    buf[strcspn(buf, ";\r\n")] = 0;
    if (!*buf || strlen(buf) >= sizeof id) {
        cli_error("cluster", "sbatch printed no job id");
        free(abs);
        return EXIT_RUNTIME;
    }
    memcpy(id, buf, strlen(buf) + 1);
    snprintf(path, sizeof path, "%s/jobid", abs);
    snprintf(buf, sizeof buf, "%s\n", id);
    write_file(path, buf, 0600);
    fprintf(stderr, "slaq cluster: Slurm job %s submitted; waiting for %ld "
            "agents\n", id, nodes);

    double until = mono() + wait_s;
    char addr[256] = "";
    int up = 0;
    for (;;) {
        snprintf(path, sizeof path, "%s/controller.addr", abs);
        read_line(path, addr, sizeof addr);
        up = nodes_up(abs, NULL);
        if (*addr && up >= nodes)
            break;
        if (job_state(id, st, sizeof st) < 0) {
            free(abs);
            return EXIT_RUNTIME;
        }
        if (!live_state(st) || mono() > until) {
            cli_error("cluster", "%s: Slurm job %s %s%s (%d of %ld agents "
                      "joined); see %s/slurm-%s.out and the logs there",
                      live_state(st) ? "timed out" : "the allocation ended",
                      id, live_state(st) ? "is " : "is ", *st ? st : "gone",
                      up, nodes, abs, id);
            if (live_state(st)) {
                char *cancel[] = {"scancel", id, NULL};
                run_capture(cancel, buf, sizeof buf);
                fprintf(stderr, "slaq cluster: cancelled job %s\n", id);
            }
            free(abs);
            return EXIT_RUNTIME;
        }
        sleep_s(0.2);
    }
    printf("slaq cluster: up, Slurm job %s, %d nodes\n", id, up);
    printf("controller   %s (agents)\n", addr);
    printf("socket       %s/slaq.sock\n", abs);
    printf("export SLAQ_SOCKET=%s/slaq.sock\n", abs);
    free(abs);
    return 0;
}

static int cluster_down(const char *dir)
{
    char path[4200], id[64], st[64], buf[1024];
    snprintf(path, sizeof path, "%s/jobid", dir);
    read_line(path, id, sizeof id);
    if (!*id) {
        printf("slaq cluster: no cluster in %s\n", dir);
        return 0;
    }
    char *cancel[] = {"scancel", id, NULL};
    if (job_state(id, st, sizeof st) < 0)
        return EXIT_RUNTIME;
    int rc = live_state(st) ? run_capture(cancel, buf, sizeof buf) : 0;
    if (rc != 0) {
        cli_error("cluster", "scancel %s failed (%s)", id,
                  rc < 0 ? strerror(errno) : "see above");
        return EXIT_RUNTIME;
    }
    /* Until Slurm has let the allocation go (KillWait after SIGTERM). */
    double until = mono() + 90;
    for (;;) {
        if (job_state(id, st, sizeof st) < 0)
            return EXIT_RUNTIME;
        if (!live_state(st))
            break;
        if (mono() > until) {
            cli_error("cluster", "Slurm job %s is still %s after 90 s", id,
                      st);
            return EXIT_RUNTIME;
        }
        sleep_s(0.2);
    }
    unlink(path);
    snprintf(path, sizeof path, "%s/controller.addr", dir);
    unlink(path);
    printf("slaq cluster: Slurm job %s ended\n", id);
    return 0;
}

static int cluster_status(const char *dir)
{
    char path[4200], id[64], st[64] = "", addr[256];
    snprintf(path, sizeof path, "%s/jobid", dir);
    read_line(path, id, sizeof id);
    if (!*id) {
        printf("slaq cluster: no cluster in %s\n", dir);
        return 1;
    }
    if (job_state(id, st, sizeof st) < 0)
        return EXIT_RUNTIME;
    snprintf(path, sizeof path, "%s/controller.addr", dir);
    read_line(path, addr, sizeof addr);
    json_t *names;
    int up = nodes_up(dir, &names);
    char *list = json_dumps(names, JSON_COMPACT);
    printf("slurm job    %s (%s)\n", id, *st ? st : "ended");
    printf("controller   %s\n", *addr ? addr : "-");
    printf("nodes up     %d %s\n", up, list ? list : "");
    free(list);
    json_decref(names);
    return live_state(st) ? 0 : 1;
}

/* The socket line of a cluster brought up in dir; 1 if there is none. */
/* The cluster secret: path's first line, at least 8 characters, as
 * slaqd's --agent-token-file reads it; NULL with the error printed. */
static char *read_secret(const char *path)
{
    char buf[512];
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("cluster", "cannot read the cluster secret %s: %s (the "
                  "controller's --agent-token-file; --secret-file FILE "
                  "names another)", path, strerror(errno));
        return NULL;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    char *s = strlen(buf) >= 8 ? strdup(buf) : NULL;
    if (!s)
        cli_error("cluster", "%s: the cluster secret must have at least 8 "
                  "characters", path);
    sodium_memzero(buf, sizeof buf);
    return s;
}

/* Writes text to path, created or replaced, mode 0600 whatever it was. */
static int write_private(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t len = strlen(text);
    if (fchmod(fd, 0600) < 0 || write(fd, text, len) != (ssize_t)len) {
        close(fd);
        return -1;
    }
    return close(fd);
}

/* slaq cluster node-key: node's key from the cluster secret in
 * secret_file, printed or written to out. */
static int cluster_node_key(const char *secret_file, const char *out,
                            const char *node)
{
    unsigned char cluster[LINK_KEY_BYTES], key[LINK_KEY_BYTES];
    char text[LINK_KEY_TEXT_MAX];
    int rc = EXIT_RUNTIME;
    if (!link_node_name_ok(node)) {
        cli_error("cluster", "'%s' is not a node name: 1 to %d letters, "
                  "digits, '.', '-' or '_', not starting with '.'", node,
                  LINK_NODE_MAX);
        return EXIT_USAGE;
    }
    char *secret = read_secret(secret_file);
    if (!secret)
        return EXIT_RUNTIME;
    if (link_key_derive(secret, cluster) < 0) {
        cli_error("cluster", "cannot derive the cluster key (out of memory, "
                  "or no random source)");
        goto out;
    }
    link_node_key(cluster, node, key);
    link_key_format(node, key, text, sizeof text);
    if (!out) {
        fputs(text, stdout);
        rc = fflush(stdout) == 0 ? 0 : EXIT_RUNTIME;
    } else if (write_private(out, text) < 0) {
        cli_error("cluster", "%s: %s", out, strerror(errno));
    } else {
        rc = 0;
    }
out:
    sodium_memzero(secret, strlen(secret));
    free(secret);
    sodium_memzero(cluster, sizeof cluster);
    sodium_memzero(key, sizeof key);
    sodium_memzero(text, sizeof text);
    return rc;
}

static int cluster_env(const char *dir)
{
    char path[4200], id[64];
    snprintf(path, sizeof path, "%s/jobid", dir);
    read_line(path, id, sizeof id);
    char *abs = realpath(dir, NULL);
    if (!*id || !abs) {
        free(abs);
        cli_error("cluster", "no cluster in %s (slaq cluster up --slurm "
                  "--dir %s starts one)", dir, dir);
        return 1;
    }
    printf("export SLAQ_SOCKET=%s/slaq.sock\n", abs);
    free(abs);
    return 0;
}

int cmd_cluster(int argc, char **argv)
{
    enum { O_SLURM = 1, O_NODES, O_TIME, O_DIR, O_EPOCH, O_WAIT, O_SECRET,
           O_OUT };
    static const struct option opts[] = {
        {"slurm", no_argument, 0, O_SLURM},
        {"nodes", required_argument, 0, O_NODES},
        {"time", required_argument, 0, O_TIME},
        {"dir", required_argument, 0, O_DIR},
        {"epoch", required_argument, 0, O_EPOCH},
        {"wait", required_argument, 0, O_WAIT},
        {"secret-file", required_argument, 0, O_SECRET},
        {"out", required_argument, 0, O_OUT},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "up") && strcmp(sub, "down") && strcmp(sub, "status") &&
        strcmp(sub, "env") && strcmp(sub, "node-key")) {
        cli_error("cluster", "unknown subcommand '%s' (expected up, down, "
                  "status, env or node-key)", sub);
        return EXIT_USAGE;
    }
    const char *dir = "slaq-cluster", *time_limit = NULL;
    const char *secret_file = NULL, *out = NULL;
    long nodes = 0;
    int slurm = 0;
    double epoch = 1, wait_s = 120;
    int o;
    optind = 2;
    while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        char *end;
        switch (o) {
        case O_SLURM: slurm = 1; break;
        case O_NODES:
            nodes = strtol(optarg, &end, 10);
            if (end == optarg || *end || nodes < 1 || nodes > 100000) {
                cli_error("cluster", "--nodes wants a whole number from 1 "
                          "to 100000, got '%s'", optarg);
                return EXIT_USAGE;
            }
            break;
        case O_TIME: time_limit = optarg; break;
        case O_DIR: dir = optarg; break;
        case O_SECRET: secret_file = optarg; break;
        case O_OUT: out = optarg; break;
        case O_EPOCH:
            if (cli_parse_positive("cluster", "--epoch", optarg, &epoch))
                return EXIT_USAGE;
            break;
        case O_WAIT:
            if (cli_parse_positive("cluster", "--wait", optarg, &wait_s))
                return EXIT_USAGE;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (!strcmp(sub, "up")) {
        if (!slurm) {
            cli_error("cluster", "up needs --slurm (Slurm is the only way "
                      "slaq allocates nodes)");
            return EXIT_USAGE;
        }
        if (!nodes) {
            cli_error("cluster", "up needs --nodes N");
            return EXIT_USAGE;
        }
        return cluster_up(dir, nodes, time_limit, epoch, wait_s,
                          argv + optind, argc - optind);
    }
    if (!strcmp(sub, "node-key")) {
        if (optind + 1 != argc || slurm || nodes || time_limit) {
            cli_error("cluster", "node-key takes one node name, and only "
                      "--dir, --secret-file and --out");
            return EXIT_USAGE;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/agent.token", dir);
        return cluster_node_key(secret_file ? secret_file : path, out,
                                argv[optind]);
    }
    if (optind < argc || slurm || nodes || time_limit || secret_file ||
        out) {
        cli_error("cluster", "%s takes only --dir", sub);
        return EXIT_USAGE;
    }
    if (!strcmp(sub, "env"))
        return cluster_env(dir);
    return !strcmp(sub, "down") ? cluster_down(dir) : cluster_status(dir);
}
