/*
 * test_crash.c -- crash safety of the log store (STYLE.md 2.17), with real processes.
 *
 * test_kill_loop: a child process appends batches in a loop, sometimes integrating and sometimes
 * signing a checkpoint, and reports each call that returned over a pipe; the parent kills it with
 * SIGKILL at a random moment, reopens the log (which recovers it), and checks that every
 * acknowledged entry is there with exactly its bytes, that the tree covers every durable entry,
 * that its root matches a recomputation from the entries, that every stored checkpoint verifies
 * and is consistent with the current tree, that the tiles it serves (the partial ones rebuilt by
 * open, the complete ones as stored) are those of the entries, and that every acknowledged
 * checkpoint was kept. This repeats many times on one database (batches of 1..64 entries, so the
 * kills land on both sides of many tile boundaries). Three kills in four are timed from the
 * child's READY report (log and key open), so that they land among appends however slow the
 * start is; the rest are timed from the fork, so that some land in the recovery that
 * sworn_log_open does.
 *
 * Known limit: SIGKILL ends the process, not the machine, so whatever reached the kernel survives
 * (most kills after the WAL write, during its fsync, leave entries that are durable but were
 * never acknowledged, which is allowed). This test cannot see a missing or misordered fsync;
 * only a power cut, or a VFS that drops unsynced writes, could.
 *
 * test_file_size_limit: a child under a small RLIMIT_FSIZE (SIGXFSZ ignored, so writes past the
 * limit fail with EFBIG) appends until an append fails; the parent checks that the failed batch
 * left nothing behind, that everything acknowledged is there, and the same tree and checkpoint
 * properties.
 *
 * The seed is printed; set SWORN_CRASH_SEED to repeat a run's choices (the kill moments still
 * depend on timing). SWORN_CRASH_ITERATIONS overrides the number of kills.
 *
 * Reports from the child are fixed-size records of at most PIPE_BUF bytes, so each write() is
 * atomic: a record in the pipe is complete, and a call the child was killed in is never reported.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "err.h"
#include "logstore.h"
#include "merkle.h"
#include "note.h"
#include "notesign.h"
#include "testutil.h"

#define ORIGIN "crash.sworn.example/log"
#define KEY_NAME "crash.sworn.example"
#define DEFAULT_ITERATIONS 100
#define MAX_KILL_DELAY_US 40000
#define MAX_BATCH 64
/* Checking every entry again (not only the new ones) happens every this many iterations. */
#define FULL_CHECK_EVERY 10
#define NOTE_CAP (SWORN_NOTE_MAX_LEN + 1)

/* What the child reports. */
enum report_kind {
    REPORT_READY = 1, /* the log and the key are open: appends start now */
    REPORT_APPEND,
    REPORT_CHECKPOINT,
    REPORT_APPEND_FAILED,
    REPORT_CP_FAILED
};

struct report {
    uint32_t kind; /* enum report_kind */
    uint32_t pad;
    uint64_t a; /* APPEND*: first index; CHECKPOINT: tree size */
    uint64_t b; /* APPEND*: entry count */
};

/* The parent's record of what it has seen and checked so far. */
struct expect {
    uint64_t acked_end;   /* one past the last acknowledged entry */
    uint64_t seen_size;   /* the log size after the previous reopen */
    uint64_t next_append; /* where the child's next append must start */
    uint64_t checked_end; /* entries [0, checked_end) have been read and hashed into leaves */
    uint8_t *leaves;      /* leaf hashes of entries [0, checked_end) */
    size_t leaves_cap;    /* in hashes */
    uint64_t *acked_cps;  /* acknowledged checkpoint sizes */
    size_t n_acked_cps, acked_cps_cap;
    size_t n_reports; /* all reports, for the summary */
    size_t n_failed_appends, n_failed_cps;
    uint64_t failed_first, failed_count; /* the last failed append */
    uint64_t acked_at_failure;           /* acked_end when it failed */
};

static struct sworn_note_verifier verifier;
static char *key_path;

