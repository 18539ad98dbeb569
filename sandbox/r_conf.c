/*
 * r_conf.c -- sworn-run's configuration: the YAML file, a dev stack's stack.env, the command line
 * (r_conf.h has the contract, docs/sandbox.md the keys and the refusals).
 */
#define _GNU_SOURCE
#include "r_conf.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "frame.h"
#include "p_token.h"
#include "utf8.h"
#include "wipe.h"
#include "yamldoc.h"

#define STACK_ENV_MAX 65536u
#define MEMORY_MIN (16u * 1024u * 1024u)
#define MEMORY_MAX (UINT64_C(1) << 44) /* 16 TiB */
#define PROCESSES_MAX 1000000u
#define WALL_MAX_MS (UINT64_C(30) * 86400000u) /* 30 days */

/* The variables sworn-run sets itself (docs/sandbox.md, "Environment"): never configurable. */
static const char *const reserved_vars[] = {"PATH",           "HOME",
                                            "LANG",           "USER",
                                            "LOGNAME",        "http_proxy",
                                            "HTTP_PROXY",     "https_proxy",
                                            "HTTPS_PROXY",    "no_proxy",
                                            "NO_PROXY",       "all_proxy",
                                            "ALL_PROXY",      "SSL_CERT_FILE",
                                            "SSL_CERT_DIR",   "REQUESTS_CA_BUNDLE",
                                            "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                            "GIT_SSL_CAINFO", "PIP_CERT",
                                            "LD_PRELOAD",     "LD_LIBRARY_PATH",
                                            "LD_AUDIT",       NULL};

void sworn_run_conf_init(struct sworn_run_conf *c)
{
    memset(c, 0, sizeof(*c));
    c->uid_first = 1000000000;
    c->connections = SWORN_RUN_CONNECTIONS_DEFAULT;
    c->uid_count = 65536;
}

void sworn_run_conf_free(struct sworn_run_conf *c)
{
    sworn_memzero(c->env, sizeof(c->env));
    sworn_memzero(c->files, sizeof(c->files));
}

/* --- value rules, shared by the three sources ------------------------------------------------ */

static int var_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= SWORN_RUN_VAR_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return 1;
}

static int var_reserved(const char *s)
{
    for (size_t i = 0; reserved_vars[i] != NULL; i++)
        if (strcmp(reserved_vars[i], s) == 0)
            return 1;
    return 0;
}

/* A file name under /run/sworn/tokens: [A-Za-z0-9._-], 1..128, not "." or "..". */
static int file_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= SWORN_RUN_VAR_NAME_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.'))
            return 0;
    }
    return 1;
}

/* An absolute path without "." or ".." parts, "//" or a trailing "/", that fits. */
static int path_ok(const char *s)
{
    size_t n = strlen(s);

    if (n < 2 || n >= SWORN_RUN_PATH_MAX || s[0] != '/' || s[n - 1] == '/')
        return 0;
    for (const char *p = s; *p != '\0'; p++) {
        if (p[0] != '/')
            continue;
        if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == '\0')) ||
            (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0')))
            return 0;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return 0;
    return 1;
}

static int copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (n >= cap)
        return -1;
    memcpy(dst, src, n + 1);
    return 0;
}

/* Each check returns NULL when v is fine, else what is wrong with it. */
static const char *check_name(const char *v)
{
    return sworn_frame_name_ok(v) ? NULL : "must be 1..128 printable ASCII characters, no spaces";
}

static const char *check_path(const char *v)
{
    return path_ok(v) ? NULL
                      : "must be an absolute path of printable ASCII without spaces, '.' or '..' "
                        "parts, '//' or a trailing '/', under 256 bytes";
}

static const char *check_socket_path(const char *v)
{
    if (check_path(v) != NULL)
        return check_path(v);
    return strlen(v) < 108 ? NULL : "is too long for a Unix socket (107 bytes at most)";
}

static const char *check_token(const char *v)
{
    return sworn_symtok_is((const uint8_t *)v, strlen(v))
               ? NULL
               : "must be a symbolic token: \"sym_\" and 32..251 of A-Z a-z 0-9 _ - (a real "
                 "credential never goes into a sandbox)";
}

