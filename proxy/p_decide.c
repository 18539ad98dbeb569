/*
 * p_decide.c -- the decisiond link of one agent connection (p_decide.h).
 */
#include "p_decide.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "err.h"
#include "wipe.h"

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void drop_link(struct sworn_pdecide *d)
{
    if (d->bev != NULL) {
        bufferevent_free(d->bev);
        d->bev = NULL;
    }
    sworn_frame_dec_free(&d->dec);
    sworn_frame_dec_init(&d->dec);
    d->connected = 0;
}

/* End the request in flight with a failure; the link is closed (answers are in order). */
static void fail(struct sworn_pdecide *d, enum sworn_pmetrics_failure why, const char *text)
{
    struct sworn_pdecide_result r = {0};
    sworn_pdecide_cb cb = d->cb;
    void *arg = d->cb_arg;

    drop_link(d);
    evtimer_del(d->timer);
    if (!d->in_flight)
        return;
    d->in_flight = 0;
    r.outcome = SWORN_PDECIDE_FAILED;
    r.failure = why;
    r.why = text;
    r.seconds = now_seconds() - d->started;
    cb(arg, &r);
}

static void wipe_decision(Sworn__V1__DecisionReply *m)
{
    if (m->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION && m->decision != NULL &&
        m->decision->credential != NULL && m->decision->credential->value.data != NULL)
        sworn_memzero(m->decision->credential->value.data, m->decision->credential->value.len);
    if (m->body_case == SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE && m->token_exchange != NULL)
        for (size_t i = 0; i < m->token_exchange->n_tokens; i++)
            if (m->token_exchange->tokens[i]->symbolic != NULL)
                sworn_memzero(m->token_exchange->tokens[i]->symbolic,
                              strlen(m->token_exchange->tokens[i]->symbolic));
}

/* Is m the answer to the exchange in flight: its id, one minted token per token sent, in order? */
static int exchange_matches(const struct sworn_pdecide *d, const Sworn__V1__DecisionReply *m)
{
    const Sworn__V1__TokenExchangeResult *t = m->token_exchange;

    if (m->body_case != SWORN__V1__DECISION_REPLY__BODY_TOKEN_EXCHANGE || t == NULL ||
        strcmp(t->request_id, d->request_id) != 0 || t->n_tokens != d->n_fields)
        return 0;
    for (size_t i = 0; i < t->n_tokens; i++)
        if (strcmp(t->tokens[i]->field, d->fields[i]) != 0)
            return 0;
    return 1;
}

/* Is m the final decision of the request in flight? (An ESCALATE answer is never final:
 * decisiond sends the final one after the operator.) */
static int decision_matches(const struct sworn_pdecide *d, const Sworn__V1__DecisionReply *m)
{
    return m->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION &&
           strcmp(m->decision->request_id, d->request_id) == 0 &&
           (m->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW ||
            m->decision->effect == SWORN__V1__EFFECT__EFFECT_DENY);
}

/* A whole answer body came: the answer to the request in flight goes to its callback; any other
 * fails the connection (fail). Either way the reply is wiped before it is freed. */
