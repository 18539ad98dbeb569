/*
 * p_config.h -- sworn-proxy's configuration file: YAML (read through policy/yamldoc.h), its shape,
 * defaults and bounds, and the checks of what it names against the file system.
 *
 * docs/proxy.md ("Configuration") is the operator's reference: every key, its type, default,
 * bounds and every refusal; proxy/examples/proxy.yaml shows every key, commented. In short:
 *
 *     user: NAME-or-UID
 *     listen:   [ {unix|hostlink: PATH, principal, sandbox, mode, group, uids},
 *                 {tcp: "127.0.0.1:PORT", principal, sandbox, port_file, tls} ]   (1..16)
 *     decisiond: {socket, timeout: 5s, escalation_max: 10m}
 *     ca:        {cert, key, leaf_lifetime: 1h, cache: 1024}
 *     upstream:  {ca_file, connect_timeout: 10s, response_timeout: 60s, allow_private: [CIDR],
 *                 nameservers: ["ADDRESS:PORT"]}
 *     connect:   {raw_ports: [PORT], tls_wait: 5s}
 *     limits:    {head: 16384, headers: 100, body: 8388608, bodies: 268435456, connections: 1024}
 *     timeouts:  {head: 30s, body: 60s, idle: 60s}
 *     delegation: {header, verify_key, jwks}
 *     metrics:   {socket}
 *     log:       {file, level: info|debug}
 *     hardening: {seccomp: enforce|log|off}
 *     mcp:       [URL]   (the MCP servers, p_mcp.h)
 *     oauth:     {token_endpoints: [URL], response_max: 65536}   (p_oauth.h)
 *
 * Loading is syntax and shape, plus what must be resolved once at start: unknown keys anywhere
 * are refused (a misspelt key must never be silently ignored), duplicate keys are refused
 * (yamldoc.h), values are checked against their bounds, every path must be absolute (it is
 * cleaned lexically: repeated slashes and "." segments dropped, ".." removes the segment before
 * it; symbolic links are not followed), user and group names are resolved with getpwnam and
 * getgrnam, and the listeners are checked against each other (no two on one path, one address
 * and port, one port file). Every error reads "<file>:<line>:<col>: <message>"; errors about the
 * file as a whole (it cannot be read, it is too large, a folder on its path is writable by
 * others) name only the file.
 *
 * Checking (sworn_pconf_check) looks at the file system: the CA certificate and every other file
 * named is a regular file, the CA key is a secret file (0600 or stricter, owned by root, the
 * caller or the proxy's user: common/secretfile.h), and the folder of every socket, the port
 * files and the log file exists, and the folders of the log file and the port files are root's or
 * the caller's and writable by their owner only (sworn_pconf_file_dir), and an existing log file
 * passes the checks of sworn_pconf_open_log. `sworn-proxy --check-config --config FILE` runs
 * both, then prints the warnings (sworn_pconf_warnings).
 *
 * Memory: the structure is fixed-size and self-contained (no pointer in it), so a caller may copy
 * it and needs no free; it is large (about 100 KiB), so keep it off small stacks. Nothing in it is
 * secret (the CA key stays in its file). Thread safety: a loaded configuration is immutable and
 * may be read by many threads; load and check use getpwnam and getgrnam, which are not
 * thread-safe, so call them before starting threads.
 */
#ifndef SWORN_P_CONFIG_H
#define SWORN_P_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "p_mcp.h"
#include "p_sign.h"
#include "p_oauth.h"
#include "p_model.h"

#define SWORN_PCONF_LISTENERS_MAX 16u
#define SWORN_PCONF_CIDRS_MAX 64u
#define SWORN_PCONF_NAMESERVERS_MAX 8u /* upstream.nameservers items */
#define SWORN_PCONF_PORTS_MAX 64u
#define SWORN_PCONF_UIDS_MAX 64u
#define SWORN_PCONF_PATH_MAX 4096u     /* a path, with its NUL */
#define SWORN_PCONF_SOCKET_MAX 108u    /* a Unix socket path, with its NUL (sun_path) */
#define SWORN_PCONF_PRINCIPAL_MAX 128u /* principal and sandbox, without the NUL */
#define SWORN_PCONF_HEADER_MAX 256u    /* delegation.header, without the NUL */
#define SWORN_PCONF_USER_MAX 64u       /* user, without the NUL */

enum sworn_pconf_listen_kind { SWORN_PCONF_UNIX = 1, SWORN_PCONF_HOSTLINK, SWORN_PCONF_TCP };

