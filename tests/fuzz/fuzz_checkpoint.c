/*
 * fuzz_checkpoint.c -- libFuzzer target for checkpoint.c: sworn_checkpoint_parse on the input,
 * then sworn_checkpoint_format on what was parsed.
 *
 * The checkpoint encoding is canonical (one decimal form per size, one base64 form per root), so
 * a parsed body must format back to exactly its first three lines, and the extension lines must
 * be exactly the rest of the input. Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct sworn_checkpoint cp;
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    long n;

    if (sworn_checkpoint_parse(text, size, &cp) != 0)
        return 0;
    n = sworn_checkpoint_format(cp.origin, cp.size, cp.root, body, sizeof(body));
    if (n <= 0 || (size_t)n > size || memcmp(body, text, (size_t)n) != 0)
        abort();
    if (cp.extensions == NULL) {
        if ((size_t)n != size || cp.extensions_len != 0)
            abort();
    } else if (cp.extensions != text + n || cp.extensions_len != size - (size_t)n ||
               cp.extensions_len == 0 || text[size - 1] != '\n') {
        abort();
    }
    return 0;
}
