/*
 * bench_signer.c -- signatures per second of every signer backend, called directly and through
 * the signer process, with one and two threads, each set against a baseline measured in the same
 * run with the same keys, so that the figures read as ratios and not as absolute rates that mean
 * nothing on another machine.
 *
 * Usage: bench_signer DIR [SWORN_HSM]
 *   DIR        an existing, empty folder: the PEM keys, the SoftHSM token and the swtpm state go
 *              there (scripts/bench makes it and removes it afterwards)
 *   SWORN_HSM  the sworn-hsm binary, which makes the token and its keys as an operator would;
 *              default $SWORN_HSM_BIN (scripts/bench sets it to BUILD_DIR/hsm/sworn-hsm)
 * Needs SoftHSM2 (P11_MODULE below), swtpm and swtpm_setup, and tpm2-tools.
 *
 * The keys:
 *   file    a P-256 and an Ed25519 PEM key (mode 0600), made here with OpenSSL
 *   pkcs11  a SoftHSM token in DIR made by `sworn-hsm init-dev-token`, with a P-256 and an
 *           Ed25519 key made by `sworn-hsm keygen`; SOFTHSM2_CONF points at it for the whole run
 *   tpm     swtpm on free loopback ports with a fresh state, and a persistent P-256 signing key
 *           made with tpm2-tools; swtpm is killed at the end, on errors too (atexit), and dies
 *           with the bench if that is killed (PR_SET_PDEATHSIG)
 *
 * What is measured:
 *   overheads  a mutex + condvar handoff to a worker thread and back (what signer/watchdog.c does
 *              around every device call) and a 64-byte socketpair round trip to a forked child
 *              (the least that the signer process adds): they explain the ratios below
 *   each key   seven figures: the raw baseline with 1 and 2 threads (raw OpenSSL for the file
 *              keys: EVP_PKEY_sign of a 32-byte digest, EVP_DigestSign of the 50-byte receipt TBS;
 *              raw PKCS#11 on the same token for the pkcs11 keys: C_SignInit + C_Sign with
 *              CKM_ECDSA over 32 bytes or CKM_EDDSA over the 50-byte TBS, a session per thread);
 *              sworn_signer_sign directly, 1 thread and 2 threads with a signer each (signer.h:
 *              one struct per thread); sworn_signer_proc_sign through the signer process, 1
 *              thread, 2 threads with a process each, and 2, 4 and 8 callers sharing one process
 *              (their requests are pipelined on its socket: signerproc.h). Purpose RECEIPT, a
 *              32-byte digest; the first signature of every thread is verified.
 *   the tpm    direct and through the signer process, 1 thread, and 2 threads sharing one
 *              process. swtpm serves one client connection at a time, so two signers cannot
 *              use it at once: those figures are not measured, and each TPM figure opens its
 *              signer (or starts its process) before each slice and closes it after, untimed.
 * Interleaving: the figures of one key take turns in ROUNDS slices of FIGURE_SECONDS / ROUNDS
 * (each slice after WARMUP untimed signatures per thread, and at most COUNT_CAP / ROUNDS per
 * thread), so that load from elsewhere on a shared machine slows all of them alike and their
 * ratios hold better than their rates. The "spread" column shows how far the slices disagreed.
 * The ratios: pkcs11 direct / raw PKCS#11 (target >= 0.9); signer process / direct with the same
 * thread count (target >= 0.9, i.e. at most 10% slower); 1, 2, 4 and 8 callers sharing one signer
 * process / the raw baseline with 1 thread (target >= 0.9 with 2 or more callers: one child signs
 * one request at a time, so the key's raw single-thread rate is its ceiling, and pipelining is
 * what brings it there); file direct / raw OpenSSL; the TPM rate on its own, as swtpm is a
 * software TPM.
 *
 * The whole run takes about 70 s. Exit status: 0, or 1 when a library or system call fails (its
 * message is printed). A missed target is information, not a failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <p11-kit/pkcs11.h>

#include "benchutil.h"
#include "err.h"
#include "signerproc.h"
#include "signer.h"

#define PATH_MAX_LEN BENCH_PATH_MAX
#define FIGURE_SECONDS 1.5  /* per figure */
#define MICRO_SECONDS 0.5   /* per handoff / round-trip baseline */
#define COUNT_CAP 500000UL  /* signatures per thread per figure, whatever the time */
#define MICRO_CAP 2000000UL /* round trips per micro baseline */
#define CHECK_EVERY 8       /* signatures between clock reads */
#define WARMUP 20 /* untimed per thread per slice: the first call starts threads, warms caches */
#define ROUNDS 5  /* slices per figure, taking turns with the other figures of its key */
#define KEY_CONTEXTS 2 /* raw sessions, signers and signer processes per key */
#define MAX_THREADS 8  /* callers of one figure: up to 8 share one signer process */
#define TARGET 0.9     /* both targets of the spec are a ratio of at least 0.9 */
#define DIGEST_LEN 32
#define ECHO_LEN 64 /* about one sign request frame */

#define P11_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define TOKEN "sworn-bench"
#define USER_PIN "4711" /* the token is made here, for this run only */
#define SO_PIN "87654321"
#define P256_DATE "20240101" /* keygen labels keys sworn/<purpose>/<date>: one date per key */
#define ED25519_DATE "20240102"
#define P256_LABEL "sworn/receipt/" P256_DATE
#define ED25519_LABEL "sworn/receipt/" ED25519_DATE

#define TPM_HANDLE "0x81000001"
#define TPM_ALG "ecc256:ecdsa-sha256:null" /* tpm2-tools -G: ECDSA-SHA256 on P-256 */
#define TPM_ATTRS "sign|fixedtpm|fixedparent|sensitivedataorigin|userwithauth"

/* A new file with mode 0600: PIN files and keys must not be readable by others. */
static void write_secret(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t len = strlen(text);

    if (fd < 0)
        bench_die_sys(path);
    if (write(fd, text, len) != (ssize_t)len || close(fd) != 0)
        bench_die_sys(path);
}

/*
 * Make a fresh TPM state in <dir>/tpm, start swtpm on free loopback ports, make the persistent
 * P-256 key, and read its SPKI. OUT: tcti ("swtpm:host=127.0.0.1,port=N"), spki, *spki_len.
 */
