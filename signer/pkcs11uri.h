/*
 * pkcs11uri.h -- RFC 7512 PKCS#11 URIs, the subset that names one signing key.
 *
 *     pkcs11:<attr>=<value>[;<attr>=<value>]...
 * Path attributes understood: token, manufacturer, serial, model (the token), object (CKA_LABEL),
 * id (CKA_ID), type (must be "private" when present). Values are percent-encoded (RFC 3986
 * pchar: letters, digits, and -._~!$&'()*+,=:@ appear as is; anything else as %XX).
 *
 * Refused, with a clear error: unknown or repeated attributes, empty values, bad percent escapes,
 * values longer than the PKCS#11 field they match, and every query attribute (after '?'):
 * pin-value and pin-source would put the PIN, or its location, into configuration that is not a
 * secret file, and module-name/module-path belong to the signer configuration, not the key name.
 *
 * No allocation; thread-safe.
 */
#ifndef SWORN_PKCS11URI_H
#define SWORN_PKCS11URI_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_PKCS11_URI_MAX 1024
#define SWORN_PKCS11_LABEL_MAX 32 /* CK_TOKEN_INFO label, manufacturerID */
#define SWORN_PKCS11_SHORT_MAX 16 /* CK_TOKEN_INFO model, serialNumber */
#define SWORN_PKCS11_OBJECT_MAX 255
#define SWORN_PKCS11_ID_MAX 64

struct sworn_pkcs11_uri {
    /* NUL-terminated; empty when the attribute is absent. */
    char token[SWORN_PKCS11_LABEL_MAX + 1];
    char manufacturer[SWORN_PKCS11_LABEL_MAX + 1];
    char serial[SWORN_PKCS11_SHORT_MAX + 1];
    char model[SWORN_PKCS11_SHORT_MAX + 1];
    char object[SWORN_PKCS11_OBJECT_MAX + 1];
    uint8_t id[SWORN_PKCS11_ID_MAX];
    size_t id_len;
    int has_id;
};

/*
 * Parse a URI of exactly len bytes. OUT: *out. Returns 0, or -1 with sworn_err set
 * (SWORN_ERR_FORMAT). A URI that names neither an object nor an id is refused: a signing key
 * must be named, never guessed.
 */
int sworn_pkcs11_uri_parse(const char *uri, size_t len, struct sworn_pkcs11_uri *out);

#endif
