/*
 * test_link.c — the agent link (src/daemon/link.c): a node's key is the
 * keyed hash of its name under the cluster key; the handshake opens both
 * sides only when the agent holds the key of the node its hello names
 * and the controller the cluster key it derives from; and a sealed line
 * opens once, in order, unaltered, in its own direction and connection.
 * Sealed sessions (LINK_SESSION) open the same way, bound to the
 * identity claimed and apart from agent links under the same key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "daemon/link.h"

/* Two clusters' keys, and node keys of the first: n1's and n2's. */
static unsigned char key1[LINK_KEY_BYTES], key2[LINK_KEY_BYTES];
static unsigned char n1k[LINK_KEY_BYTES], n2k[LINK_KEY_BYTES];

static int keys_setup(void **state)
{
    (void)state;
    if (link_key_derive("agent-secret-token-1", key1) < 0 ||
        link_key_derive("agent-secret-token-2", key2) < 0 ||
        link_node_key(key1, "n1", n1k) < 0 ||
        link_node_key(key1, "n2", n2k) < 0)
        return -1;
    return 0;
}

/* Runs the handshake between an agent of node `node` holding ka and a
 * controller holding the cluster key kc; returns what link_on_proof
 * returned, or -10 if the agent refused the controller. */
static int handshake(sd_link *agent, sd_link *ctl, const char *node,
                     const unsigned char *ka, const unsigned char *kc)
{
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE],
         proof[LINK_MAX_HANDSHAKE], err[300];
    memset(agent, 0, sizeof *agent);
    memset(ctl, 0, sizeof *ctl);
    int n = link_hello(agent, node, hello, sizeof hello);
    assert_true(n > 0);
    int m = link_on_hello(ctl, kc, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m > 0);
    assert_string_equal(ctl->node, node);
    int p = link_on_challenge(agent, ka, chal, (size_t)m, proof,
                              sizeof proof, err, sizeof err);
    if (p < 0)
        return -10;
    return link_on_proof(ctl, proof, (size_t)p, err, sizeof err);
}

static void hex(const unsigned char *b, size_t n, char *out)
{
    sodium_bin2hex(out, 2 * n + 1, b, n);
}

static void test_a_node_key_is_the_keyed_hash_of_its_name(void **state)
{
    (void)state;
    unsigned char cluster[LINK_KEY_BYTES], k[LINK_KEY_BYTES];
    char h[2 * LINK_KEY_BYTES + 1];
    for (int i = 0; i < LINK_KEY_BYTES; i++)
        cluster[i] = (unsigned char)i;
    /* docs/protocol.md's construction, computed apart (Python's hashlib:
     * blake2b(b"slaq node key 1: n1", digest_size=32, key=bytes(range(32))))
     */
    assert_int_equal(link_node_key(cluster, "n1", k), 0);
    hex(k, sizeof k, h);
    assert_string_equal(h, "42c04014b4f1d984956af71ba52e42a5"
                           "514ce12ff54ee2163b8e46c5631c460c");
    assert_int_equal(link_node_key(cluster, "n2", k), 0);
    hex(k, sizeof k, h);
    assert_string_equal(h, "e793805b8b62837cbe95864682252896"
                           "af09f4f07e90569699ea18ed49e98b8a");
    /* Another name or another cluster: another key. */
    unsigned char a[LINK_KEY_BYTES];
    assert_int_equal(link_node_key(key2, "n1", a), 0);
    assert_memory_not_equal(a, n1k, sizeof a);
    assert_memory_not_equal(n1k, n2k, sizeof n1k);
    assert_int_equal(link_node_key(key1, "n10", a), 0);
    assert_memory_not_equal(a, n1k, sizeof a);
}

static void test_only_node_names_are_taken(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", ".", "..", ".hidden", "../n1", "a/b", "n 1", "n1:x", "n\x1b",
        "caf\xc3\xa9",
        "0123456789012345678901234567890123456789012345678901234567890123",
    };
    unsigned char k[LINK_KEY_BYTES];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(link_node_name_ok(bad[i]));
        assert_int_equal(link_node_key(key1, bad[i], k), -1);
    }
    assert_false(link_node_name_ok(NULL));
    static const char *const good[] = {
        "n1", "node-07.cluster_a", "A",
        "012345678901234567890123456789012345678901234567890123456789012",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_true(link_node_name_ok(good[i]));
    sd_link a = {0};
    char out[LINK_MAX_HANDSHAKE];
    assert_int_equal(link_hello(&a, "n 1", out, sizeof out), -1);
}

