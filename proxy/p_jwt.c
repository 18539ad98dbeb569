/*
 * p_jwt.c -- the delegation token reader (p_jwt.h has the contract and the format).
 *
 * Order of work: the text's shape (length, three base64url parts), the header, the key and alg,
 * the signature over the text, and only then the payload's JSON, so that with a key configured
 * nothing of an unsigned payload is parsed.
 */
#include "p_jwt.h"

#include <math.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "err.h"
#include "fileio.h"
#include "p_jwks.h"
#include "utf8.h"

/* A decoded part is at most 3/4 of the token. */
#define PART_MAX ((SWORN_JWT_MAX / 4u) * 3u + 3u)
#define KEY_FILE_MAX (64u * 1024u)

enum key_kind { KEY_BAD, KEY_ES256, KEY_RS256, KEY_ED25519 };

/* A refusal: record why and return 1. Used as `return refuse(why, "...")`. */
static int refuse(const char **why, const char *sentence)
{
    *why = sentence;
    return 1;
}

/* --- base64url ---------------------------------------------------------------------------- */

static int b64url_value(uint8_t c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

/*
 * Decode in[0..n) (unpadded base64url) into out (capacity cap >= n * 3 / 4). OUT: *out_len.
 * Returns 0, or 1 when the text is not canonical unpadded base64url.
 */
int sworn_jwt_b64url_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *out_len)
{
    uint32_t acc = 0;
    unsigned bits = 0;
    size_t o = 0;

    if (n % 4u == 1u)
        return 1;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_value(in[i]);
        if (v < 0)
            return 1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o >= cap)
                return 1;
            out[o++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1u;
        }
    }
    /* The 2 or 4 bits left over must be zero: otherwise several texts would decode alike. */
    if (acc != 0)
        return 1;
    *out_len = o;
    return 0;
}

/* --- strict JSON -------------------------------------------------------------------------- */

/* The value of the 4 hex digits at p[0..4), or -1. */
static long hex4(const uint8_t *p)
{
    long v = 0;

    for (int i = 0; i < 4; i++) {
        int d = p[i] >= '0' && p[i] <= '9'   ? p[i] - '0'
                : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
                : p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
                                             : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/*
 * Walk JSON text that json-c has accepted. OUT: *keys, how many keys it holds (a ':' outside a
 * string follows exactly one key). Returns 0, or 1 when a string escapes a lone UTF-16 surrogate
 * ("\ud800" alone: json-c would quietly make it U+FFFD, so two texts would give one subject).
 */
static int text_scan(const uint8_t *p, size_t n, size_t *keys)
{
    int in_string = 0;

    *keys = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_string) {
            if (p[i] == '"')
                in_string = 1;
            else if (p[i] == ':')
                (*keys)++;
            continue;
        }
        if (p[i] == '"') {
            in_string = 0;
        } else if (p[i] == '\\') {
            long hi, lo;
            if (n - i < 2)
                return 1;
            if (p[i + 1] != 'u') {
                i++;
                continue;
            }
            if (n - i < 6 || (hi = hex4(p + i + 2)) < 0)
                return 1;
            i += 5;
            if (hi >= 0xDC00 && hi <= 0xDFFF)
                return 1;
            if (hi < 0xD800 || hi > 0xDBFF)
                continue;
            if (n - i < 7 || p[i + 1] != '\\' || p[i + 2] != 'u' ||
                (lo = hex4(p + i + 3)) < 0xDC00 || lo > 0xDFFF)
                return 1;
            i += 6;
        }
    }
    return 0;
}

/* How many keys json-c kept, in o and everything under it (depth bounded by the tokener). */
static size_t tree_keys(struct json_object *o)
{
    size_t keys = 0;

    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, k, v)
        {
            (void)k;
            keys += 1 + tree_keys(v);
        }
    } else if (json_object_is_type(o, json_type_array)) {
        size_t n = json_object_array_length(o);
        for (size_t i = 0; i < n; i++)
            keys += tree_keys(json_object_array_get_idx(o, i));
    }
    return keys;
}

