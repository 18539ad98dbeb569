/*
 * tpmattest.h -- the TPM side of attestation (DESIGN.md section 4, "Quote"): the attestation
 * key (AK), the measured-start PCR, quotes, and the endorsement key certificate.
 *
 * The AK is a restricted ECDSA P-256 / SHA-256 signing key created as a PRIMARY in the
 * endorsement hierarchy from a fixed template (sworn_tpm_ak_create). A primary is derived from
 * the hierarchy's seed and the template, so every start re-creates the same key without
 * persisting anything, and quotes by a key of the endorsement hierarchy carry clockInfo and
 * firmwareVersion unobfuscated (the owner and null hierarchies obfuscate reset and restart
 * counters). Restricted means the key signs only structures the TPM made itself (quotes,
 * certifications) or digests the TPM hashed and found not to start with TPM_GENERATED_VALUE.
 *
 * Quotes are stored as the raw marshalled TPMS_ATTEST (exactly the bytes the TPM hashed and
 * signed) and the marshalled TPMT_SIGNATURE, so a verifier needs only OpenSSL.
 *
 * All calls are synchronous and run on the caller's thread, with no watchdog: these are
 * one-shot operator and start-up steps (sworn-tpm), where a hung TPM hangs the command, which
 * the operator sees. The signer backend (tpm2.c) is the one that must survive a hung TPM.
 *
 * Credential activation (TPM 2.0 Part 1, section 24, "Credential Protection") lets an auditor
 * bind the AK to the EK without trusting the operator: the auditor, offline, encrypts a secret
 * to the EK's public key bound to the AK's name (sworn_tpm_make_credential); only the TPM that
 * holds that EK's private key AND has a loaded object with that name recovers the secret
 * (sworn_tpm_activate_credential). The EK is the RSA-2048 one of the TCG EK Credential Profile
 * (template L-1), the key swtpm_setup --createek and most TPMs certify.
 *
 * Errors: -1 with sworn_err set; TSS failures carry the decoded response code. Not thread-safe
 * per context; separate contexts are independent.
 */
#ifndef SWORN_TPMATTEST_H
#define SWORN_TPMATTEST_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_TPM_DIGEST_LEN 32
/* A TPM name with nameAlg SHA-256: the algorithm id 0x000b, then SHA-256(marshalled TPMT_PUBLIC).
 */
#define SWORN_TPM_NAME_LEN (2 + SWORN_TPM_DIGEST_LEN)
/* Upper bounds of the marshalled structures (sizeof of the unmarshalled TSS structures). */
#define SWORN_TPM_PUBLIC_MAX 1024
#define SWORN_TPM_SPKI_MAX 128
/* PCR 23: the application PCR that decisiond extends at start (resettable, debug locality 0). */
#define SWORN_TPM_MEASURE_PCR 23u
/* A credential is a TPM2B_DIGEST no longer than the EK's nameAlg digest (SHA-256). */
#define SWORN_TPM_CREDENTIAL_MAX SWORN_TPM_DIGEST_LEN
/*
 * The credential file, the layout tpm2_makecredential writes and tpm2_activatecredential reads
 * (tpm2-tools 5): u32 BE magic 0xBADCC0DE, u32 BE version 1, the marshalled TPM2B_ID_OBJECT
 * (credentialBlob), the marshalled TPM2B_ENCRYPTED_SECRET (the seed under the EK).
 */
#define SWORN_TPM_CRED_MAGIC 0xBADCC0DEu
#define SWORN_TPM_CRED_VERSION 1u

struct sworn_tpm; /* an open TCTI and ESYS context */

/* The attestation key: a transient handle while the context is open, and its public forms. */
struct sworn_tpm_ak {
    uint32_t handle;                   /* ESYS_TR of the loaded primary; freed by ak_flush */
    uint8_t pub[SWORN_TPM_PUBLIC_MAX]; /* marshalled TPM2B_PUBLIC (tpm2-tools' -u form) */
    size_t pub_len;                    /* bytes used in pub */
    uint8_t name[SWORN_TPM_NAME_LEN];  /* the TPM name, which quotes name as their signer */
    uint8_t spki[SWORN_TPM_SPKI_MAX];  /* DER SubjectPublicKeyInfo of the P-256 key */
    size_t spki_len;                   /* bytes used in spki */
};

/*
 * Open the TCTI named by a tpm2-tss configuration string ("device:/dev/tpmrm0",
 * "swtpm:host=127.0.0.1,port=2321", ...) and an ESYS context on it. OUT: *out, closed with
 * sworn_tpm_close. Errors: SWORN_ERR_IO when the TPM cannot be reached.
 */
int sworn_tpm_open(const char *tcti, struct sworn_tpm **out);

/* Close a context from sworn_tpm_open; flushes nothing (flush the AK first). t may be NULL. */
void sworn_tpm_close(struct sworn_tpm *t);

