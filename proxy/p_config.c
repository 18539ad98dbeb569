/*
 * p_config.c -- sworn-proxy's configuration (see p_config.h and docs/proxy.md).
 *
 * The loader walks the YAML tree section by section, as decisiond's does (decisiond/config.c):
 * each section first refuses unknown keys (sworn_yaml_only_keys), then reads its keys with the
 * typed getters, so every error names the node's line and column. Defaults are set before
 * reading, so an absent optional key keeps its default. The structure is filled in a private
 * allocation and copied out only when everything passed: a failed load leaves *out as it was.
 */
#define _DEFAULT_SOURCE /* getgrnam, getpwnam */
#include "p_config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <grp.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "frame.h"
#include "safefile.h"
#include "seccomp.h"
#include "secretfile.h"
#include "utf8.h"
#include "wipe.h"
#include "yamldoc.h"

#define MS_SECOND 1000ull
#define MS_MINUTE (60ull * MS_SECOND)
#define MS_HOUR (60ull * MS_MINUTE)
#define MS_DAY (24ull * MS_HOUR)

#define DEFAULT_DECISION_TIMEOUT_MS (5 * MS_SECOND)
#define DEFAULT_ESCALATION_MAX_MS (10 * MS_MINUTE)
#define DEFAULT_LEAF_TTL_S 3600u
#define DEFAULT_LEAF_CACHE 1024u
#define DEFAULT_CONNECT_TIMEOUT_MS (10 * MS_SECOND)
#define DEFAULT_RESPONSE_TIMEOUT_MS (60 * MS_SECOND)
#define DEFAULT_TLS_WAIT_MS (5 * MS_SECOND)
#define DEFAULT_HEAD_MAX 16384u
#define DEFAULT_HEADERS_MAX 100u
#define DEFAULT_BODY_MAX 8388608u
#define DEFAULT_BODIES_MAX 268435456u /* 256 MiB of request bodies held at once, all together */
#define DEFAULT_CONNECTIONS_MAX 1024u
#define DEFAULT_HEAD_TIMEOUT_MS (30 * MS_SECOND)
#define DEFAULT_BODY_TIMEOUT_MS (60 * MS_SECOND)
#define DEFAULT_IDLE_TIMEOUT_MS (60 * MS_SECOND)
#define CA_KEY_MAX 65536u /* a PEM private key file */

struct ctx {
    const struct sworn_yaml_doc *d;
    struct sworn_pconf *c;
};

/* --- small readers ----------------------------------------------------------------------------
 */

/* A required key is missing: name it with its section, at the section's position. */
static int missing(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                   const char *key)
{
    return sworn_yaml_error(x->d, map, "missing required key \"%s%s%s\"", section,
                            section[0] ? "." : "", key);
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

static int is_yaml_null(const char *s)
{
    return strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

/*
 * Copy the absolute path s into out (capacity cap), lexically clean: empty and "." segments and
 * repeated slashes dropped, ".." removes the segment before it (at "/" it stays at "/"). The
 * result is never longer than s. Symbolic links are not resolved: sockets and the port file may
 * not exist yet, and the operator's spelling is what gets logged.
 */
static void clean_abs(const char *s, char *out)
{
    size_t o = 0;
    const char *p = s;

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
}

/*
 * An absolute path (node n, named key in messages) into out, at most cap - 1 bytes once clean.
 * what_max names the limit ("a path", "a Unix socket path") in the message.
 */
static int path_of(const struct ctx *x, const struct sworn_yaml_node *n, const char *key, char *out,
                   size_t cap, const char *what)
{
    const char *s;
    size_t len;
    char *clean;

    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    len = strlen(s);
    if (len == 0)
        return sworn_yaml_error(x->d, n, "%s: empty path (leave the key out for none)", key);
    /* YAML's nulls: someone meaning "none" must leave the key out, not get a file named null. */
    if (is_yaml_null(s))
        return sworn_yaml_error(x->d, n, "%s: \"%s\" is not a path (leave the key out for none)",
                                key, s);
    if (sworn_utf8_check(s, len, 0, key) < 0)
        return sworn_yaml_error(x->d, n, "%s: a path must be one line of printable text", key);
    if (s[0] != '/')
        return sworn_yaml_error(x->d, n, "%s: \"%s\" is not an absolute path (start it with /)",
                                key, s);
    clean = malloc(len + 2);
    if (clean == NULL)
        return sworn_err_set(SWORN_ERR_NOMEM, "out of memory");
    clean_abs(s, clean);
    if (strlen(clean) >= cap) {
        free(clean);
        return sworn_yaml_error(x->d, n, "%s: %s is at most %zu bytes", key, what, cap - 1);
    }
    memcpy(out, clean, strlen(clean) + 1);
    free(clean);
    return 0;
}

/* An optional path key of map; absent: out untouched (""). */
static int get_path(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                    const char *key, int required, char *out, size_t cap, const char *what)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    char full[64];

    snprintf(full, sizeof(full), "%s.%s", section, key);
    if (n == NULL)
        return required ? missing(x, map, section, key) : 0;
    return path_of(x, n, full, out, cap, what);
}

static int get_file(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                    const char *key, int required, char *out)
{
    return get_path(x, map, section, key, required, out, SWORN_PCONF_PATH_MAX, "a path");
}

static int get_socket(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                      const char *key, int required, char *out)
{
    return get_path(x, map, section, key, required, out, SWORN_PCONF_SOCKET_MAX,
                    "a Unix socket path");
}

/*
 * A duration key in [min, max] ms (bounds, their spelling in messages: "100ms..60s"); absent:
 * *out keeps its default.
 */
struct span {
    uint64_t min, max;
    const char *shown;
};
#define SPAN(lo, lo_ms, hi, hi_ms) ((struct span){(lo_ms), (hi_ms), lo " and " hi})

static int get_duration(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                        const char *key, struct span b, uint64_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    uint64_t v;

    if (n == NULL)
        return 0;
    if (sworn_yaml_duration_ms(x->d, n, &v) < 0)
        return -1;
    if (v < b.min || v > b.max)
        return sworn_yaml_error(x->d, n, "%s.%s must be between %s", section, key, b.shown);
    *out = v;
    return 0;
}

/* An unsigned integer key in [min, max]; absent: *out keeps its default. */
static int get_u64(const struct ctx *x, const struct sworn_yaml_node *map, const char *key,
                   uint64_t min, uint64_t max, uint64_t *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);

    if (n == NULL)
        return 0;
    return sworn_yaml_u64(x->d, n, min, max, out);
}

