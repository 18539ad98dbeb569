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
 * stream is then out of step and the peer gets an ErrorFrame and is closed. The announced length
 * reserves nothing: the body's buffer grows with the bytes that arrive (never more than
 * SWORN_FRAME_DEC_MIN or twice what came, whichever is more), so a peer pins only what it sent.
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

#define SWORN_WIRE_VERSION 1u                      /* the envelopes' version field */
#define SWORN_FRAME_HDR_LEN 4u                     /* the big-endian length prefix */
#define SWORN_FRAME_MAX (1024u * 1024u)            /* largest body: 1 MiB */
#define SWORN_FRAME_ENTRY_MAX 65535u               /* a log entry (docs/formats.md section 1) */
#define SWORN_FRAME_ID_MAX 128u                    /* request ids: 1..128 bytes */
#define SWORN_FRAME_HASH_LEN 32u                   /* every *sha256, *hash and digest field */
#define SWORN_FRAME_TEXT_MAX 1024u                 /* reason fields */
#define SWORN_FRAME_STRING_MAX 8192u               /* any other string */
#define SWORN_FRAME_HEADERS_MAX 256u               /* Context.header_names */
#define SWORN_FRAME_COVERED_MAX 64u                /* Context.covered */
#define SWORN_FRAME_ACTORS_MAX 32u                 /* Delegation.actors */
#define SWORN_FRAME_TOKENS_MAX 16u                 /* Delegation.token_sha256 */
#define SWORN_FRAME_FILES_MAX 256u                 /* StartupMeasurement.files */
#define SWORN_FRAME_SIG_MAX 512u                   /* Receipt.signature */
#define SWORN_FRAME_PARAMS_MAX 1024                /* Receipt.signature_params (form 1) */
#define SWORN_FRAME_CREATED_MAX 999999999999999ULL /* Receipt.created: an RFC 8941 sf-integer */
#define SWORN_FRAME_BATCH_MAX 256u      /* Receipt.batch_size (form 2): items in one group's tree */
#define SWORN_FRAME_BATCH_PATH_MAX 8    /* hashes in an inclusion path of a tree of <= 256 items */
#define SWORN_FRAME_CRED_MAX 16384u     /* Credential.value */
#define SWORN_FRAME_NUMBERS_MAX 64u     /* Context.json_numbers */
#define SWORN_FRAME_TAIL_MAX 1000u      /* TailRequest.count */
#define SWORN_FRAME_EXCHANGE_MAX 8u     /* TokenExchange.tokens */
#define SWORN_FRAME_DROPPED_MAX 256u    /* RefusalsDropped.dropped */
#define SWORN_FRAME_REPLACED_MAX 16u    /* CredentialsMinted.replaced_credential_ids */
#define SWORN_FRAME_TOOL_MAX 256u       /* Resource.tool */
#define SWORN_FRAME_URI_MAX 2048u       /* Resource.uri (an MCP resource URI) */
#define SWORN_FRAME_CANON_SCHEME_MAX 5u /* DecisionRecord.canonical_resource.scheme ("https") */
#define SWORN_FRAME_CANON_HOST_MAX 253u /* DecisionRecord.canonical_resource.host */
#define SWORN_FRAME_SANDBOX_ID_LEN 16u  /* SandboxStarted/SandboxEnded.sandbox_id */
#define SWORN_FRAME_COMMAND_MAX 256u    /* SandboxStarted.command: 1..256 items */
#define SWORN_FRAME_OPERATOR_MAX 256u   /* an operator's user name in an entry */
#define SWORN_FRAME_REPORT_MAX 524288u  /* ConformanceReportRequest.report_json: 512 KiB */
#define SWORN_FRAME_PROBE_SET_MAX 1024u /* ConformanceSummary.probe_set_size */
#define SWORN_FRAME_ONLY_MAX 64u        /* ConformanceSummary.only */
#define SWORN_FRAME_PROBE_ID_MAX 64u    /* a probe id in ConformanceSummary.only */
#define SWORN_FRAME_USER_MAX 64u        /* ConformanceSummary.operator_user */

/* Model calls and their token usage (docs/proxy.md, "Model APIs"). */
#define SWORN_FRAME_MODEL_MAX 256u               /* Resource.model, UsageRecorded.model */
#define SWORN_FRAME_TOKENS_COUNT_MAX 4294967295u /* TokenCeiling.tokens, usage token counts */
#define SWORN_FRAME_MISSING_MAX 256u             /* UsageReport/UsageRecorded.missing */

