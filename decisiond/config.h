/*
 * config.h -- sworn-decisiond's configuration file: YAML (read through yamldoc.h), its shape,
 * defaults and bounds, and the checks of what it names against the file system.
 *
 * docs/configuration.md is the operator's reference: every key, its default, its bounds and every
 * refusal. In short:
 *
 *     log:    { database: PATH, origin: TEXT, checkpoint_interval: 1s, export_dir: PATH }
 *     signer: { key: URI-or-PATH, module: PATH, pin_file: PATH, tcti: TEXT, pinned_spki:
 * HEX-or-PATH, user: NAME, timeout: 2s } keyring: PATH tpm:    { tcti: TEXT, required: false, pcrs:
 * [23, 0, 7], quote_min_interval: 1s, ak_handle: 0x8153574E, measure: [PATH, ...] } policy: PATH
 * vault: PATH escalation: { timeout: 5m, max_pending: 1000 } sockets: { decision: PATH, admin:
 * PATH, decision_group: NAME, admin_group: NAME } peers:  { proxy_uids: [1001], operator_uids: [0]
 * } run_as: NAME workers: 4 receipts: per-request|batch hardening: { seccomp: enforce|log|off }
 *
 * Loading (sworn_dconfig_load) is syntax and shape only, plus what must be resolved once at start:
 * unknown keys anywhere are errors (a misspelt key must never be silently ignored), values are
 * checked against their bounds, relative paths are made absolute against the folder of the
 * configuration file (lexically: "." and ".." segments are removed, symbolic links are not
 * followed), user names are resolved with getpwnam, and `pinned_spki:` is read (from a file when
 * it names one) and checked to be a DER SubjectPublicKeyInfo. Every load error reads
 * "<file>:<line>:<col>: <message>".
 *
 * Checking (sworn_dconfig_check) looks at the file system: the files named exist, the folders of
 * the database and of the sockets exist, the PIN file and the key file are secret files (0600 or
 * stricter, common/secretfile.h), the vault is a regular file, 0600 or stricter, owned by the
 * engine's uid (run_as when started as root). It reports the first problem.
 * sworn_dconfig_check_engine checks the same but the signer's own files (key file, module, PIN
 * file), which the engine, run_as, must not be able to read; sworn_dconfig_check_separation checks
 * that the processes are apart (below). `sworn-decisiond
 * --check-config FILE` runs both.
 *
 * Ownership: a struct sworn_dconfig owns every string and array in it; sworn_dconfig_free frees
 * them. Nothing in it is secret (the PIN stays in its file; the vault is read by vault.h).
 * Thread safety: a loaded configuration is immutable and may be read by many threads; load and
 * check use getpwnam, which is not thread-safe, so call them before starting threads.
 */
#ifndef SWORN_DCONFIG_H
#define SWORN_DCONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SWORN_DCONFIG_ORIGIN_MAX 255         /* as SWORN_CHECKPOINT_ORIGIN_MAX (checkpoint.h) */
#define SWORN_DCONFIG_SPKI_MAX 1024          /* as SWORN_SIGNER_SPKI_MAX (signer.h) */
#define SWORN_DCONFIG_PATH_MAX 4096          /* a resolved path, with its NUL */
#define SWORN_DCONFIG_HASH_LEN 32            /* SHA-256 of a measured file */
#define SWORN_DCONFIG_MAX_MEASURE 250        /* StartupMeasurement holds <= 256 files in all */
#define SWORN_DCONFIG_WITNESSES_MAX 16       /* witnesses: list items */
#define SWORN_DCONFIG_WITNESS_PREFIX_MAX 512 /* bytes of a witness URL's path prefix */

/*
 * One witness decisiond submits its checkpoints to (docs/witness.md, "decisiond's submissions"):
 * `url: http://ADDRESS:PORT[/PREFIX]`, a numeric IPv4 address or a bracketed IPv6 one (decisiond
 * resolves no names: its engine is confined, and the record must not depend on DNS); requests go
 * to PREFIX/add-checkpoint. `key:` its verifier key (C2SP signed-note, type 0x04
 * cosignature/v1). `timeout:` for one exchange, default 5s, 100ms..60s.
 */
