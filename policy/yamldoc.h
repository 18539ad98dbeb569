/*
 * yamldoc.h -- a small, bounded YAML document tree for sworn's human-written files (the
 * decisiond configuration and the policy), read with libyaml, with the line and column of every
 * node so that every error can name file:line:column.
 *
 * What is accepted (a deliberate subset of YAML 1.1; anything else is refused, never guessed):
 *   - exactly one document, whose root is a mapping;
 *   - mappings whose keys are scalars (plain or quoted; a sequence or mapping as a key is refused),
 *     each key at most once per mapping (a duplicate key is an error, reported at its second
 *     occurrence: YAML 1.1 parsers disagree on which one wins, and a policy must mean one thing);
 *   - sequences and scalars (plain, single- or double-quoted, literal or folded);
 *   - no anchors, aliases or merge keys ("billion laughs" and action at a distance), no tags
 *     (not even "!"), no %YAML or %TAG directives;
 *   - UTF-8 input only (a UTF-16 byte order mark is not honoured), and no NUL byte anywhere;
 *   - bounds: the file at most SWORN_YAML_MAX_BYTES, at most SWORN_YAML_MAX_DEPTH mappings and
 *     sequences nested in one another (the root mapping is the first; a scalar's own level is
 *     not counted), in block and flow style alike,
 *     at most SWORN_YAML_MAX_NODES nodes, each scalar at most SWORN_YAML_MAX_SCALAR bytes, and
 *     every scalar valid UTF-8 without NUL.
 *
 * Scalars are kept as their text; the typed getters below convert and check them, naming the
 * node's position on failure. Errors are values: -1/NULL with sworn_err set (common/err.h), the
 * message starting "<file>:<line>:<col>: " (line and column are 1-based, as editors show them),
 * code SWORN_ERR_FORMAT. Errors about the file as a whole name only the file: it cannot be read
 * (SWORN_ERR_NOTFOUND, SWORN_ERR_IO, fileio.h's messages) or is larger than SWORN_YAML_MAX_BYTES
 * (SWORN_ERR_RANGE); a typed getter given NULL (an absent key) fails with SWORN_ERR_ARG.
 *
 * The accessors are total: given NULL or a node of another kind they return 0/NULL (kind 0,
 * length 0, text NULL, item NULL) rather than crash, so a caller may chain them and check once.
 *
 * Ownership: a document owns all its nodes and strings; nothing a getter returns outlives
 * sworn_yaml_free. Thread safety: a document is immutable once loaded and may be read by many
 * threads.
 */
#ifndef SWORN_YAMLDOC_H
#define SWORN_YAMLDOC_H

#include <stddef.h>
#include <stdint.h>

#define SWORN_YAML_MAX_BYTES (4u * 1024u * 1024u)
#define SWORN_YAML_MAX_DEPTH 32u
#define SWORN_YAML_MAX_NODES 200000u
#define SWORN_YAML_MAX_SCALAR 65536u

enum sworn_yaml_kind { SWORN_YAML_SCALAR = 1, SWORN_YAML_SEQ, SWORN_YAML_MAP };

struct sworn_yaml_doc;
struct sworn_yaml_node;

/*
 * Load and check a document from a file (path, also used as the name in messages; read with
 * fileio.h's bounded reader) or from memory (name is used in messages; p is not kept).
 * OUT: *out, to free with sworn_yaml_free; untouched on failure.
 */
int sworn_yaml_load_file(const char *path, struct sworn_yaml_doc **out);
int sworn_yaml_load_mem(const char *name, const uint8_t *p, size_t len,
                        struct sworn_yaml_doc **out);
void sworn_yaml_free(struct sworn_yaml_doc *d);

/* The root mapping; SHA-256 of the exact bytes loaded (the policy digest uses it). */
const struct sworn_yaml_node *sworn_yaml_root(const struct sworn_yaml_doc *d);
void sworn_yaml_digest(const struct sworn_yaml_doc *d, uint8_t out[32]);
const char *sworn_yaml_name(const struct sworn_yaml_doc *d);

/* A node's kind and position (1-based). */
enum sworn_yaml_kind sworn_yaml_kind(const struct sworn_yaml_node *n);
unsigned sworn_yaml_line(const struct sworn_yaml_node *n);
unsigned sworn_yaml_col(const struct sworn_yaml_node *n);

/* Scalars: the text (NUL-terminated, never NULL for a scalar) and its length. */
const char *sworn_yaml_text(const struct sworn_yaml_node *n, size_t *len);

/* Sequences and mappings: number of items; item i (a mapping's i-th value, and its key text). */
size_t sworn_yaml_len(const struct sworn_yaml_node *n);
const struct sworn_yaml_node *sworn_yaml_item(const struct sworn_yaml_node *n, size_t i);
const char *sworn_yaml_key(const struct sworn_yaml_node *map, size_t i);
const struct sworn_yaml_node *sworn_yaml_key_node(const struct sworn_yaml_node *map, size_t i);

/* A mapping's value for key, or NULL when absent (not an error). */
const struct sworn_yaml_node *sworn_yaml_get(const struct sworn_yaml_node *map, const char *key);

/*
 * Refuse keys of map that are not in allowed (a NULL-terminated list): a misspelt key in a
 * security policy must fail loudly, never be ignored. Returns 0 or -1 naming the key's position.
 */
int sworn_yaml_only_keys(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *map,
                         const char *const *allowed);

/*
 * Typed reads of a node, each checking the kind and the syntax and naming the position on
 * failure: a string (any scalar), a boolean (true/false only), an unsigned integer in [min, max]
 * (decimal digits only), a duration ("250ms", "30s", "5m", "2h", "1d"; result in milliseconds).
 */
int sworn_yaml_str(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                   const char **out);
int sworn_yaml_bool(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n, int *out);
int sworn_yaml_u64(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n, uint64_t min,
                   uint64_t max, uint64_t *out);
int sworn_yaml_duration_ms(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                           uint64_t *out);

/* Set sworn_err to "<file>:<line>:<col>: <message>" for node n (code SWORN_ERR_FORMAT); -1. */
int sworn_yaml_error(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
