/*
 * d_record.c -- building entries and appending them, with receipts, to the log (d_record.h).
 *
 * Why the receipt is made before the append: the receipt signs the entry's leaf hash, which is
 * known as soon as the entry is packed, so the entry and its receipt go into the log in one
 * transaction (one fsync) and the log never holds an allow without its receipt. Signing is not an
 * effect: the answer that lets the request through is sent only after the append is durable. If
 * signing fails, nothing was appended, and the caller records a deny in its place.
 */
/* SHA256() one-shot fetches the algorithm on every call: SHA256_Init/Update/Final for a batch
 * item's base (as in transparency-log/merkle.c). */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "d_record.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/sha.h>

#include "d_batchtree.h"
#include "d_daemon.h"
#include "d_jlog.h"
#include "d_refusals.h"
#include "encoding.h"
#include "err.h"
#include "merkle.h"
#include "resource.h"
#include "sig_base.h"
#include "utf8.h"

int d_entry_pack(const Sworn__V1__Entry *e, uint8_t **out, size_t *len)
{
    return sworn_frame_pack_entry(e, out, len);
}

/* DER ECDSA-Sig-Value -> r||s, each left-padded to 32 bytes (RFC 9421 section 3.3.4). */
static int ecdsa_der_to_raw(const uint8_t *der, size_t len, uint8_t raw[64])
{
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)len);
    const BIGNUM *r = NULL, *s = NULL;
    int ok;

    if (sig == NULL || p != der + len) {
        ECDSA_SIG_free(sig);
        return sworn_err_set(SWORN_ERR_CRYPTO, "the signer's ECDSA signature is not DER");
    }
    ECDSA_SIG_get0(sig, &r, &s);
    ok = BN_bn2binpad(r, raw, 32) == 32 && BN_bn2binpad(s, raw + 32, 32) == 32;
    ECDSA_SIG_free(sig);
    return ok ? 0 : sworn_err_set(SWORN_ERR_CRYPTO, "the signer's ECDSA signature is too long");
}

/*
 * sworn's RFC 9421 base of req decided at time_ms with leaf hash leaf (section 13), into base
 * (SWORN_SIGBASE_MAX bytes) and its params text; 1 when the request gets none (no method, not
 * http, https, ws or wss, or a key that is not P-256), 0, or -1 (a base out of its bounds).
 */
static int http_base(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                     const struct sworn_resource_canonical *canon, uint64_t time_ms,
                     const uint8_t leaf[32], uint8_t *base, size_t *base_len, char *params,
                     size_t params_cap)
{
    const Sworn__V1__Context *ctx = req->context;
    const char *method = ctx != NULL ? ctx->method : "", *why = NULL;
    struct sworn_httpsig_request h;
    char keyid[2 * SWORN_KEY_ID_LEN + 1];
    size_t params_len = 0;

    if (!sworn_resource_canonical_is_of(canon, req->resource))
        return sworn_err_set(SWORN_ERR_ARG, "no signature base: the canonical resource given is "
                                            "not that of this request");
    if (sworn_signer_proc_alg(d->signer) != SWORN_SIG_ECDSA_P256_SHA256 || canon->rc != 0 ||
        !sworn_httpsig_applies(canon->res.scheme, method))
        return 1;
    (void)sworn_hex_encode(d->key_id, SWORN_KEY_ID_LEN, keyid, sizeof(keyid)); /* it fits */
    h = (struct sworn_httpsig_request){
        .method = method,
        .scheme = canon->res.scheme,
        .host = canon->res.host,
        .port = canon->res.port,
        .path = canon->res.path,
        .body_sha256 = ctx->body_sha256.len == 32 ? ctx->body_sha256.data : NULL,
        .leaf = leaf,
    };
    if (sworn_httpsig_base(&h, (int64_t)(time_ms / 1000), keyid, base, SWORN_SIGBASE_MAX, base_len,
                           params, params_cap, &params_len, &why) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "no signature base: %s", why);
    return 0;
}

