/*
 * note.c -- C2SP signed notes (https://c2sp.org/signed-note): the form of a note, verifier keys,
 * key ids, and signature verification with OpenSSL.
 *
 * Byte layout of a signed note (at most SWORN_NOTE_MAX_LEN bytes, all of it valid UTF-8 without
 * control bytes other than '\n'; DEL 0x7f counts as a control byte):
 *
 *     text       one or more lines, each ending in '\n'; may contain empty lines, but may not
 *                be a single empty line
 *     "\n"       the separator: the note is split at its LAST "\n\n", whose first '\n' ends the
 *                text and whose second is the blank line
 *     sig lines  1..SWORN_NOTE_MAX_SIGS lines, each exactly
 *                    E2 80 94 (U+2014 EM DASH) 20 <name> 20 <base64> 0A
 *                name: 1..SWORN_NOTE_NAME_MAX bytes, no '+', no Unicode white space;
 *                base64: standard padded RFC 4648 (canonical: zero trailing bits) of
 *                    key id (u32 big-endian) || signature, 5..4+SWORN_NOTE_SIG_MAX bytes.
 *
 * Verifier key: <name> '+' <8 hex digits, the key id> '+' <base64(type byte || key)>.
 *
 * Key ids (big-endian u32 of the first four bytes of a SHA-256):
 *     0x01, 0x04   SHA-256(name || 0x0A || type || 32-byte Ed25519 public key)
 *     0x02         SHA-256(DER SubjectPublicKeyInfo)  (the name is not hashed)
 *
 * Signed bytes:
 *     0x01         Ed25519 (RFC 8032, pure) over the text; signature 64 bytes
 *     0x02         ECDSA P-256 with SHA-256 over the text; signature DER-encoded
 *     0x04         u64 big-endian timestamp (< 2^63) || Ed25519 over
 *                  "cosignature/v1\ntime <decimal timestamp>\n" || text; 72 bytes in all
 *
 * Parsing never allocates: a parsed note points into the caller's bytes. Verification builds
 * OpenSSL key objects, and for 0x04 one heap copy of the prefixed text, because OpenSSL's Ed25519
 * is one-shot and needs the message contiguous.
 */
#include "note.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "utf8.h"

#define EM_DASH "\xe2\x80\x94"
#define EM_DASH_LEN 3
#define ED25519_KEY_LEN 32
#define ED25519_SIG_LEN 64
#define COSIG_TS_LEN 8
#define KEY_ID_LEN 4
#define KEY_ID_HEX_LEN 8
/* Longest base64 field of a signature line: key id plus the largest signature we accept. */
#define SIG_B64_MAX SWORN_BASE64_LEN(KEY_ID_LEN + SWORN_NOTE_SIG_MAX)
/* Longest signature line without its '\n': dash, space, name, space, base64. */
#define SIG_LINE_MAX (EM_DASH_LEN + 1 + SWORN_NOTE_NAME_MAX + 1 + SIG_B64_MAX)
#define COSIG_HEADER "cosignature/v1\ntime "
/* The prefix of a cosigned message: header, the timestamp (at most 19 digits), '\n'. */
#define COSIG_PREFIX_MAX (sizeof(COSIG_HEADER) - 1 + 20 + 1)

/* The Unicode White_Space property, which is what Go's unicode.IsSpace (and so C2SP) uses. */
static int is_unicode_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
           cp == 0x205f || cp == 0x3000;
}

int sworn_note_name_check(const char *name, size_t len)
{
    struct sworn_buf b = sworn_buf_init(name, len);

    if (name == NULL || len == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: empty key name");
    if (len > SWORN_NOTE_NAME_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: key name longer than %d bytes",
                             SWORN_NOTE_NAME_MAX);
    while (sworn_buf_remaining(&b) > 0) {
        uint32_t cp = 0;

        if (sworn_utf8_next(&b, &cp) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "note: key name is not valid UTF-8");
        if (cp == '+' || sworn_utf8_is_control(cp) || is_unicode_space(cp))
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "note: key name contains '+', white space or a control byte");
    }
    return 0;
}

