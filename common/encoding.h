/*
 * encoding.h -- strict text encodings of bytes and numbers: base64 (RFC 4648 section 4, standard
 * alphabet, with padding), lower-case hex, and canonical decimal.
 *
 * Decoders are strict because their output is compared and hashed: base64 must be padded, must
 * not contain white space, and its unused trailing bits must be zero, so every byte string has
 * exactly one accepted encoding. Decimal numbers have no sign, no leading zeros (except "0"
 * itself) and must fit in uint64_t.
 *
 * Nothing allocates; outputs go into caller-owned buffers. On error nothing useful is written,
 * sworn_err is set (SWORN_ERR_FORMAT for bad input, SWORN_ERR_RANGE when out is too small) and -1
 * is returned. Not constant-time: use only on public data.
 */
#ifndef SWORN_ENCODING_H
#define SWORN_ENCODING_H

#include <stddef.h>
#include <stdint.h>

/* Characters needed to base64-encode n bytes (without a terminating NUL). */
#define SWORN_BASE64_LEN(n) ((((n) + 2) / 3) * 4)
/* Bytes at most produced by decoding n base64 characters. */
#define SWORN_BASE64_DECODED_MAX(n) (((n) / 4) * 3)

/*
 * Encode in[0..in_len) as base64 into out, NUL-terminated. out_cap must be at least
 * SWORN_BASE64_LEN(in_len) + 1. Returns the length written (without the NUL) or -1.
 */
long sworn_base64_encode(const uint8_t *in, size_t in_len, char *out, size_t out_cap);

/*
 * Decode exactly in_len base64 characters into out (capacity out_cap). OUT: *out_len.
 * Returns 0, or -1 for a non-canonical or malformed encoding or a too-small out.
 */
int sworn_base64_decode(const char *in, size_t in_len, uint8_t *out, size_t out_cap,
                        size_t *out_len);

/* Encode bytes as lower-case hex, NUL-terminated; out_cap >= 2 * in_len + 1. Returns 0 or -1. */
int sworn_hex_encode(const uint8_t *in, size_t in_len, char *out, size_t out_cap);

/* The value of one hex digit (either case), or -1 when c is not one. */
int sworn_hex_digit(char c);

/* Decode exactly 2 * out_len hex digits (either case) into out. Returns 0 or -1. */
int sworn_hex_decode(const char *in, size_t in_len, uint8_t *out, size_t out_len);

/* Parse a canonical decimal uint64 from exactly in_len characters. OUT: *v. Returns 0 or -1. */
int sworn_parse_u64(const char *in, size_t in_len, uint64_t *v);

#endif
