/*
 * fuzz_note.c -- libFuzzer target for note.c: sworn_note_parse, sworn_note_verify against three
 * fixed verifier keys (Ed25519, ECDSA P-256, cosignature/v1), sworn_note_verifier_parse and
 * sworn_note_text_check, all on the same input.
 *
 * Besides not crashing, it checks properties that a lax parser would break:
 *   - a parsed note rebuilds to exactly the input bytes (nothing skipped or normalised);
 *   - a verified note counts between 1 and 3 signers, and marks as many keys;
 *   - a parsed verifier key formats to a string that parses back to the same key.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/note/) holds notes signed by the private halves of these keys, so the
 * fuzzer starts inside the signature checks. The keys are throwaway ones made for this target.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "note.h"
#include "fuzz.h"

static const char *const fixed_vkeys[] = {
    "fuzz.example/a+a117e57f+AYqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c",
    "fuzz.example/w+539e4b1c+BIE5dw6ofRdfVqNUZsNMfszLjYqRtO43ol32D1uPybOU",
    ("fuzz.example/e+c4d91143+AjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABEccPnWMSQQoW7p+UxGO0PUkresHV9Jb0"
     "vjnsNdt+nFM3VIPesqKi5F6zDf1HejwybvjrYWDgucC3CWhLQn3qFg="),
};
#define NKEYS (sizeof(fixed_vkeys) / sizeof(fixed_vkeys[0]))

static struct sworn_note_verifier keys[NKEYS];

static void load_keys(void)
{
    static int loaded;

    if (loaded)
        return;
    for (size_t i = 0; i < NKEYS; i++)
        if (sworn_note_verifier_parse(fixed_vkeys[i], strlen(fixed_vkeys[i]), &keys[i]) != 0)
            abort();
    loaded = 1;
}

/* The input must equal text, "\n", then each signature line as parsed. */
static void check_rebuild(const char *msg, size_t len, const struct sworn_note *n)
{
    size_t off;

    if (n->text != msg || n->text_len == 0 || n->text_len >= len || msg[n->text_len - 1] != '\n')
        abort();
    if (n->sig_count == 0 || n->sig_count > SWORN_NOTE_MAX_SIGS)
        abort();
    off = n->text_len;
    if (msg[off++] != '\n')
        abort();
    for (size_t i = 0; i < n->sig_count; i++) {
        const struct sworn_note_sig *s = &n->sigs[i];

        if (len - off < 4 || memcmp(msg + off, "\xe2\x80\x94 ", 4) != 0)
            abort();
        off += 4;
        if (s->name != msg + off || s->name_len == 0 || s->name_len > SWORN_NOTE_NAME_MAX)
            abort();
        off += s->name_len;
        if (off >= len || msg[off++] != ' ')
            abort();
        if (s->sig_b64 != msg + off || s->sig_b64_len == 0 || s->sig_b64_len > len - off)
            abort();
        off += s->sig_b64_len;
        if (off >= len || msg[off++] != '\n')
            abort();
    }
    if (off != len)
        abort();
}

static void fuzz_verifier(const char *data, size_t size)
{
    struct sworn_note_verifier v, back;
    char s[SWORN_NOTE_VKEY_MAX + 1];
    long n;

    if (sworn_note_verifier_parse(data, size, &v) != 0)
        return;
    n = sworn_note_verifier_format(&v, s, sizeof(s));
    if (n <= 0 || (size_t)n != size)
        abort();
    if (sworn_note_verifier_parse(s, (size_t)n, &back) != 0)
        abort();
    if (strcmp(v.name, back.name) != 0 || v.key_id != back.key_id || v.alg != back.alg ||
        v.key_len != back.key_len || memcmp(v.key, back.key, v.key_len) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *msg = (const char *)data;
    struct sworn_note note;

    load_keys();
    if (sworn_note_parse(msg, size, &note) == 0) {
        size_t count = 0, marked = 0;
        uint8_t by[NKEYS];
        uint64_t ts[NKEYS];

        check_rebuild(msg, size, &note);
        if (sworn_note_verify(&note, keys, NKEYS, &count, by, ts) == 0) {
            struct sworn_checkpoint cp;

            for (size_t i = 0; i < NKEYS; i++)
                marked += by[i];
            if (count == 0 || count > NKEYS || marked == 0 || marked > count)
                abort();
            (void)sworn_checkpoint_parse(note.text, note.text_len, &cp);
        } else {
            for (size_t i = 0; i < NKEYS; i++)
                if (by[i] != 0 || ts[i] != 0)
                    abort();
        }
    }
    fuzz_verifier(msg, size);
    if (sworn_note_text_check(msg, size) == 0 && msg[size - 1] != '\n')
        abort();
    return 0;
}
