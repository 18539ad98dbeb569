/*
 * testutil.h -- helpers shared by the unit tests: where the external vectors are, reading and
 * writing files, and temporary folders. Test code only: failures abort the test with a message.
 */
#ifndef SWORN_TESTUTIL_H
#define SWORN_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

struct sworn_log;

/*
 * The folder of the external vectors (../shared/vectors beside the project). When it is absent
 * the test cannot run: outside CI this prints why and exits 77, which ctest reports as skipped;
 * under CI=true it prints why and exits 1, since CI must always run them.
 */
const char *sworn_test_vectors(void);

/* Read a whole file into a fresh NUL-terminated allocation (free it). Aborts on failure. */
char *sworn_test_read_file(const char *path, size_t *len);

/* Like sworn_test_read_file, but returns NULL when the file does not exist. */
char *sworn_test_read_file_opt(const char *path, size_t *len);

/* Write len bytes to path with the given mode (creating or truncating it). Aborts on failure. */
void sworn_test_write_file(const char *path, const void *data, size_t len, unsigned mode);

/* Make a fresh folder under $TMPDIR (or /tmp); returns a static path copy to free. */
char *sworn_test_tmpdir(const char *tag);

/* Remove a folder and everything under it. */
void sworn_test_rmtree(const char *path);

/* Join a folder and a name into a fresh string (free it). */
char *sworn_test_path(const char *dir, const char *name);

/* Decode one base64 hash (44 characters) into out; aborts on bad input. */
void sworn_test_b64_hash(const char *b64, uint8_t out[32]);

/* A temporary folder with a log database path in it, for cmocka setup and teardown. */
struct sworn_test_log {
    char *dir;             /* the folder, removed by the teardown */
    char *db;              /* <dir>/log.db */
    struct sworn_log *log; /* closed by the teardown when not NULL */
};

/* cmocka setup: a new folder, and a new log at db with origin test.sworn.example/log. */
int sworn_test_log_setup(void **state);
/* cmocka setup: a new folder and the db path, but no log (the test creates or imports one). */
int sworn_test_log_setup_empty(void **state);
/* cmocka teardown for both setups. */
int sworn_test_log_teardown(void **state);

/* The path of a program under test, from the environment variable ctest sets; aborts if unset. */
const char *sworn_test_bin(const char *env);

/* Lower-case hex of n bytes into out (2n + 1 bytes), NUL-terminated. */
void sworn_test_hex(const uint8_t *b, size_t n, char *out);

/* Append one entry to log and check that it got index want_index; fails the test otherwise. */
void sworn_test_append(struct sworn_log *log, const void *data, size_t len, uint64_t want_index);

#endif
