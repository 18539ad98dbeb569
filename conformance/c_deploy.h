/*
 * c_deploy.h -- the deployment file of sworn-conformance (docs/conformance.md, "The deployment
 * file"): where the record, the auditor's trust policy, sworn-verify and decisiond's sockets are,
 * who runs the probes, and the request shapes the policy allows and denies.
 *
 * The file is YAML read with policy/yamldoc.h (its bounds and its subset), as decisiond's
 * configuration is: an unknown key, a missing required key or a value of the wrong type or shape
 * is refused with "<file>:<line>:<col>: ...", never guessed. Paths must be absolute; optional keys
 * left out are "" (strings) or 0 / -1 (numbers, as documented per field).
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_FORMAT for the content, the yamldoc codes for a file
 * that cannot be read or is too large). Memory: struct c_deploy holds everything inline (no
 * pointers), so it can be copied and needs no free. Thread safety: none needed (no globals).
 */
#ifndef SWORN_C_DEPLOY_H
#define SWORN_C_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#define C_DEPLOY_PATH_MAX 1024u     /* bytes in a path, with its NUL */
#define C_DEPLOY_TEXT_MAX 256u      /* bytes in the operator's name, with its NUL */
#define C_DEPLOY_COMMAND_MAX 4096u  /* bytes in a stop or start command, with its NUL */
#define C_DEPLOY_HOST_MAX 254u      /* bytes in a host name, with its NUL */
#define C_DEPLOY_URLPATH_MAX 1024u  /* bytes in a request's path, with its NUL */
#define C_DEPLOY_PRINCIPAL_MAX 129u /* a Principal.id: 1..128 bytes, with its NUL */
#define C_DEPLOY_GIDS_MAX 32u       /* agent_gids items */
#define C_DEPLOY_COUNT_MAX 500u     /* requests.count: N allowed and N denied, at most */

#define C_DEPLOY_ARGV_MAX 32u   /* sandbox.command items */
#define C_DEPLOY_LIST_MAX 32u   /* items of each sandbox list */
#define C_DEPLOY_TOKEN_MAX 256u /* bytes in a symbolic token, with its NUL */
#define C_DEPLOY_FORM_MAX 2048u /* bytes in sandbox.oauth_body, with its NUL */

/* One request shape: an absolute http or https URL, split. */
struct c_url {
    char scheme[8]; /* "http" or "https" */
    char host[C_DEPLOY_HOST_MAX];
    uint32_t port;                   /* 1..65535 (80 or 443 when the URL names none) */
    char path[C_DEPLOY_URLPATH_MAX]; /* starts with '/' */
};

