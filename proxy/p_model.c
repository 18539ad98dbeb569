/*
 * p_model.c -- model APIs: configuration, classification, request bodies (p_model.h).
 */
#include "p_model.h"

#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "err.h"
#include "p_json.h"
#include "yamldoc.h"

static const char *const ceiling_fields[] = {"max_tokens", "max_output_tokens",
                                             "max_completion_tokens"};

int sworn_pmodel_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                           struct sworn_pmodel_conf *out)
{
    static const char *const keys[] = {"url", "api", NULL};
    size_t len;

    memset(out, 0, sizeof(*out));
    if (n == NULL)
        return 0;
    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ || (len = sworn_yaml_len(n)) == 0 ||
        len > SWORN_PMODEL_DESTS_MAX)
        return sworn_yaml_error(d, n, "models: a list of 1..%u model APIs ({url, api})",
                                SWORN_PMODEL_DESTS_MAX);
    for (size_t i = 0; i < len; i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i), *u, *a;
        struct sworn_pmodel_dest *md = &out->dests[i];
        const char *s = NULL, *why = NULL;

        if (sworn_yaml_kind(it) != SWORN_YAML_MAP)
            return sworn_yaml_error(d, it, "models: an item is a mapping {url, api}");
        if (sworn_yaml_only_keys(d, it, keys) != 0)
            return -1;
        if ((u = sworn_yaml_get(it, "url")) == NULL)
            return sworn_yaml_error(d, it, "models: missing required key \"url\"");
        if ((a = sworn_yaml_get(it, "api")) == NULL)
            return sworn_yaml_error(d, it, "models: missing required key \"api\"");
        if (sworn_yaml_str(d, u, &s) != 0)
            return -1;
        if (sworn_pdest_parse(s, &md->dest, &why) != 0)
            return sworn_yaml_error(d, u, "models.url: %s", why);
        if (sworn_yaml_str(d, a, &s) != 0)
            return -1;
        if (strcmp(s, "anthropic") == 0)
            md->anthropic = 1;
        else if (strcmp(s, "openai") != 0)
            return sworn_yaml_error(d, a, "models.api: openai or anthropic");
        for (size_t k = 0; k < i; k++)
            if (memcmp(&out->dests[k].dest, &md->dest, sizeof(md->dest)) == 0)
                return sworn_yaml_error(d, u, "models.url: the same model API twice");
        out->n = i + 1;
    }
    return 0;
}

/* Does the bare path (len bytes) end with suffix (which starts with '/'), ASCII case folded (a
 * server that routes without case must not see a model call the proxy did not), a final '/'
 * ignored? */
static int ends_with(const char *path, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);

    if (len > 1 && path[len - 1] == '/')
        len--;
    return len >= n && strncasecmp(path + len - n, suffix, n) == 0;
}

enum sworn_pmodel_api sworn_pmodel_classify(const struct sworn_pmodel_conf *c, const char *method,
                                            const struct sworn_resource *res)
{
    const struct sworn_pmodel_dest *md = NULL;

    if (c == NULL || c->n == 0 || res == NULL || method == NULL || strcmp(method, "POST") != 0)
        return SWORN_PMODEL_NONE;
    /* The most specific destination: "/anthropic/" before "/" on one host. */
    for (size_t i = 0; i < c->n; i++)
        if (sworn_pdest_matches_wide(&c->dests[i].dest, res) && /* "/Claude/", "/claude;x/" */
            (md == NULL || strlen(c->dests[i].dest.path) > strlen(md->dest.path)))
            md = &c->dests[i];
    if (md == NULL)
        return SWORN_PMODEL_NONE;
    if (md->anthropic)
        return ends_with(res->bare, res->bare_len, "/v1/messages") ? SWORN_PMODEL_ANTHROPIC_MESSAGES
                                                                   : SWORN_PMODEL_NONE;
    if (ends_with(res->bare, res->bare_len, "/v1/chat/completions"))
        return SWORN_PMODEL_OPENAI_CHAT;
    if (ends_with(res->bare, res->bare_len, "/v1/responses"))
        return SWORN_PMODEL_OPENAI_RESPONSES;
    return SWORN_PMODEL_NONE;
}

const char *sworn_pmodel_api_name(enum sworn_pmodel_api api)
{
    switch (api) {
    case SWORN_PMODEL_OPENAI_CHAT:
        return "openai.chat";
    case SWORN_PMODEL_OPENAI_RESPONSES:
        return "openai.responses";
    case SWORN_PMODEL_ANTHROPIC_MESSAGES:
        return "anthropic.messages";
    default:
        return "";
    }
}

