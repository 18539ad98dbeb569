/*
 * c_report.h -- the three forms of a run's report (docs/conformance.md, "The report"):
 *   text, for a person at a terminal (c_report_text.c);
 *   JSON, for machines (c_report_json.c; its fields are documented and stable);
 *   one static, self-contained HTML page for an auditor (c_report_html.c): no script, no external
 *   resource, one table per tier, every text from the deployment or a probe escaped.
 *
 * The claim a report makes is "no failure found under these probes" when no probe failed or
 * ended in an error, and never that a property is proven.
 *
 * Text written by these functions never holds a control character from the record or the
 * deployment: the text form writes them as \xNN, JSON as \uXXXX (json-c), HTML as &#NN;.
 * Errors: -1 with sworn_err set (SWORN_ERR_IO on a write failure, SWORN_ERR_NOMEM).
 */
#ifndef SWORN_C_REPORT_H
#define SWORN_C_REPORT_H

#include <stdio.h>

#include "c_runner.h"

/* The JSON report's report_version: 2 added selection and deployment.measured_start. */
#define C_REPORT_VERSION 2

/* The claim sentence of run. */
const char *c_report_claim(const struct c_run *run);

int c_report_text(const struct c_run *run, FILE *out);

/* The JSON report as a string (free it). NULL on failure. */
char *c_report_json(const struct c_run *run);

int c_report_html(const struct c_run *run, FILE *out);

/* `sworn-conformance list`: the probe set, as text or (json nonzero) JSON. */
int c_report_list(FILE *out, int json);

#endif
