/*
 * test_batch_receipts.c -- batch receipts (Receipt form 2, docs/formats.md section 14): the
 * group's tree (decisiond/d_batchtree.c) against the log's own RFC 9162 code, the signer's
 * purpose 5 (its message checked like every purpose's), the wire's strict checks of the batch
 * fields, and sworn-verify on records whose allows share one signature per group, with the ways
 * a dishonest operator could try to make it pass a receipt that does not prove its entry.
 *
 * Records are made by the real log tools (record_fixture.h) and checked by the real
 * `sworn-verify` with a trust policy naming a P-256 receipt key; the receipts are signed here with
 * that key over the batch TBS. The genuine record (three groups: four allows with a deny among
 * them, one alone, three) passes. Then, one case each, each failing `receipts` with a named
 * reason at the entry:
 *   - a path for another entry (the neighbour's receipt, or its path under this index):
 *     receipt-invalid;
 *   - a root signed for another group (the signature of group 1 on a receipt of group 3):
 *     receipt-invalid;
 *   - the index or the size changed (the path still of the right length): receipt-invalid;
 *   - a path one hash short or one hash long: receipt-malformed;
 *   - an index not below the size, a size 0 or over 256, created or signature_params in form 2,
 *     batch fields in a form-0 receipt: receipt-malformed;
 *   - a form-0 signature (purpose 2 over the leaf) presented as a batch of one: receipt-invalid;
 *   - a batch signature with the wrong purpose prefix (the receipt prefix over the root, or the
 *     batch prefix without the size): receipt-invalid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "d_batchtree.h"
#include "encoding.h"
#include "err.h"
#include "frame.h"
#include "merkle.h"
#include "record_fixture.h"
#include "sig_base.h"
#include "sv_merkle.h"
#include "sigscheme.h"
#include "sv_util.h"
#include "sworn.pb-c.h"
#include "ipc.h"
#include "testutil.h"
#include "verify_fixture.h"

#define ORIGIN "batch.sworn.example/log"
#define KEY_NAME "batch.sworn.example"
#define T0 1764633600000ull

static const char *log_bin, *verify_bin;

/* --- the tree, the purpose, the wire --------------------------------------------------------- */

/* Every size 1..256 and every index: the root is the log's MTH of the leaves, and each path is
 * an inclusion proof that the log's own verifier accepts, of the length the wire demands. */
static void test_tree_matches_rfc9162(void **state)
{
    static struct d_batchtree t;
    static uint8_t items[SWORN_BATCH_ITEMS_MAX][32], leaves[SWORN_BATCH_ITEMS_MAX][32];
    uint8_t root[32], want[32], path[D_BATCHTREE_PATH_MAX][32];

    (void)state;
    for (unsigned i = 0; i < SWORN_BATCH_ITEMS_MAX; i++) {
        memset(items[i], (int)i, 32);
        items[i][31] = (uint8_t)(i * 7);
        sworn_merkle_leaf_hash(items[i], 32, leaves[i]);
    }
    for (uint32_t n = 1; n <= SWORN_BATCH_ITEMS_MAX; n++) {
        assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, n), 0);
        d_batchtree_root(&t, root);
        sworn_merkle_root_of_leaves(&leaves[0][0], n, want);
        assert_memory_equal(root, want, 32);
        for (uint32_t i = 0; i < n; i++) {
            size_t k = d_batchtree_path(&t, i, path);

            assert_int_equal(k, sworn_merkle_inclusion_proof_len(i, n));
            assert_int_equal(k, sworn_frame_batch_path_len(i, n));
            assert_true(k <= D_BATCHTREE_PATH_MAX);
            assert_int_equal(sworn_merkle_verify_inclusion(i, n, leaves[i], &path[0][0], k, root),
                             0);
        }
    }
    assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, 0), -1);
    assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, 257), -1);
}

/* Red team of issue 17: no inclusion path of a group's tree is valid for two places. For every
 * size up to 96 (and, beyond, the neighbours and the ends), item i's genuine path, walked by the
 * verifier's own code (verifier/sv_merkle.c) from any other index, or from another item's leaf at
 * index i, never gives the root. A walk at another size may give it (index 0 of 3 and of 4 walk
 * alike): that is why the size is in the signed message (test_index_size_path). */
