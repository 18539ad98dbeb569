/*
 * test_signer_proc.c -- unit tests of the signer process (decisiond/signerproc.c,
 * signer/sworn-signer.c) and its wire format (ipc.c).
 *
 * The codec: every message type round-trips; hostile frames (truncated headers, huge or wrong
 * lengths, unknown types, flags, purposes and statuses, bad error text, trailing bytes, every
 * truncation of a valid frame) are refused; the encoder refuses what the decoder would. The I/O
 * helpers: split writes, clean and unclean end of stream, deadlines.
 *
 * The process, with a file: key (an EC P-256 PEM written 0600 into a temporary folder): start and
 * key info, signatures of every purpose that verify, health, the purpose and form rules; a child
 * killed while idle (replaced transparently by the next request), stopped mid-request (error
 * after the deadline, killed and reaped, next request on a new child), killed mid-request (error
 * at once); hostile bytes sent to the real child; restarts that fail (backoff) or present another
 * key (refused); the child's descriptors and core limit; and, when run as root, the switch to
 * nobody with a root-only key file, and the chroot.
 *
 * Pipelining (several threads on one child): 8 threads x 40 signatures, each checked against its
 * own message; more callers than the pipeline has places; the child killed again and again under
 * 8 signing threads; a child killed, or stalled past the deadline, with 6 requests outstanding
 * (all 6 fail with SWORN_ERR_IO, the next call succeeds on a new child); a slow but healthy device
 * with requests queued past one deadline (all succeed). A rogue signer (a thread behind the
 * launcher interface, signing with the real key) answers with an id never sent, the wrong type,
 * a malformed frame, a duplicate, or an extra reply nobody asked for: each stops it and fails
 * what was outstanding.
 * Every test ends with no child of this process left, running or zombie.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "checkpoint.h"
#include "err.h"
#include "ipc.h"
#include "signerproc.h"
#include "signer.h"
#include "testutil.h"
#include "utf8.h"

#define NOBODY 65534

/* ---------------------------------------------------------------------------------------------
 * Helpers.
 */

static int64_t now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

    nanosleep(&t, NULL);
}

/* A fresh P-256 key written as PEM to path (mode 0600); its DER SPKI into spki. */
static void make_key(const char *path, uint8_t *spki, size_t *spki_len)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;
    long pem_len;
    unsigned char *p = spki;
    int n;

    assert_non_null(key);
    assert_non_null(bio);
    assert_int_equal(PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL), 1);
    pem_len = BIO_get_mem_data(bio, &pem);
    assert_true(pem_len > 0);
    sworn_test_write_file(path, pem, (size_t)pem_len, 0600);
    if (spki != NULL) {
        n = i2d_PUBKEY(key, NULL);
        assert_true(n > 0 && n <= SWORN_SIGNER_SPKI_MAX);
        assert_int_equal(i2d_PUBKEY(key, &p), n);
        *spki_len = (size_t)n;
    }
    BIO_free(bio);
    EVP_PKEY_free(key);
}

/* Read /proc/<pid>/<name> into a static buffer (NUL-terminated). */
static const char *proc_file(pid_t pid, const char *name)
{
    static char text[16384];
    char path[64];
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, name);
    f = fopen(path, "r");
    if (f == NULL)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* The process state letter from /proc/<pid>/stat ('Z' for a zombie), or 0 if it is gone. */
static char proc_state(pid_t pid)
{
    char path[64], text[512];
    const char *paren;
    size_t n;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    paren = strrchr(text, ')');
    return paren != NULL && paren[1] == ' ' ? paren[2] : 0;
}

/*
 * Wait until pid, our child, has exited with all its threads, so that its socket end is closed,
 * without reaping it (WNOWAIT: that stays the library's job). /proc's 'Z' is not enough: the
 * thread-group leader shows it while other threads (a sanitizer's, in the ThreadSanitizer build)
 * still hold the descriptor table.
 */
static void wait_zombie(pid_t pid)
{
    siginfo_t si;
    int rc = -1;

    for (int i = 0; i < 2000; i++) {
        memset(&si, 0, sizeof(si));
        rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        if (rc == 0 && si.si_pid == pid)
            break;
        sleep_ms(1);
    }
    assert_int_equal(rc, 0);
    assert_int_equal(si.si_pid, pid);
    assert_int_equal(proc_state(pid), 'Z');
}

/* pid no longer exists at all: killed and reaped, no zombie. */
static void assert_gone(pid_t pid)
{
    int status;

    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_int_equal(waitpid(pid, &status, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

/* This process has no child at all, running or zombie. */
static void assert_no_children(void)
{
    int status;

    assert_int_equal(waitpid(-1, &status, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

static void digest_of(const char *text, uint8_t out[32])
{
    SHA256((const uint8_t *)text, strlen(text), out);
}

/* ---------------------------------------------------------------------------------------------
 * The codec.
 */

static size_t encode(const struct sworn_ipc_msg *m, uint8_t *out)
{
    long n = sworn_ipc_encode(m, out, SWORN_IPC_FRAME_MAX);

    if (n < 0)
        fail_msg("encode failed: %s", sworn_err_msg());
    return (size_t)n;
}

/* Encode m, decode it, compare every field, and check that re-encoding gives the same bytes. */
static void round_trip(const struct sworn_ipc_msg *m)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX], again[SWORN_IPC_FRAME_MAX];
    struct sworn_ipc_msg d;
    size_t n = encode(m, frame);

    assert_int_equal(sworn_ipc_decode(frame, n, &d), 0);
    assert_int_equal(d.type, m->type);
    assert_int_equal(d.id, m->id);
    assert_int_equal(d.purpose, m->purpose);
    assert_int_equal(d.status, m->status);
    assert_int_equal(d.alg, m->alg);
    assert_int_equal(d.software_held, m->software_held);
    assert_int_equal(d.data_len, m->data_len);
    if (m->data_len > 0)
        assert_memory_equal(d.data, m->data, m->data_len);
    assert_int_equal(encode(&d, again), n);
    assert_memory_equal(again, frame, n);
    /* Every proper prefix of a valid frame is refused. */
    for (size_t cut = 0; cut < n; cut++) {
        assert_int_equal(sworn_ipc_decode(frame, cut, &d), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    }
}

static void test_ipc_round_trip(void **state)
{
    uint8_t big[SWORN_SIGNER_MSG_MAX], sig[SWORN_SIGNER_SIG_MAX], spki[SWORN_SIGNER_SPKI_MAX];
    const char *err = "file signer: key file /k.pem has mode 0644 \xe2\x80\x94 fix it";
    struct sworn_ipc_msg m;

    (void)state;
    memset(big, 'x', sizeof(big));
    memset(sig, 0x30, sizeof(sig));
    memset(spki, 0x30, sizeof(spki));
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_REQ,
                                       .id = 1,
                                       .purpose = SWORN_PURPOSE_RECEIPT,
                                       .data = big,
                                       .data_len = 32});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_REQ,
                                       .id = UINT32_MAX,
                                       .purpose = SWORN_PURPOSE_CHECKPOINT,
                                       .data = big,
                                       .data_len = sizeof(big)});
    round_trip(&(struct sworn_ipc_msg){
        .type = SWORN_IPC_SIGN_RESP, .id = 7, .data = sig, .data_len = sizeof(sig)});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_RESP,
                                       .id = 7,
                                       .status = SWORN_ERR_FORMAT,
                                       .data = (const uint8_t *)err,
                                       .data_len = strlen(err)});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_INFO_REQ, .id = 2});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_INFO_RESP,
                                       .id = 2,
                                       .alg = SWORN_SIG_RSA_PSS_SHA256,
                                       .software_held = 1,
                                       .data = spki,
                                       .data_len = sizeof(spki)});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_INFO_RESP,
                                       .id = 2,
                                       .status = SWORN_ERR_NOTFOUND,
                                       .data = (const uint8_t *)"no such key",
                                       .data_len = 11});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_HEALTH_REQ, .id = 3});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_HEALTH_RESP, .id = 3});
    round_trip(&(struct sworn_ipc_msg){.type = SWORN_IPC_HEALTH_RESP,
                                       .id = 3,
                                       .status = SWORN_ERR_VERIFY,
                                       .data = (const uint8_t *)"x",
                                       .data_len = 1});

    /* The exact bytes of one frame, as ipc.h specifies them. */
    {
        static const uint8_t want[] = {0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00,
                                       0x00, 0x07, 0x02, 0x00, 0x00, 0x00, 0x02, 0xab, 0xcd};
        uint8_t frame[SWORN_IPC_FRAME_MAX];

        m = (struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_REQ,
                                   .id = 0x01020304,
                                   .purpose = SWORN_PURPOSE_RECEIPT,
                                   .data = (const uint8_t *)"\xab\xcd",
                                   .data_len = 2};
        assert_int_equal(encode(&m, frame), sizeof(want));
        assert_memory_equal(frame, want, sizeof(want));
    }
}

