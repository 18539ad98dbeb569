/*
 * logstore.h -- the append-only log on sqlite3: durable entries, the Merkle tree kept as tiles,
 * proofs, and signed checkpoints.
 *
 * Storage (one sqlite3 database, WAL journal, synchronous=FULL; docs/formats.md gives the schema):
 *   meta(key, value)              format version, origin, tool settings
 *   entries(idx, data)            entry idx, exactly the bytes appended (at most 65535)
 *   tiles(level, idx, width, hashes)  the complete tiles of the tree (C2SP tiles of height 8,
 *                                 width always 256), each written once: `hashes` holds all eight
 *                                 rows of the tile: row 0 (the 256 hashes tlog-tiles serves),
 *                                 then row r with 256 / 2^r hashes, r = 1..7
 *   checkpoints(size, note)       every signed checkpoint note, by tree size
 *   quotes(size, attest, signature)  the TPM quote of the checkpoint of that size: raw TPMS_ATTEST
 *                                 and TPMT_SIGNATURE, stored as the TPM gave them
 *   receipts(idx, data)           the receipt of entry idx, when it has one: opaque bytes
 * (decisiond stores a protobuf sworn.v1.Receipt), written in the same transaction as the entry
 * The rightmost, partial tile of each level is never stored: it lives in memory, rebuilt by
 * sworn_log_open from the last entries and the stored complete tiles (at most 255 hashes a level).
 *
 * Life of an entry: sworn_log_append() inserts it (and its receipt) and hashes it into the tree in
 * one transaction; the only other rows it writes are the tiles it completes (one per 256 hashes of
 * a level). It returns the entry's index once that transaction is durable (one WAL fsync). So the
 * tree always describes exactly the durable entries, and sworn_log_checkpoint() signs a root of
 * durable entries only.
 *
 * sworn_log_open() is the recovery: it checks that the entries have no gap and that the stored
 * tiles are complete tiles inside them, stores any complete tile that is missing (an older
 * database), recomputes from the entries every tile that the newest checkpoint does not cover and
 * compares it with the stored one, and checks that the stored tiles give that checkpoint's root.
 * A format-1 database (partial tiles stored too) is upgraded in place by the first open.
 *
 * Reads (roots, proofs) take O(log n) stored or in-memory hashes: every complete subtree hash is
 * held in some tile row, so nothing above the leaves is recomputed.
 *
 * Thread safety: one struct sworn_log may be shared by threads. sworn_log_append() is the group
 * commit point: concurrent calls are gathered into one transaction (one WAL fsync) and each
 * returns once that transaction is durable. Other calls serialise on the database.
 * Errors: -1 with sworn_err set, as in err.h. A database that contradicts itself (a gap in the
 * entries, a tile of the wrong size or beyond the entries, a tile that its entries do not give, a
 * root that does not match the newest checkpoint) gives SWORN_ERR_CORRUPT.
 */
#ifndef SWORN_LOGSTORE_H
#define SWORN_LOGSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "merkle.h"
#include "notesign.h"
#include "tiles.h"

#define SWORN_LOG_FORMAT_VERSION 2
#define SWORN_LOG_META_MAX 4096    /* bytes in one meta value */
#define SWORN_LOG_RECEIPT_MAX 1024 /* bytes in one receipt */

struct sworn_log;

/*
 * Create a new, empty log database at db_path (which must not exist) for `origin` (the
 * checkpoint origin line: non-empty, printable, at most SWORN_CHECKPOINT_ORIGIN_MAX bytes).
 * OUT: *out, to be closed with sworn_log_close. Returns 0 or -1.
 */
int sworn_log_create(const char *db_path, const char *origin, struct sworn_log **out);

/*
 * Open an existing log (format 2, or format 1, which this upgrades), check it and rebuild the tree
 * as the header comment says (the recovery after a crash). Takes the database's write lock while
 * it checks. OUT: *out. Returns 0, or -1 (SWORN_ERR_FORMAT: not a log of a format this reads;
 * SWORN_ERR_CORRUPT: a database that contradicts itself, a stored tile whose blob is not a complete
 * tile's, a receipt of no stored entry, or a table without the schema's primary key).
 */
int sworn_log_open(const char *db_path, struct sworn_log **out);

