/*
 * logstore.c -- the log on sqlite3 (contract and storage layout in logstore.h; the byte layout of
 * each table in docs/formats.md).
 *
 * Tile rows. A tile at level L, index t, holds 8 rows of hashes, at the offsets of a full tile:
 *     row 0: up to 256 hashes, the level-8L nodes t*256 .. (what tlog-tiles serves)
 *     row r: hash i = H(row r-1 [2i], row r-1 [2i+1]), for as many pairs as row r-1 completes
 * so every complete subtree of height 8L+r that lies in the tile is held in row r of it. The root
 * of a full tile (height 8L+8) is row 0 of the level-L+1 tile, and is not repeated in the level-L
 * tile.
 *
 * Where the tree lives. A complete tile (256 hashes in row 0) is final: it is stored once, in the
 * transaction of the append that completed it, and never rewritten. The rightmost tile of each
 * level, never complete, lives only in memory (`edge`): sworn_log_open rebuilds it from the last
 * entries (level 0) and from the stored complete tiles of the level below (level L > 0). So a
 * commit writes its entries, and a complete tile once per 256 hashes of a level, nothing more.
 *
 * Locking. db_lock serialises every use of the sqlite connection and the fields it guards
 * (next_index, the edge, the tile cache). q_lock guards the group-commit queue; a thread never
 * waits for q_lock while it holds db_lock. wal_mu (sworn_log_wal_offload) is taken inside
 * db_lock and nothing is taken inside it; the checkpointer thread's connection is its own, and
 * that thread never takes db_lock.
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
#include "note.h"

/* Hashes in all eight rows of a full tile: 256 + 128 + ... + 2. */
#define TILE_ALL_ROWS_MAX (2 * SWORN_TILE_WIDTH - 2)
/* Leaves hashed per step of recovery, to bound memory (2 MiB of leaf hashes). */
#define RECOVER_CHUNK 65536
#define TILE_CACHE_SLOTS 64
/* Levels that can hold a hash: a tree of fewer than 2^64 leaves has n >> 8L > 0 for L < 8 only. */
#define EDGE_LEVELS (64 / SWORN_TILE_HEIGHT)
/* WAL pages after which sqlite copies the WAL into the database and starts it over (its default
 * is 1000): the WAL stays within about 1 MiB, which wal_preallocate writes once. */
#define WAL_CHECKPOINT_PAGES 256
/* sworn_log_wal_offload: the checkpointer thread is woken once per WAL_WAKE_PAGES new pages from
 * WAL_CHECKPOINT_PAGES on (as often as sqlite's own checkpoints ran: each one syncs two files,
 * which the commits' syncs then queue behind on the disk), and once the WAL holds WAL_FORCE_PAGES
 * (about 4 MiB) it has the next commit copy the rest, so that the WAL starts over. */
#define WAL_WAKE_PAGES WAL_CHECKPOINT_PAGES
#define WAL_FORCE_PAGES (4 * WAL_CHECKPOINT_PAGES)
/* Before that copy, passes of the thread until one copies fewer than WAL_CATCH_UP_PAGES. */
#define WAL_CATCH_UP_PAGES 32
#define WAL_CATCH_UP_PASSES 8
#define WAL_HEADER_BYTES 32
#define WAL_FRAME_HEADER_BYTES 24

/* A stored, complete tile, as read from the database. */
struct tile_slot {
    int used;
    int level;
    uint64_t index;
    uint8_t hashes[TILE_ALL_ROWS_MAX * SWORN_HASH_LEN];
};

/* The rightmost tile of one level: never complete, never stored, rebuilt at open. */
struct edge_tile {
    uint64_t index; /* its tile number at this level: (tree size >> 8L) / 256 */
    unsigned width; /* hashes in row 0: (tree size >> 8L) % 256 */
    uint8_t hashes[TILE_ALL_ROWS_MAX * SWORN_HASH_LEN];
};

/* What to do with a tile that an edge completes. */
enum tile_done {
    TILE_INSERT,         /* an append: insert it; one already stored is a contradiction */
    TILE_CHECK_OR_STORE, /* recovery: compare with the stored tile, or store a missing one */
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
    uint64_t next_index; /* durable entries, all of them in the tree */
    int broken;          /* the edge could not be rebuilt after a failed commit: reopen */

    pthread_mutex_t q_lock;
    pthread_cond_t q_cond;
    struct append_req *q_head, *q_tail;
    int committing;

    sqlite3_stmt *st_insert_entry;
    sqlite3_stmt *st_insert_receipt;
    sqlite3_stmt *st_begin, *st_commit; /* commit_batch's, prepared once (not parsed per commit) */
    sqlite3_stmt *st_get_receipt;
    sqlite3_stmt *st_get_entry;
    sqlite3_stmt *st_entry_range;
    sqlite3_stmt *st_get_tile;
    sqlite3_stmt *st_put_tile;

    struct edge_tile edge[EDGE_LEVELS];
    struct tile_slot cache[TILE_CACHE_SLOTS];

