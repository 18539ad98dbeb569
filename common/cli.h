/*
 * cli.h -- the command-line conventions every sworn program keeps (docs/cli.md):
 *
 *   PROGRAM --help      its usage, then its exit statuses, on standard output; exit 0
 *   PROGRAM --version   "PROGRAM RELEASE (commit COMMIT)" on standard output; exit 0
 *
 * and one meaning for the first three exit statuses, in every program:
 *   0  done: the operation succeeded, or its answer is yes (allow, verified, no failure found)
 *   1  the operation failed, or its answer is no (deny, refused, not verified, a probe failed)
 *   2  bad usage: an unknown option or command, a missing or malformed argument
 * A program says in its --help which of these an input that does not load gives (most: 2), and
 * lists its statuses of its own (3 and up). The one exception is
 * sworn-run, a wrapper like timeout(1): it exits with the agent's own status, and its --help
 * says so.
 *
 * Only the first argument is read for --help and --version, so an option's value that happens to
 * be one of them is never taken for it. (The independent verifier, which links nothing of sworn's
 * own, keeps the same conventions in its own code: verifier/sworn-verify.c.)
 */
#ifndef SWORN_CLI_H
#define SWORN_CLI_H

#include <stdio.h>

#define SWORN_EXIT_OK 0
#define SWORN_EXIT_FAIL 1
#define SWORN_EXIT_USAGE 2

/*
 * When argv[1] is "--help" or "--version", print what it asks for on standard output and return
 * 1: the caller exits SWORN_EXIT_OK (or SWORN_EXIT_FAIL when standard output could not be
 * written: *status says which). Otherwise return 0 and print nothing.
 * usage: the program's usage text (ends with a newline). own_exits: lines for its own statuses
 * (3 and up; each ends with a newline), or NULL.
 */
int sworn_cli_standard(int argc, char *const *argv, const char *program, const char *usage,
                       const char *own_exits, int *status);

/* Print the usage, a blank line and the exit statuses on standard output (what --help prints). */
void sworn_cli_print_help(const char *usage, const char *own_exits);

/* Print "PROGRAM RELEASE (commit COMMIT)\n" on standard output. */
void sworn_cli_print_version(const char *program);

/* The exit statuses' lines of --help (the three shared, then own_exits when not NULL). */
void sworn_cli_print_exits(FILE *out, const char *own_exits);

#endif
