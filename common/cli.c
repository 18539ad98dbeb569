/*
 * cli.c -- --help, --version and the shared exit statuses (contract in cli.h).
 */
#include "cli.h"

#include <string.h>

#include "sworn_version.h"

void sworn_cli_print_exits(FILE *out, const char *own_exits)
{
    fputs("Exit status:\n"
          "  0  done: succeeded, or the answer is yes\n"
          "  1  failed, or the answer is no\n"
          "  2  bad usage: an unknown option or command, a missing or malformed argument\n",
          out);
    if (own_exits != NULL)
        fputs(own_exits, out);
}

void sworn_cli_print_version(const char *program)
{
    printf("%s %s (commit %s)\n", program, SWORN_RELEASE, SWORN_COMMIT);
}

void sworn_cli_print_help(const char *usage, const char *own_exits)
{
    fputs(usage, stdout);
    fputc('\n', stdout);
    sworn_cli_print_exits(stdout, own_exits);
}

int sworn_cli_standard(int argc, char *const *argv, const char *program, const char *usage,
                       const char *own_exits, int *status)
{
    if (argc < 2 || argv[1] == NULL)
        return 0;
    if (strcmp(argv[1], "--help") == 0) {
        sworn_cli_print_help(usage, own_exits);
    } else if (strcmp(argv[1], "--version") == 0) {
        sworn_cli_print_version(program);
    } else {
        return 0;
    }
    *status = fflush(stdout) == 0 && !ferror(stdout) ? SWORN_EXIT_OK : SWORN_EXIT_FAIL;
    return 1;
}
