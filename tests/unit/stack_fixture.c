/*
 * stack_fixture.c -- the dev stack for tests (contract in stack_fixture.h).
 */
#define _GNU_SOURCE /* setsid in the child is not needed; vasprintf */
#include "stack_fixture.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
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
    env_value(env, "DECISIOND_PID", pid, sizeof(pid));
    s->decisiond_pid = (pid_t)atol(pid);
    env_value(env, "SWTPM_PID", pid, sizeof(pid));
    s->swtpm_pid = (pid_t)atol(pid);
    free(env);
    return 0;
}

static int run_script(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run_script(const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    rc = system(cmd);
    free(cmd);
    return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int sworn_stack_up(struct sworn_stack *s, const char *options)
{
    memset(s, 0, sizeof(*s));
    s->dir = sworn_test_tmpdir("stack");
    if (run_script("%s/scripts/dev-stack up %s --build %s %s >%s/up.out 2>&1", SWORN_SOURCE_DIR,
                   s->dir, SWORN_BINARY_DIR, options, s->dir) != 0) {
        run_script("cat %s/up.out >&2", s->dir);
        return -1;
    }
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
    rc = run_script("grep -E -A30 'ERROR: (Address|Leak)Sanitizer|Sanitizer has "
                    "encountered|runtime error:' %s/decisiond.log "
                    ">&2",
                    s->dir) == 0
             ? -1
             : 0;
    if (getenv("SWORN_KEEP_STACK") == NULL)
        sworn_test_rmtree(s->dir);
    free(s->dir);
    s->dir = NULL;
    return rc;
}

int sworn_stack_connect(const char *path)
{
    struct sockaddr_un sun;
    int fd;

    if (strlen(path) >= sizeof(sun.sun_path))
        return -1;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    memcpy(sun.sun_path, path, strlen(path));
    if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int sworn_stack_exchange(int fd, const uint8_t *bytes, size_t len, int timeout_ms, uint8_t **body,
                         size_t *len_out)
{
    struct sworn_frame_dec dec;
    uint8_t buf[65536];
    int rc = -1;

    *body = NULL;
    *len_out = 0;
    while (len > 0) {
        ssize_t w = send(fd, bytes, len, MSG_NOSIGNAL);

        if (w <= 0)
            break; /* the peer may close early on hostile input: read what it said */
        bytes += w;
        len -= (size_t)w;
    }
    sworn_frame_dec_init(&dec);
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t n;
        size_t off = 0;

        if (poll(&pfd, 1, timeout_ms) <= 0)
            goto out;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) {
            rc = 1;
            goto out;
        }
        while (off < (size_t)n) {
            const uint8_t *b = NULL;
            size_t blen = 0;
            long used = sworn_frame_dec_feed(&dec, buf + off, (size_t)n - off, &b, &blen);

            if (used < 0)
                goto out;
            off += (size_t)used;
            if (b != NULL) {
                *body = malloc(blen);
                memcpy(*body, b, blen);
                *len_out = blen;
                rc = 0;
                goto out;
            }
        }
    }
out:
    sworn_frame_dec_free(&dec);
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

Sworn__V1__DecisionReply *sworn_stack_decide(struct sworn_stack *s, struct sworn_stack_req *r)
{
    uint8_t *frame = NULL, *body = NULL;
    size_t frame_len = 0, len = 0;
    Sworn__V1__DecisionReply *reply = NULL;
    int fd = sworn_stack_connect(s->decision);

    if (fd < 0 || sworn_frame_pack_request(&r->req, &frame, &frame_len) < 0)
        goto out;
    if (sworn_stack_exchange(fd, frame, frame_len, 60000, &body, &len) == 0)
        reply = sworn_frame_unpack_reply(body, len);
out:
    if (fd >= 0)
        close(fd);
    free(frame);
    free(body);
    return reply;
}

Sworn__V1__AdminResponse *sworn_stack_admin(struct sworn_stack *s, Sworn__V1__AdminRequest *rq)
{
    uint8_t *frame = NULL, *body = NULL;
    size_t frame_len = 0, len = 0;
    Sworn__V1__AdminResponse *resp = NULL;
    int fd = sworn_stack_connect(s->admin);

    if (fd < 0 || sworn_frame_pack_admin_request(rq, &frame, &frame_len) < 0)
        goto out;
    if (sworn_stack_exchange(fd, frame, frame_len, 60000, &body, &len) == 0)
        resp = sworn_frame_unpack_admin_response(body, len);
out:
    if (fd >= 0)
        close(fd);
    free(frame);
    free(body);
    return resp;
}

int sworn_stack_sh(struct sworn_stack *s, const char *fmt, ...)
{
    char *cmd = NULL;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    rc = run_script("cd %s && set -a && . ./stack.env && set +a && %s", s->dir, cmd);
    free(cmd);
    return rc;
}
