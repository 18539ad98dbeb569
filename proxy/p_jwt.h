/*
 * p_jwt.h -- the proxy's reader of the RFC 8693 delegation token: a JWT in JWS compact
 * serialization (RFC 7515 section 7.1, RFC 7519) that the agent presents in the configured token
 * header, flattened into what the AuthorizationRequest's Delegation carries (wire/sworn.proto).
 *
 * The token, byte by byte: three parts, header "." payload "." signature, each unpadded
 * base64url (RFC 4648 section 5: A-Z a-z 0-9 - _ only; no '=', no whitespace, no '+' or '/';
 * a part of length 1 mod 4, or whose last character carries non-zero unused bits, is refused, so
 * one text has one decoding), at most SWORN_JWT_MAX bytes in all, header and payload non-empty.
 *
 * Header: a JSON object with "alg" a string. "crit" is refused (no JWS extension is understood;
 * RFC 7515 section 4.1.11 says a reader that does not understand one must refuse, and "b64"
 * would change what is signed). "kid" selects a key of a configured JWKS (and only there; a kid
 * that is not a string of at most 256 bytes is refused then). Other header parameters ("typ",
 * "jku", "jwk", "x5u", ...) are ignored: the key is a configured one, never one the token
 * names or points to.
 *
 * Signature (only when a key or a JWKS is given, sworn_jwt_read_with; without one nothing is
 * verified and the token is only recorded as seen, verified = 0; with a JWKS the header's kid
 * picks the key, p_jwks.h):
 *   key                         alg accepted     signature bytes
 *   EC P-256                    "ES256"          64: r || s, 32 bytes each (RFC 7518 3.4)
 *   RSA, 2048..16384 bits       "RS256"          the modulus size (RSASSA-PKCS1-v1_5, SHA-256)
 *   Ed25519                     "EdDSA", "Ed25519" 64 (RFC 8037; RFC 9864's fully specified name)
 * Any other alg, "none" and every HMAC alg ("HS256", ...) included, is refused when a key is
 * given; an alg that does not match the key's type is refused. The signed bytes are the token's
 * text up to, not including, the second '.'.
 *
 * JSON (header and payload alike): RFC 8259 through json-c's strict mode with UTF-8 validation,
 * exactly one object and nothing after it, nested at most SWORN_JWT_JSON_DEPTH levels (the
 * payload object, 32 `act` levels, and one more so that a 33rd actor is refused by name, not
 * as bad JSON). Duplicate keys are refused in every object at every level: json-c keeps the last
 * of two equal keys, so the reader counts the keys of the text (each ':' outside a string ends
 * exactly one key) and the keys json-c kept; any difference is a duplicate (escaped spellings
 * such as "\u0073ub" are caught too, since json-c compares decoded keys). A string escaping a
 * lone UTF-16 surrogate ("\ud800" without its pair, or "\udc00" alone) is refused: json-c would
 * quietly turn it into U+FFFD, and two token texts would give one subject.
 *
 * Payload claims:
 *   sub      string, required, 1..256 bytes                  -> subject
 *   iss      string, optional, 0..256 bytes                  -> issuer ("" when absent)
 *   act      object, optional: its own sub (required), iss (optional) and act, at most 32
 *            levels in all                                   -> actors[], outermost first
 *   may_act  optional object {sub (required), iss}: ALLOWED when it names actors[0] (sub equal,
 *            iss equal when given), DENIED otherwise or without act, NOT_PRESENT when absent
 *   client_id, jti  optional strings, 0..256 bytes          -> client_id, jti
 *   aud      optional: a string or 1..16 strings of 1..256  -> audience[]
 *   scope    optional: RFC 6749 scope-tokens separated by single spaces, 1..64 -> scopes[]
 *   exp      recorded as whole seconds when a number 1..2^53 (else 0)      -> expires_unix
 *   exp,nbf  only when a key is given: JSON numbers (seconds since the epoch) or refused;
 *            refused when now >= exp + 60 or now < nbf - 60 (60 s leeway for clock skew);
 *            without a key they are ignored (an unverified token's dates prove nothing)
 *   others   ignored
 * Every string taken (sub, iss of each level) must be UTF-8 without the unsafe characters of
 * common/utf8.h (controls, U+2028/9, bidi controls, invisible characters; an escaped \u0000 too)
 * and at most 256 bytes; else the token is refused. That is stricter than wire/frame.c's check
 * of Delegation (8192 bytes, the same character rule), so a Delegation built from a token read
 * here is never refused by decisiond as malformed.
 *
 * Errors: sworn_jwt_read returns 0 (accepted), 1 (refused: *why is a static sentence naming the
 * rule, never holding token bytes) or -1 (internal failure: out of memory or the crypto library,
 * sworn_err set). A refusal is not an error: sworn_err is left clear.
 *
 * Memory: nothing is allocated that outlives a call; out and the key belong to the caller (the
 * key is only read). The token is not a secret of ours (decisiond records its hash), but it may
 * be a bearer credential of the agent's: it is never logged or copied into *why.
 *
 * Thread safety: no shared state; an EVP_PKEY may be shared by threads for verification (OpenSSL
 * 3).
 */
