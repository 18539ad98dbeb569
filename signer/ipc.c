/*
 * ipc.c -- the signer socketpair's frames (format and contract in ipc.h): the header and body
 * decoder, the encoder, and the blocking I/O helpers with deadlines.
 *
 * Every byte from the peer goes through a sworn_buf; the decoder checks each field against the
 * rule for its type before the next one is read, and a frame is accepted only when its body is
 * used up exactly.
 */
#include "ipc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "buf.h"
#include "utf8.h"

_Static_assert(SWORN_IPC_SIGN_RESP_MAX <= SWORN_IPC_BODY_MAX, "SIGN_RESP must fit the limit");
_Static_assert(SWORN_IPC_INFO_RESP_MAX <= SWORN_IPC_BODY_MAX, "INFO_RESP must fit the limit");
_Static_assert(SWORN_IPC_HEALTH_RESP_MAX <= SWORN_IPC_BODY_MAX, "HEALTH_RESP must fit the limit");
_Static_assert(SWORN_SIGNER_MSG_MAX <= UINT32_MAX, "msg_len is a u32");
_Static_assert(SWORN_SIGNER_SIG_MAX <= UINT16_MAX && SWORN_SIGNER_SPKI_MAX <= UINT16_MAX,
               "data_len is a u16");
_Static_assert(SWORN_IPC_ERRMSG_MAX < SWORN_ERR_MSG_MAX, "an error message fits err.h's slot");

/* The name of a type for error messages, or NULL when the type is unknown. */
static const char *type_name(uint16_t type)
{
    switch (type) {
    case SWORN_IPC_SIGN_REQ:
        return "SIGN_REQ";
    case SWORN_IPC_SIGN_RESP:
        return "SIGN_RESP";
    case SWORN_IPC_INFO_REQ:
        return "INFO_REQ";
    case SWORN_IPC_INFO_RESP:
        return "INFO_RESP";
    case SWORN_IPC_HEALTH_REQ:
        return "HEALTH_REQ";
    case SWORN_IPC_HEALTH_RESP:
        return "HEALTH_RESP";
    default:
        return NULL;
    }
}

/* The largest body a known type may have. */
static uint32_t body_max(enum sworn_ipc_type type)
{
    switch (type) {
    case SWORN_IPC_SIGN_REQ:
        return SWORN_IPC_SIGN_REQ_MAX;
    case SWORN_IPC_SIGN_RESP:
        return SWORN_IPC_SIGN_RESP_MAX;
    case SWORN_IPC_INFO_RESP:
        return SWORN_IPC_INFO_RESP_MAX;
    case SWORN_IPC_HEALTH_RESP:
        return SWORN_IPC_HEALTH_RESP_MAX;
    case SWORN_IPC_INFO_REQ:
    case SWORN_IPC_HEALTH_REQ:
    default:
        return 0;
    }
}

int sworn_ipc_hdr_decode(const uint8_t hdr[SWORN_IPC_HDR_LEN], enum sworn_ipc_type *type,
                         uint32_t *id, uint32_t *body_len)
{
    struct sworn_buf b = sworn_buf_init(hdr, SWORN_IPC_HDR_LEN);
    uint16_t t = 0, flags = 0;
    uint32_t i = 0, len = 0;
    const char *name;

    SWORN_GUARD(sworn_buf_get_u16be(&b, &t));
    SWORN_GUARD(sworn_buf_get_u16be(&b, &flags));
    SWORN_GUARD(sworn_buf_get_u32be(&b, &i));
    SWORN_GUARD(sworn_buf_get_u32be(&b, &len));
    name = type_name(t);
    SWORN_ENSURE(name != NULL, SWORN_ERR_FORMAT, "ipc: unknown message type %u", (unsigned)t);
    SWORN_ENSURE(flags == 0, SWORN_ERR_FORMAT, "ipc: %s with flags 0x%04x (must be 0)", name,
                 (unsigned)flags);
    SWORN_ENSURE(len <= body_max((enum sworn_ipc_type)t), SWORN_ERR_FORMAT,
                 "ipc: %s body of %lu bytes (at most %lu)", name, (unsigned long)len,
                 (unsigned long)body_max((enum sworn_ipc_type)t));
    *type = (enum sworn_ipc_type)t;
    *id = i;
    *body_len = len;
    return 0;
fail:
    return -1;
}