/*
 * Parse p[0..n) as one strict JSON object. OUT: *obj (json_object_put it) on 0.
 * Returns 0, 1 (refused: *why) or -1 (out of memory).
 */
static int parse_object(const uint8_t *p, size_t n, const char *not_object, const char *dup,
                        const char *surrogate, struct json_object **obj, const char **why)
{
    size_t keys;
    /* json-c takes a level for every value, scalars too: N nested containers need N + 1. */
    struct json_tokener *tok = json_tokener_new_ex(SWORN_JWT_JSON_DEPTH + 1);
    struct json_object *o;
    int parsed_all;

    if (tok == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "jwt: out of memory for the JSON tokener");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex(tok, (const char *)p, (int)n);
    parsed_all =
        json_tokener_get_error(tok) == json_tokener_success && json_tokener_get_parse_end(tok) == n;
    json_tokener_free(tok);
    if (o == NULL || !parsed_all || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return refuse(why, not_object);
    }
    if (text_scan(p, n, &keys) != 0) {
        json_object_put(o);
        return refuse(why, surrogate);
    }
    if (tree_keys(o) != keys) {
        json_object_put(o);
        return refuse(why, dup);
    }
    *obj = o;
    return 0;
}

/*
 * Copy the string member `name` of o into dst (capacity SWORN_JWT_STRING_MAX + 1).
 * Returns 0 (copied; "" when absent and optional), or 1 with *why.
 */