static void start_swtpm(const char *dir, char *tcti, size_t tcti_cap, uint8_t *spki,
                        size_t *spki_len)
{
    char tdir[PATH_MAX_LEN], ctx[PATH_MAX_LEN], der[PATH_MAX_LEN];
    /* No resource manager: flush transient objects before and after, or the slots run out. */
    char *flush[] = {"tpm2_flushcontext", "-t", NULL};
    char *create[] = {"tpm2_createprimary",
                      "-Q",
                      "-C",
                      "o",
                      "-g",
                      "sha256",
                      "-G",
                      TPM_ALG,
                      "-a",
                      TPM_ATTRS,
                      "-c",
                      ctx,
                      NULL};
    char *evict[] = {"tpm2_evictcontrol", "-Q", "-C", "o", "-c", ctx, TPM_HANDLE, NULL};
    char *readpub[] = {"tpm2_readpublic", "-Q", "-c", TPM_HANDLE, "-f", "der", "-o", der, NULL};
    uint8_t buf[SWORN_SIGNER_SPKI_MAX + 1];

    bench_swtpm_start(dir, tcti, tcti_cap);
    bench_join_path(tdir, dir, "tpm");
    bench_join_path(ctx, tdir, "key.ctx");
    bench_join_path(der, tdir, "key.der");
    /* tpm2-tools find the TPM through this variable; the bench runs no other thread yet. */
    if (setenv("TPM2TOOLS_TCTI", tcti, 1) != 0)
        bench_die_sys("setenv");
    bench_run(tdir, flush, NULL);
    bench_run(tdir, create, NULL);
    bench_run(tdir, evict, NULL);
    bench_run(tdir, flush, NULL);
    bench_run(tdir, readpub, NULL);
    bench_read_small(der, buf, sizeof(buf), spki_len);
    if (*spki_len == 0)
        bench_die_msg("tpm2_readpublic wrote no SPKI");
    memcpy(spki, buf, *spki_len);
}

/*
 * Make the SoftHSM token with sworn-hsm (init-dev-token) and point SOFTHSM2_CONF at it; PIN files
 * 0600 in dir. OUT: pin_file (PATH_MAX_LEN).
 */
static void make_token(const char *dir, const char *hsm, char *pin_file)
{
    char tok[PATH_MAX_LEN], so_pin[PATH_MAX_LEN], conf[PATH_MAX_LEN];
    char *init[] = {(char *)hsm,     "init-dev-token", "--dir",      tok,      "--label", TOKEN,
                    "--so-pin-file", so_pin,           "--pin-file", pin_file, NULL};

    bench_join_path(tok, dir, "tok");
    bench_join_path(so_pin, dir, "so.pin");
    bench_join_path(pin_file, dir, "user.pin");
    bench_join_path(conf, tok, "softhsm2.conf");
    write_secret(pin_file, USER_PIN "\n"); /* a trailing newline, as an operator's editor adds */
    write_secret(so_pin, SO_PIN);
    bench_run(dir, init, NULL);
    /* SoftHSM finds its token folder through this variable, in the tools, in this process and
     * in the signer processes it forks. */
    if (setenv("SOFTHSM2_CONF", conf, 1) != 0)
        bench_die_sys("setenv");
}

/* Make a key on the token with `sworn-hsm keygen`; OUT: uri (PATH_MAX_LEN), spki, *spki_len. */
static void make_hsm_key(const char *dir, const char *hsm, const char *pin_file, const char *alg,
                         const char *date, char *uri, uint8_t *spki, size_t *spki_len)
{
    char out[PATH_MAX_LEN], der[PATH_MAX_LEN], name[64];
    char *keygen[] = {(char *)hsm, "keygen",     "--module",       P11_MODULE,   "--token",
                      TOKEN,       "--pin-file", (char *)pin_file, "--purpose",  "receipt",
                      "--alg",     (char *)alg,  "--date",         (char *)date, NULL};
    char *pubkey[] = {(char *)hsm, "pubkey", "--module", P11_MODULE, "--uri",
                      uri,         "--der",  "--out",    der,        NULL};
    uint8_t buf[SWORN_SIGNER_SPKI_MAX + 1];
    size_t len;

    snprintf(name, sizeof(name), "%s.uri", alg);
    bench_join_path(out, dir, name);
    snprintf(name, sizeof(name), "%s.der", alg);
    bench_join_path(der, dir, name);
    bench_run(dir, keygen, out);
    bench_read_small(out, (uint8_t *)uri, PATH_MAX_LEN, &len);
    uri[strcspn(uri, "\n")] = '\0';
    bench_run(dir, pubkey, NULL);
    bench_read_small(der, buf, sizeof(buf), spki_len);
    memcpy(spki, buf, *spki_len);
}

/* Make a PEM key file (mode 0600) and keep the key for the raw OpenSSL baseline.
 * OUT: uri (PATH_MAX_LEN, file:<path>). */
static EVP_PKEY *make_file_key(const char *dir, const char *name, int ed25519, char *uri)
{
    char path[PATH_MAX_LEN];
    EVP_PKEY *k = ed25519 ? EVP_PKEY_Q_keygen(NULL, NULL, "ED25519")
                          : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    FILE *f;
    int fd;

    if (k == NULL)
        bench_die_msg("OpenSSL key generation failed");
    bench_join_path(path, dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
        bench_die_sys(path);
    if (PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) != 1) {
        fclose(f);
        bench_die_msg("PEM_write_PrivateKey failed");
    }
    if (fclose(f) != 0)
        bench_die_sys(path);
    if (strlen(path) + sizeof("file:") > PATH_MAX_LEN)
        bench_die_msg("path too long");
    memcpy(uri, "file:", strlen("file:"));
    memcpy(uri + strlen("file:"), path, strlen(path) + 1);
    return k;
}

/* ---------------------------------------------------------------------------------------------
 * What one thread signs with. Every function signs one 32-byte digest (or the receipt TBS built
 * from it) and returns 0, or -1 with sworn_err set.
 */

typedef int (*sign_fn)(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len);

/* The receipt TBS of a digest, for the raw Ed25519 baselines, which sign it whole as the backend
 * does (prefix built once; the digest copied in per call). */
struct tbs_buf {
    uint8_t b[SWORN_SIGNER_TBS_MAX];
    size_t len;
};

static void tbs_init(struct tbs_buf *t)
{
    uint8_t zero[DIGEST_LEN] = {0};

    if (sworn_signer_tbs(SWORN_PURPOSE_RECEIPT, zero, sizeof(zero), t->b, &t->len) < 0)
        bench_die_lib("sworn_signer_tbs");
}

static void tbs_set(struct tbs_buf *t, const uint8_t digest[DIGEST_LEN])
{
    memcpy(t->b + t->len - DIGEST_LEN, digest, DIGEST_LEN);
}

/* Raw OpenSSL ECDSA: one EVP_PKEY_CTX per thread, initialised once (the fastest EVP way). */
static int sign_raw_ecdsa(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len)
{
    *len = SWORN_SIGNER_SIG_MAX;
    if (EVP_PKEY_sign(ctx, sig, len, digest, DIGEST_LEN) != 1)
        return sworn_err_set(SWORN_ERR_CRYPTO, "EVP_PKEY_sign failed");
    return 0;
}

struct raw_ed25519 {
    EVP_PKEY *key;
    EVP_MD_CTX *md;
    struct tbs_buf tbs;
};

/* Raw OpenSSL Ed25519: a one-shot EVP_DigestSign needs a fresh init for every message. */
static int sign_raw_ed25519(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len)
{
    struct raw_ed25519 *r = ctx;

    tbs_set(&r->tbs, digest);
    *len = SWORN_SIGNER_SIG_MAX;
    if (EVP_DigestSignInit(r->md, NULL, NULL, NULL, r->key) != 1 ||
        EVP_DigestSign(r->md, sig, len, r->tbs.b, r->tbs.len) != 1)
        return sworn_err_set(SWORN_ERR_CRYPTO, "Ed25519 EVP_DigestSign failed");
    return 0;
}

