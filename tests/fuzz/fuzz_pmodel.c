/*
 * fuzz_pmodel.c -- libFuzzer target for proxy/p_model.c's reading of a model API request body.
 *
 * The first byte picks the shape (chat completions, responses, messages) and whether the request
 * had a Content-Encoding; the rest is the body. Asserted on every input:
 *   - sworn_pmodel_read_request answers 0 or 1 (-1 only for out of memory); on 1 a static
 *     sentence; on 0 a model of 1..256 bytes of 0x21..0x7e (so decisiond's canonical form takes
 *     it), a ceiling only with its field's name and at most 4294967295, and for a streamed chat
 *     completion the body asked for its usage (the same text read twice gives the same answer);
 *   - what it fills in passes the wire's checks (frame.c) on a request around it.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz.h"
#include "p_model.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const enum sworn_pmodel_api apis[] = {
        SWORN_PMODEL_OPENAI_CHAT, SWORN_PMODEL_OPENAI_RESPONSES, SWORN_PMODEL_ANTHROPIC_MESSAGES};
    struct sworn_pmodel_req r, r2;
    const char *why = NULL, *why2 = NULL;
    enum sworn_pmodel_api api;
    int encoded, rc;

    if (size < 1)
        return 0;
    api = apis[data[0] % 3];
    encoded = (data[0] & 0x80) != 0;
    rc = sworn_pmodel_read_request(api, data + 1, size - 1, encoded, &r, &why);
    CHECK(rc == 0 || rc == 1);
    CHECK(rc == 0 || (why != NULL && why[0] != '\0'));
    CHECK(!(encoded && rc == 0));
    CHECK(sworn_pmodel_read_request(api, data + 1, size - 1, encoded, &r2, &why2) == rc);
    if (rc == 0) {
        Sworn__V1__AuthorizationRequest q = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
        Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
        Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
        Sworn__V1__Context cx = SWORN__V1__CONTEXT__INIT;
        size_t n = strlen(r.model);

        CHECK(n >= 1 && n <= 256);
        for (size_t i = 0; i < n; i++)
            CHECK((unsigned char)r.model[i] >= 0x21 && (unsigned char)r.model[i] <= 0x7e);
        CHECK(strcmp(r.model, r2.model) == 0 && r.ceiling == r2.ceiling);
        CHECK(!r.has_ceiling || (r.ceiling_field != NULL && r.ceiling <= 4294967295u));
        pr.id = "agent-1";
        res.scheme = "https";
        res.host = "api.example.com";
        res.port = 443;
        res.path = "/v1/chat/completions";
        q.request_id = "fuzz-1";
        q.principal = &pr;
        q.operation = "model.call";
        q.resource = &res;
        q.context = &cx;
        sworn_pmodel_fill(&r, &q);
        CHECK(sworn_frame_check_request(&q) == 0);
    }
    return 0;
}
