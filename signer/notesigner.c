/*
 * notesigner.c -- see notesigner.h.
 */
#include "notesigner.h"

#include <string.h>

#include "err.h"
#include "notekey.h"

static int checkpoint_sign(void *ctx, const uint8_t *msg, size_t len, uint8_t *sig, size_t cap,
                           size_t *sig_len)
{
    return sworn_signer_sign(ctx, SWORN_PURPOSE_CHECKPOINT, msg, len, sig, cap, sig_len);
}

/* The signer belongs to its owner: closing the note signer leaves it open. */
static void checkpoint_close(void *ctx)
{
    (void)ctx;
}

static const struct sworn_note_signer_ops signer_ops = {
    .kind = "sworn-signer",
    .sign = checkpoint_sign,
    .close = checkpoint_close,
};

int sworn_signer_as_note_signer(struct sworn_signer *s, const char *name,
                                struct sworn_note_signer *out)
{
    size_t spki_len;
    const uint8_t *spki = sworn_signer_spki(s, &spki_len);

    if (sworn_note_pub_from_spki(name, spki, spki_len, sworn_signer_alg(s), out) < 0)
        return -1;
    out->ops = &signer_ops;
    out->ctx = s;
    return 0;
}
