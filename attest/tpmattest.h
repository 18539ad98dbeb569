/*
 * tpmattest.h -- the TPM side of attestation (DESIGN.md section 4, "Quote"): the attestation
 * key (AK), the measured-start PCR, quotes, and the endorsement key certificate.
 *
 * The AK is a restricted ECDSA P-256 / SHA-256 signing key created as a PRIMARY in the
 * endorsement hierarchy from a fixed template (sworn_tpm_ak_create). A primary is derived from
 * the hierarchy's seed and the template, so the same TPM always gives the same key, and quotes
 * by a key of the endorsement hierarchy carry clockInfo and firmwareVersion unobfuscated (the
 * owner and null hierarchies obfuscate reset and restart counters). Restricted means the key
 * signs only structures the TPM made itself (quotes, certifications) or digests the TPM hashed
 * and found not to start with TPM_GENERATED_VALUE.
 *
 * A long-running user (decisiond) keeps the AK PERSISTENT at a fixed handle (sworn_tpm_ak_open),
 * never as a transient object: without a resource manager (swtpm, mssim, a raw /dev/tpm0) a
 * transient object outlives the process that made it, so each crash of a daemon holding a
 * transient AK left one behind, and after three the TPM (three slots on swtpm) refused every
 * CreatePrimary (TPM_RC_OBJECT_MEMORY) and quoting stopped. A persistent object is the TPM's
 * own, named by its handle, and holds an object slot only during a command that uses it: a
 * process that dies leaves nothing behind. sworn_tpm_ak_create's transient AK is for one-shot
 * commands (sworn-tpm).
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
 * (sworn_tpm_activate_credential). The EK is either the RSA-2048 one of the TCG EK Credential
 * Profile (template L-1) or its ECC NIST P-256 one (template L-2), the keys swtpm_setup
 * --createek and most TPMs certify. An RSA EK with the ROCA fingerprint (CVE-2017-15361,
 * common/roca.h) is refused: it is factorable from its public key, so a credential made for it
 * proves nothing.
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

/* The two EK kinds of credential activation. */
enum sworn_tpm_ek_alg {
    SWORN_TPM_EK_RSA = 1, /* RSA-2048, template L-1: the seed is RSA-OAEP encrypted */
    SWORN_TPM_EK_ECC = 2, /* NIST P-256, template L-2: the seed is agreed by ECDH (KDFe) */
};