static void on_answer(struct sworn_pdecide *d, const uint8_t *body, size_t len)
{
    Sworn__V1__DecisionReply *m = sworn_frame_unpack_reply(body, len);
    struct sworn_pdecide_result r = {0};
    sworn_pdecide_cb cb = d->cb;
    void *arg = d->cb_arg;
    const char *wrong = NULL;
    enum sworn_pmetrics_failure metric = SWORN_PMETRICS_OUT_OF_STEP;

    sworn_frame_dec_release(&d->dec); /* the body may hold a credential: wiped now */
    if (m == NULL) {
        fail(d, SWORN_PMETRICS_OUT_OF_STEP, "decisiond's answer does not decode");
        return;
    }
    if (!d->in_flight) {
        wrong = "decisiond answered a request not asked";
    } else if (m->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR) {
        wrong = "decisiond refused the request";
        metric = SWORN_PMETRICS_ERROR_FRAME;
    } else if (d->exchanging) {
        if (exchange_matches(d, m))
            r.exchange = m->token_exchange;
        else
            wrong = "decisiond's answer is not this exchange's result";
    } else if (decision_matches(d, m)) {
        r.decision = m->decision;
    } else {
        wrong = "decisiond's answer is not this request's decision";
    }
    if (wrong == NULL) {
        evtimer_del(d->timer);
        d->in_flight = 0;
        r.outcome = SWORN_PDECIDE_ANSWER;
        r.seconds = now_seconds() - d->started;
        cb(arg, &r);
    }
    wipe_decision(m);
    sworn__v1__decision_reply__free_unpacked(m, NULL);
    if (wrong != NULL)
        fail(d, metric, wrong);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct sworn_pdecide *d = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (d->bev == bev && evbuffer_get_length(in) > 0) {
        size_t n = evbuffer_get_contiguous_space(in);
        const uint8_t *body = NULL;
        size_t len = 0;
        long used =
            sworn_frame_dec_feed(&d->dec, evbuffer_pullup(in, (ev_ssize_t)n), n, &body, &len);

        if (used < 0) {
            fail(d, SWORN_PMETRICS_OUT_OF_STEP, "decisiond's answer is not a frame");
            return;
        }
        evbuffer_drain(in, (size_t)used);
        if (body != NULL) {
            /* The callback may free the link's owner (and d with it): nothing after it. One
             * request is in flight, so nothing more is due; a stray byte is read with the next. */
            on_answer(d, body, len);
            return;
        }
    }
}