    /* sworn_log_wal_offload: the WAL checkpointer thread, its own connection, and its signal
     * (wal_mu is a leaf lock: the commit's WAL hook takes it with db_lock held). */
    sqlite3 *wal_db;
    pthread_t wal_thread;
    int wal_started;
    pthread_mutex_t wal_mu;
    pthread_cond_t wal_cond;
    int wal_due, wal_stop;
    int wal_signalled; /* the WAL's pages when the hook last woke the thread */
    int wal_finish;    /* the thread asks the next commit to copy the rest (wal_finish_copy) */
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

/* Position of the first hash of row r in a full tile (every tile, stored or edge, uses it). */
static size_t row_offset(unsigned r)
{
    size_t off = 0;

    for (unsigned j = 0; j < r; j++)
        off += SWORN_TILE_WIDTH >> j;
    return off;
}

/* Bytes of a stored tile's blob: all eight rows of a full tile, 16320. */
#define TILE_BLOB_LEN (TILE_ALL_ROWS_MAX * SWORN_HASH_LEN)

static struct tile_slot *cache_slot(struct sworn_log *log, int level, uint64_t index)
{
    return &log->cache[(index * 67 + (uint64_t)level) % TILE_CACHE_SLOTS];
}

/*
 * Find the stored tile (level, index) in the cache or the database. OUT: *slot, valid until the
 * next tile load. Returns 0, or -1 (SWORN_ERR_NOTFOUND when absent; SWORN_ERR_CORRUPT when the
 * stored row is not a complete tile).
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

        if (w != SWORN_TILE_WIDTH || blob == NULL || n != TILE_BLOB_LEN) {
            sqlite3_reset(st);
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: tile %d/%llu has width %lld and %zu bytes; a "
                                 "stored tile is complete (width 256, %d bytes)",
                                 level, (unsigned long long)index, (long long)w, n, TILE_BLOB_LEN);
        }
        s->used = 1;
        s->level = level;
        s->index = index;
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

static void cache_clear(struct sworn_log *log)
{
    for (size_t i = 0; i < TILE_CACHE_SLOTS; i++)
        log->cache[i].used = 0;
}

/* Insert a complete tile, inside the caller's transaction. Not cached here: a rolled-back
 * transaction must not leave a tile in the cache that the database does not have. */
static int insert_tile(struct sworn_log *log, unsigned level, uint64_t index, const uint8_t *hashes)
{
    sqlite3_stmt *st = log->st_put_tile;

    sqlite3_bind_int(st, 1, (int)level);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)index);
    sqlite3_bind_int(st, 3, SWORN_TILE_WIDTH);
    sqlite3_bind_blob(st, 4, hashes, TILE_BLOB_LEN, SQLITE_STATIC);
    return step_done(log, st, "write tile");
}

/*
 * A tile the edge of `level` has just completed: insert it (an append), or compare it with the
 * stored one and store it when missing (recovery).
 */
static int tile_completed(struct sworn_log *log, unsigned level, const struct edge_tile *e,
                          enum tile_done mode)
{
    struct tile_slot *s;

    if (mode == TILE_INSERT)
        return insert_tile(log, level, e->index, e->hashes);
    if (load_tile(log, (int)level, e->index, &s) == 0) {
        if (memcmp(s->hashes, e->hashes, TILE_BLOB_LEN) != 0)
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: stored tile %u/%llu differs from the one its "
                                 "entries give",
                                 level, (unsigned long long)e->index);
        return 0;
    }
    if (sworn_err_code() != SWORN_ERR_NOTFOUND)
        return -1;
    return insert_tile(log, level, e->index, e->hashes);
}

/*
 * Add one hash to the right edge of `level`: compute the nodes it completes in rows 1..7; when it
 * fills the tile, hand the tile to tile_completed and carry its root to the next level.
 * `mode` NULL: the tile cannot fill (rebuilding an edge of fewer than 256 hashes).
 */
static int edge_push(struct sworn_log *log, unsigned level, const uint8_t hash[SWORN_HASH_LEN],
                     const enum tile_done *mode)
{
    struct edge_tile *e;
    uint8_t parent[SWORN_HASH_LEN];
    unsigned w;

    if (level >= EDGE_LEVELS)
        return sworn_err_set(SWORN_ERR_RANGE, "log tree deeper than 2^64 leaves");
    e = &log->edge[level];
    assert(e->width < SWORN_TILE_WIDTH);
    memcpy(e->hashes + (size_t)e->width * SWORN_HASH_LEN, hash, SWORN_HASH_LEN);
    w = ++e->width;
    for (unsigned r = 1; r < SWORN_TILE_HEIGHT && (w & ((1u << r) - 1)) == 0; r++) {
        size_t i = (w >> r) - 1;
        const uint8_t *below = e->hashes + (row_offset(r - 1) + 2 * i) * SWORN_HASH_LEN;

        sworn_merkle_node_hash(below, below + SWORN_HASH_LEN,
                               e->hashes + (row_offset(r) + i) * SWORN_HASH_LEN);
    }
    if (w < SWORN_TILE_WIDTH)
        return 0;
    if (mode == NULL)
        return sworn_err_set(SWORN_ERR_CORRUPT, "log: an edge tile filled while rebuilt");
    {
        const uint8_t *top = e->hashes + row_offset(SWORN_TILE_HEIGHT - 1) * SWORN_HASH_LEN;

        sworn_merkle_node_hash(top, top + SWORN_HASH_LEN, parent);
    }
    if (tile_completed(log, level, e, *mode) < 0)
        return -1;
    e->index++;
    e->width = 0;
    return edge_push(log, level + 1, parent, mode);
}

