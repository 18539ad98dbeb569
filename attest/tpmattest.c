/*
 * tpmattest.c -- the AK, PCR 23, quotes and the EK certificate over ESAPI (contract in
 * tpmattest.h).
 *
 * Every ESYS output is freed with Esys_Free right after it is copied out, and every ESYS_TR we
 * create is released: transient objects (a one-shot AK, an EK, the AK made again to check a
 * persistent one) by Esys_FlushContext on every path, errors included (a transient object holds
 * one of the TPM's few object slots, three on swtpm without a resource manager, until flushed or
 * until the TPM resets, whether or not its process still lives); NV index handles and the
 * persistent AK by Esys_TR_Close (they name a TPM entity we must not delete). The only session
 * started here is activation's policy session, flushed on every path; quotes, PCR reads and
 * extends use password authorization, which is no TPM session.
 */
#include "tpmattest.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "sigscheme.h"
#include "err.h"
#include "fileio.h"
#include "roca.h"
#include "wipe.h"

#define P256_COORD_LEN 32
#define P256_POINT_LEN (1 + 2 * P256_COORD_LEN)
#define PCR_COUNT 24u
#define PCR_SELECT_BYTES 3
/* The number of error bits of a format-one response code (TPM 2.0 Part 2, 6.6.3). */
#define RC_FMT1_NUMBER_MASK 0x3Fu
/* NV reads are chunked below every TPM's TPM2_PT_NV_BUFFER_MAX (1024 on swtpm, >= 512 in PC
 * Client profiles), so we need not ask the TPM for it. */
#define NV_CHUNK 512u
/* An EK certificate is a few hundred bytes; anything much larger is not one. */
#define EK_CERT_MAX 4096u

#define AK_ATTRS                                                                                   \
    (TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_FIXEDTPM |                    \
     TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH)

/* The TCG EK Credential Profile RSA template L-1: attributes, and PolicySecret(TPM_RH_ENDORSEMENT)
 * as its authPolicy (so only whoever knows the endorsement password may use it). */
#define EK_ATTRS                                                                                   \
    (TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |            \
     TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT)
#define EK_RSA_BITS 2048u
#define EK_RSA_BYTES (EK_RSA_BITS / 8)
#define EK_SYM_BITS 128u
#define EK_SYM_BYTES (EK_SYM_BITS / 8)
#define RSA_DEFAULT_EXPONENT 65537u
static const uint8_t ek_policy[SWORN_TPM_DIGEST_LEN] = {
    0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xb3, 0xf8, 0x1a, 0x90, 0xcc, 0x8d, 0x46, 0xa5, 0xd7, 0x24,
    0xfd, 0x52, 0xd7, 0x6e, 0x06, 0x52, 0x0b, 0x64, 0xf2, 0xa1, 0xda, 0x1b, 0x33, 0x14, 0x69, 0xaa};
/* The credential file header: magic and version, u32 each. */
#define CRED_HEADER_LEN 8u
/* KDFa's fixed input around the label and contexts: counter i and L, u32 each, and the NUL. */
#define KDFA_FIXED_LEN 9u
#define KDFA_INPUT_MAX 128u

struct sworn_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
};

static int tss_error(TSS2_RC rc, const char *call)
{
    TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;
    /* The TPM's own refusal is a crypto-level error; anything below it is the device or link. */
    int tpm = layer == TSS2_TPM_RC_LAYER || layer == TSS2_RESMGR_TPM_RC_LAYER;

    return sworn_err_set(tpm ? SWORN_ERR_CRYPTO : SWORN_ERR_IO, "tpm: %s failed: 0x%x (%s)", call,
                         (unsigned)rc, Tss2_RC_Decode(rc));
}

/* 1 when rc is the TPM's TPM_RC_HANDLE: nothing at the handle (an undefined NV index). */
static int handle_error(TSS2_RC rc)
{
    TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;
    TSS2_RC code = rc & ~TSS2_RC_LAYER_MASK;

    return (layer == TSS2_TPM_RC_LAYER || layer == TSS2_RESMGR_TPM_RC_LAYER) &&
           (code & TPM2_RC_FMT1) && ((code & RC_FMT1_NUMBER_MASK) | TPM2_RC_FMT1) == TPM2_RC_HANDLE;
}

int sworn_tpm_open(const char *tcti, struct sworn_tpm **out)
{
    struct sworn_tpm *t;
    TSS2_RC rc;

    *out = NULL;
    if (tcti == NULL || tcti[0] == '\0')
        return sworn_err_set(SWORN_ERR_ARG, "tpm: no TCTI configuration given");
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "tpm: out of memory");
    rc = Tss2_TctiLdr_Initialize(tcti, &t->tcti);
    if (rc != TSS2_RC_SUCCESS) {
        free(t);
        return sworn_err_set(SWORN_ERR_IO, "tpm: cannot open the TCTI \"%s\": 0x%x (%s)", tcti,
                             (unsigned)rc, Tss2_RC_Decode(rc));
    }
    rc = Esys_Initialize(&t->esys, t->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_Initialize");
        sworn_tpm_close(t);
        return -1;
    }
    *out = t;
    return 0;
}

void sworn_tpm_close(struct sworn_tpm *t)
{
    if (t == NULL)
        return;
    if (t->esys != NULL)
        Esys_Finalize(&t->esys);
    if (t->tcti != NULL)
        Tss2_TctiLdr_Finalize(&t->tcti);
    free(t);
}

/* The TPM name of a public area: nameAlg (SHA-256, big-endian) || SHA-256(marshalled area). */
static int public_name(const TPMT_PUBLIC *p, uint8_t name[SWORN_TPM_NAME_LEN])
{
    uint8_t buf[sizeof(TPMT_PUBLIC)];
    size_t off = 0;
    unsigned int len = 0;
    TSS2_RC rc;

    rc = Tss2_MU_TPMT_PUBLIC_Marshal(p, buf, sizeof(buf), &off);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Tss2_MU_TPMT_PUBLIC_Marshal");
    name[0] = (uint8_t)(TPM2_ALG_SHA256 >> 8);
    name[1] = (uint8_t)(TPM2_ALG_SHA256 & 0xFF);
    if (EVP_Digest(buf, off, name + 2, &len, EVP_sha256(), NULL) != 1 ||
        len != SWORN_TPM_DIGEST_LEN)
        return sworn_err_set(SWORN_ERR_CRYPTO, "tpm: SHA-256 failed");
    return 0;
}

/* 1 when p is a public area of the AK's template in everything but unique (the point). */
static int ak_template_matches(const TPMT_PUBLIC *p)
{
    const TPMS_ECC_PARMS *ecc = &p->parameters.eccDetail;

    return p->type == TPM2_ALG_ECC && p->nameAlg == TPM2_ALG_SHA256 &&
           p->objectAttributes == AK_ATTRS && p->authPolicy.size == 0 &&
           ecc->symmetric.algorithm == TPM2_ALG_NULL && ecc->scheme.scheme == TPM2_ALG_ECDSA &&
           ecc->scheme.details.ecdsa.hashAlg == TPM2_ALG_SHA256 &&
           ecc->curveID == TPM2_ECC_NIST_P256 && ecc->kdf.scheme == TPM2_ALG_NULL &&
           p->unique.ecc.x.size >= 1 && p->unique.ecc.x.size <= P256_COORD_LEN &&
           p->unique.ecc.y.size >= 1 && p->unique.ecc.y.size <= P256_COORD_LEN;
}

/* Check that the TPM gave us the key we asked for, and fill ak's public forms from it. */
static int ak_fill(const TPM2B_PUBLIC *pub, struct sworn_tpm_ak *ak)
{
    const TPMT_PUBLIC *p = &pub->publicArea;
    uint8_t point[P256_POINT_LEN] = {0x04};
    size_t off = 0;
    TSS2_RC rc;

    /* A TPM that ignored the template would make every quote unverifiable later: refuse now. */
    if (!ak_template_matches(p))
        return sworn_err_set(SWORN_ERR_CORRUPT,
                             "tpm: the attestation key the TPM made does not match its template");
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, ak->pub, sizeof(ak->pub), &off);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Tss2_MU_TPM2B_PUBLIC_Marshal");
    ak->pub_len = off;
    if (public_name(p, ak->name) < 0)
        return -1;
    /* The TPM may drop leading zero bytes: right-align each coordinate in its 32 bytes. */
    memcpy(point + 1 + P256_COORD_LEN - p->unique.ecc.x.size, p->unique.ecc.x.buffer,
           p->unique.ecc.x.size);
    memcpy(point + 1 + 2 * P256_COORD_LEN - p->unique.ecc.y.size, p->unique.ecc.y.buffer,
           p->unique.ecc.y.size);
    return sworn_p256_spki_from_point(point, ak->spki, sizeof(ak->spki), &ak->spki_len);
}

/* Create the AK's primary from its template: a transient object at *key (ESYS_TR_NONE on
 * error), its public in *pub (Esys_Free it). */
