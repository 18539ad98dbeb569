/*
 * resource.h -- the one canonical form of a request's resource (scheme, host, port, path and
 * query, tool), which the policy engine and the credential vault both match, and nothing else.
 * docs/policy.md section 2.0 gives the rules byte by byte; in short:
 *
 *   scheme  lower-cased; one of http, https, ws, wss (the proxy's schemes; an MCP tool call
 *           travels over http or https and names its tool in `tool`), or tcp (operation
 *           tcp.connect: a raw CONNECT tunnel, which has a host and a port but no path).
 *   host    lower-cased. A name: LDH labels (a-z 0-9 '-', 1..63 bytes, no '-' first or last;
 *           IDNA A-labels "xn--..." are LDH), at most 253 bytes, one trailing dot stripped
 *           ("a.example." is "a.example"). An IPv4 address only as a dotted quad of decimal
 *           octets without leading zeros; a name whose last label is a number (all digits, or
 *           "0x" and hex digits) is any other IPv4 spelling (octal, hex, short, one integer) and
 *           is refused. An IPv6 address, with or without brackets, becomes "[" RFC 5952 text "]",
 *           except an IPv4-mapped one (::ffff:0:0/96), which is its IPv4 address (the dotted
 *           quad, kind IPv4); zone ids, IPv4-translated and -compatible addresses are refused.
 *           The unspecified addresses 0.0.0.0, [::] and [::ffff:0.0.0.0] (which connect to this
 *           host) are refused. A byte >= 0x80 is refused (no UTS-46 mapping: A-labels only).
 *   port    1..65535, always explicit (Resource.port is required on the wire, so there is no
 *           default to elide).
 *   path    scheme tcp: must be "" (or NULL), and stays "" (path_len and bare_len 0, bare "");
 *           any other path is refused. Otherwise:
 *           "" becomes "/"; otherwise it starts with '/'. Percent escapes: hex upper-cased,
 *           unreserved characters (A-Z a-z 0-9 - . _ ~) decoded. Then RFC 3986 section 5.2.4
 *           dot-segment removal. Refused: %2F, %5C, '\', %00, any other encoded or raw control
 *           character, '%' without two hex digits, "%25" followed by two hex digits (double
 *           encoding, also when the two digits were themselves escaped), encoded bytes >= 0x80
 *           that are not UTF-8 (overlong forms like %C0%AF included) or that encode a Unicode
 *           look-alike of '.', '/' or '\' (U+2024 U+2025 U+2044 U+2215 U+29F8 U+29F9 U+FE52
 *           U+FE68 U+FF0E U+FF0F U+FF3C), raw bytes >= 0x80, '#', characters RFC 3986 does
 *           not allow raw, an empty segment ("//") and more than SWORN_RESOURCE_PATH_MAX bytes.
 *           Path parameters: a segment holding ';' is "name;params" (params normalised like
 *           the rest of the path, so no '/', %2F, %5C there either); refused when the name is
 *           empty (";x") or a dot segment ("..;", ".;", "%2e%2e;x"), and a dot segment before
 *           "%3B" is refused too. The canonical form keeps the parameters (path) and also
 *           gives the path with every segment's ";params" removed (bare): the policy's path
 *           globs and the vault's path prefixes match both readings. Whether a path with parameters
 * is acceptable at all is the policy's decision (docs/policy.md 2.0 and 2.4). query   everything
 * from the first '?', kept, its escapes normalised as in the path. It may hold '/', '?', ';', %2F,
 * %5C and encoded control characters other than %00 (it is never matched); it may not hold raw
 * controls, raw bytes >= 0x80, '\', '#', %00, invalid escapes or double encoding. tool    kept as
 * carried (the decision socket already requires UTF-8 without controls).
 *   uri     (an MCP resource URI; "" when none) kept as carried, and refused unless it is already
 *           in canonical form (sworn_resource_check_uri), so no second spelling of one URI
 *           exists: a lower-case scheme and ':'; a lower-case authority after "//"; only the
 *           bytes RFC 3986 allows in a URI, without '#'; escapes '%' and two upper-case hex
 *           digits, never of an unreserved character, a control, '/', '\', a byte >= 0x80, or
 *           "%25" and two hex digits (double encoding); no dot segment ("." or "..") before the
 *           first '?'; at most SWORN_RESOURCE_URI_MAX bytes.
 *
 * Canonicalisation is idempotent: canonicalising a canonical form gives it back unchanged.
 *
 * Pure computation: no allocation, no globals, no I/O; thread-safe. A refusal is not an error:
 * functions return 1 with *why set to a static sentence (no input bytes are copied into it).
 * Inputs are public request data, so nothing here is constant-time.
 */
