/*
 * fuzz_witness_answer.c -- libFuzzer target for decisiond's reading of a witness's answer
 * (decisiond/witness_answer.h): a 409's size and a 200's cosignature lines.
 *
 * Input layout: byte 0 picks the reader.
 *   - even: the rest up to its first '\n' (at most 64 bytes) is the Content-Type, what follows
 *     the body of a 409. When it parses, the body is exactly the size in decimal and "\n".
 *   - odd: the rest is the body of a 200 for a fixed checkpoint note and a fixed witness key
 *     (a real pair: a dev-stack log's checkpoint and its sworn-witness's cosignature key). Every
 *     line kept is a whole line of the body, ends in "\n", and verifies: so out holds exactly as
 *     many lines as were kept (at most the 4 asked for), no more bytes than the body, and each
 *     once.
 * Deterministic: no clocks, no randomness, nothing carried between inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "note.h"
#include "witness_answer.h"
#include "witness_answer_vector.h"

static const char note[] = WAV_NOTE;
static const char vkey[] = WAV_VKEY;

static void sizes(const char *in, size_t len)
{
    const char *nl = memchr(in, '\n', len < 65 ? len : 65);
    char ctype[65], again[32];
    uint64_t v = 0;
    size_t clen;

    if (nl == NULL)
        return;
    clen = (size_t)(nl - in);
    memcpy(ctype, in, clen);
    ctype[clen] = '\0';
    if (sworn_witness_answer_size(ctype, nl + 1, len - clen - 1, &v) != 0)
        return;
    snprintf(again, sizeof(again), "%llu\n", (unsigned long long)v);
    if (strlen(again) != len - clen - 1 || memcmp(again, nl + 1, len - clen - 1) != 0)
        abort();
}

static void cosignatures(const char *body, size_t len)
{
    static struct sworn_note_verifier key;
    static int have_key;
    char *out = NULL;
    size_t out_len = 0, lines = 0;
    int n;

    if (!have_key) {
        if (sworn_note_verifier_parse(vkey, strlen(vkey), &key) != 0)
            abort();
        have_key = 1;
    }
    n = sworn_witness_answer_cosignatures(&key, note, strlen(note), body, len, 4, &out, &out_len);
    if (n < 0) {
        free(out);
        return; /* out of memory */
    }
    if (n > 4 || out_len > len || (n > 0 && (out == NULL || out[out_len - 1] != '\n')))
        abort();
    for (size_t i = 0; i < out_len; i++)
        lines += out[i] == '\n';
    if (lines != (size_t)n)
        abort();
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] % 2 == 0)
        sizes((const char *)data + 1, size - 1);
    else
        cosignatures((const char *)data + 1, size - 1);
    return 0;
}
