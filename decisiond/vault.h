/*
 * vault.h -- the credential vault: the real secrets that decisiond releases to the proxy with an
 * allow, each bound to a scope (who may use it, and where it may be sent), and the symbolic
 * tokens that agents hold instead of them.
 *
 * The vault file is JSON (docs/configuration.md is the operator's reference):
 *
 *   {"version": 1, "credentials": [
 *     {"id": "github", "symbolic": "sym_...", "value": "Bearer ghp_real",
 *      "header": "authorization", "principals": ["agent-1"],
 *      "destinations": [{"scheme": "https", "host": "api.github.com", "port": 443,
 *                        "path_prefix": "/repos/"}]}, ...]}
 *
 * What is accepted (anything else is refused at load, naming the credential and field, never the
 * value):
 *   - the file: a regular file (not a symbolic link), no permission bits for group or others
 *     (0600 or stricter), owned by the effective uid, at most SWORN_VAULT_FILE_MAX bytes, one
 *     strict JSON object (json-c, nesting at most 8) with exactly the keys "version" (1) and
 *     "credentials" (an array of 0..SWORN_VAULT_MAX_CREDENTIALS objects);
 *   - a credential: exactly the keys id, symbolic, value, one of header/query, principals,
 *     destinations;
 *   - id: 1..128 bytes of [A-Za-z0-9._-], unique in the vault;
 *   - symbolic: "sym_" followed by 32..251 characters of [A-Za-z0-9_-], unique in the vault;
 *   - value: 1..16384 bytes of UTF-8 without control characters (C0, DEL, C1) other than tab (no
 * CR, LF or NUL: the value goes into a header or a query and must not split it);
 *   - header: an HTTP field name (RFC 9110 token characters), 1..256 bytes, stored lower-case;
 *     query: a query parameter name of 1..256 unreserved characters [A-Za-z0-9._~-];
 *   - principals: 1..64 strings, each "*" (any principal) or an exact principal id of 1..128
 *     printable bytes;
 *   - destinations: 1..64 objects with keys scheme ("http", "https", "ws" or "wss"), host, port
 *     (1..65535; optional, default 443 for https/wss and 80 for http/ws) and path_prefix
 *     (optional, starts with "/", at most 1024 bytes).
 *   - host: a host in the canonical form of policy/resource.h (a name of LDH labels, folded to
 *     lower case, one trailing dot dropped; a dotted-quad IPv4 address; an IPv6 address, stored
 *     as "[" RFC 5952 "]"), or "*." followed by such a host name of at least two labels:
 *     "*.example.com" matches any host that ends in ".example.com" with one or more labels
 *     before it ("a.example.com", "a.b.example.com"), never "example.com" itself; "*.com" is
 *     refused. path_prefix is canonicalised the same way at load (a prefix resource.h refuses
 *     is refused) and stored canonical.
 *
 * Matching a request (sworn_vault_release) sees only the canonical form of its resource
 * (sworn_resource_canon): a resource that has none is never released for. Then the scheme and
 * port are equal, the host is equal (or matches the wildcard as above), and when path_prefix is
 * set the canonical path (the part before any '?') matches it on a segment boundary: a prefix
 * ending in "/" matches paths that start with it ("/repos/" matches "/repos/x", not "/repos");
 * any other prefix matches the path equal to it or starting with it followed by "/" ("/repos"
 * matches "/repos" and "/repos/x", not "/reposx"). Dot segments are removed before matching
 * ("/repos/x/../y" is "/repos/y"; "/repos/../admin" is "/admin"), and %2F, %5C, '\', double
 * encoding and the rest resource.h refuses never match.
 *
 * Secrets: every value is kept in its own page-aligned allocation, locked with mlock where the
 * process may (RLIMIT_MEMLOCK), and wiped before it is freed; the file's bytes and json-c's copies
 * are wiped after parsing (best effort: json-c's tokener may have copied a string into a buffer
 * that it frees without wiping). Values never appear in error messages. json-c keeps the last of
 * two equal keys in one object; the vault cannot see the first.
 *
 * Thread safety: a vault has a mutex inside; release, lookup and mint may be called from any
 * threads. A release struct belongs to its caller.
 * Errors: -1 with sworn_err set (common/err.h).
 */
