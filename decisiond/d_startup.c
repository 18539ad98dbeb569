/*
 * d_startup.c -- measured start, the first entries, and budgets rebuilt from the record
 * (d_daemon.h; DESIGN section 4, issue 4 "Measured start").
 *
 * Measured start: the SHA-256 of the daemon binary, the configuration file, the policy file and
 * every tpm.measure file, in that order, are extended into PCR 23 (SHA-256 bank). PCR 23 is read
 * before and after, and both values go into the Startup entry with the list of files: a verifier
 * replays the files onto the value before and must reach the value after, and the quotes of the
 * following checkpoints must show that value. PCR 23 is not reset (root could reset it at any
 * time anyway); instead the value before must equal the previous start's value after, unless the
 * TPM restarted in between, which the quotes' resetCount shows.
 *
 * Budgets: a restart must not give an agent a fresh budget. The ALLOW decisions of the last
 * max-window (the policy's longest budget window) are replayed from the log into the budget
 * counters before any request is served.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "d_daemon.h"
#include "d_record.h"
#include "d_jlog.h"
#include "err.h"
#include "fileio.h"
#include "keyring.h"

#define MEASURE_MAX_FILES 64
/* Replay looks at most this many recent entries (a bound on start-up time). */
#define REPLAY_MAX_ENTRIES 10000000u

/* SHA-256 of a file's contents, read in chunks (binaries may be large). */
static int hash_file(const char *path, uint8_t out[32])
{
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t buf[65536];
    unsigned int len = 0;
    size_t n;
    int rc = -1;

    if (f == NULL || ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        sworn_err_set(SWORN_ERR_IO, "measure %s: cannot read it", path);
        goto out;
    }
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        if (EVP_DigestUpdate(ctx, buf, n) != 1) {
            sworn_err_set(SWORN_ERR_CRYPTO, "measure %s: SHA-256 failed", path);
            goto out;
        }
    if (ferror(f)) {
        sworn_err_set(SWORN_ERR_IO, "measure %s: read error", path);
        goto out;
    }
    if (EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != 32) {
        sworn_err_set(SWORN_ERR_CRYPTO, "measure %s: SHA-256 failed", path);
        goto out;
    }
    rc = 0;
out:
    if (f != NULL)
        fclose(f);
    EVP_MD_CTX_free(ctx);
    return rc;
}

static int append_plain(struct d_daemon *d, const Sworn__V1__Entry *e, uint64_t *index)
{
    uint8_t *bytes = NULL;
    size_t len = 0;
    int rc;

    if (d_entry_pack(e, &bytes, &len) < 0)
        return -1;
    rc = d_record_append(d, bytes, len, NULL, 0, index);
    free(bytes);
    return rc;
}

/*
 * Append the startup record: sm (its PCR 23 values set, or not when the start is unmeasured)
 * completed with the n measured files fp, the time, the separation's uids and the development
 * flag. OUT: *index, the record's. Returns 0 or -1.
 */
static int append_startup(struct d_daemon *d, Sworn__V1__StartupMeasurement *sm,
                          Sworn__V1__MeasuredFile **fp, size_t n, uint64_t *index)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;

    sm->files = fp;
    sm->n_files = n;
    sm->time_unix_ms = d_now_unix_ms();
    sm->engine_uid = (uint32_t)d->users.engine_uid;
    sm->signer_uid = (uint32_t)d->users.signer_uid;
    sm->development = d->cfg->development;
    e.kind_case = SWORN__V1__ENTRY__KIND_STARTUP;
    e.startup = sm;
    return append_plain(d, &e, index);
}

static int measure(struct d_daemon *d)
{
    const struct sworn_dconfig *cfg = d->cfg;
    const char *paths[MEASURE_MAX_FILES];
    char config_path[PATH_MAX];
    uint8_t digests[MEASURE_MAX_FILES][32], before[32], after[32], replay[32];
    Sworn__V1__MeasuredFile files[MEASURE_MAX_FILES], *fp[MEASURE_MAX_FILES];
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    size_t n = 0;
    uint64_t index;
    json_object *f;

    /* Absolute paths in the record: an auditor must know which file was measured. */
    if (realpath(cfg->path, config_path) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "measure %s: cannot resolve it", cfg->path);
    paths[n++] = d->self_exe;
    paths[n++] = cfg->signer_program; /* the only program that holds the key */
    paths[n++] = config_path;
    paths[n++] = cfg->policy_path;
    for (size_t i = 0; i < cfg->n_measure; i++) {
        if (n >= MEASURE_MAX_FILES)
            return sworn_err_set(SWORN_ERR_RANGE, "tpm.measure: at most %d files",
                                 MEASURE_MAX_FILES - 4);
        paths[n++] = cfg->measure[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (hash_file(paths[i], digests[i]) < 0)
            return -1;
        sworn__v1__measured_file__init(&files[i]);
        files[i].path = (char *)paths[i];
        files[i].sha256.data = digests[i];
        files[i].sha256.len = 32;
        fp[i] = &files[i];
    }
    if (cfg->tpm_tcti != NULL) {
        if (sworn_tpm_open(cfg->tpm_tcti, &d->tpm) < 0 ||
            sworn_tpm_pcr_read(d->tpm, 23, before) < 0)
            goto tpm_failed;
        memcpy(replay, before, 32);
        for (size_t i = 0; i < n; i++) {
            uint8_t cat[64];

            if (sworn_tpm_pcr_extend(d->tpm, 23, digests[i]) < 0)
                goto tpm_failed;
            memcpy(cat, replay, 32);
            memcpy(cat + 32, digests[i], 32);
            EVP_Digest(cat, sizeof(cat), replay, NULL, EVP_sha256(), NULL);
        }
        if (sworn_tpm_pcr_read(d->tpm, 23, after) < 0)
            goto tpm_failed;
        if (memcmp(after, replay, 32) != 0)
            return sworn_err_set(SWORN_ERR_VERIFY,
                                 "PCR 23 does not replay: something else extended it during the "
                                 "measured start");
        sm.pcr23_before.data = before;
        sm.pcr23_before.len = 32;
        sm.pcr23.data = after;
        sm.pcr23.len = 32;
    }
    if (append_startup(d, &sm, fp, n, &index) < 0)
        return -1;
    f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(f, "index", json_object_new_int64((int64_t)index));
        json_object_object_add(f, "files", json_object_new_int64((int64_t)n));
        json_object_object_add(f, "tpm", json_object_new_boolean(cfg->tpm_tcti != NULL));
    }
    d_log(D_LOG_INFO, "measured_start", f);
    return 0;
tpm_failed:
    /* The TPM is down: the start is recorded unmeasured; tpm.required makes that fatal. */
    if (cfg->tpm_required)
        return sworn_err_set(SWORN_ERR_IO, "tpm.required, but the TPM failed: %s", sworn_err_msg());
    d_log_msg(D_LOG_ERROR, "tpm_down", sworn_err_msg());
    sworn_tpm_close(d->tpm);
    d->tpm = NULL;
    return append_startup(d, &sm, fp, n, &index);
}

