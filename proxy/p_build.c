/*
 * p_build.c -- the AuthorizationRequest of one agent request (p_build.h).
 */
#include "p_build.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "encoding.h"
#include "err.h"

static int sha256(const void *p, size_t n, uint8_t out[32])
{
    SWORN_ENSURE(EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL) == 1, SWORN_ERR_CRYPTO,
                 "SHA-256 failed");
    return 0;
fail:
    return -1;
}

int sworn_pbuild_content_digest(const uint8_t sha[32], char out[64])
{
    char b64[48];
    long n = sworn_base64_encode(sha, 32, b64, sizeof(b64));

    SWORN_ENSURE(n > 0, SWORN_ERR_CRYPTO, "base64 failed");
    snprintf(out, 64, "sha-256=:%.*s:", (int)n, b64);
    return 0;
fail:
    return -1;
}

/* Copy s into dst (cap bytes); 1 when it does not fit. */
static int copy(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);

    if (n >= cap)
        return 1;
    memcpy(dst, s, n + 1);
    return 0;
}

static int add_covered(struct sworn_pbuild *b, const char *name, const char *value, size_t len)
{
    size_t i = b->context.n_covered;

    if (sha256(value, len, b->covered_sha[i]) != 0)
        return -1;
    sworn__v1__covered_component__init(&b->covered[i]);
    b->covered[i].name = (char *)name;
    b->covered[i].value_sha256.data = b->covered_sha[i];
    b->covered[i].value_sha256.len = 32;
    b->covered_ptr[i] = &b->covered[i];
    b->context.n_covered = i + 1;
    return 0;
}

static unsigned default_port(const char *scheme)
{
    if (strcmp(scheme, "https") == 0 || strcmp(scheme, "wss") == 0)
        return 443;
    if (strcmp(scheme, "http") == 0 || strcmp(scheme, "ws") == 0)
        return 80;
    return 0;
}

static int build_covered(struct sworn_pbuild *b, const struct sworn_pbuild_in *in, char digest[64])
{
    const struct sworn_resource *c = in->canonical;
    char authority[SWORN_RESOURCE_HOST_MAX + 8];
    const char *path, *q;
    size_t path_len;

    b->context.covered = b->covered_ptr;
    if (c == NULL)
        return 0;
    /* What upstream gets: the canonical path and query (the proxy sends that form). */
    path = c->path;
    q = strchr(path, '?');
    path_len = q != NULL ? (size_t)(q - path) : strlen(path);
    if (c->port == default_port(c->scheme))
        snprintf(authority, sizeof(authority), "%s", c->host);
    else
        snprintf(authority, sizeof(authority), "%s:%u", c->host, (unsigned)c->port);
    if (in->method[0] != '\0')
        SWORN_GUARD(add_covered(b, "@method", in->method, strlen(in->method)));
    SWORN_GUARD(add_covered(b, "@authority", authority, strlen(authority)));
    if (path_len > 0)
        SWORN_GUARD(add_covered(b, "@path", path, path_len));
    if (q != NULL)
        SWORN_GUARD(add_covered(b, "@query", q, strlen(q)));
    if (in->has_body)
        SWORN_GUARD(add_covered(b, "content-digest", digest, strlen(digest)));
    return 0;
fail:
    return -1;
}

