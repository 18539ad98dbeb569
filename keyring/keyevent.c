/*
 * keyevent.c -- key-event statements (contract and byte layout in keyevent.h).
 *
 * The parser reads the seven statement lines in their fixed order, then zero to two signature
 * lines, and checks at the end that formatting what it read gives back the input byte for byte:
 * with strict field decoders this holds by construction, and the final comparison keeps it so if
 * a decoder is ever loosened. Signatures are checked with sworn_signature_verify (signer.h), the
 * same code that checks every other sworn signature.
 */
#include "keyevent.h"

#include <stdio.h>
#include <string.h>

#include <openssl/sha.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"

#define MAGIC "sworn key-event v1"
#define SPKI_B64_MAX SWORN_BASE64_LEN(SWORN_SIGNER_SPKI_MAX)
#define SIG_B64_MAX SWORN_BASE64_LEN(SWORN_SIGNER_SIG_MAX)
#define LINE_MAX_LEN (16 + SPKI_B64_MAX)

static const char *const kind_names[] = {NULL, "rotate", "retire", "revoke"};

const char *sworn_keyevent_kind_name(enum sworn_keyevent_kind k)
{
    return k >= SWORN_KEYEVENT_ROTATE && k <= SWORN_KEYEVENT_REVOKE ? kind_names[k] : NULL;
}

/* Are the signature lines present exactly as the kind requires? */
static int signatures_fit_kind(const struct sworn_keyevent *ev)
{
    switch (ev->kind) {
    case SWORN_KEYEVENT_ROTATE:
        if (ev->old_sig_len == 0 || ev->new_sig_len == 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "key-event: a rotation needs the old key's signature and the new "
                                 "key's proof of possession");
        return 0;
    case SWORN_KEYEVENT_RETIRE:
        if (ev->old_sig_len == 0 || ev->new_sig_len != 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "key-event: a retirement carries exactly the old key's signature");
        return 0;
    case SWORN_KEYEVENT_REVOKE:
        if (ev->new_sig_len != 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "key-event: a revocation carries no new-signature");
        return 0;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "key-event: unknown event kind");
    }
}

/* --- Formatting. ----------------------------------------------------------------------------- */

struct writer {
    char *out;
    size_t cap, off;
};

static int put(struct writer *w, const char *s)
{
    size_t n = strlen(s);

    if (n >= w->cap - w->off)
        return sworn_err_set(SWORN_ERR_RANGE, "key-event: does not fit in %zu bytes", w->cap);
    memcpy(w->out + w->off, s, n);
    w->off += n;
    return 0;
}

static int put_line(struct writer *w, const char *word, const char *value)
{
    SWORN_GUARD(put(w, word));
    SWORN_GUARD(put(w, " "));
    SWORN_GUARD(put(w, value));
    SWORN_GUARD(put(w, "\n"));
    return 0;
fail:
    return -1;
}

static int put_b64_line(struct writer *w, const char *word, const uint8_t *p, size_t n)
{
    char b64[SPKI_B64_MAX + 1];

    if (sworn_base64_encode(p, n, b64, sizeof(b64)) < 0)
        return -1;
    return put_line(w, word, b64);
}

/* Check the statement fields of ev (everything but the signatures). */
static int check_statement(const struct sworn_keyevent *ev)
{
    uint8_t id[SWORN_KEY_ID_LEN];

    SWORN_ENSURE(sworn_keyevent_kind_name(ev->kind) != NULL, SWORN_ERR_FORMAT,
                 "key-event: unknown event kind");
    SWORN_ENSURE(sworn_keyring_purpose_name(ev->purpose) != NULL, SWORN_ERR_FORMAT,
                 "key-event: unknown purpose");
    SWORN_ENSURE(ev->effective_from >= SWORN_KEYRING_TIME_MIN &&
                     ev->effective_from <= SWORN_KEYRING_TIME_MAX,
                 SWORN_ERR_FORMAT, "key-event: effective-from out of range");
    SWORN_ENSURE(ev->old_sig_len <= SWORN_SIGNER_SIG_MAX && ev->new_sig_len <= SWORN_SIGNER_SIG_MAX,
                 SWORN_ERR_FORMAT, "key-event: signature too long");
    if (ev->kind != SWORN_KEYEVENT_ROTATE) {
        SWORN_ENSURE(ev->new_spki_len == 0, SWORN_ERR_FORMAT,
                     "key-event: only a rotation names a new key");
        return 0;
    }
    SWORN_GUARD(sworn_keyring_spki_check(ev->new_spki, ev->new_spki_len));
    SHA256(ev->new_spki, ev->new_spki_len, id);
    SWORN_ENSURE(memcmp(id, ev->new_id, sizeof(id)) == 0, SWORN_ERR_FORMAT,
                 "key-event: the new key id is not SHA-256 of the new SPKI");
    SWORN_ENSURE(memcmp(ev->new_id, ev->old_id, sizeof(id)) != 0, SWORN_ERR_FORMAT,
                 "key-event: a key cannot be rotated to itself");
    return 0;
fail:
    return -1;
}

