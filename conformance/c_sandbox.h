/*
 * c_sandbox.h -- run sworn-conformance-probe inside the deployment's sandbox (the deployment
 * file's sandbox.command), or on the host as a positive control, and keep its verdict line.
 *
 * Inside: a fresh work folder in the run's scratch folder (mode 0755) holding a copy of
 * sandbox.probe, then sandbox.command's argv followed by
 *     --name NAME --work WORK --keep -- ./sworn-conformance-probe ATTEMPT ARGS...
 * (sworn-run's options: the sandbox is named, its work folder is ours and stays for us to
 * remove). NAME is "conformance-<16 hex>-<n>", fresh per sandbox. Standard input is /dev/null,
 * standard error goes to ours, standard output is kept (bounded). A sandbox that has not ended
 * after C_SBX_WAIT_MS is killed (by its pid) and the attempt is an error. The descriptors in
 * leak are handed to the sandbox command open, on purpose (T2.leaked-descriptors).
 *
 * The verdict: the probe program's first line that starts with BLOCKED, OPEN or LEFT. Exit
 * statuses as the probe program gives them (0 blocked, 3 open, 2 usage); 125 and the rest are
 * the sandbox's own failure, which a probe reports as an error, never as blocked.
 *
 * Errors: -1 with sworn_err set (no work folder, fork or exec failed, timeout). Not thread-safe.
 */
#ifndef SWORN_C_SANDBOX_H
#define SWORN_C_SANDBOX_H

#include <stddef.h>

#include "c_probe.h"

#define C_SBX_WAIT_MS 120000
#define C_SBX_OUT_MAX 8192u
#define C_SBX_ARGS_MAX 16u

enum c_verdict { C_V_BLOCKED, C_V_OPEN, C_V_OTHER };

struct c_sbx_out {
    int status;
    char name[64]; /* the sandbox's name ("" on the host) */
    char line[1024];
    char out[C_SBX_OUT_MAX];
    enum c_verdict verdict; /* C_V_BLOCKED: status 0 and a BLOCKED line; C_V_OPEN: 3 and OPEN */
};

/* Run the probe with args (NULL-terminated, at most C_SBX_ARGS_MAX) in a sandbox. */
int c_sbx_run(struct c_ctx *ctx, const char *const *args, const int *leak, size_t nleak,
              struct c_sbx_out *o);

/* The same in the sandbox of another command (argv[0..nargv), as sandbox.command's list). */
int c_sbx_run_cmd(struct c_ctx *ctx, const char (*argv)[C_DEPLOY_PATH_MAX], size_t nargv,
                  const char *const *args, const int *leak, size_t nleak, struct c_sbx_out *o);

/* The same attempt on the host, outside any sandbox (the runner's own uid). */
int c_sbx_host(struct c_ctx *ctx, const char *const *args, struct c_sbx_out *o);

#endif
