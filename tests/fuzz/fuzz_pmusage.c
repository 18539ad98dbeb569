/*
 * fuzz_pmusage.c -- libFuzzer target for proxy/p_musage.c, the usage reader of model API
 * responses (JSON bodies and SSE streams).
 *
 * The first byte picks the shape and whether the response is an SSE stream, the second where the
 * body is split between two feeds; the rest is the body. Asserted on every input:
 *   - the answer is the same fed whole, split there, and one byte a feed (a reader over relayed
 *     bytes must not depend on how the network cut them);
 *   - reported: both counts at most 4294967295; not reported: a non-empty static sentence;
 *   - a body cut before its end (complete 0) is never reported.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "p_musage.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

struct result {
    int reported;
    uint64_t in, out;
    const char *missing;
};

static struct result run(enum sworn_pmodel_api api, int sse, const uint8_t *p, size_t n,
                         size_t split, int complete)
{
    static const char ct_sse[] = "text/event-stream", ct_json[] = "application/json";
    struct sworn_pmusage u;
    struct result r = {0};
    const char *ct = sse ? ct_sse : ct_json;

    sworn_pmusage_init(&u, api, ct, strlen(ct), NULL, 0);
    if (split == (size_t)-1) {
        for (size_t i = 0; i < n; i++)
            CHECK(sworn_pmusage_feed(&u, p + i, 1) == 0);
    } else {
        CHECK(sworn_pmusage_feed(&u, p, split) == 0);
        CHECK(sworn_pmusage_feed(&u, p + split, n - split) == 0);
    }
    r.reported = sworn_pmusage_finish(&u, complete, &r.in, &r.out, &r.missing);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum sworn_pmodel_api apis[] = {
        SWORN_PMODEL_OPENAI_CHAT, SWORN_PMODEL_OPENAI_RESPONSES, SWORN_PMODEL_ANTHROPIC_MESSAGES};
    struct result whole, split, bytes, cut;
    enum sworn_pmodel_api api;
    size_t n, at;
    int sse;

    if (size < 2 || size > 65536)
        return 0;
    api = apis[data[0] % 3];
    sse = (data[0] & 0x80) != 0;
    n = size - 2;
    at = n == 0 ? 0 : data[1] % (n + 1);
    whole = run(api, sse, data + 2, n, n, 1);
    split = run(api, sse, data + 2, n, at, 1);
    bytes = run(api, sse, data + 2, n, (size_t)-1, 1);
    cut = run(api, sse, data + 2, n, n, 0);
    CHECK(whole.reported == split.reported && whole.reported == bytes.reported);
    if (whole.reported) {
        CHECK(whole.in <= 4294967295u && whole.out <= 4294967295u);
        CHECK(whole.in == split.in && whole.in == bytes.in);
        CHECK(whole.out == split.out && whole.out == bytes.out);
    } else {
        CHECK(whole.missing != NULL && whole.missing[0] != '\0');
        CHECK(strcmp(whole.missing, split.missing) == 0 &&
              strcmp(whole.missing, bytes.missing) == 0);
    }
    CHECK(!cut.reported && cut.missing != NULL);
    return 0;
}