static TSS2_RC ak_create_primary(struct sworn_tpm *t, ESYS_TR *key, TPM2B_PUBLIC **pub)
{
    const TPM2B_SENSITIVE_CREATE sensitive = {0};
    const TPM2B_DATA outside = {0};
    const TPML_PCR_SELECTION creation_pcrs = {0};
    /* The template of tpmattest.h; empty unique, so the key depends on the seed alone. */
    const TPM2B_PUBLIC tmpl = {
        .publicArea = {
            .type = TPM2_ALG_ECC,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = AK_ATTRS,
            .parameters.eccDetail = {
                .symmetric.algorithm = TPM2_ALG_NULL,
                .scheme = {.scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256},
                .curveID = TPM2_ECC_NIST_P256,
                .kdf.scheme = TPM2_ALG_NULL}}};

    *key = ESYS_TR_NONE;
    *pub = NULL;
    return Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                              ESYS_TR_NONE, &sensitive, &tmpl, &outside, &creation_pcrs, key, pub,
                              NULL, NULL, NULL);
}

int sworn_tpm_ak_create(struct sworn_tpm *t, struct sworn_tpm_ak *ak)
{
    TPM2B_PUBLIC *pub = NULL;
    ESYS_TR key = ESYS_TR_NONE;
    TSS2_RC rc;

    memset(ak, 0, sizeof(*ak));
    ak->handle = ESYS_TR_NONE;
    rc = ak_create_primary(t, &key, &pub);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_CreatePrimary (endorsement hierarchy)");
    ak->handle = key;
    if (ak_fill(pub, ak) < 0) {
        Esys_Free(pub);
        sworn_tpm_ak_flush(t, ak);
        return -1;
    }
    Esys_Free(pub);
    return 0;
}

void sworn_tpm_ak_flush(struct sworn_tpm *t, struct sworn_tpm_ak *ak)
{
    ESYS_TR tr = ak->handle;

    if (t == NULL || t->esys == NULL || ak->handle == ESYS_TR_NONE)
        return;
    /* A persistent AK stays in the TPM: only ESYS's record of it goes (no TPM command). */
    if (ak->persistent)
        (void)Esys_TR_Close(t->esys, &tr);
    else
        (void)Esys_FlushContext(t->esys, ak->handle);
    ak->handle = ESYS_TR_NONE;
}

/* 1 when rc is the TPM's format-zero response code code (a warning or an error), e.g.
 * TPM_RC_OBJECT_MEMORY or TPM_RC_NV_DEFINED. */
static int tpm_rc_is(TSS2_RC rc, TSS2_RC code)
{
    TSS2_RC layer = rc & TSS2_RC_LAYER_MASK;

    return (layer == TSS2_TPM_RC_LAYER || layer == TSS2_RESMGR_TPM_RC_LAYER) &&
           (rc & ~TSS2_RC_LAYER_MASK) == code;
}

/* The qualified name of a primary object of the endorsement hierarchy: nameAlg ||
 * SHA-256(TPM_RH_ENDORSEMENT || name) (TPM 2.0 Part 1, "Qualified Name"). */
static int endorsement_qualified_name(const uint8_t name[SWORN_TPM_NAME_LEN],
                                      uint8_t qn[SWORN_TPM_NAME_LEN])
{
    uint8_t in[4 + SWORN_TPM_NAME_LEN];
    unsigned int len = 0;

    in[0] = (uint8_t)(TPM2_RH_ENDORSEMENT >> 24);
    in[1] = (uint8_t)(TPM2_RH_ENDORSEMENT >> 16);
    in[2] = (uint8_t)(TPM2_RH_ENDORSEMENT >> 8);
    in[3] = (uint8_t)TPM2_RH_ENDORSEMENT;
    memcpy(in + 4, name, SWORN_TPM_NAME_LEN);
    qn[0] = (uint8_t)(TPM2_ALG_SHA256 >> 8);
    qn[1] = (uint8_t)(TPM2_ALG_SHA256 & 0xFF);
    if (EVP_Digest(in, sizeof(in), qn + 2, &len, EVP_sha256(), NULL) != 1 ||
        len != SWORN_TPM_DIGEST_LEN)
        return sworn_err_set(SWORN_ERR_CRYPTO, "tpm: SHA-256 failed");
    return 0;
}

/* The error when the TPM has no free object slot. */
static int no_object_room(void)
{
    return sworn_err_set(SWORN_ERR_IO,
                         "tpm: no free object slot in the TPM for the AK (TPM_RC_OBJECT_MEMORY): "
                         "transient objects of other programs, or of an older sworn killed while "
                         "it held a transient AK, fill every slot (tpm2_getcap "
                         "handles-transient); they go when their owner flushes them or at the "
                         "next TPM reset");
}

/*
 * The object at handle, when there is one: OUT: *tr (an ESYS_TR for it; ESYS_TR_NONE when the
 * handle is empty) and ak filled from its public area, after checking that it is an AK of our
 * template's kind and a primary of the endorsement hierarchy (its qualified name, as the TPM
 * reports it). Returns 0 (found and checked, or empty), or -1: SWORN_ERR_VERIFY when the object
 * is not of our kind (*tr closed, nothing done to the object), other codes for TPM failures.
 */
static int ak_lookup(struct sworn_tpm *t, uint32_t handle, ESYS_TR *tr, struct sworn_tpm_ak *ak)
{
    TPM2B_PUBLIC *pub = NULL;
    TPM2B_NAME *name = NULL, *qualified = NULL;
    TPMS_CAPABILITY_DATA *cap = NULL;
    TPMI_YES_NO more = TPM2_NO;
    uint8_t qn[SWORN_TPM_NAME_LEN];
    TSS2_RC rc;
    int ret = -1, there;

    *tr = ESYS_TR_NONE;
    /* Asked first, so that an empty handle is an answer, not an error (which ESYS would log). */
    rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                            handle, 1, &more, &cap);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_GetCapability (persistent handles)");
    there = cap->data.handles.count >= 1 && cap->data.handles.handle[0] == handle;
    Esys_Free(cap);
    if (!there)
        return 0;
    /* Using a persistent object takes a free object slot for the command's time, as a
     * transient one does: a TPM whose slots are all held by others cannot read or quote it. */
    rc = Esys_TR_FromTPMPublic(t->esys, handle, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, tr);
    if (tpm_rc_is(rc, TPM2_RC_OBJECT_MEMORY)) {
        *tr = ESYS_TR_NONE;
        return no_object_room();
    }
    if (rc != TSS2_RC_SUCCESS) {
        *tr = ESYS_TR_NONE;
        return tss_error(rc, "Esys_TR_FromTPMPublic (the AK's persistent handle)");
    }
    rc = Esys_ReadPublic(t->esys, *tr, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &pub, &name,
                         &qualified);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_ReadPublic (the AK's persistent handle)");
        goto fail;
    }
    SWORN_ENSURE(ak_template_matches(&pub->publicArea), SWORN_ERR_VERIFY,
                 "tpm: the object at persistent handle 0x%08x is not an attestation key of "
                 "sworn's template (type, attributes, scheme or policy differ)",
                 (unsigned)handle);
    SWORN_GUARD(ak_fill(pub, ak));
    SWORN_GUARD(endorsement_qualified_name(ak->name, qn));
    SWORN_ENSURE(name->size == SWORN_TPM_NAME_LEN &&
                     memcmp(name->name, ak->name, SWORN_TPM_NAME_LEN) == 0 &&
                     qualified->size == SWORN_TPM_NAME_LEN &&
                     memcmp(qualified->name, qn, SWORN_TPM_NAME_LEN) == 0,
                 SWORN_ERR_VERIFY,
                 "tpm: the object at persistent handle 0x%08x is not a primary key of the "
                 "endorsement hierarchy (its qualified name says another parent)",
                 (unsigned)handle);
    ret = 0;
fail:
    if (ret < 0) {
        (void)Esys_TR_Close(t->esys, tr);
        *tr = ESYS_TR_NONE;
    }
    Esys_Free(pub);
    Esys_Free(name);
    Esys_Free(qualified);
    return ret;
}

/*
 * Create the template's primary (a transient object) and flush it at once. OUT: name, the name
 * the template gives on this TPM. 0 or -1.
 */
static int ak_recompute_name(struct sworn_tpm *t, uint8_t name[SWORN_TPM_NAME_LEN])
{
    struct sworn_tpm_ak fresh;
    TPM2B_PUBLIC *pub = NULL;
    ESYS_TR key = ESYS_TR_NONE;
    TSS2_RC rc;
    int ret;

    memset(&fresh, 0, sizeof(fresh));
    rc = ak_create_primary(t, &key, &pub);
    if (tpm_rc_is(rc, TPM2_RC_OBJECT_MEMORY))
        return no_object_room();
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_CreatePrimary (endorsement hierarchy)");
    /* Flushed before anything else: the shortest time a crash could leave it behind. */
    (void)Esys_FlushContext(t->esys, key);
    ret = ak_fill(pub, &fresh);
    Esys_Free(pub);
    if (ret == 0)
        memcpy(name, fresh.name, SWORN_TPM_NAME_LEN);
    return ret;
}