static const char *check_var(const char *v)
{
    if (!var_name_ok(v))
        return "is not a variable name ([A-Za-z_][A-Za-z0-9_]*, at most 128)";
    return var_reserved(v) ? "is set by sworn-run itself (docs/sandbox.md, \"Environment\")" : NULL;
}

/* --- the YAML file -----------------------------------------------------------------------------
 */

struct yctx {
    const struct sworn_yaml_doc *d;
    struct sworn_run_conf *c;
};

static int y_string(struct yctx *x, const struct sworn_yaml_node *n, const char *key, char *dst,
                    size_t cap, const char *(*check)(const char *))
{
    const char *s, *why;

    if (n == NULL)
        return 0;
    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    why = check(s);
    if (why != NULL)
        return sworn_yaml_error(x->d, n, "%s %s", key, why);
    if (copy_str(dst, cap, s) < 0)
        return sworn_yaml_error(x->d, n, "%s is too long", key);
    return 0;
}

static int y_tokens(struct yctx *x, const struct sworn_yaml_node *map, const char *key,
                    struct sworn_run_token *out, size_t *nout, int files)
{
    const char *tok;

    if (map == NULL)
        return 0;
    if (sworn_yaml_kind(map) != SWORN_YAML_MAP)
        return sworn_yaml_error(x->d, map, "%s must be a mapping of name: sym_... tokens", key);
    if (sworn_yaml_len(map) > SWORN_RUN_VARS_MAX)
        return sworn_yaml_error(x->d, map, "%s has more than %u entries", key, SWORN_RUN_VARS_MAX);
    for (size_t i = 0; i < sworn_yaml_len(map); i++) {
        const char *name = sworn_yaml_key(map, i);
        const struct sworn_yaml_node *v = sworn_yaml_item(map, i);
        const char *why = files ? (file_name_ok(name) ? NULL
                                                      : "is not a file name ([A-Za-z0-9._-], "
                                                        "1..128, not . or ..)")
                                : check_var(name);
        if (why != NULL)
            return sworn_yaml_error(x->d, sworn_yaml_key_node(map, i), "%s: \"%s\" %s", key, name,
                                    why);
        if (sworn_yaml_str(x->d, v, &tok) < 0)
            return -1;
        if (check_token(tok) != NULL)
            return sworn_yaml_error(x->d, v, "%s.%s %s", key, name, check_token(tok));
        memcpy(out[*nout].name, name, strlen(name) + 1);
        memcpy(out[*nout].value, tok, strlen(tok) + 1);
        (*nout)++;
    }
    return 0;
}

static int y_list(struct yctx *x, const struct sworn_yaml_node *seq, const char *key,
                  char (*out)[SWORN_RUN_PATH_MAX], char (*vars)[SWORN_RUN_VAR_NAME_MAX],
                  size_t *nout)
{
    const char *s, *why;

    if (seq == NULL)
        return 0;
    if (sworn_yaml_kind(seq) != SWORN_YAML_SEQ)
        return sworn_yaml_error(x->d, seq, "%s must be a list", key);
    if (sworn_yaml_len(seq) > SWORN_RUN_VARS_MAX)
        return sworn_yaml_error(x->d, seq, "%s has more than %u items", key, SWORN_RUN_VARS_MAX);
    for (size_t i = 0; i < sworn_yaml_len(seq); i++) {
        const struct sworn_yaml_node *v = sworn_yaml_item(seq, i);
        if (sworn_yaml_str(x->d, v, &s) < 0)
            return -1;
        why = out != NULL ? check_path(s) : check_var(s);
        if (why != NULL)
            return sworn_yaml_error(x->d, v, "%s: \"%s\" %s", key, s, why);
        if (out != NULL)
            memcpy(out[*nout], s, strlen(s) + 1);
        else
            memcpy(vars[*nout], s, strlen(s) + 1);
        (*nout)++;
    }
    return 0;
}

