/*
 * c_probes_host.c -- the probes that look at the control plane's running processes and files on
 * the host, as the operator would (c_probes.h): T3.measured-start.
 *
 * The measured start is the newest Startup entry of the record (decisiond's StartupMeasurement:
 * the digests of its binaries, configuration and policy as it started). What it is compared with,
 * and why:
 *   executable, signer  the image each running process of that path runs: /proc/PID/exe opened
 *                       and hashed, which is the file the kernel mapped even when the path was
 *                       replaced or removed since (then the link ends in " (deleted)"). No
 *                       running process of the measured executable is a failure: the decisiond
 *                       that runs is not the one measured. A signer path no process runs (a
 *                       signer that is not a separate program) is compared on disk;
 *   config, extra       the file at its path: decisiond reads them at start only, so a file that
 *                       differs is a start the record does not describe (a restart would run
 *                       it, and an auditor reading the host sees it);
 *   policy              reported only: a policy reload is recorded by its own PolicyLoaded entry.
 * Which processes: the host may run other deployments of the same binaries (the same paths), so
 * the processes of this deployment are the ones of the measured executable whose command line
 * names the measured configuration file (decisiond's --config), and their descendants (the engine,
 * the signer). When no process names it (a configuration found by default), every process of the
 * measured paths counts, and the evidence says so.
 * Reading another user's /proc/PID/exe needs root (or that user): a process whose link cannot be
 * read makes "none runs it" unknowable, so the probe then ends in an error, never a failure.
 *
 * The TPM now. The files say what the host holds; the TPM says what it measured. When the start
 * was measured into PCR 23 (its Startup entry has pcr23) and the deployment file names the admin
 * socket, the probe appends a mark (one request of the deployment's denied shape on the decision
 * socket: decisiond checkpoints only a log that grew, so without it an idle log would answer
 * with an old checkpoint and an old quote; no requests in the file, no mark: "not attested"),
 * asks decisiond for a checkpoint now, which must hold the mark (CheckpointNow waits for its
 * quote), and
 * the auditor's sworn-verify, under the auditor's trust policy, checks every quote of the record,
 * this fresh one included: with `measured-start record` each quote must show the pcr23 of the
 * start in force, which replays from the files this probe compared. So what the TPM reports at
 * the time of the run is the measured start, and nothing run since extended PCR 23. A fresh
 * checkpoint without a quote, while the start was measured, is a failure (the TPM stopped
 * attesting); a trust policy that does not check quotes, or does not tie them to the record's
 * starts, is said in the evidence and the result ("not attested"), never passed as attested.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "c_probes.h"
#include "c_record.h"
#include "c_verify.h"
#include "encoding.h"
#include "err.h"
#include "sworn.pb-c.h"

#define MEASURED_MAX 256u

struct mfile {
    Sworn__V1__MeasuredRole role;
    char path[1024];
    uint8_t sha256[32];
};

struct newest {
    struct mfile *files;
    size_t n;
    uint64_t index;
    int found;
    int measured; /* its pcr23 is set: the start was extended into a TPM's PCR 23 */
};

static int take_startup(void *arg, uint64_t index, const struct Sworn__V1__Entry *e)
{
    struct newest *w = arg;
    const Sworn__V1__StartupMeasurement *st;

    if (e == NULL || e->kind_case != SWORN__V1__ENTRY__KIND_STARTUP)
        return 0;
    st = e->startup;
    w->n = 0;
    for (size_t i = 0; i < st->n_files && w->n < MEASURED_MAX; i++) {
        const Sworn__V1__MeasuredFile *f = st->files[i];
        struct mfile *m = &w->files[w->n];

        if (f->sha256.len != 32 ||
            snprintf(m->path, sizeof(m->path), "%s", f->path) >= (int)sizeof(m->path))
            continue; /* sworn-verify's entries check holds their shapes */
        m->role = f->role;
        memcpy(m->sha256, f->sha256.data, 32);
        w->n++;
    }
    w->index = index;
    w->found = 1;
    w->measured = st->pcr23.len == 32;
    return 0; /* on to the newest */
}

/* SHA-256 of what fd reads to its end; 0, or -1 with errno. */
static int hash_fd(int fd, uint8_t out[32])
{
    EVP_MD_CTX *h = EVP_MD_CTX_new();
    char buf[65536];
    ssize_t n;
    int rc = -1;

    if (h == NULL || EVP_DigestInit_ex(h, EVP_sha256(), NULL) != 1)
        goto done;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        if (EVP_DigestUpdate(h, buf, (size_t)n) != 1)
            goto done;
    if (n == 0 && EVP_DigestFinal_ex(h, out, NULL) == 1)
        rc = 0;
done:
    EVP_MD_CTX_free(h);
    return rc;
}

