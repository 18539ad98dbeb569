/*
 * logstore.c -- the log on sqlite3 (contract and storage layout in logstore.h; the byte layout of
 * each table in docs/formats.md).
 *
 * Tile rows. A tile of width w (1..256) at level L, index t, stores 8 rows of hashes:
 *     row 0: w hashes, the level-8L nodes t*256 .. t*256+w-1 (what tlog-tiles serves)
 *     row r: floor(w / 2^r) hashes, node i of row r = H(row r-1 [2i], row r-1 [2i+1])
 * so every complete subtree of height 8L+r that lies in the tile is stored. The row offsets
 * follow from w alone (row_offset below). The root of a full tile (height 8L+8) is row 0 of the
 * level-L+1 tile, and is not repeated in the level-L tile.
 *
 * Locking. db_lock serialises every use of the sqlite connection and the fields it guards
 * (next_index, tree_size, the tile cache). q_lock guards the group-commit queue; a thread never
 * waits for q_lock while it holds db_lock.
 */
#include "logstore.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"

/* Hashes in all eight rows of a full tile: 256 + 128 + ... + 2. */
#define TILE_ALL_ROWS_MAX (2 * SWORN_TILE_WIDTH - 2)
/* Leaves hashed per step of integration, to bound memory (2 MiB of leaf hashes). */
#define INTEGRATE_CHUNK 65536
#define TILE_CACHE_SLOTS 64

struct tile_slot {
    int used;
    int level;
    uint64_t index;
    unsigned width;
    uint8_t hashes[TILE_ALL_ROWS_MAX * SWORN_HASH_LEN];
};

/* One caller's batch waiting in the group-commit queue. */
struct append_req {
    const uint8_t *const *entries;
    const size_t *lens;
    const uint8_t *const *receipts; /* NULL, or per entry NULL / receipt_lens[i] == 0 for none */
    const size_t *receipt_lens;
    size_t n;
    uint64_t first_index;
    int done;
    int rc;
    enum sworn_err_code code;
    char msg[SWORN_ERR_MSG_MAX];
    struct append_req *next;
};

struct sworn_log {
    sqlite3 *db;
    pthread_mutex_t db_lock;
    char origin[SWORN_CHECKPOINT_ORIGIN_MAX + 1];
    uint64_t next_index; /* durable entries */
    uint64_t tree_size;  /* integrated entries */

    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    struct append_req *q_head, *q_tail;
    int committing;

    sqlite3_stmt *st_insert_entry;
    sqlite3_stmt *st_insert_receipt;
    sqlite3_stmt *st_get_receipt;
    sqlite3_stmt *st_get_entry;
    sqlite3_stmt *st_entry_range;
    sqlite3_stmt *st_get_tile;
    sqlite3_stmt *st_put_tile;
    sqlite3_stmt *st_set_integrated;

    struct tile_slot cache[TILE_CACHE_SLOTS];
};

/*
 * Quotes and receipts came after format 1 was first written: open adds their tables to a
 * database without them.
 */
#define QUOTES_TABLE_SQL                                                                           \
    "CREATE TABLE IF NOT EXISTS quotes(size INTEGER PRIMARY KEY, attest BLOB NOT NULL,"            \
    " signature BLOB NOT NULL);"                                                                   \
    "CREATE TABLE IF NOT EXISTS receipts(idx INTEGER PRIMARY KEY, data BLOB NOT NULL);"

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE entries(idx INTEGER PRIMARY KEY, data BLOB NOT NULL);"
    "CREATE TABLE tiles(level INTEGER NOT NULL, idx INTEGER NOT NULL, width INTEGER NOT NULL,"
    " hashes BLOB NOT NULL, PRIMARY KEY(level, idx)) WITHOUT ROWID;"
    "CREATE TABLE checkpoints(size INTEGER PRIMARY KEY, note TEXT NOT NULL);" QUOTES_TABLE_SQL;

static int db_error(struct sworn_log *log, const char *what)
{
    return sworn_err_set(SWORN_ERR_IO, "log database: %s: %s", what, sqlite3_errmsg(log->db));
}