#ifndef SWORN_RESOURCE_H
#define SWORN_RESOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

#define SWORN_RESOURCE_SCHEME_MAX 5u    /* "https" */
#define SWORN_RESOURCE_SCHEME_TCP "tcp" /* a raw tunnel: host and port, no path */
#define SWORN_RESOURCE_HOST_MAX 253u    /* a name, without the stripped trailing dot */
#define SWORN_RESOURCE_LABEL_MAX 63u    /* one label of a name */
#define SWORN_RESOURCE_HOST_IN_MAX 255u /* a host as carried (resource.host on the wire) */
#define SWORN_RESOURCE_PATH_MAX 8192u   /* path and query, as carried and canonical */
#define SWORN_RESOURCE_TOOL_MAX 256u    /* resource.tool on the wire */
#define SWORN_RESOURCE_URI_MAX 2048u    /* resource.uri on the wire */
#define SWORN_RESOURCE_MODEL_MAX 256u   /* resource.model on the wire and canonical */
#define SWORN_RESOURCE_SHA256_LEN 32u

/* What a canonical host is. */
enum sworn_resource_host_kind {
    SWORN_RESOURCE_HOST_NAME = 1,
    SWORN_RESOURCE_HOST_IPV4 = 4,
    SWORN_RESOURCE_HOST_IPV6 = 6,
};

/* A canonical resource. Plain arrays, no pointers: it may be copied with memcpy. */
struct sworn_resource {
    char scheme[SWORN_RESOURCE_SCHEME_MAX + 1];
    char host[SWORN_RESOURCE_HOST_MAX + 1]; /* a name, a dotted quad, or "[v6]" */
    enum sworn_resource_host_kind host_kind;
    uint8_t addr[16]; /* IPv4: addr[0..4); IPv6: all 16; a name: zero */
    uint32_t port;
    char path[SWORN_RESOURCE_PATH_MAX + 1]; /* path, then '?' and the query when there is one */
    size_t path_len;                        /* bytes of path before the '?' (>= 1; 0: tcp) */
    int path_params;                        /* 1: the path (before '?') holds a ';' */
    char bare[SWORN_RESOURCE_PATH_MAX + 1]; /* path before '?', each segment's ";..." removed */
    size_t bare_len; /* strlen(bare) (>= 1; 0: tcp); == path_len without ';' */
    char tool[SWORN_RESOURCE_TOOL_MAX + 1]; /* "" when none */
    char uri[SWORN_RESOURCE_URI_MAX + 1];   /* "" when none; canonical as carried */
    /* The model a model.call names, lower-cased (sworn_resource_canon_model); "" when none. Not
     * part of DecisionRecord.canonical_resource (its bytes are bounded by the record's format):
     * it is canonicalised again from request.resource.model wherever it is needed. */
    char model[SWORN_RESOURCE_MODEL_MAX + 1];
};

/*
 * The canonical form of a model name (resource.model; NULL or "" is none: out = ""): ASCII
 * letters lower-cased, every byte 0x21..0x7e, 1..256 bytes. Providers name the same model in
 * any case ("GPT-4o"), so a deny of "gpt-4o" must hold for every case of it. Returns 0, or 1
 * with *why set (a space, a control character, a byte above 0x7e, too long) and out[0] = '\0'.
 */
int sworn_resource_canon_model(const char *in, char out[SWORN_RESOURCE_MODEL_MAX + 1],
                               const char **why);

/*
 * Canonicalise one host (as resource.host carries it, NUL-terminated). OUT: out (the canonical
 * text, NUL-terminated), *kind and addr (16 bytes; zero for a name). Returns 0, or 1 with *why
 * set and out[0] = '\0'. The vault and the policy's host patterns use it at load too.
 */
int sworn_resource_canon_host(const char *in, char out[SWORN_RESOURCE_HOST_MAX + 1],
                              enum sworn_resource_host_kind *kind, uint8_t addr[16],
                              const char **why);

