/*
 * sv_keyring.c -- see sv_keyring.h and docs/keys.md.
 */
#include "sv_keyring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "sv_note.h"

#define KEYS_MAX 1024
#define ROOTS_MAX 64
#define KEYRING_TEXT_MAX 983040u

enum kstatus { K_ACTIVE, K_RETIRED, K_REVOKED };

#define KPURPOSE_MAX 15 /* "checkpoint", "receipt", ...: the longest purpose name */
#define KSPKI_MAX 1024  /* a DER SPKI (RSA-4096 is about 550 bytes) */

struct kkey {
    uint8_t id[SV_HASH];
    char purpose[KPURPOSE_MAX + 1];
    enum kstatus status;
    uint64_t from, until; /* until: UINT64_MAX for an active key */
    uint8_t spki[KSPKI_MAX];
    size_t spki_len;
    EVP_PKEY *pkey;
    int ed;
};

struct version {
    uint64_t number;
    unsigned threshold;
    struct sv_vkey roots[ROOTS_MAX];
    size_t nroots;
    struct kkey *keys;
    size_t nkeys;
};

struct sv_keyring_state {
    struct version v; /* the newest verified version */
};

static void version_free(struct version *v)
{
    for (size_t i = 0; i < v->nroots; i++)
        sv_vkey_free(&v->roots[i]);
    for (size_t i = 0; i < v->nkeys; i++)
        EVP_PKEY_free(v->keys[i].pkey);
    free(v->keys);
    memset(v, 0, sizeof(*v));
}

int sv_parse_time(const char *s, size_t len, uint64_t *out)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, se;
    int64_t days;

    if (len != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
        s[19] != 'Z')
        return -1;
    for (size_t i = 0; i < 19; i++)
        if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && (s[i] < '0' || s[i] > '9'))
            return -1;
#define D2(p) ((s[p] - '0') * 10 + (s[(p) + 1] - '0'))
    y = D2(0) * 100 + D2(2);
    mo = D2(5);
    d = D2(8);
    h = D2(11);
    mi = D2(14);
    se = D2(17);
#undef D2
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59)
        return -1;
    {
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        int md = mdays[mo - 1] + (mo == 2 && leap);

        if (d > md)
            return -1;
    }
    /* Days from the civil date (H. Hinnant's algorithm). */
    {
        int yy = y - (mo <= 2);
        int64_t era = yy / 400;
        int64_t yoe = yy - era * 400;
        int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

        days = era * 146097 + doe - 719468;
    }
    *out = (uint64_t)days * 86400 + (uint64_t)h * 3600 + (uint64_t)mi * 60 + (uint64_t)se;
    return 0;
}

/* A key's public key from its SPKI in the one accepted spelling. */
static int load_spki(struct kkey *k, char *why)
{
    const unsigned char *p = k->spki;
    unsigned char *re = NULL;
    int n;

    k->pkey = d2i_PUBKEY(NULL, &p, (long)k->spki_len);
    if (k->pkey == NULL || p != k->spki + k->spki_len)
        return sv_fail(why, "key SPKI is not DER");
    n = i2d_PUBKEY(k->pkey, &re);
    if (n != (int)k->spki_len || memcmp(re, k->spki, k->spki_len) != 0) {
        OPENSSL_free(re);
        return sv_fail(why, "key SPKI is not in its canonical spelling");
    }
    OPENSSL_free(re);
    k->ed = EVP_PKEY_get_base_id(k->pkey) == EVP_PKEY_ED25519;
    return 0;
}

/* Fields of one line split at single spaces (in place). */
static int fields(char *line, char **f, int max)
{
    int n = 0;

    f[n++] = line;
    for (char *p = line; *p; p++)
        if (*p == ' ') {
            if (n == max)
                return -1;
            *p = '\0';
            f[n++] = p + 1;
        }
    for (int i = 0; i < n; i++)
        if (f[i][0] == '\0')
            return -1;
    return n;
}

