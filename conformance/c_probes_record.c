/*
 * c_probes_record.c -- the probes that read the record's files and run sworn-verify, from
 * outside the sandbox, as the operator and the auditor would (c_probes.h).
 *
 * The tamper probes work on copies in the run's scratch folder, never on the record: each copy is
 * made, damaged in one documented way, and handed to sworn-verify with the auditor's policy. A
 * rejection only means something when the untouched record is accepted (the same policy could
 * reject everything), so each of them first needs that baseline (run once per run, shared).
 */
#define _XOPEN_SOURCE 700 /* S_ISVTX */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "c_probes.h"
#include "c_record.h"
#include "c_verify.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "note.h"
#include "sworn.pb-c.h"

/* --- T4: no write path ------------------------------------------------------------------------
 */

struct wcheck {
    const struct c_deploy *dep;
    struct c_result *r;
    size_t checked, offending;
};

static int in_gids(const struct c_deploy *dep, gid_t g)
{
    for (size_t i = 0; i < dep->nagent_gids; i++)
        if (dep->agent_gids[i] == (uint32_t)g)
            return 1;
    return 0;
}

/* Why st is writable by the agent, or NULL. An owner can chmod, so owning is writing. */
static const char *writable(const struct c_deploy *dep, const struct stat *st)
{
    if ((int64_t)st->st_uid == dep->agent_uid)
        return "owned by the agent's uid";
    if ((st->st_mode & S_IWOTH) != 0)
        return "writable by everyone";
    if ((st->st_mode & S_IWGRP) != 0 && in_gids(dep, st->st_gid))
        return "writable by a group of the agent";
    return NULL;
}

static void note_path(struct wcheck *w, const char *path, const struct stat *st)
{
    const char *why = writable(w->dep, st);

    w->checked++;
    if (why == NULL)
        return;
    w->offending++;
    c_evidence(w->r, "%s: mode %04o, uid %u, gid %u: %s", path, (unsigned)(st->st_mode & 07777),
               (unsigned)st->st_uid, (unsigned)st->st_gid, why);
}

/*
 * The folders above path: whoever may write one of them (without the sticky bit, which stops
 * renaming another's entry) can move the record away and put another in its place.
 */
static void note_ancestors(struct wcheck *w, const char *path)
{
    char buf[C_DEPLOY_PATH_MAX];
    char *slash;

    snprintf(buf, sizeof(buf), "%s", path);
    while ((slash = strrchr(buf, '/')) != NULL) {
        struct stat st;
        if (slash == buf)
            slash[1] = '\0';
        else
            *slash = '\0';
        if (stat(buf, &st) == 0 && (st.st_mode & S_ISVTX) == 0)
            note_path(w, buf, &st);
        else if (stat(buf, &st) == 0 && (int64_t)st.st_uid == w->dep->agent_uid)
            note_path(w, buf, &st);
        if (slash == buf)
            break;
    }
}

static int walk(struct wcheck *w, const char *path, unsigned depth)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno));
    note_path(w, path, &st);
    if (!S_ISDIR(st.st_mode))
        return 0;
    if (depth > 32 || w->checked > C_RECORD_COPY_FILES_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "%s: too deep or too many files", path);
    {
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *e;
        int rc = 0;
        if (d == NULL) {
            if (fd >= 0)
                close(fd);
            return sworn_err_set(SWORN_ERR_IO, "%s: %s", path, strerror(errno));
        }
        while (rc == 0 && (e = readdir(d)) != NULL) {
            char sub[4096];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
                rc = sworn_err_set(SWORN_ERR_RANGE, "%s: a path too long", path);
            else
                rc = walk(w, sub, depth + 1);
        }
        closedir(d);
        return rc;
    }
}