/*
 * The tail shared by every reply: u16 data_len, then data_len bytes that end the body exactly.
 * With status 0 the data is ok_min..ok_max bytes the codec does not interpret; otherwise it is
 * an error message.
 */
static int decode_result(struct sworn_buf *b, const char *name, enum sworn_err_code status,
                         size_t ok_min, size_t ok_max, struct sworn_ipc_msg *m)
{
    uint16_t len = 0;

    SWORN_GUARD(sworn_buf_get_u16be(b, &len));
    SWORN_ENSURE(sworn_buf_remaining(b) == len, SWORN_ERR_FORMAT,
                 "ipc: %s says %u data bytes but %zu follow", name, (unsigned)len,
                 sworn_buf_remaining(b));
    if (status == SWORN_OK) {
        SWORN_ENSURE(len >= ok_min && len <= ok_max, SWORN_ERR_FORMAT,
                     "ipc: %s success with %u data bytes (%zu..%zu)", name, (unsigned)len, ok_min,
                     ok_max);
    } else {
        SWORN_ENSURE(len >= 1 && len <= SWORN_IPC_ERRMSG_MAX, SWORN_ERR_FORMAT,
                     "ipc: %s error message of %u bytes (1..%d)", name, (unsigned)len,
                     SWORN_IPC_ERRMSG_MAX);
    }
    SWORN_GUARD(sworn_buf_get_ptr(b, len, &m->data));
    m->data_len = len;
    if (status != SWORN_OK)
        SWORN_GUARD(sworn_utf8_check(m->data, m->data_len, 0, "ipc: error message"));
    m->status = status;
    return 0;
fail:
    return -1;
}

static int decode_status(struct sworn_buf *b, const char *name, enum sworn_err_code *status)
{
    uint8_t s = 0;

    SWORN_GUARD(sworn_buf_get_u8(b, &s));
    SWORN_ENSURE(s <= SWORN_ERR_NOTFOUND, SWORN_ERR_FORMAT, "ipc: %s with unknown status %u", name,
                 (unsigned)s);
    *status = (enum sworn_err_code)s;
    return 0;
fail:
    return -1;
}

int sworn_ipc_purpose_allowed(unsigned purpose)
{
    /* Cosignatures are the witness's (witness/), which holds its own key: decisiond never
     * cosigns, so its signer process cannot be asked for one. */
    return sworn_sign_purpose_known(purpose) && purpose != SWORN_PURPOSE_COSIGNATURE;
}

static int decode_sign_req(struct sworn_buf *b, struct sworn_ipc_msg *m)
{
    uint8_t purpose = 0;
    uint32_t len = 0;

    SWORN_GUARD(sworn_buf_get_u8(b, &purpose));
    if (!sworn_ipc_purpose_allowed(purpose))
        return sworn_err_set(SWORN_ERR_FORMAT, "ipc: SIGN_REQ for unknown purpose %u",
                             (unsigned)purpose);
    SWORN_GUARD(sworn_buf_get_u32be(b, &len));
    SWORN_ENSURE(len >= 1 && len <= SWORN_SIGNER_MSG_MAX, SWORN_ERR_FORMAT,
                 "ipc: SIGN_REQ message of %lu bytes (1..%d)", (unsigned long)len,
                 SWORN_SIGNER_MSG_MAX);
    SWORN_ENSURE(sworn_buf_remaining(b) == len, SWORN_ERR_FORMAT,
                 "ipc: SIGN_REQ says %lu message bytes but %zu follow", (unsigned long)len,
                 sworn_buf_remaining(b));
    SWORN_GUARD(sworn_buf_get_ptr(b, len, &m->data));
    m->data_len = len;
    m->purpose = (enum sworn_sign_purpose)purpose;
    return 0;
fail:
    return -1;
}

