/*
 * test_verify_tamper.c -- the tamper suite: records made by the real stack (the `sworn-log`
 * binary: init, append, checkpoint, export-tiles), each mutated on a copy, each checked with
 * the real `sworn-verify` binary ($SWORN_VERIFY_BIN), which must exit 1 and name the check and
 * the reason of that mutation in its --json report. Also: exit statuses 0 and 2, the state file
 * (rollback and fork against it, updated only on success), `compare` and the fork proof,
 * witness cosignatures against a quorum, and hash tiles that the verifier recomputes rather
 * than trusts (GHSA-672p-m5jq-mrh8: never accept what was not recomputed).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/evp.h>

#include "sv_util.h"
#include "testutil.h"
#include "verify_fixture.h"

#define ORIGIN "tamper.sworn.example/log"
#define KEY_NAME "tamper.sworn.example"

struct fx {
    char *dir;
    char *vkey; /* the log's verifier key */
};

static const char *log_bin, *verify_bin;

static char *P(const struct fx *f, const char *name)
{
    return sworn_test_path(f->dir, name);
}

/* Lines "<prefix><i>" for i in [from, to), as a file to append. */
static char *lines_file(const struct fx *f, const char *name, const char *prefix, unsigned from,
                        unsigned to)
{
    char *path = P(f, name);
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    for (unsigned i = from; i < to; i++)
        fprintf(fp, "%s%u\n", prefix, i);
    fclose(fp);
    return path;
}

static void append_lines(const struct fx *f, const char *db, const char *prefix, unsigned from,
                         unsigned to)
{
    char *in = lines_file(f, ".lines", prefix, from, to);

    sworn_test_run_ok("append", in, log_bin, "append", "--db", db, NULL);
    free(in);
}

static void checkpoint(const char *db)
{
    sworn_test_run_ok("checkpoint", NULL, log_bin, "checkpoint", "--db", db, NULL);
}

static void export_tiles(const struct fx *f, const char *db, const char *size, const char *name)
{
    char *out = P(f, name);

    if (size != NULL)
        sworn_test_run_ok("export-tiles", NULL, log_bin, "export-tiles", "--db", db, "--size", size,
                          out, NULL);
    else
        sworn_test_run_ok("export-tiles", NULL, log_bin, "export-tiles", "--db", db, out, NULL);
    free(out);
}

static void write_policy(const struct fx *f, const char *name, const char *vkey, const char *extra)
{
    char *path = P(f, name), text[4096];

    snprintf(text, sizeof(text), "# trust policy for the tamper tests\norigin %s\nlog %s\n%s",
             ORIGIN, vkey, extra);
    sworn_test_write_file(path, text, strlen(text), 0600);
    free(path);
}

/*
 * The record every case starts from: 600 entries "e0".."e599" with checkpoints at 100, 300 and
 * 600, exported as "good"; its database is "db".
 */
static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char *key, *db;
    struct sworn_test_run r;

    f->dir = sworn_test_tmpdir("vtamper");
    key = P(f, "log.key");
    db = P(f, "db");
    sworn_test_runv(&r, NULL, log_bin, "keygen", "--name", KEY_NAME, "--out", key, NULL);
    sworn_test_run_must(&r, "keygen");
    f->vkey = strdup(r.out);
    f->vkey[strcspn(f->vkey, "\n")] = '\0';
    sworn_test_run_free(&r);
    sworn_test_run_ok("init", NULL, log_bin, "init", "--db", db, "--origin", ORIGIN, "--key", key,
                      "--key-name", KEY_NAME, NULL);
    append_lines(f, db, "e", 0, 100);
    checkpoint(db);
    append_lines(f, db, "e", 100, 300);
    checkpoint(db);
    append_lines(f, db, "e", 300, 600);
    checkpoint(db);
    export_tiles(f, db, NULL, "good");
    write_policy(f, "policy", f->vkey, "entries opaque\n");
    free(key);
    free(db);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f->vkey);
    free(f);
    return 0;
}

