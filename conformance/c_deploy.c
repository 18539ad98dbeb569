/*
 * c_deploy.c -- the deployment file reader (c_deploy.h; the keys are documented in
 * docs/conformance.md). Structure: from_doc reads the root mapping key by key through typed
 * helpers that each name the node's position on failure; c_url_parse splits the request URLs.
 */
#include "c_deploy.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "encoding.h"
#include "err.h"
#include "yamldoc.h"

/* Copy s into dst (capacity cap) or fail: values are never truncated silently. */
static int copy_str(char *dst, size_t cap, const char *s)
{
    size_t n = strlen(s);

    if (n >= cap)
        return -1;
    memcpy(dst, s, n + 1);
    return 0;
}

static int printable(const char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return 0;
    return 1;
}

/* An absolute path without "//", "/./" or "/../" parts: what a file names is what is probed. */
static const char *check_path(const char *p)
{
    if (p[0] != '/')
        return "must be an absolute path";
    if (!printable(p))
        return "holds a control character";
    if (strstr(p, "//") != NULL || strstr(p, "/./") != NULL || strstr(p, "/../") != NULL)
        return "must not hold \"//\", \"/./\" or \"/../\"";
    return NULL;
}

/* A string value at key (required or not) into dst, checked by check (may be NULL). */
static int y_str(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *map, const char *key,
                 int required, char *dst, size_t cap, const char *(*check)(const char *))
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    const char *s, *why;

    if (n == NULL) {
        if (required)
            return sworn_yaml_error(d, map, "%s is required", key);
        dst[0] = '\0';
        return 0;
    }
    if (sworn_yaml_kind(n) != SWORN_YAML_SCALAR)
        return sworn_yaml_error(d, n, "%s must be a string", key);
    if (sworn_yaml_str(d, n, &s) < 0)
        return -1;
    if (s[0] == '\0')
        return sworn_yaml_error(d, n, "%s must not be empty", key);
    why = check != NULL ? check(s) : NULL;
    if (why != NULL)
        return sworn_yaml_error(d, n, "%s %s", key, why);
    if (copy_str(dst, cap, s) < 0)
        return sworn_yaml_error(d, n, "%s is longer than %zu bytes", key, cap - 1);
    return 0;
}

static int y_url(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *map, const char *key,
                 struct c_url *u)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    const char *s, *why = NULL;

    if (n == NULL)
        return sworn_yaml_error(d, map, "%s is required", key);
    if (sworn_yaml_kind(n) != SWORN_YAML_SCALAR)
        return sworn_yaml_error(d, n, "%s must be a URL", key);
    if (sworn_yaml_str(d, n, &s) < 0)
        return -1;
    if (c_url_parse(s, u, &why) < 0)
        return sworn_yaml_error(d, n, "%s: %s", key, why);
    return 0;
}

static const char *check_text(const char *s)
{
    return printable(s) ? NULL : "holds a control character";
}