static int hash_path(const char *path, uint8_t out[32])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc, e;

    if (fd < 0)
        return -1;
    rc = hash_fd(fd, out);
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

#define PIDS_MAX 4096u

/* The processes of this deployment (above): pids[0..n), or n 0 when none names the config. */
struct procs {
    long pids[PIDS_MAX];
    size_t n;
};

static int in_set(const struct procs *p, long pid)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->pids[i] == pid)
            return 1;
    return 0;
}

/* Whether /proc/PID/cmdline holds an argument equal to want. */
static int cmdline_has(const char *pid, const char *want)
{
    char path[300], buf[8192];
    int fd;
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
        if (strcmp(buf + i, want) == 0)
            return 1;
    return 0;
}

static long parent_of(const char *pid)
{
    char path[300], buf[1024], *p;
    int fd;
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    p = strrchr(buf, ')'); /* the name may hold anything: the fields follow its last ')' */
    return p != NULL && p[1] == ' ' ? strtol(p + 4, NULL, 10) : -1;
}

/* The processes of exe whose command line names config, then their descendants, to a fixpoint. */
static void deployment_procs(const char *exe, const char *config, struct procs *set)
{
    size_t before;

    set->n = 0;
    do {
        DIR *d = opendir("/proc");
        struct dirent *de;

        before = set->n;
        if (d == NULL)
            return;
        while ((de = readdir(d)) != NULL && set->n < PIDS_MAX) {
            char link[300], target[1100];
            long pid = atol(de->d_name);
            ssize_t n;

            if (de->d_name[0] < '1' || de->d_name[0] > '9' || in_set(set, pid))
                continue;
            if (in_set(set, parent_of(de->d_name))) {
                set->pids[set->n++] = pid;
                continue;
            }
            snprintf(link, sizeof(link), "/proc/%s/exe", de->d_name);
            n = readlink(link, target, sizeof(target) - 1);
            if (n < 0)
                continue;
            target[n] = '\0';
            if (strncmp(target, exe, strlen(exe)) == 0 && cmdline_has(de->d_name, config))
                set->pids[set->n++] = pid;
        }
        closedir(d);
    } while (set->n > before);
}

/* The running processes of path (of set, unless set is empty): how many run the measured image
 * (*same), another (*other), and how many links could not be read (*unknown). */
static void running(const struct mfile *m, const struct procs *set, struct c_result *r,
                    size_t *same, size_t *other, size_t *unknown)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    size_t plen = strlen(m->path);

    *same = *other = *unknown = 0;
    if (d == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        char link[300], target[1100];
        uint8_t got[32];
        ssize_t n;

        if (de->d_name[0] < '1' || de->d_name[0] > '9' || (long)getpid() == atol(de->d_name) ||
            (set->n > 0 && !in_set(set, atol(de->d_name))))
            continue;
        snprintf(link, sizeof(link), "/proc/%s/exe", de->d_name);
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0) {
            *unknown += errno == EACCES || errno == EPERM;
            continue; /* ENOENT: a kernel thread, or a process gone since */
        }
        target[n] = '\0';
        if (strncmp(target, m->path, plen) != 0 ||
            (target[plen] != '\0' && strcmp(target + plen, " (deleted)") != 0))
            continue;
        if (hash_path(link, got) < 0) {
            (*unknown)++;
            continue;
        }
        if (memcmp(got, m->sha256, 32) == 0) {
            (*same)++;
        } else {
            char hex[65];

            (*other)++;
            sworn_hex_encode(got, 32, hex, sizeof(hex));
            c_evidence(r, "process %s runs %s (sha256 %s)", de->d_name, target, hex);
        }
    }
    closedir(d);
}

/* Check `name` of a sworn-verify report, or NULL when the report has none. */
static const struct c_verify_check *check_named(const struct c_verify *v, const char *name)
{
    for (unsigned i = 0; i < v->neach; i++)
        if (strcmp(v->each[i].name, name) == 0)
            return &v->each[i];
    return NULL;
}

static int check_passed(const struct c_verify_check *c)
{
    return c != NULL && strcmp(c->result, "pass") == 0 && c->count > 0;
}

enum attested { ATTEST_NOT, ATTEST_YES, ATTEST_FAIL, ATTEST_ERROR };

