/*
 * entry_time.h -- the time stamp a log entry carries (docs/formats.md, "Time stamps of entries"),
 * read from an unpacked entry, or from a decision's or a resolution's packed bytes without
 * unpacking them (the append path's cost, issue 17).
 *
 * Its own module so that the byte reader can be fuzzed against protobuf-c's unpack
 * (tests/fuzz/fuzz_entry_time.c: wherever both read an input, they must agree). No state;
 * thread-safe.
 */
#ifndef SWORN_ENTRY_TIME_H
#define SWORN_ENTRY_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

/*
 * The time stamp an entry carries (docs/formats.md, "Time stamps of entries"): the time_unix_ms
 * of every kind. OUT: *t. Returns 1, or 0 for an entry without one (an EscalationResolved
 * written before its field 7 existed).
 */
int d_entry_time(const Sworn__V1__Entry *e, uint64_t *t);

/*
 * d_entry_time of a decision's or a resolution's packed entry (the commit step's two kinds,
 * d_commit.h: every decision), read from its bytes without unpacking the whole entry: the
 * Entry's only field must be `decision` or `escalation_resolved`, whose last time_unix_ms (a
 * varint; 0 when absent) is the stamp, as protobuf-c would read it. OUT: *t, and *has
 * (d_entry_time's return). 0, or -1 for any other kind or any layout this does not read (then
 * unpack the entry and call d_entry_time).
 */
int d_entry_time_bytes(const uint8_t *entry, size_t len, uint64_t *t, int *has);

#endif
