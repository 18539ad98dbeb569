/*
 * fuzz_policy_vault.c -- libFuzzer target: the policy and the credential vault agree on every
 * resource, for scopes built from the input (issue 12: "a fuzz target asserts ... that policy
 * and vault agree"; tests/fuzz/fuzz_resource.c does it for four fixed scopes and checks
 * idempotence).
 *
 * The input is up to four lines: a host literal H, a path prefix P, a request host and the
 * request path with its query (the rest of the input); a NUL ends a field early. From H and P
 * one scope is written twice:
 *   - as a policy: one allow rule, schemes [https], hosts ["H"], ports [443], paths that say what
 *     the vault's prefix rule says (canonical P ending in '/': "P**"; else "P" and "P/" followed by
 * "**"), with path_parameters: true; and the same rule without path_parameters;
 *   - as a vault credential with the destination {https, H, 443, path_prefix P}.
 * Asserted, for every input:
 *   - the policy accepts the host pattern H exactly when the vault accepts the destination host
 *     H (both canonicalise it with sworn_resource_canon_host; IPv4-mapped forms included);
 *   - the vault accepts the prefix P exactly when it has a canonical form without ';';
 *   - for three requests (the request host and path; H with the request path; H with P followed
 *     by the request path), the permitting policy allows exactly when the vault releases; the
 *     other policy allows exactly when the vault releases and the path has no parameters;
 *   - a resource without a canonical form is allowed by neither, the policy's reason is
 *     "the resource is refused: <why>" and the vault's reason is the same <why>.
 * Inputs whose H or P a YAML or JSON string cannot carry verbatim (bytes outside printable
 * ASCII, '"', '\\'), or that hold glob characters ('*' in H, '*' in the canonical P), are
 * skipped: they test the writer of this target, not the matchers.
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

#define SYM "sym_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define FIELD_MAX 600u
#define TEXT_MAX 4096u

static char vault_path[64];
static int vault_fd = -1;

static void setup(void)
{
    snprintf(vault_path, sizeof(vault_path), "/tmp/sworn-fuzz-pv-XXXXXX");
    vault_fd = mkstemp(vault_path); /* mode 0600, owned by us; kept for the whole run */
    if (vault_fd < 0)
        abort();
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

/* Can s be written verbatim between double quotes in YAML and in JSON? */
static int quotable(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
            return 0;
    return 1;
}

static struct sworn_policy *load_policy(const char *host, const char *canon_prefix, int params)
{
    char text[TEXT_MAX];
    size_t pl = strlen(canon_prefix);
    struct sworn_policy *p = NULL;
    int n;

    if (canon_prefix[pl - 1] == '/')
        n = snprintf(text, sizeof(text),
                     "rules:\n  - id: s\n    effect: allow\n    resource:\n"
                     "      schemes: [https]\n      hosts:\n        - \"%s\"\n"
                     "      ports: [443]\n      paths:\n        - \"%s**\"\n%s",
                     host, canon_prefix, params ? "      path_parameters: true\n" : "");
    else
        n = snprintf(text, sizeof(text),
                     "rules:\n  - id: s\n    effect: allow\n    resource:\n"
                     "      schemes: [https]\n      hosts:\n        - \"%s\"\n"
                     "      ports: [443]\n      paths:\n        - \"%s\"\n        - \"%s/**\"\n%s",
                     host, canon_prefix, canon_prefix,
                     params ? "      path_parameters: true\n" : "");
    if (n < 0 || (size_t)n >= sizeof(text))
        abort();
    if (sworn_policy_load_mem("fuzz.yaml", (const uint8_t *)text, (size_t)n, &p) != 0)
        return NULL;
    return p;
}

static struct sworn_vault *load_vault(const char *host, const char *prefix)
{
    char text[TEXT_MAX];
    struct sworn_vault *v = NULL;
    int n = snprintf(text, sizeof(text),
                     "{\"version\": 1, \"credentials\": [{\"id\": \"s\", \"symbolic\": \"" SYM
                     "\", \"value\": \"v\", \"header\": \"x\", \"principals\": [\"*\"], "
                     "\"destinations\": [{\"scheme\": \"https\", \"host\": \"%s\", \"port\": 443, "
                     "\"path_prefix\": \"%s\"}]}]}",
                     host, prefix);

    if (n < 0 || (size_t)n >= sizeof(text))
        abort();
    if (ftruncate(vault_fd, 0) != 0 || pwrite(vault_fd, text, (size_t)n, 0) != n)
        abort();
    if (sworn_vault_load(vault_path, &v) != 0)
        return NULL;
    return v;
}

