/*
 * test_decisiond_escalate.c -- an operator's approval is bound to the escalate entry the operator
 * was shown (the review's finding 2, issue 11), on a real stack (scripts/dev-stack) driven over
 * its sockets and with swornctl, the record read back afterwards.
 *
 * The attack reproduced: hold `dup-1` for a harmless read; the operator lists it; hold a second
 * `dup-1` for `DELETE /escalate/delete-all-repos`; approve `dup-1`. Before the fix the approval
 * went to the newest request with that id, the DELETE was allowed with a receipt, and the
 * EscalationResolved entry named only `dup-1`. Now the second `dup-1` is denied at once and
 * recorded (a DecisionRecord DENY holding the DELETE, reason "denied: duplicate request id: ..."),
 * the operator approves by the escalate entry's log index (and hash), and the EscalationResolved
 * entry records both.
 *
 * Also: the request-id table itself (d_seen.h): its bound, and that the oldest id goes when it
 * is full; and the listing in pages (found while fixing finding 4: 19 held requests of the
 * largest size made the one listing reply too large, and the operator saw none), with swornctl
 * reading every page (test_listing_pages).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "d_seen.h"
#include "err.h"
#include "frame.h"
#include "logstore.h"
#include "merkle.h"
#include "stack_fixture.h"
#include "testutil.h"

/* Send request id (agent-1, method, path) on a new connection without reading; returns the fd. */
static int send_method(struct sworn_stack *s, const char *id, const char *method, const char *path)
{
    struct sworn_stack_req r;
    uint8_t *frame;
    size_t frame_len;
    int fd = sworn_stack_connect(s->decision);

    assert_true(fd >= 0);
    sworn_stack_req_init(&r, id, "agent-1", path);
    r.context.method = (char *)method;
    assert_int_equal(sworn_frame_pack_authorize(&r.req, &frame, &frame_len), 0);
    assert_int_equal(write(fd, frame, frame_len), (ssize_t)frame_len);
    free(frame);
    return fd;
}

/* Wait until n escalations are held (bounded), then check that exactly n are. */
static void wait_pending(struct sworn_stack *s, unsigned n)
{
    for (int i = 0; i < 500 && sworn_stack_pending(s) < n; i++)
        sworn_test_sleep_ms(20);
    assert_int_equal(sworn_stack_pending(s), n);
}

/* The one held escalation: its index, hash and path. */
static void held_one(struct sworn_stack *s, uint64_t *index, uint8_t hash[32], char *path,
                     size_t cap)
{
    struct sworn_stack_admin_msg m;
    Sworn__V1__AdminResponse *r;
    const Sworn__V1__PendingEscalation *p;

    sworn_stack_list_msg(&m, 0);
    r = sworn_stack_admin(s, &m.rq);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS);
    assert_int_equal(r->list_escalations->n_pending, 1);
    p = r->list_escalations->pending[0];
    assert_int_equal(p->entry_hash.len, 32);
    *index = p->log_index;
    memcpy(hash, p->entry_hash.data, 32);
    snprintf(path, cap, "%s", p->request->resource->path);
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* Resolve with every field of the ResolveRequest given; returns the answer (free it). */
static Sworn__V1__AdminResponse *resolve_full(struct sworn_stack *s, uint64_t index,
                                              const uint8_t *hash, const char *id, int approve)
{
    struct sworn_stack_admin_msg m;

    sworn_stack_resolve_msg(&m, index, approve);
    if (hash != NULL) {
        m.resolve.escalation_hash.data = (uint8_t *)hash;
        m.resolve.escalation_hash.len = 32;
    }
    if (id != NULL)
        m.resolve.request_id = (char *)id;
    return sworn_stack_admin(s, &m.rq);
}

/* An admin answer that is an ErrorFrame with code. */
static void expect_admin_error(Sworn__V1__AdminResponse *r, int code)
{
    assert_non_null(r);
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_ERROR)
        fail_msg("expected an error %d, got answer %d", code, (int)r->body_case);
    assert_int_equal(r->error->code, code);
    sworn__v1__admin_response__free_unpacked(r, NULL);
}

