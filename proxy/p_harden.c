/*
 * p_harden.c -- privilege drop and seccomp for sworn-proxy (p_harden.h).
 */
#include "p_harden.h"

#include <json-c/json.h>
#include <unistd.h>

#include "err.h"
#include "p_jlog.h"
#include "p_proxy.h"
#include "privdrop.h"
#include "seccomp.h"

int sworn_proxy_harden_early(void)
{
    return sworn_no_dumps();
}

int sworn_proxy_harden(struct sworn_proxy *px)
{
    const struct sworn_pconf *c = px->conf;
    json_object *o = json_object_new_object();

    if (c->has_user && (geteuid() != c->uid || getegid() != c->gid)) {
        if (geteuid() != 0) {
            json_object_put(o);
            return sworn_err_set(SWORN_ERR_ARG, "user: %s: only root can switch to it", c->user);
        }
        if (sworn_drop_privileges(c->uid, c->gid, NULL) != 0 || sworn_no_dumps() != 0) {
            json_object_put(o);
            return -1;
        }
    }
    {
        struct sworn_seccomp_report rep = {0};
        int rc =
            sworn_seccomp_install(SWORN_SECCOMP_PROXY, (enum sworn_seccomp_mode)c->seccomp_mode,
                                  SWORN_SECCOMP_INET, &rep);

        if (rc < 0) {
            json_object_put(o);
            return -1;
        }
        json_object_object_add(o, "uid", json_object_new_int64((int64_t)getuid()));
        json_object_object_add(o, "gid", json_object_new_int64((int64_t)getgid()));
        json_object_object_add(
            o, "seccomp",
            json_object_new_string(
                rc == 0 ? sworn_seccomp_mode_name((enum sworn_seccomp_mode)c->seccomp_mode)
                        : "off"));
        if (rc == 1 && c->seccomp_mode != SWORN_SECCOMP_OFF) {
            /* enforce or log asked, nothing installed: an architecture without a table. Never
             * silent: the operator believes the proxy is confined. */
            json_object *w = json_object_new_object();

            json_object_object_add(
                w, "warning",
                json_object_new_string("no seccomp table for this architecture: the proxy runs "
                                       "without a system call filter"));
            sworn_plog(SWORN_PLOG_WARN, "seccomp_unavailable", w);
        }
        if (rc == 0) {
            json_object_object_add(o, "seccomp_arch", json_object_new_string(rep.arch));
            json_object_object_add(o, "seccomp_instructions",
                                   json_object_new_int64((int64_t)rep.instructions));
        }
    }
    sworn_plog(SWORN_PLOG_INFO, "hardened", o);
    return 0;
}
