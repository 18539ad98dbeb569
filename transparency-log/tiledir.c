/*
 * tiledir.c -- export a log to a tlog-tiles folder and read one back (contract in tiledir.h).
 */
#include "tiledir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "safefile.h"
#include "checkpoint.h"
#include "err.h"
#include "fileio.h"

#define DIR_PATH_MAX 4096

/* Join dir and a relative path. */
static int join(const char *dir, const char *rel, char out[DIR_PATH_MAX])
{
    int n = snprintf(out, DIR_PATH_MAX, "%s/%s", dir, rel);

    if (n < 0 || n >= DIR_PATH_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "path %s/%s too long", dir, rel);
    return 0;
}

/*
 * Every file export writes lives under the tiles folder and is reached from a descriptor of that
 * folder (root below), one component at a time, with openat and O_NOFOLLOW: a folder inside it
 * that was replaced by a symbolic link (to anywhere) stops the export rather than redirect its
 * writes; temporary files are created with O_EXCL | O_NOFOLLOW and renamed with renameat, so
 * nothing is ever written through a link that was planted at their name.
 */

/* Open the folder rel[0..len) under root, creating missing folders when create. OUT: *out. */
static int open_folder(int root, const char *rel, size_t len, int create, int *out)
{
    char part[DIR_PATH_MAX];
    int cur = dup(root);

    if (cur < 0)
        return sworn_err_set(SWORN_ERR_IO, "export: dup: %s", strerror(errno));
    for (size_t at = 0; at < len;) {
        size_t n = 0;
        int next;

        while (at + n < len && rel[at + n] != '/')
            n++;
        if (n == 0 || n >= sizeof(part)) {
            close(cur);
            return sworn_err_set(SWORN_ERR_ARG, "export: bad path %.*s", (int)len, rel);
        }
        memcpy(part, rel + at, n);
        part[n] = '\0';
        next = openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(cur, part, 0755) != 0 && errno != EEXIST) {
                int e = errno;

                close(cur);
                return sworn_err_set(SWORN_ERR_IO, "export: mkdir %.*s: %s", (int)(at + n), rel,
                                     strerror(e));
            }
            next = openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e = errno;

            close(cur);
            if (e == ENOENT)
                return sworn_err_set(SWORN_ERR_NOTFOUND, "export: %.*s does not exist",
                                     (int)(at + n), rel);
            return sworn_err_set(SWORN_ERR_IO,
                                 "export: %.*s: %s (a symbolic link or another file in the tiles "
                                 "folder is refused: export writes only inside it)",
                                 (int)(at + n), rel, strerror(e));
        }
        close(cur);
        cur = next;
        at += n;
        while (at < len && rel[at] == '/')
            at++;
    }
    *out = cur;
    return 0;
}

/* Split rel into its folder (under root; created when missing) and its last component. OUT:
 * *dfd (close it), *name (points into rel). */
static int open_parent(int root, const char *rel, int *dfd, const char **name)
{
    const char *slash = strrchr(rel, '/');

    *name = slash != NULL ? slash + 1 : rel;
    if (**name == '\0')
        return sworn_err_set(SWORN_ERR_ARG, "export: bad path %s", rel);
    if (slash == NULL) {
        *dfd = dup(root);
        return *dfd < 0 ? sworn_err_set(SWORN_ERR_IO, "export: dup: %s", strerror(errno)) : 0;
    }
    return open_folder(root, rel, (size_t)(slash - rel), 1, dfd);
}

/* Write all of data to fd and fsync it. */
static int write_all(int fd, const char *rel, const void *data, size_t len)
{
    const uint8_t *p = data;

    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, p + done, len - done);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return sworn_err_set(SWORN_ERR_IO, "export: write %s: %s", rel, strerror(errno));
        done += (size_t)n;
    }
    if (fsync(fd) != 0)
        return sworn_err_set(SWORN_ERR_IO, "export: fsync %s: %s", rel, strerror(errno));
    return 0;
}