/*
 * Take sqlite's WAL checkpoints off the committing thread. Without this call, sqlite's
 * wal_autocheckpoint copies the WAL into the database inside the commit that leaves 256 or more
 * pages in it, with the log's lock held: that append, and every one queued behind it, waits for
 * the copy and its fsyncs of the database file. From this call on, that commit only wakes a
 * thread of the log's own, which has a second connection to the database and runs a PASSIVE
 * checkpoint there (one that waits for no writer and that no writer waits for), then syncs the
 * database file. When commits kept overtaking it until the WAL holds about 4 MiB, the thread
 * catches up and the next commit copies the rest (a few commits' pages), so that the WAL starts
 * over and stays bounded. Durability is
 * unchanged: a commit is durable in the WAL, and a checkpoint only copies durable frames. Call it
 * once, from the thread that opened the log, before appends run; sworn_log_close stops the
 * thread. Returns 0, or -1 (SWORN_ERR_IO: the connection or the thread could not be made; the
 * log then checkpoints in its commits as before).
 */
int sworn_log_wal_offload(struct sworn_log *log);

/* Close a log; NULL is allowed. Pending appends must have returned. */
void sworn_log_close(struct sworn_log *log);

/* The log's origin (NUL-terminated, owned by the log). */
const char *sworn_log_origin(const struct sworn_log *log);

/*
 * Append n >= 1 entries (entry i is lens[i] <= SWORN_TILE_ENTRY_MAX bytes at entries[i]) as
 * consecutive indices, and return only when they are durable. OUT: *first_index, the index of
 * entries[0]. On error nothing of this call is stored and *first_index is untouched.
 */
int sworn_log_append(struct sworn_log *log, const uint8_t *const *entries, const size_t *lens,
                     size_t n, uint64_t *first_index);

/*
 * As sworn_log_append, and store a receipt with each entry that has one, in the same transaction:
 * receipts may be NULL (no receipts), else receipts[i] == NULL or receipt_lens[i] == 0 means
 * entry i has none; otherwise receipt_lens[i] <= SWORN_LOG_RECEIPT_MAX bytes. The log does not
 * interpret receipts (the verifier checks them against the entries).
 */
int sworn_log_append_receipts(struct sworn_log *log, const uint8_t *const *entries,
                              const size_t *lens, const uint8_t *const *receipts,
                              const size_t *receipt_lens, size_t n, uint64_t *first_index);

/*
 * Copy the receipt of entry `index` into out (cap bytes). OUT: *len. Returns 0, or -1 with
 * SWORN_ERR_NOTFOUND when the entry has no receipt, SWORN_ERR_RANGE when cap is too small.
 */
int sworn_log_read_receipt(struct sworn_log *log, uint64_t index, uint8_t *out, size_t cap,
                           size_t *len);

/* The number of durable entries. */
uint64_t sworn_log_size(struct sworn_log *log);

/* The number of entries in the tree: always sworn_log_size() (kept for callers of format 1). */
uint64_t sworn_log_tree_size(struct sworn_log *log);

/*
 * Kept from format 1, where entries could wait outside the tree: now every durable entry is in
 * the tree as soon as its append returns, so this only reports the tree size.
 * OUT: *tree_size (may be NULL). Returns 0.
 */
int sworn_log_integrate(struct sworn_log *log, uint64_t *tree_size);

/* The root of the tree of the first `size` entries; size <= tree size. Returns 0 or -1. */
int sworn_log_root(struct sworn_log *log, uint64_t size, uint8_t root[SWORN_HASH_LEN]);

/*
 * The RFC 9162 inclusion proof of entry `index` in the tree of `size` entries
 * (index < size <= tree size). out holds cap hashes. OUT: *count. Returns 0 or -1.
 */
int sworn_log_prove_inclusion(struct sworn_log *log, uint64_t index, uint64_t size, uint8_t *out,
                              size_t cap, size_t *count);

/*
 * The RFC 9162 consistency proof from the tree of old_size entries to that of `size` entries
 * (0 < old_size <= size <= tree size). out holds cap hashes. OUT: *count. Returns 0 or -1.
 */
int sworn_log_prove_consistency(struct sworn_log *log, uint64_t old_size, uint64_t size,
                                uint8_t *out, size_t cap, size_t *count);

/*
 * Copy entry `index` (< sworn_log_size) into out (capacity cap). OUT: *len. Returns 0 or -1.
 */
