/*
 * frame.c -- framing of the decision and admin sockets and strict decoding of sworn.proto's
 * messages. frame.h gives the byte layout and the validity rules; encoder and decoder are both
 * here.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "frame.h"
#include "utf8.h"
#include "wipe.h"

void sworn_frame_dec_init(struct sworn_frame_dec *d)
{
    memset(d, 0, sizeof(*d));
}

void sworn_frame_dec_init_pool(struct sworn_frame_dec *d, struct sworn_frame_pool *pool)
{
    sworn_frame_dec_init(d);
    d->pool = pool;
}

/* What a buffer of cap bytes borrows from pool p: all it holds beyond a decoder's own. */
static size_t borrowed(const struct sworn_frame_pool *p, size_t cap)
{
    return cap > p->own ? cap - p->own : 0;
}

/* Wipe and free the body buffer, and give its bytes back to the pool. */
static void body_free(struct sworn_frame_dec *d)
{
    if (d->body != NULL) {
        sworn_memzero(d->body, d->body_have);
        free(d->body);
    }
    if (d->pool != NULL) {
        d->pool->used -= borrowed(d->pool, d->body_cap);
        d->pool->held -= d->body_cap;
    }
    d->body = NULL;
    d->body_cap = 0;
}

/* Can d's buffer grow to cap bytes within its pool? */
static int pool_room(const struct sworn_frame_dec *d, size_t cap)
{
    const struct sworn_frame_pool *p = d->pool;

    return p == NULL || borrowed(p, cap) - borrowed(p, d->body_cap) <=
                            p->cap - (p->used < p->cap ? p->used : p->cap);
}

void sworn_frame_dec_free(struct sworn_frame_dec *d)
{
    body_free(d);
    memset(d, 0, sizeof(*d));
}

int sworn_frame_dec_idle(const struct sworn_frame_dec *d)
{
    return !d->failed && (d->hdr_have == 0 || d->done);
}

int sworn_frame_dec_pool_full(const struct sworn_frame_dec *d)
{
    return d->pool_full;
}

/* Forget the frame handed out by the previous call, so the decoder is at a boundary. */
static void next_frame(struct sworn_frame_dec *d)
{
    body_free(d);
    d->hdr_have = 0;
    d->body_len = 0;
    d->body_have = 0;
    d->done = 0;
}

void sworn_frame_dec_release(struct sworn_frame_dec *d)
{
    if (d->done)
        next_frame(d);
}

/*
 * Make room for need body bytes (need <= body_len). The buffer doubles (from SWORN_FRAME_DEC_MIN)
 * rather than taking the announced length at once, so it never holds more than twice what came:
 * an announced 1 MiB that never arrives costs one small buffer. A new buffer is taken and the old
 * one wiped, never realloc'd, so no copy of the bytes is left behind in freed memory.
 */
static int body_reserve(struct sworn_frame_dec *d, size_t need)
{
    size_t cap = d->body_cap * 2;
    uint8_t *b;

    if (need <= d->body_cap)
        return 0;
    if (cap < SWORN_FRAME_DEC_MIN)
        cap = SWORN_FRAME_DEC_MIN;
    if (cap < need)
        cap = need;
    if (cap > d->body_len)
        cap = d->body_len;
    /* Near the pool's cap, take only what is needed; refuse when even that does not fit. */
    if (!pool_room(d, cap))
        cap = need;
    if (!pool_room(d, cap)) {
        d->failed = 1;
        d->pool_full = 1;
        return sworn_err_set(SWORN_ERR_RANGE,
                             "frame buffers would pass their cap of %zu bytes (%zu lent): refused",
                             d->pool->cap, d->pool->used);
    }
    b = malloc(cap);
    if (b == NULL) {
        d->failed = 1;
        return sworn_err_set(SWORN_ERR_NOMEM, "frame: no memory for a %zu-byte body buffer", cap);
    }
    if (d->body_have > 0)
        memcpy(b, d->body, d->body_have);
    if (d->body != NULL) {
        sworn_memzero(d->body, d->body_have);
        free(d->body);
    }
    if (d->pool != NULL) {
        d->pool->used += borrowed(d->pool, cap) - borrowed(d->pool, d->body_cap);
        d->pool->held += cap - d->body_cap;
        if (d->pool->held > d->pool->peak)
            d->pool->peak = d->pool->held;
    }
    d->body = b;
    d->body_cap = cap;
    return 0;
}

long sworn_frame_dec_feed(struct sworn_frame_dec *d, const uint8_t *p, size_t len,
                          const uint8_t **body, size_t *body_len)
{
    size_t used = 0, n;

    *body = NULL;
    *body_len = 0;
    if (d->failed)
        return sworn_err_set(SWORN_ERR_RANGE, "frame stream is out of step after a refused frame");
    if (p == NULL && len > 0)
        return sworn_err_set(SWORN_ERR_ARG, "frame: NULL input");
    if (d->done)
        next_frame(d);
    if (d->hdr_have < SWORN_FRAME_HDR_LEN) {
        n = SWORN_FRAME_HDR_LEN - d->hdr_have;
        if (n > len)
            n = len;
        memcpy(d->hdr + d->hdr_have, p, n);
        d->hdr_have += n;
        used += n;
        if (d->hdr_have < SWORN_FRAME_HDR_LEN)
            return (long)used;
        {
            struct sworn_buf b = sworn_buf_init(d->hdr, sizeof(d->hdr));
            uint32_t l = 0;

            (void)sworn_buf_get_u32be(&b, &l); /* cannot fail: 4 bytes are there */
            if (l == 0 || l > SWORN_FRAME_MAX) {
                d->failed = 1;
                return sworn_err_set(SWORN_ERR_RANGE, "frame length %lu is outside 1..%u: refused",
                                     (unsigned long)l, SWORN_FRAME_MAX);
            }
            d->body_len = l;
        }
        d->body_have = 0;
    }
    n = d->body_len - d->body_have;
    if (n > len - used)
        n = len - used;
    if (n > 0) {
        if (body_reserve(d, d->body_have + n) < 0)
            return -1;
        memcpy(d->body + d->body_have, p + used, n);
    }
    d->body_have += n;
    used += n;
    if (d->body_have == d->body_len) {
        d->done = 1;
        *body = d->body;
        *body_len = d->body_len;
    }
    return (long)used;
}

long sworn_frame_encode(const uint8_t *body, size_t body_len, uint8_t *out, size_t out_len)
{
    if (body_len == 0 || body_len > SWORN_FRAME_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "frame body of %zu bytes is outside 1..%u", body_len,
                             SWORN_FRAME_MAX);
    if (body == NULL || out == NULL || out_len < SWORN_FRAME_HDR_LEN + body_len)
        return sworn_err_set(SWORN_ERR_ARG, "frame: output buffer too small");
    sworn_put_u32be(out, (uint32_t)body_len);
    memcpy(out + SWORN_FRAME_HDR_LEN, body, body_len);
    return (long)(SWORN_FRAME_HDR_LEN + body_len);
}

/* --- shape rules -------------------------------------------------------------------------- */

/* A string: at most max bytes, UTF-8 without control characters, non-empty when required. */
static int check_str(const char *s, size_t max, int required, const char *what)
{
    size_t n = s == NULL ? 0 : strlen(s);

    if (n == 0 && required)
        return sworn_err_set(SWORN_ERR_FORMAT, "%s is missing", what);
    if (n > max)
        return sworn_err_set(SWORN_ERR_RANGE, "%s is %zu bytes, more than %zu", what, n, max);
    if (n > 0 && sworn_utf8_check(s, n, 0, what) != 0)
        return -1;
    return 0;
}

/* A hash: exactly SWORN_FRAME_HASH_LEN bytes, or empty when optional. */
static int check_hash(ProtobufCBinaryData h, int required, const char *what)
{
    if (h.len == 0 && !required)
        return 0;
    if (h.len != SWORN_FRAME_HASH_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT, "%s is %zu bytes, not %u", what, h.len,
                             SWORN_FRAME_HASH_LEN);
    return 0;
}

static int check_count(size_t n, size_t max, const char *what)
{
    if (n > max)
        return sworn_err_set(SWORN_ERR_RANGE, "%s has %zu items, more than %zu", what, n, max);
    return 0;
}

static int check_request_id(const char *id)
{
    return check_str(id, SWORN_FRAME_ID_MAX, 1, "request_id");
}

/* ALLOW, DENY or ESCALATE (allow_escalate), never UNSPECIFIED or an unknown value. */
static int check_effect(Sworn__V1__Effect e, int allow_escalate)
{
    if (e == SWORN__V1__EFFECT__EFFECT_ALLOW || e == SWORN__V1__EFFECT__EFFECT_DENY ||
        (allow_escalate && e == SWORN__V1__EFFECT__EFFECT_ESCALATE))
        return 0;
    return sworn_err_set(SWORN_ERR_FORMAT, "effect %d is not valid here", (int)e);
}

