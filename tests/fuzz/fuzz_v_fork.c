/*
 * fuzz_v_fork.c -- libFuzzer target for the fork-proof checker (verifier/sv_fork.c): the input
 * as a fork proof under a policy trusting the tessera test log's key. Without that key's
 * private half no input can hold two validly signed checkpoints, so nothing is ever proven: an
 * accepted input is a crash.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sv_fork.h"
#include "sv_policy.h"
#include "fuzz.h"

static const char policy[] =
    "origin example.com/log/testdata\n"
    "log example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sv_policy p;
    static int ready;
    char why[SV_WHY];

    if (!ready) {
        if (sv_policy_parse(policy, sizeof(policy) - 1, NULL, &p, why) != 0)
            abort();
        ready = 1;
    }
    if (sv_fork_check(&p, (const char *)data, size, why) == 0)
        abort();
    return 0;
}
