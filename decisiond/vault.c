/*
 * vault.c -- the credential vault (see vault.h for the file format, the matching rules and the
 * handling of secrets).
 *
 * Loading reads the file through one descriptor (open without following links, then fstat, so the
 * checks of kind, mode, owner and size apply to the very file read), parses it with json-c in
 * strict mode, and copies every field into fixed or locked storage; the JSON tree and the file's
 * bytes are wiped and freed before returning. Minting writes the whole vault back from memory
 * (the file is never edited in place) through sworn_file_replace.
 */
#include "vault.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "buf.h"
#include "encoding.h"
#include "err.h"
#include "fileio.h"
#include "resource.h"
#include "safefile.h"
#include "utf8.h"
#include "wipe.h"

#define JSON_DEPTH 8
#define MAX_PRINCIPALS 64u
#define MAX_DESTINATIONS 64u
#define PRINCIPAL_MAX 128u
#define HOST_MAX 253u
#define PATH_PREFIX_MAX 1024u

struct dest {
    char scheme[8];
    char host[HOST_MAX + 3]; /* the canonical host (resource.h), or "*." + a canonical name */
    unsigned port;
    char *path_prefix; /* canonical (resource.h); NULL: any path */
    int wildcard;      /* host is "*." + parent */
};

struct sworn_vault_cred {
    char id[SWORN_VAULT_ID_MAX + 1];
    char symbolic[SWORN_VAULT_SYMBOLIC_MAX + 1];
    uint8_t symbolic_sha256[32];
    char header[SWORN_VAULT_NAME_MAX + 1];
    char query[SWORN_VAULT_NAME_MAX + 1];
    char form[SWORN_VAULT_NAME_MAX + 1]; /* a form body parameter; exactly one of the three */
    uint8_t *value;                      /* locked; value_len bytes */
    size_t value_len;
    uint8_t value_sha256[32];
    char **principals;
    size_t n_principals;
    struct dest *dests;
    size_t n_dests;
    int replacing; /* a mint in progress replaces it: it releases nothing (mint_begin) */
    int revoked;   /* a recorded mint replaced it but its file write failed: it releases nothing
                    * for the rest of this process (sworn_vault_mint_commit) */
};

struct sworn_vault {
    pthread_mutex_t lock;      /* the release lock: creds and n (vault.h, "Thread safety") */
    pthread_mutex_t mint_lock; /* one mint at a time; held while the file is written */
    void (*write_hook)(void *arg);
    void *write_hook_arg;
    char *path;
    struct sworn_vault_cred *creds;
    size_t n;
};

/* --- locked memory ------------------------------------------------------------------------------
 */

static size_t page_round(size_t n)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t p = pg > 0 ? (size_t)pg : 4096;

    return (n + p - 1) / p * p;
}

/*
 * A secret buffer on pages of its own (so that unlocking it never unlocks a neighbour's secret),
 * locked when RLIMIT_MEMLOCK allows; a failed mlock is not an error.
 */
static uint8_t *secret_alloc(size_t n)
{
    size_t sz = page_round(n ? n : 1);
    void *p = NULL;
    long pg = sysconf(_SC_PAGESIZE);

    if (posix_memalign(&p, pg > 0 ? (size_t)pg : 4096, sz) != 0)
        return NULL;
    (void)mlock(p, sz);
    return p;
}

static void secret_free(uint8_t *p, size_t n)
{
    size_t sz;

    if (p == NULL)
        return;
    sz = page_round(n ? n : 1);
    sworn_memzero(p, sz);
    (void)munlock(p, sz);
    free(p);
}

static void cred_clear(struct sworn_vault_cred *c)
{
    secret_free(c->value, c->value_len);
    for (size_t i = 0; i < c->n_principals; i++)
        free(c->principals[i]);
    free(c->principals);
    for (size_t i = 0; i < c->n_dests; i++)
        free(c->dests[i].path_prefix);
    free(c->dests);
    sworn_memzero(c, sizeof(*c));
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned int len = 32;

    if (EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) != 1)
        abort(); /* SHA-256 of memory cannot fail short of a broken library */
}

/* --- field rules --------------------------------------------------------------------------------
 */

static int is_id_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

static int id_ok(const char *s, size_t n)
{
    if (n < 1 || n > SWORN_VAULT_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_id_char(s[i]))
            return 0;
    return 1;
}

