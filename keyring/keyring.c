/*
 * keyring.c -- the keyring text, its root signatures and its version rules (contract and byte
 * layout in keyring.h; docs/keys.md gives the same with an example).
 *
 * Parsing is in two layers, as the format has two kinds of rule. The textual layer reads lines
 * with the bounded reader and insists on the one canonical spelling of every field (lower-case
 * hex, canonical decimal and base64, the exact time form, a verifier key that formats back to
 * itself), so that format(parse(x)) == x. The semantic layer, validate(), checks what a keyring
 * must satisfy however it was built (limits, order, distinct roots, status and times, SPKI and
 * key id); format() runs it too, so a keyring changed in memory is held to the same rules.
 */
#include "keyring.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "civil.h"
#include "roca.h"
#include "utf8.h"

#define MAGIC "sworn keyring v1"
#define SPKI_B64_MAX SWORN_BASE64_LEN(SWORN_SIGNER_SPKI_MAX)
/* The longest line: a key line with the largest SPKI (roots are far shorter). */
#define LINE_MAX_LEN (64 + SWORN_KEY_ID_HEX_LEN + 2 * SWORN_KEYRING_TIME_LEN + SPKI_B64_MAX)
#define KEY_FIELDS 7

struct sworn_keyring *sworn_keyring_new(void)
{
    struct sworn_keyring *kr = calloc(1, sizeof(*kr));

    if (kr == NULL)
        sworn_err_set(SWORN_ERR_NOMEM, "keyring: no memory for a keyring");
    return kr;
}

void sworn_keyring_free(struct sworn_keyring *kr)
{
    free(kr);
}

/* --- Times: RFC 3339 UTC, one spelling only. ------------------------------------------------ */

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : dim[m - 1];
}

/* n decimal digits at s (which the caller has checked are digits). */
static unsigned digits(const char *s, size_t n)
{
    unsigned v = 0;

    for (size_t i = 0; i < n; i++)
        v = v * 10 + (unsigned)(s[i] - '0');
    return v;
}

int sworn_keyring_time_parse(const char *s, size_t len, int64_t *t)
{
    static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
    unsigned year, mon, day, hour, min, sec;

    if (s == NULL || t == NULL || len != SWORN_KEYRING_TIME_LEN)
        return sworn_err_set(SWORN_ERR_FORMAT, "time is not of the form YYYY-MM-DDTHH:MM:SSZ");
    for (size_t i = 0; i < len; i++) {
        int ok = form[i] == 'd' ? s[i] >= '0' && s[i] <= '9' : s[i] == form[i];

        if (!ok)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "time %.*s is not of the form YYYY-MM-DDTHH:MM:SSZ", (int)len, s);
    }
    year = digits(s, 4);
    mon = digits(s + 5, 2);
    day = digits(s + 8, 2);
    hour = digits(s + 11, 2);
    min = digits(s + 14, 2);
    sec = digits(s + 17, 2);
    if (year < 1970 || mon < 1 || mon > 12 || day < 1 || day > days_in_month(year, mon) ||
        hour > 23 || min > 59 || sec > 59)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "time %.*s is not a real UTC time between 1970 and 9999 (no leap "
                             "seconds)",
                             (int)len, s);
    *t = sworn_days_from_civil(year, mon, day) * 86400 + (int64_t)hour * 3600 + (int64_t)min * 60 +
         sec;
    return 0;
}

/* Write v as exactly n decimal digits (v < 10^n). */
static void put_digits(char *out, size_t n, unsigned v)
{
    for (size_t i = n; i > 0; i--) {
        out[i - 1] = (char)('0' + v % 10);
        v /= 10;
    }
}

int sworn_keyring_time_format(int64_t t, char out[SWORN_KEYRING_TIME_LEN + 1])
{
    int64_t y, days, secs;
    unsigned m, d;

    if (t < SWORN_KEYRING_TIME_MIN || t > SWORN_KEYRING_TIME_MAX) {
        out[0] = '\0';
        return sworn_err_set(SWORN_ERR_RANGE, "time %" PRId64 " is outside 1970..9999", t);
    }
    days = t / 86400;
    secs = t % 86400;
    sworn_civil_from_days(days, &y, &m, &d);
    /* Digit by digit: every field has a fixed width, and the range check above bounds them. */
    memcpy(out, "0000-00-00T00:00:00Z", SWORN_KEYRING_TIME_LEN + 1);
    put_digits(out, 4, (unsigned)y);
    put_digits(out + 5, 2, m);
    put_digits(out + 8, 2, d);
    put_digits(out + 11, 2, (unsigned)(secs / 3600));
    put_digits(out + 14, 2, (unsigned)(secs / 60 % 60));
    put_digits(out + 17, 2, (unsigned)(secs % 60));
    return 0;
}

/* --- Names of purposes and statuses. --------------------------------------------------------- */

static const struct {
    const char *name;
    enum sworn_sign_purpose p;
} purposes[] = {{"checkpoint", SWORN_PURPOSE_CHECKPOINT},
                {"receipt", SWORN_PURPOSE_RECEIPT},
                {"key-event", SWORN_PURPOSE_KEY_EVENT}};

static const struct {
    const char *name;
    enum sworn_key_status s;
} statuses[] = {
    {"active", SWORN_KEY_ACTIVE}, {"retired", SWORN_KEY_RETIRED}, {"revoked", SWORN_KEY_REVOKED}};

