/*
 * d_checkpoint.c -- the checkpoint thread (d_daemon.h; DESIGN section 3 step 7).
 *
 * Every log.checkpoint_interval (and when kicked by `swornctl checkpoint`, and at shutdown), if
 * the log grew: sign a checkpoint with the signer process's key (C2SP note, type 0x02 for ECDSA
 * P-256), store it, then have the TPM quote it (qualifying data = SHA-256 of the note text
 * without signatures; PCRs = tpm.pcrs, always including 23), store the quote beside it, and
 * refresh the tiles folder when log.export_dir is set (with what the log grew by since the last
 * export: export_tiles).
 *
 * This thread is the only user of the TPM once the daemon runs, and nothing on the decision path
 * waits for it: decisions go on while it signs and quotes. When the TPM fails, checkpoints go on
 * unquoted (counted in sworn_checkpoints_unquoted_total and logged), tpm_ok drops to 0 (which
 * makes decisions deny when tpm.required is set), and the next round opens the TPM again.
 * Quotes are never made more often than tpm.quote_min_interval (TPM-Fail: every ECDSA quote is a
 * timing sample of the AK; firmware-notes/README.md): a checkpoint inside that interval stays
 * unquoted, and the next checkpoint after it is quoted.
 *
 * The AK is the persistent one at tpm.ak_handle (sworn_tpm_ak_open: found and checked to be
 * ours, or made and persisted there), opened at the first quote and after every reopening of
 * the TPM. Nothing here creates a transient object that outlives the call that made it, and no
 * TPM session is started: a SIGKILL of the engine leaves nothing behind in a TPM without a
 * resource manager, unless it lands in the few milliseconds in which sworn_tpm_ak_open holds the
 * template's primary to compare (docs/decisiond.md section 6). With tpm.required, a start whose
 * first checkpoint cannot be quoted fails (d_checkpointer_start), rather than stay up denying.
 *
 * `swornctl checkpoint` (d_checkpointer_now) waits for its round: each request takes a number
 * (asked), each round notes the newest number it took on before it began (answered) and its
 * result, and broadcasts done; a request is answered by the first round whose number reaches its
 * own, so its answer is about a checkpoint made after it asked, and stored.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/sha.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "d_witness.h"
#include "err.h"
#include "note.h"
#include "tiledir.h"

struct d_checkpointer {
    struct d_daemon *d;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int kick, stop;
    uint64_t asked, answered;          /* d_checkpointer_ask tickets: given, and answered */
    int round_rc;                      /* the answered round: 0 (stored) or -1 */
    uint64_t round_size;               /* its checkpoint's tree size */
    char round_err[SWORN_ERR_MSG_MAX]; /* its failure, when round_rc is -1 */
    struct sworn_tpm_ak ak;
    int have_ak;
    uint64_t last_size;
    int have_last;
    int last_quoted;                    /* the newest checkpoint has a quote */
    struct sworn_quote_limiter limiter; /* tpm.quote_min_interval */
    uint64_t exported;                  /* the tree size export_dir holds (0: none yet) */
    uint64_t last_health_ms;            /* the signer's last health check (monotonic) */
    int have_health;
    uint64_t last_sign_ms; /* the last checkpoint the key signed (monotonic) */
    int have_sign;
    struct d_witnesses *witnesses;   /* NULL: none configured (d_witness.h) */
    int quote_failed;                /* the last round's quote was tried and failed */
    char tpm_err[SWORN_ERR_MSG_MAX]; /* why, then */
};

_Static_assert(SWORN_DCONFIG_AK_HANDLE_DEFAULT == SWORN_TPM_AK_HANDLE_DEFAULT &&
                   SWORN_DCONFIG_AK_HANDLE_FIRST == SWORN_TPM_AK_HANDLE_FIRST &&
                   SWORN_DCONFIG_AK_HANDLE_LAST == SWORN_TPM_AK_HANDLE_LAST,
               "tpm.ak_handle's default and range are the attestation library's");

static uint64_t mono_ms(void)
{
    return d_now_mono_us() / 1000u;
}

static void tpm_down(struct d_checkpointer *cp, const char *why)
{
    struct d_daemon *d = cp->d;

    d_log_msg(D_LOG_ERROR, "tpm_down", why);
    if (cp->have_ak && d->tpm != NULL)
        sworn_tpm_ak_flush(d->tpm, &cp->ak);
    cp->have_ak = 0;
    sworn_tpm_close(d->tpm);
    d->tpm = NULL;
    atomic_store(&d->tpm_ok, 0);
    atomic_store(&d->metrics.tpm_up, 0);
}

