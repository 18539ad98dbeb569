/*
 * witness_answer.c -- reading a witness's answer to add-checkpoint (witness_answer.h).
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "witness_answer.h"

int sworn_witness_answer_size(const char *ctype, const char *body, size_t len, uint64_t *size)
{
    static const char type[] = "text/x.tlog.size";
    uint64_t v = 0;

    /* The media type is case-insensitive (RFC 9110 8.3.1); parameters may follow it. */
    if (ctype == NULL || strncasecmp(ctype, type, sizeof(type) - 1) != 0 ||
        (ctype[sizeof(type) - 1] != '\0' && ctype[sizeof(type) - 1] != ';' &&
         ctype[sizeof(type) - 1] != ' '))
        return -1;
    if (body == NULL || len < 2 || len > 21 || body[len - 1] != '\n' || (body[0] == '0' && len > 2))
        return -1;
    for (size_t i = 0; i + 1 < len; i++) {
        unsigned d;

        if (body[i] < '0' || body[i] > '9')
            return -1;
        d = (unsigned)(body[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *size = v;
    return 0;
}

int sworn_witness_answer_cosignatures(const struct sworn_note_verifier *key, const char *note,
                                      size_t len, const char *body, size_t body_len, size_t max,
                                      char **out, size_t *out_len)
{
    char *cand;
    const char *p = body, *end = body + body_len;
    int taken = 0;

    if (body == NULL || body_len == 0)
        return 0;
    cand = malloc(len + SWORN_WITNESS_ANSWER_LINE_MAX + 1);
    if (cand == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "witness answer: out of memory");
    memcpy(cand, note, len);
    while (p < end && (size_t)taken < max) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t line;
        struct sworn_note parsed;
        uint8_t by[1] = {0};

        if (nl == NULL)
            break; /* an unfinished last line is not a signature line */
        line = (size_t)(nl - p) + 1;
        if (line <= SWORN_WITNESS_ANSWER_LINE_MAX) {
            memcpy(cand + len, p, line);
            if (sworn_note_parse(cand, len + line, &parsed) == 0 &&
                sworn_note_verify(&parsed, key, 1, NULL, by, NULL) == 0 && by[0] &&
                (*out == NULL || memmem(*out, *out_len, p, line) == NULL)) {
                char *grown = realloc(*out, *out_len + line + 1);

                if (grown == NULL) {
                    free(cand);
                    return sworn_err_set(SWORN_ERR_NOMEM, "witness answer: out of memory");
                }
                memcpy(grown + *out_len, p, line);
                *out_len += line;
                grown[*out_len] = '\0';
                *out = grown;
                taken++;
            }
        }
        p = nl + 1;
    }
    free(cand);
    return taken;
}
