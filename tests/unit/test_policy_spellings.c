/*
 * test_policy_spellings.c -- the policy review's findings (issue 12) as one table: every
 * spelling of a request that some server, resolver or framework reads as another request is
 * either caught by the rule written for its canonical form or refused before any rule, and
 * recorded. Each case runs twice, through two programs that must agree on every case:
 *
 *   - the real `sworn-policy eval` ($SWORN_POLICY_BIN), the auditor's and the author's tool;
 *   - the real daemon of a dev stack started with the same policy file, whose answer must be a
 *     decision (not an error) that the log records.
 *
 * Both must give the case's effect, rule id and (where the case names one) a reason containing
 * the given text, and the same reason as each other. A case may repeat its request (budgets): it
 * then gives one expected effect per repetition, and both programs see the repetitions in order
 * (eval in one run, so its budget counters are shared like the daemon's).
 *
 * Adding a finding's cases: add its policy to `policies` and its rows to `cases`; the harness
 * does the rest. The requests are built as JSON (docs/policy.md section 8) and read with the
 * decision socket's own decoder (wire/reqjson.h) for the daemon.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "dclient.h"
#include "err.h"
#include "policy_fixture.h"
#include "reqjson.h"
#include "stack_fixture.h"
#include "testutil.h"

#define REPEAT_MAX 8
#define JSON_MAX 4096
#define ID_MAX 64

/* A policy of the table, by name. */
struct policy {
    const char *name;
    const char *yaml;
};

/*
 * One case. A NULL scheme is "https", a 0 port 443 (but 0 with the scheme "": no readable
 * target), a NULL principal "agent-1", a NULL method no context; the operation is "tcp.connect"
 * for the scheme tcp (in any case: a raw tunnel) and "http.request" otherwise; delegation is a JSON
 * object's text or NULL. expect holds one of 'A' (allow), 'D' (deny) or 'E' (escalate) per
 * repetition; rule is the rule id every repetition must name ("": none, refused or default deny),
 * or, when it holds commas, one id per repetition. reason, when not NULL, is text the reason must
 * contain (of every repetition). A case named in `numbers` (below) also carries that
 * context.json_numbers (for sum budgets).
 */
struct spelling {
    const char *policy;
    const char *what;
    const char *scheme;
    const char *host;
    unsigned port;
    const char *path;
    const char *method;
    const char *principal;
    const char *delegation;
    const char *expect;
    const char *rule;
    const char *reason;
};

#define REFUSED "is refused"
#define METHOD_REFUSED "the method is refused: "
#define HEADER_REFUSED "the request is refused: header name "

/* Delegations (docs/policy.md section 8) of one or two actors, each (subject, issuer). */
#define IDP "https://idp.example"
#define DELEG1(s1, i1)                                                                             \
    "{\"subject\":\"user\",\"issuer\":\"" IDP "\",\"actors\":[{\"subject\":\"" s1                  \
    "\",\"issuer\":\"" i1 "\"}]}"
#define DELEG2(s1, i1, s2, i2)                                                                     \
    "{\"subject\":\"user\",\"issuer\":\"" IDP "\",\"actors\":[{\"subject\":\"" s1                  \
    "\",\"issuer\":\"" i1 "\"},{\"subject\":\"" s2 "\",\"issuer\":\"" i2 "\"}]}"

