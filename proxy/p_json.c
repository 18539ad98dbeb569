/*
 * p_json.c -- strict JSON checking, and the numbers of a subtree with their pointers (p_json.h).
 *
 * One recursive-descent scanner (depth bounded by SWORN_PJSON_DEPTH_MAX) does both jobs: checking
 * (grammar, UTF-8, escapes, duplicate member names) and collecting numbers (the pointer of the
 * value being scanned is kept as the scanner descends). Only text the checker accepted is given
 * to json-c, and only such text is scanned for numbers.
 */
#include "p_json.h"

#include <stdlib.h>
#include <string.h>

#include "encoding.h"
#include "err.h"
#include "utf8.h"

/* The pointer being built while collecting: `under` plus one relative pointer of the wire's
 * bound, with room for the segment that overflows it. */
#define POINTER_BUILD_MAX (2u * SWORN_PJSON_POINTER_MAX + 64u)

/* One member name of an open object: the hash of its decoded text and its escaped span. */
struct member {
    uint64_t hash;
    size_t start, end; /* the bytes between the quotes */
};

struct scan {
    const uint8_t *p;
    size_t n, i;
    unsigned depth;
    const char *why;
    int oom;
    /* checking: the member names of the open objects, innermost last */
    int check_members;
    struct member *members;
    size_t nmembers, members_cap;
    /* collecting numbers */
    int collect;
    char ptr[POINTER_BUILD_MAX + 1];
    size_t ptr_len;
    int ptr_over; /* the current pointer did not fit in ptr */
    const char *under;
    size_t under_len;
    struct sworn_pjson_number *out;
    size_t cap, count;
    int more;
};

static int refuse(struct scan *s, const char *sentence)
{
    if (s->why == NULL)
        s->why = sentence;
    return 1;
}

static void skip_ws(struct scan *s)
{
    while (s->i < s->n &&
           (s->p[s->i] == ' ' || s->p[s->i] == '\t' || s->p[s->i] == '\n' || s->p[s->i] == '\r'))
        s->i++;
}