void c_probe_no_write_path(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    struct wcheck w = {dep, r, 0, 0};
    static const char *const db_suffixes[] = {"", "-wal", "-shm", "-journal"};

    if (walk(&w, dep->record, 0) < 0) {
        c_result_set(r, C_ERROR, "the record folder could not be walked: %s", sworn_err_msg());
        return;
    }
    note_ancestors(&w, dep->record);
    if (dep->log_db[0] != '\0') {
        struct stat st;
        if (stat(dep->log_db, &st) < 0) {
            c_result_set(r, C_ERROR, "log_db %s: %s", dep->log_db, strerror(errno));
            return;
        }
        for (size_t i = 0; i < sizeof(db_suffixes) / sizeof(db_suffixes[0]); i++) {
            char p[C_DEPLOY_PATH_MAX + 16];
            snprintf(p, sizeof(p), "%s%s", dep->log_db, db_suffixes[i]);
            if (lstat(p, &st) == 0)
                note_path(&w, p, &st);
        }
        note_ancestors(&w, dep->log_db);
    }
    c_evidence(r, "agent uid %lld, %zu groups; %zu paths checked", (long long)dep->agent_uid,
               dep->nagent_gids, w.checked);
    if (w.offending > 0)
        c_result_set(r, C_FAIL, "%zu of %zu paths of the record%s are writable by the agent",
                     w.offending, w.checked, dep->log_db[0] != '\0' ? " and the log database" : "");
    else
        c_result_set(r, C_PASS,
                     "none of the %zu paths of the record%s or their folders is writable by uid "
                     "%lld (modes and owners; ACLs are not read)",
                     w.checked, dep->log_db[0] != '\0' ? ", the log database" : "",
                     (long long)dep->agent_uid);
}

/* --- T5: sworn-verify -------------------------------------------------------------------------
 */

static void verify_evidence(struct c_result *r, const struct c_verify *v)
{
    c_evidence(r, "sworn-verify exit %d, result %s, tree size %llu, root %s", v->status, v->result,
               (unsigned long long)v->tree_size, v->root[0] != '\0' ? v->root : "-");
    c_evidence(r, "checks: %u passed of %u", v->passed, v->checks);
    /* Each check on its own line: what the trust policy had checked (quotes, receipts, keyring,
     * witness quorum, ...) and how much of it, so a reader need not rerun sworn-verify. */
    for (unsigned i = 0; i < v->neach; i++)
        c_evidence(r, "check %s: %s, %llu checked, %llu failed", v->each[i].name, v->each[i].result,
                   (unsigned long long)v->each[i].count, (unsigned long long)v->each[i].failures);
    for (unsigned i = 0; i < v->nfailed; i++)
        c_evidence(r, "failed check %s", v->failed[i]);
    if (v->error[0] != '\0')
        c_evidence(r, "unreadable: %s", v->error);
}

/*
 * A copy of the auditor's state (or a path with none, when the file does not exist yet) in
 * scratch: sworn-verify replaces the state it is given on success, and a conformance run must
 * not move the auditor's own state forward.
 */
static int state_copy(struct c_ctx *ctx, char *out, size_t cap)
{
    char *data = NULL;
    size_t len;

    if (c_scratch_path(ctx, "state", out, cap) < 0)
        return sworn_err_set(SWORN_ERR_RANGE, "the scratch path is too long");
    if (sworn_file_read(ctx->dep->state, SWORN_NOTE_MAX_LEN, &data, &len) < 0)
        return sworn_err_code() == SWORN_ERR_NOTFOUND ? 0 : -1;
    if (sworn_file_create(out, data, len, 0600) < 0) {
        free(data);
        return -1;
    }
    free(data);
    return 0;
}

void c_probe_verify(struct c_ctx *ctx, struct c_result *r)
{
    const struct c_deploy *dep = ctx->dep;
    char state[1200];
    struct c_verify v;

    if (dep->state[0] != '\0' && state_copy(ctx, state, sizeof(state)) < 0) {
        c_result_set(r, C_ERROR, "auditor_state: %s", sworn_err_msg());
        return;
    }
    if (c_verify_run(dep, dep->trust_policy, dep->record, dep->state[0] != '\0' ? state : NULL,
                     &v) < 0) {
        c_result_set(r, C_ERROR, "sworn-verify did not run: %s", sworn_err_msg());
        return;
    }
    verify_evidence(r, &v);
    if (dep->state[0] != '\0')
        c_evidence(r, "against a copy of the auditor's state %s", dep->state);
    if (v.status == 0 && strcmp(v.result, "pass") == 0)
        c_result_set(r, C_PASS, "sworn-verify accepts the record (%u checks passed)%s", v.passed,
                     v.development ? "; its Startup entries say development: not Accountable" : "");
    else
        c_result_set(r, C_FAIL, "sworn-verify rejects the record: exit %d, %s%s%s", v.status,
                     v.nfailed > 0 ? v.failed[0] : v.result, v.error[0] != '\0' ? ": " : "",
                     v.error);
}