static void test_rt17_no_path_aliasing(void **state)
{
    static struct d_batchtree t;
    static uint8_t items[SWORN_BATCH_ITEMS_MAX][32], leaves[SWORN_BATCH_ITEMS_MAX][32];
    uint8_t root[32], got[32], path[D_BATCHTREE_PATH_MAX][32];
    char why[SV_WHY];

    (void)state;
    for (unsigned i = 0; i < SWORN_BATCH_ITEMS_MAX; i++) {
        sv_sha256(&i, sizeof(i), items[i]);
        sworn_merkle_leaf_hash(items[i], 32, leaves[i]);
    }
    for (uint32_t n = 1; n <= SWORN_BATCH_ITEMS_MAX; n++) {
        assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, n), 0);
        d_batchtree_root(&t, root);
        for (uint32_t i = 0; i < n; i++) {
            size_t k = d_batchtree_path(&t, i, path);

            assert_int_equal(
                sv_inclusion_root(i, n, leaves[i], (const uint8_t(*)[SV_HASH])path, k, got, why),
                0);
            assert_memory_equal(got, root, 32);
            for (uint32_t j = 0; j < n; j++) {
                if (j == i || (n > 96 && j != 0 && j != n - 1 && j + 1 != i && j != i + 1))
                    continue;
                if (sv_inclusion_root(j, n, leaves[i], (const uint8_t(*)[SV_HASH])path, k, got,
                                      why) == 0 &&
                    memcmp(got, root, 32) == 0)
                    fail_msg("item %u's path of a group of %u also proves index %u", i, n, j);
                if (sv_inclusion_root(i, n, leaves[j], (const uint8_t(*)[SV_HASH])path, k, got,
                                      why) == 0 &&
                    memcmp(got, root, 32) == 0)
                    fail_msg("item %u's path of a group of %u also proves item %u", i, n, j);
            }
        }
    }
}

/* docs/formats.md section 14's worked example, byte for byte: three items (the bytes 00..1f,
 * 20..3f, 40..5f), their root, item 1's path and the TBS the signer signs. */
static void test_worked_example(void **state)
{
    static struct d_batchtree t;
    uint8_t items[3][32], root[32], path[D_BATCHTREE_PATH_MAX][32], tbs[SWORN_SIGNER_TBS_MAX],
        msg[SWORN_BATCH_MSG_LEN];
    size_t len = 0;
    char hex[2 * 52 + 1];

    (void)state;
    for (int i = 0; i < 96; i++)
        items[i / 32][i % 32] = (uint8_t)i;
    assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, 3), 0);
    d_batchtree_root(&t, root);
    sworn_hex_encode(root, 32, hex, sizeof(hex));
    assert_string_equal(hex, "5637f26ba780a8da762393735ccdd7206d5e198a33dec95e4dec4b6c98a9d6c8");
    assert_int_equal(d_batchtree_path(&t, 1, path), 2);
    sworn_hex_encode(path[0], 32, hex, sizeof(hex));
    assert_string_equal(hex, "699cacdb4c39d8e0bb1223352765a7f7acdc51dec6694f7b54c3d0a47f0cc409");
    sworn_hex_encode(path[1], 32, hex, sizeof(hex));
    assert_string_equal(hex, "8771f35a40a8c2f773cd1dc646cb5d12cea91912bf3a7137aff8d32c74d45acb");
    assert_int_equal(d_batchtree_path(&t, 2, path), 1);
    sworn_hex_encode(path[0], 32, hex, sizeof(hex));
    assert_string_equal(hex, "8e9bd8dc69d64fab1bb196d042c59cfd1dfb8de6b6eedfc42b3e217d67908b2c");
    d_batchtree_message(3, root, msg);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, sizeof(msg), tbs, &len), 0);
    assert_int_equal(len, 52);
    sworn_hex_encode(tbs, 52, hex, sizeof(hex));
    assert_string_equal(hex, "ff73776f726e2f763120626174636800"
                             "00000003"
                             "5637f26ba780a8da762393735ccdd7206d5e198a33dec95e4dec4b6c98a9d6c8");
    /* Form 3's item: SHA-256 of section 13's worked example base (428 bytes). */
    {
        static uint8_t base[SWORN_SIGBASE_MAX];
        uint8_t leaf[32], body[32], item[32];
        char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
        size_t base_len = 0, plen = 0;
        const char *why = NULL;
        struct sworn_httpsig_request h = {"POST",      "https", "api.example", 443,
                                          "/v1/x?a=b", body,    leaf};

        for (int i = 0; i < 32; i++) {
            body[i] = (uint8_t)i;
            leaf[i] = (uint8_t)(0x80 + i);
        }
        assert_int_equal(
            sworn_httpsig_base(&h, 1764633600,
                               "c3a1b2d4e5f60718293a4b5c6d7e8f90112233445566778899aabbccddeeff00",
                               base, sizeof(base), &base_len, params, sizeof(params), &plen, &why),
            0);
        assert_int_equal(base_len, 428);
        SHA256(base, base_len, item);
        sworn_hex_encode(item, 32, hex, sizeof(hex));
        assert_string_equal(hex,
                            "3a15036674b8753ebbe918c3ea47d944ed2060c0af6f454820e934f7c821c4f2");
        sworn_merkle_leaf_hash(item, 32, item);
        sworn_hex_encode(item, 32, hex, sizeof(hex));
        assert_string_equal(hex,
                            "e2e109ed99615f98821a9ebf018ba515669f2c0950cd1620cd96bbe4a25a4279");
    }
}