/* RFC 8259 section 6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and nothing else. */
int sworn_frame_json_number_ok(const char *s)
{
    const char *p = s;

    if (p == NULL)
        return 0;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return 0;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

static int check_context(const Sworn__V1__Context *c)
{
    size_t i;

    SWORN_GUARD(check_str(c->method, 32, 0, "context.method"));
    SWORN_GUARD(check_count(c->n_header_names, SWORN_FRAME_HEADERS_MAX, "context.header_names"));
    for (i = 0; i < c->n_header_names; i++)
        SWORN_GUARD(check_str(c->header_names[i], 256, 1, "context.header_names[]"));
    SWORN_GUARD(check_hash(c->body_sha256, 0, "context.body_sha256"));
    SWORN_GUARD(check_count(c->n_covered, SWORN_FRAME_COVERED_MAX, "context.covered"));
    for (i = 0; i < c->n_covered; i++) {
        SWORN_ENSURE(c->covered[i] != NULL, SWORN_ERR_ARG, "context.covered[%zu] is NULL", i);
        SWORN_GUARD(check_str(c->covered[i]->name, 256, 1, "context.covered[].name"));
        SWORN_GUARD(check_hash(c->covered[i]->value_sha256, 1, "context.covered[].value_sha256"));
    }
    SWORN_GUARD(check_count(c->n_json_numbers, SWORN_FRAME_NUMBERS_MAX, "context.json_numbers"));
    for (i = 0; i < c->n_json_numbers; i++) {
        const Sworn__V1__JsonNumber *j = c->json_numbers[i];

        SWORN_ENSURE(j != NULL, SWORN_ERR_ARG, "context.json_numbers[%zu] is NULL", i);
        SWORN_GUARD(check_str(j->pointer, 256, 1, "context.json_numbers[].pointer"));
        SWORN_ENSURE(j->pointer[0] == '/', SWORN_ERR_FORMAT,
                     "context.json_numbers[].pointer does not start with '/'");
        SWORN_GUARD(check_str(j->value, 64, 1, "context.json_numbers[].value"));
        SWORN_ENSURE(sworn_frame_json_number_ok(j->value), SWORN_ERR_FORMAT,
                     "context.json_numbers[].value is not a JSON number");
    }
    SWORN_GUARD(check_hash(c->credential_token_sha256, 0, "context.credential_token_sha256"));
    SWORN_GUARD(check_hash(c->mcp_session_sha256, 0, "context.mcp_session_sha256"));
    if (c->token_ceiling != NULL) {
        const char *f = c->token_ceiling->field;

        SWORN_ENSURE(f != NULL &&
                         (strcmp(f, "max_tokens") == 0 || strcmp(f, "max_output_tokens") == 0 ||
                          strcmp(f, "max_completion_tokens") == 0),
                     SWORN_ERR_FORMAT,
                     "context.token_ceiling.field is not max_tokens, max_output_tokens or "
                     "max_completion_tokens");
        SWORN_ENSURE(c->token_ceiling->tokens <= SWORN_FRAME_TOKENS_COUNT_MAX, SWORN_ERR_RANGE,
                     "context.token_ceiling.tokens is above %u", SWORN_FRAME_TOKENS_COUNT_MAX);
    }
    SWORN_ENSURE(c->model_api == NULL || c->model_api[0] == '\0' ||
                     strcmp(c->model_api, "openai.chat") == 0 ||
                     strcmp(c->model_api, "openai.responses") == 0 ||
                     strcmp(c->model_api, "anthropic.messages") == 0,
                 SWORN_ERR_FORMAT,
                 "context.model_api is not openai.chat, openai.responses or anthropic.messages");
    return 0;
fail:
    return -1;
}

static int check_delegation(const Sworn__V1__Delegation *g)
{
    size_t i;

    SWORN_GUARD(check_str(g->subject, SWORN_FRAME_STRING_MAX, 1, "delegation.subject"));
    SWORN_GUARD(check_str(g->issuer, SWORN_FRAME_STRING_MAX, 0, "delegation.issuer"));
    SWORN_GUARD(check_count(g->n_actors, SWORN_FRAME_ACTORS_MAX, "delegation.actors"));
    for (i = 0; i < g->n_actors; i++) {
        SWORN_ENSURE(g->actors[i] != NULL, SWORN_ERR_ARG, "delegation.actors[%zu] is NULL", i);
        SWORN_GUARD(check_str(g->actors[i]->subject, SWORN_FRAME_STRING_MAX, 1,
                              "delegation.actors[].subject"));
        SWORN_GUARD(check_str(g->actors[i]->issuer, SWORN_FRAME_STRING_MAX, 0,
                              "delegation.actors[].issuer"));
    }
    if (g->may_act != NULL)
        SWORN_ENSURE(g->may_act->result >= SWORN__V1__MAY_ACT__RESULT__RESULT_UNKNOWN &&
                         g->may_act->result <= SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT,
                     SWORN_ERR_FORMAT, "delegation.may_act.result %d is unknown",
                     (int)g->may_act->result);
    /* ALLOWED names the acting party, actors[0]: with no act claim the proxy says DENIED (red
     * team of issue 16, B; sworn-verify refuses such a record). */
    SWORN_ENSURE(g->may_act == NULL ||
                     g->may_act->result != SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED ||
                     g->n_actors > 0,
                 SWORN_ERR_FORMAT, "delegation.may_act.result is allowed with no actor");
    SWORN_GUARD(check_str(g->client_id, 256, 0, "delegation.client_id"));
    SWORN_GUARD(check_count(g->n_audience, 16, "delegation.audience"));
    for (size_t k = 0; k < g->n_audience; k++)
        SWORN_GUARD(check_str(g->audience[k], 256, 1, "delegation.audience[]"));
    SWORN_GUARD(check_count(g->n_scopes, 64, "delegation.scopes"));
    for (size_t k = 0; k < g->n_scopes; k++) {
        SWORN_GUARD(check_str(g->scopes[k], 256, 1, "delegation.scopes[]"));
        for (const char *c = g->scopes[k]; *c != '\0'; c++)
            SWORN_ENSURE(*c >= 0x21 && *c <= 0x7e && *c != '"' && *c != '\\', SWORN_ERR_FORMAT,
                         "delegation.scopes[] is not an RFC 6749 scope-token");
    }
    SWORN_GUARD(check_str(g->jti, 256, 0, "delegation.jti"));
    if (g->verification != NULL) {
        const Sworn__V1__DelegationVerification *v = g->verification;

        SWORN_ENSURE(v->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_NOT_VERIFIED ||
                         v->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED,
                     SWORN_ERR_FORMAT, "delegation.verification.result %d is not 1 or 2",
                     (int)v->result);
        SWORN_GUARD(check_str(v->key_id, 256, 0, "delegation.verification.key_id"));
        SWORN_GUARD(check_str(v->alg, 16, 0, "delegation.verification.alg"));
        SWORN_ENSURE((v->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED) ==
                         (v->alg[0] != '\0'),
                     SWORN_ERR_FORMAT, "delegation.verification.alg is set exactly when verified");
        SWORN_ENSURE(v->result != SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED ||
                         strcmp(v->alg, "ES256") == 0 || strcmp(v->alg, "RS256") == 0 ||
                         strcmp(v->alg, "EdDSA") == 0 || strcmp(v->alg, "Ed25519") == 0,
                     SWORN_ERR_FORMAT,
                     "delegation.verification.alg is not ES256, RS256, EdDSA or Ed25519");
        SWORN_ENSURE(v->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED ||
                         v->key_id[0] == '\0',
                     SWORN_ERR_FORMAT, "delegation.verification.key_id without a verification");
    }
    SWORN_GUARD(check_count(g->n_token_sha256, SWORN_FRAME_TOKENS_MAX, "delegation.token_sha256"));
    for (i = 0; i < g->n_token_sha256; i++)
        SWORN_GUARD(check_hash(g->token_sha256[i], 1, "delegation.token_sha256[]"));
    return 0;
fail:
    return -1;
}

static int check_refusal(const Sworn__V1__ProxyRefusal *f)
{
    SWORN_ENSURE(f->status >= SWORN_FRAME_REFUSAL_STATUS_MIN &&
                     f->status <= SWORN_FRAME_REFUSAL_STATUS_MAX,
                 SWORN_ERR_RANGE, "refusal.status %u is outside 400..599", (unsigned)f->status);
    SWORN_GUARD(check_str(f->reason, SWORN_FRAME_REFUSAL_REASON_MAX, 1, "refusal.reason"));
    SWORN_GUARD(check_hash(f->head_sha256, 0, "refusal.head_sha256"));
    return 0;
fail:
    return -1;
}

/* A string field that is present and not empty. */
static int set(const char *s)
{
    return s != NULL && s[0] != '\0';
}

int sworn_frame_check_request(const Sworn__V1__AuthorizationRequest *m)
{
    /* A request the proxy refused itself may have had no readable target (docs/protocol.md):
     * then scheme and host may be empty and the port 0. Every other rule holds as always. */
    int refused;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "AuthorizationRequest is NULL");
    refused = m->refusal != NULL;
    SWORN_GUARD(check_request_id(m->request_id));
    SWORN_ENSURE(m->principal != NULL, SWORN_ERR_FORMAT, "principal is missing");
    SWORN_GUARD(check_str(m->principal->id, SWORN_FRAME_STRING_MAX, 1, "principal.id"));
    SWORN_GUARD(check_str(m->principal->sandbox, SWORN_FRAME_STRING_MAX, 0, "principal.sandbox"));
    /* principal.sandbox_start_index may be any index: decisiond denies (recorded) a request
     * whose index names no running sandbox of its principal and name (d_sandboxes.h), and
     * sworn-verify checks the record the same way (check `sandboxes`). */
    SWORN_GUARD(check_str(m->operation, 64, 1, "operation"));
    if (refused)
        SWORN_GUARD(check_refusal(m->refusal));
    SWORN_ENSURE(m->resource != NULL, SWORN_ERR_FORMAT, "resource is missing");
    SWORN_GUARD(check_str(m->resource->scheme, 16, !refused, "resource.scheme"));
    SWORN_GUARD(check_str(m->resource->host, 255, !refused, "resource.host"));
    SWORN_ENSURE((refused && m->resource->port == 0) ||
                     (m->resource->port >= 1 && m->resource->port <= 65535),
                 SWORN_ERR_RANGE, "resource.port %u is outside 1..65535",
                 (unsigned)m->resource->port);
    SWORN_GUARD(check_str(m->resource->path, SWORN_FRAME_STRING_MAX, 0, "resource.path"));
    SWORN_GUARD(check_str(m->resource->tool, SWORN_FRAME_TOOL_MAX, 0, "resource.tool"));
    SWORN_GUARD(check_str(m->resource->uri, SWORN_FRAME_URI_MAX, 0, "resource.uri"));
    SWORN_GUARD(check_str(m->resource->model, SWORN_FRAME_MODEL_MAX, 0, "resource.model"));
    /* The fields the proxy fills for one kind of operation only; sworn-verify refuses a
     * record holding any other (red team of issue 16, B; docs/verifier.md, entries). */
    {
        const char *op = m->operation;
        int tool_op = strcmp(op, "mcp.tools/call") == 0 || strcmp(op, "mcp.prompts/get") == 0;
        int uri_op = strcmp(op, "mcp.resources/read") == 0 ||
                     strcmp(op, "mcp.resources/subscribe") == 0 ||
                     strcmp(op, "mcp.resources/unsubscribe") == 0;
        int model_op = strcmp(op, "model.call") == 0;

        SWORN_ENSURE(!set(m->resource->tool) || tool_op, SWORN_ERR_FORMAT,
                     "resource.tool is set for an operation other than mcp.tools/call or "
                     "mcp.prompts/get");
        SWORN_ENSURE(!set(m->resource->uri) || uri_op, SWORN_ERR_FORMAT,
                     "resource.uri is set for an operation other than mcp.resources/read, "
                     "/subscribe or /unsubscribe");
        SWORN_ENSURE(model_op || (!set(m->resource->model) &&
                                  (m->context == NULL || (!set(m->context->model_api) &&
                                                          m->context->token_ceiling == NULL))),
                     SWORN_ERR_FORMAT,
                     "resource.model, context.model_api or context.token_ceiling is set for an "
                     "operation other than model.call");
    }
    if (m->context != NULL)
        SWORN_GUARD(check_context(m->context));
    if (m->delegation != NULL)
        SWORN_GUARD(check_delegation(m->delegation));
    return 0;
fail:
    return -1;
}

int sworn_frame_check_exchange(const Sworn__V1__TokenExchange *m)
{
    size_t i;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "TokenExchange is NULL");
    SWORN_GUARD(check_request_id(m->request_id));
    SWORN_GUARD(check_str(m->allow_request_id, SWORN_FRAME_ID_MAX, 1, "allow_request_id"));
    SWORN_GUARD(check_str(m->credential_id, SWORN_FRAME_ID_MAX, 1, "credential_id"));
    SWORN_ENSURE(m->n_tokens >= 1 && m->n_tokens <= SWORN_FRAME_EXCHANGE_MAX, SWORN_ERR_RANGE,
                 "tokens: %zu, not 1..%u", m->n_tokens, SWORN_FRAME_EXCHANGE_MAX);
    for (i = 0; i < m->n_tokens; i++) {
        SWORN_ENSURE(m->tokens[i] != NULL, SWORN_ERR_ARG, "tokens[%zu] is NULL", i);
        SWORN_GUARD(check_str(m->tokens[i]->field, 64, 1, "tokens[].field"));
        SWORN_ENSURE(m->tokens[i]->value.len >= 1 &&
                         m->tokens[i]->value.len <= SWORN_FRAME_CRED_MAX,
                     SWORN_ERR_RANGE, "tokens[].value is %zu bytes, not 1..%u",
                     m->tokens[i]->value.len, SWORN_FRAME_CRED_MAX);
    }
    return 0;
fail:
    return -1;
}

