/*
 * link.h — the authenticated, encrypted agent link (docs/protocol.md,
 * "The agent link"; docs/security.md, "The cluster"), and the sealed
 * control sessions over TCP that use the same handshake and sealing
 * (docs/protocol.md, "Sealed sessions over TCP").
 *
 * Each node has a key of its own. The controller holds the cluster secret
 * (the agent token) and derives from it the cluster key (Argon2id, so
 * that a guess checked offline costs what it costs here), and from that
 * each node's key (keyed BLAKE2b of the node's name); an agent holds only
 * its node's key (a key file, `slaq cluster node-key`). A connection opens
 * with a handshake of three lines in clear: the agent's hello names its
 * node, the controller takes that node's key, and each side sends a fresh
 * random nonce and proves it holds the key by a keyed hash (BLAKE2b) over
 * both nonces and its role; neither sends a key. A node's key thus opens a
 * link for that node only, and an agent, which checks the controller's
 * proof under its own key, takes for its controller only the holder of
 * the cluster key (or of its own key). Both then derive one key per
 * direction, and every later line is sealed with ChaCha20-Poly1305 under
 * that direction's key, its nonce the count of lines sent before it in
 * that direction, and written in base64: a line altered, replayed,
 * reordered or dropped fails to open, and the connection is closed.
 *
 * A sealed session (LINK_SESSION) is the same three lines and the same
 * sealing between the slaq command (in the agent's place) and slaqd's
 * TCP port (in the controller's): its hello names who the client claims
 * to be ("as": a user credential's identity, or "admin" for the control
 * token), the key is that identity's secret, and the labels, role names
 * and that identity enter every proof and key, so that nothing of one
 * kind of link or of one identity is taken for another.
 *
 * This file is the protocol and its cryptography only (libsodium): no
 * sockets, no daemon state. slaqd (conn.c, agent.c, agent_link.c,
 * tcp_session.c), the slaq command (daemon_rpc.c, cluster.c) and
 * slaq-agentgen use it.
 */
#ifndef SLAQ_DAEMON_LINK_H
#define SLAQ_DAEMON_LINK_H

#include <stddef.h>
#include <stdint.h>

#define LINK_KEY_BYTES 32
#define LINK_NONCE_BYTES 32
/* Bytes a sealed line of len plaintext bytes takes (base64, no newline). */
#define LINK_SEALED_LEN(len) ((((len) + 16 + 2) / 3) * 4)
/* The longest handshake line either side accepts. */
#define LINK_MAX_HANDSHAKE 512
/* The longest node name (bytes, without the NUL). */
#define LINK_NODE_MAX 63
/* A key file's text: NODE ":" 64 hex digits, newline, NUL. */
#define LINK_KEY_TEXT_MAX (LINK_NODE_MAX + 1 + 2 * LINK_KEY_BYTES + 2)
/* The longest identity a session's hello may claim, with its NUL. */
#define LINK_MAX_AS 64

typedef enum link_kind {
    LINK_AGENT,  /* agent (initiator) and controller (responder) */
    LINK_SESSION /* the slaq command (initiator) and slaqd over TCP */
} link_kind;

typedef enum link_state {
    LINK_NEW,        /* nothing sent yet */
    LINK_HELLO_SENT, /* agent: hello sent, waits for the challenge */
    LINK_CHALLENGED, /* controller: challenge sent, waits for the proof */
    LINK_OPEN        /* both proved: every line is sealed */
} link_state;

typedef struct sd_link {
    link_state state;
    link_kind kind;                     /* LINK_AGENT when zeroed */
    char as[LINK_MAX_AS];               /* a session's claimed identity */
    unsigned char na[LINK_NONCE_BYTES]; /* the agent's nonce */
    unsigned char nc[LINK_NONCE_BYTES]; /* the controller's nonce */
    unsigned char tx[32], rx[32];       /* this side's keys once open */
    uint64_t txn, rxn;                  /* lines sealed / opened so far */
    char node[LINK_NODE_MAX + 1];       /* the node the hello named */
    unsigned char key[LINK_KEY_BYTES];  /* responder: the key being proved
                                           (a node's, a session's) */
} sd_link;

/* Derives the cluster key from the cluster secret, the agent token
 * (Argon2id, 64 MiB and about 0.1 s), initialising libsodium first.
 * Returns 0, or -1 when out of memory or libsodium cannot start (no random
 * source). Call it, or link_init, before any other function here. */
int link_key_derive(const char *token, unsigned char key[LINK_KEY_BYTES]);

/* Initialises libsodium (for a side that holds a node key and derives
 * nothing). Returns 0, or -1 when it cannot start (no random source). */
int link_sodium_init(void);

/* Whether name may name a node: 1 to LINK_NODE_MAX bytes of letters,
 * digits, '.', '-' and '_', not starting with '.' (it names files:
 * STATE/agent-NAME, keys/NAME.key). */
int link_node_name_ok(const char *name);

