/*
 * yamldoc.c -- the bounded YAML document tree (see yamldoc.h for what is accepted).
 *
 * libyaml's event parser (not its document loader, which would expand aliases and build an
 * unbounded tree) feeds a small explicit stack: each container event pushes a node, each end
 * event pops it and attaches it to its parent. Every refusal happens at the event that breaks a
 * rule, so the error names the exact place. Limits are checked before anything is allocated for
 * the offending node, so hostile input costs at most SWORN_YAML_MAX_BYTES of input, plus at most
 * SWORN_YAML_MAX_NODES nodes whose texts together are no larger than the input's scalars.
 *
 * Duplicate keys are found when a mapping ends, by sorting its keys (O(n log n), so a mapping
 * with 100000 keys cannot make loading quadratic); the error names the later occurrence.
 */
#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <yaml.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "utf8.h"

struct sworn_yaml_node {
    enum sworn_yaml_kind kind;
    unsigned line, col;
    char *text; /* scalars: NUL-terminated text */
    size_t text_len;
    struct sworn_yaml_node **items; /* sequences: items; mappings: values */
    struct sworn_yaml_node **keys;  /* mappings: key scalars, parallel to items */
    size_t n, cap;
};

struct sworn_yaml_doc {
    char *name;
    uint8_t digest[32];
    struct sworn_yaml_node *root;
};

/* A stack frame while parsing: the open container and, for a mapping, a key awaiting its value. */
struct frame {
    struct sworn_yaml_node *node;
    struct sworn_yaml_node *key;
};

struct loader {
    const char *name;
    struct frame stack[SWORN_YAML_MAX_DEPTH];
    size_t depth;
    size_t nodes;
    size_t documents;
    struct sworn_yaml_node *root;
};

static void node_free(struct sworn_yaml_node *n)
{
    if (n == NULL)
        return;
    /* Recursion is bounded by SWORN_YAML_MAX_DEPTH. */
    for (size_t i = 0; i < n->n; i++) {
        node_free(n->items[i]);
        if (n->keys != NULL)
            node_free(n->keys[i]);
    }
    free(n->items);
    free(n->keys);
    free(n->text);
    free(n);
}

/* An error at a libyaml mark (0-based line and column). */
static int mark_error(const char *name, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int mark_error(const char *name, yaml_mark_t m, const char *fmt, ...)
{
    char msg[SWORN_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sworn_err_set(SWORN_ERR_FORMAT, "%s:%lu:%lu: %s", name, (unsigned long)m.line + 1,
                         (unsigned long)m.column + 1, msg);
}

static unsigned mark_u(size_t v)
{
    return v >= (size_t)(unsigned)-1 ? (unsigned)-1 : (unsigned)v + 1;
}

static struct sworn_yaml_node *node_new(struct loader *ld, enum sworn_yaml_kind kind, yaml_mark_t m)
{
    struct sworn_yaml_node *n;

    if (ld->nodes >= SWORN_YAML_MAX_NODES) {
        mark_error(ld->name, m, "more than %u nodes", SWORN_YAML_MAX_NODES);
        return NULL;
    }
    n = calloc(1, sizeof(*n));
    if (n == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "%s: out of memory", ld->name);
        return NULL;
    }
    ld->nodes++;
    n->kind = kind;
    n->line = mark_u(m.line);
    n->col = mark_u(m.column);
    return n;
}

static int node_push(struct sworn_yaml_node *parent, struct sworn_yaml_node *key,
                     struct sworn_yaml_node *child)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        struct sworn_yaml_node **items = realloc(parent->items, cap * sizeof(*items));

        if (items == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "yaml: out of memory");
        parent->items = items;
        if (parent->kind == SWORN_YAML_MAP) {
            struct sworn_yaml_node **keys = realloc(parent->keys, cap * sizeof(*keys));

            if (keys == NULL)
                return sworn_err_set(SWORN_ERR_NOMEM, "yaml: out of memory");
            parent->keys = keys;
        }
        parent->cap = cap;
    }
    parent->items[parent->n] = child;
    if (parent->kind == SWORN_YAML_MAP)
        parent->keys[parent->n] = key;
    parent->n++;
    return 0;
}

