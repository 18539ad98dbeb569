/*
 * fuzz_entry_time.c -- libFuzzer target for the append path's reading of a decision's or a
 * resolution's time stamp from its packed bytes (decisiond/entry_time.h, d_entry_time_bytes),
 * against protobuf-c's unpack and d_entry_time: wherever both read an input, they agree.
 *
 * Input layout: byte 0 picks the shape.
 *   - 0 mod 3: the rest is the Entry's bytes as they are;
 *   - 1 mod 3: the rest is a DecisionRecord's bytes, wrapped as the Entry's `decision` (field 1);
 *   - 2 mod 3: the rest is an EscalationResolved's bytes, wrapped as `escalation_resolved` (5).
 * The wrapping lets the fuzzer spend its inputs inside the record, where the time field is.
 * What must hold: when d_entry_time_bytes returns 0 and the entry unpacks, the stamp and
 * whether there is one are d_entry_time's; when it returns 0 the kind is one of the two. The
 * reader may accept bytes protobuf-c refuses (a record whose other fields do not unpack): the
 * append path reads only entries this daemon packed, and falls back to the unpack on -1.
 * Deterministic: no clocks, no randomness, nothing carried between inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry_time.h"
#include "fuzz.h"

#define WRAP_MAX (1u << 20)

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;

    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static void check(const uint8_t *entry, size_t len)
{
    uint64_t t = 0, want = 0;
    int has = -1, want_has;
    Sworn__V1__Entry *e;

    if (d_entry_time_bytes(entry, len, &t, &has) != 0)
        return;
    if (has != 0 && has != 1)
        abort();
    e = sworn__v1__entry__unpack(NULL, len, entry);
    if (e == NULL)
        return;
    if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION &&
        e->kind_case != SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED) {
        fprintf(stderr, "read a stamp from an entry of kind %d\n", (int)e->kind_case);
        abort();
    }
    want_has = d_entry_time(e, &want);
    if (want_has != has || (has && want != t)) {
        fprintf(stderr, "bytes: has %d t %llu; unpacked: has %d t %llu\n", has,
                (unsigned long long)t, want_has, (unsigned long long)want);
        abort();
    }
    sworn__v1__entry__free_unpacked(e, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *wrapped;
    size_t n;

    if (size == 0)
        return 0;
    if (data[0] % 3 == 0 || size - 1 > WRAP_MAX) {
        check(data + 1, size - 1);
        return 0;
    }
    wrapped = malloc(size - 1 + 11);
    if (wrapped == NULL)
        return 0;
    n = put_varint(wrapped,
                   (uint64_t)(data[0] % 3 == 1 ? SWORN__V1__ENTRY__KIND_DECISION
                                               : SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED)
                           << 3 |
                       2);
    n += put_varint(wrapped + n, size - 1);
    memcpy(wrapped + n, data + 1, size - 1);
    check(wrapped, n + size - 1);
    free(wrapped);
    return 0;
}