/* Purpose 5: exactly u32 size (1..256) || 32-byte root, under its own prefix. */
static void test_signer_purpose(void **state)
{
    uint8_t msg[40] = {0, 0, 0, 3}, tbs[SWORN_SIGNER_TBS_MAX];
    size_t len = 0;

    (void)state;
    assert_true(sworn_sign_purpose_known(SWORN_PURPOSE_BATCH));
    memset(msg + 4, 0xab, 32);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 36, tbs, &len), 0);
    assert_int_equal(len, 52);
    assert_memory_equal(tbs, "\xffsworn/v1 batch\0", 16);
    assert_memory_equal(tbs + 16, msg, 36);
    /* the wrong length, a size of 0 or over 256: refused before any device call */
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 32, tbs, &len), -1);
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 37, tbs, &len), -1);
    msg[3] = 0;
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 36, tbs, &len), -1);
    msg[2] = 1;
    msg[3] = 1; /* 257 */
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 36, tbs, &len), -1);
    msg[2] = 1;
    msg[3] = 0; /* 256 */
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_BATCH, msg, 36, tbs, &len), 0);
    /* a receipt (purpose 2) of the same 32 bytes is another TBS */
    assert_int_equal(sworn_signer_tbs(SWORN_PURPOSE_RECEIPT, msg + 4, 32, tbs, &len), 0);
    assert_int_equal(len, 50);
    /* 7 (a conformance report) is the last purpose; 8 is none. */
    assert_int_equal(sworn_sign_purpose_known(7), 1);
    assert_int_equal(sworn_ipc_purpose_allowed(7), 1);
    assert_int_equal(sworn_sign_purpose_known(8), 0);
    /* 6 (cosignature) is known, but decisiond's signer process is never asked for it. */
    assert_int_equal(sworn_sign_purpose_known(6), 1);
    assert_int_equal(sworn_ipc_purpose_allowed(6), 0);
    assert_int_equal(sworn_ipc_purpose_allowed(SWORN_PURPOSE_BATCH), 1);
}

static void wire_receipt(Sworn__V1__Receipt *r, uint8_t *key_id, uint8_t *sig, uint8_t *path)
{
    sworn__v1__receipt__init(r);
    r->key_id.data = key_id;
    r->key_id.len = 32;
    r->signature.data = sig;
    r->signature.len = 70;
    r->alg = 1;
    r->form = 2;
    r->batch_index = 2;
    r->batch_size = 5;
    r->batch_path.data = path;
    r->batch_path.len = 32 * sworn_frame_batch_path_len(2, 5); /* 3 */
}

/* The strict decoder's bounds: index < size <= 256, the path exactly the proof's length. */
static void test_wire_bounds(void **state)
{
    static uint8_t key_id[32], sig[72], path[9 * 32];
    Sworn__V1__Receipt r;

    (void)state;
    wire_receipt(&r, key_id, sig, path);
    assert_int_equal(r.batch_path.len, 96);
    assert_int_equal(sworn_frame_check_receipt(&r), 0);
    r.batch_path.len -= 32; /* one hash short */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    r.batch_path.len += 64; /* one hash long */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    r.batch_path.len = 95; /* not whole hashes */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    wire_receipt(&r, key_id, sig, path);
    r.batch_index = 5; /* not below the size */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    wire_receipt(&r, key_id, sig, path);
    r.batch_size = 0;
    r.batch_index = 0;
    r.batch_path.len = 0;
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    wire_receipt(&r, key_id, sig, path);
    r.batch_size = 257;
    r.batch_index = 0;
    r.batch_path.len = 9 * 32;
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    wire_receipt(&r, key_id, sig, path);
    r.batch_size = 256;
    r.batch_index = 255;
    r.batch_path.len = 8 * 32;
    assert_int_equal(sworn_frame_check_receipt(&r), 0);
    r.batch_size = 1; /* a group of one: no path */
    r.batch_index = 0;
    r.batch_path.len = 0;
    assert_int_equal(sworn_frame_check_receipt(&r), 0);
    r.created = 1764633600; /* form 2 has no created */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    wire_receipt(&r, key_id, sig, path);
    r.form = 0; /* batch fields in a digest receipt */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    r.form = 4; /* no such form */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    /* form 3: form 2's batch fields with form 1's r||s, created and params */
    wire_receipt(&r, key_id, sig, path);
    r.form = 3;
    r.signature.len = 64;
    r.created = 1764633600;
    r.signature_params = "(\"@method\");created=1764633600";
    assert_int_equal(sworn_frame_check_receipt(&r), 0);
    r.signature.len = 70; /* DER */
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    r.signature.len = 64;
    r.created = 0;
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
    r.created = 1764633600;
    r.batch_path.len += 32;
    assert_int_equal(sworn_frame_check_receipt(&r), -1);
}

/* The fuzz seeds of the batch fields (tests/fuzz/corpus/frame/): the allows decode, the others
 * are refused by the strict decoder, as their names say. */
