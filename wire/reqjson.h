/*
 * reqjson.h -- AuthorizationRequest as JSON, for people and tools (`sworn-policy eval`,
 * `swornctl decide`), and policy results and decisions printed as JSON.
 *
 * The JSON form of a request mirrors wire/sworn.proto with its snake_case field names
 * (docs/policy.md, "Requests as JSON", gives it in full):
 *
 *   {"request_id": "r1",
 *    "principal": {"id": "agent-1", "sandbox": "sb", "uid": 1000},
 *    "operation": "http.request",
 *    "resource": {"scheme": "https", "host": "api.github.com", "port": 443,
 *                 "path": "/repos/x?page=2", "tool": ""},
 *    "context": {"method": "GET", "header_names": ["accept"], "body_sha256": "<64 hex>",
 *                "covered": [{"name": "@method", "value_sha256": "<64 hex>"}],
 *                "body_length": 12, "json_numbers": [{"pointer": "/amount", "value": "12.50"}],
 *                "credential_token_sha256": "<64 hex>"},
 *    "delegation": {"subject": "user", "issuer": "idp", "actors": [{"subject": "svc-a",
 *                   "issuer": ""}], "may_act": "allowed", "token_sha256": ["<64 hex>"]},
 *    "refusal": {"status": 400, "reason": "obs-fold in a header", "head_sha256": "<64 hex>"},
 *    "time_unix_ms": 1767225600000}
 *
 * "refusal" is present only for a request the proxy refused itself (a recorded DENY before any
 * rule: policy.h, sworn_policy_refusal).
 *
 * Parsing is strict: the input is at most SWORN_REQJSON_MAX bytes of RFC 8259 JSON (json-c's
 * strict mode, nesting at most 8), one object and nothing after it; unknown keys, wrong types,
 * negative or fractional integers, integers out of range for their field, strings with NUL, and
 * hashes that are not 64 lower-case hex digits are refused; json_numbers values are JSON strings
 * holding the number's text (never a JSON number, which would lose its exact text). may_act is
 * one of "unknown", "allowed", "denied", "not_present". The request built is then packed and
 * decoded again by sworn_frame_unpack_request, so it passes exactly the checks a request on the
 * decision socket passes (sworn_frame_check_request and canonical encoding). json-c keeps the
 * last of two equal keys in an object; this is the one leniency left.
 *
 * Errors: -1/NULL with sworn_err set (SWORN_ERR_FORMAT or SWORN_ERR_RANGE for bad input,
 * SWORN_ERR_NOMEM). Thread safety: no shared state.
 */
#ifndef SWORN_REQJSON_H
#define SWORN_REQJSON_H

#include <stddef.h>

#include "sworn.pb-c.h"

#define SWORN_REQJSON_MAX (1024u * 1024u) /* largest JSON text accepted */

/*
 * Parse len bytes of JSON into a request. OUT: *out, to free with
 * sworn__v1__authorization_request__free_unpacked(*out, NULL). On error *out is untouched.
 */
int sworn_reqjson_parse(const char *text, size_t len, Sworn__V1__AuthorizationRequest **out);

/*
 * Print as one line of JSON (no trailing newline) into a new string (free() it). The request
 * form is the one sworn_reqjson_parse reads back to an identical request. A Decision prints its
 * fields with hashes and signatures in hex, and of a credential only its id, header_name and
 * query_name: the value is never printed. Returns NULL with sworn_err set on failure.
 */
char *sworn_reqjson_print_request(const Sworn__V1__AuthorizationRequest *m);
char *sworn_reqjson_print_decision(const Sworn__V1__Decision *m);

#endif