/* A fresh copy of record `from` named `to`. */
static char *copy_record(const struct fx *f, const char *from, const char *to)
{
    char *src = P(f, from), *dst = P(f, to);

    sworn_test_run_ok("cp", NULL, "cp", "-a", src, dst, NULL);
    free(src);
    return dst;
}

/* Run sworn-verify verify --json on a record; returns the parsed report (put it). */
static json_object *verify_json(const struct fx *f, const char *policy, const char *record,
                                const char *state_file, int want_status)
{
    return sworn_verify_json(verify_bin, f->dir, policy, record, state_file, want_status, 0);
}

/* Expect check `name` failed with reason `reason`. */
static void expect_fail(json_object *rep, const char *name, const char *reason)
{
    sworn_verify_expect_fail(rep, name, reason, NULL);
}

/* ------------------------------------------------------------------------------------------ */

static void test_good_record(void **state)
{
    struct fx *f = *state;
    json_object *rep = verify_json(f, "policy", "good", NULL, 0);
    char *pol = P(f, "policy"), *rec = P(f, "good");
    struct sworn_test_run r;

    assert_string_equal(json_object_get_string(sworn_verify_get(rep, "result")), "pass");
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "tree_size")), 600);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "checkpoints")),
                     4); /* 3 + `checkpoint` */
    sworn_verify_expect_pass(rep, "roots");
    sworn_verify_expect_pass(rep, "tiles");
    sworn_verify_expect_pass(rep, "entry-bundles");
    assert_int_equal(
        json_object_get_int64(sworn_verify_get(sworn_verify_check(rep, "roots"), "count")), 4);
    json_object_put(rep);
    /* The human summary. */
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--policy", pol, rec, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "all checks passed"));
    sworn_test_run_free(&r);
    free(pol);
    free(rec);
}

static void test_usage_and_unreadable(void **state)
{
    struct fx *f = *state;
    char *pol = P(f, "policy"), *missing = P(f, "no-such-record"), *bad = P(f, "bad-policy");
    struct sworn_test_run r;
    json_object *o;

    sworn_test_runv(&r, NULL, verify_bin, NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--policy", pol, NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--bogus", "--policy", pol, missing, NULL);
    assert_int_equal(r.status, 2);
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--json", "--policy", pol, missing, NULL);
    assert_int_equal(r.status, 2);
    o = json_tokener_parse(r.out);
    assert_non_null(o);
    assert_string_equal(json_object_get_string(sworn_verify_get(o, "result")), "unreadable");
    json_object_put(o);
    sworn_test_run_free(&r);
    sworn_test_write_file(bad, "origin x\nlog nonsense\n", 22, 0600);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--policy", bad, missing, NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "line 2"));
    sworn_test_run_free(&r);
    sworn_test_runv(&r, NULL, verify_bin, "--help", NULL);
    assert_int_equal(r.status, 0);
    sworn_test_run_free(&r);
    free(pol);
    free(missing);
    free(bad);
}

static void test_changed_byte(void **state)
{
    struct fx *f = *state;
    char *rec = copy_record(f, "good", "t");
    size_t len;
    uint8_t *b = sworn_verify_read_rel(f->dir, "t/tile/entries/001", &len);
    json_object *rep;
    size_t off = sworn_verify_item_offset(b, 7) + 3; /* a digit of entry 263 ("e263") */

    b[off] ^= 0x01;
    sworn_verify_write_rel(f->dir, "t/tile/entries/001", b, len);
    rep = verify_json(f, "policy", "t", NULL, 1);
    expect_fail(rep, "tiles", "entry-altered");
    expect_fail(rep, "roots", "root-mismatch");
    assert_string_equal(
        json_object_get_string(sworn_verify_get(
            sworn_verify_get(sworn_verify_check(rep, "tiles"), "first_failure"), "item")),
        "entry 263 (tile/0/001)");
    json_object_put(rep);
    free(b);
    free(rec);
}

