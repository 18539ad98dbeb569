/*
 * fuzz_v_bundle.c -- libFuzzer target for the verifier's reading of a bundle file (verifier/
 * sv_verify.c, `sworn bundle v1`, docs/verifier.md section 9): the input is written to a
 * temporary file and verified as a record under a policy trusting the tessera test log's key,
 * with sworn entries and a receipt key, so every section parser runs. Without that key's private
 * half no input can pass: a pass is a crash, and so is an "unreadable" verdict for a file that
 * was written. Every run also gathers the --html page's data and renders the page in memory
 * (verifier/sv_html.h): whatever the bytes, the page must be printable ASCII without "<script".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sv_html.h"
#include "sv_policy.h"
#include "sv_stats.h"
#include "sv_verify.h"
#include "fuzz.h"

static const char policy[] =
    "origin example.com/log/testdata\n"
    "log example.com/log/testdata+33d7b496+AeHTu4Q3hEIMHNqc6fASMsq3rKNx280NI+oO5xCFkkSx\n"
    "entries sworn\n"
    "receipt-key MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sv_policy p;
    static int ready;
    static struct sv_report rep;
    char path[64], why[SV_WHY];
    struct sv_verify_opts o;
    struct sv_stats st;
    FILE *f;
    char *page;
    size_t len;
    int fd, rc;

    if (!ready) {
        if (sv_policy_parse(policy, sizeof(policy) - 1, NULL, &p, why) != 0)
            abort();
        ready = 1;
    }
    snprintf(path, sizeof(path), "/tmp/fuzz-v-bundle-XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return 0;
    f = fdopen(fd, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        unlink(path);
        return 0;
    }
    memset(&o, 0, sizeof(o));
    sv_stats_init(&st);
    o.policy = &p;
    o.record = path;
    o.stats = &st;
    rc = sv_verify_record(&o, &rep);
    unlink(path);
    if (rc == 0 || rc == 2)
        abort();
    if (sv_html_render_report(&rep, &st, NULL, &page, &len) == 0) {
        if (strlen(page) != len || strstr(page, "<script") != NULL)
            abort();
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)page[i] >= 0x80 || (page[i] < 0x20 && page[i] != '\n'))
                abort();
        free(page);
    }
    sv_stats_free(&st);
    return 0;
}
