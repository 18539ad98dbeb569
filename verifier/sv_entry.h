/*
 * sv_entry.h -- the verifier's own check of a log entry as a sworn.v1.Entry (docs/protocol.md
 * section 3), with protobuf-c code generated in the verifier's build from the contract
 * wire/sworn.proto under a package of its own (svpb.v1), so it shares no object code with
 * the recording side's decoders.
 *
 * sv_entry_check accepts an entry only when: protobuf-c unpacks it; no message at any depth has
 * unknown fields; packing it again gives exactly the same bytes (canonical: no field out of
 * order, no scalar twice, no explicit default, no non-minimal varint, no NUL in a string);
 * every string is UTF-8 without control characters and at most 8192 bytes; and the shape rules
 * of sworn.proto hold (required fields, 32-byte digests, bounds on repeated fields, effects).
 * For a DecisionRecord the reason must be present (1..1024 bytes); raw_target_sha256, when
 * present, must be SHA-256 of the recorded request's scheme "://" host ":" port path; and a
 * canonical_resource needs it, an http/https/ws/wss scheme and a host of 1..253 bytes and a path
 * starting with '/' (or the scheme tcp and an empty path), and the request's port and tool (the
 * canonical form itself is policy/resource.c's business: the verifier does not recompute it). A
 * RefusalsDropped entry needs 1..256 pairs, each with a channel "decision" or "admin" and a count
 * of at least 1, in strictly ascending (channel, peer_uid) order, and period_start <= period_end <=
 * time_unix_ms; a TimeMark a reason START or PERIODIC and clock_behind_ms = max(0,
 * high_water_unix_ms - time_unix_ms) (its high water against the earlier entries is sv_verify.c's
 * check `time-marks`); a Refused entry a channel "decision" or "admin". For a CredentialsMinted
 * entry the replaced_credential_ids are at most 16, distinct, none also minted by the entry, and
 * each a minted member of from_credential_id's family (docs/formats.md section 1: the root with
 * ".oauth.<n>" suffixes). A SandboxStarted entry needs a principal and a name of 1..128 bytes
 * 0x21..0x7e, a 16-byte sandbox_id, 1..256 command items, limits with enforced_by "cgroup2",
 * "cgroup1" or "rlimit", a 32-byte config_sha256, isolation "root" or "unprivileged" and an
 * operator of 1..256 bytes; a SandboxEnded entry a start_index that is not 0, a 16-byte
 * sandbox_id, a reason 1..5 with its code in range (EXITED 0..255, SIGNALED and STOPPED 1..64,
 * TIMEOUT and FAILED 0) and an operator (code sandbox-field). A WitnessEvent entry (issue 18) is
 * held to wire/frame.c's rules: a witness key name of 1..256 bytes 0x21..0x7e without '+', a
 * 4-byte key_id, a kind 1..3 (FAILING, RECOVERED, CONSISTENCY), a status of at most 599, a
 * checkpoint_size that is not 0, a witness_size only with status 409, and a reason of 1..256
 * bytes (missing-field, bad-field, field-too-long). A ConformanceReport entry (issue 19) is held
 * to wire/frame.c's rules too: both digests, a report length of 1..512 KiB, a probe set of
 * 1..1024, a tier 1..5, at most 64 --only ids of 1..64 bytes 0x21..0x7e, counts adding up to
 * 1..probe_set_size, result PASS exactly when failed and errors are 0, an operator name (1..256)
 * and user (0..64), a start that is not 0 and an end not before it, a root exactly with a
 * checkpoint size and a startup index below it, decisiond's operator (1..256), a 32-byte key_id,
 * a signature of 1..512 bytes (64 for alg 2) and alg 1 or 2 (report-shape); whether the
 * signature verifies is sv_verify.c's check `reports`. Every entry has a time_unix_ms that
 * is not 0 (time-missing: issue 13, finding 6). The verifier's own copy of docs/protocol.md section
 * 3's bounds and shapes (finding 8) has its own codes: json-number (a JsonNumber value not one RFC
 * 8259 number), error-too-long (a PolicyLoaded error over 1024 bytes), path-relative (a measured
 * path not starting with '/'), pcr-half (pcr23 without pcr23_before or the reverse), rule-missing
 * (an ALLOW or ESCALATE with no rule_id), method-not-token (a non-empty method that is not an
 * upper-case RFC 9110 token, in anything but a deny by no rule), refusal-not-deny (a request
 * holding a ProxyRefusal recorded as anything but a DENY by no rule without a credential),
 * field-too-long (operation, scheme, host, tool, method, covered name, rule_id, operator over
 * wire/frame.c's bounds). Otherwise it returns -1 with a short stable reason code in code and a
 * message in why. Thread-safe.
 */
#ifndef SV_ENTRY_H
#define SV_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "sv_util.h"

#define SV_ID_MAX 128         /* request ids: 1..128 bytes (docs/formats.md) */
#define SV_STATEMENT_MAX 4096 /* a key event's statement */

