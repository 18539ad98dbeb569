/*
 * fuzz_vault.c -- libFuzzer target for vault.c: the input is written to a private temporary file
 * (mode 0600, as the vault must be) and loaded; a loaded vault then answers a few releases and a
 * token lookup.
 *
 * A release must return 0, 1 or -1 and, on 0, a value of 1..SWORN_VAULT_VALUE_MAX bytes whose
 * SHA-256 is the one reported; exactly one of the header and query names is set. Anything else
 * aborts, which libFuzzer reports as a crash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "err.h"
#include "vault.h"
#include "fuzz.h"

static char path[64];

/* The temporary file goes when the process ends (replay and libFuzzer both exit normally). */
static void remove_tmp(void)
{
    unlink(path);
}

static void try_release(const struct sworn_vault *v, const char *id, const char *principal,
                        const char *scheme, const char *host, uint32_t port, const char *p)
{
    Sworn__V1__AuthorizationRequest r = SWORN__V1__AUTHORIZATION_REQUEST__INIT;
    Sworn__V1__Principal pr = SWORN__V1__PRINCIPAL__INIT;
    Sworn__V1__Resource res = SWORN__V1__RESOURCE__INIT;
    struct sworn_vault_release out;
    const char *why = NULL;
    uint8_t sha[32];
    int rc;

    pr.id = (char *)principal;
    res.scheme = (char *)scheme;
    res.host = (char *)host;
    res.port = port;
    res.path = (char *)p;
    r.principal = &pr;
    r.resource = &res;
    memset(&out, 0, sizeof(out));
    rc = sworn_vault_release(v, id, &r, &out, &why);
    if (rc == 1 && why != NULL)
        return;
    if (rc != 0 || out.value == NULL || out.value_len < 1 || out.value_len > SWORN_VAULT_VALUE_MAX)
        abort();
    if ((out.header_name[0] == '\0') == (out.query_name[0] == '\0'))
        abort();
    if (EVP_Digest(out.value, out.value_len, sha, NULL, EVP_sha256(), NULL) != 1 ||
        memcmp(sha, out.value_sha256, 32) != 0)
        abort();
    sworn_vault_release_wipe(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_vault *v = NULL;
    uint8_t h[32] = {0};
    char id[129];
    FILE *fp;

    if (path[0] == '\0') {
        int fd;
        snprintf(path, sizeof(path), "/tmp/sworn-fuzz-vault-XXXXXX");
        fd = mkstemp(path); /* mode 0600, owned by us */
        if (fd < 0)
            abort();
        close(fd);
        atexit(remove_tmp);
    }
    fp = fopen(path, "wb");
    if (fp == NULL || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
        abort();
    if (sworn_vault_load(path, &v) != 0) {
        if (v != NULL || sworn_err_msg()[0] == '\0')
            abort();
        return 0;
    }
    try_release(v, "github", "agent-1", "https", "api.github.com", 443, "/repos/x");
    try_release(v, "maps", "x", "https", "a.example.com", 443, "/");
    try_release(v, "c", "a", "https", "h.example", 443, "/a/../b");
    (void)sworn_vault_lookup_token(v, h, id);
    sworn_vault_free(v);
    return 0;
}