int sworn_frame_check_usage_report(const Sworn__V1__UsageReport *m)
{
    int has_missing;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "UsageReport is NULL");
    SWORN_GUARD(check_request_id(m->request_id));
    SWORN_GUARD(check_str(m->allow_request_id, SWORN_FRAME_ID_MAX, 1, "usage.allow_request_id"));
    SWORN_ENSURE(m->allow_log_index != 0, SWORN_ERR_FORMAT, "usage.allow_log_index is 0");
    SWORN_ENSURE(m->input_tokens <= SWORN_FRAME_TOKENS_COUNT_MAX &&
                     m->output_tokens <= SWORN_FRAME_TOKENS_COUNT_MAX,
                 SWORN_ERR_RANGE, "usage token counts are above %u", SWORN_FRAME_TOKENS_COUNT_MAX);
    SWORN_GUARD(check_str(m->missing, SWORN_FRAME_MISSING_MAX, 0, "usage.missing"));
    has_missing = m->missing != NULL && m->missing[0] != '\0';
    SWORN_ENSURE(m->reported ? !has_missing
                             : has_missing && m->input_tokens == 0 && m->output_tokens == 0,
                 SWORN_ERR_FORMAT,
                 "usage: a reported usage names no missing reason; an unreported one has one and "
                 "no token counts");
    return 0;
fail:
    return -1;
}

static int check_usage_result(const Sworn__V1__UsageResult *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "UsageResult is NULL");
    SWORN_GUARD(check_request_id(m->request_id));
    return check_hash(m->entry_hash, 1, "usage.entry_hash");
fail:
    return -1;
}

static int check_usage_recorded(const Sworn__V1__UsageRecorded *u)
{
    int has_missing;

    SWORN_ENSURE(u != NULL, SWORN_ERR_ARG, "entry.usage_recorded is NULL");
    SWORN_GUARD(check_request_id(u->request_id));
    SWORN_GUARD(
        check_str(u->allow_request_id, SWORN_FRAME_ID_MAX, 1, "usage_recorded.allow_request_id"));
    SWORN_ENSURE(u->allow_log_index != 0, SWORN_ERR_FORMAT, "usage_recorded.allow_log_index is 0");
    SWORN_GUARD(check_hash(u->allow_entry_hash, 1, "usage_recorded.allow_entry_hash"));
    SWORN_GUARD(check_str(u->model, SWORN_FRAME_MODEL_MAX, 0, "usage_recorded.model"));
    SWORN_ENSURE(u->input_tokens <= SWORN_FRAME_TOKENS_COUNT_MAX &&
                     u->output_tokens <= SWORN_FRAME_TOKENS_COUNT_MAX &&
                     u->reserved_tokens <= SWORN_FRAME_TOKENS_COUNT_MAX,
                 SWORN_ERR_RANGE, "usage_recorded token counts are above %u",
                 SWORN_FRAME_TOKENS_COUNT_MAX);
    SWORN_GUARD(check_str(u->missing, SWORN_FRAME_MISSING_MAX, 0, "usage_recorded.missing"));
    has_missing = u->missing != NULL && u->missing[0] != '\0';
    SWORN_ENSURE(u->reported ? !has_missing
                             : has_missing && u->input_tokens == 0 && u->output_tokens == 0,
                 SWORN_ERR_FORMAT,
                 "usage_recorded: a reported usage names no missing reason; an unreported one "
                 "has one and no token counts");
    SWORN_ENSURE(u->charged_tokens ==
                     (u->reported ? u->input_tokens + u->output_tokens : u->reserved_tokens),
                 SWORN_ERR_FORMAT,
                 "usage_recorded.charged_tokens is not input + output (reported) or the "
                 "reservation (not reported)");
    return 0;
fail:
    return -1;
}

static int check_exchange_result(const Sworn__V1__TokenExchangeResult *m)
{
    size_t i;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "TokenExchangeResult is NULL");
    SWORN_GUARD(check_request_id(m->request_id));
    SWORN_ENSURE(m->n_tokens >= 1 && m->n_tokens <= SWORN_FRAME_EXCHANGE_MAX, SWORN_ERR_RANGE,
                 "token_exchange.tokens: %zu, not 1..%u", m->n_tokens, SWORN_FRAME_EXCHANGE_MAX);
    for (i = 0; i < m->n_tokens; i++) {
        SWORN_ENSURE(m->tokens[i] != NULL, SWORN_ERR_ARG, "token_exchange.tokens[%zu] is NULL", i);
        SWORN_GUARD(check_str(m->tokens[i]->field, 64, 1, "token_exchange.tokens[].field"));
        SWORN_GUARD(check_str(m->tokens[i]->symbolic, 64, 1, "token_exchange.tokens[].symbolic"));
        SWORN_GUARD(check_str(m->tokens[i]->credential_id, SWORN_FRAME_ID_MAX, 1,
                              "token_exchange.tokens[].credential_id"));
    }
    return check_hash(m->entry_hash, 1, "token_exchange.entry_hash");
fail:
    return -1;
}

size_t sworn_frame_batch_path_len(uint32_t index, uint32_t size)
{
    /* RFC 9162 2.1.3: the path climbs from the leaf through the levels where index and size - 1
     * differ (inner), then through the right borders above them (border). */
    uint32_t x = index ^ (size - 1);
    size_t inner = 0, border = 0;

    if (index >= size)
        return 0;
    while (x != 0) {
        inner++;
        x >>= 1;
    }
    for (uint32_t b = index >> inner; b != 0; b >>= 1)
        border += b & 1;
    return inner + border;
}

int sworn_frame_check_receipt(const Sworn__V1__Receipt *r)
{
    SWORN_ENSURE(r != NULL, SWORN_ERR_ARG, "Receipt is NULL");
    SWORN_GUARD(check_hash(r->key_id, 1, "receipt.key_id"));
    SWORN_ENSURE(r->signature.len >= 1 && r->signature.len <= SWORN_FRAME_SIG_MAX, SWORN_ERR_RANGE,
                 "receipt.signature is %zu bytes, not 1..%u", r->signature.len,
                 SWORN_FRAME_SIG_MAX);
    SWORN_ENSURE(r->alg == 1 || r->alg == 2, SWORN_ERR_FORMAT, "receipt.alg %u is unknown",
                 (unsigned)r->alg);
    SWORN_ENSURE(r->form <= 3, SWORN_ERR_FORMAT, "receipt.form %u is unknown", (unsigned)r->form);
    if (r->form < 2)
        SWORN_ENSURE(r->batch_index == 0 && r->batch_size == 0 && r->batch_path.len == 0,
                     SWORN_ERR_FORMAT,
                     "only a batch receipt (form 2 or 3) has batch_index, batch_size or "
                     "batch_path");
    if (r->form >= 2) {
        /* one signature over a group's tree, and this item's place in it */
        SWORN_ENSURE(r->batch_size >= 1 && r->batch_size <= SWORN_FRAME_BATCH_MAX, SWORN_ERR_RANGE,
                     "receipt.batch_size %u is not 1..%u", (unsigned)r->batch_size,
                     SWORN_FRAME_BATCH_MAX);
        SWORN_ENSURE(r->batch_index < r->batch_size, SWORN_ERR_RANGE,
                     "receipt.batch_index %u is not below batch_size %u", (unsigned)r->batch_index,
                     (unsigned)r->batch_size);
        SWORN_ENSURE(r->batch_path.len ==
                         32 * sworn_frame_batch_path_len(r->batch_index, r->batch_size),
                     SWORN_ERR_FORMAT,
                     "receipt.batch_path is %zu bytes, not the %zu hashes of the inclusion path "
                     "of item %u of %u",
                     r->batch_path.len, sworn_frame_batch_path_len(r->batch_index, r->batch_size),
                     (unsigned)r->batch_index, (unsigned)r->batch_size);
    }
    if (r->form == 0 || r->form == 2) {
        SWORN_ENSURE(r->created == 0 && r->signature_params[0] == '\0', SWORN_ERR_FORMAT,
                     "a digest receipt (form %u) has no created or signature_params",
                     (unsigned)r->form);
        return 0;
    }
    /* forms 1 and 3: an ecdsa-p256-sha256 signature, r||s, with its RFC 9421 parameters */
    SWORN_ENSURE(r->alg == 1 && r->signature.len == 64, SWORN_ERR_FORMAT,
                 "an http-message receipt (form %u) is ECDSA P-256 (alg 1), 64 bytes r||s",
                 (unsigned)r->form);
    SWORN_ENSURE(r->created >= 1 && r->created <= SWORN_FRAME_CREATED_MAX, SWORN_ERR_RANGE,
                 "receipt.created is out of range");
    SWORN_ENSURE(r->signature_params[0] == '(', SWORN_ERR_FORMAT,
                 "receipt.signature_params is not an inner list");
    for (const char *c = r->signature_params; *c != '\0'; c++)
        SWORN_ENSURE(*c >= 0x20 && *c <= 0x7e && c - r->signature_params < SWORN_FRAME_PARAMS_MAX,
                     SWORN_ERR_FORMAT,
                     "receipt.signature_params is not 1..1024 bytes of printable ASCII");
    return 0;
fail:
    return -1;
}

int sworn_frame_check_decision(const Sworn__V1__Decision *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "Decision is NULL");
    SWORN_GUARD(check_request_id(m->request_id));
    SWORN_GUARD(check_effect(m->effect, 1));
    SWORN_GUARD(check_str(m->rule_id, SWORN_FRAME_ID_MAX, 0, "rule_id"));
    SWORN_GUARD(check_str(m->reason, SWORN_FRAME_TEXT_MAX, 0, "reason"));
    SWORN_GUARD(check_hash(m->entry_hash, 1, "entry_hash"));
    if (m->receipt != NULL) {
        SWORN_ENSURE(m->effect == SWORN__V1__EFFECT__EFFECT_ALLOW, SWORN_ERR_FORMAT,
                     "a receipt in a decision that is not an allow");
        SWORN_GUARD(sworn_frame_check_receipt(m->receipt));
    }
    if (m->credential != NULL) {
        SWORN_ENSURE(m->effect == SWORN__V1__EFFECT__EFFECT_ALLOW, SWORN_ERR_FORMAT,
                     "a credential in a decision that is not an allow");
        SWORN_GUARD(check_str(m->credential->id, SWORN_FRAME_ID_MAX, 1, "credential.id"));
        SWORN_GUARD(check_str(m->credential->header_name, 256, 0, "credential.header_name"));
        SWORN_GUARD(check_str(m->credential->query_name, 256, 0, "credential.query_name"));
        SWORN_GUARD(check_str(m->credential->form_name, 256, 0, "credential.form_name"));
        SWORN_ENSURE(
            (m->credential->header_name[0] != '\0') + (m->credential->query_name[0] != '\0') +
                    (m->credential->form_name[0] != '\0') ==
                1,
            SWORN_ERR_FORMAT, "credential needs exactly one of header_name, query_name, form_name");
        for (const char *f = m->credential->form_name; *f != '\0'; f++)
            SWORN_ENSURE((*f >= 'A' && *f <= 'Z') || (*f >= 'a' && *f <= 'z') ||
                             (*f >= '0' && *f <= '9') || strchr("._~-", *f) != NULL,
                         SWORN_ERR_FORMAT, "credential.form_name is not A-Z a-z 0-9 . _ ~ - only");
        SWORN_ENSURE(m->credential->value.len >= 1 &&
                         m->credential->value.len <= SWORN_FRAME_CRED_MAX,
                     SWORN_ERR_RANGE, "credential.value is %zu bytes, not 1..%u",
                     m->credential->value.len, SWORN_FRAME_CRED_MAX);
    }
    return 0;
fail:
    return -1;
}

int sworn_frame_check_error(const Sworn__V1__ErrorFrame *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "ErrorFrame is NULL");
    SWORN_ENSURE(m->code != 0, SWORN_ERR_FORMAT, "error code 0");
    SWORN_GUARD(check_str(m->message, SWORN_ERR_MSG_MAX, 0, "error.message"));
    SWORN_GUARD(check_str(m->request_id, SWORN_FRAME_ID_MAX, 0, "error.request_id"));
    return 0;
fail:
    return -1;
}

/*
 * The bytes of a length-delimited field of a 1-byte tag holding n bytes, and the varint length of
 * n; for the compile-time sum of SWORN_FRAME_RECORD_OVERHEAD below.
 */
