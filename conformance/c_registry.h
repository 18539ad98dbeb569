/*
 * c_registry.h -- the probe set: every probe sworn-conformance knows, in the order a run takes
 * them, and the digest that names the set in a report.
 *
 * The order is the run order, not the tier order (reports group by tier): the probes that only
 * read come first, then those that send requests, and last the one that stops decisiond (T3 fail
 * closed), so that a deployment left without decisiond by a failed start command costs no other
 * probe its result.
 *
 * The digest: SHA-256 of "sworn-conformance probe set v1\n" then, for each probe in order, its id,
 * tier ("T1".."T5"), property, technique and expected outcome, each followed by "\n". Any change to
 * a probe's definition changes it; the code that runs a probe is named by sworn's version.
 *
 * Thread safety: the set is constant.
 */
#ifndef SWORN_C_REGISTRY_H
#define SWORN_C_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "c_probe.h"

/* The probes; OUT: *n. Never NULL. */
const struct c_probe *c_registry_all(size_t *n);

/* The probe whose id is id, or NULL. */
const struct c_probe *c_registry_find(const char *id);

/* "T1".."T5". */
const char *c_tier_name(enum c_tier t);

/* Parse "T1".."T5" (either case). Returns 0 or -1. */
int c_tier_parse(const char *s, enum c_tier *t);

/* The probe set's digest (above), as 64 lower-case hex digits and a NUL. Returns 0 or -1. */
int c_registry_digest(char out[65]);

#endif
