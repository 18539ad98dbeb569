/*
 * d_jlog.c -- JSON log lines on stderr (contract in d_jlog.h).
 */
#include "d_jlog.h"

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

/* Only bytes 0x20..0x7e: text the JSON escaper (utf8.h) leaves as it is. */
static int printable_ascii(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

void d_log(enum d_log_level level, const char *event, json_object *fields)
{
    json_object *line;
    struct timespec now;
    struct tm tm;
    char ts[40];
    const char *raw, *out;
    char *text;
    size_t len;

    if ((int)level < atomic_load(&min_level) || (int)level > D_LOG_ERROR) {
        json_object_put(fields);
        return;
    }
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    {
        /* strftime for the date and time, then the milliseconds: no truncation possible. */
        size_t n = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        int ms = (int)(now.tv_nsec / 1000000) % 1000;

        ts[n++] = '.';
        ts[n++] = (char)('0' + ms / 100);
        ts[n++] = (char)('0' + ms / 10 % 10);
        ts[n++] = (char)('0' + ms % 10);
        ts[n++] = 'Z';
        ts[n] = '\0';
    }
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
    /* A line of printable ASCII only (every decision's line, as a rule) is what the escaper
     * would return unchanged: it is written as it is, without the escaper's copy (issue 17). */
    if (raw != NULL && printable_ascii(raw)) {
        text = NULL;
        out = raw;
    } else {
        text = raw != NULL ? sworn_utf8_escape_dup(raw, SWORN_UTF8_ESCAPE_JSON) : NULL;
        if (text == NULL) {
            json_object_put(line);
            return;
        }
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
    json_object_put(line);
}

void d_log_msg(enum d_log_level level, const char *event, const char *msg)
{
    json_object *f = json_object_new_object();

    if (f != NULL)
        json_object_object_add(f, "msg", json_object_new_string(msg));
    d_log(level, event, f);
}