static void test_a_key_file_round_trips_and_others_are_refused(void **state)
{
    (void)state;
    char text[LINK_KEY_TEXT_MAX], node[LINK_NODE_MAX + 1], err[300];
    unsigned char k[LINK_KEY_BYTES];
    int n = link_key_format("n1", n1k, text, sizeof text);
    assert_int_equal(n, 2 + 1 + 64 + 1);
    assert_int_equal(text[n - 1], '\n');
    assert_int_equal(link_key_parse(text, node, k, err, sizeof err), 0);
    assert_string_equal(node, "n1");
    assert_memory_equal(k, n1k, sizeof k);
    text[n - 1] = '\r'; /* a CRLF file */
    assert_int_equal(link_key_parse(text, node, k, err, sizeof err), 0);
    assert_int_equal(link_key_format("n/1", n1k, text, sizeof text), -1);
    assert_int_equal(link_key_format("n1", n1k, text, 10), -1);
    char h[2 * LINK_KEY_BYTES + 1], line[200];
    hex(n1k, sizeof n1k, h);
    static const char *const fmt[] = {
        "%.0s%s",         /* no node */
        "n1%.0s%s",       /* no colon */
        "n1:%.0s%.63s",   /* a digit short */
        "n1:%.0s%sff",    /* a byte long */
        "n/1:%.0s%s",     /* not a node's name */
        "n1:%.0s%s junk", /* more on the line */
        "%s",             /* empty */
    };
    for (size_t i = 0; i < sizeof fmt / sizeof *fmt; i++) {
        snprintf(line, sizeof line, fmt[i], "", h);
        assert_int_equal(link_key_parse(line, node, k, err, sizeof err), -1);
        assert_non_null(strstr(err, "NODE:KEY"));
    }
    h[5] = 'g'; /* not hex */
    snprintf(line, sizeof line, "n1:%s", h);
    assert_int_equal(link_key_parse(line, node, k, err, sizeof err), -1);
}

/* Seals s on from and opens it on to; the plaintext's length or -1. */
static long pass(sd_link *from, sd_link *to, const char *s, char *sealed)
{
    static char plain[4096];
    size_t n = link_seal(from, s, strlen(s), sealed);
    assert_int_equal(n, LINK_SEALED_LEN(strlen(s)));
    assert_int_equal(strlen(sealed), n);
    long k = link_open(to, sealed, n, plain, sizeof plain);
    if (k >= 0) {
        assert_int_equal((size_t)k, strlen(s));
        assert_memory_equal(plain, s, strlen(s));
    }
    return k;
}

static void test_a_nodes_key_opens_its_link_both_ways(void **state)
{
    (void)state;
    sd_link a, c;
    char buf[1024];
    assert_int_equal(handshake(&a, &c, "n1", n1k, key1), 0);
    assert_int_equal(a.state, LINK_OPEN);
    assert_int_equal(c.state, LINK_OPEN);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(pass(&a, &c, "{\"type\":\"heartbeat\"}", buf), 20);
        assert_true(pass(&c, &a, "{\"type\":\"allocs\",\"jobs\":[]}", buf)
                    > 0);
    }
    assert_true(pass(&a, &c, "", buf) == 0);
}

static void test_agent_refuses_a_controller_without_the_key(void **state)
{
    (void)state;
    sd_link a, c;
    /* Another cluster's controller. */
    assert_int_equal(handshake(&a, &c, "n1", n1k, key2), -10);
    assert_int_equal(a.state, LINK_HELLO_SENT);
    /* n1's key named as n2: the controller proves n2's key, and the agent
     * holding n1's does not take it (nor could it prove n2's). */
    assert_int_equal(handshake(&a, &c, "n2", n1k, key1), -10);
}

/* The proof a holder of key k alone can make as the controller for the
 * agent's hello a (docs/protocol.md): H_k(label, role, na, nc). */
static void forge_challenge(const sd_link *a, const unsigned char *k,
                            char *out, size_t cap)
{
    static const char lab[] = "slaq agent link 2: proof of the controller";
    unsigned char nc[LINK_NONCE_BYTES], proof[32];
    char hnc[2 * LINK_NONCE_BYTES + 1], hp[65];
    randombytes_buf(nc, sizeof nc);
    crypto_generichash_state st;
    crypto_generichash_init(&st, k, LINK_KEY_BYTES, 32);
    crypto_generichash_update(&st, (const unsigned char *)lab,
                              sizeof lab - 1);
    crypto_generichash_update(&st, a->na, sizeof a->na);
    crypto_generichash_update(&st, nc, sizeof nc);
    crypto_generichash_final(&st, proof, 32);
    hex(nc, sizeof nc, hnc);
    hex(proof, sizeof proof, hp);
    snprintf(out, cap, "{\"type\":\"link_challenge\",\"nonce\":\"%s\","
             "\"proof\":\"%s\"}", hnc, hp);
}

