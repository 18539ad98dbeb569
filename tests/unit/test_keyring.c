/*
 * test_keyring.c -- the keyring (keyring/keyring.c) and key-event statements (keyring/keyevent.c),
 * without hardware: keys are made here with OpenSSL, roots with the note code's own keygen, and
 * key-event signatures come from the file: signer backend.
 *
 *   - times: the one RFC 3339 spelling, calendar rules, agreement with gmtime_r;
 *   - parse/format: a round trip is the identity; every hostile variant (truncation, bit flips,
 *     each rule of the format broken on purpose, limits) is refused or parses canonically;
 *   - thresholds: version 1 needs T of its own roots, a root counts once, a bad root signature
 *     spoils the version, keys that are no roots do not count;
 *   - transitions (TUF): N+1 needs T(N) and T(N+1); a dropped key, a changed SPKI, purpose or
 *     valid-from, a status going backwards, a revocation moved later and a skipped version are
 *     all refused; chains verify in order only;
 *   - valid_at: active, retired (old signatures stay valid), revoked (nothing after revocation);
 *   - key events: round trip, signatures checked against the keyring, proof of possession bound
 *     to its own prefix, hostile statements refused.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "encoding.h"
#include "err.h"
#include "keyevent.h"
#include "keyring.h"
#include "note.h"
#include "notesign.h"
#include "signer.h"
#include "testutil.h"

#define NROOTS 5                   /* four Ed25519 roots and one ECDSA P-256 (PEM) root */
#define NKEYS 5                    /* P-256, P-256, P-256, Ed25519, RSA-2048 */
#define T_2026 INT64_C(1767225600) /* 2026-01-01T00:00:00Z */
#define DAY INT64_C(86400)

struct fx {
    char *dir;
    struct sworn_note_signer roots[NROOTS];
    char *key_path[NKEYS]; /* PEM private keys, for the file: signer */
    uint8_t spki[NKEYS][SWORN_SIGNER_SPKI_MAX];
    size_t spki_len[NKEYS];
    uint8_t id[NKEYS][SWORN_KEY_ID_LEN];
};

static struct fx *F; /* the group's fixture: the tests only read it */

/* --- Fixture. -------------------------------------------------------------------------------- */

static EVP_PKEY *new_key(int i)
{
    if (i < 3)
        return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (i == 3)
        return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
}

/* Write k's private key as PEM (mode 0600) and return the path. */
static char *write_pem(const char *dir, const char *name, EVP_PKEY *k)
{
    char *path = sworn_test_path(dir, name);
    FILE *f;

    sworn_test_write_file(path, "", 0, 0600);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL), 1);
    fclose(f);
    return path;
}

static int group_setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    char vkey[SWORN_NOTE_VKEY_MAX + 1];

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("keyring");
    for (int i = 0; i < NROOTS - 1; i++) {
        char name[32], file[32], *path;

        snprintf(name, sizeof(name), "root-%d.example", i);
        snprintf(file, sizeof(file), "root-%d.key", i);
        path = sworn_test_path(f->dir, file);
        if (sworn_note_keygen_ed25519(name, path, vkey, sizeof(vkey)) != 0 ||
            sworn_note_signer_open_file(path, NULL, &f->roots[i]) != 0)
            fail_msg("root %d: %s", i, sworn_err_msg());
        free(path);
    }
    {
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
        char *path = write_pem(f->dir, "root-pem.key", k);

        if (sworn_note_signer_open_file(path, "root-pem.example", &f->roots[NROOTS - 1]) != 0)
            fail_msg("PEM root: %s", sworn_err_msg());
        EVP_PKEY_free(k);
        free(path);
    }
    for (int i = 0; i < NKEYS; i++) {
        EVP_PKEY *k = new_key(i);
        unsigned char *der = NULL;
        char name[32];
        int n;

        assert_non_null(k);
        snprintf(name, sizeof(name), "key-%d.pem", i);
        f->key_path[i] = write_pem(f->dir, name, k);
        n = i2d_PUBKEY(k, &der);
        assert_true(n > 0 && (size_t)n <= SWORN_SIGNER_SPKI_MAX);
        memcpy(f->spki[i], der, (size_t)n);
        f->spki_len[i] = (size_t)n;
        SHA256(der, (size_t)n, f->id[i]);
        OPENSSL_free(der);
        EVP_PKEY_free(k);
    }
    F = f;
    *state = f;
    return 0;
}