static int symbolic_ok(const char *s, size_t n)
{
    if (n < SWORN_VAULT_SYMBOLIC_MIN || n > SWORN_VAULT_SYMBOLIC_MAX || strncmp(s, "sym_", 4))
        return 0;
    for (size_t i = 4; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

/* A value: 1..16384 bytes of UTF-8, no unsafe characters (utf8.h) but tab. Never says where. */
static int value_ok(const uint8_t *p, size_t n)
{
    struct sworn_buf b = sworn_buf_init(p, n);
    uint32_t cp;

    if (n < 1 || n > SWORN_VAULT_VALUE_MAX)
        return 0;
    while (sworn_buf_remaining(&b) > 0) {
        if (sworn_utf8_next(&b, &cp) < 0)
            return 0;
        if (cp != '\t' && sworn_utf8_is_control(cp))
            return 0;
    }
    return 1;
}

/* RFC 9110 tchar. */
static int is_tchar(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static int is_unreserved(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '~' || ch == '-';
}

static int principal_ok(const char *s, size_t n)
{
    if (n < 1 || n > PRINCIPAL_MAX)
        return 0;
    return sworn_utf8_check(s, n, 0, "principal") == 0;
}

/* --- loading
 * -------------------------------------------------------------------------------------- */

/*
 * Read the file at path: regular, not a link, 0600 or stricter, ours, small enough. OUT: *data
 * (a secret allocation of *cap bytes, NUL-terminated; free with secret_free(*data, *cap)), *len.
 */
static int read_vault_file(const char *path, char **data, size_t *len, size_t *cap_out)
{
    struct stat st;
    char *buf = NULL;
    size_t got = 0, want = 0, cap = 0;
    int fd = -1;

    /* The checked open (safefile.h): no link on the path, folders root's or ours, 0600. */
    SWORN_GUARD(
        sworn_safefile_open(path, SWORN_SAFEFILE_SECRET, SWORN_SAFEFILE_NOBODY, "vault", &fd, &st));
    SWORN_ENSURE(st.st_uid == geteuid(), SWORN_ERR_IO,
                 "vault %s is owned by uid %lu; it must be owned by uid %lu, which runs decisiond",
                 path, (unsigned long)st.st_uid, (unsigned long)geteuid());
    SWORN_ENSURE(st.st_size >= 0 && (uintmax_t)st.st_size <= SWORN_VAULT_FILE_MAX, SWORN_ERR_RANGE,
                 "vault %s is larger than %u bytes", path, SWORN_VAULT_FILE_MAX);
    /* Room for one byte more than fstat said, to notice a file that grows while being read. */
    want = (size_t)st.st_size;
    cap = want + 2;
    buf = (char *)secret_alloc(cap);
    SWORN_ENSURE(buf != NULL, SWORN_ERR_NOMEM, "no memory to read vault %s", path);
    for (;;) {
        ssize_t n = read(fd, buf + got, want + 1 - got);

        if (n < 0 && errno == EINTR)
            continue;
        SWORN_ENSURE(n >= 0, SWORN_ERR_IO, "cannot read vault %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        got += (size_t)n;
        SWORN_ENSURE(got <= want, SWORN_ERR_IO, "vault %s changed while it was read", path);
    }
    buf[got] = '\0';
    close(fd);
    *data = buf;
    *len = got;
    *cap_out = cap;
    return 0;
fail:
    secret_free((uint8_t *)buf, cap);
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Refuse any key of obj that is not in allowed (NULL-terminated). */
static int only_keys(const char *path, const char *where, json_object *obj,
                     const char *const *allowed)
{
    json_object_object_foreach(obj, key, val)
    {
        size_t i = 0;

        (void)val;
        while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
            i++;
        if (allowed[i] == NULL)
            return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: unknown key \"%.40s\"", path,
                                 where, key);
    }
    return 0;
}

/* A string member. OUT: *s, *n (json-c's storage). Absent: 0 with *s NULL, unless required. */
static int get_string(const char *path, const char *where, json_object *obj, const char *key,
                      int required, const char **s, size_t *n)
{
    json_object *v;

    *s = NULL;
    *n = 0;
    if (!json_object_object_get_ex(obj, key, &v)) {
        if (required)
            return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: missing \"%s\"", path, where,
                                 key);
        return 0;
    }
    if (!json_object_is_type(v, json_type_string))
        return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: \"%s\" must be a string", path, where,
                             key);
    *s = json_object_get_string(v);
    *n = (size_t)json_object_get_string_len(v);
    if (memchr(*s, 0, *n) != NULL)
        return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: \"%s\" contains NUL", path, where,
                             key);
    return 0;
}

static int parse_dest(const char *path, const char *where, json_object *o, struct dest *d)
{
    static const char *const keys[] = {"scheme", "host", "port", "path_prefix", NULL};
    const char *s;
    size_t n;
    uint8_t addr[16];
    json_object *pv;

    if (!json_object_is_type(o, json_type_object))
        return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: a destination must be an object",
                             path, where);
    SWORN_GUARD(only_keys(path, where, o, keys));
    SWORN_GUARD(get_string(path, where, o, "scheme", 1, &s, &n));
    if (strcasecmp(s, SWORN_RESOURCE_SCHEME_TCP) == 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: scheme tcp: a credential is never injected into a "
                             "raw TCP tunnel (it has no header or query to carry one)",
                             path, where);
    if (strcmp(s, "http") != 0 && strcmp(s, "https") != 0 && strcmp(s, "ws") != 0 &&
        strcmp(s, "wss") != 0)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: scheme must be http, https, ws or wss", path, where);
    memcpy(d->scheme, s, n + 1);

    SWORN_GUARD(get_string(path, where, o, "host", 1, &s, &n));
    if (n >= 2 && s[0] == '*' && s[1] == '.') {
        /* "*." + a host name of two or more labels, in its canonical form. */
        enum sworn_resource_host_kind kind;
        const char *why = NULL;

        d->wildcard = 1;
        memcpy(d->host, "*.", 2);
        if (sworn_resource_canon_host(s + 2, d->host + 2, &kind, addr, &why) != 0 ||
            kind != SWORN_RESOURCE_HOST_NAME || strchr(d->host + 2, '.') == NULL)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "vault %s: %s: a wildcard host is \"*.\" followed by a host "
                                 "name of at least two labels (\"*.example.com\")",
                                 path, where);
    } else {
        enum sworn_resource_host_kind kind;
        const char *why = NULL;

        if (sworn_resource_canon_host(s, d->host, &kind, addr, &why) != 0)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "vault %s: %s: host must be a host name, an IP literal or "
                                 "\"*.\" + a host name (%s)",
                                 path, where, why);
    }

    if (json_object_object_get_ex(o, "port", &pv)) {
        int64_t port;

        if (!json_object_is_type(pv, json_type_int))
            return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: port must be an integer", path,
                                 where);
        port = json_object_get_int64(pv);
        if (port < 1 || port > 65535)
            return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: port must be in 1..65535", path,
                                 where);
        d->port = (unsigned)port;
    } else {
        d->port = (strcmp(d->scheme, "https") == 0 || strcmp(d->scheme, "wss") == 0) ? 443 : 80;
    }

    SWORN_GUARD(get_string(path, where, o, "path_prefix", 0, &s, &n));
    if (s != NULL) {
        char canon[SWORN_RESOURCE_PATH_MAX + 1];
        size_t plen;
        const char *why = NULL;

        if (n < 1 || s[0] != '/' || n > PATH_PREFIX_MAX || memchr(s, '?', n) != NULL)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "vault %s: %s: path_prefix must start with \"/\", be printable, "
                                 "hold no '?' and be at most %u bytes",
                                 path, where, PATH_PREFIX_MAX);
        /* Stored canonical, as the request paths it is compared with. */
        if (sworn_resource_canon_path(s, canon, &plen, &why) != 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s: path_prefix is refused: %s", path,
                                 where, why);
        /* Matched against the request's path without its parameters, which has no ';'. */
        if (strchr(canon, ';') != NULL)
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "vault %s: %s: path_prefix is refused: a ';' (path parameters; "
                                 "the prefix is matched against the path without them)",
                                 path, where);
        d->path_prefix = strdup(canon);
        if (d->path_prefix == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    return 0;
fail:
    return -1;
}

