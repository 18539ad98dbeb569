/*
 * p_dest.h -- one destination the proxy's configuration names by URL ("https://api.example/v1/"),
 * and whether a request's canonical resource lies under it.
 *
 * The configuration's special endpoints (MCP servers, model APIs, OAuth token endpoints, the
 * destinations that get an RFC 9421 signature) are each a list of these. A destination is read
 * once at load, in the canonical form of policy/resource.h, and matched against the canonical
 * resource decisiond decides on (the form the proxy sends upstream), so no spelling of the
 * request's target (case, escapes, dot segments, a default port written out, path parameters)
 * can fall outside a destination it lies under, or inside one it does not.
 *
 * URL syntax: scheme "://" host [":" port] [path]. scheme is http or https (lower case); host as
 * resource.h takes it (a name, a dotted quad, or [v6]); port 1..65535 without leading zeros, the
 * scheme's default (80, 443) when absent; path absolute, without a query or fragment, "/" when
 * absent. No userinfo, no query, no fragment, no spaces or controls, at most 2048 bytes.
 *
 * Matching: the scheme, host and port are equal, and the path lies under the destination's path
 * on a segment boundary (sworn_resource_under_prefix: "/mcp" matches "/mcp" and "/mcp/x", not
 * "/mcpx"; "/v1/" matches what starts with "/v1/"), in both readings of a path with parameters.
 * A "wss"/"ws" resource never matches an http(s) destination, nor "tcp" any.
 *
 * Pure computation: no allocation, no I/O, no globals; thread-safe. A refusal returns 1 with
 * *why set to a static sentence (no input bytes are copied into it).
 */
#ifndef SWORN_P_DEST_H
#define SWORN_P_DEST_H

#include <stddef.h>
#include <stdint.h>

#include "resource.h"

#define SWORN_PDEST_URL_MAX 2048u /* a destination URL, without its NUL */

struct sworn_pdest {
    char scheme[SWORN_RESOURCE_SCHEME_MAX + 1]; /* "http" or "https" */
    char host[SWORN_RESOURCE_HOST_MAX + 1];     /* canonical host */
    uint32_t port;                              /* 1..65535 */
    char path[SWORN_PDEST_URL_MAX + 1];         /* canonical path prefix, starts with '/' */
};

/* Read url (NUL-terminated) into *out. Returns 0, or 1 with *why set and *out zeroed. */
int sworn_pdest_parse(const char *url, struct sworn_pdest *out, const char **why);

/* Does the canonical resource c lie under d? 1 or 0. */
int sworn_pdest_matches(const struct sworn_pdest *d, const struct sworn_resource *c);

/*
 * The wide reading, for the destinations whose requests get a closer reading (MCP servers, model
 * APIs, OAuth token endpoints: reading too much is safe there, too little is not): the same
 * scheme, host and port, and either reading of the canonical path (without its ";params", as
 * Tomcat, Jetty and Spring route, or as written) under the destination's path on a segment
 * boundary with ASCII case aside (Express, ASP.NET, IIS route without case). Red team rt-A.
 */
int sworn_pdest_matches_wide(const struct sworn_pdest *d, const struct sworn_resource *c);
const struct sworn_pdest *sworn_pdest_find_wide(const struct sworn_pdest *list, size_t n,
                                                const struct sworn_resource *c);

/* The first of the n destinations that c lies under, or NULL. */
const struct sworn_pdest *sworn_pdest_find(const struct sworn_pdest *list, size_t n,
                                           const struct sworn_resource *c);

#endif
