/*
 * r_env.h -- the agent's environment (docs/sandbox.md, "Environment"): built from nothing, never
 * copied from sworn-run's own. It holds, in this order: PATH, HOME=/work, LANG=C.UTF-8, USER and
 * LOGNAME=agent; the proxy variables (http_proxy, HTTP_PROXY, https_proxy, HTTPS_PROXY,
 * all_proxy, ALL_PROXY = http://127.0.0.1:3128; no_proxy and NO_PROXY empty, so that nothing is
 * meant to go around the proxy, although nothing could); the CA variables of the common
 * ecosystems (SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS,
 * GIT_SSL_CAINFO, PIP_CERT) naming the sandbox's bundle, /run/sworn/ca-certificates.crt, which
 * holds the system's CAs and the proxy's; then each configured symbolic token (conf->env); then
 * each pass_env variable that the caller has set, copied as it is (the one way a caller's value
 * gets in).
 *
 * Memory: the strings live in struct sworn_run_env; envp points into it. Wiped by
 * sworn_run_env_free (it holds symbolic tokens only, but they are still the agent's handles).
 */
#ifndef SWORN_R_ENV_H
#define SWORN_R_ENV_H

#include "r_conf.h"

/* The system bundle sworn-run reads on the host (the agent gets SWORN_RUN_CA_PATH, r_fs.h). */
#define SWORN_RUN_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define SWORN_RUN_ENV_MAX (32u + 2u * SWORN_RUN_VARS_MAX)
#define SWORN_RUN_ENV_BYTES 65536u

struct sworn_run_env {
    char *envp[SWORN_RUN_ENV_MAX + 1]; /* NULL-terminated */
    size_t n;
    char text[SWORN_RUN_ENV_BYTES];
    size_t used;
};

/* Build e from c and, for pass_env, the caller's environment (getenv). Returns 0, or -1 with
 * sworn_err set (SWORN_ERR_RANGE: a passed variable does not fit). */
int sworn_run_env_build(struct sworn_run_env *e, const struct sworn_run_conf *c);

void sworn_run_env_free(struct sworn_run_env *e);

#endif
