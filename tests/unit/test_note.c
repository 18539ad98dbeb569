/*
 * test_note.c -- unit tests of note.c and notesign.c (C2SP signed notes, verifier keys, the
 * software signers and key generation).
 *
 * Evidence, in order of weight:
 *   1. Every note in the external vectors (signed-note/: the C2SP example, Go's sumdb/note test
 *      note, a Rekor ECDSA note, a sigsum cosignature; tessera-testdata: a real log's
 *      checkpoints) verifies with the keys given beside it, read from the files at run time.
 *      Each single-byte change of a signature or of the text, a wrong key id and a truncated
 *      signature are rejected.
 *   2. Signing reproduces other implementations' output byte for byte (Ed25519 is
 *      deterministic): Go's PeterNeumann signature and every tessera checkpoint.
 *   3. ECDSA P-256 notes signed here verify with the `openssl` command-line tool, which shares
 *      only the library with this code, not the note logic.
 *   4. The C2SP rules (unknown keys ignored, a failing known key rejects, 16 and 100 signatures
 *      accepted, 101 refused), key-file hygiene (mode, symbolic links) and hostile inputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "note.h"
#include "notesign.h"
#include "testutil.h"

#define EM "\xe2\x80\x94"
#define MAX_VKEYS 8
#define RAW_MAX (4 + SWORN_NOTE_SIG_MAX)
#define NOTE_CAP (64 * 1024)
#define MANY_KEYS SWORN_NOTE_MAX_SIGS

/* The tessera test log's signing key: public, from tessera's testdata/build_log.sh. */
static const char tessera_skey[] =
    "PRIVATE+KEY+example.com/log/testdata+33d7b496+AeymY/SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg";

/* ---------------------------------------------------------------------------------------------
 * Helpers
 */

/* One signed-note vector file: its comment block, keys and note bytes. */
struct vec {
    char *data;
    size_t len;
    size_t comments_len; /* data[0..comments_len) holds the header lines */
    char *vkeys[MAX_VKEYS];
    size_t nvkeys;
    char *skey;
    const char *note;
    size_t note_len;
};

static void vec_load(const char *path, struct vec *v)
{
    size_t off = 0;

    memset(v, 0, sizeof(*v));
    v->data = sworn_test_read_file(path, &v->len);
    while (off < v->len) {
        char *line = v->data + off;
        char *nl = memchr(line, '\n', v->len - off);
        size_t ll;

        assert_non_null(nl);
        ll = (size_t)(nl - line);
        off += ll + 1;
        if (ll >= 9 && strncmp(line, "---- note", 9) == 0) {
            v->comments_len = (size_t)(line - v->data);
            v->note = v->data + off;
            v->note_len = v->len - off;
            return;
        }
        if (line[0] == '#')
            continue;
        if (ll > 5 && strncmp(line, "vkey ", 5) == 0) {
            assert_true(v->nvkeys < MAX_VKEYS);
            v->vkeys[v->nvkeys++] = strndup(line + 5, ll - 5);
        } else if (ll > 5 && strncmp(line, "skey ", 5) == 0) {
            v->skey = strndup(line + 5, ll - 5);
        } else {
            fail_msg("%s: unexpected header line %.*s", path, (int)ll, line);
        }
    }
    fail_msg("%s: no ---- note marker", path);
}

static void vec_free(struct vec *v)
{
    for (size_t i = 0; i < v->nvkeys; i++)
        free(v->vkeys[i]);
    free(v->skey);
    free(v->data);
}

/* Find `key` in the comment block and return what follows it (not NUL-terminated). */
static const char *comment_after(const struct vec *v, const char *key)
{
    size_t klen = strlen(key);

    for (size_t i = 0; i + klen <= v->comments_len; i++)
        if (memcmp(v->data + i, key, klen) == 0)
            return v->data + i + klen;
    fail_msg("comment has no %s", key);
    return NULL;
}

/*
 * The cosignature vector has no vkey line: its comment gives the witness name (inside
 * "SHA-256('<name>\n'"), the public key in hex ("pub = ") and the key id ("[:4] = "). Build the
 * type 0x04 verifier from those and check the id we compute against the one written there.
 */
static void cosig_verifier_from_comment(const struct vec *v, struct sworn_note_verifier *k)
{
    const char *name = comment_after(v, "SHA-256('");
    const char *end = strstr(name, "\\n'");
    const char *pub_hex = comment_after(v, "pub = ");
    const char *id_hex = comment_after(v, "[:4] = ");
    uint8_t id_be[4];
    uint32_t want;

    assert_non_null(end);
    memset(k, 0, sizeof(*k));
    assert_true((size_t)(end - name) <= SWORN_NOTE_NAME_MAX);
    memcpy(k->name, name, (size_t)(end - name));
    k->alg = SWORN_NOTE_ALG_COSIGNATURE_V1;
    k->key_len = 32;
    assert_int_equal(sworn_hex_decode(pub_hex, 64, k->key, 32), 0);
    assert_int_equal(sworn_hex_decode(id_hex, 8, id_be, 4), 0);
    want = (uint32_t)id_be[0] << 24 | (uint32_t)id_be[1] << 16 | (uint32_t)id_be[2] << 8 | id_be[3];
    assert_int_equal(sworn_note_key_id(k->name, strlen(k->name), k->alg, k->key, 32, &k->key_id),
                     0);
    assert_int_equal(k->key_id, want);
}

/* Decode a parsed signature line's base64 (key id || signature). Returns the byte count. */
static size_t sig_raw(const struct sworn_note_sig *s, uint8_t raw[RAW_MAX])
{
    size_t n = 0;

    assert_int_equal(sworn_base64_decode(s->sig_b64, s->sig_b64_len, raw, RAW_MAX, &n), 0);
    return n;
}

/*
 * Rebuild a note from its parsed parts, with signature line `which` carrying raw[0..raw_len)
 * instead of its own bytes (which == SIZE_MAX changes nothing). Returns a fresh allocation.
 */
static char *note_rebuild(const struct sworn_note *n, size_t which, const uint8_t *raw,
                          size_t raw_len, size_t *out_len)
{
    char *out = malloc(n->text_len + 1 + n->sig_count * 1200 + 1);
    size_t off = 0;

    assert_non_null(out);
    memcpy(out, n->text, n->text_len);
    off = n->text_len;
    out[off++] = '\n';
    for (size_t i = 0; i < n->sig_count; i++) {
        const struct sworn_note_sig *s = &n->sigs[i];

        memcpy(out + off, EM " ", 4);
        off += 4;
        memcpy(out + off, s->name, s->name_len);
        off += s->name_len;
        out[off++] = ' ';
        if (i == which) {
            long b = sworn_base64_encode(raw, raw_len, out + off, 1000);
            assert_true(b > 0);
            off += (size_t)b;
        } else {
            memcpy(out + off, s->sig_b64, s->sig_b64_len);
            off += s->sig_b64_len;
        }
        out[off++] = '\n';
    }
    out[off] = '\0';
    *out_len = off;
    return out;
}

