/*
 * p_sni.c -- see p_sni.h. The parser reads like RFC 8446 section 4.1.2: each vector's length is
 * read, checked against its bounds and against what is left of the enclosing vector, and then the
 * vector is read through a sworn_buf of its own, so nothing is read past the vector that holds it.
 */
#include "p_sni.h"

#include <string.h>

#include "buf.h"

#define CONTENT_HANDSHAKE 22u
#define HANDSHAKE_CLIENT_HELLO 1u
#define HANDSHAKE_HEADER_LEN 4u
#define EXT_SERVER_NAME 0u
#define EXT_ALPN 16u
#define NAME_TYPE_HOST 0u
#define RANDOM_LEN 32u
#define SESSION_ID_MAX 32u
#define LABEL_MAX 63u

/* Fail with a static sentence. */
#define REFUSE(sentence)                                                                           \
    do {                                                                                           \
        *why = (sentence);                                                                         \
        return -1;                                                                                 \
    } while (0)

/* A legacy version 0x03 0x01..0x03 (TLS 1.0 to 1.2 spellings; TLS 1.3 uses 0x0303 here). */
static int legacy_version_ok(uint8_t major, uint8_t minor)
{
    return major == 3 && minor >= 1 && minor <= 3;
}

int sworn_sni_looks_tls(const uint8_t *p, size_t len)
{
    if (len >= 1 && p[0] != CONTENT_HANDSHAKE)
        return 0;
    if (len >= 2 && p[1] != 3)
        return 0;
    if (len >= 3 && !legacy_version_ok(p[1], p[2]))
        return 0;
    return 1;
}

/*
 * Take a vector whose length is a big-endian field of width bytes (1 or 2) and which must hold
 * min..max bytes: *sub reads exactly its contents.
 */
static int get_vector(struct sworn_buf *b, unsigned width, size_t min, size_t max,
                      struct sworn_buf *sub)
{
    const uint8_t *ptr;
    size_t n;

    if (width == 1) {
        uint8_t v;

        if (sworn_buf_get_u8(b, &v) < 0)
            return -1;
        n = v;
    } else {
        uint16_t v;

        if (sworn_buf_get_u16be(b, &v) < 0)
            return -1;
        n = v;
    }
    if (n < min || n > max || sworn_buf_get_ptr(b, n, &ptr) < 0)
        return -1;
    *sub = sworn_buf_init(ptr, n);
    return 0;
}

