/*
 * p_sign.h -- RFC 9421 signatures upstream (issue 16): the `signing:` destinations of the
 * proxy's configuration, and the header fields an allowed request to one of them leaves with.
 *
 * The proxy signs nothing and builds no signature base: decisiond builds sworn's base from the
 * request it decided and the entry's leaf hash, and its signer signs it; the allow's Decision
 * carries that signature as an http-message receipt (Receipt form 1: r||s, created, the
 * @signature-params text; docs/formats.md section 13). The proxy only writes it out:
 *
 *     Signature-Input: sworn=<Receipt.signature_params>
 *     Signature: sworn=:<base64 of Receipt.signature>:
 *     Content-Digest: sha-256=:<base64 of the body's SHA-256>:    (only with a body: RFC 9530)
 *     Sworn-Entry: :<base64 of Decision.entry_hash>:
 *     Sworn-Batch: i=<batch_index>, n=<batch_size>, path=:<base64 of batch_path>:
 *                                          (only for a batch http-message receipt, form 3: the
 *                                          Signature then covers the root of the group's tree,
 *                                          docs/formats.md section 14)
 *
 * and sends exactly the method, canonical path and query, Host and body that decisiond decided
 * on (p_conn.c's send_request writes those for every request). The agent's own Signature,
 * Signature-Input, Content-Digest and Sworn-Entry fields (any case, '_' for '-') are dropped for
 * a signing destination; Sworn-Entry and Sworn-Batch are dropped for every destination (only the
 * proxy names the log entry and its batch).
 *
 * Fail closed: an allow to a signing destination that cannot carry its signature (a Decision
 * without an http-message receipt (form 1 or 3), e.g. a decisiond with an Ed25519 key or an older
 * one; a credential that goes into the query, which decisiond's base does not hold) is not sent
 * upstream: the agent gets 502 with the sentence below.
 *
 * Configuration (docs/proxy.md, "Signatures upstream"): the top-level key `signing:` is a list of
 * 1..SWORN_PSIGN_DESTS_MAX destination URLs (proxy/p_dest.h), no two equal. A ws/wss resource
 * lies under an http/https destination of the same host, port and path (the upgrade of
 * https://h/x is wss://h/x). Absent: no destination is signed.
 */
#ifndef SWORN_P_SIGN_H
#define SWORN_P_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "p_dest.h"
#include "resource.h"
#include "sworn.pb-c.h"

#define SWORN_PSIGN_DESTS_MAX 32
/* Signature-Input (label, params up to 1024), Signature, Content-Digest, Sworn-Entry and
 * Sworn-Batch (a path of up to 8 hashes: 344 base64 characters) lines */
#define SWORN_PSIGN_HEADERS_MAX 1900

struct sworn_psign_conf {
    struct sworn_pdest dests[SWORN_PSIGN_DESTS_MAX];
    size_t n;
};

struct sworn_yaml_doc;

/* Read the `signing:` key of the configuration's root (absent: none). 0, or -1 with sworn_err
 * set by sworn_yaml_error ("<file>:<line>:<col>: signing: ..."). */
int sworn_psign_read(const struct sworn_yaml_doc *d, struct sworn_psign_conf *out);

/* Does the canonical resource lie under a signing destination? 1 or 0. */
int sworn_psign_wants(const struct sworn_psign_conf *conf, const struct sworn_resource *c);

/* Is this request field the agent's own Signature, Signature-Input, Content-Digest, Sworn-Entry
 * or Sworn-Batch (as a server would read the name: any case, '_' as '-')? signing: 1 for a signing
 * destination (all five), 0 otherwise (Sworn-Entry and Sworn-Batch only). 1 drop, 0 keep. */
int sworn_psign_field_dropped(const char *name, size_t len, int signing);

/*
 * The header lines (each ending CRLF) for the allow d of a request whose body's SHA-256 is
 * body_sha256 (NULL: no body), into out (capacity cap, NUL-terminated). changes_signed: the
 * allow's credential goes into the query or the form body (p_form.h), which the signature covers
 * as decided, without the secret: such a request is not sent. OUT: *len. Returns 0, or 1 with *why
 * (a static sentence: the request must not go upstream).
 */
int sworn_psign_headers(const Sworn__V1__Decision *d, const uint8_t *body_sha256,
                        int changes_signed, char *out, size_t cap, size_t *len, const char **why);

#endif
