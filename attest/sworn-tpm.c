/*
 * sworn-tpm -- the operator's and start-up's TPM tool: attestation key, measured start, quotes
 * (DESIGN.md section 4, "Quote"; the ESAPI side is tpmattest.h).
 *
 *   provision --tcti T --out-dir D
 *       create the attestation key (a primary in the endorsement hierarchy: the same key at every
 *       start; this command persists nothing, flushing its transient copy, while decisiond keeps
 *       the same key persistent at tpm.ak_handle) and write D/ak.pub (marshalled TPM2B_PUBLIC, as
 * tpm2-tools' -u files), D/ak.name (the binary TPM name, 0x000b || SHA-256(TPMT_PUBLIC)),
 *       D/ak.spki.der, D/tpm.info (the TPM's self-reported manufacturer and firmware version,
 *       for the operator's record and the verifier's firmware floor), and D/ek.cert.der when the
 *       TPM holds an EK certificate in NV; prints the AK name in hex
 *   measure --tcti T --event-log FILE FILE...
 *       for each FILE in the order given: append "sha256 <hex SHA-256 of its bytes> <path>\n" to
 *       the event log (flushed to disk), then extend PCR 23 with that digest; prints the final
 *       PCR 23 value in hex
 *   quote --tcti T --checkpoint NOTE --out-attest F --out-sig F [--pcrs N[,N...]]
 *       quote PCR 23 (and the listed PCRs) of the SHA-256 bank with the attestation key, with
 *       qualifying data SHA-256 of the checkpoint note's signed text (the note up to and
 *       including the '\n' before its last blank line); writes the raw TPMS_ATTEST and
 *       TPMT_SIGNATURE and prints the qualifying data in hex
 *   ek-pub --tcti T --out FILE [--ek-alg rsa|ecc]
 *       create the RSA-2048 EK (TCG template L-1, the default) or the ECC P-256 EK (template L-2)
 *       and write its public (marshalled TPM2B_PUBLIC, the same bytes as tpm2_createek -G rsa|ecc
 *       -u) for an auditor
 *   make-credential --ek-pub FILE --ak-name FILE --secret FILE --out FILE
 *                   [--ek-cert FILE --ca FILE [--ca FILE...]]
 *       auditor side, offline (no TPM): TPM2_MakeCredential in software, protecting the secret
 *       (1..32 bytes) for the object with that (binary) name under that EK (RSA-2048, refused
 *       when it has the ROCA fingerprint, or ECC P-256); writes the credential in tpm2-tools'
 *       layout (tpm2_activatecredential reads it; see tpmattest.h). With --ek-cert, first checks
 *       that the EK certificate chains to the CAs and certifies exactly that EK public
 *   verify-ek-cert --ek-cert FILE --ca FILE [--ca FILE...] [--ek-pub FILE]
 *       offline: check that the EK certificate (DER or PEM) chains to the CAs (the vendor's root
 *       and intermediates) and, with --ek-pub, that it certifies that EK public; prints "ok"
 *   activate-credential --tcti T --in FILE --out SECRET
 *       TPM side: re-create the EK the credential was made for (RSA or ECC, told by its seed)
 *       and the AK, and have the TPM open the credential; it does only when the credential was
 *       made for this TPM's EK and this AK's name, so an auditor who gets the secret back knows
 *       the AK lives in the TPM that EK belongs to
 *
 * Replaying the event log: PCR 23 is reset to 32 zero bytes at TPM reset (power on), and every
 * measure line is one extend, PCR_new = SHA-256(PCR_old || digest). A verifier starts from
 * zeros (or from the value quoted before the first line it holds) and folds the digests of the
 * lines in order; the result must equal the quoted PCR 23. The log line is written before the
 * extend so that a crash between the two leaves a line too many (the replay then fails, which
 * is visible) and never an extend that no line explains.
 *
 * T is a tpm2-tss TCTI configuration ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321").
 * Exit status: 0 success, 1 the TPM or the file system failed, 2 bad usage or input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cli.h"
#include "err.h"
#include "fileio.h"
#include "note.h"
#include "tpmattest.h"
#include "wipe.h"

#define EXIT_REFUSED 1
#define EXIT_USAGE 2
#define READ_CHUNK 65536
#define PATH_MAX_LEN 4096
#define HEX_DIGEST_LEN (2 * SWORN_TPM_DIGEST_LEN)
#define MAX_CA 16            /* --ca files: a root and its intermediates */
#define CERT_INPUT_MAX 65536 /* an EK certificate is a few KiB at most */
#define INFO_MAX 256