static int group_teardown(void **state)
{
    struct fx *f = *state;

    for (int i = 0; i < NROOTS; i++)
        sworn_note_signer_close(&f->roots[i]);
    for (int i = 0; i < NKEYS; i++)
        free(f->key_path[i]);
    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* --- Helpers. -------------------------------------------------------------------------------- */

/* A keyring of `version` with roots[0..nroots) and threshold t, no keys. */
static struct sworn_keyring *base_keyring(uint64_t version, size_t t, size_t first_root,
                                          size_t nroots)
{
    struct sworn_keyring *kr = sworn_keyring_new();

    assert_non_null(kr);
    kr->version = version;
    kr->threshold = t;
    kr->root_count = nroots;
    for (size_t i = 0; i < nroots; i++)
        kr->roots[i] = F->roots[first_root + i].pub;
    return kr;
}

/* The fixture's keys 0..n-1 added as active from 2026-01-01. */
static void add_keys(struct sworn_keyring *kr, size_t n)
{
    static const enum sworn_sign_purpose p[NKEYS] = {
        SWORN_PURPOSE_CHECKPOINT, SWORN_PURPOSE_RECEIPT, SWORN_PURPOSE_KEY_EVENT,
        SWORN_PURPOSE_RECEIPT, SWORN_PURPOSE_CHECKPOINT};

    for (size_t i = 0; i < n; i++)
        if (sworn_keyring_add_key(kr, F->spki[i], F->spki_len[i], p[i], T_2026 + (int64_t)i) != 0)
            fail_msg("add key %zu: %s", i, sworn_err_msg());
}

static struct sworn_keyring *copy_keyring(const struct sworn_keyring *kr)
{
    struct sworn_keyring *c = sworn_keyring_new();

    assert_non_null(c);
    memcpy(c, kr, sizeof(*c));
    return c;
}

/* The text of kr in a fresh allocation. */
static char *text_of(const struct sworn_keyring *kr, size_t *len)
{
    char *t = malloc(SWORN_KEYRING_TEXT_MAX + 1);
    long n;

    assert_non_null(t);
    n = sworn_keyring_format(kr, t, SWORN_KEYRING_TEXT_MAX + 1);
    if (n < 0)
        fail_msg("format: %s", sworn_err_msg());
    *len = (size_t)n;
    return t;
}

/* kr signed by the roots listed (indices into F->roots, -1 terminated). Fresh allocation. */
static char *signed_by(const struct sworn_keyring *kr, const int *who, size_t *len)
{
    struct sworn_note_signer *s[NROOTS + 2];
    size_t n = 0, tl = 0;
    char *text = text_of(kr, &tl), *note = malloc(SWORN_NOTE_MAX_LEN + 1);

    assert_non_null(note);
    for (; who[n] >= 0; n++)
        s[n] = &F->roots[who[n]];
    if (sworn_note_sign(text, tl, s, n, note, SWORN_NOTE_MAX_LEN + 1, len) != 0)
        fail_msg("sign: %s", sworn_err_msg());
    free(text);
    return note;
}

/* Does version 1 (or any version, checked against its own roots) verify from these bytes? */
static int root_verifies(const char *data, size_t len)
{
    struct sworn_keyring *kr = sworn_keyring_new();
    struct sworn_note note;
    int signed_ = 0, r;

    r = sworn_keyring_load(data, len, kr, &note, &signed_);
    if (r == 0)
        r = signed_ ? sworn_keyring_verify_root(kr, &note, 0) : -1;
    sworn_keyring_free(kr);
    return r;
}

/* Does next (signed as in data) verify as the successor of prev? */
static int transition_verifies(const struct sworn_keyring *prev, const char *data, size_t len)
{
    struct sworn_keyring *kr = sworn_keyring_new();
    struct sworn_note note;
    int signed_ = 0, r;

    r = sworn_keyring_load(data, len, kr, &note, &signed_);
    if (r == 0)
        r = sworn_keyring_verify_transition(prev, kr, &note);
    sworn_keyring_free(kr);
    return r;
}

/* Parse text, expecting a refusal; the message says why the test expected one. */
static void assert_refused(const char *text, size_t len, const char *why)
{
    struct sworn_keyring *kr = sworn_keyring_new();

    if (sworn_keyring_parse(text, len, kr) == 0)
        fail_msg("accepted %s:\n%.*s", why, (int)(len < 2000 ? len : 2000), text);
    assert_true(sworn_err_code() == SWORN_ERR_FORMAT || sworn_err_code() == SWORN_ERR_RANGE);
    sworn_keyring_free(kr);
}

/* Replace the first occurrence of `from` in text by `to`; fresh allocation. */
static char *replaced(const char *text, const char *from, const char *to, size_t *len)
{
    const char *at = strstr(text, from);
    char *out;

    assert_non_null(at);
    assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
    *len = strlen(out);
    return out;
}

/* --- Times. ---------------------------------------------------------------------------------- */

static void test_time_spelling_and_calendar(void **state)
{
    static const char *const bad[] = {
        "2026-02-29T00:00:00Z", /* not a leap year */
        "2100-02-29T00:00:00Z", /* nor is 2100 */
        "1969-12-31T23:59:59Z",      "2026-13-01T00:00:00Z",   "2026-00-10T00:00:00Z",
        "2026-04-31T00:00:00Z",      "2026-01-00T00:00:00Z",   "2026-01-01T24:00:00Z",
        "2026-01-01T00:60:00Z",      "2026-12-31T23:59:60Z", /* no leap seconds */
        "2026-01-01t00:00:00Z",      "2026-01-01T00:00:00z",   "2026-01-01 00:00:00Z",
        "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.0Z", "2026-1-01T00:00:00Z",
        "+026-01-01T00:00:00Z",      "2026-01-01T00:00:0Z",    "",
    };
    char out[SWORN_KEYRING_TIME_LEN + 1];
    int64_t t = 0;

    (void)state;
    assert_int_equal(sworn_keyring_time_parse("1970-01-01T00:00:00Z", 20, &t), 0);
    assert_int_equal(t, 0);
    assert_int_equal(sworn_keyring_time_parse("2026-01-01T00:00:00Z", 20, &t), 0);
    assert_int_equal(t, T_2026);
    assert_int_equal(sworn_keyring_time_parse("2000-02-29T12:34:56Z", 20, &t), 0);
    assert_int_equal(t, INT64_C(951827696));
    assert_int_equal(sworn_keyring_time_parse("9999-12-31T23:59:59Z", 20, &t), 0);
    assert_int_equal(t, SWORN_KEYRING_TIME_MAX);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (sworn_keyring_time_parse(bad[i], strlen(bad[i]), &t) == 0)
            fail_msg("accepted the time %s", bad[i]);
    assert_int_equal(sworn_keyring_time_format(-1, out), -1);
    assert_int_equal(sworn_keyring_time_format(SWORN_KEYRING_TIME_MAX + 1, out), -1);

    /* Agreement with the C library, and format/parse as inverses, over many times. */
    srand(1234);
    for (int i = 0; i < 20000; i++) {
        int64_t v = ((int64_t)rand() << 20 ^ rand()) % (SWORN_KEYRING_TIME_MAX + 1);
        time_t tt = (time_t)v;
        struct tm tm;
        char want[32];
        int64_t back = -1;

        if (i < 3)
            v = i == 0 ? 0 : i == 1 ? SWORN_KEYRING_TIME_MAX : INT64_C(951868799);
        tt = (time_t)v;
        assert_int_equal(sworn_keyring_time_format(v, out), 0);
        assert_non_null(gmtime_r(&tt, &tm));
        strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
        assert_string_equal(out, want);
        assert_int_equal(sworn_keyring_time_parse(out, strlen(out), &back), 0);
        assert_int_equal(back, v);
    }
}

/* --- Parse and format. ----------------------------------------------------------------------- */

/* A keyring with every kind of root and key, and every status. */
static struct sworn_keyring *rich_keyring(void)
{
    struct sworn_keyring *kr = base_keyring(7, 3, 0, NROOTS);

    add_keys(kr, NKEYS);
    assert_int_equal(sworn_keyring_set_status(kr, F->id[1], SWORN_KEY_RETIRED, T_2026 + 30 * DAY),
                     0);
    assert_int_equal(sworn_keyring_set_status(kr, F->id[2], SWORN_KEY_REVOKED, T_2026 + 9 * DAY),
                     0);
    return kr;
}

static void test_round_trip_is_identity(void **state)
{
    struct sworn_keyring *kr = rich_keyring(), *back = sworn_keyring_new();
    size_t len = 0, len2 = 0;
    char *text = text_of(kr, &len), *again;

    (void)state;
    if (sworn_keyring_parse(text, len, back) != 0)
        fail_msg("parse of our own text: %s\n%s", sworn_err_msg(), text);
    assert_int_equal(back->version, 7);
    assert_int_equal(back->threshold, 3);
    assert_int_equal(back->root_count, NROOTS);
    assert_int_equal(back->key_count, NKEYS);
    for (size_t i = 0; i < NROOTS; i++) {
        assert_string_equal(back->roots[i].name, kr->roots[i].name);
        assert_int_equal(back->roots[i].key_id, kr->roots[i].key_id);
    }
    for (size_t i = 0; i < NKEYS; i++) {
        const struct sworn_keyring_key *a = &kr->keys[i], *b = &back->keys[i];

        assert_memory_equal(a->key_id, b->key_id, SWORN_KEY_ID_LEN);
        assert_int_equal(a->purpose, b->purpose);
        assert_int_equal(a->status, b->status);
        assert_int_equal(a->valid_from, b->valid_from);
        assert_int_equal(a->valid_until, b->valid_until);
        assert_int_equal(a->spki_len, b->spki_len);
        assert_memory_equal(a->spki, b->spki, a->spki_len);
        if (i > 0)
            assert_true(memcmp(b[-1].key_id, b->key_id, SWORN_KEY_ID_LEN) < 0);
    }
    again = text_of(back, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, again, len);
    /* The layout of docs/keys.md: magic, version, threshold, roots, keys. */
    assert_true(
        strncmp(text, "sworn keyring v1\nversion 7\nthreshold 3\nroot root-0.example+", 59) == 0);
    assert_non_null(strstr(text, " receipt retired 2026-01-01T00:00:01Z 2026-01-31T00:00:00Z "));
    assert_non_null(strstr(text, " key-event revoked 2026-01-01T00:00:02Z 2026-01-10T00:00:00Z "));
    assert_non_null(strstr(text, " checkpoint active 2026-01-01T00:00:00Z - MFkwEwYHKoZIzj0CAQYI"));
    /* A bare text loads as unsigned, a signed one as signed. */
    {
        int is_signed = 1;
        int who[] = {0, -1};
        size_t sl = 0;
        char *s = signed_by(kr, who, &sl);

        assert_int_equal(sworn_keyring_load(text, len, back, NULL, &is_signed), 0);
        assert_int_equal(is_signed, 0);
        assert_int_equal(sworn_keyring_load(s, sl, back, NULL, &is_signed), 0);
        assert_int_equal(is_signed, 1);
        free(s);
    }
    free(text);
    free(again);
    sworn_keyring_free(kr);
    sworn_keyring_free(back);
}

/*
 * Flip bits of text[0..len): all 8 of every byte when stride is 1, else one bit (rotating) of
 * every stride-th byte. Each result is refused or (a digit of a time becoming another digit, say)
 * is another valid keyring, which must then be in canonical form: format gives back the mutated
 * bytes. Returns how many mutations parsed.
 */
static size_t flip_bits(const char *text, size_t len, size_t stride)
{
    struct sworn_keyring *back = sworn_keyring_new();
    char *m = malloc(len + 1), *again = malloc(SWORN_KEYRING_TEXT_MAX + 1);
    size_t accepted = 0;

    assert_non_null(m);
    assert_non_null(again);
    for (size_t i = 0; i < len; i += stride) {
        for (int bit = 0; bit < 8; bit++) {
            long n;

            if (stride > 1 && bit != (int)(i % 8))
                continue;
            memcpy(m, text, len);
            m[i] ^= (char)(1 << bit);
            if (sworn_keyring_parse(m, len, back) != 0)
                continue;
            accepted++;
            n = sworn_keyring_format(back, again, SWORN_KEYRING_TEXT_MAX + 1);
            assert_int_equal(n, (long)len);
            assert_memory_equal(again, m, len);
        }
    }
    free(m);
    free(again);
    sworn_keyring_free(back);
    return accepted;
}

/* Every prefix (or every stride-th) that does not end a line is refused. */
static void truncations(const char *text, size_t len, size_t stride)
{
    struct sworn_keyring *back = sworn_keyring_new();

    for (size_t n = 0; n < len; n += stride)
        if (n == 0 || text[n - 1] != '\n')
            assert_int_equal(sworn_keyring_parse(text, n, back), -1);
    sworn_keyring_free(back);
}

static void test_truncations_and_bit_flips(void **state)
{
    struct sworn_keyring *kr = rich_keyring(), *lean = base_keyring(3, 1, 0, 1);
    size_t len = 0, lean_len = 0, accepted;
    char *text = text_of(kr, &len), *lean_text;

    (void)state;
    /*
     * Every prefix and every bit of a small keyring (one Ed25519 root, Ed25519 keys in each
     * status), and a sample of the rich one, whose P-256 root and P-256 and RSA keys go through
     * OpenSSL's decoders (slow under the sanitizers, where each allocation is recorded).
     */
    for (int i = 0; i < 3; i++) {
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
        unsigned char *der = NULL;
        int n = i2d_PUBKEY(k, &der);
        uint8_t id[SWORN_KEY_ID_LEN];

        SHA256(der, (size_t)n, id);
        assert_int_equal(
            sworn_keyring_add_key(lean, der, (size_t)n, SWORN_PURPOSE_RECEIPT, T_2026 + i), 0);
        if (i > 0)
            assert_int_equal(
                sworn_keyring_set_status(lean, id, i == 1 ? SWORN_KEY_RETIRED : SWORN_KEY_REVOKED,
                                         T_2026 + DAY),
                0);
        OPENSSL_free(der);
        EVP_PKEY_free(k);
    }
    lean_text = text_of(lean, &lean_len);
    truncations(lean_text, lean_len, 1);
    truncations(text, len, 7);
    accepted = flip_bits(lean_text, lean_len, 1);
    /* Only fields without redundancy (times, statuses, names, numbers) can flip into validity. */
    assert_true(accepted > 0 && accepted < lean_len);
    (void)flip_bits(text, len, 11);
    free(text);
    free(lean_text);
    sworn_keyring_free(kr);
    sworn_keyring_free(lean);
}

static void test_each_rule_broken(void **state)
{
    struct sworn_keyring *kr = base_keyring(1, 2, 0, 3);
    size_t len = 0, ml = 0;
    char *text, *m, hex[SWORN_KEY_ID_HEX_LEN + 1], upper[SWORN_KEY_ID_HEX_LEN + 1];
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        {"sworn keyring v1\n", "sworn keyring v2\n", "another magic"},
        {"sworn keyring v1\n", "sworn keyring v1 \n", "a trailing space"},
        {"version 1\n", "version 0\n", "version 0"},
        {"version 1\n", "version 01\n", "a leading zero"},
        {"version 1\n", "version +1\n", "a sign"},
        {"version 1\n", "version  1\n", "two spaces"},
        {"version 1\n", "version 18446744073709551615\n", "the last uint64 (N+1 overflows)"},
        {"version 1\n", "version 18446744073709551616\n", "a version above uint64"},
        {"version 1\n", "version 1\r\n", "CRLF"},
        {"threshold 2\n", "threshold 0\n", "threshold 0"},
        {"threshold 2\n", "threshold 4\n", "a threshold above the root count"},
        {"threshold 2\n", "", "no threshold"},
        {"version 1\nthreshold 2\n", "threshold 2\nversion 1\n", "swapped lines"},
        {" checkpoint ", " checkpoints ", "an unknown purpose"},
        {" active ", " Active ", "an unknown status"},
        {" active 2026-01-01T00:00:00Z - ", " active 2026-01-01T00:00:00Z 2027-01-01T00:00:00Z ",
         "an active key with a valid-until"},
        {" retired 2026-01-01T00:00:01Z 2026-01-31T00:00:00Z ", " retired 2026-01-01T00:00:01Z - ",
         "a retired key without a valid-until"},
        {" retired 2026-01-01T00:00:01Z 2026-01-31T00:00:00Z ",
         " retired 2026-01-01T00:00:01Z 2025-12-31T00:00:00Z ", "valid-until before valid-from"},
        {" active 2026-01-01T00:00:00Z - ", " active 2026-01-01T00:00:00+00:00 - ",
         "another time spelling"},
        {" active 2026-01-01T00:00:00Z - ", " active  2026-01-01T00:00:00Z - ", "two spaces"},
        {"==\n", "=\n", "bad base64 padding"},
        {"\nkey ", "\n\nkey ", "an empty line"},
        {"\nkey ", "\nkey\t", "a tab"},
        {"\nkey ", "\nkeys ", "an unknown line"},
        {"\nkey ", "\n# comment\nkey ", "a comment"},
        {" - MFkw", " MFkw", "a key line of six fields"},
        {" - MFkw", " - - MFkw", "a key line of eight fields"},
        {" - MFkw", " -", "a key line without its SPKI"},
    };

    (void)state;
    add_keys(kr, 2);
    assert_int_equal(sworn_keyring_set_status(kr, F->id[1], SWORN_KEY_RETIRED, T_2026 + 30 * DAY),
                     0);
    text = text_of(kr, &len);
    assert_int_equal(sworn_keyring_parse(text, len, kr), 0);
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        m = replaced(text, edits[i].from, edits[i].to, &ml);
        assert_refused(m, ml, edits[i].why);
        free(m);
    }
    /* No final newline; an extra line at the end. */
    assert_refused(text, len - 1, "a missing final newline");
    assert_true(asprintf(&m, "%sversion 2\n", text) > 0);
    assert_refused(m, strlen(m), "a line after the keys");
    free(m);
    /* The key id: upper case, and one that is not SHA-256 of the SPKI. */
    sworn_hex_encode(F->id[0], SWORN_KEY_ID_LEN, hex, sizeof(hex));
    for (size_t i = 0; i <= SWORN_KEY_ID_HEX_LEN; i++)
        upper[i] = (char)(hex[i] >= 'a' && hex[i] <= 'f' ? hex[i] - 32 : hex[i]);
    m = replaced(text, hex, upper, &ml);
    assert_refused(m, ml, "an upper-case key id");
    free(m);
    upper[0] = hex[0] == '0' ? '1' : '0';
    memcpy(upper + 1, hex + 1, SWORN_KEY_ID_HEX_LEN);
    m = replaced(text, hex, upper, &ml);
    assert_refused(m, ml, "a key id that is not SHA-256 of the SPKI");
    free(m);
    free(text);

    /* Keys out of order, and a key twice: built by hand, since format refuses them too. */
    {
        struct sworn_keyring *bad = copy_keyring(kr);
        char *t2 = malloc(SWORN_KEYRING_TEXT_MAX + 1);
        struct sworn_keyring_key tmp = bad->keys[0];

        bad->keys[0] = bad->keys[1];
        bad->keys[1] = tmp;
        assert_int_equal(sworn_keyring_format(bad, t2, SWORN_KEYRING_TEXT_MAX + 1), -1);
        assert_string_equal(t2, "");
        /* Swap the two key lines of the good text instead. */
        text = text_of(kr, &len);
        {
            char *k1 = strstr(text, "\nkey ") + 1, *k2 = strstr(k1, "\nkey ") + 1;
            char *swapped;

            assert_true(asprintf(&swapped, "%.*s%s%.*s", (int)(k1 - text), text, k2, (int)(k2 - k1),
                                 k1) > 0);
            assert_refused(swapped, strlen(swapped), "keys out of order");
            free(swapped);
            assert_true(asprintf(&swapped, "%.*s%.*s", (int)(k2 - text), text, (int)(k2 - k1), k1) >
                        0);
            assert_refused(swapped, strlen(swapped), "a key listed twice");
            free(swapped);
        }
        free(text);
        free(t2);
        sworn_keyring_free(bad);
    }
    /* Roots: none, the same twice, one of type 0x04, a non-canonical spelling. */
    {
        struct sworn_keyring *bad = base_keyring(1, 1, 0, 2);
        char *t2 = malloc(SWORN_KEYRING_TEXT_MAX + 1);
        char *r0;

        bad->roots[1] = bad->roots[0];
        assert_int_equal(sworn_keyring_format(bad, t2, SWORN_KEYRING_TEXT_MAX + 1), -1);
        /* The same Ed25519 key under another name is one holder too. */
        bad->roots[1] = bad->roots[0];
        strcpy(bad->roots[1].name, "alias.example");
        assert_int_equal(sworn_note_key_id(bad->roots[1].name, strlen(bad->roots[1].name),
                                           bad->roots[1].alg, bad->roots[1].key,
                                           bad->roots[1].key_len, &bad->roots[1].key_id),
                         0);
        assert_int_equal(sworn_keyring_format(bad, t2, SWORN_KEYRING_TEXT_MAX + 1), -1);
        /* A cosignature (type 0x04) key is no root. */
        bad->roots[1] = bad->roots[0];
        bad->roots[1].alg = SWORN_NOTE_ALG_COSIGNATURE_V1;
        assert_int_equal(sworn_note_key_id(bad->roots[1].name, strlen(bad->roots[1].name),
                                           bad->roots[1].alg, bad->roots[1].key,
                                           bad->roots[1].key_len, &bad->roots[1].key_id),
                         0);
        assert_true(sworn_note_verifier_format(&bad->roots[1], vkey, sizeof(vkey)) > 0);
        bad->root_count = 1;
        text = text_of(bad, &len);
        assert_true(asprintf(&r0, "%.*sroot %s\n", (int)len, text, vkey) > 0);
        assert_refused(r0, strlen(r0), "a cosignature key as a root");
        free(r0);
        /* Without any root. */
        assert_true(asprintf(&r0, "sworn keyring v1\nversion 1\nthreshold 1\n") > 0);
        assert_refused(r0, strlen(r0), "no root");
        free(r0);
        /* The verifier key's id in upper case. */
        assert_true(sworn_note_verifier_format(&bad->roots[0], vkey, sizeof(vkey)) > 0);
        {
            char *plus = strchr(vkey, '+');

            for (int i = 1; i <= 8; i++)
                if (plus[i] >= 'a' && plus[i] <= 'f')
                    plus[i] = (char)(plus[i] - 32);
        }
        assert_true(asprintf(&r0, "sworn keyring v1\nversion 1\nthreshold 1\nroot %s\n", vkey) > 0);
        if (strcmp(r0, text) != 0)
            assert_refused(r0, strlen(r0), "a root key id in upper case");
        free(r0);
        free(text);
        free(t2);
        sworn_keyring_free(bad);
    }
    /* An SPKI of a curve sworn does not use (P-384), with its correct key id. */
    {
        EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-384");
        unsigned char *der = NULL;
        int n = i2d_PUBKEY(k, &der);
        struct sworn_keyring *bad = copy_keyring(kr);

        assert_true(n > 0);
        assert_int_equal(sworn_keyring_spki_check(der, (size_t)n), -1);
        assert_int_equal(sworn_keyring_add_key(bad, der, (size_t)n, SWORN_PURPOSE_RECEIPT, T_2026),
                         -1);
        /* The same P-256 key with its point compressed: another spelling, refused. */
        {
            EVP_PKEY *c = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
            unsigned char *cd = NULL;
            int cn;

            assert_int_equal(EVP_PKEY_set_utf8_string_param(c, "point-format", "compressed"), 1);
            cn = i2d_PUBKEY(c, &cd);
            assert_int_equal(cn, 59);
            assert_int_equal(sworn_keyring_spki_check(cd, (size_t)cn), -1);
            OPENSSL_free(cd);
            EVP_PKEY_free(c);
        }
        /* A point that is not on the curve. */
        {
            uint8_t off[SWORN_SIGNER_SPKI_MAX];

            memcpy(off, F->spki[0], F->spki_len[0]);
            off[F->spki_len[0] - 1] ^= 1;
            assert_int_equal(sworn_keyring_spki_check(off, F->spki_len[0]), -1);
        }
        /* And one with bytes after the DER. */
        assert_int_equal(sworn_keyring_spki_check(F->spki[0], F->spki_len[0]), 0);
        {
            uint8_t longer[SWORN_SIGNER_SPKI_MAX + 1];

            memcpy(longer, F->spki[0], F->spki_len[0]);
            longer[F->spki_len[0]] = 0;
            assert_int_equal(sworn_keyring_spki_check(longer, F->spki_len[0] + 1), -1);
        }
        OPENSSL_free(der);
        EVP_PKEY_free(k);
        sworn_keyring_free(bad);
    }
    sworn_keyring_free(kr);
}