static int get_size(const struct ctx *x, const struct sworn_yaml_node *map, const char *key,
                    uint64_t min, uint64_t max, size_t *out)
{
    uint64_t v = *out;

    if (get_u64(x, map, key, min, max, &v) < 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* One of the words in `words` (NULL-terminated): its index in *out. Absent: *out kept. */
static int get_word(const struct ctx *x, const struct sworn_yaml_node *map, const char *section,
                    const char *key, const char *const *words, const char *expected, int *out)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(map, key);
    const char *s;

    if (n == NULL)
        return 0;
    if (sworn_yaml_str(x->d, n, &s) < 0)
        return -1;
    for (int i = 0; words[i] != NULL; i++)
        if (strcmp(s, words[i]) == 0) {
            *out = i;
            return 0;
        }
    return sworn_yaml_error(x->d, n, "%s.%s must be %s", section, key, expected);
}

/* A sequence node of at most max items. */
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

/* Text made of decimal digits only, without a leading zero unless it is "0". */
static int canonical_decimal(const char *s, size_t len)
{
    if (len == 0 || (len > 1 && s[0] == '0'))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* A scalar that names a number: starts with a digit (a user or group name never does here). */
static int looks_numeric(const char *s)
{
    return s[0] >= '0' && s[0] <= '9';
}

/* --- identities ------------------------------------------------------------------------------ */

/* A uid: decimal, or a user name resolved now. (uid_t)-1 means "no uid" to setresuid and chown,
 * so it is never one. */
static int read_uid(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                    uid_t *out)
{
    const char *s;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (looks_numeric(s)) {
        uint64_t v;

        SWORN_GUARD(sworn_yaml_u64(x->d, n, 0, (uid_t)-2, &v));
        *out = (uid_t)v;
    } else {
        struct passwd *pw;

        if (s[0] == '\0')
            return sworn_yaml_error(x->d, n, "%s: empty user name", key);
        errno = 0;
        pw = getpwnam(s);
        if (pw == NULL)
            return sworn_yaml_error(x->d, n, "%s: no such user", key);
        *out = pw->pw_uid;
    }
    return 0;
fail:
    return -1;
}

/* A group: decimal gid or a group name resolved now ((gid_t)-1 is never a group). */
static int read_gid(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                    gid_t *out)
{
    const char *s;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (looks_numeric(s)) {
        uint64_t v;

        SWORN_GUARD(sworn_yaml_u64(x->d, n, 0, (gid_t)-2, &v));
        *out = (gid_t)v;
    } else {
        struct group *gr;

        if (s[0] == '\0')
            return sworn_yaml_error(x->d, n, "%s: empty group name", key);
        errno = 0;
        gr = getgrnam(s);
        if (gr == NULL)
            return sworn_yaml_error(x->d, n, "%s: no such group", key);
        *out = gr->gr_gid;
    }
    return 0;
fail:
    return -1;
}

/* user: a name or a uid, which must be a user of the system (the proxy needs its primary gid). */
static int read_user(struct ctx *x)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(sworn_yaml_root(x->d), "user");
    struct sworn_pconf *c = x->c;
    struct passwd *pw;
    uid_t uid;

    if (n == NULL)
        return 0;
    SWORN_GUARD(read_uid(x, n, "user", &uid));
    errno = 0;
    pw = getpwuid(uid);
    if (pw == NULL)
        return sworn_yaml_error(x->d, n, "user: no user has uid %lu", (unsigned long)uid);
    if (strlen(pw->pw_name) > SWORN_PCONF_USER_MAX)
        return sworn_yaml_error(x->d, n, "user: a user name is at most %u bytes",
                                SWORN_PCONF_USER_MAX);
    memcpy(c->user, pw->pw_name, strlen(pw->pw_name) + 1);
    c->uid = pw->pw_uid;
    c->gid = pw->pw_gid;
    c->has_user = 1;
    return 0;
fail:
    return -1;
}

/* Whether uid is in group gid: its primary group, or a listed member. */
static int in_group(uid_t uid, gid_t gid)
{
    struct passwd *pw = getpwuid(uid);
    struct group *gr;
    char name[256];

    if (pw == NULL || strlen(pw->pw_name) >= sizeof(name))
        return 0;
    if (pw->pw_gid == gid)
        return 1;
    snprintf(name, sizeof(name), "%s", pw->pw_name); /* getgrgid may reuse the buffer */
    gr = getgrgid(gid);
    for (char **mem = gr != NULL ? gr->gr_mem : NULL; mem != NULL && *mem != NULL; mem++)
        if (strcmp(*mem, name) == 0)
            return 1;
    return 0;
}

/* --- listeners ------------------------------------------------------------------------------- */

/*
 * principal and sandbox: the wire's one rule for names (sworn_frame_name_ok: 1..128 bytes of
 * printable ASCII without space, 0x21..0x7e), so that every name the configuration accepts is
 * one a HostlinkHello and a request may carry; the loop below only says where it fails.
 */
_Static_assert(SWORN_PCONF_PRINCIPAL_MAX == SWORN_FRAME_NAME_MAX,
               "a configured name has the wire's bound");
static int read_ident(const struct ctx *x, const struct sworn_yaml_node *n, const char *key,
                      char *out)
{
    const char *s;
    size_t len;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    len = strlen(s);
    if (!sworn_frame_name_ok(s)) {
        if (len == 0 || len > SWORN_PCONF_PRINCIPAL_MAX)
            return sworn_yaml_error(x->d, n, "listen.%s: 1 to %u characters", key,
                                    SWORN_PCONF_PRINCIPAL_MAX);
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
                return sworn_yaml_error(x->d, n,
                                        "listen.%s: printable ASCII only, without spaces "
                                        "(character %zu is not)",
                                        key, i + 1);
    }
    memcpy(out, s, len + 1);
    return 0;
fail:
    return -1;
}

/* mode: "0600" or "0660", read as octal, the leading 0 optional. */
static int read_mode(const struct ctx *x, const struct sworn_yaml_node *n, unsigned *out)
{
    const char *s;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (strcmp(s, "0600") == 0 || strcmp(s, "600") == 0)
        *out = 0600;
    else if (strcmp(s, "0660") == 0 || strcmp(s, "660") == 0)
        *out = 0660;
    else
        return sworn_yaml_error(x->d, n,
                                "listen.mode must be \"0600\" or \"0660\" (octal): no other user "
                                "may open an agent's socket");
    return 0;
fail:
    return -1;
}

static int read_uid_list(const struct ctx *x, const struct sworn_yaml_node *n,
                         struct sworn_pconf_listener *l)
{
    SWORN_GUARD(need_seq(x, n, "listen.uids", SWORN_PCONF_UIDS_MAX));
    if (sworn_yaml_len(n) == 0)
        return sworn_yaml_error(x->d, n,
                                "listen.uids: at least one uid (leave the key out to serve any "
                                "peer that can open the socket)");
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        uid_t uid;

        SWORN_GUARD(read_uid(x, it, "listen.uids", &uid));
        for (size_t j = 0; j < l->nuids; j++)
            if (l->uids[j] == uid)
                return sworn_yaml_error(x->d, it, "listen.uids: uid %lu is listed twice",
                                        (unsigned long)uid);
        l->uids[l->nuids++] = uid;
    }
    return 0;
fail:
    return -1;
}

/*
 * The address of "IPV4:PORT" or "[IPV6]:PORT" (numeric only: a name would need a lookup and
 * could name anything; an IPv6 address needs its brackets). OUT: *family (4 or 6), addr (4 or
 * 16 bytes) and *port, the text after the colon (checked by read_port). 0, or -1: not that form.
 */
static int split_addr_port(const char *s, int *family, uint8_t addr[16], const char **port)
{
    char host[64];
    size_t hlen;

    if (s[0] == '[') {
        const char *close = strchr(s, ']');

        if (close == NULL || close[1] != ':')
            return -1;
        hlen = (size_t)(close - s - 1);
        if (hlen == 0 || hlen >= sizeof(host))
            return -1;
        memcpy(host, s + 1, hlen);
        host[hlen] = '\0';
        *port = close + 2;
        *family = 6;
        return inet_pton(AF_INET6, host, addr) == 1 ? 0 : -1;
    } else {
        const char *colon = strrchr(s, ':');

        if (colon == NULL)
            return -1;
        hlen = (size_t)(colon - s);
        if (hlen == 0 || hlen >= sizeof(host))
            return -1;
        memcpy(host, s, hlen);
        host[hlen] = '\0';
        *port = colon + 1;
        *family = 4;
        return strchr(host, ':') == NULL && inet_pton(AF_INET, host, addr) == 1 ? 0 : -1;
    }
}

