/*
 * lint.c -- warnings about a loaded policy (lint.h for the contract, docs/policy.md section 7).
 *
 * The core is covers(a, b): does rule a match every request that rule b matches? It is decided
 * key by key (the keys of a rule are a conjunction, docs/policy.md section 2), and for each key
 * only with the cases that can be decided for sure: an absent key covers anything; a list covers
 * another when every item of the other is covered by one of its items, where an item covers
 * another when the texts are equal, when it matches everything that can occur (a principal "*",
 * a path "/" then "**"), when the other is a literal that it matches, or when it is a literal
 * prefix followed by the wildcard that matches any rest ("agent-*", or "/repos/" then "**") and
 * the other starts with that prefix. (In these comments a path glob is spelt in words where C
 * would read a slash and a star as a comment.) Anything else (delegation conditions, keys this file
 * does not know) is "not covered", so a warning is never given for a rule that some request could
 * still reach.
 */
#include "lint.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "policy_int.h"

#define MSG_MAX 2600u /* three patterns of 512 bytes, two rule ids and the words */

struct lint {
    const struct sworn_policy *p;
    sworn_lint_fn fn;
    void *arg;
    int count;
    uint64_t steps; /* comparisons left */
};

static void warn(struct lint *l, const struct prule *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn(struct lint *l, const struct prule *r, const char *fmt, ...)
{
    char msg[MSG_MAX];
    struct sworn_lint_warning w;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    w.line = r->line;
    w.col = r->col;
    w.rule_id = r->id;
    w.message = msg;
    l->fn(l->arg, &w);
    l->count++;
}

/* Count one comparison; 0 once the budget is spent (the caller then stops claiming anything). */
static int step(struct lint *l)
{
    if (l->steps == 0)
        return 0;
    l->steps--;
    return 1;
}

/* --- Globs (principals, operations, tools; paths with path = 1) --- */

/* Is g a literal prefix followed by one wildcard that matches any rest (then *lit = prefix)? */
static int prefix_then_any(const struct pglob *g, size_t *lit)
{
    int16_t any = g->path ? PGLOB_ALL : PGLOB_STAR;

    if (g->ntok == 0 || g->prefix != g->ntok - 1 || g->toks[g->ntok - 1] != any)
        return 0;
    *lit = g->prefix;
    return 1;
}

/* Does glob a match every text that glob b matches (b's texts: any string for b NULL)? */
static int glob_covers(const struct pglob *a, const struct pglob *b)
{
    size_t lit;

    /* Matches everything: "*" (not a path glob), '/' then "**" (every canonical path starts with
     * '/'). */
    if (prefix_then_any(a, &lit) && (a->path ? lit == 1 && a->text[0] == '/' : lit == 0))
        return 1;
    if (b == NULL)
        return 0;
    if (strcmp(a->text, b->text) == 0)
        return 1;
    if (b->literal)
        return pglob_match(a, b->text, strlen(b->text));
    /* Every text of b starts with b's literal prefix; a takes any text starting with its own. */
    return prefix_then_any(a, &lit) && b->prefix >= lit && memcmp(a->text, b->text, lit) == 0;
}

/*
 * Does list a (na items; na == 0: the key is absent, anything) cover list b? b absent means
 * "any text", which only a universal item covers; empty_ok says whether an absent b also lets
 * through texts that a present list never matches (a request without a tool: a tools list never
 * matches it), in which case a present a never covers an absent b.
 */
static int globs_cover(struct lint *l, const struct pglob *a, size_t na, const struct pglob *b,
                       size_t nb, int empty_ok)
{
    if (na == 0)
        return 1;
    if (nb == 0) {
        if (empty_ok)
            return 0;
        for (size_t i = 0; i < na; i++)
            if (step(l) && glob_covers(&a[i], NULL))
                return 1;
        return 0;
    }
    for (size_t k = 0; k < nb; k++) {
        int ok = 0;

        for (size_t i = 0; i < na && !ok; i++) {
            if (!step(l))
                return 0;
            ok = glob_covers(&a[i], &b[k]);
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* --- Exact lists (schemes, methods, ports) --- */

static int strs_cover(struct lint *l, char **a, size_t na, char **b, size_t nb)
{
    if (na == 0)
        return 1;
    if (nb == 0)
        return 0;
    for (size_t k = 0; k < nb; k++) {
        int ok = 0;

        for (size_t i = 0; i < na && !ok; i++) {
            if (!step(l))
                return 0;
            ok = strcmp(a[i], b[k]) == 0;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/*
 * Schemes: an absent list means the schemes a canonical resource can have (docs/policy.md 2.0)
 * that the rule matches without naming them: the four HTTP ones, and tcp too for a deny rule
 * (an allow or escalate rule matches tcp only when its list names it, docs/policy.md 2.2).
 */
static int schemes_cover(struct lint *l, const struct prule *a, const struct prule *b)
{
    static char *all[] = {"http", "https", "ws", "wss", "tcp"};
    size_t na = a->effect == SWORN__V1__EFFECT__EFFECT_DENY ? 5 : 4;
    size_t nb = b->effect == SWORN__V1__EFFECT__EFFECT_DENY ? 5 : 4;

    if (a->n_schemes != 0) {
        na = a->n_schemes;
        if (b->n_schemes == 0)
            return strs_cover(l, a->schemes, na, all, nb);
        return strs_cover(l, a->schemes, na, b->schemes, b->n_schemes);
    }
    if (b->n_schemes == 0)
        return strs_cover(l, all, na, all, nb);
    return strs_cover(l, all, na, b->schemes, b->n_schemes);
}

static int ports_cover(struct lint *l, const struct prule *a, const struct prule *b)
{
    if (a->n_ports == 0)
        return 1;
    if (b->n_ports == 0)
        return 0;
    for (size_t k = 0; k < b->n_ports; k++) {
        int ok = 0;

        for (size_t i = 0; i < a->n_ports && !ok; i++) {
            if (!step(l))
                return 0;
            ok = a->ports[i] == b->ports[k];
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* --- Hosts --- */

/* Does host pattern a match every host that host pattern b matches? */
static int host_covers(const struct phost *a, const struct phost *b)
{
    struct sworn_resource res;
    int b_wild = strchr(b->text, '*') != NULL;

    if (strcmp(a->text, b->text) == 0)
        return 1;
    if (b_wild && (b->ip != 0 || (b->multi && !a->multi)))
        return 0;
    /*
     * Match b's canonical text as if it were a host: a literal b is exactly that host; a
     * wildcard b's '*' labels meet a's labels as the text "*", which only a '*' label of a
     * matches, and its label count is the least b's hosts have (one more for "**."), so a's
     * count check is, if anything, stricter than needed.
     */
    memset(&res, 0, sizeof(res));
    if (strlen(b->norm) > SWORN_RESOURCE_HOST_MAX)
        return 0;
    memcpy(res.host, b->norm, strlen(b->norm) + 1);
    res.host_kind = b->ip == 4   ? SWORN_RESOURCE_HOST_IPV4
                    : b->ip == 6 ? SWORN_RESOURCE_HOST_IPV6
                                 : SWORN_RESOURCE_HOST_NAME;
    memcpy(res.addr, b->addr, sizeof(res.addr));
    return phost_match(a, &res);
}

static int hosts_cover(struct lint *l, const struct prule *a, const struct prule *b)
{
    if (a->n_hosts == 0)
        return 1;
    if (b->n_hosts == 0)
        return 0;
    for (size_t k = 0; k < b->n_hosts; k++) {
        int ok = 0;

        for (size_t i = 0; i < a->n_hosts && !ok; i++) {
            if (!step(l))
                return 0;
            ok = host_covers(&a->hosts[i], &b->hosts[k]);
        }
        if (!ok)
            return 0;
    }
    return 1;
}

/* --- Rules --- */

/* Does rule a match every request that rule b matches? */
static int covers(struct lint *l, const struct prule *a, const struct prule *b)
{
    /* A key lint.c does not know may widen b or narrow a; a delegation condition narrows a in
     * ways not compared here. */
    if (a->lint_opaque || b->lint_opaque || a->has_delegation || !step(l))
        return 0;
    /* Time: a's days and hours contain b's (absent: every day, the whole day). */
    if ((a->days & b->days) != b->days || a->start_min > b->start_min || a->end_min < b->end_min)
        return 0;
    return globs_cover(l, a->principals, a->n_principals, b->principals, b->n_principals, 0) &&
           globs_cover(l, a->operations, a->n_operations, b->operations, b->n_operations, 0) &&
           schemes_cover(l, a, b) && hosts_cover(l, a, b) && ports_cover(l, a, b) &&
           globs_cover(l, a->paths, a->n_paths, b->paths, b->n_paths, 0) &&
           globs_cover(l, a->tools, a->n_tools, b->tools, b->n_tools, 1) &&
           globs_cover(l, a->models, a->n_models, b->models, b->n_models, 1) &&
           strs_cover(l, a->methods, a->n_methods, b->methods, b->n_methods);
}

static const char *effect_word(Sworn__V1__Effect e)
{
    return e == SWORN__V1__EFFECT__EFFECT_ALLOW  ? "allow"
           : e == SWORN__V1__EFFECT__EFFECT_DENY ? "deny"
                                                 : "escalate";
}

/* Is rule r covered by a rule that overrides it (a deny for allow and escalate rules, an escalate
 * for allow rules), wherever it is? Warns and returns 1 when it is. */
static int overridden(struct lint *l, const struct prule *r)
{
    const struct sworn_policy *p = l->p;

    if (r->effect == SWORN__V1__EFFECT__EFFECT_DENY)
        return 0;
    for (int pass = 0; pass < 2; pass++) {
        Sworn__V1__Effect by =
            pass == 0 ? SWORN__V1__EFFECT__EFFECT_DENY : SWORN__V1__EFFECT__EFFECT_ESCALATE;

        if (by == SWORN__V1__EFFECT__EFFECT_ESCALATE &&
            r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW)
            break;
        for (size_t i = 0; i < p->nrules; i++) {
            const struct prule *a = &p->rules[i];

            if (a == r || a->effect != by || !covers(l, a, r))
                continue;
            warn(l, r,
                 "rule \"%s\" can never %s: %s rule \"%s\" (line %u) matches every request it "
                 "matches, and %s wins wherever it is in the file; narrow \"%s\" or remove \"%s\"",
                 r->id, effect_word(r->effect), effect_word(by), a->id, a->line,
                 by == SWORN__V1__EFFECT__EFFECT_DENY ? "a deny" : "an escalation over an allow",
                 a->id, r->id);
            return 1;
        }
    }
    return 0;
}

/* Is rule r (index j) shadowed by an earlier rule of its effect? Warns when it is. */
static void shadowed(struct lint *l, const struct prule *r, size_t j)
{
    for (size_t i = 0; i < j; i++) {
        const struct prule *a = &l->p->rules[i];

        if (a->effect != r->effect || !covers(l, a, r))
            continue;
        if (r->effect == SWORN__V1__EFFECT__EFFECT_ALLOW)
            warn(l, r,
                 "rule \"%s\" can never decide: the earlier allow rule \"%s\" (line %u) matches "
                 "every request it matches, so its reason and credential are never used (its "
                 "budgets still count: every matching allow rule's budget must have room, "
                 "docs/policy.md section 3); move it above \"%s\" if it should decide",
                 r->id, a->id, a->line, a->id);
        else
            warn(l, r,
                 "rule \"%s\" can never decide: the earlier %s rule \"%s\" (line %u) matches every "
                 "request it matches, so its reason%s is never used; move it above \"%s\" if it "
                 "should decide, or remove it",
                 r->id, effect_word(r->effect), a->id, a->line,
                 r->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE ? " and escalation_timeout" : "",
                 a->id);
        return;
    }
}

/* --- Globs that look as if they matched a bare name --- */

static const char *escapes(const struct prule *r)
{
    return r->effect == SWORN__V1__EFFECT__EFFECT_DENY ? "escapes this deny rule"
                                                       : "skips the operator (escalate rule)";
}

/*
 * Steps one glob match costs: its simulation is O(text x tokens), up to 8192 x 512, so a policy
 * of long patterns full of "**" made the bare-prefix check (every pattern against every other
 * of its rule) run for minutes at each load and reload, with decisions waiting.
 */
#define LINT_GLOB_UNIT 16u

static int glob_step(struct lint *l, const struct pglob *g, size_t len)
{
    uint64_t cost = 1 + ((uint64_t)(len + 1) * (uint64_t)(g->ntok + 1)) / LINT_GLOB_UNIT;

    if (l->steps < cost) {
        l->steps = 0;
        return 0;
    }
    l->steps -= cost;
    return 1;
}

/* Does some path pattern of r match the literal path s (len bytes)? Out of steps: unsure, 1. */
static int paths_match(struct lint *l, const struct prule *r, const char *s, size_t len)
{
    for (size_t i = 0; i < r->n_paths; i++)
        if (!glob_step(l, &r->paths[i], len) || pglob_match(&r->paths[i], s, len))
            return 1;
    return 0;
}

static void path_warnings(struct lint *l, const struct prule *r)
{
    for (size_t i = 0; i < r->n_paths; i++) {
        const struct pglob *g = &r->paths[i];
        const char *t = g->text, *dd;
        size_t lit;

        /* "/x/" then "**": "/x" itself is not matched. Only for a literal "/x" (no wildcard). */
        if (prefix_then_any(g, &lit) && lit >= 3 && t[lit - 1] == '/' &&
            !paths_match(l, r, t, lit - 1))
            warn(l, r,
                 "path pattern \"%s\" does not match \"%.*s\" itself (only \"%.*s\" and below): "
                 "a request for \"%.*s\" %s; add \"%.*s\" to paths",
                 t, (int)(lit - 1), t, (int)lit, t, (int)(lit - 1), t, escapes(r), (int)(lit - 1),
                 t);
        /* "/a/", "**", "/b" needs a segment between /a and /b: "/a/b" is not matched. */
        dd = strstr(t, "/**/");
        if (dd != NULL) {
            char alt[SWORN_POLICY_GLOB_MAX + 1];
            struct pglob ag;
            const char *why = NULL;
            int covered = 0;

            /* The same pattern with that "**" segment taken out: zero segments there. */
            snprintf(alt, sizeof(alt), "%.*s/%s", (int)(dd - t), t, dd + 4);
            if (pglob_compile(alt, 1, &ag, &why) != 0)
                continue;
            /* Out of steps: unsure, so no warning. */
            for (size_t k = 0; k < r->n_paths && !covered; k++)
                covered = !step(l) || glob_covers(&r->paths[k], &ag);
            if (!covered)
                warn(l, r,
                     "path pattern \"%s\" needs at least one segment where \"/**/\" stands, so it "
                     "does not match the paths of \"%s\" (a request for one of them %s; \"//\" "
                     "never reaches a rule); add \"%s\" to paths",
                     t, alt, escapes(r), alt);
            pglob_free(&ag);
        }
    }
}

/* Labels of the name s. */
static size_t name_labels(const char *s)
{
    size_t n = 1;

    for (; *s != '\0'; s++)
        n += *s == '.';
    return n;
}

/*
 * Does some host pattern of r match the name res->host of `labels` labels? Patterns that cannot
 * (an IP, another label count, "**." over as many labels or more) are passed over without a
 * match, so a rule of 1000 patterns costs 10^6 cheap tests, not 10^6 matches.
 */
static int hosts_match_name(const struct prule *r, const struct sworn_resource *res, size_t labels)
{
    for (size_t k = 0; k < r->n_hosts; k++) {
        const struct phost *c = &r->hosts[k];

        if (c->ip != 0 || (c->multi ? c->nlabels >= labels : c->nlabels != labels))
            continue;
        if (phost_match(c, res))
            return 1;
    }
    return 0;
}

static void host_warnings(struct lint *l, const struct prule *r)
{
    for (size_t i = 0; i < r->n_hosts; i++) {
        const struct phost *h = &r->hosts[i];
        const char *bare;
        struct sworn_resource res;
        int matched = 0;

        /* "**.x" or "*.x" with a literal x: the bare name x is not matched. */
        if (h->ip != 0 || (h->text[0] != '*' || h->text[1] != (h->multi ? '*' : '.')))
            continue;
        bare = h->multi ? h->norm : strchr(h->norm, '.');
        if (bare == NULL || strchr(bare + (h->multi ? 0 : 1), '*') != NULL)
            continue;
        if (!h->multi)
            bare++;
        if (strlen(bare) > SWORN_RESOURCE_HOST_MAX)
            continue;
        memset(&res, 0, sizeof(res));
        memcpy(res.host, bare, strlen(bare) + 1);
        res.host_kind = SWORN_RESOURCE_HOST_NAME;
        matched = hosts_match_name(r, &res, name_labels(bare));
        if (!matched)
            warn(l, r,
                 "host pattern \"%s\" does not match \"%s\" itself (only names below it): a "
                 "request to \"%s\" %s; add \"%s\" to hosts",
                 h->text, bare, bare, escapes(r), bare);
        /* "*.x": exactly one label before x (the vault's "*.x" is one or more), so a name two
         * labels below x is not matched unless another pattern of the rule matches it. */
        if (h->multi || strlen(bare) + 4 > SWORN_RESOURCE_HOST_MAX)
            continue;
        memset(&res, 0, sizeof(res));
        snprintf(res.host, sizeof(res.host), "a.b.%s", bare);
        res.host_kind = SWORN_RESOURCE_HOST_NAME;
        matched = hosts_match_name(r, &res, name_labels(bare) + 2);
        if (!matched)
            warn(l, r,
                 "host pattern \"%s\" matches exactly one label before \"%s\": a request to "
                 "\"a.b.%s\" %s; write \"**.%s\" for every name below \"%s\"",
                 h->text, bare, bare, escapes(r), bare, bare);
    }
}

/* Does r's schemes list hold s (folded to lower case at load)? */
static int has_scheme(const struct prule *r, const char *s)
{
    for (size_t i = 0; i < r->n_schemes; i++)
        if (strcmp(r->schemes[i], s) == 0)
            return 1;
    return 0;
}

/*
 * "http" without "ws" (or "https" without "wss"): a WebSocket request is an HTTP GET to the same
 * server (with an Upgrade header that a handler without WebSocket support ignores), so it
 * reaches what the rule meant to hold back.
 */
static void scheme_warnings(struct lint *l, const struct prule *r)
{
    static const char *const pairs[][2] = {{"http", "ws"}, {"https", "wss"}};

    for (size_t i = 0; i < 2; i++)
        if (has_scheme(r, pairs[i][0]) && !has_scheme(r, pairs[i][1]))
            warn(l, r,
                 "schemes has \"%s\" but not \"%s\": a WebSocket request (%s://) to the same "
                 "server is an HTTP GET there, and %s; add \"%s\" to schemes",
                 pairs[i][0], pairs[i][1], pairs[i][1], escapes(r), pairs[i][1]);
}

int sworn_policy_lint(const struct sworn_policy *p, sworn_lint_fn fn, void *arg)
{
    struct lint l = {p, fn, arg, 0, SWORN_LINT_STEPS_MAX};
    int stopped = 0;

    if (p == NULL || fn == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "sworn_policy_lint: bad arguments");
    for (size_t j = 0; j < p->nrules; j++) {
        const struct prule *r = &p->rules[j];

        if (l.steps > 0 && !overridden(&l, r))
            shadowed(&l, r, j);
        /* The glob warnings look at one rule at a time; the host and scheme ones go on to the
         * end, the path ones (glob matches, which can be costly) share the steps. */
        if (r->effect != SWORN__V1__EFFECT__EFFECT_ALLOW) {
            path_warnings(&l, r);
            host_warnings(&l, r);
            scheme_warnings(&l, r);
        }
        if (l.steps == 0 && !stopped) {
            warn(&l, r,
                 "the policy is too large to compare every pair of rules: rules from \"%s\" on "
                 "were not checked for shadowing nor for their path patterns",
                 r->id);
            stopped = 1;
        }
    }
    return l.count;
}
