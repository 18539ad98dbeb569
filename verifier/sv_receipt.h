/*
 * sv_receipt.h -- the verifier's check of a receipt (docs/formats.md section 10): a protobuf
 * sworn.v1.Receipt {key_id, signature, alg} read from sworn/receipts/, whose signature must
 * verify over TBS = FF "sworn/v1 receipt" 00 || leaf hash of the very entry it sits beside, with
 * a receipt key the auditor trusts (a `receipt-key` of the policy, or a receipt-purpose key of
 * the verified keyring that was valid at the entry's time). The receipt must be canonical
 * protobuf (as every stored message), key_id 32 bytes, signature 1..512 bytes, alg 1 (ECDSA
 * P-256) or 2 (Ed25519) and the key's own algorithm. Thread-safe once built.
 * Forms: 0 as above; 1 an http-message receipt (section 13: sworn's RFC 9421 base rebuilt from
 * the entry); 2 a batch receipt (section 14: SHA-256(00 || leaf hash) walked up its inclusion
 * path to a root, and the one signature of its group over FF "sworn/v1 batch" 00 || u32 size ||
 * root). Batch fields in another form, or a path of the wrong length: receipt-malformed.
 */
#ifndef SV_RECEIPT_H
#define SV_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include "sv_entry.h"
#include "sv_policy.h"
#include "sv_util.h"

struct sv_keyring_state;
struct sv_receipt_keys;

/* The receipt keys of the policy and the keyring (may be NULL). NULL when there are none. */
struct sv_receipt_keys *sv_receipt_keys_new(const struct sv_policy *p,
                                            const struct sv_keyring_state *k);
void sv_receipt_keys_free(struct sv_receipt_keys *k);

/*
 * Verify one receipt for the entry with this leaf hash made at time_ms. http is what the allow
 * decided (the decision's own request, or for an EscalationResolved allow the escalated
 * request), or NULL / not present when it has no method or no http, https, ws or wss resource.
 *   form 0 (digest receipt): as above, whatever http says (records written before issue 16
 *     hold only these; a digest receipt is as much a signature of the entry as form 1).
 *   form 1 (http-message receipt, docs/formats.md section 13): only for an http request, else
 *     receipt-form; alg 1 with a P-256 key, a 64-byte r||s, created = time_ms / 1000
 *     (receipt-created otherwise); the verifier rebuilds sworn's RFC 9421 base from http, the
 *     leaf hash, created and the receipt's key id, and signature_params must be exactly the
 *     rebuilt @signature-params value (receipt-params); then the signature must verify over the
 *     rebuilt base (receipt-invalid).
 * 0, or -1 with code (capacity 32) and why.
 */
int sv_receipt_verify(const struct sv_receipt_keys *k, const uint8_t *r, size_t len,
                      const uint8_t leaf[SV_HASH], uint64_t time_ms, const struct sv_http_req *http,
                      char *code, char *why);

/* Verify an RFC 9421 ecdsa-p256-sha256 signature (r||s, section 3.3.4: sig_len must be 64) over
 * msg with a P-256 key. 1 valid, 0 not. */
int sv_httpsig_verify_p256(struct evp_pkey_st *pkey, const uint8_t *msg, size_t msg_len,
                           const uint8_t *sig, size_t sig_len);

#endif
