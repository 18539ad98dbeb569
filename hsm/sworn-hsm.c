/*
 * sworn-hsm -- the operator's key tool for PKCS#11 tokens.
 *
 *   init-dev-token --dir DIR --label LABEL --so-pin-file F --pin-file F
 *       a SoftHSMv2 token in its own folder DIR (DIR/softhsm2.conf, DIR/tokens), for demos and
 *       tests only; prints the SOFTHSM2_CONF line to use it
 *   keygen --module M --token LABEL --pin-file F --purpose P [--alg p256|ed25519] [--date YYYYMMDD]
 *       a sign-only, sensitive, never-extractable key pair on the token; its label is
 *       sworn/<purpose>/<yyyymmdd> (never reused: an existing label is refused) and its CKA_ID
 *       the first 16 bytes of its key id (SHA-256 of the SPKI); prints its pkcs11: URI
 *   list --module M --token LABEL --pin-file F
 *       every private key on the token with its label, id, type, attributes and key id
 *   pubkey --module M --uri URI [--der] [--out FILE]
 *       the public key of the key the URI names (PEM by default), read without login
 *
 * PINs come only from files (mode 0600 or stricter), never from argv or the environment.
 * Exit status: 0 success, 1 a refusal about the key or token, 2 bad usage or input.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "backend.h"
#include "encoding.h"
#include "err.h"
#include "p11module.h"
#include "pkcs11uri.h"
#include "signer.h"
#include "wipe.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define SOFTHSM_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define CKA_ID_LEN 16
#define LABEL_MAX 64

static const char *command = "";

static const char usage_text[] =
    "usage: sworn-hsm COMMAND [OPTIONS]\n"
    "  init-dev-token --dir DIR --label LABEL --so-pin-file F --pin-file F\n"
    "  keygen --module M --token LABEL --pin-file F --purpose checkpoint|receipt|key-event\n"
    "         [--alg p256|ed25519] [--date YYYYMMDD]\n"
    "  list --module M --token LABEL --pin-file F\n"
    "  pubkey --module M --uri URI [--der] [--out FILE]\n"
    "PINs are read from files of mode 0600 or stricter. Exit: 0 ok, 1 refused, 2 usage.\n";

struct opts {
    const char *dir, *label, *so_pin_file, *pin_file, *module, *token, *purpose, *alg, *date, *uri,
        *out;
    int der;
};

static int usage(const char *msg)
{
    fprintf(stderr, "sworn-hsm: %s%s%s\nrun 'sworn-hsm --help' for usage\n", command,
            *command ? ": " : "", msg);
    return EXIT_USAGE;
}

static int fail(void)
{
    enum sworn_err_code c = sworn_err_code();

    fprintf(stderr, "sworn-hsm: %s: %s\n", command, sworn_err_msg());
    return c == SWORN_ERR_ARG || c == SWORN_ERR_FORMAT || c == SWORN_ERR_NOTFOUND ? EXIT_USAGE
                                                                                  : EXIT_REFUSED;
}

/* Open a read-write session on the token labelled `label` and log in as the user. */
static int open_user_session(struct sworn_p11_module *m, const char *module, const char *label,
                             const char *pin_file, CK_SESSION_HANDLE *session)
{
    struct sworn_pkcs11_uri uri;
    uint8_t pin[SWORN_P11_PIN_MAX];
    size_t pin_len = 0;
    CK_SLOT_ID slot;
    CK_RV rv;
    int rc = -1;

    memset(&uri, 0, sizeof(uri));
    SWORN_ENSURE(label != NULL && strlen(label) <= SWORN_PKCS11_LABEL_MAX, SWORN_ERR_ARG,
                 "--token LABEL (at most 32 bytes) is required");
    strcpy(uri.token, label);
    SWORN_GUARD(sworn_p11_read_pin(pin_file, pin, &pin_len));
    SWORN_GUARD(sworn_p11_load(module, m));
    SWORN_GUARD(sworn_p11_find_slot(m, &uri, &slot));
    rv = m->f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, session);
    if (rv != CKR_OK) {
        sworn_p11_error("C_OpenSession", rv);
        goto fail;
    }
    rv = m->f->C_Login(*session, CKU_USER, pin, (CK_ULONG)pin_len);
    if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
        sworn_err_set(SWORN_ERR_IO, "the token refused the PIN in %s (CKR 0x%lx)", pin_file,
                      (unsigned long)rv);
        goto fail;
    }
    rc = 0;
