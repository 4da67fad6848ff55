/*
 * conn.h — the protocol on slaqd's connections (conn.c): what each line
 * a peer sends means (docs/protocol.md). The connections themselves, their
 * buffers, listeners and limits, are conn_io.h's, in the bottom layer.
 */
#ifndef SLAQ_DAEMON_CONN_H
#define SLAQ_DAEMON_CONN_H

#include "daemon/conn_io.h"

typedef struct sd_daemon sd_daemon;

/* Makes the protocol what reads every connection's input and what hears
 * of a connection's closing (d->conn_input, d->conn_closed): once, before
 * any connection is made. */
void conn_protocol_init(sd_daemon *d);
/* The TCP listener on addr ("IPV4:PORT"): sealed sessions (tcp_session.c)
 * and, in clear, the job token only. */
int conn_listen_tcp(sd_daemon *d, const char *addr);
/* Handles whatever input c has waiting now (a job that exited may have
 * written its last reports just before). */
void conn_drain(sd_daemon *d, sd_conn *c);
/* After a commit (nothing accepted is uncommitted any more): tells each
 * job session that asked for acknowledgements the last iteration it has
 * in the database, if that advanced (docs/protocol.md, ack). */
void conn_send_acks(sd_daemon *d);

#endif
