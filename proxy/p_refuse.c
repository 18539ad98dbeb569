/*
 * p_refuse.c -- a refusal, recorded as a DENY (p_refuse.h).
 */
#include "p_refuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <openssl/evp.h>

static void on_answer(void *arg, const struct sworn_pdecide_result *r)
{
    struct sworn_prefuse *f = arg;
    struct sworn_prefuse_result out = {0};

    out.status = f->status;
    if (r->outcome == SWORN_PDECIDE_ANSWER &&
        r->decision->effect == SWORN__V1__EFFECT__EFFECT_DENY) {
        out.recorded = 1;
        out.log_index = r->decision->log_index;
    }
    f->cb(f->arg, &out);
}

static void on_later(evutil_socket_t fd, short what, void *arg)
{
    struct sworn_prefuse *f = arg;
    struct sworn_prefuse_result out = {0};

    (void)fd;
    (void)what;
    out.status = f->status;
    f->cb(f->arg, &out);
}

/* A status within ProxyRefusal's 400..599. */
static int wire_status(int status)
{
    return status >= 400 && status <= 599 ? status : 400;
}

void sworn_prefuse_start(struct sworn_prefuse *f, struct sworn_pdecide *d, struct sworn_pbuild *b,
                         const struct sworn_prefuse_in *in, sworn_prefuse_cb cb, void *arg)
{
    struct sworn_pbuild_in bin = {0};
    const char *why = NULL;

    f->cb = cb;
    f->arg = arg;
    f->status = in->status;
    if (f->later == NULL)
        f->later = evtimer_new(d->base, on_later, f);
    if (f->later == NULL)
        abort(); /* out of memory with no way to tell the connection: stop, fail closed */
    bin.request_id = in->request_id;
    bin.principal = in->principal;
    bin.sandbox = in->sandbox;
    bin.uid = in->uid;
    bin.sandbox_start_index = in->sandbox_start_index;
    bin.operation = in->operation;
    bin.scheme = in->scheme;
    bin.host = in->host;
    bin.port = in->port;
    bin.path = in->path;
    bin.method = in->method;
    bin.time_unix_ms = in->time_unix_ms;
    if (sworn_pbuild_request(b, &bin, &why) != 0) {
        /* Too long to carry: record the refusal without the target. */
        bin.scheme = bin.host = bin.path = bin.method = "";
        bin.port = 0;
        if (sworn_pbuild_request(b, &bin, &why) != 0) {
            event_active(f->later, EV_TIMEOUT, 1);
            return;
        }
    }
    sworn__v1__proxy_refusal__init(&f->pb);
    f->pb.status = (uint32_t)wire_status(in->status);
    snprintf(f->reason, sizeof(f->reason), "%s", in->why);
    f->pb.reason = f->reason;
    if (in->head != NULL &&
        EVP_Digest(in->head, in->head_len, f->head_sha, NULL, EVP_sha256(), NULL) == 1) {
        f->pb.head_sha256.data = f->head_sha;
        f->pb.head_sha256.len = 32;
    }
    b->req.refusal = &f->pb;
    if (sworn_pdecide_busy(d) || sworn_pdecide_ask(d, &b->req, on_answer, f) != 0)
        event_active(f->later, EV_TIMEOUT, 1);
}

void sworn_prefuse_free(struct sworn_prefuse *f)
{
    if (f->later != NULL)
        event_free(f->later);
    memset(f, 0, sizeof(*f));
}
