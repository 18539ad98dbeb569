/*
 * d_record.c -- building entries and appending them, with receipts, to the log (d_daemon.h).
 *
 * Why the receipt is made before the append: the receipt signs the entry's leaf hash, which is
 * known as soon as the entry is packed, so the entry and its receipt go into the log in one
 * transaction (one fsync) and the log never holds an allow without its receipt. Signing is not an
 * effect: the answer that lets the request through is sent only after the append is durable. If
 * signing fails, nothing was appended, and the caller records a deny in its place.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "d_daemon.h"
#include "d_jlog.h"
#include "err.h"
#include "merkle.h"

int d_entry_pack(const Sworn__V1__Entry *e, uint8_t **out, size_t *len)
{
    return sworn_frame_pack_entry(e, out, len);
}

int d_record_receipt(struct d_daemon *d, const uint8_t leaf[32], uint8_t *out, size_t *out_len)
{
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    uint8_t sig[SWORN_SIGNER_SIG_MAX];
    size_t sig_len;
    enum sworn_sig_alg alg = sworn_signer_proc_alg(d->signer);

    if (alg != SWORN_SIG_ED25519 && alg != SWORN_SIG_ECDSA_P256_SHA256)
        return sworn_err_set(SWORN_ERR_ARG, "receipts need an ECDSA P-256 or Ed25519 key");
    if (sworn_signer_proc_sign(d->signer, SWORN_PURPOSE_RECEIPT, leaf, 32, sig, sizeof(sig),
                               &sig_len) < 0) {
        atomic_store(&d->metrics.signer_up, 0);
        return sworn_err_set(SWORN_ERR_IO, "receipt signing failed: %s", sworn_err_msg());
    }
    atomic_store(&d->metrics.signer_up, 1);
    r.key_id.data = d->key_id;
    r.key_id.len = sizeof(d->key_id);
    r.signature.data = sig;
    r.signature.len = sig_len;
    r.alg = alg == SWORN_SIG_ED25519 ? 2 : 1;
    if (protobuf_c_message_get_packed_size(&r.base) > SWORN_LOG_RECEIPT_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "receipt too long");
    *out_len = protobuf_c_message_pack(&r.base, out);
    return 0;
}

int d_record_append(struct d_daemon *d, const uint8_t *entry, size_t len, const uint8_t *receipt,
                    size_t receipt_len, uint64_t *index)
{
    const uint8_t *entries[1] = {entry};
    const uint8_t *receipts[1] = {receipt};
    size_t lens[1] = {len}, rlens[1] = {receipt_len};

    if (sworn_log_append_receipts(d->log, entries, lens, receipt != NULL ? receipts : NULL,
                                  receipt != NULL ? rlens : NULL, 1, index) < 0)
        return -1;
    atomic_store(&d->metrics.log_entries, *index + 1);
    return 0;
}

/* --- refused frames --------------------------------------------------------------------- */

#define REFUSED_PER_SECOND 100

struct refused_job {
    struct d_daemon *d;
    uint8_t *entry;
    size_t len;
};

static void refused_work(void *arg)
{
    struct refused_job *j = arg;
    uint64_t index;

    if (d_record_append(j->d, j->entry, j->len, NULL, 0, &index) < 0)
        d_log_msg(D_LOG_ERROR, "refused_not_recorded", sworn_err_msg());
}

static void refused_done(void *arg)
{
    struct refused_job *j = arg;

    free(j->entry);
    free(j);
}

void d_record_refused(struct d_daemon *d, enum d_channel ch, uid_t uid, pid_t pid, int code,
                      const char *message, const char *request_id, const uint8_t *body,
                      size_t body_len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__Refused r = SWORN__V1__REFUSED__INIT;
    uint8_t digest[32];
    char msg[SWORN_ERR_MSG_MAX];
    struct refused_job *j;
    uint64_t now = d_now_unix_ms();
    json_object *f = json_object_new_object();

    atomic_fetch_add(&d->metrics.refused[ch], 1);
    if (f != NULL) {
        json_object_object_add(
            f, "channel", json_object_new_string(ch == D_CHANNEL_ADMIN ? "admin" : "decision"));
        json_object_object_add(f, "uid", json_object_new_int64((int64_t)uid));
        json_object_object_add(f, "pid", json_object_new_int64((int64_t)pid));
        json_object_object_add(f, "code", json_object_new_int(code));
        json_object_object_add(f, "msg", json_object_new_string(message));
    }
    d_log(D_LOG_WARN, "refused", f);
    /* A flood of refusals must not become a flood of entries: the first REFUSED_PER_SECOND of
     * each second are recorded, the rest only counted (docs/decisiond.md). */
    if (now / 1000 != d->refused_window_s) {
        d->refused_window_s = now / 1000;
        d->refused_in_window = 0;
    }
    if (d->refused_in_window >= REFUSED_PER_SECOND || d->workq == NULL)
        return;
    d->refused_in_window++;
    /* The message must pass the entry's own checks: keep it printable and short. */
    snprintf(msg, sizeof(msg), "%s", message);
    for (char *p = msg; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    r.channel = ch == D_CHANNEL_ADMIN ? "admin" : "decision";
    r.peer_uid = (uint32_t)uid;
    r.peer_pid = (uint32_t)pid;
    r.code = (uint32_t)(code != 0 ? code : SWORN_ERR_FORMAT);
    r.message = msg;
    r.request_id = (char *)(request_id != NULL ? request_id : "");
    if (body != NULL && body_len > 0) {
        SHA256(body, body_len, digest);
        r.frame_sha256.data = digest;
        r.frame_sha256.len = 32;
    }
    r.time_unix_ms = now;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSED;
    e.refused = &r;
    j = calloc(1, sizeof(*j));
    if (j == NULL)
        return;
    j->d = d;
    if (d_entry_pack(&e, &j->entry, &j->len) < 0 ||
        d_workq_submit(d->workq, refused_work, refused_done, j) < 0) {
        d_log_msg(D_LOG_ERROR, "refused_not_recorded", sworn_err_msg());
        free(j->entry);
        free(j);
    }
}
