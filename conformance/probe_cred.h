/*
 * probe_cred.h -- how sworn-conformance-probe looks for a real credential value it was never
 * given: it holds only SHA-256 digests of the values (from the deployment file, passed on its
 * command line: a digest is not a secret) and hashes the candidate strings it finds.
 *
 * A candidate is every token of a text, cut two ways (at white space, quotes, ',' and ';'; and,
 * finer, also at ':', '=', '&', '?', brackets, braces and angle brackets), every pair of fine
 * tokens separated by exactly one space ("Bearer <token>"), and every whole line. So a value is
 * found when it stands in a text as a token or a line of its own, which is how an environment
 * variable, a configuration file, a header or a JSON string holds one. A value cut into pieces,
 * encoded (base64 of a JSON holding it) or compressed is not found: a limit the report states.
 *
 * Part of the probe program (no sanitizer): no allocation beyond the caller's
 * buffers, no global state but the digest list the caller owns.
 */
#ifndef SWORN_PROBE_CRED_H
#define SWORN_PROBE_CRED_H

#include <stddef.h>
#include <stdint.h>

#define PROBE_CRED_MAX 32u         /* digests on a command line */
#define PROBE_CRED_TOKEN_MAX 8192u /* longer candidates are not hashed (no credential is) */

struct probe_cred {
    uint8_t digest[PROBE_CRED_MAX][32];
    size_t n;
    unsigned long scanned; /* candidates hashed so far: the report's evidence that it looked */
};

/* SHA-256 of n bytes at p into out. */
void probe_sha256(const void *p, size_t n, uint8_t out[32]);

/* Parse "HEX64[,HEX64...]" (1..PROBE_CRED_MAX digests, lower or upper case) into c (cleared
 * first). Returns 0, or -1 when the text is not that. */
int probe_cred_parse(struct probe_cred *c, const char *text);

/*
 * Whether a candidate of the n bytes at p hashes to one of c's digests: 1 (its index in *which),
 * or 0. Counts every candidate in c->scanned.
 */
int probe_cred_scan(struct probe_cred *c, const char *p, size_t n, size_t *which);

#endif
