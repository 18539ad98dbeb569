/*
 * sv_entry.c -- see sv_entry.h.
 */
#include "sv_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_sworn.pb-c.h"

#define STRING_MAX 8192
#define REASON_MAX 1024

/* sworn.proto's and docs/protocol.md section 3's bounds (wire/frame.h has the recording side's
 * copy; the verifier keeps its own, issue 13 finding 8). */
#define OPERATION_MAX 64
#define SCHEME_MAX 16
#define HOST_MAX 255
#define TOOL_MAX 256
#define URI_MAX 2048
#define METHOD_MAX 32
#define NAME_MAX_ 256 /* a covered component's name */
#define OPERATOR_MAX 256
#define CANON_SCHEME_MAX 5
#define REFUSAL_REASON_MAX 256 /* ProxyRefusal.reason: 1..256 bytes */
#define WITNESS_REASON_MAX 256 /* WitnessEvent.reason: 1..256 bytes */

/* A failure with a fixed message naming one field. */
static int fail_code(char *code, const char *c, char *why, const char *what, const char *name)
{
    snprintf(code, 32, "%s", c);
    return sv_fail(why, "%s: %s", name, what);
}

/* Generic walk: unknown fields and clean strings at every depth. */
static int walk(const ProtobufCMessage *m, int depth, char *code, char *why)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;

    if (depth > 16)
        return fail_code(code, "nesting", why, "nested too deeply", d->name);
    if (m->n_unknown_fields != 0)
        return fail_code(code, "unknown-field", why, "has an unknown field", d->name);
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        const char *base = (const char *)m + f->offset;
        size_t count = 1;

        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
            uint32_t which = *(const uint32_t *)((const char *)m + f->quantifier_offset);

            if (which != f->id)
                continue;
        }
        if (f->label == PROTOBUF_C_LABEL_REPEATED)
            count = *(const size_t *)((const char *)m + f->quantifier_offset);
        for (size_t j = 0; j < count; j++) {
            if (f->type == PROTOBUF_C_TYPE_STRING) {
                const char *s = f->label == PROTOBUF_C_LABEL_REPEATED
                                    ? (*(char *const *const *)base)[j]
                                    : *(char *const *)base;
                size_t n = s == NULL ? 0 : strlen(s);

                if (n > STRING_MAX || !sv_text_clean((const uint8_t *)s, n))
                    return fail_code(code, "bad-string", why,
                                     "not UTF-8 without control characters, or too long", f->name);
            } else if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                const ProtobufCMessage *sub = f->label == PROTOBUF_C_LABEL_REPEATED
                                                  ? (*(ProtobufCMessage *const *const *)base)[j]
                                                  : *(ProtobufCMessage *const *)base;

                if (sub != NULL && walk(sub, depth + 1, code, why) != 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* RFC 8259 section 6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and nothing else. */
static int json_number_ok(const char *p)
{
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
        if (!(p[1] >= '0' && p[1] <= '9'))
            return 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
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

/* docs/policy.md 2.2: an RFC 9110 token (tchar) without lower-case letters, 1..32 bytes. */
static int method_token_ok(const char *m)
{
    size_t n = strlen(m);

    if (n < 1 || n > METHOD_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = m[i];

        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c)))
            return 0;
    }
    return 1;
}

/* A principal or sandbox name (docs/protocol.md 4.1): 1..128 bytes, each 0x21..0x7e. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n < 1 || n > SV_PRINCIPAL_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

/* SHA-256(principal NUL name NUL uid as 4 bytes big-endian): who a request or a sandbox is (its
 * agent's uid outside included), in a fixed size. */
static void who_digest(const char *principal, const char *name, uint32_t uid, uint8_t out[SV_HASH])
{
    size_t pl = strlen(principal), nl = strlen(name);
    unsigned char *b = malloc(pl + nl + 6);

    if (b == NULL) { /* compared only with other digests: none of a real name is all 0xff */
        memset(out, 0xff, SV_HASH);
        return;
    }
    memcpy(b, principal, pl);
    b[pl] = '\0';
    memcpy(b + pl + 1, name, nl);
    b[pl + 1 + nl] = '\0';
    b[pl + nl + 2] = (unsigned char)(uid >> 24);
    b[pl + nl + 3] = (unsigned char)(uid >> 16);
    b[pl + nl + 4] = (unsigned char)(uid >> 8);
    b[pl + nl + 5] = (unsigned char)uid;
    sv_sha256(b, pl + nl + 6, out);
    free(b);
}

static int d32(const ProtobufCBinaryData *b, int may_be_empty)
{
    return b->len == 32 || (may_be_empty && b->len == 0);
}

static int req_id_ok(const char *s)
{
    size_t n = strlen(s);

    return n >= 1 && n <= 128;
}

/*
 * The root of a vault id's family (docs/formats.md section 1): the id with every trailing
 * ".oauth.<decimal digits>" taken off. Returns its length (a prefix of id).
 */
static size_t family_root_len(const char *id)
{
    size_t n = strlen(id);

    for (;;) {
        size_t d = n;

        while (d > 0 && id[d - 1] >= '0' && id[d - 1] <= '9')
            d--;
        if (d == n || d <= 7 || strncmp(id + d - 7, ".oauth.", 7) != 0)
            return n;
        n = d - 7;
    }
}

#define BAD(c, ...)                                                                                \
    do {                                                                                           \
        snprintf(code, 32, "%s", c);                                                               \
        return sv_fail(why, __VA_ARGS__);                                                          \
    } while (0)