static int parse_cred(const char *path, size_t index, json_object *o, struct sworn_vault_cred *c)
{
    static const char *const keys[] = {"id",   "symbolic",   "value",        "header", "query",
                                       "form", "principals", "destinations", NULL};
    char where[180];
    const char *s, *h, *q, *fm;
    size_t n, hn, qn, fn;
    json_object *arr;

    snprintf(where, sizeof(where), "credentials[%zu]", index);
    if (!json_object_is_type(o, json_type_object))
        return sworn_err_set(SWORN_ERR_FORMAT, "vault %s: %s must be an object", path, where);
    SWORN_GUARD(get_string(path, where, o, "id", 1, &s, &n));
    if (!id_ok(s, n))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: id must be 1..128 characters of [A-Za-z0-9._-]", path,
                             where);
    memcpy(c->id, s, n + 1);
    snprintf(where, sizeof(where), "credential \"%s\"", c->id);
    SWORN_GUARD(only_keys(path, where, o, keys));

    SWORN_GUARD(get_string(path, where, o, "symbolic", 1, &s, &n));
    if (!symbolic_ok(s, n))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: symbolic must be \"sym_\" and 32..251 characters of "
                             "[A-Za-z0-9_-]",
                             path, where);
    memcpy(c->symbolic, s, n + 1);
    sha256(c->symbolic, n, c->symbolic_sha256);

    SWORN_GUARD(get_string(path, where, o, "value", 1, &s, &n));
    if (!value_ok((const uint8_t *)s, n))
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: value must be 1..%u bytes of UTF-8 without control "
                             "characters",
                             path, where, SWORN_VAULT_VALUE_MAX);
    c->value = secret_alloc(n);
    if (c->value == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    memcpy(c->value, s, n);
    c->value_len = n;
    sha256(c->value, n, c->value_sha256);

    SWORN_GUARD(get_string(path, where, o, "header", 0, &h, &hn));
    SWORN_GUARD(get_string(path, where, o, "query", 0, &q, &qn));
    SWORN_GUARD(get_string(path, where, o, "form", 0, &fm, &fn));
    if ((h != NULL) + (q != NULL) + (fm != NULL) != 1)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: exactly one of \"header\", \"query\" and \"form\"",
                             path, where);
    if (fm != NULL) {
        if (fn < 1 || fn > SWORN_VAULT_NAME_MAX)
            goto bad_form;
        for (size_t i = 0; i < fn; i++)
            if (!is_unreserved(fm[i]))
                goto bad_form;
        memcpy(c->form, fm, fn + 1);
    } else if (h != NULL) {
        if (hn < 1 || hn > SWORN_VAULT_NAME_MAX)
            goto bad_header;
        for (size_t i = 0; i < hn; i++) {
            if (!is_tchar(h[i]))
                goto bad_header;
            c->header[i] = (h[i] >= 'A' && h[i] <= 'Z') ? (char)(h[i] - 'A' + 'a') : h[i];
        }
    } else {
        if (qn < 1 || qn > SWORN_VAULT_NAME_MAX)
            goto bad_query;
        for (size_t i = 0; i < qn; i++)
            if (!is_unreserved(q[i]))
                goto bad_query;
        memcpy(c->query, q, qn + 1);
    }

    if (!json_object_object_get_ex(o, "principals", &arr) ||
        !json_object_is_type(arr, json_type_array) || json_object_array_length(arr) < 1 ||
        json_object_array_length(arr) > MAX_PRINCIPALS)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: principals must be an array of 1..%u names", path,
                             where, MAX_PRINCIPALS);
    c->principals = calloc(json_object_array_length(arr), sizeof(*c->principals));
    if (c->principals == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *p = json_object_array_get_idx(arr, i);

        if (!json_object_is_type(p, json_type_string) ||
            !principal_ok(json_object_get_string(p), (size_t)json_object_get_string_len(p)) ||
            memchr(json_object_get_string(p), 0, (size_t)json_object_get_string_len(p)))
            return sworn_err_set(SWORN_ERR_FORMAT,
                                 "vault %s: %s: principals[%zu] must be \"*\" or a name of "
                                 "1..128 printable bytes",
                                 path, where, i);
        c->principals[i] = strdup(json_object_get_string(p));
        if (c->principals[i] == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        c->n_principals++;
    }

    if (!json_object_object_get_ex(o, "destinations", &arr) ||
        !json_object_is_type(arr, json_type_array) || json_object_array_length(arr) < 1 ||
        json_object_array_length(arr) > MAX_DESTINATIONS)
        return sworn_err_set(SWORN_ERR_FORMAT,
                             "vault %s: %s: destinations must be an array of 1..%u objects", path,
                             where, MAX_DESTINATIONS);
    c->dests = calloc(json_object_array_length(arr), sizeof(*c->dests));
    if (c->dests == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        char dw[240];

        snprintf(dw, sizeof(dw), "%s: destinations[%zu]", where, i);
        c->n_dests++;
        SWORN_GUARD(parse_dest(path, dw, json_object_array_get_idx(arr, i), &c->dests[i]));
    }
    return 0;
bad_header:
    return sworn_err_set(SWORN_ERR_FORMAT,
                         "vault %s: %s: header must be an HTTP field name of 1..%u characters",
                         path, where, SWORN_VAULT_NAME_MAX);
bad_query:
    return sworn_err_set(SWORN_ERR_FORMAT,
                         "vault %s: %s: query must be 1..%u characters of [A-Za-z0-9._~-]", path,
                         where, SWORN_VAULT_NAME_MAX);
bad_form:
    return sworn_err_set(SWORN_ERR_FORMAT,
                         "vault %s: %s: form must be 1..%u characters of [A-Za-z0-9._~-]", path,
                         where, SWORN_VAULT_NAME_MAX);
fail:
    return -1;
}

