/*
 * p_model.h -- model APIs (docs/proxy.md, "Model APIs"): the `models:` list of the proxy's
 * configuration, which requests are model calls, and what the proxy reads from their bodies.
 *
 * A request is operation "model.call" when its method is POST, its canonical resource lies under
 * a configured destination (proxy/p_dest.h; of several, the one with the longest path) and its
 * canonical path without parameters ends with one of the endpoints of that destination's `api`
 * (a trailing '/' is ignored):
 *   api: openai     "/v1/chat/completions" (shape openai.chat), "/v1/responses" (openai.responses)
 *   api: anthropic  "/v1/messages" (anthropic.messages)
 * Any other request to a model destination stays "http.request" (policy decides it; its tokens
 * are not read). The body of a model call is read strictly (proxy/p_json.h) and must be a JSON
 * object with a "model" string (1..256 bytes of printable ASCII without spaces), at most one of
 * "max_tokens", "max_output_tokens", "max_completion_tokens" (an integer 0..4294967295; null is
 * none), and, for a streamed chat completion ("stream": true), "stream_options.include_usage":
 * true (else its usage is never sent and its tokens could not be charged). Anything else is a
 * refusal (returned 1 with a static sentence): the caller records it as a deny (p_refuse.h).
 *
 * Pure computation apart from allocation (json-c's tree, freed before return); thread-safe.
 */
#ifndef SWORN_P_MODEL_H
#define SWORN_P_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "p_dest.h"
#include "resource.h"
#include "sworn.pb-c.h"

struct sworn_yaml_doc;
struct sworn_yaml_node;

#define SWORN_PMODEL_DESTS_MAX 64u
#define SWORN_PMODEL_OPERATION "model.call"
#define SWORN_PMODEL_CEILING_MAX 4294967295u

enum sworn_pmodel_api {
    SWORN_PMODEL_NONE = 0,
    SWORN_PMODEL_OPENAI_CHAT,
    SWORN_PMODEL_OPENAI_RESPONSES,
    SWORN_PMODEL_ANTHROPIC_MESSAGES,
};

/* One configured model API: where it is and which family of endpoints it speaks. */
struct sworn_pmodel_dest {
    struct sworn_pdest dest;
    int anthropic; /* 0: api openai, 1: api anthropic */
};

struct sworn_pmodel_conf {
    struct sworn_pmodel_dest dests[SWORN_PMODEL_DESTS_MAX];
    size_t n;
};

/*
 * Read the configuration's `models:` (n: its node, or NULL when absent: no model APIs). Each item
 * is a mapping {url: <p_dest URL>, api: openai | anthropic}, both required; 1..64 items; the same
 * URL twice is refused. 0, or -1 with sworn_err "<file>:<line>:<col>: <message>".
 */
int sworn_pmodel_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                           struct sworn_pmodel_conf *out);

/* The model API shape of a request (method as sent; res its canonical resource, or NULL). */
enum sworn_pmodel_api sworn_pmodel_classify(const struct sworn_pmodel_conf *c, const char *method,
                                            const struct sworn_resource *res);

/* "openai.chat", "openai.responses", "anthropic.messages" (Context.model_api), or "". */
const char *sworn_pmodel_api_name(enum sworn_pmodel_api api);

/* What a model call's body says. */
struct sworn_pmodel_req {
    enum sworn_pmodel_api api;
    char model[SWORN_RESOURCE_MODEL_MAX + 1]; /* as in the body, unescaped */
    int has_ceiling;
    const char *ceiling_field; /* static: "max_tokens", ... */
    uint64_t ceiling;
    int stream; /* "stream": true */
    Sworn__V1__TokenCeiling ceiling_pb;
};

/*
 * Read body[0..len) of a model call of shape api. encoded: the request has a Content-Encoding
 * (refused: the body could not be read as sent). Returns 0 with *out filled, 1 when refused (*why
 * a static sentence), -1 when memory ran out (sworn_err set).
 */
int sworn_pmodel_read_request(enum sworn_pmodel_api api, const uint8_t *body, size_t len,
                              int encoded, struct sworn_pmodel_req *out, const char **why);

/*
 * Put what m says into req (built by p_build): operation "model.call", resource.model,
 * context.token_ceiling and context.model_api. req points into m afterwards: keep m as long.
 */
void sworn_pmodel_fill(struct sworn_pmodel_req *m, Sworn__V1__AuthorizationRequest *req);

#endif
