/*
 * test_logstore.c -- the sqlite3 log: roots and proofs against a from-scratch recomputation, tiles
 * across level boundaries, group commit under concurrent appenders, and refusals (oversized
 * entries, out-of-range requests, a damaged database). The external vectors are in
 * test_log_vectors.c, so that these run where ../shared/vectors is absent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "encoding.h"
#include "err.h"
#include "logstore.h"
#include "merkle.h"
#include "notesign.h"
#include "tiledir.h"
#include "testutil.h"

/* Deterministic entry content of a given index, of varying length (some empty). */
static size_t make_entry(uint64_t i, uint8_t *out)
{
    size_t len = (size_t)((i * 7919) % 97);

    for (size_t k = 0; k < len; k++)
        out[k] = (uint8_t)(i * 31 + k * 17);
    return len;
}

/*
 * A tree that crosses the level-1 and level-2 tile boundaries (256 and 65536 leaves), built in
 * batches of awkward sizes: every root equals a from-scratch recomputation, and every proof
 * checked verifies.
 */
static void test_large_tree_against_recomputation(void **state)
{
    struct sworn_test_log *f = *state;
    const uint64_t total = 66000;
    const size_t batches[] = {1, 255, 1, 256, 3000, 61953, 534};
    uint8_t *leaves = malloc(total * SWORN_HASH_LEN);
    uint8_t *data = malloc(total * 100);
    const uint8_t **ptrs = malloc(total * sizeof(*ptrs));
    size_t *lens = malloc(total * sizeof(*lens));
    uint64_t next = 0;
    uint8_t root[SWORN_HASH_LEN], want[SWORN_HASH_LEN];
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t count;

    for (uint64_t i = 0; i < total; i++) {
        ptrs[i] = data + i * 100;
        lens[i] = make_entry(i, data + i * 100);
        sworn_merkle_leaf_hash(ptrs[i], lens[i], leaves + i * SWORN_HASH_LEN);
    }
    for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
        uint64_t first;

        assert_int_equal(sworn_log_append(f->log, ptrs + next, lens + next, batches[b], &first), 0);
        assert_int_equal(first, next);
        next += batches[b];
        assert_int_equal(sworn_log_integrate(f->log, NULL), 0);
        assert_int_equal(sworn_log_tree_size(f->log), next);
        assert_int_equal(sworn_log_root(f->log, next, root), 0);
        sworn_merkle_root_of_leaves(leaves, next, want);
        assert_memory_equal(root, want, SWORN_HASH_LEN);
    }
    assert_int_equal(next, total);
    /* Old tree sizes stay provable: their roots come from the same stored tiles. */
    const uint64_t sizes[] = {1, 2, 255, 256, 257, 511, 512, 65535, 65536, 65537, total};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        uint64_t size = sizes[s];

        assert_int_equal(sworn_log_root(f->log, size, root), 0);
        sworn_merkle_root_of_leaves(leaves, size, want);
        assert_memory_equal(root, want, SWORN_HASH_LEN);
        for (uint64_t idx = 0; idx < size; idx += 1 + size / 7) {
            assert_int_equal(
                sworn_log_prove_inclusion(f->log, idx, size, proof, SWORN_MERKLE_MAX_PROOF, &count),
                0);
            assert_int_equal(sworn_merkle_verify_inclusion(idx, size, leaves + idx * SWORN_HASH_LEN,
                                                           proof, count, root),
                             0);
        }
        for (size_t o = 0; o < s; o++) {
            uint8_t old_root[SWORN_HASH_LEN];

            assert_int_equal(sworn_log_root(f->log, sizes[o], old_root), 0);
            assert_int_equal(sworn_log_prove_consistency(f->log, sizes[o], size, proof,
                                                         SWORN_MERKLE_MAX_PROOF, &count),
                             0);
            assert_int_equal(
                sworn_merkle_verify_consistency(sizes[o], size, old_root, root, proof, count), 0);
        }
    }
    /* Reopening reads the same tree back. */
    sworn_log_close(f->log);
    assert_int_equal(sworn_log_open(f->db, &f->log), 0);
    assert_int_equal(sworn_log_tree_size(f->log), total);
    assert_int_equal(sworn_log_root(f->log, total, root), 0);
    sworn_merkle_root_of_leaves(leaves, total, want);
    assert_memory_equal(root, want, SWORN_HASH_LEN);
    free(leaves);
    free(data);
    free(ptrs);
    free(lens);
}

