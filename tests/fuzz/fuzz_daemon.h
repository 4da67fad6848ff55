/*
 * fuzz_daemon.h — the slaqd that the daemon's fuzz harnesses drive, and
 * the unit tests of connections and jobs (tests/daemon/session.h): a
 * daemon in this process with its state in a temporary directory, SQLite
 * in memory, the SLAQ policy on 2 cores, no enforcement and no listener
 * yet (each harness opens its own: the Unix socket, the HTTP port, the
 * agent port).
 *
 * fuzz_daemon_reset gives the next input a daemon as fresh as the first
 * one's (its jobs, store, scheduler, connections and counters gone), so
 * that the daemon's state does not grow over a million inputs (it did:
 * the jobs array, which expiry only thins every 5 s, and the in-memory
 * database grew with every input, and the protocol harness slowed from
 * 250 to under 100 inputs a second within a minute). A reset costs about
 * 8 ms of CPU under ASan (SQLite's schema, mostly), seven times an
 * input's own work, so a harness resets every FUZZ_RESET_EVERY inputs:
 * an input meets at most that many before it, as in a long-running slaqd.
 *
 * Included by one program at a time (each is built from its own .c file
 * with slaqd's sources, tests/module.mk), hence a static function.
 */
#ifndef SLAQ_FUZZ_DAEMON_H
#define SLAQ_FUZZ_DAEMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "daemon/array.h"
#include "daemon/clock.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/epoch.h"
#include "daemon/http.h"
#include "daemon/jobs.h"
#include "daemon/store.h"
#include "daemon/suspend.h"
#include "daemon/sweepd.h"

#define FUZZ_RESET_EVERY 64

/*
 * Sets up *d with its state directory made from the mkdtemp template
 * `dir` (rewritten in place). On failure prints "WHO: cannot set up
 * slaqd: ..." and exits: nothing can be fuzzed without it.
 */
static void fuzz_daemon_setup(sd_daemon *d, char *dir, const char *who)
{
    char err[512] = "";
    sd_config *c = &d->cfg;
    c->state_dir = dir;
    c->http = "off";
    slaq_sched_config_init(&c->sched);
    c->sched.epoch_s = 1;
    c->sched.cores = 2;
    c->sched.unit = 0.1;
    c->grace_s = 1;
    c->enforce = SD_ENF_NONE;
    c->keep_jobs = 20;
    c->verbose = 0;
    d->http_h.fd = -1;
    d->started = sd_now();
    d->epfd = epoll_create1(EPOLL_CLOEXEC);
    conn_protocol_init(d);
    job_modules_init(d);
    d->store = store_open(":memory:", 1, err, sizeof err);
    d->sched = slaq_sched_new(&c->sched);
    if (d->epfd < 0 || !d->store || !d->sched ||
        enf_init(d, SD_ENF_NONE, err, sizeof err) < 0) {
        fprintf(stderr, "%s: cannot set up slaqd: %s\n", who, err);
        exit(1);
    }
}

static void fuzz_daemon_init(sd_daemon *d, char *dir, const char *who)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    fuzz_daemon_setup(d, dir, who);
}

/*
 * Frees everything fuzz_daemon_init and the inputs made, as slaqd does at
 * exit (slaqd.c), listeners included, but keeps the state directory.
 */
__attribute__((unused)) static void fuzz_daemon_free(sd_daemon *d)
{
    sd_free_state(d);
    free(d->nodes);
    if (d->cfg.socket_path)
        conn_unlink_unix(d, d->cfg.socket_path);
    sd_handler *listeners[] = {&d->listen_h, &d->tcp_h, &d->agents_h};
    for (size_t i = 0; i < sizeof listeners / sizeof *listeners; i++)
        if (listeners[i]->fn && listeners[i]->fd >= 0)
            close(listeners[i]->fd);
    if (d->epfd >= 0)
        close(d->epfd);
}

/*
 * Frees the daemon and sets it up again in the same directory with the
 * same configuration; the harness then opens its listeners again.
 * Settings a harness changed after fuzz_daemon_init (cfg fields set by
 * fuzz_daemon_setup) are set again: it changes them again after this.
 */
__attribute__((unused)) static void fuzz_daemon_reset(sd_daemon *d, char *dir, const char *who)
{
    sd_config cfg = d->cfg;
    fuzz_daemon_free(d);
    memset(d, 0, sizeof *d);
    d->cfg = cfg;
    fuzz_daemon_setup(d, dir, who);
}

#endif
