/*
 * sworn-proxy.c -- the program: parse the command line, then hand over to the proxy's modules
 * (docs/proxy.md). Being written (issue 14): today it checks a configuration
 * (--check-config) and answers --help and --version; serving comes with the event loop.
 *
 * Exit codes: 0 success, 1 a configuration that is refused, 2 bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "p_config.h"
#include "p_version.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: sworn-proxy --check-config --config FILE\n"
                 "       sworn-proxy --version | --help\n");
}

/* The configuration is about 100 KiB: kept off the stack. */
static struct sworn_pconf config;

int main(int argc, char **argv)
{
    const char *path = NULL;
    int check = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s\n", sworn_proxy_version());
            return 0;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--check-config") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (path == NULL || !check) {
        usage(stderr);
        return 2;
    }
    if (sworn_pconf_load(path, &config) != 0 || sworn_pconf_check(&config) != 0) {
        fprintf(stderr, "sworn-proxy: %s\n", sworn_err_msg());
        return 1;
    }
    printf("%s: ok\n", path);
    return 0;
}