static int parse_text(const char *text, size_t len, struct version *v, char *why)
{
    char *buf, *line, *save = NULL;
    int lineno = 0, state = 0; /* 0 header, 1 version, 2 threshold, 3 roots, 4 keys */
    int rc = -1;               /* -2: a root key listed twice */
    uint8_t prev_id[SV_HASH];
    int have_prev = 0;
    char w[SV_WHY];

    memset(v, 0, sizeof(*v));
    if (len == 0 || len > KEYRING_TEXT_MAX || text[len - 1] != '\n' ||
        memchr(text, '\0', len) != NULL)
        return sv_fail(why, "keyring text empty, too long or not ending in a newline");
    for (size_t i = 0; i + 1 < len; i++)
        if (text[i] == '\n' && text[i + 1] == '\n')
            return sv_fail(why, "keyring text has an empty line");
    buf = malloc(len + 1);
    if (buf == NULL)
        return sv_fail(why, "out of memory");
    memcpy(buf, text, len);
    buf[len] = '\0';
    v->keys = calloc(KEYS_MAX, sizeof(*v->keys));
    if (v->keys == NULL) {
        free(buf);
        return sv_fail(why, "out of memory");
    }
    for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[8];
        int nf;

        lineno++;
        nf = fields(line, f, 8);
        if (nf < 0) {
            sv_fail(why, "keyring line %d: fields must be separated by one space", lineno);
            goto bad;
        }
        if (state == 0) {
            if (nf != 3 || strcmp(f[0], "sworn") || strcmp(f[1], "keyring") || strcmp(f[2], "v1")) {
                sv_fail(why, "keyring line 1 is not 'sworn keyring v1'");
                goto bad;
            }
            state = 1;
        } else if (state == 1) {
            if (nf != 2 || strcmp(f[0], "version") ||
                sv_parse_u64(f[1], strlen(f[1]), &v->number) != 0 || v->number == 0 ||
                v->number == UINT64_MAX) {
                sv_fail(why, "keyring line 2: bad version");
                goto bad;
            }
            state = 2;
        } else if (state == 2) {
            uint64_t t;

            if (nf != 2 || strcmp(f[0], "threshold") || sv_parse_u64(f[1], strlen(f[1]), &t) ||
                t == 0 || t > ROOTS_MAX) {
                sv_fail(why, "keyring line 3: bad threshold");
                goto bad;
            }
            v->threshold = (unsigned)t;
            state = 3;
        } else if (state == 3 && strcmp(f[0], "root") == 0) {
            if (nf != 2 || v->nroots == ROOTS_MAX) {
                sv_fail(why, "keyring line %d: bad root line", lineno);
                goto bad;
            }
            if (sv_vkey_parse(f[1], strlen(f[1]), &v->roots[v->nroots], w) != 0) {
                sv_fail(why, "keyring line %d: %s", lineno, w);
                goto bad;
            }
            if (v->roots[v->nroots].type == 0x04) {
                sv_vkey_free(&v->roots[v->nroots]);
                sv_fail(why, "keyring line %d: a cosignature key cannot be a root", lineno);
                goto bad;
            }
            /* One holder must never count twice: not by name and id, not by key (the key
             * under two names signs twice and would meet a threshold of two alone). The
             * recording side's keyring/keyring.c refuses the same, in the same words. */
            for (size_t i = 0; i < v->nroots; i++) {
                const struct sv_vkey *o = &v->roots[i], *r = &v->roots[v->nroots];

                if ((o->id == r->id && strcmp(o->name, r->name) == 0) ||
                    memcmp(o->spki_hash, r->spki_hash, SV_HASH) == 0) {
                    sv_vkey_free(&v->roots[v->nroots]);
                    sv_fail(why, "keyring line %d: roots %zu and %zu are the same key", lineno,
                            i + 1, v->nroots + 1);
                    rc = -2;
                    goto bad;
                }
            }
            v->nroots++;
        } else if ((state == 3 || state == 4) && strcmp(f[0], "key") == 0 && v->nroots > 0) {
            struct kkey *k = &v->keys[v->nkeys];
            uint8_t h[SV_HASH];
            long n;

            state = 4;
            if (nf != 7 || v->nkeys == KEYS_MAX) {
                sv_fail(why, "keyring line %d: bad key line", lineno);
                goto bad;
            }
            if (sv_unhex(f[1], strlen(f[1]), k->id, SV_HASH) != 0 ||
                (have_prev && memcmp(prev_id, k->id, SV_HASH) >= 0)) {
                sv_fail(why, "keyring line %d: bad key id or keys not in ascending order", lineno);
                goto bad;
            }
            if (strcmp(f[2], "checkpoint") && strcmp(f[2], "receipt") &&
                strcmp(f[2], "key-event")) {
                sv_fail(why, "keyring line %d: unknown purpose", lineno);
                goto bad;
            }
            snprintf(k->purpose, sizeof(k->purpose), "%s", f[2]);
            if (strcmp(f[3], "active") == 0)
                k->status = K_ACTIVE;
            else if (strcmp(f[3], "retired") == 0)
                k->status = K_RETIRED;
            else if (strcmp(f[3], "revoked") == 0)
                k->status = K_REVOKED;
            else {
                sv_fail(why, "keyring line %d: unknown status", lineno);
                goto bad;
            }
            if (sv_parse_time(f[4], strlen(f[4]), &k->from) != 0) {
                sv_fail(why, "keyring line %d: bad valid-from", lineno);
                goto bad;
            }
            if (k->status == K_ACTIVE) {
                if (strcmp(f[5], "-") != 0) {
                    sv_fail(why, "keyring line %d: an active key has valid-until '-'", lineno);
                    goto bad;
                }
                k->until = UINT64_MAX;
            } else if (sv_parse_time(f[5], strlen(f[5]), &k->until) != 0 || k->until < k->from) {
                sv_fail(why, "keyring line %d: bad valid-until", lineno);
                goto bad;
            }
            n = sv_b64_decode(f[6], strlen(f[6]), k->spki, sizeof(k->spki));
            if (n <= 0) {
                sv_fail(why, "keyring line %d: bad SPKI", lineno);
                goto bad;
            }
            k->spki_len = (size_t)n;
            sv_sha256(k->spki, k->spki_len, h);
            if (memcmp(h, k->id, SV_HASH) != 0) {
                sv_fail(why, "keyring line %d: key id is not SHA-256 of the SPKI", lineno);
                goto bad;
            }
            if (load_spki(k, w) != 0) {
                sv_fail(why, "keyring line %d: %s", lineno, w);
                goto bad;
            }
            memcpy(prev_id, k->id, SV_HASH);
            have_prev = 1;
            v->nkeys++;
        } else {
            sv_fail(why, "keyring line %d: unexpected line", lineno);
            goto bad;
        }
    }
    free(buf);
    if (state < 3 || v->nroots == 0 || v->threshold > v->nroots) {
        version_free(v);
        return sv_fail(why, "keyring: no roots, or a threshold above their number");
    }
    return 0;
