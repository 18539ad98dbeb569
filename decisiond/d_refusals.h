/*
 * d_refusals.h -- the quotas of recorded refusals, and the count of what they drop (docs/
 * decisiond.md section 3). Pure bookkeeping: no I/O, no clock of its own (the caller passes
 * decisiond's time), so it is tested and reasoned about alone; d_record.c writes the entries.
 *
 * Quotas. Each (channel, peer uid) pair has a quota of recorded refusals per second of
 * decisiond's wall clock. The pairs of the configured peers (proxy uids on the decision socket,
 * operator uids on the admin socket) have slots of their own and D_REFUSALS_PER_PEER each (the
 * proxy's refusals carry what its agents tried: they are worth the most detail); any other pair
 * (root, a member of a socket's group that is no peer) takes one of D_REFUSALS_STRANGERS slots for
 * the second with D_REFUSALS_PER_STRANGER, and when those slots are taken its refusals are
 * dropped. So no peer, configured or not, can use up another's quota: a flood from one uid costs
 * the proxy nothing, and the record grows by at most configured pairs x D_REFUSALS_PER_PEER +
 * D_REFUSALS_STRANGERS x D_REFUSALS_PER_STRANGER entries a second.
 *
 * Drops. A refusal over its quota is counted under its pair, with the times of the first and the
 * last dropped. The counts are written as one RefusalsDropped entry (wire/sworn.proto) when the
 * first drop is D_REFUSALS_SUMMARY_MS old (d_refusals_due), when a new pair finds
 * D_REFUSALS_ROWS pairs pending (d_refusals_drop returns 0: take them first), and at an orderly
 * stop; d_refusals_take hands them over, sorted as the entry wants them, and starts again.
 *
 * Log lines. The `refused` line of decisiond's log (stderr) is bounded the same way, through the
 * same slots: each pair writes at most its record quota of lines a second (D_REFUSALS_PER_PEER or
 * D_REFUSALS_PER_STRANGER; a pair without a stranger's slot that second writes none), so a peer
 * that pipelines malformed frames cannot fill the operator's log or bury other lines in it. A
 * line over its quota is suppressed and counted under its pair, apart from the drops (a refusal
 * may be logged and not recorded, or the reverse: the workers may be gone). The counts are
 * written as one `refused_lines_suppressed` line per pair when the first suppression is
 * D_REFUSALS_SUMMARY_MS old (d_refusals_suppressed_due), when a new pair finds D_REFUSALS_ROWS
 * pairs pending (d_refusals_log returns -1), and at an orderly stop (d_refusals_take_suppressed).
 * So a pair's lines are at most quota x seconds + one summary per D_REFUSALS_SUMMARY_MS, and its
 * `refused` lines plus its summaries' counts are exactly its refusals.
 *
 * Thread safety: none; the daemon's loop thread owns the struct (d_daemon.h).
 */
#ifndef SWORN_D_REFUSALS_H
#define SWORN_D_REFUSALS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define D_REFUSALS_PER_PEER 100      /* recorded per second for a configured peer's pair */
#define D_REFUSALS_PER_STRANGER 10   /* recorded per second for any other pair */
#define D_REFUSALS_STRANGERS 8       /* pairs of unconfigured peers tracked per second */
#define D_REFUSALS_SUMMARY_MS 10000u /* a summary at least this often while drops happen */
#define D_REFUSALS_ROWS 256u         /* pairs in one summary (SWORN_FRAME_DROPPED_MAX) */

struct d_refusal_slot {
    uint32_t channel; /* enum d_channel */
    uint32_t uid;
    unsigned used;   /* recorded in the current second */
    unsigned logged; /* `refused` lines written in the current second */
};

struct d_refusal_row {
    uint32_t channel;
    uint32_t uid;
    uint64_t count;
};

/* Counts taken out (d_refusals_take, d_refusals_take_suppressed), or pending suppressed lines:
 * rows sorted by (channel name, uid) once taken, each pair once. */
struct d_refusal_summary {
    uint64_t first_ms, last_ms;
    size_t n_rows;
    struct d_refusal_row rows[D_REFUSALS_ROWS];
};

struct d_refusals {
    uint64_t second; /* the second the slots count, in decisiond's wall clock */
    size_t n_reserved, n_slots;
    struct d_refusal_slot slots[2 * SWORN_DCONFIG_MAX_UIDS + D_REFUSALS_STRANGERS];
    /* Dropped since the last summary: */
    uint64_t first_ms, last_ms;
    size_t n_rows;
    struct d_refusal_row rows[D_REFUSALS_ROWS];
    /* `refused` lines suppressed since their last summary lines: */
    struct d_refusal_summary suppressed;
};

/* Start with the configured peers' reserved pairs (channel 0: proxy, 1: operators). */
void d_refusals_init(struct d_refusals *r, const struct sworn_dconfig *cfg);

/* Whether a refusal of (channel, uid) at now_ms may be recorded: 1 (its quota is charged) or 0
 * (over quota: the caller counts it with d_refusals_drop). */
int d_refusals_admit(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms);

/* Count a dropped refusal. Returns 1, or 0 when it is of a new pair and D_REFUSALS_ROWS pairs are
 * pending: nothing was counted; take the summary (d_refusals_take), write it, and call again. */
int d_refusals_drop(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms);

/* Whether drops are pending. */
int d_refusals_pending(const struct d_refusals *r);

/* Whether a summary is due at now_ms: drops pending, the first D_REFUSALS_SUMMARY_MS old. */
int d_refusals_due(const struct d_refusals *r, uint64_t now_ms);

/* Hand the pending drops over (sorted) and start counting again. */
void d_refusals_take(struct d_refusals *r, struct d_refusal_summary *out);

/* Whether the `refused` log line of (channel, uid) at now_ms may be written: 1 (the pair's line
 * quota is charged), 0 (over it: suppressed, and counted under the pair), or -1 (over it, and of
 * a new pair while D_REFUSALS_ROWS pairs are pending: nothing was counted; take the suppressed
 * counts (d_refusals_take_suppressed), write their lines, and call again). */
int d_refusals_log(struct d_refusals *r, unsigned channel, uint32_t uid, uint64_t now_ms);

/* Whether suppressed lines are pending. */
int d_refusals_suppressed_pending(const struct d_refusals *r);

/* Whether their summary lines are due at now_ms: pending, the first D_REFUSALS_SUMMARY_MS old. */
int d_refusals_suppressed_due(const struct d_refusals *r, uint64_t now_ms);

/* Hand the suppressed lines' counts over (sorted) and start counting again. */
void d_refusals_take_suppressed(struct d_refusals *r, struct d_refusal_summary *out);

/* The channel's name in entries: "decision" or "admin". */
const char *d_refusals_channel_name(unsigned channel);

#endif