/* Replace name in folder dfd with data: a temporary file created O_EXCL | O_NOFOLLOW, fsynced,
 * renamed over name, and the folder fsynced. rel names the file in errors. */
static int replace_at(int dfd, const char *name, const char *rel, const void *data, size_t len)
{
    char tmp[DIR_PATH_MAX];
    int fd;

    if (snprintf(tmp, sizeof(tmp), ".%s.tmp.%ld", name, (long)getpid()) >= (int)sizeof(tmp))
        return sworn_err_set(SWORN_ERR_RANGE, "export: name too long: %s", rel);
    /* A temporary file left by a crashed export of this pid (or planted): its name only. */
    if (unlinkat(dfd, tmp, 0) != 0 && errno != ENOENT)
        return sworn_err_set(SWORN_ERR_IO, "export: unlink %s's temporary file: %s", rel,
                             strerror(errno));
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "export: create %s's temporary file: %s", rel,
                             strerror(errno));
    if (write_all(fd, rel, data, len) < 0) {
        close(fd);
        (void)unlinkat(dfd, tmp, 0);
        return -1;
    }
    if (close(fd) != 0 || renameat(dfd, tmp, dfd, name) != 0) {
        int e = errno;

        (void)unlinkat(dfd, tmp, 0);
        return sworn_err_set(SWORN_ERR_IO, "export: replace %s: %s", rel, strerror(e));
    }
    if (fsync(dfd) != 0)
        return sworn_err_set(SWORN_ERR_IO, "export: fsync the folder of %s: %s", rel,
                             strerror(errno));
    return 0;
}

/* Replace the file rel under root (a replaceable file: checkpoint, the sworn/ history). */
static int replace_rel(int root, const char *rel, const void *data, size_t len)
{
    const char *name;
    int dfd = -1, rc;

    if (open_parent(root, rel, &dfd, &name) < 0)
        return -1;
    rc = replace_at(dfd, name, rel, data, len);
    close(dfd);
    return rc;
}

/* Read name in dfd (never through a link) into buf (capacity cap). OUT: *len. Returns 0, 1 when
 * it does not exist, -1 on error (a link, not a regular file, larger than cap). */
static int read_at(int dfd, const char *name, const char *rel, uint8_t *buf, size_t cap,
                   size_t *len)
{
    struct stat st;
    size_t got = 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0 && errno == ENOENT)
        return 1;
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "export: open %s: %s", rel, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return sworn_err_set(SWORN_ERR_IO, "export: %s is not a regular file", rel);
    }
    for (;;) {
        ssize_t n = read(fd, buf + got, cap - got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;

            close(fd);
            return sworn_err_set(SWORN_ERR_IO, "export: read %s: %s", rel, strerror(e));
        }
        if (n == 0)
            break;
        got += (size_t)n;
        if (got == cap) {
            close(fd);
            return sworn_err_set(SWORN_ERR_CORRUPT, "export: %s is larger than any tile", rel);
        }
    }
    close(fd);
    *len = got;
    return 0;
}

/* Write an immutable file rel under root: when it exists it must already hold exactly these
 * bytes. */
static int write_immutable(int root, const char *rel, const uint8_t *data, size_t len)
{
    const char *name;
    uint8_t *old = malloc(SWORN_TILE_BUNDLE_MAX + 1);
    size_t old_len = 0;
    int dfd = -1, rc = -1, r;

    SWORN_ENSURE(old != NULL, SWORN_ERR_NOMEM, "export: out of memory");
    SWORN_GUARD(open_parent(root, rel, &dfd, &name));
    r = read_at(dfd, name, rel, old, SWORN_TILE_BUNDLE_MAX + 1, &old_len);
    if (r < 0)
        goto fail;
    if (r == 0) {
        SWORN_ENSURE(old_len == len && memcmp(old, data, len) == 0, SWORN_ERR_CORRUPT,
                     "%s exists with other content: refusing to publish a second tree under the "
                     "same name",
                     rel);
        rc = 0;
        goto fail;
    }
    rc = replace_at(dfd, name, rel, data, len);
fail:
    if (dfd >= 0)
        close(dfd);
    free(old);
    return rc;
}