static void test_a_node_key_cannot_pose_as_the_controller_of_another_node(
    void **state)
{
    (void)state;
    sd_link a = {0};
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE],
         out[LINK_MAX_HANDSHAKE], err[300];
    /* n2's agent; the forger holds n1's key, and tries it as is and as
     * if it were a cluster key. */
    unsigned char as_cluster[LINK_KEY_BYTES];
    link_node_key(n1k, "n2", as_cluster);
    const unsigned char *tries[] = {n1k, as_cluster};
    for (size_t i = 0; i < 2; i++) {
        memset(&a, 0, sizeof a);
        assert_true(link_hello(&a, "n2", hello, sizeof hello) > 0);
        forge_challenge(&a, tries[i], chal, sizeof chal);
        assert_int_equal(link_on_challenge(&a, n2k, chal, strlen(chal), out,
                                           sizeof out, err, sizeof err), -1);
        assert_non_null(strstr(err, "node n2's key"));
        assert_int_not_equal(a.state, LINK_OPEN);
    }
    /* The same forgery under n2's own key is what the controller sends:
     * taken (the forger's only gap is the key). */
    memset(&a, 0, sizeof a);
    assert_true(link_hello(&a, "n2", hello, sizeof hello) > 0);
    forge_challenge(&a, n2k, chal, sizeof chal);
    assert_true(link_on_challenge(&a, n2k, chal, strlen(chal), out,
                                  sizeof out, err, sizeof err) > 0);
}

static void test_controller_refuses_a_wrong_agent_proof(void **state)
{
    (void)state;
    sd_link a, c;
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE], err[300];
    assert_int_equal(link_init(&a, LINK_AGENT, NULL), 0);
    int n = link_hello(&a, "n1", hello, sizeof hello);
    memset(&c, 0, sizeof c);
    int m = link_on_hello(&c, key1, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m > 0);
    /* An agent without the key makes up its proof. */
    static const char fake[] = "{\"type\":\"link_proof\",\"proof\":\""
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}";
    assert_int_equal(link_on_proof(&c, fake, sizeof fake - 1, err,
                                   sizeof err), -2);
    assert_int_not_equal(c.state, LINK_OPEN);
    assert_non_null(strstr(err, "node n1's key"));
    /* Nor does it open a sealed line. */
    char plain[64];
    assert_int_equal(link_open(&c, "AAAAAAAAAAAAAAAAAAAAAAAA", 24, plain,
                               sizeof plain), -1);
}

static void test_a_clear_register_is_not_a_hello(void **state)
{
    (void)state;
    sd_link c;
    char out[LINK_MAX_HANDSHAKE], err[300];
    static const char reg[] = "{\"type\":\"register\",\"token\":\"x\"}";
    memset(&c, 0, sizeof c);
    assert_int_equal(link_on_hello(&c, key1, reg, sizeof reg - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "link_hello"));
    static const char v3[] = "{\"type\":\"link_hello\",\"version\":3,"
        "\"node\":\"n1\",\"nonce\":\"00112233445566778899aabbccddeeff0011"
        "2233445566778899aabbccddeeff\"}";
    assert_int_equal(link_on_hello(&c, key1, v3, sizeof v3 - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "version"));
    /* An agent of version 1, which held the whole cluster's token, is
     * told what it now needs. */
    static const char v1[] = "{\"type\":\"link_hello\",\"version\":1,"
        "\"nonce\":\"00112233445566778899aabbccddeeff00112233445566778899aab"
        "bccddeeff\"}";
    assert_int_equal(link_on_hello(&c, key1, v1, sizeof v1 - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "version 1"));
    assert_non_null(strstr(err, "slaq cluster node-key"));
    /* No node, or one that names no node. */
    static const char nonode[] = "{\"type\":\"link_hello\",\"version\":2,"
        "\"nonce\":\"00112233445566778899aabbccddeeff00112233445566778899aab"
        "bccddeeff\"}";
    assert_int_equal(link_on_hello(&c, key1, nonode, sizeof nonode - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"node\""));
    static const char badnode[] = "{\"type\":\"link_hello\",\"version\":2,"
        "\"node\":\"../n1\",\"nonce\":\"00112233445566778899aabbccddeeff0011"
        "2233445566778899aabbccddeeff\"}";
    assert_int_equal(link_on_hello(&c, key1, badnode, sizeof badnode - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "\"node\""));
    static const char shortn[] = "{\"type\":\"link_hello\",\"version\":2,"
        "\"node\":\"n1\",\"nonce\":\"0011\"}";
    assert_int_equal(link_on_hello(&c, key1, shortn, sizeof shortn - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "nonce"));
    /* A peer's error is reported without its control characters. */
    sd_link a = {0};
    char hello[LINK_MAX_HANDSHAKE];
    link_init(&a, LINK_AGENT, NULL);
    link_hello(&a, "n1", hello, sizeof hello);
    static const char e[] = "{\"type\":\"error\",\"code\":\"x\",\"message\":"
                            "\"\\u001b[2Jhi\"}";
    assert_int_equal(link_on_challenge(&a, key1, e, sizeof e - 1, out,
                                       sizeof out, err, sizeof err), -1);
    assert_null(strchr(err, 0x1b));
    assert_non_null(strstr(err, "?[2Jhi"));
}

