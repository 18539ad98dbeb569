/*
 * p_mask.h -- masking the real credential in what upstream sends back, so that an upstream which
 * echoes request headers (or a token endpoint that repeats the key, or a login redirect that
 * quotes the request target) does not hand the secret to the agent (docs/proxy.md,
 * "Credentials"). Every occurrence is overwritten with '*' byte for byte over its own length:
 * lengths and framing stay as upstream sent them.
 *
 * What is an occurrence. The bytes are read in two views, each matched against the value:
 *   - as is, ASCII-case-insensitively (an upstream that lower- or upper-cases its echo);
 *   - unescaped: %XX (either hex case) read as the byte XX, JSON's \/ \" \\ \b \f \n \r \t and
 *     \u00XX read as the byte they stand for (\uXXXX above 00FF is left as it is), then
 *     ASCII-case-insensitively with '+' and ' ' the same byte (form encoding). So the value
 *     percent-encoded (all of it, or only some bytes, as encoders' "safe" sets differ),
 *     form-encoded and JSON-escaped, and mixes of these, are found; the raw span they cover
 *     (3 bytes for %XX, 2 for \/, 6 for \u00XX) is what is overwritten.
 * Not found: other encodings (base64, HTML entities, compression, double percent-encoding); a
 * colluding upstream can always encode the value some way: that is the threat model's
 * (docs/threat-model.md), not this module's. Over-masking (a '+' where the value has ' ', a
 * different letter case) is harmless and accepted.
 * Matching is incremental (Knuth-Morris-Pratt per view, the state carried across feeds): O(n)
 * per feed of n bytes, whatever the split, never re-scanning held bytes.
 *
 * The stream is masked across reads: only the bytes that are the start of a possible occurrence
 * (a prefix of the value in one of the views, or an escape not yet complete) are held back, at
 * most 6 x the value's length - 1 (the longest spelling, all \u00XX, minus one); everything else
 * is passed on at once. A message ending in bytes that are not the start of the value ("auth=*")
 * is not held at all.
 *
 * Flush deadline (stalls): held bytes wait for more. The caller asks sworn_pmask_pending() and,
 * when the stream has been quiet for a short time (sworn-proxy: SWORN_PMASK_FLUSH_MS), calls
 * sworn_pmask_flush(), which sends them and forgets the partial match. Trade-off: a value that
 * an upstream splits across writes spaced further apart than that delay is not caught (its
 * parts are each sent as they are); a non-colluding upstream does not pause inside a value it
 * echoes, and a colluding one can always encode it (above).
 *
 * WebSocket mode (sworn_pmask_websocket, after a 101): the bytes are server-to-client frames
 * (RFC 6455 5.2). Frame headers pass untouched, in order, before their payload: the output has
 * exactly the input's framing and length. The value is matched across the payload bytes of the
 * data frames only, as one stream (so across fragments of a message, and across messages); each
 * control frame (ping, pong, close: at most 125 bytes) is held whole and masked on its own. A
 * malformed stream is an error (-1, SWORN_ERR_FORMAT; the caller closes the connection): a
 * masked frame (a server must not mask), a reserved bit set (no extension is negotiated while a
 * credential is in flight: the mask cannot read compressed payloads), a reserved opcode, a
 * control frame fragmented or over 125 bytes, a length not in its shortest form or with the top
 * bit set, a continuation without a message begun or a new message inside a fragmented one.
 * A 2^63 - 1 byte frame is fine: payload is never buffered beyond the hold-back. The frame
 * headers and control frames held while a partial match waits are bounded by
 * SWORN_PMASK_WS_SIDE_MAX bytes (an upstream sending that much framing inside one value is
 * refused: -1, SWORN_ERR_RANGE). Flushing sends whole frames' bytes only up to the end of the
 * payload so far: an incomplete header or control frame stays (the agent could not read it yet
 * anyway).
 *
 * Limits: the value is 1..SWORN_PMASK_VALUE_MAX bytes (longer: -1, SWORN_ERR_RANGE, so the
 * caller refuses rather than passes it unmasked).
 * Memory: the mask keeps its own copy of the value (folded), its tables and the held bytes, all
 * wiped when it is freed; about 18 bytes per value byte plus the held bytes.
 * Thread safety: one per stream.
 */
#ifndef SWORN_P_MASK_H
#define SWORN_P_MASK_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

