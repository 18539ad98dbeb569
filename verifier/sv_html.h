/*
 * sv_html.h -- the auditor's report as one static HTML page (`sworn-verify verify --html OUT`,
 * `compare --html OUT`; docs/verifier.md section 10).
 *
 * The page is self-contained: inline CSS, the timeline as inline SVG, no script, no link, no
 * image, font or style sheet from anywhere, and a Content-Security-Policy (default-src 'none')
 * that forbids the browser any fetch even if something in it were taken for a resource. It
 * holds the record's identity, every check with its result, the decisions per hour with the
 * timeline's markers (sv_stats.h), the key events, policy loads and starts, the principals and
 * destinations with their counts, and every failure with the item that caused it.
 *
 * Rules:
 *  - Every string from the record, the report or the command line is escaped (sv_html_escape)
 *    and placed only in element text, never in an attribute, a style or a URL.
 *  - The page's size is bounded whatever the record holds: at most SV_HTML_BARS bars (an hour
 *    each, or a wider step when the record spans more), SV_HTML_NAME_ROWS rows per name table,
 *    the first SV_STATS_EVENTS_MAX events and SV_STATS_FAILURES_MAX failures; each table says
 *    what it cut.
 *  - The file is written atomically (a temporary beside it, fsync, rename, fsync of the folder:
 *    sv_write_file_atomic_mode) with mode 0644: the report is meant to be read by others.
 *
 * Nothing here allocates except the page's buffer, freed before returning. Thread-safe.
 */
#ifndef SV_HTML_H
#define SV_HTML_H

#include <stddef.h>

#include "sv_stats.h"
#include "sv_verify.h"

#define SV_HTML_BARS 240     /* timeline bars at most */
#define SV_HTML_NAME_ROWS 50 /* rows of the principals' and the destinations' tables */

/* What the page says about its own making: the tool and version (generator) and the trust
 * policy's path; either may be NULL. */
struct sv_html_meta {
    const char *generator;
    const char *policy;
};

/*
 * Render the page of a verification: rep as sv_verify_record filled it, st as gathered in the
 * same run (may be NULL: no timeline or tables, the page says so). OUT: *page, a fresh
 * NUL-terminated buffer (free it) of *len bytes. Returns 0, or -1 when memory runs out (then
 * *page is NULL).
 */
int sv_html_render_report(const struct sv_report *rep, const struct sv_stats *st,
                          const struct sv_html_meta *meta, char **page, size_t *len);

/* Render the report and write it to path (see Rules). 0, or -1 with why. */
int sv_html_write_report(const char *path, const struct sv_report *rep, const struct sv_stats *st,
                         const struct sv_html_meta *meta, char *why);

/*
 * The page of `compare`: the two records, the origin, the result (consistent, fork, fail or
 * unreadable: sworn-verify.c's words), the message, and the fork proof's path when one was
 * written (may be NULL). Written as sv_html_write_report writes. 0, or -1 with why.
 */
int sv_html_write_compare(const char *path, const char *origin, const char *record_a,
                          const char *record_b, const char *result, const char *message,
                          const char *fork_proof, const struct sv_html_meta *meta, char *why);

/*
 * Write s (n bytes, any bytes) into out (capacity cap) as HTML element text: printable ASCII as
 * it is but for & < > " ' (as &amp; &lt; &gt; &quot; &#39;) and the backslash (as \\); a UTF-8
 * character outside ASCII that is not unsafe (sv_unsafe_cp) as a numeric reference (&#xHHHH;)
 * in a marked span, so a look-alike letter shows as one; an unsafe character (a control, a bidi
 * control, an invisible character) or a byte that is not UTF-8 as the visible text \xNN for each
 * of its bytes in a marked span, since a numeric reference to U+202E would still reverse the
 * text after it and one to U+0001 would show nothing. Returns the length written (without the
 * NUL), or the length needed when out is NULL; when cap is too small, returns (size_t)-1 with
 * out the empty string.
 */
size_t sv_html_escape(const char *s, size_t n, char *out, size_t cap);

#endif
