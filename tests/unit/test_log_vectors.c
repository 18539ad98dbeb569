/*
 * test_log_vectors.c -- the log against logs and proofs that other people's implementations made
 * (../shared/vectors, read in place, never copied):
 *   - transparency-dev/merkle: the eight reference leaves give the reference roots, and our
 *     generated proofs equal every happy-path inclusion and consistency vector;
 *   - transparency-dev/tessera: a log of the same 15 entries signed with the same key yields
 *     byte-identical checkpoints for every size, and byte-identical tiles and entry bundles;
 *     tessera's folder reads back through sworn_tiledir_import, and tampered copies do not.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "encoding.h"
#include "err.h"
#include "logstore.h"
#include "merkle.h"
#include "notesign.h"
#include "tiledir.h"
#include "testutil.h"

/* The eight leaves of leaves-and-roots.txt, and the root of every prefix. */
struct reference {
    uint8_t data[8][64];
    size_t len[8];
    uint8_t root[9][SWORN_HASH_LEN];
};

static void load_reference(struct reference *ref)
{
    char *path =
        sworn_test_path(sworn_test_vectors(), "transparency-dev-merkle/leaves-and-roots.txt");
    char *text = sworn_test_read_file(path, NULL);
    int leaves = 0, roots = 0;

    for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        unsigned n;
        char hex[200];

        if (sscanf(line, "leaf %u data=%199s", &n, hex) == 2 && n < 8) {
            ref->len[n] = strcmp(hex, "(empty)") == 0 ? 0 : strlen(hex) / 2;
            assert_int_equal(sworn_hex_decode(hex, 2 * ref->len[n], ref->data[n], ref->len[n]), 0);
            leaves++;
        } else if (sscanf(line, "root size=%u %199s", &n, hex) == 2 && n <= 8) {
            assert_int_equal(sworn_hex_decode(hex, strlen(hex), ref->root[n], SWORN_HASH_LEN), 0);
            roots++;
        }
    }
    assert_int_equal(leaves, 8);
    assert_int_equal(roots, 9);
    free(text);
    free(path);
}

static void decode_proof(json_object *arr, uint8_t *out, size_t *count)
{
    size_t n = arr ? json_object_array_length(arr) : 0;

    assert_true(n <= SWORN_MERKLE_MAX_PROOF);
    for (size_t i = 0; i < n; i++)
        sworn_test_b64_hash(json_object_get_string(json_object_array_get_idx(arr, i)),
                            out + i * SWORN_HASH_LEN);
    *count = n;
}

static int64_t json_int(json_object *o, const char *key)
{
    json_object *v;

    assert_true(json_object_object_get_ex(o, key, &v));
    return json_object_get_int64(v);
}

/* Compare every happy-path vector of one kind (inclusion or consistency) with our own proofs. */
static int compare_vectors_in(struct sworn_log *log, const char *dir, int consistency)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int compared = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char *path;
        json_object *o, *want_err, *proof_json;
        uint8_t want[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN],
            got[SWORN_MERKLE_MAX_PROOF * SWORN_HASH_LEN];
        size_t want_count, got_count;

        if (e->d_name[0] == '.')
            continue;
        path = sworn_test_path(dir, e->d_name);
        if (e->d_type == DT_DIR) {
            compared += compare_vectors_in(log, path, consistency);
            free(path);
            continue;
        }
        o = json_object_from_file(path);
        assert_non_null(o);
        if (!json_object_object_get_ex(o, "wantErr", &want_err) ||
            json_object_get_boolean(want_err)) {
            json_object_put(o);
            free(path);
            continue;
        }
        json_object_object_get_ex(o, "proof", &proof_json);
        decode_proof(proof_json, want, &want_count);
        if (consistency) {
            uint64_t size1 = (uint64_t)json_int(o, "size1"), size2 = (uint64_t)json_int(o, "size2");

            if (size1 == 0 || size2 > 8) {
                json_object_put(o);
                free(path);
                continue;
            }
            if (sworn_log_prove_consistency(log, size1, size2, got, SWORN_MERKLE_MAX_PROOF,
                                            &got_count) != 0)
                fail_msg("%s: %s", path, sworn_err_msg());
        } else {
            uint64_t index = (uint64_t)json_int(o, "leafIdx"),
                     size = (uint64_t)json_int(o, "treeSize");

            if (size > 8) {
                json_object_put(o);
                free(path);
                continue;
            }
            if (sworn_log_prove_inclusion(log, index, size, got, SWORN_MERKLE_MAX_PROOF,
                                          &got_count) != 0)
                fail_msg("%s: %s", path, sworn_err_msg());
        }
        if (got_count != want_count || memcmp(got, want, got_count * SWORN_HASH_LEN) != 0)
            fail_msg("%s: our proof differs from the vector's", path);
        compared++;
        json_object_put(o);
        free(path);
    }
    closedir(d);
    return compared;
}