static int take_string(struct json_object *o, const char *name, int required, char *dst,
                       const char *missing, const char *bad, const char **why)
{
    struct json_object *v;
    const char *s;
    size_t n;

    if (!json_object_object_get_ex(o, name, &v)) {
        dst[0] = '\0';
        return required ? refuse(why, missing) : 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return refuse(why, bad);
    s = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (n == 0 && required)
        return refuse(why, missing);
    if (n > SWORN_JWT_STRING_MAX)
        return refuse(why, bad);
    /* The wire's rule for every string, an escaped NUL included (U+0000 is a control). */
    if (n > 0 && sworn_utf8_check(s, n, 0, name) != 0) {
        sworn_err_clear();
        return refuse(why, bad);
    }
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 0;
}

/* The act chain under o, outermost first, into out->actors. Returns 0 or 1 with *why. */
static int take_actors(struct json_object *o, struct sworn_jwt_delegation *out, const char **why)
{
    struct json_object *act;

    while (json_object_object_get_ex(o, "act", &act)) {
        struct sworn_jwt_actor *a;
        int r;

        if (!json_object_is_type(act, json_type_object))
            return refuse(why, "the token's act claim is not a JSON object");
        if (out->nactors == SWORN_JWT_ACTORS_MAX)
            return refuse(why, "the token's act chain has more than 32 actors");
        a = &out->actors[out->nactors];
        r = take_string(act, "sub", 1, a->subject, "an act claim of the token has no sub string",
                        "an actor's sub in the token is not 1..256 bytes of UTF-8 without "
                        "control characters",
                        why);
        if (r != 0)
            return r;
        r = take_string(act, "iss", 0, a->issuer, "",
                        "an actor's iss in the token is not a string of at most 256 bytes of "
                        "UTF-8 without control characters",
                        why);
        if (r != 0)
            return r;
        out->nactors++;
        o = act;
    }
    return 0;
}

/*
 * A NumericDate claim (RFC 7519 section 2) when a key is given. OUT: *present, *value.
 * Returns 0 or 1 with *why.
 */
static int take_date(struct json_object *o, const char *name, int *present, double *value,
                     const char *bad, const char **why)
{
    struct json_object *v;

    *present = 0;
    if (!json_object_object_get_ex(o, name, &v))
        return 0;
    if (json_object_is_type(v, json_type_int)) {
        *value = (double)json_object_get_int64(v);
    } else if (json_object_is_type(v, json_type_double)) {
        *value = json_object_get_double(v);
        if (!isfinite(*value))
            return refuse(why, bad);
    } else {
        return refuse(why, bad);
    }
    *present = 1;
    return 0;
}

/* `aud`: a string or an array of 1..16 strings (RFC 7519 4.1.3). 0 or 1 with *why. */
static int take_audience(struct json_object *o, struct sworn_jwt_delegation *out, const char **why)
{
    static const char bad[] = "the token's aud is not a string or an array of 1..16 strings of "
                              "1..256 bytes of UTF-8 without control characters";
    struct json_object *v, *wrap;
    size_t n;
    int rc;

    if (!json_object_object_get_ex(o, "aud", &v))
        return 0;
    if (json_object_is_type(v, json_type_string)) {
        rc = take_string(o, "aud", 1, out->audience[0], bad, bad, why);
        out->naudience = rc == 0 ? 1 : 0;
        return rc;
    }
    if (!json_object_is_type(v, json_type_array))
        return refuse(why, bad);
    n = json_object_array_length(v);
    if (n < 1 || n > SWORN_JWT_AUDIENCE_MAX)
        return refuse(why, bad);
    /* Each item through take_string, as the member "aud" of a small object. */
    wrap = json_object_new_object();
    if (wrap == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "jwt: out of memory");
    for (size_t i = 0; i < n; i++) {
        json_object_object_add(wrap, "aud", json_object_get(json_object_array_get_idx(v, i)));
        rc = take_string(wrap, "aud", 1, out->audience[i], bad, bad, why);
        if (rc != 0) {
            json_object_put(wrap);
            return rc;
        }
    }
    json_object_put(wrap);
    out->naudience = n;
    return 0;
}

/* RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
static int scope_char(uint8_t c)
{
    return c == 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
}

/* `scope`: scope-tokens separated by one space each. 0 or 1 with *why. */
static int take_scopes(struct json_object *o, struct sworn_jwt_delegation *out, const char **why)
{
    static const char bad[] = "the token's scope is not scope-tokens of 1..256 bytes separated "
                              "by single spaces, at most 64 of them";
    struct json_object *v;
    const char *s;
    size_t n, start = 0;

    if (!json_object_object_get_ex(o, "scope", &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return refuse(why, bad);
    s = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (n == 0)
        return refuse(why, bad);
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ' ') {
            if (!scope_char((uint8_t)s[i]))
                return refuse(why, bad);
            continue;
        }
        if (i == start || i - start > SWORN_JWT_STRING_MAX || out->nscopes == SWORN_JWT_SCOPES_MAX)
            return refuse(why, bad);
        memcpy(out->scopes[out->nscopes], s + start, i - start);
        out->scopes[out->nscopes][i - start] = '\0';
        out->nscopes++;
        start = i + 1;
    }
    return 0;
}

/*
 * `may_act` (RFC 8693 4.4): an object naming the party that may act, by sub (required) and iss
 * (optional). The acting party is the current actor, actors[0]: listed when its subject equals
 * may_act's sub and, when may_act has an iss, its issuer equals it. No act claim: no acting party
 * is named, so none is listed (DENIED). 0 or 1 with *why.
 */
static int take_may_act(struct json_object *o, struct sworn_jwt_delegation *out, const char **why)
{
    struct json_object *m;
    char sub[SWORN_JWT_STRING_MAX + 1], iss[SWORN_JWT_STRING_MAX + 1];
    int rc;

    if (!json_object_object_get_ex(o, "may_act", &m)) {
        out->may_act = SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT;
        return 0;
    }
    if (!json_object_is_type(m, json_type_object))
        return refuse(why, "the token's may_act claim is not a JSON object");
    rc = take_string(m, "sub", 1, sub, "the token's may_act claim has no sub string",
                     "the token's may_act sub is not 1..256 bytes of UTF-8 without control "
                     "characters",
                     why);
    if (rc == 0)
        rc = take_string(m, "iss", 0, iss, "",
                         "the token's may_act iss is not a string of at most 256 bytes of UTF-8 "
                         "without control characters",
                         why);
    if (rc != 0)
        return rc;
    out->may_act = out->nactors > 0 && strcmp(out->actors[0].subject, sub) == 0 &&
                           (json_object_object_get_ex(m, "iss", NULL) == 0 ||
                            strcmp(out->actors[0].issuer, iss) == 0)
                       ? SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED
                       : SWORN__V1__MAY_ACT__RESULT__RESULT_DENIED;
    return 0;
}

/* `exp` in whole seconds for the record: 0 when absent or not a number from 0 to 2^53 (without
 * a key a bad exp is not refused: an unverified token's dates prove nothing). */
static uint64_t exp_seconds(struct json_object *o)
{
    struct json_object *v;
    double d;

    if (!json_object_object_get_ex(o, "exp", &v))
        return 0;
    if (json_object_is_type(v, json_type_int)) {
        int64_t i = json_object_get_int64(v);
        return i > 0 && i <= (int64_t)9007199254740992LL ? (uint64_t)i : 0;
    }
    if (!json_object_is_type(v, json_type_double))
        return 0;
    d = json_object_get_double(v);
    return isfinite(d) && d >= 1.0 && d <= 9007199254740992.0 ? (uint64_t)d : 0;
}

static int check_dates(struct json_object *payload, time_t now, const char **why)
{
    int has_exp, has_nbf;
    double exp = 0, nbf = 0, t = (double)now;

    if (take_date(payload, "exp", &has_exp, &exp, "the token's exp is not a number", why) != 0 ||
        take_date(payload, "nbf", &has_nbf, &nbf, "the token's nbf is not a number", why) != 0)
        return 1;
    if (has_exp && t >= exp + SWORN_JWT_LEEWAY_SECONDS)
        return refuse(why, "the token has expired (exp, 60 s leeway)");
    if (has_nbf && t < nbf - SWORN_JWT_LEEWAY_SECONDS)
        return refuse(why, "the token is not valid yet (nbf, 60 s leeway)");
    return 0;
}

/* --- keys and signatures ------------------------------------------------------------------ */

static enum key_kind key_kind_of(EVP_PKEY *key)
{
    switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_EC: {
        char group[64];
        size_t glen = 0;
        if (EVP_PKEY_get_group_name(key, group, sizeof(group), &glen) != 1)
            return KEY_BAD;
        if (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0)
            return KEY_ES256;
        return KEY_BAD;
    }
    case EVP_PKEY_RSA: {
        int bits = EVP_PKEY_get_bits(key);
        if (bits >= (int)SWORN_JWT_RSA_MIN_BITS && bits <= (int)SWORN_JWT_RSA_MAX_BITS)
            return KEY_RS256;
        return KEY_BAD;
    }
    case EVP_PKEY_ED25519:
        return KEY_ED25519;
    default:
        return KEY_BAD;
    }
}

