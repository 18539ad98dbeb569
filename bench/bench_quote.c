/*
 * bench_quote.c -- TPM quotes of checkpoints on swtpm (issue 4's figure): how long a quote takes,
 * how long a signed checkpoint takes to become a quoted checkpoint, and whether decisions wait
 * for quotes. Each figure is printed next to a baseline measured in the same run, so the ratios,
 * not the absolute times, are what compares between machines.
 *
 * Usage: bench_quote DIR
 *   DIR  an existing, empty folder: the swtpm state, the log database and its note key go there
 *        (scripts/bench makes it and removes it afterwards)
 * Needs swtpm and swtpm_setup (scripts/install-deps installs them).
 *
 * Setup: a fresh TPM state (swtpm_setup --tpm2), swtpm on free loopback ports (flags
 * not-need-init,startup-clear, as the fixture and bench_signer start it), the endorsement-
 * hierarchy AK (sworn_tpm_ak_create) and one extend of PCR 23, as decisiond does at start. swtpm
 * is killed at the end, on errors too (atexit), and dies with the bench (PR_SET_PDEATHSIG).
 *
 * What is measured:
 *   baselines  raw SHA-256 of a checkpoint note text (EVP, one reused context), raw Ed25519 sign
 *              of it (EVP_DigestSign), raw 4 KiB pwrite + fdatasync (what one durable commit of
 *              the log costs at least)
 *   quote      QUOTES quotes of PCR 23 with random 32-byte qualifying data (or QUOTE_SECONDS)
 *   checkpoint append a batch, then sworn_log_checkpoint; then SHA-256 of the note's text (the
 *              part the signatures cover, from sworn_note_parse) and a quote with that hash as
 *              qualifying data: checkpoint-only and checkpoint-to-quoted-checkpoint latencies
 *   decisions  two threads appending one entry per sworn_log_append (one decision each) with
 *              quoting off, with a checkpointer thread that checkpoints and quotes every
 *              100 ms, and with one that does so back to back (the stress variant). The three
 *              modes take turns in ROUNDS slices, so that a disk whose sync rate drifts slows
 *              all of them alike (the paired ratio compares slices of the same round). Quoting runs
 * off the decision path, so the ratio on / off should be near 1; what remains is the checkpoint's
 * own durable commit competing for the same WAL and fsyncs (and, on a 2-core machine, for the CPU).
 *
 * Every loop is bounded in count and in time; the whole run takes about 20 s.
 * Exit status: 0, or 1 when a library or system call fails (its message is printed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "benchutil.h"
#include "err.h"
#include "logstore.h"
#include "note.h"
#include "notesign.h"
#include "tpmattest.h"

#define PATH_MAX_LEN BENCH_PATH_MAX
#define ORIGIN "bench.sworn.example/quote"
#define KEY_NAME "bench.sworn.example/quote-key"
#define NOTE_CAP 4096
#define PCR_MASK (1u << SWORN_TPM_MEASURE_PCR)

#define QUOTES 200 /* quote latency: at most this many quotes */
#define QUOTE_SECONDS 3.0
#define CKPTS 100 /* checkpoint latency: at most this many checkpoints */
#define CKPT_SECONDS 4.0
#define CKPT_BATCH 16    /* entries appended before each checkpoint */
#define BASE_SECONDS 0.4 /* per raw baseline */
#define BASE_CAP 2000000UL
#define ROUNDS 5          /* decision-rate slices per mode */
#define SLICE_SECONDS 1.0 /* so each mode gets ROUNDS s of appending */
#define APPENDERS 2
#define INTERVAL_MS 100 /* the paced checkpointer's period */
#define LAT_CAP 65536   /* append latencies kept per thread and mode; more are counted only */
#define ENTRY_LEN 64
#define SYNC_BLOCK 4096
#define SYNC_FILE_BLOCKS 1024 /* the fdatasync baseline cycles over a 4 MiB file */

/* ---------------------------------------------------------------------------------------------
 * Statistics and the table.
 */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The nearest-rank index of percentile p in n > 0 sorted samples: ceil(p * n) - 1. */