struct sworn_pconf_listener {
    enum sworn_pconf_listen_kind kind;
    char path[SWORN_PCONF_SOCKET_MAX]; /* UNIX, HOSTLINK: the socket path (absolute); "" for TCP */
    unsigned mode;    /* UNIX, HOSTLINK: socket file mode, 0600 (default) or 0660 */
    int has_group;    /* UNIX, HOSTLINK: `group:` given (required for 0660) */
    gid_t group;      /* its gid (a name is resolved at load) */
    char address[64]; /* TCP: the loopback address, as inet_ntop writes it */
    int family;       /* TCP: 4 or 6; 0 for the others */
    uint16_t port;    /* TCP: 0..65535 (0: the kernel picks) */
    char port_file[SWORN_PCONF_PATH_MAX]; /* TCP: where the bound port is written; "" none */
    int tls; /* TCP: clients speak TLS to the proxy (an HTTPS proxy; the leaf is the CA's) */
    char principal[SWORN_PCONF_PRINCIPAL_MAX + 1]; /* required; 1..128 bytes 0x21..0x7e */
    char sandbox[SWORN_PCONF_PRINCIPAL_MAX + 1];   /* optional (""); same characters; refused
                                                      on a hostlink (its hello names it) */
    uid_t uids[SWORN_PCONF_UIDS_MAX];              /* UNIX, HOSTLINK: peer uids allowed */
    size_t nuids;                                  /* 0: any peer that can open the socket */
    unsigned line, col;                            /* where the listener is in the file */
};

struct sworn_pconf_cidr {
    int family;       /* 4 or 6 */
    uint8_t addr[16]; /* the network, in network byte order (IPv4: the first 4 bytes; rest 0) */
    unsigned prefix;  /* 0..32 or 0..128; no bit set in addr after the prefix */
};

/* One resolver of upstream.nameservers: a numeric address and a port, as the proxy sends to it. */
struct sworn_pconf_nameserver {
    int family;       /* 4 or 6 */
    uint8_t addr[16]; /* network byte order (IPv4: the first 4 bytes; rest 0) */
    uint16_t port;    /* 1..65535 */
};

struct sworn_pconf {
    char path[SWORN_PCONF_PATH_MAX]; /* the file's path (load) or name (load_mem), as given */
    uint8_t digest[32];              /* SHA-256 of its bytes as read */
    int has_user;                    /* `user:` given: the proxy drops to it */
    char user[SWORN_PCONF_USER_MAX + 1];
    uid_t uid;
    gid_t gid; /* the user's name (also for a uid given as a number), uid and primary gid */
    struct sworn_pconf_listener listeners[SWORN_PCONF_LISTENERS_MAX];
    size_t nlisteners;                            /* 1..16 */
    char decision_socket[SWORN_PCONF_SOCKET_MAX]; /* decisiond.socket, required */
    uint64_t decision_timeout_ms;                 /* decisiond.timeout, default 5s, 100ms..60s */
    uint64_t escalation_max_ms; /* decisiond.escalation_max, default 10m, 1s..24h */
    char ca_cert[SWORN_PCONF_PATH_MAX], ca_key[SWORN_PCONF_PATH_MAX]; /* ca.cert, ca.key */
    unsigned leaf_ttl_s; /* ca.leaf_lifetime, default 1h, 5m..7d, whole seconds */
    size_t leaf_cache;   /* ca.cache, default 1024, 1..65536 */
    char upstream_ca_file[SWORN_PCONF_PATH_MAX]; /* "" = OpenSSL's default paths */
    uint64_t connect_timeout_ms;                 /* upstream.connect_timeout, 10s, 100ms..5m */
    uint64_t upstream_timeout_ms;                /* upstream.response_timeout, 60s, 100ms..1h */
    struct sworn_pconf_cidr allow_private[SWORN_PCONF_CIDRS_MAX];
    size_t nallow_private; /* upstream.allow_private, default none */
    /* upstream.nameservers: the resolvers the proxy asks, in order (0: /etc/resolv.conf's) */
    struct sworn_pconf_nameserver nameservers[SWORN_PCONF_NAMESERVERS_MAX];
    size_t nnameservers;
    uint16_t raw_ports[SWORN_PCONF_PORTS_MAX];
    size_t nraw_ports;      /* connect.raw_ports, 1..65535 each, default none */
    uint64_t tls_peek_ms;   /* connect.tls_wait, default 5s, 100ms..60s */
    size_t head_max;        /* limits.head, default 16384, 1024..1048576 */
    size_t headers_max;     /* limits.headers, default 100, 8..128 */
    uint64_t body_max;      /* limits.body, default 8388608, 0..1073741824 */
    uint64_t bodies_max;    /* limits.bodies: all bodies held at once, default 256 MiB,
                               1 MiB..16 GiB, at least limits.body */
    size_t connections_max; /* limits.connections, default 1024, 1..65536 */
    uint64_t head_timeout_ms, body_timeout_ms, idle_timeout_ms; /* 30s, 60s, 60s; 100ms..1h */
    char delegation_header[SWORN_PCONF_HEADER_MAX + 1];         /* lower-case field name; "" none */
    char delegation_verify_key[SWORN_PCONF_PATH_MAX]; /* "" = not verified (needs header) */
    char delegation_jwks[SWORN_PCONF_PATH_MAX];       /* "" none; not with verify_key (p_jwks.h) */
    char metrics_socket[SWORN_PCONF_SOCKET_MAX];      /* "" none */
    char log_path[SWORN_PCONF_PATH_MAX];              /* "" = stderr */
    int log_debug;                                    /* log.level: info 0, debug 1 */
    int seccomp_mode; /* enum sworn_seccomp_mode (common/seccomp.h), default ENFORCE */

