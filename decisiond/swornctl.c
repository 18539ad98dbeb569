/*
 * swornctl -- the operator's tool for a running sworn-decisiond (docs/decisiond.md "swornctl").
 *
 *   swornctl [--config FILE | --admin SOCKET] status
 *   swornctl ... escalations
 *   swornctl ... approve INDEX [--hash HEX] [--reason TEXT]
 *   swornctl ... deny INDEX [--hash HEX] [--reason TEXT]
 *   swornctl ... reload
 *   swornctl ... checkpoint
 *   swornctl ... tail [COUNT]
 *   swornctl ... metrics
 *   swornctl [--config FILE | --decision SOCKET] decide REQUEST.json
 *
 * Every command but `decide` talks to the admin socket (only operator uids are served there);
 * `decide` sends one AuthorizationRequest (JSON as `sworn-policy eval` reads it, docs/policy.md)
 * to the decision socket, which serves only the proxy uids: it is for development stacks where the
 * operator is also configured as a proxy uid. Socket paths come from --admin/--decision or from
 * the sockets: section of the decisiond configuration (--config, default
 * /etc/sworn/decisiond.yaml).
 *
 * approve and deny name the held request by its escalate entry's log index (`escalations` lists
 * it with the entry's hash, every page of the listing, lowest index first), never by its request
 * id, which the proxy chooses: an id can name another request than the one the operator looked at.
 * --hash HEX (the entry hash listed) makes decisiond refuse the call unless the entry at INDEX has
 * that hash.
 *
 * Output is JSON, one object per line (tail: one per entry). A credential value in a decide
 * answer is never printed, only its id and SHA-256.
 * Exit status: 0 success (decide: ALLOW), 1 failure or a refusal (decide: DENY or an error frame),
 * 2 usage, 3 decide: ESCALATE.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <openssl/sha.h>

#include "cli.h"
#include "config.h"
#include "dclient.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "frame.h"
#include "reqjson.h"
#include "utf8.h"
#include "wipe.h"

#define CTL_TIMEOUT_MS 30000
#define DEFAULT_CONFIG "/etc/sworn/decisiond.yaml"

static const char usage_text[] =
    "usage: swornctl [--config FILE] [--admin SOCKET] [--decision SOCKET] COMMAND\n"
    "       swornctl --help | --version\n"
    "commands: status | escalations | approve INDEX [--hash HEX] [--reason R] |\n"
    "          deny INDEX [--hash HEX] [--reason R] | reload | checkpoint |\n"
    "          tail [COUNT] | metrics | decide REQUEST.json\n"
    "INDEX is the log index of the escalate entry (swornctl escalations lists it).\n"
    "The operator's tool on decisiond's admin socket (docs/decisiond.md); the configuration\n"
    "(default " DEFAULT_CONFIG ") names the sockets.\n";

static const char own_exits[] = "  (decide: 0 allow, 1 deny or an error frame)\n"
                                "  3  decide: the request escalates to a human\n";

static int usage(const char *why)
{
    fprintf(stderr, "swornctl: %s\n%s", why, usage_text);
    return SWORN_EXIT_USAGE;
}

/* An error for a person: the message may quote what the daemon or a file said, so it is
 * escaped (utf8.h) like everything else swornctl prints. */
static int die(const char *what)
{
    char msg[SWORN_UTF8_ESCAPE_MAX(SWORN_ERR_MSG_MAX)];

    (void)sworn_utf8_escape(sworn_err_msg(), strlen(sworn_err_msg()), SWORN_UTF8_ESCAPE_TEXT, msg,
                            sizeof(msg));
    fprintf(stderr, "swornctl: %s: %s\n", what, msg);
    return 1;
}

/* The client's read buffer is large: one, outside the stack. */
static struct sworn_dclient client;

/* One admin request on a new connection to sock, its answer decoded strictly. */
static int admin_call(const char *sock, Sworn__V1__AdminRequest *rq, Sworn__V1__AdminResponse **out)
{
    int rc;

    *out = NULL;
    if (sworn_dclient_connect(&client, sock) < 0)
        return -1;
    rc = sworn_dclient_admin(&client, rq, CTL_TIMEOUT_MS, out);
    sworn_dclient_close(&client);
    return rc;
}

