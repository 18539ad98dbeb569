/*
 * stack_fixture.c -- the dev stack for tests (contract in stack_fixture.h).
 */
#define _GNU_SOURCE /* setsid in the child is not needed; vasprintf */
#include "stack_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/sha.h>

#include "dclient.h"
#include "frame.h"
#include "logstore.h"
#include "testutil.h"

#ifndef SWORN_SOURCE_DIR
#error "SWORN_SOURCE_DIR must be defined by the build"
#endif

static void env_value(const char *env, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = env;

    out[0] = '\0';
    while (p != NULL && *p) {
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1, *end = strchr(v, '\n');
            size_t n = end != NULL ? (size_t)(end - v) : strlen(v);

            if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                v++;
                n -= 2;
            }
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
}

static int read_env(struct sworn_stack *s)
{
    char *path = sworn_test_path(s->dir, "stack.env"), pid[32];
    char *env = sworn_test_read_file_opt(path, NULL);

    free(path);
    if (env == NULL)
        return -1;
    env_value(env, "CONFIG", s->config, sizeof(s->config));
    env_value(env, "DECISION_SOCKET", s->decision, sizeof(s->decision));
    env_value(env, "ADMIN_SOCKET", s->admin, sizeof(s->admin));
    env_value(env, "LOG_DB", s->log_db, sizeof(s->log_db));
    env_value(env, "TILES", s->tiles, sizeof(s->tiles));
    env_value(env, "TCTI", s->tcti, sizeof(s->tcti));
    env_value(env, "SPKI_DER", s->spki_der, sizeof(s->spki_der));
    env_value(env, "SWORN_TEST_CLOCK_FILE", s->clock, sizeof(s->clock));
    env_value(env, "DECISIOND_PID", pid, sizeof(pid));
    s->decisiond_pid = (pid_t)atol(pid);
    env_value(env, "SWTPM_PID", pid, sizeof(pid));
    s->swtpm_pid = (pid_t)atol(pid);
    env_value(env, "PROXY_URL", s->proxy_url, sizeof(s->proxy_url));
    env_value(env, "PROXY_SOCKET", s->proxy_socket, sizeof(s->proxy_socket));
    env_value(env, "PROXY_PRINCIPAL", s->proxy_principal, sizeof(s->proxy_principal));
    env_value(env, "PROXY_UNIX", s->proxy_unix, sizeof(s->proxy_unix));
    env_value(env, "PROXY_CA", s->proxy_ca, sizeof(s->proxy_ca));
    env_value(env, "PROXY_CONFIG", s->proxy_config, sizeof(s->proxy_config));
    env_value(env, "PROXY_LOG", s->proxy_log, sizeof(s->proxy_log));
    env_value(env, "PROXY_PID", pid, sizeof(pid));
    s->proxy_pid = (pid_t)atol(pid);
    free(env);
    return 0;
}

/* Run the command fmt makes, after prefix, through the shell; returns its exit status (-1: it did
 * not run, or did not exit). */