static enum key_kind key_kind_of(EVP_PKEY *key);

static int alg_matches(enum key_kind kind, const char *alg)
{
    switch (kind) {
    case KEY_ES256:
        return strcmp(alg, "ES256") == 0;
    case KEY_RS256:
        return strcmp(alg, "RS256") == 0;
    case KEY_ED25519:
        return strcmp(alg, "EdDSA") == 0 || strcmp(alg, "Ed25519") == 0;
    case KEY_BAD:
    default:
        return 0;
    }
}

int sworn_jwt_alg_fits(EVP_PKEY *key, const char *alg)
{
    return key != NULL && alg != NULL && alg_matches(key_kind_of(key), alg);
}

int sworn_jwt_key_id(EVP_PKEY *key, char out[SWORN_JWT_KEY_ID_MAX + 1])
{
    unsigned char *der = NULL;
    uint8_t sha[32];
    int n = i2d_PUBKEY(key, &der);
    int ok = n > 0 && EVP_Digest(der, (size_t)n, sha, NULL, EVP_sha256(), NULL) == 1;

    OPENSSL_free(der);
    ERR_clear_error();
    if (!ok)
        return sworn_err_set(SWORN_ERR_CRYPTO, "jwt: cannot hash the verification key");
    memcpy(out, "spki-sha256:", 12);
    for (int i = 0; i < 32; i++) {
        out[12 + 2 * i] = "0123456789abcdef"[sha[i] >> 4];
        out[13 + 2 * i] = "0123456789abcdef"[sha[i] & 15];
    }
    out[76] = '\0';
    return 0;
}

