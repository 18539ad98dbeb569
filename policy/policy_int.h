/*
 * policy_int.h -- what policy.c (loading and evaluation), policy_match.c (the matchers) and
 * budget.c (the counters) share. Not a public interface: only these files include it.
 */
#ifndef SWORN_POLICY_INT_H
#define SWORN_POLICY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "resource.h"

/* --- Globs (policy_match.c) --- */

/* Token values of a compiled glob: a byte 0..255 is itself; these are the wildcards. */
#define PGLOB_ONE (-1)  /* ?  : exactly one character (not '/' in a path glob) */
#define PGLOB_STAR (-2) /* *  : any run (without '/' in a path glob) */
#define PGLOB_ALL (-3)  /* ** : any run, '/' included (path globs only) */

struct pglob {
    char *text;    /* the pattern as written */
    int16_t *toks; /* compiled tokens */
    size_t ntok;
    int literal;   /* no wildcard: compared with memcmp */
    int path;      /* compiled as a path glob */
    size_t prefix; /* leading literal tokens: a text must start with text[0..prefix) */
};

/*
 * Compile pattern into g. path: '*' and '?' stop at '/', and "**" crosses it; otherwise '*'
 * matches anything and "**" is refused. Returns 0, or -1 with a plain message in *why (static).
 */
int pglob_compile(const char *pattern, int path, struct pglob *g, const char **why);
void pglob_free(struct pglob *g);
/* Does g match all of text (len bytes)? Linear in len times the pattern's tokens. */
int pglob_match(const struct pglob *g, const char *text, size_t len);

/* An IP literal's bytes: 16 for IPv6, the first 4 for IPv4. */
#define POLICY_ADDR_LEN 16u

/* Host patterns: exact names, "*" labels, a leading "**." and IP literals. */
struct phost {
    char *text; /* as written */
    char *norm; /* the canonical host; for a wildcard: lower case, no "**.", no final dot */
    int ip;     /* 0, 4 or 6 */
    uint8_t addr[POLICY_ADDR_LEN]; /* the address when ip != 0 */
    int multi;                     /* began with "**.": one or more labels before norm */
    size_t nlabels;                /* labels in norm */
};
int phost_compile(const char *pattern, struct phost *h, const char **why);
void phost_free(struct phost *h);
/* Does the canonical host of res match h? */
int phost_match(const struct phost *h, const struct sworn_resource *res);

/*
 * Exact decimals in micro-units (10^-6). parse_max reads a policy amount ("500", "0.25"; at most
 * 6 decimals, no sign or exponent). parse_json reads an RFC 8259 number's text exactly; it
 * refuses negatives other than zero, more than 6 significant decimals and values above
 * UINT64_MAX micro-units. Both return 0, or -1 with a plain message in *why.
 */
int pdec_parse_max(const char *s, uint64_t *out, const char **why);
int pdec_parse_json(const char *s, uint64_t *out, const char **why);
/* Write micro-units as a decimal ("12.5", "3") into buf (>= 32 bytes). */
void pdec_format(uint64_t micros, char *buf, size_t cap);

/*
 * Is a path pattern written in the canonical form of resource.h (escapes upper-case and not of
 * unreserved characters, no %00/%2F/%5C/control escapes or double encoding, no "//", no "." or
 * ".." segment, no non-ASCII, '\\', ';' or '#')? A pattern that is not could never match a
 * canonical path, so it is refused at load. Returns 0, or -1 with a plain message in *why.
 */
int ppath_pattern_check(const char *pattern, const char **why);

/*
 * Is m an HTTP method a rule can name: an RFC 9110 token (tchar: ! # $ % & ' * + - . ^ _ ` | ~
 * DIGIT ALPHA) without lower-case letters, 1..SWORN_POLICY_METHOD_MAX bytes? The same test is
 * applied to a rule's methods at load and to a request's non-empty context.method before any
 * rule (docs/policy.md 2.2), so no spelling the upstream might fold or trim reaches a matcher.
 * Returns 0, or -1 with a plain message in *why (why_buf, cap >= 96 bytes, holds it).
 */
#define SWORN_POLICY_METHOD_MAX 32u
int pmethod_check(const char *m, char *why_buf, size_t cap, const char **why);

/*
 * An item of require_actors or forbid_actors (docs/policy.md 2.5): a glob on the actor's
 * subject, and either the exact issuer of the mapping form or none (a plain item, whose issuer
 * condition comes from the rule's effect: narrow = only issuers of trusted_issuers, broad = any).
 */
struct pactor {
    struct pglob subject;
    char *issuer; /* the mapping form's issuer, compared byte for byte; NULL: a plain item */
};

/*
 * Does item it match actor (subject, issuer)? narrow: a plain item needs an issuer in trusted
 * (n sorted strings, bsearch); a mapping item always needs its own issuer exactly.
 */
int pactor_match(const struct pactor *it, int narrow, const char *subject, const char *issuer,
                 char *const *trusted, size_t n);

/* --- Rules (policy.c) --- */