/* The room a key shown in a message takes: 64 bytes of it, escaped, and "...". */
#define SHOWN_MAX (SWORN_UTF8_ESCAPE_MAX(64) + 3)

/*
 * A printable, shortened copy of a key for messages: at most 64 bytes of it are kept (cut on a
 * UTF-8 boundary), then unsafe characters (controls, bidi, invisible: utf8.h) and bytes that are
 * not UTF-8 are escaped as sworn_utf8_escape's text mode writes them, so an error line stays one
 * readable line, and the PolicyLoaded entry that records a refused reload with this message
 * passes its own checks (a raw U+202E here once left the refusal unrecorded).
 */
static void printable(const char *s, char out[SHOWN_MAX])
{
    size_t n = strlen(s), k = n > 64 ? 64 : n;

    while (k > 0 && k < n && ((unsigned char)s[k] & 0xc0) == 0x80)
        k--;
    (void)sworn_utf8_escape(s, k, SWORN_UTF8_ESCAPE_TEXT, out, SHOWN_MAX - 3);
    if (k < n)
        strcat(out, "...");
}

/* Attach a finished node to the container on top of the stack, or make it the root. */
static int attach(struct loader *ld, struct sworn_yaml_node *n, yaml_mark_t m)
{
    struct frame *top;

    if (ld->depth == 0) {
        if (n->kind != SWORN_YAML_MAP) {
            mark_error(ld->name, m, "the document's root must be a mapping");
            node_free(n);
            return -1;
        }
        ld->root = n;
        return 0;
    }
    top = &ld->stack[ld->depth - 1];
    if (top->node->kind == SWORN_YAML_SEQ) {
        if (node_push(top->node, NULL, n) < 0) {
            node_free(n);
            return -1;
        }
        return 0;
    }
    if (top->key == NULL) {
        /* This node is a key. */
        if (n->kind != SWORN_YAML_SCALAR) {
            mark_error(ld->name, m, "a mapping key must be a scalar");
            node_free(n);
            return -1;
        }
        if (strcmp(n->text, "<<") == 0) {
            mark_error(ld->name, m, "merge keys (<<) are not allowed");
            node_free(n);
            return -1;
        }
        top->key = n;
        return 0;
    }
    if (node_push(top->node, top->key, n) < 0) {
        node_free(n);
        return -1;
    }
    top->key = NULL;
    return 0;
}

/* Check a scalar's bytes: at most SWORN_YAML_MAX_SCALAR, valid UTF-8, no NUL. */
static int check_scalar(struct loader *ld, const yaml_event_t *ev)
{
    const uint8_t *p = ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    struct sworn_buf b = sworn_buf_init(p, len);
    uint32_t cp;

    if (len > SWORN_YAML_MAX_SCALAR)
        return mark_error(ld->name, ev->start_mark, "scalar longer than %u bytes",
                          SWORN_YAML_MAX_SCALAR);
    while (sworn_buf_remaining(&b) > 0) {
        size_t at = b.off;

        if (sworn_utf8_next(&b, &cp) < 0)
            return mark_error(ld->name, ev->start_mark,
                              "scalar is not valid UTF-8 (byte %zu of its value)", at);
        if (cp == 0)
            return mark_error(ld->name, ev->start_mark, "scalar contains a NUL character");
    }
    return 0;
}

static int on_scalar(struct loader *ld, const yaml_event_t *ev)
{
    struct sworn_yaml_node *n;

    if (ev->data.scalar.anchor != NULL)
        return mark_error(ld->name, ev->start_mark, "anchors (&) are not allowed");
    if (ev->data.scalar.tag != NULL)
        return mark_error(ld->name, ev->start_mark, "tags (!) are not allowed");
    if (check_scalar(ld, ev) < 0)
        return -1;
    n = node_new(ld, SWORN_YAML_SCALAR, ev->start_mark);
    if (n == NULL)
        return -1;
    n->text = malloc(ev->data.scalar.length + 1);
    if (n->text == NULL) {
        node_free(n);
        return sworn_err_set(SWORN_ERR_NOMEM, "%s: out of memory", ld->name);
    }
    memcpy(n->text, ev->data.scalar.value, ev->data.scalar.length);
    n->text[ev->data.scalar.length] = '\0';
    n->text_len = ev->data.scalar.length;
    return attach(ld, n, ev->start_mark);
}