fail:
    sworn_memzero(pin, sizeof(pin));
    return rc;
}

static int cmd_init_dev_token(const struct opts *o)
{
    char conf[PATH_MAX], tokens[PATH_MAX], text[PATH_MAX + 128];
    uint8_t so_pin[SWORN_P11_PIN_MAX], pin[SWORN_P11_PIN_MAX];
    size_t so_len = 0, pin_len = 0;
    struct sworn_p11_module m;
    CK_UTF8CHAR label[32];
    CK_SESSION_HANDLE session;
    CK_SLOT_ID slot;
    CK_RV rv;
    FILE *f;
    int rc = EXIT_USAGE;

    memset(&m, 0, sizeof(m));
    if (o->dir == NULL || o->label == NULL || o->so_pin_file == NULL || o->pin_file == NULL)
        return usage("needs --dir, --label, --so-pin-file and --pin-file");
    if (strlen(o->label) > sizeof(label) || o->dir[0] != '/')
        return usage("--label is at most 32 bytes and --dir must be absolute");
    if (sworn_p11_read_pin(o->so_pin_file, so_pin, &so_len) < 0 ||
        sworn_p11_read_pin(o->pin_file, pin, &pin_len) < 0) {
        rc = fail();
        goto done;
    }
    snprintf(conf, sizeof(conf), "%s/softhsm2.conf", o->dir);
    snprintf(tokens, sizeof(tokens), "%s/tokens", o->dir);
    if ((mkdir(o->dir, 0700) != 0 && access(o->dir, W_OK) != 0) ||
        (mkdir(tokens, 0700) != 0 && access(tokens, W_OK) != 0)) {
        fprintf(stderr, "sworn-hsm: init-dev-token: cannot make %s\n", tokens);
        goto done;
    }
    snprintf(text, sizeof(text),
             "directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n", tokens);
    if ((f = fopen(conf, "w")) == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
        fprintf(stderr, "sworn-hsm: init-dev-token: cannot write %s\n", conf);
        goto done;
    }
    /* SoftHSM finds its configuration through this variable: a path, not a secret. */
    setenv("SOFTHSM2_CONF", conf, 1);
    if (sworn_p11_load(SOFTHSM_MODULE, &m) < 0 || sworn_p11_find_free_slot(&m, &slot) < 0) {
        rc = fail();
        goto done;
    }
    memset(label, ' ', sizeof(label));
    memcpy(label, o->label, strlen(o->label));
    rv = m.f->C_InitToken(slot, so_pin, (CK_ULONG)so_len, label);
    if (rv == CKR_OK)
        rv = m.f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &session);
    if (rv == CKR_OK)
        rv = m.f->C_Login(session, CKU_SO, so_pin, (CK_ULONG)so_len);
    if (rv == CKR_OK)
        rv = m.f->C_InitPIN(session, pin, (CK_ULONG)pin_len);
    if (rv != CKR_OK) {
        sworn_p11_error("token initialisation", rv);
        rc = fail();
        goto done;
    }
    printf("export SOFTHSM2_CONF=%s\n", conf);
    rc = 0;
done:
    sworn_memzero(so_pin, sizeof(so_pin));
    sworn_memzero(pin, sizeof(pin));
    sworn_p11_unload(&m);
    return rc;
}

/* Is there already an object with this label? (Labels are never reused.) */
static int label_taken(struct sworn_p11_module *m, CK_SESSION_HANDLE s, const char *label)
{
    CK_ATTRIBUTE t = {CKA_LABEL, (void *)label, strlen(label)};
    CK_OBJECT_HANDLE h;
    CK_ULONG n = 0;

    if (m->f->C_FindObjectsInit(s, &t, 1) != CKR_OK)
        return 1;
    (void)m->f->C_FindObjects(s, &h, 1, &n);
    (void)m->f->C_FindObjectsFinal(s);
    return n > 0;
}