/* The number of hashes at tree level 8L in a tree of n leaves. */
static uint64_t level_size(uint64_t n, unsigned level)
{
    return level * SWORN_TILE_HEIGHT >= 64 ? 0 : n >> (level * SWORN_TILE_HEIGHT);
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

/*
 * Set the edge to that of the tree of `size` entries, from the stored entries (level 0: at most
 * 255 leaf hashes) and the stored complete tiles of the level below (level L > 0: the roots of at
 * most 255 tiles). Reads only; every stored tile it needs must be there.
 */
static int edge_rebuild(struct sworn_log *log, uint64_t size)
{
    uint8_t leaves[(SWORN_TILE_WIDTH - 1) * SWORN_HASH_LEN];

    for (unsigned level = 0; level < EDGE_LEVELS; level++) {
        struct edge_tile *e = &log->edge[level];
        uint64_t n = level_size(size, level), first;

        e->index = n / SWORN_TILE_WIDTH;
        e->width = 0;
        first = e->index * SWORN_TILE_WIDTH;
        if (level == 0) {
            SWORN_GUARD(hash_entries(log, first, n, leaves));
            for (uint64_t i = first; i < n; i++)
                SWORN_GUARD(edge_push(log, 0, leaves + (i - first) * SWORN_HASH_LEN, NULL));
            continue;
        }
        for (uint64_t i = first; i < n; i++) {
            struct tile_slot *s;
            uint8_t root[SWORN_HASH_LEN];
            const uint8_t *top;

            if (load_tile(log, (int)level - 1, i, &s) < 0) {
                if (sworn_err_code() == SWORN_ERR_NOTFOUND)
                    sworn_err_set(SWORN_ERR_CORRUPT,
                                  "log database: tile %u/%llu missing inside the tree", level - 1,
                                  (unsigned long long)i);
                return -1;
            }
            top = s->hashes + row_offset(SWORN_TILE_HEIGHT - 1) * SWORN_HASH_LEN;
            sworn_merkle_node_hash(top, top + SWORN_HASH_LEN, root);
            SWORN_GUARD(edge_push(log, level, root, NULL));
        }
    }
    return 0;
fail:
    return -1;
}

/*
 * The hash of the complete subtree of height h whose leftmost leaf is k << h: from a stored tile,
 * or from the edge. Requires that subtree to be inside the tree.
 */
static int get_node(struct sworn_log *log, unsigned h, uint64_t k, uint8_t out[SWORN_HASH_LEN])
{
    unsigned level = h / SWORN_TILE_HEIGHT, r = h % SWORN_TILE_HEIGHT;
    uint64_t tile = k >> (SWORN_TILE_HEIGHT - r);
    uint64_t pos = k & ((SWORN_TILE_WIDTH >> r) - 1);
    const struct edge_tile *e;
    struct tile_slot *s;

    if (log->broken)
        return sworn_err_set(SWORN_ERR_IO, "log: the tree was lost after a failed commit; reopen");
    if (level >= EDGE_LEVELS)
        return sworn_err_set(SWORN_ERR_RANGE, "log: node above the tree");
    e = &log->edge[level];
    if (tile == e->index) {
        if (pos >= (e->width >> r))
            return sworn_err_set(SWORN_ERR_RANGE, "log: node %u/%llu is not in the tree", h,
                                 (unsigned long long)k);
        memcpy(out, e->hashes + (row_offset(r) + pos) * SWORN_HASH_LEN, SWORN_HASH_LEN);
        return 0;
    }
    if (tile > e->index)
        return sworn_err_set(SWORN_ERR_RANGE, "log: node %u/%llu is not in the tree", h,
                             (unsigned long long)k);
    if (load_tile(log, (int)level, tile, &s) < 0) {
        if (sworn_err_code() == SWORN_ERR_NOTFOUND)
            sworn_err_set(SWORN_ERR_CORRUPT, "log database: tile %u/%llu missing inside the tree",
                          level, (unsigned long long)tile);
        return -1;
    }
    memcpy(out, s->hashes + (row_offset(r) + pos) * SWORN_HASH_LEN, SWORN_HASH_LEN);
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
    pthread_mutex_init(&log->wal_mu, NULL);
    pthread_cond_init(&log->wal_cond, NULL);
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
    {
        char pragma[64];

        snprintf(pragma, sizeof(pragma), "PRAGMA wal_autocheckpoint=%d", WAL_CHECKPOINT_PAGES);
        SWORN_GUARD(exec_sql(log, pragma));
    }
    *out = log;
    return 0;
fail:
    sworn_log_close(log);
    return -1;
}

/*
 * Make the WAL file span what `pages` frames need, by writing zeros past its end.
 * While a WAL grows, each commit's fdatasync must also make the file's new size durable (a
 * journal commit of the filesystem: the "append + fsync" baseline of bench_log, at times half
 * the rate of an overwrite); a WAL overwritten in place syncs data only, which is what sqlite
 * does once it starts the WAL over after a checkpoint. sqlite reads a WAL only up to its last
 * valid frame (a frame carries the header's salts and a running checksum), so zeros are never
 * taken for frames, and a zero header is a WAL not yet started. Best effort: on failure the WAL
 * grows as it would have. Caller holds the write lock, so no connection writes past the end.
 */
static void wal_preallocate(struct sworn_log *log, sqlite3_int64 pages)
{
    static const uint8_t zeros[65536];
    sqlite3_file *wal = NULL;
    sqlite3_stmt *st = NULL;
    sqlite3_int64 size = 0, want, page = 0;

    if (sqlite3_prepare_v2(log->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        page = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (page <= 0 || page > 65536)
        return;
    want = WAL_HEADER_BYTES + (pages + 16) * (page + WAL_FRAME_HEADER_BYTES);
    if (sqlite3_file_control(log->db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) != SQLITE_OK ||
        wal == NULL || wal->pMethods == NULL || wal->pMethods->xFileSize(wal, &size) != SQLITE_OK)
        return;
    if (size >= want)
        return;
    while (size < want) {
        int n =
            want - size < (sqlite3_int64)sizeof(zeros) ? (int)(want - size) : (int)sizeof(zeros);

        if (wal->pMethods->xWrite(wal, zeros, n, size) != SQLITE_OK)
            return;
        size += n;
    }
    (void)wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
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
    SWORN_GUARD(prepare(log, "INSERT INTO tiles(level, idx, width, hashes) VALUES(?, ?, ?, ?)",
                        &log->st_put_tile));
    SWORN_GUARD(prepare(log, "BEGIN IMMEDIATE", &log->st_begin));
    SWORN_GUARD(prepare(log, "COMMIT", &log->st_commit));
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
    SWORN_GUARD(exec_sql(log, "COMMIT"));
    SWORN_GUARD(exec_sql(log, "BEGIN IMMEDIATE"));
    wal_preallocate(log, WAL_CHECKPOINT_PAGES);
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

/*
 * The tables' primary keys as the schema makes them (red team of issue 17): the checks of open
 * (count, min and max of the indices, tiles 0..c-1 per level) and the reads by key rely on them,
 * and a database whose tables were made again without them could hold a duplicate index in the
 * place of a missing one. Each table's key columns, in key order, declared INTEGER (meta: TEXT):
 * a lone INTEGER PRIMARY KEY is the rowid (never NULL, unique), and the tiles' two are NOT NULL.
 */
static int check_keys(struct sworn_log *log)
{
    static const struct {
        const char *table, *cols[2], *type;
    } want[] = {
        {"meta", {"key", NULL}, "TEXT"},        {"entries", {"idx", NULL}, "INTEGER"},
        {"tiles", {"level", "idx"}, "INTEGER"}, {"checkpoints", {"size", NULL}, "INTEGER"},
        {"quotes", {"size", NULL}, "INTEGER"},  {"receipts", {"idx", NULL}, "INTEGER"},
    };
    sqlite3_stmt *st = NULL;

    if (sqlite3_prepare_v2(log->db,
                           "SELECT name, upper(type), \"notnull\", pk FROM pragma_table_info(?)"
                           " WHERE pk > 0 ORDER BY pk",
                           -1, &st, NULL) != SQLITE_OK)
        return db_error(log, "prepare key check");
    for (size_t t = 0; t < sizeof(want) / sizeof(want[0]); t++) {
        size_t k = 0, ncols = want[t].cols[1] != NULL ? 2 : 1;
        int rc, ok = 1;

        sqlite3_bind_text(st, 1, want[t].table, -1, SQLITE_STATIC);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 0);
            const char *type = (const char *)sqlite3_column_text(st, 1);
            int notnull = sqlite3_column_int(st, 2);

            if (k >= ncols || name == NULL || type == NULL || strcmp(name, want[t].cols[k]) != 0 ||
                strcmp(type, want[t].type) != 0 || (!notnull && ncols > 1))
                ok = 0;
            k++;
        }
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) {
            sqlite3_finalize(st);
            return db_error(log, "key check");
        }
        if (!ok || k != ncols) {
            sqlite3_finalize(st);
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: table %s has not the primary key of a sworn log",
                                 want[t].table);
        }
    }
    sqlite3_finalize(st);
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

/*
 * A receipt is written in the transaction of its entry: none lies outside 0 .. n-1. One beyond
 * would be taken over by the next entry appended without a receipt (red team of issue 17).
 * O(log n): the key's ends only.
 */
static int check_receipts(struct sworn_log *log, uint64_t n)
{
    sqlite3_stmt *st = NULL;
    sqlite3_int64 lo, hi;
    int rc, have;

    if (sqlite3_prepare_v2(
            log->db, "SELECT (SELECT min(idx) FROM receipts), (SELECT max(idx) FROM receipts)", -1,
            &st, NULL) != SQLITE_OK)
        return db_error(log, "prepare receipt check");
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(st);
        return db_error(log, "receipt check");
    }
    lo = sqlite3_column_int64(st, 0);
    hi = sqlite3_column_int64(st, 1);
    have = sqlite3_column_type(st, 0) != SQLITE_NULL;
    sqlite3_finalize(st);
    if (have && (lo < 0 || (uint64_t)hi >= n))
        return sworn_err_set(SWORN_ERR_CORRUPT,
                             "log database: receipts of entries %lld..%lld, but the entries are "
                             "0..%lld",
                             (long long)lo, (long long)hi, (long long)n - 1);
    return 0;
}

