/*
 * test_logstore_tree.c -- the log's tree across tile boundaries, kept as stored complete tiles and
 * an in-memory right edge (format 2, docs/formats.md section 8): roots, proofs and tiles at every
 * size around the level-0 and level-1 boundaries (255..257, 511..513, 65535..65537) equal the
 * RFC 9162 computation over the leaves (merkle.h), before and after a reopen; a format-1 database
 * is upgraded by open; and a dishonest edit of the stored tiles is caught at open, or, where a
 * checkpoint already covers it, by reading the exported tiles back.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "err.h"
#include "logstore.h"
#include "merkle.h"
#include "note.h"
#include "notesign.h"
#include "tiledir.h"
#include "testutil.h"

#define ORIGIN "test.sworn.example/log"
#define MAX_ENTRIES 65600
#define ENTRY_MAX 97

/* Entry i of every test: deterministic bytes of varying length (some empty). */
static uint8_t entry_bytes[MAX_ENTRIES][ENTRY_MAX];
static size_t entry_lens[MAX_ENTRIES];
static const uint8_t *entry_ptrs[MAX_ENTRIES];
static uint8_t leaves[MAX_ENTRIES][SWORN_HASH_LEN];

static int make_entries(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < MAX_ENTRIES; i++) {
        entry_lens[i] = (size_t)((i * 7919) % ENTRY_MAX);
        for (size_t k = 0; k < entry_lens[i]; k++)
            entry_bytes[i][k] = (uint8_t)(i * 31 + k * 17);
        entry_ptrs[i] = entry_bytes[i];
        sworn_merkle_leaf_hash(entry_ptrs[i], entry_lens[i], leaves[i]);
    }
    return 0;
}

/* Append entries [from, to) in one call. */
static void append_range(struct sworn_log *log, uint64_t from, uint64_t to)
{
    uint64_t first = UINT64_MAX;

    assert_int_equal(
        sworn_log_append(log, entry_ptrs + from, entry_lens + from, (size_t)(to - from), &first),
        0);
    assert_int_equal(first, from);
}

/* Hash j of tree level 8L: the root of the 256^L leaves from j * 256^L (RFC 9162 MTH). */
static void level_hash(unsigned level, uint64_t j, uint8_t out[SWORN_HASH_LEN])
{
    uint64_t span = UINT64_C(1) << (8 * level);

    sworn_merkle_root_of_leaves(leaves[j * span], span, out);
}

/*
 * The tree of `size` entries, as the log gives it, against the reference: its root, every tile
 * of every level (or, when !all_tiles, the rightmost of each level and the one before it), and
 * inclusion and consistency proofs that verify against the reference roots.
 */