static int on_start(struct loader *ld, const yaml_event_t *ev, enum sworn_yaml_kind kind,
                    const yaml_char_t *anchor, const yaml_char_t *tag)
{
    struct sworn_yaml_node *n;

    if (anchor != NULL)
        return mark_error(ld->name, ev->start_mark, "anchors (&) are not allowed");
    if (tag != NULL)
        return mark_error(ld->name, ev->start_mark, "tags (!) are not allowed");
    if (ld->depth > 0 && ld->stack[ld->depth - 1].node->kind == SWORN_YAML_MAP &&
        ld->stack[ld->depth - 1].key == NULL)
        return mark_error(ld->name, ev->start_mark, "a mapping key must be a scalar");
    if (ld->depth == 0 && kind != SWORN_YAML_MAP)
        return mark_error(ld->name, ev->start_mark, "the document's root must be a mapping");
    if (ld->depth >= SWORN_YAML_MAX_DEPTH)
        return mark_error(ld->name, ev->start_mark, "nested deeper than %u levels",
                          SWORN_YAML_MAX_DEPTH);
    n = node_new(ld, kind, ev->start_mark);
    if (n == NULL)
        return -1;
    ld->stack[ld->depth].node = n;
    ld->stack[ld->depth].key = NULL;
    ld->depth++;
    return 0;
}

/*
 * libyaml would stop at a NUL byte with a vague message; name the NUL's line and column
 * (counted in bytes, like libyaml's own columns for ASCII).
 */
