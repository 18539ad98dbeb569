/*
 * c_record.c -- reading and copying an exported record (c_record.h).
 */
#include "c_record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "note.h"
#include "sworn.pb-c.h"

int c_record_checkpoint_file(const char *path, struct sworn_checkpoint *cp)
{
    char *text = NULL, *sep;
    size_t len;
    int rc = -1;

    if (sworn_file_read(path, SWORN_NOTE_MAX_LEN, &text, &len) < 0)
        return -1;
    /* A signed note: the body, a blank line, the signature lines. The body is what is parsed. */
    sep = strstr(text, "\n\n");
    if (sep == NULL || memchr(text, '\0', len) != NULL) {
        sworn_err_set(SWORN_ERR_FORMAT, "%s: not a signed note (no blank line after the body)",
                      path);
        goto done;
    }
    if (sworn_checkpoint_parse(text, (size_t)(sep - text) + 1, cp) < 0) {
        sworn_err_set(SWORN_ERR_FORMAT, "%s: %s", path, sworn_err_msg());
        goto done;
    }
    cp->extensions = NULL; /* it pointed into text */
    cp->extensions_len = 0;
    rc = 0;
done:
    free(text);
    return rc;
}

int c_record_checkpoint(const char *dir, struct sworn_checkpoint *cp)
{
    char path[4096];

    if ((size_t)snprintf(path, sizeof(path), "%s/checkpoint", dir) >= sizeof(path))
        return sworn_err_set(SWORN_ERR_RANGE, "the record's path is too long");
    return c_record_checkpoint_file(path, cp);
}

int c_record_bundle_path(uint64_t size, uint64_t index, char *out, size_t cap)
{
    struct sworn_tile_id id = {SWORN_TILE_LEVEL_ENTRIES, index, SWORN_TILE_WIDTH};

    if (index > size / SWORN_TILE_WIDTH ||
        (index == size / SWORN_TILE_WIDTH && size % SWORN_TILE_WIDTH == 0))
        return sworn_err_set(SWORN_ERR_RANGE, "bundle %llu is past a tree of %llu entries",
                             (unsigned long long)index, (unsigned long long)size);
    if (index == size / SWORN_TILE_WIDTH)
        id.width = (unsigned)(size % SWORN_TILE_WIDTH);
    return sworn_tile_path(&id, out, cap) < 0 ? -1 : 0;
}

int c_record_bundle(const char *dir, uint64_t size, uint64_t index, uint8_t **data,
                    struct sworn_tile_entry out[SWORN_TILE_WIDTH], unsigned *n)
{
    char rel[SWORN_TILE_PATH_MAX], path[4096];
    char *bytes = NULL;
    size_t len;
    unsigned width;

    if (c_record_bundle_path(size, index, rel, sizeof(rel)) < 0)
        return -1;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
        return sworn_err_set(SWORN_ERR_RANGE, "the record's path is too long");
    if (sworn_file_read(path, SWORN_TILE_BUNDLE_MAX, &bytes, &len) < 0)
        return -1;
    width =
        index == size / SWORN_TILE_WIDTH ? (unsigned)(size % SWORN_TILE_WIDTH) : SWORN_TILE_WIDTH;
    if (sworn_tile_bundle_parse((const uint8_t *)bytes, len, width, out) < 0) {
        sworn_err_set(SWORN_ERR_FORMAT, "%s: %s", rel, sworn_err_msg());
        free(bytes);
        return -1;
    }
    *data = (uint8_t *)bytes;
    *n = width;
    return 0;
}

int c_record_each(const char *dir, uint64_t size, uint64_t from,
                  int (*fn)(void *arg, uint64_t index, const struct Sworn__V1__Entry *e), void *arg)
{
    for (uint64_t b = from / SWORN_TILE_WIDTH; b * SWORN_TILE_WIDTH < size; b++) {
        struct sworn_tile_entry e[SWORN_TILE_WIDTH];
        uint8_t *data;
        unsigned n;
        int stop = 0;

        if (c_record_bundle(dir, size, b, &data, e, &n) < 0)
            return -1;
        for (unsigned i = 0; i < n && !stop; i++) {
            uint64_t index = b * SWORN_TILE_WIDTH + i;
            Sworn__V1__Entry *en;

            if (index < from)
                continue;
            en = sworn__v1__entry__unpack(NULL, e[i].len, e[i].data);
            stop = fn(arg, index, en) != 0;
            sworn__v1__entry__free_unpacked(en, NULL);
        }
        free(data);
        if (stop)
            break;
    }
    return 0;
}

/* --- copy and remove ---------------------------------------------------------------------------
 */

