/*
 * p_mask.h -- masking the real credential in what upstream sends back, so that an upstream which
 * echoes request headers (or a token endpoint that repeats the key) does not hand the secret to
 * the agent (docs/proxy.md, "Credentials"). Every occurrence of the exact value is overwritten
 * with '*' byte for byte: lengths and framing stay as upstream sent them.
 *
 * The stream is masked across reads: the last (length - 1) bytes of what was fed are held back
 * until more comes (they might be the start of an occurrence) or the stream ends
 * (sworn_pmask_flush). A colluding upstream can always encode the value some other way: that is
 * the threat model's, not this module's (docs/threat-model.md).
 *
 * Memory: the mask keeps its own copy of the value and the held bytes, wiped when it is freed.
 * Thread safety: one per stream.
 */
#ifndef SWORN_P_MASK_H
#define SWORN_P_MASK_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

struct sworn_pmask {
    uint8_t *secret; /* NULL: nothing to mask (everything passes straight through) */
    size_t len;
    uint8_t *work; /* held bytes first, then the bytes being fed */
    size_t held, cap;
    uint64_t masked; /* occurrences overwritten so far */
};

/* Mask value[0..len) from now on (len 0: pass everything). Returns 0, or -1 (SWORN_ERR_NOMEM). */
int sworn_pmask_init(struct sworn_pmask *m, const uint8_t *value, size_t len);

/* Mask p[0..n) and append what may be sent now to out. Returns 0, or -1 (out of memory). */
int sworn_pmask_feed(struct sworn_pmask *m, const uint8_t *p, size_t n, struct evbuffer *out);

/* The stream ended: append the held bytes. Returns 0, or -1. */
int sworn_pmask_flush(struct sworn_pmask *m, struct evbuffer *out);

/* Mask a complete buffer in place (a response head). Returns the occurrences masked. */
size_t sworn_pmask_inplace(const struct sworn_pmask *m, uint8_t *p, size_t n);

/* Wipe and free. Safe on a zeroed one. */
void sworn_pmask_free(struct sworn_pmask *m);

#endif
