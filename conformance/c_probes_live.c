/*
 * c_probes_live.c -- the probes that talk to the running deployment: decisiond's decision and
 * admin sockets (through wire/dclient.h, the one client of both) and the proxy (c_probes.h).
 *
 * Request ids are "conformance-<16 hex>-<allow|deny>-<i>" with 8 random bytes per run, so that a
 * run never reuses an id decisiond saw (it denies a repeated one) and every entry of a run can be
 * told apart in the record.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>
#include <openssl/evp.h>

#include "c_exec.h"
#include "c_probes.h"
#include "c_record.h"
#include "dclient.h"
#include "encoding.h"
#include "err.h"

#define TIMEOUT_MS 30000
#define C_HTTP_ANSWER_MAX 65536u

struct sent {
    char id[96];
    int allow; /* the shape: 1 the allowed one, 0 the denied one */
    uint64_t index;
    uint8_t hash[32];
    char reason[1025];
};

static void fill_request(Sworn__V1__AuthorizationRequest *q, Sworn__V1__Principal *p,
                         Sworn__V1__Resource *res, Sworn__V1__Context *cx, const char *principal,
                         const struct c_url *u, char *id)
{
    sworn__v1__authorization_request__init(q);
    sworn__v1__principal__init(p);
    sworn__v1__resource__init(res);
    sworn__v1__context__init(cx);
    p->id = (char *)principal;
    res->scheme = (char *)u->scheme;
    res->host = (char *)u->host;
    res->port = u->port;
    res->path = (char *)u->path;
    cx->method = "GET";
    q->request_id = id;
    q->principal = p;
    q->operation = "http.request";
    q->resource = res;
    q->context = cx;
    q->time_unix_ms = (uint64_t)time(NULL) * 1000u;
}

/* Send one request and keep what the answer says; returns 0, or -1 with r set (error). */
static int send_one(struct sworn_dclient *c, const struct c_deploy *dep, struct sent *s,
                    struct c_result *r)
{
    Sworn__V1__AuthorizationRequest q;
    Sworn__V1__Principal p;
    Sworn__V1__Resource res;
    Sworn__V1__Context cx;
    Sworn__V1__DecisionReply *rep = NULL;
    Sworn__V1__Effect want =
        s->allow ? SWORN__V1__EFFECT__EFFECT_ALLOW : SWORN__V1__EFFECT__EFFECT_DENY;

    fill_request(&q, &p, &res, &cx, dep->principal, s->allow ? &dep->allowed : &dep->denied, s->id);
    if (sworn_dclient_decide(c, &q, TIMEOUT_MS, &rep) < 0) {
        c_result_set(r, C_ERROR, "request %s: no answer from the decision socket: %s", s->id,
                     sworn_err_msg());
        return -1;
    }
    if (rep->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION) {
        c_result_set(r, C_ERROR, "request %s: an error answer: %s", s->id,
                     rep->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR ? rep->error->message
                                                                             : "not a decision");
        goto fail;
    }
    if (rep->decision->effect != want) {
        c_result_set(r, C_ERROR,
                     "request %s: the deployment's policy did not %s requests.%s (effect %d, "
                     "reason \"%.200s\"): fix the deployment file",
                     s->id, s->allow ? "allow" : "deny", s->allow ? "allowed" : "denied",
                     (int)rep->decision->effect, rep->decision->reason);
        goto fail;
    }
    if (rep->decision->entry_hash.len != 32) {
        c_result_set(r, C_FAIL, "request %s: the decision names no 32-byte entry hash", s->id);
        goto fail;
    }
    s->index = rep->decision->log_index;
    memcpy(s->hash, rep->decision->entry_hash.data, 32);
    snprintf(s->reason, sizeof(s->reason), "%s", rep->decision->reason);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    return 0;
fail:
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    return -1;
}