/* One decision request on a new connection to sock (the reply may hold a credential). */
static int decide_call(const char *sock, const Sworn__V1__AuthorizationRequest *req,
                       Sworn__V1__DecisionReply **out)
{
    int rc;

    *out = NULL;
    if (sworn_dclient_connect(&client, sock) < 0)
        return -1;
    rc = sworn_dclient_decide(&client, req, CTL_TIMEOUT_MS, out);
    sworn_dclient_close(&client);
    return rc;
}

/* One line of JSON: json-c escapes C0 only, so the line goes through the escaper (utf8.h):
 * no control, bidi or invisible character from a record reaches the operator's terminal. */
static void print_json(json_object *o)
{
    char *line = sworn_utf8_escape_dup(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        SWORN_UTF8_ESCAPE_JSON);

    printf("%s\n", line != NULL ? line : "{\"error\":\"out of memory\"}");
    free(line);
    json_object_put(o);
}

static json_object *hex_json(const uint8_t *p, size_t n)
{
    char hex[2 * 64 + 1];

    if (n > 64 || sworn_hex_encode(p, n, hex, sizeof(hex)) < 0)
        return json_object_new_string("");
    return json_object_new_string(hex);
}

static int print_error(const Sworn__V1__ErrorFrame *e)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "error", json_object_new_int((int)e->code));
    json_object_object_add(o, "message", json_object_new_string(e->message));
    if (e->request_id[0] != '\0')
        json_object_object_add(o, "request_id", json_object_new_string(e->request_id));
    print_json(o);
    return 1;
}

