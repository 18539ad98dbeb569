/*
 * test_verify_tamper.c -- the tamper suite: records made by the real stack (the `sworn-log`
 * binary: init, append, checkpoint, export-tiles), each mutated on a copy, each checked with
 * the real `sworn-verify` binary ($SWORN_VERIFY_BIN), which must exit 1 and name the check and
 * the reason of that mutation in its --json report. Also: exit statuses 0 and 2, the state file
 * (rollback and fork against it, updated only on success), `compare` and the fork proof,
 * witness cosignatures against a quorum, and hash tiles that the verifier recomputes rather
 * than trusts (GHSA-672p-m5jq-mrh8: never accept what was not recomputed). And the verifier
 * review's findings 3 (the state is the verified note, from memory, even when the record's
 * checkpoint or the state file changes during the run: see run_paused for how a run is paused
 * at a known point without a hook) and 7 (one key never counts twice toward a quorum or
 * threshold).
 */
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
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

/* ------------------------------------------------------------------------------------------ */
/* Finding 3: the state file is the note verified, from memory */

/*
 * Run argv (the real sworn-verify, with --json and without --no-progress) so that it stops at a
 * known point in its run, call mid(arg) there, and let it finish; OUT: its stdout (free it).
 * Returns its exit status.
 *
 * How it stops, deterministically and without any hook in the binary: sworn-verify draws its
 * progress bar on stderr when stderr is a terminal, first after the first entry bundle, so
 * after it read and verified every checkpoint and loaded the state, and before it stores the
 * state. Its stderr is a pseudo-terminal with TOSTOP set, of which it is a background process
 * group: its first write there stops it with SIGTTOU (POSIX job control). A session leader in
 * between (the terminal's controlling process) waits for that stop, lets the test act, clears
 * TOSTOP and continues it. Nothing sleeps: each step waits for the previous one's event.
 */
