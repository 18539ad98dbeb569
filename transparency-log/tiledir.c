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

/* Create every missing folder on the way to the file at path (not the file itself). */
static int make_parents(const char *path)
{
    char tmp[DIR_PATH_MAX];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return sworn_err_set(SWORN_ERR_IO, "mkdir %s: %s", tmp, strerror(errno));
        *p = '/';
    }
    return 0;
}

/* Write an immutable file: when it exists it must already hold exactly these bytes. */
static int write_immutable(const char *path, const uint8_t *data, size_t len)
{
    uint8_t *old = NULL;
    size_t old_len = 0;

    if (sworn_file_read(path, SWORN_TILE_BUNDLE_MAX, (char **)&old, &old_len) == 0) {
        int same = old_len == len && memcmp(old, data, len) == 0;

        free(old);
        if (!same)
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "%s exists with other content: refusing to publish a second tree "
                                 "under the same name",
                                 path);
        return 0;
    }
    if (sworn_err_code() != SWORN_ERR_NOTFOUND)
        return -1;
    if (make_parents(path) < 0)
        return -1;
    return sworn_file_replace(path, data, len, 0644);
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

/* "sworn/receipts/<N>[.p/<W>]": the entry bundle's path with "tile/entries/" replaced. */
static int receipts_file(const char *dir, const struct sworn_tile_id *id, char out[DIR_PATH_MAX])
{
    static const char entries_prefix[] = "tile/entries/";
    char rel[SWORN_TILE_PATH_MAX], rrel[SWORN_TILE_PATH_MAX + 8];

    if (sworn_tile_path(id, rel, sizeof(rel)) < 0)
        return -1;
    if (strncmp(rel, entries_prefix, sizeof(entries_prefix) - 1) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "receipts: %s is not an entry bundle path", rel);
    snprintf(rrel, sizeof(rrel), "sworn/receipts/%s", rel + sizeof(entries_prefix) - 1);
    return join(dir, rrel, out);
}

/* Where the walks below write, and up to which tree size. */
struct history_out {
    const char *dir;
    uint64_t max_size;
};

/* Write one file of the sworn/ history beside the tiles (replaceable, like `checkpoint`). */
static int write_history_file(const struct history_out *h, const char *rel, const void *data,
                              size_t len)
{
    char path[DIR_PATH_MAX];

    if (join(h->dir, rel, path) < 0 || make_parents(path) < 0)
        return -1;
    return sworn_file_replace(path, data, len, 0644);
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
static int export_history(struct sworn_log *log, uint64_t n, uint64_t min_size, const char *dir)
{
    struct history_out h = {dir, n};

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
    int rc = -1;

    SWORN_ENSURE(note != NULL && buf != NULL, SWORN_ERR_NOMEM, "export: out of memory");
    SWORN_GUARD(sworn_log_get_checkpoint(log, size, note, SWORN_NOTE_MAX_LEN + 1, &note_len, &n));
    SWORN_ENSURE(since <= n, SWORN_ERR_ARG, "export: since %llu is beyond the checkpoint's %llu",
                 (unsigned long long)since, (unsigned long long)n);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        sworn_err_set(SWORN_ERR_IO, "mkdir %s: %s", dir, strerror(errno));
        goto fail;
    }
    for (int level = 0; level <= SWORN_TILE_MAX_LEVEL && level_size(n, level) > 0; level++) {
        uint64_t tiles = (level_size(n, level) - 1) / SWORN_TILE_WIDTH + 1;

        /* Tiles wholly inside the tree of `since` entries are already there, unchanged. */
        for (uint64_t t = level_size(since, level) / SWORN_TILE_WIDTH; t < tiles; t++) {
            struct sworn_tile_id id = {.level = level, .index = t};

            SWORN_GUARD(sworn_log_read_tile(log, n, level, t, buf, &id.width));
            SWORN_GUARD(tile_file(dir, &id, path));
            SWORN_GUARD(write_immutable(path, buf, (size_t)id.width * SWORN_HASH_LEN));
        }
    }
    for (uint64_t t = since / SWORN_TILE_WIDTH; n > 0 && t <= (n - 1) / SWORN_TILE_WIDTH; t++) {
        struct sworn_tile_id id = {.level = SWORN_TILE_LEVEL_ENTRIES, .index = t};
        size_t len;

        SWORN_GUARD(build_bundle(log, n, t, buf, &len, &id.width));
        SWORN_GUARD(tile_file(dir, &id, path));
        SWORN_GUARD(write_immutable(path, buf, len));
        /* Receipts are written with their entries (one transaction), so this is final too. */
        SWORN_GUARD(build_receipts(log, t, id.width, buf, &len));
        SWORN_GUARD(receipts_file(dir, &id, path));
        SWORN_GUARD(write_immutable(path, buf, len));
    }
    /* From `since` itself: its checkpoint may have been signed again, and quoted, since. */
    SWORN_GUARD(export_history(log, n, since, dir));
    /* Last, so that a reader who sees this checkpoint finds every tile it names. */
    SWORN_GUARD(join(dir, "checkpoint", path));
    SWORN_GUARD(sworn_file_replace(path, note, note_len, 0644));
    if (exported_size != NULL)
        *exported_size = n;
    rc = 0;
fail:
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
