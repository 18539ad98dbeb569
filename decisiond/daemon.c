/*
 * daemon.c -- sworn-decisiond: start-up, the event loop, and an orderly stop
 * (docs/decisiond.md; the parts are described in d_daemon.h).
 *
 *   sworn-decisiond --config FILE [--log-level LEVEL]
 *   sworn-decisiond --config FILE --check-config
 *
 * Without --engine this is the monitor (monitor.h): it checks the configuration, binds the
 * sockets and runs the engine and the signer as processes of their own. With --engine (given by
 * the monitor only, with its channel on fd 3 and the sockets on fds 4 and 5) it is the engine,
 * already running as run_as. The engine's start-up order, and why:
 *   1. no core dumps; signals unblocked (the monitor blocks them for its signalfd);
 *   2. configuration, policy and vault loaded and checked: any error stops the start;
 *   3. the signer started through the monitor, which fork+execs sworn-signer as signer.user: it
 *      opens the HSM/TPM key and answers with its public key;
 *   4. the log opened (created on first start, its origin checked on every later one);
 *   5. measured start into PCR 23, the Startup and PolicyLoaded entries, budgets replayed;
 *   6. accepting on the sockets the monitor bound;
 *   7. the worker threads and the checkpoint thread started; the first checkpoint is signed
 *      (and quoted) before the first request is read;
 *   8. the seccomp allow-list installed on every thread (d_seccomp.h), then "ready".
 * Stop (SIGTERM, SIGINT): stop accepting, deny held escalations (recorded), finish every
 * in-flight decision, sign and quote a final checkpoint, close. SIGHUP reloads the policy.
 *
 * Exit status: 0 after an orderly stop or a good --check-config, 1 when the start failed or the
 * configuration is bad, 2 on bad usage.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/thread.h>
#include <openssl/sha.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include "cli.h"
#include "sdnotify.h"
#include "d_admin.h"
#include "d_batch.h"
#include "d_commit.h"
#include "d_daemon.h"
#include "d_escalate.h"
#include "d_jlog.h"
#include "d_mserve.h"
#include "d_record.h"
#include "d_sandboxes.h"
#include "d_seccomp.h"
#include "d_server.h"
#include "encoding.h"
#include "err.h"
#include "notesigner.h"

#define SIGNER_START_ATTEMPTS 5

static const char usage_text[] =
    "usage: sworn-decisiond --config FILE [--log-level debug|info|warn|error]\n"
    "       sworn-decisiond --config FILE --check-config\n"
    "       sworn-decisiond --help | --version\n"
    "The decision point: policy, vault, budgets, the log and its signer (docs/decisiond.md).\n"
    "Runs in the foreground until SIGTERM or SIGINT; SIGHUP reloads the policy.\n"
    "--check-config loads the configuration, the policy and the vault, and exits.\n";

static const char own_exits[] =
    "  (0 after an orderly stop or a good --check-config; 1 when the start failed or\n"
    "   the configuration, policy or vault does not load)\n";

static int usage(const char *why)
{
    fprintf(stderr, "sworn-decisiond: %s\n%s", why, usage_text);
    return SWORN_EXIT_USAGE;
}

static int fail(const char *what)
{
    json_object *f = json_object_new_object();

    if (f != NULL) {
        json_object_object_add(f, "what", json_object_new_string(what));
        json_object_object_add(f, "msg", json_object_new_string(sworn_err_msg()));
    }
    d_log(D_LOG_ERROR, "start_failed", f);
    return 1;
}

/* Start the signer child for the configured key. */
static int start_signer(struct d_daemon *d)
{
    const struct sworn_dconfig *c = d->cfg;
    struct sworn_signer_config sc = {0};
    struct sworn_signer_proc_opts opts = {0};
    struct sworn_signer_launcher launcher;
    uint8_t spki[SWORN_SIGNER_SPKI_MAX];
    size_t spki_len = 0;
    const uint8_t *got;
    size_t got_len;

    sc.uri = c->signer_key;
    sc.module_path = c->signer_module;
    sc.pin_file = c->signer_pin_file;
    sc.tcti = c->signer_tcti;
    if (c->signer_spki_hex != NULL) {
        size_t hex_len = strlen(c->signer_spki_hex);

        spki_len = hex_len / 2;
        if (hex_len % 2 != 0 || spki_len > sizeof(spki) ||
            sworn_hex_decode(c->signer_spki_hex, hex_len, spki, spki_len) < 0)
            return sworn_err_set(SWORN_ERR_FORMAT, "signer.pinned_spki is not a DER SPKI in hex");
        sc.pinned_spki = spki;
        sc.pinned_spki_len = spki_len;
    }
    sc.timeout_ms = (unsigned)c->signer_timeout_ms;
    opts.timeout_ms = (unsigned)c->signer_timeout_ms;
    opts.program = c->signer_program;
    /* The monitor starts every signer (with full rights, as signer.user): this process, already
     * run_as, could neither read the PIN file nor switch users. */
    d->monitor.fd = D_ENGINE_FD_MONITOR;
    d->monitor.timeout_ms = SWORN_SIGNER_PROC_START_TIMEOUT_MS;
    launcher.start = d_monitor_link_start;
    launcher.stop = d_monitor_link_stop;
    launcher.arg = &d->monitor;
    opts.launcher = &launcher;
    /* A device can be briefly unavailable at start: a network HSM still connecting, or a token
     * whose files the signer child of the daemon that just died is still closing (SoftHSM
     * rewrites its token file without a lock). Try a few times, 250 ms apart; never on a key
     * that is the wrong one (SWORN_ERR_VERIFY) or a bad configuration (SWORN_ERR_ARG). */
    for (int attempt = 1;; attempt++) {
        struct timespec pause = {0, 250 * 1000000L};

        if (sworn_signer_proc_start(&sc, &opts, &d->signer) == 0)
            break;
        if (attempt >= SIGNER_START_ATTEMPTS || sworn_err_code() == SWORN_ERR_VERIFY ||
            sworn_err_code() == SWORN_ERR_ARG)
            return -1;
        d_log_msg(D_LOG_WARN, "signer_start_retry", sworn_err_msg());
        nanosleep(&pause, NULL);
    }
    got = sworn_signer_proc_spki(d->signer, &got_len);
    SHA256(got, got_len, d->key_id);
    if (sworn_signer_proc_software_held(d->signer))
        d_log_msg(D_LOG_WARN, "software_key",
                  "the signing key is a file: development only, not an Accountable deployment");
    atomic_store(&d->metrics.signer_up, 1);
    return sworn_signer_proc_as_note_signer(d->signer, c->origin, &d->note_signer);
}