/* Log how the AK was had: found at its handle (and checked), or made and persisted now. */
static void ak_opened(uint32_t handle, enum sworn_tpm_ak_how how)
{
    json_object *f = json_object_new_object();
    char hex[11];

    snprintf(hex, sizeof(hex), "0x%08x", (unsigned)handle);
    if (f != NULL) {
        json_object_object_add(f, "handle", json_object_new_string(hex));
        json_object_object_add(
            f, "how",
            json_object_new_string(how == SWORN_TPM_AK_PERSISTED ? "persisted" : "found"));
    }
    d_log(D_LOG_INFO, "ak_ready", f);
}

/* Quote the checkpoint note of tree size `size` and store the quote. 0 or -1. */
static int quote(struct d_checkpointer *cp, const char *note_text, size_t note_len, uint64_t size)
{
    struct d_daemon *d = cp->d;
    struct sworn_note note;
    uint8_t qual[32], *attest = NULL, *sig = NULL;
    size_t attest_len = 0, sig_len = 0;
    int rc = -1;

    if (d->tpm == NULL && sworn_tpm_open(d->cfg->tpm_tcti, &d->tpm) < 0)
        return -1;
    if (!cp->have_ak) {
        enum sworn_tpm_ak_how how;

        if (sworn_tpm_ak_open(d->tpm, d->cfg->tpm_ak_handle, &cp->ak, &how) < 0)
            return -1;
        cp->have_ak = 1;
        ak_opened(d->cfg->tpm_ak_handle, how);
    }
    if (sworn_note_parse(note_text, note_len, &note) < 0)
        return -1;
    SHA256((const uint8_t *)note.text, note.text_len, qual);
    if (sworn_tpm_quote(d->tpm, &cp->ak, qual, d->cfg->tpm_pcrs | (1u << 23), &attest, &attest_len,
                        &sig, &sig_len) < 0)
        goto out;
    if (sworn_log_put_quote(d->log, size, attest, attest_len, sig, sig_len) < 0)
        goto out;
    rc = 0;
out:
    free(attest);
    free(sig);
    return rc;
}

/*
 * Refresh export_dir to the checkpoint of tree size `size`. Incremental: only what the tree grew
 * by since the last export of this run (the tiles and bundles from the one that held entry
 * cp->exported on, and the checkpoints and quotes from that size on), so a round costs what the
 * log grew by, not what it holds. The first export of a run is a full one (the folder may be of
 * an older run, or new). A failed export is logged and the next round starts again from the
 * last export that succeeded.
 */
static void export_tiles(struct d_checkpointer *cp, uint64_t size)
{
    struct d_daemon *d = cp->d;
    uint64_t since = cp->exported <= size ? cp->exported : 0, done = 0;

    if (sworn_tiledir_export_since(d->log, size, d->cfg->export_dir, since, &done) < 0) {
        d_log_msg(D_LOG_ERROR, "export_failed", sworn_err_msg());
        return;
    }
    cp->exported = done;
}

/*
 * The log did not grow, but a witness has not cosigned the newest checkpoint (it was down, or
 * the checkpoint is the start's, which is not submitted): submit the stored note again, and
 * publish it when a cosignature came back. Failures are the witnesses' (counted, logged).
 */
static void resubmit(struct d_checkpointer *cp)
{
    struct d_daemon *d = cp->d;
    char *note = malloc(SWORN_NOTE_MAX_LEN + 1);
    size_t len = 0, added = 0;
    uint64_t size = 0;

    if (note == NULL)
        return;
    if (sworn_log_get_checkpoint(d->log, cp->last_size, note, SWORN_NOTE_MAX_LEN + 1, &len, &size) <
        0) {
        d_log_msg(D_LOG_ERROR, "checkpoint_read_failed", sworn_err_msg());
    } else if (d_witnesses_submit(cp->witnesses, note, len, size, 1, NULL, &added) < 0) {
        d_log_msg(D_LOG_ERROR, "cosignatures_not_stored", sworn_err_msg());
    } else if (added && d->cfg->export_dir != NULL) {
        export_tiles(cp, size);
    }
    free(note);
}

/* Round kinds: the first at start (no witness yet: it must not hold the start up to their
 * timeouts; the first round of the thread, a checkpoint interval later, submits), the thread's,
 * and the final one at stop (submitted, but a witness's change of state is not recorded: the
 * final checkpoint stays the log's last word). */
enum round_kind { ROUND_START, ROUND_RUN, ROUND_FINAL };

