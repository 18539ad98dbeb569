/*
 * p_form.h -- a strict reader and rewriter of application/x-www-form-urlencoded bodies (WHATWG
 * URL Standard section 5, as RFC 6749 uses them for OAuth token requests and some token
 * responses): the proxy reads the symbolic token an agent presents in a token request's body,
 * puts a form credential (the vault's `form`) into it, and reads a form-encoded token response
 * (docs/proxy.md, "OAuth token endpoints").
 *
 * Syntax: the body is split at '&'; an empty piece is skipped (as WHATWG does); each other piece
 * is a name, optionally followed by '=' and a value (the first '=' ends the name). Name and value
 * are decoded: '+' is a space, "%XX" (two hex digits, any case) is the byte XX.
 * Refused (1 with *why a static sentence that holds no byte of the body):
 *   - a body longer than SWORN_PFORM_BODY_MAX bytes;
 *   - more than SWORN_PFORM_PARAMS_MAX parameters;
 *   - a '%' not followed by two hex digits;
 *   - a byte outside printable ASCII (0x21..0x7e) anywhere in the body (a space, a control, a
 *     non-ASCII byte: a form encoder escapes all of them);
 *   - a decoded name longer than SWORN_PFORM_NAME_MAX bytes, or holding a byte below 0x20 or 0x7f;
 *   - two parameters with the same decoded name (RFC 6749 section 3.1: "parameters MUST NOT be
 *     included more than once"; which one a server takes differs, so the proxy could judge one
 *     and the server use another). "refresh_token" and "refresh%5Ftoken" are one name.
 *
 * Memory: sworn_pform_parse allocates nothing (offsets into the caller's bytes);
 * sworn_pform_rewrite returns a malloc'd body. Pure computation otherwise; thread-safe.
 */
#ifndef SWORN_P_FORM_H
#define SWORN_P_FORM_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_PFORM_BODY_MAX 65536u /* bytes of a form body read */
#define SWORN_PFORM_PARAMS_MAX 64u  /* parameters in it */
#define SWORN_PFORM_NAME_MAX 256u   /* bytes of a decoded name */

struct sworn_pform_param {
    size_t off, len;             /* the whole piece "name[=value]" in the body */
    size_t value_off, value_len; /* the raw (encoded) value; 0, 0 when there is no '=' */
    int has_value;
    char name[SWORN_PFORM_NAME_MAX + 1]; /* decoded, NUL-terminated */
};

struct sworn_pform {
    struct sworn_pform_param p[SWORN_PFORM_PARAMS_MAX];
    size_t n;
};

/* Read body[0..len). OUT: *out. Returns 0, or 1 with *why set (out->n then 0). */
int sworn_pform_parse(const uint8_t *body, size_t len, struct sworn_pform *out, const char **why);

/* The parameter whose decoded name is name, or NULL. */
const struct sworn_pform_param *sworn_pform_find(const struct sworn_pform *f, const char *name);

/*
 * Decode p's value (of the body it was parsed from) into out (capacity cap). Returns the decoded
 * length, or -1 when it does not fit. The decoded value is at most value_len bytes.
 */
long sworn_pform_value(const uint8_t *body, const struct sworn_pform_param *p, uint8_t *out,
                       size_t cap);

/*
 * The body with parameter `name`'s value set to value[0..vlen), percent-encoded (every byte but
 * A-Z a-z 0-9 - . _ ~ as %XX): in the place of the parameter of that name when there is one,
 * else appended. Every other byte is kept. OUT: *out_len. Returns a malloc'd buffer (the caller
 * wipes and frees it: it holds a secret), or NULL (out of memory).
 */
uint8_t *sworn_pform_rewrite(const uint8_t *body, size_t len, const struct sworn_pform *f,
                             const char *name, const uint8_t *value, size_t vlen, size_t *out_len);

/* Is the Content-Type value v[0..n) application/x-www-form-urlencoded (any case, with or without
 * parameters such as charset)? 1 or 0. */
int sworn_pform_is_form_type(const char *v, size_t n);

#endif