__attribute__((format(printf, 2, 0))) static int run_vscript(const char *prefix, const char *fmt,
                                                             va_list ap)
{
    char *cmd = NULL, *full = NULL;
    int rc;

    if (vasprintf(&cmd, fmt, ap) < 0)
        return -1;
    rc = asprintf(&full, "%s%s", prefix, cmd);
    free(cmd);
    if (rc < 0)
        return -1;
    rc = system(full);
    free(full);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int run_script(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run_script(const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = run_vscript("", fmt, ap);
    va_end(ap);
    return rc;
}

/* options without the word "--proxy" into out; returns whether the stack gets the proxy: that
 * word, or --proxy-config (kept: the script reads it). */
static int take_proxy_option(const char *options, char *out, size_t cap)
{
    const char *p = options;
    size_t used = 0;
    int proxy = 0;

    out[0] = '\0';
    while (*p) {
        size_t n;

        while (*p == ' ')
            p++;
        n = strcspn(p, " ");
        if (n == 0)
            break;
        if (n == strlen("--proxy") && strncmp(p, "--proxy", n) == 0) {
            proxy = 1;
        } else {
            if (n == strlen("--proxy-config") && strncmp(p, "--proxy-config", n) == 0)
                proxy = 1;
            assert_true(used + n + 2 <= cap);
            if (used > 0)
                out[used++] = ' ';
            memcpy(out + used, p, n);
            used += n;
            out[used] = '\0';
        }
        p += n;
    }
    return proxy;
}

int sworn_stack_up(struct sworn_stack *s, const char *options)
{
    char rest[1024];
    int proxy = take_proxy_option(options, rest, sizeof(rest));

    memset(s, 0, sizeof(*s));
    s->dir = sworn_test_tmpdir("stack");
    if (run_script("%s/scripts/dev-stack up %s --build %s %s %s >%s/up.out 2>&1", SWORN_SOURCE_DIR,
                   s->dir, SWORN_BINARY_DIR, proxy ? "" : "--no-proxy", rest, s->dir) != 0) {
        run_script("cat %s/up.out >&2", s->dir);
        return -1;
    }
    return read_env(s);
}

int sworn_stack_start_proxy(struct sworn_stack *s)
{
    if (run_script("%s/scripts/dev-stack start-proxy %s >&2", SWORN_SOURCE_DIR, s->dir) != 0)
        return -1;
    return read_env(s);
}

int sworn_stack_start(struct sworn_stack *s)
{
    if (run_script("%s/scripts/dev-stack start %s >&2", SWORN_SOURCE_DIR, s->dir) != 0)
        return -1;
    return read_env(s);
}

/* The daemon runs under setsid from the script: not our child, so poll for its exit. */
static int wait_gone(pid_t pid, int timeout_ms)
{
    for (int waited = 0; waited < timeout_ms; waited += 20) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 0;
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

int sworn_stack_stop_daemon(struct sworn_stack *s)
{
    if (s->decisiond_pid <= 0 || kill(s->decisiond_pid, SIGTERM) != 0)
        return -1;
    return wait_gone(s->decisiond_pid, 20000);
}

void sworn_stack_kill_daemon(struct sworn_stack *s)
{
    if (s->decisiond_pid > 0 && kill(s->decisiond_pid, SIGKILL) == 0)
        (void)wait_gone(s->decisiond_pid, 10000);
}

int sworn_stack_down(struct sworn_stack *s)
{
    int rc;

    if (s->dir == NULL)
        return 0;
    run_script("%s/scripts/dev-stack down %s >/dev/null 2>&1", SWORN_SOURCE_DIR, s->dir);
    /* grep exits 0 when it finds a report: then show it, and fail. */
    rc = run_script("grep -E -A30 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|"
                    "Sanitizer has encountered|runtime error:' %s/decisiond.log "
                    "$(test -e %s/proxy.log && echo %s/proxy.log) >&2",
                    s->dir, s->dir, s->dir) == 0
             ? -1
             : 0;
    if (getenv("SWORN_KEEP_STACK") == NULL)
        sworn_test_rmtree(s->dir);
    free(s->dir);
    s->dir = NULL;
    return rc;
}

/* The test clock's offset (both clocks) and wall step (the wall clock alone): d_clock.c. */
static uint64_t clock_read(struct sworn_stack *s, int64_t *step)
{
    char *text, *end;
    uint64_t v;

    if (s->clock[0] == '\0')
        fail_msg("the stack has no test clock (start it with --test-clock)");
    text = sworn_test_read_file(s->clock, NULL);
    v = strtoull(text, &end, 10);
    *step = *end == ' ' ? strtoll(end + 1, NULL, 10) : 0;
    free(text);
    return v;
}

static void clock_write(struct sworn_stack *s, uint64_t offset, int64_t step)
{
    char *tmp = sworn_test_path(s->dir, "clock.new"), text[64];
    int n =
        snprintf(text, sizeof(text), "%llu %lld\n", (unsigned long long)offset, (long long)step);

    sworn_test_write_file(tmp, text, (size_t)n, 0600);
    if (rename(tmp, s->clock) != 0)
        fail_msg("cannot replace the test clock %s: %s", s->clock, strerror(errno));
    free(tmp);
}

void sworn_stack_clock_advance(struct sworn_stack *s, uint64_t ms)
{
    int64_t step;
    uint64_t offset = clock_read(s, &step);

    clock_write(s, offset + ms, step);
}

void sworn_stack_clock_step(struct sworn_stack *s, int64_t ms)
{
    int64_t step;
    uint64_t offset = clock_read(s, &step);

    clock_write(s, offset, step + ms);
}

uint64_t sworn_stack_clock_unix_ms(struct sworn_stack *s)
{
    struct timespec ts;
    int64_t step;
    uint64_t offset = clock_read(s, &step);

    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)((int64_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u +
                                offset) +
                      step);
}

/* A client for one call: its read buffer is large, and test threads call at once. */
static struct sworn_dclient *client_new(void)
{
    struct sworn_dclient *c = malloc(sizeof(*c));

    assert_non_null(c);
    sworn_dclient_init(c);
    return c;
}

int sworn_stack_connect(const char *path)
{
    struct sworn_dclient *c = client_new();
    int fd = sworn_dclient_connect(c, path) == 0 ? sworn_dclient_detach(c) : -1;

    free(c);
    return fd;
}

int sworn_stack_exchange(int fd, const uint8_t *bytes, size_t len, int timeout_ms, uint8_t **body,
                         size_t *len_out)
{
    struct sworn_dclient *c = client_new();
    const uint8_t *b;
    size_t blen;
    int rc;

    *body = NULL;
    *len_out = 0;
    sworn_dclient_adopt(c, fd);
    /* The peer may close early on hostile input: read what it said, whatever the send did. */
    if (len > 0)
        (void)sworn_dclient_send(c, bytes, len, timeout_ms);
    rc = sworn_dclient_recv(c, timeout_ms, &b, &blen);
    if (rc == 0) {
        *body = malloc(blen);
        assert_non_null(*body);
        memcpy(*body, b, blen);
        *len_out = blen;
    }
    (void)sworn_dclient_detach(c);
    free(c);
    return rc;
}

void sworn_stack_req_init(struct sworn_stack_req *r, const char *id, const char *principal,
                          const char *path)
{
    memset(r, 0, sizeof(*r));
    sworn__v1__authorization_request__init(&r->req);
    sworn__v1__principal__init(&r->principal);
    sworn__v1__resource__init(&r->resource);
    sworn__v1__context__init(&r->context);
    snprintf(r->id, sizeof(r->id), "%s", id);
    snprintf(r->principal_id, sizeof(r->principal_id), "%s", principal);
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->req.request_id = r->id;
    r->principal.id = r->principal_id;
    r->req.principal = &r->principal;
    r->req.operation = "http.request";
    r->resource.scheme = "http";
    r->resource.host = "127.0.0.1";
    r->resource.port = 8080;
    r->resource.path = r->path;
    r->req.resource = &r->resource;
    r->context.method = "GET";
    r->req.context = &r->context;
}

uint8_t *sworn_stack_raw_frame(Sworn__V1__AuthorizationRequest *req, size_t *len,
                               uint8_t digest[32])
{
    Sworn__V1__DecisionRequest m = SWORN__V1__DECISION_REQUEST__INIT;
    size_t n;
    uint8_t *f;

    m.body_case = SWORN__V1__DECISION_REQUEST__BODY_AUTHORIZE;
    m.authorize = req;
    m.version = SWORN_WIRE_VERSION;
    n = sworn__v1__decision_request__get_packed_size(&m);
    f = malloc(SWORN_FRAME_HDR_LEN + n);
    assert_non_null(f);
    f[0] = (uint8_t)(n >> 24);
    f[1] = (uint8_t)(n >> 16);
    f[2] = (uint8_t)(n >> 8);
    f[3] = (uint8_t)n;
    assert_int_equal(sworn__v1__decision_request__pack(&m, f + SWORN_FRAME_HDR_LEN), n);
    SHA256(f + SWORN_FRAME_HDR_LEN, n, digest);
    *len = SWORN_FRAME_HDR_LEN + n;
    return f;
}

Sworn__V1__DecisionReply *sworn_stack_decide(struct sworn_stack *s, struct sworn_stack_req *r)
{
    struct sworn_dclient *c = client_new();
    Sworn__V1__DecisionReply *reply = NULL;

    if (sworn_dclient_connect(c, s->decision) == 0)
        (void)sworn_dclient_decide(c, &r->req, 60000, &reply);
    sworn_dclient_close(c);
    free(c);
    return reply;
}

Sworn__V1__AdminResponse *sworn_stack_admin(struct sworn_stack *s, Sworn__V1__AdminRequest *rq)
{
    struct sworn_dclient *c = client_new();
    Sworn__V1__AdminResponse *resp = NULL;

    if (sworn_dclient_connect(c, s->admin) == 0)
        (void)sworn_dclient_admin(c, rq, 60000, &resp);
    sworn_dclient_close(c);
    free(c);
    return resp;
}

int sworn_stack_sh(struct sworn_stack *s, const char *fmt, ...)
{
    char *prefix = NULL;
    va_list ap;
    int rc;

    if (asprintf(&prefix, "cd %s && set -a && . ./stack.env && set +a && ", s->dir) < 0)
        return -1;
    va_start(ap, fmt);
    rc = run_vscript(prefix, fmt, ap);
    va_end(ap);
    free(prefix);
    return rc;
}

void sworn_stack_dev_trust(struct sworn_stack *s)
{
    assert_int_equal(
        sworn_stack_sh(
            s,
            "{ if [ -e signer.pem ]; then"
            " openssl pkey -in signer.pem -pubout -outform DER -out signer.spki 2>/dev/null;"
            " else cp \"$SPKI_DER\" signer.spki; fi; }"
            " && origin=$(head -n 1 tiles/checkpoint)"
            " && { echo \"origin $origin\"; echo \"log $(\"%s\" vkey --name \"$origin\""
            " --spki signer.spki)\"; echo 'entries sworn'; echo 'quotes ignore';"
            " echo 'development allowed';"
            " echo \"receipt-key $(base64 -w0 signer.spki)\"; } > trust.txt",
            sworn_test_bin("SWORN_LOG_BIN")),
        0);
}

void sworn_stack_trust_value(struct sworn_stack *s, const char *key, char *out, size_t cap)
{
    char *path = sworn_test_path(s->dir, "trust.txt");
    char *text = sworn_test_read_file(path, NULL);
    size_t klen = strlen(key);

    free(path);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
            size_t n = strcspn(p + klen + 1, "\n");

            assert_true(n < cap);
            memcpy(out, p + klen + 1, n);
            out[n] = '\0';
            free(text);
            return;
        }
    free(text);
    fail_msg("no line %s in trust.txt", key);
}

Sworn__V1__DecisionReply *sworn_stack_decide_path(struct sworn_stack *s, const char *id,
                                                  const char *path)
{
    struct sworn_stack_req r;

    sworn_stack_req_init(&r, id, "agent-1", path);
    return sworn_stack_decide(s, &r);
}

Sworn__V1__Decision *sworn_stack_expect_decision(Sworn__V1__DecisionReply *r,
                                                 Sworn__V1__Effect effect)
{
    assert_non_null(r);
    if (r->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION)
        fail_msg("expected a decision, got error %u: %s", r->error->code, r->error->message);
    assert_int_equal(r->decision->effect, effect);
    assert_int_equal(r->decision->entry_hash.len, 32);
    return r->decision;
}

void sworn_stack_expect_path(struct sworn_stack *s, const char *id, const char *path,
                             Sworn__V1__Effect effect)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide_path(s, id, path);

    (void)sworn_stack_expect_decision(r, effect); /* it fails the test itself */
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

void sworn_stack_expect_allow(struct sworn_stack *s, const char *id)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide_path(s, id, "/allowed/x");
    Sworn__V1__Decision *d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);

    assert_non_null(d->receipt);
    assert_true(d->receipt->signature.len > 0);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
}

