/*
 * sv_util.h -- small primitives of the independent verifier: SHA-256, canonical base64, hex,
 * canonical decimals, bounded file reading and the reason buffer every check fills.
 *
 * Written from docs/formats.md (conventions) only; nothing here comes from common/. Every
 * decoder accepts exactly one spelling (base64 with padding and zero trailing bits, decimal
 * without sign or leading zero) and refuses anything else. Thread-safe; no global state.
 */
#ifndef SV_UTIL_H
#define SV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define SV_HASH 32
#define SV_WHY 512 /* capacity of a reason buffer */

/* Write a NUL-terminated reason into why (capacity SV_WHY). Always returns -1. */
int sv_fail(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void sv_sha256(const void *data, size_t len, uint8_t out[SV_HASH]);

/*
 * Decode canonical standard base64 (RFC 4648 section 4, padding present, no white space, unused
 * bits zero) of in_len bytes into out (capacity cap). Returns the decoded length, or -1.
 */
long sv_b64_decode(const char *in, size_t in_len, uint8_t *out, size_t cap);

/* Encode len bytes as padded base64 into out (capacity cap, NUL-terminated). Returns the length
 * or -1 when cap is too small. */
long sv_b64_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void sv_hex(const uint8_t *in, size_t n, char *out);

/* Decode exactly 2n lower-case hex digits. Returns 0 or -1. */
int sv_unhex(const char *in, size_t in_len, uint8_t *out, size_t n);

/* Canonical decimal of in_len bytes (no sign, no leading zero except "0", <= 2^64-1). 0 or -1. */
int sv_parse_u64(const char *in, size_t in_len, uint64_t *out);

/*
 * Read a whole regular file of at most max bytes into a fresh allocation (one extra NUL byte
 * after the data; free it). Returns 0; -1 with why when it is missing (*missing = 1 when
 * missing may be non-NULL and the file does not exist), not a regular file, too big or
 * unreadable.
 */
int sv_read_file(const char *path, size_t max, uint8_t **data, size_t *len, int *missing,
                 char *why);

/*
 * Write a file atomically: a fresh temporary path.tmp.XXXXXX in the same folder (created with
 * O_EXCL, mode 0600, never a planted link), fsync, rename over path, fsync of the folder. path
 * must be a regular file or absent (a symbolic link there is refused). 0 or -1 with why.
 */
int sv_write_file_atomic(const char *path, const void *data, size_t len, char *why);

/* sv_write_file_atomic with the file's mode given (the temporary is made 0600 all the same and
 * gets mode only after its bytes are written and synced, before the rename): a report meant to be
 * read by others (sv_html.h, 0644), where the state stays 0600. */
int sv_write_file_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
                              char *why);

/* The code point at s[0..n) (n >= 1). OUT: *cp. Returns its length (1..4), or 0 when s does not
 * start with a well-formed UTF-8 sequence (then *cp is unchanged). */
size_t sv_utf8_next(const uint8_t *s, size_t n, uint32_t *cp);

/* 1 when cp is one of the unsafe characters of docs/protocol.md section 3 (controls, separators,
 * bidi controls and the other invisible characters), which sv_text_clean refuses. */
int sv_unsafe_cp(uint32_t cp);

/* UTF-8 well-formedness (no overlong, no surrogate, <= U+10FFFF); 1 when valid. */
int sv_utf8_valid(const uint8_t *s, size_t n);

/*
 * 1 when s (n bytes) is valid UTF-8 without an unsafe character (docs/protocol.md section 3:
 * C0, DEL, C1, U+2028/U+2029, bidi controls and the other invisible characters).
 */
int sv_text_clean(const uint8_t *s, size_t n);

/* Print s for a person: printable ASCII as it is, a backslash as \\, every other byte as \xNN. */
void sv_print_text(FILE *out, const char *s);

/* Print s as a JSON string of printable ASCII: every other character as \uXXXX (a surrogate pair
 * above U+FFFF), a byte that is not UTF-8 as \ufffd. */
void sv_print_json_string(FILE *out, const char *s);

#endif
