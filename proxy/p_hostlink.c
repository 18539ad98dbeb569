/*
 * p_hostlink.c -- the hostlink hello reader (p_hostlink.h).
 *
 * Acceptance is the wire's (sworn_frame_unpack_hostlink_hello): this file adds the framing, the
 * listener's principal, and a static sentence for each way a hello is refused, found by a second,
 * lenient decode of a body the strict one refused (only to say why: nothing of it is used).
 */
#include "p_hostlink.h"

#include <string.h>

#include "buf.h"
#include "err.h"
#include "sworn.pb-c.h"

/* Why the strict decoder refused body[0..len): the first rule the body breaks, in the order a
 * reader of the frame meets them. */
static const char *why_refused(const uint8_t *body, size_t len)
{
    Sworn__V1__HostlinkHello *m;
    const char *why;

    if (sworn_err_code() == SWORN_ERR_NOMEM)
        return "the hostlink hello could not be checked (out of memory)";
    m = sworn__v1__hostlink_hello__unpack(NULL, len, body);
    if (m == NULL)
        return "the hostlink hello does not decode as a HostlinkHello";
    if (m->version != SWORN_WIRE_VERSION)
        why = "the hostlink hello is not of wire version 1";
    else if (!sworn_frame_name_ok(m->principal))
        why = "the hostlink hello's principal is not a name of 1..128 bytes 0x21..0x7e";
    else if (!sworn_frame_name_ok(m->sandbox))
        why = "the hostlink hello's sandbox is not a name of 1..128 bytes 0x21..0x7e";
    else if (m->sandbox_start_index == 0)
        why = "the hostlink hello has no sandbox_start_index (0)";
    else
        why = "the hostlink hello is not canonically encoded or holds unknown fields";
    sworn__v1__hostlink_hello__free_unpacked(m, NULL);
    return why;
}

int sworn_phostlink_read(const uint8_t *p, size_t n, const char *principal,
                         struct sworn_phostlink *out, size_t *used, const char **why)
{
    struct sworn_buf b = sworn_buf_init(p, n);
    const uint8_t *body = NULL;
    Sworn__V1__HostlinkHello *m;
    uint32_t len = 0;

    *used = 0;
    *why = NULL;
    if (sworn_buf_get_u32be(&b, &len) != 0)
        return SWORN_PHOSTLINK_MORE;
    if (len == 0 || len > SWORN_HOSTLINK_HELLO_MAX) {
        *used = 4;
        *why = len == 0 ? "the hostlink hello's length is 0"
                        : "the hostlink hello's length is above 1024 bytes (not a hello)";
        return SWORN_PHOSTLINK_REFUSED;
    }
    if (sworn_buf_get_ptr(&b, len, &body) != 0)
        return SWORN_PHOSTLINK_MORE;
    *used = 4u + len;
    m = sworn_frame_unpack_hostlink_hello(body, len);
    if (m == NULL) {
        *why = why_refused(body, len);
        return SWORN_PHOSTLINK_REFUSED;
    }
    if (principal == NULL || strcmp(m->principal, principal) != 0) {
        sworn__v1__hostlink_hello__free_unpacked(m, NULL);
        *why = "the hostlink hello names another principal than the listener's";
        return SWORN_PHOSTLINK_REFUSED;
    }
    /* sworn_frame_name_ok held: the name fits with its NUL. */
    memcpy(out->sandbox, m->sandbox, strlen(m->sandbox) + 1);
    out->sandbox_start_index = m->sandbox_start_index;
    out->agent_uid = m->agent_uid;
    sworn__v1__hostlink_hello__free_unpacked(m, NULL);
    return SWORN_PHOSTLINK_DONE;
}
