/*
 * sig_base.h -- RFC 9421 (HTTP Message Signatures) signature bases, and sworn's one profile of
 * them (docs/formats.md section 13).
 *
 * Shared on purpose by the recording side (decisiond builds the base its signer signs; the
 * signer checks a base's shape) and by the independent verifier, which compiles this very source
 * in its own build (verifier/CMakeLists.txt): both must produce the same bytes, and the bytes are
 * a standard's, checked against RFC 9421 appendix B (tests/unit/test_httpsig_base.c) and against
 * an implementation no one here wrote (the npm http-message-signatures package). So this file
 * depends on libc alone: no common/, no OpenSSL.
 *
 * The general part (section 2.5 of RFC 9421): a list of covered components, each its serialized
 * component identifier (an sf-string with optional parameters, e.g.
 * "\"@query-param\";name=\"Pet\"") and its value, and an ordered list of signature parameters among
 * created, expires, nonce, alg, keyid and tag. The base is one line per component `<identifier>:
 * <value>` then the line
 * `"@signature-params": <params>`, lines joined by LF, no LF at the end.
 *
 * Bounded and strict: a base is at most SWORN_SIGBASE_MAX bytes, at most
 * SWORN_SIGBASE_COMPONENTS_MAX components; an identifier must be a lower-case sf-string (with
 * sf-parameters made of lower-case keys and sf-string values); a value must be printable ASCII
 * (0x20..0x7e: no CR, LF, NUL, nor any byte a verifier could read otherwise); a string parameter
 * printable ASCII without '"' or '\\' (sworn never needs the escapes); an integer parameter 0 ..
 * 10^15 - 1 (RFC 8941 sf-integer). Anything else is refused with a static sentence in *why.
 *
 * Thread safety: no state.
 */
#ifndef SWORN_SIG_BASE_H
#define SWORN_SIG_BASE_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_SIGBASE_MAX 16384            /* bytes in one base (the signer's bound too) */
#define SWORN_SIGBASE_COMPONENTS_MAX 16    /* covered components in one signature */
#define SWORN_SIGBASE_PARAMS_TEXT_MAX 1024 /* the @signature-params value */

/* One covered component: its serialized identifier and its value (value_len bytes). */
struct sworn_sigbase_item {
    const char *id;
    const char *value;
    size_t value_len;
};

/* One signature parameter, in the order given: name is "created", "expires", "nonce", "alg",
 * "keyid" or "tag"; created and expires are integers (ival), the others strings (sval). */
struct sworn_sigbase_param {
    const char *name;
    int64_t ival;
    const char *sval;
};

/*
 * The @signature-params value: the inner list of the items' identifiers, then ";name=value" for
 * each parameter, into out (capacity cap, NUL-terminated). OUT: *len (without the NUL).
 * Returns 0, or -1 with *why.
 */
int sworn_sigbase_params_text(const struct sworn_sigbase_item *items, size_t n,
                              const struct sworn_sigbase_param *params, size_t np, char *out,
                              size_t cap, size_t *len, const char **why);

/*
 * The signature base of the items with the @signature-params value params_text (params_len
 * bytes), into out (capacity cap; not NUL-terminated). OUT: *len. Returns 0, or -1 with *why.
 */
int sworn_sigbase_build(const struct sworn_sigbase_item *items, size_t n, const char *params_text,
                        size_t params_len, uint8_t *out, size_t cap, size_t *len, const char **why);

/*
 * Whether msg[0..len) has the shape of a base the signer may sign for the http-message purpose
 * (docs/formats.md section 10): 1..SWORN_SIGBASE_MAX bytes, starts with "\"@", its last line
 * starts with "\"@signature-params\": ", no LF at the end, and no NUL, CR or 0xFF byte anywhere.
 * Such bytes are never a checkpoint body (which ends with LF) nor another purpose's TBS (which
 * starts with 0xFF). Returns 0, or -1 with *why.
 */