/* The 8 reference leaves give the reference roots, and our proofs equal the vectors' proofs. */
static void test_vectors_roots_and_proofs(void **state)
{
    struct sworn_test_log *f = *state;
    struct reference ref;
    uint8_t root[SWORN_HASH_LEN];
    char *dir;
    int n;

    load_reference(&ref);
    assert_int_equal(sworn_log_create(f->db, "test.sworn.example/log", &f->log), 0);
    for (uint64_t i = 0; i < 8; i++) {
        sworn_test_append(f->log, ref.data[i], ref.len[i], i);
        /* Integrate after every append, so each prefix tree is built incrementally. */
        assert_int_equal(sworn_log_integrate(f->log, NULL), 0);
        assert_int_equal(sworn_log_root(f->log, i + 1, root), 0);
        assert_memory_equal(root, ref.root[i + 1], SWORN_HASH_LEN);
    }
    for (uint64_t size = 0; size <= 8; size++) {
        assert_int_equal(sworn_log_root(f->log, size, root), 0);
        assert_memory_equal(root, ref.root[size], SWORN_HASH_LEN);
    }
    dir = sworn_test_path(sworn_test_vectors(), "transparency-dev-merkle/testdata/inclusion");
    n = compare_vectors_in(f->log, dir, 0);
    printf("inclusion: %d happy-path vectors equal our proofs\n", n);
    assert_true(n >= 5);
    free(dir);
    dir = sworn_test_path(sworn_test_vectors(), "transparency-dev-merkle/testdata/consistency");
    n = compare_vectors_in(f->log, dir, 1);
    printf("consistency: %d happy-path vectors equal our proofs\n", n);
    assert_true(n >= 4);
    free(dir);
}

/*
 * Tessera's test log: its inputs are the 15 words below and the key of tessera's
 * testdata/build_log.sh (a published test key). Everything expected is read from the vectors.
 */
static const char *const tessera_words[15] = {"one",    "two",   "three",    "four",    "five",
                                              "six",    "seven", "eit",      "nain",    "ten",
                                              "ileven", "twelf", "threeten", "fourten", "fivten"};
static const char tessera_skey[] =
    "PRIVATE+KEY+example.com/log/testdata+33d7b496+AeymY/SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg";
static const char tessera_vkey[] =
    "example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx";

static char *tessera_dir(void)
{
    return sworn_test_path(sworn_test_vectors(), "tessera-testdata/testdata/log");
}

/* Compare a file we wrote with the vector file of the same relative path. */
static void assert_same_file(const char *ours_dir, const char *theirs_dir, const char *rel)
{
    char *ours_path = sworn_test_path(ours_dir, rel),
         *theirs_path = sworn_test_path(theirs_dir, rel);
    size_t ours_len, theirs_len;
    char *ours = sworn_test_read_file_opt(ours_path, &ours_len);
    char *theirs = sworn_test_read_file(theirs_path, &theirs_len);

    if (ours == NULL)
        fail_msg("we did not write %s", rel);
    if (ours_len != theirs_len || memcmp(ours, theirs, ours_len) != 0)
        fail_msg("%s differs from tessera's", rel);
    free(ours);
    free(theirs);
    free(ours_path);
    free(theirs_path);
}

