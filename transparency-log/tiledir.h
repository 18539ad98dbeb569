/*
 * tiledir.h -- a log as a static C2SP tlog-tiles folder: export from the database, and read back.
 *
 * The folder holds `checkpoint` (the signed note of the tree it describes) and the tiles and
 * entry bundles of tiles.h for exactly that tree, and beside them the log's history under sworn/:
 * sworn/checkpoint/<size> for every stored checkpoint up to that tree, and
 * sworn/quote/<size>.attest and .sig for every stored TPM quote of one. Any web server, CDN or
 * object store can serve it as it is.
 *
 * Export writes each file to a temporary name, fsyncs it and renames it into place, then fsyncs
 * the folder, so a reader never sees a half-written file. Tiles are immutable: a file that already
 * exists must hold exactly the bytes that would be written, otherwise export stops with
 * SWORN_ERR_CORRUPT (two different trees under one name would be a fork). `checkpoint` and the
 * sworn/ history files are replaced (a checkpoint of one size may be signed again); `checkpoint`
 * is written last, after every tile it needs.
 *
 * Reading back verifies everything before it trusts anything: the checkpoint's signatures, then
 * every entry bundle, then the recomputed root against the checkpoint, then every hash tile the
 * tree needs against the recomputed tiles.
 */
#ifndef SWORN_TILEDIR_H
#define SWORN_TILEDIR_H

#include <stddef.h>
#include <stdint.h>

#include "logstore.h"
#include "note.h"

/*
 * Write the tiles of the tree of the stored checkpoint for tree size `size` (UINT64_MAX: the
 * newest checkpoint) and that checkpoint into dir (created if missing). OUT: *exported_size
 * (may be NULL). Returns 0, or -1 with sworn_err set.
 */
int sworn_tiledir_export(struct sworn_log *log, uint64_t size, const char *dir,
                         uint64_t *exported_size);

/*
 * The same, writing only what a tree grown from `since` entries to the checkpoint's size adds:
 * the hash tiles and entry and receipts bundles from the one that held entry `since` on (at every
 * level), the checkpoints and quotes of tree sizes from `since` on, and the checkpoint file. A
 * folder already exported at size `since` ends up as a full export would leave it, plus the
 * partial tiles of the earlier exports (readers of earlier checkpoints still need them), at a
 * cost that depends on the growth, not on the log's size (decisiond exports after every
 * checkpoint). since = 0 is a full export. since must not exceed the checkpoint's size.
 */
int sworn_tiledir_export_since(struct sworn_log *log, uint64_t size, const char *dir,
                               uint64_t since, uint64_t *exported_size);

/*
 * Read the tiles folder dir: verify its checkpoint with the nkeys verifiers (note.h rules),
 * create a new log database at db_path (which must not exist) holding its entries, and check that
 * the root and every hash tile match. On success *out is the open log (close it), holding the
 * checkpoint. On failure db_path is removed. Returns 0, or -1 with sworn_err set
 * (SWORN_ERR_VERIFY for a signature or a mismatching root or tile, SWORN_ERR_FORMAT for bad
 * files, SWORN_ERR_NOTFOUND for a missing file).
 */
int sworn_tiledir_import(const char *dir, const struct sworn_note_verifier *keys, size_t nkeys,
                         const char *db_path, struct sworn_log **out);

#endif
