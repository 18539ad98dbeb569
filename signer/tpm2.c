/*
 * tpm2.c -- the TPM 2.0 signer backend (contract in backend.h): a persistent ECC P-256 signing key
 * named tpm:handle=0x81xxxxxx, used through the TSS2 Enhanced System API (ESAPI) over the TCTI
 * that the config names ("device:/dev/tpmrm0" on a host, "swtpm:host=127.0.0.1,port=N" in tests).
 *
 * What a key must be, checked at open and at every rebuild:
 *   - ECC on NIST P-256, with the sign attribute;
 *   - not restricted: a restricted key signs only digests that the TPM hashed itself (it needs a
 *     hashcheck ticket), and we sign SHA-256 digests of our own TBS bytes;
 *   - fixedTPM, fixedParent and sensitiveDataOrigin: the private key was made inside this TPM and
 *     can never leave it;
 *   - userWithAuth, since we authorize with an empty password (no PIN ever reaches this backend);
 *   - a scheme of NULL or ECDSA-SHA256, the one we ask for.
 *
 * The watchdog. The TCTIs cannot be trusted to time out: the swtpm TCTI of tpm2-tss 3.2.1 ignores
 * the receive timeout and blocks in read() (with Esys_SetTimeout(1000), Esys_Sign against a
 * SIGSTOPped swtpm returned only when swtpm was continued, seconds later), and the synchronous
 * Esys_* calls retry TRY_AGAIN for ever anyway. So every call into the TSS runs on a watchdog
 * worker thread (watchdog.h) and the caller stops waiting after timeout_ms (open_timeout_ms for
 * connecting and reading the key). An abandoned call
 * still uses the device context, so reset refuses to tear it down until that call has returned
 * (the rebuild fails at once, and signer.c backs off: nothing piles up on a hung TPM, at most one
 * abandoned call per signer exists), and close hands the context over to the abandoned call,
 * which frees it when the TSS finally returns.
 *
 * Device failures. After a TCTI failure an ESYS context refuses every later call ("bad
 * sequence"), so every error that is not the TPM's own refusal is SWORN_ERR_IO, and signer.c
 * then calls reset, which finalizes the ESYS context and the TCTI, builds both again, and checks
 * that the key at the handle still has the public key found at open. TPM warnings (retry,
 * yielded, out of memory, ...), TPM_RC_INITIALIZE, TPM_RC_FAILURE and a handle that vanished are
 * device failures too; other TPM refusals are SWORN_ERR_CRYPTO.
 *
 * Every signature is verified with the public key found at open before it is returned: the TPM
 * signs with whatever key sits at the handle now (a password session does not bind the key's
 * Name), so a key replaced under us, or a faulty TPM, must not yield signatures that fail later.
 * Such a signature is a device failure: the rebuild then finds and reports the other key.
 *
 * Nothing persistent is ever flushed or evicted: the only object we name is the persistent key,
 * and ESYS_TR handles of persistent objects are freed by Esys_Finalize without touching the TPM.
 */
#include "backend.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "err.h"
#include "watchdog.h"

#define URI_PREFIX "tpm:handle=0x"
#define HANDLE_HEX_DIGITS 8
/* The persistent handle range (TPM 2.0 Part 2, 7.3). Not tss2's TPM2_PERSISTENT_FIRST: that
 * macro shifts the int-promoted 0x81 left by 24, which overflows (UBSan reports it). */
#define PERSISTENT_FIRST 0x81000000u
#define PERSISTENT_LAST 0x81FFFFFFu
#define TCTI_CONF_MAX 256
#define DIGEST_LEN 32
#define P256_COORD_LEN 32
#define P256_POINT_LEN (1 + 2 * P256_COORD_LEN)
#define FIXED_ATTRS                                                                                \
    (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN)
/* The error number of a format-one TPM response code (TPM 2.0 Part 2, 6.6.3). */
#define RC_FMT1_NUMBER_MASK 0x3Fu
/* The bits that tell a format-zero warning: FMT1 clear, VER1 and the severity bit set. */
#define RC_FMT0_WARN_MASK (TPM2_RC_FMT1 | TPM2_RC_WARN)

