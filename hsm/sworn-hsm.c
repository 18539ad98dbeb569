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
 * The keyring (formats and rules in keyring.h, keyevent.h and docs/keys.md):
 *   keyring init --out FILE --threshold T --root-vkey VKEY... [--root-key KEYFILE...]
 *       version 1 with these offline roots and no keys; signed when root keys are given
 *   keyring add --in FILE --out FILE --spki DERFILE --purpose P [--valid-from TIME]
 *       the next version (unsigned), with the key added as active
 *   keyring set-roots --in FILE --out FILE --threshold T --root-vkey VKEY...
 *       the next version (unsigned), with new roots and threshold
 *   keyring sign --in FILE --out FILE --root-key KEYFILE... [--prev FILE]
 *       add root signatures, keeping those already there; for version 2 or later --prev names
 *       the version before, and the change is checked and shown before anything is signed
 *   keyring verify [--root-vkey VKEY...] KEYRING_V1 [KEYRING_V2 ...]
 *       verify the chain (with --root-vkey, version 1's roots must be exactly these) and print
 *       the newest version's keys
 * Key events (each writes a statement and the next keyring version, unsigned, for the roots):
 *   rotate --token L --pin-file F --keyring FILE --old-uri URI --purpose P [--key-id HEX]
 *          [--alg p256|ed25519] [--date YYYYMMDD] [--effective-from TIME] --out STATEMENT
 *          --keyring-out FILE
 *       a new key (as keygen), its proof of possession, the statement signed by the old key; the
 *       old key retired and the new one active as of effective-from; prints the new key's URI
 *   retire --pin-file F --keyring FILE --uri URI [--key-id HEX] [--effective-from TIME]
 *          --out STATEMENT --keyring-out FILE
 *       the key signs its own retirement
 *   revoke --keyring FILE (--key-id HEX | --uri URI) [--effective-from TIME] --out STATEMENT
 *          --keyring-out FILE [--uri URI --pin-file F]
 *       no signature by the key is needed (it may be compromised); with --pin-file it adds one
 *   verify-event --statement FILE KEYRING_V1 [KEYRING_V2 ...]
 *       verify the keyring chain, then the statement against its newest version
 * TIME is RFC 3339 UTC, YYYY-MM-DDTHH:MM:SSZ; the default is now. Signing keys are always opened
 * pinned to the SPKI in the keyring. Root key files are PRIVATE+KEY+ (sworn-log keygen) or PEM
 * P-256, mode 0600. --module defaults to SoftHSM's.
 *
 * PINs come only from files (mode 0600 or stricter), never from argv or the environment.
 * Exit status: 0 success, 1 a refusal about the key or token or a failed verification, 2 bad
 * usage or input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
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

#include "cli.h"
#include "backend.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "keyevent.h"
#include "keyring.h"
#include "note.h"
#include "notesign.h"
#include "p11module.h"
#include "pkcs11uri.h"
#include "signer.h"
#include "wipe.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define SOFTHSM_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define CKA_ID_LEN 16
#define LABEL_MAX 64
#define URI_MAX 1024

static const char *command = "";

static const char usage_text[] =
    "usage: sworn-hsm COMMAND [OPTIONS]\n"
    "  init-dev-token --dir DIR --label LABEL --so-pin-file F --pin-file F\n"
    "  keygen --module M --token LABEL --pin-file F --purpose checkpoint|receipt|key-event\n"
    "         [--alg p256|ed25519] [--date YYYYMMDD]\n"
    "  list --module M --token LABEL --pin-file F\n"
    "  pubkey --module M --uri URI [--der] [--out FILE]\n"
    "  keyring init --out FILE --threshold T --root-vkey VKEY... [--root-key KEYFILE...]\n"
    "  keyring add --in FILE --out FILE --spki DERFILE --purpose P [--valid-from TIME]\n"
    "  keyring set-roots --in FILE --out FILE --threshold T --root-vkey VKEY...\n"
    "  keyring sign --in FILE --out FILE --root-key KEYFILE... [--prev FILE]\n"
    "  keyring verify [--root-vkey VKEY...] KEYRING_V1 [KEYRING_V2 ...]\n"
    "  rotate --module M --token L --pin-file F --keyring FILE --old-uri URI --purpose P\n"
    "         [--key-id HEX] [--alg p256|ed25519] [--date YYYYMMDD] [--effective-from TIME]\n"
    "         --out STATEMENT --keyring-out FILE\n"
    "  retire --module M --pin-file F --keyring FILE --uri URI [--key-id HEX]\n"
    "         [--effective-from TIME] --out STATEMENT --keyring-out FILE\n"
    "  revoke --keyring FILE (--key-id HEX | --uri URI) [--effective-from TIME]\n"
    "         --out STATEMENT --keyring-out FILE [--module M --uri URI --pin-file F]\n"
    "  verify-event --statement FILE KEYRING_V1 [KEYRING_V2 ...]\n"
    "TIME is YYYY-MM-DDTHH:MM:SSZ (UTC). PINs are read from files of mode 0600 or stricter.\n";

/* The exit statuses --help adds to the shared ones (common/cli.h). */
static const char own_exits[] =
    "  (1: refused by the token, or not verified; 2: also an input that does not load)\n";

struct opts {
    const char *dir, *label, *so_pin_file, *pin_file, *module, *token, *purpose, *alg, *date, *uri,
        *out;
    /* keyring and key events */
    const char *in, *prev, *keyring, *keyring_out, *old_uri, *spki, *valid_from, *effective_from,
        *key_id, *threshold, *statement;
    const char *root_vkeys[SWORN_KEYRING_MAX_ROOTS + 1];
    size_t n_root_vkeys;
    const char *root_keys[SWORN_KEYRING_MAX_ROOTS];
    size_t n_root_keys;
    char **args; /* positional arguments (keyring verify, verify-event) */
    int nargs;
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
    /* Bad input (malformed, too large, naming nothing) is a usage error; the rest a refusal. */
    return c == SWORN_ERR_ARG || c == SWORN_ERR_FORMAT || c == SWORN_ERR_RANGE ||
                   c == SWORN_ERR_NOTFOUND
               ? EXIT_USAGE
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

/*
 * Make a key pair on the token as `keygen` describes. OUT: uri (capacity URI_MAX), spki
 * (SWORN_SIGNER_SPKI_MAX bytes), *spki_len. Returns 0 or an exit status (messages printed).
 */
static int generate_key(const struct opts *o, char *uri, uint8_t *spki, size_t *spki_len)
{
    static const uint8_t p256_oid[] = {0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
    static const uint8_t ed25519_oid[] = {0x06, 0x03, 0x2b, 0x65, 0x70};
    struct sworn_p11_module m;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE pub, priv;
    CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
    CK_KEY_TYPE kt;
    CK_MECHANISM mech = {CKM_EC_KEY_PAIR_GEN, NULL, 0};
    char label[LABEL_MAX], date[9], esc_token[128], esc_label[3 * LABEL_MAX + 1],
        esc_id[3 * CKA_ID_LEN + 1], hex[2 * SWORN_KEY_ID_LEN + 1];
    uint8_t tmp_id[CKA_ID_LEN], key_id[SWORN_KEY_ID_LEN];
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
                "sworn-hsm: %s: the label %s exists already; labels are never reused "
                "(use --date for a second key on one day)\n",
                command, label);
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
    if (public_spki(&m, s, pub, spki, spki_len) < 0) {
        rc = fail();
        goto done;
    }
    SHA256(spki, *spki_len, key_id);
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
    snprintf(uri, URI_MAX, "pkcs11:token=%s;id=%s;object=%s", esc_token, esc_id, esc_label);
    sworn_hex_encode(key_id, sizeof(key_id), hex, sizeof(hex));
    fprintf(stderr, "sworn-hsm: %s: %s key %s, key id %s\n", command, ed25519 ? "Ed25519" : "P-256",
            label, hex);
    rc = 0;
done:
    sworn_p11_unload(&m);
    return rc;
}

static int cmd_keygen(const struct opts *o)
{
    char uri[URI_MAX];
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    int rc = generate_key(o, uri, spki, &spki_len);

    if (rc == 0)
        printf("%s\n", uri);
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

/* ---------------------------------------------------------------------------------------------
 * The keyring and key events: keyring init|add|set-roots|sign|verify, rotate, retire, revoke,
 * verify-event. Formats and rules are in keyring.h and keyevent.h (and docs/keys.md).
 * ------------------------------------------------------------------------------------------- */

/* Read a public input file of at most max bytes into a fresh NUL-terminated allocation. */
static int read_input(const char *path, size_t max, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (path == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "an input file is missing");
    return sworn_file_read(path, max, data, len);
}

/* Refuse an output file that exists (checked before anything irreversible, such as a keygen). */
static int output_is_free(const char *path, const char *what)
{
    struct stat st;

    if (path == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "needs %s", what);
    if (lstat(path, &st) == 0)
        return sworn_err_set(SWORN_ERR_ARG, "%s %s exists already; outputs are never overwritten",
                             what, path);
    return 0;
}

/*
 * Write an output file (public data, mode 0644). A new file is created exclusively, so that a
 * statement or keyring version is never silently replaced; with replace set (keyring sign, whose
 * output may be its input) it is written beside the target and renamed over it, so a crash
 * leaves either the old or the new file.
 */
static int write_output(const char *path, const void *data, size_t len, int replace)
{
    return replace ? sworn_file_replace(path, data, len, 0644)
                   : sworn_file_create(path, data, len, 0644);
}

/* A keyring file read and parsed: the bytes, the keyring, and its note when it is signed. */
struct kfile {
    char *data;
    size_t len;
    struct sworn_keyring *kr;
    struct sworn_note note;
    int is_signed;
};

static void kfile_free(struct kfile *k)
{
    free(k->data);
    sworn_keyring_free(k->kr);
    memset(k, 0, sizeof(*k));
}

static int kfile_load(const char *path, struct kfile *k)
{
    memset(k, 0, sizeof(*k));
    SWORN_ENSURE(path != NULL, SWORN_ERR_ARG, "a keyring file is required");
    SWORN_GUARD(read_input(path, SWORN_NOTE_MAX_LEN, &k->data, &k->len));
    SWORN_ENSURE((k->kr = sworn_keyring_new()) != NULL, SWORN_ERR_NOMEM, "no memory");
    if (sworn_keyring_load(k->data, k->len, k->kr, &k->note, &k->is_signed) < 0) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        sworn_err_set(sworn_err_code(), "%s: %s", path, why);
        goto fail;
    }
    return 0;
fail:
    kfile_free(k);
    return -1;
}

/* A copy of kr as the next version, to be changed and written unsigned. NULL on failure. */
static struct sworn_keyring *next_version(const struct sworn_keyring *kr)
{
    struct sworn_keyring *next = sworn_keyring_new();

    if (next == NULL)
        return NULL;
    memcpy(next, kr, sizeof(*next));
    next->version = kr->version + 1;
    return next;
}

/*
 * Check the new version against the old one with the rules the roots will apply, format it and
 * write it (unsigned) to path.
 */
static int write_next_version(const struct sworn_keyring *prev, const struct sworn_keyring *next,
                              const char *path)
{
    char *text = malloc(SWORN_KEYRING_TEXT_MAX + 1);
    long n;
    int rc = -1;

    SWORN_ENSURE(text != NULL, SWORN_ERR_NOMEM, "no memory");
    if (prev != NULL)
        SWORN_GUARD(sworn_keyring_check_transition(prev, next));
    n = sworn_keyring_format(next, text, SWORN_KEYRING_TEXT_MAX + 1);
    SWORN_GUARD(n);
    SWORN_GUARD(write_output(path, text, (size_t)n, 0));
    fprintf(stderr,
            "sworn-hsm: %s: wrote keyring version %" PRIu64 " to %s, unsigned: %zu of its roots "
            "must sign it (sworn-hsm keyring sign --prev <version %" PRIu64 ">)\n",
            command, next->version, path, next->threshold, next->version - 1);
    rc = 0;
fail:
    free(text);
    return rc;
}

/* A time option: RFC 3339 UTC, or now (to the second) when absent. */
static int time_option(const char *s, const char *what, int64_t *t)
{
    time_t now;

    if (s != NULL) {
        if (sworn_keyring_time_parse(s, strlen(s), t) < 0)
            return sworn_err_set(SWORN_ERR_ARG, "%s must be YYYY-MM-DDTHH:MM:SSZ (UTC)", what);
        return 0;
    }
    now = time(NULL);
    if (now < 0 || (int64_t)now > SWORN_KEYRING_TIME_MAX)
        return sworn_err_set(SWORN_ERR_ARG, "the clock is out of range; give %s", what);
    *t = (int64_t)now;
    return 0;
}

static int purpose_option(const char *s, enum sworn_sign_purpose *p)
{
    if (s == NULL || sworn_keyring_purpose_parse(s, strlen(s), p) < 0)
        return sworn_err_set(SWORN_ERR_ARG, "--purpose must be checkpoint, receipt or key-event");
    return 0;
}

static void hex_id(const uint8_t id[SWORN_KEY_ID_LEN], char out[SWORN_KEY_ID_HEX_LEN + 1])
{
    sworn_hex_encode(id, SWORN_KEY_ID_LEN, out, SWORN_KEY_ID_HEX_LEN + 1);
}

/*
 * Choose the key an operation is about: by --key-id (64 hex digits); else by the CKA_ID of the
 * pkcs11: URI (keygen sets it to the first 16 bytes of the key id); else, when a purpose is given,
 * the one active key of that purpose. Ambiguity is an error, never a guess.
 */
static const struct sworn_keyring_key *pick_key(const struct sworn_keyring *kr,
                                                const char *key_id_hex, const char *uri_text,
                                                const enum sworn_sign_purpose *purpose)
{
    const struct sworn_keyring_key *found = NULL;
    uint8_t id[SWORN_KEY_ID_LEN];
    struct sworn_pkcs11_uri uri;
    size_t matches = 0;

    if (key_id_hex != NULL) {
        if (strlen(key_id_hex) != SWORN_KEY_ID_HEX_LEN ||
            sworn_hex_decode(key_id_hex, SWORN_KEY_ID_HEX_LEN, id, sizeof(id)) < 0) {
            sworn_err_set(SWORN_ERR_ARG, "--key-id must be 64 hex digits");
            return NULL;
        }
        found = sworn_keyring_find(kr, id);
        matches = found != NULL;
    } else if (uri_text != NULL) {
        if (sworn_pkcs11_uri_parse(uri_text, strlen(uri_text), &uri) < 0)
            return NULL;
        if (!uri.has_id || uri.id_len < 8 || uri.id_len > SWORN_KEY_ID_LEN) {
            sworn_err_set(SWORN_ERR_ARG, "the URI has no id= of 8..32 bytes to find the key in the "
                                         "keyring by; give --key-id");
            return NULL;
        }
        for (size_t i = 0; i < kr->key_count; i++) {
            if (memcmp(kr->keys[i].key_id, uri.id, uri.id_len) == 0) {
                found = &kr->keys[i];
                matches++;
            }
        }
    } else if (purpose != NULL) {
        for (size_t i = 0; i < kr->key_count; i++) {
            if (kr->keys[i].purpose == *purpose && kr->keys[i].status == SWORN_KEY_ACTIVE) {
                found = &kr->keys[i];
                matches++;
            }
        }
    } else {
        sworn_err_set(SWORN_ERR_ARG, "name the key with --key-id or --uri");
        return NULL;
    }
    if (matches != 1) {
        sworn_err_set(matches ? SWORN_ERR_ARG : SWORN_ERR_NOTFOUND,
                      "%s key in the keyring matches; give --key-id",
                      matches ? "more than one" : "no");
        return NULL;
    }
    if (purpose != NULL && found->purpose != *purpose) {
        sworn_err_set(SWORN_ERR_ARG, "the key is a %s key, not a %s key",
                      sworn_keyring_purpose_name(found->purpose),
                      sworn_keyring_purpose_name(*purpose));
        return NULL;
    }
    return found;
}

/* Open the HSM key at uri, pinned to spki (the keyring's, never the token's word). */
static int open_key(const struct opts *o, const char *uri, const uint8_t *spki, size_t spki_len,
                    struct sworn_signer **s)
{
    struct sworn_signer_config cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.uri = uri;
    cfg.module_path = o->module;
    cfg.pin_file = o->pin_file;
    cfg.pinned_spki = spki;
    cfg.pinned_spki_len = spki_len;
    SWORN_ENSURE(uri != NULL && o->pin_file != NULL, SWORN_ERR_ARG,
                 "needs the key's URI and --pin-file");
    return sworn_signer_open(&cfg, s);
fail:
    return -1;
}

/* Sign a 32-byte digest for SWORN_PURPOSE_KEY_EVENT with the HSM key at uri (pinned to spki). */
static int sign_digest(const struct opts *o, const char *uri, const uint8_t *spki, size_t spki_len,
                       const uint8_t digest[32], uint8_t *sig, size_t *sig_len)
{
    struct sworn_signer *s = NULL;
    int rc = -1;

    SWORN_GUARD(open_key(o, uri, spki, spki_len, &s));
    SWORN_GUARD(sworn_signer_sign(s, SWORN_PURPOSE_KEY_EVENT, digest, 32, sig, SWORN_SIGNER_SIG_MAX,
                                  sig_len));
    rc = 0;
fail:
    sworn_signer_close(s);
    return rc;
}

/*
 * Write a key event: check it against the keyring version that records it (the same check a
 * verifier makes), then write the statement.
 */
static int write_event(const struct sworn_keyevent *ev, const struct sworn_keyring *next,
                       const char *path)
{
    char text[SWORN_KEYEVENT_MAX + 1];
    long n;

    if (sworn_keyevent_verify(ev, next) < 0) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        return sworn_err_set(SWORN_ERR_CRYPTO, "the new statement does not verify: %s", why);
    }
    n = sworn_keyevent_format(ev, text, sizeof(text));
    if (n < 0)
        return -1;
    return write_output(path, text, (size_t)n, 0);
}

/* Parse every --root-vkey into roots[]. */
static int parse_root_vkeys(const struct opts *o, struct sworn_note_verifier *roots)
{
    SWORN_ENSURE(o->n_root_vkeys >= 1, SWORN_ERR_ARG, "needs at least one --root-vkey");
    for (size_t i = 0; i < o->n_root_vkeys; i++)
        SWORN_ENSURE(
            sworn_note_verifier_parse(o->root_vkeys[i], strlen(o->root_vkeys[i]), &roots[i]) == 0,
            SWORN_ERR_ARG, "--root-vkey %s: %s", o->root_vkeys[i], sworn_err_msg());
    return 0;
fail:
    return -1;
}

static int threshold_option(const struct opts *o, size_t *t)
{
    uint64_t v = 0;

    if (o->threshold == NULL || sworn_parse_u64(o->threshold, strlen(o->threshold), &v) < 0 ||
        v < 1 || v > o->n_root_vkeys)
        return sworn_err_set(SWORN_ERR_ARG, "--threshold must be 1..%zu (the number of roots)",
                             o->n_root_vkeys);
    *t = (size_t)v;
    return 0;
}

/* Is root r one of kr's roots (same name, id, type and key)? */
static const struct sworn_note_verifier *root_of(const struct sworn_keyring *kr,
                                                 const struct sworn_note_verifier *r)
{
    for (size_t i = 0; kr != NULL && i < kr->root_count; i++) {
        const struct sworn_note_verifier *k = &kr->roots[i];

        if (k->alg == r->alg && k->key_len == r->key_len &&
            memcmp(k->key, r->key, r->key_len) == 0 &&
            (r->alg == SWORN_NOTE_ALG_ECDSA_P256 || strcmp(k->name, r->name) == 0))
            return k;
    }
    return NULL;
}

/*
 * Open an offline root key file (a PRIVATE+KEY+ Ed25519 file or a PEM P-256 key, mode 0600) and
 * match it to a root of kr or of prev. A PEM key carries no name, so it takes the name of the
 * root whose SPKI it has (type 0x02 key ids do not depend on the name).
 */
static int open_root_key(const char *path, const struct sworn_keyring *kr,
                         const struct sworn_keyring *prev, struct sworn_note_signer *s)
{
    const struct sworn_note_verifier *r;

    if (sworn_note_signer_open_file(path, NULL, s) < 0) {
        if (sworn_err_code() != SWORN_ERR_ARG)
            return -1;
        /* A PEM key: any name for now, the root's name below. */
        if (sworn_note_signer_open_file(path, "sworn-root", s) < 0)
            return -1;
    }
    r = root_of(kr, &s->pub);
    if (r == NULL)
        r = root_of(prev, &s->pub);
    if (r == NULL) {
        sworn_note_signer_close(s);
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "%s is not a root key of this keyring version%s: its signature would "
                             "not count",
                             path, prev != NULL ? " or of the previous one" : "");
    }
    memcpy(s->pub.name, r->name, sizeof(s->pub.name));
    return 0;
}