static const struct policy policies[] = {
    {"addresses", "rules:\n"
                  "  - id: no-metadata\n"
                  "    effect: deny\n"
                  "    resource: {hosts: [\"169.254.169.254\"]}\n"
                  "  - id: no-loopback\n"
                  "    effect: deny\n"
                  "    resource: {hosts: [\"127.0.0.1\", \"[::1]\"]}\n"
                  "  - id: no-private\n"
                  "    effect: deny\n"
                  "    resource: {hosts: [\"10.0.0.1\", \"192.168.0.1\", \"172.16.0.1\"]}\n"
                  "  - id: no-denied\n"
                  "    effect: deny\n"
                  "    resource: {paths: [\"/denied/**\"]}\n"
                  "  - id: open\n"
                  "    effect: allow\n"
                  "    resource: {schemes: [http, https]}\n"},
    {"paths", "rules:\n"
              "  - id: allowed\n"
              "    effect: allow\n"
              "    resource: {paths: [\"/allowed/**\"]}\n"
              "    methods: [GET, HEAD]\n"
              "  - id: denied\n"
              "    effect: deny\n"
              "    resource: {paths: [\"/denied/**\"]}\n"
              "  - id: escalate\n"
              "    effect: escalate\n"
              "    resource: {paths: [\"/escalate/**\"]}\n"
              "  - id: api\n"
              "    effect: allow\n"
              "    resource: {paths: [\"/api/**\"]}\n"
              "  - id: api-admin\n"
              "    effect: deny\n"
              "    resource: {paths: [\"/api/admin/**\"]}\n"},
    {"names", "rules:\n"
              "  - id: no-evil\n"
              "    effect: deny\n"
              "    resource: {hosts: [evil.com, \"**.evil.com\", xn--bcher-kva.example]}\n"
              "  - id: no-metadata\n"
              "    effect: deny\n"
              "    resource: {hosts: [\"169.254.169.254\"]}\n"
              "  - id: web\n"
              "    effect: allow\n"
              "    resource: {schemes: [https]}\n"},
    {"methods", "rules:\n"
                "  - id: no-delete\n"
                "    effect: deny\n"
                "    methods: [DELETE]\n"
                "  - id: open\n"
                "    effect: allow\n"},
    {"actors", "trusted_issuers: [\"https://idp.example\", \"https://idp2.example\"]\n"
               "rules:\n"
               "  - id: no-evil\n"
               "    effect: deny\n"
               "    delegation: {require_actors: [svc-evil]}\n"
               "  - id: no-evil-idp\n"
               "    effect: deny\n"
               "    delegation:\n"
               "      require_actors: [{issuer: \"https://evil.example\", subject: \"*\"}]\n"
               "  - id: need-auditor\n"
               "    effect: deny\n"
               "    principals: [agent-audited]\n"
               "    delegation: {forbid_actors: [auditor]}\n"
               "  - id: svc-a\n"
               "    effect: allow\n"
               "    principals: [agent-1]\n"
               "    delegation: {require_actors: [svc-a], forbid_actors: [\"untrusted-*\"]}\n"
               "  - id: svc-b-other\n"
               "    effect: allow\n"
               "    principals: [agent-1]\n"
               "    delegation:\n"
               "      require_actors:\n"
               "        - issuer: \"https://other.example\"\n"
               "          subject: svc-b\n"
               "  - id: fallback\n"
               "    effect: allow\n"
               "    principals: [agent-audited]\n"},
    /* Findings 1 and 3: IPv4-mapped IPv6 is the IPv4 address, in requests and in patterns. */
    {"mapped", "rules:\n"
               "  - id: no-metadata\n"
               "    effect: deny\n"
               "    resource: {hosts: [\"[::ffff:169.254.169.254]\"]}\n"
               "  - id: no-loopback\n"
               "    effect: deny\n"
               "    resource: {hosts: [\"::ffff:7f00:1\"]}\n"
               "  - id: internal\n"
               "    effect: allow\n"
               "    resource: {hosts: [\"10.0.0.5\"]}\n"},
    /* Finding 2: path parameters, permitted by one rule; denies match the bare path. */
    {"params", "rules:\n"
               "  - id: app\n"
               "    effect: allow\n"
               "    resource: {paths: [\"/app/**\"], path_parameters: true}\n"
               "  - id: plain\n"
               "    effect: allow\n"
               "    resource: {paths: [\"/plain/**\"]}\n"
               "  - id: app-admin\n"
               "    effect: deny\n"
               "    resource: {paths: [\"/app/admin/**\"]}\n"
               "  - id: app-pay\n"
               "    effect: escalate\n"
               "    resource: {paths: [\"/app/pay/**\"]}\n"
               "  - id: no-exe\n"
               "    effect: deny\n"
               "    resource: {paths: [\"/app/files/*.exe\"]}\n"},
    /* Finding 7: a broader allow earlier in the file must not switch a later budget off. */
    {"budgets", "rules:\n"
                "  - id: read-all\n"
                "    effect: allow\n"
                "    methods: [GET]\n"
                "  - id: pay-budget\n"
                "    effect: allow\n"
                "    resource: {paths: [\"/pay/**\"]}\n"
                "    budget: {count: 1, window: 1d}\n"
                "  - id: spend\n"
                "    effect: allow\n"
                "    resource: {paths: [\"/spend/**\"]}\n"
                "    sum: {pointer: /amount, max: \"10\", window: 1d}\n"
                "  - id: wide-budget\n"
                "    effect: allow\n"
                "    resource: {paths: [\"/two/**\"]}\n"
                "    budget: {count: 3, window: 1d}\n"
                "  - id: narrow-budget\n"
                "    effect: allow\n"
                "    resource: {paths: [\"/two/narrow/**\"]}\n"
                "    budget: {count: 2, window: 1d, per: global}\n"
                "  - id: no-secret\n"
                "    effect: deny\n"
                "    resource: {paths: [\"/pay/secret/**\"]}\n"},
    /* Findings 2 and 7 together: a ';' must not dodge a budget of a rule that does not permit
     * path parameters, under a broader allow that does. */
    {"params-budgets", "rules:\n"
                       "  - id: read-all\n"
                       "    effect: allow\n"
                       "    methods: [GET]\n"
                       "    resource: {path_parameters: true}\n"
                       "  - id: pay-budget\n"
                       "    effect: allow\n"
                       "    resource: {paths: [\"/pay/**\"]}\n"
                       "    budget: {count: 1, window: 1d}\n"},
    /* Attack 1: a method-override header spelt with '_' (CGI, WSGI, Rack and PHP read
     * X_HTTP_METHOD_OVERRIDE as X-HTTP-Method-Override) or with spaces around it. */
    {"attack-1", "rules:\n"
                 "  - {id: open, effect: allow}\n"
                 "  - {id: no-delete, effect: deny, methods: [DELETE]}\n"},
    /* Raw tunnels (operation tcp.connect, scheme tcp): an allow written without schemes is for
     * HTTP and never opens raw TCP; a deny without schemes covers a host's raw ports too. And
     * requests the proxy refused itself, denied before every rule of an allow-all policy. */
    {"tcp", "rules:\n"
            "  - id: no-evil\n"
            "    effect: deny\n"
            "    resource: {hosts: [evil.example]}\n"
            "  - id: web\n"
            "    effect: allow\n"
            "    resource: {hosts: [\"**.example\"]}\n"
            "  - id: ask\n"
            "    effect: escalate\n"
            "    resource: {hosts: [ask.example]}\n"
            "  - id: db\n"
            "    effect: allow\n"
            "    resource: {schemes: [tcp], hosts: [db.example], ports: [5432]}\n"},
};