/*
 * Canonicalise a path with its query (NUL-terminated; NULL is ""). OUT: out (at least
 * SWORN_RESOURCE_PATH_MAX + 1 bytes) and *path_len (the bytes before '?'). Returns 0, or 1 with
 * *why set and out[0] = '\0'. The vault's path prefixes use it at load too.
 */
int sworn_resource_canon_path(const char *in, char *out, size_t *path_len, const char **why);

/*
 * Is uri (NUL-terminated; an MCP resource URI, non-empty) in the canonical form above? Returns 0,
 * or 1 with *why set. Used by sworn_resource_canon; the proxy need not call it (decisiond refuses,
 * and records, a URI that fails it).
 */
int sworn_resource_check_uri(const char *uri, const char **why);

/*
 * Canonicalise a whole resource. IN: r (NULL is refused). OUT: *out, all of it written; on a
 * refusal (1, *why set) it is zeroed. Returns 0 or 1; never fails otherwise.
 */
int sworn_resource_canon(const Sworn__V1__Resource *r, struct sworn_resource *out,
                         const char **why);

/*
 * One request's resource canonicalised once, to be handed on. A decision needs the canonical form
 * of its request's resource four times (the policy's match, the vault's release, the entry's
 * canonical_resource and the receipt's signature base), and each sworn_resource_canon writes all
 * of its 19 KiB result. So decisiond canonicalises once per decision (sworn_resource_canonicalise)
 * and passes this struct by pointer to each of them.
 *
 * Contract: it is the canonical form of exactly the resource `of` points to (that request's own
 * Resource message, compared by pointer: sworn_resource_canonical_is_of), made from it by
 * sworn_resource_canon and never changed after; the request must not change while it is used.
 * rc and why are sworn_resource_canon's return and refusal; on a refusal res is all zero, as
 * sworn_resource_canon leaves it. Whoever made it owns it (decisiond: the decision's job, until
 * its entry is recorded and answered); every user only reads it, and checks `of` against the
 * request it was given, refusing to go on (an error, so a deny) when they differ. Plain data,
 * like struct sworn_resource: no allocation, nothing to free.
 */
struct sworn_resource_canonical {
    const Sworn__V1__Resource *of; /* the resource it is the canonical form of (may be NULL) */
    int rc;                        /* 0: res is the canonical form; 1: refused (why) */
    const char *why;               /* the refusal (a static sentence), or NULL */
    struct sworn_resource res;     /* all of it written; all zero when refused */
};

/* Canonicalise r (NULL is refused) into *out, all of it written. Pure; thread-safe. */
void sworn_resource_canonicalise(const Sworn__V1__Resource *r,
                                 struct sworn_resource_canonical *out);

/* 1 when c was made from exactly r (the same Resource message), else 0 (c NULL included). */
int sworn_resource_canonical_is_of(const struct sworn_resource_canonical *c,
                                   const Sworn__V1__Resource *r);

/*
 * Point the fields of out (initialised by the caller) into c, so the canonical form can be
 * packed (the DecisionRecord's canonical_resource). out is valid while c is.
 */
void sworn_resource_to_pb(const struct sworn_resource *c, Sworn__V1__Resource *out);

/*
 * The raw target's digest: SHA-256 of the text scheme "://" host ":" port path, each part exactly
 * as r carries it (no case folding or decoding; port in decimal without leading zeros; a NULL
 * path is ""; the tool and the uri are not part of it). The DecisionRecord's raw_target_sha256; the
 * verifier recomputes it from the recorded request. Returns 0, or -1 (r NULL or lacking scheme or
 * host, or the hash failed) with out zeroed.
 */
int sworn_resource_raw_sha256(const Sworn__V1__Resource *r, uint8_t out[SWORN_RESOURCE_SHA256_LEN]);

/*
 * Do both readings of the canonical path, without its parameters (bare) and as written (path
 * before its '?'), lie under the canonical prefix (which holds no ';') on a segment boundary?
 * ("/public;x/y" does not lie under "/public": a server that keeps parameters reads the segment
 * "public;x".) A prefix ending in '/' matches paths that start with it; any
 * other prefix matches the path equal to it or followed by '/'. The vault's path_prefix rule.
 */
int sworn_resource_under_prefix(const struct sworn_resource *c, const char *prefix);

#endif