/* Decode raw bytes and expect SWORN_ERR_FORMAT, with the output untouched. */
static void refuse(const uint8_t *frame, size_t len, const char *why)
{
    struct sworn_ipc_msg m = {.id = 0xdeadbeef};

    if (sworn_ipc_decode(frame, len, &m) != -1)
        fail_msg("decoded a frame that should be refused: %s", why);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_int_equal(m.id, 0xdeadbeef); /* untouched */
}

/* A header for type with body length len, into out. */
static void hdr(uint8_t out[SWORN_IPC_HDR_LEN], uint16_t type, uint32_t len)
{
    sworn_put_u16be(out, type);
    sworn_put_u16be(out + 2, 0);
    sworn_put_u32be(out + 4, 9);
    sworn_put_u32be(out + 8, len);
}

static void test_ipc_hostile(void **state)
{
    uint8_t f[SWORN_IPC_FRAME_MAX + 16];
    enum sworn_ipc_type type;
    uint32_t id, len;

    (void)state;
    memset(f, 0, sizeof(f));
    /* Truncated headers. */
    for (size_t n = 0; n < SWORN_IPC_HDR_LEN; n++)
        refuse(f, n, "truncated header");
    /* Unknown types, with otherwise empty bodies. */
    hdr(f, 0, 0);
    refuse(f, SWORN_IPC_HDR_LEN, "type 0");
    hdr(f, 7, 0);
    refuse(f, SWORN_IPC_HDR_LEN, "type 7");
    hdr(f, 0xffff, 0);
    refuse(f, SWORN_IPC_HDR_LEN, "type 0xffff");
    /* Flags must be 0. */
    hdr(f, SWORN_IPC_INFO_REQ, 0);
    f[3] = 1;
    refuse(f, SWORN_IPC_HDR_LEN, "flags");
    /* Huge lengths are refused by the header check alone, before any body is needed. */
    hdr(f, SWORN_IPC_SIGN_REQ, 0xffffffff);
    assert_int_equal(sworn_ipc_hdr_decode(f, &type, &id, &len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    hdr(f, SWORN_IPC_SIGN_REQ, SWORN_IPC_SIGN_REQ_MAX + 1);
    assert_int_equal(sworn_ipc_hdr_decode(f, &type, &id, &len), -1);
    hdr(f, SWORN_IPC_SIGN_REQ, SWORN_IPC_SIGN_REQ_MAX);
    assert_int_equal(sworn_ipc_hdr_decode(f, &type, &id, &len), 0);
    assert_int_equal(len, SWORN_IPC_SIGN_REQ_MAX);
    hdr(f, SWORN_IPC_SIGN_RESP, SWORN_IPC_SIGN_RESP_MAX + 1);
    assert_int_equal(sworn_ipc_hdr_decode(f, &type, &id, &len), -1);
    /* Requests without bodies have exactly none. */
    hdr(f, SWORN_IPC_INFO_REQ, 1);
    refuse(f, SWORN_IPC_HDR_LEN + 1, "INFO_REQ with a body");
    hdr(f, SWORN_IPC_HEALTH_REQ, 0);
    refuse(f, SWORN_IPC_HDR_LEN + 1, "HEALTH_REQ with a trailing byte");
    /* The frame must be as long as its header says. */
    hdr(f, SWORN_IPC_SIGN_REQ, 5 + 32);
    f[12] = SWORN_PURPOSE_RECEIPT;
    sworn_put_u32be(f + 13, 32);
    {
        struct sworn_ipc_msg m;

        assert_int_equal(sworn_ipc_decode(f, SWORN_IPC_HDR_LEN + 37, &m), 0);
    }
    refuse(f, SWORN_IPC_HDR_LEN + 38, "trailing byte after the body");
    refuse(f, SWORN_IPC_HDR_LEN + 36, "body shorter than the header says");
    /* SIGN_REQ: msg_len must match the body, and purposes must be known. */
    sworn_put_u32be(f + 13, 31);
    refuse(f, SWORN_IPC_HDR_LEN + 37, "msg_len one short of the body");
    sworn_put_u32be(f + 13, 33);
    refuse(f, SWORN_IPC_HDR_LEN + 37, "msg_len one past the body");
    sworn_put_u32be(f + 13, 0xffffffff);
    refuse(f, SWORN_IPC_HDR_LEN + 37, "msg_len huge");
    sworn_put_u32be(f + 13, 32);
    f[12] = 0;
    refuse(f, SWORN_IPC_HDR_LEN + 37, "purpose 0");
    f[12] = SWORN_PURPOSE_COSIGNATURE; /* known, but the witness's: never decisiond's signer's */
    refuse(f, SWORN_IPC_HDR_LEN + 37, "purpose 6");
    f[12] = SWORN_PURPOSE_REPORT + 1; /* the first unknown one */
    refuse(f, SWORN_IPC_HDR_LEN + 37, "purpose 8");
    hdr(f, SWORN_IPC_SIGN_REQ, 5);
    f[12] = SWORN_PURPOSE_CHECKPOINT;
    sworn_put_u32be(f + 13, 0);
    refuse(f, SWORN_IPC_HDR_LEN + 5, "empty message");
    /* SIGN_RESP: status range, signature sizes, error text. */
    hdr(f, SWORN_IPC_SIGN_RESP, 3);
    f[12] = 0;
    sworn_put_u16be(f + 13, 0);
    refuse(f, SWORN_IPC_HDR_LEN + 3, "success with an empty signature");
    hdr(f, SWORN_IPC_SIGN_RESP, 4);
    f[12] = SWORN_ERR_NOTFOUND + 1;
    sworn_put_u16be(f + 13, 1);
    f[15] = 'x';
    refuse(f, SWORN_IPC_HDR_LEN + 4, "unknown status");
    f[12] = SWORN_ERR_IO;
    f[15] = '\n';
    refuse(f, SWORN_IPC_HDR_LEN + 4, "control byte in the error message");
    f[15] = 0xff;
    refuse(f, SWORN_IPC_HDR_LEN + 4, "invalid UTF-8 in the error message");
    f[15] = 0;
    refuse(f, SWORN_IPC_HDR_LEN + 4, "NUL in the error message");
    sworn_put_u16be(f + 13, 2);
    refuse(f, SWORN_IPC_HDR_LEN + 4, "data_len past the body");
    hdr(f, SWORN_IPC_SIGN_RESP, 3);
    f[12] = SWORN_ERR_IO;
    sworn_put_u16be(f + 13, 0);
    refuse(f, SWORN_IPC_HDR_LEN + 3, "error without a message");
    hdr(f, SWORN_IPC_SIGN_RESP, 3 + SWORN_IPC_ERRMSG_MAX + 1);
    sworn_put_u16be(f + 13, SWORN_IPC_ERRMSG_MAX + 1);
    memset(f + 15, 'a', SWORN_IPC_ERRMSG_MAX + 1);
    refuse(f, SWORN_IPC_HDR_LEN + 3 + SWORN_IPC_ERRMSG_MAX + 1, "error message too long");
    /* INFO_RESP: algorithm and flag ranges, and their absence on error. */
    hdr(f, SWORN_IPC_INFO_RESP, 6);
    f[12] = 0;
    f[13] = 4;
    f[14] = 0;
    sworn_put_u16be(f + 15, 1);
    f[17] = 0x30;
    refuse(f, SWORN_IPC_HDR_LEN + 6, "unknown algorithm");
    f[13] = SWORN_SIG_ECDSA_P256_SHA256;
    f[14] = 2;
    refuse(f, SWORN_IPC_HDR_LEN + 6, "software-held flag 2");
    f[12] = SWORN_ERR_IO;
    f[14] = 0;
    f[17] = 'x';
    refuse(f, SWORN_IPC_HDR_LEN + 6, "error with an algorithm");
    hdr(f, SWORN_IPC_INFO_RESP, 5 + SWORN_SIGNER_SPKI_MAX + 1);
    assert_int_equal(sworn_ipc_hdr_decode(f, &type, &id, &len), -1);
    /* HEALTH_RESP: success carries no data. */
    hdr(f, SWORN_IPC_HEALTH_RESP, 4);
    f[12] = 0;
    sworn_put_u16be(f + 13, 1);
    f[15] = 'x';
    refuse(f, SWORN_IPC_HDR_LEN + 4, "health success with data");
}

/* Every single-bit flip of a valid frame is either refused or decodes to a valid message. */
static void test_ipc_bit_flips(void **state)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX], again[SWORN_IPC_FRAME_MAX];
    uint8_t digest[32];
    struct sworn_ipc_msg m = {.type = SWORN_IPC_SIGN_REQ,
                              .id = 5,
                              .purpose = SWORN_PURPOSE_KEY_EVENT,
                              .data = digest,
                              .data_len = sizeof(digest)};
    size_t n;
    int accepted = 0;

    (void)state;
    memset(digest, 0x42, sizeof(digest));
    n = encode(&m, frame);
    for (size_t bit = 0; bit < n * 8; bit++) {
        struct sworn_ipc_msg d;

        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (sworn_ipc_decode(frame, n, &d) == 0) {
            accepted++;
            assert_int_equal(encode(&d, again), n);
            assert_memory_equal(again, frame, n);
        } else {
            assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        }
        frame[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    /* Flips in the id and the digest stay valid; flips in type, flags, lengths mostly do not. */
    assert_true(accepted >= 32 + 256);
    assert_true((size_t)accepted < n * 8);
}

static void test_ipc_encode_refuses(void **state)
{
    uint8_t out[SWORN_IPC_FRAME_MAX], big[SWORN_SIGNER_MSG_MAX + 1];
    struct sworn_ipc_msg m;

    (void)state;
    memset(big, 1, sizeof(big));
    m = (struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_REQ,
                               .purpose = SWORN_PURPOSE_CHECKPOINT,
                               .data = big,
                               .data_len = sizeof(big)};
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    m.data_len = 10;
    m.purpose = (enum sworn_sign_purpose)9;
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    m.purpose = (enum sworn_sign_purpose)(256 + SWORN_PURPOSE_RECEIPT); /* would truncate to 2 */
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
    m.purpose = SWORN_PURPOSE_RECEIPT;
    assert_int_equal(sworn_ipc_encode(&m, out, 12 + 5 + 9), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_ipc_encode(&m, out, 12 + 5 + 10), 12 + 5 + 10);
    m = (struct sworn_ipc_msg){
        .type = SWORN_IPC_INFO_REQ, .data = (const uint8_t *)"x", .data_len = 1};
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
    m = (struct sworn_ipc_msg){.type = SWORN_IPC_SIGN_RESP,
                               .status = SWORN_ERR_IO,
                               .data = (const uint8_t *)"bad\ntext",
                               .data_len = 8};
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
    m = (struct sworn_ipc_msg){.type = (enum sworn_ipc_type)0};
    assert_int_equal(sworn_ipc_encode(&m, out, sizeof(out)), -1);
}

static void test_ipc_errmsg_clean(void **state)
{
    char out[SWORN_IPC_ERRMSG_MAX + 1], longer[600];

    (void)state;
    assert_int_equal(sworn_ipc_errmsg_clean("plain \xe2\x80\x94 text", out), 14);
    assert_string_equal(out, "plain \xe2\x80\x94 text");
    assert_int_equal(sworn_ipc_errmsg_clean("a\nb\x01\xff", out), 5);
    assert_string_equal(out, "a?b??");
    assert_int_equal(sworn_ipc_errmsg_clean("", out), strlen("unknown error"));
    memset(longer, 'z', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(sworn_ipc_errmsg_clean(longer, out), SWORN_IPC_ERRMSG_MAX);
    /* A character cut by the limit does not leave invalid UTF-8 behind. */
    memset(longer, 0, sizeof(longer));
    memset(longer, 'z', SWORN_IPC_ERRMSG_MAX - 1);
    memcpy(longer + SWORN_IPC_ERRMSG_MAX - 1, "\xe2\x80\x94", 3);
    assert_int_equal(sworn_utf8_check(out, sworn_ipc_errmsg_clean(longer, out), 0, "msg"), 0);
    /* It may clean this thread's own error slot, and leaves it as it was. */
    sworn_err_set(SWORN_ERR_VERIFY, "bad \x80 byte");
    assert_int_equal(sworn_ipc_errmsg_clean(sworn_err_msg(), out), 10);
    assert_string_equal(out, "bad ? byte");
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    assert_string_equal(sworn_err_msg(), "bad \x80 byte");
}

static void test_ipc_io(void **state)
{
    uint8_t frame[SWORN_IPC_FRAME_MAX], out[SWORN_IPC_FRAME_MAX], digest[32];
    struct sworn_ipc_msg m = {.type = SWORN_IPC_SIGN_REQ,
                              .id = 77,
                              .purpose = SWORN_PURPOSE_RECEIPT,
                              .data = digest,
                              .data_len = sizeof(digest)},
                         d;
    int sv[2];
    size_t n, got;
    int64_t t0;

    (void)state;
    memset(digest, 0x11, sizeof(digest));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    /* A frame written in three pieces reads back whole. */
    n = encode(&m, out);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, 5, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_write_all(sv[0], out + 5, 10, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_write_all(sv[0], out + 15, n - 15, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_recv(sv[1], frame, &d, sworn_ipc_deadline(1000)), 0);
    assert_int_equal(d.id, 77);
    assert_memory_equal(d.data, digest, sizeof(digest));
    /* Nothing to read: the deadline ends the wait. */
    t0 = now_ms();
    assert_int_equal(sworn_ipc_recv(sv[1], frame, &d, sworn_ipc_deadline(100)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_true(now_ms() - t0 >= 95 && now_ms() - t0 < 1000);
    /* A huge length is refused at the header, without waiting for a body that never comes. */
    hdr(out, SWORN_IPC_SIGN_REQ, 0x7fffffff);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, SWORN_IPC_HDR_LEN, SWORN_IPC_FOREVER), 0);
    t0 = now_ms();
    assert_int_equal(sworn_ipc_recv(sv[1], frame, &d, sworn_ipc_deadline(5000)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_true(now_ms() - t0 < 500);
    /* End of stream inside a header is an error; at a frame boundary it is a clean end. */
    assert_int_equal(sworn_ipc_write_all(sv[0], out, 3, SWORN_IPC_FOREVER), 0);
    assert_int_equal(shutdown(sv[0], SHUT_WR), 0);
    assert_int_equal(sworn_ipc_recv(sv[1], frame, &d, SWORN_IPC_FOREVER), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_int_equal(sworn_ipc_recv(sv[1], frame, &d, SWORN_IPC_FOREVER), 1);
    assert_int_equal(sworn_ipc_read_all(sv[1], frame, 4, SWORN_IPC_FOREVER, &got), 1);
    assert_int_equal(got, 0);
    /* Writing to a closed peer is EPIPE, not a SIGPIPE that would kill this test. */
    close(sv[1]);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, 3, SWORN_IPC_FOREVER), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    close(sv[0]);
}

/* The buffered reader: frames that arrive together come out one by one, a frame split across
 * writes comes out whole, and it keeps every rule of sworn_ipc_recv. */
static void test_ipc_reader(void **state)
{
    static struct sworn_ipc_reader r;
    uint8_t out[4 * SWORN_IPC_FRAME_MAX], big[SWORN_SIGNER_MSG_MAX];
    struct sworn_ipc_msg m = {.type = SWORN_IPC_SIGN_REQ, .purpose = SWORN_PURPOSE_CHECKPOINT}, d;
    size_t n = 0;
    int sv[2];

    (void)state;
    memset(big, 'x', sizeof(big));
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sworn_ipc_reader_init(&r);
    /* Three frames in one write, the middle one of the largest size. */
    for (uint32_t id = 1; id <= 3; id++) {
        m.id = id;
        m.data = big;
        m.data_len = id == 2 ? sizeof(big) : id;
        n += encode(&m, out + n);
    }
    assert_int_equal(sworn_ipc_write_all(sv[0], out, n, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_reader_ready(&r), 0);
    for (uint32_t id = 1; id <= 3; id++) {
        assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, sworn_ipc_deadline(5000)), 0);
        assert_int_equal(d.id, id);
        assert_int_equal(d.data_len, id == 2 ? sizeof(big) : id);
        assert_memory_equal(d.data, big, d.data_len);
        /* The first read took all three (they were written before it): the rest are ready. */
        assert_int_equal(sworn_ipc_reader_ready(&r), id < 3);
    }
    assert_int_equal(sworn_ipc_reader_buffered(&r), 0);
    /* One frame in two writes, the split inside its header. */
    m.id = 4;
    m.data_len = 32;
    n = encode(&m, out);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, 7, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, sworn_ipc_deadline(20)), -1);
    assert_int_equal(sworn_ipc_reader_buffered(&r), 7); /* a partial header: not ready */
    assert_int_equal(sworn_ipc_reader_ready(&r), 0);
    assert_int_equal(sworn_ipc_write_all(sv[0], out + 7, n - 7, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, sworn_ipc_deadline(5000)), 0);
    assert_int_equal(d.id, 4);
    /* Nothing more: the deadline ends the wait with an error. */
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, sworn_ipc_deadline(50)), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    /* A hostile length is refused at the header, though its body never comes. */
    hdr(out, SWORN_IPC_SIGN_REQ, 0x7fffffff);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, SWORN_IPC_HDR_LEN, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, SWORN_IPC_FOREVER), -1);
    assert_int_equal(sworn_ipc_reader_ready(&r), 1); /* refused without reading, again */
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    /* A new reader: the end of the stream inside a frame is an error, at a boundary a clean end. */
    sworn_ipc_reader_init(&r);
    m.id = 5;
    n = encode(&m, out);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, n, SWORN_IPC_FOREVER), 0);
    assert_int_equal(sworn_ipc_write_all(sv[0], out, 3, SWORN_IPC_FOREVER), 0);
    assert_int_equal(shutdown(sv[0], SHUT_WR), 0);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, SWORN_IPC_FOREVER), 0);
    assert_int_equal(d.id, 5);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, SWORN_IPC_FOREVER), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    sworn_ipc_reader_init(&r);
    assert_int_equal(sworn_ipc_reader_next(&r, sv[1], &d, SWORN_IPC_FOREVER), 1);
    close(sv[0]);
    close(sv[1]);
}

