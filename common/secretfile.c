/*
 * secretfile.c -- see secretfile.h.
 */
#include "secretfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

int sworn_secretfile_read(const char *path, const char *what, uint8_t *buf, size_t cap, size_t *len)
{
    struct stat st;
    size_t n = 0;
    int fd;

    /* O_NONBLOCK so that a FIFO planted at path cannot hang us before fstat refuses it. */
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            return sworn_err_set(SWORN_ERR_IO, "%s %s is a symbolic link; refusing it", what, path);
        return sworn_err_set(SWORN_ERR_IO, "cannot open %s %s: %s", what, path, strerror(errno));
    }
    SWORN_ENSURE(fstat(fd, &st) == 0, SWORN_ERR_IO, "cannot stat %s %s: %s", what, path,
                 strerror(errno));
    SWORN_ENSURE(S_ISREG(st.st_mode), SWORN_ERR_IO, "%s %s is not a regular file", what, path);
    SWORN_ENSURE((st.st_mode & 077) == 0, SWORN_ERR_IO,
                 "%s %s has mode %04o, which lets group or others in; it must be 0600 or "
                 "stricter (chmod 600 %s)",
                 what, path, (unsigned)(st.st_mode & 07777), path);
    SWORN_ENSURE(st.st_size >= 0 && (uintmax_t)st.st_size < cap, SWORN_ERR_FORMAT,
                 "%s %s is larger than %zu bytes", what, path, cap - 1);
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);

        if (got < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(got >= 0, SWORN_ERR_IO, "cannot read %s %s: %s", what, path, strerror(errno));
        if (got == 0)
            break;
        n += (size_t)got;
        /* The file grew after fstat: refuse rather than read a key that is still changing. */
        SWORN_ENSURE(n < cap, SWORN_ERR_FORMAT, "%s %s is larger than %zu bytes", what, path,
                     cap - 1);
    }
    close(fd);
    *len = n;
    return 0;
fail:
    close(fd);
    return -1;
}