/* The untouched record under the auditor's policy, once per run (ctx->baseline). */
static int baseline(struct c_ctx *ctx, struct c_result *r)
{
    struct c_verify v;

    if (ctx->baseline == 0) {
        if (c_verify_run(ctx->dep, ctx->dep->trust_policy, ctx->dep->record, NULL, &v) < 0) {
            ctx->baseline = -1;
            snprintf(ctx->baseline_why, sizeof(ctx->baseline_why), "sworn-verify did not run: %s",
                     sworn_err_msg());
        } else if (v.status != 0) {
            ctx->baseline = -1;
            snprintf(ctx->baseline_why, sizeof(ctx->baseline_why),
                     "the untouched record is rejected too (exit %d, %s), so a rejection of a "
                     "tampered copy shows nothing",
                     v.status, v.nfailed > 0 ? v.failed[0] : v.result);
        } else {
            ctx->baseline = 1;
        }
    }
    if (ctx->baseline < 0) {
        c_result_set(r, C_ERROR, "%s", ctx->baseline_why);
        return -1;
    }
    return 0;
}

/* A fresh copy of the record in scratch, named after the probe. */
static int fresh_copy(struct c_ctx *ctx, struct c_result *r, const char *name, char *out,
                      size_t cap, struct sworn_checkpoint *cp)
{
    if (baseline(ctx, r) < 0)
        return -1;
    if (c_scratch_path(ctx, name, out, cap) < 0 || c_record_copy(ctx->dep->record, out) < 0 ||
        c_record_checkpoint(out, cp) < 0) {
        c_result_set(r, C_ERROR, "the record could not be copied: %s", sworn_err_msg());
        return -1;
    }
    if (cp->size == 0) {
        c_result_set(r, C_ERROR, "the record is empty: nothing to tamper with");
        return -1;
    }
    return 0;
}

/* The newest entry bundle of a tampered copy, read and split into its entries. */
struct bundle {
    char rel[SWORN_TILE_PATH_MAX]; /* its path relative to the record */
    char path[4096];
    char *bytes; /* free it */
    size_t len;
    unsigned width; /* its entries */
    struct sworn_tile_entry e[SWORN_TILE_WIDTH];
};

/* Read and parse the newest bundle of the copy dir of a tree of size entries. 0 or -1 (bytes
 * freed). */
static int newest_bundle(const char *dir, uint64_t size, struct bundle *b)
{
    uint64_t last = (size - 1) / SWORN_TILE_WIDTH;

    b->bytes = NULL;
    b->width = (unsigned)((size - 1) % SWORN_TILE_WIDTH) + 1;
    if (c_record_bundle_path(size, last, b->rel, sizeof(b->rel)) < 0 ||
        (size_t)snprintf(b->path, sizeof(b->path), "%s/%s", dir, b->rel) >= sizeof(b->path) ||
        sworn_file_read(b->path, SWORN_TILE_BUNDLE_MAX, &b->bytes, &b->len) < 0)
        return -1;
    if (sworn_tile_bundle_parse((uint8_t *)b->bytes, b->len, b->width, b->e) < 0) {
        free(b->bytes);
        b->bytes = NULL;
        return -1;
    }
    return 0;
}

/* Verify the tampered copy: a pass of the probe is a rejection (exit 1) by sworn-verify. */
static void judge(struct c_ctx *ctx, struct c_result *r, const char *copy, const char *state,
                  const char *what, const char *want_check, const char *want_reason)
{
    struct c_verify v;

    if (c_verify_run(ctx->dep, ctx->dep->trust_policy, copy, state, &v) < 0) {
        c_result_set(r, C_ERROR, "sworn-verify did not run: %s", sworn_err_msg());
        return;
    }
    verify_evidence(r, &v);
    if (v.status == 0 || strcmp(v.result, "pass") == 0)
        c_result_set(r, C_FAIL, "sworn-verify ACCEPTS a copy with %s", what);
    else if (v.status == 1 && want_check != NULL && !c_verify_failed(&v, want_check, want_reason))
        c_result_set(r, C_PASS, "sworn-verify rejects a copy with %s (exit 1, %s; not as %s: %s)",
                     what, v.nfailed > 0 ? v.failed[0] : v.result, want_check, want_reason);
    else
        c_result_set(r, C_PASS, "sworn-verify rejects a copy with %s (exit %d, %s)", what, v.status,
                     v.nfailed > 0 ? v.failed[0] : v.result);
}

