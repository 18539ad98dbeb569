/*
 * w_fault.c -- fault injection points (contract in w_fault.h).
 */
#include "w_fault.h"

#ifdef SWORN_WITNESS_TEST_FAULT
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void sworn_witness_fault(const char *point)
{
    const char *want = getenv("SWORN_WITNESS_FAULT");

    if (want != NULL && strcmp(want, point) == 0)
        (void)raise(SIGSTOP);
}
#else
void sworn_witness_fault(const char *point)
{
    (void)point;
}
#endif