/* Parse and verify; returns 0 when the note is accepted, -1 when either step refuses it. */
static int note_check(const char *msg, size_t len, const struct sworn_note_verifier *keys,
                      size_t nkeys, size_t *count)
{
    struct sworn_note n;

    if (sworn_note_parse(msg, len, &n) < 0)
        return -1;
    return sworn_note_verify(&n, keys, nkeys, count, NULL, NULL);
}

static void assert_rejected(const char *msg, size_t len, const struct sworn_note_verifier *keys,
                            size_t nkeys, const char *what)
{
    if (note_check(msg, len, keys, nkeys, NULL) == 0)
        fail_msg("accepted a note with %s:\n%.*s", what, (int)len, msg);
    assert_int_not_equal(sworn_err_code(), SWORN_OK);
}

/* Parse a verifier key string and fail the test when it does not parse. */
static void vkey_parse_ok(const char *vkey, struct sworn_note_verifier *k)
{
    if (sworn_note_verifier_parse(vkey, strlen(vkey), k) != 0)
        fail_msg("verifier key %s refused: %s", vkey, sworn_err_msg());
}

/* Every key of a vector: its vkey lines, or for the cosignature file the one in its comment. */
static size_t vec_keys(const struct vec *v, struct sworn_note_verifier *keys)
{
    for (size_t i = 0; i < v->nvkeys; i++) {
        char back[SWORN_NOTE_VKEY_MAX + 1];

        vkey_parse_ok(v->vkeys[i], &keys[i]);
        /* Formatting gives back the same string. */
        assert_true(sworn_note_verifier_format(&keys[i], back, sizeof(back)) > 0);
        assert_string_equal(back, v->vkeys[i]);
    }
    if (v->nvkeys > 0)
        return v->nvkeys;
    cosig_verifier_from_comment(v, &keys[0]);
    return 1;
}

/* Which key (by name and id) signed line s; SIZE_MAX when none. */
static size_t key_of(const struct sworn_note_sig *s, const struct sworn_note_verifier *keys,
                     size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++)
        if (keys[k].key_id == s->key_id && strlen(keys[k].name) == s->name_len &&
            memcmp(keys[k].name, s->name, s->name_len) == 0)
            return k;
    return SIZE_MAX;
}

/*
 * Run every check of part 1 on one note: it verifies with all its keys (each signing key marked,
 * cosignature times read back), and every mutation is refused.
 */
static void check_vector_note(const char *label, const char *note, size_t note_len,
                              const struct sworn_note_verifier *keys, size_t nkeys)
{
    struct sworn_note n;
    size_t count = 0;
    uint8_t by[MAX_VKEYS];
    uint64_t ts[MAX_VKEYS];
    char *copy;

    if (sworn_note_parse(note, note_len, &n) != 0)
        fail_msg("%s: parse failed: %s", label, sworn_err_msg());
    if (sworn_note_verify(&n, keys, nkeys, &count, by, ts) != 0)
        fail_msg("%s: verify failed: %s", label, sworn_err_msg());
    assert_int_equal(count, nkeys);
    for (size_t k = 0; k < nkeys; k++)
        assert_int_equal(by[k], 1);

    for (size_t i = 0; i < n.sig_count; i++) {
        uint8_t raw[RAW_MAX], mut[RAW_MAX];
        size_t raw_len = sig_raw(&n.sigs[i], raw);
        size_t k = key_of(&n.sigs[i], keys, nkeys);
        size_t len;
        char *m;

        assert_true(k != SIZE_MAX);
        if (keys[k].alg == SWORN_NOTE_ALG_COSIGNATURE_V1) {
            uint64_t t = 0;

            for (int j = 0; j < 8; j++)
                t = t << 8 | raw[4 + j];
            assert_true(t > 0);
            assert_int_equal(ts[k], t);
        }
        /* Every single byte of the signature, flipped in turn. */
        for (size_t j = 4; j < raw_len; j++) {
            memcpy(mut, raw, raw_len);
            mut[j] ^= 0x01;
            m = note_rebuild(&n, i, mut, raw_len, &len);
            assert_rejected(m, len, keys, nkeys, "a flipped signature byte");
            assert_rejected(m, len, &keys[k], 1, "a flipped signature byte (one key)");
            free(m);
        }
        /* A wrong key id makes the line unknown: with only its key, nothing verifies. */
        memcpy(mut, raw, raw_len);
        mut[3] ^= 0x01;
        m = note_rebuild(&n, i, mut, raw_len, &len);
        assert_rejected(m, len, &keys[k], 1, "a wrong key id");
        /* ...while the other keys' signatures still carry the note (C2SP: unknown ignored). */
        if (n.sig_count > 1)
            assert_int_equal(note_check(m, len, keys, nkeys, &count), 0);
        free(m);
        /* Truncated: one byte short, and down to a single signature byte. */
        m = note_rebuild(&n, i, raw, raw_len - 1, &len);
        assert_rejected(m, len, keys, nkeys, "a signature one byte short");
        free(m);
        m = note_rebuild(&n, i, raw, 5, &len);
        assert_rejected(m, len, keys, nkeys, "a one-byte signature");
        free(m);
        /* And the untouched rebuild is accepted, so the mutations above are what failed. */
        m = note_rebuild(&n, SIZE_MAX, NULL, 0, &len);
        assert_int_equal(len, note_len);
        assert_memory_equal(m, note, len);
        free(m);
    }
    /* Every byte of the text, flipped in turn. */
    copy = malloc(note_len);
    assert_non_null(copy);
    for (size_t j = 0; j < n.text_len; j++) {
        memcpy(copy, note, note_len);
        copy[j] ^= 0x01;
        assert_rejected(copy, note_len, keys, nkeys, "a flipped text byte");
    }
    free(copy);
}

/* Write a key file with mode 0600 in dir and open it as a signer. */
static void signer_from_string(const char *dir, const char *file, const char *key, const char *name,
                               struct sworn_note_signer *s)
{
    char *path = sworn_test_path(dir, file);

    sworn_test_write_file(path, key, strlen(key), 0600);
    if (sworn_note_signer_open_file(path, name, s) != 0)
        fail_msg("key file %s refused: %s", path, sworn_err_msg());
    free(path);
}

/* ---------------------------------------------------------------------------------------------
 * 1 and 2: the external vectors
 */

static void test_signed_note_vectors(void **state)
{
    const char *vectors = sworn_test_vectors();
    char *dir = sworn_test_path(vectors, "signed-note");
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;

    (void)state;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        struct sworn_note_verifier keys[MAX_VKEYS];
        struct vec v;
        char *path;
        size_t nkeys;

        if (e->d_name[0] == '.')
            continue;
        path = sworn_test_path(dir, e->d_name);
        vec_load(path, &v);
        nkeys = vec_keys(&v, keys);
        check_vector_note(e->d_name, v.note, v.note_len, keys, nkeys);
        vec_free(&v);
        free(path);
        files++;
    }
    closedir(d);
    free(dir);
    /* The four files the vectors README lists. */
    assert_true(files >= 4);
}

