/*
 * logs.c — `slaq logs ID [-f]`: a job's standard output and error, read
 * from the log files slaqd writes under its state directory.
 *
 * With -f the files are followed (polled every 200 ms) until the job has
 * ended and everything it wrote is printed.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/daemon_rpc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: slaq logs [OPTIONS] ID\n\n"
               "Prints job ID's output (stdout, then stderr).\n\n"
               "  -f, --follow      keep printing new output until the job "
               "ends\n"
               "  --stdout          only standard output\n"
               "  --stderr          only standard error\n" RPC_HELP);
}

/* Copies what is new in `path` since *off to out; returns bytes copied. */
static long copy_new(const char *path, long *off, FILE *out)
{
    /* The job's user owns its log directory: a link or a FIFO put there
     * is not followed or waited on (an administrator reads as root). */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    long n = 0;
    if (fseek(f, *off, SEEK_SET) == 0) {
        char buf[65536];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
            fwrite(buf, 1, got, out);
            n += (long)got;
        }
    }
    fclose(f);
    *off += n;
    fflush(out);
    return n;
}

int cmd_logs(int argc, char **argv)
{
    enum { O_STDOUT = 1, O_STDERR };
    static const struct option opts[] = {
        {"follow", no_argument, 0, 'f'}, {"stdout", no_argument, 0, O_STDOUT},
        {"stderr", no_argument, 0, O_STDERR}, {"help", no_argument, 0, 'h'},
        RPC_LONG_OPTS, {0, 0, 0, 0}};
    rpc_opts ro;
    rpc_opts_init(&ro);
    int o, follow = 0, want_out = 1, want_err = 1;
    while ((o = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
        if (rpc_opt(&ro, o, optarg))
            continue;
        switch (o) {
        case 'f': follow = 1; break;
        case O_STDOUT: want_err = 0; want_out = 1; break;
        case O_STDERR: want_out = 0; want_err = 1; break;
        default:
            usage(o == 'h' ? stdout : stderr);
            return o == 'h' ? 0 : EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_error("logs", "expected one job id");
        return EXIT_USAGE;
    }
    const char *id = argv[optind];
    json_t *r;
    int status = rpc_exchange("logs", &ro, json_pack("{s:s, s:s}", "type", "logs",
                                                 "job", id), &r);
    if (status >= 0)
        return status;
    char out_path[4200], err_path[4200];
    const char *dir = json_string_value(json_object_get(r, "dir"));
    snprintf(out_path, sizeof out_path, "%s/stdout.log", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.log", dir);
    json_decref(r);
    long out_off = 0, err_off = 0;
    if (want_out)
        copy_new(out_path, &out_off, stdout);
    if (want_err)
        copy_new(err_path, &err_off, follow ? stderr : stdout);
    for (int active = follow; active;) {
        usleep(200000);
        json_t *s = rpc_call("logs", &ro, json_pack("{s:s, s:s}", "type",
                                                    "logs", "job", id));
        const char *st = s ? json_string_value(json_object_get(s, "state"))
                           : NULL;
        active = st && (!strcmp(st, "running") || !strcmp(st, "stopping"));
        json_decref(s);
        if (want_out)
            copy_new(out_path, &out_off, stdout);
        if (want_err)
            copy_new(err_path, &err_off, stderr);
    }
    return 0;
}
