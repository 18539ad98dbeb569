/*
 * utf8.h -- strict UTF-8 (RFC 3629) for the text formats: notes, checkpoints, names, every string
 * of a request or an entry; and the one escaper for what people read.
 *
 * Rejected: stray continuation bytes, truncated sequences, overlong forms, UTF-16 surrogates and
 * values above U+10FFFF.
 *
 * Unsafe characters (sworn_utf8_is_control, the one list that every recorded string is checked
 * against: wire/frame.c, the vault, the signer's IPC, the configuration and the policy, notes):
 * what could make a string look like another one to a person reading it, or hide a part of it.
 *   - the control characters: C0 (U+0000..U+001F), DEL (U+007F) and C1 (U+0080..U+009F; U+009B
 *     is the 8-bit CSI, which terminals obey);
 *   - the line and paragraph separators U+2028, U+2029;
 *   - the Unicode bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069
 *     (U+202E, RIGHT-TO-LEFT OVERRIDE, shows "exe.txt" as "txt.exe");
 *   - the other invisible characters: every Default_Ignorable_Code_Point of Unicode 15.1 (soft
 *     hyphen, zero-width space and joiners, word joiner, invisible operators, variation
 *     selectors, U+FEFF, the Hangul fillers, the tag characters U+E0000..U+E0FFF, ...), and the
 *     interlinear annotation controls U+FFF9..U+FFFB.
 * docs/protocol.md section 3 has the same list. Every other character is accepted.
 *
 * No allocation (but sworn_utf8_escape_json); thread-safe; not constant-time (public data only).
 */
#ifndef SWORN_UTF8_H
#define SWORN_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Read one code point from b. OUT: *cp. Returns 0, or -1 (SWORN_ERR_FORMAT; cursor undefined). */
int sworn_utf8_next(struct sworn_buf *b, uint32_t *cp);

/* Is cp an unsafe character (the list above: controls, separators, bidi, invisible)? */
int sworn_utf8_is_control(uint32_t cp);

/*
 * Check that p[0..len) is valid UTF-8 without unsafe characters, except '\n' when allow_newline
 * is set. `what` names the text in the error, which also gives the byte offset and the code
 * point (as U+XXXX, never the raw bytes).
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_utf8_check(const void *p, size_t len, int allow_newline, const char *what);

/* How sworn_utf8_escape writes what it escapes. */
enum sworn_utf8_escape_mode {
    /* For text read by people: an unsafe character as \uXXXX (\UXXXXXXXX above U+FFFF), a byte
     * that is not UTF-8 as \xNN, a backslash as \\, so that the output is printable and the
     * input can be told from it. */
    SWORN_UTF8_ESCAPE_TEXT,
    /* For JSON text (the output of a serializer that leaves bytes >= 0x7F alone, as json-c's
     * does): an unsafe character as \uXXXX (a surrogate pair above U+FFFF), a byte that is not
     * UTF-8 as \ufffd; the rest is copied. The result is valid UTF-8 JSON, without unsafe
     * characters, meaning what the input meant where the input was valid. */
    SWORN_UTF8_ESCAPE_JSON,
};

/*
 * Escape in[0..len) into out (capacity cap, NUL-terminated). Returns the length written, or
 * (size_t)-1 when cap is too small (out then holds a NUL-terminated prefix, never a cut escape).
 * SWORN_UTF8_ESCAPE_MAX(len) bytes are always enough.
 */
size_t sworn_utf8_escape(const void *in, size_t len, enum sworn_utf8_escape_mode mode, char *out,
                         size_t cap);
#define SWORN_UTF8_ESCAPE_MAX(len) ((len)*6 + 1) /* \u0001 or \ufffd for one byte */

/* The same into a fresh allocation (free it); NULL when out of memory. */
char *sworn_utf8_escape_dup(const char *in, enum sworn_utf8_escape_mode mode);

#endif
