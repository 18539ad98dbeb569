/* r_work.c -- the checks on a --work folder (r_work.h). */
#define _GNU_SOURCE
#include "r_work.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "r_uid.h"

/* A folder or file, by what it is (a bind mount or a link names the same one). */
struct ident {
    dev_t dev;
    ino_t ino;
};

static int ident_eq(const struct ident *a, const struct stat *st)
{
    return a->dev == st->st_dev && a->ino == st->st_ino;
}

/*
 * Up from the folder fd (not closed) to the root through "..": calls stop(arg, st) on the folder
 * and each folder above it (the physical way up: a bind mount's ".." is its mount point's
 * parent), until it returns nonzero (returned) or the root is passed (0). At most 4096 levels.
 */
static int walk_up(int fd, int (*stop)(void *arg, const struct stat *st), void *arg)
{
    int cur = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st, parent;
    int hit = 0;

    for (int level = 0; cur >= 0 && level < 4096 && hit == 0; level++) {
        int up;
        if (fstat(cur, &st) < 0)
            break;
        hit = stop(arg, &st);
        up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(cur);
        cur = up;
        if (cur < 0 || fstat(cur, &parent) < 0 ||
            (parent.st_dev == st.st_dev && parent.st_ino == st.st_ino))
            break; /* the root is its own parent */
    }
    if (cur >= 0)
        close(cur);
    return hit;
}

struct refused {
    struct ident id[64];
    const char *name[64];
    size_t n;
};

static void refuse_path(struct refused *r, const char *path)
{
    struct stat st;

    if (r->n < sizeof(r->id) / sizeof(r->id[0]) && stat(path, &st) == 0) {
        r->id[r->n].dev = st.st_dev;
        r->id[r->n].ino = st.st_ino;
        r->name[r->n] = path;
        r->n++;
    }
}

static int in_refused(void *arg, const struct stat *st)
{
    struct refused *r = arg;

    for (size_t i = 0; i < r->n; i++)
        if (ident_eq(&r->id[i], st))
            return (int)i + 1;
    return 0;
}

static int is_work(void *arg, const struct stat *st)
{
    return ident_eq(arg, st);
}

/* The folder of path (a socket or a file that may not exist yet), opened; -1 when it is not. */
static int open_folder_of(const char *path)
{
    char folder[SWORN_RUN_PATH_MAX];
    char *slash;

    snprintf(folder, sizeof(folder), "%s", path);
    slash = strrchr(folder, '/');
    if (slash == NULL)
        return -1;
    *(slash == folder ? slash + 1 : slash) = '\0';
    return open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int sworn_run_work_check(int fd, const char *work, int state_fd, const struct sworn_run_conf *c)
{
    static const char *const trees[] = {
        "/proc",      "/sys",           "/dev",           "/etc",
        "/usr",       "/boot",          "/bin",           "/sbin",
        "/lib",       "/lib32",         "/lib64",         "/libx32",
        "/run/sworn", "/var/lib/sworn", "/var/log/sworn", SWORN_RUN_UID_LOCKS_PARENT,
        NULL};
    const char *const held[] = {c->hostlink, c->admin_socket, c->proxy_ca, NULL};
    struct refused r = {.n = 0};
    struct stat st, root;
    struct ident me;
    int hit, up;
    DIR *d;
    struct dirent *e;

    if (fstat(fd, &st) < 0 || stat("/", &root) < 0)
        return sworn_err_set(SWORN_ERR_IO, "--work %s: %s", work, strerror(errno));
    me.dev = st.st_dev;
    me.ino = st.st_ino;
    up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (up >= 0) {
        struct stat parent;
        int top =
            fstat(up, &parent) == 0 && parent.st_dev == root.st_dev && parent.st_ino == root.st_ino;
        close(up);
        if (top || (st.st_dev == root.st_dev && st.st_ino == root.st_ino))
            return sworn_err_set(SWORN_ERR_ARG,
                                 "--work %s: it is / or a folder right below it: give a folder "
                                 "of its own",
                                 work);
    }
    for (size_t i = 0; trees[i] != NULL; i++)
        refuse_path(&r, trees[i]);
    if (c->stack_dir[0] != '\0')
        refuse_path(&r, c->stack_dir);
    if (fstat(state_fd, &st) == 0 && r.n < sizeof(r.id) / sizeof(r.id[0])) {
        r.id[r.n].dev = st.st_dev;
        r.id[r.n].ino = st.st_ino;
        r.name[r.n++] = "sworn-run's state folder";
    }
    hit = walk_up(fd, in_refused, &r);
    if (hit > 0)
        return sworn_err_set(SWORN_ERR_ARG, "--work %s: it is in %s, which no agent gets", work,
                             r.name[hit - 1]);
    /* Nothing the control plane needs may lie below it. */
    if (walk_up(state_fd, is_work, &me))
        return sworn_err_set(SWORN_ERR_ARG, "--work %s: it holds sworn-run's state folder", work);
    for (size_t i = 0; held[i] != NULL; i++) {
        int f = open_folder_of(held[i]);
        int holds = f >= 0 && walk_up(f, is_work, &me);
        if (f >= 0)
            close(f);
        if (holds)
            return sworn_err_set(SWORN_ERR_ARG, "--work %s: it holds %s", work, held[i]);
    }
    if (c->keep)
        return 0;
    d = fdopendir(openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d == NULL)
        return sworn_err_set(SWORN_ERR_IO, "--work %s: %s", work, strerror(errno));
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            break;
    closedir(d);
    if (e != NULL)
        return sworn_err_set(SWORN_ERR_ARG,
                             "--work %s: it is not empty: without --keep, sworn-run removes the "
                             "work folder at the end, and it removes only what an agent made "
                             "(give --keep, or an empty folder)",
                             work);
    return 0;
}