#define SWORN_PMASK_VALUE_MAX 65536u    /* >= SWORN_FRAME_CRED_MAX */
#define SWORN_PMASK_WS_SIDE_MAX 65536u  /* framing bytes held inside one partial match */
#define SWORN_PMASK_FLUSH_MS 100u       /* quiet time after which sworn-proxy flushes */
#define SWORN_PMASK_WS_CONTROL_MAX 127u /* a whole control frame: 2 + 125 */

/* One pass of the two views over some bytes (the stream's, or a scratch one for a whole buffer). */
struct sworn_pmask_scan {
    size_t st_raw, st_dec; /* KMP states: bytes of the value matched so far in each view */
    uint64_t *ring;        /* raw offset of each of the last len unescaped bytes */
    uint64_t dcount;       /* unescaped bytes produced */
    uint8_t pend[6];       /* an escape being read: "%", "%X", "\", "\u", "\uX"... */
    size_t npend;
    uint64_t pend_at; /* raw offset of pend[0] */
    uint64_t lo, hi;  /* the last run overwritten, [lo, hi): not overwritten twice */
    uint64_t found;   /* occurrences */
};

struct sworn_pmask {
    size_t len;       /* 0: nothing to mask (everything passes straight through) */
    uint8_t *pat_raw; /* the value folded for the raw view */
    uint8_t *pat_dec; /* folded for the unescaped view ('+' for ' ') */
    uint32_t *fail_raw, *fail_dec;
    uint8_t start[256]; /* bytes that can begin an occurrence in either view */
    struct sworn_pmask_scan s, scratch;

    /* The (payload) stream: work[0..wlen) are the bytes at offsets [wbase, wbase + wlen). */
    uint8_t *work;
    size_t wlen, wcap;
    uint64_t wbase, emitted; /* emitted: offset of the first byte not sent yet */

    /* WebSocket mode. */
    int broken; /* a feed failed: every later one fails too */
    int ws;
    int ws_phase;    /* 0 header, 1 data payload, 2 control frame */
    uint8_t hdr[10]; /* server frames: at most 2 + 8 bytes (never masked) */
    size_t hdr_len, hdr_need;
    uint64_t remaining; /* payload bytes of the current frame still to come */
    int in_message;     /* a fragmented message is open */
    uint8_t ctl[SWORN_PMASK_WS_CONTROL_MAX];
    size_t ctl_len, ctl_need;
    uint8_t *side; /* frame headers and control frames waiting for the payload before them */
    size_t side_off, side_len, side_cap;
    struct sworn_pmask_chunk {
        uint64_t at; /* payload offset it follows */
        size_t len;
    } * chunks;
    size_t chunk_off, nchunks, chunk_cap;

    uint64_t masked; /* occurrences overwritten so far (stream and inplace) */
};

/* Mask value[0..len) from now on, bytes mode (len 0: pass everything). Returns 0, or -1
 * (SWORN_ERR_NOMEM; SWORN_ERR_RANGE: len > SWORN_PMASK_VALUE_MAX). */
int sworn_pmask_init(struct sworn_pmask *m, const uint8_t *value, size_t len);

/* 1 when there is a value to mask. */
int sworn_pmask_active(const struct sworn_pmask *m);

/* Read what follows as WebSocket server frames (above). Only with nothing pending: -1
 * (SWORN_ERR_ARG) otherwise. Returns 0. A no-op on an inactive mask. */
int sworn_pmask_websocket(struct sworn_pmask *m);

/* Mask p[0..n) and append what may be sent now to out. Returns 0, or -1: out of memory, or (in
 * WebSocket mode) a malformed frame stream (SWORN_ERR_FORMAT, SWORN_ERR_RANGE); after -1 the
 * stream is broken: close it. */
int sworn_pmask_feed(struct sworn_pmask *m, const uint8_t *p, size_t n, struct evbuffer *out);

/* Bytes held back that sworn_pmask_flush would send now. */
size_t sworn_pmask_pending(const struct sworn_pmask *m);

/* Send the held bytes (the stream ended, or was quiet: see above) and forget partial matches.
 * Returns 0, or -1 (out of memory). */
int sworn_pmask_flush(struct sworn_pmask *m, struct evbuffer *out);

/* Mask a complete buffer in place (a response head), apart from the stream's state. Returns
 * the occurrences masked (also added to m->masked). */
size_t sworn_pmask_inplace(struct sworn_pmask *m, uint8_t *p, size_t n);

/* Wipe and free. Safe on a zeroed one. */
void sworn_pmask_free(struct sworn_pmask *m);

#endif
