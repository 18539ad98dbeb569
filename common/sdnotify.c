/*
 * sdnotify.c -- the readiness datagram of sd_notify(3) (contract in sdnotify.h).
 */
#define _GNU_SOURCE /* SOCK_CLOEXEC */
#include "sdnotify.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"

int sworn_sdnotify_open(int *fd)
{
    const char *name = getenv("NOTIFY_SOCKET");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len;
    socklen_t salen;
    int s;

    *fd = -1;
    if (name == NULL || name[0] == '\0')
        return 0;
    len = strlen(name);
    if ((name[0] != '/' && name[0] != '@') || len >= sizeof(sa.sun_path) || len < 2)
        return sworn_err_set(SWORN_ERR_ARG,
                             "NOTIFY_SOCKET is not an absolute path or an abstract '@' name");
    memcpy(sa.sun_path, name, len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0'; /* the abstract namespace */
    salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '/' ? 1 : 0));
    s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return sworn_err_set(SWORN_ERR_IO, "NOTIFY_SOCKET: socket: %s", strerror(errno));
    if (connect(s, (struct sockaddr *)&sa, salen) != 0) {
        int e = errno;

        close(s);
        return sworn_err_set(SWORN_ERR_IO, "NOTIFY_SOCKET %s: %s", name, strerror(e));
    }
    *fd = s;
    return 0;
}

int sworn_sdnotify_send(int fd, const char *msg)
{
    size_t len = strlen(msg);

    if (fd < 0)
        return 0;
    if (write(fd, msg, len) != (ssize_t)len)
        return sworn_err_set(SWORN_ERR_IO, "NOTIFY_SOCKET: %s", strerror(errno));
    return 0;
}
