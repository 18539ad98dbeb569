/*
 * ipc.h -- the wire format between decisiond (the parent) and its signer process (the child),
 * spoken on one AF_UNIX SOCK_STREAM socketpair, and blocking helpers to move it. Encoder and
 * decoder of every message live in ipc.c.
 *
 * FRAMES. A frame is a 12-byte header followed by a body. All integers are unsigned big-endian.
 *
 *     offset  size  field
 *     0       2     type    one of enum sworn_ipc_type below
 *     2       2     flags   must be 0 (reserved)
 *     4       4     id      request id chosen by the parent; a reply carries its request's id
 *     8       4     len     body length in bytes; at most the type's maximum below, and never
 *                           more than SWORN_IPC_BODY_MAX, whatever the type
 *     12      len   body
 *
 * BODIES. Every type has an exact layout and the body must be exactly as long as it says: no
 * trailing bytes, no short fields. "status" is 0 for success or an enum sworn_err_code of err.h
 * (1 .. SWORN_ERR_NOTFOUND) for failure. An "error message" is 1 .. SWORN_IPC_ERRMSG_MAX bytes of
 * UTF-8 without control characters (the child's sworn_err_msg(), cleaned by
 * sworn_ipc_errmsg_clean).
 *
 *   1 SIGN_REQ     parent -> child     len == 5 + msg_len
 *       u8  purpose   enum sworn_sign_purpose (1 checkpoint, 2 receipt, 3 key event, 4
 *                     http-message, 5 batch root, 7 conformance report); any other value is
 *                     malformed, 6
 *                     (cosignature) included: only the witness cosigns, with its own key
 *                     (docs/witness.md), never decisiond's signer process
 *       u32 msg_len   1 .. SWORN_SIGNER_MSG_MAX (16384)
 *       msg_len bytes the message of that purpose (sigscheme.h): a checkpoint body, a 32-byte
 *                     digest, an RFC 9421 signature base or a batch root. Its form is checked by
 *                     sworn_signer_sign, not here.
 *   2 SIGN_RESP    child -> parent     len == 3 + data_len
 *       u8  status
 *       u16 data_len  status 0: 1 .. SWORN_SIGNER_SIG_MAX; otherwise 1 .. SWORN_IPC_ERRMSG_MAX
 *       data_len bytes status 0: the signature (signer.h encodings); otherwise an error message
 *   3 INFO_REQ     parent -> child     len == 0
 *   4 INFO_RESP    child -> parent     len == 5 + data_len
 *       u8  status    non-zero when the child could not open its key (it then exits)
 *       u8  alg       status 0: enum sworn_sig_alg (1 .. 3); otherwise 0
 *       u8  software  status 0: 1 when the key is software-held (file:), else 0; otherwise 0
 *       u16 data_len  status 0: 1 .. SWORN_SIGNER_SPKI_MAX; otherwise 1 .. SWORN_IPC_ERRMSG_MAX
 *       data_len bytes status 0: the DER SubjectPublicKeyInfo (not parsed here); otherwise an
 *                     error message
 *   5 HEALTH_REQ   parent -> child     len == 0
 *   6 HEALTH_RESP  child -> parent     len == 3 + data_len
 *       u8  status
 *       u16 data_len  status 0: 0; otherwise 1 .. SWORN_IPC_ERRMSG_MAX
 *       data_len bytes status 0: nothing; otherwise an error message
 *
 * A frame is valid only when every rule above holds. The decoder checks the header first, so a
 * huge len or an unknown type is refused before any body byte is read. Which side may send which
 * type is the caller's rule (decisiond/signerproc.c, signer/sworn-signer.c): the child accepts only
 * *_REQ, the parent only a *_RESP that answers a request it has outstanding: the id of a request
 * sent and not yet answered, and the reply type of that request.
 *
 * PIPELINING. The parent may send further requests before the replies to the earlier ones have
 * come (signerproc.h bounds how many: SWORN_SIGNER_PROC_INFLIGHT_MAX); ids of outstanding
 * requests are distinct and never 0. The child answers every request exactly once, one at a time,
 * in the order they arrived; the parent matches replies by id, not by their order. Whoever
 * receives a frame that is not valid, or not expected (a reply with an id not outstanding, one
 * already answered, or the wrong type for its id), closes the peer: the child exits, the parent
 * kills the child and fails every request outstanding on it (imsg style: a message no handler
 * accepts is fatal). Nothing is ever resynchronised.
 *
 * Thread safety: the codec is pure (no allocation, no globals). The I/O helpers touch only the fd
 * they are given; on one fd at most one thread writes frames and one reads them at a time (the
 * parent serialises its writers and has one reader). Nothing here is secret: digests, checkpoint
 * bodies, signatures and public keys cross this socket, never a PIN or a key.
 */
