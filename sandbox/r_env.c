/* r_env.c -- the agent's environment (r_env.h). */
#include "r_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "r_fs.h"
#include "wipe.h"

static int add(struct sworn_run_env *e, const char *name, const char *value)
{
    size_t need = strlen(name) + 1 + strlen(value) + 1;

    if (e->n >= SWORN_RUN_ENV_MAX || need > sizeof(e->text) - e->used)
        return sworn_err_set(SWORN_ERR_RANGE, "the agent's environment is over %u bytes (at %s)",
                             SWORN_RUN_ENV_BYTES, name);
    e->envp[e->n++] = e->text + e->used;
    e->used += (size_t)snprintf(e->text + e->used, need, "%s=%s", name, value) + 1;
    e->envp[e->n] = NULL;
    return 0;
}

int sworn_run_env_build(struct sworn_run_env *e, const struct sworn_run_conf *c)
{
    static const char *const proxy_vars[] = {"http_proxy",  "HTTP_PROXY", "https_proxy",
                                             "HTTPS_PROXY", "all_proxy",  "ALL_PROXY"};
    static const char *const ca_vars[] = {"SSL_CERT_FILE",  "REQUESTS_CA_BUNDLE",
                                          "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                          "GIT_SSL_CAINFO", "PIP_CERT"};
    char proxy[64];

    memset(e, 0, sizeof(*e));
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%u", SWORN_RUN_PROXY_PORT);
    SWORN_GUARD(add(e, "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"));
    SWORN_GUARD(add(e, "HOME", "/work"));
    SWORN_GUARD(add(e, "LANG", "C.UTF-8"));
    SWORN_GUARD(add(e, "USER", "agent"));
    SWORN_GUARD(add(e, "LOGNAME", "agent"));
    for (size_t i = 0; i < sizeof(proxy_vars) / sizeof(proxy_vars[0]); i++)
        SWORN_GUARD(add(e, proxy_vars[i], proxy));
    SWORN_GUARD(add(e, "no_proxy", ""));
    SWORN_GUARD(add(e, "NO_PROXY", ""));
    for (size_t i = 0; i < sizeof(ca_vars) / sizeof(ca_vars[0]); i++)
        SWORN_GUARD(add(e, ca_vars[i], SWORN_RUN_CA_PATH));
    for (size_t i = 0; i < c->nenv; i++)
        SWORN_GUARD(add(e, c->env[i].name, c->env[i].value));
    for (size_t i = 0; i < c->npass_env; i++) {
        const char *v = getenv(c->pass_env[i]);
        if (v != NULL)
            SWORN_GUARD(add(e, c->pass_env[i], v));
    }
    return 0;
fail:
    sworn_run_env_free(e);
    return -1;
}

void sworn_run_env_free(struct sworn_run_env *e)
{
    sworn_memzero(e, sizeof(*e));
}