static int check_request(const Svpb__V1__AuthorizationRequest *r, char *code, char *why)
{
    if (r == NULL)
        BAD("missing-field", "decision: no request");
    if (!req_id_ok(r->request_id))
        BAD("missing-field", "decision: request_id must be 1..128 bytes");
    if (r->principal == NULL || r->principal->id[0] == '\0')
        BAD("missing-field", "decision: no principal id");
    if (r->operation[0] == '\0')
        BAD("missing-field", "decision: no operation");
    if (strlen(r->operation) > OPERATION_MAX)
        BAD("field-too-long", "decision: operation longer than %d bytes", OPERATION_MAX);
    /* A request the proxy refused itself may have had no readable target: then its scheme and
     * host may be empty and its port 0 (docs/protocol.md, ProxyRefusal). */
    if (r->refusal != NULL) {
        const Svpb__V1__ProxyRefusal *f = r->refusal;
        size_t rl = strlen(f->reason);

        if (f->status < 400 || f->status > 599)
            BAD("bad-field", "decision: refusal.status %u is outside 400..599", f->status);
        if (rl == 0)
            BAD("missing-field", "decision: refusal without a reason");
        if (rl > REFUSAL_REASON_MAX)
            BAD("field-too-long", "decision: refusal.reason longer than %d bytes",
                REFUSAL_REASON_MAX);
        if (!d32(&f->head_sha256, 1))
            BAD("bad-field", "decision: refusal.head_sha256 is not 32 bytes");
    }
    if (r->resource == NULL ||
        (r->refusal == NULL && (r->resource->scheme[0] == '\0' || r->resource->host[0] == '\0')))
        BAD("missing-field", "decision: no resource scheme or host");
    if (strlen(r->resource->scheme) > SCHEME_MAX || strlen(r->resource->host) > HOST_MAX ||
        strlen(r->resource->tool) > TOOL_MAX || strlen(r->resource->uri) > URI_MAX)
        BAD("field-too-long",
            "decision: resource scheme, host, tool or uri longer than %d, %d, %d or %d bytes",
            SCHEME_MAX, HOST_MAX, TOOL_MAX, URI_MAX);
    if ((r->resource->port < 1 || r->resource->port > 65535) &&
        !(r->refusal != NULL && r->resource->port == 0))
        BAD("bad-field", "decision: resource port %u out of 1..65535", r->resource->port);
    /* Red team of issue 16 (B): the fields the proxy fills for one kind of operation only
     * (docs/protocol.md section 3, wire/sworn.proto): an MCP tool or prompt name only for
     * mcp.tools/call and mcp.prompts/get, a resource URI only for mcp.resources/read,
     * /subscribe and /unsubscribe, a model, a model API shape and a token ceiling only for
     * model.call. decisiond's decoder refuses a request holding any other (wire/frame.c), so a
     * record that does was not written by it: an allow of an http.request "for tool x". */
    {
        const char *op = r->operation;
        int tool_op = strcmp(op, "mcp.tools/call") == 0 || strcmp(op, "mcp.prompts/get") == 0;
        int uri_op = strcmp(op, "mcp.resources/read") == 0 ||
                     strcmp(op, "mcp.resources/subscribe") == 0 ||
                     strcmp(op, "mcp.resources/unsubscribe") == 0;
        int model_op = strcmp(op, "model.call") == 0;

        if (r->resource->tool[0] != '\0' && !tool_op)
            BAD("bad-field", "decision: an MCP tool or prompt name on operation %s", op);
        if (r->resource->uri[0] != '\0' && !uri_op)
            BAD("bad-field", "decision: an MCP resource URI on operation %s", op);
        if (!model_op && (r->resource->model[0] != '\0' ||
                          (r->context != NULL && (r->context->model_api[0] != '\0' ||
                                                  r->context->token_ceiling != NULL))))
            BAD("bad-field", "decision: a model, model API or token ceiling on operation %s", op);
    }
    if (r->context != NULL) {
        const Svpb__V1__Context *c = r->context;

        if (strlen(c->method) > METHOD_MAX)
            BAD("field-too-long", "decision: context.method longer than %d bytes", METHOD_MAX);

        if (c->n_header_names > 256)
            BAD("bad-field", "decision: more than 256 header names");
        for (size_t i = 0; i < c->n_header_names; i++)
            if (strlen(c->header_names[i]) < 1 || strlen(c->header_names[i]) > 256)
                BAD("bad-field", "decision: header name %zu not 1..256 bytes", i);
        if (!d32(&c->body_sha256, 1) || !d32(&c->credential_token_sha256, 1) ||
            !d32(&c->mcp_session_sha256, 1))
            BAD("bad-field", "decision: a context digest is not 32 bytes");
        if (c->n_covered > 64)
            BAD("bad-field", "decision: more than 64 covered components");
        for (size_t i = 0; i < c->n_covered; i++) {
            if (c->covered[i]->name[0] == '\0' || !d32(&c->covered[i]->value_sha256, 0))
                BAD("bad-field", "decision: covered component %zu malformed", i);
            if (strlen(c->covered[i]->name) > NAME_MAX_)
                BAD("field-too-long", "decision: covered component %zu name longer than %d bytes",
                    i, NAME_MAX_);
        }
        if (c->n_json_numbers > 64)
            BAD("bad-field", "decision: more than 64 JSON numbers");
        for (size_t i = 0; i < c->n_json_numbers; i++) {
            const Svpb__V1__JsonNumber *j = c->json_numbers[i];
            size_t pl = strlen(j->pointer), vl = strlen(j->value);

            if (pl < 1 || pl > 256 || j->pointer[0] != '/' || vl < 1 || vl > 64)
                BAD("bad-field", "decision: JSON number %zu malformed", i);
            if (!json_number_ok(j->value))
                BAD("json-number",
                    "decision: JSON number %zu's value is not one RFC 8259 number (a budget "
                    "would sum what the proxy did not read as one)",
                    i);
        }
    }
    if (r->delegation != NULL) {
        const Svpb__V1__Delegation *g = r->delegation;

        if (g->subject[0] == '\0')
            BAD("missing-field", "decision: delegation without subject");
        if (g->n_actors > 32 || g->n_token_sha256 > 16)
            BAD("bad-field", "decision: delegation chain too long");
        for (size_t i = 0; i < g->n_actors; i++)
            if (g->actors[i]->subject[0] == '\0')
                BAD("missing-field", "decision: delegation actor %zu without subject", i);
        for (size_t i = 0; i < g->n_token_sha256; i++)
            if (!d32(&g->token_sha256[i], 0))
                BAD("bad-field", "decision: delegation token hash %zu is not 32 bytes", i);
        if (g->may_act != NULL && ((int)g->may_act->result < 0 || g->may_act->result > 3))
            BAD("bad-field", "decision: unknown may_act result");
        /* ALLOWED names the acting party: actors[0] (docs/proxy.md, "Delegation"); with no
         * act claim the proxy says DENIED (red team of issue 16, B). */
        if (g->may_act != NULL && g->may_act->result == 1 && g->n_actors == 0)
            BAD("bad-field", "decision: may_act allowed with no actor");
        /* Issue 16: whether the proxy verified the token (absent in older records). */
        if (g->verification != NULL &&
            (g->verification->result < 1 || g->verification->result > 2 ||
             (g->verification->result == 2) != (g->verification->alg[0] != '\0')))
            BAD("bad-field", "decision: delegation verification is neither verified (with its "
                             "alg) nor not verified");
        /* A verified token has one of the algs the proxy verifies (docs/proxy.md,
         * "Delegation"): decisiond's decoder refuses any other (red team of issue 16, B). */
        if (g->verification != NULL && g->verification->result == 2 &&
            strcmp(g->verification->alg, "ES256") != 0 &&
            strcmp(g->verification->alg, "RS256") != 0 &&
            strcmp(g->verification->alg, "EdDSA") != 0 &&
            strcmp(g->verification->alg, "Ed25519") != 0)
            BAD("bad-field", "decision: delegation verified with an alg the proxy never verifies");
        if (g->n_audience > 16 || g->n_scopes > 64)
            BAD("bad-field", "decision: delegation audience or scopes over their bounds");
    }
    return 0;
}

