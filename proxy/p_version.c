/*
 * p_version.c -- the proxy's version string, for --help, the startup log line and the metrics.
 */
#include "p_version.h"

#include "sworn_version.h"

const char *sworn_proxy_version(void)
{
    /* The same words as every program's --version (common/cli.h). */
    return "sworn-proxy " SWORN_RELEASE " (commit " SWORN_COMMIT ")";
}
