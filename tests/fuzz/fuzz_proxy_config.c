/*
 * fuzz_proxy_config.c -- libFuzzer target for proxy/p_config.c: the input is loaded with
 * sworn_pconf_load_mem (no file: every path in it must be absolute, so none depends on a folder).
 *
 * User and group names are resolved as in a real load (getpwnam and getgrnam read the local
 * files, fast enough here, and the names are part of what is parsed). A failed load must set a
 * message naming the input and leave *out untouched; a loaded configuration must hold what
 * p_config.h promises: 1..16 listeners, each with a principal of 1..128 bytes 0x21..0x7e, paths
 * absolute and NUL-terminated within their arrays, a TCP listener on loopback, modes 0600 or 0660
 * (0660 with a group), no two socket listeners on one path, every bound respected, CIDRs without
 * host bits, raw ports non-zero; and its warnings (sworn_pconf_warnings) are counted as called.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "p_config.h"
#include "seccomp.h"

#define NAME "fuzz.yaml"

static struct sworn_pconf conf, untouched;

static void must(int ok)
{
    if (!ok)
        abort();
}

static void warning_ok(void *arg, const char *key, const char *message)
{
    must(key != NULL && key[0] != '\0' && message != NULL && message[0] != '\0');
    must(strlen(message) < 512);
    ++*(size_t *)arg;
}

/* NUL-terminated within cap, and (when non-empty, or required) absolute. */
static void path_ok(const char *p, size_t cap, int required)
{
    size_t n = strnlen(p, cap);

    must(n < cap);
    must(n > 0 || !required);
    must(n == 0 || p[0] == '/');
    must(strstr(p, "//") == NULL && strstr(p, "/./") == NULL && strstr(p, "/../") == NULL);
}

static void ident_ok(const char *s, int required)
{
    size_t n = strnlen(s, SWORN_PCONF_PRINCIPAL_MAX + 1);

    must(n <= SWORN_PCONF_PRINCIPAL_MAX && (n > 0 || !required));
    for (size_t i = 0; i < n; i++)
        must((unsigned char)s[i] >= 0x21 && (unsigned char)s[i] <= 0x7e);
}

static void listener_ok(const struct sworn_pconf *c, size_t i)
{
    const struct sworn_pconf_listener *l = &c->listeners[i];

    ident_ok(l->principal, 1);
    ident_ok(l->sandbox, 0);
    must(l->nuids <= SWORN_PCONF_UIDS_MAX);
    path_ok(l->port_file, sizeof(l->port_file), 0);
    if (l->kind == SWORN_PCONF_TCP) {
        must(l->path[0] == '\0' && l->nuids == 0 && !l->has_group && l->mode == 0);
        must((l->family == 4 && strncmp(l->address, "127.", 4) == 0) ||
             (l->family == 6 && strcmp(l->address, "::1") == 0));
    } else {
        must(l->kind == SWORN_PCONF_UNIX || l->kind == SWORN_PCONF_HOSTLINK);
        path_ok(l->path, sizeof(l->path), 1);
        must(l->port_file[0] == '\0' && l->address[0] == '\0' && l->port == 0);
        must(l->mode == 0600 || (l->mode == 0660 && l->has_group));
        must(l->mode == 0660 || !l->has_group);
        must(strcmp(l->path, c->decision_socket) != 0 && strcmp(l->path, c->metrics_socket) != 0);
        for (size_t j = 0; j < i; j++)
            must(c->listeners[j].kind == SWORN_PCONF_TCP ||
                 strcmp(c->listeners[j].path, l->path) != 0);
    }
    for (size_t j = 0; j < l->nuids; j++)
        for (size_t k = 0; k < j; k++)
            must(l->uids[j] != l->uids[k]);
}