static int refuse_nul(const char *name, const uint8_t *p, size_t len)
{
    const uint8_t *nul = len ? memchr(p, 0, len) : NULL;
    unsigned long line = 1, col = 1;

    if (nul == NULL)
        return 0;
    for (const uint8_t *q = p; q < nul; q++) {
        if (*q == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return sworn_err_set(SWORN_ERR_FORMAT, "%s:%lu:%lu: NUL byte in the file", name, line, col);
}

static int key_cmp(const void *a, const void *b)
{
    const struct sworn_yaml_node *x = *(const struct sworn_yaml_node *const *)a;
    const struct sworn_yaml_node *y = *(const struct sworn_yaml_node *const *)b;
    int c = strcmp(x->text, y->text);

    if (c != 0)
        return c;
    /* Equal texts: keep document order, so the later occurrence sorts after the earlier. */
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->col < y->col ? -1 : (x->col > y->col ? 1 : 0);
}

/* Refuse a mapping that holds a key twice, naming the first repeat in document order. */
static int check_duplicates(struct loader *ld, const struct sworn_yaml_node *map)
{
    const struct sworn_yaml_node **sorted, *dup = NULL;
    char shown[SHOWN_MAX];

    if (map->n < 2)
        return 0;
    sorted = malloc(map->n * sizeof(*sorted));
    if (sorted == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "%s: out of memory", ld->name);
    memcpy(sorted, map->keys, map->n * sizeof(*sorted));
    qsort(sorted, map->n, sizeof(*sorted), key_cmp);
    for (size_t i = 1; i < map->n; i++) {
        if (strcmp(sorted[i - 1]->text, sorted[i]->text) != 0)
            continue;
        if (dup == NULL || sorted[i]->line < dup->line ||
            (sorted[i]->line == dup->line && sorted[i]->col < dup->col))
            dup = sorted[i];
    }
    free(sorted);
    if (dup == NULL)
        return 0;
    printable(dup->text, shown);
    return sworn_err_set(SWORN_ERR_FORMAT, "%s:%u:%u: duplicate key \"%s\"", ld->name, dup->line,
                         dup->col, shown);
}

static int on_end(struct loader *ld, const yaml_event_t *ev)
{
    struct sworn_yaml_node *n;

    /* libyaml pairs start and end events, so the stack is never empty here. */
    if (ld->depth == 0)
        return mark_error(ld->name, ev->start_mark, "unbalanced end of a collection");
    ld->depth--;
    n = ld->stack[ld->depth].node;
    ld->stack[ld->depth].node = NULL;
    if (ld->stack[ld->depth].key != NULL) {
        /* Cannot happen with libyaml (a key always gets a value, possibly empty); be safe. */
        node_free(ld->stack[ld->depth].key);
        ld->stack[ld->depth].key = NULL;
    }
    if (n->kind == SWORN_YAML_MAP && check_duplicates(ld, n) < 0) {
        node_free(n);
        return -1;
    }
    return attach(ld, n, ev->start_mark);
}

static int on_event(struct loader *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_STREAM_START_EVENT:
    case YAML_STREAM_END_EVENT:
    case YAML_DOCUMENT_END_EVENT:
        return 0;
    case YAML_DOCUMENT_START_EVENT:
        if (++ld->documents > 1)
            return mark_error(ld->name, ev->start_mark,
                              "a second document (only one is allowed per file)");
        if (ev->data.document_start.version_directive != NULL ||
            ev->data.document_start.tag_directives.start !=
                ev->data.document_start.tag_directives.end)
            return mark_error(ld->name, ev->start_mark,
                              "directives (%%YAML, %%TAG) are not "
                              "allowed");
        return 0;
    case YAML_ALIAS_EVENT:
        return mark_error(ld->name, ev->start_mark, "aliases (*) are not allowed");
    case YAML_SCALAR_EVENT:
        return on_scalar(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(ld, ev, SWORN_YAML_SEQ, ev->data.sequence_start.anchor,
                        ev->data.sequence_start.tag);
    case YAML_MAPPING_START_EVENT:
        return on_start(ld, ev, SWORN_YAML_MAP, ev->data.mapping_start.anchor,
                        ev->data.mapping_start.tag);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(ld, ev);
    case YAML_NO_EVENT:
    default:
        return mark_error(ld->name, ev->start_mark, "unexpected YAML event");
    }
}

static void loader_clear(struct loader *ld)
{
    while (ld->depth > 0) {
        ld->depth--;
        node_free(ld->stack[ld->depth].key);
        node_free(ld->stack[ld->depth].node);
    }
    node_free(ld->root);
    ld->root = NULL;
}

int sworn_yaml_load_mem(const char *name, const uint8_t *p, size_t len, struct sworn_yaml_doc **out)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    struct loader ld;
    struct sworn_yaml_doc *d = NULL;
    int parser_ready = 0, done = 0;

    memset(&ld, 0, sizeof(ld));
    SWORN_ENSURE(name != NULL && out != NULL && (p != NULL || len == 0), SWORN_ERR_ARG,
                 "yaml: NULL argument");
    ld.name = name;
    SWORN_ENSURE(len <= SWORN_YAML_MAX_BYTES, SWORN_ERR_RANGE, "%s: larger than %u bytes", name,
                 SWORN_YAML_MAX_BYTES);
    SWORN_GUARD(refuse_nul(name, p, len));
    d = calloc(1, sizeof(*d));
    SWORN_ENSURE(d != NULL, SWORN_ERR_NOMEM, "%s: out of memory", name);
    d->name = strdup(name);
    SWORN_ENSURE(d->name != NULL, SWORN_ERR_NOMEM, "%s: out of memory", name);
    SWORN_ENSURE(EVP_Digest(p == NULL ? (const uint8_t *)"" : p, len, d->digest, NULL, EVP_sha256(),
                            NULL) == 1,
                 SWORN_ERR_CRYPTO, "%s: SHA-256 failed", name);

    SWORN_ENSURE(yaml_parser_initialize(&parser) == 1, SWORN_ERR_NOMEM,
                 "%s: cannot start the YAML parser", name);
    parser_ready = 1;
    /* Only UTF-8: no guessing of UTF-16 from a byte order mark. */
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&parser, p == NULL ? (const unsigned char *)"" : p, len);
    while (!done) {
        int rc;

        if (yaml_parser_parse(&parser, &ev) != 1) {
            mark_error(name, parser.problem_mark, "%s%s%s",
                       parser.problem ? parser.problem : "malformed YAML",
                       parser.context ? " " : "", parser.context ? parser.context : "");
            goto fail;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&ld, &ev);
        yaml_event_delete(&ev);
        SWORN_GUARD(rc);
    }
    SWORN_ENSURE(ld.root != NULL, SWORN_ERR_FORMAT,
                 "%s:1:1: empty document (the root must be a mapping)", name);
    yaml_parser_delete(&parser);
    d->root = ld.root;
    *out = d;
    return 0;

fail:
    if (parser_ready)
        yaml_parser_delete(&parser);
    loader_clear(&ld);
    if (d != NULL) {
        free(d->name);
        free(d);
    }
    return -1;
}

