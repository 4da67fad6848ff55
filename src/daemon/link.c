/*
 * link.c — the agent link's handshake and sealing (link.h; the protocol is
 * docs/protocol.md, "The agent link"; why it is built so, docs/security.md),
 * and the same for the slaq command's sealed sessions over TCP: one
 * implementation, the kind of link (its label and role names, and a
 * session's identity) hashed into every proof and key.
 *
 * Why libsodium and not TLS: the link is one newline-delimited stream read
 * by slaqd's single-threaded epoll loop; a handshake of three JSON lines
 * and one AEAD call per line keep that loop's reading and writing as they
 * are, and leave no certificate, cipher-suite or renegotiation setting to
 * get wrong. The primitives are libsodium's (Argon2id, keyed BLAKE2b,
 * IETF ChaCha20-Poly1305); nothing here is a cipher of its own.
 *
 * Why a node's key is a keyed hash of its name and not a key of its own
 * kept in a list: the controller then holds one secret whatever the
 * number of nodes, issues a key for a node that has never joined without
 * telling the controller, and a node's key, a pseudo-random function of
 * its name under a key the node never sees, tells nothing of another
 * node's. crypto_kdf would do the same for numbered subkeys; nodes are
 * named, so the name is hashed under the cluster key directly, behind a
 * label of its own that no proof or link key begins with.
 */
#include <jansson.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/link.h"

/* A node key's label (link_node_key); the links' labels and versions are
 * in kinds[] below. Version 1 of the agent link had one key for the whole
 * cluster. */
#define NODE_LABEL "slaq node key 1: "
#define AEAD_ABYTES crypto_aead_chacha20poly1305_ietf_ABYTES

/* Argon2id of token under salt, libsodium's interactive limits. */
static int pwhash(const char *token, const unsigned char *salt,
                  unsigned char key[LINK_KEY_BYTES])
{
    if (sodium_init() < 0)
        return -1;
    return crypto_pwhash(key, LINK_KEY_BYTES, token, strlen(token), salt,
                         crypto_pwhash_OPSLIMIT_INTERACTIVE,
                         crypto_pwhash_MEMLIMIT_INTERACTIVE,
                         crypto_pwhash_ALG_ARGON2ID13) == 0 ? 0 : -1;
}

int link_key_derive(const char *token, unsigned char key[LINK_KEY_BYTES])
{
    /* A fixed salt: the token is the cluster's only secret, and both sides
     * must derive the same key from it alone. */
    static const unsigned char salt[crypto_pwhash_SALTBYTES] =
        "slaq-agent-link";
    return pwhash(token, salt, key);
}

int link_admin_key(const char *token, unsigned char key[LINK_KEY_BYTES])
{
    static const unsigned char salt[crypto_pwhash_SALTBYTES] =
        "slaq-admin-key";
    return pwhash(token, salt, key);
}

int link_sodium_init(void)
{
    return sodium_init() < 0 ? -1 : 0;
}

int link_node_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n < 1 || n > LINK_NODE_MAX || name[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
              ch == '_'))
            return 0;
    }
    return 1;
}

int link_node_key(const unsigned char cluster[LINK_KEY_BYTES],
                  const char *name, unsigned char key[LINK_KEY_BYTES])
{
    if (!link_node_name_ok(name))
        return -1;
    crypto_generichash_state st;
    crypto_generichash_init(&st, cluster, LINK_KEY_BYTES, LINK_KEY_BYTES);
    crypto_generichash_update(&st, (const unsigned char *)NODE_LABEL,
                              sizeof NODE_LABEL - 1);
    crypto_generichash_update(&st, (const unsigned char *)name,
                              strlen(name));
    crypto_generichash_final(&st, key, LINK_KEY_BYTES);
    sodium_memzero(&st, sizeof st);
    return 0;
}

int link_key_format(const char *node, const unsigned char key[LINK_KEY_BYTES],
                    char *out, size_t cap)
{
    char hex[2 * LINK_KEY_BYTES + 1];
    if (!link_node_name_ok(node))
        return -1;
    sodium_bin2hex(hex, sizeof hex, key, LINK_KEY_BYTES);
    int n = snprintf(out, cap, "%s:%s\n", node, hex);
    sodium_memzero(hex, sizeof hex);
    return n > 0 && (size_t)n < cap ? n : -1;
}