static size_t rank(double p, size_t n)
{
    size_t r = (size_t)(p * (double)n);

    if ((double)r < p * (double)n)
        r++;
    return r > 0 ? r - 1 : 0;
}

struct stats {
    size_t n;
    double p50, p90, p99, max; /* seconds */
};

/* Sorts v in place. Nearest-rank percentiles: the value that p of the samples do not exceed. */
static struct stats stats_of(double *v, size_t n)
{
    struct stats s = {.n = n};

    if (n == 0)
        return s;
    qsort(v, n, sizeof(v[0]), cmp_double);
    s.p50 = v[rank(0.50, n)];
    s.p90 = v[rank(0.90, n)];
    s.p99 = v[rank(0.99, n)];
    s.max = v[n - 1];
    return s;
}

static void header(const char *title)
{
    printf("\n%s\n", title);
}

static void row(const char *figure, double value, const char *unit, const char *note)
{
    printf("  %-46s %10.3f  %-10s %s\n", figure, value, unit, note);
}

static void row_rate(const char *figure, double value, const char *unit, const char *note)
{
    printf("  %-46s %10.0f  %-10s %s\n", figure, value, unit, note);
}

/* Four rows for one latency distribution, in ms; ratio against base_ms on each. */
static void latency_rows(const char *what, const struct stats *s, double base_ms,
                         const char *base_name)
{
    char fig[128], note[160];
    const char *names[] = {"median", "p90", "p99", "max"};
    const double vals[] = {s->p50, s->p90, s->p99, s->max};

    for (int i = 0; i < 4; i++) {
        snprintf(fig, sizeof(fig), "%s, %s (n=%zu)", what, names[i], s->n);
        snprintf(note, sizeof(note), "%.1f x %s", vals[i] * 1e3 / base_ms, base_name);
        row(fig, vals[i] * 1e3, "ms", note);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Baselines.
 */

static EVP_MD *sha256_md; /* fetched once: OpenSSL 3 fetches on every one-shot call */

static void sha256(const void *data, size_t len, uint8_t out[32])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    unsigned n = 0;

    if (c == NULL || EVP_DigestInit_ex(c, sha256_md, NULL) != 1 ||
        EVP_DigestUpdate(c, data, len) != 1 || EVP_DigestFinal_ex(c, out, &n) != 1 || n != 32)
        bench_die_msg("SHA-256 failed");
    EVP_MD_CTX_free(c);
}

/* Raw SHA-256 of text with one reused context. Returns hashes/s. */
static double base_sha256(const char *text, size_t len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    uint8_t out[32];
    unsigned n = 0;
    unsigned long i = 0;
    double t0 = bench_now(), t = t0;

    if (c == NULL)
        bench_die_msg("EVP_MD_CTX_new failed");
    while (i < BASE_CAP && (t = bench_now()) - t0 < BASE_SECONDS)
        for (int k = 0; k < 64; k++, i++)
            if (EVP_DigestInit_ex(c, sha256_md, NULL) != 1 || EVP_DigestUpdate(c, text, len) != 1 ||
                EVP_DigestFinal_ex(c, out, &n) != 1)
                bench_die_msg("SHA-256 failed");
    EVP_MD_CTX_free(c);
    return (double)i / (t - t0);
}

/* Raw Ed25519 EVP_DigestSign of text with a fresh in-memory key. Returns signatures/s. */
static double base_ed25519(const char *text, size_t len)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    uint8_t sig[64];
    unsigned long i = 0;
    double t0 = bench_now(), t = t0;

    if (key == NULL || c == NULL)
        bench_die_msg("Ed25519 key failed");
    while (i < BASE_CAP && (t = bench_now()) - t0 < BASE_SECONDS)
        for (int k = 0; k < 8; k++, i++) {
            size_t sl = sizeof(sig);

            if (EVP_DigestSignInit(c, NULL, NULL, NULL, key) != 1 ||
                EVP_DigestSign(c, sig, &sl, (const uint8_t *)text, len) != 1)
                bench_die_msg("Ed25519 sign failed");
        }
    EVP_MD_CTX_free(c);
    EVP_PKEY_free(key);
    return (double)i / (t - t0);
}