/* Node name's key under the cluster key: BLAKE2b-256 keyed with the
 * cluster key over "slaq node key 1: " and the name (docs/protocol.md).
 * Returns 0, or -1 (key untouched) if the name is not a node's. */
int link_node_key(const unsigned char cluster[LINK_KEY_BYTES],
                  const char *name, unsigned char key[LINK_KEY_BYTES]);

/* A key file's text for node's key: "NODE:HEX\n" into out (at least
 * LINK_KEY_TEXT_MAX bytes); returns its length, or -1 if it does not fit
 * or the name is not a node's. */
int link_key_format(const char *node, const unsigned char key[LINK_KEY_BYTES],
                    char *out, size_t cap);

/* Parses a key file's text (its first line; a newline or CR ends it):
 * fills node and key and returns 0, or returns -1 with err saying what a
 * key file must hold. */
int link_key_parse(const char *text, char node[LINK_NODE_MAX + 1],
                   unsigned char key[LINK_KEY_BYTES], char *err,
                   size_t errlen);

/* The key of the "admin" identity of sealed sessions, from slaqd's TCP
 * control token: as link_key_derive, under a salt of its own (an agent
 * token and a control token that were equal still give two keys). */
int link_admin_key(const char *token, unsigned char key[LINK_KEY_BYTES]);

/* Wipes a secret's text (a token read from a file) and frees it; *secret
 * becomes NULL. */
void link_forget(char **secret);

/* Zeroes l and makes it a link of the given kind; a session's initiator
 * gives the identity it claims (as), a responder and agent links NULL.
 * Returns 0, or -1 when as is not 1 to LINK_MAX_AS - 1 characters of
 * [A-Za-z0-9:._-]. */
int link_init(sd_link *l, link_kind kind, const char *as);

/*
 * The handshake. Each function writes the line to send (without its
 * newline, NUL-terminated) into out (at least LINK_MAX_HANDSHAKE bytes)
 * and returns its length; or returns -1 with err filled with what was
 * wrong, and the connection must be closed. A peer's line is any text:
 * these functions parse and check it.
 *
 *   agent                          controller
 *   link_hello        ──hello──▶   link_on_hello   (takes the node's key)
 *   link_on_challenge ◀─challenge─ (proves the controller)
 *   (proves the agent)─proof──▶    link_on_proof   (returns 0: no reply)
 *
 * link_hello names the agent's node (-1 if node is not a node's name);
 * link_on_challenge checks the controller's proof under the agent's node
 * key. link_on_hello derives the named node's key from the cluster key
 * into l->key and keeps the name in l->node (the caller holds the node to
 * it: its register must name the same node); link_on_proof checks the
 * agent's proof under that key.
 *
 * link_on_hello (agent links only) is link_read_hello then link_challenge
 * under the node's key. A session's responder calls the two apart, to
 * choose the key by the identity the hello claims (l->as once read), and
 * may put a key looked up again into l->key before link_on_proof (a
 * credential revoked meanwhile). A session's link_hello takes node NULL.
 *
 * link_on_challenge and link_on_proof leave the link LINK_OPEN on success.
 * link_on_proof returns -2 (err filled) when the proof was checked and
 * wrong: a failed authentication, which the caller counts and limits; -1
 * when the line was not a proof at all.
 */
int link_hello(sd_link *l, const char *node, char *out, size_t cap);
int link_on_hello(sd_link *l, const unsigned char cluster[LINK_KEY_BYTES],
                  const char *line, size_t len, char *out, size_t cap,
                  char *err, size_t errlen);
/* Reads a hello: 0, or -1 with err filled (nothing to send). */
int link_read_hello(sd_link *l, const char *line, size_t len, char *err,
                    size_t errlen);
/* Writes the challenge answering the hello read, proving key (kept in
 * l->key for link_on_proof). */
int link_challenge(sd_link *l, const unsigned char key[LINK_KEY_BYTES],
                   char *out, size_t cap);
int link_on_challenge(sd_link *l, const unsigned char key[LINK_KEY_BYTES],
                      const char *line, size_t len, char *out, size_t cap,
                      char *err, size_t errlen);
int link_on_proof(sd_link *l, const char *line, size_t len, char *err,
                  size_t errlen);

/* Seals len bytes of s into out (LINK_SEALED_LEN(len) + 1 bytes, NUL-
 * terminated); returns the sealed length, 0 when out of memory. The link
 * must be open. */
size_t link_seal(sd_link *l, const char *s, size_t len, char *out);

/* Opens a sealed line into out (cap bytes; a line of len bytes needs at
 * most len * 3 / 4): on success returns the plaintext's length; -1 if it
 * is not the next line the peer sealed (not base64, altered, replayed,
 * out of order or from another connection) or does not fit. */
long link_open(sd_link *l, const char *line, size_t len, char *out,
               size_t cap);

/* Wipes the link's keys and nonces. */
void link_wipe(sd_link *l);

#endif
