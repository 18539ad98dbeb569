/*
 * sv_note.c -- see sv_note.h.
 */
#include "sv_note.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

static const char em_dash_sp[] = "\xe2\x80\x94 ";

static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n > SV_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '+' || c <= 0x20 || c == 0x7F)
            return 0;
    }
    return sv_utf8_valid((const uint8_t *)s, n);
}

static uint32_t id_of(const uint8_t *h)
{
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

/* H(name || '\n' || type || key)[:4], the id of types 0x01 and 0x04. */
static uint32_t hashed_id(const char *name, uint8_t type, const uint8_t *key, size_t key_len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    uint8_t h[SV_HASH], nl = '\n';

    if (c == NULL)
        return 0;
    EVP_DigestInit_ex(c, EVP_sha256(), NULL);
    EVP_DigestUpdate(c, name, strlen(name));
    EVP_DigestUpdate(c, &nl, 1);
    EVP_DigestUpdate(c, &type, 1);
    EVP_DigestUpdate(c, key, key_len);
    EVP_DigestFinal_ex(c, h, NULL);
    EVP_MD_CTX_free(c);
    return id_of(h);
}

/* A P-256 SPKI in its one spelling: 91 bytes, named curve, uncompressed point on the curve. */
static EVP_PKEY *p256_from_spki(const uint8_t *spki, size_t len, char *why)
{
    const unsigned char *p = spki;
    EVP_PKEY *k;
    char curve[64];
    unsigned char *re = NULL;
    int relen;

    if (len != 91) {
        sv_fail(why, "ECDSA key: SPKI of %zu bytes, a P-256 SPKI has 91", len);
        return NULL;
    }
    k = d2i_PUBKEY(NULL, &p, (long)len);
    if (k == NULL || p != spki + len) {
        EVP_PKEY_free(k);
        sv_fail(why, "ECDSA key: not a DER SubjectPublicKeyInfo");
        return NULL;
    }
    if (EVP_PKEY_get_base_id(k) != EVP_PKEY_EC ||
        EVP_PKEY_get_utf8_string_param(k, "group", curve, sizeof(curve), NULL) != 1 ||
        strcmp(curve, "prime256v1") != 0) {
        EVP_PKEY_free(k);
        sv_fail(why, "ECDSA key: not a P-256 key");
        return NULL;
    }
    relen = i2d_PUBKEY(k, &re);
    if (relen != (int)len || memcmp(re, spki, len) != 0) {
        OPENSSL_free(re);
        EVP_PKEY_free(k);
        sv_fail(why, "ECDSA key: SPKI is not in its canonical spelling");
        return NULL;
    }
    OPENSSL_free(re);
    return k;
}

int sv_vkey_from_spki(const char *name, const uint8_t *spki, size_t spki_len, struct sv_vkey *out,
                      char *why)
{
    memset(out, 0, sizeof(*out));
    if (!name_ok(name, strlen(name)))
        return sv_fail(why, "bad key name");
    out->pkey = p256_from_spki(spki, spki_len, why);
    if (out->pkey == NULL)
        return -1;
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->type = 0x02;
    sv_sha256(spki, spki_len, out->spki_hash);
    out->id = id_of(out->spki_hash);
    snprintf(out->text, sizeof(out->text), "%s (P-256 key %08x)", name, out->id);
    return 0;
}

int sv_vkey_parse(const char *s, size_t len, struct sv_vkey *out, char *why)
{
    const char *p1, *p2;
    uint8_t raw[SV_VKEY_TEXT_MAX + 1], idb[4];
    long n;

    memset(out, 0, sizeof(*out));
    if (len >= sizeof(out->text))
        return sv_fail(why, "verifier key too long");
    p1 = memchr(s, '+', len);
    if (p1 == NULL)
        return sv_fail(why, "verifier key: expected <name>+<id>+<key>");
    p2 = memchr(p1 + 1, '+', len - (size_t)(p1 + 1 - s));
    if (p2 == NULL || p2 - p1 != 9)
        return sv_fail(why, "verifier key: expected <name>+<8 hex digits>+<key>");
    if (!name_ok(s, (size_t)(p1 - s)))
        return sv_fail(why, "verifier key: bad name");
    memcpy(out->name, s, (size_t)(p1 - s));
    if (sv_unhex(p1 + 1, 8, idb, 4) != 0)
        return sv_fail(why, "verifier key: key id is not 8 lower-case hex digits");
    out->id = id_of(idb);
    n = sv_b64_decode(p2 + 1, len - (size_t)(p2 + 1 - s), raw, sizeof(raw));
    if (n < 2)
        return sv_fail(why, "verifier key: key is not canonical base64");
    out->type = raw[0];
    if (out->type == 0x01 || out->type == 0x04) {
        if (n != 33)
            return sv_fail(why, "verifier key: an Ed25519 key has 32 bytes");
        if (hashed_id(out->name, out->type, raw + 1, 32) != out->id)
            return sv_fail(why, "verifier key: the key id does not match the key");
        out->pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw + 1, 32);
        if (out->pkey == NULL)
            return sv_fail(why, "verifier key: not an Ed25519 key");
        {
            /* The sworn key id of an Ed25519 key: SHA-256 of its 44-byte DER SPKI. */
            uint8_t spki[44] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

            memcpy(spki + 12, raw + 1, 32);
            sv_sha256(spki, sizeof(spki), out->spki_hash);
        }
    } else if (out->type == 0x02) {
        out->pkey = p256_from_spki(raw + 1, (size_t)n - 1, why);
        if (out->pkey == NULL)
            return -1;
        sv_sha256(raw + 1, (size_t)n - 1, out->spki_hash);
        if (id_of(out->spki_hash) != out->id) {
            sv_vkey_free(out);
            return sv_fail(why, "verifier key: the key id does not match the key");
        }
    } else {
        return sv_fail(why, "verifier key: unknown type 0x%02x", out->type);
    }
    memcpy(out->text, s, len);
    out->text[len] = '\0';
    return 0;
}

