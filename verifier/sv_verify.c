/*
 * sv_verify.c -- see sv_verify.h and docs/verifier.md.
 */
#include "sv_verify.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "quote.h"
#include "sv_entry.h"
#include "sv_ids.h"
#include "sv_keyring.h"
#include "sv_merkle.h"
#include "sv_receipt.h"
#include "sv_stats.h"
#include "sv_tiles.h"

#define CHECKPOINTS_MAX (1u << 22)
#define LEVELS 8 /* 256^8 = 2^64 leaves */

static const char *const check_names[SV_CHECK_COUNT] = {
    "checkpoint-signatures",
    "witness-quorum",
    "entry-bundles",
    "tiles",
    "roots",
    "state",
    "quotes",
    "entries",
    "policy-digests",
    "receipts",
    "keys",
    "measured-start",
    "separation",
    "escalations",
    "token-exchanges",
    "time-marks",
    "sandboxes",
    "token-usage",
    "reports",
};

const char *sv_check_name(enum sv_check_id id)
{
    return id < SV_CHECK_COUNT ? check_names[id] : "?";
}

/* Copy a string, cut to fit (messages and items are bounded in the report). */
static void copy_cut(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void sv_report_fail(struct sv_report *r, enum sv_check_id id, const char *item, const char *code,
                    const char *why)
{
    struct sv_check *c = &r->checks[id];

    if (c->status != SV_FAIL) {
        c->status = SV_FAIL;
        copy_cut(c->item, sizeof(c->item), item);
        copy_cut(c->code, sizeof(c->code), code);
        copy_cut(c->why, sizeof(c->why), why);
    }
    c->failures++;
    if (r->stats != NULL)
        sv_stats_failure(r->stats, (int)id, item, code, why); /* every failure, for the page */
}

static void pass(struct sv_report *r, enum sv_check_id id)
{
    if (r->checks[id].status == SV_SKIP)
        r->checks[id].status = SV_PASS;
    r->checks[id].count++;
}

int sv_report_failed(const struct sv_report *r)
{
    for (int i = 0; i < SV_CHECK_COUNT; i++)
        if (r->checks[i].status == SV_FAIL)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Checkpoints */

struct cp_rec {
    uint64_t size;
    uint8_t root[SV_HASH];
    uint8_t text_hash[SV_HASH]; /* SHA-256 of the note text: a quote's qualifying data */
    uint64_t signers;           /* bit i: policy log key i signed it */
    uint64_t time_ms;           /* the newest entry time in its tree (sworn entries) */
    int newest;                 /* read from `checkpoint` */
};

int sv_verify_checkpoint_note(const struct sv_policy *p, const char *note, size_t len,
                              enum sv_quorum_rule rule, int *below_quorum, struct sv_checkpoint *cp,
                              uint64_t *signers, enum sv_check_id *failed, char *code, char *why)
{
    struct sv_note n;
    struct sv_note_result res;
    int witness_ok[SV_POLICY_KEYS] = {0}, logs = 0, met;
    char w[SV_WHY];

    *failed = SV_CHECK_CHECKPOINTS;
    if (below_quorum != NULL)
        *below_quorum = 0;
    if (sv_note_parse(note, len, &n, w) != 0) {
        snprintf(code, 32, "note-malformed");
        return sv_fail(why, "%s", w);
    }
    if (sv_checkpoint_parse(n.text, n.text_len, cp, w) != 0) {
        snprintf(code, 32, "checkpoint-malformed");
        return sv_fail(why, "%s", w);
    }
    if (strcmp(cp->origin, p->origin) != 0) {
        snprintf(code, 32, "origin-mismatch");
        return sv_fail(why, "origin '%s' is not the policy's '%s'", cp->origin, p->origin);
    }
    if (sv_note_verify(&n, p->logs, p->nlogs, &res, w) != 0) {
        snprintf(code, 32, "bad-signature");
        return sv_fail(why, "%s", w);
    }
    if (signers != NULL)
        *signers = 0;
    for (size_t i = 0; i < p->nlogs; i++) {
        logs += res.verified[i] > 0;
        if (res.verified[i] > 0 && signers != NULL)
            *signers |= (uint64_t)1 << i;
    }
    if (logs == 0) {
        snprintf(code, 32, "no-log-signature");
        return sv_fail(why, "no valid signature by a log key of the policy");
    }
    if (p->nwitnesses > 0) {
        if (sv_note_verify(&n, p->witnesses, p->nwitnesses, &res, w) != 0) {
            *failed = SV_CHECK_WITNESSES;
            snprintf(code, 32, "bad-cosignature");
            return sv_fail(why, "%s", w);
        }
        for (size_t i = 0; i < p->nwitnesses; i++)
            witness_ok[i] = res.verified[i] > 0;
        met = sv_policy_quorum_met(p, witness_ok);
        if (!met && rule == SV_QUORUM_REQUIRED) {
            *failed = SV_CHECK_WITNESSES;
            snprintf(code, 32, "quorum-not-met");
            return sv_fail(why, "the witness cosignatures do not meet the policy's quorum");
        }
        /* A history checkpoint below the quorum: its cosignatures verified above, its root is
         * recomputed from the entries, and the newest checkpoint (which must meet the quorum)
         * extends it; one a witness missed while down can never be cosigned later. Counted. */
        if (!met && below_quorum != NULL)
            *below_quorum = 1;
    }
    return 0;
}

/* Check a note and record it; failures go to the report. 0 accepted, -1 refused. rule: the
 * newest checkpoint needs the quorum, a history checkpoint below it is counted (below_quorum). */
static int take_checkpoint(const struct sv_policy *p, struct sv_report *rep, const char *item,
                           const uint8_t *data, size_t len, enum sv_quorum_rule rule,
                           struct cp_rec *out)
{
    struct sv_checkpoint cp;
    struct sv_note n;
    enum sv_check_id failed;
    int below = 0;
    char code[32], why[SV_WHY];

    memset(out, 0, sizeof(*out));
    if (sv_verify_checkpoint_note(p, (const char *)data, len, rule, &below, &cp, &out->signers,
                                  &failed, code, why) != 0) {
        sv_report_fail(rep, failed, item, code, why);
        return -1;
    }
    pass(rep, SV_CHECK_CHECKPOINTS);
    if (p->nwitnesses > 0)
        pass(rep, SV_CHECK_WITNESSES); /* its cosignature lines verified */
    if (below)
        rep->below_quorum++;
    (void)sv_note_parse((const char *)data, len, &n, why);
    out->size = cp.size;
    memcpy(out->root, cp.root, SV_HASH);
    sv_sha256(n.text, n.text_len, out->text_hash);
    return 0;
}

static int cmp_cp(const void *a, const void *b)
{
    const struct cp_rec *x = a, *y = b;

    return x->size < y->size ? -1 : x->size > y->size;
}

static char *join(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *s = malloc(n);

    if (s != NULL)
        snprintf(s, n, "%s/%s", dir, rel);
    return s;
}

/* Every checkpoint of the record: `checkpoint` and sworn/checkpoint/<size>. */
/* Read and verify every checkpoint of a record folder. OUT: the verified ones, and the bytes of
 * the `checkpoint` file when it verified (*newest, free it; NULL otherwise): the note a passing
 * run stores as the state, from memory, never read again. */
static int load_checkpoints(const struct sv_policy *p, struct sv_report *rep, const char *dir,
                            struct cp_rec **out, size_t *nout, uint8_t **newest, size_t *newest_len)
{
    struct cp_rec *cps = NULL;
    size_t n = 0, cap = 0;
    char *path = join(dir, "checkpoint"), *hdir;
    uint8_t *data;
    size_t len;
    char why[SV_WHY];
    DIR *d;
    struct dirent *e;

    if (path == NULL)
        return -1;
    if (sv_read_file(path, SV_NOTE_MAX, &data, &len, NULL, why) != 0) {
        free(path);
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "%s", why);
        return -1;
    }
    free(path);
    cap = 16;
    cps = calloc(cap, sizeof(*cps));
    if (cps == NULL) {
        free(data);
        return -1;
    }
    *newest = NULL;
    *newest_len = 0;
    if (take_checkpoint(p, rep, "checkpoint", data, len, SV_QUORUM_REQUIRED, &cps[0]) == 0) {
        cps[0].newest = 1;
        n = 1;
        *newest = data;
        *newest_len = len;
    } else {
        free(data);
    }
    hdir = join(dir, "sworn/checkpoint");
    d = hdir == NULL ? NULL : opendir(hdir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        uint64_t size;
        char item[300];
        struct cp_rec rec;
        char *f;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(item, sizeof(item), "sworn/checkpoint/%.200s", e->d_name);
        if (strstr(e->d_name, ".tmp.") != NULL)
            continue; /* an interrupted export's temporary file */
        if (sv_parse_u64(e->d_name, strlen(e->d_name), &size) != 0) {
            sv_report_fail(rep, SV_CHECK_CHECKPOINTS, item, "bad-name",
                           "not a canonical decimal tree size");
            continue;
        }
        f = join(hdir, e->d_name);
        if (f == NULL || sv_read_file(f, SV_NOTE_MAX, &data, &len, NULL, why) != 0) {
            sv_report_fail(rep, SV_CHECK_CHECKPOINTS, item, "unreadable", why);
            free(f);
            continue;
        }
        free(f);
        if (take_checkpoint(p, rep, item, data, len, SV_QUORUM_COUNTED, &rec) == 0) {
            if (rec.size != size) {
                snprintf(why, sizeof(why), "holds a checkpoint of size %llu",
                         (unsigned long long)rec.size);
                sv_report_fail(rep, SV_CHECK_CHECKPOINTS, item, "size-mismatch", why);
            } else if (n >= CHECKPOINTS_MAX) {
                sv_report_fail(rep, SV_CHECK_CHECKPOINTS, item, "too-many",
                               "more checkpoints than this verifier holds");
            } else {
                if (n == cap) {
                    struct cp_rec *nc = realloc(cps, 2 * cap * sizeof(*cps));

                    if (nc == NULL) {
                        free(data);
                        break;
                    }
                    cps = nc;
                    cap *= 2;
                }
                cps[n++] = rec;
            }
        }
        free(data);
    }
    if (d != NULL)
        closedir(d);
    free(hdir);
    qsort(cps, n, sizeof(*cps), cmp_cp);
    *out = cps;
    *nout = n;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Streaming the entries */

/* One Startup entry, and what the quotes of the checkpoints it is in force for showed. */
struct start_rec {
    uint64_t index;
    int measured; /* both PCR values present */
    uint8_t before[SV_HASH], after[SV_HASH];
    int have_quote;                   /* a verified quote with this start in force */
    uint32_t first_reset, last_reset; /* resetCount of the first and last such quote */
};

/* One Decision entry with effect ESCALATE, for the resolutions that must name it. */
struct esc_rec {
    uint64_t index;
    uint8_t leaf[SV_HASH];
    char request_id[SV_ID_MAX + 1];
    int resolved; /* an EscalationResolved named it */
    /* the sandbox its request names (sandbox_start_index, 0: none) and who it says it is */
    uint64_t sandbox_start_index;
    uint8_t sandbox_who[SV_HASH];
    struct sv_http_req *http; /* what an approval's http-message receipt covers; NULL: none */
};

/* A SandboxStarted entry (check `sandboxes`), and the end that named it, if any. */
struct sbx_rec {
    uint64_t index;
    uint8_t id[SV_SANDBOX_ID];
    uint8_t who[SV_HASH];       /* SHA-256(principal NUL name) */
    uint8_t operator_[SV_HASH]; /* SHA-256(operator) */
    int ended;
    uint64_t end_index;
};

/* One receipt signature to check; a bundle's are checked on several threads. */
struct rjob {
    uint64_t index;
    uint8_t leaf[SV_HASH];
    const uint8_t *r;
    size_t rlen;
    uint64_t time_ms;
    struct sv_http_req http; /* the request an http-message receipt covers (present 0: none) */
    int http_unseen;         /* an approval whose escalate entry is before a bundle's range */
    int unchecked;           /* so its http-message receipt could not be checked */
    int rc;
    char code[32];
    char why[SV_WHY];
};

/* An allow that released a credential: its index and H(request_id || 0x00 || credential_id). */
struct cred_allow {
    uint64_t index;
    uint8_t key[SV_HASH];
    int used; /* an exchange named it */
};

/* token-usage: an ALLOW of model.call, what a UsageRecorded entry must repeat of it. */
struct model_allow {
    uint64_t index;
    uint8_t leaf[SV_HASH];
    uint8_t key[SV_HASH]; /* SHA-256(request id NUL canonical model) */
    uint64_t ceiling;
    int used; /* a usage entry named it */
};

/* A credential a CredentialsMinted entry replaced: SHA-256 of its id, the time of the newest
 * mint that replaced it, and the time of a later mint that minted the same id again (decisiond
 * names a new credential with the lowest free <root>.oauth.<n>, so a replaced id comes back). */
struct replaced_rec {
    uint8_t id[SV_HASH];
    uint64_t replaced_ms;
    uint64_t reminted_ms;
    int reminted;
};

struct stream {
    const struct sv_verify_opts *o;
    struct rjob *jobs; /* SV_TILE_WIDTH of them */
    unsigned njobs;
    struct sv_report *rep;
    struct sv_range range;
    uint8_t (*level)[SV_TILE_WIDTH][SV_HASH]; /* LEVELS tiles being filled */
    unsigned fill[LEVELS];
    uint64_t tile_index[LEVELS];
    /* the sizes whose root must be checked, ascending */
    struct cp_rec *cps;
    size_t ncps, next_cp;
    int use_state; /* a saved state of at most the record's size is to be checked */
    uint64_t state_size;
    uint8_t state_root[SV_HASH];
    int state_checked;
    /* policy digests of the PolicyLoaded entries without error since the newest Startup entry
     * (all of them while no Startup entry was seen): the policies decisions may name */
    uint8_t (*digests)[SV_HASH];
    size_t ndigests, cap_digests;
    /* The policy in force (check_policy_in_force): the newest successful load of this start
     * (cur), the one it replaced (prev), and the earliest time of a decision after that load
     * naming cur (new_min_ms, when have_new). */
    int have_cur, have_prev, have_new;
    uint8_t cur_policy[SV_HASH], prev_policy[SV_HASH];
    uint64_t new_min_ms;
    int have_old; /* a decision after that load named prev; old_max_ms the latest one's time */
    uint64_t old_max_ms, old_max_index, new_min_index;
    /* The request ids of this start as decisiond remembers them (sv_ids.h); NULL out of memory */
    struct sv_ids *ids;
    struct sv_keyring_state *keys;
    struct sv_receipt_keys *rkeys;
    uint64_t last_time_ms;
    uint64_t mark_floor_ms;    /* a bundle: the largest high water of the marks it shows */
    uint64_t mark_floor_index; /* the mark that set it */
    int have_mark_floor;
    int partial;                 /* a bundle file: entries before the range are not seen */
    uint64_t unchecked_receipts; /* approvals' http-message receipts of requests before it */
    uint64_t unseen_policies;    /* decisions naming a policy loaded before the range */
    int opens_with_policy;       /* a bundle whose first entry is a PolicyLoaded entry */
    /* the index of every Startup entry seen, ascending (reports name one) */
    uint64_t *startup_at;
    size_t nstartup_at, cap_startup_at;
    /* Startup entries, in log order (policy measured-start record) */
    struct start_rec *starts;
    size_t nstarts, cap_starts;
    /* separation: starts accepted only because the policy says so */
    uint64_t dev_accepted, unrecorded_accepted;
    /* escalations: the escalate entries seen, in index order; the first index streamed (a
     * bundle's start), and resolutions naming an entry before it (not seen, so not checked) */
    struct esc_rec *escs;
    size_t nescs, cap_escs;
    uint64_t first_index;
    uint64_t unseen_escalations;
    /* The Startup entry just read, whose own PolicyLoaded entry must come next with the policy
     * digest it measured (check_start_policy). */
    int start_pending;
    uint64_t start_index;
    int start_has_policy;
    uint8_t start_policy[SV_HASH];
    /* token-exchanges: the allows that released a credential, in log order */
    struct cred_allow *callows;
    size_t ncallows, cap_callows;
    int have_start; /* a Startup entry was seen; the newest is last_start */
    uint64_t last_start;
    uint64_t unseen_allows; /* exchanges naming an allow before the range */
    /* token-usage: the allows of model.call, in log order; usage entries naming one before a
     * bundle's range (not seen, so not checked) */
    struct model_allow *mallows;
    size_t nmallows, cap_mallows;
    uint64_t unseen_usage;
    /* token-exchanges: the credentials replaced by a mint, sorted by id digest */
    struct replaced_rec *repl;
    size_t nrepl, cap_repl;
    /* In a bundle, the resolutions and exchanges naming an entry before the range (the entry
     * named, then the naming entry's index): two naming one entry are caught at the end. */
    struct unseen_ref *unseen_res, *unseen_ex;
    size_t nunseen_res, cap_unseen_res, nunseen_ex, cap_unseen_ex;
    /* sandboxes: the SandboxStarted entries seen, in index order; the ends and requests that
     * name a start before a bundle's range (not seen, so not checked) */
    struct sbx_rec *sbxs;
    size_t nsbxs, cap_sbxs;
    uint64_t unseen_sandboxes;
    /* The first WitnessEvent of kind CONSISTENCY (rep->witness_alarms counts them): its witness
     * (over 67 bytes: its first 64 and "..."), the checkpoint size submitted and its entry's
     * index. */
    char alarm_witness[68];
    uint64_t alarm_size, alarm_index;
};

struct unseen_ref {
    uint64_t named, at;
};

/* Remember that entry at names entry named, which lies before the bundle's range. */
static void unseen_add(struct unseen_ref **v, size_t *n, size_t *cap, uint64_t named, uint64_t at)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        struct unseen_ref *nv = realloc(*v, nc * sizeof(*nv));

        if (nv == NULL)
            return; /* then a repeat may go unseen: the note still counts them */
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (struct unseen_ref){named, at};
}

static int unseen_cmp(const void *a, const void *b)
{
    const struct unseen_ref *x = a, *y = b;

    if (x->named != y->named)
        return x->named < y->named ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Two entries of the range naming one entry before it: the later fails with code. */
static void unseen_repeats(struct stream *s, int check, struct unseen_ref *v, size_t n,
                           const char *code, const char *what)
{
    char item[64], why[SV_WHY];

    if (n < 2)
        return;
    qsort(v, n, sizeof(*v), unseen_cmp);
    for (size_t i = 1; i < n; i++) {
        if (v[i].named != v[i - 1].named)
            continue;
        snprintf(item, sizeof(item), "entry %llu", (unsigned long long)v[i].at);
        snprintf(why, sizeof(why), "entry %llu names entry %llu, as entry %llu did: %s",
                 (unsigned long long)v[i].at, (unsigned long long)v[i].named,
                 (unsigned long long)v[i - 1].at, what);
        sv_report_fail(s->rep, check, item, code, why);
    }
}

/* Remember Startup entry index's measured policy (the file with role 4) for the next entry. */
static void note_start(struct stream *s, uint64_t index, const uint8_t *e, size_t len)
{
    struct sv_startup st;
    char why[SV_WHY];

    s->start_pending = 1;
    s->start_index = index;
    s->start_has_policy = 0;
    if (sv_entry_startup(e, len, &st, why) == 0)
        for (size_t i = 0; i < st.nfiles; i++)
            if (st.role[i] == 4) {
                memcpy(s->start_policy, st.sha256[i], SV_HASH);
                s->start_has_policy = 1;
            }
    sv_startup_free(&st);
}

/*
 * A start's own PolicyLoaded entry: decisiond appends it right after its Startup entry, before
 * it serves anything, with the digest of the policy bytes it parsed, and the Startup entry
 * measured the same digest (role 4, policy) into PCR 23. A record where they differ says one
 * policy was measured and another decided (finding 1 of the control-plane review): it fails. A
 * Startup entry followed by another one is a start that ended before its policy entry. The entry
 * at index follows the pending Startup entry; info is what sv_entry_check read of it.
 */
static void check_start_policy(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];

    s->start_pending = 0;
    if (info->kind == SV_ENTRY_STARTUP)
        return;
    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (info->kind != SV_ENTRY_POLICY_LOADED) {
        snprintf(why, sizeof(why),
                 "the start at entry %llu is followed by no PolicyLoaded entry: the policy it "
                 "decided with is not shown",
                 (unsigned long long)s->start_index);
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "start-policy-missing", why);
    } else if (!s->start_has_policy) {
        snprintf(why, sizeof(why),
                 "the start at entry %llu records no measured file with the policy role: the "
                 "policy in force cannot be matched to the one measured",
                 (unsigned long long)s->start_index);
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "start-policy-unrecorded", why);
    } else if (info->refused || memcmp(info->digest, s->start_policy, SV_HASH) != 0) {
        snprintf(why, sizeof(why),
                 "the policy loaded at start is not the policy the start at entry %llu measured "
                 "into PCR 23",
                 (unsigned long long)s->start_index);
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "start-policy-mismatch", why);
    } else {
        pass(s->rep, SV_CHECK_POLICY);
    }
}

