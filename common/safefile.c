/*
 * safefile.c -- see safefile.h.
 */
#define _GNU_SOURCE /* O_PATH */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

#define MAX_COMPONENTS (PATH_MAX / 2)

/* An owner the rules accept for a folder: root or the caller. */
static int trusted_uid(uid_t uid)
{
    return uid == 0 || uid == geteuid();
}

/* A folder on the way: see safefile.h. at is the path up to it, for the message. */
static int check_folder(int dfd, const char *what, const char *path, const char *at)
{
    struct stat st;

    if (fstat(dfd, &st) != 0)
        return sworn_err_set(SWORN_ERR_IO, "%s %s: cannot stat %s: %s", what, path, at,
                             strerror(errno));
    if (!trusted_uid(st.st_uid) || ((st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0))
        return sworn_err_set(SWORN_ERR_IO,
                             "%s %s: folder %s (owner uid %lu, mode %04o) must be root's or uid "
                             "%lu's and not writable by group or others: another user could "
                             "replace the file",
                             what, path, at, (unsigned long)st.st_uid,
                             (unsigned)(st.st_mode & 07777), (unsigned long)geteuid());
    return 0;
}

/* Why openat of name in dfd failed, as an error. */
static int open_failed(int dfd, const char *name, const char *what, const char *path,
                       const char *at)
{
    int e = errno;
    struct stat st;

    if (e == ENOENT)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s %s: %s does not exist", what, path, at);
    if ((e == ELOOP || e == ENOTDIR) && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode))
        return sworn_err_set(SWORN_ERR_IO,
                             "%s %s: %s is a symbolic link; refusing it (name the file itself)",
                             what, path, at);
    return sworn_err_set(SWORN_ERR_IO, "%s %s: cannot open %s: %s", what, path, at, strerror(e));
}

/* Split the absolute form of path into components, "." and ".." resolved. OUT: buf holds the
 * components, comp[0..*n). */
static int split(const char *path, const char *what, char buf[PATH_MAX], char **comp, size_t *n)
{
    char cwd[PATH_MAX];
    int k;

    if (path[0] == '/') {
        k = snprintf(buf, PATH_MAX, "%s", path);
    } else {
        if (getcwd(cwd, sizeof(cwd)) == NULL)
            return sworn_err_set(SWORN_ERR_IO, "%s %s: getcwd: %s", what, path, strerror(errno));
        k = snprintf(buf, PATH_MAX, "%s/%s", cwd, path);
    }
    if (k < 0 || k >= PATH_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "%s %s: path too long", what, path);
    *n = 0;
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c != NULL;
         c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0) {
            if (*n > 0)
                (*n)--;
            continue;
        }
        if (*n == MAX_COMPONENTS)
            return sworn_err_set(SWORN_ERR_RANGE, "%s %s: path too long", what, path);
        comp[(*n)++] = c;
    }
    if (*n == 0)
        return sworn_err_set(SWORN_ERR_IO, "%s %s is not a regular file", what, path);
    return 0;
}

/*
 * The walk both opens share: from / to the folder that holds the path's last component, by
 * descriptor, never following a symbolic link, each folder on the way checked (check_folder).
 */
struct walk {
    char buf[PATH_MAX]; /* the components */
    char at[PATH_MAX];  /* the path walked so far, for messages */
    size_t at_len;
    char **comp;
    size_t n;
    int dfd;          /* the folder that holds last, checked; -1 when none */
    const char *last; /* the path's last component */
};

/* Add component c to the walk's message path (it fits: no longer than the path split). */
static void walk_step(struct walk *w, const char *c)
{
    w->at_len += (size_t)snprintf(w->at + w->at_len, sizeof(w->at) - w->at_len, "/%s", c);
}

/* Walk w to the folder of path's last component; on success and on failure the caller ends
 * the walk with walk_end. */