#ifndef SWORN_IPC_H
#define SWORN_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "signer.h"

#define SWORN_IPC_HDR_LEN 12
#define SWORN_IPC_ERRMSG_MAX 255 /* an error message, as sworn_err_msg() gives at most */
#define SWORN_IPC_SIGN_REQ_MAX (5 + SWORN_SIGNER_MSG_MAX)
#define SWORN_IPC_SIGN_RESP_MAX (3 + SWORN_SIGNER_SIG_MAX)
#define SWORN_IPC_INFO_RESP_MAX (5 + SWORN_SIGNER_SPKI_MAX)
#define SWORN_IPC_HEALTH_RESP_MAX (3 + SWORN_IPC_ERRMSG_MAX)
#define SWORN_IPC_BODY_MAX SWORN_IPC_SIGN_REQ_MAX /* the largest body of any type */
#define SWORN_IPC_FRAME_MAX (SWORN_IPC_HDR_LEN + SWORN_IPC_BODY_MAX)

enum sworn_ipc_type {
    SWORN_IPC_SIGN_REQ = 1,
    SWORN_IPC_SIGN_RESP = 2,
    SWORN_IPC_INFO_REQ = 3,
    SWORN_IPC_INFO_RESP = 4,
    SWORN_IPC_HEALTH_REQ = 5,
    SWORN_IPC_HEALTH_RESP = 6
};

/*
 * One decoded message. Fields that the type does not carry are 0 / NULL. data points into the
 * frame it was decoded from (or, for encoding, into the caller's bytes) and is valid as long as
 * those bytes are.
 */
struct sworn_ipc_msg {
    enum sworn_ipc_type type;
    uint32_t id;
    enum sworn_sign_purpose purpose; /* SIGN_REQ */
    enum sworn_err_code status;      /* *_RESP: SWORN_OK or the child's error code */
    enum sworn_sig_alg alg;          /* INFO_RESP with status 0; else 0 */
    int software_held;               /* INFO_RESP with status 0: 0 or 1; else 0 */
    const uint8_t *data;             /* SIGN_REQ: msg; *_RESP: signature, SPKI or error message */
    size_t data_len;
};

/*
 * Whether a SIGN_REQ may carry purpose: one sigscheme.h knows, and not SWORN_PURPOSE_COSIGNATURE
 * (above). Returns 1 or 0. Both ends check it: the encoder refuses to send, the decoder to read.
 */
int sworn_ipc_purpose_allowed(unsigned purpose);

/*
 * Check a frame header and the body length its type allows. IN: hdr (SWORN_IPC_HDR_LEN bytes).
 * OUT: *type, *id, *body_len, only on success. Returns 0, or -1 with sworn_err set
 * (SWORN_ERR_FORMAT: non-zero flags, unknown type, or len larger than the type's maximum).
 */
int sworn_ipc_hdr_decode(const uint8_t hdr[SWORN_IPC_HDR_LEN], enum sworn_ipc_type *type,
                         uint32_t *id, uint32_t *body_len);

/*
 * Decode one whole frame, frame[0..len), header included, by every rule of the format above.
 * OUT: *m, only on success; m->data points into frame.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT). Never reads outside frame[0..len).
 */
int sworn_ipc_decode(const uint8_t *frame, size_t len, struct sworn_ipc_msg *m);

/*
 * Encode m as one frame into out (capacity cap; SWORN_IPC_FRAME_MAX is always enough). The
 * result is checked with sworn_ipc_decode, so the encoder never emits a frame the decoder would
 * refuse. Returns the frame length, or -1 with sworn_err set (SWORN_ERR_ARG: m breaks a rule of
 * the format; SWORN_ERR_RANGE: cap too small). out's contents are undefined after an error.
 */
long sworn_ipc_encode(const struct sworn_ipc_msg *m, uint8_t *out, size_t cap);

/*
 * Make msg fit the rules of an error message: invalid UTF-8 and control characters become '?',
 * and the text is cut at a character boundary to at most SWORN_IPC_ERRMSG_MAX bytes; an empty
 * msg becomes "unknown error". IN: msg (NUL-terminated). OUT: out (capacity at least
 * SWORN_IPC_ERRMSG_MAX + 1, NUL-terminated). Returns the length written (>= 1).
 */