static int file_approved(const struct sv_policy *p, const uint8_t d[SV_HASH], const char *path)
{
    for (size_t i = 0; i < p->nmeasured_files; i++)
        if (memcmp(p->measured_files[i].sha256, d, SV_HASH) == 0 &&
            (p->measured_files[i].path == NULL || strcmp(p->measured_files[i].path, path) == 0))
            return 1;
    return 0;
}

/* A digest some measured-file line approves, under any path. */
static int digest_approved(const struct sv_policy *p, const uint8_t d[SV_HASH])
{
    for (size_t i = 0; i < p->nmeasured_files; i++)
        if (memcmp(p->measured_files[i].sha256, d, SV_HASH) == 0)
            return 1;
    return 0;
}

/*
 * A Startup entry under `measured-start record`: it must carry both PCR values, its files must
 * replay from pcr23_before to pcr23 (PCR_new = SHA-256(PCR_old || digest), in order), and every
 * file digest must be one the auditor approved. It is kept for the quotes (the PCR 23 they must
 * show) and for the chain check after them.
 */
static void check_startup(struct stream *s, uint64_t index, const uint8_t *e, size_t len)
{
    const struct sv_policy *p = s->o->policy;
    struct sv_startup st;
    struct start_rec rec;
    char item[96], why[SV_WHY];
    uint8_t pcr[SV_HASH], cat[2 * SV_HASH];
    int ok = 1;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (sv_entry_startup(e, len, &st, why) != 0) {
        sv_startup_free(&st);
        sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "internal", why);
        return;
    }
    memset(&rec, 0, sizeof(rec));
    rec.index = index;
    rec.measured = st.measured;
    if (!st.measured) {
        sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-start-unmeasured",
                       "a start recorded without PCR 23 values: the TPM did not measure it");
        ok = 0;
    } else {
        memcpy(rec.before, st.pcr23_before, SV_HASH);
        memcpy(rec.after, st.pcr23, SV_HASH);
        memcpy(pcr, st.pcr23_before, SV_HASH);
        for (size_t i = 0; i < st.nfiles; i++) {
            memcpy(cat, pcr, SV_HASH);
            memcpy(cat + SV_HASH, st.sha256[i], SV_HASH);
            sv_sha256(cat, sizeof(cat), pcr);
        }
        if (memcmp(pcr, st.pcr23, SV_HASH) != 0) {
            sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-start-replay",
                           "the measured files do not replay from pcr23_before to pcr23");
            ok = 0;
        }
    }
    {
        /* What decisiond measures at every start (decisiond/d_startup.c): its image, the signer
         * program, the configuration and the policy, one file each, then any tpm.measure files.
         * A start that lists fewer measured less than it ran, whatever the files it lists. */
        unsigned count[5] = {0};

        for (size_t i = 0; i < st.nfiles; i++)
            if (st.role[i] >= 1 && st.role[i] <= 4)
                count[st.role[i]]++;
        if (count[1] != 1 || count[2] != 1 || count[3] != 1 || count[4] != 1) {
            snprintf(why, sizeof(why),
                     "the start lists %u image, %u signer, %u configuration and %u policy files "
                     "(MeasuredFile roles 1 to 4): a start measures exactly one of each",
                     count[1], count[2], count[3], count[4]);
            sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-start-incomplete", why);
            ok = 0;
        }
    }
    for (size_t i = 0; i < st.nfiles; i++) {
        char hex[2 * SV_HASH + 1];

        if (file_approved(p, st.sha256[i], st.path[i]))
            continue;
        sv_hex(st.sha256[i], SV_HASH, hex);
        snprintf(item, sizeof(item), "entry %llu file %zu", (unsigned long long)index, i);
        snprintf(why, sizeof(why),
                 "%.200s measured as sha256 %s: no measured-file line approves it", st.path[i],
                 hex);
        sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-file-unknown", why);
        ok = 0;
    }
    sv_startup_free(&st);
    if (ok)
        pass(s->rep, SV_CHECK_MEASURED);
    if (s->nstarts == s->cap_starts) {
        size_t nc = s->cap_starts ? 2 * s->cap_starts : 8;
        struct start_rec *ns = realloc(s->starts, nc * sizeof(*ns));

        if (ns == NULL) {
            sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "internal", "out of memory");
            return;
        }
        s->starts = ns;
        s->cap_starts = nc;
    }
    s->starts[s->nstarts++] = rec;
}

/*
 * After the quotes: consecutive measured starts chain (a start's pcr23_before is the previous
 * start's pcr23), unless the quotes show a TPM Reset between them: the first verified quote with
 * the later start in force has a higher resetCount than the last verified quote before it, and
 * the later start began from PCR 23 = 0 (what a TPM Reset leaves). Anything else means PCR 23 was
 * extended by something that is not in the record.
 */
static void check_start_chain(struct stream *s)
{
    static const uint8_t zero[SV_HASH];
    const struct start_rec *prev = NULL;
    int have_q = 0;
    uint32_t q_reset = 0;

    for (size_t k = 0; k < s->nstarts; k++) {
        const struct start_rec *c = &s->starts[k];
        char item[64], why[SV_WHY];

        if (c->measured && prev != NULL) {
            snprintf(item, sizeof(item), "entry %llu", (unsigned long long)c->index);
            if (memcmp(c->before, prev->after, SV_HASH) == 0) {
                pass(s->rep, SV_CHECK_MEASURED);
            } else if (have_q && c->have_quote && c->first_reset > q_reset &&
                       memcmp(c->before, zero, SV_HASH) == 0) {
                pass(s->rep, SV_CHECK_MEASURED);
                if (s->rep->checks[SV_CHECK_MEASURED].note[0] == '\0')
                    snprintf(s->rep->checks[SV_CHECK_MEASURED].note, sizeof(s->rep->checks[0].note),
                             "the TPM was reset (resetCount %u to %u) before the start at %s",
                             q_reset, c->first_reset, item);
            } else {
                snprintf(why, sizeof(why),
                         "pcr23_before is not the pcr23 of the previous start (entry %llu), nor "
                         "zero after a TPM reset that the quotes show: PCR 23 was extended by "
                         "something the record does not show",
                         (unsigned long long)prev->index);
                sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-start-chain", why);
            }
        }
        if (c->measured)
            prev = c;
        if (c->have_quote) {
            have_q = 1;
            q_reset = c->last_reset;
        }
    }
}

/*
 * A Startup entry's processes (docs/decisiond.md section 9): the signer and the engine ran
 * under distinct uids, neither of them root, and hardening.development was off. A development
 * start fails (development-mode) unless the policy says `development allowed`; then it passes
 * and the report says "development": true. Root or shared uids fail even when the entry says
 * development is off: the record would claim a separation its own uids deny. All three fields
 * unset is what a decisiond older than them recorded (proto3 writes no zero value, so the bytes
 * cannot tell it from a root signer and engine): uids-unrecorded, unless the policy says
 * `uids-unrecorded allowed`.
 */
static void check_separation(struct stream *s, uint64_t index, const uint8_t *e, size_t len)
{
    const struct sv_policy *p = s->o->policy;
    struct sv_startup st;
    char item[64], why[SV_WHY];
    const char *code = NULL;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (sv_entry_startup(e, len, &st, why) != 0) {
        sv_startup_free(&st);
        sv_report_fail(s->rep, SV_CHECK_SEPARATION, item, "internal", why);
        return;
    }
    sv_startup_free(&st);
    if (st.development)
        s->rep->development = 1;
    if (st.development && !p->development_allowed) {
        code = "development-mode";
        snprintf(why, sizeof(why),
                 "decisiond ran with hardening.development: true (engine uid %u, signer uid %u): "
                 "a development deployment is not Accountable",
                 st.engine_uid, st.signer_uid);
    } else if (st.development) {
        s->dev_accepted++;
    } else if (st.engine_uid == 0 && st.signer_uid == 0) {
        if (p->uids_unrecorded_allowed) {
            s->unrecorded_accepted++;
        } else {
            code = "uids-unrecorded";
            snprintf(why, sizeof(why),
                     "the start records no engine or signer uid (a decisiond older than the "
                     "process split, or both as root): the separation is not shown");
        }
    } else if (st.signer_uid == 0) {
        code = "signer-root";
        snprintf(why, sizeof(why), "the signer ran as root (engine uid %u) outside development",
                 st.engine_uid);
    } else if (st.engine_uid == 0) {
        code = "engine-root";
        snprintf(why, sizeof(why), "the engine ran as root (signer uid %u) outside development",
                 st.signer_uid);
    } else if (st.signer_uid == st.engine_uid) {
        code = "shared-uid";
        snprintf(why, sizeof(why),
                 "the signer and the engine ran under one uid (%u) outside development: the "
                 "engine could read the signer's key",
                 st.signer_uid);
    }
    if (code != NULL)
        sv_report_fail(s->rep, SV_CHECK_SEPARATION, item, code, why);
    else
        pass(s->rep, SV_CHECK_SEPARATION);
}

/* The separation check's note: the starts that passed only because the policy accepts them. */
static void separation_note(const struct stream *s)
{
    char *note = s->rep->checks[SV_CHECK_SEPARATION].note;
    size_t cap = sizeof(s->rep->checks[0].note);

    if (s->dev_accepted > 0 && s->unrecorded_accepted > 0)
        snprintf(note, cap,
                 "%llu development start(s) accepted by 'development allowed' (not Accountable) "
                 "and %llu start(s) without uids accepted by 'uids-unrecorded allowed'",
                 (unsigned long long)s->dev_accepted, (unsigned long long)s->unrecorded_accepted);
    else if (s->dev_accepted > 0)
        snprintf(note, cap,
                 "%llu development start(s) accepted by 'development allowed': the signer may "
                 "have run as root or under the engine's uid; not Accountable",
                 (unsigned long long)s->dev_accepted);
    else if (s->unrecorded_accepted > 0)
        snprintf(note, cap,
                 "%llu start(s) without uids accepted by 'uids-unrecorded allowed': the "
                 "separation of signer and engine is not shown",
                 (unsigned long long)s->unrecorded_accepted);
}

static int digest_known(const struct stream *s, const uint8_t d[SV_HASH])
{
    for (size_t i = s->ndigests; i-- > 0;)
        if (memcmp(s->digests[i], d, SV_HASH) == 0)
            return 1;
    return 0;
}

static void digest_add(struct stream *s, const uint8_t d[SV_HASH])
{
    if (digest_known(s, d))
        return;
    if (s->ndigests == s->cap_digests) {
        size_t nc = s->cap_digests ? 2 * s->cap_digests : 16;
        uint8_t(*nd)[SV_HASH] = realloc(s->digests, nc * SV_HASH);

        if (nd == NULL)
            return;
        s->digests = nd;
        s->cap_digests = nc;
    }
    memcpy(s->digests[s->ndigests++], d, SV_HASH);
}

static int cmp_hash(const void *a, const void *b)
{
    return memcmp(a, b, SV_HASH);
}

/* Compare a recomputed tile with the record's file. */
static void check_tile(struct stream *s, unsigned level, uint64_t index, unsigned width)
{
    char rel[128], prefix[16], item[160], why[SV_WHY];
    uint8_t *data;
    size_t len;
    char *path;
    int missing;

    snprintf(prefix, sizeof(prefix), "tile/%u", level);
    sv_tile_path(prefix, index, width, rel, sizeof(rel));
    snprintf(item, sizeof(item), "%s", rel);
    path = join(s->o->record, rel);
    if (path == NULL)
        return;
    if (sv_read_file(path, (size_t)SV_TILE_WIDTH * SV_HASH, &data, &len, &missing, why) != 0) {
        sv_report_fail(s->rep, SV_CHECK_TILES, item, missing ? "tile-missing" : "unreadable", why);
        free(path);
        return;
    }
    free(path);
    if (len != (size_t)width * SV_HASH) {
        snprintf(why, sizeof(why), "%zu bytes, %u hashes expected", len, width);
        sv_report_fail(s->rep, SV_CHECK_TILES, item, "tile-size", why);
    } else if (memcmp(data, s->level[level], len) != 0) {
        unsigned i = 0, ndiff = 0;
        const char *code = "tile-mismatch";

        while (i < width && memcmp(data + (size_t)i * SV_HASH, s->level[level][i], SV_HASH) == 0)
            i++;
        for (unsigned j = i; j < width; j++)
            ndiff += memcmp(data + (size_t)j * SV_HASH, s->level[level][j], SV_HASH) != 0;
        if (level == 0) {
            /* Name what happened to the entries: the same leaves in another order (swapped or
             * reordered entries), or entries whose bytes changed. */
            uint8_t(*a)[SV_HASH] = malloc(len), (*b)[SV_HASH] = malloc(len);

            if (a != NULL && b != NULL) {
                memcpy(a, data, len);
                memcpy(b, s->level[0], len);
                qsort(a, width, SV_HASH, cmp_hash);
                qsort(b, width, SV_HASH, cmp_hash);
                code = memcmp(a, b, len) == 0 ? "entries-reordered" : "entry-altered";
            }
            free(a);
            free(b);
            snprintf(item, sizeof(item), "entry %llu (%s)",
                     (unsigned long long)(index * SV_TILE_WIDTH + i), rel);
            snprintf(why, sizeof(why),
                     "the leaf hash of entry %llu differs from the record's tile/0 (%u leaf "
                     "hash(es) of the tile differ)%s",
                     (unsigned long long)(index * SV_TILE_WIDTH + i), ndiff,
                     strcmp(code, "entries-reordered") == 0 ? ": the same entries in another order"
                                                            : "");
        } else {
            snprintf(why, sizeof(why),
                     "hash %u of the tile differs from the one recomputed from the entries", i);
        }
        sv_report_fail(s->rep, SV_CHECK_TILES, item, code, why);
    } else {
        pass(s->rep, SV_CHECK_TILES);
    }
    free(data);
}