/* Create the template's primary and persist it at handle. OUT: *tr (the persistent object),
 * ak. Returns 0, 1 when another program persisted an object at handle meanwhile, or -1. */
static int ak_persist(struct sworn_tpm *t, uint32_t handle, ESYS_TR *tr, struct sworn_tpm_ak *ak)
{
    TPM2B_PUBLIC *pub = NULL;
    ESYS_TR key = ESYS_TR_NONE;
    TSS2_RC rc;
    int ret;

    *tr = ESYS_TR_NONE;
    rc = ak_create_primary(t, &key, &pub);
    if (tpm_rc_is(rc, TPM2_RC_OBJECT_MEMORY))
        return no_object_room();
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_CreatePrimary (endorsement hierarchy)");
    ret = ak_fill(pub, ak);
    Esys_Free(pub);
    /* Owner authorization (the empty password, as for every hierarchy here): EvictControl
     * copies the object into the owner's persistent range; the transient copy then goes. */
    if (ret == 0)
        rc = Esys_EvictControl(t->esys, ESYS_TR_RH_OWNER, key, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                               ESYS_TR_NONE, handle, tr);
    (void)Esys_FlushContext(t->esys, key);
    if (ret < 0)
        return -1;
    if (tpm_rc_is(rc, TPM2_RC_NV_DEFINED))
        return 1;
    if (rc != TSS2_RC_SUCCESS) {
        *tr = ESYS_TR_NONE;
        return tss_error(rc, "Esys_EvictControl (persist the AK, with the owner's empty password)");
    }
    return 0;
}

int sworn_tpm_ak_open(struct sworn_tpm *t, uint32_t handle, struct sworn_tpm_ak *ak,
                      enum sworn_tpm_ak_how *how)
{
    uint8_t expect[SWORN_TPM_NAME_LEN];
    ESYS_TR tr = ESYS_TR_NONE;
    int r;

    memset(ak, 0, sizeof(*ak));
    ak->handle = ESYS_TR_NONE;
    *how = SWORN_TPM_AK_FOUND;
    if (handle < SWORN_TPM_AK_HANDLE_FIRST || handle > SWORN_TPM_AK_HANDLE_LAST)
        return sworn_err_set(SWORN_ERR_ARG,
                             "tpm: the AK's handle 0x%08x is not in the owner's persistent range "
                             "0x81000000..0x817fffff",
                             (unsigned)handle);
    /* Twice at most: the second time after another program took the empty handle first. */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (ak_lookup(t, handle, &tr, ak) < 0)
            return -1;
        if (tr != ESYS_TR_NONE)
            break;
        r = ak_persist(t, handle, &tr, ak);
        if (r < 0)
            return -1;
        if (r == 0) {
            ak->handle = tr;
            ak->persistent = 1;
            *how = SWORN_TPM_AK_PERSISTED;
            return 0;
        }
    }
    if (tr == ESYS_TR_NONE)
        return sworn_err_set(SWORN_ERR_IO, "tpm: persistent handle 0x%08x keeps changing",
                             (unsigned)handle);
    ak->handle = tr;
    ak->persistent = 1;
    /* Of our kind and an endorsement primary; ours only if the template gives the same name
     * (another unique in the template would give another key of the same kind). */
    if (ak_recompute_name(t, expect) < 0) {
        sworn_tpm_ak_flush(t, ak);
        return -1;
    }
    if (memcmp(expect, ak->name, SWORN_TPM_NAME_LEN) != 0) {
        sworn_tpm_ak_flush(t, ak);
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "tpm: the key at persistent handle 0x%08x is an endorsement key of "
                             "the AK's kind, but not the one sworn's template gives",
                             (unsigned)handle);
    }
    return 0;
}

static int pcr_check(unsigned pcr)
{
    if (pcr >= PCR_COUNT)
        return sworn_err_set(SWORN_ERR_ARG, "tpm: PCR %u is out of range (0..23)", pcr);
    return 0;
}

int sworn_tpm_pcr_extend(struct sworn_tpm *t, unsigned pcr, const uint8_t digest[32])
{
    TPML_DIGEST_VALUES values = {.count = 1, .digests[0].hashAlg = TPM2_ALG_SHA256};
    TSS2_RC rc;

    if (pcr_check(pcr) < 0)
        return -1;
    memcpy(values.digests[0].digest.sha256, digest, SWORN_TPM_DIGEST_LEN);
    /* ESYS_TR_PCR0..PCR31 are consecutive, so ESYS_TR_PCR0 + pcr names PCR pcr. */
    rc = Esys_PCR_Extend(t->esys, ESYS_TR_PCR0 + pcr, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                         &values);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_PCR_Extend");
    return 0;
}

static void selection_from_mask(uint32_t mask, TPML_PCR_SELECTION *sel)
{
    memset(sel, 0, sizeof(*sel));
    sel->count = 1;
    sel->pcrSelections[0].hash = TPM2_ALG_SHA256;
    sel->pcrSelections[0].sizeofSelect = PCR_SELECT_BYTES;
    for (unsigned i = 0; i < PCR_SELECT_BYTES; i++)
        sel->pcrSelections[0].pcrSelect[i] = (uint8_t)(mask >> (8 * i));
}

int sworn_tpm_pcr_read(struct sworn_tpm *t, unsigned pcr, uint8_t out[32])
{
    TPML_PCR_SELECTION sel, *sel_out = NULL;
    TPML_DIGEST *values = NULL;
    UINT32 update_counter;
    TSS2_RC rc;
    int ret = -1;

    if (pcr_check(pcr) < 0)
        return -1;
    selection_from_mask(1u << pcr, &sel);
    rc = Esys_PCR_Read(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &sel, &update_counter,
                       &sel_out, &values);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_PCR_Read");
    /* A TPM without the SHA-256 bank, or with the PCR unallocated, returns no digest. */
    SWORN_ENSURE(values->count == 1 && values->digests[0].size == SWORN_TPM_DIGEST_LEN,
                 SWORN_ERR_NOTFOUND, "tpm: PCR %u has no SHA-256 value (bank not allocated?)", pcr);
    memcpy(out, values->digests[0].buffer, SWORN_TPM_DIGEST_LEN);
    ret = 0;
fail:
    Esys_Free(sel_out);
    Esys_Free(values);
    return ret;
}

/*
 * The quote is the AK's: a quote attest (magic, type) naming the AK's qualified name as an
 * endorsement primary as its signer, with our qualifying data, and an ECDSA-SHA256 signature
 * that verifies with the AK's public key. The TPM signs with whatever object sits at the handle
 * when the command runs, and password authorization binds no name: an object swapped in at a
 * persistent handle after sworn_tpm_ak_open checked it would otherwise yield quotes that no
 * auditor accepts, stored as if they were good.
 */
static int quote_is_the_aks(const struct sworn_tpm_ak *ak, const uint8_t qual[32],
                            const TPM2B_ATTEST *quoted, const TPMT_SIGNATURE *sig)
{
    TPMS_ATTEST a;
    uint8_t qn[SWORN_TPM_NAME_LEN], der[80];
    const unsigned char *p = ak->spki;
    const TPMS_SIGNATURE_ECC *ecc = &sig->signature.ecdsa;
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *ctx = NULL;
    size_t off = 0, der_len = 0;
    int ok = 0;

    memset(&a, 0, sizeof(a));
    if (Tss2_MU_TPMS_ATTEST_Unmarshal(quoted->attestationData, quoted->size, &off, &a) !=
            TSS2_RC_SUCCESS ||
        off != quoted->size || a.magic != TPM2_GENERATED_VALUE || a.type != TPM2_ST_ATTEST_QUOTE)
        return sworn_err_set(SWORN_ERR_FORMAT, "tpm: the TPM's quote is not a quote attest");
    if (endorsement_qualified_name(ak->name, qn) < 0)
        return -1;
    if (a.qualifiedSigner.size != SWORN_TPM_NAME_LEN ||
        memcmp(a.qualifiedSigner.name, qn, SWORN_TPM_NAME_LEN) != 0 ||
        a.extraData.size != SWORN_TPM_DIGEST_LEN ||
        memcmp(a.extraData.buffer, qual, SWORN_TPM_DIGEST_LEN) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "tpm: the quote names another signer than the AK (the object at its "
                             "handle changed?) or other qualifying data");
    if (sig->sigAlg != TPM2_ALG_ECDSA || ecc->hash != TPM2_ALG_SHA256 ||
        sworn_ecdsa_rs_to_der(ecc->signatureR.buffer, ecc->signatureR.size, ecc->signatureS.buffer,
                              ecc->signatureS.size, der, sizeof(der), &der_len) < 0)
        return sworn_err_set(SWORN_ERR_VERIFY, "tpm: the quote's signature is not ECDSA-SHA256");
    key = d2i_PUBKEY(NULL, &p, (long)ak->spki_len);
    ctx = EVP_MD_CTX_new();
    ok = key != NULL && ctx != NULL &&
         EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, key) == 1 &&
         EVP_DigestVerify(ctx, der, der_len, quoted->attestationData, quoted->size) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    ERR_clear_error();
    if (!ok)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "tpm: the quote's signature does not verify with the AK (the object "
                             "at its handle changed?)");
    return 0;
}

