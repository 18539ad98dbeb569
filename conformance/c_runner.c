/*
 * c_runner.c -- the run (c_runner.h).
 */
#include "c_runner.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "c_record.h"
#include "c_probes.h"
#include "c_registry.h"
#include "encoding.h"
#include "err.h"
#include "sworn.pb-c.h"
#include "sworn_version.h"

void c_utc_now(char out[32])
{
    struct timespec ts;
    struct tm tm;
    char date[24];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    /* strftime's output is bounded by its format; the milliseconds are 3 digits. */
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%.19s.%03dZ", date, (int)(ts.tv_nsec / 1000000) % 1000);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void point(struct c_run *run, struct c_point *p)
{
    struct sworn_checkpoint cp;

    memset(p, 0, sizeof(*p));
    if (c_record_checkpoint(run->dep->record, &cp) < 0) {
        snprintf(p->error, sizeof(p->error), "%s", sworn_err_msg());
        return;
    }
    p->known = 1;
    p->size = cp.size;
    (void)sworn_base64_encode(cp.root, 32, p->root, sizeof(p->root));
    snprintf(run->origin, sizeof(run->origin), "%s", cp.origin);
}

/* The newest PolicyLoaded entry without an error, newest bundle first. */
static void policy_digest(struct c_run *run)
{
    if (!run->cp_start.known || run->cp_start.size == 0)
        return;
    for (uint64_t b = (run->cp_start.size - 1) / SWORN_TILE_WIDTH + 1; b-- > 0;) {
        struct sworn_tile_entry e[SWORN_TILE_WIDTH];
        uint8_t *data;
        unsigned n;
        if (c_record_bundle(run->dep->record, run->cp_start.size, b, &data, e, &n) < 0)
            return;
        for (unsigned i = n; i-- > 0;) {
            Sworn__V1__Entry *en = sworn__v1__entry__unpack(NULL, e[i].len, e[i].data);
            int found = en != NULL && en->kind_case == SWORN__V1__ENTRY__KIND_POLICY_LOADED &&
                        en->policy_loaded->error[0] == '\0' && en->policy_loaded->digest.len == 32;
            if (found) {
                (void)sworn_hex_encode(en->policy_loaded->digest.data, 32, run->policy_digest,
                                       sizeof(run->policy_digest));
                run->policy_index = b * SWORN_TILE_WIDTH + i;
            }
            sworn__v1__entry__free_unpacked(en, NULL);
            if (found) {
                free(data);
                return;
            }
        }
        free(data);
    }
}

/* Take the files of a Startup entry (the measured binaries' digests, configuration, policy). */
static void take_startup(struct c_run *run, const Sworn__V1__StartupMeasurement *st, uint64_t at)
{
    size_t n = st->n_files < C_MEASURED_MAX ? st->n_files : C_MEASURED_MAX;

    run->measured = calloc(n > 0 ? n : 1, sizeof(*run->measured));
    if (run->measured == NULL) {
        snprintf(run->startup_error, sizeof(run->startup_error), "out of memory");
        return;
    }
    for (size_t k = 0; k < n; k++) {
        const Sworn__V1__MeasuredFile *f = st->files[k];
        struct c_measured *m = &run->measured[k];

        snprintf(m->role, sizeof(m->role), "%s", c_record_role_name(f->role));
        snprintf(m->path, sizeof(m->path), "%s", f->path);
        if (f->sha256.len != 32 ||
            sworn_hex_encode(f->sha256.data, 32, m->sha256, sizeof(m->sha256)) < 0)
            snprintf(m->sha256, sizeof(m->sha256), "(not 32 bytes)");
    }
    run->nmeasured = n;
    run->have_startup = 1;
    run->startup_index = at;
}

/* The newest Startup entry under the start checkpoint: the deployment's measured start. */
static void measured_start(struct c_run *run)
{
    snprintf(run->startup_error, sizeof(run->startup_error),
             "no Startup entry in the record's checkpoint");
    if (!run->cp_start.known || run->cp_start.size == 0)
        return;
    for (uint64_t b = (run->cp_start.size - 1) / SWORN_TILE_WIDTH + 1; b-- > 0;) {
        struct sworn_tile_entry e[SWORN_TILE_WIDTH];
        uint8_t *data;
        unsigned n;
        if (c_record_bundle(run->dep->record, run->cp_start.size, b, &data, e, &n) < 0) {
            snprintf(run->startup_error, sizeof(run->startup_error), "%s", sworn_err_msg());
            return;
        }
        for (unsigned i = n; i-- > 0;) {
            Sworn__V1__Entry *en = sworn__v1__entry__unpack(NULL, e[i].len, e[i].data);
            int found = en != NULL && en->kind_case == SWORN__V1__ENTRY__KIND_STARTUP;
            if (found)
                take_startup(run, en->startup, b * SWORN_TILE_WIDTH + i);
            sworn__v1__entry__free_unpacked(en, NULL);
            if (found) {
                free(data);
                return;
            }
        }
        free(data);
    }
}

static int selected(const struct c_run *run, const struct c_probe *p)
{
    if (run->nonly > 0) {
        for (size_t i = 0; i < run->nonly; i++)
            if (strcmp(run->only[i], p->id) == 0)
                return 1;
        return 0;
    }
    return p->tier <= run->max_tier;
}

int c_run_check_selection(const struct c_run *run)
{
    for (size_t i = 0; i < run->nonly; i++)
        if (c_registry_find(run->only[i]) == NULL)
            return sworn_err_set(SWORN_ERR_ARG, "no probe %s (sworn-conformance list)",
                                 run->only[i]);
    return 0;
}

int c_run_probes(struct c_run *run, const struct c_deploy *dep)
{
    size_t total;
    const struct c_probe *all = c_registry_all(&total);
    struct c_ctx ctx;
    struct passwd *pw;
    const char *tmp = getenv("TMPDIR");

    run->dep = dep;
    run->uid = getuid();
    pw = getpwuid(run->uid);
    snprintf(run->operator_user, sizeof(run->operator_user), "%s", pw != NULL ? pw->pw_name : "");
    snprintf(run->sworn_version, sizeof(run->sworn_version), "%s", SWORN_COMMIT);
    if (c_registry_digest(run->probe_set_digest) < 0)
        return sworn_err_set(SWORN_ERR_CRYPTO, "the probe set's digest");
    run->probe_set_count = total;
    run->probes = calloc(total, sizeof(*run->probes));
    run->results = calloc(total, sizeof(*run->results));
    if (run->probes == NULL || run->results == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");

    memset(&ctx, 0, sizeof(ctx));
    ctx.dep = dep;
    if ((size_t)snprintf(ctx.scratch, sizeof(ctx.scratch), "%s/sworn-conformance.XXXXXX",
                         tmp != NULL && tmp[0] == '/' ? tmp : "/tmp") >= sizeof(ctx.scratch) ||
        mkdtemp(ctx.scratch) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "no scratch folder in %s", tmp != NULL ? tmp : "/tmp");

    c_utc_now(run->started);
    point(run, &run->cp_start);
    policy_digest(run);
    measured_start(run);
    for (size_t i = 0; i < total; i++) {
        struct c_result *r = &run->results[run->n];
        uint64_t t0;
        if (!selected(run, &all[i]))
            continue;
        run->probes[run->n++] = &all[i];
        c_utc_now(r->started);
        t0 = mono_ms();
        sworn_err_clear();
        all[i].run(&ctx, r);
        r->duration_ms = mono_ms() - t0;
        run->counts[r->outcome]++;
    }
    point(run, &run->cp_end);
    c_utc_now(run->ended);
    c_sbx_state_free(&ctx);
    c_record_remove(ctx.scratch);
    return 0;
}

int c_run_clean(const struct c_run *run)
{
    return run->counts[C_FAIL] == 0 && run->counts[C_ERROR] == 0;
}

void c_run_free(struct c_run *run)
{
    free(run->probes);
    free(run->results);
    free(run->measured);
    run->probes = NULL;
    run->results = NULL;
    run->measured = NULL;
}
