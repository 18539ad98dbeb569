/*
 * d_jlog.c -- JSON log lines on stderr (contract in d_jlog.h).
 */
#include "d_jlog.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

static atomic_int min_level = D_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void d_log_set_level(enum d_log_level level)
{
    atomic_store(&min_level, (int)level);
}

#define D_LOG_TS_CAP 40

/* Now, as RFC 3339 UTC with milliseconds, into ts. */
static void format_ts(char ts[D_LOG_TS_CAP])
{
    struct timespec now;
    struct tm tm;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    {
        /* strftime for the date and time, then the milliseconds: no truncation possible. */
        size_t n = strftime(ts, D_LOG_TS_CAP, "%Y-%m-%dT%H:%M:%S", &tm);
        int ms = (int)(now.tv_nsec / 1000000) % 1000;

        ts[n++] = '.';
        ts[n++] = (char)('0' + ms / 100);
        ts[n++] = (char)('0' + ms / 10 % 10);
        ts[n++] = (char)('0' + ms % 10);
        ts[n++] = 'Z';
        ts[n] = '\0';
    }
}

/* Only bytes 0x20..0x7e: text the JSON escaper (utf8.h) leaves as it is. */
static int printable_ascii(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

/* Write one line (raw: JSON as json-c writes it; NULL: nothing), escaped as d_jlog.h says. */
static void write_line(const char *raw)
{
    const char *out;
    char *text;
    size_t len;

    /* A line of printable ASCII only (every decision's line, as a rule) is what the escaper
     * would return unchanged: it is written as it is, without the escaper's copy (issue 17). */
    if (raw != NULL && printable_ascii(raw)) {
        text = NULL;
        out = raw;
    } else {
        text = raw != NULL ? sworn_utf8_escape_dup(raw, SWORN_UTF8_ESCAPE_JSON) : NULL;
        if (text == NULL)
            return;
        out = text;
    }
    len = strlen(out);
    {
        /* One write per line, so concurrent lines never interleave. */
        char buf[8192];

        if (len + 1 <= sizeof(buf)) {
            memcpy(buf, out, len);
            buf[len] = '\n';
            (void)!write(STDERR_FILENO, buf, len + 1);
        } else {
            (void)!write(STDERR_FILENO, out, len);
            (void)!write(STDERR_FILENO, "\n", 1);
        }
    }
    free(text);
}

void d_log(enum d_log_level level, const char *event, json_object *fields)
{
    json_object *line;
    char ts[D_LOG_TS_CAP];
    const char *raw;

    if ((int)level < atomic_load(&min_level) || (int)level > D_LOG_ERROR) {
        json_object_put(fields);
        return;
    }
    format_ts(ts);
    line = json_object_new_object();
    if (line == NULL) {
        json_object_put(fields);
        return;
    }
    json_object_object_add(line, "ts", json_object_new_string(ts));
    json_object_object_add(line, "level", json_object_new_string(level_names[level]));
    json_object_object_add(line, "event", json_object_new_string(event));
    if (fields != NULL) {
        json_object_object_foreach(fields, key, val)
        {
            json_object_object_add(line, key, json_object_get(val));
        }
        json_object_put(fields);
    }
    /* json-c escapes C0, '"' and '\\' only and copies every other byte: the escaper makes the line
     * valid UTF-8 JSON without control, bidi or invisible characters (utf8.h), whatever bytes a
     * message quotes. */
    raw = json_object_to_json_string_ext(line,
                                         JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    write_line(raw);
    json_object_put(line);
}

/* Append s to *w as a JSON string as json-c writes it (JSON_C_TO_STRING_NOSLASHESCAPE): '"' and
 * '\\' escaped, \b \f \n \r \t, other bytes below 0x20 as \u00XX, every other byte as it is
 * (write_line escapes the rest). The caller made room for 6 bytes per byte of s, plus 2. */
static void put_str(char **w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    char *o = *w;

    *o++ = '"';
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        switch (c) {
        case '"':
        case '\\':
            *o++ = '\\';
            *o++ = (char)c;
            break;
        case '\b':
            *o++ = '\\';
            *o++ = 'b';
            break;
        case '\f':
            *o++ = '\\';
            *o++ = 'f';
            break;
        case '\n':
            *o++ = '\\';
            *o++ = 'n';
            break;
        case '\r':
            *o++ = '\\';
            *o++ = 'r';
            break;
        case '\t':
            *o++ = '\\';
            *o++ = 't';
            break;
        default:
            if (c < 0x20) {
                memcpy(o, "\\u00", 4);
                o[4] = hex[c >> 4];
                o[5] = hex[c & 15];
                o += 6;
            } else {
                *o++ = (char)c;
            }
            break;
        }
    }
    *o++ = '"';
    *w = o;
}

void d_log_fields(enum d_log_level level, const char *event, const struct d_log_field *f, size_t n)
{
    char ts[D_LOG_TS_CAP], stack[4096], *line = stack, *w;
    const char *head[3][2] = {{"ts", ts}, {"level", NULL}, {"event", event}};
    size_t cap = 64;

    if ((int)level < atomic_load(&min_level) || (int)level > D_LOG_ERROR)
        return;
    format_ts(ts);
    head[1][1] = level_names[level];
    /* Room for the worst case: every byte of a key or a string escaped as \u00XX. */
    for (size_t i = 0; i < 3; i++)
        cap += 6 * (strlen(head[i][0]) + strlen(head[i][1])) + 8;
    for (size_t i = 0; i < n; i++)
        cap += 6 * (strlen(f[i].key) + (f[i].str != NULL ? strlen(f[i].str) : 0)) + 32;
    if (cap > sizeof(stack) && (line = malloc(cap)) == NULL)
        return;
    w = line;
    *w++ = '{';
    for (size_t i = 0; i < 3 + n; i++) {
        const char *key = i < 3 ? head[i][0] : f[i - 3].key;

        if (i > 0)
            *w++ = ',';
        put_str(&w, key);
        *w++ = ':';
        if (i < 3)
            put_str(&w, head[i][1]);
        else if (f[i - 3].str != NULL)
            put_str(&w, f[i - 3].str);
        else
            w += snprintf(w, 24, "%" PRId64, f[i - 3].num);
    }
    *w++ = '}';
    *w = '\0';
    write_line(line);
    if (line != stack)
        free(line);
}

void d_log_msg(enum d_log_level level, const char *event, const char *msg)
{
    json_object *f = json_object_new_object();

    if (f != NULL)
        json_object_object_add(f, "msg", json_object_new_string(msg));
    d_log(level, event, f);
}