/* Go's sumdb/note test key re-signs its note to the very same signature line. */
static void test_golang_skey_reproduces_signature(void **state)
{
    char *path = sworn_test_path(sworn_test_vectors(), "signed-note/golang-note-peterneumann.txt");
    char *tmp = sworn_test_tmpdir("note-skey");
    struct sworn_note_signer signer, *signers[1] = {&signer};
    struct sworn_note_verifier key;
    struct sworn_note n;
    struct vec v;
    char out[4096];
    size_t out_len = 0, line_len;
    const char *line = NULL;

    (void)state;
    vec_load(path, &v);
    assert_non_null(v.skey);
    signer_from_string(tmp, "peter.key", v.skey, NULL, &signer);
    assert_string_equal(signer.ops->kind, "ed25519-file");
    /* The signer's public half is the file's PeterNeumann verifier key. */
    vkey_parse_ok(v.vkeys[0], &key);
    assert_string_equal(signer.pub.name, key.name);
    assert_int_equal(signer.pub.key_id, key.key_id);
    assert_memory_equal(signer.pub.key, key.key, 32);

    assert_int_equal(sworn_note_parse(v.note, v.note_len, &n), 0);
    assert_int_equal(sworn_note_sign(n.text, n.text_len, signers, 1, out, sizeof(out), &out_len),
                     0);
    /* Expected: the text, the blank line and the note's own first (PeterNeumann) line. */
    line = n.sigs[0].name - 4;
    line_len = (size_t)(n.sigs[0].sig_b64 + n.sigs[0].sig_b64_len - line) + 1;
    assert_int_equal(out_len, n.text_len + 1 + line_len);
    assert_memory_equal(out, n.text, n.text_len);
    assert_memory_equal(out + n.text_len + 1, line, line_len);

    sworn_note_signer_close(&signer);
    sworn_note_signer_close(&signer); /* safe on a closed (zeroed) signer */
    vec_free(&v);
    sworn_test_rmtree(tmp);
    free(tmp);
    free(path);
}

/* The verifier key of the tessera test log, as the vectors README gives it. */
static void tessera_vkey(struct sworn_note_verifier *k)
{
    char *readme = sworn_test_path(sworn_test_vectors(), "README.md");
    char *text = sworn_test_read_file(readme, NULL);
    const char *start = strstr(text, "verifier key `");
    const char *end;

    assert_non_null(start);
    start += strlen("verifier key `");
    end = strchr(start, '`');
    assert_non_null(end);
    assert_int_equal(sworn_note_verifier_parse(start, (size_t)(end - start), k), 0);
    free(text);
    free(readme);
}

static void test_tessera_checkpoints(void **state)
{
    char *dir = sworn_test_path(sworn_test_vectors(), "tessera-testdata/testdata/log");
    char *tmp = sworn_test_tmpdir("note-tessera");
    struct sworn_note_signer signer, *signers[1] = {&signer};
    struct sworn_note_verifier key;
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0, numbered = 0;

    (void)state;
    assert_non_null(d);
    tessera_vkey(&key);
    signer_from_string(tmp, "tessera.key", tessera_skey, "example.com/log/testdata", &signer);
    assert_int_equal(signer.pub.key_id, key.key_id);
    assert_memory_equal(signer.pub.key, key.key, 32);
    while ((e = readdir(d)) != NULL) {
        struct sworn_checkpoint cp;
        struct sworn_note n;
        char out[4096];
        size_t len = 0, out_len = 0;
        char *path, *data;

        if (strncmp(e->d_name, "checkpoint", 10) != 0)
            continue;
        path = sworn_test_path(dir, e->d_name);
        data = sworn_test_read_file(path, &len);
        check_vector_note(e->d_name, data, len, &key, 1);
        assert_int_equal(sworn_note_parse(data, len, &n), 0);
        if (sworn_checkpoint_parse(n.text, n.text_len, &cp) != 0)
            fail_msg("%s: checkpoint parse failed: %s", e->d_name, sworn_err_msg());
        assert_string_equal(cp.origin, key.name);
        assert_null(cp.extensions);
        if (e->d_name[10] == '.') {
            uint64_t size = 0;

            assert_int_equal(sworn_parse_u64(e->d_name + 11, strlen(e->d_name + 11), &size), 0);
            assert_int_equal(cp.size, size);
            numbered++;
        }
        /* Re-signing the body gives back the whole file, byte for byte. */
        assert_int_equal(
            sworn_note_sign(n.text, n.text_len, signers, 1, out, sizeof(out), &out_len), 0);
        assert_int_equal(out_len, len);
        assert_memory_equal(out, data, len);
        free(data);
        free(path);
        files++;
    }
    closedir(d);
    assert_int_equal(numbered, 16); /* checkpoint.0 .. checkpoint.15 */
    assert_true(files >= numbered);
    sworn_note_signer_close(&signer);
    sworn_test_rmtree(tmp);
    free(tmp);
    free(dir);
}

/* ---------------------------------------------------------------------------------------------
 * 3: ECDSA P-256 from a PEM key, checked by the openssl tool
 */

/* Write an OpenSSL key as a PEM private key file with the given mode. */
static void write_pem_key(EVP_PKEY *pkey, const char *path, unsigned mode)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;
    long len;

    assert_non_null(bio);
    assert_int_equal(PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL), 1);
    len = BIO_get_mem_data(bio, &pem);
    assert_true(len > 0);
    sworn_test_write_file(path, pem, (size_t)len, mode);
    BIO_free(bio);
}

