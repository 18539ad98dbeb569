/*
 * replay_main.c -- runs a fuzz target over every file of its seed corpus, without libFuzzer, so
 * that make check (normal and sanitizer builds) replays kept inputs as regression tests.
 * Usage: replay-<parser> DIR... [-o DIR...]   Every DIR must exist; a DIR after -o may be absent
 * (tests/fuzz/crashes/<parser>/, which exists only once a crash was kept). An input that crashes
 * the target ends the run (a sanitizer abort, or the target's own abort). Exit 0 when every input
 * ran and at least one did; 1 when a folder or an input could not be read, or none was found.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

/* Read a whole file into a fresh allocation. Returns NULL on failure. */
static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t cap = 0, n = 0;

    if (f == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            uint8_t *grown = realloc(data, cap ? cap * 2 : 4096);
            if (grown == NULL) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
            cap = cap ? cap * 2 : 4096;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = n;
    return data;
}

int main(int argc, char **argv)
{
    int inputs = 0, optional = 0;

    for (int i = 1; i < argc; i++) {
        DIR *d;
        struct dirent *e;

        if (strcmp(argv[i], "-o") == 0) {
            optional = 1;
            continue;
        }
        d = opendir(argv[i]);
        if (d == NULL && optional && errno == ENOENT)
            continue;
        if (d == NULL) {
            fprintf(stderr, "replay: cannot open corpus folder %s\n", argv[i]);
            return 1;
        }
        while ((e = readdir(d)) != NULL) {
            char path[4096];
            size_t len = 0;
            uint8_t *data;

            if (e->d_name[0] == '.')
                continue;
            if (snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name) >= (int)sizeof(path))
                continue;
            data = read_all(path, &len);
            if (data == NULL) {
                fprintf(stderr, "replay: cannot read %s\n", path);
                closedir(d);
                return 1;
            }
            /* Named before it runs: if it crashes, the last line says which input it was. */
            fprintf(stderr, "replay: %s\n", path);
            LLVMFuzzerTestOneInput(data, len);
            free(data);
            inputs++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", inputs);
    return inputs > 0 ? 0 : 1;
}
