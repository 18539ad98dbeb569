/*
 * p_usage.c -- usage reports to decisiond (p_usage.h).
 */
#include "p_usage.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "err.h"
#include "frame.h"
#include "p_jlog.h"

struct report {
    struct report *next;
    char id[SWORN_FRAME_ID_MAX + 1];
    uint8_t *frame;
    size_t len;
};

struct sworn_pusage {
    struct event_base *base;
    const char *socket_path;
    struct bufferevent *bev;
    struct sworn_frame_dec dec;
    struct report *head, *tail; /* head: in flight when sent */
    int sent;
    size_t n;
};

static void log_report(const char *event, const char *id, const char *msg)
{
    json_object *o = json_object_new_object();

    if (o != NULL) {
        json_object_object_add(o, "request_id", json_object_new_string(id));
        if (msg != NULL)
            json_object_object_add(o, "msg", json_object_new_string(msg));
    }
    sworn_plog(SWORN_PLOG_WARN, event, o);
}

static void pop(struct sworn_pusage *r)
{
    struct report *h = r->head;

    if (h == NULL)
        return;
    r->head = h->next;
    if (r->head == NULL)
        r->tail = NULL;
    free(h->frame);
    free(h);
    r->n--;
    r->sent = 0;
}

static void drop_link(struct sworn_pusage *r)
{
    if (r->bev != NULL)
        bufferevent_free(r->bev);
    r->bev = NULL;
    sworn_frame_dec_free(&r->dec);
    sworn_frame_dec_init(&r->dec);
}

/* The link failed: every report queued is lost (their reservations stand). */
static void lose_all(struct sworn_pusage *r, const char *why)
{
    drop_link(r);
    while (r->head != NULL) {
        log_report("usage_report_lost", r->head->id, why);
        pop(r);
    }
}

static void send_next(struct sworn_pusage *r);

static void on_read(struct bufferevent *bev, void *arg)
{
    struct sworn_pusage *r = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    while (r->bev == bev && evbuffer_get_length(in) > 0) {
        size_t n = evbuffer_get_contiguous_space(in);
        const uint8_t *body = NULL;
        size_t len = 0;
        long used =
            sworn_frame_dec_feed(&r->dec, evbuffer_pullup(in, (ev_ssize_t)n), n, &body, &len);
        Sworn__V1__DecisionReply *m;

        if (used < 0) {
            lose_all(r, "decisiond's answer is not a frame");
            return;
        }
        evbuffer_drain(in, (size_t)used);
        if (body == NULL)
            continue;
        m = sworn_frame_unpack_reply(body, len);
        sworn_frame_dec_release(&r->dec);
        if (m == NULL || r->head == NULL || !r->sent) {
            if (m != NULL)
                sworn__v1__decision_reply__free_unpacked(m, NULL);
            lose_all(r, "decisiond's answer is out of step");
            return;
        }
        if (m->body_case == SWORN__V1__DECISION_REPLY__BODY_USAGE &&
            strcmp(m->usage->request_id, r->head->id) == 0) {
            json_object *o = json_object_new_object();

            if (o != NULL) {
                json_object_object_add(o, "request_id", json_object_new_string(r->head->id));
                json_object_object_add(o, "index",
                                       json_object_new_int64((int64_t)m->usage->log_index));
            }
            sworn_plog(SWORN_PLOG_INFO, "usage_recorded", o);
        } else {
            log_report("usage_report_refused", r->head->id,
                       m->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR ? m->error->message
                                                                             : "not its answer");
        }
        sworn__v1__decision_reply__free_unpacked(m, NULL);
        pop(r);
        send_next(r);
    }
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct sworn_pusage *r = arg;

    (void)bev;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        lose_all(r, "decisiond closed the connection or cannot be reached");
}

static int open_link(struct sworn_pusage *r)
{
    struct sockaddr_un sun = {0};
    size_t n = strlen(r->socket_path);

    if (n >= sizeof(sun.sun_path))
        return -1;
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, r->socket_path, n + 1);
    r->bev = bufferevent_socket_new(r->base, -1, BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
    if (r->bev == NULL)
        return -1;
    bufferevent_setcb(r->bev, on_read, NULL, on_event, r);
    if (bufferevent_enable(r->bev, EV_READ | EV_WRITE) != 0 ||
        bufferevent_socket_connect(r->bev, (struct sockaddr *)&sun, (int)sizeof(sun)) != 0) {
        drop_link(r);
        return -1;
    }
    return 0;
}

static void send_next(struct sworn_pusage *r)
{
    if (r->head == NULL || r->sent)
        return;
    if ((r->bev == NULL && open_link(r) != 0) ||
        bufferevent_write(r->bev, r->head->frame, r->head->len) != 0) {
        lose_all(r, "decisiond cannot be reached");
        return;
    }
    r->sent = 1;
}

struct sworn_pusage *sworn_pusage_new(struct event_base *base, const char *socket_path)
{
    struct sworn_pusage *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->base = base;
    r->socket_path = socket_path;
    sworn_frame_dec_init(&r->dec);
    return r;
}

void sworn_pusage_free(struct sworn_pusage *r)
{
    if (r == NULL)
        return;
    lose_all(r, "the proxy is stopping");
    sworn_frame_dec_free(&r->dec);
    free(r);
}

int sworn_pusage_send(struct sworn_pusage *r, const Sworn__V1__UsageReport *u)
{
    struct report *rp;

    if (r->n >= SWORN_PUSAGE_QUEUE_MAX) {
        log_report("usage_report_lost", u->request_id, "the report queue is full");
        return -1;
    }
    rp = calloc(1, sizeof(*rp));
    if (rp == NULL || sworn_frame_pack_usage_report(u, &rp->frame, &rp->len) != 0) {
        log_report("usage_report_lost", u->request_id,
                   rp == NULL ? "out of memory" : sworn_err_msg());
        free(rp);
        return -1;
    }
    snprintf(rp->id, sizeof(rp->id), "%s", u->request_id);
    if (r->tail != NULL)
        r->tail->next = rp;
    else
        r->head = rp;
    r->tail = rp;
    r->n++;
    send_next(r);
    return 0;
}

size_t sworn_pusage_pending(const struct sworn_pusage *r)
{
    return r == NULL ? 0 : r->n;
}
