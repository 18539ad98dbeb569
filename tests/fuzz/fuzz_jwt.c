/*
 * fuzz_jwt.c -- libFuzzer target for proxy/p_jwt.c (the delegation token) and proxy/p_token.c
 * (the symbolic token scan). Every input is given to both.
 *
 * sworn_jwt_read, on the whole input as a token and on an unsigned token whose payload is the
 * input (so that the JSON reader is fuzzed without base64url in the way), without a key and with a
 * fixed Ed25519 key (whose signature no input is expected to make; the alg and signature paths
 * run). Asserted:
 *   - it answers 0 or 1 (-1 only for out of memory); on 1 a reason is given, the delegation is
 *     zero but the hash; on 0 no reason;
 *   - the hash is the SHA-256 of the input, in both answers;
 *   - an accepted delegation is what the wire accepts: sub 1..256 bytes, issuers at most 256,
 *     each UTF-8 without unsafe characters, at most 32 actors, may_act evaluated, not verified
 *     without a key; sworn_jwt_to_pb inside an AuthorizationRequest passes
 *     sworn_frame_check_request, packs, and decodes again (decisiond's decoder) to the same
 *     strings;
 *   - reading is deterministic, and what a key accepts, no key accepts with the same chain.
 * sworn_symtok_scan, on the input split at '\n' (every line but the last is a header value, at
 * most 64; the last is the raw query). Asserted: it answers 0 or 1 (1 exactly when there are
 * more than 8 occurrences); at most 8 hits, in order, each inside its value and exactly one
 * token (sworn_symtok_is), a header hit being the whole value but OWS or after "Bearer" and
 * spaces, a query hit the whole value of a parameter; distinct counts the different values;
 * sha256 is the first token's.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "err.h"
#include "frame.h"
#include "fuzz.h"
#include "p_jwt.h"
#include "p_token.h"
#include "utf8.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

#define LINES_MAX 64

static void sha256(const void *p, size_t n, uint8_t out[32])
{
    CHECK(EVP_Digest(n > 0 ? p : "", n, out, NULL, EVP_sha256(), NULL) == 1);
}

static void check_string(const char *s, int required)
{
    size_t n = strnlen(s, SWORN_JWT_STRING_MAX + 1);

    CHECK(n <= SWORN_JWT_STRING_MAX);
    CHECK(!required || n > 0);
    CHECK(n == 0 || sworn_utf8_check(s, n, 0, "fuzz") == 0);
}

static void check_accepted(const struct sworn_jwt_delegation *d)
{
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal principal = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource resource = SWORN__V1__RESOURCE__INIT;
    Sworn__V1__AuthorizationRequest *back;
    struct sworn_jwt_pb pb;
    uint8_t *frame = NULL;
    size_t frame_len = 0;

    check_string(d->subject, 1);
    check_string(d->issuer, 0);
    CHECK(d->nactors <= SWORN_JWT_ACTORS_MAX);
    for (size_t i = 0; i < d->nactors; i++) {
        check_string(d->actors[i].subject, 1);
        check_string(d->actors[i].issuer, 0);
    }
    CHECK(d->may_act == SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT ||
          d->may_act == SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED ||
          d->may_act == SWORN__V1__MAY_ACT__RESULT__RESULT_DENIED);
    CHECK(d->naudience <= SWORN_JWT_AUDIENCE_MAX && d->nscopes <= SWORN_JWT_SCOPES_MAX);
    for (size_t i = 0; i < d->naudience; i++)
        check_string(d->audience[i], 1);
    for (size_t i = 0; i < d->nscopes; i++)
        check_string(d->scopes[i], 1);
    check_string(d->client_id, 0);
    check_string(d->jti, 0);

    sworn_jwt_to_pb(d, &pb);
    principal.id = "agent";
    resource.scheme = "https";
    resource.host = "example.com";
    resource.port = 443;
    req.request_id = "fuzz";
    req.principal = &principal;
    req.operation = "http.request";
    req.resource = &resource;
    req.delegation = &pb.del;
    CHECK(sworn_frame_check_request(&req) == 0);
    CHECK(sworn_frame_pack_request(&req, &frame, &frame_len) == 0);
    back = sworn_frame_unpack_request(frame + SWORN_FRAME_HDR_LEN, frame_len - SWORN_FRAME_HDR_LEN);
    CHECK(back != NULL && back->delegation != NULL);
    CHECK(strcmp(back->delegation->subject, d->subject) == 0);
    CHECK(strcmp(back->delegation->issuer, d->issuer) == 0);
    CHECK(back->delegation->n_actors == d->nactors);
    for (size_t i = 0; i < d->nactors; i++) {
        CHECK(strcmp(back->delegation->actors[i]->subject, d->actors[i].subject) == 0);
        CHECK(strcmp(back->delegation->actors[i]->issuer, d->actors[i].issuer) == 0);
    }
    CHECK(back->delegation->n_token_sha256 == 1);
    CHECK(memcmp(back->delegation->token_sha256[0].data, d->token_sha256, 32) == 0);
    sworn__v1__authorization_request__free_unpacked(back, NULL);
    free(frame);
}

/* One read; returns its answer after checking what every answer must be. */
static int read_once(const uint8_t *data, size_t size, EVP_PKEY *key,
                     struct sworn_jwt_delegation *d)
{
    static const struct sworn_jwt_delegation zero;
    struct sworn_jwt_delegation z;
    const char *why = (const char *)data; /* must be overwritten */
    uint8_t want[32];
    int rc;