static int decode_info_resp(struct sworn_buf *b, struct sworn_ipc_msg *m)
{
    enum sworn_err_code status = SWORN_OK;
    uint8_t alg = 0, software = 0;

    SWORN_GUARD(decode_status(b, "INFO_RESP", &status));
    SWORN_GUARD(sworn_buf_get_u8(b, &alg));
    SWORN_GUARD(sworn_buf_get_u8(b, &software));
    if (status == SWORN_OK) {
        SWORN_ENSURE(alg >= SWORN_SIG_ECDSA_P256_SHA256 && alg <= SWORN_SIG_RSA_PSS_SHA256,
                     SWORN_ERR_FORMAT, "ipc: INFO_RESP with unknown algorithm %u", (unsigned)alg);
        SWORN_ENSURE(software <= 1, SWORN_ERR_FORMAT,
                     "ipc: INFO_RESP with software-held flag %u (0 or 1)", (unsigned)software);
    } else {
        SWORN_ENSURE(alg == 0 && software == 0, SWORN_ERR_FORMAT,
                     "ipc: INFO_RESP error with algorithm or flag set");
    }
    SWORN_GUARD(decode_result(b, "INFO_RESP", status, 1, SWORN_SIGNER_SPKI_MAX, m));
    m->alg = (enum sworn_sig_alg)alg;
    m->software_held = software;
    return 0;
fail:
    return -1;
}

int sworn_ipc_decode(const uint8_t *frame, size_t len, struct sworn_ipc_msg *m)
{
    struct sworn_buf b = sworn_buf_init(frame, len);
    struct sworn_ipc_msg d = {0};
    enum sworn_err_code status = SWORN_OK;
    const uint8_t *hdr = NULL;
    uint32_t body_len = 0;

    SWORN_ENSURE(len >= SWORN_IPC_HDR_LEN, SWORN_ERR_FORMAT,
                 "ipc: frame of %zu bytes is shorter than its header", len);
    SWORN_GUARD(sworn_buf_get_ptr(&b, SWORN_IPC_HDR_LEN, &hdr));
    SWORN_GUARD(sworn_ipc_hdr_decode(hdr, &d.type, &d.id, &body_len));
    SWORN_ENSURE(sworn_buf_remaining(&b) == body_len, SWORN_ERR_FORMAT,
                 "ipc: header says %lu body bytes but the frame holds %zu", (unsigned long)body_len,
                 sworn_buf_remaining(&b));
    switch (d.type) {
    case SWORN_IPC_SIGN_REQ:
        SWORN_GUARD(decode_sign_req(&b, &d));
        break;
    case SWORN_IPC_SIGN_RESP:
        SWORN_GUARD(decode_status(&b, "SIGN_RESP", &status));
        SWORN_GUARD(decode_result(&b, "SIGN_RESP", status, 1, SWORN_SIGNER_SIG_MAX, &d));
        break;
    case SWORN_IPC_INFO_RESP:
        SWORN_GUARD(decode_info_resp(&b, &d));
        break;
    case SWORN_IPC_HEALTH_RESP:
        SWORN_GUARD(decode_status(&b, "HEALTH_RESP", &status));
        SWORN_GUARD(decode_result(&b, "HEALTH_RESP", status, 0, 0, &d));
        break;
    case SWORN_IPC_INFO_REQ:
    case SWORN_IPC_HEALTH_REQ:
        /* The header check already limited these bodies to 0 bytes. */
        break;
    default:
        sworn_err_set(SWORN_ERR_FORMAT, "ipc: unknown message type %u", (unsigned)d.type);
        goto fail;
    }
    /* Every decoder above consumes exactly its body; this guards against a future one that
     * forgets to. */
    SWORN_ENSURE(sworn_buf_remaining(&b) == 0, SWORN_ERR_FORMAT, "ipc: %zu trailing bytes",
                 sworn_buf_remaining(&b));
    *m = d;
    return 0;
fail:
    return -1;
}