enum dev_op { OP_CONNECT, OP_SIGN };

/*
 * The device context and the current call's inputs and outputs: everything a watchdog worker
 * touches. It lives apart from struct tpm_key because an abandoned call keeps using it.
 * Ownership: the caller's while call_done is set; the worker's from the start of a call until it
 * sets call_done; and for good the worker's if close found the call still running (orphaned).
 */
struct tpm_dev {
    pthread_mutex_t lock; /* guards call_done and orphaned */
    int call_done;        /* no call is running on this context */
    int orphaned;         /* the signer is closed: the running call frees the context */
    enum dev_op op;
    char tcti_conf[TCTI_CONF_MAX];
    TPM2_HANDLE handle;
    TSS2_TCTI_CONTEXT *tcti; /* NULL while torn down */
    ESYS_CONTEXT *esys;      /* NULL while torn down */
    ESYS_TR key;
    TPM2B_DIGEST digest; /* IN: dev_sign */
    TPM2B_PUBLIC pub;    /* OUT: dev_connect */
    TPMT_SIGNATURE sig;  /* OUT: dev_sign */
};

struct tpm_key {
    struct tpm_dev *dev;
    struct sworn_watchdog *wd;
    unsigned timeout_ms;      /* one device call (a signature) */
    unsigned open_timeout_ms; /* connecting to the TPM and reading the key */
    int connected;            /* dev holds a working ESYS context for the checked key */
    EVP_PKEY *pub;            /* the key found at open, which verifies every signature */
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
};

/* 1 when rc is the TPM's own answer (possibly relayed by a resource manager). */
static int from_tpm(TSS2_RC rc)
{
    TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;

    return layer == TSS2_TPM_RC_LAYER || layer == TSS2_RESMGR_TPM_RC_LAYER;
}

/* 1 when rc is the TPM's TPM_RC_HANDLE: no object at the handle. */
static int handle_error(TSS2_RC rc)
{
    TSS2_RC code = rc & ~TSS2_RC_LAYER_MASK;

    return from_tpm(rc) && (code & TPM2_RC_FMT1) &&
           ((code & RC_FMT1_NUMBER_MASK) | TPM2_RC_FMT1) == TPM2_RC_HANDLE;
}

/* 1 when rc says that the device, or our context to it, failed; 0 when the TPM refused. */
static int device_failure(TSS2_RC rc)
{
    TSS2_RC code = rc & ~TSS2_RC_LAYER_MASK;

    /* TCTI, SAPI, ESAPI, marshaling and resource-manager errors: the context is suspect. */
    if (!from_tpm(rc))
        return 1;
    if (code & TPM2_RC_FMT1)
        return handle_error(rc);
    return code == TPM2_RC_INITIALIZE || code == TPM2_RC_FAILURE ||
           (code & RC_FMT0_WARN_MASK) == TPM2_RC_WARN;
}

static int tss_error(TSS2_RC rc, const char *call, const struct tpm_dev *d)
{
    return sworn_err_set(device_failure(rc) ? SWORN_ERR_IO : SWORN_ERR_CRYPTO,
                         "tpm signer: %s for handle 0x%08x failed: 0x%x (%s)", call,
                         (unsigned)d->handle, (unsigned)rc, Tss2_RC_Decode(rc));
}

/*
 * A TCTI may write to a socket whose peer has just died, and SIGPIPE would kill the whole
 * process. Blocked on the worker thread, the signal stays pending there (it is directed at the
 * writing thread) and write() fails with EPIPE, which the TCTI reports as an I/O error.
 */