static void test_deleted_inserted_swapped(void **state)
{
    struct fx *f = *state;
    size_t len, o1, o2, o3;
    uint8_t *b = sworn_verify_read_rel(f->dir, "good/tile/entries/000", &len),
            *m = malloc(len + 64);
    json_object *rep;
    char *rec;

    /* Deleted: entry 5 cut out of its bundle. */
    rec = copy_record(f, "good", "del");
    o1 = sworn_verify_item_offset(b, 5);
    o2 = sworn_verify_item_offset(b, 6);
    memcpy(m, b, o1);
    memcpy(m + o1, b + o2, len - o2);
    sworn_verify_write_rel(f->dir, "del/tile/entries/000", m, len - (o2 - o1));
    rep = verify_json(f, "policy", "del", NULL, 1);
    expect_fail(rep, "entry-bundles", "entry-missing");
    expect_fail(rep, "roots", "truncated");
    json_object_put(rep);
    free(rec);

    /* Inserted: a new entry between entries 5 and 6. */
    rec = copy_record(f, "good", "ins");
    memcpy(m, b, o1);
    memcpy(m + o1,
           "\x00\x04"
           "evil",
           6);
    memcpy(m + o1 + 6, b + o1, len - o1);
    sworn_verify_write_rel(f->dir, "ins/tile/entries/000", m, len + 6);
    rep = verify_json(f, "policy", "ins", NULL, 1);
    expect_fail(rep, "entry-bundles", "entry-extra");
    json_object_put(rep);
    free(rec);

    /* Swapped: entries 5 and 6 ("e5", "e6", both 2 bytes) change places. */
    rec = copy_record(f, "good", "swap");
    o3 = sworn_verify_item_offset(b, 7);
    memcpy(m, b, len);
    memcpy(m + o1, b + o2, o3 - o2);
    memcpy(m + o1 + (o3 - o2), b + o1, o2 - o1);
    sworn_verify_write_rel(f->dir, "swap/tile/entries/000", m, len);
    rep = verify_json(f, "policy", "swap", NULL, 1);
    expect_fail(rep, "tiles", "entries-reordered");
    expect_fail(rep, "roots", "root-mismatch");
    json_object_put(rep);
    free(rec);
    free(m);
    free(b);
}

static void test_truncated(void **state)
{
    struct fx *f = *state;
    char *rec = copy_record(f, "good", "trunc"), *last = P(f, "trunc/tile/entries/002.p/88");
    json_object *rep;

    assert_int_equal(unlink(last), 0);
    rep = verify_json(f, "policy", "trunc", NULL, 1);
    expect_fail(rep, "entry-bundles", "bundle-missing");
    expect_fail(rep, "roots", "truncated");
    json_object_put(rep);
    free(last);
    free(rec);
}

static void test_forged_and_foreign_signature(void **state)
{
    struct fx *f = *state;
    char *rec = copy_record(f, "good", "forged"), *other_key = P(f, "other.key");
    size_t len;
    char *note = (char *)sworn_verify_read_rel(f->dir, "forged/checkpoint", &len);
    char *sig = strstr(note, "\n\n") + 2;
    json_object *rep;
    struct sworn_test_run r;
    char *vkey2;

    /* One base64 character of the signature (after the key id) changed. */
    sig = strchr(sig, ' ') + 1;
    sig = strchr(sig, ' ') + 1;
    sig[20] = sig[20] == 'A' ? 'B' : 'A';
    sworn_verify_write_rel(f->dir, "forged/checkpoint", note, len);
    rep = verify_json(f, "policy", "forged", NULL, 1);
    expect_fail(rep, "checkpoint-signatures", "bad-signature");
    json_object_put(rep);

    /* The policy trusts another key of the same name: no checkpoint is signed by it. */
    sworn_test_runv(&r, NULL, log_bin, "keygen", "--name", KEY_NAME, "--out", other_key, NULL);
    sworn_test_run_must(&r, "keygen");
    vkey2 = strdup(r.out);
    vkey2[strcspn(vkey2, "\n")] = '\0';
    sworn_test_run_free(&r);
    write_policy(f, "policy2", vkey2, "");
    rep = verify_json(f, "policy2", "good", NULL, 1);
    expect_fail(rep, "checkpoint-signatures", "no-log-signature");
    json_object_put(rep);
    free(vkey2);
    free(note);
    free(other_key);
    free(rec);
}