bad:
    free(buf);
    version_free(v);
    return rc;
}

int sv_keyring_parse_text(const char *text, size_t len, char *why)
{
    struct version v;

    int rc = parse_text(text, len, &v, why);

    if (rc != 0)
        return rc;
    version_free(&v);
    return 0;
}

/* Distinct keys of set that signed n (each counted once). */
static unsigned count_signers(const struct sv_note *n, const struct sv_vkey *set, size_t nset,
                              char *why, int *bad)
{
    struct sv_note_result res;
    unsigned c = 0;

    *bad = 0;
    if (sv_note_verify(n, set, nset, &res, why) != 0) {
        *bad = 1;
        return 0;
    }
    /* Count keys, not lines: a key that appears twice in set counts once (the parsers refuse
     * such sets; this keeps the count right whatever set it is given). */
    for (size_t i = 0; i < nset; i++) {
        int again = 0;

        if (res.verified[i] == 0)
            continue;
        for (size_t j = 0; j < i; j++)
            if (res.verified[j] > 0 && memcmp(set[j].spki_hash, set[i].spki_hash, SV_HASH) == 0)
                again = 1;
        c += !again;
    }
    return c;
}

static const struct kkey *find_key(const struct version *v, const uint8_t id[SV_HASH])
{
    for (size_t i = 0; i < v->nkeys; i++)
        if (memcmp(v->keys[i].id, id, SV_HASH) == 0)
            return &v->keys[i];
    return NULL;
}