static void test_limits(void **state)
{
    struct sworn_keyring *kr = base_keyring(1, 1, 0, 1);
    char *text, *big;
    size_t len = 0, off;

    (void)state;
    /*
     * 1024 keys fit; a 1025th is refused by the mutator and by the parser. The keys are Ed25519
     * SPKIs around distinct 32-byte strings (any 32 bytes are an Ed25519 key to the format), which
     * is far cheaper than 1024 key generations.
     */
    for (int i = 0; i < SWORN_KEYRING_MAX_KEYS; i++) {
        uint8_t der[44] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

        memset(der + 12, 0x11, 32);
        der[12] = (uint8_t)(i >> 8);
        der[13] = (uint8_t)i;
        if (sworn_keyring_add_key(kr, der, sizeof(der), SWORN_PURPOSE_RECEIPT, T_2026) != 0)
            fail_msg("key %d: %s", i, sworn_err_msg());
    }
    assert_int_equal(
        sworn_keyring_add_key(kr, F->spki[0], F->spki_len[0], SWORN_PURPOSE_RECEIPT, T_2026), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    text = text_of(kr, &len);
    {
        struct sworn_keyring *back = sworn_keyring_new();

        assert_int_equal(sworn_keyring_parse(text, len, back), 0);
        assert_int_equal(back->key_count, SWORN_KEYRING_MAX_KEYS);
        /* Lookups are by binary search over the sorted ids. */
        for (size_t i = 0; i < back->key_count; i += 97)
            assert_ptr_equal(sworn_keyring_find(back, back->keys[i].key_id), &back->keys[i]);
        sworn_keyring_free(back);
    }
    /* Append a 1025th line (an id above every other, checked by the limit first). */
    big = malloc(len + 4096);
    memcpy(big, text, len);
    off = len;
    off += (size_t)sprintf(big + off, "key %s receipt active 2026-01-01T00:00:00Z - AAAA\n",
                           "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    assert_refused(big, off, "a 1025th key");
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    /* A text longer than the limit. */
    assert_int_equal(sworn_keyring_parse(big, SWORN_KEYRING_TEXT_MAX + 1, kr), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    free(big);
    free(text);

    /* 64 roots fit, 65 do not. */
    {
        struct sworn_keyring *r = base_keyring(1, 1, 0, 1);
        char *line, *t2;
        size_t l2 = 0;

        for (int i = 1; i < SWORN_KEYRING_MAX_ROOTS; i++) {
            struct sworn_note_verifier *v = &r->roots[i];
            uint8_t pk[32];

            *v = r->roots[0];
            snprintf(v->name, sizeof(v->name), "root-%d.example", i);
            memset(pk, i, sizeof(pk));
            pk[0] = 0x42; /* any 32 bytes are an Ed25519 public key for the format */
            memcpy(v->key, pk, 32);
            assert_int_equal(
                sworn_note_key_id(v->name, strlen(v->name), v->alg, v->key, 32, &v->key_id), 0);
        }
        r->root_count = SWORN_KEYRING_MAX_ROOTS;
        t2 = text_of(r, &l2);
        {
            struct sworn_keyring *back = sworn_keyring_new();

            assert_int_equal(sworn_keyring_parse(t2, l2, back), 0);
            sworn_keyring_free(back);
        }
        /* Insert a 65th root line before the (absent) keys: at the end. */
        assert_true(asprintf(&line, "%sroot one.more+00000000+AQ==\n", t2) > 0);
        assert_refused(line, strlen(line), "a 65th root");
        assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
        free(line);
        free(t2);
        sworn_keyring_free(r);
    }
    sworn_keyring_free(kr);
}

/* --- Thresholds. ----------------------------------------------------------------------------- */

static void test_threshold_of_version_1(void **state)
{
    struct sworn_keyring *kr = base_keyring(1, 2, 0, 3);
    int none[] = {-1}, one[] = {0, -1}, two[] = {0, 2, -1}, three[] = {2, 1, 0, -1},
        outsider[] = {1, 3, -1}, twice[] = {1, 1, -1};
    size_t len = 0;
    char *n;

    (void)state;
    add_keys(kr, 2);
    n = signed_by(kr, one, &len);
    assert_int_equal(root_verifies(n, len), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    free(n);
    n = signed_by(kr, two, &len);
    assert_int_equal(root_verifies(n, len), 0);
    free(n);
    n = signed_by(kr, three, &len);
    assert_int_equal(root_verifies(n, len), 0);
    free(n);
    /* A key that is no root of this version does not count (root 3 is not among 0..2). */
    n = signed_by(kr, outsider, &len);
    assert_int_equal(root_verifies(n, len), -1);
    free(n);
    /* One root signing twice is one root. */
    n = signed_by(kr, twice, &len);
    assert_int_equal(root_verifies(n, len), -1);
    free(n);
    /* An unsigned text is no verified keyring. */
    {
        char *t = text_of(kr, &len);

        assert_int_equal(root_verifies(t, len), -1);
        free(t);
        (void)none;
    }
    /* A root signature that does not verify spoils the version even when two others do. */
    n = signed_by(kr, three, &len);
    {
        char *inside = n + len - 10; /* in the last line's signature bytes, past its key id */

        *inside = *inside == 'A' ? 'B' : 'A';
        assert_int_equal(root_verifies(n, len), -1);
    }
    free(n);
    /* The version 1 rule: a chain must start at 1. */
    kr->version = 2;
    n = signed_by(kr, two, &len);
    {
        struct sworn_keyring *back = sworn_keyring_new();
        struct sworn_note note;

        assert_int_equal(sworn_keyring_load(n, len, back, &note, NULL), 0);
        assert_int_equal(sworn_keyring_verify_root(back, &note, 1), -1);
        assert_int_equal(sworn_keyring_verify_root(back, &note, 0), 0);
        sworn_keyring_free(back);
    }
    free(n);
    sworn_keyring_free(kr);
}

static void test_pem_root_signs(void **state)
{
    /* Roots 3 and 4 (the P-256 PEM root, type 0x02) with threshold 2. */
    struct sworn_keyring *kr = base_keyring(1, 2, 3, 2);
    int both[] = {3, 4, -1}, pem_only[] = {4, -1};
    size_t len = 0;
    char *n;

    (void)state;
    assert_int_equal(kr->roots[1].alg, SWORN_NOTE_ALG_ECDSA_P256);
    n = signed_by(kr, both, &len);
    assert_int_equal(root_verifies(n, len), 0);
    free(n);
    n = signed_by(kr, pem_only, &len);
    assert_int_equal(root_verifies(n, len), -1);
    free(n);
    sworn_keyring_free(kr);
}

/* --- Transitions. ---------------------------------------------------------------------------- */

static void test_transition_content_rules(void **state)
{
    struct sworn_keyring *v1 = base_keyring(1, 2, 0, 3), *v2;
    const struct sworn_keyring_key *k;

    (void)state;
    add_keys(v1, 3);
    assert_int_equal(sworn_keyring_set_status(v1, F->id[1], SWORN_KEY_RETIRED, T_2026 + 30 * DAY),
                     0);
    assert_int_equal(sworn_keyring_set_status(v1, F->id[2], SWORN_KEY_REVOKED, T_2026 + 20 * DAY),
                     0);

#define NEXT() (v2 = copy_keyring(v1), v2->version = 2)
#define KEY(kr, i) ((struct sworn_keyring_key *)sworn_keyring_find((kr), F->id[i]))
#define REFUSED(why)                                                                               \
    do {                                                                                           \
        if (sworn_keyring_check_transition(v1, v2) == 0)                                           \
            fail_msg("accepted a transition with %s", why);                                        \
        assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);                                      \
        sworn_keyring_free(v2);                                                                    \
    } while (0)
#define ACCEPTED(why)                                                                              \
    do {                                                                                           \
        if (sworn_keyring_check_transition(v1, v2) != 0)                                           \
            fail_msg("refused a transition with %s: %s", why, sworn_err_msg());                    \
        sworn_keyring_free(v2);                                                                    \
    } while (0)

    NEXT();
    ACCEPTED("no change");
    NEXT();
    assert_int_equal(sworn_keyring_add_key(v2, F->spki[3], F->spki_len[3], SWORN_PURPOSE_RECEIPT,
                                           T_2026 + 40 * DAY),
                     0);
    ACCEPTED("a key added");
    NEXT();
    assert_int_equal(sworn_keyring_set_status(v2, F->id[0], SWORN_KEY_RETIRED, T_2026 + DAY), 0);
    ACCEPTED("active -> retired");
    NEXT();
    assert_int_equal(sworn_keyring_set_status(v2, F->id[0], SWORN_KEY_REVOKED, T_2026 + DAY), 0);
    ACCEPTED("active -> revoked");
    NEXT();
    assert_int_equal(sworn_keyring_set_status(v2, F->id[1], SWORN_KEY_REVOKED, T_2026 + DAY), 0);
    ACCEPTED("retired -> revoked, earlier");
    NEXT();
    KEY(v2, 2)->valid_until -= DAY;
    ACCEPTED("a revocation moved earlier");

    /* Old public keys are never dropped. */
    NEXT();
    memmove(&v2->keys[0], &v2->keys[1], (v2->key_count - 1) * sizeof(v2->keys[0]));
    v2->key_count--;
    REFUSED("a key dropped");
    /* A key's SPKI, purpose and valid-from never change. */
    NEXT();
    memcpy(KEY(v2, 0)->spki, F->spki[1], F->spki_len[1]);
    REFUSED("the SPKI changed under the same id");
    NEXT();
    KEY(v2, 0)->purpose = SWORN_PURPOSE_RECEIPT;
    REFUSED("the purpose changed");
    NEXT();
    KEY(v2, 0)->valid_from -= 1;
    REFUSED("valid-from changed");
    /* Status never goes backwards. */
    NEXT();
    KEY(v2, 1)->status = SWORN_KEY_ACTIVE;
    KEY(v2, 1)->valid_until = SWORN_KEYRING_NO_TIME;
    REFUSED("retired -> active");
    NEXT();
    KEY(v2, 2)->status = SWORN_KEY_RETIRED;
    REFUSED("revoked -> retired");
    NEXT();
    KEY(v2, 2)->status = SWORN_KEY_ACTIVE;
    KEY(v2, 2)->valid_until = SWORN_KEYRING_NO_TIME;
    REFUSED("revoked -> active");
    NEXT();
    KEY(v2, 1)->valid_until += 1;
    REFUSED("a retirement moved later");
    NEXT();
    KEY(v2, 1)->valid_until -= 1;
    REFUSED("a retirement moved earlier (only a revocation may)");
    NEXT();
    KEY(v2, 2)->valid_until += DAY;
    REFUSED("a revocation moved later");
    NEXT();
    KEY(v2, 1)->status = SWORN_KEY_REVOKED;
    KEY(v2, 1)->valid_until += DAY;
    REFUSED("retired -> revoked, later than the retirement");
    /* Versions follow one another. */
    NEXT();
    v2->version = 3;
    REFUSED("a skipped version");
    NEXT();
    v2->version = 1;
    REFUSED("the same version");
    NEXT();
    v2->version = 0;
    REFUSED("an older version");

    /* The mutators refuse what the rules refuse. */
    v2 = copy_keyring(v1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[2], SWORN_KEY_RETIRED, T_2026 + DAY), -1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[1], SWORN_KEY_RETIRED, T_2026 + DAY), -1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[1], SWORN_KEY_REVOKED, T_2026 + 31 * DAY),
                     -1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[0], SWORN_KEY_RETIRED, T_2026 - 1), -1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[0], SWORN_KEY_ACTIVE, T_2026 + DAY), -1);
    assert_int_equal(sworn_keyring_set_status(v2, F->id[3], SWORN_KEY_RETIRED, T_2026 + DAY), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    assert_int_equal(
        sworn_keyring_add_key(v2, F->spki[0], F->spki_len[0], SWORN_PURPOSE_CHECKPOINT, T_2026),
        -1);
    k = sworn_keyring_find(v2, F->id[0]);
    assert_non_null(k);
    assert_int_equal(k->status, SWORN_KEY_ACTIVE);
    sworn_keyring_free(v2);
    sworn_keyring_free(v1);
#undef NEXT
#undef KEY
#undef REFUSED
#undef ACCEPTED
}