/* Open or create the log, and have its WAL copied back by a thread of its own rather than by a
 * committing worker while the others wait (logstore.h, sworn_log_wal_offload). */
static int open_log(struct d_daemon *d)
{
    if (access(d->cfg->log_db, F_OK) != 0) {
        if (sworn_log_create(d->cfg->log_db, d->cfg->origin, &d->log) < 0)
            return -1;
        return sworn_log_wal_offload(d->log);
    }
    if (sworn_log_open(d->cfg->log_db, &d->log) < 0)
        return -1;
    if (strcmp(sworn_log_origin(d->log), d->cfg->origin) != 0)
        return sworn_err_set(SWORN_ERR_ARG, "log %s has origin \"%s\", the config says \"%s\"",
                             d->cfg->log_db, sworn_log_origin(d->log), d->cfg->origin);
    atomic_store(&d->metrics.log_entries, sworn_log_size(d->log));
    return sworn_log_wal_offload(d->log);
}

/* --- stopping ----------------------------------------------------------------------------- */

static struct event *drain_timer;

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
    struct d_daemon *d = arg;
    static int quiet_ticks;
    struct timeval tick = {0, 50000};

    (void)fd;
    (void)what;
    /* Two quiet ticks in a row: every answer is recorded and written out. */
    if (d_workq_busy(d->workq) == 0 && d_batch_busy(d->batch) == 0 && ++quiet_ticks >= 2) {
        event_base_loopexit(d->base, NULL);
        return;
    }
    if (d_workq_busy(d->workq) != 0 || d_batch_busy(d->batch) != 0)
        quiet_ticks = 0;
    evtimer_add(drain_timer, &tick);
}

