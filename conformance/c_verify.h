/*
 * c_verify.h -- run the auditor's sworn-verify on a record and read its --json report
 * (docs/verifier.md section 5): the result, the tree it verified, and the checks that failed.
 *
 * sworn-verify is run as a separate program (never linked): the conformance run relies on the
 * same independent build the auditor uses. Its report is bounded (C_VERIFY_REPORT_MAX) and
 * parsed with json-c; a report that is not the documented object is an error, never a pass.
 *
 * Errors: -1 with sworn_err set (c_exec.h's, or SWORN_ERR_FORMAT for a report that does not
 * parse). Thread safety: none needed.
 */
#ifndef SWORN_C_VERIFY_H
#define SWORN_C_VERIFY_H

#include <stdint.h>

#include "c_deploy.h"

#define C_VERIFY_REPORT_MAX (4u * 1024u * 1024u)
#define C_VERIFY_FAILED_MAX 8u
#define C_VERIFY_CHECKS_MAX 64u

/* One check of the report, as sworn-verify names it: each is reported on its own (T5.verify's
 * evidence), so a reader sees what quotes, receipts, keyring and witness quorum checked. */
struct c_verify_check {
    char name[48];
    char result[16]; /* "pass", "fail", or "-" (nothing to check) as the report says */
    uint64_t count, failures;
};

struct c_verify {
    int status;      /* sworn-verify's exit status: 0 pass, 1 failed, 2 unreadable */
    char result[16]; /* "pass", "fail" or "unreadable" */
    char error[256]; /* the report's "error" when unreadable, else "" */
    uint64_t tree_size;
    char root[64];   /* base64, as the report gives it */
    int development; /* a Startup entry says development */
    unsigned checks, passed;
    /* The failed checks, first C_VERIFY_FAILED_MAX: "name: reason (item)". */
    char failed[C_VERIFY_FAILED_MAX][256];
    unsigned nfailed;
    /* Every check, first C_VERIFY_CHECKS_MAX, in the report's order. */
    struct c_verify_check each[C_VERIFY_CHECKS_MAX];
    unsigned neach;
};

/*
 * sworn-verify verify --policy POLICY [--state STATE] --json --no-progress RECORD, with the
 * binary dep->verify_bin (state may be NULL). OUT: *v. Returns 0 when it ran and its report was
 * read, whatever the verdict.
 */
int c_verify_run(const struct c_deploy *dep, const char *policy, const char *record,
                 const char *state, struct c_verify *v);

/* Whether check `name` failed with `reason` in v (a prefix "name: reason"). */
int c_verify_failed(const struct c_verify *v, const char *name, const char *reason);

#endif