/* request id for path (GET) on a new connection: a deny for a duplicate id. Returns its index. */
static uint64_t expect_duplicate(struct sworn_stack *s, const char *id, const char *path)
{
    Sworn__V1__DecisionReply *r = sworn_stack_decide_path(s, id, path);
    Sworn__V1__Decision *d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    uint64_t index = d->log_index;

    assert_non_null(strstr(d->reason, "duplicate request id"));
    assert_null(d->receipt);
    assert_null(d->credential);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    return index;
}

static Sworn__V1__Entry *read_entry(struct sworn_log *log, uint64_t index, uint8_t leaf[32])
{
    uint8_t entry[SWORN_FRAME_ENTRY_MAX];
    size_t len;
    Sworn__V1__Entry *e;

    assert_int_equal(sworn_log_read_entry(log, index, entry, sizeof(entry), &len), 0);
    if (leaf != NULL)
        sworn_merkle_leaf_hash(entry, len, leaf);
    e = sworn_frame_unpack_entry(entry, len);
    assert_non_null(e);
    return e;
}

/* The review's reproduction, and every way around the fix that the operator's call offers. */
static void test_approval_not_redirected(void **state)
{
    struct sworn_stack s;
    int fa, fd;
    uint64_t held_index, dup_index, again_index, resolved_index;
    uint8_t held_hash[32], bad_hash[32], leaf[32];
    char path[512];
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;
    Sworn__V1__AdminResponse *ar;
    struct sworn_log *log;
    Sworn__V1__Entry *e;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    /* dup-1 for a harmless read, held; the operator lists it. */
    fa = send_method(&s, "dup-1", "GET", "/escalate/read-report");
    wait_pending(&s, 1);
    held_one(&s, &held_index, held_hash, path, sizeof(path));
    assert_string_equal(path, "/escalate/read-report");

    /* A second dup-1, a DELETE: denied at once and recorded, never held. */
    fd = send_method(&s, "dup-1", "DELETE", "/escalate/delete-all-repos");
    r = sworn_stack_read_reply(fd);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_non_null(strstr(d->reason, "duplicate request id"));
    assert_non_null(strstr(d->reason, "held for an operator"));
    assert_null(d->receipt);
    dup_index = d->log_index;
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* Still one held, the read, at the same index with the same hash. */
    {
        uint64_t i2;
        uint8_t h2[32];

        held_one(&s, &i2, h2, path, sizeof(path));
        assert_int_equal(i2, held_index);
        assert_memory_equal(h2, held_hash, 32);
        assert_string_equal(path, "/escalate/read-report");
    }

    /* The operator's call must name the held entry exactly: another hash, another id, the
     * duplicate's index, or an index past the log are refused, and nothing is resolved. */
    memcpy(bad_hash, held_hash, 32);
    bad_hash[31] ^= 1;
    expect_admin_error(resolve_full(&s, held_index, bad_hash, NULL, 1), SWORN_ERR_VERIFY);
    expect_admin_error(resolve_full(&s, held_index, NULL, "dup-2", 1), SWORN_ERR_VERIFY);
    expect_admin_error(resolve_full(&s, dup_index, NULL, NULL, 1), SWORN_ERR_NOTFOUND);
    expect_admin_error(resolve_full(&s, dup_index + 1000, NULL, NULL, 1), SWORN_ERR_NOTFOUND);
    wait_pending(&s, 1);

    /* Approve by index, hash and id: the read is allowed, with a receipt, at the resolution. */
    ar = resolve_full(&s, held_index, held_hash, "dup-1", 1);
    assert_non_null(ar);
    assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    resolved_index = ar->resolve->log_index;
    sworn__v1__admin_response__free_unpacked(ar, NULL);
    r = sworn_stack_read_reply(fa);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_int_equal(d->log_index, resolved_index);
    assert_non_null(d->receipt);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    assert_int_equal(sworn_stack_pending(&s), 0);
    /* Resolved once: the same index again is not held. */
    expect_admin_error(resolve_full(&s, held_index, held_hash, NULL, 1), SWORN_ERR_NOTFOUND);

    /* The id stays taken after its resolution, and an allow's id too. */
    again_index = expect_duplicate(&s, "dup-1", "/allowed/x");
    sworn_stack_expect_allow(&s, "fresh-1");
    (void)expect_duplicate(&s, "fresh-1", "/allowed/x");

    /* Two requests under one new id sent at once, on two connections, before either is
     * recorded: the id is taken when the first arrives, so exactly one is held and the other
     * is denied as a duplicate, whichever came first. */
    {
        int f1 = send_method(&s, "race-1", "GET", "/escalate/race-read");
        int f2 = send_method(&s, "race-1", "DELETE", "/escalate/race-delete");
        uint64_t ri;
        uint8_t rh[32];
        int held_first;
        Sworn__V1__AdminResponse *rar;

        wait_pending(&s, 1);
        held_one(&s, &ri, rh, path, sizeof(path));
        held_first = strcmp(path, "/escalate/race-read") == 0;
        assert_true(held_first || strcmp(path, "/escalate/race-delete") == 0);
        r = sworn_stack_read_reply(held_first ? f2 : f1);
        d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
        assert_non_null(strstr(d->reason, "duplicate request id"));
        sworn__v1__decision_reply__free_unpacked(r, NULL);
        assert_int_equal(sworn_stack_pending(&s), 1);
        rar = sworn_stack_resolve_at(&s, ri, 0);
        assert_non_null(rar);
        assert_int_equal(rar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
        sworn__v1__admin_response__free_unpacked(rar, NULL);
        r = sworn_stack_read_reply(held_first ? f1 : f2);
        sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    }

    /* The record: the read held at held_index with that hash; the DELETE recorded as a deny
     * under its own index; the resolution names the read's entry by index and hash. */
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    assert_int_equal(sworn_log_open(s.log_db, &log), 0);
    e = read_entry(log, held_index, leaf);
    assert_memory_equal(leaf, held_hash, 32);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_ESCALATE);
    assert_string_equal(e->decision->request->resource->path, "/escalate/read-report");
    sworn__v1__entry__free_unpacked(e, NULL);
    e = read_entry(log, dup_index, NULL);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    assert_string_equal(e->decision->request->request_id, "dup-1");
    assert_string_equal(e->decision->request->context->method, "DELETE");
    assert_string_equal(e->decision->request->resource->path, "/escalate/delete-all-repos");
    assert_string_equal(e->decision->rule_id, "");
    assert_non_null(strstr(e->decision->reason, "duplicate request id"));
    sworn__v1__entry__free_unpacked(e, NULL);
    e = read_entry(log, resolved_index, NULL);
    assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_ESCALATION_RESOLVED);
    assert_int_equal(e->escalation_resolved->effect, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(e->escalation_resolved->request_id, "dup-1");
    assert_int_equal(e->escalation_resolved->escalation_index, held_index);
    assert_int_equal(e->escalation_resolved->escalation_hash.len, 32);
    assert_memory_equal(e->escalation_resolved->escalation_hash.data, held_hash, 32);
    sworn__v1__entry__free_unpacked(e, NULL);
    e = read_entry(log, again_index, NULL);
    assert_int_equal(e->decision->effect, SWORN__V1__EFFECT__EFFECT_DENY);
    sworn__v1__entry__free_unpacked(e, NULL);
    sworn_log_close(log);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* swornctl approves and denies by the escalate entry's log index, which `escalations` prints
 * with the entry hash; a request id is refused as an argument; --hash must match. */
static void test_swornctl_by_index(void **state)
{
    struct sworn_stack s;
    const char *ctl = sworn_test_bin("SWORNCTL_BIN");
    uint64_t index;
    uint8_t hash[32];
    char path[512];
    int fa;
    Sworn__V1__DecisionReply *r;
    Sworn__V1__Decision *d;

    (void)state;
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    fa = send_method(&s, "ctl-1", "GET", "/escalate/ctl");
    wait_pending(&s, 1);
    held_one(&s, &index, hash, path, sizeof(path));
    /* The listing shows the index and the hash. */
    assert_int_equal(sworn_stack_sh(&s, "\"%s\" --config \"$CONFIG\" escalations > esc.json", ctl),
                     0);
    assert_int_equal(sworn_stack_sh(&s, "grep -q '\"log_index\":%llu,\"entry_hash\":\"' esc.json",
                                    (unsigned long long)index),
                     0);
    /* A request id is not an index: usage (2), nothing resolved. */
    assert_int_equal(
        sworn_stack_sh(&s, "\"%s\" --config \"$CONFIG\" approve ctl-1 2>/dev/null", ctl), 2);
    /* The right index with another hash: refused (1), nothing resolved. */
    assert_int_equal(sworn_stack_sh(&s,
                                    "\"%s\" --config \"$CONFIG\" approve %llu --hash %064d "
                                    ">/dev/null",
                                    ctl, (unsigned long long)index, 0),
                     1);
    assert_int_equal(sworn_stack_pending(&s), 1);
    /* The index and the hash as listed: approved, with the operator's reason. */
    assert_int_equal(sworn_stack_sh(&s,
                                    "h=$(sed -n 's/.*\"entry_hash\":\"\\([0-9a-f]*\\)\".*/\\1/p' "
                                    "esc.json) && \"%s\" --config \"$CONFIG\" approve %llu --hash "
                                    "\"$h\" --reason 'ticket OPS-7' > approve.json",
                                    ctl, (unsigned long long)index),
                     0);
    r = sworn_stack_read_reply(fa);
    d = sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_string_equal(d->reason, "ticket OPS-7");
    assert_int_equal(sworn_stack_sh(&s, "grep -q '\"log_index\":%llu' approve.json",
                                    (unsigned long long)d->log_index),
                     0);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* deny by index, too. */
    fa = send_method(&s, "ctl-2", "GET", "/escalate/ctl2");
    wait_pending(&s, 1);
    held_one(&s, &index, hash, path, sizeof(path));
    assert_int_equal(sworn_stack_sh(&s, "\"%s\" --config \"$CONFIG\" deny %llu > /dev/null", ctl,
                                    (unsigned long long)index),
                     0);
    r = sworn_stack_read_reply(fa);
    sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_DENY);
    sworn__v1__decision_reply__free_unpacked(r, NULL);
    /* tail shows the resolution's link. */
    assert_int_equal(sworn_stack_sh(&s,
                                    "\"%s\" --config \"$CONFIG\" tail 1 | grep -q "
                                    "'\"escalation_index\":%llu,\"escalation_hash\":\"'",
                                    ctl, (unsigned long long)index),
                     0);
    assert_int_equal(sworn_stack_down(&s), 0);
}

