/*
 * record_fixture.h -- a sworn record built entry by entry in a test (entries packed as decisiond
 * packs them, each with its packed receipt or none), and turned into a real log by the real tools:
 * `sworn-log keygen` and `init`, the log library's sworn_log_append_receipts as decisiond calls
 * it, `checkpoint` and `export-tiles`, with the auditor's trust policy beside it. The tamper
 * tests of sworn-verify twist a record here before it is made. Test code only: failures fail the
 * running cmocka test.
 */
#ifndef SWORN_RECORD_FIXTURE_H
#define SWORN_RECORD_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "sworn.pb-c.h"

#define SWORN_RECORD_MAX 96

/* Entry i is e[i] (len[i] bytes), its receipt r[i] (rlen[i] bytes; NULL: none). */
struct sworn_record {
    uint8_t *e[SWORN_RECORD_MAX];
    size_t len[SWORN_RECORD_MAX];
    uint8_t *r[SWORN_RECORD_MAX];
    size_t rlen[SWORN_RECORD_MAX];
    size_t n;
};

/* Frees every entry and receipt and empties the record. */
void sworn_record_free(struct sworn_record *b);

/* Appends entry m, packed; fails the test when the record is full. */
void sworn_record_add(struct sworn_record *b, const Sworn__V1__Entry *m);

/* Replaces entry i's receipt with r, packed. */
void sworn_record_put_receipt(struct sworn_record *b, size_t i, const Sworn__V1__Receipt *r);

/* The leaf hash of entry i: SHA-256(0x00 || entry). */
void sworn_record_leaf(const struct sworn_record *b, size_t i, uint8_t out[32]);

/* Where and as what a record is made. */
struct sworn_record_log {
    const char *log_bin;           /* sworn-log */
    const char *dir;               /* the test's folder */
    const char *origin, *key_name; /* the log's origin and checkpoint key name */
    const char *receipt_spki_b64;  /* the trust policy's receipt-key line */
};

/*
 * Makes DIR/name (the tiles), DIR/name.db and DIR/name.policy (origin, the log's vkey, `entries
 * sworn`, the receipt key, `quotes ignore`) from b. The checkpoint key is pem_key, or a new one in
 * DIR/name.key when pem_key is NULL.
 */
void sworn_record_make(const struct sworn_record_log *where, const char *name,
                       const struct sworn_record *b, const char *pem_key);

#endif
