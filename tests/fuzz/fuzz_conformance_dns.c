/*
 * fuzz_conformance_dns.c -- libFuzzer target for conformance/c_dns.c, the runner's resolver of
 * T2.dns-rebinding (c_dns_respond); the input is one datagram, answered several times so that
 * the schedule moves on.
 *
 * An answer must fit C_DNS_MSG_MAX, carry the query's ID with QR set and one question at most;
 * an answer record is only ever given for the served name, A or AAAA, with TTL 0 and an address
 * of the schedule. The counters must agree: every question answered is one served entry and one
 * step of its type's schedule. Anything else aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "c_dns.h"
#include "fuzz.h"

static void must(int ok)
{
    if (!ok)
        abort();
}

static void check_answer(const uint8_t *q, size_t qlen, const uint8_t *out, size_t n)
{
    unsigned an;

    must(n >= 12 && n <= C_DNS_MSG_MAX && qlen >= 12);
    must(memcmp(out, q, 2) == 0);
    must((out[2] & 0x80) != 0);
    must(out[4] == 0 && out[5] <= 1);
    an = (unsigned)(out[6] << 8 | out[7]);
    must(an <= 1 && out[8] == 0 && out[9] == 0 && out[10] == 0 && out[11] == 0);
    if (an == 1) {
        const uint8_t *rr;
        unsigned type;
        int known = 0;

        must((out[3] & 0x0f) == 0); /* NOERROR */
        must(n >= 12 + 4 + 16);
        /* The record is at the end: pointer, type, class, TTL, rdlength, rdata (4 or 16). */
        for (unsigned len = 4; len <= 16; len += 12) {
            if (n < 12 + len)
                continue;
            rr = out + n - len - 12;
            type = (unsigned)(rr[2] << 8 | rr[3]);
            if (rr[0] != 0xc0 || rr[1] != 0x0c || (unsigned)(rr[10] << 8 | rr[11]) != len ||
                type != (len == 4 ? C_DNS_TYPE_A : C_DNS_TYPE_AAAA))
                continue;
            must(rr[4] == 0 && rr[5] == 1);                             /* class IN */
            must(rr[6] == 0 && rr[7] == 0 && rr[8] == 0 && rr[9] == 0); /* TTL 0 */
            for (size_t i = 0; i < C_DNS_ANSWERS; i++)
                if (c_dns_answers[i].type == type &&
                    memcmp(c_dns_answers[i].addr, rr + 12, len) == 0)
                    known = 1;
        }
        must(known);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct c_dns_counts c = {0};
    uint8_t out[C_DNS_MSG_MAX];
    uint64_t served = 0;

    for (int round = 0; round < 4; round++) {
        size_t n = c_dns_respond("rebind.example", &c, data, size, out, sizeof(out));

        if (n > 0)
            check_answer(data, size, out, n);
    }
    for (size_t i = 0; i < C_DNS_ANSWERS; i++)
        served += c.served[i];
    must(c.datagrams == 4);
    must(served == c.questions && c.next_a + c.next_aaaa == c.questions);
    must(c.questions == 0 || c.questions == 4);
    return 0;
}