static void test_transition_thresholds(void **state)
{
    /* v1: roots 0,1,2, 2 of 3. v2: roots 2,3,4, 2 of 3 (a root rotation sharing root 2). */
    struct sworn_keyring *v1 = base_keyring(1, 2, 0, 3), *v2 = base_keyring(2, 2, 2, 3);
    int new_only[] = {3, 4, -1}, old_only[] = {0, 1, -1}, one_old[] = {0, 3, 4, -1},
        shared[] = {2, 0, 3, -1}, all[] = {0, 1, 3, 4, -1};
    size_t len = 0;
    char *n;

    (void)state;
    add_keys(v1, 1);
    add_keys(v2, 1);
    /* Signed by the new roots only: the old roots did not let it in. */
    n = signed_by(v2, new_only, &len);
    assert_int_equal(transition_verifies(v1, n, len), -1);
    assert_non_null(strstr(sworn_err_msg(), "previous version"));
    free(n);
    /* Signed by the old roots only: the new roots did not accept it. */
    n = signed_by(v2, old_only, &len);
    assert_int_equal(transition_verifies(v1, n, len), -1);
    free(n);
    /* One old root and two new ones: still short of the old threshold. */
    n = signed_by(v2, one_old, &len);
    assert_int_equal(transition_verifies(v1, n, len), -1);
    free(n);
    /* Root 2 is in both sets and counts in both: 2 and 0 for v1, 2 and 3 for v2. */
    n = signed_by(v2, shared, &len);
    assert_int_equal(transition_verifies(v1, n, len), 0);
    free(n);
    n = signed_by(v2, all, &len);
    assert_int_equal(transition_verifies(v1, n, len), 0);
    free(n);

    /* The chain: v1 (own roots), v2 (both sets), v3 (v2's roots), in order only. */
    {
        struct sworn_keyring *v3 = copy_keyring(v2), *last = sworn_keyring_new();
        int v1s[] = {0, 1, -1}, v3s[] = {3, 4, -1};
        size_t l1 = 0, l2 = 0, l3 = 0;
        char *f1 = signed_by(v1, v1s, &l1), *f2 = signed_by(v2, shared, &l2), *f3;
        const char *files[3];
        size_t lens[3];

        v3->version = 3;
        assert_int_equal(sworn_keyring_set_status(v3, F->id[0], SWORN_KEY_RETIRED, T_2026 + DAY),
                         0);
        f3 = signed_by(v3, v3s, &l3);
        files[0] = f1, files[1] = f2, files[2] = f3;
        lens[0] = l1, lens[1] = l2, lens[2] = l3;
        if (sworn_keyring_verify_chain(files, lens, 3, last) != 0)
            fail_msg("chain: %s", sworn_err_msg());
        assert_int_equal(last->version, 3);
        assert_int_equal(sworn_keyring_find(last, F->id[0])->status, SWORN_KEY_RETIRED);
        /* Missing the middle version. */
        files[1] = f3, lens[1] = l3;
        assert_int_equal(sworn_keyring_verify_chain(files, lens, 2, last), -1);
        /* Starting anywhere but version 1. */
        files[0] = f2, lens[0] = l2;
        assert_int_equal(sworn_keyring_verify_chain(files, lens, 2, last), -1);
        /* Out of order. */
        files[0] = f1, files[1] = f3, files[2] = f2;
        lens[0] = l1, lens[1] = l3, lens[2] = l2;
        assert_int_equal(sworn_keyring_verify_chain(files, lens, 3, last), -1);
        /* An unsigned version in the chain. */
        {
            size_t tl = 0;
            char *t2 = text_of(v2, &tl);

            files[1] = t2, lens[1] = tl;
            assert_int_equal(sworn_keyring_verify_chain(files, lens, 2, last), -1);
            assert_non_null(strstr(sworn_err_msg(), "not signed"));
            free(t2);
        }
        free(f1);
        free(f2);
        free(f3);
        sworn_keyring_free(v3);
        sworn_keyring_free(last);
    }
    sworn_keyring_free(v1);
    sworn_keyring_free(v2);
}

