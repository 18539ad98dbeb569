/*
 * swtpm_fixture.h -- a private software TPM for tests: a fresh TPM 2.0 state (swtpm_setup) in a
 * temporary folder, served by `swtpm socket` on two free loopback ports, with helpers to kill,
 * restart, stop and continue it (for fault tests), and to make persistent keys with tpm2-tools.
 *
 * The TCTI string for ESAPI and tpm2-tools is t->tcti ("swtpm:host=127.0.0.1,port=P"; the
 * control port is P + 1, as the swtpm TCTI expects). swtpm has no resource manager in front of
 * it, so only three transient objects fit: the key helper flushes them after every command.
 *
 * Test code only. Every function returns 0, or -1 after printing why to stderr: a missing swtpm
 * or tpm2-tools is a test failure, never a skip. swtpm dies with the test process
 * (PR_SET_PDEATHSIG), so a crashed test leaves no TPM behind.
 */
#ifndef SWORN_SWTPM_FIXTURE_H
#define SWORN_SWTPM_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "testutil.h"

#define SWORN_TEST_SWTPM_TCTI_MAX 64

/* The attributes of a key the tpm signer accepts (tpm2-tools -a syntax). */
#define SWORN_TEST_SWTPM_SIGN_ATTRS "sign|fixedtpm|fixedparent|sensitivedataorigin|userwithauth"
/* tpm2-tools -G for an ECDSA-SHA256 P-256 key; the null symmetric also suits restricted keys. */
#define SWORN_TEST_SWTPM_P256 "ecc256:ecdsa-sha256:null"

struct sworn_test_swtpm {
    char *dir;   /* the temporary folder, removed by sworn_test_swtpm_stop */
    char *state; /* <dir>/state: the TPM state, kept across kill and restart */
    int port;    /* the TPM command port; the control port is port + 1 */
    pid_t pid;   /* the running swtpm, or 0 */
    int paused;  /* stopped by sworn_test_swtpm_pause and not yet continued */
    char tcti[SWORN_TEST_SWTPM_TCTI_MAX];
};

/* Make a fresh TPM state and start swtpm on free ports; waits until it accepts connections. */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_start(struct sworn_test_swtpm *t);

/*
 * As sworn_test_swtpm_start, but the TPM is manufactured with EK certificates (swtpm_setup
 * --create-ek-cert): an RSA-2048 EK certificate in NV 0x01c00002 and an ECC (P-384, swtpm 0.7)
 * one in NV 0x01c00016, copies in <dir>/ek-rsa2048.crt and <dir>/ek-secp384r1.crt (DER), issued
 * by a private swtpm_localca CA made in <dir>/ca (never the system's /var/lib/swtpm-localca):
 * its root is <dir>/SWORN_TEST_SWTPM_CA_ROOT and the issuing intermediate
 * <dir>/SWORN_TEST_SWTPM_CA_ISSUER (PEM).
 */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_start_ek(struct sworn_test_swtpm *t);

#define SWORN_TEST_SWTPM_CA_DIR "ca"
#define SWORN_TEST_SWTPM_CA_ROOT "ca/swtpm-localca-rootca-cert.pem"
#define SWORN_TEST_SWTPM_CA_ISSUER "ca/issuercert.pem"

/* Kill swtpm (if running) and remove the folder. Safe on a zeroed or half-started fixture. */
void sworn_test_swtpm_stop(struct sworn_test_swtpm *t);

/* SIGKILL swtpm and reap it: the TPM goes away mid-use, its state stays on disk. */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_kill(struct sworn_test_swtpm *t);

/* Start swtpm again on the same state and ports (after sworn_test_swtpm_kill). */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_restart(struct sworn_test_swtpm *t);

/* SIGSTOP swtpm: it keeps its sockets but never answers, like a hung TPM. */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_pause(struct sworn_test_swtpm *t);

/* SIGCONT swtpm after sworn_test_swtpm_pause. */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_resume(struct sworn_test_swtpm *t);

/*
 * Make a primary key in the owner hierarchy with tpm2-tools (alg as for tpm2_createprimary -G,
 * attributes as for -a), persist it at handle, and write its DER SubjectPublicKeyInfo, as
 * tpm2_readpublic -f der gives it, into spki (capacity cap). OUT: *spki_len.
 * Primary keys are derived from the template: the same alg and attributes give the same key.
 */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_make_key(struct sworn_test_swtpm *t, uint32_t handle, const char *alg,
                              const char *attrs, uint8_t *spki, size_t cap, size_t *spki_len);

/* Evict the persistent object at handle (tpm2_evictcontrol). */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_evict(struct sworn_test_swtpm *t, uint32_t handle);

/*
 * Run a /bin/sh command line with TPM2TOOLS_TCTI set and no inherited descriptors (use this
 * rather than system() while a signer may be inside a TPM call; see swtpm_fixture.c). Its output
 * goes to <dir>/cmd.log. Returns its exit status, or -1 when it could not run or was killed.
 */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_sh(struct sworn_test_swtpm *t, const char *cmd);

/* cmocka setup: a fresh swtpm (struct sworn_test_swtpm in *state); teardown stops and frees it. */
int sworn_test_swtpm_setup(void **state);
int sworn_test_swtpm_teardown(void **state);
/* The same with sworn_test_swtpm_start_ek (teardown: sworn_test_swtpm_teardown). */
int sworn_test_swtpm_setup_ek(void **state);

/* sworn_test_swtpm_sh with a printf-style command line (at most 8 KiB). */
SWORN_TEST_MUST_CHECK
int sworn_test_swtpm_shf(struct sworn_test_swtpm *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