/*
 * One round: checkpoint when the log grew (or force), quote, have the witnesses cosign, export.
 * Returns 0 when the newest stored checkpoint (cp->last_size) now covers the log as it was when the
 * round began (signed now, or earlier when the log did not grow), or -1 when it could not be signed
 * or stored (sworn_err says why). An unquoted checkpoint or a failed export still returns 0: the
 * checkpoint is stored, and the failure is counted and logged.
 */
static int round_once(struct d_checkpointer *cp, int force, enum round_kind kind)
{
    struct d_daemon *d = cp->d;
    struct sworn_note_signer *signers[1] = {&d->note_signer};
    char *note = NULL;
    size_t len = 0;
    uint64_t size = 0, now = mono_ms();
    size_t cosigned = 0;
    int quoted = 0;
    json_object *f;

    if (cp->have_last && sworn_log_size(d->log) == cp->last_size && !force) {
        if (kind == ROUND_RUN && d_witnesses_pending(cp->witnesses, cp->last_size))
            resubmit(cp);
        return 0;
    }
    note = malloc(SWORN_NOTE_MAX_LEN + 1);
    if (note == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "checkpoint: out of memory");
    if (sworn_log_checkpoint(d->log, signers, 1, note, SWORN_NOTE_MAX_LEN + 1, &len, &size) < 0) {
        /* The signer or the log: the message says which; sworn_signer_up follows the health
         * check, so a full disk is not blamed on the HSM. */
        d_log_msg(D_LOG_ERROR, "checkpoint_failed", sworn_err_msg());
        free(note);
        return -1;
    }
    /* The log never shrinks, and a checkpoint covers at least what the last one did. */
    assert(!cp->have_last || size >= cp->last_size);
    atomic_store(&d->metrics.signer_up, 1);
    cp->last_size = size;
    cp->have_last = 1;
    atomic_fetch_add(&d->metrics.checkpoints, 1);
    atomic_store(&d->metrics.checkpoint_size, size);
    atomic_store(&d->metrics.checkpoint_unix_ms, d_now_unix_ms());
    cp->quote_failed = 0;
    if (d->cfg->tpm_tcti != NULL) {
        if (!sworn_quote_limiter_take(&cp->limiter, now)) {
            d_log_msg(D_LOG_DEBUG, "quote_deferred", "inside tpm.quote_min_interval");
        } else if (quote(cp, note, len, size) == 0) {
            quoted = 1;
            atomic_fetch_add(&d->metrics.quotes, 1);
            atomic_store(&d->tpm_ok, 1);
            atomic_store(&d->metrics.tpm_up, 1);
        } else {
            cp->quote_failed = 1;
            snprintf(cp->tpm_err, sizeof(cp->tpm_err), "%s", sworn_err_msg());
            tpm_down(cp, cp->tpm_err);
        }
    }
    if (!quoted)
        atomic_fetch_add(&d->metrics.checkpoints_unquoted, 1);
    cp->last_quoted = quoted;
    cp->last_sign_ms = now;
    cp->have_sign = 1;
    /* Before the export, so that the export holds the cosigned note. A cosigned note that could
     * not be stored leaves the note as signed: logged, and the next round tries again. */
    if (cp->witnesses != NULL && kind != ROUND_START &&
        d_witnesses_submit(cp->witnesses, note, len, size, kind == ROUND_RUN, &cosigned, NULL) < 0)
        d_log_msg(D_LOG_ERROR, "cosignatures_not_stored", sworn_err_msg());
    if (d->cfg->export_dir != NULL)
        export_tiles(cp, size);
    f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(f, "size", json_object_new_int64((int64_t)size));
        json_object_object_add(f, "quoted", json_object_new_boolean(quoted));
        if (cp->witnesses != NULL)
            json_object_object_add(f, "cosigned", json_object_new_int64((int64_t)cosigned));
    }
    d_log(D_LOG_INFO, "checkpoint", f);
    free(note);
    return 0;
}

/* With cp->lock held: the round that took requests up to gen ended with rc; wake the waiters. */
static void answer(struct d_checkpointer *cp, uint64_t gen, int rc, const char *err)
{
    assert(gen >= cp->answered && gen <= cp->asked);
    cp->answered = gen;
    cp->round_rc = rc;
    cp->round_size = cp->last_size;
    snprintf(cp->round_err, sizeof(cp->round_err), "%s", rc < 0 ? err : "");
    /* The loop answers the askers (d_admin.c); event_active is safe from this thread. */
    if (cp->d->checkpoint_answered != NULL)
        event_active(cp->d->checkpoint_answered, EV_READ, 0);
}

