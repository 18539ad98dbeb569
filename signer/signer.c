/*
 * signer.c -- the generic part of every signer (contract in signer.h): backend choice, key
 * pinning, purpose TBS bytes, hashing, rebuild with backoff, health check, verification.
 */
#define _GNU_SOURCE
#include "signer.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "backend.h"
#include "err.h"
#include "sig_base.h"
#include "wipe.h"

#define DIGEST_LEN 32
/* Rebuild backoff: the first retry may come at once, then 100 ms, doubling to 5 s. */
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000

struct sworn_signer {
    const struct sworn_signer_backend *backend;
    void *ctx;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
    enum sworn_sig_alg alg;
    int broken;               /* the device context failed and must be rebuilt */
    unsigned backoff_ms;      /* wait before the next rebuild attempt */
    struct timespec retry_at; /* no rebuild attempt before this (CLOCK_MONOTONIC) */
};

static const struct sworn_signer_backend *backend_for(const char *uri)
{
    static const struct sworn_signer_backend *const all[] = {
        &sworn_signer_backend_pkcs11, &sworn_signer_backend_tpm, &sworn_signer_backend_file};

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        size_t n = strlen(all[i]->scheme);

        if (strncmp(uri, all[i]->scheme, n) == 0 && uri[n] == ':')
            return all[i];
    }
    return NULL;
}

unsigned sworn_signer_call_timeout(const struct sworn_signer_config *cfg)
{
    return cfg->timeout_ms != 0 ? cfg->timeout_ms : SWORN_SIGNER_TIMEOUT_MS;
}

unsigned sworn_signer_open_timeout(const struct sworn_signer_config *cfg)
{
    unsigned call = sworn_signer_call_timeout(cfg);

    if (cfg->open_timeout_ms != 0)
        return cfg->open_timeout_ms;
    return call > SWORN_SIGNER_OPEN_TIMEOUT_MS ? call : SWORN_SIGNER_OPEN_TIMEOUT_MS;
}

int sworn_signer_open(const struct sworn_signer_config *cfg, struct sworn_signer **out)
{
    struct sworn_signer *s = NULL;

    SWORN_ENSURE(cfg != NULL && cfg->uri != NULL, SWORN_ERR_ARG, "signer: no key URI");
    s = calloc(1, sizeof(*s));
    SWORN_ENSURE(s != NULL, SWORN_ERR_NOMEM, "signer: out of memory");
    s->backend = backend_for(cfg->uri);
    SWORN_ENSURE(s->backend != NULL, SWORN_ERR_ARG,
                 "signer: unknown key URI scheme in \"%.40s\" (pkcs11:, tpm: or file:)", cfg->uri);
    /* Hardware keys are pinned: without a pin an attacker who swaps the token's key would have
     * us sign with theirs. */
    SWORN_ENSURE(s->backend->software_held ||
                     (cfg->pinned_spki != NULL && cfg->pinned_spki_len > 0),
                 SWORN_ERR_ARG, "signer: a %s key needs its pinned public key", s->backend->scheme);
    SWORN_GUARD(s->backend->open(cfg, &s->ctx, s->spki, &s->spki_len, &s->alg));
    if (cfg->pinned_spki != NULL && (cfg->pinned_spki_len != s->spki_len ||
                                     memcmp(cfg->pinned_spki, s->spki, s->spki_len) != 0)) {
        sworn_err_set(SWORN_ERR_VERIFY,
                      "signer: the key at %.80s is not the pinned key (public keys differ)",
                      cfg->uri);
        goto fail;
    }
    *out = s;
    return 0;
fail:
    sworn_signer_close(s);
    return -1;
}

void sworn_signer_close(struct sworn_signer *s)
{
    if (s == NULL)
        return;
    if (s->backend != NULL && s->ctx != NULL)
        s->backend->close(s->ctx);
    sworn_memzero(s, sizeof(*s));
    free(s);
}

const uint8_t *sworn_signer_spki(const struct sworn_signer *s, size_t *len)
{
    *len = s->spki_len;
    return s->spki;
}

void sworn_signer_key_id(const struct sworn_signer *s, uint8_t out[SWORN_KEY_ID_LEN])
{
    SHA256(s->spki, s->spki_len, out);
}