/* One log entry as JSON (tail). */
static json_object *entry_json(uint64_t index, const Sworn__V1__Entry *e)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "index", json_object_new_int64((int64_t)index));
    switch (e->kind_case) {
    case SWORN__V1__ENTRY__KIND_DECISION: {
        const Sworn__V1__DecisionRecord *r = e->decision;
        char *req = sworn_reqjson_print_request(r->request);

        json_object_object_add(o, "kind", json_object_new_string("decision"));
        json_object_object_add(o, "effect",
                               json_object_new_string(sworn_frame_effect_name(r->effect)));
        json_object_object_add(o, "rule", json_object_new_string(r->rule_id));
        json_object_object_add(o, "reason", json_object_new_string(r->reason));
        json_object_object_add(o, "policy_digest",
                               hex_json(r->policy_digest.data, r->policy_digest.len));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)r->time_unix_ms));
        if (r->credential_id[0] != '\0')
            json_object_object_add(o, "credential_id", json_object_new_string(r->credential_id));
        if (req != NULL)
            json_object_object_add(o, "request", json_tokener_parse(req));
        free(req);
        break;
    }
    case SWORN__V1__ENTRY__KIND_POLICY_LOADED:
        json_object_object_add(o, "kind", json_object_new_string("policy_loaded"));
        json_object_object_add(
            o, "digest", hex_json(e->policy_loaded->digest.data, e->policy_loaded->digest.len));
        json_object_object_add(o, "source", json_object_new_string(e->policy_loaded->source));
        if (e->policy_loaded->error[0] != '\0')
            json_object_object_add(o, "error", json_object_new_string(e->policy_loaded->error));
        break;
    case SWORN__V1__ENTRY__KIND_KEY_EVENT:
        json_object_object_add(o, "kind", json_object_new_string("key_event"));
        break;
    case SWORN__V1__ENTRY__KIND_STARTUP: {
        json_object *files = json_object_new_array();

        json_object_object_add(o, "kind", json_object_new_string("startup"));
        for (size_t i = 0; i < e->startup->n_files; i++) {
            json_object *f = json_object_new_object();

            json_object_object_add(f, "path", json_object_new_string(e->startup->files[i]->path));
            json_object_object_add(
                f, "sha256",
                hex_json(e->startup->files[i]->sha256.data, e->startup->files[i]->sha256.len));
            json_object_array_add(files, f);
        }
        json_object_object_add(o, "files", files);
        json_object_object_add(o, "pcr23", hex_json(e->startup->pcr23.data, e->startup->pcr23.len));
        break;
    }
    case SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED:
        json_object_object_add(o, "kind", json_object_new_string("escalation_resolved"));
        json_object_object_add(o, "request_id",
                               json_object_new_string(e->escalation_resolved->request_id));
        json_object_object_add(
            o, "effect",
            json_object_new_string(sworn_frame_effect_name(e->escalation_resolved->effect)));
        json_object_object_add(o, "operator",
                               json_object_new_string(e->escalation_resolved->operator_));
        json_object_object_add(o, "reason", json_object_new_string(e->escalation_resolved->reason));
        json_object_object_add(
            o, "escalation_index",
            json_object_new_int64((int64_t)e->escalation_resolved->escalation_index));
        json_object_object_add(o, "escalation_hash",
                               hex_json(e->escalation_resolved->escalation_hash.data,
                                        e->escalation_resolved->escalation_hash.len));
        json_object_object_add(
            o, "time_unix_ms",
            json_object_new_int64((int64_t)e->escalation_resolved->time_unix_ms));
        break;
    case SWORN__V1__ENTRY__KIND_REFUSED:
        json_object_object_add(o, "kind", json_object_new_string("refused"));
        json_object_object_add(o, "channel", json_object_new_string(e->refused->channel));
        json_object_object_add(o, "peer_uid", json_object_new_int64(e->refused->peer_uid));
        json_object_object_add(o, "message", json_object_new_string(e->refused->message));
        break;
    case SWORN__V1__ENTRY__KIND_CREDENTIALS_MINTED: {
        const Sworn__V1__CredentialsMinted *m = e->credentials_minted;
        json_object *minted = json_object_new_array(), *replaced = json_object_new_array();

        json_object_object_add(o, "kind", json_object_new_string("credentials_minted"));
        json_object_object_add(o, "request_id", json_object_new_string(m->request_id));
        json_object_object_add(o, "allow_request_id", json_object_new_string(m->allow_request_id));
        json_object_object_add(o, "allow_log_index",
                               json_object_new_int64((int64_t)m->allow_log_index));
        json_object_object_add(o, "from_credential_id",
                               json_object_new_string(m->from_credential_id));
        for (size_t i = 0; i < m->n_minted; i++) {
            json_object *t = json_object_new_object();

            json_object_object_add(t, "field", json_object_new_string(m->minted[i]->field));
            json_object_object_add(t, "credential_id",
                                   json_object_new_string(m->minted[i]->credential_id));
            json_object_array_add(minted, t);
        }
        json_object_object_add(o, "minted", minted);
        for (size_t i = 0; i < m->n_replaced_credential_ids; i++)
            json_object_array_add(replaced, json_object_new_string(m->replaced_credential_ids[i]));
        json_object_object_add(o, "replaced_credential_ids", replaced);
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)m->time_unix_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED: {
        const Sworn__V1__RefusalsDropped *r = e->refusals_dropped;
        json_object *rows = json_object_new_array();

        json_object_object_add(o, "kind", json_object_new_string("refusals_dropped"));
        json_object_object_add(o, "period_start_unix_ms",
                               json_object_new_int64((int64_t)r->period_start_unix_ms));
        json_object_object_add(o, "period_end_unix_ms",
                               json_object_new_int64((int64_t)r->period_end_unix_ms));
        for (size_t i = 0; i < r->n_dropped; i++) {
            json_object *row = json_object_new_object();

            json_object_object_add(row, "channel", json_object_new_string(r->dropped[i]->channel));
            json_object_object_add(row, "peer_uid", json_object_new_int64(r->dropped[i]->peer_uid));
            json_object_object_add(row, "count",
                                   json_object_new_int64((int64_t)r->dropped[i]->count));
            json_object_array_add(rows, row);
        }
        json_object_object_add(o, "dropped", rows);
        break;
    }
    case SWORN__V1__ENTRY__KIND_TIME_MARK: {
        const Sworn__V1__TimeMark *t = e->time_mark;

        json_object_object_add(o, "kind", json_object_new_string("time_mark"));
        json_object_object_add(
            o, "reason",
            json_object_new_string(t->reason == SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START
                                       ? "start"
                                       : "periodic"));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)t->time_unix_ms));
        json_object_object_add(o, "high_water_unix_ms",
                               json_object_new_int64((int64_t)t->high_water_unix_ms));
        json_object_object_add(o, "clock_behind_ms",
                               json_object_new_int64((int64_t)t->clock_behind_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_SANDBOX_STARTED: {
        const Sworn__V1__SandboxStarted *t = e->sandbox_started;
        json_object *argv = json_object_new_array(), *lim = json_object_new_object();

        json_object_object_add(o, "kind", json_object_new_string("sandbox_started"));
        json_object_object_add(o, "principal", json_object_new_string(t->principal));
        json_object_object_add(o, "name", json_object_new_string(t->name));
        json_object_object_add(o, "sandbox_id", hex_json(t->sandbox_id.data, t->sandbox_id.len));
        for (size_t i = 0; i < t->n_command; i++)
            json_object_array_add(argv, json_object_new_string(t->command[i]));
        json_object_object_add(o, "command", argv);
        json_object_object_add(lim, "wall_ms", json_object_new_int64((int64_t)t->limits->wall_ms));
        json_object_object_add(lim, "memory_bytes",
                               json_object_new_int64((int64_t)t->limits->memory_bytes));
        json_object_object_add(lim, "processes", json_object_new_int64(t->limits->processes));
        json_object_object_add(lim, "enforced_by", json_object_new_string(t->limits->enforced_by));
        json_object_object_add(o, "limits", lim);
        json_object_object_add(o, "config_sha256",
                               hex_json(t->config_sha256.data, t->config_sha256.len));
        json_object_object_add(o, "agent_uid", json_object_new_int64(t->agent_uid));
        json_object_object_add(o, "isolation", json_object_new_string(t->isolation));
        json_object_object_add(o, "operator", json_object_new_string(t->operator_));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)t->time_unix_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_SANDBOX_ENDED: {
        static const char *const reasons[] = {"unspecified", "exited",  "signaled",
                                              "timeout",     "stopped", "failed"};
        const Sworn__V1__SandboxEnded *t = e->sandbox_ended;

        json_object_object_add(o, "kind", json_object_new_string("sandbox_ended"));
        json_object_object_add(o, "start_index", json_object_new_int64((int64_t)t->start_index));
        json_object_object_add(o, "sandbox_id", hex_json(t->sandbox_id.data, t->sandbox_id.len));
        json_object_object_add(
            o, "reason",
            json_object_new_string((size_t)t->reason < 6 ? reasons[t->reason] : "unknown"));
        json_object_object_add(o, "code", json_object_new_int64(t->code));
        json_object_object_add(o, "duration_ms", json_object_new_int64((int64_t)t->duration_ms));
        json_object_object_add(o, "operator", json_object_new_string(t->operator_));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)t->time_unix_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_WITNESS_EVENT: {
        const Sworn__V1__WitnessEvent *w = e->witness_event;
        static const char *const kinds[] = {"?", "failing", "recovered", "consistency"};

        json_object_object_add(o, "kind", json_object_new_string("witness_event"));
        json_object_object_add(o, "witness", json_object_new_string(w->witness));
        json_object_object_add(o, "key_id", hex_json(w->key_id.data, w->key_id.len));
        json_object_object_add(o, "event",
                               json_object_new_string(kinds[w->kind <= 3 ? w->kind : 0]));
        json_object_object_add(o, "status", json_object_new_int64(w->status));
        json_object_object_add(o, "checkpoint_size",
                               json_object_new_int64((int64_t)w->checkpoint_size));
        json_object_object_add(o, "old_size", json_object_new_int64((int64_t)w->old_size));
        json_object_object_add(o, "witness_size", json_object_new_int64((int64_t)w->witness_size));
        json_object_object_add(o, "reason", json_object_new_string(w->reason));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)w->time_unix_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT: {
        const Sworn__V1__ConformanceReport *r = e->conformance_report;
        const Sworn__V1__ConformanceSummary *s = r->summary;
        json_object *only = json_object_new_array();
        char tier[4];

        snprintf(tier, sizeof(tier), "T%u", (unsigned)s->tier);
        json_object_object_add(o, "kind", json_object_new_string("conformance_report"));
        json_object_object_add(o, "result",
                               json_object_new_string(s->result == 1 ? "pass" : "fail"));
        json_object_object_add(o, "tier", json_object_new_string(tier));
        for (size_t i = 0; i < s->n_only; i++)
            json_object_array_add(only, json_object_new_string(s->only[i]));
        json_object_object_add(o, "only", only);
        json_object_object_add(o, "passed", json_object_new_int64(s->passed));
        json_object_object_add(o, "failed", json_object_new_int64(s->failed));
        json_object_object_add(o, "skipped", json_object_new_int64(s->skipped));
        json_object_object_add(o, "errors", json_object_new_int64(s->errors));
        json_object_object_add(o, "operator_name", json_object_new_string(s->operator_name));
        json_object_object_add(o, "operator_uid", json_object_new_int64(s->operator_uid));
        json_object_object_add(o, "operator_user", json_object_new_string(s->operator_user));
        json_object_object_add(o, "started_unix_ms",
                               json_object_new_int64((int64_t)s->started_unix_ms));
        json_object_object_add(o, "ended_unix_ms",
                               json_object_new_int64((int64_t)s->ended_unix_ms));
        json_object_object_add(o, "checkpoint_size",
                               json_object_new_int64((int64_t)s->checkpoint_size));
        json_object_object_add(o, "startup_index",
                               json_object_new_int64((int64_t)s->startup_index));
        json_object_object_add(o, "probe_set_sha256",
                               hex_json(s->probe_set_sha256.data, s->probe_set_sha256.len));
        json_object_object_add(o, "report_sha256",
                               hex_json(s->report_sha256.data, s->report_sha256.len));
        json_object_object_add(o, "report_length",
                               json_object_new_int64((int64_t)s->report_length));
        json_object_object_add(o, "peer_uid", json_object_new_int64(r->peer_uid));
        json_object_object_add(o, "operator", json_object_new_string(r->operator_));
        json_object_object_add(o, "key_id", hex_json(r->key_id.data, r->key_id.len));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)r->time_unix_ms));
        break;
    }
    case SWORN__V1__ENTRY__KIND_USAGE_RECORDED: {
        const Sworn__V1__UsageRecorded *t = e->usage_recorded;

        json_object_object_add(o, "kind", json_object_new_string("usage_recorded"));
        json_object_object_add(o, "request_id", json_object_new_string(t->request_id));
        json_object_object_add(o, "allow_request_id", json_object_new_string(t->allow_request_id));
        json_object_object_add(o, "allow_log_index",
                               json_object_new_int64((int64_t)t->allow_log_index));
        json_object_object_add(o, "allow_entry_hash",
                               hex_json(t->allow_entry_hash.data, t->allow_entry_hash.len));
        json_object_object_add(o, "model", json_object_new_string(t->model));
        json_object_object_add(o, "reported", json_object_new_boolean(t->reported));
        json_object_object_add(o, "input_tokens", json_object_new_int64((int64_t)t->input_tokens));
        json_object_object_add(o, "output_tokens",
                               json_object_new_int64((int64_t)t->output_tokens));
        if (!t->reported)
            json_object_object_add(o, "missing", json_object_new_string(t->missing));
        json_object_object_add(o, "reserved_tokens",
                               json_object_new_int64((int64_t)t->reserved_tokens));
        json_object_object_add(o, "charged_tokens",
                               json_object_new_int64((int64_t)t->charged_tokens));
        json_object_object_add(o, "time_unix_ms", json_object_new_int64((int64_t)t->time_unix_ms));
        break;
    }
    default:
        json_object_object_add(o, "kind", json_object_new_string("unknown"));
        break;
    }
    return o;
}