/*
 * JOSE's ES256 signature (r || s, 32 bytes each, RFC 7518 section 3.4) as the DER that OpenSSL
 * verifies. OUT: *der (OPENSSL_free it), *der_len. Returns 0 or -1 (sworn_err).
 */
static int es256_to_der(const uint8_t raw[64], uint8_t **der, size_t *der_len)
{
    ECDSA_SIG *sig = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, 32, NULL);
    BIGNUM *s = BN_bin2bn(raw + 32, 32, NULL);
    unsigned char *p = NULL;
    int n;

    if (sig == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1) {
        ECDSA_SIG_free(sig);
        BN_free(r);
        BN_free(s);
        return sworn_err_set(SWORN_ERR_CRYPTO, "jwt: cannot build an ECDSA signature");
    }
    /* sig owns r and s now. */
    n = i2d_ECDSA_SIG(sig, &p);
    ECDSA_SIG_free(sig);
    if (n <= 0)
        return sworn_err_set(SWORN_ERR_CRYPTO, "jwt: cannot encode an ECDSA signature");
    *der = p;
    *der_len = (size_t)n;
    return 0;
}

/*
 * Verify sig[0..sig_len) over signed[0..signed_len) with key of the given kind.
 * Returns 0 (verified), 1 (refused: *why) or -1 (the crypto library failed).
 */
static int verify(EVP_PKEY *key, enum key_kind kind, const uint8_t *signed_bytes, size_t signed_len,
                  const uint8_t *sig, size_t sig_len, const char **why)
{
    EVP_MD_CTX *ctx = NULL;
    uint8_t *der = NULL;
    const uint8_t *check = sig;
    size_t check_len = sig_len;
    int rc = -1, v;

    switch (kind) {
    case KEY_ES256:
        if (sig_len != 64)
            return refuse(why, "the token's ES256 signature is not 64 bytes (r || s)");
        if (es256_to_der(sig, &der, &check_len) != 0)
            return -1;
        check = der;
        break;
    case KEY_RS256:
        if (sig_len != (size_t)EVP_PKEY_get_size(key))
            return refuse(why, "the token's RS256 signature is not the size of the key");
        break;
    case KEY_ED25519:
        if (sig_len != 64)
            return refuse(why, "the token's EdDSA signature is not 64 bytes");
        break;
    case KEY_BAD:
    default:
        return sworn_err_set(SWORN_ERR_ARG, "jwt: unsupported key");
    }
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "jwt: out of memory for a digest context");
        goto done;
    }
    /* Ed25519 signs the message itself (PureEdDSA): no digest is named. */
    if (EVP_DigestVerifyInit(ctx, NULL, kind == KEY_ED25519 ? NULL : EVP_sha256(), NULL, key) !=
        1) {
        sworn_err_set(SWORN_ERR_CRYPTO, "jwt: cannot start a signature verification");
        goto done;
    }
    v = EVP_DigestVerify(ctx, check, check_len, signed_bytes, signed_len);
    rc = v == 1 ? 0 : refuse(why, "the token's signature does not verify with the configured key");
done:
    ERR_clear_error();
    EVP_MD_CTX_free(ctx);
    OPENSSL_free(der);
    return rc;
}

EVP_PKEY *sworn_jwt_load_key(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    BIO *bio = NULL;
    EVP_PKEY *key = NULL;

    if (path == NULL) {
        sworn_err_set(SWORN_ERR_ARG, "jwt: no key path");
        return NULL;
    }
    if (sworn_file_read(path, KEY_FILE_MAX, &text, &len) != 0)
        return NULL;
    bio = BIO_new_mem_buf(text, (int)len);
    if (bio == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "jwt: out of memory reading %s", path);
        goto done;
    }
    key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    if (key == NULL) {
        sworn_err_set(SWORN_ERR_FORMAT, "jwt: %s is not a PEM public key", path);
        goto done;
    }
    if (key_kind_of(key) == KEY_BAD) {
        EVP_PKEY_free(key);
        key = NULL;
        sworn_err_set(SWORN_ERR_RANGE,
                      "jwt: %s is not an EC P-256, RSA 2048..16384-bit or Ed25519 public key",
                      path);
    }
