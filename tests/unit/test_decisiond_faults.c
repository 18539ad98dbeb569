/*
 * test_decisiond_faults.c -- sworn-decisiond under the faults of DESIGN section 5, each on a real
 * stack (scripts/dev-stack: SoftHSM or a PEM key, swtpm, the daemon), driven through the real
 * sockets as the proxy and the operator drive it, with the record checked afterwards with the
 * log's own reader.
 *
 *   signer child killed         answers are a recorded deny or an ErrorFrame, never an allow
 *                               without a receipt; later allows carry receipts that verify;
 *                               the same with `receipts: batch` (a failed group signature: every
 *                               allow of the group a recorded deny)
 *   HSM stalls (C_Sign hangs)   allows become recorded denies naming the signer; recovery (in
 *                               both receipt modes)
 *   HSM token gone              likewise, through the signer's restart backoff
 *   TPM stopped                 checkpoints go on unquoted (metrics, no stored quote); with
 *                               tpm.required allows are denies naming the TPM; a restart meanwhile
 *                               is unmeasured, or refused with tpm.required; quoting resumes when
 *                               swtpm is back on its state and ports
 *   log writes fail             (RLIMIT_FSIZE 0 on the running daemon) ErrorFrames, nothing
 *                               acknowledged or stored, the daemon stays up; service resumes when
 *                               the limit is lifted
 *   log database locked         (another process holds BEGIN EXCLUSIVE) ErrorFrames after the
 *                               busy timeout; service resumes after the release
 *   crash under load            SIGKILL at random moments, 20 times (and 5 times while starting):
 *                               every acknowledged decision is in the log at its index with its
 *                               leaf hash, every checkpoint's root is recomputed from the stored
 *                               entries and is consistent with the newest; the same with
 *                               `receipts: batch` (one signature per commit group: every
 *                               acknowledged allow's batch receipt, form 3 for these GETs, is
 *                               stored and verifies)
 *   crash with a TPM            (issue 11, finding 14) SIGKILL of the monitor, the engine or both,
 *                               20 times under load with swtpm: every start's first checkpoint
 *                               and the final one are quoted, every quote verifies under the one
 *                               persistent AK, tpm2-tools find no transient object or session
 *   foreign object at the AK's  never used, never evicted; tpm.required refuses the start
 *   handle
 *
 * Invariants checked on every answer, in every test (check_reply): a Decision names a 32-byte
 * entry hash; an allow carries a receipt, a deny none. And at the end of every test, with the
 * daemon stopped (check_log): every acknowledged decision is at its index with that leaf hash,
 * request id and effect; every acknowledged allow's receipt is stored beside it and verifies
 * with the signer's public key; every stored checkpoint matches the stored entries; the exported
 * tiles folder reads back (sworn_tiledir_import, verified with the signer's key) and holds them.
 *
 * A failed test leaves nothing running: the stack lives at file scope and the teardown takes it
 * down. SWORN_TEST_FILTER=NAME (a glob) runs one test; SWORN_KEEP_STACK=1 keeps the folders.
 *
 * Assertions never depend on timing: where a fault may be seen earlier or later (a signer killed
 * while idle is replaced before it is missed), the test accepts every answer the contract allows
 * and asserts the contract, and drives the fault until the behaviour under test shows.
 */
#define _GNU_SOURCE /* prlimit */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <sqlite3.h>

#include "checkpoint.h"
#include "err.h"
#include "frame.h"
#include "logstore.h"
#include "merkle.h"
#include "note.h"
#include "quote.h"
#include "notesigner.h"
#include "sig_base.h"
#include "sigscheme.h"
#include "stack_fixture.h"
#include "sv_merkle.h"
#include "testutil.h"
#include "tiledir.h"

#define ALLOW SWORN__V1__EFFECT__EFFECT_ALLOW
#define DENY SWORN__V1__EFFECT__EFFECT_DENY

/* --- acknowledged decisions ---------------------------------------------------------------- */

struct ack {
    char id[64];
    uint64_t index;
    uint8_t hash[32];
    int allow;
    uint8_t sig[512];
    size_t sig_len;
};

/* Every answer of a test, shared by its client threads. */
struct acks {
    pthread_mutex_t lock;
    struct ack *v;
    size_t n, cap;
    unsigned allows, denies, errors, unanswered;
    unsigned violations;
    char violation[512]; /* the first broken invariant */
};

enum outcome { OUT_NONE, OUT_ERROR, OUT_ALLOW, OUT_DENY };

static void acks_init(struct acks *a)
{
    memset(a, 0, sizeof(*a));
    pthread_mutex_init(&a->lock, NULL);
}

static void acks_free(struct acks *a)
{
    free(a->v);
    pthread_mutex_destroy(&a->lock);
}

