/*
 * tcp_session.h — slaqd's side of the sealed control sessions on its TCP
 * port (docs/protocol.md, "Sealed sessions over TCP"; docs/security.md,
 * "User credentials over TCP").
 */
#ifndef SLAQ_DAEMON_TCP_SESSION_H
#define SLAQ_DAEMON_TCP_SESSION_H

#include <stddef.h>

typedef struct sd_daemon sd_daemon;
typedef struct sd_conn sd_conn;

/* Derives the admin identity's key from the control token (Argon2id,
 * about 0.1 s), then wipes and frees the token: nothing compares it again.
 * 0, or -1 after logging why. */
int tcps_admin_key(sd_daemon *d);

/* A TCP connection's first line was a "link_hello": c gets a session link
 * and, unless the identity it claims is refused (malformed, expired,
 * revoked: a failed authentication) or the address is locked out, the
 * challenge that proves slaqd holds that identity's key. */
void tcps_start(sd_daemon *d, sd_conn *c, const char *line, size_t len);

/* A handshake line on c's session link once challenged: the client's
 * proof. Right, c acts as the identity (a user's rights, or the
 * administrator's for "admin"); wrong, it is a failed authentication and
 * c is refused and closed. */
void tcps_handshake(sd_daemon *d, sd_conn *c, const char *line, size_t len);

#endif