/* 4 KiB pwrite + fdatasync over a preallocated file: the least one durable commit costs. */
static double base_fdatasync(const char *dir)
{
    char path[PATH_MAX_LEN];
    uint8_t block[SYNC_BLOCK];
    unsigned long i = 0;
    double t0, t;
    int fd;

    bench_join_path(path, dir, "sync.bin");
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        bench_die_sys(path);
    memset(block, 0x5a, sizeof(block));
    /* Preallocate and sync once, so that the timed syncs do not also write the inode. */
    for (int b = 0; b < SYNC_FILE_BLOCKS; b++)
        if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
            bench_die_sys("write");
    if (fsync(fd) != 0)
        bench_die_sys("fsync");
    t0 = t = bench_now();
    while (i < BASE_CAP && (t = bench_now()) - t0 < BASE_SECONDS) {
        block[0] = (uint8_t)i;
        if (pwrite(fd, block, sizeof(block), (off_t)(i % SYNC_FILE_BLOCKS) * SYNC_BLOCK) !=
                (ssize_t)sizeof(block) ||
            fdatasync(fd) != 0)
            bench_die_sys("pwrite + fdatasync");
        i++;
    }
    close(fd);
    unlink(path);
    return (double)i / (t - t0);
}

/* ---------------------------------------------------------------------------------------------
 * The quoted checkpoint: what a checkpointer does after each checkpoint.
 */

struct quoter {
    struct sworn_tpm *tpm;
    const struct sworn_tpm_ak *ak;
};

/* Offset of extraData's 32 bytes in a TPMS_ATTEST: magic (4), type (2), qualifiedSigner
 * (TPM2B_NAME of the AK: 2 + 34), extraData's size (2). */
#define ATTEST_EXTRA_OFF (4 + 2 + 2 + SWORN_TPM_NAME_LEN + 2)

/* Quote PCR 23 with qual. When check is set, confirm that the attest carries qual (once per
 * figure is enough to show that the right bytes were quoted; the verifier does the rest). */
static void quote(const struct quoter *q, const uint8_t qual[32], int check)
{
    uint8_t *attest = NULL, *sig = NULL;
    size_t attest_len = 0, sig_len = 0;

    if (sworn_tpm_quote(q->tpm, q->ak, qual, PCR_MASK, &attest, &attest_len, &sig, &sig_len) != 0)
        bench_die_lib("sworn_tpm_quote");
    if (check &&
        (attest_len < ATTEST_EXTRA_OFF + 32 || memcmp(attest + ATTEST_EXTRA_OFF, qual, 32) != 0))
        bench_die_msg("the quote does not carry the qualifying data");
    free(attest);
    free(sig);
}

/* Checkpoint the log, hash the note's text (the signed part, without the signature lines) and
 * quote that hash. OUT: *t_ckpt, the time the checkpoint alone took (may be NULL). */
static void quoted_checkpoint(struct sworn_log *log, struct sworn_note_signer *signer,
                              const struct quoter *q, int check, double *t_ckpt)
{
    char note[NOTE_CAP];
    struct sworn_note parsed;
    uint8_t digest[32];
    size_t len = 0;
    double t0 = bench_now();

    if (sworn_log_checkpoint(log, &signer, 1, note, sizeof(note), &len, NULL) != 0)
        bench_die_lib("sworn_log_checkpoint");
    if (t_ckpt != NULL)
        *t_ckpt = bench_now() - t0;
    if (sworn_note_parse(note, len, &parsed) != 0)
        bench_die_lib("sworn_note_parse");
    sha256(parsed.text, parsed.text_len, digest);
    quote(q, digest, check);
}

/* ---------------------------------------------------------------------------------------------
 * Decisions with quoting off and on: APPENDERS threads append one entry per call while a
 * checkpointer thread (when on) checkpoints and quotes.
 */

enum mode { OFF, PACED, FLAT_OUT, N_MODES };
static const char *const mode_name[N_MODES] = {"quoting off", "checkpoint + quote every 100 ms",
                                               "checkpoint + quote back to back"};

static double lat_store[N_MODES][APPENDERS][LAT_CAP]; /* seconds per append */
static size_t lat_n[N_MODES][APPENDERS];
static double lat_all[APPENDERS * LAT_CAP]; /* one mode's, merged for its percentiles */

