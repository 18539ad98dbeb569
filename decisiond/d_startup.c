/*
 * d_startup.c -- measured start, the first entries, and budgets rebuilt from the record
 * (d_daemon.h; DESIGN section 4, issue 4 "Measured start"; docs/decisiond.md section 6).
 *
 * Measured start: the SHA-256 of the running daemon image, the signer program, the configuration,
 * the policy and every tpm.measure file, in that order, are extended into PCR 23 (SHA-256 bank).
 * PCR 23 is read before and after, and both values go into the Startup entry with the list of
 * files and each one's role: a verifier replays the files onto the value before and must reach
 * the value after, and the quotes of the following checkpoints must show that value. PCR 23 is
 * not reset (root could reset it at any time anyway); instead the value before must equal the
 * previous start's value after, unless the TPM restarted in between, which the quotes' resetCount
 * shows.
 *
 * What is hashed is what is in force, never a path read again (issue 11, finding 1: a file
 * swapped back right after it was parsed, or a bind mount over the binary, was measured instead
 * of what ran): the configuration and the policy are the digests their parsers took of the very
 * buffer they parsed (cfg->digest, d->policy_digest); the daemon image is read through
 * /proc/self/exe opened at the engine's start (the file the kernel runs, whatever its path names
 * now); the signer program through the monitor's own descriptor, the one it execs every signer
 * from. Only the tpm.measure files, which nothing here parses or runs, are read by path, once,
 * through one descriptor.
 *
 * Budgets: a restart must not give an agent a fresh budget. Every ALLOW decision inside the
 * policy's longest budget window is replayed from the log into the budget counters before any
 * request is served: the log is walked back by index until a TimeMark entry whose high water is
 * older than the window (d_timemark.h), however many entries that is (the walk once stopped
 * after 10 million entries and silently forgot older allows: finding 11; it once stopped at one
 * decision stamped while the clock was behind: issue 12, finding 4). budgets.replay_max_entries
 * bounds the walk for an operator who wants a bounded start; a walk longer than that refuses the
 * start rather than under-count. Then the start's TimeMark is appended, before any decision.
 */
#define _XOPEN_SOURCE 700 /* realpath, pread */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "d_daemon.h"
#include "d_record.h"
#include "d_jlog.h"
#include "err.h"
#include "fileio.h"
#include "keyring.h"
#include "merkle.h"

#define MEASURE_MAX_FILES 64
/*
 * How far past the window the mark that ends the budget replay must be. A mark's high water
 * covers exactly the entries before it in log order (d_timemark.h), so the slack is a margin,
 * not what soundness rests on: it keeps the walk at least as long as it was when it trusted the
 * stamps (a decision is stamped when it is evaluated and appended after its receipt is signed,
 * signer.timeout, at most 60 s). Allows the extra walk finds charge windows that have ended,
 * which are dropped (policy/budget.c).
 */
#define REPLAY_SLACK_MS (10u * 60u * 1000u)

/* SHA-256 of the whole file open on fd, read with pread from offset 0 (the descriptor's offset
 * is neither used nor moved: the monitor execs from the same open file). name is for errors. */
static int hash_fd(int fd, const char *name, uint8_t out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    uint8_t buf[65536];
    unsigned int len = 0;
    struct stat st;
    off_t off = 0;
    int rc = -1;

    if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        sworn_err_set(SWORN_ERR_CRYPTO, "measure %s: SHA-256 failed", name);
        goto out;
    }
    if (fd <= 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        sworn_err_set(SWORN_ERR_IO, "measure %s: not an open regular file", name);
        goto out;
    }
    for (;;) {
        ssize_t n = pread(fd, buf, sizeof(buf), off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            sworn_err_set(SWORN_ERR_IO, "measure %s: read error: %s", name, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1) {
            sworn_err_set(SWORN_ERR_CRYPTO, "measure %s: SHA-256 failed", name);
            goto out;
        }
        off += n;
    }
    if (EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != 32) {
        sworn_err_set(SWORN_ERR_CRYPTO, "measure %s: SHA-256 failed", name);
        goto out;
    }
    rc = 0;
out:
    EVP_MD_CTX_free(ctx);
    return rc;
}

/* A tpm.measure file: opened once, never following a FIFO or device, hashed through that fd. */
static int hash_path(const char *path, uint8_t out[32])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;

    if (fd < 0)
        return sworn_err_set(SWORN_ERR_IO, "measure %s: cannot open it: %s", path, strerror(errno));
    rc = hash_fd(fd, path, out);
    (void)close(fd);
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