/*
 * The signer's health check (DESIGN section 5): sign a fixed digest and verify it, at most every
 * D_HEALTH_INTERVAL_MS, so that a key that failed while idle shows in sworn_signer_up before
 * traffic finds it. One signature per interval adds nothing that matters to the key's exposure
 * (TPM-Fail needs thousands of samples; firmware-notes/README.md). Only when the key was idle:
 * a checkpoint signed inside the interval has shown the key working (round_once sets
 * sworn_signer_up then), and a health check would only queue a signature and a verification in
 * the signer process in front of the decisions' signatures.
 */
#define D_HEALTH_INTERVAL_MS 10000u

static void health(struct d_checkpointer *cp)
{
    uint64_t now = mono_ms();

    if (cp->have_health && now - cp->last_health_ms < D_HEALTH_INTERVAL_MS)
        return;
    if (cp->have_sign && now - cp->last_sign_ms < D_HEALTH_INTERVAL_MS)
        return;
    cp->have_health = 1;
    cp->last_health_ms = now;
    if (sworn_signer_proc_health(cp->d->signer) == 0) {
        atomic_store(&cp->d->metrics.signer_up, 1);
    } else {
        atomic_store(&cp->d->metrics.signer_up, 0);
        d_log_msg(D_LOG_ERROR, "signer_unhealthy", sworn_err_msg());
    }
}

/*
 * How long an operator's CheckpointNow (a kick) waits so that its checkpoint is quoted: the time
 * left of tpm.quote_min_interval since the last quote (on the daemon's clock, the test clock in
 * its build), 0 when a quote may be made now or none will be (no TPM, the TPM failing, no quote
 * yet). An auditor who requires a quote of every checkpoint (sworn-verify's `quotes require`)
 * keeps that when operators and conformance runs ask for checkpoints.
 */
static uint64_t quotable_in_ms(const struct d_checkpointer *cp)
{
    uint64_t now = mono_ms(), ready;

    if (cp->d->cfg->tpm_tcti == NULL || cp->quote_failed || !cp->limiter.have_last)
        return 0;
    ready = cp->limiter.last_ms + cp->limiter.min_interval_ms;
    return now >= ready ? 0 : ready - now;
}