/* Percent-encode for a pkcs11: URI value. */
static void uri_escape(const uint8_t *v, size_t n, int all, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        int plain = !all && ((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
                             (v[i] >= '0' && v[i] <= '9') || strchr("-._~", v[i]) != NULL);
        if (plain) {
            out[o++] = (char)v[i];
        } else {
            out[o++] = '%';
            out[o++] = hex[v[i] >> 4];
            out[o++] = hex[v[i] & 15];
        }
    }
    out[o] = '\0';
}

/* Read the public key of a key pair into a DER SPKI. */
static int public_spki(struct sworn_p11_module *m, CK_SESSION_HANDLE s, CK_OBJECT_HANDLE pub,
                       uint8_t *spki, size_t *spki_len)
{
    uint8_t params[64], point[80];
    CK_ATTRIBUTE a[2] = {{CKA_EC_PARAMS, params, sizeof(params)},
                         {CKA_EC_POINT, point, sizeof(point)}};
    CK_RV rv = m->f->C_GetAttributeValue(s, pub, a, 2);

    if (rv != CKR_OK)
        return sworn_p11_error("C_GetAttributeValue(EC_POINT)", rv);
    /* CKA_EC_POINT is a DER OCTET STRING around the point. */
    if (a[1].ulValueLen == 67 && point[0] == 0x04 && point[1] == 65)
        return sworn_p256_spki_from_point(point + 2, spki, SWORN_SIGNER_SPKI_MAX, spki_len);
    if (a[1].ulValueLen == 34 && point[0] == 0x04 && point[1] == 32) {
        EVP_PKEY *k = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, point + 2, 32);
        unsigned char *p = spki;
        int n = k ? i2d_PUBKEY(k, &p) : -1;

        EVP_PKEY_free(k);
        if (n <= 0)
            return sworn_err_set(SWORN_ERR_CRYPTO, "cannot encode the Ed25519 public key");
        *spki_len = (size_t)n;
        return 0;
    }
    return sworn_err_set(SWORN_ERR_FORMAT, "unexpected CKA_EC_POINT of %lu bytes",
                         (unsigned long)a[1].ulValueLen);
}

