/*
 * frame.h -- the frames of the decision and admin sockets, and strict decoding of the messages
 * of wire/sworn.proto that they carry (and of the log's Entry).
 *
 * Frame format (docs/protocol.md), byte by byte:
 *
 *   offset 0..3   body length L, unsigned 32-bit, big-endian; 1 <= L <= SWORN_FRAME_MAX
 *   offset 4..    L bytes: exactly one protobuf message, whose type is fixed by the socket and
 *                 the direction: an envelope (DecisionRequest, DecisionReply, AdminRequest,
 *                 AdminResponse) whose oneof says what it holds and whose field 15 is the
 *                 wire version, SWORN_WIRE_VERSION
 *
 * Nothing follows a frame but the next frame. A length of 0 or above SWORN_FRAME_MAX is refused
 * as soon as the 4 header bytes are in, before any body byte is read or any memory reserved; the
 * stream is then out of step and the peer gets an ErrorFrame and is closed.
 *
 * A message is valid when protobuf-c unpacks it, re-packing it gives back exactly its bytes
 * (canonical encoding: no unknown, duplicate or out-of-order fields, no explicit defaults, no NUL
 * in a string; protobuf-c 1.4 would otherwise silently cut a string at a NUL), every string is
 * UTF-8 without control characters (protobuf-c 1.4 does not check this), and the shape rules in
 * the comments of sworn.proto hold (required fields, 32-byte hashes, length and count bounds).
 *
 * Errors: sworn_err_set with SWORN_ERR_FORMAT (bad bytes), SWORN_ERR_RANGE (a length or count out
 * of bounds), SWORN_ERR_ARG (caller misuse) or SWORN_ERR_NOMEM.
 *
 * Thread safety: no shared state; a decoder is used by one thread at a time.
 */
#ifndef SWORN_FRAME_H
#define SWORN_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

#define SWORN_WIRE_VERSION 1u           /* the envelopes' version field */
#define SWORN_FRAME_HDR_LEN 4u          /* the big-endian length prefix */
#define SWORN_FRAME_MAX (1024u * 1024u) /* largest body: 1 MiB */
#define SWORN_FRAME_ENTRY_MAX 65535u    /* a log entry (docs/formats.md section 1) */
#define SWORN_FRAME_ID_MAX 128u         /* request ids: 1..128 bytes */
#define SWORN_FRAME_HASH_LEN 32u        /* every *sha256, *hash and digest field */
#define SWORN_FRAME_TEXT_MAX 1024u      /* reason fields */
#define SWORN_FRAME_STRING_MAX 8192u    /* any other string */
#define SWORN_FRAME_HEADERS_MAX 256u    /* Context.header_names */
#define SWORN_FRAME_COVERED_MAX 64u     /* Context.covered */
#define SWORN_FRAME_ACTORS_MAX 32u      /* Delegation.actors */
#define SWORN_FRAME_TOKENS_MAX 16u      /* Delegation.token_sha256 */
#define SWORN_FRAME_FILES_MAX 256u      /* StartupMeasurement.files */
#define SWORN_FRAME_SIG_MAX 512u        /* Receipt.signature */
#define SWORN_FRAME_CRED_MAX 16384u     /* Credential.value */
#define SWORN_FRAME_NUMBERS_MAX 64u     /* Context.json_numbers */
#define SWORN_FRAME_TAIL_MAX 1000u      /* TailRequest.count */
#define SWORN_FRAME_EXCHANGE_MAX 8u     /* TokenExchange.tokens */
#define SWORN_FRAME_REPLACED_MAX 16u    /* CredentialsMinted.replaced_credential_ids */

/*
 * A bounded incremental decoder for one byte stream. Fields are private. It owns at most one
 * body buffer of the announced length (<= SWORN_FRAME_MAX), reserved once the header is in.
 */
struct sworn_frame_dec {
    uint8_t hdr[SWORN_FRAME_HDR_LEN];
    size_t hdr_have;
    uint32_t body_len;
    uint8_t *body;
    size_t body_have;
    int done;   /* the last feed returned a complete frame (body is handed out) */
    int failed; /* a refused header: the stream is out of step for good */
};

/* Start a decoder at a frame boundary. */
void sworn_frame_dec_init(struct sworn_frame_dec *d);

/* Release the decoder's buffer; the decoder may be initialised again. */
void sworn_frame_dec_free(struct sworn_frame_dec *d);

/*
 * Feed up to len bytes of the stream. Consumes bytes up to the end of at most one frame and
 * returns how many it consumed (call again with the rest). When a frame completes, *body and
 * *body_len give its body, which stays valid until the next call on d; otherwise *body is NULL.
 * Returns -1 (SWORN_ERR_RANGE) on a length of 0 or above SWORN_FRAME_MAX, having consumed only
 * the header, and on every later call; SWORN_ERR_NOMEM when the body buffer cannot be had.
 */
long sworn_frame_dec_feed(struct sworn_frame_dec *d, const uint8_t *p, size_t len,
                          const uint8_t **body, size_t *body_len);

