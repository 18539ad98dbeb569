/*
 * wipe.h -- handling of secret bytes: wiping that the compiler cannot remove, and comparison in
 * constant time.
 */
#ifndef SWORN_WIPE_H
#define SWORN_WIPE_H

#include <stddef.h>

/* Overwrite n bytes at p with zeros; never optimised away. p may be NULL only when n is 0. */
void sworn_memzero(void *p, size_t n);

/*
 * Compare n bytes in time that depends only on n. Returns 0 when equal, -1 otherwise.
 * WARNING: this says nothing about ordering; use memcmp on public data for that.
 */
int sworn_memequal_ct(const void *a, const void *b, size_t n) __attribute__((warn_unused_result));

#endif
