/*
 * fuzz_textserve.c -- libFuzzer target for the metrics sockets' request-line reader
 * (common/textserve.h, sworn_textserve_request_line).
 *
 * Input: the whole input is the request line (without its CRLF). Checked on every input:
 *   - the answer is 0, 400 or 405;
 *   - on 0: the input starts "GET /" and ends " HTTP/1.0" or " HTTP/1.1"; the path is
 *     NUL-terminated inside the buffer, starts with '/', holds no byte <= ' ' and no '?', and is
 *     the input's target up to its first '?';
 *   - on 405: the input does not start with "GET ".
 * Deterministic: no state between inputs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "textserve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[256];
    const char *line = (const char *)data;
    size_t plen;
    int rc;

    memset(path, 0x5a, sizeof(path));
    rc = sworn_textserve_request_line(line, size, path, sizeof(path));
    if (rc != 0 && rc != 400 && rc != 405)
        abort();
    if (rc == 405 && size >= 4 && memcmp(line, "GET ", 4) == 0)
        abort();
    if (rc != 0)
        return 0;
    if (size < 4 + 1 + 9 || memcmp(line, "GET /", 5) != 0 ||
        (memcmp(line + size - 9, " HTTP/1.0", 9) != 0 &&
         memcmp(line + size - 9, " HTTP/1.1", 9) != 0))
        abort();
    plen = strnlen(path, sizeof(path));
    if (plen == sizeof(path) || path[0] != '/' || memcmp(path, line + 4, plen) != 0)
        abort();
    for (size_t i = 0; i < plen; i++)
        if ((unsigned char)path[i] <= ' ' || path[i] == '?')
            abort();
    /* The path ends where the target does, or at its first '?'. */
    if (line[4 + plen] != ' ' && line[4 + plen] != '?')
        abort();
    return 0;
}