/* Has the note a signature line by this signer already? */
static int already_signed(const struct kfile *k, const struct sworn_note_verifier *pub)
{
    for (size_t i = 0; k->is_signed && i < k->note.sig_count; i++)
        if (k->note.sigs[i].key_id == pub->key_id &&
            k->note.sigs[i].name_len == strlen(pub->name) &&
            memcmp(k->note.sigs[i].name, pub->name, k->note.sigs[i].name_len) == 0)
            return 1;
    return 0;
}

/* Say how far a signed version is from its thresholds (what the next root holder needs). */
static void report_signatures(const struct sworn_keyring *kr, const struct sworn_keyring *prev,
                              const char *data, size_t len)
{
    struct sworn_note note;
    size_t own = 0, old = 0;

    if (sworn_note_parse(data, len, &note) < 0 ||
        sworn_keyring_count_signers(kr, &note, &own) < 0 ||
        (prev != NULL && sworn_keyring_count_signers(prev, &note, &old) < 0)) {
        fprintf(stderr, "sworn-hsm: %s: the signatures do not verify: %s\n", command,
                sworn_err_msg());
        return;
    }
    fprintf(stderr,
            "sworn-hsm: %s: version %" PRIu64 " has %zu of the %zu signatures its roots "
            "must give",
            command, kr->version, own, kr->threshold);
    if (prev != NULL)
        fprintf(stderr, ", and %zu of the %zu of version %" PRIu64 "'s roots", old, prev->threshold,
                prev->version);
    fputs("\n", stderr);
}