/* --- valid_at. ------------------------------------------------------------------------------- */

static void test_valid_at(void **state)
{
    struct sworn_keyring *kr = base_keyring(1, 1, 0, 1);
    const int64_t from0 = T_2026, from1 = T_2026 + 1, from2 = T_2026 + 2;
    const int64_t retired = T_2026 + 30 * DAY, revoked = T_2026 + 10 * DAY;
    uint8_t unknown[SWORN_KEY_ID_LEN];

    (void)state;
    add_keys(kr, 3); /* 0 checkpoint, 1 receipt, 2 key-event */
    assert_int_equal(sworn_keyring_set_status(kr, F->id[1], SWORN_KEY_RETIRED, retired), 0);
    assert_int_equal(sworn_keyring_set_status(kr, F->id[2], SWORN_KEY_REVOKED, revoked), 0);

    /* Active: from valid-from on, with no end. */
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[0], SWORN_PURPOSE_CHECKPOINT, from0 - 1),
                     -1);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[0], SWORN_PURPOSE_CHECKPOINT, from0), 0);
    assert_int_equal(
        sworn_keyring_key_valid_at(kr, F->id[0], SWORN_PURPOSE_CHECKPOINT, SWORN_KEYRING_TIME_MAX),
        0);
    /* Only for its own purpose. */
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[0], SWORN_PURPOSE_RECEIPT, from0), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_VERIFY);
    /* Retired: what it signed before retirement stays valid, forever; nothing after. */
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[1], SWORN_PURPOSE_RECEIPT, from1), 0);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[1], SWORN_PURPOSE_RECEIPT, retired - 1),
                     0);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[1], SWORN_PURPOSE_RECEIPT, retired), -1);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[1], SWORN_PURPOSE_RECEIPT, retired + DAY),
                     -1);
    /* Revoked: before the revocation time only. */
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[2], SWORN_PURPOSE_KEY_EVENT, from2), 0);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[2], SWORN_PURPOSE_KEY_EVENT, revoked - 1),
                     0);
    assert_int_equal(sworn_keyring_key_valid_at(kr, F->id[2], SWORN_PURPOSE_KEY_EVENT, revoked),
                     -1);
    assert_non_null(strstr(sworn_err_msg(), "revoked"));
    /* Unknown keys. */
    memset(unknown, 0x5a, sizeof(unknown));
    assert_int_equal(sworn_keyring_key_valid_at(kr, unknown, SWORN_PURPOSE_CHECKPOINT, from0), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    sworn_keyring_free(kr);
}