static const struct spelling cases[] = {
    /* Finding 1: IPv4 spellings a resolver maps to a denied address, and encoded paths. */
    {"addresses", "the canonical form itself", NULL, "169.254.169.254", 0, "/", NULL, NULL, NULL,
     "D", "no-metadata", NULL},
    {"addresses", "one integer", NULL, "2852039166", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "hex integer", NULL, "0xa9fea9fe", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "three parts", NULL, "169.254.43518", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "octal parts", NULL, "0251.0376.0251.0376", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "hex parts", NULL, "0xa9.0xfe.0xa9.0xfe", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "leading zeros", NULL, "169.254.169.0254", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "trailing dot", NULL, "169.254.169.254.", 0, "/", NULL, NULL, NULL, "D",
     "no-metadata", NULL},
    {"addresses", "loopback, short", NULL, "127.1", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "loopback, octal", NULL, "0177.0.0.1", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "loopback, hex", NULL, "0x7f.0.0.1", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "loopback, integer", NULL, "2130706433", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "loopback, octal integer", NULL, "017700000001", 0, "/", NULL, NULL, NULL, "D",
     "", REFUSED},
    {"addresses", "loopback, IPv6 long form", NULL, "[0:0:0:0:0:0:0:1]", 0, "/", NULL, NULL, NULL,
     "D", "no-loopback", NULL},
    {"addresses", "loopback, IPv6 without brackets", NULL, "::1", 0, "/", NULL, NULL, NULL, "D",
     "no-loopback", NULL},
    {"addresses", "RFC 1918, short", NULL, "10.1", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "RFC 1918, hex part", NULL, "0xa.0.0.1", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "RFC 1918, three parts", NULL, "192.168.1", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "RFC 1918, integer", NULL, "2886729729", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"addresses", "IPv4-mapped IPv6, dotted", NULL, "[::ffff:169.254.169.254]", 0, "/", NULL, NULL,
     NULL, "D", "no-metadata", NULL},
    {"addresses", "IPv4-mapped IPv6, hex", NULL, "::ffff:a9fe:a9fe", 0, "/", NULL, NULL, NULL, "D",
     "no-metadata", NULL},
    {"addresses", "IPv4-mapped loopback", NULL, "[::ffff:7f00:1]", 0, "/", NULL, NULL, NULL, "D",
     "no-loopback", NULL},
    {"addresses", "IPv4-mapped RFC 1918, long form", NULL, "[0:0:0:0:0:ffff:a00:1]", 0, "/", NULL,
     NULL, NULL, "D", "no-private", NULL},
    {"addresses", "zone id", NULL, "[fe80::1%25eth0]", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "encoded slash", NULL, "example.com", 0, "/allowed/..%2fdenied/x", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "encoded backslash", NULL, "example.com", 0, "/allowed/..%5cdenied/x", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "backslashes", NULL, "example.com", 0, "/allowed\\..\\denied\\x", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "dot segments", NULL, "example.com", 0, "/allowed/../denied/x", NULL, NULL, NULL,
     "D", "no-denied", NULL},
    {"addresses", "encoded dot segments", NULL, "example.com", 0, "/allowed/%2e%2E/denied/x", NULL,
     NULL, NULL, "D", "no-denied", NULL},
    {"addresses", "an ordinary name", NULL, "example.com", 0, "/x", NULL, NULL, NULL, "A", "open",
     NULL},

    /* Finding 2: path forms that Tomcat, Jetty, Spring and nginx read differently. */
    {"paths", "plain allow", "http", "127.0.0.1", 8080, "/allowed/x", "GET", NULL, NULL, "A",
     "allowed", NULL},
    {"paths", "..; into a denied tree", "http", "127.0.0.1", 8080, "/allowed/..;/denied/secrets",
     "GET", NULL, NULL, "D", "", REFUSED},
    {"paths", "..; past the operator", "http", "127.0.0.1", 8080,
     "/allowed/..;/escalate/delete-repo", "GET", NULL, NULL, "D", "", REFUSED},
    {"paths", "..; twice", "http", "127.0.0.1", 8080, "/allowed/x/..;/..;/denied/secrets", "GET",
     NULL, NULL, "D", "", REFUSED},
    {"paths", "encoded ..;", "http", "127.0.0.1", 8080, "/allowed/%2e%2e;/denied/secrets", "GET",
     NULL, NULL, "D", "", REFUSED},
    {"paths", "empty segment", "http", "127.0.0.1", 8080, "/api//admin/x", "GET", NULL, NULL, "D",
     "", REFUSED},
    {"paths", "path parameter", "http", "127.0.0.1", 8080, "/api/admin;v=1/x", "GET", NULL, NULL,
     "D", "", REFUSED},
    {"paths", "..; under an allowed tree", "http", "127.0.0.1", 8080, "/api/..;/admin/x", "GET",
     NULL, NULL, "D", "", REFUSED},
    {"paths", "a deny under an allow", "http", "127.0.0.1", 8080, "/api/admin/x", "GET", NULL, NULL,
     "D", "api-admin", NULL},
    {"paths", "dot segment back into the deny", "http", "127.0.0.1", 8080, "/api/x/../admin/y",
     "GET", NULL, NULL, "D", "api-admin", NULL},

    /* Finding 3: host spellings outside the name grammar. */
    {"names", "the name", NULL, "evil.com", 0, "/", NULL, NULL, NULL, "D", "no-evil", NULL},
    {"names", "upper case", NULL, "EVIL.Com", 0, "/", NULL, NULL, NULL, "D", "no-evil", NULL},
    {"names", "trailing dot", NULL, "evil.com.", 0, "/", NULL, NULL, NULL, "D", "no-evil", NULL},
    {"names", "a subdomain", NULL, "a.b.evil.com", 0, "/", NULL, NULL, NULL, "D", "no-evil", NULL},
    {"names", "fullwidth e (UTS-46 maps it to e; refused, not mapped)", NULL, "\xef\xbd\x85vil.com",
     0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "fullwidth name and ideographic full stop", NULL,
     "\xef\xbd\x85\xef\xbd\x96\xef\xbd\x89\xef\xbd\x8c\xe3\x80\x82\xef\xbd\x83\xef\xbd\x8f\xef\xbd"
     "\x8d",
     0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "a U-label", NULL,
     "b\xc3\xbc"
     "cher.example",
     0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "a U-label in upper case", NULL,
     "B\xc3\x9c"
     "CHER.example",
     0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "a port in the host", NULL, "evil.com:443", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"names", "user info", NULL, "user@evil.com", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "two trailing dots", NULL, "evil.com..", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "an empty label", NULL, "a..evil.com", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "an underscore", NULL, "a_b.evil.com", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "a percent escape", NULL, "evil%2ecom", 0, "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"names", "IPv4-mapped IPv6 of the metadata address", NULL, "[::ffff:169.254.169.254]", 0, "/",
     NULL, NULL, NULL, "D", "no-metadata", NULL},
    {"names", "IPv4-mapped IPv6, hex, no brackets", NULL, "::ffff:a9fe:a9fe", 0, "/", NULL, NULL,
     NULL, "D", "no-metadata", NULL},
    {"names", "a zone-scoped IPv6 literal", NULL, "[fe80::a9fe:a9fe%25eth0]", 0, "/", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"names", "a zone id without brackets", NULL, "fe80::1%eth0", 0, "/", NULL, NULL, NULL, "D", "",
     REFUSED},
    {"names", "another name", NULL, "good.example", 0, "/", NULL, NULL, NULL, "A", "web", NULL},

    /* Finding 5: methods that are not upper-case RFC 9110 tokens, refused before any rule.
     * (`GET\t`, a C1 control or bytes that are not UTF-8 never get this far: the decision
     * socket's decoder refuses the frame and records it, tests/unit/test_policy.c,
     * test_method_refused.) */
    {"methods", "DELETE is denied", NULL, "api.example", 0, "/", "DELETE", NULL, NULL, "D",
     "no-delete", NULL},
    {"methods", "GET is allowed", NULL, "api.example", 0, "/", "GET", NULL, NULL, "A", "open",
     NULL},
    {"methods", "another token", NULL, "api.example", 0, "/", "M-SEARCH", NULL, NULL, "A", "open",
     NULL},
    {"methods", "no context: matches no methods list", NULL, "api.example", 0, "/", NULL, NULL,
     NULL, "A", "open", NULL},
    {"methods", "an empty method: matches no methods list", NULL, "api.example", 0, "/", "", NULL,
     NULL, "A", "open", NULL},
    {"methods", "lower case", NULL, "api.example", 0, "/", "delete", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "capitalised", NULL, "api.example", 0, "/", "Delete", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "mixed case", NULL, "api.example", 0, "/", "dElEtE", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "one lower-case letter last", NULL, "api.example", 0, "/", "DELETe", NULL, NULL,
     "D", "", METHOD_REFUSED},
    {"methods", "trailing space", NULL, "api.example", 0, "/", "DELETE ", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "leading space", NULL, "api.example", 0, "/", " DELETE", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "a space inside", NULL, "api.example", 0, "/", "DEL ETE", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "one space", NULL, "api.example", 0, "/", " ", NULL, NULL, "D", "", METHOD_REFUSED},
    {"methods", "a request line", NULL, "api.example", 0, "/", "DELETE /x", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "a list", NULL, "api.example", 0, "/", "GET,DELETE", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "a separator", NULL, "api.example", 0, "/", "DELETE;", NULL, NULL, "D", "",
     METHOD_REFUSED},
    {"methods", "a no-break space", NULL, "api.example", 0, "/", "DELETE\xc2\xa0", NULL, NULL, "D",
     "", METHOD_REFUSED},
    {"methods", "a non-ASCII letter", NULL, "api.example", 0, "/", "DEL\xc3\x89TE", NULL, NULL, "D",
     "", METHOD_REFUSED},
    {"methods", "fullwidth letters (NFKC maps them to DELETE)", NULL, "api.example", 0, "/",
     "\xef\xbc\xa4\xef\xbc\xa5\xef\xbc\xac\xef\xbc\xa5\xef\xbc\xb4\xef\xbc\xa5", NULL, NULL, "D",
     "", METHOD_REFUSED},
    {"methods", "dotless i (upper-cases to I)", NULL, "api.example", 0, "/", "DEL\xc4\xb1TE", NULL,
     NULL, "D", "", METHOD_REFUSED},
    {"methods", "a bad resource is named first", NULL, "127.1", 0, "/", "delete", NULL, NULL, "D",
     "", "the resource is refused"},

    /* Finding 6: an actor is (issuer, subject). Plain items read in the direction that fails
     * closed: narrow (trusted issuers only) for require_actors of an allow and forbid_actors of
     * a deny or escalate, broad (any issuer) for the other two. (The daemon holds an escalation
     * for an operator, so escalate rules are tested in tests/unit/test_policy.c,
     * test_actor_issuers.) */
    {"actors", "a trusted svc-a", NULL, "api.example", 0, "/", "GET", NULL, DELEG1("svc-a", IDP),
     "A", "svc-a", NULL},
    {"actors", "a second trusted issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp2.example"), "A", "svc-a", NULL},
    {"actors", "the review's: svc-a from attacker-idp", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "attacker-idp"), "D", "", NULL},
    {"actors", "svc-a without an issuer (never trusted)", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", ""), "D", "", NULL},
    {"actors", "the trusted issuer only at the top level", NULL, "api.example", 0, "/", "GET", NULL,
     "{\"subject\":\"user\",\"issuer\":\"" IDP "\",\"actors\":[{\"subject\":\"svc-a\","
     "\"issuer\":\"\"}]}",
     "D", "", NULL},
    {"actors", "issuer in upper case (another issuer)", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "HTTPS://IDP.EXAMPLE"), "D", "", NULL},
    {"actors", "issuer host in upper case", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://IDP.example"), "D", "", NULL},
    {"actors", "issuer with a trailing slash", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp.example/"), "D", "", NULL},
    {"actors", "issuer with a trailing space", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp.example "), "D", "", NULL},
    {"actors", "issuer with a no-break space", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp.example\xc2\xa0"), "D", "", NULL},
    {"actors", "a trusted issuer as a prefix", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp.example.attacker"), "D", "", NULL},
    {"actors", "a prefix of a trusted issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-a", "https://idp"), "D", "", NULL},
    {"actors", "a look-alike letter in the issuer (Cyrillic e)", NULL, "api.example", 0, "/", "GET",
     NULL, DELEG1("svc-a", "https://idp.\xd0\xb5xample"), "D", "", NULL},
    {"actors", "no delegation at all", NULL, "api.example", 0, "/", "GET", NULL, NULL, "D", "",
     NULL},
    {"actors", "subject in upper case", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("SVC-A", IDP), "D", "", NULL},
    {"actors", "svc-a twice, once trusted", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG2("svc-a", "attacker-idp", "svc-a", IDP), "A", "svc-a", NULL},
    {"actors", "deny: svc-evil from attacker-idp", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-evil", "attacker-idp"), "D", "no-evil", NULL},
    {"actors", "deny: svc-evil without an issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-evil", ""), "D", "no-evil", NULL},
    {"actors", "deny: svc-evil from a trusted issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-evil", IDP), "D", "no-evil", NULL},
    {"actors", "deny: svc-evil behind a trusted svc-a", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG2("svc-a", IDP, "svc-evil", "attacker-idp"), "D", "no-evil", NULL},
    {"actors", "deny: svc-evil before a trusted svc-a", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG2("svc-evil", "HTTPS://IDP.EXAMPLE", "svc-a", IDP), "D", "no-evil", NULL},
    {"actors", "allow's forbid: untrusted-x from attacker-idp", NULL, "api.example", 0, "/", "GET",
     NULL, DELEG2("svc-a", IDP, "untrusted-x", "attacker-idp"), "D", "", NULL},
    {"actors", "allow's forbid: untrusted-x without an issuer", NULL, "api.example", 0, "/", "GET",
     NULL, DELEG2("svc-a", IDP, "untrusted-x", ""), "D", "", NULL},
    {"actors", "allow's forbid: untrusted-x from a trusted issuer", NULL, "api.example", 0, "/",
     "GET", NULL, DELEG2("untrusted-x", IDP, "svc-a", IDP), "D", "", NULL},
    {"actors", "mapping: the right issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-b", "https://other.example"), "A", "svc-b-other", NULL},
    {"actors", "mapping: a trusted but other issuer", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-b", IDP), "D", "", NULL},
    {"actors", "mapping: attacker-idp", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-b", "attacker-idp"), "D", "", NULL},
    {"actors", "mapping: issuer in upper case", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("svc-b", "HTTPS://OTHER.EXAMPLE"), "D", "", NULL},
    {"actors", "mapping: no issuer", NULL, "api.example", 0, "/", "GET", NULL, DELEG1("svc-b", ""),
     "D", "", NULL},
    {"actors", "deny by issuer: any subject", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG1("anyone", "https://evil.example"), "D", "no-evil-idp", NULL},
    {"actors", "deny by issuer: behind a trusted svc-a", NULL, "api.example", 0, "/", "GET", NULL,
     DELEG2("svc-a", IDP, "svc-a", "https://evil.example"), "D", "no-evil-idp", NULL},
    {"actors", "deny by issuer is exact, but another spelling is untrusted", NULL, "api.example", 0,
     "/", "GET", NULL, DELEG1("svc-a", "https://EVIL.example"), "D", "", NULL},
    {"actors", "deny's forbid: a trusted auditor", NULL, "api.example", 0, "/", "GET",
     "agent-audited", DELEG1("auditor", IDP), "A", "fallback", NULL},
    {"actors", "deny's forbid: auditor from attacker-idp", NULL, "api.example", 0, "/", "GET",
     "agent-audited", DELEG1("auditor", "attacker-idp"), "D", "need-auditor", NULL},
    {"actors", "deny's forbid: auditor without an issuer", NULL, "api.example", 0, "/", "GET",
     "agent-audited", DELEG1("auditor", ""), "D", "need-auditor", NULL},
    {"actors", "deny's forbid: auditor, issuer in upper case", NULL, "api.example", 0, "/", "GET",
     "agent-audited", DELEG1("auditor", "HTTPS://IDP.EXAMPLE"), "D", "need-auditor", NULL},
    {"actors", "deny's forbid: auditor untrusted beside another trusted actor", NULL, "api.example",
     0, "/", "GET", "agent-audited", DELEG2("svc-a", IDP, "auditor", "attacker-idp"), "D",
     "need-auditor", NULL},
    {"actors", "deny's forbid: no delegation", NULL, "api.example", 0, "/", "GET", "agent-audited",
     NULL, "D", "need-auditor", NULL},
    /* Findings 1 and 3 (engineer A): IPv4-mapped IPv6 maps to IPv4; the other embeddings, the
     * mapped unspecified address and zone ids stay refused. */
    {"addresses", "IPv4-mapped loopback, leading zeros", NULL, "[::ffff:7f00:0001]", 0, "/", NULL,
     NULL, NULL, "D", "no-loopback", NULL},
    {"addresses", "IPv4-mapped loopback, dotted", NULL, "[::ffff:127.0.0.1]", 0, "/", NULL, NULL,
     NULL, "D", "no-loopback", NULL},
    {"addresses", "IPv4-mapped loopback, upper case, no brackets", NULL, "::FFFF:127.0.0.1", 0, "/",
     NULL, NULL, NULL, "D", "no-loopback", NULL},
    {"addresses", "IPv4-mapped RFC 1918, long dotted form", NULL, "[0:0:0:0:0:ffff:192.168.0.1]", 0,
     "/", NULL, NULL, NULL, "D", "no-private", NULL},
    {"addresses", "IPv4-mapped RFC 1918, zero-padded", NULL,
     "[0000:0000:0000:0000:0000:ffff:ac10:0001]", 0, "/", NULL, NULL, NULL, "D", "no-private",
     NULL},
    {"addresses", "IPv4-mapped metadata, trailing dot", NULL, "[::ffff:169.254.169.254.]", 0, "/",
     NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "IPv4-mapped unspecified", NULL, "[::ffff:0.0.0.0]", 0, "/", NULL, NULL, NULL,
     "D", "", REFUSED},
    {"addresses", "IPv4-mapped unspecified, hex", NULL, "::ffff:0:0", 0, "/", NULL, NULL, NULL, "D",
     "", REFUSED},
    {"addresses", "IPv4-mapped, short IPv4 inside", NULL, "[::ffff:127.1]", 0, "/", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "IPv4-mapped, octal IPv4 inside", NULL, "[::ffff:0177.0.0.1]", 0, "/", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "IPv4-mapped with a zone id", NULL, "[::ffff:169.254.169.254%25eth0]", 0, "/",
     NULL, NULL, NULL, "D", "", REFUSED},
    {"addresses", "IPv4-translated metadata", NULL, "[::ffff:0:a9fe:a9fe]", 0, "/", NULL, NULL,
     NULL, "D", "", REFUSED},
    {"addresses", "IPv4-compatible metadata", NULL, "[::169.254.169.254]", 0, "/", NULL, NULL, NULL,
     "D", "", REFUSED},
    {"addresses", "NAT64 metadata is another (IPv6) address", NULL, "[64:ff9b::a9fe:a9fe]", 0, "/",
     NULL, NULL, NULL, "A", "open", NULL},
    {"mapped", "a mapped host allowed by the rule for its IPv4 address", NULL, "[::ffff:10.0.0.5]",
     0, "/", NULL, NULL, NULL, "A", "internal", NULL},
    {"mapped", "the same, hex without brackets", NULL, "::ffff:a00:5", 0, "/", NULL, NULL, NULL,
     "A", "internal", NULL},
    {"mapped", "the IPv4 address itself", NULL, "10.0.0.5", 0, "/", NULL, NULL, NULL, "A",
     "internal", NULL},
    {"mapped", "a pattern written mapped denies the dotted quad", NULL, "169.254.169.254", 0, "/",
     NULL, NULL, NULL, "D", "no-metadata", NULL},
    {"mapped", "and the mapped request", NULL, "[::ffff:a9fe:a9fe]", 0, "/", NULL, NULL, NULL, "D",
     "no-metadata", NULL},
    {"mapped", "a hex mapped pattern denies the dotted quad", NULL, "127.0.0.1", 0, "/", NULL, NULL,
     NULL, "D", "no-loopback", NULL},
    {"mapped", "a translated form of the allowed address is refused", NULL, "[::ffff:0:a00:5]", 0,
     "/", NULL, NULL, NULL, "D", "", REFUSED},
    {"mapped", "another address", NULL, "10.0.0.6", 0, "/", NULL, NULL, NULL, "D", "",
     "default deny"},

/* Finding 2 (engineer A): path parameters, "name;params" only, permitted per rule. */
#define P(what, path, expect, rule, reason)                                                        \
    {                                                                                              \
        "params", what, NULL, "app.example", 0, path, "GET", NULL, NULL, expect, rule, reason      \
    }
    P("a session id under a permitting allow", "/app/x;jsessionid=1", "A", "app", NULL),
    P("matrix parameters on two segments", "/app/a;v=1/b;c=2,3;d", "A", "app", NULL),
    P("an encoded ';' is a byte of the segment", "/app/x%3Bv=1", "A", "app", NULL),
    P("';' in the query is not a parameter", "/app/x?a;b", "A", "app", NULL),
    P("the same under an allow that does not permit them", "/plain/x;jsessionid=1", "D", "",
      "rule plain, which matches its path, does not permit them"),
    P("that allow without parameters", "/plain/x", "A", "plain", NULL),
    P("a parameter on the denied segment", "/app/admin;v=1/x", "D", "app-admin", NULL),
    P("a parameter on the last segment", "/app/admin/x;v=1", "D", "app-admin", NULL),
    P("a parameter on the parent segment", "/app;v=1/admin/x", "D", "app-admin", NULL),
    P("an empty parameter", "/app/admin;/x", "D", "app-admin", NULL),
    P("parameters then a real dot segment", "/app/x;a=1/../admin/y", "D", "app-admin", NULL),
    P("the bare path has the verdict of the path itself", "/app/admin;v=1", "A", "app", NULL),
    P("and so does the path itself", "/app/admin", "A", "app", NULL),
    P("an escalation that does not permit them denies", "/app/pay;x=1/42", "D", "app-pay",
      "does not permit them"),
    P("also with the parameter on the last segment", "/app/pay/42;x", "D", "app-pay",
      "does not permit them"),
    P("..; into the denied tree", "/app/x/..;/admin/y", "D", "", REFUSED),
    P("..; with parameters", "/app/x/..;v=1/admin/y", "D", "", REFUSED),
    P("encoded ..;", "/app/x/%2e%2e;/admin/y", "D", "", REFUSED),
    P("half-encoded ..;", "/app/x/.%2E;/admin/y", "D", "", REFUSED),
    P(".;", "/app/.;/admin/y", "D", "", REFUSED),
    P("encoded .;", "/app/%2e;x/admin/y", "D", "", REFUSED),
    P("a segment of parameters only", "/app/;x/admin/y", "D", "", REFUSED),
    P("a segment that is only ';'", "/app/;/admin/y", "D", "", REFUSED),
    P("parameters first", "/;x/app/y", "D", "", REFUSED),
    P("parameters, then ..;", "/app/x;a=1/..;/admin", "D", "", REFUSED),
    P("..; at the end", "/app/admin/x/..;", "D", "", REFUSED),
    P("..%3B (a decoder on the way makes it ..;)", "/app/x/..%3B/admin/y", "D", "", REFUSED),
    P("encoded slashes in a parameter (nginx decodes them)", "/app/x;a%2f..%2f..%2fadmin", "D", "",
      REFUSED),
    P("an encoded backslash in a parameter", "/app/x;a%5c..%5cadmin", "D", "", REFUSED),
    P("double encoding in a parameter", "/app/x;%252e%252e", "D", "", REFUSED),
    P("an empty segment after parameters", "/app/x;a//admin/y", "D", "", REFUSED),
    P("a fullwidth slash in a parameter", "/app/x;%ef%bc%8fadmin", "D", "", REFUSED),
    P("parameters where no rule matches", "/other;x", "D", "", "no rule matched (default deny)"),
    P("an allow holds for both readings (nginx: segment \"app;v=1\")", "/app;v=1/x", "D", "",
      "no rule matched (default deny)"),
    P("a deny applies to the bare reading", "/app/files/a.exe;x", "D", "no-exe", NULL),
    P("and to the reading as written", "/app/files/a;x.exe", "D", "no-exe", NULL),
    P("neither reading is denied", "/app/files/a;x.exe/b", "A", "app", NULL),
#undef P
    /* And a policy without path_parameters refuses them before any rule, as before. */
    {"paths", "a session id, no rule permits them", "http", "127.0.0.1", 8080,
     "/allowed/x;jsessionid=1", "GET", NULL, NULL, "D", "", "path_parameters: true"},
    /* Finding 7: every matching allow rule's budget must have room; the first allow decides. */
    {"budgets", "three /pay/x GETs: read-all no longer switches pay-budget off", NULL,
     "api.example", 0, "/pay/x", "GET", "f7-pay", NULL, "ADD", "read-all,pay-budget,pay-budget",
     NULL},
    {"budgets", "the refusal names the budget that is exhausted", NULL, "api.example", 0, "/pay/y",
     "GET", "f7-pay-reason", NULL, "AD", "read-all,pay-budget", NULL},
    {"budgets", "a POST is decided by pay-budget alone", NULL, "api.example", 0, "/pay/x", "POST",
     "f7-post", NULL, "AD", "pay-budget", NULL},
    {"budgets", "a sum budget under a broader allow", NULL, "api.example", 0, "/spend/x", "GET",
     "f7-sum", NULL, "AD", "read-all,spend", NULL},
    {"budgets", "a sum that cannot be measured under a broader allow", NULL, "api.example", 0,
     "/spend/x", "GET", "f7-nosum", NULL, "DD", "spend", "the request has no number at /amount"},
    {"budgets", "a sum with two numbers under a broader allow", NULL, "api.example", 0, "/spend/x",
     "GET", "f7-twosum", NULL, "D", "spend", "more than one number"},
    {"budgets",
     "two budgets (per principal and global), both with room, then the narrower one "
     "exhausted",
     NULL, "api.example", 0, "/two/narrow/x", "GET", "f7-two", NULL, "AAD",
     "read-all,read-all,narrow-budget", NULL},
    {"budgets", "a path only the wider budget covers", NULL, "api.example", 0, "/two/x", "GET",
     "f7-wide", NULL, "AAAD", "read-all,read-all,read-all,wide-budget", NULL},
    {"budgets", "a deny still overrides, and charges nothing", NULL, "api.example", 0,
     "/pay/secret/x", "GET", "f7-deny", NULL, "DD", "no-secret", NULL},
    {"params-budgets", "a path parameter under a broader allow that permits them", NULL,
     "api.example", 0, "/pay/x;a=1", "GET", "f27-params", NULL, "ADD",
     "read-all,pay-budget,pay-budget", NULL},
    {"attack-1", "a POST without an override header", NULL, "api.example", 0, "/x", "POST", NULL,
     NULL, "A", "open", NULL},
    {"attack-1", "the override header with '_' (Rack via Puma runs it)", NULL, "api.example", 0,
     "/x", "POST", NULL, NULL, "D", "", METHOD_REFUSED "the request carries a method-override"},
    {"attack-1", "X-HTTP-Method with '_' in lower case", NULL, "api.example", 0, "/x", "POST", NULL,
     NULL, "D", "", METHOD_REFUSED "the request carries a method-override"},
    {"attack-1", "the override header with a space before the colon", NULL, "api.example", 0, "/x",
     "POST", NULL, NULL, "D", "", HEADER_REFUSED},
    {"attack-1", "another header with '_'", NULL, "api.example", 0, "/x", "POST", NULL, NULL, "A",
     "open", NULL},
    /* Found attacking the fix of attack 1: header names that are not tokens, which servers
     * trim or map (a no-break space, an ideographic space, a fullwidth letter), and the
     * URL-override headers by which some IIS and PHP stacks route to another path. */
    {"attack-1", "the override header with a no-break space", NULL, "api.example", 0, "/x", "POST",
     NULL, NULL, "D", "", HEADER_REFUSED},
    {"attack-1", "the override header with an ideographic space", NULL, "api.example", 0, "/x",
     "POST", NULL, NULL, "D", "", HEADER_REFUSED},
    {"attack-1", "the override header with a fullwidth e", NULL, "api.example", 0, "/x", "POST",
     NULL, NULL, "D", "", HEADER_REFUSED},
    {"attack-1", "a header name with a colon", NULL, "api.example", 0, "/x", "GET", NULL, NULL, "D",
     "", HEADER_REFUSED},
    {"attack-1", "X-Original-URL", NULL, "api.example", 0, "/x", "GET", NULL, NULL, "D", "",
     "URL-override header (x-original-url)"},
    {"attack-1", "x_rewrite_url", NULL, "api.example", 0, "/x", "GET", NULL, NULL, "D", "",
     "URL-override header (x-rewrite-url)"},
    {"tcp", "https under an allow without schemes", NULL, "web.example", 0, "/", "GET", NULL, NULL,
     "A", "web", NULL},
    {"tcp", "tcp under an allow without schemes", "tcp", "web.example", 22, "", NULL, NULL, NULL,
     "D", "", "no rule matched"},
    {"tcp", "tcp under an escalate without schemes", "tcp", "ask.example", 22, "", NULL, NULL, NULL,
     "D", "", "no rule matched"},
    {"tcp", "tcp named by the rule", "tcp", "db.example", 5432, "", NULL, NULL, NULL, "A", "db",
     NULL},
    {"tcp", "TCP in upper case, a host with a dot", "TCP", "DB.Example.", 5432, "", NULL, NULL,
     NULL, "A", "db", NULL},
    {"tcp", "tcp to another port", "tcp", "db.example", 5433, "", NULL, NULL, NULL, "D", "", NULL},
    {"tcp", "tcp to a denied host", "tcp", "evil.example", 5432, "", NULL, NULL, NULL, "D",
     "no-evil", NULL},
    {"tcp", "tcp with a path", "tcp", "db.example", 5432, "/x", NULL, NULL, NULL, "D", "",
     "a tcp resource (a raw tunnel) has no path"},
    {"tcp", "a refusal of the proxy", NULL, "web.example", 0, "/", "GET", NULL, NULL, "D", "",
     "refused by the proxy: obs-fold"},
    {"tcp", "a refusal without a readable target", "", "", 0, "", NULL, NULL, NULL, "D", "",
     "refused by the proxy: the request line is not HTTP/1.1"},
};

/* The refusal (AuthorizationRequest.refusal, a ProxyRefusal) of the cases that carry one, by
 * their `what`. */
static const struct {
    const char *what;
    const char *refusal;
} refusals[] = {
    {"a refusal of the proxy", "{\"status\":400,\"reason\":\"obs-fold in header 2\","
                               "\"head_sha256\":\"000102030405060708090a0b0c0d0e0f10111213141516"
                               "1718191a1b1c1d1e1f\"}"},
    {"a refusal without a readable target",
     "{\"status\":400,\"reason\":\"the request line is not HTTP/1.1\"}"},
};

/* The refusal object of case c, or NULL. */
static const char *case_refusal(const struct spelling *c)
{
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
        if (strcmp(refusals[i].what, c->what) == 0)
            return refusals[i].refusal;
    return NULL;
}

/* The context.header_names of the cases that carry header names, by their `what` (attack 1). */
static const struct {
    const char *what;
    const char *names;
} headers[] = {
    {"a POST without an override header", "[\"accept\",\"x-http-method-overridden\"]"},
    {"the override header with '_' (Rack via Puma runs it)", "[\"X_HTTP_METHOD_OVERRIDE\"]"},
    {"X-HTTP-Method with '_' in lower case", "[\"accept\",\"x_http_method\"]"},
    {"the override header with a space before the colon", "[\"X-HTTP-Method-Override \"]"},
    {"another header with '_'", "[\"x_request_id\"]"},
    {"the override header with a no-break space", "[\"X-HTTP-Method-Override\u00a0\"]"},
    {"the override header with an ideographic space", "[\"X-HTTP-Method-Override\u3000\"]"},
    {"the override header with a fullwidth e", "[\"X-HTTP-M\uff45thod-Override\"]"},
    {"a header name with a colon", "[\"accept:\"]"},
    {"X-Original-URL", "[\"accept\",\"X-Original-URL\"]"},
    {"x_rewrite_url", "[\"x_rewrite_url\"]"},
};

/* The header_names array of case c, or NULL. */
static const char *case_headers(const struct spelling *c)
{
    for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++)
        if (strcmp(headers[i].what, c->what) == 0)
            return headers[i].names;
    return NULL;
}

/* The context.json_numbers of the cases that carry numbers, by their `what` (finding 7). */
static const struct {
    const char *what;
    const char *numbers;
} numbers[] = {
    {"a sum budget under a broader allow", "[{\"pointer\":\"/amount\",\"value\":\"6\"}]"},
    {"a sum with two numbers under a broader allow",
     "[{\"pointer\":\"/amount\",\"value\":\"1\"},{\"pointer\":\"/amount\",\"value\":\"1\"}]"},
};

/* The json_numbers array of case c, or NULL. */
static const char *case_numbers(const struct spelling *c)
{
    for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
        if (strcmp(numbers[i].what, c->what) == 0)
            return numbers[i].numbers;
    return NULL;
}

static const char *policy_bin;

static int group_setup(void **state)
{
    (void)state;
    policy_bin = sworn_test_bin("SWORN_POLICY_BIN");
    sworn_pfix_mkdir("policy-spellings");
    return 0;
}

/* Append s to the JSON text in buf (cap bytes) as a JSON string, escaped. */
static void json_string(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);

    assert_true(n + 1 < cap);
    buf[n++] = '"';
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        assert_true(n + 7 < cap);
        if (c == '"' || c == '\\') {
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            n += (size_t)snprintf(buf + n, cap - n, "\\u%04x", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* Append printf text to buf (cap bytes). */
static void json_raw(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void json_raw(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;
    int w;

    va_start(ap, fmt);
    w = vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
    assert_true(w >= 0 && (size_t)w < cap - n);
}

/* The request of case c as JSON, with request id id. */
static void case_json(const struct spelling *c, const char *id, char *buf, size_t cap)
{
    const char *nums = case_numbers(c), *hdrs = case_headers(c), *refusal = case_refusal(c);
    const char *scheme = c->scheme != NULL ? c->scheme : "https";
    /* A raw tunnel is what the proxy asks about as tcp.connect; a request it refused with no
     * readable target has an empty resource (port 0). */
    const char *op = strcasecmp(scheme, "tcp") == 0 ? "tcp.connect" : "http.request";
    unsigned port = c->port != 0 ? c->port : scheme[0] == '\0' ? 0u : 443u;

    buf[0] = '\0';
    json_raw(buf, cap, "{\"request_id\":\"%s\",\"principal\":{\"id\":", id);
    json_string(buf, cap, c->principal != NULL ? c->principal : "agent-1");
    json_raw(buf, cap, "},\"operation\":\"%s\",\"resource\":{\"scheme\":", op);
    json_string(buf, cap, scheme);
    json_raw(buf, cap, ",\"host\":");
    json_string(buf, cap, c->host);
    json_raw(buf, cap, ",\"port\":%u,\"path\":", port);
    json_string(buf, cap, c->path);
    json_raw(buf, cap, "}");
    if (c->method != NULL || nums != NULL || hdrs != NULL) {
        json_raw(buf, cap, ",\"context\":{");
        if (c->method != NULL) {
            json_raw(buf, cap, "\"method\":");
            json_string(buf, cap, c->method);
        }
        if (nums != NULL)
            json_raw(buf, cap, "%s\"json_numbers\":%s", c->method != NULL ? "," : "", nums);
        if (hdrs != NULL)
            json_raw(buf, cap, "%s\"header_names\":%s",
                     c->method != NULL || nums != NULL ? "," : "", hdrs);
        json_raw(buf, cap, "}");
    }
    if (c->delegation != NULL)
        json_raw(buf, cap, ",\"delegation\":%s", c->delegation);
    if (refusal != NULL)
        json_raw(buf, cap, ",\"refusal\":%s", refusal);
    json_raw(buf, cap, "}\n");
}

/* What one program answered to one repetition. */
struct answer {
    char effect; /* 'A', 'D' or 'E' */
    char rule[129];
    char reason[1100];
};

static char effect_letter(const char *name)
{
    if (strcmp(name, "allow") == 0)
        return 'A';
    if (strcmp(name, "deny") == 0)
        return 'D';
    if (strcmp(name, "escalate") == 0)
        return 'E';
    fail_msg("unknown effect \"%s\"", name);
    return '?';
}

/* The rule id repetition rep of case c must name, into out. */
static void expected_rule(const struct spelling *c, unsigned rep, char out[129])
{
    const char *p = c->rule;

    if (strchr(p, ',') == NULL) {
        snprintf(out, 129, "%s", p);
        return;
    }
    for (unsigned i = 0; i < rep; i++) {
        p = strchr(p, ',');
        if (p == NULL)
            fail_msg("case \"%s\": fewer rule ids than repetitions", c->what);
        p++;
    }
    snprintf(out, 129, "%.*s", (int)strcspn(p, ","), p);
}

/* 0 when a matches repetition rep of case c, else 1 with a message; who names the program. */
static int expect_answer(const struct spelling *c, unsigned rep, const char *who,
                         const struct answer *a)
{
    char rule[129];

    expected_rule(c, rep, rule);
    if (a->effect != c->expect[rep] || strcmp(a->rule, rule) != 0 ||
        (c->reason != NULL && strstr(a->reason, c->reason) == NULL)) {
        print_error("%s, policy \"%s\", case \"%s\" (host \"%s\", path \"%s\"), repetition %u: "
                    "expected %c by \"%s\"%s%s, got %c by \"%s\": %s\n",
                    who, c->policy, c->what, c->host, c->path, rep + 1, c->expect[rep], rule,
                    c->reason != NULL ? " with a reason containing " : "",
                    c->reason != NULL ? c->reason : "", a->effect, a->rule, a->reason);
        return 1;
    }
    return 0;
}

/* Run sworn-policy eval on the policy file and case c's requests; fills answers. */
static void eval_case(const char *policy_path, const struct spelling *c, unsigned ci, unsigned reps,
                      struct answer *answers)
{
    const char *argv[3 + REPEAT_MAX + 1];
    char *files[REPEAT_MAX];
    struct sworn_test_run r;
    const char *line;

    argv[0] = policy_bin;
    argv[1] = "eval";
    argv[2] = policy_path;
    for (unsigned i = 0; i < reps; i++) {
        char json[JSON_MAX], id[ID_MAX], name[ID_MAX + 8];

        snprintf(id, sizeof(id), "eval-%u-%u", ci, i);
        snprintf(name, sizeof(name), "%s.json", id);
        case_json(c, id, json, sizeof(json));
        files[i] = sworn_pfix_put(name, json);
        argv[3 + i] = files[i];
    }
    argv[3 + reps] = NULL;
    sworn_test_run(argv, NULL, &r);
    if (r.status == 4 || r.status == 2)
        fail_msg("sworn-policy eval, case \"%s\": exit %d: %s", c->what, r.status, r.err);
    line = r.out;
    for (unsigned i = 0; i < reps; i++) {
        const char *end = strchr(line, '\n');
        json_object *o, *v;

        if (end == NULL)
            fail_msg("sworn-policy eval, case \"%s\": %u lines expected, got: %s", c->what, reps,
                     r.out);
        o = json_tokener_parse(line);
        if (o == NULL)
            fail_msg("sworn-policy eval, case \"%s\": not JSON: %.*s", c->what, (int)(end - line),
                     line);
        assert_true(json_object_object_get_ex(o, "effect", &v));
        answers[i].effect = effect_letter(json_object_get_string(v));
        assert_true(json_object_object_get_ex(o, "rule_id", &v));
        snprintf(answers[i].rule, sizeof(answers[i].rule), "%s", json_object_get_string(v));
        assert_true(json_object_object_get_ex(o, "reason", &v));
        snprintf(answers[i].reason, sizeof(answers[i].reason), "%s", json_object_get_string(v));
        json_object_put(o);
        line = end + 1;
    }
    for (unsigned i = 0; i < reps; i++)
        free(files[i]);
    sworn_test_run_free(&r);
}

/* Send case c's requests to the daemon, in order; fills answers, checking that each is logged. */
static void daemon_case(struct sworn_stack *s, const struct spelling *c, unsigned ci, unsigned reps,
                        struct answer *answers)
{
    for (unsigned i = 0; i < reps; i++) {
        Sworn__V1__AuthorizationRequest *req = NULL;
        Sworn__V1__DecisionReply *reply = NULL;
        struct sworn_dclient *client = malloc(sizeof(*client));
        char json[JSON_MAX], id[ID_MAX];
        Sworn__V1__Decision *d;

        snprintf(id, sizeof(id), "daemon-%u-%u", ci, i);
        case_json(c, id, json, sizeof(json));
        if (sworn_reqjson_parse(json, strlen(json), &req) != 0)
            fail_msg("case \"%s\": the request does not decode: %s", c->what, sworn_err_msg());
        assert_non_null(client);
        sworn_dclient_init(client);
        if (sworn_dclient_connect(client, s->decision) != 0 ||
            sworn_dclient_decide(client, req, 60000, &reply) != 0)
            fail_msg("daemon, case \"%s\": no answer: %s", c->what, sworn_err_msg());
        sworn_dclient_close(client);
        free(client);
        if (reply->body_case != SWORN__V1__DECISION_REPLY__BODY_DECISION)
            fail_msg("daemon, case \"%s\": an error instead of a decision: %u %s", c->what,
                     reply->error->code, reply->error->message);
        d = reply->decision;
        /* A decision is answered only once it is recorded: its entry hash names the entry. */
        assert_int_equal(d->entry_hash.len, 32);
        answers[i].effect = d->effect == SWORN__V1__EFFECT__EFFECT_ALLOW      ? 'A'
                            : d->effect == SWORN__V1__EFFECT__EFFECT_ESCALATE ? 'E'
                            : d->effect == SWORN__V1__EFFECT__EFFECT_DENY     ? 'D'
                                                                              : '?';
        snprintf(answers[i].rule, sizeof(answers[i].rule), "%s", d->rule_id);
        snprintf(answers[i].reason, sizeof(answers[i].reason), "%s", d->reason);
        sworn__v1__decision_reply__free_unpacked(reply, NULL);
        sworn__v1__authorization_request__free_unpacked(req, NULL);
    }
}

/* Every case of policy p, through both programs; adds the mismatches to *wrong. */
static void run_policy(const struct policy *p, unsigned *wrong)
{
    struct sworn_stack s;
    char options[1024], name[128];
    char *path;
    unsigned n = 0;

    snprintf(name, sizeof(name), "%s.yaml", p->name);
    path = sworn_pfix_put(name, p->yaml);
    snprintf(options, sizeof(options), "--no-tpm --file-key --policy %s", path);
    if (sworn_stack_up(&s, options) != 0)
        fail_msg("policy \"%s\": the stack did not come up", p->name);
    for (unsigned ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const struct spelling *c = &cases[ci];
        struct answer by_eval[REPEAT_MAX], by_daemon[REPEAT_MAX];
        unsigned reps = (unsigned)strlen(c->expect);

        if (strcmp(c->policy, p->name) != 0)
            continue;
        assert_true(reps >= 1 && reps <= REPEAT_MAX);
        eval_case(path, c, ci, reps, by_eval);
        daemon_case(&s, c, ci, reps, by_daemon);
        for (unsigned i = 0; i < reps; i++) {
            *wrong += expect_answer(c, i, "sworn-policy eval", &by_eval[i]);
            *wrong += expect_answer(c, i, "the daemon", &by_daemon[i]);
            if (strcmp(by_eval[i].reason, by_daemon[i].reason) != 0) {
                print_error("case \"%s\": eval and the daemon give other reasons: \"%s\" / "
                            "\"%s\"\n",
                            c->what, by_eval[i].reason, by_daemon[i].reason);
                (*wrong)++;
            }
        }
        n++;
    }
    print_message("policy \"%s\": %u cases agree\n", p->name, n);
    assert_true(n > 0);
    assert_int_equal(sworn_stack_down(&s), 0);
    free(path);
}

static void test_spellings(void **state)
{
    unsigned wrong = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
        run_policy(&policies[i], &wrong);
    /* Every mismatch is printed above before the test fails, so one run shows them all. */
    assert_int_equal(wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings),
    };

    return cmocka_run_group_tests(tests, group_setup, sworn_pfix_teardown);
}
