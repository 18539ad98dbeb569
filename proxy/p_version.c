/*
 * p_version.c -- the proxy's version string, for --help, the startup log line and the metrics.
 */
#include "p_version.h"

const char *sworn_proxy_version(void)
{
    return "sworn-proxy 0.1";
}
