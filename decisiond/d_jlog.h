/*
 * d_jlog.h -- decisiond's structured log lines: one JSON object per line on stderr, which
 * journald (and any log shipper) stores as it comes.
 *
 * Each line has "ts" (RFC 3339 UTC with milliseconds), "level" ("debug", "info", "warn",
 * "error"), "event" (a fixed, greppable name such as "decision" or "checkpoint"), and the
 * event's own fields. Only the fields given are written: callers never pass credential values,
 * PINs or request bodies, and the logger has no way to print a secret it was not handed.
 * Every line is valid UTF-8 JSON without control, bidi or invisible characters: whatever bytes a
 * field holds, they are escaped (common/utf8.h, SWORN_UTF8_ESCAPE_JSON; a byte that is not UTF-8
 * becomes \ufffd), so a log viewer shows what the line says.
 *
 * Thread safety: lines from several threads never interleave (one write(2) per line).
 */
#ifndef SWORN_D_JLOG_H
#define SWORN_D_JLOG_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

enum d_log_level { D_LOG_DEBUG = 0, D_LOG_INFO, D_LOG_WARN, D_LOG_ERROR };

/* Lines below this level are dropped (default D_LOG_INFO). */
void d_log_set_level(enum d_log_level level);

/*
 * Write one line. fields is a JSON object whose members are added to the line (NULL for none);
 * it is consumed (put) in every case.
 */
void d_log(enum d_log_level level, const char *event, json_object *fields);

/* One field of d_log_fields: a string (str not NULL) or else a number (num). */
struct d_log_field {
    const char *key;
    const char *str;
    int64_t num;
};

/*
 * Write one line with fields f[0..n) in this order, without building JSON objects: the same
 * line d_log writes for an object holding them (every decision writes one; bench_cpu, issue 17).
 */
void d_log_fields(enum d_log_level level, const char *event, const struct d_log_field *f, size_t n);

/* A shorthand for a line with one "msg" field. */
void d_log_msg(enum d_log_level level, const char *event, const char *msg);

#endif
