/*
 * p_musage.c -- the token usage of a model API response (p_musage.h).
 */
#include "p_musage.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "p_http.h"
#include "p_json.h"

static const char bad_count[] = "the response's usage is not an integer of 0..4294967295";
static const char bad_json[] = "the response body is not strict JSON";
static const char bad_size[] = "the response body is larger than the usage reader's bound";
static const char bad_encoded[] = "the response body is compressed (Content-Encoding)";
static const char bad_cut[] = "the response ended before its end";
static const char no_usage[] = "the response reports no usage";
static const char no_memory[] = "the proxy ran out of memory reading the usage";
static const char bad_all[] =
    "the proxy holds its bound of usage buffers for all responses (SWORN_PMUSAGE_HELD_MAX)";

void sworn_pmusage_init(struct sworn_pmusage *u, enum sworn_pmodel_api api,
                        const char *content_type, size_t ct_len, const char *encoding,
                        size_t enc_len)
{
    memset(u, 0, sizeof(*u));
    u->api = api;
    u->sse =
        content_type != NULL && sworn_http_media_type_is(content_type, ct_len, "text/event-stream");
    if (encoding != NULL && !sworn_http_media_type_is(encoding, enc_len, "identity"))
        u->bad = bad_encoded;
}

void sworn_pmusage_share(struct sworn_pmusage *u, size_t *held)
{
    u->held = held;
}

void sworn_pmusage_free(struct sworn_pmusage *u)
{
    if (u->held != NULL)
        *u->held -= u->cap;
    free(u->buf);
    u->buf = NULL;
    u->len = u->cap = 0;
}

/* Append to buf within the bounds: 0, 1 over this reader's bound or the bound of all readers
 * together (nothing appended; the latter also sets all_full), -1 out of memory. */
static int append(struct sworn_pmusage *u, const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    if (n > SWORN_PMUSAGE_BUF_MAX - u->len)
        return 1;
    if (u->len + n > u->cap) {
        size_t cap = u->cap == 0 ? 4096 : u->cap;
        uint8_t *nb;

        while (cap < u->len + n)
            cap *= 2;
        if (cap > SWORN_PMUSAGE_BUF_MAX)
            cap = SWORN_PMUSAGE_BUF_MAX;
        if (u->held != NULL && cap - u->cap > SWORN_PMUSAGE_HELD_MAX - *u->held) {
            u->all_full = 1;
            return 1;
        }
        nb = realloc(u->buf, cap);
        if (nb == NULL)
            return -1;
        if (u->held != NULL)
            *u->held += cap - u->cap;
        u->buf = nb;
        u->cap = cap;
    }
    memcpy(u->buf + u->len, p, n);
    u->len += n;
    return 0;
}

/* One count at member name of object o: 0 absent, 1 read into *v, -1 not an integer in range. */
static int count_of(json_object *o, const char *name, uint64_t *v)
{
    json_object *m = NULL;
    int64_t t;

    if (!json_object_object_get_ex(o, name, &m))
        return 0;
    /* A fraction or an exponent reads as a double, a string as a string: refused. An integer
     * above INT64_MAX reads as INT64_MAX: above the bound all the same. */
    if (!json_object_is_type(m, json_type_int) || (t = json_object_get_int64(m)) < 0 ||
        (uint64_t)t > 4294967295u)
        return -1;
    *v = (uint64_t)t;
    return 1;
}

/* Take the counts of the usage object `usage` (any JSON value; only an object counts). */
static void take_usage(struct sworn_pmusage *u, json_object *usage)
{
    const char *in_name = u->api == SWORN_PMODEL_OPENAI_CHAT ? "prompt_tokens" : "input_tokens";
    const char *out_name =
        u->api == SWORN_PMODEL_OPENAI_CHAT ? "completion_tokens" : "output_tokens";
    uint64_t v = 0;
    int r;

    if (usage == NULL || !json_object_is_type(usage, json_type_object))
        return;
    if ((r = count_of(usage, in_name, &v)) < 0) {
        u->bad = bad_count;
        return;
    }
    if (r > 0 && (!u->have_in || v > u->in)) {
        u->in = v;
        u->have_in = 1;
    }
    if ((r = count_of(usage, out_name, &v)) < 0) {
        u->bad = bad_count;
        return;
    }
    if (r > 0 && (!u->have_out || v > u->out)) {
        u->out = v;
        u->have_out = 1;
    }
    if (u->api == SWORN_PMODEL_ANTHROPIC_MESSAGES) {
        /* Input the prompt cache took is not in input_tokens (red team rt-A): counted too. The
         * API's types let these two be null (not stated): read as absent. */
        json_object *m = NULL;

        if (json_object_object_get_ex(usage, "cache_creation_input_tokens", &m) && m == NULL)
            json_object_object_del(usage, "cache_creation_input_tokens");
        if (json_object_object_get_ex(usage, "cache_read_input_tokens", &m) && m == NULL)
            json_object_object_del(usage, "cache_read_input_tokens");
        if ((r = count_of(usage, "cache_creation_input_tokens", &v)) < 0) {
            u->bad = bad_count;
            return;
        }
        if (r > 0 && v > u->cache_write)
            u->cache_write = v;
        if ((r = count_of(usage, "cache_read_input_tokens", &v)) < 0) {
            u->bad = bad_count;
            return;
        }
        if (r > 0 && v > u->cache_read)
            u->cache_read = v;
    }
}

