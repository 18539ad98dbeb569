/*
 * sv_receipt.c -- see sv_receipt.h.
 */
#include "sv_receipt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>

#include "sig_base.h"
#include "sv_keyring.h"
#include "sv_merkle.h"
#include "sv_note.h"
#include "sv_sworn.pb-c.h"

struct sv_receipt_keys {
    const struct sv_policy *p;
    const struct sv_keyring_state *k;
};

struct sv_receipt_keys *sv_receipt_keys_new(const struct sv_policy *p,
                                            const struct sv_keyring_state *k)
{
    struct sv_receipt_keys *r;

    if (p->nreceipt_keys == 0 && (k == NULL || !sv_keyring_has_purpose(k, "receipt")))
        return NULL;
    r = calloc(1, sizeof(*r));
    if (r != NULL) {
        r->p = p;
        r->k = k;
    }
    return r;
}

void sv_receipt_keys_free(struct sv_receipt_keys *k)
{
    free(k);
}

#define BAD(c, ...)                                                                                \
    do {                                                                                           \
        snprintf(code, 32, "%s", c);                                                               \
        sv_fail(why, __VA_ARGS__);                                                                 \
        goto out;                                                                                  \
    } while (0)

int sv_httpsig_verify_p256(EVP_PKEY *pkey, const uint8_t *msg, size_t msg_len, const uint8_t *sig,
                           size_t sig_len)
{
    ECDSA_SIG *s = NULL;
    BIGNUM *r = NULL, *sv = NULL;
    uint8_t der[80];
    unsigned char *p = der;
    int n, ok = 0;

    if (sig_len != 64 || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC ||
        EVP_PKEY_get_bits(pkey) != 256)
        return 0;
    s = ECDSA_SIG_new();
    r = BN_bin2bn(sig, 32, NULL);
    sv = BN_bin2bn(sig + 32, 32, NULL);
    if (s == NULL || r == NULL || sv == NULL || ECDSA_SIG_set0(s, r, sv) != 1) {
        BN_free(r);
        BN_free(sv);
        ECDSA_SIG_free(s);
        return 0;
    }
    n = i2d_ECDSA_SIG(s, NULL);
    if (n > 0 && (size_t)n <= sizeof(der) && i2d_ECDSA_SIG(s, &p) == n)
        ok = sv_sig_verify(pkey, 0, msg, msg_len, der, (size_t)n);
    ECDSA_SIG_free(s);
    return ok;
}

/*
 * Forms 1 and 3: rebuild sworn's base of the request and check the receipt's fields against it;
 * form 1: the signature over the base; form 3 (base_hash not NULL): SHA-256 of the base into
 * base_hash, the batch item (the signature is checked by verify_batch).
 */
static int verify_http(const Svpb__V1__Receipt *m, EVP_PKEY *key, int ed,
                       const uint8_t leaf[SV_HASH], uint64_t time_ms,
                       const struct sv_http_req *http, char *code, char *why, uint8_t *base_hash)
{
    static _Thread_local uint8_t base[SWORN_SIGBASE_MAX];
    char keyid[2 * SV_HASH + 1], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t base_len = 0, params_len = 0;
    const char *w = NULL;
    struct sworn_httpsig_request h;

    if (http == NULL || !http->present) {
        snprintf(code, 32, "receipt-form");
        return sv_fail(why,
                       "an http-message receipt (form %u) for an allow whose request has no "
                       "method or no http, https, ws or wss resource",
                       (unsigned)m->form);
    }
    if (m->alg != 1 || ed || m->signature.len != 64) {
        snprintf(code, 32, "receipt-malformed");
        return sv_fail(why, "an http-message receipt is ecdsa-p256-sha256: alg 1, a P-256 key, "
                            "64 bytes r||s");
    }
    if (m->created != time_ms / 1000) {
        snprintf(code, 32, "receipt-created");
        return sv_fail(why,
                       "the receipt's created (%llu) is not its entry's time in seconds "
                       "(%llu)",
                       (unsigned long long)m->created, (unsigned long long)(time_ms / 1000));
    }
    for (size_t i = 0; i < SV_HASH; i++)
        snprintf(keyid + 2 * i, 3, "%02x", m->key_id.data[i]);
    h = (struct sworn_httpsig_request){
        .method = http->method,
        .scheme = http->scheme,
        .host = http->host,
        .port = http->port,
        .path = http->path,
        .body_sha256 = http->has_body ? http->body_sha256 : NULL,
        .leaf = leaf,
    };
    if (sworn_httpsig_base(&h, (int64_t)m->created, keyid, base, sizeof(base), &base_len, params,
                           sizeof(params), &params_len, &w) != 0) {
        snprintf(code, 32, "receipt-invalid");
        return sv_fail(why, "no signature base for this entry: %s", w);
    }
    if (strcmp(params, m->signature_params) != 0) {
        snprintf(code, 32, "receipt-params");
        return sv_fail(why, "the receipt's signature_params are not the ones sworn's base of this "
                            "entry has");
    }
    if (base_hash != NULL) {
        sv_sha256(base, base_len, base_hash);
        return 0;
    }
    if (!sv_httpsig_verify_p256(key, base, base_len, m->signature.data, m->signature.len)) {
        snprintf(code, 32, "receipt-invalid");
        return sv_fail(why, "the receipt's RFC 9421 signature does not verify over this entry's "
                            "request and leaf hash (another entry's, a changed request, or "
                            "forged)");
    }
    return 0;
}