/* Raw PKCS#11: one session per thread, C_SignInit + C_Sign, nothing else. */
struct raw_session {
    CK_FUNCTION_LIST_PTR f;
    CK_SESSION_HANDLE s;
    CK_OBJECT_HANDLE key;
    CK_MECHANISM_TYPE mech;
    struct tbs_buf tbs; /* CKM_EDDSA signs the TBS itself */
};

static int sign_raw_p11(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len)
{
    struct raw_session *r = ctx;
    CK_MECHANISM m = {r->mech, NULL, 0};
    CK_ULONG n = SWORN_SIGNER_SIG_MAX;
    const uint8_t *data = digest;
    size_t data_len = DIGEST_LEN;
    CK_RV rv;

    if (r->mech == CKM_EDDSA) {
        tbs_set(&r->tbs, digest);
        data = r->tbs.b;
        data_len = r->tbs.len;
    }
    rv = r->f->C_SignInit(r->s, &m, r->key);
    if (rv == CKR_OK)
        rv = r->f->C_Sign(r->s, (CK_BYTE_PTR)data, (CK_ULONG)data_len, sig, &n);
    if (rv != CKR_OK)
        return sworn_err_set(SWORN_ERR_IO, "raw C_SignInit/C_Sign failed (CKR 0x%lx)",
                             (unsigned long)rv);
    *len = n;
    return 0;
}

static int sign_direct(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len)
{
    return sworn_signer_sign(ctx, SWORN_PURPOSE_RECEIPT, digest, DIGEST_LEN, sig,
                             SWORN_SIGNER_SIG_MAX, len);
}

static int sign_proc(void *ctx, const uint8_t digest[DIGEST_LEN], uint8_t *sig, size_t *len)
{
    return sworn_signer_proc_sign(ctx, SWORN_PURPOSE_RECEIPT, digest, DIGEST_LEN, sig,
                                  SWORN_SIGNER_SIG_MAX, len);
}

/* ---------------------------------------------------------------------------------------------
 * Figures. The figures of one key (its baselines, direct calls and signer processes) are measured
 * in ROUNDS rounds of slices, taking turns: load from elsewhere on a shared machine then slows
 * all of them alike, and the ratios between them hold better than the rates.
 */

struct figure {
    const char *name;
    sign_fn fn;
    int threads;
    void *ctx[MAX_THREADS];
    const uint8_t *spki; /* verify each thread's first signature (first round); NULL: do not */
    size_t spki_len;
    /*
     * For a device that allows one connection at a time (swtpm): open the signer or start the
     * process before each slice and close or stop it after, outside the timing. NULL: the
     * contexts stay open for the whole group.
     */
    void (*enter)(struct figure *f);
    void (*leave)(struct figure *f);
    const struct sworn_signer_config *cfg; /* what enter opens */
    /* Summed over the rounds. child_cpu: the signer processes' own CPU time (sign_proc
     * figures; -1 when the kernel does not tell it). */
    unsigned long count;
    double seconds, cs, cpu, child_cpu, child_wait;
    double min_rate, max_rate; /* of one slice */
};

struct worker {
    const struct figure *f;
    void *ctx;
    unsigned id;
    int verify;
    double seconds;
    unsigned long cap;
    pthread_barrier_t *go;
    unsigned long count;
    double took;
    int failed;
    char err[SWORN_ERR_MSG_MAX];
};

/* Distinct digests: the counter in the first bytes, the thread in the next. */
static void next_digest(uint8_t d[DIGEST_LEN], unsigned id, unsigned long i)
{
    for (int k = 0; k < 8; k++)
        d[k] = (uint8_t)(i >> (8 * k));
    d[8] = (uint8_t)id;
}

static void worker_fail(struct worker *w, const char *what)
{
    snprintf(w->err, sizeof(w->err), "%s: %s", what, sworn_err_msg());
    w->failed = 1;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    const struct figure *f = w->f;
    uint8_t digest[DIGEST_LEN], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;
    unsigned long n = 0;
    double t0, t = 0;
    int rc;

    memset(digest, 0x5a, sizeof(digest));
    for (unsigned long i = 0; i < WARMUP && !w->failed; i++) {
        next_digest(digest, w->id, i);
        if (f->fn(w->ctx, digest, sig, &sig_len) < 0)
            worker_fail(w, "signing (warm-up)");
        else if (i == 0 && w->verify && f->spki != NULL &&
                 sworn_signature_verify(f->spki, f->spki_len, SWORN_PURPOSE_RECEIPT, digest,
                                        DIGEST_LEN, sig, sig_len) < 0)
            worker_fail(w, "the first signature does not verify");
    }
    /* Every thread reaches the barrier, failed or not, or the others would wait for ever. */
    rc = pthread_barrier_wait(w->go);
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) {
        snprintf(w->err, sizeof(w->err), "pthread_barrier_wait: %s", strerror(rc));
        w->failed = 1;
    }
    if (w->failed)
        return NULL;
    t0 = bench_now();
    while (t < w->seconds && n < w->cap) {
        for (int i = 0; i < CHECK_EVERY; i++, n++) {
            next_digest(digest, w->id, WARMUP + n);
            if (f->fn(w->ctx, digest, sig, &sig_len) < 0) {
                worker_fail(w, "signing");
                return NULL;
            }
        }
        t = bench_now() - t0;
    }
    w->count = n;
    w->took = t;
    return NULL;
}

static double rusage_cpu(const struct rusage *r)
{
    return (double)r->ru_utime.tv_sec + (double)r->ru_utime.tv_usec / 1e6 +
           (double)r->ru_stime.tv_sec + (double)r->ru_stime.tv_usec / 1e6;
}

/* The CPU time (s) that the signer processes behind f's contexts have used so far, each counted
 * once, from /proc/PID/schedstat (ns on the CPU; the child is single-threaded), and the time they
 * were ready to run but waited for a CPU (*wait); -1 when the kernel does not tell. *pids sums
 * their pids, so that a slice in which a child was replaced is seen and not counted. */
static double child_cpu_now(const struct figure *f, double *wait, long *pids)
{
    double total = 0;

    *wait = 0;
    *pids = 0;
    if (f->fn != sign_proc)
        return -1;
    for (int i = 0; i < f->threads; i++) {
        char path[64];
        unsigned long long ns = 0, queued = 0;
        FILE *in;
        int seen = 0;
        pid_t pid;

        for (int k = 0; k < i; k++)
            seen |= f->ctx[k] == f->ctx[i];
        if (seen)
            continue;
        pid = sworn_signer_proc_pid(f->ctx[i]);
        *pids += (long)pid;
        snprintf(path, sizeof(path), "/proc/%ld/schedstat", (long)pid);
        in = pid > 0 ? fopen(path, "r") : NULL;
        if (in == NULL)
            return -1;
        if (fscanf(in, "%llu %llu", &ns, &queued) != 2)
            ns = queued = 0;
        fclose(in);
        total += (double)ns / 1e9;
        *wait += (double)queued / 1e9;
    }
    return total;
}