/*
 * The raw target digest of a recorded request (docs/formats.md, DecisionRecord): SHA-256 of
 * scheme "://" host ":" port path, each as the request carried it. 0, or -1 out of memory.
 */
static int raw_target_sha256(const Svpb__V1__Resource *r, uint8_t out[SV_HASH])
{
    size_t sl = strlen(r->scheme), hl = strlen(r->host), pl = strlen(r->path);
    size_t cap = sl + hl + pl + 16;
    char *t = malloc(cap);
    int n;

    if (t == NULL)
        return -1;
    n = snprintf(t, cap, "%s://%s:%u%s", r->scheme, r->host, (unsigned)r->port, r->path);
    if (n < 0 || (size_t)n >= cap) {
        free(t);
        return -1;
    }
    sv_sha256(t, (size_t)n, out);
    free(t);
    return 0;
}

/* The recorded canonical resource and raw target digest (both absent in older entries). */
static int check_canonical(const Svpb__V1__DecisionRecord *d, char *code, char *why)
{
    const Svpb__V1__Resource *c = d->canonical_resource;
    uint8_t h[SV_HASH];

    if (!d32(&d->raw_target_sha256, 1))
        BAD("bad-field", "decision: raw_target_sha256 is not 32 bytes");
    if (d->raw_target_sha256.len == SV_HASH) {
        if (raw_target_sha256(d->request->resource, h) != 0)
            BAD("internal", "out of memory");
        if (memcmp(h, d->raw_target_sha256.data, SV_HASH) != 0)
            BAD("bad-field", "decision: raw_target_sha256 is not the digest of the request's "
                             "resource");
    }
    if (c == NULL)
        return 0;
    if (d->raw_target_sha256.len == 0)
        BAD("missing-field", "decision: canonical_resource without raw_target_sha256");
    if (strcmp(c->scheme, "http") != 0 && strcmp(c->scheme, "https") != 0 &&
        strcmp(c->scheme, "ws") != 0 && strcmp(c->scheme, "wss") != 0 &&
        strcmp(c->scheme, "tcp") != 0)
        BAD("bad-field", "decision: canonical_resource scheme is not http, https, ws, wss or tcp");
    if (strlen(c->scheme) > CANON_SCHEME_MAX)
        BAD("bad-field", "decision: canonical_resource scheme longer than %d bytes",
            CANON_SCHEME_MAX);
    if (c->host[0] == '\0' || strlen(c->host) > 253)
        BAD("bad-field", "decision: canonical_resource host is not 1..253 bytes");
    if (c->port < 1 || c->port > 65535 || c->port != d->request->resource->port)
        BAD("bad-field", "decision: canonical_resource port is not the request's port");
    if (strcmp(c->scheme, "tcp") == 0) {
        if (c->path[0] != '\0')
            BAD("bad-field", "decision: canonical_resource path is not empty for scheme tcp");
    } else if (c->path[0] != '/') {
        BAD("bad-field", "decision: canonical_resource path does not start with '/'");
    }
    if (strcmp(c->tool, d->request->resource->tool) != 0)
        BAD("bad-field", "decision: canonical_resource tool is not the request's tool");
    /* A URI is never rewritten: decisiond refuses one that is not canonical as carried. */
    if (strcmp(c->uri, d->request->resource->uri) != 0)
        BAD("bad-field", "decision: canonical_resource uri is not the request's uri");
    return 0;
}

/* A ConformanceReport entry's summary (docs/formats.md section 15): the rules of wire/frame.c's
 * sworn_frame_check_conformance_summary, in the verifier's own words (code report-shape). */
static int check_conformance_summary(const Svpb__V1__ConformanceSummary *m,
                                     struct sv_conformance *c, char *code, char *why)
{
    uint64_t run;
    size_t nl, ul;

    if (m == NULL)
        BAD("report-shape", "conformance_report: no summary");
    if (m->report_sha256.len != SV_HASH || m->probe_set_sha256.len != SV_HASH)
        BAD("report-shape", "conformance_report: a digest that is not 32 bytes");
    if (m->report_length < 1 || m->report_length > SV_REPORT_JSON_MAX)
        BAD("report-shape", "conformance_report: report_length is not 1..%u", SV_REPORT_JSON_MAX);
    if (m->probe_set_size < 1 || m->probe_set_size > 1024)
        BAD("report-shape", "conformance_report: probe_set_size is not 1..1024");
    if (m->tier < 1 || m->tier > 5)
        BAD("report-shape", "conformance_report: tier %u is not 1..5", (unsigned)m->tier);
    if (m->n_only > 64)
        BAD("report-shape", "conformance_report: more than 64 --only ids");
    for (size_t i = 0; i < m->n_only; i++) {
        size_t n = strlen(m->only[i]);

        if (n < 1 || n > 64)
            BAD("report-shape", "conformance_report: an --only id of %zu bytes (1..64)", n);
        for (size_t k = 0; k < n; k++)
            if (m->only[i][k] < 0x21 || m->only[i][k] > 0x7e)
                BAD("report-shape", "conformance_report: an --only id outside 0x21..0x7e");
    }
    run = (uint64_t)m->passed + m->failed + m->skipped + m->errors;
    if (run < 1 || run > m->probe_set_size)
        BAD("report-shape", "conformance_report: %llu probes run, not 1..probe_set_size",
            (unsigned long long)run);
    if (m->result != (m->failed == 0 && m->errors == 0 ? 1 : 2))
        BAD("report-shape", "conformance_report: the result is not PASS exactly when no probe "
                            "failed or ended in an error");
    nl = strlen(m->operator_name);
    ul = strlen(m->operator_user);
    if (nl < 1 || nl > SV_OPERATOR_MAX || ul > SV_USER_MAX)
        BAD("report-shape", "conformance_report: operator name not 1..256 bytes or user over 64");
    if (m->started_unix_ms == 0 || m->ended_unix_ms < m->started_unix_ms)
        BAD("report-shape", "conformance_report: no start, or an end before the start");
    if ((m->checkpoint_size == 0) != (m->checkpoint_root.len == 0) ||
        (m->checkpoint_root.len != 0 && m->checkpoint_root.len != SV_HASH))
        BAD("report-shape", "conformance_report: a root without a checkpoint size, or the "
                            "reverse, or not 32 bytes");
    if (m->checkpoint_size == 0 ? m->startup_index != 0 : m->startup_index >= m->checkpoint_size)
        BAD("report-shape", "conformance_report: startup_index is not below checkpoint_size");
    memcpy(c->report_sha256, m->report_sha256.data, SV_HASH);
    memcpy(c->probe_set_sha256, m->probe_set_sha256.data, SV_HASH);
    c->report_length = m->report_length;
    c->probe_set_size = m->probe_set_size;
    c->tier = m->tier;
    c->n_only = m->n_only;
    c->passed = m->passed;
    c->failed = m->failed;
    c->skipped = m->skipped;
    c->errors = m->errors;
    c->pass = m->result == 1;
    memcpy(c->operator_name, m->operator_name, nl + 1);
    memcpy(c->operator_user, m->operator_user, ul + 1);
    c->operator_uid = m->operator_uid;
    c->started_ms = m->started_unix_ms;
    c->ended_ms = m->ended_unix_ms;
    c->checkpoint_size = m->checkpoint_size;
    c->startup_index = m->startup_index;
    return 0;
}