/* AuthorizationRequest.refusal (ProxyRefusal): status 400..599, reason 1..256 bytes. */
#define SWORN_FRAME_REFUSAL_STATUS_MIN 400u
#define SWORN_FRAME_REFUSAL_STATUS_MAX 599u
#define SWORN_FRAME_REFUSAL_REASON_MAX 256u

/*
 * The most a DecisionRecord entry adds around the AuthorizationRequest it stores, every field of
 * its own at its maximum (protobuf: a 1-byte tag per field, a length varint per length-delimited
 * field; the sum is spelt out in docs/protocol.md section 3 and checked at compile time in
 * frame.c, and test_frame packs that worst case at exactly SWORN_FRAME_ENTRY_MAX bytes):
 *
 *   Entry.decision tag + 3-byte length       4    policy_digest        1 + 1 + 32     34
 *   DecisionRecord.request tag + 3-byte len  4    time_unix_ms         1 + 10         11
 *   effect                   1 + 1           2    credential_id        1 + 2 + 128   131
 *   rule_id                  1 + 2 + 128   131    credential_sha256    1 + 1 + 32     34
 *   reason                   1 + 2 + 1024 1027    raw_target_sha256    1 + 1 + 32     34
 *   canonical_resource       1 + 2 + 10772 10775  (scheme 7, host 256, port 4, path 8195,
 *                                                  tool 259, uri 2051)
 *   total 12187
 */
#define SWORN_FRAME_RECORD_OVERHEAD 12187u

/*
 * The largest AuthorizationRequest the decision socket accepts, in encoded bytes (its bytes inside
 * the DecisionRequest, which are exactly the bytes its DecisionRecord stores): whatever the policy
 * decides, the entry that records it fits the log's limit. A request over it is refused at decode
 * (SWORN_ERR_RANGE) and recorded as Refused, like any malformed frame.
 */
#define SWORN_FRAME_REQUEST_MAX (SWORN_FRAME_ENTRY_MAX - SWORN_FRAME_RECORD_OVERHEAD) /* 53348 */

/*
 * The most held escalations one ListEscalationsResponse lists (a page; the client asks for the
 * next from the last index + 1 while `more` is set). Every held request came through the decision
 * socket, so it is at most SWORN_FRAME_REQUEST_MAX bytes, and a page of 16 of them packs into one
 * frame whatever they hold (checked at compile time in frame.c):
 *
 *   PendingEscalation: request 1 + 3 + 53348, three 10-byte varints 3 * 11,
 *                      entry_hash 1 + 1 + 32                                     53419
 *   16 of them, each with its tag and 3-byte length       16 * (1 + 3 + 53419)  854768
 *   total 1 + 5, more 1 + 1; the AdminResponse's tag and length 1 + 3, its version 1 + 5  854786
 *
 * which leaves some 190 KiB of SWORN_FRAME_MAX spare. Without pages, 19 such requests held at once
 * made the one reply too large to send, and the operator could see none of them.
 */
#define SWORN_FRAME_ESCALATIONS_PAGE 16u
#define SWORN_FRAME_PENDING_MAX 53419u      /* a PendingEscalation, in encoded bytes */
#define SWORN_FRAME_ESCALATIONS_MAX 854786u /* an AdminResponse holding a full page */

/*
 * The largest SandboxStarted an admin sandbox_start may carry, in encoded bytes (operator empty,
 * time 0): with decisiond's operator (at most SWORN_FRAME_OPERATOR_MAX bytes: 1 + 2 + 256) and
 * time (1 + 10), inside the Entry's tag and 3-byte length (4), it still fits the log's limit:
 * 65535 - 4 - 259 - 11. A larger one is refused at decode (SWORN_ERR_RANGE), so a start that
 * passes the check can always be recorded. Checked at compile time in frame.c.
 */
#define SWORN_FRAME_SANDBOX_START_MAX 65261u

/* The first buffer a body gets (or its whole length when shorter); it doubles from there. */
#define SWORN_FRAME_DEC_MIN 4096u

