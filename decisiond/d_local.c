/*
 * d_local.c -- the in-process entry point (d_local.h). One local connection per request: it is
 * closed once its answer is in, as a client that hangs up after its answer would be.
 */
#include "d_local.h"

#include <stdlib.h>
#include <unistd.h>

#include "d_conn.h"
#include "d_daemon.h"
#include "d_dispatch.h"
#include "err.h"

struct local_call {
    struct d_conn *conn;
    d_local_decision_fn on_decision;
    d_local_admin_fn on_admin;
    void *arg;
};

/* The connection's answer (a frame body): decode it for the caller, then close. */
static void answered(void *arg, const uint8_t *body, size_t len)
{
    struct local_call *lc = arg;

    if (lc->on_decision != NULL) {
        Sworn__V1__DecisionReply *r = sworn_frame_unpack_reply(body, len);

        lc->on_decision(lc->arg, r);
        if (r != NULL)
            sworn__v1__decision_reply__free_unpacked(r, NULL);
    } else {
        Sworn__V1__AdminResponse *r = sworn_frame_unpack_admin_response(body, len);

        lc->on_admin(lc->arg, r);
        if (r != NULL)
            sworn__v1__admin_response__free_unpacked(r, NULL);
    }
    d_conn_close(lc->conn); /* no answer comes after this one: the sink is never called again */
    free(lc);
}

/*
 * Hand frame (a whole frame, freed here; NULL when packing failed) to a new local connection of
 * channel ops, whose answer goes to lc (freed here on failure, by answered() otherwise).
 */
static int submit(struct d_daemon *d, const struct d_channel_ops *ops, uid_t uid, uint8_t *frame,
                  size_t len, struct local_call *lc)
{
    struct d_conn *c;
    int rc;

    if (frame == NULL || lc == NULL) {
        if (lc == NULL)
            sworn_err_set(SWORN_ERR_NOMEM, "local call: out of memory");
        free(frame);
        free(lc);
        return -1;
    }
    c = d_conn_new_local(d, ops, uid, getpid(), answered, lc);
    if (c == NULL) {
        free(frame);
        free(lc);
        return sworn_err_set(SWORN_ERR_NOMEM, "local call: out of memory");
    }
    lc->conn = c;
    rc = d_conn_local_submit(c, frame + SWORN_FRAME_HDR_LEN, len - SWORN_FRAME_HDR_LEN);
    free(frame);
    return rc; /* a fresh connection has nothing in flight: it cannot fail */
}

int d_local_decide(struct d_daemon *d, const Sworn__V1__DecisionRequest *m, uid_t uid,
                   d_local_decision_fn on_answer, void *arg)
{
    struct local_call *lc = calloc(1, sizeof(*lc));
    uint8_t *frame = NULL;
    size_t len = 0;

    if (lc != NULL) {
        lc->on_decision = on_answer;
        lc->arg = arg;
    }
    if (sworn_frame_pack_decision_request(m, &frame, &len) < 0) {
        free(lc);
        return -1;
    }
    return submit(d, &d_decision_channel, uid, frame, len, lc);
}

int d_local_admin(struct d_daemon *d, const Sworn__V1__AdminRequest *m, uid_t uid,
                  d_local_admin_fn on_answer, void *arg)
{
    struct local_call *lc = calloc(1, sizeof(*lc));
    uint8_t *frame = NULL;
    size_t len = 0;

    if (lc != NULL) {
        lc->on_admin = on_answer;
        lc->arg = arg;
    }
    if (sworn_frame_pack_admin_request(m, &frame, &len) < 0) {
        free(lc);
        return -1;
    }
    return submit(d, &d_admin_channel, uid, frame, len, lc);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    *(int *)arg = 1;
}

int d_local_wait(struct d_daemon *d, const int *flag, int timeout_ms)
{
    int expired = 0;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    struct event *t = evtimer_new(d->base, on_deadline, &expired);

    if (t == NULL || evtimer_add(t, &tv) != 0) {
        if (t != NULL)
            event_free(t);
        return sworn_err_set(SWORN_ERR_NOMEM, "local wait: cannot arm the deadline");
    }
    while (!*flag && !expired)
        event_base_loop(d->base, EVLOOP_ONCE);
    event_free(t);
    if (!*flag)
        return sworn_err_set(SWORN_ERR_IO, "no answer within %d ms", timeout_ms);
    return 0;
}