/* splitmix64: a small deterministic generator, so a seed repeats a run's choices. */
static uint64_t next_rand(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/*
 * The content of entry `index`, a function of the index alone: "crash-entry-<index>-" and
 * padding, with every 13th-ish entry empty and a rare one of the largest size, so batches vary in
 * bytes as well as count. out holds SWORN_TILE_ENTRY_MAX bytes. Returns the length.
 */
static size_t entry_content(uint64_t index, uint8_t *out)
{
    uint64_t state = index * 31 + 7, h = next_rand(&state);
    int n;
    size_t len;

    if (h % 13 == 0)
        return 0;
    n = snprintf((char *)out, SWORN_TILE_ENTRY_MAX, "crash-entry-%llu-", (unsigned long long)index);
    len = (size_t)n + (size_t)(h >> 8) % 300;
    if ((h >> 24) % 211 == 0)
        len = SWORN_TILE_ENTRY_MAX;
    for (size_t i = (size_t)n; i < len; i++)
        out[i] = (uint8_t)('a' + (index + i) % 26);
    return len;
}

/* ---- the child side: no cmocka here, a failure exits with a message and status 3 ---- */

static void child_fail(const char *what)
{
    fprintf(stderr, "crash child: %s: %s (%s)\n", what, sworn_err_msg(),
            sworn_err_name(sworn_err_code()));
    _exit(3);
}

static void child_report(int fd, uint32_t kind, uint64_t a, uint64_t b)
{
    struct report r = {.kind = kind, .a = a, .b = b};

    /* One write of at most PIPE_BUF bytes is atomic; a short one would be a broken pipe. */
    if (write(fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
        fprintf(stderr, "crash child: cannot write a report: %s\n", strerror(errno));
        _exit(3);
    }
}

/* Build the batch [first, first + n) into bufs/lens. */
static void build_batch(uint64_t first, size_t n, uint8_t **bufs, size_t *lens)
{
    for (size_t i = 0; i < n; i++)
        lens[i] = entry_content(first + i, bufs[i]);
}

/*
 * Open the log and append, integrate and checkpoint until killed (stop_on_failure == 0), or until
 * an append fails (stop_on_failure == 1: then report it, try one more checkpoint, and exit 0).
 */
static void child_run(const char *db, int fd, uint64_t seed, int stop_on_failure)
{
    static uint8_t storage[MAX_BATCH][SWORN_TILE_ENTRY_MAX];
    uint8_t *bufs[MAX_BATCH];
    size_t lens[MAX_BATCH];
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    struct sworn_log *log = NULL;
    char *note = malloc(NOTE_CAP);
    uint64_t state = seed;

    if (note == NULL)
        child_fail("malloc");
    for (size_t i = 0; i < MAX_BATCH; i++)
        bufs[i] = storage[i];
    if (sworn_log_open(db, &log) != 0)
        child_fail("open");
    if (sworn_note_signer_open_file(key_path, NULL, &signer) != 0)
        child_fail("open the signing key");
    child_report(fd, REPORT_READY, 0, 0);
    for (;;) {
        uint64_t next = sworn_log_size(log), first = UINT64_MAX, r;
        size_t n = 1 + (size_t)(next_rand(&state) % MAX_BATCH), len;

        build_batch(next, n, bufs, lens);
        if (sworn_log_append(log, (const uint8_t *const *)bufs, lens, n, &first) != 0) {
            if (!stop_on_failure)
                child_fail("append");
            child_report(fd, REPORT_APPEND_FAILED, next, n);
            fprintf(stderr, "crash child: the append failed, as the limit should make it: %s\n",
                    sworn_err_msg());
            if (first != UINT64_MAX) {
                fprintf(stderr, "crash child: a failed append set its first index\n");
                _exit(3);
            }
            if (sworn_log_size(log) != next) {
                fprintf(stderr, "crash child: a failed append changed the size\n");
                _exit(3);
            }
            if (sworn_log_checkpoint(log, signers, 1, note, NOTE_CAP, &len, &r) == 0)
                child_report(fd, REPORT_CHECKPOINT, r, 0);
            else
                child_report(fd, REPORT_CP_FAILED, 0, 0);
            /* The log is still usable: a smaller append may fit, and must land at `next`. */
            if (sworn_log_append(log, (const uint8_t *const *)bufs, lens, 1, &first) == 0) {
                if (first != next) {
                    fprintf(stderr,
                            "crash child: the append after a failure got index %llu, "
                            "want %llu\n",
                            (unsigned long long)first, (unsigned long long)next);
                    _exit(3);
                }
                child_report(fd, REPORT_APPEND, first, 1);
            }
            _exit(0);
        }
        if (first != next) {
            fprintf(stderr, "crash child: append gave index %llu, the size was %llu\n",
                    (unsigned long long)first, (unsigned long long)next);
            _exit(3);
        }
        child_report(fd, REPORT_APPEND, first, n);
        switch (next_rand(&state) % 8) {
        case 0:
            if (sworn_log_checkpoint(log, signers, 1, note, NOTE_CAP, &len, &r) == 0)
                child_report(fd, REPORT_CHECKPOINT, r, 0);
            else if (stop_on_failure)
                child_report(fd, REPORT_CP_FAILED, 0, 0);
            else
                child_fail("checkpoint");
            break;
        case 1:
            if (sworn_log_integrate(log, &r) != 0 && !stop_on_failure)
                child_fail("integrate");
            break;
        default:
            break;
        }
    }
}

/* ---- the parent side ---- */

static void add_acked_cp(struct expect *e, uint64_t size)
{
    if (e->n_acked_cps == e->acked_cps_cap) {
        e->acked_cps_cap = e->acked_cps_cap ? 2 * e->acked_cps_cap : 64;
        e->acked_cps = realloc(e->acked_cps, e->acked_cps_cap * sizeof(*e->acked_cps));
        assert_non_null(e->acked_cps);
    }
    e->acked_cps[e->n_acked_cps++] = size;
}

/* Read every complete report left in the pipe (the child is gone, so this ends at EOF). */
static void drain_reports(int fd, struct expect *e, const char *ctx)
{
    struct report r;
    size_t have = 0;

    for (;;) {
        ssize_t got = read(fd, (uint8_t *)&r + have, sizeof(r) - have);

        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            fail_msg("%s: reading the child's reports: %s", ctx, strerror(errno));
        if (got == 0)
            break;
        have += (size_t)got;
        if (have < sizeof(r))
            continue;
        have = 0;
        e->n_reports++;
        switch (r.kind) {
        case REPORT_APPEND:
            /* The child appends at the size it sees: the size after the last reopen, then the end
             * of its previous batch. */
            if (r.a != e->next_append)
                fail_msg("%s: an append was given index %llu, the log then had %llu "
                         "entries",
                         ctx, (unsigned long long)r.a, (unsigned long long)e->next_append);
            e->next_append = r.a + r.b;
            e->acked_end = r.a + r.b;
            break;
        case REPORT_CHECKPOINT:
            add_acked_cp(e, r.a);
            break;
        case REPORT_APPEND_FAILED:
            if (r.a != e->next_append)
                fail_msg("%s: a failed append was at index %llu, the log then had %llu entries",
                         ctx, (unsigned long long)r.a, (unsigned long long)e->next_append);
            e->acked_at_failure = e->acked_end;
            e->n_failed_appends++;
            e->failed_first = r.a;
            e->failed_count = r.b;
            break;
        case REPORT_CP_FAILED:
            e->n_failed_cps++;
            break;
        case REPORT_READY:
            break;
        default:
            fail_msg("%s: unknown report kind %u from the child", ctx, r.kind);
        }
    }
    /* A partial record is a write the child was killed in; it was never acknowledged. */
}

/* Wait for the child's first report, READY (or for its end, if it failed to start). */
static void wait_ready(int fd, const char *ctx)
{
    struct report r;
    size_t have = 0;

    while (have < sizeof(r)) {
        ssize_t got = read(fd, (uint8_t *)&r + have, sizeof(r) - have);

        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail_msg("%s: the child ended before it was ready; its stderr says why", ctx);
        have += (size_t)got;
    }
    if (r.kind != REPORT_READY)
        fail_msg("%s: the child's first report is of kind %u, not READY", ctx, r.kind);
}

/* Check entries [from, size) against their deterministic content, and record their leaf hashes. */
static void check_entries(struct sworn_log *log, struct expect *e, uint64_t from, uint64_t size,
                          const char *ctx)
{
    static uint8_t want[SWORN_TILE_ENTRY_MAX], got[SWORN_TILE_ENTRY_MAX];

    if (size > e->leaves_cap) {
        size_t cap = e->leaves_cap ? e->leaves_cap : 4096;

        while (cap < size)
            cap *= 2;
        e->leaves = realloc(e->leaves, cap * SWORN_HASH_LEN);
        assert_non_null(e->leaves);
        e->leaves_cap = cap;
    }
    for (uint64_t i = from; i < size; i++) {
        size_t want_len = entry_content(i, want), got_len = 0;
        uint8_t leaf[SWORN_HASH_LEN];

        if (sworn_log_read_entry(log, i, got, sizeof(got), &got_len) != 0)
            fail_msg("%s: entry %llu of %llu cannot be read: %s", ctx, (unsigned long long)i,
                     (unsigned long long)size, sworn_err_msg());
        if (got_len != want_len || (want_len > 0 && memcmp(got, want, want_len) != 0))
            fail_msg("%s: entry %llu has the wrong bytes (%zu bytes, want %zu)", ctx,
                     (unsigned long long)i, got_len, want_len);
        sworn_merkle_leaf_hash(got, got_len, leaf);
        if (i < e->checked_end && memcmp(leaf, e->leaves + i * SWORN_HASH_LEN, SWORN_HASH_LEN) != 0)
            fail_msg("%s: entry %llu changed since it was first checked", ctx,
                     (unsigned long long)i);
        memcpy(e->leaves + i * SWORN_HASH_LEN, leaf, SWORN_HASH_LEN);
    }
    if (size > e->checked_end)
        e->checked_end = size;
}

struct cp_walk {
    struct sworn_log *log;
    uint64_t size;                /* the current tree size */
    uint8_t root[SWORN_HASH_LEN]; /* its root, recomputed from the entries */
    const char *ctx;
    uint64_t *sizes; /* the sizes of the stored checkpoints, in walk order */
    size_t count, cap;
    char *note_copy; /* room to parse each note from */
};

/* Verify one stored checkpoint: signature, body, root, and consistency with the current tree. */
static int check_one_checkpoint(void *arg, uint64_t size, const char *note, size_t len)
{
    struct cp_walk *w = arg;
    struct sworn_note *parsed = malloc(sizeof(*parsed));
    struct sworn_checkpoint cp;
    uint8_t root[SWORN_HASH_LEN], proof[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
    size_t verified = 0, count = 0;
    const char *ctx = w->ctx;

    assert_non_null(parsed);
    assert_true(len < NOTE_CAP);
    memcpy(w->note_copy, note, len);
    if (sworn_note_parse(w->note_copy, len, parsed) != 0)
        fail_msg("%s: the checkpoint stored for size %llu is not a note: %s", ctx,
                 (unsigned long long)size, sworn_err_msg());
    if (sworn_note_verify(parsed, &verifier, 1, &verified, NULL, NULL) != 0 || verified != 1)
        fail_msg("%s: the checkpoint for size %llu does not verify: %s", ctx,
                 (unsigned long long)size, sworn_err_msg());
    if (sworn_checkpoint_parse(parsed->text, parsed->text_len, &cp) != 0)
        fail_msg("%s: the checkpoint body for size %llu does not parse: %s", ctx,
                 (unsigned long long)size, sworn_err_msg());
    if (strcmp(cp.origin, ORIGIN) != 0 || cp.size != size)
        fail_msg("%s: the checkpoint stored for size %llu says origin \"%s\" size %llu", ctx,
                 (unsigned long long)size, cp.origin, (unsigned long long)cp.size);
    if (cp.size > w->size)
        fail_msg("%s: a checkpoint covers %llu entries, but only %llu are durable", ctx,
                 (unsigned long long)cp.size, (unsigned long long)w->size);
    if (sworn_log_root(w->log, cp.size, root) != 0)
        fail_msg("%s: no root for checkpoint size %llu: %s", ctx, (unsigned long long)cp.size,
                 sworn_err_msg());
    if (memcmp(root, cp.root, SWORN_HASH_LEN) != 0)
        fail_msg("%s: the checkpoint root for size %llu differs from the log's root", ctx,
                 (unsigned long long)cp.size);
    if (cp.size == 0) {
        sworn_merkle_empty_root(root);
        if (memcmp(root, cp.root, SWORN_HASH_LEN) != 0)
            fail_msg("%s: the checkpoint of the empty tree has a non-empty root", ctx);
    } else {
        if (sworn_log_prove_consistency(w->log, cp.size, w->size, proof, SWORN_MERKLE_MAX_PROOF,
                                        &count) != 0)
            fail_msg("%s: no consistency proof from %llu to %llu: %s", ctx,
                     (unsigned long long)cp.size, (unsigned long long)w->size, sworn_err_msg());
        if (sworn_merkle_verify_consistency(cp.size, w->size, cp.root, w->root, proof, count) != 0)
            fail_msg("%s: the consistency proof from checkpoint %llu to the tree of "
                     "%llu does not verify: %s",
                     ctx, (unsigned long long)cp.size, (unsigned long long)w->size,
                     sworn_err_msg());
    }
    if (w->count == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->sizes = realloc(w->sizes, w->cap * sizeof(*w->sizes));
        assert_non_null(w->sizes);
    }
    if (w->count > 0 && w->sizes[w->count - 1] >= size)
        fail_msg("%s: checkpoints are not visited oldest first (%llu after %llu)", ctx,
                 (unsigned long long)size, (unsigned long long)w->sizes[w->count - 1]);
    w->sizes[w->count++] = size;
    free(parsed);
    return 0;
}

/*
 * The rightmost two tiles of levels 0 and 1 of the tree of `size` entries, as the log serves them
 * (the partial ones from the edge that open rebuilt, the complete ones as stored), against the
 * leaf hashes of the entries.
 */
static void check_tiles(struct sworn_log *log, const struct expect *e, uint64_t size,
                        const char *ctx)
{
    static uint8_t tile[SWORN_TILE_WIDTH * SWORN_HASH_LEN];

    for (unsigned level = 0; level < 2; level++) {
        uint64_t n = size >> (8 * level), span = UINT64_C(1) << (8 * level);
        uint64_t tiles = (n + SWORN_TILE_WIDTH - 1) / SWORN_TILE_WIDTH;

        for (uint64_t t = tiles > 2 ? tiles - 2 : 0; t < tiles; t++) {
            uint64_t w = n - t * SWORN_TILE_WIDTH;
            unsigned width = 0;

            if (w > SWORN_TILE_WIDTH)
                w = SWORN_TILE_WIDTH;
            if (sworn_log_read_tile(log, size, (int)level, t, tile, &width) != 0 || width != w)
                fail_msg("%s: tile %u/%llu of size %llu cannot be read (%s)", ctx, level,
                         (unsigned long long)t, (unsigned long long)size, sworn_err_msg());
            for (uint64_t j = 0; j < w; j++) {
                uint8_t want[SWORN_HASH_LEN];

                sworn_merkle_root_of_leaves(
                    e->leaves + (t * SWORN_TILE_WIDTH + j) * span * SWORN_HASH_LEN, span, want);
                if (memcmp(tile + j * SWORN_HASH_LEN, want, SWORN_HASH_LEN) != 0)
                    fail_msg("%s: hash %llu of tile %u/%llu differs from its entries'", ctx,
                             (unsigned long long)j, level, (unsigned long long)t);
            }
        }
    }
}

/*
 * Reopen the log and check everything; `full` rereads every entry, otherwise only those that
 * appeared since the last check. Returns the log size.
 */
static uint64_t check_log(const char *db, struct expect *e, const char *ctx, int full)
{
    struct sworn_log *log = NULL;
    struct cp_walk w = {.ctx = ctx};
    uint8_t root[SWORN_HASH_LEN];
    uint64_t size, tree;
    int rc;

    if (sworn_log_open(db, &log) != 0)
        fail_msg("%s: the log does not reopen: %s (%s)", ctx, sworn_err_msg(),
                 sworn_err_name(sworn_err_code()));
    size = sworn_log_size(log);
    tree = sworn_log_tree_size(log);
    if (size < e->acked_end)
        fail_msg("%s: the log has %llu entries, but %llu were acknowledged", ctx,
                 (unsigned long long)size, (unsigned long long)e->acked_end);
    if (size < e->seen_size)
        fail_msg("%s: the log shrank from %llu to %llu entries", ctx,
                 (unsigned long long)e->seen_size, (unsigned long long)size);
    if (tree != size)
        fail_msg("%s: after open the tree has %llu entries, the log %llu", ctx,
                 (unsigned long long)tree, (unsigned long long)size);
    check_entries(log, e, full ? 0 : e->checked_end, size, ctx);
    sworn_merkle_root_of_leaves(e->leaves, size, w.root);
    if (sworn_log_root(log, size, root) != 0)
        fail_msg("%s: no root for size %llu: %s", ctx, (unsigned long long)size, sworn_err_msg());
    if (memcmp(root, w.root, SWORN_HASH_LEN) != 0)
        fail_msg("%s: the stored root of size %llu differs from the recomputed one", ctx,
                 (unsigned long long)size);
    check_tiles(log, e, size, ctx);

    w.log = log;
    w.size = size;
    w.note_copy = malloc(NOTE_CAP);
    assert_non_null(w.note_copy);
    rc = sworn_log_each_checkpoint(log, check_one_checkpoint, &w);
    if (rc != 0)
        fail_msg("%s: walking the checkpoints failed: %s", ctx, sworn_err_msg());
    for (size_t i = 0; i < e->n_acked_cps; i++) {
        size_t j = 0;

        while (j < w.count && w.sizes[j] != e->acked_cps[i])
            j++;
        if (j == w.count)
            fail_msg("%s: the acknowledged checkpoint of size %llu is not stored", ctx,
                     (unsigned long long)e->acked_cps[i]);
    }
    e->seen_size = size;
    e->next_append = size;
    free(w.sizes);
    free(w.note_copy);
    sworn_log_close(log);
    return size;
}

static uint64_t pick_seed(void)
{
    const char *s = getenv("SWORN_CRASH_SEED");

    if (s != NULL && *s != '\0')
        return strtoull(s, NULL, 10);
    return (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
}

static int pick_iterations(void)
{
    const char *s = getenv("SWORN_CRASH_ITERATIONS");

    return s != NULL && atoi(s) > 0 ? atoi(s) : DEFAULT_ITERATIONS;
}

/* A folder with a new log and key; sets key_path and verifier. */
static char *make_log(const char *tag, char **db)
{
    char *dir = sworn_test_tmpdir(tag);
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_log *log = NULL;

    *db = sworn_test_path(dir, "log.db");
    free(key_path);
    key_path = sworn_test_path(dir, "log.key");
    if (sworn_note_keygen_ed25519(KEY_NAME, key_path, vkey, sizeof(vkey)) != 0)
        fail_msg("keygen: %s", sworn_err_msg());
    if (sworn_note_verifier_parse(vkey, strlen(vkey), &verifier) != 0)
        fail_msg("the new verifier key does not parse: %s", sworn_err_msg());
    if (sworn_log_create(*db, ORIGIN, &log) != 0)
        fail_msg("create: %s", sworn_err_msg());
    sworn_log_close(log);
    return dir;
}

static void free_expect(struct expect *e)
{
    free(e->leaves);
    free(e->acked_cps);
}

static void test_kill_loop(void **state)
{
    uint64_t seed = pick_seed(), rng;
    int iterations = pick_iterations();
    struct expect e = {0};
    char *db, *dir = make_log("crash", &db);
    int progressed = 0, unacked_durable = 0;
    uint64_t size = 0, prev;

    (void)state;
    rng = seed;
    printf("test_kill_loop: seed %llu, %d iterations (SWORN_CRASH_SEED, SWORN_CRASH_ITERATIONS)\n",
           (unsigned long long)seed, iterations);
    for (int it = 0; it < iterations; it++) {
        uint64_t child_seed = next_rand(&rng);
        char ctx[64];
        struct timespec delay;
        long us = (long)(next_rand(&rng) % (MAX_KILL_DELAY_US + 1));
        int fds[2], status = 0;
        pid_t pid;

        snprintf(ctx, sizeof(ctx), "iteration %d (kill after %ld us)", it, us);
        assert_int_equal(pipe(fds), 0);
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_run(db, fds[1], child_seed, 0);
            _exit(3);
        }
        close(fds[1]);
        /*
         * Every fourth kill counts its delay from the fork, so that some land in the recovery
         * that sworn_log_open does; the others count from the child's READY, so that they land
         * among appends, integrations and checkpoints however slow the start is (under ASan).
         */
        if (it % 4 != 0)
            wait_ready(fds[0], ctx);
        delay.tv_sec = us / 1000000;
        delay.tv_nsec = (us % 1000000) * 1000;
        while (nanosleep(&delay, &delay) != 0 && errno == EINTR)
            ;
        assert_int_equal(kill(pid, SIGKILL), 0);
        while (waitpid(pid, &status, 0) < 0)
            assert_int_equal(errno, EINTR);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
            fail_msg("%s: the child ended by itself (status 0x%x) before the kill; its stderr "
                     "says why",
                     ctx, (unsigned)status);
        drain_reports(fds[0], &e, ctx);
        close(fds[0]);
        prev = size;
        if (e.acked_end > prev)
            progressed++;
        size = check_log(db, &e, ctx,
                         it % FULL_CHECK_EVERY == FULL_CHECK_EVERY - 1 || it == iterations - 1);
        /* Killed after a commit but before its report: durable, never acknowledged. */
        if (size > prev && size > e.acked_end)
            unacked_durable++;
    }
    printf("test_kill_loop: %llu entries, %zu acknowledged checkpoints, %zu reports; %d kills "
           "after some acknowledged append, %d left durable entries never acknowledged\n",
           (unsigned long long)size, e.n_acked_cps, e.n_reports, progressed, unacked_durable);
    if (e.acked_end == 0)
        fail_msg("the child never got an append acknowledged: the test tested nothing");
    free_expect(&e);
    sworn_test_rmtree(dir);
    free(dir);
    free(db);
}

/* One run under a file size limit of `limit` bytes. */
static void run_size_limit(uint64_t seed, rlim_t limit)
{
    struct expect e = {0};
    char *db, *dir = make_log("fsize", &db);
    char ctx[64];
    int fds[2], status = 0;
    uint64_t size;
    pid_t pid;

    snprintf(ctx, sizeof(ctx), "file size limit %llu", (unsigned long long)limit);
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {.rlim_cur = limit, .rlim_max = limit};

        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
            fprintf(stderr, "crash child: setrlimit: %s\n", strerror(errno));
            _exit(3);
        }
        child_run(db, fds[1], seed, 1);
        _exit(3);
    }
    close(fds[1]);
    drain_reports(fds[0], &e, ctx);
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s: the child failed (status 0x%x); its stderr says why", ctx, (unsigned)status);
    if (e.n_failed_appends != 1)
        fail_msg("%s: the limit never made an append fail", ctx);
    if (e.failed_first != e.acked_at_failure)
        fail_msg("%s: the failed append was at %llu, after %llu acknowledged entries", ctx,
                 (unsigned long long)e.failed_first, (unsigned long long)e.acked_at_failure);
    size = check_log(db, &e, ctx, 1);
    /* acked_end includes the one-entry append after the failure, when that one fitted. */
    if (size != e.acked_end)
        fail_msg("%s: the log holds %llu entries, but only %llu were acknowledged and the append "
                 "of [%llu, %llu) failed: a failed append left entries behind",
                 ctx, (unsigned long long)size, (unsigned long long)e.acked_end,
                 (unsigned long long)e.failed_first,
                 (unsigned long long)(e.failed_first + e.failed_count));
    printf("test_file_size_limit: limit %llu bytes: %llu entries acknowledged, %zu checkpoints "
           "signed, %zu failed; then an append of %llu entries failed, and one entry after it "
           "%s\n",
           (unsigned long long)limit, (unsigned long long)e.acked_at_failure, e.n_acked_cps,
           e.n_failed_cps, (unsigned long long)e.failed_count,
           e.acked_end > e.acked_at_failure ? "was stored" : "failed too");
    free_expect(&e);
    sworn_test_rmtree(dir);
    free(dir);
    free(db);
}

static void test_file_size_limit(void **state)
{
    static const rlim_t limits[] = {96 * 1024, 160 * 1024, 256 * 1024, 600 * 1024};
    uint64_t seed = pick_seed();

    (void)state;
    printf("test_file_size_limit: seed %llu\n", (unsigned long long)seed);
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
        run_size_limit(seed + i, limits[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_loop),
        cmocka_unit_test(test_file_size_limit),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);

    free(key_path);
    return rc;
}