static void test_fuzz_seeds(void **state)
{
    static const struct {
        const char *name;
        int ok;
    } seeds[] = {{"reply-allow-batch-form2", 1},
                 {"reply-allow-batch-form3", 1},
                 {"bad-reply-allow-batch-path-short", 0},
                 {"bad-reply-allow-batch-index-size", 0},
                 {"bad-reply-allow-batch-size-257", 0}};

    (void)state;
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        char path[1024];
        size_t len = 0;
        uint8_t *b;
        Sworn__V1__DecisionReply *r;

        snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/frame/%s", sworn_test_source_dir(),
                 seeds[i].name);
        b = (uint8_t *)sworn_test_read_file(path, &len);
        assert_true(len > 4);
        r = sworn_frame_unpack_reply(b + 4, len - 4);
        if ((r != NULL) != seeds[i].ok)
            fail_msg("%s: %s", seeds[i].name, r != NULL ? "decoded" : sworn_err_msg());
        if (r != NULL) {
            assert_non_null(r->decision->receipt);
            assert_true(r->decision->receipt->form >= 2);
            sworn__v1__decision_reply__free_unpacked(r, NULL);
        }
        free(b);
    }
}

/* --- records for sworn-verify ------------------------------------------------------------------
 */

struct fx {
    char *dir;
    EVP_PKEY *key;
    uint8_t spki[91];
    uint8_t key_id[32];
    char spki_b64[160];
    uint8_t digest[32];
};

static void policy_loaded(const struct fx *f, struct sworn_record *b)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded pl = SWORN__V1__POLICY_LOADED__INIT;

    pl.digest.data = (uint8_t *)f->digest;
    pl.digest.len = 32;
    pl.source = "/etc/sworn/policy.yaml";
    pl.time_unix_ms = T0;
    pl.version = 1;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &pl;
    sworn_record_add(b, &e);
}

/* A tcp.connect decision (a digest receipt's kind of allow), as decisiond writes it. */
static void decision(const struct fx *f, struct sworn_record *b, const char *id,
                     Sworn__V1__Effect effect, unsigned port, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest rq = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT;
    char raw[128];
    uint8_t raw_sha[32];

    pr.id = "agent-1";
    rs.scheme = "tcp";
    rs.host = "db.example";
    rs.port = port;
    rs.path = "";
    snprintf(raw, sizeof(raw), "tcp://db.example:%u", port);
    sv_sha256(raw, strlen(raw), raw_sha);
    rq.request_id = (char *)id;
    rq.principal = &pr;
    rq.operation = "tcp.connect";
    rq.resource = &rs;
    rq.time_unix_ms = t_ms;
    d.request = &rq;
    d.effect = effect;
    d.rule_id = "r";
    d.reason = "rule r matched";
    d.policy_digest.data = (uint8_t *)f->digest;
    d.policy_digest.len = 32;
    d.time_unix_ms = t_ms;
    d.canonical_resource = &rs;
    d.raw_target_sha256.data = raw_sha;
    d.raw_target_sha256.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    sworn_record_add(b, &e);
}

static void sign_p256(const struct fx *f, const uint8_t *msg, size_t len, uint8_t *der,
                      size_t *der_len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    *der_len = 80;
    assert_int_equal(EVP_DigestSignInit(c, NULL, EVP_sha256(), NULL, f->key), 1);
    assert_int_equal(EVP_DigestSign(c, der, der_len, msg, len), 1);
    EVP_MD_CTX_free(c);
}

/* One group as decisiond seals it: its allows' entries, the tree of their leaf hashes, one
 * signature over FF "sworn/v1 batch" 00 || u32 n || root. */
struct group {
    size_t entry[8]; /* the record's entries that are the items, in item order */
    uint32_t n;
    struct d_batchtree t;
    uint8_t root[32];
    uint8_t sig[80];
    size_t sig_len;
};

static void seal(const struct fx *f, const struct sworn_record *b, struct group *g)
{
    uint8_t items[8][32], tbs[52];

    for (uint32_t i = 0; i < g->n; i++)
        sworn_record_leaf(b, g->entry[i], items[i]);
    assert_int_equal(d_batchtree_build(&g->t, (const uint8_t(*)[32])items, g->n), 0);
    d_batchtree_root(&g->t, g->root);
    memcpy(tbs, "\xffsworn/v1 batch\0", 16);
    d_batchtree_message(g->n, g->root, tbs + 16);
    sign_p256(f, tbs, sizeof(tbs), g->sig, &g->sig_len);
}

/* How a receipt is to be made wrong (all zero: the genuine one). */
struct twist {
    int index_delta, size_delta, path_delta; /* added to index, size, path hashes */
    const struct group *sig_of;              /* take this group's signature */
    int path_of;                             /* 1 + the item whose path to store */
    int created;                             /* set created */
};