static int walk_to_parent(const char *path, const char *what, struct walk *w)
{
    w->at[0] = '\0';
    w->at_len = 0;
    w->dfd = -1;
    w->comp = malloc(MAX_COMPONENTS * sizeof(*w->comp));
    SWORN_ENSURE(w->comp != NULL, SWORN_ERR_NOMEM, "%s %s: out of memory", what, path);
    SWORN_GUARD(split(path, what, w->buf, w->comp, &w->n));
    w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    SWORN_ENSURE(w->dfd >= 0, SWORN_ERR_IO, "%s %s: cannot open /: %s", what, path,
                 strerror(errno));
    SWORN_GUARD(check_folder(w->dfd, what, path, "/"));
    for (size_t i = 0; i + 1 < w->n; i++) {
        int nfd;

        walk_step(w, w->comp[i]);
        nfd = openat(w->dfd, w->comp[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0)
            return open_failed(w->dfd, w->comp[i], what, path, w->at);
        close(w->dfd);
        w->dfd = nfd;
        SWORN_GUARD(check_folder(w->dfd, what, path, w->at));
    }
    w->last = w->comp[w->n - 1];
    walk_step(w, w->last);
    return 0;
fail:
    return -1;
}

/* Release what the walk holds (the folder descriptor unless keep_dfd). */
static void walk_end(struct walk *w, int keep_dfd)
{
    if (w->dfd >= 0 && !keep_dfd)
        close(w->dfd);
    w->dfd = -1;
    free(w->comp);
    w->comp = NULL;
}

int sworn_safefile_open(const char *path, unsigned flags, uid_t also, const char *what, int *fd,
                        struct stat *st_out)
{
    struct walk w = {.dfd = -1};
    struct stat st;
    int ffd = -1;
    unsigned forbid = (flags & SWORN_SAFEFILE_SECRET) ? 077u : 022u;

    if (path == NULL || fd == NULL || what == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "safefile: NULL argument");
    SWORN_GUARD(walk_to_parent(path, what, &w));
    ffd = openat(w.dfd, w.last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (ffd < 0) {
        open_failed(w.dfd, w.last, what, path, w.at);
        goto fail;
    }
    SWORN_ENSURE(fstat(ffd, &st) == 0, SWORN_ERR_IO, "%s %s: cannot stat: %s", what, path,
                 strerror(errno));
    SWORN_ENSURE(S_ISREG(st.st_mode), SWORN_ERR_IO, "%s %s is not a regular file", what, path);
    SWORN_ENSURE(trusted_uid(st.st_uid) || also == SWORN_SAFEFILE_ANYONE ||
                     (also != SWORN_SAFEFILE_NOBODY && st.st_uid == also),
                 SWORN_ERR_IO,
                 "%s %s is owned by uid %lu: it must be root's or uid %lu's%s (chown it)", what,
                 path, (unsigned long)st.st_uid, (unsigned long)geteuid(),
                 also != SWORN_SAFEFILE_NOBODY ? " or its user's" : "");
    /* In a folder others may write (a sticky one), the entry's owner is not who made the entry:
     * anyone may hard-link there a file of root's they cannot write (without
     * fs.protected_hardlinks, or with read and write access to it), and the file then passes
     * every check above under a name they chose. A file with one link was made there. */
    {
        struct stat pst;

        SWORN_ENSURE(fstat(w.dfd, &pst) == 0, SWORN_ERR_IO, "%s %s: cannot stat its folder: %s",
                     what, path, strerror(errno));
        SWORN_ENSURE((pst.st_mode & 022) == 0 || st.st_nlink == 1, SWORN_ERR_IO,
                     "%s %s has %lu hard links in a folder others may write (mode %04o): "
                     "another user may have linked it there; keep it in a folder of root's",
                     what, path, (unsigned long)st.st_nlink, (unsigned)(pst.st_mode & 07777));
    }
    SWORN_ENSURE((st.st_mode & forbid) == 0, SWORN_ERR_IO,
                 "%s %s has mode %04o, which %s; it must be %s (chmod %s %s)", what, path,
                 (unsigned)(st.st_mode & 07777),
                 forbid == 077u ? "lets group or others in" : "lets group or others write it",
                 forbid == 077u ? "0600 or stricter" : "writable by its owner only",
                 forbid == 077u ? "600" : "go-w", path);
    walk_end(&w, 0);
    if (st_out != NULL)
        *st_out = st;
    *fd = ffd;
    return 0;
fail:
    if (ffd >= 0)
        close(ffd);
    walk_end(&w, 0);
    return -1;
}

int sworn_safefile_read(const char *path, unsigned flags, uid_t also, const char *what, size_t max,
                        char **data, size_t *len)
{
    char *buf = NULL;
    size_t got = 0;
    int fd = -1;

    SWORN_GUARD(sworn_safefile_open(path, flags, also, what, &fd, NULL));
    SWORN_ENSURE(max < SIZE_MAX - 2, SWORN_ERR_ARG, "%s %s: bad size limit", what, path);
    /* One byte more than allowed tells that the file is too large. */
    buf = malloc(max + 2);
    SWORN_ENSURE(buf != NULL, SWORN_ERR_NOMEM, "no memory to read %s %s", what, path);
    for (;;) {
        ssize_t k = read(fd, buf + got, max + 1 - got);

        if (k < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(k >= 0, SWORN_ERR_IO, "cannot read %s %s: %s", what, path, strerror(errno));
        if (k == 0)
            break;
        got += (size_t)k;
        SWORN_ENSURE(got <= max, SWORN_ERR_RANGE, "%s %s is larger than %zu bytes", what, path,
                     max);
    }
    buf[got] = '\0';
    close(fd);
    *data = buf;
    *len = got;
    return 0;
fail:
    free(buf);
    if (fd >= 0)
        close(fd);
    return -1;
}

int sworn_safefile_opendir(const char *path, int create, const char *what, int *fd)
{
    const int how = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    struct walk w = {.dfd = -1};
    struct stat st;
    int nfd;

    if (path == NULL || fd == NULL || what == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "safefile: NULL argument");
    SWORN_GUARD(walk_to_parent(path, what, &w));
    nfd = openat(w.dfd, w.last, how);
    /* Made inside the checked parent, never through a path walked again. */
    if (nfd < 0 && errno == ENOENT && create &&
        (mkdirat(w.dfd, w.last, 0755) == 0 || errno == EEXIST))
        nfd = openat(w.dfd, w.last, how);
    if (nfd < 0) {
        open_failed(w.dfd, w.last, what, path, w.at);
        goto fail;
    }
    close(w.dfd);
    w.dfd = nfd;
    SWORN_GUARD(check_folder(w.dfd, what, path, w.at));
    /* The folder itself: others may not even add entries to it, sticky or not. */
    SWORN_ENSURE(fstat(w.dfd, &st) == 0, SWORN_ERR_IO, "%s %s: cannot stat: %s", what, path,
                 strerror(errno));
    SWORN_ENSURE((st.st_mode & 022) == 0, SWORN_ERR_IO,
                 "%s %s has mode %04o, which lets group or others add to it; it must be writable "
                 "by its owner only (chmod go-w %s)",
                 what, path, (unsigned)(st.st_mode & 07777), path);
    *fd = w.dfd;
    walk_end(&w, 1);
    return 0;
fail:
    walk_end(&w, 0);
    return -1;
}