/* Run a shell command; returns its exit status, or -1 when it did not exit normally. */
static int run(const char *cmd)
{
    int st = system(cmd);

    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void test_ecdsa_pem_signer(void **state)
{
    char *tmp = sworn_test_tmpdir("note-ecdsa");
    char *key_path = sworn_test_path(tmp, "p256.pem");
    char *pub_path = sworn_test_path(tmp, "pub.pem");
    char *sig_path = sworn_test_path(tmp, "sig.der");
    char *bad_path = sworn_test_path(tmp, "bad.der");
    char *text_path = sworn_test_path(tmp, "text.txt");
    struct sworn_note_signer signer, *signers[1] = {&signer};
    struct sworn_note_verifier back;
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    uint8_t root[SWORN_HASH_LEN], raw[RAW_MAX];
    char body[SWORN_CHECKPOINT_BODY_MAX + 1], out[4096], vkey[SWORN_NOTE_VKEY_MAX + 1];
    char cmd[8192];
    struct sworn_note n;
    size_t out_len = 0, raw_len, count = 0;
    long body_len;
    BIO *bio;

    (void)state;
    assert_non_null(pkey);
    write_pem_key(pkey, key_path, 0600);
    /* A PEM carries no name: one must be given. */
    assert_int_equal(sworn_note_signer_open_file(key_path, NULL, &signer), -1);
    assert_int_equal(sworn_note_signer_open_file(key_path, "example.com/ecdsa", &signer), 0);
    assert_string_equal(signer.ops->kind, "ecdsa-p256-pem");
    assert_int_equal(signer.pub.alg, SWORN_NOTE_ALG_ECDSA_P256);

    /* The verifier key round-trips through its string form. */
    assert_true(sworn_note_verifier_format(&signer.pub, vkey, sizeof(vkey)) > 0);
    vkey_parse_ok(vkey, &back);
    assert_int_equal(back.key_id, signer.pub.key_id);
    assert_int_equal(back.key_len, signer.pub.key_len);
    assert_memory_equal(back.key, signer.pub.key, back.key_len);

    memset(root, 0xab, sizeof(root));
    body_len = sworn_checkpoint_format("example.com/ecdsa", 42, root, body, sizeof(body));
    assert_true(body_len > 0);
    assert_int_equal(
        sworn_note_sign(body, (size_t)body_len, signers, 1, out, sizeof(out), &out_len), 0);
    assert_int_equal(note_check(out, out_len, &back, 1, &count), 0);
    assert_int_equal(count, 1);

    /* Independent check: the openssl tool verifies the DER signature over the text. */
    assert_int_equal(sworn_note_parse(out, out_len, &n), 0);
    raw_len = sig_raw(&n.sigs[0], raw);
    sworn_test_write_file(sig_path, raw + 4, raw_len - 4, 0600);
    sworn_test_write_file(text_path, body, (size_t)body_len, 0600);
    bio = BIO_new_file(pub_path, "w");
    assert_non_null(bio);
    assert_int_equal(PEM_write_bio_PUBKEY(bio, pkey), 1);
    BIO_free(bio);
    snprintf(cmd, sizeof(cmd),
             "openssl dgst -sha256 -verify '%s' -signature '%s' '%s' >/dev/null 2>&1", pub_path,
             sig_path, text_path);
    assert_int_equal(run(cmd), 0);
    /* ...and refuses a changed one, so the check above means something. */
    raw[raw_len - 1] ^= 0x01;
    sworn_test_write_file(bad_path, raw + 4, raw_len - 4, 0600);
    snprintf(cmd, sizeof(cmd),
             "openssl dgst -sha256 -verify '%s' -signature '%s' '%s' >/dev/null 2>&1", pub_path,
             bad_path, text_path);
    assert_int_not_equal(run(cmd), 0);

    /* The key id is SHA-256 of the SPKI alone: the same key under another name keeps it. */
    {
        struct sworn_note_signer other;

        assert_int_equal(sworn_note_signer_open_file(key_path, "other.example/x", &other), 0);
        assert_int_equal(other.pub.key_id, signer.pub.key_id);
        sworn_note_signer_close(&other);
    }

    sworn_note_signer_close(&signer);
    EVP_PKEY_free(pkey);
    sworn_test_rmtree(tmp);
    free(text_path);
    free(bad_path);
    free(sig_path);
    free(pub_path);
    free(key_path);
    free(tmp);
}

/* PEM keys that are not ECDSA P-256 are refused. */
static void test_pem_wrong_curve_refused(void **state)
{
    char *tmp = sworn_test_tmpdir("note-pem");
    char *p384 = sworn_test_path(tmp, "p384.pem");
    char *ed = sworn_test_path(tmp, "ed.pem");
    char *junk = sworn_test_path(tmp, "junk.pem");
    EVP_PKEY *k384 = EVP_EC_gen("P-384");
    EVP_PKEY *ked = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    struct sworn_note_signer s;

    (void)state;
    assert_non_null(k384);
    assert_non_null(ked);
    write_pem_key(k384, p384, 0600);
    write_pem_key(ked, ed, 0600);
    {
        static const char pem[] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";

        sworn_test_write_file(junk, pem, strlen(pem), 0600);
    }
    memset(&s, 0x55, sizeof(s));
    assert_int_equal(sworn_note_signer_open_file(p384, "a", &s), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    assert_int_equal(sworn_note_signer_open_file(ed, "a", &s), -1);
    assert_int_equal(sworn_note_signer_open_file(junk, "a", &s), -1);
    /* *out is untouched after an error. */
    assert_int_equal(((unsigned char *)&s)[0], 0x55);
    EVP_PKEY_free(k384);
    EVP_PKEY_free(ked);
    sworn_test_rmtree(tmp);
    free(junk);
    free(ed);
    free(p384);
    free(tmp);
}

/* ---------------------------------------------------------------------------------------------
 * 4: rules, key files, key generation
 */

/* Keys made by sworn_note_keygen_ed25519 in one temporary folder, opened as signers. */
struct keyset {
    char *dir;
    size_t n;
    struct sworn_note_signer s[MANY_KEYS];
    struct sworn_note_signer *ptr[MANY_KEYS];
    struct sworn_note_verifier v[MANY_KEYS];
};

static struct keyset *keyset_make(size_t n, const char *prefix)
{
    struct keyset *ks = calloc(1, sizeof(*ks));

    assert_non_null(ks);
    assert_true(n <= MANY_KEYS);
    ks->dir = sworn_test_tmpdir("note-keys");
    ks->n = n;
    for (size_t i = 0; i < n; i++) {
        char name[64], file[64], vkey[SWORN_NOTE_VKEY_MAX + 1];
        char *path;
        struct stat st;

        snprintf(name, sizeof(name), "%s%zu.example/log", prefix, i);
        snprintf(file, sizeof(file), "k%zu", i);
        path = sworn_test_path(ks->dir, file);
        if (sworn_note_keygen_ed25519(name, path, vkey, sizeof(vkey)) != 0)
            fail_msg("keygen: %s", sworn_err_msg());
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        vkey_parse_ok(vkey, &ks->v[i]);
        assert_string_equal(ks->v[i].name, name);
        assert_int_equal(sworn_note_signer_open_file(path, name, &ks->s[i]), 0);
        assert_int_equal(ks->s[i].pub.key_id, ks->v[i].key_id);
        assert_memory_equal(ks->s[i].pub.key, ks->v[i].key, 32);
        ks->ptr[i] = &ks->s[i];
        free(path);
    }
    return ks;
}

static void keyset_free(struct keyset *ks)
{
    for (size_t i = 0; i < ks->n; i++)
        sworn_note_signer_close(&ks->s[i]);
    sworn_test_rmtree(ks->dir);
    free(ks->dir);
    free(ks);
}

static const char text1[] = "example.com/rules\n7\nq83vEjRWeJASNFZ4kBI0VniQEjRWeJASNFZ4kBI0VnI=\n";

static void test_rules_known_and_unknown(void **state)
{
    struct keyset *ks = keyset_make(3, "rule");
    struct sworn_note_verifier a = ks->v[0], b = ks->v[1], c = ks->v[2];
    struct sworn_note_verifier ab[2] = {ks->v[0], ks->v[1]};
    char out[NOTE_CAP];
    size_t len = 0, count = 0;
    uint8_t by[2];
    struct sworn_note n;

    (void)state;
    assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 2, out, sizeof(out), &len), 0);
    /* Signed by A and B; a verifier that knows only B accepts (A is ignored). */
    assert_int_equal(note_check(out, len, &b, 1, &count), 0);
    assert_int_equal(count, 1);
    assert_int_equal(note_check(out, len, &a, 1, &count), 0);
    assert_int_equal(sworn_note_parse(out, len, &n), 0);
    assert_int_equal(sworn_note_verify(&n, ab, 2, &count, by, NULL), 0);
    assert_int_equal(count, 2);
    assert_int_equal(by[0] + by[1], 2);
    /* No known key at all. */
    assert_int_equal(note_check(out, len, &c, 1, NULL), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    assert_int_equal(note_check(out, len, NULL, 0, NULL), -1);
    /* Same name as a known key, other id; same id, other name: both unknown, hence ignored. */
    {
        struct sworn_note_verifier twisted = b;

        twisted.key_id ^= 1;
        assert_int_equal(note_check(out, len, &twisted, 1, NULL), -1);
        twisted = b;
        twisted.name[0] ^= 1;
        assert_int_equal(note_check(out, len, &twisted, 1, NULL), -1);
    }
    /* A's signature broken: a verifier that knows only A rejects; knowing A and B too. */
    {
        uint8_t raw[RAW_MAX];
        size_t raw_len = sig_raw(&n.sigs[0], raw), mlen;
        char *m;

        raw[10] ^= 0x80;
        m = note_rebuild(&n, 0, raw, raw_len, &mlen);
        assert_int_equal(note_check(m, mlen, &a, 1, NULL), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
        assert_int_equal(note_check(m, mlen, ab, 2, NULL), -1);
        /* ...and outputs are cleared after the failure. */
        {
            struct sworn_note mn;

            by[0] = by[1] = 7;
            count = 7;
            assert_int_equal(sworn_note_parse(m, mlen, &mn), 0);
            assert_int_equal(sworn_note_verify(&mn, ab, 2, &count, by, NULL), -1);
            assert_int_equal(count, 0);
            assert_int_equal(by[0] + by[1], 0);
        }
        /* Only B known: A's broken line is ignored. */
        assert_int_equal(note_check(m, mlen, &b, 1, NULL), 0);
        free(m);
    }
    /* A repeated line by one key is checked but counted once. */
    {
        char dup[NOTE_CAP];
        const char *line = n.sigs[1].name - 4;
        size_t line_len = (size_t)(out + len - line);

        memcpy(dup, out, len);
        memcpy(dup + len, line, line_len);
        assert_int_equal(note_check(dup, len + line_len, &b, 1, &count), 0);
        assert_int_equal(count, 1);
    }
    keyset_free(ks);
}

static void test_rules_signature_counts(void **state)
{
    struct keyset *ks = keyset_make(MANY_KEYS, "many");
    char *out = malloc(NOTE_CAP), *more = malloc(NOTE_CAP + 2048);
    size_t len = 0, count = 0;
    struct sworn_note n;

    (void)state;
    assert_non_null(out);
    assert_non_null(more);
    /* C2SP: verifiers must accept at least 16 signatures. */
    assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 16, out, NOTE_CAP, &len), 0);
    assert_int_equal(note_check(out, len, ks->v, 16, &count), 0);
    assert_int_equal(count, 16);
    /* Our limit, 100, is accepted in full. */
    assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, MANY_KEYS, out, NOTE_CAP, &len),
                     0);
    assert_int_equal(sworn_note_parse(out, len, &n), 0);
    assert_int_equal(n.sig_count, MANY_KEYS);
    assert_int_equal(sworn_note_verify(&n, ks->v, MANY_KEYS, &count, NULL, NULL), 0);
    assert_int_equal(count, MANY_KEYS);
    /* One more line (a copy of the last) is a format error, before any verification. */
    {
        const char *last = n.sigs[MANY_KEYS - 1].name - 4;
        size_t last_len = (size_t)(out + len - last);

        memcpy(more, out, len);
        memcpy(more + len, last, last_len);
        assert_int_equal(sworn_note_parse(more, len + last_len, &n), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    }
    /* Signing with 101 signers is refused too. */
    {
        struct sworn_note_signer *ptrs[MANY_KEYS + 1];

        for (size_t i = 0; i < MANY_KEYS; i++)
            ptrs[i] = ks->ptr[i];
        ptrs[MANY_KEYS] = ks->ptr[0];
        assert_int_equal(
            sworn_note_sign(text1, strlen(text1), ptrs, MANY_KEYS + 1, out, NOTE_CAP, &len), -1);
    }
    free(more);
    free(out);
    keyset_free(ks);
}

