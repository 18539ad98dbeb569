/*
 * policy_fixture.h -- what the policy, policy CLI, resource and vault tests share: a folder for
 * the test group with policy files written into it, and an authorization request built in place.
 *
 * Test code only: the helpers fail the running cmocka test on an error.
 */
#ifndef SWORN_POLICY_FIXTURE_H
#define SWORN_POLICY_FIXTURE_H

#include <stdint.h>

#include "policy.h"
#include "sworn.pb-c.h"

/* The group's folder: made by sworn_pfix_mkdir, removed (and set to NULL) by
 * sworn_pfix_teardown. */
extern char *sworn_pfix_dir;

/* Make sworn_pfix_dir, a new temporary folder whose name holds tag. */
void sworn_pfix_mkdir(const char *tag);

/* A cmocka group teardown: removes sworn_pfix_dir and all below it. */
int sworn_pfix_teardown(void **state);

/* Write text to <sworn_pfix_dir>/name (mode 0600); returns the path (free it). */
char *sworn_pfix_put(const char *name, const char *text);

/* Write text to <sworn_pfix_dir>/policy.yaml and load it; fails the test (with the error and the
 * text) when the policy is refused. */
struct sworn_policy *sworn_pfix_load(const char *text);

/* A request as the proxy sends it: its parts, and room for a credential token's hash. */
struct sworn_pfix_req {
    Sworn__V1__AuthorizationRequest r;
    Sworn__V1__Principal p;
    Sworn__V1__Resource res;
    Sworn__V1__Context ctx;
    uint8_t tok[32];
};

/*
 * Fill q as request r1 of an http.request by principal for scheme://host:port path, no method
 * and no token. The strings are not copied: they must outlive q.
 */
void sworn_pfix_req_init(struct sworn_pfix_req *q, const char *principal, const char *scheme,
                         const char *host, uint32_t port, const char *path);

#endif