int sworn_note_text_check(const char *text, size_t len)
{
    if (text == NULL || len == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: empty text");
    if (len > SWORN_NOTE_MAX_LEN)
        return sworn_err_set(SWORN_ERR_RANGE, "note: text longer than %u bytes",
                             (unsigned)SWORN_NOTE_MAX_LEN);
    if (text[len - 1] != '\n')
        return sworn_err_set(SWORN_ERR_FORMAT, "note: text does not end in a newline");
    if (text[0] == '\n')
        return sworn_err_set(SWORN_ERR_FORMAT, "note: text starts with an empty line");
    for (size_t i = 1; i < len; i++)
        if (text[i] == '\n' && text[i - 1] == '\n')
            return sworn_err_set(SWORN_ERR_FORMAT, "note: text has an empty line at offset %zu", i);
    return sworn_utf8_check(text, len, 1, "note text");
}

int sworn_note_key_id(const char *name, size_t name_len, uint8_t alg, const uint8_t *key,
                      size_t key_len, uint32_t *key_id)
{
    /* name || '\n' || type || key, bounded by the header's limits. */
    uint8_t in[SWORN_NOTE_NAME_MAX + 2 + SWORN_NOTE_KEY_MAX];
    uint8_t digest[SHA256_DIGEST_LENGTH];
    struct sworn_buf b;
    size_t n = 0;

    if ((name == NULL && name_len > 0) || (key == NULL && key_len > 0) || key_id == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "note: key id of a NULL name or key");
    if (name_len > SWORN_NOTE_NAME_MAX || key_len > SWORN_NOTE_KEY_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "note: key id: name or key too long");
    if (alg == SWORN_NOTE_ALG_ECDSA_P256) {
        /* transparency-dev/witness defined 0x02 ids as a hash of the SPKI alone. */
        SHA256(key_len > 0 ? key : in, key_len, digest);
    } else {
        if (name_len > 0)
            memcpy(in, name, name_len);
        n = name_len;
        in[n++] = '\n';
        in[n++] = alg;
        if (key_len > 0)
            memcpy(in + n, key, key_len);
        n += key_len;
        SHA256(in, n, digest);
    }
    b = sworn_buf_init(digest, sizeof(digest));
    return sworn_buf_get_u32be(&b, key_id);
}

/*
 * Build an EVP_PKEY from a DER SubjectPublicKeyInfo, insisting on an EC key on the named curve
 * P-256 and on no bytes after the DER. Returns NULL with sworn_err set.
 */
static EVP_PKEY *p256_from_spki(const uint8_t *der, size_t len)
{
    const unsigned char *p = der;
    EVP_PKEY *pkey = NULL;
    char group[64];
    size_t group_len = 0;

    if (len == 0 || len > SWORN_NOTE_KEY_MAX) {
        sworn_err_set(SWORN_ERR_FORMAT, "note: ECDSA key of %zu bytes", len);
        return NULL;
    }
    pkey = d2i_PUBKEY(NULL, &p, (long)len);
    if (pkey == NULL) {
        sworn_err_set(SWORN_ERR_FORMAT, "note: ECDSA key is not a DER SubjectPublicKeyInfo");
        goto fail;
    }
    if ((size_t)(p - der) != len) {
        sworn_err_set(SWORN_ERR_FORMAT, "note: bytes after the ECDSA key's DER");
        goto fail;
    }
    if (!EVP_PKEY_is_a(pkey, "EC") ||
        EVP_PKEY_get_group_name(pkey, group, sizeof(group), &group_len) != 1 ||
        OBJ_sn2nid(group) != NID_X9_62_prime256v1) {
        sworn_err_set(SWORN_ERR_FORMAT, "note: type 0x02 key is not ECDSA on P-256");
        goto fail;
    }
    return pkey;
fail:
    EVP_PKEY_free(pkey);
    ERR_clear_error();
    return NULL;
}

/* Check the key material of a verifier of a known type. */
static int check_key(uint8_t alg, const uint8_t *key, size_t key_len)
{
    EVP_PKEY *pkey;

    switch (alg) {
    case SWORN_NOTE_ALG_ED25519:
    case SWORN_NOTE_ALG_COSIGNATURE_V1:
        if (key_len != ED25519_KEY_LEN)
            return sworn_err_set(SWORN_ERR_FORMAT, "note: Ed25519 key of %zu bytes, not %d",
                                 key_len, ED25519_KEY_LEN);
        return 0;
    case SWORN_NOTE_ALG_ECDSA_P256:
        pkey = p256_from_spki(key, key_len);
        if (pkey == NULL)
            return -1;
        EVP_PKEY_free(pkey);
        return 0;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "note: unsupported key type 0x%02x", alg);
    }
}