/* Append the Startup entry sm (its PCR 23 fields set when measured) with the files fp[0..n). */
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
    Sworn__V1__MeasuredRole roles[MEASURE_MAX_FILES];
    char config_path[PATH_MAX];
    uint8_t digests[MEASURE_MAX_FILES][32], before[32], after[32], replay[32];
    Sworn__V1__MeasuredFile files[MEASURE_MAX_FILES], *fp[MEASURE_MAX_FILES];
    Sworn__V1__StartupMeasurement sm = SWORN__V1__STARTUP_MEASUREMENT__INIT;
    size_t n = 0;
    uint64_t index;
    json_object *f;

    /* Absolute paths in the record: an auditor must know which file was measured. The paths
     * only name the files; the digests come from what is in force (the file comment). */
    if (realpath(cfg->path, config_path) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "measure %s: cannot resolve it", cfg->path);
    if (d->self_exe == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "measure: the daemon image was not opened at start");
    if (hash_fd(d->exe_fd, d->self_exe, digests[n]) < 0)
        return -1;
    roles[n] = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE;
    paths[n++] = d->self_exe;
    /* The only program that holds the key: the file the monitor execs, through its descriptor. */
    if (hash_fd(d->signer_program_fd, cfg->signer_program, digests[n]) < 0)
        return -1;
    roles[n] = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_SIGNER;
    paths[n++] = cfg->signer_program;
    memcpy(digests[n], cfg->digest, 32);
    roles[n] = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_CONFIG;
    paths[n++] = config_path;
    memcpy(digests[n], d->policy_digest, 32);
    roles[n] = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
    paths[n++] = cfg->policy_path;
    for (size_t i = 0; i < cfg->n_measure; i++) {
        if (n >= MEASURE_MAX_FILES)
            return sworn_err_set(SWORN_ERR_RANGE, "tpm.measure: at most %d files",
                                 MEASURE_MAX_FILES - 4);
        if (hash_path(cfg->measure[i], digests[n]) < 0)
            return -1;
        roles[n] = SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXTRA;
        paths[n++] = cfg->measure[i];
    }
    for (size_t i = 0; i < n; i++) {
        sworn__v1__measured_file__init(&files[i]);
        files[i].path = (char *)paths[i];
        files[i].sha256.data = digests[i];
        files[i].sha256.len = 32;
        files[i].role = roles[i];
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

/*
 * Replay the ALLOW decisions of the log's last window into the budgets, and find the log's time
 * high water (d_timemark.h).
 *
 * The log is NOT in time order: one wall clock stamps the entries, and it can step back (an NTP
 * step, a VM restored from a snapshot). Walking back until the first entry older than the window
 * once stopped at a single decision stamped while the clock was behind, and forgot every allow
 * before it that was still inside the window (issue 12, finding 4). So no stamp of an ordinary
 * entry stops the walk; only a TimeMark does: its high water is the largest stamp of every entry
 * before it (checked by sworn-verify), so a mark whose high water is older than the window plus
 * REPLAY_SLACK_MS proves that nothing before it can still count. The walk charges every allow it
 * passes, in log order, whatever its stamp (an allow stamped in an ended window charges a
 * counter that is dropped, policy/budget.c). A log without such a mark (written before marks
 * existed) is walked to index 0. budgets.replay_max_entries bounds the walk: reaching that bound
 * before a mark or index 0 refuses the start rather than under-count.
 *
 * The clock at start may itself be wrong ahead (stepped forward, to be set right later while
 * running). The window is so measured back from the earlier of the clock and the high water of
 * the log before this start (its entries from index `own` on are this start's own, stamped by
 * the clock): a mark ends the walk only when its high water is older than a window back from
 * both. Then the counters hold every allow of every window the clock can be in from the earlier
 * of the two on (docs/decisiond.md, "Time marks").
 *
 * With no budget in the policy the walk still goes back to the newest mark (any), for the high
 * water. OUT: *high_water, the largest stamp of the whole log (the mark's high water and own
 * time, and every stamp after it).
 */
/*
 * Settle, as the live UsageReport did (d_usage.c), the token budgets of the allow a UsageRecorded
 * entry names: read that allow back (it must be an ALLOW whose leaf hash is the one the entry
 * names: a record that links to anything else settles nothing, and sworn-verify fails it), take
 * the token charges its replay made (sworn_budgets_token_charges) and replace their reservation
 * by the entry's charged_tokens. An allow before `from`, where the walk began, is older than
 * every window: nothing of it is counted, so nothing is settled. 0, or -1 (the log cannot be
 * read, out of memory).
 */
static int replay_usage(struct d_daemon *d, const Sworn__V1__UsageRecorded *u, uint64_t from)
{
    struct sworn_policy_charge charges[SWORN_POLICY_BUDGET_RULES_MAX];
    uint8_t *buf, leaf[32];
    size_t len, n = 0;
    Sworn__V1__Entry *e;
    int rc = 0;

    if (u->allow_log_index < from || u->allow_log_index >= sworn_log_size(d->log))
        return 0;
    buf = malloc(SWORN_FRAME_ENTRY_MAX);
    if (buf == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "budget replay: out of memory");
    if (sworn_log_read_entry(d->log, u->allow_log_index, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0) {
        free(buf);
        return -1;
    }
    sworn_merkle_leaf_hash(buf, len, leaf);
    e = memcmp(leaf, u->allow_entry_hash.data, 32) == 0 ? sworn_frame_unpack_entry(buf, len) : NULL;
    free(buf);
    if (e == NULL)
        return 0;
    if (e->kind_case == SWORN__V1__ENTRY__KIND_DECISION &&
        e->decision->effect == SWORN__V1__EFFECT__EFFECT_ALLOW) {
        rc = sworn_budgets_token_charges(d->policy, e->decision, charges, &n);
        if (rc == 0)
            sworn_budgets_settle(d->budgets, charges, n, u->charged_tokens);
    }
    sworn__v1__entry__free_unpacked(e, NULL);
    return rc;
}

static int replay_budgets(struct d_daemon *d, uint64_t own, uint64_t *high_water)
{
    uint64_t window = sworn_policy_max_window_ms(d->policy), size = sworn_log_size(d->log);
    uint64_t now = d_now_unix_ms(), from = size, replayed = 0, bound = d->cfg->replay_max_entries;
    uint64_t usages = 0;
    uint64_t cutoff, hw = 0, before = 0; /* before: the high water of the entries before own */
    int stopped_at_mark = 0;
    uint8_t *buf;

    *high_water = 0;
    if (size == 0)
        return 0;
    buf = malloc(SWORN_FRAME_ENTRY_MAX);
    if (buf == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "budget replay: out of memory");
    while (from > 0) {
        size_t len;
        Sworn__V1__Entry *e;
        uint64_t t;
        int stop = 0;

        if (sworn_log_read_entry(d->log, from - 1, buf, SWORN_FRAME_ENTRY_MAX, &len) < 0)
            goto fail;
        e = sworn_frame_unpack_entry(buf, len);
        if (e == NULL)
            goto fail;
        if (d_entry_time(e, &t) && t > hw)
            hw = t;
        if (d_entry_time(e, &t) && from - 1 < own && t > before)
            before = t;
        if (e->kind_case == SWORN__V1__ENTRY__KIND_TIME_MARK) {
            /* Nothing before this mark is later than its high water: with it, before is the
             * high water of everything before this start. A mark at or before the cutoff ends
             * the walk; with no budget, any mark does. */
            uint64_t mark_hw = e->time_mark->high_water_unix_ms;
            uint64_t from_ms = now < before ? now : before;

            if (mark_hw > before)
                from_ms = now < mark_hw ? now : mark_hw;
            if (window == 0)
                cutoff = UINT64_MAX;
            else
                cutoff =
                    from_ms > window + REPLAY_SLACK_MS ? from_ms - window - REPLAY_SLACK_MS : 0;
            if (mark_hw <= cutoff) {
                if (mark_hw > hw)
                    hw = mark_hw;
                stop = 1;
            }
        }
        sworn__v1__entry__free_unpacked(e, NULL);
        from--;
        if (stop) {
            stopped_at_mark = 1;
            break;
        }
        if (window != 0 && bound != 0 && size - from > bound) {
            free(buf);
            return sworn_err_set(SWORN_ERR_RANGE,
                                 "budget replay: the policy's longest budget window (%llu ms) "
                                 "holds more than %llu log entries (budgets.replay_max_entries), "
                                 "or no TimeMark entry older than the window was found within "
                                 "them; refusing to start rather than under-count the budgets",
                                 (unsigned long long)window, (unsigned long long)bound);
        }
    }
    for (uint64_t i = from; window != 0 && i < size; i++) {
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
        } else if (e->kind_case == SWORN__V1__ENTRY__KIND_USAGE_RECORDED) {
            rc = replay_usage(d, e->usage_recorded, from);
            usages += rc == 0;
        }
        sworn__v1__entry__free_unpacked(e, NULL);
        if (rc < 0)
            goto fail;
    }
    free(buf);
    *high_water = hw;
    {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "decisions", json_object_new_int64((int64_t)replayed));
            json_object_object_add(f, "usages", json_object_new_int64((int64_t)usages));
            json_object_object_add(f, "from_index", json_object_new_int64((int64_t)from));
            json_object_object_add(f, "entries_read",
                                   json_object_new_int64((int64_t)(size - from)));
            json_object_object_add(f, "stopped_at_mark", json_object_new_boolean(stopped_at_mark));
            json_object_object_add(f, "high_water_unix_ms", json_object_new_int64((int64_t)hw));
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
    uint64_t index, high_water, own = sworn_log_size(d->log);
    int rc;

    if (measure(d) < 0)
        return -1;
    if (d_policy_entry(d->cfg->policy_path, d->policy_digest, sworn_policy_version(d->policy), NULL,
                       &entry, &len) < 0)
        return -1;
    rc = d_record_append(d, entry, len, NULL, 0, &index);
    free(entry);
    if (rc < 0 || replay_budgets(d, own, &high_water) < 0)
        return -1;
    /* The start's mark, before any decision: the high water of the whole log, and how far the
     * clock is behind it (the warning entry; d_timemark_append logs `clock_behind` too). */
    d_timemark_set_high_water(d, high_water);
    return d_timemark_append(d, SWORN__V1__TIME_MARK_REASON__TIME_MARK_REASON_START, NULL, NULL);
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