static int word_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

int sworn_keyring_purpose_parse(const char *s, size_t len, enum sworn_sign_purpose *p)
{
    for (size_t i = 0; s != NULL && i < sizeof(purposes) / sizeof(purposes[0]); i++) {
        if (word_is(s, len, purposes[i].name)) {
            *p = purposes[i].p;
            return 0;
        }
    }
    return sworn_err_set(SWORN_ERR_FORMAT, "purpose %.*s is none of checkpoint, receipt, key-event",
                         s != NULL && len < 64 ? (int)len : 0, s != NULL ? s : "");
}

const char *sworn_keyring_purpose_name(enum sworn_sign_purpose p)
{
    for (size_t i = 0; i < sizeof(purposes) / sizeof(purposes[0]); i++)
        if (purposes[i].p == p)
            return purposes[i].name;
    return NULL;
}

static int status_parse(const char *s, size_t len, enum sworn_key_status *st)
{
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        if (word_is(s, len, statuses[i].name)) {
            *st = statuses[i].s;
            return 0;
        }
    }
    return sworn_err_set(SWORN_ERR_FORMAT, "status %.*s is none of active, retired, revoked",
                         len < 64 ? (int)len : 0, s);
}

const char *sworn_keyring_status_name(enum sworn_key_status s)
{
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
        if (statuses[i].s == s)
            return statuses[i].name;
    return NULL;
}

/* --- Semantic rules, shared by parse and format. --------------------------------------------- */

/*
 * The two SPKI forms that HSM and TPM keys have, byte for byte: DER SEQUENCE { SEQUENCE {
 * id-ecPublicKey, prime256v1 }, BIT STRING { 04 || X || Y } } and SEQUENCE { SEQUENCE {
 * id-Ed25519 }, BIT STRING { key } }. Matching them directly is exact (one key, one spelling: a
 * compressed P-256 point, another spelling of the same key, is refused) and about ten times
 * faster than OpenSSL 3's generic decoder, which matters for a keyring of a thousand keys.
 */
static const uint8_t p256_prefix[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48,
                                      0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48,
                                      0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00};
#define P256_POINT_LEN 65
static const uint8_t ed25519_prefix[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                         0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
#define ED25519_KEY_LEN 32

/*
 * The P-256 group, made once per process: building it is most of the cost of a point check (and
 * of the allocations). OpenSSL only reads a group once it is built, so threads may share it; it
 * is never freed (one object, reachable until exit).
 */
static EC_GROUP *p256_group;
static pthread_once_t p256_once = PTHREAD_ONCE_INIT;

static void p256_group_init(void)
{
    p256_group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
}

/* Is the uncompressed point a point of P-256 (on the curve, not the point at infinity)? */
static int p256_point_ok(const uint8_t *point)
{
    EC_POINT *p = NULL;
    int ok;

    (void)pthread_once(&p256_once, p256_group_init);
    if (p256_group == NULL || point[0] != 0x04)
        return 0;
    p = EC_POINT_new(p256_group);
    ok = p != NULL && EC_POINT_oct2point(p256_group, p, point, P256_POINT_LEN, NULL) == 1 &&
         EC_POINT_is_at_infinity(p256_group, p) == 0;
    EC_POINT_free(p);
    ERR_clear_error();
    return ok;
}

/* An RSA key: OpenSSL decodes it, and re-encoding must give back the same bytes. */
static int rsa_spki_ok(const uint8_t *spki, size_t len)
{
    const unsigned char *p = spki;
    unsigned char *again = NULL;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)len);
    int n, ok = 0;

    if (k != NULL && p == spki + len && EVP_PKEY_get_base_id(k) == EVP_PKEY_RSA) {
        n = i2d_PUBKEY(k, &again);
        ok = n > 0 && (size_t)n == len && memcmp(again, spki, len) == 0;
    }
    OPENSSL_free(again);
    EVP_PKEY_free(k);
    ERR_clear_error();
    return ok;
}

/* A ROCA modulus (CVE-2017-15361) is factorable from the public key alone: refuse it. */
static int rsa_not_roca(const uint8_t *spki, size_t len)
{
    const unsigned char *p = spki;
    EVP_PKEY *k = d2i_PUBKEY(NULL, &p, (long)len);
    int rc;

    if (k == NULL) {
        ERR_clear_error();
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: the RSA SPKI does not decode");
    }
    rc = sworn_roca_refuse_pkey(k, "keyring");
    EVP_PKEY_free(k);
    return rc;
}

