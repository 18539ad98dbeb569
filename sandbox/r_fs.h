/*
 * r_fs.h -- the sandbox's filesystem (docs/sandbox.md, "Filesystem"): built by the sandbox's pid 1
 * in its own mount namespace, and removed by sworn-run from the host when the sandbox has ended.
 *
 * sworn_run_fs_mount_root (in the sandbox's pid 1, after its uid and gid maps are written and
 * while it still has the identity it was cloned with, which can walk to the run folder) makes
 * every mount of the host private to the namespace, mounts the root's tmpfs (16 MiB, owned by
 * uid:gid, the agent's ids inside) on `mountpoint` and opens it: OUT *root_fd.
 *
 * sworn_run_fs_enter (then, as the agent's uid, with the capabilities of its own user namespace)
 * builds in that tmpfs, reached through root_fd only:
 *   /usr /bin /sbin /etc and every /lib* of the host: read-only, nosuid, nodev binds of the host's
 *     (not recursive: a mount below them on the host is not carried in), or the same symbolic link
 *     where the host has one (a merged /usr); the flags the host locked stay (from statvfs);
 *   masked: /etc/shadow, /etc/shadow-, /etc/gshadow, /etc/gshadow-, /etc/sworn, /etc/ssl/private,
 *     /etc/resolv.conf and the configured paths: an empty read-only file over a file, an empty
 *     read-only tmpfs over a folder; a path that is not there is skipped;
 *   /run/sworn/ca-certificates.crt: the CA bundle given (the system's CAs and the proxy's), also
 *     bound read-only over /etc/ssl/certs/ca-certificates.crt when the host has that file;
 *   /run/sworn/tokens/NAME: each configured file, holding its symbolic token, mode 0400;
 *   /tmp (tmpfs, 1777, nosuid, nodev; at most the memory limit, else 1 GiB, and 65536 files), /dev
 * (tmpfs with binds of null, zero, full, random, urandom, tty; the fd, stdin, stdout, stderr links;
 * /dev/shm), /proc (the sandbox's pid namespace only; nosuid, nodev, noexec), /work (the work
 * folder, read-write, nosuid, nodev); then pivot_root into it, detaches the old root and makes the
 * tmpfs read-only. Nothing else of the host is there: no /run, /var, /home, /root, /sys, /srv or
 * /mnt, so no control-plane socket, log, tile, vault, PIN or key.
 *
 * sworn_run_fs_remove (on the host, after the sandbox's last process is gone) removes a folder
 * and everything in it, never following a symbolic link and never crossing into another mount
 * (such a folder is left and reported); sworn_run_fs_give_back_fd gives the entries below a
 * folder (not the folder itself) that the agent's uid owns to uid:gid and clears their set-id
 * bits, the same way. Both hold one
 * folder's descriptor at a time, so a tree of any depth is walked; the first surprise (a
 * folder replaced under the walk, another mount, a failed call) stops them with an error.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_IO, naming the step and errno).
 */
#ifndef SWORN_R_FS_H
#define SWORN_R_FS_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "r_conf.h"

#define SWORN_RUN_CA_PATH "/run/sworn/ca-certificates.crt"
#define SWORN_RUN_TOKENS_DIR "/run/sworn/tokens"
#define SWORN_RUN_SCRATCH_DEFAULT (1024ull * 1024ull * 1024ull) /* /tmp, /dev/shm: bytes each */
#define SWORN_RUN_SCRATCH_INODES 65536u                         /* and files each */

int sworn_run_fs_mount_root(const char *mountpoint, uid_t uid, gid_t gid, int *root_fd);

/* work: a path naming the work folder (pid 1 gives "/proc/self/fd/N"). */
int sworn_run_fs_enter(const struct sworn_run_conf *c, int root_fd, const char *work,
                       const char *ca_bundle, size_t ca_len);

/* Remove the folder path (not followed if a link) and all in it. */
int sworn_run_fs_remove(const char *path);
/* The same for the folder open at fd (not closed; name is for messages): emptied through fd, then
 * removed from its parent only if it is still there (the path /proc gives for fd). */
int sworn_run_fs_remove_fd(int fd, const char *name);
/* Give every entry below the folder fd that uid `from` owns to uid:gid, set-id bits cleared. */
int sworn_run_fs_give_back_fd(int fd, const char *name, uid_t from, uid_t uid, gid_t gid);

#endif