/* --- Key events. ----------------------------------------------------------------------------- */

/* Sign a digest for SWORN_PURPOSE_KEY_EVENT with fixture key i through the file: signer. */
static void sign_with(int i, const uint8_t d[32], uint8_t *sig, size_t *sig_len)
{
    struct sworn_signer_config cfg;
    struct sworn_signer *s = NULL;
    char *uri;

    memset(&cfg, 0, sizeof(cfg));
    assert_true(asprintf(&uri, "file:%s", F->key_path[i]) > 0);
    cfg.uri = uri;
    if (sworn_signer_open(&cfg, &s) != 0 ||
        sworn_signer_sign(s, SWORN_PURPOSE_KEY_EVENT, d, 32, sig, SWORN_SIGNER_SIG_MAX, sig_len) !=
            0)
        fail_msg("sign with key %d: %s", i, sworn_err_msg());
    sworn_signer_close(s);
    free(uri);
}

/* A rotation from fixture key `old` to `new` (signed as it should be) at time eff. */
static struct sworn_keyevent rotation(int old, int new, enum sworn_sign_purpose p, int64_t eff)
{
    struct sworn_keyevent ev;
    uint8_t d[32];

    memset(&ev, 0, sizeof(ev));
    ev.kind = SWORN_KEYEVENT_ROTATE;
    ev.purpose = p;
    memcpy(ev.old_id, F->id[old], SWORN_KEY_ID_LEN);
    memcpy(ev.new_id, F->id[new], SWORN_KEY_ID_LEN);
    memcpy(ev.new_spki, F->spki[new], F->spki_len[new]);
    ev.new_spki_len = F->spki_len[new];
    ev.effective_from = eff;
    assert_int_equal(sworn_keyevent_pop_digest(&ev, d), 0);
    sign_with(new, d, ev.new_sig, &ev.new_sig_len);
    assert_int_equal(sworn_keyevent_digest(&ev, d), 0);
    sign_with(old, d, ev.old_sig, &ev.old_sig_len);
    return ev;
}