int c_checkpoint_now(const char *admin, uint64_t *size)
{
    struct sworn_dclient *c = malloc(sizeof(*c));
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__CheckpointNowRequest cn = SWORN__V1__CHECKPOINT_NOW_REQUEST__INIT;
    Sworn__V1__AdminResponse *resp = NULL;
    int rc = -1;

    if (c == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    rq.version = SWORN_WIRE_VERSION;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW;
    rq.checkpoint_now = &cn;
    if (sworn_dclient_connect(c, admin) == 0 &&
        sworn_dclient_admin(c, &rq, TIMEOUT_MS, &resp) == 0) {
        if (resp->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW) {
            *size = resp->checkpoint_now->tree_size;
            rc = 0;
        } else {
            sworn_err_set(SWORN_ERR_FORMAT, "CheckpointNow was answered with %s",
                          resp->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR
                              ? resp->error->message
                              : "another response");
        }
    }
    sworn__v1__admin_response__free_unpacked(resp, NULL);
    sworn_dclient_close(c);
    free(c);
    return rc;
}

/* Find s in the record of size entries; returns NULL when it is there as sent, else why not. */
static const char *find_in_record(const struct c_deploy *dep, uint64_t size, const struct sent *s,
                                  char *why, size_t cap)
{
    struct sworn_tile_entry e[SWORN_TILE_WIDTH];
    uint8_t *data = NULL, leaf[32], pre = 0x00;
    unsigned n;
    Sworn__V1__Entry *en = NULL;
    const Sworn__V1__DecisionRecord *d;
    const struct sworn_tile_entry *it;
    EVP_MD_CTX *h = NULL;

    if (s->index >= size) {
        snprintf(why, cap, "log index %llu is past the record's checkpoint (size %llu)",
                 (unsigned long long)s->index, (unsigned long long)size);
        return why;
    }
    if (c_record_bundle(dep->record, size, s->index / SWORN_TILE_WIDTH, &data, e, &n) < 0) {
        snprintf(why, cap, "its entry bundle: %s", sworn_err_msg());
        return why;
    }
    it = &e[s->index % SWORN_TILE_WIDTH];
    h = EVP_MD_CTX_new();
    if (h == NULL || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1 ||
        EVP_DigestUpdate(h, &pre, 1) != 1 || EVP_DigestUpdate(h, it->data, it->len) != 1 ||
        EVP_DigestFinal_ex(h, leaf, NULL) != 1) {
        snprintf(why, cap, "SHA-256 failed");
        goto done;
    }
    if (memcmp(leaf, s->hash, 32) != 0) {
        snprintf(why, cap,
                 "entry %llu is not the entry decisiond answered with (leaf hash differs)",
                 (unsigned long long)s->index);
        goto done;
    }
    en = sworn__v1__entry__unpack(NULL, it->len, it->data);
    if (en == NULL || en->kind_case != SWORN__V1__ENTRY__KIND_DECISION ||
        en->decision->request == NULL) {
        snprintf(why, cap, "entry %llu is not a decision", (unsigned long long)s->index);
        goto done;
    }
    d = en->decision;
    if (strcmp(d->request->request_id, s->id) != 0)
        snprintf(why, cap, "entry %llu holds request id %.100s", (unsigned long long)s->index,
                 d->request->request_id);
    else if (d->request->principal == NULL ||
             strcmp(d->request->principal->id, dep->principal) != 0)
        snprintf(why, cap, "entry %llu does not name principal %s", (unsigned long long)s->index,
                 dep->principal);
    else if (d->effect !=
             (s->allow ? SWORN__V1__EFFECT__EFFECT_ALLOW : SWORN__V1__EFFECT__EFFECT_DENY))
        snprintf(why, cap, "entry %llu records another effect", (unsigned long long)s->index);
    else if (d->reason[0] == '\0' || strcmp(d->reason, s->reason) != 0)
        snprintf(why, cap, "entry %llu records another reason, or none",
                 (unsigned long long)s->index);
    else
        why = NULL;
done:
    EVP_MD_CTX_free(h);
    sworn__v1__entry__free_unpacked(en, NULL);
    free(data);
    return why;
}

const char *c_mark_in_record(const struct c_deploy *dep, uint64_t size, uint64_t index,
                             const char *id, char *why, size_t cap)
{
    struct sworn_tile_entry e[SWORN_TILE_WIDTH];
    uint8_t *data = NULL;
    unsigned n;
    Sworn__V1__Entry *en = NULL;
    const struct sworn_tile_entry *it;

    if (index >= size) {
        snprintf(why, cap, "log index %llu is past the tree sworn-verify read (size %llu)",
                 (unsigned long long)index, (unsigned long long)size);
        return why;
    }
    if (c_record_bundle(dep->record, size, index / SWORN_TILE_WIDTH, &data, e, &n) < 0) {
        snprintf(why, cap, "its entry bundle: %.300s", sworn_err_msg());
        return why;
    }
    if (index % SWORN_TILE_WIDTH >= n) {
        snprintf(why, cap, "its entry bundle does not reach log index %llu",
                 (unsigned long long)index);
        free(data);
        return why;
    }
    it = &e[index % SWORN_TILE_WIDTH];
    en = sworn__v1__entry__unpack(NULL, it->len, it->data);
    if (en == NULL || en->kind_case != SWORN__V1__ENTRY__KIND_DECISION ||
        en->decision->request == NULL || en->decision->request->request_id == NULL)
        snprintf(why, cap, "entry %llu is not a decision", (unsigned long long)index);
    else if (strcmp(en->decision->request->request_id, id) != 0)
        snprintf(why, cap, "entry %llu holds request id %.100s, not the mark",
                 (unsigned long long)index, en->decision->request->request_id);
    else
        why = NULL;
    sworn__v1__entry__free_unpacked(en, NULL);
    free(data);
    return why;
}

int c_append_mark(const struct c_deploy *dep, uint64_t *index, char *id, size_t cap)
{
    struct sworn_dclient *c = malloc(sizeof(*c));
    struct sent *s = calloc(1, sizeof(*s));
    struct c_result *r = calloc(1, sizeof(*r));
    uint8_t nonce[8];
    char hex[17];
    int rc = -1;

    if (c == NULL || s == NULL || r == NULL || RAND_bytes(nonce, sizeof(nonce)) != 1 ||
        sworn_hex_encode(nonce, sizeof(nonce), hex, sizeof(hex)) < 0) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory or randomness");
        goto out;
    }
    snprintf(s->id, sizeof(s->id), "conformance-%s-mark", hex);
    if (sworn_dclient_connect(c, dep->decision_socket) < 0) {
        free(c);
        c = NULL;
        goto out;
    }
    if (send_one(c, dep, s, r) < 0) {
        sworn_err_set(SWORN_ERR_IO, "%s", r->observed);
        goto out;
    }
    *index = s->index;
    snprintf(id, cap, "%s", s->id);
    rc = 0;
out:
    if (c != NULL) {
        sworn_dclient_close(c);
        free(c);
    }
    free(s);
    free(r);
    return rc;
}