/* One slice of a figure: all its threads start together after their warm-up; the slice's rate is
 * all signatures over the longest thread's time. */
static void run_slice(struct figure *f, double seconds, int verify)
{
    struct worker w[MAX_THREADS];
    pthread_t t[MAX_THREADS];
    pthread_barrier_t go;
    struct rusage r0, r1;
    unsigned long total = 0;
    double longest = 0, rate, child0, child1, wait0, wait1;
    long pids0, pids1;
    int rc;

    bench_check_pt(pthread_barrier_init(&go, NULL, (unsigned)f->threads + 1),
                   "pthread_barrier_init");
    for (int i = 0; i < f->threads; i++) {
        w[i] = (struct worker){.f = f,
                               .ctx = f->ctx[i],
                               .id = (unsigned)i,
                               .verify = verify,
                               .seconds = seconds,
                               .cap = COUNT_CAP / ROUNDS,
                               .go = &go};
        bench_check_pt(pthread_create(&t[i], NULL, worker_main, &w[i]), "pthread_create");
    }
    rc = pthread_barrier_wait(&go);
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD)
        bench_check_pt(rc, "pthread_barrier_wait");
    if (getrusage(RUSAGE_SELF, &r0) != 0)
        bench_die_sys("getrusage");
    child0 = child_cpu_now(f, &wait0, &pids0);
    for (int i = 0; i < f->threads; i++)
        bench_check_pt(pthread_join(t[i], NULL), "pthread_join");
    if (getrusage(RUSAGE_SELF, &r1) != 0)
        bench_die_sys("getrusage");
    child1 = child_cpu_now(f, &wait1, &pids1);
    bench_check_pt(pthread_barrier_destroy(&go), "pthread_barrier_destroy");
    for (int i = 0; i < f->threads; i++) {
        if (w[i].failed) {
            fprintf(stderr, "bench_signer: %s, thread %d: %s\n", f->name, i, w[i].err);
            exit(1);
        }
        total += w[i].count;
        if (w[i].took > longest)
            longest = w[i].took;
    }
    if (total == 0 || longest <= 0)
        bench_die_msg("a slice measured nothing");
    rate = (double)total / longest;
    if (f->count == 0 || rate < f->min_rate)
        f->min_rate = rate;
    if (f->count == 0 || rate > f->max_rate)
        f->max_rate = rate;
    f->count += total;
    f->seconds += longest;
    f->cs += (double)(r1.ru_nvcsw - r0.ru_nvcsw + r1.ru_nivcsw - r0.ru_nivcsw);
    f->cpu += rusage_cpu(&r1) - rusage_cpu(&r0);
    if (child0 < 0 || child1 < 0 || pids0 != pids1 || f->child_cpu < 0)
        f->child_cpu = -1;
    else
        f->child_cpu += child1 - child0;
    f->child_wait += wait1 - wait0;
}

/* Measure figures f[0..n) in turns, FIGURE_SECONDS each in all. */
static void measure(struct figure *f, int n)
{
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < n; i++) {
            if (f[i].enter != NULL)
                f[i].enter(&f[i]);
            run_slice(&f[i], FIGURE_SECONDS / ROUNDS, r == 0);
            if (f[i].leave != NULL)
                f[i].leave(&f[i]);
        }
}

static double rate(const struct figure *f)
{
    return (double)f->count / f->seconds;
}

/* ---------------------------------------------------------------------------------------------
 * The table.
 */

static void header(const char *title)
{
    printf("\n== %s\n", title);
}