/* A port's text: canonical decimal, 0..65535, in *v. 0, or -1. */
static int read_port(const char *port, unsigned long *v)
{
    *v = 0;
    if (!canonical_decimal(port, strlen(port)) || strlen(port) > 5)
        return -1;
    for (const char *p = port; *p != '\0'; p++)
        *v = *v * 10 + (unsigned long)(*p - '0');
    return *v <= 65535 ? 0 : -1;
}

/*
 * tcp: "ADDRESS:PORT", the address a loopback one (127.0.0.0/8, or ::1 written in brackets:
 * "[::1]:PORT"), the port decimal 0..65535 (0: the kernel picks one).
 */
static int read_tcp(const struct ctx *x, const struct sworn_yaml_node *n,
                    struct sworn_pconf_listener *l)
{
    const char *s, *port;
    uint8_t a[16];
    unsigned long v;
    int family;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    if (split_addr_port(s, &family, a, &port) != 0)
        goto syntax;
    if (family == 6 ? memcmp(a, &in6addr_loopback, 16) != 0 : a[0] != 127)
        goto not_loopback;
    l->family = family;
    if (read_port(port, &v) != 0)
        goto bad_port;
    l->port = (uint16_t)v;
    if (inet_ntop(l->family == 4 ? AF_INET : AF_INET6, a, l->address, sizeof(l->address)) == NULL)
        return sworn_err_set(SWORN_ERR_IO, "inet_ntop: %s", strerror(errno));
    return 0;
syntax:
    return sworn_yaml_error(x->d, n,
                            "listen.tcp: want \"127.0.0.1:PORT\" or \"[::1]:PORT\" (a numeric "
                            "address and a port)");
not_loopback:
    return sworn_yaml_error(x->d, n, "a TCP listener must be on loopback (development only)");
bad_port:
    return sworn_yaml_error(x->d, n, "listen.tcp: the port must be a decimal number 0..65535");
fail:
    return -1;
}

/* A key that only some kinds of listener take: refused on the others (it would be unused). */
static int only_for(const struct ctx *x, const struct sworn_yaml_node *m, const char *key, int ok,
                    const char *which)
{
    const struct sworn_yaml_node *n = sworn_yaml_get(m, key);

    if (n != NULL && !ok)
        return sworn_yaml_error(x->d, n, "listen.%s applies only to %s listeners", key, which);
    return 0;
}

static int read_listener(const struct ctx *x, const struct sworn_yaml_node *m,
                         struct sworn_pconf_listener *l)
{
    static const char *const keys[] = {"unix",      "hostlink", "tcp",   "principal",
                                       "sandbox",   "mode",     "group", "uids",
                                       "port_file", "tls",      NULL};
    static const char *const kinds[] = {"unix", "hostlink", "tcp"};
    const struct sworn_yaml_node *n, *kind_node = NULL;
    int sock;

    SWORN_GUARD(sworn_yaml_only_keys(x->d, m, keys));
    l->line = sworn_yaml_line(m);
    l->col = sworn_yaml_col(m);
    for (int i = 0; i < 3; i++) {
        n = sworn_yaml_get(m, kinds[i]);
        if (n == NULL)
            continue;
        if (kind_node != NULL)
            return sworn_yaml_error(x->d, n,
                                    "a listener has exactly one of unix, hostlink and tcp (this "
                                    "one also has %s)",
                                    kinds[l->kind - 1]);
        kind_node = n;
        l->kind = (enum sworn_pconf_listen_kind)(i + 1);
    }
    if (kind_node == NULL)
        return sworn_yaml_error(x->d, m, "a listener needs one of unix, hostlink and tcp");
    sock = l->kind != SWORN_PCONF_TCP;
    if (sock)
        SWORN_GUARD(path_of(x, kind_node,
                            l->kind == SWORN_PCONF_UNIX ? "listen.unix" : "listen.hostlink",
                            l->path, sizeof(l->path), "a Unix socket path"));
    else
        SWORN_GUARD(read_tcp(x, kind_node, l));
    n = sworn_yaml_get(m, "principal");
    if (n == NULL)
        return sworn_yaml_error(x->d, m,
                                "missing required key \"listen.principal\" (who every connection "
                                "on this listener is)");
    SWORN_GUARD(read_ident(x, n, "principal", l->principal));
    n = sworn_yaml_get(m, "sandbox");
    /* On the hostlink each connection's sandbox comes from sworn-run's relay (its HostlinkHello,
     * docs/proxy.md "The hostlink"): a configured one would be a second, conflicting source. */
    if (n != NULL && l->kind == SWORN_PCONF_HOSTLINK)
        return sworn_yaml_error(x->d, n,
                                "listen.sandbox is refused on a hostlink listener: each "
                                "connection's sandbox is named by sworn-run's hostlink hello");
    if (n != NULL)
        SWORN_GUARD(read_ident(x, n, "sandbox", l->sandbox));
    SWORN_GUARD(only_for(x, m, "mode", sock, "unix and hostlink"));
    SWORN_GUARD(only_for(x, m, "group", sock, "unix and hostlink"));
    SWORN_GUARD(only_for(x, m, "uids", sock, "unix and hostlink"));
    SWORN_GUARD(only_for(x, m, "port_file", !sock, "tcp"));
    SWORN_GUARD(only_for(x, m, "tls", !sock, "tcp"));
    if ((n = sworn_yaml_get(m, "tls")) != NULL)
        SWORN_GUARD(sworn_yaml_bool(x->d, n, &l->tls));
    l->mode = sock ? 0600 : 0;
    if ((n = sworn_yaml_get(m, "mode")) != NULL)
        SWORN_GUARD(read_mode(x, n, &l->mode));
    if ((n = sworn_yaml_get(m, "group")) != NULL) {
        SWORN_GUARD(read_gid(x, n, "listen.group", &l->group));
        l->has_group = 1;
    }
    if (l->mode == 0660 && !l->has_group)
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "mode"),
                                "listen.mode 0660 needs listen.group (the group whose members may "
                                "connect)");
    if (sock && l->mode == 0600 && l->has_group)
        return sworn_yaml_error(x->d, n,
                                "listen.group has no effect with mode 0600: set mode: \"0660\" or "
                                "leave group out");
    if ((n = sworn_yaml_get(m, "uids")) != NULL) {
        SWORN_GUARD(read_uid_list(x, n, l));
        /* With 0660 a listed peer must be able to open the socket at all. */
        for (size_t i = 0; l->has_group && i < l->nuids; i++)
            if (l->uids[i] != 0 && !in_group(l->uids[i], l->group))
                return sworn_yaml_error(x->d, sworn_yaml_item(n, i),
                                        "listen.uids: uid %lu is not in listen.group (gid %lu), so "
                                        "it could not connect",
                                        (unsigned long)l->uids[i], (unsigned long)l->group);
    }
    if ((n = sworn_yaml_get(m, "port_file")) != NULL)
        SWORN_GUARD(
            path_of(x, n, "listen.port_file", l->port_file, sizeof(l->port_file), "a path"));
    return 0;
fail:
    return -1;
}

/* The listener's node in the sequence (for messages about one listener's key). */
static const struct sworn_yaml_node *listener_key(const struct sworn_yaml_node *seq, size_t i,
                                                  const char *key)
{
    return sworn_yaml_get(sworn_yaml_item(seq, i), key);
}

/* No two listeners on one socket path, one TCP address and port (port 0 excepted: each gets its
 * own), or one port file. */
