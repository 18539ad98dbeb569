/*
 * d_seccomp.c -- decisiond's seccomp filter (d_seccomp.h): the configuration's flags, the role,
 * and the log line; the filter itself is built by common/seccomp.c.
 */
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "d_jlog.h"
#include "d_seccomp.h"
#include "err.h"
#include "seccomp.h"

const char *d_seccomp_mode_name(enum d_seccomp_mode mode)
{
    return sworn_seccomp_mode_name((enum sworn_seccomp_mode)mode);
}

/* Whether a TCTI configuration string names the local device TCTI ("device", "device:PATH"). */
static int tcti_is_device(const char *tcti)
{
    return tcti == NULL || strcmp(tcti, "device") == 0 || strncmp(tcti, "device:", 7) == 0;
}

unsigned d_seccomp_flags(const struct sworn_dconfig *cfg)
{
    if (cfg->n_witnesses > 0)
        return D_SECCOMP_INET; /* the checkpoint thread posts to the witnesses */
    if (cfg->signer_module != NULL || strncmp(cfg->signer_key, "pkcs11:", 7) == 0)
        return D_SECCOMP_INET;
    if (!tcti_is_device(cfg->tpm_tcti) || !tcti_is_device(cfg->signer_tcti))
        return D_SECCOMP_INET;
    return 0;
}

int d_seccomp_install(enum sworn_seccomp_role role, enum d_seccomp_mode mode, unsigned flags)
{
    struct sworn_seccomp_report report;
    json_object *f;
    int rc = sworn_seccomp_install(role, (enum sworn_seccomp_mode)mode, flags, &report);

    if (rc < 0)
        return -1;
    if (rc > 0) {
        if (mode == D_SECCOMP_OFF)
            d_log_msg(D_LOG_WARN, "seccomp", "off: this process is not confined by a filter");
        else
            d_log_msg(D_LOG_WARN, "seccomp",
                      "not installed: no system call table for this architecture (x86_64 and "
                      "aarch64 only); this process is not confined by a filter");
        return 1;
    }
    f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(f, "mode", json_object_new_string(d_seccomp_mode_name(mode)));
        json_object_object_add(f, "role", json_object_new_string(sworn_seccomp_role_name(role)));
        json_object_object_add(f, "arch", json_object_new_string(report.arch));
        json_object_object_add(f, "inet", json_object_new_boolean(flags & D_SECCOMP_INET));
        json_object_object_add(f, "instructions",
                               json_object_new_int64((int64_t)report.instructions));
        json_object_object_add(f, "allowed", json_object_new_int64((int64_t)report.allowed));
        json_object_object_add(f, "killed", json_object_new_int64((int64_t)report.killed));
    }
    d_log(D_LOG_INFO, "seccomp", f);
    return 0;
}
