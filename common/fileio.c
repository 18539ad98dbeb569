/*
 * fileio.c -- see fileio.h.
 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

int sworn_file_read(const char *path, size_t max, char **data, size_t *len)
{
    int use_stdin = strcmp(path, "-") == 0;
    int fd = use_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    char *buf = NULL;
    size_t got = 0;

    if (fd < 0)
        return sworn_err_set(errno == ENOENT ? SWORN_ERR_NOTFOUND : SWORN_ERR_IO, "%s: %s", path,
                             strerror(errno));
    SWORN_ENSURE(use_stdin || (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)), SWORN_ERR_IO,
                 "%s is not a regular file", path);
    /* Read up to max + 1 bytes: one byte more than allowed tells that the file is too large. */
    buf = malloc(max + 2);
    SWORN_ENSURE(buf != NULL, SWORN_ERR_NOMEM, "no memory to read %s", path);
    for (;;) {
        ssize_t n = read(fd, buf + got, max + 1 - got);

        if (n < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(n >= 0, SWORN_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
        SWORN_ENSURE(got <= max, SWORN_ERR_RANGE, "%s is larger than %zu bytes", path, max);
    }
    buf[got] = '\0';
    if (!use_stdin)
        close(fd);
    *data = buf;
    *len = got;
    return 0;
fail:
    free(buf);
    if (!use_stdin)
        close(fd);
    return -1;
}

/* Write all of data to fd and fsync it; fd stays open. */
static int write_synced(int fd, const char *path, const void *data, size_t len)
{
    const char *p = data;

    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, p + done, len - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return sworn_err_set(SWORN_ERR_IO, "cannot write %s: %s", path, strerror(errno));
        done += (size_t)n;
    }
    if (fsync(fd) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot sync %s: %s", path, strerror(errno));
    return 0;
}

/* fsync the folder that holds path, so that a rename or a creation in it is durable. */
static int sync_folder(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int fd, rc;

    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
        return sworn_err_set(SWORN_ERR_RANGE, "path too long: %s", path);
    if (dir[0] == '\0')
        snprintf(dir, sizeof(dir), "/");
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    rc = fsync(fd);
    close(fd);
    return rc == 0 ? 0 : sworn_err_set(SWORN_ERR_IO, "cannot sync %s: %s", dir, strerror(errno));
}

int sworn_file_replace(const char *path, const void *data, size_t len, unsigned mode)
{
    char tmp[PATH_MAX];
    int fd;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
        return sworn_err_set(SWORN_ERR_RANGE, "path too long: %s", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    if (write_synced(fd, tmp, data, len) < 0) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;

        unlink(tmp);
        return sworn_err_set(SWORN_ERR_IO, "cannot replace %s: %s", path, strerror(e));
    }
    return sync_folder(path);
}

int sworn_file_create(const char *path, const void *data, size_t len, unsigned mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);

    if (fd < 0)
        return sworn_err_set(errno == EEXIST ? SWORN_ERR_ARG : SWORN_ERR_IO,
                             "cannot create %s: %s%s", path, strerror(errno),
                             errno == EEXIST ? " (outputs are never overwritten)" : "");
    if (write_synced(fd, path, data, len) < 0) {
        close(fd);
        unlink(path);
        return -1;
    }
    if (close(fd) != 0) {
        unlink(path);
        return sworn_err_set(SWORN_ERR_IO, "cannot close %s: %s", path, strerror(errno));
    }
    return sync_folder(path);
}
