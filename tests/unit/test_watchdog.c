/*
 * test_watchdog.c -- the device watchdog (signer/watchdog.h) with a call that blocks on a pipe
 * until the test writes to it: a call past its deadline becomes an error and is abandoned, the
 * watchdog says it is still inside, and a wait for it returns as soon as the call does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "err.h"
#include "watchdog.h"

/* Blocks until a byte arrives on the pipe whose read end arg points at; returns 7. */
static int blocking_call(void *arg)
{
    int fd = *(int *)arg;
    char c;

    return read(fd, &c, 1) == 1 ? 7 : -1;
}

static int quick_call(void *arg)
{
    (void)arg;
    return 3;
}

static void test_abandon_then_wait_idle(void **state)
{
    struct sworn_watchdog *wd = NULL;
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(sworn_watchdog_new(&wd), 0);
    /* Nothing abandoned: idle at once. */
    assert_int_equal(sworn_watchdog_busy(wd), 0);
    assert_int_equal(sworn_watchdog_wait_idle(wd, 10), 0);
    assert_int_equal(sworn_watchdog_run(wd, quick_call, NULL, 5000), 3);
    /* A call that does not return within 50 ms is an I/O error, and stays inside. */
    assert_int_equal(sworn_watchdog_run(wd, blocking_call, &fds[0], 50), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_int_equal(sworn_watchdog_busy(wd), 1);
    assert_int_equal(sworn_watchdog_wait_idle(wd, 20), 1);
    /* A fresh worker serves the next call while the abandoned one is still inside. */
    assert_int_equal(sworn_watchdog_run(wd, quick_call, NULL, 5000), 3);
    assert_int_equal(sworn_watchdog_busy(wd), 1);
    /* The device answers: the wait returns once the call does (well before its 60 s bound). */
    assert_int_equal(write(fds[1], "x", 1), 1);
    assert_int_equal(sworn_watchdog_wait_idle(wd, 60000), 0);
    assert_int_equal(sworn_watchdog_busy(wd), 0);
    sworn_watchdog_free(wd);
    close(fds[0]);
    close(fds[1]);
}

/* Freeing the watchdog with a call still inside leaves the call's worker to free itself. */
static void test_free_while_abandoned(void **state)
{
    struct sworn_watchdog *wd = NULL;
    int fds[2];

    (void)state;
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(sworn_watchdog_new(&wd), 0);
    assert_int_equal(sworn_watchdog_run(wd, blocking_call, &fds[0], 20), -1);
    sworn_watchdog_free(wd);
    /* The worker returns with its byte and frees its own state (LeakSanitizer, at exit, sees
     * whether it did; its read end stays open until then). */
    assert_int_equal(write(fds[1], "x", 1), 1);
    close(fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_abandon_then_wait_idle),
        cmocka_unit_test(test_free_while_abandoned),
    };

    return cmocka_run_group_tests(tests, 0, 0);
}