/* The 4 hex digits at p[0..4) (the caller checked there are 4 bytes), or -1. */
static long hex4(const uint8_t *p)
{
    long v = 0;

    for (int k = 0; k < 4; k++) {
        int d = sworn_hex_digit((char)p[k]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/*
 * One raw UTF-8 character at p[*pos..end) (RFC 3629 strict). OUT: *cp, *pos advanced.
 * Returns 0, or 1 when the bytes are not UTF-8.
 */
static int utf8_char(const uint8_t *p, size_t end, size_t *pos, uint32_t *cp)
{
    uint8_t c = p[*pos];
    uint32_t v, min;
    size_t len;

    if (c < 0x80) {
        *cp = c;
        (*pos)++;
        return 0;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1Fu, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0Fu, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 1;
    }
    if (end - *pos < len)
        return 1;
    for (size_t k = 1; k < len; k++) {
        uint8_t t = p[*pos + k];
        if ((t & 0xC0u) != 0x80u)
            return 1;
        v = (v << 6) | (t & 0x3Fu);
    }
    if (v < min || v > 0x10FFFFu || (v >= 0xD800u && v <= 0xDFFFu))
        return 1;
    *cp = v;
    *pos += len;
    return 0;
}

/*
 * The next decoded character of the string whose bytes (between the quotes) end at `end`,
 * starting at *pos. Returns 0 with *cp, 1 when the string breaks a rule (s->why set), or 2 at the
 * end of the string.
 */
static int next_char(struct scan *s, size_t end, size_t *pos, uint32_t *cp)
{
    const uint8_t *p = s->p;
    long hi, lo;

    if (*pos >= end)
        return 2;
    if (p[*pos] < 0x20)
        return refuse(s, "the body is not strict JSON: a string holds a raw control character");
    if (p[*pos] != '\\') {
        if (utf8_char(p, end, pos, cp) != 0)
            return refuse(s, "the body is not strict JSON: a string is not UTF-8");
        return 0;
    }
    if (end - *pos < 2)
        return refuse(s, "the body is not strict JSON: a string ends in a backslash");
    switch (p[*pos + 1]) {
    case '"':
        *cp = '"';
        break;
    case '\\':
        *cp = '\\';
        break;
    case '/':
        *cp = '/';
        break;
    case 'b':
        *cp = 0x08;
        break;
    case 'f':
        *cp = 0x0C;
        break;
    case 'n':
        *cp = 0x0A;
        break;
    case 'r':
        *cp = 0x0D;
        break;
    case 't':
        *cp = 0x09;
        break;
    case 'u':
        if (end - *pos < 6 || (hi = hex4(p + *pos + 2)) < 0)
            return refuse(s, "the body is not strict JSON: a \\u escape without four hex digits");
        if (hi >= 0xDC00 && hi <= 0xDFFF)
            return refuse(s, "the body is not strict JSON: a \\u escape of a lone low surrogate");
        if (hi >= 0xD800 && hi <= 0xDBFF) {
            if (end - *pos < 12 || p[*pos + 6] != '\\' || p[*pos + 7] != 'u' ||
                (lo = hex4(p + *pos + 8)) < 0xDC00 || lo > 0xDFFF)
                return refuse(s, "the body is not strict JSON: a \\u escape of a high "
                                 "surrogate without its low surrogate");
            *cp = 0x10000u + (((uint32_t)hi - 0xD800u) << 10) + ((uint32_t)lo - 0xDC00u);
            *pos += 12;
            return 0;
        }
        *cp = (uint32_t)hi;
        *pos += 6;
        return 0;
    default:
        return refuse(s, "the body is not strict JSON: a backslash escape RFC 8259 does not "
                         "define");
    }
    *pos += 2;
    return 0;
}

/* Encode cp as UTF-8 into out (4 bytes); returns the length. */
static size_t utf8_put(uint32_t cp, uint8_t out[4])
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Append bytes to the pointer being built; past its room the pointer is marked over. */
static void ptr_append(struct scan *s, const void *bytes, size_t len)
{
    if (s->ptr_over || len > POINTER_BUILD_MAX - s->ptr_len) {
        s->ptr_over = 1;
        return;
    }
    memcpy(s->ptr + s->ptr_len, bytes, len);
    s->ptr_len += len;
}

/* Append a decoded member-name character to the pointer, with RFC 6901's two escapes. */
static void ptr_append_char(struct scan *s, uint32_t cp)
{
    uint8_t u[4];

    if (cp == '~')
        ptr_append(s, "~0", 2);
    else if (cp == '/')
        ptr_append(s, "~1", 2);
    else
        ptr_append(s, u, utf8_put(cp, u));
}

/*
 * A string at s->i (its opening quote). For a member name (is_name): OUT *hash of its decoded
 * text, *start and *end its escaped span; U+0000 is refused; when collecting, the decoded name is
 * appended to the pointer. Returns 0 or 1.
 */
static int scan_string(struct scan *s, int is_name, uint64_t *hash, size_t *start, size_t *end)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    size_t b = s->i + 1, e = b, pos;
    uint32_t cp;
    int rc;

    /* Find the closing quote first (a quote after a backslash is escaped). */
    while (e < s->n && s->p[e] != '"')
        e += s->p[e] == '\\' ? 2 : 1;
    if (e >= s->n)
        return refuse(s, "the body is not strict JSON: a string has no closing quote");
    pos = b;
    while ((rc = next_char(s, e, &pos, &cp)) == 0) {
        if (!is_name)
            continue;
        if (cp == 0)
            return refuse(s, "the body is not strict JSON: a member name holds U+0000");
        for (int k = 0; k < 4; k++) {
            h ^= (cp >> (8 * k)) & 0xFFu;
            h *= 1099511628211ull;
        }
        if (s->collect)
            ptr_append_char(s, cp);
    }
    if (rc == 1)
        return 1;
    if (is_name) {
        *hash = h;
        *start = b;
        *end = e;
    }
    s->i = e + 1;
    return 0;
}

/* Are the two member names (escaped spans of checked strings) equal once decoded? */
static int names_equal(struct scan *s, const struct member *a, const struct member *b)
{
    size_t pa = a->start, pb = b->start;

    for (;;) {
        uint32_t ca = 0, cb = 0;
        int ra = next_char(s, a->end, &pa, &ca), rb = next_char(s, b->end, &pb, &cb);

        if (ra != rb)
            return 0;
        if (ra == 2)
            return 1;
        if (ra != 0 || ca != cb)
            return 0;
    }
}

static int by_hash(const void *x, const void *y)
{
    const struct member *a = x, *b = y;

    return a->hash < b->hash ? -1 : a->hash > b->hash;
}

/* The members of the object whose names start at members[base]: any two equal? 0 or 1. */
static int check_duplicates(struct scan *s, size_t base)
{
    struct member *m = s->members + base;
    size_t count = s->nmembers - base;

    if (count < 2)
        return 0;
    qsort(m, count, sizeof(*m), by_hash);
    for (size_t a = 0; a + 1 < count; a++)
        for (size_t b = a + 1; b < count && m[b].hash == m[a].hash; b++)
            if (names_equal(s, &m[a], &m[b]))
                return refuse(s, "the body is not strict JSON: an object has two members of "
                                 "one name");
    return 0;
}

static int push_member(struct scan *s, uint64_t hash, size_t start, size_t end)
{
    if (s->nmembers == s->members_cap) {
        size_t cap = s->members_cap == 0 ? 64 : s->members_cap * 2;
        struct member *m = realloc(s->members, cap * sizeof(*m));

        if (m == NULL) {
            s->oom = 1;
            return refuse(s, "out of memory");
        }
        s->members = m;
        s->members_cap = cap;
    }
    s->members[s->nmembers++] = (struct member){hash, start, end};
    return 0;
}

/* Does the pointer hold only characters safe in the record (common/utf8.h's list)? */
static int pointer_safe(const char *p, size_t len)
{
    size_t pos = 0;
    uint32_t cp;

    while (pos < len)
        if (utf8_char((const uint8_t *)p, len, &pos, &cp) != 0 || sworn_utf8_is_control(cp))
            return 0;
    return 1;
}

/* A number at s->i (RFC 8259 grammar); when collecting, recorded under its pointer. */
static int scan_number(struct scan *s)
{
    size_t b = s->i, i = s->i;

    if (i < s->n && s->p[i] == '-')
        i++;
    if (i < s->n && s->p[i] == '0') {
        i++;
    } else if (i < s->n && s->p[i] >= '1' && s->p[i] <= '9') {
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    } else {
        return refuse(s, "the body is not strict JSON: a value that is none of RFC 8259's");
    }
    if (i < s->n && s->p[i] == '.') {
        i++;
        if (i >= s->n || s->p[i] < '0' || s->p[i] > '9')
            return refuse(s, "the body is not strict JSON: a number with no digit after '.'");
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    }
    if (i < s->n && (s->p[i] == 'e' || s->p[i] == 'E')) {
        i++;
        if (i < s->n && (s->p[i] == '+' || s->p[i] == '-'))
            i++;
        if (i >= s->n || s->p[i] < '0' || s->p[i] > '9')
            return refuse(s, "the body is not strict JSON: a number with no digit in its "
                             "exponent");
        while (i < s->n && s->p[i] >= '0' && s->p[i] <= '9')
            i++;
    }
    s->i = i;
    if (!s->collect)
        return 0;
    /* Under `under`, strictly: the pointer is under + "/..." (or anything non-empty for ""). */
    if (s->ptr_len <= s->under_len || memcmp(s->ptr, s->under, s->under_len) != 0 ||
        s->ptr[s->under_len] != '/')
        return 0;
    {
        const char *rel = s->ptr + s->under_len;
        size_t rel_len = s->ptr_len - s->under_len;

        if (s->ptr_over || rel_len > SWORN_PJSON_POINTER_MAX ||
            i - b > SWORN_PJSON_NUMBER_TEXT_MAX || s->count >= s->cap ||
            !pointer_safe(rel, rel_len)) {
            s->more = 1;
            return 0;
        }
        memcpy(s->out[s->count].pointer, rel, rel_len);
        s->out[s->count].pointer[rel_len] = '\0';
        memcpy(s->out[s->count].text, s->p + b, i - b);
        s->out[s->count].text[i - b] = '\0';
        s->count++;
    }
    return 0;
}

static int scan_value(struct scan *s);

static int scan_object(struct scan *s)
{
    size_t base = s->nmembers, members = 0, ptr_len = s->ptr_len;
    int ptr_over = s->ptr_over;

    s->i++; /* '{' */
    skip_ws(s);
    if (s->i < s->n && s->p[s->i] == '}') {
        s->i++;
        return 0;
    }
    for (;;) {
        uint64_t hash = 0;
        size_t start = 0, end = 0;

        if (s->i >= s->n || s->p[s->i] != '"')
            return refuse(s, "the body is not strict JSON: an object member does not start "
                             "with a double-quoted name");
        if (++members > SWORN_PJSON_MEMBERS_MAX)
            return refuse(s, "the body is not strict JSON: an object has more than 65536 "
                             "members");
        if (s->collect)
            ptr_append(s, "/", 1);
        if (scan_string(s, 1, &hash, &start, &end) != 0)
            return 1;
        if (s->check_members && push_member(s, hash, start, end) != 0)
            return 1;
        skip_ws(s);
        if (s->i >= s->n || s->p[s->i] != ':')
            return refuse(s, "the body is not strict JSON: a member name without ':'");
        s->i++;
        skip_ws(s);
        if (scan_value(s) != 0)
            return 1;
        s->ptr_len = ptr_len;
        s->ptr_over = ptr_over;
        skip_ws(s);
        if (s->i < s->n && s->p[s->i] == ',') {
            s->i++;
            skip_ws(s);
            continue;
        }
        if (s->i < s->n && s->p[s->i] == '}') {
            s->i++;
            break;
        }
        return refuse(s, "the body is not strict JSON: an object member is not followed by ',' "
                         "or '}'");
    }
    if (s->check_members) {
        if (check_duplicates(s, base) != 0)
            return 1;
        s->nmembers = base;
    }
    return 0;
}

static int scan_array(struct scan *s)
{
    size_t index = 0, ptr_len = s->ptr_len;
    int ptr_over = s->ptr_over;

    s->i++; /* '[' */
    skip_ws(s);
    if (s->i < s->n && s->p[s->i] == ']') {
        s->i++;
        return 0;
    }
    for (;;) {
        if (s->collect) {
            char digits[24];
            size_t k = sizeof(digits), v = index;

            do {
                digits[--k] = (char)('0' + v % 10);
                v /= 10;
            } while (v != 0);
            ptr_append(s, "/", 1);
            ptr_append(s, digits + k, sizeof(digits) - k);
        }
        if (scan_value(s) != 0)
            return 1;
        s->ptr_len = ptr_len;
        s->ptr_over = ptr_over;
        index++;
        skip_ws(s);
        if (s->i < s->n && s->p[s->i] == ',') {
            s->i++;
            skip_ws(s);
            continue;
        }
        if (s->i < s->n && s->p[s->i] == ']') {
            s->i++;
            return 0;
        }
        return refuse(s, "the body is not strict JSON: an array element is not followed by ',' "
                         "or ']'");
    }
}

static int scan_literal(struct scan *s, const char *word)
{
    size_t len = strlen(word);

    if (s->n - s->i < len || memcmp(s->p + s->i, word, len) != 0)
        return refuse(s, "the body is not strict JSON: a value that is none of RFC 8259's");
    s->i += len;
    return 0;
}

static int scan_value(struct scan *s)
{
    int rc;

    if (s->i >= s->n)
        return refuse(s, "the body is not strict JSON: it ends where a value should be");
    switch (s->p[s->i]) {
    case '{':
    case '[':
        if (++s->depth > SWORN_PJSON_DEPTH_MAX)
            return refuse(s, "the body is not strict JSON: arrays and objects nest more than 64 "
                             "deep");
        rc = s->p[s->i] == '{' ? scan_object(s) : scan_array(s);
        s->depth--;
        return rc;
    case '"':
        return scan_string(s, 0, NULL, NULL, NULL);
    case 't':
        return scan_literal(s, "true");
    case 'f':
        return scan_literal(s, "false");
    case 'n':
        return scan_literal(s, "null");
    default:
        return scan_number(s);
    }
}

/* The whole text: whitespace, one value, whitespace. */
static int scan_text(struct scan *s)
{
    if (s->n >= 3 && s->p[0] == 0xEF && s->p[1] == 0xBB && s->p[2] == 0xBF)
        return refuse(s, "the body is not strict JSON: it starts with a byte order mark");
    skip_ws(s);
    if (s->i >= s->n)
        return refuse(s, "the body is not strict JSON: it is empty");
    if (scan_value(s) != 0)
        return 1;
    skip_ws(s);
    if (s->i != s->n)
        return refuse(s, "the body is not strict JSON: bytes follow the value");
    return 0;
}

int sworn_pjson_parse(const uint8_t *text, size_t len, struct json_object **root, const char **why)
{
    struct scan s = {.p = text, .n = len, .check_members = 1};
    struct json_tokener *tok;
    struct json_object *o;
    int rc, parsed_all;

    *root = NULL;
    *why = NULL;
    if (text == NULL && len > 0)
        return sworn_err_set(SWORN_ERR_ARG, "json: no text");
    if (len > (size_t)INT32_MAX) {
        *why = "the body is not strict JSON: it is longer than 2 GiB";
        return 1;
    }
    rc = scan_text(&s);
    free(s.members);
    if (s.oom)
        return sworn_err_set(SWORN_ERR_NOMEM, "json: out of memory checking a body");
    if (rc != 0) {
        *why = s.why;
        return 1;
    }
    /* json-c takes a level for every value, scalars too: N nested containers need N + 1. */
    tok = json_tokener_new_ex((int)SWORN_PJSON_DEPTH_MAX + 1);
    if (tok == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "json: out of memory for the tokener");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    o = json_tokener_parse_ex(tok, (const char *)text, (int)len);
    /* A number or literal at the top level may still be going on for json-c: its end is the
     * text's end, which json-c learns from a NUL. */
    if (o == NULL && json_tokener_get_error(tok) == json_tokener_continue)
        o = json_tokener_parse_ex(tok, "", 1);
    parsed_all = json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    if (!parsed_all) {
        /* The checker accepted what json-c did not: say so rather than guess (never seen). */
        json_object_put(o);
        *why = "the body is not strict JSON: json-c could not read it";
        return 1;
    }
    *root = o;
    return 0;
}

void sworn_pjson_numbers(const uint8_t *text, size_t len, const char *under,
                         struct sworn_pjson_number *out, size_t cap, size_t *n, int *more)
{
    /* The same checks as sworn_pjson_parse (duplicates too), so refused text gives nothing. */
    struct scan s = {.p = text, .n = len, .check_members = 1, .collect = 1, .out = out, .cap = cap};
    int rc;

    s.under = under != NULL ? under : "";
    s.under_len = strlen(s.under);
    *n = 0;
    *more = 0;
    if (text == NULL || s.under_len > POINTER_BUILD_MAX) {
        *more = 1;
        return;
    }
    rc = scan_text(&s);
    free(s.members);
    if (rc != 0) {
        *more = 1;
        return;
    }
    *n = s.count;
    *more = s.more;
}