void sv_vkey_free(struct sv_vkey *k)
{
    if (k == NULL)
        return;
    EVP_PKEY_free(k->pkey);
    k->pkey = NULL;
}

int sv_note_parse(const char *note, size_t len, struct sv_note *out, char *why)
{
    size_t split = 0, pos;
    int found = 0;

    memset(out, 0, sizeof(*out));
    if (len > SV_NOTE_MAX)
        return sv_fail(why, "note larger than 1 MiB");
    if (len < 2 || note[len - 1] != '\n')
        return sv_fail(why, "note does not end in a newline");
    if (!sv_utf8_valid((const uint8_t *)note, len))
        return sv_fail(why, "note is not UTF-8");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)note[i];

        if ((c < 0x20 && c != '\n') || c == 0x7F)
            return sv_fail(why, "note holds a control byte at offset %zu", i);
    }
    for (size_t i = len - 1; i-- > 0;)
        if (note[i] == '\n' && note[i + 1] == '\n') {
            split = i;
            found = 1;
            break;
        }
    if (!found)
        return sv_fail(why, "note has no empty line before its signatures");
    if (split == 0)
        return sv_fail(why, "note text is empty");
    out->text = note;
    out->text_len = split + 1;
    pos = split + 2;
    if (pos >= len)
        return sv_fail(why, "note has no signature");
    while (pos < len) {
        const char *line = note + pos, *nl = memchr(line, '\n', len - pos), *sp;
        size_t ll = (size_t)(nl - line);
        struct sv_note_sig *sg;
        uint8_t raw[520];
        long n;

        if (out->nsigs == SV_NOTE_SIGS_MAX)
            return sv_fail(why, "note has more than %d signatures", SV_NOTE_SIGS_MAX);
        if (ll < 4 || memcmp(line, em_dash_sp, 4) != 0)
            return sv_fail(why, "signature line %zu does not start with an em dash",
                           out->nsigs + 1);
        sp = memchr(line + 4, ' ', ll - 4);
        if (sp == NULL)
            return sv_fail(why, "signature line %zu: no space after the name", out->nsigs + 1);
        sg = &out->sigs[out->nsigs];
        sg->name = line + 4;
        sg->name_len = (size_t)(sp - sg->name);
        if (!name_ok(sg->name, sg->name_len))
            return sv_fail(why, "signature line %zu: bad key name", out->nsigs + 1);
        n = sv_b64_decode(sp + 1, (size_t)(nl - sp - 1), raw, sizeof(raw));
        if (n < 5 || n > 516)
            return sv_fail(why, "signature line %zu: bad base64 signature", out->nsigs + 1);
        sg->id = id_of(raw);
        sg->sig_len = (size_t)n - 4;
        memcpy(sg->sig, raw + 4, sg->sig_len);
        out->nsigs++;
        pos += ll + 1;
    }
    return 0;
}