/*
 * Create the AK (template in the file comment) under the endorsement hierarchy, authorized by
 * the empty endorsement password, and fill ak. The same TPM always yields the same key (until its
 * endorsement seed changes, e.g. by TPM2_ChangeEPS). The key occupies one transient slot until
 * sworn_tpm_ak_flush. Checks that what the TPM returned is the template's kind of key.
 */
int sworn_tpm_ak_create(struct sworn_tpm *t, struct sworn_tpm_ak *ak);

/* Flush the AK's transient handle (errors ignored: the context may be dead already). */
void sworn_tpm_ak_flush(struct sworn_tpm *t, struct sworn_tpm_ak *ak);

/* Extend SHA-256 bank PCR pcr (0..23) with digest: PCR = SHA-256(PCR || digest). */
int sworn_tpm_pcr_extend(struct sworn_tpm *t, unsigned pcr, const uint8_t digest[32]);

/* Read the SHA-256 bank value of PCR pcr (0..23) into out. */
int sworn_tpm_pcr_read(struct sworn_tpm *t, unsigned pcr, uint8_t out[32]);

/*
 * Quote the SHA-256 bank PCRs set in pcr_mask (bit i = PCR i, PCRs 0..23; non-zero) with the
 * AK and qualifying data qual (32 bytes, becomes the attest's extraData). OUT: *attest (malloc,
 * the marshalled TPMS_ATTEST, *attest_len bytes) and *sig (malloc, the marshalled TPMT_SIGNATURE,
 * *sig_len bytes); the caller frees both. Both are NULL on error.
 */
int sworn_tpm_quote(struct sworn_tpm *t, const struct sworn_tpm_ak *ak, const uint8_t qual[32],
                    uint32_t pcr_mask, uint8_t **attest, size_t *attest_len, uint8_t **sig,
                    size_t *sig_len);

/*
 * Read the endorsement key certificate (DER) from the TCG-defined NV indices, trying the ECC
 * ones first (0x01c0000a P-256, 0x01c00014 P-256 high range, 0x01c00016 P-384), then RSA-2048
 * (0x01c00002), with owner authorization (empty password). OUT: *der (malloc, *der_len bytes;
 * caller frees). Errors: SWORN_ERR_NOTFOUND when no index is defined (software TPMs without
 * --create-ek-cert, some firmware TPMs that fetch certificates online).
 */
int sworn_tpm_read_ek_cert(struct sworn_tpm *t, uint8_t **der, size_t *der_len);

/*
 * Create the RSA-2048 EK primary from the TCG standard template L-1 (endorsement hierarchy,
 * empty endorsement password). OUT: *handle (an ESYS_TR, one transient slot until
 * sworn_tpm_flush) and pub: the marshalled TPM2B_PUBLIC (tpm2_createek -u form), *pub_len bytes
 * (pub holds SWORN_TPM_PUBLIC_MAX). Same TPM, same key.
 */
int sworn_tpm_ek_create(struct sworn_tpm *t, uint32_t *handle, uint8_t *pub, size_t *pub_len);

/* Flush a transient object handle (errors ignored); *handle becomes ESYS_TR_NONE. */
void sworn_tpm_flush(struct sworn_tpm *t, uint32_t *handle);

/*
 * TPM2_MakeCredential in software, needing no TPM: protect secret (1..SWORN_TPM_CREDENTIAL_MAX
 * bytes) for the object named name (a SHA-256 TPM name, SWORN_TPM_NAME_LEN bytes) under the EK
 * whose marshalled TPM2B_PUBLIC is ek_pub (RSA-2048, nameAlg SHA-256, AES-128-CFB, restricted
 * decrypt). OUT: *out (malloc, the credential file of SWORN_TPM_CRED_MAGIC, *out_len bytes).
 * Errors: SWORN_ERR_FORMAT / SWORN_ERR_RANGE for an EK or name or secret we do not handle.
 */
int sworn_tpm_make_credential(const uint8_t *ek_pub, size_t ek_pub_len, const uint8_t *name,
                              size_t name_len, const uint8_t *secret, size_t secret_len,
                              uint8_t **out, size_t *out_len);

/*
 * TPM2_ActivateCredential: recover the secret of a credential file (as sworn_tpm_make_credential
 * writes) with the loaded AK (password authorization) and the EK ek (sworn_tpm_ek_create; its
 * policy, PolicySecret(endorsement), is satisfied here). OUT: secret (holds
 * SWORN_TPM_CREDENTIAL_MAX), *secret_len. Errors: SWORN_ERR_FORMAT for a malformed file;
 * SWORN_ERR_CRYPTO when the TPM refuses (another EK, another AK name, a tampered blob).
 */
int sworn_tpm_activate_credential(struct sworn_tpm *t, const struct sworn_tpm_ak *ak, uint32_t ek,
                                  const uint8_t *cred, size_t cred_len,
                                  uint8_t secret[SWORN_TPM_CREDENTIAL_MAX], size_t *secret_len);

#endif
