/*
 * p_version.h -- the proxy's version string (static, never NULL).
 */
#ifndef SWORN_P_VERSION_H
#define SWORN_P_VERSION_H

const char *sworn_proxy_version(void);

#endif