static int y_limits(struct yctx *x, const struct sworn_yaml_node *m)
{
    static const char *const keys[] = {"timeout", "memory", "processes", "connections", NULL};
    uint64_t v;

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(x->d, m, "limits must be a mapping");
    if (sworn_yaml_only_keys(x->d, m, keys) < 0)
        return -1;
    if (sworn_yaml_get(m, "timeout") != NULL) {
        if (sworn_yaml_duration_ms(x->d, sworn_yaml_get(m, "timeout"), &v) < 0)
            return -1;
        if (v == 0 || v > WALL_MAX_MS)
            return sworn_yaml_error(x->d, sworn_yaml_get(m, "timeout"),
                                    "limits.timeout must be 1ms..30d");
        x->c->wall_ms = v;
    }
    if (sworn_yaml_get(m, "memory") != NULL) {
        if (sworn_yaml_u64(x->d, sworn_yaml_get(m, "memory"), MEMORY_MIN, MEMORY_MAX, &v) < 0)
            return -1;
        x->c->memory_bytes = v;
    }
    if (sworn_yaml_get(m, "processes") != NULL) {
        if (sworn_yaml_u64(x->d, sworn_yaml_get(m, "processes"), 1, PROCESSES_MAX, &v) < 0)
            return -1;
        x->c->processes = (uint32_t)v;
    }
    if (sworn_yaml_get(m, "connections") != NULL) {
        if (sworn_yaml_u64(x->d, sworn_yaml_get(m, "connections"), 1, SWORN_RUN_CONNECTIONS_MAX,
                           &v) < 0)
            return -1;
        x->c->connections = (uint32_t)v;
    }
    return 0;
}

static int y_uids(struct yctx *x, const struct sworn_yaml_node *m)
{
    static const char *const keys[] = {"first", "count", NULL};
    uint64_t first = x->c->uid_first, count = x->c->uid_count;

    if (m == NULL)
        return 0;
    if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
        return sworn_yaml_error(x->d, m, "uids must be a mapping");
    if (sworn_yaml_only_keys(x->d, m, keys) < 0)
        return -1;
    if (sworn_yaml_get(m, "first") != NULL &&
        sworn_yaml_u64(x->d, sworn_yaml_get(m, "first"), 65536, 0xfffffffeu, &first) < 0)
        return -1;
    if (sworn_yaml_get(m, "count") != NULL &&
        sworn_yaml_u64(x->d, sworn_yaml_get(m, "count"), 1, 1u << 20, &count) < 0)
        return -1;
    if (first + count > 0xffffffffu)
        return sworn_yaml_error(x->d, m, "uids: first + count must stay below 4294967295");
    x->c->uid_first = (uid_t)first;
    x->c->uid_count = (uint32_t)count;
    return 0;
}

/* Read the document d (already loaded and checked) into c. */
static int from_doc(struct sworn_run_conf *c, const struct sworn_yaml_doc *d)
{
    static const char *const keys[] = {
        "principal", "name", "hostlink", "admin_socket", "proxy_ca", "state_dir", "limits",
        "uids",      "env",  "files",    "pass_env",     "mask",     NULL};
    const struct sworn_yaml_node *r = sworn_yaml_root(d);
    struct yctx x = {d, c};

    SWORN_GUARD(sworn_yaml_only_keys(d, r, keys));
    SWORN_GUARD(y_string(&x, sworn_yaml_get(r, "principal"), "principal", c->principal,
                         sizeof(c->principal), check_name));
    SWORN_GUARD(
        y_string(&x, sworn_yaml_get(r, "name"), "name", c->name, sizeof(c->name), check_name));
    SWORN_GUARD(y_string(&x, sworn_yaml_get(r, "hostlink"), "hostlink", c->hostlink,
                         sizeof(c->hostlink), check_socket_path));
    SWORN_GUARD(y_string(&x, sworn_yaml_get(r, "admin_socket"), "admin_socket", c->admin_socket,
                         sizeof(c->admin_socket), check_socket_path));
    SWORN_GUARD(y_string(&x, sworn_yaml_get(r, "proxy_ca"), "proxy_ca", c->proxy_ca,
                         sizeof(c->proxy_ca), check_path));
    SWORN_GUARD(y_string(&x, sworn_yaml_get(r, "state_dir"), "state_dir", c->state_dir,
                         sizeof(c->state_dir), check_path));
    SWORN_GUARD(y_limits(&x, sworn_yaml_get(r, "limits")));
    SWORN_GUARD(y_uids(&x, sworn_yaml_get(r, "uids")));
    c->nenv = c->nfiles = c->npass_env = c->nmask = 0;
    SWORN_GUARD(y_tokens(&x, sworn_yaml_get(r, "env"), "env", c->env, &c->nenv, 0));
    SWORN_GUARD(y_tokens(&x, sworn_yaml_get(r, "files"), "files", c->files, &c->nfiles, 1));
    SWORN_GUARD(
        y_list(&x, sworn_yaml_get(r, "pass_env"), "pass_env", NULL, c->pass_env, &c->npass_env));
    SWORN_GUARD(y_list(&x, sworn_yaml_get(r, "mask"), "mask", c->mask, NULL, &c->nmask));
    for (size_t i = 0; i < c->npass_env; i++)
        for (size_t j = 0; j < c->nenv; j++)
            if (strcmp(c->pass_env[i], c->env[j].name) == 0)
                return sworn_yaml_error(d, sworn_yaml_get(r, "pass_env"),
                                        "pass_env: \"%s\" is also in env (one source per "
                                        "variable)",
                                        c->pass_env[i]);
    for (size_t i = 0; i < c->nfiles; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->files[i].name, c->files[j].name) == 0)
                return sworn_yaml_error(d, sworn_yaml_get(r, "files"), "files: \"%s\" twice",
                                        c->files[i].name);
    (void)copy_str(c->source, sizeof(c->source), sworn_yaml_name(d));
    return 0;
