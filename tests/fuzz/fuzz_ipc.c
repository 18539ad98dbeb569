/*
 * fuzz_ipc.c -- libFuzzer target for ipc.c, the signer socketpair's frames: sworn_ipc_decode and
 * sworn_ipc_hdr_decode on the input as one frame, sworn_ipc_recv on the input as a stream of
 * frames, and sworn_ipc_errmsg_clean on the input as text.
 *
 * Besides not crashing, it checks properties that a lax decoder would break:
 *   - a decoded frame re-encodes to exactly the input bytes (one encoding per message, nothing
 *     skipped), and its data lies inside the input;
 *   - the header decoder agrees with the frame decoder on type, id and body length;
 *   - reading the input as a stream yields only frames that re-encode to their own bytes, and
 *     ends in a clean end, an I/O error or a format error, never anything else;
 *   - the buffered reader (sworn_ipc_reader_next), which may take several frames in one read,
 *     yields exactly the same frames and the same end as sworn_ipc_recv on the same stream;
 *   - a cleaned error message is valid UTF-8 without control characters, and fits the limit.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/ipc/) holds one valid frame of every type, error replies, and a few
 * streams of several frames.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "ipc.h"
#include "utf8.h"
#include "fuzz.h"

#define STREAM_MAX 16384 /* stays well inside a socketpair's buffer, so writing never blocks */

static void check_frame(const uint8_t *data, size_t size)
{
    uint8_t again[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg m;
    enum sworn_ipc_type type;
    uint32_t id, body_len;
    long n;

    if (sworn_ipc_decode(data, size, &m) != 0) {
        if (sworn_err_code() != SWORN_ERR_FORMAT)
            abort();
        return;
    }
    if (size < SWORN_IPC_HDR_LEN || size > SWORN_IPC_FRAME_MAX)
        abort();
    if (m.data_len > 0 && (m.data < data || m.data + m.data_len > data + size))
        abort();
    if (sworn_ipc_hdr_decode(data, &type, &id, &body_len) != 0 || type != m.type || id != m.id ||
        body_len != size - SWORN_IPC_HDR_LEN)
        abort();
    n = sworn_ipc_encode(&m, again, sizeof(again));
    if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0)
        abort();
}

/* A socket from which data can be read, then the end of the stream; -1 when none could be made. */
static int stream_of(const uint8_t *data, size_t size, int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return -1;
    if (sworn_ipc_write_all(sv[0], data, size, SWORN_IPC_FOREVER) != 0 ||
        shutdown(sv[0], SHUT_WR) != 0)
        abort();
    return 0;
}

static void check_stream(const uint8_t *data, size_t size)
{
    static struct sworn_ipc_reader r;
    uint8_t frame[SWORN_IPC_FRAME_MAX], again[SWORN_IPC_FRAME_MAX], again2[SWORN_IPC_FRAME_MAX];
    int sv[2], sv2[2];

    if (size > STREAM_MAX || stream_of(data, size, sv) != 0)
        return;
    if (stream_of(data, size, sv2) != 0) {
        close(sv[0]);
        close(sv[1]);
        return;
    }
    sworn_ipc_reader_init(&r);
    for (;;) {
        struct sworn_ipc_msg m, m2;
        int rc = sworn_ipc_recv(sv[1], frame, &m, SWORN_IPC_FOREVER);
        enum sworn_err_code code = sworn_err_code();
        int rc2 = sworn_ipc_reader_next(&r, sv2[1], &m2, SWORN_IPC_FOREVER);
        long n, n2;

        if (rc2 != rc || (rc < 0 && sworn_err_code() != code))
            abort();
        if (rc == 1)
            break;
        if (rc < 0) {
            if (code != SWORN_ERR_IO && code != SWORN_ERR_FORMAT)
                abort();
            break;
        }
        n = sworn_ipc_encode(&m, again, sizeof(again));
        if (n < SWORN_IPC_HDR_LEN || memcmp(again, frame, (size_t)n) != 0)
            abort();
        n2 = sworn_ipc_encode(&m2, again2, sizeof(again2));
        if (n2 != n || memcmp(again2, again, (size_t)n) != 0)
            abort();
    }
    close(sv[0]);
    close(sv[1]);
    close(sv2[0]);
    close(sv2[1]);
}

static void check_errmsg(const uint8_t *data, size_t size)
{
    char in[2 * SWORN_IPC_ERRMSG_MAX + 1], out[SWORN_IPC_ERRMSG_MAX + 1];
    size_t len = size < sizeof(in) - 1 ? size : sizeof(in) - 1, n;

    memcpy(in, data, len);
    in[len] = '\0';
    n = sworn_ipc_errmsg_clean(in, out);
    if (n == 0 || n > SWORN_IPC_ERRMSG_MAX || strlen(out) != n ||
        sworn_utf8_check(out, n, 0, "fuzz") != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_frame(data, size);
    check_stream(data, size);
    check_errmsg(data, size);
    return 0;
}
