/*
 * test_conformance_attacks.c -- a red team's attacks on recorded conformance reports (issue 19),
 * built from the documentation alone (docs/conformance.md sections 1, 2, 4 and 7, docs/formats.md
 * section 15, docs/decisiond.md "Conformance reports" and CheckpointNow, docs/verifier.md check
 * `reports`, docs/threat-model.md "Conformance reports", docs/cli.md), against real stacks
 * (scripts/dev-stack through stack_fixture.h), the real sworn-conformance, sworn-verify and every
 * installed program. Each test asserts what the documents promise: a failing test is a finding,
 * named in its comment ("FINDING n").
 *
 * Attackers: the dishonest operator (the admin socket), the agent (the decision socket the proxy
 * uses, the proxy's listener), and the outsider (a copy of the exported record, edited before an
 * auditor verifies it).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "fileio.h"
#include "frame.h"
#include "stack_fixture.h"
#include "sworn.pb-c.h"
#include "testutil.h"
#include "verify_fixture.h"

static struct sworn_stack stack;
static int stack_up;
static char *base_text; /* a real run's JSON report, as sworn-conformance writes it */
static size_t base_len;

/* ---- helpers ---- */

/* A deployment file for the shared stack (no fail_closed: nothing stops decisiond). */
static char *deployment(struct sworn_stack *s, const char *name)
{
    char *path = sworn_test_path(s->dir, name), *tiles = sworn_test_path(s->dir, "tiles"),
         *trust = sworn_test_path(s->dir, "trust.txt");
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "operator: \"Red Team\"\nrecord: %s\ntrust_policy: %s\nsworn_verify: %s\n", tiles,
            trust, sworn_test_bin("SWORN_VERIFY_BIN"));
    fprintf(f, "admin_socket: %s\ndecision_socket: %s\nlog_db: %s\n", s->admin, s->decision,
            s->log_db);
    fprintf(f, "agent:\n  uid: 65534\n  gids: [65534]\n");
    fclose(f);
    free(tiles);
    free(trust);
    return path;
}

/* A real report of stack s, not recorded (--no-record): *len bytes (free it). */
static char *real_report(struct sworn_stack *s, size_t *len)
{
    char *dep = deployment(s, "attack.yaml"), *json = sworn_test_path(s->dir, "attack.json"),
         *text = NULL;
    struct sworn_test_run r;

    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment", dep,
                    "--only", "T5.sufficiency", "--no-record", "--json", json, NULL);
    if (r.status != 0) {
        fprintf(stderr, "%s\n%s\n", r.out_len > 2000 ? r.out + r.out_len - 2000 : r.out, r.err);
        fail_msg("sworn-conformance --no-record: exit %d", r.status);
    }
    sworn_test_run_free(&r);
    assert_int_equal(sworn_file_read(json, 1u << 20, &text, len), 0);
    free(json);
    free(dep);
    return text;
}

/* Write all of b on fd. */
static int write_all(int fd, const uint8_t *b, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, b, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* rq framed (4-byte big-endian length, then the body); *len the whole frame's (free it). */
static uint8_t *admin_frame(const Sworn__V1__AdminRequest *rq, size_t *len)
{
    size_t n = sworn__v1__admin_request__get_packed_size(rq);
    uint8_t *f = malloc(n + 4);

    assert_non_null(f);
    f[0] = (uint8_t)(n >> 24);
    f[1] = (uint8_t)(n >> 16);
    f[2] = (uint8_t)(n >> 8);
    f[3] = (uint8_t)n;
    sworn__v1__admin_request__pack(rq, f + 4);
    *len = n + 4;
    return f;
}

/* Read one frame from fd, waiting at most timeout_ms in all; the body (free it) or NULL (timeout,
 * close, error). */
static uint8_t *read_frame(int fd, int timeout_ms, size_t *len)
{
    uint8_t hdr[4], *body = NULL;
    size_t want = 4, got = 0, n = 0;
    uint8_t *dst = hdr;

    for (int phase = 0; phase < 2; phase++) {
        while (got < want) {
            struct pollfd p = {fd, POLLIN, 0};
            ssize_t r;

            if (poll(&p, 1, timeout_ms) <= 0) {
                free(body);
                return NULL;
            }
            r = read(fd, dst + got, want - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                free(body);
                return NULL;
            }
            got += (size_t)r;
        }
        if (phase == 0) {
            n = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) | ((size_t)hdr[2] << 8) | hdr[3];
            if (n == 0 || n > SWORN_FRAME_MAX)
                return NULL;
            body = malloc(n);
            assert_non_null(body);
            dst = body;
            want = n;
            got = 0;
        }
    }
    *len = n;
    return body;
}

/* Read one AdminResponse from fd (NULL when none came within timeout_ms). */
static Sworn__V1__AdminResponse *read_admin(int fd, int timeout_ms)
{
    size_t n = 0;
    uint8_t *b = read_frame(fd, timeout_ms, &n);
    Sworn__V1__AdminResponse *r;

    if (b == NULL)
        return NULL;
    r = sworn__v1__admin_response__unpack(NULL, n, b);
    free(b);
    return r;
}

/* A ConformanceReportRequest of json[0..len) framed. */
static uint8_t *report_frame(const char *json, size_t len, size_t *flen)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__ConformanceReportRequest c = SWORN__V1__CONFORMANCE_REPORT_REQUEST__INIT;

    c.report_json.data = (uint8_t *)json;
    c.report_json.len = len;
    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CONFORMANCE_REPORT;
    rq.conformance_report = &c;
    rq.version = SWORN_WIRE_VERSION;
    return admin_frame(&rq, flen);
}

/* Connect to sock and send frame, without reading; returns the fd. */
static int send_frame(const char *sock, const uint8_t *f, size_t n)
{
    int fd = sworn_stack_connect(sock);

    assert_true(fd >= 0);
    assert_int_equal(write_all(fd, f, n), 0);
    return fd;
}

/* Submit json on sock; the answer (NULL: none within timeout_ms). */
static Sworn__V1__AdminResponse *submit_on(const char *sock, const char *json, size_t len,
                                           int timeout_ms)
{
    size_t n = 0;
    uint8_t *f = report_frame(json, len, &n);
    int fd = send_frame(sock, f, n);
    Sworn__V1__AdminResponse *r = read_admin(fd, timeout_ms);

    close(fd);
    free(f);
    return r;
}

/* The recorded index of answer r, or fail with what. */
static uint64_t recorded_index(Sworn__V1__AdminResponse *r, const char *what)
{
    if (r == NULL)
        fail_msg("%s: no answer", what);
    if (r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR)
        fail_msg("%s: refused: %s", what, r->error->message);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT);
    assert_int_equal(r->conformance_report->entry_hash.len, 32);
    return r->conformance_report->log_index;
}

/* A CheckpointNow on a new connection, sent only: returns the fd. */
static int checkpoint_send(const char *sock)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__CheckpointNowRequest c = SWORN__V1__CHECKPOINT_NOW_REQUEST__INIT;
    size_t n = 0;
    uint8_t *f;
    int fd;

    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_CHECKPOINT_NOW;
    rq.checkpoint_now = &c;
    rq.version = SWORN_WIRE_VERSION;
    f = admin_frame(&rq, &n);
    fd = send_frame(sock, f, n);
    free(f);
    return fd;
}