int sworn_keyring_spki_check(const uint8_t *spki, size_t len)
{
    if (spki == NULL || len == 0 || len > SWORN_SIGNER_SPKI_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: SPKI of %zu bytes", len);
    if (len == sizeof(p256_prefix) + P256_POINT_LEN &&
        memcmp(spki, p256_prefix, sizeof(p256_prefix)) == 0) {
        if (!p256_point_ok(spki + sizeof(p256_prefix)))
            return sworn_err_set(SWORN_ERR_FORMAT, "keyring: P-256 SPKI with an invalid point");
        return 0;
    }
    /* Any 32 bytes are an Ed25519 public key as far as the format goes (as in note.c). */
    if (len == sizeof(ed25519_prefix) + ED25519_KEY_LEN &&
        memcmp(spki, ed25519_prefix, sizeof(ed25519_prefix)) == 0)
        return 0;
    if (!rsa_spki_ok(spki, len))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: the SPKI is not the canonical DER of a P-256 (uncompressed "
                             "point), Ed25519 or RSA key");
    return rsa_not_roca(spki, len);
}

/* Check one root: a type sworn accepts, and a verifier key that survives formatting. */
static int check_root(const struct sworn_note_verifier *r, size_t i)
{
    char vkey[SWORN_NOTE_VKEY_MAX + 1];
    struct sworn_note_verifier back;
    long n;

    if (r->alg != SWORN_NOTE_ALG_ED25519 && r->alg != SWORN_NOTE_ALG_ECDSA_P256)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: root %zu is of type 0x%02x; roots are Ed25519 (0x01) or "
                             "ECDSA P-256 (0x02)",
                             i + 1, r->alg);
    n = sworn_note_verifier_format(r, vkey, sizeof(vkey));
    if (n < 0 || sworn_note_verifier_parse(vkey, (size_t)n, &back) < 0 || back.key_id != r->key_id)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: root %zu is not a valid verifier key",
                             i + 1);
    return 0;
}

/* Check one key line's content. */
static int check_key(const struct sworn_keyring_key *k, size_t i)
{
    uint8_t id[SWORN_KEY_ID_LEN];

    if (sworn_keyring_purpose_name(k->purpose) == NULL ||
        sworn_keyring_status_name(k->status) == NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: key %zu has no valid purpose or status",
                             i + 1);
    if (k->valid_from < SWORN_KEYRING_TIME_MIN || k->valid_from > SWORN_KEYRING_TIME_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: key %zu has valid-from out of range",
                             i + 1);
    if (k->status == SWORN_KEY_ACTIVE && k->valid_until != SWORN_KEYRING_NO_TIME)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: key %zu is active but has a valid-until (must be -)", i + 1);
    if (k->status != SWORN_KEY_ACTIVE &&
        (k->valid_until < k->valid_from || k->valid_until > SWORN_KEYRING_TIME_MAX))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: key %zu is %s but its valid-until is missing or before its "
                             "valid-from",
                             i + 1, sworn_keyring_status_name(k->status));
    if (sworn_keyring_spki_check(k->spki, k->spki_len) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: key %zu: %.200s", i + 1, sworn_err_msg());
    SHA256(k->spki, k->spki_len, id);
    if (memcmp(id, k->key_id, sizeof(id)) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: key %zu: its id is not SHA-256 of its SPKI", i + 1);
    return 0;
}

/*
 * The semantic rules. roots_parsed: the roots come straight from sworn_note_verifier_parse (the
 * parser's case), so their own validity need not be checked twice.
 */
static int validate(const struct sworn_keyring *kr, int roots_parsed)
{
    if (kr->version < 1 || kr->version == UINT64_MAX)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: version %" PRIu64 " is out of range",
                             kr->version);
    if (kr->root_count < 1 || kr->root_count > SWORN_KEYRING_MAX_ROOTS)
        return sworn_err_set(SWORN_ERR_RANGE, "keyring: %zu roots; 1..%d are allowed",
                             kr->root_count, SWORN_KEYRING_MAX_ROOTS);
    if (kr->threshold < 1 || kr->threshold > kr->root_count)
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: threshold %zu with %zu roots",
                             kr->threshold, kr->root_count);
    if (kr->key_count > SWORN_KEYRING_MAX_KEYS)
        return sworn_err_set(SWORN_ERR_RANGE, "keyring: %zu keys; at most %d are allowed",
                             kr->key_count, SWORN_KEYRING_MAX_KEYS);
    for (size_t i = 0; i < kr->root_count; i++) {
        const struct sworn_note_verifier *r = &kr->roots[i];

        if (!roots_parsed && check_root(r, i) < 0)
            return -1;
        if (r->alg != SWORN_NOTE_ALG_ED25519 && r->alg != SWORN_NOTE_ALG_ECDSA_P256)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "keyring: root %zu is of type 0x%02x; roots are Ed25519 (0x01) "
                                 "or ECDSA P-256 (0x02)",
                                 i + 1, r->alg);
        for (size_t j = 0; j < i; j++) {
            const struct sworn_note_verifier *o = &kr->roots[j];

            /* One holder must never count twice: not by name and id, not by key. */
            if ((o->key_id == r->key_id && strcmp(o->name, r->name) == 0) ||
                (o->alg == r->alg && o->key_len == r->key_len &&
                 memcmp(o->key, r->key, r->key_len) == 0))
                return sworn_err_set(SWORN_ERR_FORMAT,
                                     "keyring: roots %zu and %zu are the same key", j + 1, i + 1);
        }
    }
    for (size_t i = 0; i < kr->key_count; i++) {
        if (check_key(&kr->keys[i], i) < 0)
            return -1;
        if (i > 0 && memcmp(kr->keys[i - 1].key_id, kr->keys[i].key_id, SWORN_KEY_ID_LEN) >= 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "keyring: key %zu is not in ascending order of key id (or "
                                 "repeats one)",
                                 i + 1);
    }
    return 0;
}

/* --- Parsing. -------------------------------------------------------------------------------- */

