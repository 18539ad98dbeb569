/*
 * fuzz_v_entry.c -- libFuzzer target for the verifier's Entry and Receipt checks (verifier/
 * sv_entry.c, sv_receipt.c): the input as a sworn.v1.Entry, and as a Receipt checked against a
 * fixed receipt key and leaf hash. An entry that is accepted must be 1..65535 bytes and of a
 * known kind (CredentialsMinted, kind 7, and TimeMark, kind 9, included; the seeds hold TimeMarks
 * with the clock behind and ones refused for a wrong clock_behind_ms or reason; issue 13's seeds
 * hold entries without a time, time-missing-*, and one of each shape rule of findings 8, shape-*,
 * refused and accepted; decision-refusal-* a request the proxy refused itself, denied as
 * decisiond does and allowed as it never does, refusal-not-deny; decision-tcp a raw tunnel's
 * canonical form with an empty path; sandbox-* SandboxStarted and SandboxEnded entries, kinds 10
 * and 11, accepted and refused for an end code out of its reason's range, no operator, and limits
 * of no known kind; usage-* UsageRecorded entries, kind 12, accepted, and refused for arithmetic
 * that does not add up or a reported usage with a missing reason; witness-event-* WitnessEvent
 * entries, kind 13, accepted, and refused for kind 0 and a witness_size without a 409); a
 * receipt is never accepted
 * (its signature cannot verify over a fixed leaf without the private key, short of a forgery).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_entry.h"
#include "sv_policy.h"
#include "sv_receipt.h"
#include "fuzz.h"

static const char policy[] =
    "origin fuzz.example/log\n"
    "log example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx\n"
    "receipt-key MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sv_policy p;
    static struct sv_receipt_keys *keys;
    struct sv_entry_info info;
    char why[SV_WHY], code[32];
    uint8_t leaf[SV_HASH] = {1, 2, 3};

    if (keys == NULL) {
        if (sv_policy_parse(policy, sizeof(policy) - 1, NULL, &p, why) != 0)
            abort();
        keys = sv_receipt_keys_new(&p, NULL);
        if (keys == NULL)
            abort();
    }
    if (sv_entry_check(data, size, &info, code, why) == 0 &&
        (size < 1 || size > 65535 || info.kind < SV_ENTRY_DECISION ||
         info.kind > SV_ENTRY_WITNESS_EVENT))
        abort();
    if (sv_receipt_verify(keys, data, size, leaf, 0, &info.http, code, why) == 0)
        abort();
    return 0;
}