fail:
    return -1;
}

int sworn_run_conf_load_yaml(struct sworn_run_conf *c, const char *path)
{
    struct sworn_yaml_doc *d = NULL;
    int rc;

    if (sworn_yaml_load_file(path, &d) < 0)
        return -1;
    rc = from_doc(c, d);
    sworn_yaml_free(d);
    return rc;
}

int sworn_run_conf_load_yaml_mem(struct sworn_run_conf *c, const char *name, const uint8_t *p,
                                 size_t len)
{
    struct sworn_yaml_doc *d = NULL;
    int rc;

    if (sworn_yaml_load_mem(name, p, len, &d) < 0)
        return -1;
    rc = from_doc(c, d);
    sworn_yaml_free(d);
    return rc;
}

/* --- a dev stack's stack.env -------------------------------------------------------------------
 */

/* The value of KEY=VALUE or KEY="VALUE" lines (the last one wins, as the shell would have it). */
static int stack_value(const char *text, size_t len, const char *path, const char *key, char *dst,
                       size_t cap, const char *(*check)(const char *))
{
    size_t klen = strlen(key);
    const char *line = text, *end = text + len;
    int found = 0;

    while (line < end) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl != NULL ? (size_t)(nl - line) : (size_t)(end - line);
        if (n > klen && memcmp(line, key, klen) == 0 && line[klen] == '=') {
            const char *v = line + klen + 1;
            size_t vn = n - klen - 1;
            if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"') {
                v++;
                vn -= 2;
            }
            if (vn >= cap || memchr(v, '\0', vn) != NULL)
                return sworn_err_set(SWORN_ERR_FORMAT, "%s: %s is too long", path, key);
            memcpy(dst, v, vn);
            dst[vn] = '\0';
            found = 1;
        }
        line += n + 1;
    }
    if (!found)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "%s: no %s (is it a stack made by scripts/dev-stack up with the "
                             "proxy?)",
                             path, key);
    if (check(dst) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "%s: %s %s", path, key, check(dst));
    return 0;
}

int sworn_run_conf_stack_text(struct sworn_run_conf *c, const char *path, const char *text,
                              size_t len)
{
    if (len > STACK_ENV_MAX || memchr(text, '\0', len) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "%s: not a stack.env (over %u bytes, or a NUL)",
                             path, STACK_ENV_MAX);
    SWORN_GUARD(stack_value(text, len, path, "PROXY_SOCKET", c->hostlink, sizeof(c->hostlink),
                            check_socket_path));
    SWORN_GUARD(stack_value(text, len, path, "ADMIN_SOCKET", c->admin_socket,
                            sizeof(c->admin_socket), check_socket_path));
    SWORN_GUARD(
        stack_value(text, len, path, "PROXY_CA", c->proxy_ca, sizeof(c->proxy_ca), check_path));
    SWORN_GUARD(stack_value(text, len, path, "PROXY_PRINCIPAL", c->principal, sizeof(c->principal),
                            check_name));
    return 0;
fail:
    return -1;
}

