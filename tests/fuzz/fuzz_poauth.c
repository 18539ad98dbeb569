/*
 * fuzz_poauth.c -- libFuzzer target for proxy/p_form.c (application/x-www-form-urlencoded bodies)
 * and proxy/p_oauth.c (a token endpoint's answer: the tokens read, the swap, the checks of an
 * answer that is not swapped).
 *
 * The input's first byte picks the Content-Type the answer is read with (even: JSON, odd: a
 * form); the rest is the body. Asserted:
 *   - sworn_pform_parse answers 0 or 1; on 1 a sentence and no parameter; on 0 at most 64
 *     parameters, each piece inside the body, names decoded to at most 256 bytes without
 *     controls, no two equal; each value decodes to at most its raw length; rewriting a
 *     parameter gives a body that parses again with that parameter's value as written;
 *   - sworn_poauth_read answers 0 or 1 (-1 only for out of memory); on 0 an access token of
 *     1..16377 bytes, and the swap either refuses or gives a body holding the symbolic tokens
 *     and neither real token; for JSON the swapped body is strict JSON again;
 *   - sworn_poauth_untouched_ok answers 0 or 1 and never passes a JSON body with a top-level
 *     "access_token" member.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "fuzz.h"
#include "p_form.h"
#include "p_json.h"
#include "p_oauth.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

#define SA "sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define SR "sym_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"

static void form(const uint8_t *p, size_t n)
{
    static struct sworn_pform f, g;
    const char *why = NULL;
    uint8_t v[SWORN_PFORM_BODY_MAX], *out;
    size_t out_len = 0;
    long k;

    if (sworn_pform_parse(p, n, &f, &why) != 0) {
        CHECK(why != NULL && f.n == 0);
        return;
    }
    CHECK(f.n <= SWORN_PFORM_PARAMS_MAX);
    for (size_t i = 0; i < f.n; i++) {
        CHECK(f.p[i].off + f.p[i].len <= n);
        CHECK(strlen(f.p[i].name) <= SWORN_PFORM_NAME_MAX);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(f.p[i].name, f.p[j].name) != 0);
        k = sworn_pform_value(p, &f.p[i], v, sizeof(v));
        CHECK(k >= 0 && (size_t)k <= f.p[i].value_len);
    }
    if (f.n == 0)
        return;
    out = sworn_pform_rewrite(p, n, &f, f.p[0].name, (const uint8_t *)"a b&c", 5, &out_len);
    CHECK(out != NULL);
    if (out_len <= SWORN_PFORM_BODY_MAX) {
        CHECK(sworn_pform_parse(out, out_len, &g, &why) == 0);
        CHECK(g.n == f.n);
        k = sworn_pform_value(out, sworn_pform_find(&g, f.p[0].name), v, sizeof(v));
        CHECK(k == 5 && memcmp(v, "a b&c", 5) == 0);
    }
    free(out);
}

static void answer(const uint8_t *p, size_t n, int json)
{
    struct sworn_poauth_tokens t;
    const char *why = NULL;
    const char *ct = json ? "application/json" : "application/x-www-form-urlencoded";
    uint8_t *out = NULL;
    size_t out_len = 0;
    int r = sworn_poauth_read(p, n, ct, strlen(ct), &t, &why);

    CHECK(r == 0 || r == 1);
    if (r == 0) {
        CHECK(t.access != NULL && t.access_len >= 1 && t.access_len <= SWORN_POAUTH_TOKEN_MAX);
        r = sworn_poauth_swap(p, n, &t, SA, SR, &out, &out_len, &why);
        CHECK(r == 0 || r == 1);
        if (r == 0) {
            CHECK(memmem(out, out_len, SA, strlen(SA)) != NULL);
            CHECK(memmem(out, out_len, t.access, t.access_len) == NULL);
            CHECK(t.refresh == NULL || memmem(out, out_len, t.refresh, t.refresh_len) == NULL);
            if (json) {
                struct json_object *root = NULL;

                CHECK(sworn_pjson_parse(out, out_len, &root, &why) == 0);
                json_object_put(root);
            }
            free(out);
        }
    }
    sworn_poauth_tokens_wipe(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *why = NULL;
    struct json_object *root = NULL;
    int r;

    if (size == 0)
        return 0;
    form(data + 1, size - 1);
    answer(data + 1, size - 1, (data[0] & 1) == 0);
    r = sworn_poauth_untouched_ok(data + 1, size - 1, &why);
    CHECK(r == 0 || r == 1);
    if (r == 0 && sworn_pjson_parse(data + 1, size - 1, &root, &why) == 0) {
        CHECK(root == NULL || !json_object_is_type(root, json_type_object) ||
              !json_object_object_get_ex(root, "access_token", NULL));
        json_object_put(root);
    }
    return 0;
}
