/*
 * c_runner.h -- one conformance run: take the deployment's identity, run the selected probes in
 * the registry's order, each timed, and take the identity again at the end.
 *
 * The identity is read from the record as it stands (c_record.h: not verified here; the T5.verify
 * probe says whether sworn-verify accepts it): the log origin, the checkpoint's size and root at
 * the start and the end, and the policy digest of the newest PolicyLoaded entry that took effect.
 * Who ran it is the operator's name as the deployment file gives it and the uid and user name the
 * process runs as. Times are UTC.
 *
 * Memory: struct c_run is the caller's; c_run_free releases its results. Thread safety: one run
 * per thread; probes run one after another.
 */
#ifndef SWORN_C_RUNNER_H
#define SWORN_C_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "c_deploy.h"
#include "c_probe.h"

#define C_ONLY_MAX 64u

struct c_point {
    int known; /* 0: the record had no readable checkpoint then (why in error) */
    uint64_t size;
    char root[64]; /* base64 */
    char error[256];
};

#define C_MEASURED_MAX 256u /* sworn.proto: StartupMeasurement.files */

/* One file of the measured start (the newest Startup entry under the start checkpoint). */
struct c_measured {
    char role[12];  /* "executable", "signer", "config", "policy", "extra", "unrecorded" */
    char path[512]; /* cut when longer */
    char sha256[65];
};

struct c_run {
    /* The selection, set by the caller before c_run_probes. */
    enum c_tier max_tier;         /* probes of tiers up to this one (cumulative tiers) */
    const char *only[C_ONLY_MAX]; /* when nonly > 0: only these ids */
    size_t nonly;
    /* Filled by c_run_probes. */
    const struct c_deploy *dep;
    char operator_user[64]; /* the user name of uid, or "" */
    uid_t uid;
    char started[32], ended[32]; /* UTC, ISO 8601 */
    char origin[256];
    struct c_point cp_start, cp_end;
    char policy_digest[65]; /* hex, or "" when none was found */
    uint64_t policy_index;
    /* The measured start: the newest Startup entry under cp_start (have_startup), its index and
     * its files; else why not in startup_error. */
    int have_startup;
    uint64_t startup_index;
    struct c_measured *measured; /* nmeasured items */
    size_t nmeasured;
    char startup_error[256];
    char sworn_version[64];
    char probe_set_digest[65];
    size_t probe_set_count;
    const struct c_probe **probes; /* the probes run, in order */
    struct c_result *results;      /* results[i] is probes[i]'s */
    size_t n;
    unsigned counts[4]; /* per enum c_outcome */
    /* Set by the caller once the JSON report is recorded (c_submit.h); shown by the text form. */
    int recorded;
    uint64_t recorded_index;
    char recorded_sha256[65];
    int recorded_exported;
};

/* Check the selection against the registry: every --only id known. Returns 0, or -1 with
 * sworn_err naming the unknown id. */
int c_run_check_selection(const struct c_run *run);

/* Run the selected probes against dep. Returns 0, or -1 (no memory, no scratch folder) with
 * sworn_err set; the probes' own failures are results, not errors. */
int c_run_probes(struct c_run *run, const struct c_deploy *dep);

/* Whether the run found no failure: no probe failed or ended in an error. */
int c_run_clean(const struct c_run *run);

void c_run_free(struct c_run *run);

/* Now in UTC as "YYYY-MM-DDTHH:MM:SS.mmmZ" into out (32 bytes). */
void c_utc_now(char out[32]);

#endif