/* ---------------------------------------------------------------------------------------------
 * The process.
 */

struct fixture {
    char *dir;
    char *key; /* <dir>/key.pem, 0600 */
    char *uri; /* file:<key> */
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len;
    struct sworn_signer_config cfg;
    struct sworn_signer_proc *p;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("signer-proc");
    f->key = sworn_test_path(f->dir, "key.pem");
    make_key(f->key, f->spki, &f->spki_len);
    if (asprintf(&f->uri, "file:%s", f->key) < 0)
        abort();
    f->cfg.uri = f->uri;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    sworn_signer_proc_stop(f->p);
    assert_no_children();
    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f->key);
    free(f->uri);
    free(f);
    return 0;
}

static void start(struct fixture *f, const struct sworn_signer_proc_opts *opts)
{
    if (sworn_signer_proc_start(&f->cfg, opts, &f->p) != 0)
        fail_msg("start failed: %s", sworn_err_msg());
}

/* Sign msg through the process and check the signature with the fixture's key. */
static void sign_ok(struct fixture *f, enum sworn_sign_purpose purpose, const uint8_t *msg,
                    size_t len)
{
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;

    if (sworn_signer_proc_sign(f->p, purpose, msg, len, sig, sizeof(sig), &sig_len) != 0)
        fail_msg("sign failed: %s", sworn_err_msg());
    assert_int_equal(sworn_signature_verify(f->spki, f->spki_len, purpose, msg, len, sig, sig_len),
                     0);
}