/*
 * Check what the tiles table holds against the n stored entries: at each level, complete tiles
 * 0 .. c-1 (width 256, a blob of TILE_BLOB_LEN bytes: every row, read by this open or not) and
 * nothing else, with c no more than the entries fill. OUT: *first_missing, the first
 * leaf of the first complete tile that is not stored (at any level), n when none is missing
 * (recovery stores them; a format-1 database may lack some).
 */
static int check_tiles_table(struct sworn_log *log, uint64_t n, uint64_t *first_missing)
{
    sqlite3_stmt *st = NULL;
    uint64_t stored[EDGE_LEVELS] = {0};
    int rc;

    if (sqlite3_prepare_v2(
            log->db,
            "SELECT level, count(*), min(idx), max(idx), min(width), max(width),"
            " min(length(hashes)), max(length(hashes)), max(typeof(hashes) <> 'blob')"
            " FROM tiles GROUP BY level",
            -1, &st, NULL) != SQLITE_OK)
        return db_error(log, "prepare tile count");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_int64 level = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);
        sqlite3_int64 lo = sqlite3_column_int64(st, 2), hi = sqlite3_column_int64(st, 3);
        sqlite3_int64 wmin = sqlite3_column_int64(st, 4), wmax = sqlite3_column_int64(st, 5);
        sqlite3_int64 bmin = sqlite3_column_int64(st, 6), bmax = sqlite3_column_int64(st, 7);
        sqlite3_int64 not_blob = sqlite3_column_int64(st, 8);

        /* Every tile's blob too, not only those this open reads (red team of issue 17). */
        if (level < 0 || level >= EDGE_LEVELS || lo != 0 || hi != c - 1 ||
            wmin != SWORN_TILE_WIDTH || wmax != SWORN_TILE_WIDTH || bmin != TILE_BLOB_LEN ||
            bmax != TILE_BLOB_LEN || not_blob != 0) {
            sqlite3_finalize(st);
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: tiles of level %lld are not complete tiles "
                                 "0..%lld (indices %lld..%lld, widths %lld..%lld, %lld..%lld "
                                 "bytes)",
                                 (long long)level, (long long)c - 1, (long long)lo, (long long)hi,
                                 (long long)wmin, (long long)wmax, (long long)bmin,
                                 (long long)bmax);
        }
        stored[level] = (uint64_t)c;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_error(log, "count tiles");
    *first_missing = n;
    for (unsigned level = 0; level < EDGE_LEVELS; level++) {
        uint64_t complete = level_size(n, level) / SWORN_TILE_WIDTH;

        if (stored[level] > complete)
            return sworn_err_set(SWORN_ERR_CORRUPT,
                                 "log database: %llu tiles stored at level %u, but the %llu "
                                 "entries fill only %llu",
                                 (unsigned long long)stored[level], level, (unsigned long long)n,
                                 (unsigned long long)complete);
        if (stored[level] < complete) {
            uint64_t leaf = stored[level] << ((level + 1) * SWORN_TILE_HEIGHT);

            if (leaf < *first_missing)
                *first_missing = leaf;
        }
    }
    return 0;
}