/*
 * approve|deny INDEX [--hash HEX] [--reason R], in argv[0..argc), into rs (hash into hash). 0, or
 * 2 after a usage message.
 */
static int parse_resolve(int argc, char **argv, Sworn__V1__ResolveRequest *rs,
                         uint8_t hash[SWORN_FRAME_HASH_LEN])
{
    uint64_t index;

    if (argc < 2 || argc % 2 != 0)
        return usage("approve|deny INDEX [--hash HEX] [--reason R]");
    if (sworn_parse_u64(argv[1], strlen(argv[1]), &index) < 0)
        return usage("INDEX must be the escalate entry's log index (swornctl escalations lists "
                     "it), not a request id");
    rs->escalation_index = index;
    rs->approve = strcmp(argv[0], "approve") == 0;
    rs->reason = "";
    for (int i = 2; i < argc; i += 2) {
        if (strcmp(argv[i], "--reason") == 0) {
            rs->reason = argv[i + 1];
        } else if (strcmp(argv[i], "--hash") == 0) {
            if (sworn_hex_decode(argv[i + 1], strlen(argv[i + 1]), hash, SWORN_FRAME_HASH_LEN) < 0)
                return usage("--hash must be the 64 hex digits of the entry hash");
            rs->escalation_hash.data = hash;
            rs->escalation_hash.len = SWORN_FRAME_HASH_LEN;
        } else {
            return usage("approve|deny INDEX [--hash HEX] [--reason R]");
        }
    }
    return 0;
}