/* A principal id as the wire takes it: 1..128 bytes of 0x21..0x7e. */
static const char *check_principal(const char *s)
{
    for (const char *p = s; *p != '\0'; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return "must be printable ASCII without spaces";
    return NULL;
}

static const char *check_command(const char *s)
{
    for (const char *p = s; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return "must be one line (a /bin/sh command)";
    return NULL;
}

static int y_agent(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                   struct c_deploy *c)
{
    static const char *const keys[] = {"uid", "gids", NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(root, "agent"), *g;
    uint64_t v;

    if (m == NULL)
        return sworn_yaml_error(d, root, "agent is required (agent: {uid: N})");
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "agent must be a mapping");
    if (sworn_yaml_only_keys(d, m, keys) < 0)
        return -1;
    if (sworn_yaml_get(m, "uid") == NULL)
        return sworn_yaml_error(d, m, "agent.uid is required");
    if (sworn_yaml_u64(d, sworn_yaml_get(m, "uid"), 0, 0xfffffffeu, &v) < 0)
        return -1;
    c->agent_uid = (int64_t)v;
    g = sworn_yaml_get(m, "gids");
    if (g == NULL)
        return 0;
    if (sworn_yaml_kind(g) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, g, "agent.gids must be a list of group ids");
    if (sworn_yaml_len(g) > C_DEPLOY_GIDS_MAX)
        return sworn_yaml_error(d, g, "agent.gids has more than %u items", C_DEPLOY_GIDS_MAX);
    for (size_t i = 0; i < sworn_yaml_len(g); i++) {
        if (sworn_yaml_u64(d, sworn_yaml_item(g, i), 0, 0xfffffffeu, &v) < 0)
            return -1;
        c->agent_gids[c->nagent_gids++] = (uint32_t)v;
    }
    return 0;
}

static int y_requests(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                      struct c_deploy *c)
{
    static const char *const keys[] = {"principal", "count", "allowed", "denied", NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(root, "requests");
    uint64_t v = 5;

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "requests must be a mapping");
    if (sworn_yaml_only_keys(d, m, keys) < 0)
        return -1;
    if (y_str(d, m, "principal", 1, c->principal, sizeof(c->principal), check_principal) < 0)
        return -1;
    if (sworn_yaml_get(m, "count") != NULL &&
        sworn_yaml_u64(d, sworn_yaml_get(m, "count"), 1, C_DEPLOY_COUNT_MAX, &v) < 0)
        return -1;
    c->count = (uint32_t)v;
    if (y_url(d, m, "allowed", &c->allowed) < 0 || y_url(d, m, "denied", &c->denied) < 0)
        return -1;
    c->has_requests = 1;
    return 0;
}

static int y_fail_closed(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                         struct c_deploy *c)
{
    static const char *const keys[] = {"proxy", "stop", "start", NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(root, "fail_closed");

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "fail_closed must be a mapping");
    if (sworn_yaml_only_keys(d, m, keys) < 0)
        return -1;
    if (y_url(d, m, "proxy", &c->proxy) < 0)
        return -1;
    if (strcmp(c->proxy.scheme, "http") != 0)
        return sworn_yaml_error(d, sworn_yaml_get(m, "proxy"),
                                "proxy must be the proxy's http:// listener");
    if (y_str(d, m, "stop", 1, c->stop_command, sizeof(c->stop_command), check_command) < 0 ||
        y_str(d, m, "start", 1, c->start_command, sizeof(c->start_command), check_command) < 0)
        return -1;
    c->has_fail_closed = 1;
    return 0;
}

/* A list of strings at key (optional) into the rows of dst, each checked by check. */
static int y_list(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *map,
                  const char *key, char *dst, size_t row, size_t max, size_t *n,
                  const char *(*check)(const char *))
{
    const struct sworn_yaml_node *l = sworn_yaml_get(map, key);

    *n = 0;
    if (l == NULL)
        return 0;
    if (sworn_yaml_kind(l) != SWORN_YAML_SEQ)
        return sworn_yaml_error(d, l, "%s must be a list of strings", key);
    if (sworn_yaml_len(l) > max)
        return sworn_yaml_error(d, l, "%s has more than %zu items", key, max);
    for (size_t i = 0; i < sworn_yaml_len(l); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(l, i);
        const char *s, *why;

        if (sworn_yaml_kind(it) != SWORN_YAML_SCALAR)
            return sworn_yaml_error(d, it, "%s items must be strings", key);
        if (sworn_yaml_str(d, it, &s) < 0)
            return -1;
        why = s[0] == '\0' ? "must not be empty" : check(s);
        if (why != NULL)
            return sworn_yaml_error(d, it, "%s item %zu %s", key, i + 1, why);
        if (copy_str(dst + *n * row, row, s) < 0)
            return sworn_yaml_error(d, it, "%s item %zu is longer than %zu bytes", key, i + 1,
                                    row - 1);
        (*n)++;
    }
    return 0;
}

/* A SHA-256 digest in hex (64 digits); kept in lower case by the caller. */
static const char *check_digest(const char *s)
{
    if (strlen(s) != 64)
        return "must be a SHA-256 digest: 64 hex digits";
    for (const char *p = s; *p != '\0'; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
            return "must be a SHA-256 digest: 64 hex digits";
    return NULL;
}

/* An argv item: printable, one line (items go to execv as they are, never through a shell). */
static const char *check_arg(const char *s)
{
    return printable(s) ? NULL : "holds a control character";
}

/* A form body as the agent sends it: printable ASCII, no space (a form encoder escapes it). */
static const char *check_form(const char *s)
{
    for (const char *p = s; *p != '\0'; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return "must be a form body: printable ASCII without spaces";
    return NULL;
}

static int y_opt_url(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *m,
                     const char *key, struct c_url *u, int *has)
{
    *has = sworn_yaml_get(m, key) != NULL;
    return *has ? y_url(d, m, key, u) : 0;
}

/* "IPV4:PORT" or "[IPV6]:PORT", numeric, the port 1..65535: where the runner's resolver listens. */
static const char *parse_listen(const char *s, char *addr, size_t cap, uint16_t *port)
{
    static const char *const want = "must be \"IPV4:PORT\" or \"[IPV6]:PORT\" (numeric)";
    const char *host = s, *end, *p;
    unsigned char a[16];
    char text[64];
    uint64_t v;
    size_t hn;
    int v6 = s[0] == '[';

    if (v6) {
        host = s + 1;
        end = strchr(host, ']');
        if (end == NULL || end[1] != ':')
            return want;
        p = end + 2;
    } else {
        end = strrchr(s, ':');
        if (end == NULL)
            return want;
        p = end + 1;
    }
    hn = (size_t)(end - host);
    if (hn == 0 || hn >= sizeof(text))
        return want;
    memcpy(text, host, hn);
    text[hn] = '\0';
    if (inet_pton(v6 ? AF_INET6 : AF_INET, text, a) != 1 ||
        inet_ntop(v6 ? AF_INET6 : AF_INET, a, addr, (socklen_t)cap) == NULL)
        return want;
    if (strlen(p) > 5 || (p[0] == '0' && p[1] != '\0') || sworn_parse_u64(p, strlen(p), &v) < 0 ||
        v == 0 || v > 65535)
        return "port must be 1..65535 in plain decimal";
    *port = (uint16_t)v;
    return NULL;
}

/* A host name the proxy resolves: labels of 1..63 bytes of [A-Za-z0-9-] (no '-' at either end),
 * dots between, at most 253 bytes, and a letter somewhere (a dotted quad is not resolved). */
static const char *check_dns_name(const char *s)
{
    static const char *const want = "must be a host name (labels of [A-Za-z0-9-], dots between)";
    size_t label = 0, n = strlen(s);
    int letter = 0;

    if (n == 0 || n > 253)
        return want;
    for (size_t i = 0; i <= n; i++) {
        char ch = s[i];

        if (ch == '.' || ch == '\0') {
            if (label == 0 || s[i - 1] == '-')
                return want;
            label = 0;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-') ||
            (label == 0 && ch == '-') || ++label > 63)
            return want;
        letter |= (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    }
    return letter ? NULL : "must be a name, not an address (an address is not resolved)";
}

static int y_dns_rebinding(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *sbx,
                           struct c_deploy_sandbox *x)
{
    static const char *const keys[] = {"listen", "name", NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(sbx, "dns_rebinding"), *n;
    const char *s, *why;

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "sandbox.dns_rebinding must be a mapping {listen, name}");
    if (sworn_yaml_only_keys(d, m, keys) < 0)
        return -1;
    n = sworn_yaml_get(m, "listen");
    if (n == NULL)
        return sworn_yaml_error(d, m, "sandbox.dns_rebinding.listen is required");
    if (sworn_yaml_kind(n) != SWORN_YAML_SCALAR)
        return sworn_yaml_error(d, n, "sandbox.dns_rebinding.listen must be a string");
    if (sworn_yaml_str(d, n, &s) < 0)
        return -1;
    why = parse_listen(s, x->dns_listen, sizeof(x->dns_listen), &x->dns_port);
    if (why != NULL)
        return sworn_yaml_error(d, n, "sandbox.dns_rebinding.listen %s", why);
    if (sworn_yaml_get(m, "name") == NULL)
        return sworn_yaml_error(d, m, "sandbox.dns_rebinding.name is required");
    if (y_str(d, m, "name", 1, x->dns_name, sizeof(x->dns_name), check_dns_name) < 0)
        return -1;
    x->has_dns_rebinding = 1;
    return 0;
}

static int y_sandbox(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *root,
                     struct c_deploy *c)
{
    static const char *const keys[] = {"command",
                                       "probe",
                                       "principal",
                                       "proxy",
                                       "allowed",
                                       "denied",
                                       "echo",
                                       "symbolic_tokens",
                                       "foreign_tokens",
                                       "foreign_echo",
                                       "foreign_command",
                                       "oauth_token",
                                       "oauth_body",
                                       "credential_sha256",
                                       "control_paths",
                                       "control_sockets",
                                       "control_binaries",
                                       "dns_rebinding",
                                       NULL};
    const struct sworn_yaml_node *m = sworn_yaml_get(root, "sandbox"), *cmd;
    struct c_deploy_sandbox *x = &c->sbx;
    const char *why = NULL;
    int has_proxy;

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(d, m, "sandbox must be a mapping");
    if (sworn_yaml_only_keys(d, m, keys) < 0)
        return -1;
    cmd = sworn_yaml_get(m, "command");
    if (cmd == NULL)
        return sworn_yaml_error(d, m, "sandbox.command is required (an argv list)");
    if (y_list(d, m, "command", &x->argv[0][0], sizeof(x->argv[0]), C_DEPLOY_ARGV_MAX, &x->nargv,
               check_arg) < 0)
        return -1;
    if (x->nargv == 0 || check_path(x->argv[0]) != NULL)
        return sworn_yaml_error(d, cmd, "sandbox.command must start with an absolute path");
    if (y_list(d, m, "foreign_command", &x->foreign_argv[0][0], sizeof(x->foreign_argv[0]),
               C_DEPLOY_ARGV_MAX, &x->nforeign_argv, check_arg) < 0)
        return -1;
    if (sworn_yaml_get(m, "foreign_command") != NULL &&
        (x->nforeign_argv == 0 || check_path(x->foreign_argv[0]) != NULL))
        return sworn_yaml_error(d, sworn_yaml_get(m, "foreign_command"),
                                "sandbox.foreign_command must start with an absolute path");
    if (y_str(d, m, "probe", 1, x->probe, sizeof(x->probe), check_path) < 0 ||
        y_str(d, m, "principal", 1, x->principal, sizeof(x->principal), check_principal) < 0)
        return -1;
    if (y_opt_url(d, m, "proxy", &x->proxy, &has_proxy) < 0)
        return -1;
    if (!has_proxy)
        c_url_parse("http://127.0.0.1:3128", &x->proxy, &why);
    if (strcmp(x->proxy.scheme, "http") != 0)
        return sworn_yaml_error(d, sworn_yaml_get(m, "proxy"),
                                "sandbox.proxy must be the proxy's http:// address");
    if (y_opt_url(d, m, "allowed", &x->allowed, &x->has_allowed) < 0 ||
        y_opt_url(d, m, "denied", &x->denied, &x->has_denied) < 0 ||
        y_opt_url(d, m, "echo", &x->echo, &x->has_echo) < 0 ||
        y_opt_url(d, m, "foreign_echo", &x->foreign_echo, &x->has_foreign_echo) < 0 ||
        y_opt_url(d, m, "oauth_token", &x->oauth_token, &x->has_oauth_token) < 0 ||
        y_str(d, m, "oauth_body", 0, x->oauth_body, sizeof(x->oauth_body), check_form) < 0)
        return -1;
    if (x->has_oauth_token != (x->oauth_body[0] != '\0'))
        return sworn_yaml_error(d, m, "sandbox.oauth_token and sandbox.oauth_body go together");
    if (y_list(d, m, "symbolic_tokens", &x->symbolic[0][0], sizeof(x->symbolic[0]),
               C_DEPLOY_LIST_MAX, &x->nsymbolic, check_principal) < 0 ||
        y_list(d, m, "foreign_tokens", &x->foreign[0][0], sizeof(x->foreign[0]), C_DEPLOY_LIST_MAX,
               &x->nforeign, check_principal) < 0 ||
        y_list(d, m, "credential_sha256", &x->credential_sha256[0][0],
               sizeof(x->credential_sha256[0]), C_DEPLOY_LIST_MAX, &x->ncredential,
               check_digest) < 0 ||
        y_list(d, m, "control_paths", &x->control_paths[0][0], sizeof(x->control_paths[0]),
               C_DEPLOY_LIST_MAX, &x->ncontrol_paths, check_path) < 0 ||
        y_list(d, m, "control_sockets", &x->control_sockets[0][0], sizeof(x->control_sockets[0]),
               C_DEPLOY_LIST_MAX, &x->ncontrol_sockets, check_path) < 0 ||
        y_list(d, m, "control_binaries", &x->control_binaries[0][0], sizeof(x->control_binaries[0]),
               C_DEPLOY_LIST_MAX, &x->ncontrol_binaries, check_path) < 0)
        return -1;
    if (y_dns_rebinding(d, m, x) < 0)
        return -1;
    for (size_t i = 0; i < x->ncredential; i++)
        for (char *p = x->credential_sha256[i]; *p != '\0'; p++)
            if (*p >= 'A' && *p <= 'F')
                *p = (char)(*p - 'A' + 'a');
    c->has_sandbox = 1;
    return 0;
}

static int from_doc(struct c_deploy *c, const struct sworn_yaml_doc *d)
{
    static const char *const keys[] = {"operator",
                                       "record",
                                       "trust_policy",
                                       "sworn_verify",
                                       "auditor_state",
                                       "admin_socket",
                                       "decision_socket",
                                       "log_db",
                                       "agent",
                                       "requests",
                                       "fail_closed",
                                       "sandbox",
                                       NULL};
    const struct sworn_yaml_node *r = sworn_yaml_root(d);

    SWORN_GUARD(sworn_yaml_only_keys(d, r, keys));
    SWORN_GUARD(y_str(d, r, "operator", 1, c->operator_name, sizeof(c->operator_name), check_text));
    SWORN_GUARD(y_str(d, r, "record", 1, c->record, sizeof(c->record), check_path));
    SWORN_GUARD(
        y_str(d, r, "trust_policy", 1, c->trust_policy, sizeof(c->trust_policy), check_path));
    SWORN_GUARD(y_str(d, r, "sworn_verify", 1, c->verify_bin, sizeof(c->verify_bin), check_path));
    SWORN_GUARD(y_str(d, r, "auditor_state", 0, c->state, sizeof(c->state), check_path));
    SWORN_GUARD(
        y_str(d, r, "admin_socket", 0, c->admin_socket, sizeof(c->admin_socket), check_path));
    SWORN_GUARD(y_str(d, r, "decision_socket", 0, c->decision_socket, sizeof(c->decision_socket),
                      check_path));
    SWORN_GUARD(y_str(d, r, "log_db", 0, c->log_db, sizeof(c->log_db), check_path));
    SWORN_GUARD(y_agent(d, r, c));
    SWORN_GUARD(y_requests(d, r, c));
    SWORN_GUARD(y_fail_closed(d, r, c));
    SWORN_GUARD(y_sandbox(d, r, c));
    if (c->has_requests && c->decision_socket[0] == '\0')
        return sworn_yaml_error(d, sworn_yaml_get(r, "requests"),
                                "requests needs decision_socket (they are sent there)");
    return 0;
fail:
    return -1;
}

static int load(struct c_deploy *c, const char *name, struct sworn_yaml_doc *d)
{
    int rc;

    if (copy_str(c->source, sizeof(c->source), name) < 0) {
        sworn_yaml_free(d);
        return sworn_err_set(SWORN_ERR_RANGE, "the deployment file's name is too long");
    }
    rc = from_doc(c, d);
    sworn_yaml_free(d);
    return rc;
}

int c_deploy_load(struct c_deploy *c, const char *path)
{
    struct sworn_yaml_doc *d = NULL;

    memset(c, 0, sizeof(*c));
    c->agent_uid = -1;
    if (sworn_yaml_load_file(path, &d) < 0)
        return -1;
    return load(c, path, d);
}

int c_deploy_load_mem(struct c_deploy *c, const char *name, const uint8_t *p, size_t len)
{
    struct sworn_yaml_doc *d = NULL;

    memset(c, 0, sizeof(*c));
    c->agent_uid = -1;
    if (sworn_yaml_load_mem(name, p, len, &d) < 0)
        return -1;
    return load(c, name, d);
}

/* --- URLs -------------------------------------------------------------------------------------
 */

static int host_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '-';
}

int c_url_parse(const char *s, struct c_url *u, const char **why)
{
    const char *h, *end, *colon;
    size_t hn;

    memset(u, 0, sizeof(*u));
    if (strncmp(s, "http://", 7) == 0) {
        memcpy(u->scheme, "http", 5);
        u->port = 80;
        h = s + 7;
    } else if (strncmp(s, "https://", 8) == 0) {
        memcpy(u->scheme, "https", 6);
        u->port = 443;
        h = s + 8;
    } else {
        *why = "must start with http:// or https://";
        return -1;
    }
    end = h + strcspn(h, "/?#");
    if (*end == '?' || *end == '#') {
        *why = "must have a path before a query, and no fragment";
        return -1;
    }
    colon = memchr(h, ':', (size_t)(end - h));
    hn = (size_t)((colon != NULL ? colon : end) - h);
    if (hn == 0 || hn >= sizeof(u->host)) {
        *why = "must name a host of 1..253 bytes";
        return -1;
    }
    for (size_t i = 0; i < hn; i++)
        if (!host_char(h[i])) {
            *why = "host must be a name or a dotted quad ([A-Za-z0-9.-])";
            return -1;
        }
    memcpy(u->host, h, hn);
    if (colon != NULL) {
        uint64_t port;
        if (sworn_parse_u64(colon + 1, (size_t)(end - colon - 1), &port) < 0 || port == 0 ||
            port > 65535) {
            *why = "port must be 1..65535 in plain decimal";
            return -1;
        }
        u->port = (uint32_t)port;
    }
    if (*end == '\0') {
        memcpy(u->path, "/", 2);
        return 0;
    }
    if (strchr(end, '#') != NULL || strlen(end) >= sizeof(u->path)) {
        *why = "path must be at most 1023 bytes, without a fragment";
        return -1;
    }
    for (const char *p = end; *p != '\0'; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f) {
            *why = "path must be printable ASCII without spaces";
            return -1;
        }
    memcpy(u->path, end, strlen(end) + 1);
    return 0;
}