int sworn_run_conf_load_stack(struct sworn_run_conf *c, const char *dir)
{
    char path[SWORN_RUN_PATH_MAX];
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (check_path(dir) != NULL || (size_t)snprintf(path, sizeof(path), "%s/stack.env", dir) >=
                                       sizeof(path) - sizeof("/sandboxes"))
        return sworn_err_set(SWORN_ERR_ARG, "--stack: \"%s\" %s", dir,
                             check_path(dir) != NULL ? check_path(dir) : "is too long");
    if (sworn_file_read(path, STACK_ENV_MAX, &text, &len) < 0)
        return sworn_err_set(sworn_err_code(), "--stack: %s", sworn_err_msg());
    rc = sworn_run_conf_stack_text(c, path, text, len);
    free(text);
    if (rc < 0)
        return -1;
    snprintf(c->state_dir, sizeof(c->state_dir), "%s/sandboxes", dir);
    (void)copy_str(c->source, sizeof(c->source), path);
    (void)copy_str(c->stack_dir, sizeof(c->stack_dir), dir);
    return 0;
}

/* --- the command line --------------------------------------------------------------------------
 */

/* "123", "30s", "250ms", "5m", "2h", "1d": milliseconds; a bare number is seconds. */
static int parse_duration(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t ms;
    } units[] = {{"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    size_t digits = strspn(s, "0123456789");
    uint64_t v;

    if (digits == 0 || sworn_parse_u64(s, digits, &v) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(s + digits, units[i].suffix) == 0) {
            if (v > UINT64_MAX / units[i].ms)
                return -1;
            *out = v * units[i].ms;
            return 0;
        }
    return -1;
}

/* "1048576", "512k", "256M", "2G" (binary units, either case). */
static int parse_bytes(const char *s, uint64_t *out)
{
    size_t digits = strspn(s, "0123456789");
    uint64_t v, mul = 1;

    if (digits == 0 || sworn_parse_u64(s, digits, &v) < 0)
        return -1;
    if (s[digits] != '\0') {
        if (s[digits + 1] != '\0')
            return -1;
        switch (s[digits]) {
        case 'k':
        case 'K':
            mul = 1024;
            break;
        case 'm':
        case 'M':
            mul = 1024 * 1024;
            break;
        case 'g':
        case 'G':
            mul = 1024 * 1024 * 1024;
            break;
        default:
            return -1;
        }
    }
    if (v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int opt_string(const char *opt, const char *v, char *dst, size_t cap,
                      const char *(*check)(const char *))
{
    if (check(v) != NULL)
        return sworn_err_set(SWORN_ERR_ARG, "%s: \"%s\" %s", opt, v, check(v));
    if (copy_str(dst, cap, v) < 0)
        return sworn_err_set(SWORN_ERR_ARG, "%s: too long", opt);
    return 0;
}

static int check_required(const struct sworn_run_conf *c)
{
    const char *missing = c->principal[0] == '\0'      ? "a principal (--principal or principal:)"
                          : c->hostlink[0] == '\0'     ? "the proxy's hostlink socket (hostlink:)"
                          : c->admin_socket[0] == '\0' ? "decisiond's admin socket (admin_socket:)"
                          : c->proxy_ca[0] == '\0'     ? "the proxy's CA certificate (proxy_ca:)"
                                                       : NULL;

    if (missing != NULL)
        return sworn_err_set(SWORN_ERR_ARG, "%s is missing: give --config FILE or --stack DIR",
                             missing);
    if (c->argc == 0)
        return sworn_err_set(SWORN_ERR_ARG, "no command: sworn-run [options] -- COMMAND ARGS...");
    if (c->argc > SWORN_RUN_ARGV_MAX)
        return sworn_err_set(SWORN_ERR_RANGE, "the command has more than %u arguments",
                             SWORN_RUN_ARGV_MAX);
    for (size_t i = 0; i < c->argc; i++) {
        if (strlen(c->argv[i]) > SWORN_RUN_ARG_MAX)
            return sworn_err_set(SWORN_ERR_RANGE, "argument %zu of the command is over %u bytes", i,
                                 SWORN_RUN_ARG_MAX);
        /* The command is recorded, and the record holds text without control characters. */
        if (sworn_utf8_check(c->argv[i], strlen(c->argv[i]), 0, "the command") < 0)
            return sworn_err_set(SWORN_ERR_ARG,
                                 "argument %zu of the command cannot be recorded: %s (write it "
                                 "in a script in the work folder instead)",
                                 i, sworn_err_msg());
    }
    if (c->argv[0][0] == '\0')
        return sworn_err_set(SWORN_ERR_ARG, "the command is empty");
    return 0;
}

int sworn_run_conf_from_args(struct sworn_run_conf *c, int argc, char *const *argv)
{
    enum {
        O_CONFIG = 256,
        O_STACK,
        O_PRINCIPAL,
        O_NAME,
        O_WORK,
        O_KEEP,
        O_TIMEOUT,
        O_MEMORY,
        O_PROCESSES,
        O_HELP,
        O_VERSION
    };
    static const struct option opts[] = {{"config", required_argument, NULL, O_CONFIG},
                                         {"stack", required_argument, NULL, O_STACK},
                                         {"principal", required_argument, NULL, O_PRINCIPAL},
                                         {"name", required_argument, NULL, O_NAME},
                                         {"work", required_argument, NULL, O_WORK},
                                         {"keep", no_argument, NULL, O_KEEP},
                                         {"timeout", required_argument, NULL, O_TIMEOUT},
                                         {"memory", required_argument, NULL, O_MEMORY},
                                         {"processes", required_argument, NULL, O_PROCESSES},
                                         {"help", no_argument, NULL, O_HELP},
                                         {"version", no_argument, NULL, O_VERSION},
                                         {NULL, 0, NULL, 0}};
    const char *config = NULL, *stack = NULL;
    int o, first_pass = 1;
    uint64_t v;

    /* Two passes: the file first, so that every option given beside it overrides it. */
    for (;;) {
        optind = 1;
        opterr = 0;
        while ((o = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
            if (o == O_HELP || o == O_VERSION)
                return o == O_HELP ? 1 : 2;
            if (o == '?' || o == ':')
                return sworn_err_set(SWORN_ERR_ARG, "unknown option or missing value: %s",
                                     argv[optind - 1]);
            if (first_pass) {
                if (o == O_CONFIG || o == O_STACK) {
                    if (config != NULL || stack != NULL)
                        return sworn_err_set(SWORN_ERR_ARG, "--config and --stack: give one, once");
                    *(o == O_CONFIG ? &config : &stack) = optarg;
                }
                continue;
            }
            switch (o) {
            case O_CONFIG:
            case O_STACK:
                break;
            case O_PRINCIPAL:
                SWORN_GUARD(opt_string("--principal", optarg, c->principal, sizeof(c->principal),
                                       check_name));
                break;
            case O_NAME:
                SWORN_GUARD(opt_string("--name", optarg, c->name, sizeof(c->name), check_name));
                break;
            case O_WORK:
                SWORN_GUARD(opt_string("--work", optarg, c->work, sizeof(c->work), check_path));
                break;
            case O_KEEP:
                c->keep = 1;
                break;
            case O_TIMEOUT:
                SWORN_ENSURE(parse_duration(optarg, &v) == 0 && v > 0 && v <= WALL_MAX_MS,
                             SWORN_ERR_ARG,
                             "--timeout: \"%s\" is not a duration of 1ms..30d (seconds, or a "
                             "number with ms, s, m, h or d)",
                             optarg);
                c->wall_ms = v;
                break;
            case O_MEMORY:
                SWORN_ENSURE(parse_bytes(optarg, &v) == 0 && v >= MEMORY_MIN && v <= MEMORY_MAX,
                             SWORN_ERR_ARG,
                             "--memory: \"%s\" is not a size of 16M..16T (bytes, or a number with "
                             "k, M or G)",
                             optarg);
                c->memory_bytes = v;
                break;
            case O_PROCESSES:
                SWORN_ENSURE(sworn_parse_u64(optarg, strlen(optarg), &v) == 0 && v >= 1 &&
                                 v <= PROCESSES_MAX,
                             SWORN_ERR_ARG, "--processes: \"%s\" is not a number of 1..%u", optarg,
                             PROCESSES_MAX);
                c->processes = (uint32_t)v;
                break;
            default:
                return sworn_err_set(SWORN_ERR_ARG, "unknown option %s", argv[optind - 1]);
            }
        }
        if (!first_pass)
            break;
        if (config != NULL)
            SWORN_GUARD(sworn_run_conf_load_yaml(c, config));
        else if (stack != NULL)
            SWORN_GUARD(sworn_run_conf_load_stack(c, stack));
        first_pass = 0;
    }
    if (optind < argc && strcmp(argv[optind - 1], "--") != 0)
        return sworn_err_set(SWORN_ERR_ARG,
                             "\"%s\": put the agent's command after --: sworn-run [options] -- "
                             "COMMAND ARGS...",
                             argv[optind]);
    c->argv = argv + optind;
    c->argc = (size_t)(argc - optind);
    return check_required(c);
fail:
    return -1;
}

/* --- the digest --------------------------------------------------------------------------------
 */

struct canon {
    char *p;
    size_t cap, len;
    int over;
};

static void put(struct canon *k, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put(struct canon *k, const char *key, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (k->over)
        return;
    n = snprintf(k->p + k->len, k->cap - k->len, "%s=", key);
    if (n < 0 || (size_t)n >= k->cap - k->len) {
        k->over = 1;
        return;
    }
    k->len += (size_t)n;
    va_start(ap, fmt);
    n = vsnprintf(k->p + k->len, k->cap - k->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 >= k->cap - k->len) {
        k->over = 1;
        return;
    }
    k->len += (size_t)n;
    k->p[k->len++] = '\n';
    k->p[k->len] = '\0';
}

long sworn_run_conf_canonical(const struct sworn_run_conf *c, char *out, size_t cap)
{
    struct canon k = {out, cap, 0, cap == 0};

    put(&k, "version", "1");
    put(&k, "principal", "%s", c->principal);
    put(&k, "name", "%s", c->name);
    put(&k, "hostlink", "%s", c->hostlink);
    put(&k, "admin_socket", "%s", c->admin_socket);
    put(&k, "proxy_ca", "%s", c->proxy_ca);
    put(&k, "work", "%s", c->work);
    put(&k, "keep", "%d", c->keep ? 1 : 0);
    put(&k, "limits.timeout_ms", "%llu", (unsigned long long)c->wall_ms);
    put(&k, "limits.memory", "%llu", (unsigned long long)c->memory_bytes);
    put(&k, "limits.processes", "%u", (unsigned)c->processes);
    put(&k, "limits.connections", "%u", (unsigned)c->connections);
    for (size_t i = 0; i < c->nenv; i++)
        put(&k, "env", "%s=%s", c->env[i].name, c->env[i].value);
    for (size_t i = 0; i < c->nfiles; i++)
        put(&k, "file", "%s=%s", c->files[i].name, c->files[i].value);
    for (size_t i = 0; i < c->npass_env; i++)
        put(&k, "pass_env", "%s", c->pass_env[i]);
    for (size_t i = 0; i < c->nmask; i++)
        put(&k, "mask", "%s", c->mask[i]);
    if (k.over)
        return sworn_err_set(SWORN_ERR_RANGE,
                             "the configuration's canonical text is over %zu "
                             "bytes",
                             cap);
    return (long)k.len;
}

int sworn_run_conf_digest(const struct sworn_run_conf *c, uint8_t out[32])
{
    static char text[2u * SWORN_RUN_VARS_MAX * (SWORN_RUN_VAR_NAME_MAX + SWORN_RUN_TOKEN_MAX) +
                     SWORN_RUN_VARS_MAX * (SWORN_RUN_PATH_MAX + SWORN_RUN_VAR_NAME_MAX + 32) +
                     8192];
    long n = sworn_run_conf_canonical(c, text, sizeof(text));
    unsigned len = 0;
    int ok;

    if (n < 0)
        return -1;
    ok = EVP_Digest(text, (size_t)n, out, &len, EVP_sha256(), NULL) == 1 && len == 32;
    sworn_memzero(text, (size_t)n);
    return ok ? 0 : sworn_err_set(SWORN_ERR_CRYPTO, "SHA-256 of the configuration failed");
}
