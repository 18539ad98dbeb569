/*
 * p_jwks.h -- a JSON Web Key Set (RFC 7517) of the public keys that verify delegation tokens
 * (`delegation.jwks`, docs/proxy.md "Delegation"), read once at start.
 *
 * The file: at most SWORN_JWKS_FILE_MAX bytes of strict JSON (p_json.h: no duplicate members at
 * any depth), one object whose "keys" is an array of 1..SWORN_JWKS_KEYS_MAX JWKs. Other
 * top-level members are ignored. Each JWK:
 *   kty "EC"   crv "P-256", x and y: unpadded base64url of 32 bytes each, a point on the curve
 *   kty "RSA"  n: unpadded base64url of a 2048..16384-bit modulus without leading zero bytes,
 *              e: of 1..8 bytes without a leading zero byte, odd and at least 3
 *   kty "OKP"  crv "Ed25519", x: unpadded base64url of 32 bytes
 *   kid        optional string, 1..256 bytes of UTF-8 without unsafe characters; two keys may not
 *              share one (and at most one key may have none)
 *   alg        optional: "ES256" (EC), "RS256" (RSA), "EdDSA" or "Ed25519" (OKP); another alg,
 *              or one that does not fit the key, is refused
 *   use        optional string; a key whose use is not "sig" is kept but never verifies
 *   key_ops    optional array of strings; a key whose key_ops lacks "verify" is kept but never
 *              verifies
 *   other members (x5c, x5t, ...) are ignored.
 * Refused: any other kty ("oct" too: a shared secret would let a token choose HMAC), another
 * curve, a private key member ("d", "p", "q", "dp", "dq", "qi", "oth", "k": a JWKS here is
 * public), a member of a JWK of the wrong JSON type.
 *
 * Choosing a key for a token (sworn_jwks_select): the token's header "kid", when it has one,
 * names the key (no such key: refused); without a kid the set must hold exactly one key usable
 * for verification. The key's use and key_ops must allow verification; the token's alg must fit
 * the key's type and equal the JWK's alg when it has one.
 *
 * Errors: sworn_jwks_load returns NULL with sworn_err set ("jwks FILE: ..." naming the key by
 * index and the rule); sworn_jwks_select returns NULL with *why a static sentence. Memory: the
 * set owns its EVP_PKEYs (sworn_jwks_free). Thread safety: a loaded set is immutable.
 */
#ifndef SWORN_P_JWKS_H
#define SWORN_P_JWKS_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>

#define SWORN_JWKS_FILE_MAX (256u * 1024u)
#define SWORN_JWKS_KEYS_MAX 64u
#define SWORN_JWKS_KID_MAX 256u

struct sworn_jwk {
    char kid[SWORN_JWKS_KID_MAX + 1]; /* "" when the JWK has none */
    int has_kid;
    char alg[16];  /* the JWK's alg, "" when absent */
    int verifies;  /* use and key_ops allow verification */
    EVP_PKEY *key; /* EC P-256, RSA or Ed25519 */
};

struct sworn_jwks {
    struct sworn_jwk keys[SWORN_JWKS_KEYS_MAX];
    size_t n;
};

/* Read the set from text[0..len) (name is used in messages). Returns the set or NULL. */
struct sworn_jwks *sworn_jwks_parse(const char *name, const uint8_t *text, size_t len);

/* Read the file at path (at most SWORN_JWKS_FILE_MAX bytes). Returns the set or NULL. */
struct sworn_jwks *sworn_jwks_load(const char *path);

void sworn_jwks_free(struct sworn_jwks *s);

/*
 * The key for a token whose header has kid[0..kid_len) (has_kid 0: none) and alg. Returns the
 * JWK, or NULL with *why: "the token's kid names no key of the JWKS", "the token has no kid and
 * the JWKS has more than one key", "the JWK the token names is not for verification (use,
 * key_ops)", "the token's alg does not match its JWK".
 */
const struct sworn_jwk *sworn_jwks_select(const struct sworn_jwks *s, const char *kid,
                                          size_t kid_len, int has_kid, const char *alg,
                                          const char **why);

#endif