/*
 * Sign the text of k with every --root-key (skipping roots that signed already) and write the
 * signed note to path: the existing signature lines are kept, the new ones appended.
 */
static int sign_keyring(const struct opts *o, const struct kfile *k,
                        const struct sworn_keyring *prev, const char *path, int replace)
{
    struct sworn_note_signer keys[SWORN_KEYRING_MAX_ROOTS], *signers[SWORN_KEYRING_MAX_ROOTS];
    const char *text = k->is_signed ? k->note.text : k->data;
    size_t text_len = k->is_signed ? k->note.text_len : k->len, n = 0, out_len = 0;
    size_t head = k->is_signed ? k->len : k->len + 1; /* text (and old signatures) plus "\n" */
    char *signed_note = malloc(SWORN_NOTE_MAX_LEN + 1), *out = malloc(SWORN_NOTE_MAX_LEN + 1);
    int rc = -1;

    memset(keys, 0, sizeof(keys));
    SWORN_ENSURE(signed_note != NULL && out != NULL, SWORN_ERR_NOMEM, "no memory");
    SWORN_ENSURE(o->n_root_keys >= 1, SWORN_ERR_ARG, "needs at least one --root-key");
    for (size_t i = 0; i < o->n_root_keys; i++) {
        SWORN_GUARD(open_root_key(o->root_keys[i], k->kr, prev, &keys[n]));
        if (already_signed(k, &keys[n].pub)) {
            fprintf(stderr, "sworn-hsm: %s: %s has signed already; not signing twice\n", command,
                    keys[n].pub.name);
            sworn_note_signer_close(&keys[n]);
            continue;
        }
        for (size_t j = 0; j < n; j++)
            SWORN_ENSURE(keys[j].pub.key_id != keys[n].pub.key_id ||
                             strcmp(keys[j].pub.name, keys[n].pub.name) != 0,
                         SWORN_ERR_ARG, "%s is given twice", o->root_keys[i]);
        signers[n] = &keys[n];
        n++;
    }
    if (n == 0) {
        /* Nothing to add: the file is already as signed as these keys can make it. */
        SWORN_ENSURE(k->is_signed, SWORN_ERR_ARG, "no key to sign with");
        memcpy(out, k->data, k->len);
        out_len = k->len;
    } else {
        size_t new_len = 0;

        SWORN_ENSURE((k->is_signed ? k->note.sig_count : 0) + n <= SWORN_NOTE_MAX_SIGS,
                     SWORN_ERR_RANGE, "a note carries at most %d signature lines",
                     SWORN_NOTE_MAX_SIGS);
        SWORN_GUARD(sworn_note_sign(text, text_len, signers, n, signed_note, SWORN_NOTE_MAX_LEN + 1,
                                    &new_len));
        /* signed_note = text "\n" new-lines; keep the old lines between the two. */
        SWORN_ENSURE(head + (new_len - text_len - 1) <= SWORN_NOTE_MAX_LEN, SWORN_ERR_RANGE,
                     "the signed keyring would exceed %u bytes", (unsigned)SWORN_NOTE_MAX_LEN);
        memcpy(out, k->data, k->len);
        if (!k->is_signed)
            out[k->len] = '\n';
        memcpy(out + head, signed_note + text_len + 1, new_len - text_len - 1);
        out_len = head + (new_len - text_len - 1);
    }
    SWORN_GUARD(write_output(path, out, out_len, replace));
    for (size_t j = 0; j < n; j++)
        fprintf(stderr, "sworn-hsm: %s: signed version %" PRIu64 " as root %s\n", command,
                k->kr->version, keys[j].pub.name);
    report_signatures(k->kr, prev, out, out_len);
    rc = 0;
fail:
    for (size_t j = 0; j < SWORN_KEYRING_MAX_ROOTS; j++)
        sworn_note_signer_close(&keys[j]);
    free(signed_note);
    free(out);
    return rc;
}