struct appender {
    struct sworn_log *log;
    atomic_int *stop;
    enum mode mode;
    int id;
    unsigned long count; /* this slice */
    unsigned long seq;   /* over the run, so every entry differs */
};

static void *appender_main(void *arg)
{
    struct appender *a = arg;
    uint8_t entry[ENTRY_LEN];
    const uint8_t *entries[1] = {entry};
    const size_t lens[1] = {sizeof(entry)};

    memset(entry, 0, sizeof(entry));
    a->count = 0;
    while (!atomic_load(a->stop)) {
        uint64_t idx = 0;
        size_t *n = &lat_n[a->mode][a->id];
        double t0;

        snprintf((char *)entry, sizeof(entry), "decision %d %lu", a->id, a->seq++);
        t0 = bench_now();
        if (sworn_log_append(a->log, entries, lens, 1, &idx) != 0)
            bench_die_lib("sworn_log_append");
        if (*n < LAT_CAP)
            lat_store[a->mode][a->id][(*n)++] = bench_now() - t0;
        a->count++;
    }
    return NULL;
}

struct checkpointer {
    struct sworn_log *log;
    struct sworn_note_signer *signer;
    const struct quoter *q;
    atomic_int *stop;
    int paced;
    unsigned long count; /* quoted checkpoints this slice */
};

static void *checkpointer_main(void *arg)
{
    struct checkpointer *c = arg;
    double next = bench_now();

    c->count = 0;
    while (!atomic_load(c->stop)) {
        quoted_checkpoint(c->log, c->signer, c->q, c->count == 0, NULL);
        c->count++;
        if (c->paced) {
            /* A fixed period from the start, not a sleep after the work, as a timer would. */
            double wait;

            next += INTERVAL_MS / 1e3;
            wait = next - bench_now();
            if (wait > 0)
                bench_sleep_ms((long)(wait * 1e3 + 0.5));
        }
    }
    return NULL;
}

struct mode_result {
    double rate;                 /* entries/s over all slices */
    double slice_rate[ROUNDS];   /* entries/s of each round's slice */
    double slice_min, slice_max; /* entries/s */
    unsigned long entries, quotes;
    double seconds;
};

/* One slice of one mode. */
static void decision_slice(struct sworn_log *log, struct sworn_note_signer *signer,
                           const struct quoter *q, enum mode m, int round, struct appender *ap,
                           struct mode_result *r)
{
    pthread_t at[APPENDERS], ct;
    atomic_int stop_app = 0, stop_ckpt = 0;
    struct checkpointer c = {
        .log = log, .signer = signer, .q = q, .stop = &stop_ckpt, .paced = m == PACED};
    unsigned long n = 0;
    double t0, t, rate;

    /* The checkpointer starts first, so that the whole slice of appends runs beside it. */
    if (m != OFF)
        bench_check_pt(pthread_create(&ct, NULL, checkpointer_main, &c), "pthread_create");
    t0 = bench_now();
    for (int i = 0; i < APPENDERS; i++) {
        ap[i].log = log;
        ap[i].stop = &stop_app;
        ap[i].mode = m;
        ap[i].id = i;
        bench_check_pt(pthread_create(&at[i], NULL, appender_main, &ap[i]), "pthread_create");
    }
    bench_sleep_ms((long)(SLICE_SECONDS * 1e3));
    atomic_store(&stop_app, 1);
    for (int i = 0; i < APPENDERS; i++) {
        bench_check_pt(pthread_join(at[i], NULL), "pthread_join");
        n += ap[i].count;
    }
    t = bench_now() - t0;
    if (m != OFF) {
        atomic_store(&stop_ckpt, 1);
        bench_check_pt(pthread_join(ct, NULL), "pthread_join");
        r->quotes += c.count;
    }
    rate = (double)n / t;
    r->slice_rate[round] = rate;
    r->entries += n;
    r->seconds += t;
    if (r->slice_max == 0 || rate > r->slice_max)
        r->slice_max = rate;
    if (r->slice_min == 0 || rate < r->slice_min)
        r->slice_min = rate;
}