struct reader {
    struct sworn_buf b;
    size_t line_no; /* of the line last read, for messages */
};

static int next_line(struct reader *r, const char **line, size_t *len)
{
    const uint8_t *p = NULL;

    r->line_no++;
    if (sworn_buf_get_line(&r->b, LINE_MAX_LEN, &p, len) < 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: line %zu is missing, too long, or lacks its newline",
                             r->line_no);
    *line = (const char *)p;
    return 0;
}

/* Does the next line start with prefix? Reads nothing. */
static int next_starts_with(const struct reader *r, const char *prefix)
{
    size_t n = strlen(prefix);

    return sworn_buf_remaining(&r->b) >= n && memcmp(r->b.p + r->b.off, prefix, n) == 0;
}

/* A line "<word> <canonical decimal>". */
static int number_line(struct reader *r, const char *word, uint64_t *v)
{
    const char *line = NULL;
    size_t len = 0, wl = strlen(word);

    SWORN_GUARD(next_line(r, &line, &len));
    SWORN_ENSURE(len > wl + 1 && memcmp(line, word, wl) == 0 && line[wl] == ' ', SWORN_ERR_FORMAT,
                 "keyring: line %zu must be \"%s <number>\"", r->line_no, word);
    SWORN_ENSURE(sworn_parse_u64(line + wl + 1, len - wl - 1, v) == 0, SWORN_ERR_FORMAT,
                 "keyring: line %zu: %s is not a canonical decimal number", r->line_no, word);
    return 0;
fail:
    return -1;
}

/*
 * Split a line into exactly n fields separated by single spaces, none empty.
 * OUT: f[i], fl[i]. Returns 0 or -1.
 */
static int split_fields(const char *line, size_t len, size_t n, const char **f, size_t *fl)
{
    size_t i = 0, start = 0;

    for (size_t pos = 0; pos <= len; pos++) {
        if (pos < len && line[pos] != ' ')
            continue;
        if (pos == start || i == n)
            return -1;
        f[i] = line + start;
        fl[i] = pos - start;
        i++;
        start = pos + 1;
    }
    return i == n ? 0 : -1;
}

static int hex_id_parse(const char *s, size_t len, uint8_t id[SWORN_KEY_ID_LEN])
{
    if (len != SWORN_KEY_ID_HEX_LEN)
        return -1;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return -1;
    return sworn_hex_decode(s, len, id, SWORN_KEY_ID_LEN);
}

static int parse_key_line(const char *line, size_t len, size_t line_no, struct sworn_keyring_key *k)
{
    const char *f[KEY_FIELDS];
    size_t fl[KEY_FIELDS];

    SWORN_ENSURE(split_fields(line, len, KEY_FIELDS, f, fl) == 0 && word_is(f[0], fl[0], "key"),
                 SWORN_ERR_FORMAT,
                 "keyring: line %zu must be \"key <id> <purpose> <status> <valid-from> "
                 "<valid-until> <spki>\" with single spaces",
                 line_no);
    SWORN_ENSURE(hex_id_parse(f[1], fl[1], k->key_id) == 0, SWORN_ERR_FORMAT,
                 "keyring: line %zu: the key id must be 64 lower-case hex digits", line_no);
    SWORN_GUARD(sworn_keyring_purpose_parse(f[2], fl[2], &k->purpose));
    SWORN_GUARD(status_parse(f[3], fl[3], &k->status));
    SWORN_GUARD(sworn_keyring_time_parse(f[4], fl[4], &k->valid_from));
    if (word_is(f[5], fl[5], "-"))
        k->valid_until = SWORN_KEYRING_NO_TIME;
    else
        SWORN_GUARD(sworn_keyring_time_parse(f[5], fl[5], &k->valid_until));
    SWORN_ENSURE(fl[6] <= SPKI_B64_MAX &&
                     sworn_base64_decode(f[6], fl[6], k->spki, sizeof(k->spki), &k->spki_len) == 0,
                 SWORN_ERR_FORMAT,
                 "keyring: line %zu: the SPKI is not canonical base64 of at most "
                 "%d bytes",
                 line_no, SWORN_SIGNER_SPKI_MAX);
    return 0;
fail:
    if (sworn_err_code() == SWORN_ERR_FORMAT && strncmp(sworn_err_msg(), "keyring:", 8) != 0) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        sworn_err_set(SWORN_ERR_FORMAT, "keyring: line %zu: %s", line_no, why);
    }
    return -1;
}

static int parse_root_line(const char *line, size_t len, size_t line_no,
                           struct sworn_note_verifier *root)
{
    char again[SWORN_NOTE_VKEY_MAX + 1];
    long n;

    /* "root " then the verifier key, which must be spelled exactly as we would write it. */
    if (sworn_note_verifier_parse(line + 5, len - 5, root) < 0) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        return sworn_err_set(SWORN_ERR_FORMAT, "keyring: line %zu: %s", line_no, why);
    }
    n = sworn_note_verifier_format(root, again, sizeof(again));
    if (n < 0 || (size_t)n != len - 5 || memcmp(again, line + 5, len - 5) != 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "keyring: line %zu: the root key is not in canonical form", line_no);
    return 0;
}

