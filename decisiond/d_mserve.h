/*
 * d_mserve.h -- decisiond's metrics socket (`sockets.metrics`, docs/decisiond.md "Metrics and
 * health"): the operator's scraper reads the Prometheus text that `swornctl metrics` prints, and
 * an orchestrator asks whether the daemon can decide, over HTTP/1.x on a Unix socket the monitor
 * bound (root's, mode 0600, or sockets.metrics_group's, 0660). Never the decision or the admin
 * socket, never anything an agent reaches.
 *
 *   GET /metrics   200, text/plain; version=0.0.4: the metrics (d_metrics.h)
 *   GET /health    200 "ok\n" when the daemon can decide and record; 503 with one line per
 *                  reason otherwise (d_mserve_health)
 *   anything else  404 (another method 405, a malformed request 400: common/textserve.h)
 *
 * Thread safety: the loop thread only.
 */
#ifndef SWORN_D_MSERVE_H
#define SWORN_D_MSERVE_H

#include <stddef.h>
#include <stdint.h>

struct d_daemon;

/* Serve the listening socket fd (owned from now on) on d->base. 0, or -1 with sworn_err set. */
int d_mserve_start(struct d_daemon *d, int fd);

/* Stop serving. Nothing to stop is allowed. */
void d_mserve_stop(struct d_daemon *d);

/*
 * The health check's verdict: 1 healthy, 0 not, with the reasons as lines in why (NUL-terminated,
 * cut at cap). Unhealthy when: the signer's last call failed (sworn_signer_up 0); with
 * tpm.required, the TPM's last call failed; the newest checkpoint is older than three checkpoint
 * intervals plus 10 s (the checkpoint thread is stuck, or every round fails).
 */
int d_mserve_health(struct d_daemon *d, uint64_t now_unix_ms, char *why, size_t cap);

#endif