int sworn_tpm_quote(struct sworn_tpm *t, const struct sworn_tpm_ak *ak, const uint8_t qual[32],
                    uint32_t pcr_mask, uint8_t **attest, size_t *attest_len, uint8_t **sig,
                    size_t *sig_len)
{
    /* NULL: the key's own scheme, ECDSA-SHA256, which ak_create checked. */
    const TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_NULL};
    TPM2B_DATA qualifying = {.size = SWORN_TPM_DIGEST_LEN};
    TPML_PCR_SELECTION sel;
    TPM2B_ATTEST *quoted = NULL;
    TPMT_SIGNATURE *signature = NULL;
    uint8_t sig_buf[sizeof(TPMT_SIGNATURE)];
    size_t off = 0;
    TSS2_RC rc;
    int ret = -1;

    *attest = NULL;
    *sig = NULL;
    *attest_len = 0;
    *sig_len = 0;
    if (pcr_mask == 0 || pcr_mask >> PCR_COUNT != 0 || ak->handle == ESYS_TR_NONE)
        return sworn_err_set(SWORN_ERR_ARG, "tpm: quote needs a loaded AK and PCRs in 0..23");
    memcpy(qualifying.buffer, qual, SWORN_TPM_DIGEST_LEN);
    selection_from_mask(pcr_mask, &sel);
    rc = Esys_Quote(t->esys, ak->handle, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qualifying,
                    &scheme, &sel, &quoted, &signature);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_Quote");
    rc = Tss2_MU_TPMT_SIGNATURE_Marshal(signature, sig_buf, sizeof(sig_buf), &off);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Tss2_MU_TPMT_SIGNATURE_Marshal");
        goto fail;
    }
    SWORN_ENSURE(quoted->size > 0, SWORN_ERR_FORMAT, "tpm: the TPM returned an empty quote");
    SWORN_GUARD(quote_is_the_aks(ak, qual, quoted, signature));
    *attest = malloc(quoted->size);
    *sig = malloc(off);
    SWORN_ENSURE(*attest != NULL && *sig != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    memcpy(*attest, quoted->attestationData, quoted->size);
    *attest_len = quoted->size;
    memcpy(*sig, sig_buf, off);
    *sig_len = off;
    ret = 0;
fail:
    if (ret < 0) {
        free(*attest);
        free(*sig);
        *attest = NULL;
        *sig = NULL;
        *attest_len = 0;
        *sig_len = 0;
    }
    Esys_Free(quoted);
    Esys_Free(signature);
    return ret;
}

/*
 * Read the NV index at handle into a fresh buffer. Returns 0, 1 when the index is not defined,
 * or -1 with sworn_err set.
 */
static int nv_read_all(struct sworn_tpm *t, TPM2_HANDLE index, uint8_t **out, size_t *out_len)
{
    ESYS_TR nv = ESYS_TR_NONE;
    TPM2B_NV_PUBLIC *nv_pub = NULL;
    TPM2B_MAX_NV_BUFFER *chunk = NULL;
    uint8_t *buf = NULL;
    size_t size = 0, off = 0;
    TSS2_RC rc;
    int ret = -1;

    rc = Esys_TR_FromTPMPublic(t->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
    if (handle_error(rc))
        return 1;
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_TR_FromTPMPublic (NV index)");
    rc = Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv_pub, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_NV_ReadPublic");
        goto fail;
    }
    size = nv_pub->nvPublic.dataSize;
    SWORN_ENSURE(size > 0 && size <= EK_CERT_MAX, SWORN_ERR_RANGE,
                 "tpm: NV index 0x%08x holds %zu bytes, not an EK certificate", (unsigned)index,
                 size);
    buf = malloc(size);
    SWORN_ENSURE(buf != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    while (off < size) {
        UINT16 n = (UINT16)(size - off < NV_CHUNK ? size - off : NV_CHUNK);

        /* The TCG EK certificate indices are owner-readable (TPMA_NV_OWNERREAD). */
        rc = Esys_NV_Read(t->esys, ESYS_TR_RH_OWNER, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                          ESYS_TR_NONE, n, (UINT16)off, &chunk);
        if (rc != TSS2_RC_SUCCESS) {
            tss_error(rc, "Esys_NV_Read");
            goto fail;
        }
        SWORN_ENSURE(chunk->size == n, SWORN_ERR_FORMAT, "tpm: short NV read at offset %zu", off);
        memcpy(buf + off, chunk->buffer, n);
        off += n;
        Esys_Free(chunk);
        chunk = NULL;
    }
    *out = buf;
    *out_len = size;
    buf = NULL;
    ret = 0;
fail:
    free(buf);
    Esys_Free(chunk);
    Esys_Free(nv_pub);
    /* Releases the ESYS_TR only; the index itself stays in the TPM. */
    if (nv != ESYS_TR_NONE)
        (void)Esys_TR_Close(t->esys, &nv);
    return ret;
}

int sworn_tpm_read_ek_cert(struct sworn_tpm *t, uint8_t **der, size_t *der_len)
{
    static const TPM2_HANDLE indices[] = {0x01c0000a, 0x01c00014, 0x01c00016, 0x01c00002};

    TPMS_CAPABILITY_DATA *cap = NULL;
    TPMI_YES_NO more = TPM2_NO;
    TSS2_RC rc;

    *der = NULL;
    *der_len = 0;
    /* List the defined indices first: reading an undefined one works too (TPM_RC_HANDLE), but
     * makes the TSS log an error line for each, which would alarm an operator. */
    rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_HANDLES,
                            indices[0] & 0xFFFF0000u, TPM2_MAX_CAP_HANDLES, &more, &cap);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_GetCapability (NV indices)");
    for (size_t i = 0; i < sizeof(indices) / sizeof(indices[0]); i++) {
        int found = 0, r;

        for (UINT32 j = 0; j < cap->data.handles.count && j < TPM2_MAX_CAP_HANDLES; j++)
            found |= cap->data.handles.handle[j] == indices[i];
        if (!found)
            continue;
        r = nv_read_all(t, indices[i], der, der_len);
        if (r <= 0) {
            Esys_Free(cap);
            return r;
        }
    }
    Esys_Free(cap);
    return sworn_err_set(SWORN_ERR_NOTFOUND, "tpm: no EK certificate in NV (0x01c0000a, "
                                             "0x01c00014, 0x01c00016, 0x01c00002)");
}

/* Create a primary in the endorsement hierarchy from an EK template and marshal its public. */
static int ek_create(struct sworn_tpm *t, TPM2B_PUBLIC *tmpl, uint32_t *handle, uint8_t *pub,
                     size_t *pub_len)
{
    const TPM2B_SENSITIVE_CREATE sensitive = {0};
    const TPM2B_DATA outside = {0};
    const TPML_PCR_SELECTION creation_pcrs = {0};
    TPM2B_PUBLIC *out = NULL;
    ESYS_TR key = ESYS_TR_NONE;
    size_t off = 0;
    TSS2_RC rc;

    *handle = ESYS_TR_NONE;
    *pub_len = 0;
    tmpl->publicArea.nameAlg = TPM2_ALG_SHA256;
    tmpl->publicArea.objectAttributes = EK_ATTRS;
    tmpl->publicArea.authPolicy.size = SWORN_TPM_DIGEST_LEN;
    memcpy(tmpl->publicArea.authPolicy.buffer, ek_policy, sizeof(ek_policy));
    rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                            ESYS_TR_NONE, &sensitive, tmpl, &outside, &creation_pcrs, &key, &out,
                            NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_CreatePrimary (EK)");
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(out, pub, SWORN_TPM_PUBLIC_MAX, &off);
    Esys_Free(out);
    if (rc != TSS2_RC_SUCCESS) {
        sworn_tpm_flush(t, &key);
        return tss_error(rc, "Tss2_MU_TPM2B_PUBLIC_Marshal");
    }
    *handle = key;
    *pub_len = off;
    return 0;
}

int sworn_tpm_ek_create(struct sworn_tpm *t, uint32_t *handle, uint8_t *pub, size_t *pub_len)
{
    /* Template L-1 has a unique of 256 zero bytes: part of the template, so part of the key. */
    TPM2B_PUBLIC tmpl = {
        .publicArea = {.type = TPM2_ALG_RSA,
                       .parameters.rsaDetail = {.symmetric = {.algorithm = TPM2_ALG_AES,
                                                              .keyBits.aes = EK_SYM_BITS,
                                                              .mode.aes = TPM2_ALG_CFB},
                                                .scheme.scheme = TPM2_ALG_NULL,
                                                .keyBits = EK_RSA_BITS,
                                                .exponent = 0},
                       .unique.rsa.size = EK_RSA_BYTES}};

    return ek_create(t, &tmpl, handle, pub, pub_len);
}