static int listeners_apart(const struct ctx *x, const struct sworn_yaml_node *seq)
{
    const struct sworn_pconf *c = x->c;

    for (size_t i = 0; i < c->nlisteners; i++) {
        const struct sworn_pconf_listener *a = &c->listeners[i];

        for (size_t j = 0; j < i; j++) {
            const struct sworn_pconf_listener *b = &c->listeners[j];

            if (a->kind != SWORN_PCONF_TCP && b->kind != SWORN_PCONF_TCP &&
                strcmp(a->path, b->path) == 0)
                return sworn_yaml_error(
                    x->d, listener_key(seq, i, a->kind == SWORN_PCONF_UNIX ? "unix" : "hostlink"),
                    "listen: %s is already the socket of the listener at line %u", a->path,
                    b->line);
            if (a->kind == SWORN_PCONF_TCP && b->kind == SWORN_PCONF_TCP && a->port != 0 &&
                a->port == b->port && strcmp(a->address, b->address) == 0)
                return sworn_yaml_error(x->d, listener_key(seq, i, "tcp"),
                                        "listen: %s port %u is already the listener at line %u",
                                        a->address, (unsigned)a->port, b->line);
            if (a->port_file[0] != '\0' && strcmp(a->port_file, b->port_file) == 0)
                return sworn_yaml_error(x->d, listener_key(seq, i, "port_file"),
                                        "listen: %s is already the port_file of the listener at "
                                        "line %u",
                                        a->port_file, b->line);
        }
    }
    return 0;
}

static int read_listen(struct ctx *x)
{
    const struct sworn_yaml_node *root = sworn_yaml_root(x->d);
    const struct sworn_yaml_node *seq = sworn_yaml_get(root, "listen");
    struct sworn_pconf *c = x->c;

    if (seq == NULL)
        return missing(x, root, "", "listen");
    SWORN_GUARD(need_seq(x, seq, "listen", SWORN_PCONF_LISTENERS_MAX));
    if (sworn_yaml_len(seq) == 0)
        return sworn_yaml_error(x->d, seq, "listen: at least one listener");
    for (size_t i = 0; i < sworn_yaml_len(seq); i++) {
        SWORN_GUARD(read_listener(x, sworn_yaml_item(seq, i), &c->listeners[i]));
        c->nlisteners++;
    }
    return listeners_apart(x, seq);
fail:
    return -1;
}

/* --- sections -------------------------------------------------------------------------------- */

static int read_decisiond(struct ctx *x)
{
    static const char *const keys[] = {"socket", "timeout", "escalation_max", NULL};
    const struct sworn_yaml_node *m;
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(section(x, "decisiond", 1, keys, &m));
    SWORN_GUARD(get_socket(x, m, "decisiond", "socket", 1, c->decision_socket));
    SWORN_GUARD(get_duration(x, m, "decisiond", "timeout",
                             SPAN("100ms", 100, "60s", 60 * MS_SECOND), &c->decision_timeout_ms));
    SWORN_GUARD(get_duration(x, m, "decisiond", "escalation_max",
                             SPAN("1s", MS_SECOND, "24h", MS_DAY), &c->escalation_max_ms));
    return 0;
fail:
    return -1;
}

static int read_ca(struct ctx *x)
{
    static const char *const keys[] = {"cert", "key", "leaf_lifetime", "cache", NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_pconf *c = x->c;
    uint64_t ttl = (uint64_t)c->leaf_ttl_s * MS_SECOND;

    SWORN_GUARD(section(x, "ca", 1, keys, &m));
    SWORN_GUARD(get_file(x, m, "ca", "cert", 1, c->ca_cert));
    SWORN_GUARD(get_file(x, m, "ca", "key", 1, c->ca_key));
    if (strcmp(c->ca_cert, c->ca_key) == 0)
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "key"),
                                "ca.key must be a file of its own (readable by the proxy's user "
                                "only), not the certificate's");
    SWORN_GUARD(get_duration(x, m, "ca", "leaf_lifetime",
                             SPAN("5m", 5 * MS_MINUTE, "7d", 7 * MS_DAY), &ttl));
    n = sworn_yaml_get(m, "leaf_lifetime");
    if (ttl % MS_SECOND != 0)
        return sworn_yaml_error(x->d, n, "ca.leaf_lifetime must be a whole number of seconds");
    c->leaf_ttl_s = (unsigned)(ttl / MS_SECOND);
    SWORN_GUARD(get_size(x, m, "cache", 1, 65536, &c->leaf_cache));
    return 0;
fail:
    return -1;
}

/* "ADDRESS/PREFIX", the address's bits after the prefix all zero. */
static int read_cidr(const struct ctx *x, const struct sworn_yaml_node *n,
                     struct sworn_pconf_cidr *out)
{
    const char *s, *slash;
    char host[64];
    size_t hlen, plen;
    unsigned max, prefix = 0;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    memset(out, 0, sizeof(*out));
    slash = strrchr(s, '/');
    if (slash == NULL)
        return sworn_yaml_error(x->d, n,
                                "upstream.allow_private: want ADDRESS/PREFIX (\"10.0.0.0/8\", "
                                "\"fd00::/8\"; one address: \"10.1.2.3/32\")");
    hlen = (size_t)(slash - s);
    if (hlen == 0 || hlen >= sizeof(host))
        goto bad_addr;
    memcpy(host, s, hlen);
    host[hlen] = '\0';
    if (inet_pton(AF_INET, host, out->addr) == 1) {
        out->family = 4;
        max = 32;
    } else if (inet_pton(AF_INET6, host, out->addr) == 1) {
        out->family = 6;
        max = 128;
    } else
        goto bad_addr;
    plen = strlen(slash + 1);
    if (!canonical_decimal(slash + 1, plen) || plen > 3)
        goto bad_prefix;
    for (size_t i = 0; i < plen; i++)
        prefix = prefix * 10 + (unsigned)(slash[1 + i] - '0');
    if (prefix > max)
        goto bad_prefix;
    out->prefix = prefix;
    for (unsigned bit = prefix; bit < max; bit++)
        if (out->addr[bit / 8] & (0x80u >> (bit % 8))) {
            uint8_t net[16];
            char shown[INET6_ADDRSTRLEN];

            memcpy(net, out->addr, sizeof(net));
            for (unsigned b = prefix; b < max; b++)
                net[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
            inet_ntop(out->family == 4 ? AF_INET : AF_INET6, net, shown, sizeof(shown));
            return sworn_yaml_error(x->d, n,
                                    "upstream.allow_private: %s has host bits set (the network "
                                    "is %s/%u)",
                                    s, shown, prefix);
        }
    return 0;
bad_addr:
    return sworn_yaml_error(x->d, n,
                            "upstream.allow_private: \"%.*s\" is not a numeric IPv4 or IPv6 "
                            "address",
                            (int)(hlen < 64 ? hlen : 64), s);
bad_prefix:
    return sworn_yaml_error(x->d, n,
                            "upstream.allow_private: the prefix length must be a decimal number "
                            "0..%u for IPv%d",
                            out->family == 4 ? 32u : 128u, out->family);
fail:
    return -1;
}

/*
 * One resolver: "IPV4:PORT" or "[IPV6]:PORT", numeric (a name would need a resolver to find the
 * resolver), the port decimal 1..65535 and required (a resolver the runner of a conformance
 * probe serves is seldom on 53).
 */
static int read_nameserver(const struct ctx *x, const struct sworn_yaml_node *n,
                           struct sworn_pconf_nameserver *out)
{
    const char *s, *port;
    unsigned long v;
    int family;

    SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
    memset(out, 0, sizeof(*out));
    if (split_addr_port(s, &family, out->addr, &port) != 0)
        goto syntax;
    out->family = family;
    if (read_port(port, &v) != 0 || v == 0)
        goto bad_port;
    out->port = (uint16_t)v;
    return 0;
syntax:
    return sworn_yaml_error(x->d, n,
                            "upstream.nameservers: want \"IPV4:PORT\" or \"[IPV6]:PORT\" (a "
                            "numeric address and a port: \"127.0.0.1:53\", \"[::1]:5353\")");
bad_port:
    return sworn_yaml_error(x->d, n,
                            "upstream.nameservers: the port must be a decimal number 1..65535");
fail:
    return -1;
}

static int read_nameservers(struct ctx *x, const struct sworn_yaml_node *n)
{
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(need_seq(x, n, "upstream.nameservers", SWORN_PCONF_NAMESERVERS_MAX));
    if (sworn_yaml_len(n) == 0)
        return sworn_yaml_error(x->d, n,
                                "upstream.nameservers: at least one resolver (leave the key out "
                                "to use /etc/resolv.conf's)");
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        struct sworn_pconf_nameserver *r = &c->nameservers[i];

        SWORN_GUARD(read_nameserver(x, it, r));
        for (size_t j = 0; j < i; j++)
            if (c->nameservers[j].family == r->family && c->nameservers[j].port == r->port &&
                memcmp(c->nameservers[j].addr, r->addr, 16) == 0)
                return sworn_yaml_error(x->d, it, "upstream.nameservers: listed twice");
        c->nnameservers++;
    }
    return 0;
fail:
    return -1;
}