#define PB_VARINT_LEN(n) ((n) < 128u ? 1u : (n) < 16384u ? 2u : (n) < 2097152u ? 3u : 4u)
#define PB_BYTES(n) (1u + PB_VARINT_LEN(n) + (n))

/* The worst-case canonical_resource: scheme, host, port 65535 (a 3-byte varint), path, tool,
 * uri. */
#define RECORD_CANON_MAX                                                                           \
    (PB_BYTES(SWORN_FRAME_CANON_SCHEME_MAX) + PB_BYTES(SWORN_FRAME_CANON_HOST_MAX) + 1u + 3u +     \
     PB_BYTES(SWORN_FRAME_STRING_MAX) + PB_BYTES(SWORN_FRAME_TOOL_MAX) +                           \
     PB_BYTES(SWORN_FRAME_URI_MAX))

/*
 * Everything a DecisionRecord entry holds besides the request's own bytes: the Entry's and the
 * request's tags and lengths (3-byte varints, as SWORN_FRAME_ENTRY_MAX needs), effect, rule_id,
 * reason, policy_digest, a 10-byte time, credential_id and its hash, canonical_resource and
 * raw_target_sha256, each at the most check_record lets through. frame.h's table is this sum.
 */
_Static_assert(SWORN_FRAME_ENTRY_MAX >= 16384u && SWORN_FRAME_ENTRY_MAX < 2097152u,
               "the entry's and the request's lengths are 3-byte varints");
_Static_assert(SWORN_FRAME_RECORD_OVERHEAD ==
                   (1u + 3u) + (1u + 3u) + 2u + PB_BYTES(SWORN_FRAME_ID_MAX) +
                       PB_BYTES(SWORN_FRAME_TEXT_MAX) + PB_BYTES(SWORN_FRAME_HASH_LEN) + 11u +
                       PB_BYTES(SWORN_FRAME_ID_MAX) + PB_BYTES(SWORN_FRAME_HASH_LEN) +
                       PB_BYTES(RECORD_CANON_MAX) + PB_BYTES(SWORN_FRAME_HASH_LEN),
               "SWORN_FRAME_RECORD_OVERHEAD is the DecisionRecord's worst case");
_Static_assert(SWORN_FRAME_REQUEST_MAX >= 16384u, "a request's length in a record is 3 bytes");
_Static_assert(
    SWORN_FRAME_SANDBOX_START_MAX ==
        SWORN_FRAME_ENTRY_MAX - (1u + 3u) - PB_BYTES(SWORN_FRAME_OPERATOR_MAX) - (1u + 10u),
    "SWORN_FRAME_SANDBOX_START_MAX leaves room for the operator, time and entry framing");

/*
 * A page of held escalations fits in one frame: each PendingEscalation holds a request of at most
 * SWORN_FRAME_REQUEST_MAX bytes (check_admin_response checks it), three varints of at most 10
 * bytes and a 32-byte hash; the page adds total (a uint32) and more; the AdminResponse its tag,
 * length and version. frame.h's table is this sum.
 */
_Static_assert(SWORN_FRAME_PENDING_MAX == PB_BYTES(SWORN_FRAME_REQUEST_MAX) + 3u * (1u + 10u) +
                                              PB_BYTES(SWORN_FRAME_HASH_LEN),
               "SWORN_FRAME_PENDING_MAX is a PendingEscalation's worst case");
_Static_assert(SWORN_FRAME_ESCALATIONS_MAX ==
                   PB_BYTES(SWORN_FRAME_ESCALATIONS_PAGE * PB_BYTES(SWORN_FRAME_PENDING_MAX) +
                            (1u + 5u) + (1u + 1u)) +
                       (1u + 5u),
               "SWORN_FRAME_ESCALATIONS_MAX is a full page's worst case");
_Static_assert(SWORN_FRAME_ESCALATIONS_MAX <= SWORN_FRAME_MAX - SWORN_FRAME_MAX / 8u,
               "a full page of held escalations fits in one frame, with an eighth to spare");

/*
 * The socket's total bound on a request: the per-field bounds alone let 256 header names of 256
 * bytes through, which no entry can hold, so the policy's decision could never be recorded.
 */
static int check_request_size(const Sworn__V1__AuthorizationRequest *m)
{
    size_t n = protobuf_c_message_get_packed_size(&m->base);

    if (n > SWORN_FRAME_REQUEST_MAX)
        return sworn_err_set(SWORN_ERR_RANGE,
                             "AuthorizationRequest is %zu bytes, more than %u (what a log entry "
                             "can hold beside its decision)",
                             n, SWORN_FRAME_REQUEST_MAX);
    return 0;
}

int sworn_frame_check_decision_request(const Sworn__V1__DecisionRequest *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "DecisionRequest is NULL");
    switch (m->body_case) {
    case SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE:
        SWORN_GUARD(sworn_frame_check_request(m->authorize));
        return check_request_size(m->authorize);
    case SWORN__V1__DECISION_REQUEST__BODY_TOKEN_EXCHANGE:
        return sworn_frame_check_exchange(m->token_exchange);
    case SWORN__V1__DECISION_REQUEST__BODY_USAGE:
        return sworn_frame_check_usage_report(m->usage);
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "DecisionRequest holds no known request");
    }
fail:
    return -1;
}

int sworn_frame_check_reply(const Sworn__V1__DecisionReply *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "DecisionReply is NULL");
    switch (m->body_case) {
    case SWORN__V1__DECISION_REPLY__BODY_DECISION:
        return sworn_frame_check_decision(m->decision);
    case SWORN__V1__DECISION_REPLY__BODY_ERROR:
        return sworn_frame_check_error(m->error);
    case SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE:
        return check_exchange_result(m->token_exchange);
    case SWORN__V1__DECISION_REPLY__BODY_USAGE:
        return check_usage_result(m->usage);
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "DecisionReply holds no known answer");
    }
fail:
    return -1;
}

static int check_record(const Sworn__V1__DecisionRecord *r)
{
    int has_cred = r->credential_id != NULL && r->credential_id[0] != '\0';

    SWORN_ENSURE(r->request != NULL, SWORN_ERR_FORMAT, "decision.request is missing");
    SWORN_GUARD(sworn_frame_check_request(r->request));
    SWORN_GUARD(check_effect(r->effect, 1));
    SWORN_GUARD(check_str(r->rule_id, SWORN_FRAME_ID_MAX, 0, "decision.rule_id"));
    SWORN_GUARD(check_str(r->reason, SWORN_FRAME_TEXT_MAX, 0, "decision.reason"));
    SWORN_GUARD(check_hash(r->policy_digest, 1, "decision.policy_digest"));
    SWORN_GUARD(check_str(r->credential_id, SWORN_FRAME_ID_MAX, 0, "decision.credential_id"));
    SWORN_GUARD(check_hash(r->credential_sha256, 0, "decision.credential_sha256"));
    SWORN_ENSURE(has_cred == (r->credential_sha256.len != 0), SWORN_ERR_FORMAT,
                 "decision.credential_id and credential_sha256 disagree");
    SWORN_ENSURE(!has_cred || r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW, SWORN_ERR_FORMAT,
                 "a credential released by a decision that is not an allow");
    SWORN_GUARD(check_hash(r->raw_target_sha256, 0, "decision.raw_target_sha256"));
    if (r->canonical_resource != NULL) {
        const Sworn__V1__Resource *c = r->canonical_resource;

        SWORN_ENSURE(r->raw_target_sha256.len != 0, SWORN_ERR_FORMAT,
                     "decision.canonical_resource without raw_target_sha256");
        SWORN_GUARD(check_str(c->scheme, SWORN_FRAME_CANON_SCHEME_MAX, 1,
                              "decision.canonical_resource.scheme"));
        SWORN_GUARD(
            check_str(c->host, SWORN_FRAME_CANON_HOST_MAX, 1, "decision.canonical_resource.host"));
        SWORN_ENSURE(c->port >= 1 && c->port <= 65535, SWORN_ERR_RANGE,
                     "decision.canonical_resource.port %u is outside 1..65535", (unsigned)c->port);
        if (strcmp(c->scheme, "tcp") == 0) {
            /* A raw tunnel (operation tcp.connect) has no path: policy/resource.h. */
            SWORN_ENSURE(c->path == NULL || c->path[0] == '\0', SWORN_ERR_FORMAT,
                         "decision.canonical_resource.path is not empty for scheme tcp");
        } else {
            SWORN_GUARD(
                check_str(c->path, SWORN_FRAME_STRING_MAX, 1, "decision.canonical_resource.path"));
            SWORN_ENSURE(c->path[0] == '/', SWORN_ERR_FORMAT,
                         "decision.canonical_resource.path does not start with '/'");
        }
        SWORN_GUARD(
            check_str(c->tool, SWORN_FRAME_TOOL_MAX, 0, "decision.canonical_resource.tool"));
        SWORN_GUARD(check_str(c->uri, SWORN_FRAME_URI_MAX, 0, "decision.canonical_resource.uri"));
    }
    return 0;
fail:
    return -1;
}

static int check_channel(const char *ch, const char *what)
{
    if (ch == NULL || (strcmp(ch, "decision") != 0 && strcmp(ch, "admin") != 0))
        return sworn_err_set(SWORN_ERR_FORMAT, "%s is neither decision nor admin", what);
    return 0;
}

/* A summary of dropped refusals: 1..256 pairs, each once, in ascending (channel, uid) order (so a
 * summary has one form), each count at least 1, and its times in order. */
static int check_refusals_dropped(const Sworn__V1__RefusalsDropped *r)
{
    SWORN_ENSURE(r != NULL, SWORN_ERR_ARG, "entry.refusals_dropped is NULL");
    SWORN_ENSURE(r->n_dropped >= 1 && r->n_dropped <= SWORN_FRAME_DROPPED_MAX, SWORN_ERR_RANGE,
                 "refusals_dropped.dropped: %zu, not 1..%u", r->n_dropped, SWORN_FRAME_DROPPED_MAX);
    SWORN_ENSURE(r->period_start_unix_ms <= r->period_end_unix_ms &&
                     r->period_end_unix_ms <= r->time_unix_ms,
                 SWORN_ERR_FORMAT,
                 "refusals_dropped: period_start <= period_end <= time_unix_ms does not hold");
    for (size_t i = 0; i < r->n_dropped; i++) {
        const Sworn__V1__DroppedRefusals *p = r->dropped[i];

        SWORN_ENSURE(p != NULL, SWORN_ERR_ARG, "refusals_dropped.dropped[%zu] is NULL", i);
        SWORN_GUARD(check_channel(p->channel, "refusals_dropped.dropped[].channel"));
        SWORN_ENSURE(p->count >= 1, SWORN_ERR_FORMAT, "refusals_dropped.dropped[%zu].count is 0",
                     i);
        if (i > 0) {
            const Sworn__V1__DroppedRefusals *q = r->dropped[i - 1];
            int c = strcmp(q->channel, p->channel);

            SWORN_ENSURE(c < 0 || (c == 0 && q->peer_uid < p->peer_uid), SWORN_ERR_FORMAT,
                         "refusals_dropped.dropped[%zu] is not after the one before it "
                         "(ascending channel, peer_uid; each pair once)",
                         i);
        }
    }
    return 0;
fail:
    return -1;
}

/* A time mark: a known reason, and clock_behind_ms exactly what its two times say (one form; the
 * verifier checks the high water against the entries before it). */
