/*
 * test_proxy_tls.c -- the proxy's TLS parts, against real clients and servers:
 *   - proxy/p_ca: `ca init` writes ca.key 0600 and ca.crt 0644 and never overwrites either (a
 *     dangling link included); the CA certificate's profile (openssl x509); load refuses a key
 *     with group/other bits, a link, a key of another uid, a key of another CA, an encrypted key,
 *     a certificate that is not a CA and a file of two certificates; minted leaves for a name, an
 *     IPv4 and an IPv6 address pass `openssl verify -purpose sslserver` with the host check and
 *     fail it for another host; their profile (SAN, EKU, CA:FALSE, AKI/SKI, validity to the
 *     second); the cache (same context within the lifetime, a new one when less than 1/4 is
 *     left, LRU eviction, no cache); real handshakes: `openssl s_client -verify_hostname` and
 *     curl --cacert against an in-test server using ctx_for, ALPN http/1.1 chosen only when
 *     offered, a handshake whose SNI names another host refused.
 *   - proxy/p_uptls: against `openssl s_server` with a certificate made by a CA made with the
 *     openssl CLI here: verified with that CA as the bundle, refused for another name, partial
 *     wildcards refused, SSL_CERT_FILE honoured by the default paths and the system store not
 *     trusting the test CA; SNI sent for names and never for addresses (s_server's trace and the
 *     captured ClientHello).
 *   - proxy/p_sni: ClientHellos captured from openssl s_client and curl; every prefix of one
 *     answers 1; crafted hostile ones and other protocols answer -1.
 */
#define _GNU_SOURCE /* asprintf, memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "err.h"
#include "p_ca.h"
#include "p_sni.h"
#include "p_uptls.h"
#include "testutil.h"

#define TEST_CN "sworn-proxy test CA"
#define TTL 3600u

/* The folder of one test (made by setup, removed by teardown). */
struct fx {
    char *dir;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    f->dir = sworn_test_tmpdir("proxy-tls");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    sworn_test_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* dir/name into a fixed buffer. */
static const char *at(char buf[512], const char *dir, const char *name)
{
    int n = snprintf(buf, 512, "%s/%s", dir, name);

    assert_true(n > 0 && n < 512);
    return buf;
}

/* A run of prog that must exit 0; what it printed on stdout is returned (free it). */
static char *must_run(const char *what, const char *prog, ...)
{
    struct sworn_test_run r;
    va_list ap;
    char *out;

    va_start(ap, prog);
    sworn_test_vrun(&r, NULL, prog, ap);
    va_end(ap);
    sworn_test_run_must(&r, what);
    out = r.out;
    r.out = NULL;
    sworn_test_run_free(&r);
    return out;
}

/* A run of prog, returning its exit status (its output is dropped). */
static int run_status(const char *prog, ...)
{
    struct sworn_test_run r;
    va_list ap;
    int status;

    va_start(ap, prog);
    sworn_test_vrun(&r, NULL, prog, ap);
    va_end(ap);
    status = r.status;
    sworn_test_run_free(&r);
    return status;
}

/* Make a CA in dir (which exists) and load it. */
static struct sworn_proxy_ca *new_ca(const char *dir, unsigned days, size_t cache_max)
{
    struct sworn_proxy_ca *ca = NULL;
    char c[512], k[512];

    if (sworn_proxy_ca_init(dir, TEST_CN, days) != 0)
        fail_msg("ca init %s: %s", dir, sworn_err_msg());
    if (sworn_proxy_ca_load(at(c, dir, "ca.crt"), at(k, dir, "ca.key"), TTL, cache_max, &ca) != 0)
        fail_msg("ca load %s: %s", dir, sworn_err_msg());
    return ca;
}

/* The leaf certificate a context presents, written as PEM to path. */
static void write_leaf(SSL_CTX *ctx, const char *path)
{
    X509 *leaf = SSL_CTX_get0_certificate(ctx);
    FILE *fp;

    assert_non_null(leaf);
    fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(PEM_write_X509(fp, leaf), 1);
    assert_int_equal(fclose(fp), 0);
}

/* A listening TCP socket on 127.0.0.1 and its port. */
static int listen_local(int *port)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

    assert_true(fd >= 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static int connect_local(int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* ------------------------------------------------------------------------------------------ */
/* An in-test TLS server: SSL_accept with one context, an HTTP answer to a request if one comes. */

#define MAX_CONNS 16

struct tls_server {
    int lfd, port;
    SSL_CTX *ctx;
    pthread_t thread;
    int conns;                 /* connections accepted */
    int handshaken[MAX_CONNS]; /* SSL_accept succeeded */
    char alpn[MAX_CONNS][16];  /* what ALPN chose ("" for none) */
    char servername[MAX_CONNS][64];
};

static void *tls_server_main(void *arg)
{
    struct tls_server *s = arg;
    static const char answer[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";

    for (;;) {
        int fd = accept(s->lfd, NULL, NULL), i = s->conns;
        char head[8192];
        size_t have = 0;
        SSL *ssl;

        if (fd < 0)
            break; /* the test shut the socket down: done */
        if (i >= MAX_CONNS) {
            close(fd);
            continue;
        }
        s->conns++;
        ssl = SSL_new(s->ctx);
        /* No TLS 1.3 tickets: a client that has verified and left would make writing them fail
         * (a broken pipe), and that is not what these tests judge. */
        if (ssl == NULL || SSL_set_num_tickets(ssl, 0) != 1 || SSL_set_fd(ssl, fd) != 1) {
            SSL_free(ssl);
            close(fd);
            continue;
        }
        if (SSL_accept(ssl) == 1) {
            const unsigned char *a = NULL;
            unsigned alen = 0;
            const char *sn = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);

            s->handshaken[i] = 1;
            SSL_get0_alpn_selected(ssl, &a, &alen);
            if (alen > 0 && alen < sizeof(s->alpn[i])) {
                memcpy(s->alpn[i], a, alen);
                s->alpn[i][alen] = '\0';
            }
            snprintf(s->servername[i], sizeof(s->servername[i]), "%s", sn ? sn : "");
            /* Read a request head if the client sends one, and answer it. */
            while (have < sizeof(head) - 1) {
                int n = SSL_read(ssl, head + have, (int)(sizeof(head) - 1 - have));

                if (n <= 0)
                    break;
                have += (size_t)n;
                head[have] = '\0';
                if (strstr(head, "\r\n\r\n") != NULL) {
                    (void)SSL_write(ssl, answer, (int)sizeof(answer) - 1);
                    break;
                }
            }
            (void)SSL_shutdown(ssl);
        }
        ERR_clear_error();
        SSL_free(ssl);
        close(fd);
    }
    return NULL;
}

static void tls_server_start(struct tls_server *s, SSL_CTX *ctx)
{
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->lfd = listen_local(&s->port);
    assert_int_equal(pthread_create(&s->thread, NULL, tls_server_main, s), 0);
}

/* Stop accepting (every client of the test has finished, so its connection was accepted). */
static void tls_server_stop(struct tls_server *s)
{
    shutdown(s->lfd, SHUT_RDWR);
    assert_int_equal(pthread_join(s->thread, NULL), 0);
    close(s->lfd);
}

/* ------------------------------------------------------------------------------------------ */
/* A capture server: accepts one connection, keeps its first bytes until they form a complete
 * ClientHello record (or 16 KiB + 5 arrived, or the peer closed), then closes it. */

struct capture {
    int lfd, port;
    pthread_t thread;
    uint8_t bytes[SWORN_SNI_PEEK_MAX + 64];
    size_t len;
};

static void *capture_main(void *arg)
{
    struct capture *c = arg;
    int fd = accept(c->lfd, NULL, NULL);

    if (fd < 0)
        return NULL;
    while (c->len < SWORN_SNI_PEEK_MAX) {
        struct sworn_sni sni;
        const char *why;
        ssize_t n = read(fd, c->bytes + c->len, SWORN_SNI_PEEK_MAX - c->len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        c->len += (size_t)n;
        if (sworn_sni_peek(c->bytes, c->len, &sni, &why) != 1)
            break;
    }
    close(fd);
    return NULL;
}

static void capture_start(struct capture *c)
{
    memset(c, 0, sizeof(*c));
    c->lfd = listen_local(&c->port);
    assert_int_equal(pthread_create(&c->thread, NULL, capture_main, c), 0);
}

static void capture_stop(struct capture *c)
{
    shutdown(c->lfd, SHUT_RDWR);
    assert_int_equal(pthread_join(c->thread, NULL), 0);
    close(c->lfd);
}

/* ------------------------------------------------------------------------------------------ */
/* ca init */

static void mode_is(const char *path, unsigned mode)
{
    struct stat st;

    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    if ((st.st_mode & 07777) != mode)
        fail_msg("%s: mode %04o, want %04o", path, (unsigned)(st.st_mode & 07777), mode);
}

static void test_ca_init_files(void **state)
{
    struct fx *f = *state;
    char k[512], c[512];
    mode_t old = umask(077); /* the modes are set exactly, whatever the umask */
    char *text, *key1, *crt1, *key2, *crt2;
    size_t n;
    int rc = sworn_proxy_ca_init(f->dir, TEST_CN, 30);

    umask(old);
    if (rc != 0)
        fail_msg("ca init: %s", sworn_err_msg());
    mode_is(at(k, f->dir, "ca.key"), 0600);
    mode_is(at(c, f->dir, "ca.crt"), 0644);
    key1 = sworn_test_read_file(k, &n);
    crt1 = sworn_test_read_file(c, &n);
    assert_non_null(strstr(key1, "-----BEGIN PRIVATE KEY-----"));
    assert_non_null(strstr(crt1, "-----BEGIN CERTIFICATE-----"));

    /* The key is EC P-256, unencrypted PKCS#8. */
    text = must_run("pkey", "openssl", "pkey", "-in", k, "-noout", "-text", NULL);
    assert_non_null(strstr(text, "NIST CURVE: P-256"));
    free(text);

    /* The certificate's profile. */
    text = must_run("x509 -text", "openssl", "x509", "-in", c, "-noout", "-text", NULL);
    assert_non_null(strstr(text, "Subject: CN = " TEST_CN));
    assert_non_null(strstr(text, "Issuer: CN = " TEST_CN));
    assert_non_null(strstr(text, "X509v3 Basic Constraints: critical\n"));
    assert_non_null(strstr(text, "CA:TRUE, pathlen:0"));
    assert_non_null(strstr(text, "X509v3 Key Usage: critical\n"));
    assert_non_null(strstr(text, "Certificate Sign, CRL Sign"));
    assert_non_null(strstr(text, "X509v3 Subject Key Identifier"));
    assert_non_null(strstr(text, "ecdsa-with-SHA256"));
    assert_non_null(strstr(text, "Version: 3"));
    free(text);
    text = must_run("x509 -serial", "openssl", "x509", "-in", c, "-noout", "-serial", NULL);
    assert_int_equal(strlen(text), strlen("serial=") + 32 + 1); /* 16 bytes, top byte not 0 */
    free(text);
    /* Self-signed and a CA: it verifies as its own trust anchor. */
    free(must_run("verify ca", "openssl", "verify", "-CAfile", c, "-x509_strict", c, NULL));

    /* Validity: from now - 1 h for 30 days. */
    {
        FILE *fp = fopen(c, "r");
        X509 *x = PEM_read_X509(fp, NULL, NULL, NULL);
        int days, secs;
        time_t now = time(NULL);
        ASN1_TIME *t = ASN1_TIME_set(NULL, now);

        fclose(fp);
        assert_non_null(x);
        assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x), t), 1);
        assert_int_equal(days, 0);
        assert_true(secs >= 3600 && secs <= 3660);
        assert_int_equal(
            ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(x), X509_get0_notAfter(x)), 1);
        assert_int_equal(days, 30);
        assert_int_equal(secs, 3600);
        ASN1_TIME_free(t);
        X509_free(x);
    }