/* One held escalation as JSON: the index (and hash) is what approve and deny take, the id and
 * the request are for display. */
static json_object *pending_json(const Sworn__V1__PendingEscalation *p)
{
    json_object *e = json_object_new_object();
    char *req = sworn_reqjson_print_request(p->request);

    json_object_object_add(e, "log_index", json_object_new_int64((int64_t)p->log_index));
    json_object_object_add(e, "entry_hash", hex_json(p->entry_hash.data, p->entry_hash.len));
    json_object_object_add(e, "request_id", json_object_new_string(p->request->request_id));
    json_object_object_add(e, "since_unix_ms", json_object_new_int64((int64_t)p->since_unix_ms));
    json_object_object_add(e, "deadline_unix_ms",
                           json_object_new_int64((int64_t)p->deadline_unix_ms));
    if (req != NULL)
        json_object_object_add(e, "request", json_tokener_parse(req));
    free(req);
    return e;
}

/*
 * One page of the held escalations from log index from. OUT: *whole, the answer (free it, also
 * on failure), and *out, its ListEscalationsResponse. 0; 1 when the answer is an error frame;
 * -1 with sworn_err set, also when the page does not start at from or later (decisiond's
 * promise, which the decoder cannot check).
 */
static int escalations_page(const char *sock, uint64_t from, Sworn__V1__AdminResponse **whole,
                            const Sworn__V1__ListEscalationsResponse **out)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ListEscalationsRequest le = SWORN__V1__LIST_ESCALATIONS_REQUEST__INIT;
    Sworn__V1__AdminResponse *r = NULL;

    le.from_index = from;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_LIST_ESCALATIONS;
    rq.list_escalations = &le;
    *whole = NULL;
    *out = NULL;
    if (admin_call(sock, &rq, &r) < 0)
        return -1;
    *whole = r;
    if (r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR)
        return 1;
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS)
        return sworn_err_set(SWORN_ERR_FORMAT, "decisiond answered a listing with another result");
    if (r->list_escalations->n_pending > 0 && r->list_escalations->pending[0]->log_index < from)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "decisiond answered a page from index %llu with index %llu",
                             (unsigned long long)from,
                             (unsigned long long)r->list_escalations->pending[0]->log_index);
    *out = r->list_escalations;
    return 0;
}