int sworn_sigbase_check_shape(const uint8_t *msg, size_t len, const char **why);

/* --- sworn's profile ------------------------------------------------------------------------ */

#define SWORN_HTTPSIG_ALG "ecdsa-p256-sha256"
#define SWORN_HTTPSIG_TAG "sworn"
#define SWORN_HTTPSIG_LABEL "sworn" /* the dictionary key in Signature-Input and Signature */
#define SWORN_HTTPSIG_KEYID_HEX 64  /* the key id of docs/keys.md, lower-case hex */

/* The request a sworn signature covers: what decisiond decided, in canonical form. */
struct sworn_httpsig_request {
    const char *method;         /* Context.method, e.g. "POST" (1..32 bytes) */
    const char *scheme;         /* canonical: http, https, ws or wss */
    const char *host;           /* canonical host ("api.example", "10.0.0.1", "[::1]") */
    unsigned port;              /* 1..65535 */
    const char *path;           /* canonical path with its query: "/v1/x?a=b" */
    const uint8_t *body_sha256; /* Context.body_sha256 (32 bytes), or NULL: no body */
    const uint8_t *leaf;        /* the entry's RFC 9162 leaf hash, 32 bytes */
};

/*
 * Whether an operation on this canonical scheme with this method gets a sworn signature rather
 * than a digest receipt: a method is present and the scheme is http, https, ws or wss.
 */
int sworn_httpsig_applies(const char *scheme, const char *method);

/*
 * sworn's base for r (docs/formats.md section 13): the components "@method", "@authority",
 * "@path", "@query", "content-digest" (only with a body) and "sworn-entry", then the parameters
 * created, keyid (keyid_hex, 64 lower-case hex digits), alg "ecdsa-p256-sha256" and tag "sworn".
 * Writes the base into base (capacity cap) and the @signature-params value, NUL-terminated, into
 * params (capacity params_cap). OUT: *base_len, *params_len. Returns 0, or -1 with *why.
 */
int sworn_httpsig_base(const struct sworn_httpsig_request *r, int64_t created,
                       const char *keyid_hex, uint8_t *base, size_t cap, size_t *base_len,
                       char *params, size_t params_cap, size_t *params_len, const char **why);

/*
 * Whether msg[0..len) is a base of sworn's profile made for the key whose id is keyid_hex (64
 * lower-case hex digits): exactly the lines "@method", "@authority", "@path", "@query", an
 * optional "content-digest" ("sha-256=:" 44 base64 characters ":"), "sworn-entry" (":" 44 base64
 * characters ":") and "@signature-params" with the inner list of exactly those components, then
 * ;created=<digits>;keyid="<keyid_hex>";alg="ecdsa-p256-sha256";tag="sworn" and nothing else;
 * every value 1.. bytes of printable ASCII. The signer checks it on top of the shape, so the key
 * signs no RFC 9421 base but sworn's own, under its own key id (a compromised engine cannot have
 * it sign a signature of another label, tag, key id or set of components). Returns 0, or -1
 * with *why.
 */
int sworn_httpsig_check_profile(const uint8_t *msg, size_t len, const char *keyid_hex,
                                const char **why);

/* The Content-Digest value of a body's SHA-256 (RFC 9530): "sha-256=:<base64>:", into out. */
void sworn_httpsig_content_digest(const uint8_t sha256[32], char out[64]);

/* The Sworn-Entry value of a leaf hash (an RFC 8941 byte sequence): ":<base64>:", into out. */
void sworn_httpsig_entry_value(const uint8_t leaf[32], char out[64]);

/* Standard base64 (RFC 4648 section 4, padded) of in[0..n) into out (capacity at least
 * 4 * ((n + 2) / 3) + 1), NUL-terminated. Returns the length. */
size_t sworn_httpsig_base64(const uint8_t *in, size_t n, char *out);

#endif
