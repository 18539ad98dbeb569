/*
 * policy.c -- loading a policy file into rules, and evaluating a request against them (see
 * policy.h for the contract and docs/policy.md for every key and the exact semantics).
 *
 * Loading reads the bounded YAML tree of yamldoc.c and checks everything a rule says before any
 * request is seen: unknown keys, wrong types, empty lists, bad globs, host patterns, hours and
 * amounts, duplicate ids, budgets, credentials or timeouts on rules of the wrong effect. Every
 * refusal names the offending node as "<file>:<line>:<col>: ". A policy is built completely in
 * a fresh allocation and handed out only when all of it loaded, so a broken file never leaves
 * anything half-loaded behind (the daemon keeps its old policy).
 *
 * Evaluation is a pure function of the policy, the request, the time and the budget counters;
 * it reads no clock and no environment.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "frame.h"
#include "policy_int.h"
#include "safefile.h"
#include "utf8.h"
#include "yamldoc.h"

#define WINDOW_MIN_MS 1000ull
#define WINDOW_MAX_MS (366ull * 86400000ull)
#define TIMEOUT_MAX_MS (7ull * 86400000ull)
#define COUNT_MAX 1000000000ull
#define TOKENS_MAX 1000000000000ull /* tokens: max, 1..10^12 */
#define POINTER_MAX 256u
#define SCHEME_MAX 16u
#define ISSUER_MAX 1024u
#define DEPTH_MAX 32ull

typedef const struct sworn_yaml_doc ydoc;
typedef const struct sworn_yaml_node ynode;

/* --- Freeing --- */

static void free_globs(struct pglob *g, size_t n)
{
    for (size_t i = 0; i < n && g != NULL; i++)
        pglob_free(&g[i]);
    free(g);
}

static void free_strs(char **s, size_t n)
{
    for (size_t i = 0; i < n && s != NULL; i++)
        free(s[i]);
    free(s);
}

static void free_actors(struct pactor *a, size_t n)
{
    for (size_t i = 0; i < n && a != NULL; i++) {
        pglob_free(&a[i].subject);
        free(a[i].issuer);
    }
    free(a);
}

static void free_rule(struct prule *r)
{
    free(r->reason);
    free_globs(r->principals, r->n_principals);
    free_globs(r->operations, r->n_operations);
    free_globs(r->paths, r->n_paths);
    free_globs(r->tools, r->n_tools);
    free_globs(r->prompts, r->n_prompts);
    free_globs(r->uris, r->n_uris);
    free_globs(r->models, r->n_models);
    free_actors(r->req_actors, r->n_req_actors);
    free_actors(r->forbid_actors, r->n_forbid_actors);
    free_strs(r->schemes, r->n_schemes);
    free_strs(r->methods, r->n_methods);
    free_strs(r->req_scopes, r->n_req_scopes);
    free_strs(r->client_ids, r->n_client_ids);
    free_strs(r->audiences, r->n_audiences);
    for (size_t i = 0; i < r->n_hosts && r->hosts != NULL; i++)
        phost_free(&r->hosts[i]);
    free(r->hosts);
    free(r->ports);
    free(r->count.pointer);
    free(r->count.window_text);
    free(r->sum.pointer);
    free(r->sum.window_text);
    free(r->tokens.window_text);
}

void sworn_policy_free(struct sworn_policy *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nrules && p->rules != NULL; i++)
        free_rule(&p->rules[i]);
    free(p->rules);
    free_strs(p->trusted, p->n_trusted);
    free(p);
}

/* --- Loading helpers --- */

static int oom(void)
{
    return sworn_err_set(SWORN_ERR_NOMEM, "out of memory loading the policy");
}

/* A mapping; an empty one is refused (it would say nothing, and is likely a mistake). */
static int need_map(ydoc *d, ynode *n, const char *what)
{
    if (sworn_yaml_kind(n) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, n, "%s must be a mapping", what);
    if (sworn_yaml_len(n) == 0)
        return sworn_yaml_error(d, n, "%s is an empty mapping", what);
    return 0;
}

/* A non-empty sequence of scalars, at most SWORN_POLICY_LIST_MAX. */
static int need_list(ydoc *d, ynode *n, const char *what)
{
    size_t i;

    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, n, "%s must be a list", what);
    if (sworn_yaml_len(n) == 0)
        return sworn_yaml_error(d, n, "%s is an empty list (leave the key out to match any)", what);
    if (sworn_yaml_len(n) > SWORN_POLICY_LIST_MAX)
        return sworn_yaml_error(d, n, "%s has more than %u items", what, SWORN_POLICY_LIST_MAX);
    for (i = 0; i < sworn_yaml_len(n); i++)
        if (sworn_yaml_kind(sworn_yaml_item(n, i)) != SWORN_YAML_SCALAR)
            return sworn_yaml_error(d, sworn_yaml_item(n, i), "items of %s must be strings", what);
    return 0;
}

/*
 * Is s text the decision socket accepts (UTF-8 without control characters, as frame.c checks
 * Decision.reason)? A reason that passed here can never make a Decision unsendable.
 */
static int text_ok(const char *s)
{
    return sworn_utf8_check(s, strlen(s), 0, "text") == 0;
}