    sworn_err_clear();
    rc = sworn_jwt_read((const char *)data, size, key, 1767225600, d, &why);
    if (rc == -1) {
        CHECK(sworn_err_code() == SWORN_ERR_NOMEM);
        return rc;
    }
    CHECK(rc == 0 || rc == 1);
    sha256(data, size, want);
    CHECK(memcmp(d->token_sha256, want, 32) == 0);
    if (rc == 1) {
        CHECK(why != NULL && why != (const char *)data);
        z = *d;
        memset(z.token_sha256, 0, sizeof(z.token_sha256));
        CHECK(memcmp(&z, &zero, sizeof(z)) == 0);
        CHECK(sworn_err_code() == SWORN_OK);
    } else {
        CHECK(why == NULL);
        CHECK(d->verified == (key != NULL));
        check_accepted(d);
    }
    return rc;
}

static EVP_PKEY *fixed_key(void)
{
    static EVP_PKEY *key;
    /* The RFC 8032 section 7.1 TEST 1 public key. */
    static const uint8_t pub[32] = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7,
                                    0xd5, 0x4b, 0xfe, 0xd3, 0xc9, 0x64, 0x07, 0x3a,
                                    0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6, 0x23, 0x25,
                                    0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};

    if (key == NULL)
        key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, pub, sizeof(pub));
    CHECK(key != NULL);
    return key;
}

/* Every read of one token: without a key twice (deterministic), then with the fixed key. */
static void fuzz_one(const uint8_t *data, size_t size)
{
    struct sworn_jwt_delegation *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b)),
                                *k = malloc(sizeof(*k));
    int ra, rb, rk;

    CHECK(a != NULL && b != NULL && k != NULL);
    ra = read_once(data, size, NULL, a);
    rb = read_once(data, size, NULL, b);
    CHECK(ra == rb);
    if (ra >= 0)
        CHECK(memcmp(a, b, sizeof(*a)) == 0);
    rk = read_once(data, size, fixed_key(), k);
    if (rk == 0) {
        CHECK(ra == 0);
        CHECK(strcmp(k->subject, a->subject) == 0 && k->nactors == a->nactors);
    }
    free(a);
    free(b);
    free(k);
}

/* Unpadded base64url of in[0..n) into out (capacity at least n * 4 / 3 + 4). Returns the length. */
static size_t b64url(const uint8_t *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i;

    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        out[o++] = a[(v >> 6) & 63];
        out[o++] = a[v & 63];
    }
    if (n - i >= 1) {
        uint32_t v = (uint32_t)in[i] << 16 | (n - i == 2 ? (uint32_t)in[i + 1] << 8 : 0);
        out[o++] = a[v >> 18];
        out[o++] = a[(v >> 12) & 63];
        if (n - i == 2)
            out[o++] = a[(v >> 6) & 63];
    }
    return o;
}

/*
 * The input as the payload of an unsigned token too, so that the JSON reader and the claims are
 * fuzzed directly rather than through base64url.
 */