/* docs/keys.md section 3, content rules from old to new. */
static int transition_ok(const struct version *old, const struct version *nw, char *why)
{
    char hex[65];

    for (size_t i = 0; i < old->nkeys; i++) {
        const struct kkey *a = &old->keys[i], *b = find_key(nw, a->id);

        sv_hex(a->id, SV_HASH, hex);
        if (b == NULL)
            return sv_fail(why, "version %llu drops key %s", (unsigned long long)nw->number, hex);
        if (strcmp(a->purpose, b->purpose) || a->from != b->from || a->spki_len != b->spki_len ||
            memcmp(a->spki, b->spki, a->spki_len))
            return sv_fail(why, "version %llu changes the SPKI, purpose or valid-from of key %s",
                           (unsigned long long)nw->number, hex);
        if (b->status < a->status)
            return sv_fail(why, "version %llu moves key %s's status backwards",
                           (unsigned long long)nw->number, hex);
        if (a->status != K_ACTIVE) {
            if (b->until > a->until)
                return sv_fail(why, "version %llu moves key %s's valid-until later",
                               (unsigned long long)nw->number, hex);
            if (b->until < a->until && b->status != K_REVOKED)
                return sv_fail(why,
                               "version %llu moves key %s's valid-until earlier without "
                               "a revocation",
                               (unsigned long long)nw->number, hex);
        }
    }
    return 0;
}

int sv_keyring_load(const struct sv_policy *p, struct sv_keyring_state **out, char *why)
{
    struct sv_keyring_state *k = calloc(1, sizeof(*k));
    struct version cur, next;
    int have = 0, rc = -1;
    char w[SV_WHY];

    *out = NULL;
    if (k == NULL)
        return sv_fail(why, "out of memory");
    memset(&cur, 0, sizeof(cur));
    for (size_t i = 0; i < p->nkeyring_files; i++) {
        uint8_t *data;
        size_t len;
        struct sv_note n;
        unsigned c;
        int bad;

        if (sv_read_file(p->keyring_files[i], SV_NOTE_MAX, &data, &len, NULL, w) != 0) {
            sv_fail(why, "keyring: %s", w);
            goto fail;
        }
        if (sv_note_parse((const char *)data, len, &n, w) != 0) {
            free(data);
            sv_fail(why, "keyring %s: %s (every version must be signed)", p->keyring_files[i], w);
            goto fail;
        }
        rc = parse_text(n.text, n.text_len, &next, w);
        if (rc != 0) {
            free(data);
            sv_fail(why, "keyring %s: %s", p->keyring_files[i], w);
            goto fail;
        }
        if (next.number != (uint64_t)i + 1) {
            sv_fail(why, "keyring %s: version %llu cannot follow version %zu", p->keyring_files[i],
                    (unsigned long long)next.number, i);
            goto fail_next;
        }
        c = count_signers(&n, next.roots, next.nroots, w, &bad);
        if (bad || c < next.threshold) {
            sv_fail(why,
                    "keyring version %llu: %u valid signature(s) by its own roots, %u "
                    "needed%s%s",
                    (unsigned long long)next.number, c, next.threshold, bad ? ": " : "",
                    bad ? w : "");
            goto fail_next;
        }
        if (!have) {
            c = count_signers(&n, p->roots, p->nroots, w, &bad);
            if (bad || c < p->root_threshold) {
                sv_fail(why,
                        "keyring version 1: %u valid signature(s) by the policy's roots, "
                        "%u needed",
                        c, p->root_threshold);
                goto fail_next;
            }
        } else {
            c = count_signers(&n, cur.roots, cur.nroots, w, &bad);
            if (bad || c < cur.threshold) {
                sv_fail(why,
                        "keyring version %llu: %u valid signature(s) by the roots of the "
                        "previous version, %u needed",
                        (unsigned long long)next.number, c, cur.threshold);
                goto fail_next;
            }
            if (transition_ok(&cur, &next, w) != 0) {
                sv_fail(why, "keyring: %s", w);
                goto fail_next;
            }
            version_free(&cur);
        }
        free(data);
        cur = next;
        have = 1;
        continue;
    fail_next:
        free(data);
        version_free(&next);
        goto fail;
    }
    k->v = cur;
    *out = k;
    return 0;
fail:
    version_free(&cur);
    free(k);
    return rc == -2 ? -2 : -1;
}

