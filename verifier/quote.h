/*
 * quote.h -- the auditor's independent check of a TPM2_Quote (docs/formats.md, DESIGN.md 4).
 *
 * Written from the TPM 2.0 specification (Part 2 structures), with OpenSSL as its only
 * dependency: it shares no code with the recording side, so a bug there cannot hide itself here.
 *
 * Inputs are the raw bytes the log stores beside a checkpoint:
 *   ak_public  the attestation key's public area, either a TPM2B_PUBLIC (u16 size || TPMT_PUBLIC,
 *              as `tpm2_readpublic -f tss` writes it) or a bare TPMT_PUBLIC. When the first two
 *              bytes equal the remaining length the input is read as a TPM2B_PUBLIC.
 *   attest     the TPMS_ATTEST the TPM signed (`tpm2_quote -m`).
 *   sig        the TPMT_SIGNATURE over it (`tpm2_quote -s`).
 *   extra      the expected qualifying data: SHA-256 of the checkpoint note text.
 *
 * sv_quote_check accepts only when every one of these holds, and otherwise returns the first
 * failing check's reason (never SV_QUOTE_OK) with a message in why:
 *   - the AK is ECC NIST P-256, nameAlg SHA-256, restricted|sign|fixedTPM|fixedParent|
 *     sensitiveDataOrigin and not decrypt, symmetric NULL, scheme ECDSA-SHA256, kdf NULL,
 *     x and y at most 32 bytes and a point on the curve, no bytes after the public area;
 *   - attest magic is TPM_GENERATED_VALUE (a restricted key signs data starting with it only
 *     when the TPM made it; anything else is a forgery through TPM2_Hash + TPM2_Sign,
 *     CVE-2024-29038), type TPM_ST_ATTEST_QUOTE, qualifiedSigner the AK's qualified name as a
 *     primary of the endorsement hierarchy (where DESIGN.md 4 puts it, so clockInfo is not
 *     obfuscated), extraData == extra, PCR selection exactly the policy's (one sha256 bank),
 *     pcrDigest == SHA-256(expected values of the selected PCRs in index order) (only its
 *     length when the policy says pcr_values_unknown), no trailing bytes;
 *   - sig is ECDSA with SHA-256, r and s 1..32 bytes, no trailing bytes, and verifies with the
 *     AK over SHA-256(attest);
 *   - when the policy sets min_firmware_version, the attest's firmwareVersion is at least that
 *     (checked after the signature, so SV_QUOTE_FIRMWARE is a verdict on a genuine quote of an
 *     old TPM firmware, never on a forged number).
 * The signature is checked last so that each wrong input gets its own reason; nothing read from
 * attest is trusted (out is filled) unless the whole check returns SV_QUOTE_OK.
 *
 * Parsing is bounded: every length is checked against what is left, and any input, however
 * hostile, gives a reason rather than a crash. Thread-safe; no global state.
 */
#ifndef SV_QUOTE_H
#define SV_QUOTE_H

#include <stddef.h>
#include <stdint.h>

/* PCRs the policy can name: the 24 of a PC-client TPM. */
#define SV_QUOTE_PCR_COUNT 24
#define SV_QUOTE_NAME_LEN 34 /* TPM2B name bytes: 0x000b || SHA-256 */

enum sv_quote_reason {
    SV_QUOTE_OK = 0,
    SV_QUOTE_BAD_ARG,      /* NULL pointer or a policy selecting no PCR / PCRs above 23 */
    SV_QUOTE_AK_PARSE,     /* the public area is truncated, oversized or has trailing bytes */
    SV_QUOTE_AK_TYPE,      /* not an ECC key */
    SV_QUOTE_AK_NAMEALG,   /* nameAlg is not SHA-256 */
    SV_QUOTE_AK_ATTRS,     /* not a restricted, fixed, TPM-generated signing key */
    SV_QUOTE_AK_SCHEME,    /* symmetric/scheme/kdf not NULL/ECDSA-SHA256/NULL */
    SV_QUOTE_AK_CURVE,     /* not NIST P-256 */
    SV_QUOTE_AK_POINT,     /* x or y too long, or not a point on the curve */
    SV_QUOTE_ATTEST_PARSE, /* the TPMS_ATTEST is truncated or has trailing bytes */
    SV_QUOTE_MAGIC,        /* magic != TPM_GENERATED_VALUE: not made by the TPM (forgery) */
    SV_QUOTE_TYPE,         /* not a quote (e.g. an NV certification offered as one) */
    SV_QUOTE_SIGNER,       /* qualifiedSigner is not this AK */
    SV_QUOTE_EXTRA,        /* extraData is not the expected checkpoint hash */
    SV_QUOTE_PCR_SELECT,   /* PCR selection differs from the policy */
    SV_QUOTE_PCR_DIGEST,   /* PCR values differ from the policy's */
    SV_QUOTE_SIG_PARSE,    /* the TPMT_SIGNATURE is malformed */
    SV_QUOTE_SIG_ALG,      /* not ECDSA with SHA-256 */
    SV_QUOTE_SIG_INVALID,  /* the signature does not verify with the AK */
    SV_QUOTE_INTERNAL,     /* OpenSSL failed (allocation); not a verdict on the input */
    SV_QUOTE_FIRMWARE,     /* a genuine quote, but the TPM's firmwareVersion is below the
                              policy's floor (known firmware flaws, firmware-notes) */
};