struct sworn_dconfig_witness {
    char *url;           /* as written */
    char host[64];       /* the numeric address, without brackets */
    uint16_t port;       /* 1..65535 (default 80) */
    char *prefix;        /* "" or "/..." without a trailing '/' */
    char *key;           /* the verifier key text */
    uint64_t timeout_ms; /* default 5000 */
};
#define SWORN_DCONFIG_MAX_UIDS 64   /* per peers list */
#define SWORN_DCONFIG_PCR_ALWAYS 23 /* the PCR sworn measures into; always quoted */
/* tpm.ak_handle: its default and range, as SWORN_TPM_AK_HANDLE_* (tpmattest.h; d_checkpoint.c
 * checks at compile time that they agree). */
#define SWORN_DCONFIG_AK_HANDLE_DEFAULT 0x8153574Eu
#define SWORN_DCONFIG_AK_HANDLE_FIRST 0x81000000u
#define SWORN_DCONFIG_AK_HANDLE_LAST 0x817FFFFFu

struct sworn_dconfig {
    char *path;                             /* the file it was read from (as given) */
    uint8_t digest[SWORN_DCONFIG_HASH_LEN]; /* SHA-256 of the file's bytes: into PCR 23 */
    /* log: */
    char *log_db;                    /* sqlite database path; required */
    char *origin;                    /* checkpoint origin line; required; 1..255 bytes of UTF-8,
                                        no control characters (C2SP tlog-checkpoint) */
    uint64_t checkpoint_interval_ms; /* default 1000; 10..86400000 */
    char *export_dir; /* tlog-tiles folder refreshed after each checkpoint; NULL = none */
    /* signer (one key; signs checkpoints and receipts, domain-separated by purpose): */
    char *signer_key;           /* "pkcs11:..." URI, "tpm:..." (see signer/signer.h for the accepted
                                   forms), or "file:/absolute/path" (development only): a key given as
                                   a bare path or as file:PATH is stored as file: + the absolute path */
    char *signer_module;        /* PKCS#11 module path; required for pkcs11:, refused otherwise */
    char *signer_pin_file;      /* PIN file (must be 0600, checked by sworn_dconfig_check); required
                                   for pkcs11:, refused otherwise */
    char *signer_tcti;          /* TCTI for a tpm: key (default: tpm.tcti); refused otherwise */
    char *signer_spki_hex;      /* pinned DER SPKI in lower-case hex, from `pinned_spki:` which is
                                   either a hex string or a path to a file holding the hex or DER;
                                   required for pkcs11:/tpm: keys (pinning is mandatory for hardware
                                   keys) */
    char *signer_user;          /* user the signer child drops to; NULL = stay */
    uint64_t signer_timeout_ms; /* default 2000; 100..60000 */
    char *keyring;              /* keyring file (keyring/keyring.h); NULL = none */
    /* tpm (quotes and measured start): */
    char *tpm_tcti;                 /* NULL = no TPM */
    int tpm_required;               /* 1: decisions deny while the TPM cannot quote */
    uint32_t tpm_pcrs;              /* bitmap of sha256 PCRs to quote; bit 23 always set */
    uint64_t quote_min_interval_ms; /* default 1000 (10..86400000): at most one quote per
                                       interval (TPM-Fail, firmware-notes) */
    uint32_t tpm_ak_handle;         /* the AK's persistent handle (default
                                       SWORN_DCONFIG_AK_HANDLE_DEFAULT, owner range) */
    char **measure;
    size_t n_measure; /* extra files measured at start besides the daemon binary, this config file
                         and the policy; at most SWORN_DCONFIG_MAX_MEASURE */
    /* policy and vault: */
    char *policy_path;                /* required */
    char *vault_path;                 /* NULL = no credentials */
    uint64_t escalation_timeout_ms;   /* default 300000; 1000..604800000 (1s..7d) */
    uint32_t max_pending_escalations; /* default 1000; 1..100000 */
    /* sockets and peers: */
    char *decision_socket; /* Unix socket path; required */
    char *admin_socket;    /* Unix socket path; required; must differ from decision_socket */
    /* sockets.decision_group, sockets.admin_group: the group (name or gid, resolved at load)
     * whose members may connect (mode 0660); unset (has_*_group 0): mode 0600 (below). */
    int has_decision_group, has_admin_group;
    gid_t decision_gid, admin_gid;
    /* sockets.metrics: the Prometheus text and the health check (d_mserve.h), or NULL for none;
     * the monitor's own, mode 0600, or group sockets.metrics_group's, mode 0660. */
    char *metrics_socket;
    int has_metrics_group;
    gid_t metrics_gid;
    uid_t *proxy_uids;
    size_t n_proxy_uids; /* required, >= 1 */
    uid_t *operator_uids;
    size_t n_operator_uids; /* required, >= 1 */
    char *run_as_user;      /* drop to this user after opening sockets; NULL = stay */
    uint32_t workers;       /* recording threads, default 4, 1..64 */
    /* receipts: per-request (one signature per allow, the default) or batch (one signature per
     * commit group, docs/formats.md section 14): SWORN_DCONFIG_RECEIPTS_* */
    int receipts_mode;
    char *signer_program; /* signer.program: the sworn-signer binary; default: the build's */
    /* budgets.replay_max_entries: the most log entries the budget replay at start may read
     * (the allows of the policy's longest budget window); a window holding more refuses the
     * start instead of under-counting. 0 (the default): no bound, the whole window. */
    uint64_t replay_max_entries;
    /* hardening: */
    int seccomp_mode; /* SWORN_DCONFIG_SECCOMP_*, default ENFORCE (decisiond/d_seccomp.h) */
    /* witnesses: every checkpoint is submitted to each (d_witness.h); none by default */
    struct sworn_dconfig_witness *witnesses;
    size_t n_witnesses;
    int development; /* hardening.development: true permits a root or shared-uid signer */
};