static int run_paused(const char *const *argv, void (*mid)(void *), void *arg, char **out)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY), outp[2], up[2], down[2], st;
    const char *slave;
    pid_t leader;
    char c = 0, *buf = NULL;
    size_t len = 0, cap = 0;

    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    slave = ptsname(m);
    assert_non_null(slave);
    assert_int_equal(pipe(outp), 0);
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    leader = fork();
    assert_true(leader >= 0);
    if (leader == 0) {
        struct termios t;
        pid_t v;
        int s, vs;

        if (setsid() < 0 || (s = open(slave, O_RDWR)) < 0 || tcgetattr(s, &t) != 0)
            _exit(120);
        t.c_lflag |= TOSTOP;
        if (tcsetattr(s, TCSANOW, &t) != 0)
            _exit(121);
        v = fork();
        if (v < 0)
            _exit(122);
        if (v == 0) {
            sigset_t none;

            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            signal(SIGTTOU, SIG_DFL);
            if (setpgid(0, 0) != 0 || dup2(s, 2) < 0 || dup2(outp[1], 1) < 0)
                _exit(123);
            execv(argv[0], (char *const *)argv);
            _exit(127);
        }
        (void)setpgid(v, v); /* also here, so it is in the background before it can write */
        if (waitpid(v, &vs, WUNTRACED) != v)
            _exit(124);
        if (WIFSTOPPED(vs)) {
            if (write(up[1], "s", 1) != 1 || read(down[0], &c, 1) != 1)
                _exit(125);
            t.c_lflag &= ~(tcflag_t)TOSTOP;
            if (tcsetattr(s, TCSANOW, &t) != 0 || kill(v, SIGCONT) != 0 || waitpid(v, &vs, 0) != v)
                _exit(126);
        } else if (write(up[1], "x", 1) != 1) {
            _exit(125);
        }
        _exit(WIFEXITED(vs) ? WEXITSTATUS(vs) : 128 + WTERMSIG(vs));
    }
    close(outp[1]);
    close(up[1]);
    close(down[0]);
    assert_int_equal(read(up[0], &c, 1), 1);
    if (c != 's')
        fail_msg("%s did not stop at its first progress line (it never drew one)", argv[0]);
    mid(arg);
    assert_int_equal(write(down[1], "g", 1), 1);
    for (;;) {
        ssize_t r;

        if (len + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 16384;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        r = read(outp[0], buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        assert_true(r >= 0);
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    assert_int_equal(waitpid(leader, &st, 0), leader);
    close(outp[0]);
    close(up[0]);
    close(down[1]);
    close(m);
    assert_true(WIFEXITED(st));
    *out = buf;
    return WEXITSTATUS(st);
}

struct swap {
    const struct fx *f;
    const char *rel;  /* the file to replace, relative to the test folder */
    const char *from; /* with this one's bytes (relative); NULL: a symbolic link to link_to */
    const char *link_to;
};

static void swap_file(void *arg)
{
    const struct swap *w = arg;
    char *dst = P(w->f, w->rel), tmp[4200];

    snprintf(tmp, sizeof(tmp), "%s.swap", dst);
    if (w->from != NULL) {
        size_t len;
        uint8_t *d = sworn_verify_read_rel(w->f->dir, w->from, &len);

        sworn_test_write_file(tmp, d, len, 0644);
        free(d);
    } else {
        assert_int_equal(symlink(w->link_to, tmp), 0);
    }
    assert_int_equal(rename(tmp, dst), 0);
    free(dst);
}

/* sworn-verify verify --json --policy policy --state state <record>, paused once (run_paused)
 * to swap one file; expects exit status want and returns the report. */
static json_object *verify_swapped(const struct fx *f, const char *record, const struct swap *w,
                                   int want)
{
    char *pol = P(f, "policy"), *st = P(f, "state"), *rec = P(f, record), *out;
    const char *argv[] = {verify_bin, "verify", "--json", "--policy", pol,
                          "--state",  st,       rec,      NULL};
    int rc = run_paused(argv, swap_file, (void *)w, &out);
    json_object *o = json_tokener_parse(out);

    if (rc != want || o == NULL)
        fail_msg("sworn-verify on %s: exit %d, expected %d; output:\n%s", record, rc, want, out);
    free(out);
    free(pol);
    free(st);
    free(rec);
    return o;
}

static void expect_state_is(const struct fx *f, const char *rel)
{
    size_t a, b;
    uint8_t *want = sworn_verify_read_rel(f->dir, rel, &a),
            *got = sworn_verify_read_rel(f->dir, "state", &b);

    if (a != b || memcmp(want, got, a) != 0)
        fail_msg("the state file is not the bytes of %s", rel);
    free(want);
    free(got);
}

/*
 * The attack of finding 3: the record's `checkpoint` (size 600) is swapped, while sworn-verify
 * runs, for its older checkpoint of size 100 (anyone who can write the record folder can). The
 * run verified 600, so the state must be the 600 note; before the fix it was the 100 note read
 * again at the end, after which a fork sharing only the first 100 entries passed.
 */
static void test_state_is_the_verified_note(void **state)
{
    struct fx *f = *state;
    char *db3 = P(f, "db3"), *key = P(f, "log.key");
    struct swap w = {f, "swap/checkpoint", "swap/sworn/checkpoint/100", NULL};
    json_object *rep;

    free(copy_record(f, "good", "swap"));
    rep = verify_swapped(f, "swap", &w, 0);
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 1);
    json_object_put(rep);
    expect_state_is(f, "good/checkpoint"); /* the note verified, not the one swapped in */

    /* The fork that shares only the first 100 entries fails against that state. */
    sworn_test_run_ok("init db3", NULL, log_bin, "init", "--db", db3, "--origin", ORIGIN, "--key",
                      key, "--key-name", KEY_NAME, NULL);
    append_lines(f, db3, "e", 0, 100);
    checkpoint(db3);
    append_lines(f, db3, "fork", 100, 700);
    checkpoint(db3);
    export_tiles(f, db3, NULL, "fork100");
    rep = verify_json(f, "policy", "fork100", NULL, 0); /* fine on its own */
    json_object_put(rep);
    rep = verify_json(f, "policy", "fork100", "state", 1);
    sworn_verify_expect_fail(rep, "state", "fork", "state (size 600)");
    json_object_put(rep);
    expect_state_is(f, "good/checkpoint");
    free(db3);
    free(key);
}

/*
 * The state never moves backwards, and is never a symbolic link: while a run verifies the
 * record at size 300, the state file is replaced (by another run, by another hand) with the
 * checkpoint of size 600: it is kept and the run fails `rollback` (before the fix the run wrote
 * 300 over it). Replaced with a symbolic link: it is kept and the run is unreadable (before,
 * the rename replaced the link). Replaced with the size-100 note of the same tree: the run
 * stores its own 300 (moving forward, consistent). Replaced with another tree's checkpoint of
 * size 300: kept, and the run fails `fork`.
 */
static void test_state_changed_during_run(void **state)
{
    struct fx *f = *state;
    char *db = P(f, "db"), *st = P(f, "state"), target[4200];
    struct swap newer = {f, "state", "good/checkpoint", NULL};
    struct swap older = {f, "state", "good/sworn/checkpoint/100", NULL};
    struct swap link = {f, "state", NULL, target};
    struct swap forked = {f, "state", "fork300/checkpoint", NULL};
    char *db4 = P(f, "db4"), *key = P(f, "log.key");
    struct stat sb;
    json_object *rep;

    export_tiles(f, db, "300", "old");
    /* Newer during the run: kept, rollback. */
    rep = verify_swapped(f, "old", &newer, 1);
    sworn_verify_expect_fail(rep, "state", "rollback", "state");
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 0);
    json_object_put(rep);
    expect_state_is(f, "good/checkpoint");

    /* A symbolic link during the run: kept, unreadable (exit 2). */
    unlink(st);
    snprintf(target, sizeof(target), "%s/good/checkpoint", f->dir);
    rep = verify_swapped(f, "old", &link, 2);
    assert_string_equal(json_object_get_string(sworn_verify_get(rep, "result")), "unreadable");
    json_object_put(rep);
    assert_int_equal(lstat(st, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    unlink(st);

    /* Older (size 100 of the same tree) during the run: the run's own 300 is stored. */
    rep = verify_swapped(f, "old", &older, 0);
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 1);
    json_object_put(rep);
    expect_state_is(f, "old/checkpoint");

    /* Another tree of the same size during the run (a fork's checkpoint of size 300): kept,
     * fork. */
    sworn_test_run_ok("init db4", NULL, log_bin, "init", "--db", db4, "--origin", ORIGIN, "--key",
                      key, "--key-name", KEY_NAME, NULL);
    append_lines(f, db4, "e", 0, 100);
    append_lines(f, db4, "other", 100, 300);
    checkpoint(db4);
    export_tiles(f, db4, NULL, "fork300");
    rep = verify_swapped(f, "old", &forked, 1);
    sworn_verify_expect_fail(rep, "state", "fork", "state");
    assert_int_equal(json_object_get_boolean(sworn_verify_get(rep, "state_updated")), 0);
    json_object_put(rep);
    expect_state_is(f, "fork300/checkpoint");

    /* And a state that is a symbolic link from the start is refused (exit 2), not followed. */
    unlink(st);
    assert_int_equal(symlink(target, st), 0);
    rep = verify_json(f, "policy", "old", "state", 2);
    json_object_put(rep);
    assert_int_equal(lstat(st, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    free(db);
    free(db4);
    free(key);
    free(st);
}

/* ------------------------------------------------------------------------------------------ */
/* Finding 7: one key never counts twice toward a quorum or a threshold */

/* The C2SP verifier key of Ed25519 key k under name, of type (0x01 or 0x04); OUT: its id. */
static void ed_vkey(EVP_PKEY *k, const char *name, uint8_t type, char *out, size_t cap,
                    uint32_t *id)
{
    uint8_t pub[33], h[SV_HASH], pre[300];
    size_t publen = 32, pl;
    char b64[64];

    pub[0] = type;
    assert_int_equal(EVP_PKEY_get_raw_public_key(k, pub + 1, &publen), 1);
    pl = (size_t)snprintf((char *)pre, sizeof(pre), "%s\n", name);
    memcpy(pre + pl, pub, 33);
    sv_sha256(pre, pl + 33, h);
    *id = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    sv_b64_encode(pub, 33, b64, sizeof(b64));
    snprintf(out, cap, "%s+%08x+%s", name, *id, b64);
}

static EVP_PKEY *ed_keygen(void)
{
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);

    assert_int_equal(EVP_PKEY_keygen_init(kc), 1);
    assert_int_equal(EVP_PKEY_keygen(kc, &k), 1);
    EVP_PKEY_CTX_free(kc);
    return k;
}

/* Cosign every checkpoint file of record rec with k under name (type 0x04). */
static void cosign_record(const struct fx *f, const char *rec, EVP_PKEY *k, const char *name)
{
    const char *files[] = {"checkpoint", "sworn/checkpoint/100", "sworn/checkpoint/300",
                           "sworn/checkpoint/600"};
    char vk[300];
    uint32_t id;

    ed_vkey(k, name, 0x04, vk, sizeof(vk), &id);
    for (size_t i = 0; i < 4; i++) {
        char rel[128];

        snprintf(rel, sizeof(rel), "%s/%s", rec, files[i]);
        cosign_file(f, rel, k, name, id, 0);
    }
}

/*
 * Issue 18: the quorum is required of the newest checkpoint, of the --state checkpoint and of
 * both sides of compare; a history checkpoint (sworn/checkpoint/<size>) a witness missed while
 * it was down is counted, not failed, but a cosignature line of a policy witness on it must
 * still verify. Checkpoints: `checkpoint` (600) and history 100, 300, 600.
 */
static void test_witness_quorum_newest(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen();
    const char *name = "witness.example";
    char vk[300], extra[600];
    char *pol = P(f, "wq"), *wn = NULL, *good = P(f, "good"), *st = P(f, "wq-state");
    uint32_t id;
    json_object *rep, *wq;
    struct sworn_test_run r;
    uint8_t *cp;
    size_t len;

    ed_vkey(k, name, 0x04, vk, sizeof(vk), &id);
    snprintf(extra, sizeof(extra), "witness w1 %s\nquorum w1\n", vk);
    write_policy(f, "wq", f->vkey, extra);

    /* (a) Only the newest cosigned: it passes; the three history checkpoints are counted, in
     * the JSON report's field and in the witness-quorum note of both reports. */
    wn = copy_record(f, "good", "wn");
    cosign_file(f, "wn/checkpoint", k, name, id, 0);
    rep = verify_json(f, "wq", "wn", NULL, 0);
    sworn_verify_expect_pass(rep, "witness-quorum");
    wq = sworn_verify_check(rep, "witness-quorum");
    assert_int_equal(json_object_get_int64(sworn_verify_get(wq, "count")), 4);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "checkpoints_below_quorum")), 3);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "witness_alarms")), 0);
    assert_non_null(strstr(json_object_get_string(sworn_verify_get(wq, "note")),
                           "3 older checkpoint(s) below the witness quorum"));
    json_object_put(rep);
    sworn_test_runv(&r, NULL, verify_bin, "verify", "--policy", pol, wn, NULL);
    if (r.status != 0 ||
        strstr(r.out, "note: 3 older checkpoint(s) below the witness quorum") == NULL ||
        strstr(r.out, "all checks passed") == NULL)
        fail_msg("text report: exit %d:\n%s%s", r.status, r.out, r.err);
    sworn_test_run_free(&r);
    /* One more cosigned: one fewer counted. */
    cosign_file(f, "wn/sworn/checkpoint/300", k, name, id, 0);
    rep = verify_json(f, "wq", "wn", NULL, 0);
    assert_int_equal(json_object_get_int64(sworn_verify_get(rep, "checkpoints_below_quorum")), 2);
    json_object_put(rep);

    /* (b) Every history checkpoint cosigned and the newest not: quorum-not-met at the newest. */
    free(copy_record(f, "good", "wh"));
    cosign_file(f, "wh/sworn/checkpoint/100", k, name, id, 0);
    cosign_file(f, "wh/sworn/checkpoint/300", k, name, id, 0);
    cosign_file(f, "wh/sworn/checkpoint/600", k, name, id, 0);
    rep = verify_json(f, "wq", "wh", NULL, 1);
    sworn_verify_expect_fail(rep, "witness-quorum", "quorum-not-met", "checkpoint");
    json_object_put(rep);

    /* (c) The newest cosigned, and a history checkpoint whose only cosignature line, under the
     * policy witness's name and key id, does not verify: bad-cosignature, though the quorum is
     * not required there. */
    for (int i = 0; i < 2; i++) {
        const char *rel = i == 0 ? "wf/sworn/checkpoint/100" : "wf/sworn/checkpoint/600";

        char *wf = copy_record(f, "good", "wf");

        cosign_file(f, "wf/checkpoint", k, name, id, 0);
        cosign_file(f, rel, k, name, id, 1);
        rep = verify_json(f, "wq", "wf", NULL, 1);
        sworn_verify_expect_fail(rep, "witness-quorum", "bad-cosignature", rel + 3);
        json_object_put(rep);
        sworn_test_rmtree(wf);
        free(wf);
    }

    /* (d) A state the quorum does not meet is refused (exit 2): the record's own uncosigned
     * newest, and an uncosigned history checkpoint, though the history of a record passes
     * without its cosignatures. A passing run stores the cosigned newest. */
    for (int i = 0; i < 2; i++) {
        cp = sworn_verify_read_rel(f->dir, i == 0 ? "good/checkpoint" : "wn/sworn/checkpoint/100",
                                   &len);
        sworn_test_write_file(st, cp, len, 0600);
        free(cp);
        rep = verify_json(f, "wq", "wn", "wq-state", 2);
        assert_string_equal(json_object_get_string(sworn_verify_get(rep, "result")), "unreadable");
        assert_non_null(strstr(json_object_get_string(sworn_verify_get(rep, "error")), "quorum"));
        json_object_put(rep);
    }
    unlink(st);
    rep = verify_json(f, "wq", "wn", "wq-state", 0);
    assert_true(json_object_get_boolean(sworn_verify_get(rep, "state_updated")));
    json_object_put(rep);
    rep = verify_json(f, "wq", "wn", "wq-state", 0);
    sworn_verify_expect_pass(rep, "state");
    json_object_put(rep);

    /* compare: both newest checkpoints must meet the quorum; the history is not read. */
    {
        char *wn2 = copy_record(f, "wn", "wn2");

        sworn_test_runv(&r, NULL, verify_bin, "compare", "--policy", pol, wn, wn2, NULL);
        if (r.status != 0)
            fail_msg("compare of two cosigned records: exit %d: %s%s", r.status, r.out, r.err);
        sworn_test_run_free(&r);
        sworn_test_runv(&r, NULL, verify_bin, "compare", "--policy", pol, wn, good, NULL);
        if (r.status != 2 || strstr(r.out, "quorum-not-met") == NULL)
            fail_msg("compare with an uncosigned record: exit %d: %s%s", r.status, r.out, r.err);
        sworn_test_run_free(&r);
        free(wn2);
    }
    free(wn);
    free(good);
    free(pol);
    free(st);
    EVP_PKEY_free(k);
}