static int read_upstream(struct ctx *x)
{
    static const char *const keys[] = {"ca_file",       "connect_timeout", "response_timeout",
                                       "allow_private", "nameservers",     NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(section(x, "upstream", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_file(x, m, "upstream", "ca_file", 0, c->upstream_ca_file));
    SWORN_GUARD(get_duration(x, m, "upstream", "connect_timeout",
                             SPAN("100ms", 100, "5m", 5 * MS_MINUTE), &c->connect_timeout_ms));
    SWORN_GUARD(get_duration(x, m, "upstream", "response_timeout",
                             SPAN("100ms", 100, "1h", MS_HOUR), &c->upstream_timeout_ms));
    if ((n = sworn_yaml_get(m, "nameservers")) != NULL)
        SWORN_GUARD(read_nameservers(x, n));
    n = sworn_yaml_get(m, "allow_private");
    if (n == NULL)
        return 0;
    SWORN_GUARD(need_seq(x, n, "upstream.allow_private", SWORN_PCONF_CIDRS_MAX));
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        struct sworn_pconf_cidr *r = &c->allow_private[i];

        SWORN_GUARD(read_cidr(x, it, r));
        for (size_t j = 0; j < i; j++)
            if (c->allow_private[j].family == r->family &&
                c->allow_private[j].prefix == r->prefix &&
                memcmp(c->allow_private[j].addr, r->addr, 16) == 0)
                return sworn_yaml_error(x->d, it, "upstream.allow_private: listed twice");
        c->nallow_private++;
    }
    return 0;
fail:
    return -1;
}

static int read_connect(struct ctx *x)
{
    static const char *const keys[] = {"raw_ports", "tls_wait", NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(section(x, "connect", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_duration(x, m, "connect", "tls_wait", SPAN("100ms", 100, "60s", 60 * MS_SECOND),
                             &c->tls_peek_ms));
    n = sworn_yaml_get(m, "raw_ports");
    if (n == NULL)
        return 0;
    SWORN_GUARD(need_seq(x, n, "connect.raw_ports", SWORN_PCONF_PORTS_MAX));
    for (size_t i = 0; i < sworn_yaml_len(n); i++) {
        const struct sworn_yaml_node *it = sworn_yaml_item(n, i);
        uint64_t v;

        SWORN_GUARD(sworn_yaml_u64(x->d, it, 0, 65535, &v));
        if (v == 0)
            return sworn_yaml_error(x->d, it, "connect.raw_ports: 0 is not a port (1..65535)");
        for (size_t j = 0; j < c->nraw_ports; j++)
            if (c->raw_ports[j] == v)
                return sworn_yaml_error(x->d, it, "connect.raw_ports: port %u is listed twice",
                                        (unsigned)v);
        c->raw_ports[c->nraw_ports++] = (uint16_t)v;
    }
    return 0;
fail:
    return -1;
}

static int read_limits(struct ctx *x)
{
    static const char *const keys[] = {"head", "headers", "body", "bodies", "connections", NULL};
    const struct sworn_yaml_node *m;
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(section(x, "limits", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_size(x, m, "head", 1024, 1048576, &c->head_max));
    SWORN_GUARD(get_size(x, m, "headers", 8, 128, &c->headers_max));
    SWORN_GUARD(get_u64(x, m, "body", 0, 1073741824, &c->body_max));
    SWORN_GUARD(get_u64(x, m, "bodies", 1048576, 17179869184ull, &c->bodies_max));
    SWORN_GUARD(get_size(x, m, "connections", 1, 65536, &c->connections_max));
    if (sworn_yaml_get(m, "bodies") == NULL && c->bodies_max < c->body_max)
        c->bodies_max = c->body_max; /* the default never turns away one body limits.body allows */
    if (c->bodies_max < c->body_max)
        return sworn_yaml_error(
            x->d, sworn_yaml_get(m, "bodies") != NULL ? sworn_yaml_get(m, "bodies") : m,
            "limits.bodies (%llu) must be at least limits.body (%llu)",
            (unsigned long long)c->bodies_max, (unsigned long long)c->body_max);
    return 0;
fail:
    return -1;
}

static int read_timeouts(struct ctx *x)
{
    static const char *const keys[] = {"head", "body", "idle", NULL};
    const struct sworn_yaml_node *m;
    struct sworn_pconf *c = x->c;

    SWORN_GUARD(section(x, "timeouts", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_duration(x, m, "timeouts", "head", SPAN("100ms", 100, "1h", MS_HOUR),
                             &c->head_timeout_ms));
    SWORN_GUARD(get_duration(x, m, "timeouts", "body", SPAN("100ms", 100, "1h", MS_HOUR),
                             &c->body_timeout_ms));
    SWORN_GUARD(get_duration(x, m, "timeouts", "idle", SPAN("100ms", 100, "1h", MS_HOUR),
                             &c->idle_timeout_ms));
    return 0;
fail:
    return -1;
}

/* RFC 9110 section 5.6.2: tchar. */
static int is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

/*
 * Header fields the proxy removes before it forwards (hop-by-hop, Proxy-*) or that frame the
 * request: a delegation token there would be gone or would change what the request is.
 */
static int reserved_header(const char *lower)
{
    static const char *const names[] = {"connection", "keep-alive",        "te",
                                        "trailer",    "transfer-encoding", "upgrade",
                                        "host",       "content-length",    NULL};

    if (strncmp(lower, "proxy-", 6) == 0)
        return 1;
    for (size_t i = 0; names[i] != NULL; i++)
        if (strcmp(lower, names[i]) == 0)
            return 1;
    return 0;
}

static int read_delegation(struct ctx *x)
{
    static const char *const keys[] = {"header", "verify_key", "jwks", NULL};
    const struct sworn_yaml_node *m, *n;
    struct sworn_pconf *c = x->c;
    const char *s;
    size_t len;

    SWORN_GUARD(section(x, "delegation", 0, keys, &m));
    if (m == NULL)
        return 0;
    n = sworn_yaml_get(m, "header");
    if (n != NULL) {
        SWORN_GUARD(sworn_yaml_str(x->d, n, &s));
        len = strlen(s);
        if (len == 0 || len > SWORN_PCONF_HEADER_MAX)
            return sworn_yaml_error(x->d, n, "delegation.header: 1 to %u characters",
                                    SWORN_PCONF_HEADER_MAX);
        for (size_t i = 0; i < len; i++) {
            unsigned char ch = (unsigned char)s[i];

            if (!is_tchar(ch))
                return sworn_yaml_error(x->d, n,
                                        "delegation.header: not a header field name (letters, "
                                        "digits and !#$%%&'*+-.^_`|~ only; character %zu is not)",
                                        i + 1);
            c->delegation_header[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        c->delegation_header[len] = '\0';
        if (reserved_header(c->delegation_header))
            return sworn_yaml_error(x->d, n,
                                    "delegation.header: \"%s\" is removed by the proxy or frames "
                                    "the request; name another header",
                                    c->delegation_header);
    }
    SWORN_GUARD(get_file(x, m, "delegation", "verify_key", 0, c->delegation_verify_key));
    if (c->delegation_verify_key[0] != '\0' && c->delegation_header[0] == '\0')
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "verify_key"),
                                "delegation.verify_key needs delegation.header (where the token "
                                "is)");
    SWORN_GUARD(get_file(x, m, "delegation", "jwks", 0, c->delegation_jwks));
    if (c->delegation_jwks[0] != '\0' && c->delegation_header[0] == '\0')
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "jwks"),
                                "delegation.jwks needs delegation.header (where the token is)");
    if (c->delegation_jwks[0] != '\0' && c->delegation_verify_key[0] != '\0')
        return sworn_yaml_error(x->d, sworn_yaml_get(m, "jwks"),
                                "delegation.jwks and delegation.verify_key: name one of them");
    return 0;
fail:
    return -1;
}

static int read_metrics(struct ctx *x)
{
    static const char *const keys[] = {"socket", NULL};
    const struct sworn_yaml_node *m;

    SWORN_GUARD(section(x, "metrics", 0, keys, &m));
    if (m == NULL)
        return 0;
    return get_socket(x, m, "metrics", "socket", 0, x->c->metrics_socket);
fail:
    return -1;
}

static int read_log(struct ctx *x)
{
    static const char *const keys[] = {"file", "level", NULL};
    static const char *const levels[] = {"info", "debug", NULL};
    const struct sworn_yaml_node *m;

    SWORN_GUARD(section(x, "log", 0, keys, &m));
    if (m == NULL)
        return 0;
    SWORN_GUARD(get_file(x, m, "log", "file", 0, x->c->log_path));
    return get_word(x, m, "log", "level", levels, "info or debug", &x->c->log_debug);
fail:
    return -1;
}

static int read_hardening(struct ctx *x)
{
    /* Indexed by enum sworn_seccomp_mode: off 0, log 1, enforce 2. */
    static const char *const modes[] = {"off", "log", "enforce", NULL};
    static const char *const keys[] = {"seccomp", NULL};
    const struct sworn_yaml_node *m;

    _Static_assert(SWORN_SECCOMP_OFF == 0 && SWORN_SECCOMP_LOG == 1 && SWORN_SECCOMP_ENFORCE == 2,
                   "modes[] is indexed by enum sworn_seccomp_mode");
    SWORN_GUARD(section(x, "hardening", 0, keys, &m));
    if (m == NULL)
        return 0;
    return get_word(x, m, "hardening", "seccomp", modes, "enforce, log or off",
                    &x->c->seccomp_mode);
fail:
    return -1;
}

/* A Unix socket path named twice (a listener, decisiond's socket, the metrics socket): one
 * would take the other's place, or the proxy would answer itself. */
static int sockets_apart(const struct ctx *x)
{
    const struct sworn_yaml_node *root = sworn_yaml_root(x->d);
    const struct sworn_yaml_node *seq = sworn_yaml_get(root, "listen");
    const struct sworn_pconf *c = x->c;

    for (size_t i = 0; i < c->nlisteners; i++) {
        const struct sworn_pconf_listener *l = &c->listeners[i];
        const char *key = l->kind == SWORN_PCONF_UNIX ? "unix" : "hostlink";

        if (l->kind == SWORN_PCONF_TCP)
            continue;
        if (strcmp(l->path, c->decision_socket) == 0)
            return sworn_yaml_error(x->d, listener_key(seq, i, key),
                                    "listen: %s is decisiond.socket", l->path);
        if (strcmp(l->path, c->metrics_socket) == 0)
            return sworn_yaml_error(x->d, listener_key(seq, i, key), "listen: %s is metrics.socket",
                                    l->path);
    }
    if (strcmp(c->metrics_socket, c->decision_socket) == 0)
        return sworn_yaml_error(x->d, sworn_yaml_get(sworn_yaml_get(root, "metrics"), "socket"),
                                "metrics.socket: %s is decisiond.socket", c->metrics_socket);
    return 0;
}

/* Does the destination path prefix p cover the path (or prefix) x (p_dest.h's rule)? */
static int prefix_covers(const char *p, const char *x)
{
    size_t n = strlen(p);

    if (strncmp(x, p, n) != 0)
        return 0;
    return p[n - 1] == '/' || x[n] == '\0' || x[n] == '/';
}

/*
 * A token endpoint may not be a signing destination: the proxy rewrites its request body (a form
 * credential) and its answer after the decision, so the signature would cover a body upstream
 * never gets (docs/proxy.md, "OAuth token endpoints" and "Signatures upstream").
 */
static int signing_apart(const struct ctx *x)
{
    const struct sworn_pconf *c = x->c;

    for (size_t i = 0; i < c->oauth.n; i++)
        for (size_t j = 0; j < c->signing.n; j++) {
            const struct sworn_pdest *e = &c->oauth.endpoints[i], *s = &c->signing.dests[j];

            if (strcmp(e->scheme, s->scheme) == 0 && strcmp(e->host, s->host) == 0 &&
                e->port == s->port &&
                (prefix_covers(s->path, e->path) || prefix_covers(e->path, s->path)))
                return sworn_yaml_error(x->d, sworn_yaml_get(sworn_yaml_root(x->d), "signing"),
                                        "signing: %s://%s:%u%s is also an OAuth token endpoint "
                                        "(oauth.token_endpoints): its body is rewritten after "
                                        "the decision, so it cannot be signed",
                                        e->scheme, e->host, (unsigned)e->port, e->path);
        }
    return 0;
}

static int read_all(struct ctx *x)
{
    static const char *const top[] = {"user",    "listen",    "decisiond", "ca",         "upstream",
                                      "connect", "limits",    "timeouts",  "delegation", "metrics",
                                      "log",     "hardening", "mcp",       "signing",    "oauth",
                                      "models",  NULL};

    SWORN_GUARD(sworn_yaml_only_keys(x->d, sworn_yaml_root(x->d), top));
    SWORN_GUARD(read_user(x));
    SWORN_GUARD(read_listen(x));
    SWORN_GUARD(read_decisiond(x));
    SWORN_GUARD(read_ca(x));
    SWORN_GUARD(read_upstream(x));
    SWORN_GUARD(read_connect(x));
    SWORN_GUARD(read_limits(x));
    SWORN_GUARD(read_timeouts(x));
    SWORN_GUARD(read_delegation(x));
    SWORN_GUARD(read_metrics(x));
    SWORN_GUARD(read_log(x));
    SWORN_GUARD(read_hardening(x));
    SWORN_GUARD(
        sworn_pmcp_conf_read(x->d, sworn_yaml_get(sworn_yaml_root(x->d), "mcp"), &x->c->mcp));
    SWORN_GUARD(sworn_psign_read(x->d, &x->c->signing));
    SWORN_GUARD(sworn_poauth_conf_read(x->d, sworn_yaml_root(x->d), &x->c->oauth));
    SWORN_GUARD(signing_apart(x));
    SWORN_GUARD(sworn_pmodel_conf_read(x->d, sworn_yaml_get(sworn_yaml_root(x->d), "models"),
                                       &x->c->models));
    SWORN_GUARD(sockets_apart(x));
    return 0;
fail:
    return -1;
}

static void set_defaults(struct sworn_pconf *c)
{
    c->decision_timeout_ms = DEFAULT_DECISION_TIMEOUT_MS;
    c->escalation_max_ms = DEFAULT_ESCALATION_MAX_MS;
    c->leaf_ttl_s = DEFAULT_LEAF_TTL_S;
    c->leaf_cache = DEFAULT_LEAF_CACHE;
    c->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
    c->upstream_timeout_ms = DEFAULT_RESPONSE_TIMEOUT_MS;
    c->tls_peek_ms = DEFAULT_TLS_WAIT_MS;
    c->head_max = DEFAULT_HEAD_MAX;
    c->headers_max = DEFAULT_HEADERS_MAX;
    c->body_max = DEFAULT_BODY_MAX;
    c->bodies_max = DEFAULT_BODIES_MAX;
    c->connections_max = DEFAULT_CONNECTIONS_MAX;
    c->head_timeout_ms = DEFAULT_HEAD_TIMEOUT_MS;
    c->body_timeout_ms = DEFAULT_BODY_TIMEOUT_MS;
    c->idle_timeout_ms = DEFAULT_IDLE_TIMEOUT_MS;
    c->log_debug = 0;
    c->seccomp_mode = SWORN_SECCOMP_ENFORCE;
}

int sworn_pconf_load_mem(const char *name, const uint8_t *p, size_t len, struct sworn_pconf *out)
{
    struct sworn_yaml_doc *d = NULL;
    struct ctx x = {NULL, NULL};

    SWORN_ENSURE(name != NULL && (p != NULL || len == 0) && out != NULL, SWORN_ERR_ARG,
                 "proxy config: NULL argument");
    SWORN_ENSURE(strlen(name) < SWORN_PCONF_PATH_MAX, SWORN_ERR_RANGE,
                 "proxy config: a path is at most %u bytes", SWORN_PCONF_PATH_MAX - 1);
    SWORN_GUARD(sworn_yaml_load_mem(name, p, len, &d));
    x.d = d;
    x.c = calloc(1, sizeof(*x.c));
    SWORN_ENSURE(x.c != NULL, SWORN_ERR_NOMEM, "out of memory");
    memcpy(x.c->path, name, strlen(name) + 1);
    sworn_yaml_digest(d, x.c->digest);
    set_defaults(x.c);
    SWORN_GUARD(read_all(&x));
    memcpy(out, x.c, sizeof(*out));
    free(x.c);
    sworn_yaml_free(d);
    return 0;
fail:
    free(x.c);
    sworn_yaml_free(d);
    return -1;
}

int sworn_pconf_load(const char *path, struct sworn_pconf *out)
{
    char *bytes = NULL;
    size_t n = 0;
    int rc;

    if (path == NULL || out == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "proxy config: NULL argument");
    /* The checked open (safefile.h): the file says who may connect and where the CA key is. */
    if (sworn_safefile_read(path, 0, SWORN_SAFEFILE_NOBODY, "configuration", SWORN_YAML_MAX_BYTES,
                            &bytes, &n) < 0)
        return -1;
    rc = sworn_pconf_load_mem(path, (const uint8_t *)bytes, n, out);
    free(bytes);
    return rc;
}

/* --- checks against the file system ---------------------------------------------------------- */

/* path is an existing regular file (dir 0) or folder (dir 1). */
static int need_kind(const struct sworn_pconf *c, const char *key, const char *path, int dir)
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

/* The folder path is in exists; and path itself, when it exists, is of the kind wanted (a socket
 * the proxy will replace, or a regular file it will overwrite). */
static int need_parent(const struct sworn_pconf *c, const char *key, const char *path,
                       int want_socket)
{
    char copy[SWORN_PCONF_PATH_MAX];
    struct stat st;

    snprintf(copy, sizeof(copy), "%s", path);
    SWORN_GUARD(need_kind(c, key, dirname(copy), 1));
    if (lstat(path, &st) == 0 && (want_socket ? !S_ISSOCK(st.st_mode) : !S_ISREG(st.st_mode)))
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s exists and is not a %s", c->path, key, path,
                             want_socket ? "socket" : "regular file");
    return 0;
fail:
    return -1;
}

/* --- the proxy's own files: the log and the port files -----------------------------------------
 */

int sworn_pconf_file_dir(const char *path, const char *what, int *dirfd, char *base)
{
    char folder[SWORN_PCONF_PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t flen;

    *dirfd = -1;
    if (slash == NULL || slash[1] == '\0' || strlen(slash + 1) > NAME_MAX ||
        strcmp(slash + 1, ".") == 0 || strcmp(slash + 1, "..") == 0)
        return sworn_err_set(SWORN_ERR_ARG, "%s %s: does not name a file in a folder", what, path);
    flen = (size_t)(slash - path);
    if (flen >= sizeof(folder))
        return sworn_err_set(SWORN_ERR_RANGE, "%s %s: path too long", what, path);
    if (flen == 0) {
        folder[0] = '/';
        folder[1] = '\0';
    } else {
        memcpy(folder, path, flen);
        folder[flen] = '\0';
    }
    /* safefile.h: no link on the way, every folder root's or ours and not writable by group or
     * others (sticky only on the way), and the folder itself writable by its owner only: nobody
     * else can put a file, a link or a FIFO under the name between our check and our use. */
    SWORN_GUARD(sworn_safefile_opendir(folder, 0, what, dirfd));
    memcpy(base, slash + 1, strlen(slash + 1) + 1);
    return 0;
fail:
    return -1;
}

/* The log file as found (st, from fstat or fstatat without following a link) is one only root and
 * the proxy can read in full or write: else others read every URL line or forge lines. */
static int log_stat_ok(const char *path, const struct stat *st)
{
    uid_t me = geteuid();

    if (!S_ISREG(st->st_mode))
        return sworn_err_set(SWORN_ERR_IO, "log.file %s is not a regular file", path);
    if (st->st_uid != 0 && st->st_uid != me)
        return sworn_err_set(SWORN_ERR_IO,
                             "log.file %s is owned by uid %lu, not by root or uid %lu: remove it "
                             "(the proxy makes it, mode 0640) or chown it",
                             path, (unsigned long)st->st_uid, (unsigned long)me);
    if (st->st_nlink != 1)
        return sworn_err_set(SWORN_ERR_IO,
                             "log.file %s has %lu links: another name may reach it; remove it "
                             "(the proxy makes it, mode 0640)",
                             path, (unsigned long)st->st_nlink);
    if ((st->st_mode & (S_IWGRP | S_IWOTH | S_IROTH)) != 0)
        return sworn_err_set(SWORN_ERR_IO,
                             "log.file %s has mode %04o: group or others may write it or others "
                             "read it; chmod 0640 (or 0600) it",
                             path, (unsigned)(st->st_mode & 07777));
    return 0;
}

int sworn_pconf_open_log(const struct sworn_pconf *c, int *fd)
{
    char base[NAME_MAX + 1];
    struct stat st;
    int dfd = -1, f;

    *fd = -1;
    if (c->log_path[0] == '\0')
        return 0;
    SWORN_GUARD(sworn_pconf_file_dir(c->log_path, "log.file folder", &dfd, base));
    /* O_NONBLOCK: a FIFO under the name fails (ENXIO) rather than hangs; the mode is checked
     * below, after the open, on the descriptor that is then written. */
    f = openat(dfd, base, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
               0640);
    if (f < 0) {
        sworn_err_set(SWORN_ERR_IO, "log.file %s: %s", c->log_path, strerror(errno));
        goto fail;
    }
    if (fstat(f, &st) != 0) {
        sworn_err_set(SWORN_ERR_IO, "log.file %s: fstat: %s", c->log_path, strerror(errno));
        close(f);
        goto fail;
    }
    if (log_stat_ok(c->log_path, &st) != 0) {
        close(f);
        goto fail;
    }
    close(dfd);
    *fd = f;
    return 0;
fail:
    if (dfd >= 0)
        close(dfd);
    return -1;
}

/* check: path's folder as sworn_pconf_file_dir wants it; an existing log file as
 * sworn_pconf_open_log wants it (log 1), or an existing port file a regular file (log 0). */
static int check_own_file(const struct sworn_pconf *c, const char *key, const char *path, int log)
{
    char base[NAME_MAX + 1];
    struct stat st;
    int dfd = -1;

    if (sworn_pconf_file_dir(path, log ? "log.file folder" : "port file folder", &dfd, base) != 0)
        return sworn_err_set(sworn_err_code(), "%s: %s: %s", c->path, key, sworn_err_msg());
    if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (log && log_stat_ok(path, &st) != 0) {
            close(dfd);
            return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s", c->path, key, sworn_err_msg());
        }
    } else if (errno != ENOENT) {
        int e = errno;

        close(dfd);
        return sworn_err_set(SWORN_ERR_IO, "%s: %s: %s: %s", c->path, key, path, strerror(e));
    }
    close(dfd);
    return 0;
}

/* --- warnings: legal settings that weaken the proxy ---------------------------------------- */

static void warnf(size_t *n, sworn_pconf_warn_fn fn, void *arg, const char *key, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));

static void warnf(size_t *n, sworn_pconf_warn_fn fn, void *arg, const char *key, const char *fmt,
                  ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    (*n)++;
    if (fn != NULL)
        fn(arg, key, msg);
}

/* Whether r is an IPv6 range inside ::ffff:0:0/96 (the IPv4-mapped addresses). */
static int cidr_is_mapped(const struct sworn_pconf_cidr *r)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    return r->family == 6 && r->prefix >= 96 && memcmp(r->addr, mapped, sizeof(mapped)) == 0;
}