static void test_key_event_round_trip_and_verify(void **state)
{
    struct sworn_keyring *kr = base_keyring(1, 1, 0, 1);
    const int64_t eff = T_2026 + 5 * DAY;
    struct sworn_keyevent ev, back, bad;
    char text[SWORN_KEYEVENT_MAX + 1], again[SWORN_KEYEVENT_MAX + 1], stmt[SWORN_KEYEVENT_MAX + 1];
    uint8_t d[32];
    long n, m, sl;

    (void)state;
    add_keys(kr, 1); /* key 0: checkpoint */
    /* Rotation of the checkpoint key 0 to the RSA key 4. */
    ev = rotation(0, 4, SWORN_PURPOSE_CHECKPOINT, eff);
    n = sworn_keyevent_format(&ev, text, sizeof(text));
    assert_true(n > 0);
    sl = sworn_keyevent_statement(&ev, stmt, sizeof(stmt));
    assert_true(sl > 0 && sl < n && memcmp(text, stmt, (size_t)sl) == 0);
    assert_true(strncmp(text, "sworn key-event v1\nevent rotate\npurpose checkpoint\nold ", 55) ==
                0);
    assert_non_null(strstr(text, "\neffective-from 2026-01-06T00:00:00Z\nold-signature "));
    assert_non_null(strstr(text, "\nnew-signature "));
    assert_int_equal(sworn_keyevent_parse(text, (size_t)n, &back), 0);
    m = sworn_keyevent_format(&back, again, sizeof(again));
    assert_int_equal(m, n);
    assert_memory_equal(again, text, (size_t)n);
    /* SHA-256 of exactly the statement bytes. */
    SHA256((const uint8_t *)stmt, (size_t)sl, d);
    {
        uint8_t d2[32];

        assert_int_equal(sworn_keyevent_digest(&back, d2), 0);
        assert_memory_equal(d, d2, 32);
    }
    if (sworn_keyevent_verify(&back, kr) != 0)
        fail_msg("verify: %s", sworn_err_msg());
    /* It verifies against the keyring version that records it, too. */
    {
        struct sworn_keyring *v2 = copy_keyring(kr);

        v2->version = 2;
        assert_int_equal(sworn_keyring_set_status(v2, F->id[0], SWORN_KEY_RETIRED, eff), 0);
        assert_int_equal(
            sworn_keyring_add_key(v2, F->spki[4], F->spki_len[4], SWORN_PURPOSE_CHECKPOINT, eff),
            0);
        assert_int_equal(sworn_keyring_check_transition(kr, v2), 0);
        assert_int_equal(sworn_keyevent_verify(&back, v2), 0);
        /* But not when the keyring holds the new key for another purpose. */
        ((struct sworn_keyring_key *)sworn_keyring_find(v2, F->id[4]))->purpose =
            SWORN_PURPOSE_RECEIPT;
        assert_int_equal(sworn_keyevent_verify(&back, v2), -1);
        sworn_keyring_free(v2);
    }

    /* Each signature is checked: swap them, corrupt them, sign the wrong digest. */
    bad = back;
    bad.effective_from += 1; /* the statement changed after signing */
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    bad = back;
    bad.old_sig[bad.old_sig_len / 2] ^= 1;
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    assert_non_null(strstr(sworn_err_msg(), "old key"));
    bad = back;
    bad.new_sig[bad.new_sig_len / 2] ^= 1;
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    assert_non_null(strstr(sworn_err_msg(), "proof of possession"));
    /* A proof of possession is bound to its prefix: the new key's signature of the plain digest
       (what the old key signs) is no proof. */
    bad = back;
    assert_int_equal(sworn_keyevent_digest(&bad, d), 0);
    sign_with(4, d, bad.new_sig, &bad.new_sig_len);
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    /* The old key must have the statement's purpose, and be in the keyring. */
    bad = back;
    bad.purpose = SWORN_PURPOSE_RECEIPT;
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    bad = rotation(1, 4, SWORN_PURPOSE_RECEIPT, eff);
    assert_int_equal(sworn_keyevent_verify(&bad, kr), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_NOTFOUND);
    /* An old key revoked before the event cannot sign it. */
    {
        struct sworn_keyring *rv = copy_keyring(kr);

        assert_int_equal(sworn_keyring_set_status(rv, F->id[0], SWORN_KEY_REVOKED, eff - DAY), 0);
        assert_int_equal(sworn_keyevent_verify(&back, rv), -1);
        sworn_keyring_free(rv);
    }
    /* Retire (signed by the key) and revoke (signed or not). */
    {
        struct sworn_keyevent r;
        char t2[SWORN_KEYEVENT_MAX + 1];
        long l;

        memset(&r, 0, sizeof(r));
        r.kind = SWORN_KEYEVENT_RETIRE;
        r.purpose = SWORN_PURPOSE_CHECKPOINT;
        memcpy(r.old_id, F->id[0], SWORN_KEY_ID_LEN);
        r.effective_from = eff;
        /* Unsigned, a retirement cannot be written. */
        assert_int_equal(sworn_keyevent_format(&r, t2, sizeof(t2)), -1);
        assert_int_equal(sworn_keyevent_digest(&r, d), 0);
        sign_with(0, d, r.old_sig, &r.old_sig_len);
        l = sworn_keyevent_format(&r, t2, sizeof(t2));
        assert_true(l > 0);
        assert_non_null(strstr(t2, "\nevent retire\n"));
        assert_non_null(strstr(t2, "\nnew -\nnew-spki -\n"));
        assert_int_equal(sworn_keyevent_parse(t2, (size_t)l, &back), 0);
        assert_int_equal(sworn_keyevent_verify(&back, kr), 0);
        /* Signed by another key: refused. */
        sign_with(1, d, r.old_sig, &r.old_sig_len);
        assert_int_equal(sworn_keyevent_verify(&r, kr), -1);

        r.kind = SWORN_KEYEVENT_REVOKE;
        r.old_sig_len = 0;
        l = sworn_keyevent_format(&r, t2, sizeof(t2));
        assert_true(l > 0);
        assert_int_equal(sworn_keyevent_parse(t2, (size_t)l, &back), 0);
        assert_int_equal(sworn_keyevent_verify(&back, kr), 0);
        /* A revocation after the key's (or before its) life is still a revocation. */
        assert_int_equal(sworn_keyevent_digest(&r, d), 0);
        sign_with(0, d, r.old_sig, &r.old_sig_len);
        l = sworn_keyevent_format(&r, t2, sizeof(t2));
        assert_int_equal(sworn_keyevent_parse(t2, (size_t)l, &back), 0);
        assert_int_equal(sworn_keyevent_verify(&back, kr), 0);
        back.old_sig[3] ^= 1;
        assert_int_equal(sworn_keyevent_verify(&back, kr), -1);
    }
    sworn_keyring_free(kr);
}