static int cmd_keyring_init(const struct opts *o)
{
    struct sworn_note_verifier roots[SWORN_KEYRING_MAX_ROOTS];
    struct kfile k;
    size_t threshold = 0;
    long n;

    memset(&k, 0, sizeof(k));
    if (o->n_root_vkeys > SWORN_KEYRING_MAX_ROOTS)
        return usage("too many --root-vkey");
    if (output_is_free(o->out, "--out") < 0 || parse_root_vkeys(o, roots) < 0 ||
        threshold_option(o, &threshold) < 0)
        return fail();
    if ((k.kr = sworn_keyring_new()) == NULL ||
        (k.data = malloc(SWORN_KEYRING_TEXT_MAX + 1)) == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "no memory");
        goto fail;
    }
    k.kr->version = 1;
    k.kr->threshold = threshold;
    k.kr->root_count = o->n_root_vkeys;
    memcpy(k.kr->roots, roots, o->n_root_vkeys * sizeof(roots[0]));
    n = sworn_keyring_format(k.kr, k.data, SWORN_KEYRING_TEXT_MAX + 1);
    if (n < 0)
        goto fail;
    k.len = (size_t)n;
    if (o->n_root_keys == 0 ? write_output(o->out, k.data, k.len, 0) < 0
                            : sign_keyring(o, &k, NULL, o->out, 0) < 0)
        goto fail;
    fprintf(stderr, "sworn-hsm: keyring init: version 1, %zu of %zu roots, in %s\n", threshold,
            o->n_root_vkeys, o->out);
    kfile_free(&k);
    return 0;