/* A hash at level L enters its tile; a full tile is checked and its root moves up. */
static void push_level(struct stream *s, unsigned level, const uint8_t h[SV_HASH])
{
    uint8_t root[SV_HASH];

    if (level >= LEVELS)
        return;
    memcpy(s->level[level][s->fill[level]++], h, SV_HASH);
    if (s->fill[level] < SV_TILE_WIDTH)
        return;
    check_tile(s, level, s->tile_index[level], SV_TILE_WIDTH);
    sv_mth((const uint8_t(*)[SV_HASH])s->level[level], SV_TILE_WIDTH, root);
    s->fill[level] = 0;
    s->tile_index[level]++;
    push_level(s, level + 1, root);
}

/* After a leaf: check the roots due at this size. */
static void check_roots(struct stream *s)
{
    uint64_t size = s->range.size;
    uint8_t root[SV_HASH];
    int have = 0;

    while (s->next_cp < s->ncps && s->cps[s->next_cp].size == size) {
        struct cp_rec *c = &s->cps[s->next_cp++];
        char item[64];

        int first = !have; /* `checkpoint` and its sworn/checkpoint copy: one marker */

        c->time_ms = s->last_time_ms;
        if (!have) {
            sv_range_root(&s->range, root);
            have = 1;
        }
        snprintf(item, sizeof(item), "checkpoint %llu", (unsigned long long)size);
        if (memcmp(root, c->root, SV_HASH) != 0)
            sv_report_fail(s->rep, SV_CHECK_ROOTS, item, "root-mismatch",
                           "the entries do not hash to this signed checkpoint's root");
        else
            pass(s->rep, SV_CHECK_ROOTS);
        if (first && s->rep->stats != NULL)
            sv_stats_mark(s->rep->stats, SV_MARK_CHECKPOINT, size, c->time_ms,
                          memcmp(root, c->root, SV_HASH) == 0);
    }
    if (s->use_state && s->state_size == size && !s->state_checked) {
        char item[64];

        if (!have)
            sv_range_root(&s->range, root);
        s->state_checked = 1;
        snprintf(item, sizeof(item), "state (size %llu)", (unsigned long long)size);
        if (memcmp(root, s->state_root, SV_HASH) != 0)
            sv_report_fail(s->rep, SV_CHECK_STATE, item, "fork",
                           "the record's tree at the saved size has another root than the "
                           "checkpoint accepted before: the log forked");
        else
            pass(s->rep, SV_CHECK_STATE);
    }
}

/* An escalate entry at index (streamed in index order, so escs stays sorted). */
static void escalate_add(struct stream *s, uint64_t index, const uint8_t leaf[SV_HASH],
                         const struct sv_entry_info *info)
{
    struct esc_rec *r;

    if (s->nescs == s->cap_escs) {
        size_t nc = s->cap_escs ? 2 * s->cap_escs : 64;
        struct esc_rec *n = realloc(s->escs, nc * sizeof(*n));

        if (n == NULL) {
            char item[64];

            snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
            sv_report_fail(s->rep, SV_CHECK_ESCALATIONS, item, "internal", "out of memory");
            return;
        }
        s->escs = n;
        s->cap_escs = nc;
    }
    r = &s->escs[s->nescs++];
    r->index = index;
    memcpy(r->leaf, leaf, SV_HASH);
    snprintf(r->request_id, sizeof(r->request_id), "%s", info->request_id);
    r->resolved = 0;
    r->sandbox_start_index = info->sandbox_start_index;
    memcpy(r->sandbox_who, info->sandbox_who, SV_HASH);
    r->http = NULL;
    if (info->http.present && (r->http = malloc(sizeof(*r->http))) != NULL)
        memcpy(r->http, &info->http, sizeof(*r->http));
    else if (info->http.present)
        sv_report_fail(s->rep, SV_CHECK_RECEIPTS, "escalations", "internal", "out of memory");
}