static void on_stop_signal(evutil_socket_t sig, short what, void *arg)
{
    struct d_daemon *d = arg;
    struct timeval now = {0, 0};

    (void)what;
    if (d->stopping)
        return;
    d->stopping = 1;
    d_log_msg(D_LOG_INFO, "stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    (void)sworn_sdnotify_send(d->notify_fd, "STOPPING=1");
    d_server_close_listeners(d);
    d_escalations_deny_all(d, "denied: decisiond is stopping");
    drain_timer = evtimer_new(d->base, on_drain, d);
    if (drain_timer == NULL || evtimer_add(drain_timer, &now) != 0)
        event_base_loopexit(d->base, NULL);
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    if (d_policy_reload(arg, NULL, NULL) < 0)
        d_log_msg(D_LOG_ERROR, "policy_reload", sworn_err_msg());
}

/* --- main --------------------------------------------------------------------------------- */

static void shutdown_all(struct d_daemon *d)
{
    if (d->sig_term != NULL)
        event_free(d->sig_term);
    if (d->sig_int != NULL)
        event_free(d->sig_int);
    if (d->sig_hup != NULL)
        event_free(d->sig_hup);
    d_server_close_listeners(d);
    d_mserve_stop(d);
    d_admin_checkpoint_waits_stop(d); /* answered, on their connections, before they go */
    d_timemark_stop(d);     /* no new periodic mark; a queued one is written as the workers drain */
    d_batch_stop(d->batch); /* every gathered commit recorded (or failed) and answered */
    d->batch = NULL;
    d_workq_stop(d->workq);
    d->workq = NULL;
    if (d->esc != NULL)
        d_escalations_free(d->esc);
    d_sandboxes_free(d->sandboxes);
    d->sandboxes = NULL;
    d_server_drop_all(d);
    d_usage_free(&d->usage);
    d_record_refusals_stop(d); /* the dropped refusals still counted, before the final checkpoint */
    d_checkpointer_stop(d);    /* the final checkpoint, quoted */
    d_admin_checkpoint_waits_free(d); /* the thread that activated it is joined */
    if (drain_timer != NULL)
        event_free(drain_timer);
    sworn_tpm_close(d->tpm);
    sworn_note_signer_close(&d->note_signer);
    sworn_log_close(d->log);
    sworn_signer_proc_stop(d->signer);
    sworn_vault_free(d->vault);
    sworn_budgets_free(d->budgets);
    sworn_policy_free(d->policy);
    if (d->base != NULL)
        event_base_free(d->base);
    sworn_dconfig_free(d->cfg);
    d_timemark_destroy(&d->tm);
}

/*
 * What the monitor handed over besides the sockets: the descriptor of the signer program it
 * execs (D_ENGINE_FD_SIGNER_PROGRAM, measured through it), and the SHA-256 of the configuration
 * it parsed, which must be that of the bytes this engine parsed: the monitor acts on its own
 * reading (users, sockets, the signer), and measured start records this one. 0 or -1.
 */
static int engine_inputs(struct d_daemon *d, const char *config_sha256)
{
    uint8_t want[SWORN_DCONFIG_HASH_LEN];
    struct stat st;

    if (strlen(config_sha256) != 2 * sizeof(want) ||
        sworn_hex_decode(config_sha256, strlen(config_sha256), want, sizeof(want)) < 0)
        return sworn_err_set(SWORN_ERR_ARG, "--config-sha256 is not 64 hex digits");
    if (memcmp(want, d->cfg->digest, sizeof(want)) != 0)
        return sworn_err_set(SWORN_ERR_VERIFY,
                             "%s changed between the monitor's reading and the engine's: "
                             "refusing to run on a configuration the monitor did not read",
                             d->cfg->path);
    /* The image the monitor exec'd this engine through (inherited: monitor.c says why); the
     * engine measures its own descriptor of /proc/self/exe (d->exe_fd). */
    (void)close(D_ENGINE_FD_EXE);
    if (fstat(D_ENGINE_FD_SIGNER_PROGRAM, &st) != 0 || !S_ISREG(st.st_mode) ||
        fcntl(D_ENGINE_FD_SIGNER_PROGRAM, F_SETFD, FD_CLOEXEC) != 0)
        return sworn_err_set(SWORN_ERR_IO, "the monitor passed no signer program descriptor");
    d->signer_program_fd = D_ENGINE_FD_SIGNER_PROGRAM;
    return 0;
}

/* Signals arrive as libevent events here; the monitor had them blocked for its signalfd. */
static int unblock_signals(void)
{
    sigset_t none;

    if (sigemptyset(&none) != 0 || sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        return sworn_err_set(SWORN_ERR_IO, "cannot unblock signals");
    return 0;
}

int main(int argc, char **argv)
{
    static struct d_daemon daemon_state;
    struct d_daemon *d = &daemon_state;
    const char *config = NULL, *level = NULL, *config_sha256 = NULL;
    int check_only = 0, engine = 0, rc = 1;
    char self[PATH_MAX];

    if (sworn_cli_standard(argc, argv, "sworn-decisiond", usage_text, own_exits, &rc))
        return rc;
    /* The running image, before anything else: measured start hashes this descriptor, the file
     * the kernel runs, never the path, which may name another file by then (d_startup.c). */
    d->exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    d->signer_program_fd = -1;
    d->notify_fd = -1;
    if (d_harden_early() < 0)
        return fail("hardening");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            config = argv[++i];
        } else if (strcmp(argv[i], "--check-config") == 0) {
            check_only = 1;
        } else if (strcmp(argv[i], "--engine") == 0) {
            engine = 1;
        } else if (strcmp(argv[i], "--config-sha256") == 0 && i + 1 < argc) {
            config_sha256 = argv[++i];
        } else if (strcmp(argv[i], "--log-level") == 0 && i + 1 < argc) {
            const char *l = argv[++i];

            level = l;
            if (strcmp(l, "debug") == 0)
                d_log_set_level(D_LOG_DEBUG);
            else if (strcmp(l, "info") == 0)
                d_log_set_level(D_LOG_INFO);
            else if (strcmp(l, "warn") == 0)
                d_log_set_level(D_LOG_WARN);
            else if (strcmp(l, "error") == 0)
                d_log_set_level(D_LOG_ERROR);
            else
                return usage("--log-level must be debug, info, warn or error");
        } else {
            return usage("unknown argument");
        }
    }
    if (config == NULL)
        return usage("--config FILE is required");
    if (!engine)
        return d_monitor_main(config, level, check_only);
    if (check_only)
        return usage("--engine and --check-config do not go together");
    if (config_sha256 == NULL)
        return usage("--engine needs --config-sha256 (the monitor passes it)");
    /* The engine: started by the monitor, as run_as, with its descriptors in place. */
    (void)prctl(PR_SET_NAME, "sworn-engine", 0, 0, 0);
    d->listen_fds[D_CHANNEL_DECISION] = D_ENGINE_FD_DECISION;
    d->listen_fds[D_CHANNEL_ADMIN] = D_ENGINE_FD_ADMIN;
    d_metrics_init(&d->metrics);
    if (unblock_signals() < 0)
        return fail("signals");
    /* Started as run_as means the monitor was root: the users are those the names give. */
    if (sworn_dconfig_load(config, &d->cfg) < 0 || sworn_dconfig_check_engine(d->cfg) < 0 ||
        sworn_dconfig_users(d->cfg, d->cfg->run_as_user != NULL, &d->users) < 0) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
        sworn_dconfig_free(d->cfg);
        return 1;
    }
    if (engine_inputs(d, config_sha256) < 0) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
        goto out;
    }
    d_refusals_init(&d->refusals, d->cfg);
    if (sworn_policy_load_trusted(d->cfg->policy_path, &d->policy) < 0) {
        fprintf(stderr, "sworn-decisiond: %s\n", sworn_err_msg());
        goto out;
    }
    sworn_policy_digest(d->policy, d->policy_digest);
    d_policy_warnings(d->policy, d->cfg->policy_path);
    /* The path only names the image in the record; its bytes are read through exe_fd. */
    if (d->exe_fd < 0 || realpath("/proc/self/exe", self) == NULL) {
        fail("/proc/self/exe");
        goto out;
    }
    d->self_exe = self;
    signal(SIGPIPE, SIG_IGN);
    /* A write past RLIMIT_FSIZE (a file size limit set by the service manager or an operator)
     * must fail as an I/O error, which the log turns into a refused request, not kill us. */
    signal(SIGXFSZ, SIG_IGN);
    if (sworn_budgets_new(&d->budgets) < 0) {
        fail("budgets");
        goto out;
    }
    if (start_signer(d) < 0) {
        fail("signer");
        goto out;
    }
    /* The vault only now: the signer is another program already, and never sees it. */
    if (d->cfg->vault_path != NULL && sworn_vault_load(d->cfg->vault_path, &d->vault) < 0) {
        fail("vault");
        goto out;
    }
    if (d_keyring_check(d) < 0) {
        fail("keyring");
        goto out;
    }
    if (d_timemark_init(&d->tm) < 0 || open_log(d) < 0) {
        fail("log");
        goto out;
    }
    if (evthread_use_pthreads() != 0 || (d->base = event_base_new()) == NULL) {
        sworn_err_set(SWORN_ERR_IO, "libevent could not start");
        fail("event loop");
        goto out;
    }
    if (d_startup_record(d) < 0) {
        fail("measured start");
        goto out;
    }
    /* Before any request: which sandboxes run is the log's word (d_sandboxes.h). */
    if (d_sandboxes_new(&d->sandboxes) < 0 || d_sandboxes_rebuild(d->sandboxes, d->log) < 0) {
        fail("sandboxes");
        goto out;
    }
    if (d_usage_init(&d->usage) < 0 || d_escalations_new(d, &d->esc) < 0 ||
        d_server_listen(d) < 0 ||
        (d->cfg->metrics_socket != NULL && d_mserve_start(d, D_ENGINE_FD_METRICS) < 0)) {
        fail("sockets");
        goto out;
    }
    if (d_workq_start(d->base, d->cfg->workers, &d->workq) < 0 ||
        (d->cfg->receipts_mode == SWORN_DCONFIG_RECEIPTS_BATCH &&
         d_batch_start(d->base, &d_commit_batch_ops, &d->batch) < 0) ||
        d_admin_checkpoint_waits_start(d) < 0 || d_checkpointer_start(d) < 0 ||
        d_record_refusals_start(d) < 0 || d_timemark_start(d) < 0) {
        fail("threads");
        goto out;
    }
    d->sig_term = evsignal_new(d->base, SIGTERM, on_stop_signal, d);
    d->sig_int = evsignal_new(d->base, SIGINT, on_stop_signal, d);
    d->sig_hup = evsignal_new(d->base, SIGHUP, on_hup, d);
    if (d->sig_term == NULL || d->sig_int == NULL || d->sig_hup == NULL ||
        evsignal_add(d->sig_term, NULL) != 0 || evsignal_add(d->sig_int, NULL) != 0 ||
        evsignal_add(d->sig_hup, NULL) != 0) {
        sworn_err_set(SWORN_ERR_IO, "cannot install signal handlers");
        fail("signals");
        goto out;
    }
    /* The service manager's readiness socket (Type=notify units, docs/operations.md), opened
     * while socket and connect are still allowed; written once ready. */
    if (sworn_sdnotify_open(&d->notify_fd) < 0) {
        fail("NOTIFY_SOCKET");
        goto out;
    }
    /* Every thread runs and start-up is over: from here on, only the allow-list (d_seccomp.h). */
    if (d_seccomp_install(SWORN_SECCOMP_ENGINE, (enum d_seccomp_mode)d->cfg->seccomp_mode,
                          d_seccomp_flags(d->cfg)) < 0) {
        fail("seccomp");
        goto out;
    }
    {
        json_object *f = json_object_new_object();

        if (f != NULL) {
            json_object_object_add(f, "decision_socket",
                                   json_object_new_string(d->cfg->decision_socket));
            json_object_object_add(f, "admin_socket", json_object_new_string(d->cfg->admin_socket));
            json_object_object_add(f, "log_size",
                                   json_object_new_int64((int64_t)sworn_log_size(d->log)));
            json_object_object_add(f, "pid", json_object_new_int64((int64_t)getpid()));
        }
        d_log(D_LOG_INFO, "ready", f);
    }
    if (sworn_sdnotify_send(d->notify_fd, "READY=1") < 0)
        d_log_msg(D_LOG_WARN, "notify_failed", sworn_err_msg());
    event_base_dispatch(d->base);
    rc = 0;
out:
    shutdown_all(d);
    if (rc == 0 && !check_only)
        d_log_msg(D_LOG_INFO, "stopped", "orderly stop");
    return rc;
}