static void test_tessera_byte_identical(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_signer signer = {0};
    struct sworn_note_signer *signers[1] = {&signer};
    char *vectors = tessera_dir();
    char *key = sworn_test_path(f->dir, "tessera.key");
    char note[4096];
    size_t note_len;

    sworn_test_write_file(key, tessera_skey, strlen(tessera_skey), 0600);
    if (sworn_note_signer_open_file(key, NULL, &signer) != 0)
        fail_msg("open tessera key: %s", sworn_err_msg());
    assert_int_equal(sworn_log_create(f->db, "example.com/log/testdata", &f->log), 0);
    for (uint64_t n = 0; n <= 15; n++) {
        char rel[64], *want, *out_dir, name[32];
        size_t want_len;
        uint64_t size;

        if (n > 0)
            sworn_test_append(f->log, tessera_words[n - 1], strlen(tessera_words[n - 1]), n - 1);
        if (sworn_log_checkpoint(f->log, signers, 1, note, sizeof(note), &note_len, &size) != 0)
            fail_msg("checkpoint %llu: %s", (unsigned long long)n, sworn_err_msg());
        assert_int_equal(size, n);
        snprintf(rel, sizeof(rel), "checkpoint.%llu", (unsigned long long)n);
        {
            char *path = sworn_test_path(vectors, rel);
            want = sworn_test_read_file(path, &want_len);
            free(path);
        }
        if (note_len != want_len || memcmp(note, want, note_len) != 0)
            fail_msg("our %s differs from tessera's:\n%s\nwant:\n%s", rel, note, want);
        free(want);

        /* The exported folder for this size holds tessera's tiles and bundles byte for byte. */
        snprintf(name, sizeof(name), "tiles-%llu", (unsigned long long)n);
        out_dir = sworn_test_path(f->dir, name);
        if (sworn_tiledir_export(f->log, n, out_dir, &size) != 0)
            fail_msg("export %llu: %s", (unsigned long long)n, sworn_err_msg());
        assert_int_equal(size, n);
        snprintf(rel, sizeof(rel), "checkpoint.%llu", (unsigned long long)n);
        {
            char *ours_path = sworn_test_path(out_dir, "checkpoint"),
                 *theirs_path = sworn_test_path(vectors, rel);
            char *ours = sworn_test_read_file(ours_path, &note_len);
            char *theirs = sworn_test_read_file(theirs_path, &want_len);
            assert_int_equal(note_len, want_len);
            assert_memory_equal(ours, theirs, want_len);
            free(ours);
            free(theirs);
            free(ours_path);
            free(theirs_path);
        }
        if (n > 0) {
            snprintf(rel, sizeof(rel), "tile/0/000.p/%llu", (unsigned long long)n);
            assert_same_file(out_dir, vectors, rel);
            snprintf(rel, sizeof(rel), "tile/entries/000.p/%llu", (unsigned long long)n);
            assert_same_file(out_dir, vectors, rel);
        }
        free(out_dir);
    }
    /* tessera's `checkpoint` is its newest: size 15. */
    {
        char *ours_path = sworn_test_path(f->dir, "tiles-15");
        assert_same_file(ours_path, vectors, "checkpoint");
        free(ours_path);
    }
    sworn_note_signer_close(&signer);
    free(key);
    free(vectors);
}

static void load_tessera_vkey(struct sworn_note_verifier *v)
{
    assert_int_equal(sworn_note_verifier_parse(tessera_vkey, strlen(tessera_vkey), v), 0);
}

/* tessera's folder, read back with its published key: 15 entries, the words, the same root. */
static void test_tessera_import(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_verifier v;
    char *vectors = tessera_dir();

    load_tessera_vkey(&v);
    if (sworn_tiledir_import(vectors, &v, 1, f->db, &f->log) != 0)
        fail_msg("import tessera: %s", sworn_err_msg());
    assert_int_equal(sworn_log_tree_size(f->log), 15);
    assert_string_equal(sworn_log_origin(f->log), "example.com/log/testdata");
    for (uint64_t i = 0; i < 15; i++) {
        uint8_t buf[64];
        size_t len;

        assert_int_equal(sworn_log_read_entry(f->log, i, buf, sizeof(buf), &len), 0);
        assert_int_equal(len, strlen(tessera_words[i]));
        assert_memory_equal(buf, tessera_words[i], len);
    }
    free(vectors);
}