int sworn_keyring_parse(const char *text, size_t len, struct sworn_keyring *out)
{
    struct reader r;
    const char *line = NULL;
    size_t line_len = 0;
    uint64_t threshold = 0;

    SWORN_ENSURE(text != NULL && out != NULL, SWORN_ERR_ARG, "keyring: NULL argument");
    SWORN_ENSURE(len <= SWORN_KEYRING_TEXT_MAX, SWORN_ERR_RANGE,
                 "keyring: text of %zu bytes, more than %d", len, SWORN_KEYRING_TEXT_MAX);
    /* Root names may be UTF-8; nothing may be a control byte but the newlines. */
    SWORN_GUARD(sworn_utf8_check(text, len, 1, "keyring"));
    r.b = sworn_buf_init(text, len);
    r.line_no = 0;
    out->version = 0;
    out->threshold = 0;
    out->root_count = 0;
    out->key_count = 0;

    SWORN_GUARD(next_line(&r, &line, &line_len));
    SWORN_ENSURE(word_is(line, line_len, MAGIC), SWORN_ERR_FORMAT,
                 "keyring: the first line must be \"" MAGIC "\"");
    SWORN_GUARD(number_line(&r, "version", &out->version));
    SWORN_GUARD(number_line(&r, "threshold", &threshold));
    SWORN_ENSURE(threshold >= 1 && threshold <= SWORN_KEYRING_MAX_ROOTS, SWORN_ERR_FORMAT,
                 "keyring: threshold %" PRIu64 " is out of range", threshold);
    out->threshold = (size_t)threshold;
    while (next_starts_with(&r, "root ")) {
        SWORN_ENSURE(out->root_count < SWORN_KEYRING_MAX_ROOTS, SWORN_ERR_RANGE,
                     "keyring: more than %d roots", SWORN_KEYRING_MAX_ROOTS);
        SWORN_GUARD(next_line(&r, &line, &line_len));
        SWORN_GUARD(parse_root_line(line, line_len, r.line_no, &out->roots[out->root_count]));
        out->root_count++;
    }
    while (sworn_buf_remaining(&r.b) > 0) {
        SWORN_ENSURE(next_starts_with(&r, "key "), SWORN_ERR_FORMAT,
                     "keyring: line %zu is neither a root line (before the keys) nor a key line",
                     r.line_no + 1);
        SWORN_ENSURE(out->key_count < SWORN_KEYRING_MAX_KEYS, SWORN_ERR_RANGE,
                     "keyring: more than %d keys", SWORN_KEYRING_MAX_KEYS);
        SWORN_GUARD(next_line(&r, &line, &line_len));
        SWORN_GUARD(parse_key_line(line, line_len, r.line_no, &out->keys[out->key_count]));
        out->key_count++;
    }
    SWORN_GUARD(validate(out, 1));
    return 0;
fail:
    return -1;
}

/* --- Formatting. ----------------------------------------------------------------------------- */

struct writer {
    char *out;
    size_t cap, off;
};

static int put(struct writer *w, const char *s, size_t n)
{
    if (n >= w->cap - w->off)
        return sworn_err_set(SWORN_ERR_RANGE, "keyring: text does not fit in %zu bytes", w->cap);
    memcpy(w->out + w->off, s, n);
    w->off += n;
    return 0;
}

static int puts_(struct writer *w, const char *s)
{
    return put(w, s, strlen(s));
}

static int put_time(struct writer *w, int64_t t)
{
    char s[SWORN_KEYRING_TIME_LEN + 1];

    if (t == SWORN_KEYRING_NO_TIME)
        return puts_(w, "-");
    if (sworn_keyring_time_format(t, s) < 0)
        return -1;
    return puts_(w, s);
}

long sworn_keyring_format(const struct sworn_keyring *kr, char *out, size_t cap)
{
    struct writer w = {out, cap, 0};
    char num[32], hex[SWORN_KEY_ID_HEX_LEN + 1], vkey[SWORN_NOTE_VKEY_MAX + 1];
    char b64[SPKI_B64_MAX + 1];

    SWORN_ENSURE(kr != NULL && out != NULL && cap > 0, SWORN_ERR_ARG, "keyring: NULL argument");
    SWORN_GUARD(validate(kr, 0));
    SWORN_GUARD(puts_(&w, MAGIC "\nversion "));
    snprintf(num, sizeof(num), "%" PRIu64 "\nthreshold %zu\n", kr->version, kr->threshold);
    SWORN_GUARD(puts_(&w, num));
    for (size_t i = 0; i < kr->root_count; i++) {
        long n = sworn_note_verifier_format(&kr->roots[i], vkey, sizeof(vkey));

        SWORN_GUARD(n);
        SWORN_GUARD(puts_(&w, "root "));
        SWORN_GUARD(put(&w, vkey, (size_t)n));
        SWORN_GUARD(puts_(&w, "\n"));
    }
    for (size_t i = 0; i < kr->key_count; i++) {
        const struct sworn_keyring_key *k = &kr->keys[i];
        long n;

        SWORN_GUARD(sworn_hex_encode(k->key_id, SWORN_KEY_ID_LEN, hex, sizeof(hex)));
        SWORN_GUARD(puts_(&w, "key "));
        SWORN_GUARD(puts_(&w, hex));
        SWORN_GUARD(puts_(&w, " "));
        SWORN_GUARD(puts_(&w, sworn_keyring_purpose_name(k->purpose)));
        SWORN_GUARD(puts_(&w, " "));
        SWORN_GUARD(puts_(&w, sworn_keyring_status_name(k->status)));
        SWORN_GUARD(puts_(&w, " "));
        SWORN_GUARD(put_time(&w, k->valid_from));
        SWORN_GUARD(puts_(&w, " "));
        SWORN_GUARD(put_time(&w, k->valid_until));
        SWORN_GUARD(puts_(&w, " "));
        n = sworn_base64_encode(k->spki, k->spki_len, b64, sizeof(b64));
        SWORN_GUARD(n);
        SWORN_GUARD(put(&w, b64, (size_t)n));
        SWORN_GUARD(puts_(&w, "\n"));
    }
    SWORN_ENSURE(w.off <= SWORN_KEYRING_TEXT_MAX, SWORN_ERR_RANGE,
                 "keyring: text of %zu bytes, more than %d", w.off, SWORN_KEYRING_TEXT_MAX);
    out[w.off] = '\0';
    return (long)w.off;
fail:
    if (out != NULL && cap > 0)
        out[0] = '\0';
    return -1;
}

