/*
 * err.h -- the one error convention of sworn's recording side.
 *
 * A function that can fail returns 0 (or a length, or a pointer) on success and -1 (or NULL) on
 * failure, and records why in a thread-local error slot at the place where the failure happened.
 * The caller that finally reports the error reads the slot with sworn_err_code() and
 * sworn_err_msg(). Library code never exits or prints; only main() does.
 *
 * SWORN_GUARD and SWORN_ENSURE keep the success path running straight down a function with one
 * `fail:` label at its end, as s2n-tls does.
 *
 * Thread safety: the slot is per thread (C11 _Thread_local), so threads never see each other's
 * errors.
 */
#ifndef SWORN_ERR_H
#define SWORN_ERR_H

#include <stddef.h>

enum sworn_err_code {
    SWORN_OK = 0,
    SWORN_ERR_ARG,     /* the caller broke a documented precondition */
    SWORN_ERR_FORMAT,  /* input bytes are not of the documented format */
    SWORN_ERR_RANGE,   /* a value is outside the allowed range (size, index, length) */
    SWORN_ERR_VERIFY,  /* a signature, proof or hash did not verify */
    SWORN_ERR_CORRUPT, /* stored data contradicts itself: damaged disk or a bug */
    SWORN_ERR_IO,      /* the operating system or the storage engine failed */
    SWORN_ERR_NOMEM,   /* an allocation failed */
    SWORN_ERR_CRYPTO,  /* the crypto library failed (not a verification failure) */
    SWORN_ERR_NOTFOUND /* the thing asked for does not exist */
};

#define SWORN_ERR_MSG_MAX 256

/*
 * Record an error in this thread's slot. The message is formatted like printf and truncated to
 * SWORN_ERR_MSG_MAX - 1 bytes; it may include sworn_err_msg() itself, to add context to an error.
 * Always returns -1 so that `return sworn_err_set(...)` reads well.
 */
int sworn_err_set(enum sworn_err_code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The code of the last error recorded in this thread (SWORN_OK if none since sworn_err_clear). */
enum sworn_err_code sworn_err_code(void);

/* The message of the last error recorded in this thread; never NULL. */
const char *sworn_err_msg(void);

/* A short stable name for a code, for logs and JSON reports ("format", "verify", ...). */
const char *sworn_err_name(enum sworn_err_code code);

/* Forget the last error of this thread. */
void sworn_err_clear(void);

/* Run an expression returning int; on a negative result jump to fail (the error is already set). */
#define SWORN_GUARD(x)                                                                             \
    do {                                                                                           \
        if ((x) < 0)                                                                               \
            goto fail;                                                                             \
    } while (0)

/* Check a condition; when it does not hold, record the error and jump to fail. */
#define SWORN_ENSURE(cond, code, ...)                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            sworn_err_set((code), __VA_ARGS__);                                                    \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

#endif