enum sv_entry_kind {
    SV_ENTRY_DECISION = 1,
    SV_ENTRY_POLICY_LOADED = 2,
    SV_ENTRY_KEY_EVENT = 3,
    SV_ENTRY_STARTUP = 4,
    SV_ENTRY_ESCALATION_RESOLVED = 5,
    SV_ENTRY_REFUSED = 6,
    SV_ENTRY_CREDENTIALS_MINTED = 7,
    SV_ENTRY_REFUSALS_DROPPED = 8,
    SV_ENTRY_TIME_MARK = 9,
    SV_ENTRY_SANDBOX_STARTED = 10,
    SV_ENTRY_SANDBOX_ENDED = 11,
    SV_ENTRY_USAGE_RECORDED = 12,
    SV_ENTRY_WITNESS_EVENT = 13,
    SV_ENTRY_CONFORMANCE_REPORT = 14,
};

#define SV_REPORT_JSON_MAX 524288u /* ConformanceSummary.report_length: 1..512 KiB */
#define SV_OPERATOR_MAX 256        /* an operator's name or user name in an entry */
#define SV_USER_MAX 64             /* ConformanceSummary.operator_user */
#define SV_REPORT_SIG_MAX 512      /* ConformanceReport.signature */

/* What a ConformanceReport entry says (docs/formats.md section 15), as the report lists it, and
 * what its signature needs: the digest it covers (SHA-256 of the entry's fields 1..4, the message
 * packed again without key_id, signature and alg), the key id, the signature and its alg. */
struct sv_conformance {
    uint8_t report_sha256[SV_HASH];
    uint64_t report_length;
    uint8_t probe_set_sha256[SV_HASH];
    unsigned tier, passed, failed, skipped, errors, probe_set_size;
    size_t n_only;
    int pass;
    char operator_name[SV_OPERATOR_MAX + 1];
    unsigned operator_uid;
    char operator_user[SV_USER_MAX + 1];
    char recorded_by[SV_OPERATOR_MAX + 1]; /* decisiond's operator: the admin peer's user */
    unsigned peer_uid;
    uint64_t started_ms, ended_ms, checkpoint_size, startup_index, time_ms;
    uint8_t signed_digest[SV_HASH];
    uint8_t key_id[SV_HASH];
    uint8_t sig[SV_REPORT_SIG_MAX];
    size_t sig_len;
    int alg;
};

#define SV_WITNESS_NAME_MAX 256  /* sworn.proto: WitnessEvent.witness, 1..256 bytes */
#define SV_WITNESS_CONSISTENCY 3 /* WitnessEventKind WITNESS_EVENT_CONSISTENCY: the alarm */

#define SV_MODEL_MAX 256 /* sworn.proto: Resource.model, UsageRecorded.model */

#define SV_SANDBOX_ID 16     /* sworn.proto: SandboxStarted/SandboxEnded.sandbox_id, exactly 16 */
#define SV_PRINCIPAL_MAX 128 /* principal and sandbox names: 1..128 bytes 0x21..0x7e */
#define SV_COMMAND_MAX 256   /* sworn.proto: SandboxStarted.command, 1..256 items */

#define SV_MINTED_MAX 8    /* sworn.proto: CredentialsMinted.minted, 1..8 */
#define SV_REPLACED_MAX 16 /* sworn.proto: CredentialsMinted.replaced_credential_ids, 0..16 */

#define SV_SOURCE_MAX 4096 /* the longest PolicyLoaded source compared with measured-file */

#define SV_LABEL_MAX 256 /* a principal or host as the report's tables keep it */

#define SV_HTTP_PATH_MAX 8192 /* a canonical path and query (policy/resource.h's bound) */

/* The request an http-message receipt covers (docs/formats.md section 13): present when the
 * decision's request has a method and an http, https, ws or wss canonical_resource. */
struct sv_http_req {
    int present;
    char method[33];
    char scheme[8];
    char host[254];
    unsigned port;
    char path[SV_HTTP_PATH_MAX + 1];
    int has_body; /* Context.body_sha256 is 32 bytes */
    uint8_t body_sha256[SV_HASH];
};

