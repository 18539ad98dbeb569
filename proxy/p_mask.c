/*
 * p_mask.c -- masking the credential in upstream's bytes (p_mask.h).
 */
#define _GNU_SOURCE /* memmem */
#include "p_mask.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "err.h"
#include "wipe.h"

int sworn_pmask_init(struct sworn_pmask *m, const uint8_t *value, size_t len)
{
    memset(m, 0, sizeof(*m));
    if (len == 0)
        return 0;
    m->secret = malloc(len);
    SWORN_ENSURE(m->secret != NULL, SWORN_ERR_NOMEM, "out of memory");
    memcpy(m->secret, value, len);
    m->len = len;
    return 0;
fail:
    return -1;
}

size_t sworn_pmask_inplace(const struct sworn_pmask *m, uint8_t *p, size_t n)
{
    size_t count = 0, off = 0;

    if (m->secret == NULL)
        return 0;
    while (off + m->len <= n) {
        uint8_t *hit = memmem(p + off, n - off, m->secret, m->len);

        if (hit == NULL)
            break;
        memset(hit, '*', m->len);
        count++;
        off = (size_t)(hit - p) + m->len;
    }
    return count;
}

int sworn_pmask_feed(struct sworn_pmask *m, const uint8_t *p, size_t n, struct evbuffer *out)
{
    size_t total, keep;

    if (m->secret == NULL)
        return evbuffer_add(out, p, n) == 0 ? 0 : sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    if (n == 0)
        return 0;
    total = m->held + n;
    if (total > m->cap) {
        uint8_t *w = malloc(total);

        SWORN_ENSURE(w != NULL, SWORN_ERR_NOMEM, "out of memory");
        if (m->work != NULL) {
            memcpy(w, m->work, m->held);
            sworn_memzero(m->work, m->cap);
            free(m->work);
        }
        m->work = w;
        m->cap = total;
    }
    memcpy(m->work + m->held, p, n);
    m->masked += sworn_pmask_inplace(m, m->work, total);
    keep = m->len - 1 < total ? m->len - 1 : total;
    if (evbuffer_add(out, m->work, total - keep) != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    memmove(m->work, m->work + (total - keep), keep);
    m->held = keep;
    return 0;
fail:
    return -1;
}

int sworn_pmask_flush(struct sworn_pmask *m, struct evbuffer *out)
{
    if (m->held > 0 && evbuffer_add(out, m->work, m->held) != 0)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    m->held = 0;
    return 0;
}

void sworn_pmask_free(struct sworn_pmask *m)
{
    if (m->secret != NULL) {
        sworn_memzero(m->secret, m->len);
        free(m->secret);
    }
    if (m->work != NULL) {
        sworn_memzero(m->work, m->cap);
        free(m->work);
    }
    memset(m, 0, sizeof(*m));
}