/* The usage objects of one JSON document (a whole response, or one SSE event's data). */
static void take_document(struct sworn_pmusage *u, json_object *root)
{
    json_object *usage = NULL, *inner = NULL;

    if (root == NULL || !json_object_is_type(root, json_type_object))
        return;
    if (json_object_object_get_ex(root, "usage", &usage))
        take_usage(u, usage);
    if (u->sse && u->api == SWORN_PMODEL_OPENAI_RESPONSES &&
        json_object_object_get_ex(root, "response", &inner) &&
        json_object_is_type(inner, json_type_object) &&
        json_object_object_get_ex(inner, "usage", &usage))
        take_usage(u, usage);
    if (u->sse && u->api == SWORN_PMODEL_ANTHROPIC_MESSAGES &&
        json_object_object_get_ex(root, "message", &inner) &&
        json_object_is_type(inner, json_type_object) &&
        json_object_object_get_ex(inner, "usage", &usage))
        take_usage(u, usage);
}

/* An SSE event ended: read its data as JSON, if it is. */
static int end_event(struct sworn_pmusage *u)
{
    json_object *root = NULL;
    const char *why = NULL;
    int rc = 0;

    if (u->event_over) {
        u->overflowed = 1;
    } else if (u->len > 0) {
        rc = sworn_pjson_parse(u->buf, u->len, &root, &why);
        if (rc == 0) {
            take_document(u, root);
            json_object_put(root);
        }
    }
    u->len = 0;
    u->event_over = 0;
    return rc < 0 ? -1 : 0;
}

/* The current SSE line ended (its terminator consumed). */
static int end_line(struct sworn_pmusage *u)
{
    int rc = 0;

    if (u->line_len == 0 && !u->in_data && !u->line_over)
        rc = end_event(u); /* a blank line dispatches the event */
    else if (u->in_data && !u->event_over && append(u, (const uint8_t *)"\n", 1) != 0)
        u->event_over = 1;
    u->line_len = 0;
    u->in_data = 0;
    u->skip_space = 0;
    u->line_over = 0;
    return rc;
}

/*
 * SSE: lines end in "\r\n", "\n" or "\r" (the spec's three). A "\r" at the end of one feed and
 * a "\n" at the start of the next are one terminator: line_over == 2 remembers the '\r'.
 */
static int feed_sse(struct sworn_pmusage *u, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[i];

        if (ch == '\n' && u->line_over == 2) { /* the '\n' of a "\r\n" split across feeds */
            u->line_over = 0;
            continue;
        }
        if (u->line_over == 2)
            u->line_over = 0;
        if (ch == '\r' || ch == '\n') {
            /* A data line's value was appended as it came; the ':' form is the field name. */
            if (end_line(u) != 0)
                return -1;
            if (ch == '\r')
                u->line_over = 2; /* a '\n' right after belongs to this terminator */
            continue;
        }
        if (u->in_data) {
            if (u->skip_space) {
                u->skip_space = 0;
                if (ch == ' ')
                    continue;
            }
            if (!u->event_over) {
                int r = append(u, &ch, 1);

                if (r < 0)
                    return -1;
                if (r > 0)
                    u->event_over = 1;
            }
            continue;
        }
        if (u->line_over)
            continue;
        if (u->line_len < sizeof(u->line))
            u->line[u->line_len++] = ch;
        if (ch == ':') {
            /* The field name is complete: "data" keeps the rest of the line. */
            if (u->line_len == 5 && memcmp(u->line, "data:", 5) == 0) {
                u->in_data = 1;
                u->skip_space = 1;
            } else {
                u->line_over = 1; /* another field, or a comment (": ..."): not kept */
            }
        } else if (u->line_len >= sizeof(u->line)) {
            u->line_over = 1;
        }
    }
    return 0;
}

/* The usage value the scan captured (at the end of a body past the bound): read strictly, then
 * as in a whole document. */
static void scan_take(struct sworn_pmusage *u)
{
    json_object *v = NULL;
    const char *why = NULL;

    if (u->js_cap_over || sworn_pjson_parse(u->js_val, u->js_val_len, &v, &why) != 0) {
        u->js_cap_over = 1; /* unreadable: no usage */
        return;
    }
    take_usage(u, v);
    json_object_put(v);
}

/*
 * Scan JSON text as it passes: strings (with their escapes) are skipped, so what a model wrote
 * inside one can never look like structure; the members of the top-level object are named, and
 * the value of one named "usage" is kept (up to sizeof(js_val) bytes).
 */
