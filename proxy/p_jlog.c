/*
 * p_jlog.c -- sworn-proxy's JSON log lines (contract in p_jlog.h).
 *
 * The time stamp and the escaping are decisiond's (decisiond/d_jlog.c, d_log): the same
 * strftime-then-milliseconds stamp, the same json-c flags, the same sworn_utf8_escape_dup call.
 * What differs: the output fd is chosen by the caller, the header fields cannot be overwritten,
 * and a line is always one write (d_log writes a line over 8 KiB in two).
 */
#include "p_jlog.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "utf8.h"

static atomic_int log_fd = STDERR_FILENO;
static atomic_int min_level = SWORN_PLOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void sworn_plog_open(int fd)
{
    atomic_store(&log_fd, fd < 0 ? STDERR_FILENO : fd);
}

void sworn_plog_set_level(enum sworn_plog_level level)
{
    atomic_store(&min_level, (int)level);
}

/* "2026-12-02T12:00:00.123Z" into ts (at least 25 bytes). */
static void stamp(char *ts, size_t cap)
{
    struct timespec now;
    struct tm tm;
    size_t n;
    int ms;

    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    /* strftime for the date and time, then the milliseconds: no truncation possible. */
    n = strftime(ts, cap - 6, "%Y-%m-%dT%H:%M:%S", &tm);
    ms = (int)(now.tv_nsec / 1000000) % 1000;
    ts[n++] = '.';
    ts[n++] = (char)('0' + ms / 100);
    ts[n++] = (char)('0' + ms / 10 % 10);
    ts[n++] = (char)('0' + ms % 10);
    ts[n++] = 'Z';
    ts[n] = '\0';
}

/* Write all of p[0..len) with as few writes as the kernel allows (one, for a line). */
static void write_line(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* logging never stops the proxy */
        p += n;
        len -= (size_t)n;
    }
}

void sworn_plog(enum sworn_plog_level lvl, const char *event, json_object *fields)
{
    json_object *line;
    char ts[40];
    char *text, *withnl;
    size_t len;

    if ((int)lvl < atomic_load(&min_level) || (int)lvl < SWORN_PLOG_DEBUG ||
        (int)lvl > SWORN_PLOG_ERROR) {
        json_object_put(fields);
        return;
    }
    stamp(ts, sizeof(ts));
    line = json_object_new_object();
    if (line == NULL) {
        json_object_put(fields);
        return;
    }
    json_object_object_add(line, "ts", json_object_new_string(ts));
    json_object_object_add(line, "level", json_object_new_string(level_names[lvl]));
    json_object_object_add(line, "event", json_object_new_string(event ? event : "unnamed"));
    if (fields != NULL && json_object_is_type(fields, json_type_object)) {
        json_object_object_foreach(fields, key, val)
        {
            if (strcmp(key, "ts") == 0 || strcmp(key, "level") == 0 || strcmp(key, "event") == 0)
                continue;
            json_object_object_add(line, key, json_object_get(val));
        }
    }
    json_object_put(fields);
    /* As d_log: json-c escapes C0, '"' and '\\' only and copies every other byte; the escaper
     * makes the line valid UTF-8 JSON without control, bidi or invisible characters. */
    text = sworn_utf8_escape_dup(json_object_to_json_string_ext(
                                     line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                                 SWORN_UTF8_ESCAPE_JSON);
    json_object_put(line);
    if (text == NULL)
        return;
    len = strlen(text);
    withnl = realloc(text, len + 2);
    if (withnl == NULL) {
        free(text);
        return;
    }
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    write_line(atomic_load(&log_fd), withnl, len + 1);
    free(withnl);
}

/* Add s as key, cut at SWORN_PLOG_FIELD_MAX bytes on a character boundary (then also
 * "<key>_truncated": true); nothing for NULL. */
static void add_str(json_object *o, const char *key, const char *s)
{
    size_t len;

    if (s == NULL)
        return;
    len = strlen(s);
    if (len > SWORN_PLOG_FIELD_MAX) {
        char flag[64];
        size_t cut = SWORN_PLOG_FIELD_MAX;

        /* Back over at most 3 continuation bytes, so the cut falls before a character. */
        for (int i = 0; i < 3 && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80; i++)
            cut--;
        json_object_object_add(o, key, json_object_new_string_len(s, (int)cut));
        strcpy(flag, key);
        strcat(flag, "_truncated");
        json_object_object_add(o, flag, json_object_new_boolean(1));
        return;
    }
    json_object_object_add(o, key, json_object_new_string_len(s, (int)len));
}

/* Milliseconds with three decimals (microseconds), as text json-c writes as it is. */
static void add_ms(json_object *o, const char *key, double ms)
{
    char text[48];

    if (!(ms >= 0))
        return; /* negative or NaN: not measured */
    if (ms > 1e12)
        ms = 1e12;
    snprintf(text, sizeof(text), "%.3f", ms);
    json_object_object_add(o, key, json_object_new_double_s(ms, text));
}

void sworn_plog_request(const struct sworn_plog_req *r)
{
    json_object *f;

    if (r == NULL)
        return;
    f = json_object_new_object();
    if (f == NULL)
        return;
    add_str(f, "request_id", r->request_id);
    add_str(f, "principal", r->principal);
    if (r->sandbox != NULL && r->sandbox[0] != '\0')
        add_str(f, "sandbox", r->sandbox);
    add_str(f, "method", r->method);
    add_str(f, "url", r->url);
    if (r->status != 0)
        json_object_object_add(f, "status", json_object_new_int(r->status));
    add_str(f, "effect", r->effect);
    if (r->has_log_index)
        json_object_object_add(f, "log_index", json_object_new_uint64(r->log_index));
    json_object_object_add(f, "bytes_up", json_object_new_uint64(r->bytes_up));
    json_object_object_add(f, "bytes_down", json_object_new_uint64(r->bytes_down));
    add_ms(f, "ms_decide", r->ms_decide);
    add_ms(f, "ms_total", r->ms_total);
    add_str(f, "reason", r->reason);
    sworn_plog(SWORN_PLOG_INFO, "request", f);
}