size_t sworn_pconf_warnings(const struct sworn_pconf *c, uid_t euid, sworn_pconf_warn_fn fn,
                            void *arg)
{
    size_t n = 0;

    if (c == NULL)
        return 0;
    if (!c->has_user && euid == 0)
        warnf(&n, fn, arg, "user",
              "no user: the proxy is running as root (every agent connection is served by a root "
              "process); set user: to an unprivileged user");
    else if (c->has_user && c->uid == 0)
        warnf(&n, fn, arg, "user",
              "user: %s is uid 0: the proxy is running as root (every agent connection is served "
              "by a root process); name an unprivileged user",
              c->user);
    if (c->seccomp_mode == SWORN_SECCOMP_LOG)
        warnf(&n, fn, arg, "hardening.seccomp",
              "seccomp is log: system calls outside the proxy's list are allowed (only logged)");
    else if (c->seccomp_mode == SWORN_SECCOMP_OFF)
        warnf(&n, fn, arg, "hardening.seccomp", "seccomp is off: no system call filter");
    for (size_t i = 0; i < c->nallow_private; i++) {
        const struct sworn_pconf_cidr *r = &c->allow_private[i];
        char text[INET6_ADDRSTRLEN];
        int broad;

        if (r->family == 4)
            broad = r->prefix < 8;
        else if (cidr_is_mapped(r))
            broad = r->prefix < 96 + 8; /* IPv4 through the mapped form */
        else
            broad = r->prefix < 16;
        if (!broad)
            continue;
        if (inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->addr, text, sizeof(text)) == NULL)
            snprintf(text, sizeof(text), "?");
        warnf(&n, fn, arg, "upstream.allow_private",
              "allow_private %s/%u is broad (shorter than /%u): allowed names may reach "
              "internal addresses in all of it (DNS rebinding, metadata services)",
              text, r->prefix, r->family == 4 ? 8u : (cidr_is_mapped(r) ? 104u : 16u));
    }
    for (size_t i = 0; i < c->nlisteners; i++) {
        const struct sworn_pconf_listener *l = &c->listeners[i];

        if (l->kind == SWORN_PCONF_HOSTLINK && l->nuids == 0)
            warnf(&n, fn, arg, "listen.hostlink",
                  "hostlink listener %s (line %u) has no uids: any peer that can open the socket "
                  "may send a hostlink hello and name any sandbox of principal %s (list "
                  "sworn-run's uid in uids)",
                  l->path, l->line, l->principal);
        if (l->kind == SWORN_PCONF_TCP)
            warnf(&n, fn, arg, "listen.tcp",
                  "tcp listener %s%s%s:%u (line %u): any local user can connect as principal %s "
                  "(a TCP peer has no uid to check)",
                  l->family == 6 ? "[" : "", l->address, l->family == 6 ? "]" : "",
                  (unsigned)l->port, l->line, l->principal);
    }
    return n;
}