void sv_keyring_free(struct sv_keyring_state *k)
{
    if (k == NULL)
        return;
    version_free(&k->v);
    free(k);
}

int sv_keyring_has_purpose(const struct sv_keyring_state *k, const char *purpose)
{
    for (size_t i = 0; i < k->v.nkeys; i++)
        if (strcmp(k->v.keys[i].purpose, purpose) == 0)
            return 1;
    return 0;
}

int sv_keyring_knows(const struct sv_keyring_state *k, const uint8_t id[SV_HASH])
{
    return find_key(&k->v, id) != NULL;
}

static int valid_at(const struct kkey *key, uint64_t t)
{
    return key->from <= t && (key->status == K_ACTIVE || t < key->until);
}

/* The key id of the keyring, if it is there with this purpose; else NULL with why set. */
static const struct kkey *key_of_purpose(const struct sv_keyring_state *k,
                                         const uint8_t id[SV_HASH], const char *purpose, char *why)
{
    const struct kkey *key = find_key(&k->v, id);

    if (key == NULL) {
        sv_fail(why, "the key is not in the keyring");
        return NULL;
    }
    if (strcmp(key->purpose, purpose) != 0) {
        sv_fail(why, "the key is a %s key, not a %s key", key->purpose, purpose);
        return NULL;
    }
    return key;
}

EVP_PKEY *sv_keyring_key(const struct sv_keyring_state *k, const uint8_t id[SV_HASH],
                         const char *purpose, uint64_t t, int *ed, char *why)
{
    const struct kkey *key = key_of_purpose(k, id, purpose, why);

    if (key == NULL)
        return NULL;
    /* No time known: only a key valid now and from now on (an active one) can be shown to have
     * been valid when it signed. 0 is a time, checked like any other. */
    if (t == SV_TIME_UNKNOWN) {
        uint64_t now = (uint64_t)time(NULL);

        if (key->status != K_ACTIVE || !valid_at(key, now)) {
            sv_fail(why,
                    "no entry time says when it signed, and the key is not valid now (%s): only "
                    "an active key valid now is accepted then",
                    key->status == K_REVOKED   ? "revoked"
                    : key->status == K_RETIRED ? "retired"
                                               : "not yet valid");
            return NULL;
        }
    } else if (key->from > (uint64_t)time(NULL)) {
        /* Whatever time its entries claim (an entry stamped after the verifier's clock), what
         * it signed exists now, so it was signed no later than now: a key valid only later
         * signed nothing yet. */
        sv_fail(why, "the key is valid only from %llu, after now (not yet valid)",
                (unsigned long long)key->from);
        return NULL;
    } else if (!valid_at(key, t)) {
        sv_fail(why, "the key was not valid at %llu (%s)", (unsigned long long)t,
                key->status == K_REVOKED   ? "revoked"
                : key->status == K_RETIRED ? "retired"
                                           : "not yet valid");
        return NULL;
    }
    *ed = key->ed;
    return key->pkey;
}