/* The model string: 1..256 bytes of 0x21..0x7e. */
static int model_ok(const char *s, size_t n)
{
    if (n < 1 || n > SWORN_RESOURCE_MODEL_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

static int read_body(enum sworn_pmodel_api api, json_object *root, struct sworn_pmodel_req *out,
                     const char **why)
{
    json_object *v = NULL, *so = NULL, *iu = NULL;
    const char *s;
    size_t n;

    if (!json_object_is_type(root, json_type_object)) {
        *why = "the model API body is not a JSON object";
        return 1;
    }
    if (!json_object_object_get_ex(root, "model", &v) ||
        !json_object_is_type(v, json_type_string)) {
        *why = "the model API body names no model (a string member \"model\")";
        return 1;
    }
    s = json_object_get_string(v);
    n = (size_t)json_object_get_string_len(v);
    if (!model_ok(s, n) || memchr(s, '\0', n) != NULL) {
        *why = "the model API body's model is not 1..256 bytes of printable ASCII without spaces";
        return 1;
    }
    memcpy(out->model, s, n);
    out->model[n] = '\0';
    for (size_t i = 0; i < sizeof(ceiling_fields) / sizeof(ceiling_fields[0]); i++) {
        int64_t t;

        if (!json_object_object_get_ex(root, ceiling_fields[i], &v) || v == NULL)
            continue; /* absent, or null: none */
        if (out->has_ceiling) {
            *why = "the model API body names its token ceiling more than once (max_tokens, "
                   "max_output_tokens, max_completion_tokens)";
            return 1;
        }
        /* json-c reads a number with a fraction or an exponent as a double: refused, like a
         * string; an integer above INT64_MAX reads as INT64_MAX, above the bound all the same. */
        if (!json_object_is_type(v, json_type_int) || (t = json_object_get_int64(v)) < 0 ||
            (uint64_t)t > SWORN_PMODEL_CEILING_MAX) {
            *why = "the model API body's token ceiling is not an integer of 0..4294967295";
            return 1;
        }
        out->has_ceiling = 1;
        out->ceiling_field = ceiling_fields[i];
        out->ceiling = (uint64_t)t;
    }
    out->stream = json_object_object_get_ex(root, "stream", &v) &&
                  json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
    if (api == SWORN_PMODEL_OPENAI_CHAT && out->stream &&
        !(json_object_object_get_ex(root, "stream_options", &so) &&
          json_object_is_type(so, json_type_object) &&
          json_object_object_get_ex(so, "include_usage", &iu) &&
          json_object_is_type(iu, json_type_boolean) && json_object_get_boolean(iu))) {
        *why = "a streamed chat completion must ask for its usage (stream_options.include_usage: "
               "true), or its tokens could not be charged";
        return 1;
    }
    /* `n` choices each up to the ceiling: the output ceiling of the call is n times the one the
     * budget reserves (red team of issue 16, B: n 128 spent 128 ceilings on one reservation).
     * Only one choice is read as a model call; absent or null is one. */
    if (api == SWORN_PMODEL_OPENAI_CHAT && json_object_object_get_ex(root, "n", &v) && v != NULL &&
        !(json_object_is_type(v, json_type_int) && json_object_get_int64(v) == 1)) {
        *why = "a chat completion asking for more than one choice (n) spends more than its token "
               "ceiling";
        return 1;
    }
    return 0;
}

int sworn_pmodel_read_request(enum sworn_pmodel_api api, const uint8_t *body, size_t len,
                              int encoded, struct sworn_pmodel_req *out, const char **why)
{
    json_object *root = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    out->api = api;
    if (encoded) {
        *why = "a model API body with a Content-Encoding cannot be read as the upstream reads it";
        return 1;
    }
    if (body == NULL || len == 0) {
        *why = "the model API request has no body";
        return 1;
    }
    rc = sworn_pjson_parse(body, len, &root, why);
    if (rc != 0)
        return rc;
    if (root == NULL) {
        *why = "the model API body is not a JSON object";
        return 1;
    }
    rc = read_body(api, root, out, why);
    json_object_put(root);
    return rc;
}

void sworn_pmodel_fill(struct sworn_pmodel_req *m, Sworn__V1__AuthorizationRequest *req)
{
    req->operation = (char *)SWORN_PMODEL_OPERATION;
    req->resource->model = m->model;
    if (req->context == NULL)
        return;
    req->context->model_api = (char *)sworn_pmodel_api_name(m->api);
    if (m->has_ceiling) {
        sworn__v1__token_ceiling__init(&m->ceiling_pb);
        m->ceiling_pb.field = (char *)m->ceiling_field;
        m->ceiling_pb.tokens = m->ceiling;
        req->context->token_ceiling = &m->ceiling_pb;
    }
}
