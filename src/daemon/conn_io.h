/*
 * conn_io.h — connections as byte streams (conn_io.c): the listening
 * sockets, buffered NDJSON output with its limits, closing, the job
 * protocol's session state a connection holds, and the rate limits on
 * failed authentication over TCP. What a line means is conn.h's.
 */
#ifndef SLAQ_DAEMON_CONN_IO_H
#define SLAQ_DAEMON_CONN_IO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/users.h"

typedef struct sd_daemon sd_daemon;
typedef struct sd_job sd_job;

#define SD_MAX_LINE (64 * 1024)       /* longest line in a job session */
#define SD_MAX_REQUEST (1024 * 1024)  /* ... in others (a submit carries
                                         the submitter's environment) */
#define SD_MAX_WBUF (4 * 1024 * 1024) /* unread output before a drop */
#define SD_MAX_UNAUTH_LINE 4096       /* a TCP peer's line before its token */
#define SD_MAX_SEALED LINK_SEALED_LEN(SD_MAX_REQUEST) /* a sealed agent-link
                                         line (link.h) */
#define SD_HELLO_TIMEOUT_S 10.0       /* to send a first whole message */

#define SD_AUTH_DELAY_MAX 30.0        /* longest lock-out after failures, s */
/* Failed checks of a credential over TCP, whatever the source addresses
 * (conn.c): per listening port, and all ports together. A check beyond
 * them is refused unchecked. */
#define SD_AUTH_PORT_RATE 5.0         /* per second on one port ... */
#define SD_AUTH_PORT_BURST 4.0        /* ... after a burst of this many:
                                         at most 9 in any second */
#define SD_AUTH_ALL_RATE 8.0          /* per second on all ports ... */
#define SD_AUTH_ALL_BURST 8.0         /* ... after a burst of this many */

typedef enum sd_conn_kind { CONN_NEW, CONN_JOB, CONN_CONTROL } sd_conn_kind;

typedef struct sd_conn {
    sd_handler h;
    sd_conn_kind kind;
    int tcp;              /* came in over TCP: needs the token first */
    int authed;           /* TCP: a token was shown (Unix: always) */
    int may_control;      /* may make changing requests at all (not a
                             TCP job token); each is then allowed or
                             refused for `who` (users.c) */
    int may_read;         /* status, ls, show, logs */
    char peer[48];        /* "uid N" or the IP address, for rate limits */
    sd_user who;          /* who it is (Unix: the kernel's word; TCP: the
                             control token's holder, slaqd's own user) */
    int who_known;        /* who's name and rights are looked up */
    int spoke;            /* a whole message has arrived */
    double opened;        /* monotonic */
    char *rbuf;
    size_t rlen, rcap;
    char *wbuf;
    size_t wlen, woff, wcap;
    int want_out;         /* EPOLLOUT registered */
    int closing;          /* close once the output is written */
    int wdead;            /* the peer no longer reads: output dropped */
    sd_job *job;
    int said_bye;
    int acks;             /* the job asked for acknowledgements (hello) */
    int ack_due;          /* an ack is owed even without new reports */
    int acked_any;        /* an ack was sent on this connection ... */
    uint64_t acked_iter;  /* ... for this iteration */
    int agent;            /* came in on the --agents listener */
    int upstream;         /* an agent's link to its controller */
    int node;             /* agent connection: its node, -1 until register */
    sd_link *link;        /* agent, upstream or a sealed session over
                             TCP (tcp_session.c): the link's handshake
                             and keys (link.h); NULL on others */
    struct sd_conn *prev, *next;
} sd_conn;

/* Binds the Unix socket at path. A file already there is replaced only if
 * it is a socket nobody serves; anything else is an error. */
int conn_listen_unix(sd_daemon *d, const char *path);
/* Removes the socket file at exit if it is still the one bound here. */
void conn_unlink_unix(sd_daemon *d, const char *path);
/* A TCP listener on addr ("IPV4:PORT") served by conn_accept through h;
 * opt names the option in errors. */
int conn_listen_at(sd_daemon *d, const char *addr, sd_handler *h,
                   const char *opt);
void conn_accept(sd_daemon *d, sd_handler *h, uint32_t events);
/* Queues one JSON message (a line) on c; steals nothing, c may close. */
void conn_send(sd_daemon *d, sd_conn *c, json_t *msg);
/* Queues one line (without its newline) on c. On an agent link it is
 * sealed, and dropped while the link is not open: nothing but the
 * handshake is said in clear there. */
void conn_send_line(sd_daemon *d, sd_conn *c, const char *s, size_t len);
/* Queues one line on c as it is: the agent link's handshake. */
void conn_send_raw(sd_daemon *d, sd_conn *c, const char *s, size_t len);
/* Sends {"type":"error","code":..,"message":..} on c and logs it (at a
 * limited rate, counted in errors_total): a message refused. */
void conn_error(sd_daemon *d, sd_conn *c, const char *code,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* All connections together would hold more than SD_MAX_BUFFERED if c's
 * buffer for `what` grew: c is closed (counted, logged at a limited
 * rate). */
void conn_overloaded(sd_daemon *d, sd_conn *c, const char *what);
/* Grows one of c's buffers (*buf, of *cap bytes) to `want` bytes, charged
 * to all connections' SD_MAX_BUFFERED: 0, or -1 when that bound or
 * memory refuses it, c then closed (conn_overloaded for `what`, or
 * conn_close). */
int conn_buf_grow(sd_daemon *d, sd_conn *c, char **buf, size_t *cap,
                  size_t want, const char *what);
/* Writes what c has queued as far as the socket takes it; closes c if it
 * was closing and all is written. */
void conn_flush(sd_daemon *d, sd_conn *c);
/* Sends a plain {"type":"error"} line, then closes c once it is written:
 * a peer refused before its link is open. */
void conn_refuse(sd_daemon *d, sd_conn *c, const char *code,
                 const char *msg);
/* Failed authentication over TCP (rate limits, docs/security.md): the
 * seconds c must wait before its credential may be checked (0: now; per
 * address, per port and overall); a failed check counted and charged. */
double conn_auth_wait(sd_daemon *d, const sd_conn *c);
void conn_auth_failed(sd_daemon *d, sd_conn *c, const char *what);
void conn_auth_succeeded(sd_daemon *d, const sd_conn *c);
/* Closes c: out of the epoll set and the list, then what the layers above
 * hold of it is let go (d->conn_closed); conn_reap frees it. */
void conn_close(sd_daemon *d, sd_conn *c);
/* Before a job's exit is recorded: reads everything it may have sent. */
void conn_settle(sd_daemon *d, sd_job *j);
void conn_close_all(sd_daemon *d);
/* Frees the connections closed during this turn of the loop. */
void conn_reap(sd_daemon *d);
/* Once a second: closes connections that sent no whole message within
 * SD_HELLO_TIMEOUT_S, and retries accepting after running out of
 * descriptors. */
void conn_tick(sd_daemon *d);

/* Wraps a connected descriptor in a connection, its input read by
 * d->conn_input (the protocol, registered by conn_protocol_init). */
sd_conn *conn_add(sd_daemon *d, int fd, int tcp);

#endif
