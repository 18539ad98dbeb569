/*
 * bundle.h -- one self-contained file holding a range of a log's entries with everything an
 * auditor needs to check them against a signed checkpoint (`sworn-log export-bundle`; the
 * format is in docs/verifier.md section 9, and sworn-verify reads it).
 *
 * A bundle for entries [start, start + count) of the tree of the stored checkpoint of size n
 * (start + count <= n) holds, as text lines:
 *     sworn bundle v1
 *     checkpoint <base64 of the signed checkpoint note of size n>
 *     start <start>
 *     count <count>
 *     left <base64 hash>          one per set bit of start, largest subtree first: the roots of
 *                                 the perfect subtrees that make up the first `start` leaves
 *     entry <base64 entry>        count lines, in order ("entry " and nothing for an empty entry)
 *     receipt <base64 | ->        count lines, "-" for an entry without a receipt
 *     proof <base64 hash>         the RFC 9162 consistency proof from start + count to n (none
 *                                 when they are equal)
 *     since <m>                   optional (an auditor's saved tree size m, 1..n): then
 *     since-proof <base64 hash>   the RFC 9162 consistency proof from m to n (none when m = n)
 *     quote <base64 attest> <base64 sig>   at most one: the TPM quote of that checkpoint
 * A reader recomputes the root of the first start + count leaves from the left hashes and the
 * entries, and the checkpoint's root from it and the proof: nothing is taken on trust.
 *
 * count is 1..SWORN_BUNDLE_MAX_COUNT. The file is created exclusively (never overwritten) and
 * fsynced. Not thread-safe on one log handle (as the log).
 */
#ifndef SWORN_BUNDLE_H
#define SWORN_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "logstore.h"

#define SWORN_BUNDLE_MAX_COUNT 65536u

/*
 * Write the bundle of entries [start, start + count) under the stored checkpoint of tree size
 * `size` (UINT64_MAX: the newest) to path. Returns 0, or -1 with sworn_err set
 * (SWORN_ERR_RANGE for a range outside the tree, SWORN_ERR_NOTFOUND without such a checkpoint,
 * SWORN_ERR_ARG when path exists, SWORN_ERR_IO, SWORN_ERR_NOMEM).
 */
int sworn_bundle_export(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                        const char *path);

/*
 * The same into a fresh allocation (*out, *out_len; free it) instead of a file.
 */
int sworn_bundle_build(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                       char **out, size_t *out_len);

/*
 * The two above with the `since` lines for an auditor's saved tree of size since (0: none;
 * otherwise 1..n, else SWORN_ERR_RANGE): the consistency proof from it to the checkpoint, so that
 * sworn-verify --state can tie a bundle to the tree it accepted before whatever the range.
 */
int sworn_bundle_build_since(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                             uint64_t since, char **out, size_t *out_len);
int sworn_bundle_export_since(struct sworn_log *log, uint64_t size, uint64_t start, uint64_t count,
                              uint64_t since, const char *path);

#endif