fail:
    kfile_free(&k);
    return fail();
}

static int cmd_keyring_add(const struct opts *o)
{
    enum sworn_sign_purpose purpose;
    struct sworn_keyring *next = NULL;
    struct kfile k;
    char *spki = NULL;
    size_t spki_len = 0;
    int64_t from = 0;
    int rc;

    memset(&k, 0, sizeof(k));
    if (o->spki == NULL)
        return usage("needs --in FILE --out FILE --spki DERFILE --purpose P");
    if (output_is_free(o->out, "--out") < 0 || purpose_option(o->purpose, &purpose) < 0 ||
        time_option(o->valid_from, "--valid-from", &from) < 0 || kfile_load(o->in, &k) < 0 ||
        read_input(o->spki, SWORN_SIGNER_SPKI_MAX, &spki, &spki_len) < 0 ||
        (next = next_version(k.kr)) == NULL ||
        sworn_keyring_add_key(next, (const uint8_t *)spki, spki_len, purpose, from) < 0 ||
        write_next_version(k.kr, next, o->out) < 0) {
        rc = fail();
        goto done;
    }
    rc = 0;
done:
    free(spki);
    sworn_keyring_free(next);
    kfile_free(&k);
    return rc;
}

static int cmd_keyring_set_roots(const struct opts *o)
{
    struct sworn_note_verifier roots[SWORN_KEYRING_MAX_ROOTS];
    struct sworn_keyring *next = NULL;
    struct kfile k;
    size_t threshold = 0;
    int rc;

    memset(&k, 0, sizeof(k));
    if (o->n_root_vkeys > SWORN_KEYRING_MAX_ROOTS)
        return usage("too many --root-vkey");
    if (output_is_free(o->out, "--out") < 0 || parse_root_vkeys(o, roots) < 0 ||
        threshold_option(o, &threshold) < 0 || kfile_load(o->in, &k) < 0 ||
        (next = next_version(k.kr)) == NULL) {
        rc = fail();
        goto done;
    }
    next->threshold = threshold;
    next->root_count = o->n_root_vkeys;
    memcpy(next->roots, roots, o->n_root_vkeys * sizeof(roots[0]));
    rc = write_next_version(k.kr, next, o->out) < 0 ? fail() : 0;
done:
    sworn_keyring_free(next);
    kfile_free(&k);
    return rc;
}

/* Show a root holder what changed from prev to next before signing. */
static void describe_changes(const struct sworn_keyring *prev, const struct sworn_keyring *next)
{
    char hex[SWORN_KEY_ID_HEX_LEN + 1], a[SWORN_KEYRING_TIME_LEN + 1],
        b[SWORN_KEYRING_TIME_LEN + 1];
    char vkey[SWORN_NOTE_VKEY_MAX + 1];

    fprintf(stderr, "sworn-hsm: %s: version %" PRIu64 " -> %" PRIu64 "\n", command, prev->version,
            next->version);
    if (prev->threshold != next->threshold)
        fprintf(stderr, "  threshold %zu -> %zu\n", prev->threshold, next->threshold);
    for (size_t i = 0; i < next->root_count; i++)
        if (root_of(prev, &next->roots[i]) == NULL &&
            sworn_note_verifier_format(&next->roots[i], vkey, sizeof(vkey)) >= 0)
            fprintf(stderr, "  new root %s\n", vkey);
    for (size_t i = 0; i < prev->root_count; i++)
        if (root_of(next, &prev->roots[i]) == NULL &&
            sworn_note_verifier_format(&prev->roots[i], vkey, sizeof(vkey)) >= 0)
            fprintf(stderr, "  root removed %s\n", vkey);
    for (size_t i = 0; i < next->key_count; i++) {
        const struct sworn_keyring_key *k = &next->keys[i],
                                       *old = sworn_keyring_find(prev, k->key_id);

        hex_id(k->key_id, hex);
        (void)sworn_keyring_time_format(k->valid_from, a);
        strcpy(b, "-");
        if (k->valid_until != SWORN_KEYRING_NO_TIME)
            (void)sworn_keyring_time_format(k->valid_until, b);
        if (old == NULL)
            fprintf(stderr, "  new key %s %s %s from %s until %s\n", hex,
                    sworn_keyring_purpose_name(k->purpose), sworn_keyring_status_name(k->status), a,
                    b);
        else if (old->status != k->status || old->valid_until != k->valid_until)
            fprintf(stderr, "  key %s %s: %s -> %s until %s\n", hex,
                    sworn_keyring_purpose_name(k->purpose), sworn_keyring_status_name(old->status),
                    sworn_keyring_status_name(k->status), b);
    }
}