static void sign_receipt_ok(struct fixture *f)
{
    uint8_t digest[32];

    digest_of("a receipt", digest);
    sign_ok(f, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest));
}

static void test_start_and_info(void **state)
{
    struct fixture *f = *state;
    const uint8_t *spki;
    size_t len = 0;
    pid_t pid;

    start(f, NULL);
    spki = sworn_signer_proc_spki(f->p, &len);
    assert_int_equal(len, f->spki_len);
    assert_memory_equal(spki, f->spki, len);
    assert_int_equal(sworn_signer_proc_alg(f->p), SWORN_SIG_ECDSA_P256_SHA256);
    assert_int_equal(sworn_signer_proc_software_held(f->p), 1);
    pid = sworn_signer_proc_pid(f->p);
    assert_true(pid > 0 && pid != getpid());
    assert_int_equal(sworn_signer_proc_health(f->p), 0);
    /* A graceful stop: the child sees end of stream, exits 0 and is reaped. */
    sworn_signer_proc_stop(f->p);
    f->p = NULL;
    assert_gone(pid);
}

static void test_sign_purposes(void **state)
{
    struct fixture *f = *state;
    uint8_t root[SWORN_HASH_LEN], digest[32], sig[SWORN_SIGNER_SIG_MAX];
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    size_t sig_len = 0;
    long body_len;
    pid_t pid;

    start(f, NULL);
    pid = sworn_signer_proc_pid(f->p);
    memset(root, 0x5a, sizeof(root));
    body_len = sworn_checkpoint_format("test.sworn.example/log", 42, root, body, sizeof(body));
    assert_true(body_len > 0);
    sign_ok(f, SWORN_PURPOSE_CHECKPOINT, (const uint8_t *)body, (size_t)body_len);
    digest_of("receipt", digest);
    sign_ok(f, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest));
    digest_of("key event", digest);
    sign_ok(f, SWORN_PURPOSE_KEY_EVENT, digest, sizeof(digest));

    /* A receipt signature does not verify as a key event over the same digest. */
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     0);
    assert_int_equal(sworn_signature_verify(f->spki, f->spki_len, SWORN_PURPOSE_KEY_EVENT, digest,
                                            sizeof(digest), sig, sig_len),
                     -1);

    /* An RFC 9421 base (purpose 4, http-message): signed over the base itself, which verifies
     * for no other purpose; the child refuses what is not a base's shape, a checkpoint body
     * (ends with LF) first of all, and a base is no checkpoint. */
    {
        static uint8_t base[16384];
        static const char shaped[] =
            "\"@method\": GET\n\"@signature-params\": (\"@method\");tag=\"sworn\"";
        size_t base_len = sworn_test_httpsig_base(f->spki, f->spki_len, base);

        sign_ok(f, SWORN_PURPOSE_HTTP_MESSAGE, base, base_len);
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE, base, base_len,
                                                sig, sizeof(sig), &sig_len),
                         0);
        assert_int_equal(sworn_signature_verify(f->spki, f->spki_len, SWORN_PURPOSE_CHECKPOINT,
                                                base, base_len, sig, sig_len),
                         -1);
        /* A base of the right shape but not sworn's profile for this key: refused by the
         * child (another key id, another tag, a component dropped, a general base). */
        {
            static uint8_t bad[16384];
            static const char *const from[] = {";tag=\"sworn\"", "\"sworn-entry\")"};
            static const char *const to[] = {";tag=\"other\"", ")"};
            char *at;

            for (size_t k = 0; k < 2; k++) {
                memcpy(bad, base, base_len);
                bad[base_len] = '\0';
                at = strstr((char *)bad, from[k]);
                assert_non_null(at);
                memmove(at + strlen(to[k]), at + strlen(from[k]),
                        base_len - (size_t)(at - (char *)bad) - strlen(from[k]) + 1);
                memcpy(at, to[k], strlen(to[k]));
                assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE, bad,
                                                        strlen((char *)bad), sig, sizeof(sig),
                                                        &sig_len),
                                 -1);
                assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
            }
            memcpy(bad, base, base_len);
            at = strstr((char *)bad, "keyid=\"");
            assert_non_null(at);
            at[7] = at[7] == 'a' ? 'b' : 'a';
            assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE, bad, base_len,
                                                    sig, sizeof(sig), &sig_len),
                             -1);
            assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE,
                                                    (const uint8_t *)shaped, sizeof(shaped) - 1,
                                                    sig, sizeof(sig), &sig_len),
                             -1);
        }
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE,
                                                (const uint8_t *)body, (size_t)body_len, sig,
                                                sizeof(sig), &sig_len),
                         -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        assert_non_null(strstr(sworn_err_msg(), "not an http-message base"));
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_CHECKPOINT,
                                                (const uint8_t *)base, sizeof(base) - 1, sig,
                                                sizeof(sig), &sig_len),
                         -1);
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_HTTP_MESSAGE, digest,
                                                sizeof(digest), sig, sizeof(sig), &sig_len),
                         -1);
    }

    /* Purpose 5 (a batch root, docs/formats.md section 14): the child signs u32 size || root
     * (36 bytes, size 1..256) under its own prefix, and refuses any other message. */
    {
        uint8_t batch[SWORN_BATCH_MSG_LEN] = {0, 0, 0, 7};

        memcpy(batch + 4, digest, 32);
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_BATCH, batch, sizeof(batch),
                                                sig, sizeof(sig), &sig_len),
                         0);
        assert_int_equal(sworn_signature_verify(f->spki, f->spki_len, SWORN_PURPOSE_BATCH, batch,
                                                sizeof(batch), sig, sig_len),
                         0);
        assert_int_equal(sworn_signature_verify(f->spki, f->spki_len, SWORN_PURPOSE_RECEIPT,
                                                batch + 4, 32, sig, sig_len),
                         -1);
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_BATCH, digest, sizeof(digest),
                                                sig, sizeof(sig), &sig_len),
                         -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        batch[3] = 0; /* a group of no item */
        assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_BATCH, batch, sizeof(batch),
                                                sig, sizeof(sig), &sig_len),
                         -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    }

    /* Refused in the parent, before the child sees anything. */
    assert_int_equal(sworn_signer_proc_sign(f->p, (enum sworn_sign_purpose)6, digest,
                                            sizeof(digest), sig, sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(sworn_signer_proc_sign(f->p, (enum sworn_sign_purpose)0, digest,
                                            sizeof(digest), sig, sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, 0, sig, sizeof(sig), &sig_len),
        -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);

    /* Refused by the child, which stays up: the error comes back with its code and message. */
    assert_int_equal(
        sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, 31, sig, sizeof(sig), &sig_len),
        -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_non_null(strstr(sworn_err_msg(), "signer process: "));
    assert_non_null(strstr(sworn_err_msg(), "32-byte digest"));
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_CHECKPOINT,
                                            (const uint8_t *)"not a checkpoint\n", 17, sig,
                                            sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    /* Too little room for the signature. */
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, 8, &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    assert_int_equal(sworn_signer_proc_pid(f->p), pid);
    sign_receipt_ok(f);
}

static void test_killed_while_idle(void **state)
{
    struct fixture *f = *state;
    pid_t old, now;
    int64_t t0;

    start(f, NULL);
    sign_receipt_ok(f);
    old = sworn_signer_proc_pid(f->p);
    assert_int_equal(kill(old, SIGKILL), 0);
    wait_zombie(old);
    /* The death is seen before the request is sent, so the request goes to a new child. */
    t0 = now_ms();
    sign_receipt_ok(f);
    print_message("    idle child killed: next sign on a new child in %lld ms\n",
                  (long long)(now_ms() - t0));
    now = sworn_signer_proc_pid(f->p);
    assert_true(now > 0 && now != old);
    assert_gone(old);
    sign_receipt_ok(f);
}

static void test_stalled_mid_request(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.timeout_ms = 300};
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;
    int64_t t0, took;
    pid_t old;

    start(f, &opts);
    sign_receipt_ok(f);
    old = sworn_signer_proc_pid(f->p);
    assert_int_equal(kill(old, SIGSTOP), 0);
    digest_of("stalled", digest);
    t0 = now_ms();
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    took = now_ms() - t0;
    print_message("    stopped child: error after %lld ms (deadline 300 ms)\n", (long long)took);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_non_null(strstr(sworn_err_msg(), "stalled/died"));
    assert_true(took >= 290 && took < 600);
    /* Killed and reaped by the failing call itself; no new child yet. */
    assert_gone(old);
    assert_int_equal(sworn_signer_proc_pid(f->p), -1);
    sign_receipt_ok(f);
    assert_true(sworn_signer_proc_pid(f->p) != old);
}