/* A Status call answered within timeout_ms? */
static int status_within(const char *sock, int timeout_ms)
{
    Sworn__V1__AdminRequest rq = SWORN__V1__ADMIN_REQUEST__INIT;
    Sworn__V1__StatusRequest st = SWORN__V1__STATUS_REQUEST__INIT;
    Sworn__V1__AdminResponse *r;
    size_t n = 0;
    uint8_t *f;
    int fd, ok;

    rq.body_case = SWORN__V1__ADMIN_REQUEST__BODY_STATUS;
    rq.status = &st;
    rq.version = SWORN_WIRE_VERSION;
    f = admin_frame(&rq, &n);
    fd = send_frame(sock, f, n);
    r = read_admin(fd, timeout_ms);
    ok = r != NULL && r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_STATUS;
    if (r != NULL)
        sworn__v1__admin_response__free_unpacked(r, NULL);
    close(fd);
    free(f);
    return ok;
}

/* A decision (allow of /allowed/x) answered within timeout_ms? Its log index in *index. */
static int decision_within(struct sworn_stack *s, const char *id, int timeout_ms, uint64_t *index)
{
    int fd = sworn_stack_send_only(s, id, "/allowed/x");
    struct pollfd p = {fd, POLLIN, 0};
    Sworn__V1__DecisionReply *r;
    int ok;

    if (poll(&p, 1, timeout_ms) <= 0) {
        close(fd);
        return 0;
    }
    r = sworn_stack_read_reply(fd);
    ok = r != NULL && r->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION;
    if (ok && index != NULL)
        *index = r->decision->log_index;
    if (r != NULL)
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    return ok;
}

/* How many ConformanceReport entries the newest count entries hold. */
static unsigned reports_in_tail(struct sworn_stack *s, uint32_t count)
{
    Sworn__V1__AdminResponse *t = sworn_stack_tail(s, count);
    unsigned n = 0;

    for (size_t i = 0; i < t->tail->n_entries; i++)
        if (t->tail->entries[i]->kind_case == SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT)
            n++;
    sworn__v1__admin_response__free_unpacked(t, NULL);
    return n;
}

/* json-c's plain serialisation of o (free it): canonical by docs/formats.md section 15. */
static char *plain(json_object *o, size_t *len)
{
    size_t n = 0;
    const char *t = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
    char *c = malloc(n + 1);

    assert_non_null(c);
    memcpy(c, t, n + 1);
    *len = n;
    return c;
}

static json_object *member(json_object *o, const char *k)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, k, &v))
        fail_msg("no \"%s\" in the report", k);
    return v;
}

static json_object *parse_base(void)
{
    json_object *o = json_tokener_parse(base_text);

    assert_non_null(o);
    return o;
}

/* s with the first `from` replaced by `to` (free it). */
static char *replaced(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);

    if (at == NULL)
        fail_msg("\"%s\" is not in the report", from);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    return out;
}

/* The newest checkpoint of the exported tiles: size and base64 root. */
static uint64_t tiles_checkpoint(struct sworn_stack *s, char root[256])
{
    char *p = sworn_test_path(s->tiles, "checkpoint"), line[3][256];
    FILE *f = fopen(p, "r");

    assert_non_null(f);
    for (int i = 0; i < 3; i++) {
        assert_non_null(fgets(line[i], sizeof(line[i]), f));
        line[i][strcspn(line[i], "\n")] = '\0';
    }
    fclose(f);
    free(p);
    memcpy(root, line[2], sizeof(line[2]));
    return strtoull(line[1], NULL, 10);
}

/* ---- group setup: the shared stack ---- */

static int setup(void **state)
{
    (void)state;
    if (sworn_stack_up(&stack, "--no-tpm --proxy") < 0)
        return -1;
    stack_up = 1;
    sworn_stack_expect_allow(&stack, "rt-setup"); /* T5.sufficiency needs a decision */
    (void)sworn_stack_checkpoint_now(&stack);
    sworn_stack_dev_trust(&stack);
    base_text = real_report(&stack, &base_len);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(base_text);
    return stack_up ? sworn_stack_down(&stack) : 0;
}

/* Control: the real report, and its json-c plain re-serialisation, are canonical (the same bytes)
 * and recorded; so every refusal below is the mutation's. */
static void test_control_recorded(void **state)
{
    json_object *o = parse_base();
    size_t n = 0;
    char *t = plain(o, &n);
    Sworn__V1__AdminResponse *r;

    (void)state;
    assert_int_equal(n, base_len);
    assert_memory_equal(t, base_text, n);
    r = submit_on(stack.admin, base_text, base_len, 30000);
    (void)recorded_index(r, "the real report");
    sworn__v1__admin_response__free_unpacked(r, NULL);
    free(t);
    json_object_put(o);
}

/* ---- the dishonest operator: reports the documents say must be refused ---- */

typedef char *(*mutate_fn)(size_t *len);

struct bad_row {
    const char *what;
    mutate_fn mutate;
};

static char *with_string(const char *from, const char *to, size_t *len)
{
    char *t = replaced(base_text, from, to);

    *len = strlen(t);
    return t;
}

/* Set path a.b (b may be NULL) of a fresh copy to v, serialised canonically. */
static char *with_member(const char *a, const char *b, json_object *v, size_t *len)
{
    json_object *o = parse_base(), *p = o;
    char *t;

    if (b != NULL) {
        p = member(o, a);
        a = b;
    }
    json_object_object_add(p, a, v);
    t = plain(o, len);
    json_object_put(o);
    return t;
}

static char *m_version_3(size_t *len)
{
    return with_member("report_version", NULL, json_object_new_int(3), len);
}
static char *m_version_string(size_t *len)
{
    return with_member("report_version", NULL, json_object_new_string("2"), len);
}
static char *m_extra_member(size_t *len)
{
    return with_member("html", NULL, json_object_new_string("x"), len);
}
static char *m_missing_member(size_t *len)
{
    json_object *o = parse_base();
    char *t;

    json_object_object_del(o, "selection");
    t = plain(o, len);
    json_object_put(o);
    return t;
}
static char *m_probe_set_zero(size_t *len)
{
    return with_member("probe_set", "probes", json_object_new_int(0), len);
}
static char *m_probe_set_1025(size_t *len)
{
    return with_member("probe_set", "probes", json_object_new_int(1025), len);
}
/* Two probes counted (the first twice), probe_set.probes 1: the counts add up to more than the
 * probe set holds. */
