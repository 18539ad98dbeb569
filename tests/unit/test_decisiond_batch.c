/*
 * test_decisiond_batch.c -- sworn-decisiond with `receipts: batch` (docs/formats.md section 14),
 * on a real stack (scripts/dev-stack --receipts batch: the signer process and the daemon, with a
 * PEM signing key, and again with a TPM key on the stack's swtpm, --tpm-key), driven through the
 * real decision socket by concurrent clients.
 *
 *   Client threads send allows (GET requests and tcp.connect) and denies at once, round after
 *   round, until a round shows a group of more than one allow (an event the test waits for,
 *   bounded by a number of rounds, never by time). Every allow carries a batch receipt that
 *   verifies with the signer's public key (tests/unit/testutil.c, independent of the daemon's
 *   tree code): a GET a batch http-message receipt (form 3: SHA-256 of sworn's RFC 9421 base of
 *   the request -> path -> root -> one signature), a tcp.connect a batch digest receipt (form 2:
 *   the leaf hash -> path -> root); allows that share a signature share a group size and have
 *   distinct indexes; a deny carries none. An escalated GET approved by the operator gets its
 *   allow through the same batcher: a form-3 receipt over the escalated request, at the
 *   resolution's time. Then the stopped stack's record passes the auditor's
 *   sworn-verify, every check, receipts counted.
 *   Before the stop, a scrape of the metrics must add up to the decisions made: the entries of
 *   the sealed groups (sworn_batch_entries_total, the histogram's _sum) are the allows answered,
 *   the groups (sworn_batch_groups_total, _count, the +Inf bucket) the distinct signatures among
 *   them, and sworn_batch_group_size_max the largest group size a receipt carried.
 *   A configuration with `receipts: sometimes` is refused at load with the sentence that names
 *   the two values.
 *
 * The crash case (kill -9 under load loses no acknowledged decision) runs in
 * test_decisiond_faults (test_crash_under_load_batch).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "config.h"
#include "err.h"
#include "frame.h"
#include "sigscheme.h"
#include "signer.h"
#include "stack_fixture.h"
#include "testutil.h"
#include "verify_fixture.h"

#define THREADS 8
#define PER_ROUND 4 /* requests per thread per round */
#define ROUNDS_MAX 50
#define ANSWERS_MAX (THREADS * PER_ROUND * ROUNDS_MAX)

/* The stack's policy: GETs under /allowed/ and tcp.connect to port 5432 allowed, /denied denied. */
static const char policy[] = "version: 1\n"
                             "rules:\n"
                             "  - id: get\n"
                             "    effect: allow\n"
                             "    operations: [\"http.request\"]\n"
                             "    resource: { schemes: [http], paths: [\"/allowed/**\"] }\n"
                             "    methods: [GET]\n"
                             "  - id: db\n"
                             "    effect: allow\n"
                             "    operations: [\"tcp.connect\"]\n"
                             "    resource: { schemes: [tcp], ports: [5432] }\n"
                             "  - id: held\n"
                             "    effect: escalate\n"
                             "    operations: [\"http.request\"]\n"
                             "    resource: { schemes: [http], paths: [\"/escalate/**\"] }\n"
                             "  - id: no\n"
                             "    effect: deny\n"
                             "    resource: { paths: [\"/denied\", \"/denied/**\"] }\n";

enum kind { K_GET, K_TCP, K_DENY, K_APPROVED };

/* Request id of kind k. */
static void request_of(struct sworn_stack_req *q, const char *id, enum kind k)
{
    sworn_stack_req_init(q, id, "agent-1",
                         k == K_DENY       ? "/denied/x"
                         : k == K_APPROVED ? "/escalate/x"
                                           : "/allowed/x");
    if (k == K_TCP) {
        q->req.operation = "tcp.connect";
        q->resource.scheme = "tcp";
        q->resource.port = 5432;
        q->resource.path = "";
        q->req.context = NULL;
    }
}

struct answer {
    char id[64];
    enum kind kind;
    int allow;
    uint8_t leaf[32];
    uint8_t *receipt; /* packed, NULL for a deny */
    size_t receipt_len;
    uint32_t size, index;
    uint8_t sig[80];
    size_t sig_len;
};

