/*
 * sv_verify.h -- the verification of one record (a tlog-tiles folder, docs/formats.md section
 * 7) against a trust policy, and the report it produces (docs/verifier.md).
 *
 * sv_verify_record reads the newest checkpoint and every checkpoint under sworn/checkpoint/,
 * checks each one's signatures and witness cosignatures (the quorum is required of the newest;
 * history checkpoints below it are counted: docs/verifier.md, `witness-quorum`), then streams the
 * entry bundles once, from the first entry to the newest checkpoint's size, recomputing every leaf
 * hash, every hash tile (compared byte for byte with the record's) and the root at every
 * checkpoint's size (so all checkpoints are consistent with one another by construction), the root
 * at the saved state's size (a fork against what this auditor accepted before), and, per the
 * policy, each entry's content, its receipt, the policy digests, quotes and key events. Memory is
 * bounded by a few tiles plus one small record per checkpoint; nothing the record claims about a
 * hash is trusted before it is recomputed. A passing run with a state path stores, as the new
 * state, the very `checkpoint` note it verified, kept in memory (never a second read of the
 * record), and never moves the state backwards (docs/verifier.md section 4).
 *
 * Results: every check gets a status, a count and its first failure (item, stable reason code,
 * message). Thread-safe for distinct reports; the policy is only read.
 */
#ifndef SV_VERIFY_H
#define SV_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_entry.h"
#include "sv_note.h"
#include "sv_policy.h"
#include "sv_util.h"

enum sv_check_id {
    SV_CHECK_CHECKPOINTS, /* log signatures and origin of every checkpoint */
    SV_CHECK_WITNESSES,   /* witness cosignatures of every checkpoint; quorum of the newest */
    SV_CHECK_BUNDLES,     /* every entry bundle present and well formed */
    SV_CHECK_TILES,       /* every hash tile equals the one recomputed from the entries */
    SV_CHECK_ROOTS,       /* every checkpoint's root recomputed (hence their consistency) */
    SV_CHECK_STATE,       /* no rollback and no fork against the saved state */
    SV_CHECK_QUOTES,      /* TPM quotes of checkpoints, and their time order */
    SV_CHECK_ENTRIES,     /* content of every entry (sworn.v1.Entry) */
    SV_CHECK_POLICY,      /* decision policy digests match an earlier PolicyLoaded entry */
    SV_CHECK_RECEIPTS,    /* every allow carries a valid receipt over its own leaf hash */
    SV_CHECK_KEYS,        /* keyring chain, key events, checkpoint keys valid at their time */
    SV_CHECK_MEASURED,    /* measured starts: replay, approved files, chain (measured-start) */
    SV_CHECK_SEPARATION,  /* each start: signer and engine under distinct non-root uids */
    SV_CHECK_ESCALATIONS, /* each resolution names one earlier escalate entry, resolved once */
    SV_CHECK_EXCHANGES,   /* each OAuth exchange backed by its own allow of the same start */
    SV_CHECK_TIME_MARKS,  /* each TimeMark's high water is the largest earlier time stamp */
    SV_CHECK_SANDBOXES,   /* sandbox ends name their start once; sandbox requests run in one */
    SV_CHECK_USAGE,       /* each token usage names its own earlier ALLOW of model.call, once */
    SV_CHECK_REPORTS,     /* each conformance report signed by the deployment's key, its file */
    SV_CHECK_COUNT
};

enum sv_status { SV_SKIP = 0, SV_PASS = 1, SV_FAIL = 2 };

/* Room for the report's strings, each with its NUL (longer values are cut). */
#define SV_CHECK_ITEM_MAX 160
#define SV_CHECK_CODE_MAX 32
#define SV_CHECK_NOTE_MAX 320 /* witness-quorum's note holds an alarm and a count */
#define SV_RECORD_PATH_MAX 1024

struct sv_check {
    enum sv_status status;
    uint64_t count;               /* items checked */
    uint64_t failures;            /* items that failed */
    char item[SV_CHECK_ITEM_MAX]; /* the first failing item ("entry 17", "tile/0/000", ...) */
    char code[SV_CHECK_CODE_MAX]; /* its stable reason code ("root-mismatch", ...) */
    char why[SV_WHY];             /* its message */
    char note[SV_CHECK_NOTE_MAX]; /* a warning that is not a failure (e.g. a possible gap) */
};

#define SV_REPORTS_LISTED 32 /* conformance reports listed in a report (all are checked) */