static void violation(struct acks *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void violation(struct acks *a, const char *fmt, ...)
{
    va_list ap;

    if (a->violations++ == 0) {
        va_start(ap, fmt);
        vsnprintf(a->violation, sizeof(a->violation), fmt, ap);
        va_end(ap);
    }
}

/*
 * Classify one answer and keep every Decision (any thread; never asserts, so that client threads
 * may call it: violations are counted and asserted by the test's main thread).
 */
static enum outcome check_reply(struct acks *a, const char *id, const Sworn__V1__DecisionReply *r)
{
    enum outcome o;

    pthread_mutex_lock(&a->lock);
    if (r == NULL) {
        /* No answer (the daemon is gone, or did not answer): the proxy denies. */
        a->unanswered++;
        o = OUT_NONE;
    } else if (r->body_case == SWORN__V1__DECISION_REPLY__BODY_ERROR) {
        a->errors++;
        o = OUT_ERROR;
    } else {
        const Sworn__V1__Decision *d = r->decision;
        struct ack *k;

        o = d->effect == ALLOW ? OUT_ALLOW : OUT_DENY;
        if (strcmp(d->request_id, id) != 0)
            violation(a, "%s: answered as %s", id, d->request_id);
        if (d->entry_hash.len != 32)
            violation(a, "%s: entry hash of %zu bytes", id, d->entry_hash.len);
        if (o == OUT_ALLOW &&
            (d->receipt == NULL || d->receipt->signature.len == 0 ||
             d->receipt->signature.len > sizeof(k->sig) || d->receipt->key_id.len != 32))
            violation(a, "%s: an allow without a proper receipt", id);
        if (o == OUT_DENY && (d->receipt != NULL || d->credential != NULL))
            violation(a, "%s: a deny with a receipt or credential", id);
        if (a->n == a->cap) {
            a->cap = a->cap ? a->cap * 2 : 256;
            a->v = realloc(a->v, a->cap * sizeof(*a->v));
        }
        k = &a->v[a->n++];
        memset(k, 0, sizeof(*k));
        snprintf(k->id, sizeof(k->id), "%s", id);
        k->index = d->log_index;
        if (d->entry_hash.len == 32)
            memcpy(k->hash, d->entry_hash.data, 32);
        k->allow = o == OUT_ALLOW;
        if (k->allow && d->receipt != NULL && d->receipt->signature.len <= sizeof(k->sig)) {
            memcpy(k->sig, d->receipt->signature.data, d->receipt->signature.len);
            k->sig_len = d->receipt->signature.len;
        }
        if (k->allow)
            a->allows++;
        else
            a->denies++;
    }
    pthread_mutex_unlock(&a->lock);
    return o;
}

static void assert_no_violation(struct acks *a)
{
    if (a->violations != 0)
        fail_msg("%u broken invariants; the first: %s", a->violations, a->violation);
}

/*
 * One request, answered and checked. OUT: *reason (may be NULL), the Decision's reason.
 */
static enum outcome ask(struct sworn_stack *s, struct acks *a, const char *id, const char *path,
                        char *reason, size_t cap)
{
    struct sworn_stack_req r;
    Sworn__V1__DecisionReply *reply;
    enum outcome o;

    sworn_stack_req_init(&r, id, "agent-1", path);
    reply = sworn_stack_decide(s, &r);
    o = check_reply(a, id, reply);
    if (reason != NULL) {
        reason[0] = '\0';
        if (o == OUT_ALLOW || o == OUT_DENY)
            snprintf(reason, cap, "%s", reply->decision->reason);
        else if (o == OUT_ERROR)
            snprintf(reason, cap, "%s", reply->error->message);
    }
    if (reply != NULL)
        sworn__v1__decision_reply__free_unpacked(reply, NULL);
    return o;
}

/* Ask for allows until one comes back with a receipt (recovery); fails the test otherwise. */
static void expect_recovery(struct sworn_stack *s, struct acks *a, const char *tag, int tries)
{
    char id[64], reason[1100];

    for (int i = 0; i < tries; i++) {
        snprintf(id, sizeof(id), "%s-%d", tag, i);
        if (ask(s, a, id, "/allowed/recovered", reason, sizeof(reason)) == OUT_ALLOW)
            return;
        sworn_test_sleep_ms(100);
    }
    fail_msg("%s: no allow came back after the fault ended (last: %s)", tag, reason);
}

/* --- the signer's public key, receipts ------------------------------------------------------ */

static EVP_PKEY *stack_pubkey(struct sworn_stack *s)
{
    EVP_PKEY *k = NULL;

    if (s->spki_der[0] != '\0') {
        size_t len;
        char *der = sworn_test_read_file(s->spki_der, &len);
        const unsigned char *p = (const unsigned char *)der;

        k = d2i_PUBKEY(NULL, &p, (long)len);
        free(der);
    } else {
        char *path = sworn_test_path(s->dir, "signer.pem");
        FILE *f = fopen(path, "r");

        assert_non_null(f);
        k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
        fclose(f);
        free(path);
    }
    assert_non_null(k);
    return k;
}

/*
 * A receipt r of the decision entry d with leaf hash leaf, by key k (docs/formats.md): a digest
 * receipt (form 0) signs FF "sworn/v1 receipt" 00 || leaf; an http-message receipt (form 1,
 * section 13) signs sworn's RFC 9421 base of the entry's request and leaf, its signature r||s; a
 * batch receipt (form 2 or 3, section 14) signs its group's root, reached from its item (the leaf
 * or SHA-256 of that base) by its path. 0 = verified.
 */
static int receipt_verifies(EVP_PKEY *k, const uint8_t leaf[32], const Sworn__V1__Receipt *r,
                            const Sworn__V1__DecisionRecord *d)
{
    static const char prefix[] = "\xffsworn/v1 receipt";
    static uint8_t base[SWORN_SIGBASE_MAX];
    uint8_t tbs[sizeof(prefix) + 32], der[80];
    const uint8_t *msg = tbs, *sig = r->signature.data;
    size_t msg_len = sizeof(tbs), sig_len = r->signature.len;
    EVP_MD_CTX *ctx;
    int ok;

    static const char batch_prefix[] = "\xffsworn/v1 batch";
    uint8_t batch_tbs[sizeof(batch_prefix) + 4 + 32], item[32];

    memcpy(tbs, prefix, sizeof(prefix)); /* with the NUL that ends the prefix */
    memcpy(tbs + sizeof(prefix), leaf, 32);
    if (r->form == 1 || r->form == 3) {
        char keyid[65], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
        size_t plen;
        const char *why = NULL;
        const Sworn__V1__Context *c = d->request->context;
        struct sworn_httpsig_request h = {c->method,
                                          d->canonical_resource->scheme,
                                          d->canonical_resource->host,
                                          d->canonical_resource->port,
                                          d->canonical_resource->path,
                                          c->body_sha256.len == 32 ? c->body_sha256.data : NULL,
                                          leaf};

        for (int i = 0; i < 32; i++)
            snprintf(keyid + 2 * i, 3, "%02x", r->key_id.data[i]);
        if (r->signature.len != 64 || r->created != d->time_unix_ms / 1000 ||
            sworn_httpsig_base(&h, (int64_t)r->created, keyid, base, sizeof(base), &msg_len, params,
                               sizeof(params), &plen, &why) != 0 ||
            strcmp(params, r->signature_params) != 0 ||
            sworn_ecdsa_rs_to_der(r->signature.data, 32, r->signature.data + 32, 32, der,
                                  sizeof(der), &sig_len) != 0)
            return -1;
        msg = base;
        sig = der;
    }
    if (r->form == 2 || r->form == 3) {
        /* A batch receipt: the item's place in its group's tree gives the root that the one
         * signature of the group covers, with the group's size (section 14); the item is the
         * leaf hash (form 2) or SHA-256 of the base just built (form 3). */
        uint8_t item_leaf[32], *root = batch_tbs + sizeof(batch_prefix) + 4;
        char why[256];

        if (r->form == 3)
            SHA256(base, msg_len, item);
        else
            memcpy(item, leaf, 32);
        sworn_merkle_leaf_hash(item, 32, item_leaf);
        if (r->batch_path.len % 32 != 0 ||
            sv_inclusion_root(r->batch_index, r->batch_size, item_leaf,
                              (const uint8_t(*)[32])r->batch_path.data, r->batch_path.len / 32,
                              root, why) < 0)
            return -1;
        memcpy(batch_tbs, batch_prefix, sizeof(batch_prefix));
        batch_tbs[sizeof(batch_prefix)] = (uint8_t)(r->batch_size >> 24);
        batch_tbs[sizeof(batch_prefix) + 1] = (uint8_t)(r->batch_size >> 16);
        batch_tbs[sizeof(batch_prefix) + 2] = (uint8_t)(r->batch_size >> 8);
        batch_tbs[sizeof(batch_prefix) + 3] = (uint8_t)r->batch_size;
        msg = batch_tbs;
        msg_len = sizeof(batch_tbs);
    }
    ctx = EVP_MD_CTX_new();
    ok = ctx != NULL && EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, k) == 1 &&
         EVP_DigestVerify(ctx, sig, sig_len, msg, msg_len) == 1;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

/* --- the record, checked with the daemon stopped -------------------------------------------- */

struct cp_list {
    size_t n;
    uint64_t size[4096];
    uint8_t root[4096][32];
    int bad;
    char why[256];
};

static int collect_checkpoint(void *arg, uint64_t size, const char *text, size_t len)
{
    struct cp_list *l = arg;
    struct sworn_note *note = malloc(sizeof(*note));
    struct sworn_checkpoint cp;

    if (note == NULL || sworn_note_parse(text, len, note) < 0 ||
        sworn_checkpoint_parse(note->text, note->text_len, &cp) < 0) {
        l->bad = 1;
        snprintf(l->why, sizeof(l->why), "checkpoint %llu does not parse: %s",
                 (unsigned long long)size, sworn_err_msg());
    } else if (cp.size != size) {
        l->bad = 1;
        snprintf(l->why, sizeof(l->why), "checkpoint stored as %llu names size %llu",
                 (unsigned long long)size, (unsigned long long)cp.size);
    } else if (l->n < sizeof(l->size) / sizeof(l->size[0])) {
        l->size[l->n] = size;
        memcpy(l->root[l->n], cp.root, 32);
        l->n++;
    }
    free(note);
    return 0;
}

/*
 * Every stored checkpoint: its root equals the root recomputed from the stored entries (all
 * leaves hashed again, the tiles not trusted), and it is consistent with the newest one by the
 * log's own proof.
 */
static void check_checkpoints(struct sworn_log *log, size_t *count)
{
    uint64_t n = sworn_log_size(log);
    uint8_t *leaves = malloc((size_t)(n ? n : 1) * 32), *entry = malloc(SWORN_FRAME_ENTRY_MAX);
    struct cp_list *l = calloc(1, sizeof(*l));
    uint8_t root[32], proof[SWORN_MERKLE_MAX_PROOF * 32];

    assert_non_null(leaves);
    assert_non_null(entry);
    assert_non_null(l);
    assert_int_equal(sworn_log_tree_size(log), n);
    for (uint64_t i = 0; i < n; i++) {
        size_t len;

        assert_int_equal(sworn_log_read_entry(log, i, entry, SWORN_FRAME_ENTRY_MAX, &len), 0);
        sworn_merkle_leaf_hash(entry, len, leaves + i * 32);
    }
    assert_int_equal(sworn_log_each_checkpoint(log, collect_checkpoint, l), 0);
    if (l->bad)
        fail_msg("%s", l->why);
    assert_true(l->n >= 1);
    for (size_t c = 0; c < l->n; c++) {
        size_t pc = 0;

        if (l->size[c] > n)
            fail_msg("checkpoint of size %llu, but the log holds %llu entries",
                     (unsigned long long)l->size[c], (unsigned long long)n);
        sworn_merkle_root_of_leaves(leaves, l->size[c], root);
        if (memcmp(root, l->root[c], 32) != 0)
            fail_msg("checkpoint %llu: its root is not the root of the stored entries",
                     (unsigned long long)l->size[c]);
        if (l->size[c] == 0 || l->size[c] == l->size[l->n - 1])
            continue;
        assert_int_equal(sworn_log_prove_consistency(log, l->size[c], l->size[l->n - 1], proof,
                                                     SWORN_MERKLE_MAX_PROOF, &pc),
                         0);
        if (sworn_merkle_verify_consistency(l->size[c], l->size[l->n - 1], l->root[c],
                                            l->root[l->n - 1], proof, pc) != 0)
            fail_msg("checkpoint %llu is not consistent with checkpoint %llu: %s",
                     (unsigned long long)l->size[c], (unsigned long long)l->size[l->n - 1],
                     sworn_err_msg());
    }
    if (count != NULL)
        *count = l->n;
    free(l);
    free(entry);
    free(leaves);
}

static void check_tiles(struct sworn_stack *s, struct acks *a);

/*
 * With the daemon stopped: every acknowledged decision is in the log at its index, with its leaf
 * hash, request id and effect; every acknowledged allow has its receipt stored beside it, equal to
 * the one answered, verifying with the signer's key; the checkpoints hold (check_checkpoints); the
 * exported tiles folder holds them too (check_tiles).
 */
static void check_log(struct sworn_stack *s, struct acks *a)
{
    struct sworn_log *log;
    EVP_PKEY *k = stack_pubkey(s);
    uint8_t *entry = malloc(SWORN_FRAME_ENTRY_MAX), rbuf[SWORN_LOG_RECEIPT_MAX], leaf[32];

    assert_non_null(entry);
    assert_no_violation(a);
    if (sworn_log_open(s->log_db, &log) != 0)
        fail_msg("the log does not open: %s", sworn_err_msg());
    for (size_t i = 0; i < a->n; i++) {
        const struct ack *x = &a->v[i];
        size_t len, rlen;
        Sworn__V1__Entry *e;

        if (x->index >= sworn_log_size(log))
            fail_msg("%s was acknowledged at index %llu, but the log holds %llu entries", x->id,
                     (unsigned long long)x->index, (unsigned long long)sworn_log_size(log));
        assert_int_equal(sworn_log_read_entry(log, x->index, entry, SWORN_FRAME_ENTRY_MAX, &len),
                         0);
        sworn_merkle_leaf_hash(entry, len, leaf);
        if (memcmp(leaf, x->hash, 32) != 0)
            fail_msg("%s: the entry at index %llu is not the one acknowledged", x->id,
                     (unsigned long long)x->index);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        assert_int_equal(e->kind_case, SWORN__V1__ENTRY__KIND_DECISION);
        assert_string_equal(e->decision->request->request_id, x->id);
        assert_int_equal(e->decision->effect, x->allow ? ALLOW : DENY);
        if (x->allow) {
            Sworn__V1__Receipt *r;

            assert_int_equal(sworn_log_read_receipt(log, x->index, rbuf, sizeof(rbuf), &rlen), 0);
            r = sworn__v1__receipt__unpack(NULL, rlen, rbuf);
            assert_non_null(r);
            assert_int_equal(r->signature.len, x->sig_len);
            assert_memory_equal(r->signature.data, x->sig, x->sig_len);
            if (receipt_verifies(k, leaf, r, e->decision) != 0)
                fail_msg("%s: its receipt does not verify with the signer's key", x->id);
            sworn__v1__receipt__free_unpacked(r, NULL);
        }
        sworn__v1__entry__free_unpacked(e, NULL);
        if (!x->allow) {
            assert_int_equal(sworn_log_read_receipt(log, x->index, rbuf, sizeof(rbuf), &rlen), -1);
        }
    }
    check_checkpoints(log, NULL);
    sworn_log_close(log);
    EVP_PKEY_free(k);
    free(entry);
    /* The export caught up with the log after the fault: the folder reads back whole. */
    check_tiles(s, a);
}

/*
 * With the daemon stopped: the exported tiles folder (what auditors fetch) reads back, verified
 * against the signer's key, as the whole log, and holds every acknowledged decision.
 */
static void check_tiles(struct sworn_stack *s, struct acks *a)
{
    EVP_PKEY *k = stack_pubkey(s);
    unsigned char *spki = NULL;
    int spki_len = i2d_PUBKEY(k, &spki);
    char *db = sworn_test_path(s->dir, "imported.db");
    uint8_t *entry = malloc(SWORN_FRAME_ENTRY_MAX), leaf[32];
    struct sworn_note_verifier v;
    struct sworn_log *log, *pub;

    assert_non_null(entry);
    assert_true(spki_len > 0);
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    assert_int_equal(
        sworn_note_verifier_from_spki(sworn_log_origin(log), spki, (size_t)spki_len, &v), 0);
    if (sworn_tiledir_import(s->tiles, &v, 1, db, &pub) != 0)
        fail_msg("the exported tiles do not read back: %s", sworn_err_msg());
    assert_int_equal(sworn_log_size(pub), sworn_log_size(log));
    for (size_t i = 0; i < a->n; i++) {
        size_t len;

        assert_int_equal(
            sworn_log_read_entry(pub, a->v[i].index, entry, SWORN_FRAME_ENTRY_MAX, &len), 0);
        sworn_merkle_leaf_hash(entry, len, leaf);
        if (memcmp(leaf, a->v[i].hash, 32) != 0)
            fail_msg("%s: the exported entry %llu is not the one acknowledged", a->v[i].id,
                     (unsigned long long)a->v[i].index);
    }
    sworn_log_close(pub);
    sworn_log_close(log);
    free(entry);
    free(db);
    OPENSSL_free(spki);
    EVP_PKEY_free(k);
}

/* With the daemon stopped: whether a decision for request id is anywhere in the log. */
static int log_has_request(struct sworn_stack *s, const char *id)
{
    struct sworn_log *log;
    uint8_t *entry = malloc(SWORN_FRAME_ENTRY_MAX);
    int found = 0;

    assert_non_null(entry);
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    for (uint64_t i = 0; i < sworn_log_size(log) && !found; i++) {
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, i, entry, SWORN_FRAME_ENTRY_MAX, &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        found = e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
                strcmp(e->decision->request->request_id, id) == 0;
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    free(entry);
    return found;
}

/* --- the admin socket ---------------------------------------------------------------------- */

/*
 * The stack of the running test: at file scope, so that the teardown takes it down also when the
 * test failed half-way (cmocka leaves the test function by longjmp).
 */
static struct sworn_stack the_stack;

static int stack_teardown(void **state)
{
    (void)state;
    unsetenv("SWORN_HANG_FILE");
    /* Nothing when the test took it down itself; otherwise a sanitizer report fails it. */
    return sworn_stack_down(&the_stack);
}

/* --- processes ----------------------------------------------------------------------------- */

static void wait_pid_gone(pid_t pid)
{
    for (int i = 0; i < 500; i++) {
        if (sworn_stack_pid_gone(pid))
            return;
        sworn_test_sleep_ms(20);
    }
    fail_msg("process %ld did not go away", (long)pid);
}

/* Wait until the daemon has a signer child (it is started lazily after a death); -1 if never. */
static pid_t wait_signer_child(pid_t daemon)
{
    for (int i = 0; i < 250; i++) {
        pid_t c = sworn_stack_signer_child(daemon);

        if (c > 0 && !sworn_stack_pid_gone(c))
            return c;
        sworn_test_sleep_ms(20);
    }
    return -1;
}

/*
 * Stop the daemon, point the stack's signer at the PKCS#11 hang shim (tests/pkcs11-hang: SoftHSM,
 * except that C_Sign blocks while the file SWORN_HANG_FILE names exists) with the given signer
 * deadline, and start it again. The shim reads SWORN_HANG_FILE in the signer child, which
 * inherits it from this process through dev-stack and the daemon.
 */
static void use_hang_module(struct sworn_stack *s, const char *flag, const char *timeout)
{
    const char *shim = getenv("SWORN_HANG_MODULE");
    static const char real[] = "  module: /usr/lib/softhsm/libsofthsm2.so\n";
    char *conf, *at, *out;
    size_t len;

    assert_non_null(shim);
    assert_int_equal(sworn_stack_stop_daemon(s), 0);
    conf = sworn_test_read_file(s->config, &len);
    at = strstr(conf, real);
    assert_non_null(at);
    assert_true(asprintf(&out, "%.*s  module: %s\n  timeout: %s\n%s", (int)(at - conf), conf, shim,
                         timeout, at + strlen(real)) > 0);
    sworn_test_write_file(s->config, out, strlen(out), 0600);
    free(out);
    free(conf);
    setenv("SWORN_HANG_FILE", flag, 1);
    assert_int_equal(sworn_stack_start(s), 0);
}

/* --- 1. the signer child killed ------------------------------------------------------------ */

/* Wait until n more allows than now are acknowledged (by the running load); fails after ms. */
static void wait_allows(struct acks *a, unsigned n, int ms)
{
    unsigned from, now;

    pthread_mutex_lock(&a->lock);
    from = a->allows;
    pthread_mutex_unlock(&a->lock);
    for (int waited = 0;; waited += 20) {
        pthread_mutex_lock(&a->lock);
        now = a->allows;
        pthread_mutex_unlock(&a->lock);
        if (now - from >= n)
            return;
        if (waited >= ms)
            fail_msg("only %u allows in %d ms under load after the kills", now - from, ms);
        sworn_test_sleep_ms(20);
    }
}

struct load {
    struct sworn_stack *s;
    struct acks *a;
    const char *tag;
    int thread;
    atomic_int stop;     /* set by the test, read by the thread (volatile is not enough: TSan) */
    int stop_on_silence; /* stop at the first request without an answer (the daemon died) */
    unsigned sent;
};

/* A client thread: allows and denies, one connection each, until told to stop. */
static void *load_thread(void *arg)
{
    struct load *l = arg;
    char id[64];

    while (!atomic_load(&l->stop)) {
        enum outcome o;

        snprintf(id, sizeof(id), "%s-%d-%u", l->tag, l->thread, l->sent);
        o = ask(l->s, l->a, id, l->sent % 3 == 2 ? "/denied/x" : "/allowed/x", NULL, 0);
        l->sent++;
        if (o == OUT_NONE && l->stop_on_silence)
            break;
    }
    return NULL;
}

struct one_request {
    struct sworn_stack *s;
    struct acks *a;
    const char *id, *path;
    enum outcome o;
    char reason[1100];
};

static void *one_request_thread(void *arg)
{
    struct one_request *r = arg;

    r->o = ask(r->s, r->a, r->id, r->path, r->reason, sizeof(r->reason));
    return NULL;
}

/*
 * The signer child is SIGKILLed, repeatedly, under load: every answer is an allow with a receipt,
 * a recorded deny or an ErrorFrame. Then once with a request certainly in flight (C_Sign held by
 * the shim): that request is a recorded deny naming the signer. Allows come back, with receipts
 * from a new child that verify.
 */
static void signer_child_killed(const char *options);

static void test_signer_child_killed(void **state)
{
    (void)state;
    signer_child_killed("--no-tpm --checkpoint-interval 200ms");
}

/* The same with `receipts: batch`: a signature that fails turns every allow of its group into
 * a recorded deny naming the signer (docs/formats.md section 14). */
static void test_signer_child_killed_batch(void **state)
{
    (void)state;
    signer_child_killed("--no-tpm --checkpoint-interval 200ms --receipts batch");
}

static void signer_child_killed(const char *options)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    struct load loads[2];
    pthread_t th[2];
    pid_t killed = -1, now;
    char *flag, *entered;
    struct one_request inflight;
    pthread_t ith;

    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, options), 0);
    flag = sworn_test_path(sp->dir, "hang");
    /* A deadline well above the test's pauses: the in-flight request is ended by the kill. */
    use_hang_module(sp, flag, "3s");

    for (int t = 0; t < 2; t++) {
        loads[t] = (struct load){.s = sp, .a = &a, .tag = "load", .thread = t};
        assert_int_equal(pthread_create(&th[t], NULL, load_thread, &loads[t]), 0);
    }
    for (int k = 0; k < 5; k++) {
        sworn_test_sleep_ms(150 + 70 * k); /* not a wait: the moments of the kills vary */
        killed = wait_signer_child(sp->decisiond_pid);
        assert_true(killed > 0);
        assert_int_equal(kill(killed, SIGKILL), 0);
    }
    /* The load goes on until a new child has signed allows again. */
    wait_allows(&a, 3, 30000);
    for (int t = 0; t < 2; t++) {
        atomic_store(&loads[t].stop, 1);
        pthread_join(th[t], NULL);
    }
    assert_no_violation(&a);
    assert_int_equal(a.unanswered, 0);

    /* A request whose signature is certainly in flight when the child dies: the shim says when
     * a C_Sign blocks (flag.entered). */
    entered = sworn_test_path(sp->dir, "hang.entered");
    (void)remove(entered);
    sworn_test_write_file(flag, "", 0, 0600);
    inflight = (struct one_request){.s = sp, .a = &a, .id = "inflight", .path = "/allowed/f"};
    assert_int_equal(pthread_create(&ith, NULL, one_request_thread, &inflight), 0);
    for (int i = 0; i < 1500 && access(entered, F_OK) != 0; i++)
        sworn_test_sleep_ms(20);
    if (access(entered, F_OK) != 0)
        fail_msg("no signature blocked in the shim within 30 s");
    free(entered);
    killed = wait_signer_child(sp->decisiond_pid);
    assert_true(killed > 0);
    assert_int_equal(kill(killed, SIGKILL), 0);
    pthread_join(ith, NULL);
    assert_int_equal(remove(flag), 0);
    /* Killed in C_Sign (its own signature, or a checkpoint's that it queued behind), or its
     * successor stalled in C_Sign until the deadline: either way the allow did not happen, and
     * the deny is recorded. */
    if (inflight.o != OUT_DENY)
        fail_msg("the request in flight was answered %d (%s), not a recorded deny", inflight.o,
                 inflight.reason);
    assert_non_null(strstr(inflight.reason, "signer"));

    /* A new child signs again. */
    expect_recovery(sp, &a, "recovered", 50);
    now = wait_signer_child(sp->decisiond_pid);
    assert_true(now > 0);
    assert_int_not_equal(now, killed);
    assert_true(sworn_stack_metric(sp, "sworn_signer_up") == 1.0);
    assert_no_violation(&a);
    assert_true(a.allows > 0);

    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    unsetenv("SWORN_HANG_FILE");
    free(flag);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/* --- 2. the HSM fails ---------------------------------------------------------------------- */

