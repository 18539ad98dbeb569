/*
 * sigscheme.h -- what a sworn signature is, apart from any key or device: the purposes and the
 * bytes each one covers (TBS), the algorithms and their encodings, key ids, and verification
 * with a public key. Pure OpenSSL: the engine, the keyring and the attestation code link it
 * without linking a device backend (signer.h is the signing side, and includes this).
 *
 * Purposes and what a signature covers. Every signature names its purpose, and the bytes it
 * covers (the "to-be-signed" bytes, TBS) make a signature of one purpose useless for another:
 *     SWORN_PURPOSE_CHECKPOINT  msg is a C2SP checkpoint body (checkpoint.h), checked before
 *                               signing; TBS = msg. This keeps HSM and TPM checkpoint signatures
 *                               standard C2SP note signatures (type 0x02: ECDSA-SHA256 over the
 *                               note text).
 *     SWORN_PURPOSE_RECEIPT     msg is a 32-byte digest; TBS = "\xffsworn/v1 receipt\0" || msg
 *     SWORN_PURPOSE_KEY_EVENT   msg is a 32-byte digest; TBS = "\xffsworn/v1 key-event\0" || msg
 *     SWORN_PURPOSE_HTTP_MESSAGE msg is an RFC 9421 signature base (httpsig/sig_base.h), checked
 *                               for its shape before signing (sworn_sigbase_check_shape: starts
 *                               with "\"@", last line "\"@signature-params\": ...", no LF at the
 *                               end, no NUL, CR or 0xFF); TBS = msg. The signature is then an
 *                               RFC 9421 signature (ECDSA P-256: section 3.3.4 once converted to
 *                               r||s), so one signature serves as receipt and upstream header.
 *     SWORN_PURPOSE_BATCH       msg is u32 big-endian group size (1..256) || a 32-byte Merkle
 *                               root, 36 bytes, checked before signing;
 *                               TBS = "\xffsworn/v1 batch\0" || msg. One signature over the root
 *                               of a commit group's tree of items: each item's batch receipt
 *                               is that signature plus the item's inclusion path
 *                               (docs/formats.md section 14).
 *     SWORN_PURPOSE_COSIGNATURE msg is "cosignature/v1\ntime <decimal>\n" || a checkpoint body
 *                               (the time canonical decimal, the body checked with checkpoint.h,
 *                               at most SWORN_SIGNER_CHECKPOINT_MAX bytes); TBS = msg. With an
 *                               Ed25519 key only (refused for any other): the signature is then
 *                               a standard C2SP tlog-cosignature/v1 signature (note type 0x04),
 *                               as the witness (witness/) makes it.
 *     SWORN_PURPOSE_REPORT      msg is a 32-byte digest (SHA-256 of a ConformanceReport entry's
 *                               fields 1..4, docs/formats.md section 15);
 *                               TBS = "\xffsworn/v1 conformance-report\0" || msg
 * The prefixes start with 0xFF, which is never valid UTF-8, and contain NUL, so no TBS of one
 * purpose is ever a valid checkpoint body (valid UTF-8 without NUL) or the TBS of another purpose.
 * A base has neither 0xFF nor NUL (so it is no receipt or key-event TBS) and does not end with LF
 * (a checkpoint body always does), so no base is another purpose's TBS either.
 * A cosignature TBS has neither 0xFF nor NUL either, ends with LF (so it is no base), and is never
 * a checkpoint body: its second line, "time <decimal>", is not a canonical decimal size. A
 * checkpoint body is never a cosignature TBS: its second line is a bare decimal, never
 * "time ...". (C2SP chose the "cosignature/v1" header for the same reason: a cosignature never
 * verifies as a log's signature of another text, even under the same key.)
 *
 * Signature encodings: ECDSA P-256 with SHA-256 over the TBS, DER-encoded (what note type 0x02
 * and openssl use); Ed25519 over the TBS, 64 bytes; RSA-PSS with SHA-256, MGF1-SHA-256 and a
 * 32-byte salt over the TBS. Keys are identified by their key id: SHA-256 of their DER
 * SubjectPublicKeyInfo.
 *
 * Errors: -1 with sworn_err set (err.h). Thread safety: no shared state.
 */
