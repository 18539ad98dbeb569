/*
 * witness_fixture.c -- a real sworn-witness for a test (witness_fixture.h).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "testutil.h"
#include "witness_fixture.h"

#define WFX_WAIT_MS 60000

static void set_path(char *out, size_t cap, const char *dir, const char *name)
{
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
        fail_msg("path too long: %s/%s", dir, name);
}

/* The configuration: the listen line (port 0 at first, then the one had), then the body. */
static void write_config(struct sworn_wfx *w)
{
    char text[sizeof(w->body) + 64];
    int n = snprintf(text, sizeof(text), "listen: 127.0.0.1:%d\n%s", w->port, w->body);

    assert_true(n > 0 && (size_t)n < sizeof(text));
    sworn_test_write_file(w->conf, text, (size_t)n, 0644);
}

void sworn_wfx_init(struct sworn_wfx *w, char *dir, const char *name, const char *origin,
                    const char *log_vkey)
{
    struct sworn_test_run r = {0};

    memset(w, 0, sizeof(*w));
    w->dir = dir;
    set_path(w->conf, sizeof(w->conf), dir, "witness.yaml");
    set_path(w->state, sizeof(w->state), dir, "witness-state.db");
    set_path(w->key, sizeof(w->key), dir, "witness.pem");
    sworn_test_run_ok("openssl genpkey ed25519", NULL, "openssl", "genpkey", "-algorithm",
                      "ed25519", "-out", w->key, NULL);
    assert_int_equal(chmod(w->key, 0600), 0);
    if ((size_t)snprintf(w->body, sizeof(w->body),
                         "state: witness-state.db\n"
                         "key:\n  uri: file:witness.pem\n  name: %s\n"
                         "logs:\n  - origin: %s\n    keys: [\"%s\"]\n",
                         name, origin, log_vkey) >= sizeof(w->body))
        fail_msg("witness configuration too long");
    write_config(w);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_WITNESS_BIN"), "--config", w->conf,
                    "--print-vkey", NULL);
    sworn_test_run_must(&r, "sworn-witness --print-vkey");
    if (r.out_len < 2 || r.out[r.out_len - 1] != '\n' || r.out_len > sizeof(w->vkey) ||
        sworn_note_verifier_parse(r.out, r.out_len - 1, &w->verifier) < 0)
        fail_msg("--print-vkey printed %s", r.out);
    memcpy(w->vkey, r.out, r.out_len - 1);
    w->vkey[r.out_len - 1] = '\0';
    sworn_test_run_free(&r);
}

int sworn_wfx_listening_port(const char *log)
{
    char *text = sworn_test_read_file(log, NULL);
    const char *p = strstr(text, "\"event\":\"listening\"");
    int port = 0;

    if (p != NULL && (p = strstr(p, "\"port\":")) != NULL)
        port = atoi(p + 7);
    free(text);
    return port;
}

void sworn_wfx_start(struct sworn_wfx *w)
{
    char name[32];
    pid_t pid;

    assert_int_equal(w->pid, 0);
    snprintf(name, sizeof(name), "witness-%d.log", ++w->starts);
    set_path(w->log, sizeof(w->log), w->dir, name);
    write_config(w);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(w->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        if (fd < 0 || dup2(fd, 2) < 0 || dup2(fd, 1) < 0)
            _exit(126);
        execl(sworn_test_bin("SWORN_WITNESS_BIN"), "sworn-witness", "--config", w->conf,
              (char *)NULL);
        _exit(127);
    }
    w->pid = pid;
    if (sworn_test_wait_file_has(w->log, "\"event\":\"listening\"", WFX_WAIT_MS) < 0) {
        char *text = sworn_test_read_file_opt(w->log, NULL);

        fail_msg("the witness did not start: %s", text != NULL ? text : "(no log)");
    }
    w->port = sworn_wfx_listening_port(w->log);
    assert_true(w->port > 0);
    snprintf(w->url, sizeof(w->url), "http://127.0.0.1:%d", w->port);
}

void sworn_wfx_stop(struct sworn_wfx *w)
{
    int st = 0;
    char *text;
    pid_t pid = w->pid;

    assert_true(pid > 0);
    w->pid = 0;
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    text = sworn_test_read_file_opt(w->log, NULL);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        (text != NULL && strstr(text, "Sanitizer") != NULL))
        fail_msg("the witness ended badly (%d): %s", st, text != NULL ? text : "");
    free(text);
}

void sworn_wfx_kill(struct sworn_wfx *w)
{
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
        w->pid = 0;
    }
}