static int cmd_keyring_sign(const struct opts *o)
{
    struct kfile k, prev;
    int rc;

    memset(&prev, 0, sizeof(prev));
    if (o->in == NULL || o->out == NULL)
        return usage("needs --in FILE --out FILE --root-key KEYFILE... [--prev FILE]");
    {
        struct stat in_st, out_st;

        /* Signing writes over its input, and only over its input: never over another version. */
        if (lstat(o->out, &out_st) == 0 &&
            (stat(o->in, &in_st) != 0 || in_st.st_dev != out_st.st_dev ||
             in_st.st_ino != out_st.st_ino))
            return usage("--out exists and is not the --in file; outputs are never overwritten");
    }
    if (kfile_load(o->in, &k) < 0)
        return fail();
    if (k.kr->version > 1 && o->prev == NULL) {
        kfile_free(&k);
        return usage("signing version 2 or later needs --prev FILE (the version before it), so "
                     "that the change is checked before it is signed");
    }
    if (o->prev != NULL) {
        if (kfile_load(o->prev, &prev) < 0 || sworn_keyring_check_transition(prev.kr, k.kr) < 0) {
            rc = fail();
            goto done;
        }
        describe_changes(prev.kr, k.kr);
    }
    rc = sign_keyring(o, &k, prev.kr, o->out, 1) < 0 ? fail() : 0;
done:
    kfile_free(&prev);
    kfile_free(&k);
    return rc;
}

/* Read the keyring chain named by the positional arguments and verify it. OUT: *last. */
static int verify_chain_args(char *const *paths, size_t n, struct sworn_keyring *last)
{
    const char **files = calloc(n ? n : 1, sizeof(*files));
    size_t *lens = calloc(n ? n : 1, sizeof(*lens));
    int rc = -1;

    SWORN_ENSURE(files != NULL && lens != NULL, SWORN_ERR_NOMEM, "no memory");
    SWORN_ENSURE(n >= 1, SWORN_ERR_ARG, "needs the keyring files, version 1 first");
    for (size_t i = 0; i < n; i++) {
        char *data = NULL;

        SWORN_GUARD(read_input(paths[i], SWORN_NOTE_MAX_LEN, &data, &lens[i]));
        files[i] = data;
    }
    SWORN_GUARD(sworn_keyring_verify_chain(files, lens, n, last));
    rc = 0;
fail:
    for (size_t i = 0; files != NULL && i < n; i++)
        free((void *)files[i]);
    free(files);
    free(lens);
    return rc;
}

/* Is r, name included, among set[0..n)? */
static int same_root(const struct sworn_note_verifier *set, size_t n,
                     const struct sworn_note_verifier *r)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].alg == r->alg && set[i].key_id == r->key_id && set[i].key_len == r->key_len &&
            memcmp(set[i].key, r->key, r->key_len) == 0 && strcmp(set[i].name, r->name) == 0)
            return 1;
    return 0;
}

static int cmd_keyring_verify(const struct opts *o)
{
    struct sworn_note_verifier roots[SWORN_KEYRING_MAX_ROOTS];
    struct sworn_keyring *last = NULL;
    char hex[SWORN_KEY_ID_HEX_LEN + 1], a[SWORN_KEYRING_TIME_LEN + 1],
        b[SWORN_KEYRING_TIME_LEN + 1];
    int rc;

    if (o->nargs < 1)
        return usage("needs KEYRING_V1 [KEYRING_V2 ...]");
    if ((last = sworn_keyring_new()) == NULL ||
        verify_chain_args(o->args, (size_t)o->nargs, last) < 0) {
        rc = fail();
        goto done;
    }
    /* Version 1's roots are trusted out of band: compare them with the operator's list. */
    if (o->n_root_vkeys > 0) {
        struct kfile k;
        int same;

        if (o->n_root_vkeys > SWORN_KEYRING_MAX_ROOTS || parse_root_vkeys(o, roots) < 0 ||
            kfile_load(o->args[0], &k) < 0) {
            rc = fail();
            goto done;
        }
        /* The same set both ways, names included: a repeated --root-vkey pins nothing more. */
        same = 1;
        for (size_t i = 0; same && i < o->n_root_vkeys; i++)
            same = same_root(k.kr->roots, k.kr->root_count, &roots[i]);
        for (size_t i = 0; same && i < k.kr->root_count; i++)
            same = same_root(roots, o->n_root_vkeys, &k.kr->roots[i]);
        kfile_free(&k);
        if (!same) {
            sworn_err_set(SWORN_ERR_VERIFY,
                          "the roots of version 1 are not exactly the --root-vkey keys given");
            rc = fail();
            goto done;
        }
    }
    printf("keyring verified: versions 1..%" PRIu64 ", version %" PRIu64 " needs %zu of %zu "
           "roots, %zu keys\n",
           last->version, last->version, last->threshold, last->root_count, last->key_count);
    for (size_t i = 0; i < last->key_count; i++) {
        const struct sworn_keyring_key *k = &last->keys[i];

        hex_id(k->key_id, hex);
        (void)sworn_keyring_time_format(k->valid_from, a);
        strcpy(b, "-");
        if (k->valid_until != SWORN_KEYRING_NO_TIME)
            (void)sworn_keyring_time_format(k->valid_until, b);
        printf("key %s %s %s %s %s\n", hex, sworn_keyring_purpose_name(k->purpose),
               sworn_keyring_status_name(k->status), a, b);
    }
    rc = 0;
done:
    sworn_keyring_free(last);
    return rc;
}