int sworn_log_read_entry(struct sworn_log *log, uint64_t index, uint8_t *out, size_t cap,
                         size_t *len);

/*
 * Copy row 0 of the hash tile (level, tile index) as it stands in the tree of `size` entries into
 * out (at least SWORN_TILE_WIDTH * SWORN_HASH_LEN bytes). OUT: *width, its hash count.
 * Returns 0, or -1 (SWORN_ERR_NOTFOUND when that tree has no such tile).
 */
int sworn_log_read_tile(struct sworn_log *log, uint64_t size, int level, uint64_t tile_index,
                        uint8_t *out, unsigned *width);

/*
 * Sign a checkpoint of the whole tree with the n signers (the first one is the
 * log's key), store the note durably and write it into out (capacity cap, NUL-terminated).
 * OUT: *len, and *size (may be NULL), the checkpoint's tree size. Returns 0 or -1.
 */
int sworn_log_checkpoint(struct sworn_log *log, struct sworn_note_signer *const *signers, size_t n,
                         char *out, size_t cap, size_t *len, uint64_t *size);

/*
 * The stored checkpoint note for tree size `size`, or the newest one when size is UINT64_MAX.
 * Written into out (capacity cap, NUL-terminated). OUT: *len, *note_size (may be NULL).
 * Returns 0, or -1 (SWORN_ERR_NOTFOUND when there is none).
 */
int sworn_log_get_checkpoint(struct sworn_log *log, uint64_t size, char *out, size_t cap,
                             size_t *len, uint64_t *note_size);

/*
 * Store a checkpoint note signed elsewhere (an imported log). Its body must name this log's
 * origin, a size within the tree, and the root this database computes for that size; the caller
 * has verified its signatures. Returns 0, or -1 (SWORN_ERR_VERIFY when origin or root differ).
 */
int sworn_log_put_checkpoint(struct sworn_log *log, const char *note, size_t len);

/*
 * Visit every stored checkpoint, oldest first: fn(arg, size, note, len) for each; a non-zero
 * return from fn stops the walk and is returned. Returns 0, -1 on a storage error, or fn's value.
 */
int sworn_log_each_checkpoint(struct sworn_log *log,
                              int (*fn)(void *arg, uint64_t size, const char *note, size_t len),
                              void *arg);

/* The same for the checkpoints of tree size >= min_size only (an incremental export). */
int sworn_log_each_checkpoint_from(struct sworn_log *log, uint64_t min_size,
                                   int (*fn)(void *arg, uint64_t size, const char *note,
                                             size_t len),
                                   void *arg);

#define SWORN_LOG_QUOTE_MAX 4096 /* bytes in a stored TPMS_ATTEST or TPMT_SIGNATURE */

/*
 * Store the TPM quote of the checkpoint of tree size `size` (which must be stored): the raw
 * TPMS_ATTEST and TPMT_SIGNATURE bytes, 1..SWORN_LOG_QUOTE_MAX each, replacing an older quote of
 * that checkpoint. The log does not check the quote: the verifier does, with the AK it trusts.
 * Returns 0, or -1 (SWORN_ERR_NOTFOUND when there is no such checkpoint).
 */
int sworn_log_put_quote(struct sworn_log *log, uint64_t size, const uint8_t *attest,
                        size_t attest_len, const uint8_t *sig, size_t sig_len);

/* Visit every stored quote, oldest checkpoint first (as sworn_log_each_checkpoint). */
int sworn_log_each_quote(struct sworn_log *log,
                         int (*fn)(void *arg, uint64_t size, const uint8_t *attest,
                                   size_t attest_len, const uint8_t *sig, size_t sig_len),
                         void *arg);

/* The same for the quotes of checkpoints of tree size >= min_size only. */
int sworn_log_each_quote_from(struct sworn_log *log, uint64_t min_size,
                              int (*fn)(void *arg, uint64_t size, const uint8_t *attest,
                                        size_t attest_len, const uint8_t *sig, size_t sig_len),
                              void *arg);

/* A text setting kept in the database (the key file of sworn-log, for instance). */
int sworn_log_meta_set(struct sworn_log *log, const char *key, const char *value);
/* Copy a setting into out (capacity cap). Returns 0, or -1 (SWORN_ERR_NOTFOUND when unset). */
int sworn_log_meta_get(struct sworn_log *log, const char *key, char *out, size_t cap);

#endif