/* The median over rounds of (mode m's slice rate / quoting off's slice rate in the same round):
 * slices of one round run back to back, so a drift of the disk's sync rate between rounds,
 * which on a shared VM is larger than the effect measured, cancels out of each pair. */
static double paired_ratio(const struct mode_result *res, enum mode m)
{
    double r[ROUNDS];

    for (int i = 0; i < ROUNDS; i++)
        r[i] = res[m].slice_rate[i] / res[OFF].slice_rate[i];
    qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
    return r[ROUNDS / 2];
}

/* ---------------------------------------------------------------------------------------------
 */

static void append_batch(struct sworn_log *log, unsigned long *seq)
{
    uint8_t buf[CKPT_BATCH][ENTRY_LEN];
    const uint8_t *entries[CKPT_BATCH];
    size_t lens[CKPT_BATCH];
    uint64_t idx = 0;

    for (int i = 0; i < CKPT_BATCH; i++) {
        memset(buf[i], 0, ENTRY_LEN);
        snprintf((char *)buf[i], ENTRY_LEN, "batch entry %lu", (*seq)++);
        entries[i] = buf[i];
        lens[i] = ENTRY_LEN;
    }
    if (sworn_log_append(log, entries, lens, CKPT_BATCH, &idx) != 0)
        bench_die_lib("sworn_log_append");
}

static double ckpt_lat[CKPTS], ckpt_quoted_lat[CKPTS], quote_lat[QUOTES];