/* The receipt of item i of group g, twisted by w, on that item's entry. */
static void batch_receipt(const struct fx *f, struct sworn_record *b, const struct group *g,
                          uint32_t i, const struct twist *w)
{
    static const struct twist none;
    uint8_t path[D_BATCHTREE_PATH_MAX + 1][32];
    size_t k;
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;

    if (w == NULL)
        w = &none;
    k = d_batchtree_path(&g->t, w->path_of != 0 ? (uint32_t)(w->path_of - 1) : i, path);
    if (w->path_delta > 0)
        memset(path[k], 0x5a, 32);
    k = (size_t)((int)k + w->path_delta);
    r.key_id.data = (uint8_t *)f->key_id;
    r.key_id.len = 32;
    r.alg = 1;
    r.form = 2;
    r.signature.data = (uint8_t *)(w->sig_of != NULL ? w->sig_of->sig : g->sig);
    r.signature.len = w->sig_of != NULL ? w->sig_of->sig_len : g->sig_len;
    r.batch_index = (uint32_t)((int)i + w->index_delta);
    r.batch_size = (uint32_t)((int)g->n + w->size_delta);
    r.batch_path.data = &path[0][0];
    r.batch_path.len = 32 * k;
    r.created = w->created ? T0 / 1000 : 0;
    sworn_record_put_receipt(b, g->entry[i], &r);
}

enum { E_POLICY, E_A1, E_A2, E_A3, E_DENY, E_A4, E_B1, E_C1, E_C2, E_C3, E_COUNT };

static struct group g1 = {.entry = {E_A1, E_A2, E_A3, E_A4}, .n = 4};
static struct group g2 = {.entry = {E_B1}, .n = 1};
static struct group g3 = {.entry = {E_C1, E_C2, E_C3}, .n = 3};

/* The genuine record: three groups (4 allows and a deny recorded among them; 1; 3). */
static void good(const struct fx *f, struct sworn_record *b)
{
    policy_loaded(f, b);
    for (unsigned i = E_A1; i < E_COUNT; i++) {
        char id[16];

        snprintf(id, sizeof(id), "req-%u", i);
        decision(f, b, id,
                 i == E_DENY ? SWORN__V1__EFFECT__EFFECT_DENY : SWORN__V1__EFFECT__EFFECT_ALLOW,
                 5400 + i, T0 + 1000 * i);
    }
    seal(f, b, &g1);
    seal(f, b, &g2);
    seal(f, b, &g3);
    for (uint32_t i = 0; i < g1.n; i++)
        batch_receipt(f, b, &g1, i, NULL);
    batch_receipt(f, b, &g2, 0, NULL);
    for (uint32_t i = 0; i < g3.n; i++)
        batch_receipt(f, b, &g3, i, NULL);
}

static void expect(struct fx *f, const char *name,
                   void (*change)(struct fx *, struct sworn_record *), const char *reason,
                   const char *item)
{
    const struct sworn_record_log where = {log_bin, f->dir, ORIGIN, KEY_NAME, f->spki_b64};
    struct sworn_record b = {0};
    char pn[128];
    json_object *rep;

    good(f, &b);
    if (change != NULL)
        change(f, &b);
    sworn_record_make(&where, name, &b, NULL);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    rep = sworn_verify_json(verify_bin, f->dir, pn, name, NULL, reason == NULL ? 0 : 1, 0);
    if (reason == NULL) {
        sworn_verify_expect_pass(rep, "receipts");
        sworn_verify_expect_pass(rep, "entries");
        assert_int_equal(
            json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"), "count")),
            8);
    } else {
        sworn_verify_expect_fail(rep, "receipts", reason, item);
    }
    json_object_put(rep);
    sworn_record_free(&b);
}

/* --- the changes ------------------------------------------------------------------------------ */

static void twisted(struct fx *f, struct sworn_record *b, const struct group *g, uint32_t i,
                    struct twist w)
{
    batch_receipt(f, b, g, i, &w);
}

/* Entry A2 carries A1's receipt (same group, same signature, A1's path and index). */
static void neighbours_receipt(struct fx *f, struct sworn_record *b)
{
    (void)f;
    free(b->r[E_A2]);
    b->r[E_A2] = malloc(b->rlen[E_A1]);
    assert_non_null(b->r[E_A2]);
    memcpy(b->r[E_A2], b->r[E_A1], b->rlen[E_A1]);
    b->rlen[E_A2] = b->rlen[E_A1];
}

/* A2's index, A3's path (both of length 2 in a tree of 4). */
static void path_of_another(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g1, 1, (struct twist){.path_of = 3});
}

/* C1's index and path, group 1's signature. */
static void root_of_another_group(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g3, 0, (struct twist){.sig_of = &g1});
}

/* B1 (a group of one) with group 1's signature. */
static void single_with_other_sig(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g2, 0, (struct twist){.sig_of = &g1});
}

static void index_changed(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g1, 1, (struct twist){.index_delta = 1}); /* 1 -> 2 of 4: path of 2 still */
}

static void size_changed(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g3, 0, (struct twist){.size_delta = 1}); /* 0 of 3 -> of 4: path of 2 still */
}

static void path_short(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g1, 0, (struct twist){.path_delta = -1});
}

static void path_long(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g1, 0, (struct twist){.path_delta = 1});
}

static void index_not_below_size(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g2, 0, (struct twist){.index_delta = 1});
}

static void size_zero(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g2, 0, (struct twist){.size_delta = -1});
}

static void size_over(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g2, 0, (struct twist){.size_delta = 256});
}

static void created_in_form2(struct fx *f, struct sworn_record *b)
{
    twisted(f, b, &g3, 2, (struct twist){.created = 1});
}