static void check_tree(struct sworn_log *log, uint64_t size, int all_tiles)
{
    uint8_t root[SWORN_HASH_LEN], want[SWORN_HASH_LEN], old_root[SWORN_HASH_LEN];
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    uint8_t tile[SWORN_TILE_WIDTH * SWORN_HASH_LEN], hash[SWORN_HASH_LEN];
    size_t count;

    assert_int_equal(sworn_log_tree_size(log), sworn_log_size(log));
    assert_int_equal(sworn_log_root(log, size, root), 0);
    sworn_merkle_root_of_leaves(leaves[0], size, want);
    assert_memory_equal(root, want, SWORN_HASH_LEN);
    for (unsigned level = 0; level < 3; level++) {
        uint64_t n = size >> (8 * level), tiles = (n + SWORN_TILE_WIDTH - 1) / SWORN_TILE_WIDTH;

        for (uint64_t t = all_tiles || tiles < 2 ? 0 : tiles - 2; t < tiles; t++) {
            unsigned width = 0;
            uint64_t w = n - t * SWORN_TILE_WIDTH < SWORN_TILE_WIDTH ? n - t * SWORN_TILE_WIDTH
                                                                     : SWORN_TILE_WIDTH;

            assert_int_equal(sworn_log_read_tile(log, size, (int)level, t, tile, &width), 0);
            assert_int_equal(width, w);
            for (uint64_t j = 0; j < w; j++) {
                level_hash(level, t * SWORN_TILE_WIDTH + j, hash);
                assert_memory_equal(tile + j * SWORN_HASH_LEN, hash, SWORN_HASH_LEN);
            }
        }
        if (n == 0) {
            unsigned width = 0;

            assert_int_equal(sworn_log_read_tile(log, size, (int)level, 0, tile, &width), -1);
            assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
        }
    }
    {
        const uint64_t idx[] = {0, size / 2, size - 1, size > 256 ? 255 : 0};

        for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
            assert_int_equal(
                sworn_log_prove_inclusion(log, idx[i], size, proof, SWORN_MERKLE_MAX_PROOF, &count),
                0);
            assert_int_equal(
                sworn_merkle_verify_inclusion(idx[i], size, leaves[idx[i]], proof, count, want), 0);
        }
    }
    {
        const uint64_t olds[] = {1, size - 1, size > 256 ? 256 : 1, size > 300 ? size - 300 : 1};

        for (size_t i = 0; i < sizeof(olds) / sizeof(olds[0]); i++) {
            if (olds[i] == 0)
                continue;
            assert_int_equal(sworn_log_root(log, olds[i], old_root), 0);
            sworn_merkle_root_of_leaves(leaves[0], olds[i], hash);
            assert_memory_equal(old_root, hash, SWORN_HASH_LEN);
            assert_int_equal(sworn_log_prove_consistency(log, olds[i], size, proof,
                                                         SWORN_MERKLE_MAX_PROOF, &count),
                             0);
            assert_int_equal(
                sworn_merkle_verify_consistency(olds[i], size, old_root, want, proof, count), 0);
        }
    }
}

static void reopen(struct sworn_test_log *f)
{
    sworn_log_close(f->log);
    f->log = NULL;
    if (sworn_log_open(f->db, &f->log) != 0)
        fail_msg("reopen: %s", sworn_err_msg());
}

/* A file key for ORIGIN in the test's folder; the signer to close, the vkey to verify with. */
static void make_key(struct sworn_test_log *f, struct sworn_note_signer *signer,
                     char vkey[SWORN_NOTE_VKEY_MAX + 1])
{
    char *key = sworn_test_path(f->dir, "log.key");

    assert_int_equal(sworn_note_keygen_ed25519(ORIGIN, key, vkey, SWORN_NOTE_VKEY_MAX + 1), 0);
    assert_int_equal(sworn_note_signer_open_file(key, NULL, signer), 0);
    free(key);
}

static void checkpoint(struct sworn_log *log, struct sworn_note_signer *signer)
{
    struct sworn_note_signer *signers[1] = {signer};
    char note[4096];
    size_t len;

    assert_int_equal(sworn_log_checkpoint(log, signers, 1, note, sizeof(note), &len, NULL), 0);
}

/*
 * The tree grown one entry at a time through each tile boundary of level 0 (256, 512) and of
 * level 1 (65536), and in batches between them: at every size the roots, tiles and proofs equal
 * the reference. The log is reopened on both sides of each boundary (with and without a
 * checkpoint below, so that open rebuilds the edge from entries and tiles, and re-derives what
 * the checkpoint does not cover), every tile of the final tree is compared, and its export reads
 * back.
 */
