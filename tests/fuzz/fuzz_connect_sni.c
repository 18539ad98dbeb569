/*
 * fuzz_connect_sni.c -- libFuzzer target for proxy/p_sni.c, the reader of the first bytes of a
 * CONNECT tunnel. The input is those bytes.
 * Asserted, for every input:
 *   - the answer is 0, 1 or -1; -1 comes with a reason; 1 and -1 leave *out all zero;
 *   - on 0: the name is NUL-terminated inside its array, 1..255 bytes of lower-case letters,
 *     digits, '-' and '.', with no empty label (one trailing dot aside), when has_sni says so,
 *     and empty otherwise; the flags are 0 or 1;
 *   - the answer is the same twice (no hidden state), and sworn_sni_looks_tls is 0 whenever a
 *     non-TLS answer is due to the first bytes;
 *   - prefixes: on 0, the record's end is 5 + its length field; every shorter prefix from the
 *     record header on answers 1, and the record alone gives the same result as the input;
 *     on 1, the input is shorter than the record; a prefix answering -1 makes the input -1.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "p_sni.h"

static void check_out(int rc, const struct sworn_sni *s, const char *why)
{
    static const struct sworn_sni zero;

    if (rc != 0 && rc != 1 && rc != -1)
        abort();
    if (rc == -1 && why == NULL)
        abort();
    if (rc != 0) {
        if (memcmp(s, &zero, sizeof(zero)) != 0)
            abort();
        return;
    }
    if (memchr(s->name, '\0', sizeof(s->name)) == NULL)
        abort();
    if ((s->has_sni != 0 && s->has_sni != 1) || (s->offers_http11 != 0 && s->offers_http11 != 1) ||
        (s->offers_h2 != 0 && s->offers_h2 != 1))
        abort();
    if (!s->has_sni) {
        if (s->name[0] != '\0')
            abort();
        return;
    }
    size_t n = strlen(s->name), label = 0;

    if (n < 1 || n > SWORN_SNI_NAME_MAX)
        abort();
    for (size_t i = 0; i < n; i++) {
        char c = s->name[i];

        if (c == '.') {
            if (label == 0)
                abort();
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
            if (++label > 63)
                abort();
        } else {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_sni a, b;
    const char *why = NULL, *why2 = NULL;
    int rc, rc2;

    rc = sworn_sni_peek(data, size, &a, &why);
    check_out(rc, &a, why);
    rc2 = sworn_sni_peek(data, size, &b, &why2);
    if (rc2 != rc || memcmp(&a, &b, sizeof(a)) != 0)
        abort();
    if (!sworn_sni_looks_tls(data, size) && rc != -1)
        abort();
    if (rc == 0) {
        size_t end;

        if (size < SWORN_SNI_HEADER_LEN)
            abort();
        end = SWORN_SNI_HEADER_LEN + ((size_t)data[3] << 8 | data[4]);
        if (end > size || end > SWORN_SNI_PEEK_MAX)
            abort();
        rc2 = sworn_sni_peek(data, end, &b, &why2);
        if (rc2 != 0 || memcmp(&a, &b, sizeof(a)) != 0)
            abort();
        /* A few shorter prefixes (all of them would be quadratic). */
        for (size_t k = end - 1, step = 1; k >= SWORN_SNI_HEADER_LEN && k < end; k -= step) {
            rc2 = sworn_sni_peek(data, k, &b, &why2);
            if (rc2 != 1)
                abort();
            check_out(rc2, &b, why2);
            if (k < step)
                break;
            step *= 2;
        }
    }
    if (rc == 1 && size >= SWORN_SNI_HEADER_LEN &&
        size >= SWORN_SNI_HEADER_LEN + ((size_t)data[3] << 8 | data[4]))
        abort();
    /* Once a prefix is refused, so is the whole. */
    rc2 = sworn_sni_peek(data, size / 2, &b, &why2);
    check_out(rc2, &b, why2);
    if (rc2 == -1 && rc != -1)
        abort();
    rc2 = sworn_sni_peek(data, size < 9 ? size : 9, &b, &why2);
    check_out(rc2, &b, why2);
    if (rc2 == -1 && rc != -1)
        abort();
    return 0;
}