long sworn_ipc_encode(const struct sworn_ipc_msg *m, uint8_t *out, size_t cap)
{
    struct sworn_ipc_msg check;
    size_t fixed, body, at = SWORN_IPC_HDR_LEN;

    switch (m->type) {
    case SWORN_IPC_SIGN_REQ:
        fixed = 5;
        break;
    case SWORN_IPC_SIGN_RESP:
    case SWORN_IPC_HEALTH_RESP:
        fixed = 3;
        break;
    case SWORN_IPC_INFO_RESP:
        fixed = 5;
        break;
    case SWORN_IPC_INFO_REQ:
    case SWORN_IPC_HEALTH_REQ:
        fixed = 0;
        break;
    default:
        return sworn_err_set(SWORN_ERR_ARG, "ipc: cannot encode unknown type %d", (int)m->type);
    }
    /* body_max(type) >= fixed for every type, and is 0 for the types without a body. */
    if (m->data_len > body_max(m->type) - fixed || (m->data_len > 0 && m->data == NULL))
        return sworn_err_set(SWORN_ERR_ARG, "ipc: %s data of %zu bytes is not encodable",
                             type_name((uint16_t)m->type), m->data_len);
    /* Values that the one-byte fields below would truncate into range. */
    if ((unsigned)m->purpose > UINT8_MAX || (unsigned)m->status > UINT8_MAX ||
        (unsigned)m->alg > UINT8_MAX || m->software_held < 0 || m->software_held > 1)
        return sworn_err_set(SWORN_ERR_ARG, "ipc: %s field out of range",
                             type_name((uint16_t)m->type));
    body = fixed == 0 ? 0 : fixed + m->data_len;
    if (cap < SWORN_IPC_HDR_LEN + body)
        return sworn_err_set(SWORN_ERR_RANGE, "ipc: %zu bytes of room for a %zu-byte frame", cap,
                             SWORN_IPC_HDR_LEN + body);
    sworn_put_u16be(out, (uint16_t)m->type);
    sworn_put_u16be(out + 2, 0);
    sworn_put_u32be(out + 4, m->id);
    sworn_put_u32be(out + 8, (uint32_t)body);
    switch (m->type) {
    case SWORN_IPC_SIGN_REQ:
        if (!sworn_ipc_purpose_allowed((unsigned)m->purpose))
            return sworn_err_set(SWORN_ERR_ARG, "ipc: SIGN_REQ for purpose %d, not decisiond's",
                                 (int)m->purpose);
        out[at++] = (uint8_t)m->purpose;
        sworn_put_u32be(out + at, (uint32_t)m->data_len);
        at += 4;
        break;
    case SWORN_IPC_INFO_RESP:
        out[at++] = (uint8_t)m->status;
        out[at++] = (uint8_t)m->alg;
        out[at++] = (uint8_t)m->software_held;
        sworn_put_u16be(out + at, (uint16_t)m->data_len);
        at += 2;
        break;
    case SWORN_IPC_SIGN_RESP:
    case SWORN_IPC_HEALTH_RESP:
        out[at++] = (uint8_t)m->status;
        sworn_put_u16be(out + at, (uint16_t)m->data_len);
        at += 2;
        break;
    case SWORN_IPC_INFO_REQ:
    case SWORN_IPC_HEALTH_REQ:
    default:
        break;
    }
    if (fixed > 0 && m->data_len > 0) {
        memcpy(out + at, m->data, m->data_len);
        at += m->data_len;
    }
    /* The truncating casts above, and any field out of its range, show up here: the decoder is
     * the one statement of the rules, so the encoder defers to it. */
    if (sworn_ipc_decode(out, at, &check) < 0)
        return sworn_err_set(SWORN_ERR_ARG, "ipc: refusing to encode an invalid frame (%s)",
                             sworn_err_msg());
    return (long)at;
}

size_t sworn_ipc_errmsg_clean(const char *msg, char out[SWORN_IPC_ERRMSG_MAX + 1])
{
    enum sworn_err_code code = sworn_err_code();
    char in[SWORN_IPC_ERRMSG_MAX + 1];
    struct sworn_buf b;
    size_t in_len, n = 0;
    int clobbered = 0;

    /* msg may be this thread's error slot itself, which sworn_utf8_next overwrites when it
     * meets a bad byte: work on a copy, and put the slot back afterwards. */
    in_len = strnlen(msg, SWORN_IPC_ERRMSG_MAX);
    memcpy(in, msg, in_len);
    in[in_len] = '\0';
    b = sworn_buf_init(in, in_len);
    while (sworn_buf_remaining(&b) > 0) {
        struct sworn_buf at = b;
        uint32_t cp = 0;

        if (sworn_utf8_next(&b, &cp) == 0 && !sworn_utf8_is_control(cp)) {
            size_t clen = b.off - at.off;

            if (sworn_buf_get_bytes(&at, out + n, clen) < 0)
                break;
            n += clen;
            continue;
        }
        clobbered = 1;
        b = at;
        if (sworn_buf_get_u8(&b, &(uint8_t){0}) < 0)
            break;
        out[n++] = '?';
    }
    if (n == 0) {
        static const char unknown[] = "unknown error";

        memcpy(out, unknown, sizeof(unknown) - 1);
        n = sizeof(unknown) - 1;
    }
    out[n] = '\0';
    if (clobbered) {
        if (code == SWORN_OK)
            sworn_err_clear();
        else
            sworn_err_set(code, "%s", in);
    }
    return n;
}

