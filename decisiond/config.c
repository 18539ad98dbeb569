/*
 * config.c -- sworn-decisiond's configuration (see config.h and docs/configuration.md).
 *
 * The loader walks the YAML tree section by section. Each section first refuses unknown keys
 * (sworn_yaml_only_keys), then reads its keys with the typed getters, so every error names the
 * node's line and column. Defaults are set before reading, so an absent optional key keeps its
 * default. The structure is filled in a fresh allocation and handed out only when everything
 * passed: a failed load leaves nothing behind.
 */
#define _DEFAULT_SOURCE /* realpath, S_ISVTX */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "encoding.h"
#include "note.h"
#include "err.h"
#include "safefile.h"
#include "secretfile.h"
#include "utf8.h"
#include "wipe.h"
#include "yamldoc.h"

#define DEFAULT_CHECKPOINT_MS 1000u
#define DEFAULT_SIGNER_TIMEOUT_MS 2000u
#define DEFAULT_QUOTE_MIN_MS 1000u
#define DEFAULT_ESCALATION_MS 300000u
#define DEFAULT_MAX_PENDING 1000u
#define DEFAULT_WORKERS 4u
#define SPKI_FILE_MAX 8192u /* hex of a 1024-byte SPKI, with room for white space */
#define PIN_FILE_MAX 256u   /* as the PKCS#11 signer reads it */
#define KEY_FILE_MAX 65536u /* a development PEM key file */
#define TPM_URI_PREFIX "tpm:handle=0x"
#define PKCS11_URI_MAX 1024u /* SWORN_PKCS11_URI_MAX (signer/pkcs11uri.h) */

enum key_kind { KEY_PKCS11, KEY_TPM, KEY_FILE };

struct ctx {
    const struct sworn_yaml_doc *d;
    char *dir; /* the absolute folder of the configuration file */
    struct sworn_dconfig *c;
};

/* --- paths ------------------------------------------------------------------------------------ */

/*
 * Make text an absolute, lexically clean path: relative to dir unless it starts with '/'; empty
 * and "." segments and repeated slashes dropped; ".." removes the segment before it (at the root
 * it stays at the root). Symbolic links are not resolved: the file may not exist yet (the
 * database), and the operator's spelling is what is logged. Returns a new string or NULL.
 */
static char *clean_path(const char *dir, const char *text)
{
    size_t dlen = text[0] == '/' ? 0 : strlen(dir);
    size_t cap = dlen + 1 + strlen(text) + 2;
    char *joined = malloc(cap), *out = malloc(cap);
    size_t o = 0;
    const char *p;

    if (joined == NULL || out == NULL) {
        free(joined);
        free(out);
        return NULL;
    }
    snprintf(joined, cap, "%s/%s", text[0] == '/' ? "" : dir, text);
    p = joined;
    while (*p != '\0') {
        const char *seg;
        size_t n;

        while (*p == '/')
            p++;
        seg = p;
        while (*p != '\0' && *p != '/')
            p++;
        n = (size_t)(p - seg);
        if (n == 0 || (n == 1 && seg[0] == '.'))
            continue;
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--; /* the slash before the removed segment */
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, seg, n);
        o += n;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = '\0';
    free(joined);
    return out;
}

/* --- typed reads of one key ---------------------------------------------------------------------
 */

/* A required key is missing: name it and the section (at the section's position). */
static int missing(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                   const char *key)
{
    return sworn_yaml_error(x->d, map, "missing required key \"%s%s%s\"", section,
                            section[0] ? "." : "", key);
}

/* A non-empty string without NUL. OUT: *out, a copy. Absent: 0 with *out NULL, unless required. */
static int get_str(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                   const char *key, int required, char **out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    const char *s;

    *out = NULL;
    if (n == NULL)
        return required ? missing(x, map, section, key) : 0;
    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    if (s[0] == '\0')
        return sworn_yaml_error(x->d, n, "%s must not be empty", key);
    if (sworn_utf8_check(s, strlen(s), 0, key) < 0)
        return sworn_yaml_error(x->d, n, "%s must be one line of printable text", key);
    *out = strdup(s);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
}

static int path_of(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                   char **out)
{
    const char *s;

    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    if (s[0] == '\0')
        return sworn_yaml_error(x->d, n, "%s: empty path", key);
    /* YAML's nulls: someone meaning "none" must leave the key out, not get a file named null. */
    if (strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return sworn_yaml_error(x->d, n,
                                "%s: \"%s\" is not a path (leave the key out for none; write "
                                "./%s for a file of that name)",
                                key, s, s);
    if (sworn_utf8_check(s, strlen(s), 0, key) < 0)
        return sworn_yaml_error(x->d, n, "%s: a path must be printable text", key);
    *out = clean_path(x->dir, s);
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    if (strlen(*out) >= SWORN_DCONFIG_PATH_MAX) {
        free(*out);
        *out = NULL;
        return sworn_yaml_error(x->d, n, "%s: path longer than %u bytes", key,
                                SWORN_DCONFIG_PATH_MAX - 1);
    }
    return 0;
}

/* A path, made absolute against the configuration's folder. */
static int get_path(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                    const char *key, int required, char **out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);

    *out = NULL;
    if (n == NULL)
        return required ? missing(x, map, section, key) : 0;
    return path_of(x, n, key, out);
}