int sworn_tpm_ek_create_ecc(struct sworn_tpm *t, uint32_t *handle, uint8_t *pub, size_t *pub_len)
{
    /* Template L-2: P-256, no scheme, no KDF, and a unique of two 32-byte zero coordinates. */
    TPM2B_PUBLIC tmpl = {
        .publicArea = {.type = TPM2_ALG_ECC,
                       .parameters.eccDetail = {.symmetric = {.algorithm = TPM2_ALG_AES,
                                                              .keyBits.aes = EK_SYM_BITS,
                                                              .mode.aes = TPM2_ALG_CFB},
                                                .scheme.scheme = TPM2_ALG_NULL,
                                                .curveID = TPM2_ECC_NIST_P256,
                                                .kdf.scheme = TPM2_ALG_NULL},
                       .unique.ecc = {.x.size = P256_COORD_LEN, .y.size = P256_COORD_LEN}}};

    return ek_create(t, &tmpl, handle, pub, pub_len);
}

void sworn_tpm_flush(struct sworn_tpm *t, uint32_t *handle)
{
    if (t == NULL || t->esys == NULL || *handle == ESYS_TR_NONE)
        return;
    (void)Esys_FlushContext(t->esys, *handle);
    *handle = ESYS_TR_NONE;
}

static void put_be16(uint8_t *p, size_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/*
 * KDFa with HMAC-SHA256 (TPM 2.0 Part 1, 11.4.10.2; SP 800-108 counter mode): block i is
 * HMAC(key, i || label || 0x00 || context_u || context_v || bits), all integers u32 BE, and the
 * output is the first bits/8 bytes of the blocks. label is a C string (its NUL is the 0x00).
 */
static int kdfa_sha256(const uint8_t *key, size_t key_len, const char *label,
                       const uint8_t *context_u, size_t u_len, uint32_t bits, uint8_t *out)
{
    uint8_t in[KDFA_INPUT_MAX], block[SWORN_TPM_DIGEST_LEN];
    size_t label_len = strlen(label) + 1, in_len = KDFA_FIXED_LEN - 1 + label_len + u_len;
    size_t want = bits / 8, done = 0;
    unsigned int len = 0;
    int ret = -1;

    if (in_len > sizeof(in) || bits % 8 != 0)
        return sworn_err_set(SWORN_ERR_RANGE, "tpm: KDFa input too long");
    memcpy(in + 4, label, label_len);
    if (u_len > 0)
        memcpy(in + 4 + label_len, context_u, u_len);
    put_be32(in + in_len - 4, bits);
    for (uint32_t i = 1; done < want; i++) {
        size_t n = want - done < sizeof(block) ? want - done : sizeof(block);

        put_be32(in, i);
        SWORN_ENSURE(HMAC(EVP_sha256(), key, (int)key_len, in, in_len, block, &len) != NULL &&
                         len == sizeof(block),
                     SWORN_ERR_CRYPTO, "tpm: HMAC-SHA256 failed");
        memcpy(out + done, block, n);
        done += n;
    }
    ret = 0;
fail:
    sworn_memzero(block, sizeof(block));
    return ret;
}

/* An OpenSSL RSA public key from the EK's public area, after checking it is an EK we handle. */
static int ek_rsa_key(const TPMT_PUBLIC *p, EVP_PKEY **key)
{
    const TPMS_RSA_PARMS *rsa = &p->parameters.rsaDetail;
    uint32_t exponent = rsa->exponent != 0 ? rsa->exponent : RSA_DEFAULT_EXPONENT;
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM_BLD *bld = NULL;
    OSSL_PARAM *params = NULL;
    BIGNUM *n = NULL, *e = NULL;
    int ret = -1;

    *key = NULL;
    /* The seed's size, the symmetric key and the HMAC all follow from these: refuse the rest. */
    SWORN_ENSURE(
        p->type == TPM2_ALG_RSA && p->nameAlg == TPM2_ALG_SHA256 &&
            (p->objectAttributes & (TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT)) ==
                (TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT) &&
            rsa->keyBits == EK_RSA_BITS && p->unique.rsa.size == EK_RSA_BYTES &&
            rsa->symmetric.algorithm == TPM2_ALG_AES && rsa->symmetric.keyBits.aes == EK_SYM_BITS &&
            rsa->symmetric.mode.aes == TPM2_ALG_CFB,
        SWORN_ERR_FORMAT, "tpm: the EK is not an RSA-2048 / SHA-256 / AES-128-CFB storage key");
    n = BN_bin2bn(p->unique.rsa.buffer, p->unique.rsa.size, NULL);
    e = BN_new();
    bld = OSSL_PARAM_BLD_new();
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    SWORN_ENSURE(
        n != NULL && e != NULL && bld != NULL && ctx != NULL && BN_set_word(e, exponent) == 1 &&
            OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) == 1 &&
            OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) == 1 &&
            (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
            EVP_PKEY_fromdata(ctx, key, EVP_PKEY_PUBLIC_KEY, params) == 1,
        SWORN_ERR_CRYPTO, "tpm: cannot build the EK's RSA key");
    ret = 0;
fail:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    BN_free(n);
    BN_free(e);
    return ret;
}

/* RSA-OAEP(SHA-256) of the seed under the EK, with the label "IDENTITY" and its NUL (Part 1,
 * 24.4: the label says what the seed is for, so a duplication seed cannot be passed off). */
static int oaep_encrypt_seed(EVP_PKEY *key, const uint8_t *seed, size_t seed_len,
                             TPM2B_ENCRYPTED_SECRET *out)
{
    static const char label[] = "IDENTITY";
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    unsigned char *l = OPENSSL_memdup(label, sizeof(label));
    size_t len = sizeof(out->secret);
    int ret = -1;

    SWORN_ENSURE(ctx != NULL && l != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    SWORN_ENSURE(EVP_PKEY_encrypt_init(ctx) == 1 &&
                     EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
                     EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 &&
                     EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1,
                 SWORN_ERR_CRYPTO, "tpm: cannot set up RSA-OAEP");
    /* set0 takes ownership of the label on success only. */
    SWORN_ENSURE(EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, l, (int)sizeof(label)) == 1,
                 SWORN_ERR_CRYPTO, "tpm: cannot set the OAEP label");
    l = NULL;
    SWORN_ENSURE(EVP_PKEY_encrypt(ctx, out->secret, &len, seed, seed_len) == 1 &&
                     len == EK_RSA_BYTES,
                 SWORN_ERR_CRYPTO, "tpm: RSA-OAEP encryption failed");
    out->size = (UINT16)len;
    ret = 0;
fail:
    OPENSSL_free(l);
    EVP_PKEY_CTX_free(ctx);
    return ret;
}

/*
 * KDFe with SHA-256 (TPM 2.0 Part 1, 11.4.10.3; SP 800-56A concatenation KDF): block i is
 * SHA-256(i || Z || label || 0x00 || party_u || party_v), i a u32 BE, and the output is the
 * first bits/8 bytes of the blocks. label is a C string (its NUL is the 0x00).
 */
