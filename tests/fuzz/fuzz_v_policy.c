/*
 * fuzz_v_policy.c -- libFuzzer target for the verifier's trust-policy parser (verifier/
 * sv_policy.c): sv_policy_parse on the input, then the quorum rule on what was parsed. A policy
 * that parses must hold an origin and a log key, and its quorum must be decidable for every
 * witness set (all or none present); one that accepts development or uid-less starts must read
 * the Startup entries (entries sworn). Paths in the input resolve against the working folder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_policy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sv_policy p;
    char why[SV_WHY];
    int none[SV_POLICY_KEYS] = {0}, all[SV_POLICY_KEYS];

    if (sv_policy_parse((const char *)data, size, NULL, &p, why) != 0)
        return 0;
    if (p.origin[0] == '\0' || p.nlogs == 0)
        abort();
    if ((p.development_allowed || p.uids_unrecorded_allowed) && !p.sworn_entries)
        abort();
    for (int i = 0; i < SV_POLICY_KEYS; i++)
        all[i] = 1;
    /* Every group's threshold is at most its size: all witnesses always meet the quorum. */
    if (!sv_policy_quorum_met(&p, all))
        abort();
    (void)sv_policy_quorum_met(&p, none);
    sv_policy_free(&p);
    return 0;
}