struct appender {
    struct sworn_log *log;
    int id;
    uint64_t first[200];
    int failed;
};

static void *append_thread(void *arg)
{
    struct appender *a = arg;

    for (int i = 0; i < 200; i++) {
        char text[64];
        const uint8_t *p = (const uint8_t *)text;
        size_t len = (size_t)snprintf(text, sizeof(text), "thread-%d-entry-%d", a->id, i);

        if (sworn_log_append(a->log, &p, &len, 1, &a->first[i]) != 0)
            a->failed = 1;
    }
    return NULL;
}

/* Eight threads append at once: every entry lands exactly once, at the index it was given. */
static void test_group_commit_concurrent(void **state)
{
    struct sworn_test_log *f = *state;
    struct appender a[8];
    pthread_t t[8];
    uint8_t seen[1600] = {0};

    for (int i = 0; i < 8; i++) {
        a[i] = (struct appender){.log = f->log, .id = i};
        assert_int_equal(pthread_create(&t[i], NULL, append_thread, &a[i]), 0);
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(sworn_log_size(f->log), 1600);
    for (int i = 0; i < 8; i++) {
        assert_false(a[i].failed);
        for (int k = 0; k < 200; k++) {
            char want[64], got[64];
            size_t len;
            uint64_t idx = a[i].first[k];

            assert_true(idx < 1600);
            assert_int_equal(seen[idx], 0);
            seen[idx] = 1;
            snprintf(want, sizeof(want), "thread-%d-entry-%d", i, k);
            assert_int_equal(sworn_log_read_entry(f->log, idx, (uint8_t *)got, sizeof(got), &len),
                             0);
            assert_int_equal(len, strlen(want));
            assert_memory_equal(got, want, len);
        }
    }
    assert_int_equal(sworn_log_integrate(f->log, NULL), 0);
    assert_int_equal(sworn_log_tree_size(f->log), 1600);
}

/* Entries of 65535 bytes are accepted; 65536 bytes is refused and stores nothing of the call. */
static void test_entry_size_limit(void **state)
{
    struct sworn_test_log *f = *state;
    uint8_t *big = calloc(1, 65536);
    const uint8_t *ptrs[2] = {big, big};
    size_t lens[2] = {10, 65536};
    uint64_t first = 12345;

    assert_int_equal(sworn_log_append(f->log, ptrs, lens, 2, &first), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(first, 12345);
    assert_int_equal(sworn_log_size(f->log), 0);
    lens[1] = 65535;
    assert_int_equal(sworn_log_append(f->log, ptrs, lens, 2, &first), 0);
    assert_int_equal(first, 0);
    sworn_test_append(f->log, "", 0, 2);
    assert_int_equal(sworn_log_integrate(f->log, NULL), 0);
    assert_int_equal(sworn_log_append(f->log, ptrs, lens, 0, &first), -1);
    free(big);
}

/* Proof and root requests outside the tree are refused with SWORN_ERR_RANGE, never answered. */
static void test_out_of_range_requests(void **state)
{
    struct sworn_test_log *f = *state;
    uint8_t proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN], root[SWORN_HASH_LEN];
    size_t count;

    for (int i = 0; i < 5; i++)
        sworn_test_append(f->log, "x", 1, (uint64_t)i);
    /* An acknowledged append is already in the tree; a size beyond it is not. */
    assert_int_equal(sworn_log_tree_size(f->log), 5);
    assert_int_equal(sworn_log_root(f->log, 5, root), 0);
    assert_int_equal(sworn_log_root(f->log, 6, root), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_log_prove_inclusion(f->log, 5, 5, proof, SWORN_MERKLE_MAX_PROOF, &count),
                     -1);
    assert_int_equal(sworn_log_prove_inclusion(f->log, 0, 6, proof, SWORN_MERKLE_MAX_PROOF, &count),
                     -1);
    assert_int_equal(
        sworn_log_prove_consistency(f->log, 0, 5, proof, SWORN_MERKLE_MAX_PROOF, &count), -1);
    assert_int_equal(
        sworn_log_prove_consistency(f->log, 4, 3, proof, SWORN_MERKLE_MAX_PROOF, &count), -1);
    assert_int_equal(
        sworn_log_prove_consistency(f->log, 5, 5, proof, SWORN_MERKLE_MAX_PROOF, &count), 0);
    assert_int_equal(count, 0);
    /* A proof that does not fit the caller's buffer is an error, not a truncated proof. */
    assert_int_equal(sworn_log_prove_inclusion(f->log, 0, 5, proof, 1, &count), -1);
}

static void damage(const char *db, const char *sql)
{
    sqlite3 *h;

    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* A database with a gap in its entries, or a tile of the wrong size, is refused as corrupt. */
static void test_damaged_database_refused(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_log *again = NULL;

    for (int i = 0; i < 300; i++)
        sworn_test_append(f->log, "entry", 5, (uint64_t)i);
    assert_int_equal(sworn_log_integrate(f->log, NULL), 0);
    sworn_log_close(f->log);
    f->log = NULL;

    /* Only complete tiles are stored (format 2): tile 0/1 of 300 entries lives in memory. A
     * stored tile of the wrong size is found by open, which reads it to rebuild the tree. */
    damage(f->db, "UPDATE tiles SET hashes = substr(hashes, 1, 64) WHERE level = 0 AND idx = 0");
    assert_int_equal(sworn_log_open(f->db, &again), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_CORRUPT);
    assert_null(again);

    damage(f->db, "DELETE FROM entries WHERE idx = 17");
    assert_int_equal(sworn_log_open(f->db, &again), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_CORRUPT);

    damage(f->db, "UPDATE meta SET value = '99' WHERE key = 'format'");
    assert_int_equal(sworn_log_open(f->db, &again), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
}

/* Creating over an existing file is refused; opening a file that is not a log is refused. */
static void test_create_and_open_refusals(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_log *other = NULL;
    char *junk = sworn_test_path(f->dir, "junk.db");

    assert_int_equal(sworn_log_create(f->db, "again", &other), -1);
    assert_int_equal(sworn_log_create(junk, "", &other), -1);
    assert_int_equal(sworn_log_create(junk, "bad\norigin", &other), -1);
    sworn_test_write_file(junk, "not a database at all, just text", 32, 0600);
    assert_int_equal(sworn_log_open(junk, &other), -1);
    free(junk);
}

static int count_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                       const uint8_t *sig, size_t sig_len)
{
    int *seen = arg;

    assert_int_equal(size, 3);
    assert_int_equal(attest_len, 5);
    assert_memory_equal(attest, "ATTST", 5);
    assert_int_equal(sig_len, 3);
    assert_memory_equal(sig, "SIG", 3);
    (*seen)++;
    return 0;
}

/*
 * Quotes are stored beside their checkpoints, survive a reopen, and are exported under sworn/
 * with every checkpoint; a quote of a checkpoint that does not exist is refused.
 */
static void test_quotes_beside_checkpoints(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    char *key = sworn_test_path(f->dir, "log.key"), *tiles = sworn_test_path(f->dir, "tiles");
    char vkey[SWORN_NOTE_VKEY_MAX + 1], note[4096], *path, *data;
    size_t len;
    int seen = 0;

    assert_int_equal(sworn_note_keygen_ed25519("test.sworn.example/log", key, vkey, sizeof(vkey)),
                     0);
    assert_int_equal(sworn_note_signer_open_file(key, NULL, &signer), 0);
    for (int i = 0; i < 3; i++)
        sworn_test_append(f->log, "e", 1, (uint64_t)i);
    assert_int_equal(
        sworn_log_put_quote(f->log, 3, (const uint8_t *)"ATTST", 5, (const uint8_t *)"SIG", 3), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, NULL), 0);
    assert_int_equal(
        sworn_log_put_quote(f->log, 3, (const uint8_t *)"ATTST", 5, (const uint8_t *)"SIG", 3), 0);
    assert_int_equal(
        sworn_log_put_quote(f->log, 3, (const uint8_t *)"", 0, (const uint8_t *)"SIG", 3), -1);
    sworn_log_close(f->log);
    assert_int_equal(sworn_log_open(f->db, &f->log), 0);
    assert_int_equal(sworn_log_each_quote(f->log, count_quote, &seen), 0);
    assert_int_equal(seen, 1);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    path = sworn_test_path(tiles, "sworn/quote/3.attest");
    data = sworn_test_read_file(path, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(data, "ATTST", 5);
    free(data);
    free(path);
    path = sworn_test_path(tiles, "sworn/checkpoint/3");
    data = sworn_test_read_file(path, &len);
    assert_memory_equal(data, note, len);
    free(data);
    free(path);
    sworn_note_signer_close(&signer);
    free(key);
    free(tiles);
}

/*
 * Receipts are stored with their entries in one transaction, survive a reopen, are refused when
 * too large (and then nothing of the batch is stored), and are exported as receipts bundles
 * beside the entry bundles: a u16 length per entry, 0 for an entry without a receipt.
 */
static void test_receipts_beside_entries(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    char *key = sworn_test_path(f->dir, "log.key"), *tiles = sworn_test_path(f->dir, "tiles");
    char vkey[SWORN_NOTE_VKEY_MAX + 1], note[4096], *path, *data;
    const uint8_t *entries[3] = {(const uint8_t *)"a", (const uint8_t *)"b", (const uint8_t *)"c"};
    size_t lens[3] = {1, 1, 1}, rlens[3] = {4, 0, 2}, len;
    const uint8_t *receipts[3] = {(const uint8_t *)"RCPT", NULL, (const uint8_t *)"R2"};
    static uint8_t big[SWORN_LOG_RECEIPT_MAX + 1];
    const uint8_t *big_receipts[1] = {big};
    size_t big_lens[1] = {sizeof(big)};
    uint8_t out[SWORN_LOG_RECEIPT_MAX];
    uint64_t first = 99;
    static const uint8_t want[] = {0, 4, 'R', 'C', 'P', 'T', 0, 0, 0, 2, 'R', '2'};

    assert_int_equal(
        sworn_log_append_receipts(f->log, entries, lens, big_receipts, big_lens, 1, &first), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_log_size(f->log), 0);
    assert_int_equal(sworn_log_append_receipts(f->log, entries, lens, receipts, rlens, 3, &first),
                     0);
    assert_int_equal(first, 0);
    sworn_log_close(f->log);
    assert_int_equal(sworn_log_open(f->db, &f->log), 0);
    assert_int_equal(sworn_log_read_receipt(f->log, 0, out, sizeof(out), &len), 0);
    assert_int_equal(len, 4);
    assert_memory_equal(out, "RCPT", 4);
    assert_int_equal(sworn_log_read_receipt(f->log, 1, out, sizeof(out), &len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_int_equal(sworn_log_read_receipt(f->log, 2, out, 1, &len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);

    assert_int_equal(sworn_note_keygen_ed25519("test.sworn.example/log", key, vkey, sizeof(vkey)),
                     0);
    assert_int_equal(sworn_note_signer_open_file(key, NULL, &signer), 0);
    assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, NULL), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    path = sworn_test_path(tiles, "sworn/receipts/000.p/3");
    data = sworn_test_read_file(path, &len);
    assert_int_equal(len, sizeof(want));
    assert_memory_equal(data, want, sizeof(want));
    free(data);
    free(path);
    sworn_note_signer_close(&signer);
    free(key);
    free(tiles);
}

/* How many entries the folder path holds (0 when it holds none). */
static int entries_in(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/*
 * Review finding 13: export follows no symbolic link inside the tiles folder. A folder of it
 * replaced by a link to elsewhere stops the export, and nothing is written there; a link planted
 * at a temporary file's name or at `checkpoint` is replaced, never written through; the tiles
 * folder itself may not be a link.
 */
static void test_export_refuses_links(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    char *key = sworn_test_path(f->dir, "log.key"), *tiles = sworn_test_path(f->dir, "tiles"),
         *outside = sworn_test_path(f->dir, "outside"),
         *victim = sworn_test_path(outside, "victim");
    char vkey[SWORN_NOTE_VKEY_MAX + 1], note[4096], link[2048], cmd[8192], *data;
    size_t len;

    assert_int_equal(sworn_note_keygen_ed25519("test.sworn.example/log", key, vkey, sizeof(vkey)),
                     0);
    assert_int_equal(sworn_note_signer_open_file(key, NULL, &signer), 0);
    for (int i = 0; i < 3; i++)
        sworn_test_append(f->log, "e", 1, (uint64_t)i);
    assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, NULL), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    assert_int_equal(mkdir(outside, 0755), 0);
    sworn_test_write_file(victim, "keep", 4, 0644);
    sworn_test_append(f->log, "e", 1, 3);
    assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, NULL), 0);

    /* tile/ (and then sworn/) replaced by a link to the outside folder: refused, nothing there. */
    static const char *const folders[] = {"tile/entries", "sworn/checkpoint", "tile", "sworn"};
    for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
        snprintf(link, sizeof(link), "%s/%s", tiles, folders[i]);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' && ln -s '%s' '%s'", link, outside, link);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
        assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
        assert_int_equal(entries_in(outside), 1); /* the victim alone */
        assert_int_equal(unlink(link), 0);
    }
    /* The folder is put right: the export goes through. */
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);

    /* A link at checkpoint's temporary name, and checkpoint itself a link: replaced, the victim
     * untouched (before: written through, or refused by O_EXCL without a word). */
    snprintf(link, sizeof(link), "%s/.checkpoint.tmp.%ld", tiles, (long)getpid());
    assert_int_equal(symlink(victim, link), 0);
    snprintf(link, sizeof(link), "%s/checkpoint", tiles);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(symlink(victim, link), 0);
    sworn_test_append(f->log, "e", 1, 4);
    assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, NULL), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, tiles, NULL), 0);
    data = sworn_test_read_file(victim, &len);
    assert_int_equal(len, 4);
    assert_memory_equal(data, "keep", 4);
    free(data);
    {
        struct stat st;

        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISREG(st.st_mode));
    }

    /* The tiles folder itself a link: refused. */
    snprintf(link, sizeof(link), "%s/tiles-link", f->dir);
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, link, NULL), -1);
    assert_int_equal(entries_in(outside), 1);

    /* A link on the way to the tiles folder (before: followed, the export wrote in outside/t),
     * and a folder on the way that others may write, sticky or not (its user could rename the
     * tiles folder and put one of theirs in its place, with tiles of another tree under the
     * names an incremental export never rewrites): refused, nothing written. The tiles folder
     * itself may not even be sticky, nor (as root) another user's. */
    {
        char through[4200], open_dir[4200];
        static const unsigned modes[] = {0777, 0775, 01777};

        snprintf(through, sizeof(through), "%s/t", link);
        assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, through, NULL), -1);
        assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
        assert_int_equal(entries_in(outside), 1);
        snprintf(open_dir, sizeof(open_dir), "%s/shared", f->dir);
        assert_int_equal(mkdir(open_dir, 0755), 0);
        snprintf(through, sizeof(through), "%s/shared/tiles", f->dir);
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
            assert_int_equal(chmod(open_dir, modes[i]), 0);
            if (modes[i] & 01000) {
                assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, open_dir, NULL), -1);
                assert_non_null(strstr(sworn_err_msg(), "lets group or others add to it"));
                assert_int_equal(chmod(open_dir, 0755), 0);
                continue;
            }
            assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, through, NULL), -1);
            assert_non_null(strstr(sworn_err_msg(), "not writable by group or others"));
        }
        assert_int_equal(entries_in(open_dir), 0);
        assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, through, NULL), 0);
        if (geteuid() == 0) {
            assert_int_equal(chown(through, 65534, 65534), 0);
            assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, through, NULL), -1);
            assert_non_null(strstr(sworn_err_msg(), "owner uid 65534"));
        }
    }

    sworn_note_signer_close(&signer);
    free(key);
    free(tiles);
    free(victim);
    free(outside);
}