/* One page of the listing from index from (a listing, else the test fails; free it). */
static Sworn__V1__AdminResponse *page_from(struct sworn_stack *s, uint64_t from)
{
    struct sworn_stack_admin_msg m;
    Sworn__V1__AdminResponse *r;

    sworn_stack_list_msg(&m, from);
    r = sworn_stack_admin(s, &m.rq);
    assert_non_null(r);
    if (r->body_case != SWORN__V1__ADMIN_RESPONSE__BODY_LIST_ESCALATIONS)
        fail_msg("the listing from %llu was answered with %d (%s)", (unsigned long long)from,
                 (int)r->body_case,
                 r->body_case == SWORN__V1__ADMIN_RESPONSE__BODY_ERROR ? r->error->message : "?");
    return r;
}

#define PAGED_HELD 20 /* more than a page, and more than one old reply could hold */

/* What the listing test holds: per request id big-NN, its connection and escalate entry. */
struct paged {
    int fd[PAGED_HELD];
    uint64_t index[PAGED_HELD]; /* ascending, as the pages list them */
    int who[PAGED_HELD];        /* index[i] is big-<who[i]>'s */
};

/* The request number NN of a listed big-NN. */
static int big_number(const Sworn__V1__PendingEscalation *p)
{
    int n = -1;

    assert_int_equal(sscanf(p->request->request_id, "big-%d", &n), 1);
    assert_true(n >= 0 && n < PAGED_HELD);
    return n;
}