EVP_PKEY *sv_keyring_key_from(const struct sv_keyring_state *k, const uint8_t id[SV_HASH],
                              const char *purpose, uint64_t t, int *ed, char *why)
{
    const struct kkey *key;

    if (t == SV_TIME_UNKNOWN)
        return sv_keyring_key(k, id, purpose, t, ed, why);
    key = key_of_purpose(k, id, purpose, why);
    if (key == NULL)
        return NULL;
    /* Signed no later than now, whatever its entries claim: a key valid only after now
     * signed nothing yet. */
    if (key->from > (uint64_t)time(NULL)) {
        sv_fail(why, "the key is valid only from %llu, after now (not yet valid)",
                (unsigned long long)key->from);
        return NULL;
    }
    /* Valid at some time >= t (and <= now): not ended (retired or revoked) at or before t. */
    if (key->status != K_ACTIVE && t >= key->until) {
        sv_fail(why, "the key was %s before %llu, the newest time it signed over",
                key->status == K_REVOKED ? "revoked" : "retired", (unsigned long long)t);
        return NULL;
    }
    *ed = key->ed;
    return key->pkey;
}

/* Verify sign(key-event, d): the signature over FF "sworn/v1 key-event" 00 || d. */
static int event_sig_ok(const struct kkey *key, const uint8_t d[SV_HASH], const uint8_t *sig,
                        size_t sig_len)
{
    uint8_t tbs[20 + SV_HASH];

    memcpy(tbs, "\xffsworn/v1 key-event", 19);
    tbs[19] = 0;
    memcpy(tbs + 20, d, SV_HASH);
    return sv_sig_verify(key->pkey, key->ed, tbs, sizeof(tbs), sig, sig_len);
}