int sworn_yaml_load_file(const char *path, struct sworn_yaml_doc **out)
{
    char *data = NULL;
    size_t len = 0;
    int rc;

    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "yaml: NULL argument");
    if (sworn_file_read(path, SWORN_YAML_MAX_BYTES, &data, &len) < 0)
        return -1;
    rc = sworn_yaml_load_mem(path, (const uint8_t *)data, len, out);
    free(data);
    return rc;
}

void sworn_yaml_free(struct sworn_yaml_doc *d)
{
    if (d == NULL)
        return;
    node_free(d->root);
    free(d->name);
    free(d);
}

const struct sworn_yaml_node *sworn_yaml_root(const struct sworn_yaml_doc *d)
{
    return d ? d->root : NULL;
}

void sworn_yaml_digest(const struct sworn_yaml_doc *d, uint8_t out[32])
{
    if (d == NULL)
        memset(out, 0, 32);
    else
        memcpy(out, d->digest, 32);
}

const char *sworn_yaml_name(const struct sworn_yaml_doc *d)
{
    return d ? d->name : "";
}

enum sworn_yaml_kind sworn_yaml_kind(const struct sworn_yaml_node *n)
{
    return n ? n->kind : (enum sworn_yaml_kind)0;
}

unsigned sworn_yaml_line(const struct sworn_yaml_node *n)
{
    return n ? n->line : 0;
}

unsigned sworn_yaml_col(const struct sworn_yaml_node *n)
{
    return n ? n->col : 0;
}

const char *sworn_yaml_text(const struct sworn_yaml_node *n, size_t *len)
{
    if (n == NULL || n->kind != SWORN_YAML_SCALAR) {
        if (len != NULL)
            *len = 0;
        return NULL;
    }
    if (len != NULL)
        *len = n->text_len;
    return n->text;
}

size_t sworn_yaml_len(const struct sworn_yaml_node *n)
{
    return (n == NULL || n->kind == SWORN_YAML_SCALAR) ? 0 : n->n;
}

const struct sworn_yaml_node *sworn_yaml_item(const struct sworn_yaml_node *n, size_t i)
{
    if (n == NULL || n->kind == SWORN_YAML_SCALAR || i >= n->n)
        return NULL;
    return n->items[i];
}

const char *sworn_yaml_key(const struct sworn_yaml_node *map, size_t i)
{
    if (map == NULL || map->kind != SWORN_YAML_MAP || i >= map->n)
        return NULL;
    return map->keys[i]->text;
}

const struct sworn_yaml_node *sworn_yaml_key_node(const struct sworn_yaml_node *map, size_t i)
{
    if (map == NULL || map->kind != SWORN_YAML_MAP || i >= map->n)
        return NULL;
    return map->keys[i];
}