/*
 * The newest stored checkpoint, parsed: *have = 0 when there is none. A note that does not parse,
 * names another origin, or a size beyond the stored entries is corrupt.
 */
static int newest_checkpoint(struct sworn_log *log, uint64_t n, int *have,
                             struct sworn_checkpoint *cp)
{
    sqlite3_stmt *st = NULL;
    struct sworn_note *note = malloc(sizeof(*note));
    int rc, ret = -1;

    *have = 0;
    SWORN_ENSURE(note != NULL, SWORN_ERR_NOMEM, "open: out of memory");
    if (sqlite3_prepare_v2(log->db, "SELECT size, note FROM checkpoints ORDER BY size DESC LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK) {
        db_error(log, "prepare checkpoint read");
        goto fail;
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 1);
        size_t len = (size_t)sqlite3_column_bytes(st, 1);
        uint64_t size = (uint64_t)sqlite3_column_int64(st, 0);

        SWORN_ENSURE(text != NULL && len <= SWORN_NOTE_MAX_LEN &&
                         sworn_note_parse(text, len, note) == 0 &&
                         sworn_checkpoint_parse(note->text, note->text_len, cp) == 0,
                     SWORN_ERR_CORRUPT, "log database: the checkpoint of size %llu does not parse",
                     (unsigned long long)size);
        SWORN_ENSURE(cp->size == size && strcmp(cp->origin, log->origin) == 0, SWORN_ERR_CORRUPT,
                     "log database: the checkpoint stored as size %llu is of size %llu for "
                     "\"%s\"",
                     (unsigned long long)size, (unsigned long long)cp->size, cp->origin);
        SWORN_ENSURE(size <= n, SWORN_ERR_CORRUPT,
                     "log database: a checkpoint of %llu entries, but only %llu are stored",
                     (unsigned long long)size, (unsigned long long)n);
        cp->extensions = NULL; /* it pointed into the statement's row */
        *have = 1;
    } else if (rc != SQLITE_DONE) {
        db_error(log, "read checkpoint");
        goto fail;
    }
    ret = 0;
fail:
    sqlite3_finalize(st);
    free(note);
    return ret;
}

static int root_locked(struct sworn_log *log, uint64_t size, uint8_t root[SWORN_HASH_LEN]);

/*
 * Recovery, inside open's transaction: rebuild the edge, and re-derive from the entries every
 * tile that is missing (stored now) or that no checkpoint covers yet (compared with the stored
 * one). Below the newest checkpoint the stored tiles are trusted as far as its root, which is
 * recomputed from them and compared.
 */
static int recover_tree(struct sworn_log *log)
{
    uint64_t n = log->next_index, from = 0;
    struct sworn_checkpoint cp;
    enum tile_done mode = TILE_CHECK_OR_STORE;
    uint8_t *leaves = NULL, root[SWORN_HASH_LEN];
    int have_cp;

    SWORN_GUARD(check_tiles_table(log, n, &from));
    SWORN_GUARD(newest_checkpoint(log, n, &have_cp, &cp));
    {
        uint64_t covered = have_cp ? cp.size - cp.size % SWORN_TILE_WIDTH : 0;

        if (covered < from)
            from = covered;
    }
    from -= from % SWORN_TILE_WIDTH;
    SWORN_GUARD(edge_rebuild(log, from));
    leaves = malloc((size_t)RECOVER_CHUNK * SWORN_HASH_LEN);
    SWORN_ENSURE(leaves != NULL, SWORN_ERR_NOMEM, "open: out of memory");
    while (from < n) {
        uint64_t k = n - from < RECOVER_CHUNK ? n - from : RECOVER_CHUNK;

        SWORN_GUARD(hash_entries(log, from, from + k, leaves));
        for (uint64_t i = 0; i < k; i++)
            SWORN_GUARD(edge_push(log, 0, leaves + i * SWORN_HASH_LEN, &mode));
        from += k;
    }
    if (have_cp) {
        SWORN_GUARD(root_locked(log, cp.size, root));
        SWORN_ENSURE(memcmp(root, cp.root, SWORN_HASH_LEN) == 0, SWORN_ERR_CORRUPT,
                     "log database: the stored tiles give another root for size %llu than its "
                     "checkpoint",
                     (unsigned long long)cp.size);
    }
    free(leaves);
    return 0;
fail:
    free(leaves);
    return -1;
}