done:
    ERR_clear_error();
    BIO_free(bio);
    free(text);
    return key;
}

/* --- the reader --------------------------------------------------------------------------- */

/* The token's three parts. */
struct parts {
    const uint8_t *p[3];
    size_t n[3];
};

/* Split t[0..len) at its two '.' (no more, no less). Returns 0 or 1 with *why. */
static int split(const uint8_t *t, size_t len, struct parts *parts, const char **why)
{
    size_t start = 0, k = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && t[i] != '.')
            continue;
        if (k == 3)
            return refuse(why, "the token is not three base64url parts separated by '.'");
        parts->p[k] = t + start;
        parts->n[k] = i - start;
        k++;
        start = i + 1;
    }
    if (k != 3)
        return refuse(why, "the token is not three base64url parts separated by '.'");
    if (parts->n[0] == 0 || parts->n[1] == 0)
        return refuse(why, "the token's header or payload part is empty");
    return 0;
}

/* The header's kid (for a JWKS): present or not, and its bytes. */
struct header_kid {
    int has, bad; /* bad: not a string of at most 256 bytes (refused when a JWKS is used) */
    char text[SWORN_JWT_KEY_ID_MAX + 1];
    size_t len;
};

/* Parse the header. OUT: alg copied into alg (capacity 16; longer algs are unknown anyway), and
 * *kid. */
static int read_header(const uint8_t *p, size_t n, char alg[16], struct header_kid *kid,
                       const char **why)
{
    struct json_object *h = NULL, *v;
    int rc;

    rc = parse_object(p, n, "the token's header is not a JSON object",
                      "the token's header has a duplicate key",
                      "the token's header escapes a lone UTF-16 surrogate", &h, why);
    if (rc != 0)
        return rc;
    if (!json_object_object_get_ex(h, "alg", &v) || !json_object_is_type(v, json_type_string)) {
        rc = refuse(why, "the token's header has no alg string");
    } else if (json_object_object_get_ex(h, "crit", NULL)) {
        rc = refuse(why, "the token's header has crit (no JWS extension is understood)");
    } else {
        const char *s = json_object_get_string(v);
        size_t sn = (size_t)json_object_get_string_len(v);
        /* Longer than any alg known here, or with a NUL that would cut "ES256\u0000x" to
         * "ES256": an unknown alg, ignored without a key and refused with one. */
        if (sn >= 16 || memchr(s, '\0', sn) != NULL)
            sn = 0;
        memcpy(alg, sn > 0 ? s : "?", sn > 0 ? sn : 1);
        alg[sn > 0 ? sn : 1] = '\0';
    }
    if (rc == 0 && json_object_object_get_ex(h, "kid", &v)) {
        kid->has = 1;
        if (!json_object_is_type(v, json_type_string) ||
            (size_t)json_object_get_string_len(v) > SWORN_JWT_KEY_ID_MAX) {
            kid->bad = 1;
        } else {
            kid->len = (size_t)json_object_get_string_len(v);
            memcpy(kid->text, json_object_get_string(v), kid->len);
            kid->text[kid->len] = '\0';
        }
    }
    json_object_put(h);
    return rc;
}

static int read_payload(const uint8_t *p, size_t n, EVP_PKEY *key, time_t now,
                        struct sworn_jwt_delegation *out, const char **why)
{
    struct json_object *o = NULL;
    int rc;