    /* mcp: the MCP servers (p_mcp.h), default none */
    struct sworn_pmcp_conf mcp;
    struct sworn_psign_conf signing; /* signing: RFC 9421 signatures upstream (p_sign.h) */
    struct sworn_poauth_conf oauth;  /* oauth: the token endpoints (p_oauth.h) */
    struct sworn_pmodel_conf models; /* models: the model APIs (p_model.h); none by default */
};

/*
 * Read (with the checked open of common/safefile.h: the file names the CA key and who may
 * connect, so nobody but root and the caller may be able to change it) and check the file at
 * path, at most SWORN_YAML_MAX_BYTES. OUT: *out, fully written on success, untouched on failure.
 * Returns 0, or -1 with sworn_err set: SWORN_ERR_FORMAT with "<path>:<line>:<col>: <message>" for
 * anything wrong in the file; SWORN_ERR_NOTFOUND, SWORN_ERR_IO or SWORN_ERR_RANGE when the file
 * itself cannot be read or is refused; SWORN_ERR_ARG for a NULL argument.
 */
int sworn_pconf_load(const char *path, struct sworn_pconf *out);

/* The same from memory: name is used in messages and stored as out->path; p is not kept. */
int sworn_pconf_load_mem(const char *name, const uint8_t *p, size_t len, struct sworn_pconf *out);

/*
 * Check a loaded configuration against the file system (see the top of this file). Returns 0, or
 * -1 with sworn_err set to the first problem found: "<path>: <key>: <file>: <why>".
 */
int sworn_pconf_check(const struct sworn_pconf *c);

/*
 * Open the folder of path (a file the proxy writes: its log, a port file) with the checked walk of
 * common/safefile.h (sworn_safefile_opendir): no symbolic link on the way, every folder root's or
 * the effective uid's and not writable by group or others (sticky allowed on the way only), the
 * folder itself writable by its owner only. `what` names it in errors. OUT: *dirfd (close it;
 * -1 on failure), base (the file's name in it; capacity NAME_MAX + 1). Returns 0, or -1 with
 * sworn_err set (SWORN_ERR_ARG: path names no file in a folder; else as safefile.h).
 */
int sworn_pconf_file_dir(const char *path, const char *what, int *dirfd, char *base);

/*
 * Open log.file to append (O_APPEND, close-on-exec), made mode 0640 when missing, relative to its
 * checked folder (sworn_pconf_file_dir) without following a link; then, on the descriptor, it must
 * be a regular file owned by root or the effective uid, with one link, no write bit for group or
 * others and no read bit for others. OUT: *fd (-1 when log.file is not set: the log goes to
 * stderr). Returns 0, or -1 with sworn_err set naming the file, its mode or owner and the fix.
 * Call it before dropping privileges: the descriptor stays writable after the drop.
 */
int sworn_pconf_open_log(const struct sworn_pconf *c, int *fd);

/*
 * Settings that are legal but weaken the proxy, one call of fn (when not NULL) each, with the key
 * and a sentence: no `user:` while euid is 0, or a `user:` of uid 0 (the proxy runs as root);
 * hardening.seccomp log or
 * off; each upstream.allow_private range shorter than /8 (IPv4; also through ::ffff:0:0/96) or
 * /16 (IPv6); each hostlink listener without `uids` (any peer that can open the socket names the
 * sandbox in its hello); each TCP listener (any local user can connect as its principal).
 * Returns how many.
 */
typedef void (*sworn_pconf_warn_fn)(void *arg, const char *key, const char *message);
size_t sworn_pconf_warnings(const struct sworn_pconf *c, uid_t euid, sworn_pconf_warn_fn fn,
                            void *arg);

#endif