struct c_deploy {
    char source[C_DEPLOY_PATH_MAX];          /* the file as named on the command line */
    char operator_name[C_DEPLOY_TEXT_MAX];   /* operator: the name as given; required */
    char record[C_DEPLOY_PATH_MAX];          /* record: the exported tiles folder; required */
    char trust_policy[C_DEPLOY_PATH_MAX];    /* trust_policy: the auditor's policy; required */
    char verify_bin[C_DEPLOY_PATH_MAX];      /* sworn_verify: the binary; required */
    char state[C_DEPLOY_PATH_MAX];           /* auditor_state: optional ("") */
    char admin_socket[C_DEPLOY_PATH_MAX];    /* admin_socket: optional ("") */
    char decision_socket[C_DEPLOY_PATH_MAX]; /* decision_socket: optional ("") */
    char log_db[C_DEPLOY_PATH_MAX];          /* log_db: optional ("") */
    int64_t agent_uid;                       /* agent.uid: required, 0..4294967294 */
    uint32_t agent_gids[C_DEPLOY_GIDS_MAX];  /* agent.gids: optional */
    size_t nagent_gids;
    /* requests: optional as a whole (has_requests 0); all three keys required inside. */
    int has_requests;
    char principal[C_DEPLOY_PRINCIPAL_MAX]; /* requests.principal */
    uint32_t count;                         /* requests.count: 1..C_DEPLOY_COUNT_MAX (default 5) */
    struct c_url allowed, denied;           /* requests.allowed, requests.denied */
    /* fail_closed: optional as a whole; all three keys required inside. */
    int has_fail_closed;
    struct c_url proxy;                       /* fail_closed.proxy: http://HOST:PORT (path "/") */
    char stop_command[C_DEPLOY_COMMAND_MAX];  /* fail_closed.stop: a /bin/sh command */
    char start_command[C_DEPLOY_COMMAND_MAX]; /* fail_closed.start: a /bin/sh command */
    /* sandbox: optional as a whole (has_sandbox 0: the probes from inside are skipped). */
    int has_sandbox;
    struct c_deploy_sandbox {
        char argv[C_DEPLOY_ARGV_MAX][C_DEPLOY_PATH_MAX]; /* command: argv[0] absolute */
        size_t nargv;
        char probe[C_DEPLOY_PATH_MAX];          /* probe: sworn-conformance-probe; required */
        char principal[C_DEPLOY_PRINCIPAL_MAX]; /* principal: required */
        struct c_url proxy;                     /* proxy: as the agent reaches it inside */
        int has_allowed, has_denied, has_echo, has_foreign_echo, has_oauth_token;
        struct c_url oauth_token; /* oauth_token: a token endpoint, as the agent sends it */
        char oauth_body[C_DEPLOY_FORM_MAX]; /* oauth_body: its form body ("" without) */
        struct c_url allowed, denied, echo; /* optional URLs, as the agent sends them */
        struct c_url foreign_echo; /* foreign_echo: inside the foreign tokens' destinations */
        char symbolic[C_DEPLOY_LIST_MAX][C_DEPLOY_TOKEN_MAX]; /* symbolic_tokens */
        size_t nsymbolic;
        /* foreign_command: the sandbox command of a principal the foreign tokens' credentials are
         * bound to (the positive control of T1.foreign-token); nforeign_argv 0 without it */
        char foreign_argv[C_DEPLOY_ARGV_MAX][C_DEPLOY_PATH_MAX];
        size_t nforeign_argv;
        /* foreign_tokens: symbolic tokens of credentials the vault binds to other principals */
        char foreign[C_DEPLOY_LIST_MAX][C_DEPLOY_TOKEN_MAX];
        size_t nforeign;
        char credential_sha256[C_DEPLOY_LIST_MAX][65]; /* lower-case hex */
        size_t ncredential;
        char control_paths[C_DEPLOY_LIST_MAX][C_DEPLOY_PATH_MAX];
        size_t ncontrol_paths;
        char control_sockets[C_DEPLOY_LIST_MAX][C_DEPLOY_PATH_MAX];
        size_t ncontrol_sockets;
        char control_binaries[C_DEPLOY_LIST_MAX][C_DEPLOY_PATH_MAX];
        size_t ncontrol_binaries;
        /* dns_rebinding: optional as a whole (has_dns_rebinding 0); both keys required inside */
        int has_dns_rebinding;
        char dns_listen[48];              /* listen's address, numeric, as inet_ntop writes it */
        uint16_t dns_port;                /* listen's port, 1..65535 */
        char dns_name[C_DEPLOY_HOST_MAX]; /* name: a host name (labels of [A-Za-z0-9-]) */
    } sbx;
};

/* Read the deployment file at path into d (d is cleared first; on failure its content is
 * unspecified). Returns 0 or -1 (above). */
int c_deploy_load(struct c_deploy *d, const char *path);

/* The same from len bytes in memory; name is used in messages and kept as d->source. */
int c_deploy_load_mem(struct c_deploy *d, const char *name, const uint8_t *p, size_t len);

/*
 * Split an absolute URL "http[s]://HOST[:PORT][/PATH]" (no user info, no fragment; HOST a name
 * of [A-Za-z0-9.-] or a dotted quad; PATH printable ASCII without spaces, "/" when absent) into
 * u. Returns 0, or -1 with a static sentence in *why.
 */
int c_url_parse(const char *s, struct c_url *u, const char **why);

#endif
