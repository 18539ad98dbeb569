/*
 * c_record.h -- read a sworn record as decisiond exports it (docs/formats.md section 7: a
 * tlog-tiles folder with `checkpoint`, `tile/entries/...` and `sworn/checkpoint/<size>`), and
 * copy it for the tamper probes.
 *
 * Nothing here verifies a signature or a proof: that is sworn-verify's job, which the T5 probes
 * run. What this module reads is what the folder claims (the report says so of the identity it
 * takes from here), bounded: a checkpoint note at most SWORN_NOTE_MAX_LEN bytes, a bundle at most
 * SWORN_TILE_BUNDLE_MAX, a copy at most C_RECORD_COPY_FILES_MAX files, no symbolic link followed
 * or copied.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_NOTFOUND, SWORN_ERR_IO, SWORN_ERR_FORMAT,
 * SWORN_ERR_RANGE, SWORN_ERR_NOMEM). Thread safety: no shared state.
 */
#ifndef SWORN_C_RECORD_H
#define SWORN_C_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "tiles.h"

struct Sworn__V1__Entry;

#define C_RECORD_COPY_FILES_MAX 4000000u

/* The record's newest checkpoint (its `checkpoint` file): origin, size and root. */
int c_record_checkpoint(const char *dir, struct sworn_checkpoint *cp);

/* The same of a checkpoint file anywhere (a `sworn/checkpoint/<size>`). */
int c_record_checkpoint_file(const char *path, struct sworn_checkpoint *cp);

/*
 * One entry bundle of a tree of `size` entries: bundle `index` (entries 256*index ..), full or
 * the rightmost partial one, as the layout has it. OUT: *data (free it) and the entries in
 * out[0..*n) pointing into it. Fails when index is past the tree.
 */
int c_record_bundle(const char *dir, uint64_t size, uint64_t index, uint8_t **data,
                    struct sworn_tile_entry out[SWORN_TILE_WIDTH], unsigned *n);

/*
 * Call fn for every entry of a tree of `size` entries whose index is at least from, in index
 * order, with the entry unpacked (NULL when its bytes are not an Entry: fn decides what that
 * means). fn returns 0 to go on, 1 to stop. Returns 0, or -1 with sworn_err set (a bundle that
 * cannot be read). Entries are freed after fn returns: fn keeps nothing of them.
 */
int c_record_each(const char *dir, uint64_t size, uint64_t from,
                  int (*fn)(void *arg, uint64_t index, const struct Sworn__V1__Entry *e),
                  void *arg);

/* The path (relative to the record) of bundle index of a tree of size entries. */
int c_record_bundle_path(uint64_t size, uint64_t index, char *out, size_t cap);

/*
 * Copy the folder src to dst (which must not exist), regular files and folders only (a
 * symbolic link or any other kind of file is refused), modes kept. Used on a scratch folder.
 */
int c_record_copy(const char *src, const char *dst);

/* Remove the folder tree at path (best effort, no link followed). */
void c_record_remove(const char *path);

/*
 * The largest size s < below with a `sworn/checkpoint/<s>` file in the record, in *out.
 * Returns 0, or -1 (SWORN_ERR_NOTFOUND when there is none).
 */
int c_record_older_checkpoint(const char *dir, uint64_t below, uint64_t *out);

/* The name of a measured file's role (sworn.proto's MeasuredRole): "executable", "signer",
 * "config", "policy", "extra"; "unrecorded" for any other value. */
const char *c_record_role_name(int role);

#endif