static int exec_sql(struct sworn_log *log, const char *sql)
{
    char *msg = NULL;

    if (sqlite3_exec(log->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sworn_err_set(SWORN_ERR_IO, "log database: %s: %s", sql, msg ? msg : "error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Run a statement that returns no rows, then reset it. */
static int step_done(struct sworn_log *log, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return db_error(log, what);
    return 0;
}

static int prepare(struct sworn_log *log, const char *sql, sqlite3_stmt **st)
{
    if (sqlite3_prepare_v3(log->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return db_error(log, "prepare");
    return 0;
}

static int meta_set_locked(struct sworn_log *log, const char *key, const char *value)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(log->db, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", -1, &st,
                           NULL) != SQLITE_OK)
        return db_error(log, "prepare meta write");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_error(log, "meta write");
    return 0;
}

static int meta_get_locked(struct sworn_log *log, const char *key, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(log->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return db_error(log, "prepare meta read");
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        int n = sqlite3_column_bytes(st, 0);

        if (v == NULL || (size_t)n + 1 > cap) {
            sqlite3_finalize(st);
            return sworn_err_set(SWORN_ERR_RANGE, "log database: meta %s longer than %zu bytes",
                                 key, cap);
        }
        memcpy(out, v, (size_t)n);
        out[n] = '\0';
        sqlite3_finalize(st);
        return 0;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "log database: no meta %s", key);
    return db_error(log, "meta read");
}

/* Position of the first hash of row r in a tile of width w. */
static size_t row_offset(unsigned w, unsigned r)
{
    size_t off = 0;

    for (unsigned j = 0; j < r; j++)
        off += w >> j;
    return off;
}

static size_t all_rows_len(unsigned w)
{
    return row_offset(w, SWORN_TILE_HEIGHT);
}

/* Fill rows 1..7 of a tile whose row 0 (w hashes) is already at the start of hashes. */
static void build_rows(uint8_t *hashes, unsigned w)
{
    for (unsigned r = 1; r < SWORN_TILE_HEIGHT; r++) {
        const uint8_t *prev = hashes + row_offset(w, r - 1) * SWORN_HASH_LEN;
        uint8_t *row = hashes + row_offset(w, r) * SWORN_HASH_LEN;

        for (unsigned i = 0; i < (w >> r); i++)
            sworn_merkle_node_hash(prev + 2 * i * SWORN_HASH_LEN,
                                   prev + (2 * i + 1) * SWORN_HASH_LEN, row + i * SWORN_HASH_LEN);
    }
}

static struct tile_slot *cache_slot(struct sworn_log *log, int level, uint64_t index)
{
    return &log->cache[(index * 67 + (uint64_t)level) % TILE_CACHE_SLOTS];
}

/*
 * Find tile (level, index) in the cache or the database. OUT: *slot, valid until the next tile
 * load or store. Returns 0, or -1 (SWORN_ERR_NOTFOUND when absent; SWORN_ERR_CORRUPT when the
 * stored blob does not match its width).
 */
static int load_tile(struct sworn_log *log, int level, uint64_t index, struct tile_slot **slot)
{
    struct tile_slot *s = cache_slot(log, level, index);
    sqlite3_stmt *st = log->st_get_tile;
    int rc;

    if (s->used && s->level == level && s->index == index) {
        *slot = s;
        return 0;
    }
    sqlite3_bind_int(st, 1, level);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        sqlite3_int64 w = sqlite3_column_int64(st, 0);
        const void *blob = sqlite3_column_blob(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1);

        if (w < 1 || w > SWORN_TILE_WIDTH || blob == NULL ||
            n != all_rows_len((unsigned)w) * SWORN_HASH_LEN) {
            sqlite3_reset(st);
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: tile %d/%llu has %zu bytes for width %lld", level,
                                 (unsigned long long)index, n, (long long)w);
        }
        s->used = 1;
        s->level = level;
        s->index = index;
        s->width = (unsigned)w;
        memcpy(s->hashes, blob, n);
        sqlite3_reset(st);
        *slot = s;
        return 0;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "log database: no tile %d/%llu", level,
                             (unsigned long long)index);
    return db_error(log, "read tile");
}

static int store_tile(struct sworn_log *log, int level, uint64_t index, unsigned w,
                      const uint8_t *hashes)
{
    sqlite3_stmt *st = log->st_put_tile;
    struct tile_slot *s = cache_slot(log, level, index);

    /* The cached copy is dropped rather than updated: a rolled-back transaction must not leave a
     * tile in the cache that the database does not have. */
    if (s->used && s->level == level && s->index == index)
        s->used = 0;
    sqlite3_bind_int(st, 1, level);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    sqlite3_bind_int(st, 3, (int)w);
    sqlite3_bind_blob(st, 4, hashes, (int)(all_rows_len(w) * SWORN_HASH_LEN), SQLITE_STATIC);
    return step_done(log, st, "write tile");
}

static void cache_clear(struct sworn_log *log)
{
    for (size_t i = 0; i < TILE_CACHE_SLOTS; i++)
        log->cache[i].used = 0;
}

/*
 * The stored hash of the complete subtree of height h whose leftmost leaf is k << h.
 * Requires that subtree to be inside the integrated tree.
 */
static int get_node(struct sworn_log *log, unsigned h, uint64_t k, uint8_t out[SWORN_HASH_LEN])
{
    unsigned level = h / SWORN_TILE_HEIGHT, r = h % SWORN_TILE_HEIGHT;
    uint64_t tile = k >> (SWORN_TILE_HEIGHT - r);
    uint64_t pos = k & ((SWORN_TILE_WIDTH >> r) - 1);
    struct tile_slot *s;

    if (load_tile(log, (int)level, tile, &s) < 0) {
        if (sworn_err_code() == SWORN_ERR_NOTFOUND)
            sworn_err_set(SWORN_ERR_CORRUPT, "log database: tile %u/%llu missing inside the tree",
                          level, (unsigned long long)tile);
        return -1;
    }
    if (pos >= (s->width >> r))
        return sworn_err_set(SWORN_ERR_CORRUPT, "log database: tile %u/%llu too narrow for node",
                             level, (unsigned long long)tile);
    memcpy(out, s->hashes + (row_offset(s->width, r) + pos) * SWORN_HASH_LEN, SWORN_HASH_LEN);
    return 0;
}

/* The largest power of two strictly less than n (n >= 2). */
static uint64_t split_point(uint64_t n)
{
    uint64_t k = 1;

    while (k < n - k)
        k <<= 1;
    return k;
}

static unsigned log2_exact(uint64_t n)
{
    unsigned h = 0;

    while ((UINT64_C(1) << h) < n)
        h++;
    return h;
}

/*
 * MTH of leaves [start, end) (RFC 9162 2.1.1), from stored hashes. start is a multiple of the
 * largest power of two not above end - start, as it always is inside the RFC recursions.
 */
static int subtree_hash(struct sworn_log *log, uint64_t start, uint64_t end,
                        uint8_t out[SWORN_HASH_LEN])
{
    uint64_t n = end - start;
    uint8_t left[SWORN_HASH_LEN], right[SWORN_HASH_LEN];
    uint64_t k;

    if ((n & (n - 1)) == 0) {
        unsigned h = log2_exact(n);
        return get_node(log, h, start >> h, out);
    }
    k = split_point(n);
    if (subtree_hash(log, start, start + k, left) < 0 ||
        subtree_hash(log, start + k, end, right) < 0)
        return -1;
    sworn_merkle_node_hash(left, right, out);
    return 0;
}

/* Append one hash to a proof of *count hashes in out (capacity cap hashes). */
static int push_hash(const uint8_t h[SWORN_HASH_LEN], uint8_t *out, size_t cap, size_t *count)
{
    if (*count >= cap)
        return sworn_err_set(SWORN_ERR_RANGE, "proof longer than %zu hashes", cap);
    memcpy(out + *count * SWORN_HASH_LEN, h, SWORN_HASH_LEN);
    (*count)++;
    return 0;
}

/* PATH(m, D[start:end]) of RFC 9162 2.1.3.1, appended to out at *count. */
static int inclusion_path(struct sworn_log *log, uint64_t m, uint64_t start, uint64_t end,
                          uint8_t *out, size_t cap, size_t *count)
{
    uint64_t n = end - start, k;
    uint8_t h[SWORN_HASH_LEN];

    if (n == 1)
        return 0;
    k = split_point(n);
    if (m < k) {
        if (inclusion_path(log, m, start, start + k, out, cap, count) < 0 ||
            subtree_hash(log, start + k, end, h) < 0)
            return -1;
    } else {
        if (inclusion_path(log, m - k, start + k, end, out, cap, count) < 0 ||
            subtree_hash(log, start, start + k, h) < 0)
            return -1;
    }
    return push_hash(h, out, cap, count);
}

/* SUBPROOF(m, D[start:end], b) of RFC 9162 2.1.4.1, appended to out at *count. */
static int consistency_subproof(struct sworn_log *log, uint64_t m, uint64_t start, uint64_t end,
                                int b, uint8_t *out, size_t cap, size_t *count)
{
    uint64_t n = end - start, k;
    uint8_t h[SWORN_HASH_LEN];

    if (m == n) {
        if (b)
            return 0;
        if (subtree_hash(log, start, end, h) < 0)
            return -1;
    } else {
        k = split_point(n);
        if (m <= k) {
            if (consistency_subproof(log, m, start, start + k, b, out, cap, count) < 0 ||
                subtree_hash(log, start + k, end, h) < 0)
                return -1;
        } else {
            if (consistency_subproof(log, m - k, start + k, end, 0, out, cap, count) < 0 ||
                subtree_hash(log, start, start + k, h) < 0)
                return -1;
        }
    }
    return push_hash(h, out, cap, count);
}

/*
 * Add n hashes of tree level 8*level, the first being number `start` of that level, to the tiles
 * of `level`, and carry the roots of tiles this fills up to the next level.
 */
static int add_to_level(struct sworn_log *log, int level, uint64_t start, const uint8_t *hashes,
                        uint64_t n)
{
    uint8_t tile[TILE_ALL_ROWS_MAX * SWORN_HASH_LEN];
    uint8_t *parents = NULL;
    uint64_t parent_count = 0, pos = start, i = 0;
    int rc = -1;

    if (level > SWORN_TILE_MAX_LEVEL)
        return sworn_err_set(SWORN_ERR_RANGE, "log tree deeper than tiles allow");
    parents = malloc((size_t)(n / SWORN_TILE_WIDTH + 1) * SWORN_HASH_LEN);
    if (parents == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "integrate: out of memory");
    while (i < n) {
        uint64_t t = pos / SWORN_TILE_WIDTH;
        unsigned off = (unsigned)(pos % SWORN_TILE_WIDTH);
        uint64_t k = SWORN_TILE_WIDTH - off;
        unsigned w;

        if (k > n - i)
            k = n - i;
        if (off > 0) {
            struct tile_slot *s;

            SWORN_GUARD(load_tile(log, level, t, &s));
            SWORN_ENSURE(s->width == off, SWORN_ERR_CORRUPT,
                         "log database: tile %d/%llu has width %u, the tree needs %u", level,
                         (unsigned long long)t, s->width, off);
            memcpy(tile, s->hashes, (size_t)off * SWORN_HASH_LEN);
        }
        memcpy(tile + (size_t)off * SWORN_HASH_LEN, hashes + i * SWORN_HASH_LEN,
               (size_t)k * SWORN_HASH_LEN);
        w = off + (unsigned)k;
        build_rows(tile, w);
        SWORN_GUARD(store_tile(log, level, t, w, tile));
        if (w == SWORN_TILE_WIDTH) {
            const uint8_t *top = tile + row_offset(w, SWORN_TILE_HEIGHT - 1) * SWORN_HASH_LEN;
            sworn_merkle_node_hash(top, top + SWORN_HASH_LEN,
                                   parents + parent_count * SWORN_HASH_LEN);
            parent_count++;
        }
        pos += k;
        i += k;
    }
    if (parent_count > 0)
        SWORN_GUARD(add_to_level(log, level + 1, start / SWORN_TILE_WIDTH, parents, parent_count));
    rc = 0;
fail:
    free(parents);
    return rc;
}

/* Hash entries [from, to) into a fresh array of leaf hashes. */
static int hash_entries(struct sworn_log *log, uint64_t from, uint64_t to, uint8_t *leaves)
{
    sqlite3_stmt *st = log->st_entry_range;
    uint64_t expect = from;
    int rc;

    sqlite3_bind_int64(st, 1, (sqlite3_int64)from);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)to);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t idx = (uint64_t)sqlite3_column_int64(st, 0);
        const void *data = sqlite3_column_blob(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);

        if (idx != expect || len > SWORN_TILE_ENTRY_MAX) {
            sqlite3_reset(st);
            return sworn_err_set(SWORN_ERR_CORRUPT, "log database: entry %llu missing or invalid",
                                 (unsigned long long)expect);
        }
        sworn_merkle_leaf_hash(data, len, leaves + (idx - from) * SWORN_HASH_LEN);
        expect++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return db_error(log, "read entries");
    if (expect != to)
        return sworn_err_set(SWORN_ERR_CORRUPT, "log database: entry %llu missing",
                             (unsigned long long)expect);
    return 0;
}