/*
 * The HSM stops answering (C_Sign blocks): every allow becomes a recorded deny naming the signer
 * within the signer deadline, denies go on as before, sworn_signer_up drops to 0; when the device
 * answers again, allows come back with receipts and sworn_signer_up is 1.
 */
static void hsm_stalls(const char *options);

static void test_hsm_stalls(void **state)
{
    (void)state;
    hsm_stalls("--no-tpm");
}

/* The same with `receipts: batch`: the group's one signature stalls past the deadline, and every
 * allow of the group is a recorded deny naming the signer. */
static void test_hsm_stalls_batch(void **state)
{
    (void)state;
    hsm_stalls("--no-tpm --receipts batch");
}

static void hsm_stalls(const char *options)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    char *flag, reason[1100], id[32];

    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, options), 0);
    flag = sworn_test_path(sp->dir, "hang");
    use_hang_module(sp, flag, "500ms");
    assert_int_equal(ask(sp, &a, "before", "/allowed/a", NULL, 0), OUT_ALLOW);

    sworn_test_write_file(flag, "", 0, 0600);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "stalled-%d", i);
        assert_int_equal(ask(sp, &a, id, "/allowed/a", reason, sizeof(reason)), OUT_DENY);
        if (strstr(reason, "signer") == NULL)
            fail_msg("the deny does not name the signer: %s", reason);
    }
    assert_int_equal(ask(sp, &a, "stalled-deny", "/denied/a", NULL, 0), OUT_DENY);
    assert_true(sworn_stack_metric(sp, "sworn_signer_up") == 0.0);

    assert_int_equal(remove(flag), 0);
    expect_recovery(sp, &a, "recovered", 50);
    assert_true(sworn_stack_metric(sp, "sworn_signer_up") == 1.0);

    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    unsetenv("SWORN_HANG_FILE");
    free(flag);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/*
 * The token goes away (its folder is moved) and the session with it (the signer child is killed,
 * as a device reset would end it): a new child cannot open the key, so allows are recorded denies
 * naming the signer (through the restart backoff); when the folder is back, allows come back.
 */
