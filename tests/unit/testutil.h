/*
 * testutil.h -- helpers shared by the unit tests: where the external vectors are, reading and
 * writing files, temporary folders, and running a real program with its output captured. Test
 * code only: failures abort the test (or, in the helpers that run programs, fail the running
 * cmocka test) with a message.
 */
#ifndef SWORN_TESTUTIL_H
#define SWORN_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* The AddressSanitizer build (-DSWORN_SANITIZE=ON): some checks differ there (the seccomp
 * allowances of the sanitizer runtime; the monitor and the engine stay dumpable). */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_SANITIZER 1
#endif
#endif

struct sworn_log;

/*
 * On a fixture call that can fail: the compiler (with -Werror) rejects a call whose result is
 * dropped, so a failure the fixture reports (a sanitizer report in a daemon's log, a stack that
 * did not start) cannot be lost. GCC ignores a (void) cast here on purpose: check the result.
 */
#define SWORN_TEST_MUST_CHECK __attribute__((warn_unused_result))

/*
 * The folder of the external vectors (../shared/vectors beside the project). When it is absent
 * the test cannot run: outside CI this prints why and exits 77, which ctest reports as skipped;
 * under CI=true it prints why and exits 1, since CI must always run them.
 */
const char *sworn_test_vectors(void);

/*
 * The node_modules folder of the npm clients (tests/npm/README.md; SWORN_NODE_MODULES, which
 * CMake sets, filled by scripts/npm-deps), with `node` on the PATH. When either is missing the
 * test cannot run: outside CI this prints why and exits 77 (skipped); under CI=true it prints why
 * and exits 1, since every make build target installs them.
 */
const char *sworn_test_node_modules(void);

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

/* A teardown's end of a sworn_test_tmpdir folder: remove *dir and everything under it, free it
 * and set *dir to NULL. Nothing when *dir is NULL (a setup that failed before making it). */
void sworn_test_tmpdir_drop(char **dir);

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

/* The project's source folder (the repository root), as the build configured it. */
const char *sworn_test_source_dir(void);

/* The build folder these tests belong to (CMAKE_BINARY_DIR). */
const char *sworn_test_binary_dir(void);

/*
 * Install this build (`cmake --install`, cmake from $SWORN_CMAKE) into a new temporary folder,
 * with prefix /usr and that folder as DESTDIR: the root of a throwaway system. Fails the test
 * when the install fails. Returns the folder (sworn_test_tmpdir_drop it).
 */
char *sworn_test_install_root(const char *tag);

/* Lower-case hex of n bytes into out (2n + 1 bytes), NUL-terminated. */
void sworn_test_hex(const uint8_t *b, size_t n, char *out);

/*
 * What one run of a program printed, and how it ended. out and err are NUL-terminated (the lengths
 * exclude the NUL) and owned by the caller: sworn_test_run_free frees them.
 */
struct sworn_test_run {
    int status; /* the exit status, or 128 + the signal that ended it */
    char *out, *err;
    size_t out_len, err_len;
    char cmd[256]; /* "argv[0] argv[1]" (cut to fit), for messages */
};

/*
 * Run argv (NULL-terminated; argv[0] found on PATH unless it has a '/') with stdin from in_path
 * (NULL: /dev/null), stdout and stderr captured through temporary files under $TMPDIR (or /tmp),
 * removed afterwards. Fails the test when the program cannot be started (status 126 or 127) or
 * when its stderr holds a sanitizer report: in the sanitizer build the programs under test are
 * instrumented too. Any other exit status is the caller's to judge.
 */
void sworn_test_run(const char *const *argv, const char *in_path, struct sworn_test_run *r);

/* sworn_test_run with the arguments listed after prog (NULL-terminated; at most 63). */
void sworn_test_runv(struct sworn_test_run *r, const char *in_path, const char *prog, ...);

