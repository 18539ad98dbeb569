/*
 * fuzz_run_config.c -- libFuzzer target for sandbox/r_conf.c, sworn-run's two configuration
 * readers: the first byte chooses, even: the YAML file (sworn_run_conf_load_yaml_mem), odd: a dev
 * stack's stack.env (sworn_run_conf_stack_text); the rest is the input.
 *
 * A refusal must set a message naming the input. An accepted configuration must hold what
 * r_conf.h promises: names a HostlinkHello can carry, absolute NUL-terminated paths, every
 * env and files value a symbolic token, at most SWORN_RUN_VARS_MAX of each list, no name both in
 * env and pass_env; and its canonical text must fit and hash. Anything else aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "frame.h"
#include "fuzz.h"
#include "p_token.h"
#include "r_conf.h"

static struct sworn_run_conf conf;
static char canon[65536];

static void must(int ok)
{
    if (!ok)
        abort();
}

static void path_ok(const char *p, size_t cap)
{
    size_t n = strnlen(p, cap);

    must(n < cap);
    must(n == 0 || (p[0] == '/' && strstr(p, "//") == NULL && strstr(p, "/../") == NULL));
}

static void check(const struct sworn_run_conf *c)
{
    uint8_t digest[32];

    must(c->principal[0] == '\0' || sworn_frame_name_ok(c->principal));
    must(c->name[0] == '\0' || sworn_frame_name_ok(c->name));
    path_ok(c->hostlink, sizeof(c->hostlink));
    path_ok(c->admin_socket, sizeof(c->admin_socket));
    path_ok(c->proxy_ca, sizeof(c->proxy_ca));
    path_ok(c->state_dir, sizeof(c->state_dir));
    must(c->nenv <= SWORN_RUN_VARS_MAX && c->nfiles <= SWORN_RUN_VARS_MAX &&
         c->npass_env <= SWORN_RUN_VARS_MAX && c->nmask <= SWORN_RUN_VARS_MAX);
    for (size_t i = 0; i < c->nenv; i++)
        must(sworn_symtok_is((const uint8_t *)c->env[i].value, strlen(c->env[i].value)));
    for (size_t i = 0; i < c->nfiles; i++) {
        must(sworn_symtok_is((const uint8_t *)c->files[i].value, strlen(c->files[i].value)));
        must(strchr(c->files[i].name, '/') == NULL);
    }
    for (size_t i = 0; i < c->npass_env; i++)
        for (size_t j = 0; j < c->nenv; j++)
            must(strcmp(c->pass_env[i], c->env[j].name) != 0);
    for (size_t i = 0; i < c->nmask; i++)
        path_ok(c->mask[i], sizeof(c->mask[i]));
    must(sworn_run_conf_canonical(c, canon, sizeof(canon)) > 0);
    must(sworn_run_conf_digest(c, digest) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc;

    if (size == 0)
        return 0;
    sworn_run_conf_init(&conf);
    sworn_err_clear();
    if ((data[0] & 1) == 0)
        rc = sworn_run_conf_load_yaml_mem(&conf, "fuzz.yaml", data + 1, size - 1);
    else
        rc = sworn_run_conf_stack_text(&conf, "fuzz/stack.env", (const char *)data + 1, size - 1);
    if (rc < 0) {
        must(sworn_err_code() != SWORN_OK);
        must(strstr(sworn_err_msg(), "fuzz") != NULL);
    } else {
        must(rc == 0);
        check(&conf);
    }
    sworn_run_conf_free(&conf);
    return 0;
}