static uint64_t level_size(uint64_t size, int level)
{
    unsigned shift = (unsigned)level * SWORN_TILE_HEIGHT;

    return shift >= 64 ? 0 : size >> shift;
}

static int tile_file(const char *dir, const struct sworn_tile_id *id, char out[DIR_PATH_MAX])
{
    char rel[SWORN_TILE_PATH_MAX];

    if (sworn_tile_path(id, rel, sizeof(rel)) < 0)
        return -1;
    return join(dir, rel, out);
}

/* The path of tile id relative to the tiles folder. */
static int tile_rel(const struct sworn_tile_id *id, char out[DIR_PATH_MAX])
{
    return sworn_tile_path(id, out, DIR_PATH_MAX) < 0 ? -1 : 0;
}

/* Encode the entry bundle of tile t of a tree of `size` entries. OUT: *len. */
static int build_bundle(struct sworn_log *log, uint64_t size, uint64_t t, uint8_t *bundle,
                        size_t *len, unsigned *width)
{
    uint64_t first = t * SWORN_TILE_WIDTH;
    unsigned w = size - first < SWORN_TILE_WIDTH ? (unsigned)(size - first) : SWORN_TILE_WIDTH;
    size_t off = 0;

    for (unsigned i = 0; i < w; i++) {
        size_t n;

        if (sworn_log_read_entry(log, first + i, bundle + off + 2, SWORN_TILE_ENTRY_MAX, &n) < 0)
            return -1;
        sworn_put_u16be(bundle + off, (uint16_t)n);
        off += 2 + n;
    }
    *len = off;
    *width = w;
    return 0;
}

/*
 * Encode the receipts bundle that goes beside entry bundle t: for each entry of the bundle, a u16
 * big-endian length and that many bytes of its receipt (length 0: no receipt). OUT: *len.
 */
static int build_receipts(struct sworn_log *log, uint64_t t, unsigned w, uint8_t *out, size_t *len)
{
    uint64_t first = t * SWORN_TILE_WIDTH;
    size_t off = 0;

    for (unsigned i = 0; i < w; i++) {
        size_t n = 0;

        if (sworn_log_read_receipt(log, first + i, out + off + 2, SWORN_LOG_RECEIPT_MAX, &n) < 0) {
            if (sworn_err_code() != SWORN_ERR_NOTFOUND)
                return -1;
            n = 0;
        }
        sworn_put_u16be(out + off, (uint16_t)n);
        off += 2 + n;
    }
    *len = off;
    return 0;
}

/* "sworn/receipts/<N>[.p/<W>]": the entry bundle's path with "tile/entries/" replaced, relative
 * to the tiles folder. */
static int receipts_rel(const struct sworn_tile_id *id, char out[DIR_PATH_MAX])
{
    static const char entries_prefix[] = "tile/entries/";
    char rel[SWORN_TILE_PATH_MAX], rrel[SWORN_TILE_PATH_MAX + 8];

    if (sworn_tile_path(id, rel, sizeof(rel)) < 0)
        return -1;
    if (strncmp(rel, entries_prefix, sizeof(entries_prefix) - 1) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "receipts: %s is not an entry bundle path", rel);
    snprintf(rrel, sizeof(rrel), "sworn/receipts/%s", rel + sizeof(entries_prefix) - 1);
    snprintf(out, DIR_PATH_MAX, "%s", rrel);
    return 0;
}

/* Where the walks below write (a descriptor of the tiles folder), and up to which tree size. */
struct history_out {
    int root;
    uint64_t max_size;
};