struct sv_entry_info {
    enum sv_entry_kind kind;
    int effect;               /* decision / escalation_resolved: 1 allow, 2 deny, 3 escalate */
    uint8_t digest[SV_HASH];  /* decision: policy_digest; policy_loaded: digest */
    uint64_t time_unix_ms;    /* every kind (escalation_resolved: field 7); never 0 once
                                 accepted (time-missing) */
    uint64_t high_water_ms;   /* time_mark: high_water_unix_ms */
    uint64_t clock_behind_ms; /* time_mark: clock_behind_ms */
    char request_id[SV_ID_MAX + 1];    /* decision / escalation_resolved; credentials_minted:
                                          its allow_request_id */
    char credential_id[SV_ID_MAX + 1]; /* decision: the credential released ("" none);
                                          credentials_minted: from_credential_id */
    uint64_t allow_log_index;          /* credentials_minted: the allow it names (0: none) */
    /* escalation_resolved: the escalate entry it names (fields 5 and 6); linked is 0 in an
     * entry written before them (no hash, index 0) */
    int linked;
    uint64_t escalation_index;
    uint8_t escalation_hash[SV_HASH];
    int refused; /* policy_loaded: the load was refused (its error is set) */
    /* policy_loaded: its source (the policy's path), when at most SV_SOURCE_MAX bytes; source_long
     * is 1 when it is longer (then source is empty and matches no measured-file path) */
    char source[SV_SOURCE_MAX + 1];
    int source_long;
    int no_rule; /* decision: rule_id is empty (no rule decided: decisiond's refusal of a
                    duplicate request id, or a deny no rule matched) */
    uint8_t statement[SV_STATEMENT_MAX]; /* key_event: the statement */
    size_t statement_len;
    uint64_t dropped; /* refusals_dropped: the refusals it counts (saturating at UINT64_MAX) */
    /* credentials_minted: SHA-256 of each minted credential_id and of each replaced one (the
     * released-after-replaced rule of token-exchanges keeps digests, not strings) */
    size_t n_minted_ids, n_replaced_ids;
    uint8_t minted_ids[SV_MINTED_MAX][SV_HASH];
    uint8_t replaced_ids[SV_REPLACED_MAX][SV_HASH];
    /* decision: the request's Principal.sandbox_start_index (0: not from a sandbox);
     * sandbox_ended: its start_index */
    uint64_t sandbox_start_index;
    /* decision with a sandbox_start_index, sandbox_started: SHA-256(principal NUL name NUL uid
     * as 4 bytes big-endian), the request's principal.id, principal.sandbox and principal.uid or
     * the start's principal, name and agent_uid, so that the two compare whatever their length */
    uint8_t sandbox_who[SV_HASH];
    uint8_t sandbox_id[SV_SANDBOX_ID]; /* sandbox_started, sandbox_ended */
    uint8_t operator_digest[SV_HASH];  /* sandbox_started, sandbox_ended: SHA-256(operator) */
    struct sv_http_req http;           /* decision: what an http-message receipt covers */
    /* decision: who asked and where to, for the report's tables (sv_stats.h): the request's
     * principal.id and its destination host (canonical_resource's host, else the request's as
     * received; "" for a refused request without one), each cut to SV_LABEL_MAX bytes (then
     * *_cut is 1: a principal id may be 8192 bytes, a table row need not be) */
    char principal[SV_LABEL_MAX + 1];
    char host[SV_LABEL_MAX + 1];
    int principal_cut, host_cut;
    /* decision: operation "model.call" (model_call), its canonical model (request.resource.model
     * lower-cased) and its token ceiling (0: none). usage_recorded: model, reserved_tokens, the
     * allow it names (allow_log_index, allow_hash; request_id is its allow_request_id) */
    int model_call;
    char model[SV_MODEL_MAX + 1];
    uint64_t token_ceiling;
    uint64_t reserved_tokens;
    uint8_t allow_hash[SV_HASH];
    /* witness_event: the witness's key name, its kind (1..3) and the checkpoint size submitted */
    char witness[SV_WITNESS_NAME_MAX + 1];
    int witness_kind;
    uint64_t witness_checkpoint_size;
    struct sv_conformance conformance; /* conformance_report */
};

/* Check one entry; fills info on success. 0, or -1 with code (capacity 32) and why. */
int sv_entry_check(const uint8_t *e, size_t len, struct sv_entry_info *info, char *code, char *why);

#define SV_STARTUP_FILES 256 /* sworn.proto: at most 256 measured files */

/* What a Startup entry says about the measured start (docs/verifier.md section 2,
 * `measured-start record`) and about the processes (section 3, `separation`). */
struct sv_startup {
    int measured; /* 1: pcr23_before and pcr23 are both 32 bytes (a TPM measured) */
    uint8_t pcr23_before[SV_HASH];
    uint8_t pcr23[SV_HASH];
    size_t nfiles;
    uint8_t sha256[SV_STARTUP_FILES][SV_HASH]; /* in extend order */
    char *path[SV_STARTUP_FILES];              /* owned; freed by sv_startup_free */
    int role[SV_STARTUP_FILES]; /* MeasuredFile.role: 0 unrecorded, 1 image, 2 signer, 3
                                 * configuration, 4 policy, 5 tpm.measure (at most one 4) */
    /* the processes as they started (fields 5 to 7; all zero in records of an older decisiond) */
    uint32_t engine_uid;
    uint32_t signer_uid;
    int development; /* hardening.development: true */
};

/*
 * Read the measured start of an entry that sv_entry_check accepted as a Startup entry. OUT: *out
 * (free it with sv_startup_free, also after a failure). 0, or -1 with why when the entry is not a
 * Startup entry or memory runs out.
 */
int sv_entry_startup(const uint8_t *e, size_t len, struct sv_startup *out, char *why);
void sv_startup_free(struct sv_startup *s);

#endif
