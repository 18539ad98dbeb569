/*
 * textserve.h -- a small GET-only HTTP/1.x server of text for the operator's side: decisiond's
 * and the proxy's metrics sockets (the Prometheus text and a health check), never an agent-facing
 * listener.
 *
 * One request per connection, then the connection is closed. A request head larger than
 * SWORN_TEXTSERVE_HEAD_MAX bytes, or one not complete within SWORN_TEXTSERVE_TIMEOUT_S seconds,
 * is dropped; a request line that is not "GET TARGET HTTP/1.x" (TARGET starting with '/') gets
 * 400, another method 405; the handler is called with the target's path (the part before any
 * '?') and answers every other status itself (404 for a path it does not serve). At most
 * SWORN_TEXTSERVE_CONNS connections at once: more are closed at once (a scraper retries).
 *
 * Thread safety: everything runs on the event base's loop thread, the handler too.
 */
#ifndef SWORN_TEXTSERVE_H
#define SWORN_TEXTSERVE_H

#include <stddef.h>

struct event_base;
struct sworn_textserve;

#define SWORN_TEXTSERVE_HEAD_MAX 4096u
#define SWORN_TEXTSERVE_TIMEOUT_S 10
#define SWORN_TEXTSERVE_CONNS 16

/* What the handler answers: body (len bytes) is copied before the handler's next call; when
 * owned, the server frees it with free(). content_type NULL means text/plain. */
struct sworn_textserve_answer {
    int status; /* 200, 404, 503, ... */
    const char *content_type;
    char *body;
    size_t len;
    int owned;
};

/* Fill *a for path; return 0, or -1 for an internal failure (answered 500). */
typedef int (*sworn_textserve_fn)(void *arg, const char *path, struct sworn_textserve_answer *a);

/*
 * Serve the listening socket fd on base (the server owns fd from now on, and closes it on stop,
 * and on failure). OUT: *out. 0, or -1 (SWORN_ERR_NOMEM).
 */
int sworn_textserve_start(struct event_base *base, int fd, sworn_textserve_fn fn, void *arg,
                          struct sworn_textserve **out);

/*
 * Read a request line (len bytes, without its CRLF): "GET TARGET HTTP/1.0" or "HTTP/1.1", single
 * spaces, TARGET starting with '/', no control byte or space inside. OUT: path, TARGET up to any
 * '?', NUL-terminated (at most cap - 1 bytes). Returns 0, 400 (malformed, or a path that does not
 * fit) or 405 (a well-formed line with another method). Exposed for the fuzz target.
 */
int sworn_textserve_request_line(const char *line, size_t len, char *path, size_t cap);

/* Stop listening and close the connections in progress. NULL is allowed. */
void sworn_textserve_stop(struct sworn_textserve *s);

#endif
