/*
 * sworn-proxy.c -- the program: parse the command line, then hand over to the proxy's modules
 * (docs/proxy.md). Being written; until then it only answers --help and --version.
 */
#include <stdio.h>
#include <string.h>

#include "p_version.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("%s\n", sworn_proxy_version());
        return 0;
    }
    fprintf(stderr, "usage: sworn-proxy --config FILE [--check-config]\n");
    return 2;
}