/* One request through both policies and the vault. */
static void check_request(const struct sworn_policy *with, const struct sworn_policy *without,
                          const struct sworn_vault *v, const char *host, const char *path)
{
    Sworn__V1__AuthorizationRequest req = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    static struct sworn_resource c;
    struct sworn_policy_result r1, r2;
    struct sworn_vault_release out;
    const char *canon_why = NULL, *vault_why = NULL;
    int canon, rc, allow1, allow2, released;

    res.scheme = (char *)"https";
    res.host = (char *)host;
    res.port = 443;
    res.path = (char *)path;
    pr.id = (char *)"agent";
    req.request_id = (char *)"r";
    req.operation = (char *)"http.request";
    req.principal = &pr;
    req.resource = &res;
    if (sworn_frame_check_request(&req) != 0)
        return; /* the decision socket never hands such a request to either */
    canon = sworn_resource_canon(&res, &c, &canon_why) == 0;
    if (sworn_policy_eval(with, NULL, &req, 0, &r1) != 0 ||
        sworn_policy_eval(without, NULL, &req, 0, &r2) != 0)
        abort();
    memset(&out, 0, sizeof(out));
    rc = sworn_vault_release(v, "s", &req, &out, &vault_why);
    if (rc < 0)
        abort();
    released = rc == 0;
    sworn_vault_release_wipe(&out);
    allow1 = r1.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
    allow2 = r2.effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
    if (allow1 != released)
        abort();
    if (allow2 != (released && !c.path_params))
        abort();
    if (!canon) {
        char want[1100];

        if (allow1 || allow2 || released || strcmp(vault_why, canon_why) != 0)
            abort();
        snprintf(want, sizeof(want), "the resource is refused: %s;", canon_why);
        if (strncmp(r1.reason, want, strlen(want)) != 0 ||
            strncmp(r2.reason, want, strlen(want)) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *h, *prefix, *rhost, *rpath, *joined = NULL;
    static char canon_prefix[SWORN_RESOURCE_PATH_MAX + 1];
    char ch[SWORN_RESOURCE_HOST_MAX + 1];
    enum sworn_resource_host_kind kind;
    uint8_t addr[16];
    const char *why = NULL;
    struct sworn_policy *with = NULL, *without = NULL, *hostonly = NULL;
    struct sworn_vault *v = NULL;
    size_t plen;
    int host_ok, prefix_ok;

    if (vault_fd < 0)
        setup();
    if (size > SWORN_RESOURCE_PATH_MAX + 512)
        return 0;
    h = field(&p, end, 0);
    prefix = field(&p, end, 0);
    rhost = field(&p, end, 0);
    rpath = field(&p, end, 1);
    if (h[0] == '\0' || strlen(h) > FIELD_MAX || !quotable(h) || strchr(h, '*') != NULL ||
        prefix[0] != '/' || strlen(prefix) > FIELD_MAX || !quotable(prefix))
        goto done;

    /* The host: one verdict for the policy's literal pattern and the vault's destination. */
    host_ok = sworn_resource_canon_host(h, ch, &kind, addr, &why) == 0;
    hostonly = load_policy(h, "/", 1);
    if ((hostonly != NULL) != host_ok)
        abort();
    v = load_vault(h, "/");
    if ((v != NULL) != host_ok)
        abort();
    sworn_vault_free(v);
    v = NULL;
    if (!host_ok)
        goto done;

    /* The prefix: the vault takes it when it is canonical-able, without ';' or '?'. */
    prefix_ok = strchr(prefix, '?') == NULL &&
                sworn_resource_canon_path(prefix, canon_prefix, &plen, &why) == 0 &&
                strchr(canon_prefix, ';') == NULL;
    v = load_vault(h, prefix);
    if ((v != NULL) != prefix_ok)
        abort();
    if (!prefix_ok || strchr(canon_prefix, '*') != NULL || strlen(canon_prefix) > 500)
        goto done;
    with = load_policy(h, canon_prefix, 1);
    without = load_policy(h, canon_prefix, 0);
    if (with == NULL || without == NULL)
        abort(); /* a canonical prefix is a valid path pattern */

    joined = malloc(strlen(prefix) + strlen(rpath) + 1);
    if (joined == NULL)
        abort();
    /* P then the request path, without the "//" that a P ending in '/' would make. */
    plen = strlen(prefix);
    if (prefix[plen - 1] == '/' && rpath[0] == '/')
        plen--;
    memcpy(joined, prefix, plen);
    memcpy(joined + plen, rpath, strlen(rpath) + 1);
    check_request(with, without, v, rhost, rpath);
    check_request(with, without, v, h, rpath);
    check_request(with, without, v, h, joined);
    check_request(with, without, v, ch, joined);
done:
    sworn_policy_free(with);
    sworn_policy_free(without);
    sworn_policy_free(hostonly);
    sworn_vault_free(v);
    free(joined);
    free(h);
    free(prefix);
    free(rhost);
    free(rpath);
    return 0;
}