static void test_key_files(void **state)
{
    char *tmp = sworn_test_tmpdir("note-keyfile");
    char *good = sworn_test_path(tmp, "good.key");
    char *open_mode = sworn_test_path(tmp, "open.key");
    char *link = sworn_test_path(tmp, "link.key");
    char *other = sworn_test_path(tmp, "other.key");
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_note_signer s;
    char buf[256];

    (void)state;
    assert_int_equal(sworn_note_keygen_ed25519("files.example/k", good, vkey, sizeof(vkey)), 0);
    /* Never overwrites a key. */
    assert_int_equal(sworn_note_keygen_ed25519("files.example/k", good, vkey, sizeof(vkey)), -1);
    assert_int_equal(sworn_note_signer_open_file(good, NULL, &s), 0);
    sworn_note_signer_close(&s);
    assert_int_equal(sworn_note_signer_open_file(good, "files.example/k", &s), 0);
    sworn_note_signer_close(&s);
    /* A name that is not the file's. */
    assert_int_equal(sworn_note_signer_open_file(good, "files.example/other", &s), -1);

    /* Mode 0644: refused, naming the mode. */
    sworn_test_write_file(open_mode, tessera_skey, strlen(tessera_skey), 0644);
    assert_int_equal(sworn_note_signer_open_file(open_mode, NULL, &s), -1);
    assert_non_null(strstr(sworn_err_msg(), "0644"));
    sworn_test_write_file(open_mode, tessera_skey, strlen(tessera_skey), 0640);
    assert_int_equal(sworn_note_signer_open_file(open_mode, NULL, &s), -1);
    sworn_test_write_file(open_mode, tessera_skey, strlen(tessera_skey), 0400);
    assert_int_equal(sworn_note_signer_open_file(open_mode, NULL, &s), 0);
    sworn_note_signer_close(&s);

    /* A symbolic link to a good key file: refused. */
    assert_int_equal(symlink(good, link), 0);
    assert_int_equal(sworn_note_signer_open_file(link, NULL, &s), -1);
    assert_non_null(strstr(sworn_err_msg(), "symbolic link"));
    /* keygen will not write through a link either. */
    assert_int_equal(unlink(link), 0);
    assert_int_equal(symlink(other, link), 0);
    assert_int_equal(sworn_note_keygen_ed25519("files.example/k", link, vkey, sizeof(vkey)), -1);
    assert_int_equal(access(other, F_OK), -1);

    /* A folder, and a missing file. */
    assert_int_equal(sworn_note_signer_open_file(tmp, NULL, &s), -1);
    assert_int_equal(sworn_note_signer_open_file(other, NULL, &s), -1);

    /* Damaged Ed25519 key files. */
    {
        static const char *const bad[] = {
            /* id does not match the key */
            "PRIVATE+KEY+example.com/log/testdata+33d7b497+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg",
            /* name changed: id no longer matches */
            "PRIVATE+KEY+example.com/log/testdatb+33d7b496+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg",
            /* type byte 0x02 instead of 0x01 */
            "PRIVATE+KEY+example.com/log/testdata+33d7b496+AuymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg",
            /* seed one byte short */
            "PRIVATE+KEY+example.com/log/testdata+33d7b496+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSFw==",
            /* two trailing newlines */
            "PRIVATE+KEY+example.com/log/testdata+33d7b496+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg\n\n",
            /* trailing space */
            "PRIVATE+KEY+example.com/log/testdata+33d7b496+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg ",
            /* short id */
            "PRIVATE+KEY+example.com/log/testdata+33d7b49+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg",
            "PRIVATE+KEY+",
            "PRIVATE+KEY+a",
            "private+key+example.com/log/testdata+33d7b496+AeymY/"
            "SZAX0jZcJ8enZ5FY1Dz+wTML2yWSkK+9DSF3eg",
            "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            sworn_test_write_file(other, bad[i], strlen(bad[i]), 0600);
            if (sworn_note_signer_open_file(other, NULL, &s) == 0)
                fail_msg("accepted key file %s", bad[i]);
        }
        /* One trailing newline is fine. */
        snprintf(buf, sizeof(buf), "%s\n", tessera_skey);
        sworn_test_write_file(other, buf, strlen(buf), 0600);
        assert_int_equal(sworn_note_signer_open_file(other, NULL, &s), 0);
        sworn_note_signer_close(&s);
    }
    /* Larger than the cap. */
    {
        size_t big = 20000;
        char *data = malloc(big);

        assert_non_null(data);
        memset(data, 'A', big);
        memcpy(data, "PRIVATE+KEY+", 12);
        sworn_test_write_file(other, data, big, 0600);
        assert_int_equal(sworn_note_signer_open_file(other, NULL, &s), -1);
        free(data);
    }
    /* Bad names for keygen. */
    assert_int_equal(sworn_note_keygen_ed25519("a+b", other, vkey, sizeof(vkey)), -1);
    assert_int_equal(sworn_note_keygen_ed25519("", other, vkey, sizeof(vkey)), -1);
    assert_int_equal(sworn_note_keygen_ed25519("a b", other, vkey, sizeof(vkey)), -1);

    sworn_test_rmtree(tmp);
    free(other);
    free(link);
    free(open_mode);
    free(good);
    free(tmp);
}