    rc = parse_object(p, n, "the token's payload is not a JSON object nested at most 34 deep",
                      "the token's payload has a duplicate key",
                      "the token's payload escapes a lone UTF-16 surrogate", &o, why);
    if (rc != 0)
        return rc;
    rc =
        take_string(o, "sub", 1, out->subject, "the token has no sub string",
                    "the token's sub is not 1..256 bytes of UTF-8 without control characters", why);
    if (rc == 0)
        rc = take_string(o, "iss", 0, out->issuer, "",
                         "the token's iss is not a string of at most 256 bytes of UTF-8 without "
                         "control characters",
                         why);
    if (rc == 0)
        rc = take_actors(o, out, why);
    if (rc == 0)
        rc = take_string(o, "client_id", 0, out->client_id, "",
                         "the token's client_id is not a string of at most 256 bytes of UTF-8 "
                         "without control characters",
                         why);
    if (rc == 0)
        rc = take_string(o, "jti", 0, out->jti, "",
                         "the token's jti is not a string of at most 256 bytes of UTF-8 without "
                         "control characters",
                         why);
    if (rc == 0)
        rc = take_audience(o, out, why);
    if (rc == 0)
        rc = take_scopes(o, out, why);
    if (rc == 0)
        rc = take_may_act(o, out, why);
    if (rc == 0 && key != NULL)
        rc = check_dates(o, now, why);
    if (rc == 0)
        out->expires_unix = exp_seconds(o);
    json_object_put(o);
    return rc;
}

/* The reader after the hash: 0, 1 (why) or -1. */
static int read_token(const uint8_t *t, size_t len, const struct sworn_jwt_verifier *ver,
                      time_t now, struct sworn_jwt_delegation *out, const char **why)
{
    EVP_PKEY *key = ver->key;
    struct header_kid kid = {0};
    const char *key_id = ver->key_id != NULL ? ver->key_id : "";
    struct parts parts;
    uint8_t buf[PART_MAX]; /* the three decoded parts, one after the other */
    const uint8_t *dec[3];
    size_t dec_len[3], used = 0;
    char alg[16];
    enum key_kind kind;
    int rc;

    if (len == 0)
        return refuse(why, "the token is empty");
    if (len > SWORN_JWT_MAX)
        return refuse(why, "the token is longer than 8192 bytes");
    if (split(t, len, &parts, why) != 0)
        return 1;
    /* Together the parts decode to at most 3/4 of len < PART_MAX bytes. */
    for (int i = 0; i < 3; i++) {
        if (sworn_jwt_b64url_decode(parts.p[i], parts.n[i], buf + used, sizeof(buf) - used,
                                    &dec_len[i]))
            return refuse(why, "a part of the token is not unpadded base64url");
        dec[i] = buf + used;
        used += dec_len[i];
    }
    rc = read_header(dec[0], dec_len[0], alg, &kid, why);
    if (rc != 0)
        return rc;
    if (ver->jwks != NULL) {
        const struct sworn_jwk *k;

        if (strcmp(alg, "none") == 0)
            return refuse(why, "alg none is refused when a verification key is configured");
        if (kid.bad)
            return refuse(why, "the token's kid is not a string of at most 256 bytes");
        k = sworn_jwks_select(ver->jwks, kid.text, kid.len, kid.has, alg, why);
        if (k == NULL)
            return 1;
        key = k->key;
        key_id = k->kid;
    }
    if (key != NULL) {
        kind = key_kind_of(key);
        if (kind == KEY_BAD)
            return sworn_err_set(SWORN_ERR_ARG, "jwt: the verification key is of no accepted type");
        if (strcmp(alg, "none") == 0)
            return refuse(why, "alg none is refused when a verification key is configured");
        if (!alg_matches(kind, alg))
            return refuse(why, "the token's alg does not match the verification key");
        /* The signed bytes: header "." payload, as presented. */
        rc = verify(key, kind, t, parts.n[0] + 1 + parts.n[1], dec[2], dec_len[2], why);
        if (rc != 0)
            return rc;
    }
    rc = read_payload(dec[1], dec_len[1], key, now, out, why);
    if (rc != 0)
        return rc;
    out->verified = key != NULL;
    if (out->verified) {
        snprintf(out->key_id, sizeof(out->key_id), "%s", key_id);
        snprintf(out->alg, sizeof(out->alg), "%s", alg);
    }
    return 0;
}

int sworn_jwt_read(const char *tok, size_t len, EVP_PKEY *key, time_t now,
                   struct sworn_jwt_delegation *out, const char **why)
{
    struct sworn_jwt_verifier v = {key, NULL, NULL};