int sv_keyring_event(struct sv_keyring_state *k, const uint8_t *st, size_t len, uint64_t index,
                     char *why)
{
    char buf[4097], *lines[10], *save = NULL, *l;
    int n = 0, ev;
    uint8_t old_id[SV_HASH], d[SV_HASH], sig[600], new_spki[1024];
    uint64_t eff;
    size_t stmt_len, new_spki_len = 0;
    const struct kkey *old;
    struct kkey nk;
    long sl;

    (void)index;
    if (len == 0 || len > 4096 || memchr(st, '\0', len) != NULL || st[len - 1] != '\n')
        return sv_fail(why, "key-event statement malformed");
    memcpy(buf, st, len);
    buf[len] = '\0';
    if (strstr(buf, "\n\n") != NULL)
        return sv_fail(why, "key-event statement has an empty line");
    for (l = strtok_r(buf, "\n", &save); l != NULL && n < 10; l = strtok_r(NULL, "\n", &save))
        lines[n++] = l;
    if (l != NULL || n < 7 || strcmp(lines[0], "sworn key-event v1") != 0)
        return sv_fail(why, "not a 'sworn key-event v1' statement");
    if (strcmp(lines[1], "event rotate") == 0)
        ev = 0;
    else if (strcmp(lines[1], "event retire") == 0)
        ev = 1;
    else if (strcmp(lines[1], "event revoke") == 0)
        ev = 2;
    else
        return sv_fail(why, "key-event: unknown event");
    if (strncmp(lines[2], "purpose ", 8) != 0 || strncmp(lines[3], "old ", 4) != 0 ||
        sv_unhex(lines[3] + 4, strlen(lines[3] + 4), old_id, SV_HASH) != 0 ||
        strncmp(lines[4], "new ", 4) != 0 || strncmp(lines[5], "new-spki ", 9) != 0 ||
        strncmp(lines[6], "effective-from ", 15) != 0 ||
        sv_parse_time(lines[6] + 15, strlen(lines[6] + 15), &eff) != 0)
        return sv_fail(why, "key-event: malformed statement lines");
    stmt_len = (size_t)(lines[6] - buf) + strlen(lines[6]) + 1;
    old = find_key(&k->v, old_id);
    if (old == NULL || strcmp(old->purpose, lines[2] + 8) != 0)
        return sv_fail(why, "key-event: the old key is not in the keyring with that purpose");
    if (ev == 0) {
        uint8_t nid[SV_HASH], h[SV_HASH];

        sl = sv_b64_decode(lines[5] + 9, strlen(lines[5] + 9), new_spki, sizeof(new_spki));
        if (sl <= 0 || sv_unhex(lines[4] + 4, strlen(lines[4] + 4), nid, SV_HASH) != 0)
            return sv_fail(why, "key-event: a rotation names its new key and SPKI");
        new_spki_len = (size_t)sl;
        sv_sha256(new_spki, new_spki_len, h);
        if (memcmp(h, nid, SV_HASH) != 0)
            return sv_fail(why, "key-event: new is not SHA-256 of new-spki");
    } else if (strcmp(lines[4], "new -") != 0 || strcmp(lines[5], "new-spki -") != 0) {
        return sv_fail(why, "key-event: only a rotation names a new key");
    }
    /* Signatures. */
    sv_sha256(st, stmt_len, d);
    if (n >= 8 && strncmp(lines[7], "old-signature ", 14) == 0) {
        sl = sv_b64_decode(lines[7] + 14, strlen(lines[7] + 14), sig, sizeof(sig));
        if (sl <= 0 || !event_sig_ok(old, d, sig, (size_t)sl))
            return sv_fail(why, "key-event: the old key's signature does not verify");
    } else if (ev != 2) {
        return sv_fail(why, "key-event: a rotation or retirement must be signed by the old key");
    }
    if (ev != 2 && !valid_at(old, eff - 1))
        return sv_fail(why, "key-event: the old key was not valid just before effective-from");
    if (ev == 0) {
        uint8_t *pm;
        static const char pop[] = "sworn proof-of-possession v1\n";

        if (n != 9 || strncmp(lines[8], "new-signature ", 14) != 0)
            return sv_fail(why, "key-event: a rotation carries the new key's signature");
        memset(&nk, 0, sizeof(nk));
        memcpy(nk.spki, new_spki, new_spki_len);
        nk.spki_len = new_spki_len;
        if (load_spki(&nk, why) != 0)
            return -1;
        pm = malloc(sizeof(pop) - 1 + stmt_len);
        if (pm == NULL) {
            EVP_PKEY_free(nk.pkey);
            return sv_fail(why, "out of memory");
        }
        memcpy(pm, pop, sizeof(pop) - 1);
        memcpy(pm + sizeof(pop) - 1, st, stmt_len);
        sv_sha256(pm, sizeof(pop) - 1 + stmt_len, d);
        free(pm);
        sl = sv_b64_decode(lines[8] + 14, strlen(lines[8] + 14), sig, sizeof(sig));
        if (sl <= 0 || !event_sig_ok(&nk, d, sig, (size_t)sl)) {
            EVP_PKEY_free(nk.pkey);
            return sv_fail(why, "key-event: the new key's proof of possession does not verify");
        }
        EVP_PKEY_free(nk.pkey);
    } else if (n != (ev == 2 && n == 7 ? 7 : 8)) {
        return sv_fail(why, "key-event: unexpected lines after the statement");
    }
    /* The keyring must record the event. */
    if (old->status == K_ACTIVE || old->until > eff || (ev == 2 && old->status != K_REVOKED))
        return sv_fail(why, "key-event: the keyring does not record this %s",
                       ev == 0   ? "rotation"
                       : ev == 1 ? "retirement"
                                 : "revocation");
    return 0;
}
