/*
 * r_uid.h -- root mode's agent uids (docs/sandbox.md, "Modes"). A sandbox's agent gets a uid of
 * its own outside: the first of first..first+count-1 whose lock file
 * SWORN_RUN_UID_LOCKS_PARENT/uids/UID can be locked (flock, held while the returned descriptor
 * is open: until sworn-run exits), that no range of /etc/subuid or /etc/subgid holds (its user
 * could map it with newuidmap and become the sandbox's uid from outside), and that no process of
 * the host has. The lock folder is one for the host, whatever sworn-run's state folder, so two
 * sworn-runs never give two sandboxes one uid.
 *
 * Returns 0 (OUT: *uid, *lock_fd), or -1 with sworn_err set: SWORN_ERR_RANGE when every uid is
 * taken, SWORN_ERR_IO / SWORN_ERR_ARG for the lock folder (sworn_safefile_opendir's checks).
 */
#ifndef SWORN_R_UID_H
#define SWORN_R_UID_H

#include <stdint.h>
#include <sys/types.h>

#define SWORN_RUN_UID_LOCKS_PARENT "/run/sworn-run" /* its uids/ holds one lock file per uid */

int sworn_run_uid_take(uid_t first, uint32_t count, uid_t *uid, int *lock_fd);

#endif