struct killer {
    pid_t pid;
    long after_ms;
};

static void *kill_later(void *arg)
{
    struct killer *k = arg;

    sleep_ms(k->after_ms);
    kill(k->pid, SIGKILL);
    return NULL;
}

static void test_killed_mid_request(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.timeout_ms = 5000};
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;
    struct killer k;
    pthread_t t;
    int64_t t0, took;

    start(f, &opts);
    k.pid = sworn_signer_proc_pid(f->p);
    k.after_ms = 100;
    /* Stopped, the child cannot answer; killed 100 ms into the request, it closes the socket. */
    assert_int_equal(kill(k.pid, SIGSTOP), 0);
    assert_int_equal(pthread_create(&t, NULL, kill_later, &k), 0);
    digest_of("killed", digest);
    t0 = now_ms();
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    took = now_ms() - t0;
    assert_int_equal(pthread_join(t, NULL), 0);
    print_message("    child killed mid-request: error after %lld ms (deadline 5000 ms)\n",
                  (long long)took);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_true(took >= 90 && took < 1000);
    assert_gone(k.pid);
    sign_receipt_ok(f);
}

static void test_hostile_bytes_to_child(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.timeout_ms = 2000};
    uint8_t frame[SWORN_IPC_FRAME_MAX];
    struct {
        const char *what;
        uint8_t bytes[SWORN_IPC_HDR_LEN + 8];
        size_t len;
    } cases[] = {
        {"unknown type", {0x00, 0x09, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 12},
        {"flags set", {0x00, 0x03, 0x80, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 12},
        {"huge length", {0x00, 0x01, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, 12},
        {"INFO_REQ with a body", {0x00, 0x03, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0}, 13},
        {"a reply sent to the child", {0x00, 0x06, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0}, 15},
        {"SIGN_REQ for purpose 9",
         {0x00, 0x01, 0, 0, 0, 0, 0, 1, 0, 0, 0, 6, 9, 0, 0, 0, 1, 0xaa},
         18},
    };
    pid_t old;
    int64_t t0, took;

    start(f, &opts);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        old = sworn_signer_proc_pid(f->p);
        t0 = now_ms();
        assert_int_equal(sworn_signer_proc_send_raw(f->p, cases[i].bytes, cases[i].len,
                                                    SWORN_IPC_HEALTH_RESP, 1),
                         -1);
        took = now_ms() - t0;
        /* The child closed the socket at once; it was not the deadline that ended the wait. */
        if (sworn_err_code() != SWORN_ERR_IO || took > 1000)
            fail_msg("%s: %s after %lld ms", cases[i].what, sworn_err_msg(), (long long)took);
        /* Closed with our bytes unread, the socket may report a reset instead of an end. */
        assert_true(strstr(sworn_err_msg(), "closed the socket") != NULL ||
                    strstr(sworn_err_msg(), "reset the connection") != NULL);
        assert_gone(old);
        sign_receipt_ok(f);
    }
    /* A valid request through the same path is answered. */
    {
        struct sworn_ipc_msg m = {.type = SWORN_IPC_HEALTH_REQ, .id = 1234};
        size_t n = encode(&m, frame);

        old = sworn_signer_proc_pid(f->p);
        assert_int_equal(sworn_signer_proc_send_raw(f->p, frame, n, SWORN_IPC_HEALTH_RESP, 1234),
                         0);
        assert_int_equal(sworn_signer_proc_pid(f->p), old);
    }
    /* The real child made to answer a request the parent never registered: two requests in one
     * write, only the second one expected. The reply to the first answers nothing outstanding. */
    {
        struct sworn_ipc_msg m = {.type = SWORN_IPC_HEALTH_REQ, .id = 77};
        size_t n = encode(&m, frame);

        m.id = 78;
        n += encode(&m, frame + n);
        old = sworn_signer_proc_pid(f->p);
        assert_int_equal(sworn_signer_proc_send_raw(f->p, frame, n, SWORN_IPC_HEALTH_RESP, 78), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
        assert_non_null(strstr(sworn_err_msg(), "id 77: no request with that id is outstanding"));
        assert_gone(old);
        sign_receipt_ok(f);
        /* (A duplicate reply from the real child would come at no fixed moment; the rogue
         * signer below sends one deterministically.) */
        /* Refused before anything is written: a request type as the reply, id 0. */
        assert_int_equal(sworn_signer_proc_send_raw(f->p, frame, n, SWORN_IPC_HEALTH_REQ, 80), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
        assert_int_equal(sworn_signer_proc_send_raw(f->p, frame, n, SWORN_IPC_HEALTH_RESP, 0), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    }
    /* A header promising a body that never comes: the child waits, the deadline kills it. */
    {
        struct sworn_signer_proc *p2 = NULL;
        struct sworn_signer_proc_opts quick = {.timeout_ms = 200};
        uint8_t h[SWORN_IPC_HDR_LEN];

        assert_int_equal(sworn_signer_proc_start(&f->cfg, &quick, &p2), 0);
        old = sworn_signer_proc_pid(p2);
        hdr(h, SWORN_IPC_SIGN_REQ, 37);
        t0 = now_ms();
        assert_int_equal(sworn_signer_proc_send_raw(p2, h, sizeof(h), SWORN_IPC_SIGN_RESP, 1), -1);
        took = now_ms() - t0;
        assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
        assert_true(took >= 190 && took < 600);
        assert_gone(old);
        sworn_signer_proc_stop(p2);
    }
}

static void test_open_fails(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_config cfg = {0};
    uint8_t wrong[SWORN_SIGNER_SPKI_MAX];
    size_t wrong_len = 0;
    char *other = sworn_test_path(f->dir, "other.pem");

    /* No such key file: the child's open error is the start's error. */
    cfg.uri = "file:/nonexistent/sworn/key.pem";
    assert_int_equal(sworn_signer_proc_start(&cfg, NULL, &f->p), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_non_null(strstr(sworn_err_msg(), "signer process: "));
    assert_non_null(strstr(sworn_err_msg(), "cannot open key file"));
    assert_null(f->p);
    assert_no_children();
    /* A key file others may read. */
    assert_int_equal(chmod(f->key, 0644), 0);
    assert_int_equal(sworn_signer_proc_start(&f->cfg, NULL, &f->p), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_non_null(strstr(sworn_err_msg(), "0600"));
    assert_int_equal(chmod(f->key, 0600), 0);
    /* A pinned key that is not the file's key. */
    make_key(other, wrong, &wrong_len);
    cfg = f->cfg;
    cfg.pinned_spki = wrong;
    cfg.pinned_spki_len = wrong_len;
    assert_int_equal(sworn_signer_proc_start(&cfg, NULL, &f->p), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    /* Options checked before any fork. */
    cfg = f->cfg;
    assert_int_equal(
        sworn_signer_proc_start(&cfg, &(struct sworn_signer_proc_opts){.uid = NOBODY}, &f->p), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    cfg.uri = NULL;
    assert_int_equal(sworn_signer_proc_start(&cfg, NULL, &f->p), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_null(f->p);
    assert_no_children();
    free(other);
}

static void test_restart_backoff_and_key_change(void **state)
{
    struct fixture *f = *state;
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;
    int64_t t0;

    start(f, NULL);
    digest_of("restart", digest);
    /* The key file becomes unusable and the child dies: the restart fails with the open error. */
    assert_int_equal(chmod(f->key, 0644), 0);
    assert_int_equal(kill(sworn_signer_proc_pid(f->p), SIGKILL), 0);
    wait_zombie(sworn_signer_proc_pid(f->p));
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    assert_non_null(strstr(sworn_err_msg(), "0600"));
    /* Within the backoff the next call fails at once, without forking. */
    t0 = now_ms();
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    assert_true(now_ms() - t0 < 50);
    assert_non_null(strstr(sworn_err_msg(), "not restarted yet"));
    assert_int_equal(sworn_signer_proc_pid(f->p), -1);
    assert_no_children();
    /* Fixed, and after the backoff, it works again: calls within it keep failing at once. */
    assert_int_equal(chmod(f->key, 0600), 0);
    t0 = now_ms();
    while (sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest), sig,
                                  sizeof(sig), &sig_len) != 0) {
        if (now_ms() - t0 > 5000)
            fail_msg("no restart within 5 s of the fix: %s", sworn_err_msg());
        sleep_ms(5);
    }
    sign_receipt_ok(f);

    /* The key file is replaced by another key: a restarted child with it is refused. */
    make_key(f->key, NULL, NULL);
    assert_int_equal(kill(sworn_signer_proc_pid(f->p), SIGKILL), 0);
    wait_zombie(sworn_signer_proc_pid(f->p));
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    assert_non_null(strstr(sworn_err_msg(), "different key"));
    assert_int_equal(sworn_signer_proc_pid(f->p), -1);
}

/* ---------------------------------------------------------------------------------------------
 * Pipelining: several threads on one signer process.
 */

#define THREADS 8
#define PER_THREAD 40

struct worker {
    struct fixture *f;
    unsigned id;
    int count; /* signatures to make */
    int ok;    /* made and verified */
};

/* The message of thread id's i-th signature: distinct for every thread and signature. */
static void worker_digest(unsigned id, int i, uint8_t out[32])
{
    char text[64];

    snprintf(text, sizeof(text), "thread %u, signature %d", id, i);
    digest_of(text, out);
}

/* w->count signatures, each checked against its own message: a reply that went to the wrong
 * caller would carry another message's signature and fail here. */
static void *sign_many(void *arg)
{
    struct worker *w = arg;
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;

    for (int i = 0; i < w->count; i++) {
        worker_digest(w->id, i, digest);
        if (sworn_signer_proc_sign(w->f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest), sig,
                                   sizeof(sig), &sig_len) != 0 ||
            sworn_signature_verify(w->f->spki, w->f->spki_len, SWORN_PURPOSE_RECEIPT, digest,
                                   sizeof(digest), sig, sig_len) != 0)
            return NULL;
        w->ok++;
    }
    return NULL;
}

static void test_threads(void **state)
{
    struct fixture *f = *state;
    struct worker w[THREADS];
    pthread_t t[THREADS];
    int64_t t0;
    pid_t pid;

    start(f, NULL);
    pid = sworn_signer_proc_pid(f->p);
    t0 = now_ms();
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.f = f, .id = (unsigned)i, .count = PER_THREAD};
        assert_int_equal(pthread_create(&t[i], NULL, sign_many, &w[i]), 0);
    }
    /* A health check in the middle of the signatures is answered in turn. */
    assert_int_equal(sworn_signer_proc_health(f->p), 0);
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(w[i].ok, PER_THREAD);
    }
    print_message("    %d signatures from %d threads in %lld ms\n", THREADS * PER_THREAD, THREADS,
                  (long long)(now_ms() - t0));
    /* One child served them all, and nothing is left outstanding. */
    assert_int_equal(sworn_signer_proc_pid(f->p), pid);
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
}

/* More callers than the pipeline has places: the extra ones wait for a place, and all succeed. */
#define CROWD (SWORN_SIGNER_PROC_INFLIGHT_MAX + 8)
#define CROWD_EACH 5

static void test_more_callers_than_places(void **state)
{
    struct fixture *f = *state;
    struct worker m[CROWD];
    pthread_t t[CROWD];
    pid_t pid;

    start(f, &(struct sworn_signer_proc_opts){.timeout_ms = 60000});
    pid = sworn_signer_proc_pid(f->p);
    for (unsigned i = 0; i < CROWD; i++) {
        m[i] = (struct worker){.f = f, .id = 1000 + i, .count = CROWD_EACH};
        assert_int_equal(pthread_create(&t[i], NULL, sign_many, &m[i]), 0);
    }
    for (unsigned i = 0; i < CROWD; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(m[i].ok, CROWD_EACH);
    }
    assert_int_equal(sworn_signer_proc_pid(f->p), pid);
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
}

/* One signature by a thread of its own; the outcome and error are kept for the test. */
struct attempt {
    struct fixture *f;
    unsigned id;
    pthread_t thread;
    int rc;
    enum sworn_err_code code;
    char msg[SWORN_ERR_MSG_MAX];
    uint8_t digest[32];
};

static void *sign_once(void *arg)
{
    struct attempt *a = arg;
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;

    worker_digest(a->id, 0, a->digest);
    a->rc = sworn_signer_proc_sign(a->f->p, SWORN_PURPOSE_RECEIPT, a->digest, sizeof(a->digest),
                                   sig, sizeof(sig), &sig_len);
    a->code = sworn_err_code();
    snprintf(a->msg, sizeof(a->msg), "%s", sworn_err_msg());
    /* A success must be a signature of this thread's own message. */
    if (a->rc == 0 && sworn_signature_verify(a->f->spki, a->f->spki_len, SWORN_PURPOSE_RECEIPT,
                                             a->digest, sizeof(a->digest), sig, sig_len) != 0)
        a->rc = 2;
    return NULL;
}

static void start_attempts(struct fixture *f, struct attempt *a, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        a[i] = (struct attempt){.f = f, .id = 100 + i, .rc = 9};
        assert_int_equal(pthread_create(&a[i].thread, NULL, sign_once, &a[i]), 0);
    }
}

/* Wait until n requests are outstanding (each thread has sent its own). */
static void wait_outstanding(struct sworn_signer_proc *p, unsigned n)
{
    for (int i = 0; i < 10000 && sworn_signer_proc_outstanding(p) != n; i++)
        sleep_ms(1);
    assert_int_equal(sworn_signer_proc_outstanding(p), n);
}

#define OUTSTANDING 6

static void test_killed_with_outstanding(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.timeout_ms = 60000}; /* no deadline ends this test */
    struct attempt a[OUTSTANDING];
    pid_t old, now;

    start(f, &opts);
    sign_receipt_ok(f);
    old = sworn_signer_proc_pid(f->p);
    /* Stopped, the child answers nothing: every request stays outstanding. */
    assert_int_equal(kill(old, SIGSTOP), 0);
    start_attempts(f, a, OUTSTANDING);
    wait_outstanding(f->p, OUTSTANDING);
    /* Killed with all of them outstanding: every one fails with SWORN_ERR_IO, none succeeds. */
    assert_int_equal(kill(old, SIGKILL), 0);
    for (unsigned i = 0; i < OUTSTANDING; i++) {
        assert_int_equal(pthread_join(a[i].thread, NULL), 0);
        if (a[i].rc != -1 || a[i].code != SWORN_ERR_IO || strstr(a[i].msg, "stalled/died") == NULL)
            fail_msg("request %u: rc %d, %s", i, a[i].rc, a[i].msg);
    }
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
    assert_gone(old);
    /* The next call succeeds, on a new child. */
    sign_receipt_ok(f);
    now = sworn_signer_proc_pid(f->p);
    assert_true(now > 0 && now != old);
}

static void test_deadline_with_outstanding(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.timeout_ms = 300};
    struct attempt a[OUTSTANDING];
    pid_t old;

    start(f, &opts);
    sign_receipt_ok(f);
    old = sworn_signer_proc_pid(f->p);
    assert_int_equal(kill(old, SIGSTOP), 0);
    /* Every request misses its deadline: the first one to do so kills the child, and all fail. */
    start_attempts(f, a, OUTSTANDING);
    for (unsigned i = 0; i < OUTSTANDING; i++) {
        assert_int_equal(pthread_join(a[i].thread, NULL), 0);
        if (a[i].rc != -1 || a[i].code != SWORN_ERR_IO || strstr(a[i].msg, "stalled/died") == NULL)
            fail_msg("request %u: rc %d, %s", i, a[i].rc, a[i].msg);
    }
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
    assert_gone(old);
    assert_int_equal(sworn_signer_proc_pid(f->p), -1);
    sign_receipt_ok(f);
    assert_true(sworn_signer_proc_pid(f->p) != old);
}