/*
 * Format 1 stored every tile, partial ones too, rewritten on each commit, and the tree size in
 * meta `integrated`. Its complete tiles are format 2's: keep them, drop the rest (recovery
 * rebuilds and stores whatever is missing). Inside open's transaction.
 */
static int upgrade_from_format_1(struct sworn_log *log)
{
    SWORN_GUARD(exec_sql(log, "DELETE FROM tiles WHERE width <> 256;"
                              "DELETE FROM meta WHERE key = 'integrated';"));
    return meta_set_locked(log, "format", "2");
fail:
    return -1;
}

int sworn_log_open(const char *db_path, struct sworn_log **out)
{
    struct sworn_log *log = NULL;
    uint64_t version;
    int in_txn = 0;

    SWORN_GUARD(open_db(db_path, 0, &log));
    /* One write transaction for the checks and the repairs: another process appending meanwhile
     * would make the entries and the tiles disagree from one statement to the next. */
    SWORN_GUARD(exec_sql(log, "BEGIN IMMEDIATE"));
    in_txn = 1;
    if (meta_get_u64(log, "format", &version) < 0) {
        sworn_err_set(SWORN_ERR_FORMAT, "%s is not a sworn log database", db_path);
        goto fail;
    }
    SWORN_ENSURE(version == 1 || version == SWORN_LOG_FORMAT_VERSION, SWORN_ERR_FORMAT,
                 "log database %s has format %llu, this build reads 1 (upgraded) and %d", db_path,
                 (unsigned long long)version, SWORN_LOG_FORMAT_VERSION);
    wal_preallocate(log, WAL_CHECKPOINT_PAGES);
    SWORN_GUARD(meta_get_locked(log, "origin", log->origin, sizeof(log->origin)));
    SWORN_GUARD(exec_sql(log, QUOTES_TABLE_SQL));
    if (version == 1)
        SWORN_GUARD(upgrade_from_format_1(log));
    SWORN_GUARD(check_keys(log));
    SWORN_GUARD(count_entries(log, &log->next_index));
    SWORN_GUARD(check_receipts(log, log->next_index));
    SWORN_GUARD(prepare_all(log));
    SWORN_GUARD(recover_tree(log));
    SWORN_GUARD(exec_sql(log, "COMMIT"));
    *out = log;
    return 0;
fail:
    if (in_txn)
        (void)sqlite3_exec(log->db, "ROLLBACK", NULL, NULL, NULL);
    sworn_log_close(log);
    return -1;
}

/*
 * The WAL hook of the main connection once the WAL is offloaded (it replaces sqlite's
 * wal_autocheckpoint): called by the committing thread, with db_lock held, after each commit with
 * the pages now in the WAL. It only wakes the checkpointer thread.
 */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
    struct sworn_log *log = arg;

    (void)db;
    (void)name;
    if (pages < WAL_CHECKPOINT_PAGES)
        return SQLITE_OK;
    pthread_mutex_lock(&log->wal_mu);
    /* Once per WAL_WAKE_PAGES new pages: what commits added during a copy waits for the next
     * wake, rather than waking the thread at every commit. */
    if (pages < log->wal_signalled || pages >= log->wal_signalled + WAL_WAKE_PAGES) {
        log->wal_signalled = pages;
        log->wal_due = 1;
        pthread_cond_signal(&log->wal_cond);
    }
    pthread_mutex_unlock(&log->wal_mu);
    return SQLITE_OK;
}

/* fdatasync the database file of db (best effort: a failure shows again at the next checkpoint,
 * whose own sync sqlite checks). */
static void db_file_sync(sqlite3 *db)
{
    sqlite3_file *f = NULL;

    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK && f != NULL &&
        f->pMethods != NULL)
        (void)f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
}

/* One PASSIVE checkpoint of the thread's connection, then a sync of the database file: a copy
 * that a commit overtook leaves the database unsynced (sqlite syncs it only when a copy reaches
 * the end of the WAL), and the commit's copy would then sync all of it. OUT: *in_wal, the
 * WAL's pages, *copied, how many of them are copied (0 and 0 on failure). */
static void wal_copy(struct sworn_log *log, int *in_wal, int *copied)
{
    if (sqlite3_wal_checkpoint_v2(log->wal_db, "main", SQLITE_CHECKPOINT_PASSIVE, in_wal, copied) !=
        SQLITE_OK) {
        *in_wal = *copied = 0;
        return;
    }
    if (*in_wal > 0)
        db_file_sync(log->wal_db);
}