/* Is d between frames (no partial header or body held)? A stream may only end there. */
int sworn_frame_dec_idle(const struct sworn_frame_dec *d);

/*
 * Write the header and body_len bytes of body into out (out_len bytes). Returns the frame
 * length (SWORN_FRAME_HDR_LEN + body_len), or -1: SWORN_ERR_RANGE for a body of 0 or more than
 * SWORN_FRAME_MAX bytes, SWORN_ERR_ARG when out is too small (out untouched).
 */
long sworn_frame_encode(const uint8_t *body, size_t body_len, uint8_t *out, size_t out_len);

/*
 * Check a message's shape rules (not its encoding). Each returns 0, or -1 with sworn_err set and
 * a message naming the field.
 */
int sworn_frame_check_request(const Sworn__V1__AuthorizationRequest *m);
int sworn_frame_check_exchange(const Sworn__V1__TokenExchange *m);
int sworn_frame_check_decision_request(const Sworn__V1__DecisionRequest *m);
int sworn_frame_check_decision(const Sworn__V1__Decision *m);
int sworn_frame_check_error(const Sworn__V1__ErrorFrame *m);
int sworn_frame_check_reply(const Sworn__V1__DecisionReply *m);
int sworn_frame_check_entry(const Sworn__V1__Entry *m);
int sworn_frame_check_admin_request(const Sworn__V1__AdminRequest *m);
int sworn_frame_check_admin_response(const Sworn__V1__AdminResponse *m);

/* Is s the text of one RFC 8259 number (section 6), and nothing else? Returns 1 or 0. */
int sworn_frame_json_number_ok(const char *s);

/*
 * Check m's shape, then pack it as one frame into a new buffer. OUT: *out (free() it) and
 * *out_len. Returns 0, or -1 with nothing allocated. An envelope's version is sent as the
 * caller set it, or as SWORN_WIRE_VERSION when left 0 (any other value: SWORN_ERR_ARG). The
 * _entry variant packs a bare Entry (the log's bytes, no frame header) of at most
 * SWORN_FRAME_ENTRY_MAX bytes, the log's limit.
 *
 * What the proxy sends: sworn_frame_pack_authorize (a DecisionRequest holding req) and
 * sworn_frame_pack_token_exchange, or sworn_frame_pack_decision_request for any envelope.
 * sworn_frame_pack_request frames the bare AuthorizationRequest, the form a DecisionRecord
 * stores: the decision socket refuses it (it is not an envelope); tests compare its bytes.
 */
int sworn_frame_pack_decision_request(const Sworn__V1__DecisionRequest *m, uint8_t **out,
                                      size_t *out_len);
int sworn_frame_pack_authorize(const Sworn__V1__AuthorizationRequest *req, uint8_t **out,
                               size_t *out_len);
int sworn_frame_pack_token_exchange(const Sworn__V1__TokenExchange *ex, uint8_t **out,
                                    size_t *out_len);
int sworn_frame_pack_request(const Sworn__V1__AuthorizationRequest *m, uint8_t **out,
                             size_t *out_len);
int sworn_frame_pack_reply(const Sworn__V1__DecisionReply *m, uint8_t **out, size_t *out_len);
int sworn_frame_pack_entry(const Sworn__V1__Entry *m, uint8_t **out, size_t *out_len);
int sworn_frame_pack_admin_request(const Sworn__V1__AdminRequest *m, uint8_t **out,
                                   size_t *out_len);
int sworn_frame_pack_admin_response(const Sworn__V1__AdminResponse *m, uint8_t **out,
                                    size_t *out_len);

/*
 * Decode one frame body (or, for an Entry, the stored bytes, at most SWORN_FRAME_ENTRY_MAX),
 * enforcing canonical encoding, no unknown fields and the shape rules; an envelope's version
 * must be SWORN_WIRE_VERSION (checked first). Returns the message (free it with the matching
 * sworn__v1__*__free_unpacked(m, NULL)), or NULL with sworn_err set.
 *
 * sworn_frame_unpack_decision_request decodes what the decision socket receives;
 * sworn_frame_unpack_request decodes a bare AuthorizationRequest (request JSON, tests).
 */
Sworn__V1__DecisionRequest *sworn_frame_unpack_decision_request(const uint8_t *p, size_t len);
Sworn__V1__AuthorizationRequest *sworn_frame_unpack_request(const uint8_t *p, size_t len);
Sworn__V1__DecisionReply *sworn_frame_unpack_reply(const uint8_t *p, size_t len);
Sworn__V1__Entry *sworn_frame_unpack_entry(const uint8_t *p, size_t len);
Sworn__V1__AdminRequest *sworn_frame_unpack_admin_request(const uint8_t *p, size_t len);
Sworn__V1__AdminResponse *sworn_frame_unpack_admin_response(const uint8_t *p, size_t len);

/* The name of an effect for JSON and logs: "allow", "deny", "escalate" or "unspecified". */
const char *sworn_frame_effect_name(Sworn__V1__Effect e);

#endif
