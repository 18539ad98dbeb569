/*
 * quote.c -- the independent TPM2_Quote check (contract in quote.h). OpenSSL only; its own
 * bounded big-endian reader, so nothing of the recording side's TPM code is trusted here.
 */
#include "quote.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/params.h>

/* TPM 2.0 Part 2 constants used here. */
#define TPM_GENERATED_VALUE 0xff544347u
#define TPM_ST_ATTEST_QUOTE 0x8018u
#define TPM_ALG_SHA256 0x000bu
#define TPM_ALG_NULL 0x0010u
#define TPM_ALG_ECDSA 0x0018u
#define TPM_ALG_ECC 0x0023u
#define TPM_ECC_NIST_P256 0x0003u
#define TPM_RH_ENDORSEMENT 0x4000000bu
/* TPMA_OBJECT bits */
#define TPMA_FIXED_TPM (1u << 1)
#define TPMA_FIXED_PARENT (1u << 4)
#define TPMA_SENSITIVE_DATA_ORIGIN (1u << 5)
#define TPMA_RESTRICTED (1u << 16)
#define TPMA_DECRYPT (1u << 17)
#define TPMA_SIGN (1u << 18)
#define AK_REQUIRED_ATTRS                                                                          \
    (TPMA_FIXED_TPM | TPMA_FIXED_PARENT | TPMA_SENSITIVE_DATA_ORIGIN | TPMA_RESTRICTED | TPMA_SIGN)
#define P256_LEN 32
#define DIGEST_MAX 64    /* the largest TPM2B_DIGEST (SHA-512) */
#define PCR_SELECT_MAX 4 /* bytes of a pcrSelect we accept: PCRs 0..31 */

/* ---------------------------------------------------------------------------------------------
 * Bounded big-endian reader: a failed read sets err and every later read fails too, so a caller
 * may read a whole structure and test err once.
 */
struct rd {
    const uint8_t *p;
    size_t len, off;
    int err;
};

static int rd_need(struct rd *r, size_t n)
{
    if (r->err || n > r->len - r->off) {
        r->err = 1;
        return 0;
    }
    return 1;
}

static uint64_t rd_uint(struct rd *r, size_t n)
{
    uint64_t v = 0;

    if (!rd_need(r, n))
        return 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | r->p[r->off++];
    return v;
}

static uint8_t rd_u8(struct rd *r)
{
    return (uint8_t)rd_uint(r, 1);
}

static uint16_t rd_u16(struct rd *r)
{
    return (uint16_t)rd_uint(r, 2);
}

static uint32_t rd_u32(struct rd *r)
{
    return (uint32_t)rd_uint(r, 4);
}

static uint64_t rd_u64(struct rd *r)
{
    return rd_uint(r, 8);
}

/* A TPM2B: u16 size, then that many bytes, which may be at most max. NULL on error. */
static const uint8_t *rd_2b(struct rd *r, size_t max, size_t *n)
{
    size_t sz = rd_u16(r);
    const uint8_t *b;

    *n = 0;
    if (r->err || sz > max || !rd_need(r, sz)) {
        r->err = 1;
        return NULL;
    }
    b = r->p + r->off;
    r->off += sz;
    *n = sz;
    return b;
}

static int rd_done(const struct rd *r)
{
    return !r->err && r->off == r->len;
}

/* ---------------------------------------------------------------------------------------------
 * Messages
 */

static enum sv_quote_reason fail(enum sv_quote_reason code, char *why, size_t cap, const char *fmt,
                                 ...) __attribute__((format(printf, 4, 5)));

