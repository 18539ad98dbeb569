/*
 * test_decisiond_metrics.c -- decisiond's metrics socket (sockets.metrics, decisiond/d_mserve.h,
 * docs/decisiond.md "Metrics and health") scraped by clients no one here wrote: curl over the
 * Unix socket, and Python's prometheus_client parsing the text (installed by
 * scripts/install-deps: python3-prometheus-client). A real stack (scripts/dev-stack configures
 * the socket), real decisions counted.
 *
 *   GET /metrics   200, the exposition format, the decisions made counted by effect
 *   GET /health    200 "ok"; 503 naming the TPM once swtpm is killed under tpm.required
 *   others         404 for another path, 405 for another method, 400 for a malformed request,
 *                  a request head over 4 KiB dropped; the socket root's alone, mode 0600
 */
#define _GNU_SOURCE /* asprintf */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "stack_fixture.h"
#include "testutil.h"

static struct sworn_stack stack;

static int teardown(void **state)
{
    (void)state;
    return sworn_stack_down(&stack);
}

static char *metrics_socket(void)
{
    return sworn_test_path(stack.dir, "metrics.sock");
}

/* curl over the metrics socket: OUT r (stdout is the body; -w adds "\nSTATUS <code>"). */
static void curl(struct sworn_test_run *r, const char *method, const char *path)
{
    char *sock = metrics_socket(), *url = NULL;

    if (asprintf(&url, "http://localhost%s", path) < 0)
        fail_msg("asprintf");
    sworn_test_runv(r, NULL, "curl", "-sS", "--max-time", "30", "-X", method, "--unix-socket", sock,
                    "-w", "\nSTATUS %{http_code} %{content_type}", url, NULL);
    sworn_test_run_must(r, "curl on the metrics socket");
    free(url);
    free(sock);
}

static void expect_status(const struct sworn_test_run *r, const char *want)
{
    if (strstr(r->out, want) == NULL)
        fail_msg("want \"%s\", got:\n%s", want, r->out);
}

/* One raw exchange on the socket: send req, read until the server closes. */
static char *raw(const char *req, size_t len)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char *sock = metrics_socket(), *out = calloc(1, 65536);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {30, 0};
    size_t got = 0;
    ssize_t n;

    assert_true(fd >= 0 && out != NULL);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    if (len > 0)
        assert_true(send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len);
    while (got < 65535 && (n = recv(fd, out + got, 65535 - got, 0)) > 0)
        got += (size_t)n;
    assert_true(n == 0 || got == 65535); /* closed by the server, not timed out */
    close(fd);
    free(sock);
    return out;
}