/* A host_name: LDH and dots, labels 1..63, one trailing dot tolerated. Copies it lower-cased. */
static int take_host_name(const uint8_t *name, size_t n, struct sworn_sni *out, const char **why)
{
    size_t label = 0;

    if (n < 1 || n > SWORN_SNI_NAME_MAX)
        REFUSE("the SNI host name is empty or longer than 255 bytes");
    for (size_t i = 0; i < n; i++) {
        uint8_t c = name[i];

        if (c == '.') {
            if (label == 0)
                REFUSE("the SNI host name has an empty label");
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '-') {
            if (++label > LABEL_MAX)
                REFUSE("the SNI host name has a label longer than 63 bytes");
        } else {
            REFUSE("the SNI host name holds a byte other than a letter, digit, '-' or '.'");
        }
        out->name[i] = (char)((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    }
    out->name[n] = '\0';
    out->has_sni = 1;
    return 0;
}

/* The server_name extension's body (RFC 6066 section 3). */
static int parse_server_name(struct sworn_buf ext, struct sworn_sni *out, const char **why)
{
    struct sworn_buf list, name;
    uint8_t type;

    if (get_vector(&ext, 2, 1, SIZE_MAX, &list) < 0 || sworn_buf_remaining(&ext) != 0)
        REFUSE("the SNI extension's name list does not fill it exactly");
    if (sworn_buf_get_u8(&list, &type) < 0 || type != NAME_TYPE_HOST)
        REFUSE("the SNI entry is not of type host_name");
    if (get_vector(&list, 2, 0, SIZE_MAX, &name) < 0)
        REFUSE("the SNI host name runs past its list");
    if (sworn_buf_remaining(&list) != 0)
        REFUSE("the SNI list holds more than one name");
    return take_host_name(name.p, name.len, out, why);
}

/* The ALPN extension's body (RFC 7301 section 3.1). */
static int parse_alpn(struct sworn_buf ext, struct sworn_sni *out, const char **why)
{
    struct sworn_buf list;

    if (get_vector(&ext, 2, 2, SIZE_MAX, &list) < 0 || sworn_buf_remaining(&ext) != 0)
        REFUSE("the ALPN extension's protocol list does not fill it exactly");
    while (sworn_buf_remaining(&list) > 0) {
        struct sworn_buf proto;

        if (get_vector(&list, 1, 1, 255, &proto) < 0)
            REFUSE("an ALPN protocol name is empty or runs past its list");
        if (proto.len == 8 && memcmp(proto.p, "http/1.1", 8) == 0)
            out->offers_http11 = 1;
        if (proto.len == 2 && memcmp(proto.p, "h2", 2) == 0)
            out->offers_h2 = 1;
    }
    return 0;
}

/* The extensions block, which fills the rest of the ClientHello body. */
static int parse_extensions(struct sworn_buf exts, struct sworn_sni *out, const char **why)
{
    /* One bit per extension type: no allocation, no quadratic scan however many there are. */
    uint64_t seen[65536 / 64];

    memset(seen, 0, sizeof(seen));
    while (sworn_buf_remaining(&exts) > 0) {
        struct sworn_buf body;
        uint16_t type;

        if (sworn_buf_get_u16be(&exts, &type) < 0 || get_vector(&exts, 2, 0, SIZE_MAX, &body) < 0)
            REFUSE("an extension runs past the extensions block");
        if (seen[type / 64] & ((uint64_t)1 << (type % 64)))
            REFUSE("the ClientHello holds an extension twice");
        seen[type / 64] |= (uint64_t)1 << (type % 64);
        if (type == EXT_SERVER_NAME && parse_server_name(body, out, why) < 0)
            return -1;
        if (type == EXT_ALPN && parse_alpn(body, out, why) < 0)
            return -1;
    }
    return 0;
}

/* The ClientHello body (RFC 8446 section 4.1.2), exactly the bytes of b. */
static int parse_client_hello(struct sworn_buf b, struct sworn_sni *out, const char **why)
{
    struct sworn_buf skip, exts;
    uint8_t major, minor;
    const uint8_t *ptr;

    if (sworn_buf_get_u8(&b, &major) < 0 || sworn_buf_get_u8(&b, &minor) < 0 ||
        !legacy_version_ok(major, minor))
        REFUSE("the ClientHello's legacy version is not TLS 1.0 to 1.2");
    if (sworn_buf_get_ptr(&b, RANDOM_LEN, &ptr) < 0)
        REFUSE("the ClientHello ends inside its random");
    if (get_vector(&b, 1, 0, SESSION_ID_MAX, &skip) < 0)
        REFUSE("the ClientHello's session id is longer than 32 bytes or runs past it");
    if (get_vector(&b, 2, 2, SIZE_MAX, &skip) < 0 || skip.len % 2 != 0)
        REFUSE("the ClientHello's cipher suite list is empty, odd or runs past it");
    if (get_vector(&b, 1, 1, SIZE_MAX, &skip) < 0)
        REFUSE("the ClientHello's compression method list is empty or runs past it");
    if (sworn_buf_remaining(&b) == 0)
        return 0; /* no extensions (allowed before TLS 1.3): no SNI, no ALPN */
    if (get_vector(&b, 2, 0, SIZE_MAX, &exts) < 0 || sworn_buf_remaining(&b) != 0)
        REFUSE("the ClientHello's extensions block does not fill the rest of it exactly");
    return parse_extensions(exts, out, why);
}

int sworn_sni_peek(const uint8_t *p, size_t len, struct sworn_sni *out, const char **why)
{
    struct sworn_buf b = sworn_buf_init(p, len), body;
    uint8_t type, major, minor, hs_type, hs_len_bytes[3];
    uint16_t record_len;
    const uint8_t *ptr;
    size_t hs_len;

    memset(out, 0, sizeof(*out));
    if (!sworn_sni_looks_tls(p, len))
        REFUSE("the tunnel's first bytes are not a TLS handshake record");
    if (len < SWORN_SNI_HEADER_LEN)
        return 1;
    (void)sworn_buf_get_u8(&b, &type);
    (void)sworn_buf_get_u8(&b, &major);
    (void)sworn_buf_get_u8(&b, &minor);
    (void)sworn_buf_get_u16be(&b, &record_len);
    if (record_len < 1 || record_len > SWORN_SNI_RECORD_MAX)
        REFUSE("the first TLS record's length is 0 or over 16384");
    if (record_len < HANDSHAKE_HEADER_LEN)
        REFUSE("the first TLS record is too short for a handshake header");
    /* The handshake header, as far as it has arrived, is judged before the rest. */
    if (len >= SWORN_SNI_HEADER_LEN + 1 && p[SWORN_SNI_HEADER_LEN] != HANDSHAKE_CLIENT_HELLO)
        REFUSE("the first handshake message is not a ClientHello");
    if (len < SWORN_SNI_HEADER_LEN + HANDSHAKE_HEADER_LEN)
        return 1;
    (void)sworn_buf_get_u8(&b, &hs_type);
    (void)sworn_buf_get_bytes(&b, hs_len_bytes, sizeof(hs_len_bytes));
    hs_len = (size_t)hs_len_bytes[0] << 16 | (size_t)hs_len_bytes[1] << 8 | hs_len_bytes[2];
    if (hs_len > (size_t)record_len - HANDSHAKE_HEADER_LEN)
        REFUSE("the ClientHello is fragmented over several TLS records");
    if (hs_len < (size_t)record_len - HANDSHAKE_HEADER_LEN)
        REFUSE("the first TLS record holds more than the ClientHello");
    if (len < SWORN_SNI_HEADER_LEN + (size_t)record_len)
        return 1;
    (void)sworn_buf_get_ptr(&b, hs_len, &ptr); /* present: checked just above */
    body = sworn_buf_init(ptr, hs_len);
    if (parse_client_hello(body, out, why) < 0) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}
