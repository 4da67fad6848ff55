/*
 * loop.h — what slaqd.c's event loop offers every module: the handler an
 * epoll registration points at, registering one, the log (rate-limited
 * where a peer could flood it), and the agent link's key.
 */
#ifndef SLAQ_DAEMON_LOOP_H
#define SLAQ_DAEMON_LOOP_H

#include <stdint.h>

typedef struct sd_daemon sd_daemon;

#define SD_LOG_INTERVAL 10.0          /* rate-limited log lines: at most */
#define SD_LOG_BURST 10               /* this many per interval per kind */

/* What an epoll registration points at. */
typedef struct sd_handler {
    int fd;
    void (*fn)(sd_daemon *d, struct sd_handler *h, uint32_t events);
} sd_handler;

/* At most SD_LOG_BURST log lines of a kind per SD_LOG_INTERVAL, with the
 * count of those held back. */
typedef struct sd_ratelog {
    double start;         /* monotonic start of the interval, 0: never */
    unsigned n;           /* lines logged in it */
    uint64_t held;        /* lines held back since the last one logged */
} sd_ratelog;

/* Ends every connection, flushes and closes the store, and frees the
 * jobs, arrays, sweeps, operations, timeline and scheduler: slaqd's exit,
 * and the fuzz harnesses' reset. The configuration, the listening sockets
 * and the epoll descriptor stay (the caller's). */
void sd_free_state(sd_daemon *d);

/* Logs a line to stderr with a timestamp; level 0 always, 1 with -v. */
void sd_log(const sd_daemon *d, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 if a line may be logged now (at most SD_LOG_BURST per
 * SD_LOG_INTERVAL); then *held is the number of lines held back since the
 * previous one. */
int sd_ratelog_ok(sd_ratelog *r, uint64_t *held);

/* Compares a secret given by a peer with the expected one in time that
 * does not depend on where they differ. */
int sd_secret_equal(const char *given, const char *expected);

/* Derives d->link_key from the agent token (link.h), then wipes and frees
 * the token; 0, or -1 after logging why not. */
int sd_link_key(sd_daemon *d);

int sd_epoll_add(sd_daemon *d, sd_handler *h, uint32_t events);
int sd_epoll_mod(sd_daemon *d, sd_handler *h, uint32_t events);
void sd_epoll_del(sd_daemon *d, sd_handler *h);

#endif