static void cidr_ok(const struct sworn_pconf_cidr *r)
{
    unsigned max = r->family == 4 ? 32 : 128;

    must(r->family == 4 || r->family == 6);
    must(r->prefix <= max);
    for (unsigned bit = r->prefix; bit < 128; bit++)
        must(!(r->addr[bit / 8] & (0x80u >> (bit % 8))));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct sworn_pconf *c = &conf;

    memset(&conf, 0x5A, sizeof(conf));
    memset(&untouched, 0x5A, sizeof(untouched));
    if (sworn_pconf_load_mem(NAME, data, size, &conf) != 0) {
        must(strncmp(sworn_err_msg(), NAME ":", strlen(NAME) + 1) == 0 ||
             sworn_err_code() == SWORN_ERR_RANGE);
        must(memcmp(&conf, &untouched, sizeof(conf)) == 0);
        return 0;
    }
    must(strcmp(c->path, NAME) == 0);
    must(c->nlisteners >= 1 && c->nlisteners <= SWORN_PCONF_LISTENERS_MAX);
    for (size_t i = 0; i < c->nlisteners; i++)
        listener_ok(c, i);
    must(!c->has_user || strnlen(c->user, sizeof(c->user)) < sizeof(c->user));
    path_ok(c->decision_socket, sizeof(c->decision_socket), 1);
    path_ok(c->ca_cert, sizeof(c->ca_cert), 1);
    path_ok(c->ca_key, sizeof(c->ca_key), 1);
    must(strcmp(c->ca_cert, c->ca_key) != 0);
    path_ok(c->upstream_ca_file, sizeof(c->upstream_ca_file), 0);
    path_ok(c->delegation_verify_key, sizeof(c->delegation_verify_key), 0);
    path_ok(c->metrics_socket, sizeof(c->metrics_socket), 0);
    path_ok(c->log_path, sizeof(c->log_path), 0);
    must(c->decision_timeout_ms >= 100 && c->decision_timeout_ms <= 60000);
    must(c->escalation_max_ms >= 1000 && c->escalation_max_ms <= 86400000);
    must(c->leaf_ttl_s >= 300 && c->leaf_ttl_s <= 604800);
    must(c->leaf_cache >= 1 && c->leaf_cache <= 65536);
    must(c->connect_timeout_ms >= 100 && c->connect_timeout_ms <= 300000);
    must(c->upstream_timeout_ms >= 100 && c->upstream_timeout_ms <= 3600000);
    must(c->tls_peek_ms >= 100 && c->tls_peek_ms <= 60000);
    must(c->head_max >= 1024 && c->head_max <= 1048576);
    must(c->headers_max >= 8 && c->headers_max <= 128);
    must(c->body_max <= 1073741824);
    must(c->connections_max >= 1 && c->connections_max <= 65536);
    must(c->head_timeout_ms >= 100 && c->head_timeout_ms <= 3600000);
    must(c->body_timeout_ms >= 100 && c->body_timeout_ms <= 3600000);
    must(c->idle_timeout_ms >= 100 && c->idle_timeout_ms <= 3600000);
    must(c->nallow_private <= SWORN_PCONF_CIDRS_MAX && c->nraw_ports <= SWORN_PCONF_PORTS_MAX);
    for (size_t i = 0; i < c->nallow_private; i++)
        cidr_ok(&c->allow_private[i]);
    for (size_t i = 0; i < c->nraw_ports; i++)
        must(c->raw_ports[i] != 0);
    for (size_t i = 0; c->delegation_header[i] != '\0'; i++)
        must(i < SWORN_PCONF_HEADER_MAX &&
             !(c->delegation_header[i] >= 'A' && c->delegation_header[i] <= 'Z'));
    must(c->delegation_verify_key[0] == '\0' || c->delegation_header[0] != '\0');
    must(c->log_debug == 0 || c->log_debug == 1);
    must(c->seccomp_mode == SWORN_SECCOMP_OFF || c->seccomp_mode == SWORN_SECCOMP_LOG ||
         c->seccomp_mode == SWORN_SECCOMP_ENFORCE);
    /* The warnings of a loaded file: each has a key and a sentence, and they are counted. */
    {
        size_t seen = 0, n = sworn_pconf_warnings(c, 0, warning_ok, &seen);

        must(n == seen && n <= 2 + c->nallow_private + c->nlisteners);
        must(sworn_pconf_warnings(c, 1000, NULL, NULL) <= n);
    }
    return 0;
}