void c_probe_decisions_recorded(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    struct sworn_dclient *c = NULL;
    struct sent *s = NULL;
    struct sworn_checkpoint cp;
    uint8_t nonce[8];
    char hex[17], why[512];
    size_t total, found = 0;
    uint64_t size = 0;

    if (!dep->has_requests) {
        c_result_set(r, C_SKIPPED, "the deployment file has no requests (and decision_socket)");
        return;
    }
    if (dep->admin_socket[0] == '\0') {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no admin_socket, to make decisiond "
                     "export the record after the requests");
        return;
    }
    total = 2u * dep->count;
    s = calloc(total, sizeof(*s));
    c = malloc(sizeof(*c));
    if (s == NULL || c == NULL || RAND_bytes(nonce, sizeof(nonce)) != 1 ||
        sworn_hex_encode(nonce, sizeof(nonce), hex, sizeof(hex)) < 0) {
        c_result_set(r, C_ERROR, "out of memory or randomness");
        goto out;
    }
    if (sworn_dclient_connect(c, dep->decision_socket) < 0) {
        c_result_set(r, C_ERROR, "decision_socket: %s", sworn_err_msg());
        free(c);
        c = NULL;
        goto out;
    }
    for (size_t i = 0; i < total; i++) {
        s[i].allow = (i % 2) == 0;
        snprintf(s[i].id, sizeof(s[i].id), "conformance-%s-%s-%zu", hex,
                 s[i].allow ? "allow" : "deny", i / 2);
        if (send_one(c, dep, &s[i], r) < 0)
            goto out;
    }
    if (c_checkpoint_now(dep->admin_socket, &size) < 0) {
        c_result_set(r, C_ERROR, "admin CheckpointNow: %s", sworn_err_msg());
        goto out;
    }
    if (c_record_checkpoint(dep->record, &cp) < 0) {
        c_result_set(r, C_ERROR, "the record's checkpoint: %s", sworn_err_msg());
        goto out;
    }
    c_evidence(r, "%zu allowed and %zu denied requests of principal %s, ids conformance-%s-*",
               (size_t)dep->count, (size_t)dep->count, dep->principal, hex);
    c_evidence(r, "after CheckpointNow (tree size %llu) the record's checkpoint has size %llu",
               (unsigned long long)size, (unsigned long long)cp.size);
    for (size_t i = 0; i < total; i++) {
        const char *bad = find_in_record(dep, cp.size, &s[i], why, sizeof(why));
        if (bad != NULL) {
            c_evidence(r, "%s (log index %llu): %s", s[i].id, (unsigned long long)s[i].index, bad);
            c_result_set(r, C_FAIL, "request %s is not in the record as decided: %s", s[i].id, bad);
            goto out;
        }
        found++;
        if (i < 4 || i + 2 >= total)
            c_evidence(r, "%s: %s at log index %llu, reason \"%.120s\"", s[i].id,
                       s[i].allow ? "allow" : "deny", (unsigned long long)s[i].index, s[i].reason);
    }
    c_result_set(r, C_PASS,
                 "all %zu decisions (%u allowed, %u denied) are in the exported record with "
                 "their principal, effect, reason and leaf hash",
                 found, dep->count, dep->count);