static void block_sigpipe(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

/* Free the ESYS context and the TCTI. Only while no call is running on d. */
static void dev_teardown(struct tpm_dev *d)
{
    if (d->esys != NULL)
        Esys_Finalize(&d->esys);
    if (d->tcti != NULL)
        Tss2_TctiLdr_Finalize(&d->tcti);
    d->esys = NULL;
    d->tcti = NULL;
    d->key = ESYS_TR_NONE;
}

/*
 * Build the TCTI and the ESYS context, and read the public area of the key at the handle into
 * d->pub. On error the contexts built so far stay in d for dev_teardown.
 */
static int dev_connect(struct tpm_dev *d)
{
    TPM2B_PUBLIC *pub = NULL;
    TSS2_RC rc;

    rc = Tss2_TctiLdr_Initialize(d->tcti_conf, &d->tcti);
    if (rc != TSS2_RC_SUCCESS)
        return sworn_err_set(SWORN_ERR_IO, "tpm signer: cannot open the TCTI \"%s\": 0x%x (%s)",
                             d->tcti_conf, (unsigned)rc, Tss2_RC_Decode(rc));
    rc = Esys_Initialize(&d->esys, d->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_Initialize", d);
    /* An ESYS_TR for the persistent handle; ESYS reads the key's public area and Name. */
    rc = Esys_TR_FromTPMPublic(d->esys, d->handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                               &d->key);
    if (handle_error(rc))
        return sworn_err_set(SWORN_ERR_NOTFOUND,
                             "tpm signer: no persistent object at handle 0x%08x (%s)",
                             (unsigned)d->handle, Tss2_RC_Decode(rc));
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_TR_FromTPMPublic", d);
    rc = Esys_ReadPublic(d->esys, d->key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, NULL,
                         NULL);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_ReadPublic", d);
    d->pub = *pub;
    Esys_Free(pub);
    return 0;
}

/* Sign d->digest with the key; the signature goes to d->sig. */
static int dev_sign(struct tpm_dev *d)
{
    /* ECDSA with SHA-256, whatever the key's own scheme (check_key allows only NULL or this). */
    const TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_ECDSA,
                                    .details.ecdsa.hashAlg = TPM2_ALG_SHA256};
    /* A NULL ticket: an unrestricted key signs any digest without one. */
    const TPMT_TK_HASHCHECK no_ticket = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL};
    TPMT_SIGNATURE *sig = NULL;
    TSS2_RC rc;

    rc = Esys_Sign(d->esys, d->key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &d->digest,
                   &scheme, &no_ticket, &sig);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_Sign", d);
    d->sig = *sig;
    Esys_Free(sig);
    return 0;
}

static void dev_free(struct tpm_dev *d)
{
    dev_teardown(d);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* The watchdog's call: run d->op, then give d back, or free it when the signer is gone. */
static int dev_worker(void *arg)
{
    struct tpm_dev *d = arg;
    int rc, orphaned;

    block_sigpipe();
    rc = d->op == OP_CONNECT ? dev_connect(d) : dev_sign(d);
    pthread_mutex_lock(&d->lock);
    d->call_done = 1;
    orphaned = d->orphaned;
    pthread_mutex_unlock(&d->lock);
    if (orphaned)
        dev_free(d);
    return rc;
}

/* 1 while a call (one abandoned after its deadline) is still running on d. */
static int dev_busy(struct tpm_dev *d)
{
    int busy;

    pthread_mutex_lock(&d->lock);
    busy = !d->call_done;
    pthread_mutex_unlock(&d->lock);
    return busy;
}

/* Parse tpm:handle=0x81xxxxxx (exactly eight hex digits, a persistent handle). OUT: *handle. */
static int parse_uri(const char *uri, TPM2_HANDLE *handle)
{
    const char *hex = uri + strlen(URI_PREFIX);
    uint32_t v = 0;

    if (strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)) != 0 || strlen(hex) != HANDLE_HEX_DIGITS)
        goto bad;
    for (size_t i = 0; i < HANDLE_HEX_DIGITS; i++) {
        char c = hex[i];
        uint32_t digit;

        if (c >= '0' && c <= '9')
            digit = (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = (uint32_t)(c - 'A' + 10);
        else
            goto bad;
        v = v << 4 | digit;
    }
    if (v < PERSISTENT_FIRST || v > PERSISTENT_LAST)
        goto bad;
    *handle = v;
    return 0;
bad:
    return sworn_err_set(SWORN_ERR_ARG,
                         "tpm signer: bad key URI \"%.60s\" (want tpm:handle=0x81xxxxxx, a "
                         "persistent handle)",
                         uri);
}