static struct esc_rec *escalate_at(struct stream *s, uint64_t index)
{
    size_t lo = 0, hi = s->nescs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->escs[mid].index == index)
            return &s->escs[mid];
        if (s->escs[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The request an approval's http-message receipt covers: its escalate entry's (NULL: none, or
 * the link is broken, which check_resolution reports); *unseen when that entry lies before a
 * bundle's range. */
static const struct sv_http_req *approval_http(struct stream *s, const struct sv_entry_info *info,
                                               int *unseen)
{
    struct esc_rec *r;

    *unseen = 0;
    if (!info->linked)
        return NULL;
    if (info->escalation_index < s->first_index) {
        *unseen = 1;
        return NULL;
    }
    r = escalate_at(s, info->escalation_index);
    if (r == NULL || memcmp(r->leaf, info->escalation_hash, SV_HASH) != 0)
        return NULL;
    return r->http;
}

static void free_escalations(struct stream *s)
{
    for (size_t i = 0; i < s->nescs; i++)
        free(s->escs[i].http);
    free(s->escs);
}

static void allow_key(const char *request_id, const char *credential_id, uint8_t out[SV_HASH])
{
    size_t rl = strlen(request_id), cl = strlen(credential_id);
    char buf[2 * SV_ID_MAX + 2];

    memcpy(buf, request_id, rl);
    buf[rl] = '\0';
    memcpy(buf + rl + 1, credential_id, cl);
    sv_sha256(buf, rl + 1 + cl, out);
}

/* Remember the allow at index that released info->credential_id. 0, or -1 out of memory. */
static int allow_add(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    if (s->ncallows == s->cap_callows) {
        size_t nc = s->cap_callows ? 2 * s->cap_callows : 64;
        struct cred_allow *n = realloc(s->callows, nc * sizeof(*n));

        if (n == NULL)
            return -1;
        s->callows = n;
        s->cap_callows = nc;
    }
    s->callows[s->ncallows].index = index;
    allow_key(info->request_id, info->credential_id, s->callows[s->ncallows].key);
    s->callows[s->ncallows++].used = 0;
    return 0;
}

static struct cred_allow *allow_find(struct stream *s, uint64_t index)
{
    size_t lo = 0, hi = s->ncallows;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->callows[mid].index == index)
            return &s->callows[mid];
        if (s->callows[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void model_key(const char *request_id, const char *model, uint8_t out[SV_HASH])
{
    char buf[2 * (SV_ID_MAX + SV_MODEL_MAX) + 2];
    size_t rl = strlen(request_id), ml = strlen(model);

    memcpy(buf, request_id, rl);
    buf[rl] = '\0';
    memcpy(buf + rl + 1, model, ml);
    sv_sha256(buf, rl + 1 + ml, out);
}

/* Remember the ALLOW of model.call at index (leaf: its leaf hash). 0, or -1 out of memory. */
static int model_allow_add(struct stream *s, uint64_t index, const uint8_t leaf[SV_HASH],
                           const struct sv_entry_info *info)
{
    struct model_allow *a;

    if (s->nmallows == s->cap_mallows) {
        size_t nc = s->cap_mallows ? 2 * s->cap_mallows : 64;
        struct model_allow *n = realloc(s->mallows, nc * sizeof(*n));

        if (n == NULL)
            return -1;
        s->mallows = n;
        s->cap_mallows = nc;
    }
    a = &s->mallows[s->nmallows++];
    a->index = index;
    memcpy(a->leaf, leaf, SV_HASH);
    model_key(info->request_id, info->model, a->key);
    a->ceiling = info->token_ceiling;
    a->used = 0;
    return 0;
}

static struct model_allow *model_allow_find(struct stream *s, uint64_t index)
{
    size_t lo = 0, hi = s->nmallows;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->mallows[mid].index == index)
            return &s->mallows[mid];
        if (s->mallows[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * A UsageRecorded entry at index (docs/verifier.md, token-usage): the allow it names is an
 * earlier ALLOW of operation model.call of this record whose leaf hash is allow_entry_hash, with
 * the same request id and canonical model, whose token ceiling is reserved_tokens; no start lies
 * between them (decisiond forgets pending allows when it restarts); no other usage entry names it.
 * (Its own fields' arithmetic is the entries check's.) In a bundle, one naming an allow before
 * the range is counted, not checked.
 */
static void check_usage(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];
    struct model_allow *a;
    uint8_t key[SV_HASH];
    uint64_t at = info->allow_log_index;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (at < s->first_index && at < index) {
        s->unseen_usage++;
        return;
    }
    a = at < index ? model_allow_find(s, at) : NULL;
    if (a == NULL) {
        snprintf(why, sizeof(why),
                 "entry %llu is not an earlier ALLOW of model.call: usage recorded for no allowed "
                 "model call",
                 (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-allow-unknown", why);
        return;
    }
    if (memcmp(a->leaf, info->allow_hash, SV_HASH) != 0) {
        snprintf(why, sizeof(why), "allow_entry_hash is not the leaf hash of entry %llu",
                 (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-allow-hash", why);
        return;
    }
    model_key(info->request_id, info->model, key);
    if (memcmp(a->key, key, SV_HASH) != 0) {
        snprintf(why, sizeof(why),
                 "the allow of entry %llu is not for request %.128s and model %.128s",
                 (unsigned long long)at, info->request_id, info->model);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-allow-mismatch", why);
        return;
    }
    if (a->ceiling != info->reserved_tokens) {
        snprintf(why, sizeof(why),
                 "reserved_tokens %llu is not the token ceiling %llu of the allow of entry %llu",
                 (unsigned long long)info->reserved_tokens, (unsigned long long)a->ceiling,
                 (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-reserved", why);
        return;
    }
    if (a->used) {
        snprintf(why, sizeof(why), "the allow of entry %llu has a second usage entry",
                 (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-twice", why);
        return;
    }
    a->used = 1;
    if (s->have_start && s->last_start > at) {
        snprintf(why, sizeof(why),
                 "a start (entry %llu) lies between the allow of entry %llu and its usage",
                 (unsigned long long)s->last_start, (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_USAGE, item, "usage-allow-restarted", why);
        return;
    }
    pass(s->rep, SV_CHECK_USAGE);
}

/* A SandboxStarted entry at index (streamed in index order, so sbxs stays sorted). */
static void sandbox_add(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    struct sbx_rec *r;

    if (s->nsbxs == s->cap_sbxs) {
        size_t nc = s->cap_sbxs ? 2 * s->cap_sbxs : 64;
        struct sbx_rec *n = realloc(s->sbxs, nc * sizeof(*n));

        if (n == NULL) {
            char item[64];

            snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
            sv_report_fail(s->rep, SV_CHECK_SANDBOXES, item, "internal", "out of memory");
            return;
        }
        s->sbxs = n;
        s->cap_sbxs = nc;
    }
    r = &s->sbxs[s->nsbxs++];
    r->index = index;
    memcpy(r->id, info->sandbox_id, SV_SANDBOX_ID);
    memcpy(r->who, info->sandbox_who, SV_HASH);
    memcpy(r->operator_, info->operator_digest, SV_HASH);
    r->ended = 0;
    r->end_index = 0;
    pass(s->rep, SV_CHECK_SANDBOXES);
}

static struct sbx_rec *sandbox_at(struct stream *s, uint64_t index)
{
    size_t lo = 0, hi = s->nsbxs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->sbxs[mid].index == index)
            return &s->sbxs[mid];
        if (s->sbxs[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * A SandboxEnded entry at index: its start_index names an earlier SandboxStarted entry with the
 * same sandbox_id, recorded by the same operator, that no other end named (docs/verifier.md,
 * check `sandboxes`).
 */
static void check_sandbox_end(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    uint64_t at = info->sandbox_start_index;
    char item[64], why[SV_WHY];
    const char *code = NULL;
    struct sbx_rec *r = NULL;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (at >= index) {
        code = "sandbox-end-not-start";
        snprintf(why, sizeof(why), "the end names entry %llu, which is not an earlier entry",
                 (unsigned long long)at);
    } else if (at < s->first_index) {
        s->unseen_sandboxes++; /* before a bundle's range: cannot be checked here */
        return;
    } else if ((r = sandbox_at(s, at)) == NULL) {
        code = "sandbox-end-not-start";
        snprintf(why, sizeof(why), "the end names entry %llu, which is not a SandboxStarted entry",
                 (unsigned long long)at);
    } else if (memcmp(r->id, info->sandbox_id, SV_SANDBOX_ID) != 0) {
        code = "sandbox-end-id-mismatch";
        snprintf(why, sizeof(why),
                 "the end's sandbox_id is not that of the sandbox started at entry %llu",
                 (unsigned long long)at);
    } else if (memcmp(r->operator_, info->operator_digest, SV_HASH) != 0) {
        code = "sandbox-end-operator-mismatch";
        snprintf(why, sizeof(why),
                 "the end was recorded by another operator than the start at entry %llu",
                 (unsigned long long)at);
    } else if (r->ended) {
        code = "sandbox-end-twice";
        snprintf(why, sizeof(why), "the sandbox started at entry %llu was ended before, at %llu",
                 (unsigned long long)at, (unsigned long long)r->end_index);
    }
    if (code != NULL) {
        sv_report_fail(s->rep, SV_CHECK_SANDBOXES, item, code, why);
        return;
    }
    r->ended = 1;
    r->end_index = index;
    pass(s->rep, SV_CHECK_SANDBOXES);
}

/*
 * An entry at index that lets a request of a sandbox out or holds it for an operator (a decision
 * ALLOW or ESCALATE, an EscalationResolved ALLOW), whose request names the sandbox started at
 * `at` as who (SHA-256 of its principal NUL its sandbox name): that start must be an earlier
 * SandboxStarted entry of the same principal and name, not ended before this entry.
 */
static void check_sandbox_use(struct stream *s, uint64_t index, uint64_t at,
                              const uint8_t who[SV_HASH], const char *what)
{
    char item[64], why[SV_WHY];
    const char *code = NULL;
    struct sbx_rec *r = NULL;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (at >= index) {
        code = "sandbox-unknown";
        snprintf(why, sizeof(why), "%s names sandbox start %llu, which is not an earlier entry",
                 what, (unsigned long long)at);
    } else if (at < s->first_index) {
        s->unseen_sandboxes++;
        return;
    } else if ((r = sandbox_at(s, at)) == NULL) {
        code = "sandbox-unknown";
        snprintf(why, sizeof(why), "%s names entry %llu, which is not a SandboxStarted entry", what,
                 (unsigned long long)at);
    } else if (r->ended) {
        code = "sandbox-ended";
        snprintf(why, sizeof(why),
                 "%s names the sandbox started at entry %llu, which ended before (entry %llu)",
                 what, (unsigned long long)at, (unsigned long long)r->end_index);
    } else if (memcmp(r->who, who, SV_HASH) != 0) {
        code = "sandbox-mismatch";
        snprintf(why, sizeof(why),
                 "%s is of another principal, sandbox name or agent uid than the sandbox started "
                 "at entry %llu",
                 what, (unsigned long long)at);
    }
    if (code != NULL) {
        sv_report_fail(s->rep, SV_CHECK_SANDBOXES, item, code, why);
        return;
    }
    pass(s->rep, SV_CHECK_SANDBOXES);
}

/*
 * An EscalationResolved entry at index: it must name, by index and leaf hash, exactly one earlier
 * Decision entry with effect ESCALATE whose request has the same request id, and no other
 * resolution may have named that entry. The leaf hash binds the whole escalate entry, so the
 * resolution is bound to the request content the operator was shown.
 */
static void check_resolution(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];
    const char *code = NULL;
    struct esc_rec *r = NULL;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (!info->linked) {
        code = "resolution-unlinked";
        snprintf(why, sizeof(why),
                 "the resolution of request %.128s names no escalate entry (no escalation_index "
                 "and escalation_hash): the record does not show which request was resolved",
                 info->request_id);
    } else if (info->escalation_index >= index) {
        code = "resolution-index-missing";
        snprintf(why, sizeof(why),
                 "the resolution names entry %llu, which is not an earlier entry of the log",
                 (unsigned long long)info->escalation_index);
    } else if (s->have_start && s->last_start > info->escalation_index) {
        code = "resolution-restarted";
        snprintf(why, sizeof(why),
                 "a start (entry %llu) lies between the escalate entry %llu and its resolution: "
                 "decisiond forgets held escalations when it restarts",
                 (unsigned long long)s->last_start, (unsigned long long)info->escalation_index);
    } else if (info->escalation_index < s->first_index) {
        s->unseen_escalations++; /* before a bundle's range: cannot be checked here */
        unseen_add(&s->unseen_res, &s->nunseen_res, &s->cap_unseen_res, info->escalation_index,
                   index);
        return;
    } else if ((r = escalate_at(s, info->escalation_index)) == NULL) {
        code = "resolution-not-escalate";
        snprintf(why, sizeof(why),
                 "the resolution names entry %llu, which is not a decision with effect ESCALATE",
                 (unsigned long long)info->escalation_index);
    } else if (memcmp(r->leaf, info->escalation_hash, SV_HASH) != 0) {
        code = "resolution-hash-mismatch";
        snprintf(why, sizeof(why),
                 "the resolution's escalation_hash is not the leaf hash of entry %llu",
                 (unsigned long long)r->index);
    } else if (strcmp(r->request_id, info->request_id) != 0) {
        code = "resolution-request-mismatch";
        snprintf(why, sizeof(why),
                 "the resolution names request %.128s, the escalate entry %llu request %.128s",
                 info->request_id, (unsigned long long)r->index, r->request_id);
    } else if (r->resolved) {
        code = "resolution-twice";
        snprintf(why, sizeof(why), "the escalate entry %llu was resolved before",
                 (unsigned long long)r->index);
    }
    if (code != NULL) {
        sv_report_fail(s->rep, SV_CHECK_ESCALATIONS, item, code, why);
        return;
    }
    r->resolved = 1;
    if (s->ids != NULL)
        sv_ids_release(s->ids, r->request_id); /* no longer held: only the window keeps it */
    pass(s->rep, SV_CHECK_ESCALATIONS);
    /* An approval lets the held request out now: its sandbox must still run. */
    if (info->effect == 1 && r->sandbox_start_index != 0)
        check_sandbox_use(s, index, r->sandbox_start_index, r->sandbox_who, "the approval");
}

/*
 * A CredentialsMinted entry at index: the allow it names (allow_log_index) is an earlier ALLOW
 * decision of this record that released from_credential_id for allow_request_id, no start lies
 * between them (decisiond forgets pending allows when it restarts), and no other exchange named
 * that allow (docs/verifier.md, token-exchanges). An index of 0 names no allow and fails: it is
 * what anyone who wants an exchange left unchecked would write.
 */
static void check_exchange(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];
    struct cred_allow *a;
    uint8_t key[SV_HASH];
    uint64_t at = info->allow_log_index;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (at == 0) {
        /* Entry 0 is a Startup entry, never an allow: 0 names none. A decisiond older than the
         * field wrote it so, and so can anyone who wants the exchange left unchecked. */
        snprintf(why, sizeof(why),
                 "the exchange for request %.128s names no allow (allow_log_index 0): the record "
                 "does not show which allow backed it",
                 info->request_id);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "exchange-allow-unlinked", why);
        return;
    }
    if (at < s->first_index && s->have_start && s->last_start > at) {
        snprintf(why, sizeof(why),
                 "a start (entry %llu) lies between the allow of entry %llu and its exchange",
                 (unsigned long long)s->last_start, (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "exchange-allow-restarted", why);
        return;
    }
    if (at < s->first_index) {
        s->unseen_allows++; /* before the bundle's range */
        unseen_add(&s->unseen_ex, &s->nunseen_ex, &s->cap_unseen_ex, at, index);
        return;
    }
    allow_key(info->request_id, info->credential_id, key);
    a = at < index ? allow_find(s, at) : NULL;
    if (a == NULL || memcmp(a->key, key, SV_HASH) != 0) {
        snprintf(why, sizeof(why),
                 "entry %llu is not an earlier allow that released credential %.128s for request "
                 "%.128s",
                 (unsigned long long)at, info->credential_id, info->request_id);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "exchange-allow-unknown", why);
        return;
    }
    if (a->used) {
        snprintf(why, sizeof(why), "the allow of entry %llu backs a second exchange",
                 (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "exchange-allow-reused", why);
        return;
    }
    a->used = 1;
    if (s->have_start && s->last_start > at) {
        snprintf(why, sizeof(why),
                 "a start (entry %llu) lies between the allow of entry %llu and its exchange",
                 (unsigned long long)s->last_start, (unsigned long long)at);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "exchange-allow-restarted", why);
        return;
    }
    pass(s->rep, SV_CHECK_EXCHANGES);
}

/* The replaced credential with id digest id, or NULL; *at: where it is or would be inserted. */
static struct replaced_rec *replaced_find(struct stream *s, const uint8_t id[SV_HASH], size_t *at)
{
    size_t lo = 0, hi = s->nrepl;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = memcmp(s->repl[mid].id, id, SV_HASH);

        if (c == 0) {
            *at = mid;
            return &s->repl[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return NULL;
}

/*
 * A CredentialsMinted entry, after check_exchange: its replaced ids are replaced from its time on,
 * and an id it mints that an earlier mint replaced is a new credential from its time on. 0, or -1
 * out of memory. The memory is one replaced_rec (56 bytes) per distinct id ever replaced.
 */
static int note_replaced(struct stream *s, const struct sv_entry_info *info)
{
    size_t at;
    struct replaced_rec *r;

    for (size_t i = 0; i < info->n_minted_ids; i++)
        if ((r = replaced_find(s, info->minted_ids[i], &at)) != NULL) {
            r->reminted = 1;
            r->reminted_ms = info->time_unix_ms;
        }
    for (size_t i = 0; i < info->n_replaced_ids; i++) {
        if ((r = replaced_find(s, info->replaced_ids[i], &at)) == NULL) {
            if (s->nrepl == s->cap_repl) {
                size_t nc = s->cap_repl ? 2 * s->cap_repl : 64;
                struct replaced_rec *n = realloc(s->repl, nc * sizeof(*n));

                if (n == NULL)
                    return -1;
                s->repl = n;
                s->cap_repl = nc;
            }
            memmove(&s->repl[at + 1], &s->repl[at], (s->nrepl - at) * sizeof(*s->repl));
            s->nrepl++;
            r = &s->repl[at];
            memcpy(r->id, info->replaced_ids[i], SV_HASH);
        }
        r->replaced_ms = info->time_unix_ms;
        r->reminted = 0;
        r->reminted_ms = 0;
    }
    return 0;
}

/*
 * An ALLOW decision at index that released info->credential_id: a credential an earlier mint
 * replaced releases nothing from the moment that mint began (sworn_vault_mint_begin, before the
 * mint's entry time is taken), so the allow must have been decided (its time taken, before the
 * release) no later than the mint entry's time, or no earlier than a later mint that minted the
 * id again. Equal milliseconds pass: the clock's resolution cannot order them.
 */
static void check_release(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];
    uint8_t id[SV_HASH];
    size_t at;
    struct replaced_rec *r;

    sv_sha256(info->credential_id, strlen(info->credential_id), id);
    if ((r = replaced_find(s, id, &at)) == NULL)
        return; /* never replaced (or replaced by a mint before a bundle's range) */
    if (info->time_unix_ms > r->replaced_ms &&
        (!r->reminted || info->time_unix_ms < r->reminted_ms)) {
        snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
        snprintf(why, sizeof(why),
                 "the allow of %llu ms released credential %.128s, which a mint of %llu ms had "
                 "replaced",
                 (unsigned long long)info->time_unix_ms, info->credential_id,
                 (unsigned long long)r->replaced_ms);
        sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "released-after-replaced", why);
    }
    /* A release that passes is not counted: the check's count stays one per exchange. */
}

/*
 * A TimeMark's high water must be the largest time stamp of every entry before it
 * (docs/verifier.md, check `time-marks`): decisiond's budget replay stops at a mark whose high
 * water is older than every budget window, so a high water written lower than an earlier stamp
 * would let a restart forget allows still inside their window (issue 12, finding 4). From index 0
 * it must equal the maximum; in a bundle that starts later it must be at least the maximum of what
 * the bundle shows (the entries before it are not seen). A high water above every earlier stamp
 * only makes the replay walk further, but decisiond never writes one: it fails too, from index 0.
 */
static void check_time_mark(struct stream *s, uint64_t index, const struct sv_entry_info *info)
{
    char item[64], why[SV_WHY];

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (s->partial && s->have_mark_floor && info->high_water_ms < s->mark_floor_ms &&
        s->mark_floor_ms >= s->last_time_ms) {
        /* In a bundle the entries before the range are not seen, but an earlier mark of the
         * range says a stamp as late as its high water came before it, hence before this one. */
        snprintf(why, sizeof(why),
                 "the mark's high water %llu is below the high water %llu of the mark at entry "
                 "%llu: a replay stopping at it would forget allows still inside their window",
                 (unsigned long long)info->high_water_ms, (unsigned long long)s->mark_floor_ms,
                 (unsigned long long)s->mark_floor_index);
        sv_report_fail(s->rep, SV_CHECK_TIME_MARKS, item, "high-water-low", why);
    } else if (info->high_water_ms < s->last_time_ms) {
        snprintf(why, sizeof(why),
                 "the mark's high water %llu is below the time stamp %llu of an earlier entry: a "
                 "replay stopping at it would forget allows still inside their window",
                 (unsigned long long)info->high_water_ms, (unsigned long long)s->last_time_ms);
        sv_report_fail(s->rep, SV_CHECK_TIME_MARKS, item, "high-water-low", why);
    } else if (!s->partial && info->high_water_ms > s->last_time_ms) {
        snprintf(why, sizeof(why),
                 "the mark's high water %llu is above every earlier time stamp (the largest is "
                 "%llu)",
                 (unsigned long long)info->high_water_ms, (unsigned long long)s->last_time_ms);
        sv_report_fail(s->rep, SV_CHECK_TIME_MARKS, item, "high-water-high", why);
    } else {
        pass(s->rep, SV_CHECK_TIME_MARKS);
    }
    if (s->partial && (!s->have_mark_floor || info->high_water_ms > s->mark_floor_ms)) {
        s->mark_floor_ms = info->high_water_ms;
        s->mark_floor_index = index;
        s->have_mark_floor = 1;
    }
    if (info->clock_behind_ms > 0)
        s->rep->clock_behind++;
}

static int all_zero(const uint8_t d[SV_HASH])
{
    uint8_t z = 0;

    for (size_t i = 0; i < SV_HASH; i++)
        z |= d[i];
    return z == 0;
}

/*
 * A PolicyLoaded entry without error: its policy is in force from here, the one in force before
 * is the one it replaced. 32 zero bytes are no policy's digest (decisiond records them only for a
 * file it could not read, and then with an error). Under `measured-start record` every policy
 * that took effect must be one a measured-file line approves, as the start's own is (the start's
 * files are checked in check_startup; a reload measures nothing into PCR 23, so this is the only
 * place its policy is held to the auditor's list).
 */
static void note_policy_loaded(struct stream *s, const char *item, const struct sv_entry_info *info)
{
    const struct sv_policy *p = s->o->policy;

    if (all_zero(info->digest)) {
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "policy-digest-zero",
                       "a policy load without error whose digest is 32 zero bytes: no policy "
                       "file has that SHA-256");
        return;
    }
    if (p->measured_start && (info->source_long || !file_approved(p, info->digest, info->source))) {
        char hex[2 * SV_HASH + 1], why[SV_WHY];

        sv_hex(info->digest, SV_HASH, hex);
        snprintf(why, sizeof(why),
                 "the policy loaded from %.200s (sha256 %s) took effect, and no measured-file "
                 "line approves it",
                 info->source_long ? "a source longer than 4096 bytes" : info->source, hex);
        sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "policy-unapproved", why);
    }
    digest_add(s, info->digest);
    if (s->have_cur) {
        memcpy(s->prev_policy, s->cur_policy, SV_HASH);
        s->have_prev = 1;
    }
    memcpy(s->cur_policy, info->digest, SV_HASH);
    s->have_cur = 1;
    s->have_new = s->have_old = 0;
}

/*
 * A decision names the policy in force at its position (docs/decisiond.md section 5). decisiond
 * swaps its policy on the loop thread once the new PolicyLoaded entry is durable, and decisions
 * are recorded by several workers: a decision taken under the old policy before the swap may be
 * appended after the PolicyLoaded entry, and even after a decision taken under the new policy
 * (a deny, needing no receipt, can overtake an allow being signed). Both were taken in that
 * order, so the exact slack is: after a load, a decision may name the policy that load replaced
 * (never one replaced before it), as long as it was decided no later than every decision under
 * the new policy (decisiond's clock, which entries record). Anything else is a decision under a
 * superseded policy.
 */
static void check_policy_in_force(struct stream *s, uint64_t index, const char *item,
                                  const struct sv_entry_info *info)
{
    char why[SV_WHY];
    uint64_t t = info->time_unix_ms;

    if (all_zero(info->digest)) {
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "policy-digest-zero",
                       "the decision names 32 zero bytes as its policy digest: no policy");
    } else if (s->have_cur && memcmp(info->digest, s->cur_policy, SV_HASH) == 0) {
        if (s->have_old && t < s->old_max_ms) {
            snprintf(why, sizeof(why),
                     "decided at %llu under the policy in force, before the decision at entry "
                     "%llu (%llu) under the policy it replaced: that one was decided after the "
                     "reload took effect",
                     (unsigned long long)t, (unsigned long long)s->old_max_index,
                     (unsigned long long)s->old_max_ms);
            sv_report_fail(s->rep, SV_CHECK_POLICY, item, "policy-superseded", why);
            return;
        }
        if (!s->have_new || t < s->new_min_ms) {
            s->new_min_ms = t;
            s->new_min_index = index;
            s->have_new = 1;
        }
        pass(s->rep, SV_CHECK_POLICY);
    } else if (s->have_prev && memcmp(info->digest, s->prev_policy, SV_HASH) == 0) {
        if (s->have_new && t > s->new_min_ms) {
            snprintf(why, sizeof(why),
                     "decided at %llu under the policy the newest load replaced, after the "
                     "decision at entry %llu (%llu) under the new one",
                     (unsigned long long)t, (unsigned long long)s->new_min_index,
                     (unsigned long long)s->new_min_ms);
            sv_report_fail(s->rep, SV_CHECK_POLICY, item, "policy-superseded", why);
            return;
        }
        if (!s->have_old || t > s->old_max_ms) {
            s->old_max_ms = t;
            s->old_max_index = index;
            s->have_old = 1;
        }
        pass(s->rep, SV_CHECK_POLICY);
    } else if (digest_known(s, info->digest)) {
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "policy-superseded",
                       "the decision names a policy of this start that two or more later loads "
                       "replaced");
    } else if (s->partial && !s->have_start) {
        /* In a bundle, before its first Startup entry, a policy may have been loaded before the
         * range. Under `measured-start record` it must still be one the auditor approved: its
         * load (unseen) had to be, whatever its source. */
        if (s->o->policy->measured_start && !digest_approved(s->o->policy, info->digest)) {
            char hex[2 * SV_HASH + 1];

            sv_hex(info->digest, SV_HASH, hex);
            snprintf(why, sizeof(why),
                     "the decision names policy sha256 %s, loaded before this range, and no "
                     "measured-file line approves it",
                     hex);
            sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "policy-unapproved", why);
        }
        s->unseen_policies++;
    } else {
        /* After a start only the policies loaded since can decide: decisiond forgets the others
         * when it restarts. */
        sv_report_fail(s->rep, SV_CHECK_POLICY, item, "unknown-policy",
                       s->have_start ? "the decision's policy digest matches no PolicyLoaded entry "
                                       "without error since the newest start"
                                     : "the decision's policy digest matches no earlier "
                                       "PolicyLoaded entry without error");
    }
}

/*
 * Request ids (sv_ids.h): within one start, a decision whose id decisiond still remembers (among
 * the last 65536 it took, or held by an escalation) is decisiond's refusal of a duplicate id, a
 * DENY with no rule; any other decision takes its id. So one id is never decided twice by the
 * policy within decisiond's memory, an escalated request's id is never decided again while it is
 * held, and nothing but that refusal lies between an escalate entry and its resolution.
 */
static void check_request_id(struct stream *s, const char *item, const struct sv_entry_info *info)
{
    if (s->ids == NULL)
        return; /* failed as internal when the stream began */
    if (sv_ids_live(s->ids, info->request_id)) {
        char why[SV_WHY];

        if (info->effect == 2 && info->no_rule)
            return; /* decisiond's refusal of a duplicate id: takes nothing */
        snprintf(why, sizeof(why),
                 "request %.128s was decided before in this start, within decisiond's memory of "
                 "the last 65536 ids; a repeat may only be the deny of a duplicate id (no rule)",
                 info->request_id);
        sv_report_fail(s->rep, SV_CHECK_ESCALATIONS, item, "request-id-reused", why);
        return;
    }
    if (sv_ids_take(s->ids, info->request_id, info->effect == 3) != 0)
        sv_report_fail(s->rep, SV_CHECK_ESCALATIONS, item, "internal", "out of memory");
}

/* ------------------------------------------------------------------------------------------ */
/* Conformance reports (docs/formats.md section 15) */

static int note_startup_at(struct stream *s, uint64_t index)
{
    if (s->nstartup_at == s->cap_startup_at) {
        size_t cap = s->cap_startup_at ? 2 * s->cap_startup_at : 16;
        uint64_t *n = realloc(s->startup_at, cap * sizeof(*n));

        if (n == NULL)
            return -1;
        s->startup_at = n;
        s->cap_startup_at = cap;
    }
    s->startup_at[s->nstartup_at++] = index;
    return 0;
}

static int startup_seen(const struct stream *s, uint64_t index)
{
    size_t lo = 0, hi = s->nstartup_at;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (s->startup_at[mid] == index)
            return 1;
        if (s->startup_at[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The deployment's key that signed the report: with a keyring, a key it knows must have been
 * valid for purpose checkpoint (decisiond's one key, which its start checks for that purpose) at
 * the entry's time; else a `log` or `receipt-key` key of the policy with that id. NULL with code
 * and why. */
static struct evp_pkey_st *report_key(const struct stream *s, const struct sv_conformance *c,
                                      int *ed, char *code, char *why)
{
    const struct sv_policy *p = s->o->policy;
    struct evp_pkey_st *key;

    if (s->keys != NULL && sv_keyring_knows(s->keys, c->key_id)) {
        key = sv_keyring_key(s->keys, c->key_id, "checkpoint", sv_keyring_seconds(c->time_ms), ed,
                             why);
        if (key == NULL)
            snprintf(code, SV_CHECK_CODE_MAX, "report-key-invalid");
        return key;
    }
    for (size_t k = 0; k < p->nlogs; k++)
        if (p->logs[k].pkey != NULL && memcmp(p->logs[k].spki_hash, c->key_id, SV_HASH) == 0) {
            *ed = p->logs[k].type == 0x01;
            return p->logs[k].pkey;
        }
    for (size_t k = 0; k < p->nreceipt_keys; k++)
        if (memcmp(p->receipt_keys[k].spki_hash, c->key_id, SV_HASH) == 0) {
            *ed = p->receipt_keys[k].type == 0x01;
            return p->receipt_keys[k].pkey;
        }
    snprintf(code, SV_CHECK_CODE_MAX, "report-key-unknown");
    sv_fail(why, "the report is signed by a key that is neither a log or receipt key of the "
                 "policy nor a key of its keyring");
    return NULL;
}

/* The report's file beside the record (a folder only): 0 none, 1 matches, -1 does not (why). */
static int report_file(const struct stream *s, uint64_t index, const struct sv_conformance *c,
                       char *why)
{
    char rel[64];
    char *path;
    uint8_t *data = NULL, digest[SV_HASH];
    size_t len = 0;
    int missing = 0, rc;

    if (s->partial)
        return 0;
    snprintf(rel, sizeof(rel), "sworn/reports/%llu.json", (unsigned long long)index);
    path = join(s->o->record, rel);
    if (path == NULL)
        return sv_fail(why, "out of memory");
    if (sv_read_file(path, SV_REPORT_JSON_MAX, &data, &len, &missing, why) != 0) {
        free(path);
        return missing ? 0 : -1;
    }
    free(path);
    sv_sha256(data, len, digest);
    rc = len == c->report_length && memcmp(digest, c->report_sha256, SV_HASH) == 0;
    free(data);
    if (!rc)
        return sv_fail(why,
                       "%s is not the report the entry names (%zu bytes; its SHA-256 or "
                       "length differs)",
                       rel, len);
    return 1;
}

static void check_report(struct stream *s, uint64_t index, const char *item,
                         const struct sv_conformance *c)
{
    static const char prefix[] = "\xffsworn/v1 conformance-report"; /* and its NUL */
    uint8_t tbs[sizeof(prefix) + SV_HASH];
    char code[SV_CHECK_CODE_MAX], why[SV_WHY];
    struct sv_listed_report *l = NULL;
    struct evp_pkey_st *key;
    int ed = 0, file = 0, failed = 0;

    if (s->rep->reports < SV_REPORTS_LISTED) {
        l = &s->rep->report_list[s->rep->reports];
        l->index = index;
        l->c = *c;
    }
    s->rep->reports++;
    key = report_key(s, c, &ed, code, why);
    if (key == NULL) {
        sv_report_fail(s->rep, SV_CHECK_REPORTS, item, code, why);
        failed = 1;
    } else {
        memcpy(tbs, prefix, sizeof(prefix));
        memcpy(tbs + sizeof(prefix), c->signed_digest, SV_HASH);
        if ((c->alg == 2) != ed || !sv_sig_verify(key, ed, tbs, sizeof(tbs), c->sig, c->sig_len)) {
            sv_report_fail(s->rep, SV_CHECK_REPORTS, item, "report-signature-invalid",
                           "the report's signature does not verify over its own summary with "
                           "the conformance-report purpose (a changed summary, or another "
                           "purpose's signature)");
            failed = 1;
        }
    }
    /* The run started from a checkpoint this log had before the report, and its measured start
     * is one of this log's Startup entries (unseen before a bundle's range). */
    if (c->checkpoint_size > index) {
        sv_report_fail(s->rep, SV_CHECK_REPORTS, item, "report-checkpoint-ahead",
                       "the run's start checkpoint is larger than the log before this entry");
        failed = 1;
    } else if (c->checkpoint_size > 0 && !(s->partial && c->startup_index < s->first_index) &&
               !startup_seen(s, c->startup_index)) {
        snprintf(why, sizeof(why),
                 "the report's measured start, entry %llu, is not a Startup entry",
                 (unsigned long long)c->startup_index);
        sv_report_fail(s->rep, SV_CHECK_REPORTS, item, "report-startup", why);
        failed = 1;
    }
    file = report_file(s, index, c, why);
    if (file < 0) {
        sv_report_fail(s->rep, SV_CHECK_REPORTS, item, "report-file-mismatch", why);
        failed = 1;
    }
    if (l != NULL) {
        l->file = file;
        l->ok = !failed;
    }
    if (!failed)
        pass(s->rep, SV_CHECK_REPORTS);
}

static void check_entry(struct stream *s, uint64_t index, const uint8_t *e, size_t len,
                        const uint8_t leaf[SV_HASH], const uint8_t *receipt, size_t rlen,
                        int have_receipts)
{
    struct sv_entry_info info;
    char item[64], code[32], why[SV_WHY];
    int wants_receipt = 0, http_unseen = 0;
    const struct sv_http_req *http = NULL;

    snprintf(item, sizeof(item), "entry %llu", (unsigned long long)index);
    if (sv_entry_check(e, len, &info, code, why) != 0) {
        s->start_pending = 0; /* failed already; nothing to compare with */
        sv_report_fail(s->rep, SV_CHECK_ENTRIES, item, code, why);
        return;
    }
    pass(s->rep, SV_CHECK_ENTRIES);
    if (s->rep->stats != NULL)
        sv_stats_entry(s->rep->stats, index, &info);
    if (s->start_pending)
        check_start_policy(s, index, &info);
    if (info.kind == SV_ENTRY_TIME_MARK)
        check_time_mark(s, index, &info);
    if (info.time_unix_ms > s->last_time_ms)
        s->last_time_ms = info.time_unix_ms;
    if (s->o->policy->measured_start && index == 0 && info.kind != SV_ENTRY_STARTUP)
        /* decisiond appends a Startup entry first: what a record holds before its first start
         * was appended by a process no start measured (no binary, signer or configuration the
         * auditor approved, no separation shown). */
        sv_report_fail(s->rep, SV_CHECK_MEASURED, item, "measured-start-missing",
                       "entry 0 is not a Startup entry: the entries before the first start were "
                       "appended by a decisiond that no start measured");
    switch (info.kind) {
    case SV_ENTRY_POLICY_LOADED:
        if (s->partial && index == s->first_index && index > 0)
            s->opens_with_policy = 1; /* perhaps a start's own, its Startup entry unseen */
        if (!info.refused)
            note_policy_loaded(s, item, &info); /* a refused load never decides anything */
        break;
    case SV_ENTRY_DECISION:
        check_policy_in_force(s, index, item, &info);
        check_request_id(s, item, &info);
        if (info.effect == 3)
            escalate_add(s, index, leaf, &info);
        wants_receipt = info.effect == 1;
        http = &info.http;
        if (info.effect == 1 && info.credential_id[0] != '\0' && allow_add(s, index, &info) != 0)
            sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "internal", "out of memory");
        if (info.effect == 1 && info.credential_id[0] != '\0')
            check_release(s, index, &info);
        if (info.effect == 1 && info.model_call && model_allow_add(s, index, leaf, &info) != 0)
            sv_report_fail(s->rep, SV_CHECK_USAGE, item, "internal", "out of memory");
        if ((info.effect == 1 || info.effect == 3) && info.sandbox_start_index != 0)
            check_sandbox_use(s, index, info.sandbox_start_index, info.sandbox_who,
                              info.effect == 1 ? "the allow" : "the escalation");
        break;
    case SV_ENTRY_SANDBOX_STARTED:
        sandbox_add(s, index, &info);
        break;
    case SV_ENTRY_SANDBOX_ENDED:
        check_sandbox_end(s, index, &info);
        break;
    case SV_ENTRY_USAGE_RECORDED:
        check_usage(s, index, &info);
        break;
    case SV_ENTRY_WITNESS_EVENT:
        /* The honest log's alarm (issue 18): a witness holds a tree of this origin and key that
         * the log does not extend. Not a failure of the record, which says so itself; the
         * report must show it (witness_note). */
        if (info.witness_kind == SV_WITNESS_CONSISTENCY && s->rep->witness_alarms++ == 0) {
            size_t wl = strlen(info.witness), cap = sizeof(s->alarm_witness);

            if (wl < cap)
                memcpy(s->alarm_witness, info.witness, wl + 1);
            else
                snprintf(s->alarm_witness, cap, "%.*s...", (int)(cap - 4), info.witness);
            s->alarm_size = info.witness_checkpoint_size;
            s->alarm_index = index;
        }
        break;
    case SV_ENTRY_CREDENTIALS_MINTED:
        check_exchange(s, index, &info);
        if (note_replaced(s, &info) != 0)
            sv_report_fail(s->rep, SV_CHECK_EXCHANGES, item, "internal", "out of memory");
        break;
    case SV_ENTRY_ESCALATION_RESOLVED:
        check_resolution(s, index, &info);
        wants_receipt = info.effect == 1;
        http = approval_http(s, &info, &http_unseen);
        break;
    case SV_ENTRY_STARTUP:
        if (note_startup_at(s, index) != 0)
            sv_report_fail(s->rep, SV_CHECK_REPORTS, item, "internal", "out of memory");
        s->have_start = 1;
        s->last_start = index;
        s->ndigests = 0; /* a new start decides only with the policies it loads */
        s->have_cur = s->have_prev = s->have_new = s->have_old = 0;
        if (s->ids != NULL)
            sv_ids_reset(s->ids); /* decisiond's table of ids starts empty at each start */
        if (s->o->policy->measured_start)
            check_startup(s, index, e, len);
        check_separation(s, index, e, len);
        note_start(s, index, e, len);
        break;
    case SV_ENTRY_REFUSED:
        s->rep->refused++;
        break;
    case SV_ENTRY_CONFORMANCE_REPORT:
        check_report(s, index, item, &info.conformance);
        break;
    case SV_ENTRY_REFUSALS_DROPPED:
        s->rep->refusal_summaries++;
        s->rep->refusals_dropped = info.dropped > UINT64_MAX - s->rep->refusals_dropped
                                       ? UINT64_MAX
                                       : s->rep->refusals_dropped + info.dropped;
        break;
    case SV_ENTRY_KEY_EVENT:
        if (s->keys != NULL &&
            sv_keyring_event(s->keys, info.statement, info.statement_len, index, why) != 0)
            sv_report_fail(s->rep, SV_CHECK_KEYS, item, "key-event", why);
        else if (s->keys != NULL)
            pass(s->rep, SV_CHECK_KEYS);
        break;
    default:
        break;
    }
    if (!have_receipts)
        return;
    if (!wants_receipt) {
        if (rlen != 0)
            sv_report_fail(s->rep, SV_CHECK_RECEIPTS, item, "unexpected-receipt",
                           "a receipt for an entry that is not an allow");
        return;
    }
    if (rlen == 0) {
        sv_report_fail(s->rep, SV_CHECK_RECEIPTS, item, "receipt-missing",
                       "an allow without a receipt");
        return;
    }
    if (s->rkeys == NULL) {
        /* A keyring was given to check receipts against and holds no receipt key (nor does
         * the policy): a failure, not a receipt left unchecked. */
        if (s->o->policy->nkeyring_files > 0)
            sv_report_fail(s->rep, SV_CHECK_RECEIPTS, item, "receipt-key-unknown",
                           s->keys != NULL
                               ? "the policy's keyring lists no receipt key and the policy no "
                                 "receipt-key: the receipt cannot be checked"
                               : "the policy's keyring did not load: the receipt cannot be "
                                 "checked");
        return;
    }
    {
        struct rjob *j = &s->jobs[s->njobs++];

        j->index = index;
        memcpy(j->leaf, leaf, SV_HASH);
        j->r = receipt;
        j->rlen = rlen;
        j->time_ms = info.time_unix_ms;
        j->http_unseen = http_unseen;
        j->unchecked = 0;
        if (http != NULL && http->present)
            memcpy(&j->http, http, sizeof(j->http));
        else
            j->http.present = 0;
    }
}

/* The receipts note: approvals' http-message receipts whose escalated request lies before a
 * bundle's range (their base cannot be rebuilt here). */
static void receipts_note(struct stream *s)
{
    if (s->unchecked_receipts == 0)
        return;
    snprintf(s->rep->checks[SV_CHECK_RECEIPTS].note, sizeof(s->rep->checks[0].note),
             "%llu http-message receipt(s) of approvals of requests before this range not checked",
             (unsigned long long)s->unchecked_receipts);
}

/* The token-usage note: usage entries naming an allow before a bundle's range. */
static void usage_note(struct stream *s)
{
    if (s->unseen_usage == 0)
        return;
    snprintf(s->rep->checks[SV_CHECK_USAGE].note, sizeof(s->rep->checks[0].note),
             "%llu usage entr(ies) name an allow before this range",
             (unsigned long long)s->unseen_usage);
}

/* The witness-quorum note: the witnesses' consistency alarms the entries recorded, and the
 * history checkpoints below the quorum (docs/verifier.md, `witness-quorum`). */
static void witness_note(struct stream *s)
{
    struct sv_report *rep = s->rep;
    char *note = rep->checks[SV_CHECK_WITNESSES].note;
    size_t cap = sizeof(rep->checks[0].note), used = 0;

    if (rep->witness_alarms > 0)
        used = (size_t)snprintf(note, cap,
                                "witness %s reported a consistency failure at checkpoint size "
                                "%llu (entry %llu)",
                                s->alarm_witness, (unsigned long long)s->alarm_size,
                                (unsigned long long)s->alarm_index);
    if (rep->witness_alarms > 1 && used < cap)
        used += (size_t)snprintf(note + used, cap - used, ", and %llu more such alarm(s)",
                                 (unsigned long long)(rep->witness_alarms - 1));
    if (rep->below_quorum > 0 && used < cap)
        snprintf(note + used, cap - used,
                 "%s%llu older checkpoint(s) below the witness quorum (required of the newest "
                 "only)",
                 used > 0 ? "; " : "", (unsigned long long)rep->below_quorum);
}

/* The token-exchanges note: exchanges that could not be checked (a bundle's), and why. */
static void exchanges_note(struct stream *s)
{
    if (s->unseen_allows == 0)
        return;
    snprintf(s->rep->checks[SV_CHECK_EXCHANGES].note, sizeof(s->rep->checks[0].note),
             "%llu exchange(s) name an allow before this range",
             (unsigned long long)s->unseen_allows);
}

struct worker {
    struct stream *s;
    unsigned first, step;
};

static void *run_jobs(void *arg)
{
    struct worker *w = arg;

    for (unsigned i = w->first; i < w->s->njobs; i += w->step) {
        struct rjob *j = &w->s->jobs[i];

        j->rc = sv_receipt_verify(w->s->rkeys, j->r, j->rlen, j->leaf, j->time_ms, &j->http,
                                  j->code, j->why);
        /* An approval's http-message receipt whose request lies before a bundle's range cannot
         * be rebuilt here: not checked (counted in the note), rather than failed. */
        if (j->rc != 0 && j->http_unseen && strcmp(j->code, "receipt-form") == 0) {
            j->rc = 0;
            j->unchecked = 1;
        }
    }
    return NULL;
}

/* Check the bundle's receipt signatures on the configured number of threads, then report them
 * in log order (so the first failure is the same whatever the scheduling). */
static void finish_receipts(struct stream *s)
{
    unsigned nt = s->o->threads > 0 ? (unsigned)s->o->threads : 2;
    pthread_t th[8];
    struct worker w[8];
    unsigned started = 0;

    if (s->njobs == 0)
        return;
    if (nt > 8)
        nt = 8;
    if (nt > s->njobs)
        nt = s->njobs;
    for (unsigned t = 0; t < nt; t++) {
        w[t].s = s;
        w[t].first = t;
        w[t].step = nt;
    }
    for (unsigned t = 1; t < nt; t++)
        if (pthread_create(&th[t], NULL, run_jobs, &w[t]) == 0)
            started = t;
        else
            break;
    if (started + 1 < nt) {
        /* Could not start them all: the main thread does every job not yet covered. */
        for (unsigned t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        w[0].step = 1;
        started = 0;
    }
    run_jobs(&w[0]);
    for (unsigned t = 1; t <= started; t++)
        pthread_join(th[t], NULL);
    for (unsigned i = 0; i < s->njobs; i++) {
        char item[64];

        snprintf(item, sizeof(item), "entry %llu", (unsigned long long)s->jobs[i].index);
        if (s->jobs[i].rc != 0)
            sv_report_fail(s->rep, SV_CHECK_RECEIPTS, item, s->jobs[i].code, s->jobs[i].why);
        else if (s->jobs[i].unchecked)
            s->unchecked_receipts++;
        else
            pass(s->rep, SV_CHECK_RECEIPTS);
    }
    s->njobs = 0;
}

/* One entry bundle (and its receipts) of width w. */
static int stream_bundle(struct stream *s, uint64_t b, unsigned w)
{
    char rel[128], item[160], why[SV_WHY];
    uint8_t *data = NULL, *rdata = NULL;
    size_t len = 0, rlen = 0;
    struct sv_bundle bundle, receipts;
    int missing, have_receipts = 0;
    char *path;
    const struct sv_policy *p = s->o->policy;

    sv_tile_path("tile/entries", b, w, rel, sizeof(rel));
    snprintf(item, sizeof(item), "%s", rel);
    path = join(s->o->record, rel);
    if (path == NULL)
        return -1;
    if (sv_read_file(path, SV_BUNDLE_MAX, &data, &len, &missing, why) != 0) {
        free(path);
        sv_report_fail(s->rep, SV_CHECK_BUNDLES, item, missing ? "bundle-missing" : "unreadable",
                       why);
        return -1;
    }
    free(path);
    {
        int r = sv_bundle_parse(data, len, w, &bundle, why);

        if (r != 0) {
            free(data);
            sv_report_fail(s->rep, SV_CHECK_BUNDLES, item,
                           r == -2   ? "entry-extra"
                           : r == -3 ? "bundle-malformed"
                                     : "entry-missing",
                           why);
            return -1;
        }
    }
    pass(s->rep, SV_CHECK_BUNDLES);
    if (p->sworn_entries) {
        sv_tile_path("sworn/receipts", b, w, rel, sizeof(rel));
        path = join(s->o->record, rel);
        if (path != NULL && sv_read_file(path, SV_BUNDLE_MAX, &rdata, &rlen, &missing, why) == 0) {
            if (sv_bundle_parse(rdata, rlen, w, &receipts, why) != 0)
                sv_report_fail(s->rep, SV_CHECK_RECEIPTS, rel, "receipts-malformed", why);
            else
                have_receipts = 1;
        } else if (!missing) {
            sv_report_fail(s->rep, SV_CHECK_RECEIPTS, rel, "unreadable", why);
        } else {
            /* No receipt file: every allow in the bundle is a missing receipt. */
            have_receipts = 1;
            memset(&receipts, 0, sizeof(receipts));
        }
        free(path);
    }
    for (unsigned i = 0; i < w; i++) {
        uint8_t leaf[SV_HASH];
        uint64_t index = b * SV_TILE_WIDTH + i;

        sv_leaf_hash(bundle.data[i], bundle.len[i], leaf);
        if (p->sworn_entries)
            check_entry(s, index, bundle.data[i], bundle.len[i], leaf,
                        have_receipts ? receipts.data[i] : NULL,
                        have_receipts ? receipts.len[i] : 0, have_receipts);
        sv_range_push(&s->range, leaf);
        push_level(s, 0, leaf);
        check_roots(s);
    }
    finish_receipts(s);
    free(data);
    free(rdata);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Keys: one path for a folder and a bundle file (issue 13 finding 2: a bundle ignored the
 * keyring, so a revoked checkpoint key and an unknown receipt key passed there). */

/* Load the policy's keyring (a failure is the keys check's) and the receipt keys: the policy's
 * receipt-key lines and the keyring's receipt keys. -1 only when out of memory. */
static int load_keys(struct stream *s)
{
    const struct sv_policy *p = s->o->policy;
    char why[SV_WHY];

    if (p->nkeyring_files > 0) {
        int kr = sv_keyring_load(p, &s->keys, why);

        if (kr != 0) {
            sv_report_fail(s->rep, SV_CHECK_KEYS, "keyring",
                           kr == -2 ? "keyring-root-twice" : "keyring", why);
            s->keys = NULL;
        } else {
            pass(s->rep, SV_CHECK_KEYS);
        }
    }
    if (p->sworn_entries) {
        s->rkeys = sv_receipt_keys_new(p, s->keys);
        if (s->rkeys != NULL && (s->jobs = calloc(SV_TILE_WIDTH, sizeof(*s->jobs))) == NULL)
            return -1; /* never skip receipt signatures for want of memory */
    }
    return 0;
}

/*
 * Every checkpoint's signing log keys must be checkpoint keys of the keyring valid at the
 * checkpoint's time: the newest entry time in its tree (a folder, and a bundle whose range
 * reaches its checkpoint); with later set (a bundle whose range ends before its checkpoint),
 * that time is only a lower bound, and the key must not have ended by then. A checkpoint of
 * sworn entries none of which carries a time (time 0, a bundle of resolutions only) cannot have
 * its key's validity checked: that fails (checkpoint-time-unknown) rather than take time 0 as
 * "any time" (the empty tree has no entry and is exempt).
 */
static void check_checkpoint_keys(struct stream *s, const struct cp_rec *cps, size_t n, int later)
{
    const struct sv_policy *p = s->o->policy;

    if (s->keys == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        char item[64], why[SV_WHY];

        snprintf(item, sizeof(item), "checkpoint %llu", (unsigned long long)cps[i].size);
        if (p->sworn_entries && cps[i].time_ms == 0 && cps[i].size > 0) {
            sv_report_fail(s->rep, SV_CHECK_KEYS, item, "checkpoint-time-unknown",
                           "no entry under this checkpoint carries a time: its signing key's "
                           "validity in the keyring cannot be checked");
            continue;
        }
        for (size_t k = 0; k < p->nlogs; k++) {
            char w[SV_WHY];
            int ed;
            /* No time (an opaque log, the empty tree) is unknown, never "any time": the key
             * must then be active and valid now (issue 13, finding 6). */
            int known = cps[i].time_ms != 0;
            const struct evp_pkey_st *key;

            if (!(cps[i].signers >> k & 1))
                continue;
            if (known && later)
                key = sv_keyring_key_from(s->keys, p->logs[k].spki_hash, "checkpoint",
                                          sv_keyring_seconds(cps[i].time_ms), &ed, w);
            else
                key = sv_keyring_key(s->keys, p->logs[k].spki_hash, "checkpoint",
                                     known ? sv_keyring_seconds(cps[i].time_ms) : SV_TIME_UNKNOWN,
                                     &ed, w);
            if (key == NULL) {
                snprintf(why, sizeof(why), "signed by %.200s: %.250s", p->logs[k].name, w);
                sv_report_fail(s->rep, SV_CHECK_KEYS, item,
                               known ? "checkpoint-key" : "checkpoint-key-time-unknown", why);
            } else {
                pass(s->rep, SV_CHECK_KEYS);
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Quotes */

static void check_quotes(const struct sv_policy *p, struct sv_report *rep, const char *dir,
                         const struct cp_rec *cps, size_t n, struct start_rec *starts,
                         size_t nstarts)
{
    struct sv_quote_policy qp;
    struct sv_quote_clock prev;
    int have_prev = 0;
    size_t k = 0; /* starts[0..k) are inside the current checkpoint's tree */

    if (p->quotes == 0 || p->ak_public == NULL)
        return;
    memset(&qp, 0, sizeof(qp));
    qp.pcr_mask = p->pcr_mask;
    memcpy(qp.pcr_values, p->pcr_values, sizeof(qp.pcr_values));
    qp.min_firmware_version = p->min_firmware_version;
    for (size_t i = 0; i < n; i++) {
        char rel[64], item[64], why[SV_WHY], w2[SV_WHY];
        uint8_t *att = NULL, *sig = NULL;
        size_t alen, slen;
        int missing = 0;
        char *pa, *ps;
        struct sv_quote_result res;
        enum sv_quote_reason r;

        if (i > 0 && cps[i].size == cps[i - 1].size)
            continue; /* `checkpoint` and its sworn/checkpoint copy share one quote */
        snprintf(item, sizeof(item), "sworn/quote/%llu", (unsigned long long)cps[i].size);
        snprintf(rel, sizeof(rel), "sworn/quote/%llu.attest", (unsigned long long)cps[i].size);
        pa = join(dir, rel);
        snprintf(rel, sizeof(rel), "sworn/quote/%llu.sig", (unsigned long long)cps[i].size);
        ps = join(dir, rel);
        if (pa == NULL || ps == NULL || sv_read_file(pa, 4096, &att, &alen, &missing, why) != 0) {
            if (missing && p->quotes == 2)
                sv_report_fail(rep, SV_CHECK_QUOTES, item, "quote-missing",
                               "the policy requires a quote for every checkpoint");
            else if (!missing)
                sv_report_fail(rep, SV_CHECK_QUOTES, item, "unreadable", why);
            free(pa);
            free(ps);
            continue;
        }
        if (sv_read_file(ps, 4096, &sig, &slen, NULL, why) != 0) {
            sv_report_fail(rep, SV_CHECK_QUOTES, item, "unreadable", why);
            free(att);
            free(pa);
            free(ps);
            continue;
        }
        if (p->measured_start) {
            /* PCR 23 must be the pcr23 of the newest start inside this checkpoint's tree. */
            while (k < nstarts && starts[k].index < cps[i].size)
                k++;
            if (k == 0 || !starts[k - 1].measured) {
                if (k == 0)
                    sv_report_fail(rep, SV_CHECK_MEASURED, item, "measured-start-missing",
                                   "no Startup entry precedes this quoted checkpoint: there is no "
                                   "PCR 23 value to expect");
                /* an unmeasured start failed already; its quotes cannot be checked */
                free(att);
                free(sig);
                free(pa);
                free(ps);
                continue;
            }
            memcpy(qp.pcr_values[23], starts[k - 1].after, 32);
        }
        r = sv_quote_check(&qp, p->ak_public, p->ak_public_len, att, alen, sig, slen,
                           cps[i].text_hash, &res, w2, sizeof(w2));
        if (r != SV_QUOTE_OK) {
            char code[32];

            snprintf(code, sizeof(code), "quote-%s", sv_quote_reason_name(r));
            sv_report_fail(rep, SV_CHECK_QUOTES, item, code, w2);
            if (rep->stats != NULL)
                sv_stats_mark(rep->stats, SV_MARK_QUOTE, cps[i].size, cps[i].time_ms, 0);
        } else {
            int gap = 0;
            enum sv_quote_order ord =
                have_prev ? sv_quote_time_order(&prev, &res.clock, &gap) : SV_ORDER_OK;

            if (ord == SV_ORDER_ROLLBACK || ord == SV_ORDER_REPLAY ||
                ord == SV_ORDER_RESET_CLOCK_BACK) {
                snprintf(why, sizeof(why),
                         "TPM time went %s against the previous quote (reset %u clock %llu, "
                         "then reset %u clock %llu)",
                         ord == SV_ORDER_REPLAY ? "nowhere (a replayed quote)"
                         : ord == SV_ORDER_RESET_CLOCK_BACK
                             ? "back across a reset the TPM says followed an orderly shutdown "
                               "(safe = 1): a restored TPM state or another TPM"
                             : "back",
                         prev.reset_count, (unsigned long long)prev.clock, res.clock.reset_count,
                         (unsigned long long)res.clock.clock);
                if (rep->stats != NULL)
                    sv_stats_mark(rep->stats, SV_MARK_QUOTE, cps[i].size, cps[i].time_ms, 0);
                sv_report_fail(rep, SV_CHECK_QUOTES, item,
                               ord == SV_ORDER_REPLAY             ? "quote-replay"
                               : ord == SV_ORDER_RESET_CLOCK_BACK ? "quote-reset-clock-back"
                                                                  : "quote-time-rollback",
                               why);
            } else {
                pass(rep, SV_CHECK_QUOTES);
                if (rep->stats != NULL)
                    sv_stats_mark(rep->stats, SV_MARK_QUOTE, cps[i].size, cps[i].time_ms, 1);
                if (p->measured_start) {
                    struct start_rec *st = &starts[k - 1];

                    if (!st->have_quote)
                        st->first_reset = res.clock.reset_count;
                    st->last_reset = res.clock.reset_count;
                    st->have_quote = 1;
                }
                if (gap && rep->checks[SV_CHECK_QUOTES].note[0] == '\0')
                    snprintf(rep->checks[SV_CHECK_QUOTES].note,
                             sizeof(rep->checks[SV_CHECK_QUOTES].note),
                             "possible gap (disorderly restart) before %s", item);
            }
            prev = res.clock;
            have_prev = 1;
        }
        free(att);
        free(sig);
        free(pa);
        free(ps);
    }
}

/* ------------------------------------------------------------------------------------------ */

/* The state file as loaded at the start of a run: its bytes, to see at the end whether it
 * changed meanwhile. */
struct state_in {
    int have;
    struct sv_checkpoint cp;
    uint8_t *bytes;
    size_t len;
};

/* Read the state file (never through a symbolic link: sv_read_file opens with O_NOFOLLOW and
 * takes only a regular file). A missing one is a first run. 0, or -1 with why. */
static int load_state(const struct sv_policy *p, const char *path, struct state_in *st, char *why)
{
    uint8_t *data;
    size_t len;
    int missing;
    enum sv_check_id failed;
    char code[32], w[SV_WHY];

    memset(st, 0, sizeof(*st));
    if (sv_read_file(path, SV_NOTE_MAX, &data, &len, &missing, w) != 0) {
        if (missing)
            return 0; /* the first run: no state yet */
        return sv_fail(why, "state: %s", w);
    }
    if (sv_verify_checkpoint_note(p, (const char *)data, len, SV_QUORUM_REQUIRED, NULL, &st->cp,
                                  NULL, &failed, code, w) != 0) {
        free(data);
        return sv_fail(why, "state file is not a checkpoint this policy accepts: %s", w);
    }
    st->have = 1;
    st->bytes = data;
    st->len = len;
    return 0;
}

/*
 * A passing run stores the note it verified (note, its tree size `size`), from memory: never a
 * second read of the record, which anyone who can write the record folder could have swapped
 * meanwhile for an older checkpoint, rolling the auditor's state back (issue 13, finding 3). The
 * state never moves backwards: when the state file changed during the run (another run, another
 * hand), it is checked as at the start: newer than `size` fails `rollback`, a size this run
 * verified (sizes[i], roots[i]) with another root fails `fork`, and either way it is kept; the
 * same size and root is kept as it is; a size this run did not see, or a file that is no
 * longer a checkpoint the policy accepts (or is a symbolic link now), is kept and the run ends
 * unreadable (2). Returns 0 (stored or kept), 1 (a failure was reported) or 2 (rep->unreadable).
 */
static int store_state(const struct sv_verify_opts *o, struct sv_report *rep,
                       const struct state_in *in, const uint8_t *note, size_t note_len,
                       uint64_t size, const uint64_t *sizes, const uint8_t (*roots)[SV_HASH],
                       size_t n)
{
    const struct sv_policy *p = o->policy;
    uint8_t *now;
    size_t now_len;
    int missing;
    struct sv_checkpoint cur;
    enum sv_check_id failed;
    char code[32], w[SV_WHY], why[SV_WHY];

    if (sv_read_file(o->state_path, SV_NOTE_MAX, &now, &now_len, &missing, w) != 0) {
        if (!missing) {
            rep->unreadable = 1;
            snprintf(rep->unreadable_why, sizeof(rep->unreadable_why),
                     "state: %.400s (it changed during the run; kept)", w);
            return 2;
        }
        now = NULL; /* absent (again): the note is stored */
    } else if (in->have && now_len == in->len && memcmp(now, in->bytes, now_len) == 0) {
        free(now);
        now = NULL; /* as loaded, and checked: the note is stored */
    }
    if (now != NULL) {
        /* Changed during the run: check it as a state is checked at the start. */
        size_t i;

        if (sv_verify_checkpoint_note(p, (const char *)now, now_len, SV_QUORUM_REQUIRED, NULL, &cur,
                                      NULL, &failed, code, w) != 0) {
            free(now);
            rep->unreadable = 1;
            snprintf(rep->unreadable_why, sizeof(rep->unreadable_why),
                     "state file changed during the run and is not a checkpoint this policy "
                     "accepts (kept): %.300s",
                     w);
            return 2;
        }
        free(now);
        rep->state_size = cur.size;
        if (cur.size > size) {
            snprintf(why, sizeof(why),
                     "the state file changed during the run to a checkpoint of size %llu, newer "
                     "than this record's newest (size %llu): kept; the record is older than "
                     "what was accepted",
                     (unsigned long long)cur.size, (unsigned long long)size);
            sv_report_fail(rep, SV_CHECK_STATE, "state", "rollback", why);
            return 1;
        }
        for (i = 0; i < n && sizes[i] != cur.size; i++)
            ;
        if (i == n) {
            rep->unreadable = 1;
            snprintf(rep->unreadable_why, sizeof(rep->unreadable_why),
                     "state file changed during the run to a checkpoint of size %llu, which this "
                     "run did not check (kept): run again",
                     (unsigned long long)cur.size);
            return 2;
        }
        if (memcmp(roots[i], cur.root, SV_HASH) != 0) {
            snprintf(why, sizeof(why),
                     "the state file changed during the run to a checkpoint of size %llu whose "
                     "root differs from the record's at that size: two signed trees (kept)",
                     (unsigned long long)cur.size);
            sv_report_fail(rep, SV_CHECK_STATE, "state", "fork", why);
            return 1;
        }
        if (cur.size == size)
            return 0; /* the same tree: nothing to move */
    }
    if (sv_write_file_atomic(o->state_path, note, note_len, w) != 0) {
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "%s", w);
        return 2;
    }
    rep->state_updated = 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* A bundle file (sworn-log export-bundle; docs/verifier.md section 9) */

#define BUNDLE_FILE_MAX ((size_t)256 << 20)

struct lines {
    const char *p, *end;
    uint64_t no;
};

/* The next line, which must start with tag; its rest in *rest (len *rlen). 0, or -1. */
static int next_line(struct lines *l, const char *tag, const char **rest, size_t *rlen)
{
    const char *nl;
    size_t tl = strlen(tag);

    if (l->p >= l->end)
        return -1;
    nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
    if (nl == NULL || (size_t)(nl - l->p) < tl || memcmp(l->p, tag, tl) != 0)
        return -1;
    *rest = l->p + tl;
    *rlen = (size_t)(nl - l->p) - tl;
    l->p = nl + 1;
    l->no++;
    return 0;
}

static int peek_tag(const struct lines *l, const char *tag)
{
    size_t tl = strlen(tag);

    return (size_t)(l->end - l->p) >= tl && memcmp(l->p, tag, tl) == 0;
}

/* Decode base64 of n characters into a fresh allocation. */
static uint8_t *b64_alloc(const char *s, size_t n, size_t *out_len)
{
    uint8_t *b = malloc(n / 4 * 3 + 1);
    long r;

    if (b == NULL)
        return NULL;
    r = n == 0 ? 0 : sv_b64_decode(s, n, b, n / 4 * 3 + 1);
    if (r < 0) {
        free(b);
        return NULL;
    }
    *out_len = (size_t)r;
    return b;
}

static int verify_bundle_file(const struct sv_verify_opts *o, struct sv_report *rep,
                              const struct state_in *sin)
{
    const struct sv_checkpoint *st = &sin->cp;
    int have_state = sin->have;
    const struct sv_policy *p = o->policy;
    struct stream s;
    struct lines l;
    uint8_t *data = NULL, *note = NULL, **entries = NULL, **receipts = NULL;
    size_t len, note_len = 0, *elen = NULL, *rlen = NULL, proof_n = 0, since_n = 0;
    uint8_t(*proof)[SV_HASH] = NULL, (*since_proof)[SV_HASH] = NULL, text_hash[SV_HASH],
    root_m[SV_HASH];
    struct cp_rec cp;
    uint64_t start = 0, count = 0, end, since = 0;
    const char *rest;
    size_t rl;
    char why[SV_WHY], item[64];
    int rc = 2, have_receipts = 0, state_ok = !have_state;
    const char *bad = NULL;

    memset(&s, 0, sizeof(s));
    if (sv_read_file(o->record, BUNDLE_FILE_MAX, &data, &len, NULL, why) != 0) {
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "%s", why);
        return 2;
    }
    l.p = (const char *)data;
    l.end = (const char *)data + len;
    l.no = 0;
    if (next_line(&l, "sworn bundle v1", &rest, &rl) != 0 || rl != 0 ||
        next_line(&l, "checkpoint ", &rest, &rl) != 0 ||
        (note = b64_alloc(rest, rl, &note_len)) == NULL ||
        next_line(&l, "start ", &rest, &rl) != 0 || sv_parse_u64(rest, rl, &start) != 0 ||
        next_line(&l, "count ", &rest, &rl) != 0 || sv_parse_u64(rest, rl, &count) != 0 ||
        count == 0 || count > 65536) {
        bad = "the header (sworn bundle v1, checkpoint, start, count 1..65536) is malformed";
        goto malformed;
    }
    if (take_checkpoint(p, rep, "bundle checkpoint", note, note_len, SV_QUORUM_REQUIRED, &cp) !=
        0) {
        rc = 1;
        goto out;
    }
    {
        struct sv_note n;

        (void)sv_note_parse((const char *)note, note_len, &n, why);
        sv_sha256(n.text, n.text_len, text_hash);
    }
    rep->size = cp.size;
    memcpy(rep->root, cp.root, SV_HASH);
    rep->checkpoints = 1;
    if (start >= cp.size || count > cp.size - start) {
        bad = "the range is not inside the checkpoint's tree";
        goto malformed;
    }
    end = start + count;
    /* The compact range of [0, start): its roots, largest first, one per set bit. */
    sv_range_init(&s.range);
    for (int k = 63; k >= 0; k--) {
        if (!(start >> k & 1))
            continue;
        if (next_line(&l, "left ", &rest, &rl) != 0 || rl != 44 ||
            sv_b64_decode(rest, 44, s.range.roots[s.range.n], SV_HASH) != SV_HASH) {
            bad = "a 'left' hash is missing or malformed";
            goto malformed;
        }
        s.range.heights[s.range.n++] = (uint8_t)k;
    }
    s.range.size = start;
    entries = calloc(count, sizeof(*entries));
    receipts = calloc(count, sizeof(*receipts));
    elen = calloc(count, sizeof(*elen));
    rlen = calloc(count, sizeof(*rlen));
    proof = calloc(SV_PROOF_MAX, SV_HASH);
    if (entries == NULL || receipts == NULL || elen == NULL || rlen == NULL || proof == NULL)
        goto out;
    for (uint64_t i = 0; i < count; i++)
        if (next_line(&l, "entry ", &rest, &rl) != 0 ||
            (entries[i] = b64_alloc(rest, rl, &elen[i])) == NULL || elen[i] > 65535) {
            bad = "an 'entry' line is missing or malformed";
            goto malformed;
        }
    if (peek_tag(&l, "receipt ")) {
        have_receipts = 1;
        for (uint64_t i = 0; i < count; i++) {
            if (next_line(&l, "receipt ", &rest, &rl) != 0) {
                bad = "fewer 'receipt' lines than entries";
                goto malformed;
            }
            if (rl == 1 && rest[0] == '-')
                continue;
            if ((receipts[i] = b64_alloc(rest, rl, &rlen[i])) == NULL || rlen[i] == 0) {
                bad = "a 'receipt' line is malformed";
                goto malformed;
            }
        }
    }
    while (peek_tag(&l, "proof ")) {
        if (proof_n == SV_PROOF_MAX || next_line(&l, "proof ", &rest, &rl) != 0 || rl != 44 ||
            sv_b64_decode(rest, 44, proof[proof_n], SV_HASH) != SV_HASH) {
            bad = "a 'proof' line is malformed, or more than 128";
            goto malformed;
        }
        proof_n++;
    }
    /* The optional tie to an auditor's saved tree (`sworn-log export-bundle --old M`). */
    if (peek_tag(&l, "since ")) {
        if (next_line(&l, "since ", &rest, &rl) != 0 || sv_parse_u64(rest, rl, &since) != 0 ||
            since == 0 || since > cp.size ||
            (since_proof = calloc(SV_PROOF_MAX, SV_HASH)) == NULL) {
            bad = "the 'since' line is malformed (a tree size 1..the checkpoint's)";
            goto malformed;
        }
        while (peek_tag(&l, "since-proof ")) {
            if (since_n == SV_PROOF_MAX || next_line(&l, "since-proof ", &rest, &rl) != 0 ||
                rl != 44 || sv_b64_decode(rest, 44, since_proof[since_n], SV_HASH) != SV_HASH) {
                bad = "a 'since-proof' line is malformed, or more than 128";
                goto malformed;
            }
            since_n++;
        }
    }
    /* Entries: content, receipts, leaves. */
    s.o = o;
    s.rep = rep;
    if ((s.ids = sv_ids_new()) == NULL)
        sv_report_fail(rep, SV_CHECK_ESCALATIONS, "log", "internal",
                       "out of memory or randomness: request ids not checked");
    s.partial = start > 0;
    s.first_index = start;
    if (load_keys(&s) != 0) {
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "out of memory");
        goto out; /* rc 2 */
    }
    pass(rep, SV_CHECK_BUNDLES);
    for (uint64_t i = 0; i < count; i++) {
        uint8_t leaf[SV_HASH];

        sv_leaf_hash(entries[i], elen[i], leaf);
        /* No receipt lines: every allow of the range is a missing receipt, as in a folder
         * without its receipts files (a bundle cannot drop its receipts to skip them). */
        if (p->sworn_entries)
            check_entry(&s, start + i, entries[i], elen[i], leaf, receipts[i], rlen[i], 1);
        sv_range_push(&s.range, leaf);
        if (s.njobs == SV_TILE_WIDTH || i + 1 == count)
            finish_receipts(&s);
        if (o->progress != NULL && ((i + 1) % 256 == 0 || i + 1 == count))
            o->progress(i + 1, count, o->progress_arg);
    }
    if (p->sworn_entries && !have_receipts && rep->checks[SV_CHECK_RECEIPTS].status != SV_FAIL)
        snprintf(rep->checks[SV_CHECK_RECEIPTS].note, sizeof(rep->checks[0].note),
                 "the bundle carries no receipt lines (its range holds no allow)");
    if (p->sworn_entries && s.rkeys == NULL && rep->checks[SV_CHECK_RECEIPTS].status != SV_FAIL &&
        have_receipts)
        snprintf(rep->checks[SV_CHECK_RECEIPTS].note, sizeof(rep->checks[0].note),
                 "no receipt keys in the policy: receipt signatures not checked");
    /* Keys: the checkpoint's signing key valid at the newest time of the range's entries (its
     * own time when the range reaches it; otherwise the checkpoint is later still). */
    cp.time_ms = s.last_time_ms;
    check_checkpoint_keys(&s, &cp, 1, end < cp.size);
    if (s.keys != NULL && end < cp.size && rep->checks[SV_CHECK_KEYS].status != SV_FAIL)
        snprintf(rep->checks[SV_CHECK_KEYS].note, sizeof(rep->checks[0].note),
                 "the bundle ends before its checkpoint, whose own time it does not show: the "
                 "checkpoint key was checked not to have ended by the range's newest entry");
    if (s.unseen_policies > 0 || s.opens_with_policy) {
        char *pnote = rep->checks[SV_CHECK_POLICY].note;
        size_t cap = sizeof(rep->checks[0].note), used = 0;

        if (s.unseen_policies > 0)
            used = (size_t)snprintf(pnote, cap,
                                    "%llu decision(s) name a policy loaded before this range: "
                                    "verify the whole log to check them",
                                    (unsigned long long)s.unseen_policies);
        if (s.opens_with_policy && used < cap)
            snprintf(pnote + used, cap - used,
                     "%sthe range opens with a PolicyLoaded entry: if a Startup entry precedes "
                     "it, the policy that start measured is not compared",
                     used > 0 ? "; " : "");
    }
    unseen_repeats(&s, SV_CHECK_ESCALATIONS, s.unseen_res, s.nunseen_res, "resolution-twice",
                   "one escalation resolved twice");
    unseen_repeats(&s, SV_CHECK_EXCHANGES, s.unseen_ex, s.nunseen_ex, "exchange-allow-reused",
                   "one allow backs two exchanges");
    if (s.unseen_sandboxes > 0)
        snprintf(rep->checks[SV_CHECK_SANDBOXES].note, sizeof(rep->checks[0].note),
                 "%llu entries name a sandbox started before this range: verify the whole log "
                 "to check them",
                 (unsigned long long)s.unseen_sandboxes);
    if (s.unseen_escalations > 0)
        snprintf(rep->checks[SV_CHECK_ESCALATIONS].note, sizeof(rep->checks[0].note),
                 "%llu resolution(s) name an escalate entry before this range: verify the whole "
                 "log to check them",
                 (unsigned long long)s.unseen_escalations);
    exchanges_note(&s);
    receipts_note(&s);
    usage_note(&s);
    witness_note(&s);
    /* The root of the first `end` leaves, then the checkpoint's root from it and the proof. */
    sv_range_root(&s.range, root_m);
    snprintf(item, sizeof(item), "checkpoint %llu", (unsigned long long)cp.size);
    if (end == cp.size ? memcmp(root_m, cp.root, SV_HASH) != 0 || proof_n != 0
                       : sv_verify_consistency(end, cp.size, root_m, cp.root,
                                               (const uint8_t(*)[SV_HASH])proof, proof_n, why) != 0)
        sv_report_fail(rep, SV_CHECK_ROOTS, item, "root-mismatch",
                       "the entries, left hashes and proof do not lead to this signed "
                       "checkpoint's root");
    else
        pass(rep, SV_CHECK_ROOTS);
    /* The checkpoint's time is known only when the range reaches it (cp.time_ms, set above). */
    if (rep->stats != NULL)
        sv_stats_mark(rep->stats, SV_MARK_CHECKPOINT, cp.size, end == cp.size ? cp.time_ms : 0,
                      rep->checks[SV_CHECK_ROOTS].status == SV_PASS);
    /* State: what can be checked against one checkpoint and one prefix. */
    if (have_state) {
        if (st->size > cp.size) {
            sv_report_fail(rep, SV_CHECK_STATE, "state", "rollback",
                           "the bundle's checkpoint is older than the one accepted before");
        } else if (st->size == cp.size || st->size == end) {
            const uint8_t *r = st->size == cp.size ? cp.root : root_m;

            if (memcmp(r, st->root, SV_HASH) != 0)
                sv_report_fail(rep, SV_CHECK_STATE, "state", "fork",
                               "the tree at the saved size has another root: the log forked");
            else {
                pass(rep, SV_CHECK_STATE);
                state_ok = 1;
            }
        } else if (since == st->size) {
            /* The range does not reach the saved size: the bundle's own proof from it does. */
            if (sv_verify_consistency(st->size, cp.size, st->root, cp.root,
                                      (const uint8_t(*)[SV_HASH])since_proof, since_n, why) != 0)
                sv_report_fail(rep, SV_CHECK_STATE, "state", "fork",
                               "the bundle's checkpoint does not extend the tree accepted before "
                               "(its since-proof fails): the log forked");
            else {
                pass(rep, SV_CHECK_STATE);
                state_ok = 1;
            }
        } else {
            /* Nothing ties this checkpoint to the saved tree: a fork would pass unseen, so the
             * state check fails rather than notes it (found attacking issue 13's fixes). */
            snprintf(why, sizeof(why),
                     "the bundle covers the tree sizes %llu and %llu and carries no proof from "
                     "the saved size %llu (export it with --old %llu, or verify the folder)",
                     (unsigned long long)end, (unsigned long long)cp.size,
                     (unsigned long long)st->size, (unsigned long long)st->size);
            sv_report_fail(rep, SV_CHECK_STATE, "state", "state-unconnected", why);
        }
    }
    /* The quote, when there is one. */
    if (peek_tag(&l, "quote ")) {
        const char *sp;
        uint8_t *att = NULL, *sig = NULL;
        size_t alen = 0, slen = 0;

        if (next_line(&l, "quote ", &rest, &rl) != 0 || (sp = memchr(rest, ' ', rl)) == NULL ||
            (att = b64_alloc(rest, (size_t)(sp - rest), &alen)) == NULL ||
            (sig = b64_alloc(sp + 1, rl - (size_t)(sp - rest) - 1, &slen)) == NULL) {
            free(att);
            bad = "the 'quote' line is malformed";
            goto malformed;
        }
        int in_force = -1; /* measured-start: the start whose pcr23 the quote must show */

        /* Only when the bundle reaches its checkpoint is its newest start the one in force.
         * When it is not shown, PCR 23 cannot be expected, but the rest of the quote can and
         * must be checked: the AK's signature over a TPM-made quote of this very checkpoint
         * (issue 13 finding 9: random bytes met `quotes require`). */
        if (p->measured_start && end == cp.size && s.nstarts > 0 &&
            s.starts[s.nstarts - 1].measured)
            in_force = (int)(s.nstarts - 1);
        if (p->quotes > 0 && p->ak_public != NULL) {
            struct sv_quote_policy qp;
            struct sv_quote_result res;
            enum sv_quote_reason r;

            memset(&qp, 0, sizeof(qp));
            qp.pcr_mask = p->pcr_mask;
            memcpy(qp.pcr_values, p->pcr_values, sizeof(qp.pcr_values));
            if (in_force >= 0)
                memcpy(qp.pcr_values[23], s.starts[in_force].after, 32);
            qp.pcr_values_unknown = p->measured_start && in_force < 0;
            qp.min_firmware_version = p->min_firmware_version;
            r = sv_quote_check(&qp, p->ak_public, p->ak_public_len, att, alen, sig, slen, text_hash,
                               &res, why, sizeof(why));
            if (r != SV_QUOTE_OK) {
                char code[32];

                snprintf(code, sizeof(code), "quote-%s", sv_quote_reason_name(r));
                sv_report_fail(rep, SV_CHECK_QUOTES, "bundle quote", code, why);
            } else {
                pass(rep, SV_CHECK_QUOTES);
            }
            if (rep->stats != NULL)
                sv_stats_mark(rep->stats, SV_MARK_QUOTE, cp.size, end == cp.size ? cp.time_ms : 0,
                              r == SV_QUOTE_OK);
            if (r == SV_QUOTE_OK) {
                if (qp.pcr_values_unknown)
                    snprintf(rep->checks[SV_CHECK_QUOTES].note, sizeof(rep->checks[0].note),
                             "the bundle does not show the start in force at its checkpoint (no "
                             "measured Startup entry up to size %llu): its quote's AK signature "
                             "and checkpoint hash verify, its PCR 23 is not checked",
                             (unsigned long long)cp.size);
            }
        }
        free(att);
        free(sig);
    } else if (p->quotes == 2) {
        sv_report_fail(rep, SV_CHECK_QUOTES, "bundle quote", "quote-missing",
                       "the policy requires a quote and the bundle has none");
    }
    if (l.p != l.end) {
        bad = "unexpected lines after the bundle's last section";
        goto malformed;
    }
    separation_note(&s);
    if (p->measured_start && s.nstarts > 1)
        snprintf(rep->checks[SV_CHECK_MEASURED].note, sizeof(rep->checks[0].note),
                 "the chain of the bundle's %zu starts is not checked: a TPM reset between them "
                 "shows only in the whole record's quotes",
                 s.nstarts);
    rc = sv_report_failed(rep) ? 1 : 0;
    if (rc == 0 && o->state_path != NULL && state_ok) {
        /* The bundle's own checkpoint note, verified above, from memory. */
        uint64_t sizes[2] = {end, cp.size};
        uint8_t roots[2][SV_HASH];

        memcpy(roots[0], root_m, SV_HASH);
        memcpy(roots[1], cp.root, SV_HASH);
        rc = store_state(o, rep, sin, note, note_len, cp.size, sizes,
                         (const uint8_t(*)[SV_HASH])roots, 2);
    }
    goto out;
malformed:
    snprintf(why, sizeof(why), "line %llu: %s", (unsigned long long)l.no + 1, bad);
    sv_report_fail(rep, SV_CHECK_BUNDLES, o->record, "bundle-malformed", why);
    rc = 1;
out:
    for (uint64_t i = 0; entries != NULL && i < count; i++)
        free(entries[i]);
    for (uint64_t i = 0; receipts != NULL && i < count; i++)
        free(receipts[i]);
    free(entries);
    free(receipts);
    free(elen);
    free(rlen);
    free(proof);
    free(since_proof);
    free(s.jobs);
    sv_receipt_keys_free(s.rkeys);
    sv_keyring_free(s.keys);
    free(s.digests);
    free(s.starts);
    free(s.startup_at);
    free_escalations(&s);
    free(s.sbxs);
    sv_ids_free(s.ids);
    free(s.callows);
    free(s.mallows);
    free(s.repl);
    free(s.unseen_res);
    free(s.unseen_ex);
    free(note);
    free(data);
    return rc;
}

int sv_verify_record(const struct sv_verify_opts *o, struct sv_report *rep)
{
    const struct sv_policy *p = o->policy;
    struct stream s;
    struct cp_rec *cps = NULL;
    size_t ncps = 0;
    struct state_in sin;
    const struct sv_checkpoint *stp = &sin.cp;
    int have_state;
    uint8_t *newest = NULL;
    size_t newest_len = 0;
    uint64_t size;
    char why[SV_WHY];
    int rc;

    memset(rep, 0, sizeof(*rep));
    rep->stats = o->stats;
    memset(&s, 0, sizeof(s));
    copy_cut(rep->record, sizeof(rep->record), o->record);
    snprintf(rep->origin, sizeof(rep->origin), "%s", p->origin);
    memset(&sin, 0, sizeof(sin));
    if (o->state_path != NULL && load_state(p, o->state_path, &sin, why) != 0) {
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "%s", why);
        return 2;
    }
    have_state = sin.have;
    {
        struct stat sb;

        if (stat(o->record, &sb) == 0 && S_ISREG(sb.st_mode)) {
            rc = verify_bundle_file(o, rep, &sin);
            free(sin.bytes);
            return rc;
        }
    }
    if (load_checkpoints(p, rep, o->record, &cps, &ncps, &newest, &newest_len) != 0) {
        free(sin.bytes);
        if (!rep->unreadable) {
            rep->unreadable = 1;
            snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "out of memory");
        }
        return 2;
    }
    if (ncps == 0) {
        free(cps);
        free(newest);
        free(sin.bytes);
        return 1; /* no checkpoint verified: the failures say why */
    }
    /* The tree to verify is the largest verified checkpoint; `checkpoint` should be it. */
    size = cps[ncps - 1].size;
    if (!cps[ncps - 1].newest) {
        int newest_ok = 0;

        for (size_t i = 0; i < ncps; i++)
            if (cps[i].newest && cps[i].size == size)
                newest_ok = 1;
        if (!newest_ok)
            sv_report_fail(rep, SV_CHECK_CHECKPOINTS, "checkpoint", "stale-checkpoint",
                           "the record's history holds a larger checkpoint than its newest");
    }
    rep->size = size;
    memcpy(rep->root, cps[ncps - 1].root, SV_HASH);
    rep->checkpoints = ncps;
    if (have_state) {
        rep->state_size = stp->size;
        if (stp->size > size) {
            snprintf(why, sizeof(why),
                     "the record's newest checkpoint (size %llu) is older than the one accepted "
                     "before (size %llu): the record was rolled back or truncated",
                     (unsigned long long)size, (unsigned long long)stp->size);
            sv_report_fail(rep, SV_CHECK_STATE, "state", "rollback", why);
        } else {
            s.use_state = 1;
            s.state_size = stp->size;
            memcpy(s.state_root, stp->root, SV_HASH);
        }
    }
    s.o = o;
    s.rep = rep;
    if ((s.ids = sv_ids_new()) == NULL)
        sv_report_fail(rep, SV_CHECK_ESCALATIONS, "log", "internal",
                       "out of memory or randomness: request ids not checked");
    s.cps = cps;
    s.ncps = ncps;
    sv_range_init(&s.range);
    s.level = calloc(LEVELS, sizeof(*s.level));
    if (s.level == NULL) {
        free(cps);
        free(newest);
        free(sin.bytes);
        return 2;
    }
    if (load_keys(&s) != 0) {
        rep->unreadable = 1;
        snprintf(rep->unreadable_why, sizeof(rep->unreadable_why), "out of memory");
        rc = 2;
        goto done;
    }
    check_roots(&s); /* checkpoints (and a state) of size 0 */
    for (uint64_t b = 0; b * SV_TILE_WIDTH < size; b++) {
        uint64_t left = size - b * SV_TILE_WIDTH;
        unsigned w = left >= SV_TILE_WIDTH ? SV_TILE_WIDTH : (unsigned)left;

        if (stream_bundle(&s, b, w) != 0)
            break; /* the tree cannot be recomputed past a missing or broken bundle */
        if (o->progress != NULL)
            o->progress(s.range.size, size, o->progress_arg);
    }
    if (s.range.size == size) {
        /* The rightmost partial tiles of every level. */
        for (unsigned l = 0; l < LEVELS; l++)
            if (s.fill[l] > 0)
                check_tile(&s, l, s.tile_index[l], s.fill[l]);
    } else {
        snprintf(why, sizeof(why), "only %llu of the %llu entries could be read",
                 (unsigned long long)s.range.size, (unsigned long long)size);
        sv_report_fail(rep, SV_CHECK_ROOTS, "log", "truncated", why);
    }
    /* Keys: every checkpoint's signing key valid when it signed. */
    check_checkpoint_keys(&s, cps, ncps, 0);
    if (p->sworn_entries && s.rkeys == NULL && rep->checks[SV_CHECK_RECEIPTS].status != SV_FAIL)
        snprintf(rep->checks[SV_CHECK_RECEIPTS].note, sizeof(rep->checks[0].note),
                 "no receipt keys in the policy: receipt signatures not checked");
    check_quotes(p, rep, o->record, cps, ncps, s.starts, s.nstarts);
    if (p->measured_start) {
        if (s.nstarts == 0)
            sv_report_fail(rep, SV_CHECK_MEASURED, "log", "measured-start-missing",
                           "the policy expects measured starts and the record holds no Startup "
                           "entry");
        check_start_chain(&s);
    }
    separation_note(&s);
    exchanges_note(&s);
    receipts_note(&s);
    usage_note(&s);
    witness_note(&s);
    rc = sv_report_failed(rep) ? 1 : 0;
    if (rc == 0 && o->state_path != NULL) {
        /* Accept the newest checkpoint: store the very note verified above, from memory. A
         * passing run has one: `checkpoint` verified, is the largest (else stale-checkpoint)
         * and its root was recomputed from the entries (roots). */
        uint64_t *sizes = calloc(ncps, sizeof(*sizes));
        uint8_t(*roots)[SV_HASH] = calloc(ncps, sizeof(*roots));

        if (newest == NULL || sizes == NULL || roots == NULL) {
            rep->unreadable = 1;
            snprintf(rep->unreadable_why, sizeof(rep->unreadable_why),
                     "state: out of memory, or no verified `checkpoint` note to store");
            rc = 2;
        } else {
            for (size_t i = 0; i < ncps; i++) {
                sizes[i] = cps[i].size;
                memcpy(roots[i], cps[i].root, SV_HASH);
            }
            rc = store_state(o, rep, &sin, newest, newest_len, size, sizes,
                             (const uint8_t(*)[SV_HASH])roots, ncps);
        }
        free(sizes);
        free(roots);
    }
done:
    free(newest);
    free(sin.bytes);
    free(s.jobs);
    sv_receipt_keys_free(s.rkeys);
    sv_keyring_free(s.keys);
    free(s.digests);
    free(s.starts);
    free(s.startup_at);
    free_escalations(&s);
    free(s.sbxs);
    sv_ids_free(s.ids);
    free(s.callows);
    free(s.mallows);
    free(s.repl);
    free(s.unseen_res);
    free(s.unseen_ex);
    free(s.level);
    free(cps);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Reports */

/* Strings in the report may quote the record (origin, entry fields, file names): escaped. */
void sv_json_string(FILE *out, const char *s)
{
    sv_print_json_string(out, s);
}

static const char *status_name(enum sv_status s)
{
    return s == SV_PASS ? "pass" : s == SV_FAIL ? "fail" : "skipped";
}

/* The conformance reports of the record (docs/verifier.md, "Conformance reports"): who ran what,
 * when, with which result, at which index. What they claim is the operator's word. */
static void print_reports_json(const struct sv_report *r, FILE *out)
{
    size_t n = r->reports < SV_REPORTS_LISTED ? (size_t)r->reports : SV_REPORTS_LISTED;

    fprintf(out, ",\"reports\":%llu,\"report_list\":[", (unsigned long long)r->reports);
    for (size_t i = 0; i < n; i++) {
        const struct sv_listed_report *l = &r->report_list[i];
        char sha[2 * SV_HASH + 1], set[2 * SV_HASH + 1];

        sv_hex(l->c.report_sha256, SV_HASH, sha);
        sv_hex(l->c.probe_set_sha256, SV_HASH, set);
        fprintf(out,
                "%s{\"index\":%llu,\"result\":\"%s\",\"tier\":\"T%u\",\"only\":%zu,"
                "\"passed\":%u,\"failed\":%u,\"skipped\":%u,\"errors\":%u,\"operator_name\":",
                i ? "," : "", (unsigned long long)l->index, l->c.pass ? "pass" : "fail", l->c.tier,
                l->c.n_only, l->c.passed, l->c.failed, l->c.skipped, l->c.errors);
        sv_json_string(out, l->c.operator_name);
        fprintf(out, ",\"operator_uid\":%u,\"operator_user\":", l->c.operator_uid);
        sv_json_string(out, l->c.operator_user);
        fprintf(out, ",\"recorded_by\":");
        sv_json_string(out, l->c.recorded_by);
        fprintf(out,
                ",\"peer_uid\":%u,\"started_unix_ms\":%llu,\"ended_unix_ms\":%llu,"
                "\"recorded_unix_ms\":%llu,\"checkpoint_size\":%llu,\"startup_index\":%llu,"
                "\"probe_set_sha256\":\"%s\",\"report_sha256\":\"%s\",\"report_length\":%llu,"
                "\"file\":\"%s\",\"verified\":%s}",
                l->c.peer_uid, (unsigned long long)l->c.started_ms,
                (unsigned long long)l->c.ended_ms, (unsigned long long)l->c.time_ms,
                (unsigned long long)l->c.checkpoint_size, (unsigned long long)l->c.startup_index,
                set, sha, (unsigned long long)l->c.report_length,
                l->file == 1  ? "matches"
                : l->file < 0 ? "mismatch"
                              : "absent",
                l->ok ? "true" : "false");
    }
    fprintf(out, "]");
}

/* Text bytes outside printable ASCII as \xNN (names are the operator's). */
static void put_plain(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '\\')
            fprintf(out, "\\x%02x", *p);
        else
            fputc(*p, out);
}

static void print_reports_text(const struct sv_report *r, FILE *out)
{
    size_t n = r->reports < SV_REPORTS_LISTED ? (size_t)r->reports : SV_REPORTS_LISTED;

    if (r->reports == 0)
        return;
    fprintf(out,
            "reports %llu conformance report(s) recorded (each the operator's claim, signed by "
            "the deployment's key only as recorded; a pass means no failure found under those "
            "probes):\n",
            (unsigned long long)r->reports);
    for (size_t i = 0; i < n; i++) {
        const struct sv_listed_report *l = &r->report_list[i];
        char sha[2 * SV_HASH + 1];

        sv_hex(l->c.report_sha256, SV_HASH, sha);
        fprintf(out,
                "  entry %llu: %s, tier T%u%s, %u passed, %u failed, %u skipped, %u errors; "
                "run by ",
                (unsigned long long)l->index, l->c.pass ? "pass" : "FAIL", l->c.tier,
                l->c.n_only > 0 ? " (--only)" : "", l->c.passed, l->c.failed, l->c.skipped,
                l->c.errors);
        put_plain(out, l->c.operator_name);
        fprintf(out, " (uid %u, user ", l->c.operator_uid);
        put_plain(out, l->c.operator_user);
        fprintf(out, "), submitted by ");
        put_plain(out, l->c.recorded_by);
        fprintf(out, " (uid %u), from checkpoint %llu; report sha256 %s (%s)%s\n", l->c.peer_uid,
                (unsigned long long)l->c.checkpoint_size, sha,
                l->file == 1  ? "file beside the record matches"
                : l->file < 0 ? "FILE MISMATCH"
                              : "no file beside the record",
                l->ok ? "" : "; FAILED its checks");
    }
    if (r->reports > n)
        fprintf(out, "  (%llu more)\n", (unsigned long long)(r->reports - n));
}

void sv_report_print_json(const struct sv_report *r, FILE *out)
{
    char root[64];

    sv_b64_encode(r->root, SV_HASH, root, sizeof(root));
    fprintf(out, "{\"tool\":\"sworn-verify\",\"report_version\":1,\"record\":");
    sv_json_string(out, r->record);
    fprintf(out, ",\"origin\":");
    sv_json_string(out, r->origin);
    fprintf(out, ",\"result\":\"%s\"",
            r->unreadable         ? "unreadable"
            : sv_report_failed(r) ? "fail"
                                  : "pass");
    if (r->unreadable) {
        fprintf(out, ",\"error\":");
        sv_json_string(out, r->unreadable_why);
    }
    fprintf(out, ",\"tree_size\":%llu,\"root\":\"%s\",\"checkpoints\":%llu",
            (unsigned long long)r->size, root, (unsigned long long)r->checkpoints);
    fprintf(out, ",\"state_size\":%llu,\"state_updated\":%s", (unsigned long long)r->state_size,
            r->state_updated ? "true" : "false");
    fprintf(out, ",\"development\":%s", r->development ? "true" : "false");
    fprintf(out, ",\"refused\":%llu,\"refusals_dropped\":%llu,\"refusal_summaries\":%llu",
            (unsigned long long)r->refused, (unsigned long long)r->refusals_dropped,
            (unsigned long long)r->refusal_summaries);
    fprintf(out, ",\"clock_behind\":%llu", (unsigned long long)r->clock_behind);
    fprintf(out, ",\"checkpoints_below_quorum\":%llu,\"witness_alarms\":%llu",
            (unsigned long long)r->below_quorum, (unsigned long long)r->witness_alarms);
    print_reports_json(r, out);
    fprintf(out, ",\"checks\":[");
    for (int i = 0; i < SV_CHECK_COUNT; i++) {
        const struct sv_check *c = &r->checks[i];

        fprintf(out, "%s{\"name\":\"%s\",\"result\":\"%s\",\"count\":%llu,\"failures\":%llu",
                i ? "," : "", check_names[i], status_name(c->status), (unsigned long long)c->count,
                (unsigned long long)c->failures);
        if (c->status == SV_FAIL) {
            fprintf(out, ",\"first_failure\":{\"item\":");
            sv_json_string(out, c->item);
            fprintf(out, ",\"reason\":");
            sv_json_string(out, c->code);
            fprintf(out, ",\"message\":");
            sv_json_string(out, c->why);
            fprintf(out, "}");
        }
        if (c->note[0] != '\0') {
            fprintf(out, ",\"note\":");
            sv_json_string(out, c->note);
        }
        fprintf(out, "}");
    }
    fprintf(out, "]}\n");
}

void sv_report_print_text(const struct sv_report *r, FILE *out)
{
    char root[64];

    /* Every string that may quote the record is escaped (sv_print_text): the record's bytes
     * never reach the auditor's terminal as they are. */
    if (r->unreadable) {
        fputs("UNREADABLE ", out);
        sv_print_text(out, r->record);
        fputs(": ", out);
        sv_print_text(out, r->unreadable_why);
        fputc('\n', out);
        return;
    }
    sv_b64_encode(r->root, SV_HASH, root, sizeof(root));
    fputs("record  ", out);
    sv_print_text(out, r->record);
    fputs("\norigin  ", out);
    sv_print_text(out, r->origin);
    fprintf(out, "\ntree    %llu entries, root %s, %llu checkpoint(s)\n",
            (unsigned long long)r->size, root, (unsigned long long)r->checkpoints);
    for (int i = 0; i < SV_CHECK_COUNT; i++) {
        const struct sv_check *c = &r->checks[i];

        fprintf(out, "  %-7s %-22s %llu checked",
                c->status == SV_PASS   ? "ok"
                : c->status == SV_FAIL ? "FAILED"
                                       : "-",
                check_names[i], (unsigned long long)c->count);
        if (c->status == SV_FAIL) {
            fprintf(out, ", %llu failed; first: ", (unsigned long long)c->failures);
            sv_print_text(out, c->item);
            fputs(": ", out);
            sv_print_text(out, c->why);
            fputs(" (", out);
            sv_print_text(out, c->code);
            fputc(')', out);
        }
        fputc('\n', out);
        if (c->note[0] != '\0') {
            fputs("          note: ", out);
            sv_print_text(out, c->note);
            fputc('\n', out);
        }
    }
    if (r->development)
        fprintf(out, "development  the record shows a development start (hardening.development): "
                     "not Accountable\n");
    if (r->refused > 0 || r->refusal_summaries > 0)
        fprintf(out,
                "refusals %llu recorded; %llu more dropped by decisiond's quotas, counted in %llu "
                "summaries\n",
                (unsigned long long)r->refused, (unsigned long long)r->refusals_dropped,
                (unsigned long long)r->refusal_summaries);
    if (r->clock_behind > 0)
        fprintf(out,
                "clock   %llu time mark(s) show decisiond's clock behind the record (an NTP step "
                "or a VM restore): time stamps are not in log order there\n",
                (unsigned long long)r->clock_behind);
    if (r->witness_alarms > 0)
        fprintf(out,
                "witness %llu consistency alarm(s) recorded: a witness holds a tree of this log's "
                "origin that the log does not extend (a fork or a rollback; see the "
                "witness-quorum note)\n",
                (unsigned long long)r->witness_alarms);
    print_reports_text(r, out);
    if (r->state_size > 0 || r->state_updated)
        fprintf(out, "state   previously accepted size %llu%s\n", (unsigned long long)r->state_size,
                r->state_updated ? "; updated to this record's newest checkpoint" : "");
    fprintf(out, "%s\n", sv_report_failed(r) ? "VERIFICATION FAILED" : "all checks passed");
}
