/*
 * privdrop.c -- no core dumps, and a privilege drop that is checked (contract in privdrop.h).
 */
#define _GNU_SOURCE /* setresuid, setresgid, getresuid, getresgid, setgroups */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "err.h"

int sworn_no_core_files(void)
{
    struct rlimit zero = {.rlim_cur = 0, .rlim_max = 0};

    if (setrlimit(RLIMIT_CORE, &zero) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot set RLIMIT_CORE to 0: %s", strerror(errno));
    return 0;
}

int sworn_not_dumpable(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot clear the dumpable flag: %s", strerror(errno));
    return 0;
}

int sworn_no_dumps(void)
{
    if (sworn_no_core_files() < 0)
        return -1;
    return sworn_not_dumpable();
}

int sworn_drop_privileges(uid_t uid, gid_t gid, const char *chroot_dir)
{
    uid_t ru, eu, su;
    gid_t rg, eg, sg;

    if (chroot_dir != NULL && (chroot(chroot_dir) != 0 || chdir("/") != 0))
        return sworn_err_set(SWORN_ERR_IO, "cannot chroot to %s: %s", chroot_dir, strerror(errno));
    if (setgroups(0, NULL) != 0)
        return sworn_err_set(SWORN_ERR_IO, "setgroups: %s", strerror(errno));
    if (setresgid(gid, gid, gid) != 0)
        return sworn_err_set(SWORN_ERR_IO, "setresgid(%lu): %s", (unsigned long)gid,
                             strerror(errno));
    if (setresuid(uid, uid, uid) != 0)
        return sworn_err_set(SWORN_ERR_IO, "setresuid(%lu): %s", (unsigned long)uid,
                             strerror(errno));
    /* Trust nothing: read every id back, and make sure root cannot be regained. */
    if (getresgid(&rg, &eg, &sg) != 0 || rg != gid || eg != gid || sg != gid)
        return sworn_err_set(SWORN_ERR_IO, "the group ids did not change to %lu",
                             (unsigned long)gid);
    if (getresuid(&ru, &eu, &su) != 0 || ru != uid || eu != uid || su != uid)
        return sworn_err_set(SWORN_ERR_IO, "the user ids did not change to %lu",
                             (unsigned long)uid);
    if (getgroups(0, NULL) != 0)
        return sworn_err_set(SWORN_ERR_IO, "supplementary groups remain after setgroups");
    if (setuid(0) == 0)
        return sworn_err_set(SWORN_ERR_IO, "root could be regained after dropping privileges");
    return 0;
}