/* Replay the recent ALLOW decisions of the log into the budgets. */
static int replay_budgets(struct d_daemon *d)
{
    uint64_t window = sworn_policy_max_window_ms(d->policy), size = sworn_log_size(d->log);
    uint64_t now = d_now_unix_ms(), from = size, replayed = 0;
    uint8_t *buf;

    if (window == 0 || size == 0)
        return 0;
    buf = malloc(SWORN_FRAME_ENTRY_MAX);
    if (buf == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "budget replay: out of memory");
    /* Walk back to the first decision older than the window. */
    while (from > 0 && size - from < REPLAY_MAX_ENTRIES) {
        size_t len;
        Sworn__V1__Entry *e;
        int older = 0;

        if (sworn_log_read_entry(d->log, from - 1, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0)
            goto fail;
        e = sworn_frame_unpack_entry(buf, len);
        if (e == NULL)
            goto fail;
        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
            e->decision->time_unix_ms + window < now)
            older = 1;
        sworn__v1__entry__free_unpacked(e, NULL);
        if (older)
            break;
        from--;
    }
    for (uint64_t i = from; i < size; i++) {
        size_t len;
        Sworn__V1__Entry *e;
        int rc = 0;

        if (sworn_log_read_entry(d->log, i, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0)
            goto fail;
        e = sworn_frame_unpack_entry(buf, len);
        if (e == NULL)
            goto fail;
        if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION) {
            rc = sworn_budgets_replay(d->budgets, d->policy, e->decision);
            replayed++;
        }
        sworn__v1__entry__free_unpacked(e, NULL);
        if (rc < 0)
            goto fail;
    }
    free(buf);
    {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "decisions", json_object_new_int64((int64_t)replayed));
            json_object_object_add(f, "from_index", json_object_new_int64((int64_t)from));
        }
        d_log(D_LOG_INFO, "budgets_replayed", f);
    }
    return 0;
fail:
    free(buf);
    return sworn_err_set(sworn_err_code(), "budget replay: %s", sworn_err_msg());
}

int d_startup_record(struct d_daemon *d)
{
    uint8_t *entry = NULL;
    size_t len = 0;
    uint64_t index;
    int rc;

    if (measure(d) < 0)
        return -1;
    if (d_policy_entry(d->cfg->policy_path, d->policy_digest, sworn_policy_version(d->policy), NULL,
                       &entry, &len) < 0)
        return -1;
    rc = d_record_append(d, entry, len, NULL, 0, &index);
    free(entry);
    if (rc < 0)
        return -1;
    return replay_budgets(d);
}

/*
 * The keyring check at start (DESIGN section 4: "decisiond refuses to start when the token's
 * public key differs from the one in its keyring"). The file is the newest keyring version, a
 * signed note: its own roots must have signed it to its own threshold, and the signer's key
 * must be in it for purpose checkpoint (the one key signs checkpoints and, domain-separated,
 * receipts) and valid now (not before valid-from, not retired or revoked). Verifying the whole
 * chain of versions from version 1 is the auditor's job (sworn-verify, sworn-hsm keyring verify).
 */
int d_keyring_check(struct d_daemon *d)
{
    struct sworn_keyring *kr = NULL;
    struct sworn_note note;
    char *data = NULL;
    size_t len = 0;
    int is_signed = 0, rc = -1;

    if (d->cfg->keyring == NULL)
        return 0;
    kr = sworn_keyring_new();
    if (kr == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "keyring: out of memory");
    if (sworn_file_read(d->cfg->keyring, 1024u * 1024u, &data, &len) < 0 ||
        sworn_keyring_load(data, len, kr, &note, &is_signed) < 0)
        goto out;
    if (!is_signed) {
        sworn_err_set(SWORN_ERR_VERIFY, "keyring %s is not signed by its roots", d->cfg->keyring);
        goto out;
    }
    if (sworn_keyring_verify_root(kr, &note, 0) < 0 ||
        sworn_keyring_key_valid_at(kr, d->key_id, SWORN_PURPOSE_CHECKPOINT,
                                   (int64_t)(d_now_unix_ms() / 1000)) < 0) {
        sworn_err_set(SWORN_ERR_VERIFY, "keyring %s: %s", d->cfg->keyring, sworn_err_msg());
        goto out;
    }
    rc = 0;
out:
    free(data);
    sworn_keyring_free(kr);
    return rc;
}