/*
 * Now in CLOCK_MONOTONIC milliseconds. clock_gettime cannot fail for this clock on Linux; if it
 * ever did, every deadline would be meaningless, so that is treated as a bug, not an error.
 */
static int64_t now_ms(void)
{
    struct timespec t;

    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0)
        abort();
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int64_t sworn_ipc_deadline(int timeout_ms)
{
    if (timeout_ms < 0)
        return SWORN_IPC_FOREVER;
    return now_ms() + timeout_ms;
}

/*
 * Wait until fd reports events (or a hang-up or error, which the following read or write then
 * reports) or the deadline passes. Returns 0 or -1 (SWORN_ERR_IO).
 */
static int wait_fd(int fd, short events, int64_t deadline, const char *what)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events, .revents = 0};
        int ms = -1, r;

        if (deadline != SWORN_IPC_FOREVER) {
            int64_t left = deadline - now_ms();

            if (left <= 0)
                return sworn_err_set(SWORN_ERR_IO, "ipc: %s: deadline passed", what);
            ms = left > INT_MAX ? INT_MAX : (int)left;
        }
        r = poll(&pfd, 1, ms);
        if (r > 0)
            return 0;
        /* r == 0: the loop sees the deadline has passed. EINTR: a signal for someone else. */
        if (r < 0 && errno != EINTR)
            return sworn_err_set(SWORN_ERR_IO, "ipc: %s: poll: %s", what, strerror(errno));
    }
}

int sworn_ipc_write_all(int fd, const void *p, size_t n, int64_t deadline)
{
    const uint8_t *src = p;
    size_t off = 0;

    while (off < n) {
        ssize_t w;

        /* The socket usually has room: try first, and poll only when it is full (one system
         * call per frame, not two). The deadline is checked before each try all the same. */
        if (deadline != SWORN_IPC_FOREVER && now_ms() >= deadline)
            return sworn_err_set(SWORN_ERR_IO, "ipc: write: deadline passed");
        /* MSG_DONTWAIT: a blocking send could wait past the deadline. */
        w = send(fd, src + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0) {
            off += (size_t)w;
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            SWORN_GUARD(wait_fd(fd, POLLOUT, deadline, "write"));
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EPIPE || errno == ECONNRESET)
            return sworn_err_set(SWORN_ERR_IO, "ipc: write: the peer closed the socket");
        return sworn_err_set(SWORN_ERR_IO, "ipc: write: %s", strerror(errno));
    }
    return 0;
fail:
    return -1;
}

int sworn_ipc_read_all(int fd, void *p, size_t n, int64_t deadline, size_t *got)
{
    uint8_t *dst = p;
    size_t off = 0;

    while (off < n) {
        ssize_t r;

        if (wait_fd(fd, POLLIN, deadline, "read") < 0)
            goto fail;
        r = recv(fd, dst + off, n - off, MSG_DONTWAIT);
        if (r > 0) {
            off += (size_t)r;
            continue;
        }
        if (r == 0) {
            *got = off;
            return 1;
        }
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            continue;
        if (errno == ECONNRESET)
            sworn_err_set(SWORN_ERR_IO, "ipc: read: the peer reset the connection");
        else
            sworn_err_set(SWORN_ERR_IO, "ipc: read: %s", strerror(errno));
        goto fail;
    }
    *got = n;
    return 0;
fail:
    *got = off;
    return -1;
}

int sworn_ipc_send(int fd, const struct sworn_ipc_msg *m, int64_t deadline)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    long n = sworn_ipc_encode(m, frame, sizeof(frame));

    if (n < 0)
        return -1;
    return sworn_ipc_write_all(fd, frame, (size_t)n, deadline);
}