void c_probe_tamper_entry(struct c_ctx *ctx, struct c_result *r)
{
    char copy[1200];
    struct sworn_checkpoint cp;
    struct bundle *b = calloc(1, sizeof(*b));
    size_t off;

    if (b == NULL || fresh_copy(ctx, r, "entry-changed", copy, sizeof(copy), &cp) < 0) {
        if (b == NULL)
            c_result_set(r, C_ERROR, "out of memory");
        free(b);
        return;
    }
    if (newest_bundle(copy, cp.size, b) < 0 || b->e[0].len == 0)
        goto unreadable;
    /* One bit of a byte in the middle of the bundle's first entry: the entry's bytes change,
     * its length and the bundle's shape do not. */
    off = (size_t)(b->e[0].data - (uint8_t *)b->bytes) + b->e[0].len / 2;
    b->bytes[off] ^= 0x01;
    if (sworn_file_replace(b->path, b->bytes, b->len, 0644) < 0)
        goto unreadable;
    c_evidence(r, "entry %llu (%s), byte %zu of the bundle: one bit flipped",
               (unsigned long long)((cp.size - 1) / SWORN_TILE_WIDTH * SWORN_TILE_WIDTH), b->rel,
               off);
    free(b->bytes);
    free(b);
    judge(ctx, r, copy, NULL, "one entry changed", "tiles", "entry-altered");
    return;
unreadable:
    free(b->bytes);
    free(b);
    c_result_set(r, C_ERROR, "the copy's newest entry bundle could not be changed: %s",
                 sworn_err_msg());
}

void c_probe_tamper_delete(struct c_ctx *ctx, struct c_result *r)
{
    char copy[1200];
    struct sworn_checkpoint cp;
    struct bundle *b = calloc(1, sizeof(*b));
    size_t cut;

    if (b == NULL || fresh_copy(ctx, r, "entry-deleted", copy, sizeof(copy), &cp) < 0) {
        if (b == NULL)
            c_result_set(r, C_ERROR, "out of memory");
        free(b);
        return;
    }
    if (newest_bundle(copy, cp.size, b) < 0)
        goto unreadable;
    /* The bundle's last entry, its length prefix with it: the bundle is shortened by one. */
    cut = (size_t)(b->e[b->width - 1].data - (uint8_t *)b->bytes) - 2;
    if (sworn_file_replace(b->path, b->bytes, cut, 0644) < 0)
        goto unreadable;
    c_evidence(r, "entry %llu deleted from %s (%zu of %zu bytes kept)",
               (unsigned long long)(cp.size - 1), b->rel, cut, b->len);
    free(b->bytes);
    free(b);
    judge(ctx, r, copy, NULL, "one entry deleted", "entry-bundles", "entry-missing");
    return;
unreadable:
    free(b->bytes);
    free(b);
    c_result_set(r, C_ERROR, "the copy's newest entry bundle could not be shortened: %s",
                 sworn_err_msg());
}

void c_probe_tamper_rollback(struct c_ctx *ctx, struct c_result *r)
{
    char copy[1200], state[1200], older[4096], cpath[4096];
    struct sworn_checkpoint cp;
    uint64_t old_size;
    char *data = NULL;
    size_t len;

    if (fresh_copy(ctx, r, "rollback", copy, sizeof(copy), &cp) < 0)
        return;
    if (c_record_older_checkpoint(copy, cp.size, &old_size) < 0) {
        c_result_set(r, C_ERROR,
                     "the record has no checkpoint older than its newest (size %llu) "
                     "to roll back to",
                     (unsigned long long)cp.size);
        return;
    }
    snprintf(cpath, sizeof(cpath), "%s/checkpoint", copy);
    snprintf(older, sizeof(older), "%s/sworn/checkpoint/%llu", copy, (unsigned long long)old_size);
    /* The auditor's state: the newest checkpoint, as if the last run accepted it. */
    if (c_scratch_path(ctx, "rollback-state", state, sizeof(state)) < 0 ||
        sworn_file_read(cpath, 1u << 20, &data, &len) < 0 ||
        sworn_file_create(state, data, len, 0600) < 0)
        goto unreadable;
    free(data);
    data = NULL;
    if (sworn_file_read(older, 1u << 20, &data, &len) < 0 ||
        sworn_file_replace(cpath, data, len, 0644) < 0)
        goto unreadable;
    free(data);
    c_evidence(r,
               "state: the checkpoint of size %llu; the copy's checkpoint: sworn/checkpoint/%llu",
               (unsigned long long)cp.size, (unsigned long long)old_size);
    judge(ctx, r, copy, state, "its checkpoint rolled back behind the auditor's state", "state",
          "rollback");
    return;
unreadable:
    free(data);
    c_result_set(r, C_ERROR, "the rollback copy could not be made: %s", sworn_err_msg());
}