/* Children killed again and again while 8 threads sign: every call either returns a signature
 * of its own message or fails with SWORN_ERR_IO; nothing hangs, crashes or crosses; afterwards a
 * call succeeds. The kills follow the signatures (every KILL_EVERY successes), not a clock. */
#define STORM_THREADS 8
#define STORM_EACH 40
#define KILL_EVERY 25
#define KILLS 6

struct storm {
    struct fixture *f;
    pthread_mutex_t lock;
    pthread_cond_t progress;
    unsigned successes, failures, bad, done;
};

struct storm_member {
    struct storm *st;
    unsigned id;
};

static void *storm_sign(void *arg)
{
    struct storm_member *m = arg;
    struct storm *st = m->st;
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;

    for (int i = 0; i < STORM_EACH; i++) {
        int rc;
        int bad = 0;

        worker_digest(m->id, i, digest);
        rc = sworn_signer_proc_sign(st->f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest), sig,
                                    sizeof(sig), &sig_len);
        if (rc == 0)
            bad = sworn_signature_verify(st->f->spki, st->f->spki_len, SWORN_PURPOSE_RECEIPT,
                                         digest, sizeof(digest), sig, sig_len) != 0;
        else
            bad = sworn_err_code() != SWORN_ERR_IO;
        pthread_mutex_lock(&st->lock);
        if (bad)
            st->bad++;
        else if (rc == 0)
            st->successes++;
        else
            st->failures++;
        pthread_cond_signal(&st->progress);
        pthread_mutex_unlock(&st->lock);
    }
    pthread_mutex_lock(&st->lock);
    st->done++;
    pthread_cond_signal(&st->progress);
    pthread_mutex_unlock(&st->lock);
    return NULL;
}

