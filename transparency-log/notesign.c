/*
 * notesign.c -- signing notes: the two software signer backends (an Ed25519 key file and an
 * ECDSA P-256 PEM file), sworn_note_sign, and Ed25519 key generation.
 *
 * Ed25519 key file (the form golang.org/x/mod/sumdb/note writes), optionally followed by a
 * single '\n':
 *     "PRIVATE+KEY+" <name> "+" <8 hex digits: key id> "+" <base64(0x01 || 32-byte seed)>
 * The key id must equal the one computed from the name and the public key derived from the seed,
 * so a file with a wrong or edited id is refused rather than producing unverifiable notes.
 *
 * PEM key file: an EC private key on P-256, PKCS#8 or SEC1, unencrypted. Its verifier key is
 * type 0x02 with the DER SubjectPublicKeyInfo (uncompressed point) as key material.
 *
 * Key files are opened with O_NOFOLLOW and must be regular files of at most KEYFILE_MAX bytes
 * with no group or other permission bits. Seeds and file contents are wiped from our buffers on
 * every path; OpenSSL keeps the private key in its own EVP_PKEY, which it clears when freed.
 *
 * Signature line written by sworn_note_sign:
 *     E2 80 94 20 <name> 20 base64(key id u32 big-endian || signature) 0A
 */
#include "notesign.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "secretfile.h"
#include "wipe.h"

#define KEYFILE_MAX (16 * 1024) /* far more than any key file we accept */
#define ED25519_KEY_LEN 32
#define ED25519_SIG_LEN 64
#define KEY_ID_LEN 4
#define KEY_ID_HEX_LEN 8
#define SKEY_PREFIX "PRIVATE+KEY+"
#define PEM_PREFIX "-----BEGIN "
#define EM_DASH "\xe2\x80\x94"
/* base64(0x01 || seed) */
#define SKEY_B64_LEN SWORN_BASE64_LEN(1 + ED25519_KEY_LEN)
/* "PRIVATE+KEY+" name "+" id "+" base64 "\n" NUL */
#define SKEY_FILE_MAX                                                                              \
    (sizeof(SKEY_PREFIX) - 1 + SWORN_NOTE_NAME_MAX + 1 + KEY_ID_HEX_LEN + 1 + SKEY_B64_LEN + 2)

/* A signer context: the OpenSSL key, which holds the private key in OpenSSL's own memory. */
struct pkey_ctx {
    EVP_PKEY *pkey;
    const EVP_MD *md; /* NULL for Ed25519, which hashes internally */
};

/* Sign with an EVP_PKEY (Ed25519 or ECDSA P-256); shared by both backends. */
static int pkey_sign(void *ctx, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                     size_t *sig_len)
{
    struct pkey_ctx *c = ctx;
    EVP_MD_CTX *md = NULL;
    /* ECDSA refuses an output shorter than its largest signature, so sign into room of our own. */
    uint8_t tmp[SWORN_NOTE_SIG_MAX];
    size_t n = sizeof(tmp);

    SWORN_ENSURE(c != NULL && c->pkey != NULL && sig != NULL && sig_len != NULL, SWORN_ERR_ARG,
                 "sign: closed signer or NULL output");
    md = EVP_MD_CTX_new();
    SWORN_ENSURE(md != NULL, SWORN_ERR_NOMEM, "sign: cannot allocate a context");
    SWORN_ENSURE(EVP_DigestSignInit(md, NULL, c->md, NULL, c->pkey) == 1, SWORN_ERR_CRYPTO,
                 "sign: OpenSSL sign init failed");
    SWORN_ENSURE(EVP_DigestSign(md, tmp, &n, msg, len) == 1, SWORN_ERR_CRYPTO,
                 "sign: OpenSSL signing failed");
    SWORN_ENSURE(n <= cap, SWORN_ERR_RANGE, "sign: signature of %zu bytes does not fit in %zu", n,
                 cap);
    memcpy(sig, tmp, n);
    *sig_len = n;
    EVP_MD_CTX_free(md);
    return 0;
fail:
    EVP_MD_CTX_free(md);
    ERR_clear_error();
    return -1;
}