/* Record the integrated tree size, inside the caller's transaction. */
static int set_integrated(struct sworn_log *log, uint64_t size)
{
    char text[24];

    snprintf(text, sizeof(text), "%llu", (unsigned long long)size);
    sqlite3_bind_text(log->st_set_integrated, 1, text, -1, SQLITE_TRANSIENT);
    return step_done(log, log->st_set_integrated, "write integrated size");
}

/*
 * Hash the stored entries [tree_size, to) into the tiles, inside the caller's transaction. Only
 * recovery needs this: appends integrate their own entries as they commit them.
 */
static int integrate_stored(struct sworn_log *log, uint64_t to)
{
    uint8_t *leaves = malloc((size_t)INTEGRATE_CHUNK * SWORN_HASH_LEN);
    int rc = -1;

    SWORN_ENSURE(leaves != NULL, SWORN_ERR_NOMEM, "integrate: out of memory");
    for (uint64_t pos = log->tree_size; pos < to;) {
        uint64_t n = to - pos < INTEGRATE_CHUNK ? to - pos : INTEGRATE_CHUNK;

        SWORN_GUARD(hash_entries(log, pos, pos + n, leaves));
        SWORN_GUARD(add_to_level(log, 0, pos, leaves, n));
        pos += n;
    }
    rc = 0;
fail:
    free(leaves);
    return rc;
}