int sworn_pconf_check(const struct sworn_pconf *c)
{
    uint8_t *key = NULL;
    size_t len = 0;
    int rc;

    if (c == NULL)
        return sworn_err_set(SWORN_ERR_ARG, "proxy config: NULL argument");
    SWORN_GUARD(need_kind(c, "ca.cert", c->ca_cert, 0));
    /* The CA key signs every leaf a sandbox trusts: a secret file, which root checks as the
     * proxy's user's (it may own it). */
    key = malloc(CA_KEY_MAX);
    SWORN_ENSURE(key != NULL, SWORN_ERR_NOMEM, "out of memory");
    rc = sworn_secretfile_read_owned(
        c->ca_key, "CA key", c->has_user ? c->uid : SWORN_SAFEFILE_NOBODY, key, CA_KEY_MAX, &len);
    sworn_memzero(key, CA_KEY_MAX);
    free(key);
    key = NULL;
    if (rc < 0)
        return sworn_err_set(sworn_err_code(), "%s: ca.key: %s", c->path, sworn_err_msg());
    if (c->upstream_ca_file[0] != '\0')
        SWORN_GUARD(need_kind(c, "upstream.ca_file", c->upstream_ca_file, 0));
    if (c->delegation_verify_key[0] != '\0')
        SWORN_GUARD(need_kind(c, "delegation.verify_key", c->delegation_verify_key, 0));
    if (c->delegation_jwks[0] != '\0')
        SWORN_GUARD(need_kind(c, "delegation.jwks", c->delegation_jwks, 0));
    for (size_t i = 0; i < c->nlisteners; i++) {
        const struct sworn_pconf_listener *l = &c->listeners[i];

        if (l->kind == SWORN_PCONF_TCP && l->port_file[0] != '\0') {
            SWORN_GUARD(need_parent(c, "listen.port_file", l->port_file, 0));
            SWORN_GUARD(check_own_file(c, "listen.port_file", l->port_file, 0));
        }
        if (l->kind != SWORN_PCONF_TCP)
            SWORN_GUARD(need_parent(
                c, l->kind == SWORN_PCONF_UNIX ? "listen.unix" : "listen.hostlink", l->path, 1));
    }
    SWORN_GUARD(need_parent(c, "decisiond.socket", c->decision_socket, 1));
    if (c->metrics_socket[0] != '\0')
        SWORN_GUARD(need_parent(c, "metrics.socket", c->metrics_socket, 1));
    if (c->log_path[0] != '\0') {
        SWORN_GUARD(need_parent(c, "log.file", c->log_path, 0));
        SWORN_GUARD(check_own_file(c, "log.file", c->log_path, 1));
    }
    if (c->has_user && getpwuid(c->uid) == NULL)
        return sworn_err_set(SWORN_ERR_NOTFOUND, "%s: user: no user has uid %lu", c->path,
                             (unsigned long)c->uid);
    return 0;
fail:
    free(key);
    return -1;
}
