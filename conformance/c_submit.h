/*
 * c_submit.h -- record a run's JSON report in the deployment's log: one ConformanceReportRequest
 * on decisiond's admin socket (docs/conformance.md section 7, docs/decisiond.md "Conformance
 * reports"), answered once decisiond has signed and durably appended its ConformanceReport entry.
 *
 * The admin socket is the operator's (decisiond accepts there only its admin peers): never the
 * decision socket, which the proxy uses. The bytes sent are the report exactly as written to
 * --json, so the entry's report_sha256 is the file's SHA-256.
 *
 * Errors: -1 with sworn_err set (the connection's, or decisiond's ErrorFrame message, or
 * SWORN_ERR_FORMAT for an answer that does not match what was sent). Thread safety: none shared.
 */
#ifndef SWORN_C_SUBMIT_H
#define SWORN_C_SUBMIT_H

#include <stddef.h>
#include <stdint.h>

struct c_submitted {
    uint64_t log_index;
    char entry_hash[65];    /* hex */
    char report_sha256[65]; /* hex */
    int exported;           /* decisiond wrote sworn/reports/<index>.json beside the tiles */
};

/* Send json[0..len) to the admin socket at path and wait (at most timeout_ms) for the answer. */
int c_submit_report(const char *path, const char *json, size_t len, unsigned timeout_ms,
                    struct c_submitted *out);

#endif
