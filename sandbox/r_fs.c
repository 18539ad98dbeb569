/* r_fs.c -- the sandbox's filesystem (r_fs.h). */
#define _GNU_SOURCE
#include "r_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "err.h"

static const char *const default_masks[] = {
    "/etc/shadow", "/etc/shadow-",     "/etc/gshadow",     "/etc/gshadow-",
    "/etc/sworn",  "/etc/ssl/private", "/etc/resolv.conf", NULL};
/* No tty: the agent has no controlling terminal (pid 1 made a session of its own). */
static const char *const devices[] = {"null", "zero", "full", "random", "urandom", NULL};

#define EMPTY_FILE "/run/sworn/.empty"

struct fsb {
    const char *root;
    char path[PATH_MAX]; /* scratch: root + a path in the sandbox */
};

static const char *in_root(struct fsb *b, const char *p)
{
    if ((size_t)snprintf(b->path, sizeof(b->path), "%s%s", b->root, p) >= sizeof(b->path))
        return NULL;
    return b->path;
}

static int fail_errno(const char *what, const char *path)
{
    return sworn_err_set(SWORN_ERR_IO, "sandbox filesystem: %s %s: %s", what, path,
                         strerror(errno));
}

static int make_dir(struct fsb *b, const char *p, mode_t mode)
{
    const char *full = in_root(b, p);

    if (full == NULL)
        return sworn_err_set(SWORN_ERR_RANGE, "sandbox filesystem: path too long: %s", p);
    if (mkdir(full, mode) < 0 && errno != EEXIST)
        return fail_errno("mkdir", full);
    if (chmod(full, mode) < 0)
        return fail_errno("chmod", full);
    return 0;
}

static int write_file(struct fsb *b, const char *p, const void *data, size_t len, mode_t mode)
{
    const char *full = in_root(b, p);
    const char *s = data;
    int fd;

    if (full == NULL)
        return sworn_err_set(SWORN_ERR_RANGE, "sandbox filesystem: path too long: %s", p);
    fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return fail_errno("create", full);
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return fail_errno("write", full);
        }
        s += w;
        len -= (size_t)w;
    }
    if (fchmod(fd, mode) < 0) {
        close(fd);
        return fail_errno("chmod", full);
    }
    return close(fd) < 0 ? fail_errno("close", full) : 0;
}

/* The flags a mount of src's filesystem has that a bind of it must keep (the kernel refuses a
 * remount that would drop a flag locked by a more privileged namespace). */
static unsigned long locked_flags(const char *src)
{
    struct statvfs v;
    unsigned long f = 0;

    if (statvfs(src, &v) < 0)
        return 0;
    if (v.f_flag & ST_NOSUID)
        f |= MS_NOSUID;
    if (v.f_flag & ST_NODEV)
        f |= MS_NODEV;
    if (v.f_flag & ST_NOEXEC)
        f |= MS_NOEXEC;
    if (v.f_flag & ST_NOATIME)
        f |= MS_NOATIME;
    if (v.f_flag & ST_NODIRATIME)
        f |= MS_NODIRATIME;
    if (v.f_flag & ST_RELATIME)
        f |= MS_RELATIME;
    return f;
}

/* Bind src onto dst (which exists), then remount it with flags (and the locked ones). */
static int bind(const char *src, const char *dst, unsigned long flags)
{
    if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
        return fail_errno("bind", src);
    if (mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | flags | locked_flags(src), NULL) < 0)
        return fail_errno("remount", dst);
    return 0;
}

/* A top-level host entry: the same symbolic link, or a read-only bind of the folder. */
static int carry(struct fsb *b, const char *top)
{
    char target[PATH_MAX];
    struct stat st;
    ssize_t n;
    const char *full;

    if (lstat(top, &st) < 0)
        return errno == ENOENT ? 0 : fail_errno("lstat", top);
    full = in_root(b, top);
    if (full == NULL)
        return sworn_err_set(SWORN_ERR_RANGE, "sandbox filesystem: path too long: %s", top);
    if (S_ISLNK(st.st_mode)) {
        n = readlink(top, target, sizeof(target) - 1);
        if (n < 0)
            return fail_errno("readlink", top);
        target[n] = '\0';
        return symlink(target, full) < 0 ? fail_errno("symlink", full) : 0;
    }
    if (!S_ISDIR(st.st_mode))
        return 0;
    if (mkdir(full, 0755) < 0)
        return fail_errno("mkdir", full);
    return bind(top, full, MS_RDONLY | MS_NOSUID | MS_NODEV);
}

