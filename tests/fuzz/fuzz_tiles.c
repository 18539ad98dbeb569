/*
 * fuzz_tiles.c -- libFuzzer target for the tlog-tiles parsers: tile paths, entry bundles and hash
 * tiles. The first byte picks the parser; the rest is its input. A path that parses must format
 * back to exactly the same bytes (one canonical form), and a bundle's entries must lie inside it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tiles.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sworn_tile_entry entries[SWORN_TILE_WIDTH];

    if (size < 2)
        return 0;
    switch (data[0] % 3) {
    case 0: {
        struct sworn_tile_id id;
        char back[SWORN_TILE_PATH_MAX];

        if (sworn_tile_path_parse((const char *)data + 1, size - 1, &id) == 0) {
            long n = sworn_tile_path(&id, back, sizeof(back));
            if (n < 0 || (size_t)n != size - 1 || memcmp(back, data + 1, size - 1) != 0)
                abort();
        }
        break;
    }
    case 1: {
        unsigned width = (unsigned)data[1] + 1;

        if (sworn_tile_bundle_parse(data + 2, size - 2, width, entries) == 0) {
            for (unsigned i = 0; i < width; i++)
                if (entries[i].data < data + 2 || entries[i].data + entries[i].len > data + size)
                    abort();
        }
        break;
    }
    default:
        (void)sworn_tile_hashes_check(data + 2, size - 2, (unsigned)data[1] + 1);
        break;
    }
    return 0;
}
