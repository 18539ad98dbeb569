/*
 * testutil.c -- see testutil.h.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/sha.h>

#include "encoding.h"
#include "err.h"
#include "resource.h"
#include "sig_base.h"
#include "sigscheme.h"
#include "sworn.pb-c.h"
#include "logstore.h"
#include "merkle.h"
#include "sv_merkle.h"

static void die(const char *what, const char *path)
{
    fprintf(stderr, "test setup failed: %s %s: %s\n", what, path ? path : "", strerror(errno));
    abort();
}

const char *sworn_test_vectors(void)
{
    static char resolved[4096];
    struct stat st;
    const char *ci = getenv("CI");

    if (realpath(SWORN_VECTORS_DIR, resolved) != NULL && stat(resolved, &st) == 0 &&
        S_ISDIR(st.st_mode))
        return resolved;
    if (ci != NULL && strcmp(ci, "true") == 0) {
        fprintf(stderr,
                "FAILED: the external vectors folder %s is missing, and CI=true requires it\n",
                SWORN_VECTORS_DIR);
        exit(1);
    }
    printf("SKIPPED: the external vectors folder %s is absent (it lives beside the project as "
           "../shared/vectors and is never copied into it)\n",
           SWORN_VECTORS_DIR);
    exit(77);
}

/* Not there: skipped outside CI, a failure under CI=true (as sworn_test_vectors). */
static _Noreturn void missing_prerequisite(const char *what)
{
    const char *ci = getenv("CI");

    if (ci != NULL && strcmp(ci, "true") == 0) {
        fprintf(stderr, "FAILED: %s, and CI=true requires it\n", what);
        exit(1);
    }
    printf("SKIPPED: %s (scripts/npm-deps BUILD installs it; every make build target runs it)\n",
           what);
    exit(77);
}

const char *sworn_test_node_modules(void)
{
    static char resolved[4096];
    const char *dir = getenv("SWORN_NODE_MODULES");
    struct stat st;

    if (system("command -v node >/dev/null 2>&1") != 0)
        missing_prerequisite("node is not on the PATH");
    if (dir == NULL || realpath(dir, resolved) == NULL || stat(resolved, &st) != 0 ||
        !S_ISDIR(st.st_mode))
        missing_prerequisite("the npm test clients' node_modules folder is missing");
    return resolved;
}

char *sworn_test_read_file_opt(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long size = 0;

    if (f == NULL) {
        if (errno == ENOENT)
            return NULL;
        die("open", path);
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
        die("seek", path);
    data = malloc((size_t)size + 1);
    if (data == NULL)
        die("malloc for", path);
    if (fread(data, 1, (size_t)size, f) != (size_t)size)
        die("read", path);
    fclose(f);
    data[size] = '\0';
    if (len != NULL)
        *len = (size_t)size;
    return data;
}

char *sworn_test_read_file(const char *path, size_t *len)
{
    char *data = sworn_test_read_file_opt(path, len);

    if (data == NULL)
        die("missing file", path);
    return data;
}

void sworn_test_write_file(const char *path, const void *data, size_t len, unsigned mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, (mode_t)mode);

    if (fd < 0)
        die("create", path);
    if (fchmod(fd, (mode_t)mode) != 0)
        die("chmod", path);
    if (len > 0 && write(fd, data, len) != (ssize_t)len)
        die("write", path);
    close(fd);
}