/*
 * The users the three processes run as (docs/decisiond.md, "Processes"): the monitor keeps the
 * uid it starts with; started as root, the engine switches to run_as and the signer to
 * signer.user; started as anyone else, both keep that uid.
 */
struct sworn_dconfig_users {
    uid_t engine_uid, signer_uid;
    gid_t engine_gid, signer_gid;
};

/*
 * Resolve the users (getpwnam) as a start as root would (as_root 1: run_as and signer.user, where
 * set) or as any other start (0: both the effective uid). 0, or -1 with sworn_err set
 * (SWORN_ERR_NOTFOUND).
 */
int sworn_dconfig_users(const struct sworn_dconfig *c, int as_root,
                        struct sworn_dconfig_users *out);

/*
 * The processes must be apart: refused (SWORN_ERR_ARG) when the signer or the engine would run as
 * root or both under one uid, unless hardening.development is true. Run by the monitor, at start
 * and for --check-config. 0 or -1.
 */
int sworn_dconfig_check_separation(const struct sworn_dconfig *c);

/*
 * Who may open a socket's file (docs/decisiond.md section 3): connecting to a Unix socket needs
 * write permission on it, so these modes keep every uid but the configured peers (and root) from
 * connecting at all; SO_PEERCRED then decides who of those is served.
 *   - with sockets.<channel>_group: owner the monitor's uid, group that group, mode 0660; every
 *     peer of the channel other than root must be in the group (its primary group, or listed);
 *   - without: mode 0600, owned by the channel's one peer uid other than root, or by the
 *     monitor's uid when all its peers are root; more than one such uid needs a group.
 * self_uid and self_gid are the monitor's. OUT: *out. 0, or -1 (SWORN_ERR_ARG) naming the key.
 */
struct sworn_dconfig_sockmode {
    uid_t owner;
    gid_t group;
    mode_t mode;
};
int sworn_dconfig_socket_mode(const struct sworn_dconfig *c, int admin, uid_t self_uid,
                              gid_t self_gid, struct sworn_dconfig_sockmode *out);

/* receipts: */
#define SWORN_DCONFIG_RECEIPTS_PER_REQUEST 0
#define SWORN_DCONFIG_RECEIPTS_BATCH 1

/* hardening.seccomp: the values of enum d_seccomp_mode (d_seccomp.h). */
#define SWORN_DCONFIG_SECCOMP_OFF 0
#define SWORN_DCONFIG_SECCOMP_LOG 1
#define SWORN_DCONFIG_SECCOMP_ENFORCE 2

/*
 * Read and check the configuration file at path (at most SWORN_YAML_MAX_BYTES). OUT: *out, a new
 * configuration to free with sworn_dconfig_free. Returns 0, or -1 with sworn_err set (the message
 * "<path>:<line>:<col>: ..." for anything wrong in the file; SWORN_ERR_NOTFOUND/IO when the file
 * itself cannot be read) and *out untouched.
 */
int sworn_dconfig_load(const char *path, struct sworn_dconfig **out);

/*
 * Check a loaded configuration against the file system (see the top of this file). Returns 0, or
 * -1 with sworn_err set to the first problem found, naming the key ("policy: /etc/...: ...").
 */
int sworn_dconfig_check(const struct sworn_dconfig *c);
int sworn_dconfig_check_engine(const struct sworn_dconfig *c);

/* Free c and everything in it; NULL is a no-op. */
void sworn_dconfig_free(struct sworn_dconfig *c);

#endif
