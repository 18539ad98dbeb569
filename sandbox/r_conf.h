/*
 * r_conf.h -- what one sworn-run sandbox is: its identity, where the control plane is, its limits
 * and what the agent is given (docs/sandbox.md, "Configuration"). Read from three places, in this
 * order, each overriding the one before: the YAML file of --config (or DIR/stack.env of --stack),
 * then the command line's options. The agent's command comes from the command line only.
 *
 * Every value is checked where it is read, and a refusal names its place: "F:line:col: ..." for
 * the YAML file (policy/yamldoc.h), "DIR/stack.env:line: ..." for a stack, "--option: ..." for
 * the command line. Nothing is guessed: an unknown key, an unknown option, a relative path, a
 * symbolic token that is not one, a name that a HostlinkHello could not carry are refused.
 *
 * The configuration digest (SandboxStarted.config_sha256) is SHA-256 over the effective
 * configuration's canonical text (sworn_run_conf_canonical): one "key=value\n" line per setting in
 * a fixed order, values as the sandbox uses them; the agent's command is not part of it (it is
 * recorded beside it). docs/sandbox.md gives the text byte by byte.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_FORMAT for a bad value, SWORN_ERR_ARG for a bad
 * option, SWORN_ERR_NOTFOUND/IO for a file that cannot be read, SWORN_ERR_RANGE for a bound).
 * Memory: struct sworn_run_conf holds fixed arrays, except argv, which points into the caller's
 * argv; sworn_run_conf_free wipes the symbolic tokens. Thread safety: none needed (one thread).
 */
#ifndef SWORN_R_CONF_H
#define SWORN_R_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SWORN_RUN_PATH_MAX 256u /* every path, with its NUL (a Unix socket's path fits 108) */
#define SWORN_RUN_NAME_MAX 129u /* principal and sandbox name: 1..128 bytes, with the NUL */
#define SWORN_RUN_VARS_MAX 64u  /* env entries, files, pass_env and masks: each at most this */
#define SWORN_RUN_VAR_NAME_MAX 129u
#define SWORN_RUN_TOKEN_MAX 256u  /* a symbolic token: 36..255 bytes, with the NUL */
#define SWORN_RUN_ARGV_MAX 256u   /* the agent's argv items (SandboxStarted.command) */
#define SWORN_RUN_ARG_MAX 8192u   /* bytes of one argv item */
#define SWORN_RUN_AGENT_UID 1000u /* the agent's uid and gid inside the sandbox */
#define SWORN_RUN_PROXY_PORT 3128u
#define SWORN_RUN_CONNECTIONS_DEFAULT 64u /* relay connections a sandbox holds at once */
#define SWORN_RUN_CONNECTIONS_MAX 1024u

/* A configured variable or file: the agent gets NAME with a symbolic token as its value. */
struct sworn_run_token {
    char name[SWORN_RUN_VAR_NAME_MAX];
    char value[SWORN_RUN_TOKEN_MAX];
};

struct sworn_run_conf {
    char principal[SWORN_RUN_NAME_MAX]; /* required */
    char name[SWORN_RUN_NAME_MAX];      /* "" until set: then "run-" + 16 hex of the sandbox id */
    char hostlink[SWORN_RUN_PATH_MAX];  /* the proxy's hostlink socket; required */
    char admin_socket[SWORN_RUN_PATH_MAX]; /* decisiond's admin socket; required */
    char proxy_ca[SWORN_RUN_PATH_MAX];     /* the proxy's CA certificate (PEM); required */
    char state_dir[SWORN_RUN_PATH_MAX];    /* where run folders are made; "" = the default */
    char work[SWORN_RUN_PATH_MAX];         /* --work: "" = a fresh folder in the run folder */
    int keep;                              /* --keep: the work folder stays */
    uint64_t wall_ms;                      /* 0 = none */
    uint64_t memory_bytes;                 /* 0 = none */
    uint32_t processes;                    /* 0 = none */
    uint32_t connections; /* the relay's connections at once (limits.connections), 1..1024 */
    uid_t uid_first;      /* root mode: the outside uids sandboxes take */
    uint32_t uid_count;
    struct sworn_run_token env[SWORN_RUN_VARS_MAX];
    size_t nenv;
    struct sworn_run_token
        files[SWORN_RUN_VARS_MAX]; /* name: a file name under /run/sworn/tokens */
    size_t nfiles;
    char pass_env[SWORN_RUN_VARS_MAX][SWORN_RUN_VAR_NAME_MAX];
    size_t npass_env;
    char mask[SWORN_RUN_VARS_MAX][SWORN_RUN_PATH_MAX]; /* paths masked besides the defaults */
    size_t nmask;
    char source[SWORN_RUN_PATH_MAX]; /* the file read (--config or DIR/stack.env), for messages */
    char stack_dir[SWORN_RUN_PATH_MAX]; /* --stack's DIR ("" without): no agent gets it as work */
    char *const *argv;                  /* the agent's command (argv[0] .. NULL) */
    size_t argc;
};

/* Defaults: no limits but the 65536 uids from 1000000000 in root mode (above the subordinate
 * ids useradd hands out, SUB_UID_MAX 600100000); nothing else set. */
void sworn_run_conf_init(struct sworn_run_conf *c);

/*
 * Read the command line (argv[0] is sworn-run). Reads --config or --stack first, then applies the
 * other options over it, then checks that everything required is set. Returns 0; 1 when --help
 * and 2 when --version was asked (the caller prints and exits 0); -1 with sworn_err set.
 */
int sworn_run_conf_from_args(struct sworn_run_conf *c, int argc, char *const *argv);

/* Read a YAML configuration file into c (the keys of docs/sandbox.md), or the same from memory
 * (name is used in messages). */
int sworn_run_conf_load_yaml(struct sworn_run_conf *c, const char *path);
int sworn_run_conf_load_yaml_mem(struct sworn_run_conf *c, const char *name, const uint8_t *p,
                                 size_t len);

/* Read DIR/stack.env (scripts/dev-stack) into c: PROXY_SOCKET, ADMIN_SOCKET, PROXY_CA,
 * PROXY_PRINCIPAL. The state folder becomes DIR/sandboxes. */
int sworn_run_conf_load_stack(struct sworn_run_conf *c, const char *dir);
/* The same from stack.env's text[0..len) (path is used in messages); the state folder is not set.
 */
int sworn_run_conf_stack_text(struct sworn_run_conf *c, const char *path, const char *text,
                              size_t len);

/*
 * The canonical text of c (see above) into out[0..cap). Returns its length, or -1
 * (SWORN_ERR_RANGE) when it does not fit. sworn_run_conf_digest hashes it.
 */
long sworn_run_conf_canonical(const struct sworn_run_conf *c, char *out, size_t cap);
int sworn_run_conf_digest(const struct sworn_run_conf *c, uint8_t out[32]);

/* Wipe the tokens. */
void sworn_run_conf_free(struct sworn_run_conf *c);

#endif