static int check_time_mark(const Sworn__V1__TimeMark *t)
{
    SWORN_ENSURE(t != NULL, SWORN_ERR_ARG, "entry.time_mark is NULL");
    SWORN_ENSURE(t->reason == SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START ||
                     t->reason == SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_PERIODIC,
                 SWORN_ERR_FORMAT, "time_mark.reason %d is not 1..2", (int)t->reason);
    SWORN_ENSURE(
        t->clock_behind_ms ==
            (t->high_water_unix_ms > t->time_unix_ms ? t->high_water_unix_ms - t->time_unix_ms : 0),
        SWORN_ERR_FORMAT,
        "time_mark.clock_behind_ms is not max(0, high_water_unix_ms - time_unix_ms)");
    return 0;
fail:
    return -1;
}

/* A witness event (docs/formats.md section 1, "Witness events"): a named witness (its note key
 * name: 1..256 bytes 0x21..0x7e, no '+'), its 4-byte key ID, a known kind, the checkpoint it was
 * about, a size it holds only with a 409, and a reason. */
static int check_witness_event(const Sworn__V1__WitnessEvent *w)
{
    size_t n;

    SWORN_ENSURE(w != NULL, SWORN_ERR_ARG, "entry.witness_event is NULL");
    n = w->witness == NULL ? 0 : strlen(w->witness);
    SWORN_ENSURE(n >= 1 && n <= 256, SWORN_ERR_FORMAT, "witness_event.witness is not 1..256 bytes");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)w->witness[i];

        SWORN_ENSURE(c >= 0x21 && c <= 0x7e && c != '+', SWORN_ERR_FORMAT,
                     "witness_event.witness is not a key name");
    }
    SWORN_ENSURE(w->key_id.len == 4, SWORN_ERR_FORMAT, "witness_event.key_id is not 4 bytes");
    SWORN_ENSURE(w->kind >= SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING &&
                     w->kind <= SWORN__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY,
                 SWORN_ERR_FORMAT, "witness_event.kind %d is not 1..3", (int)w->kind);
    SWORN_ENSURE(w->status <= 599, SWORN_ERR_FORMAT, "witness_event.status is above 599");
    SWORN_ENSURE(w->checkpoint_size != 0, SWORN_ERR_FORMAT, "witness_event.checkpoint_size is 0");
    SWORN_ENSURE(w->witness_size == 0 || w->status == 409, SWORN_ERR_FORMAT,
                 "witness_event.witness_size is set without a 409");
    SWORN_GUARD(check_str(w->reason, 256, 1, "witness_event.reason"));
    return 0;
fail:
    return -1;
}

/* An --only probe id in a conformance summary: 1..64 bytes 0x21..0x7e. */
static int check_probe_id(const char *id)
{
    size_t n = id == NULL ? 0 : strlen(id);

    SWORN_ENSURE(n >= 1 && n <= SWORN_FRAME_PROBE_ID_MAX, SWORN_ERR_FORMAT,
                 "conformance_report.summary.only holds an id that is not 1..%u bytes",
                 SWORN_FRAME_PROBE_ID_MAX);
    for (size_t i = 0; i < n; i++)
        SWORN_ENSURE(id[i] >= 0x21 && id[i] <= 0x7e, SWORN_ERR_FORMAT,
                     "conformance_report.summary.only holds an id with a byte outside 0x21..0x7e");
    return 0;
fail:
    return -1;
}

int sworn_frame_check_conformance_summary(const Sworn__V1__ConformanceSummary *s)
{
    uint64_t run;

    SWORN_ENSURE(s != NULL, SWORN_ERR_FORMAT, "conformance_report.summary is missing");
    SWORN_GUARD(check_hash(s->report_sha256, 1, "conformance_report.summary.report_sha256"));
    SWORN_ENSURE(s->report_length >= 1 && s->report_length <= SWORN_FRAME_REPORT_MAX,
                 SWORN_ERR_FORMAT, "conformance_report.summary.report_length is not 1..%u",
                 SWORN_FRAME_REPORT_MAX);
    SWORN_GUARD(check_hash(s->probe_set_sha256, 1, "conformance_report.summary.probe_set_sha256"));
    SWORN_ENSURE(s->probe_set_size >= 1 && s->probe_set_size <= SWORN_FRAME_PROBE_SET_MAX,
                 SWORN_ERR_FORMAT, "conformance_report.summary.probe_set_size is not 1..%u",
                 SWORN_FRAME_PROBE_SET_MAX);
    SWORN_ENSURE(s->tier >= 1 && s->tier <= 5, SWORN_ERR_FORMAT,
                 "conformance_report.summary.tier %u is not 1..5", (unsigned)s->tier);
    SWORN_GUARD(check_count(s->n_only, SWORN_FRAME_ONLY_MAX, "conformance_report.summary.only"));
    for (size_t i = 0; i < s->n_only; i++)
        SWORN_GUARD(check_probe_id(s->only[i]));
    run = (uint64_t)s->passed + s->failed + s->skipped + s->errors;
    SWORN_ENSURE(run >= 1 && run <= s->probe_set_size, SWORN_ERR_FORMAT,
                 "conformance_report.summary counts %llu probes run, not 1..probe_set_size",
                 (unsigned long long)run);
    SWORN_ENSURE(s->result == (s->failed == 0 && s->errors == 0
                                   ? SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_PASS
                                   : SWORN__V1__CONFORMANCE_RESULT__CONFORMANCE_RESULT_FAIL),
                 SWORN_ERR_FORMAT,
                 "conformance_report.summary.result is not PASS exactly when no probe failed or "
                 "ended in an error");
    SWORN_GUARD(check_str(s->operator_name, SWORN_FRAME_OPERATOR_MAX, 1,
                          "conformance_report.summary.operator_name"));
    SWORN_GUARD(check_str(s->operator_user, SWORN_FRAME_USER_MAX, 0,
                          "conformance_report.summary.operator_user"));
    SWORN_ENSURE(s->started_unix_ms != 0, SWORN_ERR_FORMAT,
                 "conformance_report.summary.started_unix_ms is 0");
    SWORN_ENSURE(s->ended_unix_ms >= s->started_unix_ms, SWORN_ERR_FORMAT,
                 "conformance_report.summary ends before it starts");
    SWORN_ENSURE((s->checkpoint_size == 0) == (s->checkpoint_root.len == 0), SWORN_ERR_FORMAT,
                 "conformance_report.summary.checkpoint_root is set exactly when "
                 "checkpoint_size is not 0");
    SWORN_GUARD(check_hash(s->checkpoint_root, 0, "conformance_report.summary.checkpoint_root"));
    SWORN_ENSURE(
        s->checkpoint_size == 0 ? s->startup_index == 0 : s->startup_index < s->checkpoint_size,
        SWORN_ERR_FORMAT, "conformance_report.summary.startup_index is not below checkpoint_size");
    return 0;
fail:
    return -1;
}

/* A recorded conformance report (docs/formats.md section 15): its summary, decisiond's operator
 * and a signature of its key (key id, 1..512 bytes, alg 1 or 2; whether it verifies is the
 * verifier's business, as for receipts). */
static int check_conformance_report(const Sworn__V1__ConformanceReport *r)
{
    SWORN_ENSURE(r != NULL, SWORN_ERR_ARG, "entry.conformance_report is NULL");
    SWORN_GUARD(sworn_frame_check_conformance_summary(r->summary));
    SWORN_GUARD(
        check_str(r->operator_, SWORN_FRAME_OPERATOR_MAX, 1, "conformance_report.operator"));
    SWORN_GUARD(check_hash(r->key_id, 1, "conformance_report.key_id"));
    SWORN_ENSURE(r->signature.len >= 1 && r->signature.len <= SWORN_FRAME_SIG_MAX, SWORN_ERR_FORMAT,
                 "conformance_report.signature is not 1..%u bytes", SWORN_FRAME_SIG_MAX);
    SWORN_ENSURE(r->alg == 1 || r->alg == 2, SWORN_ERR_FORMAT,
                 "conformance_report.alg %u is not 1 or 2", (unsigned)r->alg);
    SWORN_ENSURE(r->alg != 2 || r->signature.len == 64, SWORN_ERR_FORMAT,
                 "conformance_report.signature: an Ed25519 signature is 64 bytes");
    return 0;
fail:
    return -1;
}

/*
 * The entry's time stamp (docs/formats.md, "Time stamps of entries"): every kind carries
 * decisiond's clock, and decisiond never writes 0 (writing). Read back, an EscalationResolved
 * may lack one: it had no field 7 before issue 13 (finding 6), and decisiond still reads its own
 * older log at start; sworn-verify refuses such an entry (time-missing). Every other kind always
 * had its time, so 0 there is refused also when read.
 */
static int check_entry_time(const Sworn__V1__Entry *m, int writing)
{
    uint64_t t;

    switch (m->kind_case) {
    case SWORN__V1__ENTRY__KIND_DECISION:
        t = m->decision->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_POLICY_LOADED:
        t = m->policy_loaded->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_KEY_EVENT:
        t = m->key_event->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_STARTUP:
        t = m->startup->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED:
        t = m->escalation_resolved->time_unix_ms;
        if (!writing)
            return 0;
        break;
    case SWORN__V1__ENTRY__KIND_REFUSED:
        t = m->refused->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED:
        t = m->credentials_minted->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED:
        t = m->refusals_dropped->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_TIME_MARK:
        t = m->time_mark->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_SANDBOX_STARTED:
        t = m->sandbox_started->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_SANDBOX_ENDED:
        t = m->sandbox_ended->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_USAGE_RECORDED:
        t = m->usage_recorded->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_WITNESS_EVENT:
        t = m->witness_event->time_unix_ms;
        break;
    case SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT:
        t = m->conformance_report->time_unix_ms;
        break;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "Entry holds no known kind");
    }
    if (t == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "entry.time_unix_ms is missing (0)");
    return 0;
}

/* The isolation modes of docs/sandbox.md and the ways limits are held (SandboxLimits). */
static int one_of(const char *s, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s != NULL && strcmp(s, set[i]) == 0)
            return 1;
    return 0;
}

/*
 * A SandboxStarted: as the admin call carries it (recorded 0: operator empty and time 0, since
 * decisiond fills both in) or as the log stores it (recorded 1: both required). what prefixes
 * the messages ("sandbox_start.started" or "sandbox_started").
 */
static int check_sandbox_started(const Sworn__V1__SandboxStarted *s, int recorded, const char *what)
{
    static const char *const enforced[] = {"cgroup2", "cgroup1", "rlimit"};
    static const char *const isolation[] = {"root", "unprivileged"};
    char field[64];

    SWORN_ENSURE(s != NULL, SWORN_ERR_FORMAT, "%s is missing", what);
    SWORN_ENSURE(sworn_frame_name_ok(s->principal), SWORN_ERR_FORMAT,
                 "%s.principal must be 1..%u printable ASCII bytes without spaces", what,
                 SWORN_FRAME_NAME_MAX);
    SWORN_ENSURE(sworn_frame_name_ok(s->name), SWORN_ERR_FORMAT,
                 "%s.name must be 1..%u printable ASCII bytes without spaces", what,
                 SWORN_FRAME_NAME_MAX);
    SWORN_ENSURE(s->sandbox_id.len == SWORN_FRAME_SANDBOX_ID_LEN, SWORN_ERR_FORMAT,
                 "%s.sandbox_id is %zu bytes, not %u", what, s->sandbox_id.len,
                 SWORN_FRAME_SANDBOX_ID_LEN);
    SWORN_ENSURE(s->n_command >= 1 && s->n_command <= SWORN_FRAME_COMMAND_MAX, SWORN_ERR_RANGE,
                 "%s.command has %zu items, not 1..%u", what, s->n_command,
                 SWORN_FRAME_COMMAND_MAX);
    snprintf(field, sizeof(field), "%s.command[]", what);
    for (size_t i = 0; i < s->n_command; i++)
        SWORN_GUARD(check_str(s->command[i], SWORN_FRAME_STRING_MAX, 0, field));
    SWORN_ENSURE(s->limits != NULL, SWORN_ERR_FORMAT, "%s.limits is missing", what);
    SWORN_ENSURE(one_of(s->limits->enforced_by, enforced, 3), SWORN_ERR_FORMAT,
                 "%s.limits.enforced_by is not cgroup2, cgroup1 or rlimit", what);
    snprintf(field, sizeof(field), "%s.config_sha256", what);
    SWORN_GUARD(check_hash(s->config_sha256, 1, field));
    SWORN_ENSURE(one_of(s->isolation, isolation, 2), SWORN_ERR_FORMAT,
                 "%s.isolation is neither root nor unprivileged", what);
    if (recorded) {
        snprintf(field, sizeof(field), "%s.operator", what);
        SWORN_GUARD(check_str(s->operator_, SWORN_FRAME_OPERATOR_MAX, 1, field));
        SWORN_ENSURE(s->time_unix_ms != 0, SWORN_ERR_FORMAT, "%s.time_unix_ms is missing (0)",
                     what);
    } else {
        SWORN_ENSURE(s->operator_ == NULL || s->operator_[0] == '\0', SWORN_ERR_FORMAT,
                     "%s.operator must be empty: decisiond fills it in", what);
        SWORN_ENSURE(s->time_unix_ms == 0, SWORN_ERR_FORMAT,
                     "%s.time_unix_ms must be 0: decisiond fills it in", what);
    }
    return 0;
fail:
    return -1;
}