/*
 * The held escalations are listed in pages (found while fixing finding 4): before, one reply held
 * them all, and 19 held requests of the largest size the decision socket accepts made it larger
 * than a frame, so the listing failed and the operator saw none of them. An agent that can
 * trigger escalations could so blind the operator. Now each page holds at most 16 (which always
 * fit), lowest index first, with the total and whether more are held; swornctl reads every page.
 */
static void test_listing_pages(void **state)
{
    struct sworn_stack s;
    const char *ctl = sworn_test_bin("SWORNCTL_BIN");
    struct sworn_stack_big_req *b = malloc(sizeof(*b));
    struct paged h;
    Sworn__V1__AdminResponse *r;
    const Sworn__V1__ListEscalationsResponse *l;
    Sworn__V1__DecisionReply *rep;
    Sworn__V1__Decision *d;
    json_object *o, *pending, *v;
    char *file, id[32];
    int seen[PAGED_HELD] = {0}, last;
    uint64_t from;

    (void)state;
    assert_non_null(b);
    assert_int_equal(sworn_stack_up(&s, "--no-tpm --file-key"), 0);
    /* 20 escalations of requests of exactly SWORN_FRAME_REQUEST_MAX bytes, each held with its
     * connection: 1.1 MB of requests, more than one frame. */
    for (int i = 0; i < PAGED_HELD; i++) {
        uint8_t *frame;
        size_t len;

        snprintf(id, sizeof(id), "big-%02d", i);
        sworn_stack_big_init(b, id, "/escalate/");
        sworn_stack_big_fit(b, SWORN_FRAME_REQUEST_MAX);
        h.fd[i] = sworn_stack_connect(s.decision);
        assert_true(h.fd[i] >= 0);
        assert_int_equal(sworn_frame_pack_authorize(&b->q.req, &frame, &len), 0);
        assert_int_equal(write(h.fd[i], frame, len), (ssize_t)len);
        free(frame);
    }
    wait_pending(&s, PAGED_HELD);

    /* The first page: 16, lowest index first, and more; the total is all 20. */
    r = page_from(&s, 0);
    l = r->list_escalations;
    assert_int_equal(l->n_pending, SWORN_FRAME_ESCALATIONS_PAGE);
    assert_true(l->more);
    assert_int_equal(l->total, PAGED_HELD);
    for (size_t i = 0; i < l->n_pending; i++) {
        assert_int_equal(protobuf_c_message_get_packed_size(&l->pending[i]->request->base),
                         SWORN_FRAME_REQUEST_MAX);
        h.index[i] = l->pending[i]->log_index;
        h.who[i] = big_number(l->pending[i]);
        assert_true(i == 0 || h.index[i] > h.index[i - 1]);
    }
    from = h.index[SWORN_FRAME_ESCALATIONS_PAGE - 1] + 1;
    sworn__v1__admin_response__free_unpacked(r, NULL);
    /* The next page, from the last index + 1: the other 4, and no more. */
    r = page_from(&s, from);
    l = r->list_escalations;
    assert_int_equal(l->n_pending, PAGED_HELD - SWORN_FRAME_ESCALATIONS_PAGE);
    assert_false(l->more);
    assert_int_equal(l->total, PAGED_HELD);
    for (size_t i = 0; i < l->n_pending; i++) {
        size_t k = SWORN_FRAME_ESCALATIONS_PAGE + i;

        h.index[k] = l->pending[i]->log_index;
        h.who[k] = big_number(l->pending[i]);
        assert_true(h.index[k] > h.index[k - 1]);
    }
    sworn__v1__admin_response__free_unpacked(r, NULL);
    /* Every request listed once. */
    for (int i = 0; i < PAGED_HELD; i++)
        seen[h.who[i]]++;
    for (int i = 0; i < PAGED_HELD; i++)
        assert_int_equal(seen[i], 1);
    /* A page from the middle starts there; one from past them all is empty, with the total. */
    r = page_from(&s, h.index[10]);
    assert_int_equal(r->list_escalations->n_pending, PAGED_HELD - 10);
    assert_int_equal(r->list_escalations->pending[0]->log_index, h.index[10]);
    assert_false(r->list_escalations->more);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    r = page_from(&s, h.index[PAGED_HELD - 1] + 1);
    assert_int_equal(r->list_escalations->n_pending, 0);
    assert_false(r->list_escalations->more);
    assert_int_equal(r->list_escalations->total, PAGED_HELD);
    sworn__v1__admin_response__free_unpacked(r, NULL);

    /* swornctl escalations reads every page: all 20, in index order, with their hashes, and the
     * total, as one JSON object; nothing changed meanwhile, so nothing on standard error. */
    assert_int_equal(sworn_stack_sh(&s,
                                    "\"%s\" --config \"$CONFIG\" escalations > esc.json 2> esc.err "
                                    "&& [ ! -s esc.err ] && [ \"$(wc -l < esc.json)\" = 1 ]",
                                    ctl),
                     0);
    file = sworn_test_path(s.dir, "esc.json");
    o = json_object_from_file(file);
    free(file);
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "total", &v));
    assert_int_equal(json_object_get_int64(v), PAGED_HELD);
    assert_false(json_object_object_get_ex(o, "incomplete", &v));
    assert_true(json_object_object_get_ex(o, "pending", &pending));
    assert_int_equal(json_object_array_length(pending), PAGED_HELD);
    for (size_t i = 0; i < PAGED_HELD; i++) {
        json_object *e = json_object_array_get_idx(pending, i);

        assert_true(json_object_object_get_ex(e, "log_index", &v));
        assert_int_equal((uint64_t)json_object_get_int64(v), h.index[i]);
        assert_true(json_object_object_get_ex(e, "entry_hash", &v));
        assert_int_equal(strlen(json_object_get_string(v)), 64);
        assert_true(json_object_object_get_ex(e, "request_id", &v));
        snprintf(id, sizeof(id), "big-%02d", h.who[i]);
        assert_string_equal(json_object_get_string(v), id);
    }
    json_object_put(o);

    /* The 20th, on the second page, approved by its index with swornctl: allowed, with a
     * receipt, on its own connection. */
    last = h.who[PAGED_HELD - 1];
    assert_int_equal(sworn_stack_sh(&s, "\"%s\" --config \"$CONFIG\" approve %llu > /dev/null", ctl,
                                    (unsigned long long)h.index[PAGED_HELD - 1]),
                     0);
    rep = sworn_stack_read_reply(h.fd[last]);
    d = sworn_stack_expect_decision(rep, SWORN__V1__EFFECT__EFFECT_ALLOW);
    assert_non_null(d->receipt);
    sworn__v1__decision_reply__free_unpacked(rep, NULL);
    h.fd[last] = -1;
    assert_int_equal(sworn_stack_pending(&s), PAGED_HELD - 1);

    /* Each page is a snapshot of its moment. Between the first page and the next, one of the next
     * page's is resolved and a new one held: the next page lists the others, then the new one
     * (its index is above them all), and the total says 19 again. */
    r = page_from(&s, 0);
    assert_int_equal(r->list_escalations->n_pending, SWORN_FRAME_ESCALATIONS_PAGE);
    assert_true(r->list_escalations->more);
    assert_int_equal(r->list_escalations->total, PAGED_HELD - 1);
    from = r->list_escalations->pending[SWORN_FRAME_ESCALATIONS_PAGE - 1]->log_index + 1;
    assert_int_equal(from, h.index[SWORN_FRAME_ESCALATIONS_PAGE - 1] + 1);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    r = sworn_stack_resolve_at(&s, h.index[SWORN_FRAME_ESCALATIONS_PAGE], 0);
    assert_non_null(r);
    assert_int_equal(r->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
    sworn__v1__admin_response__free_unpacked(r, NULL);
    {
        int fl = send_method(&s, "late-1", "GET", "/escalate/late");

        wait_pending(&s, PAGED_HELD - 1);
        r = page_from(&s, from);
        l = r->list_escalations;
        assert_int_equal(l->n_pending, 3);
        assert_false(l->more);
        assert_int_equal(l->total, PAGED_HELD - 1);
        assert_int_equal(l->pending[0]->log_index, h.index[SWORN_FRAME_ESCALATIONS_PAGE + 1]);
        assert_int_equal(l->pending[1]->log_index, h.index[SWORN_FRAME_ESCALATIONS_PAGE + 2]);
        assert_string_equal(l->pending[2]->request->request_id, "late-1");
        assert_true(l->pending[2]->log_index > h.index[PAGED_HELD - 1]);
        sworn__v1__admin_response__free_unpacked(r, NULL);
        close(fl);
    }

    assert_int_equal(sworn_stack_down(&s), 0);
    for (int i = 0; i < PAGED_HELD; i++)
        if (h.fd[i] >= 0)
            close(h.fd[i]);
    free(b);
}

