/* record_fixture.c -- see record_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "logstore.h"
#include "record_fixture.h"
#include "sv_util.h"
#include "testutil.h"

void sworn_record_free(struct sworn_record *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->e[i]);
        free(b->r[i]);
    }
    memset(b, 0, sizeof(*b));
}

void sworn_record_add(struct sworn_record *b, const Sworn__V1__Entry *m)
{
    size_t n = sworn__v1__entry__get_packed_size(m);

    assert_true(b->n < SWORN_RECORD_MAX);
    b->e[b->n] = malloc(n);
    assert_non_null(b->e[b->n]);
    sworn__v1__entry__pack(m, b->e[b->n]);
    b->len[b->n] = n;
    b->n++;
}

void sworn_record_put_receipt(struct sworn_record *b, size_t i, const Sworn__V1__Receipt *r)
{
    free(b->r[i]);
    b->rlen[i] = sworn__v1__receipt__get_packed_size(r);
    b->r[i] = malloc(b->rlen[i]);
    assert_non_null(b->r[i]);
    sworn__v1__receipt__pack(r, b->r[i]);
}

void sworn_record_leaf(const struct sworn_record *b, size_t i, uint8_t out[32])
{
    uint8_t *in = malloc(1 + b->len[i]);

    assert_non_null(in);
    in[0] = 0;
    memcpy(in + 1, b->e[i], b->len[i]);
    sv_sha256(in, 1 + b->len[i], out);
    free(in);
}

void sworn_record_make(const struct sworn_record_log *w, const char *name,
                       const struct sworn_record *b, const char *pem_key)
{
    char dbn[128], keyn[128], pn[128], text[2048], *db, *key, *out, *pp;
    struct sworn_log *log;
    struct sworn_test_run r;
    uint64_t first;

    snprintf(dbn, sizeof(dbn), "%s.db", name);
    snprintf(keyn, sizeof(keyn), "%s.key", name);
    snprintf(pn, sizeof(pn), "%s.policy", name);
    db = sworn_test_path(w->dir, dbn);
    key = pem_key != NULL ? strdup(pem_key) : sworn_test_path(w->dir, keyn);
    out = sworn_test_path(w->dir, name);
    pp = sworn_test_path(w->dir, pn);
    if (pem_key == NULL) {
        sworn_test_run_ok("keygen", NULL, w->log_bin, "keygen", "--name", w->key_name, "--out", key,
                          NULL);
    }
    sworn_test_run_ok("init", NULL, w->log_bin, "init", "--db", db, "--origin", w->origin, "--key",
                      key, "--key-name", w->key_name, NULL);
    if (sworn_log_open(db, &log) != 0)
        fail_msg("open %s", db);
    if (sworn_log_append_receipts(log, (const uint8_t *const *)b->e, b->len,
                                  (const uint8_t *const *)b->r, b->rlen, b->n, &first) != 0)
        fail_msg("append_receipts failed");
    sworn_log_close(log);
    sworn_test_run_ok("checkpoint", NULL, w->log_bin, "checkpoint", "--db", db, NULL);
    sworn_test_run_ok("export-tiles", NULL, w->log_bin, "export-tiles", "--db", db, out, NULL);
    sworn_test_runv(&r, NULL, w->log_bin, "vkey", "--db", db, NULL);
    sworn_test_run_must(&r, "vkey");
    r.out[strcspn(r.out, "\n")] = '\0';
    snprintf(text, sizeof(text),
             "origin %s\nlog %s\nentries sworn\nreceipt-key %s\nquotes ignore\n", w->origin, r.out,
             w->receipt_spki_b64);
    sworn_test_write_file(pp, text, strlen(text), 0600);
    sworn_test_run_free(&r);
    free(pp);
    free(db);
    free(key);
    free(out);
}
