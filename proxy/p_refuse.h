/*
 * p_refuse.h -- recording a request the proxy refuses itself (docs/proxy.md, "Refusals"): bad
 * framing, a smuggling spelling, a head or body over its limit, domain fronting, two symbolic
 * tokens. What could be read of the request goes to decisiond with an AuthorizationRequest
 * .refusal (the status, the parser's static sentence, the SHA-256 of the head as received), and
 * decisiond records a DENY without evaluating the policy (rule "", reason "refused by the proxy:
 * <sentence>"). The agent then gets the status whatever decisiond answered: a refusal never lets
 * anything through, recorded or not; when it could not be recorded the proxy's own log line
 * says so.
 *
 * Thread safety: the event loop's thread only.
 */
#ifndef SWORN_P_REFUSE_H
#define SWORN_P_REFUSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "p_build.h"
#include "p_decide.h"

struct event;

struct sworn_prefuse_in {
    const char *request_id;
    const char *principal, *sandbox;
    uid_t uid;
    uint64_t sandbox_start_index; /* as sworn_pbuild_in's */
    const char *operation;
    const char *scheme, *host; /* as far as they could be read ("" when not) */
    uint32_t port;             /* 0 when not read */
    const char *path, *method; /* "" when not read */
    int status;                /* 400..599 */
    const char *why;           /* the static sentence */
    const uint8_t *head;       /* the head as received (or what came of it); may be NULL */
    size_t head_len;
    uint64_t time_unix_ms;
};

struct sworn_prefuse_result {
    int status;   /* the status to answer (in->status) */
    int recorded; /* 1: decisiond recorded the deny at log_index */
    uint64_t log_index;
};

typedef void (*sworn_prefuse_cb)(void *arg, const struct sworn_prefuse_result *r);

/* One refusal in flight: kept by the connection (fields private). */
struct sworn_prefuse {
    sworn_prefuse_cb cb;
    void *arg;
    int status;
    Sworn__V1__ProxyRefusal pb;
    char reason[257];
    uint8_t head_sha[32];
    struct event *later; /* reports from the loop when nothing could be sent */
};

/*
 * Send the refusal on d (b holds the message's parts; f the refusal's). cb is called exactly
 * once, from the loop, unless sworn_prefuse_free comes first.
 */
void sworn_prefuse_start(struct sworn_prefuse *f, struct sworn_pdecide *d, struct sworn_pbuild *b,
                         const struct sworn_prefuse_in *in, sworn_prefuse_cb cb, void *arg);

/* Release f (no callback after this; free d too, or its answer is dropped). Safe when zeroed. */
void sworn_prefuse_free(struct sworn_prefuse *f);

#endif