static void test_a_line_opens_once_in_order_unaltered(void **state)
{
    (void)state;
    sd_link a, c;
    char l1[256], l2[256], plain[256];
    assert_int_equal(handshake(&a, &c, "n1", n1k, key1), 0);
    size_t n1 = link_seal(&a, "{\"type\":\"report\",\"iter\":1}", 26, l1);
    size_t n2 = link_seal(&a, "{\"type\":\"report\",\"iter\":2}", 26, l2);
    /* Reordered: the second first. */
    assert_int_equal(link_open(&c, l2, n2, plain, sizeof plain), -1);
    /* Altered: one bit of the first. */
    l1[n1 / 2] ^= 0x01;
    assert_int_equal(link_open(&c, l1, n1, plain, sizeof plain), -1);
    l1[n1 / 2] ^= 0x01;
    assert_int_equal(link_open(&c, l1, n1, plain, sizeof plain), 26);
    /* Replayed. */
    assert_int_equal(link_open(&c, l1, n1, plain, sizeof plain), -1);
    assert_int_equal(link_open(&c, l2, n2, plain, sizeof plain), 26);
    /* Reflected: the agent's own line back to it. */
    size_t n3 = link_seal(&a, "{}", 2, l1);
    assert_int_equal(link_open(&a, l1, n3, plain, sizeof plain), -1);
    /* Not base64, or too short to carry a tag. */
    assert_int_equal(link_open(&c, "{\"type\":\"start\"}", 16, plain,
                               sizeof plain), -1);
    assert_int_equal(link_open(&c, "AAAA", 4, plain, sizeof plain), -1);
    /* The right line still opens after the refused ones. */
    assert_int_equal(link_open(&c, l1, n3, plain, sizeof plain), 2);
}

static void test_a_line_of_another_connection_does_not_open(void **state)
{
    (void)state;
    sd_link a1, c1, a2, c2;
    char l[256], plain[256];
    assert_int_equal(handshake(&a1, &c1, "n1", n1k, key1), 0);
    assert_int_equal(handshake(&a2, &c2, "n1", n1k, key1), 0);
    size_t n = link_seal(&a1, "{\"type\":\"heartbeat\"}", 20, l);
    assert_int_equal(link_open(&c2, l, n, plain, sizeof plain), -1);
    assert_int_equal(link_open(&c1, l, n, plain, sizeof plain), 20);
}

/* A session between a client claiming `as` under kc and slaqd holding ks
 * (the responder reads the claim from the hello): what link_on_proof
 * returned, -10 if the client refused slaqd, -20 if slaqd read another
 * claim. A client of kind ka talks to a responder of kind LINK_SESSION. */
static int session(sd_link *cl, sd_link *sv, link_kind ka, const char *as,
                   const unsigned char *kc, const unsigned char *ks)
{
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE],
         proof[LINK_MAX_HANDSHAKE], err[300];
    assert_int_equal(link_init(cl, ka, ka == LINK_SESSION ? as : NULL), 0);
    assert_int_equal(link_init(sv, LINK_SESSION, NULL), 0);
    int n = link_hello(cl, ka == LINK_AGENT ? "n1" : NULL, hello,
                       sizeof hello);
    assert_true(n > 0);
    if (link_read_hello(sv, hello, (size_t)n, err, sizeof err) < 0)
        return -30;
    if (strcmp(sv->as, as))
        return -20;
    int m = link_challenge(sv, ks, chal, sizeof chal);
    assert_true(m > 0);
    int p = link_on_challenge(cl, kc, chal, (size_t)m, proof, sizeof proof,
                              err, sizeof err);
    if (p < 0)
        return -10;
    return link_on_proof(sv, proof, (size_t)p, err, sizeof err);
}