int sworn_stack_send_only(struct sworn_stack *s, const char *id, const char *path)
{
    struct sworn_stack_req r;
    uint8_t *frame;
    size_t frame_len;
    int fd = sworn_stack_connect(s->decision);

    assert_true(fd >= 0);
    sworn_stack_req_init(&r, id, "agent-1", path);
    assert_int_equal(sworn_frame_pack_authorize(&r.req, &frame, &frame_len), 0);
    assert_int_equal(write(fd, frame, frame_len), (ssize_t)frame_len);
    free(frame);
    return fd;
}

Sworn__V1__DecisionReply *sworn_stack_read_reply(int fd)
{
    uint8_t *body;
    size_t len;
    Sworn__V1__DecisionReply *r;

    assert_int_equal(sworn_stack_exchange(fd, NULL, 0, 30000, &body, &len), 0);
    r = sworn_frame_unpack_reply(body, len);
    free(body);
    close(fd);
    return r;
}

void sworn_stack_big_init(struct sworn_stack_big_req *b, const char *id, const char *prefix)
{
    memset(b, 0, sizeof(*b));
    assert_true(strlen(prefix) < sizeof(b->prefix));
    snprintf(b->prefix, sizeof(b->prefix), "%s", prefix);
    sworn_stack_req_init(&b->q, id, "agent-1", "/");
    memset(b->name, 'h', 256);
    for (size_t i = 0; i < SWORN_FRAME_HEADERS_MAX; i++)
        b->names[i] = b->name;
    b->q.context.header_names = b->names;
    b->q.resource.path = b->path;
}

