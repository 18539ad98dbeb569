/*
 * p_json.h -- strict JSON (RFC 8259) for the request and response bodies the proxy decides on:
 * MCP JSON-RPC messages, model API requests and their usage, OAuth token responses.
 *
 * Why not json-c alone: in its STRICT mode json-c 0.16 still takes `{'a':1}` and `NaN`, keeps the
 * last of two members of one name, cuts a member name at an escaped NUL ("name\u0000x" is
 * "name", so `{"name":"pay","name\u0000x":"safe"}` reads as "safe" where a JavaScript server
 * reads "pay"), and clamps integers (99999999999999999999 reads as 18446744073709551615). A
 * proxy that decides on one reading while the server acts on another is bypassed. So the text is
 * first checked here, and only text that every RFC 8259 parser reads one way is handed to json-c.
 *
 * Refused (each with its own sentence, docs/proxy.md "Strict JSON"):
 *   - anything outside RFC 8259's grammar: single quotes, NaN and Infinity, comments, a trailing
 *     comma, a leading '+' or '0', '.5', '1.', hex, a byte order mark, an empty text, a second
 *     value after the first, a raw control character (< 0x20) in a string;
 *   - bytes that are not UTF-8 (RFC 3629: overlong forms, surrogates, above U+10FFFF);
 *   - an escape that is not one of RFC 8259's, and a \u escape of a lone UTF-16 surrogate
 *     (a high one not followed by a low one, or a low one alone): parsers disagree on those;
 *   - two members of one object whose names are equal after unescaping ("a" and "\u0061");
 *   - a member name holding U+0000 (escaped), which json-c would cut;
 *   - nesting deeper than SWORN_PJSON_DEPTH_MAX arrays and objects;
 *   - more than SWORN_PJSON_MEMBERS_MAX members in one object.
 * Whitespace is RFC 8259's four characters only, before and after the value.
 *
 * Numbers keep their exact text: sworn_pjson_numbers gives each number of a subtree with its
 * RFC 6901 pointer and the bytes as written, which is what budgets read (docs/policy.md 4.3), so no
 * conversion to a double or an integer ever stands between the body and the budget.
 *
 * Strings taken from the tree: json-c keeps a string value's length, and a value may hold U+0000;
 * read strings with json_object_get_string_len and refuse (or compare with) the whole length,
 * never as a C string.
 *
 * Memory: sworn_pjson_parse allocates json-c's tree and, while it checks, one array of member
 * hashes for the deepest open objects (freed before it returns). Time: linear in the text, plus
 * O(m log m) per object of m members. Thread-safe (no globals). Inputs are public request data.
 */
#ifndef SWORN_P_JSON_H
#define SWORN_P_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define SWORN_PJSON_DEPTH_MAX 64u       /* nested arrays and objects */
#define SWORN_PJSON_MEMBERS_MAX 65536u  /* members of one object */
#define SWORN_PJSON_NUMBERS_MAX 64u     /* = the wire's Context.json_numbers bound */
#define SWORN_PJSON_POINTER_MAX 256u    /* a pointer, without its NUL (the wire's bound) */
#define SWORN_PJSON_NUMBER_TEXT_MAX 64u /* a number's text, without its NUL (the wire's) */

/* One number of a body: its RFC 6901 pointer and its exact RFC 8259 text. */
struct sworn_pjson_number {
    char pointer[SWORN_PJSON_POINTER_MAX + 1];
    char text[SWORN_PJSON_NUMBER_TEXT_MAX + 1];
};

/*
 * Check text[0..len) and, when it passes, parse it with json-c. Returns 0 with *root set (the
 * caller json_object_put()s it; it is NULL for the text `null`), 1 when the text is refused
 * (*why: a static sentence starting "the body is not strict JSON: "; *root NULL), or -1 when
 * memory ran out (sworn_err set; *root NULL).
 */
int sworn_pjson_parse(const uint8_t *text, size_t len, struct json_object **root, const char **why);

/*
 * The numbers of the value at the RFC 6901 pointer `under` ("" for the whole text; a pointer
 * naming nothing, or naming a number itself, gives none), in text order, each with its pointer
 * relative to `under` (so "/amount" for the member amount of the object at `under`). At most
 * cap are written to out and *n says how many. *more is set to 1 when a number was left out:
 * past cap, a pointer longer than SWORN_PJSON_POINTER_MAX, a text longer than
 * SWORN_PJSON_NUMBER_TEXT_MAX, or a pointer holding a character that is not safe in the record
 * (common/utf8.h's list: a member name with a control character); else 0. A budget whose pointer
 * was left out finds no number and denies (docs/policy.md 4.3): leaving out never lets through.
 * Only for text that sworn_pjson_parse accepted (otherwise the result is empty, *more 1).
 */
void sworn_pjson_numbers(const uint8_t *text, size_t len, const char *under,
                         struct sworn_pjson_number *out, size_t cap, size_t *n, int *more);

#endif
