/*
 * p_oauth.h -- OAuth token endpoints (docs/proxy.md, "OAuth token endpoints"): the `oauth:`
 * section of the proxy's configuration, and the pure parts of response interception: reading a
 * token endpoint's response for its access_token and refresh_token, putting the symbolic tokens
 * decisiond minted in their place, and checking that an answer that is not intercepted carries
 * no token. p_conn.c does the I/O (holding the body, the TokenExchange, the answer).
 *
 * Configuration:
 *     oauth:
 *       token_endpoints: [URL, ...]  1..16 URLs (proxy/p_dest.h syntax), required in the section
 *       response_max: 65536          bytes of a token endpoint's response body held, 1024..1048576
 *
 * A token response (status 200 with a credential released for the request) is read as:
 *   - Content-Type application/json (or any "+json" type): one strict JSON object (p_json.h:
 *     no duplicate members, at any depth, after unescaping); "access_token" a non-empty string,
 *     required; "refresh_token" a non-empty string, optional; "token_type" a string equal to
 *     "Bearer" in any case, required (RFC 6749 section 5.1; the minted credential is sent as
 *     "Bearer <token>", so another type would be sent wrong); no "id_token" (an OpenID Connect
 *     identity token would reach the agent real: refused); no member named access_token,
 *     refresh_token or id_token below the top level (a token the swap would miss);
 *   - Content-Type application/x-www-form-urlencoded: p_form.h's rules, the same members as
 *     parameters (decoded values);
 *   - anything else is refused.
 * After the swap, the body must not hold either real value anywhere (a second copy under
 * another name), and no response header may hold one.
 *
 * Errors: functions return 0, 1 (refused: *why a static sentence holding no byte of the body)
 * or -1 (out of memory, sworn_err set). Memory: the tokens read are copied into malloc'd
 * buffers that sworn_poauth_tokens_wipe wipes and frees. Thread-safe (no shared state).
 */
#ifndef SWORN_P_OAUTH_H
#define SWORN_P_OAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "p_dest.h"
#include "p_http.h"

#define SWORN_POAUTH_ENDPOINTS_MAX 16u
#define SWORN_POAUTH_RESPONSE_DEFAULT 65536u
#define SWORN_POAUTH_RESPONSE_MIN 1024u
#define SWORN_POAUTH_RESPONSE_MAX 1048576u
#define SWORN_POAUTH_TOKEN_MAX 16377u /* 16384 (a vault value) - "Bearer " */

struct sworn_yaml_doc;
struct sworn_yaml_node;

struct sworn_poauth_conf {
    struct sworn_pdest endpoints[SWORN_POAUTH_ENDPOINTS_MAX];
    size_t n;            /* 0: no token endpoint, nothing intercepted */
    size_t response_max; /* bytes */
};

/*
 * Read the `oauth` key of the configuration's root mapping (absent: n = 0 and the defaults).
 * Returns 0, or -1 with sworn_err set to "<file>:<line>:<col>: <message>" (sworn_yaml_error).
 */
int sworn_poauth_conf_read(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                           struct sworn_poauth_conf *out);

/* Is the canonical resource one of the token endpoints? 1 or 0. */
int sworn_poauth_is_endpoint(const struct sworn_poauth_conf *c, const struct sworn_resource *r);

/* The two tokens of a token response, decoded, and where they are in its body. */
struct sworn_poauth_tokens {
    int form;                  /* 1: a form body; 0: JSON */
    uint8_t *access, *refresh; /* decoded values (malloc'd); refresh NULL when absent */
    size_t access_len, refresh_len;
    /* JSON: the byte span of each value's string literal (quotes included) in the body. */
    size_t access_off, access_span, refresh_off, refresh_span;
};

/*
 * Read a token response body[0..len) whose Content-Type value is ctype[0..ctype_len) (NULL:
 * none). OUT: *t (wipe it with sworn_poauth_tokens_wipe whatever the result).
 */
int sworn_poauth_read(const uint8_t *body, size_t len, const char *ctype, size_t ctype_len,
                      struct sworn_poauth_tokens *t, const char **why);

/*
 * The body with the access token's value replaced by sym_access and the refresh token's (when
 * read) by sym_refresh (each a symbolic token: "sym_" and base64url characters). Then the new
 * body must not hold either real value. OUT: *out (malloc'd; free it), *out_len.
 */
int sworn_poauth_swap(const uint8_t *body, size_t len, const struct sworn_poauth_tokens *t,
                      const char *sym_access, const char *sym_refresh, uint8_t **out,
                      size_t *out_len, const char **why);

void sworn_poauth_tokens_wipe(struct sworn_poauth_tokens *t);

/*
 * An answer of a token endpoint that is not swapped (an error status, or no credential was
 * released): 1 (refused, *why) when it may carry a token: a strict JSON body with a member named
 * access_token, refresh_token or id_token at any depth (names compared unescaped), a form body
 * with such a parameter (names decoded), or any other body holding the bytes "access_token" or
 * "refresh_token" in any case; else 0.
 */
int sworn_poauth_untouched_ok(const uint8_t *body, size_t len, const char **why);

/*
 * The response head of a token endpoint: 1 (refused, *why) when it sets a cookie (a session a
 * token could ride on), names a token in a field ("access_token" or "refresh_token" in any case
 * in any value), or
 * has no length (read until close); tokens non-NULL: also when a field value holds one of them.
 */
int sworn_poauth_head_refused(const struct sworn_http_response *rs,
                              const struct sworn_poauth_tokens *tokens, const char **why);

#endif