static void test_state_rollback_and_fork(void **state)
{
    struct fx *f = *state;
    char *db = P(f, "db"), *db2 = P(f, "db2"), *key = P(f, "log.key"), *st = P(f, "state");
    char *good_cp;
    size_t len, len2;
    uint8_t *saved;
    json_object *rep;

    /* The first run stores the newest checkpoint; the second checks against it. */
    rep = verify_json(f, "policy", "good", "state", 0);
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 1);
    json_object_put(rep);
    good_cp = (char *)sworn_verify_read_rel(f->dir, "good/checkpoint", &len);
    saved = (uint8_t *)sworn_test_read_file(st, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(good_cp, saved, len);
    free(saved);
    rep = verify_json(f, "policy", "good", "state", 0);
    sworn_verify_expect_pass(rep, "state");
    json_object_put(rep);

    /* Rolled back: the whole record as it was at size 300. */
    export_tiles(f, db, "300", "old");
    rep = verify_json(f, "policy", "old", NULL, 0); /* fine on its own */
    json_object_put(rep);
    rep = verify_json(f, "policy", "old", "state", 1);
    expect_fail(rep, "state", "rollback");
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 0);
    json_object_put(rep);
    saved = (uint8_t *)sworn_test_read_file(st, &len2); /* not updated on failure */
    assert_memory_equal(good_cp, saved, len);
    free(saved);

    /* A fork: the same key and origin, the same first 300 entries, then others, up to 600. */
    sworn_test_run_ok("init db2", NULL, log_bin, "init", "--db", db2, "--origin", ORIGIN, "--key",
                      key, "--key-name", KEY_NAME, NULL);
    append_lines(f, db2, "e", 0, 300);
    checkpoint(db2);
    append_lines(f, db2, "fork", 300, 450);
    checkpoint(db2);
    export_tiles(f, db2, "450", "fork450");
    append_lines(f, db2, "fork", 450, 600);
    checkpoint(db2);
    export_tiles(f, db2, NULL, "fork");
    rep = verify_json(f, "policy", "fork", NULL, 0); /* each branch is fine on its own */
    json_object_put(rep);
    rep = verify_json(f, "policy", "fork", "state", 1);
    expect_fail(rep, "state", "fork");
    json_object_put(rep);
    free(good_cp);
    free(db);
    free(db2);
    free(key);
    free(st);
}

