/*
 * p_decide.h -- one agent connection's link to decisiond's decision socket (docs/protocol.md):
 * a request goes out framed, its answer is read incrementally (wire/frame.h's decoder) and
 * handed to the caller's callback, exactly once per request.
 *
 * One request in flight at a time (an HTTP/1.1 connection is serial). The link connects on the
 * first request and stays open for the next; it is closed after any failure, so a late answer to
 * a request given up on can never be taken for the answer to the next one (decisiond answers in
 * order). Deadlines (docs/proxy.md, "Escalations"): connecting and writing the request must
 * finish within decisiond.timeout; the answer must come within decisiond.escalation_max, since
 * decisiond sends nothing while a request is held for an operator.
 *
 * The outcome handed to the callback is one of:
 *   SWORN_PDECIDE_ANSWER   a Decision for this request id (owned by the link until the callback
 *                          returns; the credential's bytes are wiped after it);
 *   SWORN_PDECIDE_FAILED   no decision: unreachable, timed out, an ErrorFrame, a stream out of
 *                          step, an answer for another id. The request must fail closed.
 *
 * Memory: the link holds the frame decoder's buffer (at most the answer's size) and the packed
 * request until it is written. Thread safety: the event loop's thread only.
 */
#ifndef SWORN_P_DECIDE_H
#define SWORN_P_DECIDE_H

#include <stdint.h>

#include "frame.h"
#include "p_metrics.h"
#include "sworn.pb-c.h"

struct event_base;
struct bufferevent;
struct event;

#define SWORN_PDECIDE_FIELDS_MAX 8u /* tokens of one exchange (SWORN_FRAME_EXCHANGE_MAX) */
#define SWORN_PDECIDE_FIELD_LEN 32u /* a token's field name, with its NUL */

enum sworn_pdecide_outcome { SWORN_PDECIDE_ANSWER = 1, SWORN_PDECIDE_FAILED };

struct sworn_pdecide_result {
    enum sworn_pdecide_outcome outcome;
    const Sworn__V1__Decision *decision; /* ANSWER to sworn_pdecide_ask only */
    /* ANSWER to sworn_pdecide_exchange only: its symbolic tokens are wiped after the callback */
    const Sworn__V1__TokenExchangeResult *exchange;
    enum sworn_pmetrics_failure failure; /* FAILED only */
    const char *why;                     /* FAILED: a static sentence for the agent and the log */
    double seconds;                      /* from the request to its outcome */
};

typedef void (*sworn_pdecide_cb)(void *arg, const struct sworn_pdecide_result *r);

struct sworn_pdecide {
    struct event_base *base;
    const char *socket_path;
    uint64_t timeout_ms, answer_ms;
    struct bufferevent *bev;
    struct event *timer;
    struct sworn_frame_dec dec;
    int connected, in_flight;
    int exchanging; /* the request in flight is a TokenExchange: its fields, in order */
    char fields[SWORN_PDECIDE_FIELDS_MAX][SWORN_PDECIDE_FIELD_LEN];
    size_t n_fields;
    char request_id[SWORN_FRAME_ID_MAX + 1];
    double started;
    sworn_pdecide_cb cb;
    void *cb_arg;
};

/* Set the link up (nothing is connected yet). Returns 0, or -1 (SWORN_ERR_NOMEM). */
int sworn_pdecide_init(struct sworn_pdecide *d, struct event_base *base, const char *socket_path,
                       uint64_t timeout_ms, uint64_t answer_ms);

/*
 * Send req (its request_id is the one the answer must carry). cb(arg, result) is called exactly
 * once, later, from the loop (never from inside this call), unless the link is freed first.
 * Returns 0, or -1 when the request cannot even be packed (sworn_err set; no callback).
 */
int sworn_pdecide_ask(struct sworn_pdecide *d, const Sworn__V1__AuthorizationRequest *req,
                      sworn_pdecide_cb cb, void *arg);

/*
 * Send a TokenExchange (docs/proxy.md, "OAuth token endpoints"): as sworn_pdecide_ask, but the
 * answer is a TokenExchangeResult for ex->request_id holding exactly one minted token per token
 * sent, with the same fields in the same order (else FAILED: out of step); an ErrorFrame (the
 * exchange refused and recorded by decisiond) is FAILED with SWORN_PMETRICS_ERROR_FRAME. The
 * packed frame holds the real tokens: it is wiped once written.
 */
int sworn_pdecide_exchange(struct sworn_pdecide *d, const Sworn__V1__TokenExchange *ex,
                           sworn_pdecide_cb cb, void *arg);

/* Is a request in flight? */
int sworn_pdecide_busy(const struct sworn_pdecide *d);

/* Close the link (a request in flight is dropped without its callback). d may be set up again. */
void sworn_pdecide_free(struct sworn_pdecide *d);

#endif