    /* A second init refuses and changes nothing. */
    assert_int_equal(sworn_proxy_ca_init(f->dir, TEST_CN, 30), -1);
    assert_non_null(strstr(sworn_err_msg(), "already exists"));
    key2 = sworn_test_read_file(k, &n);
    crt2 = sworn_test_read_file(c, &n);
    assert_string_equal(key1, key2);
    assert_string_equal(crt1, crt2);
    mode_is(k, 0600);
    free(key1);
    free(crt1);
    free(key2);
    free(crt2);
}

static void test_ca_init_refusals(void **state)
{
    struct fx *f = *state;
    char sub[512], k[512], c[512], missing[512];

    /* Only ca.crt present: refused, no key written. */
    at(sub, f->dir, "crt-only");
    assert_int_equal(mkdir(sub, 0700), 0);
    sworn_test_write_file(at(c, sub, "ca.crt"), "x", 1, 0644);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, 30), -1);
    assert_int_equal(access(at(k, sub, "ca.key"), F_OK), -1);

    /* Only ca.key present: refused, the key untouched, no certificate written. */
    at(sub, f->dir, "key-only");
    assert_int_equal(mkdir(sub, 0700), 0);
    sworn_test_write_file(at(k, sub, "ca.key"), "old", 3, 0600);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, 30), -1);
    assert_int_equal(access(at(c, sub, "ca.crt"), F_OK), -1);
    {
        size_t n;
        char *t = sworn_test_read_file(k, &n);

        assert_string_equal(t, "old");
        free(t);
    }

    /* ca.key a dangling link: refused, and nothing is created where it points. */
    at(sub, f->dir, "link");
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink(at(missing, f->dir, "elsewhere.key"), at(k, sub, "ca.key")), 0);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, 30), -1);
    assert_int_equal(access(missing, F_OK), -1);
    assert_int_equal(access(at(c, sub, "ca.crt"), F_OK), -1);

    /* No such folder; a folder others may write; bad arguments. */
    assert_int_equal(sworn_proxy_ca_init(at(sub, f->dir, "nope"), TEST_CN, 30), -1);
    at(sub, f->dir, "open");
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chmod(sub, 0777), 0);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, 30), -1);
    assert_int_equal(access(at(k, sub, "ca.key"), F_OK), -1);
    assert_int_equal(chmod(sub, 0700), 0);
    assert_int_equal(sworn_proxy_ca_init(sub, "", 30), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    assert_int_equal(
        sworn_proxy_ca_init(
            sub, "an overly long common name, which is more than 64 bytes long (65)", 30),
        -1);
    assert_int_equal(sworn_proxy_ca_init(sub, "bad\nname", 30), -1);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, 0), -1);
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, SWORN_PROXY_CA_DAYS_MAX + 1), -1);
    assert_int_equal(access(at(k, sub, "ca.key"), F_OK), -1);
    /* And with all of that right, it works there. */
    assert_int_equal(sworn_proxy_ca_init(sub, TEST_CN, SWORN_PROXY_CA_DAYS_MAX), 0);
}

/* ------------------------------------------------------------------------------------------ */
/* ca load */

static void expect_load_fails(const char *cert, const char *key, const char *needle)
{
    struct sworn_proxy_ca *ca = (struct sworn_proxy_ca *)1;

    assert_int_equal(sworn_proxy_ca_load(cert, key, TTL, 8, &ca), -1);
    assert_null(ca);
    if (needle != NULL && strstr(sworn_err_msg(), needle) == NULL)
        fail_msg("load %s %s: message \"%s\" lacks \"%s\"", cert, key, sworn_err_msg(), needle);
}