/* An id: [A-Za-z0-9._-], 1..128 bytes. */
static int id_ok(const char *s)
{
    size_t n = 0;

    for (; *s != '\0'; s++, n++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return n >= 1 && n <= SWORN_POLICY_ID_MAX;
}

/* The list at key (or nothing when absent) compiled as globs. */
static int load_globs(ydoc *d, ynode *map, const char *key, int path, struct pglob **out,
                      size_t *nout)
{
    ynode *n = sworn_yaml_get(map, key);
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, key));
    len = sworn_yaml_len(n);
    *out = calloc(len, sizeof(**out));
    if (*out == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(n, i);
        const char *s = sworn_yaml_text(it, NULL), *why = NULL;

        if (path && s[0] != '/')
            return sworn_yaml_error(d, it, "path pattern \"%.64s\" does not start with '/'", s);
        if (path && ppath_pattern_check(s, &why) != 0)
            return sworn_yaml_error(d, it, "path pattern \"%.64s\" is not in canonical form: %s", s,
                                    why);
        if (pglob_compile(s, path, &(*out)[i], &why) != 0)
            return sworn_yaml_error(d, it, "bad pattern in %s: %s", key, why);
        *nout = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_schemes(ydoc *d, ynode *res, struct prule *r)
{
    ynode *n = sworn_yaml_get(res, "schemes");
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, "schemes"));
    len = sworn_yaml_len(n);
    r->schemes = calloc(len, sizeof(char *));
    if (r->schemes == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(n, i);
        const char *s = sworn_yaml_text(it, NULL);
        size_t k, sl = strlen(s);

        if (sl == 0 || sl > SCHEME_MAX)
            return sworn_yaml_error(d, it, "a scheme is 1..%u characters", SCHEME_MAX);
        for (k = 0; k < sl; k++) {
            char c = s[k];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (k > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-'))))
                return sworn_yaml_error(d, it, "\"%.16s\" is not a URI scheme", s);
        }
        if ((r->schemes[i] = strdup(s)) == NULL)
            return oom();
        for (k = 0; k < sl; k++)
            if (r->schemes[i][k] >= 'A' && r->schemes[i][k] <= 'Z')
                r->schemes[i][k] = (char)(r->schemes[i][k] + 32);
        r->n_schemes = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_methods(ydoc *d, ynode *rule, struct prule *r)
{
    ynode *n = sworn_yaml_get(rule, "methods");
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, "methods"));
    len = sworn_yaml_len(n);
    r->methods = calloc(len, sizeof(char *));
    if (r->methods == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(n, i);
        const char *s = sworn_yaml_text(it, NULL), *why = NULL;
        char buf[160];

        /* The same test as a request's method gets (pmethod_check): a method no request can
         * carry could never match. */
        if (pmethod_check(s, buf, sizeof(buf), &why) != 0)
            return sworn_yaml_error(d, it,
                                    "\"%.32s\" is not an HTTP method in upper case (methods are "
                                    "compared exactly: write GET, not get): %s",
                                    s, why);
        if ((r->methods[i] = strdup(s)) == NULL)
            return oom();
        r->n_methods = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_hosts(ydoc *d, ynode *res, struct prule *r)
{
    ynode *n = sworn_yaml_get(res, "hosts");
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, "hosts"));
    len = sworn_yaml_len(n);
    r->hosts = calloc(len, sizeof(*r->hosts));
    if (r->hosts == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(n, i);
        const char *why = NULL;

        if (phost_compile(sworn_yaml_text(it, NULL), &r->hosts[i], &why) != 0)
            return sworn_yaml_error(d, it, "bad host pattern: %s", why);
        r->n_hosts = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_ports(ydoc *d, ynode *res, struct prule *r)
{
    ynode *n = sworn_yaml_get(res, "ports");
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, "ports"));
    len = sworn_yaml_len(n);
    r->ports = calloc(len, sizeof(*r->ports));
    if (r->ports == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        uint64_t v;

        SWORN_GUARD(sworn_yaml_u64(d, sworn_yaml_item(n, i), 1, 65535, &v));
        r->ports[i] = (uint32_t)v;
        r->n_ports = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_resource(ydoc *d, ynode *rule, struct prule *r)
{
    static const char *const keys[] = {"schemes", "hosts", "ports",           "paths",  "tools",
                                       "prompts", "uris",  "path_parameters", "models", NULL};
    ynode *res = sworn_yaml_get(rule, "resource"), *n;

    if (res == NULL)
        return 0;
    SWORN_GUARD(need_map(d, res, "resource"));
    SWORN_GUARD(sworn_yaml_only_keys(d, res, keys));
    if ((n = sworn_yaml_get(res, "path_parameters")) != NULL) {
        SWORN_GUARD(sworn_yaml_bool(d, n, &r->path_params));
        /* A deny matches a path with parameters whatever it says (on either reading), so a
         * "true" there would only suggest that a "false" one does not. */
        if (r->path_params && r->effect == SWORN__V1__EFFECT__EFFECT_DENY)
            return sworn_yaml_error(d, n,
                                    "path_parameters is only for allow and escalate rules (a deny "
                                    "rule matches paths with parameters whatever it says)");
    }
    SWORN_GUARD(load_schemes(d, res, r));
    SWORN_GUARD(load_hosts(d, res, r));
    SWORN_GUARD(load_ports(d, res, r));
    SWORN_GUARD(load_globs(d, res, "paths", 1, &r->paths, &r->n_paths));
    SWORN_GUARD(load_globs(d, res, "tools", 0, &r->tools, &r->n_tools));
    SWORN_GUARD(load_globs(d, res, "prompts", 0, &r->prompts, &r->n_prompts));
    SWORN_GUARD(load_globs(d, res, "uris", 0, &r->uris, &r->n_uris));
    SWORN_GUARD(load_globs(d, res, "models", 0, &r->models, &r->n_models));
    /* Models are matched lower-cased (policy/resource.h): a pattern with an upper-case letter
     * or a byte a canonical model cannot hold would never match what it names. */
    for (size_t i = 0; i < r->n_models; i++) {
        const char *m = r->models[i].text;

        for (; *m != '\0'; m++)
            if ((*m >= 'A' && *m <= 'Z') || (unsigned char)*m < 0x21 || (unsigned char)*m > 0x7e)
                return sworn_yaml_error(d, sworn_yaml_item(sworn_yaml_get(res, "models"), i),
                                        "a model pattern is lower-case printable ASCII without "
                                        "spaces (models are matched lower-cased)");
    }
    return 0;
fail:
    return -1;
}

/*
 * An issuer of trusted_issuers or of an actor mapping: 1..1024 bytes of text (no control
 * characters), compared byte for byte with the actor's issuer. '*' and '?' are refused: an author
 * who writes them means a glob, and an exact issuer holding them would never be what was meant.
 */
static int issuer_check(ydoc *d, ynode *n, const char *what, const char **out)
{
    const char *s;

    SWORN_GUARD(sworn_yaml_str(d, n, &s));
    if (s[0] == '\0')
        return sworn_yaml_error(d, n,
                                "%s is empty (an actor without an issuer is never trusted, and "
                                "no issuer can name it)",
                                what);
    if (strlen(s) > ISSUER_MAX || !text_ok(s))
        return sworn_yaml_error(d, n, "%s is 1..%u bytes on one line (no control characters)", what,
                                ISSUER_MAX);
    if (strpbrk(s, "*?") != NULL)
        return sworn_yaml_error(d, n,
                                "%s \"%.64s\" holds '*' or '?': issuers are compared exactly, "
                                "never as patterns",
                                what, s);
    *out = s;
    return 0;
fail:
    return -1;
}

/*
 * require_actors or forbid_actors at key of delegation mapping g: each item a subject glob (a
 * plain item) or {issuer: <exact>, subject: <glob>}. narrow: in this list (by the rule's effect)
 * a plain item matches only actors of trusted_issuers, so the policy must have that list.
 */
static int load_actors(ydoc *d, ynode *g, const char *key, const struct prule *r, int narrow,
                       const struct sworn_policy *p, struct pactor **out, size_t *nout)
{
    static const char *const keys[] = {"issuer", "subject", NULL};
    ynode *n = sworn_yaml_get(g, key);
    size_t i, len;

    if (n == NULL)
        return 0;
    /* need_list would refuse mappings: these two lists alone may hold them. */
    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, n, "%s must be a list", key);
    len = sworn_yaml_len(n);
    if (len == 0)
        return sworn_yaml_error(d, n, "%s is an empty list (leave the key out to match any)", key);
    if (len > SWORN_POLICY_LIST_MAX)
        return sworn_yaml_error(d, n, "%s has more than %u items", key, SWORN_POLICY_LIST_MAX);
    *out = calloc(len, sizeof(**out));
    if (*out == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(n, i), *sn = it, *in;
        struct pactor *a = &(*out)[i];
        const char *s, *why = NULL;

        *nout = i + 1; /* freed from here on, whatever fails below */
        if (sworn_yaml_kind(it) == SWORN_YAML_MAP) {
            SWORN_GUARD(need_map(d, it, "an actor"));
            SWORN_GUARD(sworn_yaml_only_keys(d, it, keys));
            if ((in = sworn_yaml_get(it, "issuer")) == NULL)
                return sworn_yaml_error(d, it,
                                        "an item of %s that is a mapping needs an issuer (the "
                                        "exact issuer; a plain string is a subject alone)",
                                        key);
            if ((sn = sworn_yaml_get(it, "subject")) == NULL)
                return sworn_yaml_error(d, it,
                                        "an item of %s that is a mapping needs a subject (a "
                                        "glob; \"*\" for any subject of that issuer)",
                                        key);
            SWORN_GUARD(issuer_check(d, in, "an actor's issuer", &s));
            if ((a->issuer = strdup(s)) == NULL)
                return oom();
        } else if (sworn_yaml_kind(it) != SWORN_YAML_SCALAR) {
            return sworn_yaml_error(
                d, it, "items of %s are subject globs or {issuer, subject} mappings", key);
        }
        SWORN_GUARD(sworn_yaml_str(d, sn, &s));
        if (pglob_compile(s, 0, &a->subject, &why) != 0)
            return sworn_yaml_error(d, sn, "bad pattern in %s: %s", key, why);
        if (a->issuer == NULL && narrow && p->n_trusted == 0)
            return sworn_yaml_error(
                d, it,
                "\"%.64s\" in %s of %s rule %s matches only actors of a trusted issuer, and the "
                "policy has no trusted_issuers: name the issuer ({issuer: \"...\", subject: "
                "\"%.64s\"}) or list trusted_issuers",
                s, key,
                r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW ? "allow" : "a deny or escalate",
                r->id, s);
    }
    return 0;
fail:
    return -1;
}

/* A list of exact strings of 1..256 bytes without control characters (delegation.client_ids,
 * audiences: compared byte for byte, as the proxy records them). */
static int load_exact(ydoc *d, ynode *g, const char *key, char ***out, size_t *n)
{
    ynode *l = sworn_yaml_get(g, key);
    size_t len;

    if (l == NULL)
        return 0;
    SWORN_GUARD(need_list(d, l, key));
    len = sworn_yaml_len(l);
    *out = calloc(len, sizeof(char *));
    if (*out == NULL)
        return oom();
    for (size_t i = 0; i < len; i++) {
        ynode *it = sworn_yaml_item(l, i);
        size_t sl = 0;
        const char *s = sworn_yaml_text(it, &sl);
        int ok = s != NULL && sl >= 1 && sl <= 256;

        for (size_t c = 0; ok && c < sl; c++)
            ok = (unsigned char)s[c] >= 0x20 && s[c] != 0x7f;
        if (!ok)
            return sworn_yaml_error(d, it,
                                    "%s: each item is 1..256 bytes without control characters "
                                    "(compared exactly)",
                                    key);
        if (((*out)[i] = strdup(s)) == NULL)
            return oom();
        *n = i + 1;
    }
    return 0;
fail:
    return -1;
}

static int load_delegation(ydoc *d, ynode *rule, struct prule *r, const struct sworn_policy *p)
{
    static const char *const keys[] = {"required",  "max_depth", "require_actors", "forbid_actors",
                                       "may_act",   "verified",  "require_scopes", "client_ids",
                                       "audiences", NULL};
    static const struct {
        const char *name;
        int v;
    } may[] = {{"unknown", SWORN__V1__MAY_ACT__RESULT__RESULT_UNKNOWN},
               {"allowed", SWORN__V1__MAY_ACT__RESULT__RESULT_ALLOWED},
               {"denied", SWORN__V1__MAY_ACT__RESULT__RESULT_DENIED},
               {"not_present", SWORN__V1__MAY_ACT__RESULT__RESULT_NOT_PRESENT}};
    ynode *g = sworn_yaml_get(rule, "delegation"), *n;
    size_t i;

    r->deleg_required = -1;
    r->may_act = -1;
    r->deleg_verified = -1;
    if (g == NULL)
        return 0;
    SWORN_GUARD(need_map(d, g, "delegation"));
    SWORN_GUARD(sworn_yaml_only_keys(d, g, keys));
    if ((n = sworn_yaml_get(g, "required")) != NULL) {
        SWORN_GUARD(sworn_yaml_bool(d, n, &r->deleg_required));
        if (r->deleg_required == 0 && sworn_yaml_len(g) > 1)
            return sworn_yaml_error(d, n,
                                    "required: false (no delegation) cannot be combined with "
                                    "other delegation conditions");
    }
    if ((n = sworn_yaml_get(g, "max_depth")) != NULL) {
        SWORN_GUARD(sworn_yaml_u64(d, n, 0, DEPTH_MAX, &r->max_depth));
        r->has_max_depth = 1;
    }
    /* Plain items read in the direction that fails closed (docs/policy.md 2.5): narrow where
     * matching grants (require in an allow, forbid in a deny or escalate), broad elsewhere. */
    r->trusted = p->trusted;
    r->n_trusted = p->n_trusted;
    SWORN_GUARD(load_actors(d, g, "require_actors", r, r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW,
                            p, &r->req_actors, &r->n_req_actors));
    SWORN_GUARD(load_actors(d, g, "forbid_actors", r, r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW,
                            p, &r->forbid_actors, &r->n_forbid_actors));
    if ((n = sworn_yaml_get(g, "may_act")) != NULL) {
        const char *s;

        SWORN_GUARD(sworn_yaml_str(d, n, &s));
        for (i = 0; i < sizeof(may) / sizeof(may[0]); i++)
            if (strcmp(s, may[i].name) == 0)
                r->may_act = may[i].v;
        if (r->may_act < 0)
            return sworn_yaml_error(d, n,
                                    "may_act must be one of allowed, denied, not_present, unknown");
    }
    if ((n = sworn_yaml_get(g, "verified")) != NULL)
        SWORN_GUARD(sworn_yaml_bool(d, n, &r->deleg_verified));
    if ((n = sworn_yaml_get(g, "require_scopes")) != NULL) {
        size_t len;

        SWORN_GUARD(need_list(d, n, "require_scopes"));
        len = sworn_yaml_len(n);
        r->req_scopes = calloc(len, sizeof(char *));
        if (r->req_scopes == NULL)
            return oom();
        for (i = 0; i < len; i++) {
            ynode *it = sworn_yaml_item(n, i);
            size_t sl = 0;
            const char *s = sworn_yaml_text(it, &sl);
            int ok = s != NULL && sl >= 1 && sl <= 256;

            /* RFC 6749 3.3's scope-token: what a request's scopes can hold (wire/frame.c). */
            for (size_t c = 0; ok && c < sl; c++)
                ok = (s[c] == 0x21 || (s[c] >= 0x23 && s[c] <= 0x5b) ||
                      (s[c] >= 0x5d && s[c] <= 0x7e));
            if (!ok)
                return sworn_yaml_error(d, it,
                                        "require_scopes: each item is an RFC 6749 scope-token "
                                        "(1..256 printable ASCII characters but space, \" and \\)");
            if ((r->req_scopes[i] = strdup(s)) == NULL)
                return oom();
            r->n_req_scopes = i + 1;
        }
    }
    SWORN_GUARD(load_exact(d, g, "client_ids", &r->client_ids, &r->n_client_ids));
    SWORN_GUARD(load_exact(d, g, "audiences", &r->audiences, &r->n_audiences));
    return 0;
fail:
    return -1;
}

/* "HH:MM" at s (5 bytes) into minutes; end allows 24:00. 0 or -1. */
static int hhmm(const char *s, int end, unsigned *out)
{
    unsigned h, m;

    if (!(s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == ':' && s[3] >= '0' &&
          s[3] <= '9' && s[4] >= '0' && s[4] <= '9'))
        return -1;
    h = (unsigned)(s[0] - '0') * 10 + (unsigned)(s[1] - '0');
    m = (unsigned)(s[3] - '0') * 10 + (unsigned)(s[4] - '0');
    if (m > 59 || h > 24 || (h == 24 && (m != 0 || !end)))
        return -1;
    *out = h * 60 + m;
    return 0;
}

static int load_time(ydoc *d, ynode *rule, struct prule *r)
{
    static const char *const keys[] = {"days", "hours", NULL};
    static const char *const names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
    ynode *t = sworn_yaml_get(rule, "time"), *n;
    size_t i, k;

    r->days = 0x7f;
    r->start_min = 0;
    r->end_min = 1440;
    if (t == NULL)
        return 0;
    r->has_time = 1;
    SWORN_GUARD(need_map(d, t, "time"));
    SWORN_GUARD(sworn_yaml_only_keys(d, t, keys));
    if ((n = sworn_yaml_get(t, "days")) != NULL) {
        SWORN_GUARD(need_list(d, n, "days"));
        r->days = 0;
        for (i = 0; i < sworn_yaml_len(n); i++) {
            ynode *it = sworn_yaml_item(n, i);
            const char *s = sworn_yaml_text(it, NULL);

            for (k = 0; k < 7 && strcmp(s, names[k]) != 0; k++)
                ;
            if (k == 7)
                return sworn_yaml_error(d, it,
                                        "a day is one of mon, tue, wed, thu, fri, sat, "
                                        "sun (lower case)");
            if (r->days & (1u << k))
                return sworn_yaml_error(d, it, "day %s is listed twice", s);
            r->days |= 1u << k;
        }
    }
    if ((n = sworn_yaml_get(t, "hours")) != NULL) {
        const char *s;

        SWORN_GUARD(sworn_yaml_str(d, n, &s));
        if (strlen(s) != 11 || s[5] != '-' || hhmm(s, 0, &r->start_min) != 0 ||
            hhmm(s + 6, 1, &r->end_min) != 0)
            return sworn_yaml_error(d, n, "hours must be \"HH:MM-HH:MM\" (UTC, 00:00..24:00)");
        if (r->start_min >= r->end_min)
            return sworn_yaml_error(d, n,
                                    "hours must start before they end (a range across midnight "
                                    "is two rules)");
    }
    return 0;
fail:
    return -1;
}

/* RFC 6901: '/'-separated reference tokens, '~' only as "~0" or "~1". */
static int pointer_ok(const char *s)
{
    size_t n = strlen(s);

    if (n < 1 || n > POINTER_MAX || s[0] != '/' || !text_ok(s))
        return 0;
    for (; *s != '\0'; s++)
        if (*s == '~' && s[1] != '0' && s[1] != '1')
            return 0;
    return 1;
}

static int load_per(ydoc *d, ynode *map, struct pbudget *bg)
{
    ynode *n = sworn_yaml_get(map, "per");
    const char *s;

    if (n == NULL)
        return 0;
    SWORN_GUARD(sworn_yaml_str(d, n, &s));
    if (strcmp(s, "global") == 0)
        bg->global = 1;
    else if (strcmp(s, "sandbox") == 0)
        bg->sandbox = 1;
    else if (strcmp(s, "principal") != 0)
        return sworn_yaml_error(d, n, "per must be principal, sandbox or global");
    return 0;
fail:
    return -1;
}

static int load_window(ydoc *d, ynode *map, struct pbudget *bg, const char *what)
{
    ynode *n = sworn_yaml_get(map, "window");

    if (n == NULL)
        return sworn_yaml_error(d, map, "%s needs a window", what);
    SWORN_GUARD(sworn_yaml_duration_ms(d, n, &bg->window_ms));
    if (bg->window_ms < WINDOW_MIN_MS || bg->window_ms > WINDOW_MAX_MS)
        return sworn_yaml_error(d, n, "a window is 1s..366d");
    if ((bg->window_text = strdup(sworn_yaml_text(n, NULL))) == NULL)
        return oom();
    return 0;
fail:
    return -1;
}

static int load_budgets(ydoc *d, ynode *rule, struct prule *r, ynode *effect_node)
{
    static const char *const ckeys[] = {"count", "window", "per", NULL};
    static const char *const skeys[] = {"pointer", "max", "window", "per", NULL};
    static const char *const tkeys[] = {"max", "window", "per", NULL};
    ynode *c = sworn_yaml_get(rule, "budget"), *s = sworn_yaml_get(rule, "sum"), *n;
    ynode *t = sworn_yaml_get(rule, "tokens");

    if ((c != NULL || s != NULL || t != NULL) && r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
        return sworn_yaml_error(d,
                                c != NULL   ? c
                                : s != NULL ? s
                                            : t,
                                "budgets are only for allow rules (this rule's effect is at "
                                "%u:%u)",
                                sworn_yaml_line(effect_node), sworn_yaml_col(effect_node));
    if (c != NULL) {
        SWORN_GUARD(need_map(d, c, "budget"));
        SWORN_GUARD(sworn_yaml_only_keys(d, c, ckeys));
        if ((n = sworn_yaml_get(c, "count")) == NULL)
            return sworn_yaml_error(d, c, "budget needs a count");
        SWORN_GUARD(sworn_yaml_u64(d, n, 1, COUNT_MAX, &r->count.limit));
        SWORN_GUARD(load_window(d, c, &r->count, "budget"));
        SWORN_GUARD(load_per(d, c, &r->count));
        r->count.on = 1;
    }
    if (s != NULL) {
        const char *txt, *why = NULL;

        SWORN_GUARD(need_map(d, s, "sum"));
        SWORN_GUARD(sworn_yaml_only_keys(d, s, skeys));
        if ((n = sworn_yaml_get(s, "pointer")) == NULL)
            return sworn_yaml_error(d, s, "sum needs a pointer");
        SWORN_GUARD(sworn_yaml_str(d, n, &txt));
        if (!pointer_ok(txt))
            return sworn_yaml_error(d, n,
                                    "pointer must be an RFC 6901 JSON pointer (\"/amount\"), "
                                    "1..256 bytes");
        if ((r->sum.pointer = strdup(txt)) == NULL)
            return oom();
        if ((n = sworn_yaml_get(s, "max")) == NULL)
            return sworn_yaml_error(d, s, "sum needs a max");
        SWORN_GUARD(sworn_yaml_str(d, n, &txt));
        if (pdec_parse_max(txt, &r->sum.limit, &why) != 0)
            return sworn_yaml_error(d, n, "max: %s", why);
        SWORN_GUARD(load_window(d, s, &r->sum, "sum"));
        SWORN_GUARD(load_per(d, s, &r->sum));
        r->sum.on = 1;
    }
    if (t != NULL) {
        SWORN_GUARD(need_map(d, t, "tokens"));
        SWORN_GUARD(sworn_yaml_only_keys(d, t, tkeys));
        if ((n = sworn_yaml_get(t, "max")) == NULL)
            return sworn_yaml_error(d, t, "tokens needs a max");
        SWORN_GUARD(sworn_yaml_u64(d, n, 1, TOKENS_MAX, &r->tokens.limit));
        SWORN_GUARD(load_window(d, t, &r->tokens, "tokens"));
        SWORN_GUARD(load_per(d, t, &r->tokens));
        r->tokens.on = 1;
    }
    return 0;
fail:
    return -1;
}

/* The keys of a rule (docs/policy.md section 1): what the loader accepts and lint knows. */
static const char *const rule_keys[] = {
    "id",         "effect", "reason", "principals", "operations", "resource",           "methods",
    "delegation", "time",   "budget", "sum",        "credential", "escalation_timeout", "tokens",
    NULL};

/*
 * Keep what the lint module needs (policy_int.h): the rule's position, and whether any key of it
 * is one that lint.c does not know (a key added later, which may widen or narrow what the rule
 * matches in a way lint cannot judge).
 */
/* 1 when the mapping m has a key that is not in known (NULL-terminated). */
static int has_unknown_key(ynode *m, const char *const *known)
{
    for (size_t i = 0; i < sworn_yaml_len(m); i++) {
        const char *key = sworn_yaml_key(m, i);
        size_t k;

        for (k = 0; key != NULL && known[k] != NULL && strcmp(known[k], key) != 0; k++)
            ;
        if (known[k] == NULL)
            return 1;
    }
    return 0;
}

static void note_for_lint(ynode *rn, struct prule *r)
{
    /* Not path_parameters: lint does not judge what it permits. */
    static const char *const known_res[] = {"schemes", "hosts",  "ports", "paths",
                                            "tools",   "models", NULL};
    ynode *res = sworn_yaml_get(rn, "resource");

    r->line = sworn_yaml_line(rn);
    r->col = sworn_yaml_col(rn);
    r->has_delegation = sworn_yaml_get(rn, "delegation") != NULL;
    /* A resource that is not a mapping is refused by load_resource, after this. */
    r->lint_opaque = has_unknown_key(rn, rule_keys) ||
                     (sworn_yaml_kind(res) == SWORN_YAML_MAP && has_unknown_key(res, known_res));
}

static int load_rule(ydoc *d, ynode *rn, struct prule *r, const struct sworn_policy *p)
{
    ynode *n, *en;
    const char *s;

    if (sworn_yaml_kind(rn) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, rn, "a rule must be a mapping");
    SWORN_GUARD(sworn_yaml_only_keys(d, rn, rule_keys));
    note_for_lint(rn, r);
    if ((n = sworn_yaml_get(rn, "id")) == NULL)
        return sworn_yaml_error(d, rn, "a rule needs an id");
    SWORN_GUARD(sworn_yaml_str(d, n, &s));
    if (!id_ok(s))
        return sworn_yaml_error(d, n, "a rule id is 1..128 characters of A-Z a-z 0-9 . _ -");
    memcpy(r->id, s, strlen(s) + 1);
    if ((en = sworn_yaml_get(rn, "effect")) == NULL)
        return sworn_yaml_error(d, rn, "rule %s needs an effect", r->id);
    SWORN_GUARD(sworn_yaml_str(d, en, &s));
    if (strcmp(s, "allow") == 0)
        r->effect = SWORN__V1__EFFECT__EFFECT_ALLOW;
    else if (strcmp(s, "deny") == 0)
        r->effect = SWORN__V1__EFFECT__EFFECT_DENY;
    else if (strcmp(s, "escalate") == 0)
        r->effect = SWORN__V1__EFFECT__EFFECT_ESCALATE;
    else
        return sworn_yaml_error(d, en, "effect must be allow, deny or escalate");
    if ((n = sworn_yaml_get(rn, "reason")) != NULL) {
        SWORN_GUARD(sworn_yaml_str(d, n, &s));
        if (s[0] == '\0' || strlen(s) > SWORN_POLICY_REASON_MAX || !text_ok(s))
            return sworn_yaml_error(d, n,
                                    "a reason is 1..1024 bytes on one line (no control "
                                    "characters)");
        if ((r->reason = strdup(s)) == NULL)
            return oom();
    }
    SWORN_GUARD(load_globs(d, rn, "principals", 0, &r->principals, &r->n_principals));
    SWORN_GUARD(load_globs(d, rn, "operations", 0, &r->operations, &r->n_operations));
    SWORN_GUARD(load_resource(d, rn, r));
    SWORN_GUARD(load_methods(d, rn, r));
    SWORN_GUARD(load_delegation(d, rn, r, p));
    SWORN_GUARD(load_time(d, rn, r));
    SWORN_GUARD(load_budgets(d, rn, r, en));
    if ((n = sworn_yaml_get(rn, "credential")) != NULL) {
        if (r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
            return sworn_yaml_error(d, n, "a credential is only for allow rules");
        SWORN_GUARD(sworn_yaml_str(d, n, &s));
        if (!id_ok(s))
            return sworn_yaml_error(d, n,
                                    "a credential id is 1..128 characters of A-Z a-z 0-9 . _ -");
        memcpy(r->credential, s, strlen(s) + 1);
    }
    if ((n = sworn_yaml_get(rn, "escalation_timeout")) != NULL) {
        if (r->effect != SWORN__V1__EFFECT__EFFECT_ESCALATE)
            return sworn_yaml_error(d, n, "escalation_timeout is only for escalate rules");
        SWORN_GUARD(sworn_yaml_duration_ms(d, n, &r->escalation_timeout_ms));
        if (r->escalation_timeout_ms < 1000 || r->escalation_timeout_ms > TIMEOUT_MAX_MS)
            return sworn_yaml_error(d, n, "escalation_timeout is 1s..7d");
    }
    return 0;
fail:
    return -1;
}

struct id_at {
    const char *id;
    size_t at;
};

static int cmp_id_at(const void *a, const void *b)
{
    const struct id_at *x = a, *y = b;
    int c = strcmp(x->id, y->id);

    if (c != 0)
        return c;
    return x->at < y->at ? -1 : 1;
}

/* Refuse two rules with one id; names the later one. O(n log n). */
static int check_unique(ydoc *d, ynode *rules, struct sworn_policy *p)
{
    struct id_at *idx = calloc(p->nrules, sizeof(*idx));
    size_t i;
    int rc = 0;

    if (idx == NULL)
        return oom();
    for (i = 0; i < p->nrules; i++) {
        idx[i].id = p->rules[i].id;
        idx[i].at = i;
    }
    qsort(idx, p->nrules, sizeof(*idx), cmp_id_at);
    for (i = 1; i < p->nrules; i++) {
        if (strcmp(idx[i - 1].id, idx[i].id) != 0)
            continue;
        rc = sworn_yaml_error(d, sworn_yaml_get(sworn_yaml_item(rules, idx[i].at), "id"),
                              "duplicate rule id \"%s\" (first used by rule %zu of the list)",
                              idx[i].id, idx[i - 1].at + 1);
        break;
    }
    free(idx);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* trusted_issuers: the issuers whose actors plain items of a narrow list match (2.5). */
static int load_trusted(ydoc *d, ynode *root, struct sworn_policy *p)
{
    ynode *n = sworn_yaml_get(root, "trusted_issuers");
    size_t i, len;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_list(d, n, "trusted_issuers"));
    len = sworn_yaml_len(n);
    p->trusted = calloc(len, sizeof(char *));
    if (p->trusted == NULL)
        return oom();
    for (i = 0; i < len; i++) {
        const char *s;

        SWORN_GUARD(issuer_check(d, sworn_yaml_item(n, i), "a trusted issuer", &s));
        if ((p->trusted[i] = strdup(s)) == NULL)
            return oom();
        p->n_trusted = i + 1;
    }
    /* Sorted for bsearch at evaluation (pactor_match). */
    qsort(p->trusted, p->n_trusted, sizeof(char *), cmp_str);
    return 0;
fail:
    return -1;
}

static int load_doc(ydoc *d, struct sworn_policy **out)
{
    static const char *const keys[] = {"version", "trusted_issuers", "rules", NULL};
    ynode *root = sworn_yaml_root(d), *n, *rules;
    struct sworn_policy *p = calloc(1, sizeof(*p));
    size_t i;

    if (p == NULL)
        return oom();
    sworn_yaml_digest(d, p->digest);
    SWORN_GUARD(sworn_yaml_only_keys(d, root, keys));
    if ((n = sworn_yaml_get(root, "version")) != NULL)
        SWORN_GUARD(sworn_yaml_u64(d, n, 0, UINT64_MAX, &p->version));
    SWORN_GUARD(load_trusted(d, root, p));
    if ((rules = sworn_yaml_get(root, "rules")) == NULL) {
        sworn_yaml_error(d, root, "the policy needs a rules list");
        goto fail;
    }
    if (sworn_yaml_kind(rules) != SWORN_YAML_SEQ || sworn_yaml_len(rules) == 0) {
        sworn_yaml_error(d, rules, "rules must be a non-empty list");
        goto fail;
    }
    if (sworn_yaml_len(rules) > SWORN_POLICY_RULES_MAX) {
        sworn_yaml_error(d, rules, "more than %u rules", SWORN_POLICY_RULES_MAX);
        goto fail;
    }
    p->rules = calloc(sworn_yaml_len(rules), sizeof(*p->rules));
    SWORN_ENSURE(p->rules != NULL, SWORN_ERR_NOMEM, "out of memory loading the policy");
    for (i = 0; i < sworn_yaml_len(rules); i++) {
        struct prule *r = &p->rules[i];

        p->nrules = i + 1;
        SWORN_GUARD(load_rule(d, sworn_yaml_item(rules, i), r, p));
        p->path_params |= r->path_params;
        if (r->count.on && r->count.window_ms > p->max_window_ms)
            p->max_window_ms = r->count.window_ms;
        if (r->sum.on && r->sum.window_ms > p->max_window_ms)
            p->max_window_ms = r->sum.window_ms;
        if (r->tokens.on && r->tokens.window_ms > p->max_window_ms)
            p->max_window_ms = r->tokens.window_ms;
    }
    SWORN_GUARD(check_unique(d, rules, p));
    *out = p;
    return 0;
fail:
    sworn_policy_free(p);
    return -1;
}

int sworn_policy_load_mem(const char *name, const uint8_t *p, size_t len, struct sworn_policy **out)
{
    struct sworn_yaml_doc *d = NULL;
    int rc;

    if (name == NULL || (p == NULL && len > 0) || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_load_mem: bad arguments");
    if (sworn_yaml_load_mem(name, p, len, &d) != 0)
        return -1;
    rc = load_doc(d, out);
    sworn_yaml_free(d);
    return rc;
}

int sworn_policy_load_file(const char *path, struct sworn_policy **out)
{
    struct sworn_yaml_doc *d = NULL;
    int rc;

    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_load_file: bad arguments");
    if (sworn_yaml_load_file(path, &d) != 0)
        return -1;
    rc = load_doc(d, out);
    sworn_yaml_free(d);
    return rc;
}

int sworn_policy_load_trusted(const char *path, struct sworn_policy **out)
{
    char *data = NULL;
    size_t len = 0;
    int rc;

    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_load_trusted: bad arguments");
    if (sworn_safefile_read(path, 0, SWORN_SAFEFILE_NOBODY, "policy", SWORN_YAML_MAX_BYTES, &data,
                            &len) != 0)
        return -1;
    rc = sworn_policy_load_mem(path, (const uint8_t *)data, len, out);
    free(data);
    return rc;
}

void sworn_policy_digest(const struct sworn_policy *p, uint8_t out[32])
{
    memcpy(out, p->digest, 32);
}

uint64_t sworn_policy_version(const struct sworn_policy *p)
{
    return p->version;
}

size_t sworn_policy_rule_count(const struct sworn_policy *p)
{
    return p->nrules;
}

uint64_t sworn_policy_max_window_ms(const struct sworn_policy *p)
{
    return p->max_window_ms;
}

const struct prule *policy_find_rule(const struct sworn_policy *p, const char *id)
{
    for (size_t i = 0; i < p->nrules; i++)
        if (strcmp(p->rules[i].id, id) == 0)
            return &p->rules[i];
    return NULL;
}

/* --- Evaluation --- */

static int any_glob(const struct pglob *g, size_t n, const char *s)
{
    size_t len = strlen(s);

    for (size_t i = 0; i < n; i++)
        if (pglob_match(&g[i], s, len))
            return 1;
    return 0;
}

/* Does an item of list (n items) match actor a? narrow: see pactor_match. */
static int any_actor(const struct prule *r, const struct pactor *list, size_t n, int narrow,
                     const Sworn__V1__Actor *a)
{
    /* Optional strings may be NULL in a message built by hand (unpacked ones never are). */
    const char *iss = a->issuer != NULL ? a->issuer : "";

    for (size_t k = 0; k < n; k++)
        if (pactor_match(&list[k], narrow, a->subject, iss, r->trusted, r->n_trusted))
            return 1;
    return 0;
}

/*
 * An actor is the pair (issuer, subject) (RFC 8693 4.1, OIDC Core 2). Plain items are read in the
 * direction that fails closed: in an allow rule require_actors is narrow (only a trusted actor
 * grants) and forbid_actors broad (no issuer dodges it); in a deny or escalate rule the other way
 * round, so that no issuer dodges a deny's require_actors or satisfies its forbid_actors.
 */
static int match_delegation(const struct prule *r, const Sworn__V1__Delegation *g)
{
    int allow = r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW;
    size_t i, k;

    if (r->deleg_required == 1 && g == NULL)
        return 0;
    if (r->deleg_required == 0 && g != NULL)
        return 0;
    if (r->has_max_depth && g != NULL && g->n_actors > r->max_depth)
        return 0;
    for (k = 0; k < r->n_req_actors; k++) {
        int found = 0;

        for (i = 0; g != NULL && i < g->n_actors && !found; i++)
            found = any_actor(r, &r->req_actors[k], 1, allow, g->actors[i]);
        if (!found)
            return 0;
    }
    for (i = 0; g != NULL && i < g->n_actors; i++)
        if (any_actor(r, r->forbid_actors, r->n_forbid_actors, !allow, g->actors[i]))
            return 0;
    if (r->may_act >= 0) {
        int got = SWORN__V1__MAY_ACT__RESULT__RESULT_UNKNOWN;

        if (g == NULL)
            return 0;
        if (g->may_act != NULL)
            got = (int)g->may_act->result;
        if (got != r->may_act)
            return 0;
    }
    if (r->deleg_verified >= 0) {
        int verified =
            g != NULL && g->verification != NULL &&
            g->verification->result == SWORN__V1__DELEGATION_VERIFICATION__RESULT__RESULT_VERIFIED;

        if (g == NULL || verified != r->deleg_verified)
            return 0;
    }
    for (k = 0; k < r->n_req_scopes; k++) {
        int found = 0;

        for (i = 0; g != NULL && i < g->n_scopes && !found; i++)
            found = strcmp(g->scopes[i], r->req_scopes[k]) == 0;
        if (!found)
            return 0;
    }
    if (r->n_client_ids > 0) {
        int found = 0;

        for (k = 0; g != NULL && k < r->n_client_ids && !found; k++)
            found = g->client_id != NULL && strcmp(g->client_id, r->client_ids[k]) == 0;
        if (!found)
            return 0;
    }
    if (r->n_audiences > 0) {
        int found = 0;

        for (k = 0; g != NULL && k < r->n_audiences && !found; k++)
            for (i = 0; i < g->n_audience && !found; i++)
                found = strcmp(g->audience[i], r->audiences[k]) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

static int match_time(const struct prule *r, uint64_t now_ms)
{
    uint64_t days = now_ms / 86400000u;
    unsigned wday = (unsigned)((days + 4) % 7); /* 1970-01-01 was a Thursday; 0 = Sunday */
    unsigned minute = (unsigned)(now_ms % 86400000u / 60000u);

    if (!r->has_time)
        return 1;
    return (r->days & (1u << wday)) != 0 && minute >= r->start_min && minute < r->end_min;
}

/* Does r match q, whose resource's canonical form is res? */
static int rule_matches(const struct prule *r, const Sworn__V1__AuthorizationRequest *q,
                        const struct sworn_resource *res, uint64_t now_ms)
{
    /* Optional strings may be NULL in a message built by hand (unpacked ones never are). */
    const char *method = q->context != NULL && q->context->method != NULL ? q->context->method : "";
    const char *path = res->bare, *tool = res->tool;
    size_t i, plen;
    int ok;

    if (r->n_principals > 0 && !any_glob(r->principals, r->n_principals, q->principal->id))
        return 0;
    if (r->n_operations > 0 && !any_glob(r->operations, r->n_operations, q->operation))
        return 0;
    if (r->n_schemes > 0) {
        for (ok = 0, i = 0; i < r->n_schemes && !ok; i++)
            ok = strcmp(r->schemes[i], res->scheme) == 0; /* both lower case */
        if (!ok)
            return 0;
    } else if (r->effect != SWORN__V1__EFFECT__EFFECT_DENY &&
               strcmp(res->scheme, SWORN_RESOURCE_SCHEME_TCP) == 0) {
        /* A raw tunnel only where a rule names it: an allow or escalate rule written for HTTP
         * must never open raw TCP, while a deny of a host covers its raw ports too
         * (docs/policy.md 2.2). */
        return 0;
    }
    if (r->n_hosts > 0) {
        for (ok = 0, i = 0; i < r->n_hosts && !ok; i++)
            ok = phost_match(&r->hosts[i], res);
        if (!ok)
            return 0;
    }
    if (r->n_ports > 0) {
        for (ok = 0, i = 0; i < r->n_ports && !ok; i++)
            ok = r->ports[i] == res->port;
        if (!ok)
            return 0;
    }
    if (r->n_paths > 0) {
        /* The query (from the first '?') is not matched. A path with parameters has two
         * readings: without them (Tomcat, Jetty, Spring) and as written (nginx and most
         * others, where "a;x" is one segment). An allow must hold for both; a deny or an
         * escalation applies when it names either. */
        plen = res->bare_len;
        for (ok = 0, i = 0; i < r->n_paths && !ok; i++)
            ok = pglob_match(&r->paths[i], path, plen);
        if (res->path_params) {
            int full = 0;

            for (i = 0; i < r->n_paths && !full; i++)
                full = pglob_match(&r->paths[i], res->path, res->path_len);
            ok = r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW ? ok && full : ok || full;
        }
        if (!ok)
            return 0;
    }
    /* Resource.tool names a tool in mcp.tools/call and a prompt in mcp.prompts/get: each list
     * matches only its own operation, so a rule written for a tool never matches a prompt of
     * the same name (docs/policy.md 2.1). */
    if (r->n_tools > 0 && (tool[0] == '\0' || strcmp(q->operation, SWORN_POLICY_OP_TOOL) != 0 ||
                           !any_glob(r->tools, r->n_tools, tool)))
        return 0;
    if (r->n_prompts > 0 && (tool[0] == '\0' || strcmp(q->operation, SWORN_POLICY_OP_PROMPT) != 0 ||
                             !any_glob(r->prompts, r->n_prompts, tool)))
        return 0;
    if (r->n_uris > 0 && (res->uri[0] == '\0' || !any_glob(r->uris, r->n_uris, res->uri)))
        return 0;
    if (r->n_models > 0 && (res->model[0] == '\0' || !any_glob(r->models, r->n_models, res->model)))
        return 0;
    if (r->n_methods > 0) {
        for (ok = 0, i = 0; i < r->n_methods && !ok; i++)
            ok = strcmp(r->methods[i], method) == 0;
        if (!ok)
            return 0;
    }
    if (!match_delegation(r, q->delegation))
        return 0;
    return match_time(r, now_ms);
}

static void set_reason(struct sworn_policy_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_reason(struct sworn_policy_result *out, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
    va_end(ap);
}

static void decide(struct sworn_policy_result *out, const struct prule *r, Sworn__V1__Effect e,
                   const char *verb)
{
    out->effect = e;
    memcpy(out->rule_id, r->id, strlen(r->id) + 1);
    if (r->reason != NULL)
        set_reason(out, "%s", r->reason);
    else
        set_reason(out, "%s by rule %s", verb, r->id);
}

/* Format ms since the epoch as RFC 3339 UTC into buf (>= 96 bytes). */
static void rfc3339(uint64_t ms, char *buf, size_t cap)
{
    /* Civil-from-days (H. Hinnant), valid for every uint64 day count we can meet. */
    uint64_t secs = ms / 1000, days = secs / 86400, sod = secs % 86400;
    int64_t z = (int64_t)days + 719468, era = z / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100),
            mp = (5 * doy + 2) / 153;
    int64_t dd = doy - (153 * mp + 2) / 5 + 1, mm = mp < 10 ? mp + 3 : mp - 9;

    if (mm <= 2)
        y++;
    snprintf(buf, cap, "%04lld-%02lld-%02lldT%02u:%02u:%02uZ", (long long)y, (long long)mm,
             (long long)dd, (unsigned)(sod / 3600), (unsigned)(sod / 60 % 60),
             (unsigned)(sod % 60));
}

/* Find the one JSON number at pointer; 0 found, 1 none, 2 more than one. */
static int find_number(const Sworn__V1__AuthorizationRequest *q, const char *pointer,
                       const char **value)
{
    int found = 0;

    if (q->context == NULL)
        return 1;
    for (size_t i = 0; i < q->context->n_json_numbers; i++) {
        const Sworn__V1__JsonNumber *jn = q->context->json_numbers[i];

        if (jn != NULL && strcmp(jn->pointer, pointer) == 0) {
            if (found)
                return 2;
            found = 1;
            *value = jn->value;
        }
    }
    return found ? 0 : 1;
}

static int has_budget(const struct prule *r)
{
    return r->count.on || r->sum.on || r->tokens.on;
}

/* The request's token ceiling (context.token_ceiling): 0 with *tokens, or 1 when it names none. */
static int find_ceiling(const Sworn__V1__AuthorizationRequest *q, uint64_t *tokens)
{
    if (q->context == NULL || q->context->token_ceiling == NULL)
        return 1;
    *tokens = q->context->token_ceiling->tokens;
    return 0;
}

/* What one charge of an allow is for: the rule, its budget, and why a sum cannot be measured. */
struct slot {
    const struct prule *r;
    const struct pbudget *bg;
    int unmeasured; /* 0; else find_number's 1 (none) or 2 (several), or 3 (why); 4: no
                       token ceiling */
    const char *why;
};

/*
 * Append the charges of allow rule r for q at now to c/limits/slots (at *n). A sum that cannot
 * be measured becomes one charge that never fits (amount UINT64_MAX, limit 0; policy_int.h), in
 * place of the rule's charges, so that budget_charge finds the first refusing rule in file order
 * and the rule's own reason is the sum's, as when it decided alone. 0, or -1 (hash failure).
 */
static int add_charges(const struct prule *r, const Sworn__V1__AuthorizationRequest *q,
                       uint64_t now, struct sworn_policy_charge *c, uint64_t *limits,
                       struct slot *slots, size_t *n)
{
    const char *value = NULL, *why = NULL;
    uint64_t amount = 0, ceiling = 0;
    int f = 0;

    /* A token budget that cannot reserve (no ceiling) never fits, like an unmeasured sum. */
    if (r->tokens.on && find_ceiling(q, &ceiling) != 0) {
        if (budget_key(r, &r->tokens, PBUDGET_TOKENS, q->principal, now, &c[*n]) != 0)
            return -1;
        c[*n].amount = UINT64_MAX;
        c[*n].tokens = 0; /* never made: no settlement */
        limits[*n] = 0;
        slots[(*n)++] = (struct slot){r, &r->tokens, 4, NULL};
        return 0;
    }
    if (r->sum.on) {
        f = find_number(q, r->sum.pointer, &value);
        if (f == 0 && pdec_parse_json(value, &amount, &why) != 0)
            f = 3;
        if (f != 0) {
            if (budget_key(r, &r->sum, PBUDGET_SUM, q->principal, now, &c[*n]) != 0)
                return -1;
            c[*n].amount = UINT64_MAX;
            limits[*n] = 0;
            slots[(*n)++] = (struct slot){r, &r->sum, f, why};
            return 0;
        }
    }
    /* The count first: a request that exhausts both names the count (docs/policy.md 4.4). */
    if (r->count.on) {
        if (budget_key(r, &r->count, PBUDGET_COUNT, q->principal, now, &c[*n]) != 0)
            return -1;
        c[*n].amount = 1;
        limits[*n] = r->count.limit;
        slots[(*n)++] = (struct slot){r, &r->count, 0, NULL};
    }
    if (r->sum.on) {
        if (budget_key(r, &r->sum, PBUDGET_SUM, q->principal, now, &c[*n]) != 0)
            return -1;
        c[*n].amount = amount;
        limits[*n] = r->sum.limit;
        slots[(*n)++] = (struct slot){r, &r->sum, 0, NULL};
    }
    if (r->tokens.on) {
        if (budget_key(r, &r->tokens, PBUDGET_TOKENS, q->principal, now, &c[*n]) != 0)
            return -1;
        c[*n].amount = ceiling;
        limits[*n] = r->tokens.limit;
        slots[(*n)++] = (struct slot){r, &r->tokens, 0, NULL};
    }
    return 0;
}

static void deny_by(struct sworn_policy_result *out, const struct prule *r)
{
    out->effect = SWORN__V1__EFFECT__EFFECT_DENY;
    memcpy(out->rule_id, r->id, strlen(r->id) + 1);
}

static const char *scope_text(const struct pbudget *bg)
{
    return bg->global    ? "for all principals together"
           : bg->sandbox ? "per sandbox run"
                         : "per principal";
}

/* The DENY of slot s, which did not fit (used: its counter; amount: what the request asked). */
static void deny_budget(struct sworn_policy_result *out, const struct slot *s, uint64_t used,
                        uint64_t amount, uint64_t now)
{
    const struct prule *r = s->r;
    const struct pbudget *bg = s->bg;
    char start[96], a[40], u[40], m[40];
    uint64_t ws = now - now % bg->window_ms;

    deny_by(out, r);
    if (s->unmeasured == 1) {
        set_reason(out, "sum budget of rule %s: the request has no number at %s", r->id,
                   bg->pointer);
        return;
    }
    if (s->unmeasured == 2) {
        set_reason(out, "sum budget of rule %s: the request has more than one number at %s", r->id,
                   bg->pointer);
        return;
    }
    if (s->unmeasured == 3) {
        set_reason(out, "sum budget of rule %s: the number at %s is %s", r->id, bg->pointer,
                   s->why);
        return;
    }
    if (s->unmeasured == 4) {
        set_reason(out,
                   "token budget of rule %s: the request names no token ceiling (max_tokens, "
                   "max_output_tokens or max_completion_tokens), so nothing can be reserved",
                   r->id);
        return;
    }
    rfc3339(ws, start, sizeof(start));
    if (bg == &r->tokens) {
        set_reason(out,
                   "token budget exhausted: rule %s allows %llu tokens per %s %s; %llu already "
                   "used or reserved in the window that began %s, this request reserves %llu",
                   r->id, (unsigned long long)bg->limit, bg->window_text, scope_text(bg),
                   (unsigned long long)used, start, (unsigned long long)amount);
    } else if (bg == &r->count) {
        set_reason(out,
                   "budget exhausted: rule %s allows %llu requests per %s %s; %llu "
                   "already allowed in the window that began %s",
                   r->id, (unsigned long long)bg->limit, bg->window_text, scope_text(bg),
                   (unsigned long long)used, start);
    } else {
        pdec_format(bg->limit, m, sizeof(m));
        pdec_format(used, u, sizeof(u));
        pdec_format(amount, a, sizeof(a));
        set_reason(out,
                   "budget exhausted: rule %s allows a sum of %s at %s per %s %s; "
                   "%s already used in the window that began %s, this request asks %s",
                   r->id, m, bg->pointer, bg->window_text, scope_text(bg), u, start, a);
    }
}

/*
 * The allow of rule alw (the first matching allow rule), when the budgets of every matching
 * allow rule with a budget (budgeted[0..nb), in file order; nb may be one more than
 * SWORN_POLICY_BUDGET_RULES_MAX) have room: all of them are charged in one atomic step, or none.
 * Otherwise DENY by the first of them, in file order, that cannot take the request. 0 with out
 * set, -1 on an internal failure.
 */
static int allow(const struct prule *alw, const struct prule *const *budgeted, size_t nb,
                 struct sworn_budgets *b, const Sworn__V1__AuthorizationRequest *q, uint64_t now,
                 struct sworn_policy_result *out)
{
    struct sworn_policy_charge c[SWORN_POLICY_CHARGES];
    uint64_t limits[SWORN_POLICY_CHARGES], used = 0;
    struct slot slots[SWORN_POLICY_CHARGES];
    size_t n = 0, which = 0;
    int rc;

    if (nb > SWORN_POLICY_BUDGET_RULES_MAX) {
        deny_by(out, budgeted[SWORN_POLICY_BUDGET_RULES_MAX]);
        set_reason(out,
                   "too many budgets: more than %u allow rules with a budget match this request "
                   "(rule %s is one too many); denied",
                   SWORN_POLICY_BUDGET_RULES_MAX, budgeted[SWORN_POLICY_BUDGET_RULES_MAX]->id);
        return 0;
    }
    memset(c, 0, sizeof(c));
    for (size_t k = 0; k < nb; k++)
        if (add_charges(budgeted[k], q, now, c, limits, slots, &n) != 0)
            return -1;
    if (n > 0) {
        if (b == NULL) {
            if (slots[0].unmeasured != 0) {
                deny_budget(out, &slots[0], 0, 0, now);
            } else {
                deny_by(out, slots[0].r);
                set_reason(out, "rule %s has a budget but no budget state was given",
                           slots[0].r->id);
            }
            return 0;
        }
        rc = budget_charge(b, c, limits, n, now, 0, &which, &used);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            deny_budget(out, &slots[which], used, c[which].amount, now);
            return 0;
        }
        if (rc == 2) {
            deny_by(out, slots[which].r);
            set_reason(out,
                       "budget state full: too many budget counters are tracked (too many "
                       "principals or windows); rule %s cannot allow until windows end",
                       slots[which].r->id);
            return 0;
        }
        memcpy(out->charges, c, sizeof(c));
    }
    decide(out, alw, SWORN__V1__EFFECT__EFFECT_ALLOW, "allowed");
    memcpy(out->credential_id, alw->credential, strlen(alw->credential) + 1);
    return 0;
}

/*
 * 1 when the header name `name` is `want` (lower case, '-' between words) as a server may read
 * it: ASCII case folded, '_' read as '-' (CGI, WSGI, Rack and PHP carry both as "HTTP_X_..._X",
 * so Puma and Rack::MethodOverride honour `X_HTTP_METHOD_OVERRIDE`), and spaces and tabs around
 * it dropped (lenient parsers trim "X-HTTP-Method-Override " before the colon).
 */
static int header_is(const char *name, const char *want)
{
    size_t n = strlen(name);

    while (n > 0 && (name[0] == ' ' || name[0] == '\t')) {
        name++;
        n--;
    }
    while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t'))
        n--;
    if (n != strlen(want))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];

        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        else if (c == '_')
            c = '-';
        if (c != want[i])
            return 0;
    }
    return 1;
}

/* An RFC 9110 tchar: ! # $ % & ' * + - . ^ _ ` | ~ DIGIT ALPHA. */
static int is_tchar(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * The header half of the canonical request (docs/policy.md 2.2): every name in
 * context.header_names must be an RFC 9110 token (servers trim, fold or map other names, a
 * no-break space or a fullwidth letter included, so a name judged would not be the name read),
 * and none may be a URL-override header (X-Original-URL, X-Rewrite-URL), by which some IIS and
 * PHP stacks route a request to another path than the one judged. Returns 0, or 1 with out set.
 */
static int canon_headers(const Sworn__V1__AuthorizationRequest *req,
                         struct sworn_policy_result *out)
{
    static const char *const url_overrides[] = {"x-original-url", "x-rewrite-url"};

    if (req->context == NULL)
        return 0;
    for (size_t i = 0; i < req->context->n_header_names; i++) {
        const char *name = req->context->header_names[i];

        for (size_t k = 0; name[k] != '\0'; k++)
            if (!is_tchar((unsigned char)name[k])) {
                set_reason(out,
                           "the request is refused: header name %zu holds byte 0x%02X at offset "
                           "%zu, which is not an RFC 9110 token character (servers trim or map "
                           "such names); denied before any rule",
                           i, (unsigned)(unsigned char)name[k], k);
                return 1;
            }
        for (size_t k = 0; k < sizeof(url_overrides) / sizeof(url_overrides[0]); k++)
            if (header_is(name, url_overrides[k])) {
                set_reason(out,
                           "the request is refused: it carries a URL-override header (%s), by "
                           "which some servers route to another path than the one judged; "
                           "denied before any rule",
                           url_overrides[k]);
                return 1;
            }
    }
    return 0;
}

/*
 * The method half of the canonical request (docs/policy.md 2.2): a non-empty context.method that
 * is not an upper-case RFC 9110 token is refused before any rule, as a resource without a
 * canonical form is. Upstream frameworks upper-case, trim or split such methods (`delete` runs
 * as DELETE), so no rule could judge what is run. An absent or empty method is left to the
 * matchers (it matches no methods list). A request that names a method-override header is
 * refused too, whatever its method: the header's value is not seen, and is what runs.
 * Returns 0, or 1 with out set to the refusal.
 */
static int canon_method(const Sworn__V1__AuthorizationRequest *req, struct sworn_policy_result *out)
{
    /* Headers that Express's method-override, Rack, ASP.NET, Symfony and others honour as the
     * method to run: a POST carrying one is run as DELETE there, past a deny of DELETE. */
    static const char *const overrides[] = {"x-http-method-override", "x-http-method",
                                            "x-method-override"};
    const char *m = req->context != NULL ? req->context->method : NULL, *why = NULL;
    char buf[160];

    if (req->context != NULL)
        for (size_t i = 0; i < req->context->n_header_names; i++)
            for (size_t k = 0; k < sizeof(overrides) / sizeof(overrides[0]); k++)
                if (header_is(req->context->header_names[i], overrides[k])) {
                    set_reason(out,
                               "the method is refused: the request carries a method-override "
                               "header (%s), which some frameworks run as the method instead; "
                               "send the method itself; denied before any rule",
                               overrides[k]);
                    return 1;
                }
    if (m == NULL || m[0] == '\0' || pmethod_check(m, buf, sizeof(buf), &why) == 0)
        return 0;
    set_reason(out, "the method is refused: %s; denied before any rule", why);
    return 1;
}

int sworn_policy_refusal(const Sworn__V1__AuthorizationRequest *req,
                         struct sworn_policy_result *out)
{
    if (req == NULL || req->refusal == NULL)
        return 0;
    memset(out, 0, sizeof(*out));
    out->effect = SWORN__V1__EFFECT__EFFECT_DENY;
    set_reason(out, "refused by the proxy: %s",
               req->refusal->reason != NULL ? req->refusal->reason : "");
    return 1;
}

/*
 * sworn_policy_eval and sworn_policy_eval_canonical: canon NULL canonicalises here; checked 1
 * when req has passed sworn_frame_check_request already (it is not run again).
 */
static int policy_eval(const struct sworn_policy *p, struct sworn_budgets *b,
                       const Sworn__V1__AuthorizationRequest *req,
                       const struct sworn_resource_canonical *canon, int checked,
                       uint64_t now_unix_ms, struct sworn_policy_result *out)
{
    const struct prule *deny = NULL, *esc = NULL, *alw = NULL, *unpermitted = NULL;
    /* Every matching allow rule with a budget, in file order (one more than the cap: a deny). */
    const struct prule *budgeted[SWORN_POLICY_BUDGET_RULES_MAX + 1];
    size_t nb = 0;
    struct sworn_resource_canonical own;
    const struct sworn_resource *res;

    if (out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_eval: no result");
    memset(out, 0, sizeof(*out));
    out->effect = SWORN__V1__EFFECT__EFFECT_DENY;
    set_reason(out, "internal error (denied)");
    if (p == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_eval: no policy");
    if (!checked && sworn_frame_check_request(req) != 0)
        return -1;
    if (sworn_policy_refusal(req, out))
        return 0;
    if (canon == NULL) {
        sworn_resource_canonicalise(req->resource, &own);
        canon = &own;
    } else if (!sworn_resource_canonical_is_of(canon, req->resource)) {
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_eval: the canonical resource given is "
                                            "not that of this request");
    }
    if (canon->rc != 0) {
        set_reason(out, "the resource is refused: %s; denied before any rule", canon->why);
        return 0;
    }
    res = &canon->res;
    if (res->path_params && !p->path_params) {
        set_reason(out,
                   "the resource is refused: a ';' in the path (path parameters, which servers "
                   "read differently; no rule of this policy has path_parameters: true); denied "
                   "before any rule");
        return 0;
    }
    if (canon_headers(req, out) != 0 || canon_method(req, out) != 0)
        return 0;
    for (size_t i = 0; i < p->nrules && deny == NULL; i++) {
        const struct prule *r = &p->rules[i];

        /* Once an allow rule decides, a later allow rule matters only for its budgets. */
        if ((r->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE && esc != NULL && !res->path_params) ||
            (r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW && alw != NULL &&
             (!has_budget(r) || nb > SWORN_POLICY_BUDGET_RULES_MAX)))
            continue;
        if (!rule_matches(r, req, res, now_unix_ms))
            continue;
        /* Path parameters: an allow or escalate rule that does not permit them does not match.
         * An escalate rule that would have matched denies, so that adding ";x" never turns an
         * escalation into a later rule's allow (escalate rules are all looked at then). Such an
         * allow rule cannot decide, but its budgets still bind: a ";x" must not dodge a budget
         * that the path without it would meet. */
        if (res->path_params && r->effect != SWORN__V1__EFFECT__EFFECT_DENY && !r->path_params) {
            if (unpermitted == NULL || (r->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE &&
                                        unpermitted->effect != SWORN__V1__EFFECT__EFFECT_ESCALATE))
                unpermitted = r;
            if (r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW && has_budget(r) &&
                nb <= SWORN_POLICY_BUDGET_RULES_MAX)
                budgeted[nb++] = r;
            continue;
        }
        if (r->effect == SWORN__V1__EFFECT__EFFECT_DENY) {
            deny = r;
        } else if (r->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE) {
            esc = r;
        } else {
            if (alw == NULL)
                alw = r;
            if (has_budget(r) && nb <= SWORN_POLICY_BUDGET_RULES_MAX)
                budgeted[nb++] = r;
        }
    }
    if (deny != NULL) {
        decide(out, deny, SWORN__V1__EFFECT__EFFECT_DENY, "denied");
    } else if (unpermitted != NULL && unpermitted->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE) {
        memcpy(out->rule_id, unpermitted->id, strlen(unpermitted->id) + 1);
        set_reason(out,
                   "denied by rule %s: it would escalate this request, but the path has "
                   "parameters (';') and the rule does not permit them (path_parameters: true)",
                   unpermitted->id);
    } else if (esc != NULL) {
        decide(out, esc, SWORN__V1__EFFECT__EFFECT_ESCALATE, "escalated");
        out->escalation_timeout_ms = esc->escalation_timeout_ms;
    } else if (alw != NULL) {
        if (allow(alw, budgeted, nb, b, req, now_unix_ms, out) != 0) {
            memset(out, 0, sizeof(*out));
            out->effect = SWORN__V1__EFFECT__EFFECT_DENY;
            set_reason(out, "internal error (denied)");
            return -1;
        }
    } else if (unpermitted != NULL) {
        set_reason(out,
                   "no rule matched (default deny): the path has parameters (';') and rule %s, "
                   "which matches its path, does not permit them (path_parameters: true)",
                   unpermitted->id);
    } else {
        set_reason(out, "no rule matched (default deny)");
    }
    return 0;
}

int sworn_policy_eval(const struct sworn_policy *p, struct sworn_budgets *b,
                      const Sworn__V1__AuthorizationRequest *req, uint64_t now_unix_ms,
                      struct sworn_policy_result *out)
{
    return policy_eval(p, b, req, NULL, 0, now_unix_ms, out);
}

int sworn_policy_eval_canonical(const struct sworn_policy *p, struct sworn_budgets *b,
                                const Sworn__V1__AuthorizationRequest *req,
                                const struct sworn_resource_canonical *canon, uint64_t now_unix_ms,
                                struct sworn_policy_result *out)
{
    return policy_eval(p, b, req, canon, req != NULL, now_unix_ms, out);
}

/* Charge rule r's budgets for the recorded allow rec, without checking limits. 0 or -1. */
static int replay_rule(struct sworn_budgets *b, const struct prule *r,
                       const Sworn__V1__DecisionRecord *rec)
{
    struct sworn_policy_charge c[3];
    uint64_t limits[3], used, ceiling = 0;
    const Sworn__V1__Principal *pr = rec->request->principal;
    const char *value = NULL, *why = NULL;
    size_t n = 0, which;
    int rc;

    memset(c, 0, sizeof(c));
    if (r->count.on) {
        if (budget_key(r, &r->count, PBUDGET_COUNT, pr, rec->time_unix_ms, &c[n]) != 0)
            return -1;
        c[n].amount = 1;
        limits[n++] = r->count.limit;
    }
    if (r->sum.on && find_number(rec->request, r->sum.pointer, &value) == 0 &&
        pdec_parse_json(value, &c[n].amount, &why) == 0) {
        if (budget_key(r, &r->sum, PBUDGET_SUM, pr, rec->time_unix_ms, &c[n]) != 0)
            return -1;
        limits[n++] = r->sum.limit;
    }
    /* The reservation; a UsageRecorded entry read later settles it (d_startup.c). */
    if (r->tokens.on && find_ceiling(rec->request, &ceiling) == 0) {
        if (budget_key(r, &r->tokens, PBUDGET_TOKENS, pr, rec->time_unix_ms, &c[n]) != 0)
            return -1;
        c[n].amount = ceiling;
        limits[n++] = r->tokens.limit;
    }
    if (n == 0)
        return 0;
    rc = budget_charge(b, c, limits, n, rec->time_unix_ms, 1, &which, &used);
    if (rc == 2)
        return sworn_err_set(SWORN_ERR_RANGE, "budget state full while replaying rule %s", r->id);
    return rc < 0 ? -1 : 0;
}

/*
 * The allow rules with a budget that an ALLOW of rec charged (sworn_policy_eval): those that
 * match the recorded request again, on the canonical form the decision was taken on (recorded
 * with it; canonicalising a canonical form gives it back; the model is canonicalised again from
 * the request, since the record's canonical form does not hold it), or on its resource
 * canonicalised now in an entry older than that field; and the rule that decided it, which a
 * record that cannot be matched (it breaks the request checks, or its resource is refused now)
 * still charges. fn(arg, rule) for each, in file order; 0, or fn's -1.
 */
static int each_replayed_rule(const struct sworn_policy *p, const Sworn__V1__DecisionRecord *rec,
                              int (*fn)(void *arg, const struct prule *r), void *arg)
{
    const struct prule *named = policy_find_rule(p, rec->rule_id);
    struct sworn_resource res;
    const char *why = NULL;
    int matchable;

    matchable = sworn_frame_check_request(rec->request) == 0 &&
                sworn_resource_canon(rec->canonical_resource != NULL ? rec->canonical_resource
                                                                     : rec->request->resource,
                                     &res, &why) == 0 &&
                sworn_resource_canon_model(rec->request->resource->model, res.model, &why) == 0;
    for (size_t i = 0; i < p->nrules; i++) {
        const struct prule *r = &p->rules[i];

        if (r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW || !has_budget(r))
            continue;
        if (r != named && !(matchable && rule_matches(r, rec->request, &res, rec->time_unix_ms)))
            continue;
        if (fn(arg, r) != 0)
            return -1;
    }
    return 0;
}

struct replay_ctx {
    struct sworn_budgets *b;
    const Sworn__V1__DecisionRecord *rec;
    struct sworn_policy_charge *out;
    size_t n;
};

static int replay_one(void *arg, const struct prule *r)
{
    struct replay_ctx *x = arg;

    return replay_rule(x->b, r, x->rec);
}

static int token_charge_one(void *arg, const struct prule *r)
{
    struct replay_ctx *x = arg;
    uint64_t ceiling = 0;

    if (!r->tokens.on || find_ceiling(x->rec->request, &ceiling) != 0)
        return 0;
    if (x->n >= SWORN_POLICY_BUDGET_RULES_MAX)
        return 0; /* eval never allows past 16 budgeted rules; a record that claims it is odd */
    memset(&x->out[x->n], 0, sizeof(x->out[x->n]));
    if (budget_key(r, &r->tokens, PBUDGET_TOKENS, x->rec->request->principal, x->rec->time_unix_ms,
                   &x->out[x->n]) != 0)
        return -1;
    x->out[x->n++].amount = ceiling;
    return 0;
}

int sworn_budgets_token_charges(const struct sworn_policy *p, const Sworn__V1__DecisionRecord *rec,
                                struct sworn_policy_charge *out, size_t *n)
{
    struct replay_ctx x = {NULL, rec, out, 0};

    *n = 0;
    if (p == NULL || rec == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_budgets_token_charges: bad arguments");
    if (rec->effect != SWORN__V1__EFFECT__EFFECT_ALLOW || rec->rule_id == NULL ||
        rec->request == NULL || rec->request->principal == NULL ||
        rec->request->principal->id == NULL || rec->request->resource == NULL)
        return 0;
    if (each_replayed_rule(p, rec, token_charge_one, &x) != 0)
        return -1;
    *n = x.n;
    return 0;
}

int sworn_budgets_replay(struct sworn_budgets *b, const struct sworn_policy *p,
                         const Sworn__V1__DecisionRecord *rec)
{
    struct replay_ctx x = {b, rec, NULL, 0};

    if (b == NULL || p == NULL || rec == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_budgets_replay: bad arguments");
    if (rec->effect != SWORN__V1__EFFECT__EFFECT_ALLOW || rec->rule_id == NULL ||
        rec->request == NULL || rec->request->principal == NULL ||
        rec->request->principal->id == NULL || rec->request->resource == NULL)
        return 0;
    return each_replayed_rule(p, rec, replay_one, &x);
}
