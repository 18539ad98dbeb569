/*
 * p_usage.h -- the proxy's usage reports to decisiond (docs/proxy.md, "Model APIs: the usage
 * report"): after the response to an allowed model call ends (or is cut), one UsageReport per
 * allow goes to decisiond's decision socket on the proxy's own link, apart from the agents'
 * connections, so that neither the agent's next request nor its going away waits for it or
 * loses it.
 *
 * Fire and forget, in order: reports are queued (at most SWORN_PUSAGE_QUEUE_MAX; one more is
 * dropped and logged), written one after the other on one link, and each answer (a UsageResult,
 * or an ErrorFrame when decisiond refused the report, which it records) is logged. When the link
 * fails, the report in flight and the queue are dropped with a log line (`usage_report_lost`):
 * the allow's reservation stands in decisiond's budgets, which errs toward denying. At a stop the
 * queue is dropped the same way.
 *
 * Event loop thread only.
 */
#ifndef SWORN_P_USAGE_H
#define SWORN_P_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

struct event_base;
struct sworn_pusage;

#define SWORN_PUSAGE_QUEUE_MAX 4096u

/* A reporter that talks to the decision socket at socket_path (not connected yet). NULL: OOM. */
struct sworn_pusage *sworn_pusage_new(struct event_base *base, const char *socket_path);
void sworn_pusage_free(struct sworn_pusage *r);

/* Queue one report (checked and packed now). 0, or -1 (not queued; logged). */
int sworn_pusage_send(struct sworn_pusage *r, const Sworn__V1__UsageReport *u);

/* Reports queued or in flight (tests, metrics). */
size_t sworn_pusage_pending(const struct sworn_pusage *r);

#endif