/*
 * A budget of body bytes shared by many decoders (the daemon's connections). Each decoder may
 * hold up to own bytes of its own; what its buffer holds beyond that it borrows from the pool,
 * which lends at most cap bytes to all its decoders together, and gets back when the buffer goes.
 * A decoder whose buffer would have to borrow past cap refuses its frame instead
 * (SWORN_ERR_RANGE), and its stream is out of step. So n decoders hold at most n * own + cap
 * bytes, and a frame of at most own bytes is never refused for want of room, however much
 * others hold. Not locked: every decoder of one pool is used by one thread.
 */
struct sworn_frame_pool {
    size_t cap;  /* IN: the most the pool lends, beyond the decoders' own */
    size_t own;  /* IN: what each decoder may hold without borrowing */
    size_t used; /* bytes lent now */
    size_t held; /* bytes all the decoders hold now, their own included */
    size_t peak; /* the most held at once */
};

/*
 * A bounded incremental decoder for one byte stream. Fields are private. It owns at most one
 * body buffer, of body_cap bytes: at most the announced length (<= SWORN_FRAME_MAX) and at most
 * max(SWORN_FRAME_DEC_MIN, twice the body bytes that came). Every buffer it lets go is wiped
 * first (an allow's answer holds a credential, a TokenExchange real tokens).
 */
struct sworn_frame_dec {
    uint8_t hdr[SWORN_FRAME_HDR_LEN];
    size_t hdr_have;
    uint32_t body_len;
    uint8_t *body;
    size_t body_have;
    size_t body_cap;               /* bytes of body reserved (charged to pool) */
    struct sworn_frame_pool *pool; /* NULL: no shared budget */
    int done;                      /* the last feed returned a complete frame (body handed out) */
    int failed;                    /* a refused frame: the stream is out of step for good */
    int pool_full;                 /* it was refused because the pool had no room */
};

/* Start a decoder at a frame boundary. */
void sworn_frame_dec_init(struct sworn_frame_dec *d);

/* As sworn_frame_dec_init, charging the decoder's buffer to pool (which must outlive it). */
void sworn_frame_dec_init_pool(struct sworn_frame_dec *d, struct sworn_frame_pool *pool);

/* Release the decoder's buffer (wiped; given back to its pool); it may be initialised again. */
void sworn_frame_dec_free(struct sworn_frame_dec *d);

/*
 * Let go of the frame the last feed handed out now rather than at the next feed: its buffer is
 * wiped, freed and given back to the pool, and the body pointer is no longer valid. Does nothing
 * when no frame is handed out.
 */
void sworn_frame_dec_release(struct sworn_frame_dec *d);

/*
 * Feed up to len bytes of the stream. Consumes bytes up to the end of at most one frame and
 * returns how many it consumed (call again with the rest). When a frame completes, *body and
 * *body_len give its body, which stays valid until the next call on d (or
 * sworn_frame_dec_release); otherwise *body is NULL. Returns -1 with SWORN_ERR_RANGE on a length
 * of 0 or above SWORN_FRAME_MAX (having consumed only the header) and when the body's buffer would
 * take the pool past its cap (sworn_frame_dec_pool_full then says so), and on every later call;
 * SWORN_ERR_NOMEM when the buffer cannot be had. After -1 the stream is out of step.
 */
long sworn_frame_dec_feed(struct sworn_frame_dec *d, const uint8_t *p, size_t len,
                          const uint8_t **body, size_t *body_len);

/* Is d between frames (no partial header or body held)? A stream may only end there. */
int sworn_frame_dec_idle(const struct sworn_frame_dec *d);

/* Was d's frame refused because its pool had no room for it (1), or not (0)? */
int sworn_frame_dec_pool_full(const struct sworn_frame_dec *d);

/*
 * Write the header and body_len bytes of body into out (out_len bytes). Returns the frame
 * length (SWORN_FRAME_HDR_LEN + body_len), or -1: SWORN_ERR_RANGE for a body of 0 or more than
 * SWORN_FRAME_MAX bytes, SWORN_ERR_ARG when out is too small (out untouched).
 */
long sworn_frame_encode(const uint8_t *body, size_t body_len, uint8_t *out, size_t out_len);