static void test_kill_storm(void **state)
{
    struct fixture *f = *state;
    struct storm st = {.f = f};
    struct storm_member m[STORM_THREADS];
    pthread_t t[STORM_THREADS];
    unsigned kills = 0;

    start(f, &(struct sworn_signer_proc_opts){.timeout_ms = 60000});
    assert_int_equal(pthread_mutex_init(&st.lock, NULL), 0);
    assert_int_equal(pthread_cond_init(&st.progress, NULL), 0);
    for (unsigned i = 0; i < STORM_THREADS; i++) {
        m[i] = (struct storm_member){.st = &st, .id = 2000 + i};
        assert_int_equal(pthread_create(&t[i], NULL, storm_sign, &m[i]), 0);
    }
    pthread_mutex_lock(&st.lock);
    while (st.done < STORM_THREADS) {
        if (kills < KILLS && st.successes >= (kills + 1) * KILL_EVERY) {
            pid_t pid;

            pthread_mutex_unlock(&st.lock);
            pid = sworn_signer_proc_pid(f->p);
            if (pid > 0 && kill(pid, SIGKILL) == 0)
                kills++;
            pthread_mutex_lock(&st.lock);
            continue;
        }
        pthread_cond_wait(&st.progress, &st.lock);
    }
    pthread_mutex_unlock(&st.lock);
    for (unsigned i = 0; i < STORM_THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    print_message("    %u kills: %u signatures, %u failed with SWORN_ERR_IO\n", kills, st.successes,
                  st.failures);
    assert_int_equal(st.bad, 0);
    assert_int_equal(st.successes + st.failures, STORM_THREADS * STORM_EACH);
    assert_true(kills > 0);
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
    sign_receipt_ok(f);
    pthread_cond_destroy(&st.progress);
    pthread_mutex_destroy(&st.lock);
}

/* ---------------------------------------------------------------------------------------------
 * A rogue signer: a thread of this test behind the launcher interface, which signs with the
 * fixture's real key (signer.h) and answers like sworn-signer, until it is told to misbehave in
 * one of the ways the parent must refuse. Each start of a "child" is a new thread on a new
 * socketpair; stopping it shuts its socket and joins the thread.
 */

enum rogue_mode {
    ROGUE_HONEST,
    ROGUE_WRONG_ID,   /* a sign reply with an id never sent */
    ROGUE_WRONG_TYPE, /* a HEALTH_RESP for a SIGN_REQ, with the right id */
    ROGUE_DUPLICATE,  /* holds the first sign request, then answers it twice, never the second */
    ROGUE_UNASKED,    /* answers a sign request, and sends an extra reply nobody asked for */
    ROGUE_SLOW,       /* honest, but every signature takes ROGUE_SLOW_MS, like a slow device */
    ROGUE_MALFORMED   /* a sign reply whose header has a reserved flag set */
};

#define ROGUE_SLOW_MS 400

struct rogue {
    struct fixture *f;
    struct sworn_signer *key; /* used by one rogue thread at a time */
    _Atomic int mode;
    _Atomic unsigned starts, stops;
    int fd; /* the rogue's end; -1 when none runs */
    pthread_t thread;
};

/* cmocka's assertions belong to the test's thread: the rogue's own failures abort. */
static void rogue_check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rogue signer: %s failed: %s\n", what, sworn_err_msg());
        abort();
    }
}

static void rogue_send(int fd, const struct sworn_ipc_msg *m, const struct sworn_ipc_msg *m2)
{
    uint8_t out[2 * SWORN_IPC_FRAME_MAX];
    size_t n = encode(m, out);

    /* Two frames in one write: they reach the parent together. */
    if (m2 != NULL)
        n += encode(m2, out + n);
    /* The parent may have shut the socket already (it stopped this rogue): then nobody reads. */
    (void)sworn_ipc_write_all(fd, out, n, SWORN_IPC_FOREVER);
}

static void *rogue_main(void *arg)
{
    struct rogue *r = arg;
    static struct sworn_ipc_reader in; /* one rogue thread at a time */
    uint8_t sig[SWORN_SIGNER_SIG_MAX], held_sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0, held_len = 0;
    uint32_t held_id = 0;
    int fd = r->fd;

    sworn_ipc_reader_init(&in);
    for (;;) {
        struct sworn_ipc_msg req, resp = {0};
        int mode;

        if (sworn_ipc_reader_next(&in, fd, &req, SWORN_IPC_FOREVER) != 0)
            break;      /* the parent closed or shut down the socket */
        mode = r->mode; /* as the test set it before this request */
        resp.id = req.id;
        if (req.type == SWORN_IPC_INFO_REQ) {
            resp.type = SWORN_IPC_INFO_RESP;
            resp.alg = sworn_signer_alg(r->key);
            resp.software_held = 1;
            resp.data = sworn_signer_spki(r->key, &resp.data_len);
            rogue_send(fd, &resp, NULL);
            continue;
        }
        if (req.type == SWORN_IPC_HEALTH_REQ) {
            resp.type = SWORN_IPC_HEALTH_RESP;
            rogue_send(fd, &resp, NULL);
            continue;
        }
        rogue_check(req.type == SWORN_IPC_SIGN_REQ, "a request of an unknown type");
        rogue_check(sworn_signer_sign(r->key, req.purpose, req.data, req.data_len, sig, sizeof(sig),
                                      &sig_len) == 0,
                    "signing");
        resp.type = SWORN_IPC_SIGN_RESP;
        resp.data = sig;
        resp.data_len = sig_len;
        if (mode == ROGUE_SLOW)
            sleep_ms(ROGUE_SLOW_MS); /* the device's own time, not a wait for an event */
        if (mode == ROGUE_WRONG_ID) {
            resp.id = req.id + 1000;
        } else if (mode == ROGUE_WRONG_TYPE) {
            resp.type = SWORN_IPC_HEALTH_RESP;
            resp.data = NULL;
            resp.data_len = 0;
        } else if (mode == ROGUE_DUPLICATE && held_id == 0) {
            held_id = req.id;
            memcpy(held_sig, sig, sig_len);
            held_len = sig_len;
            continue;
        } else if (mode == ROGUE_DUPLICATE) {
            resp.id = held_id;
            resp.data = held_sig;
            resp.data_len = held_len;
            rogue_send(fd, &resp, &resp);
            continue;
        } else if (mode == ROGUE_MALFORMED) {
            uint8_t out[SWORN_IPC_FRAME_MAX];
            size_t n = encode(&resp, out);

            out[2] = 0x80; /* flags must be 0 */
            (void)sworn_ipc_write_all(fd, out, n, SWORN_IPC_FOREVER);
            continue;
        } else if (mode == ROGUE_UNASKED) {
            struct sworn_ipc_msg extra = {.type = SWORN_IPC_HEALTH_RESP, .id = 999999};

            rogue_send(fd, &resp, &extra);
            continue;
        }
        rogue_send(fd, &resp, NULL);
    }
    return NULL;
}

static int rogue_start(void *arg, int *fd, pid_t *pid)
{
    struct rogue *r = arg;
    int sv[2];

    assert_int_equal(r->fd, -1);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    r->fd = sv[1];
    assert_int_equal(pthread_create(&r->thread, NULL, rogue_main, r), 0);
    r->starts++;
    *fd = sv[0];
    *pid = getpid(); /* not our child: the library leaves it to rogue_stop */
    return 0;
}

/* Stop the running rogue, if any: it sees the socket shut and returns. */
static void rogue_stop(void *arg)
{
    struct rogue *r = arg;

    if (r->fd < 0)
        return;
    (void)shutdown(r->fd, SHUT_RDWR);
    assert_int_equal(pthread_join(r->thread, NULL), 0);
    close(r->fd);
    r->fd = -1;
    r->stops++;
}