/*
 * A SandboxEnded, recorded or not as above. Its code has one form per reason: EXITED an exit
 * status 0..255; SIGNALED and STOPPED a signal number 1..64; TIMEOUT and FAILED 0 (no status:
 * sworn-run killed the sandbox, or it never ran or could not be supervised).
 */
static int check_sandbox_ended(const Sworn__V1__SandboxEnded *e, int recorded, const char *what)
{
    uint32_t lo = 0, hi = 0;
    char field[64];

    SWORN_ENSURE(e != NULL, SWORN_ERR_FORMAT, "%s is missing", what);
    SWORN_ENSURE(e->start_index != 0, SWORN_ERR_FORMAT, "%s.start_index is missing (0)", what);
    SWORN_ENSURE(e->sandbox_id.len == SWORN_FRAME_SANDBOX_ID_LEN, SWORN_ERR_FORMAT,
                 "%s.sandbox_id is %zu bytes, not %u", what, e->sandbox_id.len,
                 SWORN_FRAME_SANDBOX_ID_LEN);
    switch (e->reason) {
    case SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_EXITED:
        hi = 255;
        break;
    case SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_SIGNALED:
    case SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_STOPPED:
        lo = 1;
        hi = 64;
        break;
    case SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_TIMEOUT:
    case SWORN__V1__SANDBOX_END_REASON__SANDBOX_END_REASON_FAILED:
        break;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "%s.reason %d is not 1..5", what, (int)e->reason);
    }
    SWORN_ENSURE(e->code >= lo && e->code <= hi, SWORN_ERR_RANGE,
                 "%s.code %u is outside %u..%u for its reason", what, (unsigned)e->code,
                 (unsigned)lo, (unsigned)hi);
    if (recorded) {
        snprintf(field, sizeof(field), "%s.operator", what);
        SWORN_GUARD(check_str(e->operator_, SWORN_FRAME_OPERATOR_MAX, 1, field));
        SWORN_ENSURE(e->time_unix_ms != 0, SWORN_ERR_FORMAT, "%s.time_unix_ms is missing (0)",
                     what);
    } else {
        SWORN_ENSURE(e->operator_ == NULL || e->operator_[0] == '\0', SWORN_ERR_FORMAT,
                     "%s.operator must be empty: decisiond fills it in", what);
        SWORN_ENSURE(e->time_unix_ms == 0, SWORN_ERR_FORMAT,
                     "%s.time_unix_ms must be 0: decisiond fills it in", what);
    }
    return 0;
fail:
    return -1;
}

static int check_entry_shape(const Sworn__V1__Entry *m)
{
    size_t i;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "Entry is NULL");
    switch (m->kind_case) {
    case SWORN__V1__ENTRY__KIND_DECISION:
        SWORN_ENSURE(m->decision != NULL, SWORN_ERR_ARG, "entry.decision is NULL");
        return check_record(m->decision);
    case SWORN__V1__ENTRY__KIND_POLICY_LOADED:
        SWORN_ENSURE(m->policy_loaded != NULL, SWORN_ERR_ARG, "entry.policy_loaded is NULL");
        SWORN_GUARD(check_hash(m->policy_loaded->digest, 1, "policy_loaded.digest"));
        SWORN_GUARD(
            check_str(m->policy_loaded->error, SWORN_FRAME_TEXT_MAX, 0, "policy_loaded.error"));
        return check_str(m->policy_loaded->source, SWORN_FRAME_STRING_MAX, 1,
                         "policy_loaded.source");
    case SWORN__V1__ENTRY__KIND_KEY_EVENT:
        SWORN_ENSURE(m->key_event != NULL, SWORN_ERR_ARG, "entry.key_event is NULL");
        SWORN_ENSURE(m->key_event->statement.len > 0, SWORN_ERR_FORMAT,
                     "key_event.statement is missing");
        return 0;
    case SWORN__V1__ENTRY__KIND_STARTUP: {
        size_t n_policy = 0;

        SWORN_ENSURE(m->startup != NULL, SWORN_ERR_ARG, "entry.startup is NULL");
        SWORN_GUARD(check_count(m->startup->n_files, SWORN_FRAME_FILES_MAX, "startup.files"));
        for (i = 0; i < m->startup->n_files; i++) {
            SWORN_ENSURE(m->startup->files[i] != NULL, SWORN_ERR_ARG, "startup.files[] is NULL");
            SWORN_GUARD(check_str(m->startup->files[i]->path, SWORN_FRAME_STRING_MAX, 1,
                                  "startup.files[].path"));
            SWORN_GUARD(check_hash(m->startup->files[i]->sha256, 1, "startup.files[].sha256"));
            /* 0: a start recorded before roles existed (the log still holds it). */
            SWORN_ENSURE((int)m->startup->files[i]->role >=
                                 SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_UNSPECIFIED &&
                             m->startup->files[i]->role <=
                                 SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXTRA,
                         SWORN_ERR_FORMAT, "startup.files[].role %d is not 0..5",
                         (int)m->startup->files[i]->role);
            if (m->startup->files[i]->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY)
                n_policy++;
        }
        SWORN_ENSURE(n_policy <= 1, SWORN_ERR_FORMAT, "startup: more than one policy file");
        SWORN_GUARD(check_hash(m->startup->pcr23_before, 0, "startup.pcr23_before"));
        SWORN_ENSURE((m->startup->pcr23.len == 0) == (m->startup->pcr23_before.len == 0),
                     SWORN_ERR_FORMAT, "startup.pcr23 and pcr23_before must both be set or empty");
        return check_hash(m->startup->pcr23, 0, "startup.pcr23");
    }
    case SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED:
        SWORN_ENSURE(m->escalation_resolved != NULL, SWORN_ERR_ARG,
                     "entry.escalation_resolved is NULL");
        SWORN_GUARD(check_request_id(m->escalation_resolved->request_id));
        SWORN_GUARD(check_effect(m->escalation_resolved->effect, 0));
        SWORN_GUARD(
            check_str(m->escalation_resolved->operator_, 256, 1, "escalation_resolved.operator"));
        SWORN_GUARD(check_hash(m->escalation_resolved->escalation_hash, 0,
                               "escalation_resolved.escalation_hash"));
        /* Index and hash name the escalate entry resolved; an entry written before they
         * existed has neither (the verifier then cannot link it, and says so). Index 0 is a
         * valid index, so only the hash tells the two apart. */
        SWORN_ENSURE(m->escalation_resolved->escalation_hash.len != 0 ||
                         m->escalation_resolved->escalation_index == 0,
                     SWORN_ERR_FORMAT,
                     "escalation_resolved.escalation_index without escalation_hash");
        return check_str(m->escalation_resolved->reason, SWORN_FRAME_TEXT_MAX, 0,
                         "escalation_resolved.reason");
    case SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED: {
        const Sworn__V1__CredentialsMinted *c = m->credentials_minted;

        SWORN_ENSURE(c != NULL, SWORN_ERR_ARG, "entry.credentials_minted is NULL");
        SWORN_GUARD(check_request_id(c->request_id));
        SWORN_GUARD(check_str(c->allow_request_id, SWORN_FRAME_ID_MAX, 1,
                              "credentials_minted.allow_request_id"));
        SWORN_GUARD(check_str(c->from_credential_id, SWORN_FRAME_ID_MAX, 1,
                              "credentials_minted.from_credential_id"));
        SWORN_ENSURE(c->n_minted >= 1 && c->n_minted <= SWORN_FRAME_EXCHANGE_MAX, SWORN_ERR_RANGE,
                     "credentials_minted.minted: %zu, not 1..%u", c->n_minted,
                     SWORN_FRAME_EXCHANGE_MAX);
        for (i = 0; i < c->n_minted; i++) {
            SWORN_ENSURE(c->minted[i] != NULL, SWORN_ERR_ARG, "minted[%zu] is NULL", i);
            SWORN_GUARD(check_str(c->minted[i]->field, 64, 1, "minted[].field"));
            SWORN_GUARD(check_str(c->minted[i]->credential_id, SWORN_FRAME_ID_MAX, 1,
                                  "minted[].credential_id"));
            SWORN_GUARD(check_hash(c->minted[i]->value_sha256, 1, "minted[].value_sha256"));
            SWORN_GUARD(check_hash(c->minted[i]->symbolic_sha256, 1, "minted[].symbolic_sha256"));
        }
        SWORN_ENSURE(c->n_replaced_credential_ids <= SWORN_FRAME_REPLACED_MAX, SWORN_ERR_RANGE,
                     "credentials_minted.replaced_credential_ids: %zu, more than %u",
                     c->n_replaced_credential_ids, SWORN_FRAME_REPLACED_MAX);
        for (i = 0; i < c->n_replaced_credential_ids; i++) {
            SWORN_GUARD(check_str(c->replaced_credential_ids[i], SWORN_FRAME_ID_MAX, 1,
                                  "credentials_minted.replaced_credential_ids[]"));
            /* Distinct, and none is also minted by this entry (vault.h: ids never collide). */
            for (size_t k = 0; k < i; k++)
                SWORN_ENSURE(strcmp(c->replaced_credential_ids[k], c->replaced_credential_ids[i]),
                             SWORN_ERR_FORMAT, "credentials_minted: a credential replaced twice");
            for (size_t k = 0; k < c->n_minted; k++)
                SWORN_ENSURE(strcmp(c->minted[k]->credential_id, c->replaced_credential_ids[i]),
                             SWORN_ERR_FORMAT,
                             "credentials_minted: a credential both minted and replaced");
        }
        return 0;
    }
    case SWORN__V1__ENTRY__KIND_REFUSED:
        SWORN_ENSURE(m->refused != NULL, SWORN_ERR_ARG, "entry.refused is NULL");
        SWORN_ENSURE(m->refused->channel != NULL && (strcmp(m->refused->channel, "decision") == 0 ||
                                                     strcmp(m->refused->channel, "admin") == 0),
                     SWORN_ERR_FORMAT, "refused.channel is neither decision nor admin");
        SWORN_ENSURE(m->refused->code != 0, SWORN_ERR_FORMAT, "refused.code is 0");
        SWORN_GUARD(check_str(m->refused->message, SWORN_ERR_MSG_MAX, 0, "refused.message"));
        SWORN_GUARD(check_str(m->refused->request_id, SWORN_FRAME_ID_MAX, 0, "refused.request_id"));
        return check_hash(m->refused->frame_sha256, 0, "refused.frame_sha256");
    case SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED:
        return check_refusals_dropped(m->refusals_dropped);
    case SWORN__V1__ENTRY__KIND_TIME_MARK:
        return check_time_mark(m->time_mark);
    case SWORN__V1__ENTRY__KIND_SANDBOX_STARTED:
        return check_sandbox_started(m->sandbox_started, 1, "sandbox_started");
    case SWORN__V1__ENTRY__KIND_SANDBOX_ENDED:
        return check_sandbox_ended(m->sandbox_ended, 1, "sandbox_ended");
    case SWORN__V1__ENTRY__KIND_USAGE_RECORDED:
        return check_usage_recorded(m->usage_recorded);
    case SWORN__V1__ENTRY__KIND_WITNESS_EVENT:
        return check_witness_event(m->witness_event);
    case SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT:
        return check_conformance_report(m->conformance_report);
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "Entry holds no known kind");
    }