/* Overwrite every string json-c holds for the credentials' values (best effort; see vault.h). */
static void wipe_json_values(json_object *root)
{
    json_object *arr, *v;

    if (root == NULL || !json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "credentials", &arr) ||
        !json_object_is_type(arr, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *c = json_object_array_get_idx(arr, i);

        if (json_object_is_type(c, json_type_object) && json_object_object_get_ex(c, "value", &v) &&
            json_object_is_type(v, json_type_string))
            sworn_memzero((char *)json_object_get_string(v), (size_t)json_object_get_string_len(v));
    }
}

static int parse_vault(struct sworn_vault *v, const char *text, size_t len)
{
    static const char *const keys[] = {"version", "credentials", NULL};
    json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
    json_object *root = NULL, *ver, *arr;
    size_t n;

    SWORN_ENSURE(tok != NULL, SWORN_ERR_NOMEM, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    root = json_tokener_parse_ex(tok, text, (int)len);
    SWORN_ENSURE(
        root != NULL && json_tokener_get_error(tok) == json_tokener_success &&
            json_tokener_get_parse_end(tok) == len,
        SWORN_ERR_FORMAT, "vault %s: not one valid JSON document (%s, at byte %zu)", v->path,
        root == NULL ? json_tokener_error_desc(json_tokener_get_error(tok)) : "trailing bytes",
        json_tokener_get_parse_end(tok));
    SWORN_ENSURE(json_object_is_type(root, json_type_object), SWORN_ERR_FORMAT,
                 "vault %s: the top level must be an object", v->path);
    SWORN_GUARD(only_keys(v->path, "top level", root, keys));
    SWORN_ENSURE(json_object_object_get_ex(root, "version", &ver) &&
                     json_object_is_type(ver, json_type_int) && json_object_get_int64(ver) == 1,
                 SWORN_ERR_FORMAT, "vault %s: \"version\" must be 1", v->path);
    SWORN_ENSURE(json_object_object_get_ex(root, "credentials", &arr) &&
                     json_object_is_type(arr, json_type_array),
                 SWORN_ERR_FORMAT, "vault %s: \"credentials\" must be an array", v->path);
    n = json_object_array_length(arr);
    SWORN_ENSURE(n <= SWORN_VAULT_MAX_CREDENTIALS, SWORN_ERR_FORMAT,
                 "vault %s: more than %u credentials", v->path, SWORN_VAULT_MAX_CREDENTIALS);
    v->creds = calloc(n ? n : 1, sizeof(*v->creds));
    SWORN_ENSURE(v->creds != NULL, SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        v->n++;
        SWORN_GUARD(parse_cred(v->path, i, json_object_array_get_idx(arr, i), &v->creds[i]));
        for (size_t j = 0; j < i; j++) {
            SWORN_ENSURE(strcmp(v->creds[j].id, v->creds[i].id) != 0, SWORN_ERR_FORMAT,
                         "vault %s: credential id \"%s\" is used twice", v->path, v->creds[i].id);
            SWORN_ENSURE(strcmp(v->creds[j].symbolic, v->creds[i].symbolic) != 0, SWORN_ERR_FORMAT,
                         "vault %s: credentials \"%s\" and \"%s\" share a symbolic token", v->path,
                         v->creds[j].id, v->creds[i].id);
        }
    }
    wipe_json_values(root);
    json_object_put(root);
    json_tokener_free(tok);
    return 0;
fail:
    wipe_json_values(root);
    json_object_put(root);
    if (tok != NULL)
        json_tokener_free(tok);
    return -1;
}

int sworn_vault_load(const char *path, struct sworn_vault **out)
{
    struct sworn_vault *v = NULL;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc;

    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "vault: NULL argument");
    if (read_vault_file(path, &text, &len, &cap) < 0)
        return -1;
    v = calloc(1, sizeof(*v));
    if (v == NULL || (v->path = strdup(path)) == NULL) {
        free(v);
        secret_free((uint8_t *)text, cap);
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    if (pthread_mutex_init(&v->lock, NULL) != 0) {
        free(v->path);
        free(v);
        secret_free((uint8_t *)text, cap);
        return sworn_err_set(SWORN_ERR_NOMEM, "vault: cannot create a mutex");
    }
    if (pthread_mutex_init(&v->mint_lock, NULL) != 0) {
        pthread_mutex_destroy(&v->lock);
        free(v->path);
        free(v);
        secret_free((uint8_t *)text, cap);
        return sworn_err_set(SWORN_ERR_NOMEM, "vault: cannot create a mutex");
    }
    rc = parse_vault(v, text, len);
    secret_free((uint8_t *)text, cap);
    if (rc < 0) {
        sworn_vault_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

void sworn_vault_free(struct sworn_vault *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n; i++)
        cred_clear(&v->creds[i]);
    free(v->creds);
    free(v->path);
    pthread_mutex_destroy(&v->lock);
    pthread_mutex_destroy(&v->mint_lock);
    free(v);
}

/* --- matching
 * ------------------------------------------------------------------------------------- */

/* Does the canonical host of c match d (equal, or under the wildcard's parent)? */
static int host_matches(const struct dest *d, const struct sworn_resource *c)
{
    size_t hl = strlen(c->host), pl;
    const char *parent;

    if (!d->wildcard)
        return strcmp(d->host, c->host) == 0;
    if (c->host_kind != SWORN_RESOURCE_HOST_NAME)
        return 0;
    parent = d->host + 1; /* ".example.com" */
    pl = strlen(parent);
    /* One or more labels before the parent (a canonical name has no empty label). */
    return hl > pl && strcmp(c->host + hl - pl, parent) == 0;
}

/* Matching sees only the canonical form (resource.h) of the request's resource. */
static int dest_matches(const struct dest *d, const struct sworn_resource *c)
{
    if (strcmp(d->scheme, c->scheme) != 0 || d->port != c->port || !host_matches(d, c))
        return 0;
    return d->path_prefix == NULL || sworn_resource_under_prefix(c, d->path_prefix);
}

static const struct sworn_vault_cred *find(const struct sworn_vault *v, const char *id)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->creds[i].id, id) == 0)
            return &v->creds[i];
    return NULL;
}

