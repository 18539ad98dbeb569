/*
 * c_probe.h -- what a probe is, what it reports, and what it is given.
 *
 * A probe is a row of the registry (c_registry.c): an id, the tier and property it probes, the
 * technique in words, the outcome expected of a conforming deployment, and a function that
 * runs the technique against the deployment and fills a struct c_result. A probe decides its own
 * result:
 *   C_PASS    the expected outcome was observed;
 *   C_FAIL    another outcome was observed: the deployment does not hold the property here;
 *   C_SKIPPED the deployment file gives no way to run it (the observed text says which key);
 *   C_ERROR   the probe could not run to a conclusion (a tool failed, the record is unreadable,
 *             the deployment's policy did not decide the request shapes as the file says).
 * The observed text says what happened in a sentence; the evidence lists what an auditor can
 * look up (log indexes, digests, exit statuses). Neither ever holds a secret.
 *
 * Probes share one struct c_ctx for the run: the deployment file, a scratch folder the runner
 * removes at the end, and what one probe learns that another can reuse (whether the untouched
 * record verifies, so that a tampered copy's rejection means something).
 *
 * Adding a probe: write its function (c_probes_*.c, one file per side it runs from: the
 * record, the live sockets, the sandbox, the host), declare it in c_probes.h, and add its row to
 * the registry. The probe set's digest (c_registry_digest) changes with any row's text.
 */
#ifndef SWORN_C_PROBE_H
#define SWORN_C_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "c_deploy.h"

#define C_OBSERVED_MAX 512u
#define C_EVIDENCE_MAX 48u /* evidence items per probe; more are dropped and counted */
#define C_EVIDENCE_ITEM_MAX 256u

enum c_tier { C_T1 = 1, C_T2, C_T3, C_T4, C_T5 };
enum c_outcome { C_PASS = 0, C_FAIL, C_SKIPPED, C_ERROR };

struct c_sbx_state;

struct c_result {
    enum c_outcome outcome;
    char observed[C_OBSERVED_MAX];
    char evidence[C_EVIDENCE_MAX][C_EVIDENCE_ITEM_MAX];
    size_t nevidence;
    size_t evidence_dropped;
    char started[32];     /* UTC, ISO 8601 with milliseconds: filled by the runner */
    uint64_t duration_ms; /* filled by the runner */
};

struct c_ctx {
    const struct c_deploy *dep;
    char scratch[1100];   /* a fresh 0700 folder of the runner's, removed at the end */
    unsigned scratch_seq; /* names inside scratch: one per use */
    int baseline;         /* the untouched record under sworn-verify: 0 not run, 1 pass, -1 not */
    char baseline_why[C_OBSERVED_MAX];
    struct c_sbx_state *sbx; /* the sandbox probes' canaries and controls (c_probes_sandbox.c) */
};

typedef void (*c_probe_fn)(struct c_ctx *ctx, struct c_result *r);

struct c_probe {
    const char *id; /* "T5.verify": the tier, a dot, a name; stable across versions */
    enum c_tier tier;
    const char *property;  /* DESIGN section 1's words for the tier's property */
    const char *technique; /* how the probe tests it, in one or two sentences */
    const char *expected;  /* the outcome of a conforming deployment */
    c_probe_fn run;
};

/* Set r's outcome and its observed sentence (printf-like; truncated to fit). Returns outcome. */
enum c_outcome c_result_set(struct c_result *r, enum c_outcome outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Add one evidence item (printf-like; truncated to fit); past C_EVIDENCE_MAX it is counted. */
void c_evidence(struct c_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The name of an outcome: "pass", "fail", "skipped", "error". */
const char *c_outcome_name(enum c_outcome o);

/* A fresh path in ctx->scratch for name (not created). Returns 0, or -1 when it does not fit. */
int c_scratch_path(struct c_ctx *ctx, const char *name, char *out, size_t cap);

#endif