static int integrate_locked(struct sworn_log *log)
{
    uint64_t to = log->next_index;
    int in_txn = 0;

    /* The tree never runs ahead of the stored entries, and never shrinks. */
    assert(log->tree_size <= to);
    if (log->tree_size == to)
        return 0;
    SWORN_GUARD(exec_sql(log, "BEGIN IMMEDIATE"));
    in_txn = 1;
    SWORN_GUARD(integrate_stored(log, to));
    SWORN_GUARD(set_integrated(log, to));
    SWORN_GUARD(exec_sql(log, "COMMIT"));
    log->tree_size = to;
    return 0;
fail:
    if (in_txn)
        (void)sqlite3_exec(log->db, "ROLLBACK", NULL, NULL, NULL);
    cache_clear(log);
    return -1;
}

static int open_db(const char *db_path, int create, struct sworn_log **out)
{
    struct sworn_log *log = calloc(1, sizeof(*log));
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
    char mode[16];

    if (log == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "log: out of memory");
    pthread_mutex_init(&log->db_lock, NULL);
    pthread_mutex_init(&log->q_lock, NULL);
    pthread_cond_init(&log->q_cond, NULL);
    if (create)
        flags |= SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(db_path, &log->db, flags, NULL) != SQLITE_OK) {
        sworn_err_set(SWORN_ERR_IO, "log database %s: %s", db_path,
                      log->db ? sqlite3_errmsg(log->db) : "cannot open");
        goto fail;
    }
    sqlite3_extended_result_codes(log->db, 1);
    sqlite3_busy_timeout(log->db, 10000);
    {
        sqlite3_stmt *st = NULL;
        int ok = 0;

        /* journal_mode answers with the mode in force: anything but wal is refused, since the
         * durability argument of logstore.h rests on it. */
        if (sqlite3_prepare_v2(log->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *m = sqlite3_column_text(st, 0);
            snprintf(mode, sizeof(mode), "%s", m ? (const char *)m : "");
            ok = strcmp(mode, "wal") == 0;
        }
        sqlite3_finalize(st);
        SWORN_ENSURE(ok, SWORN_ERR_IO, "log database %s: cannot enable WAL journal", db_path);
    }
    SWORN_GUARD(exec_sql(log, "PRAGMA synchronous=FULL"));
    *out = log;
    return 0;
fail:
    sworn_log_close(log);
    return -1;
}

static int prepare_all(struct sworn_log *log)
{
    SWORN_GUARD(prepare(log, "INSERT INTO entries(idx, data) VALUES(?, ?)", &log->st_insert_entry));
    SWORN_GUARD(prepare(log, "SELECT data FROM entries WHERE idx = ?", &log->st_get_entry));
    SWORN_GUARD(
        prepare(log, "INSERT INTO receipts(idx, data) VALUES(?, ?)", &log->st_insert_receipt));
    SWORN_GUARD(prepare(log, "SELECT data FROM receipts WHERE idx = ?", &log->st_get_receipt));
    SWORN_GUARD(prepare(log,
                        "SELECT idx, data FROM entries WHERE idx >= ? AND idx < ? ORDER BY idx",
                        &log->st_entry_range));
    SWORN_GUARD(prepare(log, "SELECT width, hashes FROM tiles WHERE level = ? AND idx = ?",
                        &log->st_get_tile));
    SWORN_GUARD(
        prepare(log, "INSERT OR REPLACE INTO tiles(level, idx, width, hashes) VALUES(?, ?, ?, ?)",
                &log->st_put_tile));
    SWORN_GUARD(prepare(log, "INSERT OR REPLACE INTO meta(key, value) VALUES('integrated', ?)",
                        &log->st_set_integrated));
    return 0;
fail:
    return -1;
}

int sworn_log_create(const char *db_path, const char *origin, struct sworn_log **out)
{
    struct sworn_log *log = NULL;
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    char version[8];
    uint8_t empty[SWORN_HASH_LEN];
    int fd;

    /* Validate the origin the same way checkpoints will carry it. */
    sworn_merkle_empty_root(empty);
    if (sworn_checkpoint_format(origin, 0, empty, body, sizeof(body)) < 0)
        return -1;
    /* O_EXCL: never adopt or overwrite an existing file as a new log. */
    fd = open(db_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "log database %s: %s", db_path, strerror(errno));
    close(fd);
    SWORN_GUARD(open_db(db_path, 1, &log));
    snprintf(version, sizeof(version), "%d", SWORN_LOG_FORMAT_VERSION);
    SWORN_GUARD(exec_sql(log, "BEGIN IMMEDIATE"));
    SWORN_GUARD(exec_sql(log, schema_sql));
    SWORN_GUARD(meta_set_locked(log, "format", version));
    SWORN_GUARD(meta_set_locked(log, "origin", origin));
    SWORN_GUARD(meta_set_locked(log, "integrated", "0"));
    SWORN_GUARD(exec_sql(log, "COMMIT"));
    SWORN_GUARD(prepare_all(log));
    snprintf(log->origin, sizeof(log->origin), "%s", origin);
    *out = log;
    return 0;
fail:
    sworn_log_close(log);
    return -1;
}

/* Read a decimal meta value. */
static int meta_get_u64(struct sworn_log *log, const char *key, uint64_t *v)
{
    char text[32];

    if (meta_get_locked(log, key, text, sizeof(text)) < 0)
        return -1;
    if (sworn_parse_u64(text, strlen(text), v) < 0)
        return sworn_err_set(SWORN_ERR_CORRUPT, "log database: meta %s is not a number", key);
    return 0;
}

/* Count the durable entries and check that they are exactly 0 .. count-1. */
static int count_entries(struct sworn_log *log, uint64_t *count)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(log->db,
                           "SELECT count(*), coalesce(max(idx) + 1, 0), min(idx) FROM entries", -1,
                           &st, NULL) != SQLITE_OK)
        return db_error(log, "prepare count");
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_error(log, "count entries");
    }
    sqlite3_int64 n = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
    sqlite3_int64 first = sqlite3_column_int64(st, 2);
    sqlite3_finalize(st);
    if (n != end || (n > 0 && first != 0))
        return sworn_err_set(SWORN_ERR_CORRUPT,
                             "log database: %lld entries but indices run to %lld", (long long)n,
                             (long long)end);
    *count = (uint64_t)n;
    return 0;
}