fail:
    return -1;
}

int sworn_frame_check_entry(const Sworn__V1__Entry *m)
{
    SWORN_GUARD(check_entry_shape(m));
    return check_entry_time(m, 0);
fail:
    return -1;
}

int sworn_frame_check_admin_request(const Sworn__V1__AdminRequest *m)
{
    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "AdminRequest is NULL");
    switch (m->body_case) {
    case SWORN__V1__ADMIN_REQUEST__BODY_STATUS:
    case SWORN__V1__ADMIN_REQUEST__BODY_RELOAD_POLICY:
    case SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW:
    case SWORN__V1__ADMIN_REQUEST__BODY_METRICS:
        return 0;
    case SWORN__V1__ADMIN_REQUEST__BODY_LIST_ESCALATIONS:
        /* from_index may be any index: a page from past the newest entry is empty. */
        SWORN_ENSURE(m->list_escalations != NULL, SWORN_ERR_ARG, "list_escalations is NULL");
        return 0;
    case SWORN__V1__ADMIN_REQUEST__BODY_RESOLVE:
        SWORN_ENSURE(m->resolve != NULL, SWORN_ERR_ARG, "resolve is NULL");
        /* The escalate entry's index names what is resolved (0 is a valid index, so it cannot
         * be told from an absent one: a client that sends only a request id names index 0,
         * which decisiond always fills with its Startup entry); the id and hash are checks. */
        SWORN_GUARD(check_hash(m->resolve->escalation_hash, 0, "resolve.escalation_hash"));
        SWORN_GUARD(check_str(m->resolve->request_id, SWORN_FRAME_ID_MAX, 0, "resolve.request_id"));
        return check_str(m->resolve->reason, SWORN_FRAME_TEXT_MAX, 0, "resolve.reason");
    case SWORN__V1__ADMIN_REQUEST__BODY_TAIL:
        SWORN_ENSURE(m->tail != NULL, SWORN_ERR_ARG, "tail is NULL");
        SWORN_ENSURE(m->tail->count >= 1 && m->tail->count <= SWORN_FRAME_TAIL_MAX, SWORN_ERR_RANGE,
                     "tail.count %u is outside 1..%u", (unsigned)m->tail->count,
                     SWORN_FRAME_TAIL_MAX);
        return 0;
    case SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_START:
        SWORN_ENSURE(m->sandbox_start != NULL, SWORN_ERR_ARG, "sandbox_start is NULL");
        SWORN_GUARD(check_sandbox_started(m->sandbox_start->started, 0, "sandbox_start.started"));
        {
            size_t n = protobuf_c_message_get_packed_size(&m->sandbox_start->started->base);

            SWORN_ENSURE(n <= SWORN_FRAME_SANDBOX_START_MAX, SWORN_ERR_RANGE,
                         "sandbox_start.started is %zu bytes, more than %u (what a log entry can "
                         "hold beside its operator and time)",
                         n, SWORN_FRAME_SANDBOX_START_MAX);
        }
        return 0;
    case SWORN__V1__ADMIN_REQUEST__BODY_SANDBOX_END:
        SWORN_ENSURE(m->sandbox_end != NULL, SWORN_ERR_ARG, "sandbox_end is NULL");
        return check_sandbox_ended(m->sandbox_end->ended, 0, "sandbox_end.ended");
    case SWORN__V1__ADMIN_REQUEST__BODY_CONFORMANCE_REPORT:
        /* The report's own rules need a JSON reader: decisiond's (d_report.h). */
        SWORN_ENSURE(m->conformance_report != NULL, SWORN_ERR_ARG, "conformance_report is NULL");
        SWORN_ENSURE(m->conformance_report->report_json.len >= 1 &&
                         m->conformance_report->report_json.len <= SWORN_FRAME_REPORT_MAX,
                     SWORN_ERR_RANGE, "conformance_report.report_json is %zu bytes, not 1..%u",
                     m->conformance_report->report_json.len, SWORN_FRAME_REPORT_MAX);
        return 0;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "AdminRequest holds no known request");
    }
fail:
    return -1;
}

/*
 * A page of held escalations: at most SWORN_FRAME_ESCALATIONS_PAGE, in strictly ascending log
 * index (so a client paging from the last index + 1 always moves on, and lists none twice), each
 * request no larger than the decision socket accepts (so a full page fits in a frame); `more`
 * only on a full page, and `total` at least what the page shows (and one more with `more`).
 */
static int check_escalations_page(const Sworn__V1__ListEscalationsResponse *l)
{
    size_t i;

    SWORN_ENSURE(l != NULL, SWORN_ERR_ARG, "list_escalations is NULL");
    SWORN_GUARD(
        check_count(l->n_pending, SWORN_FRAME_ESCALATIONS_PAGE, "list_escalations.pending"));
    SWORN_ENSURE(!l->more || l->n_pending == SWORN_FRAME_ESCALATIONS_PAGE, SWORN_ERR_FORMAT,
                 "list_escalations.more on a page of %zu, not a full page of %u", l->n_pending,
                 SWORN_FRAME_ESCALATIONS_PAGE);
    SWORN_ENSURE((uint64_t)l->total >= (uint64_t)l->n_pending + (l->more ? 1u : 0u),
                 SWORN_ERR_FORMAT, "list_escalations.total %u is less than the %zu%s listed",
                 (unsigned)l->total, l->n_pending, l->more ? " (and more)" : "");
    for (i = 0; i < l->n_pending; i++) {
        const Sworn__V1__PendingEscalation *e = l->pending[i];

        SWORN_ENSURE(e != NULL && e->request != NULL, SWORN_ERR_FORMAT,
                     "list_escalations.pending[%zu] has no request", i);
        SWORN_ENSURE(i == 0 || e->log_index > l->pending[i - 1]->log_index, SWORN_ERR_FORMAT,
                     "list_escalations.pending[%zu].log_index %llu does not follow %llu", i,
                     (unsigned long long)e->log_index,
                     (unsigned long long)l->pending[i - 1]->log_index);
        SWORN_GUARD(check_hash(e->entry_hash, 1, "list_escalations.pending[].entry_hash"));
        SWORN_GUARD(sworn_frame_check_request(e->request));
        SWORN_GUARD(check_request_size(e->request));
    }
    return 0;
fail:
    return -1;
}

int sworn_frame_check_admin_response(const Sworn__V1__AdminResponse *m)
{
    size_t i;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "AdminResponse is NULL");
    switch (m->body_case) {
    case SWORN__V1__ADMIN_RESPONSE__BODY_ERROR:
        return sworn_frame_check_error(m->error);
    case SWORN__V1__ADMIN_RESPONSE__BODY_STATUS:
        SWORN_ENSURE(m->status != NULL, SWORN_ERR_ARG, "status is NULL");
        return check_hash(m->status->policy_digest, 0, "status.policy_digest");
    case SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS:
        return check_escalations_page(m->list_escalations);
    case SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE:
    case SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW:
    case SWORN__V1__ADMIN_RESPONSE__BODY_METRICS:
        return 0;
    case SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX:
        SWORN_ENSURE(m->sandbox != NULL, SWORN_ERR_ARG, "sandbox is NULL");
        SWORN_ENSURE(m->sandbox->log_index != 0, SWORN_ERR_FORMAT,
                     "sandbox.log_index is 0 (entry 0 is always a Startup entry)");
        return 0;
    case SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT:
        SWORN_ENSURE(m->conformance_report != NULL, SWORN_ERR_ARG, "conformance_report is NULL");
        SWORN_ENSURE(m->conformance_report->log_index != 0, SWORN_ERR_FORMAT,
                     "conformance_report.log_index is 0 (entry 0 is always a Startup entry)");
        SWORN_GUARD(
            check_hash(m->conformance_report->entry_hash, 1, "conformance_report.entry_hash"));
        return check_hash(m->conformance_report->report_sha256, 1,
                          "conformance_report.report_sha256");
    case SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY:
        SWORN_ENSURE(m->reload_policy != NULL, SWORN_ERR_ARG, "reload_policy is NULL");
        return check_hash(m->reload_policy->digest, 1, "reload_policy.digest");
    case SWORN__V1__ADMIN_RESPONSE__BODY_TAIL:
        SWORN_ENSURE(m->tail != NULL, SWORN_ERR_ARG, "tail is NULL");
        SWORN_GUARD(check_count(m->tail->n_entries, SWORN_FRAME_TAIL_MAX, "tail.entries"));
        for (i = 0; i < m->tail->n_entries; i++)
            SWORN_GUARD(sworn_frame_check_entry(m->tail->entries[i]));
        return 0;
    default:
        return sworn_err_set(SWORN_ERR_FORMAT, "AdminResponse holds no known result");
    }
fail:
    return -1;
}

/* --- packing and unpacking ---------------------------------------------------------------- */

/* Pack m (already checked) into a new buffer, after a frame header when framed. */
static int pack(const ProtobufCMessage *m, int framed, uint8_t **out, size_t *out_len)
{
    size_t n = protobuf_c_message_get_packed_size(m), hdr = framed ? SWORN_FRAME_HDR_LEN : 0;
    size_t max = framed ? SWORN_FRAME_MAX : SWORN_FRAME_ENTRY_MAX;
    uint8_t *b;

    *out = NULL;
    *out_len = 0;
    if (n == 0 || n > max)
        return sworn_err_set(SWORN_ERR_RANGE, "%s packs to %zu bytes, outside 1..%zu",
                             m->descriptor->short_name, n, max);
    b = malloc(hdr + n);
    if (b == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "no memory to pack %s", m->descriptor->short_name);
    if (framed)
        sworn_put_u32be(b, (uint32_t)n);
    if (protobuf_c_message_pack(m, b + hdr) != n) {
        free(b);
        return sworn_err_set(SWORN_ERR_CORRUPT, "protobuf-c packed %s to an unexpected size",
                             m->descriptor->short_name);
    }
    *out = b;
    *out_len = hdr + n;
    return 0;
}

/*
 * Does m or any message inside it hold unknown fields? protobuf-c keeps them and re-packs them,
 * so the canonical check alone would let them through. depth bounds the recursion (protobuf-c
 * itself bounds the nesting it unpacks; sworn.proto nests at most 4 deep).
 */
static int has_unknown(const ProtobufCMessage *m, unsigned depth)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    unsigned i;

    if (m->n_unknown_fields > 0 || depth > 16)
        return 1;
    for (i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *base = (const char *)m;

        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(const void *)(base + f->quantifier_offset), k;
            ProtobufCMessage *const *arr =
                *(ProtobufCMessage *const *const *)(const void *)(base + f->offset);

            for (k = 0; k < n; k++)
                if (arr[k] != NULL && has_unknown(arr[k], depth + 1))
                    return 1;
        } else {
            const ProtobufCMessage *sub =
                *(const ProtobufCMessage *const *)(const void *)(base + f->offset);

            if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                *(const uint32_t *)(const void *)(base + f->quantifier_offset) != f->id)
                continue;
            if (sub != NULL && has_unknown(sub, depth + 1))
                return 1;
        }
    }
    return 0;
}