static void test_compare_and_fork_proof(void **state)
{
    struct fx *f = *state;
    char *db2 = P(f, "db2"), *key = P(f, "log.key"), *pol = P(f, "policy");
    char *good = P(f, "good"), *old = P(f, "old"), *fork = P(f, "fork"), *fork450 = P(f, "fork450"),
         *proof = P(f, "fork.proof"), *proof2 = P(f, "fork2.proof");
    struct sworn_test_run r;
    size_t len;
    char *text, *line;
    const char *pairs[][2] = {{good, fork}, {fork450, good}, {good, fork450}};

    {
        char *db = P(f, "db");

        export_tiles(f, db, "300", "old");
        free(db);
    }
    sworn_test_run_ok("init db2", NULL, log_bin, "init", "--db", db2, "--origin", ORIGIN, "--key",
                      key, "--key-name", KEY_NAME, NULL);
    append_lines(f, db2, "e", 0, 256);
    checkpoint(db2);
    append_lines(f, db2, "fork", 256, 450);
    checkpoint(db2);
    export_tiles(f, db2, "450", "fork450");
    append_lines(f, db2, "fork", 450, 600);
    checkpoint(db2);
    export_tiles(f, db2, NULL, "fork");

    /* One record extends the other: consistent. */
    sworn_test_runv(&r, NULL, verify_bin, "compare", "--policy", pol, old, good, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "consistent"));
    sworn_test_run_free(&r);

    /* Forks of equal size, smaller-larger and larger-smaller (256 = a power of two: the proof
     * carries the old root too). Each proof checks; a proof with a changed hash does not. */
    for (size_t i = 0; i < 3; i++) {
        sworn_test_runv(&r, NULL, verify_bin, "compare", "--json", "--policy", pol, pairs[i][0],
                        pairs[i][1], "--fork-proof", proof, NULL);
        if (r.status != 1)
            fail_msg("compare %zu: status %d: %s%s", i, r.status, r.out, r.err);
        assert_non_null(strstr(r.out, "\"result\":\"fork\""));
        assert_non_null(strstr(r.out, "diverge at entry 256"));
        sworn_test_run_free(&r);
        sworn_test_runv(&r, NULL, verify_bin, "check-fork-proof", "--policy", pol, proof, NULL);
        if (r.status != 0)
            fail_msg("check-fork-proof %zu: %s", i, r.out);
        sworn_test_run_free(&r);
        text = sworn_test_read_file(proof, &len);
        line = strstr(text, "\nproof ");
        if (line != NULL) {
            line[7] = line[7] == 'A' ? 'B' : 'A';
            sworn_test_write_file(proof2, text, len, 0600);
            sworn_test_runv(&r, NULL, verify_bin, "check-fork-proof", "--policy", pol, proof2,
                            NULL);
            assert_int_equal(r.status, 1);
            sworn_test_run_free(&r);
        } else {
            assert_int_equal(i, 0); /* equal sizes: no proof lines */
        }
        free(text);
    }
    /* Two checkpoints of one branch are no fork proof. */
    {
        const char *fake = "sworn fork-proof v1\na AAAA\nb AAAA\n";

        sworn_test_write_file(proof2, fake, strlen(fake), 0600);
        sworn_test_runv(&r, NULL, verify_bin, "check-fork-proof", "--policy", pol, proof2, NULL);
        assert_int_equal(r.status, 1);
        sworn_test_run_free(&r);
    }
    free(db2);
    free(key);
    free(pol);
    free(good);
    free(old);
    free(fork);
    free(fork450);
    free(proof);
    free(proof2);
}

/* The tiles are the record's claims: a changed level-1 hash is caught even though the entries
 * and checkpoints are intact, and nothing from it enters a root. */
static void test_tiles_not_trusted(void **state)
{
    struct fx *f = *state;
    char *rec = copy_record(f, "good", "tiles");
    size_t len;
    uint8_t *t = sworn_verify_read_rel(f->dir, "tiles/tile/1/000.p/2", &len);
    json_object *rep;

    assert_int_equal(len, 64);
    t[40] ^= 0x80;
    sworn_verify_write_rel(f->dir, "tiles/tile/1/000.p/2", t, len);
    rep = verify_json(f, "policy", "tiles", NULL, 1);
    expect_fail(rep, "tiles", "tile-mismatch");
    sworn_verify_expect_pass(rep, "roots");
    json_object_put(rep);
    free(t);
    free(rec);
}

/* ------------------------------------------------------------------------------------------ */
/* Witness cosignatures (C2SP tlog-cosignature), made here with OpenSSL */