static int write_statement(const struct sworn_keyevent *ev, struct writer *w)
{
    char hex[SWORN_KEY_ID_HEX_LEN + 1], when[SWORN_KEYRING_TIME_LEN + 1];

    SWORN_GUARD(check_statement(ev));
    SWORN_GUARD(put(w, MAGIC "\n"));
    SWORN_GUARD(put_line(w, "event", sworn_keyevent_kind_name(ev->kind)));
    SWORN_GUARD(put_line(w, "purpose", sworn_keyring_purpose_name(ev->purpose)));
    SWORN_GUARD(sworn_hex_encode(ev->old_id, SWORN_KEY_ID_LEN, hex, sizeof(hex)));
    SWORN_GUARD(put_line(w, "old", hex));
    if (ev->kind == SWORN_KEYEVENT_ROTATE) {
        SWORN_GUARD(sworn_hex_encode(ev->new_id, SWORN_KEY_ID_LEN, hex, sizeof(hex)));
        SWORN_GUARD(put_line(w, "new", hex));
        SWORN_GUARD(put_b64_line(w, "new-spki", ev->new_spki, ev->new_spki_len));
    } else {
        SWORN_GUARD(put_line(w, "new", "-"));
        SWORN_GUARD(put_line(w, "new-spki", "-"));
    }
    SWORN_GUARD(sworn_keyring_time_format(ev->effective_from, when));
    SWORN_GUARD(put_line(w, "effective-from", when));
    return 0;
fail:
    return -1;
}

long sworn_keyevent_statement(const struct sworn_keyevent *ev, char *out, size_t cap)
{
    struct writer w = {out, cap, 0};

    SWORN_ENSURE(ev != NULL && out != NULL && cap > 0, SWORN_ERR_ARG, "key-event: NULL argument");
    SWORN_GUARD(write_statement(ev, &w));
    out[w.off] = '\0';
    return (long)w.off;
fail:
    if (out != NULL && cap > 0)
        out[0] = '\0';
    return -1;
}

long sworn_keyevent_format(const struct sworn_keyevent *ev, char *out, size_t cap)
{
    struct writer w = {out, cap, 0};

    SWORN_ENSURE(ev != NULL && out != NULL && cap > 0, SWORN_ERR_ARG, "key-event: NULL argument");
    SWORN_GUARD(write_statement(ev, &w));
    SWORN_GUARD(signatures_fit_kind(ev));
    if (ev->old_sig_len > 0)
        SWORN_GUARD(put_b64_line(&w, "old-signature", ev->old_sig, ev->old_sig_len));
    if (ev->new_sig_len > 0)
        SWORN_GUARD(put_b64_line(&w, "new-signature", ev->new_sig, ev->new_sig_len));
    out[w.off] = '\0';
    return (long)w.off;
fail:
    if (out != NULL && cap > 0)
        out[0] = '\0';
    return -1;
}

/* --- Parsing. -------------------------------------------------------------------------------- */

/* Read the line "<word> <value>". OUT: *value, *value_len (pointing into the input). */
static int field_line(struct sworn_buf *b, const char *word, const char **value, size_t *value_len)
{
    const uint8_t *line = NULL;
    size_t len = 0, wl = strlen(word);

    if (sworn_buf_get_line(b, LINE_MAX_LEN, &line, &len) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "key-event: the %s line is missing, too long, or lacks its newline",
                             word);
    if (len <= wl + 1 || memcmp(line, word, wl) != 0 || line[wl] != ' ')
        return sworn_err_set(SWORN_ERR_FORMAT, "key-event: expected a line \"%s <value>\"", word);
    *value = (const char *)line + wl + 1;
    *value_len = len - wl - 1;
    return 0;
}

static int is_dash(const char *v, size_t len)
{
    return len == 1 && v[0] == '-';
}