/* No envelope: the message has no version field. */
#define NO_VERSION ((size_t)-1)

/*
 * Unpack p[0..len) as a message of descriptor d and require that it re-packs to the same bytes.
 * For an envelope, version_off is the offset of its uint32 version field, which must be
 * SWORN_WIRE_VERSION: checked first, so a peer of another version learns that, not which field
 * it sent that this side does not know. Returns the message, or NULL with sworn_err set.
 */
static ProtobufCMessage *unpack(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len,
                                size_t version_off)
{
    ProtobufCMessage *m = NULL;
    uint8_t *again = NULL;

    SWORN_ENSURE(p != NULL || len == 0, SWORN_ERR_ARG, "%s: NULL input", d->short_name);
    SWORN_ENSURE(len >= 1 && len <= SWORN_FRAME_MAX, SWORN_ERR_RANGE,
                 "%s of %zu bytes is outside 1..%u", d->short_name, len, SWORN_FRAME_MAX);
    m = protobuf_c_message_unpack(d, NULL, len, p);
    SWORN_ENSURE(m != NULL, SWORN_ERR_FORMAT, "%s does not decode as protobuf", d->short_name);
    if (version_off != NO_VERSION) {
        uint32_t v = *(const uint32_t *)(const void *)((const char *)m + version_off);

        SWORN_ENSURE(v == SWORN_WIRE_VERSION, SWORN_ERR_FORMAT,
                     "%s is of wire version %lu; this side speaks %u", d->short_name,
                     (unsigned long)v, SWORN_WIRE_VERSION);
    }
    SWORN_ENSURE(!has_unknown(m, 0), SWORN_ERR_FORMAT, "%s holds unknown fields", d->short_name);
    SWORN_ENSURE(protobuf_c_message_get_packed_size(m) == len, SWORN_ERR_FORMAT,
                 "%s is not canonically encoded (size differs)", d->short_name);
    again = malloc(len);
    SWORN_ENSURE(again != NULL, SWORN_ERR_NOMEM, "no memory to check %s", d->short_name);
    SWORN_ENSURE(protobuf_c_message_pack(m, again) == len && memcmp(again, p, len) == 0,
                 SWORN_ERR_FORMAT, "%s is not canonically encoded", d->short_name);
    sworn_memzero(again, len); /* a copy of the body, which may hold a credential or tokens */
    free(again);
    return m;
fail:
    if (again != NULL)
        sworn_memzero(again, len);
    free(again);
    if (m != NULL)
        protobuf_c_message_free_unpacked(m, NULL);
    return NULL;
}

int sworn_frame_pack_request(const Sworn__V1__AuthorizationRequest *m, uint8_t **out,
                             size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_request(m) != 0)
        return -1;
    return pack(&m->base, 1, out, out_len);
}

/* An envelope's version as it is sent: the caller's, or SWORN_WIRE_VERSION when left 0. */
static int stamp(uint32_t *version, const char *what)
{
    if (*version == 0)
        *version = SWORN_WIRE_VERSION;
    if (*version != SWORN_WIRE_VERSION)
        return sworn_err_set(SWORN_ERR_ARG, "%s: wire version %lu, this side speaks %u", what,
                             (unsigned long)*version, SWORN_WIRE_VERSION);
    return 0;
}

int sworn_frame_pack_reply(const Sworn__V1__DecisionReply *m, uint8_t **out, size_t *out_len)
{
    Sworn__V1__DecisionReply v;

    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_reply(m) != 0)
        return -1;
    v = *m;
    if (stamp(&v.version, "DecisionReply") != 0)
        return -1;
    return pack(&v.base, 1, out, out_len);
}

int sworn_frame_pack_decision_request(const Sworn__V1__DecisionRequest *m, uint8_t **out,
                                      size_t *out_len)
{
    Sworn__V1__DecisionRequest v;

    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_decision_request(m) != 0)
        return -1;
    v = *m;
    if (stamp(&v.version, "DecisionRequest") != 0)
        return -1;
    return pack(&v.base, 1, out, out_len);
}

int sworn_frame_pack_authorize(const Sworn__V1__AuthorizationRequest *req, uint8_t **out,
                               size_t *out_len)
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;

    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    m.authorize = (Sworn__V1__AuthorizationRequest *)req;
    return sworn_frame_pack_decision_request(&m, out, out_len);
}

int sworn_frame_pack_token_exchange(const Sworn__V1__TokenExchange *ex, uint8_t **out,
                                    size_t *out_len)
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;

    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_TOKEN_EXCHANGE;
    m.token_exchange = (Sworn__V1__TokenExchange *)ex;
    return sworn_frame_pack_decision_request(&m, out, out_len);
}

int sworn_frame_pack_usage_report(const Sworn__V1__UsageReport *u, uint8_t **out, size_t *out_len)
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;

    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_USAGE;
    m.usage = (Sworn__V1__UsageReport *)u;
    return sworn_frame_pack_decision_request(&m, out, out_len);
}

Sworn__V1__DecisionRequest *sworn_frame_unpack_decision_request(const uint8_t *p, size_t len)
{
    Sworn__V1__DecisionRequest *m =
        (Sworn__V1__DecisionRequest *)unpack(&sworn__v1__decision_request__descriptor, p, len,
                                             offsetof(Sworn__V1__DecisionRequest, version));

    if (m != NULL && sworn_frame_check_decision_request(m) != 0) {
        sworn__v1__decision_request__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

int sworn_frame_pack_entry(const Sworn__V1__Entry *m, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (check_entry_shape(m) != 0 || check_entry_time(m, 1) != 0)
        return -1;
    return pack(&m->base, 0, out, out_len);
}

int sworn_frame_pack_admin_request(const Sworn__V1__AdminRequest *m, uint8_t **out, size_t *out_len)
{
    Sworn__V1__AdminRequest v;

    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_admin_request(m) != 0)
        return -1;
    v = *m;
    if (stamp(&v.version, "AdminRequest") != 0)
        return -1;
    return pack(&v.base, 1, out, out_len);
}

int sworn_frame_pack_admin_response(const Sworn__V1__AdminResponse *m, uint8_t **out,
                                    size_t *out_len)
{
    Sworn__V1__AdminResponse v;

    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_admin_response(m) != 0)
        return -1;
    v = *m;
    if (stamp(&v.version, "AdminResponse") != 0)
        return -1;
    return pack(&v.base, 1, out, out_len);
}

Sworn__V1__AdminRequest *sworn_frame_unpack_admin_request(const uint8_t *p, size_t len)
{
    Sworn__V1__AdminRequest *m = (Sworn__V1__AdminRequest *)unpack(
        &sworn__v1__admin_request__descriptor, p, len, offsetof(Sworn__V1__AdminRequest, version));

    if (m != NULL && sworn_frame_check_admin_request(m) != 0) {
        sworn__v1__admin_request__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

Sworn__V1__AdminResponse *sworn_frame_unpack_admin_response(const uint8_t *p, size_t len)
{
    Sworn__V1__AdminResponse *m =
        (Sworn__V1__AdminResponse *)unpack(&sworn__v1__admin_response__descriptor, p, len,
                                           offsetof(Sworn__V1__AdminResponse, version));

    if (m != NULL && sworn_frame_check_admin_response(m) != 0) {
        sworn__v1__admin_response__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

Sworn__V1__AuthorizationRequest *sworn_frame_unpack_request(const uint8_t *p, size_t len)
{
    Sworn__V1__AuthorizationRequest *m = (Sworn__V1__AuthorizationRequest *)unpack(
        &sworn__v1__authorization_request__descriptor, p, len, NO_VERSION);

    if (m != NULL && sworn_frame_check_request(m) != 0) {
        sworn__v1__authorization_request__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

Sworn__V1__DecisionReply *sworn_frame_unpack_reply(const uint8_t *p, size_t len)
{
    Sworn__V1__DecisionReply *m =
        (Sworn__V1__DecisionReply *)unpack(&sworn__v1__decision_reply__descriptor, p, len,
                                           offsetof(Sworn__V1__DecisionReply, version));

    if (m != NULL && sworn_frame_check_reply(m) != 0) {
        sworn__v1__decision_reply__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

Sworn__V1__Entry *sworn_frame_unpack_entry(const uint8_t *p, size_t len)
{
    Sworn__V1__Entry *m;

    if (len > SWORN_FRAME_ENTRY_MAX) {
        sworn_err_set(SWORN_ERR_RANGE, "Entry of %zu bytes is longer than %u", len,
                      SWORN_FRAME_ENTRY_MAX);
        return NULL;
    }
    m = (Sworn__V1__Entry *)unpack(&sworn__v1__entry__descriptor, p, len, NO_VERSION);

    if (m != NULL && sworn_frame_check_entry(m) != 0) {
        sworn__v1__entry__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}

const char *sworn_frame_effect_name(Sworn__V1__Effect e)
{
    switch (e) {
    case SWORN__V1__EFFECT__EFFECT_ALLOW:
        return "allow";
    case SWORN__V1__EFFECT__EFFECT_DENY:
        return "deny";
    case SWORN__V1__EFFECT__EFFECT_ESCALATE:
        return "escalate";
    default:
        return "unspecified";
    }
}

/* --- the hostlink ------------------------------------------------------------------------- */

int sworn_frame_name_ok(const char *s)
{
    size_t n = s == NULL ? 0 : strlen(s);

    if (n == 0 || n > SWORN_FRAME_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

int sworn_frame_check_hostlink_hello(const Sworn__V1__HostlinkHello *m)
{
    if (m == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "HostlinkHello is missing");
    if (!sworn_frame_name_ok(m->principal))
        return sworn_err_set(SWORN_ERR_FORMAT, "hostlink hello: principal must be 1..128 "
                                               "printable ASCII bytes without spaces");
    if (!sworn_frame_name_ok(m->sandbox))
        return sworn_err_set(SWORN_ERR_FORMAT, "hostlink hello: sandbox must be 1..128 "
                                               "printable ASCII bytes without spaces");
    if (m->sandbox_start_index == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "hostlink hello: sandbox_start_index is missing");
    return 0;
}

int sworn_frame_pack_hostlink_hello(const Sworn__V1__HostlinkHello *m, uint8_t **out,
                                    size_t *out_len)
{
    Sworn__V1__HostlinkHello v;

    *out = NULL;
    *out_len = 0;
    if (sworn_frame_check_hostlink_hello(m) != 0)
        return -1;
    v = *m;
    if (stamp(&v.version, "HostlinkHello") != 0)
        return -1;
    return pack(&v.base, 1, out, out_len);
}

Sworn__V1__HostlinkHello *sworn_frame_unpack_hostlink_hello(const uint8_t *p, size_t len)
{
    Sworn__V1__HostlinkHello *m;

    if (len > SWORN_HOSTLINK_HELLO_MAX) {
        sworn_err_set(SWORN_ERR_RANGE, "hostlink hello: %zu bytes, more than %u", len,
                      SWORN_HOSTLINK_HELLO_MAX);
        return NULL;
    }
    m = (Sworn__V1__HostlinkHello *)unpack(&sworn__v1__hostlink_hello__descriptor, p, len,
                                           offsetof(Sworn__V1__HostlinkHello, version));
    if (m != NULL && sworn_frame_check_hostlink_hello(m) != 0) {
        sworn__v1__hostlink_hello__free_unpacked(m, NULL);
        return NULL;
    }
    return m;
}
