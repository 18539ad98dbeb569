/*
 * d_record.h -- building entries and appending them, with their receipts, to the log; and the
 * record of refused frames and peers. The bottom of the decision path: it calls no other part of
 * the daemon but the worker queue (d_workq.h) and the metrics.
 *
 * Thread safety: d_entry_pack, d_record_receipt and d_record_append run on any thread (workers,
 * start-up); d_record_refused and d_record_refusals_* run on the loop thread only (the quotas and
 * the dropped counts are the daemon struct's, d_refusals.h).
 */
#ifndef SWORN_D_RECORD_H
#define SWORN_D_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"

struct d_daemon;
struct sworn_resource_canonical; /* policy/resource.h */

/* The two sockets; also the index of metrics.refused[]. */
enum d_channel { D_CHANNEL_DECISION = 0, D_CHANNEL_ADMIN = 1 };

/* Pack an Entry (checked by frame.c) into a new buffer. OUT: *out (free it), *len. 0 or -1. */
int d_entry_pack(const Sworn__V1__Entry *e, uint8_t **out, size_t *len);

/*
 * Text of the record (a Refused message, a PolicyLoaded error, an ErrorFrame message) made safe
 * to store and to show: an unsafe character written \uXXXX and a byte that is not UTF-8 \ufffd
 * (sworn_utf8_escape's JSON mode, common/utf8.h), the rest as it is; cut to cap - 1 bytes at a
 * character, never inside one. out always ends in NUL.
 */
void d_record_clean_text(const char *in, char *out, size_t cap);

/* Pack a PolicyLoaded entry (error NULL or "" for a policy that took effect). 0 or -1. */
int d_policy_entry(const char *source, const uint8_t digest[32], uint64_t version,
                   const char *error, uint8_t **out, size_t *len);

/*
 * The receipt of an allow of req recorded at time_ms whose entry has the leaf hash leaf, packed
 * as a Receipt message into out (SWORN_LOG_RECEIPT_MAX bytes). OUT: *len.
 *   - An http-message receipt (form 1, docs/formats.md section 13) when req has a method and an
 *     http, https, ws or wss canonical resource and the key is ECDSA P-256: decisiond builds
 *     sworn's RFC 9421 signature base (httpsig/sig_base.h) from the request it decided (method,
 *     canonical resource, Context.body_sha256) and leaf, with created = time_ms / 1000 and keyid
 *     = the key id in hex, has the signer sign it for purpose HTTP_MESSAGE, and stores r||s, the
 *     created time and the @signature-params value. The proxy sends exactly that upstream, so
 *     the signer never signs bytes the proxy chose.
 *   - Otherwise a digest receipt (form 0): purpose RECEIPT over leaf.
 * canon is the canonical form of exactly req->resource (policy/resource.h), made once for the
 * decision by its caller and only read here; one made from another resource is an error (-1).
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_IO when the signer failed): the caller records
 * a deny instead.
 */
int d_record_receipt(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                     const struct sworn_resource_canonical *canon, uint64_t time_ms,
                     const uint8_t leaf[32], uint8_t *out, size_t *len);

/*
 * Batch receipts (docs/formats.md section 14). d_record_batch_sign: have the signer sign, once,
 * the root of a commit group's tree of n items (purpose BATCH over u32 n || root). OUT: sig
 * (SWORN_SIGNER_SIG_MAX bytes of room), *sig_len. 0, or -1 with sworn_err set (SWORN_ERR_IO when
 * the signer failed): the caller records the group's allows as denies.
 * d_record_batch_receipt: the receipt of item index of that group: form 2 (a batch digest
 * receipt) or 3 (a batch http-message receipt: the signature as r||s, created = time_ms / 1000 and
 * the base's params), the signature, the index, n and the item's inclusion path (path_n hashes),
 * packed into out (SWORN_LOG_RECEIPT_MAX bytes). OUT: *len. 0 or -1.
 */
int d_record_batch_sign(struct d_daemon *d, uint32_t n, const uint8_t root[32], uint8_t *sig,
                        size_t *sig_len);
int d_record_batch_receipt(struct d_daemon *d, unsigned form, const char *params, uint64_t time_ms,
                           const uint8_t *sig, size_t sig_len, uint32_t index, uint32_t n,
                           const uint8_t (*path)[32], size_t path_n, uint8_t *out, size_t *len);

/*
 * The item of an allow of req recorded at time_ms with leaf hash leaf in its group's tree
 * (docs/formats.md section 14): for a request that would get an http-message receipt in
 * per-request mode (a method, an http, https, ws or wss resource, a P-256 key), SHA-256 of
 * sworn's RFC 9421 base of it (section 13, created = time_ms / 1000), *form 3 and its params text
 * into params (params_cap bytes); else the leaf hash itself, *form 2 and params "". canon as for
 * d_record_receipt. 0, or -1 with sworn_err set (a base out of its bounds, a canon of another
 * resource: the allow becomes a deny).
 */
int d_record_batch_item(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                        const struct sworn_resource_canonical *canon, uint64_t time_ms,
                        const uint8_t leaf[32], uint8_t item[32], unsigned *form, char *params,
                        size_t params_cap);

/*
 * Append n packed entries, each with its packed receipt (or NULL), in ONE durable transaction:
 * a batch-receipt commit group. OUT: *first_index (the others follow). 0, or -1 when nothing of
 * them was recorded.
 */
int d_record_append_group(struct d_daemon *d, const uint8_t *const *entries, const size_t *lens,
                          const uint8_t *const *receipts, const size_t *receipt_lens, size_t n,
                          uint64_t *first_index);

/*
 * Append one packed entry, with its packed receipt (or NULL), in one durable transaction.
 * OUT: *index. Returns 0, or -1 when nothing was recorded.
 */
int d_record_append(struct d_daemon *d, const uint8_t *entry, size_t len, const uint8_t *receipt,
                    size_t receipt_len, uint64_t *index);

/*
 * Record a refused frame or peer (Entry kind refused), off the loop thread, within the quota of
 * its (channel, uid) pair (d_refusals.h); count it in the metrics in every case, and one over the
 * quota in the next RefusalsDropped entry. Log its `refused` line within the pair's line quota,
 * and count one over it in the pair's next `refused_lines_suppressed` line. body may be NULL.
 * Loop thread.
 */
void d_record_refused(struct d_daemon *d, enum d_channel ch, uid_t uid, pid_t pid, int code,
                      const char *message, const char *request_id, const uint8_t *body,
                      size_t body_len);

/*
 * The dropped refusals' summaries and the suppressed lines' counts: start the loop timer that
 * writes them when due (after the workers started; 0 or -1), and, at an orderly stop once the
 * workers are gone, stop it and write what is still pending at once. Loop thread.
 */
int d_record_refusals_start(struct d_daemon *d);
void d_record_refusals_stop(struct d_daemon *d);

#endif
