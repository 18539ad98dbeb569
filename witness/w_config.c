/*
 * w_config.c -- reading sworn-witness's YAML configuration (contract and shape in w_config.h).
 */
#include "w_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "encoding.h"
#include "err.h"
#include "utf8.h"
#include "yamldoc.h"

#define DEFAULT_RATE 20u
#define DEFAULT_BURST 40u
#define DEFAULT_TIMEOUT_MS 10000u
#define DEFAULT_CONNECTIONS 1024u
#define DEFAULT_CONNECTIONS_PER_ADDRESS 64u
#define PATH_MAX_LEN 4096u
#define URI_MAX 1024u
#define SPKI_MAX 1024u

struct ctx {
    const struct sworn_yaml_doc *d;
    const char *dir; /* the folder of the configuration file, absolute */
    struct sworn_witness_config *c;
};

/* A required key is absent: name it, at its mapping's position. */
static int missing(const struct ctx *x, const struct sworn_yaml_node *map, const char *key)
{
    return sworn_yaml_error(x->d, map, "%s is required", key);
}

/* A copy of a non-empty printable string value. */
static int get_str(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                   size_t max, char **out)
{
    const char *s = NULL;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (s[0] == '\0' || strlen(s) > max || sworn_utf8_check(s, strlen(s), 0, key) < 0)
        return sworn_yaml_error(x->d, n, "%s: 1..%zu bytes of printable text", key, max);
    *out = strdup(s);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
fail:
    return -1;
}

/* A path, absolute, or made so against the configuration's folder (not resolved further). */
/*
 * A setting of pkcs11: keys only, `name` in the key map m: required when the key is pkcs11
 * (`missing_msg` names it), refused when it is not. OUT: *n, the node or NULL. Returns 0 or -1.
 */
static int pkcs11_setting(const struct ctx *x, const struct sworn_yaml_node *m, const char *name,
                          int pkcs11, const char *missing_msg, const struct sworn_yaml_node **n)
{
    *n = sworn_yaml_get(m, name);
    if (*n != NULL && !pkcs11)
        return sworn_yaml_error(x->d, *n, "%s applies only to pkcs11: keys", name);
    if (*n == NULL && pkcs11)
        return missing(x, m, missing_msg);
    return 0;
}

