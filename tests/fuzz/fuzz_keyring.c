/*
 * fuzz_keyring.c -- libFuzzer target for keyring/keyring.c and keyring/keyevent.c: the keyring text
 * (sworn_keyring_parse), keyring files signed or not (sworn_keyring_load, then the root
 * signatures counted against the file's own roots and against a fixed keyring version 3), the
 * key-event statement (sworn_keyevent_parse, then sworn_keyevent_verify against that fixed
 * keyring) and the time form, all on the same input.
 *
 * Besides not crashing, it checks what a lax parser would break:
 *   - a parsed keyring formats back to exactly its input (one text per keyring);
 *   - a keyring that loads from a file has its text inside that file;
 *   - a parsed key event formats back to exactly its input;
 *   - a parsed time formats back to exactly its input.
 * A broken property aborts, which libFuzzer reports as a crash.
 *
 * The seed corpus (corpus/keyring/) holds keyring versions 1..5 of a real run (init, add,
 * rotate, retire, revoke; SoftHSM keys and throwaway roots) and the three statements, which
 * verify against the fixed keyring below, so the fuzzer starts inside the signature checks.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyevent.h"
#include "keyring.h"
#include "fuzz.h"

/* Version 3 of the seed run: the rotated-out key (retired) and its successor (active). */
static const char fixed_text[] =
    "sworn keyring v1\n"
    "version 3\n"
    "threshold 2\n"
    "root root-a.example+a9c9e3c4+Aa9ErG/np4dBDACW9TEMD3uA1ni3KmxcV54WGLptVeL6\n"
    "root root-b.example+5b577637+AXIC/Pyjt2BsQ7HlKT+9y0uz/KwflFl41CItJMGvaOCT\n"
    "root root-c.example+bfd19868+ATmj5mdtq6Hm7ueJhBJvw3ytm1h8JboMKdnosk7QxN0I\n"
    "key aacc202232552ba9e5867e7fe15f9ab1b44889525f32a4ff0b73fb1436a8233b checkpoint active "
    "2026-02-01T00:00:00Z - "
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEKeCCjLPMsaJAuBcw2lkt8bKDmjGDlO8tVz82reInydI+SJ0rfg8XTiXdaG"
    "Zea/7+eo/07ZqBWFHFHjfPUMV5sA==\n"
    "key edc71aacf41c28f458cb227aa2d71c358665a698cffa24f479cdeee26b2d47a7 checkpoint retired "
    "2026-01-01T00:00:00Z 2026-02-01T00:00:00Z "
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE5sB+UOuV8f1JFH/ungFQZE36E74EAQHcCvP7MxJcuMo65H+omnJUYhdfyj"
    "lxkYN5qBBHl5DIwTQEwEvDS5DuMg==\n";

static struct sworn_keyring *fixed, *work;
static char *again;

static void load_fixed(void)
{
    if (fixed != NULL)
        return;
    fixed = sworn_keyring_new();
    work = sworn_keyring_new();
    again = malloc(SWORN_KEYRING_TEXT_MAX + 1);
    if (fixed == NULL || work == NULL || again == NULL ||
        sworn_keyring_parse(fixed_text, sizeof(fixed_text) - 1, fixed) != 0)
        abort();
}

static void fuzz_text(const char *data, size_t size)
{
    long n;

    if (sworn_keyring_parse(data, size, work) != 0)
        return;
    n = sworn_keyring_format(work, again, SWORN_KEYRING_TEXT_MAX + 1);
    if (n < 0 || (size_t)n != size || memcmp(again, data, size) != 0)
        abort();
}

static void fuzz_file(const char *data, size_t size)
{
    struct sworn_note note;
    int is_signed = 0;
    size_t count = 0;

    if (sworn_keyring_load(data, size, work, &note, &is_signed) != 0)
        return;
    if (!is_signed)
        return;
    if (note.text != data || note.text_len >= size)
        abort();
    if (sworn_keyring_count_signers(work, &note, &count) == 0 && count > work->root_count)
        abort();
    if (sworn_keyring_count_signers(fixed, &note, &count) == 0 && count > fixed->root_count)
        abort();
    (void)sworn_keyring_verify_root(work, &note, 1);
    (void)sworn_keyring_verify_transition(fixed, work, &note);
}

static void fuzz_event(const char *data, size_t size)
{
    struct sworn_keyevent ev;
    char text[SWORN_KEYEVENT_MAX + 1];
    long n;

    if (sworn_keyevent_parse(data, size, &ev) != 0)
        return;
    n = sworn_keyevent_format(&ev, text, sizeof(text));
    if (n < 0 || (size_t)n != size || memcmp(text, data, size) != 0)
        abort();
    (void)sworn_keyevent_verify(&ev, fixed);
}

static void fuzz_time(const char *data, size_t size)
{
    char out[SWORN_KEYRING_TIME_LEN + 1];
    int64_t t = 0;

    if (sworn_keyring_time_parse(data, size, &t) != 0)
        return;
    if (sworn_keyring_time_format(t, out) != 0 || memcmp(out, data, size) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;

    load_fixed();
    fuzz_text(s, size);
    fuzz_file(s, size);
    fuzz_event(s, size);
    if (size >= SWORN_KEYRING_TIME_LEN)
        fuzz_time(s, SWORN_KEYRING_TIME_LEN);
    return 0;
}