static void test_key_event_hostile(void **state)
{
    struct sworn_keyevent ev = rotation(0, 3, SWORN_PURPOSE_CHECKPOINT, T_2026 + DAY), back;
    char text[SWORN_KEYEVENT_MAX + 1], *m;
    size_t len, ml = 0;
    long n = sworn_keyevent_format(&ev, text, sizeof(text));
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        {"sworn key-event v1\n", "sworn key-event v2\n", "another magic"},
        {"event rotate\n", "event rotation\n", "an unknown event"},
        {"event rotate\n", "event retire\n", "a retirement naming a new key"},
        {"purpose checkpoint\n", "purpose log\n", "an unknown purpose"},
        {"purpose checkpoint\n", "purpose  checkpoint\n", "two spaces"},
        {"\nold ", "\nold  ", "two spaces"},
        {"\nnew ", "\nnew-key ", "an unknown field"},
        {"effective-from 2026-01-02T00:00:00Z\n", "effective-from 2026-01-02T00:00:00+00:00\n",
         "another time spelling"},
        {"effective-from 2026-01-02T00:00:00Z\n", "effective-from 2026-02-30T00:00:00Z\n",
         "an impossible date"},
        {"\nold-signature ", "\nold-signature  ", "two spaces"},
        {"\nnew-signature ", "\nnew-signatures ", "an unknown signature line"},
        {"\nold-signature ", "\nnew-signature ", "two new-signatures"},
        {"\nnew-spki MCow", "\nnew-spki MCo!", "bad base64"},
        {"\n", "\r\n", "CRLF"},
        {"\nnew-spki ", "\n\nnew-spki ", "an empty line"},
    };

    (void)state;
    assert_true(n > 0);
    len = (size_t)n;
    assert_int_equal(sworn_keyevent_parse(text, len, &back), 0);
    /* Truncations: only complete forms parse, and a rotation needs both signatures. */
    for (size_t i = 0; i < len; i++)
        assert_int_equal(sworn_keyevent_parse(text, i, &back), -1);
    /* Bit flips are refused or canonical (digits of the time). */
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            char again[SWORN_KEYEVENT_MAX + 1];
            long k;

            text[i] ^= (char)(1 << bit);
            if (sworn_keyevent_parse(text, len, &back) == 0) {
                k = sworn_keyevent_format(&back, again, sizeof(again));
                assert_int_equal(k, (long)len);
                assert_memory_equal(again, text, len);
            }
            text[i] ^= (char)(1 << bit);
        }
    }
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        m = replaced(text, edits[i].from, edits[i].to, &ml);
        if (sworn_keyevent_parse(m, ml, &back) == 0)
            fail_msg("accepted a statement with %s", edits[i].why);
        free(m);
    }
    /* The new key id must be SHA-256 of new-spki (here it names the old key instead). */
    {
        char old_hex[SWORN_KEY_ID_HEX_LEN + 1], new_hex[SWORN_KEY_ID_HEX_LEN + 1];

        sworn_hex_encode(F->id[0], SWORN_KEY_ID_LEN, old_hex, sizeof(old_hex));
        sworn_hex_encode(F->id[3], SWORN_KEY_ID_LEN, new_hex, sizeof(new_hex));
        m = replaced(text, new_hex, old_hex, &ml);
        assert_int_equal(sworn_keyevent_parse(m, ml, &back), -1);
        free(m);
    }
    /* A key is never rotated to itself, even with a consistent id. */
    {
        struct sworn_keyevent self = ev;
        char t2[SWORN_KEYEVENT_MAX + 1];

        memcpy(self.old_id, self.new_id, SWORN_KEY_ID_LEN);
        assert_int_equal(sworn_keyevent_format(&self, t2, sizeof(t2)), -1);
    }
    /* Bytes after the signatures; an oversized input. */
    assert_true(asprintf(&m, "%sextra\n", text) > 0);
    assert_int_equal(sworn_keyevent_parse(m, strlen(m), &back), -1);
    free(m);
    assert_int_equal(sworn_keyevent_parse(text, SWORN_KEYEVENT_MAX + 1, &back), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_RANGE);
    /* A retirement without its signature, a revocation with a new-signature. */
    {
        struct sworn_keyevent r = ev;
        char t2[SWORN_KEYEVENT_MAX + 1];
        long l;

        r.kind = SWORN_KEYEVENT_REVOKE;
        r.new_spki_len = 0;
        r.new_sig_len = 0;
        l = sworn_keyevent_format(&r, t2, sizeof(t2));
        assert_true(l > 0);
        assert_true(asprintf(&m, "%snew-signature AAAA\n", t2) > 0);
        assert_int_equal(sworn_keyevent_parse(m, strlen(m), &back), -1);
        free(m);
        m = replaced(t2, "event revoke", "event retire", &ml);
        assert_int_equal(sworn_keyevent_parse(m, ml, &back), 0); /* it has an old-signature */
        free(m);
        r.old_sig_len = 0;
        l = sworn_keyevent_format(&r, t2, sizeof(t2));
        m = replaced(t2, "event revoke", "event retire", &ml);
        assert_int_equal(sworn_keyevent_parse(m, ml, &back), -1);
        free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_spelling_and_calendar),
        cmocka_unit_test(test_round_trip_is_identity),
        cmocka_unit_test(test_truncations_and_bit_flips),
        cmocka_unit_test(test_each_rule_broken),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_threshold_of_version_1),
        cmocka_unit_test(test_pem_root_signs),
        cmocka_unit_test(test_transition_content_rules),
        cmocka_unit_test(test_transition_thresholds),
        cmocka_unit_test(test_valid_at),
        cmocka_unit_test(test_key_event_round_trip_and_verify),
        cmocka_unit_test(test_key_event_hostile),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