void c_probe_tamper_signature(struct c_ctx *ctx, struct c_result *r)
{
    char copy[1200], cpath[4096], *data = NULL, *line, *sp, *nl;
    struct sworn_checkpoint cp;
    uint8_t sig[SWORN_NOTE_SIG_MAX + 8];
    char enc[SWORN_BASE64_LEN(sizeof(sig)) + 1];
    size_t len, siglen;
    long elen;

    if (fresh_copy(ctx, r, "signature", copy, sizeof(copy), &cp) < 0)
        return;
    snprintf(cpath, sizeof(cpath), "%s/checkpoint", copy);
    if (sworn_file_read(cpath, 1u << 20, &data, &len) < 0)
        goto unreadable;
    /* The first signature line, "— <name> <base64>\n", after the blank line. */
    line = strstr(data, "\n\n");
    if (line == NULL || (nl = strchr(line + 2, '\n')) == NULL)
        goto malformed;
    line += 2;
    *nl = '\0';
    sp = strrchr(line, ' ');
    if (sp == NULL || sworn_base64_decode(sp + 1, strlen(sp + 1), sig, sizeof(sig), &siglen) < 0 ||
        siglen < 6)
        goto malformed;
    /* The key id's 4 bytes stay; the last byte of the signature changes. */
    sig[siglen - 1] ^= 0x01;
    elen = sworn_base64_encode(sig, siglen, enc, sizeof(enc));
    if (elen < 0 || (size_t)elen != strlen(sp + 1))
        goto malformed;
    memcpy(sp + 1, enc, (size_t)elen);
    *nl = '\n';
    if (sworn_file_replace(cpath, data, len, 0644) < 0)
        goto unreadable;
    free(data);
    c_evidence(r, "the first signature line of checkpoint (size %llu): its last byte altered",
               (unsigned long long)cp.size);
    judge(ctx, r, copy, NULL, "its checkpoint's signature altered", NULL, NULL);
    return;
malformed:
    free(data);
    c_result_set(r, C_ERROR, "the copy's checkpoint has no signature line to alter");
    return;
unreadable:
    free(data);
    c_result_set(r, C_ERROR, "the copy's checkpoint could not be altered: %s", sworn_err_msg());
}

/* --- T5: sufficiency --------------------------------------------------------------------------
 */

struct suff {
    uint64_t entries, decisions, allow, deny, escalate, no_context, incomplete;
    uint64_t delegated, delegated_verified; /* decisions with an RFC 8693 chain, and verified */
    uint64_t first_index;
    const char *first_field;
};

/* The first field a decision entry lacks, or NULL. Context may be absent on the wire
 * (sworn.proto: a ws.upgrade without a body), so it is counted, not required. */
static const char *missing_field(const Sworn__V1__DecisionRecord *d)
{
    const Sworn__V1__AuthorizationRequest *q = d->request;

    if (q == NULL)
        return "request";
    if (q->principal == NULL || q->principal->id == NULL || q->principal->id[0] == '\0')
        return "principal";
    if (q->operation == NULL || q->operation[0] == '\0')
        return "operation";
    if (q->resource == NULL)
        return "resource";
    if (d->policy_digest.len != 32)
        return "policy digest";
    if (d->effect == SWORN__V1__EFFECT__EFFECT_UNSPECIFIED)
        return "decision";
    if (d->reason == NULL || d->reason[0] == '\0')
        return "reason";
    if (d->time_unix_ms == 0)
        return "time";
    /* The delegation chain, when the request carried one: who delegated to whom. */
    if (q->delegation != NULL) {
        if (q->delegation->subject == NULL || q->delegation->subject[0] == '\0')
            return "delegation subject";
        for (size_t i = 0; i < q->delegation->n_actors; i++)
            if (q->delegation->actors[i] == NULL || q->delegation->actors[i]->subject == NULL ||
                q->delegation->actors[i]->subject[0] == '\0')
                return "delegation actor";
    }
    return NULL;
}