/* A ConformanceReport entry: its summary, decisiond's operator and the signature's shape, and the
 * digest the signature covers (the message without fields 5..7, packed again: the entry is
 * canonical, so these are its own bytes up to field 4). */
static int check_conformance(const Svpb__V1__ConformanceReport *m, struct sv_entry_info *info,
                             char *code, char *why)
{
    struct sv_conformance *c = &info->conformance;
    Svpb__V1__ConformanceReport part;
    uint8_t *buf;
    size_t n, rl = strlen(m->operator_);

    if (check_conformance_summary(m->summary, c, code, why) != 0)
        return -1;
    if (rl < 1 || rl > SV_OPERATOR_MAX)
        BAD("report-shape", "conformance_report: decisiond's operator is not 1..256 bytes");
    if (m->key_id.len != SV_HASH || m->signature.len < 1 || m->signature.len > SV_REPORT_SIG_MAX ||
        (m->alg != 1 && m->alg != 2) || (m->alg == 2 && m->signature.len != 64))
        BAD("report-shape", "conformance_report: key_id, signature or alg out of their rules");
    memcpy(c->recorded_by, m->operator_, rl + 1);
    c->peer_uid = m->peer_uid;
    c->time_ms = m->time_unix_ms;
    memcpy(c->key_id, m->key_id.data, SV_HASH);
    memcpy(c->sig, m->signature.data, m->signature.len);
    c->sig_len = m->signature.len;
    c->alg = (int)m->alg;
    part = *m;
    part.key_id.len = 0;
    part.signature.len = 0;
    part.alg = 0;
    n = svpb__v1__conformance_report__get_packed_size(&part);
    buf = malloc(n > 0 ? n : 1);
    if (buf == NULL)
        BAD("internal", "out of memory");
    svpb__v1__conformance_report__pack(&part, buf);
    sv_sha256(buf, n, c->signed_digest);
    free(buf);
    info->time_unix_ms = m->time_unix_ms;
    return 0;
}

/* What an http-message receipt of this decision covers (sv_entry.h, struct sv_http_req). */
/* A string cut to SV_LABEL_MAX bytes for the report's tables (*cut = 1 when it was longer). The
 * cut may split a UTF-8 sequence: the page escapes bytes that are not UTF-8 (sv_html.c). */
static void label(const char *s, char out[SV_LABEL_MAX + 1], int *cut)
{
    size_t n = strlen(s);

    *cut = n > SV_LABEL_MAX;
    if (n > SV_LABEL_MAX)
        n = SV_LABEL_MAX;
    memcpy(out, s, n);
    out[n] = '\0';
}

static void http_request(const Svpb__V1__DecisionRecord *d, struct sv_http_req *h)
{
    const Svpb__V1__Resource *c = d->canonical_resource;
    const Svpb__V1__Context *ctx = d->request->context;

    memset(h, 0, sizeof(*h));
    if (c == NULL || ctx == NULL || ctx->method[0] == '\0' || strlen(c->path) > SV_HTTP_PATH_MAX ||
        strlen(ctx->method) >= sizeof(h->method) || strlen(c->host) >= sizeof(h->host) ||
        strlen(c->scheme) >= sizeof(h->scheme))
        return;
    if (strcmp(c->scheme, "http") != 0 && strcmp(c->scheme, "https") != 0 &&
        strcmp(c->scheme, "ws") != 0 && strcmp(c->scheme, "wss") != 0)
        return;
    h->present = 1;
    snprintf(h->method, sizeof(h->method), "%s", ctx->method);
    snprintf(h->scheme, sizeof(h->scheme), "%s", c->scheme);
    snprintf(h->host, sizeof(h->host), "%s", c->host);
    snprintf(h->path, sizeof(h->path), "%s", c->path);
    h->port = c->port;
    h->has_body = ctx->body_sha256.len == SV_HASH;
    if (h->has_body)
        memcpy(h->body_sha256, ctx->body_sha256.data, SV_HASH);
}

