/*
 * verify_bench.c -- how fast sworn-verify checks a log, against raw SHA-256.
 *
 *   sv_verify_bench [--entries N] [--size BYTES] [--dir DIR] [--sworn]
 *
 * Makes (once; reused when DIR already holds it) a tlog-tiles folder of N entries (default
 * 1,000,000) of BYTES bytes each (default 100), with every hash tile, one checkpoint per 65536
 * entries and the newest, all signed by a fresh Ed25519 key; then runs the verifier's whole
 * record check on it (sv_verify_record: bundles read, leaf hashes, tiles compared, roots at every
 * checkpoint) and, in the same run, raw SHA-256 over the same number of leaf hashes (1 + BYTES
 * bytes each) and node hashes (65 bytes each; a tree of N leaves has N - 1 nodes, and the tiles
 * add the same again). Prints entries per second and the ratio; memory is reported as the
 * process's peak resident size. The folder is written with the verifier's own Merkle code: it is
 * a throughput fixture, not evidence of interoperability (the tests are).
 *
 * With --sworn the entries are sworn.v1.Entry decisions (one PolicyLoaded first), each an allow
 * with an Ed25519 receipt in sworn/receipts/, and the verification is run twice, with one and
 * with two signature threads, to show the receipt checks using both cores.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include "sv_merkle.h"
#include "sv_sworn.pb-c.h"
#include "sv_note.h"
#include "sv_policy.h"
#include "sv_tiles.h"
#include "sv_verify.h"

#define ORIGIN "bench.sworn.example/log"
#define NAME "bench.sworn.example"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void mkdirs(const char *path)
{
    char tmp[4096];

    snprintf(tmp, sizeof(tmp), "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
    mkdir(tmp, 0755);
}

static void write_file(const char *dir, const char *rel, const void *d, size_t n)
{
    char path[4096], parent[4096], *slash;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    snprintf(parent, sizeof(parent), "%s", path);
    slash = strrchr(parent, '/');
    *slash = '\0';
    mkdirs(parent);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(d, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

struct gen {
    const char *dir;
    uint8_t level[8][256][SV_HASH];
    unsigned fill[8];
    uint64_t index[8];
};

static void push(struct gen *g, unsigned l, const uint8_t h[SV_HASH])
{
    char rel[128], prefix[16];
    uint8_t root[SV_HASH];

    memcpy(g->level[l][g->fill[l]++], h, SV_HASH);
    if (g->fill[l] < 256)
        return;
    snprintf(prefix, sizeof(prefix), "tile/%u", l);
    sv_tile_path(prefix, g->index[l], 256, rel, sizeof(rel));
    write_file(g->dir, rel, g->level[l], 256 * SV_HASH);
    sv_mth((const uint8_t(*)[SV_HASH])g->level[l], 256, root);
    g->fill[l] = 0;
    g->index[l]++;
    push(g, l + 1, root);
}

static void sign_checkpoint(EVP_PKEY *k, uint32_t id, const char *dir, const char *rel,
                            uint64_t size, const uint8_t root[SV_HASH])
{
    char text[512], b64[64], sig64[200], note[1024];
    uint8_t raw[4 + 64];
    size_t siglen = 64;
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int n;

    sv_b64_encode(root, SV_HASH, b64, sizeof(b64));
    n = snprintf(text, sizeof(text), "%s\n%llu\n%s\n", ORIGIN, (unsigned long long)size, b64);
    for (int i = 0; i < 4; i++)
        raw[i] = (uint8_t)(id >> (24 - 8 * i));
    EVP_DigestSignInit(c, NULL, NULL, NULL, k);
    EVP_DigestSign(c, raw + 4, &siglen, (uint8_t *)text, (size_t)n);
    EVP_MD_CTX_free(c);
    sv_b64_encode(raw, sizeof(raw), sig64, sizeof(sig64));
    n = snprintf(note, sizeof(note), "%s\n\xe2\x80\x94 %s %s\n", text, NAME, sig64);
    write_file(dir, rel, note, (size_t)n);
}

/* A sworn entry: i = 0 loads the policy, every other one is an allow decision. */
static size_t sworn_entry(uint64_t i, const uint8_t digest[SV_HASH], uint8_t *out)
{
    Svpb__V1__Entry e = SVPB__V1__ENTRY__INIT;
    Svpb__V1__PolicyLoaded pl = SVPB__V1__POLICY_LOADED__INIT;
    Svpb__V1__DecisionRecord d = SVPB__V1__DECISION_RECORD__INIT;
    Svpb__V1__AuthorizationRequest rq = SVPB__V1__AUTHORIZATION_REQUEST__INIT;
    Svpb__V1__Principal pr = SVPB__V1__PRINCIPAL__INIT;
    Svpb__V1__Resource rs = SVPB__V1__RESOURCE__INIT;
    char id[32];

    if (i == 0) {
        pl.digest.data = (uint8_t *)digest;
        pl.digest.len = SV_HASH;
        pl.source = "/etc/sworn/policy.yaml";
        e.kind_case = SVPB__V1__ENTRY__KIND_POLICY_LOADED;
        e.policy_loaded = &pl;
    } else {
        snprintf(id, sizeof(id), "req-%llu", (unsigned long long)i);
        pr.id = "agent-1";
        rs.scheme = "https";
        rs.host = "api.example.com";
        rs.port = 443;
        rs.path = "/v1/charges";
        rq.request_id = id;
        rq.principal = &pr;
        rq.operation = "http.request";
        rq.resource = &rs;
        d.request = &rq;
        d.effect = SVPB__V1__EFFECT__EFFECT_ALLOW;
        d.reason = "rule charges matched";
        d.policy_digest.data = (uint8_t *)digest;
        d.policy_digest.len = SV_HASH;
        d.time_unix_ms = 1700000000000ull + i;
        e.kind_case = SVPB__V1__ENTRY__KIND_DECISION;
        e.decision = &d;
    }
    return svpb__v1__entry__pack(&e, out);
}