int link_key_parse(const char *text, char node[LINK_NODE_MAX + 1],
                   unsigned char key[LINK_KEY_BYTES], char *err,
                   size_t errlen)
{
    size_t len = strcspn(text, "\r\n");
    const char *colon = memchr(text, ':', len);
    size_t nlen = colon ? (size_t)(colon - text) : 0, got = 0;
    if (colon && nlen <= LINK_NODE_MAX) {
        memcpy(node, text, nlen);
        node[nlen] = 0;
    }
    if (!colon || nlen > LINK_NODE_MAX || !link_node_name_ok(node) ||
        len - nlen - 1 != 2 * LINK_KEY_BYTES ||
        sodium_hex2bin(key, LINK_KEY_BYTES, colon + 1, 2 * LINK_KEY_BYTES,
                       NULL, &got, NULL) != 0 || got != LINK_KEY_BYTES) {
        snprintf(err, errlen, "a node key file holds one line, NODE:KEY "
                 "(the node's name, a colon and %d hex digits), as `slaq "
                 "cluster node-key` writes it", 2 * LINK_KEY_BYTES);
        return -1;
    }
    return 0;
}

void link_forget(char **secret)
{
    if (!*secret)
        return;
    sodium_memzero(*secret, strlen(*secret));
    free(*secret);
    *secret = NULL;
}

/* 1 if s is an identity a session may claim (LINK_MAX_AS). */
static int valid_as(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= LINK_MAX_AS)
        return 0;
    for (; *s; s++)
        if (!(((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') ||
              (*s >= '0' && *s <= '9') || strchr(":._-", *s)))
            return 0;
    return 1;
}

int link_init(sd_link *l, link_kind kind, const char *as)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    if (!as)
        return 0;
    if (!valid_as(as))
        return -1;
    snprintf(l->as, sizeof l->as, "%s", as);
    return 0;
}

/* What tells the two kinds of link apart in every proof and key: the
 * label, and the names of the initiator and the responder. */
static const struct {
    const char *label, *initiator, *responder, *name;
    int version;
} kinds[] = {
    [LINK_AGENT] = {"slaq agent link 2: ", "agent", "controller",
                    "slaqd's agent link", 2},
    [LINK_SESSION] = {"slaq sealed session 1: ", "client", "slaqd",
                      "slaqd's sealed sessions", 1},
};

/* keyed BLAKE2b-256 of label || what || na || nc (|| as, in a session): a
 * proof or a key. what is "proof of ROLE" or "key ROLE to ROLE". */
static void kdf(const unsigned char key[LINK_KEY_BYTES], const char *what,
                const sd_link *l, unsigned char out[32])
{
    const char *label = kinds[l->kind].label;
    crypto_generichash_state st;
    crypto_generichash_init(&st, key, LINK_KEY_BYTES, 32);
    crypto_generichash_update(&st, (const unsigned char *)label,
                              strlen(label));
    crypto_generichash_update(&st, (const unsigned char *)what,
                              strlen(what));
    crypto_generichash_update(&st, l->na, sizeof l->na);
    crypto_generichash_update(&st, l->nc, sizeof l->nc);
    if (l->kind == LINK_SESSION)
        crypto_generichash_update(&st, (const unsigned char *)l->as,
                                  strlen(l->as));
    crypto_generichash_final(&st, out, 32);
    sodium_memzero(&st, sizeof st);
}

/* The proof of the initiator (responder 0) or of the responder. */
static void proof_of(const unsigned char key[LINK_KEY_BYTES], int responder,
                     const sd_link *l, unsigned char out[32])
{
    char what[64];
    snprintf(what, sizeof what, "proof of the %s", responder
             ? kinds[l->kind].responder : kinds[l->kind].initiator);
    kdf(key, what, l, out);
}