/* The request-id table: an id is refused while it is among the last D_SEEN_IDS taken, and the
 * oldest goes when the table is full (memory stays fixed). */
static void test_seen_table_bound(void **state)
{
    struct d_seen_ids *t;
    char id[32];

    (void)state;
    assert_int_equal(d_seen_new(&t), 0);
    for (unsigned i = 0; i < D_SEEN_IDS; i++) {
        snprintf(id, sizeof(id), "id-%u", i);
        assert_int_equal(d_seen_take(t, id), 0);
    }
    assert_int_equal(d_seen_count(t), D_SEEN_IDS);
    /* Full: every id is still refused, the oldest and the newest too. */
    assert_int_equal(d_seen_take(t, "id-0"), 1);
    assert_int_equal(d_seen_take(t, "id-65535"), 1);
    assert_int_equal(d_seen_count(t), D_SEEN_IDS);
    /* One more: id-0, the oldest, goes; id-1 stays. */
    assert_int_equal(d_seen_take(t, "one-more"), 0);
    assert_int_equal(d_seen_take(t, "id-1"), 1);
    assert_int_equal(d_seen_take(t, "one-more"), 1);
    assert_int_equal(d_seen_take(t, "id-0"), 0); /* taken again, evicting id-1 */
    assert_int_equal(d_seen_take(t, "id-1"), 0);
    assert_int_equal(d_seen_take(t, "id-2"), 0); /* id-2 was evicted by id-1 */
    assert_int_equal(d_seen_take(t, "id-65535"), 1);
    /* Ids that differ only past a prefix, or by length, are different ids. */
    assert_int_equal(d_seen_take(t, "id-6553"), 1);
    assert_int_equal(d_seen_take(t, "id-655350"), 0);
    assert_int_equal(d_seen_take(t, "id-65535x"), 0);
    d_seen_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seen_table_bound),
        cmocka_unit_test(test_approval_not_redirected),
        cmocka_unit_test(test_swornctl_by_index),
        cmocka_unit_test(test_listing_pages),
    };

    if (getenv("SWORN_DECISIOND_BIN") == NULL) {
        fprintf(stderr, "test_decisiond_escalate: sworn-decisiond is not built\n");
        return 1;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