/* Write one file of the sworn/ history beside the tiles (replaceable, like `checkpoint`). */
static int write_history_file(const struct history_out *h, const char *rel, const void *data,
                              size_t len)
{
    return replace_rel(h->root, rel, data, len);
}

static int export_checkpoint(void *arg, uint64_t size, const char *note, size_t len)
{
    const struct history_out *h = arg;
    char rel[64];

    if (size > h->max_size)
        return 0;
    snprintf(rel, sizeof(rel), "sworn/checkpoint/%llu", (unsigned long long)size);
    return write_history_file(h, rel, note, len);
}

static int export_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                        const uint8_t *sig, size_t sig_len)
{
    const struct history_out *h = arg;
    char rel[64];

    if (size > h->max_size)
        return 0;
    snprintf(rel, sizeof(rel), "sworn/quote/%llu.attest", (unsigned long long)size);
    if (write_history_file(h, rel, attest, attest_len) < 0)
        return -1;
    snprintf(rel, sizeof(rel), "sworn/quote/%llu.sig", (unsigned long long)size);
    return write_history_file(h, rel, sig, sig_len);
}

/*
 * Every stored checkpoint and quote of a tree no larger than n, under sworn/ (docs/formats.md):
 * what an auditor needs to check consistency between successive checkpoints and each quote.
 */
static int export_history(struct sworn_log *log, uint64_t n, uint64_t min_size, int root)
{
    struct history_out h = {root, n};

    if (sworn_log_each_checkpoint_from(log, min_size, export_checkpoint, &h) != 0)
        return -1;
    return sworn_log_each_quote_from(log, min_size, export_quote, &h) != 0 ? -1 : 0;
}

int sworn_tiledir_export(struct sworn_log *log, uint64_t size, const char *dir,
                         uint64_t *exported_size)
{
    return sworn_tiledir_export_since(log, size, dir, 0, exported_size);
}

int sworn_tiledir_export_since(struct sworn_log *log, uint64_t size, const char *dir,
                               uint64_t since, uint64_t *exported_size)
{
    char *note = malloc(SWORN_NOTE_MAX_LEN + 1);
    uint8_t *buf = malloc(SWORN_TILE_BUNDLE_MAX);
    char path[DIR_PATH_MAX];
    size_t note_len;
    uint64_t n;
    int rc = -1, root = -1;

    SWORN_ENSURE(note != NULL && buf != NULL, SWORN_ERR_NOMEM, "export: out of memory");
    SWORN_GUARD(sworn_log_get_checkpoint(log, size, note, SWORN_NOTE_MAX_LEN + 1, &note_len, &n));
    SWORN_ENSURE(since <= n, SWORN_ERR_ARG, "export: since %llu is beyond the checkpoint's %llu",
                 (unsigned long long)since, (unsigned long long)n);
    /* The tiles folder and every folder on the way: no link, root's or ours, writable by no one
     * else (a user who could rename one could give the export a folder of theirs, with tiles of
     * another tree under the names an incremental export never rewrites). Everything below is
     * relative to this descriptor. */
    SWORN_GUARD(sworn_safefile_opendir(dir, 1, "export: the tiles folder", &root));
    for (int level = 0; level <= SWORN_TILE_MAX_LEVEL && level_size(n, level) > 0; level++) {
        uint64_t tiles = (level_size(n, level) - 1) / SWORN_TILE_WIDTH + 1;

        /* Tiles wholly inside the tree of `since` entries are already there, unchanged. */
        for (uint64_t t = level_size(since, level) / SWORN_TILE_WIDTH; t < tiles; t++) {
            struct sworn_tile_id id = {.level = level, .index = t};

            SWORN_GUARD(sworn_log_read_tile(log, n, level, t, buf, &id.width));
            SWORN_GUARD(tile_rel(&id, path));
            SWORN_GUARD(write_immutable(root, path, buf, (size_t)id.width * SWORN_HASH_LEN));
        }
    }
    for (uint64_t t = since / SWORN_TILE_WIDTH; n > 0 && t <= (n - 1) / SWORN_TILE_WIDTH; t++) {
        struct sworn_tile_id id = {.level = SWORN_TILE_LEVEL_ENTRIES, .index = t};
        size_t len;

        SWORN_GUARD(build_bundle(log, n, t, buf, &len, &id.width));
        SWORN_GUARD(tile_rel(&id, path));
        SWORN_GUARD(write_immutable(root, path, buf, len));
        /* Receipts are written with their entries (one transaction), so this is final too. */
        SWORN_GUARD(build_receipts(log, t, id.width, buf, &len));
        SWORN_GUARD(receipts_rel(&id, path));
        SWORN_GUARD(write_immutable(root, path, buf, len));
    }
    /* From `since` itself: its checkpoint may have been signed again, and quoted, since. */
    SWORN_GUARD(export_history(log, n, since, root));
    /* Last, so that a reader who sees this checkpoint finds every tile it names. */
    SWORN_GUARD(replace_rel(root, "checkpoint", note, note_len));
    if (exported_size != NULL)
        *exported_size = n;
    rc = 0;
fail:
    if (root >= 0)
        close(root);
    free(note);
    free(buf);
    return rc;
}