static void cosign_file(const struct fx *f, const char *rel, EVP_PKEY *k, const char *name,
                        uint32_t id, int corrupt)
{
    size_t len, tlen;
    char *note = (char *)sworn_verify_read_rel(f->dir, rel, &len), *out, msg[4096], b64[200];
    uint8_t raw[4 + 8 + 64];
    size_t siglen = 64;
    uint64_t t = 1700000000;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int hl;

    tlen = (size_t)(strstr(note, "\n\n") - note) + 1;
    hl = snprintf(msg, sizeof(msg), "cosignature/v1\ntime %llu\n", (unsigned long long)t);
    memcpy(msg + hl, note, tlen);
    for (int i = 0; i < 4; i++)
        raw[i] = (uint8_t)(id >> (24 - 8 * i));
    for (int i = 0; i < 8; i++)
        raw[4 + i] = (uint8_t)(t >> (56 - 8 * i));
    assert_int_equal(EVP_DigestSignInit(c, NULL, NULL, NULL, k), 1);
    assert_int_equal(EVP_DigestSign(c, raw + 12, &siglen, (uint8_t *)msg, (size_t)hl + tlen), 1);
    EVP_MD_CTX_free(c);
    if (corrupt)
        raw[20] ^= 1;
    sv_b64_encode(raw, sizeof(raw), b64, sizeof(b64));
    out = malloc(len + 400);
    memcpy(out, note, len);
    len += (size_t)sprintf(out + len, "\xe2\x80\x94 %s %s\n", name, b64);
    sworn_verify_write_rel(f->dir, rel, out, len);
    free(out);
    free(note);
}

static void test_witness_quorum(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    uint8_t pub[33], h[SV_HASH], pre[64];
    size_t publen = 32, pl;
    char b64[64], vkey[256], extra[600];
    const char *name = "witness.example";
    const char *files[] = {"checkpoint", "sworn/checkpoint/100", "sworn/checkpoint/300",
                           "sworn/checkpoint/600"};
    uint32_t id;
    json_object *rep;
    char *rec;

    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &k), 1);
    EVP_PKEY_CTX_free(kc);
    pub[0] = 0x04;
    assert_int_equal(EVP_PKEY_get_raw_public_key(k, pub + 1, &publen), 1);
    pl = (size_t)sprintf((char *)pre, "%s\n", name);
    memcpy(pre + pl, pub, 33);
    sv_sha256(pre, pl + 33, h);
    id = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    sv_b64_encode(pub, 33, b64, sizeof(b64));
    snprintf(vkey, sizeof(vkey), "%s+%08x+%s", name, id, b64);
    snprintf(extra, sizeof(extra), "witness w1 %s\ngroup all-of-them all w1\nquorum all-of-them\n",
             vkey);
    write_policy(f, "wpolicy", f->vkey, extra);

    /* No cosignatures: the quorum is not met. */
    rep = verify_json(f, "wpolicy", "good", NULL, 1);
    expect_fail(rep, "witness-quorum", "quorum-not-met");
    json_object_put(rep);
    /* Every checkpoint cosigned: it passes. */
    rec = copy_record(f, "good", "w");
    for (size_t i = 0; i < 4; i++) {
        char rel[128];

        snprintf(rel, sizeof(rel), "w/%s", files[i]);
        cosign_file(f, rel, k, name, id, 0);
    }
    rep = verify_json(f, "wpolicy", "w", NULL, 0);
    sworn_verify_expect_pass(rep, "witness-quorum");
    json_object_put(rep);
    free(rec);
    /* One cosignature that does not verify fails that checkpoint. */
    rec = copy_record(f, "good", "wbad");
    for (size_t i = 0; i < 4; i++) {
        char rel[128];

        snprintf(rel, sizeof(rel), "wbad/%s", files[i]);
        cosign_file(f, rel, k, name, id, i == 2);
    }
    rep = verify_json(f, "wpolicy", "wbad", NULL, 1);
    expect_fail(rep, "witness-quorum", "bad-cosignature");
    json_object_put(rep);
    free(rec);
    EVP_PKEY_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_good_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_and_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deleted_inserted_swapped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forged_and_foreign_signature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_rollback_and_fork, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_and_fork_proof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tiles_not_trusted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness_quorum, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