static void test_hsm_token_gone(void **state)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    char *tokens, *away, reason[1100], id[32];
    pid_t child;

    (void)state;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, "--no-tpm"), 0);
    assert_int_equal(ask(sp, &a, "before", "/allowed/a", NULL, 0), OUT_ALLOW);
    tokens = sworn_test_path(sp->dir, "token/tokens");
    away = sworn_test_path(sp->dir, "token/tokens.away");

    assert_int_equal(rename(tokens, away), 0);
    child = wait_signer_child(sp->decisiond_pid);
    assert_true(child > 0);
    assert_int_equal(kill(child, SIGKILL), 0);
    wait_pid_gone(child);
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof(id), "gone-%d", i);
        assert_int_equal(ask(sp, &a, id, "/allowed/a", reason, sizeof(reason)), OUT_DENY);
        if (strstr(reason, "signer") == NULL)
            fail_msg("the deny does not name the signer: %s", reason);
        sworn_test_sleep_ms(100);
    }
    assert_true(sworn_stack_metric(sp, "sworn_signer_up") == 0.0);

    assert_int_equal(rename(away, tokens), 0);
    expect_recovery(sp, &a, "recovered", 100); /* the backoff is at most 5 s */
    assert_true(sworn_stack_metric(sp, "sworn_signer_up") == 1.0);

    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    free(tokens);
    free(away);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/* --- 3. the TPM stops ---------------------------------------------------------------------- */

/* swtpm again, on the same state folder and ports as dev-stack started it. */
static void restart_swtpm(struct sworn_stack *s)
{
    const char *p = strstr(s->tcti, "port=");
    char *pidfile = sworn_test_path(s->dir, "swtpm.pid"), *pid;
    int port, rc = -1;

    assert_non_null(p);
    port = atoi(p + 5);
    assert_true(port > 0);
    for (int i = 0; i < 20 && rc != 0; i++) {
        (void)remove(pidfile);
        rc = sworn_stack_sh(s,
                            "swtpm socket --tpm2 --tpmstate dir=\"$PWD/tpm\" "
                            "--server type=tcp,port=%d,bindaddr=127.0.0.1 "
                            "--ctrl type=tcp,port=%d,bindaddr=127.0.0.1 "
                            "--flags not-need-init,startup-clear --pid file=\"$PWD/swtpm.pid\" "
                            "--log file=\"$PWD/swtpm.log\" --daemon",
                            port, port + 1);
        if (rc != 0)
            sworn_test_sleep_ms(250); /* the port may still be held by the old process's socket */
    }
    assert_int_equal(rc, 0);
    for (int i = 0; i < 100; i++) {
        pid = sworn_test_read_file_opt(pidfile, NULL);
        if (pid != NULL && atol(pid) > 0)
            break;
        free(pid);
        pid = NULL;
        sworn_test_sleep_ms(50);
    }
    assert_non_null(pid);
    s->swtpm_pid = (pid_t)atol(pid);
    assert_true(s->swtpm_pid > 0);
    free(pid);
    free(pidfile);
}

struct quote_sizes {
    size_t n;
    uint64_t size[4096];
};

static int collect_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                         const uint8_t *sig, size_t sig_len)
{
    struct quote_sizes *q = arg;

    (void)attest;
    (void)attest_len;
    (void)sig;
    (void)sig_len;
    if (q->n < sizeof(q->size) / sizeof(q->size[0]))
        q->size[q->n++] = size;
    return 0;
}