static int kdfe_sha256(const uint8_t *z, size_t z_len, const char *label, const uint8_t *party_u,
                       size_t u_len, const uint8_t *party_v, size_t v_len, uint32_t bits,
                       uint8_t *out)
{
    uint8_t counter[4], block[SWORN_TPM_DIGEST_LEN];
    size_t want = bits / 8, done = 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int len = 0;
    int ret = -1;

    SWORN_ENSURE(md != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    for (uint32_t i = 1; done < want; i++) {
        size_t n = want - done < sizeof(block) ? want - done : sizeof(block);

        put_be32(counter, i);
        SWORN_ENSURE(EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
                         EVP_DigestUpdate(md, counter, sizeof(counter)) == 1 &&
                         EVP_DigestUpdate(md, z, z_len) == 1 &&
                         EVP_DigestUpdate(md, label, strlen(label) + 1) == 1 &&
                         EVP_DigestUpdate(md, party_u, u_len) == 1 &&
                         EVP_DigestUpdate(md, party_v, v_len) == 1 &&
                         EVP_DigestFinal_ex(md, block, &len) == 1 && len == sizeof(block),
                     SWORN_ERR_CRYPTO, "tpm: SHA-256 failed");
        memcpy(out + done, block, n);
        done += n;
    }
    ret = 0;
fail:
    sworn_memzero(block, sizeof(block));
    EVP_MD_CTX_free(md);
    return ret;
}

/* An OpenSSL P-256 public key from the EK's public area, after checking it is an EK we handle.
 * EVP_PKEY_fromdata decodes the point with EC_POINT_oct2point, which refuses points off the
 * curve (an invalid-curve point would leak the ephemeral key's bits to whoever chose it). */
static int ek_ecc_key(const TPMT_PUBLIC *p, EVP_PKEY **key)
{
    const TPMS_ECC_PARMS *ecc = &p->parameters.eccDetail;
    uint8_t point[P256_POINT_LEN] = {0x04};
    EVP_PKEY_CTX *ctx = NULL;
    OSSL_PARAM params[3];
    char group[] = "prime256v1";
    int ret = -1;

    *key = NULL;
    SWORN_ENSURE(
        p->type == TPM2_ALG_ECC && p->nameAlg == TPM2_ALG_SHA256 &&
            (p->objectAttributes & (TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT)) ==
                (TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT) &&
            ecc->curveID == TPM2_ECC_NIST_P256 && ecc->kdf.scheme == TPM2_ALG_NULL &&
            ecc->symmetric.algorithm == TPM2_ALG_AES && ecc->symmetric.keyBits.aes == EK_SYM_BITS &&
            ecc->symmetric.mode.aes == TPM2_ALG_CFB && p->unique.ecc.x.size >= 1 &&
            p->unique.ecc.x.size <= P256_COORD_LEN && p->unique.ecc.y.size >= 1 &&
            p->unique.ecc.y.size <= P256_COORD_LEN,
        SWORN_ERR_FORMAT, "tpm: the EK is not an ECC P-256 / SHA-256 / AES-128-CFB storage key");
    memcpy(point + 1 + P256_COORD_LEN - p->unique.ecc.x.size, p->unique.ecc.x.buffer,
           p->unique.ecc.x.size);
    memcpy(point + 1 + 2 * P256_COORD_LEN - p->unique.ecc.y.size, p->unique.ecc.y.buffer,
           p->unique.ecc.y.size);
    params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0);
    params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point));
    params[2] = OSSL_PARAM_construct_end();
    ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    SWORN_ENSURE(ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1 &&
                     EVP_PKEY_fromdata(ctx, key, EVP_PKEY_PUBLIC_KEY, params) == 1,
                 SWORN_ERR_FORMAT, "tpm: the EK's point is not on the P-256 curve");
    ret = 0;
fail:
    EVP_PKEY_CTX_free(ctx);
    return ret;
}

/*
 * The seed for an ECC EK (TPM 2.0 Part 1, Annex C.6.4, "ECDH" secret sharing): an ephemeral
 * P-256 key e, Z = x(e * EK), seed = KDFe(SHA-256, Z, "IDENTITY", x(e.pub), x(EK), 256), and the
 * "encrypted" seed is e's public point as a marshalled TPMS_ECC_POINT. The TPM recomputes Z with
 * its private EK; e is forgotten here.
 */
static int ecc_seed(const TPMT_PUBLIC *p, uint8_t seed[SWORN_TPM_DIGEST_LEN],
                    TPM2B_ENCRYPTED_SECRET *out)
{
    TPMS_ECC_POINT ephemeral_point;
    EVP_PKEY *ek = NULL, *eph = NULL;
    EVP_PKEY_CTX *ctx = NULL;
    uint8_t z[P256_COORD_LEN], pub[P256_POINT_LEN];
    size_t z_len = sizeof(z), pub_len = 0, off = 0;
    TSS2_RC rc;
    int ret = -1;

    memset(&ephemeral_point, 0, sizeof(ephemeral_point));
    SWORN_GUARD(ek_ecc_key(p, &ek));
    eph = EVP_EC_gen("P-256");
    SWORN_ENSURE(eph != NULL, SWORN_ERR_CRYPTO, "tpm: cannot make an ephemeral P-256 key");
    SWORN_ENSURE(EVP_PKEY_get_octet_string_param(eph, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub),
                                                 &pub_len) == 1 &&
                     pub_len == sizeof(pub) && pub[0] == 0x04,
                 SWORN_ERR_CRYPTO, "tpm: cannot read the ephemeral public point");
    ctx = EVP_PKEY_CTX_new_from_pkey(NULL, eph, NULL);
    SWORN_ENSURE(ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 &&
                     EVP_PKEY_derive_set_peer(ctx, ek) == 1 &&
                     EVP_PKEY_derive(ctx, z, &z_len) == 1 && z_len == sizeof(z),
                 SWORN_ERR_CRYPTO, "tpm: ECDH with the EK failed");
    /* The TPM takes both x coordinates as they are sent: ours as 32 bytes, the EK's as in its
     * public area. */
    SWORN_GUARD(kdfe_sha256(z, z_len, "IDENTITY", pub + 1, P256_COORD_LEN, p->unique.ecc.x.buffer,
                            p->unique.ecc.x.size, 8 * SWORN_TPM_DIGEST_LEN, seed));
    ephemeral_point.x.size = P256_COORD_LEN;
    memcpy(ephemeral_point.x.buffer, pub + 1, P256_COORD_LEN);
    ephemeral_point.y.size = P256_COORD_LEN;
    memcpy(ephemeral_point.y.buffer, pub + 1 + P256_COORD_LEN, P256_COORD_LEN);
    rc = Tss2_MU_TPMS_ECC_POINT_Marshal(&ephemeral_point, out->secret, sizeof(out->secret), &off);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Tss2_MU_TPMS_ECC_POINT_Marshal");
        goto fail;
    }
    out->size = (UINT16)off;
    ret = 0;
fail:
    sworn_memzero(z, sizeof(z));
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(eph);
    EVP_PKEY_free(ek);
    return ret;
}