static void test_metrics_text(void **state)
{
    struct sworn_test_run r = {0}, py = {0};
    char *body, *file, *scrape;
    struct stat st;

    (void)state;
    assert_int_equal(sworn_stack_up(&stack, "--no-tpm --file-key"), 0);
    /* Only root (the monitor's user) may connect. */
    file = metrics_socket();
    assert_int_equal(stat(file, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_uid, 0);
    for (int i = 0; i < 3; i++) {
        char id[16];

        snprintf(id, sizeof(id), "m-allow-%d", i);
        sworn_stack_expect_path(&stack, id, "/allowed/m", SWORN__V1__EFFECT__EFFECT_ALLOW);
    }
    sworn_stack_expect_path(&stack, "m-deny", "/denied/m", SWORN__V1__EFFECT__EFFECT_DENY);
    curl(&r, "GET", "/metrics");
    expect_status(&r, "STATUS 200 text/plain; version=0.0.4");
    assert_non_null(strstr(r.out, "# TYPE sworn_decisions_total counter\n"));
    assert_non_null(strstr(r.out, "sworn_decisions_total{effect=\"allow\"} 3\n"));
    assert_non_null(strstr(r.out, "sworn_decisions_total{effect=\"deny\"} 1\n"));
    /* The same text swornctl metrics prints over the admin socket: one family set. */
    assert_non_null(strstr(r.out, "sworn_signer_up 1\n"));
    /* An independent parser: every family parses, and the allow count reads back as 3. */
    body = strndup(r.out, (size_t)(strstr(r.out, "\nSTATUS ") - r.out) + 1);
    assert_non_null(body);
    scrape = sworn_test_path(stack.dir, "scrape.txt");
    sworn_test_write_file(scrape, body, strlen(body), 0600);
    sworn_test_runv(&py, NULL, "/usr/bin/python3", "-c",
                    "import sys\n"
                    "from prometheus_client.parser import text_string_to_metric_families as t\n"
                    "n = 0\n"
                    "for f in t(open(sys.argv[1]).read()):\n"
                    "    for s in f.samples:\n"
                    "        if s.name == 'sworn_decisions_total' and s.labels == {'effect': "
                    "'allow'}:\n"
                    "            n = s.value\n"
                    "print(int(n))\n",
                    scrape, NULL);
    sworn_test_run_must(&py, "prometheus_client's parser on the scrape");
    assert_string_equal(py.out, "3\n");
    free(body);
    free(file);
    free(scrape);
    sworn_test_run_free(&r);
    sworn_test_run_free(&py);
}

static void test_health_and_refusals(void **state)
{
    struct sworn_test_run r = {0};
    char big[8192], *out;

    (void)state;
    assert_int_equal(sworn_stack_up(&stack, "--no-tpm --file-key"), 0);
    curl(&r, "GET", "/health");
    expect_status(&r, "ok\n\nSTATUS 200");
    sworn_test_run_free(&r);
    curl(&r, "GET", "/nowhere");
    expect_status(&r, "STATUS 404");
    sworn_test_run_free(&r);
    curl(&r, "POST", "/metrics");
    expect_status(&r, "STATUS 405");
    sworn_test_run_free(&r);
    /* Not HTTP at all, and a target that is not a path. */
    out = raw("HELLO\r\n\r\n", 9);
    assert_int_equal(strncmp(out, "HTTP/1.1 400 ", 13), 0);
    free(out);
    out = raw("GET metrics HTTP/1.1\r\n\r\n", 24);
    assert_int_equal(strncmp(out, "HTTP/1.1 400 ", 13), 0);
    free(out);
    /* A head that never ends within 4 KiB: dropped without an answer. */
    memset(big, 'a', sizeof(big));
    memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
    out = raw(big, sizeof(big));
    assert_string_equal(out, "");
    free(out);
    /* The daemon still decides, and the socket still answers. */
    sworn_stack_expect_path(&stack, "after", "/allowed/m", SWORN__V1__EFFECT__EFFECT_ALLOW);
    curl(&r, "GET", "/health");
    expect_status(&r, "STATUS 200");
    sworn_test_run_free(&r);
}

/* tpm.required and the TPM gone: the health check says so (503, naming the TPM). */
static void test_health_tpm_down(void **state)
{
    struct sworn_test_run r = {0};
    int i;

    (void)state;
    assert_int_equal(sworn_stack_up(&stack, "--file-key --tpm-required"), 0);
    curl(&r, "GET", "/health");
    expect_status(&r, "STATUS 200");
    sworn_test_run_free(&r);
    assert_true(stack.swtpm_pid > 0);
    assert_int_equal(kill(stack.swtpm_pid, SIGKILL), 0);
    /* The checkpoint thread finds out at its next quote: each CheckpointNow after a new entry
     * is a round that signs and quotes (a denied request: with the TPM gone, allows are too). */
    for (i = 0; i < 30 && sworn_stack_metric(&stack, "sworn_tpm_up") != 0.0; i++) {
        char id[16];

        snprintf(id, sizeof(id), "tick-%d", i);
        sworn_stack_expect_path(&stack, id, "/denied/t", SWORN__V1__EFFECT__EFFECT_DENY);
        sworn_stack_checkpoint_now(&stack);
    }
    assert_true(sworn_stack_metric(&stack, "sworn_tpm_up") == 0.0);
    curl(&r, "GET", "/health");
    expect_status(&r, "TPM down and tpm.required");
    expect_status(&r, "STATUS 503");
    sworn_test_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_metrics_text, teardown),
        cmocka_unit_test_teardown(test_health_and_refusals, teardown),
        cmocka_unit_test_teardown(test_health_tpm_down, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