static enum sv_quote_reason fail(enum sv_quote_reason code, char *why, size_t cap, const char *fmt,
                                 ...)
{
    va_list ap;

    if (why != NULL && cap > 0) {
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *sv_quote_reason_name(enum sv_quote_reason r)
{
    switch (r) {
    case SV_QUOTE_OK:
        return "ok";
    case SV_QUOTE_BAD_ARG:
        return "bad-argument";
    case SV_QUOTE_AK_PARSE:
        return "ak-parse";
    case SV_QUOTE_AK_TYPE:
        return "ak-type";
    case SV_QUOTE_AK_NAMEALG:
        return "ak-name-alg";
    case SV_QUOTE_AK_ATTRS:
        return "ak-attributes";
    case SV_QUOTE_AK_SCHEME:
        return "ak-scheme";
    case SV_QUOTE_AK_CURVE:
        return "ak-curve";
    case SV_QUOTE_AK_POINT:
        return "ak-point";
    case SV_QUOTE_ATTEST_PARSE:
        return "attest-parse";
    case SV_QUOTE_MAGIC:
        return "magic";
    case SV_QUOTE_TYPE:
        return "attest-type";
    case SV_QUOTE_SIGNER:
        return "qualified-signer";
    case SV_QUOTE_EXTRA:
        return "extra-data";
    case SV_QUOTE_PCR_SELECT:
        return "pcr-selection";
    case SV_QUOTE_PCR_DIGEST:
        return "pcr-digest";
    case SV_QUOTE_SIG_PARSE:
        return "signature-parse";
    case SV_QUOTE_SIG_ALG:
        return "signature-alg";
    case SV_QUOTE_SIG_INVALID:
        return "signature-invalid";
    case SV_QUOTE_INTERNAL:
        return "internal";
    case SV_QUOTE_FIRMWARE:
        return "firmware-version";
    }
    return "unknown";
}

const char *sv_quote_order_name(enum sv_quote_order o)
{
    switch (o) {
    case SV_ORDER_OK:
        return "ok";
    case SV_ORDER_OK_RESET:
        return "ok-reset";
    case SV_ORDER_ROLLBACK:
        return "rollback";
    case SV_ORDER_REPLAY:
        return "replay";
    case SV_ORDER_RESET_CLOCK_BACK:
        return "reset-clock-back";
    }
    return "unknown";
}

/* ---------------------------------------------------------------------------------------------
 * AK public area
 */

struct ak {
    uint8_t point[1 + 2 * P256_LEN]; /* uncompressed SEC1 point */
    uint8_t name[SV_QUOTE_NAME_LEN];
    uint8_t qname[SV_QUOTE_NAME_LEN];
};

static int sha256(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[32])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c != NULL && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(c, a, alen) == 1 &&
             (blen == 0 || EVP_DigestUpdate(c, b, blen) == 1) &&
             EVP_DigestFinal_ex(c, out, NULL) == 1;

    EVP_MD_CTX_free(c);
    return ok ? 0 : -1;
}

/* Left-pad a big-endian coordinate of at most 32 bytes into 32. */
static void pad32(uint8_t dst[P256_LEN], const uint8_t *src, size_t n)
{
    memset(dst, 0, P256_LEN - n);
    if (n > 0)
        memcpy(dst + P256_LEN - n, src, n);
}

static EVP_PKEY *ak_pkey(const struct ak *ak)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *pkey = NULL;
    char group[] = "prime256v1";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, group, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)ak->point,
                                          sizeof(ak->point)),
        OSSL_PARAM_construct_end(),
    };

    /* fromdata checks that the point is on the curve for EC public keys */
    if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1 ||
        EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
        pkey = NULL;
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* A point check that does not rely on fromdata alone: validate it explicitly. */
static int ak_point_valid(EVP_PKEY *pkey)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
    int ok = c != NULL && EVP_PKEY_public_check(c) == 1;

    EVP_PKEY_CTX_free(c);
    return ok;
}