static void scan_json(struct sworn_pmusage *u, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = p[i];

        if (u->js_next && !u->js_in_str) {
            if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ':')
                continue;
            u->js_next = 0;
            u->js_cap = 1;
            u->js_val_len = 0;
        }
        if (u->js_cap) {
            if (!u->js_in_str && u->js_depth == 1 && (ch == ',' || ch == '}'))
                u->js_cap = 0; /* the value is whole */
            else if (u->js_val_len < sizeof(u->js_val))
                u->js_val[u->js_val_len++] = ch;
            else
                u->js_cap_over = 1;
        }
        if (u->js_in_str) {
            if (u->js_esc) {
                u->js_esc = 0;
            } else if (ch == '\\') {
                u->js_esc = 1;
                if (u->js_naming)
                    u->js_name_esc = 1;
            } else if (ch == '"') {
                u->js_in_str = 0;
                if (u->js_naming) {
                    u->js_naming = 0;
                    if (u->js_name_esc)
                        u->js_odd = 1;
                    else if (u->js_name_len == 5 && memcmp(u->js_name, "usage", 5) == 0) {
                        u->js_usages++;
                        u->js_next = 1;
                    }
                }
            } else if (u->js_naming) {
                if (u->js_name_len < sizeof(u->js_name))
                    u->js_name[u->js_name_len] = ch;
                if (u->js_name_len <= sizeof(u->js_name))
                    u->js_name_len++;
            }
            continue;
        }
        switch (ch) {
        case '"':
            u->js_in_str = 1;
            if (u->js_depth == 1 && u->js_expect_name) {
                u->js_naming = 1;
                u->js_name_len = 0;
                u->js_name_esc = 0;
                u->js_expect_name = 0;
            }
            break;
        case '{':
        case '[':
            if (u->js_depth == 0 && ch == '{')
                u->js_expect_name = 1;
            u->js_depth++;
            break;
        case '}':
        case ']':
            if (u->js_depth > 0)
                u->js_depth--;
            break;
        case ',':
            if (u->js_depth == 1)
                u->js_expect_name = 1;
            break;
        default:
            break;
        }
    }
}

int sworn_pmusage_feed(struct sworn_pmusage *u, const uint8_t *p, size_t n)
{
    int r;

    if (u->bad == bad_encoded || u->bad == no_memory)
        return 0;
    if (u->sse) {
        if (feed_sse(u, p, n) == 0)
            return 0;
        u->bad = no_memory;
        sworn_pmusage_free(u);
        return -1;
    }
    if (u->bad == NULL)
        scan_json(u, p, n);
    if (u->js_over)
        return 0;
    r = append(u, p, n);
    if (r > 0) {
        /* Past the bound: the scan goes on without the buffer. */
        u->js_over = 1;
        sworn_pmusage_free(u);
    } else if (r < 0) {
        u->bad = no_memory;
        sworn_pmusage_free(u);
        return -1;
    }
    return 0;
}

int sworn_pmusage_finish(struct sworn_pmusage *u, int complete, uint64_t *in, uint64_t *out,
                         const char **missing)
{
    *in = *out = 0;
    if (u->bad == NULL && complete && !u->sse && u->js_over) {
        /* The body passed the bound: its usage is the scan's, when the text ended as one object
         * with exactly one top-level "usage" (two: no reader could say which counts). */
        if (u->js_usages > 1 || u->js_odd || u->js_in_str || u->js_depth != 0 || u->js_cap)
            u->bad = bad_json;
        else if (u->js_usages == 1)
            scan_take(u);
        if (u->bad == NULL && (u->js_usages == 0 || u->js_cap_over))
            u->bad = u->all_full ? bad_all : bad_size;
    } else if (u->bad == NULL && complete && !u->sse) {
        json_object *root = NULL;
        const char *why = NULL;
        int rc = sworn_pjson_parse(u->buf, u->len, &root, &why);

        if (rc == 0) {
            take_document(u, root);
            json_object_put(root);
        } else {
            u->bad = rc > 0 ? bad_json : no_memory;
        }
    } else if (u->bad == NULL && complete && u->sse && (u->len > 0 || u->event_over)) {
        /* A stream whose last event had no blank line after it: the end of the body ends it. */
        if (end_event(u) != 0)
            u->bad = no_memory;
    }
    sworn_pmusage_free(u);
    if (u->bad != NULL) {
        *missing = u->bad;
        return 0;
    }
    if (!complete) {
        *missing = bad_cut;
        return 0;
    }
    if (!u->have_in || !u->have_out) {
        *missing = u->all_full ? bad_all : u->overflowed ? bad_size : no_usage;
        return 0;
    }
    /* Each term is at most 4294967295; the sum is held to the wire's bound (a sum that large
     * spends any budget sworn can hold all the same). */
    *in = u->in + u->cache_write + u->cache_read;
    if (*in > 4294967295u)
        *in = 4294967295u;
    *out = u->out;
    return 1;
}