static int copy_file(int sdir, int ddir, const char *name, mode_t mode)
{
    int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out = -1, rc = -1;
    char buf[65536];

    if (in < 0)
        return sworn_err_set(SWORN_ERR_IO, "open %s: %s", name, strerror(errno));
    out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
    if (out < 0) {
        sworn_err_set(SWORN_ERR_IO, "create %s: %s", name, strerror(errno));
        goto done;
    }
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf)), w = 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sworn_err_set(SWORN_ERR_IO, "read %s: %s", name, strerror(errno));
            goto done;
        }
        if (n == 0)
            break;
        while (w < n) {
            ssize_t k = write(out, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                sworn_err_set(SWORN_ERR_IO, "write %s: %s", name, strerror(errno));
                goto done;
            }
            w += k;
        }
    }
    rc = 0;
done:
    close(in);
    if (out >= 0)
        close(out);
    return rc;
}

static int copy_tree(int sdir, int ddir, unsigned depth, size_t *files)
{
    DIR *d;
    struct dirent *e;
    int rc = 0;

    if (depth > 32)
        return sworn_err_set(SWORN_ERR_RANGE, "the record is nested more than 32 folders deep");
    d = fdopendir(sdir);
    if (d == NULL) {
        close(sdir);
        return sworn_err_set(SWORN_ERR_IO, "opendir: %s", strerror(errno));
    }
    while (rc == 0 && (e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (++*files > C_RECORD_COPY_FILES_MAX) {
            rc = sworn_err_set(SWORN_ERR_RANGE, "the record holds more than %u files",
                               C_RECORD_COPY_FILES_MAX);
            break;
        }
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = sworn_err_set(SWORN_ERR_IO, "stat %s: %s", e->d_name, strerror(errno));
        } else if (S_ISREG(st.st_mode)) {
            rc = copy_file(dirfd(d), ddir, e->d_name, st.st_mode);
        } else if (S_ISDIR(st.st_mode)) {
            int s2, d2;
            if (mkdirat(ddir, e->d_name, 0700) < 0) {
                rc = sworn_err_set(SWORN_ERR_IO, "mkdir %s: %s", e->d_name, strerror(errno));
                break;
            }
            s2 = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            d2 = openat(ddir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (s2 < 0 || d2 < 0) {
                rc = sworn_err_set(SWORN_ERR_IO, "open %s: %s", e->d_name, strerror(errno));
                if (s2 >= 0)
                    close(s2);
            } else {
                rc = copy_tree(s2, d2, depth + 1, files);
            }
            if (d2 >= 0)
                close(d2);
        } else {
            rc = sworn_err_set(SWORN_ERR_FORMAT, "%s is not a regular file or a folder", e->d_name);
        }
    }
    closedir(d);
    return rc;
}

int c_record_copy(const char *src, const char *dst)
{
    int s, d, rc;
    size_t files = 0;

    if (mkdir(dst, 0700) < 0)
        return sworn_err_set(SWORN_ERR_IO, "mkdir %s: %s", dst, strerror(errno));
    s = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s < 0)
        return sworn_err_set(SWORN_ERR_IO, "open %s: %s", src, strerror(errno));
    d = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) {
        close(s);
        return sworn_err_set(SWORN_ERR_IO, "open %s: %s", dst, strerror(errno));
    }
    rc = copy_tree(s, d, 0, &files);
    close(d);
    return rc;
}

static void remove_tree(int dir, unsigned depth)
{
    DIR *d = fdopendir(dir);
    struct dirent *e;

    if (d == NULL) {
        close(dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            depth < 64) {
            int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0)
                remove_tree(sub, depth + 1);
            (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        } else {
            (void)unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    closedir(d);
}

void c_record_remove(const char *path)
{
    int d = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

    if (d >= 0)
        remove_tree(d, 0);
    (void)rmdir(path);
}

int c_record_older_checkpoint(const char *dir, uint64_t below, uint64_t *out)
{
    char path[4096];
    DIR *d;
    struct dirent *e;
    int found = 0;

    if ((size_t)snprintf(path, sizeof(path), "%s/sworn/checkpoint", dir) >= sizeof(path))
        return sworn_err_set(SWORN_ERR_RANGE, "the record's path is too long");
    d = opendir(path);
    if (d == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s: %s", path, strerror(errno));
    *out = 0;
    while ((e = readdir(d)) != NULL) {
        uint64_t s;
        if (sworn_parse_u64(e->d_name, strlen(e->d_name), &s) == 0 && s < below &&
            (!found || s > *out)) {
            *out = s;
            found = 1;
        }
    }
    closedir(d);
    return found ? 0
                 : sworn_err_set(SWORN_ERR_NOTFOUND, "no checkpoint older than size %llu",
                                 (unsigned long long)below);
}

const char *c_record_role_name(int r)
{
    switch (r) {
    case SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE:
        return "executable";
    case SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_SIGNER:
        return "signer";
    case SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_CONFIG:
        return "config";
    case SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY:
        return "policy";
    case SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXTRA:
        return "extra";
    default:
        return "unrecorded";
    }
}
