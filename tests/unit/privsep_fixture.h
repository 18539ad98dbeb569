/*
 * privsep_fixture.h -- what the privilege-separation tests (test_privsep, test_privsep_attacks)
 * share: the one stack a test brings up (--privsep) and its teardown, the users the stack runs
 * as, and --check-config runs on variants of the stack's configuration.
 *
 * Test code only: the helpers fail the running cmocka test on an error.
 */
#ifndef SWORN_PRIVSEP_FIXTURE_H
#define SWORN_PRIVSEP_FIXTURE_H

#include <pwd.h>

#include "stack_fixture.h"
#include "testutil.h"

/* The stack of the running test; sworn_privsep_teardown takes it down. */
extern struct sworn_stack sworn_privsep_stack;

/* A cmocka teardown: takes sworn_privsep_stack down (when it is up) and clears it. */
int sworn_privsep_teardown(void **state);

/* The passwd entry of user name; fails the test when there is none. */
const struct passwd *sworn_privsep_user(const char *name);

/*
 * Run fn(arg) in a forked child that is only user name (every uid and gid its, no supplementary
 * groups); returns the child's exit status (99: it could not become the user). Fails the test
 * when the child does not exit normally.
 */
SWORN_TEST_MUST_CHECK
int sworn_privsep_as_user(const char *name, int (*fn)(void *), void *arg);

/*
 * --check-config on the stack's configuration rewritten by sed expression expr, in a shell whose
 * command prefix is pre ("": none; e.g. a mount namespace); the output goes to check.out in the
 * stack's folder. Returns the exit status.
 */
SWORN_TEST_MUST_CHECK
int sworn_privsep_check_config_in(struct sworn_stack *s, const char *pre, const char *expr);

/* sworn_privsep_check_config_in with no prefix. */
SWORN_TEST_MUST_CHECK
int sworn_privsep_check_config(struct sworn_stack *s, const char *expr);

/* Whether check.out holds needle; when not, it is printed to stderr. */
SWORN_TEST_MUST_CHECK
int sworn_privsep_check_out_has(struct sworn_stack *s, const char *needle);

#endif