static void pkey_close(void *ctx)
{
    struct pkey_ctx *c = ctx;

    if (c == NULL)
        return;
    EVP_PKEY_free(c->pkey);
    sworn_memzero(c, sizeof(*c));
    free(c);
}

static const struct sworn_note_signer_ops ed25519_file_ops = {
    .kind = "ed25519-file",
    .sign = pkey_sign,
    .close = pkey_close,
};

static const struct sworn_note_signer_ops p256_pem_ops = {
    .kind = "ecdsa-p256-pem",
    .sign = pkey_sign,
    .close = pkey_close,
};

/* Fill pub for an Ed25519 key: name, type 0x01, the raw public key and its key id. */
static int ed25519_pub(EVP_PKEY *pkey, const char *name, size_t name_len,
                       struct sworn_note_verifier *pub)
{
    size_t key_len = ED25519_KEY_LEN;

    memset(pub, 0, sizeof(*pub));
    if (EVP_PKEY_get_raw_public_key(pkey, pub->key, &key_len) != 1 || key_len != ED25519_KEY_LEN) {
        ERR_clear_error();
        return sworn_err_set(SWORN_ERR_CRYPTO, "cannot get the Ed25519 public key");
    }
    memcpy(pub->name, name, name_len);
    pub->name[name_len] = '\0';
    pub->alg = SWORN_NOTE_ALG_ED25519;
    pub->key_len = ED25519_KEY_LEN;
    return sworn_note_key_id(pub->name, name_len, pub->alg, pub->key, pub->key_len, &pub->key_id);
}

/* Open a PRIVATE+KEY+ file's contents (data[0..len), trailing newline already removed). */
static int open_ed25519(const uint8_t *data, size_t len, const char *path, const char *want_name,
                        struct sworn_note_signer *out)
{
    struct sworn_buf b = sworn_buf_init(data, len);
    struct sworn_buf idb;
    const uint8_t *p = NULL, *name = NULL, *hex = NULL, *b64 = NULL, *plus;
    uint8_t seed[1 + ED25519_KEY_LEN + 2]; /* room for a decoder that overshoots, then checked */
    uint8_t id_be[KEY_ID_LEN];
    size_t name_len, seed_len = 0, b64_len;
    uint32_t file_id = 0;
    struct pkey_ctx *ctx = NULL;
    EVP_PKEY *pkey = NULL;
    struct sworn_note_verifier pub;

