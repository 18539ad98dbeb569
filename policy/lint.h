/*
 * lint.h -- warnings about a loaded policy that is valid but probably does not say what its author
 * meant (docs/policy.md section 7, "Warnings"). `sworn-policy check` prints them and decisiond
 * logs them at every policy load; neither refuses a policy for them.
 *
 * Every warning is conservative: it is given only when the code is sure of it (a rule reported
 * as shadowed is shadowed for every request; a glob reported as missing a bare name does miss
 * it). Where lint cannot be sure (a delegation condition, a key it does not know, a glob it
 * cannot compare), it says nothing. The warnings:
 *
 *   - a rule that can never decide, because an earlier rule of the same effect matches every
 *     request it matches (for an allow rule: its reason and credential are never used, its
 *     budgets still count);
 *   - an allow or escalate rule that can never take effect, because a deny rule (anywhere in the
 *     file) matches every request it matches, or an allow rule that an escalate rule covers;
 *   - in a deny or escalate rule (where a request that slips past is a hole, not a default deny):
 *     a path pattern "/x/" then "**" whose list does not match "/x"; a host pattern "**.x" or
 *     "*.x" whose list does not match "x"; a path pattern with a "**" segment in its middle, which
 *     needs one segment there (so "/", "**", "/.git/", "**" does not match "/.git/config").
 *     (Path globs are spelt in pieces here, where C would read a slash and a star as a comment.)
 *
 * Contract: sworn_policy_lint calls fn once per warning, in file order of the rule it is about,
 * with the rule's position (1-based line and column of its mapping, as in load errors) and a
 * one-line message without the file name; the message and rule id are valid only during the
 * call. The work is bounded (at most SWORN_LINT_STEPS_MAX comparisons, a path glob match
 * counting by its cost; past that a last warning says that the shadowing and path checks stopped
 * early), so a large policy cannot stall a load.
 * Returns the number of warnings (>= 0), or -1 with sworn_err set on an internal failure
 * (out of memory). Pure: reads the policy only; thread-safe on an immutable policy.
 */
#ifndef SWORN_LINT_H
#define SWORN_LINT_H

#include "policy.h"

/* The comparisons of one lint run at most (pairs of rules times their list items). */
#define SWORN_LINT_STEPS_MAX 20000000ull

struct sworn_lint_warning {
    unsigned line, col;  /* the rule's position in the file, 1-based */
    const char *rule_id; /* the rule the warning is about */
    const char *message; /* one line, no file name, no trailing newline */
};

typedef void (*sworn_lint_fn)(void *arg, const struct sworn_lint_warning *w);

int sworn_policy_lint(const struct sworn_policy *p, sworn_lint_fn fn, void *arg);

#endif
