/*
 * d_clock.c -- the daemon's two clocks (d_clock.h): d_now_unix_ms, the wall clock that entries,
 * budgets and escalations are stamped with, and d_now_mono_us, the monotonic clock of latencies
 * and of tpm.quote_min_interval. Nothing else is defined here: the test-clock binary below
 * replaces this file's object, and only these two symbols, when it links the daemon library.
 *
 * Built twice. sworn-decisiond compiles it as it is: the system clocks, nothing else, and no
 * code that reads a test clock. sworn-decisiond-testclock (decisiond/CMakeLists.txt, only with
 * SWORN_TESTS, never installed) compiles it with SWORN_TEST_CLOCK: both clocks are then ahead of
 * the system clocks by the offset in milliseconds that the file named by SWORN_TEST_CLOCK_FILE
 * holds (a decimal number, 0 to SWORN_TEST_CLOCK_MAX_MS; a missing file or anything else reads as
 * 0), read again at every call, so a test moves the daemon's time forward by writing the file
 * instead of sleeping. The offset should only grow, or the monotonic clock goes back. Why a
 * separate binary and not an environment variable of the real one: docs/decisiond.md, "The test
 * clock".
 *
 * The file may hold a second number, a signed step of the wall clock alone in milliseconds
 * ("<offset> <step>", |step| at most SWORN_TEST_CLOCK_MAX_MS): the wall clock is then system +
 * offset + step, the monotonic clock still system + offset. A test so sets the wall clock back
 * (an NTP step, a VM restored from a snapshot) while monotonic time keeps going forward, as on a
 * real system (issue 12, finding 4). A wall clock that would fall before the epoch reads as 0.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "d_clock.h"

/* Ten years: more than any test needs, and far from overflowing either clock. */
#define SWORN_TEST_CLOCK_MAX_MS (10ull * 366u * 24u * 3600u * 1000u)

#ifdef SWORN_TEST_CLOCK
/* The clock file's offset and wall step; both 0 when it is missing or malformed. */
static void read_clock(uint64_t *offset, int64_t *step)
{
    const char *path = getenv("SWORN_TEST_CLOCK_FILE");
    char text[64], *end, *end2;
    unsigned long long v;
    long long w = 0;
    ssize_t n;
    int fd;

    *offset = 0;
    *step = 0;
    if (path == NULL || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return;
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    v = strtoull(text, &end, 10);
    if (end == text || v > SWORN_TEST_CLOCK_MAX_MS)
        return;
    if (*end == ' ') {
        w = strtoll(end + 1, &end2, 10);
        if (end2 == end + 1 || w > (long long)SWORN_TEST_CLOCK_MAX_MS ||
            w < -(long long)SWORN_TEST_CLOCK_MAX_MS)
            return;
        end = end2;
    }
    if (*end != '\0' && *end != '\n')
        return;
    *offset = (uint64_t)v;
    *step = (int64_t)w;
}

static uint64_t offset_ms(void)
{
    uint64_t offset;
    int64_t step;

    read_clock(&offset, &step);
    return offset;
}

/* The wall clock's offset: the offset plus the step (so possibly negative). */
static int64_t wall_offset_ms(void)
{
    uint64_t offset;
    int64_t step;

    read_clock(&offset, &step);
    return (int64_t)offset + step;
}

/* Said once, at start, in the daemon's log (stderr): this is not the binary to deploy. */
__attribute__((constructor)) static void announce(void)
{
    fprintf(stderr, "sworn-decisiond-testclock: a test build; its clocks follow "
                    "SWORN_TEST_CLOCK_FILE. Never deploy it.\n");
}
#else
static uint64_t offset_ms(void)
{
    return 0;
}

static int64_t wall_offset_ms(void)
{
    return 0;
}
#endif

uint64_t d_now_unix_ms(void)
{
    struct timespec ts;
    uint64_t ms;
    int64_t off = wall_offset_ms();

    clock_gettime(CLOCK_REALTIME, &ts);
    ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    if (off < 0)
        return ms > (uint64_t)-off ? ms - (uint64_t)-off : 0;
    return ms + (uint64_t)off;
}

uint64_t d_now_mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u + offset_ms() * 1000u;
}