/* --- Files and signatures. ------------------------------------------------------------------- */

int sworn_keyring_load(const char *data, size_t len, struct sworn_keyring *kr,
                       struct sworn_note *note, int *is_signed)
{
    struct sworn_note local;
    struct sworn_note *n = note != NULL ? note : &local;
    int has_blank = 0;

    SWORN_ENSURE(data != NULL && kr != NULL, SWORN_ERR_ARG, "keyring: NULL argument");
    for (size_t i = 1; i < len && !has_blank; i++)
        has_blank = data[i] == '\n' && data[i - 1] == '\n';
    if (has_blank) {
        SWORN_GUARD(sworn_note_parse(data, len, n));
        SWORN_GUARD(sworn_keyring_parse(n->text, n->text_len, kr));
    } else {
        SWORN_GUARD(sworn_keyring_parse(data, len, kr));
    }
    if (is_signed != NULL)
        *is_signed = has_blank;
    return 0;
fail:
    return -1;
}

int sworn_keyring_count_signers(const struct sworn_keyring *kr, const struct sworn_note *note,
                                size_t *count)
{
    uint8_t by[SWORN_KEYRING_MAX_ROOTS];
    int any = 0;

    SWORN_ENSURE(kr != NULL && note != NULL && count != NULL &&
                     kr->root_count <= SWORN_KEYRING_MAX_ROOTS,
                 SWORN_ERR_ARG, "keyring: NULL argument");
    *count = 0;
    /*
     * sworn_note_verify fails when no known key signed at all; here that is simply zero root
     * signatures, so look for a line that names a root first.
     */
    for (size_t i = 0; i < note->sig_count && !any; i++)
        for (size_t k = 0; k < kr->root_count && !any; k++)
            any = note->sigs[i].key_id == kr->roots[k].key_id &&
                  note->sigs[i].name_len == strlen(kr->roots[k].name) &&
                  memcmp(note->sigs[i].name, kr->roots[k].name, note->sigs[i].name_len) == 0;
    if (!any)
        return 0;
    SWORN_GUARD(sworn_note_verify(note, kr->roots, kr->root_count, NULL, by, NULL));
    /* Roots are distinct by (name, key id), so each verified root is one holder. */
    for (size_t k = 0; k < kr->root_count; k++)
        *count += by[k];
    return 0;
fail:
    if (count != NULL)
        *count = 0;
    return -1;
}

/* At least kr->threshold roots of kr signed note; `what` names the rule in errors. */
static int threshold_met(const struct sworn_keyring *kr, const struct sworn_note *note,
                         uint64_t version, const char *what)
{
    size_t count = 0;

    if (sworn_keyring_count_signers(kr, note, &count) < 0) {
        char why[SWORN_ERR_MSG_MAX];

        snprintf(why, sizeof(why), "%s", sworn_err_msg());
        return sworn_err_set(SWORN_ERR_VERIFY, "keyring version %" PRIu64 ": %s", version, why);
    }
    if (count < kr->threshold)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "keyring version %" PRIu64
                             ": %zu valid signature(s) by %s, %zu needed",
                             version, count, what, kr->threshold);
    return 0;
}

int sworn_keyring_verify_root(const struct sworn_keyring *kr, const struct sworn_note *note,
                              int require_v1)
{
    SWORN_ENSURE(kr != NULL && note != NULL, SWORN_ERR_ARG, "keyring: NULL argument");
    SWORN_ENSURE(!require_v1 || kr->version == 1, SWORN_ERR_VERIFY,
                 "keyring: the first version of a chain is %" PRIu64 ", not 1", kr->version);
    return threshold_met(kr, note, kr->version, "its own roots");
fail:
    return -1;
}