static void suff_entry(struct suff *s, uint64_t index, const uint8_t *p, size_t n)
{
    Sworn__V1__Entry *e = sworn__v1__entry__unpack(NULL, n, p);
    const char *miss;

    s->entries++;
    if (e == NULL || e->kind_case != SWORN__V1__ENTRY__KIND_DECISION) {
        if (e == NULL && s->first_field == NULL) {
            s->first_field = "(not a sworn.v1.Entry)";
            s->first_index = index;
            s->incomplete++;
        }
        sworn__v1__entry__free_unpacked(e, NULL);
        return;
    }
    s->decisions++;
    switch (e->decision->effect) {
    case SWORN__V1__EFFECT__EFFECT_ALLOW:
        s->allow++;
        break;
    case SWORN__V1__EFFECT__EFFECT_DENY:
        s->deny++;
        break;
    case SWORN__V1__EFFECT__EFFECT_ESCALATE:
        s->escalate++;
        break;
    default:
        break;
    }
    if (e->decision->request != NULL && e->decision->request->context == NULL)
        s->no_context++;
    if (e->decision->request != NULL && e->decision->request->delegation != NULL) {
        const Sworn__V1__DelegationVerification *v = e->decision->request->delegation->verification;

        s->delegated++;
        s->delegated_verified +=
            v != NULL && v->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;
    }
    miss = missing_field(e->decision);
    if (miss != NULL) {
        s->incomplete++;
        if (s->first_field == NULL) {
            s->first_field = miss;
            s->first_index = index;
        }
    }
    sworn__v1__entry__free_unpacked(e, NULL);
}

void c_probe_sufficiency(struct c_ctx *ctx, struct c_result *r)
{
    struct sworn_checkpoint cp;
    struct suff s = {0};

    if (c_record_checkpoint(ctx->dep->record, &cp) < 0) {
        c_result_set(r, C_ERROR, "the record's checkpoint: %s", sworn_err_msg());
        return;
    }
    for (uint64_t b = 0; b * SWORN_TILE_WIDTH < cp.size; b++) {
        struct sworn_tile_entry e[SWORN_TILE_WIDTH];
        uint8_t *data;
        unsigned n;
        if (c_record_bundle(ctx->dep->record, cp.size, b, &data, e, &n) < 0) {
            c_result_set(r, C_ERROR, "entry bundle %llu: %s", (unsigned long long)b,
                         sworn_err_msg());
            return;
        }
        for (unsigned i = 0; i < n; i++)
            suff_entry(&s, b * SWORN_TILE_WIDTH + i, e[i].data, e[i].len);
        free(data);
    }
    c_evidence(r,
               "%llu entries (checkpoint size %llu), %llu decisions: %llu allow, %llu deny, "
               "%llu escalate",
               (unsigned long long)s.entries, (unsigned long long)cp.size,
               (unsigned long long)s.decisions, (unsigned long long)s.allow,
               (unsigned long long)s.deny, (unsigned long long)s.escalate);
    c_evidence(r, "%llu decisions without a context (allowed by the wire)",
               (unsigned long long)s.no_context);
    c_evidence(r,
               "%llu decisions with a delegation chain (RFC 8693), %llu of them with the token's "
               "signature verified by the proxy",
               (unsigned long long)s.delegated, (unsigned long long)s.delegated_verified);
    if (s.incomplete > 0) {
        c_evidence(r, "first incomplete: entry %llu lacks %s", (unsigned long long)s.first_index,
                   s.first_field);
        c_result_set(r, C_FAIL, "%llu entries are incomplete; the first, entry %llu, lacks %s",
                     (unsigned long long)s.incomplete, (unsigned long long)s.first_index,
                     s.first_field);
    } else if (s.decisions == 0) {
        c_result_set(r, C_ERROR, "the record holds no decision to check");
    } else {
        c_result_set(r, C_PASS,
                     "all %llu decisions hold principal, operation, resource, policy digest, "
                     "decision, reason and time",
                     (unsigned long long)s.decisions);
    }
}