static int collect_size(void *arg, uint64_t size, const char *note, size_t len)
{
    struct quote_sizes *q = arg;

    (void)note;
    (void)len;
    if (q->n < sizeof(q->size) / sizeof(q->size[0]))
        q->size[q->n++] = size;
    return 0;
}

/* With the daemon stopped: the Startup entries without PCR 23 (starts the TPM did not measure). */
static int unmeasured_starts(struct sworn_stack *s)
{
    struct sworn_log *log;
    uint8_t *entry = malloc(SWORN_FRAME_ENTRY_MAX);
    int starts = 0, unmeasured = 0;

    assert_non_null(entry);
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, i, entry, SWORN_FRAME_ENTRY_MAX, &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP) {
            starts++;
            if (e->startup->pcr23.len == 0)
                unmeasured++;
            else
                assert_int_equal(e->startup->pcr23.len, 32);
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_log_close(log);
    free(entry);
    assert_true(starts >= 2);
    return unmeasured;
}

/* Grow the log (a deny) and ask for a checkpoint. */
static void tick(struct sworn_stack *s, struct acks *a, const char *tag, int i)
{
    char id[48];

    snprintf(id, sizeof(id), "%s-%d", tag, i);
    assert_int_equal(ask(s, a, id, "/denied/tick", NULL, 0), OUT_DENY);
    sworn_stack_checkpoint_now(s);
}

/*
 * swtpm is killed: checkpoints go on, unquoted (sworn_checkpoints_unquoted_total grows with
 * sworn_checkpoints_total, sworn_quotes_total stands still, sworn_tpm_up is 0, and the stored
 * checkpoints of the outage have no quote); with tpm.required every allow is a recorded deny
 * naming the TPM, otherwise allows go on. swtpm comes back on the same state and ports: quotes
 * resume, and with tpm.required allows come back.
 */
static void tpm_outage(int required)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    double q0, u0, c0, c1;
    char reason[1100], id[32], *text;
    int i;
    struct sworn_log *log;
    struct quote_sizes *quotes = calloc(1, sizeof(*quotes)), *cps = calloc(1, sizeof(*cps));
    uint64_t outage_from, outage_to;
    int unquoted_in_outage = 0;

    assert_non_null(quotes);
    assert_non_null(cps);
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, required ? "--tpm-required --test-clock" : "--test-clock"),
                     0);
    assert_true(sp->swtpm_pid > 0);
    assert_int_equal(ask(sp, &a, "before", "/allowed/a", NULL, 0), OUT_ALLOW);
    assert_true(sworn_stack_metric(sp, "sworn_quotes_total") >= 1.0); /* the start's checkpoint */
    assert_true(sworn_stack_metric(sp, "sworn_tpm_up") == 1.0);

    assert_int_equal(kill(sp->swtpm_pid, SIGKILL), 0);
    wait_pid_gone(sp->swtpm_pid);
    /* The checkpoint thread finds out at its next quote. */
    for (i = 0; i < 60 && sworn_stack_metric(sp, "sworn_tpm_up") != 0.0; i++) {
        sworn_stack_clock_advance(sp, 1100); /* past tpm.quote_min_interval: it quotes */
        tick(sp, &a, "notice", i);
    }
    assert_true(sworn_stack_metric(sp, "sworn_tpm_up") == 0.0);
    text = sworn_stack_scrape(sp);
    q0 = sworn_stack_metric_in(text, "sworn_quotes_total");
    u0 = sworn_stack_metric_in(text, "sworn_checkpoints_unquoted_total");
    c0 = sworn_stack_metric_in(text, "sworn_checkpoints_total");
    outage_from = (uint64_t)sworn_stack_metric_in(text, "sworn_log_entries");
    free(text);
    for (i = 0; i < 3; i++) {
        enum outcome o;

        snprintf(id, sizeof(id), "during-%d", i);
        o = ask(sp, &a, id, "/allowed/a", reason, sizeof(reason));
        if (required) {
            assert_int_equal(o, OUT_DENY);
            if (strstr(reason, "TPM") == NULL)
                fail_msg("the deny does not name the TPM: %s", reason);
        } else {
            assert_int_equal(o, OUT_ALLOW);
        }
        /* Past tpm.quote_min_interval (1 s): every checkpoint tries to quote. */
        sworn_stack_clock_advance(sp, 1100);
        sworn_stack_checkpoint_now(sp);
    }
    for (i = 0; i < 50 && sworn_stack_metric(sp, "sworn_checkpoints_total") < c0 + 2; i++)
        sworn_test_sleep_ms(100);
    text = sworn_stack_scrape(sp);
    c1 = sworn_stack_metric_in(text, "sworn_checkpoints_total");
    assert_true(c1 >= c0 + 2);
    /* Every checkpoint of the outage is unquoted, and none was quoted. */
    assert_true(sworn_stack_metric_in(text, "sworn_quotes_total") == q0);
    assert_true(sworn_stack_metric_in(text, "sworn_checkpoints_unquoted_total") - u0 == c1 - c0);
    outage_to = (uint64_t)sworn_stack_metric_in(text, "sworn_checkpoint_size");
    free(text);

    /* A restart while the TPM is away: with tpm.required the daemon refuses to start; without,
     * it starts unmeasured (its Startup entry has no PCR 23) and serves. */
    sworn_stack_kill_daemon(sp);
    if (required) {
        assert_int_equal(sworn_stack_sh(sp, "\"$DECISIOND_BIN\" --config "
                                            "\"$CONFIG\" </dev/null >/dev/null 2>start.err"),
                         1);
        assert_int_equal(sworn_stack_sh(sp, "grep -q 'tpm.required' start.err"), 0);
    } else {
        assert_int_equal(sworn_stack_start(sp), 0);
        assert_int_equal(ask(sp, &a, "restarted", "/allowed/a", NULL, 0), OUT_ALLOW);
    }

    restart_swtpm(sp);
    if (required)
        assert_int_equal(sworn_stack_start(sp), 0);
    for (i = 0; i < 60; i++) {
        tick(sp, &a, "back", i);
        sworn_test_sleep_ms(300);
        if (sworn_stack_metric(sp, "sworn_quotes_total") > q0 &&
            sworn_stack_metric(sp, "sworn_tpm_up") == 1.0)
            break;
    }
    assert_true(sworn_stack_metric(sp, "sworn_quotes_total") > q0);
    assert_true(sworn_stack_metric(sp, "sworn_tpm_up") == 1.0);
    assert_int_equal(ask(sp, &a, "after", "/allowed/a", NULL, 0), OUT_ALLOW);

    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    /* The checkpoints of the outage are stored, without quotes. */
    assert_int_equal(sworn_log_open(sp->log_db, &log), 0);
    assert_int_equal(sworn_log_each_quote(log, collect_quote, quotes), 0);
    assert_int_equal(sworn_log_each_checkpoint(log, collect_size, cps), 0);
    sworn_log_close(log);
    for (size_t c = 0; c < cps->n; c++) {
        int quoted = 0;

        if (cps->size[c] <= outage_from || cps->size[c] > outage_to)
            continue;
        for (size_t q = 0; q < quotes->n; q++)
            quoted |= quotes->size[q] == cps->size[c];
        assert_false(quoted);
        unquoted_in_outage++;
    }
    assert_true(unquoted_in_outage >= 2);
    /* Measured starts: every one but the start during the outage (none with tpm.required). */
    assert_int_equal(unmeasured_starts(sp), required ? 0 : 1);
    free(quotes);
    free(cps);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

static void test_tpm_stopped(void **state)
{
    (void)state;
    tpm_outage(0);
}

static void test_tpm_stopped_required(void **state)
{
    (void)state;
    tpm_outage(1);
}

/* --- 4. log writes fail -------------------------------------------------------------------- */

/*
 * The daemon may not write a byte to any file (RLIMIT_FSIZE 0, set on the running engine with
 * prlimit): every request, allow or deny, is answered with an ErrorFrame (the proxy denies), none
 * is acknowledged, none is in the log afterwards; the daemon stays up. Once the limit is lifted,
 * allows come back, and the log holds every acknowledged decision and consistent checkpoints.
 */
static void test_log_write_fails(void **state)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    struct rlimit old, none;
    char reason[1100], id[32];
    pid_t engine;
    uint64_t stored;

    (void)state;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --file-key --checkpoint-interval 200ms"), 0);
    assert_int_equal(ask(sp, &a, "before", "/allowed/a", NULL, 0), OUT_ALLOW);
    /* The engine writes the log (the monitor beside it writes nothing). */
    engine = sworn_stack_engine(sp->decisiond_pid);
    assert_true(engine > 0);
    stored = sworn_stack_checkpoint_now(sp); /* answered once stored: covers "before" */

    assert_int_equal(prlimit(engine, RLIMIT_FSIZE, NULL, &old), 0);
    none = old;
    none.rlim_cur = 0; /* the soft limit only: raising it back needs no privilege */
    assert_int_equal(prlimit(engine, RLIMIT_FSIZE, &none, NULL), 0);
    for (int i = 0; i < 6; i++) {
        enum outcome o;

        snprintf(id, sizeof(id), "full-%d", i);
        o = ask(sp, &a, id, i % 2 ? "/denied/a" : "/allowed/a", reason, sizeof(reason));
        if (o != OUT_ERROR)
            fail_msg("%s: answered %d (%s) while the log cannot be written", id, o, reason);
    }
    /* Nothing was appended, so the stored checkpoint still covers the whole log. */
    assert_int_equal(sworn_stack_checkpoint_now(sp), stored);
    assert_int_equal(kill(engine, 0), 0);
    assert_int_equal(kill(sp->decisiond_pid, 0), 0);
    assert_true(sworn_stack_metric(sp, "sworn_decision_errors_total") >= 6.0);

    assert_int_equal(prlimit(engine, RLIMIT_FSIZE, &old, NULL), 0);
    expect_recovery(sp, &a, "recovered", 20);
    assert_int_equal(ask(sp, &a, "after-deny", "/denied/a", NULL, 0), OUT_DENY);
    sworn_stack_checkpoint_now(sp);

    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    for (int i = 0; i < 6; i++) {
        snprintf(id, sizeof(id), "full-%d", i);
        assert_false(log_has_request(sp, id));
    }
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/* --- 5. the log database locked ------------------------------------------------------------ */