int sworn_pbuild_request(struct sworn_pbuild *b, const struct sworn_pbuild_in *in, const char **why)
{
    char digest[64] = "";

    sworn__v1__authorization_request__init(&b->req);
    sworn__v1__principal__init(&b->principal);
    sworn__v1__resource__init(&b->resource);
    sworn__v1__context__init(&b->context);
    if (copy(b->id, sizeof(b->id), in->request_id) ||
        copy(b->principal_id, sizeof(b->principal_id), in->principal) ||
        copy(b->sandbox, sizeof(b->sandbox), in->sandbox) ||
        copy(b->operation, sizeof(b->operation), in->operation) ||
        copy(b->method, sizeof(b->method), in->method)) {
        *why = "the request's method is too long";
        return 1;
    }
    if (copy(b->scheme, sizeof(b->scheme), in->scheme)) {
        *why = "the target's scheme is too long";
        return 1;
    }
    if (copy(b->host, sizeof(b->host), in->host)) {
        *why = "the target's host is too long";
        return 1;
    }
    if (copy(b->path, sizeof(b->path), in->path)) {
        *why = "the target's path is too long";
        return 1;
    }
    if (in->nheader_names > SWORN_FRAME_HEADERS_MAX) {
        *why = "the request has too many header fields";
        return 1;
    }
    for (size_t i = 0; i < in->nheader_names; i++)
        if (strlen(in->header_names[i]) > SWORN_PBUILD_NAME_MAX) {
            *why = "a header field name is longer than 256 bytes";
            return 1;
        }
    b->req.request_id = b->id;
    b->principal.id = b->principal_id;
    b->principal.sandbox = b->sandbox;
    b->principal.uid = (uint32_t)in->uid;
    b->principal.sandbox_start_index = in->sandbox_start_index;
    b->req.principal = &b->principal;
    b->req.operation = b->operation;
    b->resource.scheme = b->scheme;
    b->resource.host = b->host;
    b->resource.port = in->port;
    b->resource.path = b->path;
    b->req.resource = &b->resource;
    b->context.method = b->method;
    for (size_t i = 0; i < in->nheader_names; i++)
        b->names[i] = (char *)in->header_names[i];
    b->context.header_names = b->names;
    b->context.n_header_names = in->nheader_names;
    if (in->has_body) {
        SWORN_GUARD(sha256(in->body, in->body_len, b->body_sha));
        b->context.body_sha256.data = b->body_sha;
        b->context.body_sha256.len = 32;
        b->context.body_length = in->body_len;
        SWORN_GUARD(sworn_pbuild_content_digest(b->body_sha, digest));
    }
    SWORN_GUARD(build_covered(b, in, digest));
    if (in->token_sha256 != NULL) {
        memcpy(b->token_sha, in->token_sha256, 32);
        b->context.credential_token_sha256.data = b->token_sha;
        b->context.credential_token_sha256.len = 32;
    }
    b->req.context = &b->context;
    if (in->delegation != NULL) {
        sworn_jwt_to_pb(in->delegation, &b->jwt);
        b->req.delegation = &b->jwt.del;
    }
    b->req.time_unix_ms = in->time_unix_ms;
    if (in->tool != NULL && in->tool[0] != '\0') {
        if (strlen(in->tool) > SWORN_FRAME_TOOL_MAX) {
            *why = "the MCP tool or prompt name is too long";
            return 1;
        }
        b->resource.tool = (char *)in->tool;
    }
    if (in->uri != NULL && in->uri[0] != '\0') {
        if (strlen(in->uri) > SWORN_FRAME_URI_MAX) {
            *why = "the MCP resource URI is too long";
            return 1;
        }
        b->resource.uri = (char *)in->uri;
    }
    if (in->nnumbers > SWORN_FRAME_NUMBERS_MAX) {
        *why = "the request has too many JSON numbers";
        return 1;
    }
    for (size_t i = 0; i < in->nnumbers; i++) {
        sworn__v1__json_number__init(&b->numbers[i]);
        b->numbers[i].pointer = (char *)in->numbers[i].pointer;
        b->numbers[i].value = (char *)in->numbers[i].text;
        b->numbers_ptr[i] = &b->numbers[i];
    }
    b->context.json_numbers = b->numbers_ptr;
    b->context.n_json_numbers = in->nnumbers;
    if (in->mcp_session_sha256 != NULL) {
        memcpy(b->session_sha, in->mcp_session_sha256, 32);
        b->context.mcp_session_sha256.data = b->session_sha;
        b->context.mcp_session_sha256.len = 32;
    }
    return 0;
fail:
    return -1;
}