int sworn_log_open(const char *db_path, struct sworn_log **out)
{
    struct sworn_log *log = NULL;
    uint64_t version;

    SWORN_GUARD(open_db(db_path, 0, &log));
    if (meta_get_u64(log, "format", &version) < 0) {
        sworn_err_set(SWORN_ERR_FORMAT, "%s is not a sworn log database", db_path);
        goto fail;
    }
    SWORN_ENSURE(version == SWORN_LOG_FORMAT_VERSION, SWORN_ERR_FORMAT,
                 "log database %s has format %llu, this build reads %d", db_path,
                 (unsigned long long)version, SWORN_LOG_FORMAT_VERSION);
    SWORN_GUARD(meta_get_locked(log, "origin", log->origin, sizeof(log->origin)));
    SWORN_GUARD(meta_get_u64(log, "integrated", &log->tree_size));
    SWORN_GUARD(count_entries(log, &log->next_index));
    SWORN_ENSURE(log->tree_size <= log->next_index, SWORN_ERR_CORRUPT,
                 "log database: tree of %llu entries but only %llu stored",
                 (unsigned long long)log->tree_size, (unsigned long long)log->next_index);
    SWORN_GUARD(exec_sql(log, QUOTES_TABLE_SQL));
    SWORN_GUARD(prepare_all(log));
    /* Recovery: entries made durable before a crash but not yet integrated join the tree now. */
    SWORN_GUARD(integrate_locked(log));
    *out = log;
    return 0;
fail:
    sworn_log_close(log);
    return -1;
}

void sworn_log_close(struct sworn_log *log)
{
    if (log == NULL)
        return;
    sqlite3_finalize(log->st_insert_entry);
    sqlite3_finalize(log->st_get_entry);
    sqlite3_finalize(log->st_insert_receipt);
    sqlite3_finalize(log->st_get_receipt);
    sqlite3_finalize(log->st_entry_range);
    sqlite3_finalize(log->st_get_tile);
    sqlite3_finalize(log->st_put_tile);
    sqlite3_finalize(log->st_set_integrated);
    if (log->db != NULL)
        sqlite3_close(log->db);
    pthread_mutex_destroy(&log->db_lock);
    pthread_mutex_destroy(&log->q_lock);
    pthread_cond_destroy(&log->q_cond);
    free(log);
}

const char *sworn_log_origin(const struct sworn_log *log)
{
    return log->origin;
}

/*
 * Write every entry of a batch of requests, and hash them into the tree, in one transaction: one
 * WAL fsync makes the entries and their tiles durable together, so the tree always describes
 * exactly the durable entries. Caller holds db_lock.
 */
static int commit_batch(struct sworn_log *log, struct append_req *batch)
{
    uint64_t first = log->next_index, next = first, total = 0;
    uint8_t *leaves = NULL;
    int in_txn = 0;

    assert(log->tree_size <= first);
    for (struct append_req *r = batch; r != NULL; r = r->next)
        total += r->n;
    leaves = malloc((size_t)total * SWORN_HASH_LEN);
    SWORN_ENSURE(leaves != NULL, SWORN_ERR_NOMEM, "append: out of memory");
    SWORN_GUARD(exec_sql(log, "BEGIN IMMEDIATE"));
    in_txn = 1;
    /* Entries left unintegrated by an earlier failure join the tree first, in order. */
    if (log->tree_size < first)
        SWORN_GUARD(integrate_stored(log, first));
    for (struct append_req *r = batch; r != NULL; r = r->next) {
        r->first_index = next;
        for (size_t i = 0; i < r->n; i++) {
            sqlite3_stmt *st = log->st_insert_entry;

            sqlite3_bind_int64(st, 1, (sqlite3_int64)next);
            /* A zero-length blob must still be a blob, not NULL: use a static empty buffer. */
            sqlite3_bind_blob(st, 2, r->lens[i] ? (const void *)r->entries[i] : (const void *)"",
                              (int)r->lens[i], SQLITE_STATIC);
            SWORN_GUARD(step_done(log, st, "insert entry"));
            if (r->receipts != NULL && r->receipts[i] != NULL && r->receipt_lens[i] > 0) {
                st = log->st_insert_receipt;
                sqlite3_bind_int64(st, 1, (sqlite3_int64)next);
                sqlite3_bind_blob(st, 2, r->receipts[i], (int)r->receipt_lens[i], SQLITE_STATIC);
                SWORN_GUARD(step_done(log, st, "insert receipt"));
            }
            sworn_merkle_leaf_hash(r->entries[i], r->lens[i],
                                   leaves + (next - first) * SWORN_HASH_LEN);
            next++;
        }
    }
    assert(next == first + total);
    SWORN_GUARD(add_to_level(log, 0, first, leaves, total));
    SWORN_GUARD(set_integrated(log, next));
    SWORN_GUARD(exec_sql(log, "COMMIT"));
    log->next_index = next;
    log->tree_size = next;
    free(leaves);
    return 0;
fail:
    if (in_txn)
        (void)sqlite3_exec(log->db, "ROLLBACK", NULL, NULL, NULL);
    cache_clear(log);
    free(leaves);
    return -1;
}

int sworn_log_append(struct sworn_log *log, const uint8_t *const *entries, const size_t *lens,
                     size_t n, uint64_t *first_index)
{
    return sworn_log_append_receipts(log, entries, lens, NULL, NULL, n, first_index);
}