/* sworn-verify with policy `name` must refuse the policy (exit 2) naming line `line` and saying
 * `needle`. */
static void expect_policy_refused(const struct fx *f, const char *name, const char *record,
                                  int line, const char *needle)
{
    char *pol = P(f, name), *rec = P(f, record), ln[32];
    struct sworn_test_run r;

    sworn_test_runv(&r, NULL, verify_bin, "verify", "--json", "--policy", pol, rec, NULL);
    snprintf(ln, sizeof(ln), "line %d:", line);
    if (r.status != 2 || strstr(r.err, ln) == NULL || strstr(r.err, needle) == NULL)
        fail_msg("policy %s: exit %d, expected 2 with '%s' and '%s'; stdout:\n%s\nstderr:\n%s",
                 name, r.status, ln, needle, r.out, r.err);
    sworn_test_run_free(&r);
    free(pol);
    free(rec);
}

/* A signed keyring note: text, then one signature line per name, all by the one key k. */
static void write_keyring(const struct fx *f, const char *rel, const char *text, EVP_PKEY *k,
                          const char *const *names, size_t nnames)
{
    char note[8192], b64[200];
    size_t n = strlen(text);

    memcpy(note, text, n);
    note[n++] = '\n';
    for (size_t i = 0; i < nnames; i++) {
        EVP_MD_CTX *c = EVP_MD_CTX_new();
        uint8_t raw[4 + 64];
        size_t siglen = 64;
        char vk[300];
        uint32_t id;

        ed_vkey(k, names[i], 0x01, vk, sizeof(vk), &id);
        for (int j = 0; j < 4; j++)
            raw[j] = (uint8_t)(id >> (24 - 8 * j));
        assert_int_equal(EVP_DigestSignInit(c, NULL, NULL, NULL, k), 1);
        assert_int_equal(EVP_DigestSign(c, raw + 4, &siglen, (const uint8_t *)text, strlen(text)),
                         1);
        EVP_MD_CTX_free(c);
        sv_b64_encode(raw, sizeof(raw), b64, sizeof(b64));
        n += (size_t)snprintf(note + n, sizeof(note) - n, "\xe2\x80\x94 %s %s\n", names[i], b64);
    }
    sworn_verify_write_rel(f->dir, rel, note, n);
}