/*
 * Check a message's shape rules (not its encoding). Each returns 0, or -1 with sworn_err set and
 * a message naming the field. sworn_frame_check_decision_request also bounds an authorize body
 * by SWORN_FRAME_REQUEST_MAX (the socket's rule); sworn_frame_check_request does not, since a
 * stored DecisionRecord is bounded by the entry's own limit. sworn_frame_check_entry (also
 * what sworn_frame_unpack_entry applies) refuses an entry whose time_unix_ms is 0, except an
 * EscalationResolved (one written before its field 7 has none); sworn_frame_pack_entry refuses
 * that too: decisiond writes a time in every entry (issue 13, finding 6).
 * sworn_frame_check_admin_request checks a sandbox_start's SandboxStarted and a sandbox_end's
 * SandboxEnded with operator empty and time 0 (decisiond fills them in), and bounds the started
 * by SWORN_FRAME_SANDBOX_START_MAX; sworn_frame_check_entry requires both in the entries.
 */
int sworn_frame_check_request(const Sworn__V1__AuthorizationRequest *m);
int sworn_frame_check_exchange(const Sworn__V1__TokenExchange *m);
int sworn_frame_check_usage_report(const Sworn__V1__UsageReport *m);
int sworn_frame_check_decision_request(const Sworn__V1__DecisionRequest *m);
int sworn_frame_check_decision(const Sworn__V1__Decision *m);
/* A Receipt's shape (sworn.proto): key id, signature length, alg, and form 0 (digest receipt:
 * no created, no signature_params) or form 1 (http-message receipt: alg 1, a 64-byte r||s,
 * created 1..999999999999999, signature_params 1..1024 bytes of printable ASCII starting with
 * '(') or form 2 (batch digest receipt: as form 0, and batch_index < batch_size <= 256 with a
 * batch_path of exactly the inclusion path's length for them) or form 3 (batch http-message
 * receipt: as form 1, with form 2's batch fields); only forms 2 and 3 have batch fields.
 * Whether it verifies is the verifier's business. */
int sworn_frame_check_receipt(const Sworn__V1__Receipt *r);

/* A ConformanceSummary's shape (sworn.proto; docs/formats.md section 15): both digests, the
 * report's length 1..SWORN_FRAME_REPORT_MAX, a probe set of 1..1024, a tier 1..5, at most 64
 * --only ids of 1..64 bytes 0x21..0x7e, counts adding up to 1..probe_set_size, result PASS
 * exactly when failed and errors are 0, an operator name (1..256) and user (0..64), a start that
 * is not 0 and an end not before it, a root exactly with a checkpoint size, and a startup index
 * below that size. Whether the run happened as it says is no wire rule. */
int sworn_frame_check_conformance_summary(const Sworn__V1__ConformanceSummary *s);

/* The number of hashes in the RFC 9162 inclusion path of item index in a tree of size items
 * (0 when index >= size): what a batch receipt's batch_path holds, 32 bytes each. */
size_t sworn_frame_batch_path_len(uint32_t index, uint32_t size);
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
int sworn_frame_pack_usage_report(const Sworn__V1__UsageReport *u, uint8_t **out, size_t *out_len);
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

/*
 * The hostlink's one frame (wire/sworn.proto, HostlinkHello): sworn-run's relay sends it at the
 * start of every connection to a hostlink listener; the agent's bytes follow. Its body is at most
 * SWORN_HOSTLINK_HELLO_MAX bytes. principal and sandbox are names in the shape of
 * sworn_frame_name_ok; sandbox_start_index is not 0; version is SWORN_WIRE_VERSION.
 * sworn_frame_pack_hostlink_hello stamps the version. Returns as the functions above.
 */
#define SWORN_HOSTLINK_HELLO_MAX 1024u
#define SWORN_FRAME_NAME_MAX 128u /* principal and sandbox names: 1..128 bytes */
int sworn_frame_check_hostlink_hello(const Sworn__V1__HostlinkHello *m);
int sworn_frame_pack_hostlink_hello(const Sworn__V1__HostlinkHello *m, uint8_t **out,
                                    size_t *out_len);
Sworn__V1__HostlinkHello *sworn_frame_unpack_hostlink_hello(const uint8_t *p, size_t len);

/*
 * 1 when s is a principal or sandbox name: 1..SWORN_FRAME_NAME_MAX bytes, each 0x21..0x7e
 * (printable ASCII without spaces), as the proxy's configuration requires of `principal`.
 */
int sworn_frame_name_ok(const char *s);

/* The name of an effect for JSON and logs: "allow", "deny", "escalate" or "unspecified". */
const char *sworn_frame_effect_name(Sworn__V1__Effect e);

#endif
