/*
 * fuzz_yaml.c -- libFuzzer target for yamldoc.c: sworn_yaml_load_mem on the input, then a walk of
 * the whole tree through every getter.
 *
 * A loaded document must respect the bounds yamldoc.h promises (root a mapping at depth 1, every
 * mapping and sequence at depth <= SWORN_YAML_MAX_DEPTH, so a scalar at most one deeper, scalars
 * at most SWORN_YAML_MAX_SCALAR bytes without NUL, no key twice in a mapping, positions >= 1); a
 * refused one must leave an error naming the input. Anything else aborts, which libFuzzer reports
 * as a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "yamldoc.h"
#include "fuzz.h"

static size_t walked;

static void walk(const struct sworn_yaml_doc *d, const struct sworn_yaml_node *n, unsigned depth)
{
    const char *s;
    size_t len = 0;
    uint64_t v;
    int b;

    walked++;
    if (n == NULL || sworn_yaml_line(n) < 1 || sworn_yaml_col(n) < 1)
        abort();
    switch (sworn_yaml_kind(n)) {
    case SWORN_YAML_SCALAR:
        s = sworn_yaml_text(n, &len);
        if (s == NULL || strlen(s) != len || len > SWORN_YAML_MAX_SCALAR)
            abort();
        (void)sworn_yaml_bool(d, n, &b);
        (void)sworn_yaml_u64(d, n, 0, UINT64_MAX, &v);
        (void)sworn_yaml_duration_ms(d, n, &v);
        if (sworn_yaml_str(d, n, &s) != 0)
            abort();
        break;
    case SWORN_YAML_SEQ:
    case SWORN_YAML_MAP:
        /* "Nesting at most SWORN_YAML_MAX_DEPTH" counts containers, the root being the first:
         * the root plus 31 nested ones is the deepest document accepted (test_yamldoc's
         * test_bombs), and a scalar inside the deepest container is one level further. */
        if (depth > SWORN_YAML_MAX_DEPTH)
            abort();
        for (size_t i = 0; i < sworn_yaml_len(n); i++) {
            if (sworn_yaml_kind(n) == SWORN_YAML_MAP) {
                const char *k = sworn_yaml_key(n, i);
                if (k == NULL || sworn_yaml_kind(sworn_yaml_key_node(n, i)) != SWORN_YAML_SCALAR)
                    abort();
                /* No duplicate keys: get finds this very value. */
                if (sworn_yaml_get(n, k) != sworn_yaml_item(n, i))
                    abort();
            }
            walk(d, sworn_yaml_item(n, i), depth + 1);
        }
        if (sworn_yaml_kind(n) == SWORN_YAML_MAP) {
            static const char *const none[] = {NULL};
            if (sworn_yaml_only_keys(d, n, none) != (sworn_yaml_len(n) ? -1 : 0))
                abort();
        }
        break;
    default:
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sworn_yaml_doc *d = NULL;

    if (sworn_yaml_load_mem("fuzz.yaml", data, size, &d) != 0) {
        if (d != NULL || strncmp(sworn_err_msg(), "fuzz.yaml", 9) != 0)
            abort();
        return 0;
    }
    if (sworn_yaml_kind(sworn_yaml_root(d)) != SWORN_YAML_MAP)
        abort();
    walked = 0;
    walk(d, sworn_yaml_root(d), 1);
    if (walked > SWORN_YAML_MAX_NODES)
        abort();
    sworn_yaml_free(d);
    return 0;
}
