/*
 * c_exec.h -- run another program for a probe: sworn-verify (an argv, never a shell, so no path
 * in the deployment file is ever parsed as shell syntax) and the operator's stop and start
 * commands of decisiond (a /bin/sh command line, as the deployment file gives them).
 *
 * The child's standard input is /dev/null and its standard error goes to ours (a person running
 * the tool sees what failed); its standard output is captured up to a bound. Nothing is passed in
 * argv or the environment but what the caller gives: no secret is.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_IO: fork, exec or wait failed; SWORN_ERR_RANGE: the
 * output was longer than max; SWORN_ERR_NOMEM). Not thread-safe with other fork()ing threads.
 */
#ifndef SWORN_C_EXEC_H
#define SWORN_C_EXEC_H

#include <stddef.h>

/*
 * Run argv[0] with argv (NULL-terminated) and wait for it. OUT: *out (malloc'd, NUL-terminated:
 * free it) and *out_len when out is not NULL (else the output goes to /dev/null), *status: the
 * exit status, or 128 + the signal that ended it. Returns 0 when the child ran and ended.
 */
int c_exec_capture(char *const argv[], size_t max, char **out, size_t *out_len, int *status);

/* /bin/sh -c command; *status as above. Returns 0 when the shell ran and ended. */
int c_exec_shell(const char *command, int *status);

#endif