static int cmd_rotate(const struct opts *o)
{
    enum sworn_sign_purpose purpose;
    struct sworn_keyring *next = NULL;
    const struct sworn_keyring_key *old;
    struct sworn_keyevent ev;
    struct sworn_signer *probe = NULL;
    struct kfile k;
    char new_uri[URI_MAX], hex[SWORN_KEY_ID_HEX_LEN + 1];
    uint8_t d[32];
    int64_t eff = 0;
    int rc = EXIT_USAGE;

    memset(&k, 0, sizeof(k));
    memset(&ev, 0, sizeof(ev));
    if (o->old_uri == NULL || o->token == NULL || o->pin_file == NULL)
        return usage("needs --token L --pin-file F --keyring FILE --old-uri URI --purpose P "
                     "--out STATEMENT --keyring-out FILE");
    if (purpose_option(o->purpose, &purpose) < 0 || output_is_free(o->out, "--out") < 0 ||
        output_is_free(o->keyring_out, "--keyring-out") < 0 ||
        time_option(o->effective_from, "--effective-from", &eff) < 0 ||
        kfile_load(o->keyring, &k) < 0 ||
        (old = pick_key(k.kr, o->key_id, o->old_uri, &purpose)) == NULL)
        goto failed;
    if (old->status != SWORN_KEY_ACTIVE || eff <= old->valid_from) {
        sworn_err_set(SWORN_ERR_ARG, "the old key must be active and effective-from after its "
                                     "valid-from");
        goto failed;
    }
    /* Prove that the old key (pinned to the keyring's SPKI) and the PIN work before keygen. */
    if (open_key(o, o->old_uri, old->spki, old->spki_len, &probe) < 0 ||
        sworn_signer_health(probe) < 0)
        goto failed;
    sworn_signer_close(probe);
    probe = NULL;

    ev.kind = SWORN_KEYEVENT_ROTATE;
    ev.purpose = purpose;
    memcpy(ev.old_id, old->key_id, SWORN_KEY_ID_LEN);
    ev.effective_from = eff;
    if ((rc = generate_key(o, new_uri, ev.new_spki, &ev.new_spki_len)) != 0)
        goto done;
    SHA256(ev.new_spki, ev.new_spki_len, ev.new_id);
    /* The new key proves possession; then the old key hands over to it. */
    if (sworn_keyevent_pop_digest(&ev, d) < 0 ||
        sign_digest(o, new_uri, ev.new_spki, ev.new_spki_len, d, ev.new_sig, &ev.new_sig_len) < 0 ||
        sworn_keyevent_digest(&ev, d) < 0 ||
        sign_digest(o, o->old_uri, old->spki, old->spki_len, d, ev.old_sig, &ev.old_sig_len) < 0)
        goto failed;
    if ((next = next_version(k.kr)) == NULL ||
        sworn_keyring_set_status(next, ev.old_id, SWORN_KEY_RETIRED, eff) < 0 ||
        sworn_keyring_add_key(next, ev.new_spki, ev.new_spki_len, purpose, eff) < 0 ||
        write_event(&ev, next, o->out) < 0 || write_next_version(k.kr, next, o->keyring_out) < 0)
        goto failed;
    hex_id(ev.new_id, hex);
    fprintf(stderr, "sworn-hsm: rotate: statement in %s; new %s key %s\n", o->out,
            sworn_keyring_purpose_name(purpose), hex);
    printf("%s\n", new_uri);
    rc = 0;
    goto done;
failed:
    rc = fail();
done:
    sworn_signer_close(probe);
    sworn_keyring_free(next);
    kfile_free(&k);
    return rc;
}

/* retire and revoke: one key, its status changed as of effective-from. */
static int retire_or_revoke(const struct opts *o, enum sworn_keyevent_kind kind)
{
    struct sworn_keyring *next = NULL;
    const struct sworn_keyring_key *key;
    struct sworn_keyevent ev;
    struct kfile k;
    uint8_t d[32];
    int64_t eff = 0;
    int sign = kind == SWORN_KEYEVENT_RETIRE || o->pin_file != NULL;

    memset(&k, 0, sizeof(k));
    memset(&ev, 0, sizeof(ev));
    if (output_is_free(o->out, "--out") < 0 ||
        output_is_free(o->keyring_out, "--keyring-out") < 0 ||
        time_option(o->effective_from, "--effective-from", &eff) < 0 ||
        kfile_load(o->keyring, &k) < 0 || (key = pick_key(k.kr, o->key_id, o->uri, NULL)) == NULL)
        goto fail;
    if (kind == SWORN_KEYEVENT_RETIRE) {
        SWORN_ENSURE(key->status == SWORN_KEY_ACTIVE && eff > key->valid_from, SWORN_ERR_ARG,
                     "only an active key can be retired, and after its valid-from");
    } else {
        SWORN_ENSURE(key->status != SWORN_KEY_REVOKED, SWORN_ERR_ARG, "the key is revoked already");
        if (key->status == SWORN_KEY_RETIRED && eff > key->valid_until) {
            /* Nothing the key signed after its retirement counts anyway. */
            eff = key->valid_until;
            fprintf(stderr, "sworn-hsm: revoke: the key retired earlier; revoking as of its "
                            "retirement\n");
        }
        SWORN_ENSURE(eff >= key->valid_from, SWORN_ERR_ARG,
                     "the revocation time is before the key's valid-from");
    }
    ev.kind = kind;
    ev.purpose = key->purpose;
    memcpy(ev.old_id, key->key_id, SWORN_KEY_ID_LEN);
    ev.effective_from = eff;
    if (sign) {
        SWORN_ENSURE(o->uri != NULL, SWORN_ERR_ARG, "needs --uri URI to sign with the key");
        SWORN_GUARD(sworn_keyevent_digest(&ev, d));
        SWORN_GUARD(
            sign_digest(o, o->uri, key->spki, key->spki_len, d, ev.old_sig, &ev.old_sig_len));
    }
    SWORN_ENSURE((next = next_version(k.kr)) != NULL, SWORN_ERR_NOMEM, "no memory");
    SWORN_GUARD(sworn_keyring_set_status(
        next, ev.old_id, kind == SWORN_KEYEVENT_RETIRE ? SWORN_KEY_RETIRED : SWORN_KEY_REVOKED,
        eff));
    SWORN_GUARD(write_event(&ev, next, o->out));
    SWORN_GUARD(write_next_version(k.kr, next, o->keyring_out));
    sworn_keyring_free(next);
    kfile_free(&k);
    return 0;
fail:
    sworn_keyring_free(next);
    kfile_free(&k);
    return fail();
}