static int cmd_keygen(const struct opts *o)
{
    static const uint8_t p256_oid[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    static const uint8_t ed25519_oid[] = {0x06, 0x03, 0x2b, 0x65, 0x70};
    struct sworn_p11_module m;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE pub, priv;
    CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
    CK_KEY_TYPE kt;
    CK_MECHANISM mech = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
    char label[LABEL_MAX], date[9], uri[1024], esc_token[128], esc_label[3 * LABEL_MAX + 1],
        esc_id[3 * CKA_ID_LEN + 1], hex[2 * SWORN_KEY_ID_LEN + 1];
    uint8_t tmp_id[CKA_ID_LEN], key_id[SWORN_KEY_ID_LEN], spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    int ed25519;
    CK_RV rv;
    int rc = EXIT_USAGE;

    memset(&m, 0, sizeof(m));
    if (o->purpose == NULL ||
        (strcmp(o->purpose, "checkpoint") != 0 && strcmp(o->purpose, "receipt") != 0 &&
         strcmp(o->purpose, "key-event") != 0))
        return usage("--purpose must be checkpoint, receipt or key-event");
    if (o->alg != NULL && strcmp(o->alg, "p256") != 0 && strcmp(o->alg, "ed25519") != 0)
        return usage("--alg must be p256 or ed25519");
    ed25519 = o->alg != NULL && strcmp(o->alg, "ed25519") == 0;
    if (o->date != NULL) {
        if (strlen(o->date) != 8 || strspn(o->date, "0123456789") != 8)
            return usage("--date must be YYYYMMDD");
        strcpy(date, o->date);
    } else {
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(date, sizeof(date), "%Y%m%d", &tm);
    }
    snprintf(label, sizeof(label), "sworn/%s/%s", o->purpose, date);
    if (open_user_session(&m, o->module, o->token, o->pin_file, &s) < 0) {
        rc = fail();
        goto done;
    }
    if (label_taken(&m, s, label)) {
        fprintf(stderr,
                "sworn-hsm: keygen: the label %s exists already; labels are never reused "
                "(use --date for a second key on one day)\n",
                label);
        rc = EXIT_REFUSED;
        goto done;
    }
    /* A random temporary CKA_ID: the real one derives from the public key, known only after. */
    if (RAND_bytes(tmp_id, sizeof(tmp_id)) != 1) {
        sworn_err_set(SWORN_ERR_CRYPTO, "no random bytes for a temporary CKA_ID");
        rc = fail();
        goto done;
    }
    kt = ed25519 ? CKK_EC_EDWARDS : CKK_EC;
    if (ed25519)
        mech.mechanism = CKM_EC_EDWARDS_KEY_PAIR_GEN;
    {
        CK_ATTRIBUTE pub_t[] = {
            {CKA_TOKEN, &yes, sizeof(yes)},
            {CKA_PRIVATE, &no, sizeof(no)},
            {CKA_VERIFY, &yes, sizeof(yes)},
            {CKA_ENCRYPT, &no, sizeof(no)},
            {CKA_WRAP, &no, sizeof(no)},
            {CKA_KEY_TYPE, &kt, sizeof(kt)},
            {CKA_EC_PARAMS, ed25519 ? (void *)ed25519_oid : (void *)p256_oid,
             ed25519 ? sizeof(ed25519_oid) : sizeof(p256_oid)},
            {CKA_LABEL, label, strlen(label)},
            {CKA_ID, tmp_id, sizeof(tmp_id)},
        };
        CK_ATTRIBUTE priv_t[] = {
            {CKA_TOKEN, &yes, sizeof(yes)},      {CKA_PRIVATE, &yes, sizeof(yes)},
            {CKA_SENSITIVE, &yes, sizeof(yes)},  {CKA_EXTRACTABLE, &no, sizeof(no)},
            {CKA_SIGN, &yes, sizeof(yes)},       {CKA_DECRYPT, &no, sizeof(no)},
            {CKA_UNWRAP, &no, sizeof(no)},       {CKA_DERIVE, &no, sizeof(no)},
            {CKA_SIGN_RECOVER, &no, sizeof(no)}, {CKA_KEY_TYPE, &kt, sizeof(kt)},
            {CKA_LABEL, label, strlen(label)},   {CKA_ID, tmp_id, sizeof(tmp_id)},
        };
        rv = m.f->C_GenerateKeyPair(s, &mech, pub_t, sizeof(pub_t) / sizeof(pub_t[0]), priv_t,
                                    sizeof(priv_t) / sizeof(priv_t[0]), &pub, &priv);
    }
    if (rv != CKR_OK) {
        sworn_p11_error("C_GenerateKeyPair", rv);
        rc = fail();
        goto done;
    }
    if (public_spki(&m, s, pub, spki, &spki_len) < 0) {
        rc = fail();
        goto done;
    }
    SHA256(spki, spki_len, key_id);
    {
        CK_ATTRIBUTE id = {CKA_ID, key_id, CKA_ID_LEN};

        rv = m.f->C_SetAttributeValue(s, pub, &id, 1);
        if (rv == CKR_OK)
            rv = m.f->C_SetAttributeValue(s, priv, &id, 1);
        if (rv != CKR_OK) {
            sworn_p11_error("C_SetAttributeValue(CKA_ID)", rv);
            rc = fail();
            goto done;
        }
    }
    uri_escape((const uint8_t *)o->token, strlen(o->token), 0, esc_token);
    uri_escape((const uint8_t *)label, strlen(label), 0, esc_label);
    uri_escape(key_id, CKA_ID_LEN, 1, esc_id);
    snprintf(uri, sizeof(uri), "pkcs11:token=%s;id=%s;object=%s", esc_token, esc_id, esc_label);
    sworn_hex_encode(key_id, sizeof(key_id), hex, sizeof(hex));
    printf("%s\n", uri);
    fprintf(stderr, "sworn-hsm: keygen: %s key %s, key id %s\n", ed25519 ? "Ed25519" : "P-256",
            label, hex);
    rc = 0;
done:
    sworn_p11_unload(&m);
    return rc;
}

/* Find the public key object with a CKA_ID and/or label. */
static int find_public(struct sworn_p11_module *m, CK_SESSION_HANDLE s, const uint8_t *id,
                       size_t id_len, const char *label, CK_OBJECT_HANDLE *out)
{
    CK_OBJECT_CLASS cls = CKO_PUBLIC_KEY;
    CK_ATTRIBUTE t[3] = {{CKA_CLASS, &cls, sizeof(cls)}};
    CK_OBJECT_HANDLE h[2];
    CK_ULONG n = 1, found = 0;
    CK_RV rv;

    if (id != NULL)
        t[n++] = (CK_ATTRIBUTE){CKA_ID, (void *)id, id_len};
    if (label != NULL && label[0] != '\0')
        t[n++] = (CK_ATTRIBUTE){CKA_LABEL, (void *)label, strlen(label)};
    rv = m->f->C_FindObjectsInit(s, t, n);
    if (rv != CKR_OK)
        return sworn_p11_error("C_FindObjectsInit", rv);
    rv = m->f->C_FindObjects(s, h, 2, &found);
    (void)m->f->C_FindObjectsFinal(s);
    if (rv != CKR_OK)
        return sworn_p11_error("C_FindObjects", rv);
    if (found != 1)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s public key matches",
                             found ? "more than one" : "no");
    *out = h[0];
    return 0;
}

