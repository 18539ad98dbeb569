/*
 * sworn-witness.c -- a C2SP tlog-witness server (docs/witness.md).
 *
 *     sworn-witness --config FILE               serve (until SIGTERM or SIGINT)
 *     sworn-witness --config FILE --print-vkey  print the cosignature verifier key and exit
 *     sworn-witness --config FILE --check       load the configuration, open the key and the
 *                                               state, and exit (0 when all is well)
 *
 * Exit status: 0, 1 for a failure at start (the message on stderr), 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "err.h"
#include "privdrop.h"
#include "signer.h"
#include "w_config.h"
#include "w_cosign.h"
#include "w_server.h"
#include "w_state.h"

#define STATE_BUSY_MS 5000 /* another process holding the state's write lock: wait this long */

static const char usage_text[] =
    "usage: sworn-witness --config FILE [--print-vkey | --check]\n"
    "       sworn-witness --help | --version\n"
    "A C2SP tlog-witness: cosigns a log's checkpoints that are consistent with the last one it\n"
    "cosigned (docs/witness.md). --print-vkey prints its cosignature verifier key; --check\n"
    "loads the configuration, the key and the state, and exits.\n";

static const char own_exits[] =
    "  (1: the start failed, or the configuration, key or state does not load)\n";

static void usage(void)
{
    fputs(usage_text, stderr);
    exit(SWORN_EXIT_USAGE);
}

static int open_key(const struct sworn_witness_config *c, struct sworn_signer **out)
{
    struct sworn_signer_config sc = {
        .uri = c->key_uri,
        .module_path = c->key_module,
        .pin_file = c->key_pin_file,
        .pinned_spki = c->pinned_spki,
        .pinned_spki_len = c->pinned_spki_len,
    };

    return sworn_signer_open(&sc, out);
}

int main(int argc, char **argv)
{
    const char *config = NULL;
    int print_vkey = 0, check = 0, rc = 1;
    struct sworn_witness_config *c = NULL;
    struct sworn_signer *signer = NULL;
    struct sworn_witness_state *st = NULL;
    struct sworn_witness_cosigner cs;
    char vkey[SWORN_NOTE_VKEY_MAX + 1];

    if (sworn_cli_standard(argc, argv, "sworn-witness", usage_text, own_exits, &rc))
        return rc;
    rc = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(argv[i], "--print-vkey") == 0)
            print_vkey = 1;
        else if (strcmp(argv[i], "--check") == 0)
            check = 1;
        else
            usage();
    }
    if (config == NULL || (print_vkey && check))
        usage();
    /* No core file or ptrace may carry the key (a file: key is in this process's memory). */
    if (sworn_no_dumps() < 0) {
        fprintf(stderr, "sworn-witness: %s\n", sworn_err_msg());
        return 1;
    }
    if (sworn_witness_config_load(config, &c) < 0) {
        fprintf(stderr, "sworn-witness: %s\n", sworn_err_msg());
        return 1;
    }
    if (open_key(c, &signer) < 0 || sworn_witness_cosigner_init(&cs, signer, c->key_name) < 0 ||
        sworn_witness_cosigner_vkey(&cs, vkey, sizeof(vkey)) < 0) {
        fprintf(stderr, "sworn-witness: key: %s\n", sworn_err_msg());
        goto done;
    }
    if (print_vkey) {
        printf("%s\n", vkey);
        rc = 0;
        goto done;
    }
    if (sworn_signer_software_held(signer))
        fprintf(stderr, "{\"event\":\"warning\",\"reason\":\"the witness key is a file (software-"
                        "held); a PKCS#11 token keeps it from being copied\"}\n");
    if (sworn_witness_state_open(c->state_path, STATE_BUSY_MS, &st) < 0) {
        fprintf(stderr, "sworn-witness: %s\n", sworn_err_msg());
        goto done;
    }
    if (check) {
        printf("ok: %s, %zu logs, key %s\n", config, c->nlogs, vkey);
        rc = 0;
        goto done;
    }
    if (sworn_witness_serve(c, st, &cs) < 0) {
        fprintf(stderr, "sworn-witness: %s\n", sworn_err_msg());
        goto done;
    }
    rc = 0;
done:
    sworn_witness_state_close(st);
    sworn_signer_close(signer);
    sworn_witness_config_free(c);
    return rc;
}