    return sworn_jwt_read_with(tok, len, &v, now, out, why);
}

int sworn_jwt_read_with(const char *tok, size_t len, const struct sworn_jwt_verifier *ver,
                        time_t now, struct sworn_jwt_delegation *out, const char **why)
{
    uint8_t hash[32];
    int rc;

    if (out == NULL || why == NULL || ver == NULL || (tok == NULL && len > 0))
        return sworn_err_set(SWORN_ERR_ARG, "jwt: NULL argument");
    memset(out, 0, sizeof(*out));
    *why = NULL;
    /* len is bounded before it is used for anything but the hash, which covers every byte. */
    if (EVP_Digest(len > 0 ? tok : "", len, hash, NULL, EVP_sha256(), NULL) != 1) {
        ERR_clear_error();
        return sworn_err_set(SWORN_ERR_CRYPTO, "jwt: SHA-256 failed");
    }
    rc = read_token((const uint8_t *)tok, len, ver, now, out, why);
    if (rc != 0) {
        memset(out, 0, sizeof(*out));
        if (rc == 1)
            memcpy(out->token_sha256, hash, sizeof(hash));
        else
            *why = NULL;
        return rc;
    }
    memcpy(out->token_sha256, hash, sizeof(hash));
    return 0;
}

void sworn_jwt_to_pb(const struct sworn_jwt_delegation *d, struct sworn_jwt_pb *pb)
{
    Sworn__V1__Delegation del = SWORN__V1__DELEGATION__INIT;
    Sworn__V1__MayAct may_act = SWORN__V1__MAY_ACT__INIT;
    size_t n = d->nactors <= SWORN_JWT_ACTORS_MAX ? d->nactors : SWORN_JWT_ACTORS_MAX;

    for (size_t i = 0; i < n; i++) {
        Sworn__V1__Actor a = SWORN__V1__ACTOR__INIT;
        a.subject = (char *)d->actors[i].subject;
        a.issuer = (char *)d->actors[i].issuer;
        pb->actor[i] = a;
        pb->actor_ptr[i] = &pb->actor[i];
    }
    pb->hash.data = (uint8_t *)d->token_sha256;
    pb->hash.len = sizeof(d->token_sha256);
    may_act.result = (Sworn__V1__MayAct__Result)d->may_act;
    pb->may_act = may_act;

    del.subject = (char *)d->subject;
    del.issuer = (char *)d->issuer;
    del.n_actors = n;
    del.actors = n > 0 ? pb->actor_ptr : NULL;
    del.may_act = d->may_act == SWORN__V1__MAY_ACT__RESULT__RESULT_UNKNOWN ? NULL : &pb->may_act;
    del.n_token_sha256 = 1;
    del.token_sha256 = &pb->hash;
    del.client_id = (char *)d->client_id;
    del.jti = (char *)d->jti;
    for (size_t i = 0; i < d->naudience && i < SWORN_JWT_AUDIENCE_MAX; i++)
        pb->audience[i] = (char *)d->audience[i];
    del.n_audience = d->naudience <= SWORN_JWT_AUDIENCE_MAX ? d->naudience : 0;
    del.audience = del.n_audience > 0 ? pb->audience : NULL;
    for (size_t i = 0; i < d->nscopes && i < SWORN_JWT_SCOPES_MAX; i++)
        pb->scopes[i] = (char *)d->scopes[i];
    del.n_scopes = d->nscopes <= SWORN_JWT_SCOPES_MAX ? d->nscopes : 0;
    del.scopes = del.n_scopes > 0 ? pb->scopes : NULL;
    del.expires_unix = d->expires_unix;
    sworn__v1__delegation_verification__init(&pb->verification);
    pb->verification.result = d->verified
                                  ? SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED
                                  : SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_NOT_VERIFIED;
    pb->verification.key_id = d->verified ? (char *)d->key_id : (char *)"";
    pb->verification.alg = d->verified ? (char *)d->alg : (char *)"";
    del.verification = &pb->verification;
    pb->del = del;
}