static void test_tile_boundaries(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    static const uint64_t walks[][2] = {{250, 260}, {508, 516}, {65530, 65540}};
    static const uint64_t reopen_at[] = {255, 256, 257, 511, 512, 513, 65535, 65536, 65537};
    uint64_t size = 0;

    make_key(f, &signer, vkey);
    for (size_t w = 0; w < sizeof(walks) / sizeof(walks[0]); w++) {
        /* Batches of 4093 (a prime: never aligned to a tile) up to the walk. */
        while (size < walks[w][0]) {
            uint64_t to = size + 4093 < walks[w][0] ? size + 4093 : walks[w][0];

            append_range(f->log, size, to);
            size = to;
        }
        check_tree(f->log, size, 0);
        for (; size < walks[w][1]; size++) {
            append_range(f->log, size, size + 1);
            check_tree(f->log, size + 1, 0);
            for (size_t r = 0; r < sizeof(reopen_at) / sizeof(reopen_at[0]); r++) {
                if (reopen_at[r] != size + 1)
                    continue;
                reopen(f);
                check_tree(f->log, size + 1, 0);
                /* Every other reopen point gets a checkpoint: the next open starts from it. */
                if (r % 2 == 0)
                    checkpoint(f->log, &signer);
            }
        }
    }
    check_tree(f->log, size, 1);
    reopen(f);
    check_tree(f->log, size, 1);
    /* Older trees are served from the same tiles: their rightmost tiles are prefixes. */
    for (size_t r = 0; r < sizeof(reopen_at) / sizeof(reopen_at[0]); r++)
        check_tree(f->log, reopen_at[r], 0);
    /* The exported folder reads back: import recomputes every tile from the entry bundles. */
    {
        char *tiles = sworn_test_path(f->dir, "tiles"), *copy = sworn_test_path(f->dir, "copy.db");
        struct sworn_note_verifier verifier;
        struct sworn_log *imported = NULL;
        uint8_t root[SWORN_HASH_LEN], want[SWORN_HASH_LEN];

        checkpoint(f->log, &signer);
        assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
        assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &verifier), 0);
        if (sworn_tiledir_import(tiles, &verifier, 1, copy, &imported) != 0)
            fail_msg("the export does not read back: %s", sworn_err_msg());
        assert_int_equal(sworn_log_root(imported, size, root), 0);
        sworn_merkle_root_of_leaves(leaves[0], size, want);
        assert_memory_equal(root, want, SWORN_HASH_LEN);
        sworn_log_close(imported);
        free(tiles);
        free(copy);
    }
    sworn_note_signer_close(&signer);
}

/* ---- format 1 ---- */

/* A tile of width w in format 1's layout: rows r = 0..7 of floor(w / 2^r) hashes, end to end. */
static size_t format1_tile(unsigned level, uint64_t t, unsigned w, uint8_t *out)
{
    size_t off = 0, prev = 0;

    for (unsigned j = 0; j < w; j++)
        level_hash(level, t * SWORN_TILE_WIDTH + j, out + (size_t)j * SWORN_HASH_LEN);
    off = w;
    for (unsigned r = 1; r < 8; r++) {
        for (unsigned i = 0; i < (w >> r); i++)
            sworn_merkle_node_hash(out + (prev + 2 * i) * SWORN_HASH_LEN,
                                   out + (prev + 2 * i + 1) * SWORN_HASH_LEN,
                                   out + (off + i) * SWORN_HASH_LEN);
        prev = off;
        off += w >> r;
    }
    return off * SWORN_HASH_LEN;
}

/* Remove a database and its WAL and shared-memory files. */
static void remove_db(const char *path)
{
    char other[4096];

    unlink(path);
    snprintf(other, sizeof(other), "%s-wal", path);
    unlink(other);
    snprintf(other, sizeof(other), "%s-shm", path);
    unlink(other);
}