/*
 * Called by a commit, with db_lock held, right after it is durable: when the checkpointer thread
 * asked, copy the rest of the WAL on the main connection (no other commit can run now, so the
 * copy reaches the end of the WAL and the next commit starts it over). The thread copied and
 * synced the rest just before, so this is the pages of the last few commits and two short
 * syncs. A copy that fails (the thread is copying at this moment: SQLITE_BUSY) is asked of the
 * next commit again. Why the commit and not the thread under db_lock: the commits retake db_lock
 * at once, one after the other, and a thread waiting for it was kept out for tens of
 * milliseconds while the WAL grew by as much again, then held every commit up to copy that.
 */
static void wal_finish_copy(struct sworn_log *log)
{
    int asked;

    pthread_mutex_lock(&log->wal_mu);
    asked = log->wal_finish;
    log->wal_finish = 0;
    pthread_mutex_unlock(&log->wal_mu);
    if (asked && sqlite3_wal_checkpoint_v2(log->db, "main", SQLITE_CHECKPOINT_PASSIVE, NULL,
                                           NULL) != SQLITE_OK) {
        pthread_mutex_lock(&log->wal_mu);
        log->wal_finish = 1;
        pthread_mutex_unlock(&log->wal_mu);
    }
}

/*
 * The checkpointer thread: a PASSIVE checkpoint on its own connection each time the hook says
 * the WAL is due. PASSIVE copies what is committed and waits for no one: a commit running at the
 * same time goes on. sqlite starts the WAL over only at a transaction that begins when the WAL is
 * wholly copied; under a steady stream of commits the next one has always begun before the copy
 * ends, so the WAL would grow without end. So once it holds WAL_FORCE_PAGES, the thread catches
 * up and asks the next commit to copy the rest (wal_finish_copy): one short hold (two syncs of a
 * few pages) per WAL_FORCE_PAGES pages, where sqlite's own checkpoint held every commit for a
 * copy of WAL_CHECKPOINT_PAGES pages and its syncs, four times as often. A failed checkpoint is
 * tried again at the next wake; meanwhile the WAL only grows.
 */
static void *wal_thread_main(void *arg)
{
    struct sworn_log *log = arg;

    pthread_mutex_lock(&log->wal_mu);
    for (;;) {
        int in_wal = 0, copied = 0;

        while (!log->wal_due && !log->wal_stop)
            pthread_cond_wait(&log->wal_cond, &log->wal_mu);
        if (log->wal_stop)
            break;
        log->wal_due = 0;
        pthread_mutex_unlock(&log->wal_mu);
        wal_copy(log, &in_wal, &copied);
        if (in_wal >= WAL_FORCE_PAGES) {
            /* Catch up until a pass finds little new (large commits add many pages during one
             * copy), so that the commit's copy is of a few pages. */
            for (int i = 0; i < WAL_CATCH_UP_PASSES; i++) {
                int before = copied;

                wal_copy(log, &in_wal, &copied);
                if (in_wal == 0 || copied - before < WAL_CATCH_UP_PAGES)
                    break;
            }
            pthread_mutex_lock(&log->wal_mu);
            log->wal_finish = 1;
            continue;
        }
        pthread_mutex_lock(&log->wal_mu);
    }
    pthread_mutex_unlock(&log->wal_mu);
    return NULL;
}

