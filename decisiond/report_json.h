/*
 * report_json.h -- read a sworn-conformance JSON report (docs/conformance.md section 4,
 * report_version 2) into the ConformanceSummary decisiond records for it (docs/formats.md
 * section 15). Only the operator submits one (the admin socket), but it is still bytes from
 * outside decisiond: every rule below is checked, and a report that breaks one is refused whole.
 *
 * Rules: 1..SWORN_FRAME_REPORT_MAX bytes without NUL; RFC 8259 JSON (json-c's strict mode,
 * nesting at most 8), one object and nothing after it; canonical: json-c's plain serialisation
 * of the object read gives back exactly these bytes (what sworn-conformance writes), so no two
 * equal keys (json-c keeps the last, a second reader may keep the first), no spacing and no other
 * spelling can make the bytes say one thing to decisiond and another to a person. The top-level
 * keys are exactly tool ("sworn-conformance"), report_version (2), claim (the sentence of its
 * result: "no failure found under these probes" or "FAILURES FOUND under these probes"), result
 * ("pass" or "fail"), operator {name, uid, user}, started and ended ("YYYY-MM-DDTHH:MM:SS.mmmZ",
 * UTC, ended not before started), deployment (an object whose checkpoint_start is {size, root
 * (base64 of 32 bytes)} or {error}, and whose measured_start is {index, files} or {error}: an
 * index only with a checkpoint, and below its size), selection {tier ("T1".."T5"), only [ids]},
 * probe_set {digest (64 hex digits), probes}, summary {pass, fail, skipped, error} and probes:
 * one object per probe run, whose results, counted, are the summary's. The summary built is then
 * held to sworn_frame_check_conformance_summary (wire/frame.h). The report's SHA-256 is taken
 * here over the bytes as given.
 *
 * What decisiond cannot check from the bytes (whether the probes ran as they say) is the
 * operator's word: docs/threat-model.md, "Conformance reports".
 *
 * Memory: the caller owns out; its summary points into out's own arrays (no allocation survives
 * the call). Errors: -1 with sworn_err set (SWORN_ERR_FORMAT or SWORN_ERR_RANGE, naming the
 * member; SWORN_ERR_NOMEM); out is then undefined. Thread safety: no shared state.
 */
#ifndef SWORN_REPORT_JSON_H
#define SWORN_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "sworn.pb-c.h"

#define SWORN_REPORT_JSON_VERSION 2 /* the report_version read */

struct sworn_report_summary {
    Sworn__V1__ConformanceSummary s; /* points into the members below */
    uint8_t report_sha256[32];
    uint8_t probe_set_sha256[32];
    uint8_t checkpoint_root[32];
    char operator_name[SWORN_FRAME_OPERATOR_MAX + 1];
    char operator_user[SWORN_FRAME_USER_MAX + 1];
    char only_ids[SWORN_FRAME_ONLY_MAX][SWORN_FRAME_PROBE_ID_MAX + 1];
    char *only[SWORN_FRAME_ONLY_MAX];
};

/* Read len bytes of JSON report into *out (rules above). Returns 0 or -1. */
int sworn_report_json_read(const uint8_t *json, size_t len, struct sworn_report_summary *out);

#endif