static void rogue_open(struct fixture *f, struct rogue *r, struct sworn_signer_launcher *l,
                       unsigned timeout_ms)
{
    memset(r, 0, sizeof(*r));
    r->f = f;
    r->fd = -1;
    r->mode = ROGUE_HONEST;
    assert_int_equal(sworn_signer_open(&f->cfg, &r->key), 0);
    *l = (struct sworn_signer_launcher){.start = rogue_start, .stop = rogue_stop, .arg = r};
    start(f, &(struct sworn_signer_proc_opts){.timeout_ms = timeout_ms, .launcher = l});
    assert_int_equal(r->starts, 1);
}

static void rogue_close(struct fixture *f, struct rogue *r)
{
    sworn_signer_proc_stop(f->p);
    f->p = NULL;
    rogue_stop(r);
    sworn_signer_close(r->key);
}

/* Sign once in this thread and expect the pipeline to refuse the reply: -1, SWORN_ERR_IO. */
static void sign_refused(struct fixture *f, const char *why)
{
    uint8_t digest[32], sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len = 0;

    digest_of("refused", digest);
    assert_int_equal(sworn_signer_proc_sign(f->p, SWORN_PURPOSE_RECEIPT, digest, sizeof(digest),
                                            sig, sizeof(sig), &sig_len),
                     -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_IO);
    if (strstr(sworn_err_msg(), why) == NULL)
        fail_msg("expected \"%s\" in: %s", why, sworn_err_msg());
}

static void test_rogue_replies(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_launcher l;
    struct attempt a[2];
    struct rogue r;
    int ok = 0, refused = 0;

    rogue_open(f, &r, &l, 60000);
    sign_receipt_ok(f);
    /* A reply with an id that was never sent: the child is stopped, the call fails. */
    r.mode = ROGUE_WRONG_ID;
    sign_refused(f, "no request with that id is outstanding");
    assert_int_equal(r.stops, 1);
    assert_int_equal(sworn_signer_proc_pid(f->p), -1);
    /* The right id with the wrong type. */
    r.mode = ROGUE_WRONG_TYPE;
    sign_refused(f, "the wrong type");
    assert_int_equal(r.starts, 2);
    assert_int_equal(r.stops, 2);
    /* A malformed frame: refused by the decoder, the child stopped. */
    r.mode = ROGUE_MALFORMED;
    sign_refused(f, "flags");
    assert_int_equal(r.starts, 3);
    assert_int_equal(r.stops, 3);
    /* Honest again: the next call starts a new "child" and succeeds. */
    r.mode = ROGUE_HONEST;
    sign_receipt_ok(f);
    assert_int_equal(r.starts, 4);
    /* Two requests outstanding; the first is answered twice, the second never. The first
     * caller has its (valid) reply; the duplicate answers nothing outstanding any more, which
     * stops the child and fails the second caller at once, without its deadline (60 s). */
    r.mode = ROGUE_DUPLICATE;
    start_attempts(f, a, 2);
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(a[i].thread, NULL), 0);
        if (a[i].rc == 0) {
            ok++;
        } else if (a[i].rc == -1 && a[i].code == SWORN_ERR_IO &&
                   strstr(a[i].msg, "no request with that id is outstanding") != NULL) {
            refused++;
        } else {
            fail_msg("request %u: rc %d, %s", i, a[i].rc, a[i].msg);
        }
    }
    assert_int_equal(ok, 1);
    assert_int_equal(refused, 1);
    assert_int_equal(r.stops, 4);
    assert_int_equal(sworn_signer_proc_outstanding(f->p), 0);
    /* A reply nobody asked for, right behind a valid one: that call succeeds, and the next one
     * finds the extra frame and replaces the child before it sends anything. */
    r.mode = ROGUE_UNASKED;
    sign_receipt_ok(f);
    assert_int_equal(r.starts, 5);
    r.mode = ROGUE_HONEST;
    sign_receipt_ok(f);
    assert_int_equal(r.stops, 5);
    assert_int_equal(r.starts, 6);
    rogue_close(f, &r);
}

/* A slow but healthy device: each signature takes 0.4 s against a 1 s deadline, and 4 callers
 * queue behind each other, so the last waits about 1.6 s in all. Each request is held to the
 * deadline from when the child is free to work on it, not from its sending: all succeed, and the
 * child is not taken for a stalled one. */
static void test_slow_device_queue(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_launcher l;
    struct attempt a[4];
    struct rogue r;

    rogue_open(f, &r, &l, 1000);
    r.mode = ROGUE_SLOW;
    start_attempts(f, a, 4);
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(a[i].thread, NULL), 0);
        if (a[i].rc != 0)
            fail_msg("request %u: rc %d, %s", i, a[i].rc, a[i].msg);
    }
    assert_int_equal(r.starts, 1);
    assert_int_equal(r.stops, 0);
    rogue_close(f, &r);
}

static void test_child_hygiene(void **state)
{
    struct fixture *f = *state;
    char path[64], link[128];
    int stray = open("/dev/null", O_RDONLY); /* no O_CLOEXEC: fork would pass it on */
    struct dirent *e;
    int fds = 0;
    pid_t pid;
    DIR *d;

    assert_true(stray >= 0);
    start(f, NULL);
    pid = sworn_signer_proc_pid(f->p);
    assert_non_null(strstr(proc_file(pid, "limits"), "Max core file size        0"));
    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
    d = opendir(path);
    if (geteuid() != 0) {
        /* Not dumpable: even its own uid may not look at its descriptors. */
        assert_null(d);
        assert_int_equal(errno, EACCES);
        close(stray);
        return;
    }
    /* Only 0, 1, 2 and the socket on 3. */
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        assert_true(atoi(e->d_name) >= 0 && atoi(e->d_name) <= 3);
        fds++;
    }
    closedir(d);
    assert_int_equal(fds, 4);
    snprintf(path, sizeof(path), "/proc/%ld/fd/3", (long)pid);
    assert_true(readlink(path, link, sizeof(link)) > 0);
    assert_memory_equal(link, "socket:", 7);
    close(stray);
}

/* As root: the child runs as nobody (with a root-only key file), in a chroot when asked. */
static void test_privilege_drop(void **state)
{
    struct fixture *f = *state;
    struct sworn_signer_proc_opts opts = {.uid = NOBODY, .gid = NOBODY};
    char *jail = sworn_test_path(f->dir, "empty");
    char path[64], root[256];
    const char *status, *groups;
    struct stat st;
    pid_t pid, old;
    ssize_t n;

    if (geteuid() != 0) {
        print_message("    not root: the privilege drop is not tested\n");
        free(jail);
        skip();
    }
    assert_int_equal(stat(f->key, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    start(f, &opts);
    pid = sworn_signer_proc_pid(f->p);
    status = proc_file(pid, "status");
    assert_non_null(strstr(status, "\nUid:\t65534\t65534\t65534\t65534\n"));
    assert_non_null(strstr(status, "\nGid:\t65534\t65534\t65534\t65534\n"));
    groups = strstr(status, "\nGroups:");
    assert_non_null(groups);
    assert_true(strcspn(groups + 8, "\n") == strspn(groups + 8, " \t")); /* no group listed */
    /* Not dumpable: the kernel then gives the process's /proc files to root, not to its uid. */
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_non_null(strstr(proc_file(pid, "limits"), "Max core file size        0"));
    sign_receipt_ok(f);
    assert_int_equal(sworn_signer_proc_health(f->p), 0);
    /* The restarted child opens the root-only key again with privilege, then drops. */
    old = pid;
    assert_int_equal(kill(old, SIGKILL), 0);
    wait_zombie(old);
    sign_receipt_ok(f);
    pid = sworn_signer_proc_pid(f->p);
    assert_true(pid != old);
    assert_non_null(strstr(proc_file(pid, "status"), "\nUid:\t65534\t65534\t65534\t65534\n"));
    sworn_signer_proc_stop(f->p);
    f->p = NULL;

    /* With a chroot to an empty folder. */
    assert_int_equal(mkdir(jail, 0755), 0);
    opts.chroot_dir = jail;
    start(f, &opts);
    pid = sworn_signer_proc_pid(f->p);
    snprintf(path, sizeof(path), "/proc/%ld/root", (long)pid);
    n = readlink(path, root, sizeof(root) - 1);
    assert_true(n > 0);
    root[n] = '\0';
    assert_string_equal(root, jail);
    sign_receipt_ok(f);
    free(jail);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipc_round_trip),
        cmocka_unit_test(test_ipc_hostile),
        cmocka_unit_test(test_ipc_bit_flips),
        cmocka_unit_test(test_ipc_encode_refuses),
        cmocka_unit_test(test_ipc_errmsg_clean),
        cmocka_unit_test(test_ipc_io),
        cmocka_unit_test(test_ipc_reader),
        cmocka_unit_test_setup_teardown(test_start_and_info, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sign_purposes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_while_idle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stalled_mid_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_mid_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_bytes_to_child, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_backoff_and_key_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_more_callers_than_places, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill_storm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_with_outstanding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_with_outstanding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rogue_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_device_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_child_hygiene, setup, teardown),
        cmocka_unit_test_setup_teardown(test_privilege_drop, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