/* A genuine digest receipt (form 0) of B1 with batch fields added. */
static void batch_fields_in_form0(struct fx *f, struct sworn_record *b)
{
    uint8_t tbs[50], der[80], path[32] = {0};
    size_t der_len;
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;

    memcpy(tbs, "\xffsworn/v1 receipt\0", 18);
    sworn_record_leaf(b, E_B1, tbs + 18);
    sign_p256(f, tbs, sizeof(tbs), der, &der_len);
    r.key_id.data = f->key_id;
    r.key_id.len = 32;
    r.alg = 1;
    r.signature.data = der;
    r.signature.len = der_len;
    r.batch_size = 2;
    r.batch_path.data = path;
    r.batch_path.len = 32;
    sworn_record_put_receipt(b, E_B1, &r);
}

/* The form-0 signature over B1's leaf, presented as a batch of one (form 2, no path). */
static void form0_sig_as_batch(struct fx *f, struct sworn_record *b)
{
    uint8_t tbs[50];
    struct group g = g2;

    memcpy(tbs, "\xffsworn/v1 receipt\0", 18);
    sworn_record_leaf(b, E_B1, tbs + 18);
    sign_p256(f, tbs, sizeof(tbs), g.sig, &g.sig_len);
    batch_receipt(f, b, &g, 0, NULL);
}

/* The group's root signed under the receipt prefix (purpose 2 over the root). */
static void receipt_prefix_over_root(struct fx *f, struct sworn_record *b)
{
    uint8_t tbs[50];
    struct group g = g1;

    memcpy(tbs, "\xffsworn/v1 receipt\0", 18);
    memcpy(tbs + 18, g.root, 32);
    sign_p256(f, tbs, sizeof(tbs), g.sig, &g.sig_len);
    batch_receipt(f, b, &g, 2, NULL);
}

/* The batch prefix over the root without the group size. */
static void batch_prefix_without_size(struct fx *f, struct sworn_record *b)
{
    uint8_t tbs[48];
    struct group g = g3;

    memcpy(tbs, "\xffsworn/v1 batch\0", 16);
    memcpy(tbs + 16, g.root, 32);
    sign_p256(f, tbs, sizeof(tbs), g.sig, &g.sig_len);
    batch_receipt(f, b, &g, 1, NULL);
}

/* --- form 3: batch http-message receipts ------------------------------------------------------ */

/* A GET https://api.example.com<path> decision, as decisiond writes it. */
static void http_decision(const struct fx *f, struct sworn_record *b, const char *id,
                          const char *path, uint64_t t_ms)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord d = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__AuthorizationRequest rq = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource rs = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;
    char raw[256];
    uint8_t raw_sha[32];

    pr.id = "agent-1";
    rs.scheme = "https";
    rs.host = "api.example.com";
    rs.port = 443;
    rs.path = (char *)path;
    snprintf(raw, sizeof(raw), "https://api.example.com:443%s", path);
    sv_sha256(raw, strlen(raw), raw_sha);
    cx.method = "GET";
    rq.request_id = (char *)id;
    rq.principal = &pr;
    rq.operation = "http.request";
    rq.resource = &rs;
    rq.context = &cx;
    rq.time_unix_ms = t_ms;
    d.request = &rq;
    d.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    d.rule_id = "r";
    d.reason = "rule r matched";
    d.policy_digest.data = (uint8_t *)f->digest;
    d.policy_digest.len = 32;
    d.time_unix_ms = t_ms;
    d.canonical_resource = &rs;
    d.raw_target_sha256.data = raw_sha;
    d.raw_target_sha256.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &d;
    sworn_record_add(b, &e);
}

enum { H_POLICY, H_A, H_B, H_TCP, H_C, H_COUNT };
static const char *const h_path[H_COUNT] = {"", "/v1/a?x=1", "/v1/b", "", "/v1/c"};
#define H_T(i) (T0 + 1000 * (i) + 250)

/* sworn's base of entry i (a GET of h_path[i], created its time in seconds) and its params. */
static size_t h_base(const struct fx *f, const struct sworn_record *b, size_t i, uint8_t *base,
                     char *params)
{
    uint8_t leaf[32];
    char keyid[65];
    size_t base_len = 0, plen = 0;
    const char *why = NULL;
    struct sworn_httpsig_request h;

    for (int k = 0; k < 32; k++)
        snprintf(keyid + 2 * k, 3, "%02x", f->key_id[k]);
    sworn_record_leaf(b, i, leaf);
    h = (struct sworn_httpsig_request){"GET", "https", "api.example.com", 443, h_path[i],
                                       NULL,  leaf};
    if (sworn_httpsig_base(&h, (int64_t)(H_T(i) / 1000), keyid, base, SWORN_SIGBASE_MAX, &base_len,
                           params, SWORN_SIGBASE_PARAMS_TEXT_MAX + 1, &plen, &why) != 0)
        fail_msg("base: %s", why);
    return base_len;
}