/*
 * An incremental export (what decisiond does after each checkpoint) leaves the folder as a full
 * export of the same checkpoint does (tiles, partial tiles, entry and receipts bundles, every
 * checkpoint and quote), plus the partial tiles of the earlier exports. Compared with diff -r.
 */
static void test_incremental_export(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    char *key = sworn_test_path(f->dir, "log.key"), *inc = sworn_test_path(f->dir, "inc");
    char *full = sworn_test_path(f->dir, "full"), vkey[SWORN_NOTE_VKEY_MAX + 1], note[4096];
    char cmd[1024];
    size_t len;
    uint64_t size, exported = 0, steps[] = {300, 512, 513, 70000};
    uint64_t next = 0;

    assert_int_equal(sworn_note_keygen_ed25519("test.sworn.example/log", key, vkey, sizeof(vkey)),
                     0);
    assert_int_equal(sworn_note_signer_open_file(key, NULL, &signer), 0);
    for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
        /* One transaction per step: the steps, not the fsyncs, are what this test is about. */
        size_t n = (size_t)(steps[k] - next);
        const uint8_t **ep = calloc(n, sizeof(*ep)), **rp = calloc(n, sizeof(*rp));
        size_t *el = calloc(n, sizeof(*el)), *rl = calloc(n, sizeof(*rl));
        char(*text)[32] = calloc(n, sizeof(*text));
        uint64_t first;

        assert_true(ep != NULL && rp != NULL && el != NULL && rl != NULL && text != NULL);
        for (size_t i = 0; i < n; i++, next++) {
            el[i] =
                (size_t)snprintf(text[i], sizeof(text[i]), "entry %llu", (unsigned long long)next);
            ep[i] = (const uint8_t *)text[i];
            rp[i] = (const uint8_t *)"RCPT!";
            rl[i] = next % 3 == 0 ? 5u : 0u;
        }
        assert_int_equal(sworn_log_append_receipts(f->log, ep, el, rp, rl, n, &first), 0);
        free(ep);
        free(rp);
        free(el);
        free(rl);
        free(text);
        assert_int_equal(sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &len, &size),
                         0);
        assert_int_equal(sworn_log_put_quote(f->log, size, (const uint8_t *)"ATTEST", 6,
                                             (const uint8_t *)"SIG", 3),
                         0);
        assert_int_equal(sworn_tiledir_export_since(f->log, size, inc, exported, &exported), 0);
        assert_int_equal(exported, steps[k]);
    }
    /* since beyond the checkpoint is refused. */
    assert_int_equal(sworn_tiledir_export_since(f->log, size, inc, size + 1, NULL), -1);
    assert_int_equal(sworn_tiledir_export(f->log, UINT64_MAX, full, NULL), 0);
    /* Every file of the full export is in the incremental one with the same bytes; the only
     * extra files are the partial tiles and bundles of the earlier, smaller trees (readers of
     * the earlier checkpoints still fetch them). */
    snprintf(cmd, sizeof(cmd),
             "diff -r %s %s > %s/diff.txt; test $? -le 1 && "
             "! grep -v '^Only in %s.*: [0-9][0-9][0-9]\\.p$' %s/diff.txt",
             inc, full, f->dir, inc, f->dir);
    assert_int_equal(system(cmd), 0);
    sworn_note_signer_close(&signer);
    free(key);
    free(inc);
    free(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_large_tree_against_recomputation, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_concurrent, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_entry_size_limit, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_requests, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_damaged_database_refused, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_create_and_open_refusals, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_export_refuses_links, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_incremental_export, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_receipts_beside_entries, sworn_test_log_setup,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_quotes_beside_checkpoints, sworn_test_log_setup,
                                        sworn_test_log_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