/* The attestation key: its ESYS_TR while the context is open, and its public forms. */
struct sworn_tpm_ak {
    uint32_t handle;                   /* ESYS_TR of the loaded primary; freed by ak_flush */
    int persistent;                    /* 1: from sworn_tpm_ak_open, at a persistent handle */
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

/*
 * Release the AK: a transient one (sworn_tpm_ak_create) is flushed from the TPM; of a persistent
 * one (sworn_tpm_ak_open) only ESYS's record goes, the key stays in the TPM. Errors ignored (the
 * context may be dead already).
 */
void sworn_tpm_ak_flush(struct sworn_tpm *t, struct sworn_tpm_ak *ak);

/*
 * The persistent AK's handle (tpm.ak_handle): in the owner's persistent range, which
 * EvictControl fills with owner authorization. The default, 0x8153574E ("\x81SWN"), lies far
 * from the handles TCG conventions give other keys (SRK 0x81000001, EKs 0x81010001 and up,
 * IAK/IDevID 0x81020000 and up) and from the platform range (0x81800000 and up).
 */
#define SWORN_TPM_AK_HANDLE_DEFAULT 0x8153574Eu
#define SWORN_TPM_AK_HANDLE_FIRST 0x81000000u
#define SWORN_TPM_AK_HANDLE_LAST 0x817FFFFFu

/* How sworn_tpm_ak_open found the AK. */
enum sworn_tpm_ak_how {
    SWORN_TPM_AK_FOUND = 1,     /* at the handle, and the template's primary has its name */
    SWORN_TPM_AK_PERSISTED = 2, /* the handle was empty: created and persisted there now */
};

/*
 * Open the AK persisted at handle (SWORN_TPM_AK_HANDLE_FIRST..LAST), or create it and persist it
 * there (TPM2_EvictControl, owner hierarchy, empty owner password) when the handle is empty.
 * What is at the handle must be ours, or it is refused and left untouched (never evicted,
 * never used):
 *   - its public area is the template's (type, nameAlg, attributes, empty authPolicy, scheme,
 *     curve, no symmetric part, no KDF), the point aside;
 *   - the name and qualified name the TPM reports (TPM2_ReadPublic) are those of that public
 *     area as a primary of the endorsement hierarchy;
 *   - the template's primary, made again now (one transient object, flushed at once), has the
 *     same name: only the template with its empty unique gives that key.
 * Using a persistent object takes a free object slot for the time of each command (swtpm
 * answers TPM2_ReadPublic of one with TPM_RC_OBJECT_MEMORY when every slot is held), so a TPM
 * whose slots other programs hold can neither read nor quote the AK (an error that says so);
 * what the persistent AK guarantees is that sworn itself never holds a slot between commands,
 * so its crashes never take one.
 * OUT: ak (ak->persistent = 1; release with sworn_tpm_ak_flush, which leaves the key in the TPM),
 * *how. No TPM session is started. Errors: SWORN_ERR_ARG for a handle outside the range;
 * SWORN_ERR_VERIFY when the object at the handle is not sworn's AK; SWORN_ERR_CRYPTO / _IO from
 * the TPM (e.g. an owner password is set: persist the AK yourself, docs/decisiond.md section 6).
 */
int sworn_tpm_ak_open(struct sworn_tpm *t, uint32_t handle, struct sworn_tpm_ak *ak,
                      enum sworn_tpm_ak_how *how);

/* Extend SHA-256 bank PCR pcr (0..23) with digest: PCR = SHA-256(PCR || digest). */
int sworn_tpm_pcr_extend(struct sworn_tpm *t, unsigned pcr, const uint8_t digest[32]);

/* Read the SHA-256 bank value of PCR pcr (0..23) into out. */
int sworn_tpm_pcr_read(struct sworn_tpm *t, unsigned pcr, uint8_t out[32]);

/*
 * Quote the SHA-256 bank PCRs set in pcr_mask (bit i = PCR i, PCRs 0..23; non-zero) with the
 * AK and qualifying data qual (32 bytes, becomes the attest's extraData). OUT: *attest (malloc,
 * the marshalled TPMS_ATTEST, *attest_len bytes) and *sig (malloc, the marshalled TPMT_SIGNATURE,
 * *sig_len bytes); the caller frees both. Both are NULL on error. Before it is returned the quote
 * is checked to be the AK's (a quote attest naming the AK as an endorsement primary and qual,
 * signed with the AK's key): SWORN_ERR_VERIFY otherwise, e.g. when another object was put at a
 * persistent AK's handle since it was opened (the TPM signs with whatever sits there).
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

/* The same for the ECC P-256 EK of template L-2 (tpm2_createek -G ecc -u form). */
int sworn_tpm_ek_create_ecc(struct sworn_tpm *t, uint32_t *handle, uint8_t *pub, size_t *pub_len);

/* Flush a transient object handle (errors ignored); *handle becomes ESYS_TR_NONE. */
void sworn_tpm_flush(struct sworn_tpm *t, uint32_t *handle);

/*
 * TPM2_MakeCredential in software, needing no TPM: protect secret (1..SWORN_TPM_CREDENTIAL_MAX
 * bytes) for the object named name (a SHA-256 TPM name, SWORN_TPM_NAME_LEN bytes) under the EK
 * whose marshalled TPM2B_PUBLIC is ek_pub (RSA-2048 or ECC P-256 with the point on the curve;
 * nameAlg SHA-256, AES-128-CFB, restricted decrypt). The seed is RSA-OAEP(SHA-256, "IDENTITY")
 * encrypted for an RSA EK, and for an ECC EK agreed by one-pass ECDH with a fresh ephemeral key
 * (TPM 2.0 Part 1, Annex C.6.4): seed = KDFe(SHA-256, Z, "IDENTITY", x(ephemeral), x(EK)), the
 * encrypted seed being the ephemeral point (TPMS_ECC_POINT). OUT: *out (malloc, the credential
 * file of SWORN_TPM_CRED_MAGIC, *out_len bytes). Errors: SWORN_ERR_FORMAT / SWORN_ERR_RANGE for
 * an EK or name or secret we do not handle; SWORN_ERR_VERIFY for an RSA EK with the ROCA
 * fingerprint.
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

/*
 * Which EK a credential file was made for: SWORN_TPM_EK_RSA when its encrypted seed is 256
 * bytes, SWORN_TPM_EK_ECC when it is a marshalled P-256 TPMS_ECC_POINT; -1 (SWORN_ERR_FORMAT)
 * for a malformed file or another seed. Parses only, no crypto.
 */
int sworn_tpm_credential_ek_alg(const uint8_t *cred, size_t cred_len);

/*
 * Check an endorsement key certificate (DER, as the TPM's NV holds it, or PEM) against trust
 * anchors: ca_files (n_ca >= 1 files of PEM certificates, or one DER certificate each) are all
 * trusted, so give the vendor's root and its intermediate CAs. The chain must verify with
 * OpenSSL's X509_verify_cert at the current time, with one narrow exception: a critical
 * extension OpenSSL does not handle is accepted on the EK certificate itself (never on a CA)
 * only when it is the TCG's subjectAltName (2.5.29.17) or subjectDirectoryAttributes (2.5.29.9),
 * which the TCG EK Credential Profile puts there (with the TPM's manufacturer, model and
 * version) and which OpenSSL versions differ in handling. An RSA certificate key with the ROCA
 * fingerprint is refused. When ek_pub is not NULL (a marshalled TPM2B_PUBLIC of an EK we handle,
 * RSA-2048 or ECC P-256), the certificate's public key must be that key.
 * Errors: SWORN_ERR_FORMAT / _IO for unreadable inputs; SWORN_ERR_VERIFY when the chain does
 * not verify, the key differs or has the ROCA fingerprint.
 */
int sworn_tpm_ek_cert_verify(const uint8_t *cert, size_t cert_len, const char *const *ca_files,
                             size_t n_ca, const uint8_t *ek_pub, size_t ek_pub_len);

/* What a TPM says about itself (TPM2_GetCapability, TPM_CAP_TPM_PROPERTIES). Self-reported: a
 * record for the operator, not evidence (the quote's signed firmwareVersion is). */
#define SWORN_TPM_MANUFACTURER_LEN 4 /* TPM_PT_MANUFACTURER: 4 ASCII bytes */
struct sworn_tpm_info {
    uint32_t manufacturer; /* TPM_PT_MANUFACTURER: 4 ASCII bytes, e.g. "IBM ", "IFX " */
    /* The same up to a NUL, as a C string; other non-printable bytes as '?'. */
    char manufacturer_text[SWORN_TPM_MANUFACTURER_LEN + 1];
    uint32_t firmware_version_1; /* TPM_PT_FIRMWARE_VERSION_1 (high 32 bits) */
    uint32_t firmware_version_2; /* TPM_PT_FIRMWARE_VERSION_2 (low 32 bits) */
    uint64_t firmware_version;   /* (v1 << 32) | v2: the value quotes carry as firmwareVersion */
};

/* Read the properties above. Errors: SWORN_ERR_IO / _CRYPTO from the TPM, _FORMAT when the TPM
 * leaves one of them out. */
int sworn_tpm_get_info(struct sworn_tpm *t, struct sworn_tpm_info *info);

/*
 * Quote rate limit (TPM-Fail, CVE-2019-11090 / CVE-2019-16863; firmware-notes section 4): every
 * ECDSA signature the TPM makes is one timing sample for a lattice attack on the AK, so decisiond
 * quotes at most once per min_interval_ms, never per request. Zero-initialise, then set
 * min_interval_ms (0: no limit). Not thread-safe: one owner (decisiond's checkpoint timer).
 */
struct sworn_quote_limiter {
    uint64_t min_interval_ms; /* the least time between two quotes */
    uint64_t last_ms;         /* when the last allowed quote was taken (valid when have_last) */
    int have_last;            /* 0 until the first quote */
};

/*
 * Returns 1 when a quote may be made at now_monotonic_ms (CLOCK_MONOTONIC, in ms) and records
 * it; 0 when it must wait (less than min_interval_ms since the last one, or a clock that went
 * back before the last one, which a monotonic clock never does: refusing is the safe side). l
 * must not be NULL.
 */
int sworn_quote_limiter_take(struct sworn_quote_limiter *l, uint64_t now_monotonic_ms);

#endif
