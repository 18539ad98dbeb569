/*
 * benchreq.c -- the decisiond benches' request (contract in benchreq.h).
 */
#include "benchreq.h"

const char bench_allow_all_policy[] =
    "# the decisiond benches: every request is allowed, so every decision carries a receipt.\n"
    "version: 1\n"
    "rules:\n"
    "  - id: bench-allow-all\n"
    "    effect: allow\n"
    "    reason: \"bench: every request is allowed\"\n";

void bench_request_init(struct bench_request *b, char *id)
{
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__Context ctx = SWORN__V1__CONTEXT__INIT;

    b->req = req;
    b->pr = pr;
    b->res = res;
    b->ctx = ctx;
    b->req.request_id = id;
    b->pr.id = "bench-agent";
    b->pr.sandbox = "bench";
    b->req.principal = &b->pr;
    b->req.operation = "http.request";
    b->res.scheme = BENCH_REQ_SCHEME;
    b->res.host = BENCH_REQ_HOST;
    b->res.port = BENCH_REQ_PORT;
    b->res.path = BENCH_REQ_PATH;
    b->req.resource = &b->res;
    b->ctx.method = BENCH_REQ_METHOD;
    b->req.context = &b->ctx;
    b->req.time_unix_ms = 1;
}