size_t sworn_stack_big_size(const struct sworn_stack_big_req *b)
{
    return protobuf_c_message_get_packed_size(&b->q.req.base);
}

void sworn_stack_big_path(struct sworn_stack_big_req *b, size_t n)
{
    size_t plen = strlen(b->prefix);

    assert_true(n > plen && n <= SWORN_FRAME_STRING_MAX);
    memset(b->path, 'p', n);
    memcpy(b->path, b->prefix, plen);
    b->path[n] = '\0';
}

void sworn_stack_big_fit(struct sworn_stack_big_req *b, size_t target)
{
    size_t plen = 200;

    sworn_stack_big_path(b, plen);
    b->q.context.n_header_names = 0;
    /* Header names (259 encoded bytes each) up to some 600 bytes below the target; the path's
     * length does the rest, in a few rounds (its length varint may grow by a byte). */
    while (b->q.context.n_header_names < SWORN_FRAME_HEADERS_MAX &&
           sworn_stack_big_size(b) + 259 + 600 < target)
        b->q.context.n_header_names++;
    for (int round = 0; round < 8 && sworn_stack_big_size(b) != target; round++) {
        plen = (size_t)((long)plen + (long)target - (long)sworn_stack_big_size(b));
        sworn_stack_big_path(b, plen);
    }
    assert_int_equal(sworn_stack_big_size(b), target);
}

