/*
 * p_token.h -- finding the agent's symbolic token (docs/configuration.md, the vault's `symbolic`)
 * in a request, so that the proxy can send its SHA-256 to decisiond (Context.
 * credential_token_sha256, the vault's lookup key) and, after an allow, put the real credential
 * exactly where the token was.
 *
 * A symbolic token is "sym_" followed by 32..251 characters of A-Z a-z 0-9 _ - (36..255 bytes
 * in all; the prefix is case-sensitive), exactly the vault's rule (decisiond/vault.c).
 *
 * Where it counts as presented (anything else is not a presentation: it is neither hashed nor
 * substituted and goes upstream unchanged, where a symbolic token is useless):
 *   - a header value that is exactly one token, after the optional whitespace (SP, HTAB) around
 *     a field value (RFC 9110 section 5.5) is set aside;
 *   - a header value "Bearer" (any case), one or more SP, then exactly one token (RFC 6750
 *     section 2.1: credentials = "Bearer" 1*SP b64token; so "Bearer  sym_..." with two spaces
 *     counts, and the token's offset is after the last space; a HTAB there does not count);
 *   - in the raw query ("a=b&c=d", without '?'), split at '&', a parameter "name=value" whose
 *     value (after the first '=') is exactly one token. A value with '%' never counts ('%' is not
 *     a token character, and the proxy substitutes only literal bytes); a parameter without '='
 *     has no value and never counts.
 * Other schemes ("Basic", "token"), tokens inside a longer value (cookies, JSON, "x sym_..."),
 * and percent-encoded tokens are not presentations.
 *
 * Errors: sworn_symtok_scan returns -1 with sworn_err set only when SHA-256 fails (OpenSSL out
 * of memory): the proxy must then refuse the request. Memory: nothing allocated; hits point into
 * the caller's bytes by offset only. Thread safety: no shared state.
 */
#ifndef SWORN_P_TOKEN_H
#define SWORN_P_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_SYMTOK_MIN 36u /* "sym_" + 32 */
#define SWORN_SYMTOK_MAX 255u

/* Is s[0..n) exactly one symbolic token? Returns 1 or 0 (s may be NULL when n is 0). */
int sworn_symtok_is(const uint8_t *s, size_t n);

/* One place a token was presented. */
struct sworn_symtok_hit {
    int in_query; /* 1: in the query; 0: in a header value */
    size_t index; /* header value index, or byte offset of the parameter's value in the query */
    size_t off;   /* the token's first byte within that header value, or within the query */
    size_t len;   /* the token's length */
};

#define SWORN_SYMTOK_HITS_MAX 8u

struct sworn_symtok_scan {
    struct sworn_symtok_hit hit[SWORN_SYMTOK_HITS_MAX]; /* header values first, in order, then
                                                         * the query, left to right */
    size_t nhits;
    int distinct;       /* how many different token values among the hits (0 when none) */
    uint8_t sha256[32]; /* SHA-256 of the first hit's token; all zero when none */
};

/*
 * Scan the header values values[i][0..value_lens[i]) for i < nvalues and the raw query
 * query[0..query_len) (query may be NULL: no query). OUT: *out (always fully written).
 * Returns 0; 1 when there are more than SWORN_SYMTOK_HITS_MAX occurrences (out then holds the
 * first SWORN_SYMTOK_HITS_MAX, distinct and sha256 computed over them; the proxy refuses the
 * request); -1 when SHA-256 failed (sworn_err set; out is all zero).
 * The proxy refuses a request whose distinct is more than 1 (ambiguous: which token's
 * credential would the allow release?).
 */
int sworn_symtok_scan(const uint8_t *const *values, const size_t *value_lens, size_t nvalues,
                      const uint8_t *query, size_t query_len, struct sworn_symtok_scan *out);

#endif