static int check_kind(const Svpb__V1__Entry *e, struct sv_entry_info *info, char *code, char *why)
{
    switch (e->kind_case) {
    case SVPB__V1__ENTRY__KIND_DECISION: {
        const Svpb__V1__DecisionRecord *d = e->decision;

        if (check_request(d->request, code, why) != 0)
            return -1;
        if (d->effect < 1 || d->effect > 3)
            BAD("bad-field", "decision: effect %d is not ALLOW, DENY or ESCALATE", d->effect);
        /* A request the proxy refused itself is denied before any rule, with no credential
         * (docs/policy.md section 3): any other record of it is no decision decisiond takes. */
        if (d->request->refusal != NULL &&
            (d->effect != 2 || d->rule_id[0] != '\0' || d->credential_id[0] != '\0' ||
             d->credential_sha256.len != 0))
            BAD("refusal-not-deny",
                "decision: the proxy refused this request itself, so decisiond denies it by no "
                "rule and releases nothing; this entry is %s%s%s",
                d->effect == 1   ? "an ALLOW"
                : d->effect == 3 ? "an ESCALATE"
                                 : "a DENY",
                d->rule_id[0] != '\0' ? " naming a rule" : "",
                d->credential_id[0] != '\0' || d->credential_sha256.len != 0 ? " with a credential"
                                                                             : "");
        /* Only a deny is decided by no rule (no rule matched, a refused resource or method, a
         * duplicate id: docs/policy.md section 3); an allow or escalate names its rule. */
        if (d->rule_id[0] == '\0' && d->effect != 2)
            BAD("rule-missing", "decision: an %s without a rule_id",
                d->effect == 1 ? "ALLOW" : "ESCALATE");
        if (strlen(d->rule_id) > SV_ID_MAX)
            BAD("field-too-long", "decision: rule_id longer than %d bytes", SV_ID_MAX);
        /* A non-empty method that is not an upper-case token is refused before any rule
         * (docs/policy.md 2.2): only a deny by no rule may hold one. An empty or absent method
         * is decisiond's to decide (it matches no methods list), so it is no failure. */
        if (d->request->context != NULL && d->request->context->method[0] != '\0' &&
            !method_token_ok(d->request->context->method) &&
            (d->effect != 2 || d->rule_id[0] != '\0'))
            BAD("method-not-token",
                "decision: context.method is not an upper-case RFC 9110 token, so decisiond "
                "denies it before any rule; this entry is no such deny");
        if (d->reason[0] == '\0')
            BAD("missing-field", "decision: no reason");
        if (strlen(d->reason) > REASON_MAX)
            BAD("bad-field", "decision: reason longer than %d bytes", REASON_MAX);
        if (!d32(&d->policy_digest, 0))
            BAD("missing-field", "decision: policy_digest is not 32 bytes");
        if ((d->credential_id[0] != '\0') != (d->credential_sha256.len != 0))
            BAD("bad-field", "decision: credential_id and credential_sha256 not both present");
        if (!d32(&d->credential_sha256, 1))
            BAD("bad-field", "decision: credential_sha256 is not 32 bytes");
        if (strlen(d->credential_id) > SV_ID_MAX)
            BAD("bad-field", "decision: credential_id longer than %d bytes", SV_ID_MAX);
        if (d->credential_id[0] != '\0' && d->effect != 1)
            BAD("bad-field", "decision: a credential released by a non-ALLOW decision");
        if (check_canonical(d, code, why) != 0)
            return -1;
        info->effect = d->effect;
        info->no_rule = d->rule_id[0] == '\0';
        if (strcmp(d->request->operation, "model.call") == 0) {
            const char *m = d->request->resource->model;
            size_t k = strlen(m);

            if (k > SV_MODEL_MAX)
                BAD("field-too-long", "decision: resource.model longer than %d bytes",
                    SV_MODEL_MAX);
            /* decisiond denies a model.call whose model has no canonical form (docs/policy.md
             * 2.7): an allow or escalation of one names a model (red team of issue 16, B). */
            if (k == 0 && (d->effect == 1 || d->effect == 3))
                BAD("bad-field", "decision: an allowed or escalated model.call names no model");
            info->model_call = 1;
            for (size_t i = 0; i <= k; i++)
                info->model[i] = (char)(m[i] >= 'A' && m[i] <= 'Z' ? m[i] - 'A' + 'a' : m[i]);
            if (d->request->context != NULL && d->request->context->token_ceiling != NULL)
                info->token_ceiling = d->request->context->token_ceiling->tokens;
        }
        /* The model fields' shapes (docs/protocol.md section 3), as decisiond's decoder holds
         * them: a record holding others was not written by it. */
        if (d->request->context != NULL) {
            const Svpb__V1__Context *cx = d->request->context;
            const char *api = cx->model_api;

            if (api[0] != '\0' && strcmp(api, "openai.chat") != 0 &&
                strcmp(api, "openai.responses") != 0 && strcmp(api, "anthropic.messages") != 0)
                BAD("bad-field", "decision: context.model_api is not a model API shape");
            if (cx->token_ceiling != NULL &&
                (cx->token_ceiling->tokens > 4294967295u ||
                 (strcmp(cx->token_ceiling->field, "max_tokens") != 0 &&
                  strcmp(cx->token_ceiling->field, "max_output_tokens") != 0 &&
                  strcmp(cx->token_ceiling->field, "max_completion_tokens") != 0)))
                BAD("bad-field", "decision: context.token_ceiling is out of its bounds");
        }
        info->sandbox_start_index = d->request->principal->sandbox_start_index;
        if (info->sandbox_start_index != 0)
            who_digest(d->request->principal->id, d->request->principal->sandbox,
                       d->request->principal->uid, info->sandbox_who);
        memcpy(info->digest, d->policy_digest.data, SV_HASH);
        info->time_unix_ms = d->time_unix_ms;
        http_request(d, &info->http);
        label(d->request->principal->id, info->principal, &info->principal_cut);
        label(d->canonical_resource != NULL ? d->canonical_resource->host
                                            : d->request->resource->host,
              info->host, &info->host_cut);
        snprintf(info->request_id, sizeof(info->request_id), "%s", d->request->request_id);
        snprintf(info->credential_id, sizeof(info->credential_id), "%s", d->credential_id);
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_POLICY_LOADED:
        if (!d32(&e->policy_loaded->digest, 0))
            BAD("missing-field", "policy_loaded: digest is not 32 bytes");
        if (e->policy_loaded->source[0] == '\0')
            BAD("missing-field", "policy_loaded: no source");
        if (strlen(e->policy_loaded->error) > REASON_MAX)
            BAD("error-too-long", "policy_loaded: error longer than %d bytes", REASON_MAX);
        memcpy(info->digest, e->policy_loaded->digest.data, SV_HASH);
        info->time_unix_ms = e->policy_loaded->time_unix_ms;
        info->refused = e->policy_loaded->error[0] != '\0';
        if (strlen(e->policy_loaded->source) > SV_SOURCE_MAX)
            info->source_long = 1;
        else
            snprintf(info->source, sizeof(info->source), "%s", e->policy_loaded->source);
        return 0;
    case SVPB__V1__ENTRY__KIND_KEY_EVENT:
        if (e->key_event->statement.len == 0 ||
            e->key_event->statement.len > sizeof(info->statement))
            BAD("missing-field", "key_event: statement empty or over 4096 bytes");
        memcpy(info->statement, e->key_event->statement.data, e->key_event->statement.len);
        info->statement_len = e->key_event->statement.len;
        info->time_unix_ms = e->key_event->time_unix_ms;
        return 0;
    case SVPB__V1__ENTRY__KIND_STARTUP: {
        size_t n_policy = 0;

        if (e->startup->n_files > 256)
            BAD("bad-field", "startup: more than 256 files");
        for (size_t i = 0; i < e->startup->n_files; i++) {
            if (e->startup->files[i]->path[0] == '\0' || !d32(&e->startup->files[i]->sha256, 0))
                BAD("bad-field", "startup: file %zu malformed", i);
            if (e->startup->files[i]->path[0] != '/')
                BAD("path-relative",
                    "startup: file %zu's path is not absolute (an auditor could not tell which "
                    "file was measured)",
                    i);
            /* 0: a decisiond older than roles; protobuf-c keeps unknown enum numbers. */
            if ((int)e->startup->files[i]->role < 0 ||
                e->startup->files[i]->role > SVPB__V1__MEASURED_ROLE__MEASURED_ROLE_EXTRA)
                BAD("bad-field", "startup: file %zu has role %d, not 0..5", i,
                    (int)e->startup->files[i]->role);
            if (e->startup->files[i]->role == SVPB__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY)
                n_policy++;
        }
        if (n_policy > 1)
            BAD("bad-field", "startup: %zu files with the policy role", n_policy);
        if (!d32(&e->startup->pcr23, 1))
            BAD("bad-field", "startup: pcr23 is not 32 bytes");
        if (!d32(&e->startup->pcr23_before, 1))
            BAD("bad-field", "startup: pcr23_before is not 32 bytes");
        if ((e->startup->pcr23.len == 0) != (e->startup->pcr23_before.len == 0))
            BAD("pcr-half", "startup: pcr23 and pcr23_before are not both set or both empty");
        info->time_unix_ms = e->startup->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_ESCALATION_RESOLVED: {
        const Svpb__V1__EscalationResolved *r = e->escalation_resolved;

        if (!req_id_ok(r->request_id))
            BAD("missing-field", "escalation_resolved: request_id must be 1..128 bytes");
        if (r->effect != 1 && r->effect != 2)
            BAD("bad-field", "escalation_resolved: effect %d is not ALLOW or DENY", r->effect);
        if (r->operator_[0] == '\0')
            BAD("missing-field", "escalation_resolved: no operator");
        if (strlen(r->operator_) > OPERATOR_MAX)
            BAD("field-too-long", "escalation_resolved: operator longer than %d bytes",
                OPERATOR_MAX);
        if (strlen(r->reason) > REASON_MAX)
            BAD("bad-field", "escalation_resolved: reason longer than %d bytes", REASON_MAX);
        if (!d32(&r->escalation_hash, 1))
            BAD("bad-field", "escalation_resolved: escalation_hash is not 32 bytes");
        if (r->escalation_hash.len == 0 && r->escalation_index != 0)
            BAD("bad-field", "escalation_resolved: escalation_index without escalation_hash");
        info->linked = r->escalation_hash.len == SV_HASH;
        if (info->linked) {
            info->escalation_index = r->escalation_index;
            memcpy(info->escalation_hash, r->escalation_hash.data, SV_HASH);
        }
        info->effect = r->effect;
        info->time_unix_ms = r->time_unix_ms;
        snprintf(info->request_id, sizeof(info->request_id), "%s", r->request_id);
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_REFUSED: {
        const Svpb__V1__Refused *r = e->refused;

        if (strcmp(r->channel, "decision") != 0 && strcmp(r->channel, "admin") != 0)
            BAD("bad-field", "refused: channel must be decision or admin");
        if (r->code == 0)
            BAD("missing-field", "refused: code 0");
        if (strlen(r->message) > 256 || strlen(r->request_id) > 128)
            BAD("bad-field", "refused: message or request_id too long");
        if (!d32(&r->frame_sha256, 1))
            BAD("bad-field", "refused: frame_sha256 is not 32 bytes");
        info->time_unix_ms = r->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_CREDENTIALS_MINTED: {
        /* Real tokens stored after an OAuth exchange: only hashes may be here. */
        const Svpb__V1__CredentialsMinted *c = e->credentials_minted;

        if (!req_id_ok(c->request_id) || !req_id_ok(c->allow_request_id))
            BAD("missing-field", "credentials_minted: request ids must be 1..128 bytes");
        if (!req_id_ok(c->from_credential_id))
            BAD("missing-field", "credentials_minted: no from_credential_id");
        if (c->n_minted < 1 || c->n_minted > SV_MINTED_MAX)
            BAD("bad-field", "credentials_minted: %zu tokens, not 1..8", c->n_minted);
        for (size_t i = 0; i < c->n_minted; i++) {
            const Svpb__V1__MintedCredential *m = c->minted[i];

            if (m->field[0] == '\0' || strlen(m->field) > 64 || !req_id_ok(m->credential_id))
                BAD("missing-field", "credentials_minted: token %zu without field or id", i);
            if (!d32(&m->value_sha256, 0) || !d32(&m->symbolic_sha256, 0))
                BAD("bad-field", "credentials_minted: token %zu hash is not 32 bytes", i);
            /* decisiond names each minted credential <root>.oauth.<n> after the family root of
             * from_credential_id (decisiond/vault.c; older ones appended to the id itself, which
             * has the same root), never twice in one mint: an operator's own credential or one
             * of another family is no mint of this one (red team of issue 16, B). */
            {
                size_t root = family_root_len(c->from_credential_id);
                const char *id = m->credential_id;

                if (strlen(id) <= root || strncmp(id, c->from_credential_id, root) != 0 ||
                    family_root_len(id) != root)
                    BAD("bad-field",
                        "credentials_minted: token %zu's credential is not minted in the family "
                        "of from_credential_id",
                        i);
                for (size_t k = 0; k < i; k++)
                    if (strcmp(c->minted[k]->credential_id, id) == 0)
                        BAD("bad-field", "credentials_minted: one credential minted twice");
            }
        }
        if (c->n_replaced_credential_ids > SV_REPLACED_MAX)
            BAD("bad-field", "credentials_minted: %zu replaced credentials, more than 16",
                c->n_replaced_credential_ids);
        for (size_t i = 0; i < c->n_replaced_credential_ids; i++) {
            const char *r = c->replaced_credential_ids[i];
            size_t root = family_root_len(c->from_credential_id);

            if (!req_id_ok(r))
                BAD("bad-field", "credentials_minted: replaced credential %zu is not 1..128 bytes",
                    i);
            if (strlen(r) <= root || strncmp(r, c->from_credential_id, root) != 0 ||
                family_root_len(r) != root)
                BAD("bad-field",
                    "credentials_minted: replaced credential %zu is not minted from the family of "
                    "from_credential_id",
                    i);
            for (size_t k = 0; k < i; k++)
                if (strcmp(c->replaced_credential_ids[k], r) == 0)
                    BAD("bad-field", "credentials_minted: a credential replaced twice");
            for (size_t k = 0; k < c->n_minted; k++)
                if (strcmp(c->minted[k]->credential_id, r) == 0)
                    BAD("bad-field", "credentials_minted: a credential both minted and replaced");
        }
        info->n_minted_ids = c->n_minted;
        for (size_t i = 0; i < c->n_minted; i++)
            sv_sha256(c->minted[i]->credential_id, strlen(c->minted[i]->credential_id),
                      info->minted_ids[i]);
        info->n_replaced_ids = c->n_replaced_credential_ids;
        for (size_t i = 0; i < c->n_replaced_credential_ids; i++)
            sv_sha256(c->replaced_credential_ids[i], strlen(c->replaced_credential_ids[i]),
                      info->replaced_ids[i]);
        info->time_unix_ms = c->time_unix_ms;
        info->allow_log_index = c->allow_log_index;
        snprintf(info->request_id, sizeof(info->request_id), "%s", c->allow_request_id);
        snprintf(info->credential_id, sizeof(info->credential_id), "%s", c->from_credential_id);
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_REFUSALS_DROPPED: {
        /* Refusals a quota kept out of the record: counted here, so none is gone unsaid. */
        const Svpb__V1__RefusalsDropped *r = e->refusals_dropped;

        if (r->n_dropped < 1 || r->n_dropped > 256)
            BAD("bad-field", "refusals_dropped: %zu pairs, not 1..256", r->n_dropped);
        if (r->period_start_unix_ms > r->period_end_unix_ms ||
            r->period_end_unix_ms > r->time_unix_ms)
            BAD("bad-field", "refusals_dropped: period_start <= period_end <= time does not hold");
        for (size_t i = 0; i < r->n_dropped; i++) {
            const Svpb__V1__DroppedRefusals *p = r->dropped[i];

            if (strcmp(p->channel, "decision") != 0 && strcmp(p->channel, "admin") != 0)
                BAD("bad-field", "refusals_dropped: pair %zu: channel must be decision or admin",
                    i);
            if (p->count == 0)
                BAD("bad-field", "refusals_dropped: pair %zu counts 0", i);
            if (i > 0) {
                const Svpb__V1__DroppedRefusals *q = r->dropped[i - 1];
                int c = strcmp(q->channel, p->channel);

                if (c > 0 || (c == 0 && q->peer_uid >= p->peer_uid))
                    BAD("bad-field",
                        "refusals_dropped: pair %zu is not after the one before it (ascending "
                        "channel, peer_uid; each pair once)",
                        i);
            }
            info->dropped =
                p->count > UINT64_MAX - info->dropped ? UINT64_MAX : info->dropped + p->count;
        }
        info->time_unix_ms = r->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_TIME_MARK: {
        /* The log's time so far (issue 12, finding 4); its high water is checked against the
         * entries before it by check `time-marks`. */
        const Svpb__V1__TimeMark *t = e->time_mark;

        if (t->reason != 1 && t->reason != 2)
            BAD("bad-field", "time_mark: reason %d is not START or PERIODIC", (int)t->reason);
        if (t->clock_behind_ms !=
            (t->high_water_unix_ms > t->time_unix_ms ? t->high_water_unix_ms - t->time_unix_ms : 0))
            BAD("bad-field",
                "time_mark: clock_behind_ms is not max(0, high_water_unix_ms - time_unix_ms)");
        info->time_unix_ms = t->time_unix_ms;
        info->high_water_ms = t->high_water_unix_ms;
        info->clock_behind_ms = t->clock_behind_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_SANDBOX_STARTED: {
        /* sworn-run started a sandbox (docs/formats.md): who it runs as, what, with what limits. */
        const Svpb__V1__SandboxStarted *t = e->sandbox_started;

        if (!name_ok(t->principal) || !name_ok(t->name))
            BAD("sandbox-field",
                "sandbox_started: principal and name must be 1..128 bytes 0x21..0x7e");
        if (t->sandbox_id.len != SV_SANDBOX_ID)
            BAD("sandbox-field", "sandbox_started: sandbox_id is %zu bytes, not 16",
                t->sandbox_id.len);
        if (t->n_command < 1 || t->n_command > SV_COMMAND_MAX)
            BAD("sandbox-field", "sandbox_started: %zu command items, not 1..256", t->n_command);
        if (t->limits == NULL || (strcmp(t->limits->enforced_by, "cgroup2") != 0 &&
                                  strcmp(t->limits->enforced_by, "cgroup1") != 0 &&
                                  strcmp(t->limits->enforced_by, "rlimit") != 0))
            BAD("sandbox-field",
                "sandbox_started: no limits, or enforced_by is not cgroup2, cgroup1 or rlimit");
        if (!d32(&t->config_sha256, 0))
            BAD("sandbox-field", "sandbox_started: config_sha256 is not 32 bytes");
        if (strcmp(t->isolation, "root") != 0 && strcmp(t->isolation, "unprivileged") != 0)
            BAD("sandbox-field", "sandbox_started: isolation is neither root nor unprivileged");
        if (t->operator_[0] == '\0')
            BAD("missing-field", "sandbox_started: no operator");
        if (strlen(t->operator_) > OPERATOR_MAX)
            BAD("field-too-long", "sandbox_started: operator longer than %d bytes", OPERATOR_MAX);
        memcpy(info->sandbox_id, t->sandbox_id.data, SV_SANDBOX_ID);
        who_digest(t->principal, t->name, t->agent_uid, info->sandbox_who);
        sv_sha256(t->operator_, strlen(t->operator_), info->operator_digest);
        info->time_unix_ms = t->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_SANDBOX_ENDED: {
        const Svpb__V1__SandboxEnded *t = e->sandbox_ended;
        uint32_t lo = 0, hi = 0;

        if (t->start_index == 0)
            BAD("sandbox-field", "sandbox_ended: no start_index");
        if (t->sandbox_id.len != SV_SANDBOX_ID)
            BAD("sandbox-field", "sandbox_ended: sandbox_id is %zu bytes, not 16",
                t->sandbox_id.len);
        switch ((int)t->reason) {
        case 1: /* EXITED: the exit status */
            hi = 255;
            break;
        case 2: /* SIGNALED, STOPPED: the signal's number */
        case 4:
            lo = 1;
            hi = 64;
            break;
        case 3: /* TIMEOUT, FAILED: no status */
        case 5:
            break;
        default:
            BAD("sandbox-field", "sandbox_ended: reason %d is not 1..5", (int)t->reason);
        }
        if (t->code < lo || t->code > hi)
            BAD("sandbox-field", "sandbox_ended: code %u is outside %u..%u for reason %d",
                (unsigned)t->code, (unsigned)lo, (unsigned)hi, (int)t->reason);
        if (t->operator_[0] == '\0')
            BAD("missing-field", "sandbox_ended: no operator");
        if (strlen(t->operator_) > OPERATOR_MAX)
            BAD("field-too-long", "sandbox_ended: operator longer than %d bytes", OPERATOR_MAX);
        info->sandbox_start_index = t->start_index;
        memcpy(info->sandbox_id, t->sandbox_id.data, SV_SANDBOX_ID);
        sv_sha256(t->operator_, strlen(t->operator_), info->operator_digest);
        info->time_unix_ms = t->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_USAGE_RECORDED: {
        /* The usage of one allowed model.call (docs/formats.md, UsageRecorded). */
        const Svpb__V1__UsageRecorded *u = e->usage_recorded;
        int has_missing = u->missing[0] != '\0';

        if (!req_id_ok(u->request_id) || !req_id_ok(u->allow_request_id))
            BAD("missing-field", "usage_recorded: request ids must be 1..128 bytes");
        if (u->allow_log_index == 0)
            BAD("missing-field", "usage_recorded: allow_log_index is 0 (names no allow)");
        if (!d32(&u->allow_entry_hash, 0))
            BAD("missing-field", "usage_recorded: allow_entry_hash is not 32 bytes");
        if (strlen(u->model) > SV_MODEL_MAX)
            BAD("bad-field", "usage_recorded: model is longer than 256 bytes");
        if (u->input_tokens > 4294967295u || u->output_tokens > 4294967295u ||
            u->reserved_tokens > 4294967295u)
            BAD("usage-bounds", "usage_recorded: a token count above 4294967295");
        if (strlen(u->missing) > 256)
            BAD("field-too-long", "usage_recorded: missing longer than 256 bytes");
        if (u->reported ? has_missing
                        : !has_missing || u->input_tokens != 0 || u->output_tokens != 0)
            BAD("usage-reported",
                "usage_recorded: a reported usage names no missing reason, an unreported one "
                "names one and has no token counts");
        if (u->charged_tokens !=
            (u->reported ? u->input_tokens + u->output_tokens : u->reserved_tokens))
            BAD("usage-charged",
                "usage_recorded: charged_tokens is not input + output (reported) or the "
                "reservation (not reported)");
        info->allow_log_index = u->allow_log_index;
        memcpy(info->allow_hash, u->allow_entry_hash.data, SV_HASH);
        snprintf(info->request_id, sizeof(info->request_id), "%s", u->allow_request_id);
        snprintf(info->model, sizeof(info->model), "%s", u->model);
        info->reserved_tokens = u->reserved_tokens;
        info->time_unix_ms = u->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_WITNESS_EVENT: {
        /* What decisiond saw of a witness it submits its checkpoints to (issue 18): the rules
         * of wire/frame.c's check_witness_event, in the verifier's own words. The reason's
         * characters are walk()'s (bad-string); time_unix_ms 0 is time-missing below. */
        const Svpb__V1__WitnessEvent *w = e->witness_event;
        size_t wl = strlen(w->witness), rl = strlen(w->reason);

        if (wl == 0)
            BAD("missing-field", "witness_event: no witness");
        if (wl > SV_WITNESS_NAME_MAX)
            BAD("field-too-long", "witness_event: witness longer than %d bytes",
                SV_WITNESS_NAME_MAX);
        for (size_t i = 0; i < wl; i++) {
            unsigned char c = (unsigned char)w->witness[i];

            if (c < 0x21 || c > 0x7e || c == '+')
                BAD("bad-field",
                    "witness_event: witness is not a key name (bytes 0x21..0x7e without '+')");
        }
        if (w->key_id.len == 0)
            BAD("missing-field", "witness_event: no key_id");
        if (w->key_id.len != 4)
            BAD("bad-field", "witness_event: key_id is %zu bytes, not 4", w->key_id.len);
        if (w->kind < SVPB__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_FAILING ||
            w->kind > SVPB__V1__WITNESS_EVENT_KIND__WITNESS_EVENT_CONSISTENCY)
            BAD("bad-field", "witness_event: kind %d is not 1..3", (int)w->kind);
        if (w->status > 599)
            BAD("bad-field", "witness_event: status %u is above 599", (unsigned)w->status);
        if (w->checkpoint_size == 0)
            BAD("missing-field", "witness_event: checkpoint_size is 0");
        if (w->witness_size != 0 && w->status != 409)
            BAD("bad-field", "witness_event: witness_size is set without a 409");
        if (rl == 0)
            BAD("missing-field", "witness_event: no reason");
        if (rl > WITNESS_REASON_MAX)
            BAD("field-too-long", "witness_event: reason longer than %d bytes", WITNESS_REASON_MAX);
        snprintf(info->witness, sizeof(info->witness), "%s", w->witness);
        info->witness_kind = (int)w->kind;
        info->witness_checkpoint_size = w->checkpoint_size;
        info->time_unix_ms = w->time_unix_ms;
        return 0;
    }
    case SVPB__V1__ENTRY__KIND_CONFORMANCE_REPORT:
        return check_conformance(e->conformance_report, info, code, why);
    default:
        BAD("missing-field", "entry: no kind set");
    }
}

int sv_entry_check(const uint8_t *e, size_t len, struct sv_entry_info *info, char *code, char *why)
{
    Svpb__V1__Entry *m;
    uint8_t *re = NULL;
    size_t n;
    int r = -1;

    memset(info, 0, sizeof(*info));
    if (len < 1 || len > 65535)
        BAD("bad-length", "entry of %zu bytes (1..65535)", len);
    m = svpb__v1__entry__unpack(NULL, len, e);
    if (m == NULL)
        BAD("not-protobuf", "entry does not unpack as sworn.v1.Entry");
    if (walk(&m->base, 0, code, why) != 0)
        goto out;
    n = svpb__v1__entry__get_packed_size(m);
    if (n != len) {
        snprintf(code, 32, "not-canonical");
        sv_fail(why, "entry is not in canonical encoding (re-encodes to %zu bytes)", n);
        goto out;
    }
    re = malloc(n);
    if (re == NULL) {
        snprintf(code, 32, "internal");
        sv_fail(why, "out of memory");
        goto out;
    }
    svpb__v1__entry__pack(m, re);
    if (memcmp(re, e, len) != 0) {
        snprintf(code, 32, "not-canonical");
        sv_fail(why, "entry is not in canonical encoding");
        goto out;
    }
    info->kind = (enum sv_entry_kind)m->kind_case;
    r = check_kind(m, info, code, why);
    /* Every kind carries decisiond's clock (issue 13, finding 6): key validity is checked at
     * it, and 0 would be a time no key was valid at, or, read as "unknown", any. An
     * EscalationResolved written before its field 7 has none, and is refused too. */
    if (r == 0 && info->time_unix_ms == 0) {
        snprintf(code, 32, "time-missing");
        r = sv_fail(why, "the entry has no time_unix_ms (decisiond stamps every entry with its "
                         "clock; the keys that sign for it are checked at that time)");
    }
out:
    free(re);
    svpb__v1__entry__free_unpacked(m, NULL);
    return r;
}

int sv_entry_startup(const uint8_t *e, size_t len, struct sv_startup *out, char *why)
{
    Svpb__V1__Entry *m;
    const Svpb__V1__StartupMeasurement *st;
    int r = 0;

    memset(out, 0, sizeof(*out));
    m = svpb__v1__entry__unpack(NULL, len, e);
    if (m == NULL || m->kind_case != SVPB__V1__ENTRY__KIND_STARTUP || m->startup->n_files > 256) {
        if (m != NULL)
            svpb__v1__entry__free_unpacked(m, NULL);
        return sv_fail(why, "not a Startup entry");
    }
    st = m->startup;
    out->measured = st->pcr23.len == SV_HASH && st->pcr23_before.len == SV_HASH;
    if (out->measured) {
        memcpy(out->pcr23_before, st->pcr23_before.data, SV_HASH);
        memcpy(out->pcr23, st->pcr23.data, SV_HASH);
    }
    out->engine_uid = st->engine_uid;
    out->signer_uid = st->signer_uid;
    out->development = st->development != 0;
    for (size_t i = 0; i < st->n_files; i++) {
        const Svpb__V1__MeasuredFile *f = st->files[i];

        if (f->sha256.len != SV_HASH) {
            r = sv_fail(why, "startup: file %zu has no SHA-256", i);
            break;
        }
        memcpy(out->sha256[i], f->sha256.data, SV_HASH);
        out->role[i] = (int)f->role;
        out->path[i] = malloc(strlen(f->path) + 1);
        if (out->path[i] == NULL) {
            r = sv_fail(why, "out of memory");
            break;
        }
        memcpy(out->path[i], f->path, strlen(f->path) + 1);
        out->nfiles = i + 1;
    }
    svpb__v1__entry__free_unpacked(m, NULL);
    return r;
}

void sv_startup_free(struct sv_startup *s)
{
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->path[i]);
    s->nfiles = 0;
}