static void test_a_session_opens_for_its_claim_and_key_only(void **state)
{
    (void)state;
    sd_link cl, sv;
    char buf[1024];
    assert_int_equal(session(&cl, &sv, LINK_SESSION, "1001:1800000000:0",
                             key1, key1), 0);
    assert_string_equal(sv.as, "1001:1800000000:0");
    assert_true(pass(&cl, &sv, "{\"type\":\"ls\"}", buf) > 0);
    assert_true(pass(&sv, &cl, "{\"ok\":true}", buf) > 0);
    /* slaqd without the claim's key does not prove itself. */
    assert_int_equal(session(&cl, &sv, LINK_SESSION, "admin", key1, key2),
                     -10);
    /* An agent's hello (no claim) is not a session's. */
    assert_int_equal(session(&cl, &sv, LINK_AGENT, "admin", key1, key1),
                     -30);
    /* A claim outside [A-Za-z0-9:._-] or too long is not made. */
    assert_int_equal(link_init(&cl, LINK_SESSION, "a\"b"), -1);
    assert_int_equal(link_init(&cl, LINK_SESSION, ""), -1);
    char long_as[LINK_MAX_AS + 1];
    memset(long_as, '1', LINK_MAX_AS);
    long_as[LINK_MAX_AS] = 0;
    assert_int_equal(link_init(&cl, LINK_SESSION, long_as), -1);
}

static void test_session_and_agent_proofs_differ_under_one_key(void **state)
{
    (void)state;
    sd_link c, cl, sv;
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE],
         proof[LINK_MAX_HANDSHAKE], err[300];
    /* A session's hello shown to a controller (agent link): refused, it
     * names no node and speaks another version. */
    memset(&c, 0, sizeof c);
    link_init(&cl, LINK_SESSION, "admin");
    int n = link_hello(&cl, NULL, hello, sizeof hello);
    int m = link_on_hello(&c, key1, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m < 0);
    /* A controller's challenge under key1 (an agent link read as one)
     * shown to a session's client with the same key: not slaqd's proof. */
    sd_link ag;
    link_init(&ag, LINK_AGENT, NULL);
    n = link_hello(&ag, "n1", hello, sizeof hello);
    memset(&c, 0, sizeof c);
    assert_true(link_read_hello(&c, hello, (size_t)n, err, sizeof err) == 0);
    link_hello(&cl, NULL, hello, sizeof hello);
    memcpy(c.na, cl.na, sizeof c.na); /* the session's nonce, as if its */
    m = link_challenge(&c, key1, chal, sizeof chal);
    assert_true(m > 0);
    assert_int_equal(link_on_challenge(&cl, key1, chal, (size_t)m, proof,
                                       sizeof proof, err, sizeof err), -1);
    /* Two claims under one key: a proof of one is not the other's. */
    link_init(&cl, LINK_SESSION, "1001:1800000000:0");
    link_init(&sv, LINK_SESSION, NULL);
    n = link_hello(&cl, NULL, hello, sizeof hello);
    assert_int_equal(link_read_hello(&sv, hello, (size_t)n, err, sizeof err),
                     0);
    snprintf(sv.as, sizeof sv.as, "1001:1800000001:0"); /* altered claim */
    m = link_challenge(&sv, key1, chal, sizeof chal);
    assert_int_equal(link_on_challenge(&cl, key1, chal, (size_t)m, proof,
                                       sizeof proof, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_node_key_is_the_keyed_hash_of_its_name),
        cmocka_unit_test(test_only_node_names_are_taken),
        cmocka_unit_test(test_a_key_file_round_trips_and_others_are_refused),
        cmocka_unit_test(test_a_nodes_key_opens_its_link_both_ways),
        cmocka_unit_test(test_agent_refuses_a_controller_without_the_key),
        cmocka_unit_test(
            test_a_node_key_cannot_pose_as_the_controller_of_another_node),
        cmocka_unit_test(test_controller_refuses_a_wrong_agent_proof),
        cmocka_unit_test(test_a_clear_register_is_not_a_hello),
        cmocka_unit_test(test_a_line_opens_once_in_order_unaltered),
        cmocka_unit_test(test_a_line_of_another_connection_does_not_open),
        cmocka_unit_test(test_a_session_opens_for_its_claim_and_key_only),
        cmocka_unit_test(test_session_and_agent_proofs_differ_under_one_key),
    };
    return cmocka_run_group_tests(tests, keys_setup, NULL);
}