int sworn_note_verifier_parse(const char *vkey, size_t len, struct sworn_note_verifier *out)
{
    struct sworn_note_verifier v;
    struct sworn_buf b = sworn_buf_init(vkey, len);
    struct sworn_buf idb;
    const uint8_t *name = NULL, *hex = NULL, *sep = NULL, *b64 = NULL, *plus;
    uint8_t raw[1 + SWORN_NOTE_KEY_MAX];
    uint8_t id_be[KEY_ID_LEN];
    size_t name_len, b64_len, raw_len = 0;
    uint32_t computed = 0;

    memset(&v, 0, sizeof(v));
    SWORN_ENSURE(vkey != NULL && out != NULL, SWORN_ERR_ARG, "note: NULL verifier key");
    SWORN_ENSURE(len <= SWORN_NOTE_VKEY_MAX, SWORN_ERR_FORMAT, "note: verifier key too long");
    /* A name cannot contain '+', so the first '+' ends it. */
    plus = len > 0 ? memchr(vkey, '+', len) : NULL;
    SWORN_ENSURE(plus != NULL, SWORN_ERR_FORMAT, "note: verifier key has no '+'");
    name_len = (size_t)(plus - (const uint8_t *)vkey);
    SWORN_GUARD(sworn_buf_get_ptr(&b, name_len, &name));
    SWORN_GUARD(sworn_note_name_check((const char *)name, name_len));
    SWORN_GUARD(sworn_buf_get_ptr(&b, 1, &sep));
    SWORN_GUARD(sworn_buf_get_ptr(&b, KEY_ID_HEX_LEN, &hex));
    SWORN_GUARD(sworn_hex_decode((const char *)hex, KEY_ID_HEX_LEN, id_be, sizeof(id_be)));
    SWORN_GUARD(sworn_buf_get_ptr(&b, 1, &sep));
    SWORN_ENSURE(*sep == '+', SWORN_ERR_FORMAT, "note: verifier key id is not 8 hex digits");
    b64_len = sworn_buf_remaining(&b);
    SWORN_GUARD(sworn_buf_get_ptr(&b, b64_len, &b64));
    SWORN_ENSURE(sworn_base64_decode((const char *)b64, b64_len, raw, sizeof(raw), &raw_len) == 0,
                 SWORN_ERR_FORMAT, "note: verifier key material is not valid base64");
    SWORN_ENSURE(raw_len >= 2, SWORN_ERR_FORMAT, "note: verifier key has no key material");
    SWORN_GUARD(check_key(raw[0], raw + 1, raw_len - 1));

    memcpy(v.name, name, name_len);
    v.name[name_len] = '\0';
    idb = sworn_buf_init(id_be, sizeof(id_be));
    SWORN_GUARD(sworn_buf_get_u32be(&idb, &v.key_id));
    v.alg = raw[0];
    v.key_len = raw_len - 1;
    memcpy(v.key, raw + 1, v.key_len);
    SWORN_GUARD(sworn_note_key_id(v.name, name_len, v.alg, v.key, v.key_len, &computed));
    SWORN_ENSURE(computed == v.key_id, SWORN_ERR_FORMAT,
                 "note: verifier key id %08" PRIx32 " does not match its key (%08" PRIx32 ")",
                 v.key_id, computed);
    *out = v;
    return 0;
fail:
    return -1;
}

long sworn_note_verifier_format(const struct sworn_note_verifier *v, char *out, size_t cap)
{
    uint8_t raw[1 + SWORN_NOTE_KEY_MAX];
    size_t name_len;
    long b64_len;
    int n;

    if (v == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "note: NULL verifier or buffer");
    name_len = strnlen(v->name, sizeof(v->name));
    if (name_len == sizeof(v->name))
        return sworn_err_set(SWORN_ERR_ARG, "note: verifier name is not NUL-terminated");
    if (sworn_note_name_check(v->name, name_len) < 0)
        return -1;
    if (v->key_len == 0 || v->key_len > SWORN_NOTE_KEY_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "note: verifier key of %zu bytes", v->key_len);
    n = snprintf(out, cap, "%s+%08" PRIx32 "+", v->name, v->key_id);
    if (n < 0 || (size_t)n >= cap)
        goto small;
    raw[0] = v->alg;
    memcpy(raw + 1, v->key, v->key_len);
    b64_len = sworn_base64_encode(raw, 1 + v->key_len, out + n, cap - (size_t)n);
    if (b64_len < 0)
        goto small;
    return n + b64_len;
small:
    if (cap > 0)
        out[0] = '\0';
    return sworn_err_set(SWORN_ERR_RANGE, "note: verifier key does not fit in %zu bytes", cap);
}

