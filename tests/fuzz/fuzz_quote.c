/*
 * fuzz_quote.c -- libFuzzer target for the verifier's quote check (verifier/quote.c):
 * sv_quote_check, sv_quote_ak_name and sv_quote_time_order on fuzzed bytes.
 *
 * Input layout (the seeds in corpus/quote/ are real swtpm quotes written by test_quote with
 * SV_QUOTE_SEED_DIR set): expected extraData (32) || expected PCR 23 value (32) ||
 * u16 BE AK public length || AK public || u16 BE attest length || attest || signature (rest).
 * Short inputs are still fed to the parsers, with whatever is there.
 *
 * Besides not crashing, it checks properties a lax checker would break:
 *   - an accepted quote has an AK that sv_quote_ak_name accepts with the same names;
 *   - an accepted quote's clockInfo is the bytes of the attest header it came from;
 *   - the accepted attest really carries TPM_GENERATED_VALUE and TPM_ST_ATTEST_QUOTE;
 *   - a reason always has a name and a message;
 *   - an accepted quote passes a firmware floor equal to its firmwareVersion and is refused
 *     (SV_QUOTE_FIRMWARE) with a floor one above it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"
#include "fuzz.h"

static uint64_t be(const uint8_t *p, size_t n)
{
    uint64_t v = 0;

    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sv_quote_policy policy;
    struct sv_quote_result res;
    uint8_t extra[32] = {0}, name[SV_QUOTE_NAME_LEN], qn[SV_QUOTE_NAME_LEN];
    const uint8_t *ak, *att, *sig;
    size_t ak_len, att_len, sig_len, o = 0;
    enum sv_quote_reason rc;
    char why[160];

    memset(&policy, 0, sizeof(policy));
    policy.pcr_mask = 1u << 23;
    if (size >= 64) {
        memcpy(extra, data, 32);
        memcpy(policy.pcr_values[23], data + 32, 32);
        o = 64;
    }
    ak_len = size - o >= 2 ? (size_t)be(data + o, 2) : 0;
    o += size - o >= 2 ? 2 : 0;
    if (ak_len > size - o)
        ak_len = size - o;
    ak = data + o;
    o += ak_len;
    att_len = size - o >= 2 ? (size_t)be(data + o, 2) : 0;
    o += size - o >= 2 ? 2 : 0;
    if (att_len > size - o)
        att_len = size - o;
    att = data + o;
    o += att_len;
    sig = data + o;
    sig_len = size - o;

    rc = sv_quote_check(&policy, ak, ak_len, att, att_len, sig, sig_len, extra, &res, why,
                        sizeof(why));
    if (sv_quote_reason_name(rc) == NULL || why[0] == '\0')
        abort();
    /* PCR values unknown (a bundle that does not show the start in force): only the pcrDigest
     * comparison goes, so it accepts whatever the full check accepts, and whatever the full
     * check refuses before the digest it refuses for the same reason. */
    {
        struct sv_quote_result part;
        enum sv_quote_reason prc;

        policy.pcr_values_unknown = 1;
        prc = sv_quote_check(&policy, ak, ak_len, att, att_len, sig, sig_len, extra, &part, why,
                             sizeof(why));
        policy.pcr_values_unknown = 0;
        if (rc == SV_QUOTE_OK && prc != SV_QUOTE_OK)
            abort();
        if (rc != SV_QUOTE_OK && rc != SV_QUOTE_PCR_DIGEST && prc != rc)
            abort();
    }
    if (rc == SV_QUOTE_OK) {
        if (sv_quote_ak_name(ak, ak_len, name, qn, why, sizeof(why)) != SV_QUOTE_OK ||
            memcmp(name, res.ak_name, sizeof(name)) != 0 ||
            memcmp(qn, res.ak_qualified_name, sizeof(qn)) != 0)
            abort();
        /* magic(4) type(2) signer(2+34) extra(2+32) clock(8) reset(4) restart(4) safe(1) fw(8) */
        if (att_len < 4 + 2 + 36 + 34 + 25 + 8 || be(att, 4) != 0xff544347u ||
            be(att + 4, 2) != 0x8018u)
            abort();
        if (res.clock.clock != be(att + 76, 8) || res.clock.reset_count != be(att + 84, 4) ||
            res.clock.restart_count != be(att + 88, 4) || res.clock.safe != att[92] ||
            res.firmware_version != be(att + 93, 8))
            abort();
        /* The firmware floor: the quote's own version passes, one above it does not. */
        {
            struct sv_quote_result again;
            uint64_t fw = res.firmware_version;

            policy.min_firmware_version = fw;
            if (sv_quote_check(&policy, ak, ak_len, att, att_len, sig, sig_len, extra, &again, why,
                               sizeof(why)) != SV_QUOTE_OK)
                abort();
            if (fw != UINT64_MAX) {
                policy.min_firmware_version = fw + 1;
                if (sv_quote_check(&policy, ak, ak_len, att, att_len, sig, sig_len, extra, &again,
                                   why, sizeof(why)) != SV_QUOTE_FIRMWARE)
                    abort();
            }
            policy.min_firmware_version = 0;
        }
    }
    /* the AK parser alone, on the whole input as well */
    (void)sv_quote_ak_name(data, size, name, qn, why, sizeof(why));
    if (size >= 34) {
        struct sv_quote_clock a = {be(data, 8), (uint32_t)be(data + 8, 4),
                                   (uint32_t)be(data + 12, 4), data[16]};
        struct sv_quote_clock b = {be(data + 17, 8), (uint32_t)be(data + 25, 4),
                                   (uint32_t)be(data + 29, 4), data[33]};
        int gap = -1;
        enum sv_quote_order ord = sv_quote_time_order(&a, &b, &gap);

        if (gap != 0 && gap != 1)
            abort();
        if ((ord == SV_ORDER_REPLAY) != (a.reset_count == b.reset_count && a.clock == b.clock &&
                                         b.restart_count >= a.restart_count))
            abort();
        /* safe = 1 across a reset: the clock never goes back (issue 13 finding 10) */
        if ((ord == SV_ORDER_RESET_CLOCK_BACK) !=
            (b.reset_count > a.reset_count && b.safe != 0 && b.clock < a.clock))
            abort();
    }
    return 0;
}