static size_t make_receipt(EVP_PKEY *k, const uint8_t key_id[SV_HASH], const uint8_t leaf[SV_HASH],
                           uint8_t *out)
{
    Svpb__V1__Receipt r = SVPB__V1__RECEIPT__INIT;
    uint8_t tbs[18 + SV_HASH], sig[64];
    size_t siglen = sizeof(sig);
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    memcpy(tbs, "\xffsworn/v1 receipt", 17);
    tbs[17] = 0;
    memcpy(tbs + 18, leaf, SV_HASH);
    EVP_DigestSignInit(c, NULL, NULL, NULL, k);
    EVP_DigestSign(c, sig, &siglen, tbs, sizeof(tbs));
    EVP_MD_CTX_free(c);
    r.key_id.data = (uint8_t *)key_id;
    r.key_id.len = SV_HASH;
    r.signature.data = sig;
    r.signature.len = siglen;
    r.alg = 2;
    return svpb__v1__receipt__pack(&r, out);
}

static void generate(const char *dir, uint64_t n, size_t esize, const char *policy_path, int sworn)
{
    struct gen *g = calloc(1, sizeof(*g));
    struct sv_range r;
    EVP_PKEY *k = NULL;
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    uint8_t pub[33], h[SV_HASH], pre[128], leaf[SV_HASH];
    uint8_t *bundle = malloc(256 * (2 + 65535)), *rbundle = malloc(256 * (2 + 200));
    uint8_t digest[SV_HASH], rkey_id[SV_HASH], rspki[44], *rp = rspki;
    size_t publen = 32, pl, bl = 0, rl = 0;
    EVP_PKEY *rk = NULL;
    char rspki64[64];
    char vk[256], b64[64], policy[512], rel[128];
    uint32_t id;

    g->dir = dir;
    EVP_PKEY_keygen_init(kc);
    EVP_PKEY_keygen(kc, &k);
    EVP_PKEY_CTX_free(kc);
    pub[0] = 1;
    EVP_PKEY_get_raw_public_key(k, pub + 1, &publen);
    pl = (size_t)snprintf((char *)pre, sizeof(pre), "%s\n", NAME);
    memcpy(pre + pl, pub, 33);
    SHA256(pre, pl + 33, h);
    id = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    sv_b64_encode(pub, 33, b64, sizeof(b64));
    snprintf(vk, sizeof(vk), "%s+%08x+%s", NAME, id, b64);
    sv_sha256("bench policy", 12, digest);
    kc = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    EVP_PKEY_keygen_init(kc);
    EVP_PKEY_keygen(kc, &rk);
    EVP_PKEY_CTX_free(kc);
    i2d_PUBKEY(rk, &rp);
    sv_sha256(rspki, sizeof(rspki), rkey_id);
    sv_b64_encode(rspki, sizeof(rspki), rspki64, sizeof(rspki64));
    sv_range_init(&r);
    for (uint64_t i = 0; i < n; i++) {
        uint8_t *e = bundle + bl;
        size_t elen = esize;

        if (sworn) {
            elen = sworn_entry(i, digest, e + 2);
        } else {
            memset(e + 2, 'a' + (int)(i % 26), esize);
            snprintf((char *)e + 2, esize, "entry %llu", (unsigned long long)i);
        }
        e[0] = (uint8_t)(elen >> 8);
        e[1] = (uint8_t)elen;
        bl += 2 + elen;
        sv_leaf_hash(e + 2, elen, leaf);
        if (sworn) {
            uint8_t *q = rbundle + rl;
            size_t ql = i == 0 ? 0 : make_receipt(rk, rkey_id, leaf, q + 2);

            q[0] = (uint8_t)(ql >> 8);
            q[1] = (uint8_t)ql;
            rl += 2 + ql;
        }
        sv_range_push(&r, leaf);
        push(g, 0, leaf);
        if ((i + 1) % 256 == 0 || i + 1 == n) {
            unsigned w = (i + 1) % 256 == 0 ? 256 : (unsigned)((i + 1) % 256);

            sv_tile_path("tile/entries", i / 256, w, rel, sizeof(rel));
            write_file(dir, rel, bundle, bl);
            bl = 0;
            if (sworn) {
                sv_tile_path("sworn/receipts", i / 256, w, rel, sizeof(rel));
                write_file(dir, rel, rbundle, rl);
                rl = 0;
            }
        }
        if ((i + 1) % 65536 == 0 || i + 1 == n) {
            uint8_t root[SV_HASH];

            sv_range_root(&r, root);
            snprintf(rel, sizeof(rel), "sworn/checkpoint/%llu", (unsigned long long)(i + 1));
            sign_checkpoint(k, id, dir, rel, i + 1, root);
            if (i + 1 == n)
                sign_checkpoint(k, id, dir, "checkpoint", n, root);
        }
    }
    for (unsigned l = 0; l < 8; l++)
        if (g->fill[l] > 0) {
            char prefix[16];

            snprintf(prefix, sizeof(prefix), "tile/%u", l);
            sv_tile_path(prefix, g->index[l], g->fill[l], rel, sizeof(rel));
            write_file(dir, rel, g->level[l], (size_t)g->fill[l] * SV_HASH);
        }
    if (sworn)
        snprintf(policy, sizeof(policy), "origin %s\nlog %s\nentries sworn\nreceipt-key %s\n",
                 ORIGIN, vk, rspki64);
    else
        snprintf(policy, sizeof(policy), "origin %s\nlog %s\nentries opaque\n", ORIGIN, vk);
    {
        FILE *f = fopen(policy_path, "w");

        fputs(policy, f);
        fclose(f);
    }
    EVP_PKEY_free(k);
    EVP_PKEY_free(rk);
    free(bundle);
    free(rbundle);
    free(g);
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000;
    size_t esize = 100;
    const char *dir = "verify-bench-log";
    char policy_path[4096], check[4096];
    int sworn = 0;
    struct sv_policy p;
    struct sv_verify_opts o;
    struct sv_report *rep = calloc(1, sizeof(*rep));
    char why[SV_WHY];
    double t0, t_verify, t_raw;
    struct stat st;
    struct rusage ru;
    uint8_t *buf, out[SV_HASH];
    uint64_t nodes;
    int rc;

    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--sworn") == 0)
            sworn = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--sworn") == 0)
            i--;
        else if (strcmp(argv[i], "--entries") == 0)
            n = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--size") == 0)
            esize = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
    }
    if (n == 0 || esize < 16 || esize > 65535) {
        fprintf(stderr, "usage: sv_verify_bench [--entries N] [--size 16..65535] [--dir DIR]\n");
        return 2;
    }
    snprintf(policy_path, sizeof(policy_path), "%s.policy", dir);
    snprintf(check, sizeof(check), "%s/checkpoint", dir);
    if (stat(check, &st) != 0) {
        fprintf(stderr, "generating %llu entries of %zu bytes in %s ...\n", (unsigned long long)n,
                esize, dir);
        mkdirs(dir);
        generate(dir, n, esize, policy_path, sworn);
    }
    if (sv_policy_load(policy_path, &p, why) != 0) {
        fprintf(stderr, "policy: %s\n", why);
        return 2;
    }
    memset(&o, 0, sizeof(o));
    o.policy = &p;
    o.record = dir;
    if (sworn) {
        /* Receipt signatures on one thread, then on two (the default). */
        double t1;

        o.threads = 1;
        t0 = now();
        rc = sv_verify_record(&o, rep);
        t1 = now() - t0;
        if (rc != 0) {
            sv_report_print_text(rep, stderr);
            return 1;
        }
        printf("one signature thread  %.3f s, %.0f entries/s (%llu receipts)\n", t1,
               (double)rep->size / t1, (unsigned long long)rep->checks[SV_CHECK_RECEIPTS].count);
        o.threads = 2;
    }
    t0 = now();
    rc = sv_verify_record(&o, rep);
    t_verify = now() - t0;
    if (rc != 0) {
        sv_report_print_text(rep, stderr);
        return 1;
    }
    n = rep->size;
    /* Raw SHA-256: n leaf hashes of 1 + esize bytes, and 2(n - 1) node hashes of 65 bytes (the
     * tree's nodes, and as many again inside the tiles the verifier recomputes). */
    nodes = 2 * (n - 1);
    buf = calloc(1, 1 + esize);
    t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        buf[1] = (uint8_t)i;
        SHA256(buf, 1 + esize, out);
    }
    for (uint64_t i = 0; i < nodes; i++) {
        buf[1] = (uint8_t)i;
        SHA256(buf, 65, out);
    }
    t_raw = now() - t0;
    getrusage(RUSAGE_SELF, &ru);
    printf("entries               %llu (%zu bytes each), %llu checkpoints\n", (unsigned long long)n,
           esize, (unsigned long long)rep->checkpoints);
    printf("sworn-verify          %.3f s, %.0f entries/s (bundles read, leaves, tiles, roots)\n",
           t_verify, (double)n / t_verify);
    printf("raw SHA-256           %.3f s for %llu leaf + %llu node hashes\n", t_raw,
           (unsigned long long)n, (unsigned long long)nodes);
    printf("ratio                 %.2fx of raw hashing (target: within 2x)\n", t_verify / t_raw);
    printf("peak RSS              %ld KiB\n", ru.ru_maxrss);
    free(buf);
    free(rep);
    sv_policy_free(&p);
    return 0;
}
