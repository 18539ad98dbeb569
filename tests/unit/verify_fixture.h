/*
 * verify_fixture.h -- running `sworn-verify verify --json` on a record in a test's folder and
 * reading its report: the checks by name, their results and first failures, and the length-
 * prefixed entry bundles a tamper test edits. Test code only: failures fail the running cmocka
 * test with a message (the report or the program's output in it).
 */
#ifndef SWORN_VERIFY_FIXTURE_H
#define SWORN_VERIFY_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Pass --no-progress as well (progress is drawn only on a terminal, so the report is the same). */
#define SWORN_VERIFY_NO_PROGRESS 1u

/*
 * Run `verify_bin verify --json [--no-progress] --policy DIR/policy [--state DIR/state_file]
 * DIR/record` (state_file may be NULL); fails the test unless it exits with want_status and
 * prints a JSON report. Returns the report (json_object_put it).
 */
json_object *sworn_verify_json(const char *verify_bin, const char *dir, const char *policy,
                               const char *record, const char *state_file, int want_status,
                               unsigned flags);

/* Member k of object o; fails the test when there is none. */
json_object *sworn_verify_get(json_object *o, const char *k);

/* The check called name in a report; fails the test when there is none. */
json_object *sworn_verify_check(json_object *rep, const char *name);

/*
 * Check name failed (what, may be NULL, names the case in the message); returns the reason of its
 * first failure (owned by rep).
 */
const char *sworn_verify_failed(json_object *rep, const char *what, const char *name);

/*
 * Check name failed with reason as its first failure, at item when item is not NULL; fails the
 * test otherwise.
 */
void sworn_verify_expect_fail(json_object *rep, const char *name, const char *reason,
                              const char *item);

/* Check name passed; fails the test otherwise. */
void sworn_verify_expect_pass(json_object *rep, const char *name);

/* Every check other than except passed or was skipped (none failed). */
void sworn_verify_expect_only(json_object *rep, const char *except);

/* Read DIR/rel whole (free it); fails the test when it cannot. */
uint8_t *sworn_verify_read_rel(const char *dir, const char *rel, size_t *len);

/* Write DIR/rel (mode 0644, created or truncated). */
void sworn_verify_write_rel(const char *dir, const char *rel, const void *d, size_t len);

/* The offset of item i of an entry bundle (items prefixed with a 2-byte big-endian length). */
size_t sworn_verify_item_offset(const uint8_t *b, unsigned i);

#endif
