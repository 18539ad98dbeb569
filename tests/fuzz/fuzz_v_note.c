/*
 * fuzz_v_note.c -- libFuzzer target for the verifier's signed-note, verifier-key and checkpoint
 * parsers (verifier/sv_note.c): the input as a note verified with fixed keys of all three types
 * (0x01 Ed25519, 0x02 ECDSA P-256, 0x04 cosignature), its text as a checkpoint, and its first
 * line as a verifier key. A parsed note's text must end in a newline inside the input, and a
 * note that verifies must have had a matching signature line.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_note.h"
#include "fuzz.h"

static const char *const vkeys[] = {
    "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx",
    /* parenthesised: one key split over two lines, not two keys missing a comma */
    ("rekor.sigstore.dev+c0d23d6a+"
     "AjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABNhtmPtrWm3U1eQXBogSMdGvXwBcK5"
     "AW5i0hrZLOC96l+smGNM7nwZ4QvFK/4sueRoVj//QP22Ni4Qt9DPfkWLc="),
    "example.org/witness+cacf2e50+BGbguFjkYqYJ5m/nE3DIFtiEb/ED1UmaIqf+w3/bxCSn",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sv_vkey keys[3];
    static int ready;
    struct sv_note n;
    struct sv_note_result res;
    struct sv_checkpoint cp;
    struct sv_vkey k;
    char why[SV_WHY];
    const uint8_t *nl;

    if (!ready) {
        for (int i = 0; i < 3; i++)
            if (sv_vkey_parse(vkeys[i], strlen(vkeys[i]), &keys[i], why) != 0)
                abort();
        ready = 1;
    }
    nl = memchr(data, '\n', size);
    if (sv_vkey_parse((const char *)data, nl ? (size_t)(nl - data) : size, &k, why) == 0)
        sv_vkey_free(&k);
    if (sv_note_parse((const char *)data, size, &n, why) != 0)
        return 0;
    if (n.text != (const char *)data || n.text_len == 0 || n.text_len > size ||
        n.text[n.text_len - 1] != '\n' || n.nsigs == 0)
        abort();
    if (sv_note_verify(&n, keys, 3, &res, why) == 0) {
        unsigned matched = 0;

        for (int i = 0; i < 3; i++)
            matched += res.matched[i];
        if (matched + res.unknown != n.nsigs)
            abort();
    }
    (void)sv_checkpoint_parse(n.text, n.text_len, &cp, why);
    return 0;
}
