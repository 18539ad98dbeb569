/*
 * wipe.c -- secret handling of wipe.h. glibc's explicit_bzero is a barrier the optimiser honours.
 */
#define _DEFAULT_SOURCE
#include "wipe.h"

#include <stdint.h>
#include <string.h>

void sworn_memzero(void *p, size_t n)
{
    if (n > 0)
        explicit_bzero(p, n);
}

int sworn_memequal_ct(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a;
    const volatile uint8_t *y = b;
    uint8_t d = 0;

    for (size_t i = 0; i < n; i++)
        d |= (uint8_t)(x[i] ^ y[i]);
    return d == 0 ? 0 : -1;
}
