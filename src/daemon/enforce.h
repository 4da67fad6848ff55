/*
 * enforce.h — CPU enforcement backends (enforce.c): cgroup v2, cgroup
 * v1, or a token bucket of SIGSTOP/SIGCONT on measured CPU time.
 */
#ifndef SLAQ_DAEMON_ENFORCE_H
#define SLAQ_DAEMON_ENFORCE_H

#include <stdint.h>
#include <sys/types.h>

#include "daemon/daemon.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

int enf_init(sd_daemon *d, sd_enforce_mode mode, char *err, size_t errlen);
/* Called in the child between fork and exec: joins the job's cgroup. */
int enf_child_join(const sd_enforcer *e, int64_t id);
int enf_prepare(sd_daemon *d, sd_job *j);   /* before fork */
int enf_adopt(sd_daemon *d, sd_job *j);     /* re-adopted process */
void enf_apply(sd_daemon *d, sd_job *j, double cores);
/* cpu.weight (v2) or cpu.shares (v1) for an allocation of `cores`. */
unsigned long enf_weight(int v2, double cores);
void enf_tick(sd_daemon *d, double dt);
void enf_epoch(sd_daemon *d, sd_job *j);    /* sets j->throttled */
void enf_release(sd_daemon *d, sd_job *j);
void enf_shutdown(sd_daemon *d);
const char *enf_mode_name(sd_enforce_mode m);
int enf_mode_parse(const char *s, sd_enforce_mode *out);
/* A process's start time (clock ticks since boot), 0 if it is gone or a
 * zombie: with the pid it identifies a process across pid reuse. */
unsigned long long enf_proc_start(pid_t pid);

#endif
