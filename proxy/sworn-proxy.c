/*
 * sworn-proxy.c -- the program: parse the command line, then hand over to the proxy's modules
 * (docs/proxy.md).
 *
 *   sworn-proxy --config FILE                 serve, in the foreground, until SIGTERM or SIGINT
 *   sworn-proxy --check-config [--strict] --config FILE
 *                                             load and check FILE, print each setting that
 *                                             weakens the proxy as "FILE: warning: KEY: ..." on
 *                                             stderr, then "FILE: ok" (with --strict a warning
 *                                             makes it exit 1)
 *   sworn-proxy ca init DIR [--cn NAME] [--days N]
 *                                             make the local CA (DIR/ca.crt, DIR/ca.key 0600)
 *   sworn-proxy --version | --help
 *
 * Exit codes: 0 success (and an orderly stop), 1 a configuration or CA that is refused or a
 * failure to start or run, 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "err.h"
#include "p_ca.h"
#include "cli.h"
#include "sdnotify.h"
#include "p_config.h"
#include "p_harden.h"
#include "p_jlog.h"
#include "p_proxy.h"
#include "p_version.h"

static const char usage_text[] =
    "usage: sworn-proxy --config FILE\n"
    "       sworn-proxy --check-config [--strict] --config FILE\n"
    "       sworn-proxy ca init DIR [--cn NAME] [--days N]\n"
    "       sworn-proxy --version | --help\n"
    "The agent's one route out: every request decided by decisiond (docs/proxy.md).\n";

static const char own_exits[] =
    "  (1: the proxy could not start or run, or the configuration does not load)\n";

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

/* The configuration is about 100 KiB, the proxy's state more: kept off the stack. */
static struct sworn_pconf config;
static struct sworn_proxy proxy;

static int ca_init(int argc, char **argv)
{
    const char *dir = NULL, *cn = "sworn-proxy local CA";
    unsigned long days = 365;

    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--cn") == 0 && i + 1 < argc) {
            cn = argv[++i];
        } else if (strcmp(argv[i], "--days") == 0 && i + 1 < argc) {
            char *end = NULL;

            errno = 0;
            days = strtoul(argv[++i], &end, 10);
            if (errno != 0 || end == argv[i] || *end != '\0' || days == 0 || days > 3650) {
                fprintf(stderr, "sworn-proxy: --days must be 1..3650\n");
                return 2;
            }
        } else if (dir == NULL && argv[i][0] != '-') {
            dir = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (dir == NULL) {
        usage(stderr);
        return 2;
    }
    if (sworn_proxy_ca_init(dir, cn, (unsigned)days) != 0) {
        fprintf(stderr, "sworn-proxy: ca init: %s\n", sworn_err_msg());
        return 1;
    }
    printf("%s/ca.crt\n%s/ca.key\n", dir, dir);
    return 0;
}

/* log.file, opened and checked before the privilege drop (p_config.h: sworn_pconf_open_log). */
static int open_log(void)
{
    int fd = -1;

    if (sworn_pconf_open_log(&config, &fd) != 0)
        return -1;
    if (fd >= 0)
        sworn_plog_open(fd);
    return 0;
}

/* One warn line per weakening setting (p_config.h: sworn_pconf_warnings). */
static void log_warning(void *arg, const char *key, const char *message)
{
    json_object *o = json_object_new_object();

    (void)arg;
    json_object_object_add(o, "key", json_object_new_string(key));
    json_object_object_add(o, "warning", json_object_new_string(message));
    sworn_plog(SWORN_PLOG_WARN, "config_warning", o);
}

/* --check-config's form, that of sworn-policy check: "FILE: warning: KEY: message". */
static void print_warning(void *arg, const char *key, const char *message)
{
    fprintf(stderr, "%s: warning: %s: %s\n", (const char *)arg, key, message);
}

static int serve(void)
{
    json_object *o;
    int notify_fd = -1;

    /* A peer that resets its connection must cost that connection, not the process: writes to a
     * closed socket fail with EPIPE instead of raising SIGPIPE (libevent and OpenSSL write with
     * plain send and write). */
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return sworn_err_set(SWORN_ERR_IO, "cannot ignore SIGPIPE: %s", strerror(errno));
    if (sworn_proxy_harden_early() != 0 || open_log() != 0)
        return -1;
    sworn_plog_set_level(config.log_debug ? SWORN_PLOG_DEBUG : SWORN_PLOG_INFO);
    (void)sworn_pconf_warnings(&config, geteuid(), log_warning, NULL);
    if (sworn_proxy_open(&proxy, &config) != 0)
        return -1;
    /* The service manager's readiness socket (Type=notify), before the filter forbids connect. */
    if (sworn_sdnotify_open(&notify_fd) != 0 || sworn_proxy_harden(&proxy) != 0) {
        sworn_proxy_close(&proxy);
        return -1;
    }
    o = json_object_new_object();
    json_object_object_add(o, "version", json_object_new_string(sworn_proxy_version()));
    json_object_object_add(o, "config", json_object_new_string(config.path));
    json_object_object_add(o, "pid", json_object_new_int64((int64_t)getpid()));
    sworn_plog(SWORN_PLOG_INFO, "ready", o);
    if (sworn_sdnotify_send(notify_fd, "READY=1") != 0)
        sworn_plog(SWORN_PLOG_WARN, "notify_failed", NULL);
    if (sworn_proxy_run(&proxy) != 0) {
        sworn_proxy_close(&proxy);
        return -1;
    }
    sworn_proxy_close(&proxy);
    sworn_plog(SWORN_PLOG_INFO, "stopped", NULL);
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int check = 0, strict = 0, status;

    if (sworn_cli_standard(argc, argv, "sworn-proxy", usage_text, own_exits, &status))
        return status;
    if (argc >= 3 && strcmp(argv[1], "ca") == 0 && strcmp(argv[2], "init") == 0)
        return ca_init(argc, argv);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("%s\n", sworn_proxy_version());
            return 0;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--check-config") == 0) {
            check = 1;
        } else if (strcmp(argv[i], "--strict") == 0) {
            strict = 1;
        } else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
            path = argv[++i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (path == NULL || (strict && !check)) {
        usage(stderr);
        return 2;
    }
    if (sworn_pconf_load(path, &config) != 0 || sworn_pconf_check(&config) != 0) {
        fprintf(stderr, "sworn-proxy: %s\n", sworn_err_msg());
        return 1;
    }
    if (check) {
        size_t warnings = sworn_pconf_warnings(&config, geteuid(), print_warning, (void *)path);

        if (strict && warnings > 0) {
            fprintf(stderr, "%s: %zu warning%s (--strict)\n", path, warnings,
                    warnings == 1 ? "" : "s");
            return 1;
        }
        printf("%s: ok\n", path);
        return 0;
    }
    if (serve() != 0) {
        json_object *o = json_object_new_object();

        json_object_object_add(o, "error", json_object_new_string(sworn_err_msg()));
        sworn_plog(SWORN_PLOG_ERROR, "fatal", o);
        fprintf(stderr, "sworn-proxy: %s\n", sworn_err_msg());
        return 1;
    }
    return 0;
}
