/*
 * w_cosign.c -- cosignature/v1 lines (contract and format in w_cosign.h).
 */
#include "w_cosign.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "encoding.h"
#include "err.h"

#define ED25519_PUB_LEN 32
#define ED25519_SIG_LEN 64
#define TIME_LINE_MAX 32 /* "time " and 20 digits and "\n" */

static void put_u32be(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put_u64be(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

int sworn_witness_cosigner_init(struct sworn_witness_cosigner *c, struct sworn_signer *signer,
                                const char *name)
{
    size_t spki_len = 0, pub_len = ED25519_PUB_LEN;
    const uint8_t *spki = sworn_signer_spki(signer, &spki_len);
    const unsigned char *p = spki;
    EVP_PKEY *k = NULL;

    memset(c, 0, sizeof(*c));
    SWORN_ENSURE(sworn_signer_alg(signer) == SWORN_SIG_ED25519, SWORN_ERR_ARG,
                 "cosigner: the witness key must be Ed25519 (cosignature/v1)");
    SWORN_ENSURE(strlen(name) <= SWORN_NOTE_NAME_MAX, SWORN_ERR_ARG, "cosigner: name too long");
    SWORN_GUARD(sworn_note_name_check(name, strlen(name)));
    k = d2i_PUBKEY(NULL, &p, (long)spki_len);
    SWORN_ENSURE(k != NULL && EVP_PKEY_get_raw_public_key(k, c->pub.key, &pub_len) == 1 &&
                     pub_len == ED25519_PUB_LEN,
                 SWORN_ERR_CRYPTO, "cosigner: cannot read the Ed25519 public key");
    EVP_PKEY_free(k);
    k = NULL;
    memcpy(c->pub.name, name, strlen(name) + 1);
    c->pub.alg = SWORN_NOTE_ALG_COSIGNATURE_V1;
    c->pub.key_len = ED25519_PUB_LEN;
    SWORN_GUARD(sworn_note_key_id(name, strlen(name), SWORN_NOTE_ALG_COSIGNATURE_V1, c->pub.key,
                                  ED25519_PUB_LEN, &c->pub.key_id));
    c->signer = signer;
    return 0;
fail:
    EVP_PKEY_free(k);
    return -1;
}

long sworn_witness_cosigner_vkey(const struct sworn_witness_cosigner *c, char *out, size_t cap)
{
    return sworn_note_verifier_format(&c->pub, out, cap);
}

long sworn_witness_cosign(struct sworn_witness_cosigner *c, const char *text, size_t text_len,
                          uint64_t t, char *out, size_t cap)
{
    uint8_t msg[SWORN_COSIGNATURE_MSG_MAX];
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    uint8_t raw[4 + 8 + ED25519_SIG_LEN];
    char tline[TIME_LINE_MAX], b64[SWORN_BASE64_LEN(sizeof(raw)) + 1];
    size_t hlen = strlen(SWORN_COSIGNATURE_HEADER), sig_len = 0;
    int tlen, n;

    tlen = snprintf(tline, sizeof(tline), "time %llu\n", (unsigned long long)t);
    if (tlen < 0 || (size_t)tlen >= sizeof(tline) || text_len > sizeof(msg) - hlen - (size_t)tlen)
        return sworn_err_set(SWORN_ERR_FORMAT, "cosigner: checkpoint too long");
    memcpy(msg, SWORN_COSIGNATURE_HEADER, hlen);
    memcpy(msg + hlen, tline, (size_t)tlen);
    memcpy(msg + hlen + (size_t)tlen, text, text_len);
    if (sworn_signer_sign(c->signer, SWORN_PURPOSE_COSIGNATURE, msg, hlen + (size_t)tlen + text_len,
                          sig, sizeof(sig), &sig_len) < 0)
        return -1;
    if (sig_len != ED25519_SIG_LEN)
        return sworn_err_set(SWORN_ERR_CRYPTO, "cosigner: a %zu-byte Ed25519 signature", sig_len);
    put_u32be(raw, c->pub.key_id);
    put_u64be(raw + 4, t);
    memcpy(raw + 12, sig, ED25519_SIG_LEN);
    if (sworn_base64_encode(raw, sizeof(raw), b64, sizeof(b64)) < 0)
        return sworn_err_set(SWORN_ERR_RANGE, "cosigner: base64");
    n = snprintf(out, cap, "\xe2\x80\x94 %s %s\n", c->pub.name, b64);
    if (n < 0 || (size_t)n >= cap)
        return sworn_err_set(SWORN_ERR_RANGE, "cosigner: no room for the signature line");
    return n;
}