int sworn_keyring_check_transition(const struct sworn_keyring *prev,
                                   const struct sworn_keyring *next)
{
    char hex[SWORN_KEY_ID_HEX_LEN + 1];

    SWORN_ENSURE(prev != NULL && next != NULL, SWORN_ERR_ARG, "keyring: NULL argument");
    SWORN_ENSURE(prev->version < UINT64_MAX - 1 && next->version == prev->version + 1,
                 SWORN_ERR_VERIFY, "keyring: version %" PRIu64 " cannot follow version %" PRIu64,
                 next->version, prev->version);
    for (size_t i = 0; i < prev->key_count; i++) {
        const struct sworn_keyring_key *a = &prev->keys[i];
        const struct sworn_keyring_key *b = sworn_keyring_find(next, a->key_id);

        sworn_hex_encode(a->key_id, SWORN_KEY_ID_LEN, hex, sizeof(hex));
        SWORN_ENSURE(b != NULL, SWORN_ERR_VERIFY,
                     "keyring version %" PRIu64 " drops key %s (old public keys are never dropped)",
                     next->version, hex);
        SWORN_ENSURE(b->spki_len == a->spki_len && memcmp(b->spki, a->spki, a->spki_len) == 0 &&
                         b->purpose == a->purpose && b->valid_from == a->valid_from,
                     SWORN_ERR_VERIFY,
                     "keyring version %" PRIu64
                     " changes the SPKI, purpose or valid-from of key %s",
                     next->version, hex);
        switch (a->status) {
        case SWORN_KEY_ACTIVE:
            break;
        case SWORN_KEY_RETIRED:
            SWORN_ENSURE(b->status != SWORN_KEY_ACTIVE, SWORN_ERR_VERIFY,
                         "keyring version %" PRIu64 " makes retired key %s active again",
                         next->version, hex);
            SWORN_ENSURE(b->status == SWORN_KEY_REVOKED ? b->valid_until <= a->valid_until
                                                        : b->valid_until == a->valid_until,
                         SWORN_ERR_VERIFY,
                         "keyring version %" PRIu64 " moves the valid-until of retired key %s",
                         next->version, hex);
            break;
        case SWORN_KEY_REVOKED:
            SWORN_ENSURE(b->status == SWORN_KEY_REVOKED, SWORN_ERR_VERIFY,
                         "keyring version %" PRIu64 " takes back the revocation of key %s",
                         next->version, hex);
            SWORN_ENSURE(b->valid_until <= a->valid_until, SWORN_ERR_VERIFY,
                         "keyring version %" PRIu64 " moves the revocation of key %s later",
                         next->version, hex);
            break;
        default:
            SWORN_ENSURE(0, SWORN_ERR_ARG, "keyring: key %s has an invalid status", hex);
        }
    }
    return 0;
fail:
    return -1;
}

int sworn_keyring_verify_transition(const struct sworn_keyring *prev,
                                    const struct sworn_keyring *next,
                                    const struct sworn_note *next_note)
{
    SWORN_ENSURE(prev != NULL && next != NULL && next_note != NULL, SWORN_ERR_ARG,
                 "keyring: NULL argument");
    SWORN_GUARD(sworn_keyring_check_transition(prev, next));
    /* TUF's rule: the old roots let the new version in, and the new roots accept it. */
    SWORN_GUARD(threshold_met(prev, next_note, next->version, "the roots of the previous version"));
    SWORN_GUARD(threshold_met(next, next_note, next->version, "its own roots"));
    return 0;
fail:
    return -1;
}

int sworn_keyring_verify_chain(const char *const *files, const size_t *lens, size_t n,
                               struct sworn_keyring *last)
{
    struct sworn_keyring *work = NULL, *prev = last, *cur;
    struct sworn_note note;
    int is_signed = 0, rc = -1;

    SWORN_ENSURE(files != NULL && lens != NULL && last != NULL && n >= 1, SWORN_ERR_ARG,
                 "keyring: an empty chain");
    SWORN_ENSURE((work = sworn_keyring_new()) != NULL, SWORN_ERR_NOMEM,
                 "keyring: no memory for a keyring");
    cur = work;
    for (size_t i = 0; i < n; i++) {
        struct sworn_keyring *into = i == 0 ? prev : cur;
        int loaded = sworn_keyring_load(files[i], lens[i], into, &note, &is_signed) == 0;

        if (!loaded || !is_signed) {
            char why[SWORN_ERR_MSG_MAX];

            snprintf(why, sizeof(why), "%s", loaded ? "it is not signed" : sworn_err_msg());
            sworn_err_set(loaded ? SWORN_ERR_VERIFY : sworn_err_code(),
                          "keyring file %zu of the chain: %s", i + 1, why);
            goto fail;
        }
        if (i == 0) {
            SWORN_GUARD(sworn_keyring_verify_root(prev, &note, 1));
            continue;
        }
        SWORN_GUARD(sworn_keyring_verify_transition(prev, cur, &note));
        /* The verified version becomes the base for the next one. */
        into = prev;
        prev = cur;
        cur = into;
    }
    if (prev != last)
        memcpy(last, prev, sizeof(*last));
    rc = 0;
fail:
    sworn_keyring_free(work);
    return rc;
}

/* --- Lookups and changes. -------------------------------------------------------------------- */

