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
 *   - a credential: exactly the keys id, symbolic, value, one of header/query/form, principals,
 *     destinations;
 *   - id: 1..128 bytes of [A-Za-z0-9._-], unique in the vault;
 *   - symbolic: "sym_" followed by 32..251 characters of [A-Za-z0-9_-], unique in the vault;
 *   - value: 1..16384 bytes of UTF-8 without control characters (C0, DEL, C1) other than tab (no
 * CR, LF or NUL: the value goes into a header or a query and must not split it);
 *   - header: an HTTP field name (RFC 9110 token characters), 1..256 bytes, stored lower-case;
 *     query: a query parameter name of 1..256 unreserved characters [A-Za-z0-9._~-];
 *     form: an application/x-www-form-urlencoded body parameter name of the same characters
 *     (the proxy puts the value there, percent-encoded: an OAuth client_secret or refresh_token);
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
 *     refused. path_prefix is canonicalised the same way at load (a prefix resource.h refuses,
 *     or one holding ';', is refused) and stored canonical.
 *
 * Matching a request (sworn_vault_release) sees only the canonical form of its resource
 * (sworn_resource_canon): a resource that has none is never released for. Then the scheme and
 * port are equal, the host is equal (or matches the wildcard as above), and when path_prefix is
 * set the canonical path (the part before any '?'; for a path with parameters, both without
 * them and as written, as the policy's allow rules require: sworn_resource_under_prefix)
 * matches it on a segment boundary: a prefix
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
 * Minted credentials (OAuth tokens, sworn_vault_mint_begin): a credential "<X>.oauth.<n>" (n
 * decimal) counts as minted from X; its family's root is the id with every such suffix taken
 * off ("github.oauth.1.oauth.2", which an older decisiond minted, belongs to "github"). A root
 * keeps at most SWORN_VAULT_MINTED_MAX minted credentials: a mint that would exceed that replaces
 * the oldest members of the family first (the earliest in the vault's order, which is the order
 * they were minted in), at most SWORN_VAULT_REPLACED_MAX of them per mint, and names the replaced
 * ids, so that one credential's exchanges cannot fill the vault.
 *
 * Thread safety: a vault has two mutexes inside. The release lock guards the credentials in
 * memory: release and lookup take it for their scan and copy, and a mint takes it only for the
 * swap of one array pointer. The mint lock serialises mints, from sworn_vault_mint_begin to its
 * commit or abort; the vault file is written under the mint lock only, so a release never waits
 * for a write or an fsync of the file. All functions may be called from any thread; a mint's
 * begin and its commit or abort must run on one thread. A release struct belongs to its caller.
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
#define SWORN_VAULT_MINTED_LEN 47u    /* "sym_" + 43 base64url characters of 32 random bytes */
#define SWORN_VAULT_HASH_LEN 32u      /* SHA-256 of a value */
#define SWORN_VAULT_MINTED_MAX 8u     /* minted credentials kept per root credential */
#define SWORN_VAULT_MINT_BATCH_MAX 8u /* tokens stored by one mint (TokenExchange.tokens) */
#define SWORN_VAULT_REPLACED_MAX 16u  /* credentials one mint may replace */

struct sworn_vault;
struct sworn_vault_cred;
struct sworn_resource_canonical; /* policy/resource.h */

struct sworn_vault_release { /* what an allow carries to the proxy */
    char id[SWORN_VAULT_ID_MAX + 1];
    char header_name[SWORN_VAULT_NAME_MAX + 1]; /* or "" */
    char query_name[SWORN_VAULT_NAME_MAX + 1];  /* or "" */
    char form_name[SWORN_VAULT_NAME_MAX + 1];   /* or "": a form body parameter */
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

/*
 * sworn_vault_release on canon, the canonical form of exactly req->resource that the caller made
 * once for the whole decision (policy/resource.h, struct sworn_resource_canonical: the caller
 * owns it, this only reads it). The same checks, in the same order; a resource that has no
 * canonical form is refused with its reason. A canon made from another resource than
 * req->resource (compared by pointer) is an error: -1 (SWORN_ERR_ARG), out untouched.
 */
int sworn_vault_release_canonical(const struct sworn_vault *v, const char *id,
                                  const Sworn__V1__AuthorizationRequest *req,
                                  const struct sworn_resource_canonical *canon,
                                  struct sworn_vault_release *out, const char **why);

/* Wipe and free r->value and zero all of r; safe on a zeroed struct and twice. */
void sworn_vault_release_wipe(struct sworn_vault_release *r);

/*
 * Which credential does a presented symbolic token hash name? Copies its id into id_out
 * (129 bytes); 0 found, 1 not found. Every credential is compared in constant time.
 */
int sworn_vault_lookup_token(const struct sworn_vault *v, const uint8_t token_sha256[32],
                             char id_out[129]);

/* One real token to store (sworn_vault_mint_begin). */
struct sworn_vault_token {
    const uint8_t *value; /* must satisfy the rules for a value */
    size_t len;
    /* Where the minted credential goes: NULL both (inherit the header/query/form of the
     * credential it is minted from), or exactly one of a header name (lower-case RFC 9110 token)
     * and a form body parameter name (unreserved characters), 1..SWORN_VAULT_NAME_MAX bytes. */
    const char *header;
    const char *form;
};

/* What a mint stores for one token (filled by sworn_vault_mint_begin). */
struct sworn_vault_minted {
    char id[SWORN_VAULT_ID_MAX + 1];               /* "<from_id>.oauth.<n>" */
    char symbolic[SWORN_VAULT_MINTED_LEN + 1];     /* secret until handed out: wipe it */
    uint8_t value_sha256[SWORN_VAULT_HASH_LEN];    /* SHA-256 of the real value */
    uint8_t symbolic_sha256[SWORN_VAULT_HASH_LEN]; /* SHA-256 of the symbolic token */
};

/*
 * One mint in progress, from sworn_vault_mint_begin to sworn_vault_mint_commit or
 * sworn_vault_mint_abort. The caller owns the struct; the public fields stay valid after the
 * commit or abort, and the caller wipes the struct (sworn_memzero) when done with the symbolic
 * tokens.
 */
struct sworn_vault_mint {
    /* OUT of begin: what the commit will store and what it will replace, in order. */
    size_t n;
    struct sworn_vault_minted minted[SWORN_VAULT_MINT_BATCH_MAX];
    size_t n_replaced;
    char replaced[SWORN_VAULT_REPLACED_MAX][SWORN_VAULT_ID_MAX + 1];
    /* Private to vault.c. */
    struct sworn_vault *v;
    struct sworn_vault_cred *next; /* the credentials after the commit (shallow copies + new) */
    size_t n_next;
    size_t replaced_at[SWORN_VAULT_REPLACED_MAX]; /* their indices in the current array */
};

/*
 * OAuth token response interception, phase 1: take the mint lock (held until the commit or the
 * abort), and prepare n (1..SWORN_VAULT_MINT_BATCH_MAX) new credentials, one per token, each
 * inheriting the scope (header/query, principals, destinations) of credential `from_id`, with a
 * fresh random symbolic token (RAND_bytes, "sym_" + 43 base64url chars) and the id
 * "<root>.oauth.<k>", root being from_id's family root (a refresh from "github.oauth.3" mints
 * "github.oauth.<k>", so ids do not grow along a refresh chain), k the smallest positive number
 * that no credential of the vault and no earlier token of this mint uses, so no minted id equals
 * a replaced one; choose the members of
 * from_id's family the cap makes it replace (see the top of this file). The replaced credentials
 * release nothing from now on ("the credential is being replaced by a newer token"), so that no
 * release can happen between the CredentialsMinted entry that names them and the commit; an
 * abort gives them back. Nothing else changes yet, in memory or on disk. Returns 0 with m filled,
 * or -1 (SWORN_ERR_ARG, SWORN_ERR_FORMAT for a bad value, never naming it, SWORN_ERR_NOTFOUND,
 * SWORN_ERR_RANGE, SWORN_ERR_NOMEM, SWORN_ERR_CRYPTO) with the lock released and m zeroed.
 */
int sworn_vault_mint_begin(struct sworn_vault *v, const char *from_id,
                           const struct sworn_vault_token *tokens, size_t n,
                           struct sworn_vault_mint *m);

/*
 * Phase 2: rewrite the vault file with the new credentials and without the replaced ones
 * (common/fileio.h sworn_file_replace: atomically, fsynced, mode 0600), holding only the mint
 * lock; then, under the release lock, swap the credentials in memory. Returns 0: from now on the
 * new symbolic tokens release their values and the replaced credentials are gone. Or -1
 * (the file could not be written; SWORN_ERR_RANGE when it would exceed SWORN_VAULT_FILE_MAX):
 * nothing was stored, on disk or in memory, but the replaced credentials release nothing for the
 * rest of this process (the mint's entry, recorded before the commit, names them replaced; the
 * file still holds them, so a restart gives them back). Either way the mint lock is released and
 * the mint is over.
 */
int sworn_vault_mint_commit(struct sworn_vault_mint *m);

/* Phase 2 instead: drop the prepared credentials (wiped) and release the mint lock. */
void sworn_vault_mint_abort(struct sworn_vault_mint *m);

/*
 * One token at once: begin, then commit. OUT: the new id and the symbolic token
 * (NUL-terminated). Returns 0 or -1 as the two phases (on -1 nothing changed, and the error
 * never contains the value).
 */
int sworn_vault_mint(struct sworn_vault *v, const char *from_id, const uint8_t *real,
                     size_t real_len, char new_id[129], char symbolic[64]);

/*
 * For tests: hook(arg) runs in every commit right before the file is written, with the mint lock
 * held and the release lock not held (NULL: none). Set it before any mint runs.
 */
void sworn_vault_set_write_hook(struct sworn_vault *v, void (*hook)(void *arg), void *arg);

#endif
