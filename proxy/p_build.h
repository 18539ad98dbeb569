/*
 * p_build.h -- the AuthorizationRequest the proxy sends for one agent request (wire/sworn.proto,
 * docs/proxy.md "What decisiond is told"): who (the listener's principal; its sandbox and the
 * peer's uid, or on a hostlink the sandbox, SandboxStarted index and agent uid of the relay's
 * hello), what (operation, the resource exactly as the request carried it: decisiond canonicalises
 * and records both forms), and the context: the method, the header names as sent, the body's
 * length and SHA-256, the components an allow's receipt covers (each value's SHA-256), the
 * SHA-256 of the symbolic token presented, and the delegation chain read from the configured
 * token header; for an MCP request (p_mcp.h) the tool or prompt, the resource URI, the numbers
 * of a tool call's arguments and the SHA-256 of its Mcp-Session-Id. Header values and the body
 * never leave the proxy.
 *
 * The covered components (RFC 9421 names, in this order; a value's SHA-256 each):
 *   "@method"         the method
 *   "@authority"      the canonical host, and ":port" when it is not the scheme's default
 *   "@path"           the canonical path (before '?'), as the proxy sends it upstream
 *   "@query"          "?" and the canonical query, only when the target has one
 *   "content-digest"  "sha-256=:<base64 of the body's SHA-256>:" (RFC 9530), only with a body
 *
 * Memory: struct sworn_pbuild holds every part the message points to; it is large (the header
 * names' storage), so keep it in the connection, not on the stack. Valid until the next
 * sworn_pbuild_* call on it. Thread safety: none needed (one per connection).
 */
#ifndef SWORN_P_BUILD_H
#define SWORN_P_BUILD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"
#include "p_json.h"
#include "p_jwt.h"
#include "resource.h"
#include "sworn.pb-c.h"

#define SWORN_PBUILD_COVERED_MAX 5u
#define SWORN_PBUILD_NAMES_MAX 16384u /* bytes of header names with their NULs */
#define SWORN_PBUILD_NAME_MAX 256u    /* bytes of one header name (Context.header_names[]) */

/* What one request asks (all strings NUL-terminated; lengths bounded by the parser). */
struct sworn_pbuild_in {
    const char *request_id;
    const char *principal, *sandbox; /* the listener's principal; the listener's sandbox, or
                                        on a hostlink the hello's */
    uid_t uid;                       /* SO_PEERCRED's, or on a hostlink the hello's agent_uid */
    uint64_t sandbox_start_index;    /* the hello's on a hostlink, else 0 */
    const char *operation;           /* "http.request", "ws.upgrade", "tcp.connect" */
    const char *scheme;              /* as the request carried it ("tcp" for tunnels) */
    const char *host;                /* as carried */
    uint32_t port;
    const char *path;                       /* path and query as carried ("" for tcp) */
    const char *method;                     /* "" for tcp.connect */
    const struct sworn_resource *canonical; /* for @authority; NULL: no covered components */
    const char *const *header_names;        /* as sent, in order */
    size_t nheader_names;
    const uint8_t *body;
    size_t body_len;
    int has_body;
    const uint8_t *token_sha256;                   /* 32 bytes, or NULL: no symbolic token */
    const struct sworn_jwt_delegation *delegation; /* NULL: none presented */
    uint64_t time_unix_ms;
    /* MCP (p_mcp.h): the tool or prompt, the resource URI (NULL or "": none), and the numbers of
     * a tool call's arguments (Context.json_numbers; at most SWORN_FRAME_NUMBERS_MAX). The
     * strings are pointed to, not copied: they must outlive the message. */
    const char *tool, *uri;
    const struct sworn_pjson_number *numbers;
    size_t nnumbers;
    const uint8_t *mcp_session_sha256; /* 32 bytes, or NULL: no Mcp-Session-Id */
};

struct sworn_pbuild {
    Sworn__V1__AuthorizationRequest req;
    Sworn__V1__Principal principal;
    Sworn__V1__Resource resource;
    Sworn__V1__Context context;
    Sworn__V1__CoveredComponent covered[SWORN_PBUILD_COVERED_MAX];
    Sworn__V1__CoveredComponent *covered_ptr[SWORN_PBUILD_COVERED_MAX];
    uint8_t covered_sha[SWORN_PBUILD_COVERED_MAX][32];
    char *names[SWORN_FRAME_HEADERS_MAX];
    uint8_t body_sha[32], token_sha[32], session_sha[32];
    struct sworn_jwt_pb jwt;
    Sworn__V1__JsonNumber numbers[SWORN_FRAME_NUMBERS_MAX];
    Sworn__V1__JsonNumber *numbers_ptr[SWORN_FRAME_NUMBERS_MAX];
    char id[SWORN_FRAME_ID_MAX + 1];
    char principal_id[129], sandbox[129], operation[65], scheme[16], method[40];
    char host[SWORN_RESOURCE_HOST_IN_MAX + 1];
    char path[SWORN_RESOURCE_PATH_MAX + 1];
};

/*
 * Fill b from in. Returns 0, or 1 when the request cannot be carried as it is (*why: the
 * target, a host or a header name is too long or too many for the wire's bounds): the caller
 * refuses it. -1 when hashing fails (sworn_err set).
 */
int sworn_pbuild_request(struct sworn_pbuild *b, const struct sworn_pbuild_in *in,
                         const char **why);

/* SHA-256 of the body as "sha-256=:BASE64:" (RFC 9530), NUL-terminated, into out (64 bytes). */
int sworn_pbuild_content_digest(const uint8_t sha256[32], char out[64]);

#endif