/*
 * Finding 7, one test per way in. Before the fix each passed with one key's signatures (exit 0);
 * now a policy that lists one key twice is refused with its line number (exit 2), and a keyring
 * version that does fails `keys` with `keyring-root-twice`. The policy's lines: 1 a comment,
 * 2 origin, 3 log, then the extra lines (write_policy).
 */

/* Two witness lines, one key under two names, `group g 2 w1 w2`, one holder (one stolen key)
 * cosigning every checkpoint under both names. */
static void test_witness_key_twice(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen();
    char va[300], vb[300], extra[2048];
    uint32_t id;

    ed_vkey(k, "wa.example", 0x04, va, sizeof(va), &id);
    ed_vkey(k, "wb.example", 0x04, vb, sizeof(vb), &id);
    free(copy_record(f, "good", "w2"));
    cosign_record(f, "w2", k, "wa.example");
    cosign_record(f, "w2", k, "wb.example");
    snprintf(extra, sizeof(extra), "witness w1 %s\nwitness w2 %s\ngroup g 2 w1 w2\nquorum g\n", va,
             vb);
    write_policy(f, "p-w2", f->vkey, extra);
    expect_policy_refused(f, "p-w2", "w2", 5, "the same key as witness w1");
    /* Also when the second line spells the key as type 0x01 (an Ed25519 note key): it is the
     * same public key. */
    ed_vkey(k, "wb.example", 0x01, vb, sizeof(vb), &id);
    snprintf(extra, sizeof(extra), "witness w1 %s\nwitness w2 %s\ngroup g 2 w1 w2\nquorum g\n", va,
             vb);
    write_policy(f, "p-w2b", f->vkey, extra);
    expect_policy_refused(f, "p-w2b", "w2", 5, "the same key as witness w1");
    EVP_PKEY_free(k);
}