static int write_spki(const uint8_t *spki, size_t len, int der, const char *out)
{
    FILE *f = out ? fopen(out, "wb") : stdout;
    const unsigned char *p = spki;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)len);
    int ok;

    if (f == NULL || k == NULL) {
        EVP_PKEY_free(k);
        if (f != NULL && f != stdout)
            fclose(f);
        return sworn_err_set(SWORN_ERR_IO, "cannot write the public key");
    }
    ok = der ? fwrite(spki, 1, len, f) == len : PEM_write_PUBKEY(f, k) == 1;
    EVP_PKEY_free(k);
    if (f != stdout)
        ok = fclose(f) == 0 && ok;
    return ok ? 0 : sworn_err_set(SWORN_ERR_IO, "cannot write the public key");
}

static int cmd_pubkey(const struct opts *o)
{
    struct sworn_pkcs11_uri uri;
    struct sworn_p11_module m;
    CK_SESSION_HANDLE s;
    CK_SLOT_ID slot;
    CK_OBJECT_HANDLE pub;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    CK_RV rv;
    int rc;

    memset(&m, 0, sizeof(m));
    if (o->uri == NULL)
        return usage("needs --uri URI");
    if (sworn_pkcs11_uri_parse(o->uri, strlen(o->uri), &uri) < 0 ||
        sworn_p11_load(o->module, &m) < 0 || sworn_p11_find_slot(&m, &uri, &slot) < 0) {
        rc = fail();
        goto done;
    }
    /* Public key objects are public: no login, no PIN. */
    rv = m.f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &s);
    if (rv != CKR_OK) {
        sworn_p11_error("C_OpenSession", rv);
        rc = fail();
        goto done;
    }
    if (find_public(&m, s, uri.has_id ? uri.id : NULL, uri.id_len, uri.object, &pub) < 0 ||
        public_spki(&m, s, pub, spki, &spki_len) < 0 ||
        write_spki(spki, spki_len, o->der, o->out) < 0) {
        rc = fail();
        goto done;
    }
    rc = 0;
done:
    sworn_p11_unload(&m);
    return rc;
}