/*
 * Forms 2 and 3: the item (form 2: this entry's leaf hash; form 3: SHA-256 of sworn's base of
 * its request); its batch leaf SHA-256(00 || item), the path gives the group's root, and the
 * signature (form 3: r||s) must verify over FF "sworn/v1 batch" 00 || u32 size || root
 * (docs/formats.md section 14).
 */
static int verify_batch(const Svpb__V1__Receipt *m, EVP_PKEY *key, int ed,
                        const uint8_t item[SV_HASH], char *code, char *why)
{
    static const uint8_t prefix[16] = "\xffsworn/v1 batch";
    uint8_t item_leaf[SV_HASH], root[SV_HASH], tbs[16 + 4 + SV_HASH];
    char w[SV_WHY];

    sv_leaf_hash(item, SV_HASH, item_leaf);
    if (sv_inclusion_root(m->batch_index, m->batch_size, item_leaf,
                          (const uint8_t(*)[SV_HASH])m->batch_path.data,
                          m->batch_path.len / SV_HASH, root, w) < 0) {
        snprintf(code, 32, "receipt-malformed");
        return sv_fail(why,
                       "the batch receipt's path is not an inclusion path of item %u of %u: %s",
                       (unsigned)m->batch_index, (unsigned)m->batch_size, w);
    }
    memcpy(tbs, prefix, 15);
    tbs[15] = 0;
    tbs[16] = (uint8_t)(m->batch_size >> 24);
    tbs[17] = (uint8_t)(m->batch_size >> 16);
    tbs[18] = (uint8_t)(m->batch_size >> 8);
    tbs[19] = (uint8_t)m->batch_size;
    memcpy(tbs + 20, root, SV_HASH);
    if (m->form == 3
            ? !sv_httpsig_verify_p256(key, tbs, sizeof(tbs), m->signature.data, m->signature.len)
            : !sv_sig_verify(key, ed, tbs, sizeof(tbs), m->signature.data, m->signature.len)) {
        snprintf(code, 32, "receipt-invalid");
        return sv_fail(why,
                       "the batch receipt's signature does not verify over the root that its "
                       "path gives for this entry's item at %u of %u (a path of another entry, "
                       "a root of another group, a changed index or size, a changed request, "
                       "or forged)",
                       (unsigned)m->batch_index, (unsigned)m->batch_size);
    }
    return 0;
}