/*
 * Parse one signature line (without its '\n') into *sig: the dash, a space, a valid name, a
 * space, and base64 of a key id followed by 1..SWORN_NOTE_SIG_MAX signature bytes.
 */
static int parse_sig_line(const uint8_t *line, size_t line_len, struct sworn_note_sig *sig)
{
    struct sworn_buf b = sworn_buf_init(line, line_len);
    struct sworn_buf idb;
    const uint8_t *dash = NULL, *name = NULL, *sp = NULL, *b64 = NULL, *space;
    uint8_t raw[KEY_ID_LEN + SWORN_NOTE_SIG_MAX];
    size_t name_len, b64_len, raw_len = 0;

    SWORN_ENSURE(sworn_buf_get_ptr(&b, EM_DASH_LEN + 1, &dash) == 0 &&
                     memcmp(dash, EM_DASH " ", EM_DASH_LEN + 1) == 0,
                 SWORN_ERR_FORMAT, "note: signature line does not start with an em dash and space");
    /* A name has no spaces, so the first space after it ends it. */
    space = memchr(line + b.off, ' ', sworn_buf_remaining(&b));
    SWORN_ENSURE(space != NULL, SWORN_ERR_FORMAT, "note: signature line has no signature");
    name_len = (size_t)(space - (line + b.off));
    SWORN_GUARD(sworn_buf_get_ptr(&b, name_len, &name));
    SWORN_GUARD(sworn_note_name_check((const char *)name, name_len));
    SWORN_GUARD(sworn_buf_get_ptr(&b, 1, &sp));
    b64_len = sworn_buf_remaining(&b);
    SWORN_ENSURE(b64_len > 0 && b64_len <= SIG_B64_MAX, SWORN_ERR_FORMAT,
                 "note: signature of %zu base64 characters", b64_len);
    SWORN_GUARD(sworn_buf_get_ptr(&b, b64_len, &b64));
    SWORN_ENSURE(sworn_base64_decode((const char *)b64, b64_len, raw, sizeof(raw), &raw_len) == 0,
                 SWORN_ERR_FORMAT, "note: signature is not valid base64");
    SWORN_ENSURE(raw_len > KEY_ID_LEN, SWORN_ERR_FORMAT,
                 "note: signature of %zu bytes is shorter than a key id and one byte", raw_len);
    idb = sworn_buf_init(raw, raw_len);
    SWORN_GUARD(sworn_buf_get_u32be(&idb, &sig->key_id));
    sig->name = (const char *)name;
    sig->name_len = name_len;
    sig->sig_b64 = (const char *)b64;
    sig->sig_b64_len = b64_len;
    return 0;
fail:
    return -1;
}

int sworn_note_parse(const char *msg, size_t len, struct sworn_note *out)
{
    struct sworn_note n; /* filled here and copied out only on success */
    struct sworn_buf b;
    size_t split = 0, count = 0;
    int found = 0;

    if (msg == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "note: NULL note");
    if (len > SWORN_NOTE_MAX_LEN)
        return sworn_err_set(SWORN_ERR_RANGE, "note: %zu bytes, more than %u", len,
                             (unsigned)SWORN_NOTE_MAX_LEN);
    if (sworn_utf8_check(msg, len, 1, "note") < 0)
        return -1;
    /* The separator is the last "\n\n": signature lines never hold an empty line. */
    for (size_t i = len; i >= 2; i--) {
        if (msg[i - 1] == '\n' && msg[i - 2] == '\n') {
            split = i - 2;
            found = 1;
            break;
        }
    }
    if (!found)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: no blank line before the signatures");
    if (split == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: empty text");
    b = sworn_buf_init(msg + split + 2, len - split - 2);
    if (sworn_buf_remaining(&b) == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: no signature lines");
    while (sworn_buf_remaining(&b) > 0) {
        struct sworn_note_sig sig;
        const uint8_t *line = NULL;
        size_t line_len = 0;

        if (count == SWORN_NOTE_MAX_SIGS)
            return sworn_err_set(SWORN_ERR_FORMAT, "note: more than %d signatures",
                                 SWORN_NOTE_MAX_SIGS);
        if (sworn_buf_get_line(&b, SIG_LINE_MAX, &line, &line_len) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "note: signature line %zu is too long or lacks its newline",
                                 count + 1);
        if (parse_sig_line(line, line_len, &sig) < 0)
            return -1;
        n.sigs[count++] = sig;
    }
    n.text = msg;
    n.text_len = split + 1;
    n.sig_count = count;
    memcpy(out, &n, offsetof(struct sworn_note, sigs) + count * sizeof(n.sigs[0]));
    return 0;
}

/* Verify an Ed25519 signature with OpenSSL. Returns 1 (valid), 0 (invalid) or -1 (error). */
static int ed25519_verify(const uint8_t key[ED25519_KEY_LEN], const uint8_t *sig,
                          const uint8_t *msg, size_t len)
{
    EVP_PKEY *pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, key, ED25519_KEY_LEN);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int r = -1;

    if (pkey == NULL || ctx == NULL) {
        /* Any 32 bytes make a raw Ed25519 public key, so only allocation can fail here. */
        sworn_err_set(SWORN_ERR_NOMEM, "note: cannot allocate an Ed25519 key or context");
        goto done;
    }
    if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, pkey) != 1) {
        sworn_err_set(SWORN_ERR_CRYPTO, "note: Ed25519 verify init failed");
        goto done;
    }
    r = EVP_DigestVerify(ctx, sig, ED25519_SIG_LEN, msg, len) == 1 ? 1 : 0;