static int aes128_cfb(const uint8_t key[EK_SYM_BYTES], int encrypt, const uint8_t *in, size_t len,
                      uint8_t *out)
{
    const uint8_t iv[16] = {0}; /* Part 1, 24.4: the key is fresh per credential, so IV 0 */
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0, ret = -1;

    SWORN_ENSURE(ctx != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    SWORN_ENSURE(EVP_CipherInit_ex(ctx, EVP_aes_128_cfb128(), NULL, key, iv, encrypt) == 1 &&
                     EVP_CipherUpdate(ctx, out, &n1, in, (int)len) == 1 &&
                     EVP_CipherFinal_ex(ctx, out + n1, &n2) == 1 && (size_t)(n1 + n2) == len,
                 SWORN_ERR_CRYPTO, "tpm: AES-128-CFB failed");
    ret = 0;
fail:
    EVP_CIPHER_CTX_free(ctx);
    return ret;
}

int sworn_tpm_make_credential(const uint8_t *ek_pub, size_t ek_pub_len, const uint8_t *name,
                              size_t name_len, const uint8_t *secret, size_t secret_len,
                              uint8_t **out, size_t *out_len)
{
    TPM2B_PUBLIC ek;
    TPM2B_ENCRYPTED_SECRET enc_seed = {0};
    TPM2B_ID_OBJECT blob = {0};
    EVP_PKEY *key = NULL;
    uint8_t seed[SWORN_TPM_DIGEST_LEN], sym[EK_SYM_BYTES], hmac_key[SWORN_TPM_DIGEST_LEN];
    uint8_t plain[2 + SWORN_TPM_CREDENTIAL_MAX],
        mac_in[2 + SWORN_TPM_CREDENTIAL_MAX + SWORN_TPM_NAME_LEN];
    uint8_t *enc_identity, *buf = NULL;
    size_t off = 0, cap = CRED_HEADER_LEN + sizeof(TPM2B_ID_OBJECT) + sizeof(enc_seed);
    unsigned int len = 0;
    TSS2_RC rc;
    int ret = -1;

    *out = NULL;
    *out_len = 0;
    memset(&ek, 0, sizeof(ek));
    SWORN_ENSURE(secret_len >= 1 && secret_len <= SWORN_TPM_CREDENTIAL_MAX, SWORN_ERR_RANGE,
                 "tpm: a credential secret is 1..%d bytes", SWORN_TPM_CREDENTIAL_MAX);
    /* Only a SHA-256 name: the HMAC and the KDF context take it as it is, and the TPM compares. */
    SWORN_ENSURE(name_len == SWORN_TPM_NAME_LEN && name[0] == (TPM2_ALG_SHA256 >> 8) &&
                     name[1] == (TPM2_ALG_SHA256 & 0xFF),
                 SWORN_ERR_FORMAT, "tpm: the AK name is not a SHA-256 TPM name (34 bytes)");
    rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(ek_pub, ek_pub_len, &off, &ek);
    SWORN_ENSURE(rc == TSS2_RC_SUCCESS && off == ek_pub_len, SWORN_ERR_FORMAT,
                 "tpm: the EK public is not a marshalled TPM2B_PUBLIC");
    if (ek.publicArea.type == TPM2_ALG_ECC) {
        SWORN_GUARD(ecc_seed(&ek.publicArea, seed, &enc_seed));
    } else {
        SWORN_GUARD(ek_rsa_key(&ek.publicArea, &key));
        /* A ROCA EK is factorable from its public key: whoever factors it activates a
         * credential for an AK of their choice, in software. */
        SWORN_GUARD(sworn_roca_refuse_pkey(key, "tpm: the RSA EK"));
        SWORN_ENSURE(RAND_bytes(seed, sizeof(seed)) == 1, SWORN_ERR_CRYPTO,
                     "tpm: no random bytes for the seed");
        SWORN_GUARD(oaep_encrypt_seed(key, seed, sizeof(seed), &enc_seed));
    }
    SWORN_GUARD(kdfa_sha256(seed, sizeof(seed), "STORAGE", name, name_len, EK_SYM_BITS, sym));
    SWORN_GUARD(
        kdfa_sha256(seed, sizeof(seed), "INTEGRITY", NULL, 0, 8 * SWORN_TPM_DIGEST_LEN, hmac_key));

    /* credentialBlob = TPM2B(integrityHMAC = TPM2B_DIGEST(hmac) || encIdentity). */
    put_be16(plain, secret_len);
    memcpy(plain + 2, secret, secret_len);
    enc_identity = blob.credential + 2 + SWORN_TPM_DIGEST_LEN;
    SWORN_GUARD(aes128_cfb(sym, 1, plain, 2 + secret_len, enc_identity));
    memcpy(mac_in, enc_identity, 2 + secret_len);
    memcpy(mac_in + 2 + secret_len, name, name_len);
    put_be16(blob.credential, SWORN_TPM_DIGEST_LEN);
    SWORN_ENSURE(HMAC(EVP_sha256(), hmac_key, sizeof(hmac_key), mac_in, 2 + secret_len + name_len,
                      blob.credential + 2, &len) != NULL &&
                     len == SWORN_TPM_DIGEST_LEN,
                 SWORN_ERR_CRYPTO, "tpm: HMAC-SHA256 failed");
    blob.size = (UINT16)(2 + SWORN_TPM_DIGEST_LEN + 2 + secret_len);

    buf = malloc(cap);
    SWORN_ENSURE(buf != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    put_be32(buf, SWORN_TPM_CRED_MAGIC);
    put_be32(buf + 4, SWORN_TPM_CRED_VERSION);
    off = CRED_HEADER_LEN;
    rc = Tss2_MU_TPM2B_ID_OBJECT_Marshal(&blob, buf, cap, &off);
    if (rc == TSS2_RC_SUCCESS)
        rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Marshal(&enc_seed, buf, cap, &off);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Tss2_MU marshal (credential)");
        goto fail;
    }
    *out = buf;
    *out_len = off;
    buf = NULL;
    ret = 0;
fail:
    /* Whoever has the seed can open the credential: it, and all derived from it, go. */
    sworn_memzero(seed, sizeof(seed));
    sworn_memzero(sym, sizeof(sym));
    sworn_memzero(hmac_key, sizeof(hmac_key));
    sworn_memzero(plain, sizeof(plain));
    free(buf);
    EVP_PKEY_free(key);
    return ret;
}

/* Split a credential file (SWORN_TPM_CRED_MAGIC layout) into its two parts, strictly. */
static int parse_credential(const uint8_t *cred, size_t cred_len, TPM2B_ID_OBJECT *blob,
                            TPM2B_ENCRYPTED_SECRET *enc_seed)
{
    size_t off = CRED_HEADER_LEN;
    TSS2_RC rc;

    if (cred == NULL || cred_len <= CRED_HEADER_LEN ||
        ((uint32_t)cred[0] << 24 | (uint32_t)cred[1] << 16 | (uint32_t)cred[2] << 8 | cred[3]) !=
            SWORN_TPM_CRED_MAGIC ||
        ((uint32_t)cred[4] << 24 | (uint32_t)cred[5] << 16 | (uint32_t)cred[6] << 8 | cred[7]) !=
            SWORN_TPM_CRED_VERSION)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "tpm: not a credential file (magic 0xBADCC0DE, version 1)");
    rc = Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(cred, cred_len, &off, blob);
    if (rc == TSS2_RC_SUCCESS)
        rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(cred, cred_len, &off, enc_seed);
    if (rc != TSS2_RC_SUCCESS || off != cred_len)
        return sworn_err_set(SWORN_ERR_FORMAT, "tpm: the credential file is malformed");
    return 0;
}

int sworn_tpm_credential_ek_alg(const uint8_t *cred, size_t cred_len)
{
    TPM2B_ID_OBJECT blob;
    TPM2B_ENCRYPTED_SECRET enc_seed;
    TPMS_ECC_POINT point;
    size_t off = 0;

    memset(&blob, 0, sizeof(blob));
    memset(&enc_seed, 0, sizeof(enc_seed));
    memset(&point, 0, sizeof(point));
    if (parse_credential(cred, cred_len, &blob, &enc_seed) < 0)
        return -1;
    if (enc_seed.size == EK_RSA_BYTES)
        return SWORN_TPM_EK_RSA;
    /* An ECC seed is the ephemeral point, a marshalled TPMS_ECC_POINT and nothing else. */
    if (Tss2_MU_TPMS_ECC_POINT_Unmarshal(enc_seed.secret, enc_seed.size, &off, &point) ==
            TSS2_RC_SUCCESS &&
        off == enc_seed.size && point.x.size >= 1 && point.x.size <= P256_COORD_LEN &&
        point.y.size >= 1 && point.y.size <= P256_COORD_LEN)
        return SWORN_TPM_EK_ECC;
    return sworn_err_set(SWORN_ERR_FORMAT,
                         "tpm: the credential's seed (%u bytes) is neither for an RSA-2048 EK nor "
                         "a P-256 point",
                         (unsigned)enc_seed.size);
}

int sworn_tpm_activate_credential(struct sworn_tpm *t, const struct sworn_tpm_ak *ak, uint32_t ek,
                                  const uint8_t *cred, size_t cred_len,
                                  uint8_t secret[SWORN_TPM_CREDENTIAL_MAX], size_t *secret_len)
{
    const TPMT_SYM_DEF no_sym = {.algorithm = TPM2_ALG_NULL};
    const TPM2B_NONCE empty_nonce = {0};
    const TPM2B_DIGEST empty_digest = {0};
    TPM2B_ID_OBJECT blob;
    TPM2B_ENCRYPTED_SECRET enc_seed;
    TPM2B_DIGEST *cert_info = NULL;
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc;
    int ret = -1;

    *secret_len = 0;
    memset(&blob, 0, sizeof(blob));
    memset(&enc_seed, 0, sizeof(enc_seed));
    SWORN_ENSURE(ak->handle != ESYS_TR_NONE && ek != ESYS_TR_NONE, SWORN_ERR_ARG,
                 "tpm: activation needs a loaded AK and EK");
    SWORN_GUARD(parse_credential(cred, cred_len, &blob, &enc_seed));

    /* The EK's policy is PolicySecret(TPM_RH_ENDORSEMENT): prove the (empty) endorsement
     * password in a fresh policy session, used once for the EK's authorization. */
    rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                               ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &no_sym, TPM2_ALG_SHA256,
                               &session);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_StartAuthSession (policy)");
        goto fail;
    }
    rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, session, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                           ESYS_TR_NONE, &empty_nonce, &empty_digest, &empty_nonce, 0, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_PolicySecret (endorsement)");
        goto fail;
    }
    /* The AK needs its admin role, which a password gives (no adminWithPolicy in its template). */
    rc = Esys_ActivateCredential(t->esys, ak->handle, ek, ESYS_TR_PASSWORD, session, ESYS_TR_NONE,
                                 &blob, &enc_seed, &cert_info);
    if (rc != TSS2_RC_SUCCESS) {
        tss_error(rc, "Esys_ActivateCredential");
        goto fail;
    }
    SWORN_ENSURE(cert_info->size >= 1 && cert_info->size <= SWORN_TPM_CREDENTIAL_MAX,
                 SWORN_ERR_FORMAT, "tpm: the TPM returned a %u-byte credential",
                 (unsigned)cert_info->size);
    memcpy(secret, cert_info->buffer, cert_info->size);
    *secret_len = cert_info->size;
    ret = 0;
fail:
    if (cert_info != NULL) {
        sworn_memzero(cert_info, sizeof(*cert_info));
        Esys_Free(cert_info);
    }
    /* ESYS starts sessions with continueSession set: flush it, or it holds one of the TPM's
     * few session slots (errors ignored: the context may be dead already). */
    if (session != ESYS_TR_NONE)
        (void)Esys_FlushContext(t->esys, session);
    return ret;
}

/* ---------------------------------------------------------------------------------------------
 * EK certificate chain
 */

/* Certificates are a few KiB; a CA bundle a few dozen of them. */
#define CA_FILE_MAX (1024 * 1024)
#define OID_SUBJECT_ALT_NAME "2.5.29.17"
#define OID_SUBJECT_DIRECTORY_ATTRIBUTES "2.5.29.9"