struct sv_quote_policy {
    uint32_t pcr_mask; /* bit i set: PCR i of the sha256 bank must be selected (i < 24) */
    uint8_t pcr_values[SV_QUOTE_PCR_COUNT][32]; /* expected value of each selected PCR */
    /* Lowest acceptable TPMS_ATTEST.firmwareVersion (the vendor's 64-bit value, compared as an
     * unsigned integer); 0: no floor, so a zero-initialised policy keeps the checks above. */
    uint64_t min_firmware_version;
    /* 1: the expected PCR values are not known (a bundle file that does not show the start in
     * force, issue 13 finding 9): pcrDigest is not compared, and everything else is checked
     * (the AK, magic, type, qualifiedSigner, extraData, the selection exactly pcr_mask, the
     * signature, the firmware floor). The caller must say the PCRs were not checked. 0 (a
     * zero-initialised policy): pcrDigest is compared. */
    int pcr_values_unknown;
};

/* The clock of one quote (TPMS_CLOCK_INFO), what sv_quote_time_order compares. */
struct sv_quote_clock {
    uint64_t clock;         /* milliseconds the TPM has been powered, kept across resets */
    uint32_t reset_count;   /* TPM Resets (startup clear) since the last TPM2_Clear */
    uint32_t restart_count; /* TPM Restarts/Resumes since the last Reset */
    uint8_t safe;           /* 0: clock may have gone back (no orderly shutdown since) */
};

struct sv_quote_result {
    struct sv_quote_clock clock;
    uint64_t firmware_version;
    uint8_t ak_name[SV_QUOTE_NAME_LEN];           /* 0x000b || SHA-256(TPMT_PUBLIC) */
    uint8_t ak_qualified_name[SV_QUOTE_NAME_LEN]; /* as an endorsement-hierarchy primary */
};

/*
 * Check one quote (see the top of this file). why (capacity why_cap, may be NULL/0) gets a
 * NUL-terminated message, also on success. out is written only on SV_QUOTE_OK.
 */
enum sv_quote_reason sv_quote_check(const struct sv_quote_policy *policy, const uint8_t *ak_public,
                                    size_t ak_public_len, const uint8_t *attest, size_t attest_len,
                                    const uint8_t *sig, size_t sig_len,
                                    const uint8_t expected_extra[32], struct sv_quote_result *out,
                                    char *why, size_t why_cap);

/* A stable short name for a reason ("magic", "pcr-digest", ...), for reports. */
const char *sv_quote_reason_name(enum sv_quote_reason r);

/*
 * Parse only the AK public area (the same strict checks as sv_quote_check); on SV_QUOTE_OK
 * writes the name and qualified name. For a verifier that pins the AK by name.
 */
enum sv_quote_reason sv_quote_ak_name(const uint8_t *ak_public, size_t ak_public_len,
                                      uint8_t name[SV_QUOTE_NAME_LEN],
                                      uint8_t qualified_name[SV_QUOTE_NAME_LEN], char *why,
                                      size_t why_cap);

enum sv_quote_order {
    SV_ORDER_OK,               /* same resetCount, clock went forward */
    SV_ORDER_OK_RESET,         /* resetCount went up: the TPM was reset (rebooted) in between */
    SV_ORDER_ROLLBACK,         /* resetCount or clock went back: TPM2_Clear, a rolled-back state or
                                  another TPM */
    SV_ORDER_REPLAY,           /* the same instant: the same quote offered twice */
    SV_ORDER_RESET_CLOCK_BACK, /* resetCount went up and the next quote says safe = 1, yet its
                                  clock is below prev's: after an orderly shutdown the TPM
                                  restores Clock from NV, so this is a restored (rolled-back)
                                  TPM state or another TPM */
};

/*
 * Classify next against prev, two verified quotes of one AK in log order. *gap (may be NULL) is
 * set to 1 on SV_ORDER_OK_RESET with next.safe == 0: the TPM did not shut down in order, so its
 * clock may have lost time and quotes made before the reset may be missing ("possible gap
 * (disorderly restart)"); otherwise 0. With the same resetCount, a restartCount
 * that went back is a ROLLBACK too (it only goes down on a Reset).
 *
 * safe = 1 (TPM 2.0 Part 1, Clock: no value of Clock greater than the current one has been
 * reported) holds the clock to its order across a Reset too: the TPM saves Clock to NV at an
 * orderly shutdown (TPM2_Shutdown) and restores it at the next power-on, keeping safe; only an
 * unorderly one clears safe, and TPM2_ClockSet never moves Clock back. So a higher resetCount
 * with next.safe == 1 and next.clock < prev.clock is SV_ORDER_RESET_CLOCK_BACK (issue 13
 * finding 10: a TPM state restored from a copy, then restarted in order).
 */
enum sv_quote_order sv_quote_time_order(const struct sv_quote_clock *prev,
                                        const struct sv_quote_clock *next, int *gap);

const char *sv_quote_order_name(enum sv_quote_order o);

#endif
