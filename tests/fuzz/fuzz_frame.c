/*
 * fuzz_frame.c -- libFuzzer target for wire/frame.c: the input is read as a byte stream of
 * frames by the incremental decoder (fed in chunks of varying size), and every complete body,
 * and the whole input itself, is decoded as each envelope (DecisionRequest, DecisionReply,
 * AdminRequest, AdminResponse), as a bare AuthorizationRequest and as an Entry.
 *
 * Besides not crashing, it checks properties that a lax decoder would break:
 *   - the decoder never hands out a body longer than SWORN_FRAME_MAX or of the wrong length, and
 *     feeding the same stream one byte at a time gives the same frames;
 *   - a message that decodes packs again (through the checked packers) to exactly its bytes,
 *     but for an EscalationResolved without a time, which decodes (an older decisiond wrote it)
 *     and which the packer refuses (decisiond stamps every entry; issue 13, finding 6);
 *   - no body is both a DecisionRequest and an AdminRequest (a request sent to the wrong socket
 *     is refused), nor both a DecisionRequest and a bare AuthorizationRequest (a wire version 0
 *     request is never taken for an envelope);
 *   - an envelope that decodes is of SWORN_WIRE_VERSION;
 *   - every AuthorizationRequest the decision socket accepts fits in its log entry: wrapped in a
 *     DecisionRecord whose own fields are all at their maximum, it still packs (finding 4);
 *   - a decoder charged to a small frame pool never has the pool lend past its cap, holds no
 *     more than twice what came, gives every byte back when freed, and until the pool refuses it
 *     (SWORN_ERR_RANGE, pool_full) yields the same frames as a decoder without one (finding 10);
 *   - a refusal is SWORN_ERR_FORMAT or SWORN_ERR_RANGE, never anything else.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/frame/) holds a framed request (in its envelope, and bare as wire
 * version 0 sent it, and of wire version 2), a token exchange, an allow and an error reply, admin
 * requests and responses, a framed policy-loaded Entry, a framed RefusalsDropped Entry and one
 * whose pairs are out of order (refused), framed TimeMark entries (at start, periodic, with the
 * clock behind) and ones refused for a clock_behind_ms that is not max(0, high water - time) or
 * a reason outside 1..2, and a refused zero-length header; a request of exactly
 * SWORN_FRAME_REQUEST_MAX bytes and one of a byte more, the review's 256 header names of 256
 * bytes, and a 1 MiB length announced with 3 bytes after it; requests refused for an unsafe
 * character (utf8.h): U+202E and U+009B in the path, U+200B in the path, a tag character in the
 * principal; a paged listing of held escalations (a request from an index, a page, a full page
 * with more) and pages each breaking one rule (17 listed, unordered or repeated indexes, more on a
 * partial page, a short total, a held request over SWORN_FRAME_REQUEST_MAX), all refused; a
 * request the proxy refused itself (a ProxyRefusal, with a resource and with an empty one) and
 * refusals out of shape (status 600, no reason), refused; a raw tunnel (scheme tcp, no path);
 * sworn-run's admin calls (a sandbox start, an end, their answer) and entries (SandboxStarted,
 * SandboxEnded), and ones refused (an operator or a time sworn-run may not fill in, an unknown
 * isolation, an end naming no start, a signal 0, a 15-byte sandbox id); a request naming its
 * sandbox's start (Principal.sandbox_start_index); model calls' usage (issue 16): a UsageReport
 * reported and not, its UsageResult, a UsageRecorded entry, and ones refused (a reported usage
 * with a missing reason, a count above 4294967295, charged tokens that do not add up).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "fuzz.h"

static void refused(void)
{
    if (sworn_err_code() != SWORN_ERR_FORMAT && sworn_err_code() != SWORN_ERR_RANGE)
        abort();
}

static void same(const uint8_t *want, size_t want_len, uint8_t *got, size_t got_len, size_t hdr)
{
    if (got == NULL || got_len != want_len + hdr || memcmp(got + hdr, want, want_len) != 0)
        abort();
    free(got);
}

/* Strings at the most a DecisionRecord's own fields hold (check_record's bounds). */
static char rule_id[SWORN_FRAME_ID_MAX + 1], reason[SWORN_FRAME_TEXT_MAX + 1],
    cred_id[SWORN_FRAME_ID_MAX + 1], host[SWORN_FRAME_CANON_HOST_MAX + 1],
    path[SWORN_FRAME_STRING_MAX + 1], tool[SWORN_FRAME_TOOL_MAX + 1], uri[SWORN_FRAME_URI_MAX + 1];
