/*
 * witness_answer.h -- reading a witness's answer to add-checkpoint (C2SP tlog-witness), as
 * decisiond's submitter does (d_witness.h). Pure functions over bytes a witness sent: nothing is
 * trusted, every length is bounded, and a cosignature is kept only once it verified.
 */
#ifndef SWORN_WITNESS_ANSWER_H
#define SWORN_WITNESS_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "note.h"

#define SWORN_WITNESS_ANSWER_LINE_MAX 1024 /* a longer line of a 200 answer is not looked at */

/*
 * A 409's body: content type text/x.tlog.size (parameters after it allowed), the body one
 * canonical decimal (no sign, no leading zero but for 0 itself, at most 20 digits, no overflow)
 * and "\n". OUT: *size. Returns 0, or -1 (no error is set: the answer is just not a size).
 */
int sworn_witness_answer_size(const char *ctype, const char *body, size_t len, uint64_t *size);

/*
 * The lines of a 200 answer's body (each ending in "\n"; an unfinished last line and lines
 * longer than SWORN_WITNESS_ANSWER_LINE_MAX are skipped) that are key's cosignatures of note
 * (len bytes, a signed note): a line is kept when note with that line appended verifies under key
 * alone, and not already in *out; at most max lines are kept (the first ones), so that a witness,
 * which can make as many valid cosignatures of its own as it likes (one a time), cannot fill the
 * note past its signature lines' bound and make it unstorable for every witness (red team of
 * decisiond's submissions, finding 2). Kept lines are appended to *out (malloc'd and grown,
 * NUL-terminated; *out may be NULL at first), *out_len updated. Returns how many were kept, or
 * -1 out of memory (sworn_err set; *out keeps what it held).
 */
int sworn_witness_answer_cosignatures(const struct sworn_note_verifier *key, const char *note,
                                      size_t len, const char *body, size_t body_len, size_t max,
                                      char **out, size_t *out_len);

#endif