#ifndef SWORN_P_JWT_H
#define SWORN_P_JWT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <openssl/evp.h>

#include "sworn.pb-c.h"

#define SWORN_JWT_MAX 8192u           /* bytes of a compact JWS */
#define SWORN_JWT_STRING_MAX 256u     /* bytes of a sub or iss */
#define SWORN_JWT_ACTORS_MAX 32u      /* act levels (wire: Delegation.actors at most 32) */
#define SWORN_JWT_JSON_DEPTH 34       /* JSON nesting: payload + 32 act + 1 */
#define SWORN_JWT_LEEWAY_SECONDS 60   /* exp and nbf, when a key is given */
#define SWORN_JWT_RSA_MIN_BITS 2048u  /* smallest RSA key accepted */
#define SWORN_JWT_RSA_MAX_BITS 16384u /* largest RSA key accepted (bounds verification cost) */
#define SWORN_JWT_AUDIENCE_MAX 16u    /* aud strings (wire: Delegation.audience) */
#define SWORN_JWT_SCOPES_MAX 64u      /* scope-tokens (wire: Delegation.scopes) */
#define SWORN_JWT_KEY_ID_MAX 256u     /* a kid, or "spki-sha256:" + 64 hex digits */

struct sworn_jwks; /* p_jwks.h */

struct sworn_jwt_actor {
    char subject[SWORN_JWT_STRING_MAX + 1]; /* the actor's sub, NUL-terminated, non-empty */
    char issuer[SWORN_JWT_STRING_MAX + 1];  /* the actor's iss, "" when absent */
};

struct sworn_jwt_delegation {
    char subject[SWORN_JWT_STRING_MAX + 1];              /* top-level sub (required, non-empty) */
    char issuer[SWORN_JWT_STRING_MAX + 1];               /* top-level iss (may be "") */
    struct sworn_jwt_actor actors[SWORN_JWT_ACTORS_MAX]; /* the nested `act` claims, outermost
                                                          * (current actor) first, RFC 8693 4.1 */
    size_t nactors;
    int may_act;              /* enum Sworn__V1__MayAct__Result: NOT_PRESENT, ALLOWED, DENIED */
    uint8_t token_sha256[32]; /* SHA-256 of the token text exactly as presented */
    int verified;             /* 1 when a key was given and the signature verified */
    char key_id[SWORN_JWT_KEY_ID_MAX + 1];    /* verified: the key's id */
    char alg[16];                             /* verified: the token's alg */
    char client_id[SWORN_JWT_STRING_MAX + 1]; /* "" when absent */
    char jti[SWORN_JWT_STRING_MAX + 1];       /* "" when absent */
    char audience[SWORN_JWT_AUDIENCE_MAX][SWORN_JWT_STRING_MAX + 1];
    size_t naudience;
    char scopes[SWORN_JWT_SCOPES_MAX][SWORN_JWT_STRING_MAX + 1];
    size_t nscopes;
    uint64_t expires_unix; /* exp, whole seconds; 0 when absent (or, unverified, not a number) */
};

