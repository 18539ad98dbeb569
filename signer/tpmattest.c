/*
 * tpmattest.c -- the AK, PCR 23, quotes and the EK certificate over ESAPI (contract in
 * tpmattest.h).
 *
 * Every ESYS output is freed with Esys_Free right after it is copied out, and every ESYS_TR we
 * create is released: the AK by Esys_FlushContext (a transient object holds one of the TPM's few
 * object slots, three on swtpm without a resource manager), NV index handles by Esys_TR_Close
 * (they name a TPM entity we must not delete).
 */
#include "tpmattest.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

#include "backend.h"
#include "err.h"

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

/* Check that the TPM gave us the key we asked for, and fill ak's public forms from it. */
static int ak_fill(const TPM2B_PUBLIC *pub, struct sworn_tpm_ak *ak)
{
    const TPMT_PUBLIC *p = &pub->publicArea;
    const TPMS_ECC_PARMS *ecc = &p->parameters.eccDetail;
    uint8_t point[P256_POINT_LEN] = {0x04};
    size_t off = 0;
    TSS2_RC rc;

    /* A TPM that ignored the template would make every quote unverifiable later: refuse now. */
    if (p->type != TPM2_ALG_ECC || p->nameAlg != TPM2_ALG_SHA256 ||
        ecc->curveID != TPM2_ECC_NIST_P256 || p->objectAttributes != AK_ATTRS ||
        ecc->scheme.scheme != TPM2_ALG_ECDSA ||
        ecc->scheme.details.ecdsa.hashAlg != TPM2_ALG_SHA256 ||
        p->unique.ecc.x.size > P256_COORD_LEN || p->unique.ecc.y.size > P256_COORD_LEN)
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

int sworn_tpm_ak_create(struct sworn_tpm *t, struct sworn_tpm_ak *ak)
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
    TPM2B_PUBLIC *pub = NULL;
    ESYS_TR key = ESYS_TR_NONE;
    TSS2_RC rc;

    memset(ak, 0, sizeof(*ak));
    ak->handle = ESYS_TR_NONE;
    rc = Esys_CreatePrimary(t->esys, ESYS_TR_RH_ENDORSEMENT, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                            ESYS_TR_NONE, &sensitive, &tmpl, &outside, &creation_pcrs, &key, &pub,
                            NULL, NULL, NULL);
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
    if (t == NULL || t->esys == NULL || ak->handle == ESYS_TR_NONE)
        return;
    (void)Esys_FlushContext(t->esys, ak->handle);
    ak->handle = ESYS_TR_NONE;
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
