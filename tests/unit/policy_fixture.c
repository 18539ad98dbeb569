/*
 * policy_fixture.c -- a policy test's folder and requests (policy_fixture.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "policy_fixture.h"
#include "testutil.h"

char *sworn_pfix_dir;

void sworn_pfix_mkdir(const char *tag)
{
    sworn_pfix_dir = sworn_test_tmpdir(tag);
}

int sworn_pfix_teardown(void **state)
{
    (void)state;
    sworn_test_rmtree(sworn_pfix_dir);
    free(sworn_pfix_dir);
    sworn_pfix_dir = NULL;
    return 0;
}

char *sworn_pfix_put(const char *name, const char *text)
{
    char *path = sworn_test_path(sworn_pfix_dir, name);

    sworn_test_write_file(path, text, strlen(text), 0600);
    return path;
}

struct sworn_policy *sworn_pfix_load(const char *text)
{
    char *path = sworn_pfix_put("policy.yaml", text);
    struct sworn_policy *p = NULL;

    if (sworn_policy_load_file(path, &p) != 0)
        fail_msg("policy refused: %s\n%s", sworn_err_msg(), text);
    free(path);
    return p;
}

void sworn_pfix_req_init(struct sworn_pfix_req *q, const char *principal, const char *scheme,
                         const char *host, uint32_t port, const char *path)
{
    memset(q, 0, sizeof(*q));
    sworn__v1__authorization_request__init(&q->r);
    sworn__v1__principal__init(&q->p);
    sworn__v1__resource__init(&q->res);
    sworn__v1__context__init(&q->ctx);
    q->p.id = (char *)principal;
    q->res.scheme = (char *)scheme;
    q->res.host = (char *)host;
    q->res.port = port;
    q->res.path = (char *)path;
    q->r.request_id = (char *)"r1";
    q->r.operation = (char *)"http.request";
    q->r.principal = &q->p;
    q->r.resource = &q->res;
    q->r.context = &q->ctx;
}