static int hex_id(const char *v, size_t len, uint8_t id[SWORN_KEY_ID_LEN])
{
    SWORN_ENSURE(len == SWORN_KEY_ID_HEX_LEN, SWORN_ERR_FORMAT,
                 "key-event: a key id must be 64 lower-case hex digits");
    for (size_t i = 0; i < len; i++)
        SWORN_ENSURE((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f'), SWORN_ERR_FORMAT,
                     "key-event: a key id must be 64 lower-case hex digits");
    return sworn_hex_decode(v, len, id, SWORN_KEY_ID_LEN);
fail:
    return -1;
}

static int sig_field(const char *v, size_t len, uint8_t *sig, size_t *sig_len)
{
    if (len > SIG_B64_MAX || sworn_base64_decode(v, len, sig, SWORN_SIGNER_SIG_MAX, sig_len) < 0 ||
        *sig_len == 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "key-event: a signature must be canonical base64 of 1..%d bytes",
                             SWORN_SIGNER_SIG_MAX);
    return 0;
}

int sworn_keyevent_parse(const char *data, size_t len, struct sworn_keyevent *out)
{
    struct sworn_buf b;
    const uint8_t *line = NULL;
    const char *v = NULL, *nv = NULL;
    size_t line_len = 0, vl = 0, nvl = 0;
    char again[SWORN_KEYEVENT_MAX + 1];
    long n;
    int i;

    SWORN_ENSURE(data != NULL && out != NULL, SWORN_ERR_ARG, "key-event: NULL argument");
    SWORN_ENSURE(len <= SWORN_KEYEVENT_MAX, SWORN_ERR_RANGE, "key-event: %zu bytes, more than %d",
                 len, SWORN_KEYEVENT_MAX);
    memset(out, 0, sizeof(*out));
    b = sworn_buf_init(data, len);
    SWORN_ENSURE(sworn_buf_get_line(&b, LINE_MAX_LEN, &line, &line_len) == 0 &&
                     line_len == strlen(MAGIC) && memcmp(line, MAGIC, line_len) == 0,
                 SWORN_ERR_FORMAT, "key-event: the first line must be \"" MAGIC "\"");

    SWORN_GUARD(field_line(&b, "event", &v, &vl));
    for (i = SWORN_KEYEVENT_ROTATE; i <= SWORN_KEYEVENT_REVOKE; i++)
        if (strlen(kind_names[i]) == vl && memcmp(kind_names[i], v, vl) == 0)
            out->kind = (enum sworn_keyevent_kind)i;
    SWORN_ENSURE(out->kind != 0, SWORN_ERR_FORMAT,
                 "key-event: the event must be rotate, retire or revoke");
    SWORN_GUARD(field_line(&b, "purpose", &v, &vl));
    SWORN_GUARD(sworn_keyring_purpose_parse(v, vl, &out->purpose));
    SWORN_GUARD(field_line(&b, "old", &v, &vl));
    SWORN_GUARD(hex_id(v, vl, out->old_id));
    SWORN_GUARD(field_line(&b, "new", &nv, &nvl));
    SWORN_GUARD(field_line(&b, "new-spki", &v, &vl));
    if (out->kind == SWORN_KEYEVENT_ROTATE) {
        SWORN_GUARD(hex_id(nv, nvl, out->new_id));
        SWORN_ENSURE(vl <= SPKI_B64_MAX &&
                         sworn_base64_decode(v, vl, out->new_spki, sizeof(out->new_spki),
                                             &out->new_spki_len) == 0 &&
                         out->new_spki_len > 0,
                     SWORN_ERR_FORMAT, "key-event: new-spki is not canonical base64 of an SPKI");
    } else {
        SWORN_ENSURE(is_dash(nv, nvl) && is_dash(v, vl), SWORN_ERR_FORMAT,
                     "key-event: new and new-spki must be \"-\" unless the event is rotate");
    }
    SWORN_GUARD(field_line(&b, "effective-from", &v, &vl));
    SWORN_GUARD(sworn_keyring_time_parse(v, vl, &out->effective_from));

    if (sworn_buf_remaining(&b) > 0 && b.p[b.off] == 'o') {
        SWORN_GUARD(field_line(&b, "old-signature", &v, &vl));
        SWORN_GUARD(sig_field(v, vl, out->old_sig, &out->old_sig_len));
    }
    if (sworn_buf_remaining(&b) > 0) {
        SWORN_GUARD(field_line(&b, "new-signature", &v, &vl));
        SWORN_GUARD(sig_field(v, vl, out->new_sig, &out->new_sig_len));
    }
    SWORN_ENSURE(sworn_buf_remaining(&b) == 0, SWORN_ERR_FORMAT,
                 "key-event: bytes after the signature lines");
    /* Also checks the statement's fields and which signatures the kind needs. */
    n = sworn_keyevent_format(out, again, sizeof(again));
    SWORN_GUARD(n);
    SWORN_ENSURE((size_t)n == len && memcmp(again, data, len) == 0, SWORN_ERR_FORMAT,
                 "key-event: not in canonical form");
    return 0;
fail:
    return -1;
}

/* --- Digests and verification. --------------------------------------------------------------- */

static int digest_with(const struct sworn_keyevent *ev, const char *prefix, uint8_t out[32])
{
    char text[sizeof(SWORN_KEYEVENT_POP_PREFIX) + SWORN_KEYEVENT_STATEMENT_MAX + 1];
    size_t pl = strlen(prefix);
    long n;

    memcpy(text, prefix, pl);
    n = sworn_keyevent_statement(ev, text + pl, sizeof(text) - pl);
    if (n < 0)
        return -1;
    SHA256((const uint8_t *)text, pl + (size_t)n, out);
    return 0;
}

int sworn_keyevent_digest(const struct sworn_keyevent *ev, uint8_t out[32])
{
    if (ev == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "key-event: NULL argument");
    return digest_with(ev, "", out);
}

int sworn_keyevent_pop_digest(const struct sworn_keyevent *ev, uint8_t out[32])
{
    if (ev == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "key-event: NULL argument");
    return digest_with(ev, SWORN_KEYEVENT_POP_PREFIX, out);
}

int sworn_keyevent_verify(const struct sworn_keyevent *ev, const struct sworn_keyring *kr)
{
    const struct sworn_keyring_key *old, *nk;
    uint8_t d[32];
    char why[SWORN_ERR_MSG_MAX];

    SWORN_ENSURE(ev != NULL && kr != NULL, SWORN_ERR_ARG, "key-event: NULL argument");
    SWORN_GUARD(check_statement(ev));
    SWORN_GUARD(signatures_fit_kind(ev));
    old = sworn_keyring_find(kr, ev->old_id);
    SWORN_ENSURE(old != NULL, SWORN_ERR_NOTFOUND, "key-event: the old key is not in the keyring");
    SWORN_ENSURE(old->purpose == ev->purpose, SWORN_ERR_VERIFY,
                 "key-event: the old key is a %s key, the statement says %s",
                 sworn_keyring_purpose_name(old->purpose), sworn_keyring_purpose_name(ev->purpose));
    if (ev->kind != SWORN_KEYEVENT_REVOKE &&
        sworn_keyring_key_valid_at(kr, ev->old_id, ev->purpose, ev->effective_from - 1) < 0) {
        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        sworn_err_set(SWORN_ERR_VERIFY,
                      "key-event: the old key was not valid just before effective-from: %s", why);
        goto fail;
    }
    SWORN_GUARD(sworn_keyevent_digest(ev, d));
    if (ev->old_sig_len > 0 &&
        sworn_signature_verify(old->spki, old->spki_len, SWORN_PURPOSE_KEY_EVENT, d, sizeof(d),
                               ev->old_sig, ev->old_sig_len) < 0) {
        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        sworn_err_set(SWORN_ERR_VERIFY, "key-event: the old key's signature does not verify: %s",
                      why);
        goto fail;
    }
    if (ev->kind != SWORN_KEYEVENT_ROTATE)
        return 0;
    SWORN_GUARD(sworn_keyevent_pop_digest(ev, d));
    if (sworn_signature_verify(ev->new_spki, ev->new_spki_len, SWORN_PURPOSE_KEY_EVENT, d,
                               sizeof(d), ev->new_sig, ev->new_sig_len) < 0) {
        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        sworn_err_set(SWORN_ERR_VERIFY,
                      "key-event: the new key's proof of possession does not verify: %s", why);
        goto fail;
    }
    nk = sworn_keyring_find(kr, ev->new_id);
    SWORN_ENSURE(nk == NULL || nk->purpose == ev->purpose, SWORN_ERR_VERIFY,
                 "key-event: the keyring holds the new key with another purpose");
    return 0;
fail:
    return -1;
}