done:
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    ERR_clear_error();
    return r;
}

/* Verify a DER ECDSA-SHA256 signature by a P-256 SPKI. Returns 1, 0 or -1 like ed25519_verify. */
static int p256_verify(const uint8_t *spki, size_t spki_len, const uint8_t *sig, size_t sig_len,
                       const uint8_t *msg, size_t len)
{
    EVP_PKEY *pkey = p256_from_spki(spki, spki_len);
    EVP_MD_CTX *ctx = NULL;
    int r = -1;

    if (pkey == NULL)
        goto done;
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "note: cannot allocate an ECDSA context");
        goto done;
    }
    if (EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, pkey) != 1) {
        sworn_err_set(SWORN_ERR_CRYPTO, "note: ECDSA verify init failed");
        goto done;
    }
    /* OpenSSL returns -1 for a signature that is not DER: that too is simply invalid. */
    r = EVP_DigestVerify(ctx, sig, sig_len, msg, len) == 1 ? 1 : 0;
done:
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    ERR_clear_error();
    return r;
}

/*
 * Verify a tlog-cosignature/v1 signature (timestamp || Ed25519). OUT: *ts when valid.
 * Returns 1, 0 or -1 like ed25519_verify.
 */
static int cosig_verify(const uint8_t key[ED25519_KEY_LEN], const uint8_t *sig, size_t sig_len,
                        const char *text, size_t text_len, uint64_t *ts)
{
    struct sworn_buf b = sworn_buf_init(sig, sig_len);
    uint64_t t = 0;
    uint8_t *msg = NULL;
    int n, r;

    if (sig_len != COSIG_TS_LEN + ED25519_SIG_LEN || sworn_buf_get_u64be(&b, &t) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: cosignature of %zu bytes, not %d", sig_len,
                             COSIG_TS_LEN + ED25519_SIG_LEN);
    if (t > (uint64_t)INT64_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: cosignature timestamp above 2^63-1");
    msg = malloc(COSIG_PREFIX_MAX + text_len);
    if (msg == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "note: no memory for a cosigned message");
    n = snprintf((char *)msg, COSIG_PREFIX_MAX, COSIG_HEADER "%" PRIu64 "\n", t);
    if (n < 0 || (size_t)n >= COSIG_PREFIX_MAX) {
        free(msg);
        return sworn_err_set(SWORN_ERR_ARG, "note: cosignature prefix does not fit");
    }
    memcpy(msg + n, text, text_len);
    r = ed25519_verify(key, sig + COSIG_TS_LEN, msg, (size_t)n + text_len);
    free(msg);
    if (r == 1)
        *ts = t;
    return r;
}

/*
 * Check one signature against one key whose name and id it carries.
 * Returns 1 (valid), 0 (invalid) or -1 (malformed, or OpenSSL failed).
 */
static int verify_one(const struct sworn_note *note, const struct sworn_note_sig *s,
                      const struct sworn_note_verifier *k, uint64_t *ts)
{
    uint8_t raw[KEY_ID_LEN + SWORN_NOTE_SIG_MAX];
    size_t raw_len = 0, sig_len;
    const uint8_t *sig = raw + KEY_ID_LEN;

    if (s->sig_b64_len > SIG_B64_MAX ||
        sworn_base64_decode(s->sig_b64, s->sig_b64_len, raw, sizeof(raw), &raw_len) < 0 ||
        raw_len <= KEY_ID_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT, "note: malformed signature by %s", k->name);
    sig_len = raw_len - KEY_ID_LEN;
    switch (k->alg) {
    case SWORN_NOTE_ALG_ED25519:
        if (k->key_len != ED25519_KEY_LEN || sig_len != ED25519_SIG_LEN)
            return sworn_err_set(SWORN_ERR_FORMAT, "note: Ed25519 signature by %s of %zu bytes",
                                 k->name, sig_len);
        return ed25519_verify(k->key, sig, (const uint8_t *)note->text, note->text_len);
    case SWORN_NOTE_ALG_ECDSA_P256:
        return p256_verify(k->key, k->key_len, sig, sig_len, (const uint8_t *)note->text,
                           note->text_len);
    case SWORN_NOTE_ALG_COSIGNATURE_V1:
        if (k->key_len != ED25519_KEY_LEN)
            return sworn_err_set(SWORN_ERR_FORMAT, "note: cosigner key of %zu bytes", k->key_len);
        return cosig_verify(k->key, sig, sig_len, note->text, note->text_len, ts);
    default:
        return sworn_err_set(SWORN_ERR_ARG, "note: verifier %s has unsupported type 0x%02x",
                             k->name, k->alg);
    }
}

/* Whether a signature line carries the name and key id of a verifier. */
static int sig_matches(const struct sworn_note_sig *s, const char *name, uint32_t key_id)
{
    return s->key_id == key_id && strnlen(name, SWORN_NOTE_NAME_MAX + 1) == s->name_len &&
           memcmp(name, s->name, s->name_len) == 0;
}

int sworn_note_verify(const struct sworn_note *note, const struct sworn_note_verifier *keys,
                      size_t nkeys, size_t *verified_count, uint8_t *verified_by,
                      uint64_t *cosig_time)
{
    size_t count = 0;

    if (verified_count != NULL)
        *verified_count = 0;
    for (size_t k = 0; k < nkeys; k++) {
        if (verified_by != NULL)
            verified_by[k] = 0;
        if (cosig_time != NULL)
            cosig_time[k] = 0;
    }
    SWORN_ENSURE(note != NULL && (keys != NULL || nkeys == 0), SWORN_ERR_ARG,
                 "note: NULL note or keys");
    SWORN_ENSURE(note->sig_count <= SWORN_NOTE_MAX_SIGS, SWORN_ERR_ARG,
                 "note: sig_count out of range");
    for (size_t i = 0; i < note->sig_count; i++) {
        const struct sworn_note_sig *s = &note->sigs[i];
        int matched = 0, ok = 0, repeat = 0;

        for (size_t k = 0; k < nkeys && !ok; k++) {
            uint64_t ts = 0;
            int r;

            if (!sig_matches(s, keys[k].name, keys[k].key_id))
                continue;
            matched = 1;
            r = verify_one(note, s, &keys[k], &ts);
            SWORN_GUARD(r);
            if (r == 1) {
                ok = 1;
                if (verified_by != NULL)
                    verified_by[k] = 1;
                if (cosig_time != NULL && keys[k].alg == SWORN_NOTE_ALG_COSIGNATURE_V1 &&
                    cosig_time[k] == 0)
                    cosig_time[k] = ts;
            }
        }
        if (!matched)
            continue; /* C2SP: signatures by unknown keys are ignored */
        SWORN_ENSURE(ok, SWORN_ERR_VERIFY, "note: signature by %.*s+%08" PRIx32 " does not verify",
                     (int)s->name_len, s->name, s->key_id);
        /* A repeated line by the same key must verify too, but is one signer, counted once. */
        for (size_t j = 0; j < i && !repeat; j++)
            repeat = note->sigs[j].key_id == s->key_id && note->sigs[j].name_len == s->name_len &&
                     memcmp(note->sigs[j].name, s->name, s->name_len) == 0;
        if (!repeat)
            count++;
    }
    SWORN_ENSURE(count > 0, SWORN_ERR_VERIFY, "note: no signature by a known key verified");
    if (verified_count != NULL)
        *verified_count = count;
    return 0;
fail:
    for (size_t k = 0; k < nkeys; k++) {
        if (verified_by != NULL)
            verified_by[k] = 0;
        if (cosig_time != NULL)
            cosig_time[k] = 0;
    }
    return -1;
}