static struct answer answers[ANSWERS_MAX];
static size_t n_answers;
static pthread_mutex_t answers_lock = PTHREAD_MUTEX_INITIALIZER;

struct client {
    struct sworn_stack *s;
    int round, thread;
};

/* Keep the answer to request id of kind k (r may be NULL). */
static void keep(const char *id, enum kind k, Sworn__V1__DecisionReply *r)
{
    struct answer a = {0};

    snprintf(a.id, sizeof(a.id), "%s", id);
    a.kind = k;
    if (r != NULL && r->body_case == SWORN__V1__DECISION_REPLY__BODY_DECISION &&
        r->decision->entry_hash.len == 32) {
        const Sworn__V1__Decision *d = r->decision;

        a.allow = d->effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
        memcpy(a.leaf, d->entry_hash.data, 32);
        if (d->receipt != NULL) {
            a.receipt_len = sworn__v1__receipt__get_packed_size(d->receipt);
            a.receipt = malloc(a.receipt_len);
            if (a.receipt != NULL)
                sworn__v1__receipt__pack(d->receipt, a.receipt);
            a.size = d->receipt->batch_size;
            a.index = d->receipt->batch_index;
            if (d->receipt->signature.len <= sizeof(a.sig)) {
                memcpy(a.sig, d->receipt->signature.data, d->receipt->signature.len);
                a.sig_len = d->receipt->signature.len;
            }
        }
    } else {
        snprintf(a.id, sizeof(a.id), "!no decision");
    }
    pthread_mutex_lock(&answers_lock);
    if (n_answers < ANSWERS_MAX)
        answers[n_answers++] = a;
    else
        free(a.receipt);
    pthread_mutex_unlock(&answers_lock);
}

/* A client thread: PER_ROUND requests, one connection each; every third a deny. */
static void *client(void *arg)
{
    struct client *c = arg;

    for (int k = 0; k < PER_ROUND; k++) {
        struct sworn_stack_req q;
        Sworn__V1__DecisionReply *r;
        enum kind kind = (enum kind)((c->thread + k) % 3);
        char id[64];

        snprintf(id, sizeof(id), "b-%d-%d-%d", c->round, c->thread, k);
        request_of(&q, id, kind);
        r = sworn_stack_decide(c->s, &q);
        keep(id, kind, r);
        if (r != NULL)
            sworn__v1__decision_reply__free_unpacked(r, NULL);
    }
    return NULL;
}