/* The http-message receipt's signature and fields (d_record.h); 1 when the request has none. */
static int http_message_receipt(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                                const struct sworn_resource_canonical *canon, uint64_t time_ms,
                                const uint8_t leaf[32], Sworn__V1__Receipt *r, uint8_t raw[64],
                                char *params, size_t params_cap)
{
    static _Thread_local uint8_t base[SWORN_SIGBASE_MAX];
    uint8_t der[SWORN_SIGNER_SIG_MAX];
    size_t base_len = 0, der_len = 0;
    int rc = http_base(d, req, canon, time_ms, leaf, base, &base_len, params, params_cap);

    if (rc != 0)
        return rc;
    if (sworn_signer_proc_sign(d->signer, SWORN_PURPOSE_HTTP_MESSAGE, base, base_len, der,
                               sizeof(der), &der_len) < 0) {
        atomic_store(&d->metrics.signer_up, 0);
        return sworn_err_set(SWORN_ERR_IO, "receipt signing failed: %s", sworn_err_msg());
    }
    atomic_store(&d->metrics.signer_up, 1);
    SWORN_GUARD(ecdsa_der_to_raw(der, der_len, raw));
    r->signature.data = raw;
    r->signature.len = 64;
    r->alg = 1;
    r->form = 1;
    r->created = time_ms / 1000;
    r->signature_params = params;
    return 0;
fail:
    return -1;
}

int d_record_receipt(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                     const struct sworn_resource_canonical *canon, uint64_t time_ms,
                     const uint8_t leaf[32], uint8_t *out, size_t *out_len)
{
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    uint8_t sig[SWORN_SIGNER_SIG_MAX], raw[64];
    char params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t sig_len;
    enum sworn_sig_alg alg = sworn_signer_proc_alg(d->signer);
    int rc;

    if (alg != SWORN_SIG_ED25519 && alg != SWORN_SIG_ECDSA_P256_SHA256)
        return sworn_err_set(SWORN_ERR_ARG, "receipts need an ECDSA P-256 or Ed25519 key");
    r.key_id.data = d->key_id;
    r.key_id.len = sizeof(d->key_id);
    rc = req != NULL
             ? http_message_receipt(d, req, canon, time_ms, leaf, &r, raw, params, sizeof(params))
             : 1;
    if (rc < 0)
        return -1;
    if (rc == 1) {
        if (sworn_signer_proc_sign(d->signer, SWORN_PURPOSE_RECEIPT, leaf, 32, sig, sizeof(sig),
                                   &sig_len) < 0) {
            atomic_store(&d->metrics.signer_up, 0);
            return sworn_err_set(SWORN_ERR_IO, "receipt signing failed: %s", sworn_err_msg());
        }
        atomic_store(&d->metrics.signer_up, 1);
        r.signature.data = sig;
        r.signature.len = sig_len;
        r.alg = alg == SWORN_SIG_ED25519 ? 2 : 1;
    }
    if (sworn_frame_check_receipt(&r) < 0 ||
        protobuf_c_message_get_packed_size(&r.base) > SWORN_LOG_RECEIPT_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "receipt out of its bounds");
    *out_len = protobuf_c_message_pack(&r.base, out);
    return 0;
}

int d_record_batch_sign(struct d_daemon *d, uint32_t n, const uint8_t root[32], uint8_t *sig,
                        size_t *sig_len)
{
    uint8_t msg[SWORN_BATCH_MSG_LEN];
    enum sworn_sig_alg alg = sworn_signer_proc_alg(d->signer);

    if (alg != SWORN_SIG_ED25519 && alg != SWORN_SIG_ECDSA_P256_SHA256)
        return sworn_err_set(SWORN_ERR_ARG, "receipts need an ECDSA P-256 or Ed25519 key");
    d_batchtree_message(n, root, msg);
    if (sworn_signer_proc_sign(d->signer, SWORN_PURPOSE_BATCH, msg, sizeof(msg), sig,
                               SWORN_SIGNER_SIG_MAX, sig_len) < 0) {
        atomic_store(&d->metrics.signer_up, 0);
        return sworn_err_set(SWORN_ERR_IO, "receipt signing failed: %s", sworn_err_msg());
    }
    atomic_store(&d->metrics.signer_up, 1);
    return 0;
}

int d_record_batch_item(struct d_daemon *d, const Sworn__V1__AuthorizationRequest *req,
                        const struct sworn_resource_canonical *canon, uint64_t time_ms,
                        const uint8_t leaf[32], uint8_t item[32], unsigned *form, char *params,
                        size_t params_cap)
{
    static _Thread_local uint8_t base[SWORN_SIGBASE_MAX];
    SHA256_CTX ctx;
    size_t base_len = 0;
    int rc = req != NULL
                 ? http_base(d, req, canon, time_ms, leaf, base, &base_len, params, params_cap)
                 : 1;

    if (rc < 0)
        return -1;
    if (rc == 1) {
        memcpy(item, leaf, 32);
        *form = 2;
        params[0] = '\0';
        return 0;
    }
    SHA256_Init(&ctx);
    SHA256_Update(&ctx, base, base_len);
    SHA256_Final(item, &ctx);
    *form = 3;
    return 0;
}

