/*
 * encoding.c -- the strict encoders and decoders of encoding.h.
 */
#include "encoding.h"

#include "err.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The value of one base64 character, or -1 if it is not in the alphabet. */
static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

long sworn_base64_encode(const uint8_t *in, size_t in_len, char *out, size_t out_cap)
{
    size_t need = SWORN_BASE64_LEN(in_len) + 1;
    size_t o = 0;

    if (in_len > ((size_t)-1 / 4) - 3 || out_cap < need)
        return sworn_err_set(SWORN_ERR_RANGE, "base64: output buffer too small");
    for (size_t i = 0; i < in_len; i += 3) {
        size_t left = in_len - i;
        uint32_t v = (uint32_t)in[i] << 16;

        if (left > 1)
            v |= (uint32_t)in[i + 1] << 8;
        if (left > 2)
            v |= in[i + 2];
        out[o++] = b64_alphabet[(v >> 18) & 63];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = left > 1 ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = left > 2 ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return (long)o;
}

int sworn_base64_decode(const char *in, size_t in_len, uint8_t *out, size_t out_cap,
                        size_t *out_len)
{
    size_t o = 0;

    if (in_len % 4 != 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "base64: length %zu is not a multiple of 4", in_len);
    for (size_t i = 0; i < in_len; i += 4) {
        int v[4];
        int pad = 0;
        int last = i + 4 == in_len;

        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)in[i + j];

            if (c == '=' && last && j >= 2) {
                v[j] = 0;
                pad++;
                continue;
            }
            if (pad > 0)
                return sworn_err_set(SWORN_ERR_FORMAT, "base64: data after padding");
            v[j] = b64_value(c);
            if (v[j] < 0)
                return sworn_err_set(SWORN_ERR_FORMAT, "base64: invalid character at %zu", i + j);
        }
        uint32_t w =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t n = (size_t)(3 - pad);
        /* Canonical form: the bits that padding discards must be zero. */
        if ((pad == 1 && (w & 0xff) != 0) || (pad == 2 && (w & 0xffff) != 0))
            return sworn_err_set(SWORN_ERR_FORMAT, "base64: non-canonical trailing bits");
        if (o + n > out_cap)
            return sworn_err_set(SWORN_ERR_RANGE, "base64: decoded data longer than %zu bytes",
                                 out_cap);
        out[o++] = (uint8_t)(w >> 16);
        if (n > 1)
            out[o++] = (uint8_t)(w >> 8);
        if (n > 2)
            out[o++] = (uint8_t)w;
    }
    *out_len = o;
    return 0;
}

int sworn_hex_encode(const uint8_t *in, size_t in_len, char *out, size_t out_cap)
{
    static const char digits[] = "0123456789abcdef";

    if (in_len > ((size_t)-1 - 1) / 2 || out_cap < 2 * in_len + 1)
        return sworn_err_set(SWORN_ERR_RANGE, "hex: output buffer too small");
    for (size_t i = 0; i < in_len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * in_len] = '\0';
    return 0;
}

int sworn_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int sworn_hex_decode(const char *in, size_t in_len, uint8_t *out, size_t out_len)
{
    if (out_len > (size_t)-1 / 2 || in_len != 2 * out_len)
        return sworn_err_set(SWORN_ERR_FORMAT, "hex: expected %zu digits, got %zu", 2 * out_len,
                             in_len);
    for (size_t i = 0; i < out_len; i++) {
        int hi = sworn_hex_digit(in[2 * i]);
        int lo = sworn_hex_digit(in[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "hex: invalid digit near position %zu", 2 * i);
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int sworn_parse_u64(const char *in, size_t in_len, uint64_t *v)
{
    uint64_t r = 0;

    if (in_len == 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "number: empty");
    if (in_len > 1 && in[0] == '0')
        return sworn_err_set(SWORN_ERR_FORMAT, "number: leading zero");
    for (size_t i = 0; i < in_len; i++) {
        unsigned d;

        if (in[i] < '0' || in[i] > '9')
            return sworn_err_set(SWORN_ERR_FORMAT, "number: invalid character");
        d = (unsigned)(in[i] - '0');
        if (r > (UINT64_MAX - d) / 10)
            return sworn_err_set(SWORN_ERR_RANGE, "number: larger than 2^64-1");
        r = r * 10 + d;
    }
    *v = r;
    return 0;
}