static int get_duration(const struct ctx *x, const struct sworn_yaml_node *map, const char *key,
                        uint64_t min, uint64_t max, uint64_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    uint64_t v;

    if (n == NULL)
        return 0; /* keep the default */
    if (sworn_yaml_duration_ms(x->d, n, &v) < 0)
        return -1;
    if (v < min || v > max)
        return sworn_yaml_error(x->d, n, "%s must be between %llums and %llums", key,
                                (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

static int get_u32(const struct ctx *x, const struct sworn_yaml_node *map, const char *key,
                   uint32_t min, uint32_t max, uint32_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    uint64_t v;

    if (n == NULL)
        return 0;
    if (sworn_yaml_u64(x->d, n, min, max, &v) < 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A user name that must exist now (getpwnam). */
static int get_user(const struct ctx *x, const struct sworn_yaml_node *map, const char *key,
                    char **out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);

    if (get_str(x, map, "", key, 0, out) < 0)
        return -1;
    if (*out == NULL)
        return 0;
    errno = 0;
    if (getpwnam(*out) == NULL) {
        free(*out);
        *out = NULL;
        return sworn_yaml_error(x->d, n, "%s: no such user", key);
    }
    return 0;
}

/* A section: a mapping with only the allowed keys. Absent: 0 with *out NULL, unless required. */
static int section(const struct ctx *x, const char *name, int required, const char *const *allowed,
                   const struct sworn_yaml_node **out)
{
    const struct sworn_yaml_node *root = sworn_yaml_root(x->d);

    *out = sworn_yaml_get(root, name);
    if (*out == NULL)
        return required ? missing(x, root, "", name) : 0;
    return sworn_yaml_only_keys(x->d, *out, allowed);
}

/* A sequence node of at most max items (an absent one is empty). */
static int need_seq(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                    size_t max)
{
    if (sworn_yaml_kind(n) != SWORN_YAML_SEQ)
        return sworn_yaml_error(x->d, n, "%s must be a list ([a, b] or one \"- item\" per line)",
                                key);
    if (sworn_yaml_len(n) > max)
        return sworn_yaml_error(x->d, n, "%s: more than %zu items", key, max);
    return 0;
}

/* --- sections -------------------------------------------------------------------------------- */

static int read_log(struct ctx *x)
{
    static const char *const keys[] = {"database", "origin", "checkpoint_interval", "export_dir",
                                       NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_dconfig *c = x->c;

    SWORN_GUARD(section(x, "log", 1, keys, &m));
    SWORN_GUARD(get_path(x, m, "log", "database", 1, &c->log_db));
    SWORN_GUARD(get_str(x, m, "log", "origin", 1, &c->origin));
    n = sworn_yaml_get(m, "origin");
    if (strlen(c->origin) > SWORN_DCONFIG_ORIGIN_MAX)
        return sworn_yaml_error(x->d, n, "origin longer than %d bytes", SWORN_DCONFIG_ORIGIN_MAX);
    SWORN_GUARD(
        get_duration(x, m, "checkpoint_interval", 10, 86400000, &c->checkpoint_interval_ms));
    SWORN_GUARD(get_path(x, m, "log", "export_dir", 0, &c->export_dir));
    return 0;
fail:
    return -1;
}

static int all_hex(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (sworn_hex_digit(s[i]) < 0)
            return 0;
    return 1;
}

/*
 * pinned_spki: hex digits only means the SPKI itself in hex; anything else is a path to a file
 * holding the hex (white space around it allowed) or the DER. Either way it must be one DER
 * SubjectPublicKeyInfo that OpenSSL parses, with nothing after it.
 */
static int read_spki(struct ctx *x, const struct sworn_yaml_node *n)
{
    const char *s;
    char *path = NULL, *file = NULL;
    const char *txt;
    size_t file_len = 0, len;
    uint8_t der[SWORN_DCONFIG_SPKI_MAX];
    size_t der_len = 0;
    const unsigned char *p;
    EVP_PKEY *pk = NULL;
    int rc = -1;

    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    if (s[0] == '\0')
        return sworn_yaml_error(x->d, n, "pinned_spki must not be empty");
    if (all_hex(s, strlen(s))) {
        txt = s;
        len = strlen(s);
    } else {
        if (path_of(x, n, "pinned_spki", &path) < 0)
            return -1;
        /* The checked open (safefile.h): the pin decides which key the signer may use. */
        if (sworn_safefile_read(path, 0, SWORN_SAFEFILE_NOBODY, "pinned_spki file", SPKI_FILE_MAX,
                                &file, &file_len) < 0) {
            rc = sworn_yaml_error(x->d, n, "pinned_spki: %s", sworn_err_msg());
            goto out;
        }
        txt = file;
        len = file_len;
        while (len > 0 && (txt[len - 1] == '\n' || txt[len - 1] == '\r' || txt[len - 1] == ' ' ||
                           txt[len - 1] == '\t'))
            len--;
        while (len > 0 && (txt[0] == ' ' || txt[0] == '\t' || txt[0] == '\n')) {
            txt++;
            len--;
        }
        if (!all_hex(txt, len)) {
            /* DER. */
            if (file_len == 0 || file_len > sizeof(der)) {
                rc = sworn_yaml_error(x->d, n,
                                      "pinned_spki: %s is neither hex nor a DER SPKI "
                                      "of at most %d bytes",
                                      path, SWORN_DCONFIG_SPKI_MAX);
                goto out;
            }
            memcpy(der, file, file_len);
            der_len = file_len;
            txt = NULL;
        }
    }
    if (txt != NULL) {
        if (len % 2 != 0 || len / 2 > sizeof(der)) {
            rc = sworn_yaml_error(x->d, n,
                                  "pinned_spki: an even number of hex digits, at most %d bytes",
                                  SWORN_DCONFIG_SPKI_MAX);
            goto out;
        }
        if (sworn_hex_decode(txt, len, der, len / 2) < 0) {
            rc = sworn_yaml_error(x->d, n, "pinned_spki: bad hex");
            goto out;
        }
        der_len = len / 2;
    }
    p = der;
    pk = d2i_PUBKEY(NULL, &p, (long)der_len);
    if (pk == NULL || p != der + der_len) {
        rc = sworn_yaml_error(x->d, n, "pinned_spki is not a DER SubjectPublicKeyInfo");
        goto out;
    }
    x->c->signer_spki_hex = malloc(der_len * 2 + 1);
    if (x->c->signer_spki_hex == NULL) {
        rc = sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        goto out;
    }
    rc = sworn_hex_encode(der, der_len, x->c->signer_spki_hex, der_len * 2 + 1);
out:
    EVP_PKEY_free(pk);
    free(path);
    free(file);
    return rc;
}

static int tpm_handle_ok(const char *uri)
{
    const char *hex = uri + strlen(TPM_URI_PREFIX);

    if (strncmp(uri, TPM_URI_PREFIX, strlen(TPM_URI_PREFIX)) != 0 || strlen(hex) != 8)
        return 0;
    if (!all_hex(hex, 8))
        return 0;
    /* A persistent handle: 0x81000000..0x81ffffff. */
    return hex[0] == '8' && hex[1] == '1';
}

static int read_signer(struct ctx *x)
{
    static const char *const keys[] = {"key",  "module",  "pin_file", "tcti", "pinned_spki",
                                       "user", "timeout", "program",  NULL};
    const struct sworn_yaml_node *m, *kn, *n;
    struct sworn_dconfig *c = x->c;
    enum key_kind kind;
    const char *key;

    SWORN_GUARD(section(x, "signer", 1, keys, &m));
    kn = sworn_yaml_get(m, "key");
    if (kn == NULL)
        return missing(x, m, "signer", "key");
    SWORN_GUARD(sworn_yaml_str(x->d, kn, &key));
    if (key[0] == '\0')
        return sworn_yaml_error(x->d, kn, "key must not be empty");
    if (strncmp(key, "pkcs11:", 7) == 0) {
        kind = KEY_PKCS11;
        if (strlen(key) > PKCS11_URI_MAX || sworn_utf8_check(key, strlen(key), 0, "key") < 0)
            return sworn_yaml_error(x->d, kn,
                                    "key: a pkcs11: URI is printable and at most %u "
                                    "bytes",
                                    PKCS11_URI_MAX);
        c->signer_key = strdup(key);
    } else if (strncmp(key, "tpm:", 4) == 0) {
        kind = KEY_TPM;
        if (!tpm_handle_ok(key))
            return sworn_yaml_error(x->d, kn,
                                    "key: want tpm:handle=0x81xxxxxx (a persistent "
                                    "handle, eight hex digits)");
        c->signer_key = strdup(key);
    } else {
        char *abs = NULL;
        const char *p = strncmp(key, "file:", 5) == 0 ? key + 5 : key;

        kind = KEY_FILE;
        if (p[0] == '\0')
            return sworn_yaml_error(x->d, kn, "key: empty path");
        if (sworn_utf8_check(p, strlen(p), 0, "key") < 0)
            return sworn_yaml_error(x->d, kn, "key: a path must be printable text");
        abs = clean_path(x->dir, p);
        if (abs == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        if (strlen(abs) >= SWORN_DCONFIG_PATH_MAX) {
            free(abs);
            return sworn_yaml_error(x->d, kn, "key: path too long");
        }
        c->signer_key = malloc(strlen(abs) + 6);
        if (c->signer_key != NULL)
            snprintf(c->signer_key, strlen(abs) + 6, "file:%s", abs);
        free(abs);
    }
    if (c->signer_key == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");

    /* Settings of one kind of key are refused for another: they would be silently unused. */
    n = sworn_yaml_get(m, "module");
    if (n != NULL && kind != KEY_PKCS11)
        return sworn_yaml_error(x->d, n, "module applies only to pkcs11: keys");
    SWORN_GUARD(get_path(x, m, "signer", "module", kind == KEY_PKCS11, &c->signer_module));
    n = sworn_yaml_get(m, "pin_file");
    if (n != NULL && kind != KEY_PKCS11)
        return sworn_yaml_error(x->d, n, "pin_file applies only to pkcs11: keys");
    SWORN_GUARD(get_path(x, m, "signer", "pin_file", kind == KEY_PKCS11, &c->signer_pin_file));
    n = sworn_yaml_get(m, "tcti");
    if (n != NULL && kind != KEY_TPM)
        return sworn_yaml_error(x->d, n, "tcti applies only to tpm: keys");
    SWORN_GUARD(get_str(x, m, "signer", "tcti", 0, &c->signer_tcti));
    n = sworn_yaml_get(m, "pinned_spki");
    if (n == NULL && kind != KEY_FILE)
        return sworn_yaml_error(x->d, kn,
                                "pinned_spki is required for pkcs11: and tpm: keys "
                                "(hardware keys are always pinned)");
    if (n != NULL)
        SWORN_GUARD(read_spki(x, n));
    SWORN_GUARD(get_user(x, m, "user", &c->signer_user));
    SWORN_GUARD(get_duration(x, m, "timeout", 100, 60000, &c->signer_timeout_ms));
    SWORN_GUARD(get_path(x, m, "signer", "program", 0, &c->signer_program));
    if (c->signer_program == NULL && (c->signer_program = strdup(SWORN_SIGNER_PROGRAM)) == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
fail:
    return -1;
}

/*
 * tpm.ak_handle: "0x" and 8 hex digits, a persistent handle of the owner's range
 * (0x81000000..0x817fffff), where the AK is kept (attest/tpmattest.h, sworn_tpm_ak_open).
 */
static int read_ak_handle(const struct ctx *x, const struct sworn_yaml_node *n, uint32_t *out)
{
    const char *s;
    uint32_t v = 0;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if ((s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) || strlen(s) != 10 || !all_hex(s + 2, 8))
        return sworn_yaml_error(x->d, n,
                                "ak_handle: want 0x and 8 hex digits (a persistent "
                                "handle, 0x81000000..0x817fffff)");
    for (size_t i = 2; i < 10; i++)
        v = v << 4 | (uint32_t)sworn_hex_digit(s[i]);
    if (v < SWORN_DCONFIG_AK_HANDLE_FIRST || v > SWORN_DCONFIG_AK_HANDLE_LAST)
        return sworn_yaml_error(x->d, n,
                                "ak_handle: 0x%08x is not in the owner's persistent range "
                                "0x81000000..0x817fffff",
                                (unsigned)v);
    *out = v;
    return 0;
fail:
    return -1;
}

static int read_tpm(struct ctx *x)
{
    static const char *const keys[] = {"tcti",    "required",  "pcrs", "quote_min_interval",
                                       "measure", "ak_handle", NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_dconfig *c = x->c;

    SWORN_GUARD(section(x, "tpm", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_str(x, m, "tpm", "tcti", 0, &c->tpm_tcti));
    n = sworn_yaml_get(m, "required");
    if (n != NULL)
        SWORN_GUARD(sworn_yaml_bool(x->d, n, &c->tpm_required));
    if (c->tpm_required && c->tpm_tcti == NULL)
        return sworn_yaml_error(x->d, n, "required: true needs tpm.tcti");
    n = sworn_yaml_get(m, "pcrs");
    if (n != NULL) {
        SWORN_GUARD(need_seq(x, n, "pcrs", 24));
        for (size_t i = 0; i < sworn_yaml_len(n); i++) {
            const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
            uint64_t pcr;

            SWORN_GUARD(sworn_yaml_u64(x->d, it, 0, 23, &pcr));
            if (c->tpm_pcrs & (1u << pcr) && pcr != SWORN_DCONFIG_PCR_ALWAYS)
                return sworn_yaml_error(x->d, it, "PCR %u is listed twice", (unsigned)pcr);
            c->tpm_pcrs |= 1u << pcr;
        }
    }
    SWORN_GUARD(get_duration(x, m, "quote_min_interval", 10, 86400000, &c->quote_min_interval_ms));
    n = sworn_yaml_get(m, "ak_handle");
    if (n != NULL)
        SWORN_GUARD(read_ak_handle(x, n, &c->tpm_ak_handle));
    n = sworn_yaml_get(m, "measure");
    if (n != NULL) {
        size_t count = sworn_yaml_len(n);

        SWORN_GUARD(need_seq(x, n, "measure", SWORN_DCONFIG_MAX_MEASURE));
        c->measure = calloc(count ? count : 1, sizeof(*c->measure));
        if (c->measure == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < count; i++) {
            const struct sworn_yaml_node *it = sworn_yaml_item(n, i);

            SWORN_GUARD(path_of(x, it, "measure", &c->measure[i]));
            c->n_measure++;
            for (size_t j = 0; j < i; j++)
                if (strcmp(c->measure[j], c->measure[i]) == 0)
                    return sworn_yaml_error(x->d, it, "%s is listed twice", c->measure[i]);
        }
    }
    return 0;
fail:
    return -1;
}

/* The AK's handle must not be the signer's key's on the same TPM: sworn_tpm_ak_open would
 * refuse that key as not its AK, and never evict it, but the configuration is wrong already. */
static int ak_handle_apart(const struct ctx *x)
{
    const struct sworn_dconfig *c = x->c;
    char own[sizeof(TPM_URI_PREFIX) + 8];

    if (c->tpm_tcti == NULL || c->signer_tcti == NULL || strcmp(c->tpm_tcti, c->signer_tcti) != 0)
        return 0;
    snprintf(own, sizeof(own), TPM_URI_PREFIX "%08x", (unsigned)c->tpm_ak_handle);
    if (strcasecmp(c->signer_key, own) == 0)
        return sworn_yaml_error(x->d, sworn_yaml_get(sworn_yaml_root(x->d), "tpm"),
                                "tpm.ak_handle 0x%08x is the signer's key on the same TPM: give "
                                "the AK a handle of its own",
                                (unsigned)c->tpm_ak_handle);
    return 0;
}

static int read_escalation(struct ctx *x)
{
    static const char *const keys[] = {"timeout", "max_pending", NULL};
    const struct sworn_yaml_node *m;

    SWORN_GUARD(section(x, "escalation", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_duration(x, m, "timeout", 1000, 604800000, &x->c->escalation_timeout_ms));
    SWORN_GUARD(get_u32(x, m, "max_pending", 1, 100000, &x->c->max_pending_escalations));
    return 0;
fail:
    return -1;
}

/* receipts: per-request | batch (docs/configuration.md; formats.md sections 13 and 14). */
static int read_receipts(struct ctx *x)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(sworn_yaml_root(x->d), "receipts");
    const char *s;

    x->c->receipts_mode = SWORN_DCONFIG_RECEIPTS_PER_REQUEST;
    if (n == NULL)
        return 0;
    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    if (strcmp(s, "per-request") == 0)
        return 0;
    if (strcmp(s, "batch") == 0) {
        x->c->receipts_mode = SWORN_DCONFIG_RECEIPTS_BATCH;
        return 0;
    }
    return sworn_yaml_error(x->d, n,
                            "receipts must be per-request (one signature per allow) or batch "
                            "(one signature per commit group)");
}

/* hardening: { seccomp: enforce | log | off } (decisiond/d_seccomp.h). */
static int read_hardening(struct ctx *x)
{
    static const char *const keys[] = {"seccomp", "development", NULL};
    const struct sworn_yaml_node *m, *n;
    char *mode = NULL;

    SWORN_GUARD(section(x, "hardening", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_str(x, m, "hardening", "development", 0, &mode));
    if (mode != NULL) {
        n = sworn_yaml_get(m, "development");
        if (strcmp(mode, "true") != 0 && strcmp(mode, "false") != 0) {
            free(mode);
            return sworn_yaml_error(x->d, n, "development must be true or false");
        }
        x->c->development = strcmp(mode, "true") == 0;
        free(mode);
        mode = NULL;
    }
    SWORN_GUARD(get_str(x, m, "hardening", "seccomp", 0, &mode));
    if (mode == NULL)
        return 0;
    n = sworn_yaml_get(m, "seccomp");
    if (strcmp(mode, "enforce") == 0)
        x->c->seccomp_mode = SWORN_DCONFIG_SECCOMP_ENFORCE;
    else if (strcmp(mode, "log") == 0)
        x->c->seccomp_mode = SWORN_DCONFIG_SECCOMP_LOG;
    else if (strcmp(mode, "off") == 0)
        x->c->seccomp_mode = SWORN_DCONFIG_SECCOMP_OFF;
    else {
        free(mode);
        return sworn_yaml_error(x->d, n, "seccomp must be enforce, log or off");
    }
    free(mode);
    return 0;
fail:
    free(mode);
    return -1;
}

static int socket_path(struct ctx *x, const struct sworn_yaml_node *m, const char *key,
                       int required, char **out)
{
    struct sockaddr_un sa;

    SWORN_GUARD(get_path(x, m, "sockets", key, required, out));
    if (*out != NULL && strlen(*out) >= sizeof(sa.sun_path))
        return sworn_yaml_error(x->d, sworn_yaml_get(m, key),
                                "%s: a Unix socket path is at most %zu bytes (%s)", key,
                                sizeof(sa.sun_path) - 1, *out);
    return 0;
fail:
    return -1;
}

/* A group: a decimal gid or a group name, resolved now (getgrnam). Absent: *has 0. */
static int read_group(struct ctx *x, const struct sworn_yaml_node *m, const char *key, int *has,
                      gid_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(m, key);
    const char *s;

    *has = 0;
    if (n == NULL)
        return 0;
    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (s[0] >= '0' && s[0] <= '9') {
        uint64_t v;

        /* (gid_t)-1 means "no change" to chown: never a group. */
        SWORN_GUARD(sworn_yaml_u64(x->d, n, 0, (gid_t)-2, &v));
        *out = (gid_t)v;
    } else {
        struct group *gr;

        if (s[0] == '\0')
            return sworn_yaml_error(x->d, n, "%s: empty group name", key);
        gr = getgrnam(s);
        if (gr == NULL)
            return sworn_yaml_error(x->d, n, "%s: no such group", key);
        *out = gr->gr_gid;
    }
    *has = 1;
    return 0;
fail:
    return -1;
}

static int read_sockets(struct ctx *x)
{
    static const char *const keys[] = {
        "decision", "admin", "decision_group", "admin_group", "metrics", "metrics_group", NULL};
    const struct sworn_yaml_node *m;
    struct sworn_dconfig *c = x->c;

    SWORN_GUARD(section(x, "sockets", 1, keys, &m));
    SWORN_GUARD(socket_path(x, m, "decision", 1, &c->decision_socket));
    SWORN_GUARD(socket_path(x, m, "admin", 1, &c->admin_socket));
    SWORN_GUARD(socket_path(x, m, "metrics", 0, &c->metrics_socket));
    SWORN_GUARD(read_group(x, m, "decision_group", &c->has_decision_group, &c->decision_gid));
    SWORN_GUARD(read_group(x, m, "admin_group", &c->has_admin_group, &c->admin_gid));
    SWORN_GUARD(read_group(x, m, "metrics_group", &c->has_metrics_group, &c->metrics_gid));
    if (strcmp(c->decision_socket, c->admin_socket) == 0)
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "admin"),
                                "admin and decision must be different sockets");
    if (c->metrics_socket != NULL && (strcmp(c->metrics_socket, c->decision_socket) == 0 ||
                                      strcmp(c->metrics_socket, c->admin_socket) == 0))
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "metrics"),
                                "metrics must be a socket of its own (not decision or admin)");
    if (c->has_metrics_group && c->metrics_socket == NULL)
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "metrics_group"),
                                "metrics_group without metrics");
    return 0;
fail:
    return -1;
}

/* A uid list: decimal uids or user names (resolved now), no repeats, 1..SWORN_DCONFIG_MAX_UIDS. */
static int read_uids(struct ctx *x, const struct sworn_yaml_node *m, const char *key, uid_t **out,
                     size_t *count)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(m, key);

    if (n == NULL)
        return missing(x, m, "peers", key);
    SWORN_GUARD(need_seq(x, n, key, SWORN_DCONFIG_MAX_UIDS));
    if (sworn_yaml_len(n) == 0)
        return sworn_yaml_error(x->d, n, "%s: at least one uid", key);
    *out = calloc(sworn_yaml_len(n), sizeof(**out));
    if (*out == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        const char *s;
        uid_t uid;

        SWORN_GUARD(sworn_yaml_str(x->d, it, &s));
        if (s[0] >= '0' && s[0] <= '9') {
            uint64_t v;

            /* (uid_t)-1 means "no uid" to setresuid and chown, so it is never a peer. */
            SWORN_GUARD(sworn_yaml_u64(x->d, it, 0, (uid_t)-2, &v));
            uid = (uid_t)v;
        } else {
            struct passwd *pw;

            if (s[0] == '\0')
                return sworn_yaml_error(x->d, it, "%s: empty user name", key);
            pw = getpwnam(s);
            if (pw == NULL)
                return sworn_yaml_error(x->d, it, "%s: no such user", key);
            uid = pw->pw_uid;
        }
        for (size_t j = 0; j < *count; j++)
            if ((*out)[j] == uid)
                return sworn_yaml_error(x->d, it, "%s: uid %lu is listed twice", key,
                                        (unsigned long)uid);
        (*out)[(*count)++] = uid;
    }
    return 0;
fail:
    return -1;
}

static int read_peers(struct ctx *x)
{
    static const char *const keys[] = {"proxy_uids", "operator_uids", NULL};
    const struct sworn_yaml_node *m;

    SWORN_GUARD(section(x, "peers", 1, keys, &m));
    SWORN_GUARD(read_uids(x, m, "proxy_uids", &x->c->proxy_uids, &x->c->n_proxy_uids));
    SWORN_GUARD(read_uids(x, m, "operator_uids", &x->c->operator_uids, &x->c->n_operator_uids));
    return 0;
fail:
    return -1;
}

/* budgets.replay_max_entries: a bound on the start's budget replay, never a silent cut. */
static int read_budgets(struct ctx *x)
{
    static const char *const keys[] = {"replay_max_entries", NULL};
    const struct sworn_yaml_node *m, *n;

    SWORN_GUARD(section(x, "budgets", 0, keys, &m));
    if (m == NULL || (n = sworn_yaml_get(m, "replay_max_entries")) == NULL)
        return 0;
    return sworn_yaml_u64(x->d, n, 1, UINT64_MAX, &x->c->replay_max_entries);
fail:
    return -1;
}

/* Whether uid is in group gid: its primary group, or a listed member. */
static int in_group(uid_t uid, gid_t gid)
{
    struct passwd *pw = getpwuid(uid);
    struct group *gr;

    if (pw == NULL)
        return 0;
    if (pw->pw_gid == gid)
        return 1;
    gr = getgrgid(gid);
    for (char **mem = gr != NULL ? gr->gr_mem : NULL; mem != NULL && *mem != NULL; mem++)
        if (strcmp(*mem, pw->pw_name) == 0)
            return 1;
    return 0;
}

int sworn_dconfig_socket_mode(const struct sworn_dconfig *c, int admin, uid_t self_uid,
                              gid_t self_gid, struct sworn_dconfig_sockmode *out)
{
    const uid_t *uids = admin ? c->operator_uids : c->proxy_uids;
    size_t n = admin ? c->n_operator_uids : c->n_proxy_uids, others = 0;
    const char *group_key = admin ? "sockets.admin_group" : "sockets.decision_group";
    const char *peers_key = admin ? "peers.operator_uids" : "peers.proxy_uids";

    out->owner = self_uid;
    out->group = self_gid;
    out->mode = 0600;
    if (admin ? c->has_admin_group : c->has_decision_group) {
        out->group = admin ? c->admin_gid : c->decision_gid;
        out->mode = 0660;
        for (size_t i = 0; i < n; i++)
            if (uids[i] != 0 && !in_group(uids[i], out->group))
                return sworn_err_set(SWORN_ERR_ARG,
                                     "uid %lu of %s is not in %s (gid %lu), so it could not "
                                     "connect",
                                     (unsigned long)uids[i], peers_key, group_key,
                                     (unsigned long)out->group);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (uids[i] == 0)
            continue; /* root connects whatever the mode */
        if (others++ > 0)
            return sworn_err_set(SWORN_ERR_ARG,
                                 "%s lists more than one uid other than root: a 0600 socket "
                                 "serves one, so set %s",
                                 peers_key, group_key);
        out->owner = uids[i];
    }
    return 0;
}

static int read_socket_modes(struct ctx *x)
{
    struct sworn_dconfig_sockmode sm;
    char why[512];

    for (int admin = 0; admin <= 1; admin++)
        if (sworn_dconfig_socket_mode(x->c, admin, 0, 0, &sm) < 0) {
            snprintf(why, sizeof(why), "%s", sworn_err_msg());
            return sworn_yaml_error(x->d, sworn_yaml_get(sworn_yaml_root(x->d), "sockets"), "%s",
                                    why);
        }
    return 0;
}

/*
 * A witness's url: "http://" ADDRESS [":" PORT] [PREFIX], ADDRESS a numeric IPv4 address or an
 * IPv6 one in brackets, PREFIX "" or "/..." (a trailing '/' dropped) of printable bytes without
 * '?', '#' or white space. https and names are refused with the reason (config.h).
 */
static int parse_witness_url(const struct ctx *x, const struct sworn_yaml_node *n,
                             struct sworn_dconfig_witness *w)
{
    const char *u = w->url, *host, *end, *rest;
    size_t hlen, plen;
    unsigned char buf[sizeof(struct in6_addr)];
    int v6 = 0;

    if (strncmp(u, "http://", 7) != 0)
        return sworn_yaml_error(x->d, n,
                                "witnesses: url must start with http:// (a cosignature is "
                                "checked against the witness's key, so TLS adds nothing to it)");
    host = u + 7;
    if (*host == '[') {
        end = strchr(host, ']');
        if (end == NULL)
            return sworn_yaml_error(x->d, n, "witnesses: url: no ']' after the IPv6 address");
        host++;
        hlen = (size_t)(end - host);
        rest = end + 1;
        v6 = 1;
    } else {
        hlen = strcspn(host, ":/");
        rest = host + hlen;
    }
    if (hlen == 0 || hlen >= sizeof(w->host))
        return sworn_yaml_error(x->d, n, "witnesses: url: no address, or one too long");
    memcpy(w->host, host, hlen);
    w->host[hlen] = '\0';
    if (inet_pton(v6 ? AF_INET6 : AF_INET, w->host, buf) != 1)
        return sworn_yaml_error(x->d, n,
                                "witnesses: url: \"%s\" is not a numeric %s address (decisiond "
                                "resolves no names)",
                                w->host, v6 ? "IPv6" : "IPv4");
    w->port = 80;
    if (*rest == ':') {
        uint64_t port = 0;
        size_t digits = strspn(rest + 1, "0123456789");

        if (digits == 0 || digits > 5)
            return sworn_yaml_error(x->d, n, "witnesses: url: a bad port");
        for (size_t i = 0; i < digits; i++)
            port = port * 10 + (uint64_t)(rest[1 + i] - '0');
        if (port == 0 || port > 65535)
            return sworn_yaml_error(x->d, n, "witnesses: url: port outside 1..65535");
        w->port = (uint16_t)port;
        rest += 1 + digits;
    }
    if (*rest != '\0' && *rest != '/')
        return sworn_yaml_error(x->d, n, "witnesses: url: unexpected text after the address");
    plen = strlen(rest);
    while (plen > 0 && rest[plen - 1] == '/')
        plen--;
    if (plen > SWORN_DCONFIG_WITNESS_PREFIX_MAX)
        return sworn_yaml_error(x->d, n, "witnesses: url: path longer than %d bytes",
                                SWORN_DCONFIG_WITNESS_PREFIX_MAX);
    for (size_t i = 0; i < plen; i++)
        if ((unsigned char)rest[i] <= 0x20 || (unsigned char)rest[i] >= 0x7f || rest[i] == '?' ||
            rest[i] == '#')
            return sworn_yaml_error(x->d, n,
                                    "witnesses: url: the path must be printable ASCII without "
                                    "'?', '#' or spaces");
    w->prefix = strndup(rest, plen);
    if (w->prefix == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    return 0;
}

/* witnesses: a list of {url, key, timeout}; distinct keys and key names (docs/configuration.md). */
static int read_witnesses(struct ctx *x)
{
    static const char *const keys[] = {"url", "key", "timeout", NULL};
    const struct sworn_yaml_node *n = sworn_yaml_get(sworn_yaml_root(x->d), "witnesses");
    struct sworn_dconfig *c = x->c;
    struct sworn_note_verifier v[SWORN_DCONFIG_WITNESSES_MAX];
    size_t count;

    if (n == NULL)
        return 0;
    SWORN_GUARD(need_seq(x, n, "witnesses", SWORN_DCONFIG_WITNESSES_MAX));
    count = sworn_yaml_len(n);
    c->witnesses = calloc(count ? count : 1, sizeof(*c->witnesses));
    if (c->witnesses == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        struct sworn_dconfig_witness *w = &c->witnesses[i];

        if (sworn_yaml_kind(it) != SWORN_YAML_MAP)
            return sworn_yaml_error(x->d, it, "witnesses: each item is a map {url, key}");
        SWORN_GUARD(sworn_yaml_only_keys(x->d, it, keys));
        c->n_witnesses++;
        w->timeout_ms = 5000;
        SWORN_GUARD(get_str(x, it, "witnesses", "url", 1, &w->url));
        SWORN_GUARD(parse_witness_url(x, sworn_yaml_get(it, "url"), w));
        SWORN_GUARD(get_str(x, it, "witnesses", "key", 1, &w->key));
        if (sworn_note_verifier_parse(w->key, strlen(w->key), &v[i]) < 0 ||
            v[i].alg != SWORN_NOTE_ALG_COSIGNATURE_V1)
            return sworn_yaml_error(x->d, sworn_yaml_get(it, "key"),
                                    "witnesses: key is not a cosignature/v1 verifier key "
                                    "(name+id+base64, type 0x04)");
        SWORN_GUARD(get_duration(x, it, "timeout", 100, 60000, &w->timeout_ms));
        for (size_t j = 0; j < i; j++)
            if (strcmp(v[j].name, v[i].name) == 0 ||
                (v[j].key_len == v[i].key_len && memcmp(v[j].key, v[i].key, v[i].key_len) == 0))
                return sworn_yaml_error(x->d, it,
                                        "witnesses: item %zu has the key or key name of item %zu",
                                        i + 1, j + 1);
    }
    return 0;
fail:
    return -1;
}

static int read_all(struct ctx *x)
{
    static const char *const top[] = {
        "log",   "signer", "keyring", "tpm",       "policy",  "vault",    "escalation", "sockets",
        "peers", "run_as", "workers", "hardening", "budgets", "receipts", "witnesses",  NULL};
    const struct sworn_yaml_node *root = sworn_yaml_root(x->d);
    struct sworn_dconfig *c = x->c;

    SWORN_GUARD(sworn_yaml_only_keys(x->d, root, top));
    SWORN_GUARD(read_log(x));
    SWORN_GUARD(read_tpm(x));
    SWORN_GUARD(read_signer(x));
    if (strncmp(c->signer_key, "tpm:", 4) == 0 && c->signer_tcti == NULL) {
        if (c->tpm_tcti == NULL)
            return sworn_yaml_error(x->d, sworn_yaml_get(root, "signer"),
                                    "a tpm: key needs signer.tcti or tpm.tcti");
        c->signer_tcti = strdup(c->tpm_tcti);
        if (c->signer_tcti == NULL)
            return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    }
    SWORN_GUARD(ak_handle_apart(x));
    SWORN_GUARD(get_path(x, root, "", "keyring", 0, &c->keyring));
    SWORN_GUARD(get_path(x, root, "", "policy", 1, &c->policy_path));
    SWORN_GUARD(get_path(x, root, "", "vault", 0, &c->vault_path));
    SWORN_GUARD(read_escalation(x));
    SWORN_GUARD(read_sockets(x));
    SWORN_GUARD(read_peers(x));
    SWORN_GUARD(read_socket_modes(x));
    SWORN_GUARD(get_user(x, root, "run_as", &c->run_as_user));
    SWORN_GUARD(get_u32(x, root, "workers", 1, 64, &c->workers));
    SWORN_GUARD(read_receipts(x));
    SWORN_GUARD(read_hardening(x));
    SWORN_GUARD(read_budgets(x));
    SWORN_GUARD(read_witnesses(x));
    return 0;
fail:
    return -1;
}

/*
 * The absolute folder of the configuration file, lexically (as every other path here): the
 * working directory joined with the file's folder when that is relative.
 */
static char *config_dir(const char *path)
{
    char *copy = strdup(path), *dir = NULL;
    char cwd[SWORN_DCONFIG_PATH_MAX];

    if (copy == NULL) {
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) == NULL) {
        sworn_err_set(SWORN_ERR_IO, "%s: cannot get the working directory: %s", path,
                      strerror(errno));
        free(copy);
        return NULL;
    }
    dir = clean_path(path[0] == '/' ? "/" : cwd, dirname(copy));
    if (dir == NULL)
        sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    free(copy);
    return dir;
}

int sworn_dconfig_load(const char *path, struct sworn_dconfig **out)
{
    struct sworn_yaml_doc *d = NULL;
    char *bytes = NULL;
    size_t n = 0;
    struct ctx x;

    memset(&x, 0, sizeof(x));
    SWORN_ENSURE(path != NULL && out != NULL, SWORN_ERR_ARG, "config: NULL argument");
    /* The checked open (safefile.h): what the root monitor reads decides who runs what. */
    SWORN_GUARD(sworn_safefile_read(path, 0, SWORN_SAFEFILE_NOBODY, "configuration",
                                    SWORN_YAML_MAX_BYTES, &bytes, &n));
    SWORN_GUARD(sworn_yaml_load_mem(path, (const uint8_t *)bytes, n, &d));
    x.d = d;
    x.dir = config_dir(path);
    SWORN_ENSURE(x.dir != NULL, sworn_err_code(), "%s", sworn_err_msg());
    x.c = calloc(1, sizeof(*x.c));
    SWORN_ENSURE(x.c != NULL, SWORN_ERR_NOMEM, "out of memory");
    x.c->path = strdup(path);
    SWORN_ENSURE(x.c->path != NULL, SWORN_ERR_NOMEM, "out of memory");
    sworn_yaml_digest(d, x.c->digest);
    x.c->checkpoint_interval_ms = DEFAULT_CHECKPOINT_MS;
    x.c->signer_timeout_ms = DEFAULT_SIGNER_TIMEOUT_MS;
    x.c->tpm_pcrs = 1u << SWORN_DCONFIG_PCR_ALWAYS;
    x.c->quote_min_interval_ms = DEFAULT_QUOTE_MIN_MS;
    x.c->tpm_ak_handle = SWORN_DCONFIG_AK_HANDLE_DEFAULT;
    x.c->escalation_timeout_ms = DEFAULT_ESCALATION_MS;
    x.c->max_pending_escalations = DEFAULT_MAX_PENDING;
    x.c->workers = DEFAULT_WORKERS;
    x.c->seccomp_mode = SWORN_DCONFIG_SECCOMP_ENFORCE;
    SWORN_GUARD(read_all(&x));
    x.c->tpm_pcrs |= 1u << SWORN_DCONFIG_PCR_ALWAYS;
    sworn_yaml_free(d);
    free(bytes);
    free(x.dir);
    *out = x.c;
    return 0;
fail:
    sworn_dconfig_free(x.c);
    sworn_yaml_free(d);
    free(bytes);
    free(x.dir);
    return -1;
}

void sworn_dconfig_free(struct sworn_dconfig *c)
{
    if (c == NULL)
        return;
    free(c->path);
    free(c->log_db);
    free(c->origin);
    free(c->export_dir);
    free(c->signer_key);
    free(c->signer_module);
    free(c->signer_pin_file);
    free(c->signer_tcti);
    free(c->signer_spki_hex);
    free(c->signer_user);
    free(c->signer_program);
    free(c->keyring);
    free(c->tpm_tcti);
    for (size_t i = 0; i < c->n_measure; i++)
        free(c->measure[i]);
    free(c->measure);
    for (size_t i = 0; i < c->n_witnesses; i++) {
        free(c->witnesses[i].url);
        free(c->witnesses[i].prefix);
        free(c->witnesses[i].key);
    }
    free(c->witnesses);
    free(c->policy_path);
    free(c->vault_path);
    free(c->decision_socket);
    free(c->admin_socket);
    free(c->metrics_socket);
    free(c->proxy_uids);
    free(c->operator_uids);
    free(c->run_as_user);
    free(c);
}

/* --- checks against the file system ---------------------------------------------------------- */

static int need_kind(const struct sworn_dconfig *c, const char *key, const char *path, int dir)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return sworn_err_set(errno == ENOENT ? SWORN_ERR_NOTFOUND : SWORN_ERR_IO, "%s: %s: %s: %s",
                             c->path, key, path, strerror(errno));
    if (dir && !S_ISDIR(st.st_mode))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s is not a folder", c->path, key, path);
    if (!dir && !S_ISREG(st.st_mode))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s is not a regular file", c->path, key, path);
    return 0;
}

/* The folder path is in exists; and path itself, when it exists, is of the kind wanted. */
static int need_parent(const struct sworn_dconfig *c, const char *key, const char *path,
                       int want_socket)
{
    char *copy = strdup(path);
    struct stat st;
    int rc;

    if (copy == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    rc = need_kind(c, key, dirname(copy), 1);
    free(copy);
    if (rc < 0)
        return -1;
    if (stat(path, &st) == 0 && (want_socket ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode)))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s exists and is not a %s", c->path, key, path,
                             want_socket ? "socket" : "regular file");
    return 0;
}

/* A secret file: read it with the secret reader (which checks kind and mode), then wipe it. */
static int need_secret(const struct sworn_dconfig *c, const char *key, const char *path,
                       const char *what, size_t cap, uid_t owner)
{
    uint8_t *buf = malloc(cap);
    size_t len = 0;
    int rc;

    if (buf == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    /* Root checks a file of the signer's user, which may own it (the engine may not: below).
     * Its folders must be root's alone (safefile.h): otherwise the engine's uid could put a PIN
     * file of its choosing, or a link to one, in its place for the next signer. Ownership cannot
     * change without root, so this check at start holds for every signer started later.
     * hardening.development: any owner (a development stack may move the signer to another
     * user); links, mode and folders are checked all the same. */
    rc = sworn_secretfile_read_owned(path, what, c->development ? SWORN_SAFEFILE_ANYONE : owner,
                                     buf, cap, &len);
    sworn_memzero(buf, cap);
    free(buf);
    if (rc < 0)
        return sworn_err_set(sworn_err_code(), "%s: %s: %s", c->path, key, sworn_err_msg());
    return 0;
}

/*
 * Started as root: a file the monitor has executed or loaded as root, which neither the engine's
 * uid nor anyone else may replace: the checked open of safefile.h (root's, no group or other
 * write, folders alike, a sticky folder's entries being their owners' alone, no symbolic link on
 * the way). follow: the path may be a symbolic link (a PKCS#11 module, which distributions
 * install as one); then the file it resolves to is checked, with its folders.
 */
static int need_trusted_at(const struct sworn_dconfig *c, const char *key, const char *path,
                           int follow)
{
    char *p = NULL;
    int fd = -1, rc;

    if (geteuid() != 0)
        return 0;
    if (follow && (p = realpath(path, NULL)) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s: %s", c->path, key, path, strerror(errno));
    rc = sworn_safefile_open(p != NULL ? p : path, 0, SWORN_SAFEFILE_NOBODY, key, &fd, NULL);
    free(p);
    if (rc < 0)
        return sworn_err_set(sworn_err_code(), "%s: %s: another user could replace what root runs",
                             c->path, sworn_err_msg());
    close(fd);
    return 0;
}

static int need_trusted(const struct sworn_dconfig *c, const char *key, const char *path)
{
    return need_trusted_at(c, key, path, 0);
}

/* A secret of the signer's (PIN or key file) that the engine's uid owns is the engine's too. */
static int need_not_engines(const struct sworn_dconfig *c, const struct sworn_dconfig_users *u,
                            const char *key, const char *path)
{
    struct stat st;

    if (geteuid() == 0 && u->engine_uid != u->signer_uid && lstat(path, &st) == 0 &&
        st.st_uid == u->engine_uid)
        return sworn_err_set(SWORN_ERR_IO,
                             "%s: %s: %s is owned by the engine's uid %lu: it must be the "
                             "signer's user's or root's",
                             c->path, key, path, (unsigned long)st.st_uid);
    return 0;
}

static int need_vault(const struct sworn_dconfig *c, uid_t engine_uid)
{
    struct stat st;

    if (lstat(c->vault_path, &st) != 0)
        return sworn_err_set(errno == ENOENT ? SWORN_ERR_NOTFOUND : SWORN_ERR_IO,
                             "%s: vault: %s: %s", c->path, c->vault_path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return sworn_err_set(SWORN_ERR_IO, "%s: vault: %s is not a regular file", c->path,
                             c->vault_path);
    if ((st.st_mode & 077) != 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "%s: vault: %s has mode %04o; it must be 0600 or stricter "
                             "(chmod 600 %s)",
                             c->path, c->vault_path, (unsigned)(st.st_mode & 07777), c->vault_path);
    if (st.st_uid != engine_uid)
        return sworn_err_set(
            SWORN_ERR_IO, "%s: vault: %s is owned by uid %lu, not by the engine's uid %lu", c->path,
            c->vault_path, (unsigned long)st.st_uid, (unsigned long)engine_uid);
    return 0;
}

static int lookup_user(const struct sworn_dconfig *c, const char *key, const char *name, uid_t *uid,
                       gid_t *gid)
{
    struct passwd *pw;

    errno = 0;
    pw = getpwnam(name);
    if (pw == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s: %s: no such user %s", c->path, key, name);
    *uid = pw->pw_uid;
    *gid = pw->pw_gid;
    return 0;
}

int sworn_dconfig_users(const struct sworn_dconfig *c, int as_root, struct sworn_dconfig_users *out)
{
    out->engine_uid = out->signer_uid = geteuid();
    out->engine_gid = out->signer_gid = getegid();
    if (!as_root)
        return 0;
    if (c->run_as_user != NULL)
        SWORN_GUARD(lookup_user(c, "run_as", c->run_as_user, &out->engine_uid, &out->engine_gid));
    if (c->signer_user != NULL)
        SWORN_GUARD(
            lookup_user(c, "signer.user", c->signer_user, &out->signer_uid, &out->signer_gid));
    return 0;
fail:
    return -1;
}

int sworn_dconfig_check_separation(const struct sworn_dconfig *c)
{
    struct sworn_dconfig_users users, *u = &users;
    const char *why = NULL;

    SWORN_GUARD(sworn_dconfig_users(c, geteuid() == 0, &users));
    if (u->signer_uid == 0)
        why = "the signer would run as root (set signer.user to a user of its own)";
    else if (u->engine_uid == 0)
        why = "the engine would run as root (set run_as)";
    else if (u->signer_uid == u->engine_uid)
        why = geteuid() == 0
                  ? "signer.user and run_as are one uid: give the signer a user of its own"
                  : "not started as root, so the signer and the engine would share this "
                    "uid";
    else if (geteuid() == 0 && (u->signer_gid == 0 || u->engine_gid == 0))
        why = "signer.user or run_as has root's group (gid 0): give each a group of its own";
    else if (geteuid() == 0 && u->signer_gid == u->engine_gid)
        why = "signer.user and run_as share a group: give the signer a group of its own";
    if (why == NULL || c->development)
        return 0;
    return sworn_err_set(SWORN_ERR_ARG,
                         "%s: %s; hardening.development: true permits it for development only "
                         "(the Startup entry then says so)",
                         c->path, why);
fail:
    return -1;
}

static int check(const struct sworn_dconfig *c, int signer_files);

int sworn_dconfig_check(const struct sworn_dconfig *c)
{
    return check(c, 1);
}

int sworn_dconfig_check_engine(const struct sworn_dconfig *c)
{
    return check(c, 0);
}

/* signer_files: also the signer's own files (its key file, module, PIN file), which only the
 * monitor and the signer may read. */
static int check(const struct sworn_dconfig *c, int signer_files)
{
    struct sworn_dconfig_users users;

    if (c == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "config: NULL argument");
    SWORN_GUARD(sworn_dconfig_users(c, geteuid() == 0, &users));
    SWORN_GUARD(need_kind(c, "signer.program", c->signer_program, 0));
    /* What the root monitor reads and runs: the configuration itself (it names the users and the
     * program) and the signer program must be root's alone, folders included. */
    if (signer_files)
        SWORN_GUARD(need_trusted(c, "the configuration", c->path));
    SWORN_GUARD(need_trusted(c, "signer.program", c->signer_program));
    SWORN_GUARD(need_parent(c, "log.database", c->log_db, 0));
    if (c->export_dir != NULL)
        SWORN_GUARD(need_kind(c, "log.export_dir", c->export_dir, 1));
    if (signer_files && strncmp(c->signer_key, "file:", 5) == 0) {
        SWORN_GUARD(need_secret(c, "signer.key", c->signer_key + 5, "key file", KEY_FILE_MAX,
                                users.signer_uid));
        SWORN_GUARD(need_not_engines(c, &users, "signer.key", c->signer_key + 5));
    }
    if (signer_files && c->signer_module != NULL) {
        SWORN_GUARD(need_kind(c, "signer.module", c->signer_module, 0));
        SWORN_GUARD(need_trusted_at(c, "signer.module", c->signer_module, 1));
    }
    if (signer_files && c->signer_pin_file != NULL) {
        SWORN_GUARD(need_secret(c, "signer.pin_file", c->signer_pin_file, "PIN file", PIN_FILE_MAX,
                                users.signer_uid));
        SWORN_GUARD(need_not_engines(c, &users, "signer.pin_file", c->signer_pin_file));
    }
    if (c->keyring != NULL)
        SWORN_GUARD(need_kind(c, "keyring", c->keyring, 0));
    for (size_t i = 0; i < c->n_measure; i++)
        SWORN_GUARD(need_kind(c, "tpm.measure", c->measure[i], 0));
    SWORN_GUARD(need_kind(c, "policy", c->policy_path, 0));
    if (c->vault_path != NULL)
        SWORN_GUARD(need_vault(c, users.engine_uid));
    SWORN_GUARD(need_parent(c, "sockets.decision", c->decision_socket, 1));
    SWORN_GUARD(need_parent(c, "sockets.admin", c->admin_socket, 1));
    if (c->metrics_socket != NULL)
        SWORN_GUARD(need_parent(c, "sockets.metrics", c->metrics_socket, 1));
    /* Users were resolved at load; check again, since the check may run long after. */
    if (c->signer_user != NULL && getpwnam(c->signer_user) == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s: signer.user: no such user %s", c->path,
                             c->signer_user);
    if (c->run_as_user != NULL && getpwnam(c->run_as_user) == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s: run_as: no such user %s", c->path,
                             c->run_as_user);
    return 0;
fail:
    return -1;
}