static void test_sign_refuses_bad_text(void **state)
{
    struct keyset *ks = keyset_make(1, "text");
    char out[4096];
    size_t len = 0;
    static const char *const bad[] = {"",
                                      "no newline",
                                      "\nleading empty line\n",
                                      "inner\n\nempty line\n",
                                      "ends with empty\n\n",
                                      "cr\r\n",
                                      "tab\there\n",
                                      "bad utf8 \xff\n",
                                      "del \x7f\n"};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (sworn_note_sign(bad[i], strlen(bad[i]), ks->ptr, 1, out, sizeof(out), &len) == 0)
            fail_msg("signed bad text %zu", i);
        assert_string_equal(out, "");
    }
    /* NUL inside the text. */
    assert_int_equal(sworn_note_sign("a\0b\n", 4, ks->ptr, 1, out, sizeof(out), &len), -1);
    /* No signers, and an output that is one byte too small. */
    assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 0, out, sizeof(out), &len), -1);
    assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 1, out, sizeof(out), &len), 0);
    {
        size_t need = len;

        assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 1, out, need, &len), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        assert_int_equal(sworn_note_sign(text1, strlen(text1), ks->ptr, 1, out, need + 1, &len), 0);
        assert_int_equal(out[len], '\0');
    }
    /* A UTF-8 text is fine. */
    assert_int_equal(
        sworn_note_sign("caf\xc3\xa9 \xe2\x80\x94 ok\n", 13, ks->ptr, 1, out, sizeof(out), &len),
        0);
    assert_int_equal(note_check(out, len, ks->v, 1, NULL), 0);
    keyset_free(ks);
}

/* ---------------------------------------------------------------------------------------------
 * Cosignatures made here with plain OpenSSL (an implementation of tlog-cosignature written in
 * the test), to reach timestamps the vector does not have.
 */

static void cosign(EVP_PKEY *key, uint64_t t, const char *text, uint32_t key_id,
                   uint8_t raw[RAW_MAX])
{
    char msg[1024];
    size_t sig_len = 64;
    int n = snprintf(msg, sizeof(msg), "cosignature/v1\ntime %" PRIu64 "\n%s", t, text);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();

    for (int i = 0; i < 4; i++)
        raw[i] = (uint8_t)(key_id >> (24 - 8 * i));
    for (int i = 0; i < 8; i++)
        raw[4 + i] = (uint8_t)(t >> (56 - 8 * i));
    assert_non_null(ctx);
    assert_int_equal(EVP_DigestSignInit(ctx, NULL, NULL, NULL, key), 1);
    assert_int_equal(EVP_DigestSign(ctx, raw + 12, &sig_len, (const uint8_t *)msg, (size_t)n), 1);
    EVP_MD_CTX_free(ctx);
}