static enum sv_quote_reason parse_ak(const uint8_t *in, size_t in_len, struct ak *ak,
                                     EVP_PKEY **pkey_out, char *why, size_t cap)
{
    struct rd r = {in, in_len, 0, 0};
    const uint8_t *tpmt = in, *x, *y;
    size_t tpmt_len = in_len, n, xn, yn;
    uint16_t type, name_alg, sym, scheme, hash, curve, kdf;
    uint32_t attrs;
    uint8_t hdr[4 + SV_QUOTE_NAME_LEN];
    EVP_PKEY *pkey;

    if (in == NULL)
        return fail(SV_QUOTE_BAD_ARG, why, cap, "no AK public area");
    /* A TPM2B_PUBLIC starts with the size of the rest; a TPMT_PUBLIC with its type (0x0023). */
    if (in_len >= 2 && ((size_t)in[0] << 8 | in[1]) == in_len - 2) {
        r.off = 2;
        tpmt = in + 2;
        tpmt_len = in_len - 2;
    }
    type = rd_u16(&r);
    name_alg = rd_u16(&r);
    attrs = rd_u32(&r);
    (void)rd_2b(&r, DIGEST_MAX, &n); /* authPolicy: any, it only guards use of the key */
    if (r.err)
        return fail(SV_QUOTE_AK_PARSE, why, cap, "AK public area truncated");
    if (type != TPM_ALG_ECC)
        return fail(SV_QUOTE_AK_TYPE, why, cap, "AK type 0x%04x is not ECC", type);
    if (name_alg != TPM_ALG_SHA256)
        return fail(SV_QUOTE_AK_NAMEALG, why, cap, "AK nameAlg 0x%04x is not SHA-256", name_alg);
    /* restricted|sign: the TPM signs only digests it made itself or checked (TPM2_Hash ticket);
     * fixedTPM|fixedParent|sensitiveDataOrigin: the private key was born in this TPM and never
     * leaves it. decrypt must be clear: a restricted decryption key is a storage key. */
    if ((attrs & AK_REQUIRED_ATTRS) != AK_REQUIRED_ATTRS || (attrs & TPMA_DECRYPT) != 0)
        return fail(SV_QUOTE_AK_ATTRS, why, cap,
                    "AK attributes 0x%08x are not restricted|sign|fixedTPM|fixedParent|"
                    "sensitiveDataOrigin without decrypt",
                    (unsigned)attrs);
    /* TPMS_ECC_PARMS: symmetric, scheme (+ hash), curveID, kdf (+ hash) */
    sym = rd_u16(&r);
    scheme = rd_u16(&r);
    hash = scheme == TPM_ALG_NULL ? TPM_ALG_NULL : rd_u16(&r);
    curve = rd_u16(&r);
    kdf = rd_u16(&r);
    if (kdf != TPM_ALG_NULL)
        (void)rd_u16(&r);
    if (r.err)
        return fail(SV_QUOTE_AK_PARSE, why, cap, "AK parameters truncated");
    if (sym != TPM_ALG_NULL || scheme != TPM_ALG_ECDSA || hash != TPM_ALG_SHA256 ||
        kdf != TPM_ALG_NULL)
        return fail(SV_QUOTE_AK_SCHEME, why, cap,
                    "AK symmetric 0x%04x scheme 0x%04x hash 0x%04x kdf 0x%04x is not "
                    "NULL/ECDSA/SHA-256/NULL",
                    sym, scheme, hash, kdf);
    if (curve != TPM_ECC_NIST_P256)
        return fail(SV_QUOTE_AK_CURVE, why, cap, "AK curve 0x%04x is not NIST P-256", curve);
    x = rd_2b(&r, 0xffff, &xn);
    y = rd_2b(&r, 0xffff, &yn);
    if (r.err)
        return fail(SV_QUOTE_AK_PARSE, why, cap, "AK unique point truncated");
    if (xn > P256_LEN || yn > P256_LEN)
        return fail(SV_QUOTE_AK_POINT, why, cap, "AK point coordinates of %zu/%zu bytes", xn, yn);
    if (!rd_done(&r))
        return fail(SV_QUOTE_AK_PARSE, why, cap, "%zu bytes after the AK public area",
                    r.len - r.off);
    ak->point[0] = 0x04;
    pad32(ak->point + 1, x, xn);
    pad32(ak->point + 1 + P256_LEN, y, yn);

    /* Name = nameAlg || H(TPMT_PUBLIC); qualified name of a primary = nameAlg ||
     * H(QN(hierarchy) || Name), and a hierarchy's QN is its handle. */
    ak->name[0] = 0x00;
    ak->name[1] = 0x0b;
    hdr[0] = (uint8_t)(TPM_RH_ENDORSEMENT >> 24);
    hdr[1] = (uint8_t)(TPM_RH_ENDORSEMENT >> 16);
    hdr[2] = (uint8_t)(TPM_RH_ENDORSEMENT >> 8);
    hdr[3] = (uint8_t)TPM_RH_ENDORSEMENT;
    ak->qname[0] = 0x00;
    ak->qname[1] = 0x0b;
    if (sha256(tpmt, tpmt_len, NULL, 0, ak->name + 2) != 0)
        return fail(SV_QUOTE_INTERNAL, why, cap, "SHA-256 failed");
    memcpy(hdr + 4, ak->name, SV_QUOTE_NAME_LEN);
    if (sha256(hdr, sizeof(hdr), NULL, 0, ak->qname + 2) != 0)
        return fail(SV_QUOTE_INTERNAL, why, cap, "SHA-256 failed");

    if (pkey_out == NULL)
        return SV_QUOTE_OK;
    pkey = ak_pkey(ak);
    if (pkey == NULL || !ak_point_valid(pkey)) {
        EVP_PKEY_free(pkey);
        return fail(SV_QUOTE_AK_POINT, why, cap, "AK point is not on P-256");
    }
    *pkey_out = pkey;
    return SV_QUOTE_OK;
}