/* One round of THREADS concurrent clients; returns the largest group size seen in it. */
static uint32_t round_of(struct sworn_stack *s, int round)
{
    pthread_t th[THREADS];
    struct client c[THREADS];
    size_t from = n_answers;
    uint32_t biggest = 0;

    for (int t = 0; t < THREADS; t++) {
        c[t] = (struct client){s, round, t};
        assert_int_equal(pthread_create(&th[t], NULL, client, &c[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (size_t i = from; i < n_answers; i++)
        if (answers[i].size > biggest)
            biggest = answers[i].size;
    return biggest;
}

/* The group signature of allow a as DER: a form-2 receipt carries it so, a form-3 one as r || s
 * (one group of GETs and tcp.connects has both). OUT: der, *len. */
static void group_sig(const struct answer *a, uint8_t der[SWORN_SIGNER_SIG_MAX], size_t *len)
{
    if (a->kind == K_TCP) {
        memcpy(der, a->sig, a->sig_len);
        *len = a->sig_len;
        return;
    }
    assert_int_equal(a->sig_len, 64);
    assert_int_equal(
        sworn_ecdsa_rs_to_der(a->sig, 32, a->sig + 32, 32, der, SWORN_SIGNER_SIG_MAX, len), 0);
}

/* The batch metrics of a scrape taken after every answer came: they add up to the answers. */
static void metrics_add_up(struct sworn_stack *s, uint32_t biggest)
{
    char *text = sworn_stack_scrape(s);
    double groups = sworn_stack_metric_in(text, "sworn_batch_groups_total"),
           entries = sworn_stack_metric_in(text, "sworn_batch_entries_total");
    size_t allows = 0, signatures = 0;

    for (size_t i = 0; i < n_answers; i++) {
        uint8_t a[SWORN_SIGNER_SIG_MAX], b[SWORN_SIGNER_SIG_MAX];
        size_t alen, blen;
        int seen = 0;

        if (!answers[i].allow)
            continue;
        allows++;
        group_sig(&answers[i], a, &alen);
        for (size_t j = 0; j < i && !seen; j++) {
            if (!answers[j].allow)
                continue;
            group_sig(&answers[j], b, &blen);
            seen = alen == blen && memcmp(a, b, alen) == 0;
        }
        signatures += !seen;
    }
    printf("metrics: %.0f groups, %.0f entries (mean %.2f), max %.0f; %zu allows, %zu signatures\n",
           groups, entries, groups > 0 ? entries / groups : 0.0,
           sworn_stack_metric_in(text, "sworn_batch_group_size_max"), allows, signatures);
    assert_true(entries == (double)allows);
    assert_true(sworn_stack_metric_in(text, "sworn_decisions_total{effect=\"allow\"}") ==
                (double)allows);
    assert_true(groups == (double)signatures);
    assert_true(sworn_stack_metric_in(text, "sworn_batch_group_size_sum") == entries);
    assert_true(sworn_stack_metric_in(text, "sworn_batch_group_size_count") == groups);
    assert_true(sworn_stack_metric_in(text, "sworn_batch_group_size_bucket{le=\"+Inf\"}") ==
                groups);
    /* Groups of one are the smallest bucket; groups of 2 or more are above it. */
    assert_true(sworn_stack_metric_in(text, "sworn_batch_group_size_bucket{le=\"1\"}") < groups);
    assert_true(sworn_stack_metric_in(text, "sworn_batch_group_size_max") == (double)biggest);
    free(text);
}

/* The whole run on a stack with the signing key key_opts names (dev-stack options). */
static void batch_receipts_verify(const char *key_opts)
{
    struct sworn_stack s;
    uint32_t biggest = 0;
    int rounds = 0;
    size_t allows = 0, spki_len = 0;
    char *spki_path;
    uint8_t *spki;
    json_object *rep;

    char *pdir = sworn_test_tmpdir("batch-policy"), *ppath = sworn_test_path(pdir, "policy.yaml"),
         opts[1024];

    n_answers = 0;
    sworn_test_write_file(ppath, policy, strlen(policy), 0644);
    snprintf(opts, sizeof(opts), "%s --receipts batch --policy %s", key_opts, ppath);
    assert_int_equal(sworn_stack_up(&s, opts), 0);
    assert_int_equal(sworn_stack_sh(&s, "grep -qx 'receipts: batch' decisiond.yaml"), 0);
    /* An escalated GET, approved: its allow goes through the batcher too. */
    {
        int fd = sworn_stack_send_only(&s, "esc-1", "/escalate/x");
        Sworn__V1__AdminResponse *ar;
        Sworn__V1__DecisionReply *r;

        for (int i = 0; i < 500 && sworn_stack_pending(&s) < 1; i++)
            sworn_test_sleep_ms(20); /* polls the admin socket for the held request */
        ar = sworn_stack_resolve(&s, "esc-1", 1);
        assert_int_equal(ar->body_case, SWORN__V1__ADMIN_RESPONSE__BODY_RESOLVE);
        sworn__v1__admin_response__free_unpacked(ar, NULL);
        r = sworn_stack_read_reply(fd);
        assert_non_null(sworn_stack_expect_decision(r, SWORN__V1__EFFECT__EFFECT_ALLOW));
        keep("esc-1", K_APPROVED, r);
        sworn__v1__decision_reply__free_unpacked(r, NULL);
    }
    while (biggest < 2 && rounds < ROUNDS_MAX)
        biggest = round_of(&s, rounds++);
    printf("%s: %zu answers in %d rounds, largest group %u\n", key_opts, n_answers, rounds,
           biggest);
    if (biggest < 2)
        fail_msg("no two allows shared a group in %d rounds of %d concurrent clients", rounds,
                 THREADS);
    metrics_add_up(&s, biggest);
    assert_int_equal(sworn_stack_stop_daemon(&s), 0);
    sworn_stack_dev_trust(&s);
    spki_path = sworn_test_path(s.dir, "signer.spki");
    spki = (uint8_t *)sworn_test_read_file(spki_path, &spki_len);
    for (size_t i = 0; i < n_answers; i++) {
        struct answer *a = &answers[i];
        struct sworn_stack_req q;
        Sworn__V1__Receipt *r;

        if (a->id[0] == '!')
            fail_msg("a request got no decision");
        if (!a->allow) {
            assert_int_equal(a->kind, K_DENY);
            assert_null(a->receipt);
            continue;
        }
        assert_int_not_equal(a->kind, K_DENY);
        allows++;
        assert_non_null(a->receipt);
        r = sworn__v1__receipt__unpack(NULL, a->receipt_len, a->receipt);
        assert_non_null(r);
        assert_int_equal(r->form, a->kind == K_TCP ? 2 : 3);
        assert_int_equal(sworn_frame_check_receipt(r), 0);
        request_of(&q, a->id, a->kind);
        /* created is checked against the entry's time by sworn-verify below */
        if (sworn_test_receipt_verify(spki, spki_len, r, a->leaf, &q.req, r->created * 1000) != 0)
            fail_msg("%s: its batch receipt (item %u of %u) does not verify", a->id, r->batch_index,
                     r->batch_size);
        sworn__v1__receipt__free_unpacked(r, NULL);
        /* One signature, one group: the same size, distinct indexes. */
        for (size_t j = 0; j < i; j++)
            if (answers[j].allow && answers[j].sig_len == a->sig_len &&
                memcmp(answers[j].sig, a->sig, a->sig_len) == 0) {
                assert_int_equal(answers[j].size, a->size);
                assert_int_not_equal(answers[j].index, a->index);
            }
    }
    assert_true(allows > 0);
    rep = sworn_verify_json(sworn_test_bin("SWORN_VERIFY_BIN"), s.dir, "trust.txt", "tiles", NULL,
                            0, SWORN_VERIFY_NO_PROGRESS);
    sworn_verify_expect_pass(rep, "receipts");
    sworn_verify_expect_pass(rep, "entries");
    assert_true(json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "receipts"),
                                                       "count")) >= (int64_t)allows);
    json_object_put(rep);
    for (size_t i = 0; i < n_answers; i++)
        free(answers[i].receipt);
    free(spki);
    free(spki_path);
    assert_int_equal(sworn_stack_down(&s), 0);
    sworn_test_rmtree(pdir);
    free(ppath);
    free(pdir);
}

static void test_batch_receipts_verify(void **state)
{
    (void)state;
    batch_receipts_verify("--no-tpm --file-key");
}

/* The same with the signing key a TPM key on swtpm (scripts/dev-stack --tpm-key): the signer
 * process signs each group's root with the TPM, and sworn-verify checks the receipts against the
 * key's SPKI as tpm2_readpublic gave it. */
static void test_batch_receipts_verify_tpm_key(void **state)
{
    (void)state;
    batch_receipts_verify("--tpm-key");
}

/* An unknown receipts mode is refused at load, with the sentence. */
static void test_unknown_mode_refused(void **state)
{
    char *dir = sworn_test_tmpdir("batch-config"), *path = sworn_test_path(dir, "d.yaml");
    struct sworn_dconfig *c = NULL;
    FILE *f;

    (void)state;
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "log: { database: %s/log.db, origin: x.example/log }\n"
            "signer: { key: %s/k.pem }\npolicy: %s/p.yaml\n"
            "sockets: { decision: %s/d.sock, admin: %s/a.sock }\n"
            "peers: { proxy_uids: [1], operator_uids: [0] }\n"
            "receipts: sometimes\n",
            dir, dir, dir, dir, dir);
    fclose(f);
    assert_int_equal(sworn_dconfig_load(path, &c), -1);
    if (strstr(sworn_err_msg(), "receipts must be per-request") == NULL ||
        strstr(sworn_err_msg(), "or batch") == NULL)
        fail_msg("unexpected refusal: %s", sworn_err_msg());
    sworn_test_rmtree(dir);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_mode_refused),
        cmocka_unit_test(test_batch_receipts_verify),
        cmocka_unit_test(test_batch_receipts_verify_tpm_key),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
