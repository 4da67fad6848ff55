/*
 * tcp_session.c — slaqd's side of the sealed control sessions on its TCP
 * port (tcp_session.h; the bytes are docs/protocol.md, "Sealed sessions
 * over TCP").
 *
 * A session is the agent link's handshake and sealing (link.c, kind
 * LINK_SESSION), the slaq command in the agent's place and slaqd in the
 * controller's: the client's hello claims an identity, slaqd answers with
 * a proof under that identity's key, the client proves the same key, and
 * every later line is sealed. The identity is "admin", whose key comes
 * from the control token, or a user credential without its secret
 * ("UID:EXPIRES:GENERATION"), whose key is the secret slaqd would have
 * issued with it (users.c): slaqd recomputes it, so it holds no list of
 * credentials, and neither side ever sends a secret.
 *
 * A claim refused at the hello (expired, revoked, malformed) and a wrong
 * proof are failed authentications like a wrong token: counted, logged
 * and charged to the address's lock-out and the port's limits (conn.c).
 * The key is looked up again at the proof, so a revocation between the
 * two lines takes effect.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conn_io.h"
#include "daemon/daemon.h"
#include "daemon/link.h"
#include "daemon/loop.h"
#include "daemon/tcp_session.h"
#include "daemon/users.h"

int tcps_admin_key(sd_daemon *d)
{
    if (!d->cfg.token || link_admin_key(d->cfg.token, d->admin_key) < 0) {
        sd_log(d, 0, "cannot derive the TCP control token's key (out of "
               "memory, or no random source)");
        return -1;
    }
    link_forget(&d->cfg.token);
    return 0;
}

/* The key of the identity c's hello claimed, and who that is: 0, or -1
 * with err filled with what the client should do. */
static int identity_key(sd_daemon *d, const sd_conn *c,
                        unsigned char key[LINK_KEY_BYTES], sd_user *who,
                        char *err, size_t errlen)
{
    uid_t uid;
    if (!strcmp(c->link->as, "admin")) {
        memcpy(key, d->admin_key, LINK_KEY_BYTES);
        user_self(d, who);
        return 0;
    }
    if (user_session_key(d, c->link->as, key, &uid, err, errlen) < 0)
        return -1;
    user_from_uid(d, uid, (gid_t)-1, who);
    return 0;
}

/* Refuses c unchecked while its address or port is locked out: 1 if so. */
static int locked_out(sd_daemon *d, sd_conn *c)
{
    char msg[128];
    double wait = conn_auth_wait(d, c);
    if (wait <= 0)
        return 0;
    snprintf(msg, sizeof msg, "too many failed attempts from %s; try again "
             "in %.1f s", c->peer, wait);
    conn_refuse(d, c, "rate_limited", msg);
    return 1;
}

void tcps_start(sd_daemon *d, sd_conn *c, const char *line, size_t len)
{
    char out[LINK_MAX_HANDSHAKE], err[320], msg[400];
    unsigned char key[LINK_KEY_BYTES];
    sd_user who;
    if (locked_out(d, c))
        return;
    c->link = malloc(sizeof *c->link);
    if (!c->link) {
        conn_close(d, c);
        return;
    }
    link_init(c->link, LINK_SESSION, NULL);
    if (link_read_hello(c->link, line, len, err, sizeof err) < 0) {
        snprintf(msg, sizeof msg, "slaqd's TCP port speaks sealed sessions "
                 "(docs/protocol.md): %s", err);
        conn_refuse(d, c, "bad_handshake", msg);
        return;
    }
    if (identity_key(d, c, key, &who, err, sizeof err) < 0) {
        conn_auth_failed(d, c, "an expired, revoked or malformed user "
                         "credential");
        sd_log(d, 1, "session from %s refused: %s", c->peer, err);
        conn_refuse(d, c, "unauthorized", err);
        return;
    }
    int n = link_challenge(c->link, key, out, sizeof out);
    sodium_memzero(key, sizeof key);
    if (n < 0) {
        conn_close(d, c);
        return;
    }
    conn_send_raw(d, c, out, (size_t)n);
}

void tcps_handshake(sd_daemon *d, sd_conn *c, const char *line, size_t len)
{
    char err[320];
    unsigned char key[LINK_KEY_BYTES];
    sd_user who;
    if (locked_out(d, c))
        return;
    if (identity_key(d, c, key, &who, err, sizeof err) < 0) {
        conn_auth_failed(d, c, "a user credential revoked during its "
                         "handshake");
        conn_refuse(d, c, "unauthorized", err);
        return;
    }
    /* the key as it is now (a revocation since the hello counts) */
    memcpy(c->link->key, key, sizeof key);
    int rc = link_on_proof(c->link, line, len, err, sizeof err);
    sodium_memzero(key, sizeof key);
    if (rc == -2) {
        int admin = !strcmp(c->link->as, "admin");
        conn_auth_failed(d, c, admin ? "a wrong proof of the control token"
                                     : "a wrong user credential");
        conn_refuse(d, c, "unauthorized", admin
                    ? "the session's proof does not match this slaqd's "
                      "control token"
                    : "the session's proof does not match the credential "
                      "slaqd issued for this identity (an altered "
                      "credential?): run `slaq token --save` on the "
                      "machine slaqd runs on");
        return;
    }
    if (rc < 0) {
        conn_refuse(d, c, "bad_handshake", err);
        return;
    }
    /* A user's credential: that user, with the rights the Unix socket
     * would give them (users.c); the control token: an administrator,
     * slaqd's own user. */
    c->authed = c->may_control = c->may_read = 1;
    c->who = who;
    c->who_known = 1;
    conn_auth_succeeded(d, c);
}