enum sv_quote_reason sv_quote_ak_name(const uint8_t *ak_public, size_t ak_public_len,
                                      uint8_t name[SV_QUOTE_NAME_LEN],
                                      uint8_t qualified_name[SV_QUOTE_NAME_LEN], char *why,
                                      size_t why_cap)
{
    struct ak ak;
    EVP_PKEY *pkey = NULL;
    enum sv_quote_reason rc;

    if (name == NULL || qualified_name == NULL)
        return fail(SV_QUOTE_BAD_ARG, why, why_cap, "no output");
    /* build the key too, so an off-curve point is refused here as in sv_quote_check */
    rc = parse_ak(ak_public, ak_public_len, &ak, &pkey, why, why_cap);
    EVP_PKEY_free(pkey);
    if (rc != SV_QUOTE_OK)
        return rc;
    memcpy(name, ak.name, SV_QUOTE_NAME_LEN);
    memcpy(qualified_name, ak.qname, SV_QUOTE_NAME_LEN);
    return fail(SV_QUOTE_OK, why, why_cap, "AK ok");
}

/* ---------------------------------------------------------------------------------------------
 * Signature
 */

/* TPMT_SIGNATURE (ECDSA) -> DER ECDSA-Sig-Value, for EVP_DigestVerify. */
static enum sv_quote_reason parse_sig(const uint8_t *sig, size_t sig_len, uint8_t **der,
                                      int *der_len, char *why, size_t cap)
{
    struct rd r = {sig, sig_len, 0, 0};
    uint16_t alg, hash;
    const uint8_t *rb, *sb;
    size_t rn, sn;
    ECDSA_SIG *es;
    BIGNUM *br, *bs;

    if (sig == NULL)
        return fail(SV_QUOTE_BAD_ARG, why, cap, "no signature");
    alg = rd_u16(&r);
    hash = rd_u16(&r);
    if (r.err)
        return fail(SV_QUOTE_SIG_PARSE, why, cap, "signature truncated");
    if (alg != TPM_ALG_ECDSA || hash != TPM_ALG_SHA256)
        return fail(SV_QUOTE_SIG_ALG, why, cap,
                    "signature alg 0x%04x hash 0x%04x is not ECDSA-SHA256", alg, hash);
    rb = rd_2b(&r, P256_LEN, &rn);
    sb = rd_2b(&r, P256_LEN, &sn);
    if (r.err || rn == 0 || sn == 0)
        return fail(SV_QUOTE_SIG_PARSE, why, cap, "signature r/s missing, empty or over 32 bytes");
    if (!rd_done(&r))
        return fail(SV_QUOTE_SIG_PARSE, why, cap, "%zu bytes after the signature", r.len - r.off);
    es = ECDSA_SIG_new();
    br = BN_bin2bn(rb, (int)rn, NULL);
    bs = BN_bin2bn(sb, (int)sn, NULL);
    if (es == NULL || br == NULL || bs == NULL || ECDSA_SIG_set0(es, br, bs) != 1) {
        BN_free(br);
        BN_free(bs);
        ECDSA_SIG_free(es);
        return fail(SV_QUOTE_INTERNAL, why, cap, "cannot build the ECDSA signature");
    }
    *der = NULL;
    *der_len = i2d_ECDSA_SIG(es, der);
    ECDSA_SIG_free(es);
    if (*der_len <= 0)
        return fail(SV_QUOTE_INTERNAL, why, cap, "cannot encode the ECDSA signature");
    return SV_QUOTE_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Attestation
 */

static enum sv_quote_reason check_attest(const struct sv_quote_policy *policy, const struct ak *ak,
                                         const uint8_t *attest, size_t attest_len,
                                         const uint8_t extra[32], struct sv_quote_result *res,
                                         char *why, size_t cap)
{
    struct rd r = {attest, attest_len, 0, 0};
    uint32_t magic, count, mask = 0;
    uint16_t type, bank;
    const uint8_t *signer, *xd, *sel, *digest;
    size_t signer_len, xd_len, sel_len, digest_len;
    uint8_t want[32];
    EVP_MD_CTX *c;
    int ok;

    if (attest == NULL)
        return fail(SV_QUOTE_BAD_ARG, why, cap, "no attestation");
    magic = rd_u32(&r);
    type = rd_u16(&r);
    if (r.err)
        return fail(SV_QUOTE_ATTEST_PARSE, why, cap, "attestation truncated");
    if (magic != TPM_GENERATED_VALUE)
        return fail(SV_QUOTE_MAGIC, why, cap,
                    "magic 0x%08x is not TPM_GENERATED_VALUE: not made by the TPM (forged through "
                    "TPM2_Hash + TPM2_Sign, CVE-2024-29038)",
                    (unsigned)magic);
    if (type != TPM_ST_ATTEST_QUOTE)
        return fail(SV_QUOTE_TYPE, why, cap, "attestation type 0x%04x is not a quote (0x8018)",
                    type);
    signer = rd_2b(&r, 0xffff, &signer_len);
    xd = rd_2b(&r, 0xffff, &xd_len);
    res->clock.clock = rd_u64(&r);
    res->clock.reset_count = rd_u32(&r);
    res->clock.restart_count = rd_u32(&r);
    res->clock.safe = rd_u8(&r);
    res->firmware_version = rd_u64(&r);
    if (r.err)
        return fail(SV_QUOTE_ATTEST_PARSE, why, cap, "attestation header truncated");
    if (signer_len != SV_QUOTE_NAME_LEN || memcmp(signer, ak->qname, SV_QUOTE_NAME_LEN) != 0)
        return fail(SV_QUOTE_SIGNER, why, cap,
                    "qualifiedSigner is not this AK (as an endorsement-hierarchy primary)");
    if (xd_len != 32 || memcmp(xd, extra, 32) != 0)
        return fail(SV_QUOTE_EXTRA, why, cap,
                    "extraData (%zu bytes) is not the expected checkpoint hash", xd_len);
    /* TPMS_QUOTE_INFO: TPML_PCR_SELECTION then TPM2B_DIGEST */
    count = rd_u32(&r);
    bank = rd_u16(&r);
    sel_len = rd_u8(&r);
    sel = NULL;
    if (!r.err && rd_need(&r, sel_len)) {
        sel = r.p + r.off;
        r.off += sel_len;
    }
    if (r.err)
        return fail(SV_QUOTE_ATTEST_PARSE, why, cap, "PCR selection truncated");
    if (count != 1 || bank != TPM_ALG_SHA256 || sel_len == 0 || sel_len > PCR_SELECT_MAX)
        return fail(SV_QUOTE_PCR_SELECT, why, cap,
                    "PCR selection (%u banks, bank 0x%04x, %zu bytes) is not one sha256 bank",
                    (unsigned)count, bank, sel_len);
    for (size_t i = 0; i < sel_len; i++)
        mask |= (uint32_t)sel[i] << (8 * i);
    if (mask != policy->pcr_mask)
        return fail(SV_QUOTE_PCR_SELECT, why, cap,
                    "PCR selection 0x%06x differs from the policy's 0x%06x", (unsigned)mask,
                    (unsigned)policy->pcr_mask);
    digest = rd_2b(&r, 0xffff, &digest_len);
    if (r.err)
        return fail(SV_QUOTE_ATTEST_PARSE, why, cap, "pcrDigest truncated");
    if (!rd_done(&r))
        return fail(SV_QUOTE_ATTEST_PARSE, why, cap, "%zu bytes after the attestation",
                    r.len - r.off);
    if (policy->pcr_values_unknown)
        return digest_len == 32 ? SV_QUOTE_OK
                                : fail(SV_QUOTE_PCR_DIGEST, why, cap,
                                       "pcrDigest of %zu bytes is not a SHA-256", digest_len);
    /* pcrDigest = H(PCR[i] || PCR[j] || ...) over the selected PCRs in index order */
    c = EVP_MD_CTX_new();
    ok = c != NULL && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;
    for (unsigned i = 0; ok && i < SV_QUOTE_PCR_COUNT; i++)
        if (policy->pcr_mask & (1u << i))
            ok = EVP_DigestUpdate(c, policy->pcr_values[i], 32) == 1;
    ok = ok && EVP_DigestFinal_ex(c, want, NULL) == 1;
    EVP_MD_CTX_free(c);
    if (!ok)
        return fail(SV_QUOTE_INTERNAL, why, cap, "SHA-256 failed");
    if (digest_len != 32 || memcmp(digest, want, 32) != 0)
        return fail(SV_QUOTE_PCR_DIGEST, why, cap,
                    "pcrDigest differs from the policy's PCR values (another binary, "
                    "configuration or policy was measured)");
    return SV_QUOTE_OK;
}

enum sv_quote_reason sv_quote_check(const struct sv_quote_policy *policy, const uint8_t *ak_public,
                                    size_t ak_public_len, const uint8_t *attest, size_t attest_len,
                                    const uint8_t *sig, size_t sig_len,
                                    const uint8_t expected_extra[32], struct sv_quote_result *out,
                                    char *why, size_t why_cap)
{
    struct ak ak;
    struct sv_quote_result res;
    EVP_PKEY *pkey = NULL;
    EVP_MD_CTX *md = NULL;
    uint8_t *der = NULL;
    int der_len = 0, v;
    enum sv_quote_reason rc;

    if (why != NULL && why_cap > 0)
        why[0] = '\0';
    if (policy == NULL || expected_extra == NULL || out == NULL)
        return fail(SV_QUOTE_BAD_ARG, why, why_cap, "NULL policy, extra data or result");
    if (policy->pcr_mask == 0 || (policy->pcr_mask >> SV_QUOTE_PCR_COUNT) != 0)
        return fail(SV_QUOTE_BAD_ARG, why, why_cap, "policy PCR mask 0x%08x is empty or above 23",
                    (unsigned)policy->pcr_mask);
    memset(&res, 0, sizeof(res));
    rc = parse_ak(ak_public, ak_public_len, &ak, &pkey, why, why_cap);
    if (rc == SV_QUOTE_OK)
        rc = parse_sig(sig, sig_len, &der, &der_len, why, why_cap);
    if (rc == SV_QUOTE_OK)
        rc = check_attest(policy, &ak, attest, attest_len, expected_extra, &res, why, why_cap);
    if (rc == SV_QUOTE_OK) {
        md = EVP_MD_CTX_new();
        if (md == NULL || EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pkey) != 1) {
            rc = fail(SV_QUOTE_INTERNAL, why, why_cap, "cannot set up ECDSA verification");
        } else {
            v = EVP_DigestVerify(md, der, (size_t)der_len, attest, attest_len);
            if (v != 1)
                rc = fail(SV_QUOTE_SIG_INVALID, why, why_cap,
                          "signature does not verify with the AK over SHA-256(attest)");
        }
    }
    /* Only a signed firmwareVersion is worth judging (see quote.h). */
    if (rc == SV_QUOTE_OK && res.firmware_version < policy->min_firmware_version)
        rc = fail(SV_QUOTE_FIRMWARE, why, why_cap,
                  "TPM firmwareVersion 0x%016llx is below the policy's floor 0x%016llx",
                  (unsigned long long)res.firmware_version,
                  (unsigned long long)policy->min_firmware_version);
    EVP_MD_CTX_free(md);
    OPENSSL_free(der);
    EVP_PKEY_free(pkey);
    if (rc != SV_QUOTE_OK)
        return rc;
    memcpy(res.ak_name, ak.name, SV_QUOTE_NAME_LEN);
    memcpy(res.ak_qualified_name, ak.qname, SV_QUOTE_NAME_LEN);
    *out = res;
    return fail(SV_QUOTE_OK, why, why_cap,
                "quote ok: clock %llu resetCount %u restartCount %u safe %u",
                (unsigned long long)res.clock.clock, (unsigned)res.clock.reset_count,
                (unsigned)res.clock.restart_count, (unsigned)res.clock.safe);
}

/* ---------------------------------------------------------------------------------------------
 * Time order
 */

enum sv_quote_order sv_quote_time_order(const struct sv_quote_clock *prev,
                                        const struct sv_quote_clock *next, int *gap)
{
    if (gap != NULL)
        *gap = 0;
    /* resetCount only goes back on TPM2_Clear (or a restored state, or another TPM) */
    if (next->reset_count < prev->reset_count)
        return SV_ORDER_ROLLBACK;
    if (next->reset_count > prev->reset_count) {
        /* the clock may legitimately go back a little across a disorderly reset (it is saved
         * to NV only now and then); safe == 0 says so, and that quotes may be missing. With
         * safe == 1 the shutdown was orderly, Clock was saved and restored, and no larger
         * value was ever reported: going back is a restored state or another TPM. */
        if (next->safe != 0 && next->clock < prev->clock)
            return SV_ORDER_RESET_CLOCK_BACK;
        if (gap != NULL)
            *gap = next->safe == 0;
        return SV_ORDER_OK_RESET;
    }
    if (next->clock < prev->clock || next->restart_count < prev->restart_count)
        return SV_ORDER_ROLLBACK;
    if (next->clock == prev->clock)
        return SV_ORDER_REPLAY;
    return SV_ORDER_OK;
}