    SWORN_GUARD(sworn_buf_get_ptr(&b, sizeof(SKEY_PREFIX) - 1, &p));
    plus = memchr(data + b.off, '+', sworn_buf_remaining(&b));
    SWORN_ENSURE(plus != NULL, SWORN_ERR_FORMAT, "key file %s: no '+' after the name", path);
    name_len = (size_t)(plus - (data + b.off));
    SWORN_GUARD(sworn_buf_get_ptr(&b, name_len, &name));
    SWORN_GUARD(sworn_note_name_check((const char *)name, name_len));
    SWORN_GUARD(sworn_buf_get_ptr(&b, 1, &p));
    SWORN_GUARD(sworn_buf_get_ptr(&b, KEY_ID_HEX_LEN, &hex));
    SWORN_GUARD(sworn_hex_decode((const char *)hex, KEY_ID_HEX_LEN, id_be, sizeof(id_be)));
    SWORN_GUARD(sworn_buf_get_ptr(&b, 1, &p));
    SWORN_ENSURE(*p == '+', SWORN_ERR_FORMAT, "key file %s: key id is not 8 hex digits", path);
    b64_len = sworn_buf_remaining(&b);
    SWORN_GUARD(sworn_buf_get_ptr(&b, b64_len, &b64));
    SWORN_ENSURE(
        sworn_base64_decode((const char *)b64, b64_len, seed, sizeof(seed), &seed_len) == 0 &&
            seed_len == 1 + ED25519_KEY_LEN && seed[0] == SWORN_NOTE_ALG_ED25519,
        SWORN_ERR_FORMAT, "key file %s: key is not base64 of 0x01 and a 32-byte seed", path);
    SWORN_ENSURE(want_name == NULL ||
                     (strlen(want_name) == name_len && memcmp(want_name, name, name_len) == 0),
                 SWORN_ERR_ARG, "key file %s: key is named %.*s, not %s", path, (int)name_len,
                 (const char *)name, want_name != NULL ? want_name : "");
    pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed + 1, ED25519_KEY_LEN);
    SWORN_ENSURE(pkey != NULL, SWORN_ERR_CRYPTO, "key file %s: OpenSSL refused the seed", path);
    SWORN_GUARD(ed25519_pub(pkey, (const char *)name, name_len, &pub));
    idb = sworn_buf_init(id_be, sizeof(id_be));
    SWORN_GUARD(sworn_buf_get_u32be(&idb, &file_id));
    SWORN_ENSURE(file_id == pub.key_id, SWORN_ERR_FORMAT,
                 "key file %s: key id %08" PRIx32 " does not match the key (%08" PRIx32 ")", path,
                 file_id, pub.key_id);
    ctx = calloc(1, sizeof(*ctx));
    SWORN_ENSURE(ctx != NULL, SWORN_ERR_NOMEM, "no memory for a signer");
    ctx->pkey = pkey;
    ctx->md = NULL;
    out->ops = &ed25519_file_ops;
    out->ctx = ctx;
    out->pub = pub;
    sworn_memzero(seed, sizeof(seed));
    return 0;
fail:
    sworn_memzero(seed, sizeof(seed));
    EVP_PKEY_free(pkey);
    ERR_clear_error();
    return -1;
}

/* OpenSSL would prompt on the terminal for an encrypted PEM: refuse instead. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

/* Whether pkey is an EC key on the named curve P-256. */
static int is_p256(EVP_PKEY *pkey)
{
    char group[64];
    size_t group_len = 0;

    return EVP_PKEY_is_a(pkey, "EC") &&
           EVP_PKEY_get_group_name(pkey, group, sizeof(group), &group_len) == 1 &&
           OBJ_sn2nid(group) == NID_X9_62_prime256v1;
}

/* Open a PEM file's contents as an ECDSA P-256 signer named name. */
static int open_p256(const uint8_t *data, size_t len, const char *path, const char *name,
                     struct sworn_note_signer *out)
{
    struct sworn_note_verifier pub;
    struct pkey_ctx *ctx = NULL;
    EVP_PKEY *pkey = NULL;
    BIO *bio = NULL;
    unsigned char *der = NULL;
    size_t name_len;
    int der_len;

