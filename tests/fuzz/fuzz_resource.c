/*
 * fuzz_resource.c -- libFuzzer target for policy/resource.c, the canonical form of a resource.
 *
 * The input is up to four lines: scheme, host, port (decimal text; anything else is 443) and
 * the path with its query (the rest of the input, newlines included); a NUL ends a field early.
 * Asserted, for every input:
 *   - canonicalisation answers 0 or 1; on 1 the output is all zero and a reason is given;
 *   - it is idempotent: the canonical form canonicalises to itself, byte for byte, and so do the
 *     host and the path on their own; the scheme tcp (a raw tunnel) has an empty path, every
 *     other canonical path starts with '/';
 *   - a canonical form is a valid request resource (sworn_frame_check_request accepts it);
 *   - the policy and the vault agree: for four scopes written once as policy rules and once as
 *     vault destinations (wildcard host and path prefix; exact host and prefix without slash;
 *     an IPv4 host with any path, written IPv4-mapped in the policy; an IPv6 host), all
 *     permitting path parameters, the policy allows exactly when the vault releases (both
 *     judge the path without its parameters), and neither does when the resource has no
 *     canonical form. tests/fuzz/fuzz_policy_vault.c does the same for scopes built from the
 *     input.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "frame.h"
#include "fuzz.h"
#include "policy.h"
#include "resource.h"
#include "vault.h"

#define SYM "sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define NSCOPES 4

static const char *const policies[NSCOPES] = {
    "rules:\n  - id: s\n    effect: allow\n    resource:\n      schemes: [https]\n"
    "      hosts: [\"**.example.com\"]\n      ports: [443]\n      paths: [\"/repos/**\"]\n"
    "      path_parameters: true\n",
    "rules:\n  - id: s\n    effect: allow\n    resource:\n      schemes: [wss]\n"
    "      hosts: [\"API.example.com.\"]\n      ports: [443]\n"
    "      paths: [\"/upload\", \"/upload/**\"]\n"
    "      path_parameters: true\n",
    "rules:\n  - id: s\n    effect: allow\n    resource:\n      schemes: [http]\n"
    "      hosts: [\"[::ffff:127.0.0.1]\"]\n      ports: [8080]\n"
    "      path_parameters: true\n",
    "rules:\n  - id: s\n    effect: allow\n    resource:\n      schemes: [https]\n"
    "      hosts: [\"2001:DB8:0::1\"]\n      ports: [443]\n      paths: [\"/a%20b/**\"]\n"
    "      path_parameters: true\n",
};

static const char vault_text[] =
    "{\"version\": 1, \"credentials\": ["
    "{\"id\": \"s0\", \"symbolic\": \"" SYM "0\", \"value\": \"v\", \"header\": \"x\", "
    "\"principals\": [\"*\"], \"destinations\": [{\"scheme\": \"https\", \"host\": "
    "\"*.example.com\", \"port\": 443, \"path_prefix\": \"/repos/\"}]},"
    "{\"id\": \"s1\", \"symbolic\": \"" SYM "1\", \"value\": \"v\", \"header\": \"x\", "
    "\"principals\": [\"*\"], \"destinations\": [{\"scheme\": \"wss\", \"host\": "
    "\"api.example.com\", \"port\": 443, \"path_prefix\": \"/upload\"}]},"
    "{\"id\": \"s2\", \"symbolic\": \"" SYM "2\", \"value\": \"v\", \"header\": \"x\", "
    "\"principals\": [\"*\"], \"destinations\": [{\"scheme\": \"http\", \"host\": "
    "\"127.0.0.1\", \"port\": 8080}]},"
    "{\"id\": \"s3\", \"symbolic\": \"" SYM "3\", \"value\": \"v\", \"header\": \"x\", "
    "\"principals\": [\"*\"], \"destinations\": [{\"scheme\": \"https\", \"host\": "
    "\"[2001:db8:0:0::1]\", \"port\": 443, \"path_prefix\": \"/a%20b/\"}]}]}";

static struct sworn_policy *pol[NSCOPES];
static struct sworn_vault *vault;

static void setup(void)
{
    char path[64];
    FILE *fp;
    int fd;

    for (int i = 0; i < NSCOPES; i++)
        if (sworn_policy_load_mem("fuzz.yaml", (const uint8_t *)policies[i], strlen(policies[i]),
                                  &pol[i]) != 0)
            abort();
    snprintf(path, sizeof(path), "/tmp/sworn-fuzz-resource-XXXXXX");
    fd = mkstemp(path); /* mode 0600, owned by us */
    if (fd < 0)
        abort();
    fp = fdopen(fd, "wb");
    if (fp == NULL || fwrite(vault_text, 1, strlen(vault_text), fp) != strlen(vault_text) ||
        fclose(fp) != 0)
        abort();
    if (sworn_vault_load(path, &vault) != 0)
        abort();
    unlink(path);
}