/*
 * escalations: every page, from index 0 and then from the last index listed + 1 while decisiond
 * says more are held, printed as one JSON object {"pending":[...],"total":N} written as the pages
 * come (memory stays one page, however many are held). total is the last page's count of all
 * held. Each page is a snapshot of its own moment: an escalation held through the whole listing
 * is listed exactly once (pages ascend, each from past the last); one resolved meanwhile may be
 * listed yet gone, one held meanwhile may be missing, and total then differs from what is listed.
 * A page that cannot be had ends the object with "incomplete":true and exit status 1.
 */
static int cmd_escalations(const char *sock)
{
    const Sworn__V1__ListEscalationsResponse *l;
    Sworn__V1__AdminResponse *r;
    uint64_t from = 0;
    size_t listed = 0;
    int rc, opened = 0;

    for (;;) {
        rc = escalations_page(sock, from, &r, &l);
        if (rc != 0)
            break;
        if (!opened)
            fputs("{\"pending\":[", stdout);
        opened = 1;
        for (size_t i = 0; i < l->n_pending; i++) {
            json_object *e = pending_json(l->pending[i]);

            printf("%s%s", listed++ == 0 ? "" : ",",
                   json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
            json_object_put(e);
        }
        if (!l->more) {
            printf("],\"total\":%u}\n", (unsigned)l->total);
            if (l->total != listed)
                fprintf(stderr,
                        "swornctl: the held escalations changed during the listing (%zu listed, "
                        "%u held now): list again to see them as they are\n",
                        listed, (unsigned)l->total);
            sworn__v1__admin_response__free_unpacked(r, NULL);
            return 0;
        }
        /* more is only set on a full page (the decoder checks it), in ascending order. */
        from = l->pending[l->n_pending - 1]->log_index;
        sworn__v1__admin_response__free_unpacked(r, NULL);
        if (from == UINT64_MAX) {
            rc = sworn_err_set(SWORN_ERR_FORMAT, "decisiond says more are held past index %llu",
                               (unsigned long long)from);
            r = NULL;
            break;
        }
        from++;
    }
    if (opened)
        fputs("],\"incomplete\":true}\n", stdout);
    if (rc > 0)
        print_error(r->error);
    if (r != NULL)
        sworn__v1__admin_response__free_unpacked(r, NULL);
    return rc > 0 ? 1 : die("escalations");
}

static int cmd_admin(const char *sock, int argc, char **argv)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__StatusRequest st = SWORN__V1__STATUS_REQUEST__INIT;
    Sworn__V1__ResolveRequest rs = SWORN__V1__RESOLVE_REQUEST__INIT;
    Sworn__V1__ReloadPolicyRequest rl = SWORN__V1__RELOAD_POLICY_REQUEST__INIT;
    Sworn__V1__CheckpointNowRequest cn = SWORN__V1__CHECKPOINT_NOW_REQUEST__INIT;
    Sworn__V1__TailRequest tl = SWORN__V1__TAIL_REQUEST__INIT;
    Sworn__V1__MetricsRequest mt = SWORN__V1__METRICS_REQUEST__INIT;
    Sworn__V1__AdminResponse *r = NULL;
    uint8_t hash[SWORN_FRAME_HASH_LEN];
    const char *cmd = argv[0];
    json_object *o;
    int rc = 0;

    if (strcmp(cmd, "status") == 0 && argc == 1) {
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_STATUS;
        rq.status = &st;
    } else if (strcmp(cmd, "escalations") == 0 && argc == 1) {
        return cmd_escalations(sock);
    } else if (strcmp(cmd, "approve") == 0 || strcmp(cmd, "deny") == 0) {
        if (parse_resolve(argc, argv, &rs, hash) != 0)
            return 2;
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RESOLVE;
        rq.resolve = &rs;
    } else if (strcmp(cmd, "reload") == 0 && argc == 1) {
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_RELOAD_POLICY;
        rq.reload_policy = &rl;
    } else if (strcmp(cmd, "checkpoint") == 0 && argc == 1) {
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW;
        rq.checkpoint_now = &cn;
    } else if (strcmp(cmd, "tail") == 0 && argc <= 2) {
        uint64_t n = 10;

        if (argc == 2 && (sworn_parse_u64(argv[1], strlen(argv[1]), &n) < 0 || n < 1 ||
                          n > SWORN_FRAME_TAIL_MAX))
            return usage("tail COUNT must be 1..1000");
        tl.count = (uint32_t)n;
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_TAIL;
        rq.tail = &tl;
    } else if (strcmp(cmd, "metrics") == 0 && argc == 1) {
        rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_METRICS;
        rq.metrics = &mt;
    } else {
        return usage("unknown command or wrong arguments");
    }
    if (admin_call(sock, &rq, &r) < 0)
        return die(cmd);
    o = json_object_new_object();
    switch (r->body_case) {
    case SWORN__V1__ADMIN_RESPONSE__BODY_ERROR:
        json_object_put(o);
        rc = print_error(r->error);
        o = NULL;
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_STATUS:
        json_object_object_add(o, "tree_size",
                               json_object_new_int64((int64_t)r->status->tree_size));
        json_object_object_add(o, "checkpoint_size",
                               json_object_new_int64((int64_t)r->status->checkpoint_size));
        json_object_object_add(
            o, "policy_digest",
            hex_json(r->status->policy_digest.data, r->status->policy_digest.len));
        json_object_object_add(o, "pending_escalations",
                               json_object_new_int64(r->status->pending_escalations));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE:
        json_object_object_add(o, "log_index",
                               json_object_new_int64((int64_t)r->resolve->log_index));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_RELOAD_POLICY:
        json_object_object_add(
            o, "digest", hex_json(r->reload_policy->digest.data, r->reload_policy->digest.len));
        json_object_object_add(o, "log_index",
                               json_object_new_int64((int64_t)r->reload_policy->log_index));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW:
        json_object_object_add(o, "tree_size",
                               json_object_new_int64((int64_t)r->checkpoint_now->tree_size));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_TAIL:
        json_object_put(o);
        o = NULL;
        for (size_t i = 0; i < r->tail->n_entries; i++)
            print_json(entry_json(r->tail->first_index + i, r->tail->entries[i]));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_SANDBOX:
        json_object_object_add(o, "log_index",
                               json_object_new_int64((int64_t)r->sandbox->log_index));
        break;
    case SWORN__V1__ADMIN_RESPONSE__BODY_METRICS:
        json_object_put(o);
        o = NULL;
        fwrite(r->metrics->text.data, 1, r->metrics->text.len, stdout);
        break;
    default:
        json_object_put(o);
        o = NULL;
        rc = 1;
        break;
    }
    if (o != NULL)
        print_json(o);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    return rc;
}

