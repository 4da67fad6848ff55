/*
 * test_link.c — the agent link (src/daemon/link.c): the handshake opens
 * both sides only when both hold the key, and a sealed line opens once, in
 * order, unaltered, in its own direction and connection. Sealed sessions
 * (LINK_SESSION) open the same way, bound to the identity claimed and
 * apart from agent links under the same key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/link.h"

static unsigned char key1[LINK_KEY_BYTES], key2[LINK_KEY_BYTES];

static int keys_setup(void **state)
{
    (void)state;
    if (link_key_derive("agent-secret-token-1", key1) < 0 ||
        link_key_derive("agent-secret-token-2", key2) < 0)
        return -1;
    return 0;
}

/* Runs the handshake between an agent holding ka and a controller holding
 * kc; returns what link_on_proof returned, or -10 if the agent refused
 * the controller. */
static int handshake(sd_link *agent, sd_link *ctl, const unsigned char *ka,
                     const unsigned char *kc)
{
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE],
         proof[LINK_MAX_HANDSHAKE], err[300];
    memset(agent, 0, sizeof *agent);
    memset(ctl, 0, sizeof *ctl);
    int n = link_hello(agent, hello, sizeof hello);
    assert_true(n > 0);
    int m = link_on_hello(ctl, kc, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m > 0);
    int p = link_on_challenge(agent, ka, chal, (size_t)m, proof,
                              sizeof proof, err, sizeof err);
    if (p < 0)
        return -10;
    return link_on_proof(ctl, kc, proof, (size_t)p, err, sizeof err);
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

static void test_handshake_with_one_key_opens_both_ways(void **state)
{
    (void)state;
    sd_link a, c;
    char buf[1024];
    assert_int_equal(handshake(&a, &c, key1, key1), 0);
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
    assert_int_equal(handshake(&a, &c, key1, key2), -10);
    assert_int_equal(a.state, LINK_HELLO_SENT);
}

static void test_controller_refuses_a_wrong_agent_proof(void **state)
{
    (void)state;
    sd_link a, c;
    char hello[LINK_MAX_HANDSHAKE], chal[LINK_MAX_HANDSHAKE], err[300];
    int n = link_hello(&a, hello, sizeof hello);
    memset(&c, 0, sizeof c);
    int m = link_on_hello(&c, key1, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m > 0);
    /* An agent without the key makes up its proof. */
    static const char fake[] = "{\"type\":\"link_proof\",\"proof\":\""
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}";
    assert_int_equal(link_on_proof(&c, key1, fake, sizeof fake - 1, err,
                                   sizeof err), -2);
    assert_int_not_equal(c.state, LINK_OPEN);
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
    static const char v2[] = "{\"type\":\"link_hello\",\"version\":2,"
        "\"nonce\":\"00112233445566778899aabbccddeeff00112233445566778899aab"
        "bccddeeff\"}";
    assert_int_equal(link_on_hello(&c, key1, v2, sizeof v2 - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "version"));
    static const char shortn[] = "{\"type\":\"link_hello\",\"version\":1,"
        "\"nonce\":\"0011\"}";
    assert_int_equal(link_on_hello(&c, key1, shortn, sizeof shortn - 1, out,
                                   sizeof out, err, sizeof err), -1);
    assert_non_null(strstr(err, "nonce"));
    /* A peer's error is reported without its control characters. */
    sd_link a;
    char hello[LINK_MAX_HANDSHAKE];
    link_hello(&a, hello, sizeof hello);
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
    assert_int_equal(handshake(&a, &c, key1, key1), 0);
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
    assert_int_equal(handshake(&a1, &c1, key1, key1), 0);
    assert_int_equal(handshake(&a2, &c2, key1, key1), 0);
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
    int n = link_hello(cl, hello, sizeof hello);
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
    return link_on_proof(sv, ks, proof, (size_t)p, err, sizeof err);
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
    /* A controller's challenge (agent link, key1) shown to a session's
     * client with the same key: not slaqd's proof. */
    memset(&c, 0, sizeof c);
    link_init(&cl, LINK_SESSION, "admin");
    int n = link_hello(&cl, hello, sizeof hello);
    int m = link_on_hello(&c, key1, hello, (size_t)n, chal, sizeof chal, err,
                          sizeof err);
    assert_true(m > 0);
    assert_int_equal(link_on_challenge(&cl, key1, chal, (size_t)m, proof,
                                       sizeof proof, err, sizeof err), -1);
    /* Two claims under one key: a proof of one is not the other's. */
    link_init(&cl, LINK_SESSION, "1001:1800000000:0");
    link_init(&sv, LINK_SESSION, NULL);
    n = link_hello(&cl, hello, sizeof hello);
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
        cmocka_unit_test(test_handshake_with_one_key_opens_both_ways),
        cmocka_unit_test(test_agent_refuses_a_controller_without_the_key),
        cmocka_unit_test(test_controller_refuses_a_wrong_agent_proof),
        cmocka_unit_test(test_a_clear_register_is_not_a_hello),
        cmocka_unit_test(test_a_line_opens_once_in_order_unaltered),
        cmocka_unit_test(test_a_line_of_another_connection_does_not_open),
        cmocka_unit_test(test_a_session_opens_for_its_claim_and_key_only),
        cmocka_unit_test(test_session_and_agent_proofs_differ_under_one_key),
    };
    return cmocka_run_group_tests(tests, keys_setup, NULL);
}