    memset(&pub, 0, sizeof(pub));
    SWORN_ENSURE(name != NULL, SWORN_ERR_ARG, "key file %s: a PEM key needs a key name", path);
    name_len = strlen(name);
    SWORN_GUARD(sworn_note_name_check(name, name_len));
    /* A read-only BIO over our buffer: OpenSSL copies nothing we would have to wipe. */
    bio = BIO_new_mem_buf(data, (int)len);
    SWORN_ENSURE(bio != NULL, SWORN_ERR_NOMEM, "no memory for a BIO");
    pkey = PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL);
    SWORN_ENSURE(pkey != NULL, SWORN_ERR_FORMAT, "key file %s: not an unencrypted PEM private key",
                 path);
    SWORN_ENSURE(is_p256(pkey), SWORN_ERR_FORMAT, "key file %s: PEM key is not ECDSA P-256", path);
    /* Verifier keys carry the uncompressed point, as Go's x509.MarshalPKIXPublicKey writes it. */
    SWORN_ENSURE(EVP_PKEY_set_utf8_string_param(pkey, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                                "uncompressed") == 1,
                 SWORN_ERR_CRYPTO, "key file %s: cannot select the uncompressed point form", path);
    der_len = i2d_PUBKEY(pkey, &der);
    SWORN_ENSURE(der_len > 0 && (size_t)der_len <= SWORN_NOTE_KEY_MAX, SWORN_ERR_CRYPTO,
                 "key file %s: cannot encode the public key", path);
    memcpy(pub.name, name, name_len);
    pub.name[name_len] = '\0';
    pub.alg = SWORN_NOTE_ALG_ECDSA_P256;
    pub.key_len = (size_t)der_len;
    memcpy(pub.key, der, pub.key_len);
    SWORN_GUARD(sworn_note_key_id(pub.name, name_len, pub.alg, pub.key, pub.key_len, &pub.key_id));
    ctx = calloc(1, sizeof(*ctx));
    SWORN_ENSURE(ctx != NULL, SWORN_ERR_NOMEM, "no memory for a signer");
    ctx->pkey = pkey;
    ctx->md = EVP_sha256();
    out->ops = &p256_pem_ops;
    out->ctx = ctx;
    out->pub = pub;
    OPENSSL_free(der);
    BIO_free(bio);
    return 0;
fail:
    OPENSSL_free(der);
    EVP_PKEY_free(pkey);
    BIO_free(bio);
    ERR_clear_error();
    return -1;
}

int sworn_note_signer_open_file(const char *path, const char *name, struct sworn_note_signer *out)
{
    uint8_t data[KEYFILE_MAX + 1];
    size_t len = 0;
    struct sworn_note_signer s;
    int r = -1;

    memset(&s, 0, sizeof(s));
    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "signer: NULL path or output");
    SWORN_GUARD(sworn_secretfile_read(path, "key file", data, sizeof(data), &len));
    if (len >= sizeof(SKEY_PREFIX) - 1 && memcmp(data, SKEY_PREFIX, sizeof(SKEY_PREFIX) - 1) == 0) {
        /* One trailing newline is tolerated: editors and `echo` add it. */
        if (len > 0 && data[len - 1] == '\n')
            len--;
        SWORN_GUARD(open_ed25519(data, len, path, name, &s));
    } else if (len >= sizeof(PEM_PREFIX) - 1 &&
               memcmp(data, PEM_PREFIX, sizeof(PEM_PREFIX) - 1) == 0) {
        SWORN_GUARD(open_p256(data, len, path, name, &s));
    } else {
        sworn_err_set(SWORN_ERR_FORMAT,
                      "key file %s is neither a PRIVATE+KEY+ Ed25519 key nor a PEM private key",
                      path);
        goto fail;
    }
    *out = s;
    r = 0;
fail:
    sworn_memzero(data, sizeof(data));
    return r;
}

void sworn_note_signer_close(struct sworn_note_signer *s)
{
    if (s == NULL)
        return;
    if (s->ops != NULL && s->ops->close != NULL)
        s->ops->close(s->ctx);
    memset(s, 0, sizeof(*s));
}

/* Append n bytes at out[*off], keeping room for the final NUL. */
static int put(char *out, size_t cap, size_t *off, const void *p, size_t n)
{
    if (n >= cap - *off)
        return sworn_err_set(SWORN_ERR_RANGE, "sign: signed note does not fit in %zu bytes", cap);
    memcpy(out + *off, p, n);
    *off += n;
    return 0;
}