static int cmd_decide(const char *sock, const char *file)
{
    char *text = NULL;
    size_t text_len = 0;
    Sworn__V1__AuthorizationRequest *req = NULL;
    Sworn__V1__DecisionReply *reply = NULL;
    int rc = 1;

    if (sworn_file_read(file, SWORN_REQJSON_MAX, &text, &text_len) < 0 ||
        sworn_reqjson_parse(text, text_len, &req) < 0 || decide_call(sock, req, &reply) < 0) {
        rc = die("decide");
        goto out;
    }
    if (reply->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR) {
        rc = print_error(reply->error);
    } else {
        const Sworn__V1__Decision *dec = reply->decision;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "request_id", json_object_new_string(dec->request_id));
        json_object_object_add(o, "effect",
                               json_object_new_string(sworn_frame_effect_name(dec->effect)));
        json_object_object_add(o, "rule", json_object_new_string(dec->rule_id));
        json_object_object_add(o, "reason", json_object_new_string(dec->reason));
        json_object_object_add(o, "log_index", json_object_new_int64((int64_t)dec->log_index));
        json_object_object_add(o, "entry_hash",
                               hex_json(dec->entry_hash.data, dec->entry_hash.len));
        if (dec->receipt != NULL) {
            json_object *rc_o = json_object_new_object();
            char sig[2 * 512 + 1];

            json_object_object_add(rc_o, "key_id",
                                   hex_json(dec->receipt->key_id.data, dec->receipt->key_id.len));
            if (sworn_hex_encode(dec->receipt->signature.data, dec->receipt->signature.len, sig,
                                 sizeof(sig)) == 0)
                json_object_object_add(rc_o, "signature", json_object_new_string(sig));
            json_object_object_add(rc_o, "alg", json_object_new_int((int)dec->receipt->alg));
            if (dec->receipt->form == 1) {
                /* An http-message receipt: an RFC 9421 signature (docs/formats.md section 13). */
                json_object_object_add(rc_o, "form", json_object_new_int(1));
                json_object_object_add(rc_o, "created",
                                       json_object_new_int64((int64_t)dec->receipt->created));
                json_object_object_add(rc_o, "signature_params",
                                       json_object_new_string(dec->receipt->signature_params));
            }
            json_object_object_add(o, "receipt", rc_o);
        }
        if (dec->credential != NULL) {
            /* The value itself is never printed: its id and hash say which one was released. */
            uint8_t h[32];
            json_object *c = json_object_new_object();

            SHA256(dec->credential->value.data, dec->credential->value.len, h);
            json_object_object_add(c, "id", json_object_new_string(dec->credential->id));
            json_object_object_add(c, "value_sha256", hex_json(h, 32));
            json_object_object_add(o, "credential", c);
        }
        print_json(o);
        rc = dec->effect == SWORN__V1__EFFECT__EFFECT_ALLOW      ? 0
             : dec->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE ? 3
                                                                 : 1;
    }