int sv_sig_verify(EVP_PKEY *pkey, int ed25519, const uint8_t *msg, size_t msg_len,
                  const uint8_t *sig, size_t sig_len)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok;

    if (c == NULL)
        return 0;
    ok = EVP_DigestVerifyInit(c, NULL, ed25519 ? NULL : EVP_sha256(), NULL, pkey) == 1 &&
         EVP_DigestVerify(c, sig, sig_len, msg, msg_len) == 1;
    EVP_MD_CTX_free(c);
    return ok;
}

static int verify_line(const struct sv_note *n, const struct sv_vkey *k,
                       const struct sv_note_sig *sg, uint64_t *t)
{
    if (k->type == 0x01)
        return sg->sig_len == 64 &&
               sv_sig_verify(k->pkey, 1, (const uint8_t *)n->text, n->text_len, sg->sig, 64);
    if (k->type == 0x02)
        return sv_sig_verify(k->pkey, 0, (const uint8_t *)n->text, n->text_len, sg->sig,
                             sg->sig_len);
    /* 0x04: 8-byte time, then Ed25519 over "cosignature/v1\ntime <t>\n" || text. */
    {
        char head[64];
        uint8_t *msg;
        uint64_t ts = 0;
        int hl, ok;

        if (sg->sig_len != 72)
            return 0;
        for (int i = 0; i < 8; i++)
            ts = ts << 8 | sg->sig[i];
        if (ts >> 63)
            return 0;
        hl = snprintf(head, sizeof(head), "cosignature/v1\ntime %llu\n", (unsigned long long)ts);
        msg = malloc((size_t)hl + n->text_len);
        if (msg == NULL)
            return 0;
        memcpy(msg, head, (size_t)hl);
        memcpy(msg + hl, n->text, n->text_len);
        ok = sv_sig_verify(k->pkey, 1, msg, (size_t)hl + n->text_len, sg->sig + 8, 64);
        free(msg);
        *t = ts;
        return ok;
    }
}

int sv_note_verify(const struct sv_note *n, const struct sv_vkey *keys, size_t nkeys,
                   struct sv_note_result *res, char *why)
{
    memset(res, 0, sizeof(*res));
    if (nkeys > SV_NOTE_KEYS_MAX)
        return sv_fail(why, "more than %d keys", SV_NOTE_KEYS_MAX);
    for (size_t i = 0; i < n->nsigs; i++) {
        const struct sv_note_sig *sg = &n->sigs[i];
        int matched = 0;

        for (size_t k = 0; k < nkeys; k++) {
            uint64_t t = 0;

            if (keys[k].id != sg->id || strlen(keys[k].name) != sg->name_len ||
                memcmp(keys[k].name, sg->name, sg->name_len) != 0)
                continue;
            matched = 1;
            res->matched[k]++;
            if (!verify_line(n, &keys[k], sg, &t))
                return sv_fail(why, "the signature by %s (key id %08x) does not verify",
                               keys[k].name, keys[k].id);
            res->verified[k]++;
            res->cosig_time[k] = t;
        }
        if (!matched)
            res->unknown++;
    }
    return 0;
}

int sv_checkpoint_parse(const char *text, size_t len, struct sv_checkpoint *out, char *why)
{
    const char *l1, *l2, *l3;
    size_t pos = 0;
    uint8_t root[40];

    memset(out, 0, sizeof(*out));
    l1 = memchr(text, '\n', len);
    if (l1 == NULL)
        return sv_fail(why, "checkpoint: no origin line");
    if (l1 == text || (size_t)(l1 - text) > SV_ORIGIN_MAX ||
        !sv_text_clean((const uint8_t *)text, (size_t)(l1 - text)))
        return sv_fail(why, "checkpoint: bad origin");
    memcpy(out->origin, text, (size_t)(l1 - text));
    pos = (size_t)(l1 - text) + 1;
    l2 = memchr(text + pos, '\n', len - pos);
    if (l2 == NULL || sv_parse_u64(text + pos, (size_t)(l2 - text) - pos, &out->size) != 0)
        return sv_fail(why, "checkpoint: bad tree size");
    pos = (size_t)(l2 - text) + 1;
    l3 = memchr(text + pos, '\n', len - pos);
    if (l3 == NULL || (size_t)(l3 - text) - pos != 44 ||
        sv_b64_decode(text + pos, 44, root, sizeof(root)) != SV_HASH)
        return sv_fail(why, "checkpoint: bad root hash");
    memcpy(out->root, root, SV_HASH);
    pos = (size_t)(l3 - text) + 1;
    /* Extension lines: each non-empty. */
    while (pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);

        if (nl == NULL || nl == text + pos)
            return sv_fail(why, "checkpoint: bad extension line");
        pos = (size_t)(nl - text) + 1;
    }
    return 0;
}
