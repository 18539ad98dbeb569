/*
 * pkcs11uri.c -- the RFC 7512 subset of pkcs11uri.h.
 */
#include "pkcs11uri.h"

#include <string.h>

#include "encoding.h"
#include "err.h"

/* RFC 3986 unreserved characters and the sub-delims and ':' '@' that RFC 7512 allows in values. */
static int is_plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-._~!$&'()*+,=:@", c) != NULL;
}

/*
 * Percent-decode v[0..len) into out (capacity cap bytes). OUT: *out_len.
 * '/' and '?' ';' cannot appear unescaped: the caller split on ';' already, '?' was refused.
 */
static int decode(const char *name, const char *v, size_t len, uint8_t *out, size_t cap,
                  size_t *out_len)
{
    size_t n = 0;

    if (len == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s has an empty value", name);
    for (size_t i = 0; i < len; i++) {
        uint8_t byte;

        if (v[i] == '%') {
            if (len - i < 3)
                return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s has a cut %%-escape", name);
            if (sworn_hex_digit(v[i + 1]) < 0 || sworn_hex_digit(v[i + 2]) < 0)
                return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s has a bad %%-escape", name);
            byte = (uint8_t)(sworn_hex_digit(v[i + 1]) << 4 | sworn_hex_digit(v[i + 2]));
            i += 2;
        } else if (is_plain(v[i])) {
            byte = (uint8_t)v[i];
        } else {
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "pkcs11 URI: %s has a character that must be %%-escaped", name);
        }
        if (n == cap)
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s is longer than %zu bytes", name,
                                 cap);
        out[n++] = byte;
    }
    *out_len = n;
    return 0;
}

/* Decode into a NUL-terminated text field of capacity max + 1, refusing NUL bytes inside. */
static int decode_text(const char *name, const char *v, size_t len, char *out, size_t max)
{
    size_t n = 0;

    if (decode(name, v, len, (uint8_t *)out, max, &n) < 0)
        return -1;
    if (memchr(out, '\0', n) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s contains a NUL byte", name);
    out[n] = '\0';
    return 0;
}

int sworn_pkcs11_uri_parse(const char *uri, size_t len, struct sworn_pkcs11_uri *out)
{
    static const char scheme[] = "pkcs11:";
    struct sworn_pkcs11_uri r;
    unsigned seen = 0;
    size_t pos;

    memset(&r, 0, sizeof(r));
    if (len > SWORN_PKCS11_URI_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI longer than %d bytes",
                             SWORN_PKCS11_URI_MAX);
    if (len < sizeof(scheme) - 1 || memcmp(uri, scheme, sizeof(scheme) - 1) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI must start with pkcs11:");
    if (memchr(uri, '?', len) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "pkcs11 URI: query attributes (pin-value, pin-source, module-path, "
                             "...) are refused: the PIN comes from the PIN file and the module "
                             "from the signer configuration");
    pos = sizeof(scheme) - 1;
    while (pos < len) {
        const char *attr = uri + pos;
        const char *end = memchr(attr, ';', len - pos);
        size_t attr_len = end ? (size_t)(end - attr) : len - pos;
        const char *eq = memchr(attr, '=', attr_len);
        size_t name_len, value_len;
        const char *value;
        static const char *const names[] = {"token",  "manufacturer", "serial", "model",
                                            "object", "id",           "type"};
        int which = -1;

        if (eq == NULL)
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: attribute without '='");
        name_len = (size_t)(eq - attr);
        value = eq + 1;
        value_len = attr_len - name_len - 1;
        for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
            if (strlen(names[i]) == name_len && memcmp(names[i], attr, name_len) == 0)
                which = i;
        if (which < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: unknown attribute \"%.*s\"",
                                 (int)(name_len > 32 ? 32 : name_len), attr);
        if (seen & (1u << which))
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: %s given twice", names[which]);
        seen |= 1u << which;
        switch (which) {
        case 0:
            SWORN_GUARD(decode_text("token", value, value_len, r.token, SWORN_PKCS11_LABEL_MAX));
            break;
        case 1:
            SWORN_GUARD(decode_text("manufacturer", value, value_len, r.manufacturer,
                                    SWORN_PKCS11_LABEL_MAX));
            break;
        case 2:
            SWORN_GUARD(decode_text("serial", value, value_len, r.serial, SWORN_PKCS11_SHORT_MAX));
            break;
        case 3:
            SWORN_GUARD(decode_text("model", value, value_len, r.model, SWORN_PKCS11_SHORT_MAX));
            break;
        case 4:
            SWORN_GUARD(decode_text("object", value, value_len, r.object, SWORN_PKCS11_OBJECT_MAX));
            break;
        case 5:
            SWORN_GUARD(decode("id", value, value_len, r.id, SWORN_PKCS11_ID_MAX, &r.id_len));
            r.has_id = 1;
            break;
        case 6:
            SWORN_ENSURE(value_len == 7 && memcmp(value, "private", 7) == 0, SWORN_ERR_FORMAT,
                         "pkcs11 URI: type must be private for a signing key");
            break;
        default:
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: unhandled attribute");
        }
        pos += attr_len + (end ? 1 : 0);
        if (end != NULL && pos == len)
            return sworn_err_set(SWORN_ERR_FORMAT, "pkcs11 URI: trailing ';'");
    }
    SWORN_ENSURE(r.object[0] != '\0' || r.has_id, SWORN_ERR_FORMAT,
                 "pkcs11 URI: name the key with object= or id=");
    *out = r;
    return 0;
fail:
    return -1;
}