/* The next field: up to '\n' (or to the end when last), cut at a NUL. */
static char *field(const uint8_t **p, const uint8_t *end, int last)
{
    const uint8_t *s = *p, *e = s;
    char *out;

    while (e < end && (last || *e != '\n'))
        e++;
    out = malloc((size_t)(e - s) + 1);
    if (out == NULL)
        abort();
    memcpy(out, s, (size_t)(e - s));
    out[e - s] = '\0';
    *p = e < end ? e + 1 : e;
    return out;
}

static void check_idempotent(const Sworn__V1__Resource *r)
{
    static struct sworn_resource c, again, zero;
    Sworn__V1__Resource pb = SWORN__V1__RESOURCE__INIT;
    const char *why = NULL;
    int rc = sworn_resource_canon(r, &c, &why);

    if (rc == 1) {
        if (why == NULL || memcmp(&c, &zero, sizeof(c)) != 0)
            abort();
        return;
    }
    if (rc != 0)
        abort();
    sworn_resource_to_pb(&c, &pb);
    if (sworn_resource_canon(&pb, &again, &why) != 0 || memcmp(&c, &again, sizeof(c)) != 0)
        abort();
    if (strcmp(c.scheme, "tcp") == 0) {
        /* A raw tunnel has no path: both readings are empty. */
        if (c.path[0] != '\0' || c.path_len != 0 || c.bare[0] != '\0' || c.bare_len != 0 ||
            c.path_params)
            abort();
        return;
    }
    if (c.path[0] != '/' || c.path_len < 1 || c.path_len > strlen(c.path) ||
        (c.path[c.path_len] != '\0' && c.path[c.path_len] != '?'))
        abort();
}

static void check_parts(const char *host, const char *path)
{
    static char out[SWORN_RESOURCE_PATH_MAX + 1], again[SWORN_RESOURCE_PATH_MAX + 1];
    char h[SWORN_RESOURCE_HOST_MAX + 1], h2[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind k, k2;
    uint8_t a[16], a2[16];
    size_t pl, pl2;
    const char *why;

    if (sworn_resource_canon_host(host, h, &k, a, &why) == 0 &&
        (sworn_resource_canon_host(h, h2, &k2, a2, &why) != 0 || strcmp(h, h2) != 0 || k != k2 ||
         memcmp(a, a2, 16) != 0))
        abort();
    if (sworn_resource_canon_path(path, out, &pl, &why) == 0 &&
        (sworn_resource_canon_path(out, again, &pl2, &why) != 0 || strcmp(out, again) != 0 ||
         pl != pl2))
        abort();
}

static void check_agree(Sworn__V1__AuthorizationRequest *req)
{
    static struct sworn_resource c;
    const char *why = NULL;
    int canon = sworn_resource_canon(req->resource, &c, &why) == 0;

    if (sworn_frame_check_request(req) != 0)
        return; /* the decision socket never hands such a request to either */
    if (canon) {
        Sworn__V1__AuthorizationRequest q = *req;
        Sworn__V1__Resource pb = SWORN__V1__RESOURCE__INIT;

        sworn_resource_to_pb(&c, &pb);
        q.resource = &pb;
        if (sworn_frame_check_request(&q) != 0)
            abort();
    }
    for (int i = 0; i < NSCOPES; i++) {
        struct sworn_policy_result res;
        struct sworn_vault_release out;
        char id[8];
        int allow, released, rc;

        if (sworn_policy_eval(pol[i], NULL, req, 0, &res) != 0)
            abort();
        allow = res.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
        snprintf(id, sizeof(id), "s%d", i);
        memset(&out, 0, sizeof(out));
        rc = sworn_vault_release(vault, id, req, &out, &why);
        if (rc < 0)
            abort();
        released = rc == 0;
        sworn_vault_release_wipe(&out);
        if (allow != released || (!canon && (allow || released)))
            abort();
        if (!canon && strcmp(res.rule_id, "") != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    const uint8_t *p = data, *end = data + size;
    char *scheme, *host, *port, *path, *e = NULL;
    unsigned long pv;

    if (pol[0] == NULL)
        setup();
    if (size > SWORN_RESOURCE_PATH_MAX + 512)
        return 0;
    scheme = field(&p, end, 0);
    host = field(&p, end, 0);
    port = field(&p, end, 0);
    path = field(&p, end, 1);
    pv = strtoul(port, &e, 10);
    res.scheme = scheme;
    res.host = host;
    res.port = port[0] != '\0' && e != NULL && *e == '\0' && pv <= 70000 ? (uint32_t)pv : 443;
    res.path = path;
    pr.id = (char *)"agent";
    req.request_id = (char *)"r";
    req.operation = (char *)"http.request";
    req.principal = &pr;
    req.resource = &res;

    check_idempotent(&res);
    check_parts(host, path);
    check_agree(&req);
    free(scheme);
    free(host);
    free(port);
    free(path);
    return 0;
}