/*
 * Whether the fresh quote is not shown to be sworn-verify's and made after the mark (then why
 * says what is missing). The mark's index and the checkpoint's size are decisiond's answers, and
 * the record is the operator's folder: only a checkpoint of that size in the record, verified
 * (its signature, and its root over the entries), whose entry at the mark's index is the mark,
 * ties its quote to this run; sworn-verify checks a quote only for a checkpoint it holds, so a
 * fresh checkpoint taken out of sworn/checkpoint/ (a newer one in `checkpoint`, unquoted: quotes
 * check does not require one) would leave the fresh quote unchecked and older quotes passing.
 */
static int fresh_unbound(const struct c_deploy *dep, const struct c_verify *v, uint64_t size,
                         uint64_t mark, const char *mark_id, char *why, size_t cap)
{
    static const char *const binding[] = {"checkpoint-signatures", "entry-bundles", "tiles",
                                          "roots"};
    struct sworn_checkpoint cp;
    char path[1200];
    int held = 0;

    for (size_t i = 0; i < sizeof(binding) / sizeof(binding[0]); i++) {
        const struct c_verify_check *c = check_named(v, binding[i]);

        if (c == NULL || strcmp(c->result, "fail") == 0) {
            snprintf(why, cap,
                     "sworn-verify's %s check %s: the record does not tie the checkpoint asked "
                     "now (size %llu), nor its quote, to the mark",
                     binding[i], c == NULL ? "is missing" : "failed", (unsigned long long)size);
            return 1;
        }
    }
    if (c_record_checkpoint(dep->record, &cp) == 0 && cp.size == size)
        held = 1;
    else if (snprintf(path, sizeof(path), "%s/sworn/checkpoint/%llu", dep->record,
                      (unsigned long long)size) < (int)sizeof(path) &&
             c_record_checkpoint_file(path, &cp) == 0 && cp.size == size)
        held = 1;
    if (!held) {
        snprintf(why, cap,
                 "the checkpoint asked now (size %llu) is not in the record (neither `checkpoint` "
                 "nor sworn/checkpoint/%llu): sworn-verify did not check its quote",
                 (unsigned long long)size, (unsigned long long)size);
        return 1;
    }
    if (c_mark_in_record(dep, v->tree_size, mark, mark_id, why, cap) != NULL) {
        char what[400];

        snprintf(what, sizeof(what), "%s", why);
        snprintf(why, cap,
                 "the mark %s is not at log index %llu, where decisiond said it was appended: "
                 "%.300s",
                 mark_id, (unsigned long long)mark, what);
        return 1;
    }
    return 0;
}

/*
 * The TPM now (top of this file): a checkpoint asked now, its quote, and sworn-verify's quotes
 * and measured-start checks under the auditor's policy. Writes evidence; on ATTEST_FAIL and
 * ATTEST_ERROR, why (a sentence) too.
 */