/* The key of one direction: from the initiator (to_responder) or back. */
static void direction_key(const unsigned char key[LINK_KEY_BYTES],
                          int to_responder, const sd_link *l,
                          unsigned char out[32])
{
    const char *i = kinds[l->kind].initiator, *r = kinds[l->kind].responder;
    char what[64];
    snprintf(what, sizeof what, "key %s to %s", to_responder ? i : r,
             to_responder ? r : i);
    kdf(key, what, l, out);
}

/* Copies a peer's text for a log line: printable ASCII only, at most 120
 * bytes, so that it carries no escape sequence into a terminal. */
static void printable(char *dst, size_t cap, const char *s)
{
    size_t k = 0;
    for (; s && *s && k + 1 < cap && k < 120; s++)
        dst[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    dst[k] = 0;
}

/* Parses a handshake line of the given type; NULL with err filled if it is
 * not one. An "error" from the peer is reported as what it said. */
static json_t *parse(const sd_link *l, const char *line, size_t len,
                     const char *type, char *err, size_t errlen)
{
    json_t *m = len <= LINK_MAX_HANDSHAKE ? json_loadb(line, len, 0, NULL)
                                          : NULL;
    const char *t = json_string_value(json_object_get(m, "type"));
    if (t && !strcmp(t, type))
        return m;
    char a[128], b[128];
    if (t && !strcmp(t, "error")) {
        printable(a, sizeof a, json_string_value(json_object_get(m,
                                                                 "code")));
        printable(b, sizeof b, json_string_value(json_object_get(m,
                                                                 "message")));
        snprintf(err, errlen, "it refused the handshake: %s: %s", a, b);
    } else if (t) {
        printable(a, sizeof a, t);
        snprintf(err, errlen, "it sent \"%s\" where \"%s\" was due (not "
                 "%s, version %d)", a, type, kinds[l->kind].name,
                 kinds[l->kind].version);
    } else {
        snprintf(err, errlen, "it sent a line that is not a %s message "
                 "(not %s, version %d)", type, kinds[l->kind].name,
                 kinds[l->kind].version);
    }
    json_decref(m);
    return NULL;
}

/* The hex field name of m as n bytes; -1 with err filled if it is not. */
static int hex_field(json_t *m, const char *name, unsigned char *bin,
                     size_t n, char *err, size_t errlen)
{
    const char *s = json_string_value(json_object_get(m, name));
    size_t got = 0;
    if (!s || strlen(s) != 2 * n ||
        sodium_hex2bin(bin, n, s, 2 * n, NULL, &got, NULL) != 0 || got != n) {
        snprintf(err, errlen, "field \"%s\" must be %zu hex digits", name,
                 2 * n);
        return -1;
    }
    return 0;
}

static int put_line(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int put_line(char *out, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, cap, fmt, ap);
    va_end(ap);
    return n > 0 && (size_t)n < cap ? n : -1;
}

/* Both directions' keys; the nonces are no longer needed after. */
static void open_link(sd_link *l, const unsigned char key[LINK_KEY_BYTES],
                      int controller)
{
    unsigned char a2c[32], c2a[32];
    direction_key(key, 1, l, a2c);
    direction_key(key, 0, l, c2a);
    memcpy(l->tx, controller ? c2a : a2c, 32);
    memcpy(l->rx, controller ? a2c : c2a, 32);
    sodium_memzero(a2c, sizeof a2c);
    sodium_memzero(c2a, sizeof c2a);
    l->txn = l->rxn = 0;
    l->state = LINK_OPEN;
}

int link_hello(sd_link *l, const char *node, char *out, size_t cap)
{
    char na[2 * LINK_NONCE_BYTES + 1];
    if (l->kind == LINK_AGENT && !link_node_name_ok(node))
        return -1;
    randombytes_buf(l->na, sizeof l->na);
    sodium_bin2hex(na, sizeof na, l->na, sizeof l->na);
    l->state = LINK_HELLO_SENT;
    if (l->kind == LINK_SESSION) /* as is checked: nothing to escape */
        return put_line(out, cap, "{\"type\":\"link_hello\",\"version\":"
                        "%d,\"nonce\":\"%s\",\"as\":\"%s\"}",
                        kinds[l->kind].version, na, l->as);
    snprintf(l->node, sizeof l->node, "%s", node);
    return put_line(out, cap, "{\"type\":\"link_hello\",\"version\":%d,"
                    "\"node\":\"%s\",\"nonce\":\"%s\"}",
                    kinds[l->kind].version, node, na);
}

/* An agent's hello's node (into l->node), or a session's identity (into
 * l->as); -1 with err filled if it is not one this version takes. */
static int hello_who(sd_link *l, json_t *m, char *err, size_t errlen)
{
    if (l->kind == LINK_SESSION) {
        const char *as = json_string_value(json_object_get(m, "as"));
        if (!valid_as(as)) {
            snprintf(err, errlen, "link_hello: field \"as\" must name who "
                     "the client is (\"admin\", or a user credential's "
                     "UID:EXPIRES:GENERATION)");
            return -1;
        }
        snprintf(l->as, sizeof l->as, "%s", as);
        return 0;
    }
    const char *node = json_string_value(json_object_get(m, "node"));
    if (!link_node_name_ok(node)) {
        snprintf(err, errlen, "link_hello: field \"node\" must name a node "
                 "(1 to %d letters, digits, '.', '-' or '_')", LINK_NODE_MAX);
        return -1;
    }
    snprintf(l->node, sizeof l->node, "%s", node);
    return 0;
}

int link_read_hello(sd_link *l, const char *line, size_t len, char *err,
                    size_t errlen)
{
    json_t *m = parse(l, line, len, "link_hello", err, errlen);
    if (!m)
        return -1;
    json_t *v = json_object_get(m, "version");
    int want = kinds[l->kind].version, rc = -1;
    if (l->kind == LINK_AGENT && json_is_integer(v) &&
        json_integer_value(v) == 1) {
        snprintf(err, errlen, "link_hello: version 1, an agent of an older "
                 "slaq holding the whole cluster's agent token; this "
                 "controller speaks version %d, where each node proves a "
                 "key of its own (--node-key-file, made by `slaq cluster "
                 "node-key`)", want);
        goto out;
    }
    if (!json_is_integer(v) || json_integer_value(v) != want) {
        snprintf(err, errlen, "link_hello: field \"version\" must be %d",
                 want);
        goto out;
    }
    if (hello_who(l, m, err, errlen) < 0 ||
        hex_field(m, "nonce", l->na, sizeof l->na, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    json_decref(m);
    return rc;
}

int link_challenge(sd_link *l, const unsigned char key[LINK_KEY_BYTES],
                   char *out, size_t cap)
{
    memcpy(l->key, key, LINK_KEY_BYTES);
    randombytes_buf(l->nc, sizeof l->nc);
    unsigned char proof[32];
    char nc[2 * LINK_NONCE_BYTES + 1], hp[65];
    proof_of(l->key, 1, l, proof);
    sodium_bin2hex(nc, sizeof nc, l->nc, sizeof l->nc);
    sodium_bin2hex(hp, sizeof hp, proof, sizeof proof);
    l->state = LINK_CHALLENGED;
    return put_line(out, cap, "{\"type\":\"link_challenge\",\"nonce\":\"%s\","
                    "\"proof\":\"%s\"}", nc, hp);
}

int link_on_hello(sd_link *l, const unsigned char cluster[LINK_KEY_BYTES],
                  const char *line, size_t len, char *out, size_t cap,
                  char *err, size_t errlen)
{
    unsigned char key[LINK_KEY_BYTES];
    if (l->kind != LINK_AGENT ||
        link_read_hello(l, line, len, err, errlen) < 0)
        return -1;
    link_node_key(cluster, l->node, key); /* the node the hello named */
    int rc = link_challenge(l, key, out, cap);
    sodium_memzero(key, sizeof key);
    return rc;
}

int link_on_challenge(sd_link *l, const unsigned char key[LINK_KEY_BYTES],
                      const char *line, size_t len, char *out, size_t cap,
                      char *err, size_t errlen)
{
    unsigned char given[32], want[32];
    json_t *m = parse(l, line, len, "link_challenge", err, errlen);
    if (!m)
        return -1;
    int rc = hex_field(m, "nonce", l->nc, sizeof l->nc, err, errlen);
    if (rc == 0)
        rc = hex_field(m, "proof", given, sizeof given, err, errlen);
    json_decref(m);
    if (rc < 0)
        return -1;
    proof_of(key, 1, l, want);
    if (sodium_memcmp(given, want, sizeof want) != 0) {
        if (l->kind == LINK_SESSION)
            snprintf(err, errlen, "it did not prove it holds the key of "
                     "this credential (not the slaqd that issued it, or a "
                     "wrong credential)");
        else
            snprintf(err, errlen, "it did not prove it holds node %s's key "
                     "(not the controller of the cluster this key was "
                     "issued for, or a key of an earlier cluster secret)",
                     l->node);
        return -1;
    }
    char hp[65];
    proof_of(key, 0, l, want);
    sodium_bin2hex(hp, sizeof hp, want, sizeof want);
    open_link(l, key, 0);
    return put_line(out, cap, "{\"type\":\"link_proof\",\"proof\":\"%s\"}",
                    hp);
}

int link_on_proof(sd_link *l, const char *line, size_t len, char *err,
                  size_t errlen)
{
    unsigned char given[32], want[32];
    json_t *m = parse(l, line, len, "link_proof", err, errlen);
    if (!m)
        return -1;
    int rc = hex_field(m, "proof", given, sizeof given, err, errlen);
    json_decref(m);
    if (rc < 0)
        return -1;
    proof_of(l->key, 0, l, want);
    if (sodium_memcmp(given, want, sizeof want) != 0) {
        if (l->kind == LINK_SESSION)
            snprintf(err, errlen, "a wrong proof of the credential");
        else
            snprintf(err, errlen, "a wrong proof of node %s's key", l->node);
        return -2;
    }
    open_link(l, l->key, 1);
    /* Only the direction keys are needed from now on. */
    sodium_memzero(l->key, sizeof l->key);
    return 0;
}

/* The nonce of the n-th line of a direction: n, little-endian. */
static void line_nonce(uint64_t n,
    unsigned char npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES])
{
    memset(npub, 0, crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
    for (int i = 0; i < 8; i++)
        npub[i] = (unsigned char)(n >> (8 * i));
}

size_t link_seal(sd_link *l, const char *s, size_t len, char *out)
{
    unsigned char npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    unsigned char *c = malloc(len + AEAD_ABYTES);
    if (!c)
        return 0;
    unsigned long long clen = 0;
    line_nonce(l->txn++, npub);
    crypto_aead_chacha20poly1305_ietf_encrypt(c, &clen,
                                              (const unsigned char *)s, len,
                                              NULL, 0, NULL, npub, l->tx);
    sodium_bin2base64(out, LINK_SEALED_LEN(len) + 1, c, (size_t)clen,
                      sodium_base64_VARIANT_ORIGINAL);
    free(c);
    return LINK_SEALED_LEN(len);
}

long link_open(sd_link *l, const char *line, size_t len, char *out,
               size_t cap)
{
    unsigned char npub[crypto_aead_chacha20poly1305_ietf_NPUBBYTES];
    size_t blen = 0;
    if (l->state != LINK_OPEN ||
        sodium_base642bin((unsigned char *)out, cap, line, len, NULL, &blen,
                          NULL, sodium_base64_VARIANT_ORIGINAL) != 0 ||
        blen < AEAD_ABYTES)
        return -1;
    unsigned long long mlen = 0;
    line_nonce(l->rxn, npub);
    if (crypto_aead_chacha20poly1305_ietf_decrypt(
            (unsigned char *)out, &mlen, NULL, (const unsigned char *)out,
            blen, NULL, 0, npub, l->rx) != 0)
        return -1;
    l->rxn++;
    return (long)mlen;
}

void link_wipe(sd_link *l)
{
    sodium_memzero(l, sizeof *l);
}
