/*
 * fuzz_config.c -- libFuzzer target for config.c: the input is written to a private temporary
 * file (sworn_dconfig_load reads a path, since relative paths resolve against its folder) and
 * loaded.
 *
 * A loaded configuration must hold what config.h promises: every required field set, every path
 * absolute, PCR 23 always in the quote set, bounds respected, the two sockets different.
 * sworn_dconfig_check is not run: it looks at the machine's file system, which is not the input.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "err.h"
#include "fuzz.h"

static char path[64];

/* The temporary file goes when the process ends (replay and libFuzzer both exit normally). */
static void remove_tmp(void)
{
    unlink(path);
}

static void must_abs(const char *p)
{
    if (p != NULL && p[0] != '/')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_dconfig *c = NULL;
    FILE *fp;

    if (path[0] == '\0') {
        int fd;
        snprintf(path, sizeof(path), "/tmp/sworn-fuzz-config-XXXXXX");
        fd = mkstemp(path);
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_tmp);
    }
    fp = fopen(path, "wb");
    if (fp == NULL || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
        abort();
    if (sworn_dconfig_load(path, &c) != 0) {
        if (c != NULL || sworn_err_msg()[0] == '\0')
            abort();
        return 0;
    }
    if (c->log_db == NULL || c->origin == NULL || c->signer_key == NULL || c->policy_path == NULL ||
        c->decision_socket == NULL || c->admin_socket == NULL || c->n_proxy_uids == 0 ||
        c->n_operator_uids == 0)
        abort();
    must_abs(c->log_db);
    must_abs(c->export_dir);
    must_abs(c->signer_module);
    must_abs(c->signer_pin_file);
    must_abs(c->keyring);
    must_abs(c->policy_path);
    must_abs(c->vault_path);
    must_abs(c->decision_socket);
    must_abs(c->admin_socket);
    for (size_t i = 0; i < c->n_measure; i++)
        must_abs(c->measure[i]);
    if (strncmp(c->signer_key, "file:", 5) == 0)
        must_abs(c->signer_key + 5);
    if (!(c->tpm_pcrs & (1u << 23)) || c->workers < 1 || c->workers > 64 ||
        c->checkpoint_interval_ms < 10 || strcmp(c->decision_socket, c->admin_socket) == 0)
        abort();
    sworn_dconfig_free(c);
    return 0;
}