/* Mask p (a path in the sandbox) when it is there. */
static int mask(struct fsb *b, const char *p)
{
    struct stat st;
    char full[PATH_MAX];
    char empty[PATH_MAX];

    if ((size_t)snprintf(full, sizeof(full), "%s%s", b->root, p) >= sizeof(full) ||
        (size_t)snprintf(empty, sizeof(empty), "%s%s", b->root, EMPTY_FILE) >= sizeof(empty))
        return sworn_err_set(SWORN_ERR_RANGE, "sandbox filesystem: path too long: %s", p);
    /* lstat: a symbolic link is masked by what it is in the sandbox, never followed to the host. */
    if (lstat(full, &st) < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : fail_errno("lstat", full);
    if (S_ISDIR(st.st_mode)) {
        if (mount("tmpfs", full, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") <
            0)
            return fail_errno("mask (tmpfs)", full);
        if (mount(NULL, full, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,mode=0555") < 0)
            return fail_errno("mask (read-only)", full);
        return 0;
    }
    if (S_ISLNK(st.st_mode))
        return 0; /* its target is masked or outside the sandbox's binds */
    return bind(empty, full, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
}

/* The mount options of /tmp and /dev/shm: bounded, since in rlimit mode nothing else charges
 * what is written there to the sandbox: the memory limit when there is one, else 1 GiB, each. */
static void scratch_opts(const struct sworn_run_conf *c, char *out, size_t cap)
{
    unsigned long long size =
        c->memory_bytes > 0 ? (unsigned long long)c->memory_bytes : SWORN_RUN_SCRATCH_DEFAULT;

    snprintf(out, cap, "mode=1777,size=%llu,nr_inodes=%u", size, SWORN_RUN_SCRATCH_INODES);
}

static int make_dev(struct fsb *b, const char *scratch)
{
    static const char *const links[][2] = {{"/dev/fd", "/proc/self/fd"},
                                           {"/dev/stdin", "/proc/self/fd/0"},
                                           {"/dev/stdout", "/proc/self/fd/1"},
                                           {"/dev/stderr", "/proc/self/fd/2"},
                                           {"/dev/ptmx", "pts/ptmx"}};
    char src[64];
    const char *full = in_root(b, "/dev");

    if (full == NULL ||
        mount("tmpfs", full, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755") < 0)
        return fail_errno("mount tmpfs", "/dev");
    for (size_t i = 0; devices[i] != NULL; i++) {
        char dst[64];
        int fd;
        snprintf(src, sizeof(src), "/dev/%s", devices[i]);
        snprintf(dst, sizeof(dst), "/dev/%s", devices[i]);
        full = in_root(b, dst);
        fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            return fail_errno("create", full);
        close(fd);
        if (mount(src, full, NULL, MS_BIND, NULL) < 0)
            return fail_errno("bind", src);
        if (mount(NULL, full, NULL,
                  MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NOEXEC | locked_flags(src), NULL) < 0)
            return fail_errno("remount", full);
    }
    for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
        full = in_root(b, links[i][0]);
        if (symlink(links[i][1], full) < 0)
            return fail_errno("symlink", full);
    }
    SWORN_GUARD(make_dir(b, "/dev/shm", 01777));
    SWORN_GUARD(make_dir(b, "/dev/pts", 0755));
    full = in_root(b, "/dev/shm");
    if (mount("tmpfs", full, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, scratch) < 0)
        return fail_errno("mount tmpfs", full);
    return 0;
fail:
    return -1;
}

int sworn_run_fs_mount_root(const char *mountpoint, uid_t uid, gid_t gid, int *root_fd)
{
    char opts[96];
    int fd;

    *root_fd = -1;
    /* Nothing mounted here may propagate back to the host, or from it. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return fail_errno("make private", "/");
    snprintf(opts, sizeof(opts), "size=16m,mode=0755,uid=%u,gid=%u", (unsigned)uid, (unsigned)gid);
    if (mount("tmpfs", mountpoint, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return fail_errno("mount tmpfs", mountpoint);
    fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return fail_errno("open", mountpoint);
    *root_fd = fd;
    return 0;
}

int sworn_run_fs_enter(const struct sworn_run_conf *c, int root_fd, const char *work,
                       const char *ca_bundle, size_t ca_len)
{
    char root[64], scratch[96];
    struct fsb b = {.root = root};
    DIR *d;
    struct dirent *e;
    const char *full;
    struct stat st;

    /* Every path below is reached through the descriptor: no folder on the host's way to the
     * mount point needs to be open to the agent's uid. */
    snprintf(root, sizeof(root), "/proc/self/fd/%d", root_fd);
    SWORN_GUARD(carry(&b, "/usr"));
    SWORN_GUARD(carry(&b, "/bin"));
    SWORN_GUARD(carry(&b, "/sbin"));
    SWORN_GUARD(carry(&b, "/etc"));
    d = opendir("/");
    if (d == NULL)
        return fail_errno("opendir", "/");
    while ((e = readdir(d)) != NULL) {
        char top[NAME_MAX + 2];
        if (strncmp(e->d_name, "lib", 3) != 0)
            continue;
        snprintf(top, sizeof(top), "/%s", e->d_name);
        if (carry(&b, top) < 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);

    SWORN_GUARD(make_dir(&b, "/run", 0755));
    SWORN_GUARD(make_dir(&b, "/run/sworn", 0755));
    SWORN_GUARD(write_file(&b, EMPTY_FILE, "", 0, 0444));
    SWORN_GUARD(write_file(&b, SWORN_RUN_CA_PATH, ca_bundle, ca_len, 0444));
    if (c->nfiles > 0) {
        SWORN_GUARD(make_dir(&b, SWORN_RUN_TOKENS_DIR, 0700));
        for (size_t i = 0; i < c->nfiles; i++) {
            char p[SWORN_RUN_PATH_MAX];
            snprintf(p, sizeof(p), "%s/%s", SWORN_RUN_TOKENS_DIR, c->files[i].name);
            SWORN_GUARD(write_file(&b, p, c->files[i].value, strlen(c->files[i].value), 0400));
        }
        SWORN_GUARD(make_dir(&b, SWORN_RUN_TOKENS_DIR, 0500));
    }

    for (size_t i = 0; default_masks[i] != NULL; i++)
        SWORN_GUARD(mask(&b, default_masks[i]));
    for (size_t i = 0; i < c->nmask; i++)
        SWORN_GUARD(mask(&b, c->mask[i]));
    full = in_root(&b, "/etc/ssl/certs/ca-certificates.crt");
    if (full != NULL && lstat(full, &st) == 0 && S_ISREG(st.st_mode)) {
        char ca[PATH_MAX];
        snprintf(ca, sizeof(ca), "%s%s", root, SWORN_RUN_CA_PATH);
        SWORN_GUARD(bind(ca, full, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC));
    }

    SWORN_GUARD(make_dir(&b, "/tmp", 01777));
    full = in_root(&b, "/tmp");
    scratch_opts(c, scratch, sizeof(scratch));
    if (mount("tmpfs", full, "tmpfs", MS_NOSUID | MS_NODEV, scratch) < 0)
        return fail_errno("mount tmpfs", full);
    SWORN_GUARD(make_dir(&b, "/dev", 0755));
    SWORN_GUARD(make_dev(&b, scratch));
    SWORN_GUARD(make_dir(&b, "/proc", 0555));
    full = in_root(&b, "/proc");
    if (mount("proc", full, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        return fail_errno("mount proc", full);
    SWORN_GUARD(make_dir(&b, "/work", 0755));
    full = in_root(&b, "/work");
    SWORN_GUARD(bind(work, full, MS_NOSUID | MS_NODEV));

    if (fchdir(root_fd) < 0)
        return fail_errno("chdir", root);
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return fail_errno("pivot_root", root);
    if (umount2(".", MNT_DETACH) < 0)
        return fail_errno("detach the old root", root);
    if (chdir("/") < 0)
        return fail_errno("chdir", "/");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        return fail_errno("read-only", "/");
    return 0;
fail:
    return -1;
}

/* --- removal and giving back ---------------------------------------------------------------- */

/*
 * One walk serves both: every entry below the folder, one folder's descriptor open at a time
 * (an agent's tree may be tens of thousands of folders deep: neither a descriptor per level nor
 * a path fits), never following a symbolic link, never entering another mount. A folder's
 * entries are handled in one pass that keeps the names of its subfolders; then each subfolder
 * in turn; the way back up is "..", checked to be the folder it came from (device and inode).
 * The sandbox's processes are gone by then, so nothing changes the tree under the walk; any
 * surprise stops it with an error, and the caller records the failure.
 */
enum walk_mode { WALK_REMOVE, WALK_GIVE_BACK };

struct walk_level {
    char **subdirs; /* names of the subfolders still to visit */
    size_t n, next, cap;
    dev_t dev;
    ino_t ino;
};

struct walk {
    enum walk_mode mode;
    uid_t only; /* WALK_GIVE_BACK: only what this uid owns (the agent's) is given back */
    uid_t uid;  /* WALK_GIVE_BACK: the owner it gets */
    gid_t gid;
    dev_t dev; /* the top folder's device: nothing on another is touched */
    const char *top;
    struct walk_level *levels;
    size_t depth, cap;
};

static int walk_fail(struct walk *w, const char *what, const char *name)
{
    return sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: %s: %s %s: %s", w->top, what, name,
                         strerror(errno));
}

static int keep_subdir(struct walk_level *l, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->subdirs, cap * sizeof(*v));
        if (v == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "sandbox cleanup: out of memory");
        l->subdirs = v;
        l->cap = cap;
    }
    l->subdirs[l->n] = strdup(name);
    if (l->subdirs[l->n] == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "sandbox cleanup: out of memory");
    l->n++;
    return 0;
}

/* Give an entry of the agent's back: its owner, and no set-id bit (never through a link).
 * What the agent did not own stays as it was. */
static int give_back(struct walk *w, int dfd, const char *name, const struct stat *st)
{
    if (st->st_uid != w->only)
        return 0;
    if (fchownat(dfd, name, w->uid, w->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return walk_fail(w, "chown", name);
    if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)) != 0 &&
        fchmodat(dfd, name, st->st_mode & 0777, 0) < 0)
        return walk_fail(w, "chmod", name);
    return 0;
}

/* One pass over the folder dfd: files removed or given back, subfolders kept in l. */
static int walk_scan(struct walk *w, int dfd, struct walk_level *l)
{
    int copy = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = copy >= 0 ? fdopendir(copy) : NULL;
    struct dirent *e;
    int rc = 0;

    if (d == NULL) {
        if (copy >= 0)
            close(copy);
        return walk_fail(w, "opendir", "");
    }
    while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = walk_fail(w, "stat", e->d_name);
        } else if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != w->dev) {
                errno = EXDEV;
                rc = walk_fail(w, "another mount, left in place:", e->d_name);
            } else if (w->mode == WALK_GIVE_BACK && give_back(w, dfd, e->d_name, &st) < 0) {
                rc = -1;
            } else {
                rc = keep_subdir(l, e->d_name);
            }
        } else if (w->mode == WALK_REMOVE) {
            if (unlinkat(dfd, e->d_name, 0) < 0)
                rc = walk_fail(w, "unlink", e->d_name);
        } else {
            rc = give_back(w, dfd, e->d_name, &st);
        }
    }
    if (rc == 0 && errno != 0)
        rc = walk_fail(w, "readdir", "");
    closedir(d);
    return rc;
}

static struct walk_level *walk_push(struct walk *w, int dfd)
{
    struct walk_level *l;
    struct stat st;

    if (w->depth == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        struct walk_level *v = realloc(w->levels, cap * sizeof(*v));
        if (v == NULL) {
            sworn_err_set(SWORN_ERR_NOMEM, "sandbox cleanup: out of memory");
            return NULL;
        }
        w->levels = v;
        w->cap = cap;
    }
    if (fstat(dfd, &st) < 0) {
        walk_fail(w, "stat", "a folder");
        return NULL;
    }
    l = &w->levels[w->depth++];
    memset(l, 0, sizeof(*l));
    l->dev = st.st_dev;
    l->ino = st.st_ino;
    return l;
}

static void walk_pop(struct walk *w)
{
    struct walk_level *l = &w->levels[--w->depth];

    for (size_t i = 0; i < l->n; i++)
        free(l->subdirs[i]);
    free(l->subdirs);
}

/* Walk everything below the folder top_fd (not closed here). */
static int walk_tree(struct walk *w, int top_fd)
{
    /* The folder being walked: always ours to close, and an open of its own (a dup would share
     * the caller's position in the folder). */
    int cur = openat(top_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct walk_level *l;

    if (cur < 0)
        return walk_fail(w, "open", ".");
    l = walk_push(w, cur);
    if (l == NULL || walk_scan(w, cur, l) < 0)
        goto fail;
    while (w->depth > 0) {
        struct walk_level *up;
        struct stat st;
        int next;

        l = &w->levels[w->depth - 1];
        if (l->next < l->n) {
            const char *name = l->subdirs[l->next++];
            /* A folder the agent closed (mode 000) is opened up first: we own it, or are root. */
            if (w->mode == WALK_REMOVE && fchmodat(cur, name, 0700, 0) < 0) {
                walk_fail(w, "chmod", name);
                goto fail;
            }
            next = openat(cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (next < 0 || fstat(next, &st) < 0 || st.st_dev != w->dev) {
                if (next >= 0)
                    close(next);
                walk_fail(w, "open", name);
                goto fail;
            }
            close(cur);
            cur = next;
            l = walk_push(w, cur);
            if (l == NULL || walk_scan(w, cur, l) < 0)
                goto fail;
            continue;
        }
        /* This folder is done: back up to its parent, which must be the folder we came from. */
        walk_pop(w);
        if (w->depth == 0)
            break;
        up = &w->levels[w->depth - 1];
        next = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (next < 0 || fstat(next, &st) < 0 || st.st_dev != up->dev || st.st_ino != up->ino) {
            if (next >= 0)
                close(next);
            errno = ESTALE;
            walk_fail(w, "the way back up changed at", up->subdirs[up->next - 1]);
            goto fail;
        }
        close(cur);
        cur = next;
        if (w->mode == WALK_REMOVE && unlinkat(cur, up->subdirs[up->next - 1], AT_REMOVEDIR) < 0) {
            walk_fail(w, "rmdir", up->subdirs[up->next - 1]);
            goto fail;
        }
    }
    close(cur);
    return 0;
fail:
    close(cur);
    while (w->depth > 0)
        walk_pop(w);
    return -1;
}

/* Walk the folder fd (not closed). */
static int walk_fd(int fd, const char *name, enum walk_mode mode, uid_t only, uid_t uid, gid_t gid)
{
    struct walk w = {.mode = mode, .only = only, .uid = uid, .gid = gid, .top = name};
    struct stat st;
    int rc;

    if (fstat(fd, &st) < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: stat %s: %s", name, strerror(errno));
    w.dev = st.st_dev;
    rc = walk_tree(&w, fd);
    free(w.levels);
    return rc;
}

/* Remove the (now empty) folder fd from its parent, if it is still where its path says. */
static int remove_folder(int fd, const char *name)
{
    char link[64], path[PATH_MAX], *slash;
    struct stat me, there;
    ssize_t n;
    int parent, rc;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0 || fstat(fd, &me) < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: %s: where is it: %s", name,
                             strerror(errno));
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (path[0] != '/' || slash == NULL || slash[1] == '\0')
        return sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: %s: it is no longer in a folder (%s)",
                             name, path);
    *slash = '\0';
    parent = open(slash == path ? "/" : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0)
        return sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: %s: %s", name, strerror(errno));
    if (fstatat(parent, slash + 1, &there, AT_SYMLINK_NOFOLLOW) < 0 || there.st_dev != me.st_dev ||
        there.st_ino != me.st_ino) {
        close(parent);
        return sworn_err_set(SWORN_ERR_IO,
                             "sandbox cleanup: %s moved while it was emptied: the "
                             "empty folder is left",
                             name);
    }
    rc = unlinkat(parent, slash + 1, AT_REMOVEDIR);
    close(parent);
    return rc < 0
               ? sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: rmdir %s: %s", name, strerror(errno))
               : 0;
}

int sworn_run_fs_remove(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return errno == ENOENT ? 0
                               : sworn_err_set(SWORN_ERR_IO, "sandbox cleanup: open %s: %s", path,
                                               strerror(errno));
    rc = sworn_run_fs_remove_fd(fd, path);
    close(fd);
    return rc;
}

int sworn_run_fs_remove_fd(int fd, const char *name)
{
    (void)fchmod(fd, 0700);
    if (walk_fd(fd, name, WALK_REMOVE, (uid_t)-1, 0, 0) < 0)
        return -1;
    return remove_folder(fd, name);
}

int sworn_run_fs_give_back_fd(int fd, const char *name, uid_t from, uid_t uid, gid_t gid)
{
    return walk_fd(fd, name, WALK_GIVE_BACK, from, uid, gid);
}