static const char usage_text[] =
    "usage: sworn-tpm COMMAND [OPTIONS]\n"
    "  provision --tcti T --out-dir D\n"
    "      create the attestation key; write D/ak.pub, D/ak.name, D/ak.spki.der\n"
    "      D/tpm.info (manufacturer, firmware version) and D/ek.cert.der when the TPM\n"
    "      has an EK certificate; print the AK name\n"
    "  measure --tcti T --event-log FILE FILE...\n"
    "      extend PCR 23 with each file's SHA-256, logging 'sha256 <hex> <path>' lines;\n"
    "      print the final PCR 23\n"
    "  quote --tcti T --checkpoint NOTE --out-attest F --out-sig F [--pcrs N[,N...]]\n"
    "      quote PCR 23 (and the listed PCRs) with qualifying data SHA-256(note text)\n"
    "  ek-pub --tcti T --out FILE [--ek-alg rsa|ecc]\n"
    "      write the EK's public (TPM2B_PUBLIC, as tpm2_createek -u) for an auditor\n"
    "  make-credential --ek-pub FILE --ak-name FILE --secret FILE --out FILE\n"
    "                  [--ek-cert FILE --ca FILE [--ca FILE...]]\n"
    "      offline, no TPM: protect a 1..32-byte secret for that AK name under that EK\n"
    "      (after checking the EK certificate, when given)\n"
    "  verify-ek-cert --ek-cert FILE --ca FILE [--ca FILE...] [--ek-pub FILE]\n"
    "      offline: check the EK certificate's chain (and that it certifies that EK)\n"
    "  activate-credential --tcti T --in FILE --out SECRET\n"
    "      have the TPM recover the secret with its EK and the AK\n"
    "T is a TCTI configuration, e.g. device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321.\n";

/* The exit statuses --help adds to the shared ones (common/cli.h). */
static const char own_exits[] =
    "  (1: the TPM or the file system failed; 2: also an input that does not load)\n";

static const char *command = "";

struct opts {
    const char *tcti;
    const char *out_dir;
    const char *event_log;
    const char *checkpoint;
    const char *out_attest;
    const char *out_sig;
    const char *pcrs;
    const char *out;
    const char *in;
    const char *ek_pub;
    const char *ak_name;
    const char *secret;
    const char *ek_alg;
    const char *ek_cert;
    const char *ca[MAX_CA];
    size_t n_ca;
    char **args;
    int nargs;
};

static int usage(const char *msg)
{
    fprintf(stderr, "sworn-tpm: %s%s%s\nrun 'sworn-tpm --help' for usage\n", command,
            command[0] != '\0' ? ": " : "", msg);
    return EXIT_USAGE;
}

