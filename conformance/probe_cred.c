/*
 * probe_cred.c -- SHA-256 (FIPS 180-4) and the candidate scan of probe_cred.h. The hash is written
 * here rather than taken from OpenSSL (the probe program was libc alone when it was written; it
 * links libssl for connect-tls-http's TLS session only); the tests check it against OpenSSL's
 * through the conformance run (a digest the runner lists is found).
 */
#include "probe_cred.h"

#include <string.h>

static const uint32_t k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void block(uint32_t h[8], const uint8_t *b)
{
    uint32_t w[64], a, bb, c, d, e, f, g, hh;

    for (unsigned i = 0; i < 16; i++)
        w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
               (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
    for (unsigned i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);

        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (unsigned i = 0; i < 64; i++) {
        uint32_t t1 =
            hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));

        hh = g, g = f, f = e, e = d + t1, d = c, c = bb, bb = a, a = t1 + t2;
    }
    h[0] += a, h[1] += bb, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void probe_sha256(const void *p, size_t n, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *b = p;
    uint8_t last[128] = {0};
    size_t full = n / 64 * 64, rest = n - full, tail;
    uint64_t bits = (uint64_t)n * 8;

    for (size_t i = 0; i < full; i += 64)
        block(h, b + i);
    if (rest > 0)
        memcpy(last, b + full, rest);
    last[rest] = 0x80;
    tail = rest < 56 ? 64 : 128;
    for (unsigned i = 0; i < 8; i++)
        last[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
    block(h, last);
    if (tail == 128)
        block(h, last + 64);
    for (unsigned i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

int probe_cred_parse(struct probe_cred *c, const char *text)
{
    memset(c, 0, sizeof(*c));
    for (const char *p = text;;) {
        if (c->n == PROBE_CRED_MAX)
            return -1;
        for (unsigned i = 0; i < 32; i++) {
            int hi = hexval(p[2 * i]), lo = hi < 0 ? -1 : hexval(p[2 * i + 1]);

            if (hi < 0 || lo < 0)
                return -1;
            c->digest[c->n][i] = (uint8_t)(hi << 4 | lo);
        }
        c->n++;
        p += 64;
        if (*p == '\0')
            return 0;
        if (*p++ != ',')
            return -1;
    }
}

/* Hash one candidate; 1 with *which when it is one of the digests. */
static int check(struct probe_cred *c, const char *p, size_t n, size_t *which)
{
    uint8_t d[32];

    if (n == 0 || n > PROBE_CRED_TOKEN_MAX)
        return 0;
    c->scanned++;
    probe_sha256(p, n, d);
    for (size_t i = 0; i < c->n; i++)
        if (memcmp(d, c->digest[i], 32) == 0) {
            *which = i;
            return 1;
        }
    return 0;
}

static int coarse_delim(unsigned char ch)
{
    return ch <= ' ' || ch == 0x7f || ch == '"' || ch == '\'' || ch == ',' || ch == ';' ||
           ch == '<' || ch == '>';
}

static int fine_delim(unsigned char ch)
{
    return coarse_delim(ch) || strchr(":=&?()[]{}", ch) != NULL;
}

/* Every token of the text cut at delim; with pairs, also "<token> <token>" around one space. */
static int tokens(struct probe_cred *c, const char *p, size_t n, int (*delim)(unsigned char),
                  int pairs, size_t *which)
{
    size_t i = 0, prev_start = 0, prev_end = 0;
    int have_prev = 0;

    while (i < n) {
        size_t start;

        while (i < n && delim((unsigned char)p[i]))
            i++;
        start = i;
        while (i < n && !delim((unsigned char)p[i]))
            i++;
        if (i == start)
            break;
        if (check(c, p + start, i - start, which))
            return 1;
        if (pairs && have_prev && prev_end + 1 == start && p[prev_end] == ' ' &&
            check(c, p + prev_start, i - prev_start, which))
            return 1;
        prev_start = start, prev_end = i, have_prev = 1;
    }
    return 0;
}

static int line_delim(unsigned char ch)
{
    return ch == '\n' || ch == '\r' || ch == '\0';
}

int probe_cred_scan(struct probe_cred *c, const char *p, size_t n, size_t *which)
{
    return tokens(c, p, n, line_delim, 0, which) || tokens(c, p, n, coarse_delim, 0, which) ||
           tokens(c, p, n, fine_delim, 1, which);
}