/*
 * The credential a rule naming `id` releases when the agent presents the symbolic token whose
 * SHA-256 is token_sha256: `id` itself, or a credential minted from it by an OAuth exchange
 * ("<id>.oauth.<n>", sworn_vault_mint) whose symbolic token that is. The minted one has the
 * same scope, checked as usual. NULL when there is no such credential.
 */
static const struct sworn_vault_cred *find_for_token(const struct sworn_vault *v, const char *id,
                                                     const uint8_t *token_sha256)
{
    size_t id_len = strlen(id);
    const struct sworn_vault_cred *c = find(v, id);

    if (c == NULL || token_sha256 == NULL ||
        sworn_memequal_ct(token_sha256, c->symbolic_sha256, 32) == 0)
        return c;
    for (size_t i = 0; i < v->n; i++)
        if (strncmp(v->creds[i].id, id, id_len) == 0 &&
            strncmp(v->creds[i].id + id_len, ".oauth.", 7) == 0 &&
            sworn_memequal_ct(token_sha256, v->creds[i].symbolic_sha256, 32) == 0)
            return &v->creds[i];
    return c; /* the mismatch is reported below */
}

int sworn_vault_release(const struct sworn_vault *v, const char *id,
                        const Sworn__V1__AuthorizationRequest *req, struct sworn_vault_release *out,
                        const char **why)
{
    struct sworn_resource_canonical canon;

    if (v == NULL || id == NULL || req == NULL || out == NULL || why == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "vault: NULL argument");
    if (req->principal == NULL || req->principal->id == NULL || req->resource == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "vault: request without principal or resource");
    sworn_resource_canonicalise(req->resource, &canon);
    return sworn_vault_release_canonical(v, id, req, &canon, out, why);
}

int sworn_vault_release_canonical(const struct sworn_vault *v, const char *id,
                                  const Sworn__V1__AuthorizationRequest *req,
                                  const struct sworn_resource_canonical *canon,
                                  struct sworn_vault_release *out, const char **why)
{
    struct sworn_vault *mv = (struct sworn_vault *)v; /* the mutex only */
    const struct sworn_vault_cred *c;
    const char *reason = NULL;
    uint8_t *val = NULL;
    int ok = 0;
    const struct sworn_resource *res;

    if (v == NULL || id == NULL || req == NULL || canon == NULL || out == NULL || why == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "vault: NULL argument");
    if (req->principal == NULL || req->principal->id == NULL || req->resource == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "vault: request without principal or resource");
    if (!sworn_resource_canonical_is_of(canon, req->resource))
        return sworn_err_set(SWORN_ERR_ARG,
                             "vault: the canonical resource given is not that of this request");
    res = &canon->res;
    pthread_mutex_lock(&mv->lock);
    c = find_for_token(v, id,
                       req->context != NULL && req->context->credential_token_sha256.len == 32
                           ? req->context->credential_token_sha256.data
                           : NULL);
    if (c == NULL) {
        reason = "no such credential in the vault";
        goto done;
    }
    if (c->replacing || c->revoked) {
        reason = "the credential is being replaced by a newer token";
        goto done;
    }
    for (size_t i = 0; i < c->n_principals && !ok; i++)
        ok =
            strcmp(c->principals[i], "*") == 0 || strcmp(c->principals[i], req->principal->id) == 0;
    if (!ok) {
        reason = "the principal may not use this credential";
        goto done;
    }
    if (canon->rc != 0) {
        reason = canon->why; /* a static sentence of resource.c */
        goto done;
    }
    if (strcmp(res->scheme, SWORN_RESOURCE_SCHEME_TCP) == 0) {
        /* No destination can name tcp (refused at load); said here too, so that no future
         * destination form could ever put a secret into a raw tunnel. */
        reason = "a credential is never injected into a raw TCP tunnel (scheme tcp)";
        goto done;
    }
    ok = 0;
    for (size_t i = 0; i < c->n_dests && !ok; i++)
        ok = dest_matches(&c->dests[i], res);
    if (!ok) {
        reason = "the destination is outside the credential's scope";
        goto done;
    }
    if (req->context != NULL && req->context->credential_token_sha256.len != 0 &&
        (req->context->credential_token_sha256.len != 32 ||
         sworn_memequal_ct(req->context->credential_token_sha256.data, c->symbolic_sha256, 32) !=
             0)) {
        reason = "the presented token is not this credential's symbolic token";
        goto done;
    }
    val = secret_alloc(c->value_len);
    if (val == NULL) {
        pthread_mutex_unlock(&mv->lock);
        return sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
    }
    memcpy(val, c->value, c->value_len);
    memset(out, 0, sizeof(*out));
    memcpy(out->id, c->id, sizeof(out->id));
    memcpy(out->header_name, c->header, sizeof(out->header_name));
    memcpy(out->query_name, c->query, sizeof(out->query_name));
    memcpy(out->form_name, c->form, sizeof(out->form_name));
    out->value = val;
    out->value_len = c->value_len;
    memcpy(out->value_sha256, c->value_sha256, 32);
done:
    pthread_mutex_unlock(&mv->lock);
    if (reason != NULL) {
        *why = reason;
        return 1;
    }
    return 0;
}

void sworn_vault_release_wipe(struct sworn_vault_release *r)
{
    if (r == NULL)
        return;
    secret_free(r->value, r->value_len);
    sworn_memzero(r, sizeof(*r));
}

int sworn_vault_lookup_token(const struct sworn_vault *v, const uint8_t token_sha256[32],
                             char id_out[129])
{
    struct sworn_vault *mv = (struct sworn_vault *)v;
    size_t found = SIZE_MAX;

    if (v == NULL || token_sha256 == NULL || id_out == NULL)
        return 1;
    pthread_mutex_lock(&mv->lock);
    /* Compare with every credential, so the time says nothing about which one matched. */
    for (size_t i = 0; i < v->n; i++)
        if (sworn_memequal_ct(v->creds[i].symbolic_sha256, token_sha256, 32) == 0 &&
            found == SIZE_MAX && !v->creds[i].replacing && !v->creds[i].revoked)
            found = i;
    if (found != SIZE_MAX)
        memcpy(id_out, v->creds[found].id, SWORN_VAULT_ID_MAX + 1);
    pthread_mutex_unlock(&mv->lock);
    return found == SIZE_MAX ? 1 : 0;
}