static enum attested tpm_now(struct c_ctx *ctx, struct c_result *r, const struct newest *w,
                             char *why, size_t cap)
{
    const struct c_deploy *dep = ctx->dep;
    const struct c_verify_check *quotes, *measured;
    char attest[1200], mark_id[96];
    uint64_t size, mark = 0;
    struct c_verify *v;
    enum attested out;

    if (!w->measured) {
        c_evidence(r, "the newest start was not measured into a TPM (its Startup entry has no "
                      "pcr23): no TPM attests it");
        return ATTEST_NOT;
    }
    if (dep->admin_socket[0] == '\0') {
        c_evidence(r, "no admin_socket: no checkpoint was asked now, so the TPM's PCR 23 at the "
                      "time of this run is not compared (T5.verify checks the record's quotes)");
        return ATTEST_NOT;
    }
    /* Made now: a checkpoint only comes when the log grew, so an idle log would answer with
       its last checkpoint and a quote older than this run. An entry appended first makes the
       checkpoint asked after it new, and its quote with it. */
    if (!dep->has_requests) {
        c_evidence(r, "no requests (and decision_socket) in the deployment file: no mark can be "
                      "appended, so no quote can be shown to be made now");
        return ATTEST_NOT;
    }
    if (c_append_mark(dep, &mark, mark_id, sizeof(mark_id)) < 0) {
        snprintf(why, cap, "the mark request on decision_socket: %.400s", sworn_err_msg());
        return ATTEST_ERROR;
    }
    c_evidence(r, "a mark appended first: %s, log index %llu", mark_id, (unsigned long long)mark);
    if (c_checkpoint_now(dep->admin_socket, &size) < 0) {
        snprintf(why, cap, "CheckpointNow on %.200s: %.300s", dep->admin_socket, sworn_err_msg());
        return ATTEST_ERROR;
    }
    if (size <= mark) {
        snprintf(why, cap,
                 "the checkpoint asked after the mark (size %llu) does not hold it (log index "
                 "%llu): decisiond answered CheckpointNow with an older checkpoint",
                 (unsigned long long)size, (unsigned long long)mark);
        return ATTEST_FAIL;
    }

    if (snprintf(attest, sizeof(attest), "%s/sworn/quote/%llu.attest", dep->record,
                 (unsigned long long)size) >= (int)sizeof(attest)) {
        snprintf(why, cap, "the record's path is too long");
        return ATTEST_ERROR;
    }
    if (access(attest, F_OK) != 0) {
        snprintf(why, cap,
                 "the start was measured into PCR 23, but the checkpoint asked now (size %llu) "
                 "has no TPM quote (%s): the TPM no longer attests what runs",
                 (unsigned long long)size, strerror(errno));
        return ATTEST_FAIL;
    }
    c_evidence(r, "a checkpoint asked now: size %llu, quoted (sworn/quote/%llu.attest)",
               (unsigned long long)size, (unsigned long long)size);
    if ((v = calloc(1, sizeof(*v))) == NULL) {
        snprintf(why, cap, "out of memory");
        return ATTEST_ERROR;
    }
    if (c_verify_run(dep, dep->trust_policy, dep->record, NULL, v) < 0) {
        snprintf(why, cap, "sworn-verify did not run: %s", sworn_err_msg());
        free(v);
        return ATTEST_ERROR;
    }
    quotes = check_named(v, "quotes");
    measured = check_named(v, "measured-start");
    for (unsigned i = 0; i < v->neach; i++)
        if (&v->each[i] == quotes || &v->each[i] == measured)
            c_evidence(r, "sworn-verify (tree size %llu) check %s: %s, %llu checked, %llu failed",
                       (unsigned long long)v->tree_size, v->each[i].name, v->each[i].result,
                       (unsigned long long)v->each[i].count,
                       (unsigned long long)v->each[i].failures);
    if (v->status == 2 || strcmp(v->result, "unreadable") == 0) {
        snprintf(why, cap, "sworn-verify could not read the record: %s", v->error);
        out = ATTEST_ERROR;
    } else if (v->tree_size < size) {
        snprintf(why, cap,
                 "sworn-verify read a tree of %llu entries, older than the checkpoint "
                 "asked now (%llu)",
                 (unsigned long long)v->tree_size, (unsigned long long)size);
        out = ATTEST_ERROR;
    } else if (fresh_unbound(dep, v, size, mark, mark_id, why, cap)) {
        out = ATTEST_FAIL;
    } else if ((quotes != NULL && strcmp(quotes->result, "fail") == 0) ||
               (measured != NULL && strcmp(measured->result, "fail") == 0)) {
        const char *first = "";

        for (unsigned i = 0; i < v->nfailed && first[0] == '\0'; i++)
            if (strncmp(v->failed[i], "quotes:", 7) == 0 ||
                strncmp(v->failed[i], "measured-start:", 15) == 0)
                first = v->failed[i];
        snprintf(why, cap,
                 "the TPM does not attest the measured start: sworn-verify's %.200s (PCR 23 shows "
                 "something the record's starts do not)",
                 first[0] != '\0' ? first : "quotes or measured-start check failed");
        out = ATTEST_FAIL;
    } else if (check_passed(quotes) && check_passed(measured)) {
        c_evidence(r, "the TPM's PCR 23 now, as quoted with the checkpoint asked now, is the "
                      "newest start's pcr23, which replays from the measured files");
        out = ATTEST_YES;
    } else {
        c_evidence(r,
                   "the auditor's trust policy does not check quotes against the record's starts "
                   "(quotes ignore, or no measured-start record): the fresh quote is not "
                   "compared with the measured start");
        out = ATTEST_NOT;
    }
    free(v);
    return out;
}