out:
    if (reply != NULL) {
        if (reply->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION &&
            reply->decision->credential != NULL)
            sworn_memzero(reply->decision->credential->value.data,
                          reply->decision->credential->value.len);
        sworn__v1__decision_reply__free_unpacked(reply, NULL);
    }
    if (req != NULL)
        sworn__v1__authorization_request__free_unpacked(req, NULL);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    const char *config = NULL, *admin = NULL, *decision = NULL;
    struct sworn_dconfig *cfg = NULL;
    int i = 1, rc;

    if (sworn_cli_standard(argc, argv, "swornctl", usage_text, own_exits, &rc))
        return rc;
    while (i < argc && strncmp(argv[i], "--", 2) == 0) {
        if (i + 1 >= argc)
            return usage("option without a value");
        if (strcmp(argv[i], "--config") == 0)
            config = argv[i + 1];
        else if (strcmp(argv[i], "--admin") == 0)
            admin = argv[i + 1];
        else if (strcmp(argv[i], "--decision") == 0)
            decision = argv[i + 1];
        else
            return usage("unknown option");
        i += 2;
    }
    if (i >= argc)
        return usage("no command");
    if ((strcmp(argv[i], "decide") == 0 ? decision : admin) == NULL) {
        if (sworn_dconfig_load(config != NULL ? config : DEFAULT_CONFIG, &cfg) < 0)
            return die("--config");
        if (admin == NULL)
            admin = cfg->admin_socket;
        if (decision == NULL)
            decision = cfg->decision_socket;
    }
    if (strcmp(argv[i], "decide") == 0)
        rc = argc - i == 2 ? cmd_decide(decision, argv[i + 1]) : usage("decide REQUEST.json");
    else
        rc = cmd_admin(admin, argc - i, argv + i);
    sworn_dconfig_free(cfg);
    return rc;
}