/*
 * Another process holds an exclusive lock on the log database (BEGIN EXCLUSIVE) for longer than
 * the log's busy timeout: requests sent meanwhile are answered while the lock is still held, so
 * they can only be ErrorFrames (a Decision would acknowledge what is not durable). After the
 * release, allows come back.
 */
static void test_log_locked(void **state)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    sqlite3 *db = NULL;
    static const char *ids[2] = {"locked-allow", "locked-deny"};
    static const char *paths[2] = {"/allowed/a", "/denied/a"};
    int fds[2];

    (void)state;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, "--no-tpm --file-key"), 0);
    assert_int_equal(ask(sp, &a, "before", "/allowed/a", NULL, 0), OUT_ALLOW);

    assert_int_equal(sqlite3_open_v2(sp->log_db, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(db, 30000);
    assert_int_equal(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    /* Both requests in flight together, then both answers read, the lock held throughout. */
    for (int i = 0; i < 2; i++) {
        struct sworn_stack_req r;
        uint8_t *frame;
        size_t len;

        sworn_stack_req_init(&r, ids[i], "agent-1", paths[i]);
        fds[i] = sworn_stack_connect(sp->decision);
        assert_true(fds[i] >= 0);
        assert_int_equal(sworn_frame_pack_authorize(&r.req, &frame, &len), 0);
        assert_int_equal(send(fds[i], frame, len, MSG_NOSIGNAL), (ssize_t)len);
        free(frame);
    }
    for (int i = 0; i < 2; i++) {
        uint8_t *body = NULL;
        size_t len = 0;
        Sworn__V1__DecisionReply *r = NULL;

        /* The log waits up to its busy timeout (10 s), perhaps twice (a checkpoint first). */
        if (sworn_stack_exchange(fds[i], NULL, 0, 90000, &body, &len) == 0)
            r = sworn_frame_unpack_reply(body, len);
        if (check_reply(&a, ids[i], r) != OUT_ERROR)
            fail_msg("%s was not answered with an error while the log was locked", ids[i]);
        if (r != NULL)
            sworn__v1__decision_reply__free_unpacked(r, NULL);
        free(body);
        close(fds[i]);
    }
    assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);

    expect_recovery(sp, &a, "recovered", 20);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    assert_false(log_has_request(sp, "locked-allow"));
    assert_false(log_has_request(sp, "locked-deny"));
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

/* --- 6. crashes under load ------------------------------------------------------------------ */

/* Start the daemon and SIGKILL it after ms milliseconds, ready or not (a crash during the
 * measured start, the first entries, the budget replay or the first checkpoint). */
static void crash_while_starting(struct sworn_stack *s, long ms)
{
    char *path = sworn_test_path(s->dir, "early.pid"), *pid = NULL;

    assert_int_equal(sworn_stack_sh(s, "{ setsid \"$DECISIOND_BIN\" --config "
                                       "\"$CONFIG\" </dev/null >/dev/null 2>>decisiond.log & }; "
                                       "echo $! > early.pid"),
                     0);
    sworn_test_sleep_ms(ms);
    pid = sworn_test_read_file(path, NULL);
    assert_true(atol(pid) > 0);
    (void)kill((pid_t)atol(pid), SIGKILL); /* it may have failed on its own: that is checked by
                                            * the next start, which must succeed */
    wait_pid_gone((pid_t)atol(pid));
    free(pid);
    free(path);
}

#define CRASH_ITERATIONS 20
#define CRASH_THREADS 3

/*
 * The seed of the running crash test: SWORN_CRASH_SEED when set (to repeat a run's choices of
 * kill moments), else a fresh one. crash_running stays set when the test leaves early (a failed
 * assertion), so the teardown prints the seed to repeat it with.
 */
static unsigned crash_seed;
static int crash_running;
static const char *crash_test = "test_crash_under_load"; /* the one running */

static unsigned pick_crash_seed(void)
{
    const char *s = getenv("SWORN_CRASH_SEED");

    if (s != NULL && *s != '\0')
        return (unsigned)strtoul(s, NULL, 10);
    return (unsigned)time(NULL) ^ (unsigned)getpid();
}

static int crash_teardown(void **state)
{
    if (crash_running)
        fprintf(stderr,
                "%s failed with seed %u: repeat with SWORN_CRASH_SEED=%u "
                "SWORN_TEST_FILTER=%s\n",
                crash_test, crash_seed, crash_seed, crash_test);
    crash_running = 0;
    return stack_teardown(state);
}

/*
 * Client threads send allows and denies without pause; the daemon is SIGKILLed at a random
 * moment, and started again, CRASH_ITERATIONS times (every fourth time it is also killed once
 * while it starts). Then every acknowledged decision must be in
 * the log at its index with its leaf hash (and every allow's receipt beside it), the tree must be
 * rebuilt from the stored entries, and every checkpoint must be consistent with the newest.
 * The kill moments come from the seed (printed; SWORN_CRASH_SEED repeats them), though the
 * daemon's progress at each moment still varies with the machine.
 */
static void crash_under_load(const char *options, int threads);

static void test_crash_under_load(void **state)
{
    (void)state;
    crash_test = "test_crash_under_load";
    crash_under_load("--no-tpm --checkpoint-interval 100ms", CRASH_THREADS);
}

/* The same with `receipts: batch`: allows share a signature per commit group; more clients, so
 * that groups hold several allows when the kill comes (docs/formats.md section 14). */
static void test_crash_under_load_batch(void **state)
{
    (void)state;
    crash_test = "test_crash_under_load_batch";
    crash_under_load("--no-tpm --checkpoint-interval 100ms --receipts batch", 2 * CRASH_THREADS);
}

static void crash_under_load(const char *options, int threads)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    unsigned seed = crash_seed = pick_crash_seed();
    char tag[CRASH_ITERATIONS][16];
    size_t checkpoints = 0;
    struct sworn_log *log;

    printf("%s: seed %u (SWORN_CRASH_SEED)\n", crash_test, seed);
    crash_running = 1;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, options), 0);
    for (int it = 0; it < CRASH_ITERATIONS; it++) {
        struct load loads[2 * CRASH_THREADS];
        pthread_t th[2 * CRASH_THREADS];

        assert_true(threads <= 2 * CRASH_THREADS);
        snprintf(tag[it], sizeof(tag[it]), "c%d", it);
        for (int t = 0; t < threads; t++) {
            loads[t] =
                (struct load){.s = sp, .a = &a, .tag = tag[it], .thread = t, .stop_on_silence = 1};
            assert_int_equal(pthread_create(&th[t], NULL, load_thread, &loads[t]), 0);
        }
        sworn_test_sleep_ms((long)(rand_r(&seed) % 600));
        sworn_stack_kill_daemon(sp);
        for (int t = 0; t < threads; t++) {
            atomic_store(&loads[t].stop, 1);
            pthread_join(th[t], NULL);
        }
        assert_no_violation(&a);
        if (it % 4 == 3)
            crash_while_starting(sp, (long)(rand_r(&seed) % 200));
        if (sworn_stack_start(sp) != 0)
            fail_msg("the daemon did not start again after crash %d", it);
    }
    assert_true(a.allows > 0);
    assert_true(a.denies > 0);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    check_log(sp, &a);
    /* No export met a tile that differs from what it would write (a fork in the published
     * folder) or failed otherwise, in any of the lives of the daemon; and the folder reads back. */
    assert_int_equal(sworn_stack_sh(sp, "! grep -q '\"event\":\"export_failed\"' decisiond.log"),
                     0);
    assert_int_equal(sworn_log_open(sp->log_db, &log), 0);
    check_checkpoints(log, &checkpoints);
    sworn_log_close(log);
    printf("%s: %d crashes, %zu decisions acknowledged (%u allows, %u denies, "
           "%u errors, %u unanswered), %zu checkpoints checked\n",
           crash_test, CRASH_ITERATIONS, a.n, a.allows, a.denies, a.errors, a.unanswered,
           checkpoints);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
    crash_running = 0;
}

/* --- 7. crashes with a TPM: the AK is not leaked ------------------------------------------- */

#define AK_HANDLE "0x8153574E" /* tpm.ak_handle's default (SWORN_TPM_AK_HANDLE_DEFAULT) */
#define TPM_CRASHES 20