/* How a form-3 receipt is to be made wrong (all zero: the genuine one). */
struct twist3 {
    int leaf_items;     /* the tree over the leaf hashes (form 2's items) instead */
    int der;            /* store the DER signature, not r||s */
    int created_delta;  /* added to the stored created */
    const char *params; /* store these params */
    int form1_sig;      /* store the form-1 signature over the base (a group of one) */
};

/* The receipts of the allows entries[0..n) as one group of form-3 items, twisted by w. */
static void group3(const struct fx *f, struct sworn_record *b, const size_t *entries, uint32_t n,
                   const struct twist3 *w)
{
    static uint8_t base[SWORN_SIGBASE_MAX];
    static struct d_batchtree t;
    static const struct twist3 none;
    uint8_t items[8][32], root[32], tbs[52], der[80], raw[64], path[D_BATCHTREE_PATH_MAX][32];
    char params[8][SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t der_len, base_len = 0;

    if (w == NULL)
        w = &none;
    for (uint32_t i = 0; i < n; i++) {
        base_len = h_base(f, b, entries[i], base, params[i]);
        if (w->leaf_items)
            sworn_record_leaf(b, entries[i], items[i]);
        else
            sv_sha256(base, base_len, items[i]);
    }
    assert_int_equal(d_batchtree_build(&t, (const uint8_t(*)[32])items, n), 0);
    d_batchtree_root(&t, root);
    memcpy(tbs, "\xffsworn/v1 batch\0", 16);
    d_batchtree_message(n, root, tbs + 16);
    if (w->form1_sig)
        sign_p256(f, base, base_len, der, &der_len); /* the last entry's base itself */
    else
        sign_p256(f, tbs, sizeof(tbs), der, &der_len);
    {
        const unsigned char *p = der;
        ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)der_len);
        const BIGNUM *r = NULL, *sv = NULL;

        assert_non_null(es);
        ECDSA_SIG_get0(es, &r, &sv);
        assert_int_equal(BN_bn2binpad(r, raw, 32), 32);
        assert_int_equal(BN_bn2binpad(sv, raw + 32, 32), 32);
        ECDSA_SIG_free(es);
    }
    for (uint32_t i = 0; i < n; i++) {
        Sworn__V1__Receipt rc = SWORN__V1__RECEIPT__INIT;
        size_t k = d_batchtree_path(&t, i, path);

        rc.key_id.data = (uint8_t *)f->key_id;
        rc.key_id.len = 32;
        rc.alg = 1;
        rc.form = 3;
        rc.signature.data = w->der ? der : raw;
        rc.signature.len = w->der ? der_len : 64;
        rc.created = (uint64_t)((int64_t)(H_T(entries[i]) / 1000) + w->created_delta);
        rc.signature_params = (char *)(w->params != NULL ? w->params : params[i]);
        rc.batch_index = i;
        rc.batch_size = n;
        rc.batch_path.data = &path[0][0];
        rc.batch_path.len = 32 * k;
        sworn_record_put_receipt(b, entries[i], &rc);
    }
}

static const size_t h_group[3] = {H_A, H_B, H_C};

/* The genuine record: three GETs in one group (form 3) and a tcp.connect alone (form 2). */
static void good3(const struct fx *f, struct sworn_record *b, const struct twist3 *w)
{
    struct group g = {.entry = {H_TCP}, .n = 1};

    policy_loaded(f, b);
    for (size_t i = H_A; i < H_COUNT; i++) {
        char id[16];

        snprintf(id, sizeof(id), "h-%zu", i);
        if (i == H_TCP)
            decision(f, b, id, SWORN__V1__EFFECT__EFFECT_ALLOW, 5432, H_T(i));
        else
            http_decision(f, b, id, h_path[i], H_T(i));
    }
    group3(f, b, h_group, 3, w);
    seal(f, b, &g);
    batch_receipt(f, b, &g, 0, NULL);
}

static void expect3(struct fx *f, const char *name, const struct twist3 *w,
                    void (*change)(struct fx *, struct sworn_record *), const char *reason,
                    const char *item)
{
    const struct sworn_record_log where = {log_bin, f->dir, ORIGIN, KEY_NAME, f->spki_b64};
    struct sworn_record b = {0};
    char pn[128];
    json_object *rep;

    good3(f, &b, w);
    if (change != NULL)
        change(f, &b);
    sworn_record_make(&where, name, &b, NULL);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    rep = sworn_verify_json(verify_bin, f->dir, pn, name, NULL, reason == NULL ? 0 : 1, 0);
    if (reason == NULL) {
        sworn_verify_expect_pass(rep, "receipts");
        sworn_verify_expect_pass(rep, "entries");
        assert_int_equal(
            json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"), "count")),
            4);
    } else {
        sworn_verify_expect_fail(rep, "receipts", reason, item);
    }
    json_object_put(rep);
    sworn_record_free(&b);
}

/* Entry B rewritten after the fact (another path), its receipt kept. */
static void h_entry_changed(struct fx *f, struct sworn_record *b)
{
    struct sworn_record one = {0};

    http_decision(f, &one, "h-2", "/v1/admin", H_T(H_B));
    free(b->e[H_B]);
    b->e[H_B] = one.e[0];
    b->len[H_B] = one.len[0];
    one.e[0] = NULL;
    one.n = 0;
}