/* Nested groups that repeat a witness: group a (w1) and group b (w1 or w2) meet `group q 2 a b`
 * with w1's cosignature alone. The same groups without the overlap still work. */
static void test_nested_groups_repeat_witness(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen(), *k2 = ed_keygen();
    char va[300], v2[300], extra[2048];
    uint32_t id;
    json_object *rep;

    ed_vkey(k, "wa.example", 0x04, va, sizeof(va), &id);
    ed_vkey(k2, "w2.example", 0x04, v2, sizeof(v2), &id);
    free(copy_record(f, "good", "w1only"));
    cosign_record(f, "w1only", k, "wa.example");
    snprintf(extra, sizeof(extra),
             "witness w1 %s\nwitness w2 %s\ngroup a any w1\ngroup b any w1 w2\ngroup q 2 a b\n"
             "quorum q\n",
             va, v2);
    write_policy(f, "p-nest", f->vkey, extra);
    expect_policy_refused(f, "p-nest", "w1only", 8, "names witness 'w1' that an earlier member");
    /* A group that repeats a witness beside the group holding it: `group q 2 a w1`. */
    snprintf(extra, sizeof(extra),
             "witness w1 %s\nwitness w2 %s\ngroup a any w1 w2\ngroup q 2 a w1\nquorum q\n", va, v2);
    write_policy(f, "p-nest2", f->vkey, extra);
    expect_policy_refused(f, "p-nest2", "w1only", 7, "names witness 'w1' that an earlier member");

    free(copy_record(f, "good", "w12"));
    cosign_record(f, "w12", k, "wa.example");
    cosign_record(f, "w12", k2, "w2.example");
    snprintf(extra, sizeof(extra),
             "witness w1 %s\nwitness w2 %s\ngroup a any w1\ngroup b any w2\ngroup q 2 a b\n"
             "quorum q\n",
             va, v2);
    write_policy(f, "p-disjoint", f->vkey, extra);
    rep = verify_json(f, "p-disjoint", "w12", NULL, 0);
    sworn_verify_expect_pass(rep, "witness-quorum");
    json_object_put(rep);
    rep = verify_json(f, "p-disjoint", "w1only", NULL, 1);
    expect_fail(rep, "witness-quorum", "quorum-not-met");
    json_object_put(rep);
    EVP_PKEY_free(k);
    EVP_PKEY_free(k2);
}

