/*
 * test_systemd_units.c -- the systemd units of packaging/systemd (docs/operations.md, "systemd"),
 * as `make install` installs them, checked by systemd's own tools, and the readiness they wait
 * for (Type=notify) sent by the real daemons.
 *
 * This build is installed into a throwaway root (cmake --install, DESTDIR, prefix /usr). Each
 * unit is copied with its program paths moved into that root (systemd-analyze verify checks that
 * every ExecStart program exists) and then:
 *   - `systemd-analyze verify` accepts it: exit 0, nothing on stderr;
 *   - `systemd-analyze security --offline=true` rates its exposure at most the figure
 *     docs/operations.md gives for it;
 *   - it is Type=notify and keeps the hardening docs/operations.md lists.
 * Readiness: a stack started with NOTIFY_SOCKET naming a datagram socket of the test's own gets
 * "READY=1" from decisiond's engine and from sworn-proxy (common/sdnotify.h).
 */
#define _GNU_SOURCE /* asprintf */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "stack_fixture.h"
#include "testutil.h"

struct unit {
    const char *name;
    double max_exposure; /* docs/operations.md's figure for it */
    const char *must[8]; /* lines the unit must hold */
};

static const struct unit units[] = {
    {"sworn-decisiond",
     3.5,
     {"Type=notify", "NoNewPrivileges=yes", "ProtectSystem=strict",
      "LoadCredential=hsm.pin:/etc/sworn/credentials/hsm.pin", "SystemCallFilter=@system-service",
      "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6", "LimitCORE=0", NULL}},
    {"sworn-proxy",
     3.0,
     {"Type=notify", "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateDevices=yes",
      "SystemCallFilter=@system-service", "LimitCORE=0", NULL}},
    {"sworn-witness",
     1.5,
     {"Type=notify", "User=sworn-witness", "NoNewPrivileges=yes", "ProtectSystem=strict",
      "CapabilityBoundingSet=", "PrivateUsers=yes", "LimitCORE=0", NULL}},
};
#define N_UNITS (sizeof(units) / sizeof(units[0]))

static char *root, *work;

static int group_setup(void **state)
{
    (void)state;
    root = sworn_test_install_root("units-root");
    work = sworn_test_tmpdir("units");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    sworn_test_tmpdir_drop(&root);
    sworn_test_tmpdir_drop(&work);
    return 0;
}

/* The installed unit with "/usr/sbin/" moved into the root; its path in work (free it). */
static char *unit_copy(const struct unit *u, char **text_out)
{
    char *src = NULL, *dst = NULL, *text, *out, *w;
    const char *p;
    size_t len, n = 0, rl = strlen(root);

    if (asprintf(&src, "%s/usr/lib/systemd/system/%s.service", root, u->name) < 0 ||
        asprintf(&dst, "%s/%s.service", work, u->name) < 0)
        fail_msg("asprintf");
    text = sworn_test_read_file(src, &len);
    out = malloc(len * 2 + rl * 16 + 1);
    assert_non_null(out);
    w = out;
    for (p = text; *p != '\0'; p++) {
        if (strncmp(p, "/usr/sbin/", 10) == 0 && n < 16) {
            memcpy(w, root, rl);
            w += rl;
            n++;
        }
        *w++ = *p;
    }
    *w = '\0';
    sworn_test_write_file(dst, out, strlen(out), 0644);
    *text_out = text;
    free(out);
    free(src);
    return dst;
}

static void test_verify(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_UNITS; i++) {
        char *text, *path = unit_copy(&units[i], &text);
        struct sworn_test_run r = {0};

        sworn_test_runv(&r, NULL, "systemd-analyze", "verify", "--man=no", path, NULL);
        if (r.status != 0 || r.err_len != 0)
            fail_msg("systemd-analyze verify %s: status %d:\n%s%s", units[i].name, r.status, r.out,
                     r.err);
        for (size_t k = 0; units[i].must[k] != NULL; k++) {
            char *line = NULL;

            if (asprintf(&line, "\n%s\n", units[i].must[k]) < 0)
                fail_msg("asprintf");
            if (strstr(text, line) == NULL)
                fail_msg("%s lacks the line %s", units[i].name, units[i].must[k]);
            free(line);
        }
        sworn_test_run_free(&r);
        free(text);
        free(path);
    }
}

static void test_security_exposure(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_UNITS; i++) {
        char *text, *path = unit_copy(&units[i], &text), *want = NULL;
        struct sworn_test_run r = {0};
        const char *at;
        double exposure;

        sworn_test_runv(&r, NULL, "systemd-analyze", "security", "--offline=true", "--man=no",
                        "--no-pager", path, NULL);
        sworn_test_run_must(&r, "systemd-analyze security");
        if (asprintf(&want, "Overall exposure level for %s.service: ", units[i].name) < 0)
            fail_msg("asprintf");
        at = strstr(r.out, want);
        if (at == NULL)
            fail_msg("no exposure level for %s:\n%s", units[i].name, r.out);
        exposure = strtod(at + strlen(want), NULL);
        print_message("%s: exposure %.1f (at most %.1f)\n", units[i].name, exposure,
                      units[i].max_exposure);
        if (exposure > units[i].max_exposure)
            fail_msg("%s: exposure %.1f, more than docs/operations.md's %.1f", units[i].name,
                     exposure, units[i].max_exposure);
        sworn_test_run_free(&r);
        free(want);
        free(text);
        free(path);
    }
}

/* One datagram from the notify socket within 60 s; its text in buf. 0, or -1 on timeout. */
static int notify_recv(int fd, char *buf, size_t cap)
{
    struct pollfd p = {fd, POLLIN, 0};
    ssize_t n;

    if (poll(&p, 1, 60000) != 1)
        return -1;
    n = recv(fd, buf, cap - 1, 0);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

static void test_readiness(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct sworn_stack s;
    char *sock = sworn_test_path(work, "notify.sock"), buf[256];
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), ready = 0;

    (void)state;
    assert_true(fd >= 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    setenv("NOTIFY_SOCKET", sock, 1);
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key --proxy"), 0);
    unsetenv("NOTIFY_SOCKET");
    /* decisiond's engine and sworn-proxy each say READY=1 once they serve. */
    while (ready < 2) {
        if (notify_recv(fd, buf, sizeof(buf)) < 0)
            fail_msg("%d READY=1 within 60 s, want 2", ready);
        if (strcmp(buf, "READY=1") == 0)
            ready++;
    }
    /* And decisiond says it is stopping when told to stop. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    do
        if (notify_recv(fd, buf, sizeof(buf)) < 0)
            fail_msg("no STOPPING=1 from decisiond");
    while (strcmp(buf, "STOPPING=1") != 0);
    assert_int_equal(sworn_stack_down(&s), 0);
    close(fd);
    free(sock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_security_exposure),
        cmocka_unit_test(test_readiness),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
