/*
 * secretfile.h -- reading secrets (key files, PIN files) from the file system.
 *
 * A secret file must be a regular file, not a symbolic link, with no permission bits for group or
 * others (mode 0600 or stricter), and smaller than the caller's buffer; anything else is refused
 * with a message that says how to fix it. Secrets never come from argv or the environment.
 */
#ifndef SWORN_SECRETFILE_H
#define SWORN_SECRETFILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read the secret file at path into buf (capacity cap; the file must hold at most cap - 1 bytes).
 * `what` names the file in errors ("key file", "PIN file"). OUT: *len.
 * Returns 0, or -1 with sworn_err set (SWORN_ERR_IO for the file's kind or mode, SWORN_ERR_FORMAT
 * for its size). The caller wipes buf whatever happens.
 */
int sworn_secretfile_read(const char *path, const char *what, uint8_t *buf, size_t cap,
                          size_t *len);

#endif