/* The log's own key as a witness (type 0x01, the log's name and id): the log's signature line
 * is then its own cosignature, and the operator alone meets the quorum. */
static void test_log_key_as_witness(void **state)
{
    struct fx *f = *state;
    char extra[2048];

    snprintf(extra, sizeof(extra), "witness self %s\nquorum self\n", f->vkey);
    write_policy(f, "p-self", f->vkey, extra);
    expect_policy_refused(f, "p-self", "good", 4, "the same key as log key");
}

/* The SPKI of the log's key (from its verifier key) as base64, and its key id as hex. */
static void log_spki(const struct fx *f, char *spki_b64, size_t cap, char hex[65])
{
    static const uint8_t spki_ed[12] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                        0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
    uint8_t raw[300], spki[300], h[SV_HASH];
    size_t spki_len;
    const char *b64 = strchr(strchr(f->vkey, '+') + 1, '+') + 1; /* base64 may hold '+' */
    long n = sv_b64_decode(b64, strlen(b64), raw, sizeof(raw));

    assert_true(n > 1);
    if (raw[0] == 0x01) { /* Ed25519: the SPKI is a fixed prefix and the key */
        assert_int_equal(n, 33);
        memcpy(spki, spki_ed, 12);
        memcpy(spki + 12, raw + 1, 32);
        spki_len = 44;
    } else { /* 0x02: the key is the DER SPKI */
        assert_int_equal(raw[0], 0x02);
        memcpy(spki, raw + 1, (size_t)n - 1);
        spki_len = (size_t)n - 1;
    }
    sv_sha256(spki, spki_len, h);
    sv_hex(h, SV_HASH, hex);
    sv_b64_encode(spki, spki_len, spki_b64, cap);
}