int sworn_note_sign(const char *text, size_t text_len, struct sworn_note_signer *const *signers,
                    size_t n, char *out, size_t cap, size_t *out_len)
{
    uint8_t raw[KEY_ID_LEN + SWORN_NOTE_SIG_MAX];
    char b64[SWORN_BASE64_LEN(KEY_ID_LEN + SWORN_NOTE_SIG_MAX) + 1];
    struct sworn_note one; /* the text with one fresh signature, to check it */
    size_t off = 0;

    SWORN_ENSURE(out != NULL && cap > 0 && out_len != NULL && (signers != NULL || n == 0),
                 SWORN_ERR_ARG, "sign: NULL argument");
    SWORN_ENSURE(n >= 1 && n <= SWORN_NOTE_MAX_SIGS, SWORN_ERR_ARG, "sign: %zu signers, need 1..%d",
                 n, SWORN_NOTE_MAX_SIGS);
    SWORN_GUARD(sworn_note_text_check(text, text_len));
    SWORN_GUARD(put(out, cap, &off, text, text_len));
    SWORN_GUARD(put(out, cap, &off, "\n", 1));
    for (size_t i = 0; i < n; i++) {
        const struct sworn_note_signer *s = signers[i];
        size_t name_len, sig_len = 0;
        long b64_len;

        SWORN_ENSURE(s != NULL && s->ops != NULL && s->ops->sign != NULL, SWORN_ERR_ARG,
                     "sign: signer %zu is not open", i);
        name_len = strnlen(s->pub.name, sizeof(s->pub.name));
        SWORN_ENSURE(name_len < sizeof(s->pub.name), SWORN_ERR_ARG,
                     "sign: signer %zu has an unterminated name", i);
        SWORN_GUARD(sworn_note_name_check(s->pub.name, name_len));
        sworn_put_u32be(raw, s->pub.key_id);
        SWORN_GUARD(s->ops->sign(s->ctx, (const uint8_t *)text, text_len, raw + KEY_ID_LEN,
                                 SWORN_NOTE_SIG_MAX, &sig_len));
        SWORN_ENSURE(sig_len > 0 && sig_len <= SWORN_NOTE_SIG_MAX, SWORN_ERR_CRYPTO,
                     "sign: signer %zu returned %zu signature bytes", i, sig_len);
        b64_len = sworn_base64_encode(raw, KEY_ID_LEN + sig_len, b64, sizeof(b64));
        SWORN_GUARD(b64_len);
        SWORN_GUARD(put(out, cap, &off, EM_DASH " ", sizeof(EM_DASH " ") - 1));
        SWORN_GUARD(put(out, cap, &off, s->pub.name, name_len));
        SWORN_GUARD(put(out, cap, &off, " ", 1));
        SWORN_GUARD(put(out, cap, &off, b64, (size_t)b64_len));
        SWORN_GUARD(put(out, cap, &off, "\n", 1));
        /*
         * Check each signature before anyone sees it: a backend that signs with the wrong key (a
         * swapped HSM slot, say) would otherwise publish checkpoints that no one can verify.
         */
        one.text = text;
        one.text_len = text_len;
        one.sig_count = 1;
        one.sigs[0].name = s->pub.name;
        one.sigs[0].name_len = name_len;
        one.sigs[0].key_id = s->pub.key_id;
        one.sigs[0].sig_b64 = b64;
        one.sigs[0].sig_b64_len = (size_t)b64_len;
        if (sworn_note_verify(&one, &s->pub, 1, NULL, NULL, NULL) < 0) {
            char why[SWORN_ERR_MSG_MAX];

            /* Copy first: sworn_err_set must not format from its own message buffer. */
            snprintf(why, sizeof(why), "%s", sworn_err_msg());
            sworn_err_set(SWORN_ERR_CRYPTO,
                          "sign: signer %zu (%s) made a signature that does "
                          "not verify: %s",
                          i, s->ops->kind, why);
            goto fail;
        }
    }
    SWORN_ENSURE(off <= SWORN_NOTE_MAX_LEN, SWORN_ERR_RANGE, "sign: signed note too long");
    out[off] = '\0';
    *out_len = off;
    return 0;
fail:
    if (out != NULL && cap > 0)
        out[0] = '\0';
    return -1;
}