static void fuzz_payload(const uint8_t *data, size_t size)
{
    static const char header[] = "eyJhbGciOiJub25lIn0."; /* {"alg":"none"} */
    char *tok;
    size_t n;

    if (size > SWORN_JWT_MAX)
        return;
    tok = malloc(sizeof(header) + size * 4 / 3 + 8);
    CHECK(tok != NULL);
    memcpy(tok, header, sizeof(header) - 1);
    n = sizeof(header) - 1;
    n += b64url(data, size, tok + n);
    tok[n++] = '.';
    fuzz_one((const uint8_t *)tok, n);
    free(tok);
}

static void fuzz_jwt(const uint8_t *data, size_t size)
{
    fuzz_one(data, size);
    fuzz_payload(data, size);
}

static int is_ows(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* A header hit is the whole value but OWS, or the tail after "Bearer" and spaces. */
static void check_header_hit(const uint8_t *v, size_t n, const struct sworn_symtok_hit *h)
{
    size_t s = 0, e = n;

    CHECK(h->off <= n && h->len <= n - h->off);
    CHECK(sworn_symtok_is(v + h->off, h->len));
    while (s < e && is_ows(v[s]))
        s++;
    while (e > s && is_ows(v[e - 1]))
        e--;
    CHECK(h->off + h->len == e);
    if (h->off != s) {
        CHECK(h->off >= s + 7);
        CHECK(strncasecmp((const char *)v + s, "bearer", 6) == 0);
        for (size_t i = s + 6; i < h->off; i++)
            CHECK(v[i] == ' ');
    }
}

/* A query hit is the whole value of a parameter: after its first '=', up to '&' or the end. */
static void check_query_hit(const uint8_t *q, size_t n, const struct sworn_symtok_hit *h)
{
    size_t p;

    CHECK(h->off == h->index && h->off >= 1 && h->off <= n && h->len <= n - h->off);
    CHECK(sworn_symtok_is(q + h->off, h->len));
    CHECK(q[h->off - 1] == '=');
    CHECK(h->off + h->len == n || q[h->off + h->len] == '&');
    for (p = h->off - 1; p > 0 && q[p - 1] != '&'; p--)
        CHECK(q[p - 1] != '=');
}

static void fuzz_symtok(const uint8_t *data, size_t size)
{
    const uint8_t *v[LINES_MAX];
    size_t l[LINES_MAX], nv = 0, start = 0, expect_distinct = 0;
    const uint8_t *q;
    size_t qlen;
    struct sworn_symtok_scan s;
    int rc;

    for (size_t i = 0; i < size && nv < LINES_MAX; i++) {
        if (data[i] != '\n')
            continue;
        v[nv] = data + start;
        l[nv] = i - start;
        nv++;
        start = i + 1;
    }
    q = data + start;
    qlen = size - start;
    rc = sworn_symtok_scan(v, l, nv, size > 0 ? q : NULL, qlen, &s);
    if (rc == -1) {
        CHECK(sworn_err_code() == SWORN_ERR_CRYPTO);
        return;
    }
    CHECK(rc == 0 || rc == 1);
    CHECK(s.nhits <= SWORN_SYMTOK_HITS_MAX);
    CHECK(rc == 0 || s.nhits == SWORN_SYMTOK_HITS_MAX);
    for (size_t i = 0; i < s.nhits; i++) {
        const struct sworn_symtok_hit *h = &s.hit[i];
        const uint8_t *tok_i;
        size_t j;

        if (h->in_query) {
            check_query_hit(q, qlen, h);
            tok_i = q + h->off;
        } else {
            CHECK(h->index < nv);
            check_header_hit(v[h->index], l[h->index], h);
            tok_i = v[h->index] + h->off;
        }
        if (i > 0) {
            const struct sworn_symtok_hit *g = &s.hit[i - 1];
            CHECK(g->in_query <= h->in_query);
            CHECK(g->in_query != h->in_query || g->index < h->index);
        }
        for (j = 0; j < i; j++) {
            const struct sworn_symtok_hit *g = &s.hit[j];
            const uint8_t *tok_j = (g->in_query ? q : v[g->index]) + g->off;
            if (g->len == h->len && memcmp(tok_j, tok_i, h->len) == 0)
                break;
        }
        if (j == i)
            expect_distinct++;
        if (i == 0) {
            uint8_t want[32];
            sha256(tok_i, h->len, want);
            CHECK(memcmp(s.sha256, want, 32) == 0);
        }
    }
    CHECK((size_t)s.distinct == expect_distinct);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_jwt(data, size);
    fuzz_symtok(data, size);
    return 0;
}