/* --- writing back
 * ---------------------------------------------------------------------------------- */

static json_object *dest_json(const struct dest *d)
{
    json_object *o = json_object_new_object();

    if (o == NULL)
        return NULL;
    json_object_object_add(o, "scheme", json_object_new_string(d->scheme));
    json_object_object_add(o, "host", json_object_new_string(d->host));
    json_object_object_add(o, "port", json_object_new_int((int)d->port));
    if (d->path_prefix != NULL)
        json_object_object_add(o, "path_prefix", json_object_new_string(d->path_prefix));
    return o;
}

static json_object *cred_json(const struct sworn_vault_cred *c)
{
    json_object *o = json_object_new_object(), *p = json_object_new_array(),
                *d = json_object_new_array();

    if (o == NULL || p == NULL || d == NULL) {
        json_object_put(o);
        json_object_put(p);
        json_object_put(d);
        return NULL;
    }
    json_object_object_add(o, "id", json_object_new_string(c->id));
    json_object_object_add(o, "symbolic", json_object_new_string(c->symbolic));
    json_object_object_add(o, "value",
                           json_object_new_string_len((const char *)c->value, (int)c->value_len));
    if (c->header[0] != '\0')
        json_object_object_add(o, "header", json_object_new_string(c->header));
    else if (c->form[0] != '\0')
        json_object_object_add(o, "form", json_object_new_string(c->form));
    else
        json_object_object_add(o, "query", json_object_new_string(c->query));
    for (size_t i = 0; i < c->n_principals; i++)
        json_object_array_add(p, json_object_new_string(c->principals[i]));
    json_object_object_add(o, "principals", p);
    for (size_t i = 0; i < c->n_dests; i++)
        json_object_array_add(d, dest_json(&c->dests[i]));
    json_object_object_add(o, "destinations", d);
    return o;
}