/*
 * Check that the public area is a key this backend may use (the rules at the top of the file)
 * and build its DER SPKI into spki (capacity SWORN_SIGNER_SPKI_MAX). OUT: *spki_len.
 */
static int check_key(const TPMT_PUBLIC *p, TPM2_HANDLE handle, uint8_t *spki, size_t *spki_len)
{
    const TPMS_ECC_PARMS *ecc = &p->parameters.eccDetail;
    TPMA_OBJECT a = p->objectAttributes;
    uint8_t point[P256_POINT_LEN] = {0x04};

    if (p->type != TPM2_ALG_ECC || ecc->curveID != TPM2_ECC_NIST_P256)
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x is not an ECC NIST P-256 key",
                             (unsigned)handle);
    if (!(a & TPMA_OBJECT_SIGN_ENCRYPT))
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x is not a signing key (sign "
                             "attribute clear)",
                             (unsigned)handle);
    if (a & TPMA_OBJECT_RESTRICTED)
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x is restricted (it signs only "
                             "TPM-hashed data); an unrestricted signing key is needed",
                             (unsigned)handle);
    if ((a & FIXED_ATTRS) != FIXED_ATTRS)
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x is not bound to this TPM:%s%s%s "
                             "clear (fixedTPM, fixedParent and sensitiveDataOrigin are required)",
                             (unsigned)handle, (a & TPMA_OBJECT_FIXEDTPM) ? "" : " fixedTPM",
                             (a & TPMA_OBJECT_FIXEDPARENT) ? "" : " fixedParent",
                             (a & TPMA_OBJECT_SENSITIVEDATAORIGIN) ? "" : " sensitiveDataOrigin");
    if (!(a & TPMA_OBJECT_USERWITHAUTH))
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x needs userWithAuth (we "
                             "authorize with an empty password, not a policy)",
                             (unsigned)handle);
    if (ecc->scheme.scheme != TPM2_ALG_NULL &&
        !(ecc->scheme.scheme == TPM2_ALG_ECDSA &&
          ecc->scheme.details.ecdsa.hashAlg == TPM2_ALG_SHA256))
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm signer: the key at handle 0x%08x has a scheme other than "
                             "ECDSA-SHA256 (0x%04x)",
                             (unsigned)handle, (unsigned)ecc->scheme.scheme);
    if (p->unique.ecc.x.size > P256_COORD_LEN || p->unique.ecc.y.size > P256_COORD_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "tpm signer: the key at handle 0x%08x has oversized coordinates",
                             (unsigned)handle);
    /* The TPM may drop leading zero bytes: right-align each coordinate in its 32 bytes. */
    memcpy(point + 1 + P256_COORD_LEN - p->unique.ecc.x.size, p->unique.ecc.x.buffer,
           p->unique.ecc.x.size);
    memcpy(point + 1 + 2 * P256_COORD_LEN - p->unique.ecc.y.size, p->unique.ecc.y.buffer,
           p->unique.ecc.y.size);
    return sworn_p256_spki_from_point(point, spki, SWORN_SIGNER_SPKI_MAX, spki_len);
}