/* One certificate, DER or PEM. NULL on error (sworn_err set). */
static X509 *cert_parse(const uint8_t *b, size_t len, const char *what)
{
    const unsigned char *p = b;
    X509 *x = NULL;
    BIO *bio;

    if (len > 0 && len < (size_t)INT32_MAX) {
        x = d2i_X509(NULL, &p, (long)len);
        if (x != NULL && p != b + len) {
            X509_free(x);
            x = NULL;
        }
        if (x == NULL && (bio = BIO_new_mem_buf(b, (int)len)) != NULL) {
            x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
            BIO_free(bio);
        }
    }
    ERR_clear_error();
    if (x == NULL)
        sworn_err_set(SWORN_ERR_FORMAT, "tpm: %s is not a DER or PEM X.509 certificate", what);
    return x;
}

/* Add every certificate of a CA file (PEM, or one DER certificate) to store. */
static int store_add_file(X509_STORE *store, const char *path)
{
    char *b = NULL;
    size_t len = 0;
    BIO *bio = NULL;
    X509 *x;
    int n = 0, ret = -1;

    SWORN_GUARD(sworn_file_read(path, CA_FILE_MAX, &b, &len));
    bio = BIO_new_mem_buf(b, (int)len);
    SWORN_ENSURE(bio != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        int ok = X509_STORE_add_cert(store, x);

        X509_free(x);
        SWORN_ENSURE(ok == 1, SWORN_ERR_CRYPTO, "tpm: cannot add a CA of %s", path);
        n++;
    }
    ERR_clear_error();
    if (n == 0) {
        x = cert_parse((const uint8_t *)b, len, path);
        SWORN_ENSURE(x != NULL, SWORN_ERR_FORMAT, "tpm: %s holds no CA certificate", path);
        n = X509_STORE_add_cert(store, x);
        X509_free(x);
        SWORN_ENSURE(n == 1, SWORN_ERR_CRYPTO, "tpm: cannot add the CA of %s", path);
    }
    ret = 0;
fail:
    BIO_free(bio);
    free(b);
    return ret;
}

/* 1 when every critical extension of x that OpenSSL does not handle is one the TCG EK profile
 * uses (see tpmattest.h), else 0. */
static int only_tcg_critical(X509 *x)
{
    for (int i = 0; i < X509_get_ext_count(x); i++) {
        X509_EXTENSION *ext = X509_get_ext(x, i);
        char oid[64];

        if (!X509_EXTENSION_get_critical(ext) || X509_supported_extension(ext))
            continue;
        if (OBJ_obj2txt(oid, sizeof(oid), X509_EXTENSION_get_object(ext), 1) <= 0)
            return 0;
        if (strcmp(oid, OID_SUBJECT_ALT_NAME) != 0 &&
            strcmp(oid, OID_SUBJECT_DIRECTORY_ATTRIBUTES) != 0)
            return 0;
    }
    return 1;
}

static int ek_verify_cb(int ok, X509_STORE_CTX *ctx)
{
    if (!ok && X509_STORE_CTX_get_error(ctx) == X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION &&
        X509_STORE_CTX_get_error_depth(ctx) == 0 &&
        only_tcg_critical(X509_STORE_CTX_get_current_cert(ctx)))
        return 1;
    return ok;
}

/* The OpenSSL key of an EK public area we handle (RSA-2048 or ECC P-256). */
static int ek_pkey(const uint8_t *ek_pub, size_t ek_pub_len, EVP_PKEY **key)
{
    TPM2B_PUBLIC ek;
    size_t off = 0;

    *key = NULL;
    memset(&ek, 0, sizeof(ek));
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(ek_pub, ek_pub_len, &off, &ek) != TSS2_RC_SUCCESS ||
        off != ek_pub_len)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "tpm: the EK public is not a marshalled TPM2B_PUBLIC");
    if (ek.publicArea.type == TPM2_ALG_ECC)
        return ek_ecc_key(&ek.publicArea, key);
    return ek_rsa_key(&ek.publicArea, key);
}

int sworn_tpm_ek_cert_verify(const uint8_t *cert, size_t cert_len, const char *const *ca_files,
                             size_t n_ca, const uint8_t *ek_pub, size_t ek_pub_len)
{
    X509_STORE *store = NULL;
    X509_STORE_CTX *ctx = NULL;
    X509 *x = NULL;
    EVP_PKEY *ek = NULL, *cert_key;
    int ret = -1;

    SWORN_ENSURE(cert != NULL && ca_files != NULL && n_ca >= 1, SWORN_ERR_ARG,
                 "tpm: an EK certificate check needs the certificate and at least one CA");
    x = cert_parse(cert, cert_len, "the EK certificate");
    if (x == NULL)
        goto fail;
    store = X509_STORE_new();
    ctx = X509_STORE_CTX_new();
    SWORN_ENSURE(store != NULL && ctx != NULL, SWORN_ERR_NOMEM, "tpm: out of memory");
    for (size_t i = 0; i < n_ca; i++)
        SWORN_GUARD(store_add_file(store, ca_files[i]));
    X509_STORE_set_verify_cb(store, ek_verify_cb);
    SWORN_ENSURE(X509_STORE_CTX_init(ctx, store, x, NULL) == 1, SWORN_ERR_CRYPTO,
                 "tpm: cannot set up certificate verification");
    if (X509_verify_cert(ctx) != 1) {
        int e = X509_STORE_CTX_get_error(ctx);

        sworn_err_set(SWORN_ERR_VERIFY,
                      "tpm: the EK certificate does not chain to the given CAs: %s (depth %d)",
                      X509_verify_cert_error_string(e), X509_STORE_CTX_get_error_depth(ctx));
        goto fail;
    }
    cert_key = X509_get0_pubkey(x);
    SWORN_ENSURE(cert_key != NULL, SWORN_ERR_FORMAT,
                 "tpm: the EK certificate's public key cannot be read");
    SWORN_GUARD(sworn_roca_refuse_pkey(cert_key, "tpm: the EK certificate's RSA key"));
    if (ek_pub != NULL) {
        SWORN_GUARD(ek_pkey(ek_pub, ek_pub_len, &ek));
        SWORN_ENSURE(EVP_PKEY_eq(cert_key, ek) == 1, SWORN_ERR_VERIFY,
                     "tpm: the EK certificate is for another key than the EK public given");
    }
    ret = 0;
fail:
    ERR_clear_error();
    EVP_PKEY_free(ek);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    X509_free(x);
    return ret;
}

int sworn_tpm_get_info(struct sworn_tpm *t, struct sworn_tpm_info *info)
{
    TPMS_CAPABILITY_DATA *cap = NULL;
    TPMI_YES_NO more = TPM2_NO;
    int have = 0, ret = -1;
    TSS2_RC rc;

    memset(info, 0, sizeof(*info));
    /* The three properties lie in the fixed group, from TPM_PT_MANUFACTURER (0x105) up. */
    rc = Esys_GetCapability(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                            TPM2_CAP_TPM_PROPERTIES, TPM2_PT_MANUFACTURER,
                            TPM2_PT_FIRMWARE_VERSION_2 - TPM2_PT_MANUFACTURER + 1, &more, &cap);
    if (rc != TSS2_RC_SUCCESS)
        return tss_error(rc, "Esys_GetCapability (TPM properties)");
    for (UINT32 i = 0; i < cap->data.tpmProperties.count && i < TPM2_MAX_TPM_PROPERTIES; i++) {
        const TPMS_TAGGED_PROPERTY *p = &cap->data.tpmProperties.tpmProperty[i];

        if (p->property == TPM2_PT_MANUFACTURER) {
            info->manufacturer = p->value;
            have |= 1;
        } else if (p->property == TPM2_PT_FIRMWARE_VERSION_1) {
            info->firmware_version_1 = p->value;
            have |= 2;
        } else if (p->property == TPM2_PT_FIRMWARE_VERSION_2) {
            info->firmware_version_2 = p->value;
            have |= 4;
        }
    }
    SWORN_ENSURE(have == 7, SWORN_ERR_FORMAT,
                 "tpm: the TPM did not report its manufacturer and firmware version");
    /* Vendors pad short ids with NULs ("IBM\0") or spaces ("IFX "): the text stops at a NUL. */
    for (int i = 0; i < 4; i++) {
        char c = (char)(info->manufacturer >> (24 - 8 * i));

        if (c == '\0')
            break;
        info->manufacturer_text[i] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    info->firmware_version =
        (uint64_t)info->firmware_version_1 << 32 | (uint64_t)info->firmware_version_2;
    ret = 0;
fail:
    Esys_Free(cap);
    return ret;
}

int sworn_quote_limiter_take(struct sworn_quote_limiter *l, uint64_t now_monotonic_ms)
{
    if (l->have_last) {
        if (now_monotonic_ms < l->last_ms)
            return 0;
        if (now_monotonic_ms - l->last_ms < l->min_interval_ms)
            return 0;
    }
    l->last_ms = now_monotonic_ms;
    l->have_last = 1;
    return 1;
}