/*
 * With the daemon running or not: the TPM holds no transient object and no session (loaded or
 * saved), as tpm2-tools, a client that shares no code with sworn, reports them. A running
 * daemon holds none either: its AK is persistent and quotes need no session.
 */
static void expect_tpm_clean(struct sworn_stack *s, const char *when)
{
    static const char *const kinds[] = {"handles-transient", "handles-loaded-session",
                                        "handles-saved-session"};

    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (sworn_stack_sh(s,
                           "out=$(tpm2_getcap -T \"$TCTI\" %s) || exit 2; "
                           "[ -z \"$out\" ] && exit 0; echo \"%s: tpm2_getcap %s: $out\" >&2; "
                           "exit 1",
                           kinds[i], when, kinds[i]) != 0)
            fail_msg("%s: the TPM holds %s that no one flushed (printed above)", when, kinds[i]);
}

/* The sizes of the stored checkpoints and quotes, and the index and PCR 23 of every start. */
struct tpm_record {
    struct quote_sizes quotes, checkpoints;
    uint64_t startup[64];
    uint8_t pcr23[64][32];
    size_t n_startup;
};

static void read_tpm_record(struct sworn_stack *s, struct tpm_record *r)
{
    struct sworn_log *log;
    uint8_t *entry = malloc(SWORN_FRAME_ENTRY_MAX);

    assert_non_null(entry);
    memset(r, 0, sizeof(*r));
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    assert_int_equal(sworn_log_each_quote(log, collect_quote, &r->quotes), 0);
    assert_int_equal(sworn_log_each_checkpoint(log, collect_size, &r->checkpoints), 0);
    for (uint64_t i = 0; i < sworn_log_size(log); i++) {
        size_t len;
        Sworn__V1__Entry *e;

        assert_int_equal(sworn_log_read_entry(log, i, entry, SWORN_FRAME_ENTRY_MAX, &len), 0);
        e = sworn_frame_unpack_entry(entry, len);
        assert_non_null(e);
        if (e->kind_case == SWORN__V1__ENTRY__KIND_STARTUP) {
            assert_true(r->n_startup < sizeof(r->startup) / sizeof(r->startup[0]));
            assert_int_equal(e->startup->pcr23.len, 32); /* every start here is measured */
            memcpy(r->pcr23[r->n_startup], e->startup->pcr23.data, 32);
            r->startup[r->n_startup++] = i;
        }
        sworn__v1__entry__free_unpacked(e, NULL);
    }
    sworn_stack_expect_final_checkpoint(log);
    sworn_log_close(log);
    free(entry);
}

static int has_quote(const struct tpm_record *r, uint64_t size)
{
    for (size_t q = 0; q < r->quotes.n; q++)
        if (r->quotes.size[q] == size)
            return 1;
    return 0;
}

/* Every stored quote, copied out of the log. */
struct stored_quote {
    uint64_t size;
    uint8_t *attest, *sig;
    size_t attest_len, sig_len;
};
struct stored_quotes {
    struct stored_quote v[1024];
    size_t n;
};

static int keep_quote(void *arg, uint64_t size, const uint8_t *attest, size_t attest_len,
                      const uint8_t *sig, size_t sig_len)
{
    struct stored_quotes *q = arg;
    struct stored_quote *x;

    if (q->n == sizeof(q->v) / sizeof(q->v[0]))
        return 0;
    x = &q->v[q->n++];
    x->size = size;
    x->attest = malloc(attest_len);
    x->sig = malloc(sig_len);
    if (x->attest == NULL || x->sig == NULL)
        return -1;
    memcpy(x->attest, attest, attest_len);
    memcpy(x->sig, sig, sig_len);
    x->attest_len = attest_len;
    x->sig_len = sig_len;
    return 0;
}

/*
 * With the daemon stopped: every stored quote, of every life of the daemon, verifies with the
 * auditor's checker (verifier/quote.c) under the one AK that tpm2-tools reads at tpm.ak_handle:
 * its signer, the checkpoint's hash as qualifying data, and PCR 23 as measured by the start it
 * was made in. Returns how many were checked.
 */
static size_t expect_quotes_by_the_ak(struct sworn_stack *s, const struct tpm_record *r)
{
    struct stored_quotes *q = calloc(1, sizeof(*q));
    char *pub_path = sworn_test_path(s->dir, "ak-at-handle.pub"), *pub, why[256], note[4096];
    size_t pub_len = 0, n;
    struct sworn_log *log;

    assert_non_null(q);
    assert_int_equal(sworn_stack_sh(s, "tpm2_readpublic -Q -T \"$TCTI\" -c " AK_HANDLE
                                       " -f tss -o ak-at-handle.pub"),
                     0);
    pub = sworn_test_read_file(pub_path, &pub_len);
    assert_int_equal(sworn_log_open(s->log_db, &log), 0);
    assert_int_equal(sworn_log_each_quote(log, keep_quote, q), 0);
    for (size_t i = 0; i < q->n; i++) {
        const struct stored_quote *x = &q->v[i];
        struct sv_quote_policy policy;
        struct sv_quote_result res;
        struct sworn_note parsed;
        uint8_t qual[32];
        size_t len, start = SIZE_MAX;
        enum sv_quote_reason why_not;

        for (size_t j = 0; j < r->n_startup; j++)
            if (r->startup[j] < x->size)
                start = j;
        assert_true(start != SIZE_MAX);
        memset(&policy, 0, sizeof(policy));
        policy.pcr_mask = 1u << 23;
        memcpy(policy.pcr_values[23], r->pcr23[start], 32);
        assert_int_equal(sworn_log_get_checkpoint(log, x->size, note, sizeof(note), &len, NULL), 0);
        assert_int_equal(sworn_note_parse(note, len, &parsed), 0);
        SHA256((const uint8_t *)parsed.text, parsed.text_len, qual);
        why_not = sv_quote_check(&policy, (const uint8_t *)pub, pub_len, x->attest, x->attest_len,
                                 x->sig, x->sig_len, qual, &res, why, sizeof(why));
        if (why_not != SV_QUOTE_OK)
            fail_msg("the quote of checkpoint %llu (start %zu) does not verify under the AK at "
                     "%s: %s (%s)",
                     (unsigned long long)x->size, start + 1, AK_HANDLE,
                     sv_quote_reason_name(why_not), why);
    }
    n = q->n;
    sworn_log_close(log);
    for (size_t i = 0; i < q->n; i++) {
        free(q->v[i].attest);
        free(q->v[i].sig);
    }
    free(q);
    free(pub);
    free(pub_path);
    return n;
}

/*
 * Every start's first checkpoint (the smallest one that covers its Startup entry: it is made
 * before the first request is read) has its quote stored, and so has the final checkpoint of the
 * orderly stop, which covers the whole log. Returns the number of starts.
 */
static size_t expect_every_start_quoted(struct sworn_stack *s)
{
    struct tpm_record *r = calloc(1, sizeof(*r));
    size_t starts;

    assert_non_null(r);
    read_tpm_record(s, r);
    assert_true(r->checkpoints.n >= 1);
    for (size_t i = 0; i < r->n_startup; i++) {
        uint64_t first = UINT64_MAX;

        for (size_t c = 0; c < r->checkpoints.n; c++)
            if (r->checkpoints.size[c] > r->startup[i] && r->checkpoints.size[c] < first)
                first = r->checkpoints.size[c];
        if (first == UINT64_MAX)
            fail_msg("start %zu (Startup entry %llu) has no checkpoint", i + 1,
                     (unsigned long long)r->startup[i]);
        if (!has_quote(r, first))
            fail_msg("start %zu of %zu (Startup entry %llu): its first checkpoint (size %llu) "
                     "is not quoted; %zu quotes for %zu checkpoints in all",
                     i + 1, r->n_startup, (unsigned long long)r->startup[i],
                     (unsigned long long)first, r->quotes.n, r->checkpoints.n);
    }
    /* The final checkpoint: the largest, equal to the log's size (read_tpm_record checked). */
    {
        uint64_t last = 0;

        for (size_t c = 0; c < r->checkpoints.n; c++)
            if (r->checkpoints.size[c] > last)
                last = r->checkpoints.size[c];
        if (!has_quote(r, last))
            fail_msg("the final checkpoint of the orderly stop (size %llu) is not quoted",
                     (unsigned long long)last);
    }
    printf("expect_every_start_quoted: %zu quotes verified under the AK at " AK_HANDLE "\n",
           expect_quotes_by_the_ak(s, r));
    starts = r->n_startup;
    free(r);
    return starts;
}

/* SIGKILL what a crash takes: the monitor (the engine follows by PR_SET_PDEATHSIG), the engine
 * alone (the monitor then exits), or both at once; and wait until both are gone. */
static void crash_stack(struct sworn_stack *s, int how)
{
    pid_t monitor = s->decisiond_pid, engine = sworn_stack_engine(monitor);

    assert_true(monitor > 0);
    assert_true(engine > 0);
    if (how != 0)
        assert_int_equal(kill(engine, SIGKILL), 0);
    if (how != 1)
        assert_int_equal(kill(monitor, SIGKILL), 0);
    wait_pid_gone(engine);
    wait_pid_gone(monitor);
}