/* Read, verify and parse dir/checkpoint. OUT: *note (free it), *note_len, *cp. */
static int read_checkpoint(const char *dir, const struct sworn_note_verifier *keys, size_t nkeys,
                           uint8_t **note, size_t *note_len, struct sworn_checkpoint *cp)
{
    char path[DIR_PATH_MAX];
    struct sworn_note *parsed = malloc(sizeof(*parsed));
    uint8_t *data = NULL;
    size_t len;

    SWORN_ENSURE(parsed != NULL, SWORN_ERR_NOMEM, "import: out of memory");
    SWORN_GUARD(join(dir, "checkpoint", path));
    SWORN_GUARD(sworn_file_read(path, SWORN_NOTE_MAX_LEN, (char **)&data, &len));
    SWORN_GUARD(sworn_note_parse((const char *)data, len, parsed));
    SWORN_GUARD(sworn_note_verify(parsed, keys, nkeys, NULL, NULL, NULL));
    SWORN_GUARD(sworn_checkpoint_parse(parsed->text, parsed->text_len, cp));
    free(parsed);
    *note = data;
    *note_len = len;
    return 0;
fail:
    free(parsed);
    free(data);
    return -1;
}

/* Append the entries of every bundle of a tree of `size` entries from dir to log. */
static int import_entries(const char *dir, uint64_t size, struct sworn_log *log)
{
    struct sworn_tile_entry *entries = calloc(SWORN_TILE_WIDTH, sizeof(*entries));
    const uint8_t *ptrs[SWORN_TILE_WIDTH];
    size_t lens[SWORN_TILE_WIDTH];
    char path[DIR_PATH_MAX];
    uint8_t *data = NULL;
    int rc = -1;

    SWORN_ENSURE(entries != NULL, SWORN_ERR_NOMEM, "import: out of memory");
    for (uint64_t t = 0; size > 0 && t <= (size - 1) / SWORN_TILE_WIDTH; t++) {
        uint64_t left = size - t * SWORN_TILE_WIDTH;
        struct sworn_tile_id id = {.level = SWORN_TILE_LEVEL_ENTRIES,
                                   .index = t,
                                   .width =
                                       left < SWORN_TILE_WIDTH ? (unsigned)left : SWORN_TILE_WIDTH};
        uint64_t first;
        size_t len;

        SWORN_GUARD(tile_file(dir, &id, path));
        SWORN_GUARD(sworn_file_read(path, SWORN_TILE_BUNDLE_MAX, (char **)&data, &len));
        SWORN_GUARD(sworn_tile_bundle_parse(data, len, id.width, entries));
        for (unsigned i = 0; i < id.width; i++) {
            ptrs[i] = entries[i].data;
            lens[i] = entries[i].len;
        }
        SWORN_GUARD(sworn_log_append(log, ptrs, lens, id.width, &first));
        SWORN_ENSURE(first == t * SWORN_TILE_WIDTH, SWORN_ERR_CORRUPT,
                     "import: entries landed at %llu", (unsigned long long)first);
        free(data);
        data = NULL;
    }
    rc = 0;
fail:
    free(data);
    free(entries);
    return rc;
}