enum sworn_sig_alg sworn_signer_alg(const struct sworn_signer *s)
{
    return s->alg;
}

int sworn_signer_software_held(const struct sworn_signer *s)
{
    return s->backend->software_held;
}

const char *sworn_signer_scheme(const struct sworn_signer *s)
{
    return s->backend->scheme;
}

static void monotonic_now(struct timespec *t)
{
    clock_gettime(CLOCK_MONOTONIC, t);
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * Rebuild a broken device context, unless the backoff says not yet. A failure answers at once:
 * the caller denies, and nobody waits on a device that is down.
 */
static int rebuild(struct sworn_signer *s)
{
    struct timespec now;

    monotonic_now(&now);
    if (before(&now, &s->retry_at))
        return sworn_err_set(SWORN_ERR_IO,
                             "signer: %s device unavailable; next rebuild attempt "
                             "after backoff",
                             s->backend->scheme);
    if (s->backend->reset(s->ctx) == 0) {
        s->broken = 0;
        s->backoff_ms = 0;
        return 0;
    }
    s->backoff_ms = s->backoff_ms == 0 ? BACKOFF_FIRST_MS : s->backoff_ms * 2;
    if (s->backoff_ms > BACKOFF_MAX_MS)
        s->backoff_ms = BACKOFF_MAX_MS;
    s->retry_at = now;
    s->retry_at.tv_sec += s->backoff_ms / 1000;
    s->retry_at.tv_nsec += (long)(s->backoff_ms % 1000) * 1000000L;
    if (s->retry_at.tv_nsec >= 1000000000L) {
        s->retry_at.tv_sec++;
        s->retry_at.tv_nsec -= 1000000000L;
    }
    return -1;
}

int sworn_signer_sign(struct sworn_signer *s, enum sworn_sign_purpose purpose, const uint8_t *msg,
                      size_t len, uint8_t *sig, size_t cap, size_t *sig_len)
{
    uint8_t tbs[SWORN_SIGNER_TBS_MAX];
    uint8_t digest[DIGEST_LEN];
    size_t tbs_len = 0;
    int rc;

    if (sworn_signer_tbs(purpose, msg, len, tbs, &tbs_len) < 0)
        return -1;
    if (purpose == SWORN_PURPOSE_COSIGNATURE && s->alg != SWORN_SIG_ED25519)
        return sworn_err_set(SWORN_ERR_ARG,
                             "signer: a cosignature is made with an Ed25519 key only");
    if (purpose == SWORN_PURPOSE_HTTP_MESSAGE) {
        /* On top of the shape: sworn's own base, under this key's id (sig_base.h). */
        uint8_t id[SWORN_KEY_ID_LEN];
        char hex[2 * SWORN_KEY_ID_LEN + 1];
        const char *why = NULL;

        sworn_signer_key_id(s, id);
        for (size_t i = 0; i < SWORN_KEY_ID_LEN; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        if (sworn_httpsig_check_profile(msg, len, hex, &why) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer: not an http-message base: %s", why);
    }
    if (s->broken && rebuild(s) < 0)
        return -1;
    if (s->alg == SWORN_SIG_ED25519) {
        rc = s->backend->sign(s->ctx, tbs, tbs_len, sig, cap, sig_len);
    } else {
        SHA256(tbs, tbs_len, digest);
        rc = s->backend->sign(s->ctx, digest, sizeof(digest), sig, cap, sig_len);
    }
    if (rc < 0 && sworn_err_code() == SWORN_ERR_IO)
        s->broken = 1;
    return rc;
}

int sworn_signer_health(struct sworn_signer *s)
{
    static const char probe[] = "sworn signer health check";
    uint8_t digest[DIGEST_LEN], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;

    SHA256((const uint8_t *)probe, sizeof(probe) - 1, digest);
    if (sworn_signer_sign(s, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest), sig, sizeof(sig),
                          &sig_len) < 0)
        return -1;
    if (sworn_signature_verify(s->spki, s->spki_len, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                               sig, sig_len) < 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "signer: health check signature does not verify with the key's public "
                             "key");
    return 0;
}