static int cmd_verify_event(const struct opts *o)
{
    struct sworn_keyring *last = sworn_keyring_new();
    struct sworn_keyevent ev;
    char *data = NULL, old_hex[SWORN_KEY_ID_HEX_LEN + 1], when[SWORN_KEYRING_TIME_LEN + 1];
    size_t len = 0;
    int rc;

    if (o->statement == NULL || o->nargs < 1) {
        sworn_keyring_free(last);
        return usage("needs --statement FILE KEYRING_V1 [KEYRING_V2 ...]");
    }
    if (last == NULL || read_input(o->statement, SWORN_KEYEVENT_MAX, &data, &len) < 0 ||
        sworn_keyevent_parse(data, len, &ev) < 0 ||
        verify_chain_args(o->args, (size_t)o->nargs, last) < 0 ||
        sworn_keyevent_verify(&ev, last) < 0) {
        rc = fail();
        goto done;
    }
    hex_id(ev.old_id, old_hex);
    (void)sworn_keyring_time_format(ev.effective_from, when);
    printf("key-event verified: %s %s key %s, effective from %s\n",
           sworn_keyevent_kind_name(ev.kind), sworn_keyring_purpose_name(ev.purpose), old_hex,
           when);
    if (ev.kind == SWORN_KEYEVENT_ROTATE) {
        hex_id(ev.new_id, old_hex);
        printf("new key %s (proof of possession verified)\n", old_hex);
    }
    rc = 0;
done:
    free(data);
    sworn_keyring_free(last);
    return rc;
}

static int cmd_keyring(const struct opts *o, const char *sub)
{
    if (strcmp(sub, "init") == 0)
        return cmd_keyring_init(o);
    if (strcmp(sub, "add") == 0)
        return cmd_keyring_add(o);
    if (strcmp(sub, "set-roots") == 0)
        return cmd_keyring_set_roots(o);
    if (strcmp(sub, "sign") == 0)
        return cmd_keyring_sign(o);
    if (strcmp(sub, "verify") == 0)
        return cmd_keyring_verify(o);
    return usage("unknown keyring command (init, add, set-roots, sign, verify)");
}

static int run_command(int argc, char **argv)
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
                                             {"in", required_argument, NULL, 'i'},
                                             {"prev", required_argument, NULL, 'p'},
                                             {"keyring", required_argument, NULL, 'k'},
                                             {"keyring-out", required_argument, NULL, 'K'},
                                             {"old-uri", required_argument, NULL, 'O'},
                                             {"spki", required_argument, NULL, 's'},
                                             {"valid-from", required_argument, NULL, 'f'},
                                             {"effective-from", required_argument, NULL, 'e'},
                                             {"key-id", required_argument, NULL, 'I'},
                                             {"threshold", required_argument, NULL, 't'},
                                             {"root-vkey", required_argument, NULL, 'V'},
                                             {"root-key", required_argument, NULL, 'R'},
                                             {"statement", required_argument, NULL, 'E'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    static char keyring_command[64];
    const char *sub = NULL;
    struct opts o;
    int c;

    memset(&o, 0, sizeof(o));
    if (argc < 2)
        return usage("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        sworn_cli_print_help(usage_text, own_exits);
        return 0;
    }
    command = argv[1];
    optind = 2;
    if (strcmp(command, "keyring") == 0) {
        if (argc < 3 || argv[2][0] == '-')
            return usage("needs a keyring command (init, add, set-roots, sign, verify)");
        sub = argv[2];
        snprintf(keyring_command, sizeof(keyring_command), "keyring %s", sub);
        command = keyring_command;
        optind = 3;
    }
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
        case 'i':
            o.in = optarg;
            break;
        case 'p':
            o.prev = optarg;
            break;
        case 'k':
            o.keyring = optarg;
            break;
        case 'K':
            o.keyring_out = optarg;
            break;
        case 'O':
            o.old_uri = optarg;
            break;
        case 's':
            o.spki = optarg;
            break;
        case 'f':
            o.valid_from = optarg;
            break;
        case 'e':
            o.effective_from = optarg;
            break;
        case 'I':
            o.key_id = optarg;
            break;
        case 't':
            o.threshold = optarg;
            break;
        case 'V':
            if (o.n_root_vkeys > SWORN_KEYRING_MAX_ROOTS)
                return usage("too many --root-vkey");
            o.root_vkeys[o.n_root_vkeys++] = optarg;
            break;
        case 'R':
            if (o.n_root_keys == SWORN_KEYRING_MAX_ROOTS)
                return usage("too many --root-key");
            o.root_keys[o.n_root_keys++] = optarg;
            break;
        case 'E':
            o.statement = optarg;
            break;
        case 'h':
            sworn_cli_print_help(usage_text, own_exits);
            return 0;
        default:
            return usage("unknown or incomplete option");
        }
    }
    o.args = argv + optind;
    o.nargs = argc - optind;
    if (o.module == NULL)
        o.module = SOFTHSM_MODULE;
    /* Only the verifying commands take positional arguments (the keyring chain). */
    if (sub != NULL && strcmp(sub, "verify") == 0)
        return cmd_keyring(&o, sub);
    if (strcmp(command, "verify-event") == 0)
        return cmd_verify_event(&o);
    if (o.nargs != 0)
        return usage("unexpected argument");
    if (sub != NULL)
        return cmd_keyring(&o, sub);
    if (strcmp(command, "init-dev-token") == 0)
        return cmd_init_dev_token(&o);
    if (strcmp(command, "keygen") == 0)
        return cmd_keygen(&o);
    if (strcmp(command, "list") == 0)
        return cmd_list(&o);
    if (strcmp(command, "pubkey") == 0)
        return cmd_pubkey(&o);
    if (strcmp(command, "rotate") == 0)
        return cmd_rotate(&o);
    if (strcmp(command, "retire") == 0)
        return retire_or_revoke(&o, SWORN_KEYEVENT_RETIRE);
    if (strcmp(command, "revoke") == 0)
        return retire_or_revoke(&o, SWORN_KEYEVENT_REVOKE);
    command = "";
    return usage("unknown command");
}

int main(int argc, char **argv)
{
    int status;

    if (sworn_cli_standard(argc, argv, "sworn-hsm", usage_text, own_exits, &status))
        return status;
    return run_command(argc, argv);
}