struct pbudget {
    int on;
    int global;         /* per: global (else per principal) */
    int sandbox;        /* per: sandbox (per principal and sworn-run sandbox run) */
    uint64_t window_ms; /* fixed windows aligned to the Unix epoch */
    uint64_t limit;     /* count: allows; sum: micro-units; tokens: tokens */
    char *pointer;      /* sum only: RFC 6901 pointer */
    char *window_text;  /* the window as written, for reasons */
};

struct prule {
    char id[SWORN_POLICY_ID_MAX + 1];
    Sworn__V1__Effect effect;
    char *reason; /* NULL: a generated one */
    struct pglob *principals, *operations, *paths, *tools, *models;
    size_t n_principals, n_operations, n_paths, n_tools, n_models;
    struct pglob *prompts, *uris; /* MCP: the prompt of mcp.prompts/get, the resource URI */
    size_t n_prompts, n_uris;
    struct pactor *req_actors, *forbid_actors;
    size_t n_req_actors, n_forbid_actors;
    char *const *trusted; /* the policy's trusted_issuers, sorted (owned by the policy) */
    size_t n_trusted;
    char **schemes, **methods;
    size_t n_schemes, n_methods;
    struct phost *hosts;
    size_t n_hosts;
    uint32_t *ports;
    size_t n_ports;
    int deleg_required; /* -1 absent, 0 must not be present, 1 must be present */
    int has_max_depth;
    uint64_t max_depth;
    int may_act;        /* -1 absent, else a Sworn__V1__MayAct__Result */
    int deleg_verified; /* -1 absent, 1 must be verified, 0 must not be (docs/policy.md 2.5) */
    char **req_scopes;  /* delegation.require_scopes: each must be among the token's scopes */
    size_t n_req_scopes;
    char **client_ids; /* delegation.client_ids: the token's client_id must be one of them */
    size_t n_client_ids;
    char **audiences; /* delegation.audiences: one of the token's aud must be one of them */
    size_t n_audiences;
    int has_time;
    unsigned days;      /* bit d set: day d allowed (0 = Sunday); 0x7f when absent */
    unsigned start_min; /* minute of day, inclusive */
    unsigned end_min;   /* minute of day, exclusive; 1440 = midnight */
    struct pbudget count, sum, tokens;
    char credential[SWORN_POLICY_ID_MAX + 1];
    uint64_t escalation_timeout_ms;
    int path_params; /* resource.path_parameters: true (allow and escalate rules only) */
    /* For the lint module (lint.h): where the rule's mapping is in the file (1-based), whether it
     * has a delegation key, and whether it has a key (at its top or under resource) that lint.c
     * does not know, in which case lint never claims that it covers another rule. */
    unsigned line, col;
    int has_delegation;
    int lint_opaque;
};

struct sworn_policy {
    uint8_t digest[SWORN_POLICY_HASH_LEN];
    uint64_t version;
    struct prule *rules;
    size_t nrules;
    char **trusted; /* trusted_issuers, sorted with strcmp; NULL when the key is absent */
    size_t n_trusted;
    uint64_t max_window_ms;
    int path_params; /* some rule has path_parameters: true; else ';' in a path is refused */
};

/* The rule with id, or NULL. */
const struct prule *policy_find_rule(const struct sworn_policy *p, const char *id);

/* --- Budgets (budget.c) --- */

/* The kinds of budget a counter key names. */
enum pbudget_kind { PBUDGET_COUNT = 'c', PBUDGET_SUM = 's', PBUDGET_TOKENS = 't' };

/*
 * The counter key of budget bg (of kind) of rule r for principal pr (ignored when global; with
 * its sandbox_start_index when per sandbox) at time now: SHA-256 over the kind, the rule id, the
 * scope, the principal, the pointer, the window length and start (and the sandbox's index for
 * per: sandbox). Fills c (key, window_end_ms, tokens; amount is the caller's). 0, or -1 when the
 * hash fails.
 */
int budget_key(const struct prule *r, const struct pbudget *bg, enum pbudget_kind kind,
               const Sworn__V1__Principal *pr, uint64_t now_ms, struct sworn_policy_charge *c);

/*
 * Check and charge the n (<= SWORN_POLICY_CHARGES) charges of one allow atomically, under the
 * budget lock: when each counter plus its amount stays within its limit (limits[i]), all are
 * charged and 0 returned. Otherwise nothing is charged and 1 is returned with *which the first
 * index that did not fit (and *used its current value), or 2 when the counter table is full
 * (*which: the first index that needed a new counter). -1 on out of memory, or when two charges
 * name one counter. force: charge without checking (replay). A charge with amount UINT64_MAX and
 * limit 0 never fits: policy.c uses it for a sum that cannot be measured, so that the first
 * refusing rule in file order is found in one pass. A token charge (c[i].tokens) also needs its
 * counter below its limit before the charge (a ceiling of 0 does not fit a spent budget).
 */
int budget_charge(struct sworn_budgets *b, struct sworn_policy_charge *c, const uint64_t *limits,
                  size_t n, uint64_t now_ms, int force, size_t *which, uint64_t *used);

#endif