static void sql(sqlite3 *db, const char *text)
{
    char *msg = NULL;

    if (sqlite3_exec(db, text, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", text, msg ? msg : "error");
}

/*
 * A database as format 1 left it (docs/formats.md of that format): `entries` stored entries,
 * the tree of the first `integrated` of them as tiles of every width, partial tiles included,
 * and meta `integrated`. Made with sqlite directly, the way the format-1 code wrote it.
 */
static void make_format1(const char *path, uint64_t entries, uint64_t integrated)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    static uint8_t blob[(2 * SWORN_TILE_WIDTH) * SWORN_HASH_LEN];
    char text[256];

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sql(db, "PRAGMA journal_mode=WAL; BEGIN;"
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE entries(idx INTEGER PRIMARY KEY, data BLOB NOT NULL);"
            "CREATE TABLE tiles(level INTEGER NOT NULL, idx INTEGER NOT NULL,"
            " width INTEGER NOT NULL, hashes BLOB NOT NULL, PRIMARY KEY(level, idx))"
            " WITHOUT ROWID;"
            "CREATE TABLE checkpoints(size INTEGER PRIMARY KEY, note TEXT NOT NULL);"
            "INSERT INTO meta VALUES('format', '1'), ('origin', '" ORIGIN "');");
    snprintf(text, sizeof(text), "INSERT INTO meta VALUES('integrated', '%llu')",
             (unsigned long long)integrated);
    sql(db, text);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO entries VALUES(?, ?)", -1, &st, NULL),
                     SQLITE_OK);
    for (uint64_t i = 0; i < entries; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
        sqlite3_bind_blob(st, 2, entry_lens[i] ? (const void *)entry_ptrs[i] : "",
                          (int)entry_lens[i], SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO tiles VALUES(?, ?, ?, ?)", -1, &st, NULL),
                     SQLITE_OK);
    for (unsigned level = 0; (integrated >> (8 * level)) > 0; level++) {
        uint64_t n = integrated >> (8 * level);

        for (uint64_t t = 0; t * SWORN_TILE_WIDTH < n; t++) {
            unsigned w =
                (unsigned)(n - t * SWORN_TILE_WIDTH < SWORN_TILE_WIDTH ? n - t * SWORN_TILE_WIDTH
                                                                       : SWORN_TILE_WIDTH);
            size_t len = format1_tile(level, t, w, blob);

            sqlite3_bind_int(st, 1, (int)level);
            sqlite3_bind_int64(st, 2, (sqlite3_int64)t);
            sqlite3_bind_int(st, 3, (int)w);
            sqlite3_bind_blob(st, 4, blob, (int)len, SQLITE_STATIC);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
    }
    sqlite3_finalize(st);
    sql(db, "COMMIT");
    sqlite3_close(db);
}

/* One number out of the database: the first column of the first row of `query`. */
static long long query_int(const char *path, const char *query)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, query, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/*
 * A format-1 database opens: the first open upgrades it to format 2 in place (partial tiles and
 * meta `integrated` dropped, the complete tiles kept, the missing ones of entries the format-1
 * tree had not integrated stored), and it gives the same tree and takes appends as a new one.
 */
static void test_format1_upgraded(void **state)
{
    struct sworn_test_log *f = *state;
    /* {entries, integrated}: everything integrated; and an older writer's leftover entries. */
    static const uint64_t cases[][2] = {{300, 300}, {600, 200}, {256, 256}, {0, 0}};

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint64_t n = cases[c][0];

        remove_db(f->db);
        make_format1(f->db, n, cases[c][1]);
        assert_int_equal(sworn_log_open(f->db, &f->log), 0);
        assert_int_equal(sworn_log_size(f->log), n);
        if (n > 0)
            check_tree(f->log, n, 1);
        sworn_log_close(f->log);
        f->log = NULL;
        assert_int_equal(query_int(f->db, "SELECT value FROM meta WHERE key = 'format'"), 2);
        assert_int_equal(query_int(f->db, "SELECT count(*) FROM meta WHERE key = 'integrated'"), 0);
        assert_int_equal(query_int(f->db, "SELECT count(*) FROM tiles WHERE width <> 256"), 0);
        assert_int_equal(query_int(f->db, "SELECT count(*) FROM tiles"), (long long)(n / 256));
        reopen(f);
        append_range(f->log, n, n + 300);
        check_tree(f->log, n + 300, 1);
        sworn_log_close(f->log);
        f->log = NULL;
    }
}

/* ---- a dishonest operator ---- */

/* Position (in hashes) of row r of a stored tile. */
static unsigned row_at(unsigned r)
{
    unsigned off = 0;

    for (unsigned j = 0; j < r; j++)
        off += SWORN_TILE_WIDTH >> j;
    return off;
}

static void damage(const char *path, const char *text)
{
    sqlite3 *db = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sql(db, text);
    sqlite3_close(db);
}

/* Overwrite hash `pos` (in hashes from the blob's start) of stored tile (level, idx). */
static void forge_hash(const char *path, unsigned level, unsigned idx, unsigned pos)
{
    char text[512];

    snprintf(text, sizeof(text),
             "UPDATE tiles SET hashes = CAST(substr(hashes, 1, %u) || randomblob(32) || "
             "substr(hashes, %u) AS BLOB) WHERE level = %u AND idx = %u",
             pos * SWORN_HASH_LEN, (pos + 1) * SWORN_HASH_LEN + 1, level, idx);
    damage(path, text);
    assert_int_equal(query_int(path, "SELECT min(length(hashes)) FROM tiles"), 510 * 32);
}

/* A fresh log of 600 entries (tiles 0/0 and 0/1 stored), with a checkpoint of it or not. */
static void fresh_log(struct sworn_test_log *f, struct sworn_note_signer *signer, int with_cp)
{
    sworn_log_close(f->log);
    f->log = NULL;
    remove_db(f->db);
    assert_int_equal(sworn_log_create(f->db, ORIGIN, &f->log), 0);
    append_range(f->log, 0, 600);
    if (with_cp)
        checkpoint(f->log, signer);
    sworn_log_close(f->log);
    f->log = NULL;
}

static void open_refused(const char *path, const char *why)
{
    struct sworn_log *log = NULL;

    if (sworn_log_open(path, &log) == 0)
        fail_msg("a database with %s opened", why);
    assert_int_equal(sworn_err_code(), SWORN_ERR_CORRUPT);
}

/*
 * Edits of the stored tree: a forged hash in a tile no checkpoint covers (re-derived from the
 * entries at open), a forged top row under a checkpoint (its root no longer comes out), a forged
 * leaf hash under a checkpoint (open trusts rows the checkpoint covers, but the exported tiles no
 * longer read back), tiles beyond the entries, a partial tile stored, entries cut below a
 * checkpoint: each is refused as corrupt. Tiles deleted are re-derived and stored again.
 */
static void test_tampered_tiles(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_verifier verifier;
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    char *tiles = sworn_test_path(f->dir, "tiles"), *copy = sworn_test_path(f->dir, "copy.db");
    struct sworn_log *imported = NULL;

    make_key(f, &signer, vkey);
    assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &verifier), 0);

    /* No checkpoint: every tile is re-derived at open. A leaf hash, then a node of row 3. */
    fresh_log(f, &signer, 0);
    forge_hash(f->db, 0, 1, 77);
    open_refused(f->db, "a forged leaf hash");
    fresh_log(f, &signer, 0);
    forge_hash(f->db, 0, 0, row_at(3) + 5);
    open_refused(f->db, "a forged node hash");

    /* Under a checkpoint: a forged top row changes the root the tiles give. */
    fresh_log(f, &signer, 1);
    forge_hash(f->db, 0, 0, row_at(7) + 1);
    open_refused(f->db, "a forged top row under a checkpoint");

    /* Under a checkpoint, a forged leaf hash alone: open serves it, but the exported tile is
     * checked against the entries by whoever reads the folder (sworn-log import-tiles here,
     * sworn-verify likewise) and refused. */
    fresh_log(f, &signer, 1);
    forge_hash(f->db, 0, 1, 3);
    assert_int_equal(sworn_log_open(f->db, &f->log), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    assert_int_equal(sworn_tiledir_import(tiles, &verifier, 1, copy, &imported), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    sworn_test_rmtree(tiles);

    /* Tiles beyond the entries, a partial tile stored, a checkpoint beyond the entries. */
    fresh_log(f, &signer, 0);
    damage(f->db, "DELETE FROM entries WHERE idx >= 500");
    open_refused(f->db, "a tile beyond its entries");
    fresh_log(f, &signer, 0);
    damage(f->db, "INSERT INTO tiles SELECT 0, 2, 88, substr(hashes, 1, 88 * 32) FROM tiles"
                  " WHERE level = 0 AND idx = 0");
    open_refused(f->db, "a partial tile stored");
    fresh_log(f, &signer, 0);
    damage(f->db, "UPDATE tiles SET hashes = substr(hashes, 1, 64) WHERE level = 0 AND idx = 1");
    open_refused(f->db, "a truncated tile");
    fresh_log(f, &signer, 1);
    damage(f->db, "DELETE FROM entries WHERE idx >= 590");
    open_refused(f->db, "entries cut below a checkpoint");

    /* Tiles deleted: re-derived from the entries and stored again. */
    fresh_log(f, &signer, 1);
    damage(f->db, "DELETE FROM tiles");
    reopen(f);
    check_tree(f->log, 600, 1);
    assert_int_equal(query_int(f->db, "SELECT count(*) FROM tiles"), 2);

    sworn_note_signer_close(&signer);
    free(tiles);
    free(copy);
}

/*
 * Red team of issue 17: entries rewritten in the database. Above the newest checkpoint (and with
 * no checkpoint) every entry is re-derived at open, so a changed entry is refused. Below it the
 * stored tiles are trusted as far as the checkpoint's root: open serves the log, but the export's
 * entry bundle no longer gives the tiles and checkpoint, and whoever reads the folder refuses it.
 * A newest checkpoint row that is not a note of this log (another size, another origin, text) is
 * refused; open does not check its signature (docs/formats.md section 8, step 4): an operator
 * who writes one only gets what deleting every checkpoint gives, and the log key's later
 * checkpoints are checked against the published ones by whoever holds them.
 */
static void test_rt17_entries_rewritten(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_verifier verifier;
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    char *tiles = sworn_test_path(f->dir, "tiles"), *copy = sworn_test_path(f->dir, "copy.db");
    struct sworn_log *imported = NULL;

    make_key(f, &signer, vkey);
    assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &verifier), 0);

    /* No checkpoint: an entry of a stored tile, and one of the edge. */
    fresh_log(f, &signer, 0);
    damage(f->db, "UPDATE entries SET data = X'00' WHERE idx = 3");
    open_refused(f->db, "an entry rewritten under a stored tile");
    fresh_log(f, &signer, 0);
    damage(f->db, "UPDATE entries SET data = X'00' WHERE idx = 590");
    reopen(f); /* the edge is the entries' own: nothing to contradict, the tree is the new one */
    sworn_log_close(f->log);
    f->log = NULL;

    /* A checkpoint of 600: an entry above its last complete tile changes its root. */
    fresh_log(f, &signer, 1);
    damage(f->db, "UPDATE entries SET data = X'00' WHERE idx = 590");
    open_refused(f->db, "an entry rewritten above the newest checkpoint's last tile");

    /* Below it: open trusts the stored tile, the export does not read back. */
    fresh_log(f, &signer, 1);
    damage(f->db, "UPDATE entries SET data = X'00' WHERE idx = 3");
    assert_int_equal(sworn_log_open(f->db, &f->log), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    assert_int_equal(sworn_tiledir_import(tiles, &verifier, 1, copy, &imported), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    sworn_test_rmtree(tiles);
    sworn_log_close(f->log);
    f->log = NULL;

    /* A newest checkpoint row that is not this log's note of that size. */
    fresh_log(f, &signer, 1);
    damage(f->db, "INSERT INTO checkpoints SELECT 599, note FROM checkpoints WHERE size = 600");
    damage(f->db, "DELETE FROM checkpoints WHERE size = 600");
    open_refused(f->db, "a checkpoint stored under another size");
    fresh_log(f, &signer, 1);
    damage(f->db, "UPDATE checkpoints SET note = 'not a note' WHERE size = 600");
    open_refused(f->db, "a checkpoint that is no note");

    sworn_note_signer_close(&signer);
    free(tiles);
    free(copy);
}

/*
 * Red team of issue 17: open checks every stored tile's blob (docs/formats.md section 8, step 3),
 * not only the tiles it reads. With a checkpoint of 65600 entries, open reads level-1 tile 0 and
 * none of the level-0 tiles under it: a truncated or lengthened level-0 tile there passed open and
 * failed only when a reader (an export, a proof) came to it.
 */
static void test_rt17_tile_blobs_checked(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    static const char *const edits[] = {
        "UPDATE tiles SET hashes = substr(hashes, 1, 16288) WHERE level = 0 AND idx = 5",
        "UPDATE tiles SET hashes = hashes || zeroblob(32) WHERE level = 0 AND idx = 200",
    };

    make_key(f, &signer, vkey);
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        sworn_log_close(f->log);
        f->log = NULL;
        remove_db(f->db);
        assert_int_equal(sworn_log_create(f->db, ORIGIN, &f->log), 0);
        append_range(f->log, 0, MAX_ENTRIES);
        checkpoint(f->log, &signer);
        sworn_log_close(f->log);
        f->log = NULL;
        damage(f->db, edits[i]);
        open_refused(f->db, edits[i]);
    }
    sworn_note_signer_close(&signer);
}