size_t sworn_ipc_errmsg_clean(const char *msg, char out[SWORN_IPC_ERRMSG_MAX + 1]);

/*
 * Deadlines for the I/O helpers: a point in CLOCK_MONOTONIC time in milliseconds, or
 * SWORN_IPC_FOREVER. sworn_ipc_deadline(t) is now + t ms (t < 0 gives SWORN_IPC_FOREVER).
 */
#define SWORN_IPC_FOREVER INT64_C(-1)
int64_t sworn_ipc_deadline(int timeout_ms);

/*
 * Write all n bytes of p to the socket fd before deadline, across short writes and EINTR. Sends
 * with MSG_NOSIGNAL, so a closed peer is an EPIPE error, never a SIGPIPE. fd must be a socket.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_IO: write error, peer gone, or deadline passed).
 * After an error an unknown prefix of p may have been sent.
 */
int sworn_ipc_write_all(int fd, const void *p, size_t n, int64_t deadline);

/*
 * Read exactly n bytes from the socket fd into p before deadline, across short reads and EINTR.
 * OUT: *got, the bytes read (n on success; fewer at end of stream or on error).
 * Returns 0; 1 when the stream ended first (*got tells where); -1 with sworn_err set
 * (SWORN_ERR_IO: read error or deadline passed).
 */
int sworn_ipc_read_all(int fd, void *p, size_t n, int64_t deadline, size_t *got);

/* Encode m and write it to fd (sworn_ipc_encode, sworn_ipc_write_all). Returns 0 or -1. */
int sworn_ipc_send(int fd, const struct sworn_ipc_msg *m, int64_t deadline);

/*
 * A buffered reader of frames on one socket: each read takes whatever has arrived (up to the
 * buffer's size), so that frames that arrive together -- the parent's pipelined requests, the
 * child's replies to them -- cost one system call between them instead of two each. It applies
 * every rule of sworn_ipc_recv: the header is checked as soon as it is buffered, before any wait
 * for its body, and a frame is decoded only whole. The buffer holds two frames of the largest
 * size, so the rest of a partial frame always fits. One reader belongs to one fd and is used by
 * one thread at a time; after an error it is of no further use (the caller closes the peer).
 */
struct sworn_ipc_reader {
    size_t start, end; /* buf[start..end) is read but not yet decoded */
    int waits;         /* the last read found nothing: poll before the next one */
    uint8_t buf[2 * SWORN_IPC_FRAME_MAX];
};

void sworn_ipc_reader_init(struct sworn_ipc_reader *r);

/* The bytes read from the socket and not yet returned as frames. */
size_t sworn_ipc_reader_buffered(const struct sworn_ipc_reader *r);

/*
 * 1 when the next sworn_ipc_reader_next returns without reading from the socket (a whole frame
 * is buffered, or a header that it refuses), else 0. A refused header also sets this thread's
 * error, as the next call will.
 */
int sworn_ipc_reader_ready(const struct sworn_ipc_reader *r);

/*
 * The next frame on fd, from r's buffer or read before deadline. OUT: *m, only on success;
 * m->data points into r and is valid until the next call on r. Returns as sworn_ipc_recv: 0; 1
 * at a clean end of stream (nothing buffered); -1 with sworn_err set (SWORN_ERR_IO: read error,
 * deadline passed, or the stream ended inside a frame; SWORN_ERR_FORMAT: an invalid frame).
 */
int sworn_ipc_reader_next(struct sworn_ipc_reader *r, int fd, struct sworn_ipc_msg *m,
                          int64_t deadline);

/*
 * Read one frame from fd into frame (capacity SWORN_IPC_FRAME_MAX) and decode it. The header is
 * checked before the body is read, so a hostile length never makes us wait for or buffer more
 * than SWORN_IPC_BODY_MAX bytes. OUT: *m, only on success; m->data points into frame.
 * Returns 0; 1 when the stream ended cleanly before the first byte of a frame (the peer closed);
 * -1 with sworn_err set: SWORN_ERR_IO (read error, deadline passed, or the stream ended inside a
 * frame) or SWORN_ERR_FORMAT (an invalid frame; the caller must close the peer).
 */
int sworn_ipc_recv(int fd, uint8_t frame[SWORN_IPC_FRAME_MAX], struct sworn_ipc_msg *m,
                   int64_t deadline);

#endif
