/*
 * fuzz_hostlink.c -- libFuzzer target for proxy/p_hostlink.c, the reader of a hostlink
 * connection's first bytes (sworn-run's HostlinkHello frame, then the agent's bytes). The input
 * is those bytes; the listener's principal is "agent-1" (the seeds' hellos name it, or another).
 * Asserted, for every input:
 *   - the answer is DONE, MORE or REFUSED; REFUSED comes with a sentence and *used of 4 (a
 *     length out of 1..1024) or 4 + the length; MORE with *used 0 and at most 4 + 1024 - 1 bytes
 *     of the frame there; *out is written on DONE only;
 *   - on DONE: *used is 4 + the length field, the sandbox a name (1..128 bytes 0x21..0x7e,
 *     NUL-terminated in its array), sandbox_start_index not 0, and the frame is exactly what
 *     sworn_frame_pack_hostlink_hello makes of the hello read (principal agent-1): canonical;
 *   - the answer does not depend on the reads: every prefix of the input answers MORE or the
 *     input's own answer, MORE up to the frame's end and the input's answer from there on, and
 *     the frame alone (the bytes before *used) answers as the input does;
 *   - the answer is the same twice (no hidden state).
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "p_hostlink.h"

#define PRINCIPAL "agent-1"

static void must(int ok)
{
    if (!ok)
        abort();
}

static int read_once(const uint8_t *p, size_t n, struct sworn_phostlink *out, size_t *used,
                     const char **why)
{
    int rc;

    memset(out, 0x5A, sizeof(*out));
    rc = sworn_phostlink_read(p, n, PRINCIPAL, out, used, why);
    must(rc == SWORN_PHOSTLINK_DONE || rc == SWORN_PHOSTLINK_MORE || rc == SWORN_PHOSTLINK_REFUSED);
    return rc;
}

static void check_done(const uint8_t *p, size_t n, const struct sworn_phostlink *h, size_t used)
{
    Sworn__V1__HostlinkHello m = SWORN__V1__HOSTLINK_HELLO__INIT;
    uint8_t *frame = NULL;
    size_t frame_len = 0,
           len = ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | (size_t)p[3];

    must(len >= 1 && len <= SWORN_HOSTLINK_HELLO_MAX && used == 4 + len && used <= n);
    must(memchr(h->sandbox, '\0', sizeof(h->sandbox)) != NULL);
    must(sworn_frame_name_ok(h->sandbox));
    must(h->sandbox_start_index != 0);
    m.principal = PRINCIPAL;
    m.sandbox = (char *)h->sandbox;
    m.sandbox_start_index = h->sandbox_start_index;
    m.agent_uid = h->agent_uid;
    must(sworn_frame_pack_hostlink_hello(&m, &frame, &frame_len) == 0);
    must(frame_len == used && memcmp(frame, p, used) == 0);
    free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_phostlink h, again;
    size_t used = 0, used2 = 0, frame_end;
    const char *why = NULL, *why2 = NULL;
    int rc = read_once(data, size, &h, &used, &why), rc2;

    rc2 = read_once(data, size, &again, &used2, &why2);
    must(rc2 == rc && used2 == used && why2 == why);
    switch (rc) {
    case SWORN_PHOSTLINK_DONE:
        must(why == NULL);
        must(memcmp(&h, &again, sizeof(h)) == 0);
        check_done(data, size, &h, used);
        frame_end = used;
        break;
    case SWORN_PHOSTLINK_REFUSED:
        must(why != NULL && why[0] != '\0');
        must(used == 4 || (used > 4 && used <= 4 + SWORN_HOSTLINK_HELLO_MAX && used <= size));
        frame_end = used;
        break;
    default:
        must(used == 0 && why == NULL && size < 4 + SWORN_HOSTLINK_HELLO_MAX);
        frame_end = size;
        break;
    }
    /* Every prefix: MORE before the frame's end, the input's answer from it on. */
    for (size_t k = 0; k <= size && k <= SWORN_PHOSTLINK_FRAME_MAX; k++) {
        int rk = read_once(data, k, &again, &used2, &why2);

        if (k < frame_end) {
            must(rk == SWORN_PHOSTLINK_MORE);
            continue;
        }
        must(rk == rc && used2 == used && why2 == why);
        if (rc == SWORN_PHOSTLINK_DONE)
            must(memcmp(&h, &again, sizeof(h)) == 0);
        if (k > frame_end + 8)
            break; /* past the frame the bytes are not looked at: a few are enough to show it */
    }
    return 0;
}