const struct sworn_yaml_node *sworn_yaml_get(const struct sworn_yaml_node *map, const char *key)
{
    if (map == NULL || key == NULL || map->kind != SWORN_YAML_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->items[i];
    return NULL;
}

int sworn_yaml_error(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                     const char *fmt, ...)
{
    char msg[SWORN_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return sworn_err_set(SWORN_ERR_FORMAT, "%s:%u:%u: %s", sworn_yaml_name(d), n ? n->line : 1u,
                         n ? n->col : 1u, msg);
}

static const char *kind_name(enum sworn_yaml_kind k)
{
    switch (k) {
    case SWORN_YAML_SCALAR:
        return "a scalar";
    case SWORN_YAML_SEQ:
        return "a sequence";
    case SWORN_YAML_MAP:
        return "a mapping";
    default:
        return "nothing";
    }
}

int sworn_yaml_only_keys(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *map,
                         const char *const *allowed)
{
    char shown[SHOWN_MAX];

    if (map == NULL || map->kind != SWORN_YAML_MAP)
        return sworn_yaml_error(d, map, "expected a mapping, found %s",
                                kind_name(sworn_yaml_kind(map)));
    for (size_t i = 0; i < map->n; i++) {
        size_t j = 0;

        while (allowed != NULL && allowed[j] != NULL && strcmp(allowed[j], map->keys[i]->text))
            j++;
        if (allowed == NULL || allowed[j] == NULL) {
            printable(map->keys[i]->text, shown);
            return sworn_yaml_error(d, map->keys[i], "unknown key \"%s\"", shown);
        }
    }
    return 0;
}

/* The node must be a scalar; names what was found otherwise. */
static int need_scalar(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                       const char *what)
{
    if (n == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "%s: missing value (expected %s)", sworn_yaml_name(d),
                             what);
    if (n->kind != SWORN_YAML_SCALAR)
        return sworn_yaml_error(d, n, "expected %s, found %s", what, kind_name(n->kind));
    return 0;
}

int sworn_yaml_str(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                   const char **out)
{
    if (need_scalar(d, n, "a string") < 0)
        return -1;
    *out = n->text;
    return 0;
}

int sworn_yaml_bool(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n, int *out)
{
    if (need_scalar(d, n, "true or false") < 0)
        return -1;
    if (strcmp(n->text, "true") == 0)
        *out = 1;
    else if (strcmp(n->text, "false") == 0)
        *out = 0;
    else
        return sworn_yaml_error(d, n, "expected true or false");
    return 0;
}

int sworn_yaml_u64(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n, uint64_t min,
                   uint64_t max, uint64_t *out)
{
    uint64_t v;

    if (need_scalar(d, n, "an unsigned integer") < 0)
        return -1;
    /* Canonical decimal only: no sign, no leading zero (YAML 1.1 reads 010 as octal 8). */
    if (n->text_len == 0 || sworn_parse_u64(n->text, n->text_len, &v) < 0)
        return sworn_yaml_error(d, n, "expected an unsigned decimal integer in [%llu, %llu]",
                                (unsigned long long)min, (unsigned long long)max);
    if (v < min || v > max)
        return sworn_yaml_error(d, n, "%llu is outside [%llu, %llu]", (unsigned long long)v,
                                (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

int sworn_yaml_duration_ms(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n,
                           uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    size_t digits = 0;
    uint64_t v;

    if (need_scalar(d, n, "a duration") < 0)
        return -1;
    while (digits < n->text_len && n->text[digits] >= '0' && n->text[digits] <= '9')
        digits++;
    if (digits == 0)
        goto bad;
    if (sworn_parse_u64(n->text, digits, &v) < 0) {
        if (sworn_err_code() == SWORN_ERR_RANGE)
            return sworn_yaml_error(d, n, "duration too large");
        goto bad;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(n->text + digits, units[i].suffix) != 0)
            continue;
        if (v > UINT64_MAX / units[i].ms)
            return sworn_yaml_error(d, n, "duration too large");
        *out = v * units[i].ms;
        return 0;
    }
bad:
    return sworn_yaml_error(d, n,
                            "expected a duration: a decimal number and a unit, one of ms, s, m, "
                            "h, d (e.g. 250ms, 30s, 5m)");
}