static void test_ca_load_refusals(void **state)
{
    struct fx *f = *state;
    char a[512], b[512], k[512], c[512], kb[512], x[512], y[512];
    struct sworn_proxy_ca *ca = NULL;
    uint8_t fp[32];
    char *out, want[200];
    size_t n;

    at(a, f->dir, "a");
    at(b, f->dir, "b");
    assert_int_equal(mkdir(a, 0700), 0);
    assert_int_equal(mkdir(b, 0700), 0);
    assert_int_equal(sworn_proxy_ca_init(a, TEST_CN, 30), 0);
    assert_int_equal(sworn_proxy_ca_init(b, TEST_CN, 30), 0);
    at(c, a, "ca.crt");
    at(k, a, "ca.key");
    at(kb, b, "ca.key");

    /* It loads, and its fingerprint is the certificate's SHA-256 as openssl computes it. */
    if (sworn_proxy_ca_load(c, k, TTL, 8, &ca) != 0)
        fail_msg("load: %s", sworn_err_msg());
    sworn_proxy_ca_fingerprint(ca, fp);
    sworn_proxy_ca_free(ca);
    out = must_run("fingerprint", "openssl", "x509", "-in", c, "-noout", "-fingerprint", "-sha256",
                   NULL);
    n = 0;
    for (int i = 0; i < 32; i++)
        n += (size_t)snprintf(want + n, sizeof(want) - n, "%s%02X", i ? ":" : "", fp[i]);
    assert_non_null(strstr(out, want));
    free(out);

    /* The key of another CA. */
    expect_load_fails(c, kb, "does not belong");
    /* The key readable by group or others. */
    assert_int_equal(chmod(k, 0644), 0);
    expect_load_fails(c, k, NULL);
    assert_int_equal(chmod(k, 0640), 0);
    expect_load_fails(c, k, NULL);
    assert_int_equal(chmod(k, 0600), 0);
    /* The key through a symbolic link. */
    assert_int_equal(symlink(k, at(x, f->dir, "link.key")), 0);
    expect_load_fails(c, x, "symbolic link");
    /* The key owned by another user (we may give it away only as root). */
    if (geteuid() == 0) {
        assert_int_equal(chown(k, 65534, 65534), 0);
        expect_load_fails(c, k, NULL);
        assert_int_equal(chown(k, 0, 0), 0);
    }
    /* Missing files. */
    expect_load_fails(c, at(x, a, "none.key"), NULL);
    expect_load_fails(at(x, a, "none.crt"), k, NULL);
    /* An encrypted key (no prompt, refused). */
    free(must_run("encrypted key", "openssl", "pkey", "-in", k, "-aes256", "-passout", "pass:x",
                  "-out", at(x, f->dir, "enc.key"), NULL));
    assert_int_equal(chmod(x, 0600), 0);
    expect_load_fails(c, x, "unencrypted");
    /* A certificate that is not a CA, with its own key. */
    free(must_run("leaf", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes", "-keyout", at(x, f->dir, "leaf.key"), "-out",
                  at(y, f->dir, "leaf.crt"), "-subj", "/CN=leaf", "-days", "2", "-addext",
                  "basicConstraints=critical,CA:FALSE", NULL));
    assert_int_equal(chmod(x, 0600), 0);
    expect_load_fails(y, x, "not a CA");
    /* Two certificates in the file. */
    {
        char *one = sworn_test_read_file(c, &n), *two = NULL;

        assert_true(asprintf(&two, "%s%s", one, one) > 0);
        sworn_test_write_file(at(x, f->dir, "two.crt"), two, strlen(two), 0644);
        expect_load_fails(x, k, "more than one");
        free(one);
        free(two);
    }
    /* Bad arguments. */
    assert_int_equal(sworn_proxy_ca_load(c, k, SWORN_PROXY_LEAF_TTL_MIN - 1, 8, &ca), -1);
    assert_int_equal(sworn_proxy_ca_load(c, k, SWORN_PROXY_LEAF_TTL_MAX + 1, 8, &ca), -1);
    assert_int_equal(sworn_proxy_ca_load(c, k, TTL, SWORN_PROXY_CACHE_MAX + 1, &ca), -1);
    assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
}

/* ------------------------------------------------------------------------------------------ */
/* Leaves */

/* The leaf for host, written out and checked with openssl verify (verify_opt verify_arg). */
static void leaf_verifies(struct sworn_proxy_ca *ca, const char *dir, const char *host,
                          const char *verify_opt, const char *verify_arg, const char *wrong_arg,
                          const char *const *text_needles)
{
    char leaf[512], cacrt[512], *text;
    SSL_CTX *ctx = sworn_proxy_ca_ctx_for(ca, host, time(NULL));

    if (ctx == NULL)
        fail_msg("ctx_for %s: %s", host, sworn_err_msg());
    write_leaf(ctx, at(leaf, dir, "leaf.pem"));
    at(cacrt, dir, "ca.crt");
    text = must_run("verify leaf", "openssl", "verify", "-CAfile", cacrt, "-purpose", "sslserver",
                    "-x509_strict", verify_opt, verify_arg, leaf, NULL);
    assert_non_null(strstr(text, ": OK"));
    free(text);
    assert_int_not_equal(run_status("openssl", "verify", "-CAfile", cacrt, "-purpose", "sslserver",
                                    verify_opt, wrong_arg, leaf, NULL),
                         0);
    text = must_run("leaf text", "openssl", "x509", "-in", leaf, "-noout", "-text", NULL);
    for (const char *const *n = text_needles; *n != NULL; n++)
        if (strstr(text, *n) == NULL)
            fail_msg("leaf for %s lacks \"%s\":\n%s", host, *n, text);
    free(text);
    SSL_CTX_free(ctx);
}

static void test_leaf_profiles(void **state)
{
    struct fx *f = *state;
    struct sworn_proxy_ca *ca = new_ca(f->dir, 30, 8);
    static const char *const name_needles[] = {"Subject: CN = a.example",
                                               "Issuer: CN = " TEST_CN,
                                               "DNS:a.example",
                                               "TLS Web Server Authentication",
                                               "X509v3 Basic Constraints: critical\n",
                                               "CA:FALSE",
                                               "X509v3 Key Usage: critical\n",
                                               "Digital Signature",
                                               "X509v3 Subject Key Identifier",
                                               "X509v3 Authority Key Identifier",
                                               "NIST CURVE: P-256",
                                               NULL};
    static const char *const v4_needles[] = {"IP Address:127.0.0.1",
                                             "X509v3 Subject Alternative Name: critical\n",
                                             "TLS Web Server Authentication", "CA:FALSE", NULL};
    static const char *const v6_needles[] = {"IP Address:2001:DB8:0:0:0:0:0:1",
                                             "X509v3 Subject Alternative Name: critical\n",
                                             "TLS Web Server Authentication", "CA:FALSE", NULL};
    static const char *const long_needles[] = {"X509v3 Subject Alternative Name: critical\n",
                                               "DNS:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                               "aaaaaaaaaaaaaaaaa.example",
                                               NULL};

    leaf_verifies(ca, f->dir, "a.example", "-verify_hostname", "a.example", "b.example",
                  name_needles);
    leaf_verifies(ca, f->dir, "127.0.0.1", "-verify_ip", "127.0.0.1", "127.0.0.2", v4_needles);
    leaf_verifies(ca, f->dir, "[2001:db8::1]", "-verify_ip", "2001:db8::1", "2001:db8::2",
                  v6_needles);
    /* A name over 64 bytes: no CN (it would not fit), the SAN is critical. */
    leaf_verifies(ca, f->dir,
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example",
                  "-verify_hostname",
                  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example",
                  "a.example", long_needles);
    /* Only a subject CN with the name, or none. */
    {
        char leaf[512], *text;
        SSL_CTX *ctx = sworn_proxy_ca_ctx_for(ca, "127.0.0.1", time(NULL));

        assert_non_null(ctx);
        write_leaf(ctx, at(leaf, f->dir, "ip.pem"));
        text = must_run("subject", "openssl", "x509", "-in", leaf, "-noout", "-subject", NULL);
        assert_string_equal(text, "subject=\n");
        free(text);
        SSL_CTX_free(ctx);
    }
    sworn_proxy_ca_free(ca);
}