/* Print the pending error; bad input is a usage error, everything else a failure. */
static int fail(void)
{
    enum sworn_err_code code = sworn_err_code();

    fprintf(stderr, "sworn-tpm: %s: %s\n", command, sworn_err_msg());
    return code == SWORN_ERR_ARG || code == SWORN_ERR_FORMAT || code == SWORN_ERR_RANGE
               ? EXIT_USAGE
               : EXIT_REFUSED;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 0xF];
    }
    out[2 * n] = '\0';
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Outputs of sworn-tpm are public (keys' public parts, quotes): replaced atomically, mode 0644. */
static int write_public(const char *path, const void *data, size_t len)
{
    return sworn_file_replace(path, data, len, 0644);
}

static int write_in_dir(const char *dir, const char *name, const void *data, size_t len)
{
    char path[PATH_MAX_LEN];

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return sworn_err_set(SWORN_ERR_RANGE, "path too long: %s/%s", dir, name);
    return sworn_file_replace(path, data, len, 0644);
}

/* SHA-256 of a file's bytes, read in chunks (measured binaries may be large). */
static int hash_file(const char *path, uint8_t digest[SWORN_TPM_DIGEST_LEN])
{
    EVP_MD_CTX *md = NULL;
    uint8_t *buf = NULL;
    unsigned int len = 0;
    int fd = -1, ret = -1;
    ssize_t n;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    SWORN_ENSURE(fd >= 0, SWORN_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    buf = malloc(READ_CHUNK);
    md = EVP_MD_CTX_new();
    SWORN_ENSURE(buf != NULL && md != NULL, SWORN_ERR_NOMEM, "out of memory");
    SWORN_ENSURE(EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1, SWORN_ERR_CRYPTO,
                 "SHA-256 failed");
    while ((n = read(fd, buf, READ_CHUNK)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(n > 0, SWORN_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        SWORN_ENSURE(EVP_DigestUpdate(md, buf, (size_t)n) == 1, SWORN_ERR_CRYPTO, "SHA-256 failed");
    }
    SWORN_ENSURE(EVP_DigestFinal_ex(md, digest, &len) == 1 && len == SWORN_TPM_DIGEST_LEN,
                 SWORN_ERR_CRYPTO, "SHA-256 failed");
    ret = 0;
fail:
    EVP_MD_CTX_free(md);
    free(buf);
    if (fd >= 0)
        close(fd);
    return ret;
}

static int cmd_provision(const struct opts *o)
{
    struct sworn_tpm *t = NULL;
    struct sworn_tpm_ak ak;
    struct sworn_tpm_info info;
    uint8_t *ek = NULL;
    size_t ek_len = 0;
    char name_hex[2 * SWORN_TPM_NAME_LEN + 1], info_text[INFO_MAX];
    int ret = EXIT_REFUSED, have_ak = 0, rc, info_len;

    if (o->tcti == NULL || o->out_dir == NULL || o->nargs != 0)
        return usage("needs --tcti T --out-dir D");
    SWORN_GUARD(sworn_tpm_open(o->tcti, &t));
    SWORN_GUARD(sworn_tpm_ak_create(t, &ak));
    have_ak = 1;
    SWORN_GUARD(write_in_dir(o->out_dir, "ak.pub", ak.pub, ak.pub_len));
    SWORN_GUARD(write_in_dir(o->out_dir, "ak.name", ak.name, sizeof(ak.name)));
    SWORN_GUARD(write_in_dir(o->out_dir, "ak.spki.der", ak.spki, ak.spki_len));
    SWORN_GUARD(sworn_tpm_get_info(t, &info));
    /* firmware_version is the number quotes carry (and a verifier's floor compares). */
    info_len = snprintf(info_text, sizeof(info_text),
                        "manufacturer %s\nmanufacturer_id 0x%08x\nfirmware_version 0x%016llx\n",
                        info.manufacturer_text, (unsigned)info.manufacturer,
                        (unsigned long long)info.firmware_version);
    SWORN_ENSURE(info_len > 0 && (size_t)info_len < sizeof(info_text), SWORN_ERR_RANGE,
                 "tpm.info too long");
    SWORN_GUARD(write_in_dir(o->out_dir, "tpm.info", info_text, (size_t)info_len));
    rc = sworn_tpm_read_ek_cert(t, &ek, &ek_len);
    if (rc == 0) {
        SWORN_GUARD(write_in_dir(o->out_dir, "ek.cert.der", ek, ek_len));
    } else if (sworn_err_code() == SWORN_ERR_NOTFOUND) {
        /* Not every TPM carries its certificate; the AK is still usable, pinned by its key. */
        fprintf(stderr, "sworn-tpm: provision: no EK certificate in the TPM's NV\n");
        sworn_err_clear();
    } else {
        goto fail;
    }
    hex(ak.name, sizeof(ak.name), name_hex);
    printf("%s\n", name_hex);
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    free(ek);
    if (have_ak)
        sworn_tpm_ak_flush(t, &ak);
    sworn_tpm_close(t);
    return ret;
}

static int cmd_measure(const struct opts *o)
{
    struct sworn_tpm *t = NULL;
    uint8_t(*digests)[SWORN_TPM_DIGEST_LEN] = NULL;
    uint8_t pcr[SWORN_TPM_DIGEST_LEN];
    char digest_hex[HEX_DIGEST_LEN + 1];
    int fd = -1, ret = EXIT_REFUSED;

    if (o->tcti == NULL || o->event_log == NULL || o->nargs < 1)
        return usage("needs --tcti T --event-log FILE FILE...");
    for (int i = 0; i < o->nargs; i++)
        if (strchr(o->args[i], '\n') != NULL)
            return usage("a measured path may not contain a newline (one event per line)");
    /* Hash everything first: an unreadable file must not leave a half-measured start. */
    digests = calloc((size_t)o->nargs, sizeof(*digests));
    if (digests == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (int i = 0; i < o->nargs; i++)
        SWORN_GUARD(hash_file(o->args[i], digests[i]));
    SWORN_GUARD(sworn_tpm_open(o->tcti, &t));
    fd = open(o->event_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    SWORN_ENSURE(fd >= 0, SWORN_ERR_IO, "cannot open %s: %s", o->event_log, strerror(errno));
    for (int i = 0; i < o->nargs; i++) {
        static const char prefix[] = "sha256 ";

        hex(digests[i], SWORN_TPM_DIGEST_LEN, digest_hex);
        /* The line reaches the disk before the extend (see the file comment). */
        SWORN_ENSURE(write_all(fd, prefix, sizeof(prefix) - 1) == 0 &&
                         write_all(fd, digest_hex, HEX_DIGEST_LEN) == 0 &&
                         write_all(fd, " ", 1) == 0 &&
                         write_all(fd, o->args[i], strlen(o->args[i])) == 0 &&
                         write_all(fd, "\n", 1) == 0 && fsync(fd) == 0,
                     SWORN_ERR_IO, "cannot write %s: %s", o->event_log, strerror(errno));
        SWORN_GUARD(sworn_tpm_pcr_extend(t, SWORN_TPM_MEASURE_PCR, digests[i]));
    }
    SWORN_GUARD(sworn_tpm_pcr_read(t, SWORN_TPM_MEASURE_PCR, pcr));
    hex(pcr, sizeof(pcr), digest_hex);
    printf("%s\n", digest_hex);
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    if (fd >= 0 && close(fd) < 0 && ret == 0) {
        sworn_err_set(SWORN_ERR_IO, "cannot close %s: %s", o->event_log, strerror(errno));
        ret = fail();
    }
    free(digests);
    sworn_tpm_close(t);
    return ret;
}

/* Parse "N[,N...]" (PCRs 0..23) into a mask. Returns 0 or -1. */
static int parse_pcrs(const char *s, uint32_t *mask)
{
    const char *p = s;

    for (;;) {
        char *end;
        unsigned long n;

        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        n = strtoul(p, &end, 10);
        if (errno != 0 || n > 23)
            return -1;
        *mask |= 1u << n;
        if (*end == '\0')
            return 0;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

static int cmd_quote(const struct opts *o)
{
    struct sworn_tpm *t = NULL;
    struct sworn_tpm_ak ak;
    struct sworn_note note;
    char *msg = NULL;
    size_t msg_len = 0, attest_len = 0, sig_len = 0;
    uint8_t qual[SWORN_TPM_DIGEST_LEN];
    uint8_t *attest = NULL, *sig = NULL;
    char qual_hex[HEX_DIGEST_LEN + 1];
    uint32_t mask = 1u << SWORN_TPM_MEASURE_PCR;
    unsigned int len = 0;
    int ret = EXIT_REFUSED, have_ak = 0;

    if (o->tcti == NULL || o->checkpoint == NULL || o->out_attest == NULL || o->out_sig == NULL ||
        o->nargs != 0)
        return usage("needs --tcti T --checkpoint NOTE --out-attest F --out-sig F");
    if (o->pcrs != NULL && parse_pcrs(o->pcrs, &mask) < 0)
        return usage("--pcrs must be a comma-separated list of PCR numbers 0..23");
    SWORN_GUARD(sworn_file_read(o->checkpoint, SWORN_NOTE_MAX_LEN, &msg, &msg_len));
    /* The same split as every note verifier: the signed text is what the quote binds. */
    SWORN_GUARD(sworn_note_parse(msg, msg_len, &note));
    SWORN_ENSURE(EVP_Digest(note.text, note.text_len, qual, &len, EVP_sha256(), NULL) == 1 &&
                     len == SWORN_TPM_DIGEST_LEN,
                 SWORN_ERR_CRYPTO, "SHA-256 failed");
    SWORN_GUARD(sworn_tpm_open(o->tcti, &t));
    SWORN_GUARD(sworn_tpm_ak_create(t, &ak));
    have_ak = 1;
    SWORN_GUARD(sworn_tpm_quote(t, &ak, qual, mask, &attest, &attest_len, &sig, &sig_len));
    SWORN_GUARD(write_public(o->out_attest, attest, attest_len));
    SWORN_GUARD(write_public(o->out_sig, sig, sig_len));
    hex(qual, sizeof(qual), qual_hex);
    printf("%s\n", qual_hex);
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    free(attest);
    free(sig);
    free(msg);
    if (have_ak)
        sworn_tpm_ak_flush(t, &ak);
    sworn_tpm_close(t);
    return ret;
}

static int cmd_ek_pub(const struct opts *o)
{
    struct sworn_tpm *t = NULL;
    uint8_t pub[SWORN_TPM_PUBLIC_MAX];
    size_t pub_len = 0;
    uint32_t ek = 0;
    int ret = EXIT_REFUSED, have_ek = 0;

    if (o->tcti == NULL || o->out == NULL || o->nargs != 0)
        return usage("needs --tcti T --out FILE [--ek-alg rsa|ecc]");
    if (o->ek_alg != NULL && strcmp(o->ek_alg, "rsa") != 0 && strcmp(o->ek_alg, "ecc") != 0)
        return usage("--ek-alg is rsa or ecc");
    SWORN_GUARD(sworn_tpm_open(o->tcti, &t));
    if (o->ek_alg != NULL && strcmp(o->ek_alg, "ecc") == 0)
        SWORN_GUARD(sworn_tpm_ek_create_ecc(t, &ek, pub, &pub_len));
    else
        SWORN_GUARD(sworn_tpm_ek_create(t, &ek, pub, &pub_len));
    have_ek = 1;
    SWORN_GUARD(write_public(o->out, pub, pub_len));
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    if (have_ek)
        sworn_tpm_flush(t, &ek);
    sworn_tpm_close(t);
    return ret;
}

/* Input files of make-credential are small; this bounds them well above their sizes. */
#define CRED_INPUT_MAX 4096

/* The EK certificate of o against o's CAs, and (ek_pub not NULL) against that EK public. */
static int check_ek_cert(const struct opts *o, const uint8_t *ek_pub, size_t ek_pub_len)
{
    char *cert = NULL;
    size_t cert_len = 0;
    int ret = -1;

    SWORN_GUARD(sworn_file_read(o->ek_cert, CERT_INPUT_MAX, &cert, &cert_len));
    SWORN_GUARD(sworn_tpm_ek_cert_verify((const uint8_t *)cert, cert_len, o->ca, o->n_ca, ek_pub,
                                         ek_pub_len));
    ret = 0;
fail:
    free(cert);
    return ret;
}

static int cmd_verify_ek_cert(const struct opts *o)
{
    char *ek = NULL;
    size_t ek_len = 0;
    int ret = EXIT_REFUSED;

    if (o->ek_cert == NULL || o->n_ca == 0 || o->tcti != NULL || o->nargs != 0)
        return usage("needs --ek-cert FILE --ca FILE [--ca FILE...] [--ek-pub FILE] (no TPM)");
    if (o->ek_pub != NULL)
        SWORN_GUARD(sworn_file_read(o->ek_pub, CRED_INPUT_MAX, &ek, &ek_len));
    SWORN_GUARD(check_ek_cert(o, (const uint8_t *)ek, ek_len));
    printf("ok\n");
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    free(ek);
    return ret;
}

static int cmd_make_credential(const struct opts *o)
{
    char *ek = NULL, *name = NULL, *secret = NULL;
    size_t ek_len = 0, name_len = 0, secret_len = 0, out_len = 0;
    uint8_t *out = NULL;
    int ret = EXIT_REFUSED;

    if (o->ek_pub == NULL || o->ak_name == NULL || o->secret == NULL || o->out == NULL ||
        o->tcti != NULL || o->nargs != 0 || o->ek_alg != NULL)
        return usage("needs --ek-pub FILE --ak-name FILE --secret FILE --out FILE (no TPM)");
    if ((o->ek_cert != NULL) != (o->n_ca > 0))
        return usage("--ek-cert and --ca go together");
    SWORN_GUARD(sworn_file_read(o->ek_pub, CRED_INPUT_MAX, &ek, &ek_len));
    /* The certificate first: no credential for an EK that no trusted CA vouches for. */
    if (o->ek_cert != NULL)
        SWORN_GUARD(check_ek_cert(o, (const uint8_t *)ek, ek_len));
    SWORN_GUARD(sworn_file_read(o->ak_name, CRED_INPUT_MAX, &name, &name_len));
    SWORN_GUARD(sworn_file_read(o->secret, CRED_INPUT_MAX, &secret, &secret_len));
    SWORN_GUARD(sworn_tpm_make_credential((const uint8_t *)ek, ek_len, (const uint8_t *)name,
                                          name_len, (const uint8_t *)secret, secret_len, &out,
                                          &out_len));
    SWORN_GUARD(write_public(o->out, out, out_len));
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    if (secret != NULL)
        sworn_memzero(secret, secret_len);
    free(secret);
    free(name);
    free(ek);
    free(out);
    return ret;
}

static int cmd_activate_credential(const struct opts *o)
{
    struct sworn_tpm *t = NULL;
    struct sworn_tpm_ak ak;
    uint8_t pub[SWORN_TPM_PUBLIC_MAX], secret[SWORN_TPM_CREDENTIAL_MAX];
    char *cred = NULL;
    size_t pub_len = 0, cred_len = 0, secret_len = 0;
    uint32_t ek = 0;
    int ret = EXIT_REFUSED, have_ak = 0, have_ek = 0, alg;

    /* The credential itself says which EK it was made for: --ek-alg would only contradict it. */
    if (o->tcti == NULL || o->in == NULL || o->out == NULL || o->nargs != 0 || o->ek_alg != NULL)
        return usage("needs --tcti T --in FILE --out SECRET");
    SWORN_GUARD(sworn_file_read(o->in, CRED_INPUT_MAX, &cred, &cred_len));
    /* The seed's form tells which EK the credential was made for; refused before the TPM. */
    alg = sworn_tpm_credential_ek_alg((const uint8_t *)cred, cred_len);
    SWORN_GUARD(alg);
    SWORN_GUARD(sworn_tpm_open(o->tcti, &t));
    if (alg == SWORN_TPM_EK_ECC)
        SWORN_GUARD(sworn_tpm_ek_create_ecc(t, &ek, pub, &pub_len));
    else
        SWORN_GUARD(sworn_tpm_ek_create(t, &ek, pub, &pub_len));
    have_ek = 1;
    SWORN_GUARD(sworn_tpm_ak_create(t, &ak));
    have_ak = 1;
    SWORN_GUARD(sworn_tpm_activate_credential(t, &ak, ek, (const uint8_t *)cred, cred_len, secret,
                                              &secret_len));
    SWORN_GUARD(write_public(o->out, secret, secret_len));
    ret = 0;
fail:
    if (ret != 0)
        ret = fail();
    sworn_memzero(secret, sizeof(secret));
    free(cred);
    if (have_ak)
        sworn_tpm_ak_flush(t, &ak);
    if (have_ek)
        sworn_tpm_flush(t, &ek);
    sworn_tpm_close(t);
    return ret;
}

static int run_command(int argc, char **argv)
{
    static const struct option longopts[] = {{"tcti", required_argument, NULL, 't'},
                                             {"out-dir", required_argument, NULL, 'd'},
                                             {"event-log", required_argument, NULL, 'e'},
                                             {"checkpoint", required_argument, NULL, 'c'},
                                             {"out-attest", required_argument, NULL, 'a'},
                                             {"out-sig", required_argument, NULL, 's'},
                                             {"pcrs", required_argument, NULL, 'p'},
                                             {"out", required_argument, NULL, 'o'},
                                             {"in", required_argument, NULL, 'i'},
                                             {"ek-pub", required_argument, NULL, 'E'},
                                             {"ak-name", required_argument, NULL, 'n'},
                                             {"secret", required_argument, NULL, 'S'},
                                             {"ek-alg", required_argument, NULL, 'G'},
                                             {"ek-cert", required_argument, NULL, 'C'},
                                             {"ca", required_argument, NULL, 'A'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct opts o;
    int c;

    memset(&o, 0, sizeof(o));
    /* A TPM socket that dies mid-write must fail the TCTI call (EPIPE), not kill the tool. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2)
        return usage("no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        sworn_cli_print_help(usage_text, own_exits);
        return 0;
    }
    command = argv[1];
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o.tcti = optarg;
            break;
        case 'd':
            o.out_dir = optarg;
            break;
        case 'e':
            o.event_log = optarg;
            break;
        case 'c':
            o.checkpoint = optarg;
            break;
        case 'a':
            o.out_attest = optarg;
            break;
        case 's':
            o.out_sig = optarg;
            break;
        case 'p':
            o.pcrs = optarg;
            break;
        case 'o':
            o.out = optarg;
            break;
        case 'i':
            o.in = optarg;
            break;
        case 'E':
            o.ek_pub = optarg;
            break;
        case 'n':
            o.ak_name = optarg;
            break;
        case 'S':
            o.secret = optarg;
            break;
        case 'G':
            o.ek_alg = optarg;
            break;
        case 'C':
            o.ek_cert = optarg;
            break;
        case 'A':
            if (o.n_ca == MAX_CA)
                return usage("too many --ca files");
            o.ca[o.n_ca++] = optarg;
            break;
        case 'h':
            sworn_cli_print_help(usage_text, own_exits);
            return 0;
        default:
            return usage("unknown or incomplete option");
        }
    }
    o.args = argv + optind;
    o.nargs = argc - optind;
    if (strcmp(command, "provision") == 0)
        return cmd_provision(&o);
    if (strcmp(command, "measure") == 0)
        return cmd_measure(&o);
    if (strcmp(command, "quote") == 0)
        return cmd_quote(&o);
    if (strcmp(command, "ek-pub") == 0)
        return cmd_ek_pub(&o);
    if (strcmp(command, "make-credential") == 0)
        return cmd_make_credential(&o);
    if (strcmp(command, "activate-credential") == 0)
        return cmd_activate_credential(&o);
    if (strcmp(command, "verify-ek-cert") == 0)
        return cmd_verify_ek_cert(&o);
    command = "";
    return usage("unknown command (provision, measure, quote, ek-pub, make-credential, "
                 "verify-ek-cert, activate-credential)");
}

int main(int argc, char **argv)
{
    int status;

    if (sworn_cli_standard(argc, argv, "sworn-tpm", usage_text, own_exits, &status))
        return status;
    return run_command(argc, argv);
}
