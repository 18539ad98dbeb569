/*
 * p_musage.h -- the token usage of a model API response, read from the bytes the proxy relays
 * without holding any back (docs/proxy.md, "Model APIs: reading the usage").
 *
 * The reader is fed the response body as it passes to the agent (after the chunked framing is
 * removed; Content-Length or until close alike) and keeps at most SWORN_PMUSAGE_BUF_MAX bytes of
 * it: the whole body of a JSON response, or one event of an SSE stream (Content-Type
 * text/event-stream; events are lines, "data:" lines joined with '\n', a blank line ends one).
 *
 * Where the usage is (the shape is the request's, p_model.h):
 *   openai.chat         JSON: /usage/prompt_tokens and /usage/completion_tokens; SSE: the same
 *                       in any chunk whose "usage" is an object (stream_options.include_usage)
 *   openai.responses    JSON: /usage/input_tokens and /usage/output_tokens; SSE: the same under
 *                       /response/usage of any event that has it (response.completed)
 *   anthropic.messages  JSON: /usage/input_tokens and /usage/output_tokens; SSE: the same under
 *                       /message/usage (message_start) and /usage (message_delta)
 * Each count must be a JSON integer 0..4294967295. Counts are cumulative, so where a stream
 * reports one several times the largest is taken (a dishonest second report can raise the charge,
 * never lower it). An SSE event whose data is not strict JSON (e.g. "[DONE]") is not usage and is
 * passed over.
 *
 * The usage is reported when the body ended where its framing says, both counts were read, and
 * nothing made them unreadable. Otherwise the result is "not reported" with one static sentence:
 *   "the response ended before its end"            (the upstream or the agent went away)
 *   "the response reports no usage"                (no usage object, or only one of the counts)
 *   "the response's usage is not an integer of 0..4294967295" (negative, a fraction, an exponent,
 *                                                   a string, too large: sticky)
 *   "the response body is not strict JSON"         (a JSON response; duplicate names included)
 *   "the response body is larger than the usage reader's bound" (a JSON body or an SSE event
 *                                                   over SWORN_PMUSAGE_BUF_MAX; sticky for JSON,
 *                                                   for SSE only when no usage was read)
 *   "the proxy holds its bound of usage buffers for all responses (SWORN_PMUSAGE_HELD_MAX)"
 *                                                  (256 MiB for all responses together)
 *   "the response body is compressed (Content-Encoding)"
 * Memory: one growing buffer of at most SWORN_PMUSAGE_BUF_MAX bytes. Event loop thread only.
 */
#ifndef SWORN_P_MUSAGE_H
#define SWORN_P_MUSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "p_model.h"

#define SWORN_PMUSAGE_BUF_MAX (4u * 1024u * 1024u)
/* What all the readers of one proxy may hold together (sworn_pmusage_share). */
#define SWORN_PMUSAGE_HELD_MAX (256u * 1024u * 1024u)

struct sworn_pmusage {
    enum sworn_pmodel_api api;
    int sse;
    uint8_t *buf; /* JSON: the body so far; SSE: the current event's data */
    size_t len, cap;
    uint8_t line[64]; /* SSE: the start of the current line (its field name) */
    size_t line_len;
    int in_data;    /* SSE: the current line is a "data:" line; its value goes to buf */
    int skip_space; /* SSE: drop one space after "data:" */
    int line_over;  /* SSE: the current line is not one the reader keeps */
    int event_over; /* SSE: the current event is over the bound: skipped */
    int have_in, have_out;
    uint64_t in, out;
    /* anthropic.messages: the input its prompt cache wrote and read, reported apart from
     * input_tokens (cache_creation_input_tokens, cache_read_input_tokens; 0 when absent), added
     * to the input at the end: they are input tokens spent all the same. */
    uint64_t cache_write, cache_read;
    const char *bad; /* a sticky reason the usage is unreadable, or NULL */
    int overflowed;  /* SSE: an event was skipped for its size */
    size_t *held;    /* the bytes all readers sharing it hold (sworn_pmusage_share), or NULL */
    int all_full;    /* a growth was refused for the bound of all readers together */
    /* JSON: a scan of the body's top level as it passes, for its "usage" member, which needs no
     * buffer but the member's value: used when the body passes the bound (red team rt-A: an
     * agent that asks for logprobs, n choices or audio made the usage unreadable, and its input
     * tokens uncharged). */
    int js_over; /* the body passed the bound: the scan's usage is the one read */
    int js_depth, js_in_str, js_esc, js_expect_name, js_naming, js_name_esc, js_next, js_cap;
    uint8_t js_name[8];
    size_t js_name_len;
    unsigned js_usages;   /* top-level "usage" members seen */
    int js_odd;           /* a top-level member name with an escape (could spell usage) */
    int js_cap_over;      /* the usage value is longer than js_val */
    uint8_t js_val[4096]; /* the usage member's value */
    size_t js_val_len;
};

/*
 * Start reading a response body of a model call of shape api. content_type/encoding: the
 * response's Content-Type and Content-Encoding values (NULL when absent).
 */
void sworn_pmusage_init(struct sworn_pmusage *u, enum sworn_pmodel_api api,
                        const char *content_type, size_t ct_len, const char *encoding,
                        size_t enc_len);

/*
 * Count this reader's buffer in *held, the bytes all readers of the proxy hold together (the
 * caller's counter, 0 at the start): a growth that would take it above SWORN_PMUSAGE_HELD_MAX is
 * refused as a body over the bound ("the proxy holds its bound of usage buffers for all
 * responses (SWORN_PMUSAGE_HELD_MAX)"), so many responses at once cannot take the proxy's
 * memory. Call it right after sworn_pmusage_init.
 */
void sworn_pmusage_share(struct sworn_pmusage *u, size_t *held);

/* Read n more bytes of the body. Returns 0, or -1 when memory ran out (the usage is then
 * "not reported"; the bytes still go to the agent). */
int sworn_pmusage_feed(struct sworn_pmusage *u, const uint8_t *p, size_t n);

/*
 * The result: complete is 1 when the body ended where its framing says. Returns 1 with *in and
 * *out (reported), or 0 with *missing a static sentence. Frees the buffer.
 */
int sworn_pmusage_finish(struct sworn_pmusage *u, int complete, uint64_t *in, uint64_t *out,
                         const char **missing);

/* Free the buffer (any time; finish does it too). */
void sworn_pmusage_free(struct sworn_pmusage *u);

#endif