int sv_receipt_verify(const struct sv_receipt_keys *k, const uint8_t *r, size_t len,
                      const uint8_t leaf[SV_HASH], uint64_t time_ms, const struct sv_http_req *http,
                      char *code, char *why)
{
    static const uint8_t prefix[18] = "\xffsworn/v1 receipt";
    Svpb__V1__Receipt *m = svpb__v1__receipt__unpack(NULL, len, r);
    uint8_t tbs[18 + SV_HASH], re[1100];
    EVP_PKEY *key = NULL;
    int ed = 0, rc = -1;

    if (m == NULL) {
        snprintf(code, 32, "receipt-malformed");
        return sv_fail(why, "the receipt does not unpack as sworn.v1.Receipt");
    }
    if (m->base.n_unknown_fields != 0 || svpb__v1__receipt__get_packed_size(m) != len ||
        len > sizeof(re))
        BAD("receipt-malformed", "the receipt is not canonical protobuf");
    svpb__v1__receipt__pack(m, re);
    if (memcmp(re, r, len) != 0)
        BAD("receipt-malformed", "the receipt is not canonical protobuf");
    if (m->key_id.len != SV_HASH || m->signature.len < 1 || m->signature.len > 512 ||
        (m->alg != 1 && m->alg != 2))
        BAD("receipt-malformed", "receipt key_id, signature or alg out of range");
    if (m->form > 3 ||
        ((m->form == 0 || m->form == 2) && (m->created != 0 || m->signature_params[0] != '\0')) ||
        ((m->form == 1 || m->form == 3) &&
         (m->created == 0 || strlen(m->signature_params) < 1 ||
          strlen(m->signature_params) > SWORN_SIGBASE_PARAMS_TEXT_MAX)))
        BAD("receipt-malformed", "receipt form, created or signature_params out of range");
    if (m->form < 2 && (m->batch_index != 0 || m->batch_size != 0 || m->batch_path.len != 0))
        BAD("receipt-malformed",
            "a receipt of form %u with batch fields (only forms 2 and 3 have them)",
            (unsigned)m->form);
    if (m->form >= 2 &&
        (m->batch_size < 1 || m->batch_size > 256 || m->batch_index >= m->batch_size ||
         m->batch_path.len % SV_HASH != 0 || m->batch_path.len > 8 * SV_HASH))
        BAD("receipt-malformed",
            "batch receipt index %u, size %u or path of %zu bytes out of "
            "range (index < size <= 256, 0..8 hashes of 32 bytes)",
            (unsigned)m->batch_index, (unsigned)m->batch_size, m->batch_path.len);
    for (size_t i = 0; i < k->p->nreceipt_keys; i++)
        if (memcmp(k->p->receipt_keys[i].spki_hash, m->key_id.data, SV_HASH) == 0) {
            key = k->p->receipt_keys[i].pkey;
            ed = k->p->receipt_keys[i].type == 0x01;
        }
    if (key == NULL && k->k != NULL) {
        char w[SV_WHY];

        key = sv_keyring_key(k->k, m->key_id.data, "receipt", sv_keyring_seconds(time_ms), &ed, w);
        if (key == NULL && sv_keyring_knows(k->k, m->key_id.data))
            BAD("receipt-key-invalid", "%s", w);
    }
    if (key == NULL)
        BAD("receipt-key-unknown", "the receipt's key is not a receipt key the auditor trusts");
    if ((m->alg == 2) != ed)
        BAD("receipt-invalid", "the receipt's alg is not its key's algorithm");
    if (m->form == 1) {
        rc = verify_http(m, key, ed, leaf, time_ms, http, code, why, NULL);
        goto out;
    }
    if (m->form == 2) {
        rc = verify_batch(m, key, ed, leaf, code, why);
        goto out;
    }
    if (m->form == 3) {
        uint8_t item[SV_HASH];

        rc = verify_http(m, key, ed, leaf, time_ms, http, code, why, item);
        if (rc == 0)
            rc = verify_batch(m, key, ed, item, code, why);
        goto out;
    }
    memcpy(tbs, prefix, 17);
    tbs[17] = 0;
    memcpy(tbs + 18, leaf, SV_HASH);
    if (!sv_sig_verify(key, ed, tbs, sizeof(tbs), m->signature.data, m->signature.len))
        BAD("receipt-invalid", "the receipt's signature does not verify over this entry's leaf "
                               "hash (a receipt of another entry, or forged)");
    rc = 0;
out:
    svpb__v1__receipt__free_unpacked(m, NULL);
    return rc;
}
