/*
 * privdrop.h -- the two process-hardening steps every sworn daemon process takes (the signer
 * child and sworn-decisiond), in one place so they cannot drift apart.
 *
 * sworn_no_dumps: RLIMIT_CORE 0 (no core file can carry a key, a PIN or a credential) and
 * PR_SET_DUMPABLE 0 (no ptrace or /proc/<pid>/mem by other processes of the same uid). Call it
 * again after any credential change: the kernel resets the dumpable flag then.
 *
 * sworn_drop_privileges: switch to uid/gid for good (after chroot to chroot_dir when not NULL):
 * setgroups(0), setresgid, setresuid, then read every id back, check there are no supplementary
 * groups and that setuid(0) fails. Any failure is an error: the caller must exit, never go on
 * with privileges it meant to drop.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_IO).
 */
#ifndef SWORN_PRIVDROP_H
#define SWORN_PRIVDROP_H

#include <sys/types.h>

int sworn_no_dumps(void);
/* Its two halves: RLIMIT_CORE 0, and PR_SET_DUMPABLE 0. */
int sworn_no_core_files(void);
int sworn_not_dumpable(void);
int sworn_drop_privileges(uid_t uid, gid_t gid, const char *chroot_dir);

#endif
