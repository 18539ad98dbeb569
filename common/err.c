/*
 * err.c -- the thread-local error slot described in err.h.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local enum sworn_err_code last_code;
static _Thread_local char last_msg[SWORN_ERR_MSG_MAX];

int sworn_err_set(enum sworn_err_code code, const char *fmt, ...)
{
    char msg[SWORN_ERR_MSG_MAX];
    va_list ap;

    /*
     * Format into a scratch buffer first: callers add context to an error with
     * sworn_err_set(code, "...: %s", sworn_err_msg()), whose argument is the slot itself.
     * Truncation is acceptable: the message is for humans, the code is for programs.
     */
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    memcpy(last_msg, msg, sizeof(msg));
    last_code = code;
    return -1;
}

enum sworn_err_code sworn_err_code(void)
{
    return last_code;
}

const char *sworn_err_msg(void)
{
    return last_code == SWORN_OK ? "no error" : last_msg;
}

const char *sworn_err_name(enum sworn_err_code code)
{
    switch (code) {
    case SWORN_OK:
        return "ok";
    case SWORN_ERR_ARG:
        return "argument";
    case SWORN_ERR_FORMAT:
        return "format";
    case SWORN_ERR_RANGE:
        return "range";
    case SWORN_ERR_VERIFY:
        return "verify";
    case SWORN_ERR_CORRUPT:
        return "corrupt";
    case SWORN_ERR_IO:
        return "io";
    case SWORN_ERR_NOMEM:
        return "nomem";
    case SWORN_ERR_CRYPTO:
        return "crypto";
    case SWORN_ERR_NOTFOUND:
        return "notfound";
    default:
        return "unknown";
    }
}

void sworn_err_clear(void)
{
    last_code = SWORN_OK;
    last_msg[0] = '\0';
}
