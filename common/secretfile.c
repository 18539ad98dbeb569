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
#include "safefile.h"

/* The uid of sworn_secretfile_allow_owner; written once before threads start. */
static uid_t allowed_owner = SWORN_SAFEFILE_NOBODY;

void sworn_secretfile_allow_owner(uid_t uid)
{
    allowed_owner = uid;
}

int sworn_secretfile_read(const char *path, const char *what, uint8_t *buf, size_t cap, size_t *len)
{
    return sworn_secretfile_read_owned(path, what, allowed_owner, buf, cap, len);
}

int sworn_secretfile_read_owned(const char *path, const char *what, uid_t also, uint8_t *buf,
                                size_t cap, size_t *len)
{
    struct stat st;
    size_t n = 0;
    int fd = -1;

    /* A missing secret is an error of this reader like the others (SWORN_ERR_IO). */
    if (sworn_safefile_open(path, SWORN_SAFEFILE_SECRET, also, what, &fd, &st) < 0)
        return sworn_err_code() == SWORN_ERR_NOTFOUND
                   ? sworn_err_set(SWORN_ERR_IO, "cannot open %s: %s", what, sworn_err_msg())
                   : -1;
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
    if (fd >= 0)
        close(fd);
    return -1;
}
