/*
 * p_jlog.h -- sworn-proxy's log lines: one JSON object per line, to stderr (the default) or to
 * the file the configuration's `log.file` names, which the caller opens and hands over.
 *
 * Each line has "ts" (RFC 3339 UTC with milliseconds, "2026-12-02T12:00:00.123Z"), "level"
 * ("debug", "info", "warn", "error"), "event" (a fixed, greppable name such as "request",
 * "listening", "decisiond_failed"), then the event's own fields. A field named "ts", "level" or
 * "event" is dropped, so a caller's field cannot forge the line's header. The escaping is
 * decisiond's (decisiond/d_jlog.c): json-c writes the object, then common/utf8.h's
 * SWORN_UTF8_ESCAPE_JSON makes it valid UTF-8 JSON without control, bidi or invisible
 * characters (a byte that is not UTF-8 becomes \ufffd), so that a request path with a
 * right-to-left override or terminal escapes reads in a log viewer as what it is.
 *
 * The per-request line (sworn_plog_request, event "request", level info) holds only the fields of
 * struct sworn_plog_req: there is no field that could carry a credential, a token, a header value
 * or a body. Its strings are cut at SWORN_PLOG_FIELD_MAX bytes (at a UTF-8 character boundary),
 * and "<field>_truncated": true is added for each one cut, so a line stays bounded (a string
 * is at most 6 * SWORN_PLOG_FIELD_MAX bytes once escaped, when every byte needed an escape; the
 * canonical URL is percent-encoded already and needs none).
 *
 * Every line is one write(2) (retried on EINTR; a short write, which a pipe or a file does not
 * make for lines this size, is completed), so lines never interleave. Write errors are ignored:
 * logging never stops the proxy. Thread safety: the fd and the level are atomics; lines from
 * several threads do not interleave.
 */
#ifndef SWORN_P_JLOG_H
#define SWORN_P_JLOG_H

#include <stdint.h>

#include <json-c/json.h>

#define SWORN_PLOG_FIELD_MAX 4096u /* bytes of one string of the request line */

enum sworn_plog_level { SWORN_PLOG_DEBUG = 0, SWORN_PLOG_INFO, SWORN_PLOG_WARN, SWORN_PLOG_ERROR };

/* Write the lines to fd from now on (the caller keeps it open; default STDERR_FILENO). A
 * negative fd sends them to stderr again. */
void sworn_plog_open(int fd);

/* Lines below this level are dropped (default SWORN_PLOG_INFO). */
void sworn_plog_set_level(enum sworn_plog_level level);

/*
 * Write one line. event is a fixed name (NULL writes "unnamed"); fields is a JSON object whose
 * members are added to the line (NULL for none), consumed (put) in every case, also when the
 * level drops the line.
 */
void sworn_plog(enum sworn_plog_level lvl, const char *event, json_object *fields);

/* The one line per request. A NULL string, a status of 0, a negative time or has_log_index 0
 * leave its field out. */
struct sworn_plog_req {
    const char *request_id; /* the id the agent's response and the record carry */
    const char *principal;  /* the listener's principal */
    const char *sandbox;    /* the connection's sandbox (the listener's, or the hostlink
                               hello's); NULL or "": left out */
    const char *method;
    const char *url;    /* the canonical URL (policy/resource.h), never the raw target */
    int status;         /* the status sent to the agent */
    const char *effect; /* "allow", "deny", "escalate", "refused", "error" */
    int has_log_index;
    uint64_t log_index; /* the decision's entry in the log */
    uint64_t bytes_up, bytes_down;
    double ms_decide;   /* milliseconds waiting for decisiond */
    double ms_total;    /* milliseconds from the request's first byte to its last response byte */
    const char *reason; /* the decision's or the refusal's reason */
};

void sworn_plog_request(const struct sworn_plog_req *r);

#endif
