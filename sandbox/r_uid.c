/* r_uid.c -- root mode's agent uids (r_uid.h). */
#define _GNU_SOURCE
#include "r_uid.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "safefile.h"

/* Whether any process of the host runs as uid u (a uid of the range some other program uses). */
static int uid_in_use(uid_t u)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    int used = 0;

    if (d == NULL)
        return 1; /* cannot tell: do not take it */
    while (!used && (e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
            fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_uid == u)
            used = 1;
    }
    closedir(d);
    return used;
}

/* Whether a range of /etc/subuid or /etc/subgid ("name:first:count" lines) holds id: its user
 * could map it (newuidmap) and become the sandbox's uid from outside. An unreadable or absent
 * file holds nothing. */
static int subordinate(uint32_t id)
{
    static const char *const files[] = {"/etc/subuid", "/etc/subgid"};
    char line[512];

    for (size_t i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "re");
        if (f == NULL)
            continue;
        while (fgets(line, sizeof(line), f) != NULL) {
            char *first = strchr(line, ':'), *count = first != NULL ? strchr(first + 1, ':') : NULL;
            unsigned long long lo, n;
            if (count == NULL)
                continue;
            lo = strtoull(first + 1, NULL, 10);
            n = strtoull(count + 1, NULL, 10);
            if (id >= lo && id - lo < n) {
                fclose(f);
                return 1;
            }
        }
        fclose(f);
    }
    return 0;
}

int sworn_run_uid_take(uid_t first, uint32_t count, uid_t *uid, int *lock_fd)
{
    char name[32];
    int dir = -1;

    SWORN_GUARD(
        sworn_safefile_opendir(SWORN_RUN_UID_LOCKS_PARENT, 1, "sworn-run's uid locks", &dir));
    if (mkdirat(dir, "uids", 0700) < 0 && errno != EEXIST)
        SWORN_ENSURE(0, SWORN_ERR_IO, "%s/uids: %s", SWORN_RUN_UID_LOCKS_PARENT, strerror(errno));
    for (uint32_t i = 0; i < count; i++) {
        uid_t u = first + i;
        int fd;
        snprintf(name, sizeof(name), "uids/%u", (unsigned)u);
        fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        SWORN_ENSURE(fd >= 0, SWORN_ERR_IO, "%s/%s: %s", SWORN_RUN_UID_LOCKS_PARENT, name,
                     strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) == 0 && !subordinate(u) && !uid_in_use(u)) {
            *lock_fd = fd;
            *uid = u;
            close(dir);
            return 0;
        }
        close(fd);
    }
    sworn_err_set(SWORN_ERR_RANGE, "every uid of %u..%u is taken by a running sandbox or process",
                  (unsigned)first, (unsigned)(first + count - 1));
fail:
    if (dir >= 0)
        close(dir);
    return -1;
}