static int cmd_list(const struct opts *o)
{
    struct sworn_p11_module m;
    CK_SESSION_HANDLE s;
    CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
    CK_ATTRIBUTE t = {CKA_CLASS, &cls, sizeof(cls)};
    CK_OBJECT_HANDLE keys[64];
    CK_ULONG n = 0;
    int rc;

    memset(&m, 0, sizeof(m));
    if (open_user_session(&m, o->module, o->token, o->pin_file, &s) < 0 ||
        m.f->C_FindObjectsInit(s, &t, 1) != CKR_OK) {
        rc = fail();
        goto done;
    }
    (void)m.f->C_FindObjects(s, keys, 64, &n);
    (void)m.f->C_FindObjectsFinal(s);
    for (CK_ULONG i = 0; i < n; i++) {
        char label[256] = "", idhex[2 * 64 + 1] = "", kid[2 * SWORN_KEY_ID_LEN + 1] = "?";
        uint8_t id[64], spki[SWORN_SIGNER_SPKI_MAX], key_id[SWORN_KEY_ID_LEN];
        CK_BBOOL sign = 0, sens = 0, asens = 0, extr = 1, nextr = 0;
        CK_KEY_TYPE kt = 0;
        CK_ATTRIBUTE a[] = {{CKA_LABEL, label, sizeof(label) - 1},
                            {CKA_ID, id, sizeof(id)},
                            {CKA_SIGN, &sign, 1},
                            {CKA_SENSITIVE, &sens, 1},
                            {CKA_ALWAYS_SENSITIVE, &asens, 1},
                            {CKA_EXTRACTABLE, &extr, 1},
                            {CKA_NEVER_EXTRACTABLE, &nextr, 1},
                            {CKA_KEY_TYPE, &kt, sizeof(kt)}};
        CK_OBJECT_HANDLE pub;
        size_t spki_len = 0;

        if (m.f->C_GetAttributeValue(s, keys[i], a, sizeof(a) / sizeof(a[0])) != CKR_OK)
            continue;
        label[a[0].ulValueLen < sizeof(label) ? a[0].ulValueLen : sizeof(label) - 1] = '\0';
        sworn_hex_encode(id, a[1].ulValueLen, idhex, sizeof(idhex));
        if (find_public(&m, s, id, a[1].ulValueLen, NULL, &pub) == 0 &&
            public_spki(&m, s, pub, spki, &spki_len) == 0) {
            SHA256(spki, spki_len, key_id);
            sworn_hex_encode(key_id, sizeof(key_id), kid, sizeof(kid));
        }
        printf("%s id=%s type=%s sign=%d sensitive=%d always-sensitive=%d extractable=%d "
               "never-extractable=%d key-id=%s\n",
               label, idhex,
               kt == CKK_EC           ? "p256"
               : kt == CKK_EC_EDWARDS ? "ed25519"
                                      : "other",
               sign, sens, asens, extr, nextr, kid);
    }
    rc = 0;
done:
    sworn_p11_unload(&m);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"dir", required_argument, NULL, 'D'},
                                             {"label", required_argument, NULL, 'L'},
                                             {"so-pin-file", required_argument, NULL, 'S'},
                                             {"pin-file", required_argument, NULL, 'P'},
                                             {"module", required_argument, NULL, 'M'},
                                             {"token", required_argument, NULL, 'T'},
                                             {"purpose", required_argument, NULL, 'U'},
                                             {"alg", required_argument, NULL, 'A'},
                                             {"date", required_argument, NULL, 'd'},
                                             {"uri", required_argument, NULL, 'u'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"der", no_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct opts o;
    int c;

    memset(&o, 0, sizeof(o));
    if (argc < 2)
        return usage("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    command = argv[1];
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'D':
            o.dir = optarg;
            break;
        case 'L':
            o.label = optarg;
            break;
        case 'S':
            o.so_pin_file = optarg;
            break;
        case 'P':
            o.pin_file = optarg;
            break;
        case 'M':
            o.module = optarg;
            break;
        case 'T':
            o.token = optarg;
            break;
        case 'U':
            o.purpose = optarg;
            break;
        case 'A':
            o.alg = optarg;
            break;
        case 'd':
            o.date = optarg;
            break;
        case 'u':
            o.uri = optarg;
            break;
        case 'o':
            o.out = optarg;
            break;
        case 'r':
            o.der = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            return usage("unknown or incomplete option");
        }
    }
    if (optind != argc)
        return usage("unexpected argument");
    if (o.module == NULL)
        o.module = SOFTHSM_MODULE;
    if (strcmp(command, "init-dev-token") == 0)
        return cmd_init_dev_token(&o);
    if (strcmp(command, "keygen") == 0)
        return cmd_keygen(&o);
    if (strcmp(command, "list") == 0)
        return cmd_list(&o);
    if (strcmp(command, "pubkey") == 0)
        return cmd_pubkey(&o);
    command = "";
    return usage("unknown command");
}