int sworn_ipc_recv(int fd, uint8_t frame[SWORN_IPC_FRAME_MAX], struct sworn_ipc_msg *m,
                   int64_t deadline)
{
    enum sworn_ipc_type type;
    uint32_t id = 0, body_len = 0;
    size_t got = 0;
    int rc;

    rc = sworn_ipc_read_all(fd, frame, SWORN_IPC_HDR_LEN, deadline, &got);
    if (rc < 0)
        return -1;
    if (rc == 1 && got == 0)
        return 1;
    if (rc == 1)
        return sworn_err_set(SWORN_ERR_IO, "ipc: the stream ended inside a frame header");
    /* Checking the header first bounds what the body read may take. */
    if (sworn_ipc_hdr_decode(frame, &type, &id, &body_len) < 0)
        return -1;
    rc = sworn_ipc_read_all(fd, frame + SWORN_IPC_HDR_LEN, body_len, deadline, &got);
    if (rc < 0)
        return -1;
    if (rc == 1)
        return sworn_err_set(SWORN_ERR_IO, "ipc: the stream ended inside a %lu-byte body",
                             (unsigned long)body_len);
    return sworn_ipc_decode(frame, SWORN_IPC_HDR_LEN + body_len, m);
}

/* --- the buffered reader ---------------------------------------------------------------------- */

void sworn_ipc_reader_init(struct sworn_ipc_reader *r)
{
    r->start = 0;
    r->end = 0;
    r->waits = 0;
}

size_t sworn_ipc_reader_buffered(const struct sworn_ipc_reader *r)
{
    return r->end - r->start;
}

int sworn_ipc_reader_ready(const struct sworn_ipc_reader *r)
{
    size_t avail = r->end - r->start;
    enum sworn_ipc_type type;
    uint32_t id = 0, body_len = 0;

    if (avail < SWORN_IPC_HDR_LEN)
        return 0;
    /* A refused header is ready too: the next call reports it without reading. */
    if (sworn_ipc_hdr_decode(r->buf + r->start, &type, &id, &body_len) < 0)
        return 1;
    return avail >= SWORN_IPC_HDR_LEN + (size_t)body_len;
}

int sworn_ipc_reader_next(struct sworn_ipc_reader *r, int fd, struct sworn_ipc_msg *m,
                          int64_t deadline)
{
    for (;;) {
        size_t avail = r->end - r->start;
        ssize_t got;

        if (avail >= SWORN_IPC_HDR_LEN) {
            enum sworn_ipc_type type;
            uint32_t id = 0, body_len = 0;

            /* The header first: a hostile length is refused before we wait for its body. */
            if (sworn_ipc_hdr_decode(r->buf + r->start, &type, &id, &body_len) < 0)
                return -1;
            if (avail >= SWORN_IPC_HDR_LEN + (size_t)body_len) {
                const uint8_t *frame = r->buf + r->start;

                r->start += SWORN_IPC_HDR_LEN + (size_t)body_len;
                return sworn_ipc_decode(frame, SWORN_IPC_HDR_LEN + (size_t)body_len, m);
            }
        }
        /* No whole frame: keep the partial one at the front, so that the rest of it (at most
         * SWORN_IPC_FRAME_MAX bytes in all) always fits behind it. */
        if (r->start > 0) {
            memmove(r->buf, r->buf + r->start, avail);
            r->start = 0;
            r->end = avail;
        }
        if (deadline != SWORN_IPC_FOREVER && now_ms() >= deadline)
            return sworn_err_set(SWORN_ERR_IO, "ipc: read: deadline passed");
        /* A side that usually finds its frames waiting (the child, behind pipelined requests)
         * reads at once; one that usually waits (the parent, for a signature) polls first
         * rather than pay a read that finds nothing. */
        if (r->waits)
            SWORN_GUARD(wait_fd(fd, POLLIN, deadline, "read"));
        /* As much as has arrived, up to the buffer's end: often several frames in one call. */
        got = recv(fd, r->buf + r->end, sizeof(r->buf) - r->end, MSG_DONTWAIT);
        if (got > 0) {
            r->end += (size_t)got;
            r->waits = 0;
            continue;
        }
        if (got == 0) {
            if (avail == 0)
                return 1;
            return sworn_err_set(SWORN_ERR_IO, "ipc: the stream ended inside a frame (%zu bytes)",
                                 avail);
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r->waits = 1;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == ECONNRESET)
            return sworn_err_set(SWORN_ERR_IO, "ipc: read: the peer reset the connection");
        return sworn_err_set(SWORN_ERR_IO, "ipc: read: %s", strerror(errno));
    }
fail:
    return -1;
}