int sworn_log_append_receipts(struct sworn_log *log, const uint8_t *const *entries,
                              const size_t *lens, const uint8_t *const *receipts,
                              const size_t *receipt_lens, size_t n, uint64_t *first_index)
{
    struct append_req req = {.entries = entries,
                             .lens = lens,
                             .receipts = receipts,
                             .receipt_lens = receipt_lens,
                             .n = n};

    if (n == 0)
        return sworn_err_set(SWORN_ERR_ARG, "append: no entries");
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > SWORN_TILE_ENTRY_MAX)
            return sworn_err_set(SWORN_ERR_RANGE,
                                 "append: entry %zu has %zu bytes; entries hold at most %u", i,
                                 lens[i], SWORN_TILE_ENTRY_MAX);
        if (receipts != NULL && receipts[i] != NULL && receipt_lens[i] > SWORN_LOG_RECEIPT_MAX)
            return sworn_err_set(SWORN_ERR_RANGE,
                                 "append: receipt %zu has %zu bytes; receipts hold at most %u", i,
                                 receipt_lens[i], SWORN_LOG_RECEIPT_MAX);
    }

    pthread_mutex_lock(&log->q_lock);
    if (log->q_tail)
        log->q_tail->next = &req;
    else
        log->q_head = &req;
    log->q_tail = &req;
    while (!req.done) {
        if (!log->committing) {
            /* Become the leader: take everything queued so far and commit it as one
             * transaction, while later callers queue up behind for the next round. */
            struct append_req *batch = log->q_head;
            int rc;

            log->q_head = log->q_tail = NULL;
            log->committing = 1;
            pthread_mutex_unlock(&log->q_lock);

            pthread_mutex_lock(&log->db_lock);
            rc = commit_batch(log, batch);
            pthread_mutex_unlock(&log->db_lock);

            pthread_mutex_lock(&log->q_lock);
            for (struct append_req *r = batch, *next; r != NULL; r = next) {
                next = r->next;
                r->rc = rc;
                if (rc < 0) {
                    r->code = sworn_err_code();
                    snprintf(r->msg, sizeof(r->msg), "%s", sworn_err_msg());
                }
                r->done = 1; /* after this store r may vanish: its owner can return */
            }
            log->committing = 0;
            pthread_cond_broadcast(&log->q_cond);
        } else {
            pthread_cond_wait(&log->q_cond, &log->q_lock);
        }
    }
    pthread_mutex_unlock(&log->q_lock);
    if (req.rc < 0)
        return sworn_err_set(req.code, "%s", req.msg);
    *first_index = req.first_index;
    return 0;
}

uint64_t sworn_log_size(struct sworn_log *log)
{
    uint64_t n;

    pthread_mutex_lock(&log->db_lock);
    n = log->next_index;
    pthread_mutex_unlock(&log->db_lock);
    return n;
}

uint64_t sworn_log_tree_size(struct sworn_log *log)
{
    uint64_t n;

    pthread_mutex_lock(&log->db_lock);
    n = log->tree_size;
    pthread_mutex_unlock(&log->db_lock);
    return n;
}