static void on_write(struct bufferevent *bev, void *arg)
{
    struct sworn_pdecide *d = arg;

    (void)bev;
    /* The request is written: from now on the answer's deadline runs. */
    if (d->in_flight) {
        struct timeval tv = {(time_t)(d->answer_ms / 1000),
                             (suseconds_t)(d->answer_ms % 1000) * 1000};

        evtimer_add(d->timer, &tv);
    }
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct sworn_pdecide *d = arg;

    (void)bev;
    if (what & BEV_EVENT_CONNECTED) {
        d->connected = 1;
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        fail(d, d->connected ? SWORN_PMETRICS_UNREACHABLE : SWORN_PMETRICS_UNREACHABLE,
             "decisiond closed the connection or cannot be reached");
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct sworn_pdecide *d = arg;

    (void)fd;
    (void)what;
    if (d->bev == NULL)
        fail(d, SWORN_PMETRICS_UNREACHABLE, "decisiond cannot be reached");
    else
        fail(d, SWORN_PMETRICS_TIMEOUT, "decisiond did not answer in time");
}

int sworn_pdecide_init(struct sworn_pdecide *d, struct event_base *base, const char *socket_path,
                       uint64_t timeout_ms, uint64_t answer_ms)
{
    memset(d, 0, sizeof(*d));
    d->base = base;
    d->socket_path = socket_path;
    d->timeout_ms = timeout_ms;
    d->answer_ms = answer_ms;
    sworn_frame_dec_init(&d->dec);
    d->timer = evtimer_new(base, on_timer, d);
    SWORN_ENSURE(d->timer != NULL, SWORN_ERR_NOMEM, "evtimer_new failed");
    return 0;
fail:
    return -1;
}

static int open_link(struct sworn_pdecide *d)
{
    struct sockaddr_un sun = {0};
    size_t n = strlen(d->socket_path);

    if (n >= sizeof(sun.sun_path))
        return -1;
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, d->socket_path, n + 1);
    d->bev = bufferevent_socket_new(d->base, -1, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (d->bev == NULL)
        return -1;
    bufferevent_setcb(d->bev, on_read, on_write, on_event, d);
    if (bufferevent_enable(d->bev, EV_READ | EV_WRITE) != 0 ||
        bufferevent_socket_connect(d->bev, (struct sockaddr *)&sun, (int)sizeof(sun)) != 0) {
        /* bufferevent_socket_connect frees nothing on failure; the bev is ours to drop. */
        drop_link(d);
        return -1;
    }
    return 0;
}

/* Send the packed frame (wiped and freed here) for request id; the answer goes to cb. */
static int send_frame(struct sworn_pdecide *d, uint8_t *frame, size_t frame_len, const char *id,
                      sworn_pdecide_cb cb, void *arg);

int sworn_pdecide_ask(struct sworn_pdecide *d, const Sworn__V1__AuthorizationRequest *req,
                      sworn_pdecide_cb cb, void *arg)
{
    uint8_t *frame = NULL;
    size_t frame_len = 0;

    SWORN_ENSURE(!d->in_flight, SWORN_ERR_ARG, "a decision is already in flight");
    SWORN_GUARD(sworn_frame_pack_authorize(req, &frame, &frame_len));
    d->exchanging = 0;
    return send_frame(d, frame, frame_len, req->request_id, cb, arg);
fail:
    return -1;
}

int sworn_pdecide_exchange(struct sworn_pdecide *d, const Sworn__V1__TokenExchange *ex,
                           sworn_pdecide_cb cb, void *arg)
{
    uint8_t *frame = NULL;
    size_t frame_len = 0;

    SWORN_ENSURE(!d->in_flight, SWORN_ERR_ARG, "a decision is already in flight");
    SWORN_ENSURE(ex->n_tokens >= 1 && ex->n_tokens <= SWORN_PDECIDE_FIELDS_MAX, SWORN_ERR_RANGE,
                 "a token exchange of %zu tokens", ex->n_tokens);
    SWORN_GUARD(sworn_frame_pack_token_exchange(ex, &frame, &frame_len));
    d->exchanging = 1;
    d->n_fields = ex->n_tokens;
    for (size_t i = 0; i < ex->n_tokens; i++)
        snprintf(d->fields[i], sizeof(d->fields[i]), "%s", ex->tokens[i]->field);
    return send_frame(d, frame, frame_len, ex->request_id, cb, arg);
fail:
    return -1;
}

static int send_frame(struct sworn_pdecide *d, uint8_t *frame, size_t frame_len, const char *id,
                      sworn_pdecide_cb cb, void *arg)
{
    struct timeval tv = {(time_t)(d->timeout_ms / 1000),
                         (suseconds_t)(d->timeout_ms % 1000) * 1000};

    snprintf(d->request_id, sizeof(d->request_id), "%s", id);
    d->cb = cb;
    d->cb_arg = arg;
    d->in_flight = 1;
    d->started = now_seconds();
    if (d->bev == NULL && open_link(d) != 0) {
        sworn_memzero(frame, frame_len);
        free(frame);
        /* Reported from the loop, as the contract says: the timer fires at once. */
        event_active(d->timer, EV_TIMEOUT, 1);
        return 0;
    }
    if (bufferevent_write(d->bev, frame, frame_len) != 0) {
        sworn_memzero(frame, frame_len);
        free(frame);
        drop_link(d);
        event_active(d->timer, EV_TIMEOUT, 1);
        return 0;
    }
    /* A TokenExchange's frame holds real tokens: the copy libevent keeps is in its output
     * buffer until written (its chains are not wiped: libevent's limit, docs/proxy.md). */
    sworn_memzero(frame, frame_len);
    free(frame);
    evtimer_add(d->timer, &tv); /* connecting and sending; on_write moves it to answer_ms */
    return 0;
}

int sworn_pdecide_busy(const struct sworn_pdecide *d)
{
    return d->in_flight;
}

void sworn_pdecide_free(struct sworn_pdecide *d)
{
    drop_link(d);
    sworn_frame_dec_free(&d->dec);
    if (d->timer != NULL)
        event_free(d->timer);
    d->timer = NULL;
    d->in_flight = 0;
}