int d_record_batch_receipt(struct d_daemon *d, unsigned form, const char *params, uint64_t time_ms,
                           const uint8_t *sig, size_t sig_len, uint32_t index, uint32_t n,
                           const uint8_t (*path)[32], size_t path_n, uint8_t *out, size_t *len)
{
    Sworn__V1__Receipt r = SWORN__V1__RECEIPT__INIT;
    uint8_t raw[64];

    r.key_id.data = d->key_id;
    r.key_id.len = sizeof(d->key_id);
    r.signature.data = (uint8_t *)sig;
    r.signature.len = sig_len;
    r.alg = sworn_signer_proc_alg(d->signer) == SWORN_SIG_ED25519 ? 2 : 1;
    r.form = form;
    if (form == 3) {
        /* As form 1: the signature r||s (RFC 9421 section 3.3.4) and the base's params. */
        SWORN_GUARD(ecdsa_der_to_raw(sig, sig_len, raw));
        r.signature.data = raw;
        r.signature.len = 64;
        r.created = time_ms / 1000;
        r.signature_params = (char *)params;
    }
    r.batch_index = index;
    r.batch_size = n;
    r.batch_path.data = (uint8_t *)path;
    r.batch_path.len = 32 * path_n;
    if (sworn_frame_check_receipt(&r) < 0 ||
        protobuf_c_message_get_packed_size(&r.base) > SWORN_LOG_RECEIPT_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "batch receipt out of its bounds: %s",
                             sworn_err_msg());
    *len = protobuf_c_message_pack(&r.base, out);
    return 0;
fail:
    return -1;
}

int d_record_append_group(struct d_daemon *d, const uint8_t *const *entries, const size_t *lens,
                          const uint8_t *const *receipts, const size_t *receipt_lens, size_t n,
                          uint64_t *first_index)
{
    return d_timemark_append_entries(d, entries, lens, receipts, receipt_lens, n, first_index);
}

int d_record_append(struct d_daemon *d, const uint8_t *entry, size_t len, const uint8_t *receipt,
                    size_t receipt_len, uint64_t *index)
{
    /* Through the time marks: they must see every append where log order is decided. */
    return d_timemark_append_entry(d, entry, len, receipt, receipt_len, index);
}

void d_record_clean_text(const char *in, char *out, size_t cap)
{
    /* The JSON mode writes \uXXXX for an unsafe character and \ufffd for a bad byte, and leaves
     * everything else as it is (a backslash too: a message escaped already, such as the policy
     * reader's, is not escaped twice). On overflow the escaper leaves a NUL-terminated prefix
     * that cuts no character and no escape: the text is shortened, never made invalid. */
    (void)sworn_utf8_escape(in, strlen(in), SWORN_UTF8_ESCAPE_JSON, out, cap);
}

int d_policy_entry(const char *source, const uint8_t digest[32], uint64_t version,
                   const char *error, uint8_t **out, size_t *len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__PolicyLoaded p = SWORN__V1__POLICY_LOADED__INIT;
    char clean[SWORN_POLICY_REASON_MAX + 1];

    /* The error quotes the refused file (a key it did not know): escaped, so that an unsafe
     * character or a byte that is not UTF-8 there, or a cut through a character, cannot make the
     * entry fail its own checks and leave the refusal unrecorded. */
    d_record_clean_text(error != NULL ? error : "", clean, sizeof(clean));
    p.digest.data = (uint8_t *)digest;
    p.digest.len = 32;
    p.source = (char *)source;
    p.time_unix_ms = d_now_unix_ms();
    p.version = version;
    p.error = clean;
    e.kind_case = SWORN__V1__ENTRY__KIND_POLICY_LOADED;
    e.policy_loaded = &p;
    return d_entry_pack(&e, out, len);
}

/* --- refused frames --------------------------------------------------------------------- */

struct refused_job {
    struct d_daemon *d;
    uint8_t *entry;
    size_t len;
    const char *what; /* the log event when it could not be appended */
};

static void refused_work(void *arg)
{
    struct refused_job *j = arg;
    uint64_t index;

    if (d_record_append(j->d, j->entry, j->len, NULL, 0, &index) < 0)
        d_log_msg(D_LOG_ERROR, j->what, sworn_err_msg());
}