int main(int argc, char **argv)
{
    char tcti[128], db[PATH_MAX_LEN], key_path[PATH_MAX_LEN], vkey[SWORN_NOTE_VKEY_MAX + 1],
        note[NOTE_CAP], buf[256];
    struct sworn_tpm *tpm = NULL;
    struct sworn_tpm_ak ak;
    struct sworn_log *log = NULL;
    struct sworn_note_signer signer;
    struct sworn_note parsed;
    struct quoter q;
    struct stats qs, cs, cqs;
    struct mode_result res[N_MODES];
    struct appender ap[APPENDERS];
    uint8_t digest[32];
    unsigned long seq = 0;
    size_t note_len = 0, nq = 0, nc = 0;
    double t0 = bench_now(), t, sha_rate, ed_rate, sync_rate, sha_ms, ed_ms, sync_ms;
    const char *dir;

    if (argc != 2 || argv[1][0] != '/') {
        fprintf(stderr, "usage: bench_quote DIR   (DIR absolute, existing, empty)\n");
        return 1;
    }
    dir = argv[1];
    bench_init("bench_quote");
    /* Lines appear as they are measured, also through scripts/bench's pipe. */
    if (setvbuf(stdout, NULL, _IOLBF, 0) != 0)
        bench_die_msg("setvbuf failed");
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (sha256_md == NULL)
        bench_die_msg("EVP_MD_fetch SHA256 failed");

    /* Setup, before any thread starts (swtpm_setup and swtpm are forked). */
    bench_swtpm_start(dir, tcti, sizeof(tcti));
    if (sworn_tpm_open(tcti, &tpm) != 0)
        bench_die_lib("sworn_tpm_open");
    memset(&ak, 0, sizeof(ak));
    if (sworn_tpm_ak_create(tpm, &ak) != 0)
        bench_die_lib("sworn_tpm_ak_create");
    /* PCR 23 as decisiond leaves it after its measured start, so the quote covers a value. */
    if (RAND_bytes(digest, sizeof(digest)) != 1)
        bench_die_msg("RAND_bytes failed");
    if (sworn_tpm_pcr_extend(tpm, SWORN_TPM_MEASURE_PCR, digest) != 0)
        bench_die_lib("sworn_tpm_pcr_extend");
    q.tpm = tpm;
    q.ak = &ak;

    bench_join_path(db, dir, "log.db");
    bench_join_path(key_path, dir, "note.key");
    if (sworn_note_keygen_ed25519(KEY_NAME, key_path, vkey, sizeof(vkey)) != 0)
        bench_die_lib("sworn_note_keygen_ed25519");
    memset(&signer, 0, sizeof(signer));
    if (sworn_note_signer_open_file(key_path, NULL, &signer) != 0)
        bench_die_lib("sworn_note_signer_open_file");
    if (sworn_log_create(db, ORIGIN, &log) != 0)
        bench_die_lib("sworn_log_create");
    /* One checkpoint now: its text is what the hash and sign baselines work on. */
    append_batch(log, &seq);
    {
        struct sworn_note_signer *s = &signer;

        if (sworn_log_checkpoint(log, &s, 1, note, sizeof(note), &note_len, NULL) != 0)
            bench_die_lib("sworn_log_checkpoint");
    }
    if (sworn_note_parse(note, note_len, &parsed) != 0)
        bench_die_lib("sworn_note_parse");
    printf("setup: swtpm (fresh state), the endorsement-hierarchy AK, PCR 23 extended once, a log "
           "with an Ed25519 note key: %.1f s; %ld CPUs online\n",
           bench_now() - t0, sysconf(_SC_NPROCESSORS_ONLN));
    printf("\n  %-46s %10s  %-10s %s\n", "figure", "value", "unit",
           "ratio / notes (baselines measured in this run)");

    header("Baselines");
    sha_rate = base_sha256(parsed.text, parsed.text_len);
    sha_ms = 1e3 / sha_rate;
    snprintf(buf, sizeof(buf), "%zu-byte checkpoint text, EVP, one reused ctx (%.2f us)",
             parsed.text_len, sha_ms * 1e3);
    row_rate("raw SHA-256", sha_rate, "hashes/s", buf);
    ed_rate = base_ed25519(parsed.text, parsed.text_len);
    ed_ms = 1e3 / ed_rate;
    snprintf(buf, sizeof(buf), "EVP_DigestSign of the checkpoint text (%.1f us)", ed_ms * 1e3);
    row_rate("raw Ed25519 sign", ed_rate, "sigs/s", buf);
    sync_rate = base_fdatasync(dir);
    sync_ms = 1e3 / sync_rate;
    snprintf(buf, sizeof(buf), "what one durable commit costs at least (%.2f ms)", sync_ms);
    row_rate("raw 4 KiB pwrite + fdatasync", sync_rate, "syncs/s", buf);

    /* Quote latency: the TPM's part alone. */
    header("Quote of PCR 23, random 32-byte qualifying data (swtpm over loopback TCP)");
    t = bench_now();
    for (; nq < QUOTES && bench_now() - t < QUOTE_SECONDS; nq++) {
        uint8_t qual[32];
        double s;

        if (RAND_bytes(qual, sizeof(qual)) != 1)
            bench_die_msg("RAND_bytes failed");
        s = bench_now();
        quote(&q, qual, nq == 0);
        quote_lat[nq] = bench_now() - s;
    }
    qs = stats_of(quote_lat, nq);
    latency_rows("quote", &qs, ed_ms, "raw Ed25519 sign");

    /* Checkpoint, then quoted checkpoint: what a checkpointer adds to the time until a
     * checkpoint can be published with its quote. */
    header("Checkpoint -> quoted checkpoint (append 16, checkpoint, SHA-256 of its text, quote)");
    t = bench_now();
    for (; nc < CKPTS && bench_now() - t < CKPT_SECONDS; nc++) {
        double s, c = 0;

        append_batch(log, &seq);
        s = bench_now();
        quoted_checkpoint(log, &signer, &q, nc == 0, &c);
        ckpt_quoted_lat[nc] = bench_now() - s;
        ckpt_lat[nc] = c;
    }
    cs = stats_of(ckpt_lat, nc);
    cqs = stats_of(ckpt_quoted_lat, nc);
    snprintf(buf, sizeof(buf), "%.1f x raw fdatasync (one durable commit)", cs.p50 * 1e3 / sync_ms);
    row("checkpoint only, median", cs.p50 * 1e3, "ms", buf);
    snprintf(buf, sizeof(buf), "%.1f x raw fdatasync", cs.p99 * 1e3 / sync_ms);
    row("checkpoint only, p99", cs.p99 * 1e3, "ms", buf);
    snprintf(buf, sizeof(buf), "%.2f x checkpoint only; quote adds %.2f ms (median)",
             cqs.p50 / cs.p50, (cqs.p50 - cs.p50) * 1e3);
    row("checkpoint + quote, median", cqs.p50 * 1e3, "ms", buf);
    snprintf(buf, sizeof(buf), "%.2f x checkpoint only p99", cqs.p99 / cs.p99);
    row("checkpoint + quote, p99", cqs.p99 * 1e3, "ms", buf);
    snprintf(buf, sizeof(buf), "n=%zu; quote median alone: %.2f ms", nc, qs.p50 * 1e3);
    row("checkpoint + quote, max", cqs.max * 1e3, "ms", buf);

    /* Decisions with quoting off and on, interleaved. */
    header("Decisions: 2 threads x sworn_log_append of 1 entry, quoting off and on, interleaved");
    printf("  (%d slices of %.1f s per mode, modes rotated each round)\n", ROUNDS, SLICE_SECONDS);
    /* Again: the disk's sync rate drifts within a run, and this is what the appends are bound by.
     */
    sync_rate = base_fdatasync(dir);
    snprintf(buf, sizeof(buf), "measured again just before (%.2f ms)", 1e3 / sync_rate);
    row_rate("raw 4 KiB pwrite + fdatasync", sync_rate, "syncs/s", buf);
    memset(res, 0, sizeof(res));
    memset(ap, 0, sizeof(ap));
    ap[1].seq = 1UL << 40; /* distinct entries per thread */
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < N_MODES; k++)
            decision_slice(log, &signer, &q, (enum mode)((r + k) % N_MODES), r, ap,
                           &res[(r + k) % N_MODES]);
    for (int m = 0; m < N_MODES; m++) {
        size_t n = 0;
        struct stats ls;
        char fig[128];

        res[m].rate = (double)res[m].entries / res[m].seconds;
        for (int i = 0; i < APPENDERS; i++) {
            memcpy(lat_all + n, lat_store[m][i], lat_n[m][i] * sizeof(double));
            n += lat_n[m][i];
        }
        ls = stats_of(lat_all, n);
        if (m == OFF)
            snprintf(buf, sizeof(buf), "%.2f x raw fdatasync/s; slices %.0f..%.0f",
                     res[m].rate / sync_rate, res[m].slice_min, res[m].slice_max);
        else
            snprintf(buf, sizeof(buf),
                     "%.2f x quoting off (paired median %.2f); %lu quoted checkpoints "
                     "(%.1f/s); slices %.0f..%.0f",
                     res[m].rate / res[OFF].rate, paired_ratio(res, m), res[m].quotes,
                     (double)res[m].quotes / res[m].seconds, res[m].slice_min, res[m].slice_max);
        snprintf(fig, sizeof(fig), "decisions/s, %s", mode_name[m]);
        row_rate(fig, res[m].rate, "entries/s", buf);
        snprintf(fig, sizeof(fig), "  append latency median / p99");
        snprintf(buf, sizeof(buf), "p99 %.3f ms, max %.3f ms (n=%zu)", ls.p99 * 1e3, ls.max * 1e3,
                 ls.n);
        row(fig, ls.p50 * 1e3, "ms", buf);
    }

    header("Against the spec (information, not an exit status)");
    printf("  decisions must not wait for quotes: decision rate with quoting on / off =\n"
           "    %.2f every 100 ms (paired by round: %.2f), %.2f back to back (paired: %.2f)\n",
           res[PACED].rate / res[OFF].rate, paired_ratio(res, PACED),
           res[FLAT_OUT].rate / res[OFF].rate, paired_ratio(res, FLAT_OUT));
    printf("  the appenders never call the TPM; what the checkpointer takes from them is its own\n"
           "  durable checkpoint commit (same WAL, same fsyncs) and CPU (%ld CPUs here).\n",
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("  whole run: %.1f s\n", bench_now() - t0);

    sworn_log_close(log);
    sworn_note_signer_close(&signer);
    sworn_tpm_ak_flush(tpm, &ak);
    sworn_tpm_close(tpm);
    EVP_MD_free(sha256_md);
    bench_swtpm_stop();
    return 0;
}
