/*
 * test_tiles.c -- tlog-tiles paths, hash tiles and entry bundles: the examples of the C2SP spec,
 * round trips, and hostile input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "err.h"
#include "tiles.h"

static void expect_path(int level, uint64_t index, unsigned width, const char *want)
{
    struct sworn_tile_id id = {.level = level, .index = index, .width = width}, back;
    char path[SWORN_TILE_PATH_MAX];
    long n = sworn_tile_path(&id, path, sizeof(path));

    assert_true(n > 0);
    assert_string_equal(path, want);
    assert_int_equal(sworn_tile_path_parse(path, (size_t)n, &back), 0);
    assert_int_equal(back.level, level);
    assert_int_equal(back.index, index);
    assert_int_equal(back.width, width);
}

/* The C2SP tlog-tiles examples (1234067 -> x001/x234/067), and the edges. */
static void test_paths(void **state)
{
    (void)state;
    expect_path(0, 1234067, 256, "tile/0/x001/x234/067");
    expect_path(1, 5, 256, "tile/1/005");
    expect_path(0, 0, 15, "tile/0/000.p/15");
    expect_path(SWORN_TILE_LEVEL_ENTRIES, 1234067, 256, "tile/entries/x001/x234/067");
    expect_path(SWORN_TILE_LEVEL_ENTRIES, 1, 47, "tile/entries/001.p/47");
    expect_path(2, 1000, 1, "tile/2/x001/000.p/1");
    expect_path(63, UINT64_MAX, 255, "tile/63/x018/x446/x744/x073/x709/x551/615.p/255");
}

static void expect_bad_path(const char *path)
{
    struct sworn_tile_id id;

    if (sworn_tile_path_parse(path, strlen(path), &id) == 0)
        fail_msg("accepted tile path %s", path);
    assert_int_equal(sworn_err_code(), SWORN_ERR_FORMAT);
}

static void test_bad_paths(void **state)
{
    (void)state;
    expect_bad_path("");
    expect_bad_path("tile/");
    expect_bad_path("tile/0/");
    expect_bad_path("tile/0/1");
    expect_bad_path("tile/0/0001");
    expect_bad_path("tile/0/x000/001"); /* a leading zero group */
    expect_bad_path("tile/0/x1/001");
    expect_bad_path("tile/00/001"); /* level with a leading zero */
    expect_bad_path("tile/64/001"); /* level too high */
    expect_bad_path("tile/0/001.p/0");
    expect_bad_path("tile/0/001.p/256"); /* a full tile has no .p */
    expect_bad_path("tile/0/001.p/015");
    expect_bad_path("tile/0/001.p/");
    expect_bad_path("tile/0/001/");
    expect_bad_path("tile/0/001 ");
    expect_bad_path("tile/entries/x018/x446/x744/x073/x709/x551/616"); /* 2^64 */
    expect_bad_path("tile/0/x001/x002/x003/x004/x005/x006/x007/008");
    expect_bad_path("tile/-1/001");
    expect_bad_path("tiles/0/001");
    expect_bad_path("tile/data/001");
}

static void test_bundles(void **state)
{
    static const uint8_t bundle[] = {0, 3, 'o', 'n', 'e', 0, 0, 0, 2, 'h', 'i'};
    struct sworn_tile_entry e[256];

    (void)state;
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle), 3, e), 0);
    assert_int_equal(e[0].len, 3);
    assert_memory_equal(e[0].data, "one", 3);
    assert_int_equal(e[1].len, 0);
    assert_int_equal(e[2].len, 2);
    /* Fewer entries than the path says, more bytes than the entries, a truncated entry. */
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle), 4, e), -1);
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle), 2, e), -1);
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle) - 1, 3, e), -1);
    assert_int_equal(sworn_tile_bundle_parse(bundle, 1, 1, e), -1);
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle), 0, e), -1);
    assert_int_equal(sworn_tile_bundle_parse(bundle, sizeof(bundle), 257, e), -1);
}

static void test_hash_tiles(void **state)
{
    static uint8_t tile[256 * 32];

    (void)state;
    assert_int_equal(sworn_tile_hashes_check(tile, 256 * 32, 256), 0);
    assert_int_equal(sworn_tile_hashes_check(tile, 15 * 32, 15), 0);
    assert_int_equal(sworn_tile_hashes_check(tile, 15 * 32 - 1, 15), -1);
    assert_int_equal(sworn_tile_hashes_check(tile, 16 * 32, 15), -1);
    assert_int_equal(sworn_tile_hashes_check(tile, 0, 0), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_bundles),
        cmocka_unit_test(test_hash_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