static uint8_t h32[32];

/* An accepted request must fit in its entry whatever the decision: the worst record packs. */
static void check_record_fits(Sworn__V1__AuthorizationRequest *req)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__DecisionRecord r = SWORN__V1__DECISION_RECORD__INIT;
    Sworn__V1__Resource c = SWORN__V1__RESOURCE__INIT;
    uint8_t *out = NULL;
    size_t out_len = 0;

    if (rule_id[0] == '\0') {
        memset(rule_id, 'r', SWORN_FRAME_ID_MAX);
        memset(reason, 'x', SWORN_FRAME_TEXT_MAX);
        memset(cred_id, 'c', SWORN_FRAME_ID_MAX);
        memset(host, 'a', SWORN_FRAME_CANON_HOST_MAX);
        memset(path, 'p', SWORN_FRAME_STRING_MAX);
        path[0] = '/';
        memset(tool, 't', SWORN_FRAME_TOOL_MAX);
        memset(uri, 'u', SWORN_FRAME_URI_MAX);
    }
    r.request = req;
    r.effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    r.rule_id = rule_id;
    r.reason = reason;
    r.policy_digest.data = h32;
    r.policy_digest.len = 32;
    r.time_unix_ms = UINT64_MAX;
    r.credential_id = cred_id;
    r.credential_sha256.data = h32;
    r.credential_sha256.len = 32;
    c.scheme = "https";
    c.host = host;
    c.port = 65535;
    c.path = path;
    c.tool = tool;
    c.uri = uri;
    r.canonical_resource = &c;
    r.raw_target_sha256.data = h32;
    r.raw_target_sha256.len = 32;
    e.kind_case = SWORN__V1__ENTRY__KIND_DECISION;
    e.decision = &r;
    if (sworn_frame_pack_entry(&e, &out, &out_len) != 0 || out_len > SWORN_FRAME_ENTRY_MAX)
        abort();
    free(out);
}

