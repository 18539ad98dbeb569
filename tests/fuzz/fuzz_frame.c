/*
 * fuzz_frame.c -- libFuzzer target for wire/frame.c: the input is read as a byte stream of
 * frames by the incremental decoder (fed in chunks of varying size), and every complete body,
 * and the whole input itself, is decoded as an AuthorizationRequest, a TokenExchange, a
 * DecisionReply, an Entry, an AdminRequest and an AdminResponse.
 *
 * Besides not crashing, it checks properties that a lax decoder would break:
 *   - the decoder never hands out a body longer than SWORN_FRAME_MAX or of the wrong length, and
 *     feeding the same stream one byte at a time gives the same frames;
 *   - a message that decodes packs again (through the checked packers) to exactly its bytes;
 *   - a refusal is SWORN_ERR_FORMAT or SWORN_ERR_RANGE, never anything else.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/frame/) holds a framed request, an allow and an error reply, a framed
 * policy-loaded Entry and a refused zero-length header.
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

/* The admin socket's two message types, with the same properties. */
static void check_admin(const uint8_t *p, size_t len)
{
    Sworn__V1__TokenExchange *x = sworn_frame_unpack_exchange(p, len);
    Sworn__V1__AdminRequest *q = sworn_frame_unpack_admin_request(p, len);
    Sworn__V1__AdminResponse *a = sworn_frame_unpack_admin_response(p, len);
    uint8_t *out;
    size_t out_len;

    if (x == NULL) {
        refused();
    } else {
        /* The decision socket's two request types never both decode one body. */
        Sworn__V1__AuthorizationRequest *r = sworn_frame_unpack_request(p, len);

        if (r != NULL)
            abort();
        if (sworn_frame_pack_exchange(x, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__token_exchange__free_unpacked(x, NULL);
    }
    if (q == NULL) {
        refused();
    } else {
        if (sworn_frame_pack_admin_request(q, &out, &out_len) != 0)
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
        if (sworn_frame_pack_reply(d, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, SWORN_FRAME_HDR_LEN);
        sworn__v1__decision_reply__free_unpacked(d, NULL);
    }
    if (e == NULL) {
        refused();
    } else {
        if (sworn_frame_pack_entry(e, &out, &out_len) != 0)
            abort();
        same(p, len, out, out_len, 0);
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    check_admin(p, len);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t chunk = size > 0 ? (size_t)data[0] % 7 + 1 : 1;

    if (run_stream(data, size, chunk, 1) != run_stream(data, size, 1, 0))
        abort();
    check_body(data, size);
    return 0;
}
