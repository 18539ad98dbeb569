/*
 * notekey.c -- a key's DER SPKI as a signed note's key (contract in notekey.h).
 */
#include "notekey.h"

#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "err.h"

/* Fill n's public half (name, type, key, key id) from a key's DER SPKI and algorithm. */
int sworn_note_pub_from_spki(const char *name, const uint8_t *spki, size_t spki_len,
                             enum sworn_sig_alg alg, struct sworn_note_signer *out)
{
    struct sworn_note_signer n;
    size_t name_len = strlen(name);

    memset(&n, 0, sizeof(n));
    if (name_len == 0 || name_len > SWORN_NOTE_NAME_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "note signer: bad key name");
    memcpy(n.pub.name, name, name_len);
    switch (alg) {
    case SWORN_SIG_ECDSA_P256_SHA256:
        if (spki_len > sizeof(n.pub.key))
            return sworn_err_set(SWORN_ERR_RANGE, "note signer: public key too long");
        n.pub.alg = SWORN_NOTE_ALG_ECDSA_P256;
        memcpy(n.pub.key, spki, spki_len);
        n.pub.key_len = spki_len;
        break;
    case SWORN_SIG_ED25519: {
        const unsigned char *p = spki;
        EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)spki_len);
        size_t raw_len = sizeof(n.pub.key);
        int ok = k != NULL && EVP_PKEY_get_raw_public_key(k, n.pub.key, &raw_len) == 1;

        EVP_PKEY_free(k);
        if (!ok || raw_len != 32)
            return sworn_err_set(SWORN_ERR_CRYPTO, "note signer: cannot read the Ed25519 key");
        n.pub.alg = SWORN_NOTE_ALG_ED25519;
        n.pub.key_len = raw_len;
        break;
    }
    default:
        return sworn_err_set(SWORN_ERR_ARG, "note signer: only ECDSA P-256 and Ed25519 keys sign "
                                            "checkpoints");
    }
    if (sworn_note_key_id(n.pub.name, name_len, n.pub.alg, n.pub.key, n.pub.key_len,
                          &n.pub.key_id) < 0)
        return -1;
    *out = n;
    return 0;
}

int sworn_note_verifier_from_spki(const char *name, const uint8_t *spki, size_t spki_len,
                                  struct sworn_note_verifier *out)
{
    const unsigned char *p = spki;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)spki_len);
    struct sworn_note_signer n;
    enum sworn_sig_alg alg;
    int rc;

    if (k == NULL || p != spki + spki_len) {
        EVP_PKEY_free(k);
        return sworn_err_set(SWORN_ERR_FORMAT, "note verifier: not a DER SubjectPublicKeyInfo");
    }
    if (EVP_PKEY_is_a(k, "ED25519")) {
        alg = SWORN_SIG_ED25519;
    } else if (EVP_PKEY_is_a(k, "EC")) {
        char group[32] = "";
        size_t glen = 0;

        if (EVP_PKEY_get_utf8_string_param(k, "group", group, sizeof(group), &glen) != 1 ||
            strcmp(group, "prime256v1") != 0) {
            EVP_PKEY_free(k);
            return sworn_err_set(SWORN_ERR_ARG, "note verifier: EC keys must be P-256");
        }
        alg = SWORN_SIG_ECDSA_P256_SHA256;
    } else {
        EVP_PKEY_free(k);
        return sworn_err_set(SWORN_ERR_ARG,
                             "note verifier: only P-256 and Ed25519 keys sign notes");
    }
    EVP_PKEY_free(k);
    rc = sworn_note_pub_from_spki(name, spki, spki_len, alg, &n);
    if (rc == 0)
        *out = n.pub;
    return rc;
}
