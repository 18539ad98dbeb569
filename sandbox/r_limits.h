/*
 * r_limits.h -- holding a sandbox's memory and process count (docs/sandbox.md, "Limits"), by the
 * first of these that works here:
 *   cgroup2: a cgroup v2 hierarchy with the memory and pids controllers: sworn-run makes
 *     <mount>/sworn-run/<id> (enabling the controllers in the root's and sworn-run's
 *     subtree_control), writes memory.max, memory.swap.max (0) and pids.max, and puts the
 *     sandbox's pid 1 in it before it runs anything; the whole sandbox is held together;
 *   cgroup1: the v1 memory and pids hierarchies, the same way (memory.limit_in_bytes,
 *     memory.memsw.limit_in_bytes when the kernel accounts swap, pids.max);
 *   rlimit: when no cgroup can be written (unprivileged mode, as a rule): RLIMIT_AS (memory) and
 *     RLIMIT_NPROC (processes; counted per user namespace, so only the sandbox's) on each process,
 *     set in the agent before its exec. This holds each process, not the sandbox as a whole.
 * Cgroups are tried only as root. A sandbox always gets a cgroup where one can be made, with or
 * without limits, so that its processes are also counted and killed together.
 *
 * Errors: -1 with sworn_err set (SWORN_ERR_IO). A failure after the cgroup was chosen is fatal to
 * the start (fail closed: a limit the operator asked for is never silently dropped).
 */
#ifndef SWORN_R_LIMITS_H
#define SWORN_R_LIMITS_H

#include <stdint.h>
#include <sys/types.h>

#include "r_conf.h"

enum sworn_run_limit_kind { SWORN_RUN_RLIMIT = 0, SWORN_RUN_CGROUP1, SWORN_RUN_CGROUP2 };

struct sworn_run_limits {
    enum sworn_run_limit_kind kind;
    uint64_t memory_bytes;           /* 0: none */
    uint32_t processes;              /* 0: none */
    char dir[2][SWORN_RUN_PATH_MAX]; /* cgroup2: dir[0]; cgroup1: memory, pids ("" when unused) */
};

/* Choose and make (before the sandbox's processes exist). id: the sandbox id's hex. */
int sworn_run_limits_prepare(struct sworn_run_limits *l, const struct sworn_run_conf *c,
                             const char *id);

/* Put pid (the sandbox's pid 1, not yet running anything) in the cgroup(s); no-op for rlimit. */
int sworn_run_limits_join(const struct sworn_run_limits *l, pid_t pid);

/* In the agent, before exec: the rlimits (rlimit kind only; no-op otherwise). */
int sworn_run_limits_apply_rlimits(const struct sworn_run_limits *l);

/* Kill whatever is still in the cgroup(s) and remove them. Returns 0 or -1 (still reported). */
int sworn_run_limits_release(struct sworn_run_limits *l);

/* "cgroup2", "cgroup1" or "rlimit" (SandboxLimits.enforced_by). */
const char *sworn_run_limits_name(const struct sworn_run_limits *l);

#endif