/* One conformance report of the record, as the report lists it (docs/verifier.md "reports"). */
struct sv_listed_report {
    uint64_t index;
    struct sv_conformance c;
    int file; /* 0: no sworn/reports/<index>.json beside the record; 1: there, digest matches;
                 -1: there, and it does not match (the check failed) */
    int ok;   /* the entry passed every check of `reports` */
};

struct sv_stats;

struct sv_report {
    char record[SV_RECORD_PATH_MAX];
    char origin[SV_ORIGIN_MAX + 1];
    uint64_t size; /* the newest checkpoint's tree size */
    uint8_t root[SV_HASH];
    uint64_t checkpoints; /* how many checkpoints were verified */
    uint64_t state_size;  /* the saved state's size (0 if none) */
    int state_updated;
    int development;            /* a Startup entry says hardening.development: not Accountable */
    uint64_t refused;           /* Refused entries checked */
    uint64_t refusals_dropped;  /* refusals the RefusalsDropped entries count (saturating) */
    uint64_t refusal_summaries; /* RefusalsDropped entries checked */
    uint64_t clock_behind;      /* TimeMark entries whose clock was behind the record */
    uint64_t below_quorum;      /* history checkpoints (sworn/checkpoint/<size>) whose valid
                                   cosignatures do not meet the quorum (not a failure) */
    uint64_t witness_alarms;    /* WitnessEvent entries of kind CONSISTENCY (not a failure) */
    uint64_t reports;           /* ConformanceReport entries; the first SV_REPORTS_LISTED listed */
    struct sv_listed_report report_list[SV_REPORTS_LISTED];
    int unreadable; /* the record could not be read at all (exit 2) */
    char unreadable_why[SV_WHY];
    struct sv_check checks[SV_CHECK_COUNT];
    struct sv_stats *stats; /* sv_verify_opts.stats (not owned): where sv_report_fail and the
                               stream add what the page shows (sv_stats.h); NULL: nothing */
};

const char *sv_check_name(enum sv_check_id id);

/* Progress callback: done of total entries. */
typedef void (*sv_progress_fn)(uint64_t done, uint64_t total, void *arg);

struct sv_verify_opts {
    const struct sv_policy *policy;
    const char *record;     /* folder */
    const char *state_path; /* NULL: no state */
    sv_progress_fn progress;
    void *progress_arg;
    int threads; /* signature-checking threads (1 or more; 0 means 2) */
    /* NULL, or where to gather the page's data (sv_stats.h; initialised by the caller, who
     * frees it): every failure, decisions per hour, markers, principals and hosts */
    struct sv_stats *stats;
};

/* Verify a record. Returns 0 all passed, 1 a check failed, 2 unreadable input (rep says why). */
int sv_verify_record(const struct sv_verify_opts *o, struct sv_report *rep);

/* What a checkpoint's witness cosignatures must show (docs/verifier.md, `witness-quorum`). */
enum sv_quorum_rule {
    /* the newest checkpoint, a bundle's, a state, both sides of compare and a fork proof */
    SV_QUORUM_REQUIRED,
    /* a history checkpoint (sworn/checkpoint/<size>): every cosignature line of a policy
     * witness must verify, but falling short of the quorum is only counted (*below_quorum) */
    SV_QUORUM_COUNTED,
};

/* Verify one checkpoint note against the policy (signatures, origin, witness cosignatures and,
 * by rule, the quorum); *below_quorum (may be NULL) is set to 1 when rule is SV_QUORUM_COUNTED
 * and the quorum is not met, else 0; *signers (may be NULL) gets bit i set when log key i
 * signed. On failure returns -1 with which check failed in *failed_check, a code and why. */
int sv_verify_checkpoint_note(const struct sv_policy *p, const char *note, size_t len,
                              enum sv_quorum_rule rule, int *below_quorum, struct sv_checkpoint *cp,
                              uint64_t *signers, enum sv_check_id *failed_check, char *code,
                              char *why);

/* Print the report: human text or JSON. */
void sv_report_print_text(const struct sv_report *r, FILE *out);
void sv_report_print_json(const struct sv_report *r, FILE *out);
/* 1 when any check failed. */
int sv_report_failed(const struct sv_report *r);

/* Record a failure of check id (first failure kept). */
void sv_report_fail(struct sv_report *r, enum sv_check_id id, const char *item, const char *code,
                    const char *why);

/* Print a JSON string literal. */
void sv_json_string(FILE *out, const char *s);

#endif
