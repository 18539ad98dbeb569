/*
 * sv_stats.h -- what the auditor's page (sv_html.h) shows beside the checks, gathered while
 * sv_verify_record streams the record: the decisions (allow, deny, escalate) per hour of their
 * time stamps, with the checkpoints, quotes, key events, policy loads and starts of each hour;
 * the principals and destination hosts of the decisions with their counts; the key events,
 * policy loads and starts one by one; and every failure with the item (entry, file, checkpoint)
 * that caused it.
 *
 * Only entries that passed the `entries` check are counted (a malformed entry is listed as a
 * failure instead), and only decisions (DecisionRecord) are counted as decisions: an operator's
 * resolution of an escalation is not a second decision of the request. Every byte counted comes
 * from the record and is untrusted: names are kept as bytes, cut to SV_LABEL_MAX, and escaped
 * only when the page is written.
 *
 * Memory is bounded whatever the record holds: at most SV_STATS_HOURS_MAX distinct hours,
 * SV_STATS_NAMES_MAX distinct principals and as many hosts, SV_STATS_EVENTS_MAX listed events and
 * SV_STATS_FAILURES_MAX failures with their messages (about 6 MiB in all at the bounds). What
 * falls outside a bound is still counted (hours_dropped, other[], events, failures) so the page
 * can say what it cut. An allocation that fails is counted in oom and the page says its tables
 * are incomplete; no function here fails otherwise.
 *
 * The caller owns a struct sv_stats: sv_stats_init, then sv_stats_free (also after a failure).
 * Not thread-safe: one verification fills one struct.
 */
#ifndef SV_STATS_H
#define SV_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "sv_entry.h"
#include "sv_util.h"

#define SV_STATS_HOURS_MAX (1u << 17) /* distinct hours (about 15 years of every hour) */
#define SV_STATS_NAMES_MAX 4096u      /* distinct principals; distinct hosts */
#define SV_STATS_EVENTS_MAX 512u      /* key events, policy loads and starts listed */
#define SV_STATS_FAILURES_MAX 1000u   /* failures kept with their item and message */
#define SV_STATS_ITEM_MAX 160         /* as SV_CHECK_ITEM_MAX (sv_verify.h) */
#define SV_STATS_CODE_MAX 32          /* as SV_CHECK_CODE_MAX */
#define SV_HOUR_MS 3600000ull

enum sv_effect_ix { SV_ALLOW = 0, SV_DENY = 1, SV_ESCALATE = 2, SV_EFFECTS = 3 };

/* What the timeline marks. A checkpoint and its quote are placed at the newest entry time of
 * the checkpoint's tree (a checkpoint note has no time of its own). */
enum sv_mark {
    SV_MARK_CHECKPOINT,
    SV_MARK_QUOTE,
    SV_MARK_KEY_EVENT,
    SV_MARK_POLICY,
    SV_MARK_STARTUP,
    SV_MARKS
};

struct sv_hour {
    uint64_t hour; /* time_unix_ms / SV_HOUR_MS */
    uint64_t effect[SV_EFFECTS];
    uint64_t mark[SV_MARKS];
};

struct sv_name_count {
    char name[SV_LABEL_MAX + 1]; /* may be "" (a refused request without a host) */
    int used;                    /* the slot is taken */
    int cut;                     /* the name was longer than SV_LABEL_MAX bytes */
    uint64_t effect[SV_EFFECTS];
};

/* Names with counts: an open-addressing table of at most 2 * SV_STATS_NAMES_MAX slots. Names
 * beyond SV_STATS_NAMES_MAX distinct ones are added to other[] and counted in other_names (an
 * upper bound: a name seen twice there is counted twice). Two names that agree in their first
 * SV_LABEL_MAX bytes and were both cut share one row (marked cut). */
struct sv_names {
    struct sv_name_count *slot;
    size_t nslots, n;
    uint64_t other[SV_EFFECTS];
    uint64_t other_names;
};

struct sv_event {
    enum sv_mark kind;
    uint64_t index;   /* the entry's index (a checkpoint: its size) */
    uint64_t time_ms; /* 0: the entry had none (opaque entries) */
    int ok;           /* a policy load: not refused; a quote or checkpoint: verified */
};

struct sv_failure {
    int check; /* enum sv_check_id (sv_verify.h) */
    char item[SV_STATS_ITEM_MAX];
    char code[SV_STATS_CODE_MAX];
    char why[SV_WHY];
};

struct sv_stats {
    struct sv_hour *hours; /* sorted by hour */
    size_t nhours, hours_cap;
    uint64_t hours_dropped; /* decisions and marks of hours beyond SV_STATS_HOURS_MAX */
    uint64_t untimed;       /* marks without a time (a checkpoint of opaque entries) */
    uint64_t decisions[SV_EFFECTS];
    uint64_t marks[SV_MARKS];
    uint64_t first_ms, last_ms; /* the earliest and latest time counted (0: none) */
    struct sv_names principals, hosts;
    struct sv_event *events; /* key events, policy loads, starts, in log order */
    size_t nevents;
    uint64_t events_total;
    struct sv_failure *failures; /* in the order they were found */
    size_t nfailures;
    uint64_t failures_total;
    uint64_t oom; /* allocations that failed: the tables are incomplete */
};

void sv_stats_init(struct sv_stats *st);
void sv_stats_free(struct sv_stats *st);

/* Count entry index, which sv_entry_check accepted as info. */
void sv_stats_entry(struct sv_stats *st, uint64_t index, const struct sv_entry_info *info);

/* Mark a checkpoint of size index (ok: its root verified) or its quote (ok: it verified) at
 * time_ms (0: unknown). */
void sv_stats_mark(struct sv_stats *st, enum sv_mark kind, uint64_t index, uint64_t time_ms,
                   int ok);

/* Keep a failure of check (enum sv_check_id) at item, with its code and message (copied, cut to
 * fit). */
void sv_stats_failure(struct sv_stats *st, int check, const char *item, const char *code,
                      const char *why);

/* The n names of a table sorted by their total count, largest first (ties by name). Returns a
 * fresh array of pointers into t (free it), or NULL when t is empty or memory runs out. */
const struct sv_name_count **sv_names_sorted(const struct sv_names *t, size_t *n);

#endif