/* Index of the first key whose id is >= key_id. */
static size_t lower_bound(const struct sworn_keyring *kr, const uint8_t *key_id)
{
    size_t lo = 0, hi = kr->key_count;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (memcmp(kr->keys[mid].key_id, key_id, SWORN_KEY_ID_LEN) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct sworn_keyring_key *sworn_keyring_find(const struct sworn_keyring *kr,
                                                   const uint8_t key_id[SWORN_KEY_ID_LEN])
{
    size_t i;

    if (kr == NULL || key_id == NULL || kr->key_count > SWORN_KEYRING_MAX_KEYS)
        return NULL;
    i = lower_bound(kr, key_id);
    if (i < kr->key_count && memcmp(kr->keys[i].key_id, key_id, SWORN_KEY_ID_LEN) == 0)
        return &kr->keys[i];
    return NULL;
}

int sworn_keyring_key_valid_at(const struct sworn_keyring *kr,
                               const uint8_t key_id[SWORN_KEY_ID_LEN],
                               enum sworn_sign_purpose purpose, int64_t t)
{
    const struct sworn_keyring_key *k = sworn_keyring_find(kr, key_id);
    char when[SWORN_KEYRING_TIME_LEN + 1] = "?";

    if (k == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "keyring: the key is not in the keyring");
    if (k->purpose != purpose)
        return sworn_err_set(
            SWORN_ERR_VERIFY, "keyring: the key is a %s key, not a %s key",
            sworn_keyring_purpose_name(k->purpose),
            sworn_keyring_purpose_name(purpose) ? sworn_keyring_purpose_name(purpose) : "?");
    if (t < k->valid_from)
        return sworn_err_set(SWORN_ERR_VERIFY, "keyring: the key is not valid before its "
                                               "valid-from");
    if (k->status == SWORN_KEY_ACTIVE || t < k->valid_until)
        return 0;
    (void)sworn_keyring_time_format(k->valid_until, when);
    return sworn_err_set(SWORN_ERR_VERIFY, "keyring: the key was %s at %s",
                         sworn_keyring_status_name(k->status), when);
}

int sworn_keyring_add_key(struct sworn_keyring *kr, const uint8_t *spki, size_t spki_len,
                          enum sworn_sign_purpose purpose, int64_t valid_from)
{
    struct sworn_keyring_key *k;
    uint8_t id[SWORN_KEY_ID_LEN];
    size_t at;

    SWORN_ENSURE(kr != NULL && kr->key_count <= SWORN_KEYRING_MAX_KEYS, SWORN_ERR_ARG,
                 "keyring: NULL or invalid keyring");
    SWORN_ENSURE(kr->key_count < SWORN_KEYRING_MAX_KEYS, SWORN_ERR_RANGE,
                 "keyring: the keyring holds %d keys already", SWORN_KEYRING_MAX_KEYS);
    SWORN_ENSURE(sworn_keyring_purpose_name(purpose) != NULL, SWORN_ERR_ARG,
                 "keyring: not a purpose");
    SWORN_ENSURE(valid_from >= SWORN_KEYRING_TIME_MIN && valid_from <= SWORN_KEYRING_TIME_MAX,
                 SWORN_ERR_ARG, "keyring: valid-from out of range");
    SWORN_GUARD(sworn_keyring_spki_check(spki, spki_len));
    SHA256(spki, spki_len, id);
    SWORN_ENSURE(sworn_keyring_find(kr, id) == NULL, SWORN_ERR_ARG,
                 "keyring: the key is in the keyring already (keys are never added twice)");
    at = lower_bound(kr, id);
    memmove(&kr->keys[at + 1], &kr->keys[at], (kr->key_count - at) * sizeof(kr->keys[0]));
    k = &kr->keys[at];
    memset(k, 0, sizeof(*k));
    memcpy(k->key_id, id, sizeof(id));
    k->purpose = purpose;
    k->status = SWORN_KEY_ACTIVE;
    k->valid_from = valid_from;
    k->valid_until = SWORN_KEYRING_NO_TIME;
    memcpy(k->spki, spki, spki_len);
    k->spki_len = spki_len;
    kr->key_count++;
    return 0;
fail:
    return -1;
}

int sworn_keyring_set_status(struct sworn_keyring *kr, const uint8_t key_id[SWORN_KEY_ID_LEN],
                             enum sworn_key_status status, int64_t until)
{
    struct sworn_keyring_key *k = (struct sworn_keyring_key *)sworn_keyring_find(kr, key_id);

    SWORN_ENSURE(k != NULL, SWORN_ERR_NOTFOUND, "keyring: the key is not in the keyring");
    SWORN_ENSURE(status == SWORN_KEY_RETIRED || status == SWORN_KEY_REVOKED, SWORN_ERR_ARG,
                 "keyring: a key can only be retired or revoked");
    SWORN_ENSURE(until >= k->valid_from && until <= SWORN_KEYRING_TIME_MAX, SWORN_ERR_ARG,
                 "keyring: the end of validity is before the key's valid-from");
    SWORN_ENSURE(k->status != SWORN_KEY_REVOKED || status == SWORN_KEY_REVOKED, SWORN_ERR_ARG,
                 "keyring: the key is revoked already; revocation is final");
    SWORN_ENSURE(!(k->status == SWORN_KEY_RETIRED && status == SWORN_KEY_RETIRED), SWORN_ERR_ARG,
                 "keyring: the key is retired already");
    SWORN_ENSURE(k->status == SWORN_KEY_ACTIVE || until <= k->valid_until, SWORN_ERR_ARG,
                 "keyring: the end of validity of a key never moves later");
    k->status = status;
    k->valid_until = until;
    return 0;
fail:
    return -1;
}