/* Compare every hash tile of the tree of `size` entries in dir with the log's own. */
static int check_tiles(const char *dir, uint64_t size, struct sworn_log *log)
{
    uint8_t *ours = malloc(SWORN_TILE_WIDTH * SWORN_HASH_LEN);
    uint8_t *theirs = NULL;
    char path[DIR_PATH_MAX];
    int rc = -1;

    SWORN_ENSURE(ours != NULL, SWORN_ERR_NOMEM, "import: out of memory");
    for (int level = 0; level <= SWORN_TILE_MAX_LEVEL && level_size(size, level) > 0; level++) {
        uint64_t tiles = (level_size(size, level) - 1) / SWORN_TILE_WIDTH + 1;

        for (uint64_t t = 0; t < tiles; t++) {
            struct sworn_tile_id id = {.level = level, .index = t};
            size_t len;

            SWORN_GUARD(sworn_log_read_tile(log, size, level, t, ours, &id.width));
            SWORN_GUARD(tile_file(dir, &id, path));
            SWORN_GUARD(
                sworn_file_read(path, SWORN_TILE_WIDTH * SWORN_HASH_LEN, (char **)&theirs, &len));
            SWORN_GUARD(sworn_tile_hashes_check(theirs, len, id.width));
            SWORN_ENSURE(memcmp(ours, theirs, len) == 0, SWORN_ERR_VERIFY,
                         "%s does not match the hashes of the entries", path);
            free(theirs);
            theirs = NULL;
        }
    }
    rc = 0;
fail:
    free(theirs);
    free(ours);
    return rc;
}

int sworn_tiledir_import(const char *dir, const struct sworn_note_verifier *keys, size_t nkeys,
                         const char *db_path, struct sworn_log **out)
{
    struct sworn_checkpoint cp;
    struct sworn_log *log = NULL;
    uint8_t *note = NULL;
    uint8_t root[SWORN_HASH_LEN];
    size_t note_len;
    uint64_t tree;
    int created = 0;

    SWORN_GUARD(read_checkpoint(dir, keys, nkeys, &note, &note_len, &cp));
    SWORN_GUARD(sworn_log_create(db_path, cp.origin, &log));
    created = 1;
    SWORN_GUARD(import_entries(dir, cp.size, log));
    SWORN_GUARD(sworn_log_integrate(log, &tree));
    SWORN_GUARD(sworn_log_root(log, cp.size, root));
    SWORN_ENSURE(memcmp(root, cp.root, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                 "%s/checkpoint: the entries give another root for size %llu", dir,
                 (unsigned long long)cp.size);
    SWORN_GUARD(check_tiles(dir, cp.size, log));
    SWORN_GUARD(sworn_log_put_checkpoint(log, (const char *)note, note_len));
    free(note);
    *out = log;
    return 0;
fail:
    free(note);
    sworn_log_close(log);
    if (created) {
        /* Keep the first error: cleaning up must not overwrite it. */
        char wal[DIR_PATH_MAX], shm[DIR_PATH_MAX];

        snprintf(wal, sizeof(wal), "%s-wal", db_path);
        snprintf(shm, sizeof(shm), "%s-shm", db_path);
        unlink(db_path);
        unlink(wal);
        unlink(shm);
    }
    return -1;
}