void sworn_stack_resolve_msg(struct sworn_stack_admin_msg *m, uint64_t index, int approve)
{
    sworn__v1__admin_request__init(&m->rq);
    sworn__v1__resolve_request__init(&m->resolve);
    m->resolve.escalation_index = index;
    m->resolve.approve = approve;
    m->resolve.reason = approve ? "checked by the test" : "";
    m->rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RESOLVE;
    m->rq.resolve = &m->resolve;
}

void sworn_stack_list_msg(struct sworn_stack_admin_msg *m, uint64_t from_index)
{
    sworn__v1__admin_request__init(&m->rq);
    sworn__v1__list_escalations_request__init(&m->list);
    m->list.from_index = from_index;
    m->rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_LIST_ESCALATIONS;
    m->rq.list_escalations = &m->list;
}

Sworn__V1__AdminResponse *sworn_stack_admin_call(void *arg, const Sworn__V1__AdminRequest *rq)
{
    return sworn_stack_admin(arg, (Sworn__V1__AdminRequest *)rq);
}

size_t sworn_stack_list_all(sworn_stack_admin_fn admin, void *arg,
                            void (*fn)(const Sworn__V1__PendingEscalation *p, void *fn_arg),
                            void *fn_arg)
{
    struct sworn_stack_admin_msg m;
    uint64_t from = 0;
    size_t listed = 0;
    int more;

    do {
        Sworn__V1__AdminResponse *r;
        const Sworn__V1__ListEscalationsResponse *l;

        sworn_stack_list_msg(&m, from);
        r = admin(arg, &m.rq);
        assert_non_null(r);
        if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS)
            fail_msg("the listing from index %llu was answered with %d (%s)",
                     (unsigned long long)from, (int)r->body_case,
                     r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR ? r->error->message
                                                                           : "not a listing");
        l = r->list_escalations;
        /* The decoder checked the page's order and size; where it starts is for the client. */
        assert_true(l->n_pending == 0 || l->pending[0]->log_index >= from);
        for (size_t i = 0; i < l->n_pending; i++)
            if (fn != NULL)
                fn(l->pending[i], fn_arg);
        listed += l->n_pending;
        more = l->more;
        if (more)
            from = l->pending[l->n_pending - 1]->log_index + 1;
        sworn__v1__admin_response__free_unpacked(r, NULL);
    } while (more);
    return listed;
}