static void row(const struct figure *f, const char *ratio_fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void row(const struct figure *f, const char *ratio_fmt, ...)
{
    char ratio[200] = "";
    double r = rate(f);
    va_list ap;

    va_start(ap, ratio_fmt);
    vsnprintf(ratio, sizeof(ratio), ratio_fmt, ap);
    va_end(ap);
    printf("  %-42s %8.0f %6.0f%% %6.2f %7.1f  %s\n", f->name, r,
           100.0 * (f->max_rate - f->min_rate) / r, f->cs / (double)f->count,
           1e6 * f->cpu / (double)f->count, ratio);
}

static void row_na(const char *figure, const char *why)
{
    printf("  %-42s %8s %7s %6s %7s  %s\n", figure, "n/a", "", "", "", why);
}

static const char *verdict(double ratio)
{
    return ratio >= TARGET ? "PASS" : "MISS";
}

/* The spec's checks, printed again at the end. */
#define CHECKS_MAX 32
static struct check {
    char what[96];
    double ratio;
} checks[CHECKS_MAX];
static int n_checks;

static void add_check(const char *tag, const char *what, double ratio)
{
    if (n_checks == CHECKS_MAX)
        bench_die_msg("too many checks");
    snprintf(checks[n_checks].what, sizeof(checks[n_checks].what), "%s: %s", tag, what);
    checks[n_checks++].ratio = ratio;
}

/* ---------------------------------------------------------------------------------------------
 * Micro baselines: what the signer adds around a device call, measured on this machine.
 */

static volatile unsigned char sink; /* keeps the echo loop's reads from being optimised away */

struct handoff {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int queued, done, quit;
};

/* The worker side of signer/watchdog.c's pattern: wait for a call, "run" it, say it is done. */
static void *handoff_worker(void *arg)
{
    struct handoff *h = arg;

    bench_check_pt(pthread_mutex_lock(&h->m), "pthread_mutex_lock");
    for (;;) {
        while (!h->queued && !h->quit)
            bench_check_pt(pthread_cond_wait(&h->cv, &h->m), "pthread_cond_wait");
        if (!h->queued)
            break;
        h->queued = 0;
        h->done = 1;
        bench_check_pt(pthread_cond_broadcast(&h->cv), "pthread_cond_broadcast");
    }
    bench_check_pt(pthread_mutex_unlock(&h->m), "pthread_mutex_unlock");
    return NULL;
}

/* Round trips/s of an empty call handed to a worker thread and waited for, as watchdog.c does
 * (it waits with a deadline: pthread_cond_timedwait). */
static double bench_handoff(void)
{
    struct handoff h = {.queued = 0};
    struct timespec far;
    unsigned long n = 0;
    double t0, t = 0;
    pthread_t th;

    bench_check_pt(pthread_mutex_init(&h.m, NULL), "pthread_mutex_init");
    bench_check_pt(pthread_cond_init(&h.cv, NULL), "pthread_cond_init");
    bench_check_pt(pthread_create(&th, NULL, handoff_worker, &h), "pthread_create");
    if (clock_gettime(CLOCK_REALTIME, &far) != 0)
        bench_die_sys("clock_gettime");
    far.tv_sec += 60;
    t0 = bench_now();
    while (t < MICRO_SECONDS && n < MICRO_CAP) {
        for (int i = 0; i < CHECK_EVERY; i++, n++) {
            bench_check_pt(pthread_mutex_lock(&h.m), "pthread_mutex_lock");
            h.done = 0;
            h.queued = 1;
            bench_check_pt(pthread_cond_broadcast(&h.cv), "pthread_cond_broadcast");
            while (!h.done) {
                int rc = pthread_cond_timedwait(&h.cv, &h.m, &far);

                if (rc != 0)
                    bench_check_pt(rc, "pthread_cond_timedwait");
            }
            bench_check_pt(pthread_mutex_unlock(&h.m), "pthread_mutex_unlock");
        }
        t = bench_now() - t0;
    }
    bench_check_pt(pthread_mutex_lock(&h.m), "pthread_mutex_lock");
    h.quit = 1;
    bench_check_pt(pthread_cond_broadcast(&h.cv), "pthread_cond_broadcast");
    bench_check_pt(pthread_mutex_unlock(&h.m), "pthread_mutex_unlock");
    bench_check_pt(pthread_join(th, NULL), "pthread_join");
    pthread_cond_destroy(&h.cv);
    pthread_mutex_destroy(&h.m);
    return (double)n / t;
}

/* Read exactly len bytes (a stream socket may split them). Returns 0, or -1 at end of stream. */
static int read_full(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Round trips/s of a 64-byte message to a forked child over a socketpair and back: the floor of
 * what the signer process adds to a call (signerproc.c also polls for its deadline and frames). */
static double bench_socket_rt(void)
{
    uint8_t buf[ECHO_LEN];
    unsigned long n = 0;
    double t0, t = 0;
    int sv[2], status;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        bench_die_sys("socketpair");
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        while (read_full(sv[1], buf, sizeof(buf)) == 0)
            if (write(sv[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
                _exit(1);
        _exit(0);
    }
    if (pid < 0)
        bench_die_sys("fork");
    close(sv[1]);
    memset(buf, 0x42, sizeof(buf));
    t0 = bench_now();
    while (t < MICRO_SECONDS && n < MICRO_CAP) {
        for (int i = 0; i < CHECK_EVERY; i++, n++) {
            if (write(sv[0], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
                bench_die_sys("echo write");
            if (read_full(sv[0], buf, sizeof(buf)) < 0)
                bench_die_msg("the echo child went away");
            sink ^= buf[0];
        }
        t = bench_now() - t0;
    }
    close(sv[0]);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            bench_die_sys("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die_msg("the echo child failed");
    return (double)n / t;
}

/* ---------------------------------------------------------------------------------------------
 * Raw PKCS#11 on the same token.
 */

struct raw_p11 {
    CK_FUNCTION_LIST_PTR f;
    CK_SLOT_ID slot;
};

/*
 * dlopen the module and C_Initialize it, and find the token's slot. The module stays mapped
 * afterwards (no dlclose), as the signer backend keeps it: both load the same path.
 */
static void raw_p11_load(struct raw_p11 *m)
{
    CK_C_GetFunctionList get_list;
    CK_C_INITIALIZE_ARGS args;
    CK_SLOT_ID slots[16];
    CK_ULONG n = 16;
    void *dl = dlopen(P11_MODULE, RTLD_NOW | RTLD_LOCAL);
    CK_RV rv;

    if (dl == NULL)
        bench_die_msg("cannot dlopen the SoftHSM module");
    *(void **)&get_list = dlsym(dl, "C_GetFunctionList");
    if (get_list == NULL || get_list(&m->f) != CKR_OK)
        bench_die_msg("C_GetFunctionList failed");
    memset(&args, 0, sizeof(args));
    args.flags = CKF_OS_LOCKING_OK; /* two threads call it, as the signer's watchdogs do */
    rv = m->f->C_Initialize(&args);
    if (rv == CKR_OK)
        rv = m->f->C_GetSlotList(CK_TRUE, slots, &n);
    for (CK_ULONG i = 0; rv == CKR_OK && i < n; i++) {
        CK_TOKEN_INFO info;
        char label[sizeof(info.label) + 1];

        if (m->f->C_GetTokenInfo(slots[i], &info) != CKR_OK)
            continue;
        memcpy(label, info.label, sizeof(info.label));
        label[sizeof(info.label)] = '\0';
        label[strcspn(label, " ")] = '\0';
        if (strcmp(label, TOKEN) == 0) {
            m->slot = slots[i];
            return;
        }
    }
    fprintf(stderr, "bench_signer: raw PKCS#11: no token %s (CKR 0x%lx)\n", TOKEN,
            (unsigned long)rv);
    exit(1);
}

/* A session of its own, logged in, with the private key that has this label. */
static void raw_p11_session(const struct raw_p11 *m, const char *label, CK_MECHANISM_TYPE mech,
                            struct raw_session *out)
{
    CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
    CK_ATTRIBUTE t[2] = {{CKA_CLASS, &cls, sizeof(cls)}, {CKA_LABEL, (void *)label, strlen(label)}};
    CK_OBJECT_HANDLE h[2];
    CK_ULONG found = 0;
    CK_RV rv;

    memset(out, 0, sizeof(*out));
    out->f = m->f;
    out->mech = mech;
    tbs_init(&out->tbs);
    rv = m->f->C_OpenSession(m->slot, CKF_SERIAL_SESSION, NULL, NULL, &out->s);
    /* Login is per token, not per session: the second session finds it done. */
    if (rv == CKR_OK) {
        rv = m->f->C_Login(out->s, CKU_USER, (CK_UTF8CHAR_PTR)USER_PIN, strlen(USER_PIN));
        if (rv == CKR_USER_ALREADY_LOGGED_IN)
            rv = CKR_OK;
    }
    if (rv == CKR_OK)
        rv = m->f->C_FindObjectsInit(out->s, t, 2);
    if (rv == CKR_OK) {
        rv = m->f->C_FindObjects(out->s, h, 2, &found);
        if (m->f->C_FindObjectsFinal(out->s) != CKR_OK && rv == CKR_OK)
            rv = CKR_GENERAL_ERROR;
    }
    if (rv != CKR_OK || found != 1) {
        fprintf(stderr, "bench_signer: raw PKCS#11 session for %s: CKR 0x%lx, %lu keys found\n",
                label, (unsigned long)rv, (unsigned long)found);
        exit(1);
    }
    out->key = h[0];
}

/* ---------------------------------------------------------------------------------------------
 * Raw OpenSSL contexts, one per thread.
 */

struct raw_openssl {
    EVP_PKEY_CTX *pc[KEY_CONTEXTS]; /* ECDSA: initialised once (the fastest EVP way) */
    struct raw_ed25519 ed[KEY_CONTEXTS];
};

static void raw_openssl_init(struct raw_openssl *r, EVP_PKEY *key, int ed25519, void *ctx[])
{
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < KEY_CONTEXTS; i++) {
        if (ed25519) {
            r->ed[i].key = key;
            r->ed[i].md = EVP_MD_CTX_new();
            if (r->ed[i].md == NULL)
                bench_die_msg("EVP_MD_CTX_new failed");
            tbs_init(&r->ed[i].tbs);
            ctx[i] = &r->ed[i];
        } else {
            r->pc[i] = EVP_PKEY_CTX_new(key, NULL);
            if (r->pc[i] == NULL || EVP_PKEY_sign_init(r->pc[i]) != 1 ||
                EVP_PKEY_CTX_set_signature_md(r->pc[i], EVP_sha256()) != 1)
                bench_die_msg("EVP_PKEY_sign_init failed");
            ctx[i] = r->pc[i];
        }
    }
}

static void raw_openssl_free(struct raw_openssl *r)
{
    for (int i = 0; i < KEY_CONTEXTS; i++) {
        EVP_MD_CTX_free(r->ed[i].md);
        EVP_PKEY_CTX_free(r->pc[i]);
    }
}

/* ---------------------------------------------------------------------------------------------
 * The keys' groups.
 */

struct group {
    const char *title;
    const char *tag; /* for the checks at the end */
    struct sworn_signer_config cfg;
    const uint8_t *spki; /* to verify first signatures: the pin, or the file key's */
    size_t spki_len;
    const char *base_name; /* the raw baseline of the direct figures */
    const char *base_what; /* what it does, for its row */
    sign_fn base_fn;
    void *base_ctx[KEY_CONTEXTS];
    int target; /* direct / raw is a target of the spec (the PKCS#11 backend) */
    struct sworn_signer_proc *proc[KEY_CONTEXTS]; /* started before any thread */
};

static void open_signer(const struct sworn_signer_config *cfg, struct sworn_signer **s)
{
    if (sworn_signer_open(cfg, s) < 0)
        bench_die_lib("sworn_signer_open");
}

static void start_proc(const struct sworn_signer_config *cfg, struct sworn_signer_proc **p)
{
    if (sworn_signer_proc_start(cfg, NULL, p) < 0)
        bench_die_lib("sworn_signer_proc_start");
}

/* The time a call takes more than its baseline's (each of threads callers waits its own). */
static double added_us(const struct figure *f, const struct figure *base, int threads)
{
    return 1e6 * threads * (1.0 / rate(f) - 1.0 / rate(base));
}

/* Direct / raw, with the target when there is one. */
static void direct_row(const struct group *g, const struct figure *direct, const struct figure *raw,
                       int threads)
{
    double ratio = rate(direct) / rate(raw);
    char what[64];

    if (!g->target) {
        row(direct, "%.2f x %s; %+.1f us/call", ratio, raw->name, added_us(direct, raw, threads));
        return;
    }
    row(direct, "%.2f x %s; %+.1f us/call  %s", ratio, raw->name, added_us(direct, raw, threads),
        verdict(ratio));
    snprintf(what, sizeof(what), "direct / raw PKCS#11, %d thread%s", threads,
             threads == 1 ? "" : "s");
    add_check(g->tag, what, ratio);
}

static void proc_row(const struct group *g, const struct figure *proc, const struct figure *direct,
                     int threads)
{
    double ratio = rate(proc) / rate(direct);
    char what[64];

    row(proc, "%.2f x %s; %+.1f us/call  %s", ratio, direct->name, added_us(proc, direct, threads),
        verdict(ratio));
    snprintf(what, sizeof(what), "signer process / direct, %d thread%s", threads,
             threads == 1 ? "" : "s");
    add_check(g->tag, what, ratio);
}

/* Callers sharing one signer process / the key's raw rate with one thread, and its target. One
 * caller cannot pipeline (each signature waits for the round trip before the next is asked for):
 * its ratio is shown against the target but is not one of the spec's checks. */
static void pipe_row(const struct group *g, const struct figure *proc, const struct figure *raw,
                     int callers)
{
    double ratio = rate(proc) / rate(raw);
    char what[64];

    printf("    %d caller%s %8.0f sigs/s = %.2f x raw  target >= %.2f  %-4s", callers,
           callers == 1 ? " " : "s", rate(proc), ratio, TARGET,
           callers == 1 ? "-" : verdict(ratio));
    /* Why, on a shared machine: the child's CPU per signature against the raw thread's, and
     * where its time went: on a CPU, ready but waiting for one (other load), or idle (nothing to
     * sign: the pipeline ran dry). */
    if (proc->child_cpu >= 0)
        printf("  child %.1f us cpu/sig (raw %.1f); %.0f%% on cpu, %.0f%% waiting for one, %.0f%% "
               "idle\n",
               1e6 * proc->child_cpu / (double)proc->count, 1e6 * raw->cpu / (double)raw->count,
               100.0 * proc->child_cpu / proc->seconds, 100.0 * proc->child_wait / proc->seconds,
               100.0 * (1 - (proc->child_cpu + proc->child_wait) / proc->seconds));
    else
        printf("\n");
    if (callers == 1 || !g->target)
        return;
    snprintf(what, sizeof(what), "one signer process, %d callers / raw", callers);
    add_check(g->tag, what, ratio);
}

/* A key whose contexts may all be open at once (file, pkcs11): seven figures, interleaved. */
static void bench_group(struct group *g)
{
    struct sworn_signer *s[KEY_CONTEXTS];
    char base1[64], base2[64];
    enum { RAW1, DIRECT1, PROC1, RAW2, DIRECT2, SHARED2, EACH2, SHARED4, SHARED8, N_FIGS };
    struct figure f[N_FIGS];

    snprintf(base1, sizeof(base1), "%s, 1 thread", g->base_name);
    snprintf(base2, sizeof(base2), "%s, 2 threads", g->base_name);
    open_signer(&g->cfg, &s[0]);
    open_signer(&g->cfg, &s[1]);
    memset(f, 0, sizeof(f));
    f[RAW1] =
        (struct figure){.name = base1, .fn = g->base_fn, .threads = 1, .ctx = {g->base_ctx[0]}};
    f[DIRECT1] = (struct figure){.name = "direct, 1 thread",
                                 .fn = sign_direct,
                                 .threads = 1,
                                 .ctx = {s[0]},
                                 .spki = g->spki,
                                 .spki_len = g->spki_len};
    f[PROC1] = (struct figure){.name = "signer process, 1 thread",
                               .fn = sign_proc,
                               .threads = 1,
                               .ctx = {g->proc[0]},
                               .spki = g->spki,
                               .spki_len = g->spki_len};
    f[RAW2] = (struct figure){
        .name = base2, .fn = g->base_fn, .threads = 2, .ctx = {g->base_ctx[0], g->base_ctx[1]}};
    f[DIRECT2] = (struct figure){.name = "direct, 2 threads, a signer each",
                                 .fn = sign_direct,
                                 .threads = 2,
                                 .ctx = {s[0], s[1]},
                                 .spki = g->spki,
                                 .spki_len = g->spki_len};
    f[SHARED2] = (struct figure){.name = "signer process, 2 threads sharing one",
                                 .fn = sign_proc,
                                 .threads = 2,
                                 .ctx = {g->proc[0], g->proc[0]},
                                 .spki = g->spki,
                                 .spki_len = g->spki_len};
    f[EACH2] = (struct figure){.name = "signer process, 2 threads, one each",
                               .fn = sign_proc,
                               .threads = 2,
                               .ctx = {g->proc[0], g->proc[1]},
                               .spki = g->spki,
                               .spki_len = g->spki_len};
    f[SHARED4] = (struct figure){.name = "signer process, 4 callers sharing one",
                                 .fn = sign_proc,
                                 .threads = 4,
                                 .spki = g->spki,
                                 .spki_len = g->spki_len};
    f[SHARED8] = (struct figure){.name = "signer process, 8 callers sharing one",
                                 .fn = sign_proc,
                                 .threads = 8,
                                 .spki = g->spki,
                                 .spki_len = g->spki_len};
    for (int i = 0; i < MAX_THREADS; i++)
        f[SHARED4].ctx[i] = f[SHARED8].ctx[i] = g->proc[0];
    measure(f, N_FIGS);
    /* The second signer to open shares the module the first one loaded: close it first. */
    sworn_signer_close(s[1]);
    sworn_signer_close(s[0]);

    header(g->title);
    row(&f[RAW1], "baseline: %s", g->base_what);
    direct_row(g, &f[DIRECT1], &f[RAW1], 1);
    proc_row(g, &f[PROC1], &f[DIRECT1], 1);
    row(&f[RAW2], "baseline, a context each");
    direct_row(g, &f[DIRECT2], &f[RAW2], 2);
    row(&f[SHARED2], "%.2f x %s (one child, pipelined)", rate(&f[SHARED2]) / rate(&f[DIRECT1]),
        f[DIRECT1].name);
    proc_row(g, &f[EACH2], &f[DIRECT2], 2);
    row(&f[SHARED4], "%.2f x %s (one child, pipelined)", rate(&f[SHARED4]) / rate(&f[DIRECT1]),
        f[DIRECT1].name);
    row(&f[SHARED8], "%.2f x %s (one child, pipelined)", rate(&f[SHARED8]) / rate(&f[DIRECT1]),
        f[DIRECT1].name);
    /* One child signs one request at a time: the most it can reach is the key's raw rate with
     * one thread. Pipelined requests from several callers should keep it that busy. */
    printf("  through one signer process / %s (target >= %.2f with 2+ callers):\n", f[RAW1].name,
           TARGET);
    pipe_row(g, &f[PROC1], &f[RAW1], 1);
    pipe_row(g, &f[SHARED2], &f[RAW1], 2);
    pipe_row(g, &f[SHARED4], &f[RAW1], 4);
    pipe_row(g, &f[SHARED8], &f[RAW1], 8);
}

/* swtpm serves one client connection at a time: a TPM figure opens its signer or starts its
 * process before each of its slices and closes or stops it after. */
static void tpm_open_direct(struct figure *f)
{
    open_signer(f->cfg, (struct sworn_signer **)&f->ctx[0]);
}

static void tpm_close_direct(struct figure *f)
{
    sworn_signer_close(f->ctx[0]);
    f->ctx[0] = NULL;
}

static void tpm_start_proc(struct figure *f)
{
    start_proc(f->cfg, (struct sworn_signer_proc **)&f->ctx[0]);
    f->ctx[1] = f->ctx[0];
}

static void tpm_stop_proc(struct figure *f)
{
    sworn_signer_proc_stop(f->ctx[0]);
    f->ctx[0] = f->ctx[1] = NULL;
}

static void bench_tpm(const struct sworn_signer_config *cfg, const uint8_t *spki, size_t spki_len)
{
    enum { DIRECT1, PROC1, SHARED2, N_FIGS };
    struct figure f[N_FIGS];

    memset(f, 0, sizeof(f));
    f[DIRECT1] = (struct figure){.name = "direct, 1 thread",
                                 .fn = sign_direct,
                                 .threads = 1,
                                 .enter = tpm_open_direct,
                                 .leave = tpm_close_direct};
    f[PROC1] = (struct figure){.name = "signer process, 1 thread",
                               .fn = sign_proc,
                               .threads = 1,
                               .enter = tpm_start_proc,
                               .leave = tpm_stop_proc};
    f[SHARED2] = (struct figure){.name = "signer process, 2 threads sharing one",
                                 .fn = sign_proc,
                                 .threads = 2,
                                 .enter = tpm_start_proc,
                                 .leave = tpm_stop_proc};
    for (int i = 0; i < N_FIGS; i++) {
        f[i].cfg = cfg;
        f[i].spki = spki;
        f[i].spki_len = spki_len;
    }
    measure(f, N_FIGS);

    header("tpm P-256 (swtpm over loopback TCP: a software TPM, not a chip)");
    row(&f[DIRECT1], "no raw baseline: swtpm's rate is no hardware TPM's");
    row_na("direct, 2 threads, a signer each", "swtpm serves one connection at a time");
    proc_row(&(struct group){.tag = "tpm P-256"}, &f[PROC1], &f[DIRECT1], 1);
    row(&f[SHARED2], "%.2f x %s (one child serves both in turn)",
        rate(&f[SHARED2]) / rate(&f[DIRECT1]), f[DIRECT1].name);
    row_na("signer process, 2 threads, one each", "swtpm serves one connection at a time");
}

static void spki_of(EVP_PKEY *key, uint8_t *spki, size_t *len)
{
    unsigned char *q = spki;
    int n = i2d_PUBKEY(key, NULL);

    if (n <= 0 || n > SWORN_SIGNER_SPKI_MAX || i2d_PUBKEY(key, &q) != n)
        bench_die_msg("i2d_PUBKEY failed");
    *len = (size_t)n;
}

int main(int argc, char **argv)
{
    char file_p256_uri[PATH_MAX_LEN], file_ed_uri[PATH_MAX_LEN], hsm_p256_uri[PATH_MAX_LEN],
        hsm_ed_uri[PATH_MAX_LEN], pin_file[PATH_MAX_LEN], tcti[128];
    uint8_t file_p256_spki[SWORN_SIGNER_SPKI_MAX], file_ed_spki[SWORN_SIGNER_SPKI_MAX],
        hsm_p256_spki[SWORN_SIGNER_SPKI_MAX], hsm_ed_spki[SWORN_SIGNER_SPKI_MAX],
        tpm_spki[SWORN_SIGNER_SPKI_MAX];
    size_t file_p256_len, file_ed_len, hsm_p256_len, hsm_ed_len, tpm_len;
    struct raw_openssl raw_p256, raw_ed;
    struct raw_session sess[2][KEY_CONTEXTS];
    struct raw_p11 m;
    EVP_PKEY *p256_key, *ed_key;
    const char *dir, *hsm;
    double handoff, socket_rt, t0 = bench_now();
    int misses = 0;

    if (argc < 2 || argc > 3 || argv[1][0] != '/') {
        fprintf(stderr, "usage: bench_signer DIR [SWORN_HSM]   (DIR absolute; SWORN_HSM defaults "
                        "to $SWORN_HSM_BIN)\n");
        return 1;
    }
    dir = argv[1];
    hsm = argc == 3 ? argv[2] : getenv("SWORN_HSM_BIN");
    if (hsm == NULL || hsm[0] == '\0')
        bench_die_msg("no sworn-hsm binary: pass it as the second argument or set SWORN_HSM_BIN");
    bench_init("bench_signer");
    /* Lines appear as they are measured, also through scripts/bench's pipe. */
    if (setvbuf(stdout, NULL, _IOLBF, 0) != 0)
        bench_die_msg("setvbuf failed");

    /* Setup, while this process runs no other thread (it forks tools). */
    p256_key = make_file_key(dir, "p256.pem", 0, file_p256_uri);
    ed_key = make_file_key(dir, "ed25519.pem", 1, file_ed_uri);
    spki_of(p256_key, file_p256_spki, &file_p256_len);
    spki_of(ed_key, file_ed_spki, &file_ed_len);
    make_token(dir, hsm, pin_file);
    make_hsm_key(dir, hsm, pin_file, "p256", P256_DATE, hsm_p256_uri, hsm_p256_spki, &hsm_p256_len);
    make_hsm_key(dir, hsm, pin_file, "ed25519", ED25519_DATE, hsm_ed_uri, hsm_ed_spki, &hsm_ed_len);
    start_swtpm(dir, tcti, sizeof(tcti), tpm_spki, &tpm_len);

    {
        struct group all[] = {
            {.title = "file P-256 (PEM key in memory; development only)",
             .tag = "file P-256",
             .cfg = {.uri = file_p256_uri},
             .spki = file_p256_spki,
             .spki_len = file_p256_len,
             .base_name = "raw OpenSSL ECDSA",
             .base_what = "EVP_PKEY_sign of a 32-byte digest",
             .base_fn = sign_raw_ecdsa},
            {.title = "file Ed25519 (PEM key in memory; development only)",
             .tag = "file Ed25519",
             .cfg = {.uri = file_ed_uri},
             .spki = file_ed_spki,
             .spki_len = file_ed_len,
             .base_name = "raw OpenSSL Ed25519",
             .base_what = "EVP_DigestSign of the 50-byte receipt TBS",
             .base_fn = sign_raw_ed25519},
            {.title = "pkcs11 P-256 (SoftHSM token, CKM_ECDSA)",
             .tag = "pkcs11 P-256",
             .cfg = {.uri = hsm_p256_uri,
                     .module_path = P11_MODULE,
                     .pin_file = pin_file,
                     .pinned_spki = hsm_p256_spki,
                     .pinned_spki_len = hsm_p256_len},
             .spki = hsm_p256_spki,
             .spki_len = hsm_p256_len,
             .base_name = "raw PKCS#11",
             .base_what = "C_SignInit + C_Sign, 32-byte digest, same token",
             .base_fn = sign_raw_p11,
             .target = 1},
            {.title = "pkcs11 Ed25519 (SoftHSM token, CKM_EDDSA)",
             .tag = "pkcs11 Ed25519",
             .cfg = {.uri = hsm_ed_uri,
                     .module_path = P11_MODULE,
                     .pin_file = pin_file,
                     .pinned_spki = hsm_ed_spki,
                     .pinned_spki_len = hsm_ed_len},
             .spki = hsm_ed_spki,
             .spki_len = hsm_ed_len,
             .base_name = "raw PKCS#11",
             .base_what = "C_SignInit + C_Sign, 50-byte receipt TBS, same token",
             .base_fn = sign_raw_p11,
             .target = 1},
        };
        const size_t n = sizeof(all) / sizeof(all[0]);
        struct sworn_signer_config tpm_cfg = {.uri = "tpm:handle=" TPM_HANDLE,
                                              .tcti = tcti,
                                              .pinned_spki = tpm_spki,
                                              .pinned_spki_len = tpm_len};

        /* Every signer process is forked now, from a process that holds no module and runs no
         * other thread: what signerproc.h asks of its owner (the TPM's come later, one at a time).
         */
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < KEY_CONTEXTS; k++)
                start_proc(&all[i].cfg, &all[i].proc[k]);
        printf("setup: 2 PEM keys, a SoftHSM token with 2 keys (sworn-hsm), swtpm with a P-256 "
               "key, %zu signer processes: %.1f s\n",
               n * KEY_CONTEXTS, bench_now() - t0);
        printf("each figure: %d slices of %.2f s taking turns with the other figures of its key, "
               "after %d untimed signatures per thread\n",
               ROUNDS, FIGURE_SECONDS / ROUNDS, WARMUP);
        printf("\n  %-42s %8s %7s %6s %7s  %s\n", "figure", "sigs/s", "spread", "cs/sig", "cpu us",
               "ratio vs baseline (same run, interleaved)");
        printf("  %-42s %8s %7s %6s %7s  %s\n", "", "", "(slices)", "", "",
               "cs/sig, cpu us: this process only (not a signer child), all threads");

        header("Baselines of the overheads");
        handoff = bench_handoff();
        printf("  %-42s %8.0f %7s %6s %7s  %s\n", "handoff to a worker thread and back", handoff,
               "", "", "", "round trips/s: signer/watchdog.c's pattern, empty call");
        socket_rt = bench_socket_rt();
        printf("  %-42s %8.0f %7s %6s %7s  %s\n", "socketpair round trip to a child, 64 B",
               socket_rt, "", "", "", "round trips/s: the least the signer process adds");

        raw_openssl_init(&raw_p256, p256_key, 0, all[0].base_ctx);
        raw_openssl_init(&raw_ed, ed_key, 1, all[1].base_ctx);
        /* The raw sessions share the module with the direct signers (which then find it
         * initialised and leave it to us); one figure runs at a time, so they do not compete. */
        raw_p11_load(&m);
        for (int k = 0; k < KEY_CONTEXTS; k++) {
            raw_p11_session(&m, P256_LABEL, CKM_ECDSA, &sess[0][k]);
            raw_p11_session(&m, ED25519_LABEL, CKM_EDDSA, &sess[1][k]);
            all[2].base_ctx[k] = &sess[0][k];
            all[3].base_ctx[k] = &sess[1][k];
        }
        for (size_t i = 0; i < n; i++)
            bench_group(&all[i]);
        for (int k = 0; k < KEY_CONTEXTS; k++)
            if (m.f->C_CloseSession(sess[0][k].s) != CKR_OK ||
                m.f->C_CloseSession(sess[1][k].s) != CKR_OK)
                bench_die_msg("C_CloseSession failed");
        if (m.f->C_Finalize(NULL) != CKR_OK)
            bench_die_msg("C_Finalize failed");
        raw_openssl_free(&raw_p256);
        raw_openssl_free(&raw_ed);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < KEY_CONTEXTS; k++)
                sworn_signer_proc_stop(all[i].proc[k]);

        bench_tpm(&tpm_cfg, tpm_spki, tpm_len);
    }
    bench_swtpm_stop();
    EVP_PKEY_free(p256_key);
    EVP_PKEY_free(ed_key);

    header("Against the spec (information, not an exit status)");
    for (int i = 0; i < n_checks; i++) {
        printf("  %-58s %s (%.2f; target >= %.2f)\n", checks[i].what, verdict(checks[i].ratio),
               checks[i].ratio, TARGET);
        misses += checks[i].ratio < TARGET;
    }
    printf("  %d of %d met. What the signer adds, measured above: a thread handoff per device\n"
           "  call (%.1f us here; pkcs11 and tpm only) and, through the signer process, a socket\n"
           "  round trip on top (%.1f us here).\n",
           n_checks - misses, n_checks, 1e6 / handoff, 1e6 / socket_rt);
    return 0;
}