#ifndef SWORN_SIGSCHEME_H
#define SWORN_SIGSCHEME_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_KEY_ID_LEN 32              /* SHA-256 of the DER SubjectPublicKeyInfo */
#define SWORN_SIGNER_SPKI_MAX 1024       /* RSA-4096 SPKIs are about 550 bytes */
#define SWORN_SIGNER_SIG_MAX 512         /* RSA-4096 signatures; DER ECDSA P-256 is at most 72 */
#define SWORN_SIGNER_MSG_MAX 16384       /* the largest msg of any purpose (an http-message base) */
#define SWORN_SIGNER_CHECKPOINT_MAX 4096 /* a checkpoint body */
#define SWORN_SIGNER_TBS_MAX (SWORN_SIGNER_MSG_MAX + 32)

enum sworn_sign_purpose {
    SWORN_PURPOSE_CHECKPOINT = 1,
    SWORN_PURPOSE_RECEIPT = 2,
    SWORN_PURPOSE_KEY_EVENT = 3,
    SWORN_PURPOSE_HTTP_MESSAGE = 4,
    SWORN_PURPOSE_BATCH = 5,
    SWORN_PURPOSE_COSIGNATURE = 6,
    SWORN_PURPOSE_REPORT = 7
};

#define SWORN_COSIGNATURE_HEADER "cosignature/v1\n" /* purpose 6's first line */
/* purpose 6's msg: the header, "time " and 20 digits and LF, and a checkpoint body */
#define SWORN_COSIGNATURE_MSG_MAX (15 + 26 + SWORN_SIGNER_CHECKPOINT_MAX)

#define SWORN_BATCH_ITEMS_MAX 256 /* items under one batch signature (purpose 5's group size) */
#define SWORN_BATCH_MSG_LEN 36    /* purpose 5's msg: u32 group size || root */

/* Whether purpose is one of enum sworn_sign_purpose's (a number from a caller or a frame may be
 * any). Returns 1 or 0. */
int sworn_sign_purpose_known(unsigned purpose);

enum sworn_sig_alg {
    SWORN_SIG_ECDSA_P256_SHA256 = 1,
    SWORN_SIG_ED25519 = 2,
    SWORN_SIG_RSA_PSS_SHA256 = 3
};

/*
 * The TBS bytes of a purpose for msg (rules above), into out (capacity SWORN_SIGNER_TBS_MAX).
 * OUT: *out_len. Returns 0, or -1 (SWORN_ERR_FORMAT: msg is not of its purpose's form).
 */
int sworn_signer_tbs(enum sworn_sign_purpose purpose, const uint8_t *msg, size_t len, uint8_t *out,
                     size_t *out_len);

/*
 * Verify a signature made by sworn_signer_sign with the key of the DER SPKI (its algorithm is
 * taken from the key: EC P-256 is ECDSA-SHA256, Ed25519, RSA is RSA-PSS-SHA256; purpose 6 only
 * with an Ed25519 key).
 * Returns 0 when it verifies; -1 otherwise (SWORN_ERR_VERIFY, SWORN_ERR_FORMAT).
 */
int sworn_signature_verify(const uint8_t *spki, size_t spki_len, enum sworn_sign_purpose purpose,
                           const uint8_t *msg, size_t len, const uint8_t *sig, size_t sig_len);

/*
 * Encode an ECDSA signature given as r and s (big-endian, each at most 32 bytes; leading zeros
 * allowed) as DER ECDSA-Sig-Value into out (capacity cap). OUT: *len. Returns 0 or -1.
 */
int sworn_ecdsa_rs_to_der(const uint8_t *r, size_t r_len, const uint8_t *s, size_t s_len,
                          uint8_t *out, size_t cap, size_t *len);

/*
 * Build the DER SPKI of a P-256 public key given as an uncompressed point (0x04 || X || Y,
 * 65 bytes) into out (capacity cap). OUT: *len. Returns 0 or -1.
 */
int sworn_p256_spki_from_point(const uint8_t point[65], uint8_t *out, size_t cap, size_t *len);

#endif
