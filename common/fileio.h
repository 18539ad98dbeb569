/*
 * fileio.h -- whole-file reads and durable writes of public files (notes, proofs, tiles, keyrings,
 * quotes). Secrets have their own reader, secretfile.h.
 *
 * Reads are bounded and refuse what is not a regular file (a FIFO would hang the reader). Writes
 * are durable: the data is fsynced before the call returns, and a replacing write goes through a
 * temporary file in the same folder, renamed over the target, and the folder fsynced, so a reader
 * or a crash sees the old file or the new one, never a mix.
 */
#ifndef SWORN_FILEIO_H
#define SWORN_FILEIO_H

#include <stddef.h>

/*
 * Read the whole file at path ("-" reads standard input) of at most max bytes into a fresh
 * allocation with a NUL after the last byte (free it). OUT: *data, *len.
 * Returns 0, or -1 with sworn_err set: SWORN_ERR_NOTFOUND (no such file), SWORN_ERR_RANGE (larger
 * than max), SWORN_ERR_IO (anything else, including a path that is not a regular file).
 */
int sworn_file_read(const char *path, size_t max, char **data, size_t *len);

/* Write len bytes to path, replacing it atomically (mode for a new file). Returns 0 or -1. */
int sworn_file_replace(const char *path, const void *data, size_t len, unsigned mode);

/*
 * Create path exclusively (never following a symbolic link) and write len bytes, fsynced.
 * Returns 0, or -1 (SWORN_ERR_ARG when path exists: outputs are never overwritten).
 */
int sworn_file_create(const char *path, const void *data, size_t len, unsigned mode);

#endif