/* The decision socket's request envelope and the admin socket's two envelopes. */
static void check_envelopes(const uint8_t *p, size_t len)
{
    Sworn__V1__DecisionRequest *x = sworn_frame_unpack_decision_request(p, len);
    Sworn__V1__AdminRequest *q = sworn_frame_unpack_admin_request(p, len);
    Sworn__V1__AdminResponse *a = sworn_frame_unpack_admin_response(p, len);
    uint8_t *out;
    size_t out_len;

    if (x == NULL) {
        refused();
    } else {
        Sworn__V1__AuthorizationRequest *r = sworn_frame_unpack_request(p, len);

        if (r != NULL || q != NULL || x->version != SWORN_WIRE_VERSION)
            abort();
        if (x->body_case == SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE)
            check_record_fits(x->authorize);
        if (sworn_frame_pack_decision_request(x, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__decision_request__free_unpacked(x, NULL);
    }
    if (q == NULL) {
        refused();
    } else {
        if (q->version != SWORN_WIRE_VERSION ||
            sworn_frame_pack_admin_request(q, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__admin_request__free_unpacked(q, NULL);
    }
    if (a == NULL) {
        refused();
    } else {
        if (sworn_frame_pack_admin_response(a, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__admin_response__free_unpacked(a, NULL);
    }
}

static void check_body(const uint8_t *p, size_t len)
{
    Sworn__V1__AuthorizationRequest *r = sworn_frame_unpack_request(p, len);
    Sworn__V1__DecisionReply *d = sworn_frame_unpack_reply(p, len);
    Sworn__V1__Entry *e = sworn_frame_unpack_entry(p, len);
    uint8_t *out;
    size_t out_len;

    if (r == NULL) {
        refused();
    } else {
        if (sworn_frame_pack_request(r, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__authorization_request__free_unpacked(r, NULL);
    }
    if (d == NULL) {
        refused();
    } else {
        if (d->version != SWORN_WIRE_VERSION || sworn_frame_pack_reply(d, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__decision_reply__free_unpacked(d, NULL);
    }
    if (e == NULL) {
        refused();
    } else if (e->kind_case == SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED &&
               e->escalation_resolved->time_unix_ms == 0) {
        /* A resolution of a decisiond before field 7: read back, never written (finding 6). */
        if (sworn_frame_pack_entry(e, &out, &out_len) == 0)
            abort();
        refused();
        sworn__v1__entry__free_unpacked(e, NULL);
    } else {
        if (sworn_frame_pack_entry(e, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, 0);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    check_envelopes(p, len);
}

/* Run the stream through a decoder in chunks of `chunk` bytes; return the number of frames. */
static size_t run_stream(const uint8_t *data, size_t size, size_t chunk, int check)
{
    struct sworn_frame_dec d;
    size_t off = 0, frames = 0;

    sworn_frame_dec_init(&d);
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        const uint8_t *body;
        size_t blen;
        long used = sworn_frame_dec_feed(&d, data + off, n, &body, &blen);

        if (used < 0) {
            refused();
            break;
        }
        if (used == 0 || (size_t)used > n)
            abort();
        off += (size_t)used;
        if (body != NULL) {
            if (blen == 0 || blen > SWORN_FRAME_MAX || off < blen ||
                memcmp(body, data + off - blen, blen) != 0)
                abort();
            if (check)
                check_body(body, blen);
            frames++;
        }
    }
    sworn_frame_dec_free(&d);
    return frames;
}

/*
 * The stream through a decoder charged to a small pool, in chunks of chunk bytes: the same frames
 * as without a pool until the pool refuses, the pool's bounds kept at every step. Returns the
 * number of frames, or (size_t)-1 when the pool refused.
 */
static size_t run_pooled(const uint8_t *data, size_t size, size_t chunk)
{
    struct sworn_frame_pool pool = {.cap = 2 * SWORN_FRAME_DEC_MIN, .own = SWORN_FRAME_DEC_MIN};
    struct sworn_frame_dec d;
    size_t off = 0, frames = 0, start = 0;

    sworn_frame_dec_init_pool(&d, &pool);
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        const uint8_t *body;
        size_t blen;
        long used = sworn_frame_dec_feed(&d, data + off, n, &body, &blen);

        if (pool.used > pool.cap || pool.held > pool.cap + pool.own)
            abort();
        if (used < 0) {
            refused();
            if (sworn_frame_dec_pool_full(&d)) {
                if (sworn_err_code() != SWORN_ERR_RANGE)
                    abort();
                frames = (size_t)-1;
            }
            break;
        }
        if (used == 0 || (size_t)used > n)
            abort();
        if (sworn_frame_dec_idle(&d) || body != NULL)
            start = off + (size_t)used;
        off += (size_t)used;
        /* Never more than twice the body bytes that came, or the first buffer. */
        if (body == NULL && off > start + SWORN_FRAME_HDR_LEN &&
            pool.held > 2 * (off - start - SWORN_FRAME_HDR_LEN) && pool.held > SWORN_FRAME_DEC_MIN)
            abort();
        if (body != NULL) {
            if (blen == 0 || blen > SWORN_FRAME_MAX || off < blen ||
                memcmp(body, data + off - blen, blen) != 0)
                abort();
            frames++;
            sworn_frame_dec_release(&d);
            if (pool.held != 0)
                abort();
        }
    }
    sworn_frame_dec_free(&d);
    if (pool.used != 0 || pool.held != 0)
        abort();
    return frames;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t chunk = size > 0 ? (size_t)data[0] % 7 + 1 : 1, all = run_stream(data, size, chunk, 1);
    size_t pooled = run_pooled(data, size, chunk);

    if (all != run_stream(data, size, 1, 0))
        abort();
    if (pooled != (size_t)-1 && pooled != all)
        abort();
    check_body(data, size);
    return 0;
}