/* sworn_test_runv with the arguments after prog in ap (for a test's own variadic wrapper). */
void sworn_test_vrun(struct sworn_test_run *r, const char *in_path, const char *prog, va_list ap);

/* Fail the test, with what, the status and both outputs, unless the run exited with status 0. */
void sworn_test_run_must(const struct sworn_test_run *r, const char *what);

/*
 * sworn_test_runv (stdin from in_path) expecting exit status 0: otherwise the test fails with
 * what, the status and both outputs. What it printed is dropped.
 */
void sworn_test_run_ok(const char *what, const char *in_path, const char *prog, ...);

/* Free what a run captured and clear it (a cleared or freed run may be freed again). */
void sworn_test_run_free(struct sworn_test_run *r);

/* Sleep ms milliseconds (the whole time, across signals). */
void sworn_test_sleep_ms(long ms);

/*
 * Wait for an event that shows as a change in folder dir (a file created, written, renamed into
 * place or removed: a port file, a log line, a database write): done(arg) is asked at once and
 * again after each change inotify reports there, until it returns nonzero or timeout_ms pass.
 * The watch is set before the first question, so no change between the two is missed. Returns
 * 0 when done, -1 after the deadline (or when the folder cannot be watched: then the failure is
 * printed).
 */
SWORN_TEST_MUST_CHECK
int sworn_test_wait_dir(const char *dir, int (*done)(void *arg), void *arg, int timeout_ms);

/* Whether a whole line of path (one ending in '\n': never one still being written) contains
 * needle; 0 when the file is absent. */
int sworn_test_file_has_line(const char *path, const char *needle);

/* sworn_test_wait_dir until sworn_test_file_has_line(path, needle) (path's folder watched). */
SWORN_TEST_MUST_CHECK
int sworn_test_wait_file_has(const char *path, const char *needle, int timeout_ms);

/*
 * Read a /proc file (whose size stat does not tell) into buf (cap bytes, NUL-terminated, cut to
 * fit). Returns 0, or -1 when it cannot be opened (the process or file is gone).
 */
SWORN_TEST_MUST_CHECK
int sworn_test_read_proc(const char *path, char *buf, size_t cap);

/* Append one entry to log and check that it got index want_index; fails the test otherwise. */
void sworn_test_append(struct sworn_log *log, const void *data, size_t len, uint64_t want_index);

/*
 * A signature base of sworn's profile (httpsig/sig_base.h; docs/formats.md section 13) for the
 * key of the DER SPKI spki (its key id in the parameters): POST https://api.example/v1/x?a=b with
 * a body, as the signer accepts for purpose 4, into out (at least 16384 bytes). Returns its
 * length; fails the test when it cannot be built.
 */
size_t sworn_test_httpsig_base(const uint8_t *spki, size_t spki_len, uint8_t *out);

struct sworn_resource;

/* The canonical form of the resource scheme://host:port path (path with its query), as decisiond
 * and the proxy make it (resource.h); fails the test when it is refused. */
void sworn_test_canon(const char *scheme, const char *host, uint32_t port, const char *path,
                      struct sworn_resource *out);

/*
 * Verify receipt r (a Sworn__V1__Receipt) of an allow of req (a Sworn__V1__AuthorizationRequest)
 * recorded at time_ms with leaf hash leaf, with the key of the DER SPKI spki: a digest receipt
 * (form 0) over the leaf, or an http-message receipt (form 1) over sworn's RFC 9421 base rebuilt
 * here from req (canonicalised as decisiond does), the leaf, created (which must be time_ms /
 * 1000) and the key id (docs/formats.md sections 10 and 13); a batch receipt by walking its path
 * from its item (form 2: the leaf; form 3: SHA-256 of that base) to the root its signature covers
 * (section 14). Returns 0 when it verifies.
 */
int sworn_test_receipt_verify(const uint8_t *spki, size_t spki_len, const void *r,
                              const uint8_t leaf[32], const void *req, uint64_t time_ms);

#endif