/* t + ms, on the monotonic clock of the condition variables. */
static struct timespec later(struct timespec t, uint64_t ms)
{
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int before_ts(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * The thread: a timed round every checkpoint_interval, and a round for the kicks of
 * d_checkpointer_ask. A kick inside tpm.quote_min_interval waits for the interval's end (once,
 * at most the time quotable_in_ms gave when it was first seen), so its checkpoint is quoted;
 * the timed rounds go on meanwhile (unquoted inside the interval, docs/decisiond.md section 6).
 * Nobody waits on this thread: askers are told through d->checkpoint_answered.
 */
static void *checkpoint_thread(void *arg)
{
    struct d_checkpointer *cp = arg;
    uint64_t interval = cp->d->cfg->checkpoint_interval_ms, gen;
    struct timespec now, timed, kick_until;
    char err[SWORN_ERR_MSG_MAX];
    int rc, kick_seen = 0;

    pthread_mutex_lock(&cp->lock);
    clock_gettime(CLOCK_MONOTONIC, &now);
    timed = later(now, interval);
    for (;;) {
        int kicked = 0;

        for (;;) {
            struct timespec until = timed;

            if (cp->stop)
                goto out; /* the final round is d_checkpointer_stop's */
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (cp->kick) {
                if (!kick_seen) {
                    uint64_t left = quotable_in_ms(cp);

                    kick_seen = 1;
                    kick_until = later(now, left);
                    if (left > 0)
                        d_log_msg(D_LOG_DEBUG, "checkpoint_waits_for_quote",
                                  "inside tpm.quote_min_interval");
                }
                if (quotable_in_ms(cp) == 0 || !before_ts(&now, &kick_until)) {
                    kicked = 1;
                    break;
                }
                if (before_ts(&kick_until, &until))
                    until = kick_until;
            }
            if (!before_ts(&now, &timed))
                break;
            (void)pthread_cond_timedwait(&cp->cond, &cp->lock, &until);
        }
        if (kicked) {
            cp->kick = 0;
            kick_seen = 0;
            gen = cp->asked;
        } else {
            gen = cp->answered; /* a timed round answers no ask */
        }
        pthread_mutex_unlock(&cp->lock);
        rc = round_once(cp, 0, ROUND_RUN);
        snprintf(err, sizeof(err), "%s", rc < 0 ? sworn_err_msg() : "");
        health(cp);
        pthread_mutex_lock(&cp->lock);
        if (kicked)
            answer(cp, gen, rc, err);
        clock_gettime(CLOCK_MONOTONIC, &now);
        timed = later(now, interval);
    }
out:
    pthread_mutex_unlock(&cp->lock);
    return NULL;
}

/* Free a checkpointer whose thread is not running (or was joined). */
static void checkpointer_free(struct d_checkpointer *cp)
{
    d_witnesses_free(cp->witnesses);
    pthread_mutex_destroy(&cp->lock);
    pthread_cond_destroy(&cp->cond);
    free(cp);
}

int d_checkpointer_start(struct d_daemon *d)
{
    struct d_checkpointer *cp = calloc(1, sizeof(*cp));
    pthread_condattr_t ca;

    if (cp == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "checkpointer: out of memory");
    cp->d = d;
    cp->limiter.min_interval_ms = d->cfg->quote_min_interval_ms;
    pthread_mutex_init(&cp->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cp->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (d_witnesses_new(d, &cp->witnesses) < 0) {
        checkpointer_free(cp);
        return -1;
    }
    atomic_store(&d->tpm_ok, d->tpm != NULL);
    atomic_store(&d->metrics.tpm_up, d->tpm != NULL);
    /* The first checkpoint covers the startup entries, before any decision is served. When it
     * fails (logged), the next round tries again: have_last stays 0. With tpm.required, its
     * quote must succeed: a start that cannot quote (the object at tpm.ak_handle is not our AK,
     * the AK cannot be persisted, the TPM went away since the measured start) fails, as a start
     * without the TPM does, instead of running on to deny every request. */
    (void)round_once(cp, 1, ROUND_START);
    if (d->cfg->tpm_required && cp->quote_failed) {
        sworn_err_set(SWORN_ERR_IO,
                      "tpm.required, but the start's checkpoint could not be quoted: %s",
                      cp->tpm_err);
        checkpointer_free(cp);
        return -1;
    }
    if (pthread_create(&cp->thread, NULL, checkpoint_thread, cp) != 0) {
        checkpointer_free(cp);
        return sworn_err_set(SWORN_ERR_IO, "checkpointer: cannot start its thread");
    }
    cp->started = 1;
    d->cp = cp;
    return 0;
}

int d_checkpointer_ask(struct d_daemon *d, uint64_t *ticket)
{
    struct d_checkpointer *cp = d->cp;

    if (cp == NULL)
        return sworn_err_set(SWORN_ERR_IO, "checkpoint: the checkpoint thread is not running");
    pthread_mutex_lock(&cp->lock);
    *ticket = ++cp->asked;
    cp->kick = 1;
    pthread_cond_signal(&cp->cond);
    pthread_mutex_unlock(&cp->lock);
    return 0;
}

int d_checkpointer_answer(struct d_daemon *d, uint64_t ticket, int *rc, uint64_t *size, char *err,
                          size_t cap)
{
    struct d_checkpointer *cp = d->cp;
    int done;

    if (cp == NULL)
        return 0;
    pthread_mutex_lock(&cp->lock);
    done = cp->answered >= ticket;
    if (done) {
        *rc = cp->round_rc;
        *size = cp->round_size;
        snprintf(err, cap, "%s", cp->round_err);
    }
    pthread_mutex_unlock(&cp->lock);
    return done;
}

void d_checkpointer_stop(struct d_daemon *d)
{
    struct d_checkpointer *cp = d->cp;

    if (cp == NULL)
        return;
    pthread_mutex_lock(&cp->lock);
    cp->stop = 1;
    pthread_cond_signal(&cp->cond);
    pthread_mutex_unlock(&cp->lock);
    if (cp->started)
        pthread_join(cp->thread, NULL);
    /* The final checkpoint: quoted even inside the minimum interval, as the last word. When the
     * log did not grow since a checkpoint whose quote the interval held back, that checkpoint is
     * signed again so that the last word is quoted too. */
    cp->limiter.have_last = 0;
    (void)round_once(cp, d->cfg->tpm_tcti != NULL && !cp->last_quoted,
                     ROUND_FINAL); /* logged when it fails */
    if (cp->have_ak && d->tpm != NULL)
        sworn_tpm_ak_flush(d->tpm, &cp->ak);
    checkpointer_free(cp);
    d->cp = NULL;
}