/* Copy the three files of tessera's size-15 folder that import reads into a scratch folder. */
static char *scratch_copy(const char *root)
{
    static const char *const files[] = {"checkpoint", "tile/0/000.p/15", "tile/entries/000.p/15"};
    char *vectors = tessera_dir();
    char *dir = sworn_test_path(root, "copy");
    char *sub;

    sub = sworn_test_path(dir, "tile/0/000.p");
    assert_int_equal(system(NULL) != 0, 1);
    {
        char cmd[8192];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s/tile/0/000.p' '%s/tile/entries/000.p'", dir, dir);
        assert_int_equal(system(cmd), 0);
    }
    for (size_t i = 0; i < 3; i++) {
        char *from = sworn_test_path(vectors, files[i]), *to = sworn_test_path(dir, files[i]);
        size_t len;
        char *data = sworn_test_read_file(from, &len);

        sworn_test_write_file(to, data, len, 0644);
        free(data);
        free(from);
        free(to);
    }
    free(sub);
    free(vectors);
    return dir;
}

static void flip_byte(const char *dir, const char *rel, size_t at)
{
    char *path = sworn_test_path(dir, rel);
    size_t len;
    char *data = sworn_test_read_file(path, &len);

    assert_true(at < len);
    data[at] ^= 0x01;
    sworn_test_write_file(path, data, len, 0644);
    free(data);
    free(path);
}

static void expect_import_fails(struct sworn_test_log *f, const char *dir,
                                const struct sworn_note_verifier *v, enum sworn_err_code code,
                                const char *what)
{
    struct sworn_log *log = NULL;

    if (sworn_tiledir_import(dir, v, 1, f->db, &log) == 0) {
        sworn_log_close(log);
        fail_msg("import accepted %s", what);
    }
    if (sworn_err_code() != code)
        fail_msg("import of %s failed with %s (%s), expected %s", what,
                 sworn_err_name(sworn_err_code()), sworn_err_msg(), sworn_err_name(code));
    /* A failed import leaves no database behind. */
    assert_null(sworn_test_read_file_opt(f->db, NULL));
}

static void test_tessera_tampered_copies_refused(void **state)
{
    struct sworn_test_log *f = *state;
    struct sworn_note_verifier v, wrong;
    char *dir;

    load_tessera_vkey(&v);
    /* An entry changed: the root no longer matches the signed checkpoint. */
    dir = scratch_copy(f->dir);
    flip_byte(dir, "tile/entries/000.p/15", 3);
    expect_import_fails(f, dir, &v, SWORN_ERR_VERIFY, "a changed entry");
    sworn_test_rmtree(dir);
    free(dir);
    /* A hash tile changed: the entries are right, the served tile is not. */
    dir = scratch_copy(f->dir);
    flip_byte(dir, "tile/0/000.p/15", 40);
    expect_import_fails(f, dir, &v, SWORN_ERR_VERIFY, "a changed hash tile");
    sworn_test_rmtree(dir);
    free(dir);
    /* The checkpoint's size changed: its signature fails. */
    dir = scratch_copy(f->dir);
    flip_byte(dir, "checkpoint", strlen("example.com/log/testdata\n") + 1);
    expect_import_fails(f, dir, &v, SWORN_ERR_VERIFY, "a changed checkpoint");
    sworn_test_rmtree(dir);
    free(dir);
    /* A verifier key that did not sign it. */
    dir = scratch_copy(f->dir);
    {
        char *key = sworn_test_path(f->dir, "other.key");
        char vkey[512];
        assert_int_equal(
            sworn_note_keygen_ed25519("example.com/log/testdata", key, vkey, sizeof(vkey)), 0);
        assert_int_equal(sworn_note_verifier_parse(vkey, strlen(vkey), &wrong), 0);
        free(key);
    }
    expect_import_fails(f, dir, &wrong, SWORN_ERR_VERIFY, "a checkpoint under an unknown key");
    /* A missing tile. */
    {
        char *path = sworn_test_path(dir, "tile/0/000.p/15");
        assert_int_equal(remove(path), 0);
        free(path);
    }
    expect_import_fails(f, dir, &v, SWORN_ERR_NOTFOUND, "a folder without its hash tile");
    sworn_test_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_vectors_roots_and_proofs, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_tessera_byte_identical, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_tessera_import, sworn_test_log_setup_empty,
                                        sworn_test_log_teardown),
        cmocka_unit_test_setup_teardown(test_tessera_tampered_copies_refused,
                                        sworn_test_log_setup_empty, sworn_test_log_teardown),
    };

    /* Resolve the vectors first, so that a missing folder skips (or, under CI, fails) cleanly. */
    (void)sworn_test_vectors();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
