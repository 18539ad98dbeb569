/*
 * monitor.h -- sworn-decisiond's three processes (docs/decisiond.md, "Processes"; OpenBSD's
 * httpd proc.c and relayd's ca.c):
 *
 *   monitor  the process the operator starts (root in a deployment). It loads and checks the
 *            configuration, binds the two sockets, and fork+execs the engine (this binary again,
 *            with --engine, as run_as) and, when the engine asks, the signer (sworn-signer, as
 *            signer.user; signer/launch.h). It forwards SIGTERM, SIGINT and SIGHUP to the engine,
 *            restarts the signer with full rights whenever the engine asks for a fresh one, and
 *            exits with the engine. It reads no policy, vault or log, and holds no key.
 *   engine   policy, vault, log, checkpoints, TPM quotes, the two sockets (d_daemon.h). Exec'd
 *            from the monitor's own image (its /proc/self/exe descriptor, opened at start) with
 *            --config-sha256 (the digest of the configuration bytes the monitor parsed, which
 *            the engine's own reading must match) and: fd 3 its channel to the monitor, fd 4 the
 *            decision socket, fd 5 the admin socket, already listening, fd 6 the signer program
 *            (read-only, the file every signer is exec'd from, measured by the engine through
 *            it); it never forks, execs or changes its uid.
 *   signer   sworn-signer: the key, on a socketpair whose other end the engine holds.
 *
 * The monitor channel (a Unix stream socketpair; the engine asks, the monitor answers):
 *   engine -> monitor  1 byte  'S' start a fresh signer (stopping the current one first)
 *                              'K' stop the current signer now (it stalled or misbehaved)
 *   monitor -> engine  for 'S' only: struct d_monitor_reply (fixed size), with the engine's end
 *                      of the new signer's socket as SCM_RIGHTS when status is 0
 * Anything else on the channel ends it: the monitor stops the engine, the engine stops.
 */
#ifndef SWORN_D_MONITOR_H
#define SWORN_D_MONITOR_H

#include <stdint.h>
#include <sys/types.h>

#define D_ENGINE_FD_MONITOR 3
#define D_ENGINE_FD_DECISION 4
#define D_ENGINE_FD_ADMIN 5
/* The signer program the monitor execs, read-only: the engine measures it through this. */
#define D_ENGINE_FD_SIGNER_PROGRAM 6
/* The monitor's image in the engine's exec (close-on-exec: gone once the engine runs). */
#define D_ENGINE_FD_EXE 7
/* sockets.metrics, listening, when configured (d_mserve.h); not open otherwise. */
#define D_ENGINE_FD_METRICS 8

#define D_MONITOR_START_SIGNER 'S'
#define D_MONITOR_STOP_SIGNER 'K'
#define D_MONITOR_ERR_MAX 200

struct d_monitor_reply {
    int32_t status; /* 0, or an enum sworn_err_code */
    int32_t pid;    /* the signer's pid (informational: the engine cannot signal it) */
    char msg[D_MONITOR_ERR_MAX + 1];
};

/*
 * The monitor's whole life (sworn-decisiond without --engine). argv0 and the options are what
 * main parsed; log_level may be NULL. Returns the process's exit status.
 */
int d_monitor_main(const char *config, const char *log_level, int check_only);

/*
 * The engine's side of the channel, as a signer launcher (decisiond/signerproc.h): start asks the
 * monitor for a fresh signer and waits up to timeout_ms for its socket; stop asks it to stop the
 * current one. arg is a struct d_monitor_link.
 */
struct d_monitor_link {
    int fd;
    unsigned timeout_ms;
};
int d_monitor_link_start(void *arg, int *fd, pid_t *pid);
void d_monitor_link_stop(void *arg);

#endif
