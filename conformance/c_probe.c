/*
 * c_probe.c -- the result helpers of c_probe.h.
 */
#include "c_probe.h"

#include <stdarg.h>
#include <stdio.h>

enum c_outcome c_result_set(struct c_result *r, enum c_outcome outcome, const char *fmt, ...)
{
    va_list ap;

    r->outcome = outcome;
    va_start(ap, fmt);
    (void)vsnprintf(r->observed, sizeof(r->observed), fmt, ap);
    va_end(ap);
    return outcome;
}

void c_evidence(struct c_result *r, const char *fmt, ...)
{
    va_list ap;

    if (r->nevidence == C_EVIDENCE_MAX) {
        r->evidence_dropped++;
        return;
    }
    va_start(ap, fmt);
    (void)vsnprintf(r->evidence[r->nevidence++], C_EVIDENCE_ITEM_MAX, fmt, ap);
    va_end(ap);
}

const char *c_outcome_name(enum c_outcome o)
{
    switch (o) {
    case C_PASS:
        return "pass";
    case C_FAIL:
        return "fail";
    case C_SKIPPED:
        return "skipped";
    case C_ERROR:
        return "error";
    default:
        return "error";
    }
}

int c_scratch_path(struct c_ctx *ctx, const char *name, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%u-%s", ctx->scratch, ++ctx->scratch_seq, name);

    return n < 0 || (size_t)n >= cap ? -1 : 0;
}
