/*
 * benchreq.h -- the one request the decisiond benches send (bench_decisiond, bench_cpu):
 * principal bench-agent in sandbox bench, operation http.request, GET http://127.0.0.1:8080
 * /allowed/bench, and the policy that allows it (bench_allow_all_policy). One definition, so that
 * both benches measure the same decision and a receipt check rebuilds the same request.
 *
 * The request points into the caller's struct bench_request (and at id, which the caller keeps),
 * so nothing is allocated and nothing needs freeing. Thread-safe: no state of its own.
 */
#ifndef SWORN_BENCHREQ_H
#define SWORN_BENCHREQ_H

#include "sworn.pb-c.h"

#define BENCH_REQ_METHOD "GET"
#define BENCH_REQ_SCHEME "http"
#define BENCH_REQ_HOST "127.0.0.1"
#define BENCH_REQ_PORT 8080
#define BENCH_REQ_PATH "/allowed/bench"

struct bench_request {
    Sworn__V1__AuthorizationRequest req; /* what to pack or send */
    Sworn__V1__Principal pr;
    Sworn__V1__Resource res;
    Sworn__V1__Context ctx;
};

/* The policy the benches' stacks run: every request is allowed, so every decision carries a
 * receipt (a YAML document, docs/policy.md). */
extern const char bench_allow_all_policy[];

/* Fill b with the bench's request under request id id (which must outlive b's use). */
void bench_request_init(struct bench_request *b, char *id);

#endif