int sworn_log_integrate(struct sworn_log *log, uint64_t *tree_size)
{
    int rc;

    pthread_mutex_lock(&log->db_lock);
    rc = integrate_locked(log);
    if (rc == 0 && tree_size != NULL)
        *tree_size = log->tree_size;
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

static int root_locked(struct sworn_log *log, uint64_t size, uint8_t root[SWORN_HASH_LEN])
{
    if (size > log->tree_size)
        return sworn_err_set(SWORN_ERR_RANGE, "tree size %llu is beyond the integrated %llu",
                             (unsigned long long)size, (unsigned long long)log->tree_size);
    if (size == 0) {
        sworn_merkle_empty_root(root);
        return 0;
    }
    return subtree_hash(log, 0, size, root);
}

int sworn_log_root(struct sworn_log *log, uint64_t size, uint8_t root[SWORN_HASH_LEN])
{
    int rc;

    pthread_mutex_lock(&log->db_lock);
    rc = root_locked(log, size, root);
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

int sworn_log_prove_inclusion(struct sworn_log *log, uint64_t index, uint64_t size, uint8_t *out,
                              size_t cap, size_t *count)
{
    size_t n = 0;
    int rc = -1;

    pthread_mutex_lock(&log->db_lock);
    SWORN_ENSURE(index < size, SWORN_ERR_RANGE, "inclusion: index %llu not below size %llu",
                 (unsigned long long)index, (unsigned long long)size);
    SWORN_ENSURE(size <= log->tree_size, SWORN_ERR_RANGE,
                 "inclusion: size %llu is beyond the integrated tree of %llu",
                 (unsigned long long)size, (unsigned long long)log->tree_size);
    SWORN_GUARD(inclusion_path(log, index, 0, size, out, cap, &n));
    *count = n;
    rc = 0;
fail:
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

int sworn_log_prove_consistency(struct sworn_log *log, uint64_t old_size, uint64_t size,
                                uint8_t *out, size_t cap, size_t *count)
{
    size_t n = 0;
    int rc = -1;

    pthread_mutex_lock(&log->db_lock);
    SWORN_ENSURE(old_size > 0 && old_size <= size, SWORN_ERR_RANGE,
                 "consistency: need 0 < old size (%llu) <= size (%llu)",
                 (unsigned long long)old_size, (unsigned long long)size);
    SWORN_ENSURE(size <= log->tree_size, SWORN_ERR_RANGE,
                 "consistency: size %llu is beyond the integrated tree of %llu",
                 (unsigned long long)size, (unsigned long long)log->tree_size);
    if (old_size < size)
        SWORN_GUARD(consistency_subproof(log, old_size, 0, size, 1, out, cap, &n));
    *count = n;
    rc = 0;
fail:
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

/* Copy the one blob column of `st`'s row for index into out; `what` names it in errors. */
static int read_blob(struct sworn_log *log, sqlite3_stmt *st, const char *what, uint64_t index,
                     uint8_t *out, size_t cap, size_t *len)
{
    int rc, ret = -1;

    pthread_mutex_lock(&log->db_lock);
    sqlite3_bind_int64(st, 1, (sqlite3_int64)index);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(st, 0);
        const void *data = sqlite3_column_blob(st, 0);

        if (n > cap) {
            sworn_err_set(SWORN_ERR_RANGE, "%s %llu has %zu bytes, buffer holds %zu", what,
                          (unsigned long long)index, n, cap);
        } else {
            if (n > 0)
                memcpy(out, data, n);
            *len = n;
            ret = 0;
        }
    } else if (rc == SQLITE_DONE) {
        sworn_err_set(SWORN_ERR_NOTFOUND, "no %s %llu", what, (unsigned long long)index);
    } else {
        db_error(log, what);
    }
    sqlite3_reset(st);
    pthread_mutex_unlock(&log->db_lock);
    return ret;
}

int sworn_log_read_entry(struct sworn_log *log, uint64_t index, uint8_t *out, size_t cap,
                         size_t *len)
{
    return read_blob(log, log->st_get_entry, "entry", index, out, cap, len);
}

int sworn_log_read_receipt(struct sworn_log *log, uint64_t index, uint8_t *out, size_t cap,
                           size_t *len)
{
    return read_blob(log, log->st_get_receipt, "receipt of entry", index, out, cap, len);
}

int sworn_log_read_tile(struct sworn_log *log, uint64_t size, int level, uint64_t tile_index,
                        uint8_t *out, unsigned *width)
{
    uint64_t level_size, first, w;
    struct tile_slot *s;
    int rc = -1;

    pthread_mutex_lock(&log->db_lock);
    SWORN_ENSURE(size <= log->tree_size, SWORN_ERR_RANGE, "tile: size beyond the integrated tree");
    SWORN_ENSURE(level >= 0 && level <= SWORN_TILE_MAX_LEVEL, SWORN_ERR_ARG, "tile: bad level");
    level_size = (unsigned)level * SWORN_TILE_HEIGHT >= 64
                     ? 0
                     : size >> ((unsigned)level * SWORN_TILE_HEIGHT);
    SWORN_ENSURE(level_size > 0 && tile_index <= (level_size - 1) / SWORN_TILE_WIDTH,
                 SWORN_ERR_NOTFOUND, "tile %d/%llu is not in a tree of %llu entries", level,
                 (unsigned long long)tile_index, (unsigned long long)size);
    first = tile_index * SWORN_TILE_WIDTH;
    w = level_size - first < SWORN_TILE_WIDTH ? level_size - first : SWORN_TILE_WIDTH;
    SWORN_GUARD(load_tile(log, level, tile_index, &s));
    SWORN_ENSURE(s->width >= w, SWORN_ERR_CORRUPT, "log database: tile %d/%llu too narrow", level,
                 (unsigned long long)tile_index);
    /* Row 0 of a wider stored tile begins with the narrower tile of the older tree. */
    memcpy(out, s->hashes, (size_t)w * SWORN_HASH_LEN);
    *width = (unsigned)w;
    rc = 0;
fail:
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

/* Insert or replace the note for a tree size. Caller holds db_lock. */
static int store_checkpoint_locked(struct sworn_log *log, uint64_t size, const char *note,
                                   size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(log->db, "INSERT OR REPLACE INTO checkpoints(size, note) VALUES(?, ?)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(log, "prepare checkpoint write");
    sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    sqlite3_bind_text(st, 2, note, (int)len, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_error(log, "write checkpoint");
    return 0;
}

int sworn_log_checkpoint(struct sworn_log *log, struct sworn_note_signer *const *signers, size_t n,
                         char *out, size_t cap, size_t *len, uint64_t *size)
{
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    uint8_t root[SWORN_HASH_LEN];
    size_t note_len = 0;
    uint64_t tree_size;
    long body_len;
    int rc = -1, locked = 1;

    /* The root under the lock; the signature (an HSM or TPM round trip, possibly queued behind
     * other signatures) without it, so that appends are not held up while the key signs. The
     * tree is append-only: the root of tree_size stays what it is. */
    pthread_mutex_lock(&log->db_lock);
    SWORN_GUARD(integrate_locked(log));
    tree_size = log->tree_size;
    assert(tree_size == log->next_index); /* integrated: every stored entry is in the tree */
    SWORN_GUARD(root_locked(log, tree_size, root));
    pthread_mutex_unlock(&log->db_lock);
    locked = 0;
    body_len = sworn_checkpoint_format(log->origin, tree_size, root, body, sizeof(body));
    SWORN_GUARD(body_len < 0 ? -1 : 0);
    SWORN_GUARD(sworn_note_sign(body, (size_t)body_len, signers, n, out, cap, &note_len));
    pthread_mutex_lock(&log->db_lock);
    locked = 1;
    SWORN_GUARD(store_checkpoint_locked(log, tree_size, out, note_len));
    *len = note_len;
    if (size != NULL)
        *size = tree_size;
    rc = 0;
fail:
    if (locked)
        pthread_mutex_unlock(&log->db_lock);
    return rc;
}

int sworn_log_put_checkpoint(struct sworn_log *log, const char *note, size_t len)
{
    struct sworn_note parsed;
    struct sworn_checkpoint cp;
    uint8_t root[SWORN_HASH_LEN];
    int rc = -1;

    pthread_mutex_lock(&log->db_lock);
    SWORN_GUARD(sworn_note_parse(note, len, &parsed));
    SWORN_GUARD(sworn_checkpoint_parse(parsed.text, parsed.text_len, &cp));
    SWORN_ENSURE(strcmp(cp.origin, log->origin) == 0, SWORN_ERR_VERIFY,
                 "checkpoint origin \"%s\" is not this log's \"%s\"", cp.origin, log->origin);
    SWORN_GUARD(root_locked(log, cp.size, root));
    SWORN_ENSURE(memcmp(root, cp.root, SWORN_HASH_LEN) == 0, SWORN_ERR_VERIFY,
                 "checkpoint root for size %llu differs from the log's",
                 (unsigned long long)cp.size);
    SWORN_GUARD(store_checkpoint_locked(log, cp.size, note, len));
    rc = 0;
fail:
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

int sworn_log_get_checkpoint(struct sworn_log *log, uint64_t size, char *out, size_t cap,
                             size_t *len, uint64_t *note_size)
{
    sqlite3_stmt *st = NULL;
    const char *sql = size == UINT64_MAX
                          ? "SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1"
                          : "SELECT size, note FROM checkpoints WHERE size = ?";
    int rc, ret = -1;

    pthread_mutex_lock(&log->db_lock);
    if (sqlite3_prepare_v2(log->db, sql, -1, &st, NULL) != SQLITE_OK) {
        db_error(log, "prepare checkpoint read");
        goto done;
    }
    if (size != UINT64_MAX)
        sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        const unsigned char *note = sqlite3_column_text(st, 1);

        if (note == NULL || n + 1 > cap) {
            sworn_err_set(SWORN_ERR_RANGE, "checkpoint note longer than %zu bytes", cap);
            goto done;
        }
        memcpy(out, note, n);
        out[n] = '\0';
        *len = n;
        if (note_size != NULL)
            *note_size = (uint64_t)sqlite3_column_int64(st, 0);
        ret = 0;
    } else if (rc == SQLITE_DONE) {
        sworn_err_set(SWORN_ERR_NOTFOUND, "no checkpoint has been signed yet%s",
                      size == UINT64_MAX ? "" : " for that tree size");
    } else {
        db_error(log, "read checkpoint");
    }
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&log->db_lock);
    return ret;
}

/* One row of a walk, copied out of the database: a tree size and one or two byte columns. */
struct row_copy {
    uint64_t size;
    uint8_t *col[2];
    size_t len[2];
};

/*
 * Copy every row of sql (size, column[, column]) out of the database, then call visit for each
 * with the database lock released, so that visit may call back into the log. A non-zero return
 * from visit stops the walk and is returned.
 */
static int walk_rows(struct sworn_log *log, const char *sql, uint64_t min_size, int ncols,
                     int (*visit)(void *ctx, const struct row_copy *row), void *ctx)
{
    sqlite3_stmt *st = NULL;
    struct row_copy *all = NULL;
    size_t count = 0, cap = 0;
    int rc, ret = 0;

    pthread_mutex_lock(&log->db_lock);
    if (sqlite3_prepare_v2(log->db, sql, -1, &st, NULL) != SQLITE_OK) {
        ret = db_error(log, "prepare walk");
        goto unlock;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)(min_size > INT64_MAX ? INT64_MAX : min_size));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (count == cap) {
            struct row_copy *grown = realloc(all, (cap ? cap * 2 : 16) * sizeof(*all));
            if (grown == NULL) {
                ret = sworn_err_set(SWORN_ERR_NOMEM, "walk: out of memory");
                goto unlock;
            }
            all = grown;
            cap = cap ? cap * 2 : 16;
        }
        memset(&all[count], 0, sizeof(all[count]));
        all[count].size = (uint64_t)sqlite3_column_int64(st, 0);
        count++;
        for (int c = 0; c < ncols; c++) {
            size_t n = (size_t)sqlite3_column_bytes(st, 1 + c);
            const void *v = sqlite3_column_blob(st, 1 + c);
            uint8_t *copy = malloc(n + 1);

            if (copy == NULL) {
                ret = sworn_err_set(SWORN_ERR_NOMEM, "walk: out of memory");
                goto unlock;
            }
            if (n > 0)
                memcpy(copy, v, n);
            copy[n] = '\0'; /* text columns come out NUL-terminated */
            all[count - 1].col[c] = copy;
            all[count - 1].len[c] = n;
        }
    }
    if (rc != SQLITE_DONE)
        ret = db_error(log, "walk");
unlock:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&log->db_lock);
    for (size_t i = 0; i < count; i++) {
        if (ret == 0)
            ret = visit(ctx, &all[i]);
        free(all[i].col[0]);
        free(all[i].col[1]);
    }
    free(all);
    return ret;
}

struct checkpoint_visit {
    int (*fn)(void *arg, uint64_t size, const char *note, size_t len);
    void *arg;
};

static int visit_checkpoint(void *ctx, const struct row_copy *row)
{
    const struct checkpoint_visit *v = ctx;

    return v->fn(v->arg, row->size, (const char *)row->col[0], row->len[0]);
}

int sworn_log_each_checkpoint(struct sworn_log *log,
                              int (*fn)(void *arg, uint64_t size, const char *note, size_t len),
                              void *arg)
{
    return sworn_log_each_checkpoint_from(log, 0, fn, arg);
}

int sworn_log_each_checkpoint_from(struct sworn_log *log, uint64_t min_size,
                                   int (*fn)(void *arg, uint64_t size, const char *note,
                                             size_t len),
                                   void *arg)
{
    struct checkpoint_visit v = {fn, arg};

    return walk_rows(log, "SELECT size, note FROM checkpoints WHERE size >= ?1 ORDER BY size",
                     min_size, 1, visit_checkpoint, &v);
}

int sworn_log_put_quote(struct sworn_log *log, uint64_t size, const uint8_t *attest,
                        size_t attest_len, const uint8_t *sig, size_t sig_len)
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    if (attest_len == 0 || attest_len > SWORN_LOG_QUOTE_MAX || sig_len == 0 ||
        sig_len > SWORN_LOG_QUOTE_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "quote: attest and signature must be 1..%d bytes",
                             SWORN_LOG_QUOTE_MAX);
    pthread_mutex_lock(&log->db_lock);
    if (sqlite3_prepare_v2(log->db, "SELECT 1 FROM checkpoints WHERE size = ?", -1, &st, NULL) !=
        SQLITE_OK) {
        db_error(log, "prepare quote check");
        goto done;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sworn_err_set(SWORN_ERR_NOTFOUND, "quote: no checkpoint for tree size %llu",
                      (unsigned long long)size);
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(log->db,
                           "INSERT OR REPLACE INTO quotes(size, attest, signature) VALUES(?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        db_error(log, "prepare quote write");
        goto done;
    }
    sqlite3_bind_int64(st, 1, (sqlite3_int64)size);
    sqlite3_bind_blob(st, 2, attest, (int)attest_len, SQLITE_STATIC);
    sqlite3_bind_blob(st, 3, sig, (int)sig_len, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_error(log, "write quote");
        goto done;
    }
    rc = 0;
done:
    sqlite3_finalize(st);
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

struct quote_visit {
    int (*fn)(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
              const uint8_t *sig, size_t sig_len);
    void *arg;
};

static int visit_quote(void *ctx, const struct row_copy *row)
{
    const struct quote_visit *v = ctx;

    return v->fn(v->arg, row->size, row->col[0], row->len[0], row->col[1], row->len[1]);
}

int sworn_log_each_quote(struct sworn_log *log,
                         int (*fn)(void *arg, uint64_t size, const uint8_t *attest,
                                   size_t attest_len, const uint8_t *sig, size_t sig_len),
                         void *arg)
{
    return sworn_log_each_quote_from(log, 0, fn, arg);
}

int sworn_log_each_quote_from(struct sworn_log *log, uint64_t min_size,
                              int (*fn)(void *arg, uint64_t size, const uint8_t *attest,
                                        size_t attest_len, const uint8_t *sig, size_t sig_len),
                              void *arg)
{
    struct quote_visit v = {fn, arg};

    return walk_rows(log,
                     "SELECT size, attest, signature FROM quotes WHERE size >= ?1 ORDER BY size",
                     min_size, 2, visit_quote, &v);
}

int sworn_log_meta_set(struct sworn_log *log, const char *key, const char *value)
{
    int rc;

    if (strlen(value) >= SWORN_LOG_META_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "meta %s: value too long", key);
    pthread_mutex_lock(&log->db_lock);
    rc = meta_set_locked(log, key, value);
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}

int sworn_log_meta_get(struct sworn_log *log, const char *key, char *out, size_t cap)
{
    int rc;

    pthread_mutex_lock(&log->db_lock);
    rc = meta_get_locked(log, key, out, cap);
    pthread_mutex_unlock(&log->db_lock);
    return rc;
}
