/*
 * privsep_fixture.c -- the privilege-separation tests' stack and checks (privsep_fixture.h).
 */
#define _GNU_SOURCE /* setresuid, setresgid */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privsep_fixture.h"
#include "testutil.h"

struct sworn_stack sworn_privsep_stack;

int sworn_privsep_teardown(void **state)
{
    (void)state;
    if (sworn_privsep_stack.dir != NULL)
        assert_int_equal(sworn_stack_down(&sworn_privsep_stack), 0);
    memset(&sworn_privsep_stack, 0, sizeof(sworn_privsep_stack));
    return 0;
}

const struct passwd *sworn_privsep_user(const char *name)
{
    struct passwd *pw = getpwnam(name);

    if (pw == NULL)
        fail_msg("no user %s: scripts/install-deps makes it", name);
    return pw;
}

int sworn_privsep_as_user(const char *name, int (*fn)(void *), void *arg)
{
    const struct passwd *pw = sworn_privsep_user(name);
    uid_t uid = pw->pw_uid;
    gid_t gid = pw->pw_gid;
    int status;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
            setresuid(uid, uid, uid) != 0)
            _exit(99);
        _exit(fn(arg));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

int sworn_privsep_check_config_in(struct sworn_stack *s, const char *pre, const char *expr)
{
    return sworn_stack_sh(s,
                          "sed '%s' \"$CONFIG\" > \"$CONFIG.variant\" && "
                          "%s \"$BUILD/decisiond/sworn-decisiond\" --config \"$CONFIG.variant\" "
                          "--check-config > check.out 2>&1",
                          expr, pre);
}

int sworn_privsep_check_config(struct sworn_stack *s, const char *expr)
{
    return sworn_privsep_check_config_in(s, "", expr);
}

int sworn_privsep_check_out_has(struct sworn_stack *s, const char *needle)
{
    char *path = sworn_test_path(s->dir, "check.out"), *out;
    size_t len;
    int found;

    out = sworn_test_read_file(path, &len);
    found = strstr(out, needle) != NULL;
    if (!found)
        fprintf(stderr, "check.out (wanted \"%s\"):\n%s\n", needle, out);
    free(out);
    free(path);
    return found;
}