/*
 * Issue 11, finding 14. The stack with swtpm (no resource manager in front of it) is crashed
 * TPM_CRASHES times under load, by SIGKILL to the monitor, the engine or both, each at a random
 * count of acknowledged decisions, and started again. Before the fix, each crash left its
 * transient AK in the TPM; after three, CreatePrimary failed with TPM_RC_OBJECT_MEMORY and no
 * checkpoint was quoted again, not even the final one. Now: every start's first checkpoint and
 * the final one are quoted, every stored quote verifies (verifier/quote.c) under the AK that
 * tpm2-tools reads at its persistent handle (and nothing else was persisted), and the TPM holds
 * no transient object or session, during the last life of the daemon and after its stop.
 */
static void test_crash_keeps_quoting(void **state)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    unsigned seed = crash_seed = pick_crash_seed();
    char tag[TPM_CRASHES][16];
    size_t starts;

    (void)state;
    printf("test_crash_keeps_quoting: seed %u (SWORN_CRASH_SEED)\n", seed);
    crash_test = "test_crash_keeps_quoting";
    crash_running = 1;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, "--checkpoint-interval 100ms"), 0);
    assert_true(sp->tcti[0] != '\0');
    /* The persistent handles before any crash: swtpm_setup's EKs and the AK the start made. */
    assert_int_equal(sworn_stack_sh(sp, "tpm2_getcap -T \"$TCTI\" handles-persistent > "
                                        "persistent.before"),
                     0);
    assert_int_equal(sworn_stack_sh(sp, "grep -qix -- '- " AK_HANDLE "' persistent.before"), 0);
    for (int it = 0; it < TPM_CRASHES; it++) {
        struct load loads[CRASH_THREADS];
        pthread_t th[CRASH_THREADS];

        snprintf(tag[it], sizeof(tag[it]), "t%d", it);
        for (int t = 0; t < CRASH_THREADS; t++) {
            loads[t] =
                (struct load){.s = sp, .a = &a, .tag = tag[it], .thread = t, .stop_on_silence = 1};
            assert_int_equal(pthread_create(&th[t], NULL, load_thread, &loads[t]), 0);
        }
        wait_allows(&a, 1 + rand_r(&seed) % 40, 20000);
        crash_stack(sp, it % 3);
        for (int t = 0; t < CRASH_THREADS; t++) {
            atomic_store(&loads[t].stop, 1);
            pthread_join(th[t], NULL);
        }
        assert_no_violation(&a);
        if (sworn_stack_start(sp) != 0)
            fail_msg("the daemon did not start again after crash %d", it);
    }
    /* The last life of the daemon, serving: it holds no transient object, nor did any dead one
     * leave one behind; and the crashes persisted nothing more. */
    expect_recovery(sp, &a, "after-crashes", 20);
    expect_tpm_clean(sp, "after the crashes, daemon running");
    assert_int_equal(sworn_stack_sh(sp, "tpm2_getcap -T \"$TCTI\" handles-persistent | "
                                        "diff -u persistent.before - >&2"),
                     0);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    expect_tpm_clean(sp, "after the orderly stop");
    check_log(sp, &a);
    starts = expect_every_start_quoted(sp);
    assert_int_equal(starts, TPM_CRASHES + 1);
    printf("test_crash_keeps_quoting: %d crashes, %zu starts quoted, %zu decisions acknowledged "
           "(%u allows, %u denies, %u errors, %u unanswered)\n",
           TPM_CRASHES, starts, a.n, a.allows, a.denies, a.errors, a.unanswered);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
    crash_running = 0;
}

/*
 * Issue 11, finding 14: an object at tpm.ak_handle that is not sworn's AK (here the AK's template
 * in the owner hierarchy, persisted there by someone else) is never used and never evicted. With
 * tpm.required the start fails and says why; without it the daemon runs, unquoted, and says why
 * in its log. Once the operator frees the handle, the next start persists the AK and quotes.
 */
static void test_foreign_object_at_ak_handle(void **state)
{
    struct sworn_stack *const sp = &the_stack;
    struct acks a;
    double quotes;

    (void)state;
    acks_init(&a);
    assert_int_equal(sworn_stack_up(sp, "--tpm-required"), 0);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    /* Someone replaces the AK at its handle with a key of their own. */
    assert_int_equal(
        sworn_stack_sh(sp, "tpm2_evictcontrol -Q -T \"$TCTI\" -C o -c " AK_HANDLE " && "
                           "tpm2_createprimary -Q -T \"$TCTI\" -C o -g sha256 -G "
                           "ecc256:ecdsa-sha256:null -a 'restricted|sign|fixedtpm|fixedparent|"
                           "sensitivedataorigin|userwithauth' -c foreign.ctx && "
                           "tpm2_evictcontrol -Q -T \"$TCTI\" -C o -c foreign.ctx " AK_HANDLE " && "
                           "tpm2_flushcontext -T \"$TCTI\" -t && "
                           "tpm2_readpublic -Q -T \"$TCTI\" -c " AK_HANDLE " -n foreign.name"),
        0);
    /* tpm.required: the start fails, naming the handle and what is wrong with its object. */
    assert_int_equal(sworn_stack_sh(sp, "\"$DECISIOND_BIN\" --config \"$CONFIG\" </dev/null "
                                        ">/dev/null 2>start.err"),
                     1);
    assert_int_equal(sworn_stack_sh(sp, "grep 'tpm.required' start.err | grep -i '0x8153574e' | "
                                        "grep -q 'not a primary key of the endorsement'"),
                     0);
    /* Without it: the daemon serves, unquoted, and logs why. */
    assert_int_equal(sworn_stack_sh(sp, "sed -i 's/^  required: true$/  required: false/' "
                                        "\"$CONFIG\" && grep -q '^  required: false$' \"$CONFIG\""),
                     0);
    assert_int_equal(sworn_stack_start(sp), 0);
    assert_int_equal(ask(sp, &a, "foreign-1", "/allowed/a", NULL, 0), OUT_ALLOW);
    sworn_stack_checkpoint_now(sp);
    assert_true(sworn_stack_metric(sp, "sworn_tpm_up") == 0.0);
    quotes = sworn_stack_metric(sp, "sworn_quotes_total");
    assert_true(quotes == 0.0);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    assert_int_equal(sworn_stack_sh(sp, "grep '\"event\":\"tpm_down\"' decisiond.log | "
                                        "grep -q 'not a primary key of the endorsement'"),
                     0);
    /* The foreign object is where it was, unchanged; nothing transient was left. */
    assert_int_equal(sworn_stack_sh(sp, "tpm2_readpublic -Q -T \"$TCTI\" -c " AK_HANDLE
                                        " -n after.name && cmp foreign.name after.name"),
                     0);
    expect_tpm_clean(sp, "after the refusals");
    /* The operator frees the handle: the next start persists the AK and quotes. */
    assert_int_equal(sworn_stack_sh(sp, "tpm2_evictcontrol -Q -T \"$TCTI\" -C o -c " AK_HANDLE), 0);
    assert_int_equal(sworn_stack_start(sp), 0);
    assert_true(sworn_stack_metric(sp, "sworn_quotes_total") >= 1.0);
    assert_true(sworn_stack_metric(sp, "sworn_tpm_up") == 1.0);
    assert_int_equal(ask(sp, &a, "foreign-2", "/allowed/a", NULL, 0), OUT_ALLOW);
    assert_int_equal(sworn_stack_stop_daemon(sp), 0);
    assert_int_equal(sworn_stack_sh(sp, "grep '\"event\":\"ak_ready\"' decisiond.log | tail -1 | "
                                        "grep -q '\"how\":\"persisted\"'"),
                     0);
    check_log(sp, &a);
    acks_free(&a);
    assert_int_equal(sworn_stack_down(sp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_signer_child_killed, stack_teardown),
        cmocka_unit_test_teardown(test_signer_child_killed_batch, stack_teardown),
        cmocka_unit_test_teardown(test_hsm_stalls, stack_teardown),
        cmocka_unit_test_teardown(test_hsm_stalls_batch, stack_teardown),
        cmocka_unit_test_teardown(test_hsm_token_gone, stack_teardown),
        cmocka_unit_test_teardown(test_tpm_stopped, stack_teardown),
        cmocka_unit_test_teardown(test_tpm_stopped_required, stack_teardown),
        cmocka_unit_test_teardown(test_log_write_fails, stack_teardown),
        cmocka_unit_test_teardown(test_log_locked, stack_teardown),
        cmocka_unit_test_teardown(test_crash_under_load, crash_teardown),
        cmocka_unit_test_teardown(test_crash_under_load_batch, crash_teardown),
        cmocka_unit_test_teardown(test_crash_keeps_quoting, crash_teardown),
        cmocka_unit_test_teardown(test_foreign_object_at_ak_handle, stack_teardown),
    };

    if (getenv("SWORN_DECISIOND_BIN") == NULL) {
        fprintf(stderr, "test_decisiond_faults: sworn-decisiond is not built\n");
        return 1;
    }
    /* One test by name (a glob), for a quick rerun: SWORN_TEST_FILTER=test_log_locked. */
    if (getenv("SWORN_TEST_FILTER") != NULL)
        cmocka_set_test_filter(getenv("SWORN_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