static void test_leaf_validity_and_hosts(void **state)
{
    struct fx *f = *state;
    struct sworn_proxy_ca *ca = new_ca(f->dir, 1, 8);
    time_t now = time(NULL);
    SSL_CTX *ctx = sworn_proxy_ca_ctx_for(ca, "a.example", now);
    X509 *leaf, *cacert = sworn_proxy_ca_cert(ca);
    ASN1_TIME *t = ASN1_TIME_set(NULL, now);
    int days, secs;

    assert_non_null(ctx);
    leaf = SSL_CTX_get0_certificate(ctx);
    assert_int_equal(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(leaf), t), 1);
    assert_int_equal(days, 0);
    assert_int_equal(secs, 300);
    assert_int_equal(ASN1_TIME_diff(&days, &secs, t, X509_get0_notAfter(leaf)), 1);
    assert_int_equal(days, 0);
    assert_int_equal(secs, (int)TTL);
    assert_int_equal(X509_check_issued(cacert, leaf), X509_V_OK);
    SSL_CTX_free(ctx);

    /* Near the CA's end the leaf ends with it; after it, nothing is minted. */
    ctx = sworn_proxy_ca_ctx_for(ca, "b.example", now + 86400 - 1000);
    assert_non_null(ctx);
    assert_int_equal(ASN1_TIME_compare(X509_get0_notAfter(SSL_CTX_get0_certificate(ctx)),
                                       X509_get0_notAfter(cacert)),
                     0);
    SSL_CTX_free(ctx);
    assert_null(sworn_proxy_ca_ctx_for(ca, "c.example", now + 86400 + 10));

    /* Only canonical hosts. */
    static const char *const bad[] = {
        "A.example",   "a.example.",       "::1", "", "a..b", "1.2.3", "0.0.0.0", "[::]",
        "a_b.example", "[::ffff:1.2.3.4]", "x/y"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ctx = sworn_proxy_ca_ctx_for(ca, bad[i], now);
        if (ctx != NULL)
            fail_msg("ctx_for accepted \"%s\"", bad[i]);
        assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
    }
    ASN1_TIME_free(t);
    sworn_proxy_ca_free(ca);
}

static void test_leaf_cache(void **state)
{
    struct fx *f = *state;
    struct sworn_proxy_ca *ca = new_ca(f->dir, 30, 2);
    time_t now = time(NULL);
    struct sworn_proxy_ca_stats st;
    SSL_CTX *a1, *a2, *a3, *a4, *b1, *b2, *c1, *a5, *a6, *early;

    a1 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
    a2 = sworn_proxy_ca_ctx_for(ca, "a.example", now + 100);
    assert_non_null(a1);
    assert_ptr_equal(a1, a2);
    /* Exactly 1/4 of the lifetime left: still the same; less: a new leaf. */
    a3 = sworn_proxy_ca_ctx_for(ca, "a.example", now + (time_t)TTL - (time_t)TTL / 4);
    assert_ptr_equal(a1, a3);
    a4 = sworn_proxy_ca_ctx_for(ca, "a.example", now + (time_t)TTL - (time_t)TTL / 4 + 1);
    assert_non_null(a4);
    assert_ptr_not_equal(a1, a4);
    assert_int_not_equal(X509_cmp(SSL_CTX_get0_certificate(a1), SSL_CTX_get0_certificate(a4)), 0);
    /* A time before the cached leaf's notBefore (the clock went back): a new leaf. */
    early = sworn_proxy_ca_ctx_for(ca, "a.example", now - 400);
    assert_non_null(early);
    assert_ptr_not_equal(early, a4);
    SSL_CTX_free(a1);
    SSL_CTX_free(a2);
    SSL_CTX_free(a3);
    SSL_CTX_free(a4);

    /* LRU with room for two: a (cached: early), b, a again (hit), c evicts b. */
    b1 = sworn_proxy_ca_ctx_for(ca, "b.example", now);
    a5 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
    assert_ptr_equal(a5, early);
    c1 = sworn_proxy_ca_ctx_for(ca, "c.example", now);
    a6 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
    assert_ptr_equal(a6, early);
    b2 = sworn_proxy_ca_ctx_for(ca, "b.example", now);
    assert_non_null(b2);
    assert_ptr_not_equal(b1, b2);
    sworn_proxy_ca_stats(ca, &st);
    assert_int_equal(st.cached, 2);
    assert_int_equal(st.hits, 4);      /* a2 a3 a5 a6 */
    assert_int_equal(st.mints, 6);     /* a1 a4 early b1 c1 b2 */
    assert_int_equal(st.renewals, 2);  /* a4 early */
    assert_int_equal(st.evictions, 2); /* b1 (for c), c1 (for b2) */
    SSL_CTX_free(b1);
    SSL_CTX_free(b2);
    SSL_CTX_free(c1);
    SSL_CTX_free(a5);
    SSL_CTX_free(a6);
    SSL_CTX_free(early);
    /* The contexts handed out outlive the CA. */
    a1 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
    sworn_proxy_ca_free(ca);
    assert_non_null(SSL_CTX_get0_certificate(a1));
    SSL_CTX_free(a1);

    /* No cache: every call mints. */
    {
        char sub[512];

        at(sub, f->dir, "nocache");
        assert_int_equal(mkdir(sub, 0700), 0);
        ca = new_ca(sub, 30, 0);
        a1 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
        a2 = sworn_proxy_ca_ctx_for(ca, "a.example", now);
        assert_non_null(a1);
        assert_non_null(a2);
        assert_ptr_not_equal(a1, a2);
        sworn_proxy_ca_stats(ca, &st);
        assert_int_equal(st.cached, 0);
        assert_int_equal(st.mints, 2);
        SSL_CTX_free(a1);
        SSL_CTX_free(a2);
        sworn_proxy_ca_free(ca);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Handshakes against a leaf */

static void test_leaf_handshakes(void **state)
{
    struct fx *f = *state;
    struct sworn_proxy_ca *ca = new_ca(f->dir, 30, 8);
    SSL_CTX *ctx = sworn_proxy_ca_ctx_for(ca, "a.example", time(NULL));
    struct tls_server s;
    char cacrt[512], addr[64], resolve[96], url[96];
    struct sworn_test_run r;

    assert_non_null(ctx);
    at(cacrt, f->dir, "ca.crt");
    tls_server_start(&s, ctx);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", s.port);

    /* 0: the right name verifies; ALPN offered h2 and http/1.1: http/1.1 is chosen. */
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-connect", addr, "-servername", "a.example",
                    "-CAfile", cacrt, "-verify_return_error", "-verify_hostname", "a.example",
                    "-alpn", "h2,http/1.1", NULL);
    sworn_test_run_must(&r, "s_client a.example");
    assert_non_null(strstr(r.out, "Verify return code: 0 (ok)"));
    assert_non_null(strstr(r.out, "ALPN protocol: http/1.1"));
    sworn_test_run_free(&r);
    /* 1: another name fails verification (the client aborts the handshake). */
    assert_int_not_equal(run_status("openssl", "s_client", "-connect", addr, "-servername",
                                    "a.example", "-CAfile", cacrt, "-verify_return_error",
                                    "-verify_hostname", "b.example", NULL),
                         0);
    /* 2: only h2 offered: no ALPN selected, the handshake goes on. */
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-connect", addr, "-servername", "a.example",
                    "-CAfile", cacrt, "-verify_return_error", "-verify_hostname", "a.example",
                    "-alpn", "h2", NULL);
    sworn_test_run_must(&r, "s_client alpn h2");
    assert_non_null(strstr(r.out, "No ALPN negotiated"));
    sworn_test_run_free(&r);
    /* 3: an SNI naming another host than the leaf's: the server refuses the handshake. */
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-connect", addr, "-servername", "b.example",
                    "-CAfile", cacrt, NULL);
    assert_int_not_equal(r.status, 0);
    assert_non_null(strstr(r.err, "unrecognized name"));
    sworn_test_run_free(&r);
    /* 4: curl, as a sandboxed agent would be: HTTP/1.1 over the leaf. */
    snprintf(resolve, sizeof(resolve), "a.example:%d:127.0.0.1", s.port);
    snprintf(url, sizeof(url), "https://a.example:%d/", s.port);
    sworn_test_runv(&r, NULL, "curl", "-sS", "--cacert", cacrt, "--resolve", resolve, "-w",
                    " %{http_version}", url, NULL);
    sworn_test_run_must(&r, "curl");
    assert_string_equal(r.out, "ok\n 1.1");
    sworn_test_run_free(&r);
    /* 5: curl without the CA: refused. */
    assert_int_equal(run_status("curl", "-sS", "--resolve", resolve, url, NULL), 60);
    /* 6: an upper-case SNI with a trailing dot is the same host. */
    sworn_test_runv(&r, NULL, "openssl", "s_client", "-connect", addr, "-servername", "A.Example.",
                    "-CAfile", cacrt, "-verify_return_error", "-verify_hostname", "a.example",
                    NULL);
    sworn_test_run_must(&r, "s_client A.Example.");
    sworn_test_run_free(&r);
    tls_server_stop(&s);

    assert_int_equal(s.conns, 7);
    assert_true(s.handshaken[0]);
    assert_string_equal(s.alpn[0], "http/1.1");
    assert_string_equal(s.servername[0], "a.example");
    assert_false(s.handshaken[1]);
    assert_true(s.handshaken[2]);
    assert_string_equal(s.alpn[2], "");
    assert_false(s.handshaken[3]);
    assert_true(s.handshaken[4]);
    assert_string_equal(s.alpn[4], "http/1.1");
    assert_false(s.handshaken[5]);
    assert_true(s.handshaken[6]);
    SSL_CTX_free(ctx);
    sworn_proxy_ca_free(ca);
}