static void refused_done(void *arg)
{
    struct refused_job *j = arg;

    free(j->entry);
    free(j);
}

/* Pack a RefusalsDropped entry of s, recorded at now. OUT: *out (free it), *len. 0 or -1. */
static int pack_summary(const struct d_refusal_summary *s, uint64_t now, uint8_t **out, size_t *len)
{
    Sworn__V1__Entry e = SWORN__V1__ENTRY__INIT;
    Sworn__V1__RefusalsDropped r = SWORN__V1__REFUSALS_DROPPED__INIT;
    Sworn__V1__DroppedRefusals *rows = calloc(s->n_rows, sizeof(*rows));
    Sworn__V1__DroppedRefusals **ptrs = calloc(s->n_rows, sizeof(*ptrs));
    int rc = -1;

    if (rows == NULL || ptrs == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n_rows; i++) {
        sworn__v1__dropped_refusals__init(&rows[i]);
        rows[i].channel = (char *)d_refusals_channel_name(s->rows[i].channel);
        rows[i].peer_uid = s->rows[i].uid;
        rows[i].count = s->rows[i].count;
        ptrs[i] = &rows[i];
    }
    r.period_start_unix_ms = s->first_ms;
    r.period_end_unix_ms = s->last_ms;
    r.time_unix_ms = now > s->last_ms ? now : s->last_ms;
    r.n_dropped = s->n_rows;
    r.dropped = ptrs;
    e.kind_case = SWORN__V1__ENTRY__KIND_REFUSALS_DROPPED;
    e.refusals_dropped = &r;
    rc = d_entry_pack(&e, out, len);
out:
    free(ptrs);
    free(rows);
    return rc;
}

/*
 * Write the pending drops as one RefusalsDropped entry: through a worker, or at once (sync: at the
 * orderly stop, once the workers are gone). A summary that cannot be written is logged with its
 * counts, so even then nothing disappears without a word.
 */
static void write_summary(struct d_daemon *d, int sync)
{
    struct d_refusal_summary *s = malloc(sizeof(*s));
    struct refused_job *j = NULL;
    uint64_t total = 0, index;
    json_object *f = json_object_new_object();

    if (s == NULL) {
        d_log_msg(D_LOG_ERROR, "refusals_dropped_not_recorded", "out of memory (still counted)");
        json_object_put(f);
        return;
    }
    d_refusals_take(&d->refusals, s);
    for (size_t i = 0; i < s->n_rows; i++)
        total += s->rows[i].count;
    if (f != NULL) {
        json_object_object_add(f, "dropped", json_object_new_int64((int64_t)total));
        json_object_object_add(f, "pairs", json_object_new_int64((int64_t)s->n_rows));
        json_object_object_add(f, "since_ms", json_object_new_int64((int64_t)s->first_ms));
    }
    d_log(D_LOG_WARN, "refusals_dropped", f);
    j = calloc(1, sizeof(*j));
    if (j == NULL || pack_summary(s, d_now_unix_ms(), &j->entry, &j->len) < 0) {
        d_log_msg(D_LOG_ERROR, "refusals_dropped_not_recorded", sworn_err_msg());
        free(j);
        free(s);
        return;
    }
    free(s);
    j->d = d;
    j->what = "refusals_dropped_not_recorded";
    if (sync) {
        if (d->log == NULL || d_record_append(d, j->entry, j->len, NULL, 0, &index) < 0)
            d_log_msg(D_LOG_ERROR, j->what, d->log == NULL ? "no log" : sworn_err_msg());
        refused_done(j);
    } else if (d_workq_submit(d->workq, refused_work, refused_done, j) < 0) {
        d_log_msg(D_LOG_ERROR, j->what, sworn_err_msg());
        refused_done(j);
    }
}

/* A refusal over its quota: counted, and the summary written when due. */
static void count_dropped(struct d_daemon *d, enum d_channel ch, uid_t uid, uint64_t now)
{
    if (!d_refusals_drop(&d->refusals, ch, (uint32_t)uid, now)) {
        write_summary(d, d->workq == NULL); /* 256 pairs pending: they go first */
        (void)d_refusals_drop(&d->refusals, ch, (uint32_t)uid, now);
    }
    if (d->workq != NULL && d_refusals_due(&d->refusals, now))
        write_summary(d, 0);
}

/*
 * Write the suppressed `refused` lines' counts: one refused_lines_suppressed line per pair, so the
 * log still says how many of each pair's refusals it did not show (d_refusals.h).
 */