#ifndef SWORN_VAULT_H
#define SWORN_VAULT_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

#define SWORN_VAULT_FILE_MAX (1024u * 1024u)
#define SWORN_VAULT_MAX_CREDENTIALS 4096u
#define SWORN_VAULT_ID_MAX 128u
#define SWORN_VAULT_VALUE_MAX 16384u
#define SWORN_VAULT_NAME_MAX 256u    /* header and query names */
#define SWORN_VAULT_SYMBOLIC_MIN 36u /* "sym_" + 32 */
#define SWORN_VAULT_SYMBOLIC_MAX 255u
#define SWORN_VAULT_MINTED_LEN 47u /* "sym_" + 43 base64url characters of 32 random bytes */
#define SWORN_VAULT_HASH_LEN 32u   /* SHA-256 of a value */

struct sworn_vault;

struct sworn_vault_release { /* what an allow carries to the proxy */
    char id[SWORN_VAULT_ID_MAX + 1];
    char header_name[SWORN_VAULT_NAME_MAX + 1]; /* or "" */
    char query_name[SWORN_VAULT_NAME_MAX + 1];  /* or "" */
    uint8_t *value;   /* in locked memory (mlock where permitted); wiped by */
    size_t value_len; /* sworn_vault_release_wipe */
    uint8_t value_sha256[SWORN_VAULT_HASH_LEN]; /* what the log records */
};

/*
 * Load the vault file at path. OUT: *out, to free with sworn_vault_free. Returns 0, or -1 with
 * sworn_err set (SWORN_ERR_NOTFOUND, SWORN_ERR_IO for the file's kind, mode or owner,
 * SWORN_ERR_RANGE for its size, SWORN_ERR_FORMAT for its content) and *out untouched.
 */
int sworn_vault_load(const char *path, struct sworn_vault **out);

/* Wipe every value and free the vault; NULL is a no-op. */
void sworn_vault_free(struct sworn_vault *v);

/*
 * Release credential `id` for req: returns 0 and fills out when the credential exists,
 * req->principal->id is allowed, the destination (scheme, host, port, path) is in one of its
 * destinations, and -- when req->context->credential_token_sha256 is set (non-empty) -- that hash
 * equals SHA-256 of this credential's symbolic token (compared in constant time). When the token
 * is instead that of a credential minted from `id` (sworn_vault_mint: "<id>.oauth.<n>", the same
 * scope), that credential is the one released, after the same checks. Returns 1 (not
 * an error; out untouched, *why set to a static reason string) when any of those does not hold;
 * -1 on error (req without principal or resource, out of memory), out untouched.
 * OUT: out->value is a fresh locked allocation: the caller must call sworn_vault_release_wipe.
 */
int sworn_vault_release(const struct sworn_vault *v, const char *id,
                        const Sworn__V1__AuthorizationRequest *req, struct sworn_vault_release *out,
                        const char **why);

/* Wipe and free r->value and zero all of r; safe on a zeroed struct and twice. */
void sworn_vault_release_wipe(struct sworn_vault_release *r);

/*
 * Which credential does a presented symbolic token hash name? Copies its id into id_out
 * (129 bytes); 0 found, 1 not found. Every credential is compared in constant time.
 */
int sworn_vault_lookup_token(const struct sworn_vault *v, const uint8_t token_sha256[32],
                             char id_out[129]);

/*
 * OAuth token response interception: store a real token value as a new credential that inherits
 * the scope (header/query, principals, destinations) of credential `from_id`, mint a fresh random
 * symbolic token (RAND_bytes, "sym_" + 43 base64url chars), and rewrite the vault file atomically
 * (common/fileio.h sworn_file_replace, mode 0600) before returning. OUT: new id
 * ("<from_id>.oauth.<n>", n the smallest positive number not yet used) and the symbolic token
 * (NUL-terminated). real must satisfy the rules for a value. Returns 0 or -1 (on -1 nothing
 * changed, on disk or in memory, and the error never contains the value).
 */
int sworn_vault_mint(struct sworn_vault *v, const char *from_id, const uint8_t *real,
                     size_t real_len, char new_id[129], char symbolic[64]);

#endif
