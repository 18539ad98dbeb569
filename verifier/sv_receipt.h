/*
 * sv_receipt.h -- the verifier's check of a receipt (docs/formats.md section 10): a protobuf
 * sworn.v1.Receipt {key_id, signature, alg} read from sworn/receipts/, whose signature must
 * verify over TBS = FF "sworn/v1 receipt" 00 || leaf hash of the very entry it sits beside, with
 * a receipt key the auditor trusts (a `receipt-key` of the policy, or a receipt-purpose key of
 * the verified keyring that was valid at the entry's time). The receipt must be canonical
 * protobuf (as every stored message), key_id 32 bytes, signature 1..512 bytes, alg 1 (ECDSA
 * P-256) or 2 (Ed25519) and the key's own algorithm. Thread-safe once built.
 */
#ifndef SV_RECEIPT_H
#define SV_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include "sv_policy.h"
#include "sv_util.h"

struct sv_keyring_state;
struct sv_receipt_keys;

/* The receipt keys of the policy and the keyring (may be NULL). NULL when there are none. */
struct sv_receipt_keys *sv_receipt_keys_new(const struct sv_policy *p,
                                            const struct sv_keyring_state *k);
void sv_receipt_keys_free(struct sv_receipt_keys *k);

/* Verify one receipt for the entry with this leaf hash made at time_ms. 0, or -1 with code
 * (capacity 32) and why. */
int sv_receipt_verify(const struct sv_receipt_keys *k, const uint8_t *r, size_t len,
                      const uint8_t leaf[SV_HASH], uint64_t time_ms, char *code, char *why);

#endif