struct held_find {
    const char *id;
    uint64_t index;
    int found;
};

static void held_match(const Sworn__V1__PendingEscalation *p, void *arg)
{
    struct held_find *f = arg;

    if (strcmp(p->request->request_id, f->id) != 0)
        return;
    assert_int_equal(p->entry_hash.len, 32);
    f->index = p->log_index;
    f->found++;
}

uint64_t sworn_stack_held_index(sworn_stack_admin_fn admin, void *arg, const char *id)
{
    struct held_find f = {id, 0, 0};

    (void)sworn_stack_list_all(admin, arg, held_match, &f);
    if (f.found != 1)
        fail_msg("%d held escalations with request id %s, not 1", f.found, id);
    return f.index;
}

uint64_t sworn_stack_index_of(struct sworn_stack *s, const char *id)
{
    return sworn_stack_held_index(sworn_stack_admin_call, s, id);
}

Sworn__V1__AdminResponse *sworn_stack_resolve_at(struct sworn_stack *s, uint64_t index, int approve)
{
    struct sworn_stack_admin_msg m;

    sworn_stack_resolve_msg(&m, index, approve);
    return sworn_stack_admin(s, &m.rq);
}

Sworn__V1__AdminResponse *sworn_stack_resolve(struct sworn_stack *s, const char *id, int approve)
{
    return sworn_stack_resolve_at(s, sworn_stack_index_of(s, id), approve);
}

unsigned sworn_stack_pending(struct sworn_stack *s)
{
    return (unsigned)sworn_stack_list_all(sworn_stack_admin_call, s, NULL, NULL);
}

Sworn__V1__AdminResponse *sworn_stack_tail(struct sworn_stack *s, uint32_t count)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__TailRequest t = SWORN__V1__TAIL_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;

    t.count = count;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_TAIL;
    rq.tail = &t;
    r = sworn_stack_admin(s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_TAIL);
    return r;
}

const Sworn__V1__Entry *sworn_stack_entry_at(struct sworn_stack *s, uint64_t index, uint32_t count,
                                             Sworn__V1__AdminResponse **tail)
{
    Sworn__V1__AdminResponse *t = sworn_stack_tail(s, count);
    uint64_t first = t->tail->first_index;

    if (index < first || index - first >= t->tail->n_entries)
        fail_msg("entry %llu is not among the newest %u", (unsigned long long)index, count);
    *tail = t;
    return t->tail->entries[index - first];
}

const Sworn__V1__AuthorizationRequest *sworn_stack_decision_on(const Sworn__V1__Entry *e,
                                                               const char *path)
{
    const Sworn__V1__AuthorizationRequest *q;

    if (e->kind_case != SWORN__V1__ENTRY__KIND_DECISION)
        return NULL;
    q = e->decision->request;
    if (q == NULL || q->resource == NULL || strcmp(q->resource->path, path) != 0)
        return NULL;
    return q;
}

uint64_t sworn_stack_checkpoint_now(struct sworn_stack *s)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__CheckpointNowRequest c = SWORN__V1__CHECKPOINT_NOW_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;
    uint64_t size;

    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW;
    rq.checkpoint_now = &c;
    r = sworn_stack_admin(s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW);
    size = r->checkpoint_now->tree_size;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return size;
}

void sworn_stack_escalate(struct sworn_stack *s, const char *id, int approve)
{
    int fd = sworn_stack_send_only(s, id, "/escalate/x");
    Sworn__V1__AdminResponse *ar;
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;

    for (int i = 0; i < 250 && sworn_stack_pending(s) < 1; i++)
        sworn_test_sleep_ms(20);
    assert_int_equal(sworn_stack_pending(s), 1);
    ar = sworn_stack_resolve(s, id, approve);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    r = sworn_stack_read_reply(fd);
    d = sworn_stack_expect_decision(r, approve ? SWORN__V1__EFFECT__EFFECT_ALLOW
                                               : SWORN__V1__EFFECT__EFFECT_DENY);
    assert_int_equal(d->log_index, ar->resolve->log_index);
    if (approve)
        assert_non_null(d->receipt);
    else
        assert_null(d->receipt);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    sworn__v1__admin_response__free_unpacked(ar, NULL);
}