void c_probe_measured_start(struct c_ctx *ctx, struct c_result *r)
{
    struct sworn_checkpoint cp;
    struct newest w = {0};
    size_t differ = 0, unreadable = 0, unknown_links = 0, exe_running = 0;
    char first[300] = "";

    struct procs *set = calloc(1, sizeof(*set));

    w.files = calloc(MEASURED_MAX, sizeof(*w.files));
    if (w.files == NULL || set == NULL) {
        c_result_set(r, C_ERROR, "out of memory");
        return;
    }
    if (c_record_checkpoint(ctx->dep->record, &cp) < 0 ||
        c_record_each(ctx->dep->record, cp.size, 0, take_startup, &w) < 0) {
        c_result_set(r, C_ERROR, "the record: %s", sworn_err_msg());
        goto out;
    }
    if (!w.found) {
        c_result_set(r, C_ERROR, "no Startup entry in the record's checkpoint (size %llu)",
                     (unsigned long long)cp.size);
        goto out;
    }
    c_evidence(r, "the newest Startup entry: log index %llu, %zu files",
               (unsigned long long)w.index, w.n);
    {
        const char *exe = NULL, *config = NULL;

        for (size_t i = 0; i < w.n; i++)
            if (w.files[i].role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE)
                exe = w.files[i].path;
            else if (w.files[i].role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_CONFIG)
                config = w.files[i].path;
        if (exe != NULL && config != NULL)
            deployment_procs(exe, config, set);
        if (set->n > 0)
            c_evidence(r,
                       "this deployment's processes: %zu (the executable's naming %s, and "
                       "their descendants)",
                       set->n, config);
        else
            c_evidence(r, "no process names the measured configuration: every process of the "
                          "measured paths counts");
    }
    for (size_t i = 0; i < w.n; i++) {
        const struct mfile *m = &w.files[i];
        size_t same = 0, other = 0, unknown = 0;
        uint8_t got[32];
        int binary = m->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE ||
                     m->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_SIGNER;
        int ok;

        if (binary)
            running(m, set, r, &same, &other, &unknown);
        if (m->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_EXECUTABLE) {
            exe_running += same + other;
            unknown_links += unknown;
        }
        if (binary && same + other > 0) {
            c_evidence(r, "%s %s: %zu running process(es) as measured, %zu not",
                       c_record_role_name(m->role), m->path, same, other);
            ok = other == 0;
        } else if (hash_path(m->path, got) < 0) {
            c_evidence(r, "%s %s: not readable (%s)", c_record_role_name(m->role), m->path,
                       strerror(errno));
            ok = m->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY;
            unreadable += !ok;
            continue;
        } else {
            ok = memcmp(got, m->sha256, 32) == 0;
            c_evidence(r, "%s %s: the file on disk %s", c_record_role_name(m->role), m->path,
                       ok ? "is as measured" : "differs from the measured digest");
            if (m->role == SWORN__V1__MEASURED_ROLE__MEASURED_ROLE_POLICY)
                ok = 1; /* a reload is a PolicyLoaded entry of its own */
        }
        if (!ok && differ++ == 0)
            snprintf(first, sizeof(first), "%s %.200s", c_record_role_name(m->role), m->path);
    }
    if (differ > 0)
        c_result_set(r, C_FAIL,
                     "%zu measured file(s) are not what runs or what decisiond reads at start "
                     "(first: %s)",
                     differ, first);
    else if (exe_running == 0 && unknown_links > 0)
        c_result_set(r, C_ERROR,
                     "no process was found running the measured executable, and %zu processes' "
                     "images could not be read (run as root, or as decisiond's user)",
                     unknown_links);
    else if (exe_running == 0)
        c_result_set(r, C_FAIL,
                     "no running process runs the measured executable: the decisiond that runs "
                     "is not the one measured, or none runs");
    else if (unreadable > 0)
        c_result_set(r, C_ERROR,
                     "a measured file could not be read: the running files cannot all be compared");
    else {
        char why[600] = "";

        switch (tpm_now(ctx, r, &w, why, sizeof(why))) {
        case ATTEST_YES:
            c_result_set(r, C_PASS,
                         "every running process of the measured binaries runs the measured image, "
                         "the configuration on disk is the measured one, and the TPM's quote "
                         "made now shows that start");
            break;
        case ATTEST_NOT:
            c_result_set(r, C_PASS,
                         "every running process of the measured binaries runs the measured image, "
                         "and the configuration on disk is the measured one (not attested by a "
                         "TPM quote made now: see the evidence)");
            break;
        case ATTEST_FAIL:
            c_result_set(r, C_FAIL, "%s", why);
            break;
        case ATTEST_ERROR:
            c_result_set(r, C_ERROR, "%s", why);
            break;
        }
    }
out:
    free(set);
    free(w.files);
}