/* What verifies a token: nothing (all NULL), one key (key, and key_id for the record, e.g.
 * sworn_jwt_key_id's), or a JWKS (jwks; the JWK's kid is the key id). */
struct sworn_jwt_verifier {
    EVP_PKEY *key;
    const char *key_id;
    const struct sworn_jwks *jwks;
};

/*
 * Read the compact JWS tok[0..len) (not NUL-terminated; NUL bytes in it are refused). key: NULL
 * (nothing verified, exp/nbf ignored) or the key to verify with (see the table above), now: the
 * clock for exp/nbf. OUT: *out, *why.
 * Returns 0: *out filled, *why NULL. 1: refused, *why set; *out is all zero but token_sha256,
 * which holds the hash of the presented text (so that a denial can record which token it was).
 * -1: internal error (sworn_err set), *out all zero, *why NULL. tok may be NULL only when len is 0.
 */
int sworn_jwt_read(const char *tok, size_t len, EVP_PKEY *key, time_t now,
                   struct sworn_jwt_delegation *out, const char **why);

/* sworn_jwt_read with a verifier: v->jwks set, the key is the JWK the token's kid names
 * (p_jwks.h: sworn_jwks_select's refusals), else v->key as sworn_jwt_read's key. */
int sworn_jwt_read_with(const char *tok, size_t len, const struct sworn_jwt_verifier *v, time_t now,
                        struct sworn_jwt_delegation *out, const char **why);

/* Decode unpadded base64url in[0..n) canonically (the token's rule) into out (cap bytes). OUT:
 * *out_len. Returns 0, or 1 when it is not. */
int sworn_jwt_b64url_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *out_len);

/* Does alg fit key's type (ES256: EC P-256; RS256: RSA 2048..16384; EdDSA, Ed25519)? 1 or 0. */
int sworn_jwt_alg_fits(EVP_PKEY *key, const char *alg);

/* The record's id of a configured key: "spki-sha256:" and the lower-case hex SHA-256 of its DER
 * SubjectPublicKeyInfo, into out. Returns 0, or -1 (sworn_err). */
int sworn_jwt_key_id(EVP_PKEY *key, char out[SWORN_JWT_KEY_ID_MAX + 1]);

/*
 * Load the PEM public key file at path (delegation.verify_key; "-----BEGIN PUBLIC KEY-----",
 * SubjectPublicKeyInfo, at most 64 KiB): EC on P-256, RSA of 2048..16384 bits, or Ed25519.
 * Returns the key (EVP_PKEY_free it), or NULL with sworn_err set: SWORN_ERR_NOTFOUND (no file),
 * SWORN_ERR_IO, SWORN_ERR_FORMAT (not one PEM public key), SWORN_ERR_RANGE (another curve, an RSA
 * size out of range, another key type).
 */
EVP_PKEY *sworn_jwt_load_key(const char *path);

/*
 * A protobuf Delegation pointing into a sworn_jwt_delegation: strings and the hash are not
 * copied, so d must outlive pb and must not change while pb is used. token_sha256: one entry,
 * d->token_sha256. may_act is NULL (absent: RESULT_UNKNOWN on the wire) while d->may_act is
 * RESULT_UNKNOWN, else it points at pb->may_act.
 */
struct sworn_jwt_pb {
    Sworn__V1__Delegation del;
    Sworn__V1__Actor actor[SWORN_JWT_ACTORS_MAX];
    Sworn__V1__Actor *actor_ptr[SWORN_JWT_ACTORS_MAX];
    ProtobufCBinaryData hash;
    Sworn__V1__MayAct may_act;
    char *audience[SWORN_JWT_AUDIENCE_MAX];
    char *scopes[SWORN_JWT_SCOPES_MAX];
    Sworn__V1__DelegationVerification verification;
};

/* Fill pb from d (an accepted delegation: nactors <= SWORN_JWT_ACTORS_MAX). Cannot fail. */
void sworn_jwt_to_pb(const struct sworn_jwt_delegation *d, struct sworn_jwt_pb *pb);

#endif