/* Run op on the device under the watchdog, naming the call when the deadline passes. */
static int dev_call(struct tpm_key *k, enum dev_op op, const char *what)
{
    unsigned deadline = op == OP_CONNECT ? k->open_timeout_ms : k->timeout_ms;

    /* No call runs on k->dev now (reset and sign make sure of it): it is ours to hand over. */
    k->dev->op = op;
    pthread_mutex_lock(&k->dev->lock);
    k->dev->call_done = 0;
    pthread_mutex_unlock(&k->dev->lock);
    if (sworn_watchdog_run(k->wd, dev_worker, k->dev, deadline) == 0)
        return 0;
    if (dev_busy(k->dev))
        return sworn_err_set(SWORN_ERR_IO, "tpm signer: %s at handle 0x%08x: %s", what,
                             (unsigned)k->dev->handle, sworn_err_msg());
    return -1;
}

/*
 * Build the device context and check the key at the handle. OUT: spki, *spki_len.
 * On error the device context is torn down, unless an abandoned call still uses it.
 */
static int connect_key(struct tpm_key *k, uint8_t *spki, size_t *spki_len)
{
    if (dev_call(k, OP_CONNECT, "reading the key") < 0 ||
        check_key(&k->dev->pub.publicArea, k->dev->handle, spki, spki_len) < 0) {
        if (!dev_busy(k->dev))
            dev_teardown(k->dev);
        return -1;
    }
    return 0;
}

static void tpm_close(void *ctx)
{
    struct tpm_key *k = ctx;

    if (k == NULL)
        return;
    if (k->dev != NULL) {
        int busy;

        /* A call abandoned after its deadline may still be inside the TSS with k->dev: then it
         * frees the context when it returns; otherwise we do. */
        pthread_mutex_lock(&k->dev->lock);
        busy = !k->dev->call_done;
        k->dev->orphaned = busy;
        pthread_mutex_unlock(&k->dev->lock);
        if (!busy)
            dev_free(k->dev);
    }
    sworn_watchdog_free(k->wd);
    EVP_PKEY_free(k->pub);
    free(k);
}

static int tpm_open(const struct sworn_signer_config *cfg, void **ctx, uint8_t *spki,
                    size_t *spki_len, enum sworn_sig_alg *alg)
{
    struct tpm_key *k = calloc(1, sizeof(*k));
    const unsigned char *p;

    SWORN_ENSURE(k != NULL, SWORN_ERR_NOMEM, "tpm signer: out of memory");
    k->dev = calloc(1, sizeof(*k->dev));
    SWORN_ENSURE(k->dev != NULL, SWORN_ERR_NOMEM, "tpm signer: out of memory");
    if (pthread_mutex_init(&k->dev->lock, NULL) != 0) {
        free(k->dev);
        k->dev = NULL;
        sworn_err_set(SWORN_ERR_NOMEM, "tpm signer: cannot make a mutex");
        goto fail;
    }
    k->dev->call_done = 1;
    k->dev->key = ESYS_TR_NONE;
    SWORN_GUARD(parse_uri(cfg->uri, &k->dev->handle));
    SWORN_ENSURE(cfg->tcti != NULL && cfg->tcti[0] != '\0', SWORN_ERR_ARG,
                 "tpm signer: no TCTI configured (e.g. \"device:/dev/tpmrm0\")");
    SWORN_ENSURE(strlen(cfg->tcti) < sizeof(k->dev->tcti_conf), SWORN_ERR_ARG,
                 "tpm signer: the TCTI configuration is longer than %d bytes", TCTI_CONF_MAX - 1);
    memcpy(k->dev->tcti_conf, cfg->tcti, strlen(cfg->tcti) + 1);
    k->timeout_ms = sworn_signer_call_timeout(cfg);
    k->open_timeout_ms = sworn_signer_open_timeout(cfg);
    SWORN_GUARD(sworn_watchdog_new(&k->wd));
    sworn_watchdog_set_inline(k->wd, cfg->inline_device_calls);
    SWORN_GUARD(connect_key(k, k->spki, &k->spki_len));
    p = k->spki;
    k->pub = d2i_PUBKEY(NULL, &p, (long)k->spki_len);
    SWORN_ENSURE(k->pub != NULL, SWORN_ERR_CRYPTO, "tpm signer: cannot load the key's SPKI");
    k->connected = 1;
    memcpy(spki, k->spki, k->spki_len);
    *spki_len = k->spki_len;
    *alg = SWORN_SIG_ECDSA_P256_SHA256;
    *ctx = k;
    return 0;
fail:
    tpm_close(k);
    return -1;
}