static void log_suppressed(struct d_daemon *d)
{
    struct d_refusal_summary *s = malloc(sizeof(*s));

    if (s == NULL) {
        d_log_msg(D_LOG_ERROR, "refused_lines_suppressed", "out of memory (still counted)");
        return;
    }
    d_refusals_take_suppressed(&d->refusals, s);
    for (size_t i = 0; i < s->n_rows; i++) {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(
                f, "channel", json_object_new_string(d_refusals_channel_name(s->rows[i].channel)));
            json_object_object_add(f, "uid", json_object_new_int64((int64_t)s->rows[i].uid));
            json_object_object_add(f, "count", json_object_new_int64((int64_t)s->rows[i].count));
            json_object_object_add(f, "since_ms", json_object_new_int64((int64_t)s->first_ms));
            json_object_object_add(f, "until_ms", json_object_new_int64((int64_t)s->last_ms));
        }
        d_log(D_LOG_WARN, "refused_lines_suppressed", f);
    }
    free(s);
}

static void on_refusals_tick(evutil_socket_t fd, short what, void *arg)
{
    struct d_daemon *d = arg;
    uint64_t now = d_now_unix_ms();

    (void)fd;
    (void)what;
    if (d->workq != NULL && d_refusals_due(&d->refusals, now))
        write_summary(d, 0);
    if (d_refusals_suppressed_due(&d->refusals, now))
        log_suppressed(d);
}

int d_record_refusals_start(struct d_daemon *d)
{
    struct timeval tick = {1, 0};

    d->refusals_timer = event_new(d->base, -1, EV_PERSIST, on_refusals_tick, d);
    if (d->refusals_timer == NULL || event_add(d->refusals_timer, &tick) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot start the dropped-refusals timer");
    return 0;
}

void d_record_refusals_stop(struct d_daemon *d)
{
    if (d->refusals_timer != NULL) {
        event_free(d->refusals_timer);
        d->refusals_timer = NULL;
    }
    if (d_refusals_pending(&d->refusals))
        write_summary(d, 1);
    if (d_refusals_suppressed_pending(&d->refusals))
        log_suppressed(d);
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
    json_object *f = NULL;
    int line;

    atomic_fetch_add(&d->metrics.refused[ch], 1); /* the metric counts every refusal */
    /* Nor a flood of log lines: each pair has a quota of `refused` lines too, and what is over it
     * is counted and written as one refused_lines_suppressed line per pair (d_refusals.h). */
    line = d_refusals_log(&d->refusals, ch, (uint32_t)uid, now);
    if (line < 0) {
        log_suppressed(d); /* 256 pairs pending: their lines go first */
        line = d_refusals_log(&d->refusals, ch, (uint32_t)uid, now);
    }
    if (line > 0)
        f = json_object_new_object();
    if (f != NULL) {
        json_object_object_add(
            f, "channel", json_object_new_string(ch == D_CHANNEL_ADMIN ? "admin" : "decision"));
        json_object_object_add(f, "uid", json_object_new_int64((int64_t)uid));
        json_object_object_add(f, "pid", json_object_new_int64((int64_t)pid));
        json_object_object_add(f, "code", json_object_new_int(code));
        json_object_object_add(f, "msg", json_object_new_string(message));
    }
    if (line > 0)
        d_log(D_LOG_WARN, "refused", f);
    else if (d_refusals_suppressed_due(&d->refusals, now))
        log_suppressed(d);
    /* A flood of refusals must not become a flood of entries, nor use up another peer's record:
     * each (channel, uid) pair has its own quota, and what is over it is counted and summarised
     * (d_refusals.h, docs/decisiond.md section 3). */
    if (d->workq == NULL || !d_refusals_admit(&d->refusals, ch, (uint32_t)uid, now)) {
        count_dropped(d, ch, uid, now);
        return;
    }
    /* The message must pass the entry's own checks: escaped and cut at a character. */
    d_record_clean_text(message, msg, sizeof(msg));
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
    if (j == NULL) {
        d_log_msg(D_LOG_ERROR, "refused_not_recorded", "out of memory");
        return;
    }
    j->d = d;
    j->what = "refused_not_recorded";
    if (d_entry_pack(&e, &j->entry, &j->len) < 0 ||
        d_workq_submit(d->workq, refused_work, refused_done, j) < 0) {
        d_log_msg(D_LOG_ERROR, "refused_not_recorded", sworn_err_msg());
        free(j->entry);
        free(j);
    }
}
