/*
 * r_record.h -- a sandbox's two entries in the log (docs/sandbox.md, "The record"), written by
 * decisiond through its admin socket (AdminRequest.sandbox_start and .sandbox_end,
 * wire/sworn.proto): SandboxStarted before the agent's first instruction, SandboxEnded after its
 * last process is gone and its files removed. decisiond appends each durably before it answers, and
 * fills in the operator (the admin peer's user) and the time.
 *
 * Errors: -1 with sworn_err set: the socket cannot be reached or did not answer within
 * SWORN_RUN_RECORD_TIMEOUT_MS (SWORN_ERR_IO), decisiond refused (its message, SWORN_ERR_VERIFY),
 * or answered out of step (SWORN_ERR_FORMAT). sworn-run treats a failed start as fatal: no agent.
 */
#ifndef SWORN_R_RECORD_H
#define SWORN_R_RECORD_H

#include <stdint.h>
#include <sys/types.h>

#include "r_conf.h"
#include "sworn.pb-c.h"

#define SWORN_RUN_RECORD_TIMEOUT_MS 10000
#define SWORN_RUN_ID_LEN 16u

struct sworn_run_start {
    const struct sworn_run_conf *conf;
    uint8_t id[SWORN_RUN_ID_LEN];
    uint8_t config_sha256[32];
    const char *enforced_by; /* sworn_run_limits_name */
    uid_t agent_uid;
    const char *isolation; /* "root" or "unprivileged" */
};

/*
 * The start in two halves, so that the sandbox is built while decisiond makes the entry durable:
 * _send connects and sends the request; _wait reads the answer (OUT: *index, the SandboxStarted
 * entry's log index) and closes. One start at a time; _wait only after a _send that returned 0.
 * The agent must not run before _wait returned 0.
 */
int sworn_run_record_start_send(const struct sworn_run_start *s);
int sworn_run_record_start_wait(uint64_t *index);

int sworn_run_record_end(const char *admin_socket, uint64_t start_index,
                         const uint8_t id[SWORN_RUN_ID_LEN], Sworn__V1__SandboxEndReason reason,
                         uint32_t code, uint64_t duration_ms);

#endif
