/*
 * d_mserve.c -- decisiond's metrics socket: the metrics text and the health check (contract in
 * d_mserve.h), served by common/textserve.h on the loop thread.
 */
#include "d_mserve.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "d_clock.h"
#include "d_daemon.h"
#include "err.h"
#include "textserve.h"

#define HEALTH_MAX 1024
#define CHECKPOINT_SLACK_MS 10000u

/* Append one reason line to why (cut at cap, always NUL-terminated). */
static void reason(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reason(char *why, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(why);
    va_list ap;

    if (used + 1 >= cap)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(why + used, cap - used, fmt, ap);
    va_end(ap);
}

int d_mserve_health(struct d_daemon *d, uint64_t now_unix_ms, char *why, size_t cap)
{
    uint64_t last = atomic_load(&d->metrics.checkpoint_unix_ms);
    uint64_t bound = 3 * d->cfg->checkpoint_interval_ms + CHECKPOINT_SLACK_MS;

    why[0] = '\0';
    if (atomic_load(&d->metrics.signer_up) != 1)
        reason(why, cap, "signer down: its last call failed (decisions are denied)\n");
    if (d->cfg->tpm_tcti != NULL && d->cfg->tpm_required && atomic_load(&d->metrics.tpm_up) != 1)
        reason(why, cap, "TPM down and tpm.required (decisions are denied)\n");
    if (last == 0)
        reason(why, cap, "no checkpoint signed yet\n");
    else if (now_unix_ms > last && now_unix_ms - last > bound)
        reason(why, cap, "the newest checkpoint is %llu ms old (more than %llu)\n",
               (unsigned long long)(now_unix_ms - last), (unsigned long long)bound);
    return why[0] == '\0';
}

static int serve(void *arg, const char *path, struct sworn_textserve_answer *a)
{
    struct d_daemon *d = arg;

    if (strcmp(path, "/metrics") == 0) {
        atomic_store(&d->metrics.log_entries, sworn_log_size(d->log));
        if (d_metrics_render(&d->metrics, d_now_unix_ms(), &a->body, &a->len) < 0)
            return -1;
        a->owned = 1;
        a->status = 200;
        a->content_type = "text/plain; version=0.0.4; charset=utf-8";
        return 0;
    }
    if (strcmp(path, "/health") == 0) {
        char *why = malloc(HEALTH_MAX);
        int ok;

        if (why == NULL)
            return -1;
        ok = d_mserve_health(d, d_now_unix_ms(), why, HEALTH_MAX);
        if (ok)
            snprintf(why, HEALTH_MAX, "ok\n");
        a->status = ok ? 200 : 503;
        a->body = why;
        a->len = strlen(why);
        a->owned = 1;
        return 0;
    }
    a->status = 404;
    a->body = (char *)"not found: GET /metrics or /health\n";
    a->len = strlen(a->body);
    return 0;
}

int d_mserve_start(struct d_daemon *d, int fd)
{
    return sworn_textserve_start(d->base, fd, serve, d, &d->mserve);
}

void d_mserve_stop(struct d_daemon *d)
{
    sworn_textserve_stop(d->mserve);
    d->mserve = NULL;
}