char *sworn_stack_scrape(struct sworn_stack *s)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__MetricsRequest m = SWORN__V1__METRICS_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;
    char *text;

    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_METRICS;
    rq.metrics = &m;
    r = sworn_stack_admin(s, &rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_METRICS);
    text = strndup((const char *)r->metrics->text.data, r->metrics->text.len);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    assert_non_null(text);
    return text;
}

double sworn_stack_metric_in(const char *text, const char *name)
{
    size_t nlen = strlen(name);

    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, name, nlen) == 0 && p[nlen] == ' ')
            return strtod(p + nlen + 1, NULL);
    fail_msg("no metric %s", name);
    return 0;
}

double sworn_stack_metric(struct sworn_stack *s, const char *name)
{
    char *text = sworn_stack_scrape(s);
    double v = sworn_stack_metric_in(text, name);

    free(text);
    return v;
}

struct children_walk {
    int (*fn)(pid_t, void *);
    void *arg;
};

/* proc_each over /proc/PID/task: fn for each child in the task's children file. */
static int task_children(pid_t pid, const char *task, void *arg)
{
    const struct children_walk *w = arg;
    char path[320], kids[4096], *p, *end;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%ld/task/%s/children", (long)pid, task);
    if (sworn_test_read_proc(path, kids, sizeof(kids)) != 0)
        return 0;
    for (p = kids; rc == 0; p = end) {
        long child = strtol(p, &end, 10);

        if (end == p)
            break;
        rc = w->fn((pid_t)child, w->arg);
    }
    return rc;
}

int sworn_stack_children_each(pid_t parent, int (*fn)(pid_t, void *), void *arg)
{
    struct children_walk w = {fn, arg};

    return sworn_stack_proc_each(parent, "task", task_children, &w);
}

struct named {
    const char *comm;
    pid_t found;
};

static int is_named(pid_t pid, void *arg)
{
    struct named *n = arg;
    char path[64], name[64];
    size_t len = strlen(n->comm);

    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
    if (pid > 0 && sworn_test_read_proc(path, name, sizeof(name)) == 0 &&
        strncmp(name, n->comm, len) == 0 && name[len] == '\n') {
        n->found = pid;
        return 1;
    }
    return 0;
}

/* The child of the daemon (the monitor) whose command name is comm, or -1. */
static pid_t child_named(pid_t daemon, const char *comm)
{
    struct named n = {comm, -1};

    if (sworn_stack_children_each(daemon, is_named, &n) < 0)
        return -1;
    return n.found;
}

pid_t sworn_stack_signer_child(pid_t daemon)
{
    return child_named(daemon, "sworn-signer");
}

pid_t sworn_stack_engine(pid_t daemon)
{
    return child_named(daemon, "sworn-engine");
}

int sworn_stack_proc_each(pid_t pid, const char *sub, int (*fn)(pid_t, const char *, void *),
                          void *arg)
{
    char path[320];
    DIR *d;
    struct dirent *de;
    int rc = 0;

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, sub);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.')
            rc = fn(pid, de->d_name, arg);
    }
    closedir(d);
    return rc;
}

int sworn_stack_pid_gone(pid_t pid)
{
    char path[64], stat[1024], *rp;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (sworn_test_read_proc(path, stat, sizeof(stat)) < 0)
        return 1;
    rp = strrchr(stat, ')');
    return rp != NULL && rp[1] == ' ' && rp[2] == 'Z';
}

static int count_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                       const uint8_t *sig, size_t sig_len)
{
    struct sworn_stack_quotes *q = arg;

    (void)attest;
    (void)attest_len;
    (void)sig;
    (void)sig_len;
    q->n++;
    if (size > q->largest)
        q->largest = size;
    return 0;
}

void sworn_stack_log_quotes(struct sworn_log *log, struct sworn_stack_quotes *q)
{
    q->n = 0;
    q->largest = 0;
    assert_int_equal(sworn_log_each_quote(log, count_quote, q), 0);
}

void sworn_stack_expect_final_checkpoint(struct sworn_log *log)
{
    char note[4096];
    size_t len;
    uint64_t size;

    assert_int_equal(sworn_log_get_checkpoint(log, UINT64_MAX, note, sizeof(note), &len, &size), 0);
    assert_int_equal(size, sworn_log_size(log));
}