static int get_path(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                    char **out)
{
    char *p = NULL;
    size_t cap;

    SWORN_GUARD(get_str(x, n, key, PATH_MAX_LEN, &p));
    if (p[0] == '/') {
        *out = p;
        return 0;
    }
    cap = strlen(x->dir) + 1 + strlen(p) + 1;
    *out = malloc(cap);
    if (*out == NULL) {
        free(p);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    snprintf(*out, cap, "%s/%s", x->dir, p);
    free(p);
    return 0;
fail:
    return -1;
}

/* listen: "host:port" or "[v6]:port"; the host an address literal (checked when binding). */
static int read_listen(struct ctx *x, const struct sworn_yaml_node *n)
{
    const char *s = NULL, *colon, *host;
    size_t host_len;
    uint64_t port;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    colon = strrchr(s, ':');
    if (colon == NULL || colon == s)
        return sworn_yaml_error(x->d, n, "listen: want host:port (an address and a port)");
    host = s;
    host_len = (size_t)(colon - s);
    if (host[0] == '[') {
        if (host_len < 3 || host[host_len - 1] != ']')
            return sworn_yaml_error(x->d, n, "listen: want [v6-address]:port");
        host++;
        host_len -= 2;
    }
    if (sworn_parse_u64(colon + 1, strlen(colon + 1), &port) < 0 || port > 65535)
        return sworn_yaml_error(x->d, n, "listen: the port is a decimal 0..65535");
    if (host_len > 255 || sworn_utf8_check(host, host_len, 0, "listen") < 0)
        return sworn_yaml_error(x->d, n, "listen: bad host");
    x->c->listen_host = strndup(host, host_len);
    if (x->c->listen_host == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    x->c->listen_port = (uint16_t)port;
    return 0;
fail:
    return -1;
}

static int read_spki(struct ctx *x, const struct sworn_yaml_node *n)
{
    const char *s = NULL;
    size_t len;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    len = strlen(s);
    if (len == 0 || len % 2 != 0 || len / 2 > SPKI_MAX)
        return sworn_yaml_error(x->d, n, "pinned_spki: the DER SPKI in hex (at most %u bytes)",
                                SPKI_MAX);
    x->c->pinned_spki = malloc(len / 2);
    if (x->c->pinned_spki == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    if (sworn_hex_decode(s, len, x->c->pinned_spki, len / 2) < 0)
        return sworn_yaml_error(x->d, n, "pinned_spki: bad hex");
    x->c->pinned_spki_len = len / 2;
    return 0;
fail:
    return -1;
}

static int read_key(struct ctx *x, const struct sworn_yaml_node *m)
{
    static const char *const keys[] = {"uri", "module", "pin_file", "pinned_spki", "name", NULL};
    const struct sworn_yaml_node *n;
    const char *uri = NULL;
    int pkcs11;

    SWORN_GUARD(sworn_yaml_only_keys(x->d, m, keys));
    n = sworn_yaml_get(m, "uri");
    if (n == NULL)
        return missing(x, m, "key.uri");
    SWORN_GUARD(sworn_yaml_str(x->d, n, &uri));
    pkcs11 = strncmp(uri, "pkcs11:", 7) == 0;
    if (pkcs11) {
        SWORN_GUARD(get_str(x, n, "key.uri", URI_MAX, &x->c->key_uri));
    } else if (strncmp(uri, "file:", 5) == 0 && uri[5] != '\0') {
        char *path = NULL;
        size_t cap;

        /* The path after "file:", made absolute as any other path. */
        if (uri[5] == '/') {
            SWORN_GUARD(get_str(x, n, "key.uri", PATH_MAX_LEN, &x->c->key_uri));
        } else {
            cap = strlen(x->dir) + strlen(uri) + 2;
            path = malloc(cap);
            if (path == NULL)
                return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
            snprintf(path, cap, "file:%s/%s", x->dir, uri + 5);
            x->c->key_uri = path;
        }
    } else {
        return sworn_yaml_error(x->d, n,
                                "key.uri: a pkcs11: URI or file:PATH (a TPM cannot hold the "
                                "Ed25519 key a cosignature needs)");
    }
    /* Settings of a pkcs11: key are refused for a file key: they would be silently unused. */
    SWORN_GUARD(pkcs11_setting(x, m, "module", pkcs11, "key.module", &n));
    if (n != NULL)
        SWORN_GUARD(get_path(x, n, "key.module", &x->c->key_module));
    SWORN_GUARD(pkcs11_setting(x, m, "pin_file", pkcs11, "key.pin_file", &n));
    if (n != NULL)
        SWORN_GUARD(get_path(x, n, "key.pin_file", &x->c->key_pin_file));
    SWORN_GUARD(pkcs11_setting(x, m, "pinned_spki", pkcs11,
                               "key.pinned_spki (hardware keys are always pinned)", &n));
    if (n != NULL)
        SWORN_GUARD(read_spki(x, n));
    n = sworn_yaml_get(m, "name");
    if (n == NULL)
        return missing(x, m, "key.name");
    SWORN_GUARD(get_str(x, n, "key.name", SWORN_NOTE_NAME_MAX, &x->c->key_name));
    if (sworn_note_name_check(x->c->key_name, strlen(x->c->key_name)) < 0)
        return sworn_yaml_error(x->d, n, "key.name: %s", sworn_err_msg());
    return 0;
fail:
    return -1;
}

static int get_u64(const struct ctx *x, const struct sworn_yaml_node *m, const char *key,
                   uint64_t min, uint64_t max, uint64_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(m, key);

    if (n == NULL)
        return 0; /* the default stays */
    return sworn_yaml_u64(x->d, n, min, max, out);
}

static int read_limits(struct ctx *x, const struct sworn_yaml_node *m)
{
    static const char *const keys[] = {"body_bytes",  "requests_per_second",     "burst", "timeout",
                                       "connections", "connections_per_address", NULL};
    const struct sworn_yaml_node *n;
    uint64_t rate = x->c->rate_per_sec, burst = x->c->burst, conns = x->c->connections,
             per_addr = x->c->connections_per_address;

    SWORN_GUARD(sworn_yaml_only_keys(x->d, m, keys));
    SWORN_GUARD(get_u64(x, m, "body_bytes", 256, SWORN_WITNESS_BODY_MAX, &x->c->body_bytes));
    SWORN_GUARD(get_u64(x, m, "requests_per_second", 1, 100000, &rate));
    SWORN_GUARD(get_u64(x, m, "burst", 1, 100000, &burst));
    x->c->rate_per_sec = (uint32_t)rate;
    x->c->burst = (uint32_t)burst;
    SWORN_GUARD(get_u64(x, m, "connections", 16, 100000, &conns));
    SWORN_GUARD(get_u64(x, m, "connections_per_address", 1, 100000, &per_addr));
    x->c->connections = (uint32_t)conns;
    x->c->connections_per_address = (uint32_t)per_addr;
    n = sworn_yaml_get(m, "timeout");
    if (n != NULL) {
        SWORN_GUARD(sworn_yaml_duration_ms(x->d, n, &x->c->timeout_ms));
        if (x->c->timeout_ms < 100 || x->c->timeout_ms > 600000)
            return sworn_yaml_error(x->d, n, "timeout: 100ms .. 10m");
    }
    return 0;
fail:
    return -1;
}

static int read_log(struct ctx *x, const struct sworn_yaml_node *m, struct sworn_witness_log *l)
{
    static const char *const keys[] = {"origin", "keys", NULL};
    const struct sworn_yaml_node *n, *ks;
    struct sworn_checkpoint probe;
    char body[SWORN_CHECKPOINT_BODY_MAX + 1];
    uint8_t zero[SWORN_HASH_LEN] = {0};

    SWORN_GUARD(sworn_yaml_only_keys(x->d, m, keys));
    n = sworn_yaml_get(m, "origin");
    if (n == NULL)
        return missing(x, m, "origin");
    SWORN_GUARD(get_str(x, n, "origin", SWORN_CHECKPOINT_ORIGIN_MAX, &l->origin));
    /* An origin the checkpoint parser would refuse could never match: refuse it here. */
    if (sworn_checkpoint_format(l->origin, 0, zero, body, sizeof(body)) < 0 ||
        sworn_checkpoint_parse(body, strlen(body), &probe) < 0)
        return sworn_yaml_error(x->d, n, "origin: not a checkpoint origin");
    for (const struct sworn_witness_log *e = x->c->logs; e < l; e++)
        if (strcmp(e->origin, l->origin) == 0)
            return sworn_yaml_error(x->d, n, "origin %s is listed twice", l->origin);
    ks = sworn_yaml_get(m, "keys");
    if (ks == NULL)
        return missing(x, m, "keys");
    if (sworn_yaml_kind(ks) != SWORN_YAML_SEQ || sworn_yaml_len(ks) == 0 ||
        sworn_yaml_len(ks) > SWORN_WITNESS_LOG_KEYS_MAX)
        return sworn_yaml_error(x->d, ks, "keys: a list of 1..%d verifier keys",
                                SWORN_WITNESS_LOG_KEYS_MAX);
    l->keys = calloc(sworn_yaml_len(ks), sizeof(*l->keys));
    if (l->keys == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < sworn_yaml_len(ks); i++) {
        const struct sworn_yaml_node *k = sworn_yaml_item(ks, i);
        const char *s = NULL;
        struct sworn_note_verifier *v = &l->keys[i];

        SWORN_GUARD(sworn_yaml_str(x->d, k, &s));
        if (sworn_note_verifier_parse(s, strlen(s), v) < 0)
            return sworn_yaml_error(x->d, k, "keys: %s", sworn_err_msg());
        if (v->alg != SWORN_NOTE_ALG_ED25519 && v->alg != SWORN_NOTE_ALG_ECDSA_P256)
            return sworn_yaml_error(x->d, k,
                                    "keys: a log signs with type 0x01 (Ed25519) or 0x02 (ECDSA "
                                    "P-256); a cosignature key (0x04) is no log key");
        l->nkeys++;
    }
    return 0;
fail:
    return -1;
}

static int read_logs(struct ctx *x, const struct sworn_yaml_node *n)
{
    size_t count = sworn_yaml_len(n);

    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ || count == 0 || count > SWORN_WITNESS_LOGS_MAX)
        return sworn_yaml_error(x->d, n, "logs: a list of 1..%d logs", SWORN_WITNESS_LOGS_MAX);
    x->c->logs = calloc(count, sizeof(*x->c->logs));
    if (x->c->logs == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const struct sworn_yaml_node *m = sworn_yaml_item(n, i);

        if (sworn_yaml_kind(m) != SWORN_YAML_MAP)
            return sworn_yaml_error(x->d, m, "logs: each item is a mapping (origin, keys)");
        /* Counted before it is read, so that free releases a half-read entry too. */
        x->c->nlogs++;
        if (read_log(x, m, &x->c->logs[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

static int read_all(struct ctx *x)
{
    static const char *const keys[] = {"listen", "state", "key", "limits", "logs", NULL};
    const struct sworn_yaml_node *root = sworn_yaml_root(x->d), *n;

    SWORN_GUARD(sworn_yaml_only_keys(x->d, root, keys));
    n = sworn_yaml_get(root, "listen");
    if (n == NULL)
        return missing(x, root, "listen");
    SWORN_GUARD(read_listen(x, n));
    n = sworn_yaml_get(root, "state");
    if (n == NULL)
        return missing(x, root, "state");
    SWORN_GUARD(get_path(x, n, "state", &x->c->state_path));
    n = sworn_yaml_get(root, "key");
    if (n == NULL || sworn_yaml_kind(n) != SWORN_YAML_MAP)
        return sworn_yaml_error(x->d, n != NULL ? n : root, "key: a mapping (uri, name, ...)");
    SWORN_GUARD(read_key(x, n));
    n = sworn_yaml_get(root, "limits");
    if (n != NULL) {
        if (sworn_yaml_kind(n) != SWORN_YAML_MAP)
            return sworn_yaml_error(x->d, n, "limits: a mapping");
        SWORN_GUARD(read_limits(x, n));
    }
    n = sworn_yaml_get(root, "logs");
    if (n == NULL)
        return missing(x, root, "logs");
    return read_logs(x, n);
fail:
    return -1;
}

/* The absolute folder of path (the working folder joined for a relative one). */
static char *config_dir(const char *path)
{
    char cwd[PATH_MAX_LEN];
    const char *slash = strrchr(path, '/');
    char *dir;
    size_t cap;

    if (path[0] == '/')
        return strndup(path, slash == path ? 1 : (size_t)(slash - path));
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        return NULL;
    cap = strlen(cwd) + 1 + strlen(path) + 1;
    dir = malloc(cap);
    if (dir == NULL)
        return NULL;
    if (slash == NULL)
        snprintf(dir, cap, "%s", cwd);
    else
        snprintf(dir, cap, "%s/%.*s", cwd, (int)(slash - path), path);
    return dir;
}

int sworn_witness_config_load(const char *path, struct sworn_witness_config **out)
{
    struct sworn_yaml_doc *d = NULL;
    struct ctx x = {0};
    char *dir = NULL;
    int rc = -1;

    x.c = calloc(1, sizeof(*x.c));
    dir = config_dir(path);
    if (x.c == NULL || dir == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (sworn_yaml_load_file(path, &d) < 0)
        goto done;
    x.d = d;
    x.dir = dir;
    x.c->body_bytes = SWORN_WITNESS_BODY_DEFAULT;
    x.c->rate_per_sec = DEFAULT_RATE;
    x.c->burst = DEFAULT_BURST;
    x.c->timeout_ms = DEFAULT_TIMEOUT_MS;
    x.c->connections = DEFAULT_CONNECTIONS;
    x.c->connections_per_address = DEFAULT_CONNECTIONS_PER_ADDRESS;
    if (read_all(&x) < 0)
        goto done;
    *out = x.c;
    x.c = NULL;
    rc = 0;
done:
    sworn_witness_config_free(x.c);
    sworn_yaml_free(d);
    free(dir);
    return rc;
}

const struct sworn_witness_log *sworn_witness_config_log(const struct sworn_witness_config *c,
                                                         const char *origin, size_t origin_len)
{
    for (size_t i = 0; i < c->nlogs; i++)
        if (strlen(c->logs[i].origin) == origin_len &&
            memcmp(c->logs[i].origin, origin, origin_len) == 0)
            return &c->logs[i];
    return NULL;
}

void sworn_witness_config_free(struct sworn_witness_config *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nlogs; i++) {
        free(c->logs[i].origin);
        free(c->logs[i].keys);
    }
    free(c->logs);
    free(c->listen_host);
    free(c->state_path);
    free(c->key_uri);
    free(c->key_module);
    free(c->key_pin_file);
    free(c->pinned_spki);
    free(c->key_name);
    free(c);
}