/* A form-3 receipt on the tcp.connect entry (which has no base): B's receipt moved there. */
static void h_form3_on_tcp(struct fx *f, struct sworn_record *b)
{
    (void)f;
    free(b->r[H_TCP]);
    b->r[H_TCP] = malloc(b->rlen[H_B]);
    assert_non_null(b->r[H_TCP]);
    memcpy(b->r[H_TCP], b->r[H_B], b->rlen[H_B]);
    b->rlen[H_TCP] = b->rlen[H_B];
}

static void test_form3(void **state)
{
    struct fx *f = *state;
    char params[512];
    struct twist3 w = {0};

    expect3(f, "h-good", NULL, NULL, NULL, NULL);
    /* the request or the entry changed after the fact */
    expect3(f, "h-entry", NULL, h_entry_changed, "receipt-invalid", "entry 2");
    /* a tree of leaf hashes (form 2's items) presented as form 3 */
    w.leaf_items = 1;
    expect3(f, "h-leafitems", &w, NULL, "receipt-invalid", "entry 1");
    /* the form-1 signature over the last base, presented as the group's batch signature */
    w = (struct twist3){.form1_sig = 1};
    expect3(f, "h-form1sig", &w, NULL, "receipt-invalid", "entry 1");
    /* fields: created, params, the signature's encoding */
    w = (struct twist3){.created_delta = 1};
    expect3(f, "h-created", &w, NULL, "receipt-created", "entry 1");
    snprintf(params, sizeof(params),
             "(\"@method\" \"@authority\" \"@path\" \"@query\" \"sworn-entry\");created=%llu;"
             "keyid=\"x\";alg=\"ecdsa-p256-sha256\";tag=\"other\"",
             (unsigned long long)(H_T(H_A) / 1000));
    w = (struct twist3){.params = params};
    expect3(f, "h-params", &w, NULL, "receipt-params", "entry 1");
    w = (struct twist3){.der = 1};
    expect3(f, "h-der", &w, NULL, "receipt-malformed", "entry 1");
    expect3(f, "h-tcp", NULL, h_form3_on_tcp, "receipt-form", "entry 3");
}

/* --- tests ------------------------------------------------------------------------------------ */

static void test_genuine_record(void **state)
{
    expect(*state, "good", NULL, NULL, NULL);
}

static void test_another_entry_or_group(void **state)
{
    expect(*state, "neighbour", neighbours_receipt, "receipt-invalid", "entry 2");
    expect(*state, "path-other", path_of_another, "receipt-invalid", "entry 2");
    expect(*state, "group-other", root_of_another_group, "receipt-invalid", "entry 7");
    expect(*state, "single-other", single_with_other_sig, "receipt-invalid", "entry 6");
}

static void test_index_size_path(void **state)
{
    expect(*state, "index", index_changed, "receipt-invalid", "entry 2");
    expect(*state, "size", size_changed, "receipt-invalid", "entry 7");
    expect(*state, "short", path_short, "receipt-malformed", "entry 1");
    expect(*state, "long", path_long, "receipt-malformed", "entry 1");
    expect(*state, "index-size", index_not_below_size, "receipt-malformed", "entry 6");
    expect(*state, "size0", size_zero, "receipt-malformed", "entry 6");
    expect(*state, "size257", size_over, "receipt-malformed", "entry 6");
    expect(*state, "created", created_in_form2, "receipt-malformed", "entry 9");
    expect(*state, "form0-fields", batch_fields_in_form0, "receipt-malformed", "entry 6");
}

static void test_other_purposes(void **state)
{
    expect(*state, "form0-sig", form0_sig_as_batch, "receipt-invalid", "entry 6");
    expect(*state, "receipt-prefix", receipt_prefix_over_root, "receipt-invalid", "entry 3");
    expect(*state, "no-size", batch_prefix_without_size, "receipt-invalid", "entry 8");
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    uint8_t *p;

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("batch-receipts");
    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kc, NID_X9_62_prime256v1), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &f->key), 1);
    EVP_PKEY_CTX_free(kc);
    p = f->spki;
    assert_int_equal(i2d_PUBKEY(f->key, &p), 91);
    sv_sha256(f->spki, 91, f->key_id);
    sv_b64_encode(f->spki, 91, f->spki_b64, sizeof(f->spki_b64));
    sv_sha256("policy", 6, f->digest);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    if (getenv("KEEP") == NULL)
        sworn_test_rmtree(f->dir);
    free(f->dir);
    EVP_PKEY_free(f->key);
    free(f);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_matches_rfc9162),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_rt17_no_path_aliasing),
        cmocka_unit_test(test_signer_purpose),
        cmocka_unit_test(test_wire_bounds),
        cmocka_unit_test(test_fuzz_seeds),
        cmocka_unit_test_setup_teardown(test_genuine_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_another_entry_or_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_size_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_purposes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_form3, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