/* 1 when the DER signature verifies for digest with the key found at open. */
static int signature_ok(EVP_PKEY *pub, const uint8_t *digest, const uint8_t *sig, size_t len)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(pub, NULL);
    int ok = c != NULL && EVP_PKEY_verify_init(c) == 1 &&
             EVP_PKEY_CTX_set_signature_md(c, EVP_sha256()) == 1 &&
             EVP_PKEY_verify(c, sig, len, digest, DIGEST_LEN) == 1;

    EVP_PKEY_CTX_free(c);
    return ok;
}

static int tpm_sign(void *ctx, const uint8_t *data, size_t len, uint8_t *sig, size_t cap,
                    size_t *sig_len)
{
    struct tpm_key *k = ctx;
    struct tpm_dev *d = k->dev;
    const TPMS_SIGNATURE_ECDSA *ecdsa = &d->sig.signature.ecdsa;
    size_t n;

    if (len != DIGEST_LEN)
        return sworn_err_set(SWORN_ERR_ARG, "tpm signer: expected a 32-byte digest, not %zu bytes",
                             len);
    if (!k->connected)
        return sworn_err_set(SWORN_ERR_IO, "tpm signer: no device context (rebuild pending)");
    d->digest.size = DIGEST_LEN;
    memcpy(d->digest.buffer, data, DIGEST_LEN);
    if (dev_call(k, OP_SIGN, "signing") < 0) {
        if (sworn_err_code() == SWORN_ERR_IO)
            k->connected = 0;
        return -1;
    }
    if (d->sig.sigAlg != TPM2_ALG_ECDSA || ecdsa->hash != TPM2_ALG_SHA256 ||
        ecdsa->signatureR.size > P256_COORD_LEN || ecdsa->signatureS.size > P256_COORD_LEN)
        return sworn_err_set(SWORN_ERR_CRYPTO,
                             "tpm signer: the TPM returned a signature of another kind (alg "
                             "0x%04x)",
                             (unsigned)d->sig.sigAlg);
    if (sworn_ecdsa_rs_to_der(ecdsa->signatureR.buffer, ecdsa->signatureR.size,
                              ecdsa->signatureS.buffer, ecdsa->signatureS.size, sig, cap, &n) < 0)
        return -1;
    if (!signature_ok(k->pub, data, sig, n)) {
        k->connected = 0;
        return sworn_err_set(SWORN_ERR_IO,
                             "tpm signer: the TPM's signature does not verify with the key found "
                             "at open (was the key at handle 0x%08x replaced?)",
                             (unsigned)d->handle);
    }
    *sig_len = n;
    return 0;
}

static int tpm_reset(void *ctx)
{
    struct tpm_key *k = ctx;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;

    k->connected = 0;
    /* Never tear down a context that an abandoned call is still inside; fail at once instead,
     * so that no caller waits on a device that is still hung. */
    if (dev_busy(k->dev))
        return sworn_err_set(SWORN_ERR_IO,
                             "tpm signer: the TPM has not yet answered a call abandoned after "
                             "its deadline; not rebuilding yet");
    dev_teardown(k->dev);
    if (connect_key(k, spki, &spki_len) < 0)
        return -1;
    if (spki_len != k->spki_len || memcmp(spki, k->spki, spki_len) != 0) {
        dev_teardown(k->dev);
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "tpm signer: after a rebuild the key at handle 0x%08x has another "
                             "public key than at open",
                             (unsigned)k->dev->handle);
    }
    k->connected = 1;
    return 0;
}

const struct sworn_signer_backend sworn_signer_backend_tpm = {
    .scheme = "tpm",
    .software_held = 0,
    .open = tpm_open,
    .sign = tpm_sign,
    .reset = tpm_reset,
    .close = tpm_close,
};