static char *m_probe_set_below_sum(size_t *len)
{
    json_object *o = parse_base(), *probes = member(o, "probes"), *sm = member(o, "summary");
    json_object *c = NULL;
    char *t;

    assert_int_equal(json_object_array_length(probes), 1);
    assert_int_equal(json_object_deep_copy(json_object_array_get_idx(probes, 0), &c, NULL), 0);
    json_object_array_add(probes, c);
    json_object_object_add(sm, "pass",
                           json_object_new_int(json_object_get_int(member(sm, "pass")) + 1));
    json_object_object_add(member(o, "probe_set"), "probes", json_object_new_int(1));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* No probe at all and every count 0: the counts add up to 0, not 1..probe_set_size. */
static char *m_no_probes(size_t *len)
{
    json_object *o = parse_base(), *sm = member(o, "summary");
    char *t;

    json_object_object_add(o, "probes", json_object_new_array());
    json_object_object_add(sm, "pass", json_object_new_int(0));
    json_object_object_add(sm, "fail", json_object_new_int(0));
    json_object_object_add(sm, "skipped", json_object_new_int(0));
    json_object_object_add(sm, "error", json_object_new_int(0));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* A probe whose result is none of pass, fail, skipped, error ("proven"), the summary counting
 * only the others. */
static char *m_result_proven(size_t *len)
{
    json_object *o = parse_base(), *probes = member(o, "probes");
    json_object *p = json_object_array_get_idx(probes, 0), *c = NULL;
    char *t;

    assert_int_equal(json_object_deep_copy(p, &c, NULL), 0);
    json_object_object_add(c, "result", json_object_new_string("proven"));
    json_object_array_add(probes, c);
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* The report says pass and claims no failure, but one probe failed and the summary counts it: a
 * pass the probes did not give (docs/threat-model.md "Conformance reports"). */
static char *m_pass_with_failure(size_t *len)
{
    json_object *o = parse_base(), *sm = member(o, "summary");
    json_object *p = json_object_array_get_idx(member(o, "probes"), 0);
    char *t;

    assert_string_equal(json_object_get_string(member(p, "result")), "pass");
    json_object_object_add(p, "result", json_object_new_string("fail"));
    json_object_object_add(sm, "pass",
                           json_object_new_int(json_object_get_int(member(sm, "pass")) - 1));
    json_object_object_add(sm, "fail", json_object_new_int(1));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
static char *m_claim_of_fail(size_t *len)
{
    return with_string("no failure found under these probes", "FAILURES FOUND under these probes",
                       len);
}
static char *m_claim_proven(size_t *len)
{
    return with_string("no failure found under these probes", "no failure found: proven", len);
}
static char *m_tier_6(size_t *len)
{
    return with_member("selection", "tier", json_object_new_string("T6"), len);
}
static char *m_tier_lower(size_t *len)
{
    return with_member("selection", "tier", json_object_new_string("t5"), len);
}
static char *m_only_65(size_t *len)
{
    json_object *a = json_object_new_array();

    for (int i = 0; i < 65; i++) {
        char id[16];

        snprintf(id, sizeof(id), "T5.x%d", i);
        json_object_array_add(a, json_object_new_string(id));
    }
    return with_member("selection", "only", a, len);
}
static char *m_only_space(size_t *len)
{
    json_object *a = json_object_new_array();

    json_object_array_add(a, json_object_new_string("T5.verify extra"));
    return with_member("selection", "only", a, len);
}
static char *m_only_long(size_t *len)
{
    json_object *a = json_object_new_array();
    char id[66];

    memset(id, 'x', 65);
    id[65] = '\0';
    json_object_array_add(a, json_object_new_string(id));
    return with_member("selection", "only", a, len);
}
static char *m_digest_upper(size_t *len)
{
    json_object *o = parse_base(), *ps = member(o, "probe_set");
    char d[65];
    char *t;

    snprintf(d, sizeof(d), "%s", json_object_get_string(member(ps, "digest")));
    for (char *c = d; *c; c++)
        if (*c >= 'a' && *c <= 'f')
            *c = (char)(*c - 'a' + 'A');
    json_object_object_add(ps, "digest", json_object_new_string(d));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
static char *m_digest_short(size_t *len)
{
    return with_member("probe_set", "digest",
                       json_object_new_string("0123456789abcdef0123456789abcdef0123456789abcdef0"
                                              "123456789abcde"),
                       len);
}
static char *m_operator_empty(size_t *len)
{
    return with_member("operator", "name", json_object_new_string(""), len);
}
static char *m_operator_257(size_t *len)
{
    char n[258];

    memset(n, 'n', 257);
    n[257] = '\0';
    return with_member("operator", "name", json_object_new_string(n), len);
}
static char *m_user_65(size_t *len)
{
    char n[66];

    memset(n, 'u', 65);
    n[65] = '\0';
    return with_member("operator", "user", json_object_new_string(n), len);
}
/* A uid that does not fit 32 bits: 2^32 would be recorded as uid 0 (root) if truncated. */
static char *m_uid_2_32(size_t *len)
{
    return with_member("operator", "uid", json_object_new_int64(4294967296LL), len);
}
static char *m_uid_negative(size_t *len)
{
    return with_member("operator", "uid", json_object_new_int64(-1), len);
}
static char *m_started_feb_30(size_t *len)
{
    return with_member("started", NULL, json_object_new_string("2025-02-30T10:00:00.000Z"), len);
}
static char *m_started_no_ms(size_t *len)
{
    return with_member("started", NULL, json_object_new_string("2025-02-03T10:00:00Z"), len);
}
static char *m_ended_before(size_t *len)
{
    return with_member("ended", NULL, json_object_new_string("2000-01-01T00:00:00.000Z"), len);
}
/* A start checkpoint from the future: larger than the log. */
static char *m_checkpoint_future(size_t *len)
{
    json_object *o = parse_base(), *cs = member(member(o, "deployment"), "checkpoint_start");
    char root[256];
    char *t;

    json_object_object_add(cs, "size",
                           json_object_new_int64((int64_t)tiles_checkpoint(&stack, root) + 100000));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
static char *m_root_31(size_t *len)
{
    json_object *o = parse_base(), *cs = member(member(o, "deployment"), "checkpoint_start");
    char *t;

    /* base64 of 31 bytes */
    json_object_object_add(cs, "root",
                           json_object_new_string("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* The measured start: an entry below the start checkpoint that is no Startup entry (a decision). */
static char *m_startup_not_startup(size_t *len)
{
    json_object *o = parse_base(), *d = member(o, "deployment");
    json_object *cs = member(d, "checkpoint_start"), *ms = member(d, "measured_start");
    uint64_t index = 0, size;
    char root[256];
    char *t;

    assert_true(decision_within(&stack, "rt-not-startup", 30000, &index));
    size = sworn_stack_checkpoint_now(&stack);
    assert_int_equal(tiles_checkpoint(&stack, root), size);
    assert_true(index < size);
    json_object_object_add(cs, "size", json_object_new_int64((int64_t)size));
    json_object_object_add(cs, "root", json_object_new_string(root));
    json_object_object_add(ms, "index", json_object_new_int64((int64_t)index));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* The measured start at or above the start checkpoint's size. */
static char *m_startup_above(size_t *len)
{
    json_object *o = parse_base(), *d = member(o, "deployment");
    json_object *cs = member(d, "checkpoint_start"), *ms = member(d, "measured_start");
    char *t;

    json_object_object_add(ms, "index",
                           json_object_new_int64(json_object_get_int64(member(cs, "size"))));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* The start checkpoint an {error}, the measured start still an index (docs: 0 with {error}). */
static char *m_error_checkpoint_with_index(size_t *len)
{
    json_object *o = parse_base(), *d = member(o, "deployment"), *e = json_object_new_object();
    json_object *ms = member(d, "measured_start");
    char *t;

    json_object_object_add(e, "error", json_object_new_string("no checkpoint"));
    json_object_object_add(d, "checkpoint_start", e);
    json_object_object_add(ms, "index", json_object_new_int64(3));
    t = plain(o, len);
    json_object_put(o);
    return t;
}
/* A repeated key inside a nested object. */
static char *m_nested_duplicate(size_t *len)
{
    const char *s = strstr(base_text, "\"summary\":{\"pass\":");
    char from[64], to[96];
    int n;

    assert_non_null(s);
    n = (int)strcspn(s + 18, ",}");
    snprintf(from, sizeof(from), "\"summary\":{\"pass\":%.*s", n, s + 18);
    snprintf(to, sizeof(to), "\"summary\":{\"pass\":0,\"pass\":%.*s", n, s + 18);
    return with_string(from, to, len);
}
/* A character written as an escape json-c would write raw. */
static char *m_unicode_escape(size_t *len)
{
    return with_string("\"tool\":\"sworn-conformance\"", "\"tool\":\"\\u0073worn-conformance\"",
                       len);
}
/* The canonical object, then a NUL and a second object: two readers, two reports. */
static char *m_trailing_nul(size_t *len)
{
    static const char tail[] = "{\"result\":\"pass\"}";
    char *t = malloc(base_len + 1 + sizeof(tail));

    assert_non_null(t);
    memcpy(t, base_text, base_len);
    t[base_len] = '\0';
    memcpy(t + base_len + 1, tail, sizeof(tail));
    *len = base_len + 1 + strlen(tail);
    return t;
}
static char *m_trailing_newline(size_t *len)
{
    char *t = malloc(base_len + 2);

    assert_non_null(t);
    memcpy(t, base_text, base_len);
    t[base_len] = '\n';
    t[base_len + 1] = '\0';
    *len = base_len + 1;
    return t;
}
static char *m_bom(size_t *len)
{
    char *t = malloc(base_len + 4);

    assert_non_null(t);
    memcpy(t, "\xef\xbb\xbf", 3);
    memcpy(t + 3, base_text, base_len + 1);
    *len = base_len + 3;
    return t;
}
static char *m_empty(size_t *len)
{
    *len = 0;
    return strdup("");
}
static char *m_not_object(size_t *len)
{
    json_object *a = json_object_new_array();
    char *t;

    json_object_array_add(a, parse_base());
    t = plain(a, len);
    json_object_put(a);
    return t;
}

static const struct bad_row bad_rows[] = {
    {"report_version 3", m_version_3},
    {"report_version \"2\" (a string)", m_version_string},
    {"a thirteenth top-level member", m_extra_member},
    {"a missing member (selection)", m_missing_member},
    {"probe_set.probes 0", m_probe_set_zero},
    {"probe_set.probes 1025", m_probe_set_1025},
    {"counts adding up to more than probe_set.probes", m_probe_set_below_sum},
    {"no probes, every count 0", m_no_probes},
    {"a probe whose result is \"proven\"", m_result_proven},
    {"result pass and the no-failure claim over a failed probe", m_pass_with_failure},
    {"the failure claim with result pass", m_claim_of_fail},
    {"a claim of proof", m_claim_proven},
    {"selection.tier T6", m_tier_6},
    {"selection.tier t5", m_tier_lower},
    {"selection.only of 65 ids", m_only_65},
    {"selection.only an id with a space", m_only_space},
    {"selection.only an id of 65 bytes", m_only_long},
    {"probe_set.digest in upper case", m_digest_upper},
    {"probe_set.digest of 63 digits", m_digest_short},
    {"operator.name empty", m_operator_empty},
    {"operator.name of 257 bytes", m_operator_257},
    {"operator.user of 65 bytes", m_user_65},
    {"operator.uid 2^32", m_uid_2_32},
    {"operator.uid -1", m_uid_negative},
    {"started on February 30", m_started_feb_30},
    {"started without milliseconds", m_started_no_ms},
    {"ended before started", m_ended_before},
    {"a start checkpoint from the future", m_checkpoint_future},
    {"a start checkpoint root of 31 bytes", m_root_31},
    {"a measured start that is a decision", m_startup_not_startup},
    {"a measured start at the start checkpoint's size", m_startup_above},
    {"checkpoint_start {error} with a measured start index 3", m_error_checkpoint_with_index},
    {"a repeated key in summary", m_nested_duplicate},
    {"a \\u escape json-c writes raw", m_unicode_escape},
    {"a NUL and a second object after the report", m_trailing_nul},
    {"a trailing newline", m_trailing_newline},
    {"a byte order mark", m_bom},
    {"an empty report", m_empty},
    {"an array holding the report", m_not_object},
};

/* Each row: refused on the admin socket with an ErrorFrame ("conformance report refused: ..."),
 * nothing recorded (the tree does not grow). */
static void test_bad_report(void **state)
{
    const struct bad_row *row = *state;
    size_t len = 0;
    char *text = row->mutate(&len);
    uint64_t before = sworn_stack_checkpoint_now(&stack), after;
    Sworn__V1__AdminResponse *r = submit_on(stack.admin, text, len, 30000);

    if (r == NULL)
        fail_msg("%s: no answer (expected an ErrorFrame)", row->what);
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_ERROR)
        fail_msg(
            "%s: RECORDED at log index %llu (the documents say refused)", row->what,
            (unsigned long long)(r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT
                                     ? r->conformance_report->log_index
                                     : 0));
    print_message("%s: %s\n", row->what, r->error->message);
    /* Nothing recorded as a report (a frame that fails strict decoding is recorded as Refused). */
    after = sworn_stack_checkpoint_now(&stack);
    if (after > before)
        assert_int_equal(reports_in_tail(&stack, (uint32_t)(after - before)), 0);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    free(text);
}

/* ---- strings the entry copies (operator.name, operator.user): refused, or recorded in an entry
 * that the auditor's sworn-verify accepts. Each on a fresh stack: an entry sworn-verify rejects
 * would poison the record for good. ---- */

struct poison_row {
    const char *what;
    const char *key; /* operator member */
    const char *value;
    size_t len; /* 0: strlen(value) */
};

static const struct poison_row poison_rows[] = {
    {"operator.name with invalid UTF-8 (0xff)", "name", "Mallory \xff\xfe", 0},
    {"operator.name with a NUL (\\u0000) in it", "name", "Alice\0Mallory", 13},
    {"operator.name with a right-to-left override (U+202E)", "name",
     "Alice \xe2\x80\xae"
     "yrollaM",
     0},
    {"operator.user with a BEL (\\u0007)", "user", "root\a", 0},
    {"operator.name with an overlong UTF-8 '/' (C0 AF)", "name",
     "a\xc0\xaf"
     "b",
     0},
};

/* decisiond must not record an entry that sworn-verify's `entries` check then
 * rejects (strings UTF-8 without unsafe characters, docs/verifier.md): the record would never
 * verify again. */
static void test_poison_string(void **state)
{
    const struct poison_row *row = *state;
    struct sworn_stack s;
    json_object *o, *op;
    size_t len = 0, vlen = row->len != 0 ? row->len : strlen(row->value);
    char *text, *dep = NULL, *rep_text = NULL, *json, *trust;
    Sworn__V1__AdminResponse *r;
    struct sworn_test_run v;

    assert_int_equal(sworn_stack_up(&s, "--no-tpm"), 0);
    sworn_stack_expect_allow(&s, "rt-poison");
    (void)sworn_stack_checkpoint_now(&s);
    sworn_stack_dev_trust(&s);
    dep = deployment(&s, "p.yaml");
    json = sworn_test_path(s.dir, "p.json");
    {
        struct sworn_test_run rr;

        sworn_test_runv(&rr, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment",
                        dep, "--only", "T5.sufficiency", "--no-record", "--json", json, NULL);
        sworn_test_run_must(&rr, "sworn-conformance --no-record");
        sworn_test_run_free(&rr);
    }
    assert_int_equal(sworn_file_read(json, 1u << 20, &rep_text, &len), 0);
    o = json_tokener_parse(rep_text);
    assert_non_null(o);
    op = member(o, "operator");
    json_object_object_add(op, row->key, json_object_new_string_len(row->value, (int)vlen));
    text = plain(o, &len);
    r = submit_on(s.admin, text, len, 30000);
    assert_non_null(r);
    if (r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR) {
        print_message("%s: refused: %s\n", row->what, r->error->message);
    } else {
        uint64_t index = recorded_index(r, row->what);

        assert_true(sworn_stack_checkpoint_now(&s) > index);
        trust = sworn_test_path(s.dir, "trust.txt");
        sworn_test_runv(&v, NULL, sworn_test_bin("SWORN_VERIFY_BIN"), "verify", "--json",
                        "--no-progress", "--policy", trust, s.tiles, NULL);
        free(trust);
        if (v.status != 0)
            fail_msg("%s: RECORDED at index %llu, and the auditor's sworn-verify then rejects the "
                     "deployment's own record (exit %d):\n%.3000s",
                     row->what, (unsigned long long)index, v.status, v.out);
        sworn_test_run_free(&v);
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    json_object_put(o);
    free(text);
    free(rep_text);
    free(json);
    free(dep);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* ---- the agent: no channel but the admin socket records a report ---- */

/* On the decision socket (the proxy's): an AdminRequest, and a DecisionRequest carrying the report
 * in an unused envelope field (10), are malformed frames: ErrorFrames, no report recorded. */
static void test_decision_socket_no_report(void **state)
{
    struct sworn_stack_req q;
    size_t n = 0, blen = 0;
    uint8_t digest[32], *f, *g, *body = NULL;
    unsigned before = reports_in_tail(&stack, 1000);
    int fd;

    (void)state;
    /* The admin call itself on the decision socket. */
    {
        Sworn__V1__AdminResponse *r = submit_on(stack.decision, base_text, base_len, 30000);

        /* The answer, if any, is a DecisionReply's ErrorFrame: never a ConformanceReportResponse.
         */
        if (r != NULL) {
            assert_int_not_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT);
            sworn__v1__admin_response__free_unpacked(r, NULL);
        }
    }
    /* A real authorize envelope, plus field 10 (length-delimited) holding the report. */
    sworn_stack_req_init(&q, "rt-smuggle-1", "agent-1", "/allowed/x");
    f = sworn_stack_raw_frame(&q.req, &n, digest);
    {
        size_t body_len = n - 4, extra = 1 + 3 + base_len, total = body_len + extra;
        uint8_t *p;

        assert_true(base_len < (1u << 21));
        g = malloc(total + 4);
        assert_non_null(g);
        g[0] = (uint8_t)(total >> 24);
        g[1] = (uint8_t)(total >> 16);
        g[2] = (uint8_t)(total >> 8);
        g[3] = (uint8_t)total;
        memcpy(g + 4, f + 4, body_len);
        p = g + 4 + body_len;
        *p++ = (10 << 3) | 2;
        *p++ = (uint8_t)(0x80 | (base_len & 0x7f));
        *p++ = (uint8_t)(0x80 | ((base_len >> 7) & 0x7f));
        *p++ = (uint8_t)(base_len >> 14);
        memcpy(p, base_text, base_len);
        fd = sworn_stack_connect(stack.decision);
        assert_true(fd >= 0);
        assert_int_equal(sworn_stack_exchange(fd, g, total + 4, 30000, &body, &blen), 0);
        {
            Sworn__V1__DecisionReply *d = sworn__v1__decision_reply__unpack(NULL, blen, body);

            assert_non_null(d);
            assert_int_equal(d->body_case, SWORN__V1__DECISION_REPLY__BODY_ERROR);
            sworn__v1__decision_reply__free_unpacked(d, NULL);
        }
        close(fd);
        free(body);
        free(g);
    }
    free(f);
    assert_int_equal(reports_in_tail(&stack, 1000), before);
}

/* Through the proxy's listener (the agent's only way out): the report POSTed to an allowed URL and
 * to the proxy itself records nothing. */
static void test_proxy_no_report(void **state)
{
    int rc;
    unsigned before = reports_in_tail(&stack, 1000);
    char *file = sworn_test_path(stack.dir, "attack.json");

    (void)state;
    assert_true(stack.proxy_url[0] != '\0');
    rc = sworn_stack_sh(&stack,
                        "curl -s -o /dev/null -x \"$PROXY_URL\" --data-binary @%s "
                        "http://127.0.0.1:8080/allowed/conformance-report; "
                        "curl -s -o /dev/null --data-binary @%s \"$PROXY_URL/\"; true",
                        file, file);
    assert_int_equal(rc, 0);
    (void)sworn_stack_checkpoint_now(&stack);
    assert_int_equal(reports_in_tail(&stack, 1000), before);
    free(file);
}

/* Another uid than the operator's cannot even connect to the admin socket (mode 0600, root's in
 * the development stack). */
static void test_admin_socket_other_uid(void **state)
{
    pid_t pid;
    int st = 0;

    (void)state;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct sockaddr_un a = {0};
        int fd;

        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        a.sun_family = AF_UNIX;
        if (strlen(stack.admin) >= sizeof(a.sun_path))
            _exit(4);
        memcpy(a.sun_path, stack.admin, strlen(stack.admin) + 1);
        _exit(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 1 : 0);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- the outsider: a copy of the exported record, edited ---- */

static uint64_t rep_a, rep_b; /* two recorded reports of the shared stack */

/* Record two reports of different bytes (different operator names), export. */
static void record_two(void)
{
    if (rep_a != 0)
        return;
    for (int i = 0; i < 2; i++) {
        json_object *o = parse_base();
        size_t n = 0;
        char *t;
        Sworn__V1__AdminResponse *r;

        json_object_object_add(member(o, "operator"), "name",
                               json_object_new_string(i == 0 ? "Alice" : "Bob"));
        t = plain(o, &n);
        r = submit_on(stack.admin, t, n, 30000);
        *(i == 0 ? &rep_a : &rep_b) = recorded_index(r, "a good report");
        sworn__v1__admin_response__free_unpacked(r, NULL);
        free(t);
        json_object_put(o);
    }
    assert_true(sworn_stack_checkpoint_now(&stack) > rep_b);
}

/* sworn-verify --json on DIR/<copy>, at most 60 s (timeout(1) says 124 when it hangs): the run. */
static json_object *verify_copy(const char *copy, int *status)
{
    char *rec = sworn_test_path(stack.dir, copy), *pol = sworn_test_path(stack.dir, "trust.txt");
    struct sworn_test_run v;
    json_object *rep;

    sworn_test_runv(&v, NULL, "timeout", "60", sworn_test_bin("SWORN_VERIFY_BIN"), "verify",
                    "--json", "--no-progress", "--policy", pol, rec, NULL);
    *status = v.status;
    rep = json_tokener_parse(v.out);
    if (rep == NULL)
        print_message("sworn-verify exit %d, no JSON:\n%.2000s\n%.2000s\n", v.status, v.out, v.err);
    sworn_test_run_free(&v);
    free(rec);
    free(pol);
    return rep;
}

/* The `file` status of report index in a verify report ("" when not listed). */
static const char *file_status(json_object *rep, uint64_t index)
{
    json_object *list = NULL;

    if (rep == NULL || !json_object_object_get_ex(rep, "report_list", &list))
        return "";
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *c = json_object_array_get_idx(list, i);

        if ((uint64_t)json_object_get_int64(sworn_verify_get(c, "index")) == index)
            return json_object_get_string(sworn_verify_get(c, "file"));
    }
    return "";
}

/* A fresh copy DIR/name of the tiles, then the shell edit cmd inside it (A and B the two reports'
 * file names). */
static void copy_and_edit(const char *name, const char *cmd)
{
    assert_int_equal(sworn_stack_sh(&stack,
                                    "rm -rf %s && cp -a tiles %s && cd %s/sworn/reports && "
                                    "A=%llu.json B=%llu.json && %s",
                                    name, name, name, (unsigned long long)rep_a,
                                    (unsigned long long)rep_b, cmd),
                     0);
}

/* The untouched copy: both files match, pass. */
static void test_verify_control(void **state)
{
    int st = 0;
    json_object *rep;

    (void)state;
    record_two();
    copy_and_edit("v-ok", "true");
    rep = verify_copy("v-ok", &st);
    assert_int_equal(st, 0);
    sworn_verify_expect_pass(rep, "reports");
    assert_string_equal(file_status(rep, rep_a), "matches");
    assert_string_equal(file_status(rep, rep_b), "matches");
    json_object_put(rep);
}

/* Expect exit 1 with report-file-mismatch, after the edit cmd. */
static void expect_mismatch(const char *name, const char *cmd, uint64_t which)
{
    int st = 0;
    json_object *rep;
    char item[32];

    record_two();
    copy_and_edit(name, cmd);
    rep = verify_copy(name, &st);
    if (st != 1 || rep == NULL)
        fail_msg("%s: sworn-verify exit %d (124: it hung), expected 1", cmd, st);
    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)which);
    sworn_verify_expect_fail(rep, "reports", "report-file-mismatch", item);
    assert_string_equal(file_status(rep, which), "mismatch");
    json_object_put(rep);
}

static void test_verify_swapped(void **state)
{
    (void)state;
    expect_mismatch("v-swap", "mv $A t && mv $B $A && mv t $B", rep_a);
}

static void test_verify_duplicated(void **state)
{
    (void)state;
    expect_mismatch("v-dup", "cp $A $B", rep_b);
}

static void test_verify_appended(void **state)
{
    (void)state;
    expect_mismatch("v-append", "printf ' ' >> $A", rep_a);
}

static void test_verify_truncated(void **state)
{
    (void)state;
    expect_mismatch("v-trunc", "truncate -s -1 $A", rep_a);
}

/* A symbolic link to the other report's bytes. */
static void test_verify_symlink_other(void **state)
{
    (void)state;
    expect_mismatch("v-link", "rm $A && ln -s \"$PWD/$B\" $A", rep_a);
}

/*
 * A FIFO no one writes: the verifier must not wait for it forever. docs/verifier.md (check
 * `reports`): the file, when present, has exactly report_length bytes hashing to report_sha256,
 * else report-file-mismatch (exit 1).
 *
 * FINDING 1 (fixed: the verifier opens every file with O_NONBLOCK, then refuses what is not a
 * regular file): an outsider who hands the auditor a copy of the record with
 * sworn/reports/<index>.json replaced by a FIFO makes `sworn-verify verify` hang forever (killed
 * by timeout(1) after 60 s: exit 124, no report printed) instead of failing report-file-mismatch:
 * it waits on the FIFO for bytes that never come, and the auditor gets no answer at all.
 */
static void test_verify_fifo(void **state)
{
    (void)state;
    expect_mismatch("v-fifo", "rm $A && mkfifo $A", rep_a);
}

/* A link to /dev/zero (endless): the verifier reads at most what it needs. */
static void test_verify_dev_zero(void **state)
{
    (void)state;
    expect_mismatch("v-zero", "rm $A && ln -s /dev/zero $A", rep_a);
}

/* A folder where the file was. */
static void test_verify_folder(void **state)
{
    (void)state;
    expect_mismatch("v-dir", "rm $A && mkdir $A", rep_a);
}

/* Deleted: reported absent, not a failure (docs/verifier.md: the operator's --json copy remains).
 */
static void test_verify_deleted(void **state)
{
    int st = 0;
    json_object *rep;

    (void)state;
    record_two();
    copy_and_edit("v-del", "rm $A");
    rep = verify_copy("v-del", &st);
    assert_int_equal(st, 0);
    assert_string_equal(file_status(rep, rep_a), "absent");
    assert_string_equal(file_status(rep, rep_b), "matches");
    json_object_put(rep);
}

/* A report file moved to the index of an entry that is no report (the entry before A): still two
 * listed where it was, absent; nothing listed at the entry that is no report. */
static void test_verify_moved(void **state)
{
    int st = 0;
    json_object *rep;

    (void)state;
    record_two();
    copy_and_edit("v-move", "mv $A $(( ${A%.json} - 1 )).json");
    rep = verify_copy("v-move", &st);
    assert_int_equal(st, 0);
    assert_string_equal(file_status(rep, rep_a), "absent");
    assert_string_equal(file_status(rep, rep_a - 1), "");
    json_object_put(rep);
}

/* ---- the operator's load: decisiond keeps deciding through the report path ---- */

/* 64 connections each announce a 600 KiB report frame and send 100 bytes of it, then stall (a
 * slow sender): decisions, admin calls and another report are answered meanwhile. */
static void test_slow_senders(void **state)
{
    int fds[64];
    uint8_t hdr[104];
    Sworn__V1__AdminResponse *r;
    uint64_t index = 0;

    (void)state;
    memset(hdr, 'a', sizeof(hdr));
    hdr[0] = 0;
    hdr[1] = 0x09;
    hdr[2] = 0x27;
    hdr[3] = 0xc0; /* 600000 */
    hdr[4] = (10 << 3) | 2;
    for (int i = 0; i < 64; i++)
        fds[i] = send_frame(stack.admin, hdr, sizeof(hdr));
    assert_true(decision_within(&stack, "rt-slow-1", 10000, &index));
    assert_true(status_within(stack.admin, 10000));
    r = submit_on(stack.admin, base_text, base_len, 10000);
    (void)recorded_index(r, "a report beside 64 slow senders");
    sworn__v1__admin_response__free_unpacked(r, NULL);
    for (int i = 0; i < 64; i++)
        close(fds[i]);
    assert_true(decision_within(&stack, "rt-slow-2", 10000, NULL));
}

/* The report padded (the first probe's evidence) to exactly n bytes. */
static char *padded(size_t n, const char *name)
{
    json_object *o = parse_base(), *p, *ev;
    size_t len0 = 0, len = 0;
    char *t, *pad;

    json_object_object_add(member(o, "operator"), "name", json_object_new_string(name));
    p = json_object_array_get_idx(member(o, "probes"), 0);
    ev = member(p, "evidence");
    json_object_array_add(ev, json_object_new_string(""));
    t = plain(o, &len0);
    free(t);
    assert_true(n > len0);
    pad = malloc(n - len0 + 1);
    assert_non_null(pad);
    memset(pad, 'a', n - len0);
    pad[n - len0] = '\0';
    json_object_array_put_idx(ev, json_object_array_length(ev) - 1, json_object_new_string(pad));
    t = plain(o, &len);
    assert_int_equal(len, n);
    free(pad);
    json_object_put(o);
    return t;
}

/* A report of exactly SWORN_FRAME_REPORT_MAX bytes is recorded and exported whole; one byte more
 * is refused, and decisiond goes on deciding. */
static void test_size_limit(void **state)
{
    char *t = padded(SWORN_FRAME_REPORT_MAX, "at the limit"), rel[64], *path, *back = NULL;
    Sworn__V1__AdminResponse *r;
    uint64_t index, before, after;
    size_t blen = 0;

    (void)state;
    r = submit_on(stack.admin, t, SWORN_FRAME_REPORT_MAX, 30000);
    index = recorded_index(r, "a report of exactly 524288 bytes");
    assert_true(r->conformance_report->exported);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    snprintf(rel, sizeof(rel), "sworn/reports/%llu.json", (unsigned long long)index);
    path = sworn_test_path(stack.tiles, rel);
    assert_int_equal(sworn_file_read(path, 1u << 20, &back, &blen), 0);
    assert_int_equal(blen, SWORN_FRAME_REPORT_MAX);
    assert_memory_equal(back, t, blen);
    free(back);
    free(path);
    free(t);

    t = padded(SWORN_FRAME_REPORT_MAX + 1, "one over");
    before = sworn_stack_checkpoint_now(&stack);
    r = submit_on(stack.admin, t, SWORN_FRAME_REPORT_MAX + 1, 30000);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_ERROR);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    after = sworn_stack_checkpoint_now(&stack);
    /* A Refused entry may record the refusal; never a report. */
    if (after > before)
        assert_int_equal(reports_in_tail(&stack, (uint32_t)(after - before)), 0);
    assert_true(decision_within(&stack, "rt-limit", 10000, NULL));
    free(t);
}

struct conc {
    char *text;
    size_t len;
    int ok;
    char err[256];
};

static void *conc_submit(void *arg)
{
    struct conc *c = arg;
    size_t n = 0;
    uint8_t *f = report_frame(c->text, c->len, &n);
    int fd = sworn_stack_connect(stack.admin);
    Sworn__V1__AdminResponse *r = NULL;

    if (fd >= 0 && write_all(fd, f, n) == 0)
        r = read_admin(fd, 120000);
    if (r != NULL && r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT)
        c->ok = 1;
    else
        snprintf(c->err, sizeof(c->err), "%s",
                 r == NULL                                               ? "no answer"
                 : r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR ? r->error->message
                                                                         : "another answer");
    if (r != NULL)
        sworn__v1__admin_response__free_unpacked(r, NULL);
    if (fd >= 0)
        close(fd);
    free(f);
    return NULL;
}

/* 16 reports of 500 KiB at once (8 MiB, within the frame pool): every one recorded, decisions
 * answered meanwhile, and the record verifies with every file matching. */
static void test_concurrent_reports(void **state)
{
    struct conc c[16];
    pthread_t th[16];
    int st = 0;
    json_object *rep;

    (void)state;
    for (int i = 0; i < 16; i++) {
        char name[32];

        snprintf(name, sizeof(name), "concurrent %d", i);
        c[i].len = 500 * 1024;
        c[i].text = padded(c[i].len, name);
        c[i].ok = 0;
        c[i].err[0] = '\0';
    }
    for (int i = 0; i < 16; i++)
        assert_int_equal(pthread_create(&th[i], NULL, conc_submit, &c[i]), 0);
    assert_true(decision_within(&stack, "rt-conc-1", 30000, NULL));
    for (int i = 0; i < 16; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        if (!c[i].ok)
            fail_msg("concurrent report %d not recorded: %s", i, c[i].err);
        free(c[i].text);
    }
    assert_true(decision_within(&stack, "rt-conc-2", 10000, NULL));
    (void)sworn_stack_checkpoint_now(&stack);
    copy_and_edit("v-conc", "true");
    rep = verify_copy("v-conc", &st);
    assert_int_equal(st, 0);
    sworn_verify_expect_pass(rep, "reports");
    json_object_put(rep);
}

/* A report sent as decisiond is told to stop: it stops cleanly (status 0); an answered report is
 * in the log at its index after the restart, and the record verifies. */
static void test_report_at_shutdown(void **state)
{
    size_t n = 0;
    uint8_t *f = report_frame(base_text, base_len, &n);
    int fd = send_frame(stack.admin, f, n), st;
    Sworn__V1__AdminResponse *r, *t;
    json_object *rep;

    (void)state;
    assert_int_equal(sworn_stack_stop_daemon(&stack), 0);
    r = read_admin(fd, 30000);
    close(fd);
    assert_int_equal(sworn_stack_start(&stack), 0);
    if (r != NULL && r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_CONFORMANCE_REPORT) {
        const Sworn__V1__Entry *e =
            sworn_stack_entry_at(&stack, r->conformance_report->log_index, 1000, &t);

        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_CONFORMANCE_REPORT);
        sworn__v1__admin_response__free_unpacked(t, NULL);
    }
    if (r != NULL)
        sworn__v1__admin_response__free_unpacked(r, NULL);
    (void)sworn_stack_checkpoint_now(&stack);
    copy_and_edit("v-stop", "true");
    rep = verify_copy("v-stop", &st);
    assert_int_equal(st, 0);
    json_object_put(rep);
    free(f);
}

/* ---- CheckpointNow inside tpm.quote_min_interval ---- */

struct cp_state {
    struct sworn_stack *s;
    uint64_t want;
};

static int cp_covers(void *arg)
{
    struct cp_state *c = arg;
    char root[256];
    char *p = sworn_test_path(c->s->tiles, "checkpoint");
    int ok = access(p, R_OK) == 0 && tiles_checkpoint(c->s, root) > c->want;

    free(p);
    return ok;
}

/*
 * An admin peer's CheckpointNow calls, each waiting up to tpm.quote_min_interval for a quote (on a
 * worker thread, docs/decisiond.md section 11), must not stall decisions ("Nothing on the decision
 * path waits for this thread"), other admin calls, or the checkpoint thread's timed rounds (every
 * log.checkpoint_interval; a timed round inside the interval stays unquoted). A TPM stack with
 * quote_min_interval 30 s, checkpoint_interval 1 s, 4 workers: first a control (a decision, a
 * Status and a timed checkpoint covering the decision within 10 s with no CheckpointNow in
 * flight), then n CheckpointNow calls in flight and the same three within 10 s.
 */
static void checkpoint_now_stall(unsigned n)
{
    struct sworn_stack s;
    int fds[16];
    uint64_t index = 0;
    struct cp_state c;
    int decided, status_ok, timed;

    assert_true(n <= 16);
    assert_int_equal(sworn_stack_up(&s, "--file-key --checkpoint-interval 1s"), 0);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_stack_sh(&s, "sed -i 's/quote_min_interval: 1s/quote_min_interval: 30s/'"
                                        " decisiond.yaml && grep -q 'quote_min_interval: 30s'"
                                        " decisiond.yaml"),
                     0);
    assert_int_equal(sworn_stack_start(&s), 0);
    /* Control, nothing in flight. */
    c.s = &s;
    assert_true(decision_within(&s, "cp-control", 10000, &index));
    assert_true(status_within(s.admin, 10000));
    c.want = index;
    assert_int_equal(sworn_test_wait_dir(s.tiles, cp_covers, &c, 10000), 0);
    /* The start's checkpoint was quoted a moment ago: the next ~30 s are inside the interval. */
    for (unsigned i = 0; i < n; i++)
        fds[i] = checkpoint_send(s.admin);
    decided = decision_within(&s, "cp-1", 10000, &index);
    status_ok = status_within(s.admin, 10000);
    c.want = index;
    timed = decided && sworn_test_wait_dir(s.tiles, cp_covers, &c, 10000) == 0;
    for (unsigned i = 0; i < n; i++) {
        Sworn__V1__AdminResponse *r = read_admin(fds[i], 60000);

        assert_non_null(r);
        assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_CHECKPOINT_NOW);
        sworn__v1__admin_response__free_unpacked(r, NULL);
        close(fds[i]);
    }
    assert_int_equal(sworn_stack_down(&s), 0);
    print_message("%u CheckpointNow in flight: decision %s, Status %s, timed checkpoint %s\n", n,
                  decided ? "answered" : "STALLED", status_ok ? "answered" : "STALLED",
                  timed ? "made" : "MISSED");
    if (!decided || !status_ok || !timed)
        fail_msg("with %u CheckpointNow calls waiting for the quote interval: decision %s, "
                 "Status %s, timed checkpoint %s (within 10 s; the interval is 30 s)",
                 n, decided ? "answered" : "STALLED", status_ok ? "answered" : "STALLED",
                 timed ? "made" : "MISSED");
}

/*
 * FINDING 2 (fixed: the asked round waits while the timed rounds go on): one CheckpointNow inside
 * tpm.quote_min_interval stops the checkpoint thread's timed rounds until the interval ends: with
 * checkpoint_interval 1 s and quote_min_interval 30 s, no checkpoint covers a decision made while
 * the call waits (none within 10 s; the control, without the call, gets one at once).
 * docs/decisiond.md says the checkpoint an operator asked for waits (on a worker thread) while
 * timed rounds go on, their checkpoints inside the interval unquoted: an admin peer calling
 * CheckpointNow in a loop holds the record's checkpoints (and the export an auditor reads) back by
 * up to quote_min_interval (up to 1 d) at a time.
 */
static void test_checkpoint_now_one(void **state)
{
    (void)state;
    checkpoint_now_stall(1);
}

/*
 * FINDING 3 (fixed: a CheckpointNow waits on the loop, holding no worker): 8 CheckpointNow calls in
 * flight (more than the 4 workers) stall every decision until the quote interval ends: each waiting
 * call holds a worker thread, and a decision's entry needs one ("A worker thread waits for the
 * checkpoint thread meanwhile"; "Nothing on the decision path waits for this thread"). A decision
 * sent while they wait gets no answer within 10 s (the interval is 30 s; configurable up to 1 d):
 * an admin peer stops the deployment's decisions, and the proxy's requests time out, with nothing
 * but CheckpointNow. Status is still answered. (The timed checkpoint is missed too: FINDING 2.)
 */
static void test_checkpoint_now_many(void **state)
{
    (void)state;
    checkpoint_now_stall(8);
}

/* ---- command-line conventions (docs/cli.md) ---- */

static const char *const programs[][2] = {
    {"SWORN_DECISIOND_BIN", "sworn-decisiond"},
    {"SWORN_PROXY_BIN", "sworn-proxy"},
    {"SWORN_WITNESS_BIN", "sworn-witness"},
    {"SWORNCTL_BIN", "swornctl"},
    {"SWORN_POLICY_BIN", "sworn-policy"},
    {"SWORN_HSM_BIN", "sworn-hsm"},
    {"SWORN_TPM_BIN", "sworn-tpm"},
    {"SWORN_LOG_BIN", "sworn-log"},
    {"SWORN_CONFORMANCE_BIN", "sworn-conformance"},
    {"SWORN_VERIFY_BIN", "sworn-verify"},
    {"SWORN_PROBE_BIN", "sworn-conformance-probe"},
    {"SWORN_RUN_BIN", "sworn-run"},
};

/* --help: usage, a blank line, exit statuses, on stdout, exit 0; --version: one line "PROGRAM
 * RELEASE (commit COMMIT)", the same for all; an unknown option: 2 (sworn-run: 125). */
static void test_cli_conventions(void **state)
{
    char commit[128] = "";

    (void)state;
    for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
        const char *bin = sworn_test_bin(programs[i][0]), *name = programs[i][1];
        struct sworn_test_run r;
        char want[160], *nl, *par;
        int unknown = strcmp(name, "sworn-run") == 0 ? 125 : 2;

        sworn_test_runv(&r, NULL, bin, "--help", NULL);
        if (r.status != 0 || r.out_len == 0 || strstr(r.out, "\n\n") == NULL ||
            strstr(r.out, "xit") == NULL)
            fail_msg("%s --help: exit %d, stdout:\n%s\nstderr:\n%s", name, r.status, r.out, r.err);
        sworn_test_run_free(&r);

        sworn_test_runv(&r, NULL, bin, "--version", NULL);
        snprintf(want, sizeof(want), "%s 0.1.0 (commit ", name);
        nl = strchr(r.out, '\n');
        if (r.status != 0 || strncmp(r.out, want, strlen(want)) != 0 || nl == NULL ||
            nl[1] != '\0' || nl[-1] != ')')
            fail_msg("%s --version: exit %d: \"%s\"", name, r.status, r.out);
        par = r.out + strlen(want);
        if (commit[0] == '\0')
            snprintf(commit, sizeof(commit), "%.*s", (int)(nl - par), par);
        else if (strncmp(par, commit, strlen(commit)) != 0)
            fail_msg("%s --version: \"%s\", others say commit %s", name, r.out, commit);
        sworn_test_run_free(&r);

        sworn_test_runv(&r, NULL, bin, "--no-such-option", NULL);
        if (r.status != unknown)
            fail_msg("%s --no-such-option: exit %d, expected %d", name, r.status, unknown);
        sworn_test_run_free(&r);
    }
}

/* Only the first argument is read for --help: an option's value "--help" is never taken for it. */
static void test_cli_help_not_first(void **state)
{
    struct sworn_test_run r;

    (void)state;
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CONFORMANCE_BIN"), "run", "--deployment",
                    "--help", NULL);
    if (r.status != 2)
        fail_msg("sworn-conformance run --deployment --help: exit %d\n%s%s", r.status, r.out,
                 r.err);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_VERIFY_BIN"), "verify", "--policy", "--help",
                    NULL);
    if (r.status != 2)
        fail_msg("sworn-verify verify --policy --help: exit %d\n%s%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
}

int main(void)
{
    struct CMUnitTest tests[96];
    size_t n = 0;

    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_control_recorded);
    for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
        tests[n] =
            (struct CMUnitTest)cmocka_unit_test_prestate(test_bad_report, (void *)&bad_rows[i]);
        tests[n++].name = bad_rows[i].what;
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_decision_socket_no_report);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_proxy_no_report);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_admin_socket_other_uid);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_control);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_swapped);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_duplicated);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_appended);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_truncated);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_symlink_other);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_fifo);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_dev_zero);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_folder);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_deleted);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_verify_moved);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_slow_senders);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_size_limit);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_concurrent_reports);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_report_at_shutdown);
    for (size_t i = 0; i < sizeof(poison_rows) / sizeof(poison_rows[0]); i++) {
        tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_poison_string,
                                                                (void *)&poison_rows[i]);
        tests[n++].name = poison_rows[i].what;
    }
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_checkpoint_now_one);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_checkpoint_now_many);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cli_conventions);
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_cli_help_not_first);
    if (n > sizeof(tests) / sizeof(tests[0]))
        abort();
    return _cmocka_run_group_tests("test_conformance_attacks", tests, n, setup, teardown);
}