out:
    if (c != NULL) {
        sworn_dclient_close(c);
        free(c);
    }
    free(s);
}

/* --- T3: fail closed --------------------------------------------------------------------------
 */

/* Connect to host:port over TCP; -1 with sworn_err. */
static int tcp_connect(const struct c_url *u)
{
    struct addrinfo hints = {0}, *res = NULL;
    char port[8];
    int fd = -1;

    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", u->port);
    if (getaddrinfo(u->host, port, &hints, &res) != 0 || res == NULL)
        return sworn_err_set(SWORN_ERR_IO, "%s does not resolve", u->host);
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd >= 0 ? fd
                   : sworn_err_set(SWORN_ERR_IO, "connect %s:%u: %s", u->host, u->port,
                                   strerror(errno));
}

/*
 * One absolute-form GET of target through the proxy; reads the answer until the proxy closes
 * (Connection: close) or C_HTTP_ANSWER_MAX bytes or the deadline. OUT: *status (0: none),
 * body's first line in body. Returns 0 when an answer was read, -1 with sworn_err.
 */
static int proxy_get(const struct c_url *proxy, const struct c_url *target, int *status, char *body,
                     size_t cap)
{
    char req[2048], *ans = malloc(C_HTTP_ANSWER_MAX + 1);
    size_t have = 0;
    int fd, n;
    const char *b;

    *status = 0;
    body[0] = '\0';
    if (ans == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    n = snprintf(
        req, sizeof(req), "GET %s://%s:%u%s HTTP/1.1\r\nHost: %s:%u\r\nConnection: close\r\n\r\n",
        target->scheme, target->host, target->port, target->path, target->host, target->port);
    if (n < 0 || (size_t)n >= sizeof(req) || (fd = tcp_connect(proxy)) < 0) {
        free(ans);
        return n < 0 || (size_t)n >= sizeof(req) ? sworn_err_set(SWORN_ERR_RANGE, "URL too long")
                                                 : -1;
    }
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        free(ans);
        return sworn_err_set(SWORN_ERR_IO, "write to the proxy: %s", strerror(errno));
    }
    while (have < C_HTTP_ANSWER_MAX) {
        struct pollfd p = {fd, POLLIN, 0};
        ssize_t k;
        if (poll(&p, 1, TIMEOUT_MS) <= 0)
            break;
        k = read(fd, ans + have, C_HTTP_ANSWER_MAX - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        have += (size_t)k;
    }
    close(fd);
    ans[have] = '\0';
    /* "HTTP/1.1 NNN ..." then the head, a blank line, the body. */
    if (have >= 12 && strncmp(ans, "HTTP/1.", 7) == 0 && ans[8] == ' ' && ans[9] >= '1' &&
        ans[9] <= '5' && ans[10] >= '0' && ans[10] <= '9' && ans[11] >= '0' && ans[11] <= '9')
        *status = (ans[9] - '0') * 100 + (ans[10] - '0') * 10 + (ans[11] - '0');
    b = strstr(ans, "\r\n\r\n");
    if (b != NULL) {
        size_t k = strcspn(b + 4, "\r\n");
        snprintf(body, cap, "%.*s", (int)(k < cap ? k : cap - 1), b + 4);
        for (char *q = body; *q != '\0'; q++)
            if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
                *q = '?';
    }
    free(ans);
    return 0;
}

void c_probe_fail_closed(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    int st = 0, status = 0, got;
    char body[256];

    if (!dep->has_fail_closed || !dep->has_requests) {
        c_result_set(r, C_SKIPPED,
                     "the deployment file has no fail_closed (proxy, stop, start) "
                     "or no requests.allowed to send through it");
        return;
    }
    if (c_exec_shell(dep->stop_command, &st) < 0 || st != 0) {
        c_result_set(r, C_ERROR, "fail_closed.stop did not stop decisiond (exit %d)", st);
        return;
    }
    c_evidence(r, "decisiond stopped by fail_closed.stop (exit 0)");
    got = proxy_get(&dep->proxy, &dep->allowed, &status, body, sizeof(body));
    if (got < 0)
        c_evidence(r, "no answer from the proxy: %s", sworn_err_msg());
    else
        c_evidence(r, "the proxy answered GET %s://%s:%u%s with status %d, body \"%s\"",
                   dep->allowed.scheme, dep->allowed.host, dep->allowed.port, dep->allowed.path,
                   status, body);
    if (c_exec_shell(dep->start_command, &st) < 0 || st != 0) {
        c_result_set(r, C_ERROR,
                     "fail_closed.start did not start decisiond again (exit %d): the "
                     "deployment may be left without it",
                     st);
        return;
    }
    c_evidence(r, "decisiond started again by fail_closed.start (exit 0)");
    if (got < 0)
        c_result_set(r, C_ERROR, "the proxy could not be asked: %s", sworn_err_msg());
    else if (status == 0)
        c_result_set(r, C_ERROR, "the proxy's answer is not an HTTP response");
    else if (status < 400)
        c_result_set(r, C_FAIL,
                     "with decisiond stopped the proxy answered an allowed request with %d: it "
                     "fails open",
                     status);
    else if (strncmp(body, "{\"request_id\":\"px-", 18) != 0)
        /* docs/proxy.md: the proxy's own answers are one JSON line naming its request id; any
         * other 4xx or 5xx came from an upstream, so the request went through. */
        c_result_set(r, C_FAIL,
                     "with decisiond stopped the allowed request got status %d, not the proxy's "
                     "own answer: it reached an upstream",
                     status);
    else
        c_result_set(r, C_PASS,
                     "with decisiond stopped the proxy refused the allowed request (status %d)",
                     status);
}