int sworn_log_wal_offload(struct sworn_log *log)
{
    const char *path = sqlite3_db_filename(log->db, "main");
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;

    if (log->wal_started)
        return 0;
    if (path == NULL || path[0] == '\0')
        return sworn_err_set(SWORN_ERR_ARG, "log: no database file to checkpoint");
    if (sqlite3_open_v2(path, &log->wal_db, flags, NULL) != SQLITE_OK) {
        sworn_err_set(SWORN_ERR_IO, "log database %s: checkpointer connection: %s", path,
                      log->wal_db ? sqlite3_errmsg(log->wal_db) : "cannot open");
        goto fail;
    }
    sqlite3_extended_result_codes(log->wal_db, 1);
    sqlite3_busy_timeout(log->wal_db, 10000);
    /* The checkpoint syncs the WAL before it copies and the database after, as the main
     * connection's own checkpoints did. */
    if (sqlite3_exec(log->wal_db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK) {
        sworn_err_set(SWORN_ERR_IO, "log database %s: checkpointer connection: %s", path,
                      sqlite3_errmsg(log->wal_db));
        goto fail;
    }
    if (pthread_create(&log->wal_thread, NULL, wal_thread_main, log) != 0) {
        sworn_err_set(SWORN_ERR_IO, "log: cannot start the WAL checkpointer thread");
        goto fail;
    }
    log->wal_started = 1;
    pthread_mutex_lock(&log->db_lock);
    /* The WAL now spans up to WAL_FORCE_PAGES and a commit's pages past it (best effort). */
    if (exec_sql(log, "BEGIN IMMEDIATE") == 0) {
        wal_preallocate(log, WAL_FORCE_PAGES + WAL_WAKE_PAGES);
        (void)exec_sql(log, "COMMIT");
    }
    sqlite3_wal_hook(log->db, wal_hook, log);
    pthread_mutex_unlock(&log->db_lock);
    return 0;
fail:
    sqlite3_close(log->wal_db);
    log->wal_db = NULL;
    return -1;
}

void sworn_log_close(struct sworn_log *log)
{
    if (log == NULL)
        return;
    if (log->wal_started) {
        pthread_mutex_lock(&log->wal_mu);
        log->wal_stop = 1;
        pthread_cond_signal(&log->wal_cond);
        pthread_mutex_unlock(&log->wal_mu);
        pthread_join(log->wal_thread, NULL);
    }
    /* Before the main connection: the last connection to close copies the WAL back and
     * removes it. */
    if (log->wal_db != NULL)
        sqlite3_close(log->wal_db);
    sqlite3_finalize(log->st_insert_entry);
    sqlite3_finalize(log->st_get_entry);
    sqlite3_finalize(log->st_insert_receipt);
    sqlite3_finalize(log->st_get_receipt);
    sqlite3_finalize(log->st_entry_range);
    sqlite3_finalize(log->st_get_tile);
    sqlite3_finalize(log->st_put_tile);
    sqlite3_finalize(log->st_begin);
    sqlite3_finalize(log->st_commit);
    if (log->db != NULL)
        sqlite3_close(log->db);
    pthread_mutex_destroy(&log->db_lock);
    pthread_mutex_destroy(&log->q_lock);
    pthread_cond_destroy(&log->q_cond);
    pthread_mutex_destroy(&log->wal_mu);
    pthread_cond_destroy(&log->wal_cond);
    free(log);
}

const char *sworn_log_origin(const struct sworn_log *log)
{
    return log->origin;
}

/*
 * Write every entry of a batch of requests, and hash them into the tree, in one transaction: the
 * entries, their receipts and the tiles they complete are made durable by one WAL fsync, and the
 * edge in memory follows the commit, so the tree always describes exactly the durable entries.
 * On failure the edge is rebuilt from the database as the rollback left it. Caller holds db_lock.
 */
static int commit_batch(struct sworn_log *log, struct append_req *batch)
{
    uint64_t first = log->next_index, next = first;
    enum tile_done mode = TILE_INSERT;
    int in_txn = 0;

    SWORN_ENSURE(!log->broken, SWORN_ERR_IO,
                 "log: the tree was lost after a failed commit; reopen the log");
    SWORN_GUARD(step_done(log, log->st_begin, "BEGIN IMMEDIATE"));
    in_txn = 1;
    for (struct append_req *r = batch; r != NULL; r = r->next) {
        r->first_index = next;
        for (size_t i = 0; i < r->n; i++) {
            sqlite3_stmt *st = log->st_insert_entry;
            uint8_t leaf[SWORN_HASH_LEN];

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
            sworn_merkle_leaf_hash(r->entries[i], r->lens[i], leaf);
            SWORN_GUARD(edge_push(log, 0, leaf, &mode));
            next++;
        }
    }
    SWORN_GUARD(step_done(log, log->st_commit, "COMMIT"));
    log->next_index = next;
    if (log->wal_started)
        wal_finish_copy(log);
    return 0;
fail:
    if (in_txn) {
        char msg[SWORN_ERR_MSG_MAX];
        enum sworn_err_code code = sworn_err_code();

        snprintf(msg, sizeof(msg), "%s", sworn_err_msg());
        (void)sqlite3_exec(log->db, "ROLLBACK", NULL, NULL, NULL);
        cache_clear(log);
        if (edge_rebuild(log, first) < 0)
            log->broken = 1;
        sworn_err_set(code, "%s", msg);
    }
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
    /* Every durable entry is in the tree: an append hashes its entries in before it commits. */
    return sworn_log_size(log);
}

int sworn_log_integrate(struct sworn_log *log, uint64_t *tree_size)
{
    if (tree_size != NULL)
        *tree_size = sworn_log_size(log);
    return 0;
}

static int root_locked(struct sworn_log *log, uint64_t size, uint8_t root[SWORN_HASH_LEN])
{
    if (size > log->next_index)
        return sworn_err_set(SWORN_ERR_RANGE, "tree size %llu is beyond the tree of %llu",
                             (unsigned long long)size, (unsigned long long)log->next_index);
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
    SWORN_ENSURE(size <= log->next_index, SWORN_ERR_RANGE,
                 "inclusion: size %llu is beyond the tree of %llu", (unsigned long long)size,
                 (unsigned long long)log->next_index);
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
    SWORN_ENSURE(size <= log->next_index, SWORN_ERR_RANGE,
                 "consistency: size %llu is beyond the tree of %llu", (unsigned long long)size,
                 (unsigned long long)log->next_index);
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
    uint64_t n, first, w;
    const struct edge_tile *e;
    struct tile_slot *s;
    int rc = -1;

    pthread_mutex_lock(&log->db_lock);
    SWORN_ENSURE(!log->broken, SWORN_ERR_IO,
                 "log: the tree was lost after a failed commit; reopen the log");
    SWORN_ENSURE(size <= log->next_index, SWORN_ERR_RANGE, "tile: size beyond the tree");
    SWORN_ENSURE(level >= 0 && level <= SWORN_TILE_MAX_LEVEL, SWORN_ERR_ARG, "tile: bad level");
    n = level_size(size, (unsigned)level);
    SWORN_ENSURE(n > 0 && tile_index <= (n - 1) / SWORN_TILE_WIDTH, SWORN_ERR_NOTFOUND,
                 "tile %d/%llu is not in a tree of %llu entries", level,
                 (unsigned long long)tile_index, (unsigned long long)size);
    first = tile_index * SWORN_TILE_WIDTH;
    w = n - first < SWORN_TILE_WIDTH ? n - first : SWORN_TILE_WIDTH;
    /* Row 0 of a tile of an older tree is the first hashes of the tile of the current tree: the
     * stored one if complete by now, else the edge. */
    e = &log->edge[level];
    if (tile_index == e->index) {
        assert(w <= e->width);
        memcpy(out, e->hashes, (size_t)w * SWORN_HASH_LEN);
    } else {
        SWORN_GUARD(load_tile(log, level, tile_index, &s));
        memcpy(out, s->hashes, (size_t)w * SWORN_HASH_LEN);
    }
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
    tree_size = log->next_index;
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