/* Write creds[0..n) to path (0600, atomically). The JSON text and tree are wiped after. */
static int write_vault(const char *path, const struct sworn_vault_cred *creds, size_t n)
{
    json_object *root = json_object_new_object(), *arr = json_object_new_array();
    const char *text;
    size_t len;
    int rc = -1;

    if (root == NULL || arr == NULL) {
        json_object_put(root);
        json_object_put(arr);
        return sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
    }
    json_object_object_add(root, "version", json_object_new_int(1));
    json_object_object_add(root, "credentials", arr);
    for (size_t i = 0; i < n; i++) {
        json_object *c = cred_json(&creds[i]);

        if (c == NULL) {
            sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
            goto out;
        }
        json_object_array_add(arr, c);
    }
    text = json_object_to_json_string_ext(root,
                                          JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (text == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
        goto out;
    }
    len = strlen(text);
    if (len > SWORN_VAULT_FILE_MAX) {
        sworn_memzero((char *)text, len);
        sworn_err_set(SWORN_ERR_RANGE, "vault %s: would grow beyond %u bytes", path,
                      SWORN_VAULT_FILE_MAX);
        goto out;
    }
    rc = sworn_file_replace(path, text, len, 0600);
    sworn_memzero((char *)text, len);
out:
    wipe_json_values(root);
    json_object_put(root);
    return rc;
}

/* "sym_" + 43 base64url characters of 32 random bytes. */
static int mint_symbolic(char out[SWORN_VAULT_MINTED_LEN + 1])
{
    uint8_t rnd[32];
    char b64[SWORN_BASE64_LEN(32) + 1];

    if (RAND_bytes(rnd, sizeof(rnd)) != 1)
        return sworn_err_set(SWORN_ERR_CRYPTO, "vault: RAND_bytes failed");
    if (sworn_base64_encode(rnd, sizeof(rnd), b64, sizeof(b64)) != 44)
        return sworn_err_set(SWORN_ERR_CRYPTO, "vault: base64 failed");
    sworn_memzero(rnd, sizeof(rnd));
    memcpy(out, "sym_", 4);
    for (size_t i = 0; i < 43; i++)
        out[4 + i] = b64[i] == '+' ? '-' : (b64[i] == '/' ? '_' : b64[i]);
    out[SWORN_VAULT_MINTED_LEN] = '\0';
    return 0;
}

/* Is (header, form) a token's place: both NULL, or exactly one valid name? */
static int place_ok(const char *header, const char *form)
{
    const char *p = header != NULL ? header : form;
    size_t n;

    if (header == NULL && form == NULL)
        return 1;
    if (header != NULL && form != NULL)
        return 0;
    n = strlen(p);
    if (n < 1 || n > SWORN_VAULT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (header != NULL ? !is_tchar(p[i]) || (p[i] >= 'A' && p[i] <= 'Z') : !is_unreserved(p[i]))
            return 0;
    return 1;
}

/* Deep-copy the scope of from into c. */
static int copy_scope(const struct sworn_vault_cred *from, struct sworn_vault_cred *c)
{
    memcpy(c->header, from->header, sizeof(c->header));
    memcpy(c->query, from->query, sizeof(c->query));
    memcpy(c->form, from->form, sizeof(c->form));
    c->principals = calloc(from->n_principals, sizeof(*c->principals));
    c->dests = calloc(from->n_dests, sizeof(*c->dests));
    if (c->principals == NULL || c->dests == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
    for (size_t i = 0; i < from->n_principals; i++) {
        c->principals[i] = strdup(from->principals[i]);
        if (c->principals[i] == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
        c->n_principals++;
    }
    for (size_t i = 0; i < from->n_dests; i++) {
        c->dests[i] = from->dests[i];
        c->dests[i].path_prefix = NULL;
        c->n_dests++;
        if (from->dests[i].path_prefix != NULL) {
            c->dests[i].path_prefix = strdup(from->dests[i].path_prefix);
            if (c->dests[i].path_prefix == NULL)
                return sworn_err_set(SWORN_ERR_NOMEM, "vault: out of memory");
        }
    }
    return 0;
}

/*
 * The root of id's family: id with every trailing ".oauth.<digits>" taken off. OUT: its length
 * (a prefix of id).
 */
static size_t root_len(const char *id)
{
    size_t n = strlen(id);

    for (;;) {
        size_t d = n;

        while (d > 0 && id[d - 1] >= '0' && id[d - 1] <= '9')
            d--;
        if (d == n || d < 7 || strncmp(id + d - 7, ".oauth.", 7) != 0 || d - 7 == 0)
            return n;
        n = d - 7;
    }
}

/* Is id a minted member of the family whose root is root[0..rlen)? */
static int in_family(const char *id, const char *root, size_t rlen)
{
    return strlen(id) > rlen && strncmp(id, root, rlen) == 0 && root_len(id) == rlen;
}

/* Is id used by a credential of the vault or by one of the first k prepared ones? */
static int id_taken(const struct sworn_vault *v, const struct sworn_vault_mint *m, size_t k,
                    const char *id)
{
    if (find(v, id) != NULL)
        return 1;
    for (size_t i = 0; i < k; i++)
        if (strcmp(m->minted[i].id, id) == 0)
            return 1;
    return 0;
}

/* Prepare the new credential c for token t, the k-th of mint m, from credential from. */
static int prepare_cred(struct sworn_vault *v, struct sworn_vault_mint *m, size_t k,
                        const struct sworn_vault_cred *from, const struct sworn_vault_token *t,
                        struct sworn_vault_cred *c)
{
    /* Named after the family's root, not after `from`: a refresh (a mint from a minted
     * credential) once appended ".oauth.<n>" to the refreshed id, so a chain grew 8 bytes a
     * refresh and the 16th refresh of a session failed at the 128-byte id bound. */
    int rlen = (int)root_len(from->id);

    for (unsigned long n = 1;; n++) {
        int w = snprintf(c->id, sizeof(c->id), "%.*s.oauth.%lu", rlen, from->id, n);

        SWORN_ENSURE(w > 0 && (size_t)w <= SWORN_VAULT_ID_MAX, SWORN_ERR_RANGE,
                     "vault: id \"%.*s.oauth.%lu\" would be longer than %u bytes", rlen, from->id,
                     n, SWORN_VAULT_ID_MAX);
        if (!id_taken(v, m, k, c->id))
            break;
    }
    for (;;) {
        size_t i = 0, j = 0;

        SWORN_GUARD(mint_symbolic(c->symbolic));
        /* A collision of 256 random bits does not happen; checking costs nothing. */
        while (i < v->n && strcmp(v->creds[i].symbolic, c->symbolic) != 0)
            i++;
        while (j < k && strcmp(m->minted[j].symbolic, c->symbolic) != 0)
            j++;
        if (i == v->n && j == k)
            break;
    }
    sha256(c->symbolic, strlen(c->symbolic), c->symbolic_sha256);
    c->value = secret_alloc(t->len);
    SWORN_ENSURE(c->value != NULL, SWORN_ERR_NOMEM, "vault: out of memory");
    memcpy(c->value, t->value, t->len);
    c->value_len = t->len;
    sha256(c->value, t->len, c->value_sha256);
    SWORN_GUARD(copy_scope(from, c));
    if (t->header != NULL || t->form != NULL) {
        /* The token's own place (checked by sworn_vault_mint_begin), not the parent's. */
        memset(c->header, 0, sizeof(c->header));
        memset(c->query, 0, sizeof(c->query));
        memset(c->form, 0, sizeof(c->form));
        snprintf(t->header != NULL ? c->header : c->form, sizeof(c->header), "%s",
                 t->header != NULL ? t->header : t->form);
    }
    memcpy(m->minted[k].id, c->id, sizeof(m->minted[k].id));
    memcpy(m->minted[k].symbolic, c->symbolic, SWORN_VAULT_MINTED_LEN + 1);
    memcpy(m->minted[k].value_sha256, c->value_sha256, 32);
    memcpy(m->minted[k].symbolic_sha256, c->symbolic_sha256, 32);
    return 0;
fail:
    return -1;
}

/* Wipe the prepared credentials of m (the tail of m->next) and free m->next. */
static void drop_prepared(struct sworn_vault_mint *m)
{
    if (m->next != NULL)
        for (size_t i = m->n_next - m->n; i < m->n_next; i++)
            cred_clear(&m->next[i]);
    free(m->next);
    m->next = NULL;
}

/* Mark (or unmark) the credentials m replaces, under the release lock: the mint lock, held by
 * m, keeps v->creds and the indexes in m->replaced_at as they were at mint_begin. */
static void set_replacing(struct sworn_vault *v, const struct sworn_vault_mint *m, int on)
{
    pthread_mutex_lock(&v->lock);
    for (size_t r = 0; r < m->n_replaced; r++)
        v->creds[m->replaced_at[r]].replacing = on;
    pthread_mutex_unlock(&v->lock);
}

int sworn_vault_mint_begin(struct sworn_vault *v, const char *from_id,
                           const struct sworn_vault_token *tokens, size_t n,
                           struct sworn_vault_mint *m)
{
    const struct sworn_vault_cred *from;
    size_t rlen, members = 0, excess, keep = 0;
    int locked = 0;

    SWORN_ENSURE(m != NULL, SWORN_ERR_ARG, "vault: NULL argument");
    memset(m, 0, sizeof(*m));
    SWORN_ENSURE(v != NULL && from_id != NULL && tokens != NULL, SWORN_ERR_ARG,
                 "vault: NULL argument");
    SWORN_ENSURE(n >= 1 && n <= SWORN_VAULT_MINT_BATCH_MAX, SWORN_ERR_RANGE,
                 "vault: %zu tokens to store, not 1..%u", n, SWORN_VAULT_MINT_BATCH_MAX);
    for (size_t i = 0; i < n; i++)
        SWORN_ENSURE(tokens[i].value != NULL && value_ok(tokens[i].value, tokens[i].len),
                     SWORN_ERR_FORMAT,
                     "vault: the token to store must be 1..%u bytes of UTF-8 without control "
                     "characters",
                     SWORN_VAULT_VALUE_MAX);
    for (size_t i = 0; i < n; i++)
        SWORN_ENSURE(place_ok(tokens[i].header, tokens[i].form), SWORN_ERR_FORMAT,
                     "vault: a token's place must be one header name or one form parameter name");
    /* The mint lock alone: only its holder changes creds, so reading them needs no other. */
    pthread_mutex_lock(&v->mint_lock);
    locked = 1;
    m->v = v;
    from = find(v, from_id);
    SWORN_ENSURE(from != NULL, SWORN_ERR_NOTFOUND, "vault: no credential \"%.128s\"", from_id);
    rlen = root_len(from->id);
    for (size_t i = 0; i < v->n; i++)
        members += in_family(v->creds[i].id, from->id, rlen);
    excess = members + n > SWORN_VAULT_MINTED_MAX ? members + n - SWORN_VAULT_MINTED_MAX : 0;
    for (size_t i = 0;
         i < v->n && m->n_replaced < excess && m->n_replaced < SWORN_VAULT_REPLACED_MAX; i++)
        if (in_family(v->creds[i].id, from->id, rlen)) {
            memcpy(m->replaced[m->n_replaced], v->creds[i].id, SWORN_VAULT_ID_MAX + 1);
            m->replaced_at[m->n_replaced++] = i;
        }
    m->n_next = v->n - m->n_replaced + n;
    SWORN_ENSURE(m->n_next <= SWORN_VAULT_MAX_CREDENTIALS, SWORN_ERR_RANGE,
                 "vault: already %u credentials", SWORN_VAULT_MAX_CREDENTIALS);
    m->next = calloc(m->n_next, sizeof(*m->next));
    SWORN_ENSURE(m->next != NULL, SWORN_ERR_NOMEM, "vault: out of memory");
    /* The credentials that stay, in their order (shallow copies: they own nothing yet). */
    for (size_t i = 0, r = 0; i < v->n; i++) {
        if (r < m->n_replaced && m->replaced_at[r] == i) {
            r++;
            continue;
        }
        m->next[keep++] = v->creds[i];
    }
    /* Then the new ones, newest last; m->n counts those prepared, for drop_prepared. */
    for (size_t k = 0; k < n; k++) {
        m->n = k + 1;
        if (prepare_cred(v, m, k, from, &tokens[k], &m->next[keep + k]) < 0)
            goto fail;
    }
    /* What this mint replaces releases nothing from now on, before the CredentialsMinted entry
     * that names it is recorded: else a release during the entry's append and the file's write
     * would be recorded after the entry that says the credential was replaced. An abort gives
     * them back. */
    set_replacing(v, m, 1);
    return 0;
fail:
    if (m != NULL) {
        if (m->next != NULL)
            m->n_next = keep + m->n; /* only the prepared ones are wiped */
        drop_prepared(m);
        sworn_memzero(m, sizeof(*m));
    }
    if (locked)
        pthread_mutex_unlock(&v->mint_lock);
    return -1;
}

int sworn_vault_mint_commit(struct sworn_vault_mint *m)
{
    struct sworn_vault *v;
    struct sworn_vault_cred *old;

    SWORN_ENSURE(m != NULL && m->v != NULL && m->next != NULL, SWORN_ERR_ARG,
                 "vault: no mint in progress");
    v = m->v;
    if (v->write_hook != NULL)
        v->write_hook(v->write_hook_arg);
    /* The file first, under the mint lock only: a release goes on meanwhile with the old set. */
    if (write_vault(v->path, m->next, m->n_next) < 0) {
        /* The CredentialsMinted entry before the commit already names the replaced credentials:
         * they stay refused, or a later release would contradict the record (sworn-verify,
         * released-after-replaced). The vault file still holds them, so a restart gives them
         * back. */
        pthread_mutex_lock(&v->lock);
        for (size_t r = 0; r < m->n_replaced; r++)
            v->creds[m->replaced_at[r]].revoked = 1;
        pthread_mutex_unlock(&v->lock);
        sworn_vault_mint_abort(m);
        return -1;
    }
    pthread_mutex_lock(&v->lock);
    old = v->creds;
    v->creds = m->next;
    v->n = m->n_next;
    pthread_mutex_unlock(&v->lock);
    /* The replaced credentials are no longer reachable: wipe them, then the old array. */
    for (size_t r = 0; r < m->n_replaced; r++)
        cred_clear(&old[m->replaced_at[r]]);
    free(old);
    m->next = NULL;
    m->v = NULL;
    pthread_mutex_unlock(&v->mint_lock);
    return 0;
fail:
    return -1;
}

void sworn_vault_mint_abort(struct sworn_vault_mint *m)
{
    struct sworn_vault *v;

    if (m == NULL || m->v == NULL)
        return;
    v = m->v;
    set_replacing(v, m, 0);
    drop_prepared(m);
    m->v = NULL;
    pthread_mutex_unlock(&v->mint_lock);
}

int sworn_vault_mint(struct sworn_vault *v, const char *from_id, const uint8_t *real,
                     size_t real_len, char new_id[129], char symbolic[64])
{
    struct sworn_vault_mint m;
    struct sworn_vault_token t = {real, real_len, NULL, NULL};

    SWORN_ENSURE(new_id != NULL && symbolic != NULL, SWORN_ERR_ARG, "vault: NULL argument");
    SWORN_GUARD(sworn_vault_mint_begin(v, from_id, &t, 1, &m));
    if (sworn_vault_mint_commit(&m) < 0) {
        sworn_memzero(&m, sizeof(m));
        return -1;
    }
    memcpy(new_id, m.minted[0].id, SWORN_VAULT_ID_MAX + 1);
    memcpy(symbolic, m.minted[0].symbolic, SWORN_VAULT_MINTED_LEN + 1);
    sworn_memzero(&m, sizeof(m));
    return 0;
fail:
    return -1;
}

void sworn_vault_set_write_hook(struct sworn_vault *v, void (*hook)(void *arg), void *arg)
{
    if (v == NULL)
        return;
    v->write_hook = hook;
    v->write_hook_arg = arg;
}
