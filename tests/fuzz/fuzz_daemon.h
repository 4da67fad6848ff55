/*
 * fuzz_daemon.h — the slaqd that the fuzz harnesses drive, and the unit
 * tests of connections and jobs (tests/daemon/session.h): a daemon in
 * this process with its state in a fresh temporary directory, SQLite in
 * memory, the SLAQ policy on 2 cores, no enforcement and no listener yet
 * (each harness opens its own: the Unix socket or the HTTP port).
 *
 * Included by one program at a time (each is built from its own .c file
 * with slaqd's sources, tests/module.mk), hence a static function.
 */
#ifndef SLAQ_FUZZ_DAEMON_H
#define SLAQ_FUZZ_DAEMON_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/enforce.h"
#include "daemon/store.h"

/*
 * Sets up *d with its state directory made from the mkdtemp template
 * `dir` (rewritten in place). On failure prints "WHO: cannot set up
 * slaqd: ..." and exits: nothing can be fuzzed without it.
 */
static void fuzz_daemon_init(sd_daemon *d, char *dir, const char *who)
{
    char err[512] = "";
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
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
    d->store = store_open(":memory:", 1, err, sizeof err);
    d->sched = slaq_sched_new(&c->sched);
    if (d->epfd < 0 || !d->store || !d->sched ||
        enf_init(d, SD_ENF_NONE, err, sizeof err) < 0) {
        fprintf(stderr, "%s: cannot set up slaqd: %s\n", who, err);
        exit(1);
    }
}

#endif