static void test_cosignature_timestamps(void **state)
{
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    struct sworn_note_verifier w, as_ed;
    uint8_t raw[RAW_MAX];
    char b64[200], note[2048];
    size_t pub_len = 32, count = 0;
    uint64_t times[] = {1, 1700000000, (uint64_t)INT64_MAX};
    struct sworn_note n;
    uint64_t ts = 0;

    (void)state;
    assert_non_null(key);
    memset(&w, 0, sizeof(w));
    strcpy(w.name, "witness.example/w1");
    w.alg = SWORN_NOTE_ALG_COSIGNATURE_V1;
    w.key_len = 32;
    assert_int_equal(EVP_PKEY_get_raw_public_key(key, w.key, &pub_len), 1);
    assert_int_equal(sworn_note_key_id(w.name, strlen(w.name), w.alg, w.key, 32, &w.key_id), 0);
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        cosign(key, times[i], text1, w.key_id, raw);
        sworn_base64_encode(raw, 76, b64, sizeof(b64));
        snprintf(note, sizeof(note), "%s\n" EM " %s %s\n", text1, w.name, b64);
        assert_int_equal(sworn_note_parse(note, strlen(note), &n), 0);
        assert_int_equal(sworn_note_verify(&n, &w, 1, &count, NULL, &ts), 0);
        assert_int_equal(ts, times[i]);
    }
    /* 2^63 is out of range, even when the signature over it is good. */
    cosign(key, (uint64_t)INT64_MAX + 1, text1, w.key_id, raw);
    sworn_base64_encode(raw, 76, b64, sizeof(b64));
    snprintf(note, sizeof(note), "%s\n" EM " %s %s\n", text1, w.name, b64);
    assert_int_equal(note_check(note, strlen(note), &w, 1, NULL), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    /* A cosignature is not an Ed25519 note signature: type 0x01 with the same key and name has
     * another key id, so the line is unknown to it. */
    as_ed = w;
    as_ed.alg = SWORN_NOTE_ALG_ED25519;
    assert_int_equal(
        sworn_note_key_id(as_ed.name, strlen(as_ed.name), as_ed.alg, as_ed.key, 32, &as_ed.key_id),
        0);
    assert_int_not_equal(as_ed.key_id, w.key_id);
    cosign(key, 5, text1, w.key_id, raw);
    sworn_base64_encode(raw, 76, b64, sizeof(b64));
    snprintf(note, sizeof(note), "%s\n" EM " %s %s\n", text1, w.name, b64);
    assert_int_equal(note_check(note, strlen(note), &as_ed, 1, NULL), -1);
    /* Wrong length for a cosignature (the Ed25519 part cut short). */
    sworn_base64_encode(raw, 75, b64, sizeof(b64));
    snprintf(note, sizeof(note), "%s\n" EM " %s %s\n", text1, w.name, b64);
    assert_int_equal(note_check(note, strlen(note), &w, 1, NULL), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    EVP_PKEY_free(key);
}

/* ---------------------------------------------------------------------------------------------
 * Hostile notes and verifier keys
 */

/* Replace the first occurrence of `from` in note (NUL-terminated) by `to`, in a fresh copy. */
static char *replace(const char *note, const char *from, const char *to, size_t to_len, size_t *len)
{
    const char *at = strstr(note, from);
    size_t nlen = strlen(note), flen = strlen(from);
    char *out;

    assert_non_null(at);
    out = malloc(nlen - flen + to_len + 1);
    assert_non_null(out);
    memcpy(out, note, (size_t)(at - note));
    memcpy(out + (at - note), to, to_len);
    memcpy(out + (at - note) + to_len, at + flen, nlen - (size_t)(at - note) - flen);
    *len = nlen - flen + to_len;
    out[*len] = '\0';
    return out;
}

static void test_hostile_notes(void **state)
{
    struct keyset *ks = keyset_make(1, "hostile");
    static const char text[] = "hostile.example\n1\nhello world\n";
    char good[4096];
    size_t len = 0, n_len;
    struct sworn_note n;
    char *b64, *m;
    struct {
        const char *from, *to;
        size_t to_len;
        const char *what;
    } edits[] = {
        {"hello", "he\rlo", 5, "CR in the text"},
        {"hello", "he\0lo", 5, "NUL in the text"},
        {"hello", "he\tlo", 5, "TAB in the text"},
        {"hello", "he\x7flo", 5, "DEL in the text"},
        {"hello", "he\xfflo", 5, "a 0xff byte"},
        {"hello", "he\xc0\x80lo", 6, "an overlong NUL"},
        {"hello", "he\xed\xa0\x80lo", 7, "a UTF-16 surrogate"},
        {"hello", "he\xe2\x80", 4, "a truncated UTF-8 sequence"},
        {"hello", "he\xf4\x90\x80\x80lo", 8, "a code point above U+10FFFF"},
        {"\n\n" EM, "\n" EM, 4, "no blank line"},
        {EM " ", "- ", 2, "a hyphen instead of the em dash"},
        {EM " ", "\xe2\x80\x93 ", 4, "an en dash"},
        {EM " ", EM, 3, "no space after the dash"},
        {EM " ", EM "  ", 5, "two spaces after the dash"},
        {"hostile0.example/log ", "hostile0.example/log  ", 22, "two spaces after the name"},
        {"hostile0.example/log", "hostile0+example/log", 20, "a '+' in the name"},
        {"hostile0.example/log", "hostile0\xc2\xa0xample/log", 20, "a no-break space in the name"},
        {"hostile0.example/log", "hostile0\xe3\x80\x80xample/log", 21, "an ideographic space"},
        {"hostile0.example/log ", "", 0, "no name"},
    };

    (void)state;
    assert_int_equal(sworn_note_sign(text, strlen(text), ks->ptr, 1, good, sizeof(good), &len), 0);
    assert_int_equal(note_check(good, len, ks->v, 1, NULL), 0);
    assert_int_equal(sworn_note_parse(good, len, &n), 0);
    b64 = strndup(n.sigs[0].sig_b64, n.sigs[0].sig_b64_len);
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        m = replace(good, edits[i].from, edits[i].to, edits[i].to_len, &n_len);
        /* Refused by the parser itself, not merely by a signature over other bytes. */
        if (sworn_note_parse(m, n_len, &n) == 0)
            fail_msg("parsed a note with %s", edits[i].what);
        assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
        assert_rejected(m, n_len, ks->v, 1, edits[i].what);
        free(m);
    }
    /* Signature field damage. */
    {
        struct {
            const char *to;
            const char *what;
        } sigs[] = {
            {"", "an empty signature"},
            {"!!!!", "bad base64"},
            {"AAAA AAAA", "a space inside the base64"},
            {"AAAAAAA", "unpadded base64"},
            {"AAAAAB==", "non-zero trailing bits"},
            {"AAAAAA==", "four bytes: a key id and no signature"},
            {"AAAA", "three bytes"},
        };
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
            m = replace(good, b64, sigs[i].to, strlen(sigs[i].to), &n_len);
            assert_rejected(m, n_len, ks->v, 1, sigs[i].what);
            assert_int_equal(sworn_note_parse(m, n_len, &n), -1);
            free(m);
        }
    }
    /* Structural damage at the ends. */
    assert_rejected("", 0, ks->v, 1, "an empty note");
    assert_rejected("\n\n", 2, ks->v, 1, "only a blank line");
    m = replace(good, text, "\n", 1, &n_len);
    assert_int_equal(sworn_note_parse(m, n_len, &n), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
    free(m);
    assert_rejected(good, len - 1, ks->v, 1, "no final newline");
    memcpy(good + len, "\n", 2);
    assert_rejected(good, len + 1, ks->v, 1, "a blank line after the signatures");
    memcpy(good + len, "x\n", 3);
    assert_rejected(good, len + 2, ks->v, 1, "a line that is not a signature");
    good[len] = '\0';
    assert_rejected(text, strlen(text), ks->v, 1, "no signatures");
    /* Text may hold empty lines: the split is at the last one. */
    {
        char sig_line[2048], with_blank[4096];

        memcpy(sig_line, n.sigs[0].name - 4, len - (size_t)(n.sigs[0].name - 4 - good));
        sig_line[len - (size_t)(n.sigs[0].name - 4 - good)] = '\0';
        snprintf(with_blank, sizeof(with_blank), "a\n\nb\n\n%s", sig_line);
        assert_int_equal(sworn_note_parse(with_blank, strlen(with_blank), &n), 0);
        assert_int_equal(n.text_len, 5);
        assert_int_equal(n.sig_count, 1);
        /* ...but its signature is over other text. */
        assert_int_equal(note_check(with_blank, strlen(with_blank), ks->v, 1, NULL), -1);
    }
    /* Names: the longest allowed, and one byte more. */
    {
        char name[SWORN_NOTE_NAME_MAX + 2], note[4096];

        memset(name, 'n', sizeof(name));
        name[SWORN_NOTE_NAME_MAX] = '\0';
        snprintf(note, sizeof(note), "t\n\n" EM " %s %s\n", name, b64);
        assert_int_equal(sworn_note_parse(note, strlen(note), &n), 0);
        name[SWORN_NOTE_NAME_MAX] = 'n';
        name[SWORN_NOTE_NAME_MAX + 1] = '\0';
        snprintf(note, sizeof(note), "t\n\n" EM " %s %s\n", name, b64);
        assert_int_equal(sworn_note_parse(note, strlen(note), &n), -1);
    }
    /* Signatures: the largest allowed (4 + SWORN_NOTE_SIG_MAX bytes) and one byte more. */
    {
        uint8_t raw[RAW_MAX + 1];
        char big[SWORN_BASE64_LEN(RAW_MAX + 1) + 1], note[4096];

        memset(raw, 7, sizeof(raw));
        sworn_base64_encode(raw, RAW_MAX, big, sizeof(big));
        snprintf(note, sizeof(note), "t\n\n" EM " k %s\n", big);
        assert_int_equal(sworn_note_parse(note, strlen(note), &n), 0);
        sworn_base64_encode(raw, RAW_MAX + 1, big, sizeof(big));
        snprintf(note, sizeof(note), "t\n\n" EM " k %s\n", big);
        assert_int_equal(sworn_note_parse(note, strlen(note), &n), -1);
    }
    /* Overlong: SWORN_NOTE_MAX_LEN + 1 bytes of otherwise fine text. */
    {
        size_t big = SWORN_NOTE_MAX_LEN + 1;
        char *huge = malloc(big);
        const char *tail = n.sigs[0].name - 4;

        assert_int_equal(sworn_note_parse(good, len, &n), 0);
        tail = n.sigs[0].name - 4;
        assert_non_null(huge);
        memset(huge, 'x', big);
        for (size_t i = 79; i < big; i += 80)
            huge[i] = '\n';
        memcpy(huge + big - (size_t)(good + len - tail) - 2, "\n\n", 2);
        memcpy(huge + big - (size_t)(good + len - tail), tail, (size_t)(good + len - tail));
        assert_int_equal(sworn_note_parse(huge, big, &n), -1);
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        /* One byte less (drop the first) is within the limit and parses. */
        assert_int_equal(sworn_note_parse(huge + 1, big - 1, &n), 0);
        free(huge);
    }
    /* NULL arguments. */
    assert_int_equal(sworn_note_parse(NULL, 0, &n), -1);
    assert_int_equal(sworn_note_parse(good, len, NULL), -1);
    assert_int_equal(sworn_note_verify(NULL, ks->v, 1, NULL, NULL, NULL), -1);
    free(b64);
    keyset_free(ks);
}