/*
 * Red team of issue 17: a database whose tables were made again without their keys. Open checks
 * the entries' indices with count, max and min, and the tiles' likewise, and trusts the stored
 * tiles under the newest checkpoint; without the primary key a duplicate index could stand in for
 * a missing one (entry 101 gone, 100 twice, under a checkpoint), and the log opened and failed
 * later. Open now requires each table's primary key as the schema has it (the entries', the
 * tiles', the checkpoints').
 */
static void test_rt17_keys_required(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    static const char *const edits[] = {
        ("ALTER TABLE entries RENAME TO e0; CREATE TABLE entries(idx INTEGER, data BLOB);"
         "INSERT INTO entries SELECT * FROM e0; DROP TABLE e0;"
         "UPDATE entries SET idx = 100 WHERE idx = 101"),
        ("ALTER TABLE tiles RENAME TO t0;"
         "CREATE TABLE tiles(level INTEGER, idx INTEGER, width INTEGER, hashes BLOB);"
         "INSERT INTO tiles SELECT * FROM t0; DROP TABLE t0"),
        ("ALTER TABLE checkpoints RENAME TO c0; CREATE TABLE checkpoints(size INTEGER, note "
         "TEXT);"
         "INSERT INTO checkpoints SELECT * FROM c0; DROP TABLE c0"),
    };

    make_key(f, &signer, vkey);
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        fresh_log(f, &signer, 1);
        damage(f->db, edits[i]);
        open_refused(f->db, edits[i]);
    }
    sworn_note_signer_close(&signer);
}

/*
 * Red team of issue 17: a receipt is written in the transaction of its entry, so none lies beyond
 * the entries. One planted there (idx 600 of a log of 600) opened, and the next append of an
 * entry without a receipt (a deny) took it over: its receipt read back as the planted bytes.
 * Open refuses a receipt beyond the entries (or before the first).
 */
static void test_rt17_receipts_inside(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    static const char *const edits[] = {
        "INSERT INTO receipts(idx, data) VALUES(600, X'0a20')",
        "INSERT INTO receipts(idx, data) VALUES(-1, X'0a20')",
    };

    make_key(f, &signer, vkey);
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        fresh_log(f, &signer, 1);
        damage(f->db, edits[i]);
        open_refused(f->db, edits[i]);
    }
    sworn_note_signer_close(&signer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tile_boundaries, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_format1_upgraded, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_tampered_tiles, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_rt17_entries_rewritten, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_rt17_tile_blobs_checked, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_rt17_keys_required, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_rt17_receipts_inside, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
    };

    return cmocka_run_group_tests(tests, make_entries, NULL);
}
