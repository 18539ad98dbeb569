/*
 * sv_receipt.c -- see sv_receipt.h.
 */
#include "sv_receipt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "sv_keyring.h"
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

int sv_receipt_verify(const struct sv_receipt_keys *k, const uint8_t *r, size_t len,
                      const uint8_t leaf[SV_HASH], uint64_t time_ms, char *code, char *why)
{
    static const uint8_t prefix[18] = "\xffsworn/v1 receipt";
    Svpb__V1__Receipt *m = svpb__v1__receipt__unpack(NULL, len, r);
    uint8_t tbs[18 + SV_HASH], re[600];
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