/* Make a verifier key string for (name, alg, key) with the right id, whatever alg is. */
static void make_vkey(const char *name, uint8_t alg, const uint8_t *key, size_t key_len, char *out,
                      size_t cap)
{
    struct sworn_note_verifier v;

    memset(&v, 0, sizeof(v));
    strcpy(v.name, name);
    v.alg = alg;
    memcpy(v.key, key, key_len);
    v.key_len = key_len;
    assert_int_equal(sworn_note_key_id(name, strlen(name), alg, key, key_len, &v.key_id), 0);
    assert_true(sworn_note_verifier_format(&v, out, cap) > 0);
}

static void test_hostile_vkeys(void **state)
{
    static const char good[] = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
    static const char *const bad[] = {
        "",
        "PeterNeumann",
        "PeterNeumann+c74f20a3",
        "PeterNeumann+c74f20a3+",
        "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",   /* wrong id */
        "PeterNeumanm+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",   /* other name */
        "PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",    /* 7 digits */
        "PeterNeumann+c74f20a3a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  /* 9 digits */
        "PeterNeumann+c74f20g3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",   /* not hex */
        "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",               /* no name */
        "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  /* space */
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",    /* bad base64 */
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n", /* newline */
        "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW ",  /* space */
    };
    struct sworn_note_verifier v;
    uint8_t key[SWORN_NOTE_KEY_MAX + 1];
    char s[SWORN_NOTE_VKEY_MAX * 2];

    (void)state;
    vkey_parse_ok(good, &v);
    assert_int_equal(v.alg, SWORN_NOTE_ALG_ED25519);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (sworn_note_verifier_parse(bad[i], strlen(bad[i]), &v) == 0)
            fail_msg("accepted verifier key \"%s\"", bad[i]);

    memset(key, 0x42, sizeof(key));
    /* Types other than 0x01, 0x02 and 0x04, with ids computed the recommended way. */
    for (unsigned alg = 0; alg < 256; alg++) {
        if (alg == 1 || alg == 2 || alg == 4)
            continue;
        make_vkey("types.example", (uint8_t)alg, key, 32, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
    }
    /* Ed25519 and cosignature keys of the wrong length. */
    for (unsigned alg = 1; alg <= 4; alg += 3) {
        make_vkey("len.example", (uint8_t)alg, key, 32, s, sizeof(s));
        vkey_parse_ok(s, &v);
        make_vkey("len.example", (uint8_t)alg, key, 31, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
        make_vkey("len.example", (uint8_t)alg, key, 33, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
    }
    /* ECDSA keys: garbage, P-384, trailing bytes after a good SPKI. */
    {
        EVP_PKEY *p256 = EVP_EC_gen("P-256"), *p384 = EVP_EC_gen("P-384");
        unsigned char *der = NULL;
        int der_len;

        make_vkey("ec.example", 2, key, 91, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
        der_len = i2d_PUBKEY(p384, &der);
        assert_true(der_len > 0);
        make_vkey("ec.example", 2, der, (size_t)der_len, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
        OPENSSL_free(der);
        der = NULL;
        der_len = i2d_PUBKEY(p256, &der);
        assert_true(der_len > 0 && der_len < (int)sizeof(key));
        memcpy(key, der, (size_t)der_len);
        make_vkey("ec.example", 2, key, (size_t)der_len, s, sizeof(s));
        vkey_parse_ok(s, &v);
        key[der_len] = 0;
        make_vkey("ec.example", 2, key, (size_t)der_len + 1, s, sizeof(s));
        assert_int_equal(sworn_note_verifier_parse(s, strlen(s), &v), -1);
        OPENSSL_free(der);
        EVP_PKEY_free(p256);
        EVP_PKEY_free(p384);
    }
    /* Longer than SWORN_NOTE_VKEY_MAX. */
    memset(s, 'a', sizeof(s));
    assert_int_equal(sworn_note_verifier_parse(s, SWORN_NOTE_VKEY_MAX + 1, &v), -1);
    /* Format: too small a buffer. */
    vkey_parse_ok(good, &v);
    assert_int_equal(sworn_note_verifier_format(&v, s, strlen(good)), -1);
    assert_int_equal(sworn_note_verifier_format(&v, s, strlen(good) + 1), (long)strlen(good));
    assert_string_equal(s, good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_known_and_unknown),
        cmocka_unit_test(test_rules_signature_counts),
        cmocka_unit_test(test_key_files),
        cmocka_unit_test(test_sign_refuses_bad_text),
        cmocka_unit_test(test_cosignature_timestamps),
        cmocka_unit_test(test_hostile_notes),
        cmocka_unit_test(test_hostile_vkeys),
        cmocka_unit_test(test_ecdsa_pem_signer),
        cmocka_unit_test(test_pem_wrong_curve_refused),
        cmocka_unit_test(test_signed_note_vectors),
        cmocka_unit_test(test_golang_skey_reproduces_signature),
        cmocka_unit_test(test_tessera_checkpoints),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
