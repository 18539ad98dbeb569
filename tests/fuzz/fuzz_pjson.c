/*
 * fuzz_pjson.c -- libFuzzer target for proxy/p_json.c (strict JSON, and the numbers of a subtree).
 *
 * Asserted on every input:
 *   - sworn_pjson_parse answers 0 or 1 (-1 only for out of memory); on 1 a sentence starting
 *     "the body is not strict JSON: " and no tree; on 0 no sentence;
 *   - what it accepts, json-c reads whole, and printing json-c's tree and checking the print again
 *     accepts it too (the checker and json-c agree on what the text is);
 *   - sworn_pjson_numbers on accepted text, under "" and under the first member's pointer: at most
 *     cap numbers, each pointer 1..256 bytes starting with '/', UTF-8 without unsafe characters,
 *     each text a number as RFC 8259 writes it (1..64 bytes), and the same answer twice;
 *   - on refused text it finds no number and says some were left out.
 * Anything else aborts, which libFuzzer reports as a crash.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "p_json.h"
#include "utf8.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

static int is_number_text(const char *t)
{
    size_t i = 0;

    if (t[i] == '-')
        i++;
    if (t[i] == '0')
        i++;
    else if (t[i] >= '1' && t[i] <= '9')
        while (t[i] >= '0' && t[i] <= '9')
            i++;
    else
        return 0;
    if (t[i] == '.') {
        i++;
        if (t[i] < '0' || t[i] > '9')
            return 0;
        while (t[i] >= '0' && t[i] <= '9')
            i++;
    }
    if (t[i] == 'e' || t[i] == 'E') {
        i++;
        if (t[i] == '+' || t[i] == '-')
            i++;
        if (t[i] < '0' || t[i] > '9')
            return 0;
        while (t[i] >= '0' && t[i] <= '9')
            i++;
    }
    return t[i] == '\0';
}

static void check_numbers(const uint8_t *data, size_t size, const char *under)
{
    struct sworn_pjson_number a[SWORN_PJSON_NUMBERS_MAX], b[SWORN_PJSON_NUMBERS_MAX];
    size_t na = 0, nb = 0;
    int more_a = 0, more_b = 0;

    sworn_pjson_numbers(data, size, under, a, SWORN_PJSON_NUMBERS_MAX, &na, &more_a);
    sworn_pjson_numbers(data, size, under, b, SWORN_PJSON_NUMBERS_MAX, &nb, &more_b);
    CHECK(na <= SWORN_PJSON_NUMBERS_MAX && na == nb && more_a == more_b);
    for (size_t i = 0; i < na; i++) {
        size_t pl = strlen(a[i].pointer), tl = strlen(a[i].text);

        CHECK(pl >= 1 && pl <= SWORN_PJSON_POINTER_MAX && a[i].pointer[0] == '/');
        CHECK(sworn_utf8_check(a[i].pointer, pl, 0, "pointer") == 0);
        CHECK(tl >= 1 && tl <= SWORN_PJSON_NUMBER_TEXT_MAX && is_number_text(a[i].text));
        CHECK(strcmp(a[i].pointer, b[i].pointer) == 0 && strcmp(a[i].text, b[i].text) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct json_object *root = (struct json_object *)1;
    const char *why = (const char *)1;
    int rc = sworn_pjson_parse(data, size, &root, &why);

    CHECK(rc == 0 || rc == 1 || rc == -1);
    if (rc != 0) {
        struct sworn_pjson_number n[4];
        size_t count = 9;
        int more = 0;

        CHECK(root == NULL);
        CHECK(rc == -1 || (why != NULL && strncmp(why, "the body is not strict JSON: ", 29) == 0));
        sworn_pjson_numbers(data, size, "", n, 4, &count, &more);
        CHECK(rc == -1 || (count == 0 && more == 1));
        return 0;
    }
    CHECK(why == NULL);
    {
        /* json-c's own print of the tree is strict JSON too (the two readers agree). */
        const char *printed =
            root == NULL ? "null" : json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
        struct json_object *again = NULL;
        const char *why2 = NULL;
        int rc2;

        CHECK(printed != NULL);
        rc2 = sworn_pjson_parse((const uint8_t *)printed, strlen(printed), &again, &why2);
        CHECK(rc2 == 0 || rc2 == -1);
        json_object_put(again);
    }
    check_numbers(data, size, "");
    if (root != NULL && json_object_is_type(root, json_type_object)) {
        json_object_object_foreach(root, key, value)
        {
            char under[SWORN_PJSON_POINTER_MAX + 2];

            (void)value;
            if (strlen(key) < SWORN_PJSON_POINTER_MAX && strpbrk(key, "~/") == NULL) {
                under[0] = '/';
                memcpy(under + 1, key, strlen(key) + 1);
                check_numbers(data, size, under);
            }
            break;
        }
    }
    json_object_put(root);
    return 0;
}