char *sworn_test_tmpdir(const char *tag)
{
    const char *base = getenv("TMPDIR");
    char *dir;

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if (asprintf(&dir, "%s/sworn-%s-XXXXXX", base, tag) < 0)
        die("asprintf", tag);
    if (mkdtemp(dir) == NULL)
        die("mkdtemp", dir);
    return dir;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void sworn_test_rmtree(const char *path)
{
    (void)nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

void sworn_test_tmpdir_drop(char **dir)
{
    if (*dir == NULL)
        return;
    sworn_test_rmtree(*dir);
    free(*dir);
    *dir = NULL;
}

char *sworn_test_path(const char *dir, const char *name)
{
    char *p;

    if (asprintf(&p, "%s/%s", dir, name) < 0)
        die("asprintf", name);
    return p;
}

void sworn_test_b64_hash(const char *b64, uint8_t out[32])
{
    size_t n = 0;

    if (sworn_base64_decode(b64, strlen(b64), out, 32, &n) != 0 || n != 32) {
        fprintf(stderr, "test setup failed: bad base64 hash %s\n", b64);
        abort();
    }
}

void sworn_test_append(struct sworn_log *log, const void *data, size_t len, uint64_t want_index)
{
    const uint8_t *p = data;
    uint64_t index = UINT64_MAX;

    if (sworn_log_append(log, &p, &len, 1, &index) != 0) {
        fprintf(stderr, "append failed: %s\n", sworn_err_msg());
        abort();
    }
    if (index != want_index) {
        fprintf(stderr, "append: got index %llu, expected %llu\n", (unsigned long long)index,
                (unsigned long long)want_index);
        abort();
    }
}

int sworn_test_log_setup_empty(void **state)
{
    struct sworn_test_log *f = calloc(1, sizeof(*f));

    if (f == NULL)
        return -1;
    f->dir = sworn_test_tmpdir("log");
    f->db = sworn_test_path(f->dir, "log.db");
    *state = f;
    return 0;
}

int sworn_test_log_setup(void **state)
{
    struct sworn_test_log *f;

    if (sworn_test_log_setup_empty(state) != 0)
        return -1;
    f = *state;
    if (sworn_log_create(f->db, "test.sworn.example/log", &f->log) != 0) {
        fprintf(stderr, "create %s: %s\n", f->db, sworn_err_msg());
        return -1;
    }
    return 0;
}

int sworn_test_log_teardown(void **state)
{
    struct sworn_test_log *f = *state;

    sworn_log_close(f->log);
    sworn_test_rmtree(f->dir);
    free(f->db);
    free(f->dir);
    free(f);
    return 0;
}

const char *sworn_test_bin(const char *env)
{
    const char *bin = getenv(env);

    if (bin == NULL) {
        fprintf(stderr, "%s is not set (run the test through ctest)\n", env);
        abort();
    }
    return bin;
}

void sworn_test_hex(const uint8_t *b, size_t n, char *out)
{
    if (sworn_hex_encode(b, n, out, 2 * n + 1) != 0)
        abort();
}

/* A new empty file under $TMPDIR (or /tmp) for one captured stream; returns its fd, *path set. */
static int capture_file(const char *tag, char **path)
{
    const char *base = getenv("TMPDIR");
    int fd;

    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if (asprintf(path, "%s/sworn-run-%s-XXXXXX", base, tag) < 0)
        die("asprintf", tag);
    fd = mkstemp(*path);
    if (fd < 0)
        die("mkstemp", *path);
    return fd;
}

void sworn_test_run(const char *const *argv, const char *in_path, struct sworn_test_run *r)
{
    char *out_path = NULL, *err_path = NULL;
    int out_fd = capture_file("out", &out_path), err_fd = capture_file("err", &err_path);
    int status = 0;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    snprintf(r->cmd, sizeof(r->cmd), "%s%s%s", argv[0], argv[1] ? " " : "", argv[1] ? argv[1] : "");
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in = open(in_path ? in_path : "/dev/null", O_RDONLY);

        if (in < 0 || dup2(in, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
            _exit(126);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(out_fd);
    close(err_fd);
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->out = sworn_test_read_file(out_path, &r->out_len);
    r->err = sworn_test_read_file(err_path, &r->err_len);
    unlink(out_path);
    unlink(err_path);
    free(out_path);
    free(err_path);
    if (r->status == 126 || r->status == 127)
        fail_msg("cannot run %s (status %d): %s", argv[0], r->status, r->err);
    if (strstr(r->err, "Sanitizer") != NULL || strstr(r->err, "runtime error:") != NULL)
        fail_msg("%s: a sanitizer report:\n%s", r->cmd, r->err);
}

void sworn_test_vrun(struct sworn_test_run *r, const char *in_path, const char *prog, va_list ap)
{
    const char *argv[64];
    size_t n = 0;

    argv[n++] = prog;
    while ((argv[n] = va_arg(ap, const char *)) != NULL) {
        n++;
        assert_true(n < sizeof(argv) / sizeof(argv[0]));
    }
    sworn_test_run(argv, in_path, r);
}

void sworn_test_runv(struct sworn_test_run *r, const char *in_path, const char *prog, ...)
{
    va_list ap;

    va_start(ap, prog);
    sworn_test_vrun(r, in_path, prog, ap);
    va_end(ap);
}

void sworn_test_run_must(const struct sworn_test_run *r, const char *what)
{
    if (r->status != 0)
        fail_msg("%s: status %d\n%s%s", what, r->status, r->out, r->err);
}

void sworn_test_run_ok(const char *what, const char *in_path, const char *prog, ...)
{
    struct sworn_test_run r;
    va_list ap;

    va_start(ap, prog);
    sworn_test_vrun(&r, in_path, prog, ap);
    va_end(ap);
    sworn_test_run_must(&r, what);
    sworn_test_run_free(&r);
}

void sworn_test_run_free(struct sworn_test_run *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

void sworn_test_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int64_t wait_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sworn_test_wait_dir(const char *dir, int (*done)(void *arg), void *arg, int timeout_ms)
{
    int64_t deadline = wait_now_ms() + timeout_ms;
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), rc = -1;

    if (fd < 0 || inotify_add_watch(fd, dir,
                                    IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO |
                                        IN_DELETE | IN_ATTRIB) < 0) {
        fprintf(stderr, "cannot watch %s: %s\n", dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int64_t left;
        char events[4096];

        if (done(arg)) {
            rc = 0;
            break;
        }
        left = deadline - wait_now_ms();
        if (left <= 0)
            break;
        if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
            break;
        while (read(fd, events, sizeof(events)) > 0)
            ; /* which change does not matter: done() looks again */
    }
    close(fd);
    return rc;
}

struct file_has_arg {
    const char *path, *needle;
};

int sworn_test_file_has_line(const char *path, const char *needle)
{
    char *text = sworn_test_read_file_opt(path, NULL);
    const char *line = text;
    int found = 0;

    while (!found && line != NULL && *line != '\0') {
        char *end = strchr(line, '\n');

        if (end == NULL)
            break;
        *end = '\0';
        found = strstr(line, needle) != NULL;
        line = end + 1;
    }
    free(text);
    return found;
}

static int file_has_line(void *arg)
{
    const struct file_has_arg *a = arg;

    return sworn_test_file_has_line(a->path, a->needle);
}

int sworn_test_wait_file_has(const char *path, const char *needle, int timeout_ms)
{
    struct file_has_arg a = {path, needle};
    char dir[4096];
    const char *slash = strrchr(path, '/');

    if (slash == NULL || (size_t)(slash - path) >= sizeof(dir))
        snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        snprintf(dir, sizeof(dir), "/");
    else
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    return sworn_test_wait_dir(dir, file_has_line, &a, timeout_ms);
}

int sworn_test_read_proc(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    ssize_t n;

    if (fd < 0)
        return -1;
    while (got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(fd);
    return 0;
}

const char *sworn_test_source_dir(void)
{
    return SWORN_SOURCE_DIR;
}

const char *sworn_test_binary_dir(void)
{
    return SWORN_BINARY_DIR;
}

char *sworn_test_install_root(const char *tag)
{
    char *root = sworn_test_tmpdir(tag);
    struct sworn_test_run r = {0};

    setenv("DESTDIR", root, 1);
    sworn_test_runv(&r, NULL, sworn_test_bin("SWORN_CMAKE"), "--install", SWORN_BINARY_DIR,
                    "--prefix", "/usr", NULL);
    unsetenv("DESTDIR");
    sworn_test_run_must(&r, "cmake --install of this build into a throwaway root");
    sworn_test_run_free(&r);
    return root;
}

size_t sworn_test_httpsig_base(const uint8_t *spki, size_t spki_len, uint8_t *out)
{
    uint8_t id[32], leaf[32], body[32];
    char hex[65], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t len = 0, plen = 0;
    const char *why = NULL;
    struct sworn_httpsig_request r = {"POST", "https", "api.example", 443, "/v1/x?a=b", body, leaf};

    SHA256(spki, spki_len, id);
    for (int i = 0; i < 32; i++) {
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
        leaf[i] = (uint8_t)(0x80 + i);
        body[i] = (uint8_t)i;
    }
    if (sworn_httpsig_base(&r, 1764633600, hex, out, SWORN_SIGBASE_MAX, &len, params,
                           sizeof(params), &plen, &why) != 0)
        fail_msg("sworn_httpsig_base: %s", why);
    return len;
}

void sworn_test_canon(const char *scheme, const char *host, uint32_t port, const char *path,
                      struct sworn_resource *out)
{
    Sworn__V1__Resource r = SWORN__V1__RESOURCE__INIT;
    const char *why = NULL;

    r.scheme = (char *)scheme;
    r.host = (char *)host;
    r.port = port;
    r.path = (char *)path;
    if (sworn_resource_canon(&r, out, &why) != 0)
        fail_msg("%s://%s:%u%s refused: %s", scheme, host, (unsigned)port, path,
                 why != NULL ? why : "?");
}

/*
 * For an http-message receipt r (form 1 or 3) of the key id, of the entry with leaf hash leaf
 * decided at time_ms: sworn's RFC 9421 base of request q (canonicalised as decisiond does) into
 * base (cap bytes, *base_len), with r's created (the entry's time in seconds) and r's params
 * text; and r's r||s signature as DER into der (*der_len). 0, or -1 when anything differs.
 */
static int http_receipt_base(const Sworn__V1__Receipt *r, const Sworn__V1__AuthorizationRequest *q,
                             const uint8_t id[32], const uint8_t leaf[32], uint64_t time_ms,
                             uint8_t *base, size_t cap, size_t *base_len, uint8_t der[80],
                             size_t *der_len)
{
    static struct sworn_resource canon;
    char keyid[65], params[SWORN_SIGBASE_PARAMS_TEXT_MAX + 1];
    size_t plen = 0;
    const char *why = NULL;
    struct sworn_httpsig_request h;

    if (r->signature.len != 64 || r->created != time_ms / 1000 || q == NULL || q->context == NULL ||
        sworn_resource_canon(q->resource, &canon, &why) != 0)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(keyid + 2 * i, 3, "%02x", id[i]);
    h = (struct sworn_httpsig_request){
        q->context->method,
        canon.scheme,
        canon.host,
        canon.port,
        canon.path,
        q->context->body_sha256.len == 32 ? q->context->body_sha256.data : NULL,
        leaf};
    if (sworn_httpsig_base(&h, (int64_t)r->created, keyid, base, cap, base_len, params,
                           sizeof(params), &plen, &why) != 0 ||
        strcmp(params, r->signature_params) != 0)
        return -1;
    return sworn_ecdsa_rs_to_der(r->signature.data, 32, r->signature.data + 32, 32, der, 80,
                                 der_len) == 0
               ? 0
               : -1;
}

int sworn_test_receipt_verify(const uint8_t *spki, size_t spki_len, const void *receipt,
                              const uint8_t leaf[32], const void *request, uint64_t time_ms)
{
    const Sworn__V1__Receipt *r = receipt;
    const Sworn__V1__AuthorizationRequest *q = request;
    static uint8_t base[SWORN_SIGBASE_MAX];
    uint8_t der[80], id[32];
    size_t base_len = 0, der_len = 0;

    if (r->form == 0)
        return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_RECEIPT, leaf, 32,
                                      r->signature.data, r->signature.len);
    SHA256(spki, spki_len, id);
    if (r->key_id.len != 32 || memcmp(r->key_id.data, id, 32) != 0)
        return -1;
    if (r->form == 2 || r->form == 3) {
        /* A batch receipt: the item (the leaf hash, or for form 3 SHA-256 of sworn's RFC 9421
         * base of the request) -> the group's tree -> root -> one signature over u32 size ||
         * root (docs/formats.md section 14). */
        uint8_t item[32], item_leaf[32], msg[36];
        const uint8_t *sig = r->signature.data;
        size_t sig_len = r->signature.len;
        char w[256];

        if (r->batch_size < 1 || r->batch_size > 256 || r->batch_path.len % 32 != 0)
            return -1;
        memcpy(item, leaf, 32);
        if (r->form == 3) {
            if (http_receipt_base(r, q, id, leaf, time_ms, base, sizeof(base), &base_len, der,
                                  &der_len) != 0)
                return -1;
            SHA256(base, base_len, item);
            sig = der;
            sig_len = der_len;
        }
        sworn_merkle_leaf_hash(item, 32, item_leaf);
        if (sv_inclusion_root(r->batch_index, r->batch_size, item_leaf,
                              (const uint8_t(*)[32])r->batch_path.data, r->batch_path.len / 32,
                              msg + 4, w) < 0)
            return -1;
        msg[0] = (uint8_t)(r->batch_size >> 24);
        msg[1] = (uint8_t)(r->batch_size >> 16);
        msg[2] = (uint8_t)(r->batch_size >> 8);
        msg[3] = (uint8_t)r->batch_size;
        return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_BATCH, msg, sizeof(msg), sig,
                                      sig_len);
    }
    if (r->form != 1 || http_receipt_base(r, q, id, leaf, time_ms, base, sizeof(base), &base_len,
                                          der, &der_len) != 0)
        return -1;
    return sworn_signature_verify(spki, spki_len, SWORN_PURPOSE_HTTP_MESSAGE, base, base_len, der,
                                  der_len);
}