/* A keyring version 1 that lists one root key under two names with threshold 2, signed by that
 * one key under both names (`sworn-hsm keyring verify` refuses it); the log's key is its
 * checkpoint key. The same version with that root once and threshold 1 passes. */
static void test_keyring_root_twice(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen();
    char ra[300], rb[300], text[4096], extra[2048], spki_b64[400], hex[65];
    const char *both[] = {"root-a.example", "root-b.example"};
    uint32_t id;
    json_object *rep;

    ed_vkey(k, both[0], 0x01, ra, sizeof(ra), &id);
    ed_vkey(k, both[1], 0x01, rb, sizeof(rb), &id);
    log_spki(f, spki_b64, sizeof(spki_b64), hex);
    snprintf(text, sizeof(text),
             "sworn keyring v1\nversion 1\nthreshold 2\nroot %s\nroot %s\nkey %s checkpoint "
             "active 2020-01-01T00:00:00Z - %s\n",
             ra, rb, hex, spki_b64);
    write_keyring(f, "kr-twice", text, k, both, 2);
    snprintf(extra, sizeof(extra), "keyring-root %s\nkeyring-threshold 1\nkeyring kr-twice\n", ra);
    write_policy(f, "p-kr", f->vkey, extra);
    rep = verify_json(f, "p-kr", "good", NULL, 1);
    sworn_verify_expect_fail(rep, "keys", "keyring-root-twice", "keyring");
    json_object_put(rep);

    snprintf(text, sizeof(text),
             "sworn keyring v1\nversion 1\nthreshold 1\nroot %s\nkey %s checkpoint active "
             "2020-01-01T00:00:00Z - %s\n",
             ra, hex, spki_b64);
    write_keyring(f, "kr-one", text, k, both, 1);
    snprintf(extra, sizeof(extra), "keyring-root %s\nkeyring-threshold 1\nkeyring kr-one\n", ra);
    write_policy(f, "p-kr1", f->vkey, extra);
    rep = verify_json(f, "p-kr1", "good", NULL, 0);
    sworn_verify_expect_pass(rep, "keys");
    json_object_put(rep);
    EVP_PKEY_free(k);
}