/* ------------------------------------------------------------------------------------------ */
/* Upstream TLS against openssl s_server */

/* A running openssl s_server and what it printed. */
struct s_server {
    pid_t pid;
    int fd, port;
    pthread_t drain;
    char out[262144];
    size_t len;
};

static void *drain_main(void *arg)
{
    struct s_server *s = arg;

    for (;;) {
        ssize_t n = read(s->fd, s->out + s->len, sizeof(s->out) - 1 - s->len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        s->len += (size_t)n;
        s->out[s->len] = '\0';
        if (s->len == sizeof(s->out) - 1)
            s->len = 0; /* only the end matters; never block the server */
    }
    return NULL;
}

/* Start `openssl s_server -www -trace -accept 0 -naccept n -cert cert -key key` and wait for
 * its ACCEPT line, which names the port. */
static void s_server_start(struct s_server *s, const char *cert, const char *key, int n)
{
    int p[2];
    char naccept[16];

    memset(s, 0, sizeof(*s));
    snprintf(naccept, sizeof(naccept), "%d", n);
    assert_int_equal(pipe(p), 0);
    fflush(stdout);
    fflush(stderr);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        int in = open("/dev/null", O_RDONLY);

        dup2(in, 0);
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        execlp("openssl", "openssl", "s_server", "-www", "-trace", "-accept", "0", "-naccept",
               naccept, "-cert", cert, "-key", key, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    s->fd = p[0];
    /* Read until the ACCEPT line has come. */
    while (strstr(s->out, "ACCEPT") == NULL || strchr(strstr(s->out, "ACCEPT"), '\n') == NULL) {
        ssize_t got = read(s->fd, s->out + s->len, sizeof(s->out) - 1 - s->len);

        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            fail_msg("s_server ended before listening: %s", s->out);
        s->len += (size_t)got;
        s->out[s->len] = '\0';
    }
    {
        const char *line = strstr(s->out, "ACCEPT"), *colon = strchr(line, '\n');

        while (colon > line && *colon != ':')
            colon--;
        s->port = atoi(colon + 1);
        assert_true(s->port > 0);
    }
    assert_int_equal(pthread_create(&s->drain, NULL, drain_main, s), 0);
}

/* Wait for s_server to end (after its n connections). */
static void s_server_wait(struct s_server *s)
{
    int status;

    assert_int_equal(waitpid(s->pid, &status, 0), s->pid);
    assert_int_equal(pthread_join(s->drain, NULL), 0);
    close(s->fd);
}

/* One upstream connection: prepare host, handshake, check. Returns the check's result (or -1
 * when the handshake failed, with why saying so). */
static int up_connect(SSL_CTX *ctx, int port, const char *host, const char **why)
{
    int fd = connect_local(port), rc;
    SSL *ssl = SSL_new(ctx);

    assert_non_null(ssl);
    if (sworn_uptls_prepare(ssl, host) != 0)
        fail_msg("prepare %s: %s", host, sworn_err_msg());
    assert_int_equal(SSL_set_fd(ssl, fd), 1);
    if (SSL_connect(ssl) == 1) {
        rc = sworn_uptls_check(ssl, why);
        (void)SSL_shutdown(ssl);
    } else {
        *why = "handshake failed";
        rc = -1;
        /* A failed handshake still passes nothing: the check says so as well. */
        assert_int_equal(sworn_uptls_check(ssl, why), -1);
    }
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    return rc;
}

/* The upstream's CA and certificate, made with the openssl CLI in dir. */
static void make_upstream_pki(const char *dir, char cacrt[512], char crt[512], char key[512])
{
    char cakey[512], csr[512], ext[512];
    static const char ext_text[] =
        "subjectAltName=DNS:up.example,IP:127.0.0.1,DNS:*.wild.example,DNS:f*.part.example\n"
        "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n";

    at(cacrt, dir, "upca.crt");
    at(cakey, dir, "upca.key");
    at(crt, dir, "up.crt");
    at(key, dir, "up.key");
    at(csr, dir, "up.csr");
    at(ext, dir, "up.ext");
    free(must_run("upstream CA", "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes", "-keyout", cakey, "-out", cacrt, "-subj",
                  "/CN=sworn test upstream CA", "-days", "2", "-addext",
                  "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign,cRLSign", NULL));
    free(must_run("upstream key", "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr, "-subj",
                  "/CN=up.example", NULL));
    sworn_test_write_file(ext, ext_text, strlen(ext_text), 0644);
    free(must_run("upstream cert", "openssl", "x509", "-req", "-in", csr, "-CA", cacrt, "-CAkey",
                  cakey, "-CAcreateserial", "-out", crt, "-days", "1", "-extfile", ext, NULL));
}

static void test_upstream_verify(void **state)
{
    struct fx *f = *state;
    char cacrt[512], crt[512], key[512];
    struct s_server s;
    const char *why = NULL;
    SSL_CTX *ctx;

    make_upstream_pki(f->dir, cacrt, crt, key);
    ctx = sworn_uptls_ctx(cacrt);
    if (ctx == NULL)
        fail_msg("uptls ctx: %s", sworn_err_msg());
    s_server_start(&s, crt, key, 7);
    assert_int_equal(up_connect(ctx, s.port, "up.example", &why), 0);
    assert_int_equal(up_connect(ctx, s.port, "other.example", &why), -1);
    assert_int_equal(up_connect(ctx, s.port, "127.0.0.1", &why), 0);
    assert_int_equal(up_connect(ctx, s.port, "127.0.0.2", &why), -1);
    /* A whole-label wildcard matches one label; a partial one never. */
    assert_int_equal(up_connect(ctx, s.port, "a.wild.example", &why), 0);
    assert_int_equal(up_connect(ctx, s.port, "a.b.wild.example", &why), -1);
    assert_int_equal(up_connect(ctx, s.port, "foo.part.example", &why), -1);
    s_server_wait(&s);
    SSL_CTX_free(ctx);

    /* Names are checked against the certificate; addresses too, but they send no SNI: the
     * trace of a server that saw only "127.0.0.1" holds no server_name extension. */
    ctx = sworn_uptls_ctx(cacrt);
    assert_non_null(ctx);
    s_server_start(&s, crt, key, 1);
    assert_int_equal(up_connect(ctx, s.port, "127.0.0.1", &why), 0);
    s_server_wait(&s);
    assert_non_null(strstr(s.out, "ClientHello"));
    assert_null(strstr(s.out, "extension_type=server_name"));
    assert_non_null(strstr(s.out, "extension_type=application_layer_protocol_negotiation"));
    s_server_start(&s, crt, key, 1);
    assert_int_equal(up_connect(ctx, s.port, "up.example", &why), 0);
    s_server_wait(&s);
    assert_non_null(strstr(s.out, "extension_type=server_name"));
    SSL_CTX_free(ctx);

    /* Hosts that are not canonical are refused before any byte is sent. */
    ctx = sworn_uptls_ctx(cacrt);
    {
        SSL *ssl = SSL_new(ctx);
        static const char *const bad[] = {"UP.example", "up.example.",        "::1", "",
                                          "1.2.3",      "[::ffff:127.0.0.1]", "a b"};

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            assert_int_equal(sworn_uptls_prepare(ssl, bad[i]), -1);
            assert_int_equal(sworn_err_code(), SWORN_ERR_ARG);
        }
        assert_int_equal(sworn_uptls_check(ssl, &why), -1); /* no handshake: no certificate */
        SSL_free(ssl);
    }
    SSL_CTX_free(ctx);
    /* A CA file that is not one. */
    assert_null(sworn_uptls_ctx(key));
    assert_null(sworn_uptls_ctx("/nonexistent/ca.pem"));
}

static void test_upstream_default_paths(void **state)
{
    struct fx *f = *state;
    char cacrt[512], crt[512], key[512];
    char *saved_file = getenv("SSL_CERT_FILE"), *saved_dir = getenv("SSL_CERT_DIR");
    struct s_server s;
    const char *why = NULL;
    SSL_CTX *with, *without, *empty;

    saved_file = saved_file ? strdup(saved_file) : NULL;
    saved_dir = saved_dir ? strdup(saved_dir) : NULL;
    make_upstream_pki(f->dir, cacrt, crt, key);
    unsetenv("SSL_CERT_DIR");
    assert_int_equal(setenv("SSL_CERT_FILE", cacrt, 1), 0);
    with = sworn_uptls_ctx(NULL);
    empty = sworn_uptls_ctx(""); /* "" is the same as NULL */
    unsetenv("SSL_CERT_FILE");
    without = sworn_uptls_ctx(NULL);
    assert_non_null(with);
    assert_non_null(empty);
    assert_non_null(without);
    s_server_start(&s, crt, key, 3);
    assert_int_equal(up_connect(with, s.port, "up.example", &why), 0);
    assert_int_equal(up_connect(empty, s.port, "up.example", &why), 0);
    /* The system store does not know the test CA. */
    assert_int_equal(up_connect(without, s.port, "up.example", &why), -1);
    s_server_wait(&s);
    SSL_CTX_free(with);
    SSL_CTX_free(empty);
    SSL_CTX_free(without);
    if (saved_file != NULL)
        setenv("SSL_CERT_FILE", saved_file, 1);
    if (saved_dir != NULL)
        setenv("SSL_CERT_DIR", saved_dir, 1);
    free(saved_file);
    free(saved_dir);
}

/* The ClientHello the upstream context sends, captured and read back with sworn_sni_peek. */
static void capture_upstream_hello(SSL_CTX *ctx, const char *host, struct sworn_sni *sni)
{
    struct capture c;
    const char *why = NULL;
    int fd;
    SSL *ssl;

    capture_start(&c);
    fd = connect_local(c.port);
    ssl = SSL_new(ctx);
    assert_non_null(ssl);
    assert_int_equal(sworn_uptls_prepare(ssl, host), 0);
    assert_int_equal(SSL_set_fd(ssl, fd), 1);
    assert_int_not_equal(SSL_connect(ssl), 1); /* the capture closes after the ClientHello */
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    capture_stop(&c);
    if (sworn_sni_peek(c.bytes, c.len, sni, &why) != 0)
        fail_msg("upstream ClientHello for %s (%zu bytes): %s", host, c.len, why);
}

static void test_upstream_client_hello(void **state)
{
    SSL_CTX *ctx = sworn_uptls_ctx(NULL);
    struct sworn_sni sni;

    (void)state;
    assert_non_null(ctx);
    capture_upstream_hello(ctx, "up.example", &sni);
    assert_true(sni.has_sni);
    assert_string_equal(sni.name, "up.example");
    assert_true(sni.offers_http11);
    assert_false(sni.offers_h2);
    capture_upstream_hello(ctx, "127.0.0.1", &sni);
    assert_false(sni.has_sni);
    assert_string_equal(sni.name, "");
    assert_true(sni.offers_http11);
    capture_upstream_hello(ctx, "[::1]", &sni);
    assert_false(sni.has_sni);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------------------------------ */
/* SNI reader: real ClientHellos */

/* Every proper prefix of p answers 1, the whole 0, with the same result as one call. */
static void prefixes_need_more(const uint8_t *p, size_t len, const struct sworn_sni *whole)
{
    struct sworn_sni sni;
    const char *why = NULL;

    for (size_t k = 0; k < len; k++) {
        int rc = sworn_sni_peek(p, k, &sni, &why);

        if (rc != 1)
            fail_msg("prefix of %zu of %zu bytes: %d (%s)", k, len, rc, rc < 0 ? why : "");
        assert_false(sni.has_sni);
    }
    assert_int_equal(sworn_sni_peek(p, len, &sni, &why), 0);
    assert_memory_equal(&sni, whole, sizeof(sni));
}

/* Capture the ClientHello of a client run as argv (with "%d" in one argument for the port). */
static void capture_client(const char *const *argv_fmt, struct capture *c)
{
    const char *argv[32];
    char bufs[32][128];
    struct sworn_test_run r;
    size_t i;

    capture_start(c);
    for (i = 0; argv_fmt[i] != NULL; i++) {
        const char *hole = strstr(argv_fmt[i], "%d");

        if (hole == NULL)
            snprintf(bufs[i], sizeof(bufs[i]), "%s", argv_fmt[i]);
        else
            snprintf(bufs[i], sizeof(bufs[i]), "%.*s%d%s", (int)(hole - argv_fmt[i]), argv_fmt[i],
                     c->port, hole + 2);
        argv[i] = bufs[i];
    }
    argv[i] = NULL;
    sworn_test_run(argv, NULL, &r);
    assert_int_not_equal(r.status, 0); /* the capture hung up on it */
    sworn_test_run_free(&r);
    capture_stop(c);
}

static void test_sni_real_clients(void **state)
{
    static const char *const s_client[] = {"openssl",      "s_client",    "-connect",
                                           "127.0.0.1:%d", "-servername", "x.example",
                                           "-alpn",        "http/1.1,h2", NULL};
    static const char *const s_client_upper[] = {
        "openssl", "s_client", "-connect", "127.0.0.1:%d", "-servername", "X.Example", NULL};
    static const char *const s_client_ip[] = {"openssl",      "s_client",      "-connect",
                                              "127.0.0.1:%d", "-noservername", NULL};
    static const char *const s_client_tls12[] = {"openssl",      "s_client",    "-connect",
                                                 "127.0.0.1:%d", "-servername", "old.example",
                                                 "-tls1_2",      NULL};
    static const char *const curl[] = {
        "curl", "-sk", "--resolve", "x.example:%d:127.0.0.1", "https://x.example:%d/", NULL};
    struct capture *c = malloc(sizeof(*c));
    struct sworn_sni sni;
    const char *why = NULL;

    (void)state;
    assert_non_null(c);
    capture_client(s_client, c);
    if (sworn_sni_peek(c->bytes, c->len, &sni, &why) != 0)
        fail_msg("s_client: %s", why);
    assert_true(sni.has_sni);
    assert_string_equal(sni.name, "x.example");
    assert_true(sni.offers_http11);
    assert_true(sni.offers_h2);
    assert_true(sworn_sni_looks_tls(c->bytes, c->len));
    prefixes_need_more(c->bytes, c->len, &sni);
    /* Bytes after the record (what a client sends next) do not change the answer. */
    {
        static uint8_t more[SWORN_SNI_PEEK_MAX + 64];
        struct sworn_sni again;

        memcpy(more, c->bytes, c->len);
        memcpy(more + c->len, "\x14\x03\x03\x00\x01\x01", 6);
        assert_int_equal(sworn_sni_peek(more, c->len + 6, &again, &why), 0);
        assert_memory_equal(&sni, &again, sizeof(sni));
    }
    /* One byte of the captured name changed to '/' or NUL: refused. */
    {
        static uint8_t bad[SWORN_SNI_PEEK_MAX + 64];
        uint8_t *name;

        memcpy(bad, c->bytes, c->len);
        name = memmem(bad, c->len, "x.example", 9);
        assert_non_null(name);
        name[1] = '/';
        assert_int_equal(sworn_sni_peek(bad, c->len, &sni, &why), -1);
        name[1] = '\0';
        assert_int_equal(sworn_sni_peek(bad, c->len, &sni, &why), -1);
        name[1] = '_';
        assert_int_equal(sworn_sni_peek(bad, c->len, &sni, &why), -1);
        /* The record one byte shorter than the ClientHello says: fragmented, refused. */
        memcpy(bad, c->bytes, c->len);
        bad[4]--;
        assert_int_equal(sworn_sni_peek(bad, c->len, &sni, &why), -1);
    }

    capture_client(s_client_upper, c);
    assert_int_equal(sworn_sni_peek(c->bytes, c->len, &sni, &why), 0);
    assert_string_equal(sni.name, "x.example");
    assert_false(sni.offers_http11);

    capture_client(s_client_ip, c);
    assert_int_equal(sworn_sni_peek(c->bytes, c->len, &sni, &why), 0);
    assert_false(sni.has_sni);
    assert_string_equal(sni.name, "");

    capture_client(s_client_tls12, c);
    assert_int_equal(sworn_sni_peek(c->bytes, c->len, &sni, &why), 0);
    assert_string_equal(sni.name, "old.example");

    capture_client(curl, c);
    if (sworn_sni_peek(c->bytes, c->len, &sni, &why) != 0)
        fail_msg("curl: %s", why);
    assert_true(sni.has_sni);
    assert_string_equal(sni.name, "x.example");
    assert_true(sni.offers_http11);
    assert_true(sni.offers_h2);
    prefixes_need_more(c->bytes, c->len, &sni);
    free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* SNI reader: crafted ClientHellos */

struct ext {
    uint16_t type;
    const uint8_t *data;
    size_t len;
};

/* A ClientHello record around exts (legacy 0x0303, session id 0, one suite, null compression).
 * Returns its length. */
static size_t build_hello(uint8_t *out, size_t cap, const struct ext *exts, size_t n)
{
    uint8_t body[SWORN_SNI_PEEK_MAX];
    size_t b = 0, e = 0, hs;

    body[b++] = 3;
    body[b++] = 3;
    memset(body + b, 0xab, 32);
    b += 32;
    body[b++] = 0;                                                    /* session id */
    body[b++] = 0, body[b++] = 2, body[b++] = 0x13, body[b++] = 0x01; /* suites */
    body[b++] = 1, body[b++] = 0;                                     /* compression */
    if (n > 0) {
        size_t at_len = b;

        b += 2;
        for (size_t i = 0; i < n; i++) {
            assert_true(b + 4 + exts[i].len < sizeof(body));
            body[b++] = (uint8_t)(exts[i].type >> 8);
            body[b++] = (uint8_t)exts[i].type;
            body[b++] = (uint8_t)(exts[i].len >> 8);
            body[b++] = (uint8_t)exts[i].len;
            memcpy(body + b, exts[i].data, exts[i].len);
            b += exts[i].len;
        }
        e = b - at_len - 2;
        body[at_len] = (uint8_t)(e >> 8);
        body[at_len + 1] = (uint8_t)e;
    }
    hs = b;
    assert_true(9 + hs <= cap);
    out[0] = 22, out[1] = 3, out[2] = 1;
    out[3] = (uint8_t)((hs + 4) >> 8), out[4] = (uint8_t)(hs + 4);
    out[5] = 1, out[6] = (uint8_t)(hs >> 16), out[7] = (uint8_t)(hs >> 8), out[8] = (uint8_t)hs;
    memcpy(out + 9, body, hs);
    return 9 + hs;
}

/* A server_name extension body: one entry of type `type` holding name[0..n). */
static size_t sni_body(uint8_t *out, uint8_t type, const char *name, size_t n)
{
    out[0] = (uint8_t)((n + 3) >> 8), out[1] = (uint8_t)(n + 3);
    out[2] = type;
    out[3] = (uint8_t)(n >> 8), out[4] = (uint8_t)n;
    memcpy(out + 5, name, n);
    return 5 + n;
}

static int peek_exts(const struct ext *exts, size_t n, struct sworn_sni *sni, const char **why)
{
    static uint8_t rec[SWORN_SNI_PEEK_MAX + 16];
    size_t len = build_hello(rec, sizeof(rec), exts, n);

    return sworn_sni_peek(rec, len, sni, why);
}

static int peek_name(uint8_t type, const char *name, size_t n, struct sworn_sni *sni)
{
    uint8_t body[600];
    struct ext e = {0, body, 0};
    const char *why = NULL;
    int rc;

    e.len = sni_body(body, type, name, n);
    rc = peek_exts(&e, 1, sni, &why);
    assert_true(rc == 0 || (rc == -1 && why != NULL));
    return rc;
}

static void test_sni_crafted_names(void **state)
{
    struct sworn_sni sni;
    char name[300];

    (void)state;
    assert_int_equal(peek_name(0, "a.example", 9, &sni), 0);
    assert_string_equal(sni.name, "a.example");
    assert_int_equal(peek_name(0, "A-1.EXAMPLE", 11, &sni), 0);
    assert_string_equal(sni.name, "a-1.example");
    assert_int_equal(peek_name(0, "a.example.", 10, &sni), 0); /* one trailing dot tolerated */
    assert_string_equal(sni.name, "a.example.");
    assert_int_equal(peek_name(0, "localhost", 9, &sni), 0);
    /* 255 bytes of four labels of 63: the longest name. */
    memset(name, 'a', 255);
    name[63] = name[127] = name[191] = '.';
    assert_int_equal(peek_name(0, name, 255, &sni), 0);
    assert_int_equal(strlen(sni.name), 255);
    /* Refused. */
    assert_int_equal(peek_name(0, "", 0, &sni), -1);
    assert_false(sni.has_sni);
    assert_int_equal(peek_name(0, "a\0b.example", 11, &sni), -1);
    assert_int_equal(peek_name(0, "a/b.example", 11, &sni), -1);
    assert_int_equal(peek_name(0, "a b.example", 11, &sni), -1);
    assert_int_equal(peek_name(0, "a_b.example", 11, &sni), -1);
    assert_int_equal(peek_name(0, "a:443", 5, &sni), -1);
    assert_int_equal(peek_name(0, "[::1]", 5, &sni), -1);
    assert_int_equal(peek_name(0, "a\xc3\xa9.example", 11, &sni), -1);
    assert_int_equal(peek_name(0, "a..example", 10, &sni), -1);
    assert_int_equal(peek_name(0, ".a.example", 10, &sni), -1);
    assert_int_equal(peek_name(0, "a.example..", 11, &sni), -1);
    assert_int_equal(peek_name(0, ".", 1, &sni), -1);
    assert_int_equal(peek_name(1, "a.example", 9, &sni), -1); /* name type other than host */
    memset(name, 'a', 256);
    name[63] = name[127] = name[191] = '.';
    assert_int_equal(peek_name(0, name, 256, &sni), -1); /* 256 bytes */
    memset(name, 'a', 64);
    memcpy(name + 64, ".example", 8);
    assert_int_equal(peek_name(0, name, 72, &sni), -1); /* a label of 64 */
    assert_false(sni.has_sni);
    assert_string_equal(sni.name, "");
}

static void test_sni_crafted_structure(void **state)
{
    static uint8_t rec[SWORN_SNI_PEEK_MAX + 16];
    uint8_t a[64], b[64], alpn[64], list2[64];
    struct ext e[4];
    struct sworn_sni sni;
    const char *why = NULL;
    size_t an = sni_body(a, 0, "a.example", 9), bn = sni_body(b, 0, "b.example", 9), len;

    (void)state;
    /* No extensions at all: fine, no SNI. */
    len = build_hello(rec, sizeof(rec), NULL, 0);
    assert_int_equal(sworn_sni_peek(rec, len, &sni, &why), 0);
    assert_false(sni.has_sni);
    prefixes_need_more(rec, len, &sni);

    /* Two server_name extensions. */
    e[0] = (struct ext){0, a, an};
    e[1] = (struct ext){0, b, bn};
    assert_int_equal(peek_exts(e, 2, &sni, &why), -1);
    assert_non_null(strstr(why, "twice"));
    /* Two names in one list. */
    memcpy(list2, a, an);
    memcpy(list2 + an, b + 2, bn - 2);
    list2[0] = 0, list2[1] = (uint8_t)(an - 2 + bn - 2);
    e[0] = (struct ext){0, list2, an + bn - 2};
    assert_int_equal(peek_exts(e, 1, &sni, &why), -1);
    assert_non_null(strstr(why, "more than one"));
    /* List length past the extension, and short of it. */
    memcpy(list2, a, an);
    list2[1]++;
    e[0] = (struct ext){0, list2, an};
    assert_int_equal(peek_exts(e, 1, &sni, &why), -1);
    list2[1] -= 2;
    assert_int_equal(peek_exts(e, 1, &sni, &why), -1);
    /* A name length past its list. */
    memcpy(list2, a, an);
    list2[4]++;
    assert_int_equal(peek_exts(e, 1, &sni, &why), -1);
    /* An empty server_name extension (the server's echo form is not a client's). */
    e[0] = (struct ext){0, a, 0};
    assert_int_equal(peek_exts(e, 1, &sni, &why), -1);

    /* ALPN: fine, duplicate, empty name, empty list, length past. */
    memcpy(alpn, "\x00\x0c\x02h2\x08http/1.1", 14);
    e[0] = (struct ext){0, a, an};
    e[1] = (struct ext){16, alpn, 14};
    assert_int_equal(peek_exts(e, 2, &sni, &why), 0);
    assert_true(sni.has_sni && sni.offers_h2 && sni.offers_http11);
    e[2] = (struct ext){16, alpn, 14};
    assert_int_equal(peek_exts(e, 3, &sni, &why), -1);
    memcpy(alpn, "\x00\x0b\x00\x08http/1.1\x00", 13);
    e[1] = (struct ext){16, alpn, 13};
    assert_int_equal(peek_exts(e, 2, &sni, &why), -1);
    e[1] = (struct ext){16, (const uint8_t *)"\x00\x00", 2};
    assert_int_equal(peek_exts(e, 2, &sni, &why), -1);
    e[1] = (struct ext){16, (const uint8_t *)"\x00\x04\x08http", 7};
    assert_int_equal(peek_exts(e, 2, &sni, &why), -1);
    e[1] = (struct ext){16, (const uint8_t *)"\x00\x09\x09http/1.1", 11};
    assert_int_equal(peek_exts(e, 2, &sni, &why), -1);
    /* "http/1.1" as a prefix of a longer name is not http/1.1. */
    e[1] = (struct ext){16, (const uint8_t *)"\x00\x0a\x09http/1.10", 12};
    assert_int_equal(peek_exts(e, 2, &sni, &why), 0);
    assert_false(sni.offers_http11);
    /* Any other extension twice; unknown ones once are fine. */
    e[1] = (struct ext){0x1234, (const uint8_t *)"xy", 2};
    e[2] = (struct ext){0x1234, (const uint8_t *)"", 0};
    assert_int_equal(peek_exts(e, 2, &sni, &why), 0);
    assert_int_equal(peek_exts(e, 3, &sni, &why), -1);

    /* Framing. Start from a good hello with SNI and edit its bytes. */
    e[0] = (struct ext){0, a, an};
    len = build_hello(rec, sizeof(rec), e, 1);
    assert_int_equal(sworn_sni_peek(rec, len, &sni, &why), 0);
    prefixes_need_more(rec, len, &sni);
    {
        static uint8_t m[SWORN_SNI_PEEK_MAX + 16];
        struct edit {
            size_t off;
            uint8_t v;
            const char *what;
        } edits[] = {
            {0, 23, "application data record"},
            {0, 21, "alert record"},
            {1, 2, "record version 2.x"},
            {2, 0, "record version SSL 3.0"},
            {2, 4, "record version 0x0304"},
            {5, 2, "a ServerHello"},
            {6, 1, "handshake length over the record"},
            {9, 2, "body version 2.x"},
            {10, 0, "body version SSL 3.0"},
            {43, 33, "session id of 33"},
            {45, 3, "odd cipher suite length"},
            {45, 200, "cipher suites past the body"},
            {48, 0, "no compression method"},
            {50, 0xff, "extensions block past the body"},
        };

        for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
            memcpy(m, rec, len);
            m[edits[i].off] = edits[i].v;
            if (sworn_sni_peek(m, len, &sni, &why) != -1)
                fail_msg("%s: not refused", edits[i].what);
            assert_non_null(why);
            assert_false(sni.has_sni);
        }
        /* Extensions block shorter than the rest of the body (trailing bytes). */
        memcpy(m, rec, len);
        m[51]--;
        assert_int_equal(sworn_sni_peek(m, len, &sni, &why), -1);
        /* The record's length over 16384 or zero, and a handshake shorter than the record. */
        memcpy(m, rec, len);
        m[3] = 0x40, m[4] = 0x01;
        assert_int_equal(sworn_sni_peek(m, 5, &sni, &why), -1);
        m[3] = 0, m[4] = 0;
        assert_int_equal(sworn_sni_peek(m, 5, &sni, &why), -1);
        m[3] = 0, m[4] = 3;
        assert_int_equal(sworn_sni_peek(m, 5, &sni, &why), -1);
        memcpy(m, rec, len);
        m[8]--; /* the ClientHello one byte shorter than its record */
        assert_int_equal(sworn_sni_peek(m, len, &sni, &why), -1);
        assert_non_null(strstr(why, "more than"));
        /* A ClientHello longer than its record: fragmented over records, refused as soon as the
         * handshake header has arrived. */
        memcpy(m, rec, len);
        m[8]++;
        assert_int_equal(sworn_sni_peek(m, 9, &sni, &why), -1);
        assert_non_null(strstr(why, "fragmented"));
        /* A record of exactly 16384 bytes is accepted (an extension pads it). */
        {
            static uint8_t pad[16384];
            size_t plen;

            e[1] = (struct ext){21, pad, 0};
            plen = build_hello(m, sizeof(m), e, 2);
            e[1].len = 16384 - (plen - 5);
            plen = build_hello(m, sizeof(m), e, 2);
            assert_int_equal(plen, 5 + 16384);
            assert_int_equal(sworn_sni_peek(m, plen, &sni, &why), 0);
            assert_string_equal(sni.name, "a.example");
            assert_int_equal(sworn_sni_peek(m, plen - 1, &sni, &why), 1);
        }
    }
}

static void test_sni_not_tls(void **state)
{
#define BYTES(lit)                                                                                 \
    {                                                                                              \
        (const uint8_t *)(lit), sizeof(lit) - 1                                                    \
    }
    static const struct {
        const uint8_t *p;
        size_t n;
    } others[] = {
        BYTES("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"),
        BYTES("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"),
        BYTES("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
        BYTES("\x80\x2e\x01\x03\x01\x00\x15"), /* an SSLv2-compatible hello */
        BYTES("\x17\x03\x03\x00\x10"),         /* application data */
        BYTES("\x16\x02"),                     /* record version 2.x */
        BYTES("\x16\x03\x00"),                 /* record version SSL 3.0 */
        BYTES("\x16\x03\x04"),                 /* record version 0x0304 */
    };
#undef BYTES
    struct sworn_sni sni;
    const char *why = NULL;

    (void)state;
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        why = NULL;
        if (sworn_sni_peek(others[i].p, others[i].n, &sni, &why) != -1)
            fail_msg("case %zu not refused", i);
        assert_non_null(why);
        assert_false(sworn_sni_looks_tls(others[i].p, others[i].n));
        /* Refused from the first byte that shows it: the first, or the last of these. */
        assert_int_equal(sworn_sni_peek(others[i].p, i < 5 ? 1 : others[i].n, &sni, &why), -1);
    }
    /* A start of a handshake record needs more. */
    assert_int_equal(sworn_sni_peek(NULL, 0, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16", 1, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16\x03", 2, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16\x03\x01", 3, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16\x03\x03\x02", 4, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16\x03\x03\x02\x00", 5, &sni, &why), 1);
    assert_int_equal(sworn_sni_peek((const uint8_t *)"\x16\x03\x03\x02\x00\x01", 6, &sni, &why), 1);
    assert_true(sworn_sni_looks_tls((const uint8_t *)"\x16\x03\x01\x02\x00", 5));
    assert_true(sworn_sni_looks_tls(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ca_init_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_init_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_load_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leaf_profiles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leaf_validity_and_hosts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leaf_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leaf_handshakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upstream_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upstream_default_paths, setup, teardown),
        cmocka_unit_test(test_upstream_client_hello),
        cmocka_unit_test(test_sni_real_clients),
        cmocka_unit_test(test_sni_crafted_names),
        cmocka_unit_test(test_sni_crafted_structure),
        cmocka_unit_test(test_sni_not_tls),
    };

    signal(SIGPIPE, SIG_IGN); /* a peer that hung up is a test result, not a death */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