int sworn_note_keygen_ed25519(const char *name, const char *path, char *vkey, size_t vkey_cap)
{
    uint8_t seed[1 + ED25519_KEY_LEN];
    char id_hex[KEY_ID_HEX_LEN + 1];
    uint8_t id_be[KEY_ID_LEN];
    char b64[SKEY_B64_LEN + 1];
    char file[SKEY_FILE_MAX];
    struct sworn_note_verifier pub;
    EVP_PKEY_CTX *kctx = NULL;
    EVP_PKEY *pkey = NULL;
    size_t name_len, seed_len = ED25519_KEY_LEN, off = 0;
    int fd = -1, created = 0, r = -1;

    SWORN_ENSURE(name != NULL && path != NULL && vkey != NULL, SWORN_ERR_ARG,
                 "keygen: NULL argument");
    name_len = strlen(name);
    SWORN_GUARD(sworn_note_name_check(name, name_len));
    kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    SWORN_ENSURE(kctx != NULL && EVP_PKEY_keygen_init(kctx) == 1 &&
                     EVP_PKEY_keygen(kctx, &pkey) == 1,
                 SWORN_ERR_CRYPTO, "keygen: OpenSSL could not make an Ed25519 key");
    seed[0] = SWORN_NOTE_ALG_ED25519;
    SWORN_ENSURE(EVP_PKEY_get_raw_private_key(pkey, seed + 1, &seed_len) == 1 &&
                     seed_len == ED25519_KEY_LEN,
                 SWORN_ERR_CRYPTO, "keygen: cannot read the new seed");
    SWORN_GUARD(ed25519_pub(pkey, name, name_len, &pub));
    SWORN_GUARD(sworn_note_verifier_format(&pub, vkey, vkey_cap));
    sworn_put_u32be(id_be, pub.key_id);
    SWORN_GUARD(sworn_hex_encode(id_be, sizeof(id_be), id_hex, sizeof(id_hex)));
    SWORN_GUARD(sworn_base64_encode(seed, sizeof(seed), b64, sizeof(b64)));
    SWORN_GUARD(put(file, sizeof(file), &off, SKEY_PREFIX, sizeof(SKEY_PREFIX) - 1));
    SWORN_GUARD(put(file, sizeof(file), &off, name, name_len));
    SWORN_GUARD(put(file, sizeof(file), &off, "+", 1));
    SWORN_GUARD(put(file, sizeof(file), &off, id_hex, KEY_ID_HEX_LEN));
    SWORN_GUARD(put(file, sizeof(file), &off, "+", 1));
    SWORN_GUARD(put(file, sizeof(file), &off, b64, SKEY_B64_LEN));
    SWORN_GUARD(put(file, sizeof(file), &off, "\n", 1));

    /* O_EXCL: never replace an existing key; O_NOFOLLOW: never write through a planted link. */
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    SWORN_ENSURE(fd >= 0, SWORN_ERR_IO, "keygen: cannot create %s: %s", path, strerror(errno));
    created = 1;
    for (size_t done = 0; done < off;) {
        ssize_t w = write(fd, file + done, off - done);

        if (w < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(w > 0, SWORN_ERR_IO, "keygen: cannot write %s: %s", path, strerror(errno));
        done += (size_t)w;
    }
    SWORN_ENSURE(fsync(fd) == 0, SWORN_ERR_IO, "keygen: cannot sync %s: %s", path, strerror(errno));
    SWORN_ENSURE(close(fd) == 0, SWORN_ERR_IO, "keygen: cannot close %s: %s", path,
                 strerror(errno));
    fd = -1;
    r = 0;
fail:
    if (fd >= 0)
        close(fd);
    /* A half-written key file is worse than none. */
    if (r < 0 && created)
        unlink(path);
    if (r < 0 && vkey != NULL && vkey_cap > 0)
        vkey[0] = '\0';
    sworn_memzero(seed, sizeof(seed));
    sworn_memzero(b64, sizeof(b64));
    sworn_memzero(file, sizeof(file));
    EVP_PKEY_free(pkey);
    EVP_PKEY_CTX_free(kctx);
    ERR_clear_error();
    return r;
}
