/*
 * softhsm_fixture.c -- see softhsm_fixture.h.
 */
#define _GNU_SOURCE
#include "softhsm_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

static void die(const char *what)
{
    fprintf(stderr, "softhsm fixture: %s\n", what);
    abort();
}

int softhsm_sh(struct softhsm *h, const char *cmd, const char *out_file)
{
    char *full;
    int status;

    if (asprintf(&full, "cd '%s' && export SOFTHSM2_CONF='%s' && ( %s ) >'%s' 2>&1", h->dir,
                 h->conf, cmd, out_file ? out_file : "/dev/null") < 0)
        die("asprintf");
    status = system(full);
    free(full);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

struct softhsm *softhsm_start(void)
{
    struct softhsm *h = calloc(1, sizeof(*h));
    const char *bin = getenv("SWORN_HSM_BIN");
    char *cmd, *out;

    if (h == NULL || bin == NULL)
        die("SWORN_HSM_BIN is not set (ctest sets it)");
    h->dir = sworn_test_tmpdir("softhsm");
    h->conf = sworn_test_path(h->dir, "tok/softhsm2.conf");
    h->tokens = sworn_test_path(h->dir, "tok/tokens");
    h->pin_file = sworn_test_path(h->dir, "user.pin");
    h->so_pin_file = sworn_test_path(h->dir, "so.pin");
    /* A trailing newline on purpose: the reader must strip it, not send it. */
    sworn_test_write_file(h->pin_file, "4711\n", 5, 0600);
    sworn_test_write_file(h->so_pin_file, "87654321", 8, 0600);
    out = sworn_test_path(h->dir, "init.out");
    if (asprintf(&cmd,
                 "'%s' init-dev-token --dir '%s/tok' --label %s --so-pin-file so.pin "
                 "--pin-file user.pin",
                 bin, h->dir, SOFTHSM_TOKEN) < 0)
        die("asprintf");
    if (softhsm_sh(h, cmd, out) != 0) {
        char *text = sworn_test_read_file(out, NULL);
        fprintf(stderr, "%s\n", text);
        die("sworn-hsm init-dev-token failed");
    }
    free(cmd);
    free(out);
    return h;
}

void softhsm_stop(struct softhsm *h)
{
    if (h == NULL)
        return;
    sworn_test_rmtree(h->dir);
    free(h->dir);
    free(h->conf);
    free(h->tokens);
    free(h->pin_file);
    free(h->so_pin_file);
    free(h);
}

char *softhsm_keygen(struct softhsm *h, const char *purpose, const char *alg, const char *date,
                     uint8_t *spki, size_t *spki_len)
{
    const char *bin = getenv("SWORN_HSM_BIN");
    char *cmd, *out = sworn_test_path(h->dir, "keygen.out"),
               *der = sworn_test_path(h->dir, "pub.der");
    char *uri, *data;
    size_t len;

    if (asprintf(&cmd,
                 "'%s' keygen --module %s --token %s --pin-file user.pin --purpose %s "
                 "--alg %s --date %s 2>/dev/null",
                 bin, SOFTHSM_MODULE_PATH, SOFTHSM_TOKEN, purpose, alg, date) < 0)
        die("asprintf");
    if (softhsm_sh(h, cmd, out) != 0)
        die("sworn-hsm keygen failed");
    free(cmd);
    uri = sworn_test_read_file(out, NULL);
    uri[strcspn(uri, "\n")] = '\0';
    if (asprintf(&cmd, "'%s' pubkey --module %s --uri '%s' --der --out pub.der", bin,
                 SOFTHSM_MODULE_PATH, uri) < 0)
        die("asprintf");
    if (softhsm_sh(h, cmd, NULL) != 0)
        die("sworn-hsm pubkey failed");
    free(cmd);
    data = sworn_test_read_file(der, &len);
    memcpy(spki, data, len);
    *spki_len = len;
    free(data);
    free(out);
    free(der);
    return uri;
}
