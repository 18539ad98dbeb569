/*
 * utf8.h -- strict UTF-8 (RFC 3629) for the text formats: notes, checkpoints, names.
 *
 * Rejected: stray continuation bytes, truncated sequences, overlong forms, UTF-16 surrogates and
 * values above U+10FFFF. Control characters are C0 (U+0000..U+001F) and DEL (U+007F).
 * No allocation; thread-safe; not constant-time (public data only).
 */
#ifndef SWORN_UTF8_H
#define SWORN_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Read one code point from b. OUT: *cp. Returns 0, or -1 (SWORN_ERR_FORMAT; cursor undefined). */
int sworn_utf8_next(struct sworn_buf *b, uint32_t *cp);

/* Is cp a control character (C0 or DEL)? */
int sworn_utf8_is_control(uint32_t cp);

/*
 * Check that p[0..len) is valid UTF-8 without control characters, except '\n' when
 * allow_newline is set. `what` names the text in the error, which also gives the byte offset.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_FORMAT).
 */
int sworn_utf8_check(const void *p, size_t len, int allow_newline, const char *what);

#endif