/* The policy's own roots: one key under two names against `keyring-threshold 2`, and version 1
 * signed by it under both names. */
static void test_policy_roots_twice(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen();
    char ra[300], rb[300], text[4096], extra[2048], spki_b64[400], hex[65];
    const char *both[] = {"root-a.example", "root-b.example"};
    uint32_t id;

    ed_vkey(k, both[0], 0x01, ra, sizeof(ra), &id);
    ed_vkey(k, both[1], 0x01, rb, sizeof(rb), &id);
    log_spki(f, spki_b64, sizeof(spki_b64), hex);
    snprintf(text, sizeof(text),
             "sworn keyring v1\nversion 1\nthreshold 1\nroot %s\nkey %s checkpoint active "
             "2020-01-01T00:00:00Z - %s\n",
             ra, hex, spki_b64);
    write_keyring(f, "kr-one", text, k, both, 2);
    snprintf(extra, sizeof(extra),
             "keyring-root %s\nkeyring-root %s\nkeyring-threshold 2\nkeyring kr-one\n", ra, rb);
    write_policy(f, "p-roots", f->vkey, extra);
    expect_policy_refused(f, "p-roots", "good", 5, "the same key as root root-a.example");
    EVP_PKEY_free(k);
}

/*
 * Issue 13, finding 6: an opaque log's entries carry no time, so the time a checkpoint was signed
 * is unknown. It was checked at time 0, where only a revoked key was refused: the log's key
 * retired in 2021, or valid only from 2099, passed `keys` (exit 0). Now an unknown time needs a
 * key valid now (active, valid-from not after the verifier's clock): both fail
 * `checkpoint-key-time-unknown`; the key active since 2020 passes (test_keyring_root_twice).
 */
static void test_keyring_no_time(void **state)
{
    struct fx *f = *state;
    EVP_PKEY *k = ed_keygen();
    char ra[300], text[4096], extra[2048], spki_b64[400], hex[65];
    const char *names[] = {"root-a.example"};
    const char *lines[] = {"retired 2020-01-01T00:00:00Z 2021-01-01T00:00:00Z",
                           "active 2099-01-01T00:00:00Z -"};
    uint32_t id;
    json_object *rep;

    ed_vkey(k, names[0], 0x01, ra, sizeof(ra), &id);
    log_spki(f, spki_b64, sizeof(spki_b64), hex);
    for (size_t i = 0; i < 2; i++) {
        char kr[32], pol[32];

        snprintf(kr, sizeof(kr), "kr-nt-%zu", i);
        snprintf(pol, sizeof(pol), "p-nt-%zu", i);
        snprintf(text, sizeof(text),
                 "sworn keyring v1\nversion 1\nthreshold 1\nroot %s\nkey %s checkpoint %s %s\n", ra,
                 hex, lines[i], spki_b64);
        write_keyring(f, kr, text, k, names, 1);
        snprintf(extra, sizeof(extra), "keyring-root %s\nkeyring-threshold 1\nkeyring %s\n", ra,
                 kr);
        write_policy(f, pol, f->vkey, extra);
        rep = verify_json(f, pol, "good", NULL, 1);
        sworn_verify_expect_fail(rep, "keys", "checkpoint-key-time-unknown", "checkpoint 100");
        json_object_put(rep);
    }
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
        cmocka_unit_test_setup_teardown(test_witness_quorum_newest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keyring_no_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_is_the_verified_note, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_changed_during_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_witness_key_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_groups_repeat_witness, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_key_as_witness, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keyring_root_twice, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_roots_twice, setup, teardown),
    };

    log_bin = sworn_test_bin("SWORN_LOG_BIN");
    verify_bin = sworn_test_bin("SWORN_VERIFY_BIN");
    return cmocka_run_group_tests(tests, NULL, NULL);
}
