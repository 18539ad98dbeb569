/*
 * fuzz_httpsig.c -- libFuzzer target for httpsig/sig_base.c (RFC 9421 signature bases) and the
 * signer's shape check of a base (purpose 4), and proxy/p_sign.c's field-name rule.
 *
 * The input is used three ways:
 *   - as a message to sign for purpose 4: sworn_sigbase_check_shape answers 0 or -1; on 0 the
 *     message starts with "\"@", does not end with LF and holds no NUL, CR or 0xFF, so it is no
 *     checkpoint body and no other purpose's TBS (docs/formats.md section 10);
 *   - split at '\n' into lines "identifier<TAB>value" (at most 16 components) and, on the last
 *     line, a tag: sworn_sigbase_params_text and sworn_sigbase_build answer 0 or -1; on 0 the base
 *     is at most 16384 bytes, has one line per component plus the params line, ends with the
 *     params text, and when the first identifier is a derived one it passes the shape check;
 *   - split into method, host, path (at '\n'): sworn's profile, sworn_httpsig_base, answers 0 or
 *     -1, and every base it builds passes the shape check (decisiond's bases are never refused by
 *     its own signer) and ends with its params text; with a path starting with '/' (a canonical
 *     one) it passes the signer's profile check under its key id and fails under another;
 * And each line as a field name for sworn_psign_field_dropped: deterministic, and "sworn-entry"
 * in any case or with '_' is always dropped.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "p_sign.h"
#include "sig_base.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

static uint8_t base[SWORN_SIGBASE_MAX];

static void shape(const uint8_t *d, size_t n)
{
    const char *why = NULL;
    int rc = sworn_sigbase_check_shape(d, n, &why);

    CHECK(rc == 0 || rc == -1);
    if (rc != 0) {
        CHECK(why != NULL);
        return;
    }
    CHECK(n >= 2 && n <= SWORN_SIGBASE_MAX && d[0] == '"' && d[1] == '@' && d[n - 1] != '\n');
    for (size_t i = 0; i < n; i++)
        CHECK(d[i] != 0 && d[i] != '\r' && d[i] != 0xff);
}

static void components(char *text)
{
    struct sworn_sigbase_item items[SWORN_SIGBASE_COMPONENTS_MAX + 1];
    struct sworn_sigbase_param ps[2] = {{"created", 1, NULL}, {"tag", 0, ""}};
    char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t n = 0, plen = 0, blen = 0, lines = 0;
    const char *why = NULL;
    char *save = NULL, *line, *last = "";

    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *tab = strchr(line, '\t');

        if (tab == NULL || n == SWORN_SIGBASE_COMPONENTS_MAX + 1) {
            last = line;
            continue;
        }
        *tab = '\0';
        items[n++] = (struct sworn_sigbase_item){line, tab + 1, strlen(tab + 1)};
    }
    ps[1].sval = last;
    if (sworn_sigbase_params_text(items, n, ps, 2, params, sizeof(params), &plen, &why) != 0)
        return;
    CHECK(plen == strlen(params) && params[0] == '(');
    if (sworn_sigbase_build(items, n, params, plen, base, sizeof(base), &blen, &why) != 0)
        return;
    CHECK(blen <= SWORN_SIGBASE_MAX && blen >= plen);
    CHECK(memcmp(base + blen - plen, params, plen) == 0);
    for (size_t i = 0; i < blen; i++)
        lines += base[i] == '\n';
    CHECK(lines == n);
    if (n > 0 && items[0].id[1] == '@')
        CHECK(sworn_sigbase_check_shape(base, blen, &why) == 0);
}

static void profile(char *text)
{
    static const char *const schemes[] = {"http", "https", "ws", "wss", "tcp"};
    static const char keyid[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    uint8_t leaf[32] = {0}, body[32] = {0};
    char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    char *method = text, *host, *path;
    size_t blen = 0, plen = 0;
    const char *why = NULL;
    struct sworn_httpsig_request r;

    host = strchr(method, '\n');
    if (host == NULL)
        return;
    *host++ = '\0';
    path = strchr(host, '\n');
    if (path == NULL)
        return;
    *path++ = '\0';
    r = (struct sworn_httpsig_request){
        method, schemes[strlen(path) % 5],        host, (unsigned)(strlen(host) * 977 % 70000),
        path,   strlen(method) % 2 ? body : NULL, leaf};
    if (sworn_httpsig_base(&r, (int64_t)strlen(path) * 1000003, keyid, base, sizeof(base), &blen,
                           params, sizeof(params), &plen, &why) != 0) {
        CHECK(why != NULL);
        return;
    }
    CHECK(sworn_sigbase_check_shape(base, blen, &why) == 0);
    CHECK(blen > plen && memcmp(base + blen - plen, params, plen) == 0);
    /* A canonical path (decisiond's always starts with '/'): the signer's profile check takes
     * the base under its key id and refuses it under any other. */
    if (path[0] == '/') {
        CHECK(sworn_httpsig_check_profile(base, blen, keyid, &why) == 0);
        CHECK(sworn_httpsig_check_profile(
                  base, blen, "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                  &why) == -1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    shape(data, size);
    {
        const char *why = NULL;
        static const char k[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        int rc = sworn_httpsig_check_profile(data, size, k, &why);

        CHECK(rc == 0 || rc == -1);
        if (rc == 0)
            CHECK(sworn_sigbase_check_shape(data, size, &why) == 0);
    }
    if (size > 65536)
        return 0;
    text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    {
        char *copy = strdup(text);

        if (copy != NULL) {
            components(copy);
            free(copy);
        }
        copy = strdup(text);
        if (copy != NULL) {
            profile(copy);
            free(copy);
        }
        for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL;
             l = strtok_r(NULL, "\n", &save)) {
            int a = sworn_psign_field_dropped(l, strlen(l), 0),
                b = sworn_psign_field_dropped(l, strlen(l), 1);

            CHECK((a == 0 || a == 1) && (b == 0 || b == 1) && b >= a);
            CHECK(a == sworn_psign_field_dropped(l, strlen(l), 0));
        }
    }
    CHECK(sworn_psign_field_dropped("SWORN_entry", 11, 0) == 1);
    free(text);
    return 0;
}
